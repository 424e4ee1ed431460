// SPDX-License-Identifier: GPL-2.0
/*
 * The page rewrite walker: collect every anonymous folio one VMA maps,
 * proved exclusive and locked, so that the caller can rewrite what rmap
 * knows about them (page_rewrite.h describes the two phases).
 *
 * Locks, in the kernel's order: mmap_lock (write) and the VMA's write lock
 * (held by the caller throughout, so no fault, no madvise, no munmap, no
 * khugepaged collapse and no swapoff touches this mm), the root anon_vma's
 * rwsem (write: no rmap walk - reclaim, migration, KSM, page_idle, THP
 * split - can look at these folios while they change), one PTE or PMD lock
 * at a time, and under it only trylocks of folios.  The folio lock ranks
 * above both, so a folio we cannot trylock is a transient refusal: the
 * caller drops everything and tries again.
 *
 * Which folios are kept locked until the commit: large folios (split and
 * migration read their pages' state under the folio lock) and swap-cache
 * folios no PTE maps (migration moves those without any rmap walk, so
 * without the anon_vma lock, copying index under the folio lock), both
 * listed and referenced; and, when the rewrite changes the anon_vma, every
 * order-0 folio a present PTE maps, locked but neither listed nor
 * referenced (the PTE keeps it allocated; a second walk finds it again).
 *
 * Why a new anon_vma needs the folio lock from the write until the commit
 * or undo: migration takes the only reference that keeps a folio's
 * anon_vma alive for its restore walk with folio_get_anon_vma() under the
 * folio lock, before its unmap walk, and the restore walk
 * (remove_migration_ptes()) takes none of its own; reclaim's
 * try_to_unmap() reads the mapping under the folio lock too.  A holder
 * that locked the folio between our check and our write (or our write and
 * an undo) would pin one anon_vma and walk another, which an munmap or
 * exit may free in between: a use-after-free.  folio_move_anon_rmap()
 * requires the lock for the same reason.  The index alone needs no folio
 * lock: every walk reads it under the anon_vma lock, and a holder between
 * its two walks keeps the folio locked, which the walk refuses
 * (vmamerge_rewrite_present()).
 *
 * So a renumber's order-0 folio that a present PTE of the VMA maps, and
 * that nobody holds locked, is neither locked nor referenced: everything
 * that could unmap, free, migrate, split or share it, or write its index
 * or mapping, needs a lock we hold for writing or its folio lock
 * (vmamerge_rewrite_commit() names each; vmamerge_rewrite_present() why
 * a locked one is refused).  Either way the collect walk writes the new
 * index (and anon_vma) as soon as it has checked a folio, and a refused
 * walk writes the old ones back (vmamerge_rewrite_undo()) before any lock
 * is dropped: nobody who could tell the difference runs in between.
 * Where the old anon_vma of each folio is not known (a transplant out of
 * a chain of several anon_vmas), the commit writes them with a second
 * walk instead.  The walks read PTEs, where a folio list would cost a
 * reference and a slot per page.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/sysfs.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/huge_mm.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/swapops.h>

#include "vmamerge.h"
#include "page_rewrite.h"
#include "sharing.h"
#include "verify.h"	/* the page-table and swap-cache helpers */

