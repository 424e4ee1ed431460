// SPDX-License-Identifier: GPL-2.0
/*
 * Transplant on every in-place merge path: wherever the kernel
 * tries to merge anonymous VMAs in place and refuses only for their
 * anon_vmas, an opted-in process with the transplant feature gets the
 * merge:
 *  - a faulted VMA whose anon_vma differs from its neighbour's is
 *    transplanted into the neighbour's anon_vma when its pages are not
 *    shared (three VMAs with three anon_vmas end as one);
 *  - an anonymous VMA that was never faulted adopts its neighbour's
 *    anon_vma where the stock check refuses it (is_mergeable_anon_vma()
 *    wants a chain of one entry on the neighbour, whose chain is empty;
 *    upstream fixed this only in 6.14).
 * Paths: mprotect, pkey_mprotect, madvise, prctl(PR_SET_VMA_ANON_NAME),
 * mlock/munlock/mlockall/munlockall, mbind, set_mempolicy_home_node,
 * userfaultfd (un)register, mremap expanding in place, mmap of a gap
 * (6.1: through a hook in do_mmap()), brk.  Every case: the exact
 * VMA layout of the window, every page read back byte-exact, the rmap
 * verifier after every step, the counters that must move.
 *
 * usage: t_inplace [-o] [-r | -s]
 *   -o  opt this process in first
 *   -r  renumber on, transplant off: the stock layouts
 *   -s  the stock layouts (features off, not opted in, or no module)
 *   without -r or -s: transplant on (opted in)
 *
 * How two ADJACENT faulted VMAs get DIFFERENT anon_vmas without mremap():
 * anon_vma_prepare() reuses a neighbour's anon_vma only if both are
 * compatible but for the access flags (same other vm_flags, mempolicy,
 * continuous pgoff).  So the "mover" (the range the call under test
 * changes) differs from its neighbour by something else while both are
 * faulted - VM_DONTDUMP, VM_LOCKED, a mempolicy, a uffd registration -
 * and the call under test then removes that difference.  mprotect() needs
 * one more step: the mover gets another protection, the difference goes
 * through madvise() (no merge: the protections differ), and mprotect()
 * makes the protections equal.  Anonymous private mappings have
 * vm_pgoff == addr >> PAGE_SHIFT, so neighbours have continuous pgoffs.
 *
 * Layouts are written relative to a 2 MiB-aligned scratch window, in
 * pages: "0-1 1-3" is a one-page VMA followed by a two-page one.  All
 * VMAs here have linear pgoffs; a "~" would mark one that has not.
 */
#include "tap.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define PG		4096UL
#define HPG		(2UL << 20)
#define WIN_PAGES	2048UL		/* 8 MiB window */

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT	1
#endif
#define MPOL_DEFAULT	0
#define MPOL_BIND	2
#define NR_home_node	450	/* set_mempolicy_home_node, x86-64 */

/* page tags: each VMA its own pattern */
#define NB_TAG		1	/* the neighbour */
#define MV_TAG		10	/* the mover */
#define R_TAG		20	/* a third VMA */
#define NEW_TAG		30	/* written after the merge */
#define THP_NB_TAG	1000
#define THP_MV_TAG	3000

static int stock;		/* -s */
static int renumber_only;	/* -r */
static int is61;		/* running 6.1 */
static int nostats;		/* no debugfs stats: counters not checked */
static int vfd = -1;		/* /dev/vmamerge or -1 */
static char *W;			/* the window */

/* transplant (and adoption) expected: opted in, the feature on */
static int tp_on(void)
{
	return !stock && !renumber_only;
}

static char *pg(unsigned long i)
{
	return W + i * PG;
}

/* ---- data ---- */

/* The content of a page written with @tag: every byte depends on both. */
static unsigned char pat(unsigned int tag, unsigned long off)
{
	return (unsigned char)(tag * 131 + off * 7 + (off >> 8));
}

static void fill(char *p, unsigned int tag)
{
	unsigned long o;

	for (o = 0; o < PG; o++)
		p[o] = pat(tag, o);
}

/* 0 when page @p holds @tag's pattern (tag 0: all zero) */
static int check(const char *p, unsigned int tag)
{
	unsigned long o;

	for (o = 0; o < PG; o++)
		if ((unsigned char)p[o] != (tag ? pat(tag, o) : 0))
			return -1;
	return 0;
}

/* pages [first, first + n) get tags tag0, tag0 + 1, ... */
static void fill_pages(unsigned long first, unsigned long n, unsigned int tag0)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		fill(pg(first + i), tag0 + i);
}

/* index of the first page of [first, first + n) that differs, or -1 */
static long bad_page(unsigned long first, unsigned long n, unsigned int tag0)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		if (check(pg(first + i), tag0 ? tag0 + i : 0))
			return (long)(first + i);
	return -1;
}

/* pages [first, first + n) hold tag0, tag0 + 1, ... (tag0 0: zeros) */
static void expect_pages(const char *ctx, const char *what, unsigned long first,
			 unsigned long n, unsigned int tag0)
{
	long b = bad_page(first, n, tag0);

	if (!ok(b < 0, "%s: %s byte-exact", ctx, what))
		diag("page %ld differs (tag0 %u)", b, tag0);
}

static int map_pages(unsigned long first, unsigned long n)
{
	void *p = mmap(pg(first), n * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		       -1, 0);

	return p == pg(first) ? 0 : -1;
}

static void clear_window(void)
{
	munmap(W, WIN_PAGES * PG);
}

static void verified(const char *ctx)
{
	vm_verify_self_ok(ctx);
}

/* ---- layouts ---- */

/* paths, for the merges-gained line */
enum {
	P_MPROTECT, P_PKEY, P_MADVISE, P_PRCTL, P_MLOCK, P_MBIND, P_HOME,
	P_UFFD, P_MREMAP, P_MMAP, P_BRK, NR_PATHS
};

static const char *const path_names[NR_PATHS] = {
	"mprotect", "pkey_mprotect", "madvise", "prctl", "mlock", "mbind",
	"home_node", "userfaultfd", "mremap", "mmap", "brk",
};

static int gained[NR_PATHS], cases[NR_PATHS];

/* The window's VMAs (window_layout(): "s-e[~] ..."); their number or -1 */
static int window_vmas(char *buf, size_t len)
{
	return window_layout(vfd, W, WIN_PAGES, buf, len);
}

static int nr_ranges(const char *l)
{
	int n = 0;

	while ((l = strchr(l, '-')))
		l++, n++;
	return n;
}

/* the layout in every mode (before the call under test) */
static void expect_shape(const char *ctx, const char *want)
{
	char got[512];

	window_vmas(got, sizeof(got));
	if (!ok(!strcmp(got, want), "%s: layout %s", ctx, want))
		diag("layout is %s", got);
}

/*
 * After the call under test: @merged with transplant on, @stockl
 * otherwise.  Counts the case for @path's merges-gained line.
 */
