// SPDX-License-Identifier: GPL-2.0
/*
 * Renumbering after mremap() moves: the thesis's mremap merge
 * cases as exact VMA layouts, every page read back byte-exact, the rmap
 * verifier after every step, and the refusal counters.
 *
 * usage: t_renumber [-o] [-q] [-r | -s]
 *   -o  opt this process in first
 *   -q  quick: one renumber merge (t_reverse) and one transplant merge
 *       (t_other_av), the smoke set of ported builds (docs/testing.md)
 *   -r  expect the layouts of renumber alone (transplant off)
 *   -s  expect the stock layouts (features off, the process not opted in,
 *       or no module)
 *   without -r or -s: renumber and transplant on (opted in)
 *
 * Layouts are written relative to a 2 MiB-aligned scratch window, in
 * pages: "1-3" is one VMA over pages 1 and 2 whose pgoff is linear
 * (vm_pgoff == vm_start >> PAGE_SHIFT, from VMAMERGE_IOC_VMAS), "2-3~" one
 * whose pgoff is not.  Without /dev/vmamerge (no module) the pgoff marks
 * cannot be read and only the ranges are compared.
 */
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define PG		4096UL
#define HPG		(2UL << 20)
#define WIN_PAGES	2048UL		/* 8 MiB window */

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#ifndef MPOL_MF_MOVE_ALL
#define MPOL_MF_MOVE_ALL (1 << 2)
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

static int stock;		/* -s */
static int renumber_only;	/* -r: renumber on, transplant off */
static int vfd = -1;		/* /dev/vmamerge or -1 */
static char *W;			/* the window */

static char *pg(unsigned long i)
{
	return W + i * PG;
}

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

/* Map pages [@first, @first + @n) of the window, fill with tags. */
static int map_fill(unsigned long first, unsigned long n, unsigned int tag0)
{
	return page_map_fill(pg(first), n, tag0);
}

static int move(unsigned long from, unsigned long n, unsigned long newn,
		unsigned long to, int flags)
{
	void *r = mremap(pg(from), n * PG, newn * PG,
			 MREMAP_MAYMOVE | MREMAP_FIXED | flags, pg(to));

	return r == pg(to) ? 0 : -1;
}

static void clear_window(void)
{
	munmap(W, WIN_PAGES * PG);
}

static void expect_layout3(const char *ctx, const char *both,
			   const char *renumbered, const char *stocklayout)
{
	expect_window_layout(ctx, vfd, W, WIN_PAGES,
			     stock ? stocklayout :
			     renumber_only ? renumbered : both);
}

/* the same when transplanting changes nothing */
static void expect_layout(const char *ctx, const char *renumbered,
			  const char *stocklayout)
{
	expect_window_layout(ctx, vfd, W, WIN_PAGES,
			     stock ? stocklayout : renumbered);
}

/* pages [first, first+n) hold tags[0..n) (0: zero page) */
static void expect_data(const char *ctx, unsigned long first,
			const unsigned int *tags, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		if (check(pg(first + i), tags[i]))
			break;
	if (!ok(i == n, "%s: every page byte-exact", ctx))
		diag("page %lu differs (expected tag %u)", first + i, tags[i]);
}

/* ---- counters (global, from debugfs; this test runs alone) ---- */

static long counter(const char *name)
{
	long v = stats_counter(name);

	return v < 0 ? -1 : v;
}

static void expect_delta(const char *ctx, const char *name, long before,
			 long want)
{
	long d = counter(name) - before;

	if (before < 0) {
		skip("no debugfs stats", "%s: %s +%ld", ctx, name, want);
		return;
	}
	if (!ok(d == want, "%s: %s +%ld", ctx, name, want))
		diag("%s changed by %ld", name, d);
}

/* a counter that moves by @delta_renumber unless in stock mode */
static void expect_counter(const char *ctx, const char *name, long before,
			   long delta_renumber)
{
	expect_delta(ctx, name, before, stock ? 0 : delta_renumber);
}

/* one that moves by @delta only with both features on */
static void expect_counter_tp(const char *ctx, const char *name, long before,
			      long delta)
{
	expect_delta(ctx, name, before, stock || renumber_only ? 0 : delta);
}

static void verified(const char *ctx)
{
	vm_verify_self_ok(ctx);
}

/* ---- children that keep COW-shared pages until released ---- */

struct holder {
	pid_t pid;
	int wfd;
};

/*
 * Fork a child that waits until release_child(), then exits with fn()'s
 * result (0: what it read is right).  Returns -1 if it could not start.
 */
static int hold_child(struct holder *h, int (*fn)(void))
{
	int go[2];
	char c;

	if (pipe(go))
		return -1;
	h->pid = fork();
	if (h->pid < 0)
		return -1;
	if (h->pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(3);
		_exit(fn());
	}
	close(go[0]);
	h->wfd = go[1];
	return 0;
}

