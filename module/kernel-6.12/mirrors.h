/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmamerge: the livepatch replacements for Debian's 6.12.117 kernel
 * (6.12.117-1~deb12u1) that mirror the stock merge functions of mm/vma.c.
 *
 * Each one has exactly the type of the function it replaces (checked at
 * compile time against the declarations in mm_vma.h, which
 * tests/layout-check.sh checks against the kernel's).  Each behaves exactly
 * as the stock function, except that for an mm that vmamerge_mm_active()
 * selects it consults the merge decision point:
 *
 *   vmamerge_merge_prepare(&m) is called once before the stock merge
 *   decision, after the stock code's up-front rejection of special
 *   (VM_SPECIAL) mappings - and, for a new range, of a range without
 *   neighbours; vmamerge_merge_done(&m, merged) follows once with the
 *   merged VMA or NULL when no merge happened (including errors).
 *
 *   The decision point may re-home the range before the stock logic runs
 *   (renumber/transplant); it then updates m->anon_vma and m->pgoff, which
 *   the mirror hands to the stock logic in place of the kernel's values.
 *   No other field of @m is read back.
 *
 *   In vmamerge_merge_done() after a successful merge, m->vma and m->next
 *   may point to VMAs the merge removed (freed): only @merged may be used.
 *
 * Called with mmap_lock held for writing, as the stock functions are.
 */
#ifndef _VMAMERGE_KERNEL_6_12_MIRRORS_H
#define _VMAMERGE_KERNEL_6_12_MIRRORS_H

#include "mm_vma.h"

/* vma_modify.c: replace the four vma_modify_*() wrappers of mm/vma.c. */
struct vm_area_struct *vmamerge_vma_modify_flags(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags);
struct vm_area_struct *vmamerge_vma_modify_flags_name(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct anon_vma_name *new_name);
struct vm_area_struct *vmamerge_vma_modify_policy(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		struct mempolicy *new_pol);
struct vm_area_struct *vmamerge_vma_modify_flags_uffd(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct vm_userfaultfd_ctx new_ctx,
		bool give_up_on_oom);
/* vma_modify_flags() for our own callers: their path, what was rehomed */
struct vm_area_struct *
vmamerge_612_modify_flags_path(struct vma_iterator *vmi,
			       struct vm_area_struct *prev,
			       struct vm_area_struct *vma,
			       unsigned long start, unsigned long end,
			       unsigned long new_flags,
			       enum vmamerge_path path, unsigned int *rehomed);

/* vma_merge_new_range.c: replaces vma_merge_new_range() of mm/vma.c. */
struct vm_area_struct *
vmamerge_vma_merge_new_range(struct vma_merge_struct *vmg);
/* The same, for our own callers: their path. */
struct vm_area_struct *
vmamerge_612_merge_new_range(struct vma_merge_struct *vmg,
			     enum vmamerge_path path);

/* copy_vma.c: replaces copy_vma() of mm/vma.c (mremap moves). */
struct vm_area_struct *vmamerge_copy_vma(struct vm_area_struct **vmap,
		unsigned long addr, unsigned long len, pgoff_t pgoff,
		bool *need_rmap_locks, bool keep_source);

#endif /* _VMAMERGE_KERNEL_6_12_MIRRORS_H */
