// SPDX-License-Identifier: GPL-2.0
/*
 * VMAMERGE_IOC_VERIFY: check the rmap invariants of a live process
 * (module/uapi/vmamerge.h lists them; docs/design.md, "The rmap
 * verifier", explains the choices).
 *
 * Locks, in the kernel's order: mmap_lock (read) of the target for the
 * whole call; per VMA, first the root anon_vma's rwsem (read) for the
 * chain and interval-tree checks, released before the page walk, which
 * takes one PTE (or PMD) lock at a time and, under it, only trylocks
 * folios.  Nothing here allocates memory or sleeps under a spinlock.
 *
 * The target keeps running while we look: other threads fault, reclaim
 * swaps out, migration and KSM replace PTEs, forked relatives change
 * their VMAs in shared anon_vma trees.  Every check reads state that the
 * lock held at that moment makes stable (each race is described where it
 * is handled), and what cannot be pinned down - a PTE under migration,
 * a swap-cache folio someone else holds locked - is skipped, not guessed:
 * a false positive would be worse than a missed page.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/hugetlb.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/sched/signal.h>
#include <linux/swap.h>
#include <linux/swapops.h>

#include "vmamerge.h"
#include "verify.h"

/*
 * Testing only: added to every expected (linear) page index, so that the
 * tests can prove that an INDEX violation is found and reported exactly.
 */
static int test_verify_skew;
module_param(test_verify_skew, int, 0600);
MODULE_PARM_DESC(test_verify_skew,
		 "testing only: add N to every expected page index of the verifier");

/* anon_vma trees already walked in this call (a small recent-first ring) */
#define VMAMERGE_VERIFY_SEEN	32
/* chain entries remembered per VMA; a longer chain is checked, not kept */
#define VMAMERGE_VERIFY_CHAIN	16
/*
 * num_children is checked for trees of at most VMAMERGE_VERIFY_KIDS_NODES
 * VMAs with at most VMAMERGE_VERIFY_KIDS distinct children (the dedup is
 * quadratic; a torture's family of many forked processes is skipped).
 */
#define VMAMERGE_VERIFY_KIDS	64
#define VMAMERGE_VERIFY_KIDS_NODES	256
/* how often a PMD that changed under us is looked at again */
#define VMAMERGE_VERIFY_RETRIES	4

struct vmamerge_vctx {
	struct mm_struct *mm;
	struct vmamerge_verify *v;
	struct vm_area_struct *vma;	/* the VMA being checked */
	struct anon_vma *root;		/* vma->anon_vma->root */
	long skew;			/* test_verify_skew of this call */
	struct anon_vma *seen[VMAMERGE_VERIFY_SEEN];
	unsigned int next_seen;
	/* the anon_vmas of c->vma's chain; nr_chain 0: too long, not kept */
	struct anon_vma *chain[VMAMERGE_VERIFY_CHAIN];
	unsigned int nr_chain;
	/* scratch of vmamerge_family_note() */
	struct anon_vma *kids[VMAMERGE_VERIFY_KIDS];
};

/* Is @av one of the @n anon_vmas in @set? */
static bool vmamerge_av_in(struct anon_vma *const *set, unsigned int n,
			   const struct anon_vma *av)
{
	while (n--)
		if (set[n] == av)
			return true;
	return false;
}

static unsigned long vmamerge_last_pgoff(struct vm_area_struct *vma)
{
	return vma->vm_pgoff + vma_pages(vma) - 1;
}

/* Count a violation; the first one is described in the out fields. */
static __printf(6, 7)
void vmamerge_violation(struct vmamerge_vctx *c, u32 kind, unsigned long addr,
			u64 expected, u64 found, const char *fmt, ...)
{
	struct vmamerge_verify *v = c->v;
	struct vm_area_struct *vma = c->vma;
	va_list ap;
	int n;

	if (v->nr_violations++)
		return;
	v->kind = kind;
	v->addr = addr;
	v->vma_start = vma->vm_start;
	v->vma_end = vma->vm_end;
	v->vma_pgoff = vma->vm_pgoff;
	v->expected = expected;
	v->found = found;
	va_start(ap, fmt);
	n = vscnprintf(v->msg, sizeof(v->msg), fmt, ap);
	va_end(ap);
	scnprintf(v->msg + n, sizeof(v->msg) - n,
		  " (vma %#lx-%#lx pgoff %#lx)", vma->vm_start, vma->vm_end,
		  vma->vm_pgoff);
}

/* ---- pages ---- */