static void expect_layout(const char *ctx, int path, const char *merged,
			  const char *stockl)
{
	const char *want = tp_on() ? merged : stockl;
	char got[512];
	int n = window_vmas(got, sizeof(got));

	cases[path]++;
	if (n >= 0 && n < nr_ranges(stockl))
		gained[path]++;
	if (!ok(!strcmp(got, want), "%s: layout %s", ctx, want))
		diag("layout is %s", got);
}

/* the anon_vma pattern of the window (window_avs()), module only */
static void expect_avs(const char *ctx, const char *want)
{
	expect_window_avs(ctx, vfd, W, WIN_PAGES, want);
}

/* smaps field @name (e.g. "Swap:") of the VMA at @p, in kB, or -1 */
static long smaps_kb(const char *p, const char *name)
{
	char line[256];
	unsigned long s, e;
	size_t l = strlen(name);
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {
			in = s <= (unsigned long)p && (unsigned long)p < e;
			continue;
		}
		if (in && !strncmp(line, name, l)) {
			kb = atol(line + l);
			break;
		}
	}
	fclose(f);
	return kb;
}

/* pages of [p, p + n pages) in memory: mapped or in the swap cache */
static long resident(char *p, unsigned long n)
{
	unsigned char vec[16];
	unsigned long i;
	long r = 0;

	if (n > sizeof(vec) || mincore(p, n * PG, vec))
		return -1;
	for (i = 0; i < n; i++)
		r += vec[i] & 1;
	return r;
}

/* ---- counters (global, from debugfs; this test runs alone) ---- */

enum {
	C_MERGE_TP, C_VMAS_TP, C_PAGES_TP, C_MERGE_AD, C_VMAS_AD,
	C_R_SHARED, C_R_KSM, C_R_THP, C_R_MIGR, C_R_BUSY, C_UNMERGED, NR_C
};

static const char *const cnames[NR_C] = {
	"merge_transplant", "vmas_transplanted", "pages_transplanted",
	"merge_adopt", "vmas_adopted", "refused_shared", "refused_ksm",
	"refused_thp", "refused_migration", "refused_busy",
	"rehomed_unmerged",	/* an anon_vma changed, no merge: never */
};

#define C_NOSTATS	(-1L)	/* stats unreadable */
#define C_MISSING	(-2L)	/* no such counter */

struct snap {
	long v[NR_C];
};

static void snap_take(struct snap *s)
{
	stats_snap(cnames, NR_C, s->v);
}

#define C_BAD		LONG_MIN

/* how much @c changed since @s; C_BAD (and a failed line) if unreadable */
static long delta(const char *ctx, const struct snap *s, int c)
{
	long now = stats_counter(cnames[c]);

	if (s->v[c] < 0 || now < 0) {
		ok(0, "%s: counter %s readable (%s)", ctx, cnames[c],
		   s->v[c] == C_MISSING || now == C_MISSING ?
		   "missing from " DBG_STATS : "stats unreadable");
		return C_BAD;
	}
	return now - s->v[c];
}

/* @c moved by @want with transplant on, by 0 otherwise */
static void expect_c(const char *ctx, const struct snap *s, int c, long want)
{
	long d;

	if (nostats)
		return;
	if (!tp_on())
		want = 0;
	d = delta(ctx, s, c);
	if (d == C_BAD)
		return;
	if (!ok(d == want, "%s: %s +%ld", ctx, cnames[c], want))
		diag("%s changed by %ld", cnames[c], d);
}

/*
 * The counters of a merge with @vmas VMAs and @pages pages transplanted
 * (none: no merge) and @shared refusals for sharing.
 */
static void expect_transplanted(const char *ctx, const struct snap *s,
				long vmas, long pages, long shared)
{
	expect_c(ctx, s, C_MERGE_TP, vmas ? 1 : 0);
	expect_c(ctx, s, C_VMAS_TP, vmas);
	expect_c(ctx, s, C_PAGES_TP, pages);
	expect_c(ctx, s, C_MERGE_AD, 0);
	expect_c(ctx, s, C_VMAS_AD, 0);
	expect_c(ctx, s, C_R_SHARED, shared);
	expect_c(ctx, s, C_UNMERGED, 0);
}

/* ---- children that keep COW-shared pages until released ---- */

struct holder {
	pid_t pid;
	int wfd;
};

/* what a child must read: ranges of pages, tag0 0 for zeros */
struct kid_range {
	unsigned long first, n;
	unsigned int tag0;
};

static struct kid_range kid[4];
static int nkid;

static void kid_expect(unsigned long first, unsigned long n, unsigned int tag0)
{
	kid[nkid].first = first;
	kid[nkid].n = n;
	kid[nkid].tag0 = tag0;
	nkid++;
}

static int kid_check(void)
{
	int i;

	for (i = 0; i < nkid; i++)
		if (bad_page(kid[i].first, kid[i].n, kid[i].tag0) >= 0)
			return 1;
	return vm_verify_self_ok("child") != 1 ? 2 : 0;
}

/*
 * Fork a child that waits until release_child(), then checks the pages
 * named by kid_expect() and exits 0 if they are right.
 */
static int hold_child(struct holder *h)
{
	int go[2];
	char c;

	h->pid = -1;
	if (pipe(go))
		return -1;
	h->pid = fork();
	if (h->pid < 0)
		return -1;
	if (h->pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(3);
		_exit(kid_check());
	}
	close(go[0]);
	h->wfd = go[1];
	return 0;
}

/* Release the child, wait for it, report its verdict. */
static void release_child(struct holder *h, const char *ctx)
{
	int st = 0;

	if (h->pid <= 0)
		return;
	if (write(h->wfd, "x", 1) != 1)
		diag("%s: cannot wake the child", ctx);
	close(h->wfd);
	waitpid(h->pid, &st, 0);
	h->pid = -1;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "%s: the child read its pages (status %#x)", ctx, st);
}

/* ---- KSM ---- */

#define KSM_DIR "/sys/kernel/mm/ksm/"

/* make ksmd run, fast (root); @run keeps its old state for ksm_restore() */
static void ksm_on(char *run, size_t len)
{
	if (read_file(KSM_DIR "run", run, len) > 0 && run[0] == '0')
		write_file(KSM_DIR "run", "1", 1);
	write_file(KSM_DIR "sleep_millisecs", "10", 2);
	write_file(KSM_DIR "pages_to_scan", "1000", 4);
}

static void ksm_restore(const char *run)
{
	if (run[0] == '0')
		write_file(KSM_DIR "run", "0", 1);
}

