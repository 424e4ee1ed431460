// SPDX-License-Identifier: GPL-2.0
/*
 * Renumbering: give a private anonymous VMA another page offset and every
 * page it maps the matching index, in place, so that it continues the
 * numbering of a neighbour it is about to merge with (thesis §2.7).  The
 * kernel does the same for a VMA without pages when mremap() moves it
 * (copy_vma()); we extend it to faulted VMAs whose pages are all
 * exclusive.  Who is renumbered, and to what, is decided by the move
 * (move_merge.c).
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/rmap.h>

#include "vmamerge.h"
#include "page_rewrite.h"

/*
 * Re-key the VMA's entries in the anon_vma interval trees it belongs to:
 * rmap finds a VMA by pgoff, so the pgoff may only change while it is out
 * of every tree.  All of them hang off the same root, whose rwsem the
 * caller holds for writing (what vma_adjust/vma_prepare do for a change
 * of vm_pgoff).
 *
 * vm_pgoff's readers: rmap walks (the interval trees, vma_address())
 * under the anon_vma lock - excluded by the root's rwsem; page faults
 * (linear_page_index()), /proc/PID/maps and smaps, GUP and every other
 * user of this mm's VMAs under mmap_lock or, on 6.12, the per-VMA lock -
 * excluded by mmap_lock held for writing and the VMA write-locked
 * (vmamerge_rg_vma_start_write()).  No reader goes without one of them on
 * these builds (6.12's maps files take mmap_lock).
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
 * vmamerge_renumber_vma - give @vma the page offset @pgoff, rewriting its
 * pages' indexes.  @vma passed vmamerge_vma_rewritable(): no file tree to
 * re-key.  mmap_lock held for writing.  Returns the refusal, or
 * VMAMERGE_R_NONE with the number of rewritten pages in *@pages.
 */
enum vmamerge_refusal vmamerge_renumber_vma(struct vm_area_struct *vma,
					    pgoff_t pgoff,
					    unsigned long *pages)
{
	pgoff_t old = vma->vm_pgoff;
	struct vmamerge_rewrite rw;
	enum vmamerge_refusal r;

	*pages = 0;
	/* no fault under the per-VMA lock from here on (6.12) */
	vmamerge_rg_vma_start_write(vma);
	if (!vma->anon_vma) {
		/* never faulted: no page has an index (copy_vma() does this) */
		vma->vm_pgoff = pgoff;
		return VMAMERGE_R_NONE;
	}
	r = vmamerge_rewrite_init(&rw, vma);
	if (!r) {
		vmamerge_rewrite_target(&rw, (long)(pgoff - old), NULL);
		r = vmamerge_rewrite_collect_locked(&rw,
						    vmamerge_renumber_lock,
						    vmamerge_renumber_unlock);
	}
	if (!r) {
		vmamerge_vma_set_pgoff(vma, pgoff);
		vmamerge_rewrite_commit(&rw);
		vmamerge_renumber_unlock(&rw);
		*pages = rw.nr_pages;
	}
	vmamerge_rewrite_free(&rw);
	return r;
}
