/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * vmamerge user API: the /dev/vmamerge ioctl interface.
 *
 * Every argument struct starts with a __u32 size that the caller sets to
 * sizeof() of the struct it was compiled with.  The module accepts any size
 * from the first published version (VMAMERGE_*_SIZE_VER0) up to one page:
 * a larger struct from a newer userspace is accepted only if the bytes the
 * module does not know are zero (-E2BIG otherwise), a smaller one than VER0
 * is -EINVAL.  Reserved fields must be zero (-EINVAL).  A call that fails
 * changes nothing.
 */
#ifndef _UAPI_LINUX_VMAMERGE_H
#define _UAPI_LINUX_VMAMERGE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define VMAMERGE_DEVICE		"/dev/vmamerge"
#define VMAMERGE_ABI_VERSION	1

/* Target selection, as in process_madvise(): self, a pid or a pidfd. */
enum vmamerge_target_kind {
	VMAMERGE_TARGET_SELF	= 0,	/* target_id must be 0 */
	VMAMERGE_TARGET_PID	= 1,	/* target_id is a pid in the caller's ns */
	VMAMERGE_TARGET_PIDFD	= 2,	/* target_id is a pidfd */
};

/* Advice for VMAMERGE_IOC_ADVISE. */
enum vmamerge_advice {
	VMAMERGE_ADVISE_ENABLE	= 1,	/* opt the process (its mm) in */
	VMAMERGE_ADVISE_DISABLE	= 2,	/* opt it out again */
};

/*
 * Flags for VMAMERGE_ADVISE_ENABLE (at most one of them):
 * NO_EXEC: the opt-in ends at execve();
 * EXEC_ONCE: it survives the next execve() only - the program executed is
 * opted in without exec-keep ("vmamerge run --no-exec").
 */
#define VMAMERGE_ADVISE_F_NO_EXEC	(1ULL << 0)
#define VMAMERGE_ADVISE_F_EXEC_ONCE	(1ULL << 1)
#define VMAMERGE_ADVISE_F_ALL		(VMAMERGE_ADVISE_F_NO_EXEC | \
					 VMAMERGE_ADVISE_F_EXEC_ONCE)

/*
 * ENABLE sets the exec behaviour anew each time: enabling an opted-in
 * process again with or without VMAMERGE_ADVISE_F_NO_EXEC replaces it.
 */
struct vmamerge_advise {
	__u32 size;		/* sizeof(struct vmamerge_advise) */
	__u32 target_kind;	/* enum vmamerge_target_kind */
	__s32 target_id;	/* pid or pidfd, see target_kind */
	__u32 advice;		/* enum vmamerge_advice */
	__u64 flags;		/* VMAMERGE_ADVISE_F_* */
	__u64 reserved[2];	/* must be zero */
};
#define VMAMERGE_ADVISE_SIZE_VER0	40

/* Global mode, as in the transparent-hugepage convention. */
enum vmamerge_mode {
	VMAMERGE_MODE_NEVER	= 0,	/* nobody, whatever was opted in */
	VMAMERGE_MODE_OPTIN	= 1,	/* opted-in processes only (default) */
	VMAMERGE_MODE_ALWAYS	= 2,	/* every process */
};

/* Feature switches; all are on by default. */
#define VMAMERGE_FEATURE_RENUMBER	(1U << 0) /* pgoff update on mremap */
#define VMAMERGE_FEATURE_TRANSPLANT	(1U << 1) /* different-anon_vma merge */
#define VMAMERGE_FEATURES_ALL		(VMAMERGE_FEATURE_RENUMBER | \
					 VMAMERGE_FEATURE_TRANSPLANT)

/*
 * VMAMERGE_IOC_GET_CONFIG fills mode/features/abi_version.
 * VMAMERGE_IOC_SET_CONFIG needs CAP_SYS_ADMIN; set_mask chooses which of
 * mode and features to change.
 */
#define VMAMERGE_CONFIG_SET_MODE	(1U << 0)
#define VMAMERGE_CONFIG_SET_FEATURES	(1U << 1)
#define VMAMERGE_CONFIG_SET_ALL		(VMAMERGE_CONFIG_SET_MODE | \
					 VMAMERGE_CONFIG_SET_FEATURES)

struct vmamerge_config {
	__u32 size;		/* sizeof(struct vmamerge_config) */
	__u32 set_mask;		/* SET_CONFIG: VMAMERGE_CONFIG_SET_*; GET: 0 */
	__u32 mode;		/* enum vmamerge_mode */
	__u32 features;		/* VMAMERGE_FEATURE_* */
	__u32 abi_version;	/* out: VMAMERGE_ABI_VERSION */
	__u32 reserved0;	/* must be zero */
	__u64 reserved[2];	/* must be zero */
};
#define VMAMERGE_CONFIG_SIZE_VER0	40

