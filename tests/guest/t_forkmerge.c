// SPDX-License-Identifier: GPL-2.0
/*
 * Forked merges: upstream's forked layouts, merged, and their rmap
 * attacked.
 *
 * The mm selftest tools/testing/selftests/mm/merge.c asserts that some
 * VMAs of a forked process stay apart: a never-faulted VMA next to one
 * whose anon_vma chain has several entries (the process forked).  The
 * stock kernel refuses that merge only to keep anon_vma trees short
 * (is_mergeable_anon_vma()'s list_is_singular()).  With the module (mode
 * always, opted in) they merge: the never-faulted VMA is given the
 * faulted one's anon_vma and a chain entry for each of its anon_vmas
 * (anon_vma_clone(), counted in merge_adopt), or the faulted VMA grows
 * over the never-faulted range.  This test is the proof that such a merge
 * is correct: it builds upstream's exact layouts and then attacks the
 * rmap of the merged VMA.
 *
 * The cases, each in a fresh process that faults memory and forks a
 * child, which - its parent alive and waiting - builds the layout:
 * merge.forked_target_vma and merge.forked_source_vma (the child writes
 * every page first; and a variant of each where it leaves page 0
 * COW-shared), and merge_with_fork's variant forked of
 * mremap_faulted_to_unfaulted_prev, _next, _prev_unfaulted_next and
 * _prev_faulted_next (page 0 of the moved VMA stays COW-shared, moved
 * with MREMAP_DONTUNMAP next to a never-faulted VMA).  Each one:
 *  1. the layout of upstream's 30-page carveout from /proc/self/maps,
 *     exact: merged with the module (6.12 keeps forked_target_vma apart:
 *     its post-mmap merge is not offered), apart with -s and -r; the
 *     counters that moved as a "#" line, and exactly merge_adopt+1 and
 *     vmas_adopted+N (the never-faulted VMAs that took the anon_vma) where
 *     merged, none of the module's merge counters where apart;
 *  2. every page byte-exact in both processes, the rmap verifier clean in
 *     both, after every step below;
 *  3. a page written into the formerly never-faulted range, and page 0
 *     migrated to the other NUMA node by the child (MPOL_MF_MOVE_ALL) and
 *     back by the parent: a COW-shared page moves in both mappings or not
 *     at all, so both must then see it on the node they asked for, as one
 *     frame;
 *  4. memory.reclaim of the memory cgroup both processes are in until
 *     pagemap shows page 0 swapped out in both (MADV_PAGEOUT skips a page
 *     two PTEs map): a mapping the rmap cannot reach keeps it in memory,
 *     with only the other PTE swapped - a failure; never swapped: a skip;
 *     then both read it back, one after the other;
 *  5. each case twice, one exit order each: the child exits first, the
 *     parent re-reads, migrates and verifies; or the parent exits first
 *     (the child is reparented to this process, a subreaper), and the
 *     child re-reads, migrates page 0 again, verifies, unmaps the first
 *     page of the merged range and verifies again.
 * Without the module the same steps run on the stock layouts (-s), which
 * proves the test itself.
 *
 * With -c a second thread of the child faults in and migrates every page of
 * the carveout, page after page, while the child builds and checks the
 * layout and the parent checks its copy (on two CPUs: really at once),
 * until the explicit migration step.
 *
 * usage: t_forkmerge [-c] [-o] [-r | -s]
 *   -c  the churn thread above (first of the options)
 *   -o  opt this process in first (the processes of every case inherit it)
 *   -r  renumber on, transplant off: apart, as stock (adoption is part of
 *       the transplant feature)
 *   -s  the stock behaviour (features off, not opted in, or no module)
 */
#include "tap.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#define PG		4096UL
#define WIN_PAGES	512UL		/* the 2 MiB window */
#define CARVE		30UL		/* upstream's PROT_NONE carveout */
#define FAR		20UL		/* where upstream moves a VMA out of the way */

#ifndef MREMAP_FIXED
#define MREMAP_FIXED	2
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
#define MPOL_MF_MOVE_ALL (1 << 2)
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define RW		(PROT_READ | PROT_WRITE)
#define RWX		(PROT_READ | PROT_WRITE | PROT_EXEC)

#define MEMCG	"t_forkmerge"	/* our memory cgroup (memcg_enter()) */

/* tags: the parent's page 0; the child's own copies; pages written later */
#define PTAG		1
#define CTAG		11
#define FTAG		21

static int stock;		/* -s */
static int renumber_only;	/* -r */
static int is61;
static int nostats;
static int two_nodes;
static int churn_on;		/* -c */
static int cg_ok;
static int vfd = -1;
static char *W;

static char *pg(unsigned long i)
{
	return W + i * PG;
}

