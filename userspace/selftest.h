/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftest.h - "vmamerge selftest": a few seconds' check that the module
 * works here.  A child process opts itself in, builds two layouts that the
 * stock kernel leaves as two VMAs (a renumber case and a transplant case),
 * checks in /proc/self/maps that each became one VMA, reads every byte
 * back and reports the counters the cases moved.
 */
#ifndef VMAMERGE_SELFTEST_H
#define VMAMERGE_SELFTEST_H

#include <stdbool.h>
#include <stdio.h>

#include "vmamerge.h"	/* module/uapi */

/* What the CLI lends the selftest (vmamerge.c): device and messages. */
struct selftest_ops {
	/* open /dev/vmamerge for writing: the fd, or -1 after saying why */
	int (*open)(void);
	/* the ioctls on fd, about this process: 0 or -errno */
	int (*config)(int fd, struct vmamerge_config *cfg);
	int (*opt_in)(int fd);	/* ENABLE, ending at execve */
	int (*query)(int fd, struct vmamerge_query *q);
	/* one error line on stderr ("vmamerge: ..."; --json: the error) */
	void (*msg)(const char *fmt, ...);
};

/*
 * Run the selftest and print its result (text, or one JSON object).
 * Returns the exit status: 0 ok, 1 failed (or the module not loaded).
 */
int selftest_main(const struct selftest_ops *ops, bool loaded, bool json);

/* ---- the pure parts, for test_selftest.c ---- */

#define ST_PAGES	8	/* pages of each half of a case */
#define ST_TEXT		320	/* room for a step's "what it saw" */
#define ST_MAX_SPANS	4	/* VMAs named in a report */

enum st_case_id {
	ST_RENUMBER,
	ST_TRANSPLANT,
	ST_NR_CASES,
};

enum st_status {
	ST_NOT_RUN,
	ST_OK,
	ST_FAILED,
	ST_SKIPPED,	/* its feature is off */
};

/* One case's result, as the child sends it to the parent. */
struct st_case {
	int status;		/* enum st_status */
	int nr_vmas;		/* VMAs over the range at the end, or -1 */
	char step[32];		/* the step that failed */
	char saw[ST_TEXT];	/* what it saw there */
	unsigned int nr_counters;
	unsigned long long delta[VMAMERGE_MAX_COUNTERS];
};

/* The whole run; error[] set when no case could run (opt-in, ...). */
struct st_report {
	char error[ST_TEXT];
	struct st_case cases[ST_NR_CASES];
};

/* A VMA's bounds. */
struct st_span {
	unsigned long start, end;
};

/* A case's name ("renumber") and its headline ("renumber merge"). */
const char *st_case_name(int id);

/*
 * The VMAs of a /proc/PID/maps text (f) that intersect [start, end): up
 * to max of them into spans, their number returned (-1: a line that is
 * not a maps line).
 */
int st_maps_spans(FILE *f, unsigned long start, unsigned long end,
		  struct st_span *spans, int max);

/*
 * Whether the spans found (n of them) are one VMA that covers [start,
 * end); if not, what was seen into saw.
 */
bool st_one_vma(const struct st_span *spans, int n, unsigned long start,
		unsigned long end, char *saw, size_t len);

/* The byte at offset off of the page that was faulted as page id. */
unsigned char st_pattern(unsigned int id, unsigned long off);

/* The result as text (one line) or one JSON object; 0 ok, 1 failed. */
int st_print_text(FILE *f, const struct st_report *r);
int st_print_json(FILE *f, const struct st_report *r);

#endif /* VMAMERGE_SELFTEST_H */
