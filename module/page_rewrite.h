/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmamerge: the page rewrite walker (page_rewrite.c), the sharing check it
 * applies to every page (sharing.c; its per-page part inline, sharing.h)
 * and the per-series helpers both need (kernel-<series>/rewrite_glue.c).
 *
 * A rewrite changes what rmap knows about the anonymous pages of one VMA:
 * today their index (renumbering, renumber.c).  It runs in two phases
 * under mmap_lock held for writing, the VMA write-locked (6.12's per-VMA
 * locks) and the root anon_vma's rwsem held for writing:
 *
 *  1. collect: walk the VMA's page tables; every anonymous folio it maps,
 *     present or in the swap cache, must pass the sharing check.  Large
 *     folios and swap-cache folios no PTE maps are trylocked for it and
 *     kept locked and referenced on a list; order-0 folios a PTE maps
 *     are not listed: a rewrite that changes their anon_vma trylocks
 *     each and keeps it locked until its commit or undo, one that
 *     changes only their index takes no lock (page_rewrite.c says why).
 *     Anything that cannot be proved safe ends the walk with a refusal;
 *  2. commit: the caller changes the VMA, then every collected folio's
 *     index (and anon_vma) is written: the order-0 ones by the collect
 *     walk itself as it passed them (undone if it was refused), or where
 *     their old anon_vma is not known by a second walk; the listed ones
 *     at the commit, released after.  The order-0 folios the collect
 *     walk locked are unlocked by a second walk at the commit or undo.
 *
 * A refusal that time can cure (a migration entry, a folio locked by
 * someone else) is retried a bounded number of times after every lock has
 * been dropped; then the operation falls back to the stock behaviour.
 */
#ifndef _VMAMERGE_PAGE_REWRITE_H
#define _VMAMERGE_PAGE_REWRITE_H

#include <linux/hugetlb_inline.h>
#include <linux/mm.h>
#include <linux/swap.h>

#include "vmamerge.h"

/*
 * Why a rewrite was refused.  X(id, "name") gives VMAMERGE_R_<id>, its
 * name (vmamerge_refusal_name(); reason=name in the vmamerge_refuse trace
 * event) and its counter VMAMERGE_C_REFUSED_<id>, which is named
 * "refused_" and the same name (page_rewrite.c; tests/check-docs.sh checks
 * the names).  One list for all three, so that they cannot drift apart.
 */
#define VMAMERGE_REFUSALS(X)						\
	X(SHARED,	"shared")	/* a page is mapped or referenced twice */ \
	X(KSM,		"ksm")		/* a KSM page */		\
	X(PINNED,	"pinned")	/* a page that may be pinned (DMA, GUP) */ \
	X(MIGRATION,	"migration")	/* migration entries, still after retries */ \
	X(BUSY,		"busy")		/* a folio locked by others, after retries */ \
	X(THP,		"thp")		/* a large folio we cannot rewrite whole */ \
	X(DEVICE,	"device")	/* device-private or -exclusive entries */ \
	X(SPECIAL,	"special")	/* not a private anonymous VMA, or odd pages */ \
	X(TOO_LARGE,	"too_large")	/* more pages than one rewrite handles */ \
	X(SWAP,		"swap")		/* a swap entry whose state we cannot read */ \
	X(NOMEM,	"nomem")	/* no memory for the folio list */ \
	X(UNSTABLE,	"unstable")	/* rmap already inconsistent: leave it */ \
	X(SOFTDIRTY,	"softdirty")	/* the merge would lose VM_SOFTDIRTY */ \
	X(FAMILY,	"family")	/* a forked anon_vma family (transplant.c) */

#define VMAMERGE_REFUSAL_ENUM_(id, name) VMAMERGE_R_##id,
enum vmamerge_refusal {
	VMAMERGE_R_NONE,	/* not refused */
	VMAMERGE_REFUSALS(VMAMERGE_REFUSAL_ENUM_)
	VMAMERGE_NR_REFUSALS
};

#undef VMAMERGE_REFUSAL_ENUM_