/* the exit orders */
enum order {
	CHILD_FIRST,
	PARENT_FIRST,
};

static const char *const order_names[] = {
	"child exits first", "parent exits first",
};

struct fm_run;

/* One of upstream's forked layouts. */
struct fm_case {
	const char *name;
	/* the child's part, after the fork: upstream's steps */
	void (*build)(struct fm_run *r);
	unsigned long first, n;	/* the parent's VMA; page 0 is @first */
	int mflags;		/* its extra mmap flags */
	/* the child writes none of its pages (0), all but page 0 (1), all (2) */
	int written;
	unsigned long lo, hi;	/* the range the merge covers */
	int remnant;		/* MREMAP_DONTUNMAP left pages 20-22 mapped */
	unsigned long fresh[2];	/* never-faulted pages written after it (0: none) */
	int apart612;		/* 6.12 keeps it apart with the module too */
	int adopted;		/* never-faulted VMAs given the anon_vma */
	const char *apart, *merged;	/* layouts of the carveout */
};

/* One process's side of one case. */
struct fm_run {
	const struct fm_case *k;
	enum order order;
	int merged;		/* the layout expected merged */
	int shared;		/* page 0 is still COW-shared */
	int rfd, wfd;		/* from and to the other process */
	int want[CARVE];	/* per page: -1 not read, 0 zero, else its tag */
	char ctx[160];
};

/* ---- helpers ---- */

/* The TAP context: the case, the exit order, the process */
static void set_ctx(struct fm_run *r, const char *who)
{
	snprintf(r->ctx, sizeof(r->ctx), "%s, %s [%s]", r->k->name,
		 order_names[r->order], who);
}

static int map_at(unsigned long page, unsigned long n, int prot, int flags)
{
	return mmap(pg(page), n * PG, prot,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | flags,
		    -1, 0) == pg(page) ? 0 : -1;
}

static int move(unsigned long from, unsigned long n, unsigned long to,
		int flags)
{
	return mremap(pg(from), n * PG, n * PG,
		      MREMAP_MAYMOVE | MREMAP_FIXED | flags,
		      pg(to)) == pg(to) ? 0 : -1;
}

static void verified(struct fm_run *r, const char *step)
{
	char ctx[240];

	snprintf(ctx, sizeof(ctx), "%s: %s", r->ctx, step);
	if (vm_verify_self_ok(ctx))
		ok(1, "%s: rmap verifier clean", ctx);
}

/* Every page of @r->want byte-exact: one TAP line. */
static int expect_data(struct fm_run *r, const char *step)
{
	unsigned long i, off, n = 0;

	for (i = 0; i < CARVE; i++) {
		if (r->want[i] < 0)
			continue;
		if (page_check(pg(i), r->want[i], &off)) {
			ok(0, "%s: %s: page %lu byte-exact", r->ctx, step, i);
			diag("byte %lu is %#x, want tag %d", off,
			     (unsigned char)pg(i)[off], r->want[i]);
			return 0;
		}
		n++;
	}
	return ok(1, "%s: %s: %lu pages byte-exact", r->ctx, step, n);
}

static void expect_layout(struct fm_run *r, const char *step, const char *want)
{
	char ctx[240];

	snprintf(ctx, sizeof(ctx), "%s: %s", r->ctx, step);
	expect_window_layout(ctx, vfd, W, CARVE, want);
}

/* ---- the two processes talk through a pipe each ---- */

struct msg {
	char op;
	int node;
	unsigned long long pm;	/* a pagemap entry */
};

static void say(struct fm_run *r, char op, int node, unsigned long long pm)
{
	struct msg m = { .op = op, .node = node, .pm = pm };

	if (write(r->wfd, &m, sizeof(m)) != sizeof(m))
		ok(0, "%s: message '%c' to the other process", r->ctx, op);
}

/* Wait for a message @op into *@m (may be NULL); 0 on EOF or another one. */
static int hear(struct fm_run *r, char op, struct msg *m)
{
	struct msg mm;
	ssize_t n;

	do
		n = read(r->rfd, &mm, sizeof(mm));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(mm) || mm.op != op) {
		ok(0, "%s: message '%c' from the other process (%s)", r->ctx,
		   op, n == sizeof(mm) ? "another one" : "gone");
		return 0;
	}
	if (m)
		*m = mm;
	return 1;
}

/* Until the other process is gone: its files close after its mm. */
static void hear_eof(struct fm_run *r)
{
	struct msg m;
	ssize_t n;

	do
		n = read(r->rfd, &m, sizeof(m));
	while (n > 0 || (n < 0 && errno == EINTR));
}

/* ---- counters (global, from debugfs: this test runs alone) ---- */

