// SPDX-License-Identifier: GPL-2.0
/*
 * Standalone reproducer of the kernel bug behind the torture's seed-1
 * finding (docs/testing.md, "The seed-1 finding"): MADV_FREE in one
 * process makes an anonymous page it shares with another process (after
 * fork) lazy-free, and reclaim then discards the other process's only
 * copy of the data.  No vmamerge involvement: run it without the module.
 *
 * The page must be shared and clean in every sense the kernel looks at:
 * read back from a swap device with SWP_SYNCHRONOUS_IO (zram) by a read
 * fault, which skips the swap cache, frees the swap slot and maps the
 * page with a clean PTE without marking the folio dirty.
 * madvise_free_pte_range() asks "is this folio mapped elsewhere?" only for
 * folios that are dirty or in the swap cache, so it clears the caller's
 * PTE and calls folio_mark_lazyfree() on the shared folio.  When the other
 * process's mapping is the last one left (the caller exited, unmapped or
 * broke COW), MADV_PAGEOUT (or any reclaim) finds a lazy-free folio with
 * only clean PTEs and drops it: the page then reads as zeros.
 *
 *   repro_lazyfree [-e kept|lost] [-n PAGES]
 *
 * Cases (each on its own PAGES-page mapping, MADV_NOHUGEPAGE):
 *   child-free   parent: write, MADV_PAGEOUT, read back (swap-in by read
 *                fault); fork; child: MADV_FREE, exit; parent:
 *                MADV_PAGEOUT, read: the bug loses the parent's data
 *   parent-free  the same swap-in, fork; parent: MADV_FREE, munmap;
 *                child: MADV_PAGEOUT, read: the bug loses the child's data
 *   write-swapin control: child-free with the swap-in by a write fault (a
 *                dirty PTE): kept on every kernel
 *   no-free      control: child-free without the child's MADV_FREE: kept
 *
 * Without -e every case must keep its data (a plain correctness test).
 * -e lost: the kernel is known to have the bug: both bug cases must lose
 * data and both controls keep it (a change means the kernel was fixed or
 * the mechanism is not the one documented); -e kept: all must keep it.
 * Skips when no swap is active or MADV_PAGEOUT swaps nothing out.
 */
#include "tap.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

#define PG		4096UL
#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_EXCLUSIVE	(1ULL << 56)

static unsigned long npages = 16;

/* what a range looks like in /proc/self/pagemap */
struct pmstate {
	unsigned long present, swapped, none, exclusive;
};

static int pagemap_state(const char *a, unsigned long n, struct pmstate *st)
{
	uint64_t e;
	unsigned long i;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return -1;
	for (i = 0; i < n; i++) {
		off_t off = ((unsigned long)a / PG + i) * sizeof(e);

		if (pread(fd, &e, sizeof(e), off) != sizeof(e)) {
			close(fd);
			return -1;
		}
		if (e & PM_PRESENT)
			st->present++;
		else if (e & PM_SWAP)
			st->swapped++;
		else
			st->none++;
		if (e & PM_EXCLUSIVE)
			st->exclusive++;
	}
	close(fd);
	return 0;
}

static const char *pmstr(const char *a, unsigned long n)
{
	static char buf[120];
	struct pmstate st;

	if (pagemap_state(a, n, &st))
		return "pagemap unreadable";
	snprintf(buf, sizeof(buf), "present %lu (exclusive %lu), swapped %lu, none %lu",
		 st.present, st.exclusive, st.swapped, st.none);
	return buf;
}

/* pages of [a, a+n) that read as all zeros, intact, or something else */
struct verdict {
	unsigned long zero, intact, other;
};

static void check_pages(const char *a, unsigned long n, unsigned int tag0,
			struct verdict *v)
{
	unsigned long i;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < n; i++) {
		if (!page_check(a + i * PG, tag0 + i, NULL))
			v->intact++;
		else if (!page_check(a + i * PG, 0, NULL))
			v->zero++;
		else
			v->other++;
	}
}

enum { C_CHILD_FREE, C_PARENT_FREE, C_WRITE_SWAPIN, C_NO_FREE, C_NR };

static const char *const names[C_NR] = {
	"child-free", "parent-free", "write-swapin", "no-free",
};

/*
 * A fresh mapping, written, swapped out and swapped back in (by a read
 * or a write fault).  Returns it, or NULL (reported as a skip or failure).
 */
