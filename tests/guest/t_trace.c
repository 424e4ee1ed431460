// SPDX-License-Identifier: GPL-2.0
/*
 * What the vmamerge trace events print: t_trace.sh enables
 * them, runs this program opted in and compares the trace buffer with the
 * lines it announces.  Three steps, each with its VMA count, every page
 * read back byte-exact and the rmap verifier:
 *
 *  1. an mremap() move renumbered and merged: two faulted pages, the first
 *     moved behind the second (thesis §3.1, t_renumber's "reverse");
 *  2. the same move with the pages shared with a child (fork): refused,
 *     reason shared, the stock layout;
 *  3. once the child has gone, mprotect() there, off and on again: the
 *     moved page is renumbered on the in-place path and merges;
 *  4. an mmap() next to a faulted page: the stock merge of a new range
 *     that has no anon_vma yet.
 *
 * usage: t_trace
 * Output: TAP ("ok - ..."), and for every trace event the steps must cause
 * one line "want EVENT FIELDS": the buffer must hold a line of EVENT whose
 * text after "mm=<pointer> " is exactly FIELDS.
 */
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PG		4096UL
#define WIN_PAGES	64UL

static char *W;			/* the window, 2 MiB-aligned */

static char *pg(unsigned long i)
{
	return W + i * PG;
}

static unsigned long pgoff_of(unsigned long i)
{
	return (unsigned long)pg(i) / PG;
}

/* map pages [first, first + n); fill them with tags tag0... */
static int map_fill(unsigned long first, unsigned long n, unsigned int tag0)
{
	return page_map_fill(pg(first), n, tag0);
}

/* move page @from to page @to */
static int move(unsigned long from, unsigned long to)
{
	return mremap(pg(from), PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED,
		      pg(to)) == pg(to) ? 0 : -1;
}

/* @ctx: pages [first, first + n) hold tags tags[0..n) */
static void expect_data(const char *ctx, unsigned long first,
			const unsigned int *tags, unsigned long n)
{
	unsigned long i, off = 0;

	for (i = 0; i < n; i++)
		if (page_check(pg(first + i), tags[i], &off))
			break;
	ok(i == n, "%s: pages read back exact", ctx);
	if (i < n)
		diag("page %lu differs at byte %lu (want tag %u)", first + i,
		     off, tags[i]);
}

/* @ctx: exactly @want VMAs cover pages [first, last) */
static void expect_vmas(const char *ctx, unsigned long first,
			unsigned long last, int want)
{
	int n = vmas_in(pg(first), pg(last));

	ok(n == want, "%s: %d VMA(s) over pages %lu-%lu (want %d)", ctx, n,
	   first, last, want);
	ok(vm_verify_self_ok(ctx), "%s: rmap invariants hold", ctx);
}

static void want_merge(const char *path, unsigned long first,
		       unsigned long last, unsigned long pgoff,
		       const char *cause, int merged)
{
	printf("want vmamerge_merge path=%s range=%#lx-%#lx pgoff=%#lx cause=%s merged=%d\n",
	       path, (unsigned long)pg(first), (unsigned long)pg(last), pgoff,
	       cause, merged);
}

static void want_refuse(const char *path, unsigned long first,
			unsigned long last, const char *reason)
{
	printf("want vmamerge_refuse path=%s range=%#lx-%#lx reason=%s\n",
	       path, (unsigned long)pg(first), (unsigned long)pg(last),
	       reason);
}

/* 1: pages 0 and 1, page 0 moved to 2: renumbered, one VMA over 1-3 */
static void t_renumbered(void)
{
	static const unsigned int tags[] = { 2, 1 };

	if (map_fill(0, 2, 1) || move(0, 2)) {
		ok(0, "renumbered: mmap and mremap");
		return;
	}
	/*
	 * The move's renumbering is decided before the merge (move_merge.c:
	 * merge_renumber, vmamerge_rewrite); the merge event reports what the
	 * stock logic then saw - a range with the same anon_vma.
	 */
	want_merge("mremap_move", 2, 3, pgoff_of(2), "av_same", 1);
	expect_vmas("renumbered", 1, 3, 1);
	expect_data("renumbered", 1, tags, 2);
}

/*
 * 2: pages 10 and 11 shared with a child, page 10 moved to 12: the moved
 * page would take the offset its new neighbour implies, but the child maps
 * it too: refused (the page's VMA, at its old place, before the move), two
 * VMAs as on a stock kernel.
 */
static void t_refused(void)
{
	static const unsigned int tags[] = { 11 };
	int wfd, st;
	pid_t child;

	if (map_fill(10, 2, 10)) {
		ok(0, "refused: mmap");
		return;
	}
	child = spawn_sleeper(&wfd);
	if (child < 0 || move(10, 12)) {
		ok(0, "refused: fork and mremap");
		return;
	}
	want_refuse("mremap_move", 10, 11, "shared");
	expect_vmas("refused", 11, 13, 2);
	expect_data("refused", 11, tags, 1);
	expect_data("refused: the moved page", 12, (const unsigned int[]){ 10 }, 1);
	st = reap_sleeper(child, wfd);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "refused: the child exited (status %#x)", st);
}

/*
 * 3: after t_refused, nothing is shared any more: page 12 made read-only
 * (no merge: the flags differ), then writable again: it is renumbered
 * to merge with page 11, on mprotect()'s path.
 */
static void t_in_place(void)
{
	static const unsigned int tags[] = { 11, 10 };

	if (mprotect(pg(12), PG, PROT_READ) ||
	    mprotect(pg(12), PG, PROT_READ | PROT_WRITE)) {
		ok(0, "in place: mprotect");
		return;
	}
	/* read-only: no merge, the offset still page 10's */
	want_merge("modify", 12, 13, pgoff_of(10), "none", 0);
	want_merge("modify", 12, 13, pgoff_of(12), "renumber", 1);
	expect_vmas("in place", 11, 13, 1);
	expect_data("in place", 11, tags, 2);
}

/* 4: page 20 faulted, page 21 mapped next to it: the stock merge */
static void t_new_range(void)
{
	static const unsigned int tags[] = { 20, 0 };

	if (map_fill(20, 1, 20) ||
	    mmap(pg(21), PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != pg(21)) {
		ok(0, "new range: mmap");
		return;
	}
	want_merge("new_range", 21, 22, pgoff_of(21), "av_null", 1);
	expect_vmas("new range", 20, 22, 1);
	expect_data("new range", 20, tags, 2);
}

int main(void)
{
	int fd;

	tap_init("t_trace", 120);
	fd = vm_open(O_RDWR);
	if (!ok(fd >= 0 && vm_advise(fd, VMAMERGE_TARGET_SELF, 0,
				     VMAMERGE_ADVISE_ENABLE, 0) == 0, "opted in"))
		return tap_exit();
	W = aligned_window(WIN_PAGES * PG);
	if (!ok(W != NULL, "window"))
		return tap_exit();
	t_renumbered();
	t_refused();
	t_in_place();
	t_new_range();
	munmap(W, WIN_PAGES * PG);
	close(fd);
	return tap_exit();
}
