// SPDX-License-Identifier: GPL-2.0
/*
 * bigmove: mremap() of one large faulted anonymous region.
 *
 * Maps SIZE MiB, writes every page, then moves the whole region back and
 * forth between two places with MREMAP_FIXED and times each move: K
 * rounds, in each of which every configuration of BENCH_INPROC (bench.h)
 * makes one move.
 *   -a aligned    source and destination 2 MiB-aligned (the kernel moves
 *                 whole page tables / huge PMDs)
 *   -a unaligned  source 4 KiB past a 2 MiB boundary, destination on one:
 *                 no PMD-level move possible, every PTE is moved
 *   -H thp        madvise(MADV_HUGEPAGE) before faulting
 *   -H nothp      madvise(MADV_NOHUGEPAGE)
 *   -n none       nothing next to either place: nothing merges
 *   -n merge      every timed move from a fresh setup: the region faulted
 *                 anew, and a faulted region of another mapping, 2 MiB
 *                 larger, ending right where the region goes; with both
 *                 features the move rewrites the region (the cheaper
 *                 side: offsets and anon_vma) and merges it with that
 *                 neighbour; the stock kernel moves it next to it
 * Output, one line per configuration: move_ns (its K moves), median,
 * ns_per_gib (median scaled to 1 GiB), AnonHugePages of the process after
 * faulting, global counter deltas over its moves.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

static long anon_huge_kb(void)
{
	char buf[4096], *p;
	int fd = open("/proc/self/smaps_rollup", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "AnonHugePages:");
	return p ? strtol(p + 14, NULL, 10) : -1;
}

static void usage(void)
{
	die("usage: bigmove -s MIB [-a aligned|unaligned] [-H thp|nothp] [-n none|merge] [-k ROUNDS]");
}

/*
 * Move a faulted neighbour of @nb bytes, made at @at somewhere free, to
 * end right at @end, where the moved region will go: its page offset
 * then continues nothing there.  Mapped in place instead, the stock
 * mmap() would merge it with whatever lies next to it (an anonymous
 * mapping's offset is its address).
 */
static void place_neighbour(unsigned long at, unsigned long nb,
			    unsigned long end)
{
	if (mremap((void *)at, nb, nb, MREMAP_MAYMOVE | MREMAP_FIXED,
		   (void *)(end - nb)) == MAP_FAILED)
		die("mremap of a neighbour: %s", strerror(errno));
}

