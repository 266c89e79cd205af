// runtime/arch/gogo_linux_amd64.S: gort's own goroutine switch for amd64
// (Go's asm_amd64.s gogo and mcall), System V ABI: arguments in rdi, rsi;
// rbx, rbp and r12-r15 are callee-saved.
//
// A context is the stack pointer of a switched-out side, which points at
// what gort_gogo pushed:
//   ctx+0x00 r12   ctx+0x08 r13   ctx+0x10 r14   ctx+0x18 r15
//   ctx+0x20 rbx   ctx+0x28 rbp
//   ctx+0x30 return address (into the caller of gort_gogo, or gort_gostart
//            on a fresh stack); ctx+0x38 is the stack pointer after it.
// runtime/arch/traceback_linux_amd64.S walks parked goroutines from this
// layout; keep the two in step.
//
// Only the callee-saved integer registers, the stack pointer and the PC are
// switched: the x87 control word and MXCSR are per-thread state that gort
// never changes (Go's gogo (stubs.go:233) leaves them alone for the same reason), and the
// other registers are caller-saved, so the C++ caller has spilled whatever
// it needs. So, as in Go, a goroutine that changes the rounding mode or
// exception masks (fesetround, _MM_SET_ROUNDING_MODE) changes them for its
// thread: whatever runs there next sees them, and the goroutine keeps them
// only while it stays on that thread (Boost's fcontext carried them with
// the goroutine). Nothing is allocated.

	.text

// void gort_gogo(void** save, void* to)   Go: runtime·gogo plus mcall's save
// Saves the running side's context in *save and resumes the context `to`;
// returns when something switches back to *save. Go's gogo (stubs.go:233) only loads a
// gobuf (mcall or gosave stored it); gort saves and loads in one call, and
// stores *save before the jump, so it is complete before `to` runs.
// It leaves by an indirect jmp, as Go's gogo (stubs.go:233) does, not by ret: a ret here
// always goes somewhere other than where the return-address predictor
// expects (the other side's call site), while the jump's target is
// predictable from its history. Measured: Gosched 19% less CPU per op
// (docs/notes/performance-log.md).
	.globl	gort_gogo
	.type	gort_gogo, @function
gort_gogo:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbx, 0
	pushq	%r15
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r15, 0
	pushq	%r14
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r14, 0
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r13, 0
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r12, 0
	movq	%rsp, (%rdi)		// *save = this side's context
	movq	%rsi, %rsp		// the other side's stack from here on
	// The other side's frame looks like ours, so the CFI above still holds.
	popq	%r12
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r12
	popq	%r13
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r13
	popq	%r14
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r14
	popq	%r15
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r15
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	popq	%rcx
	.cfi_adjust_cfa_offset -8
	.cfi_register %rip, %rcx
	jmp	*%rcx
	.cfi_endproc
	.size	gort_gogo, .-gort_gogo

// void* gort_newcontext(void* top, void (*entry)(void))
//                                  Go: newproc1's gp.sched set-up (gostartcall)
// Lays out a context just below top (rounded down to 16) that gort_gogo
// resumes into gort_gostart, with entry in the r12 slot and zero in the
// others; returns it. The stack pointer after the "return" is top rounded
// down, so gort_gostart's call leaves entry's stack pointer at 8 mod 16.
	.globl	gort_newcontext
	.type	gort_newcontext, @function
gort_newcontext:
	.cfi_startproc
	movq	%rdi, %rax
	andq	$-16, %rax
	subq	$0x38, %rax
	movq	%rsi, 0x00(%rax)	// r12: the entry
	xorl	%ecx, %ecx
	movq	%rcx, 0x08(%rax)	// r13
	movq	%rcx, 0x10(%rax)	// r14
	movq	%rcx, 0x18(%rax)	// r15
	movq	%rcx, 0x20(%rax)	// rbx
	movq	%rcx, 0x28(%rax)	// rbp: 0 ends a frame-pointer walk
	leaq	gort_gostart(%rip), %rcx
	movq	%rcx, 0x30(%rax)
	ret
	.cfi_endproc
	.size	gort_newcontext, .-gort_newcontext

// gort_gostart: the bottom frame of every goroutine stack (Go's goexit (stubs.go:299)
// frame below the goroutine's function). Entered by gort_gogo's ret with
// the entry in r12; the entry never returns. Its return address is marked
// undefined, so unwinders (the C++ runtime's, a debugger's, the goroutine
// dump's) stop here instead of reading above the stack.
	.globl	gort_gostart
	.type	gort_gostart, @function
gort_gostart:
	.cfi_startproc
	.cfi_undefined %rip
	call	*%r12
	ud2
	.cfi_endproc
	.size	gort_gostart, .-gort_gostart

	.section .note.GNU-stack,"",@progbits
