/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trampolines of the merge hooks on Debian's 6.1 (module/hooks.h,
 * module/hooks_tramp.S); the hooks themselves are listed in glue.c.
 */

/* 6.1 has no call depth tracking */
#define VMAMERGE_TRAMP_DEPTH_ACCOUNT
#include "hooks_tramp.S"

	.text
VMAMERGE_TRAMP vma_merge, vmamerge_test_vma_merge, vmamerge_entry_vma_merge
VMAMERGE_TRAMP copy_vma, vmamerge_test_copy_vma, vmamerge_entry_copy_vma
VMAMERGE_TRAMP do_mmap, vmamerge_test_do_mmap, vmamerge_entry_do_mmap