/*
 * Counters.  The same names appear in debugfs vmamerge/stats, in
 * "vmamerge stats" and in the per-process query.  New counters are only
 * ever appended.  X(id, "name")
 */
#define VMAMERGE_COUNTERS(X)						\
	X(MERGE_ATTEMPTS,	"merge_attempts")			\
	X(MERGE_FAILED,		"merge_failed")				\
	X(AV_MERGE_NULL,	"av_merge_null")			\
	X(AV_MERGE_SAME,	"av_merge_same")			\
	X(AV_MERGE_DIFFERENT,	"av_merge_different")			\
	X(AV_MERGE_FAILED,	"av_merge_failed")			\
	X(MERGE_RENUMBER,	"merge_renumber")			\
	X(MERGE_TRANSPLANT,	"merge_transplant")			\
	X(MERGE_BOTH,		"merge_both")				\
	X(MERGE_EXPAND,		"merge_expand")				\
	X(VMAS_RENUMBERED,	"vmas_renumbered")			\
	X(PAGES_RENUMBERED,	"pages_renumbered")			\
	X(VMAS_TRANSPLANTED,	"vmas_transplanted")			\
	X(PAGES_TRANSPLANTED,	"pages_transplanted")			\
	X(REFUSED_SHARED,	"refused_shared")			\
	X(REFUSED_KSM,		"refused_ksm")				\
	X(REFUSED_PINNED,	"refused_pinned")			\
	X(REFUSED_MIGRATION,	"refused_migration")			\
	X(REFUSED_BUSY,		"refused_busy")				\
	X(REFUSED_THP,		"refused_thp")				\
	X(REFUSED_DEVICE,	"refused_device")			\
	X(REFUSED_SPECIAL,	"refused_special")			\
	X(REFUSED_TOO_LARGE,	"refused_too_large")			\
	X(REFUSED_SWAP,		"refused_swap")				\
	X(TIME_NS,		"time_ns")				\
	X(REFUSED_NOMEM,	"refused_nomem")			\
	X(REFUSED_UNSTABLE,	"refused_unstable")			\
	X(MERGE_ADOPT,		"merge_adopt")				\
	X(VMAS_ADOPTED,		"vmas_adopted")				\
	X(REHOMED_UNMERGED,	"rehomed_unmerged")			\
	X(REFUSED_SOFTDIRTY,	"refused_softdirty")			\
	X(PAGES_REWRITTEN,	"pages_rewritten")				\
	X(COMPACTIONS_AUTO,	"compactions_auto")			\
	X(REFUSED_FAMILY,	"refused_family")			\
	X(REWRITE_RETRIES,	"rewrite_retries")

#define VMAMERGE_COUNTER_ENUM_(id, name) VMAMERGE_C_##id,
enum vmamerge_counter {
	VMAMERGE_COUNTERS(VMAMERGE_COUNTER_ENUM_)
	VMAMERGE_NR_COUNTERS
};
#undef VMAMERGE_COUNTER_ENUM_

/* Room in the query struct; VMAMERGE_NR_COUNTERS never exceeds it. */
#define VMAMERGE_MAX_COUNTERS	64

/* State bits reported by VMAMERGE_IOC_QUERY. */
#define VMAMERGE_STATE_OPTED_IN		(1U << 0) /* advised ENABLE */
#define VMAMERGE_STATE_EXEC_KEEP	(1U << 1) /* opt-in survives execve */
#define VMAMERGE_STATE_ACTIVE		(1U << 2) /* opted in under the mode */
#define VMAMERGE_STATE_EXEC_ONCE	(1U << 3) /* keep only for one exec */

/*
 * VMAMERGE_IOC_QUERY: the state and counters of one process.  Querying
 * another process needs PTRACE_MODE_READ rights over it.  With
 * target_kind == VMAMERGE_TARGET_SELF and global == 1 it returns the
 * global counters instead (state is then 0).
 */
struct vmamerge_query {
	__u32 size;		/* sizeof(struct vmamerge_query) */
	__u32 target_kind;	/* enum vmamerge_target_kind */
	__s32 target_id;
	__u32 global;		/* 1: global counters, target must be SELF */
	__u64 reserved[2];	/* must be zero */
	/* out */
	__u32 state;		/* VMAMERGE_STATE_* */
	__u32 nr_counters;	/* valid entries in counters[] */
	__u64 counters[VMAMERGE_MAX_COUNTERS];
};
#define VMAMERGE_QUERY_SIZE_VER0	(40 + 8 * VMAMERGE_MAX_COUNTERS)

