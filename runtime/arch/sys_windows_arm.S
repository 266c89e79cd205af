// runtime/arch/sys_windows_arm.S: the Windows trampolines for 32-bit ARM
// (Windows on ARMv7, Thumb-2 only; the role of the usleep2, usleep2HighRes and
// switchtothread routines of Go's sys_windows_arm.s). The contract is shared
// by every Windows architecture and documented in
// runtime/arch/windows_trampolines.md:
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
// entry point (a Thumb address, low bit set, as GetProcAddress returns it;
// blx interworks), defined and filled by runtime/os/os_windows.cc before any
// M runs:
//   extern "C" void* gort_SetWaitableTimer;        // kernel32
//   extern "C" void* gort_NtWaitForSingleObject;   // ntdll
//   extern "C" void* gort_SwitchToThread;          // kernel32
// The globals are referenced directly (movw/movt, one IMAGE_REL_ARM_MOV32T
// relocation), so they must be linked into the same image as this object
// (not imported from a DLL).
//
// ABI (Windows on ARM: AAPCS, Thumb-2 only, hard-float): arguments in r0-r3,
// the fifth and sixth at [sp] and [sp, #4] at the call; result in r0;
// r4-r11 belong to the caller; sp is 8-byte aligned at every call; r11 is the
// frame pointer and points at the saved {r11, lr} pair; r12 is scratch and
// holds the call target here. Windows runs no ARM (A32) code: clang rejects
// A32 for this target, hence .thumb throughout.
//
// Unwind data: clang 14 has no .seh_* directives for 32-bit ARM (they arrive
// in LLVM 15), so these functions carry no .pdata/.xdata. The r11 frame chain
// still lets frame-pointer walkers (ETW, debuggers) through; an SEH exception
// cannot cross them, and none is raised while they run.
//
// Assembled with clang --target=thumbv7-w64-windows-gnu into a COFF object;
// tests/arch/check_windows_arm.py checks the result.

	.syntax unified
	.thumb
	.text

// r3:r2 = -(10 * usec) as a 64-bit LARGE_INTEGER (usec in \usec); clobbers
// \ten. After negs, C is set only when the low word was 0 (no borrow), so
// sbc of hi - 2*hi yields -hi - borrow.
.macro DUE_FROM_USEC usec, ten
	movs	\ten, #10
	umull	r2, r3, \usec, \ten	// r3:r2 = 10 * usec (at most 35 bits)
	negs	r2, r2
	sbc	r3, r3, r3, lsl #1
.endm

// void gort_usleep2(uint32_t usec)
// Frame (16 bytes):  [sp] due lo  [sp, #4] due hi
//                    [sp, #8] saved r11  [sp, #12] saved lr
	.def	gort_usleep2
	.scl	2
	.type	32
	.endef
	.globl	gort_usleep2
	.p2align 1
	.thumb_func
gort_usleep2:
	push	{r11, lr}
	mov	r11, sp
	sub	sp, sp, #8
	DUE_FROM_USEC r0, r1
	strd	r2, r3, [sp]
	mov	r0, #-1			// Handle = NtCurrentProcess()
	movs	r1, #0			// Alertable = FALSE
	mov	r2, sp			// Timeout = &due
	movw	r12, :lower16:gort_NtWaitForSingleObject
	movt	r12, :upper16:gort_NtWaitForSingleObject
	ldr	r12, [r12]
	blx	r12
	add	sp, sp, #8
	pop	{r11, pc}

// int gort_usleep2HighRes(uint32_t usec, void* timer)
// Frame (32 bytes):  [sp] 5th argument  [sp, #4] 6th argument
//                    [sp, #8] due lo  [sp, #12] due hi
//                    [sp, #16] saved r4 (holds the timer across the first
//                    call)  [sp, #20] saved r5 (keeps the frame 8-aligned)
//                    [sp, #24] saved r11  [sp, #28] saved lr
	.def	gort_usleep2HighRes
	.scl	2
	.type	32
	.endef
	.globl	gort_usleep2HighRes
	.p2align 1
	.thumb_func
gort_usleep2HighRes:
	push	{r4, r5, r11, lr}
	add	r11, sp, #8		// r11 -> saved {r11, lr}
	sub	sp, sp, #16
	mov	r4, r1
	DUE_FROM_USEC r0, r1
	strd	r2, r3, [sp, #8]
	movs	r3, #0
	str	r3, [sp]		// lpArgToCompletionRoutine = NULL
	str	r3, [sp, #4]		// fResume = FALSE
	mov	r0, r4			// hTimer
	add	r1, sp, #8		// lpDueTime = &due
	movs	r2, #0			// lPeriod = 0: fires once
					// r3 = pfnCompletionRoutine = NULL
	movw	r12, :lower16:gort_SetWaitableTimer
	movt	r12, :upper16:gort_SetWaitableTimer
	ldr	r12, [r12]
	blx	r12
	cbz	r0, 1f			// not set: return 0 (r0), do not wait
	mov	r0, r4			// Handle = timer
	movs	r1, #0			// Alertable = FALSE
	movs	r2, #0			// Timeout = NULL: until the timer fires
	movw	r12, :lower16:gort_NtWaitForSingleObject
	movt	r12, :upper16:gort_NtWaitForSingleObject
	ldr	r12, [r12]
	blx	r12
	movs	r0, #1			// slept: 1, whatever the wait returned
1:
	add	sp, sp, #16
	pop	{r4, r5, r11, pc}

// void gort_switchtothread(void)
// Frame (8 bytes):  [sp] saved r11  [sp, #4] saved lr
	.def	gort_switchtothread
	.scl	2
	.type	32
	.endef
	.globl	gort_switchtothread
	.p2align 1
	.thumb_func
gort_switchtothread:
	push	{r11, lr}
	mov	r11, sp
	movw	r12, :lower16:gort_SwitchToThread
	movt	r12, :upper16:gort_SwitchToThread
	ldr	r12, [r12]
	blx	r12
	pop	{r11, pc}
