// SPDX-License-Identifier: GPL-2.0
/*
 * Differential test: a seeded random sequence of mmap/munmap/mremap/
 * mprotect/madvise/fork/writes over a fixed arena.  Writes the arena's
 * VMAs (addresses relative to the arena) to the maps file; run.sh compares
 * that file between runs without the module, with the module and features
 * off, and with features on.  Data is checked against the shadow model.
 *
 * usage: t_diff [-o] [-n OPS] [-m MAPSFILE] SEED
 *   -o  opt this process in through /dev/vmamerge first
 */
#include "arena.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct arena A;

int main(int argc, char **argv)
{
	const char *mapsfile = NULL;
	unsigned long nops = 300, i;
	unsigned long long seed;
	int optin = 0, c, fd, r;
	unsigned int nvmas = 0;
	char ctx[96];
	FILE *f;

	while ((c = getopt(argc, argv, "on:m:")) != -1) {
		switch (c) {
		case 'o': optin = 1; break;
		case 'n': nops = strtoul(optarg, NULL, 0); break;
		case 'm': mapsfile = optarg; break;
		default:
			fprintf(stderr, "usage: t_diff [-o] [-n OPS] [-m FILE] SEED\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: t_diff [-o] [-n OPS] [-m FILE] SEED\n");
		return 2;
	}
	seed = strtoull(argv[optind], NULL, 0);
	tap_init("t_diff", 600);
	diag("t_diff seed %llu ops %lu%s", seed, nops, optin ? " opted-in" : "");

	if (optin) {
		fd = vm_open(O_RDWR);
		if (fd < 0) {
			ok(0, "diff seed %llu: open %s", seed, VMAMERGE_DEVICE);
			diag("open: %s", errname(-fd));
			return tap_exit();
		}
		r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
		r = r ? r : vm_state(fd, VMAMERGE_TARGET_SELF, 0);
		if (!ok(r > 0 && (r & VMAMERGE_STATE_OPTED_IN),
			"diff seed %llu: process opted in", seed))
			diag("advise/query: %s", state_str(r));
		close(fd);
	}

	r = arena_init(&A, seed, "diff");
	if (r) {
		ok(0, "diff seed %llu: arena mmap", seed);
		diag("mmap: %s", errname(-r));
		return tap_exit();
	}
	A.check_every = 1;
	for (i = 0; i < nops; i++) {
		if (arena_step(&A))
			break;
		/* the rmap verifier after every step (silent when absent) */
		snprintf(ctx, sizeof(ctx), "diff seed %llu step %lu: rmap invariants",
			 seed, A.step);
		if (!vm_verify_self_ok(ctx))
			break;
	}
	if (!A.errors)
		arena_check_model(&A);

	f = mapsfile ? fopen(mapsfile, "w") : stdout;
	if (!f) {
		ok(0, "diff seed %llu: open %s", seed, mapsfile);
		return tap_exit();
	}
	r = arena_print_vmas(&A, f, &nvmas);
	if (f != stdout && fclose(f))
		r = -1;
	ok(r == 0, "diff seed %llu: wrote arena VMAs (%u VMAs)",
	   seed, nvmas);
	/* after the maps are written: verify makes pages readable */
	arena_verify_all(&A);
	ok(!A.errors, "diff seed %llu: %lu ops, model matches maps, data byte-exact",
	   seed, A.step);
	diag("ops: write %lu read %lu mmap %lu munmap %lu shrink %lu grow %lu move %lu "
	     "dontunmap %lu mprotect %lu madvise %lu fork %lu; failed syscalls %lu",
	     A.nr_ops[0], A.nr_ops[1], A.nr_ops[2], A.nr_ops[3], A.nr_ops[4],
	     A.nr_ops[5], A.nr_ops[6], A.nr_ops[7], A.nr_ops[8], A.nr_ops[9],
	     A.nr_ops[10], A.nr_failed);

	if (optin) {
		struct vmamerge_query q;
		unsigned int k;
		char buf[600];
		int n = 0;

		fd = vm_open(O_RDONLY);
		r = fd < 0 ? fd : vm_query(fd, VMAMERGE_TARGET_SELF, 0, 0, &q);
		if (fd >= 0)
			close(fd);
		if (!ok(r == 0 && (q.state & VMAMERGE_STATE_OPTED_IN),
			"diff seed %llu: still opted in after the sequence", seed)) {
			diag("query: %s", r ? errname(-r) : state_str(q.state));
		} else {
			for (k = 0; k < q.nr_counters && k < VMAMERGE_MAX_COUNTERS; k++)
				if (q.counters[k])
					n += snprintf(buf + n, sizeof(buf) - n, " %u=%llu", k,
						      (unsigned long long)q.counters[k]);
			if (n)
				diag("per-process counters nonzero:%s", buf);
		}
	}
	arena_fini(&A);
	return tap_exit();
}
