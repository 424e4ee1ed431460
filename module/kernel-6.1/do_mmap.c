// SPDX-License-Identifier: GPL-2.0
/*
 * 6.1 only: the livepatch replacement of do_mmap() (Debian's 6.1.192-3,
 * mm/mmap.c:1269), for the three-way merge of a new anonymous mapping
 * that fills a gap.
 *
 * 6.1's mmap_region() merges a new range through vma_expand() without
 * vma_merge(): it joins the range to the next VMA if it can, and then to
 * the previous one only if the anon_vmas agree, so the decision point
 * never sees the attempt.  (6.12 merges through vma_merge_new_range(),
 * which we replace.)  So once the stock mmap_region() has returned, for
 * an active mm with the transplant feature, the VMA of a new anonymous
 * private range is offered to the merge logic again through the decision
 * point (transplant_merge.c, vmamerge_after_mmap()), as the mremap hook
 * does for a moved VMA.
 *
 * Why do_mmap() and not the syscall: the livepatch consistency model
 * counts a task as switched only when no replaced function is on its
 * stack, and a task may sleep in the mmap() syscall for as long as it
 * likes - vm_mmap_pgoff() waits, killable, for a userfaultfd monitor to
 * read UFFD_EVENT_UNMAP when MAP_FIXED replaced a registered range
 * (userfaultfd_unmap_complete()), and MAP_POPULATE and MAP_LOCKED fault
 * the range in (mm_populate()).  With the syscall replaced, such a task
 * had our replacement's frame on its stack and held the unload (disable)
 * transition open for as long (tests/guest/run.sh, uffd_park_test).
 *
 * do_mmap() runs entirely with the caller's mmap_lock held for writing
 * (vm_mmap_pgoff(), do_shmat(), the aio ring), and the kernel keeps waits
 * for userspace out of that lock: both waits above come after
 * vm_mmap_pgoff() dropped it.  A task is in here only as long as it
 * blocks every fault and mmap() of its own process; waiting for the lock
 * happens in the caller, outside.  The one long sleep left is a file's
 * ->mmap() or ->get_unmapped_area() waiting for I/O (an NFS revalidation
 * against a server that does not answer), which the syscall replacement
 * had as well; our tools bound their waits and name such tasks
 * (tools/klp-wait.sh).
 *
 * Why not mmap_region(): Debian's build inlined __mmap_region() into it,
 * so a replacement would have to copy 230 lines of VMA and maple tree
 * surgery; do_mmap() is argument checking around an out-of-line call of
 * the stock mmap_region().
 *
 * What is at @addr after mmap_region() returned it, for an anonymous
 * private range [addr, addr + len): a new VMA of exactly that range, or
 * the next VMA expanded down over it, or the previous one expanded up
 * over it (and over the next one too when all three agreed).  The lock is
 * still held for writing, so the VMA containing @addr is the one
 * mmap_region() left, and vmamerge_after_mmap() looks it up by address.
 * It may merge it away (vma_merge() frees the VMAs it removes): nothing
 * here or in our callers uses a VMA afterwards - vm_mmap_pgoff() populates
 * by address.  The new range is soft-dirty (mmap_region() marked the VMA
 * it ends in); the merge keeps that (merge_hook.c).
 *
 * A livepatch replacement cannot call the function it replaces, so this
 * is a copy of the stock function and of the static helpers it uses
 * (inlined in the Debian build); non-exported callees are listed in
 * module/ksyms.list.  The only addition is the hook after mmap_region().
 */
#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/hugetlb.h>
#include <linux/memfd.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/personality.h>
#include <linux/pkeys.h>
#include <linux/sched.h>
#include <linux/security.h>
#include <linux/shm.h>

#include "vmamerge.h"
#include "mirrors.h"

static_assert(__same_type(&do_mmap, &vmamerge_61_do_mmap));

#ifndef CONFIG_DEBUG_VM_MAPLE_TREE
#define validate_mm(mm) do { } while (0)
#endif