/*
 * vmamerge_vma_rewritable - the one test of which VMAs the module touches:
 * renumbers, transplants, gives an anon_vma to, or takes as the owner of
 * the anon_vma a neighbour joins (renumber.c, transplant_merge.c).  Only
 * private anonymous memory with nothing but its anon_vma indexing it:
 *  - no vm_file.  A private mapping of /dev/zero has no vm_ops
 *    (mmap_zero() calls vma_set_anonymous()), so vma_is_anonymous() is
 *    true for it, but it keeps vm_file and sits in /dev/zero's i_mmap
 *    interval tree, keyed by vm_pgoff and shared by every process that
 *    maps /dev/zero: a new vm_pgoff would need i_mmap_rwsem and a re-key
 *    there too, and the stock logic never merges it with a VMA without
 *    that file, so an anon_vma changed for such a merge would be wasted
 *    (rehomed_unmerged).  It keeps the stock behaviour.  hugetlb and
 *    shared anonymous (shmem) mappings have a vm_file too;
 *  - no vm_ops (vma_is_anonymous()), not VM_SPECIAL, not shared, not
 *    hugetlb - redundant with the above for every mapping the kernel
 *    makes today, kept so that the test does not rest on that.
 */
static inline bool vmamerge_vma_rewritable(struct vm_area_struct *vma)
{
	return !vma->vm_file && vma_is_anonymous(vma) &&
	       !(vma->vm_flags & (VM_SPECIAL | VM_SHARED)) &&
	       !is_vm_hugetlb_page(vma);
}

/*
 * vmamerge_vmas_alike - could @a and @b ever merge through the module, if
 * they touched?  Both are VMAs it may rewrite, with the same flags but
 * VM_SOFTDIRTY: the cheap, metadata-only filter in front of a merge
 * attempt that would otherwise fail for reasons no rewrite changes.  The
 * decision point checks the rest (policy, userfaultfd context, name,
 * offsets, anon_vmas).
 */
static inline bool vmamerge_vmas_alike(struct vm_area_struct *a,
				       struct vm_area_struct *b)
{
	return vmamerge_vma_rewritable(a) && vmamerge_vma_rewritable(b) &&
	       !((a->vm_flags ^ b->vm_flags) & ~VM_SOFTDIRTY);
}

/* The same for @prev ending where @next starts (either may be NULL). */
static inline bool vmamerge_vmas_joinable(struct vm_area_struct *prev,
					  struct vm_area_struct *next)
{
	return prev && next && prev->vm_end == next->vm_start &&
	       vmamerge_vmas_alike(prev, next);
}

/* Is @r worth another try after dropping every lock? */
static inline bool vmamerge_refusal_transient(enum vmamerge_refusal r)
{
	return r == VMAMERGE_R_MIGRATION || r == VMAMERGE_R_BUSY;
}

const char *vmamerge_refusal_name(enum vmamerge_refusal r);
enum vmamerge_counter vmamerge_refusal_counter(enum vmamerge_refusal r);

/*
 * The budget of one rewrite, in pages of the VMA (module parameter
 * rewrite_max_pages, page_rewrite.c): a larger VMA is refused_too_large.
 * It bounds how long one rewrite holds the root anon_vma lock and how many
 * folio locks it holds at once.  Never more than the hard limit: 2 GiB,
 * at most a 4 MiB folio list (one swap-cache folio per page).
 */
#define VMAMERGE_REWRITE_MAX_PAGES	(1UL << 19)
#define VMAMERGE_REWRITE_DEFAULT_PAGES	(1UL << 15)	/* 128 MiB */
/*
 * The folio list inside the struct: rewrites that keep at most this many
 * large or swap-cache folios allocate nothing (page_rewrite.c).
 */
#define VMAMERGE_REWRITE_INLINE		16

