// SPDX-License-Identifier: GPL-2.0
/*
 * vmamerge: replacement for copy_vma() of Debian's 6.12.117 (mm/vma.c:1646),
 * whose only caller is move_vma() (mm/mremap.c): the destination VMA of an
 * mremap() move, merged with a neighbour at the destination or new.
 *
 * A copy of the stock function (a replacement cannot call the function it
 * replaces) in both of the forms Debian's 6.12 builds have
 * (module/variants.list: 6.12.118+deb13's asks
 * vma_has_uffd_without_event_remap() before it merges), with one addition, for an active mm with the renumber
 * feature: before the stock merge attempt, move_merge.c may rewrite the
 * source VMA or the neighbours in place so that offsets and anon_vmas
 * agree (docs/design.md, "Merging inside the move"); the attempt then
 * runs as VMAMERGE_PATH_MREMAP_MOVE and its result is counted.  Nothing
 * in here sleeps for long: the rewrite's waits are bounded (page_rewrite.c),
 * so no task holds a livepatch transition up here.
 */
#include <linux/mm.h>
#include <linux/mempolicy.h>
#include <linux/mm_inline.h>
#include <linux/rmap.h>
#include <linux/file.h>
#include <linux/userfaultfd_k.h>

#include "vmamerge.h"
#include "mirrors.h"

static_assert(__same_type(&copy_vma, &vmamerge_copy_vma));

/*
 * Mirrors vma_close(), mm/internal.h: close a VMA with a close hook and
 * leave it the dummy operations: no further hook may run on it.
 */
static inline void vmamerge_612_vma_close(struct vm_area_struct *vma)
{
	if (vma->vm_ops && vma->vm_ops->close) {
		vma->vm_ops->close(vma);
		vma->vm_ops = &vma_dummy_vm_ops;
	}
}

/* Mirrors vma_set_range(), mm/internal.h. */
static __always_inline void vmamerge_612_vma_set_range(struct vm_area_struct *vma,
						       unsigned long start,
						       unsigned long end,
						       pgoff_t pgoff)
{
	vma->vm_start = start;
	vma->vm_end = end;
	vma->vm_pgoff = pgoff;
}

/*
 * vmamerge_copy_vma - mirrors copy_vma(), mm/vma.c:1646.  Copy @*vmap to
 * [@addr, @addr + @len) with page offset @pgoff, merging it with a
 * neighbour there if possible; *@need_rmap_locks tells move_page_tables()
 * whether rmap walks may see the PTEs in the wrong order.  @keep_source:
 * MREMAP_DONTUNMAP, source and destination must stay apart.  Returns the
 * new (or expanded) VMA, or NULL.  mmap_lock held for writing.
 */
