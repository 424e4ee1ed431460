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
 * Replaces uprobe_dup_mmap() of kernel/events/uprobes.c:1641: the stock
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
	{ }
};
