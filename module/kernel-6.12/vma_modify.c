// SPDX-License-Identifier: GPL-2.0
/*
 * vmamerge: replacements for the four vma_modify_*() wrappers of Debian's
 * 6.12.117 mm/vma.c:1477-1537 (mprotect, mlock, mseal, madvise, mbind and
 * userfaultfd all change VMA attributes through them).
 *
 * Each stock wrapper builds a vma_merge_struct with VMG_VMA_STATE(), sets
 * the attributes that change and calls the static vma_modify(), which
 * merges the range with its neighbours if it can (vma_merge_existing_range(),
 * inlined into it) and otherwise splits it off.  The replacements do the
 * same and call the kernel's own vma_modify(), which is out of line and is
 * not itself patched; for an active mm they consult the merge decision
 * point around it.
 */

#include <linux/mm.h>
#include <linux/err.h>
#include "vmamerge.h"
#include "mirrors.h"

static_assert(__same_type(&vma_modify_flags, &vmamerge_vma_modify_flags));
static_assert(__same_type(&vma_modify_flags_name,
			  &vmamerge_vma_modify_flags_name));
static_assert(__same_type(&vma_modify_policy, &vmamerge_vma_modify_policy));
static_assert(__same_type(&vma_modify_flags_uffd,
			  &vmamerge_vma_modify_flags_uffd));

/*
 * vmamerge_modify_next - the right-hand merge candidate.
 *
 * vma_merge_existing_range() looks right only when the range ends where
 * its VMA ends, and then steps the caller's iterator (positioned within
 * @vmg->vma, as it asserts) to the next range and back: a VMA starting
 * exactly at @vmg->end, or NULL for a gap.  We take the same two steps on
 * the same iterator just before it does; they leave the iterator where
 * the stock steps leave it, within @vmg->vma, so its assertion holds and
 * its own two steps, from a walked leaf, cost little.  A fresh iterator
 * (madvise() builds one) is walked from the root once, here, as it would
 * have been there; a copy of it walked the tree a second time, 2 % of an
 * opted-in madvise() (docs/design.md, "The in-place decision's cost").
 * Neither step allocates or frees, so the nodes the caller may have
 * preallocated stay its own.  mmap_lock is held for writing: the tree
 * cannot change between our steps and the stock ones.
 */
static struct vm_area_struct *
vmamerge_modify_next(const struct vma_merge_struct *vmg)
{
	struct vm_area_struct *next;

	if (vmg->end != vmg->vma->vm_end)
		return NULL;
	next = vma_iter_next_range(vmg->vmi);
	vmamerge_vma_iter_prev_range(vmg->vmi);
	return next;
}

/*
 * vmamerge_modify_active - vma_modify() with the decision point around it.
 * @vmg: built exactly as the stock wrapper builds it.
 * @path: which wrapper.
 *
 * .vma is the VMA being modified, .prev the caller's prev (which is .vma
 * itself when the range starts inside it, see vma_merge_existing_range()).
 * A merge happened if and only if vma_merge_existing_range() set
 * VMA_MERGE_SUCCESS; otherwise vma_modify() returns the (split) original
 * VMA or an error, and the decision point is told NULL.
 */
static struct vm_area_struct *
vmamerge_modify_active(struct vma_merge_struct *vmg, enum vmamerge_path path,
		       unsigned int *rehomed)
{
	struct vmamerge_merge m;
	struct vm_area_struct *ret;

	/* The stock merge rejects special mappings before any other test. */
	if (vmg->flags & VM_SPECIAL)
		return vma_modify(vmg);

	m = (struct vmamerge_merge) {
		.mm = vmg->mm,
		.path = path,
		.prev = vmg->prev,
		.vma = vmg->vma,
		.next = vmamerge_modify_next(vmg),
		.start = vmg->start,
		.end = vmg->end,
		.pgoff = vmg->pgoff,
		.anon_vma = vmg->anon_vma,
		.flags = vmg->flags,
		.file = vmg->file,
		.policy = vmg->policy,
		.uffd_ctx = vmg->uffd_ctx,
		.anon_name = vmg->anon_name,
	};
	vmamerge_merge_prepare(&m);
	if (rehomed)
		*rehomed = m.rehomed;
	/* The decision point may have re-homed the range (mirrors.h). */
	vmg->anon_vma = m.anon_vma;
	vmg->pgoff = m.pgoff;

	ret = vma_modify(vmg);

	vmamerge_merge_done(&m, vmg->state == VMA_MERGE_SUCCESS ? ret : NULL);
	return ret;
}

/* The common tail of the wrappers: only the active test when inactive. */
static inline struct vm_area_struct *
vmamerge_modify(struct vma_merge_struct *vmg, enum vmamerge_path path)
{
	if (likely(!vmamerge_mm_active(vmg->mm)))
		return vma_modify(vmg);
	return vmamerge_modify_active(vmg, path, NULL);
}

/* Mirrors vma_modify_flags(), mm/vma.c:1477. */
struct vm_area_struct *vmamerge_vma_modify_flags(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags)
{
	VMAMERGE_VMG_VMA_STATE(vmg, vmi, prev, vma, start, end);

	vmg.flags = new_flags;

	return vmamerge_modify(&vmg, VMAMERGE_PATH_MODIFY);
}

/* Mirrors vma_modify_flags_name(), mm/vma.c:1489. */
struct vm_area_struct *vmamerge_vma_modify_flags_name(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct anon_vma_name *new_name)
{
	VMAMERGE_VMG_VMA_STATE(vmg, vmi, prev, vma, start, end);

	vmg.flags = new_flags;
	vmg.anon_name = new_name;

	return vmamerge_modify(&vmg, VMAMERGE_PATH_MODIFY_NAME);
}

/* Mirrors vma_modify_policy(), mm/vma.c:1506. */
struct vm_area_struct *vmamerge_vma_modify_policy(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		struct mempolicy *new_pol)
{
	VMAMERGE_VMG_VMA_STATE(vmg, vmi, prev, vma, start, end);

	vmg.policy = new_pol;

	return vmamerge_modify(&vmg, VMAMERGE_PATH_MODIFY_POLICY);
}

/* Mirrors vma_modify_flags_uffd(), mm/vma.c:1520. */
struct vm_area_struct *vmamerge_vma_modify_flags_uffd(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct vm_userfaultfd_ctx new_ctx,
		bool give_up_on_oom)
{
	VMAMERGE_VMG_VMA_STATE(vmg, vmi, prev, vma, start, end);

	vmg.flags = new_flags;
	vmg.uffd_ctx = new_ctx;
	if (give_up_on_oom)
		vmg.give_up_on_oom = true;

	return vmamerge_modify(&vmg, VMAMERGE_PATH_MODIFY_UFFD);
}

/*
 * vmamerge_612_modify_flags_path - vma_modify_flags() for our own callers,
 * with the decision point always consulted: their @path, and in *@rehomed
 * what it changed (VMAMERGE_REHOMED_*).
 */
struct vm_area_struct *
vmamerge_612_modify_flags_path(struct vma_iterator *vmi,
			       struct vm_area_struct *prev,
			       struct vm_area_struct *vma,
			       unsigned long start, unsigned long end,
			       unsigned long new_flags,
			       enum vmamerge_path path, unsigned int *rehomed)
{
	VMAMERGE_VMG_VMA_STATE(vmg, vmi, prev, vma, start, end);

	vmg.flags = new_flags;

	return vmamerge_modify_active(&vmg, path, rehomed);
}
