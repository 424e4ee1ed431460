// SPDX-License-Identifier: GPL-2.0
/*
 * Glue for Debian's 6.12 kernel (6.12.117-1~deb12u1): the functions the
 * livepatch replaces on this build.
 *
 *  - vma_modify_flags{,_name}(), vma_modify_policy(),
 *    vma_modify_flags_uffd(): small global wrappers through which every
 *    in-place path reaches the static vma_modify() (mprotect, mlock,
 *    mseal, madvise, mbind, userfaultfd) (kernel-6.12/vma_modify.c);
 *  - vma_merge_new_range(): mmap, brk, mremap expansion and the
 *    destination of mremap moves (kernel-6.12/vma_merge_new_range.c);
 *  - copy_vma(): the destination of an mremap() move, where the move's
 *    rewrite is decided before the merge attempt (kernel-6.12/copy_vma.c,
 *    the decision in module/move_merge.c);
 *  - uprobe_dup_mmap(): the fork hook where the opt-in is inherited
 *    (module/uprobe_dup_mmap.c, the same body on both builds).
 */
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/mm_types.h>

#include "vmamerge.h"
#include "mirrors.h"

struct klp_func vmamerge_glue_funcs[] = {
	{
		.old_name = "uprobe_dup_mmap",
		.new_func = vmamerge_uprobe_dup_mmap,
	},
	{
		.old_name = "vma_modify_flags",
		.new_func = vmamerge_vma_modify_flags,
	},
	{
		.old_name = "vma_modify_flags_name",
		.new_func = vmamerge_vma_modify_flags_name,
	},
	{
		.old_name = "vma_modify_policy",
		.new_func = vmamerge_vma_modify_policy,
	},
	{
		.old_name = "vma_modify_flags_uffd",
		.new_func = vmamerge_vma_modify_flags_uffd,
	},
	{
		.old_name = "vma_merge_new_range",
		.new_func = vmamerge_vma_merge_new_range,
	},
	{
		.old_name = "copy_vma",
		.new_func = vmamerge_copy_vma,
	},
	{ }
};
