/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmamerge: the rmap-invariant verifier (verify.c) and the few helpers
 * each kernel series provides for it (kernel-<series>/verify_glue.c).
 */
#ifndef _VMAMERGE_VERIFY_H
#define _VMAMERGE_VERIFY_H

#include <linux/mm.h>
#include <linux/swap.h>

/*
 * The verifier itself, vmamerge_verify_mm(), is declared in vmamerge.h.
 * Per-kernel helpers (kernel-<series>/verify_glue.c):
 */

/*
 * The pmd that maps @addr in @mm, or NULL if no page table reaches it
 * (verify.c).  mmap_lock held.
 */
pmd_t *vmamerge_pmd_lookup(struct mm_struct *mm, unsigned long addr);

/* A lockless snapshot of *@pmd, as the series' page walkers take it. */
pmd_t vmamerge_vg_pmdp_get(pmd_t *pmd);

/*
 * vmamerge_vg_pte_map - map the page table *@pmd points to, unlocked.
 * Returns the entry of @addr and the pmd value used in *@pmdvalp, or NULL
 * when *@pmd is not (or no longer) a page table.  The caller locks
 * pte_lockptr(mm, pmdvalp), checks that *@pmd still equals *@pmdvalp,
 * and ends with vmamerge_vg_pte_unmap().  6.12 maps under rcu_read_lock()
 * (released by the unmap), 6.1 holds nothing; for sparse, both look like
 * a conditional acquire of RCU and its release.
 */
pte_t *__vmamerge_vg_pte_map(pmd_t *pmd, unsigned long addr, pmd_t *pmdvalp);
#define vmamerge_vg_pte_map(pmd, addr, pmdvalp)				\
({									\
	pte_t *__pte;							\
	__cond_lock(RCU, __pte = __vmamerge_vg_pte_map(pmd, addr, pmdvalp)); \
	__pte;								\
})
void vmamerge_vg_pte_unmap(pte_t *pte) __releases(RCU);

/* mm/swap_state.c, for the glue's swap-cache lookup (same in 6.1, 6.12) */
extern struct address_space *swapper_spaces[];

/* Does @pmd map the huge zero page? */
bool vmamerge_vg_huge_zero_pmd(pmd_t pmd);

/*
 * vmamerge_vg_swapcache_folio - the swap-cache folio holding @entry, with
 * a reference, or NULL.  Does not sleep (callable under the PTE lock);
 * the caller's swap PTE of @entry, read under that lock, keeps the swap
 * device and its address space alive.
 */
struct folio *vmamerge_vg_swapcache_folio(swp_entry_t entry);

/* The first swap entry of a swap-cache @folio (stable under its lock). */
swp_entry_t vmamerge_vg_folio_swap(struct folio *folio);

#endif /* _VMAMERGE_VERIFY_H */
