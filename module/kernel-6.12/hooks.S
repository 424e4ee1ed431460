/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trampolines of the merge hooks on Debian's 6.12 (module/hooks.h,
 * module/hooks_tramp.S); the hooks themselves are listed in glue.c.
 */
#include <asm/nospec-branch.h>

/* call depth tracking (retbleed=stuff): as samples/ftrace/ftrace-direct.c */
#define VMAMERGE_TRAMP_DEPTH_ACCOUNT	CALL_DEPTH_ACCOUNT
#include "hooks_tramp.S"

/* how each hooked function's arguments lead to its mm (hooks_tramp.S) */
.macro vma_mm_of_rdx
	movq	VMAMERGE_HO_VMA_MM(%rdx), %rax
.endm
.macro vmg_mm_of_rdi
	movq	VMAMERGE_HO_VMG_MM(%rdi), %rax
.endm

	.text
/* vma_modify_*(vmi, prev, vma, ...) */
VMAMERGE_TRAMP vma_modify_flags, vmamerge_test_vma_modify, vmamerge_entry_vma_modify_flags, vma_mm_of_rdx
VMAMERGE_TRAMP vma_modify_flags_name, vmamerge_test_vma_modify, vmamerge_entry_vma_modify_flags_name, vma_mm_of_rdx
VMAMERGE_TRAMP vma_modify_policy, vmamerge_test_vma_modify, vmamerge_entry_vma_modify_policy, vma_mm_of_rdx
VMAMERGE_TRAMP vma_modify_flags_uffd, vmamerge_test_vma_modify, vmamerge_entry_vma_modify_flags_uffd, vma_mm_of_rdx
/* vma_merge_new_range(vmg) */
VMAMERGE_TRAMP vma_merge_new_range, vmamerge_test_vma_merge_new_range, vmamerge_entry_vma_merge_new_range, vmg_mm_of_rdi
/* copy_vma(vmap, ...) */
VMAMERGE_TRAMP copy_vma, vmamerge_test_copy_vma, vmamerge_entry_copy_vma, vma_mm_of_ptr_rdi
