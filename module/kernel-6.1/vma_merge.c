// SPDX-License-Identifier: GPL-2.0
/*
 * vmamerge: replacement for vma_merge() of Debian's 6.1 kernel
 * (6.1.192-3, mm/mmap.c:1021).  These paths of 6.1 merge through it:
 * mprotect, madvise, mlock, mbind, userfaultfd, the in-place mremap
 * expansion, copy_vma() for an mremap move, and mmap_region()'s re-merge
 * of a file mapping whose driver changed its flags.  A new anonymous
 * mmap() and brk() do not: __mmap_region() and do_brk_flags() check
 * mergeability themselves and call vma_expand() directly.
 *
 * A livepatch replacement cannot call the function it replaces, so this is
 * a copy of the stock function and of the static helpers it uses: the
 * Debian build inlined is_mergeable_vma() and is_mergeable_anon_vma(), and
 * left can_vma_merge_before() and can_vma_merge_after() only as .isra
 * clones whose calling convention is GCC's private choice.  The only
 * addition is the merge decision point for an active mm.
 */

#include <linux/mm.h>
#include <linux/mempolicy.h>
#include <linux/mm_inline.h>
#include <linux/userfaultfd_k.h>
#include <linux/khugepaged.h>
#include "vmamerge.h"
#include "mirrors.h"

static_assert(__same_type(&vma_merge, &vmamerge_vma_merge));

/*
 * Mirrors is_mergeable_vma(), mm/mmap.c:888: do @vma's attributes allow a
 * merge with a range of the given ones?  A VMA with a ->close hook never
 * merges: its driver probably keeps per-VMA state.
 */
static inline bool
vmamerge_61_is_mergeable_vma(struct vm_area_struct *vma, struct file *file,
			     unsigned long vm_flags,
			     struct vm_userfaultfd_ctx vm_userfaultfd_ctx,
			     struct anon_vma_name *anon_name)
{
	/*
	 * VM_SOFTDIRTY must not prevent a merge: the caller marks the merged
	 * VMA soft-dirty.
	 */
	if ((vma->vm_flags ^ vm_flags) & ~VM_SOFTDIRTY)
		return false;
	if (vma->vm_file != file)
		return false;
	if (vma->vm_ops && vma->vm_ops->close)
		return false;
	if (!is_mergeable_vm_userfaultfd_ctx(vma, vm_userfaultfd_ctx))
		return false;
	if (!anon_vma_name_eq(anon_vma_name(vma), anon_name))
		return false;
	return true;
}

/*
 * Mirrors is_mergeable_anon_vma(), mm/mmap.c:914: equal anon_vmas, or one
 * of them not yet assigned provided @vma (if given) has a single
 * anon_vma_chain entry, i.e. was not cloned from a fork parent (the stock
 * code keeps those apart for the scalability of the anon_vma lock).
 */
static inline bool vmamerge_61_is_mergeable_anon_vma(struct anon_vma *anon_vma1,
						     struct anon_vma *anon_vma2,
						     struct vm_area_struct *vma)
{
	if ((!anon_vma1 || !anon_vma2) &&
	    (!vma || list_is_singular(&vma->anon_vma_chain)))
		return true;
	return anon_vma1 == anon_vma2;
}

/*
 * Mirrors can_vma_merge_before(), mm/mmap.c:940: may a range with these
 * attributes, ending at file offset @vm_pgoff, go in front of @vma?
 */
static bool
vmamerge_61_can_vma_merge_before(struct vm_area_struct *vma,
				 unsigned long vm_flags,
				 struct anon_vma *anon_vma, struct file *file,
				 pgoff_t vm_pgoff,
				 struct vm_userfaultfd_ctx vm_userfaultfd_ctx,
				 struct anon_vma_name *anon_name)
{
	if (vmamerge_61_is_mergeable_vma(vma, file, vm_flags,
					 vm_userfaultfd_ctx, anon_name) &&
	    vmamerge_61_is_mergeable_anon_vma(anon_vma, vma->anon_vma, vma)) {
		if (vma->vm_pgoff == vm_pgoff)
			return true;
	}
	return false;
}

/*
 * Mirrors can_vma_merge_after(), mm/mmap.c:962: may a range with these
 * attributes, starting at file offset @vm_pgoff, go behind @vma?
 */