static int ksm_merging(void)
{
	char buf[64];

	if (read_file("/proc/self/ksm_merging_pages", buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

/* ---- the paths: what makes the mover differ, the call that undoes it ---- */

/*
 * The mover is the range the call under test changes, its neighbour the
 * VMA it should merge with; @all covers both (and a third VMA, if any).
 */
struct region {
	char *mv, *nb, *all;
	size_t mlen, nlen, alen;
};

/*
 * A path under test.  prep() runs before anything is faulted and makes
 * the mover differ from its neighbour by something other than the access
 * flags; after() runs once the pages are written; op() is the call under
 * test, which removes the last difference.  Each returns 0, 1 when the
 * kernel lacks the feature (the case is skipped), -1 on error (errno).
 */
struct ipath {
	const char *name;
	int path;			/* P_* */
	int (*prep)(const struct region *r);
	int (*after)(const struct region *r);
	int (*op)(const struct region *r);
	void (*cleanup)(void);
	unsigned int flags;
};

#define PF_POP_MV	(1U << 0)	/* prep() faults the mover in */
#define PF_POP_NB	(1U << 1)	/* prep() faults the neighbour in */
#define PF_NB_PREP	(1U << 2)	/* prep() changes the neighbour */
#define PF_MV_NOFORK	(1U << 3)	/* a fork child has no copy of the mover */
#define PF_MV_WIPED	(1U << 4)	/* a fork child reads zeros there */
#define PF_NB_NOFORK	(1U << 5)	/* a fork child has no neighbour */

static int adv(char *p, size_t len, int advice)
{
	return madvise(p, len, advice) ? -1 : 0;
}

static int dontdump_mv(const struct region *r)
{
	return adv(r->mv, r->mlen, MADV_DONTDUMP);
}

static int dodump_mv(const struct region *r)
{
	return adv(r->mv, r->mlen, MADV_DODUMP);
}

static int dontdump_nb(const struct region *r)
{
	return adv(r->nb, r->nlen, MADV_DONTDUMP);
}

static int hugepage_prep(const struct region *r)
{
	if (adv(r->all, r->alen, MADV_HUGEPAGE))
		return errno == EINVAL ? 1 : -1;
	return adv(r->mv, r->mlen, MADV_NOHUGEPAGE);
}

static int hugepage_mv(const struct region *r)
{
	return adv(r->mv, r->mlen, MADV_HUGEPAGE);
}

static int nohugepage_nb(const struct region *r)
{
	if (adv(r->nb, r->nlen, MADV_NOHUGEPAGE))
		return errno == EINVAL ? 1 : -1;
	return 0;
}

static int nohugepage_mv(const struct region *r)
{
	return adv(r->mv, r->mlen, MADV_NOHUGEPAGE);
}

static int dontfork_mv(const struct region *r)
{
	return adv(r->mv, r->mlen, MADV_DONTFORK);
}

static int dofork_mv(const struct region *r)
{
	return adv(r->mv, r->mlen, MADV_DOFORK);
}

static int dontfork_nb(const struct region *r)
{
	return adv(r->nb, r->nlen, MADV_DONTFORK);
}

static int wipeonfork_mv(const struct region *r)
{
	if (adv(r->mv, r->mlen, MADV_WIPEONFORK))
		return errno == EINVAL ? 1 : -1;
	return 0;
}

static int keeponfork_mv(const struct region *r)
{
	return adv(r->mv, r->mlen, MADV_KEEPONFORK);
}

/* mprotect: another protection for the mover, then drop the difference */
static int ro_dodump_mv(const struct region *r)
{
	if (mprotect(r->mv, r->mlen, PROT_READ))
		return -1;
	return dodump_mv(r);
}

static int rw_mv(const struct region *r)
{
	return mprotect(r->mv, r->mlen, PROT_READ | PROT_WRITE) ? -1 : 0;
}

/* pkey_mprotect: the same with every page under one protection key */
static int pkey = -2;		/* -2: not tried, -1: none */

static int pkey_prep(const struct region *r)
{
	if (pkey == -2) {
		pkey = syscall(SYS_pkey_alloc, 0, 0);
		if (pkey < 0) {
			diag("pkey_alloc: %s: pkey_mprotect cases skipped",
			     strerror(errno));
			pkey = -1;
		}
	}
	if (pkey < 0)
		return 1;
	if (syscall(SYS_pkey_mprotect, r->all, r->alen,
		    PROT_READ | PROT_WRITE, pkey))
		return -1;
	return dontdump_mv(r);
}

static int pkey_ro_dodump_mv(const struct region *r)
{
	if (syscall(SYS_pkey_mprotect, r->mv, r->mlen, PROT_READ, pkey))
		return -1;
	return dodump_mv(r);
}

static int pkey_rw_mv(const struct region *r)
{
	return syscall(SYS_pkey_mprotect, r->mv, r->mlen,
		       PROT_READ | PROT_WRITE, pkey) ? -1 : 0;
}

/* prctl(PR_SET_VMA_ANON_NAME) */
static int set_name(char *p, size_t len, const char *name)
{
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, len, name))
		return errno == EINVAL ? 1 : -1;
	return 0;
}

static int name_mv_prep(const struct region *r)
{
	return set_name(r->mv, r->mlen, "t_inplace") ?: dontdump_mv(r);
}

static int unname_mv(const struct region *r)
{
	return set_name(r->mv, r->mlen, NULL) ? -1 : 0;
}

static int name_nb_prep(const struct region *r)
{
	return set_name(r->nb, r->nlen, "t_inplace") ?: dontdump_mv(r);
}

static int name_mv(const struct region *r)
{
	return set_name(r->mv, r->mlen, "t_inplace") ? -1 : 0;
}

/* mlock and friends (mlock() faults the pages in) */
static int mlock_mv(const struct region *r)
{
	return mlock(r->mv, r->mlen) ? -1 : 0;
}

static int munlock_mv(const struct region *r)
{
	return munlock(r->mv, r->mlen) ? -1 : 0;
}

static int mlock_nb(const struct region *r)
{
	return mlock(r->nb, r->nlen) ? -1 : 0;
}

static int mlockall_op(const struct region *r)
{
	(void)r;
	return mlockall(MCL_CURRENT) ? -1 : 0;
}

static int munlockall_op(const struct region *r)
{
	(void)r;
	return munlockall() ? -1 : 0;
}

static void munlockall_cleanup(void)
{
	munlockall();
}

/* mbind(): MPOL_BIND to node 0 or MPOL_DEFAULT */
static int bind0(char *p, size_t len, int mode)
{
	unsigned long mask = 1;

	if (syscall(SYS_mbind, p, len, mode, mode == MPOL_DEFAULT ? NULL : &mask,
		    mode == MPOL_DEFAULT ? 0 : 64, 0))
		return errno == ENOSYS ? 1 : -1;
	return 0;
}

static int bind_mv_prep(const struct region *r)
{
	return bind0(r->mv, r->mlen, MPOL_BIND);
}

static int unbind_mv(const struct region *r)
{
	return bind0(r->mv, r->mlen, MPOL_DEFAULT) ? -1 : 0;
}

static int bind_nb_prep(const struct region *r)
{
	return bind0(r->nb, r->nlen, MPOL_BIND);
}

static int bind_mv(const struct region *r)
{
	return bind0(r->mv, r->mlen, MPOL_BIND) ? -1 : 0;
}

/* set_mempolicy_home_node(): both bound to node 0, home node 0 differs */
static int home0(char *p, size_t len)
{
	if (syscall(NR_home_node, p, len, 0, 0))
		return errno == ENOSYS ? 1 : -1;
	return 0;
}

static int home_prep(const struct region *r)
{
	return bind0(r->all, r->alen, MPOL_BIND) ?: home0(r->nb, r->nlen);
}

static int home_mv(const struct region *r)
{
	return home0(r->mv, r->mlen) ? -1 : 0;
}

/*
 * userfaultfd: write-protect mode, so that faults in a registered range
 * still fill pages without a handler (missing mode would wait for one).
 */
static int uffd = -1;

static int uffd_reg(char *p, size_t len)
{
	struct uffdio_register reg;
	struct uffdio_api api;

	if (uffd < 0) {
		uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
		if (uffd < 0)
			return 1;
		memset(&api, 0, sizeof(api));
		api.api = UFFD_API;
		if (ioctl(uffd, UFFDIO_API, &api)) {
			close(uffd);
			uffd = -1;
			return 1;
		}
	}
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)p;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		return errno == EINVAL ? 1 : -1;
	return 0;
}

