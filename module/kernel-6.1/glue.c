// SPDX-License-Identifier: GPL-2.0
/*
 * Glue for Debian's 6.1 kernel (6.1.192-3): the functions whose calls we
 * take over on this build.
 *
 * Through the merge hooks (ftrace direct calls, module/hooks.h), for
 * active mms only:
 *  - vma_merge(): the one merge decision of every in-place path
 *    (mprotect, madvise, mlock, mbind, userfaultfd), of copy_vma() for
 *    mremap moves and of mremap's in-place expansion
 *    (kernel-6.1/vma_merge.c);
 *  - do_mmap(), anonymous mappings only: for the merge of a new anonymous
 *    mapping that fills a gap, which 6.1's mmap_region() makes without
 *    vma_merge() (kernel-6.1/do_mmap.c);
 *  - copy_vma(): the destination of an mremap() move, where the move's
 *    rewrite is decided before the merge attempt (kernel-6.1/copy_vma.c,
 *    the decision in module/move_merge.c).
 *
 * Through the livepatch, for every mm:
 *  - uprobe_dup_mmap(): the fork hook where the opt-in is inherited
 *    (module/uprobe_dup_mmap.c, the same body on both builds).
 */
#include <linux/kernel.h>
#include <linux/livepatch.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
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
VMAMERGE_HOOK_TEST bool vmamerge_test_vma_merge(struct mm_struct *mm)
{
	return vmamerge_mm_active(mm);
}

VMAMERGE_HOOK_TEST bool vmamerge_test_copy_vma(struct vm_area_struct **vmap)
{
	return vmamerge_mm_active((*vmap)->vm_mm);
}

/*
 * do_mmap() maps into current->mm.  Only an anonymous mapping can take
 * the replacement's addition (do_mmap.c): a file mapping - whose ->mmap()
 * may sleep for I/O - runs the stock function even in an active mm.
 */
VMAMERGE_HOOK_TEST bool vmamerge_test_do_mmap(struct file *file)
{
	struct mm_struct *mm = current->mm;

	return !file && mm && vmamerge_mm_active(mm);
}

/*
 * The entries: where a trampoline jumps for an active mm, in place of the
 * stock function (same type, checked), returning to its caller.  Each
 * runs the replacement inside the hooks' SRCU section, which the
 * teardown waits for (vmamerge_hooks_unregister()).
 */
static_assert(__same_type(&vma_merge, &vmamerge_entry_vma_merge));
__visible struct vm_area_struct *
vmamerge_entry_vma_merge(struct mm_struct *mm,
			 struct vm_area_struct *prev, unsigned long addr,
			 unsigned long end, unsigned long vm_flags,
			 struct anon_vma *anon_vma, struct file *file,
			 pgoff_t pgoff, struct mempolicy *policy,
			 struct vm_userfaultfd_ctx vm_userfaultfd_ctx,
			 struct anon_vma_name *anon_name)
{
	struct vm_area_struct *ret;
	int idx = srcu_read_lock(&vmamerge_hook_srcu);

	ret = vmamerge_vma_merge(mm, prev, addr, end, vm_flags, anon_vma,
				 file, pgoff, policy, vm_userfaultfd_ctx,
				 anon_name);
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

static_assert(__same_type(&do_mmap, &vmamerge_entry_do_mmap));
__visible unsigned long
vmamerge_entry_do_mmap(struct file *file, unsigned long addr,
		       unsigned long len, unsigned long prot,
		       unsigned long flags, unsigned long pgoff,
		       unsigned long *populate, struct list_head *uf)
{
	unsigned long ret;
	int idx = srcu_read_lock(&vmamerge_hook_srcu);

	ret = vmamerge_61_do_mmap(file, addr, len, prot, flags, pgoff,
				  populate, uf);
	srcu_read_unlock(&vmamerge_hook_srcu, idx);
	return ret;
}

#define VMAMERGE_HOOK(fn) {				\
	.name = #fn,					\
	.stock = fn,					\
	.tramp = vmamerge_tramp_##fn,			\
}

struct vmamerge_hook vmamerge_glue_hooks[] = {
	VMAMERGE_HOOK(vma_merge),
	VMAMERGE_HOOK(copy_vma),
	VMAMERGE_HOOK(do_mmap),
	{ }
};

/*
 * 6.1's direct-call API: the _multi variants take our own ops, and leave
 * its filter to us (hooks.c frees it once the ops is off ftrace's list).
 */
int vmamerge_glue_direct_register(struct ftrace_ops *ops, void *tramp)
{
	return register_ftrace_direct_multi(ops, (unsigned long)tramp);
}

int vmamerge_glue_direct_unregister(struct ftrace_ops *ops, void *tramp)
{
	return unregister_ftrace_direct_multi(ops, (unsigned long)tramp);
}
