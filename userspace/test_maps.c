// SPDX-License-Identifier: GPL-2.0
/*
 * test_maps - unit tests of the pure parts of the vmamerge CLI: maps/
 * smaps/numa_maps parsing and analysis, argument parsing, the output of
 * verify and compact.  TAP output.
 *
 *   test_maps [T_JSON]
 *
 * T_JSON: tests/guest/t_json built for the host (userspace/Makefile's
 * test target); JSON output is then also parsed by it.  Without it those
 * checks are skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmamerge.h"	/* module/uapi */
#include "cli.h"
#include "compact.h"
#include "kernelcheck.h"
#include "maps.h"
#include "modvmas.h"
#include "verify.h"
#include "builds.h"	/* module/: the nearest validated build */

static int passed, failed;

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", passed + failed + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (cond)
		passed++;
	else
		failed++;
}

/* ---- maps parsing ---- */

static void test_header(void)
{
	static const char file_line[] =
		"7f0e1c200000-7f0e1c228000 r--p 00001000 fe:01 1234567                    /usr/lib/x86_64-linux-gnu/libc.so.6";
	static const char anon_line[] = "7f0e1c3f0000-7f0e1c3fd000 rw-p 00000000 00:00 0 ";
	static const char space_line[] =
		"55d000000000-55d000001000 rw-s 00000000 00:01 99                         /memfd:my buf (deleted)";
	static const char *const bad[] = {
		"", "12abc", "1000-2000", "1000-2000 rw-p", "1000-2000 rwzp 0 00:00 0",
		"1000-2000 rw-p 0 00:00", "1000-2000 rw-p 0 0000 0", "g000-2000 rw-p 0 00:00 0",
		"2000-1000 rw-p 0 00:00 0", "1000-2000 rw-p 0 00:00 0x5",
		"Rss:                 4 kB", "VmFlags: rd wr mr",
	};
	struct vma_info v;
	size_t i;

	ok(!maps_parse_header(file_line, strlen(file_line), &v) &&
	   v.start == 0x7f0e1c200000ULL && v.end == 0x7f0e1c228000ULL &&
	   !strcmp(v.perms, "r--p") && v.offset == 0x1000 &&
	   v.dev_major == 0xfe && v.dev_minor == 1 && v.inode == 1234567 &&
	   !strcmp(v.name, "/usr/lib/x86_64-linux-gnu/libc.so.6"),
	   "header: file-backed line");
	free(v.name);
	ok(!maps_parse_header(anon_line, strlen(anon_line), &v) &&
	   !strcmp(v.name, "") && v.inode == 0 && vma_is_private_anon(&v),
	   "header: anonymous line without name is private anon");
	free(v.name);
	ok(!maps_parse_header(space_line, strlen(space_line), &v) &&
	   !strcmp(v.name, "/memfd:my buf (deleted)") && !vma_is_private_anon(&v),
	   "header: name with spaces kept, shared memfd not anon");
	free(v.name);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(maps_parse_header(bad[i], strlen(bad[i]), &v) == -1,
		   "header: rejects '%s'", bad[i]);
}

static void test_anon_kinds(void)
{
	static const struct {
		const char *line;
		int anon;
	} cases[] = {
		{ "1000-2000 rw-p 00000000 00:00 0                  [heap]", 1 },
		{ "1000-2000 rw-p 00000000 00:00 0                  [anon:jit]", 1 },
		{ "1000-2000 rw-p 00000000 00:00 0                  [stack]", 0 },
		{ "1000-2000 r--p 00000000 00:00 0                  [vvar]", 0 },
		{ "1000-2000 rw-s 00000000 00:01 1234               /dev/zero (deleted)", 0 },
		{ "1000-2000 rw-p 00002000 fe:01 42                 /usr/bin/cat", 0 },
	};
	struct vma_info v;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = maps_parse_header(cases[i].line, strlen(cases[i].line), &v);

		ok(!ret && vma_is_private_anon(&v) == cases[i].anon,
		   "anon kind: '%s' -> %s", v.name, cases[i].anon ? "anon" : "not anon");
		free(v.name);
	}
	ok(anon_names_compatible("", "[heap]") &&
	   anon_names_compatible("[anon:a]", "[anon:a]") &&
	   !anon_names_compatible("[anon:a]", "[anon:b]") &&
	   !anon_names_compatible("", "[anon:a]"),
	   "anon names: heap ~ unnamed, [anon:x] only equal names");
}

static void test_vmflags(void)
{
	ok(vmflags_equal("rd wr mr mw me ac", "rd wr mr mw me ac"), "vmflags: equal");
	ok(vmflags_equal("rd wr mr mw me ac sd", "rd wr mr mw me ac"),
	   "vmflags: sd (soft-dirty) ignored");
	ok(!vmflags_equal("rd wr mr mw me ac", "rd wr mr mw me"), "vmflags: ac differs");
	ok(!vmflags_equal("rd wr mr mw me", "rd wr mr mw me nr"), "vmflags: extra flag in b");
	ok(vmflags_has("rd io wr", "io") && !vmflags_has("rd wr", "io") &&
	   !vmflags_has("rdio", "io"), "vmflags: has()");
}

/* Parse, finish, analyze; returns the pairs (caller frees). */
static size_t run(const char *text, const char *numa, struct vma_list *l,
		  struct vma_pair **pairs, struct maps_summary *s)
{
	size_t bad = 0;
	int ret;

	vma_list_init(l);
	ret = maps_parse(l, text, &bad);
	if (ret) {
		printf("# parse failed at line %zu\n", bad);
		return (size_t)-1;
	}
	if (numa && maps_apply_numa(l, numa))
		return (size_t)-1;
	maps_finish(l);
	return maps_analyze(l, pairs, s);
}

/* As /proc shows it: anonymous offsets are 0. */
static const char proc_maps[] =
	"555555554000-555555556000 r--p 00000000 fe:01 1311                       /usr/bin/cat\n"
	"555555556000-55555555b000 r-xp 00002000 fe:01 1311                       /usr/bin/cat\n"
	"555555560000-555555581000 rw-p 00000000 00:00 0                          [heap]\n"
	"555555581000-555555590000 rw-p 00000000 00:00 0 \n"
	"7ffff7d00000-7ffff7d10000 rw-p 00000000 00:00 0 \n"
	"7ffff7d10000-7ffff7d20000 r--p 00000000 00:00 0 \n"
	"7ffff7d20000-7ffff7d30000 rw-p 00000000 00:00 0 \n"
	"7ffff7d30000-7ffff7d40000 rw-p 00000000 00:00 0                          [anon:a]\n"
	"7ffff7d40000-7ffff7d50000 rw-p 00000000 00:00 0                          [anon:b]\n"
	"7ffff7d60000-7ffff7d70000 rw-p 00000000 00:00 0 \n"
	"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n";

static void test_proc_maps(void)
{
	struct vma_pair *pairs = NULL;
	struct maps_summary s;
	struct vma_list l;
	char *buf = NULL;
	size_t n, len = 0;
	FILE *f;

	n = run(proc_maps, NULL, &l, &pairs, &s);
	ok(l.nr == 11 && s.nr_vmas == 11, "proc maps: 11 vmas");
	ok(!l.anon_pgoff_visible, "proc maps: anon pgoff not visible (all 0)");
	ok(l.v[0].pgoff_known && l.v[1].pgoff == 2 && !l.v[2].pgoff_known,
	   "proc maps: file pgoff in pages known, anon pgoff unknown");
	ok(n == 1 && pairs[0].a == 2 && pairs[0].b == 3 &&
	   pairs[0].reason == PAIR_UNKNOWN,
	   "proc maps: only [heap]+unnamed is a pair, reason pgoff_or_anon_vma");
	f = open_memstream(&buf, &len);
	maps_print_summary(f, &s, l.anon_pgoff_visible);
	fclose(f);
	ok(!strcmp(buf, "11 vmas, 1 adjacent anonymous pairs: 0 differ in pgoff, 0 differ only in anon_vma (probably), 1 differ in pgoff or anon_vma (anonymous pgoff not visible in /proc)\n"),
	   "proc maps: summary line");
	if (strcmp(buf, "11 vmas, 1 adjacent anonymous pairs: 0 differ in pgoff, 0 differ only in anon_vma (probably), 1 differ in pgoff or anon_vma (anonymous pgoff not visible in /proc)\n"))
		printf("# got: %s", buf);
	free(buf);
	free(pairs);
	vma_list_free(&l);
}

/* Text that does show anonymous pgoffs (bytes, vm_pgoff << PAGE_SHIFT). */
static const char pgoff_maps[] =
	"7f0000000000-7f0000010000 rw-p 7f0000000000 00:00 0 \n"
	"7f0000010000-7f0000020000 rw-p 7f0000010000 00:00 0 \n"	/* linear */
	"7f0000020000-7f0000030000 rw-p 100000000 00:00 0 \n"	/* moved */
	"7f0000030000-7f0000040000 rw-p 100010000 00:00 0 \n";	/* linear */

static void test_pgoff_visible(void)
{
	struct vma_pair *pairs = NULL;
	struct maps_summary s;
	struct vma_list l;
	size_t n;

	n = run(pgoff_maps, NULL, &l, &pairs, &s);
	ok(l.anon_pgoff_visible && l.v[0].pgoff == 0x7f0000000ULL,
	   "pgoff text: visible, in pages");
	ok(n == 3, "pgoff text: 3 pairs");
	ok(n == 3 && pairs[0].reason == PAIR_ANON_VMA &&
	   pairs[1].reason == PAIR_PGOFF && pairs[2].reason == PAIR_ANON_VMA,
	   "pgoff text: linear -> anon_vma, jump -> pgoff");
	ok(s.by_reason[PAIR_PGOFF] == 1 && s.by_reason[PAIR_ANON_VMA] == 2 &&
	   s.by_reason[PAIR_UNKNOWN] == 0, "pgoff text: summary counts");
	free(pairs);
	vma_list_free(&l);
}