static bool
vmamerge_61_can_vma_merge_after(struct vm_area_struct *vma,
				unsigned long vm_flags,
				struct anon_vma *anon_vma, struct file *file,
				pgoff_t vm_pgoff,
				struct vm_userfaultfd_ctx vm_userfaultfd_ctx,
				struct anon_vma_name *anon_name)
{
	if (vmamerge_61_is_mergeable_vma(vma, file, vm_flags,
					 vm_userfaultfd_ctx, anon_name) &&
	    vmamerge_61_is_mergeable_anon_vma(anon_vma, vma->anon_vma, vma)) {
		pgoff_t vm_pglen;

		vm_pglen = vma_pages(vma);
		if (vma->vm_pgoff + vm_pglen == vm_pgoff)
			return true;
	}
	return false;
}

/*
 * vmamerge_61_range_vma - the VMA whose attributes vma_merge() changes.
 *
 * 6.1's vma_merge() serves two kinds of caller (see the case diagram above
 * the stock function):
 *  - new range: [addr, end) is not mapped (mmap, brk, copy_vma() for an
 *    mremap move, the in-place mremap expansion: cases 1-3).  There is no
 *    such VMA: NULL.
 *  - existing range: [addr, end) lies in one VMA whose attributes change
 *    (mprotect, madvise, mlock, mbind, userfaultfd, mmap_region()'s
 *    re-merge).  That VMA is @mid when the range starts at mid's start
 *    (cases 5-8), or @prev when the range starts inside prev (case 4, and
 *    ranges strictly inside prev, which cannot merge): the callers then
 *    pass the VMA being modified as prev, as 6.12 does with vmg->prev.
 * For a new range @mid starts at or after @end, and @prev ends at or
 * before @addr.
 */
static struct vm_area_struct *
vmamerge_61_range_vma(struct vm_area_struct *prev, struct vm_area_struct *mid,
		      unsigned long addr)
{
	if (mid && mid->vm_start <= addr)
		return mid;
	if (prev && addr < prev->vm_end)
		return prev;
	return NULL;
}

/*
 * vmamerge_61_prepare - consult the decision point for one vma_merge() call.
 * .next is the stock code's next, except when that is the VMA being
 * modified (case 5: next == mid): there is then no right-hand candidate.
 */
static void vmamerge_61_prepare(struct vmamerge_merge *m, struct mm_struct *mm,
				struct vm_area_struct *prev,
				struct vm_area_struct *mid,
				struct vm_area_struct *next,
				unsigned long addr, unsigned long end,
				pgoff_t pgoff, struct anon_vma *anon_vma,
				enum vmamerge_path path,
				unsigned long vm_flags, struct file *file,
				struct mempolicy *policy,
				struct vm_userfaultfd_ctx uffd_ctx,
				struct anon_vma_name *anon_name)
{
	struct vm_area_struct *vma = vmamerge_61_range_vma(prev, mid, addr);

	*m = (struct vmamerge_merge) {
		.mm = mm,
		.path = path,
		.prev = prev,
		.vma = vma,
		.next = next != vma ? next : NULL,
		.start = addr,
		.end = end,
		.pgoff = pgoff,
		.anon_vma = anon_vma,
		.flags = vm_flags,
		.file = file,
		.policy = policy,
		.uffd_ctx = uffd_ctx,
		.anon_name = anon_name,
	};
	vmamerge_merge_prepare(m);
}

/*
 * vmamerge_61_vma_merge - mirrors vma_merge(), mm/mmap.c:1021.
 *
 * Given a range [addr, end) with the attributes (vm_flags, anon_vma, file,
 * pgoff, policy, uffd context, anon_name), merge it with its predecessor
 * @prev, its successor, or both, through __vma_adjust().  Returns the
 * resulting VMA or NULL.  The cases 1-8 are those of the comment above the
 * stock function.  mmap_lock must be held for writing.
 * @path: the caller, for the decision point; @rehomed (may be NULL): what
 * the decision point changed (VMAMERGE_REHOMED_*), for an active mm.
 */
