// SPDX-License-Identifier: GPL-2.0
/*
 * vmamerge: replacement for vma_merge_new_range() of Debian's 6.12.117
 * (mm/vma.c:924), the merge of a range that is about to be mapped with its
 * neighbours: mmap (__mmap_region()), brk (do_brk_flags()), the in-place
 * mremap expansion (vma_merge_extend()) and the destination of an mremap
 * move (copy_vma()).
 *
 * A livepatch replacement cannot call the function it replaces, so this is
 * a copy of the stock function and of the static helpers it uses: the
 * Debian build inlined is_mergeable_vma(), is_mergeable_anon_vma(),
 * are_anon_vmas_compatible(), can_vma_merge_before(), can_vma_merge_left()
 * and can_merge_remove_vma(), and left can_vma_merge_after() only as a
 * .constprop clone whose calling convention is GCC's private choice.
 * can_vma_merge_right() is out of line but copied too, so that all the
 * mergeability predicates are ours and read the same state.  The only
 * addition is the merge decision point for an active mm.
 */

#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/mempolicy.h>
#include <linux/mm_inline.h>
#include <linux/userfaultfd_k.h>
#include <linux/khugepaged.h>
#include "vmamerge.h"
#include "mirrors.h"

static_assert(__same_type(&vma_merge_new_range, &vmamerge_vma_merge_new_range));

/*
 * Mirrors is_mergeable_vma(), mm/vma.c:10: may the range merge with the
 * neighbour on the given side as far as attributes go?
 */
static inline bool vmamerge_612_is_mergeable_vma(struct vma_merge_struct *vmg,
						 bool merge_next)
{
	struct vm_area_struct *vma = merge_next ? vmg->next : vmg->prev;

	if (!mpol_equal(vmg->policy, vma_policy(vma)))
		return false;
	/*
	 * VM_SOFTDIRTY must not prevent a merge: the caller marks the merged
	 * VMA soft-dirty.
	 */
	if ((vma->vm_flags ^ vmg->flags) & ~VM_SOFTDIRTY)
		return false;
	if (vma->vm_file != vmg->file)
		return false;
	if (!is_mergeable_vm_userfaultfd_ctx(vma, vmg->uffd_ctx))
		return false;
	if (!anon_vma_name_eq(anon_vma_name(vma), vmg->anon_name))
		return false;
	return true;
}

/*
 * Mirrors is_mergeable_anon_vma(), mm/vma.c:35: equal anon_vmas, or one of
 * them not yet assigned provided @vma (if given) has a single anon_vma_chain
 * entry, i.e. was not cloned from a fork parent (the stock code keeps those
 * apart for the scalability of the anon_vma lock).
 */
static inline bool vmamerge_612_is_mergeable_anon_vma(struct anon_vma *anon_vma1,
						      struct anon_vma *anon_vma2,
						      struct vm_area_struct *vma)
{
	if ((!anon_vma1 || !anon_vma2) &&
	    (!vma || list_is_singular(&vma->anon_vma_chain)))
		return true;
	return anon_vma1 == anon_vma2;
}

/* Mirrors are_anon_vmas_compatible(), mm/vma.c:49. */
static inline bool vmamerge_612_are_anon_vmas_compatible(struct vm_area_struct *vma1,
							 struct vm_area_struct *vma2)
{
	return vmamerge_612_is_mergeable_anon_vma(vma1->anon_vma,
						  vma2->anon_vma, NULL);
}

/*
 * Mirrors can_vma_merge_before(), mm/vma.c:97: may the range go in front of
 * vmg->next (attributes, anon_vma, and file offsets that continue)?
 */
