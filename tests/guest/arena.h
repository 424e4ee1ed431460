/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A seeded random sequence of address-space operations over a fixed arena,
 * with a shadow model of every page (mapped?, protection, fork flags and a
 * content tag) so that the data can be checked byte-exact at any time.
 * Used by t_diff (fixed number of ops, prints the arena's VMAs) and by
 * t_churn (runs until told to stop).
 */
#ifndef VMAMERGE_TESTS_ARENA_H
#define VMAMERGE_TESTS_ARENA_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdint.h>
#include <stdio.h>
#include <signal.h>

#define ARENA_PAGES	1024		/* 4 MiB: two PMDs */
#define ARENA_HINT	0x300000000000UL	/* fixed, 2 MiB aligned */

struct arena {
	char *base;
	unsigned long np;		/* pages */
	uint64_t seed, rng;
	unsigned long step;		/* number of the op being run */
	int fork_pct;			/* percent of ops that fork */
	int check_every;		/* model-vs-maps check every N ops (0: never) */
	int errors;			/* data or model mismatches */
	unsigned long nr_ops[16];	/* per op type */
	unsigned long nr_failed;	/* syscalls that failed (legitimately) */
	unsigned long nr_resync;
	const char *name;
	/* shadow model, one entry per page */
	uint8_t mapped[ARENA_PAGES];
	uint8_t prot[ARENA_PAGES];
	uint8_t pflags[ARENA_PAGES];	/* AF_DONTFORK, AF_WIPE */
	uint64_t tag[ARENA_PAGES];	/* 0: zero page */
};

/* Creates the arena (PROT_NONE reservation).  0 or -errno. */
int arena_init(struct arena *a, uint64_t seed, const char *name);
/* Runs one random op.  Returns 0, or -1 after a fatal mismatch. */
int arena_step(struct arena *a);
/* Compares the model's mapped/prot with /proc/self/maps. 0 if equal. */
int arena_check_model(struct arena *a);
/* Prints the arena's VMAs (relative addresses, pgoff, VmFlags) to f. */
int arena_print_vmas(struct arena *a, FILE *f, unsigned int *nr_vmas);
/* Makes every mapped page readable and checks its content. 0 if ok. */
int arena_verify_all(struct arena *a);
/* Unmaps the arena. */
void arena_fini(struct arena *a);
const char *arena_op_name(int op);

#endif
