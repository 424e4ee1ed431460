// SPDX-License-Identifier: GPL-2.0
/*
 * Merging inside an mremap() move: the decision our copy_vma() replacements
 * (kernel-<series>/copy_vma.c) make before the stock merge attempt at the
 * destination.
 *
 * copy_vma() offers the moved range [addr, end) - with the source VMA's
 * attributes, its anon_vma and the page offset its pages already carry -
 * to the stock merge logic, which expands the VMA before it (prev) and/or
 * after it (next) when everything agrees.  For a faulted source the page
 * offset almost never continues a neighbour's, and the anon_vma is often
 * another one, so the stock kernel leaves a new VMA.  Before that attempt
 * this file decides, from metadata alone and in O(1) - the attributes the
 * stock logic compares (flags but VM_SOFTDIRTY, no file, policy,
 * userfaultfd context, name: vmamerge_attrs_match()), adjacency, page
 * offsets, anon_vmas, the family shape a transplant needs - whether the
 * range would merge with prev and/or next if only offsets and anon_vmas
 * agreed.  If not, nothing happens: the stock behaviour, at the cost of a
 * few comparisons.  If so, it makes them agree by rewriting, in place and
 * before any page table moves, every part but one (the anchor):
 *
 *  - the parts are the source VMA (the whole VMA: a moved range keeps its
 *    pages in it until move_page_tables() runs, and a VMA has one page
 *    offset - which is why a moved part of a VMA that may merge at the
 *    destination is split off first: vmamerge_move_isolate()) and the
 *    neighbours that would merge;
 *  - the anchor keeps its numbering and, if it has one, its anon_vma;
 *    every other part takes both: renumbered (renumber.c) and/or
 *    transplanted (transplant.c, one pass for both), or, never faulted,
 *    given the new offset and adopting the anon_vma (no page);
 *  - the anchor is the part whose choice rewrites the fewest pages: a
 *    part's cost is vma_pages() if it has an anon_vma, 0 otherwise.  The
 *    kernel keeps no per-VMA count of resident pages (the rss counters are
 *    per mm), and walking to count would be the rewrite's own cost; the
 *    size is an O(1) upper bound that is exact for the usual fully
 *    faulted heap or buffer.  Ties keep a neighbour's numbering (prev,
 *    then next): the stock merge expands the neighbour, the survivor.
 *
 * Source side rewritten in place: the source VMA's vm_pgoff and its
 * folios' indexes (and anon_vma) change together under the root anon_vma
 * rwsem(s) held for writing, the VMA write-locked (page_rewrite.h) - rmap
 * stays exact throughout; then copy_vma() carries on with the new offset
 * and anon_vma, and move_page_tables() moves PTEs whose folios already
 * carry what the destination VMA says.  need_rmap_locks is computed by the
 * stock code from the offsets as they are after the rewrite.
 *
 * Never done (the stock result stands, nothing is rewritten):
 *  - a never-faulted source: copy_vma() gives it the linear offset itself;
 *  - a neighbour that is the source VMA itself: the pages that would have
 *    to be renumbered are the source's own, in the same VMA.  A move of
 *    part of a VMA to just past one of its ends - the thesis's §3.1 case,
 *    a page moved behind its old neighbour - is therefore first isolated
 *    (vmamerge_move_isolate()): the moved part is split off the source
 *    VMA, as do_vmi_munmap() would split it right after the move anyway,
 *    and the part left next to the destination becomes an ordinary
 *    neighbour.  The same split serves a part moved next to another
 *    VMA: only its pages are rewritten.  Not with MREMAP_DONTUNMAP, whose
 *    source and destination must stay apart;
 *  - offsets that would wrap around (counted refused_special).
 * A never-faulted neighbour that merges with the faulted range adopts its
 * anon_vma here, before any PTE moves: the stock merge of 6.1/6.12 refuses
 * that pair, and upstream's relaxed check once merged it without giving
 * the survivor the anon_vma (CVE-2026-23077, "mm/vma: fix anon_vma UAF on
 * mremap() faulted, unfaulted merge"); here the survivor always has it.
 *
 * Every step may be refused (shared, pinned, busy pages...): counted, and
 * the step's part left as it was.  A refused source stops everything
 * before anything changed when it comes first; a refused neighbour only
 * drops that side.  mmap_lock held for writing throughout.
 */
