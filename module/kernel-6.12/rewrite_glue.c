// SPDX-License-Identifier: GPL-2.0
/*
 * Glue for Debian's 6.12 kernel (6.12.117-1~deb12u1): what the page
 * rewrite walker and renumbering (module/page_rewrite.h) need to know
 * about this build.  Non-exported symbols are listed in module/ksyms.list.
 */
#include <linux/mm.h>
#include <linux/swap.h>

#include "vmamerge.h"
#include "page_rewrite.h"
#include "mirrors.h"

/*
 * 6.12 faults under the per-VMA lock without mmap_lock; writing the VMA
 * lock (under mmap_lock held for writing) waits for those readers and
 * keeps new ones out until mmap_lock is released.
 */
void vmamerge_rg_vma_start_write(struct vm_area_struct *vma)
{
	vma_start_write(vma);
}

/* The iterator is positioned at @addr, as move_vma() does for its splits. */
int vmamerge_rg_split_vma(struct vm_area_struct *vma, unsigned long addr,
			  int new_below)
{
	VMA_ITERATOR(vmi, vma->vm_mm, addr);

	return split_vma(&vmi, vma, addr, new_below);
}

/* vm_flags_set() write-locks the VMA first, as every writer must. */
void vmamerge_rg_vma_set_softdirty(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_SOFTDIRTY);
}

/*
 * As madvise_update_vma() reaches the merge logic: an iterator at the
 * VMA, its predecessor, and vma_modify_flags() with the flags unchanged
 * (our replacement of it, kernel-6.12/vma_modify.c, so the decision point
 * sees the attempt).  It returns @vma itself when nothing merged.
 */
struct vm_area_struct *vmamerge_rg_merge_in_place(struct vm_area_struct *vma,
						  enum vmamerge_path path,
						  unsigned int *rehomed)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long start = vma->vm_start, end = vma->vm_end;
	struct vm_area_struct *prev, *merged;
	struct vma_iterator vmi;

	if (find_vma_prev(mm, start, &prev) != vma)
		return NULL;
	vma_iter_init(&vmi, mm, start);
	merged = vmamerge_612_modify_flags_path(&vmi, prev, vma, start, end,
						vma->vm_flags,
						path, rehomed);
	if (IS_ERR(merged) || merged == vma)
		return NULL;
	return merged;
}
