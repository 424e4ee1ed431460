// SPDX-License-Identifier: GPL-2.0
/*
 * micro: per-call cost of the system calls whose merge paths the livepatch
 * replaces.  Every operation is run in batches of K iterations; the
 * operations take turns batch by batch (B rounds), so that slow drift of
 * the (emulated) machine hits all of them alike.  Each batch gives one
 * ns-per-call figure; the output has the median, minimum and maximum of
 * the B batches per operation, one JSON line each.
 *
 * The configurations of BENCH_INPROC (bench.h) take turns too: in each
 * round every configuration runs one batch of every operation, so
 * "not opted in" and "opted in" are compared a few milliseconds apart.
 * The counters (global deltas over this process's batches) are reported
 * once per configuration, on its "mmap" line.
 *
 *   mmap          mmap(1 page) next to the previous one (merges with it);
 *                 the pages are unmapped outside the timed batch
 *   munmap        munmap of one-page VMAs (set up outside the batch)
 *   mprotect      a written 3-page VMA: middle page read-only and back
 *                 (split, then merge)
 *   madvise       the same with MADV_RANDOM / MADV_NORMAL
 *   mremap_move   a written page moved between two places and back
 *   mremap_grow   a written page grown in place to 2 pages, shrunk again
 *   brk           the heap grown by one page and shrunk again
 */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

enum { OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MADVISE, OP_MREMAP_MOVE,
       OP_MREMAP_GROW, OP_BRK, NR_OPS };
static const char *const op_names[NR_OPS] = {
	"mmap", "munmap", "mprotect", "madvise", "mremap_move", "mremap_grow",
	"brk",
};

static int K = 256;
static char **pages;		/* K page addresses */
static char *rw3;		/* 3-page region for mprotect/madvise */
static char *mv_a, *mv_b;	/* two places for mremap_move */
static char *gr;		/* grows into a free page */
static unsigned long heap;	/* brk base + 1 page */
static unsigned long scratch;	/* free range of 2K pages for munmap */

