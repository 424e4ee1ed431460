/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prototypes of kernel internals that no header the module may include
 * declares, for the parts of the module that are the same on every
 * supported build.  Each is listed in ksyms.list and resolved through a
 * livepatch relocation; per-kernel internals are declared in the glue
 * (module/kernel-<series>/).
 */
#ifndef _VMAMERGE_KERNEL_INTERNAL_H
#define _VMAMERGE_KERNEL_INTERNAL_H

struct kmem_cache;
struct klp_patch;
struct mm_struct;
struct pid;
struct task_struct;

/* kernel/fork.c: the mm of @task if the caller may access it (ptrace). */
struct mm_struct *mm_access(struct task_struct *task, unsigned int mode);
/* kernel/pid.c: the pid behind a pidfd; -EBADF when @fd is none. */
struct pid *pidfd_get_pid(unsigned int fd, unsigned int *flags);
/* mm/rmap.c: the cache of anon_vma_chain entries (transplant.c). */
extern struct kmem_cache *anon_vma_chain_cachep;
/* kernel/livepatch/transition.c: the patch in transition, or NULL. */
extern struct klp_patch *klp_transition_patch;

#endif /* _VMAMERGE_KERNEL_INTERNAL_H */
