// SPDX-License-Identifier: GPL-2.0
/*
 * Glue for Debian's 6.12 kernel (6.12.117-1~deb12u1): what the rmap
 * verifier (module/verify.c) needs to know about this build's page tables
 * and swap cache.  Non-exported symbols used here are listed in
 * module/ksyms.list.
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
 * address_space per 2^14 swap slots of each device, indexed by the offset
 * within that space (swap_cache_index()).
 */
#define VMAMERGE_SWAP_SPACE_SHIFT	14
#define VMAMERGE_SWAP_SPACE_MASK	((1UL << VMAMERGE_SWAP_SPACE_SHIFT) - 1)

pmd_t vmamerge_vg_pmdp_get(pmd_t *pmd)
{
	return pmdp_get_lockless(pmd);
}

/*
 * 6.12 may remove or replace a page table without mmap_lock (khugepaged's
 * retract_page_tables() under the PTE lock): __pte_offset_map() returns
 * NULL for anything but a table and holds rcu_read_lock() on success so
 * that the table is not freed before the caller locked and rechecked it.
 */
pte_t *__vmamerge_vg_pte_map(pmd_t *pmd, unsigned long addr, pmd_t *pmdvalp)
{
	return __pte_offset_map(pmd, addr, pmdvalp);
}

void vmamerge_vg_pte_unmap(pte_t *pte) __releases(RCU)
{
	pte_unmap(pte);
}

bool vmamerge_vg_huge_zero_pmd(pmd_t pmd)
{
	return is_huge_zero_pmd(pmd);
}

struct folio *vmamerge_vg_swapcache_folio(swp_entry_t entry)
{
	struct address_space *spaces = READ_ONCE(swapper_spaces[swp_type(entry)]);
	struct folio *folio;

	if (!spaces)
		return NULL;
	folio = filemap_get_folio(spaces + (swp_offset(entry) >>
					    VMAMERGE_SWAP_SPACE_SHIFT),
				  swp_offset(entry) & VMAMERGE_SWAP_SPACE_MASK);
	return IS_ERR(folio) ? NULL : folio;
}

swp_entry_t vmamerge_vg_folio_swap(struct folio *folio)
{
	return folio->swap;
}
