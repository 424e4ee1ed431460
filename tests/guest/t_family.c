// SPDX-License-Identifier: GPL-2.0
/*
 * Forked families: memory a worker inherited through fork().
 *
 * A parent maps and faults 8 pages, forks a worker and drops its own copy
 * (munmap) or exits; the worker's VMA then has the parent's anon_vma as
 * its root and a chain of two entries, while every page is mapped by the
 * worker alone.  The module renumbers such a VMA, transplants into and
 * out of it and gives a never-faulted neighbour its anon_vma and chain
 * (transplant.c) - each page that changes owner proved exclusive;
 * refused_shared stays for pages that really are mapped or referenced
 * twice.  The worker, step by step:
 *  1. moves the first two pages behind the other six: renumbered, merged;
 *  2. maps two pages right behind the inherited memory: never faulted,
 *     so the stock kernel keeps them apart (a forked neighbour's chain is
 *     not singular); 6.1's post-mmap merge offers them (adopted, merged),
 *     6.12 does not;
 *  3. mprotects them read-only and back: adopted on 6.12, merged;
 *  4. writes them and mprotects again: one VMA, nothing to do;
 *  5. maps and writes two pages elsewhere and moves them right before
 *     the inherited memory: renumbered and transplanted into its family
 *     (a chain entry for each ancestor), merged;
 *  6. maps sixteen fresh pages elsewhere and moves the whole inherited
 *     VMA (pages of the first process's anon_vma, of the worker's and
 *     transplanted ones) behind them: the cheaper side, renumbered and
 *     transplanted out of its family, whose every tree empties.
 * The same with three generations (grandparent and parent both dropped
 * their copies: chains of three entries).  And a worker whose parent
 * keeps its copy alive: the worker wrote two pages (COW: exclusive again,
 * in its own anon_vma) and moves them behind the rest (renumbered,
 * merged), then moves two pages it never wrote (still mapped by the
 * parent) behind the rest: refused_shared, and back; step 5; step 6 in
 * place (moved read-only, made writable) for the two written pages
 * (transplanted out; the family stays, the parent's VMA and the worker's
 * rest in its trees) and for two shared ones (refused_shared); the
 * parent's copy is unchanged.  And the
 * parent's side: a parent that forked a child moves its own pages - written
 * since (transplanted and renumbered: the VMA leaves its root as munmap
 * would, the root stays for the child) or still COW-shared (refused_shared).
 *
 * Every step: the exact layout of the window (pages relative to a 2 MiB
 * aligned base, "~" a page offset that is not linear), the anon_vma
 * pattern (module loaded), every page byte-exact, the rmap verifier, and
 * the exact change of the counters below (global, from debugfs: this test
 * runs alone).  With renumber only (-r) the renumbering steps are the
 * same and nothing else is counted; stock (-s) every counter stays.
 *
 * usage: t_family [-o] [-r | -s]
 *   -o  opt this process in first (the workers inherit it)
 *   -r  renumber on, transplant off
 *   -s  the stock behaviour (features off, not opted in, or no module)
 */
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#define PG		4096UL
#define WIN_PAGES	1024UL		/* 4 MiB window */
#define FAR		512UL		/* where mappings are made before a move */
#define NPAGES		8UL		/* the inherited memory: pages 0-7 */

#ifndef MREMAP_FIXED
#define MREMAP_FIXED	2
#endif

static int stock;		/* -s */
static int renumber_only;	/* -r */
static int is61;
static int nostats;
static int vfd = -1;
static char *W;

static int tp_on(void)
{
	return !stock && !renumber_only;
}

static char *pg(unsigned long i)
{
	return W + i * PG;
}

static int map_at(unsigned long page, unsigned long n)
{
	return mmap(pg(page), n * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		    -1, 0) == pg(page) ? 0 : -1;
}

static int move(unsigned long from, unsigned long n, unsigned long to)
{
	return mremap(pg(from), n * PG, n * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
		      pg(to)) == pg(to) ? 0 : -1;
}

