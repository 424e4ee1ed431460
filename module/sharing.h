/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmamerge: the per-page part of the sharing check (sharing.c), inline
 * so that the page rewrite walker (page_rewrite.c) runs it for every
 * order-0 folio without a call: these few loads and compares are most of
 * what a rewrite costs per page (docs/design.md, "The rewrite's cost per
 * page").  Locking: sharing.c.
 */
#ifndef _VMAMERGE_SHARING_H
#define _VMAMERGE_SHARING_H

#include <linux/mm.h>
#include <linux/rmap.h>

#include "vmamerge.h"
#include "page_rewrite.h"

/*
 * The folio's anon_vma must belong to the VMA's family and its index must
 * match the VMA's linear index at @addr for page @idx: anything else means
 * rmap is already inconsistent here, and a rewrite would hide it.
 */
static inline enum vmamerge_refusal
vmamerge_check_rmap(struct vmamerge_rewrite *rw, struct folio *folio,
		    unsigned long idx, unsigned long addr)
{
	unsigned long mapping = (unsigned long)folio->mapping;
	struct anon_vma *av;

	if ((mapping & PAGE_MAPPING_FLAGS) != PAGE_MAPPING_ANON)
		return VMAMERGE_R_UNSTABLE;
	av = (struct anon_vma *)(mapping - PAGE_MAPPING_ANON);
	if (rw->only_anon_vma && av != rw->only_anon_vma)
		return VMAMERGE_R_UNSTABLE;
	if (av->root != rw->root)
		return VMAMERGE_R_UNSTABLE;
	if (folio->index + idx != linear_page_index(rw->vma, addr))
		return VMAMERGE_R_UNSTABLE;
	return VMAMERGE_R_NONE;
}

/* KSM and non-anonymous pages are never ours to rewrite. */
static inline enum vmamerge_refusal
vmamerge_check_kind(struct folio *folio)
{
	if (folio_test_ksm(folio))
		return VMAMERGE_R_KSM;
	if (!folio_test_anon(folio))
		return VMAMERGE_R_SPECIAL;
	return VMAMERGE_R_NONE;
}

/*
 * Is @page, which the walker holds mapped by one PTE of this VMA, mapped
 * by no other PTE anywhere?  A page's _mapcount counts its PTE mappings
 * minus one on both builds (6.1 and 6.12 keep it per page for large
 * folios too); a PMD mapping of the folio is counted in the folio's
 * entire mapcount instead (6.1's PG_double_map bias on every page exists
 * only while that is non-zero, and the first page's check requires it to
 * be zero).  O(1) per page on both builds, where 6.1's folio_mapcount()
 * of a large folio sums all its pages.
 */
static inline bool vmamerge_page_mapped_once(struct page *page)
{
	return atomic_read(&page->_mapcount) == 0;
}

/* A further page of a large folio mapped by PTEs, under its PTE lock. */
static inline enum vmamerge_refusal
vmamerge_check_large_next(struct page *page)
{
	return vmamerge_page_mapped_once(page) ? VMAMERGE_R_NONE :
						 VMAMERGE_R_SHARED;
}

/* A kind we rewrite, and no pin: what every present folio must be. */
static inline enum vmamerge_refusal
vmamerge_check_unpinned(struct folio *folio)
{
	enum vmamerge_refusal r = vmamerge_check_kind(folio);

	if (r)
		return r;
	/* the pin may be a DMA target that a later fault must not copy */
	if (folio_maybe_dma_pinned(folio))
		return VMAMERGE_R_PINNED;
	return VMAMERGE_R_NONE;
}

/*
 * The part of vmamerge_check_present() that needs no folio lock: @folio is
 * mapped at @addr by @rw->vma whole (order 0 by one PTE, or by a PMD) -
 * is it anonymous, not KSM, not pinned, mapped once, and does rmap know
 * it where it is?  Under the PTE or PMD lock.
 */
static inline enum vmamerge_refusal
vmamerge_check_mapped(struct vmamerge_rewrite *rw, struct folio *folio,
		      unsigned long addr)
{
	enum vmamerge_refusal r = vmamerge_check_unpinned(folio);

	if (r)
		return r;
	if (folio_mapcount(folio) != 1)
		return VMAMERGE_R_SHARED;
	return vmamerge_check_rmap(rw, folio, 0, addr);
}

#endif /* _VMAMERGE_SHARING_H */
