// SPDX-License-Identifier: GPL-2.0
/*
 * Transplanting at the merge decision point: the in-place merge paths
 * (mprotect, madvise, anon names, mlock, mbind, userfaultfd, mmap of a gap,
 * the in-place mremap expansion; thesis §2.8).
 *
 * The stock logic merges a range [start, end) with the attributes in
 * struct vmamerge_merge into the VMA before it (left) and/or the one after
 * it (right) when attributes and file offsets continue and the anon_vmas
 * are compatible.  Before it runs, this file makes the anon_vmas of the
 * VMAs that would merge one and the same wherever the rest already allows
 * the merge:
 *  - a faulted VMA with another anon_vma is transplanted into the common
 *    one (transplant.c), when both families are unforked and its pages
 *    unshared;
 *  - an anonymous VMA that never had an anon_vma adopts the common one.
 *    The stock check refuses that merge when the VMA without anon_vma is
 *    the neighbour: is_mergeable_anon_vma() looks for a chain of one entry
 *    on the neighbour, whose chain is empty (upstream corrected this in
 *    6.14, "mm: fix incorrectly disallowed anonymous VMA merges").  No
 *    page moves.
 * Then the stock logic decides, unchanged, with the new anon_vmas.  A step
 * that is refused drops that side; the other side may still merge, which
 * is the thesis's §3.3.3 rule (with a shared side, merge only in the
 * direction that moves no shared page).
 *
 * Which VMA joins which anon_vma:
 *  - an existing range (@m->vma: mprotect & co.): the range's VMA joins the
 *    left neighbour's anon_vma, then the right neighbour joins the range's;
 *    without a left merge, the range's VMA joins the right's (or, refused,
 *    the right joins the range's);
 *  - a new range (mmap of a gap, the mremap expansion): it has no pages;
 *    the right neighbour joins the anon_vma of the range (the expansion) or
 *    of the left neighbour (mmap).  A new range that brings an anon_vma
 *    other than its left neighbour's (copy_vma() of an mremap move) is left
 *    to the stock logic; a move that needs more was rewritten before its
 *    merge attempt (move_merge.c, path VMAMERGE_PATH_MREMAP_MOVE, which
 *    this file leaves alone).
 *
 * Page offsets (the renumber feature): an existing range whose neighbour
 * would merge but for the offset as well - the thesis's §3.3.1, a page
 * moved with another protection and given the common one later - goes to
 * the move's decision instead (vmamerge_rehome_in_place(), move_merge.c):
 * the same O(1) choice of the side that rewrites the fewest pages, the
 * whole of the range's VMA being one side, offsets and anon_vmas in one
 * pass.  Neither a new range (its offset is the caller's) nor 6.1's
 * post-mmap() offer is renumbered; see vmamerge_may_renumber().
 *
 * mmap_lock is held for writing throughout; each VMA whose anon_vma or
 * offset changes is write-locked first (6.12 per-VMA locks).
 */
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/mempolicy.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/userfaultfd_k.h>

#include "vmamerge.h"
#include "page_rewrite.h"
#include "trace.h"

/*
 * May @vma merge with a range of @m's attributes as far as everything but
 * the anon_vma and the offsets goes?  The stock is_mergeable_vma() and
 * policy tests of both series, for a @vma the module may touch
 * (vmamerge_vma_rewritable(): no file, no vm_ops); the range then has the
 * same file (none) and flags, so it qualifies as well.
 */
bool vmamerge_attrs_match(const struct vmamerge_merge *m,
			  struct vm_area_struct *vma)
{
	return vmamerge_vma_rewritable(vma) && !m->file &&
	       !((vma->vm_flags ^ m->flags) & ~VM_SOFTDIRTY) &&
	       mpol_equal(m->policy, vma_policy(vma)) &&
	       is_mergeable_vm_userfaultfd_ctx(vma, m->uffd_ctx) &&
	       anon_vma_name_eq(anon_vma_name(vma), m->anon_name);
}

