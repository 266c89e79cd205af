// runtime/arch/sys_linux_386.S: raw Linux system calls for 386 (the role of
// Go's sys_linux_386.s). Same contract as sys_linux_amd64.S; see arch.h.
//
// C ABI (System V i386, cdecl): every argument on the stack, the first at
// 4(%esp) on entry, above the return address; result in %eax; %ebx, %esi,
// %edi and %ebp belong to the caller and are saved before use.
// Kernel ABI (int $0x80): number in %eax, arguments in %ebx, %ecx, %edx,
// %esi, %edi, %ebp; result (or -errno) in %eax; nothing else is clobbered.
//
// time_t: glibc's i386 time_t is 32 bits unless the build defines
// _TIME_BITS=64, in which case <features.h> defines __USE_TIME_BITS64 and the
// C side's struct timespec is 64-bit; gort_futex then has to use futex_time64
// so that the kernel reads the timeout the C side wrote. gort_usleep builds
// its own timespec, and follows the same choice so that it keeps working on
// kernels built without the 32-bit time system calls. The definitions that
// select _TIME_BITS must therefore reach this file too (add_compile_definitions
// or target_compile_definitions, not CMAKE_CXX_FLAGS).
#include <features.h>
#include <asm/unistd.h>

// System call numbers of the i386 table, spelled out and checked against the
// target's kernel headers.
#define SYS_nanosleep			162
#define SYS_sched_yield			158
#define SYS_futex			240
#define SYS_clock_nanosleep_time64	407
#define SYS_futex_time64		422
#if __NR_nanosleep != SYS_nanosleep || __NR_sched_yield != SYS_sched_yield || \
    __NR_futex != SYS_futex || \
    __NR_clock_nanosleep_time64 != SYS_clock_nanosleep_time64 || \
    __NR_futex_time64 != SYS_futex_time64
#error "sys_linux_386.S: system call numbers disagree with <asm/unistd.h>"
#endif
#ifdef __USE_TIME_BITS64
#define SYS_futex_gort	SYS_futex_time64
#else
#define SYS_futex_gort	SYS_futex
#endif
#define CLOCK_MONOTONIC	1

	.text

// void gort_usleep(uint32_t usec)
#ifndef __USE_TIME_BITS64
// nanosleep(&ts, NULL) with a 32-bit struct timespec {tv_sec, tv_nsec}
// built on the stack. Stack after the prologue:
//   0(%esp) tv_sec   4(%esp) tv_nsec   8(%esp) saved %ebx
//   12(%esp) return address   16(%esp) usec
	.globl	gort_usleep
	.type	gort_usleep, @function
	.p2align 4
gort_usleep:
	.cfi_startproc
	pushl	%ebx
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebx, 0
	subl	$8, %esp
	.cfi_adjust_cfa_offset 8
	movl	16(%esp), %eax
	xorl	%edx, %edx
	movl	$1000000, %ecx
	divl	%ecx			// eax = whole seconds, edx = microseconds left
	movl	%eax, 0(%esp)
	imull	$1000, %edx, %edx	// < 1e9: fits
	movl	%edx, 4(%esp)
	movl	%esp, %ebx		// req = &ts
	xorl	%ecx, %ecx		// rem = NULL
	movl	$SYS_nanosleep, %eax
	int	$0x80
	addl	$8, %esp
	.cfi_adjust_cfa_offset -8
	popl	%ebx
	.cfi_adjust_cfa_offset -4
	.cfi_restore %ebx
	ret
	.cfi_endproc
	.size	gort_usleep, .-gort_usleep
#else
// clock_nanosleep_time64(CLOCK_MONOTONIC, 0, &ts, NULL) with the kernel's
// 64-bit struct __kernel_timespec {int64 tv_sec; int64 tv_nsec} (nanosleep's
// own clock is CLOCK_MONOTONIC too). Stack after the prologue:
//   0(%esp) tv_sec (lo, hi)   8(%esp) tv_nsec (lo, hi)   16(%esp) saved %esi
//   20(%esp) saved %ebx   24(%esp) return address   28(%esp) usec
	.globl	gort_usleep
	.type	gort_usleep, @function
	.p2align 4