#include <linux/kernel.h>
#include <linux/compat.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mempolicy.h>
#include <linux/mm_inline.h>
#include <linux/ptrace.h>
#include <linux/sched/task_stack.h>
#include <asm/syscall.h>
#include <asm/unistd.h>

#include "vmamerge.h"
#include "page_rewrite.h"
#include "trace.h"

enum { VMAMERGE_MV_PREV, VMAMERGE_MV_SRC, VMAMERGE_MV_NEXT, VMAMERGE_MV_N };

/*
 * One part of the merge.  @key is vm_pgoff minus the page number of the
 * part's first page at the destination: parts whose pages continue one
 * another's numbering have equal keys (modulo 2^BITS_PER_LONG).
 */
struct vmamerge_mv_part {
	struct vm_area_struct *vma;	/* NULL: not part of the merge */
	unsigned long start;		/* its first address at the destination */
	pgoff_t key;
};

/* @vma: the part whose rewrite was refused (for a transplant, the mover) */
static void vmamerge_mv_refused(struct vmamerge_move *mv,
				struct vm_area_struct *vma,
				enum vmamerge_refusal r)
{
	if (r == VMAMERGE_R_FAMILY)
		r = vmamerge_family_refusal(vma);
	vmamerge_move_count(mv, vmamerge_refusal_counter(r), 1);
	trace_vmamerge_refuse(mv->mm, mv->path, vma->vm_start, vma->vm_end, r);
}

/* A part's rewrite cost in pages (see the top of this file). */
static unsigned long vmamerge_mv_cost(struct vm_area_struct *vma)
{
	return vma->anon_vma ? vma_pages(vma) : 0;
}

/*
 * The VMA whose anon_vma every part carries after the rewrite when @a
 * anchors it: @a, or, never faulted, the source.  Only an in-place range
 * (vmamerge_rehome_in_place()) may have a never-faulted source; with
 * both never faulted the owner has no anon_vma, and a faulted part cannot
 * join it (vmamerge_mv_feasible()).
 */
static struct vm_area_struct *vmamerge_mv_owner(struct vmamerge_mv_part *p,
						int a)
{
	return p[a].vma->anon_vma ? p[a].vma : p[VMAMERGE_MV_SRC].vma;
}

static bool vmamerge_mv_needs(struct vmamerge_mv_part *p, int i, int a)
{
	return p[i].key != p[a].key ||
	       p[i].vma->anon_vma != vmamerge_mv_owner(p, a)->anon_vma;
}

/*
 * The new vm_pgoff of part @i under anchor @a: the source VMA's first
 * page is (start of the moved range - offset of the range in the VMA).
 */
static pgoff_t vmamerge_mv_pgoff(struct vmamerge_move *mv,
				 struct vmamerge_mv_part *p, int i, int a)
{
	if (i != VMAMERGE_MV_SRC)
		return p[a].key + (p[i].start >> PAGE_SHIFT);
	return p[a].key + (mv->addr >> PAGE_SHIFT) -
	       (mv->pgoff - mv->src->vm_pgoff);
}

/*
 * Can part @i join anchor @a at all, from metadata: the feature for an
 * anon_vma change, the family shape of a transplant or adoption, offsets
 * that do not wrap, a size one rewrite takes.  O(1).
 */