/* @vma: the VMA refused (for a transplant, the mover) */
static void vmamerge_tm_refused(struct vmamerge_merge *m,
				struct vm_area_struct *vma,
				enum vmamerge_refusal r)
{
	if (r == VMAMERGE_R_FAMILY)
		r = vmamerge_family_refusal(vma);
	vmamerge_merge_count(m, vmamerge_refusal_counter(r), 1);
	trace_vmamerge_refuse(m->mm, m->path, vma->vm_start, vma->vm_end, r);
}

/*
 * Would the stock logic accept anon_vma @av for a range next to @nb?  Its
 * is_mergeable_anon_vma() with @nb as the VMA whose chain is looked at.
 */
static bool vmamerge_stock_anon_ok(struct anon_vma *av,
				   struct vm_area_struct *nb)
{
	if ((!av || !nb->anon_vma) && list_is_singular(&nb->anon_vma_chain))
		return true;
	return av == nb->anon_vma;
}

/*
 * Does the caller give the merged VMA the range's new flags after the
 * merge?  For an existing range, mprotect, madvise (and anon names), mlock
 * and userfaultfd do; on 6.1 they merge through vma_merge(), which also
 * serves mbind (keeps the survivor's flags: counted in, to be safe).  A
 * new range (mmap, brk: marked soft-dirty after the merge; the mremap
 * expansion, copy_vma()) and our own paths keep the survivor's flags.
 */
static bool vmamerge_sets_range_flags(const struct vmamerge_merge *m)
{
	return m->vma && (m->path == VMAMERGE_PATH_MODIFY ||
			  m->path == VMAMERGE_PATH_MODIFY_NAME ||
			  m->path == VMAMERGE_PATH_MODIFY_UFFD ||
			  m->path == VMAMERGE_PATH_VMA_MERGE);
}

/* Does @nb's numbering continue the range's? */
static bool vmamerge_pgoff_continues(const struct vmamerge_merge *m,
				     const struct vm_area_struct *nb)
{
	return nb->vm_pgoff - PHYS_PFN(nb->vm_start) ==
	       m->pgoff - PHYS_PFN(m->start);
}

/*
 * A neighbour @nb that would merge with the range of @m but for its
 * anon_vma (or page offset): is it still a candidate for a rewrite?  Not if
 * the merge would lose its soft-dirty state.  pagemap reports a page
 * soft-dirty when its PTE is or its VMA has VM_SOFTDIRTY - the only record
 * for a page without a PTE - and clear_refs clears both; a merge keeps
 * one VMA's flags (is_mergeable_vma() ignores VM_SOFTDIRTY).  Where the
 * merged VMA gets the range's new flags (vmamerge_sets_range_flags()), a
 * range without VM_SOFTDIRTY would make @nb's pages read clean: refused,
 * the stock behaviour (no merge), counted.  Everywhere else
 * vmamerge_merge_done() marks the merged VMA soft-dirty if any of its
 * parts was.  A neighbour the stock logic merges anyway is left to it.
 */
static bool vmamerge_candidate(struct vmamerge_merge *m,
			       struct vm_area_struct *nb)
{
	bool anon_ok;

	if (!vmamerge_attrs_match(m, nb))
		return false;
	anon_ok = vmamerge_stock_anon_ok(m->anon_vma, nb);
	/* an anon_vma change the features leave out: nothing to refuse */
	if (!anon_ok && !vmamerge_feature(VMAMERGE_FEATURE_TRANSPLANT))
		return false;
	if (!vmamerge_sets_range_flags(m) ||
	    !(nb->vm_flags & VM_SOFTDIRTY) || (m->flags & VM_SOFTDIRTY) ||
	    (anon_ok && vmamerge_pgoff_continues(m, nb)))
		return true;
	vmamerge_tm_refused(m, nb, VMAMERGE_R_SOFTDIRTY);
	return false;
}

