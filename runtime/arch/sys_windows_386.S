// runtime/arch/sys_windows_386.S: the Windows trampolines for 386 (the role
// of usleep2, usleep2HighRes and switchtothread in Go's sys_windows_386.s).
// The contract is runtime/arch/windows_trampolines.md; see
// sys_windows_amd64.S for the three functions' behaviour (usleep2HighRes
// returns 0 without waiting when SetWaitableTimer fails, else 1).
//
// ABI: the trampolines are cdecl (arguments on the stack, the caller pops;
// eax, ecx, edx scratch; ebx, esi, edi, ebp the caller's); the Windows APIs
// they call are stdcall (the callee pops its arguments, pushed right to
// left). C symbols carry mingw's leading underscore. Win32 keeps the stack
// 4-byte aligned. Each function builds an ebp frame so debuggers can walk
// the stack; 32-bit Windows unwinds exceptions through the fs:[0] chain, to
// which these frames add nothing.
//
// 64-bit due time on a 32-bit machine: mull gives edx:eax = usec * 10 (at
// most 35 bits), negated as a pair (neg low, adc high with the borrow,
// neg high).

	.text

// void gort_usleep2(uint32_t usec)
// Frame: [ebp+8] usec, [ebp+4] return address, [ebp] saved ebp,
//        [ebp-8, ebp) due (LARGE_INTEGER, low word first).
	.globl	_gort_usleep2
	.def	_gort_usleep2
	.scl	2
	.type	32
	.endef
	.p2align 4
_gort_usleep2:
	pushl	%ebp
	movl	%esp, %ebp
	subl	$8, %esp
	movl	8(%ebp), %eax
	movl	$10, %ecx
	mull	%ecx
	negl	%eax
	adcl	$0, %edx
	negl	%edx
	movl	%eax, -8(%ebp)
	movl	%edx, -4(%ebp)
	leal	-8(%ebp), %eax
	pushl	%eax			// Timeout = &due
	pushl	$0			// Alertable = FALSE
	pushl	$-1			// Handle = NtCurrentProcess()
	call	*_gort_NtWaitForSingleObject	// stdcall: pops its 12 bytes
	movl	%ebp, %esp
	popl	%ebp
	ret

// int gort_usleep2HighRes(uint32_t usec, void* timer)
// Frame: [ebp+12] timer, [ebp+8] usec, [ebp+4] return address,
//        [ebp] saved ebp, [ebp-4] saved ebx (holds the timer),
//        [ebp-12, ebp-4) due.
	.globl	_gort_usleep2HighRes
	.def	_gort_usleep2HighRes
	.scl	2
	.type	32
	.endef
	.p2align 4
_gort_usleep2HighRes:
	pushl	%ebp
	movl	%esp, %ebp
	pushl	%ebx
	subl	$8, %esp
	movl	12(%ebp), %ebx
	movl	8(%ebp), %eax
	movl	$10, %ecx
	mull	%ecx
	negl	%eax
	adcl	$0, %edx
	negl	%edx
	movl	%eax, -12(%ebp)
	movl	%edx, -8(%ebp)
	pushl	$0			// fResume = FALSE
	pushl	$0			// lpArgToCompletionRoutine = NULL
	pushl	$0			// pfnCompletionRoutine = NULL
	pushl	$0			// lPeriod = 0: fires once
	leal	-12(%ebp), %eax
	pushl	%eax			// lpDueTime = &due
	pushl	%ebx			// hTimer
	call	*_gort_SetWaitableTimer		// stdcall: pops its 24 bytes
	testl	%eax, %eax
	jz	1f			// not set: return 0, do not wait
	pushl	$0			// Timeout = NULL: until the timer fires
	pushl	$0			// Alertable = FALSE
	pushl	%ebx			// Handle = timer
	call	*_gort_NtWaitForSingleObject
	movl	$1, %eax
1:
	movl	-4(%ebp), %ebx
	movl	%ebp, %esp
	popl	%ebp
	ret

// void gort_switchtothread(void)
// Frame: [ebp] saved ebp only.
	.globl	_gort_switchtothread
	.def	_gort_switchtothread
	.scl	2
	.type	32
	.endef
	.p2align 4
_gort_switchtothread:
	pushl	%ebp
	movl	%esp, %ebp
	call	*_gort_SwitchToThread
	popl	%ebp
	ret
