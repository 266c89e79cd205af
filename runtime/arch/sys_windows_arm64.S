// runtime/arch/sys_windows_arm64.S: the Windows trampolines for arm64 (the
// role of the usleep2, usleep2HighRes and switchtothread routines of Go's
// sys_windows_arm64.s). The contract is shared by every Windows architecture
// and documented in runtime/arch/windows_trampolines.md:
//
//   void gort_usleep2(uint32_t usec);
//       NtWaitForSingleObject(NtCurrentProcess() = (HANDLE)-1, FALSE, &due)
//       with due = -10 * usec (relative, 100 ns units): the process handle is
//       never signalled while the process runs, so this waits out the timeout.
//   int gort_usleep2HighRes(uint32_t usec, void* timer);
//       SetWaitableTimer(timer, &due, 0, NULL, NULL, FALSE), same due; if
//       that fails (returns 0), returns 0 at once without waiting (the
//       caller falls back to gort_usleep2); else
//       NtWaitForSingleObject(timer, FALSE, NULL) and returns 1 (never the
//       wait's NTSTATUS: STATUS_SUCCESS is 0). `timer` is the M's
//       high-resolution waitable timer (CreateWaitableTimerExW with
//       CREATE_WAITABLE_TIMER_HIGH_RESOLUTION).
//   void gort_switchtothread(void);
//       SwitchToThread().
//
// Each API is called through a pointer-sized global holding its resolved
// entry point, defined and filled by runtime/os/os_windows.cc before any M
// runs:
//   extern "C" void* gort_SetWaitableTimer;        // kernel32
//   extern "C" void* gort_NtWaitForSingleObject;   // ntdll
//   extern "C" void* gort_SwitchToThread;          // kernel32
// The globals are referenced directly (adrp + ldr :lo12:), so they must be
// linked into the same image as this object (not imported from a DLL).
//
// ABI (Windows arm64, i.e. AAPCS64 with Microsoft's additions): arguments in
// x0-x7, result in x0; x19-x28, x29 (frame pointer, must form a frame chain)
// and x30 (link register) belong to the caller; sp is 16-byte aligned at all
// times; x18 is the TEB pointer and never touched; x16/x17 are scratch and
// hold the call target here. Each function builds a frame record
// (stp x29, x30, [sp, #-N]!; mov x29, sp) and describes its prologue and
// epilogue with .seh_* directives, so Windows' unwinder (.pdata/.xdata) can
// walk through it.
//
// Assembled with clang --target=aarch64-w64-windows-gnu into a COFF object;
// tests/arch/check_windows_arm.py checks the result.

	.text

// void gort_usleep2(uint32_t usec)
// Frame (32 bytes):  [sp] saved x29  [sp, #8] saved x30
//                    [sp, #16] due (LARGE_INTEGER)  [sp, #24] unused
	.def	gort_usleep2
	.scl	2
	.type	32
	.endef
	.globl	gort_usleep2
	.p2align 2
gort_usleep2:
	.seh_proc gort_usleep2
	stp	x29, x30, [sp, #-32]!
	.seh_save_fplr_x 32
	mov	x29, sp
	.seh_set_fp
	.seh_endprologue
	mov	w9, #10
	umull	x9, w0, w9		// 100 ns units; at most 42949672950: no overflow
	neg	x9, x9			// negative: relative to now
	str	x9, [sp, #16]
	mov	x0, #-1			// Handle = NtCurrentProcess()
	mov	w1, #0			// Alertable = FALSE
	add	x2, sp, #16		// Timeout = &due
	adrp	x16, gort_NtWaitForSingleObject
	ldr	x16, [x16, :lo12:gort_NtWaitForSingleObject]
	blr	x16
	.seh_startepilogue
	ldp	x29, x30, [sp], #32
	.seh_save_fplr_x 32
	.seh_endepilogue
	ret
	.seh_endproc

// int gort_usleep2HighRes(uint32_t usec, void* timer)
// Frame (32 bytes):  [sp] saved x29  [sp, #8] saved x30
//                    [sp, #16] saved x19 (holds the timer across the first
//                    call)  [sp, #24] due (LARGE_INTEGER)
	.def	gort_usleep2HighRes
	.scl	2
	.type	32
	.endef
	.globl	gort_usleep2HighRes
	.p2align 2
gort_usleep2HighRes:
	.seh_proc gort_usleep2HighRes
	stp	x29, x30, [sp, #-32]!
	.seh_save_fplr_x 32
	mov	x29, sp
	.seh_set_fp
	str	x19, [sp, #16]
	.seh_save_reg x19, 16
	.seh_endprologue
	mov	x19, x1
	mov	w9, #10
	umull	x9, w0, w9
	neg	x9, x9
	str	x9, [sp, #24]
	mov	x0, x19			// hTimer
	add	x1, sp, #24		// lpDueTime = &due
	mov	w2, #0			// lPeriod = 0: fires once
	mov	x3, xzr			// pfnCompletionRoutine = NULL
	mov	x4, xzr			// lpArgToCompletionRoutine = NULL
	mov	w5, #0			// fResume = FALSE
	adrp	x16, gort_SetWaitableTimer
	ldr	x16, [x16, :lo12:gort_SetWaitableTimer]
	blr	x16
	cbz	w0, 1f			// not set: return 0 (w0), do not wait
	mov	x0, x19			// Handle = timer
	mov	w1, #0			// Alertable = FALSE
	mov	x2, xzr			// Timeout = NULL: until the timer fires
	adrp	x16, gort_NtWaitForSingleObject
	ldr	x16, [x16, :lo12:gort_NtWaitForSingleObject]
	blr	x16
	mov	w0, #1			// slept: 1, whatever the wait returned
1:
	.seh_startepilogue
	ldr	x19, [sp, #16]
	.seh_save_reg x19, 16
	ldp	x29, x30, [sp], #32
	.seh_save_fplr_x 32
	.seh_endepilogue
	ret
	.seh_endproc

// void gort_switchtothread(void)
// Frame (16 bytes):  [sp] saved x29  [sp, #8] saved x30
	.def	gort_switchtothread
	.scl	2
	.type	32
	.endef
	.globl	gort_switchtothread
	.p2align 2
gort_switchtothread:
	.seh_proc gort_switchtothread
	stp	x29, x30, [sp, #-16]!
	.seh_save_fplr_x 16
	mov	x29, sp
	.seh_set_fp
	.seh_endprologue
	adrp	x16, gort_SwitchToThread
	ldr	x16, [x16, :lo12:gort_SwitchToThread]
	blr	x16
	.seh_startepilogue
	ldp	x29, x30, [sp], #16
	.seh_save_fplr_x 16
	.seh_endepilogue
	ret
	.seh_endproc