static enum vmamerge_refusal vmamerge_mv_feasible(struct vmamerge_move *mv,
						  struct vmamerge_mv_part *p,
						  int i, int a)
{
	struct vm_area_struct *vma = p[i].vma;
	struct vm_area_struct *owner = vmamerge_mv_owner(p, a);
	struct anon_vma *av = owner->anon_vma;
	pgoff_t pgoff = vmamerge_mv_pgoff(mv, p, i, a);

	if (pgoff + vma_pages(vma) < pgoff)
		return VMAMERGE_R_SPECIAL;
	if (vma->anon_vma == av)
		return VMAMERGE_R_NONE;
	/*
	 * A step the features leave out, or a faulted part next to an
	 * anchor and source that never faulted: no anon_vma to join (that
	 * plan loses to the one anchored at the faulted part).  Not a
	 * refusal, not counted.
	 */
	if (!vmamerge_feature(VMAMERGE_FEATURE_TRANSPLANT) || !av)
		return VMAMERGE_NR_REFUSALS;
	if (vma->anon_vma)
		return vmamerge_transplant_allowed(vma, owner);
	return vmamerge_adopt_allowed(owner);
}

/*
 * Rewrite part @i to continue anchor @a: offset and anon_vma.  Counted;
 * returns the refusal.
 */
static enum vmamerge_refusal vmamerge_mv_rewrite(struct vmamerge_move *mv,
						 struct vmamerge_mv_part *p,
						 int i, int a)
{
	struct vm_area_struct *vma = p[i].vma;
	struct vm_area_struct *owner = vmamerge_mv_owner(p, a);
	struct anon_vma *av = owner->anon_vma;
	pgoff_t old = vma->vm_pgoff, pgoff = vmamerge_mv_pgoff(mv, p, i, a);
	bool faulted = vma->anon_vma, rehome = vma->anon_vma != av;
	enum vmamerge_refusal r = VMAMERGE_R_NONE;
	unsigned long pages = 0;

	vmamerge_rg_vma_start_write(vma);
	if (rehome && faulted) {
		/* one pass: offset, anon_vma, and every folio's both */
		r = vmamerge_transplant_vma(vma, owner, pgoff, &pages);
	} else {
		if (pgoff != old)
			r = vmamerge_renumber_vma(vma, pgoff, &pages);
		/* never faulted: the offset first, adoption links the trees */
		if (!r && rehome) {
			r = vmamerge_adopt_anon_vma(vma, owner);
			/* still never faulted, not merged: its old offset back */
			if (r)
				vma->vm_pgoff = old;
		}
	}
	if (r) {
		vmamerge_mv_refused(mv, vma, r);
		return r;
	}
	if (pgoff != old) {
		mv->renumbered = true;
		vmamerge_move_count(mv, VMAMERGE_C_VMAS_RENUMBERED, 1);
		vmamerge_move_count(mv, VMAMERGE_C_PAGES_RENUMBERED, pages);
	}
	/* each page once, renumbered and/or transplanted in one pass */
	vmamerge_move_count(mv, VMAMERGE_C_PAGES_REWRITTEN, pages);
	if (rehome && faulted) {
		mv->rehomed |= VMAMERGE_REHOMED_TRANSPLANT;
		vmamerge_move_count(mv, VMAMERGE_C_VMAS_TRANSPLANTED, 1);
		vmamerge_move_count(mv, VMAMERGE_C_PAGES_TRANSPLANTED, pages);
	} else if (rehome) {
		mv->rehomed |= VMAMERGE_REHOMED_ADOPT;
		vmamerge_move_count(mv, VMAMERGE_C_VMAS_ADOPTED, 1);
	}
	trace_vmamerge_rewrite(mv->mm, vma->vm_start, vma->vm_end, old,
			       pgoff, rehome && faulted, pages);
	return VMAMERGE_R_NONE;
}

/* What choosing anchor @a would give: parts merged, pages rewritten. */
struct vmamerge_mv_plan {
	int merged;		/* neighbours that end up merged; -1: none */
	unsigned long cost;
	enum vmamerge_refusal refusal;	/* the first infeasible step's */
	struct vm_area_struct *refused;	/* and its part */
};

static void vmamerge_mv_evaluate(struct vmamerge_move *mv,
				 struct vmamerge_mv_part *p, int a,
				 struct vmamerge_mv_plan *plan)
{
	enum vmamerge_refusal r;
	int i;