/* @size bytes at @addr, mapped, THP advice @thp, every page written */
static char *map_faulted(unsigned long addr, unsigned long size,
			 const char *thp)
{
	unsigned long i;
	char *p = mmap((void *)addr, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		       -1, 0);

	if (p == MAP_FAILED)
		die("mmap %lu MiB: %s", size / MIB, strerror(errno));
	madvise(p, size, strcmp(thp, "thp") ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
	for (i = 0; i < size; i += PAGE)
		*(unsigned long *)(p + i) = i;
	return p;
}

/* a free range of @size bytes with @guard free bytes on either side */
static unsigned long guarded_range(unsigned long size, unsigned long guard)
{
	return free_range(size + 2 * guard, PMD_SZ) + guard;
}

struct merge_run {
	unsigned long size, off, nb;
	const char *thp;
	int module;		/* a process of the module's configurations */
	long huge;		/* AnonHugePages of the region, first setup */
	uint64_t fault_ns;	/* its faulting, first setup */
	long bad;		/* sampled pages read back wrong */
};

/*
 * -n merge: one timed move of the region, faulted afresh at a place of
 * its own, to right behind a neighbour faulted elsewhere and moved there
 * (place_neighbour()), in configuration @cfg; everything made, checked
 * and unmapped around it with the stock behaviour.  Each move starts from
 * the same state: a move that merged leaves the region in the
 * neighbour's anon_vma with its offsets, which would let the next one
 * merge without a rewrite.  The counters the move changed go to @acc.
 */
static uint64_t merge_move(struct merge_run *m, const char *cfg,
			   uint64_t *acc)
{
	uint64_t cb[VMAMERGE_NR_COUNTERS], ca[VMAMERGE_NR_COUNTERS], t0, ns;
	unsigned long na, src, dst, i;
	long huge;
	void *r;

	if (m->module)
		bench_set_config("loaded");
	na = guarded_range(m->nb, PMD_SZ);
	map_faulted(na, m->nb, m->thp);
	src = guarded_range(m->size + PMD_SZ, PMD_SZ) + m->off;
	huge = anon_huge_kb();
	t0 = now_ns();
	map_faulted(src, m->size, m->thp);
	if (!m->fault_ns) {
		m->fault_ns = now_ns() - t0;
		m->huge = anon_huge_kb() - huge;
	}
	dst = guarded_range(m->nb + m->size, PMD_SZ) + m->nb;
	place_neighbour(na, m->nb, dst);

	bench_set_config(cfg);
	bench_counters(1, cb);
	t0 = now_ns();
	r = mremap((void *)src, m->size, m->size, MREMAP_MAYMOVE | MREMAP_FIXED,
		   (void *)dst);
	ns = now_ns() - t0;
	if (r == MAP_FAILED)
		die("mremap %lu MiB: %s", m->size / MIB, strerror(errno));
	bench_counters(1, ca);
	for (i = 0; i < VMAMERGE_NR_COUNTERS; i++)
		acc[i] += ca[i] - cb[i];

	if (m->module)
		bench_set_config("loaded");
	for (i = 0; i < m->size; i += 509 * PAGE)
		if (*(unsigned long *)(dst + i) != i)
			m->bad++;
	munmap((void *)(dst - m->nb), m->nb + m->size);
	return ns;
}

int main(int argc, char **argv)
{
	unsigned long mib = 64, size, a, b, i, off;
	const char *al = "aligned", *thp = "nothp", *next = "none";
	int k = 3, opt, j, ci, nc, c;
	uint64_t cb[VMAMERGE_NR_COUNTERS], ca[VMAMERGE_NR_COUNTERS];
	uint64_t zero[VMAMERGE_NR_COUNTERS] = { 0 };
	static uint64_t acc[BENCH_MAX_CFG][VMAMERGE_NR_COUNTERS];
	uint64_t *t[BENCH_MAX_CFG], t0, fault_ns, med;
	const char *cfg[BENCH_MAX_CFG];
	unsigned long from, to;
	struct merge_run m = { 0 };
	long huge, bad = 0;

	while ((opt = getopt(argc, argv, "s:a:H:n:k:")) != -1) {
		switch (opt) {
		case 's': mib = strtoul(optarg, NULL, 0); break;
		case 'a': al = optarg; break;
		case 'H': thp = optarg; break;
		case 'n': next = optarg; break;
		case 'k': k = atoi(optarg); break;
		default: usage();
		}
	}
	if (!mib || k < 1 || (strcmp(al, "aligned") && strcmp(al, "unaligned")) ||
	    (strcmp(thp, "thp") && strcmp(thp, "nothp")) ||
	    (strcmp(next, "none") && strcmp(next, "merge")))
		usage();
	nc = bench_inproc_configs(cfg);
	size = mib * MIB;
	off = strcmp(al, "aligned") ? PAGE : 0;

	for (ci = 0; ci < nc; ci++)
		t[ci] = calloc(k, sizeof(uint64_t));
	if (!strcmp(next, "merge")) {
		/* the neighbour 2 MiB larger: the region is the cheaper side */
		m.size = size;
		m.off = off;
		m.nb = (size + PMD_SZ + PMD_SZ - 1) & ~(PMD_SZ - 1);
		m.thp = thp;
		m.module = strncmp(cfg[0], "stock", 5) != 0;
		for (j = 0; j < k; j++)
			for (c = 0; c < nc; c++) {
				ci = j & 1 ? nc - 1 - c : c;
				t[ci][j] = merge_move(&m, cfg[ci], acc[ci]);
			}
		huge = m.huge;
		fault_ns = m.fault_ns;
		bad = m.bad;
		goto report;
	}

	/* two free places, each with room for the offset and a guard */
	a = free_range(2 * size + 8 * PMD_SZ, PMD_SZ);
	b = a + size + 4 * PMD_SZ;	/* still 2 MiB-aligned */
	a += off;
	t0 = now_ns();
	map_faulted(a, size, thp);
	fault_ns = now_ns() - t0;
	huge = anon_huge_kb();

	from = a;
	to = b;
	/* one untimed move first: every timed move then starts from a
	 * region that was moved before, as the later ones do */
	for (j = -1; j < k; j++) {
		for (c = 0; c < nc; c++) {
			void *r;

			/* alternate the order so no config always follows
			 * the same one */
			ci = j & 1 ? nc - 1 - c : c;
			bench_set_config(cfg[ci]);
			bench_counters(1, cb);
			t0 = now_ns();
			r = mremap((void *)from, size, size,
				   MREMAP_MAYMOVE | MREMAP_FIXED, (void *)to);
			if (j >= 0)
				t[ci][j] = now_ns() - t0;
			if (r == MAP_FAILED)
				die("mremap %lu MiB: %s", mib, strerror(errno));
			bench_counters(1, ca);
			if (j >= 0)
				for (i = 0; i < VMAMERGE_NR_COUNTERS; i++)
					acc[ci][i] += ca[i] - cb[i];
			from = to;
			to = to == b ? a : b;
			if (j < 0)
				break;
		}
	}
	for (i = 0; i < size; i += 509 * PAGE)
		if (*(unsigned long *)(from + i) != i)
			bad++;
	munmap((void *)from, size);

report:
	for (ci = 0; ci < nc; ci++) {
		med = median_u64(t[ci], k);
		j_begin_cfg("bigmove", cfg[ci]);
		j_u64("mib", mib);
		j_str("align", al);
		j_str("thp", thp);
		j_str("next", next);
		j_u64_array("move_ns", t[ci], k);
		j_u64("median_ns", med);
		j_dbl("ns_per_gib", (double)med * 1024 / mib);
		j_u64("fault_ns", fault_ns);
		j_int("anon_huge_kb", huge);
		j_int("bad_pages", bad);
		j_counters("counters", zero, acc[ci]);
		j_end();
	}
	return bad ? 1 : 0;
}
