/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmamerge: internal interfaces between the kernel-independent parts of
 * the module and the per-kernel glue (module/kernel-<series>/).
 */
#ifndef _VMAMERGE_H
#define _VMAMERGE_H

#include <linux/types.h>
#include <linux/gfp.h>
#include <linux/mm_types.h>
#include <linux/livepatch.h>
#include <linux/moduleparam.h>
#include <linux/stringify.h>
#include "uapi/vmamerge.h"
#include "glue.h"	/* module/kernel-<series>/glue.h: MMF bits etc. */

#define VMAMERGE_NAME	"vmamerge"

/* ---- global configuration (core.c) ---- */

extern int vmamerge_mode;		/* enum vmamerge_mode */
extern unsigned int vmamerge_features;	/* VMAMERGE_FEATURE_* */

int vmamerge_set_mode(int mode);
int vmamerge_set_features(unsigned int features);
int vmamerge_edit_features(char *buf);
const char *vmamerge_mode_name(int mode);
const char *vmamerge_feature_name(int i);	/* of BIT(i); NULL past the end */
/* The one parser of mode and feature names (debugfs, module parameters). */
int vmamerge_parse_mode(const char *s);
int vmamerge_parse_features(char *buf, unsigned int *features);

/* A numeric module parameter with a range (core.c): kernel_param.arg */
struct vmamerge_bounded_param {
	unsigned long *val;
	unsigned long min, max;
};
extern const struct kernel_param_ops vmamerge_param_bounded_ops;

/* -DVMAMERGE_VERSION=<dkms.conf's PACKAGE_VERSION>, from the Makefile */
#ifdef VMAMERGE_VERSION
#define VMAMERGE_VERSION_STR __stringify(VMAMERGE_VERSION)
#else
#define VMAMERGE_VERSION_STR "unknown"	/* built without the Makefile */
#endif

/* ---- validated kernel builds (validated_builds.c) ---- */

int vmamerge_check_running_build(void);
int vmamerge_build_sysfs_init(void);
void vmamerge_build_sysfs_exit(void);

/* testing only: -EAGAIN when test_fail_init= names @step (core.c) */
int vmamerge_injected_failure(int step);

/* ---- per-mm opt-in state (optin.c) ---- */

/*
 * Is @mm opted in?  Inline: every call of a replaced function asks it, in
 * every process of the system (docs/benchmarks.md, "loaded").
 */
static inline bool vmamerge_mm_opted_in(const struct mm_struct *mm)
{
	return test_bit(VMAMERGE_MMF_OPTED_IN, &mm->flags);
}

bool vmamerge_mm_exec_keep(const struct mm_struct *mm);
bool vmamerge_mm_exec_once(const struct mm_struct *mm);
int vmamerge_mm_enable(struct mm_struct *mm, bool exec_keep, bool exec_once);
void vmamerge_mm_disable(struct mm_struct *mm);
void vmamerge_mm_fork(struct mm_struct *oldmm, struct mm_struct *newmm);
/* uprobe_dup_mmap.c: the replacement of uprobe_dup_mmap() */
void vmamerge_uprobe_dup_mmap(struct mm_struct *oldmm,
			      struct mm_struct *newmm);

/*
 * vmamerge_mm_active - should the merge paths act for this mm?
 * The combination of the global mode and the mm's opt-in bit; lock-free.
 */
static inline bool vmamerge_mm_active(const struct mm_struct *mm)
{
	int mode = READ_ONCE(vmamerge_mode);

	if (likely(mode == VMAMERGE_MODE_OPTIN))
		return vmamerge_mm_opted_in(mm);
	return mode == VMAMERGE_MODE_ALWAYS;
}

static inline bool vmamerge_feature(unsigned int feature)
{
	return READ_ONCE(vmamerge_features) & feature;
}

int vmamerge_optin_init(void);
void vmamerge_optin_exit(void);

/* ---- counters (counters.c) ---- */