/*
 * The first index violation of a call, unless injected by
 * test_verify_skew, goes to the kernel log with the folio's state (how
 * it was found, dump_page()), which the 128 bytes of the report cannot
 * carry: an index that disagrees with its VMA means rmap cannot find the
 * page, and the state tells which path left it so.
 */
static void vmamerge_index_report(struct vmamerge_vctx *c, unsigned long addr,
				  struct folio *folio, bool swapcache)
{
	if (c->skew || c->v->nr_violations)
		return;
	pr_warn("vmamerge: verify: index of the %s folio at %#lx (vma %#lx-%#lx pgoff %#lx) disagrees\n",
		swapcache ? "swap-cache" : "mapped", addr, c->vma->vm_start,
		c->vma->vm_end, c->vma->vm_pgoff);
	dump_page(&folio->page, "vmamerge verify: index");
}

/*
 * vmamerge_check_folio - check page @idx of @folio, met at @addr; @nr is
 * how many pages the check stands for (a PMD-mapped THP: all of them).
 *
 * The caller holds what keeps @folio's mapping and index stable: the PTE
 * or PMD lock of a present entry (installing, moving or KSM-converting an
 * anonymous folio changes the entry under that lock, or sets mapping
 * before the entry is made visible), or the folio lock of a swap-cache
 * folio.  mapping is read once, so a folio that KSM is converting is seen
 * either as anonymous or as KSM, both consistent.  The anon_vma a mapped
 * folio points to is alive: it is the anon_vma of a VMA that mapped it
 * exclusively, or the root (6.1 __page_set_anon_rmap(), 6.12
 * __folio_set_anon()), and a family's anon_vmas live as long as a VMA of
 * theirs maps the page.
 */
static void vmamerge_check_folio(struct vmamerge_vctx *c, unsigned long addr,
				 struct folio *folio, unsigned long idx,
				 unsigned long nr, bool swapcache)
{
	unsigned long mapping = (unsigned long)READ_ONCE(folio->mapping);
	struct vm_area_struct *vma = c->vma;
	struct vmamerge_verify *v = c->v;
	struct anon_vma *av, *root;
	pgoff_t index, linear;

	if (!(mapping & PAGE_MAPPING_ANON)) {
		/*
		 * Page cache of a private file mapping (or a special
		 * mapping's page) is legitimate; a fresh swap-cache folio
		 * has no mapping until it is mapped.
		 */
		if (swapcache || !vma_is_anonymous(vma))
			return;
		v->nr_pages += nr;
		vmamerge_violation(c, VMAMERGE_VIOL_NOT_ANON, addr, 0, mapping,
				   "page at %#lx is not anonymous (mapping flags %#lx)",
				   addr, mapping & PAGE_MAPPING_FLAGS);
		return;
	}
	v->nr_pages += nr;
	if (swapcache)
		v->nr_swapcache += nr;
	/* KSM: mapping is a stable node, index belongs to KSM: count only */
	if ((mapping & PAGE_MAPPING_FLAGS) == PAGE_MAPPING_KSM)
		return;
	/*
	 * A small swap-cache folio met through a swap PTE need not fit this
	 * VMA: swap-in maps it here only if its anon_vma root and index match
	 * the VMA and address, and maps a copy otherwise
	 * (ksm_might_need_to_copy(), called by do_swap_page() and unuse_pte()
	 * on both builds).  The stock kernel relies on that: a KSM page that
	 * two addresses mapped loses its KSM state when it is swapped out,
	 * and the first address to fault it back in gives the new folio its
	 * own index, which the other address's swap PTE still reaches.  A
	 * large one is mapped without that check on 6.12: it must fit.
	 */
	if (swapcache && !folio_test_large(folio))
		return;

	av = (struct anon_vma *)(mapping - PAGE_MAPPING_ANON);
	root = READ_ONCE(av->root);
	if (root != c->root)
		vmamerge_violation(c, VMAMERGE_VIOL_ANON_ROOT, addr, 0, 0,
				   "folio's anon_vma root %p != vma's %p at %#lx",
				   root, c->root, addr);
	/*
	 * rmap finds the page from its anon_vma's tree only if the VMA has
	 * an entry there: a relative's anon_vma (same root) is not enough.
	 */
	else if (c->nr_chain && !vmamerge_av_in(c->chain, c->nr_chain, av))
		vmamerge_violation(c, VMAMERGE_VIOL_ANON_ROOT, addr, 0, 0,
				   "folio's anon_vma %p is not in the vma's chain at %#lx",
				   av, addr);

	index = READ_ONCE(folio->index) + idx;
	linear = linear_page_index(vma, addr) + c->skew;
	if (index != linear) {
		vmamerge_index_report(c, addr, folio, swapcache);
		vmamerge_violation(c, VMAMERGE_VIOL_INDEX, addr, linear, index,
				   "index %#lx != linear %#lx at %#lx",
				   index, linear, addr);
	}
}