static const char smaps[] =
	"7f0000000000-7f0000010000 rw-p 00000000 00:00 0 \n"
	"Size:                 64 kB\n"
	"KernelPageSize:        4 kB\n"
	"Rss:                   4 kB\n"
	"AnonHugePages:         0 kB\n"
	"THPeligible:    0\n"
	"VmFlags: rd wr mr mw me ac sd \n"
	"7f0000010000-7f0000020000 rw-p 00000000 00:00 0 \n"
	"Size:                 64 kB\n"
	"VmFlags: rd wr mr mw me ac \n"		/* equal but for sd: a pair */
	"7f0000020000-7f0000030000 rw-p 00000000 00:00 0 \n"
	"VmFlags: rd wr mr mw me ac lo \n"	/* mlocked: flags */
	"7f0000030000-7f0000040000 rw-p 00000000 00:00 0 \n"
	"VmFlags: rd wr mr mw me ac \n"
	"7f0000040000-7f0000050000 rw-p 00000000 00:00 0 \n"
	"VmFlags: rd wr mr mw me ac \n"		/* policy differs (numa) */
	"7f0000050000-7f0000060000 rw-p 00000000 00:00 0 \n"
	"VmFlags: rd wr mr mw me ac io pf \n"
	"7f0000060000-7f0000070000 rw-p 00000000 00:00 0 \n"
	"VmFlags: rd wr mr mw me ac io pf \n";	/* special */

static const char numa[] =
	"7f0000000000 default anon=1 dirty=1 N0=1 kernelpagesize_kB=4\n"
	"7f0000010000 default\n"
	"7f0000020000 default\n"
	"7f0000030000 bind:0 anon=2 dirty=2 N0=2 kernelpagesize_kB=4\n"
	"7f0000040000 weighted interleave:0-1 anon=2 N0=2 kernelpagesize_kB=4\n"
	"7f0000050000 default\n"
	"7f0000060000 default\n";

static void test_smaps(void)
{
	struct vma_pair *pairs = NULL;
	struct maps_summary s;
	struct vma_list l;
	size_t n;

	n = run(smaps, numa, &l, &pairs, &s);
	ok(l.nr == 7 && l.have_vmflags && l.have_policy, "smaps: 7 vmas with VmFlags");
	ok(l.v[0].vmflags && !strcmp(l.v[0].vmflags, "rd wr mr mw me ac sd"),
	   "smaps: VmFlags attached, trimmed");
	ok(l.v[4].policy && !strcmp(l.v[4].policy, "weighted interleave:0-1") &&
	   !strcmp(l.v[0].policy, "default"), "numa_maps: policy with blanks");
	ok(n == 6, "smaps: 6 adjacent pairs (got %zu)", n);
	if (n == 6) {
		ok(pairs[0].reason == PAIR_UNKNOWN, "smaps: sd-only difference is a candidate");
		ok(pairs[1].reason == PAIR_FLAGS && pairs[2].reason == PAIR_FLAGS,
		   "smaps: lo differs -> flags");
		ok(pairs[3].reason == PAIR_POLICY, "smaps: bind vs interleave -> policy");
		ok(pairs[4].reason == PAIR_FLAGS, "smaps: io pf vs none -> flags");
		ok(pairs[5].reason == PAIR_SPECIAL, "smaps: io pf both -> special");
	}
	ok(!pair_reason_is_candidate(PAIR_FLAGS) && pair_reason_is_candidate(PAIR_UNKNOWN),
	   "reasons: candidates");
	free(pairs);
	vma_list_free(&l);
}

static void test_parse_errors(void)
{
	struct vma_list l;
	size_t bad = 0;

	vma_list_init(&l);
	ok(maps_parse(&l, "1000-2000 rw-p 0 00:00 0\nbogus line\n", &bad) == -1 &&
	   bad == 2, "parse: garbage line reported with its number");
	vma_list_free(&l);
	vma_list_init(&l);
	ok(maps_parse(&l, "VmFlags: rd\n", &bad) == -1, "parse: VmFlags before any VMA");
	vma_list_free(&l);
	vma_list_init(&l);
	ok(!maps_parse(&l, "", &bad) && l.nr == 0, "parse: empty text");
	ok(!maps_parse(&l, "1000-2000 rw-p 0 00:00 0", &bad) && l.nr == 1,
	   "parse: last line without newline");
	vma_list_free(&l);
}

/* ---- merging the module's VMA report (VMAMERGE_IOC_VMAS) ---- */

#define KV(s, e, pg, fl) { .start = (s), .end = (e), .pgoff = (pg), \
			   .vm_flags = 0x100073, .flags = (fl) }
#define K_ANON	VMAMERGE_VMA_ANON
#define K_ADJ	VMAMERGE_VMA_ADJACENT_PREV
#define K_SAME	(VMAMERGE_VMA_SAME_AV_PREV | VMAMERGE_VMA_SAME_ROOT_PREV)
#define K_ROOT	VMAMERGE_VMA_SAME_ROOT_PREV

/* As /proc shows it (anonymous offsets 0), 16-page VMAs. */
static const char mod_maps[] =
	"555555554000-555555556000 r--p 00001000 fe:01 1311                       /usr/bin/cat\n"
	"7f0000000000-7f0000010000 rw-p 00000000 00:00 0 \n"	/* 0 */
	"7f0000010000-7f0000020000 rw-p 00000000 00:00 0 \n"	/* 1: pgoff */
	"7f0000020000-7f0000030000 rw-p 00000000 00:00 0 \n"	/* 2: anon_vma */
	"7f0000030000-7f0000040000 rw-p 00000000 00:00 0 \n"	/* 3: both */
	"7f0000040000-7f0000050000 rw-p 00000000 00:00 0 \n"	/* 4: same root */
	"7f0000050000-7f0000060000 rw-p 00000000 00:00 0 \n"	/* 5: unknown */
	"7f0000060000-7f0000070000 rw-p 00000000 00:00 0 \n"	/* 6: a no av */
	"7f0000070000-7f0000080000 rw-p 00000000 00:00 0 \n"	/* 7: pgoff, no av */
	"7f0000080000-7f0000090000 r--p 00000000 00:00 0 \n"	/* 8: perms */
	"7f0000090000-7f00000a0000 r--p 00000000 00:00 0 \n"	/* 9: changed */
	"7f00000a0000-7f00000b0000 r--p 00000000 00:00 0 \n";	/* 10: changed */

static const struct vmamerge_vma mod_kv[] = {
	KV(0x555555554000ULL, 0x555555556000ULL, 1, VMAMERGE_VMA_FILE),
	KV(0x7f0000000000ULL, 0x7f0000010000ULL, 0x7f0000000ULL, K_ANON),
	/* moved by mremap: pgoff jumps, same anon_vma */
	KV(0x7f0000010000ULL, 0x7f0000020000ULL, 0x100000ULL, K_ANON | K_ADJ | K_SAME),
	/* linear, own anon_vma (e.g. from a fork) with another root */
	KV(0x7f0000020000ULL, 0x7f0000030000ULL, 0x100010ULL, K_ANON | K_ADJ),
	/* pgoff jumps and another anon_vma, same root */
	KV(0x7f0000030000ULL, 0x7f0000040000ULL, 0x200000ULL, K_ANON | K_ADJ | K_ROOT),
	/* linear, different anon_vma with the same root */
	KV(0x7f0000040000ULL, 0x7f0000050000ULL, 0x200010ULL, K_ANON | K_ADJ | K_ROOT),
	/* linear and the same anon_vma: nothing explains it */
	KV(0x7f0000050000ULL, 0x7f0000060000ULL, 0x200020ULL, K_ANON | K_ADJ | K_SAME),
	/* linear, this one has no anon_vma: unknown too */
	KV(0x7f0000060000ULL, 0x7f0000070000ULL, 0x200030ULL, K_ADJ),
	/* pgoff jumps, prev has no anon_vma: pgoff only */
	KV(0x7f0000070000ULL, 0x7f0000080000ULL, 0x300000ULL, K_ANON | K_ADJ),
	KV(0x7f0000080000ULL, 0x7f0000090000ULL, 0x300010ULL, K_ANON | K_ADJ),
	/* 9 grew after /proc was read: no match */
	KV(0x7f0000090000ULL, 0x7f00000a8000ULL, 0x300020ULL, K_ANON | K_ADJ),
};

static void test_module_merge(void)
{
	struct vma_pair *pairs = NULL;
	struct maps_summary s;
	struct vma_list l;
	char *buf = NULL, text[160];
	size_t n, bad, len = 0;
	FILE *f;

	vma_list_init(&l);
	ok(!maps_parse(&l, mod_maps, &bad), "module: parse");
	maps_finish(&l);
	n = maps_merge_module(&l, mod_kv, sizeof(mod_kv) / sizeof(mod_kv[0]));
	ok(n == 10 && l.nr_mod_unmatched == 2 && l.have_mod &&
	   l.anon_pgoff_visible, "module: 10 matched, 2 changed (got %zu)", n);
	ok(l.v[1].pgoff_known && l.v[1].pgoff == 0x7f0000000ULL &&
	   l.v[1].mod && (l.v[1].mod_flags & VMAMERGE_VMA_ANON) &&
	   l.v[1].vm_flags == 0x100073, "module: real anonymous pgoff, flags");
	ok(l.v[0].pgoff == 1, "module: file pgoff kept");
	ok(!l.v[10].mod && !l.v[10].pgoff_known && !l.v[11].mod &&
	   !l.v[11].pgoff_known, "module: changed VMAs stay unknown");
	n = maps_analyze(&l, &pairs, &s);
	ok(n == 9 && s.have_mod, "module: 9 pairs (got %zu)", n);
	if (n == 9) {
		ok(pairs[0].reason == PAIR_PGOFF && pairs[0].exact &&
		   pairs[0].want_pgoff == 0x7f0000010ULL,
		   "module: pgoff jump, same anon_vma -> pgoff");
		ok(pairs[1].reason == PAIR_ANON_VMA && pairs[1].different_root,
		   "module: linear, other anon_vma and root -> anon_vma (different root)");
		ok(pairs[2].reason == PAIR_BOTH && !pairs[2].different_root,
		   "module: jump and other anon_vma -> pgoff and anon_vma");
		ok(pairs[3].reason == PAIR_ANON_VMA && !pairs[3].different_root,
		   "module: linear, same root -> anon_vma");
		ok(pairs[4].reason == PAIR_UNEXPLAINED,
		   "module: linear and same anon_vma -> unknown");
		ok(pairs[5].reason == PAIR_UNEXPLAINED,
		   "module: linear, one without anon_vma -> unknown");
		ok(pairs[6].reason == PAIR_PGOFF,
		   "module: jump, one without anon_vma -> pgoff");
		ok(pairs[7].a == 9 && pairs[7].reason == PAIR_UNKNOWN &&
		   !pairs[7].exact && pairs[7].changed &&
		   pairs[8].reason == PAIR_UNKNOWN,
		   "module: rw-p/r--p not a pair; changed VMA -> pgoff or anon_vma");
		maps_format_pair(text, sizeof(text), &pairs[1]);
		ok(!strcmp(text, "anon_vma (different root)"), "module: text '%s'", text);
		maps_format_pair(text, sizeof(text), &pairs[3]);
		ok(!strcmp(text, "anon_vma"), "module: text '%s'", text);
		maps_format_pair(text, sizeof(text), &pairs[0]);
		ok(!strcmp(text, "pgoff (linear would be 0x7f0000010)"),
		   "module: text '%s'", text);
		maps_format_pair(text, sizeof(text), &pairs[2]);
		ok(!strcmp(text, "pgoff and anon_vma (linear pgoff would be 0x100020)"),
		   "module: text '%s'", text);
		maps_format_pair(text, sizeof(text), &pairs[7]);
		ok(strstr(text, "changed") != NULL, "module: text '%s'", text);
	}
	ok(!strcmp(pair_reason_name(PAIR_BOTH), "pgoff_and_anon_vma") &&
	   !strcmp(pair_reason_name(PAIR_UNEXPLAINED), "unknown") &&
	   pair_reason_is_candidate(PAIR_BOTH) &&
	   !pair_reason_is_candidate(PAIR_UNEXPLAINED), "module: reason names");
	f = open_memstream(&buf, &len);
	maps_print_summary(f, &s, l.anon_pgoff_visible);
	fclose(f);
	ok(!strcmp(buf, "12 vmas, 9 adjacent anonymous pairs: 2 differ in pgoff, 2 differ only in anon_vma, 1 differ in both, 2 differ in pgoff or anon_vma (changed while being read), 2 unexplained (unknown)\n"),
	   "module: summary line");
	ok(maps_missed_merges(&s) == 7,
	   "module: 7 missed merges (pgoff, anon_vma, both, changed; not unexplained)");
	printf("# %s", buf);
	free(buf);
	free(pairs);
	vma_list_free(&l);
}

