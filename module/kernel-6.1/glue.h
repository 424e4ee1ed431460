/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Glue for Debian's 6.1 kernel (6.1.192-3): the facts the kernel-independent
 * code needs about this build.
 */
#ifndef _VMAMERGE_GLUE_H
#define _VMAMERGE_GLUE_H

/*
 * Our bits in mm->flags.  Bits 11-15 are unused by Debian 6.1
 * (include/linux/sched/coredump.h) and outside MMF_INIT_MASK, so mm_init()
 * does not copy them: inheritance on fork and exec is ours to do
 * (uprobe_dup_mmap.c checks the mask at build time).  Bits 32-63 would not do on 6.12: its
 * MMF_INIT_MASK includes (1 << 31), a negative int, which sign-extends
 * and makes mm_init() keep every bit above 31.
 */
#define VMAMERGE_MMF_OPTED_IN	14
#define VMAMERGE_MMF_EXEC_KEEP	15
#define VMAMERGE_MMF_EXEC_ONCE	13
/* the mm has per-mm counters (a klp shadow): exit_mmap() frees them */
#define VMAMERGE_MMF_COUNTERS	12

#define VMAMERGE_KERNEL_SERIES	"6.1"

/*
 * The kernel keeps its own build id in vmlinux_build_id (include/linux/
 * buildid.h's condition for this series); Debian's kernels have it, the
 * debug twins' configs do not.
 */
#define VMAMERGE_HAVE_VMLINUX_BUILD_ID \
	(IS_ENABLED(CONFIG_STACKTRACE_BUILD_ID) || IS_ENABLED(CONFIG_CRASH_CORE))

#endif /* _VMAMERGE_GLUE_H */