/* Release the child, wait for it, report its verdict as @what. */
static void release_child(struct holder *h, const char *what)
{
	int st = 0;

	if (write(h->wfd, "x", 1) != 1)
		diag("%s: cannot wake the child", what);
	close(h->wfd);
	waitpid(h->pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s (status %#x)", what, st);
}

/* ---- the cases ---- */

/* thesis §3.1: a page moved behind its old neighbour, in reverse order */
static void t_reverse(void)
{
	static const unsigned int want[] = { 2, 1 };
	long r = counter("vmas_renumbered"), m = counter("merge_renumber");

	if (map_fill(0, 2, 1) || move(0, 1, 1, 2, 0)) {
		ok(0, "reverse: mmap and mremap");
		return;
	}
	expect_layout("reverse", "1-3", "1-2 2-3~");
	expect_data("reverse", 1, want, 2);
	expect_counter("reverse", "vmas_renumbered", r, 1);
	expect_counter("reverse", "merge_renumber", m, 1);
	verified("reverse");
	clear_window();
}

/* a page moved out and back into its hole: merges with both sides */
static void t_back(void)
{
	static const unsigned int want[] = { 1, 2, 3 };

	if (map_fill(0, 3, 1) || move(1, 1, 1, 10, 0)) {
		ok(0, "out-and-back: mmap and mremap");
		return;
	}
	/* merges with nothing there: not rewritten (no eager linear pgoff) */
	expect_layout("out-and-back: out", "0-1 2-3 10-11~", "0-1 2-3 10-11~");
	verified("out-and-back: out");
	if (move(10, 1, 1, 1, 0)) {
		ok(0, "out-and-back: mremap back");
		return;
	}
	expect_layout("out-and-back: back", "0-3", "0-3");
	expect_data("out-and-back", 0, want, 3);
	verified("out-and-back: back");
	clear_window();
}

/*
 * MREMAP_DONTUNMAP next to its own source: source and destination stay
 * apart (the stock rule, which copy_vma() keeps), so nothing is rewritten.
 * t_dontunmap_other: next to another VMA it merges.
 */
static void t_dontunmap(void)
{
	static const unsigned int want[] = { 0, 2, 1 };

	if (map_fill(0, 2, 1)) {
		ok(0, "dontunmap: mmap");
		return;
	}
	if (move(0, 1, 1, 2, MREMAP_DONTUNMAP)) {
		skip("MREMAP_DONTUNMAP refused", "dontunmap");
		clear_window();
		return;
	}
	/* no munmap, so the source VMA is not split either */
	expect_layout("dontunmap", "0-2 2-3~", "0-2 2-3~");
	expect_data("dontunmap", 0, want, 3);
	verified("dontunmap");
	clear_window();
}

/* moved and grown at once: the new tail page is unfaulted */
static void t_grow(void)
{
	static const unsigned int want[] = { 2, 1, 0 };

	if (map_fill(0, 2, 1) || move(0, 1, 2, 2, 0)) {
		ok(0, "grow: mmap and mremap");
		return;
	}
	expect_layout("grow", "1-4", "1-2 2-4~");
	expect_data("grow", 1, want, 3);
	verified("grow");
	clear_window();
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

/* the same with both pages swapped out (swap PTEs, maybe swap cache) */
static void t_swap(void)
{
	static const unsigned int want[] = { 2, 1 };
	long kb;

	if (map_fill(0, 2, 1)) {
		ok(0, "swap: mmap");
		return;
	}
	madvise(pg(0), 2 * PG, MADV_PAGEOUT);
	kb = smaps_kb(pg(0), "Swap:");
	if (kb <= 0)
		diag("swap: nothing swapped out (Swap: %ld kB); moving anyway", kb);
	if (move(0, 1, 1, 2, 0)) {
		ok(0, "swap: mremap");
		return;
	}
	verified("swap: after the move, before reading");
	expect_layout("swap", "1-3", "1-2 2-3~");
	expect_data("swap", 1, want, 2);
	verified("swap");
	clear_window();
}

/*
 * COW-shared with a child that keeps the pages: no renumber (counted),
 * stock layout; the child still sees the old contents at the old places.
 */
static int shared_child(void)
{
	if (check(pg(0), 1) || check(pg(1), 2))
		return 1;
	fill(pg(0), 9);
	return check(pg(0), 9) || vm_verify_self_ok("shared: child") != 1 ? 2 : 0;
}

static void t_shared(void)
{
	static const unsigned int want[] = { 1 };
	long sh = counter("refused_shared");
	struct holder h;

	if (map_fill(0, 2, 1) || hold_child(&h, shared_child)) {
		ok(0, "shared: mmap and fork");
		return;
	}
	if (move(0, 1, 1, 2, 0)) {
		ok(0, "shared: mremap");
		return;
	}
	expect_layout("shared", "1-2 2-3~", "1-2 2-3~");
	expect_counter("shared", "refused_shared", sh, 1);
	verified("shared: parent");
	release_child(&h, "shared: the child read the old pages and wrote its own");
	fill(pg(1), 5);
	expect_data("shared: parent after its write", 2, want, 1);
	clear_window();
}

/*
 * thesis §3.3.2: a page made exclusive again by a COW write, moved next to
 * pages still shared with a child: it is renumbered and merges into them;
 * nothing shared is rewritten.
 */
static int partly_shared_child(void)
{
	return check(pg(0), 1) || check(pg(1), 2) || check(pg(2), 3);
}

static void t_partly_shared(void)
{
	static const unsigned int want[] = { 2, 3, 7 };
	struct holder h;

	if (map_fill(0, 3, 1) || hold_child(&h, partly_shared_child)) {
		ok(0, "partly shared: mmap and fork");
		return;
	}
	fill(pg(0), 7);		/* COW: page 0 is the parent's own now */
	if (move(0, 1, 1, 3, 0)) {
		ok(0, "partly shared: mremap");
		return;
	}
	expect_layout("partly shared", "1-4", "1-3 3-4~");
	expect_data("partly shared", 1, want, 3);
	verified("partly shared");
	release_child(&h, "partly shared: the child still reads the original pages");
	clear_window();
}

/* ---- the move-time decision: which side is rewritten ---- */

/* the counters a move's rewrite moves, read before it */
struct mv_counters {
	long vr, pr, vt, pt, va, mb, mr, ma, rh;
};

static void mv_read(struct mv_counters *c)
{
	c->vr = counter("vmas_renumbered");
	c->pr = counter("pages_renumbered");
	c->vt = counter("vmas_transplanted");
	c->pt = counter("pages_transplanted");
	c->va = counter("vmas_adopted");
	c->mb = counter("merge_both");
	c->mr = counter("merge_renumber");
	c->ma = counter("merge_adopt");
	c->rh = counter("rehomed_unmerged");
}

/*
 * With both features: VMAs renumbered (and their pages), VMAs transplanted
 * (and pages), merge_both; nothing with renumber alone or stock, where
 * these moves need a transplant.  rehomed_unmerged never moves.
 */
static void mv_expect(const char *ctx, const struct mv_counters *c,
		      long vr, long pr, long vt, long pt, long mb)
{
	expect_counter_tp(ctx, "vmas_renumbered", c->vr, vr);
	expect_counter_tp(ctx, "pages_renumbered", c->pr, pr);
	expect_counter_tp(ctx, "vmas_transplanted", c->vt, vt);
	expect_counter_tp(ctx, "pages_transplanted", c->pt, pt);
	expect_counter_tp(ctx, "merge_both", c->mb, mb);
	expect_delta(ctx, "rehomed_unmerged", c->rh, 0);
}

static void tags(unsigned int *t, unsigned int tag0, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		t[i] = tag0 + i;
}

static int map_thp(unsigned long first, unsigned long n)
{
	unsigned long i;

	if (page_map_huge(pg(first), n))
		return -1;
	for (i = 0; i < n; i++)
		fill(pg(first + i), 100 + i % 200);
	return 0;
}

static void expect_thp_data(const char *ctx, unsigned long first,
			    unsigned long src, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		if (check(pg(first + i), 100 + (src + i) % 200))
			break;
	if (!ok(i == n, "%s: every page byte-exact", ctx))
		diag("page %lu differs", first + i);
}

/* A PMD-mapped THP moved to an aligned place: renumbered whole, no split */
static void t_thp_aligned(void)
{
	const unsigned long n = HPG / PG;	/* 512 */
	long kb;

	if (map_thp(0, 2 * n)) {
		ok(0, "thp aligned: mmap");
		return;
	}
	kb = smaps_kb(pg(0), "AnonHugePages:");
	if (kb < 4096) {
		skip("no THP here", "thp aligned (AnonHugePages %ld kB)", kb);
		clear_window();
		return;
	}
	if (move(0, n, n, 2 * n, 0)) {
		ok(0, "thp aligned: mremap");
		return;
	}
	expect_layout("thp aligned", "512-1536", "512-1024 1024-1536~");
	kb = smaps_kb(pg(n), "AnonHugePages:");
	ok(kb == (stock ? 2048 : 4096), "thp aligned: AnonHugePages %ld kB, not split", kb);
	expect_thp_data("thp aligned", n, n, n);
	expect_thp_data("thp aligned: moved", 2 * n, 0, n);
	verified("thp aligned");
	clear_window();
}

/*
 * moved to a misaligned place (the PMD is split by the move) next to
 * nothing: nothing is rewritten, nothing refused, the stock result
 */
static void t_thp_misaligned(void)
{
	const unsigned long n = HPG / PG;
	long t = counter("refused_thp");

	if (map_thp(0, n)) {
		ok(0, "thp misaligned: mmap");
		return;
	}
	if (smaps_kb(pg(0), "AnonHugePages:") < 2048) {
		skip("no THP here", "thp misaligned");
		clear_window();
		return;
	}
	if (move(0, n, n, n + 1, 0)) {
		ok(0, "thp misaligned: mremap");
		return;
	}
	expect_layout("thp misaligned", "513-1025~", "513-1025~");
	expect_counter("thp misaligned", "refused_thp", t, 0);
	expect_thp_data("thp misaligned", n + 1, 0, n);
	verified("thp misaligned");
	clear_window();
}

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

static void features(const char *f)
{
	write_file(DBG_FEATURES, f, strlen(f));
}

/* 0 once KSM merges @pages pages of this process (10 s at most) */
static int ksm_wait(int pages)
{
	char buf[64];
	int i;

	for (i = 0; i < 200; i++) {
		if (read_file("/proc/self/ksm_merging_pages", buf, sizeof(buf)) > 0 &&
		    atol(buf) >= pages)
			return 0;
		usleep(50000);
	}
	return -1;
}

/*
 * 0 once KSM made @a and @b one page (the same PFN in pagemap, read as
 * root; 10 s at most).  ksm_merging_pages alone may still count pages of
 * a test before that ksmd has not rescanned since they were unmapped.
 */
static int ksm_same_page(const void *a, const void *b)
{
	unsigned long long ea, eb;
	int i;

	for (i = 0; i < 200; i++) {
		ea = pagemap_entry(a);
		eb = pagemap_entry(b);
		if ((ea & PM_PRESENT) && PM_PFN(ea) &&
		    PM_PFN(ea) == PM_PFN(eb))
			return 0;
		usleep(50000);
	}
	return -1;
}

/*
 * KSM pages are never rewritten.  mremap() itself breaks KSM sharing in
 * the range it moves (ksm_madvise(MADV_UNMERGEABLE) in move_vma()), so the
 * KSM page has to be in the destination VMA already: page A moved with
 * renumber off keeps its old pgoff, KSM merges it with an identical page
 * C, then page B moved behind it merges by the stock rule (pgoffs
 * continuous): nothing to rewrite, so the KSM page is left alone and
 * nothing is refused (before the move-time decision the merged VMA was
 * renumbered afterwards: refused_ksm).
 */
static void t_ksm(void)
{
	static const unsigned int want[] = { 1, 2 };
	long k = counter("refused_ksm");
	char run[16] = "";
	int i;

	ksm_on(run, sizeof(run));
	if (map_fill(0, 2, 1) || map_fill(20, 1, 1)) {
		ok(0, "ksm: mmap");
		goto out;
	}
	features("-renumber");		/* off for the first move */
	i = move(0, 1, 1, 3, 0);
	if (!stock)
		features("+renumber");
	if (i) {
		ok(0, "ksm: mremap A");
		goto out;
	}
	/* B too, or its flags would differ from A's */
	if (madvise(pg(3), PG, MADV_MERGEABLE) ||
	    madvise(pg(1), PG, MADV_MERGEABLE) ||
	    madvise(pg(20), PG, MADV_MERGEABLE)) {
		skip("no KSM", "ksm");
		goto out;
	}
	if (ksm_wait(2)) {
		skip("KSM did not merge within 10 s", "ksm");
		goto out;
	}
	if (move(1, 1, 1, 4, 0)) {
		ok(0, "ksm: mremap B");
		goto out;
	}
	expect_layout("ksm", "3-5~ 20-21", "3-5~ 20-21");
	expect_counter("ksm", "refused_ksm", k, 0);
	expect_data("ksm", 3, want, 2);
	verified("ksm");
out:
	clear_window();
	ksm_restore(run);
}

/*
 * A KSM page in the neighbour that would be the cheaper side: an 8-page
 * block moved behind a one-page VMA whose page KSM merged with an
 * identical page elsewhere.  (The source never holds KSM pages: mremap()
 * breaks KSM sharing in the range it moves.)  The neighbour cannot be
 * rewritten - refused_ksm - and neither side changes.
 */
static void t_ksm_neighbour(void)
{
	const char *ctx = "ksm neighbour";
	long k = counter("refused_ksm");
	unsigned int want[9];
	char run[16] = "";

	ksm_on(run, sizeof(run));
	if (map_fill(0, 1, 1) || map_fill(30, 1, 1) || map_fill(20, 8, 2)) {
		ok(0, "%s: mmap", ctx);
		goto out;
	}
	if (madvise(pg(0), PG, MADV_MERGEABLE) ||
	    madvise(pg(30), PG, MADV_MERGEABLE) ||
	    madvise(pg(20), 8 * PG, MADV_MERGEABLE)) {
		skip("no KSM", "%s", ctx);
		goto out;
	}
	if (ksm_same_page(pg(0), pg(30))) {
		skip("KSM did not merge within 10 s", "%s", ctx);
		goto out;
	}
	if (move(20, 8, 8, 1, 0)) {
		ok(0, "%s: mremap", ctx);
		goto out;
	}
	expect_layout3(ctx, "0-1 1-9~ 30-31", "0-1 1-9~ 30-31",
		       "0-1 1-9~ 30-31");
	expect_counter_tp(ctx, "refused_ksm", k, 1);
	tags(want, 1, 9);
	expect_data(ctx, 0, want, 9);
	verified(ctx);
out:
	clear_window();
	ksm_restore(run);
}

/* the node page @p is on, or -errno (move_pages(2) with nodes NULL) */
static int page_node(void *p)
{
	int status = -1;

	if (syscall(SYS_move_pages, 0, 1, &p, NULL, &status, 0))
		return -errno;
	return status;
}

static int ksm_merging(void)
{
	char buf[64];

	if (read_file("/proc/self/ksm_merging_pages", buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

/*
 * The KSM + mremap + migration scenario of the KSM rmap series
 * (../shared/reference/ksm-rmap-linear-page-index-series.txt, selftest
 * migrate.ksm_and_mremap): 32 identical pages, the second half moved
 * over the first, KSM merges them, a KSM page is migrated to the other
 * node; KSM still merges 16 pages, data and rmap hold.  With renumber the
 * moved half has a linear pgoff, which is what that series' rmap walk
 * looks the page up by.
 */
static void t_ksm_mremap_migrate(void)
{
	int i, node, to, status = -1, n = -1;
	char run[16] = "";
	void *p;

	ksm_on(run, sizeof(run));
	if (mmap(pg(0), 32 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != pg(0)) {
		ok(0, "ksm+mremap+migrate: mmap");
		goto out;
	}
	memset(pg(0), 0x77, 32 * PG);
	if (move(16, 16, 16, 0, 0)) {
		ok(0, "ksm+mremap+migrate: mremap the second half over the first");
		goto out;
	}
	/* it replaces the first half: no neighbour, not rewritten */
	expect_layout("ksm+mremap+migrate", "0-16~", "0-16~");
	/*
	 * Only now: with the pages mergeable before the move, ksmd could
	 * merge some of them first, and a KSM page in the moved range is
	 * (rightly) refused_ksm - the layout then depended on ksmd's timing.
	 */
	if (madvise(pg(0), 16 * PG, MADV_MERGEABLE)) {
		skip("no KSM", "ksm+mremap+migrate");
		goto out;
	}
	for (i = 0; i < 200 && (n = ksm_merging()) < 16; i++)
		usleep(50000);
	if (n < 16) {
		skip("KSM did not merge within 10 s", "ksm+mremap+migrate (%d)", n);
		goto out;
	}
	node = page_node(pg(0));
	to = node == 0 ? 1 : 0;
	p = pg(0);
	if (node < 0 || syscall(SYS_move_pages, 0, 1, &p, &to, &status,
				MPOL_MF_MOVE_ALL) || status != to) {
		skip("no second node or migration refused",
		     "ksm+mremap+migrate (node %d, status %d, %s)", node, status,
		     strerror(errno));
	} else {
		ok(page_node(pg(0)) == to, "ksm+mremap+migrate: the KSM page moved to node %d", to);
	}
	usleep(200000);
	n = ksm_merging();
	ok(n == 16, "ksm+mremap+migrate: KSM still merges 16 pages (%d)", n);
	for (i = 0; i < 16 * (int)PG && ((unsigned char *)pg(0))[i] == 0x77; i++)
		;
	ok(i == 16 * (int)PG, "ksm+mremap+migrate: every byte reads 0x77");
	verified("ksm+mremap+migrate");
out:
	clear_window();
	ksm_restore(run);
}

/* merged, then forked: both write their own copies and verify */
static void t_fork_after(void)
{
	static const unsigned int want[] = { 2, 1 };
	int st;
	pid_t pid;

	if (map_fill(0, 2, 1) || move(0, 1, 1, 2, 0)) {
		ok(0, "fork after: mmap and mremap");
		return;
	}
	pid = fork();
	if (pid == 0) {
		fill(pg(1), 11);
		_exit(check(pg(1), 11) || check(pg(2), 1) ||
		      vm_verify_self_ok("fork after: child") != 1 ? 1 : 0);
	}
	fill(pg(2), 12);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "fork after: the child wrote and read its copy (status %#x)", st);
	expect_data("fork after: parent", 1, want, 1);
	ok(!check(pg(2), 12), "fork after: the parent's write stands");
	verified("fork after");
	clear_window();
}

/*
 * Under migration: a second process moves our pages between the NUMA
 * nodes while we move them around; data and rmap must hold whatever the
 * outcome of each renumber (refusals for migration entries are fine).
 */
static void t_migrating(const char *migrate)
{
	static const unsigned int want[] = { 2, 1 };
	char arg[3][32];
	pid_t mig;
	int i, bad = 0, st;

	if (!migrate || access(migrate, X_OK)) {
		skip("no t_migrate", "migrating");
		return;
	}
	snprintf(arg[0], sizeof(arg[0]), "%d", getpid());
	snprintf(arg[1], sizeof(arg[1]), "%lx", (unsigned long)W);
	snprintf(arg[2], sizeof(arg[2]), "%lx", (unsigned long)pg(16));
	mig = fork();
	if (mig == 0) {
		execl(migrate, migrate, "-i", "1", "-k", "0", arg[0], arg[1],
		      arg[2], (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100 && !bad; i++) {
		if (map_fill(0, 2, 1) || move(0, 1, 1, 2, 0) ||
		    move(1, 1, 1, 5, 0) || move(2, 1, 1, 6, 0)) {
			bad = 1;
			break;
		}
		bad = check(pg(5), want[0]) || check(pg(6), want[1]);
		if (!bad && vm_verify_self_ok("migrating") != 1)
			bad = 2;
		clear_window();
	}
	kill(mig, SIGTERM);
	waitpid(mig, &st, 0);
	ok(!bad, "migrating: 100 rounds of moves under move_pages, data and rmap hold (%d)", bad);
}

/* ---- transplant: neighbours with another anon_vma ---- */

/*
 * Two separate mmap()s, faulted apart (two anon_vmas); B moved next to A:
 * renumbered, then transplanted into A's anon_vma and merged.  @pageout:
 * B is paged out before the move.
 */
static void t_other_av(int pageout)
{
	static const unsigned int want[] = { 1, 2 };
	const char *ctx = pageout ? "other anon_vma, paged out" : "other anon_vma";
	long tv = counter("vmas_transplanted"), mb = counter("merge_both");

	if (map_fill(0, 1, 1) || map_fill(5, 1, 2)) {
		ok(0, "%s: mmap", ctx);
		return;
	}
	if (pageout)
		madvise(pg(5), PG, MADV_PAGEOUT);
	if (move(5, 1, 1, 1, 0)) {
		ok(0, "%s: mremap", ctx);
		return;
	}
	/* renumber alone cannot make it merge: nothing rewritten */
	expect_layout3(ctx, "0-2", "0-1 1-2~", "0-1 1-2~");
	expect_counter_tp(ctx, "vmas_transplanted", tv, 1);
	expect_counter_tp(ctx, "merge_both", mb, 1);
	verified(ctx);
	expect_data(ctx, 0, want, 2);
	verified(ctx);
	clear_window();
}

/*
 * The thesis's spacing test in small: 32 one-page mappings, each its own
 * mmap() with a hole after it, moved together; with both features they end
 * as one VMA.
 */
static void t_spacing(void)
{
	const unsigned long n = 32;
	unsigned int want[32];
	unsigned long i;
	char both[16];

	for (i = 0; i < n; i++) {
		want[i] = 40 + i;
		if (map_fill(2 * i, 1, 40 + i)) {
			ok(0, "spacing: mmap");
			return;
		}
	}
	for (i = 1; i < n; i++)
		if (move(2 * i, 1, 1, i, 0)) {
			ok(0, "spacing: mremap %lu", i);
			return;
		}
	snprintf(both, sizeof(both), "0-%lu", n);
	if (stock || renumber_only) {
		char got[512];
		int vmas = window_layout(vfd, W, WIN_PAGES, got, sizeof(got));

		ok(vmas == (int)n, "spacing: %lu VMAs without transplant (%d)", n, vmas);
	} else {
		expect_layout3("spacing", both, both, both);
	}
	expect_data("spacing", 0, want, n);
	verified("spacing");
	clear_window();
}

static int target_child(void)
{
	return check(pg(0), 1) || vm_verify_self_ok("forked target: child") != 1;
}

/* A's anon_vma also has a forked child's VMA: B still joins it */
static void t_other_av_target_forked(void)
{
	static const unsigned int want[] = { 1, 2 };
	struct holder h;

	if (map_fill(0, 1, 1) || hold_child(&h, target_child)) {
		ok(0, "forked target: mmap and fork");
		return;
	}
	if (map_fill(5, 1, 2) || move(5, 1, 1, 1, 0)) {
		ok(0, "forked target: mmap and mremap");
		return;
	}
	expect_layout3("forked target", "0-2", "0-1 1-2~", "0-1 1-2~");
	expect_data("forked target", 0, want, 2);
	verified("forked target");
	release_child(&h, "forked target: the child still reads its page");
	fill(pg(0), 3);		/* COW in the parent after the merge */
	ok(!check(pg(0), 3) && !check(pg(1), 2), "forked target: parent writes");
	verified("forked target: after the write");
	clear_window();
}

static int mover_child(void)
{
	return check(pg(5), 2);
}

/*
 * B forked (its anon_vma has a child) and written since (exclusive
 * again): B joins A's anon_vma and merges - it leaves its own anon_vma as
 * munmap would, which stays for the child, and the child still reads the
 * old B
 */
static void t_other_av_moved_forked(void)
{
	struct mv_counters c;
	struct holder h;

	if (map_fill(0, 1, 1) || map_fill(5, 1, 2) ||
	    hold_child(&h, mover_child)) {
		ok(0, "forked mover: mmap and fork");
		return;
	}
	fill(pg(5), 4);		/* B exclusive again, its anon_vma still forked */
	mv_read(&c);
	if (move(5, 1, 1, 1, 0)) {
		ok(0, "forked mover: mremap");
		return;
	}
	expect_layout3("forked mover", "0-2", "0-1 1-2~", "0-1 1-2~");
	mv_expect("forked mover", &c, 1, 1, 1, 1, 1);
	ok(!check(pg(0), 1) && !check(pg(1), 4), "forked mover: every page byte-exact");
	verified("forked mover");
	release_child(&h, "forked mover: the child still reads the old B");
	verified("forked mover: after the child");
	clear_window();
}

static int hold_nothing(void)
{
	return 0;
}

/*
 * thesis §3.1.2: three pages, the middle one unmapped, the third moved
 * next to the first: merges with renumber; with @shared (a child keeps
 * the pages) the stock result.
 */
static void t_thesis_312(int shared)
{
	const char *ctx = shared ? "3.1.2 shared" : "3.1.2";
	static const unsigned int want[] = { 1, 3 };
	struct holder h;

	if (map_fill(0, 3, 1) || munmap(pg(1), PG) ||
	    (shared && hold_child(&h, hold_nothing))) {
		ok(0, "%s: setup", ctx);
		return;
	}
	if (move(2, 1, 1, 1, 0)) {
		ok(0, "%s: mremap", ctx);
		return;
	}
	if (shared)
		expect_layout(ctx, "0-1 1-2~", "0-1 1-2~");
	else
		expect_layout(ctx, "0-2", "0-1 1-2~");
	expect_data(ctx, 0, want, 2);
	verified(ctx);
	if (shared)
		release_child(&h, "3.1.2 shared: child");
	clear_window();
}

/*
 * thesis §3.3.1: as 3.1.2 with the moved page read-only: no merge at the
 * move, so nothing is rewritten there (no eager linearisation); the
 * mprotect() that makes the protections equal renumbers the moved page
 * (the cheaper side on a tie keeps the neighbour's numbering) and merges
 * - with renumber alone too, both pages come from one mapping, one
 * anon_vma.  With @shared (a child keeps the pages) the renumbering at
 * the mprotect() is refused and counted: the stock result.
 */
static void t_thesis_331(int shared)
{
	const char *ctx = shared ? "3.3.1 shared" : "3.3.1";
	static const unsigned int want[] = { 1, 3 };
	long sh = counter("refused_shared");
	struct mv_counters c;
	struct holder h;

	if (map_fill(0, 3, 1) || munmap(pg(1), PG) ||
	    mprotect(pg(2), PG, PROT_READ) ||
	    (shared && hold_child(&h, hold_nothing))) {
		ok(0, "%s: setup", ctx);
		return;
	}
	mv_read(&c);
	if (move(2, 1, 1, 1, 0)) {
		ok(0, "%s: mremap", ctx);
		return;
	}
	expect_layout(ctx, "0-1 1-2~", "0-1 1-2~");
	expect_counter(ctx, "vmas_renumbered", c.vr, 0);
	verified(ctx);
	if (mprotect(pg(1), PG, PROT_READ | PROT_WRITE)) {
		ok(0, "%s: mprotect", ctx);
		return;
	}
	if (shared)
		expect_layout(ctx, "0-1 1-2~", "0-1 1-2~");
	else
		expect_layout(ctx, "0-2", "0-1 1-2~");
	expect_counter(ctx, "vmas_renumbered", c.vr, !shared);
	expect_counter(ctx, "pages_renumbered", c.pr, !shared);
	expect_counter(ctx, "merge_renumber", c.mr, !shared);
	expect_counter(ctx, "refused_shared", sh, shared);
	expect_delta(ctx, "rehomed_unmerged", c.rh, 0);
	expect_data(ctx, 0, want, 2);
	verified(ctx);
	if (shared)
		release_child(&h, "3.3.1 shared: child");
	clear_window();
}

/*
 * The end of both cases below: pages [@first, @first + @n) made writable
 * merge with both features (layout @merged, one VMA renumbered with one
 * page, @vt VMAs with @pt pages transplanted, one merge_both) and stay
 * @apart otherwise; pages 0-8 hold tags 1-9.
 */
static void inplace_writable(const char *ctx, unsigned long first,
			     unsigned long n, const char *merged,
			     const char *apart, long vt, long pt)
{
	unsigned int want[9];
	struct mv_counters c;

	mv_read(&c);
	if (mprotect(pg(first), n * PG, PROT_READ | PROT_WRITE)) {
		ok(0, "%s: mprotect", ctx);
		return;
	}
	tags(want, 1, 9);
	expect_layout3(ctx, merged, apart, apart);
	expect_data(ctx, 0, want, 9);
	mv_expect(ctx, &c, 1, 1, vt, pt, 1);
	verified(ctx);
	clear_window();
}

/*
 * The in-place paths choose the cheaper side as a move does: a large
 * block moved read-only behind a one-page VMA of another mapping, then
 * made writable - the one-page VMA takes the block's numbering and
 * anon_vma, the block's pages are not touched.
 */
static void t_inplace_cheap_neighbour(void)
{
	const char *ctx = "mprotect, cheap neighbour";

	if (map_fill(0, 1, 1) || map_fill(20, 8, 2) ||
	    mprotect(pg(20), 8 * PG, PROT_READ) || move(20, 8, 8, 1, 0)) {
		ok(0, "%s: setup", ctx);
		return;
	}
	expect_layout(ctx, "0-1 1-9~", "0-1 1-9~");
	inplace_writable(ctx, 1, 8, "0-9~", "0-1 1-9~", 1, 1);
}

/*
 * A one-page block moved read-only into the gap between two VMAs of their
 * own mappings, then made writable: one mprotect() merges all three (the
 * block takes prev's numbering and anon_vma, next is transplanted).
 * Renumber alone: nothing (both neighbours need another anon_vma).
 */
static void t_inplace_gap(void)
{
	const char *ctx = "mprotect, gap";

	if (map_fill(0, 4, 1) || map_fill(5, 4, 6) || map_fill(20, 1, 5) ||
	    mprotect(pg(20), PG, PROT_READ) || move(20, 1, 1, 4, 0)) {
		ok(0, "%s: setup", ctx);
		return;
	}
	inplace_writable(ctx, 4, 1, "0-9", "0-4 4-5~ 5-9", 2, 5);
}

/*
 * A never-faulted range next to a moved VMA: mapped read-only after the
 * move, then made writable.  It costs nothing to rewrite: it takes the
 * moved VMA's numbering and adopts its anon_vma, no page is touched.
 * Then every page is written and read back.
 */
static void t_inplace_unfaulted(void)
{
	const char *ctx = "mprotect, unfaulted range";
	unsigned int want[4] = { 7, 8, 0, 0 };
	struct mv_counters c;
	char *p;

	if (map_fill(20, 2, 7) || move(20, 2, 2, 0, 0)) {
		ok(0, "%s: setup", ctx);
		return;
	}
	p = mmap(pg(2), 2 * PG, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != pg(2)) {
		ok(0, "%s: mmap", ctx);
		return;
	}
	mv_read(&c);
	if (mprotect(pg(2), 2 * PG, PROT_READ | PROT_WRITE)) {
		ok(0, "%s: mprotect", ctx);
		return;
	}
	expect_layout3(ctx, "0-4~", "0-2~ 2-4", "0-2~ 2-4");
	expect_counter_tp(ctx, "vmas_adopted", c.va, 1);
	expect_counter_tp(ctx, "merge_both", c.mb, 1);
	expect_counter_tp(ctx, "pages_renumbered", c.pr, 0);
	expect_delta(ctx, "rehomed_unmerged", c.rh, 0);
	expect_data(ctx, 0, want, 4);
	fill(pg(2), 9);
	fill(pg(3), 10);
	want[2] = 9;
	want[3] = 10;
	expect_data(ctx, 0, want, 4);
	verified(ctx);
	clear_window();
}

static int gap_child(void)
{
	return check(pg(0), 1) || check(pg(2), 2);
}

/*
 * thesis §3.3.3: two separately mapped blocks with a gap, shared with a
 * child; a new block moved into the gap merges with the predecessor only
 * (the successor has another anon_vma, and its pages are shared).
 */
static void t_thesis_333(void)
{
	static const unsigned int want[] = { 1, 3, 2 };
	struct holder h;

	if (map_fill(0, 1, 1) || map_fill(2, 1, 2) ||
	    hold_child(&h, gap_child) || map_fill(10, 1, 3)) {
		ok(0, "3.3.3: setup");
		return;
	}
	if (move(10, 1, 1, 1, 0)) {
		ok(0, "3.3.3: mremap");
		return;
	}
	expect_layout3("3.3.3", "0-2 2-3", "0-1 1-2~ 2-3", "0-1 1-2~ 2-3");
	expect_data("3.3.3", 0, want, 3);
	verified("3.3.3");
	release_child(&h, "3.3.3: the child still reads both blocks");
	clear_window();
}

/* THPs: two 2 MiB mappings, the second moved next to the first */
static void t_other_av_thp(void)
{
	const unsigned long n = HPG / PG;
	long kb;

	if (map_thp(0, n) || map_thp(3 * n, n)) {
		ok(0, "other anon_vma thp: mmap");
		return;
	}
	if (smaps_kb(pg(0), "AnonHugePages:") < 2048 ||
	    smaps_kb(pg(3 * n), "AnonHugePages:") < 2048) {
		skip("no THP here", "other anon_vma thp");
		clear_window();
		return;
	}
	if (move(3 * n, n, n, n, 0)) {
		ok(0, "other anon_vma thp: mremap");
		return;
	}
	expect_layout3("other anon_vma thp", "0-1024", "0-512 512-1024~",
		       "0-512 512-1024~");
	kb = smaps_kb(pg(0), "AnonHugePages:");
	ok(kb == (stock || renumber_only ? 2048 : 4096),
	   "other anon_vma thp: AnonHugePages %ld kB, nothing split", kb);
	expect_thp_data("other anon_vma thp", 0, 0, n);
	expect_thp_data("other anon_vma thp: moved", n, 0, n);
	verified("other anon_vma thp");
	clear_window();
}

/*
 * A small block moved behind a large VMA: the block (the source) is
 * renumbered and transplanted in place before its pages move, the large
 * VMA keeps its (linear) numbering.
 */
static void t_cheap_source_prev(void)
{
	unsigned int want[9];
	struct mv_counters c;

	mv_read(&c);
	if (map_fill(0, 8, 1) || map_fill(20, 1, 9) || move(20, 1, 1, 8, 0)) {
		ok(0, "cheap source, prev: setup");
		return;
	}
	tags(want, 1, 9);
	expect_layout3("cheap source, prev", "0-9", "0-8 8-9~", "0-8 8-9~");
	expect_data("cheap source, prev", 0, want, 9);
	mv_expect("cheap source, prev", &c, 1, 1, 1, 1, 1);
	verified("cheap source, prev");
	clear_window();
}

/*
 * A large block moved behind a one-page VMA: the neighbour is the cheaper
 * side; it takes the block's numbering and anon_vma, the block's pages
 * are not touched.
 */
static void t_cheap_neighbour_prev(void)
{
	unsigned int want[9];
	struct mv_counters c;

	mv_read(&c);
	if (map_fill(0, 1, 1) || map_fill(20, 8, 2) || move(20, 8, 8, 1, 0)) {
		ok(0, "cheap neighbour, prev: setup");
		return;
	}
	tags(want, 1, 9);
	expect_layout3("cheap neighbour, prev", "0-9~", "0-1 1-9~", "0-1 1-9~");
	expect_data("cheap neighbour, prev", 0, want, 9);
	mv_expect("cheap neighbour, prev", &c, 1, 1, 1, 1, 1);
	verified("cheap neighbour, prev");
	clear_window();
}

/* The same two cases with the neighbour after the destination. */
static void t_cheap_next(void)
{
	unsigned int want[9];
	struct mv_counters c;

	mv_read(&c);
	if (map_fill(1, 8, 2) || map_fill(20, 1, 1) || move(20, 1, 1, 0, 0)) {
		ok(0, "cheap source, next: setup");
		return;
	}
	tags(want, 1, 9);
	expect_layout3("cheap source, next", "0-9", "0-1~ 1-9", "0-1~ 1-9");
	expect_data("cheap source, next", 0, want, 9);
	mv_expect("cheap source, next", &c, 1, 1, 1, 1, 1);
	verified("cheap source, next");
	clear_window();

	mv_read(&c);
	if (map_fill(8, 1, 9) || map_fill(20, 8, 1) || move(20, 8, 8, 0, 0)) {
		ok(0, "cheap neighbour, next: setup");
		return;
	}
	expect_layout3("cheap neighbour, next", "0-9~", "0-8~ 8-9", "0-8~ 8-9");
	expect_data("cheap neighbour, next", 0, want, 9);
	mv_expect("cheap neighbour, next", &c, 1, 1, 1, 1, 1);
	verified("cheap neighbour, next");
	clear_window();
}

/*
 * Gap fill: a block moved into the hole between two VMAs of their own
 * anon_vmas merges with both.  Small block: it takes prev's numbering
 * (equal costs either way: prev wins), next only changes anon_vma.  Large
 * block: both neighbours take its numbering.
 */
static void t_gap_fill(void)
{
	unsigned int want[10];
	struct mv_counters c;

	mv_read(&c);
	if (map_fill(0, 4, 1) || map_fill(5, 4, 6) || map_fill(20, 1, 5) ||
	    move(20, 1, 1, 4, 0)) {
		ok(0, "gap fill, small: setup");
		return;
	}
	tags(want, 1, 9);
	expect_layout3("gap fill, small", "0-9", "0-4 4-5~ 5-9", "0-4 4-5~ 5-9");
	expect_data("gap fill, small", 0, want, 9);
	mv_expect("gap fill, small", &c, 1, 1, 2, 5, 1);
	verified("gap fill, small");
	clear_window();

	mv_read(&c);
	if (map_fill(0, 1, 1) || map_fill(9, 1, 10) || map_fill(20, 8, 2) ||
	    move(20, 8, 8, 1, 0)) {
		ok(0, "gap fill, large: setup");
		return;
	}
	tags(want, 1, 10);
	expect_layout3("gap fill, large", "0-10~", "0-1 1-9~ 9-10",
		       "0-1 1-9~ 9-10");
	expect_data("gap fill, large", 0, want, 10);
	mv_expect("gap fill, large", &c, 2, 2, 2, 2, 1);
	verified("gap fill, large");
	clear_window();
}

/*
 * A block moved where it merges with nothing: nothing is rewritten, its
 * page offset stays (the stock result) in every mode.
 */
static void t_no_merge(void)
{
	unsigned int want[64];
	struct mv_counters c;

	mv_read(&c);
	if (map_fill(0, 64, 1) || move(0, 64, 64, 200, 0)) {
		ok(0, "no merge: setup");
		return;
	}
	tags(want, 1, 64);
	expect_layout("no merge", "200-264~", "200-264~");
	expect_data("no merge", 200, want, 64);
	expect_delta("no merge", "pages_renumbered", c.pr, 0);
	expect_delta("no merge", "vmas_renumbered", c.vr, 0);
	expect_delta("no merge", "pages_transplanted", c.pt, 0);
	verified("no merge");
	clear_window();
}

/*
 * Part of a VMA moved behind a larger VMA: the source VMA is rewritten
 * whole (a VMA has one page offset), so the parts left behind carry the
 * new numbering too; all of them exclusive.
 */
/*
 * Part of a VMA moved next to another one: the moved part is split off
 * first (move_merge.c, vmamerge_move_isolate()), so only its page is
 * rewritten and the two parts left keep their linear numbering.
 */
static void t_partial(void)
{
	static const unsigned int left[] = { 1 }, right[] = { 3, 4 };
	unsigned int want[9];
	struct mv_counters c;

	mv_read(&c);
	if (map_fill(0, 4, 1) || map_fill(10, 8, 11) || move(1, 1, 1, 18, 0)) {
		ok(0, "partial: setup");
		return;
	}
	tags(want, 11, 8);
	want[8] = 2;
	expect_layout3("partial", "0-1 2-4 10-19", "0-1 2-4 10-18 18-19~",
		       "0-1 2-4 10-18 18-19~");
	expect_data("partial: moved", 10, want, 9);
	expect_data("partial: left", 0, left, 1);
	expect_data("partial: right", 2, right, 2);
	mv_expect("partial", &c, 1, 1, 1, 1, 1);
	verified("partial");
	clear_window();
}

static int partial_shared_child(void)
{
	unsigned long i;

	for (i = 0; i < 4; i++)
		if (check(pg(i), 1 + i))
			return 1;
	return 0;
}

/*
 * The page a process wrote after fork (its own now) moved out of
 * a VMA whose other pages it still shares with the child, next to another
 * VMA.  Only the moved part is rewritten: merged, nothing refused.  (When
 * the whole source VMA was rewritten, its shared pages refused it.)
 */
static void t_partial_shared(void)
{
	static const unsigned int left[] = { 1 }, right[] = { 3, 4 };
	long sh = counter("refused_shared");
	unsigned int want[9];
	struct mv_counters c;
	struct holder h;

	if (map_fill(0, 4, 1) || map_fill(10, 8, 11) ||
	    hold_child(&h, partial_shared_child)) {
		ok(0, "partial shared: setup");
		return;
	}
	fill(pg(1), 7);		/* COW: page 1 is the parent's own now */
	mv_read(&c);
	if (move(1, 1, 1, 18, 0)) {
		ok(0, "partial shared: mremap");
		release_child(&h, "partial shared: the child");
		return;
	}
	tags(want, 11, 8);
	want[8] = 7;
	expect_layout3("partial shared", "0-1 2-4 10-19",
		       "0-1 2-4 10-18 18-19~", "0-1 2-4 10-18 18-19~");
	expect_data("partial shared: moved", 10, want, 9);
	expect_data("partial shared: left", 0, left, 1);
	expect_data("partial shared: right", 2, right, 2);
	mv_expect("partial shared", &c, 1, 1, 1, 1, 1);
	expect_delta("partial shared", "refused_shared", sh, 0);
	verified("partial shared");
	release_child(&h, "partial shared: the child still reads the original pages");
	clear_window();
}

/*
 * MREMAP_DONTUNMAP next to another VMA: the moved page (its own VMA, the
 * cheaper side) joins the neighbour; the source stays, empty.
 */
static void t_dontunmap_other(void)
{
	static const unsigned int want[] = { 1, 2, 3 }, zero[] = { 0 };
	struct mv_counters c;

	mv_read(&c);
	if (map_fill(0, 2, 1) || map_fill(10, 1, 3)) {
		ok(0, "dontunmap, other: mmap");
		return;
	}
	if (move(10, 1, 1, 2, MREMAP_DONTUNMAP)) {
		skip("MREMAP_DONTUNMAP refused", "dontunmap, other");
		clear_window();
		return;
	}
	expect_layout3("dontunmap, other", "0-3 10-11", "0-2 2-3~ 10-11",
		       "0-2 2-3~ 10-11");
	expect_data("dontunmap, other", 0, want, 3);
	expect_data("dontunmap, other: the source", 10, zero, 1);
	mv_expect("dontunmap, other", &c, 1, 1, 1, 1, 1);
	verified("dontunmap, other");
	clear_window();
}

/*
 * CVE-2026-23077's shape: a faulted block moved next to a VMA that never
 * faulted.  The stock 6.1/6.12 merge refuses the pair; we merge it, and
 * the never-faulted neighbour (the cheaper side: no page) takes the
 * block's numbering and adopts its anon_vma before any PTE moves.  Then
 * every page is touched, the verifier runs, and all is unmapped.
 */
static void t_unfaulted_neighbour(int right)
{
	const char *ctx = right ? "unfaulted next" : "unfaulted prev";
	unsigned int want[6] = { 0, 0, 0, 0, 0, 0 };
	unsigned long first = right ? 0 : 4, i;
	struct mv_counters c;
	char *p;

	mv_read(&c);
	p = mmap(pg(right ? 2 : 0), 4 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != pg(right ? 2 : 0) || map_fill(20, 2, 7) ||
	    move(20, 2, 2, first, 0)) {
		ok(0, "%s: setup", ctx);
		return;
	}
	expect_layout3(ctx, "0-6~", right ? "0-2~ 2-6" : "0-4 4-6~",
		       right ? "0-2~ 2-6" : "0-4 4-6~");
	expect_counter_tp(ctx, "vmas_adopted", c.va, 1);
	expect_counter_tp(ctx, "merge_both", c.mb, 1);
	expect_counter_tp(ctx, "pages_renumbered", c.pr, 0);
	expect_delta(ctx, "rehomed_unmerged", c.rh, 0);
	verified(ctx);
	want[first] = 7;
	want[first + 1] = 8;
	expect_data(ctx, 0, want, 6);
	for (i = 0; i < 6; i++) {
		if (i != first && i != first + 1) {
			fill(pg(i), 30 + i);
			want[i] = 30 + i;
		}
	}
	expect_data(ctx, 0, want, 6);
	verified(ctx);
	/* the whole merged VMA goes: its anon_vma with the last page */
	clear_window();
	verified(ctx);
}

/*
 * The source is shared with a child (not the cheaper side here, the large
 * neighbour is): it cannot be rewritten, nothing changes, one refusal.
 */
static int big_child(void)
{
	return check(pg(20), 9);
}

static void t_source_refused(void)
{
	long sh = counter("refused_shared");
	struct mv_counters c;
	struct holder h;

	if (map_fill(0, 8, 1) || map_fill(20, 1, 9) ||
	    hold_child(&h, big_child)) {
		ok(0, "source refused: setup");
		return;
	}
	mv_read(&c);
	if (move(20, 1, 1, 8, 0)) {
		ok(0, "source refused: mremap");
		return;
	}
	expect_layout3("source refused", "0-8 8-9~", "0-8 8-9~", "0-8 8-9~");
	expect_counter_tp("source refused", "refused_shared", sh, 1);
	mv_expect("source refused", &c, 0, 0, 0, 0, 0);
	verified("source refused");
	release_child(&h, "source refused: the child still reads its page");
	clear_window();
}

/*
 * A rewrite refused at its last page: the collect walk has already written
 * the new index (and anon_vma) of the pages before it, and must write the
 * old ones back before it lets go (page_rewrite.c, vmamerge_rewrite_undo()).
 * The source (4 pages, the cheaper side) moves next to an 8-page VMA; the
 * parent wrote its first 3 pages after a fork, so only the last one is
 * still shared with the child: refused_shared, the stock layout, and rmap
 * must know every page where it was - its old anon_vma (@same_av 0: a
 * VMA of its own) or its old offset (@same_av 1: one anon_vma for both,
 * the source renumbered only).  Once the child is gone, the same move
 * merges - from the state the undo left.
 */
static int refused_late_child(void)
{
	unsigned long i;

	for (i = 0; i < 4; i++)
		if (check(pg(20 + i), 21 + i))
			return 1;
	return 0;
}

static void t_refused_late(int same_av)
{
	static const unsigned int moved[] = { 31, 32, 33, 24 };
	const char *ctx = same_av ? "refused late, one anon_vma" :
				    "refused late, two anon_vmas";
	long sh = counter("refused_shared");
	struct mv_counters c;
	struct holder h;
	int fail;

	if (same_av)	/* tags 1..24, then the hole 8-20 */
		fail = map_fill(0, 24, 1) || munmap(pg(8), 12 * PG);
	else
		fail = map_fill(0, 8, 1) || map_fill(20, 4, 21);
	if (fail || hold_child(&h, refused_late_child)) {
		ok(0, "%s: setup", ctx);
		return;
	}
	fill(pg(20), 31);	/* COW: pages 20-22 are the parent's own now */
	fill(pg(21), 32);
	fill(pg(22), 33);
	mv_read(&c);
	if (move(20, 4, 4, 8, 0)) {
		ok(0, "%s: mremap", ctx);
		release_child(&h, "refused late: the child");
		return;
	}
	expect_layout(ctx, "0-8 8-12~", "0-8 8-12~");
	if (same_av)
		expect_counter(ctx, "refused_shared", sh, 1);
	else
		expect_counter_tp(ctx, "refused_shared", sh, 1);
	mv_expect(ctx, &c, 0, 0, 0, 0, 0);
	expect_data(ctx, 8, moved, 4);
	verified(ctx);
	release_child(&h, "refused late: the child still reads the original pages");
	/* the last page is the parent's alone now: away and back merges */
	mv_read(&c);
	if (move(8, 4, 4, 20, 0) || move(20, 4, 4, 8, 0)) {
		ok(0, "%s, child gone: mremap", ctx);
		clear_window();
		return;
	}
	if (same_av) {
		expect_layout("refused late, child gone, one anon_vma",
			      "0-12", "0-8 8-12~");
		expect_counter("refused late, child gone, one anon_vma",
			       "vmas_renumbered", c.vr, 1);
	} else {
		expect_layout3("refused late, child gone, two anon_vmas",
			       "0-12", "0-8 8-12~", "0-8 8-12~");
		mv_expect("refused late, child gone, two anon_vmas", &c,
			  1, 4, 1, 4, 1);
	}
	expect_data("refused late, child gone", 8, moved, 4);
	verified("refused late, child gone");
	clear_window();
}

/*
 * The rewrite budget (module parameter rewrite_max_pages): a merge whose
 * cheaper side is larger than the budget is refused_too_large and keeps
 * the stock layout; the parameter refuses values out of range.
 */
#define BUDGET_PARAM "/sys/module/vmamerge/parameters/rewrite_max_pages"

static void t_budget(void)
{
	long tl = counter("refused_too_large");
	unsigned int want[10];
	struct mv_counters c;
	char old[32] = "";

	if (read_file(BUDGET_PARAM, old, sizeof(old)) <= 0) {
		skip("no module", "budget");
		return;
	}
	ok(write_file(BUDGET_PARAM, "0", 1) == -EINVAL &&
	   write_file(BUDGET_PARAM, "524289", 6) == -EINVAL,
	   "budget: rewrite_max_pages refuses 0 and 524289 with EINVAL");
	if (write_file(BUDGET_PARAM, "1", 1)) {
		ok(0, "budget: rewrite_max_pages=1");
		return;
	}
	mv_read(&c);
	if (map_fill(0, 8, 1) || map_fill(20, 2, 9) || move(20, 2, 2, 8, 0)) {
		ok(0, "budget: setup");
		write_file(BUDGET_PARAM, old, strlen(old));
		return;
	}
	write_file(BUDGET_PARAM, old, strlen(old));
	tags(want, 1, 10);
	expect_layout3("budget", "0-8 8-10~", "0-8 8-10~", "0-8 8-10~");
	expect_counter_tp("budget", "refused_too_large", tl, 1);
	mv_expect("budget", &c, 0, 0, 0, 0, 0);
	expect_data("budget", 0, want, 10);
	verified("budget");
	clear_window();
}

/*
 * A folio someone else holds locked is never rewritten ("The stale
 * migration entries" in docs/testing.md): migration and reclaim
 * hold it locked between their two rmap walks, and the first may have
 * skipped our PTE while it was momentarily empty and turned the folio's
 * other mappings into migration entries, which its mapcount does not
 * count.  test_lock_addr (module parameter, testing only) holds the
 * folio of the moved block's second page locked for test_lock_ms: the
 * move that would renumber the block is refused_busy after its retries
 * and leaves the stock layout, every page intact; once the lock is
 * released the same move - out again and back - merges.  Without the
 * check the locked folio was rewritten and the first move merged.
 */
#define LOCK_PARAM "/sys/module/vmamerge/parameters/test_lock_addr"

static int lock_released(void)
{
	char v[32];
	int i;

	for (i = 0; i < 200; i++) {
		if (read_file(LOCK_PARAM, v, sizeof(v)) > 0 &&
		    !strtoul(v, NULL, 0))
			return 1;
		usleep(50000);
	}
	return 0;
}

static void t_locked(void)
{
	static const unsigned int want[] = { 3, 4, 5, 6, 7, 8, 9, 10, 1, 2 };
	long busy = counter("refused_busy");
	char a[32];

	if (access(LOCK_PARAM, W_OK)) {
		skip("no module", "locked folio");
		return;
	}
	/* one anon_vma: the merge needs a renumbering only */
	if (map_fill(0, 10, 1)) {
		ok(0, "locked folio: setup");
		clear_window();
		return;
	}
	snprintf(a, sizeof(a), "%#lx", (unsigned long)pg(1));
	if (!ok(!write_file(LOCK_PARAM, a, strlen(a)),
		"locked folio: test_lock_addr holds page 1's folio")) {
		clear_window();
		return;
	}
	if (!ok(!move(0, 2, 2, 10, 0),
		"locked folio: pages 0-1 moved behind pages 2-9")) {
		clear_window();
		return;
	}
	expect_layout("locked folio", "2-10 10-12~", "2-10 10-12~");
	expect_delta("locked folio", "refused_busy", busy, stock ? 0 : 1);
	expect_data("locked folio", 2, want, 10);
	verified("locked folio");
	if (!ok(lock_released(), "locked folio: released within 10 s")) {
		clear_window();
		return;
	}
	if (move(10, 2, 2, 30, 0) || move(30, 2, 2, 10, 0)) {
		ok(0, "locked folio: released, moved out and back");
		clear_window();
		return;
	}
	expect_layout("locked folio released", "2-12", "2-10 10-12~");
	expect_data("locked folio released", 2, want, 10);
	verified("locked folio released");
	clear_window();
}

/*
 * A transplant holds the folio lock of every order-0 folio whose anon_vma
 * it changes, from its collect walk until its commit or undo: migration
 * pins the anon_vma it reads under that lock (folio_get_anon_vma()) for
 * its restore walk, so a mapping written - or written back - while
 * migration holds the lock leaves that walk on an anon_vma nothing pins,
 * which an munmap may free first (page_rewrite.c).  test_rewrite_hold_ms
 * (testing only) keeps the transplant asleep between its collect walk and
 * its commit or undo, every lock held; a child forked before the pages
 * exist reads their flags from /proc/kpageflags meanwhile and must see
 * every one locked; afterwards none is.  Twice: a transplant that commits
 * (four pages of their own anon_vma moved behind ten: one VMA), and one
 * refused late - test_lock_addr holds the last moved page, so the walk has
 * written the first three when it stops and writes them back
 * (refused_busy after its retries, the stock layout).
 */
#define HOLD_PARAM	"/sys/module/vmamerge/parameters/test_rewrite_hold_ms"
#define LOCK_MS_PARAM	"/sys/module/vmamerge/parameters/test_lock_ms"
#define KPF_LOCKED	(1ULL << 0)
#define HELD_PAGES	4

/* Are the pages of all @n pagemap entries locked (and present)? */
static int pages_locked(const unsigned long long *e, int n, int want)
{
	unsigned long long f;
	int i;

	for (i = 0; i < n; i++)
		if (kpageflags_of(e[i], &f) || !!(f & KPF_LOCKED) != want)
			return 0;
	return 1;
}

/* The child: @n pagemap entries from @in; 0 once all are locked (10 s). */
static int wait_locked(int in, int n)
{
	unsigned long long e[HELD_PAGES];
	int i;

	if (read(in, e, n * sizeof(e[0])) != (ssize_t)(n * sizeof(e[0])))
		return 2;
	for (i = 0; i < 2000; i++) {
		if (pages_locked(e, n, 1))
			return 0;
		usleep(5000);
	}
	return 1;
}

static int write_str(const char *path, const char *v)
{
	return write_file(path, v, strlen(v));
}

/* Fork the watcher of @n pages; its pipe's write end in *@wfd. */
static pid_t held_watcher(int n, int *wfd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		_exit(wait_locked(p[0], n));
	}
	close(p[0]);
	if (pid < 0)
		close(p[1]);
	*wfd = p[1];
	return pid;
}

static void t_held(int late)
{
	static const unsigned int want[] = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
	const char *ctx = late ? "held folios, refused late" : "held folios";
	int n = late ? HELD_PAGES - 1 : HELD_PAGES, wfd = -1, st = -1, i;
	long tv = counter("vmas_transplanted"), busy = counter("refused_busy");
	unsigned long long e[HELD_PAGES];
	char a[32];
	pid_t pid;

	if (stock || renumber_only || access(HOLD_PARAM, W_OK)) {
		skip("transplant off or no module", "%s", ctx);
		return;
	}
	/* before the pages exist: the child shares none of them */
	pid = held_watcher(n, &wfd);
	if (!ok(pid > 0, "%s: watcher forked", ctx))
		return;
	if (map_fill(0, 10, 1) || map_fill(20, HELD_PAGES, 11)) {
		ok(0, "%s: mmap", ctx);
		goto out;
	}
	for (i = 0; i < HELD_PAGES; i++)
		e[i] = pagemap_entry(pg(20 + i));
	snprintf(a, sizeof(a), "%#lx", (unsigned long)pg(20 + HELD_PAGES - 1));
	if (late && !ok(!write_str(LOCK_MS_PARAM, "5000") &&
			!write_file(LOCK_PARAM, a, strlen(a)),
			"%s: test_lock_addr holds the last page", ctx))
		goto out;
	if (!ok(!write_str(HOLD_PARAM, late ? "100" : "300") &&
		write(wfd, e, n * sizeof(e[0])) == (ssize_t)(n * sizeof(e[0])),
		"%s: hold set, watcher told", ctx))
		goto out;
	ok(!move(20, HELD_PAGES, HELD_PAGES, 10, 0),
	   "%s: pages 20-23 moved behind pages 0-9", ctx);
	write_str(HOLD_PARAM, "0");
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	   "%s: every page whose anon_vma the walk wrote was locked", ctx);
	pid = -1;
	if (late) {
		expect_layout(ctx, "0-10 10-14~", "0-10 10-14~");
		expect_delta(ctx, "refused_busy", busy, 1);
		ok(lock_released(), "%s: test_lock_addr released", ctx);
	} else {
		expect_layout(ctx, "0-14", "0-10 10-14~");
		expect_delta(ctx, "vmas_transplanted", tv, 1);
	}
	ok(pages_locked(e, HELD_PAGES, 0), "%s: no page left locked", ctx);
	expect_data(ctx, 0, want, 14);
	verified(ctx);
out:
	write_str(HOLD_PARAM, "0");
	if (late)
		write_str(LOCK_MS_PARAM, "2000");
	close(wfd);
	if (pid > 0)
		waitpid(pid, &st, 0);
	clear_window();
}

int main(int argc, char **argv)
{
	int quick = 0;
	char migrate[256];
	size_t l;

	if (mode_init(argc, argv, "t_renumber", 300, &stock, &renumber_only,
		      &quick, &vfd))
		return 2;
	W = aligned_window(WIN_PAGES * PG);
	if (!W)
		return ok(0, "window"), tap_exit();

	snprintf(migrate, sizeof(migrate), "%s", argv[0]);
	l = strlen(migrate);
	while (l && migrate[l - 1] != '/')
		l--;
	snprintf(migrate + l, sizeof(migrate) - l, "t_migrate");

	t_reverse();
	if (quick) {
		t_other_av(0);
		return tap_exit();
	}
	t_back();
	t_dontunmap();
	t_grow();
	t_swap();
	t_shared();
	t_partly_shared();
	t_thp_aligned();
	t_thp_misaligned();
	t_ksm();
	t_ksm_neighbour();
	t_ksm_mremap_migrate();
	t_fork_after();
	t_other_av(0);
	t_other_av(1);
	t_spacing();
	t_other_av_target_forked();
	t_other_av_moved_forked();
	t_other_av_thp();
	t_thesis_312(0);
	t_thesis_312(1);
	t_thesis_331(0);
	t_thesis_331(1);
	t_inplace_cheap_neighbour();
	t_inplace_gap();
	t_inplace_unfaulted();
	t_thesis_333();
	t_cheap_source_prev();
	t_cheap_neighbour_prev();
	t_cheap_next();
	t_gap_fill();
	t_no_merge();
	t_partial();
	t_partial_shared();
	t_dontunmap_other();
	t_budget();
	t_locked();
	t_held(0);
	t_held(1);
	t_unfaulted_neighbour(0);
	t_unfaulted_neighbour(1);
	t_source_refused();
	t_refused_late(0);
	t_refused_late(1);
	t_migrating(migrate);
	return tap_exit();
}
