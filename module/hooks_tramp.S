/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMAMERGE_TRAMP - the trampoline of one merge hook (hooks.h), for
 * kernel-<series>/hooks.S, which includes this file (it is never
 * assembled on its own: Kbuild names module/'s objects one by one).
 *
 *	VMAMERGE_TRAMP stock, test, entry
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
 * It calls <test>, which preserves every register but %rax.  False: it
 * returns into the stock body, which runs unchanged.  True: it drops the
 * return into the stock body - the stack is then exactly what the stock
 * function's entry saw - and jumps to <entry>, which takes the same
 * arguments, runs the replacement and returns to the caller.  Flags and
 * %rax are not arguments of a kernel function: both may be clobbered.
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

.macro VMAMERGE_TRAMP stock:req test:req entry:req
SYM_CODE_START(vmamerge_tramp_\stock)
	UNWIND_HINT_FUNC
	ENDBR
	VMAMERGE_TRAMP_DEPTH_ACCOUNT
	call	\test
	testb	%al, %al
	jnz	.Lvmamerge_redirect_\@
	RET
.Lvmamerge_redirect_\@:
	addq	$8, %rsp
	UNWIND_HINT_FUNC
	jmp	\entry
SYM_CODE_END(vmamerge_tramp_\stock)
.endm

#endif /* _VMAMERGE_HOOKS_TRAMP_S */
