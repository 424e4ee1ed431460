// SPDX-License-Identifier: GPL-2.0
/*
 * The replacement of uprobe_dup_mmap(), the fork hook.
 *
 * dup_mmap() calls uprobe_dup_mmap(oldmm, mm) on every fork with oldmm
 * write-locked (mm is not locked yet; nobody else sees it); the
 * replacement does the stock work and then copies the opt-in (optin.c),
 * which must not end in a tail call (see vmamerge_mm_fork()).  The stock body is the same in both supported builds
 * (kernel/events/uprobes.c: 6.1.192-3 line 1578, 6.12.117-1~deb12u1 line
 * 1641), so it is written once; a build whose body differs needs its own
 * copy in its glue.
 */
#include <linux/kernel.h>
#include <linux/mm_types.h>
#include <linux/sched/coredump.h>

#include "vmamerge.h"

/* Our bits must not be among those mm_init() copies by itself. */
static_assert(!(MMF_INIT_MASK & (BIT_ULL(VMAMERGE_MMF_OPTED_IN) |
				 BIT_ULL(VMAMERGE_MMF_EXEC_KEEP) |
				 BIT_ULL(VMAMERGE_MMF_EXEC_ONCE) |
				 BIT_ULL(VMAMERGE_MMF_COUNTERS))));

void vmamerge_uprobe_dup_mmap(struct mm_struct *oldmm,
			      struct mm_struct *newmm)
{
	if (test_bit(MMF_HAS_UPROBES, &oldmm->flags)) {
		set_bit(MMF_HAS_UPROBES, &newmm->flags);
		/* dup_mmap() skips VM_DONTCOPY vmas: recount the probes */
		set_bit(MMF_RECALC_UPROBES, &newmm->flags);
	}
	vmamerge_mm_fork(oldmm, newmm);
}
