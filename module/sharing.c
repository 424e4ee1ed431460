// SPDX-License-Identifier: GPL-2.0
/*
 * The sharing check: may the rmap metadata of an anonymous folio be
 * rewritten for one VMA?  Only when this VMA is the folio's one and only
 * user - every other kind of reference either reads the index (another
 * mapping, a swap PTE somewhere that will map the swap-cache folio) or
 * is of a kind we do not rewrite (KSM, pins, device memory).  What cannot
 * be decided is refused; the refusal names the reason.
 *
 * Called by the page rewrite walker (page_rewrite.c) with the folio
 * locked - but vmamerge_check_mapped() for an order-0 folio that was not
 * in the swap cache and not locked by anyone when the walker looked: it
 * reads no swap state -
 * under the PTE or PMD lock that maps it (or, for a swap-cache folio, the
 * lock of the swap PTE naming its slot), under the root anon_vma's rwsem
 * held for writing and mmap_lock held for writing.
 * folio_mapcount() counts a PMD mapping once on both builds (6.1: entire
 * mappings plus each page's own, mm/util.c; 6.12: _large_mapcount);
 * __swap_count() is the slot's count of swap PTEs without SWAP_HAS_CACHE
 * (mm/swapfile.c, both).
 *
 * Under these a mapcount of one cannot grow: a new mapping of an anonymous
 * folio comes from fork (mmap_lock of this mm), a fault of this mm (same),
 * a swap-in elsewhere (needs a swap PTE elsewhere: checked for a folio in
 * the swap cache; one that reclaim adds to it after we looked gets a swap
 * PTE only from an rmap unmap, excluded by the rwsem) or KSM (its scan
 * holds this mm's mmap_lock, and the folio lock).  And a mapcount of one
 * proves the folio exclusive only while nobody holds it locked:
 * migration entries do not count in it, and a migration between its
 * unmap and restore walks (folio locked) may have turned every other
 * mapping into one and skipped ours - hence the walker's unlocked check
 * requires the folio unlocked (page_rewrite.c, vmamerge_rewrite_present()).
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/rmap.h>
#include <linux/swap.h>
#include <linux/swapops.h>

#include "vmamerge.h"
#include "page_rewrite.h"
#include "sharing.h"
#include "verify.h"

/*
 * The first page of a large folio mapped by PTEs.  It is rewritten whole,
 * so every one of its pages must be mapped exactly once, by this VMA, at
 * its linear address: here, the folio starts at this page (else it began
 * before the range - straddling the VMA's start - or its first page is
 * not mapped here), no PMD maps it anywhere and this page is mapped once;
 * the walker then requires each further page to be mapped by the next
 * PTE and checks it with vmamerge_check_large_next() (page_rewrite.c).
 * One whose pages are not all there - the VMA's end cuts it, a PTE in
 * between is empty or a swap entry - is refused by the walker.  A large
 * folio in the swap cache keeps its slots named by swap PTEs we would
 * have to check one by one: refused.
 */
static enum vmamerge_refusal vmamerge_check_large_first(struct folio *folio,
							struct page *page)
{
	if (folio_page_idx(folio, page) != 0)
		return VMAMERGE_R_THP;
	if (folio_test_swapcache(folio))
		return VMAMERGE_R_THP;
	if (folio_entire_mapcount(folio) || !vmamerge_page_mapped_once(page))
		return VMAMERGE_R_SHARED;
	return VMAMERGE_R_NONE;
}

enum vmamerge_refusal vmamerge_check_present(struct vmamerge_rewrite *rw,
					     struct folio *folio,
					     struct page *page,
					     unsigned long addr,
					     bool pmd_mapped)
{
	enum vmamerge_refusal r;

	if (folio_test_large(folio) && !pmd_mapped) {
		r = vmamerge_check_unpinned(folio);
		if (!r)
			r = vmamerge_check_large_first(folio, page);
		return r ?: vmamerge_check_rmap(rw, folio, 0, addr);
	}
	r = vmamerge_check_mapped(rw, folio, addr);
	if (r || !folio_test_swapcache(folio))
		return r;
	/* its slot must not be named by a swap PTE anywhere */
	if (folio_test_large(folio))
		return VMAMERGE_R_THP;
	if (__swap_count(vmamerge_vg_folio_swap(folio)))
		return VMAMERGE_R_SHARED;
	return VMAMERGE_R_NONE;
}

enum vmamerge_refusal vmamerge_check_swapcache(struct vmamerge_rewrite *rw,
					       struct folio *folio,
					       swp_entry_t entry,
					       unsigned long addr)
{
	swp_entry_t first = vmamerge_vg_folio_swap(folio);

	if (folio_test_large(folio))
		return VMAMERGE_R_THP;
	/* deleted from the swap cache, or the slot reused, since the lookup */
	if (!folio_test_swapcache(folio) || swp_type(first) != swp_type(entry) ||
	    swp_offset(first) != swp_offset(entry))
		return VMAMERGE_R_BUSY;
	/* read in but not mapped yet: swap-in sets mapping and index */
	if (!folio_test_anon(folio))
		return VMAMERGE_R_NONE;
	if (folio_test_ksm(folio))
		return VMAMERGE_R_KSM;
	if (folio_maybe_dma_pinned(folio))
		return VMAMERGE_R_PINNED;
	/* mapped by someone else while our PTE still names the slot */
	if (folio_mapcount(folio))
		return VMAMERGE_R_SHARED;
	return vmamerge_check_rmap(rw, folio, 0, addr);
}
