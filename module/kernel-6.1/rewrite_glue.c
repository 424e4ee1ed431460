// SPDX-License-Identifier: GPL-2.0
/*
 * Glue for Debian's 6.1 kernel (6.1.192-3): what the page rewrite walker
 * and renumbering (module/page_rewrite.h) need to know about this build.
 * Non-exported symbols are listed in module/ksyms.list.
 */
#include <linux/mempolicy.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/swap.h>

#include "vmamerge.h"
#include "page_rewrite.h"
#include "mirrors.h"

/* 6.1 has no per-VMA locks: mmap_lock held for writing excludes faults. */
void vmamerge_rg_vma_start_write(struct vm_area_struct *vma)
{
	lockdep_assert_held_write(&vma->vm_mm->mmap_lock);
}

int vmamerge_rg_split_vma(struct vm_area_struct *vma, unsigned long addr,
			  int new_below)
{
	return split_vma(vma->vm_mm, vma, addr, new_below);
}

/*
 * 6.1's vm_flags is a plain field, written under mmap_lock held for
 * writing (no per-VMA locks); its readers hold mmap_lock.
 */
void vmamerge_rg_vma_set_softdirty(struct vm_area_struct *vma)
{
	lockdep_assert_held_write(&vma->vm_mm->mmap_lock);
	vma->vm_flags |= VM_SOFTDIRTY;
}

/*
 * As mprotect_fixup() reaches the merge logic with its flags unchanged:
 * vma_merge() over the VMA's whole range with its own attributes (our
 * replacement of it, kernel-6.1/vma_merge.c, so the decision point sees
 * the attempt).  NULL when nothing merged.
 */
struct vm_area_struct *vmamerge_rg_merge_in_place(struct vm_area_struct *vma,
						  enum vmamerge_path path,
						  unsigned int *rehomed)
{
	struct mm_struct *mm = vma->vm_mm;
	struct vm_area_struct *prev;

	if (find_vma_prev(mm, vma->vm_start, &prev) != vma)
		return NULL;
	return vmamerge_61_vma_merge(mm, prev, vma->vm_start, vma->vm_end,
				     vma->vm_flags, vma->anon_vma,
				     vma->vm_file, vma->vm_pgoff,
				     vma_policy(vma), vma->vm_userfaultfd_ctx,
				     anon_vma_name(vma),
				     path, rehomed);
}
