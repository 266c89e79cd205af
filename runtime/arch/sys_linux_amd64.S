// runtime/arch/sys_linux_amd64.S: raw Linux system calls for amd64
// (Go's sys_linux_amd64.s). System V ABI in: rdi, rsi, rdx, rcx, r8, r9.
// Kernel ABI: number in rax, arguments in rdi, rsi, rdx, r10, r8, r9.

	.text

// void gort_usleep(uint32_t usec)            Go: runtime·usleep
// Builds a struct timespec {tv_sec, tv_nsec} in 16 bytes below the return
// address and calls nanosleep(&ts, NULL). Stack after the sub:
//   0(%rsp) tv_sec   8(%rsp) tv_nsec   16(%rsp) pad   24(%rsp) return address
	.globl	gort_usleep
	.type	gort_usleep, @function
gort_usleep:
	.cfi_startproc
	subq	$24, %rsp
	.cfi_adjust_cfa_offset 24
	movl	%edi, %eax
	xorl	%edx, %edx
	movl	$1000000, %ecx
	divl	%ecx			// eax = seconds, edx = leftover microseconds
	movq	%rax, 0(%rsp)
	imull	$1000, %edx, %edx	// < 1e9, fits
	movq	%rdx, 8(%rsp)
	movq	%rsp, %rdi		// req = &ts
	xorl	%esi, %esi		// rem = NULL
	movl	$35, %eax		// SYS_nanosleep
	syscall
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	ret
	.cfi_endproc
	.size	gort_usleep, .-gort_usleep

// intptr_t gort_futex(addr, op, val, timeout, addr2, val3)   Go: runtime·futex
// The fourth argument moves from rcx (C ABI) to r10 (kernel ABI).
	.globl	gort_futex
	.type	gort_futex, @function
gort_futex:
	.cfi_startproc
	movq	%rcx, %r10
	movl	$202, %eax		// SYS_futex
	syscall
	ret
	.cfi_endproc
	.size	gort_futex, .-gort_futex

// void gort_osyield(void)                   Go: runtime·osyield
	.globl	gort_osyield
	.type	gort_osyield, @function
gort_osyield:
	.cfi_startproc
	movl	$24, %eax		// SYS_sched_yield
	syscall
	ret
	.cfi_endproc
	.size	gort_osyield, .-gort_osyield

// void gort_procyield(uint32_t cycles)      Go: runtime·procyield
	.globl	gort_procyield
	.type	gort_procyield, @function
gort_procyield:
	.cfi_startproc
	testl	%edi, %edi
	jz	2f
1:	pause
	decl	%edi
	jnz	1b
2:	ret
	.cfi_endproc
	.size	gort_procyield, .-gort_procyield

	.section .note.GNU-stack,"",@progbits
