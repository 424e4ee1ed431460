/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data-checking torture (t_torture): a shadow model of every page of a
 * 2 MiB aligned window - mapped or a hole, protection, the VMA flags that
 * change what the page reads as (mlock, DONTFORK, WIPEONFORK) and its exact
 * contents - and the checks of the real memory against it.
 *
 * The model is the truth the test believes in: it is changed only by the
 * torture's own operations (never read back from the kernel), so any
 * difference between the model and /proc/self/maps or the memory itself is
 * reported.  Kernel noise (KSM, THP/khugepaged, NUMA migration by t_migrate,
 * compaction, swap) must never change what a page reads as.
 */
#ifndef VMAMERGE_TESTS_TORTURE_H
#define VMAMERGE_TESTS_TORTURE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <sys/types.h>

/* madvise advice newer than the guest's libc headers may know */
#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif

#define TPG		4096UL
#define THP_PAGES	512UL		/* pages per 2 MiB */
#define TWIN_HINT	0x310000000000UL	/* 2 MiB aligned */

/* tpage.flags */
#define TP_LOCKED	0x01	/* mlock()ed: DONTNEED/FREE would fail */
#define TP_DONTFORK	0x02	/* absent in a fork child */
#define TP_WIPE		0x04	/* zero in a fork child */
#define TP_EITHER	0x08	/* after MADV_FREE: shadow contents or zeros */

struct tpage {
	uint8_t mapped;
	uint8_t prot;		/* PROT_* */
	uint8_t flags;		/* TP_* */
	uint8_t pad;
	uint32_t last;		/* step that last changed the page's model */
};

struct mismatch {
	unsigned long page;
	long off;		/* first differing byte */
	int want, got;
};

struct torture {
	char *base;		/* the window */
	unsigned long np;	/* pages in the window */
	uint64_t seed, rng;
	unsigned long step;	/* the op being run, from 1 */
	struct tpage *pg;
	uint8_t *shadow;	/* np * TPG: expected contents */
	const char *who;	/* "" or "fork child of step N: " */
	char desc[200];		/* the current op, for reports */
	int verbose;
	int failed;		/* a failure has been reported */
	int optin;
	unsigned long wsz;	/* -w as given */
};

/* ---- PRNG (splitmix64 seeding, xorshift64*) ---- */
uint64_t t_splitmix(uint64_t *x);
uint64_t t_next(struct torture *t);
unsigned long t_rnd(struct torture *t, unsigned long n);	/* [0, n) */

static inline char *t_page(struct torture *t, unsigned long p)
{
	return t->base + p * TPG;
}

static inline uint8_t *t_shadow(struct torture *t, unsigned long p)
{
	return t->shadow + p * TPG;
}

/* Reserves the window (PROT_NONE, zero) and allocates the model.
 * 0 or -errno. */
int t_init(struct torture *t, uint64_t seed, unsigned long np);

/* Model updates (pages [p, p+n)). */
void t_set_hole(struct torture *t, unsigned long p, unsigned long n);
void t_set_zero(struct torture *t, unsigned long p, unsigned long n,
		int prot, uint8_t flags);

/*
 * Compares page p with the model (it must be mapped and readable).
 * Returns 0 if it matches, else fills *m.
 */
int t_check_page(struct torture *t, unsigned long p, struct mismatch *m);
/* Checks every mapped readable page; 0 or -1 (reported). */
int t_check_readable(struct torture *t, const char *when);
/* Makes every mapped page readable for a moment and checks it; the
 * protections are restored.  0 or -1 (reported). */
int t_check_everything(struct torture *t, const char *when);
/* /proc/self/maps against the model (mapped, prot); 0 or -1 (reported). */
int t_check_maps(struct torture *t, const char *when);

/* VMAs inside the window from /proc/self/maps, as page ranges [s, e). */
struct tvma {
	unsigned long s, e;
	int prot;
};
int t_read_vmas(struct torture *t, struct tvma *v, int max);

/*
 * Reports a failure: one "not ok" line naming seed, step and op, the
 * details as diagnostics and how to reproduce.  Sets t->failed.
 */
void t_fail(struct torture *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void t_report_mismatch(struct torture *t, const struct mismatch *m,
		       const char *when);
void t_repro_hint(struct torture *t);

/* Noise actually observed in the window (for the summary). */
struct tnoise {
	unsigned long thp_kb_max;	/* AnonHugePages in the window */
	unsigned long ksm_max;		/* /proc/self/ksm_merging_pages */
	unsigned long swap_kb_max;	/* VmSwap */
	unsigned long samples;
};
void t_sample_noise(struct torture *t, struct tnoise *n);

/* vm_verify_self_ok() with the torture's context; 0 or -1 (reported). */
int t_verify(struct torture *t, const char *ctx);

#endif