static void fill(unsigned long first, unsigned long n, unsigned int tag0)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		page_fill(pg(first + i), tag0 + i);
}

/*
 * @tags: "first:tag0,n ..." - n pages from page first hold tag0, tag0+1..
 * Returns whether every one of them is byte-exact (one TAP line).
 */
static int expect_data(const char *ctx, const char *tags)
{
	unsigned long first, n, i, off;
	unsigned int tag0;
	const char *p = tags;
	int used;

	while (sscanf(p, " %lu:%u,%lu%n", &first, &tag0, &n, &used) == 3) {
		for (i = 0; i < n; i++)
			if (page_check(pg(first + i), tag0 + i, &off)) {
				ok(0, "%s: page %lu byte-exact", ctx, first + i);
				diag("byte %lu is %#x, want tag %lu", off,
				     (unsigned char)pg(first + i)[off],
				     tag0 + i);
				return 0;
			}
		p += used;
	}
	return ok(1, "%s: pages byte-exact (%s)", ctx, tags);
}

static void verified(const char *ctx)
{
	if (vm_verify_self_ok(ctx))
		ok(1, "%s: rmap verifier clean", ctx);
}

/* @merged with the renumber feature on, @apart otherwise */
static void expect_layout(const char *ctx, const char *merged,
			  const char *apart)
{
	expect_window_layout(ctx, vfd, W, WIN_PAGES, stock ? apart : merged);
}

static void expect_avs(const char *ctx, const char *merged, const char *apart)
{
	expect_window_avs(ctx, vfd, W, WIN_PAGES, stock ? apart : merged);
}

/* ---- counters ---- */

static const char *const cnames[] = {
	"vmas_renumbered", "merge_renumber", "vmas_transplanted",
	"merge_transplant", "merge_both", "vmas_adopted", "merge_adopt",
	"refused_shared", "refused_family", "rehomed_unmerged",
};
#define NR_C	(sizeof(cnames) / sizeof(cnames[0]))

struct snap {
	long v[NR_C];
};

static void snap_take(struct snap *s)
{
	stats_snap(cnames, NR_C, s->v);
}

/*
 * The counters that moved since @s must be exactly @want ("name+N ...",
 * "" for none); every other one of cnames stays.  Stock mode: none may
 * move.  Without debugfs stats (no module) nothing is checked.
 */
static void expect_counters(const char *ctx, const struct snap *s,
			    const char *want)
{
	if (!nostats)
		expect_counter_deltas(ctx, cnames, NR_C, s->v,
				      stock ? "" : want);
}

/* ---- families ---- */

/* what each generation above the worker does with its copy */
enum drop {
	DROP_MUNMAP,	/* unmaps it, stays alive until the worker is done */
	DROP_EXIT,	/* exits */
	DROP_NONE,	/* keeps it, stays alive: pages stay COW-shared */
};

static const char *const drop_names[] = {
	"parent unmapped", "parent exited", "parent keeps its copy",
};

/* the parent's memory: pages 0-7, tags 1-8 */
#define TAG0	1

/*
 * Wait until the process holding the write end of @rfd is gone (EOF: its
 * files are closed after its mm is released) or has written (it dropped
 * its copy and stays).
 */
static void wait_parent(int rfd)
{
	char c;

	while (read(rfd, &c, 1) < 0)
		;
	close(rfd);
}

/*
 * Fork one generation: the child returns 0 once its parent has dropped
 * its copy (@drop); the parent returns 1 after doing so and, unless it
 * exits, waiting for the child, with its failures added to tap_fails.
 */
