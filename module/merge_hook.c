// SPDX-License-Identifier: GPL-2.0
/*
 * The merge decision point.
 *
 * Every glue calls vmamerge_merge_prepare() before the stock merge logic
 * of its kernel runs and vmamerge_merge_done() with the stock result, for
 * active mms only (vmamerge_mm_active()).  With the transplant feature,
 * prepare makes the anon_vmas of the VMAs that would merge agree where
 * that is safe (transplant_merge.c); the merge itself is always the stock
 * logic's decision.  done accounts and traces it by cause.
 */
#include <linux/kernel.h>
#include <linux/mm.h>

#include "vmamerge.h"
#include "hooks.h"
#include "page_rewrite.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/*
 * Had the range or a VMA next to it VM_SOFTDIRTY?  Read before the merge,
 * which may free the neighbours; adjacency is enough (a neighbour that
 * does not merge only makes the answer err on the soft-dirty side).
 */
static bool vmamerge_range_softdirty(const struct vmamerge_merge *m)
{
	unsigned long flags = m->flags;

	if (m->vma)
		flags |= m->vma->vm_flags;
	if (m->prev && m->prev->vm_end == m->start)
		flags |= m->prev->vm_flags;
	if (m->next && m->next->vm_start == m->end)
		flags |= m->next->vm_flags;
	return flags & VM_SOFTDIRTY;
}

/*
 * Does vmamerge_keep_softdirty() look at m->softdirty for this merge?  Only
 * for merges the stock kernel would not have made (see there); known once
 * the decision point has run.
 */
static bool vmamerge_merge_needs_softdirty(const struct vmamerge_merge *m)
{
	return m->rehomed || m->path == VMAMERGE_PATH_MREMAP_MOVE ||
	       m->path == VMAMERGE_PATH_MMAP || m->path == VMAMERGE_PATH_COMPACT;
}

void vmamerge_merge_prepare(struct vmamerge_merge *m)
{
	vmamerge_hook_test_hold();
	vmamerge_merge_count(m, VMAMERGE_C_MERGE_ATTEMPTS, 1);
	if (vmamerge_feature(VMAMERGE_FEATURE_TRANSPLANT |
			     VMAMERGE_FEATURE_RENUMBER))
		vmamerge_rehome_for_merge(m);
	/* rehoming changes no VM_SOFTDIRTY and frees no neighbour */
	m->softdirty = vmamerge_merge_needs_softdirty(m) &&
		       vmamerge_range_softdirty(m);
}

/*
 * Classify a stock merge by the anon_vma of the range that asked for it:
 * when the survivor carries the same non-NULL anon_vma the two sides
 * shared it, otherwise one side had none.
 */
static enum vmamerge_cause vmamerge_stock_cause(struct vmamerge_merge *m,
						struct vm_area_struct *merged)
{
	if (m->anon_vma && merged->anon_vma == m->anon_vma)
		return VMAMERGE_CAUSE_AV_SAME;
	return VMAMERGE_CAUSE_AV_NULL;
}

/*
 * Soft-dirty across a merge the stock kernel would not have made: one the
 * decision point rehomed a VMA for, or the merge of an mremap() move we
 * rewrote for (move_merge.c), on 6.1 after an mmap()
 * (vmamerge_after_mmap()), or of the compaction walk (compact.c).  The
 * survivor keeps its own flags, so a soft-dirty part merged into a VMA
 * cleared by clear_refs would read clean in pagemap: its holes and pages
 * without a soft-dirty PTE would be reported unchanged.  As the stock
 * mmap_region() does for the VMA a new range ends in ("new (or expanded)
 * vma always get soft dirty status"), the merged VMA is soft-dirty if any
 * part was; the other parts then read soft-dirty too, which errs on the
 * safe side.  The paths whose callers then set the range's flags on it
 * cannot lose a neighbour's state this way: transplant_merge.c refuses
 * those merges.  vm_page_prot does not change: soft-dirty tracking only
 * write-protects shared writable mappings (vma_wants_writenotify()), and
 * every VMA rehomed here is private.
 */
static void vmamerge_keep_softdirty(struct vmamerge_merge *m,
				    struct vm_area_struct *merged)
{
	if (m->softdirty && !(merged->vm_flags & VM_SOFTDIRTY))
		vmamerge_rg_vma_set_softdirty(merged);
}

void vmamerge_merge_done(struct vmamerge_merge *m,
			 struct vm_area_struct *merged)
{
	enum vmamerge_cause cause = VMAMERGE_CAUSE_NONE;

	if (merged)
		vmamerge_keep_softdirty(m, merged);
	if (!merged) {
		vmamerge_merge_count(m, VMAMERGE_C_MERGE_FAILED, 1);
		/* the VMA count may grow now: near the limit, compact */
		vmamerge_compact_maybe_queue(m->mm);
		/* the decision point expected a merge: should stay 0 */
		if (m->rehomed)
			vmamerge_merge_count(m, VMAMERGE_C_REHOMED_UNMERGED, 1);
	} else if (m->rehomed & VMAMERGE_REHOMED_RENUMBER) {
		cause = m->rehomed == VMAMERGE_REHOMED_RENUMBER ?
			VMAMERGE_CAUSE_RENUMBER : VMAMERGE_CAUSE_BOTH;
		vmamerge_merge_count(m, cause == VMAMERGE_CAUSE_RENUMBER ?
				     VMAMERGE_C_MERGE_RENUMBER :
				     VMAMERGE_C_MERGE_BOTH, 1);
	} else if (m->rehomed & VMAMERGE_REHOMED_TRANSPLANT) {
		cause = VMAMERGE_CAUSE_TRANSPLANT;
		vmamerge_merge_count(m, VMAMERGE_C_MERGE_TRANSPLANT, 1);
	} else if (m->rehomed) {
		cause = VMAMERGE_CAUSE_ADOPT;
		vmamerge_merge_count(m, VMAMERGE_C_MERGE_ADOPT, 1);
	} else {
		cause = vmamerge_stock_cause(m, merged);
		vmamerge_merge_count(m, cause == VMAMERGE_CAUSE_AV_SAME ?
				     VMAMERGE_C_AV_MERGE_SAME :
				     VMAMERGE_C_AV_MERGE_NULL, 1);
	}
	trace_vmamerge_merge(m->mm, m->path, m->start, m->end, m->pgoff,
			     cause, merged != NULL);
}
