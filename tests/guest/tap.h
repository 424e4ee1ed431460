/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the vmamerge guest tests: TAP output and thin ioctl
 * wrappers.  Every program prints unnumbered TAP lines ("ok - desc",
 * "not ok - desc", "# diagnostic"); run.sh numbers them across the run.
 */
#ifndef VMAMERGE_TESTS_TAP_H
#define VMAMERGE_TESTS_TAP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include "vmamerge.h"

#define DBG_DIR		"/sys/kernel/debug/vmamerge"
#define DBG_MODE	DBG_DIR "/mode"
#define DBG_FEATURES	DBG_DIR "/features"
#define DBG_STATS	DBG_DIR "/stats"

#define ALL_STATE (VMAMERGE_STATE_OPTED_IN | VMAMERGE_STATE_EXEC_KEEP | \
		   VMAMERGE_STATE_ACTIVE)

extern int tap_fails;

void tap_init(const char *prog, unsigned int timeout_s);
/* Prints "ok - ..." or "not ok - ..."; returns cond. */
int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void skip(const char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tap_exit(void);

/* ret is 0 or -errno (the wrappers below return that). */
int expect_errno(int ret, int expected, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Accepts either of two errnos. */
int expect_errno2(int ret, int e1, int e2, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const char *errname(int err);	/* "EINVAL" etc.; takes a positive errno */

/* ---- /dev/vmamerge ---- */
int vm_open(int flags);		/* fd or -errno */
int vm_ioctl(int fd, unsigned long cmd, void *arg);	/* 0 or -errno */
int vm_advise(int fd, uint32_t kind, int32_t id, uint32_t advice, uint64_t flags);
int vm_query(int fd, uint32_t kind, int32_t id, uint32_t global,
	     struct vmamerge_query *q);
/* State bits of a process (kind/id) or -errno. */
int vm_state(int fd, uint32_t kind, int32_t id);
int vm_self_state(void);	/* opens the device itself; -errno on failure */
int vm_get_config(int fd, struct vmamerge_config *c);
int vm_set_config(int fd, uint32_t set_mask, uint32_t mode, uint32_t features);

/* VMAMERGE_IOC_VERIFY of a process into *v (zeroed first); 0 or -errno. */
int vm_verify(int fd, uint32_t kind, int32_t id, struct vmamerge_verify *v);
/*
 * Verify the rmap invariants of the calling process.  Returns 1 when they
 * hold, and also, silently, when they cannot be checked here: no
 * /dev/vmamerge, or a module without VMAMERGE_IOC_VERIFY (ENOTTY); as
 * non-root (EPERM) it says so once in a "#" line.  Returns 0 after
 * printing "not ok - <ctx>: rmap invariants ..." and "#" lines with the
 * first violation - or with the errno of any other failure.
 */
int vm_verify_self_ok(const char *ctx);
/* "anon_root", "index", ... of enum vmamerge_violation */
const char *vm_violation_name(uint32_t kind);

int sys_pidfd_open(pid_t pid, unsigned int flags);	/* fd or -errno */

/* ---- files ---- */
/* Reads a whole small file into buf (NUL-terminated, trailing newlines
 * stripped).  Returns length or -errno. */
int read_file(const char *path, char *buf, size_t len);
/* open(O_WRONLY) + one write() of exactly len bytes; 0 or -errno. */
int write_file(const char *path, const void *data, size_t len);

/* ---- processes ---- */
/*
 * Forks a child that drops to uid/gid 65534 (dumpable stays set so that
 * its own children may be ptraced by it), runs fn(arg) and exits with its
 * return value.  The child prints its own TAP lines.  Returns the number
 * of failures (0 = all passed), counting a crash as one.
 */
int run_unprivileged(int (*fn)(void *), void *arg);
/* Forks a child that blocks until the returned pipe fd is closed (or
 * written to), then exits.  *wfd receives the write end. */
pid_t spawn_sleeper(int *wfd);
/* Closes wfd and reaps the sleeper; returns its wait status. */
int reap_sleeper(pid_t pid, int wfd);

/* ---- the tests run in feature modes (t_renumber, t_inplace, t_edges, t_family, t_large) ---- */
/*
 * Parses "[-o] [-r | -s]" into *@stock (-s) and *@renumber_only (-r),
 * and "-q" into *@quick where @quick is not NULL (t_renumber's smoke set),
 * starts TAP, opens /dev/vmamerge read-write into *@vfd (-1 without the
 * module) and with -o opts the process in (a TAP line).  Returns 0, or 2
 * after a usage message.
 */
int mode_init(int argc, char **argv, const char *prog, unsigned int timeout_s,
	      int *stock, int *renumber_only, int *quick, int *vfd);
/* Writes 4096 bytes at @p that depend on @tag and the offset. */
void page_fill(char *p, unsigned int tag);
/*
 * 0 when the 4096 bytes at @p are page_fill()'s for @tag (0: all zero),
 * else -1 with the first bad offset in *@off (may be NULL).
 */
int page_check(const char *p, unsigned int tag, unsigned long *off);
/*
 * Maps @n private anonymous pages at @p (MAP_FIXED_NOREPLACE) and fills
 * page i with page_fill()'s pattern for @tag0 + i.  0, or -1 if not mapped
 * there.
 */
int page_map_fill(char *p, unsigned long n, unsigned int tag0);
/*
 * Maps @n private anonymous pages at @p (MAP_FIXED_NOREPLACE) with
 * MADV_HUGEPAGE, before any fault.  0, or -1 if not mapped there.
 */
int page_map_huge(char *p, unsigned long n);
/* A free 2 MiB-aligned range of @len bytes (reserved, unmapped) or NULL */
char *aligned_window(unsigned long len);
/* VMAs that overlap [@lo, @hi) in /proc/self/maps, or -1 */
int vmas_in(const void *lo, const void *hi);
/* /proc/self/pagemap's 64-bit entry for the page at @p (0 if unreadable) */
unsigned long long pagemap_entry(const void *p);
/* bits of a pagemap entry (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_EXCLUSIVE	(1ULL << 56)
#define PM_SOFT_DIRTY	(1ULL << 55)
#define PM_PFN(e)	((e) & ((1ULL << 55) - 1))
#define PM_SWAP_TYPE(e)	((e) & 0x1f)
/* bits of /proc/kpageflags */
#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16
#define KPF_KSM			21
/*
 * /proc/kpageflags' flags of the frame that pagemap entry @e maps: 0, or
 * -1 if @e names no frame (not present, or the PFN hidden: not root) or
 * the file is unreadable.  Keeps the file open: one open per process.
 */
int kpageflags_of(unsigned long long e, unsigned long long *flags);
/*
 * The value on the line "@name VALUE" of a counter file (debugfs stats,
 * /proc/vmstat); -1: the file unreadable, -2: no such name.
 */
long file_counter(const char *path, const char *name);
/* A counter from debugfs stats (file_counter()) */
long stats_counter(const char *name);
/* A counter from /proc/vmstat (file_counter()) */
long vmstat_counter(const char *name);
/* stats_counter() of each of @n @names into @v */
void stats_snap(const char *const *names, int n, long *v);

/*
 * VMAMERGE_IOC_VMAS on @vfd for the calling process: up to @nr VMAs from
 * the one containing or following @addr into @v.  Returns how many, or
 * -errno (@vfd < 0: -EBADF).
 */
int vm_self_vmas(int vfd, unsigned long addr, struct vmamerge_vma *v,
		 unsigned int nr);
/*
 * The page offset of the VMA that starts at @addr, by VMAMERGE_IOC_VMAS on
 * @vfd; -1 when it cannot be read (@vfd < 0: no module).
 */
long vm_vma_pgoff(int vfd, unsigned long addr);
/*
 * The VMAs overlapping the @npages pages at @base, from /proc/self/maps,
 * as "s-e[~][z] ..." in pages from @base: "~" a page offset that is not
 * linear (address / page size; an anonymous VMA's from @vfd, unmarked
 * without the module), "z" a /dev/zero mapping.  Returns the number of
 * VMAs, -1 on error.
 */
int window_layout(int vfd, const char *base, unsigned long npages,
		  char *buf, size_t len);
/*
 * The anon_vma pattern of the same VMAs from VMAMERGE_IOC_VMAS: one letter
 * per VMA, a new letter where the anon_vma differs from the adjacent
 * predecessor's, '-' for none.  0, or -errno (no module: -EBADF).
 */
int window_avs(int vfd, const char *base, unsigned long npages,
	       char *buf, size_t len);
/*
 * One TAP line: window_layout() is exactly @want - without the module
 * (@vfd < 0) with the "~" marks of anonymous VMAs dropped from @want.
 * Returns whether it was.
 */
int expect_window_layout(const char *ctx, int vfd, const char *base,
			 unsigned long npages, const char *want);
/*
 * One TAP line: window_avs() is exactly @want.  Without the module
 * nothing is checked (returns 1).
 */
int expect_window_avs(const char *ctx, int vfd, const char *base,
		      unsigned long npages, const char *want);
/*
 * One TAP line: of the @n counters @names, snapshot in @before by
 * stats_snap(), exactly those named in @want ("name+N ...", "" for none)
 * moved, each by its N.  Returns whether they did.
 */
int expect_counter_deltas(const char *ctx, const char *const *names, int n,
			  const long *before, const char *want);

/*
 * A memory cgroup of our own, /sys/fs/cgroup/@name (cgroup2 mounted if
 * needed): memory.reclaim swaps out pages that two PTEs map, which
 * MADV_PAGEOUT skips.  memcg_enter() moves the caller in and returns NULL,
 * or a reason to skip; memcg_leave() moves it back and removes the group;
 * memcg_reclaim() writes @amount to its memory.reclaim (0 or -errno).
 */
const char *memcg_enter(const char *name);
void memcg_leave(const char *name);
int memcg_reclaim(const char *name, const char *amount);

const char *state_str(int state);	/* static buffer */
long now_ms(void);			/* CLOCK_MONOTONIC */

#endif