/*
 * Runs: the module fixture's pairs group where they chain and are told the
 * same way; a longer fixture of pages moved one by one (each pgoff jumps)
 * is one run, the linear VMA with its own anon_vma after it another.
 */
static const char run_maps[] =
	"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
	"7f0000001000-7f0000002000 rw-p 00000000 00:00 0 \n"
	"7f0000002000-7f0000003000 rw-p 00000000 00:00 0 \n"
	"7f0000003000-7f0000004000 rw-p 00000000 00:00 0 \n"
	"7f0000004000-7f0000005000 rw-p 00000000 00:00 0 \n";

static const struct vmamerge_vma run_kv[] = {
	KV(0x7f0000000000ULL, 0x7f0000001000ULL, 0x400ULL, K_ANON),
	KV(0x7f0000001000ULL, 0x7f0000002000ULL, 0x300ULL, K_ANON | K_ADJ | K_SAME),
	KV(0x7f0000002000ULL, 0x7f0000003000ULL, 0x200ULL, K_ANON | K_ADJ | K_SAME),
	KV(0x7f0000003000ULL, 0x7f0000004000ULL, 0x100ULL, K_ANON | K_ADJ | K_SAME),
	KV(0x7f0000004000ULL, 0x7f0000005000ULL, 0x101ULL, K_ANON | K_ADJ),
};

static void test_runs(void)
{
	static const size_t mod_ends[] = { 1, 2, 3, 4, 6, 6, 7, 9, 9 };
	struct vma_pair *pairs = NULL;
	struct maps_summary s;
	struct vma_list l;
	char *buf = NULL, text[160];
	size_t i, n, bad, len = 0;
	bool good = true;
	FILE *f;

	vma_list_init(&l);
	maps_parse(&l, mod_maps, &bad);
	maps_finish(&l);
	maps_merge_module(&l, mod_kv, sizeof(mod_kv) / sizeof(mod_kv[0]));
	n = maps_analyze(&l, &pairs, &s);
	for (i = 0; n == 9 && i < n; i++)
		if (maps_run_end(pairs, n, i) != mod_ends[i]) {
			printf("# run from pair %zu ends at %zu\n", i,
			       maps_run_end(pairs, n, i));
			good = false;
		}
	ok(n == 9 && good,
	   "runs: one per reason told apart; two unexplained, two changed chain");
	if (n == 9) {
		maps_format_run(text, sizeof(text), &pairs[4], 2);
		ok(!strcmp(text, pair_reason_text(PAIR_UNEXPLAINED)),
		   "runs: text of two unexplained '%s'", text);
		maps_format_run(text, sizeof(text), &pairs[7], 2);
		ok(!strcmp(text, "pgoff or anon_vma (the VMAs changed while being read)"),
		   "runs: text of two changed '%s'", text);
	}
	maps_format_pgoff(text, sizeof(text), &l.v[1]);
	ok(!strcmp(text, "0x7f0000000"), "runs: pgoff column '%s'", text);
	maps_format_pgoff(text, sizeof(text), &l.v[11]);
	ok(!strcmp(text, "-"), "runs: unknown pgoff column '%s'", text);
	free(pairs);
	vma_list_free(&l);

	vma_list_init(&l);
	maps_parse(&l, run_maps, &bad);
	maps_finish(&l);
	maps_merge_module(&l, run_kv, sizeof(run_kv) / sizeof(run_kv[0]));
	n = maps_analyze(&l, &pairs, &s);
	ok(n == 4 && maps_run_end(pairs, n, 0) == 3 &&
	   maps_run_end(pairs, n, 3) == 4,
	   "runs: three moved pages one run of 4 VMAs, then a lone pair");
	if (n == 4) {
		maps_format_run(text, sizeof(text), pairs, 3);
		ok(!strcmp(text, "pgoff"), "runs: a run's pgoff text '%s'", text);
		maps_format_run(text, sizeof(text), &pairs[3], 1);
		ok(!strcmp(text, "anon_vma (different root)"),
		   "runs: a lone pair's text '%s'", text);
		maps_format_pair(text, sizeof(text), &pairs[1]);
		ok(!strcmp(text, "pgoff (linear would be 0x301)"),
		   "runs: one pair of the run '%s'", text);
	}
	f = open_memstream(&buf, &len);
	maps_print_missed(f, &s);
	fclose(f);
	ok(!strcmp(buf, "missed merges: 4 (vmamerge compact would leave 1 vmas at best)\n"),
	   "runs: missed merges line '%s'", buf);
	free(buf);
	free(pairs);
	vma_list_free(&l);
}

/* Exactly what the module reports for an untouched anonymous mmap. */
static void test_module_single(void)
{
	static const char text[] =
		"7f0000000000-7f0000010000 rw-p 00000000 00:00 0 \n"
		"7f0000010000-7f0000020000 rw-p 00000000 00:00 0 \n"
		"7f0000030000-7f0000040000 rw-p 00000000 00:00 0 \n";
	static const struct vmamerge_vma kv[] = {
		KV(0x7f0000000000ULL, 0x7f0000010000ULL, 0x7f0000000ULL, K_ANON),
		KV(0x7f0000010000ULL, 0x7f0000020000ULL, 0x7f0000010ULL, K_ANON | K_ADJ),
		KV(0x7f0000030000ULL, 0x7f0000040000ULL, 0x7f0000030ULL, K_ANON),
	};
	struct vma_pair *pairs = NULL;
	struct maps_summary s;
	struct vma_list l;
	char *buf = NULL;
	size_t n, bad, len = 0;
	FILE *f;

	vma_list_init(&l);
	maps_parse(&l, text, &bad);
	maps_finish(&l);
	ok(maps_merge_module(&l, kv, 3) == 3 && !l.nr_mod_unmatched,
	   "module: all matched");
	n = maps_analyze(&l, &pairs, &s);
	ok(n == 1 && pairs[0].reason == PAIR_ANON_VMA && pairs[0].different_root,
	   "module: no ADJACENT gap pair, linear pair with own anon_vmas");
	f = open_memstream(&buf, &len);
	maps_print_summary(f, &s, l.anon_pgoff_visible);
	fclose(f);
	ok(!strcmp(buf, "3 vmas, 1 adjacent anonymous pairs: 0 differ in pgoff, 1 differ only in anon_vma, 0 differ in both\n"),
	   "module: plain summary line");
	free(buf);
	free(pairs);
	vma_list_free(&l);
	/* Without ADJACENT_PREV the prev-relative flags say nothing. */
	vma_list_init(&l);
	maps_parse(&l, text, &bad);
	maps_finish(&l);
	{
		struct vmamerge_vma kv2[3];

		memcpy(kv2, kv, sizeof(kv2));
		kv2[1].flags = K_ANON;
		maps_merge_module(&l, kv2, 3);
	}
	n = maps_analyze(&l, &pairs, &s);
	ok(n == 1 && !pairs[0].exact && pairs[0].reason == PAIR_ANON_VMA,
	   "module: not adjacent for the module -> not exact, from pgoff only");
	free(pairs);
	vma_list_free(&l);
	vma_list_init(&l);
	maps_parse(&l, text, &bad);
	maps_finish(&l);
	ok(maps_merge_module(&l, NULL, 0) == 0 && l.nr_mod_unmatched == 3,
	   "module: empty report matches nothing");
	vma_list_free(&l);
}

/* A fake module: serves fake_kv[] in batches, as vma_report.c does. */
struct fake {
	const struct vmamerge_vma *kv;
	size_t nr;
	int calls;
	int err;		/* fail with this on call fail_at */
	int fail_at;
	bool bad_args;
};

static int fake_ioctl(void *ctx, struct vmamerge_vmas *arg)
{
	struct fake *f = ctx;
	struct vmamerge_vma *out = (struct vmamerge_vma *)(uintptr_t)arg->vmas_ptr;
	size_t i;
	__u32 n = 0;

	f->calls++;
	if (f->err && f->calls == f->fail_at)
		return -f->err;
	if (arg->size != sizeof(*arg) || arg->vma_size != sizeof(*out) ||
	    arg->target_kind != VMAMERGE_TARGET_PID || arg->target_id != 42 ||
	    arg->reserved0 || arg->reserved[0] || arg->reserved[1] ||
	    arg->nr > VMAMERGE_VMAS_MAX)
		f->bad_args = true;
	for (i = 0; i < f->nr && n < arg->nr; i++)
		if (f->kv[i].end > arg->addr)
			out[n++] = f->kv[i];
	arg->nr = n;
	return 0;
}