/*
 * VMAMERGE_IOC_VMAS: what /proc/PID/maps does not show - the page offset
 * of anonymous VMAs and whether neighbours share an anon_vma.  Fills up
 * to nr entries of the array at vmas_ptr with the VMAs that end above
 * addr, in address order; nr returns the number filled.  Call again with
 * addr = the last end to continue.  Needs PTRACE_MODE_READ rights.
 */
#define VMAMERGE_VMA_ANON		(1U << 0) /* has an anon_vma */
#define VMAMERGE_VMA_SAME_AV_PREV	(1U << 1) /* same anon_vma as prev */
#define VMAMERGE_VMA_SAME_ROOT_PREV	(1U << 2) /* same anon_vma root */
#define VMAMERGE_VMA_FILE		(1U << 3) /* file-backed */
#define VMAMERGE_VMA_ADJACENT_PREV	(1U << 4) /* starts where prev ends */

struct vmamerge_vma {
	__u64 start;
	__u64 end;
	__u64 pgoff;		/* vm_pgoff, in pages */
	__u64 vm_flags;		/* the kernel's vm_flags, for diagnostics */
	__u32 flags;		/* VMAMERGE_VMA_* */
	__u32 reserved;
};

/* Upper bound of nr per call. */
#define VMAMERGE_VMAS_MAX	65536

struct vmamerge_vmas {
	__u32 size;		/* sizeof(struct vmamerge_vmas) */
	__u32 target_kind;	/* enum vmamerge_target_kind */
	__s32 target_id;
	__u32 nr;		/* in: capacity of vmas_ptr; out: filled */
	__u64 addr;		/* first VMA reported ends above this */
	__u64 vmas_ptr;		/* struct vmamerge_vma[nr] */
	__u32 vma_size;		/* sizeof(struct vmamerge_vma) */
	__u32 reserved0;	/* must be zero */
	__u64 reserved[2];	/* must be zero */
};
#define VMAMERGE_VMAS_SIZE_VER0		56

/*
 * VMAMERGE_IOC_VERIFY: check the rmap invariants of a process's memory
 * (root only: CAP_SYS_ADMIN, plus PTRACE_MODE_READ over the target).
 * Walks every VMA with an anon_vma and every page it maps - present,
 * PMD-mapped or in the swap cache - and checks:
 *   ANON_ROOT    folio_anon_vma(folio)->root == vma->anon_vma->root, and
 *                the folio's anon_vma is one the VMA's chain names (rmap
 *                reaches the VMA from it)
 *   INDEX        the page's index == linear_page_index(vma, addr)
 *   TREE         each anon_vma_chain entry of the VMA is found in its
 *                anon_vma's interval tree at the VMA's current pgoff range,
 *                and that tree is ordered with consistent subtree bounds
 *   CHAIN        the chain names vma->anon_vma, every entry points back at
 *                the VMA, all its anon_vmas share vma->anon_vma's root,
 *                none twice, and each one's parent is in the chain too
 *   COUNTS       anon_vma refcount > 0; num_active_vmas of each anon_vma is
 *                at least the number of this mm's VMAs that use it and at
 *                most the number of VMAs (any process) in its tree that
 *                use it; num_children is exactly the number of its child
 *                anon_vmas in use (named by a chain of a VMA in its tree),
 *                plus one for a root (its self-parent link)
 * A successful ioctl returns 0 also when a violation was found: nr_violations
 * counts them and the first one is described in the out fields.  KSM pages
 * are counted but not checked (their mapping names a KSM stable node, their
 * index is KSM's).  Pages that cannot be pinned down at the moment - under
 * migration, or a swap-cache folio someone else holds locked - are skipped
 * and not counted.  Errors: EPERM without CAP_SYS_ADMIN or ptrace read
 * rights, EINVAL for flags/reserved != 0 or a target without an address
 * space (kernel thread), ESRCH for a missing or exited process, EINTR on a
 * fatal signal.
 */
enum vmamerge_violation {
	VMAMERGE_VIOL_NONE	= 0,
	VMAMERGE_VIOL_ANON_ROOT	= 1,	/* folio in another anon_vma tree */
	VMAMERGE_VIOL_INDEX	= 2,	/* page index != linear index */
	VMAMERGE_VIOL_TREE	= 3,	/* interval tree lost/misplaced it */
	VMAMERGE_VIOL_CHAIN	= 4,	/* anon_vma_chain inconsistent */
	VMAMERGE_VIOL_COUNTS	= 5,	/* refcount/num_active_vmas */
	VMAMERGE_VIOL_NOT_ANON	= 6,	/* non-anon folio in a private anon VMA */
};