/*
 * May the range's offsets change for this merge?  An existing range with
 * the renumber feature, on a path that changes attributes in place
 * (vmamerge_rehome_in_place() rewrites the cheaper side); not a new range
 * (its offset is the caller's), nor 6.1's post-mmap() offer
 * (VMAMERGE_PATH_MMAP: 6.12 merges a new mapping as a new range, and both
 * kernels should agree).
 */
static bool vmamerge_may_renumber(const struct vmamerge_merge *m)
{
	return m->vma && m->path != VMAMERGE_PATH_MMAP &&
	       vmamerge_feature(VMAMERGE_FEATURE_RENUMBER);
}

/*
 * The VMA before the range, if it would merge but for the anon_vma - and,
 * with @any_pgoff, the page offset.
 */
static struct vm_area_struct *vmamerge_left(struct vmamerge_merge *m,
					    bool any_pgoff)
{
	struct vm_area_struct *prev = m->prev;

	if (!prev || prev == m->vma || prev->vm_end != m->start ||
	    (!any_pgoff && prev->vm_pgoff + vma_pages(prev) != m->pgoff))
		return NULL;
	return vmamerge_candidate(m, prev) ? prev : NULL;
}

/*
 * The VMA after the range, likewise.  The stock logic looks right only
 * when an existing range ends where its VMA ends.
 */
static struct vm_area_struct *vmamerge_right(struct vmamerge_merge *m,
					     bool any_pgoff)
{
	struct vm_area_struct *next = m->next;

	if (!next || next == m->vma || m->no_right ||
	    next->vm_start != m->end ||
	    (m->vma && m->end != m->vma->vm_end) ||
	    (!any_pgoff &&
	     m->pgoff + PHYS_PFN(m->end - m->start) != next->vm_pgoff))
		return NULL;
	return vmamerge_candidate(m, next) ? next : NULL;
}

/* Adopt or transplant, counted; edges and owner checked by the caller. */
static enum vmamerge_refusal vmamerge_join_rewrite(struct vmamerge_merge *m,
						   struct vm_area_struct *vma,
						   struct vm_area_struct *owner)
{
	unsigned long pages = 0;
	enum vmamerge_refusal r;

	if (!vma->anon_vma) {
		r = vmamerge_adopt_anon_vma(vma, owner);
		if (!r) {
			m->rehomed |= VMAMERGE_REHOMED_ADOPT;
			vmamerge_merge_count(m, VMAMERGE_C_VMAS_ADOPTED, 1);
		}
		return r;
	}
	r = vmamerge_transplant_allowed(vma, owner);
	if (!r) {
		vmamerge_rg_vma_start_write(vma);
		r = vmamerge_transplant_vma(vma, owner, vma->vm_pgoff, &pages);
	}
	if (r)
		return r;
	m->rehomed |= VMAMERGE_REHOMED_TRANSPLANT;
	vmamerge_merge_count(m, VMAMERGE_C_VMAS_TRANSPLANTED, 1);
	vmamerge_merge_count(m, VMAMERGE_C_PAGES_TRANSPLANTED, pages);
	vmamerge_merge_count(m, VMAMERGE_C_PAGES_REWRITTEN, pages);
	trace_vmamerge_rewrite(m->mm, vma->vm_start, vma->vm_end,
			       vma->vm_pgoff, vma->vm_pgoff, true, pages);
	return VMAMERGE_R_NONE;
}

/*
 * Where @vma and @owner face each other (adjacent, or with the new range
 * between them), the upper one must pass vmamerge_edge_check() at its
 * start: once they share an anon_vma, the stock merge numbers them as one
 * VMA.  The lower one needs no check (page_rewrite.c says why).  The
 * merged VMA starts no lower than the lowest of the two, the range and a
 * left neighbour that touches the range.
 */
