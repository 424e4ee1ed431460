/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The merge hooks of Debian's 6.12 (module/hooks.h): the functions the
 * trampolines of hooks.S call and jump to, defined in glue.c, and the
 * trampolines themselves.  Nothing in C calls the first two kinds.
 */
#ifndef _VMAMERGE_HOOK_ENTRIES_H
#define _VMAMERGE_HOOK_ENTRIES_H

#include <linux/mm_types.h>

#include "hooks.h"
#include "mm_vma.h"

/* tests: true when the call concerns an active mm */
VMAMERGE_HOOK_TEST bool vmamerge_test_vma_modify(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma);
VMAMERGE_HOOK_TEST bool
vmamerge_test_vma_merge_new_range(struct vma_merge_struct *vmg);
VMAMERGE_HOOK_TEST bool vmamerge_test_copy_vma(struct vm_area_struct **vmap);

/* entries: the replacements, inside the hooks' SRCU section */
__visible struct vm_area_struct *
vmamerge_entry_vma_modify_flags(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags);
__visible struct vm_area_struct *
vmamerge_entry_vma_modify_flags_name(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct anon_vma_name *new_name);
__visible struct vm_area_struct *
vmamerge_entry_vma_modify_policy(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		struct mempolicy *new_pol);
__visible struct vm_area_struct *
vmamerge_entry_vma_modify_flags_uffd(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct vm_userfaultfd_ctx new_ctx,
		bool give_up_on_oom);
__visible struct vm_area_struct *
vmamerge_entry_vma_merge_new_range(struct vma_merge_struct *vmg);
__visible struct vm_area_struct *
vmamerge_entry_copy_vma(struct vm_area_struct **vmap,
		unsigned long addr, unsigned long len, pgoff_t pgoff,
		bool *need_rmap_locks, bool keep_source);

/* trampolines */
void vmamerge_tramp_vma_modify_flags(void);
void vmamerge_tramp_vma_modify_flags_name(void);
void vmamerge_tramp_vma_modify_policy(void);
void vmamerge_tramp_vma_modify_flags_uffd(void);
void vmamerge_tramp_vma_merge_new_range(void);
void vmamerge_tramp_copy_vma(void);

#endif /* _VMAMERGE_HOOK_ENTRIES_H */
