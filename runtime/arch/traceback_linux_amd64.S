// runtime/arch/traceback_linux_amd64.S: unwinding a goroutine that is
// switched out (Go walks a parked goroutine from its gobuf's sp and pc;
// gort's goroutines are parked inside the context backend's switch).
//
// Both switches gort can be built with on amd64 store the caller's state
// below its return address and hand out the lowest address as the context;
// seen from the return address down the layout is the same, only the
// context's distance from it differs:
//   gort_gogo (runtime/arch/gogo_linux_amd64.S, the default):
//     ctx+0x00 r12  +0x08 r13  +0x10 r14  +0x18 r15  +0x20 rbx  +0x28 rbp
//     ctx+0x30 return address; ctx+0x38 is the stack pointer after it.
//   Boost.Context's jump_fcontext (1.74, as its disassembly shows; built
//   with -DGORT_CONTEXT_SWITCH=fcontext):
//     ctx+0x00 mxcsr, x87 control word, then r12 ... rbp as above from
//     ctx+0x08; ctx+0x38 return address; ctx+0x40 the stack pointer after.
// GORT_PARKED_CFA is that stack pointer's offset from the context
// (runtime/CMakeLists.txt defines GORT_ARCH_GOGO when gort_gogo is used).
//
// void gort_unwind_parked(void* ctx, void (*fn)(void*), void* arg)
// calls fn(arg) with a frame whose DWARF call-frame information says that
// its caller is the parked goroutine: CFA = ctx + GORT_PARKED_CFA, and the
// return address and callee-saved registers sit where the switch left them.
// An unwinder started inside fn (the compiler's _Unwind_Backtrace)
// therefore walks fn, this frame, then the goroutine's frames, innermost
// first. fn must not throw: an exception would unwind into the goroutine's
// frames.

#if defined(GORT_ARCH_GOGO)
#define GORT_PARKED_CFA 0x38
#else
#define GORT_PARKED_CFA 0x40
#endif

	.text
	.globl	gort_unwind_parked
	.type	gort_unwind_parked, @function
gort_unwind_parked:
	.cfi_startproc
	pushq	%rbx			// callee-saved; also aligns the call below
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	movq	%rdi, %rbx		// the context, for the CFI below
	movq	%rdx, %rdi
	.cfi_remember_state
	.cfi_def_cfa %rbx, GORT_PARKED_CFA
	.cfi_offset %rip, -0x08
	.cfi_offset %rbp, -0x10
	.cfi_offset %rbx, -0x18
	.cfi_offset %r15, -0x20
	.cfi_offset %r14, -0x28
	.cfi_offset %r13, -0x30
	.cfi_offset %r12, -0x38
	call	*%rsi
	.cfi_restore_state
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
	.cfi_endproc
	.size	gort_unwind_parked, .-gort_unwind_parked

	.section .note.GNU-stack,"",@progbits