static bool vmamerge_612_can_vma_merge_before(struct vma_merge_struct *vmg)
{
	pgoff_t pglen = PHYS_PFN(vmg->end - vmg->start);

	if (vmamerge_612_is_mergeable_vma(vmg, /* merge_next = */ true) &&
	    vmamerge_612_is_mergeable_anon_vma(vmg->anon_vma,
					       vmg->next->anon_vma, vmg->next)) {
		if (vmg->next->vm_pgoff == vmg->pgoff + pglen)
			return true;
	}
	return false;
}

/*
 * Mirrors can_vma_merge_after(), mm/vma.c:119: may the range go behind
 * vmg->prev?
 */
static bool vmamerge_612_can_vma_merge_after(struct vma_merge_struct *vmg)
{
	if (vmamerge_612_is_mergeable_vma(vmg, /* merge_next = */ false) &&
	    vmamerge_612_is_mergeable_anon_vma(vmg->anon_vma,
					       vmg->prev->anon_vma, vmg->prev)) {
		if (vmg->prev->vm_pgoff + vma_pages(vmg->prev) == vmg->pgoff)
			return true;
	}
	return false;
}

/* Mirrors can_vma_merge_left(), mm/vma.c:292: prev adjacent and mergeable. */
static bool vmamerge_612_can_vma_merge_left(struct vma_merge_struct *vmg)
{
	return vmg->prev && vmg->prev->vm_end == vmg->start &&
		vmamerge_612_can_vma_merge_after(vmg);
}

/*
 * Mirrors can_vma_merge_right(), mm/vma.c:306: next adjacent and mergeable;
 * when prev merges too, prev's and next's anon_vmas must also be compatible
 * with each other, as both end up in one VMA.
 */
static bool vmamerge_612_can_vma_merge_right(struct vma_merge_struct *vmg,
					     bool can_merge_left)
{
	if (!vmg->next || vmg->end != vmg->next->vm_start ||
	    !vmamerge_612_can_vma_merge_before(vmg))
		return false;

	if (!can_merge_left)
		return true;

	return vmamerge_612_are_anon_vmas_compatible(vmg->prev, vmg->next);
}

/* Mirrors can_merge_remove_vma(), mm/vma.c:636: no ->close hook. */
static inline bool vmamerge_612_can_merge_remove_vma(struct vm_area_struct *vma)
{
	return !vma->vm_ops || !vma->vm_ops->close;
}

/*
 * vmamerge_new_range_prepare - consult the decision point for a new range.
 * .vma is NULL: nothing is mapped in [start, end) yet.  prev and next are
 * the caller's neighbours (not necessarily adjacent).
 */
static void vmamerge_new_range_prepare(struct vmamerge_merge *m,
				       struct vma_merge_struct *vmg,
				       enum vmamerge_path path)
{
	*m = (struct vmamerge_merge) {
		.mm = vmg->mm,
		.path = path,
		.prev = vmg->prev,
		.vma = NULL,
		.next = vmg->next,
		.start = vmg->start,
		.end = vmg->end,
		.pgoff = vmg->pgoff,
		.anon_vma = vmg->anon_vma,
		.flags = vmg->flags,
		.file = vmg->file,
		.policy = vmg->policy,
		.uffd_ctx = vmg->uffd_ctx,
		.anon_name = vmg->anon_name,
		.no_right = vmg->merge_flags & VMG_FLAG_JUST_EXPAND,
	};
	vmamerge_merge_prepare(m);
	/* The decision point may have re-homed the range (mirrors.h). */
	vmg->anon_vma = m->anon_vma;
	vmg->pgoff = m->pgoff;
}

/*
 * vmamerge_612_merge_new_range - mirrors vma_merge_new_range(), mm/vma.c:924.
 * @vmg: the range [start, end) about to be mapped, its attributes, and the
 *       caller's prev and next; vmg->vmi positioned at or before the gap.
 * @path: the caller, for the decision point.
 *
 * Expands prev and/or next over the range if their attributes, anon_vmas
 * and offsets allow; removes next when both merge.  Returns the expanded
 * VMA, or NULL with vmg->start/end/pgoff/vma restored (unless
 * VMG_FLAG_JUST_EXPAND).  mmap_lock must be held for writing.
 */
