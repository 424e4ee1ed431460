// SPDX-License-Identifier: GPL-2.0
/*
 * Edges of the merge paths (docs/design.md, "Which VMAs the module touches"
 * and "Soft-dirty across merges").
 *
 * 1. Private /dev/zero mappings: mmap_zero() makes them look anonymous
 *    (no vm_ops, so vma_is_anonymous() is true) but they keep vm_file and
 *    sit in /dev/zero's i_mmap interval tree, keyed by vm_pgoff and shared
 *    by every process that maps /dev/zero.  The module must leave them
 *    alone everywhere: not renumber one in an mremap() move, and neither
 *    transplant into nor out of one, since the stock logic never merges
 *    them with anonymous VMAs (vm_file differs).  Cases: a faulted
 *    /dev/zero mapping moved next to an anonymous VMA (keeps its pgoff;
 *    no merge possible, so nothing is even considered or counted), an
 *    anonymous VMA moved next to one whose pgoff it would continue (no
 *    neighbour to merge with: not renumbered), mprotect of an anonymous
 *    VMA next to one, and mmap of a gap between one and an anonymous VMA.
 *    Always: rehomed_unmerged +0.
 *
 * 2. Soft-dirty: after clear_refs (echo 4 > /proc/self/clear_refs) a
 *    page reads soft-dirty in /proc/self/pagemap (bit 55) when its PTE was
 *    dirtied since or its VMA has VM_SOFTDIRTY - which mmap() sets on the
 *    VMA a new range ends in, and which is the only record for the holes
 *    of a new mapping.  A merge the module makes must not lose it:
 *    an anonymous mapping made after clear_refs and moved by mremap() next
 *    to a cleared VMA (renumbered, transplanted, merged), an mmap() that
 *    fills a gap between two cleared VMAs (6.1: merged by the module after
 *    mmap_region()), and madvise() merges in both directions between a
 *    cleared VMA and a new one (the one that would lose the new range's
 *    soft-dirty state is refused: refused_softdirty).  The new range's
 *    pages always read soft-dirty; the cleared ones read clean unless a
 *    merge put them into a soft-dirty VMA (the kernel's own rule for a VMA
 *    that mmap() expands).
 *
 * Every case: the exact layout of a 2 MiB-aligned window from
 * /proc/self/maps ("0-2 2-4~z": pages 0-1 one VMA with a linear pgoff,
 * pages 2-3 a /dev/zero mapping whose pgoff is not linear; the pgoffs of
 * anonymous VMAs from VMAMERGE_IOC_VMAS, unmarked without the module),
 * the anon_vma pattern (module loaded: one letter per VMA, a new letter
 * where the anon_vma differs from the adjacent predecessor's), every page
 * byte-exact, the rmap verifier, and the counters that must move.
 *
 * usage: t_edges [-o] [-r | -s]
 *   -o  opt this process in first
 *   -r  renumber on, transplant off
 *   -s  the stock behaviour (features off, not opted in, or no module)
 */
#include "tap.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#define PG		4096UL
#define HPG		(2UL << 20)
#define WIN_PAGES	1024UL		/* 4 MiB window */
#define FAR		512UL		/* where mappings are made before a move */

#ifndef MREMAP_FIXED
#define MREMAP_FIXED	2
#endif

static int stock;		/* -s */
static int renumber_only;	/* -r */
static int is61;
static int nostats;		/* no debugfs stats */
static int vfd = -1;
static int zfd = -1;		/* /dev/zero */
static int pmfd = -1;		/* /proc/self/pagemap */
static char *W;

static int tp_on(void)
{
	return !stock && !renumber_only;
}

static char *pg(unsigned long i)
{
	return W + i * PG;
}

/* ---- data ---- */

static void fill(unsigned long page, unsigned int tag)
{
	page_fill(pg(page), tag);
}

/* pages [first, first + n) written with tags[first...] (0: left alone) */
static void fill_tags(const unsigned int *tags, unsigned long first,
		      unsigned long n)
{
	unsigned long i;

	for (i = first; i < first + n; i++)
		if (tags[i])
			fill(i, tags[i]);
}

/*
 * tags[i] for page first + i: 0 reads as zeros.  Reading a hole maps the
 * zero page, which changes no soft-dirty state: pagemap is read first.
 */