static void test_modvmas_fetch(void)
{
	struct fake f = { mod_kv, sizeof(mod_kv) / sizeof(mod_kv[0]), 0, 0, 0, false };
	struct vmamerge_vma *v = NULL;
	size_t nr = 0;
	int ret;

	ret = modvmas_fetch(fake_ioctl, &f, VMAMERGE_TARGET_PID, 42, 4, &v, &nr);
	ok(!ret && nr == f.nr && !f.bad_args && f.calls == 3 &&
	   !memcmp(v, mod_kv, sizeof(mod_kv)),
	   "fetch: 11 VMAs in batches of 4: 3 calls (got %d, %zu)", f.calls, nr);
	free(v);
	f.calls = 0;
	f.nr = 8;
	ret = modvmas_fetch(fake_ioctl, &f, VMAMERGE_TARGET_PID, 42, 4, &v, &nr);
	ok(!ret && nr == 8 && f.calls == 3,
	   "fetch: exact multiple: one more call that returns 0");
	free(v);
	f.calls = 0;
	f.nr = 0;
	ret = modvmas_fetch(fake_ioctl, &f, VMAMERGE_TARGET_PID, 42, 0, &v, &nr);
	ok(!ret && nr == 0 && !v && f.calls == 1, "fetch: no VMAs");
	f.calls = 0;
	f.nr = 11;
	f.err = EPERM;
	f.fail_at = 2;
	ret = modvmas_fetch(fake_ioctl, &f, VMAMERGE_TARGET_PID, 42, 4, &v, &nr);
	ok(ret == -EPERM && !v && !nr, "fetch: error on the second call");
	f.calls = 0;
	f.err = ENOTTY;
	f.fail_at = 1;
	ret = modvmas_fetch(fake_ioctl, &f, VMAMERGE_TARGET_PID, 42, 0, &v, &nr);
	ok(ret == -ENOTTY, "fetch: ENOTTY passed on");
	{
		static const struct vmamerge_vma unsorted[] = {
			KV(0x2000, 0x3000, 2, K_ANON),
			KV(0x1000, 0x2000, 1, K_ANON),
		};
		struct fake u = { unsorted, 2, 0, 0, 0, false };

		ret = modvmas_fetch(fake_ioctl, &u, VMAMERGE_TARGET_PID, 42, 0, &v, &nr);
		ok(ret == -EIO, "fetch: out-of-order answer -> EIO");
	}
}

/* The real path, without the module: no device, and a device without it. */
static void test_modvmas_load(void)
{
	struct vmamerge_vma *v = NULL;
	bool open_failed = false;
	size_t nr = 1;
	int ret;

	ret = modvmas_load("/nonexistent/vmamerge", getpid(), &v, &nr, &open_failed);
	ok(ret == -ENOENT && open_failed && !v && !nr,
	   "load: no device -> ENOENT (got %d)", ret);
	ret = modvmas_load("/dev/null", getpid(), &v, &nr, &open_failed);
	ok(ret == -ENOTTY && !open_failed && !v && !nr,
	   "load: device without VMAMERGE_IOC_VMAS -> ENOTTY (got %d)", ret);
}

/* ---- output capture ---- */

/* What a test prints into mem_open()'s FILE, as mem_text() returns it. */
struct mem {
	FILE *f;
	char *buf;
	size_t len;
};

static FILE *mem_open(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	return m->f;
}

/* Close the FILE: the text (free it). */
static char *mem_text(struct mem *m)
{
	fclose(m->f);
	return m->buf;
}

/* ---- argument parsing ---- */

static char parse_err[256];

/* Parse "vmamerge" + the NULL-terminated arguments, as execve passes them. */
static int parsev(struct cli *c, ...)
{
	static char store[32][64];
	static char *argv[33];
	const char *a;
	int argc = 0;
	va_list ap;

	snprintf(store[argc], sizeof(store[0]), "vmamerge");
	argv[argc] = store[argc];
	argc++;
	va_start(ap, c);
	while ((a = va_arg(ap, const char *)) && argc < 32) {
		snprintf(store[argc], sizeof(store[0]), "%s", a);
		argv[argc] = store[argc];
		argc++;
	}
	va_end(ap);
	argv[argc] = NULL;
	return cli_parse(argc, argv, c, parse_err, sizeof(parse_err));
}

/* The same, split at blanks. */
static int parse(struct cli *c, const char *line)
{
	static char store[512];
	static char *argv[32];
	int argc = 0;
	char *p;

	snprintf(store, sizeof(store), "vmamerge %s", line);
	for (p = strtok(store, " "); p && argc < 31; p = strtok(NULL, " "))
		argv[argc++] = p;
	argv[argc] = NULL;
	return cli_parse(argc, argv, c, parse_err, sizeof(parse_err));
}

/* c's positional arguments are exactly want[] and then NULL. */
static int args_are(const struct cli *c, const char *const *want)
{
	int i;

	for (i = 0; want[i]; i++)
		if (i >= c->nargs || !c->args[i] || strcmp(c->args[i], want[i]))
			return 0;
	return c->nargs == i && c->args[i] == NULL;
}