/*
 * struct vmamerge_counting - the counting of one operation (a merge
 * attempt, the rewrite of an mremap() move): the per-mm counters of its
 * mm are looked up (klp_shadow_get(): a hash walk under RCU) at its first
 * count and reused for the rest of it.  Zeroed when the operation starts.
 * The pointer stays valid while the operation runs: the counters are
 * freed by exit_mmap() of the mm, which the operation's mm_users
 * reference (and mmap_lock) keeps away, and at module exit, after every
 * operation.  An mm that gets its counters during the operation counts
 * only globally until its next one.
 */
struct vmamerge_mm_counters;
struct vmamerge_counting {
	struct vmamerge_mm_counters *mc;
	bool looked_up;
};

void vmamerge_count_in(struct mm_struct *mm, struct vmamerge_counting *cn,
		       enum vmamerge_counter c, u64 n);
/* a count outside an operation: one lookup */
void vmamerge_count(struct mm_struct *mm, enum vmamerge_counter c, u64 n);
void vmamerge_counters_read_global(u64 *out);	/* VMAMERGE_NR_COUNTERS */
void vmamerge_counters_read_mm(struct mm_struct *mm, u64 *out);
void vmamerge_counters_exit(void);
/* per-mm part: called by optin.c */
int vmamerge_mm_counters_alloc(struct mm_struct *mm, gfp_t gfp);
void vmamerge_mm_counters_free(struct mm_struct *mm);
void vmamerge_mm_counters_free_all(void);
/*
 * The automatic compaction's state, kept with the per-mm counters (mms
 * without them are never compacted automatically).  claim: true if @mm
 * may be queued now - none queued, and @count at least @step above the
 * VMA count the last one left; then it is marked queued.  done: the walk
 * ended with @after VMAs (0: it did not run), unmark.
 */
bool vmamerge_mm_auto_claim(struct mm_struct *mm, int count, int step);
void vmamerge_mm_auto_done(struct mm_struct *mm, int after);

/* ---- merge decision point (merge_hook.c) ---- */

/*
 * Which kernel path asked for a merge.  X(id, "name"): VMAMERGE_PATH_<id>,
 * and the name the trace events print (path=name, trace.h).  One list for
 * both, so that the names cannot drift from the values.
 */
#define VMAMERGE_PATHS(X)						\
	X(MODIFY,	"modify")	/* mprotect/mlock/mseal: flags change */ \
	X(MODIFY_NAME,	"modify_name")	/* madvise, anon VMA names */	\
	X(MODIFY_POLICY, "modify_policy") /* mbind, set_mempolicy_home_node */ \
	X(MODIFY_UFFD,	"modify_uffd")	/* userfaultfd register/unregister */ \
	X(NEW_RANGE,	"new_range")	/* mmap, brk, mremap expand/move */ \
	X(VMA_MERGE,	"vma_merge")	/* 6.1: any caller of vma_merge() */ \
	X(MREMAP_MOVE,	"mremap_move")	/* ours: an mremap() move we rewrote for */ \
	X(MMAP,		"mmap")		/* ours, 6.1: after an anonymous mmap() */ \
	X(COMPACT,	"compact")	/* ours: VMAMERGE_IOC_COMPACT's walk */

#define VMAMERGE_PATH_ENUM_(id, name) VMAMERGE_PATH_##id,
enum vmamerge_path {
	VMAMERGE_PATHS(VMAMERGE_PATH_ENUM_)
	VMAMERGE_NR_PATHS
};

#undef VMAMERGE_PATH_ENUM_

/*
 * Why a merge happened (merge_hook.c), as the vmamerge_merge trace event
 * reports it: X(id, "name") gives VMAMERGE_CAUSE_<id> and cause=name.  The
 * names are those of the merge counters: av_null and av_same count in
 * av_merge_null and av_merge_same, the others in merge_<name>.
 */
#define VMAMERGE_CAUSES(X)						\
	X(NONE,		"none")		/* no merge */			\
	X(AV_NULL,	"av_null")	/* stock: one side had no anon_vma */ \
	X(AV_SAME,	"av_same")	/* stock: same anon_vma */	\
	X(RENUMBER,	"renumber")	/* ours: pgoff renumbered */	\
	X(TRANSPLANT,	"transplant")	/* ours: anon_vma transplanted */ \
	X(BOTH,		"both")		/* ours: both */		\
	X(ADOPT,	"adopt")	/* ours: an empty VMA took an anon_vma */