static void expect_data(const char *ctx, unsigned long first,
			const unsigned int *tags, unsigned long n)
{
	unsigned long i, o;

	for (i = 0; i < n; i++)
		if (page_check(pg(first + i), tags[i], &o)) {
			ok(0, "%s: page %lu byte-exact", ctx, first + i);
			diag("byte %lu is %#x, want tag %u", o,
			     (unsigned char)pg(first + i)[o], tags[i]);
			return;
		}
	ok(1, "%s: pages %lu-%lu byte-exact", ctx, first, first + n);
}

static int map_anon(unsigned long page, unsigned long n)
{
	return mmap(pg(page), n * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		    -1, 0) == pg(page) ? 0 : -1;
}

/* A private /dev/zero mapping; @linear: offset = address (pgoff linear) */
static int map_zero(unsigned long page, unsigned long n, int linear)
{
	off_t off = linear ? (off_t)(unsigned long)pg(page) : 0;

	return mmap(pg(page), n * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_FIXED_NOREPLACE, zfd, off) == pg(page) ?
		0 : -1;
}

static int move(unsigned long from, unsigned long n, unsigned long to)
{
	return mremap(pg(from), n * PG, n * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
		      pg(to)) == pg(to) ? 0 : -1;
}

static void verified(const char *ctx)
{
	if (vm_verify_self_ok(ctx))
		ok(1, "%s: rmap verifier clean", ctx);
}

/* ---- layout ---- */

static void expect_layout(const char *ctx, const char *want)
{
	expect_window_layout(ctx, vfd, W, WIN_PAGES, want);
}

static void expect_avs(const char *ctx, const char *want)
{
	expect_window_avs(ctx, vfd, W, WIN_PAGES, want);
}

/* ---- soft-dirty ---- */

static void clear_refs(const char *ctx)
{
	ok(!write_file("/proc/self/clear_refs", "4", 1),
	   "%s: clear_refs 4 (soft-dirty)", ctx);
}

/* 1 if page @page reads soft-dirty, 0 if not, -1 on error */
static int soft_dirty(unsigned long page)
{
	uint64_t e;
	off_t off = (off_t)((unsigned long)pg(page) / PG * sizeof(e));

	if (pread(pmfd, &e, sizeof(e), off) != sizeof(e))
		return -1;
	return !!(e & PM_SOFT_DIRTY);
}

/* @want: one '1' (soft-dirty) or '0' per page of [first, first + len) */
static void expect_sd(const char *ctx, unsigned long first, const char *want)
{
	char got[64];
	size_t i, n = strlen(want);

	for (i = 0; i < n && i < sizeof(got) - 1; i++)
		got[i] = "?01"[soft_dirty(first + i) + 1];
	got[i] = 0;
	if (!ok(!strcmp(got, want), "%s: soft-dirty pages %lu-%lu: %s", ctx,
		first, first + n, want))
		diag("pagemap soft-dirty bits are %s", got);
}

/* ---- counters (global, from debugfs; this test runs alone) ---- */

enum {
	C_VMAS_RN, C_MERGE_RN, C_VMAS_TP, C_MERGE_TP, C_MERGE_BOTH,
	C_VMAS_AD, C_R_SPECIAL, C_R_SOFTDIRTY, C_UNMERGED, NR_C
};

static const char *const cnames[NR_C] = {
	"vmas_renumbered", "merge_renumber", "vmas_transplanted",
	"merge_transplant", "merge_both", "vmas_adopted", "refused_special",
	"refused_softdirty", "rehomed_unmerged",
};

struct snap {
	long v[NR_C];
};

static void snap_take(struct snap *s)
{
	stats_snap(cnames, NR_C, s->v);
}

/*
 * The counters that moved since @s must be exactly @want (pairs of
 * C_* and a value, ended by -1); every other one of cnames stays.  Without
 * the module's stats (no module) nothing is checked; in stock mode every
 * counter stays.
 */