struct vm_area_struct *vmamerge_61_vma_merge(struct mm_struct *mm,
			struct vm_area_struct *prev, unsigned long addr,
			unsigned long end, unsigned long vm_flags,
			struct anon_vma *anon_vma, struct file *file,
			pgoff_t pgoff, struct mempolicy *policy,
			struct vm_userfaultfd_ctx vm_userfaultfd_ctx,
			struct anon_vma_name *anon_name,
			enum vmamerge_path path, unsigned int *rehomed)
{
	pgoff_t pglen = (end - addr) >> PAGE_SHIFT;
	struct vm_area_struct *mid, *next, *res;
	struct vmamerge_merge m;
	bool active;
	int err = -1;
	bool merge_prev = false;
	bool merge_next = false;

	/*
	 * We later require that vma->vm_flags == vm_flags,
	 * so this tests vma->vm_flags & VM_SPECIAL, too.
	 */
	if (vm_flags & VM_SPECIAL)
		return NULL;

	next = find_vma(mm, prev ? prev->vm_end : 0);
	mid = next;
	if (next && next->vm_end == end)		/* cases 6, 7, 8 */
		next = find_vma(mm, next->vm_end);

	/* verify some invariant that must be enforced by the caller */
	VM_WARN_ON(prev && addr <= prev->vm_start);
	VM_WARN_ON(mid && end > mid->vm_end);
	VM_WARN_ON(addr >= end);

	active = vmamerge_mm_active(mm);
	if (unlikely(active)) {
		vmamerge_61_prepare(&m, mm, prev, mid, next, addr, end, pgoff,
				    anon_vma, path, vm_flags, file, policy,
				    vm_userfaultfd_ctx, anon_name);
		if (rehomed)
			*rehomed = m.rehomed;
		/* The decision point may have re-homed the range (mirrors.h). */
		anon_vma = m.anon_vma;
		pgoff = m.pgoff;
	}

	/* Can we merge the predecessor? */
	if (prev && prev->vm_end == addr &&
	    mpol_equal(vma_policy(prev), policy) &&
	    vmamerge_61_can_vma_merge_after(prev, vm_flags, anon_vma, file,
					    pgoff, vm_userfaultfd_ctx,
					    anon_name)) {
		merge_prev = true;
	}
	/* Can we merge the successor? */
	if (next && end == next->vm_start &&
	    mpol_equal(policy, vma_policy(next)) &&
	    vmamerge_61_can_vma_merge_before(next, vm_flags, anon_vma, file,
					     pgoff + pglen, vm_userfaultfd_ctx,
					     anon_name)) {
		merge_next = true;
	}
	/* Can we merge both the predecessor and the successor? */
	if (merge_prev && merge_next &&
	    vmamerge_61_is_mergeable_anon_vma(prev->anon_vma,
					      next->anon_vma, NULL)) {
		/* cases 1, 6 */
		err = __vma_adjust(prev, prev->vm_start,
				   next->vm_end, prev->vm_pgoff, NULL, prev);
		res = prev;
	} else if (merge_prev) {
		/* cases 2, 5, 7 */
		err = __vma_adjust(prev, prev->vm_start,
				   end, prev->vm_pgoff, NULL, prev);
		res = prev;
	} else if (merge_next) {
		if (prev && addr < prev->vm_end)	/* case 4 */
			err = __vma_adjust(prev, prev->vm_start,
					   addr, prev->vm_pgoff, NULL, next);
		else					/* cases 3, 8 */
			err = __vma_adjust(mid, addr, next->vm_end,
					   next->vm_pgoff - pglen, NULL, next);
		res = next;
	}

	/*
	 * Cannot merge with predecessor or successor or error in __vma_adjust?
	 */
	if (err) {
		res = NULL;
		goto out;
	}
	khugepaged_enter_vma(res, vm_flags);
out:
	if (unlikely(active))
		vmamerge_merge_done(&m, res);
	return res;
}

/* The replacement of vma_merge(): every caller of the kernel's. */
struct vm_area_struct *vmamerge_vma_merge(struct mm_struct *mm,
			struct vm_area_struct *prev, unsigned long addr,
			unsigned long end, unsigned long vm_flags,
			struct anon_vma *anon_vma, struct file *file,
			pgoff_t pgoff, struct mempolicy *policy,
			struct vm_userfaultfd_ctx vm_userfaultfd_ctx,
			struct anon_vma_name *anon_name)
{
	return vmamerge_61_vma_merge(mm, prev, addr, end, vm_flags, anon_vma,
				     file, pgoff, policy, vm_userfaultfd_ctx,
				     anon_name, VMAMERGE_PATH_VMA_MERGE, NULL);
}