struct vmamerge_rewrite {
	struct mm_struct *mm;
	struct vm_area_struct *vma;
	struct anon_vma *root;		/* vma->anon_vma->root */
	struct anon_vma *only_anon_vma;	/* if set: every folio's anon_vma */
	struct anon_vma *to_anon_vma;	/* transplant: where they move to */
	unsigned long pages;		/* of the VMA */
	struct folio **folios;		/* locked and referenced by collect */
	struct folio *inline_folios[VMAMERGE_REWRITE_INLINE];
	unsigned long nr_folios;
	unsigned long max_folios;
	bool list_full;			/* make room for every page */
	unsigned long nr_pages;		/* pages of the collected folios */
	/*
	 * Order-0 folios mapped by a PTE: checked by the collect walk but
	 * not listed, their new index (old + @delta) and anon_vma
	 * (@new_mapping) written as the walk passes them if @in_walk - a
	 * refused walk writes the old ones back (@old_mapping) - or else
	 * by a second walk at the commit (@committing).
	 */
	unsigned long nr_small;
	long delta;
	unsigned long new_mapping;	/* 0: the anon_vma stays */
	unsigned long old_mapping;	/* @in_walk with @new_mapping */
	bool in_walk;
	/*
	 * With @new_mapping: the order-0 folios are trylocked by the
	 * collect walk and stay locked until the second walk of the
	 * commit or undo unlocks them (page_rewrite.c says why).
	 */
	bool lock_small;
	bool committing;
	/*
	 * A large folio mapped by PTEs, kept when the walk met its first
	 * page: each of its other pages must follow, mapped by the next
	 * PTE (page_rewrite.c).  @open_idx is the page expected next, at
	 * @open_addr.
	 */
	struct folio *open_folio;
	unsigned long open_idx;
	unsigned long open_addr;
	enum vmamerge_refusal refusal;
	unsigned long refusal_addr;	/* where the walk stopped */
};

/*
 * vmamerge_rewrite_init - prepare @rw for @vma (allocates nothing: the
 * folio list grows as the walk needs it).  Returns a refusal (TOO_LARGE,
 * SPECIAL) or VMAMERGE_R_NONE.
 */
enum vmamerge_refusal vmamerge_rewrite_init(struct vmamerge_rewrite *rw,
					    struct vm_area_struct *vma);
void vmamerge_rewrite_free(struct vmamerge_rewrite *rw);

/*
 * vmamerge_rewrite_target - what the commit will write: @delta added to
 * every collected folio's index and, if @to is not NULL, @to as their
 * anon_vma.  Set before the collect walk, which then writes the order-0
 * folios a PTE maps as it checks them (and writes their old values back
 * if it is refused) - unless the old anon_vma of each is not known (@to
 * with folios of several anon_vmas possible): those wait for the commit.
 * A collect without a target (a check only) writes nothing.
 */
void vmamerge_rewrite_target(struct vmamerge_rewrite *rw, long delta,
			     struct anon_vma *to);

/*
 * vmamerge_rewrite_collect - phase 1.  Caller: mmap_lock (write), VMA
 * write-locked, root anon_vma locked for writing.  On refusal nothing is
 * held (the folios collected so far are released) and nothing is changed.
 */
enum vmamerge_refusal vmamerge_rewrite_collect(struct vmamerge_rewrite *rw);

/* The rmap locks a rewrite collects under: take them, or a refusal. */
typedef enum vmamerge_refusal (*vmamerge_rewrite_lock_t)(struct vmamerge_rewrite *rw);
typedef void (*vmamerge_rewrite_unlock_t)(struct vmamerge_rewrite *rw);

/*
 * vmamerge_rewrite_collect_locked - @lock, then collect; on a transient
 * refusal @unlock, wait a little and start over, a bounded number of
 * times (page_rewrite.c); when the folio list was full, @unlock, make
 * room (GFP_KERNEL) and start over at once.  On success returns with the
 * locks held.
 */
enum vmamerge_refusal
vmamerge_rewrite_collect_locked(struct vmamerge_rewrite *rw,
				vmamerge_rewrite_lock_t lock,
				vmamerge_rewrite_unlock_t unlock);

/*
 * Write the target (vmamerge_rewrite_target()) into every collected folio
 * the collect walk did not write; unlock and release the listed ones.
 * The VMA's range and page tables must be the ones the collect walk saw
 * (the locks are held throughout; the caller may change vm_pgoff and the
 * anon_vma).
 */
void vmamerge_rewrite_commit(struct vmamerge_rewrite *rw);

/* Release the collected folios unchanged. */
void vmamerge_rewrite_release(struct vmamerge_rewrite *rw);