static char *map_at(unsigned long addr, unsigned long len)
{
	char *p = mmap((void *)addr, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS |
		       (addr ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(p, 1, len);
	return p;
}

static void setup(void)
{
	unsigned long r = free_range(64 * PAGE, PMD_SZ);

	pages = calloc(K, sizeof(*pages));
	rw3 = map_at(r, 3 * PAGE);		/* r .. r+3 */
	mv_a = map_at(r + 8 * PAGE, PAGE);	/* r+8 */
	mv_b = (char *)(r + 16 * PAGE);		/* r+16, free */
	gr = map_at(r + 24 * PAGE, PAGE);	/* r+24, r+25 free */
	scratch = free_range(2 * K * PAGE, PMD_SZ);
	heap = syscall(SYS_brk, 0);
	if (syscall(SYS_brk, heap + PAGE) != (long)(heap + PAGE))
		die("brk");
	heap += PAGE;
	*(char *)(heap - PAGE) = 1;
}

static uint64_t batch(int op)
{
	uint64_t t0, t1;
	int i, calls = 2 * K;

	switch (op) {
	case OP_MMAP:
		t0 = now_ns();
		for (i = 0; i < K; i++) {
			pages[i] = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (pages[i] == MAP_FAILED)
				die("mmap: %s", strerror(errno));
		}
		t1 = now_ns();
		for (i = 0; i < K; i++)
			munmap(pages[i], PAGE);
		calls = K;
		break;
	case OP_MUNMAP:
		for (i = 0; i < K; i++)
			pages[i] = mmap((void *)(scratch + 2 * i * PAGE), PAGE,
					PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS |
					MAP_FIXED_NOREPLACE, -1, 0);
		t0 = now_ns();
		for (i = 0; i < K; i++)
			if (munmap(pages[i], PAGE))
				die("munmap: %s", strerror(errno));
		t1 = now_ns();
		calls = K;
		break;
	case OP_MPROTECT:
		t0 = now_ns();
		for (i = 0; i < K; i++) {
			mprotect(rw3 + PAGE, PAGE, PROT_READ);
			mprotect(rw3 + PAGE, PAGE, PROT_READ | PROT_WRITE);
		}
		t1 = now_ns();
		break;
	case OP_MADVISE:
		t0 = now_ns();
		for (i = 0; i < K; i++) {
			madvise(rw3 + PAGE, PAGE, MADV_RANDOM);
			madvise(rw3 + PAGE, PAGE, MADV_NORMAL);
		}
		t1 = now_ns();
		break;
	case OP_MREMAP_MOVE:
		t0 = now_ns();
		for (i = 0; i < K; i++) {
			if (mremap(mv_a, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
				   mv_b) == MAP_FAILED ||
			    mremap(mv_b, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
				   mv_a) == MAP_FAILED)
				die("mremap: %s", strerror(errno));
		}
		t1 = now_ns();
		break;
	case OP_MREMAP_GROW:
		t0 = now_ns();
		for (i = 0; i < K; i++) {
			if (mremap(gr, PAGE, 2 * PAGE, 0) == MAP_FAILED ||
			    mremap(gr, 2 * PAGE, PAGE, 0) == MAP_FAILED)
				die("mremap grow: %s", strerror(errno));
		}
		t1 = now_ns();
		break;
	case OP_BRK:
		t0 = now_ns();
		for (i = 0; i < K; i++) {
			syscall(SYS_brk, heap + PAGE);
			syscall(SYS_brk, heap);
		}
		t1 = now_ns();
		break;
	default:
		die("op %d", op);
	}
	return (t1 - t0) / calls;
}

int main(int argc, char **argv)
{
	int B = 15, opt, b, op, ci, nc;
	uint64_t *res[BENCH_MAX_CFG][NR_OPS];
	uint64_t cb[VMAMERGE_NR_COUNTERS], ca[VMAMERGE_NR_COUNTERS];
	uint64_t zero[VMAMERGE_NR_COUNTERS] = { 0 };
	static uint64_t acc[BENCH_MAX_CFG][VMAMERGE_NR_COUNTERS];
	const char *cfg[BENCH_MAX_CFG];
	int i;

	while ((opt = getopt(argc, argv, "k:b:")) != -1) {
		switch (opt) {
		case 'k': K = atoi(optarg); break;
		case 'b': B = atoi(optarg); break;
		default: die("usage: micro [-k ITER] [-b BATCHES]");
		}
	}
	if (K < 1 || B < 1)
		die("bad -k/-b");
	nc = bench_inproc_configs(cfg);
	setup();
	for (ci = 0; ci < nc; ci++)
		for (op = 0; op < NR_OPS; op++)
			res[ci][op] = calloc(B, sizeof(uint64_t));
	for (ci = 0; ci < nc; ci++) {		/* warm-up round */
		bench_set_config(cfg[ci]);
		for (op = 0; op < NR_OPS; op++)
			batch(op);
	}
	for (b = 0; b < B; b++) {
		for (ci = 0; ci < nc; ci++) {
			bench_set_config(cfg[ci]);
			bench_counters(1, cb);
			for (op = 0; op < NR_OPS; op++)
				res[ci][op][b] = batch(op);
			bench_counters(1, ca);
			for (i = 0; i < VMAMERGE_NR_COUNTERS; i++)
				acc[ci][i] += ca[i] - cb[i];
		}
	}
	for (ci = 0; ci < nc; ci++) {
		for (op = 0; op < NR_OPS; op++) {
			uint64_t mn = res[ci][op][0], mx = res[ci][op][0];

			for (b = 1; b < B; b++) {
				mn = res[ci][op][b] < mn ? res[ci][op][b] : mn;
				mx = res[ci][op][b] > mx ? res[ci][op][b] : mx;
			}
			j_begin_cfg("micro", cfg[ci]);
			j_str("op", op_names[op]);
			j_int("iters", K);
			j_int("batches", B);
			j_u64("median_ns", median_u64(res[ci][op], B));
			j_u64("min_ns", mn);
			j_u64("max_ns", mx);
			if (op == 0)	/* counters of all the operations */
				j_counters("counters", zero, acc[ci]);
			j_end();
		}
	}
	return 0;
}