static enum vmamerge_refusal
vmamerge_join_edges(const struct vmamerge_merge *m, struct vm_area_struct *vma,
		    struct vm_area_struct *owner)
{
	struct vm_area_struct *upper = owner->vm_end <= vma->vm_start ?
				       vma : owner;
	unsigned long low = min3(vma->vm_start, owner->vm_start, m->start);

	if (m->prev && m->prev->vm_end == m->start)
		low = min(low, m->prev->vm_start);
	return vmamerge_edge_check(upper, upper->vm_start, upper->vm_start,
				   low);
}

/*
 * vmamerge_join - make @owner's anon_vma the anon_vma of @vma: adopt it
 * if @vma has none, transplant @vma and its pages otherwise.  Returns
 * whether @vma now has it; a refusal is counted and traced.  Both are the
 * range's VMA or a neighbour that passed vmamerge_candidate(), so both
 * are vmamerge_vma_rewritable().
 */
static bool vmamerge_join(struct vmamerge_merge *m, struct vm_area_struct *vma,
			  struct vm_area_struct *owner)
{
	enum vmamerge_refusal r;

	if (vma->anon_vma == owner->anon_vma)
		return true;
	if (!owner->anon_vma)
		r = VMAMERGE_R_SPECIAL;
	else
		r = vmamerge_join_edges(m, vma, owner);
	if (!r)
		r = vmamerge_join_rewrite(m, vma, owner);
	if (r) {
		vmamerge_tm_refused(m, vma, r);
		return false;
	}
	return true;
}

/*
 * Would the stock logic accept two neighbours that both merge?  Its
 * are_anon_vmas_compatible().
 */
static bool vmamerge_stock_pair_ok(struct vm_area_struct *a,
				   struct vm_area_struct *b)
{
	return !a->anon_vma || !b->anon_vma || a->anon_vma == b->anon_vma;
}

/*
 * An existing range in @vma with its left neighbour @left: make their
 * anon_vmas agree.  Returns the VMA whose anon_vma both now carry (NULL if
 * neither has one), or ERR_PTR if the left merge stays refused.
 */
static struct vm_area_struct *vmamerge_unify_left(struct vmamerge_merge *m,
						  struct vm_area_struct *vma,
						  struct vm_area_struct *left)
{
	struct vm_area_struct *owner = left->anon_vma ? left :
				       vma->anon_vma ? vma : NULL;

	if (vmamerge_stock_anon_ok(vma->anon_vma, left))
		return owner;
	/* the side with an anon_vma gives it to the other */
	if (left->anon_vma ? vmamerge_join(m, vma, left) :
			     vmamerge_join(m, left, vma))
		return owner;
	return ERR_PTR(-EBUSY);
}

/*
 * An existing range in @vma: join the left neighbour, then bring the right
 * one in; see the top of this file.
 */
static void vmamerge_unify_existing(struct vmamerge_merge *m,
				    struct vm_area_struct *vma,
				    struct vm_area_struct *left,
				    struct vm_area_struct *right)
{
	struct vm_area_struct *owner = NULL;

	if (left) {
		owner = vmamerge_unify_left(m, vma, left);
		if (IS_ERR(owner)) {
			left = NULL;
			owner = NULL;
		}
	}
	if (!right)
		return;
	if (vmamerge_stock_anon_ok(vma->anon_vma, right) &&
	    (!left || vmamerge_stock_pair_ok(left, right)))
		return;
	if (left) {
		/* vma and left carry owner's anon_vma: right must too */
		if (owner)
			vmamerge_join(m, right, owner);
	} else if (!right->anon_vma) {
		vmamerge_join(m, right, vma);
	} else if (!vmamerge_join(m, vma, right) && vma->anon_vma) {
		vmamerge_join(m, right, vma);
	}
}