/*
 * A swap PTE, read under its PTE lock: that PTE holds a reference on the
 * swap slot, so the slot cannot be freed and reused, and swapoff cannot
 * tear the swap cache down before it has replaced this PTE under the same
 * lock.  The folio found for the slot is its current content.  We only
 * trylock it (the folio lock ranks above the PTE lock; a held lock means
 * someone is working on it: skip) and recheck, under its lock, that it is
 * still in the swap cache for this slot - it may have been deleted from it
 * after the lookup.  Under the folio lock, mapping and index are stable
 * (swap-in sets them with the folio locked).
 */
static void vmamerge_verify_swap(struct vmamerge_vctx *c, unsigned long addr,
				 swp_entry_t entry)
{
	struct folio *folio = vmamerge_vg_swapcache_folio(entry);
	swp_entry_t first;
	unsigned long idx;

	if (!folio)
		return;
	if (!folio_trylock(folio))
		goto put;
	first = vmamerge_vg_folio_swap(folio);
	idx = swp_offset(entry) - swp_offset(first);
	if (folio_test_swapcache(folio) && swp_type(first) == swp_type(entry) &&
	    idx < folio_nr_pages(folio))
		vmamerge_check_folio(c, addr, folio, idx, 1, true);
	folio_unlock(folio);
put:
	/* may free the folio: fine under a spinlock (mincore does it too) */
	folio_put(folio);
}

/* One PTE, read under its PTE lock. */
/*
 * A migration entry, under its PTE lock.  Migration and THP split install
 * them with the folio locked and remove them (remove_migration_ptes(),
 * through rmap) before they unlock it; every user of one relies on that
 * (pfn_swap_entry_to_page() BUGs otherwise).  One whose page is unlocked
 * was left behind: rmap did not find this PTE - the VMA was missing from
 * the tree of the folio's anon_vma, or its offset did not match the
 * index - and the next fault here BUGs.  The smp_rmb() pairs with a
 * split turning tail pages into folios, as in pfn_swap_entry_to_page().
 */
static void vmamerge_verify_migration(struct vmamerge_vctx *c,
				      unsigned long addr, swp_entry_t entry)
{
	struct page *page = pfn_to_page(swp_offset_pfn(entry));

	smp_rmb();	/* a split's tail pages: as pfn_swap_entry_to_page() */
	if (PageLocked(page))
		return;
	if (!c->v->nr_violations) {
		pr_warn("vmamerge: verify: migration entry at %#lx (vma %#lx-%#lx pgoff %#lx) names an unlocked page\n",
			addr, c->vma->vm_start, c->vma->vm_end,
			c->vma->vm_pgoff);
		dump_page(page, "vmamerge verify: stale migration entry");
	}
	vmamerge_violation(c, VMAMERGE_VIOL_TREE, addr, 0, page_to_pfn(page),
			   "migration entry at %#lx names unlocked pfn %#lx: rmap lost it",
			   addr, page_to_pfn(page));
}

/*
 * Where rmap's walk of @vma for @folio starts: vma_address() of its first
 * page - the address that page has under the VMA's numbering, or the
 * VMA's start for a folio that begins before it.  0: the folio lies
 * beyond the VMA's end (rmap would not look here at all).
 */
static unsigned long vmamerge_walk_start(struct vm_area_struct *vma,
					 struct folio *folio)
{
	pgoff_t index = READ_ONCE(folio->index);
	unsigned long addr;

	if (index < vma->vm_pgoff)
		return vma->vm_start;
	addr = vma->vm_start + ((index - vma->vm_pgoff) << PAGE_SHIFT);
	return addr >= vma->vm_start && addr < vma->vm_end ? addr : 0;
}

/*
 * The pmd that maps @addr in @mm, or NULL where no page table reaches it
 * (verify.h).  The upper levels of a range inside a VMA stay while
 * mmap_lock is held; anonymous memory has no PUD leaves.
 */