struct vm_area_struct *vmamerge_copy_vma(struct vm_area_struct **vmap,
		unsigned long addr, unsigned long len, pgoff_t pgoff,
		bool *need_rmap_locks, bool keep_source)
{
	struct vm_area_struct *vma = *vmap;
	unsigned long vma_start = vma->vm_start;
	struct mm_struct *mm = vma->vm_mm;
	struct vm_area_struct *new_vma;
	bool faulted_in_anon_vma = true;
	enum vmamerge_path path = VMAMERGE_PATH_NEW_RANGE;	/* ours */
	struct vmamerge_move mv;				/* ours */
	bool may_merge = true;		/* the uffd_remap_guard variant's */

	VMA_ITERATOR(vmi, mm, addr);
	VMAMERGE_VMG_VMA_STATE(vmg, &vmi, NULL, vma, addr, addr + len);

	/*
	 * If anonymous vma has not yet been faulted, update new pgoff
	 * to match new location, to increase its chance of merging.
	 */
	if (unlikely(vma_is_anonymous(vma) && !vma->anon_vma)) {
		pgoff = addr >> PAGE_SHIFT;
		faulted_in_anon_vma = false;
	}

	/*
	 * If the VMA we are copying might contain a uprobe PTE, ensure
	 * that we do not establish one upon merge. Otherwise, when mremap()
	 * moves page tables, it will orphan the newly created PTE.
	 */
	if (vma->vm_file)
		vmg.skip_vma_uprobe = true;

	/*
	 * Ours: a moved part of the VMA that may merge at the destination is
	 * split off first, so that a rewrite touches its pages only and a
	 * part left next to the destination can take their numbering
	 * (move_merge.c).  move_vma() goes on with *vmap.
	 */
	if (unlikely(vmamerge_mm_active(mm)) && !keep_source &&
	    vmamerge_feature(VMAMERGE_FEATURE_RENUMBER)) {
		*vmap = vma = vmamerge_move_isolate(vma, addr, len, pgoff);
		vma_start = vma->vm_start;
	}

	new_vma = find_vma_prev(mm, addr, &vmg.prev);
	if (new_vma && new_vma->vm_start < addr + len)
		return NULL;	/* should never get here */

	vmg.vma = NULL; /* New VMA range. */
	vmg.pgoff = pgoff;
	vmg.next = vmamerge_vma_iter_next_rewind(&vmi, NULL);

	/*
	 * If the original VMA is kept (MREMAP_DONTUNMAP), the source and
	 * destination VMA must be treated distinctly.
	 *
	 * A merge violates this, so in this case disallow a self-merge.
	 */
	if (!faulted_in_anon_vma && keep_source) {
		if (vmg.prev == vma)
			vmg.prev = NULL;
		if (vmg.next == vma)
			vmg.next = NULL;
		faulted_in_anon_vma = true;
	}

#ifdef VMAMERGE_VARIANT_UFFD_REMAP_GUARD
	/*
	 * The uffd_remap_guard form (module/variants.list: 6.12.118+deb13):
	 * if not registered for remap, the uffd context will be cleared, so
	 * no merge - and nothing of ours to prepare for one.
	 */
	may_merge = !vma_has_uffd_without_event_remap(vma);
#endif

	/*
	 * Ours: make offsets and anon_vmas agree where only they keep the
	 * range from merging (move_merge.c; it never takes the source VMA
	 * itself as a neighbour, so the self-merge rules above are kept).
	 * The source's offset and anon_vma may change: the range's follow.
	 */
	if (may_merge && unlikely(vmamerge_mm_active(mm)) &&
	    vmamerge_feature(VMAMERGE_FEATURE_RENUMBER)) {
		mv = (struct vmamerge_move) {
			.mm = mm, .path = VMAMERGE_PATH_MREMAP_MOVE,
			.src = vma, .addr = addr, .end = addr + len,
			.pgoff = pgoff, .prev = vmg.prev, .next = vmg.next,
		};
		if (vmamerge_move_prepare(&mv)) {
			path = VMAMERGE_PATH_MREMAP_MOVE;
			pgoff = mv.pgoff;
			vmg.pgoff = pgoff;
			vmg.anon_vma = vma->anon_vma;
		}
	}

	/* our replacement of vma_merge_new_range(), with the path */
	new_vma = NULL;
	if (may_merge)
		new_vma = vmamerge_612_merge_new_range(&vmg, path);
	if (path == VMAMERGE_PATH_MREMAP_MOVE)
		vmamerge_move_done(&mv, new_vma);

	if (new_vma) {
		/*
		 * Source vma may have been merged into new_vma
		 */
		if (unlikely(vma_start >= new_vma->vm_start &&
			     vma_start < new_vma->vm_end)) {
			/*
			 * The only way we can get a vma_merge with
			 * self during an mremap is if the vma hasn't
			 * been faulted in yet and we were allowed to
			 * reset the dst vma->vm_pgoff to the
			 * destination address of the mremap to allow
			 * the merge to happen. mremap must change the
			 * vm_pgoff linearity between src and dst vmas
			 * (in turn preventing a vma_merge) to be
			 * safe. It is only safe to keep the vm_pgoff
			 * linear if there are no pages mapped yet.
			 */
			VM_BUG_ON_VMA(faulted_in_anon_vma, new_vma);
			*vmap = vma = new_vma;
		}
		*need_rmap_locks = (new_vma->vm_pgoff <= vma->vm_pgoff);
	} else {
		new_vma = vm_area_dup(vma);
		if (!new_vma)
			goto out;
		vmamerge_612_vma_set_range(new_vma, addr, addr + len, pgoff);
		if (vma_dup_policy(vma, new_vma))
			goto out_free_vma;
		if (anon_vma_clone(new_vma, vma))
			goto out_free_mempol;
		if (new_vma->vm_file)
			get_file(new_vma->vm_file);
		if (new_vma->vm_ops && new_vma->vm_ops->open)
			new_vma->vm_ops->open(new_vma);
		if (vma_link(mm, new_vma))
			goto out_vma_link;
		*need_rmap_locks = false;
	}
	return new_vma;

out_vma_link:
	vmamerge_612_vma_close(new_vma);

	if (new_vma->vm_file)
		fput(new_vma->vm_file);

	unlink_anon_vmas(new_vma);
out_free_mempol:
	mpol_put(vma_policy(new_vma));
out_free_vma:
	vm_area_free(new_vma);
out:
	return NULL;
}