static int generation(const char *ctx, enum drop drop)
{
	int p[2], st = 0;
	pid_t pid;

	if (pipe(p)) {
		ok(0, "%s: pipe", ctx);
		_exit(1);
	}
	pid = fork();
	if (pid < 0) {
		ok(0, "%s: fork", ctx);
		_exit(1);
	}
	if (pid == 0) {
		close(p[1]);
		wait_parent(p[0]);
		return 0;
	}
	close(p[0]);
	if (drop == DROP_EXIT)
		_exit(0);	/* closes p[1] after its mm is gone */
	if (drop == DROP_MUNMAP && munmap(W, WIN_PAGES * PG))
		ok(0, "%s: munmap of the parent's copy", ctx);
	if (write(p[1], "x", 1) != 1)
		ok(0, "%s: waking the worker", ctx);
	close(p[1]);
	while (waitpid(pid, &st, 0) < 0)
		;
	if (!WIFEXITED(st)) {
		ok(0, "%s: worker died (status %#x)", ctx, st);
		tap_fails++;
	} else {
		tap_fails += WEXITSTATUS(st);
	}
	return 1;
}

/* mprotect pages [@first, @first + @n) read-only and back */
static void reprotect(const char *ctx, unsigned long first, unsigned long n)
{
	ok(!mprotect(pg(first), n * PG, PROT_READ) &&
	   !mprotect(pg(first), n * PG, PROT_READ | PROT_WRITE),
	   "%s: mprotect read-only and back", ctx);
}

/*
 * After a step: layout @lay (@lay_st stock), the counters @want (since
 * @s), the pages @data (expect_data(); NULL: not checked), the verifier.
 */
static void after_step(const char *ctx, const struct snap *s,
		       const char *lay, const char *lay_st, const char *want,
		       const char *data)
{
	expect_layout(ctx, lay, lay_st);
	expect_counters(ctx, s, want);
	if (data)
		expect_data(ctx, data);
	verified(ctx);
}

/* A move of @n pages from page @from to page @to, checked as above. */
static void step_move(const char *ctx, unsigned long from, unsigned long n,
		      unsigned long to, const char *lay, const char *lay_st,
		      const char *want, const char *data)
{
	struct snap s;

	snap_take(&s);
	ok(!move(from, n, to), "%s: mremap pages %lu-%lu to %lu-%lu", ctx,
	   from, from + n - 1, to, to + n - 1);
	after_step(ctx, &s, lay, lay_st, want, data);
}

/* The renumbering a move of exclusive pages behind the rest gets. */
#define RENUMBERED	"vmas_renumbered+1 merge_renumber+1"
/* A move whose cheaper side is renumbered and transplanted. */
#define REHOMED		"vmas_renumbered+1 vmas_transplanted+1 merge_both+1"

/* @tp with the transplant feature, @other without it (-r, -s) */
static const char *tp_or(const char *tp, const char *other)
{
	return tp_on() ? tp : other;
}

/*
 * Step 5: two pages mapped and written far away (tags 41-42, their own
 * anon_vma, unforked) moved to pages 0-1, in front of the inherited
 * memory, whose VMA has ancestors: they are the cheaper side, exclusive,
 * and get a chain entry for each anon_vma of the inherited VMA's chain -
 * renumbered and transplanted.  @lay_tp, @lay: the layout after it with
 * and without the transplant feature (-s: @lay_st).
 */
static void step_move_in(const char *ctx0, const char *lay_tp, const char *lay,
			 const char *lay_st, const char *data)
{
	char ctx[200];

	snprintf(ctx, sizeof(ctx), "%s, 5 mremap in front of it", ctx0);
	if (!ok(!map_at(FAR, 2), "%s: mmap far", ctx))
		return;
	fill(FAR, 2, 41);
	step_move(ctx, FAR, 2, 0, tp_or(lay_tp, lay), lay_st,
		  tp_or(REHOMED, ""), data);
}

/* Sixteen fresh pages at 100-115 (tags 61-76): the larger side. */
#define BIG		100UL
#define BIG_N		16UL

/*
 * Before a step 6 that moves pages to @to: skipped without the transplant
 * feature; the fresh pages mapped when @to is right behind them.
 */
static int step6_ready(const char *ctx, unsigned long to)
{
	if (!tp_on()) {
		diag("%s: transplant feature off, skipped", ctx);
		return 0;
	}
	if (to != BIG + BIG_N)
		return 1;
	if (!ok(!map_at(BIG, BIG_N), "%s: mmap %lu pages", ctx, BIG_N))
		return 0;
	fill(BIG, BIG_N, 61);
	return 1;
}

