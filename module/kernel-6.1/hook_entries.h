/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The merge hooks of Debian's 6.1 (module/hooks.h): the functions the
 * trampolines of hooks.S call and jump to, defined in glue.c, and the
 * trampolines themselves.  Nothing in C calls the first two kinds.
 */
#ifndef _VMAMERGE_HOOK_ENTRIES_H
#define _VMAMERGE_HOOK_ENTRIES_H

#include <linux/mm_types.h>

#include "hooks.h"

/* tests: true when the call concerns an active mm */
VMAMERGE_HOOK_TEST bool vmamerge_test_vma_merge(struct mm_struct *mm);
VMAMERGE_HOOK_TEST bool vmamerge_test_copy_vma(struct vm_area_struct **vmap);
VMAMERGE_HOOK_TEST bool vmamerge_test_do_mmap(struct file *file);

/* entries: the replacements, inside the hooks' SRCU section */
__visible struct vm_area_struct *
vmamerge_entry_vma_merge(struct mm_struct *mm,
			 struct vm_area_struct *prev, unsigned long addr,
			 unsigned long end, unsigned long vm_flags,
			 struct anon_vma *anon_vma, struct file *file,
			 pgoff_t pgoff, struct mempolicy *policy,
			 struct vm_userfaultfd_ctx vm_userfaultfd_ctx,
			 struct anon_vma_name *anon_name);
__visible struct vm_area_struct *
vmamerge_entry_copy_vma(struct vm_area_struct **vmap,
		unsigned long addr, unsigned long len, pgoff_t pgoff,
		bool *need_rmap_locks, bool keep_source);
__visible unsigned long
vmamerge_entry_do_mmap(struct file *file, unsigned long addr,
		       unsigned long len, unsigned long prot,
		       unsigned long flags, unsigned long pgoff,
		       unsigned long *populate, struct list_head *uf);

/* trampolines */
void vmamerge_tramp_vma_merge(void);
void vmamerge_tramp_copy_vma(void);
void vmamerge_tramp_do_mmap(void);

#endif /* _VMAMERGE_HOOK_ENTRIES_H */