#define VMAMERGE_CAUSE_ENUM_(id, name) VMAMERGE_CAUSE_##id,
enum vmamerge_cause {
	VMAMERGE_CAUSES(VMAMERGE_CAUSE_ENUM_)
	VMAMERGE_NR_CAUSES
};

#undef VMAMERGE_CAUSE_ENUM_

/*
 * struct vmamerge_merge - one merge attempt, as seen by the decision point.
 * The glue fills it from the kernel's own arguments before the stock merge
 * logic runs.  @vma is NULL for a new range.
 *
 * @flags, @file, @policy, @uffd_ctx, @anon_name: the attributes the range
 * will have, which the stock logic compares with each neighbour's.
 * @no_right: the caller merges only to the left (6.12 brk: JUST_EXPAND).
 * @rehomed: set by the decision point when it changed an anon_vma
 * (transplant_merge.c), for the cause of the merge that follows.
 * @softdirty: the range or an adjacent VMA had VM_SOFTDIRTY before the
 * merge (merge_hook.c).
 * @counting: the attempt's counts, one lookup of the per-mm counters.
 */
struct vmamerge_merge {
	struct mm_struct *mm;
	enum vmamerge_path path;
	struct vm_area_struct *prev;
	struct vm_area_struct *vma;
	struct vm_area_struct *next;
	unsigned long start;
	unsigned long end;
	pgoff_t pgoff;
	struct anon_vma *anon_vma;
	unsigned long flags;
	struct file *file;
	struct mempolicy *policy;
	struct vm_userfaultfd_ctx uffd_ctx;
	struct anon_vma_name *anon_name;
	bool no_right;
	unsigned int rehomed;	/* VMAMERGE_REHOMED_* */
	bool softdirty;
	struct vmamerge_counting counting;
};

static inline void vmamerge_merge_count(struct vmamerge_merge *m,
					enum vmamerge_counter c, u64 n)
{
	vmamerge_count_in(m->mm, &m->counting, c, n);
}

#define VMAMERGE_REHOMED_TRANSPLANT	(1U << 0)	/* pages moved */
#define VMAMERGE_REHOMED_ADOPT		(1U << 1)	/* an empty VMA joined */
#define VMAMERGE_REHOMED_RENUMBER	(1U << 2)	/* an offset changed */

/*
 * vmamerge_merge_prepare - decision point, before the stock merge logic.
 * Called under mmap_lock held for writing, only for active mms.  With the
 * features it may give VMAs of the merge another anon_vma and, for an
 * existing range, another page offset (transplant_merge.c, move_merge.c)
 * and then updates @m->anon_vma and @m->pgoff.
 */
void vmamerge_merge_prepare(struct vmamerge_merge *m);
/* transplant_merge.c: make offsets and anon_vmas of a merge agree */
void vmamerge_rehome_for_merge(struct vmamerge_merge *m);
/* ... whether @vma may merge with @m's range but for anon_vma and offsets */
bool vmamerge_attrs_match(const struct vmamerge_merge *m,
			  struct vm_area_struct *vma);
/* ... and offer a new anonymous mapping at @addr to the merge logic (6.1) */
void vmamerge_after_mmap(struct mm_struct *mm, unsigned long addr,
			 unsigned long len);
/* vmamerge_merge_done - the stock result (@merged NULL: no merge). */
void vmamerge_merge_done(struct vmamerge_merge *m,
			 struct vm_area_struct *merged);

/* ---- merging inside mremap() moves (move_merge.c, renumber.c) ---- */

/*
 * struct vmamerge_move - one copy_vma() of an mremap() move, as our
 * replacement (kernel-<series>/copy_vma.c) hands it to move_merge.c before
 * the stock merge attempt.
 * @src: the source VMA; [@addr, @end) the destination range; @pgoff its
 * page offset (updated when the source is renumbered); @prev, @next: the
 * VMAs around the destination (either may be NULL or not adjacent).
 * @path: VMAMERGE_PATH_MREMAP_MOVE, or the in-place path that uses the
 * same decision (vmamerge_rehome_in_place()), for trace events.
 * @renumbered, @rehomed (VMAMERGE_REHOMED_*): what was rewritten.
 * @counting: the move's counts (rewrites, refusals, its merge's cause).
 */
