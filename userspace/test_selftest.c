// SPDX-License-Identifier: GPL-2.0
/*
 * test_selftest - unit tests of the pure parts of "vmamerge selftest"
 * (selftest.c): the VMAs over a range in a maps text, the one-VMA check
 * and what it reports, the page pattern, the text and JSON reports.  TAP.
 *
 *   test_selftest [T_JSON]
 *
 * T_JSON (tests/guest/t_json built for the host): the JSON reports are
 * also read back through it; without it those checks are skipped.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "selftest.h"

static int nr_ok, nr_failed;
static const char *t_json;

static void check(int cond, const char *what)
{
	if (cond)
		nr_ok++;
	else
		nr_failed++;
	printf("%s %d - %s\n", cond ? "ok" : "not ok", nr_ok + nr_failed, what);
}

/* The report printed by fn into a string (free it). */
static char *report(int (*fn)(FILE *, const struct st_report *),
		    const struct st_report *r, int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*ret = fn(f, r);
	fclose(f);
	return buf;
}

static int spans_of(const char *maps, unsigned long start, unsigned long end,
		    struct st_span *spans)
{
	FILE *f = fmemopen((void *)maps, strlen(maps), "r");
	int n = st_maps_spans(f, start, end, spans, ST_MAX_SPANS);

	fclose(f);
	return n;
}

static const char maps_text[] =
	"1000-3000 rw-p 00000000 00:00 0 \n"
	"3000-5000 ---p 00000000 00:00 0 \n"
	"5000-9000 rw-p 00000000 00:00 0 \n"
	"9000-b000 rw-p 00000000 00:00 0 \n"
	"10000-11000 r--p 00001000 fe:01 42                 /usr/bin/x\n";

static void test_spans(void)
{
	struct st_span s[ST_MAX_SPANS];
	char saw[200];

	check(spans_of(maps_text, 0x5000, 0x9000, s) == 1 && s[0].start == 0x5000 &&
	      s[0].end == 0x9000, "spans: the exact VMA");
	check(spans_of(maps_text, 0x5000, 0xb000, s) == 2 && s[1].start == 0x9000,
	      "spans: two neighbours over the range");
	check(spans_of(maps_text, 0x6000, 0x7000, s) == 1 && s[0].start == 0x5000,
	      "spans: a VMA larger than the range");
	check(spans_of(maps_text, 0xb000, 0x10000, s) == 0, "spans: a hole");
	check(spans_of(maps_text, 0x2000, 0x10001, s) == 5,
	      "spans: all five counted (four kept)");
	check(spans_of("1000-2000 rw-p 0 00:00 0\nnot maps\n", 0, 0x3000, s) == -1,
	      "spans: a line that is not a VMA");
	check(spans_of("", 0, 0x3000, s) == 0, "spans: an empty text");

	check(spans_of(maps_text, 0x5000, 0x9000, s) == 1 &&
	      st_one_vma(s, 1, 0x5000, 0x9000, saw, sizeof(saw)),
	      "one VMA: covered exactly");
	check(st_one_vma(s, 1, 0x6000, 0x7000, saw, sizeof(saw)),
	      "one VMA: covered by a larger one");
	spans_of(maps_text, 0x5000, 0xb000, s);
	check(!st_one_vma(s, 2, 0x5000, 0xb000, saw, sizeof(saw)) &&
	      !strcmp(saw, "2 VMAs over 5000-b000: 5000-9000 9000-b000"),
	      "one VMA: two named");
	check(!st_one_vma(s, 0, 0xb000, 0xc000, saw, sizeof(saw)) &&
	      !strcmp(saw, "no VMA over b000-c000"), "one VMA: none");
	s[0].start = 0x5000;
	s[0].end = 0x8000;
	check(!st_one_vma(s, 1, 0x5000, 0x9000, saw, sizeof(saw)) &&
	      !strcmp(saw, "1 VMA over 5000-9000: 5000-8000"),
	      "one VMA: one that does not cover the range");
	spans_of(maps_text, 0x2000, 0x10001, s);
	check(!st_one_vma(s, 5, 0x2000, 0x10001, saw, sizeof(saw)) &&
	      !strcmp(saw, "5 VMAs over 2000-10001: 1000-3000 3000-5000 5000-9000 9000-b000 ..."),
	      "one VMA: more than four: the first four and '...'");
}