pmd_t *vmamerge_pmd_lookup(struct mm_struct *mm, unsigned long addr)
{
	pgd_t *pgd = pgd_offset(mm, addr);
	p4d_t *p4d;
	pud_t *pud;

	if (pgd_none(READ_ONCE(*pgd)) || pgd_bad(READ_ONCE(*pgd)))
		return NULL;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(READ_ONCE(*p4d)) || p4d_bad(READ_ONCE(*p4d)))
		return NULL;
	pud = pud_offset(p4d, addr);
	if (!pud_present(READ_ONCE(*pud)) || pud_leaf(READ_ONCE(*pud)) ||
	    pud_bad(READ_ONCE(*pud)))
		return NULL;
	return pmd_offset(pud, addr);
}

/* A peek at the pmd of @addr: a THP or a PMD migration entry there? */
static bool vmamerge_pmd_is_huge(struct mm_struct *mm, unsigned long addr)
{
	pmd_t *pmdp = vmamerge_pmd_lookup(mm, addr);
	pmd_t pmd;

	if (!pmdp)
		return false;
	pmd = vmamerge_vg_pmdp_get(pmdp);
	return !pmd_none(pmd) && (!pmd_present(pmd) || pmd_trans_huge(pmd));
}

/*
 * REACH: page @page of a large @folio, mapped by the PTE at @addr, must
 * be reachable by rmap.  page_vma_mapped_walk() walks from where the
 * walk starts (vmamerge_walk_start()) towards it and gives up at the
 * first PMD that maps a THP or holds a PMD migration entry; a folio's
 * pages lie within one PMD size of its start, so only the start's own PMD
 * can be in the way.  A page rmap cannot reach keeps migration entries
 * forever once it is migrated (the next fault BUGs) and cannot be
 * reclaimed.  The PMD is peeked at without its lock: a THP there is in
 * the way whenever it is there.
 */
static void vmamerge_verify_reach(struct vmamerge_vctx *c, unsigned long addr,
				  struct folio *folio)
{
	unsigned long start = vmamerge_walk_start(c->vma, folio);

	if (!start || (start & PMD_MASK) == (addr & PMD_MASK) || start > addr)
		return;
	if (vmamerge_pmd_is_huge(c->mm, start))
		vmamerge_violation(c, VMAMERGE_VIOL_TREE, addr, start, addr,
				   "large folio page at %#lx unreachable: rmap's walk from %#lx stops at a huge pmd",
				   addr, start);
}

static void vmamerge_verify_pte(struct vmamerge_vctx *c, unsigned long addr,
				pte_t pte)
{
	unsigned long pfn;
	struct folio *folio;
	struct page *page;
	swp_entry_t entry;

	if (pte_none(pte))
		return;
	if (!pte_present(pte)) {
		entry = pte_to_swp_entry(pte);
		/* device, hwpoison, markers: no folio to check */
		if (is_migration_entry(entry))
			vmamerge_verify_migration(c, addr, entry);
		else if (!non_swap_entry(entry))
			vmamerge_verify_swap(c, addr, entry);
		return;
	}
	/* the zero page; VM_SPECIAL VMAs (raw PFNs) are not walked at all */
	pfn = pte_pfn(pte);
	if (pte_special(pte) || pte_devmap(pte) || is_zero_pfn(pfn) ||
	    !pfn_valid(pfn))
		return;
	page = pfn_to_page(pfn);
	folio = page_folio(page);
	vmamerge_check_folio(c, addr, folio, folio_page_idx(folio, page), 1,
			     false);
	if (folio_test_large(folio))
		vmamerge_verify_reach(c, addr, folio);
}

/*
 * The PTEs of [@addr, @end) in the table *@pmd points to.  Returns false
 * when *@pmd turned out not to be a table (6.12 can retract tables
 * without mmap_lock) or changed before we held the PTE lock: the caller
 * looks at the pmd again.
 */
static bool vmamerge_verify_ptes(struct vmamerge_vctx *c, pmd_t *pmd,
				 unsigned long addr, unsigned long end)
{
	pte_t *start, *ptep;
	spinlock_t *ptl;
	pmd_t pmdval;
	bool same;

	start = vmamerge_vg_pte_map(pmd, addr, &pmdval);
	if (!start)
		return false;
	ptl = pte_lockptr(c->mm, &pmdval);
	spin_lock(ptl);
	same = pmd_same(pmdval, vmamerge_vg_pmdp_get(pmd));
	for (ptep = start; same && addr < end; ptep++, addr += PAGE_SIZE)
		vmamerge_verify_pte(c, addr, ptep_get(ptep));
	spin_unlock(ptl);
	vmamerge_vg_pte_unmap(start);
	return same;
}