static const char *const cnames[] = {
	"merge_adopt", "vmas_adopted", "merge_expand", "merge_renumber",
	"vmas_renumbered", "merge_transplant", "vmas_transplanted",
	"merge_both", "refused_shared", "refused_family",
};
#define NR_C	(sizeof(cnames) / sizeof(cnames[0]))

/*
 * The counters that moved since @before as a "#" line; merged, a merge
 * that gave @r->k->adopted never-faulted VMAs the anon_vma and chain
 * (merge_adopt+1 vmas_adopted+N) and nothing else of cnames; apart, none.
 */
static void counters_after(struct fm_run *r, const long *before)
{
	char got[512] = "", want[64] = "";
	size_t n = 0;
	long now[NR_C];
	unsigned int i;

	if (nostats)
		return;
	stats_snap(cnames, NR_C, now);
	for (i = 0; i < NR_C; i++)
		if (now[i] != before[i])
			n += snprintf(got + n, sizeof(got) - n, " %s+%ld",
				      cnames[i], now[i] - before[i]);
	diag("%s: counters%s", r->ctx, n ? got : " unchanged");
	if (r->merged)
		snprintf(want, sizeof(want), "merge_adopt+1 vmas_adopted+%d",
			 r->k->adopted);
	expect_counter_deltas(r->ctx, cnames, NR_C, before, want);
}

/* ---- migration: move_pages(2), no libnuma ---- */

static long sys_move_pages(unsigned long n, void **pages, const int *nodes,
			   int *status, int flags)
{
	return syscall(SYS_move_pages, 0, n, pages, nodes, status, flags);
}

/* The node of the page at @p, or -errno. */
static int page_node(void *p)
{
	int st = -ENOENT;

	if (sys_move_pages(1, &p, NULL, &st, 0))
		return -errno;
	return st;
}

/*
 * Migrate page 0 of the faulted VMA and, @fresh, the fresh pages to the
 * node page 0 is not on (MPOL_MF_MOVE_ALL: a COW-shared page too).  A
 * page the rmap walk cannot unmap everywhere stays, with an error in its
 * status.  TAP lines; returns the node, or -1.
 */
static int migrate(struct fm_run *r, const char *step, int fresh)
{
	void *pages[3] = { pg(r->k->first) };
	int nodes[3], status[3] = { -1, -1, -1 }, i, n = 1, from;
	long ret;

	for (i = 0; fresh && i < 2 && r->k->fresh[i]; i++)
		pages[n++] = pg(r->k->fresh[i]);
	from = page_node(pages[0]);
	if (!ok(from == 0 || from == 1, "%s: %s: page %lu is on node %d",
		r->ctx, step, r->k->first, from))
		return -1;
	for (i = 0; i < n; i++)
		nodes[i] = !from;
	ret = sys_move_pages(n, pages, nodes, status, MPOL_MF_MOVE_ALL);
	for (i = 0; i < n && !ret; i++)
		if (status[i] != !from)
			ret = -1;
	if (!ok(!ret, "%s: %s: %d page(s) migrated to node %d", r->ctx, step,
		n, !from)) {
		diag("move_pages: %ld (%s), status %d %d %d", ret,
		     ret < 0 ? strerror(errno) : "-", status[0],
		     n > 1 ? status[1] : 0, n > 2 ? status[2] : 0);
		return -1;
	}
	return !from;
}

/* ---- memory.reclaim in a memory cgroup of our own ---- */

static int swapped(const void *p)
{
	return (pagemap_entry(p) & PM_SWAP) != 0;
}

/* the child's pages reclaim must get out: page 0 and the fresh ones */
static int child_swapped(struct fm_run *r)
{
	int i, all = swapped(pg(r->k->first));

	for (i = 0; i < 2 && r->k->fresh[i]; i++)
		all &= swapped(pg(r->k->fresh[i]));
	return all;
}

/*
 * The child drives: memory.reclaim, then both look at their own
 * pagemap, up to ten times.  Page 0 swapped out in one process only is a
 * mapping that reclaim's rmap walk did not reach: a failure.
 */
static void child_reclaim(struct fm_run *r)
{
	int i, mine = 0, theirs = 0, p0 = 0;
	struct msg m;

	if (!cg_ok) {
		say(r, 'N', 0, 0);
		return;
	}
	for (i = 0; i < 10; i++) {
		memcg_reclaim(MEMCG, "16M");
		mine = child_swapped(r);
		p0 = swapped(pg(r->k->first));
		say(r, 'q', 0, 0);
		if (!hear(r, 'a', &m))
			_exit(tap_fails + 1);
		theirs = (m.pm & PM_SWAP) != 0;
		if (mine && theirs)
			break;
	}
	diag("%s: %d reclaim(s): child's pages %s, page 0 %s in the child, %s in the parent",
	     r->ctx, i + (i < 10), mine ? "out" : "not all out",
	     p0 ? "out" : "in", theirs ? "out" : "in");
	if (r->shared && p0 != theirs)
		ok(0, "%s: the COW-shared page swapped out from both mappings",
		   r->ctx);
	else if (!mine || !theirs)
		skip("memory.reclaim did not get them out",
		     "%s: pages swapped out in both processes", r->ctx);
	else
		ok(1, "%s: page 0%s swapped out in both processes (pagemap)",
		   r->ctx, r->shared ? " (COW-shared)" : " and the fresh pages");
	say(r, mine && theirs ? 'S' : 'N', 0, 0);
}