/* Mirrors round_hint_to_min(), mm/mmap.c:1208. */
static inline unsigned long round_hint_to_min(unsigned long hint)
{
	hint &= PAGE_MASK;
	if (((void *)hint != NULL) &&
	    (hint < mmap_min_addr))
		return PAGE_ALIGN(mmap_min_addr);
	return hint;
}

/* Mirrors file_mmap_size_max(), mm/mmap.c:1234. */
static inline u64 file_mmap_size_max(struct file *file, struct inode *inode)
{
	if (S_ISREG(inode->i_mode))
		return MAX_LFS_FILESIZE;

	if (S_ISBLK(inode->i_mode))
		return MAX_LFS_FILESIZE;

	if (S_ISSOCK(inode->i_mode))
		return MAX_LFS_FILESIZE;

	/* Special "we do even unsigned file positions" case */
	if (file->f_mode & FMODE_UNSIGNED_OFFSET)
		return 0;

	/* Yes, random drivers might want more. But I'm tired of buggy drivers */
	return ULONG_MAX;
}

/* Mirrors file_mmap_ok(), mm/mmap.c:1253. */
static inline bool file_mmap_ok(struct file *file, struct inode *inode,
				unsigned long pgoff, unsigned long len)
{
	u64 maxsize = file_mmap_size_max(file, inode);

	if (maxsize && len > maxsize)
		return false;
	maxsize -= len;
	if (pgoff > maxsize >> PAGE_SHIFT)
		return false;
	return true;
}

/*
 * Mirrors do_mmap(), mm/mmap.c:1269.  The caller must write-lock
 * current->mm->mmap_lock.
 */
