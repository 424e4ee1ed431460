// SPDX-License-Identifier: GPL-2.0
/*
 * t_realloc: a program that runs into vm.max_map_count the way the
 * reports describe it (docs/testing.md, "The map count limit"):
 * many buffers grown with glibc's realloc() as data arrives for one or
 * another, then worker threads.
 *
 *   t_realloc [-v] [BLOCKS [GROWTHS [THREADS]]]      (default 1500 1500 64)
 *
 * BLOCKS buffers are allocated in turn; then GROWTHS times one of them,
 * picked by a fixed pseudo-random sequence (the same on every run), grows
 * by 16 KiB; then THREADS threads check the buffers.
 *
 * glibc allocates a block above the mmap threshold (128 KiB, fixed here
 * with mallopt as a program tuning its allocator would) with mmap() and
 * grows it with mremap(MREMAP_MAYMOVE).  Fresh blocks lie side by side
 * in one VMA; a block whose upper neighbour is in the way moves, keeps the
 * page offsets of where it was first mapped and stays apart from whatever
 * it lands next to - on a stock kernel every block ends as a VMA of its
 * own.  Near the limit mremap() fails with ENOMEM, and so do glibc's
 * fallbacks (a new mmap() to copy into, then brk()): the limit refuses
 * them too, realloc() returns NULL and the program cannot go on - "out of
 * memory" with most of the memory free, as in the reports of allocators,
 * runtimes and databases that tell their users to raise vm.max_map_count.
 * A program that got past its growth would fail in pthread_create() (a
 * stack and its guard page: EAGAIN) instead.
 *
 * Every block holds a pattern of its own and every byte is checked after
 * each growth and again by the threads (each checks its share).  -v (the
 * tests, as root with the module loaded): the rmap verifier checks the
 * process after the growth and at the end.
 *
 * Output (stdout, one line each):
 *   grown: B blocks, G growths, V VMAs, R ranges  (R: stretches without
 *          a hole, the fewest VMAs merging could leave)
 *   rmap: clean (after growing|at the end)                 (-v)
 *   done: T threads checked B blocks, V VMAs               (exit 0)
 * or   "t_realloc: CALL: ERROR (V VMAs)" on stderr         (exit 1)
 *      "t_realloc: block I byte J: X, expected Y"          (exit 1)
 *      "t_realloc: rmap (WHEN): ..."                        (exit 1, -v)
 * Exit 2: usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

/* the first size: one page above the threshold; each growth adds GROW */
#define THRESHOLD	(128UL << 10)
#define FIRST		(THRESHOLD + (4UL << 10))
#define GROW		(16UL << 10)

static unsigned char **block;
static size_t *block_len;
static unsigned long nblocks, nthreads;

/*
 * The lines of /proc/self/maps (the VMAs and the vsyscall page); *ranges
 * (when not NULL): how many stretches of address space without a hole
 * they form - the fewest VMAs any merging could leave.
 */
static int count_vmas_ranges(int *ranges)
{
	unsigned long start, end, prev_end = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, r = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		n++;
		r += start != prev_end;
		prev_end = end;
	}
	fclose(f);
	if (ranges)
		*ranges = r;
	return n;
}

static int count_vmas(void)
{
	return count_vmas_ranges(NULL);
}

static unsigned char pattern(unsigned long i, size_t j)
{
	return (unsigned char)(i * 7 + j + j / 4096);
}

/* 0 when bytes [from, to) of block i hold its pattern */
static int check(unsigned long i, size_t from, size_t to)
{
	size_t j;

	for (j = from; j < to; j++) {
		if (block[i][j] != pattern(i, j)) {
			fprintf(stderr, "t_realloc: block %lu byte %zu: %u, expected %u\n",
				i, j, block[i][j], pattern(i, j));
			return 1;
		}
	}
	return 0;
}