/* The parent answers the child's queries until it has decided. */
static int parent_reclaim(struct fm_run *r)
{
	struct msg m;
	ssize_t n;

	for (;;) {
		do
			n = read(r->rfd, &m, sizeof(m));
		while (n < 0 && errno == EINTR);
		if (n != sizeof(m))
			return ok(0, "%s: reclaim: the child is gone", r->ctx);
		if (m.op != 'q')
			return m.op == 'S' || m.op == 'N' ||
			       ok(0, "%s: reclaim: message '%c'", r->ctx, m.op);
		say(r, 'a', 0, pagemap_entry(pg(r->k->first)));
	}
}

/* ---- the cases: the child's part, upstream's steps ---- */

/* the child's own copies of the inherited pages (un-COW) */
static void write_pages(struct fm_run *r)
{
	unsigned long i;

	for (i = r->k->written == 2 ? 0 : 1; i < r->k->n; i++)
		page_fill(pg(r->k->first + i), CTAG + i);
}

/*
 * merge.forked_target_vma: ptr (pages 1-5, faulted, forked) and ptr2
 * (6-10) mapped next to it in the child, never faulted.  Upstream
 * asserts they stay apart; 6.1's post-mmap merge offers them to the
 * module, which gives ptr2 ptr's anon_vma and chain; 6.12 offers no merge
 * after mmap: apart there too.  Proves (6.1) that the merged VMA keeps
 * every anon_vma of ptr's chain: the rmap reaches ptr's pages - in the
 * shared variant page 0, the parent's - and the page written into ptr2's
 * range.
 */
static void build_target(struct fm_run *r)
{
	write_pages(r);
	ok(!map_at(6, 5, RW, 0), "%s: mmap ptr2 (pages 6-10)", r->ctx);
}

/*
 * merge.forked_source_vma: ptr2 (6-10) mapped RWX next to the forked ptr
 * (1-5, RW): apart in every mode; then ptr mprotected RWX, the source of
 * the merge into never-faulted ptr2.  Upstream asserts apart; the module
 * merges on both kernels.  Proves the same for a merge that mprotect
 * offers, with the shared page in the VMA whose protection changed.
 */
static void build_source(struct fm_run *r)
{
	write_pages(r);
	ok(!map_at(6, 5, RWX, MAP_NORESERVE), "%s: mmap ptr2 RWX (pages 6-10)",
	   r->ctx);
	expect_layout(r, "ptr2 mapped RWX", "0-1 1-6 6-11 11-30");
	ok(!mprotect(pg(1), 5 * PG, RWX), "%s: mprotect ptr RWX", r->ctx);
}

/*
 * merge_with_fork.mremap_faulted_to_unfaulted_prev (forked): A (4-6,
 * page 4 COW-shared) moved out of the way to 20-22, B (1-3) mapped, A
 * moved back with MREMAP_DONTUNMAP behind never-faulted B: merged, B
 * adopts A's anon_vma and chain.  Proves that the VMA a move merges into
 * carries the moved VMA's whole chain: the parent's anon_vma, which page
 * 4 belongs to, reaches it (upstream's "incorrect anon_vma propagation").
 */
static void build_prev(struct fm_run *r)
{
	ok(!move(4, 3, FAR, 0), "%s: mremap A to 20-22", r->ctx);
	ok(!map_at(1, 3, RW, 0), "%s: mmap B (pages 1-3)", r->ctx);
	ok(!move(FAR, 3, 4, MREMAP_DONTUNMAP),
	   "%s: mremap A back to 4-6, MREMAP_DONTUNMAP", r->ctx);
}

/*
 * merge_with_fork.mremap_faulted_to_unfaulted_next (forked): A (1-3,
 * page 1 COW-shared) moved to 20-22, B (4-6) mapped, A moved back in
 * front of never-faulted B with MREMAP_DONTUNMAP: merged, B adopts.
 * Proves the same with the moved VMA in front; here the first page of the
 * merged range is the shared one, so the parent-exits-first order unmaps
 * it - the last mapping of a page of the parent's anon_vma.
 */