static int uffd_reg_mv(const struct region *r)
{
	return uffd_reg(r->mv, r->mlen);
}

static int uffd_reg_nb(const struct region *r)
{
	return uffd_reg(r->nb, r->nlen);
}

static int uffd_reg_mv_op(const struct region *r)
{
	return uffd_reg(r->mv, r->mlen) ? -1 : 0;
}

static int uffd_unreg_mv(const struct region *r)
{
	struct uffdio_range range;

	range.start = (unsigned long)r->mv;
	range.len = r->mlen;
	return ioctl(uffd, UFFDIO_UNREGISTER, &range) ? -1 : 0;
}

/* after the window is gone: nothing is registered any more */
static void uffd_cleanup(void)
{
	if (uffd >= 0)
		close(uffd);
	uffd = -1;
}

static const struct ipath paths[] = {
	{ "mprotect", P_MPROTECT, dontdump_mv, ro_dodump_mv, rw_mv, NULL, 0 },
	{ "pkey_mprotect", P_PKEY, pkey_prep, pkey_ro_dodump_mv, pkey_rw_mv,
	  NULL, 0 },
	{ "madvise DODUMP", P_MADVISE, dontdump_mv, NULL, dodump_mv, NULL, 0 },
	{ "madvise DONTDUMP", P_MADVISE, dontdump_nb, NULL, dontdump_mv, NULL,
	  PF_NB_PREP },
	{ "madvise HUGEPAGE", P_MADVISE, hugepage_prep, NULL, hugepage_mv,
	  NULL, 0 },
	{ "madvise NOHUGEPAGE", P_MADVISE, nohugepage_nb, NULL, nohugepage_mv,
	  NULL, PF_NB_PREP },
	{ "madvise DOFORK", P_MADVISE, dontfork_mv, NULL, dofork_mv, NULL,
	  PF_MV_NOFORK },
	{ "madvise DONTFORK", P_MADVISE, dontfork_nb, NULL, dontfork_mv, NULL,
	  PF_NB_PREP | PF_NB_NOFORK },
	{ "madvise KEEPONFORK", P_MADVISE, wipeonfork_mv, NULL, keeponfork_mv,
	  NULL, PF_MV_WIPED },
	{ "prctl anon name cleared", P_PRCTL, name_mv_prep, dodump_mv,
	  unname_mv, NULL, 0 },
	{ "prctl anon name set", P_PRCTL, name_nb_prep, dodump_mv, name_mv,
	  NULL, PF_NB_PREP },
	{ "munlock", P_MLOCK, mlock_mv, NULL, munlock_mv, NULL, PF_POP_MV },
	{ "mlock", P_MLOCK, mlock_nb, NULL, mlock_mv, munlockall_cleanup,
	  PF_POP_NB | PF_NB_PREP },
	{ "mlockall", P_MLOCK, mlock_nb, NULL, mlockall_op, munlockall_cleanup,
	  PF_POP_NB | PF_NB_PREP },
	{ "munlockall", P_MLOCK, mlock_mv, NULL, munlockall_op, NULL,
	  PF_POP_MV },
	{ "mbind MPOL_DEFAULT", P_MBIND, bind_mv_prep, NULL, unbind_mv, NULL,
	  0 },
	{ "mbind MPOL_BIND", P_MBIND, bind_nb_prep, NULL, bind_mv, NULL,
	  PF_NB_PREP },
	{ "set_mempolicy_home_node", P_HOME, home_prep, NULL, home_mv, NULL,
	  PF_NB_PREP },
	{ "userfaultfd unregister", P_UFFD, uffd_reg_mv, NULL, uffd_unreg_mv,
	  uffd_cleanup, 0 },
	{ "userfaultfd register", P_UFFD, uffd_reg_nb, NULL, uffd_reg_mv_op,
	  uffd_cleanup, PF_NB_PREP },
};

/* the paths that get every variant */
static const struct ipath *const p_mprotect = &paths[0];
static const struct ipath *const p_madvise = &paths[2];

/* prep() or after(): 0 to go on; otherwise the case is reported and over */
static int setup_step(const char *ctx, const char *step, int r)
{
	if (r > 0)
		skip("not supported here", "%s (%s)", ctx, step);
	else if (r < 0)
		ok(0, "%s: %s: %s", ctx, step, strerror(errno));
	return r;
}

static void finish(const struct ipath *p)
{
	clear_window();
	if (p->cleanup)
		p->cleanup();
}

/* ---- two faulted VMAs, two anon_vmas ---- */

enum variant {
	V_PLAIN,	/* neighbour then mover */
	V_LEFT,		/* mover then neighbour */
	V_SHARED,	/* a child keeps both COW-shared */
	V_NB_FORKED,	/* only the neighbour was faulted before the fork */
	V_SWAP,		/* the mover paged out first */
	V_THP,		/* 2 MiB each, PMD-mapped THPs */
	V_KSM,		/* the mover's pages KSM-merged */
};

static const char *const vnames[] = {
	"", ", mover first", ", shared with a child", ", neighbour forked",
	", paged out", ", THP", ", KSM",
};

/* the child of a V_SHARED case: whatever the fork gave it */
static void kid_pair(const struct ipath *p, unsigned long nb0, unsigned long nn,
		     unsigned int nbtag, unsigned long mv0, unsigned long mn,
		     unsigned int mvtag)
{
	nkid = 0;
	if (!(p->flags & PF_NB_NOFORK))
		kid_expect(nb0, nn, nbtag);
	if (p->flags & PF_MV_WIPED)
		kid_expect(mv0, mn, 0);
	else if (!(p->flags & PF_MV_NOFORK))
		kid_expect(mv0, mn, mvtag);
}

/* KSM-merge the mover's pages with a copy at page 100 */
static int ksm_setup(const char *ctx, const struct region *r,
		     unsigned long mn)
{
	int i, n = -1;

	if (map_pages(100, mn)) {
		ok(0, "%s: mmap the copy", ctx);
		return -1;
	}
	fill_pages(100, mn, MV_TAG);
	if (madvise(r->nb, r->nlen, MADV_MERGEABLE) ||
	    madvise(r->mv, r->mlen, MADV_MERGEABLE) ||
	    madvise(pg(100), mn * PG, MADV_MERGEABLE)) {
		skip("no KSM", "%s", ctx);
		return 1;
	}
	for (i = 0; i < 200 && (n = ksm_merging()) < (int)(2 * mn); i++)
		usleep(50000);
	if (n < (int)(2 * mn)) {
		skip("KSM did not merge within 10 s", "%s (%d pages)", ctx, n);
		return 1;
	}
	return 0;
}