struct vm_area_struct *
vmamerge_612_merge_new_range(struct vma_merge_struct *vmg,
			     enum vmamerge_path path)
{
	struct vm_area_struct *prev = vmg->prev;
	struct vm_area_struct *next = vmg->next;
	unsigned long start = vmg->start;
	unsigned long end = vmg->end;
	pgoff_t pgoff = vmg->pgoff;
	pgoff_t pglen = PHYS_PFN(end - start);
	bool can_merge_left, can_merge_right;
	bool just_expand = vmg->merge_flags & VMG_FLAG_JUST_EXPAND;
	struct vmamerge_merge m;
	bool active;

	mmap_assert_write_locked(vmg->mm);
	VM_WARN_ON(vmg->vma);
	/* vmi must point at or before the gap. */
	VM_WARN_ON(vmamerge_vma_iter_addr(vmg->vmi) > end);

	vmg->state = VMA_MERGE_NOMERGE;

	/* Special VMAs are unmergeable, also if no prev/next. */
	if ((vmg->flags & VM_SPECIAL) || (!prev && !next))
		return NULL;

	active = vmamerge_mm_active(vmg->mm);
	if (unlikely(active)) {
		vmamerge_new_range_prepare(&m, vmg, path);
		pgoff = vmg->pgoff;	/* what a failed merge restores */
	}

	can_merge_left = vmamerge_612_can_vma_merge_left(vmg);
	can_merge_right = !just_expand &&
		vmamerge_612_can_vma_merge_right(vmg, can_merge_left);

	/* If we can merge with the next VMA, adjust vmg accordingly. */
	if (can_merge_right) {
		vmg->end = next->vm_end;
		vmg->vma = next;
		vmg->pgoff = next->vm_pgoff - pglen;
	}

	/* If we can merge with the previous VMA, adjust vmg accordingly. */
	if (can_merge_left) {
		vmg->start = prev->vm_start;
		vmg->vma = prev;
		vmg->pgoff = prev->vm_pgoff;

		/*
		 * If this merge would remove next but next has a ->close hook,
		 * reduce the operation to merging prev and the range.
		 */
		if (can_merge_right && !vmamerge_612_can_merge_remove_vma(next))
			vmg->end = end;

		/* In expand-only case we are already positioned at prev. */
		if (!just_expand) {
			/* Equivalent to going to the previous range. */
			vma_prev(vmg->vmi);
		}
	}

	/*
	 * Now try to expand adjacent VMA(s); vma_expand() removes next when
	 * the range has VMAs to merge on both sides.
	 */
	if (vmg->vma && !vma_expand(vmg)) {
		khugepaged_enter_vma(vmg->vma, vmg->flags);
		vmg->state = VMA_MERGE_SUCCESS;
		if (unlikely(active))
			vmamerge_merge_done(&m, vmg->vma);
		return vmg->vma;
	}

	/* If expansion failed, reset state. Allows us to retry merge later. */
	if (!just_expand) {
		vmg->vma = NULL;
		vmg->start = start;
		vmg->end = end;
		vmg->pgoff = pgoff;
		/*
		 * As in the stock code, vmg->vma was just cleared, so the
		 * iterator is reset only when there is no prev.  Kept as is:
		 * we mirror this build, not what the code may have meant.
		 */
		if (vmg->vma == prev)
			vma_iter_set(vmg->vmi, start);
	}

	if (unlikely(active))
		vmamerge_merge_done(&m, NULL);
	return NULL;
}

/* The replacement of vma_merge_new_range(): every caller of the kernel's. */
struct vm_area_struct *
vmamerge_vma_merge_new_range(struct vma_merge_struct *vmg)
{
	return vmamerge_612_merge_new_range(vmg, VMAMERGE_PATH_NEW_RANGE);
}