/*
 * Step 6 (transplant feature only): pages [@from, @from + @n) of a VMA
 * with ancestors moved behind sixteen fresh pages of an unforked anon_vma;
 * the moved VMA is the cheaper side: renumbered and transplanted out of
 * its family (@want), or refused.
 */
static void step_move_out(const char *ctx0, unsigned long from,
			  unsigned long n, unsigned long to, const char *lay,
			  const char *want, const char *data)
{
	char ctx[200];

	snprintf(ctx, sizeof(ctx), "%s, 6 pages %lu-%lu moved behind fresh memory",
		 ctx0, from, from + n - 1);
	if (!step6_ready(ctx, to))
		return;
	step_move(ctx, from, n, to, lay, lay, want, data);
}

/* The worker's part with the parent's copy gone: steps 1-6. */
static void worker_exclusive(const char *ctx0)
{
	/* after step 2 (6.1 offers the new mapping: adopted) */
	const char *lay2 = tp_on() && is61 ? "2-12" : "2-10 10-12";
	const char *lay3 = tp_or("2-12", "2-10 10-12");
	static const char lay_st[] = "2-8 8-10~ 10-12";
	static const char data[] = "2:3,6 8:1,2 10:31,2";
	const char *adopted = "vmas_adopted+1 merge_adopt+1";
	char ctx[200];
	struct snap s;

	snprintf(ctx, sizeof(ctx), "%s, 1 mremap behind the rest", ctx0);
	expect_layout(ctx, "0-8", "0-8");
	verified(ctx);
	/* pages 2-9 hold tags 3-8, then 1-2 */
	step_move(ctx, 0, 2, NPAGES, "2-10", "2-8 8-10~", RENUMBERED,
		  "2:3,6 8:1,2");
	expect_avs(ctx, "a", "aa");

	/* never faulted: adopts the inherited VMA's anon_vma and chain */
	snprintf(ctx, sizeof(ctx), "%s, 2 mmap next to it", ctx0);
	snap_take(&s);
	if (!ok(!map_at(10, 2), "%s: mmap pages 10-11", ctx))
		return;
	after_step(ctx, &s, lay2, lay_st, tp_on() && is61 ? adopted : "",
		   NULL);

	snprintf(ctx, sizeof(ctx), "%s, 3 mprotect (never faulted)", ctx0);
	snap_take(&s);
	reprotect(ctx, 10, 2);
	after_step(ctx, &s, lay3, lay_st, tp_on() && !is61 ? adopted : "",
		   NULL);

	/* written now: pages of the worker's own anon_vma, one VMA */
	snprintf(ctx, sizeof(ctx), "%s, 4 mprotect (faulted)", ctx0);
	fill(10, 2, 31);
	snap_take(&s);
	reprotect(ctx, 10, 2);
	after_step(ctx, &s, lay3, lay_st, "", data);

	step_move_in(ctx0, "0-12", "0-2~ 2-10 10-12", "0-2~ 2-8 8-10~ 10-12",
		     "0:41,2 2:3,6 8:1,2 10:31,2");
	expect_avs(ctx0, tp_or("a", "abc"), "abbc");
	/*
	 * The whole VMA with ancestors - pages of the first process's
	 * anon_vma (3-8, 1-2), of the worker's (31-32) and transplanted ones
	 * (41-42) - leaves its family: every tree of its chain empties.
	 */
	step_move_out(ctx0, 0, 12, BIG + BIG_N, "100-128", REHOMED,
		      "100:61,16 116:41,2 118:3,6 124:1,2 126:31,2");
	if (tp_on())
		expect_avs(ctx0, "a", "a");
}

/*
 * Step 6 in place (transplant feature only): pages [@from, @from + @n),
 * part of a VMA with ancestors whose other pages are still COW-shared,
 * made a VMA of their own (read-only), moved behind sixteen fresh pages
 * (@lay1: another protection, no merge) and given their protection back:
 * the mprotect's decision rewrites the cheaper side, these pages -
 * renumbered and transplanted out of the family (@want), or refused.  A
 * move would rewrite the whole source VMA (move_merge.c), shared pages
 * included.
 */