static void build_next(struct fm_run *r)
{
	ok(!move(1, 3, FAR, 0), "%s: mremap A to 20-22", r->ctx);
	ok(!map_at(4, 3, RW, 0), "%s: mmap B (pages 4-6)", r->ctx);
	ok(!move(FAR, 3, 1, MREMAP_DONTUNMAP),
	   "%s: mremap A back to 1-3, MREMAP_DONTUNMAP", r->ctx);
}

/*
 * merge_with_fork.mremap_faulted_to_unfaulted_prev_unfaulted_next
 * (forked): B (4-6, page 4 COW-shared) moved to 20-22, A (1-3) and C
 * (7-9) mapped, B moved back between them with MREMAP_DONTUNMAP: all
 * three merged, A and C adopt B's anon_vma and chain.  Proves that two
 * adoptions in one merge leave one VMA whose chain still reaches page 4.
 */
static void build_prev_next(struct fm_run *r)
{
	ok(!move(4, 3, FAR, 0), "%s: mremap B to 20-22", r->ctx);
	ok(!map_at(1, 3, RW, 0), "%s: mmap A (pages 1-3)", r->ctx);
	ok(!map_at(7, 3, RW, 0), "%s: mmap C (pages 7-9)", r->ctx);
	ok(!move(FAR, 3, 4, MREMAP_DONTUNMAP),
	   "%s: mremap B back to 4-6, MREMAP_DONTUNMAP", r->ctx);
}

/*
 * merge_with_fork.mremap_faulted_to_unfaulted_prev_faulted_next (forked):
 * BC (4-9, page 4 COW-shared) split by moving B (4-6) to 20-22, A (1-3)
 * mapped, B moved back between A and C with MREMAP_DONTUNMAP: B and C
 * merge in every mode (one anon_vma), A joins them with the module.
 * Proves that adoption by a VMA in front of a three-way merge keeps the
 * chain that B and C share.
 */
static void build_prev_faulted_next(struct fm_run *r)
{
	ok(!move(4, 3, FAR, 0), "%s: mremap B to 20-22 (splits BC)", r->ctx);
	ok(!map_at(1, 3, RW, 0), "%s: mmap A (pages 1-3)", r->ctx);
	ok(!move(FAR, 3, 4, MREMAP_DONTUNMAP),
	   "%s: mremap B back to 4-6, MREMAP_DONTUNMAP", r->ctx);
}

/* the carveout's tail once MREMAP_DONTUNMAP left pages 20-22 (linear again) */
#define REMNANT	" 20-23 23-30"

static const struct fm_case cases[] = {
	{
		.name = "forked_target_vma", .build = build_target,
		.first = 1, .n = 5, .written = 2, .lo = 1, .hi = 11,
		.fresh = { 6 }, .apart612 = 1, .adopted = 1,
		.apart = "0-1 1-6 6-11 11-30", .merged = "0-1 1-11 11-30",
	}, {
		.name = "forked_target_vma, page 0 shared", .build = build_target,
		.first = 1, .n = 5, .written = 1, .lo = 1, .hi = 11,
		.fresh = { 6 }, .apart612 = 1, .adopted = 1,
		.apart = "0-1 1-6 6-11 11-30", .merged = "0-1 1-11 11-30",
	}, {
		.name = "forked_source_vma", .build = build_source,
		.first = 1, .n = 5, .mflags = MAP_NORESERVE, .written = 2,
		.lo = 1, .hi = 11, .fresh = { 6 }, .adopted = 1,
		.apart = "0-1 1-6 6-11 11-30", .merged = "0-1 1-11 11-30",
	}, {
		.name = "forked_source_vma, page 0 shared", .build = build_source,
		.first = 1, .n = 5, .mflags = MAP_NORESERVE, .written = 1,
		.lo = 1, .hi = 11, .fresh = { 6 }, .adopted = 1,
		.apart = "0-1 1-6 6-11 11-30", .merged = "0-1 1-11 11-30",
	}, {
		.name = "mremap_faulted_to_unfaulted_prev", .build = build_prev,
		.first = 4, .n = 3, .lo = 1, .hi = 7, .remnant = 1,
		.fresh = { 3 }, .adopted = 1,
		.apart = "0-1 1-4 4-7 7-20" REMNANT,
		.merged = "0-1 1-7 7-20" REMNANT,
	}, {
		.name = "mremap_faulted_to_unfaulted_next", .build = build_next,
		.first = 1, .n = 3, .lo = 1, .hi = 7, .remnant = 1,
		.fresh = { 4 }, .adopted = 1,
		.apart = "0-1 1-4 4-7 7-20" REMNANT,
		.merged = "0-1 1-7 7-20" REMNANT,
	}, {
		.name = "mremap_faulted_to_unfaulted_prev_unfaulted_next",
		.build = build_prev_next,
		.first = 4, .n = 3, .lo = 1, .hi = 10, .remnant = 1,
		.fresh = { 3, 7 }, .adopted = 2,
		.apart = "0-1 1-4 4-7 7-10 10-20" REMNANT,
		.merged = "0-1 1-10 10-20" REMNANT,
	}, {
		.name = "mremap_faulted_to_unfaulted_prev_faulted_next",
		.build = build_prev_faulted_next,
		.first = 4, .n = 6, .lo = 1, .hi = 10, .remnant = 1,
		.fresh = { 3 }, .adopted = 1,
		.apart = "0-1 1-4 4-10 10-20" REMNANT,
		.merged = "0-1 1-10 10-20" REMNANT,
	},
};
#define NR_CASES	(sizeof(cases) / sizeof(cases[0]))