static void test_cli(void)
{
	static const char *const bad[] = {
		"", "frobnicate", "status extra", "mode sometimes", "mode optin never",
		"enable", "enable -p", "enable -p 12abc", "enable -p -5", "enable -p 0",
		"enable -p 1 -p 2", "disable -p 1 --no-exec", "run", "run --no-exec",
		"stats --bogus", "stats -p 4294967296", "maps", "maps --json",
		"status --json extra", "enable -p 1 extra", "maps -p 2147483648",
		"verify", "verify --json", "verify -p 1 extra", "verify -p 1 --no-exec",
		"features bogus", "features +renumber -frob", "help frob", "help stats mode",
		"--frob", "stats -p 1 --all", "enable --json -p 1", "run --json ls",
		"compact", "compact -p 1 extra", "compact -p 1 --no-exec",
		"compact -p 1 --summary", "compact --all", "compact -p 0",
		"check-kernel a b", "check-kernel ../x", "check-kernel a/b",
		"check-kernel .x", "check-kernel --image", "check-kernel --config",
		"check-kernel --image=",
		"check-kernel --image a --image b", "check-kernel -p 1",
		"check-kernel --all", "check-kernel 'a b'",
	};
	static const char *const run_argv[] = { "prog", "a", "b c", "", "d", NULL };
	static const char *const run_p[] = { "prog", "-p", "3", NULL };
	static const char *const run_ls[] = { "ls", "-l", "--no-exec", NULL };
	static const char *const feat[] = { "-renumber", "+transplant", NULL };
	static const char *const run_help[] = { "ls", "--help", NULL };
	static const char *const none[] = { NULL };
	struct cli c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(parse(&c, bad[i]) == -1, "cli: rejects '%s'", bad[i]);

	/* the argv run executes: exactly the arguments, then NULL */
	ok(!parsev(&c, "run", "--", "prog", "a", "b c", "", "d", NULL) &&
	   c.cmd == CMD_RUN && !c.no_exec && args_are(&c, run_argv),
	   "cli: run -- prog a 'b c' '' d: exactly that argv, NULL-terminated");
	ok(!parsev(&c, "run", "--no-exec", "--", "prog", "a", "b c", "", "d", NULL) &&
	   c.no_exec && args_are(&c, run_argv),
	   "cli: run --no-exec -- prog a 'b c' '' d: exactly that argv");
	ok(!parsev(&c, "run", "--no-exec", "prog", "a", "b c", "", "d", NULL) &&
	   c.no_exec && args_are(&c, run_argv),
	   "cli: run --no-exec prog ... (no --): exactly that argv");
	ok(!parsev(&c, "run", "prog", "a", "b c", "", "d", NULL) &&
	   args_are(&c, run_argv), "cli: run prog ... (no --): exactly that argv");
	ok(!parsev(&c, "run", "prog", "-p", "3", NULL) && !c.have_pid &&
	   args_are(&c, run_p), "cli: run prog -p 3: -p belongs to prog");
	ok(!parse(&c, "run --no-exec -- ls -l --no-exec") && c.no_exec &&
	   args_are(&c, run_ls), "cli: run --no-exec -- ls -l --no-exec");
	ok(!parse(&c, "run -- -weird") && c.nargs == 1 &&
	   !strcmp(c.args[0], "-weird") && !c.args[1], "cli: run -- -weird");
	ok(!parse(&c, "run -- --") && c.nargs == 1 && !strcmp(c.args[0], "--") &&
	   !c.args[1], "cli: run -- -- runs a program named --");

	/* usage errors: one line, a pointer to the help, 125 for run */
	ok(parse(&c, "stats --x") == -1 &&
	   !strcmp(parse_err, "unknown option '--x' for 'stats'; see 'vmamerge help stats'") &&
	   cli_usage_status(&c) == 2, "cli: stats --x: '%s'", parse_err);
	ok(parse(&c, "stats --x=3") == -1 &&
	   !strcmp(parse_err, "unknown option '--x' for 'stats'; see 'vmamerge help stats'"),
	   "cli: stats --x=3: '%s'", parse_err);
	ok(parse(&c, "maps -z -p 1") == -1 &&
	   !strcmp(parse_err, "unknown option '-z' for 'maps'; see 'vmamerge help maps'"),
	   "cli: maps -z: '%s'", parse_err);
	ok(parse(&c, "run --bogus ls") == -1 && cli_usage_status(&c) == 125 &&
	   !strcmp(parse_err, "unknown option '--bogus' for 'run'; see 'vmamerge help run'"),
	   "cli: run --bogus: exit 125, '%s'", parse_err);
	ok(parse(&c, "run") == -1 && cli_usage_status(&c) == 125 &&
	   !strcmp(parse_err, "run needs a command; see 'vmamerge help run'"),
	   "cli: run: exit 125, '%s'", parse_err);
	ok(parse(&c, "enable -p") == -1 &&
	   !strcmp(parse_err, "option '-p' needs an argument; see 'vmamerge help enable'"),
	   "cli: enable -p: '%s'", parse_err);
	ok(parse(&c, "enable -p x") == -1 &&
	   !strcmp(parse_err, "invalid PID 'x'; see 'vmamerge help enable'"),
	   "cli: enable -p x: '%s'", parse_err);
	ok(parse(&c, "frob") == -1 && cli_usage_status(&c) == 2 &&
	   !strcmp(parse_err, "unknown command 'frob'; see 'vmamerge --help'"),
	   "cli: frob: '%s'", parse_err);
	ok(parse(&c, "") == -1 &&
	   !strcmp(parse_err, "missing command; see 'vmamerge --help'"),
	   "cli: no command: '%s'", parse_err);
	ok(parse(&c, "features frob") == -1 &&
	   !strcmp(parse_err, "unknown feature 'frob' (all, none, [+|-]renumber, [+|-]transplant); see 'vmamerge help features'"),
	   "cli: features frob: '%s'", parse_err);
	ok(!strchr(parse_err, '\n'), "cli: usage errors are one line");

	/* help */
	ok(!parse(&c, "--help") && c.cmd == CMD_HELP && c.help_cmd == CMD_NONE,
	   "cli: --help");
	ok(!parse(&c, "help") && c.cmd == CMD_HELP && c.help_cmd == CMD_NONE,
	   "cli: help");
	ok(!parse(&c, "help stats") && c.cmd == CMD_HELP && c.help_cmd == CMD_STATS,
	   "cli: help stats");
	ok(!parse(&c, "maps -h") && c.cmd == CMD_HELP && c.help_cmd == CMD_MAPS,
	   "cli: maps -h");
	ok(!parse(&c, "run --help") && c.cmd == CMD_HELP && c.help_cmd == CMD_RUN,
	   "cli: run --help");
	ok(!parse(&c, "run ls --help") && c.cmd == CMD_RUN && args_are(&c, run_help),
	   "cli: run ls --help: ls's --help");
	ok(!parse(&c, "features --help") && c.cmd == CMD_HELP &&
	   c.help_cmd == CMD_FEATURES, "cli: features --help");
	ok(!parse(&c, "--version") && c.cmd == CMD_VERSION, "cli: --version");

	/* the other commands */
	ok(!parse(&c, "status") && c.cmd == CMD_STATUS && args_are(&c, none), "cli: status");
	ok(!parse(&c, "status --json") && c.json, "cli: status --json");
	ok(!parse(&c, "mode") && c.cmd == CMD_MODE && args_are(&c, none), "cli: mode (show)");
	ok(!parse(&c, "mode --json") && c.json && !c.nargs, "cli: mode --json");
	ok(!parse(&c, "mode always") && c.nargs == 1 && !strcmp(c.args[0], "always") &&
	   !c.args[1], "cli: mode always");
	ok(!parse(&c, "mode always --json") && c.json && c.nargs == 1 &&
	   !strcmp(c.args[0], "always") && !c.args[1], "cli: mode always --json (permuted)");
	ok(!parse(&c, "enable -p 42 --no-exec") && c.cmd == CMD_ENABLE &&
	   c.have_pid && c.pid == 42 && c.no_exec, "cli: enable -p 42 --no-exec");
	ok(!parse(&c, "enable --pid=7") && c.pid == 7, "cli: --pid=7");
	ok(!parse(&c, "enable --pid 8") && c.pid == 8, "cli: --pid 8");
	ok(!parse(&c, "disable -p9") && c.pid == 9, "cli: -p9");
	ok(!parse(&c, "stats --json -p 2147483647") && c.json && c.pid == 2147483647,
	   "cli: stats --json -p INT_MAX");
	ok(!parse(&c, "stats") && !c.have_pid && !c.all, "cli: stats (global)");
	ok(!parse(&c, "stats --all --json") && c.all && c.json, "cli: stats --all --json");
	ok(!parse(&c, "features -renumber +transplant") && args_are(&c, feat),
	   "cli: features tokens with -, NULL-terminated");
	ok(!parse(&c, "features --json -renumber +transplant") && c.json &&
	   args_are(&c, feat), "cli: features --json TOKENS");
	ok(parse(&c, "features -renumber -- --json") == -1 &&
	   !strncmp(parse_err, "unknown feature '--json'", 24),
	   "cli: features -- ends the options: '--json' is then a token");
	ok(!parse(&c, "features") && args_are(&c, none), "cli: features (show)");
	ok(!parse(&c, "maps -p 3 --summary") && c.pid == 3 && c.summary, "cli: maps --summary");
	ok(!parse(&c, "verify -p 5 --json") && c.cmd == CMD_VERIFY && c.pid == 5 &&
	   c.json, "cli: verify -p 5 --json");
	ok(!parse(&c, "compact -p 5 --json") && c.cmd == CMD_COMPACT && c.pid == 5 &&
	   c.json, "cli: compact -p 5 --json");
	ok(!parse(&c, "compact --pid=6") && c.cmd == CMD_COMPACT && c.pid == 6 &&
	   !c.json && args_are(&c, none), "cli: compact --pid=6");
	ok(parse(&c, "compact --json") == -1 && cli_usage_status(&c) == 2 &&
	   !strcmp(parse_err, "compact needs -p PID; see 'vmamerge help compact'"),
	   "cli: compact --json: '%s'", parse_err);
	ok(!parse(&c, "help compact") && c.cmd == CMD_HELP &&
	   c.help_cmd == CMD_COMPACT && !strcmp(cli_cmd_name(CMD_COMPACT), "compact"),
	   "cli: help compact");
	ok(!parse(&c, "compact -h") && c.cmd == CMD_HELP && c.help_cmd == CMD_COMPACT,
	   "cli: compact -h");
	ok(!parse(&c, "check-kernel") && c.cmd == CMD_CHECK_KERNEL && !c.nargs &&
	   !c.image && !c.config && !c.json, "cli: check-kernel");
	ok(!parse(&c, "check-kernel --json 6.1.0-58-amd64 --image=/i --config /c") &&
	   c.json && c.nargs == 1 && !strcmp(c.args[0], "6.1.0-58-amd64") &&
	   !strcmp(c.image, "/i") && !strcmp(c.config, "/c"),
	   "cli: check-kernel --json RELEASE --image=PATH --config PATH");
	ok(!parse(&c, "check-kernel 6.12.117+deb13.1-amd64") &&
	   !strcmp(c.args[0], "6.12.117+deb13.1-amd64"), "cli: check-kernel with + and .");
	ok(!parse(&c, "check-kernel --image -1") && !strcmp(c.image, "-1"),
	   "cli: check-kernel --image -1: the path is -1");
	ok(parse(&c, "check-kernel a b") == -1 && cli_usage_status(&c) == 2 &&
	   !strcmp(parse_err, "check-kernel takes at most one release; see 'vmamerge help check-kernel'"),
	   "cli: check-kernel a b: '%s'", parse_err);
	ok(parse(&c, "check-kernel ../etc") == -1 &&
	   !strcmp(parse_err, "invalid kernel release '../etc'; see 'vmamerge help check-kernel'"),
	   "cli: check-kernel ../etc: '%s'", parse_err);
	ok(parse(&c, "check-kernel --image a --image b") == -1 &&
	   !strcmp(parse_err, "--image given twice; see 'vmamerge help check-kernel'"),
	   "cli: check-kernel --image twice: '%s'", parse_err);
	ok(parsev(&c, "check-kernel", "--config", "", NULL) == -1 &&
	   !strcmp(parse_err, "--config needs a path, not ''; see 'vmamerge help check-kernel'"),
	   "cli: check-kernel --config '': '%s'", parse_err);
	ok(!parse(&c, "help check-kernel") && c.help_cmd == CMD_CHECK_KERNEL,
	   "cli: help check-kernel");
	ok(release_valid("6.1.0-57-amd64") && release_valid("6.1.192-vmamerge-debug") &&
	   release_valid("7.3.4+deb13~bpo1") && !release_valid("") &&
	   !release_valid("-x") && !release_valid(".x") && !release_valid("a/b") &&
	   !release_valid("a b") && !release_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	   "cli: release_valid");
}

static void test_help(void)
{
	struct mem m;
	char *buf;

	cli_help(mem_open(&m), CMD_COMPACT);
	buf = mem_text(&m);
	ok(!strncmp(buf, "usage: vmamerge compact -p PID [--json]\n\n", 41) &&
	   strstr(buf, "\n  -p, --pid PID  the target process") &&
	   strstr(buf, "\n  --json         one JSON object") &&
	   strstr(buf, "\n  -h, --help     this text"),
	   "help compact: usage and its three options");
	free(buf);
	cli_help(mem_open(&m), CMD_NONE);
	buf = mem_text(&m);
	ok(strstr(buf, "\n  compact -p PID [--json]\n      merge PID's") != NULL,
	   "help: lists compact");
	free(buf);
}

/* ---- verify output ---- */

static char *verify_out(const struct vmamerge_verify *v, int json)
{
	struct mem m;

	(json ? verify_print_json : verify_print_text)(mem_open(&m), 42, v);
	return mem_text(&m);
}

static void test_verify(void)
{
	struct vmamerge_verify v;
	char *out;

	ok(!strcmp(verify_kind_name(VMAMERGE_VIOL_INDEX), "index") &&
	   !strcmp(verify_kind_name(VMAMERGE_VIOL_NOT_ANON), "not_anon") &&
	   !strcmp(verify_kind_name(99), "unknown"), "verify: kind names");
	memset(&v, 0, sizeof(v));
	v.nr_vmas = 3;
	v.nr_pages = 16;
	v.nr_swapcache = 2;
	out = verify_out(&v, 0);
	ok(!strcmp(out, "pid 42: 3 VMAs, 16 pages (2 in the swap cache) checked: rmap invariants hold\n"),
	   "verify: clean text");
	free(out);
	out = verify_out(&v, 1);
	ok(!strcmp(out, "{\"pid\": 42, \"nr_vmas\": 3, \"nr_pages\": 16, \"nr_swapcache\": 2, \"nr_violations\": 0, \"first_violation\": null}\n"),
	   "verify: clean json");
	free(out);
	v.nr_violations = 16;
	v.kind = VMAMERGE_VIOL_INDEX;
	v.addr = 0x7f0000001000ULL;
	v.vma_start = 0x7f0000000000ULL;
	v.vma_end = 0x7f0000010000ULL;
	v.vma_pgoff = 0x7f0000000ULL;
	v.expected = 0x7f0000002ULL;
	v.found = 0x7f0000001ULL;
	snprintf(v.msg, sizeof(v.msg), "index 0x1 != \"linear\"");
	out = verify_out(&v, 0);
	ok(!strcmp(out, "pid 42: 3 VMAs, 16 pages (2 in the swap cache) checked: 16 violations\n"
		   "first: index at 0x7f0000001000: index 0x1 != \"linear\"\n"
		   "  vma 0x7f0000000000-0x7f0000010000 pgoff 0x7f0000000, expected 0x7f0000002, found 0x7f0000001\n"),
	   "verify: violation text");
	free(out);
	out = verify_out(&v, 1);
	ok(!strcmp(out, "{\"pid\": 42, \"nr_vmas\": 3, \"nr_pages\": 16, \"nr_swapcache\": 2, \"nr_violations\": 16, \"first_violation\": "
		   "{\"kind\": \"index\", \"addr\": \"0x7f0000001000\", \"vma_start\": \"0x7f0000000000\", \"vma_end\": \"0x7f0000010000\", "
		   "\"vma_pgoff\": \"0x7f0000000\", \"expected\": \"0x7f0000002\", \"found\": \"0x7f0000001\", \"msg\": \"index 0x1 != \\\"linear\\\"\"}}\n"),
	   "verify: violation json, msg escaped");
	free(out);
	memset(v.msg, 'x', sizeof(v.msg));
	v.nr_violations = 1;
	out = verify_out(&v, 0);
	ok(strstr(out, "checked: 1 violation\n") && strlen(strchr(out, '\n') + 1) ==
	   strlen("first: index at 0x7f0000001000: \n") + sizeof(v.msg) +
	   strlen("  vma 0x7f0000000000-0x7f0000010000 pgoff 0x7f0000000, expected 0x7f0000002, found 0x7f0000001\n"),
	   "verify: unterminated msg printed up to the field's end");
	free(out);
}

