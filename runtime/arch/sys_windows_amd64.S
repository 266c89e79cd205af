// runtime/arch/sys_windows_amd64.S: the Windows trampolines for amd64 (the
// role of usleep2, usleep2HighRes and switchtothread in Go's
// sys_windows_amd64.s). The contract shared by every Windows architecture
// is runtime/arch/windows_trampolines.md:
//
//   void gort_usleep2(uint32_t usec);
//       NtWaitForSingleObject(NtCurrentProcess() = (HANDLE)-1, FALSE, &due),
//       due = -10 * usec (relative, 100 ns units).
//   int gort_usleep2HighRes(uint32_t usec, void* timer);
//       SetWaitableTimer(timer, &due, 0, NULL, NULL, FALSE); if that fails,
//       returns 0 at once (the caller falls back to gort_usleep2, where Go
//       would wait forever on a timer that was never set); else
//       NtWaitForSingleObject(timer, FALSE, NULL) and returns 1.
//   void gort_switchtothread(void);
//       SwitchToThread().
//
// Each API is called through a global filled by runtime/os/os_windows.cc
// before any M runs (gort_SetWaitableTimer, gort_NtWaitForSingleObject,
// gort_SwitchToThread), referenced RIP-relative: they must be linked into
// the same image.
//
// ABI (Microsoft x64): arguments in rcx, rdx, r8, r9, then on the stack
// above a 32-byte shadow area the caller reserves for the callee's register
// arguments; result in rax; rbx, rbp, rdi, rsi, r12-r15 and xmm6-xmm15 are
// the caller's. rsp is 16-byte aligned at every call (so 8 mod 16 on entry,
// with the return address pushed). Each prologue is described with .seh_*
// directives, so Windows' unwinder (.pdata/.xdata) can walk through these
// frames, e.g. when a debugger or an exception looks up the stack.
//
// The .S files run on the M's own stack (g0): os_windows.cc calls them from
// usleep, which the runtime only calls on g0.

	.text

// void gort_usleep2(uint32_t usec)
// Frame (40 bytes below the return address, rsp 16-byte aligned):
//   [rsp+0, rsp+32)   shadow space for the callee
//   [rsp+32]          due (LARGE_INTEGER)
	.def	gort_usleep2
	.scl	2
	.type	32
	.endef
	.globl	gort_usleep2
	.p2align 4
gort_usleep2:
	.seh_proc gort_usleep2
	subq	$40, %rsp
	.seh_stackalloc 40
	.seh_endprologue
	movl	%ecx, %eax		// zero-extends usec
	imulq	$10, %rax, %rax		// 100 ns units: at most 35 bits
	negq	%rax			// negative: relative to now
	movq	%rax, 32(%rsp)
	movq	$-1, %rcx		// Handle = NtCurrentProcess()
	xorl	%edx, %edx		// Alertable = FALSE
	leaq	32(%rsp), %r8		// Timeout = &due
	callq	*gort_NtWaitForSingleObject(%rip)
	addq	$40, %rsp
	ret
	.seh_endproc

// int gort_usleep2HighRes(uint32_t usec, void* timer)
// Frame (8 for rbx + 64 below it; rsp 16-byte aligned after both):
//   [rsp+0, rsp+32)   shadow space for the callee
//   [rsp+32]          argument 5 of SetWaitableTimer (lpArgToCompletionRoutine)
//   [rsp+40]          argument 6 (fResume)
//   [rsp+48]          due (LARGE_INTEGER)
//   [rsp+56]          padding
//   [rsp+64]          saved rbx (holds the timer across the first call)
	.def	gort_usleep2HighRes
	.scl	2
	.type	32
	.endef
	.globl	gort_usleep2HighRes
	.p2align 4
gort_usleep2HighRes:
	.seh_proc gort_usleep2HighRes
	pushq	%rbx
	.seh_pushreg %rbx
	subq	$64, %rsp
	.seh_stackalloc 64
	.seh_endprologue
	movq	%rdx, %rbx
	movl	%ecx, %eax
	imulq	$10, %rax, %rax
	negq	%rax
	movq	%rax, 48(%rsp)
	movq	%rbx, %rcx		// hTimer
	leaq	48(%rsp), %rdx		// lpDueTime = &due
	xorl	%r8d, %r8d		// lPeriod = 0: fires once
	xorl	%r9d, %r9d		// pfnCompletionRoutine = NULL
	movq	$0, 32(%rsp)		// lpArgToCompletionRoutine = NULL
	movq	$0, 40(%rsp)		// fResume = FALSE
	callq	*gort_SetWaitableTimer(%rip)
	testl	%eax, %eax
	jz	1f			// not set: return 0, do not wait
	movq	%rbx, %rcx		// Handle = timer
	xorl	%edx, %edx		// Alertable = FALSE
	xorl	%r8d, %r8d		// Timeout = NULL: until the timer fires
	callq	*gort_NtWaitForSingleObject(%rip)
	movl	$1, %eax
1:
	addq	$64, %rsp
	popq	%rbx
	ret
	.seh_endproc

// void gort_switchtothread(void)
// Frame (40 bytes): [rsp+0, rsp+32) shadow space, [rsp+32] padding.
	.def	gort_switchtothread
	.scl	2
	.type	32
	.endef
	.globl	gort_switchtothread
	.p2align 4
gort_switchtothread:
	.seh_proc gort_switchtothread
	subq	$40, %rsp
	.seh_stackalloc 40
	.seh_endprologue
	callq	*gort_SwitchToThread(%rip)
	addq	$40, %rsp
	ret
	.seh_endproc
