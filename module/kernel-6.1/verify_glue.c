// SPDX-License-Identifier: GPL-2.0
/*
 * Glue for Debian's 6.1 kernel (6.1.192-3): what the rmap verifier
 * (module/verify.c) needs to know about this build's page tables and swap
 * cache.  Non-exported symbols used here are listed in module/ksyms.list.
 */
#include <linux/mm.h>
#include <linux/huge_mm.h>
#include <linux/pagemap.h>
#include <linux/swap.h>
#include <linux/swapops.h>

#include "verify.h"

/*
 * The swap cache (mm/swap.h, not shipped in the header package; the
 * array is declared in verify.h): one
 * address_space per 2^14 swap slots of each device, indexed by the whole
 * swap offset in 6.1.
 */
#define VMAMERGE_SWAP_SPACE_SHIFT	14

pmd_t vmamerge_vg_pmdp_get(pmd_t *pmd)
{
	/* x86_64: a pmd is one naturally aligned word (no pmd_read_atomic) */
	return READ_ONCE(*pmd);
}

/*
 * 6.1 has no lockless page-table removal: under mmap_lock held for
 * reading, a pmd that points to a page table keeps pointing to it
 * (collapse and retract_page_tables() need mmap_lock for writing), which
 * is what the stock walkers rely on after pmd_trans_unstable().
 */
pte_t *__vmamerge_vg_pte_map(pmd_t *pmd, unsigned long addr, pmd_t *pmdvalp)
{
	pmd_t pmdval = READ_ONCE(*pmd);

	*pmdvalp = pmdval;
	if (pmd_none(pmdval) || !pmd_present(pmdval) ||
	    pmd_trans_huge(pmdval) || pmd_devmap(pmdval) || pmd_bad(pmdval))
		return NULL;
	return pte_offset_map(pmdvalp, addr);
}

void vmamerge_vg_pte_unmap(pte_t *pte) __releases(RCU)
{
	pte_unmap(pte);
	__release(RCU);	/* sparse only: 6.1 maps without RCU, see verify.h */
}

bool vmamerge_vg_huge_zero_pmd(pmd_t pmd)
{
	return is_huge_zero_pmd(pmd);
}

struct folio *vmamerge_vg_swapcache_folio(swp_entry_t entry)
{
	struct address_space *spaces = READ_ONCE(swapper_spaces[swp_type(entry)]);

	if (!spaces)
		return NULL;
	return filemap_get_folio(spaces + (swp_offset(entry) >>
					   VMAMERGE_SWAP_SPACE_SHIFT),
				 swp_offset(entry));
}

swp_entry_t vmamerge_vg_folio_swap(struct folio *folio)
{
	return folio_swap_entry(folio);
}