/*
 * A pmd that looked huge: check the THP once, under the PMD lock, for all
 * its pages.  Returns false if the pmd became a page table meanwhile (a
 * split): the caller walks it as one.
 */
static bool vmamerge_verify_huge(struct vmamerge_vctx *c, pmd_t *pmd,
				 unsigned long addr)
{
	unsigned long haddr = addr & PMD_MASK;
	struct vm_area_struct *vma = c->vma;
	struct folio *folio;
	struct page *page;
	spinlock_t *ptl;
	pmd_t pmdval;
	bool done = true;

	ptl = pmd_lock(c->mm, pmd);
	pmdval = vmamerge_vg_pmdp_get(pmd);
	if (pmd_none(pmdval) || !pmd_present(pmdval) || pmd_devmap(pmdval)) {
		/* zapped, or a THP under migration: nothing to check */
	} else if (!pmd_trans_huge(pmdval)) {
		done = false;
	} else if (!vmamerge_vg_huge_zero_pmd(pmdval) &&
		   haddr >= vma->vm_start && haddr + PMD_SIZE <= vma->vm_end) {
		page = pmd_page(pmdval);
		folio = page_folio(page);
		vmamerge_check_folio(c, haddr, folio,
				     folio_page_idx(folio, page),
				     PMD_SIZE >> PAGE_SHIFT, false);
	}
	spin_unlock(ptl);
	return done;
}

/*
 * One pmd.  A lockless snapshot only chooses the path; each path takes
 * the lock that makes the entry stable and rechecks it.  A pmd that keeps
 * changing is given up after a few rounds (its pages are not counted).
 */
static void vmamerge_verify_pmd(struct vmamerge_vctx *c, pmd_t *pmd,
				unsigned long addr, unsigned long end)
{
	pmd_t pmdval;
	int tries;

	for (tries = 0; tries < VMAMERGE_VERIFY_RETRIES; tries++) {
		pmdval = vmamerge_vg_pmdp_get(pmd);
		if (pmd_none(pmdval) || !pmd_present(pmdval))
			return;	/* empty, or a pmd migration entry */
		if (pmd_trans_huge(pmdval) || pmd_devmap(pmdval)) {
			if (vmamerge_verify_huge(c, pmd, addr))
				return;
		} else if (vmamerge_verify_ptes(c, pmd, addr, end)) {
			return;
		}
	}
}

/*
 * The upper levels.  Under mmap_lock (read) no page table above the PTE
 * level is freed for a range inside a VMA, so a populated pgd/p4d/pud
 * entry keeps pointing at the same table.  Anonymous memory is never
 * mapped by a PUD leaf.
 */
static void vmamerge_verify_pmds(struct vmamerge_vctx *c, pud_t *pud,
				 unsigned long addr, unsigned long end)
{
	unsigned long next;
	pmd_t *pmd = pmd_offset(pud, addr);

	for (; addr < end; pmd++, addr = next) {
		next = pmd_addr_end(addr, end);
		vmamerge_verify_pmd(c, pmd, addr, next);
		cond_resched();
	}
}

static void vmamerge_verify_puds(struct vmamerge_vctx *c, p4d_t *p4d,
				 unsigned long addr, unsigned long end)
{
	unsigned long next;
	pud_t *pud = pud_offset(p4d, addr);
	pud_t pudval;

	for (; addr < end; pud++, addr = next) {
		next = pud_addr_end(addr, end);
		pudval = READ_ONCE(*pud);
		if (pud_none(pudval) || !pud_present(pudval) ||
		    pud_leaf(pudval) || pud_bad(pudval))
			continue;
		vmamerge_verify_pmds(c, pud, addr, next);
	}
}

static void vmamerge_verify_pages(struct vmamerge_vctx *c)
{
	unsigned long addr = c->vma->vm_start, end = c->vma->vm_end, next;
	unsigned long p4d_next;
	pgd_t *pgd;
	p4d_t *p4d;

	for (; addr < end; addr = next) {
		pgd = pgd_offset(c->mm, addr);
		next = pgd_addr_end(addr, end);
		if (pgd_none(READ_ONCE(*pgd)) || pgd_bad(READ_ONCE(*pgd)))
			continue;
		p4d = p4d_offset(pgd, addr);
		for (; addr < next; p4d++, addr = p4d_next) {
			p4d_next = p4d_addr_end(addr, next);
			if (p4d_none(READ_ONCE(*p4d)) ||
			    p4d_bad(READ_ONCE(*p4d)))
				continue;
			vmamerge_verify_puds(c, p4d, addr, p4d_next);
		}
	}
}