/*
 * The neighbour (NB_TAG) and the mover (MV_TAG), each faulted with its own
 * anon_vma; the call under test makes them mergeable.
 */
static void t_pair(const struct ipath *p, enum variant v)
{
	unsigned long nn = v == V_THP ? HPG / PG : 1;
	unsigned long mn = v == V_THP ? HPG / PG : 2;
	unsigned long nb0 = v == V_LEFT ? mn : 0, mv0 = v == V_LEFT ? 0 : nn;
	unsigned int nbtag = v == V_THP ? THP_NB_TAG : NB_TAG;
	unsigned int mvtag = v == V_THP ? THP_MV_TAG : MV_TAG;
	int refused = v == V_KSM ||
		      (v == V_SHARED && !(p->flags & (PF_MV_NOFORK | PF_MV_WIPED)));
	struct region r = {
		.mv = pg(mv0), .mlen = mn * PG, .nb = pg(nb0), .nlen = nn * PG,
		.all = pg(0), .alen = (nn + mn) * PG,
	};
	struct holder h = { .pid = -1 };
	char ctx[160], one[32], two[64], run[16] = "";
	long kb, mpages = mn;
	struct snap s;

	snprintf(ctx, sizeof(ctx), "%s%s", p->name, vnames[v]);
	snprintf(one, sizeof(one), "0-%lu", nn + mn);
	snprintf(two, sizeof(two), "0-%lu %lu-%lu%s", v == V_LEFT ? mn : nn,
		 v == V_LEFT ? mn : nn, nn + mn, v == V_KSM ? " 100-102" : "");
	snap_take(&s);
	if (map_pages(0, nn + mn)) {
		ok(0, "%s: mmap", ctx);
		return;
	}
	if (v == V_THP)
		madvise(r.all, r.alen, MADV_HUGEPAGE);
	if (setup_step(ctx, "prep", p->prep(&r)))
		goto out;
	fill_pages(nb0, nn, nbtag);
	if (v == V_NB_FORKED) {
		nkid = 0;
		kid_expect(nb0, nn, nbtag);
		kid_expect(mv0, mn, 0);
		if (hold_child(&h)) {
			ok(0, "%s: fork", ctx);
			goto out;
		}
	}
	fill_pages(mv0, mn, mvtag);
	if (v == V_THP && (smaps_kb(r.nb, "AnonHugePages:") < 2048 ||
			   smaps_kb(r.mv, "AnonHugePages:") < 2048)) {
		skip("no THP here", "%s", ctx);
		goto out;
	}
	if (v == V_SHARED) {
		kid_pair(p, nb0, nn, nbtag, mv0, mn, mvtag);
		if (hold_child(&h)) {
			ok(0, "%s: fork", ctx);
			goto out;
		}
	}
	if (v == V_KSM) {
		ksm_on(run, sizeof(run));
		if (ksm_setup(ctx, &r, mn))
			goto out;
	}
	if (p->after && setup_step(ctx, "after", p->after(&r)))
		goto out;
	if (v == V_SWAP) {
		madvise(r.mv, r.mlen, MADV_PAGEOUT);
		kb = smaps_kb(r.mv, "Swap:");
		if (kb <= 0)
			diag("%s: nothing swapped out (Swap: %ld kB)", ctx, kb);
		/* the first page back in: mapped and swap PTEs mixed */
		if (check(r.mv, mvtag))
			diag("%s: the first page differs after the swap-in", ctx);
		/*
		 * Only folios are rewritten: a swap PTE without a swap-cache
		 * folio carries no anon_vma (swap-in takes the VMA's).  Exact
		 * with the guests' zram: a synchronous device swaps in without
		 * readahead, so no unmapped swap-cache folio is counted here.
		 */
		mpages = resident(r.mv, mn);
		diag("%s: %ld of %lu pages resident (mapped or swap cache)",
		     ctx, mpages, mn);
	}
	expect_shape(ctx, two);
	expect_avs(ctx, v == V_KSM ? "abc" : "ab");
	verified(ctx);
	if (p->op(&r)) {
		ok(0, "%s: the call: %s", ctx, strerror(errno));
		goto out;
	}
	expect_layout(ctx, p->path, refused ? two : one, two);
	/* a refusal leaves both anon_vmas as they were */
	if (!tp_on() || refused)
		expect_avs(ctx, v == V_KSM ? "abc" : "ab");
	else
		expect_avs(ctx, "a");
	if (v == V_THP) {
		kb = smaps_kb(r.mv, "AnonHugePages:");
		ok(kb == (tp_on() ? 4096 : 2048),
		   "%s: AnonHugePages %ld kB, nothing split", ctx, kb);
	}
	if (v == V_KSM) {
		expect_transplanted(ctx, &s, 0, 0, 0);
		expect_c(ctx, &s, C_R_KSM, 1);
	} else {
		expect_transplanted(ctx, &s, refused ? 0 : 1,
				    refused ? 0 : mpages, refused);
	}
	if (v == V_THP)
		expect_c(ctx, &s, C_R_THP, 0);
	verified(ctx);
	expect_pages(ctx, "the neighbour", nb0, nn, nbtag);
	expect_pages(ctx, "the mover", mv0, mn, mvtag);
	if (v == V_KSM)
		expect_pages(ctx, "the KSM copy", 100, mn, MV_TAG);
	verified(ctx);
	if (h.pid > 0) {
		release_child(&h, ctx);
		fill(r.mv, NEW_TAG);	/* COW or not: the parent's page now */
		ok(!check(r.mv, NEW_TAG) && bad_page(nb0, nn, nbtag) < 0,
		   "%s: the parent writes after the child is gone", ctx);
		verified(ctx);
	}
out:
	release_child(&h, ctx);
	finish(p);
	if (v == V_KSM)
		ksm_restore(run);
}

/* ---- three VMAs ---- */

enum { T_NONE, T_X_EMPTY, T_X_SHARED, T_R_SHARED };

static const char *const tnames[] = {
	"three anon_vmas", "empty, between two anon_vmas",
	"three anon_vmas, X shared with a child",
	"three anon_vmas, R shared with a child",
};

/*
 * L | X | R with three anon_vmas (T_X_EMPTY: X never written, two); the
 * call under test makes X mergeable with both: one VMA, X and R in L's
 * anon_vma.  The stock kernel merges an empty X into L only: L and R
 * cannot share an anon_vma.  With one of them forked (the others written
 * after the fork) a refused step drops that side only:
 *  - R shared: X joins L, R stays;
 *  - X shared: X cannot join L nor R (two refusals), R joins X instead.
 */