/* ---- compact output ---- */

static const char *json_checker;	/* main's argv[1], or NULL */

/*
 * Run the JSON checker over text with PATHs (blank-separated): what it
 * printed, "" when text is not one JSON value or a path is missing (why
 * on stderr).  Returns NULL (skip) without a checker.
 */
static char *json_paths(const char *text, const char *paths)
{
	char tmp[] = "/tmp/test_maps.XXXXXX", cmd[512], chunk[256], *out;
	struct mem m;
	FILE *f, *o;
	size_t n;
	int fd, st;

	if (!json_checker)
		return NULL;
	fd = mkstemp(tmp);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		perror("test_maps: json_paths");
		exit(1);
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s %s < %s", json_checker, paths, tmp);
	f = popen(cmd, "r");
	o = mem_open(&m);
	while (f && (n = fread(chunk, 1, sizeof(chunk), f)))
		fwrite(chunk, 1, n, o);
	st = f ? pclose(f) : -1;
	out = mem_text(&m);
	unlink(tmp);
	if (st)
		out[0] = '\0';
	return out;
}

/* ok() for a JSON check: skipped without a checker */
static void json_ok(const char *text, const char *paths, const char *want,
		    const char *what)
{
	char *got = json_paths(text, paths);

	if (!got) {
		ok(1, "%s # SKIP no JSON checker (test_maps T_JSON)", what);
		return;
	}
	ok(!strcmp(got, want), "%s", what);
	if (strcmp(got, want))
		printf("# t_json %s gave:\n%s# want:\n%s", paths, got, want);
	free(got);
}

static char *compact_out(const struct vmamerge_compact *r, int json)
{
	struct mem m;

	(json ? compact_print_json : compact_print_text)(mem_open(&m), 42, r);
	return mem_text(&m);
}

static void test_compact(void)
{
	static const char empty[] =
		"{\"pid\": 42, \"vmas_before\": 7, \"vmas_after\": 7, \"vmas_offered\": 0, \"merges\": 0, "
		"\"pages_rewritten\": 0, \"pages_renumbered\": 0, \"pages_transplanted\": 0, \"refused\": {}, "
		"\"lock_slices\": 1, \"max_hold_ns\": 999, \"max_hold_ms\": 0.000, \"counters\": {\"merge_attempts\": 0, ";
	static const char full[] =
		"{\"pid\": 42, \"vmas_before\": 120, \"vmas_after\": 12, \"vmas_offered\": 110, \"merges\": 108, "
		"\"pages_rewritten\": 4000, \"pages_renumbered\": 4000, \"pages_transplanted\": 96, "
		"\"refused\": {\"refused_shared\": 1, \"refused_thp\": 2, \"refused_softdirty\": 3}, "
		"\"lock_slices\": 37, \"max_hold_ns\": 1234567, \"max_hold_ms\": 1.234, \"counters\": {\"merge_attempts\": 200, ";
	struct vmamerge_compact r;
	char *out, name[32], want[64], paths[64];

	snprintf(want, sizeof(want), "counter_%u", VMAMERGE_NR_COUNTERS + 2);
	ok(!strcmp(counter_name(VMAMERGE_C_REFUSED_SOFTDIRTY, name, sizeof(name)),
		   "refused_softdirty") &&
	   !strcmp(counter_name(VMAMERGE_C_REFUSED_FAMILY, name, sizeof(name)),
		   "refused_family") &&
	   !strcmp(counter_name(VMAMERGE_C_MERGE_ATTEMPTS, name, sizeof(name)),
		   "merge_attempts") &&
	   !strcmp(counter_name(VMAMERGE_NR_COUNTERS + 2, name, sizeof(name)), want),
	   "counter names, an unknown one as counter_N");

	/* nothing to do */
	memset(&r, 0, sizeof(r));
	r.nr_counters = VMAMERGE_NR_COUNTERS;
	r.vmas_before = r.vmas_after = 7;
	r.lock_slices = 1;
	r.max_hold_ns = 999;
	out = compact_out(&r, 0);
	ok(!strcmp(out, "pid 42: 7 VMAs -> 7, 0 merges (0 VMAs offered)\n"
		   "pages rewritten: 0 (0 renumbered, 0 transplanted)\n"
		   "refused: none\n"
		   "mmap_lock: 1 slice, longest hold 0.000 ms\n"),
	   "compact: nothing merged, text");
	free(out);
	out = compact_out(&r, 1);
	ok(!strncmp(out, empty, strlen(empty)) &&
	   strstr(out, ", \"refused_softdirty\": 0") &&
	   strstr(out, ", \"refused_family\": 0, ") &&
	   strstr(out, ", \"rewrite_retries\": 0}}") &&
	   !strcmp(out + strlen(out) - 4, "0}}\n"), "compact: nothing merged, json");
	json_ok(out, ".refused .max_hold_ms .counters.refused_softdirty",
		"{}\n0.000\n0\n", "compact: nothing merged, json parses");
	free(out);

	/* a fragmented process: merges, rewrites, refusals of three kinds */
	r.vmas_before = 120;
	r.vmas_after = 12;
	r.vmas_offered = 110;
	r.merges = 108;
	r.lock_slices = 37;
	r.max_hold_ns = 1234567;
	r.counters[VMAMERGE_C_MERGE_ATTEMPTS] = 200;
	r.counters[VMAMERGE_C_PAGES_RENUMBERED] = 4000;
	r.counters[VMAMERGE_C_PAGES_TRANSPLANTED] = 96;
	/* 96 pages were renumbered and transplanted in the same pass */
	r.counters[VMAMERGE_C_PAGES_REWRITTEN] = 4000;
	r.counters[VMAMERGE_C_REFUSED_SHARED] = 1;
	r.counters[VMAMERGE_C_REFUSED_THP] = 2;
	r.counters[VMAMERGE_C_REHOMED_UNMERGED] = 5;
	r.counters[VMAMERGE_C_REFUSED_SOFTDIRTY] = 3;
	ok(compact_pages_rewritten(&r) == 4000, "compact: pages rewritten");
	out = compact_out(&r, 0);
	ok(!strcmp(out, "pid 42: 120 VMAs -> 12, 108 merges (110 VMAs offered)\n"
		   "pages rewritten: 4000 (4000 renumbered, 96 transplanted)\n"
		   "refused: refused_shared 1, refused_thp 2, refused_softdirty 3\n"
		   "mmap_lock: 37 slices, longest hold 1.234 ms\n"),
	   "compact: merges and refusals, text");
	free(out);
	out = compact_out(&r, 1);
	ok(!strncmp(out, full, strlen(full)) &&
	   strstr(out, ", \"rehomed_unmerged\": 5, \"refused_softdirty\": 3") &&
	   !strcmp(out + strlen(out) - 3, "}}\n"), "compact: merges and refusals, json");
	json_ok(out, ".pid .vmas_before .vmas_after .merges .pages_rewritten .refused .refused.refused_thp "
		".lock_slices .max_hold_ms .counters.merge_attempts .counters.rehomed_unmerged",
		"42\n120\n12\n108\n4000\n{\"refused_shared\": 1, \"refused_thp\": 2, \"refused_softdirty\": 3}\n"
		"2\n37\n1.234\n200\n5\n", "compact: merges and refusals, json parses");
	free(out);

	/* an older module: counters past nr_counters are not there */
	r.nr_counters = VMAMERGE_C_PAGES_TRANSPLANTED;
	r.merges = 1;
	r.max_hold_ns = 2000000;
	out = compact_out(&r, 0);
	ok(!strcmp(out, "pid 42: 120 VMAs -> 12, 1 merge (110 VMAs offered)\n"
		   "pages rewritten: 4000 (4000 renumbered, 0 transplanted)\n"
		   "refused: none\n"
		   "mmap_lock: 37 slices, longest hold 2.000 ms\n"),
	   "compact: fewer counters (older module), text");
	free(out);
	out = compact_out(&r, 1);
	ok(strstr(out, "\"refused\": {}") &&
	   !strcmp(strstr(out, "\"vmas_renumbered\": 0, "),
		   "\"vmas_renumbered\": 0, \"pages_renumbered\": 4000, \"vmas_transplanted\": 0}}\n"),
	   "compact: fewer counters (older module), json");
	json_ok(out, ".pages_transplanted .counters.pages_renumbered",
		"0\n4000\n", "compact: fewer counters, json parses");
	free(out);

	/* a newer module: unknown counters by number, never past the array */
	r.nr_counters = 1000;
	r.counters[VMAMERGE_NR_COUNTERS] = 9;
	r.counters[VMAMERGE_MAX_COUNTERS - 1] = 11;
	out = compact_out(&r, 1);
	snprintf(want, sizeof(want), ", \"counter_%u\": 9, ", VMAMERGE_NR_COUNTERS);
	ok(strstr(out, want) && strstr(out, ", \"counter_63\": 11}}\n") &&
	   !strstr(out, "counter_64") &&
	   strstr(out, "\"refused\": {\"refused_shared\": 1, \"refused_thp\": 2, \"refused_softdirty\": 3}"),
	   "compact: more counters (newer module): by number, at most 64");
	snprintf(paths, sizeof(paths), ".counters.counter_%u .counters.counter_63",
		 VMAMERGE_NR_COUNTERS);
	json_ok(out, paths, "9\n11\n", "compact: more counters, json parses");
	free(out);
}