static char *stage(int c, unsigned int tag0, int write_fault)
{
	char *a = mmap(NULL, npages * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pmstate st;
	unsigned long i;

	if (a == MAP_FAILED) {
		ok(0, "%s: mmap: %s", names[c], strerror(errno));
		return NULL;
	}
	/* small folios: THP splits are not part of this story */
	madvise(a, npages * PG, MADV_NOHUGEPAGE);
	for (i = 0; i < npages; i++)
		page_fill(a + i * PG, tag0 + i);
	if (madvise(a, npages * PG, MADV_PAGEOUT)) {
		ok(0, "%s: MADV_PAGEOUT: %s", names[c], strerror(errno));
		return NULL;
	}
	if (pagemap_state(a, npages, &st) || st.swapped != npages) {
		skip("MADV_PAGEOUT did not swap every page out", "%s: %s",
		     names[c], pmstr(a, npages));
		munmap(a, npages * PG);
		return NULL;
	}
	for (i = 0; i < npages; i++) {
		volatile char *p = a + i * PG;

		if (write_fault)
			p[0] = p[0];
		else
			(void)p[0];
	}
	diag("%s: swapped in by %s faults: %s", names[c],
	     write_fault ? "write" : "read", pmstr(a, npages));
	return a;
}

static int wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/*
 * Runs case c; returns the number of pages that lost their data, or -1
 * (reported) if the case could not run.
 */
static long run_case(int c)
{
	unsigned int tag0 = 1 + c * 1000;
	long lf0 = vmstat_counter("pglazyfreed"), lf1;
	struct verdict v;
	int pfd[2], rc;
	char *a;
	pid_t pid;

	a = stage(c, tag0, c == C_WRITE_SWAPIN);
	if (!a)
		return -1;
	if (c == C_PARENT_FREE && pipe(pfd)) {
		ok(0, "%s: pipe: %s", names[c], strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		ok(0, "%s: fork: %s", names[c], strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char ch;

		if (c != C_PARENT_FREE) {
			if (c != C_NO_FREE && madvise(a, npages * PG, MADV_FREE))
				_exit(254);
			_exit(0);
		}
		/* parent-free: wait until the parent freed and unmapped */
		close(pfd[1]);
		while (read(pfd[0], &ch, 1) < 0 && errno == EINTR)
			;
		if (madvise(a, npages * PG, MADV_PAGEOUT))
			_exit(254);
		check_pages(a, npages, tag0, &v);
		_exit(v.other ? 253 : (int)v.zero);
	}
	if (c == C_PARENT_FREE) {
		close(pfd[0]);
		if (madvise(a, npages * PG, MADV_FREE) || munmap(a, npages * PG)) {
			ok(0, "%s: MADV_FREE/munmap in the parent: %s", names[c],
			   strerror(errno));
			return -1;
		}
		close(pfd[1]);
		rc = wait_child(pid);
		lf1 = vmstat_counter("pglazyfreed");
		if (rc >= 253) {
			ok(0, "%s: the child failed (exit %d: %s)", names[c], rc,
			   rc == 253 ? "a page held other data" : "madvise failed");
			return -1;
		}
		diag("%s: the child's pages after its MADV_PAGEOUT: %d of %lu read as "
		     "zeros; pglazyfreed +%ld", names[c], rc, npages, lf1 - lf0);
		return rc;
	}
	rc = wait_child(pid);
	if (rc) {
		ok(0, "%s: the child failed (exit %d)", names[c], rc);
		return -1;
	}
	diag("%s: after the child: %s", names[c], pmstr(a, npages));
	if (madvise(a, npages * PG, MADV_PAGEOUT)) {
		ok(0, "%s: MADV_PAGEOUT: %s", names[c], strerror(errno));
		return -1;
	}
	lf1 = vmstat_counter("pglazyfreed");
	diag("%s: after the parent's MADV_PAGEOUT: %s; pglazyfreed +%ld",
	     names[c], pmstr(a, npages), lf1 - lf0);
	check_pages(a, npages, tag0, &v);
	munmap(a, npages * PG);
	if (v.other) {
		ok(0, "%s: %lu pages hold other data (neither theirs nor zeros)",
		   names[c], v.other);
		return -1;
	}
	diag("%s: %lu of %lu pages read as zeros", names[c], v.zero, npages);
	return v.zero;
}

static int swap_active(void)
{
	char buf[4096], *nl;

	if (read_file("/proc/swaps", buf, sizeof(buf)) <= 0)
		return 0;
	nl = strchr(buf, '\n');
	return nl && nl[1];
}

int main(int argc, char **argv)
{
	const char *expect = NULL;
	int c, o;

	while ((o = getopt(argc, argv, "e:n:")) != -1) {
		switch (o) {
		case 'e': expect = optarg; break;
		case 'n': npages = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: repro_lazyfree [-e kept|lost] [-n PAGES]\n");
			return 2;
		}
	}
	if (!npages || (expect && strcmp(expect, "kept") && strcmp(expect, "lost"))) {
		fprintf(stderr, "usage: repro_lazyfree [-e kept|lost] [-n PAGES]\n");
		return 2;
	}
	tap_init("repro_lazyfree", 120);
	if (!swap_active()) {
		skip("no swap active", "MADV_FREE of a shared page after swap-in");
		return tap_exit();
	}
	for (c = 0; c < C_NR; c++) {
		int bug = c == C_CHILD_FREE || c == C_PARENT_FREE;
		int want_lost = expect && !strcmp(expect, "lost") && bug;
		long lost = run_case(c);

		if (lost < 0)
			continue;
		ok(want_lost ? lost > 0 : lost == 0,
		   "%s: %ld of %lu pages lost (expected: %s)", names[c], lost,
		   npages, want_lost ? "lost, known kernel bug" : "none");
	}
	return tap_exit();
}
