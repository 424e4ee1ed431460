/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmamerge: our private copy of the declarations we need from the kernel's
 * internal header mm/vma.h, for Debian's 6.12.117 (6.12.117-1~deb12u1).
 *
 * Debian's linux-headers package ships none of the mm/ internal headers,
 * so the types below are written out here.  They must match the real ones
 * field by field: tests/layout-check.sh compiles them next to the real
 * mm/vma.h (and mm/vma.c) of that exact build and compares size, offsets,
 * bitfields, enum values and every prototype.  Any other sublevel needs its
 * own check before this file may be used for it.
 *
 * When the kernel's own mm/vma.h has been included first (only done by
 * tests/layout-check.sh), its types are used and only our prototypes and
 * helpers are declared, so that the compiler checks them against the real
 * definitions.
 */
#ifndef _VMAMERGE_MM_VMA_H
#define _VMAMERGE_MM_VMA_H

#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/mempolicy.h>
#include <linux/mm_inline.h>
#include <linux/userfaultfd_k.h>

#ifndef __MM_VMA_H	/* the include guard of the kernel's mm/vma.h */

/* Result of a merge attempt, in vma_merge_struct.state (mm/vma.h:55). */
enum vma_merge_state {
	VMA_MERGE_START,
	VMA_MERGE_ERROR_NOMEM,
	VMA_MERGE_NOMERGE,
	VMA_MERGE_SUCCESS,
};

/* vma_merge_struct.merge_flags (mm/vma.h:62). */
enum vma_merge_flags {
	VMG_FLAG_DEFAULT = 0,
	/*
	 * Expand only (brk): nothing can merge to the right, the iterator is
	 * positioned at prev, and the state is not reset on failure.
	 */
	VMG_FLAG_JUST_EXPAND = 1 << 0,
};

/* One VMA merge operation (mm/vma.h:74). */
struct vma_merge_struct {
	struct mm_struct *mm;
	struct vma_iterator *vmi;
	pgoff_t pgoff;
	struct vm_area_struct *prev;
	struct vm_area_struct *next;	/* set by the existing-range merge */
	struct vm_area_struct *vma;	/* new range: NULL; else the modified VMA */
	unsigned long start;
	unsigned long end;
	unsigned long flags;
	struct file *file;
	struct anon_vma *anon_vma;
	struct mempolicy *policy;
	struct vm_userfaultfd_ctx uffd_ctx;
	struct anon_vma_name *anon_name;
	enum vma_merge_flags merge_flags;
	enum vma_merge_state state;

	/* On -ENOMEM during a possible merge, give up and return NULL. */
	bool give_up_on_oom :1;

	/* Skip uprobe_mmap() on the merged VMA. */
	bool skip_vma_uprobe :1;
};

#endif /* !__MM_VMA_H */

/* As the kernel's vmg_nomem(): did the merge fail for lack of memory? */
static inline bool vmamerge_vmg_nomem(struct vma_merge_struct *vmg)
{
	return vmg->state == VMA_MERGE_ERROR_NOMEM;
}

/* As vma_pgoff_offset(): the page offset of @addr in @vma (addr >= start). */
static inline pgoff_t vmamerge_vma_pgoff_offset(struct vm_area_struct *vma,
						unsigned long addr)
{
	return vma->vm_pgoff + PHYS_PFN(addr - vma->vm_start);
}

/*
 * VMAMERGE_VMG_VMA_STATE - declare and initialise a vma_merge_struct for a
 * change of [@start_, @end_) inside @vma_, exactly as the kernel's
 * VMG_VMA_STATE() does (every attribute taken from @vma_, next NULL).
 */