/* every page differs from every other one at every offset */
static void test_pattern(void)
{
	unsigned int a, b;
	unsigned long off;
	int distinct = 1;

	for (off = 0; off < 4096; off++)
		for (a = 0; a < 2 * ST_PAGES; a++)
			for (b = a + 1; b < 2 * ST_PAGES; b++)
				if (st_pattern(a, off) == st_pattern(b, off))
					distinct = 0;
	check(distinct, "pattern: the pages differ at every offset");
	check(st_pattern(0, 0) != st_pattern(0, 1) &&
	      st_pattern(0, 1) != st_pattern(0, 256 + 1),
	      "pattern: a page's bytes vary");
}

/* Both cases ok: the renumber case moved merge_renumber, the other two. */
static void report_ok(struct st_report *r)
{
	memset(r, 0, sizeof(*r));
	r->cases[ST_RENUMBER].status = ST_OK;
	r->cases[ST_RENUMBER].nr_vmas = 1;
	r->cases[ST_RENUMBER].nr_counters = VMAMERGE_NR_COUNTERS;
	r->cases[ST_RENUMBER].delta[VMAMERGE_C_MERGE_RENUMBER] = 1;
	r->cases[ST_RENUMBER].delta[VMAMERGE_C_PAGES_RENUMBERED] = 8;
	r->cases[ST_RENUMBER].delta[VMAMERGE_C_TIME_NS] = 12345;
	r->cases[ST_TRANSPLANT] = r->cases[ST_RENUMBER];
	r->cases[ST_TRANSPLANT].delta[VMAMERGE_C_MERGE_RENUMBER] = 0;
	r->cases[ST_TRANSPLANT].delta[VMAMERGE_C_PAGES_RENUMBERED] = 0;
	r->cases[ST_TRANSPLANT].delta[VMAMERGE_C_MERGE_TRANSPLANT] = 1;
	r->cases[ST_TRANSPLANT].delta[VMAMERGE_C_PAGES_TRANSPLANTED] = 8;
}

static void set_failed(struct st_case *c, int nr_vmas, const char *step,
		       const char *saw)
{
	c->status = ST_FAILED;
	c->nr_vmas = nr_vmas;
	snprintf(c->step, sizeof(c->step), "%s", step);
	snprintf(c->saw, sizeof(c->saw), "%s", saw);
}

static void test_text(void)
{
	struct st_report r;
	char *out;
	int ret;

	report_ok(&r);
	out = report(st_print_text, &r, &ret);
	check(!ret && !strcmp(out, "selftest: ok (renumber merge: 1 VMA; transplant merge: 1 VMA; counters: merge_renumber +1, merge_transplant +1, pages_renumbered +8, pages_transplanted +8)\n"),
	      "text: ok, the counters moved in their order, no time_ns");
	free(out);

	r.cases[ST_TRANSPLANT].status = ST_SKIPPED;
	strcpy(r.cases[ST_TRANSPLANT].saw, "feature transplant off");
	out = report(st_print_text, &r, &ret);
	check(!ret && !strcmp(out, "selftest: ok (renumber merge: 1 VMA; transplant merge: skipped, feature transplant off; counters: merge_renumber +1, pages_renumbered +8)\n"),
	      "text: a case skipped, its counters not counted");
	free(out);

	set_failed(&r.cases[ST_TRANSPLANT], 2, "one VMA",
		   "2 VMAs over 5000-b000: 5000-9000 9000-b000");
	out = report(st_print_text, &r, &ret);
	check(ret == 1 && !strcmp(out, "selftest: failed (renumber merge: 1 VMA; transplant merge: FAILED at 'one VMA'; counters: merge_renumber +1, pages_renumbered +8)\n"
				       "selftest: transplant merge failed at 'one VMA': 2 VMAs over 5000-b000: 5000-9000 9000-b000\n"),
	      "text: a failed case: the step and what it saw");
	free(out);

	r.cases[ST_RENUMBER].status = ST_SKIPPED;
	strcpy(r.cases[ST_RENUMBER].saw, "feature renumber off");
	r.cases[ST_TRANSPLANT].status = ST_SKIPPED;
	out = report(st_print_text, &r, &ret);
	check(ret == 1 && !strncmp(out, "selftest: failed (renumber merge: skipped, feature renumber off; ", 65),
	      "text: every case skipped is a failure");
	free(out);

	memset(&r, 0, sizeof(r));
	strcpy(r.error, "opt in: Permission denied");
	out = report(st_print_text, &r, &ret);
	check(ret == 1 && !strcmp(out, "selftest: failed: opt in: Permission denied\n"),
	      "text: no case run");
	free(out);

	report_ok(&r);
	memset(r.cases[ST_RENUMBER].delta, 0, sizeof(r.cases[ST_RENUMBER].delta));
	memset(r.cases[ST_TRANSPLANT].delta, 0, sizeof(r.cases[ST_TRANSPLANT].delta));
	out = report(st_print_text, &r, &ret);
	check(!ret && strstr(out, "; counters: none moved)\n"), "text: no counter moved");
	free(out);
}