	*plan = (struct vmamerge_mv_plan) { .merged = 0 };
	for (i = 0; i < VMAMERGE_MV_N; i++) {
		if (!p[i].vma)
			continue;
		r = vmamerge_mv_needs(p, i, a) ?
		    vmamerge_mv_feasible(mv, p, i, a) : VMAMERGE_R_NONE;
		if (r) {
			if (!plan->refusal) {
				plan->refusal = r;
				plan->refused = p[i].vma;
			}
			if (i == VMAMERGE_MV_SRC || i == a) {
				plan->merged = -1;	/* nothing merges */
				return;
			}
			continue;
		}
		if (vmamerge_mv_needs(p, i, a))
			plan->cost += vmamerge_mv_cost(p[i].vma);
		if (i != VMAMERGE_MV_SRC)
			plan->merged++;
	}
}

/*
 * A neighbour of the moved range that the stock logic would merge with it
 * but for offsets and anon_vmas, as part @i; or none.
 */
static void vmamerge_mv_neighbour(struct vmamerge_move *mv,
				  struct vmamerge_merge *m,
				  struct vmamerge_mv_part *p, int i,
				  struct vm_area_struct *nb, bool adjacent)
{
	if (!nb || nb == mv->src || !adjacent || !vmamerge_attrs_match(m, nb))
		return;
	p[i].vma = nb;
	p[i].start = nb->vm_start;
	p[i].key = nb->vm_pgoff - (nb->vm_start >> PAGE_SHIFT);
}

/*
 * The range mremap() moves out of @vma: [old_addr, old_addr + old_len).
 * copy_vma() is told where the range starts (its page offset) and the new
 * length, not the old one, which is shorter when the move also grows the
 * mapping.  Its one caller, move_vma(), runs inside the mremap() syscall
 * of the current task, whose arguments are still in its registers:
 * old_len is PAGE_ALIGN(old_len) or, for a shrinking move, the new length
 * (mremap_to() and the syscall body unmap the tail first).  Only a 64-bit
 * mremap() whose address matches is believed; 0 otherwise.
 */
static unsigned long vmamerge_move_old_len(struct vm_area_struct *vma,
					   unsigned long old_addr,
					   unsigned long len)
{
	struct pt_regs *regs = current_pt_regs();
	unsigned long args[6], old_len;

	if (in_compat_syscall() ||
	    syscall_get_nr(current, regs) != __NR_mremap)
		return 0;
	syscall_get_arguments(current, regs, args);
	if (untagged_addr(args[0]) != old_addr)
		return 0;
	old_len = min(PAGE_ALIGN(args[1]), PAGE_ALIGN(args[2]));
	if (!old_len || old_len > len || old_addr + old_len > vma->vm_end)
		return 0;
	return old_len;
}

/*
 * Would the range moved out of @vma to [@addr, @end) be worth a part of
 * its own?  If the destination touches @vma itself, when a part of @vma
 * stays next to it after the move [@old_addr, @old_end); else when a VMA
 * that could merge with the range touches the destination.
 */
static bool vmamerge_move_worth_isolating(struct vm_area_struct *vma,
					  unsigned long addr, unsigned long end,
					  unsigned long old_addr,
					  unsigned long old_end)
{
	struct vm_area_struct *prev, *next;

	if (addr == vma->vm_end)
		return old_end != vma->vm_end;
	if (end == vma->vm_start)
		return old_addr != vma->vm_start;
	/* neither is @vma: it would touch the destination, handled above */
	next = find_vma_prev(vma->vm_mm, addr, &prev);
	return (prev && prev->vm_end == addr && vmamerge_vmas_alike(vma, prev)) ||
	       (next && next->vm_start == end && vmamerge_vmas_alike(vma, next));
}

