// SPDX-License-Identifier: GPL-2.0
/*
 * spacing: the thesis's "Spacing speed test" (§4.3.2).
 *
 * Creates N one-page anonymous mappings with a one-page hole after each,
 * writes every page, then moves them together with mremap(MREMAP_FIXED):
 * mapping i goes from base + 2i pages to base + i pages, i = 1..N-1.
 * Only the move phase is timed.
 *
 *   -m diff   every mapping is its own mmap(): N different anon_vmas; they
 *             merge only with renumber and transplant
 *   -m same   one mmap() of 2N pages, written, then every second page
 *             unmapped: N VMAs sharing one anon_vma; they merge with
 *             renumber alone
 *   -m split  one mmap() of 2N pages, every second page unmapped, then
 *             every page written: N VMAs with N different anon_vmas, as
 *             with diff, made by splitting one mapping
 *   -d above  the mappings move, all N of them, into a range of N pages
 *             above the 2N (mapping i to above + i pages) instead of
 *             into the holes they leave (inside, the default)
 * On the stock kernel neither merges: a moved VMA keeps its page offset.
 *
 * Output (one JSON line): move_ns, vmas_before/vmas_after (in the test
 * range), the process's counter deltas over the move phase, and what else
 * ran during it (collapses: khugepaged's, global; sleeps/preempted: this
 * process's voluntary/involuntary context switches). With -t S the
 * VMA count of the range is sampled S times during the move phase
 * (samples: moves done, VMAs; time then includes the sampling).
 *
 * Without -t, what the end state costs afterwards - the wins (or not) a
 * user sees once the mappings are merged, or not: the median of
 * AFTER_REPS runs each of fork() + the child's _exit() + waitpid()
 * (fork_ns: copies every VMA, then tears it down), a read of the whole
 * /proc/self/smaps (smaps_ns) and mlockall(MCL_CURRENT) + munlockall()
 * (mlock_ns); and the slab objects that the process's memory map holds,
 * from /proc/slabinfo (root), as the growth of vm_area_struct,
 * anon_vma_chain, anon_vma and maple_node since before the first mmap -
 * a global count, so the guest must be quiet (it is: nothing else runs),
 * and a cache the kernel merged with another of its size has no line of
 * its own (slab_kb counts the ones found, slab_caches names them).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define AFTER_REPS	5

/* the slab caches a memory map is made of */
static const char *const map_caches[] = {
	"vm_area_struct", "anon_vma_chain", "anon_vma", "maple_node",
};
#define NR_CACHES	(sizeof(map_caches) / sizeof(map_caches[0]))

/*
 * Active objects and object size of each of map_caches from /proc/slabinfo
 * ("name active_objs num_objs objsize ..."); -1 where it has no line.
 */
static void read_slabs(long objs[NR_CACHES], long size[NR_CACHES])
{
	char line[512], name[64];
	long a, n, sz;
	unsigned int i;
	FILE *f = fopen("/proc/slabinfo", "r");

	for (i = 0; i < NR_CACHES; i++)
		objs[i] = size[i] = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %ld %ld %ld", name, &a, &n, &sz) != 4)
			continue;
		for (i = 0; i < NR_CACHES; i++)
			if (!strcmp(name, map_caches[i])) {
				objs[i] = a;
				size[i] = sz;
			}
	}
	fclose(f);
}

static void fork_exit(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
}

static void read_smaps(void)
{
	static char buf[1 << 16];
	int fd = open("/proc/self/smaps", O_RDONLY);

	if (fd < 0)
		die("open smaps: %s", strerror(errno));
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static void mlock_all(void)
{
	if (mlockall(MCL_CURRENT))
		die("mlockall: %s", strerror(errno));
	munlockall();
}

/* median ns of AFTER_REPS calls of @fn */
static uint64_t time_median(void (*fn)(void))
{
	uint64_t t[AFTER_REPS], t0;
	int i;

	for (i = 0; i < AFTER_REPS; i++) {
		t0 = now_ns();
		fn();
		t[i] = now_ns() - t0;
	}
	return median_u64(t, AFTER_REPS);
}

/* The costs of the end state (see the header comment), as JSON fields. */
static void after_merge(const long objs0[NR_CACHES])
{
	long objs[NR_CACHES], size[NR_CACHES], kb = 0;
	char names[256] = "";
	size_t nl = 0;
	unsigned int i;

	j_u64("fork_ns", time_median(fork_exit));
	j_u64("smaps_ns", time_median(read_smaps));
	j_u64("mlock_ns", time_median(mlock_all));
	read_slabs(objs, size);
	for (i = 0; i < NR_CACHES; i++) {
		if (objs[i] < 0 || objs0[i] < 0)
			continue;
		kb += (objs[i] - objs0[i]) * size[i] / 1024;
		nl += snprintf(names + nl, sizeof(names) - nl, "%s%s",
			       nl ? " " : "", map_caches[i]);
	}
	j_int("slab_kb", kb);
	j_str("slab_caches", names);
}

/* -m diff: mapping i is its own mmap() at @base + 2i pages, written */
static void make_each(unsigned long base, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		char *p = mmap((void *)(base + 2 * i * PAGE), PAGE,
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			       -1, 0);

		if (p == MAP_FAILED)
			die("mmap %lu: %s", i, strerror(errno));
		*(unsigned long *)p = i + 1;
	}
}