/* t_json PATHS < text: its output, or NULL (skipped) or "" (failed) */
static char *json_values(const char *text, const char *paths)
{
	char in[] = "/tmp/test_selftest.XXXXXX", cmd[512], *out = NULL;
	size_t len = 0;
	ssize_t n;
	FILE *p;
	int fd;

	if (!t_json)
		return NULL;
	fd = mkstemp(in);
	n = fd < 0 ? -1 : write(fd, text, strlen(text));
	if (fd >= 0)
		close(fd);
	snprintf(cmd, sizeof(cmd), "%s %s < %s", t_json, paths, in);
	p = n == (ssize_t)strlen(text) ? popen(cmd, "r") : NULL;
	if (p && getdelim(&out, &len, '\0', p) < 0) {
		free(out);
		out = NULL;
	}
	if (!p || pclose(p)) {
		free(out);
		out = strdup("");
	}
	unlink(in);
	return out;
}

static void json_is(const char *text, const char *paths, const char *want,
		    const char *what)
{
	char *got = json_values(text, paths);
	char desc[200];

	if (!got) {
		snprintf(desc, sizeof(desc), "%s # SKIP no T_JSON", what);
		check(1, desc);
		return;
	}
	check(!strcmp(got, want), what);
	if (strcmp(got, want))
		printf("# got:\n%s# want:\n%s# text: %s", got, want, text);
	free(got);
}

static void test_json(void)
{
	struct st_report r;
	char *out;
	int ret;

	report_ok(&r);
	out = report(st_print_json, &r, &ret);
	check(!ret, "json: ok exits 0");
	json_is(out, ".ok .error .cases.0.name .cases.0.status .cases.0.vmas .cases.0.step .cases.1.counters .counters",
		"true\nnull\n\"renumber\"\n\"ok\"\n1\nnull\n{\"merge_transplant\": 1, \"pages_transplanted\": 8}\n"
		"{\"merge_renumber\": 1, \"merge_transplant\": 1, \"pages_renumbered\": 8, \"pages_transplanted\": 8}\n",
		"json: ok, each case's counters and their sum");
	free(out);

	set_failed(&r.cases[ST_RENUMBER], 2, "one VMA", "2 VMAs \"x\"");
	r.cases[ST_TRANSPLANT].status = ST_SKIPPED;
	strcpy(r.cases[ST_TRANSPLANT].saw, "feature renumber off");
	out = report(st_print_json, &r, &ret);
	check(ret == 1, "json: a failure exits 1");
	json_is(out, ".ok .error .cases.0.status .cases.0.vmas .cases.0.step .cases.0.saw .cases.0.counters .cases.1.status .cases.1.vmas .cases.1.saw .counters",
		"false\n\"renumber merge: one VMA: 2 VMAs \\\"x\\\"\"\n\"failed\"\n2\n\"one VMA\"\n"
		"\"2 VMAs \\\"x\\\"\"\nnull\n\"skipped\"\nnull\n\"feature renumber off\"\n{}\n",
		"json: the failed step, what it saw, a skipped case");
	free(out);

	memset(&r, 0, sizeof(r));
	strcpy(r.error, "opt in: Permission denied");
	out = report(st_print_json, &r, &ret);
	json_is(out, ".ok .error .cases", "false\n\"opt in: Permission denied\"\n[]\n",
		"json: no case run: the error, no cases");
	free(out);
}

int main(int argc, char **argv)
{
	t_json = argc > 1 ? argv[1] : NULL;
	test_spans();
	test_pattern();
	test_text();
	test_json();
	check(!strcmp(st_case_name(ST_TRANSPLANT), "transplant") &&
	      !strcmp(st_case_name(7), "?"), "case names");
	printf("1..%d\n# %d passed, %d failed\n", nr_ok + nr_failed, nr_ok,
	       nr_failed);
	return nr_failed != 0;
}