struct vmamerge_verify {
	__u32 size;		/* sizeof(struct vmamerge_verify) */
	__u32 target_kind;	/* enum vmamerge_target_kind */
	__s32 target_id;
	__u32 flags;		/* none defined: must be zero */
	__u64 reserved[2];	/* must be zero */
	/* out */
	__u64 nr_vmas;		/* VMAs with an anon_vma checked */
	__u64 nr_pages;		/* pages checked (a PMD-mapped THP counts 512) */
	__u64 nr_swapcache;	/* of those, found through swap entries */
	__u64 nr_violations;	/* 0: all invariants hold */
	/* the first violation (all zero when nr_violations == 0) */
	__u32 kind;		/* enum vmamerge_violation */
	__u32 reserved1;
	__u64 addr;		/* page address, or the VMA start */
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_pgoff;
	__u64 expected;		/* e.g. the linear index */
	__u64 found;		/* e.g. the page's index */
	char msg[128];		/* NUL-terminated description */
};
#define VMAMERGE_VERIFY_SIZE_VER0	(32 + 4 * 8 + 8 + 6 * 8 + 128)

/*
 * VMAMERGE_IOC_COMPACT: walk a process's address space once and merge
 * every pair of adjacent private anonymous VMAs that differ only in page
 * offset and/or anon_vma, through the same decision as every other merge
 * (the cheaper side is rewritten; what cannot be proven safe is refused
 * and counted).  mmap_lock is taken for writing in slices of at most
 * about VMAMERGE_COMPACT_SLICE_NS between VMAs (one rewrite is bounded by
 * the module parameter rewrite_max_pages), so the target's threads keep
 * running meanwhile.  Splits by different protections, flags, names,
 * policies or userfaultfd contexts are not ours to merge and stay.
 * Needs ptrace attach rights over the target (as ADVISE); the target
 * must be active under the mode: opted in under mode optin, any process in
 * mode always.  Errors: EOPNOTSUPP for a target the mode leaves out (mode
 * never, or mode optin and the target not opted in), ESHUTDOWN when the
 * livepatch is disabled (or being disabled: the walk stops at its next
 * slice, what was merged stays merged), EPERM, ESRCH, EINVAL (flags
 * or reserved != 0, kernel thread), EINTR (fatal signal: what was merged
 * stays merged, the out fields are not written).
 */
#define VMAMERGE_COMPACT_SLICE_NS	2000000ULL

struct vmamerge_compact {
	__u32 size;		/* sizeof(struct vmamerge_compact) */
	__u32 target_kind;	/* enum vmamerge_target_kind */
	__s32 target_id;
	__u32 flags;		/* none defined: must be zero */
	__u64 reserved[2];	/* must be zero */
	/* out */
	__u64 vmas_before;	/* the target's VMA count before the walk */
	__u64 vmas_after;	/* and after it */
	__u64 vmas_offered;	/* VMAs offered to the merge decision */
	__u64 merges;		/* merges made (one may take in both neighbours) */
	__u64 lock_slices;	/* times mmap_lock was taken */
	__u64 max_hold_ns;	/* the longest of those holds */
	__u32 nr_counters;	/* valid entries in counters[] */
	__u32 reserved1;
	/*
	 * How the target's counters moved during the walk (its own threads'
	 * merges meanwhile included): pages_renumbered, refused_*, ...
	 */
	__u64 counters[VMAMERGE_MAX_COUNTERS];
};
#define VMAMERGE_COMPACT_SIZE_VER0	(32 + 6 * 8 + 8 + 8 * VMAMERGE_MAX_COUNTERS)

#define VMAMERGE_IOC_MAGIC	0xBB /* unassigned in ioctl-number.rst of 6.1 and 6.12 */
#define VMAMERGE_IOC_ADVISE	_IOW(VMAMERGE_IOC_MAGIC, 1, struct vmamerge_advise)
#define VMAMERGE_IOC_QUERY	_IOWR(VMAMERGE_IOC_MAGIC, 2, struct vmamerge_query)
#define VMAMERGE_IOC_GET_CONFIG	_IOWR(VMAMERGE_IOC_MAGIC, 3, struct vmamerge_config)
#define VMAMERGE_IOC_SET_CONFIG	_IOW(VMAMERGE_IOC_MAGIC, 4, struct vmamerge_config)
#define VMAMERGE_IOC_VMAS	_IOWR(VMAMERGE_IOC_MAGIC, 5, struct vmamerge_vmas)
#define VMAMERGE_IOC_VERIFY	_IOWR(VMAMERGE_IOC_MAGIC, 6, struct vmamerge_verify)
#define VMAMERGE_IOC_COMPACT	_IOWR(VMAMERGE_IOC_MAGIC, 7, struct vmamerge_compact)

#endif /* _UAPI_LINUX_VMAMERGE_H */
