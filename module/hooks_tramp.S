/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMAMERGE_TRAMP - the trampoline of one merge hook (hooks.h), for
 * kernel-<series>/hooks.S, which includes this file (it is never
 * assembled on its own: Kbuild names module/'s objects one by one).
 *
 *	VMAMERGE_TRAMP stock, test, entry, mm
 *
 * defines vmamerge_tramp_<stock>.  The stock function's fentry call
 * enters it with the stock function's arguments still in their registers
 * and on the stack, under the return address into the stock function's
 * body:
 *
 *	(%rsp)   the stock body (right after its fentry call)
 *	8(%rsp)  the stock function's caller
 *	16(%rsp) its stack arguments, if any
 *
 * It decides whether the call concerns an active mm (vmamerge_mm_active()).
 * In mode optin - the one that matters for speed: every call of every
 * process goes through here - it reads the mm's opt-in bit itself: <mm>
 * names an assembler macro (the series' hooks.S, or vma_mm_of_ptr_rdi
 * below) that loads the call's mm into %rax from the arguments, or
 * branches to 9f when the call is not one for a replacement (the stock
 * function runs).  In any other mode it calls <test>, which preserves
 * every register but %rax and answers in %al.  Not active: it returns into the
 * stock body, which runs unchanged.  Active: it drops the return into the
 * stock body - the stack is then exactly what the stock function's entry
 * saw - and jumps to <entry>, which takes the same arguments, runs the
 * replacement and returns to the caller.  Flags and %rax are not
 * arguments of a kernel function: both may be clobbered.
 *
 * The inline test reads what vmamerge_mm_active() reads, with the same
 * (lack of) ordering: vmamerge_mode once, then the flags word's byte that
 * holds the opt-in bit (set_bit() and clear_bit() change the whole word
 * atomically; a byte load of it sees the bit before or after, as
 * test_bit()'s load of the word does).  The constants come from
 * vmamerge-hook-offsets.h (module/hook_offsets.h).  Before: the call to
 * the test function, ~19 instructions of a not-opted-in mmap() on 6.12
 * (docs/design.md, "The in-place decision's cost, part by part").
 *
 * Before including this, the series' hooks.S defines
 * VMAMERGE_TRAMP_DEPTH_ACCOUNT: what the kernel's own direct-call
 * trampolines do on entry for call depth tracking (nothing where the
 * kernel has none).  ENDBR: ftrace may reach a direct trampoline through
 * an indirect branch when other ftrace users share the function.
 */
#ifndef _VMAMERGE_HOOKS_TRAMP_S
#define _VMAMERGE_HOOKS_TRAMP_S

#include <linux/linkage.h>
#include <asm/ibt.h>
#include <asm/unwind_hints.h>

#include "vmamerge-hook-offsets.h"

/* copy_vma(vmap, ...) on both series: *vmap is the source VMA */
.macro vma_mm_of_ptr_rdi
	movq	(%rdi), %rax
	movq	VMAMERGE_HO_VMA_MM(%rax), %rax
.endm

.macro VMAMERGE_TRAMP stock:req test:req entry:req mm:req
SYM_CODE_START(vmamerge_tramp_\stock)
	UNWIND_HINT_FUNC
	ENDBR
	VMAMERGE_TRAMP_DEPTH_ACCOUNT
	cmpl	$VMAMERGE_HO_MODE_OPTIN, vmamerge_mode(%rip)
	jne	.Lvmamerge_mode_\@
	\mm
	testb	$VMAMERGE_HO_OPTIN_MASK, VMAMERGE_HO_OPTIN_BYTE(%rax)
	jnz	.Lvmamerge_redirect_\@
9:
	RET
.Lvmamerge_mode_\@:
	call	\test
	testb	%al, %al
	jz	9b
.Lvmamerge_redirect_\@:
	addq	$8, %rsp
	UNWIND_HINT_FUNC
	jmp	\entry
SYM_CODE_END(vmamerge_tramp_\stock)
.endm

#endif /* _VMAMERGE_HOOKS_TRAMP_S */
