// SPDX-License-Identifier: GPL-2.0
/*
 * Standalone reproducer of a suspected kernel bug (docs/testing.md, "The
 * 6.1 data failure without the module"): MADV_FREE makes a KSM page
 * lazy-free, KSM later merges another page into it, and reclaim then
 * discards the page that other mapping still needs.  No vmamerge
 * involvement: run it without the module.
 *
 * madvise_free_pte_range() clears the dirty flag of a folio mapped once
 * (a KSM page whose other mappings went away is one) and marks it
 * lazy-free.  KSM's stable tree still holds it, keyed by its contents; a
 * page with the same contents is merged into it by replace_page(), which
 * maps the KSM page with a clean PTE and leaves the folio clean.  Once
 * that mapping is the only one left, reclaim (here MADV_PAGEOUT) finds a
 * lazy-free folio with no dirty PTE and frees it: the page that was
 * merged reads as zeros.  A page that becomes a KSM page after the
 * MADV_FREE is safe: KSM marks a new KSM page dirty.
 *
 *   repro_ksm_lazyfree [-e kept|lost]
 *
 * Cases (each on its own 3-page mapping, MADV_NOHUGEPAGE, MADV_MERGEABLE;
 * pages A, B, C):
 *   free-kpage  A and B written alike and merged by KSM (page K); A
 *               rewritten (K is now B's alone); MADV_FREE of B; C written
 *               like B and merged into K; B dropped (MADV_DONTNEED);
 *               MADV_PAGEOUT of C; read C: the bug loses it
 *   no-free     control: the same without the MADV_FREE: kept
 *
 * Without -e both must keep C's data.  -e lost: the kernel is known to
 * have the bug - free-kpage must lose C (in one of LOST_TRIES runs) and
 * no-free keep it; -e kept: both must keep it.  Skips without KSM, swap-independent (a lazy-free page
 * needs no swap to be dropped).
 */
#include "tap.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

#define PG		4096UL
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define KPF_KSM		21
#define KSM		"/sys/kernel/mm/ksm/"
#define LOST_TRIES	3	/* runs of the case that must lose C */

/* the PFN mapped at @a, 0 when not present (root reads PFNs) */
static uint64_t pfn_of(const void *a)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (uintptr_t)a / PG * sizeof(e)) != sizeof(e))
		e = 0;
	close(fd);
	return (e & PM_PRESENT) ? e & PM_PFN_MASK : 0;
}

static int pfn_is_ksm(uint64_t pfn)
{
	uint64_t f = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &f, sizeof(f), pfn * sizeof(f)) != sizeof(f))
		f = 0;
	close(fd);
	return !!(f & (1ULL << KPF_KSM));
}