/* grow block i by len bytes (its first allocation when it has none) */
static int grow(unsigned long i, size_t len)
{
	size_t old = block_len[i], j;
	unsigned char *p = realloc(block[i], old + len);

	if (!p) {
		int e = errno;

		fprintf(stderr, "t_realloc: realloc: %s (%d VMAs)\n",
			strerror(e), count_vmas());
		return 1;
	}
	block[i] = p;
	if (check(i, 0, old))
		return 1;
	for (j = old; j < old + len; j++)
		p[j] = pattern(i, j);
	block_len[i] = old + len;
	return 0;
}

/* a worker: checks every nthreads-th block from its number on */
static void *worker(void *arg)
{
	unsigned long i;

	for (i = (unsigned long)arg; i < nblocks; i += nthreads)
		if (check(i, 0, block_len[i]))
			return (void *)1;
	return NULL;
}

static int start_workers(void)
{
	pthread_t *t = calloc(nthreads, sizeof(*t));
	unsigned long i, started;
	void *res;
	int err = 0, bad = 0;

	if (!t)
		return 1;
	for (started = 0; started < nthreads; started++) {
		err = pthread_create(&t[started], NULL, worker,
				     (void *)started);
		if (err) {
			fprintf(stderr, "t_realloc: pthread_create %lu of %lu: %s (%d VMAs)\n",
				started + 1, nthreads, strerror(err),
				count_vmas());
			break;
		}
	}
	for (i = 0; i < started; i++) {
		pthread_join(t[i], &res);
		bad |= res != NULL;
	}
	free(t);
	return err || bad;
}

/* -v: the verifier's verdict on this process, printed; 0 when clean */
static int verify(const char *when)
{
	struct vmamerge_verify v;
	int fd = vm_open(O_RDONLY), r;

	if (fd < 0) {
		fprintf(stderr, "t_realloc: rmap (%s): open: %s\n", when,
			errname(-fd));
		return 1;
	}
	r = vm_verify(fd, VMAMERGE_TARGET_SELF, 0, &v);
	close(fd);
	if (r) {
		fprintf(stderr, "t_realloc: rmap (%s): verify: %s\n", when,
			errname(-r));
		return 1;
	}
	if (v.nr_violations) {
		v.msg[sizeof(v.msg) - 1] = 0;
		fprintf(stderr, "t_realloc: rmap (%s): %llu violation(s), first %s at 0x%llx: %s\n",
			when, (unsigned long long)v.nr_violations,
			vm_violation_name(v.kind), (unsigned long long)v.addr,
			v.msg);
		return 1;
	}
	printf("rmap: clean (%s)\n", when);
	return 0;
}

/* the next block to grow: xorshift32, fixed seed */
static unsigned long next_block(void)
{
	static uint32_t x = 2463534242u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x % nblocks;
}

static int parse(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end || !*v;
}

int main(int argc, char **argv)
{
	unsigned long growths, i;
	int vmas, ranges;
	int check_rmap = argc > 1 && !strcmp(argv[1], "-v");

	argv += check_rmap;
	argc -= check_rmap;
	nblocks = 1500;
	growths = 1500;
	nthreads = 64;
	if (argc > 4 || (argc > 1 && parse(argv[1], &nblocks)) ||
	    (argc > 2 && parse(argv[2], &growths)) ||
	    (argc > 3 && parse(argv[3], &nthreads))) {
		fprintf(stderr, "usage: t_realloc [-v] [BLOCKS [GROWTHS [THREADS]]] (numbers > 0)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	mallopt(M_MMAP_THRESHOLD, THRESHOLD);
	block = calloc(nblocks, sizeof(*block));
	block_len = calloc(nblocks, sizeof(*block_len));
	if (!block || !block_len)
		return 1;
	for (i = 0; i < nblocks; i++)
		if (grow(i, FIRST))
			return 1;
	for (i = 0; i < growths; i++)
		if (grow(next_block(), GROW))
			return 1;
	vmas = count_vmas_ranges(&ranges);
	printf("grown: %lu blocks, %lu growths, %d VMAs, %d ranges\n", nblocks,
	       growths, vmas, ranges);
	if (check_rmap && verify("after growing"))
		return 1;
	if (start_workers())
		return 1;
	printf("done: %lu threads checked %lu blocks, %d VMAs\n", nthreads,
	       nblocks, count_vmas());
	return check_rmap && verify("at the end");
}