static void t_three(const struct ipath *p, int kind)
{
	struct region r = {
		.nb = pg(0), .nlen = PG, .mv = pg(1), .mlen = 2 * PG,
		.all = pg(0), .alen = 4 * PG,
	};
	static const char *const merged[] = {
		"0-4", "0-4", "0-1 1-4", "0-3 3-4",
	};
	static const long vmas[] = { 2, 1, 1, 1 }, pages[] = { 3, 1, 1, 2 };
	static const long shared[] = { 0, 0, 2, 1 };
	const char *stockl = kind == T_X_EMPTY ? "0-3 3-4" : "0-1 1-3 3-4";
	struct holder h = { .pid = -1 };
	char ctx[160];
	struct snap s;

	snprintf(ctx, sizeof(ctx), "%s, %s", p->name, tnames[kind]);
	snap_take(&s);
	if (map_pages(0, 4)) {
		ok(0, "%s: mmap", ctx);
		return;
	}
	if (setup_step(ctx, "prep", p->prep(&r)))
		goto out;
	/* the shared one first, then the fork, then the others */
	if (kind == T_X_SHARED || kind == T_R_SHARED) {
		nkid = 0;
		if (kind == T_X_SHARED) {
			fill_pages(1, 2, MV_TAG);
			kid_expect(1, 2, MV_TAG);
			kid_expect(3, 1, 0);
		} else {
			fill_pages(3, 1, R_TAG);
			kid_expect(3, 1, R_TAG);
			kid_expect(1, 2, 0);
		}
		kid_expect(0, 1, 0);
		if (hold_child(&h)) {
			ok(0, "%s: fork", ctx);
			goto out;
		}
	}
	fill_pages(0, 1, NB_TAG);
	if (kind != T_X_EMPTY && kind != T_X_SHARED)
		fill_pages(1, 2, MV_TAG);
	if (kind != T_R_SHARED)
		fill_pages(3, 1, R_TAG);
	if (p->after && setup_step(ctx, "after", p->after(&r)))
		goto out;
	expect_shape(ctx, "0-1 1-3 3-4");
	expect_avs(ctx, kind == T_X_EMPTY ? "a-b" : "abc");
	verified(ctx);
	if (p->op(&r)) {
		ok(0, "%s: the call: %s", ctx, strerror(errno));
		goto out;
	}
	expect_layout(ctx, p->path, merged[kind], stockl);
	/*
	 * X empty: the stock merge gives X L's anon_vma itself; only R needs
	 * a transplant.
	 */
	expect_transplanted(ctx, &s, vmas[kind], pages[kind], shared[kind]);
	verified(ctx);
	expect_pages(ctx, "L", 0, 1, NB_TAG);
	expect_pages(ctx, "X", 1, 2, kind == T_X_EMPTY ? 0 : MV_TAG);
	expect_pages(ctx, "R", 3, 1, R_TAG);
	verified(ctx);
	if (kind == T_X_EMPTY) {
		fill_pages(1, 2, NEW_TAG);
		expect_pages(ctx, "X written after the merge", 1, 2, NEW_TAG);
		verified(ctx);
	}
out:
	release_child(&h, ctx);
	finish(p);
}

/* ---- a faulted VMA next to an empty one ---- */

/*
 * One of the two was never written (no anon_vma).  The stock check
 * refuses the merge when the empty one is the neighbour of the range the
 * call changes, and allows it the other way round; with transplant on,
 * the empty one adopts the anon_vma in both.  @mv_first: the mover at
 * the lower address; @mv_empty: the mover is the empty one; @shared: a
 * child keeps the written pages COW-shared (no page changes owner in an
 * adoption: still merged).
 */
static void t_adopt(const struct ipath *p, int mv_first, int mv_empty,
		    int shared)
{
	unsigned long nn = 1, mn = 2;
	unsigned long nb0 = mv_first ? mn : 0, mv0 = mv_first ? 0 : nn;
	unsigned int nbtag = mv_empty ? NB_TAG : 0, mvtag = mv_empty ? 0 : MV_TAG;
	struct region r = {
		.mv = pg(mv0), .mlen = mn * PG, .nb = pg(nb0), .nlen = nn * PG,
		.all = pg(0), .alen = (nn + mn) * PG,
	};
	struct holder h = { .pid = -1 };
	char ctx[160], two[32];
	struct snap s;

	if ((mv_empty && (p->flags & PF_POP_MV)) ||
	    (!mv_empty && (p->flags & PF_POP_NB)))
		return;		/* prep() writes the one meant to be empty */
	snprintf(ctx, sizeof(ctx), "%s, empty %s %s%s", p->name,
		 mv_empty ? "mover" : "neighbour",
		 mv_first == mv_empty ? "before the other" : "after the other",
		 shared ? ", shared with a child" : "");
	snprintf(two, sizeof(two), "0-%lu %lu-3", mv_first ? mn : nn,
		 mv_first ? mn : nn);
	snap_take(&s);
	if (map_pages(0, nn + mn)) {
		ok(0, "%s: mmap", ctx);
		return;
	}
	if (setup_step(ctx, "prep", p->prep(&r)))
		goto out;
	if (mv_empty)
		fill_pages(nb0, nn, nbtag);
	else
		fill_pages(mv0, mn, mvtag);
	if (shared) {
		kid_pair(p, nb0, nn, nbtag, mv0, mn, mvtag);
		if (hold_child(&h)) {
			ok(0, "%s: fork", ctx);
			goto out;
		}
	}
	if (p->after && setup_step(ctx, "after", p->after(&r)))
		goto out;
	expect_shape(ctx, two);
	expect_avs(ctx, (mv_first == mv_empty) ? "-a" : "a-");
	verified(ctx);
	if (p->op(&r)) {
		ok(0, "%s: the call: %s", ctx, strerror(errno));
		goto out;
	}
	/* the stock kernel merges an empty mover, refuses an empty neighbour */
	expect_layout(ctx, p->path, "0-3", mv_empty ? "0-3" : two);
	/* adoption only where the stock check refuses */
	expect_c(ctx, &s, C_MERGE_AD, mv_empty ? 0 : 1);
	expect_c(ctx, &s, C_VMAS_AD, mv_empty ? 0 : 1);
	expect_c(ctx, &s, C_MERGE_TP, 0);
	expect_c(ctx, &s, C_VMAS_TP, 0);
	expect_c(ctx, &s, C_R_SHARED, 0);
	expect_c(ctx, &s, C_UNMERGED, 0);
	verified(ctx);
	expect_pages(ctx, "the neighbour", nb0, nn, nbtag);
	expect_pages(ctx, "the mover", mv0, mn, mvtag);
	verified(ctx);
	/* the empty one is written now: its pages must join the right tree */
	if (mv_empty)
		fill_pages(mv0, mn, NEW_TAG);
	else
		fill_pages(nb0, nn, NEW_TAG);
	expect_pages(ctx, "the empty one, written after the call",
		     mv_empty ? mv0 : nb0, mv_empty ? mn : nn, NEW_TAG);
	verified(ctx);
out:
	release_child(&h, ctx);
	finish(p);
}

/* ---- mremap() expanding in place up to a neighbour ---- */