struct vmamerge_move {
	struct mm_struct *mm;
	enum vmamerge_path path;
	struct vm_area_struct *src;
	unsigned long addr;
	unsigned long end;
	pgoff_t pgoff;
	struct vm_area_struct *prev;
	struct vm_area_struct *next;
	bool renumbered;
	unsigned int rehomed;
	struct vmamerge_counting counting;
};

static inline void vmamerge_move_count(struct vmamerge_move *mv,
				       enum vmamerge_counter c, u64 n)
{
	vmamerge_count_in(mv->mm, &mv->counting, c, n);
}

/*
 * vmamerge_move_prepare - for an active mm with the renumber feature:
 * rewrite what keeps the moved range from merging, if that is all that
 * does.  Returns whether anything was rewritten; then the merge attempt
 * runs as VMAMERGE_PATH_MREMAP_MOVE and vmamerge_move_done() follows with
 * its result.  mmap_lock held for writing.
 */
bool vmamerge_move_prepare(struct vmamerge_move *mv);
/* Before it: split a moved part off a source that touches the destination */
struct vm_area_struct *vmamerge_move_isolate(struct vm_area_struct *vma,
					     unsigned long addr,
					     unsigned long len, pgoff_t pgoff);
void vmamerge_move_done(struct vmamerge_move *mv, struct vm_area_struct *merged);
/* The same decision for an existing range next to @left and/or @right */
void vmamerge_rehome_in_place(struct vmamerge_merge *m,
			      struct vm_area_struct *left,
			      struct vm_area_struct *right);
/* transplant.c: the workqueue that releases emptied anon_vmas */
int vmamerge_transplant_init(void);
void vmamerge_transplant_exit(void);

/* ---- control plane (control.c, vma_report.c) ---- */

int vmamerge_copy_arg(void *karg, size_t ksize, size_t ver0,
		      const void __user *uarg, u32 *usize);
int vmamerge_copy_result(void __user *uarg, u32 usize, const void *karg,
			 size_t ksize);
int vmamerge_check_target(u32 kind, s32 id);
struct mm_struct *vmamerge_get_target_mm(u32 kind, s32 id, unsigned int mode,
					 pid_t *pid);
int vmamerge_ioctl_vmas(void __user *uarg);
/* compact.c: the walk of VMAMERGE_IOC_COMPACT (out fields but counters) */
int vmamerge_compact_mm(struct mm_struct *mm, struct vmamerge_compact *c);
/* ... queued by itself when an opted-in mm nears vm.max_map_count */
void vmamerge_compact_maybe_queue(struct mm_struct *mm);
int vmamerge_compact_init(void);
void vmamerge_compact_exit(void);

/* ---- rmap verifier (verify.c; helpers in verify.h) ---- */

/*
 * vmamerge_verify_mm - check the rmap invariants of @mm into the out fields
 * of @v (VMAMERGE_IOC_VERIFY; the caller zeroed them).  Takes mmap_lock of
 * @mm for reading; the caller holds an mm_users reference.  Returns 0 (also
 * when violations were found) or -EINTR (fatal signal).
 */
int vmamerge_verify_mm(struct mm_struct *mm, struct vmamerge_verify *v);

int vmamerge_control_init(void);
void vmamerge_control_exit(void);
int vmamerge_debugfs_init(void);
void vmamerge_debugfs_exit(void);

/* testing only: test_lock_addr, test_rewrite_hold_ms (test_lock.c) */
void vmamerge_test_lock_exit(void);
void vmamerge_test_rewrite_hold(void);

/* ---- livepatch (livepatch.c) and the glue's table ---- */

/* Provided by module/kernel-<series>/: the functions this build replaces. */
extern struct klp_func vmamerge_glue_funcs[];

int vmamerge_livepatch_enable(void);
extern bool vmamerge_patch_live;	/* livepatch.c; read locklessly */

#endif /* _VMAMERGE_H */