static void expect_counters(const char *ctx, const struct snap *s, ...)
{
	long want[NR_C] = { 0 }, now;
	char got[512] = "", exp[512] = "";
	size_t gn = 0, en = 0;
	va_list ap;
	int c, i, bad = 0;

	if (nostats)
		return;
	va_start(ap, s);
	while ((c = va_arg(ap, int)) >= 0)
		want[c] = va_arg(ap, long);
	va_end(ap);
	for (i = 0; i < NR_C; i++) {
		now = stats_counter(cnames[i]);
		if (now < 0 || s->v[i] < 0) {
			bad = 1;
			gn += snprintf(got + gn, sizeof(got) - gn, "%s:missing ",
				       cnames[i]);
		} else if (now != s->v[i]) {
			gn += snprintf(got + gn, sizeof(got) - gn, "%s+%ld ",
				       cnames[i], now - s->v[i]);
		}
		if (want[i])
			en += snprintf(exp + en, sizeof(exp) - en, "%s+%ld ",
				       cnames[i], want[i]);
		if (now >= 0 && s->v[i] >= 0 && now - s->v[i] != want[i])
			bad = 1;
	}
	if (!ok(!bad, "%s: counters %s", ctx, en ? exp : "unchanged"))
		diag("counters changed: %s", gn ? got : "none");
}

/* ---- 1. private /dev/zero mappings ---- */

static void begin(const char *ctx, struct snap *s)
{
	munmap(W, WIN_PAGES * PG);
	diag("%s", ctx);
	snap_take(s);
}

/*
 * A faulted /dev/zero mapping (pgoff 0) moved next to an anonymous VMA:
 * never renumbered (stock: keeps pgoff 0).  Since the move-time decision
 * (move_merge.c) such a source is no candidate at all - the stock logic
 * would not merge it whatever its offset - so nothing is refused either
 * (before, the post-move renumber counted refused_special).
 */
static void t_zero_moved(void)
{
	static const unsigned int tags[] = { 1, 2, 3, 4 };
	const char *ctx = "dev/zero moved";
	struct snap s;

	begin(ctx, &s);
	if (!ok(!map_anon(0, 2) && !map_zero(FAR, 2, 0), "%s: mapped", ctx))
		return;
	fill_tags(tags, 0, 2);
	fill(FAR, 3);
	fill(FAR + 1, 4);
	ok(!move(FAR, 2, 2), "%s: mremap to page 2", ctx);
	expect_layout(ctx, "0-2 2-4~z");
	expect_avs(ctx, "ab");
	expect_data(ctx, 0, tags, 4);
	verified(ctx);
	expect_counters(ctx, &s, -1);
}

/*
 * An anonymous VMA moved behind a /dev/zero mapping whose pgoff it would
 * continue once renumbered: the stock logic never merges vm_file with
 * none, so nothing is rewritten (before the move-time decision it was
 * renumbered all the same).
 */
static void t_anon_after_zero(void)
{
	static const unsigned int tags[] = { 11, 12, 13, 14 };
	const char *ctx = "anon moved behind dev/zero";
	struct snap s;

	begin(ctx, &s);
	if (!ok(!map_zero(0, 2, 1) && !map_anon(FAR, 2), "%s: mapped", ctx))
		return;
	fill_tags(tags, 0, 2);
	fill(FAR, 13);
	fill(FAR + 1, 14);
	ok(!move(FAR, 2, 2), "%s: mremap to page 2", ctx);
	expect_layout(ctx, "0-2z 2-4~");
	expect_avs(ctx, "ab");
	expect_data(ctx, 0, tags, 4);
	verified(ctx);
	expect_counters(ctx, &s, -1);
}

/* mprotect() makes an anonymous VMA match a /dev/zero neighbour: no merge. */
static void t_mprotect_next_to_zero(void)
{
	static const unsigned int tags[] = { 21, 22, 23, 24, 25, 26 };
	const char *ctx = "mprotect between dev/zero mappings";
	struct snap s;

	begin(ctx, &s);
	if (!ok(!map_zero(0, 2, 1) && !map_anon(2, 2) && !map_zero(4, 2, 1),
		"%s: mapped", ctx))
		return;
	fill_tags(tags, 0, 6);
	ok(!mprotect(pg(2), 2 * PG, PROT_READ), "%s: mprotect R", ctx);
	expect_layout(ctx, "0-2z 2-4 4-6z");
	ok(!mprotect(pg(2), 2 * PG, PROT_READ | PROT_WRITE), "%s: mprotect RW",
	   ctx);
	expect_layout(ctx, "0-2z 2-4 4-6z");
	expect_avs(ctx, "abc");
	/* and the /dev/zero mapping itself, next to the anonymous one */
	ok(!mprotect(pg(0), 2 * PG, PROT_READ) &&
	   !mprotect(pg(0), 2 * PG, PROT_READ | PROT_WRITE),
	   "%s: mprotect the dev/zero mapping R, RW", ctx);
	expect_layout(ctx, "0-2z 2-4 4-6z");
	expect_avs(ctx, "abc");
	expect_data(ctx, 0, tags, 6);
	verified(ctx);
	expect_counters(ctx, &s, -1);
}