/* ---- -c: another CPU faulting and migrating the same memory ---- */

struct churn {
	pthread_t thread;
	volatile int stop, started;
	volatile unsigned long rounds;
	int running;
};

/*
 * Until told to stop, every page of the carveout in turn: faulted in for
 * reading by MADV_POPULATE_READ (an error where the page is not readable
 * - no signal; not process_vm_readv(), whose read-only pin unshares a
 * COW-shared page on 6.1) and migrated to the other node
 * (MPOL_MF_MOVE_ALL: a COW-shared page moves in both processes).
 * Failures are the point (pages unmapped, never faulted, busy) and
 * ignored.
 */
static void *churn_fn(void *arg)
{
	struct churn *c = arg;
	unsigned long i;
	int node, st;
	void *p;

	c->started = 1;
	while (!c->stop) {
		for (i = 0; i < CARVE && !c->stop; i++) {
			p = pg(i);
			madvise(p, PG, MADV_POPULATE_READ);
			node = (int)((c->rounds + i) & 1);
			if (two_nodes)
				sys_move_pages(1, &p, &node, &st,
					       MPOL_MF_MOVE_ALL);
		}
		c->rounds++;
	}
	return NULL;
}

static void churn_start(struct fm_run *r, struct churn *c)
{
	c->stop = 0;
	c->rounds = 0;
	c->started = 0;
	c->running = churn_on &&
		     !pthread_create(&c->thread, NULL, churn_fn, c);
	if (churn_on && !c->running)
		ok(0, "%s: start the churn thread", r->ctx);
	/* the layout is built while it runs, not before it starts */
	while (c->running && !c->started)
		sched_yield();
}

static void churn_stop(struct fm_run *r, struct churn *c)
{
	if (!c->running)
		return;
	/* two rounds at least: the parent's checks ran beside them */
	while (c->rounds < 2)
		sched_yield();
	c->stop = 1;
	pthread_join(c->thread, NULL);
	c->running = 0;
	diag("%s: the churn thread went %lu times over the carveout",
	     r->ctx, c->rounds);
}

/* ---- the child ---- */

/* What the child's pages hold once the layout is built. */
static void child_want(struct fm_run *r)
{
	const struct fm_case *k = r->k;
	unsigned long i;

	for (i = 0; i < CARVE; i++)
		r->want[i] = (i >= k->lo && i < k->hi) ||
			     (k->remnant && i >= FAR && i < FAR + 3) ? 0 : -1;
	for (i = 1; k->written && i < k->n; i++)
		r->want[k->first + i] = CTAG + i;
	r->want[k->first] = r->shared ? PTAG : CTAG;
}

/* The layout built: asserted, counted, read, verified. */
static void child_built(struct fm_run *r, const long *before)
{
	const struct fm_case *k = r->k;
	int i;

	expect_layout(r, "built", r->merged ? k->merged : k->apart);
	counters_after(r, before);
	child_want(r);
	expect_data(r, "built");
	verified(r, "built");
	for (i = 0; i < 2 && k->fresh[i]; i++) {
		page_fill(pg(k->fresh[i]), FTAG + i);
		r->want[k->fresh[i]] = FTAG + i;
	}
	expect_layout(r, "fresh pages written", r->merged ? k->merged : k->apart);
	expect_data(r, "fresh pages written");
	verified(r, "fresh pages written");
}

/*
 * Page 0 and the fresh pages to the other node, by the child; the parent
 * moves page 0 back.  A COW-shared page is one frame in both.
 */
static void child_migrate(struct fm_run *r)
{
	unsigned long long pm;
	struct msg m;
	int node;

	node = migrate(r, "child migrates", 1);
	pm = pagemap_entry(pg(r->k->first));
	expect_data(r, "migrated by the child");
	verified(r, "migrated by the child");
	say(r, 'M', node, pm);
	if (!hear(r, 'M', &m))
		_exit(tap_fails + 1);
	if (r->shared && node >= 0 && m.node >= 0) {
		ok(page_node(pg(r->k->first)) == m.node,
		   "%s: the parent's migration moved the child's mapping (node %d)",
		   r->ctx, m.node);
		pm = pagemap_entry(pg(r->k->first));
		ok(PM_PFN(pm) == PM_PFN(m.pm),
		   "%s: migrated back: one frame in both (pfn %#llx, %#llx)",
		   r->ctx, PM_PFN(pm), PM_PFN(m.pm));
	}
	expect_data(r, "migrated back by the parent");
	verified(r, "migrated back by the parent");
}

