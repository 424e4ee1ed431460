/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmamerge: the livepatch replacements for Debian's 6.1 kernel
 * (6.1.0-57-amd64, 6.1.192-3) that mirror stock merge functions.
 *
 * Each one has exactly the type of the function it replaces (checked at
 * compile time against the kernel's declaration) and behaves exactly as
 * the stock function, except that for an mm that vmamerge_mm_active()
 * selects it consults the merge decision point:
 *
 *   vmamerge_merge_prepare(&m) is called once before the stock merge
 *   decision, after the stock code's up-front rejection of special
 *   (VM_SPECIAL) mappings; vmamerge_merge_done(&m, merged) follows once
 *   with the merged VMA, or NULL when no merge happened (including errors).
 *
 *   The decision point may re-home the range before the stock logic runs
 *   (renumber/transplant); it then updates m->anon_vma and m->pgoff, which
 *   the mirror hands to the stock logic in place of the caller's values.
 *   No other field of @m is read back.
 *
 *   In vmamerge_merge_done() after a successful merge, m->vma and m->next
 *   may point to VMAs the merge removed (freed): only @merged may be used.
 *
 * Called with mmap_lock held for writing, as the stock functions are.
 */
#ifndef _VMAMERGE_KERNEL_6_1_MIRRORS_H
#define _VMAMERGE_KERNEL_6_1_MIRRORS_H

#include <linux/mm_types.h>

/* vma_merge.c: replaces vma_merge() of mm/mmap.c. */
struct vm_area_struct *vmamerge_vma_merge(struct mm_struct *mm,
			struct vm_area_struct *prev, unsigned long addr,
			unsigned long end, unsigned long vm_flags,
			struct anon_vma *anon_vma, struct file *file,
			pgoff_t pgoff, struct mempolicy *policy,
			struct vm_userfaultfd_ctx vm_userfaultfd_ctx,
			struct anon_vma_name *anon_name);
/* mm/internal.h (not in the header package); do_mmap.c calls it */
int mlock_future_check(struct mm_struct *mm, unsigned long flags,
		       unsigned long len);
#ifdef CONFIG_DEBUG_VM_MAPLE_TREE
/* mm/mmap.c, static; the debug twin's do_mmap() starts with it */
void validate_mm(struct mm_struct *mm);
#endif
/* do_mmap.c: replaces do_mmap() of mm/mmap.c */
unsigned long vmamerge_61_do_mmap(struct file *file, unsigned long addr,
				  unsigned long len, unsigned long prot,
				  unsigned long flags, unsigned long pgoff,
				  unsigned long *populate, struct list_head *uf);

/*
 * Kernel internals copy_vma.c calls (module/ksyms.list): vma_link() is
 * static in mm/mmap.c:470 but out of line in the Debian build; vma_close()
 * (mm/util.c) is declared in mm/internal.h, which no header we may
 * include pulls in.
 */
int vma_link(struct mm_struct *mm, struct vm_area_struct *vma);
void vma_close(struct vm_area_struct *vma);

/* copy_vma.c: replaces copy_vma() of mm/mmap.c (mremap moves). */
struct vm_area_struct *vmamerge_copy_vma(struct vm_area_struct **vmap,
	unsigned long addr, unsigned long len, pgoff_t pgoff,
	bool *need_rmap_locks, bool keep_source);
/* The same, for our own callers: their path, and what was rehomed. */
struct vm_area_struct *vmamerge_61_vma_merge(struct mm_struct *mm,
			struct vm_area_struct *prev, unsigned long addr,
			unsigned long end, unsigned long vm_flags,
			struct anon_vma *anon_vma, struct file *file,
			pgoff_t pgoff, struct mempolicy *policy,
			struct vm_userfaultfd_ctx vm_userfaultfd_ctx,
			struct anon_vma_name *anon_name,
			enum vmamerge_path path, unsigned int *rehomed);

#endif /* _VMAMERGE_KERNEL_6_1_MIRRORS_H */