/*
 * mmap() of a gap between a /dev/zero mapping and a faulted anonymous
 * VMA: the new range merges with the anonymous VMA (stock, both
 * kernels), nothing joins the /dev/zero mapping's anon_vma.
 */
static void t_mmap_next_to_zero(void)
{
	static const unsigned int tags[] = { 31, 32, 0, 33, 34, 35 };
	const char *ctx = "mmap between dev/zero and anon";
	struct snap s;

	begin(ctx, &s);
	if (!ok(!map_zero(0, 2, 1) && !map_anon(4, 2), "%s: mapped", ctx))
		return;
	fill_tags(tags, 0, 2);
	fill_tags(tags, 4, 2);
	ok(!map_anon(2, 2), "%s: mmap pages 2-3", ctx);
	fill_tags(tags, 2, 2);
	expect_layout(ctx, "0-2z 2-6");
	expect_avs(ctx, "ab");
	expect_data(ctx, 0, tags, 6);
	verified(ctx);
	expect_counters(ctx, &s, -1);
}

/* ---- 2. soft-dirty ---- */

/*
 * A cleared anonymous VMA at pages 0-3; a mapping made after clear_refs
 * (pages: written, written, read (zero page), untouched) moved behind it.
 * Stock: no merge, the new range soft-dirty.  Renumber alone: no merge
 * possible (another anon_vma), nothing rewritten.  Both features: one
 * VMA, soft-dirty.
 */
static void t_sd_mremap(void)
{
	static const unsigned int tags[] = { 41, 42, 43, 44, 45, 46, 0, 0 };
	const char *ctx = "soft-dirty: mremap behind a cleared VMA";
	volatile char c;
	struct snap s;

	begin(ctx, &s);
	if (!ok(!map_anon(0, 4), "%s: mapped", ctx))
		return;
	fill_tags(tags, 0, 4);
	clear_refs(ctx);
	if (!ok(!map_anon(FAR, 4), "%s: new mapping", ctx))
		return;
	fill(FAR, 45);
	fill(FAR + 1, 46);
	c = pg(FAR + 2)[0];
	(void)c;
	expect_sd(ctx, 0, "0000");
	ok(!move(FAR, 4, 4), "%s: mremap to page 4", ctx);
	if (tp_on())
		expect_layout(ctx, "0-8");
	else
		expect_layout(ctx, "0-4 4-8~");
	expect_sd(ctx, 0, tp_on() ? "11111111" : "00001111");
	expect_avs(ctx, tp_on() ? "a" : "ab");
	expect_data(ctx, 0, tags, 8);
	verified(ctx);
	if (tp_on())
		expect_counters(ctx, &s, C_VMAS_RN, 1L, C_VMAS_TP, 1L,
				C_MERGE_BOTH, 1L, -1);
	else
		expect_counters(ctx, &s, -1);
}

/*
 * mmap() of a gap between two cleared VMAs with different anon_vmas.
 * Stock 6.1 merges the new range with the next VMA, 6.12 with the
 * previous one (the soft-dirty VMA is the one it ends in); with the
 * transplant all three merge (6.1: after mmap_region()) into a soft-dirty
 * VMA.
 */
