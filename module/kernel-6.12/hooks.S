/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trampolines of the merge hooks on Debian's 6.12 (module/hooks.h,
 * module/hooks_tramp.S); the hooks themselves are listed in glue.c.
 */
#include <asm/nospec-branch.h>

/* call depth tracking (retbleed=stuff): as samples/ftrace/ftrace-direct.c */
#define VMAMERGE_TRAMP_DEPTH_ACCOUNT	CALL_DEPTH_ACCOUNT
#include "hooks_tramp.S"

	.text
VMAMERGE_TRAMP vma_modify_flags, vmamerge_test_vma_modify, vmamerge_entry_vma_modify_flags
VMAMERGE_TRAMP vma_modify_flags_name, vmamerge_test_vma_modify, vmamerge_entry_vma_modify_flags_name
VMAMERGE_TRAMP vma_modify_policy, vmamerge_test_vma_modify, vmamerge_entry_vma_modify_policy
VMAMERGE_TRAMP vma_modify_flags_uffd, vmamerge_test_vma_modify, vmamerge_entry_vma_modify_flags_uffd
VMAMERGE_TRAMP vma_merge_new_range, vmamerge_test_vma_merge_new_range, vmamerge_entry_vma_merge_new_range
VMAMERGE_TRAMP copy_vma, vmamerge_test_copy_vma, vmamerge_entry_copy_vma