static void step_reprotect_out(const char *ctx0, unsigned long from,
			       unsigned long n, unsigned long to,
			       const char *lay1, const char *lay,
			       const char *want, const char *data)
{
	char ctx[200];
	struct snap s;

	snprintf(ctx, sizeof(ctx), "%s, 6 pages %lu-%lu moved read-only, made writable",
		 ctx0, from, from + n - 1);
	if (!step6_ready(ctx, to))
		return;
	snap_take(&s);
	ok(!mprotect(pg(from), n * PG, PROT_READ) && !move(from, n, to),
	   "%s: mprotect read-only, mremap to %lu-%lu", ctx, to, to + n - 1);
	after_step(ctx, &s, lay1, lay1, "", NULL);
	snap_take(&s);
	ok(!mprotect(pg(to), n * PG, PROT_READ | PROT_WRITE),
	   "%s: mprotect writable", ctx);
	after_step(ctx, &s, lay, lay, want, data);
}

/*
 * The worker's part while its parent keeps the pages: it writes pages
 * 0-1 (tags 21-22: COW copies in its own anon_vma) and moves them behind
 * the rest (renumbered: exclusive), then moves pages 2-3 (never written:
 * still the parent's too) behind that (refused_shared) and back (the
 * stock merge); step 5; then step 6 in place for its written pages
 * (transplanted out of the family, which stays: the parent's VMA and the
 * rest of the worker's are still in its trees) and for two shared ones
 * (refused_shared).
 */
static void worker_shared(const char *ctx0)
{
	char ctx[200];

	fill(0, 2, 21);
	snprintf(ctx, sizeof(ctx), "%s, 1 written pages moved", ctx0);
	step_move(ctx, 0, 2, NPAGES, "2-10", "2-8 8-10~", RENUMBERED,
		  "2:3,6 8:21,2");
	snprintf(ctx, sizeof(ctx), "%s, 1b shared pages moved", ctx0);
	/* stock: pages 2-3 continue the offsets of pages 0-1 at 8-9 */
	step_move(ctx, 2, 2, 10, "4-10 10-12~", "4-8 8-12~",
		  "refused_shared+1", "4:5,4 8:21,2 10:3,2");
	snprintf(ctx, sizeof(ctx), "%s, 1c moved back", ctx0);
	step_move(ctx, 10, 2, 2, "2-10", "2-8 8-10~", "", NULL);
	step_move_in(ctx0, "0-10", "0-2~ 2-10", "0-2~ 2-8 8-10~",
		     "0:41,2 2:3,6 8:21,2");
	step_reprotect_out(ctx0, 8, 2, BIG + BIG_N, "0-8 100-116 116-118~",
			   "0-8 100-118", REHOMED,
			   "0:41,2 2:3,6 100:61,16 116:21,2");
	step_reprotect_out(ctx0, 2, 2, BIG + BIG_N + 2,
			   "0-2 4-8 100-118 118-120~", "0-2 4-8 100-118 118-120~",
			   "refused_shared+1",
			   "0:41,2 4:5,4 100:61,16 116:21,2 118:3,2");
	if (tp_on())
		expect_avs(ctx0, "abcd", "abcd");
}

/*
 * One family: the first process maps and faults pages 0-7, then @gens
 * generations are forked below it, each parent dropping its copy as
 * @drop says; the last one is the worker.  Run in a child of the test,
 * which is a subreaper: workers whose parents exited are reaped there.
 */