gort_usleep:
	.cfi_startproc
	pushl	%ebx
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebx, 0
	pushl	%esi
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %esi, 0
	subl	$16, %esp
	.cfi_adjust_cfa_offset 16
	movl	28(%esp), %eax
	xorl	%edx, %edx
	movl	$1000000, %ecx
	divl	%ecx
	movl	%eax, 0(%esp)
	movl	$0, 4(%esp)
	imull	$1000, %edx, %edx
	movl	%edx, 8(%esp)
	movl	$0, 12(%esp)
	movl	$CLOCK_MONOTONIC, %ebx	// clockid
	xorl	%ecx, %ecx		// flags: relative
	movl	%esp, %edx		// req = &ts
	xorl	%esi, %esi		// rem = NULL
	movl	$SYS_clock_nanosleep_time64, %eax
	int	$0x80
	addl	$16, %esp
	.cfi_adjust_cfa_offset -16
	popl	%esi
	.cfi_adjust_cfa_offset -4
	.cfi_restore %esi
	popl	%ebx
	.cfi_adjust_cfa_offset -4
	.cfi_restore %ebx
	ret
	.cfi_endproc
	.size	gort_usleep, .-gort_usleep
#endif

// intptr_t gort_futex(addr, op, val, timeout, addr2, val3)
// All six arguments move from the stack into registers, four of which the
// caller owns. Stack after the four pushes:
//   0 saved %ebp   4 saved %edi   8 saved %esi   12 saved %ebx
//   16 return address   20 addr   24 op   28 val   32 timeout   36 addr2
//   40 val3
	.globl	gort_futex
	.type	gort_futex, @function
	.p2align 4
gort_futex:
	.cfi_startproc
	pushl	%ebx
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebx, 0
	pushl	%esi
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %esi, 0
	pushl	%edi
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %edi, 0
	pushl	%ebp
	.cfi_adjust_cfa_offset 4
	.cfi_rel_offset %ebp, 0
	movl	20(%esp), %ebx		// uaddr
	movl	24(%esp), %ecx		// futex_op
	movl	28(%esp), %edx		// val
	movl	32(%esp), %esi		// timeout (or val2)
	movl	36(%esp), %edi		// uaddr2
	movl	40(%esp), %ebp		// val3
	movl	$SYS_futex_gort, %eax
	int	$0x80			// eax = result or -errno
	popl	%ebp
	.cfi_adjust_cfa_offset -4
	.cfi_restore %ebp
	popl	%edi
	.cfi_adjust_cfa_offset -4
	.cfi_restore %edi
	popl	%esi
	.cfi_adjust_cfa_offset -4
	.cfi_restore %esi
	popl	%ebx
	.cfi_adjust_cfa_offset -4
	.cfi_restore %ebx
	ret
	.cfi_endproc
	.size	gort_futex, .-gort_futex

// void gort_osyield(void): sched_yield() takes no argument, so no register
// of the caller's is touched but %eax, which is the caller's to lose.
	.globl	gort_osyield
	.type	gort_osyield, @function
	.p2align 4
gort_osyield:
	.cfi_startproc
	movl	$SYS_sched_yield, %eax
	int	$0x80
	ret
	.cfi_endproc
	.size	gort_osyield, .-gort_osyield

// void gort_procyield(uint32_t cycles): `cycles` pause instructions; cycles
// is at 4(%esp).
	.globl	gort_procyield
	.type	gort_procyield, @function
	.p2align 4
gort_procyield:
	.cfi_startproc
	movl	4(%esp), %eax
	testl	%eax, %eax
	jz	2f
1:	pause
	decl	%eax
	jnz	1b
2:	ret
	.cfi_endproc
	.size	gort_procyield, .-gort_procyield

	.section .note.GNU-stack,"",@progbits
