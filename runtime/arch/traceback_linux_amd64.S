// runtime/arch/traceback_linux_amd64.S: unwinding a goroutine that is
// switched out (Go walks a parked goroutine from its gobuf's sp and pc;
// gort's goroutines are parked inside Boost.Context's jump_fcontext).
//
// jump_fcontext (Boost 1.74, x86_64 System V, as its disassembly shows)
// stores the caller's state below its return address and hands out that
// address as the context:
//   ctx+0x00 mxcsr, x87 control word    ctx+0x08 r12   ctx+0x10 r13
//   ctx+0x18 r14   ctx+0x20 r15   ctx+0x28 rbx   ctx+0x30 rbp
//   ctx+0x38 return address into the goroutine's code; ctx+0x40 is the
//   goroutine's stack pointer after that return.
//
// void gort_unwind_parked(void* ctx, void (*fn)(void*), void* arg)
// calls fn(arg) with a frame whose DWARF call-frame information says that
// its caller is the parked goroutine: CFA = ctx + 0x40, and the return
// address and callee-saved registers sit where jump_fcontext left them. An
// unwinder started inside fn (the compiler's _Unwind_Backtrace) therefore
// walks fn, this frame, then the goroutine's frames, innermost first. fn
// must not throw: an exception would unwind into the goroutine's frames.

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
	.cfi_def_cfa %rbx, 0x40
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