/* ---- anon_vma chain and interval trees (root anon_vma lock held) ---- */

/*
 * Was @av's tree walked already in this call?  Records it if not.  The
 * anon_vmas of our VMAs' chains stay alive while we hold mmap_lock, so a
 * pointer seen earlier in the call names the same anon_vma.
 */
static bool vmamerge_tree_seen(struct vmamerge_vctx *c, struct anon_vma *av)
{
	unsigned int i;

	for (i = 0; i < VMAMERGE_VERIFY_SEEN; i++)
		if (c->seen[i] == av)
			return true;
	c->seen[c->next_seen++ % VMAMERGE_VERIFY_SEEN] = av;
	return false;
}

static unsigned long vmamerge_subtree_last(struct rb_node *n)
{
	return n ? rb_entry(n, struct anon_vma_chain, rb)->rb_subtree_last : 0;
}

/* Check one node of @av's tree in in-order position; @prev: last start. */
static void vmamerge_verify_node(struct vmamerge_vctx *c, struct anon_vma *av,
				 struct rb_node *n, unsigned long *prev)
{
	struct anon_vma_chain *avc = rb_entry(n, struct anon_vma_chain, rb);
	struct vm_area_struct *w = avc->vma;
	unsigned long start = w->vm_pgoff, sub = vmamerge_last_pgoff(w);
	unsigned long addr = w->vm_mm == c->mm ? w->vm_start : 0;

	sub = max3(sub, vmamerge_subtree_last(n->rb_left),
		   vmamerge_subtree_last(n->rb_right));
	if (avc->anon_vma != av)
		vmamerge_violation(c, VMAMERGE_VIOL_TREE, addr, 0, 0,
				   "tree node of vma %#lx-%#lx belongs to another anon_vma",
				   w->vm_start, w->vm_end);
	if (start < *prev)
		vmamerge_violation(c, VMAMERGE_VIOL_TREE, addr, *prev, start,
				   "tree out of order: pgoff %#lx after %#lx (node vma %#lx-%#lx)",
				   start, *prev, w->vm_start, w->vm_end);
	if (sub != avc->rb_subtree_last)
		vmamerge_violation(c, VMAMERGE_VIOL_TREE, addr, sub,
				   avc->rb_subtree_last,
				   "subtree_last %#lx != %#lx (node vma %#lx-%#lx pgoff %#lx)",
				   avc->rb_subtree_last, sub, w->vm_start,
				   w->vm_end, start);
	*prev = start;
}

/*
 * The whole interval tree of @av, in order: start pgoffs non-decreasing,
 * every node's subtree_last the maximum of its own last pgoff and its
 * children's - what a vm_pgoff changed without re-insertion breaks.  The
 * root lock we hold is the one every change of a member VMA's range or
 * pgoff takes (vma_adjust/vma_prepare, stack growth), also for VMAs of
 * other processes of the family, so the members cannot move meanwhile.
 * Also COUNTS: refcount, and num_active_vmas against the VMAs of this mm
 * that point at @av (each has an entry here, and only this mm's VMAs use
 * our anon_vmas: a forked VMA never reuses an anon_vma in use).
 */
/*
 * FAMILY COUNTS of @av: num_children exactly, num_active_vmas from above,
 * gathered over the VMAs of @av's tree (any process of the family).
 * num_children counts @av's children whose trees are not empty (and a
 * root itself once more): anon_vma_fork() counts a child when it puts
 * the first VMA in its tree, unlink_anon_vmas() (and a transplant,
 * transplant.c) uncounts it when its tree empties - both under the root
 * lock we hold.  Each VMA in a child's tree is in @av's too (a chain has
 * an entry for each ancestor, linked root first), so those children are
 * exactly the entries of the chains of @av's members whose parent is @av
 * and whose tree is not empty.  The tree test is not a formality: 6.12's
 * anon_vma_fork() puts the new child on the forked VMA's chain (already a
 * member of @av's tree through anon_vma_clone()) before it takes the
 * root lock to insert and count it - a chain entry we see, uncounted and
 * with an empty tree (6.1 does both under the lock).  t_forkverify.c
 * caught that moment.  Other chain changes happen under the root lock
 * while the VMA is in a tree (anon_vma_clone() links, unlink_anon_vmas()
 * takes it out of every tree before it frees an entry); the one list_add()
 * above publishes an entry whose fields are set.  num_active_vmas may
 * briefly lag behind a VMA's anon_vma pointer (anon_vma_clone() counts it
 * after linking, and may drop the root lock to allocate meanwhile), never
 * lead it: more active VMAs than users is a leak.
 */