/* A new range: bring the right neighbour into the left one's anon_vma. */
static void vmamerge_unify_new(struct vmamerge_merge *m,
			       struct vm_area_struct *left,
			       struct vm_area_struct *right)
{
	if (!left || !right || !left->anon_vma ||
	    (m->anon_vma && m->anon_vma != left->anon_vma))
		return;
	/*
	 * A range without pages next to an unfaulted right neighbour merges
	 * in the stock logic; one with the left's anon_vma (the expansion)
	 * must give it to the right one.
	 */
	if (!right->anon_vma && !m->anon_vma)
		return;
	vmamerge_join(m, right, left);
}

void vmamerge_rehome_for_merge(struct vmamerge_merge *m)
{
	bool renumber = vmamerge_may_renumber(m);
	struct vm_area_struct *left, *right;

	/* a move's rewrite was decided before (move_merge.c) */
	if (m->path == VMAMERGE_PATH_MREMAP_MOVE ||
	    (m->vma && !vmamerge_vma_rewritable(m->vma)))
		return;
	left = vmamerge_left(m, renumber);
	right = vmamerge_right(m, renumber);
	if (!left && !right)
		return;
	/* an offset differs: the move's decision, cheaper side rewritten */
	if (renumber && ((left && !vmamerge_pgoff_continues(m, left)) ||
			 (right && !vmamerge_pgoff_continues(m, right)))) {
		vmamerge_rehome_in_place(m, left, right);
		return;
	}
	if (!vmamerge_feature(VMAMERGE_FEATURE_TRANSPLANT))
		return;
	if (m->vma) {
		vmamerge_unify_existing(m, m->vma, left, right);
		/* the range is part of m->vma: it carries its anon_vma */
		m->anon_vma = m->vma->anon_vma;
	} else {
		vmamerge_unify_new(m, left, right);
	}
}

/*
 * May the new range's VMA @a merge with @b on 6.1's post-mmap() path?
 * That path renumbers nothing (vmamerge_may_renumber()), so besides what
 * vmamerge_vmas_joinable() asks the offsets must continue already.
 */
static bool vmamerge_mmap_joinable(struct vm_area_struct *a,
				   struct vm_area_struct *b)
{
	return vmamerge_vmas_joinable(a, b) &&
	       a->vm_pgoff + vma_pages(a) == b->vm_pgoff;
}

/*
 * vmamerge_after_mmap - 6.1's do_mmap() mapped an anonymous private range
 * [@addr, @addr + @len) (kernel-6.1/do_mmap.c): offer the VMA there to the
 * merge logic through the decision point, which joins a neighbour with
 * another anon_vma.  Called with mmap_lock still held for writing since
 * mmap_region() made the VMA, so the VMA containing @addr is the one it
 * left (new, or a neighbour expanded over the range); it may be merged
 * away here.  Counted as any merge of the decision point.
 *
 * Only when a neighbour touches the range that could merge with the VMA
 * but for the anon_vma: most new mappings touch none, or the stock logic
 * merged them already, and a merge attempt costs a fifth of an mmap()
 * (docs/benchmarks.md).  A side of the VMA the range does not reach was
 * there before this mmap(), and so was what lies beyond it.
 */
void vmamerge_after_mmap(struct mm_struct *mm, unsigned long addr,
			 unsigned long len)
{
	struct vm_area_struct *vma, *prev;

	lockdep_assert_held_write(&mm->mmap_lock);
	vma = find_vma_prev(mm, addr, &prev);
	if (!vma || vma->vm_start > addr)
		return;
	if ((vma->vm_start == addr && vmamerge_mmap_joinable(prev, vma)) ||
	    (vma->vm_end == addr + len &&
	     vmamerge_mmap_joinable(vma, find_vma(mm, vma->vm_end))))
		vmamerge_rg_merge_in_place(vma, VMAMERGE_PATH_MMAP, NULL);
	else	/* the VMA count may have grown: as a failed attempt does */
		vmamerge_compact_maybe_queue(mm);
}