/*
 * vmamerge_move_isolate - copy_vma() of the range at page offset @pgoff
 * of @vma to [@addr, @addr + @len), for an active mm with the renumber
 * feature, not MREMAP_DONTUNMAP: if only part of @vma moves and the move
 * may merge at the destination, split the moved part off @vma now, as
 * do_vmi_munmap() would split it right after the move anyway.  Then a
 * rewrite for the merge touches the moved pages only - not the rest of
 * @vma, which may be large or shared with a fork where the moved part is
 * not - and keeps the rest's numbering; and where the destination
 * touches @vma itself, the part left there becomes an
 * ordinary neighbour that can take the moved pages' numbering (see the
 * top of this file).  Only for a VMA we rewrite (faulted,
 * vmamerge_vma_rewritable()).  Returns the VMA that holds the moved range
 * now (the caller's *vmap from here on).  A failed split leaves a VMA
 * that still contains the range: the stock path goes on with it.  When
 * the merge is refused after all, the layout after the move is the stock
 * one.  mmap_lock held for writing.
 */
struct vm_area_struct *vmamerge_move_isolate(struct vm_area_struct *vma,
					     unsigned long addr,
					     unsigned long len, pgoff_t pgoff)
{
	unsigned long old_addr, old_len;

	if (!vma->anon_vma || !vmamerge_vma_rewritable(vma))
		return vma;
	old_addr = vma->vm_start + ((pgoff - vma->vm_pgoff) << PAGE_SHIFT);
	old_len = vmamerge_move_old_len(vma, old_addr, len);
	if (!old_len ||
	    (old_addr == vma->vm_start && old_addr + old_len == vma->vm_end) ||
	    !vmamerge_move_worth_isolating(vma, addr, addr + len, old_addr,
					   old_addr + old_len))
		return vma;
	/* new_below: @vma keeps the upper part, the moved range's start */
	if (old_addr > vma->vm_start &&
	    vmamerge_rg_split_vma(vma, old_addr, 1))
		return vma;
	if (old_addr + old_len < vma->vm_end)
		vmamerge_rg_split_vma(vma, old_addr + old_len, 0);
	return vma;
}

/* Count a refusal, but not a step the features leave out. */
static void vmamerge_mv_refused_step(struct vmamerge_move *mv,
				     struct vm_area_struct *vma,
				     enum vmamerge_refusal r)
{
	if (r != VMAMERGE_NR_REFUSALS)
		vmamerge_mv_refused(mv, vma, r);
}

/*
 * The anchor whose plan merges the most neighbours, then rewrites the
 * fewest pages; -1 if no plan merges any.  *@first: the first refusal
 * met, for the count when nothing merges, and *@refused its part.
 */
static int vmamerge_mv_choose(struct vmamerge_move *mv,
			      struct vmamerge_mv_part *p,
			      enum vmamerge_refusal *first,
			      struct vm_area_struct **refused)
{
	/* the order of preference on ties: keep a neighbour's numbering */
	static const int order[] = {
		VMAMERGE_MV_PREV, VMAMERGE_MV_NEXT, VMAMERGE_MV_SRC
	};
	struct vmamerge_mv_plan plan, best = { .merged = -1 };
	int a, i, anchor = -1;

	*first = VMAMERGE_R_NONE;
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		a = order[i];
		if (!p[a].vma)
			continue;
		vmamerge_mv_evaluate(mv, p, a, &plan);
		if (!*first) {
			*first = plan.refusal;
			*refused = plan.refused;
		}
		if (plan.merged > best.merged ||
		    (plan.merged == best.merged && plan.cost < best.cost)) {
			best = plan;
			anchor = a;
		}
	}
	return best.merged > 0 ? anchor : -1;
}

/*
 * Every place where the merge would join memory under one numbering must
 * pass vmamerge_edge_check() (page_rewrite.c: a large folio mapped in part
 * above the edge whose linear range begins below it would become
 * unreachable by rmap) for the memory above it: the moved range where it
 * is cut out of the source, if a neighbour joins below; the next
 * neighbour, if it joins.  Parts the rewrite walks keep only whole large
 * folios, but the anchor and the parts that need nothing are not walked,
 * and a move may cut a whole folio in two.  Checked before anything is
 * rewritten; *@refused is the part whose edge failed.  The merged VMA
 * starts no lower than the left part, or the left neighbour that touches
 * the destination (whether or not it is a part: the stock logic may merge
 * it anyway), or the destination.
 */