struct vmamerge_family {
	unsigned long users;	/* VMAs in the tree whose anon_vma it is */
	unsigned int nodes;	/* VMAs in the tree */
	unsigned int nr_kids;
	bool overflow;		/* too many VMAs or children: not counted */
};

/* One VMA of @av's tree: its use of @av, its chain's children of @av. */
static void vmamerge_family_note(struct vmamerge_vctx *c, struct anon_vma *av,
				 struct vm_area_struct *w,
				 struct vmamerge_family *f)
{
	struct anon_vma_chain *e;

	f->users += READ_ONCE(w->anon_vma) == av;
	if (++f->nodes > VMAMERGE_VERIFY_KIDS_NODES)
		f->overflow = true;
	if (f->overflow)
		return;
	list_for_each_entry(e, &w->anon_vma_chain, same_vma) {
		if (e->anon_vma == av || e->anon_vma->parent != av ||
		    RB_EMPTY_ROOT(&e->anon_vma->rb_root.rb_root) ||
		    vmamerge_av_in(c->kids, f->nr_kids, e->anon_vma))
			continue;
		if (f->nr_kids == VMAMERGE_VERIFY_KIDS)
			f->overflow = true;
		else
			c->kids[f->nr_kids++] = e->anon_vma;
	}
}

static void vmamerge_family_check(struct vmamerge_vctx *c, struct anon_vma *av,
				  const struct vmamerge_family *f)
{
	unsigned long active = READ_ONCE(av->num_active_vmas), want;

	if (active > f->users)
		vmamerge_violation(c, VMAMERGE_VIOL_COUNTS, c->vma->vm_start,
				   f->users, active,
				   "anon_vma num_active_vmas %lu > %lu VMAs in its tree using it",
				   active, f->users);
	want = f->nr_kids + (av->root == av);
	if (!f->overflow && READ_ONCE(av->num_children) != want)
		vmamerge_violation(c, VMAMERGE_VIOL_COUNTS, c->vma->vm_start,
				   want, av->num_children,
				   "anon_vma num_children %lu != %lu children in use%s",
				   av->num_children, want,
				   av->root == av ? " + its self-parent link" : "");
}

static void vmamerge_verify_tree(struct vmamerge_vctx *c, struct anon_vma *av)
{
	struct rb_node *n, *first = rb_first(&av->rb_root.rb_root);
	unsigned long prev = 0, users = 0, active;
	struct vmamerge_family fam = {};
	struct anon_vma_chain *avc;
	int refs = atomic_read(&av->refcount);

	if (refs <= 0)
		vmamerge_violation(c, VMAMERGE_VIOL_COUNTS, c->vma->vm_start, 1,
				   refs, "anon_vma refcount %d", refs);
	if (av->rb_root.rb_leftmost != first)
		vmamerge_violation(c, VMAMERGE_VIOL_TREE, c->vma->vm_start, 0, 0,
				   "interval tree's cached leftmost node is stale");
	for (n = first; n; n = rb_next(n)) {
		vmamerge_verify_node(c, av, n, &prev);
		avc = rb_entry(n, struct anon_vma_chain, rb);
		if (avc->vma->vm_mm == c->mm &&
		    READ_ONCE(avc->vma->anon_vma) == av)
			users++;
		vmamerge_family_note(c, av, avc->vma, &fam);
	}
	active = READ_ONCE(av->num_active_vmas);
	if (active < users)
		vmamerge_violation(c, VMAMERGE_VIOL_COUNTS, c->vma->vm_start,
				   users, active,
				   "anon_vma num_active_vmas %lu < %lu VMAs using it",
				   active, users);
	vmamerge_family_check(c, av, &fam);
}

/*
 * Can rmap find @avc?  rmap_walk_anon() looks a folio's pgoff up in the
 * tree; we look up the VMA's whole current pgoff range the same way (the
 * kernel's own iterator) and want this very entry among the results.
 */
static void vmamerge_verify_avc_in_tree(struct vmamerge_vctx *c,
					struct anon_vma_chain *avc)
{
	struct vm_area_struct *vma = c->vma;
	unsigned long first = vma->vm_pgoff, last = vmamerge_last_pgoff(vma);
	struct anon_vma_chain *it;