/*
 * vmamerge_edge_check - may @vma's memory from @edge up (@edge: @vma's
 * start, or where a move cuts the moved range out of it) join memory below
 * @edge under one numbering, @edge landing at @dest (a move's destination;
 * else @edge), in a VMA that will start at @low or above?  Refused_thp
 * when a large folio mapped by PTEs there has a linear range that begins
 * below @edge, or - if @low is at or below the start of @edge's PMD at
 * @dest - begins inside that PMD and reaches past it (page_rewrite.c says
 * why, and why the memory below an edge needs no check).  mmap_lock held
 * for writing.
 */
enum vmamerge_refusal vmamerge_edge_check(struct vm_area_struct *vma,
					  unsigned long edge,
					  unsigned long dest,
					  unsigned long low);

/* ---- the sharing check (sharing.c) ---- */

/*
 * A present anonymous @folio, mapped at @addr by @rw->vma through a PTE
 * (@pmd_mapped false, @page its page) or whole by a PMD: may its rmap
 * metadata be rewritten?  Called under the PTE or PMD lock.  For a large
 * folio mapped by PTEs this is its first page; the walker checks the
 * others with vmamerge_check_large_next().
 */
enum vmamerge_refusal vmamerge_check_present(struct vmamerge_rewrite *rw,
					     struct folio *folio,
					     struct page *page,
					     unsigned long addr,
					     bool pmd_mapped);
/* vmamerge_check_mapped(), vmamerge_check_large_next(): sharing.h */
/*
 * A swap-cache @folio found for the swap PTE of @entry at @addr, locked by
 * the caller: same question.  Under the PTE lock.
 */
enum vmamerge_refusal vmamerge_check_swapcache(struct vmamerge_rewrite *rw,
					       struct folio *folio,
					       swp_entry_t entry,
					       unsigned long addr);

/* ---- renumbering (renumber.c) ---- */

enum vmamerge_refusal vmamerge_renumber_vma(struct vm_area_struct *vma,
					    pgoff_t pgoff,
					    unsigned long *pages);

/* ---- transplanting (transplant.c) ---- */

enum vmamerge_refusal vmamerge_transplant_vma(struct vm_area_struct *vma,
					      struct vm_area_struct *owner,
					      pgoff_t pgoff,
					      unsigned long *pages);
enum vmamerge_refusal
vmamerge_transplant_allowed(struct vm_area_struct *mover,
			    struct vm_area_struct *owner);
enum vmamerge_refusal vmamerge_adopt_anon_vma(struct vm_area_struct *vma,
					      struct vm_area_struct *owner);
/* May a VMA without anon_vma adopt @owner's?  O(1). */
enum vmamerge_refusal vmamerge_adopt_allowed(struct vm_area_struct *owner);
/* The reason to count for a VMAMERGE_R_FAMILY refusal of @vma. */
enum vmamerge_refusal vmamerge_family_refusal(struct vm_area_struct *vma);

/* ---- per-series helpers (kernel-<series>/rewrite_glue.c) ---- */

/* Exclude page faults under the per-VMA lock (6.12); nothing on 6.1. */
void vmamerge_rg_vma_start_write(struct vm_area_struct *vma);
/*
 * split_vma() of this build: split @vma at @addr; with @new_below the new
 * VMA is the part below @addr and @vma keeps the rest, else the reverse.
 * 0 or -ENOMEM.  mmap_lock held for writing.
 */
int vmamerge_rg_split_vma(struct vm_area_struct *vma, unsigned long addr,
			  int new_below);
/* Set VM_SOFTDIRTY on @vma (6.12: write-locks it).  mmap_lock (write). */
void vmamerge_rg_vma_set_softdirty(struct vm_area_struct *vma);
/*
 * Merge @vma with its neighbours where the stock rules allow it, as
 * mprotect() without a flag change would, through the merge decision
 * point (as @path: with the transplant feature it may rehome VMAs first,
 * reported in *@rehomed as VMAMERGE_REHOMED_*; @rehomed may be NULL).
 * Returns the merged VMA or NULL.  mmap_lock held for writing.
 */
struct vm_area_struct *vmamerge_rg_merge_in_place(struct vm_area_struct *vma,
						  enum vmamerge_path path,
						  unsigned int *rehomed);

#endif /* _VMAMERGE_PAGE_REWRITE_H */