static enum vmamerge_refusal vmamerge_mv_edges(struct vmamerge_move *mv,
					       struct vmamerge_mv_part *p,
					       struct vm_area_struct **refused)
{
	struct vm_area_struct *src = mv->src;
	enum vmamerge_refusal r = VMAMERGE_R_NONE;
	unsigned long low = mv->addr;

	if (mv->prev && mv->prev->vm_end == mv->addr)
		low = min(low, mv->prev->vm_start);
	if (p[VMAMERGE_MV_PREV].vma)
		low = min(low, p[VMAMERGE_MV_PREV].vma->vm_start);
	if (p[VMAMERGE_MV_PREV].vma) {
		*refused = src;
		r = vmamerge_edge_check(src, src->vm_start +
				((mv->pgoff - src->vm_pgoff) << PAGE_SHIFT),
				mv->addr, low);
	}
	if (!r && p[VMAMERGE_MV_NEXT].vma) {
		*refused = p[VMAMERGE_MV_NEXT].vma;
		r = vmamerge_edge_check(*refused, mv->end, mv->end, low);
	}
	return r;
}

/*
 * The decision and the rewrite, for the parts in @p (the source and the
 * neighbours that would merge but for offsets and anon_vmas).  Returns
 * whether anything was rewritten; @mv->pgoff follows the source's offset.
 */
static bool vmamerge_mv_run(struct vmamerge_move *mv,
			    struct vmamerge_mv_part *p)
{
	struct vm_area_struct *src = mv->src, *refused = NULL;
	enum vmamerge_refusal first, r;
	int i, anchor;
	pgoff_t old;
	u64 t0;

	/* the stock logic merges every neighbour that needs nothing */
	for (i = 0; i < VMAMERGE_MV_N; i++)
		if (p[i].vma && vmamerge_mv_needs(p, i, VMAMERGE_MV_SRC))
			break;
	if (i == VMAMERGE_MV_N)
		return false;
	anchor = vmamerge_mv_choose(mv, p, &first, &refused);
	if (anchor < 0) {
		/* a merge only a rewrite could make, and none is possible */
		if (first)
			vmamerge_mv_refused_step(mv, refused, first);
		return false;
	}
	r = vmamerge_mv_edges(mv, p, &refused);
	if (r) {
		vmamerge_mv_refused(mv, refused, r);
		return false;
	}
	/* time_ns: the rewrites only, not the O(1) decision above */
	t0 = ktime_get_ns();
	/* the source first: refused, nothing has changed yet */
	old = src->vm_pgoff;
	if (vmamerge_mv_needs(p, VMAMERGE_MV_SRC, anchor)) {
		r = vmamerge_mv_rewrite(mv, p, VMAMERGE_MV_SRC, anchor);
		if (r)
			goto out;
		mv->pgoff += src->vm_pgoff - old;
	}
	/* then the neighbours (and a never-faulted anchor's adoption) */
	for (i = 0; i < VMAMERGE_MV_N; i++) {
		if (i == VMAMERGE_MV_SRC || !p[i].vma ||
		    !vmamerge_mv_needs(p, i, anchor))
			continue;
		r = vmamerge_mv_feasible(mv, p, i, anchor);
		if (r)
			vmamerge_mv_refused_step(mv, p[i].vma, r);
		else
			vmamerge_mv_rewrite(mv, p, i, anchor);
	}
out:
	vmamerge_move_count(mv, VMAMERGE_C_TIME_NS, ktime_get_ns() - t0);
	return mv->renumbered || mv->rehomed;
}

/* The source part: the range [@addr, ...) of @src at page offset @pgoff. */
static void vmamerge_mv_source(struct vmamerge_mv_part *p,
			       struct vm_area_struct *src, unsigned long addr,
			       pgoff_t pgoff)
{
	p[VMAMERGE_MV_SRC].vma = src;
	p[VMAMERGE_MV_SRC].start = addr;
	p[VMAMERGE_MV_SRC].key = pgoff - (addr >> PAGE_SHIFT);
}

