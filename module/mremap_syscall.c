// SPDX-License-Identifier: GPL-2.0
/*
 * The livepatch replacement of __x64_sys_mremap(), the same on both
 * builds: it does what the stock entry point does - call the syscall body
 * __do_sys_mremap() with the arguments from the registers - and then, for
 * an active mm with renumbering enabled whose mapping moved, hands the
 * destination to renumber.c.
 *
 * Why here and not inside move_vma(): the source VMA is only unmapped
 * after the move, and userfaultfd's remap event is delivered after
 * mmap_lock has been dropped; at the end of the syscall the move is
 * complete and nothing of the kernel's still points at the VMAs we may
 * merge away.  The price is taking mmap_lock a second time, only for
 * opted-in processes, only for moves.  32-bit callers
 * (__ia32_sys_mremap) keep the stock behaviour.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/err.h>

#include "vmamerge.h"
#include "kernel_internal.h"	/* __do_sys_mremap() */

/*
 * The x86-64 syscall ABI: arguments in di, si, dx, r10, r8
 * (arch/x86/include/asm/syscall_wrapper.h).
 */
long vmamerge_x64_sys_mremap(const struct pt_regs *regs)
{
	unsigned long addr = regs->di;
	long ret;

	ret = __do_sys_mremap(regs->di, regs->si, regs->dx, regs->r10,
			      regs->r8);
	if (IS_ERR_VALUE(ret) || (unsigned long)ret == addr)
		return ret;	/* failed, or resized in place */
	if (vmamerge_mm_active(current->mm) &&
	    vmamerge_feature(VMAMERGE_FEATURE_RENUMBER))
		vmamerge_after_mremap_move(current->mm, ret);
	return ret;
}
