/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trampolines of the merge hooks on Debian's 6.1 (module/hooks.h,
 * module/hooks_tramp.S); the hooks themselves are listed in glue.c.
 */

/* 6.1 has no call depth tracking */
#define VMAMERGE_TRAMP_DEPTH_ACCOUNT
#include <asm/percpu.h>
#include "hooks_tramp.S"

/* how each hooked function's arguments lead to its mm (hooks_tramp.S) */
.macro mm_in_rdi
	movq	%rdi, %rax
.endm
/*
 * do_mmap(file, ...) maps into current->mm; a file mapping, or a task
 * without an mm, runs the stock function (vmamerge_test_do_mmap()).
 */
.macro current_mm_if_anon
	testq	%rdi, %rdi
	jnz	9f
	movq	PER_CPU_VAR(current_task), %rax
	movq	VMAMERGE_HO_TASK_MM(%rax), %rax
	testq	%rax, %rax
	jz	9f
.endm

	.text
/* vma_merge(mm, ...) */
VMAMERGE_TRAMP vma_merge, vmamerge_test_vma_merge, vmamerge_entry_vma_merge, mm_in_rdi
/* copy_vma(vmap, ...) */
VMAMERGE_TRAMP copy_vma, vmamerge_test_copy_vma, vmamerge_entry_copy_vma, vma_mm_of_ptr_rdi
VMAMERGE_TRAMP do_mmap, vmamerge_test_do_mmap, vmamerge_entry_do_mmap, current_mm_if_anon