bool vmamerge_move_prepare(struct vmamerge_move *mv)
{
	struct vm_area_struct *src = mv->src;
	struct vmamerge_mv_part p[VMAMERGE_MV_N] = { };
	struct vmamerge_merge m;

	/* never faulted: copy_vma() linearises it; nothing we rewrite */
	if (!src->anon_vma || !vmamerge_vma_rewritable(src))
		return false;
	m = (struct vmamerge_merge) {
		.mm = mv->mm,
		.flags = src->vm_flags,
		.policy = vma_policy(src),
		.uffd_ctx = src->vm_userfaultfd_ctx,
		.anon_name = anon_vma_name(src),
	};
	vmamerge_mv_source(p, src, mv->addr, mv->pgoff);
	vmamerge_mv_neighbour(mv, &m, p, VMAMERGE_MV_PREV, mv->prev,
			      mv->prev && mv->prev->vm_end == mv->addr);
	vmamerge_mv_neighbour(mv, &m, p, VMAMERGE_MV_NEXT, mv->next,
			      mv->next && mv->next->vm_start == mv->end);
	return vmamerge_mv_run(mv, p);
}

/*
 * vmamerge_rehome_in_place - the same decision for an existing range
 * (mprotect() & co., path @m->path): [@m->start, @m->end) of @m->vma,
 * with @left and/or @right (either may be NULL) the neighbours that would
 * merge with it but for offsets and anon_vmas (transplant_merge.c found
 * them: attributes, soft-dirty rule, adjacency as the stock logic looks).
 * The source is the whole of @m->vma, which may be never faulted here.
 * Updates @m->pgoff, @m->anon_vma and @m->rehomed
 * (VMAMERGE_REHOMED_RENUMBER for an offset change).  mmap_lock held for
 * writing.
 */
void vmamerge_rehome_in_place(struct vmamerge_merge *m,
			      struct vm_area_struct *left,
			      struct vm_area_struct *right)
{
	struct vmamerge_mv_part p[VMAMERGE_MV_N] = { };
	struct vmamerge_move mv = {
		.mm = m->mm, .path = m->path, .src = m->vma,
		.addr = m->start, .end = m->end, .pgoff = m->pgoff,
		.prev = m->prev,	/* for the edges (vmamerge_mv_edges()) */
		.counting = m->counting,	/* one lookup for the attempt */
	};
	bool rewritten;

	vmamerge_mv_source(p, m->vma, m->start, m->pgoff);
	if (left)
		vmamerge_mv_neighbour(&mv, m, p, VMAMERGE_MV_PREV, left, true);
	if (right)
		vmamerge_mv_neighbour(&mv, m, p, VMAMERGE_MV_NEXT, right, true);
	rewritten = vmamerge_mv_run(&mv, p);
	m->counting = mv.counting;
	if (!rewritten)
		return;
	m->pgoff = mv.pgoff;
	m->anon_vma = m->vma->anon_vma;
	m->rehomed |= mv.rehomed;
	if (mv.renumbered)
		m->rehomed |= VMAMERGE_REHOMED_RENUMBER;
}

/*
 * The stock merge after a rewrite: count it by what made it possible
 * (the decision point counts the merge itself as av_merge_same).
 */
void vmamerge_move_done(struct vmamerge_move *mv, struct vm_area_struct *merged)
{
	if (!merged) {
		/* should stay 0: the rewrite was for this merge */
		vmamerge_move_count(mv, VMAMERGE_C_REHOMED_UNMERGED, 1);
		return;
	}
	if (mv->renumbered)
		vmamerge_move_count(mv, mv->rehomed ? VMAMERGE_C_MERGE_BOTH :
				    VMAMERGE_C_MERGE_RENUMBER, 1);
	else if (mv->rehomed & VMAMERGE_REHOMED_TRANSPLANT)
		vmamerge_move_count(mv, VMAMERGE_C_MERGE_TRANSPLANT, 1);
	else
		vmamerge_move_count(mv, VMAMERGE_C_MERGE_ADOPT, 1);
}