unsigned long vmamerge_61_do_mmap(struct file *file, unsigned long addr,
				  unsigned long len, unsigned long prot,
				  unsigned long flags, unsigned long pgoff,
				  unsigned long *populate, struct list_head *uf)
{
	struct mm_struct *mm = current->mm;
	vm_flags_t vm_flags;
	int pkey = 0;

	validate_mm(mm);
	*populate = 0;

	if (!len)
		return -EINVAL;

	/*
	 * Does the application expect PROT_READ to imply PROT_EXEC?  (Not
	 * when the underlying filesystem is mounted noexec.)
	 */
	if ((prot & PROT_READ) && (current->personality & READ_IMPLIES_EXEC))
		if (!(file && path_noexec(&file->f_path)))
			prot |= PROT_EXEC;

	/* force arch specific MAP_FIXED handling in get_unmapped_area */
	if (flags & MAP_FIXED_NOREPLACE)
		flags |= MAP_FIXED;

	if (!(flags & MAP_FIXED))
		addr = round_hint_to_min(addr);

	/* Careful about overflows.. */
	len = PAGE_ALIGN(len);
	if (!len)
		return -ENOMEM;

	/* offset overflow? */
	if ((pgoff + (len >> PAGE_SHIFT)) < pgoff)
		return -EOVERFLOW;

	/* Too many mappings? */
	if (mm->map_count > sysctl_max_map_count)
		return -ENOMEM;

	/* Obtain the address to map to: verified, or selected. */
	addr = get_unmapped_area(file, addr, len, pgoff, flags);
	if (IS_ERR_VALUE(addr))
		return addr;

	if (flags & MAP_FIXED_NOREPLACE) {
		if (find_vma_intersection(mm, addr, addr + len))
			return -EEXIST;
	}

	if (prot == PROT_EXEC) {
		pkey = execute_only_pkey(mm);
		if (pkey < 0)
			pkey = 0;
	}

	/*
	 * Simple checks here, so that the lower-level routines need not;
	 * access permissions were handled by the open of the object.
	 */
	vm_flags = calc_vm_prot_bits(prot, pkey) | calc_vm_flag_bits(file, flags) |
			mm->def_flags | VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC;

	if (flags & MAP_LOCKED)
		if (!can_do_mlock())
			return -EPERM;

	if (mlock_future_check(mm, vm_flags, len))
		return -EAGAIN;

	if (file) {
		struct inode *inode = file_inode(file);
		unsigned int seals = memfd_file_seals(file);
		unsigned long flags_mask;

		if (!file_mmap_ok(file, inode, pgoff, len))
			return -EOVERFLOW;

		flags_mask = LEGACY_MAP_MASK | file->f_op->mmap_supported_flags;

		switch (flags & MAP_TYPE) {
		case MAP_SHARED:
			/*
			 * Force use of MAP_SHARED_VALIDATE with non-legacy
			 * flags; unsupported ones are silently ignored with
			 * MAP_SHARED, for backward compatibility.
			 */
			flags &= LEGACY_MAP_MASK;
			fallthrough;
		case MAP_SHARED_VALIDATE:
			if (flags & ~flags_mask)
				return -EOPNOTSUPP;
			if (prot & PROT_WRITE) {
				if (!(file->f_mode & FMODE_WRITE))
					return -EACCES;
				if (IS_SWAPFILE(file->f_mapping->host))
					return -ETXTBSY;
			}

			/* no writing to an append-only file */
			if (IS_APPEND(inode) && (file->f_mode & FMODE_WRITE))
				return -EACCES;

			vm_flags |= VM_SHARED | VM_MAYSHARE;
			if (!(file->f_mode & FMODE_WRITE))
				vm_flags &= ~(VM_MAYWRITE | VM_SHARED);
			else if (is_readonly_sealed(seals, vm_flags))
				vm_flags &= ~VM_MAYWRITE;
			fallthrough;
		case MAP_PRIVATE:
			if (!(file->f_mode & FMODE_READ))
				return -EACCES;
			if (path_noexec(&file->f_path)) {
				if (vm_flags & VM_EXEC)
					return -EPERM;
				vm_flags &= ~VM_MAYEXEC;
			}

			if (!file->f_op->mmap)
				return -ENODEV;
			if (vm_flags & (VM_GROWSDOWN|VM_GROWSUP))
				return -EINVAL;
			break;

		default:
			return -EINVAL;
		}
	} else {
		switch (flags & MAP_TYPE) {
		case MAP_SHARED:
			if (vm_flags & (VM_GROWSDOWN|VM_GROWSUP))
				return -EINVAL;
			/* Ignore pgoff. */
			pgoff = 0;
			vm_flags |= VM_SHARED | VM_MAYSHARE;
			break;
		case MAP_PRIVATE:
			/* Set pgoff according to addr for anon_vma. */
			pgoff = addr >> PAGE_SHIFT;
			break;
		default:
			return -EINVAL;
		}
	}

	/*
	 * Set 'VM_NORESERVE' if we should not account for the memory use
	 * of this mapping.
	 */
	if (flags & MAP_NORESERVE) {
		/* We honor MAP_NORESERVE if allowed to overcommit */
		if (sysctl_overcommit_memory != OVERCOMMIT_NEVER)
			vm_flags |= VM_NORESERVE;

		/* hugetlb applies strict overcommit unless MAP_NORESERVE */
		if (file && is_file_hugepages(file))
			vm_flags |= VM_NORESERVE;
	}

	addr = mmap_region(file, addr, len, vm_flags, pgoff, uf);
	if (!IS_ERR_VALUE(addr) &&
	    ((vm_flags & VM_LOCKED) ||
	     (flags & (MAP_POPULATE | MAP_NONBLOCK)) == MAP_POPULATE))
		*populate = len;
	/* ours: a new anonymous private range, mmap_lock still held */
	if (!IS_ERR_VALUE(addr) && !file && !(vm_flags & VM_SHARED) &&
	    vmamerge_mm_active(mm) &&
	    vmamerge_feature(VMAMERGE_FEATURE_TRANSPLANT))
		vmamerge_after_mmap(mm, addr, len);
	return addr;
}
