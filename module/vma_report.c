// SPDX-License-Identifier: GPL-2.0
/*
 * VMAMERGE_IOC_VMAS: report a process's VMAs with what /proc/PID/maps
 * hides - anonymous page offsets and anon_vma sharing between neighbours.
 * Used by "vmamerge maps" and by the tests to assert exact layouts.  No
 * kernel pointer leaves the kernel: sharing is reported as flags.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/rmap.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>

#include "vmamerge.h"

/* Describe @vma; @prev is the VMA just below it in address order. */
static void vmamerge_fill_vma(struct vmamerge_vma *out,
			      struct vm_area_struct *vma,
			      struct vm_area_struct *prev)
{
	/* Faults may set ->anon_vma under the read lock: read it once. */
	struct anon_vma *av = READ_ONCE(vma->anon_vma);
	struct anon_vma *pav = prev ? READ_ONCE(prev->anon_vma) : NULL;

	memset(out, 0, sizeof(*out));
	out->start = vma->vm_start;
	out->end = vma->vm_end;
	out->pgoff = vma->vm_pgoff;
	out->vm_flags = vma->vm_flags;
	if (av)
		out->flags |= VMAMERGE_VMA_ANON;
	if (vma->vm_file)
		out->flags |= VMAMERGE_VMA_FILE;
	if (!prev || prev->vm_end != vma->vm_start)
		return;
	out->flags |= VMAMERGE_VMA_ADJACENT_PREV;
	if (!av || !pav)
		return;
	if (av == pav)
		out->flags |= VMAMERGE_VMA_SAME_AV_PREV;
	/* An anon_vma's root never changes once it is set up. */
	if (av->root == pav->root)
		out->flags |= VMAMERGE_VMA_SAME_ROOT_PREV;
}

/* Collect up to @nr VMAs ending above @addr; returns the number or -errno. */
static long vmamerge_collect_vmas(struct mm_struct *mm, unsigned long addr,
				  struct vmamerge_vma *buf, u32 nr)
{
	struct vm_area_struct *vma, *prev = NULL;
	long n = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	if (addr) {
		prev = find_vma(mm, addr - 1);
		if (prev && prev->vm_end != addr)
			prev = NULL;
	}
	for (vma = find_vma(mm, addr); vma && n < nr;
	     vma = find_vma(mm, vma->vm_end)) {
		vmamerge_fill_vma(&buf[n++], vma, prev);
		prev = vma;
	}
	mmap_read_unlock(mm);
	return n;
}

/* Copy @n entries out with the caller's element size (versioned). */
static int vmamerge_copy_vmas(u64 uptr, u32 usize,
			      const struct vmamerge_vma *buf, long n)
{
	size_t ksize = sizeof(*buf), len = min_t(size_t, usize, ksize);
	char __user *dst = u64_to_user_ptr(uptr);
	long i;

	for (i = 0; i < n; i++, dst += usize) {
		if (copy_to_user(dst, &buf[i], len))
			return -EFAULT;
		if (usize > len && clear_user(dst + len, usize - len))
			return -EFAULT;
	}
	return 0;
}

static int vmamerge_vmas_valid(const struct vmamerge_vmas *v)
{
	if (v->reserved0 || v->reserved[0] || v->reserved[1])
		return -EINVAL;
	if (v->vma_size < sizeof(struct vmamerge_vma) ||
	    v->vma_size > PAGE_SIZE || v->nr > VMAMERGE_VMAS_MAX)
		return -EINVAL;
	return vmamerge_check_target(v->target_kind, v->target_id);
}

int vmamerge_ioctl_vmas(void __user *uarg)
{
	struct vmamerge_vma *buf = NULL;
	struct vmamerge_vmas v;
	struct mm_struct *mm;
	pid_t pid;
	u32 usize;
	long n;
	int ret;

	ret = vmamerge_copy_arg(&v, sizeof(v), VMAMERGE_VMAS_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	ret = vmamerge_vmas_valid(&v);
	if (ret)
		return ret;
	mm = vmamerge_get_target_mm(v.target_kind, v.target_id,
				    PTRACE_MODE_READ_FSCREDS, &pid);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	if (v.nr) {
		buf = kvcalloc(v.nr, sizeof(*buf), GFP_KERNEL);
		if (!buf) {
			ret = -ENOMEM;
			goto out;
		}
	}
	n = vmamerge_collect_vmas(mm, v.addr, buf, v.nr);
	if (n < 0) {
		ret = n;
		goto out;
	}
	ret = vmamerge_copy_vmas(v.vmas_ptr, v.vma_size, buf, n);
	if (ret)
		goto out;
	v.nr = n;
	ret = vmamerge_copy_result(uarg, usize, &v, sizeof(v));
out:
	kvfree(buf);
	mmput(mm);
	return ret;
}