	anon_vma_interval_tree_foreach(it, &avc->anon_vma->rb_root, first, last)
		if (it == avc)
			return;
	vmamerge_violation(c, VMAMERGE_VIOL_TREE, vma->vm_start, first, 0,
			   "chain entry not found in its anon_vma tree at pgoff %#lx-%#lx",
			   first, last);
}

/*
 * CHAIN: every anon_vma of the chain has its parent in it (a VMA is in
 * the tree of each ancestor of its anon_vmas: anon_vma_fork() clones the
 * parent VMA's whole chain before it adds the child's own entry).
 */
static void vmamerge_verify_ancestors(struct vmamerge_vctx *c)
{
	unsigned int i;

	for (i = 0; i < c->nr_chain; i++)
		if (!vmamerge_av_in(c->chain, c->nr_chain, c->chain[i]->parent))
			vmamerge_violation(c, VMAMERGE_VIOL_CHAIN,
					   c->vma->vm_start, 0, 0,
					   "chain lacks the parent %p of anon_vma %p",
					   c->chain[i]->parent, c->chain[i]);
}

/*
 * CHAIN, and TREE for each entry.  Called with @av's root locked for
 * reading.  Under mmap_lock the chain of a VMA whose anon_vma is set only
 * changes with mmap_lock held for writing; taking the root lock also
 * orders us after __anon_vma_prepare(), which links the chain and sets
 * vma->anon_vma under it (a concurrent fault may just have done so).
 * Entries of another root are reported and not followed: their trees are
 * not covered by the lock we hold.
 */
static void vmamerge_verify_chain(struct vmamerge_vctx *c, struct anon_vma *av)
{
	struct vm_area_struct *vma = c->vma;
	struct anon_vma_chain *avc;
	bool own = false, too_long = false;
	struct anon_vma *x;

	c->nr_chain = 0;
	list_for_each_entry(avc, &vma->anon_vma_chain, same_vma) {
		x = avc->anon_vma;
		if (vmamerge_av_in(c->chain, c->nr_chain, x))
			vmamerge_violation(c, VMAMERGE_VIOL_CHAIN, vma->vm_start,
					   0, 0, "chain names anon_vma %p twice", x);
		else if (c->nr_chain < VMAMERGE_VERIFY_CHAIN)
			c->chain[c->nr_chain++] = x;
		else
			too_long = true;
		if (avc->vma != vma) {
			vmamerge_violation(c, VMAMERGE_VIOL_CHAIN, vma->vm_start,
					   0, 0, "chain entry points at another VMA");
			continue;
		}
		if (x->root != c->root) {
			vmamerge_violation(c, VMAMERGE_VIOL_CHAIN, vma->vm_start,
					   0, 0, "chain names anon_vma %p of another root", x);
			continue;
		}
		own |= x == av;
		vmamerge_verify_avc_in_tree(c, avc);
		if (!vmamerge_tree_seen(c, x))
			vmamerge_verify_tree(c, x);
	}
	if (!own)
		vmamerge_violation(c, VMAMERGE_VIOL_CHAIN, vma->vm_start, 0, 0,
				   "vma->anon_vma %p missing from its chain", av);
	if (too_long) {
		c->nr_chain = 0;	/* too long to keep: not checked */
		return;
	}
	vmamerge_verify_ancestors(c);
}

/* ---- per VMA, per mm ---- */

static void vmamerge_verify_vma(struct vmamerge_vctx *c,
				struct vm_area_struct *vma)
{
	/* a fault may set it under mmap_lock (read): read it once */
	struct anon_vma *av = READ_ONCE(vma->anon_vma);

	if (!av || (vma->vm_flags & VM_SPECIAL) || is_vm_hugetlb_page(vma))
		return;
	c->vma = vma;
	c->v->nr_vmas++;
	anon_vma_lock_read(av);
	c->root = av->root;	/* set once at creation */
	vmamerge_verify_chain(c, av);
	anon_vma_unlock_read(av);
	vmamerge_verify_pages(c);
}

int vmamerge_verify_mm(struct mm_struct *mm, struct vmamerge_verify *v)
{
	struct vmamerge_vctx c = {
		.mm = mm,
		.v = v,
		.skew = READ_ONCE(test_verify_skew),
	};
	struct vm_area_struct *vma;
	struct vma_iterator vmi;
	int ret = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma_iter_init(&vmi, mm, 0);
	for_each_vma(vmi, vma) {
		vmamerge_verify_vma(&c, vma);
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	mmap_read_unlock(mm);
	return ret;
}
