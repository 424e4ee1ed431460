/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the vmamerge benchmarks (tests/bench/): clocks, the
 * /dev/vmamerge counters, VMA counts and JSON-lines output.
 *
 * Every benchmark program prints one JSON object per line on stdout.
 * The guest script (bench-guest.sh) sets the environment:
 *   BENCH_CONFIG  configuration label (stock, loaded, off, renumber, ...)
 *   BENCH_REP     repetition number
 *   BENCH_OPTIN   1: the program opts itself in (ADVISE ENABLE) first
 * and these go into every line together with "bench" and the results.
 */
#ifndef VMAMERGE_BENCH_H
#define VMAMERGE_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "vmamerge.h"

#define PAGE	4096UL
#define MIB	(1024UL * 1024)
#define PMD_SZ	(2 * MIB)

uint64_t now_ns(void);			/* CLOCK_MONOTONIC */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Opt this process in when BENCH_OPTIN=1; dies if that fails. */
void bench_optin_from_env(void);

/*
 * Configurations switched inside one process (micro, bigmove): the list
 * comes from BENCH_INPROC (comma- or space-separated), default "stock".
 *   stock, stock2   nothing to do (module not loaded; two names so that
 *                   two identical interleaved series give a noise floor)
 *   loaded          not opted in, features all
 *   off, renumber, transplant, both: opted in, those features
 * bench_set_config() does the switch (ADVISE on self, SET_CONFIG
 * features); dies if it fails.  Returns the number of configurations.
 */
#define BENCH_MAX_CFG 16
int bench_inproc_configs(const char *names[BENCH_MAX_CFG]);
void bench_set_config(const char *name);

/*
 * Counters of this process (global=0) or of the whole system (global=1).
 * Returns 0, or -1 when the module is not loaded (counters all zero).
 */
int bench_counters(int global, uint64_t c[VMAMERGE_NR_COUNTERS]);

/*
 * What else ran during a timed phase: khugepaged collapses (vmstat
 * thp_collapse_alloc, global) and this process's context switches.
 */
struct bench_noise {
	long collapses;
	long sleeps;		/* voluntary: the process waited */
	long preempted;		/* involuntary */
};
void bench_noise_take(struct bench_noise *n);
/* "noise": the change from @a to @b */
void j_noise(const struct bench_noise *a, const struct bench_noise *b);

/* Number of VMAs of pid (0 = self), and of those overlapping [lo, hi). */
long count_vmas(pid_t pid, unsigned long lo, unsigned long hi, long *in_range);

/* Address range of size bytes aligned to align, reserved and released
 * again: free address space for MAP_FIXED_NOREPLACE / MREMAP_FIXED. */
unsigned long free_range(unsigned long size, unsigned long align);

/* ---- JSON-lines output ---- */
/* Starts a line: {"bench":NAME,"config":..,"rep":..  */
void j_begin(const char *bench);
/* The same with the configuration given, not from BENCH_CONFIG. */
void j_begin_cfg(const char *bench, const char *config);
void j_str(const char *key, const char *val);
void j_int(const char *key, long long val);
void j_u64(const char *key, uint64_t val);
void j_dbl(const char *key, double val);
/* "key":{"merge_attempts":N,...} with after - before (nonzero only) */
void j_counters(const char *key, const uint64_t before[], const uint64_t after[]);
/* "key":[v0,v1,...] */
void j_u64_array(const char *key, const uint64_t *v, int n);
void j_end(void);

/* ---- small statistics ---- */
uint64_t median_u64(const uint64_t *v, int n);	/* sorts a copy */

#endif
