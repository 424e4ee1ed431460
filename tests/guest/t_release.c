// SPDX-License-Identifier: GPL-2.0
/*
 * A burst of transplants (the batched release of emptied
 * anon_vmas, module/transplant.c).  N one-page mappings, each faulted in
 * its own anon_vma, are moved together while opted in (the spacing
 * pattern): N - 1 transplants, each of which empties the moved mapping's
 * anon_vma; transplant.c puts those in batches after an RCU grace period.
 * Checked per round: one VMA at the end, every page byte-exact, the rmap
 * verifier, vmas_transplanted grown by N - 1.  run.sh's release_test
 * counts the anon_vma slab around it and unloads the module right after
 * it (the drain at exit).
 *
 * usage: t_release [-n N] [-r ROUNDS]
 */
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define PG	4096UL

static int burst(char *w, unsigned long n, unsigned int round)
{
	long t0 = stats_counter("vmas_transplanted"), t1;
	unsigned long i, bad = 0;
	int vmas;

	for (i = 0; i < n; i++) {
		char *p = mmap(w + 2 * i * PG, PG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

		if (p == MAP_FAILED)
			return ok(0, "round %u: mmap %lu", round, i);
		memset(p, (int)(i * 7 + round) & 0xff, PG);
	}
	for (i = 1; i < n; i++)
		if (mremap(w + 2 * i * PG, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED,
			   w + i * PG) == MAP_FAILED)
			return ok(0, "round %u: mremap %lu", round, i);
	vmas = vmas_in(w, w + n * PG);
	ok(vmas == 1, "round %u: %lu mappings moved together: 1 VMA (%d)",
	   round, n, vmas);
	for (i = 0; i < n * PG; i++)
		if ((unsigned char)w[i] != ((i / PG * 7 + round) & 0xff))
			bad++;
	ok(!bad, "round %u: every page byte-exact (%lu bad bytes)", round, bad);
	vm_verify_self_ok("burst");
	t1 = stats_counter("vmas_transplanted");
	ok(t0 >= 0 && t1 - t0 == (long)(n - 1),
	   "round %u: vmas_transplanted +%ld (want %lu)", round, t1 - t0,
	   n - 1);
	munmap(w, 2 * n * PG);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 2000;
	unsigned int rounds = 1, r;
	int c, fd;
	char *w;

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		if (c == 'n')
			n = strtoul(optarg, NULL, 0);
		else if (c == 'r')
			rounds = strtoul(optarg, NULL, 0);
		else
			return fprintf(stderr, "usage: t_release [-n N] [-r ROUNDS]\n"), 2;
	}
	tap_init("t_release", 600);
	fd = vm_open(O_RDWR);
	if (!ok(fd >= 0 && vm_advise(fd, VMAMERGE_TARGET_SELF, 0,
				     VMAMERGE_ADVISE_ENABLE, 0) == 0,
		"opted in"))
		return tap_exit();
	w = aligned_window(2 * n * PG);
	if (!ok(w != NULL, "window of %lu pages", 2 * n))
		return tap_exit();
	for (r = 1; r <= rounds; r++)
		burst(w, n, r);
	close(fd);
	return tap_exit();
}