static void test_numbers(void)
{
	static const char *const bad[] = {
		"", "12abc", "-1", "+5", " 5", "5 ", "0", "0x10", "2147483648",
		"99999999999999999999999",
	};
	unsigned long long v;
	pid_t pid;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(parse_pid(bad[i], &pid) == -1, "pid: rejects '%s'", bad[i]);
	ok(!parse_pid("1", &pid) && pid == 1, "pid: 1");
	ok(!parse_pid("007", &pid) && pid == 7, "pid: 007");
	ok(!parse_ull_strict("18446744073709551615", ~0ULL, &v) && v == ~0ULL,
	   "ull: max");
	ok(parse_ull_strict("18446744073709551616", ~0ULL, &v) == -1, "ull: overflow");
}

static void test_features(void)
{
	char bad[64], buf[128];
	unsigned int m;
	char *t1[] = { "-renumber" };
	char *t2[] = { "none", "+transplant" };
	char *t3[] = { "renumber,transplant" };
	char *t4[] = { "all", "bogus" };
	char *t5[] = { "-" };

	m = VMAMERGE_FEATURES_ALL;
	ok(!features_apply(&m, 1, t1, bad, sizeof(bad)) &&
	   m == VMAMERGE_FEATURE_TRANSPLANT, "features: -renumber");
	m = VMAMERGE_FEATURES_ALL;
	ok(!features_apply(&m, 2, t2, bad, sizeof(bad)) &&
	   m == VMAMERGE_FEATURE_TRANSPLANT, "features: none +transplant");
	m = 0;
	ok(!features_apply(&m, 1, t3, bad, sizeof(bad)) &&
	   m == VMAMERGE_FEATURES_ALL, "features: comma separated");
	m = 0;
	ok(features_apply(&m, 2, t4, bad, sizeof(bad)) == -1 && m == 0 &&
	   !strcmp(bad, "bogus"), "features: bad token, mask unchanged");
	ok(features_apply(&m, 1, t5, bad, sizeof(bad)) == -1, "features: lone '-'");
	format_features(buf, sizeof(buf), VMAMERGE_FEATURE_RENUMBER);
	ok(!strcmp(buf, "[renumber] transplant"), "features: format");
	ok(!debugfs_parse_features("[renumber] [transplant]\n", &m) &&
	   m == VMAMERGE_FEATURES_ALL, "debugfs features: both");
	ok(!debugfs_parse_features("renumber [transplant]\n", &m) &&
	   m == VMAMERGE_FEATURE_TRANSPLANT, "debugfs features: one");
	ok(debugfs_parse_features("[renumber] [frob]\n", &m) == -1,
	   "debugfs features: unknown");
}

static void test_json_features(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_features(f, VMAMERGE_FEATURE_TRANSPLANT);
	fputc('|', f);
	json_features(f, VMAMERGE_FEATURES_ALL | 0x100);
	fclose(f);
	ok(!strcmp(buf, "{\"renumber\": false, \"transplant\": true}|"
		   "{\"renumber\": true, \"transplant\": true, \"unknown\": 256}"),
	   "json features: '%s'", buf);
	free(buf);
}

static void test_mode(void)
{
	char buf[64];

	ok(debugfs_parse_mode("always [optin] never\n") == VMAMERGE_MODE_OPTIN,
	   "debugfs mode: optin");
	ok(debugfs_parse_mode("[always] optin never\n") == VMAMERGE_MODE_ALWAYS,
	   "debugfs mode: always");
	ok(debugfs_parse_mode("always optin never\n") == -1, "debugfs mode: none");
	format_mode(buf, sizeof(buf), VMAMERGE_MODE_NEVER);
	ok(!strcmp(buf, "always optin [never]"), "mode: format");
	ok(mode_from_name("optin") == VMAMERGE_MODE_OPTIN && mode_from_name("Optin") == -1,
	   "mode: names");
}

static void test_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_string(f, "a\"b\\c\n\x01 \xc3\xa9 \xff");
	fclose(f);
	ok(!strcmp(buf, "\"a\\\"b\\\\c\\u000a\\u0001 \xc3\xa9 \\u00ff\""),
	   "json: escapes, UTF-8 kept, invalid byte escaped");
	free(buf);
}

/* module/builds.h: which validated build a port starts from */
static void test_nearest_build(void)
{
	static const struct vmamerge_build b[] = {
		{ "6.1", "6.1.0-56-amd64", "v", "6.1.192-2", "full", "", "" },
		{ "6.1", "6.1.192-vmamerge-debug", "v", "6.1.192-2", "debug", "", "" },
		{ "6.12", "6.12.117+deb12-amd64", "v", "6.12.117-1~deb12u1", "full", "", "" },
		{ "6.12", "6.12.117+deb13-amd64", "v", "6.12.117-1", "smoke", "", "" },
		{ "6.12", "6.12.118+deb13-amd64", "v", "6.12.118-1", "smoke", "", "" },
	};
	const char *deb = "#1 SMP PREEMPT_DYNAMIC Debian ";
	char v[128];
	int n = sizeof(b) / sizeof(b[0]);

#define NEAREST(rel, ver) (snprintf(v, sizeof(v), "%s%s (2026-11-20)", deb, ver), \
			   vmamerge_nearest_build(b, n, rel, v))
	ok(NEAREST("6.1.0-55-amd64", "6.1.192-1") == 0, "nearest: 6.1.0-55 -> 6.1.0-56");
	ok(NEAREST("6.1.0-47-amd64", "6.1.170-3") == 0, "nearest: 6.1.0-47 -> 6.1.0-56 (never a debug twin)");
	ok(NEAREST("6.12.116+deb13-amd64", "6.12.116-1") == 3,
	   "nearest: 6.12.116+deb13 -> 6.12.117+deb13 (same generation wins a tie)");
	ok(NEAREST("6.12.116+deb12-amd64", "6.12.116-1~deb12u1") == 2,
	   "nearest: 6.12.116+deb12 -> 6.12.117+deb12");
	ok(NEAREST("6.12.117+deb13.1-amd64", "6.12.117-2") == 3,
	   "nearest: 6.12.117+deb13.1 -> 6.12.117+deb13");
	ok(NEAREST("6.12.119+deb13-amd64", "6.12.119-1") == 4, "nearest: 6.12.119+deb13 -> 6.12.118+deb13");
	ok(NEAREST("6.12.95+deb12-amd64", "6.12.95-1~bpo12+1") == 2, "nearest: a backport -> 6.12.117+deb12");
	ok(NEAREST("7.3.4+deb13-amd64", "7.3.4-1~bpo13+1") == -1, "nearest: no 7.3 build");
	ok(vmamerge_nearest_build(b, n, "6.12.50-custom", "#1 SMP") == 4,
	   "nearest: no Debian version: the newest of the series");
	ok(vmamerge_nearest_build(b, n, "6.123.1", "#1 SMP") == -1, "nearest: 6.123 is not 6.12");
#undef NEAREST
}

/* ---- check-kernel: kfp check's output, the verdict ---- */

#define KFP_HEAD "image 6.1.0-58-amd64\n" \
	"version #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-4 (2026-12-01)\n" \
	"build-id 0123abcd\n"
#define KFP_REFS "ref 6.1.0-56-amd64 differs 2 func:copy_vma struct:mm_struct\n" \
	"ref 6.1.0-57-amd64 identical 46 20 31\n" \
	"ref 6.12.117+deb12-amd64 other-series\n"

/* kfp_check_parse() of text for 6.1.0-58-amd64 with nfps fingerprints */
static int kparse(const char *text, size_t nfps, int status,
		  struct kfp_check *k, char *err, size_t len)
{
	static char buf[4096];
	size_t n = strlen(text);

	memcpy(buf, text, n + 1);
	return kfp_check_parse(buf, n, "6.1.0-58-amd64", nfps, status, k, err, len);
}