#define VMAMERGE_VMG_VMA_STATE(name, vmi_, prev_, vma_, start_, end_)	\
	struct vma_merge_struct name = {				\
		.mm = (vma_)->vm_mm,					\
		.vmi = vmi_,						\
		.prev = prev_,						\
		.next = NULL,						\
		.vma = vma_,						\
		.start = start_,					\
		.end = end_,						\
		.flags = (vma_)->vm_flags,				\
		.pgoff = vmamerge_vma_pgoff_offset(vma_, start_),	\
		.file = (vma_)->vm_file,				\
		.anon_vma = (vma_)->anon_vma,				\
		.policy = vma_policy(vma_),				\
		.uffd_ctx = (vma_)->vm_userfaultfd_ctx,			\
		.anon_name = anon_vma_name(vma_),			\
		.state = VMA_MERGE_START,				\
		.merge_flags = VMG_FLAG_DEFAULT,			\
	}

/*
 * As vma_iter_next_rewind() (mm/vma.h:525): the VMA after the iterator's
 * position, the one before it in *@pprev (if @pprev), and the iterator
 * back at the range it started from.
 */
static inline struct vm_area_struct *
vmamerge_vma_iter_next_rewind(struct vma_iterator *vmi,
			      struct vm_area_struct **pprev)
{
	struct vm_area_struct *next = vma_next(vmi);
	struct vm_area_struct *prev = vma_prev(vmi);

	/*
	 * Without a previous VMA the iterator is already at the start of the
	 * range; with one, step over it again.
	 */
	if (prev)
		vma_iter_next_range(vmi);
	if (pprev)
		*pprev = prev;
	return next;
}

/* As vma_iter_prev_range() (mm/vma.h:515): the range before the position. */
static inline struct vm_area_struct *
vmamerge_vma_iter_prev_range(struct vma_iterator *vmi)
{
	return mas_prev_range(&vmi->mas, 0);
}

/* As vma_iter_addr(): the address the iterator is positioned at. */
static inline unsigned long vmamerge_vma_iter_addr(struct vma_iterator *vmi)
{
	return vmi->mas.index;
}

/*
 * Out-of-line kernel internals we call.  Neither is exported: the calls are
 * resolved through livepatch relocations (module/ksyms.list), which give
 * direct calls.  Never take their address (IBT, craft.md §1).
 */

/*
 * vma_modify - static in mm/vma.c:1437 but out of line in the Debian build
 * (the four vma_modify_flags*() wrappers call it).  Tries
 * vma_merge_existing_range() (inlined into it), else splits.  Returns the
 * merged VMA (vmg->state == VMA_MERGE_SUCCESS), @vmg->vma after splitting
 * or unchanged, or an ERR_PTR().
 */
struct vm_area_struct *vma_modify(struct vma_merge_struct *vmg);

/* vma_expand - mm/vma.c:1016; 0 or -ENOMEM (then vmg->state may say so). */
int vma_expand(struct vma_merge_struct *vmg);

/* split_vma - mm/vma.c:463: split @vma at @addr; 0 or -ENOMEM. */
int split_vma(struct vma_iterator *vmi, struct vm_area_struct *vma,
	      unsigned long addr, int new_below);

/* vma_link - mm/vma.c:1626: insert a new VMA into the mm; 0 or -ENOMEM. */
int vma_link(struct mm_struct *mm, struct vm_area_struct *vma);

/*
 * The stock functions the livepatch replaces (mm/vma.h:289-322).  Declared
 * only so that each replacement can be checked to have exactly the same
 * type; never call them: ftrace would send the call to our replacement.
 */
struct vm_area_struct *vma_modify_flags(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags);
struct vm_area_struct *vma_modify_flags_name(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct anon_vma_name *new_name);
struct vm_area_struct *vma_modify_policy(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		struct mempolicy *new_pol);
struct vm_area_struct *vma_modify_flags_uffd(struct vma_iterator *vmi,
		struct vm_area_struct *prev, struct vm_area_struct *vma,
		unsigned long start, unsigned long end,
		unsigned long new_flags, struct vm_userfaultfd_ctx new_ctx,
		bool give_up_on_oom);
struct vm_area_struct *vma_merge_new_range(struct vma_merge_struct *vmg);
struct vm_area_struct *copy_vma(struct vm_area_struct **vmap,
		unsigned long addr, unsigned long len, pgoff_t pgoff,
		bool *need_rmap_locks, bool keep_source);

#endif /* _VMAMERGE_MM_VMA_H */