/* waits up to 30 s for the pages at @a and @b to share one KSM page */
static int wait_merged(const char *a, const char *b)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i;

	for (i = 0; i < 1500; i++) {
		uint64_t pa = pfn_of(a), pb = pfn_of(b);

		if (pa && pa == pb && pfn_is_ksm(pa))
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

static void fill(char *p, int byte)
{
	memset(p, byte, PG);
}

/* pages of C: 1 if it reads as @byte, 0 if all zeros, -1 otherwise */
static int page_state(const char *p, int byte)
{
	unsigned long i, same = 0, zero = 0;

	for (i = 0; i < PG; i++) {
		same += (unsigned char)p[i] == (unsigned char)byte;
		zero += !p[i];
	}
	return same == PG ? 1 : zero == PG ? 0 : -1;
}

enum { C_FREE_KPAGE, C_NO_FREE, C_NR };
static const char *const names[C_NR] = { "free-kpage", "no-free" };

/* runs case @c: 1 if C lost its data, 0 if kept, -1 if it could not run */
static int run_case(int c)
{
	long lf0 = vmstat_counter("pglazyfreed"), lf1;
	char *m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a = m, *b = m + PG, *cc = m + 2 * PG;
	int byte = 0x5a + c, st;

	if (m == MAP_FAILED) {
		ok(0, "%s: mmap: %s", names[c], strerror(errno));
		return -1;
	}
	madvise(m, 3 * PG, MADV_NOHUGEPAGE);
	fill(a, byte);
	fill(b, byte);
	fill(cc, 0x11 + c);	/* unlike A and B until later */
	if (madvise(m, 3 * PG, MADV_MERGEABLE)) {
		skip("no KSM", "%s: MADV_MERGEABLE: %s", names[c], strerror(errno));
		munmap(m, 3 * PG);
		return -1;
	}
	if (wait_merged(a, b)) {
		skip("KSM did not merge two equal pages in 30 s", "%s", names[c]);
		munmap(m, 3 * PG);
		return -1;
	}
	a[0] = 0x7f;		/* copy on write: K is B's alone */
	if (c == C_FREE_KPAGE && madvise(b, PG, MADV_FREE)) {
		ok(0, "%s: MADV_FREE: %s", names[c], strerror(errno));
		return -1;
	}
	fill(cc, byte);
	if (wait_merged(b, cc)) {
		skip("KSM did not merge C into B's KSM page in 30 s", "%s",
		     names[c]);
		munmap(m, 3 * PG);
		return -1;
	}
	madvise(b, PG, MADV_DONTNEED);	/* K is C's alone */
	if (madvise(cc, PG, MADV_PAGEOUT)) {
		ok(0, "%s: MADV_PAGEOUT: %s", names[c], strerror(errno));
		return -1;
	}
	lf1 = vmstat_counter("pglazyfreed");
	st = page_state(cc, byte);
	diag("%s: C after MADV_PAGEOUT: %s; pglazyfreed +%ld", names[c],
	     st == 1 ? "intact" : st == 0 ? "zeros" : "other data", lf1 - lf0);
	munmap(m, 3 * PG);
	if (st < 0) {
		ok(0, "%s: C holds other data (neither its own nor zeros)",
		   names[c]);
		return -1;
	}
	return st == 0;
}

/* KSM on and scanning fast; the old settings go back at the end */
static char old_run[16], old_sleep[16], old_pages[16];

static int ksm_start(void)
{
	if (read_file(KSM "run", old_run, sizeof(old_run)) <= 0 ||
	    read_file(KSM "sleep_millisecs", old_sleep, sizeof(old_sleep)) <= 0 ||
	    read_file(KSM "pages_to_scan", old_pages, sizeof(old_pages)) <= 0)
		return -1;
	if (write_file(KSM "sleep_millisecs", "10", 2) ||
	    write_file(KSM "pages_to_scan", "1000", 4) ||
	    write_file(KSM "run", "1", 1))
		return -1;
	return 0;
}

static void ksm_restore(void)
{
	write_file(KSM "pages_to_scan", old_pages, strlen(old_pages));
	write_file(KSM "sleep_millisecs", old_sleep, strlen(old_sleep));
	write_file(KSM "run", old_run, strlen(old_run));
}

int main(int argc, char **argv)
{
	const char *expect = NULL;
	int c, o;

	while ((o = getopt(argc, argv, "e:")) != -1) {
		if (o != 'e') {
			fprintf(stderr, "usage: repro_ksm_lazyfree [-e kept|lost]\n");
			return 2;
		}
		expect = optarg;
	}
	if (expect && strcmp(expect, "kept") && strcmp(expect, "lost")) {
		fprintf(stderr, "usage: repro_ksm_lazyfree [-e kept|lost]\n");
		return 2;
	}
	tap_init("repro_ksm_lazyfree", 300);	/* 4 runs of up to 60 s of KSM waits */
	if (ksm_start()) {
		skip("no KSM control in sysfs", "MADV_FREE of a KSM page");
		return tap_exit();
	}
	for (c = 0; c < C_NR; c++) {
		int want_lost = expect && !strcmp(expect, "lost") &&
				c == C_FREE_KPAGE;
		int lost = run_case(c), tries = 1;

		/*
		 * The loss depends on reclaim finding the lazy-free folio
		 * clean and isolated at MADV_PAGEOUT: on a loaded host it
		 * once kept C (pglazyfreed +0).  A kernel with the bug loses
		 * it in one of LOST_TRIES runs; a fixed one in none.
		 */
		while (want_lost && lost == 0 && tries++ < LOST_TRIES) {
			diag("%s: C kept, try %d of %d", names[c], tries,
			     LOST_TRIES);
			lost = run_case(c);
		}
		if (lost < 0)
			continue;
		ok(want_lost ? lost : !lost, "%s: C %s (expected: %s)", names[c],
		   lost ? "lost" : "kept",
		   want_lost ? "lost, known kernel bug" : "kept");
	}
	ksm_restore();
	return tap_exit();
}
