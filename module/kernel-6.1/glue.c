// SPDX-License-Identifier: GPL-2.0
/*
 * Glue for Debian's 6.1 kernel (6.1.192-2): the functions the livepatch
 * replaces on this build.
 *
 *  - vma_merge(): the one merge decision of every in-place path
 *    (mprotect, madvise, mlock, mbind, userfaultfd), of copy_vma() for
 *    mremap moves and of mremap's in-place expansion
 *    (kernel-6.1/vma_merge.c);
 *  - do_mmap(): for the merge of a new anonymous mapping that fills a
 *    gap, which 6.1's mmap_region() makes without vma_merge()
 *    (kernel-6.1/do_mmap.c);
 *  - copy_vma(): the destination of an mremap() move, where the move's
 *    rewrite is decided before the merge attempt (kernel-6.1/copy_vma.c,
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
		.old_name = "vma_merge",
		.new_func = vmamerge_vma_merge,
	},
	{
		.old_name = "copy_vma",
		.new_func = vmamerge_copy_vma,
	},
	{
		.old_name = "do_mmap",
		.new_func = vmamerge_61_do_mmap,
	},
	{ }
};
