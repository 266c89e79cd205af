// runtime/arch/sys_linux_arm64.S: raw Linux system calls for arm64 (the role
// of Go's sys_linux_arm64.s). Same contract as sys_linux_amd64.S; see arch.h.
//
// C ABI (AAPCS64): arguments in x0-x7, result in x0; x19-x28, x29 (frame
// pointer) and x30 (link register) belong to the caller; sp is always 16-byte
// aligned. None of these functions calls another, so x30 stays live in its
// register and only gort_usleep needs a frame (for its timespec).
// Kernel ABI (svc #0): number in x8, arguments in x0-x5, result (or -errno)
// in x0; every other register survives the call.
//
// time_t is 64 bits on arm64 for every build, so the plain nanosleep and futex
// calls already take 64-bit timespecs (there are no *_time64 variants here).
#include <asm/unistd.h>

// System call numbers of the generic table, spelled out and checked against
// the target's kernel headers.
#define SYS_futex	98
#define SYS_nanosleep	101
#define SYS_sched_yield	124
#if __NR_futex != SYS_futex || __NR_nanosleep != SYS_nanosleep || \
    __NR_sched_yield != SYS_sched_yield
#error "sys_linux_arm64.S: system call numbers disagree with <asm/unistd.h>"
#endif

	.text

// void gort_usleep(uint32_t usec)
// nanosleep(&ts, NULL) with struct timespec {int64 tv_sec; int64 tv_nsec}
// in a 16-byte frame:   [sp] tv_sec   [sp, #8] tv_nsec
	.globl	gort_usleep
	.type	gort_usleep, %function
	.p2align 2
gort_usleep:
	.cfi_startproc
	sub	sp, sp, #16
	.cfi_def_cfa_offset 16
	movz	w9, #0x4240
	movk	w9, #0x000F, lsl #16	// 1000000
	udiv	w10, w0, w9		// whole seconds
	msub	w11, w10, w9, w0	// microseconds left
	mov	w12, #1000
	mul	w11, w11, w12		// < 1e9: fits; writing w zero-extends to x
	stp	x10, x11, [sp]
	mov	x0, sp			// req = &ts
	mov	x1, xzr			// rem = NULL
	mov	x8, #SYS_nanosleep
	svc	#0
	add	sp, sp, #16
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	gort_usleep, .-gort_usleep

// intptr_t gort_futex(addr, op, val, timeout, addr2, val3): the six C
// arguments are already in x0-x5, where the kernel reads them.
	.globl	gort_futex
	.type	gort_futex, %function
	.p2align 2
gort_futex:
	.cfi_startproc
	mov	x8, #SYS_futex
	svc	#0			// x0 = result or -errno
	ret
	.cfi_endproc
	.size	gort_futex, .-gort_futex

// void gort_osyield(void)
	.globl	gort_osyield
	.type	gort_osyield, %function
	.p2align 2
gort_osyield:
	.cfi_startproc
	mov	x8, #SYS_sched_yield
	svc	#0
	ret
	.cfi_endproc
	.size	gort_osyield, .-gort_osyield

// void gort_procyield(uint32_t cycles): `cycles` yield hints.
	.globl	gort_procyield
	.type	gort_procyield, %function
	.p2align 2
gort_procyield:
	.cfi_startproc
	cbz	w0, 2f
1:	yield
	subs	w0, w0, #1
	b.ne	1b
2:	ret
	.cfi_endproc
	.size	gort_procyield, .-gort_procyield

	.section .note.GNU-stack,"",%progbits