/* The read-back after reclaim: first the child or the parent. */
static void readback(struct fm_run *r, const char *who)
{
	char step[80];

	snprintf(step, sizeof(step), "read back after reclaim (%s)", who);
	expect_data(r, step);
	verified(r, step);
}

/* "0-1 1-..." with the first page of the merged range unmapped */
static void layout_unmapped(const char *lay, char *buf, size_t len)
{
	snprintf(buf, len, "0-1 2-%s", lay + strlen("0-1 1-"));
}

/*
 * The parent is gone: page 0 is the child's alone, its anon_vma still
 * the parent's.  Re-read, migrate it again, unmap the first page of the
 * merged range.
 */
static void child_alone(struct fm_run *r)
{
	const struct fm_case *k = r->k;
	char lay[160];

	hear_eof(r);
	expect_data(r, "the parent exited");
	verified(r, "the parent exited");
	if (two_nodes) {
		migrate(r, "migrated alone", 1);
		expect_data(r, "migrated alone");
		verified(r, "migrated alone");
	}
	ok(!munmap(pg(k->lo), PG), "%s: munmap page %lu", r->ctx, k->lo);
	r->want[k->lo] = -1;
	layout_unmapped(r->merged ? k->merged : k->apart, lay, sizeof(lay));
	expect_layout(r, "first page unmapped", lay);
	expect_data(r, "first page unmapped");
	verified(r, "first page unmapped");
}

static void child_proc(struct fm_run *r)
{
	struct churn churn;
	long before[NR_C];

	tap_fails = 0;
	alarm(120);
	set_ctx(r, "child");
	stats_snap(cnames, NR_C, before);
	churn_start(r, &churn);
	r->k->build(r);
	child_built(r, before);
	say(r, 'b', 0, 0);
	if (!hear(r, 'g', NULL))
		_exit(tap_fails + 1);
	churn_stop(r, &churn);
	if (two_nodes)
		child_migrate(r);
	child_reclaim(r);
	if (r->order == CHILD_FIRST) {
		readback(r, "the child first");
		say(r, 'd', 0, 0);
		hear(r, 'e', NULL);
	} else {
		if (hear(r, 'd', NULL))
			readback(r, "the parent first");
		say(r, 'e', 0, 0);
		child_alone(r);
	}
	_exit(tap_fails > 100 ? 100 : tap_fails);
}

/* ---- the parent ---- */

static void parent_want(struct fm_run *r)
{
	unsigned long i;

	for (i = 0; i < CARVE; i++)
		r->want[i] = i >= r->k->first && i < r->k->first + r->k->n ?
			     0 : -1;
	r->want[r->k->first] = PTAG;
}

/* Page 0 back to the other node, where the child found it. */
static void parent_migrate(struct fm_run *r)
{
	unsigned long long pm;
	struct msg m;
	int node;

	if (!hear(r, 'M', &m))
		return;
	if (r->shared && m.node >= 0) {
		ok(page_node(pg(r->k->first)) == m.node,
		   "%s: the child's migration moved the parent's mapping (node %d)",
		   r->ctx, m.node);
		pm = pagemap_entry(pg(r->k->first));
		ok(PM_PFN(pm) == PM_PFN(m.pm),
		   "%s: migrated: one frame in both (pfn %#llx, %#llx)",
		   r->ctx, PM_PFN(pm), PM_PFN(m.pm));
	}
	expect_data(r, "migrated by the child");
	verified(r, "migrated by the child");
	node = migrate(r, "parent migrates back", 0);
	expect_data(r, "migrated back");
	verified(r, "migrated back");
	say(r, 'M', node, pagemap_entry(pg(r->k->first)));
}

/*
 * Both processes' steps after the child has built its layout; returns
 * when the child is to exit first (or is gone), exits when the parent is.
 */
static void parent_steps(struct fm_run *r)
{
	if (!hear(r, 'b', NULL))
		return;
	expect_data(r, "the child built");
	verified(r, "the child built");
	say(r, 'g', 0, 0);
	if (two_nodes)
		parent_migrate(r);
	if (!parent_reclaim(r))
		return;
	if (r->order == CHILD_FIRST) {
		if (hear(r, 'd', NULL)) {
			readback(r, "the child first");
			say(r, 'e', 0, 0);
		}
		return;
	}
	readback(r, "the parent first");
	say(r, 'd', 0, 0);
	hear(r, 'e', NULL);
	_exit(tap_fails > 100 ? 100 : tap_fails);
}