static void t_sd_mmap(void)
{
	static const unsigned int tags[] = { 51, 52, 53, 54, 55, 0, 0, 0,
					     56, 57, 58, 59 };
	const char *ctx = "soft-dirty: mmap between cleared VMAs";
	struct snap s;

	begin(ctx, &s);
	if (!ok(!map_anon(0, 4) && !map_anon(8, 4), "%s: mapped", ctx))
		return;
	fill_tags(tags, 0, 4);
	fill_tags(tags, 8, 4);
	clear_refs(ctx);
	ok(!map_anon(4, 4), "%s: mmap pages 4-7", ctx);
	fill_tags(tags, 4, 4);
	if (tp_on()) {
		expect_layout(ctx, "0-12");
		expect_sd(ctx, 0, "111111111111");
		expect_avs(ctx, "a");
	} else if (is61) {
		expect_layout(ctx, "0-4 4-12");
		expect_sd(ctx, 0, "000011111111");
		expect_avs(ctx, "ab");
	} else {
		expect_layout(ctx, "0-8 8-12");
		expect_sd(ctx, 0, "111111110000");
		expect_avs(ctx, "ab");
	}
	expect_data(ctx, 0, tags, 12);
	verified(ctx);
	if (tp_on())
		expect_counters(ctx, &s, C_VMAS_TP, 1L, C_MERGE_TP, 1L, -1);
	else
		expect_counters(ctx, &s, -1);
}

/*
 * madvise() between a cleared VMA X (pages 0-3, VM_DONTDUMP while
 * written, so it has its own anon_vma) and a mapping L made after
 * clear_refs (pages 4-7, page 4 written).  The flag-changing paths give
 * the merged VMA the changed range's flags: @x_changes - DODUMP on X, whose
 * flags are clean, would lose L's soft-dirty state: refused; otherwise
 * DONTDUMP on L: merged, soft-dirty.
 */
static void t_sd_madvise(int x_changes)
{
	static const unsigned int tags[] = { 61, 62, 63, 64, 65, 0, 0, 0 };
	const char *ctx = x_changes ?
		"soft-dirty: madvise the cleared VMA next to a new one" :
		"soft-dirty: madvise a new VMA next to a cleared one";
	int merged = tp_on() && !x_changes;
	struct snap s;

	begin(ctx, &s);
	if (!ok(!map_anon(0, 4) && !madvise(pg(0), 4 * PG, MADV_DONTDUMP),
		"%s: mapped, DONTDUMP", ctx))
		return;
	fill_tags(tags, 0, 4);
	clear_refs(ctx);
	ok(!map_anon(4, 4), "%s: new mapping", ctx);
	fill_tags(tags, 4, 4);
	expect_layout(ctx, "0-4 4-8");
	expect_avs(ctx, "ab");
	if (x_changes)
		ok(!madvise(pg(0), 4 * PG, MADV_DODUMP), "%s: DODUMP", ctx);
	else
		ok(!madvise(pg(4), 4 * PG, MADV_DONTDUMP), "%s: DONTDUMP", ctx);
	expect_layout(ctx, merged ? "0-8" : "0-4 4-8");
	expect_sd(ctx, 0, merged ? "11111111" : "00001111");
	expect_avs(ctx, merged ? "a" : "ab");
	expect_data(ctx, 0, tags, 8);
	verified(ctx);
	if (merged)
		expect_counters(ctx, &s, C_VMAS_TP, 1L, C_MERGE_TP, 1L, -1);
	else if (tp_on())
		expect_counters(ctx, &s, C_R_SOFTDIRTY, 1L, -1);
	else
		expect_counters(ctx, &s, -1);
}

int main(int argc, char **argv)
{
	struct utsname u;

	if (mode_init(argc, argv, "t_edges", 300, &stock, &renumber_only, NULL,
		      &vfd))
		return 2;
	is61 = !uname(&u) && !strncmp(u.release, "6.1.", 4);
	nostats = stats_counter("merge_attempts") == -1;
	if (nostats)
		diag("no %s: counters not checked", DBG_STATS);
	zfd = open("/dev/zero", O_RDWR);
	pmfd = open("/proc/self/pagemap", O_RDONLY);
	if (!ok(zfd >= 0 && pmfd >= 0, "open /dev/zero, /proc/self/pagemap"))
		return tap_exit();
	W = aligned_window(WIN_PAGES * PG);
	if (!ok(W != NULL, "window"))
		return tap_exit();

	t_zero_moved();
	t_anon_after_zero();
	t_mprotect_next_to_zero();
	t_mmap_next_to_zero();
	t_sd_mremap();
	t_sd_mmap();
	t_sd_madvise(1);
	t_sd_madvise(0);
	munmap(W, WIN_PAGES * PG);
	return tap_exit();
}
