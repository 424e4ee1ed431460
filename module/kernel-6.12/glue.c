// SPDX-License-Identifier: GPL-2.0
/*
 * Glue for Debian's 6.12 kernel (6.12.117-1~deb12u1): the functions whose
 * calls we take over on this build.
 *
 * Through the merge hooks (ftrace direct calls, module/hooks.h), for
 * active mms only:
 *  - vma_modify_flags{,_name}(), vma_modify_policy(),
 *    vma_modify_flags_uffd(): small global wrappers through which every
 *    in-place path reaches the static vma_modify() (mprotect, mlock,
 *    mseal, madvise, mbind, userfaultfd) (kernel-6.12/vma_modify.c);
 *  - vma_merge_new_range(): mmap, brk, mremap expansion and the
 *    destination of mremap moves (kernel-6.12/vma_merge_new_range.c);
 *  - copy_vma(): the destination of an mremap() move, where the move's
 *    rewrite is decided before the merge attempt (kernel-6.12/copy_vma.c,
 *    the decision in module/move_merge.c).
 *
 * Through the livepatch, for every mm:
 *  - uprobe_dup_mmap(): the fork hook where the opt-in is inherited
 *    (module/uprobe_dup_mmap.c, the same body on both builds).
 */
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/mm_types.h>
#include <linux/srcu.h>

#include "vmamerge.h"
#include "hooks.h"
#include "hook_entries.h"
#include "mirrors.h"

struct klp_func vmamerge_glue_funcs[] = {
	{
		.old_name = "uprobe_dup_mmap",
		.new_func = vmamerge_uprobe_dup_mmap,
	},
	{ }
};

/*
 * ---- the merge hooks (module/hooks.h) ----
 *
 * The tests: called by the trampolines (hooks.S) with the stock
 * function's arguments, true when the call concerns an active mm.  Each
 * reads the mm where the replacement reads it; a call for an inactive mm
 * runs the stock function, which our replacement mirrors for one.  In
 * mode optin the trampolines do the same test inline (hooks.S: the
 * macros that load each hook's mm) and call these only in the others.
 */
VMAMERGE_HOOK_TEST bool vmamerge_test_vma_modify(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma)
{
	return vmamerge_mm_active(vma->vm_mm);
}

VMAMERGE_HOOK_TEST bool
vmamerge_test_vma_merge_new_range(struct vma_merge_struct *vmg)
{
	return vmamerge_mm_active(vmg->mm);
}

VMAMERGE_HOOK_TEST bool vmamerge_test_copy_vma(struct vm_area_struct **vmap)
{
	return vmamerge_mm_active((*vmap)->vm_mm);
}

/*
 * The entries: where a trampoline jumps for an active mm, in place of the
 * stock function (same type, checked), returning to its caller.  Each
 * runs the replacement inside the hooks' SRCU section, which the
 * teardown waits for (vmamerge_hooks_unregister()).
 */
static_assert(__same_type(&vma_modify_flags,
			  &vmamerge_entry_vma_modify_flags));
__visible struct vm_area_struct *
vmamerge_entry_vma_modify_flags(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags)
{
	struct vm_area_struct *ret;
	int idx = srcu_read_lock(&vmamerge_hook_srcu);

	ret = vmamerge_vma_modify_flags(vmi, prev, vma, start, end, new_flags);
	srcu_read_unlock(&vmamerge_hook_srcu, idx);
	return ret;
}

static_assert(__same_type(&vma_modify_flags_name,
			  &vmamerge_entry_vma_modify_flags_name));
__visible struct vm_area_struct *
vmamerge_entry_vma_modify_flags_name(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct anon_vma_name *new_name)
{
	struct vm_area_struct *ret;
	int idx = srcu_read_lock(&vmamerge_hook_srcu);

	ret = vmamerge_vma_modify_flags_name(vmi, prev, vma, start, end,
					     new_flags, new_name);
	srcu_read_unlock(&vmamerge_hook_srcu, idx);
	return ret;
}

static_assert(__same_type(&vma_modify_policy,
			  &vmamerge_entry_vma_modify_policy));
__visible struct vm_area_struct *
vmamerge_entry_vma_modify_policy(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		struct mempolicy *new_pol)
{
	struct vm_area_struct *ret;
	int idx = srcu_read_lock(&vmamerge_hook_srcu);

	ret = vmamerge_vma_modify_policy(vmi, prev, vma, start, end, new_pol);
	srcu_read_unlock(&vmamerge_hook_srcu, idx);
	return ret;
}

static_assert(__same_type(&vma_modify_flags_uffd,
			  &vmamerge_entry_vma_modify_flags_uffd));
__visible struct vm_area_struct *
vmamerge_entry_vma_modify_flags_uffd(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct vm_userfaultfd_ctx new_ctx,
		bool give_up_on_oom)
{
	struct vm_area_struct *ret;
	int idx = srcu_read_lock(&vmamerge_hook_srcu);

	ret = vmamerge_vma_modify_flags_uffd(vmi, prev, vma, start, end,
					     new_flags, new_ctx,
					     give_up_on_oom);
	srcu_read_unlock(&vmamerge_hook_srcu, idx);
	return ret;
}

static_assert(__same_type(&vma_merge_new_range,
			  &vmamerge_entry_vma_merge_new_range));
__visible struct vm_area_struct *
vmamerge_entry_vma_merge_new_range(struct vma_merge_struct *vmg)
{
	struct vm_area_struct *ret;
	int idx = srcu_read_lock(&vmamerge_hook_srcu);

	ret = vmamerge_vma_merge_new_range(vmg);
	srcu_read_unlock(&vmamerge_hook_srcu, idx);
	return ret;
}

static_assert(__same_type(&copy_vma, &vmamerge_entry_copy_vma));
__visible struct vm_area_struct *
vmamerge_entry_copy_vma(struct vm_area_struct **vmap,
		unsigned long addr, unsigned long len, pgoff_t pgoff,
		bool *need_rmap_locks, bool keep_source)
{
	struct vm_area_struct *ret;
	int idx = srcu_read_lock(&vmamerge_hook_srcu);

	ret = vmamerge_copy_vma(vmap, addr, len, pgoff, need_rmap_locks,
				keep_source);
	srcu_read_unlock(&vmamerge_hook_srcu, idx);
	return ret;
}

#define VMAMERGE_HOOK(fn) {				\
	.name = #fn,					\
	.stock = fn,					\
	.tramp = vmamerge_tramp_##fn,			\
}

struct vmamerge_hook vmamerge_glue_hooks[] = {
	VMAMERGE_HOOK(vma_modify_flags),
	VMAMERGE_HOOK(vma_modify_flags_name),
	VMAMERGE_HOOK(vma_modify_policy),
	VMAMERGE_HOOK(vma_modify_flags_uffd),
	VMAMERGE_HOOK(vma_merge_new_range),
	VMAMERGE_HOOK(copy_vma),
	{ }
};

/*
 * 6.12's direct-call API: one ops.  Its filter is left to us (hooks.c
 * frees it once the ops is off ftrace's list): unregister_ftrace_direct()
 * with free_filters would free it even when the unregistration failed.
 */
int vmamerge_glue_direct_register(struct ftrace_ops *ops, void *tramp)
{
	return register_ftrace_direct(ops, (unsigned long)tramp);
}

int vmamerge_glue_direct_unregister(struct ftrace_ops *ops, void *tramp)
{
	return unregister_ftrace_direct(ops, (unsigned long)tramp, false);
}