/* The child is gone (order CHILD_FIRST, or a failure): reap it, re-read. */
static void parent_alone(struct fm_run *r, pid_t pid)
{
	int st = 0;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st))
		ok(0, "%s: the child died (status %#x)", r->ctx, st);
	else
		tap_fails += WEXITSTATUS(st);
	expect_data(r, "the child exited");
	verified(r, "the child exited");
	if (two_nodes) {
		migrate(r, "migrated alone", 0);
		expect_data(r, "migrated alone");
		verified(r, "migrated alone");
	}
}

/*
 * The process of one case: upstream's carveout, its VMA with page 0
 * faulted, the fork; then the steps with the child.
 */
static void parent_proc(struct fm_run *r)
{
	const struct fm_case *k = r->k;
	int p2c[2], c2p[2];
	pid_t pid;

	tap_fails = 0;
	alarm(120);
	set_ctx(r, "parent");
	if (!ok(mmap(W, CARVE * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_FIXED_NOREPLACE, -1, 0) == W &&
		!map_at(k->first, k->n, RW, k->mflags),
		"%s: mmap the carveout and pages %lu-%lu", r->ctx, k->first,
		k->first + k->n - 1))
		_exit(1);
	page_fill(pg(k->first), PTAG);
	parent_want(r);
	if (pipe(p2c) || pipe(c2p)) {
		ok(0, "%s: pipes", r->ctx);
		_exit(1);
	}
	pid = fork();
	if (pid < 0) {
		ok(0, "%s: fork", r->ctx);
		_exit(1);
	}
	if (pid == 0) {
		close(p2c[1]);
		close(c2p[0]);
		r->rfd = p2c[0];
		r->wfd = c2p[1];
		child_proc(r);
	}
	close(p2c[0]);
	close(c2p[1]);
	r->rfd = c2p[0];
	r->wfd = p2c[1];
	parent_steps(r);
	close(r->wfd);
	close(r->rfd);
	parent_alone(r, pid);
	_exit(tap_fails > 100 ? 100 : tap_fails);
}

/* ---- the test process ---- */

/* adoption is part of the transplant feature: apart with -r and -s */
static int expect_merged(const struct fm_case *k)
{
	return !stock && !renumber_only && (is61 || !k->apart612);
}

/* One case in one exit order: its processes, reaped here (a subreaper). */
static void run_case(const struct fm_case *k, enum order order)
{
	struct fm_run r = { .k = k, .order = order, .rfd = -1, .wfd = -1 };
	int st, fails = 0;
	pid_t pid;

	r.merged = expect_merged(k);
	r.shared = k->written != 2;
	set_ctx(&r, "test");
	diag("%s: %s expected", r.ctx, r.merged ? "merged" : "apart");
	pid = fork();
	if (pid < 0) {
		ok(0, "%s: fork", r.ctx);
		return;
	}
	if (pid == 0)
		parent_proc(&r);
	while ((pid = wait(&st)) > 0) {
		if (!WIFEXITED(st)) {
			ok(0, "%s: process %d died (status %#x)", r.ctx, pid, st);
			fails++;
		} else {
			fails += WEXITSTATUS(st);
		}
	}
	tap_fails += fails;
}

int main(int argc, char **argv)
{
	const char *why;
	struct utsname u;
	unsigned int i;

	/* -c first: mode_init() knows -o, -r and -s only */
	if (argc > 1 && !strcmp(argv[1], "-c")) {
		churn_on = 1;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (mode_init(argc, argv, "t_forkmerge", 300, &stock, &renumber_only,
		      NULL, &vfd))
		return 2;
	is61 = !uname(&u) && !strncmp(u.release, "6.1.", 4);
	nostats = stats_counter("merge_attempts") == -1;
	if (nostats)
		diag("no %s: counters not checked", DBG_STATS);
	two_nodes = access("/sys/devices/system/node/node1", F_OK) == 0;
	if (!two_nodes)
		diag("no NUMA node 1: migration not checked");
	if (!ok(!prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "subreaper"))
		return tap_exit();
	W = aligned_window(WIN_PAGES * PG);
	if (!ok(W != NULL, "window"))
		return tap_exit();
	why = memcg_enter(MEMCG);
	cg_ok = !why;
	if (why)
		diag("%s: reclaim not checked", why);
	for (i = 0; i < NR_CASES; i++) {
		run_case(&cases[i], CHILD_FIRST);
		run_case(&cases[i], PARENT_FIRST);
	}
	if (cg_ok)
		memcg_leave(MEMCG);
	return tap_exit();
}