/* write i + 1 into page 2i of @p, i = 0..n-1 (the mappings' pages) */
static void write_mappings(char *p, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		*(unsigned long *)(p + 2 * i * PAGE) = i + 1;
}

/*
 * -m same, -m split: one mmap() of 2N pages at @base, every second page
 * unmapped; same writes the pages before the split (one anon_vma, the
 * mapping kept out of THP so the first write faults one page), split after
 * it (one anon_vma per mapping).
 */
static void make_split(unsigned long base, unsigned long n, int write_after)
{
	char *p = mmap((void *)base, 2 * n * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	unsigned long i;

	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	if (!write_after) {
		madvise(p, 2 * n * PAGE, MADV_NOHUGEPAGE);
		write_mappings(p, n);
	}
	for (i = 0; i < n; i++)
		if (munmap(p + (2 * i + 1) * PAGE, PAGE))
			die("munmap: %s", strerror(errno));
	if (write_after)
		write_mappings(p, n);
}

static void usage(void)
{
	die("usage: spacing [-n N] [-m same|diff|split] [-d inside|above] [-t SAMPLES]");
}

int main(int argc, char **argv)
{
	unsigned long n = 20000, i, base, span;
	const char *mode = "diff", *dest = "inside";
	int samples = 0, opt, ns = 0, diff, split, above;
	uint64_t c0[VMAMERGE_NR_COUNTERS], c1[VMAMERGE_NR_COUNTERS];
	uint64_t t0, t1, *s_moves = NULL, *s_vmas = NULL;
	long before, after, total, bad = 0;
	long objs0[NR_CACHES], size0[NR_CACHES];
	unsigned long every = 0, to, first;
	struct bench_noise noise0, noise1;

	while ((opt = getopt(argc, argv, "n:m:d:t:")) != -1) {
		switch (opt) {
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		case 'd': dest = optarg; break;
		case 't': samples = atoi(optarg); break;
		default: usage();
		}
	}
	if (n < 2 || (strcmp(mode, "same") && strcmp(mode, "diff") &&
		      strcmp(mode, "split")) ||
	    (strcmp(dest, "inside") && strcmp(dest, "above")))
		usage();
	diff = !strcmp(mode, "diff");
	split = !strcmp(mode, "split");
	above = !strcmp(dest, "above");
	bench_optin_from_env();

	/* inside: mapping i moves to base + i pages (mapping 0 stays);
	 * above: to base + (2N + i) pages, all N of them */
	span = (above ? 3 : 2) * n * PAGE;
	base = free_range(span, PMD_SZ);
	to = above ? base + 2 * n * PAGE : base;
	first = above ? 0 : 1;
	read_slabs(objs0, size0);
	/*
	 * above: the destination is held by a PROT_NONE placeholder until the
	 * moves start, so that nothing the program allocates meanwhile (the
	 * maps buffer of count_vmas(), which grows with the VMA count) lands
	 * there and is clobbered by a move
	 */
	if (above && mmap((void *)to, n * PAGE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			  MAP_FIXED_NOREPLACE, -1, 0) == MAP_FAILED)
		die("reserving the destination: %s", strerror(errno));
	if (diff)
		make_each(base, n);
	else
		make_split(base, n, split);
	count_vmas(0, base, base + 2 * n * PAGE, &before);

	if (samples > 0) {
		s_moves = calloc(samples + 2, sizeof(*s_moves));
		s_vmas = calloc(samples + 2, sizeof(*s_vmas));
		every = (n - first) / samples;
		if (!every)
			every = 1;
		s_moves[ns] = 0;
		s_vmas[ns++] = before;
	}

	if (above && munmap((void *)to, n * PAGE))
		die("munmap of the destination: %s", strerror(errno));
	bench_counters(0, c0);
	bench_noise_take(&noise0);
	t0 = now_ns();
	for (i = first; i < n; i++) {
		void *r = mremap((void *)(base + 2 * i * PAGE), PAGE, PAGE,
				 MREMAP_MAYMOVE | MREMAP_FIXED,
				 (void *)(to + i * PAGE));

		if (r == MAP_FAILED)
			die("mremap %lu: %s", i, strerror(errno));
		if (every && i % every == 0 && ns < samples + 1) {
			long v;

			count_vmas(0, base, base + span, &v);
			s_moves[ns] = i;
			s_vmas[ns++] = v;
		}
	}
	t1 = now_ns();
	bench_noise_take(&noise1);
	bench_counters(0, c1);

	total = count_vmas(0, base, base + span, &after);
	for (i = 0; i < n; i++)
		if (*(unsigned long *)(to + i * PAGE) != i + 1)
			bad++;
	if (every) {
		s_moves[ns] = n - first;
		s_vmas[ns++] = after;
	}

	j_begin("spacing");
	j_str("variant", mode);
	j_str("dest", dest);
	j_u64("n", n);
	j_u64("move_ns", t1 - t0);
	j_dbl("ns_per_move", (double)(t1 - t0) / (n - first));
	j_int("vmas_before", before);
	j_int("vmas_after", after);
	j_int("vmas_total", total);
	j_int("bad_pages", bad);
	j_counters("counters", c0, c1);
	j_noise(&noise0, &noise1);
	if (every) {
		j_int("traced", 1);
		j_u64_array("s_moves", s_moves, ns);
		j_u64_array("s_vmas", s_vmas, ns);
	} else {
		after_merge(objs0);
	}
	j_end();
	return bad ? 1 : 0;
}
