// SPDX-License-Identifier: GPL-2.0
/*
 * 6.1 only: the livepatch replacement of __x64_sys_mmap() (Debian's
 * 6.1.192-2, arch/x86/kernel/sys_x86_64.c:86), for the three-way merge of
 * a new anonymous mapping that fills a gap.
 *
 * 6.1's mmap_region() merges a new range through vma_expand() without
 * vma_merge(): it joins the range to the next VMA if it can, and then to
 * the previous one only if the anon_vmas agree, so the decision point
 * never sees the attempt.  (6.12 merges through vma_merge_new_range(),
 * which we replace.)  So after the syscall, for an active mm with the
 * transplant feature, the new anonymous private VMA is offered to the
 * merge logic again through the decision point (transplant_merge.c), as
 * the mremap hook does for a moved VMA.  The stock entry point is
 * mirrored as it is: the offset check, then ksys_mmap_pgoff().
 */
#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/syscalls.h>

#include "vmamerge.h"
#include "mirrors.h"

/* x86-64 syscall ABI: di, si, dx, r10, r8, r9 */
long vmamerge_61_x64_sys_mmap(const struct pt_regs *regs)
{
	unsigned long flags = regs->r10, off = regs->r9;
	long ret;

	if (off & ~PAGE_MASK)
		return -EINVAL;
	ret = ksys_mmap_pgoff(regs->di, regs->si, regs->dx, flags, regs->r8,
			      off >> PAGE_SHIFT);
	if (IS_ERR_VALUE(ret) || !(flags & MAP_ANONYMOUS) ||
	    (flags & MAP_TYPE) != MAP_PRIVATE)
		return ret;
	if (vmamerge_mm_active(current->mm) &&
	    vmamerge_feature(VMAMERGE_FEATURE_TRANSPLANT))
		vmamerge_after_mmap(current->mm, ret);
	return ret;
}
