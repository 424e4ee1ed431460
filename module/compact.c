// SPDX-License-Identifier: GPL-2.0
/*
 * Compaction on demand (VMAMERGE_IOC_COMPACT, issue 14): one walk over a
 * process's address space that offers every private anonymous VMA whose
 * predecessor it touches to the merge logic, as an mprotect() that
 * changes nothing would (vmamerge_rg_merge_in_place(), path
 * VMAMERGE_PATH_COMPACT).  The decision point then does what it does for
 * every merge: makes offsets and anon_vmas agree by rewriting the cheaper
 * side where that is provably safe, refuses and counts otherwise, and the
 * stock logic merges.  Nothing here decides a merge.
 *
 * mmap_lock is taken for writing - the merge paths need it - in slices:
 * it is dropped and taken again between two VMAs once a slice has held it
 * for VMAMERGE_COMPACT_SLICE_NS, so the target's threads can fault and
 * map meanwhile.  One merge is not interrupted; its rewrite is bounded by
 * rewrite_max_pages.  The walk goes on from the end of the last VMA it
 * looked at, re-looked up after each retake: whatever changed meanwhile
 * is simply what the walk finds.
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "vmamerge.h"
#include "page_rewrite.h"

/*
 * Is @vma worth offering?  A VMA the module may rewrite, right behind one
 * it may rewrite with the same flags (but VM_SOFTDIRTY).  The decision
 * point checks everything else; this only keeps the walk from making a
 * merge attempt - counted in merge_attempts - for every VMA of the mm.
 * Merging to the right is covered when the next VMA is offered.
 */
static bool vmamerge_compact_candidate(struct vm_area_struct *prev,
				       struct vm_area_struct *vma)
{
	return prev && prev->vm_end == vma->vm_start &&
	       vmamerge_vma_rewritable(prev) && vmamerge_vma_rewritable(vma) &&
	       !((prev->vm_flags ^ vma->vm_flags) & ~VM_SOFTDIRTY);
}

/*
 * One slice: offer the VMAs from *@addr on until the slice is used up.
 * Returns true when the walk reached the end.  mmap_lock held for writing.
 */
static bool vmamerge_compact_slice(struct mm_struct *mm, unsigned long *addr,
				   struct vmamerge_compact *c, u64 t0)
{
	struct vm_area_struct *vma, *prev, *merged;

	vma = find_vma_prev(mm, *addr, &prev);
	while (vma) {
		if (vmamerge_compact_candidate(prev, vma)) {
			c->vmas_offered++;
			merged = vmamerge_rg_merge_in_place(vma,
							    VMAMERGE_PATH_COMPACT,
							    NULL);
			if (merged) {
				c->merges++;
				vma = merged;
			}
		}
		*addr = vma->vm_end;
		if (ktime_get_ns() - t0 >= VMAMERGE_COMPACT_SLICE_NS)
			return false;
		prev = vma;
		vma = find_vma(mm, *addr);
	}
	return true;
}

/*
 * vmamerge_compact_mm - the walk, for an active @mm the caller holds an
 * mm_users reference to.  Fills the out fields of @c but the counters.
 * Returns 0, -EOPNOTSUPP (not opted in, or mode never) or -EINTR.
 */
int vmamerge_compact_mm(struct mm_struct *mm, struct vmamerge_compact *c)
{
	unsigned long addr = 0;
	bool done = false;
	u64 t0, held;

	while (!done) {
		if (mmap_write_lock_killable(mm))
			return -EINTR;
		t0 = ktime_get_ns();
		/* checked under the lock: the walk stops when it opts out */
		if (!vmamerge_mm_opted_in(mm) || !vmamerge_mm_active(mm)) {
			mmap_write_unlock(mm);
			return -EOPNOTSUPP;
		}
		if (!c->lock_slices)
			c->vmas_before = mm->map_count;
		done = vmamerge_compact_slice(mm, &addr, c, t0);
		if (done)
			c->vmas_after = mm->map_count;
		held = ktime_get_ns() - t0;
		mmap_write_unlock(mm);
		c->lock_slices++;
		c->max_hold_ns = max(c->max_hold_ns, held);
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}
