// runtime/arch/sys_linux_arm.S: raw Linux system calls for 32-bit ARM, EABI
// hard-float (Debian armhf; the role of Go's sys_linux_arm.s). Same contract
// as sys_linux_amd64.S; see arch.h. Needs ARMv7-A (Debian armhf's baseline):
// written in Thumb-2, which is also what Debian's armhf compiler emits; calls
// from ARM-state code interwork through bl/blx and the bx/pop {pc} returns.
//
// C ABI (AAPCS): arguments in r0-r3, the fifth and sixth at [sp] and [sp, #4]
// on entry; result in r0; r4-r11 belong to the caller; sp stays 8-byte
// aligned at public interfaces, so every frame below is a multiple of 8.
// Kernel ABI (EABI, svc #0): number in r7, arguments in r0-r5, result (or
// -errno) in r0; the other registers survive the call.
//
// time_t: glibc's armhf time_t is 32 bits unless the build defines
// _TIME_BITS=64 (then <features.h> defines __USE_TIME_BITS64), in which case
// the C side's struct timespec is 64-bit and gort_futex must use futex_time64;
// gort_usleep follows the same choice (clock_nanosleep_time64) so that it
// also works on kernels without the 32-bit time calls. The definitions that
// select _TIME_BITS must reach this file too (add_compile_definitions or
// target_compile_definitions, not CMAKE_CXX_FLAGS).
//
// Unwinding: each function carries ARM EHABI directives (.fnstart/.save/.pad)
// so that the unwinder and debuggers can step through it.
#include <features.h>
#include <asm/unistd.h>

#if __ARM_ARCH < 7
#error "sys_linux_arm.S needs ARMv7 (movw/movt, mls, Thumb-2, yield)"
#endif

// System call numbers of the EABI table (__NR_SYSCALL_BASE is 0), spelled out
// and checked against the target's kernel headers.
#define SYS_nanosleep			162
#define SYS_sched_yield			158
#define SYS_futex			240
#define SYS_clock_nanosleep_time64	407
#define SYS_futex_time64		422
#if __NR_nanosleep != SYS_nanosleep || __NR_sched_yield != SYS_sched_yield || \
    __NR_futex != SYS_futex || \
    __NR_clock_nanosleep_time64 != SYS_clock_nanosleep_time64 || \
    __NR_futex_time64 != SYS_futex_time64
#error "sys_linux_arm.S: system call numbers disagree with <asm/unistd.h>"
#endif
#ifdef __USE_TIME_BITS64
#define SYS_futex_gort	SYS_futex_time64
#else
#define SYS_futex_gort	SYS_futex
#endif
#define CLOCK_MONOTONIC	1

	.syntax unified
	.thumb
	.text

// usec / 1000000 without a divide instruction (ARMv7-A has none in its
// baseline): q = hi32(usec * 0x431BDE83) >> 18, exact for every 32-bit usec
// because 0x431BDE83 * 1000000 - 2^50 = 157376 <= 2^18. Leaves the seconds in
// \sec and the nanoseconds in \nsec; clobbers \tmp.
.macro SPLIT_USEC usec, sec, nsec, tmp
	movw	\tmp, #0xDE83
	movt	\tmp, #0x431B
	umull	\nsec, \sec, \usec, \tmp	// sec = hi32(usec * m)
	lsrs	\sec, \sec, #18		// sec = usec / 1000000
	movw	\tmp, #0x4240
	movt	\tmp, #0x000F		// 1000000
	mls	\nsec, \sec, \tmp, \usec	// microseconds left
	movw	\tmp, #1000
	mul	\nsec, \nsec, \tmp	// < 1e9: fits
.endm

// void gort_usleep(uint32_t usec)
	.globl	gort_usleep
	.type	gort_usleep, %function
	.p2align 2
	.thumb_func
gort_usleep:
	.fnstart
#ifndef __USE_TIME_BITS64
// nanosleep(&ts, NULL), ts a 32-bit struct timespec on the stack:
//   [sp] tv_sec   [sp, #4] tv_nsec   [sp, #8] saved r7   [sp, #12] saved lr
	push	{r7, lr}
	.save	{r7, lr}
	sub	sp, sp, #8
	.pad	#8
	SPLIT_USEC r0, r2, r3, r1
	strd	r2, r3, [sp]
	mov	r0, sp			// req = &ts
	movs	r1, #0			// rem = NULL
	movs	r7, #SYS_nanosleep
	svc	#0
	add	sp, sp, #8
	pop	{r7, pc}
#else
// clock_nanosleep_time64(CLOCK_MONOTONIC, 0, &ts, NULL), ts the kernel's
// struct __kernel_timespec {int64 tv_sec; int64 tv_nsec} (little-endian):
//   [sp] tv_sec lo  [sp, #4] tv_sec hi  [sp, #8] tv_nsec lo
//   [sp, #12] tv_nsec hi   [sp, #16] saved r7   [sp, #20] saved lr
	push	{r7, lr}
	.save	{r7, lr}
	sub	sp, sp, #16
	.pad	#16
	SPLIT_USEC r0, r2, r3, r1
	movs	r1, #0
	strd	r2, r1, [sp]		// tv_sec, zero-extended
	strd	r3, r1, [sp, #8]	// tv_nsec, zero-extended
	movs	r0, #CLOCK_MONOTONIC	// clockid
					// r1 = 0: flags (relative)
	mov	r2, sp			// req = &ts
	movs	r3, #0			// rem = NULL
	movw	r7, #SYS_clock_nanosleep_time64
	svc	#0
	add	sp, sp, #16
	pop	{r7, pc}
#endif
	.fnend
	.size	gort_usleep, .-gort_usleep

// intptr_t gort_futex(addr, op, val, timeout, addr2, val3)
// r0-r3 are already where the kernel wants them; addr2 and val3 come from
// the caller's frame into r4 and r5. Stack after the push:
//   [sp] r4  [sp, #4] r5  [sp, #8] r7  [sp, #12] lr
//   [sp, #16] addr2  [sp, #20] val3
	.globl	gort_futex
	.type	gort_futex, %function
	.p2align 2
	.thumb_func
gort_futex:
	.fnstart
	push	{r4, r5, r7, lr}
	.save	{r4, r5, r7, lr}
	ldrd	r4, r5, [sp, #16]	// uaddr2, val3
	movw	r7, #SYS_futex_gort
	svc	#0			// r0 = result or -errno
	pop	{r4, r5, r7, pc}
	.fnend
	.size	gort_futex, .-gort_futex

// void gort_osyield(void)
	.globl	gort_osyield
	.type	gort_osyield, %function
	.p2align 2
	.thumb_func
gort_osyield:
	.fnstart
	push	{r7, lr}
	.save	{r7, lr}
	movs	r7, #SYS_sched_yield
	svc	#0
	pop	{r7, pc}
	.fnend
	.size	gort_osyield, .-gort_osyield

// void gort_procyield(uint32_t cycles): `cycles` yield hints (ARMv7's
// spin-wait hint, a nop on cores that do not implement it).
	.globl	gort_procyield
	.type	gort_procyield, %function
	.p2align 2
	.thumb_func
gort_procyield:
	.fnstart
	cbz	r0, 2f
1:	yield
	subs	r0, r0, #1
	bne	1b
2:	bx	lr
	.fnend
	.size	gort_procyield, .-gort_procyield

	.section .note.GNU-stack,"",%progbits