static void test_kfp_parse(void)
{
	static const struct {
		const char *text, *why;
		int status;
	} bad[] = {
		{ "", "kfp printed nothing", 1 },
		{ KFP_HEAD, "ends after 3 lines without the verdict", 1 },
		{ KFP_HEAD KFP_REFS, "ends after 6 lines without the verdict", 0 },
		{ KFP_HEAD KFP_REFS "equivalent 6.1.0-57-amd64", "middle of a line", 0 },
		{ "version x\n", "expected 'image RELEASE'", 1 },
		{ "image 6.1.0-59-amd64\n", "kfp checked kernel 6.1.0-59-amd64, not 6.1.0-58-amd64", 1 },
		{ "image  6.1.0-58-amd64\n", "expected 'image RELEASE'", 1 },
		{ "image 6.1.0-58-amd64 \n", "expected 'image RELEASE'", 1 },
		{ "image 6.1.0-58-amd64\nversion \n", "an empty UTS version", 1 },
		{ "image 6.1.0-58-amd64\nversion \001\n", "a control character", 1 },
		{ "image 6.1.0-58-amd64\nversion v\nbuild-id XYZ\n", "not hex", 1 },
		{ "image 6.1.0-58-amd64\nversion v\nbuild-id\n", "expected 'build-id HEX'", 1 },
		{ KFP_HEAD "ref 6.1.0-57-amd64 identical 46 20\nrefused none\n",
		  "expected 'identical NFUNCS NSTRUCTS NOPTIONS'", 1 },
		{ KFP_HEAD "ref 6.1.0-57-amd64 identical 46 20 x\nrefused none\n",
		  "expected 'identical NFUNCS NSTRUCTS NOPTIONS'", 1 },
		{ KFP_HEAD "ref 6.1.0-57-amd64 differs 3 a b\n", "3 items announced, 2 given", 1 },
		{ KFP_HEAD "ref 6.1.0-57-amd64 differs 0\n", "expected 'differs N ITEM...'", 1 },
		{ KFP_HEAD "ref 6.1.0-57-amd64 differs 1 a  b\n", "an empty or unprintable item", 1 },
		{ KFP_HEAD "ref 6.1.0-57-amd64 same\n", "unknown comparison 'same'", 1 },
		{ KFP_HEAD "ref 6.1.0-57-amd64 other-series x\n", "extra fields after other-series", 1 },
		{ KFP_HEAD "ref 6.1.0-57-amd64 other-series\nref 6.1.0-57-amd64 other-series\n",
		  "a second record of 6.1.0-57-amd64", 1 },
		{ KFP_HEAD KFP_REFS "ref 6.1.0-55-amd64 other-series\n",
		  "more ref records than the 3 fingerprints given", 1 },
		{ KFP_HEAD "ref 6.1.0-57-amd64 identical 1 2 3\nequivalent 6.1.0-57-amd64\n",
		  "kfp reported on 1 of the 3 fingerprints given", 0 },
		{ KFP_HEAD KFP_REFS "equivalent 6.1.0-57-amd64\n", "exited with status 1 after 'equivalent'", 1 },
		{ KFP_HEAD KFP_REFS "equivalent 6.1.0-56-amd64\n", "has no 'identical' record", 0 },
		{ KFP_HEAD KFP_REFS "refused 6.1.0-56-amd64\n", "refused although 6.1.0-57-amd64 is identical", 1 },
		{ KFP_HEAD KFP_REFS "equivalent 6.1.0-57-amd64\nequivalent 6.1.0-57-amd64\n",
		  "a line after the verdict", 0 },
		{ KFP_HEAD KFP_REFS "frobnicated\n", "expected 'ref ...'", 0 },
		{ KFP_HEAD "ref 6.1.0-56-amd64 differs 2 a b\nref 6.1.0-55-amd64 differs 1 c\n"
		  "ref 6.12.117+deb12-amd64 other-series\nrefused 6.1.0-56-amd64\n",
		  "6.1.0-55-amd64 is nearer (1 differences)", 1 },
		{ KFP_HEAD "ref 6.1.0-56-amd64 differs 2 a b\nref 6.1.0-55-amd64 other-series\n"
		  "ref 6.12.117+deb12-amd64 other-series\nrefused none\n",
		  "6.1.0-56-amd64 is nearer (2 differences)", 1 },
	};
	struct kfp_check k;
	char err[256];
	size_t i;
	const char *d;
	int ret;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ret = kparse(bad[i].text, 3, bad[i].status, &k, err, sizeof(err));
		ok(ret == -1 && strstr(err, bad[i].why) && !strchr(err, '\n') &&
		   !k.refs, "kfp parse: refuses case %zu: '%s'", i, err);
	}
	/* a NUL byte: the length says where the output ends, not the NUL */
	{
		char nul[] = KFP_HEAD "x\0y\n";

		ok(kfp_check_parse(nul, sizeof(nul) - 1, "6.1.0-58-amd64", 3, 1,
				   &k, err, sizeof(err)) == -1 &&
		   strstr(err, "a NUL byte at offset"), "kfp parse: a NUL byte: '%s'", err);
	}
	ok(!kparse(KFP_HEAD KFP_REFS "equivalent 6.1.0-57-amd64\n", 3, 0, &k, err,
		   sizeof(err)) && k.equivalent && k.nrefs == 3 &&
	   !strcmp(k.image, "6.1.0-58-amd64") &&
	   !strcmp(k.version, "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-4 (2026-12-01)") &&
	   !strcmp(k.build_id, "0123abcd") && k.verdict == &k.refs[1] &&
	   k.verdict->nfuncs == 46 && k.verdict->nstructs == 20 &&
	   k.verdict->noptions == 31 && k.refs[2].kind == KFP_REF_OTHER_SERIES,
	   "kfp parse: equivalent, every record read");
	kfp_check_free(&k);
	ok(!kparse("image 6.1.0-58-amd64\nversion v\nbuild-id none\n"
		   "ref 6.1.0-56-amd64 differs 2 func:copy_vma struct:mm_struct\n"
		   "ref 6.1.0-57-amd64 differs 2 a b\nrefused 6.1.0-56-amd64\n",
		   2, 1, &k, err, sizeof(err)) && !k.equivalent && !k.build_id &&
	   k.verdict == &k.refs[0] && k.verdict->ndiffs == 2 &&
	   !strcmp(k.verdict->diffs, "func:copy_vma") &&
	   !strcmp(k.verdict->diffs + strlen(k.verdict->diffs) + 1, "struct:mm_struct"),
	   "kfp parse: refused, the nearest (a tie: the one named) and its items; err '%s'", err);
	d = k.verdict ? k.verdict->diffs : NULL;
	kfp_check_free(&k);
	ok(d && !kparse("image 6.1.0-58-amd64\nversion v\nbuild-id none\n"
			"ref 6.12.117+deb12-amd64 other-series\nrefused none\n",
			1, 1, &k, err, sizeof(err)) && !k.verdict && k.nrefs == 1,
	   "kfp parse: refused none, every fingerprint of another series");
	kfp_check_free(&k);
}

static char *verdict_out(const struct kernel_verdict *v, int json)
{
	struct mem m;

	(json ? kernel_verdict_json : kernel_verdict_text)(mem_open(&m), v);
	return mem_text(&m);
}

/* ok() that shows what was printed when it is not what was wanted */
static void out_ok(const char *out, int cond, const char *what)
{
	ok(cond, "%s", what);
	if (!cond)
		printf("# got: %s\n", out);
}

static void test_verdict(void)
{
	static const char none[] =
		"6.1.0-58-amd64: refused: no validated build of its series to compare with\n";
	struct kernel_verdict v = { .release = "6.1.0-58-amd64" };
	struct kfp_check k;
	char err[256], *out;
	const char *tier, *ref;

	v.tier = "full";
	v.release = "6.1.0-57-amd64";
	out = verdict_out(&v, 0);
	out_ok(out, !strcmp(out, "6.1.0-57-amd64: validated (full tier)\n"), "verdict: validated");
	free(out);
	out = verdict_out(&v, 1);
	out_ok(out, !strcmp(out, "{\"kernel\": \"6.1.0-57-amd64\", \"validated\": true, \"tier\": \"full\", \"equivalent_to\": null, \"nearest\": \"6.1.0-57-amd64\", \"build_id\": null, \"differs\": [], \"error\": null}\n"),
	       "verdict: validated, JSON");
	free(out);

	v.release = "6.1.0-58-amd64";
	kparse(KFP_HEAD KFP_REFS "equivalent 6.1.0-57-amd64\n", 3, 0, &k, err, sizeof(err));
	v.tier = "equivalent";
	v.ref = k.verdict;
	v.build_id = k.build_id;
	out = verdict_out(&v, 0);
	out_ok(out, !strcmp(out, "6.1.0-58-amd64: equivalent to 6.1.0-57-amd64: 46 functions, 20 structs, 31 config options identical\n"),
	       "verdict: equivalent");
	free(out);
	out = verdict_out(&v, 1);
	out_ok(out, !strcmp(out, "{\"kernel\": \"6.1.0-58-amd64\", \"validated\": false, \"tier\": \"equivalent\", \"equivalent_to\": \"6.1.0-57-amd64\", \"nearest\": \"6.1.0-57-amd64\", \"build_id\": \"0123abcd\", \"differs\": [], \"error\": null}\n"),
	       "verdict: equivalent, JSON");
	json_ok(out, ".tier .equivalent_to .differs", "\"equivalent\"\n\"6.1.0-57-amd64\"\n[]\n",
		"verdict: equivalent, JSON parsed");
	free(out);
	kfp_check_free(&k);

	kparse(KFP_HEAD "ref 6.1.0-56-amd64 differs 2 func:copy_vma struct:mm_struct\n"
	       "ref 6.1.0-57-amd64 differs 3 a b c\nref 6.12.117+deb12-amd64 other-series\n"
	       "refused 6.1.0-56-amd64\n", 3, 1, &k, err, sizeof(err));
	v.tier = "refused";
	v.ref = k.verdict;
	out = verdict_out(&v, 0);
	out_ok(out, !strcmp(out, "6.1.0-58-amd64: refused: differs from the nearest validated build 6.1.0-56-amd64 in: func:copy_vma struct:mm_struct\n"
		   "to support it, port it in the vmamerge source tree: make port KVER=6.1.0-58-amd64 (docs/testing.md, \"Porting to a new build\")\n"),
	       "verdict: refused, the items and what to do");
	free(out);
	out = verdict_out(&v, 1);
	out_ok(out, strstr(out, "\"tier\": \"refused\", \"equivalent_to\": null, \"nearest\": \"6.1.0-56-amd64\"") &&
	       strstr(out, "\"differs\": [\"func:copy_vma\", \"struct:mm_struct\"], \"error\": null}"),
	       "verdict: refused, JSON");
	free(out);
	kfp_check_free(&k);

	v.ref = NULL;
	v.build_id = NULL;
	out = verdict_out(&v, 0);
	out_ok(out, !strncmp(out, none, strlen(none)),
	       "verdict: refused, no build of the series");
	free(out);
	v.tier = NULL;
	v.error = "check-kernel: kfp: bad \"image\"";
	out = verdict_out(&v, 0);
	out_ok(out, !*out, "verdict: an error prints nothing as text");
	free(out);
	out = verdict_out(&v, 1);
	out_ok(out, !strcmp(out, "{\"kernel\": \"6.1.0-58-amd64\", \"validated\": false, \"tier\": null, \"equivalent_to\": null, \"nearest\": null, \"build_id\": null, \"differs\": [], \"error\": \"check-kernel: kfp: bad \\\"image\\\"\"}\n"),
	       "verdict: an error, JSON");
	free(out);

	ok(!tier_parse("smoke", &tier, &ref) && !strcmp(tier, "smoke") && !ref &&
	   !tier_parse("equivalent 6.1.0-57-amd64", &tier, &ref) &&
	   !strcmp(tier, "equivalent") && !strcmp(ref, "6.1.0-57-amd64") &&
	   tier_parse("equivalent", &tier, &ref) && tier_parse("equivalent ", &tier, &ref) &&
	   tier_parse("equivalent a b", &tier, &ref) && tier_parse("full ", &tier, &ref) &&
	   tier_parse("", &tier, &ref) && tier_parse("refused", &tier, &ref),
	   "tier_parse: full/smoke/debug, 'equivalent REF', nothing else");
	ok(tier_validated("debug") && !tier_validated("equivalent") &&
	   !strcmp(tier_text("debug"), "debug twin of a full build"),
	   "tier_validated, tier_text");
}

int main(int argc, char **argv)
{
	json_checker = argc > 1 ? argv[1] : NULL;
	test_header();
	test_anon_kinds();
	test_vmflags();
	test_proc_maps();
	test_pgoff_visible();
	test_smaps();
	test_parse_errors();
	test_module_merge();
	test_module_single();
	test_runs();
	test_modvmas_fetch();
	test_modvmas_load();
	test_cli();
	test_numbers();
	test_features();
	test_mode();
	test_json_features();
	test_json();
	test_verify();
	test_help();
	test_compact();
	test_nearest_build();
	test_kfp_parse();
	test_verdict();
	printf("1..%d\n", passed + failed);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