#define VMAMERGE_REFUSAL_NAME_(id, name)				\
	[VMAMERGE_R_##id] = name,
static const char *const vmamerge_refusal_names[VMAMERGE_NR_REFUSALS] = {
	[VMAMERGE_R_NONE]	= "none",
	VMAMERGE_REFUSALS(VMAMERGE_REFUSAL_NAME_)
};

#undef VMAMERGE_REFUSAL_NAME_

#define VMAMERGE_REFUSAL_COUNTER_(id, name)				\
	[VMAMERGE_R_##id] = VMAMERGE_C_REFUSED_##id,
static const enum vmamerge_counter vmamerge_refusal_counters[] = {
	VMAMERGE_REFUSALS(VMAMERGE_REFUSAL_COUNTER_)
};

#undef VMAMERGE_REFUSAL_COUNTER_

const char *vmamerge_refusal_name(enum vmamerge_refusal r)
{
	return r < VMAMERGE_NR_REFUSALS ? vmamerge_refusal_names[r] : "?";
}

enum vmamerge_counter vmamerge_refusal_counter(enum vmamerge_refusal r)
{
	if (r == VMAMERGE_R_NONE || r >= VMAMERGE_NR_REFUSALS)
		return VMAMERGE_NR_COUNTERS;
	return vmamerge_refusal_counters[r];
}

/*
 * rewrite_max_pages: read once per rewrite (a rewrite that began under
 * the old budget finishes under it); 1..VMAMERGE_REWRITE_MAX_PAGES.
 */
static unsigned long vmamerge_rewrite_budget = VMAMERGE_REWRITE_DEFAULT_PAGES;
static const struct vmamerge_bounded_param vmamerge_rewrite_budget_param = {
	.val = &vmamerge_rewrite_budget,
	.min = 1,
	.max = VMAMERGE_REWRITE_MAX_PAGES,
};
module_param_cb(rewrite_max_pages, &vmamerge_param_bounded_ops,
		(void *)&vmamerge_rewrite_budget_param, 0644);
MODULE_PARM_DESC(rewrite_max_pages,
		 "largest VMA, in pages, one rewrite takes on (1..524288, default 32768 = 128 MiB); larger ones are refused_too_large");

enum vmamerge_refusal vmamerge_rewrite_init(struct vmamerge_rewrite *rw,
					    struct vm_area_struct *vma)
{
	unsigned long pages = vma_pages(vma);

	memset(rw, 0, sizeof(*rw));
	rw->mm = vma->vm_mm;
	rw->vma = vma;
	/* every caller's VMA is; the walk relies on it (no pfn_valid()) */
	if (WARN_ON_ONCE(!vmamerge_vma_rewritable(vma)))
		return VMAMERGE_R_SPECIAL;
	if (pages > READ_ONCE(vmamerge_rewrite_budget))
		return VMAMERGE_R_TOO_LARGE;
	rw->pages = pages;
	rw->folios = rw->inline_folios;
	rw->max_folios = VMAMERGE_REWRITE_INLINE;
	return VMAMERGE_R_NONE;
}

void vmamerge_rewrite_free(struct vmamerge_rewrite *rw)
{
	if (rw->folios != rw->inline_folios)
		kvfree(rw->folios);
	rw->folios = NULL;
}

/*
 * Make room for @want folios in the list, keeping the ones on it: a
 * kmalloc'd array under the walk's spinlocks (@gfp GFP_NOWAIT: no reclaim,
 * so no sleep and no lock of ours taken), a kvmalloc'd one with every
 * lock but mmap_lock dropped (GFP_KERNEL).  The list holds only large
 * folios and swap-cache folios no PTE maps: nearly every rewrite fits in
 * the struct and allocates nothing.
 */
static bool vmamerge_rewrite_grow(struct vmamerge_rewrite *rw,
				  unsigned long want, gfp_t gfp)
{
	struct folio **list;

	if (gfpflags_allow_blocking(gfp))
		list = kvmalloc_array(want, sizeof(*list), gfp);
	else
		list = kmalloc_array(want, sizeof(*list), gfp | __GFP_NOWARN);
	if (!list)
		return false;
	memcpy(list, rw->folios, rw->nr_folios * sizeof(*list));
	vmamerge_rewrite_free(rw);
	rw->folios = list;
	rw->max_folios = want;
	return true;
}

/*
 * The list is full, under the walk's locks: double it without sleeping,
 * up to a page of pointers.  Beyond that, or without memory now, ask for
 * room for one folio per page of the VMA (the most there can be) from
 * vmamerge_rewrite_collect_locked(), which drops the locks, allocates
 * and starts again: VMAMERGE_R_BUSY with @list_full set.
 */
static enum vmamerge_refusal vmamerge_rewrite_room(struct vmamerge_rewrite *rw)
{
	unsigned long want = min(2 * rw->max_folios, rw->pages);

	if (want > rw->max_folios &&
	    want <= PAGE_SIZE / sizeof(*rw->folios) &&
	    vmamerge_rewrite_grow(rw, want, GFP_NOWAIT))
		return VMAMERGE_R_NONE;
	/* one folio per page is the most a walk can keep */
	if (WARN_ON_ONCE(rw->max_folios >= rw->pages))
		return VMAMERGE_R_TOO_LARGE;
	rw->list_full = true;
	return VMAMERGE_R_BUSY;
}

/* Keep @folio (locked by the caller): take a reference, list it. */
static enum vmamerge_refusal vmamerge_rewrite_keep(struct vmamerge_rewrite *rw,
						   struct folio *folio)
{
	enum vmamerge_refusal r;

	if (rw->nr_folios == rw->max_folios) {
		r = vmamerge_rewrite_room(rw);
		if (r) {
			folio_unlock(folio);
			return r;
		}
	}
	folio_get(folio);
	rw->folios[rw->nr_folios++] = folio;
	rw->nr_pages += folio_nr_pages(folio);
	return VMAMERGE_R_NONE;
}

/*
 * Write one folio's new index (old + @delta) and, if @mapping is not 0,
 * its new mapping - under the locks vmamerge_rewrite_commit() describes.
 * A mapping is written only under the folio lock, which we took (the
 * debug kernels check every write).
 */
static void vmamerge_folio_rewrite(struct folio *folio, long delta,
				   unsigned long mapping)
{
	if (delta)
		WRITE_ONCE(folio->index, folio->index + delta);
	if (mapping) {
		VM_WARN_ON_ONCE_FOLIO(!folio_test_locked(folio), folio);
		WRITE_ONCE(folio->mapping, (struct address_space *)mapping);
	}
}

/*
 * An order-0 folio mapped by one PTE of the VMA; @r is the sharing check's
 * result.  Neither referenced nor listed, and locked by us only with
 * @rw->lock_small: with @rw->in_walk its target is written now, else the
 * commit walks the page tables again and writes it where it finds it
 * (vmamerge_commit_pte()).  Nothing can unmap, free, split, migrate or
 * share it meanwhile, nor write its index or mapping: see the comment
 * above vmamerge_rewrite_commit().
 */
static enum vmamerge_refusal vmamerge_rewrite_small(struct vmamerge_rewrite *rw,
						    struct folio *folio,
						    enum vmamerge_refusal r)
{
	if (!r) {
		if (rw->in_walk)
			vmamerge_folio_rewrite(folio, rw->delta,
					       rw->new_mapping);
		rw->nr_small++;
		rw->nr_pages++;
	}
	return r;
}

/*
 * A present folio under its PTE or PMD lock that is large, mapped by a
 * PMD, in the swap cache, or order-0 in a rewrite that changes its
 * anon_vma: trylocked first, so that the sharing check reads state that
 * the folio lock pins too (swap-cache membership and slot).  An order-0
 * one stays locked if the rewrite changes its anon_vma (@rw->lock_small;
 * the second walk unlocks it), else it is unlocked again - what the check
 * proved stays true under our locks (sharing.c); a large one is kept
 * locked and referenced until the commit.
 */
static noinline enum vmamerge_refusal
vmamerge_rewrite_locked(struct vmamerge_rewrite *rw, struct folio *folio,
			struct page *page, unsigned long addr, bool pmd_mapped)
{
	bool small = !pmd_mapped && !folio_test_large(folio);
	enum vmamerge_refusal r;

	if (!folio_trylock(folio))
		return VMAMERGE_R_BUSY;
	r = vmamerge_check_present(rw, folio, page, addr, pmd_mapped);
	if (r || small) {
		if (r || !rw->lock_small)
			folio_unlock(folio);
		return small ? vmamerge_rewrite_small(rw, folio, r) : r;
	}
	r = vmamerge_rewrite_keep(rw, folio);
	if (!r && !pmd_mapped) {
		rw->open_folio = folio;
		rw->open_idx = 1;
		rw->open_addr = addr + PAGE_SIZE;
	}
	return r;
}

/*
 * A present folio under its PTE or PMD lock.  An order-0 folio a PTE
 * maps that is not in the swap cache and that nobody holds locked -
 * nearly every page - is checked here, inline in the walk and without
 * taking its lock (vmamerge_check_mapped() reads nothing the locks we
 * hold do not pin) when only its index changes; any other one by
 * vmamerge_rewrite_locked(), whose trylock fails for a locked one: a
 * transient refusal.
 *
 * Why a locked order-0 folio is never rewritten: its holder may be
 * between two rmap walks - migration between try_to_migrate() and
 * remove_migration_ptes(), reclaim between try_to_unmap() and its
 * restore - with no anon_vma lock held in between, and the first walk
 * may have skipped our PTE while it was momentarily none (neither runs
 * with TTU_SYNC: page_vma_mapped_walk() reads a PTE without its lock and
 * skips an empty one; mprotect's ptep_modify_prot_start() empties a
 * present PTE for a moment).  Then the folio's other mappings are
 * migration entries that folio_mapcount() does not count, mapcount 1 is
 * no proof of exclusiveness, and an index or mapping written now sends
 * the second walk to the wrong place: the other mappings' migration
 * entries are never restored (kernel BUG at swapops.h:557 at their next
 * fault or exit; docs/testing.md, "the stale migration entries").  The
 * bit is read under the root anon_vma's rwsem (write): a holder that has
 * not walked yet walks after us and sees the rewrite whole; one that
 * walked keeps the bit until its last walk is done.
 */
static __always_inline enum vmamerge_refusal
vmamerge_rewrite_present(struct vmamerge_rewrite *rw, struct folio *folio,
			 struct page *page, unsigned long addr, bool pmd_mapped)
{
	if (!rw->lock_small && !pmd_mapped && !folio_test_large(folio) &&
	    !folio_test_swapcache(folio) && !folio_test_locked(folio))
		return vmamerge_rewrite_small(rw, folio,
					      vmamerge_check_mapped(rw, folio,
								    addr));
	return vmamerge_rewrite_locked(rw, folio, page, addr, pmd_mapped);
}

/*
 * The PTE after the last one that mapped a page of @rw->open_folio, a
 * large folio kept (locked, checked) when the walk met its first page.  It
 * must map the folio's next page, mapped nowhere else: that page's index
 * is then linear too (the first page's is, and both advance by one).  The
 * folio lock we hold excludes its split, migration, swap-out and KSM; a
 * new mapping of one of its pages would come from a fault or fork of this
 * mm (excluded by mmap_lock and the VMA lock) or from a swap PTE (it is
 * not in the swap cache).  Anything else - an empty PTE, a swap entry,
 * another folio, the walk leaving the range - and the folio is not mapped
 * whole here: refused_thp (or refused_shared for a page mapped twice).
 */
static enum vmamerge_refusal
vmamerge_rewrite_large_next(struct vmamerge_rewrite *rw, unsigned long addr,
			    pte_t pte)
{
	struct folio *folio = rw->open_folio;
	enum vmamerge_refusal r;
	unsigned long pfn;

	if (addr != rw->open_addr || !pte_present(pte))
		return VMAMERGE_R_THP;
	pfn = pte_pfn(pte);
	if (pte_special(pte) || pfn != folio_pfn(folio) + rw->open_idx)
		return VMAMERGE_R_THP;
	r = vmamerge_check_large_next(pfn_to_page(pfn));
	if (r)
		return r;
	rw->open_addr += PAGE_SIZE;
	if (++rw->open_idx == folio_nr_pages(folio))
		rw->open_folio = NULL;
	return VMAMERGE_R_NONE;
}

/*
 * A swap PTE, read under its PTE lock, which keeps the slot and the swap
 * device's cache alive (verify.c explains why).  The slot must be ours
 * alone; a swap-cache folio holding it is rewritten with the rest: it
 * carries the index that a later swap-in maps.  Without one, nothing
 * carries an index: swap-in computes it from the VMA.
 */
static enum vmamerge_refusal vmamerge_rewrite_swap(struct vmamerge_rewrite *rw,
						   unsigned long addr,
						   swp_entry_t entry)
{
	enum vmamerge_refusal r;
	struct folio *folio;

	if (__swap_count(entry) != 1)
		return VMAMERGE_R_SHARED;
	folio = vmamerge_vg_swapcache_folio(entry);
	if (!folio)
		return VMAMERGE_R_NONE;
	if (!folio_trylock(folio)) {
		folio_put(folio);
		return VMAMERGE_R_BUSY;
	}
	r = vmamerge_check_swapcache(rw, folio, entry, addr);
	if (r == VMAMERGE_R_NONE && folio_test_anon(folio))
		r = vmamerge_rewrite_keep(rw, folio);
	else
		folio_unlock(folio);
	folio_put(folio);	/* _keep() took its own reference */
	return r;
}

/* Entries that are not swap slots: what each means for a rewrite. */
static enum vmamerge_refusal vmamerge_rewrite_nonswap(swp_entry_t entry)
{
	if (is_migration_entry(entry))
		return VMAMERGE_R_MIGRATION;
	if (is_device_private_entry(entry) || is_device_exclusive_entry(entry))
		return VMAMERGE_R_DEVICE;
	/* hwpoison and PTE markers carry no page: nothing to rewrite */
	return VMAMERGE_R_NONE;
}

/* One PTE, under its PTE lock. */
static enum vmamerge_refusal vmamerge_rewrite_pte(struct vmamerge_rewrite *rw,
						  unsigned long addr, pte_t pte)
{
	swp_entry_t entry;
	unsigned long pfn;
	struct page *page;

	if (rw->open_folio)
		return vmamerge_rewrite_large_next(rw, addr, pte);
	if (pte_none(pte))
		return VMAMERGE_R_NONE;
	if (!pte_present(pte)) {
		entry = pte_to_swp_entry(pte);
		if (non_swap_entry(entry))
			return vmamerge_rewrite_nonswap(entry);
		return vmamerge_rewrite_swap(rw, addr, entry);
	}
	pfn = pte_pfn(pte);
	if (is_zero_pfn(pfn))
		return VMAMERGE_R_NONE;
	/* else a struct page, as in vmamerge_edge_pte() */
	if (pte_special(pte) || pte_devmap(pte))
		return VMAMERGE_R_SPECIAL;
	page = pfn_to_page(pfn);
	return vmamerge_rewrite_present(rw, page_folio(page), page, addr,
					false);
}

/* What one PTE, read under its PTE lock, means for a walk over them. */
typedef enum vmamerge_refusal (*vmamerge_pte_fn)(void *arg, unsigned long addr,
						 pte_t pte);

/*
 * @fn for each PTE of [@addr, @end) in the table *@pmd points to, under
 * the PTE lock, until one refuses; *@stop is where it did.  With
 * mmap_lock held for writing no page table of an anonymous VMA goes away;
 * the recheck under the PTE lock is the stock walkers' discipline all the
 * same.  Returns VMAMERGE_R_BUSY if the pmd changed under us.  Inlined
 * into each caller, which passes a constant @fn: a direct call per PTE,
 * not an indirect one (the edge check reads up to 511 PTEs per joined edge).
 */
static __always_inline enum vmamerge_refusal
vmamerge_ptes_each(struct mm_struct *mm, pmd_t *pmd, unsigned long addr,
		   unsigned long end, vmamerge_pte_fn fn, void *arg,
		   unsigned long *stop)
{
	enum vmamerge_refusal r = VMAMERGE_R_NONE;
	pte_t *start, *ptep;
	spinlock_t *ptl;
	pmd_t pmdval;

	start = vmamerge_vg_pte_map(pmd, addr, &pmdval);
	if (!start)
		return VMAMERGE_R_BUSY;
	ptl = pte_lockptr(mm, &pmdval);
	spin_lock(ptl);
	if (!pmd_same(pmdval, vmamerge_vg_pmdp_get(pmd)))
		r = VMAMERGE_R_BUSY;
	for (ptep = start; !r && addr < end; ptep++, addr += PAGE_SIZE) {
		r = fn(arg, addr, ptep_get(ptep));
		if (r)
			*stop = addr;
	}
	spin_unlock(ptl);
	vmamerge_vg_pte_unmap(start);
	return r;
}

static enum vmamerge_refusal vmamerge_rewrite_pte_fn(void *rw,
						     unsigned long addr,
						     pte_t pte)
{
	return vmamerge_rewrite_pte(rw, addr, pte);
}

/*
 * The second walk (the commit's, or the undo's): one PTE that maps what
 * it mapped when the collect walk checked it (nothing changes a PTE of
 * this VMA in between: page_rewrite.h).  The order-0 folios are the
 * collect walk's unlisted ones (vmamerge_rewrite_small()), the first
 * @rw->nr_small of them in address order - each written, then unlocked
 * if the collect walk locked it (@rw->lock_small); large ones are on the
 * list, the zero page and swap entries carry no index to rewrite.
 */
static enum vmamerge_refusal vmamerge_commit_pte(void *arg, unsigned long addr,
						 pte_t pte)
{
	struct vmamerge_rewrite *rw = arg;
	struct folio *folio;
	unsigned long pfn;

	/* all found: the rest of the range was not written (an undo) */
	if (!rw->nr_small)
		return VMAMERGE_R_NONE;
	if (!pte_present(pte))
		return VMAMERGE_R_NONE;
	pfn = pte_pfn(pte);
	if (is_zero_pfn(pfn))
		return VMAMERGE_R_NONE;
	folio = page_folio(pfn_to_page(pfn));
	if (folio_test_large(folio))
		return VMAMERGE_R_NONE;
	vmamerge_folio_rewrite(folio, rw->delta, rw->new_mapping);
	if (rw->lock_small)
		folio_unlock(folio);
	rw->nr_small--;
	return VMAMERGE_R_NONE;
}

/* The PTEs of [@addr, @end) in the table *@pmd points to. */
static enum vmamerge_refusal vmamerge_rewrite_ptes(struct vmamerge_rewrite *rw,
						   pmd_t *pmd,
						   unsigned long addr,
						   unsigned long end)
{
	if (rw->committing)
		return vmamerge_ptes_each(rw->mm, pmd, addr, end,
					  vmamerge_commit_pte, rw,
					  &rw->refusal_addr);
	return vmamerge_ptes_each(rw->mm, pmd, addr, end,
				  vmamerge_rewrite_pte_fn, rw, &rw->refusal_addr);
}

/* A pmd that maps a THP (or the huge zero page), under the PMD lock. */
static enum vmamerge_refusal vmamerge_rewrite_huge(struct vmamerge_rewrite *rw,
						   pmd_t *pmd,
						   unsigned long addr)
{
	enum vmamerge_refusal r = VMAMERGE_R_NONE;
	struct page *page;
	spinlock_t *ptl;
	pmd_t pmdval;

	/* a PTE-mapped large folio the range does not map whole */
	if (rw->open_folio) {
		rw->refusal_addr = addr;
		return VMAMERGE_R_THP;
	}
	ptl = pmd_lock(rw->mm, pmd);
	pmdval = vmamerge_vg_pmdp_get(pmd);
	if (!pmd_present(pmdval) || !pmd_trans_huge(pmdval) ||
	    pmd_devmap(pmdval)) {
		/* split, zapped or under migration since we looked */
		r = VMAMERGE_R_BUSY;
	} else if (!vmamerge_vg_huge_zero_pmd(pmdval)) {
		page = pmd_page(pmdval);
		r = vmamerge_rewrite_present(rw, page_folio(page), page,
					     addr & PMD_MASK, true);
	}
	spin_unlock(ptl);
	if (r)
		rw->refusal_addr = addr;
	return r;
}

static enum vmamerge_refusal vmamerge_rewrite_pmd(struct vmamerge_rewrite *rw,
						  pmd_t *pmd,
						  unsigned long addr,
						  unsigned long end)
{
	pmd_t pmdval = vmamerge_vg_pmdp_get(pmd);

	if (pmd_none(pmdval))
		return VMAMERGE_R_NONE;
	if (!pmd_present(pmdval)) {
		/* a THP under migration (pmd migration entry) */
		rw->refusal_addr = addr;
		return VMAMERGE_R_MIGRATION;
	}
	if (pmd_devmap(pmdval)) {
		rw->refusal_addr = addr;
		return VMAMERGE_R_DEVICE;
	}
	if (pmd_trans_huge(pmdval))
		return rw->committing ? VMAMERGE_R_NONE :	/* listed */
					vmamerge_rewrite_huge(rw, pmd, addr);
	return vmamerge_rewrite_ptes(rw, pmd, addr, end);
}

/*
 * The upper levels: populated entries above the PTE level of a VMA's
 * range stay while we hold mmap_lock; anonymous memory has no PUD leaves.
 */
static enum vmamerge_refusal vmamerge_rewrite_pud(struct vmamerge_rewrite *rw,
						  pud_t *pud,
						  unsigned long addr,
						  unsigned long end)
{
	enum vmamerge_refusal r = VMAMERGE_R_NONE;
	pmd_t *pmd = pmd_offset(pud, addr);
	unsigned long next;

	for (; !r && addr < end; pmd++, addr = next) {
		next = pmd_addr_end(addr, end);
		r = vmamerge_rewrite_pmd(rw, pmd, addr, next);
	}
	return r;
}

static enum vmamerge_refusal vmamerge_rewrite_p4d(struct vmamerge_rewrite *rw,
						  p4d_t *p4d,
						  unsigned long addr,
						  unsigned long end)
{
	enum vmamerge_refusal r = VMAMERGE_R_NONE;
	pud_t *pud = pud_offset(p4d, addr);
	unsigned long next;
	pud_t pudval;

	for (; !r && addr < end; pud++, addr = next) {
		next = pud_addr_end(addr, end);
		pudval = READ_ONCE(*pud);
		if (pud_none(pudval))
			continue;
		if (!pud_present(pudval) || pud_leaf(pudval) ||
		    pud_bad(pudval))
			r = VMAMERGE_R_SPECIAL;
		else
			r = vmamerge_rewrite_pud(rw, pud, addr, next);
	}
	return r;
}

static enum vmamerge_refusal vmamerge_rewrite_walk(struct vmamerge_rewrite *rw)
{
	unsigned long addr = rw->vma->vm_start, end = rw->vma->vm_end;
	enum vmamerge_refusal r = VMAMERGE_R_NONE;
	unsigned long next, p4d_next;
	pgd_t *pgd;
	p4d_t *p4d;

	for (; !r && addr < end; addr = next) {
		pgd = pgd_offset(rw->mm, addr);
		next = pgd_addr_end(addr, end);
		if (pgd_none(READ_ONCE(*pgd)))
			continue;
		if (pgd_bad(READ_ONCE(*pgd)))
			return VMAMERGE_R_SPECIAL;
		p4d = p4d_offset(pgd, addr);
		for (; !r && addr < next; p4d++, addr = p4d_next) {
			p4d_next = p4d_addr_end(addr, next);
			if (p4d_none(READ_ONCE(*p4d)))
				continue;
			if (p4d_bad(READ_ONCE(*p4d)))
				return VMAMERGE_R_SPECIAL;
			r = vmamerge_rewrite_p4d(rw, p4d, addr, p4d_next);
		}
	}
	return r;
}

void vmamerge_rewrite_target(struct vmamerge_rewrite *rw, long delta,
			     struct anon_vma *to)
{
	rw->delta = delta;
	rw->new_mapping = to ? (unsigned long)to + PAGE_MAPPING_ANON : 0;
	/*
	 * Undoing a new anon_vma needs the old one: known when every folio
	 * must have it (vmamerge_check_rmap() refuses any other).
	 */
	rw->old_mapping = rw->only_anon_vma ?
		(unsigned long)rw->only_anon_vma + PAGE_MAPPING_ANON : 0;
	rw->in_walk = (delta || to) && (!to || rw->old_mapping);
	rw->lock_small = !!to;
}

/*
 * The second walk over the order-0 folios, with @delta and @mapping for
 * the ones the collect walk counted (vmamerge_commit_pte()).
 */
static void vmamerge_rewrite_rewalk(struct vmamerge_rewrite *rw, long delta,
				    unsigned long mapping)
{
	long saved_delta = rw->delta;
	unsigned long saved_mapping = rw->new_mapping;
	unsigned long saved_addr = rw->refusal_addr;
	enum vmamerge_refusal r;

	rw->delta = delta;
	rw->new_mapping = mapping;
	rw->committing = true;
	r = vmamerge_rewrite_walk(rw);
	rw->committing = false;
	rw->delta = saved_delta;
	rw->new_mapping = saved_mapping;
	rw->refusal_addr = saved_addr;
	/* the collect walk counted what this one must find */
	WARN_ON_ONCE(r || rw->nr_small);
}

/*
 * A refused collect walk that wrote as it went (@rw->in_walk) wrote the
 * first @rw->nr_small order-0 folios it met: write their old index and
 * anon_vma back, under the same locks and, for the anon_vma, the folio
 * locks it took (@rw->lock_small), before the caller drops any; one that
 * only locked them unlocks them.
 */
static void vmamerge_rewrite_undo(struct vmamerge_rewrite *rw)
{
	if (rw->nr_small && rw->in_walk)
		vmamerge_rewrite_rewalk(rw, -rw->delta,
					rw->new_mapping ? rw->old_mapping : 0);
	else if (rw->nr_small && rw->lock_small)
		vmamerge_rewrite_rewalk(rw, 0, 0);
	rw->nr_small = 0;
}

enum vmamerge_refusal vmamerge_rewrite_collect(struct vmamerge_rewrite *rw)
{
	enum vmamerge_refusal r;

	rw->nr_folios = 0;
	rw->nr_small = 0;
	rw->nr_pages = 0;
	rw->refusal_addr = 0;
	rw->open_folio = NULL;
	rw->root = rw->vma->anon_vma ? rw->vma->anon_vma->root : NULL;
	r = vmamerge_rewrite_walk(rw);
	/* the last large folio goes on past the VMA's end, or a hole follows */
	if (!r && rw->open_folio) {
		r = VMAMERGE_R_THP;
		rw->refusal_addr = rw->open_addr;
	}
	rw->open_folio = NULL;
	if (rw->lock_small && rw->nr_small)
		vmamerge_test_rewrite_hold();
	if (r) {
		vmamerge_rewrite_undo(rw);
		vmamerge_rewrite_release(rw);
	}
	rw->refusal = r;
	return r;
}

/* ---- the edges of a join ---- */

/*
 * An edge of a join: the address in @vma where the memory above joins the
 * memory below, and how far above it, where the join puts it, the PMD
 * that holds the edge ends - 0 when the edge is PMD-aligned there, or
 * when the joined VMA will not cover that PMD whole.
 */
struct vmamerge_edge {
	unsigned long edge;
	unsigned long room;
};

/*
 * A large folio of @size bytes whose linear range begins at @first: does
 * it begin below @e->edge, or begin in the edge's PMD (at the join's
 * destination) and reach past it?
 */
static enum vmamerge_refusal vmamerge_edge_folio(unsigned long first,
						 unsigned long size,
						 const struct vmamerge_edge *e)
{
	unsigned long above;

	if (first < e->edge)
		return VMAMERGE_R_THP;
	above = first - e->edge;
	if (above < e->room && above + size > e->room)
		return VMAMERGE_R_THP;
	return VMAMERGE_R_NONE;
}

/*
 * One PTE at or above @e->edge, under its PTE lock: a page of a large
 * folio whose linear range - the addresses its pages have under the VMA's
 * numbering, from its first page's on - begins below the edge, or begins
 * in the edge's PMD and reaches past it; or a migration entry (a folio in
 * flux: its size may be changing).
 */
static enum vmamerge_refusal vmamerge_edge_pte(unsigned long addr, pte_t pte,
					       const struct vmamerge_edge *e)
{
	struct folio *folio;
	unsigned long first;
	struct page *page;

	if (pte_none(pte))
		return VMAMERGE_R_NONE;
	if (!pte_present(pte))
		return is_migration_entry(pte_to_swp_entry(pte)) ?
		       VMAMERGE_R_MIGRATION : VMAMERGE_R_NONE;
	/*
	 * No pfn_valid(): a PTE that is not special in a VMA without
	 * VM_PFNMAP/VM_MIXEDMAP (vmamerge_vma_rewritable()) maps a page with
	 * a struct page - vm_normal_page()'s rule; the zero page is special.
	 * This runs for up to 1022 PTEs per joined edge: order-0 pages
	 * (nearly all) cost a PTE and a struct page read.
	 */
	if (pte_special(pte) || pte_devmap(pte))
		return VMAMERGE_R_NONE;
	page = pte_page(pte);
	folio = page_folio(page);
	if (likely(!folio_test_large(folio)))
		return VMAMERGE_R_NONE;
	/* the folio's first page would be folio_page_idx() pages below */
	first = addr - folio_page_idx(folio, page) * PAGE_SIZE;
	return vmamerge_edge_folio(first, folio_size(folio), e);
}

/*
 * A THP mapped whole by the PMD at @pmd_addr (or under migration: a PMD
 * migration entry), met at or above @e->edge, as vmamerge_edge_pte()
 * judges a folio mapped by PTEs.  It begins below the edge only where a
 * move cuts the moved range out inside it (a VMA never starts inside a
 * PMD mapping); off the PMD grid at the destination move_page_tables()
 * maps it by PTEs.  Either way it becomes the folio those rules refuse.
 */
static enum vmamerge_refusal vmamerge_edge_huge(unsigned long pmd_addr,
						const struct vmamerge_edge *e)
{
	return vmamerge_edge_folio(pmd_addr, HPAGE_PMD_SIZE, e);
}

static enum vmamerge_refusal vmamerge_edge_pte_fn(void *edge,
						  unsigned long addr, pte_t pte)
{
	return vmamerge_edge_pte(addr, pte, edge);
}

/*
 * vmamerge_edge_check - may the memory of @vma from @edge up be joined,
 * under one numbering, with memory below @edge?  @edge is @vma's start,
 * where a neighbour below joins, or the place inside it where a move cuts
 * the moved range out (the moved range then starts there); @dest is where
 * the join puts @edge (the move's destination; else @edge itself).
 *
 * Why: rmap finds the pages of a large folio mapped by PTEs by walking
 * the page tables of each VMA upwards from the address where the folio's
 * first page would be (vma_address(), clipped to vm_start), and
 * page_vma_mapped_walk() (6.1 and 6.12 alike) gives up at the first PMD
 * on the way that maps a THP (or holds a PMD migration entry): in the
 * stock kernel's numbering a folio's linear range never holds another
 * folio's PMD mapping before one of its own pages.  Two joins break that:
 *  - a folio mapped only in part (split, partly unmapped or moved) above
 *    @edge whose range begins below it: once the memory below continues
 *    our numbering, the walk starts below @edge, and a THP mapped there
 *    by a PMD, then or later, hides the folio's pages;
 *  - a folio whose range begins above @edge but inside the PMD that holds
 *    @edge at @dest, and reaches past that PMD (a THP moved off the PMD
 *    grid), when the join lets one VMA cover that whole PMD (@low, the
 *    lowest start the joined VMA can have, at or below the PMD's start):
 *    khugepaged may then collapse it - the folio's pages there are
 *    replaced, the walk for the rest starts inside the new THP's PMD and
 *    stops at once.  Before the join the VMA boundary at @edge kept the
 *    PMD from being collapsed; at a PMD-aligned @dest the join changes
 *    nothing there, and neither does a join whose VMA starts above the
 *    PMD's start (a one-page neighbour joining a THP moved 32 KiB past a
 *    PMD boundary).  Such a VMA can come to cover the PMD later only by
 *    growing down: by a join of ours, which passes this check again, or
 *    by a merge the stock logic makes on its own (same anon_vma, offsets
 *    that continue), which reaches the same layout without the module -
 *    a misaligned THP's VMA and the rest of its mapping moved below it
 *    (docs/findings.md).
 * Hidden pages cannot be unmapped by any rmap walk: migration leaves its
 * entries behind (kernel BUG at swapops.h in
 * migration_entry_wait_on_locked()), reclaim cannot unmap them.
 * Refused_thp; a migration entry above @edge is refused_migration.
 *
 * The memory below @edge needs no check: a folio mapped there whose range
 * reaches above @edge has its pages below, so the walk meets every one of
 * them before it gets past @edge - whatever is mapped above cannot hide
 * them (a page of it mapped above @edge is this check's case); one that
 * ends below @edge is replaced whole or not at all by a collapse of
 * @edge's PMD.
 *
 * Only PTEs within a PMD-sized folio of @edge, or of the end of its PMD,
 * can belong to such a folio; a THP mapped by a PMD there is judged as
 * the folio it becomes (vmamerge_edge_huge()).
 * mmap_lock held for writing, no other lock; takes the PTE locks.
 */
enum vmamerge_refusal vmamerge_edge_check(struct vm_area_struct *vma,
					  unsigned long edge, unsigned long dest,
					  unsigned long low)
{
	const unsigned long reach = (HPAGE_PMD_NR - 1) * PAGE_SIZE;
	struct vmamerge_edge e = {
		.edge = edge,
		.room = low <= (dest & PMD_MASK) ?
			(PMD_SIZE - (dest & ~PMD_MASK)) & ~PMD_MASK : 0,
	};
	unsigned long addr, end, next, stop;
	enum vmamerge_refusal r = VMAMERGE_R_NONE;
	pmd_t *pmd;
	pmd_t pmdval;

	if (!vma->anon_vma)
		return VMAMERGE_R_NONE;	/* no page of its own */
	/* every caller's VMAs are; vmamerge_edge_pte() relies on it */
	if (WARN_ON_ONCE(!vmamerge_vma_rewritable(vma)))
		return VMAMERGE_R_SPECIAL;
	addr = max(vma->vm_start, edge);
	end = min(vma->vm_end, edge + e.room + reach);
	for (; !r && addr < end; addr = next) {
		next = pmd_addr_end(addr, end);
		pmd = vmamerge_pmd_lookup(vma->vm_mm, addr);
		if (!pmd)
			continue;
		pmdval = vmamerge_vg_pmdp_get(pmd);
		if (pmd_none(pmdval) || pmd_devmap(pmdval))
			continue;
		/* one whole THP (mapped, or under migration) */
		if (!pmd_present(pmdval) || pmd_trans_huge(pmdval))
			r = vmamerge_edge_huge(addr & HPAGE_PMD_MASK, &e);
		else
			r = vmamerge_ptes_each(vma->vm_mm, pmd, addr, next,
					       vmamerge_edge_pte_fn, &e, &stop);
	}
	return r;
}

/*
 * How often a transient refusal (a migration entry, a folio someone else
 * holds locked, a pmd that changed, a second root held by others) is
 * retried, and how long we sleep in between - with every lock but
 * mmap_lock dropped: migration and reclaim need the folio lock and the
 * anon_vma lock, never this mm's mmap_lock.
 */
#define VMAMERGE_REWRITE_TRIES		8
#define VMAMERGE_REWRITE_WAIT_US	200

enum vmamerge_refusal
vmamerge_rewrite_collect_locked(struct vmamerge_rewrite *rw,
				vmamerge_rewrite_lock_t lock,
				vmamerge_rewrite_unlock_t unlock)
{
	enum vmamerge_refusal r;
	int tries;

	for (tries = 1; ; tries++) {
		r = lock(rw);
		if (!r) {
			r = vmamerge_rewrite_collect(rw);
			if (!r)
				return r;
			unlock(rw);
		}
		/* the folio list was full: room for every page, once */
		if (rw->list_full) {
			if (!vmamerge_rewrite_grow(rw, rw->pages, GFP_KERNEL))
				return VMAMERGE_R_NOMEM;
			rw->list_full = false;
			tries--;
			continue;
		}
		if (!vmamerge_refusal_transient(r) ||
		    tries >= VMAMERGE_REWRITE_TRIES)
			return r;
		vmamerge_count(rw->mm, VMAMERGE_C_REWRITE_RETRIES, 1);
		usleep_range(VMAMERGE_REWRITE_WAIT_US,
			     2 * VMAMERGE_REWRITE_WAIT_US);
	}
}

static void vmamerge_rewrite_drop(struct folio *folio)
{
	folio_unlock(folio);
	folio_put(folio);
}

/*
 * The new index (old + @delta) and, with @to, the new anon_vma are written
 * once per folio (a large folio's pages take both from the head: index
 * from the folio, mapping from its first page), with the root anon_vma(s)
 * held for writing.  A folio's mapping names its anon_vma with
 * PAGE_MAPPING_ANON set.  Order-0 folios mapped by a PTE are written
 * under the PTE lock - and, for a new anon_vma, under the folio lock the
 * collect walk took and the second walk drops: by the collect walk as it
 * checks them - and written back by it if it is refused - or, where their
 * old anon_vma is not known, by a second walk at the commit; the listed
 * ones - large folios, swap-cache folios no PTE maps - at the commit,
 * under their folio lock.
 *
 * Who writes them otherwise, and what keeps each away (both builds):
 *  - a fault of this mm (folio_move_anon_rmap() on a write fault reusing
 *    the page, a new anon rmap), fork, KSM's scan (mmap_lock for reading
 *    of this mm), userfaultfd's UFFDIO_MOVE (6.12: mmap_lock or both
 *    VMAs' locks): excluded by mmap_lock (write) and the VMA's write lock;
 *  - migration (move_to_new_folio() copies both to the new folio), split,
 *    reclaim: under the folio lock, after an rmap walk unmapped the folio
 *    - excluded by the root's rwsem while it walks, and by the folio lock
 *    we require unheld (vmamerge_rewrite_present()) between its walks:
 *    a walk without TTU_SYNC can skip a present PTE of ours that was
 *    momentarily none.  For a new anon_vma we hold the folio lock from
 *    the check to the commit or undo: migration pins the anon_vma it
 *    reads under that lock (folio_get_anon_vma()) for its restore walk,
 *    which must find the same one (top of file).  That is why a folio
 *    no PTE maps (in the swap cache only: migration needs no walk for
 *    it) and a large folio (split and migration also read its pages'
 *    state under the folio lock) are rewritten locked;
 *  - freeing clears mapping: a folio our PTE maps stays allocated until
 *    that PTE goes (munmap, madvise, the OOM reaper: this mm's mmap_lock;
 *    rmap unmapping: the root's rwsem).
 *
 * Who reads them, and what keeps each away from a half-done rewrite:
 *  - folio->index: rmap walks (rmap_walk_anon() and so folio_referenced(),
 *    try_to_unmap(), try_to_migrate(), page_idle, DAMON; vma_address() and
 *    page_vma_mapped_walk() inside them) hold the anon_vma lock: excluded
 *    by the root's rwsem.  folio_within_vma()/folio_within_range() (6.12:
 *    madvise cold/pageout, mlock, mempolicy, on large folios) run under
 *    this mm's mmap_lock or the VMA's lock: excluded by ours.  Split,
 *    migration, KSM and swap-in (ksm_might_need_to_copy()) read and copy
 *    it after the rmap walk or fault above.  dump_page() prints it.
 *  - folio->mapping: folio_lock_anon_vma_read() and folio_get_anon_vma()
 *    read it without any lock (reclaim's folio_referenced(), page_idle,
 *    DAMON: each walks the anon_vma it read under RCU or its own
 *    reference, never one pinned by someone else; and migration and
 *    try_to_unmap() under the folio lock, which a rewrite of the mapping
 *    holds from its check to its commit or undo, so those read the old
 *    value before our check or the new one after the commit): the
 *    lockless ones may see the old
 *    anon_vma - and then, once they have its lock, walk a tree that no
 *    longer holds our VMA and find nothing, the outcome of a walk that
 *    raced with an unmap.  An emptied old anon_vma is put only after an
 *    RCU grace period (transplant.c), so the pointer they read stays
 *    valid.  A rewrite the collect walk undoes is the same race the other
 *    way round: a reader may see the new anon_vma (the owner's, alive
 *    while the owner VMA is) and walk its tree, where
 *    page_vma_mapped_walk() finds no PTE of that tree's VMAs mapping the
 *    folio.  The PAGE_MAPPING_ANON bit that folio_test_anon(), PageAnon()
 *    and /proc/kpageflags read locklessly is set in the old and the new
 *    value.
 */
void vmamerge_rewrite_commit(struct vmamerge_rewrite *rw)
{
	unsigned long i;

	/* the collect walk's order-0 folios: written, or to write; unlocked */
	if (rw->nr_small && rw->in_walk && rw->lock_small)
		vmamerge_rewrite_rewalk(rw, 0, 0);
	else if (rw->nr_small && !rw->in_walk && (rw->delta || rw->new_mapping))
		vmamerge_rewrite_rewalk(rw, rw->delta, rw->new_mapping);
	rw->nr_small = 0;
	for (i = 0; i < rw->nr_folios; i++) {
		vmamerge_folio_rewrite(rw->folios[i], rw->delta,
				       rw->new_mapping);
		vmamerge_rewrite_drop(rw->folios[i]);
	}
	rw->nr_folios = 0;
}

void vmamerge_rewrite_release(struct vmamerge_rewrite *rw)
{
	unsigned long i;

	for (i = 0; i < rw->nr_folios; i++)
		vmamerge_rewrite_drop(rw->folios[i]);
	rw->nr_folios = 0;
}
