// SPDX-License-Identifier: GPL-2.0
/*
 * vmamerge: replacement for copy_vma() of Debian's 6.1.192 (mm/mmap.c:3373),
 * whose only caller is move_vma() (mm/mremap.c): the destination VMA of an
 * mremap() move, merged with a neighbour at the destination or new.
 *
 * A copy of the stock function (a replacement cannot call the function it
 * replaces) with one addition, for an active mm with the renumber
 * feature: before the stock merge attempt, move_merge.c may rewrite the
 * source VMA or the neighbours in place so that offsets and anon_vmas
 * agree (docs/design.md, "Merging inside the move"); the attempt then
 * runs as VMAMERGE_PATH_MREMAP_MOVE and its result is counted.  Nothing
 * in here sleeps for long: the rewrite's waits are bounded (page_rewrite.c),
 * so no task holds a livepatch transition up here.
 *
 * The stock function's validate_mm_mt() calls are left out: they compile
 * to nothing in the production build and check the maple tree only under
 * CONFIG_DEBUG_VM_MAPLE_TREE (the debug twin), where they are a static
 * function we would have to reach by address.
 */
#include <linux/mm.h>
#include <linux/mempolicy.h>
#include <linux/mm_inline.h>
#include <linux/rmap.h>
#include <linux/file.h>

#include "vmamerge.h"
#include "mirrors.h"

static_assert(__same_type(&copy_vma, &vmamerge_copy_vma));

/*
 * vmamerge_copy_vma - mirrors copy_vma(), mm/mmap.c:3373.  Copy @*vmap to
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
	struct vm_area_struct *new_vma, *prev;
	bool faulted_in_anon_vma = true;
	bool can_self_merge = false;
	enum vmamerge_path path = VMAMERGE_PATH_VMA_MERGE;
	struct vmamerge_move mv;

	/*
	 * If anonymous vma has not yet been faulted, update new pgoff
	 * to match new location, to increase its chance of merging.
	 */
	if (unlikely(vma_is_anonymous(vma) && !vma->anon_vma)) {
		pgoff = addr >> PAGE_SHIFT;
		faulted_in_anon_vma = false;
		can_self_merge = true;
	}

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

	new_vma = find_vma_prev(mm, addr, &prev);
	if (new_vma && new_vma->vm_start < addr + len)
		return NULL;	/* should never get here */

	/*
	 * If the original VMA is kept (MREMAP_DONTUNMAP), the source and
	 * destination VMA must be treated distinctly.
	 *
	 * A merge violates this, so in this case disallow a self-merge. A
	 * self-merge can only occur if the new range is immediately adjacent to
	 * the source VMA, so simply do not attempt to merge in that case.
	 */
	if (can_self_merge && keep_source &&
	    (addr == vma->vm_end || vma->vm_start == addr + len)) {
		new_vma = NULL;
	} else {
		/*
		 * Ours: make offsets and anon_vmas agree where only they keep
		 * the range from merging (move_merge.c; it never takes the
		 * source VMA itself as a neighbour).  new_vma is the VMA after
		 * the gap, vma_merge()'s next.  The source's offset and
		 * anon_vma may change: the range's follow.
		 */
		if (unlikely(vmamerge_mm_active(mm)) &&
		    vmamerge_feature(VMAMERGE_FEATURE_RENUMBER)) {
			mv = (struct vmamerge_move) {
				.mm = mm, .path = VMAMERGE_PATH_MREMAP_MOVE,
				.src = vma, .addr = addr,
				.end = addr + len, .pgoff = pgoff,
				.prev = prev, .next = new_vma,
			};
			if (vmamerge_move_prepare(&mv)) {
				path = VMAMERGE_PATH_MREMAP_MOVE;
				pgoff = mv.pgoff;
			}
		}
		/* our replacement of vma_merge(), with the path */
		new_vma = vmamerge_61_vma_merge(mm, prev, addr, addr + len,
						vma->vm_flags, vma->anon_vma,
						vma->vm_file, pgoff,
						vma_policy(vma),
						vma->vm_userfaultfd_ctx,
						anon_vma_name(vma), path, NULL);
		if (path == VMAMERGE_PATH_MREMAP_MOVE)
			vmamerge_move_done(&mv, new_vma);
	}
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
		new_vma->vm_start = addr;
		new_vma->vm_end = addr + len;
		new_vma->vm_pgoff = pgoff;
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
	vma_close(new_vma);

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