enum { E_BOTH, E_C_EMPTY, E_A_EMPTY, E_SHARED };

static const char *const enames[] = {
	"", ", C empty", ", A empty", ", shared with a child",
};

/*
 * A = pages 0-1, C = page 3, mapped apart (so two anon_vmas); A grows in
 * place by one page and touches C.  The stock kernel merges C only if A
 * has no anon_vma yet, or C has the same.
 */
static void t_expand(int kind)
{
	unsigned int atag = kind == E_A_EMPTY ? 0 : NB_TAG;
	unsigned int ctag = kind == E_C_EMPTY ? 0 : R_TAG;
	const char *stockl = kind == E_A_EMPTY ? "0-4" : "0-3 3-4";
	struct holder h = { .pid = -1 };
	char ctx[160];
	struct snap s;
	void *m;

	snprintf(ctx, sizeof(ctx), "mremap expand%s", enames[kind]);
	snap_take(&s);
	if (map_pages(0, 2) || map_pages(3, 1)) {
		ok(0, "%s: mmap", ctx);
		goto out;
	}
	if (atag)
		fill_pages(0, 2, atag);
	if (ctag)
		fill_pages(3, 1, ctag);
	if (kind == E_SHARED) {
		nkid = 0;
		kid_expect(0, 2, atag);
		kid_expect(3, 1, ctag);
		if (hold_child(&h)) {
			ok(0, "%s: fork", ctx);
			goto out;
		}
	}
	expect_shape(ctx, "0-2 3-4");
	expect_avs(ctx, kind == E_C_EMPTY ? "a-" : kind == E_A_EMPTY ? "-a" : "ab");
	verified(ctx);
	m = mremap(pg(0), 2 * PG, 3 * PG, 0);
	if (m != pg(0)) {
		ok(0, "%s: mremap in place: %s", ctx, strerror(errno));
		goto out;
	}
	expect_layout(ctx, P_MREMAP, kind == E_SHARED ? "0-3 3-4" : "0-4",
		      stockl);
	if (kind == E_C_EMPTY) {
		expect_c(ctx, &s, C_MERGE_AD, 1);
		expect_c(ctx, &s, C_VMAS_AD, 1);
		expect_c(ctx, &s, C_VMAS_TP, 0);
		expect_c(ctx, &s, C_MERGE_TP, 0);
		expect_c(ctx, &s, C_UNMERGED, 0);
	} else if (kind == E_A_EMPTY) {
		expect_transplanted(ctx, &s, 0, 0, 0);
	} else {
		expect_transplanted(ctx, &s, kind == E_SHARED ? 0 : 1,
				    kind == E_SHARED ? 0 : 1, kind == E_SHARED);
	}
	verified(ctx);
	expect_pages(ctx, "A", 0, 2, atag);
	expect_pages(ctx, "the new page", 2, 1, 0);
	expect_pages(ctx, "C", 3, 1, ctag);
	verified(ctx);
	fill_pages(2, 1, NEW_TAG);
	expect_pages(ctx, "the new page written", 2, 1, NEW_TAG);
	verified(ctx);
out:
	release_child(&h, ctx);
	clear_window();
}

/* ---- mmap() of the gap between two VMAs ---- */

enum { G_BOTH, G_R_EMPTY, G_L_EMPTY, G_SHARED };

static const char *const gnames[] = {
	"", ", R empty", ", L empty", ", shared with a child",
};

/*
 * L = page 0, R = page 2 (two anon_vmas), a new mapping at page 1.  The
 * stock kernel merges it with one side only (6.1: R, through its own
 * expansion code; 6.12: L) unless the anon_vmas allow both, and an empty
 * L refuses on 6.1 (the empty neighbour's chain again).  With transplant
 * on, both kernels end with one VMA (6.1: after mmap_region(), the new
 * range, merged with R, joins L's anon_vma, or an empty L adopts R's).
 */
static void t_gap(int kind)
{
	unsigned int ltag = kind == G_L_EMPTY ? 0 : NB_TAG;
	unsigned int rtag = kind == G_R_EMPTY ? 0 : R_TAG;
	int adopt = is61 && kind == G_L_EMPTY;
	struct holder h = { .pid = -1 };
	const char *stockl;
	char ctx[160];
	struct snap s;

	if (kind == G_R_EMPTY || (kind == G_L_EMPTY && !is61))
		stockl = "0-3";
	else
		stockl = is61 ? "0-1 1-3" : "0-2 2-3";
	snprintf(ctx, sizeof(ctx), "mmap gap%s", gnames[kind]);
	snap_take(&s);
	if (map_pages(0, 1) || map_pages(2, 1)) {
		ok(0, "%s: mmap", ctx);
		goto out;
	}
	if (ltag)
		fill_pages(0, 1, ltag);
	if (rtag)
		fill_pages(2, 1, rtag);
	if (kind == G_SHARED) {
		nkid = 0;
		kid_expect(0, 1, ltag);
		kid_expect(2, 1, rtag);
		if (hold_child(&h)) {
			ok(0, "%s: fork", ctx);
			goto out;
		}
	}
	expect_shape(ctx, "0-1 2-3");
	expect_avs(ctx, kind == G_R_EMPTY ? "a-" : kind == G_L_EMPTY ? "-a" : "ab");
	verified(ctx);
	if (map_pages(1, 1)) {
		ok(0, "%s: mmap of the gap: %s", ctx, strerror(errno));
		goto out;
	}
	expect_layout(ctx, P_MMAP, kind == G_SHARED ? stockl : "0-3", stockl);
	if (adopt) {
		expect_c(ctx, &s, C_MERGE_AD, 1);
		expect_c(ctx, &s, C_VMAS_AD, 1);
		expect_c(ctx, &s, C_VMAS_TP, 0);
		expect_c(ctx, &s, C_MERGE_TP, 0);
		expect_c(ctx, &s, C_UNMERGED, 0);
	} else {
		expect_transplanted(ctx, &s, kind == G_BOTH, kind == G_BOTH,
				    kind == G_SHARED);
	}
	verified(ctx);
	expect_pages(ctx, "L", 0, 1, ltag);
	expect_pages(ctx, "the new page", 1, 1, 0);
	expect_pages(ctx, "R", 2, 1, rtag);
	verified(ctx);
	fill_pages(1, 1, NEW_TAG);
	expect_pages(ctx, "the new page written", 1, 1, NEW_TAG);
	verified(ctx);
out:
	release_child(&h, ctx);
	clear_window();
}

/* ---- brk() ---- */

