// SPDX-License-Identifier: GPL-2.0
/*
 * alloc-stress: an allocator-heavy workload (our own driver, linked once
 * with glibc's malloc and once with jemalloc).
 *
 * S slots; T operations, each on a random slot (fixed seed):
 *   empty slot        malloc: 70% 16..512 B, 25% 1..64 KiB, 5% 128..512 KiB
 *   full, 30%         realloc to 0.5x..3x (glibc moves large chunks with
 *                     mremap(MREMAP_MAYMOVE))
 *   full, otherwise   free
 * Every allocation is written (first and every 4096th byte) and checked
 * before it is freed.  With -S the process counts its VMAs every T/50
 * operations (peak, and samples for a plot; the time then includes the
 * counting, so the report takes times from runs without -S).
 * (Built with -DNO_MALLOPT for jemalloc: mallopt() would pull glibc's
 * malloc into the static link.)
 * -m: mallopt(M_MMAP_THRESHOLD, 128 KiB), which fixes glibc's threshold
 * (by default it rises after the first free of an mmapped chunk, and then
 * large chunks come from the heap): every large chunk is then a VMA of its
 * own, and growing it is an mremap() move.
 *
 * Output: one JSON line: run_ns, vmas at start, peak and end, the samples,
 * the process's counter deltas, "allocator" from -a (label only).
 */
#include "bench.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct slot { unsigned char *p; size_t n; unsigned char tag; };

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t pick_size(void)
{
	unsigned int r = rnd() % 100;

	if (r < 70)
		return 16 + rnd() % 497;
	if (r < 95)
		return 1024 + rnd() % (63 * 1024);
	return 128 * 1024 + rnd() % (384 * 1024);
}

static void fill(struct slot *s, size_t from)
{
	size_t i;

	for (i = (from + 4095) & ~4095UL; i < s->n; i += 4096)
		s->p[i] = s->tag;
	if (s->n)
		s->p[s->n - 1] = s->tag;
}

static long check(const struct slot *s, size_t upto)
{
	size_t i;
	long bad = 0;

	for (i = 0; i < upto; i += 4096)
		bad += s->p[i] != s->tag;
	return bad;
}

int main(int argc, char **argv)
{
	unsigned long S = 4096, T = 50000, t, k;
	const char *alloc = "glibc";
	struct slot *slots;
	uint64_t c0[VMAMERGE_NR_COUNTERS], c1[VMAMERGE_NR_COUNTERS];
	uint64_t t0, t1, sv[64], so[64];
	long v0, v, peak, bad = 0;
	int opt, ns = 0, sample = 0;

	while ((opt = getopt(argc, argv, "s:t:a:mS")) != -1) {
		switch (opt) {
#ifndef NO_MALLOPT
		case 'm': mallopt(M_MMAP_THRESHOLD, 128 * 1024); break;
#endif
		case 's': S = strtoul(optarg, NULL, 0); break;
		case 't': T = strtoul(optarg, NULL, 0); break;
		case 'a': alloc = optarg; break;
		case 'S': sample = 1; break;
		default: die("usage: alloc-stress [-s SLOTS] [-t OPS] [-a LABEL] [-m] [-S]");
		}
	}
	bench_optin_from_env();
	slots = calloc(S, sizeof(*slots));
	v0 = peak = count_vmas(0, 0, 0, NULL);
	so[ns] = 0;
	sv[ns++] = v0;
	bench_counters(0, c0);
	t0 = now_ns();
	for (t = 1; t <= T; t++) {
		struct slot *s = &slots[rnd() % S];

		if (!s->p) {
			s->n = pick_size();
			s->p = malloc(s->n);
			if (!s->p)
				die("malloc %zu", s->n);
			s->tag = (unsigned char)t | 1;
			fill(s, 0);
		} else if (rnd() % 10 < 3) {
			size_t n = s->n / 2 + rnd() % (s->n * 5 / 2 + 1);
			unsigned char *p;

			bad += check(s, n < s->n ? n : s->n);
			p = realloc(s->p, n ? n : 1);
			if (!p)
				die("realloc %zu", n);
			k = s->n;
			s->p = p;
			s->n = n;
			fill(s, k < n ? k : n);
		} else {
			bad += check(s, s->n);
			free(s->p);
			s->p = NULL;
		}
		if (sample && t % (T / 50 ? T / 50 : 1) == 0 && ns < 60) {
			v = count_vmas(0, 0, 0, NULL);
			peak = v > peak ? v : peak;
			so[ns] = t;
			sv[ns++] = v;
		}
	}
	t1 = now_ns();
	bench_counters(0, c1);
	v = count_vmas(0, 0, 0, NULL);
	peak = v > peak ? v : peak;

	j_begin("alloc");
	j_str("variant", alloc);
	j_u64("ops", T);
	j_u64("run_ns", t1 - t0);
	j_int("vmas_start", v0);
	if (sample)
		j_int("vmas_peak", peak);
	j_int("vmas_end", v);
	j_int("bad", bad);
	j_counters("counters", c0, c1);
	if (sample) {
		j_int("traced", 1);
		j_u64_array("s_ops", so, ns);
		j_u64_array("s_vmas", sv, ns);
	}
	j_end();
	return bad ? 1 : 0;
}