static void family(enum drop drop, int gens)
{
	char ctx[64];
	int g, st, fails = 0;
	pid_t pid;

	snprintf(ctx, sizeof(ctx), "%s%s", drop_names[drop],
		 gens > 1 ? ", three generations" : "");
	diag("%s", ctx);
	pid = fork();
	if (pid < 0) {
		ok(0, "%s: fork", ctx);
		return;
	}
	if (pid == 0) {
		tap_fails = 0;
		if (map_at(0, NPAGES)) {
			ok(0, "%s: mmap", ctx);
			_exit(1);
		}
		fill(0, NPAGES, TAG0);
		for (g = 0; g < gens; g++) {
			if (generation(ctx, drop)) {
				if (drop == DROP_NONE) {
					expect_data(ctx, "0:1,8");
					verified(ctx);
				}
				_exit(tap_fails > 100 ? 100 : tap_fails);
			}
		}
		if (drop == DROP_NONE)
			worker_shared(ctx);
		else
			worker_exclusive(ctx);
		_exit(tap_fails > 100 ? 100 : tap_fails);
	}
	/* the first process, and every orphaned generation below it */
	while ((pid = wait(&st)) > 0) {
		if (!WIFEXITED(st)) {
			ok(0, "%s: process %d died (status %#x)", ctx, pid, st);
			fails++;
		} else {
			fails += WEXITSTATUS(st);
		}
	}
	tap_fails += fails;
}

/*
 * The parent's side of a fork: it maps two pages far away (tags 41-42),
 * forks a child that keeps its copy, and - @written - writes them again
 * (tags 51-52: exclusive, in its own anon_vma, a root that now has the
 * child's anon_vma below it) or not (still COW-shared).  Then it maps
 * eight fresh pages at 0-7 (after the fork: not the child's) and moves
 * its two behind them, the cheaper side: written, they are transplanted
 * and renumbered and merge (the root stays, for the child); COW-shared,
 * refused_shared.  The child then reads its own copy, 41-42.
 */
static void parent_moves(int written)
{
	const char *merged = tp_on() && written ? "0-10" : "0-8 8-10~";
	const char *want = !tp_on() ? "" : written ?
		"vmas_renumbered+1 vmas_transplanted+1 merge_both+1" :
		"refused_shared+1";
	char ctx[64];
	struct snap s;
	int p[2], st = -1;
	pid_t pid;

	snprintf(ctx, sizeof(ctx), "parent moves %s pages",
		 written ? "its written" : "COW-shared");
	if (map_at(FAR, 2) || pipe(p)) {
		ok(0, "%s: mmap, pipe", ctx);
		return;
	}
	fill(FAR, 2, 41);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		wait_parent(p[0]);
		_exit(page_check(pg(FAR), 41, NULL) ||
		      page_check(pg(FAR + 1), 42, NULL));
	}
	close(p[0]);
	if (written)
		fill(FAR, 2, 51);
	if (!ok(pid > 0 && !map_at(0, NPAGES), "%s: fork, mmap", ctx))
		goto out;
	fill(0, NPAGES, TAG0);
	snap_take(&s);
	ok(!move(FAR, 2, NPAGES), "%s: mremap behind the fresh pages", ctx);
	after_step(ctx, &s, merged, "0-8 8-10~", want,
		   written ? "0:1,8 8:51,2" : "0:1,8 8:41,2");
	expect_avs(ctx, tp_on() && written ? "a" : "ab", "ab");
out:
	close(p[1]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && !WEXITSTATUS(st),
	   "%s: the child read its copy (status %#x)", ctx, st);
	verified(ctx);
	munmap(W, WIN_PAGES * PG);
}

int main(int argc, char **argv)
{
	struct utsname u;

	if (mode_init(argc, argv, "t_family", 300, &stock, &renumber_only,
		      NULL, &vfd))
		return 2;
	is61 = !uname(&u) && !strncmp(u.release, "6.1.", 4);
	nostats = stats_counter("merge_attempts") == -1;
	if (nostats)
		diag("no %s: counters not checked", DBG_STATS);
	if (!ok(!prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "subreaper"))
		return tap_exit();
	W = aligned_window(WIN_PAGES * PG);
	if (!ok(W != NULL, "window"))
		return tap_exit();

	family(DROP_MUNMAP, 1);
	family(DROP_EXIT, 1);
	family(DROP_MUNMAP, 2);
	family(DROP_EXIT, 2);
	family(DROP_NONE, 1);
	parent_moves(1);
	parent_moves(0);
	return tap_exit();
}
