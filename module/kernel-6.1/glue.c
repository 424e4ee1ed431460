// SPDX-License-Identifier: GPL-2.0
/*
 * Glue for Debian's 6.1 kernel (6.1.192-2): the functions the livepatch
 * replaces on this build.
 *
 *  - vma_merge(): the one merge decision of every in-place path
 *    (mprotect, madvise, mlock, mbind, userfaultfd), of copy_vma() for
 *    mremap moves and of mremap's in-place expansion
 *    (kernel-6.1/vma_merge.c);
 *  - uprobe_dup_mmap(): called by dup_mmap() on every fork with both mms
 *    write-locked - where the opt-in is inherited.
 */
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/mm_types.h>
#include <linux/sched/coredump.h>

#include "vmamerge.h"
#include "mirrors.h"

static_assert(!(MMF_INIT_MASK & (BIT_ULL(VMAMERGE_MMF_OPTED_IN) |
				 BIT_ULL(VMAMERGE_MMF_EXEC_KEEP))));

/*
 * Replaces uprobe_dup_mmap() of kernel/events/uprobes.c:1578: the stock
 * body, then our inheritance.
 */
static void vmamerge_uprobe_dup_mmap(struct mm_struct *oldmm,
				     struct mm_struct *newmm)
{
	if (test_bit(MMF_HAS_UPROBES, &oldmm->flags)) {
		set_bit(MMF_HAS_UPROBES, &newmm->flags);
		/* dup_mmap() skips VM_DONTCOPY vmas: recount the probes */
		set_bit(MMF_RECALC_UPROBES, &newmm->flags);
	}
	vmamerge_mm_fork(oldmm, newmm);
}

struct klp_func vmamerge_glue_funcs[] = {
	{
		.old_name = "uprobe_dup_mmap",
		.new_func = vmamerge_uprobe_dup_mmap,
	},
	{
		.old_name = "vma_merge",
		.new_func = vmamerge_vma_merge,
	},
	{ }
};