/* the VMA holding @p: its range, and whether it is labelled [heap] */
static int vma_of(const char *p, unsigned long *s, unsigned long *e,
		  int *nheap)
{
	char line[512];
	unsigned long a, b;
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	*nheap = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &a, &b) != 2)
			continue;
		if (strstr(line, "[heap]"))
			(*nheap)++;
		if (a <= (unsigned long)p && (unsigned long)p < b) {
			*s = a;
			*e = b;
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

/*
 * The stock kernel never refuses a brk() merge for the anon_vma (the new
 * range has none): the heap grows as one VMA in every mode.
 */
static void t_brk(void)
{
	unsigned long i, n = 0, s = 0, e = 0;
	char *start, *cur = sbrk(0);
	int round, nheap = 0;

	if (sbrk((-(unsigned long)cur) & (PG - 1)) == (void *)-1) {
		ok(0, "brk: align the break: %s", strerror(errno));
		return;
	}
	start = sbrk(0);
	for (round = 0; round < 3; round++) {
		if (sbrk(2 * PG) == (void *)-1) {
			ok(0, "brk: grow by 2 pages: %s", strerror(errno));
			return;
		}
		for (i = n; i < n + 2; i++)
			fill(start + i * PG, 40 + i);
		n += 2;
		if (!ok(!vma_of(start, &s, &e, &nheap) &&
			e >= (unsigned long)start + n * PG && nheap == 1,
			"brk: growth %d: the %lu pages written are in one heap VMA",
			round + 1, n))
			diag("VMA %#lx-%#lx, heap %p-%p, %d [heap] lines", s, e,
			     start, start + n * PG, nheap);
		verified("brk");
	}
	for (i = 0; i < n && !check(start + i * PG, 40 + i); i++)
		;
	ok(i == n, "brk: the %lu heap pages byte-exact", n);
	verified("brk");
	cases[P_BRK]++;
}

/* ---- under NUMA migration by another process ---- */

/*
 * t_migrate moves the window's first pages between the nodes while the
 * madvise() case runs over and over: each round either merges or, with
 * the stock layout, counts exactly one refused_migration or refused_busy.
 */
static void t_migrating(const char *migrate)
{
	const int rounds = 40;
	int i, st, bad = 0, nmerged = 0, nrefused = 0;
	long d_mig, d_busy, d_tp;
	char arg[3][32], got[512];
	struct snap s;
	pid_t mig;

	if (!migrate || access(migrate, X_OK)) {
		skip("no t_migrate", "madvise under migration");
		return;
	}
	snprintf(arg[0], sizeof(arg[0]), "%d", getpid());
	snprintf(arg[1], sizeof(arg[1]), "%lx", (unsigned long)W);
	snprintf(arg[2], sizeof(arg[2]), "%lx", (unsigned long)pg(16));
	mig = fork();
	if (mig == 0) {
		execl(migrate, migrate, "-i", "0", "-k", "0", arg[0], arg[1],
		      arg[2], (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < rounds && !bad; i++) {
		snap_take(&s);
		if (map_pages(0, 15) || madvise(pg(1), 14 * PG, MADV_DONTDUMP)) {
			bad = 1;
			break;
		}
		fill_pages(0, 1, NB_TAG);
		fill_pages(1, 14, MV_TAG);
		if (madvise(pg(1), 14 * PG, MADV_DODUMP)) {
			bad = 2;
			break;
		}
		window_vmas(got, sizeof(got));
		d_mig = d_busy = d_tp = 0;
		if (!nostats) {
			d_mig = stats_counter("refused_migration") - s.v[C_R_MIGR];
			d_busy = stats_counter("refused_busy") - s.v[C_R_BUSY];
			d_tp = stats_counter("merge_transplant") - s.v[C_MERGE_TP];
		}
		if (tp_on() && !strcmp(got, "0-15") && !d_mig && !d_busy &&
		    d_tp == 1) {
			nmerged++;
		} else if (!strcmp(got, "0-1 1-15") && !d_tp &&
			   d_mig + d_busy == (tp_on() ? 1 : 0)) {
			nrefused++;
		} else {
			diag("migrating: round %d: layout %s, refused_migration +%ld, refused_busy +%ld, merge_transplant +%ld",
			     i, got, d_mig, d_busy, d_tp);
			bad = 3;
		}
		if (!bad && (bad_page(0, 1, NB_TAG) >= 0 ||
			     bad_page(1, 14, MV_TAG) >= 0))
			bad = 4;
		if (!bad && vm_verify_self_ok("migrating") != 1)
			bad = 5;
		clear_window();
	}
	kill(mig, SIGTERM);
	waitpid(mig, &st, 0);
	ok(!bad, "madvise under migration: %d rounds, each merged or refused for migration, data and rmap hold (%d)",
	   rounds, bad);
	diag("migrating: %d merged, %d with the stock layout", nmerged, nrefused);
}

int main(int argc, char **argv)
{
	char migrate[256], gains[512];
	int c, mv_first, mv_empty;
	struct utsname u;
	unsigned int i;
	size_t l, n;

	if (mode_init(argc, argv, "t_inplace", 900, &stock, &renumber_only,
		      NULL, &vfd))
		return 2;
	is61 = !uname(&u) && !strncmp(u.release, "6.1.", 4);
	nostats = stats_counter("merge_attempts") == C_NOSTATS;
	if (nostats)
		diag("no %s: counters not checked", DBG_STATS);
	W = aligned_window(WIN_PAGES * PG);
	if (!W)
		return ok(0, "window"), tap_exit();

	snprintf(migrate, sizeof(migrate), "%s", argv[0]);
	l = strlen(migrate);
	while (l && migrate[l - 1] != '/')
		l--;
	snprintf(migrate + l, sizeof(migrate) - l, "t_migrate");

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		const struct ipath *p = &paths[i];

		t_pair(p, V_PLAIN);
		t_pair(p, V_LEFT);
		t_pair(p, V_SHARED);
		if (!(p->flags & PF_NB_PREP)) {
			t_three(p, T_NONE);
			if (!(p->flags & PF_POP_MV))
				t_three(p, T_X_EMPTY);
		}
		for (mv_first = 0; mv_first < 2; mv_first++)
			for (mv_empty = 0; mv_empty < 2; mv_empty++)
				t_adopt(p, mv_first, mv_empty, 0);
	}
	t_pair(p_mprotect, V_SWAP);
	t_pair(p_madvise, V_SWAP);
	t_pair(p_mprotect, V_NB_FORKED);
	t_pair(p_madvise, V_NB_FORKED);
	t_pair(p_mprotect, V_THP);
	t_pair(p_madvise, V_THP);
	t_pair(p_madvise, V_KSM);
	t_three(p_mprotect, T_X_SHARED);
	t_three(p_madvise, T_X_SHARED);
	t_three(p_mprotect, T_R_SHARED);
	t_three(p_madvise, T_R_SHARED);
	for (mv_first = 0; mv_first < 2; mv_first++) {
		t_adopt(p_mprotect, mv_first, 0, 1);
		t_adopt(p_madvise, mv_first, 0, 1);
	}
	for (c = E_BOTH; c <= E_SHARED; c++)
		t_expand(c);
	for (c = G_BOTH; c <= G_SHARED; c++)
		t_gap(c);
	t_brk();
	t_migrating(migrate);

	for (i = n = 0; i < NR_PATHS; i++)
		n += snprintf(gains + n, sizeof(gains) - n, " %s %d/%d",
			      path_names[i], gained[i], cases[i]);
	diag("merges gained (fewer VMAs than stock) per path, of cases:%s",
	     gains);
	return tap_exit();
}
