// SPDX-License-Identifier: GPL-2.0
/*
 * Standalone reproducer of a stock kernel state in which rmap cannot
 * reach some pages of a large folio (docs/findings.md, "The stock kernel
 * hides a misaligned THP's pages from rmap by itself").  No merge of
 * vmamerge's: the process is not opted in; the module is used only for
 * its rmap verifier (VMAMERGE_IOC_VERIFY on this process).
 *
 *  1. map 4 MiB at a 2 MiB boundary, write every page (two THPs with THP
 *     "always", else the test skips);
 *  2. move the second THP 32 KiB past another 2 MiB boundary B: the move
 *     maps it by PTEs (a large folio, not PMD-aligned);
 *  3. move the last 8 pages of the first THP's range right below it, to
 *     B: same anon_vma, page offsets that continue - the stock merge
 *     makes one VMA of them, which covers the PMD at B whole;
 *  4. MADV_COLLAPSE of that PMD: the collapse replaces the pages there by
 *     a new THP; the moved folio's last 8 pages, above the PMD, stay
 *     mapped by PTEs, and rmap's walk for that folio starts inside the
 *     new THP's PMD and stops there (page_vma_mapped_walk()).
 * The verifier is clean before step 4; after it, with -e hidden (the
 * kernel is known to have it, 6.1.192 and 6.12.117), it must report the
 * 8 pages unreachable (VMAMERGE_VIOL_TREE: the walk stops at a huge
 * PMD); without -e it must be clean (a kernel that no longer lets this
 * happen).  Every page reads back
 * byte-exact either way.  Skips without THP "always", when the collapse
 * fails (no free huge page) or without the module's verifier.
 *
 *   repro_thp_hidden [-e hidden]
 */
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif
#ifndef MREMAP_FIXED
#define MREMAP_FIXED	2
#endif

#define PG		4096UL
#define HPG		(2UL << 20)
#define HPG_PAGES	(HPG / PG)
#define TAIL		8UL		/* pages moved below the THP */

static char *W;			/* 16 MiB, 2 MiB aligned */

/* The verifier's result for this process; -errno when it cannot run. */
static int verify(struct vmamerge_verify *v)
{
	int fd = vm_open(O_RDONLY), r;

	if (fd < 0)
		return fd;
	r = vm_verify(fd, VMAMERGE_TARGET_SELF, 0, v);
	close(fd);
	return r;
}

/* The pages of the second THP, at @thp, and the eight at @tail intact. */
static int data_ok(const char *ctx, const char *thp, const char *tail)
{
	unsigned long i, off;

	for (i = 0; i < HPG_PAGES; i++)
		if (page_check(thp + i * PG, HPG_PAGES + i, &off))
			return ok(0, "%s: page %lu of the moved THP byte-exact", ctx, i);
	for (i = 0; i < TAIL; i++)
		if (page_check(tail + i * PG, HPG_PAGES - TAIL + i, &off))
			return ok(0, "%s: moved page %lu byte-exact", ctx, i);
	return ok(1, "%s: every page byte-exact", ctx);
}

int main(int argc, char **argv)
{
	int expect_hidden = argc == 3 && !strcmp(argv[1], "-e") &&
			    !strcmp(argv[2], "hidden");
	char *a, *b, *x, *base;
	struct vmamerge_verify v;
	unsigned long i;
	char thp[16] = "";
	int r;

	tap_init("repro_thp_hidden", 120);
	if (argc != 1 && !expect_hidden)
		return fprintf(stderr, "usage: repro_thp_hidden [-e hidden]\n"), 2;
	read_file("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof(thp));
	if (!strstr(thp, "[always]")) {
		skip("THP is not \"always\"", "stock THP hiding");
		return tap_exit();
	}
	base = mmap(NULL, 9 * HPG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ok(base != MAP_FAILED, "a 18 MiB window"))
		return tap_exit();
	W = (char *)(((unsigned long)base + HPG - 1) & ~(HPG - 1));
	a = W;
	b = W + 4 * HPG;
	x = b + TAIL * PG;
	if (!ok(mmap(a, 2 * HPG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == a,
		"mmap 4 MiB at a 2 MiB boundary"))
		return tap_exit();
	for (i = 0; i < 2 * HPG_PAGES; i++)
		page_fill(a + i * PG, i);
	ok(mremap(a + HPG, HPG, HPG, MREMAP_MAYMOVE | MREMAP_FIXED, x) == x,
	   "the second THP moved 32 KiB past a 2 MiB boundary");
	ok(mremap(a + HPG - TAIL * PG, TAIL * PG, TAIL * PG,
		  MREMAP_MAYMOVE | MREMAP_FIXED, b) == b,
	   "the first THP's last 8 pages moved right below it");
	ok(vmas_in(b, x + HPG) == 1,
	   "the stock merge made one VMA of them, covering the PMD at the boundary");
	data_ok("before the collapse", x, b);
	r = verify(&v);
	if (r) {
		skip(errname(-r), "the verifier (module loaded?)");
		return tap_exit();
	}
	ok(!v.nr_violations, "before the collapse: the verifier is clean (%llu pages)",
	   (unsigned long long)v.nr_pages);
	if (madvise(b, HPG, MADV_COLLAPSE)) {
		skip(errname(errno), "MADV_COLLAPSE of the PMD at the boundary");
		return tap_exit();
	}
	data_ok("after the collapse", x, b);
	r = verify(&v);
	if (expect_hidden)
		ok(!r && v.nr_violations == TAIL && v.kind == VMAMERGE_VIOL_TREE &&
		   v.addr == (unsigned long)b + HPG,
		   "after the collapse: the folio's %lu pages above the PMD are unreachable by rmap (%llu violations, the first %s at %#llx)",
		   TAIL, (unsigned long long)v.nr_violations,
		   vm_violation_name(v.kind), (unsigned long long)v.addr);
	else
		ok(!r && !v.nr_violations,
		   "after the collapse: the verifier is clean (%llu violations, the first %s)",
		   (unsigned long long)v.nr_violations, vm_violation_name(v.kind));
	if (v.nr_violations)
		diag("%s", v.msg);
	return tap_exit();
}
