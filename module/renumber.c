// SPDX-License-Identifier: GPL-2.0
/*
 * Renumbering: give a private anonymous VMA the page offset a fresh
 * mmap() at its address would have (vm_pgoff == vm_start >> PAGE_SHIFT)
 * and every page it maps the matching index, so that it can merge with
 * neighbours whose offsets are linear too (thesis §2.7).  The kernel does
 * the same for a VMA without pages when mremap() moves it (copy_vma());
 * we extend it to faulted VMAs whose pages are all exclusive.
 *
 * After an mremap() move (mremap_syscall.c) the destination VMA is
 * renumbered and then offered to the stock merge logic, exactly as an
 * mprotect() that changes nothing would offer it.
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/rmap.h>

#include "vmamerge.h"
#include "page_rewrite.h"
#include "trace.h"

/*
 * Re-key the VMA's entries in the anon_vma interval trees it belongs to:
 * rmap finds a VMA by pgoff, so the pgoff may only change while it is out
 * of every tree.  All of them hang off the same root, whose rwsem the
 * caller holds for writing (what vma_adjust/vma_prepare do for a change
 * of vm_pgoff).
 */
static void vmamerge_vma_set_pgoff(struct vm_area_struct *vma, pgoff_t pgoff)
{
	struct anon_vma_chain *avc;

	list_for_each_entry(avc, &vma->anon_vma_chain, same_vma)
		anon_vma_interval_tree_remove(avc, &avc->anon_vma->rb_root);
	vma->vm_pgoff = pgoff;
	list_for_each_entry(avc, &vma->anon_vma_chain, same_vma)
		anon_vma_interval_tree_insert(avc, &avc->anon_vma->rb_root);
}

/* Renumbering collects under the root anon_vma's rwsem. */
static enum vmamerge_refusal vmamerge_renumber_lock(struct vmamerge_rewrite *rw)
{
	anon_vma_lock_write(rw->vma->anon_vma);
	return VMAMERGE_R_NONE;
}

static void vmamerge_renumber_unlock(struct vmamerge_rewrite *rw)
{
	anon_vma_unlock_write(rw->vma->anon_vma);
}

/*
 * vmamerge_renumber_vma - make @vma's pgoff linear, rewriting its pages'
 * indexes.  @vma passed vmamerge_vma_rewritable(): no file tree to re-key.
 * mmap_lock held for writing.  Returns the refusal, or
 * VMAMERGE_R_NONE with the number of rewritten pages in *@pages.
 */
static enum vmamerge_refusal vmamerge_renumber_vma(struct vm_area_struct *vma,
						   unsigned long *pages)
{
	pgoff_t old = vma->vm_pgoff, new = vma->vm_start >> PAGE_SHIFT;
	struct vmamerge_rewrite rw;
	enum vmamerge_refusal r;

	*pages = 0;
	/* no fault under the per-VMA lock from here on (6.12) */
	vmamerge_rg_vma_start_write(vma);
	if (!vma->anon_vma) {
		/* never faulted: no page has an index (copy_vma() does this) */
		vma->vm_pgoff = new;
		return VMAMERGE_R_NONE;
	}
	r = vmamerge_rewrite_init(&rw, vma);
	if (!r)
		r = vmamerge_rewrite_collect_locked(&rw,
						    vmamerge_renumber_lock,
						    vmamerge_renumber_unlock);
	if (!r) {
		vmamerge_vma_set_pgoff(vma, new);
		vmamerge_rewrite_commit_index(&rw, (long)(new - old));
		vmamerge_renumber_unlock(&rw);
		*pages = rw.nr_pages;
	}
	vmamerge_rewrite_free(&rw);
	return r;
}

static void vmamerge_refused(struct mm_struct *mm, struct vm_area_struct *vma,
			     enum vmamerge_refusal r)
{
	vmamerge_count(mm, vmamerge_refusal_counter(r), 1);
	trace_vmamerge_refuse(mm, VMAMERGE_PATH_MREMAP_MOVE, vma->vm_start,
			      vma->vm_end, r);
}

/*
 * The merge that follows a move, through the decision point, which
 * transplants where the feature allows; counted by what made it possible
 * (the decision point leaves the cause of this path to us).
 */
static void vmamerge_merge_moved(struct mm_struct *mm,
				 struct vm_area_struct *vma, bool renumbered)
{
	unsigned int rehomed = 0;

	/* @vma may be freed by the merge: only the result is used */
	if (!vmamerge_rg_merge_in_place(vma, VMAMERGE_PATH_MREMAP_MOVE,
					&rehomed))
		return;
	if (renumbered)
		vmamerge_count(mm, rehomed ? VMAMERGE_C_MERGE_BOTH :
			       VMAMERGE_C_MERGE_RENUMBER, 1);
	else if (rehomed & VMAMERGE_REHOMED_TRANSPLANT)
		vmamerge_count(mm, VMAMERGE_C_MERGE_TRANSPLANT, 1);
	else if (rehomed)
		vmamerge_count(mm, VMAMERGE_C_MERGE_ADOPT, 1);
}

/*
 * The VMA mremap() left at @new_addr: renumber it (if its pgoff is not
 * linear already) and offer it to the merge logic, which with the
 * transplant feature also joins neighbours with another anon_vma
 * (transplant_merge.c).  Only a VMA the module touches at all
 * (vmamerge_vma_rewritable(): not a private /dev/zero mapping, for one);
 * another keeps the stock result, counted as refused_special where it
 * would have needed a renumber.  mmap_lock held for writing.
 */
static void vmamerge_renumber_moved(struct mm_struct *mm,
				    struct vm_area_struct *vma)
{
	unsigned long start = vma->vm_start, end = vma->vm_end;
	pgoff_t old = vma->vm_pgoff;
	enum vmamerge_refusal r;
	unsigned long pages;

	if (!vmamerge_vma_rewritable(vma)) {
		if (old != start >> PAGE_SHIFT)
			vmamerge_refused(mm, vma, VMAMERGE_R_SPECIAL);
		return;
	}
	if (old == start >> PAGE_SHIFT) {
		/* copy_vma() merged whatever the stock rules allow */
		if (vmamerge_feature(VMAMERGE_FEATURE_TRANSPLANT))
			vmamerge_merge_moved(mm, vma, false);
		return;
	}
	r = vmamerge_renumber_vma(vma, &pages);
	if (r) {
		vmamerge_refused(mm, vma, r);
		return;
	}
	vmamerge_count(mm, VMAMERGE_C_VMAS_RENUMBERED, 1);
	vmamerge_count(mm, VMAMERGE_C_PAGES_RENUMBERED, pages);
	trace_vmamerge_rewrite(mm, start, end, old, vma->vm_pgoff, false,
			       pages);
	vmamerge_merge_moved(mm, vma, true);
}

void vmamerge_after_mremap_move(struct mm_struct *mm, unsigned long new_addr)
{
	struct vm_area_struct *vma;
	u64 t0 = ktime_get_ns();

	if (mmap_write_lock_killable(mm))
		return;
	/*
	 * The lock was dropped since the move: whatever is at @new_addr now
	 * is checked from scratch, as any VMA would be.
	 */
	vma = vma_lookup(mm, new_addr);
	if (vma)
		vmamerge_renumber_moved(mm, vma);
	mmap_write_unlock(mm);
	vmamerge_count(mm, VMAMERGE_C_TIME_NS, ktime_get_ns() - t0);
}
