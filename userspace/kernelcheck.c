// SPDX-License-Identifier: GPL-2.0
/*
 * kernelcheck.c - kfp check's output, check-kernel's verdict and the
 * module's tier line (pure).
 *
 * kfp check prints, one record a line, fields separated by one blank:
 *   image RELEASE
 *   version UTS-VERSION (to the end of the line)
 *   build-id HEX | build-id none
 *   ref REL identical NFUNCS NSTRUCTS NOPTIONS
 *   ref REL differs N ITEM...          (exactly N items)
 *   ref REL other-series
 *   equivalent REL | refused NEAREST   (the last line; NEAREST may be "none")
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kernelcheck.h"

/* More than any fingerprint has: a larger count is garbage, not data. */
#define KFP_MAX_COUNT	1000000ULL

/* The records come in this order; W_DONE: after the verdict. */
enum want { W_IMAGE, W_VERSION, W_BUILD_ID, W_REFS, W_DONE };

static const char *const want_text[] = {
	[W_IMAGE]	= "'image RELEASE'",
	[W_VERSION]	= "'version UTS-VERSION'",
	[W_BUILD_ID]	= "'build-id HEX' or 'build-id none'",
	[W_REFS]	= "'ref ...', 'equivalent REF' or 'refused NEAREST'",
};

struct parser {
	struct kfp_check *k;
	const char *release;
	size_t nfps;
	int exit_status;
	enum want want;
	unsigned int lineno;
	char *err;
	size_t errlen;
	char line[64];		/* the start of the line, for messages */
};

static int fail(struct parser *p, const char *fmt, ...)
{
	size_t n = 0;
	va_list ap;

	if (p->lineno)
		n = snprintf(p->err, p->errlen, "line %u ('%s'): ", p->lineno,
			     p->line);
	if (n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The line as read, shortened and without control characters. */
static void snapshot(struct parser *p, const char *line)
{
	size_t i, max = sizeof(p->line) - 4;

	for (i = 0; line[i] && i < max; i++)
		p->line[i] = line[i] < 0x20 || line[i] == 0x7f ? '?' : line[i];
	strcpy(p->line + i, line[i] ? "..." : "");
}

/*
 * The next field of *s, NUL-terminated in place; NULL at the end of the
 * line.  Fields are separated by exactly one blank, so two blanks or one
 * at either end yield an empty field, which no record has.
 */
static char *field(char **s)
{
	char *f = *s, *sp;

	if (!f)
		return NULL;
	sp = strchr(f, ' ');
	*s = sp ? sp + 1 : NULL;
	if (sp)
		*sp = '\0';
	return f;
}

/* A field: printable ASCII, no blank. */
static bool token_ok(const char *t)
{
	if (!*t)
		return false;
	for (; *t; t++)
		if (*t <= 0x20 || *t >= 0x7f)
			return false;
	return true;
}

/* Exactly n fields in rest, each a token, into f[].  0 or -1. */
static int fields(char *rest, char **f, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		f[i] = field(&rest);
		if (!f[i] || !token_ok(f[i]))
			return -1;
	}
	return rest ? -1 : 0;
}

static int count(const char *s, unsigned long long min,
		 unsigned long long *out)
{
	return parse_ull_strict(s, KFP_MAX_COUNT, out) || *out < min ? -1 : 0;
}

static struct kfp_ref *find_ref(struct kfp_check *k, const char *release)
{
	size_t i;

	for (i = 0; i < k->nrefs; i++)
		if (!strcmp(k->refs[i].release, release))
			return &k->refs[i];
	return NULL;
}

static int rec_image(struct parser *p, char *rest)
{
	char *f[1];

	if (fields(rest, f, 1) || !release_valid(f[0]))
		return fail(p, "expected %s", want_text[W_IMAGE]);
	if (strcmp(f[0], p->release))
		return fail(p, "kfp checked kernel %s, not %s", f[0], p->release);
	p->k->image = f[0];
	return 0;
}

static int rec_version(struct parser *p, char *rest)
{
	const char *c;

	if (!rest || !*rest)
		return fail(p, "an empty UTS version");
	for (c = rest; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return fail(p, "a control character in the UTS version");
	p->k->version = rest;
	return 0;
}

static int rec_build_id(struct parser *p, char *rest)
{
	char *f[1];

	if (fields(rest, f, 1))
		return fail(p, "expected %s", want_text[W_BUILD_ID]);
	if (!strcmp(f[0], "none"))
		return 0;
	if (strlen(f[0]) > 128 || strspn(f[0], "0123456789abcdef") != strlen(f[0]))
		return fail(p, "the build id is not hex");
	p->k->build_id = f[0];
	return 0;
}

/* "differs N ITEM...": exactly N items, each a token. */
static int ref_differs(struct parser *p, struct kfp_ref *r, char *rest)
{
	unsigned long long n;
	size_t items = 0;
	char *f, *t;

	f = field(&rest);
	if (!f || count(f, 1, &n))
		return fail(p, "expected 'differs N ITEM...' with N from 1 to %llu",
			    KFP_MAX_COUNT);
	r->diffs = rest;
	while ((t = field(&rest))) {
		if (!token_ok(t))
			return fail(p, "an empty or unprintable item");
		items++;
	}
	if (items != n)
		return fail(p, "%llu items announced, %zu given", n, items);
	r->kind = KFP_REF_DIFFERS;
	r->ndiffs = items;
	return 0;
}

static int ref_identical(struct parser *p, struct kfp_ref *r, char *rest)
{
	char *f[3];

	if (fields(rest, f, 3) || count(f[0], 0, &r->nfuncs) ||
	    count(f[1], 0, &r->nstructs) || count(f[2], 0, &r->noptions))
		return fail(p, "expected 'identical NFUNCS NSTRUCTS NOPTIONS'");
	r->kind = KFP_REF_IDENTICAL;
	return 0;
}

static int ref_other(struct parser *p, struct kfp_ref *r, char *rest)
{
	if (rest)
		return fail(p, "extra fields after other-series");
	r->kind = KFP_REF_OTHER_SERIES;
	return 0;
}

static int rec_ref(struct parser *p, char *rest)
{
	struct kfp_check *k = p->k;
	char *rel = field(&rest), *kind = field(&rest);
	struct kfp_ref *r;
	int ret;

	if (!rel || !release_valid(rel) || !kind)
		return fail(p, "expected 'ref RELEASE identical|differs|other-series ...'");
	if (find_ref(k, rel))
		return fail(p, "a second record of %s", rel);
	/* refs has room for nfps */
	if (k->nrefs == p->nfps)
		return fail(p, "more ref records than the %zu fingerprints given",
			    p->nfps);
	r = &k->refs[k->nrefs];
	memset(r, 0, sizeof(*r));
	r->release = rel;
	if (!strcmp(kind, "identical"))
		ret = ref_identical(p, r, rest);
	else if (!strcmp(kind, "differs"))
		ret = ref_differs(p, r, rest);
	else if (!strcmp(kind, "other-series"))
		ret = ref_other(p, r, rest);
	else
		ret = fail(p, "unknown comparison '%s'", kind);
	if (!ret)
		k->nrefs++;
	return ret;
}

/*
 * "refused NEAREST": no ref identical (kfp admits on the first), and
 * NEAREST is "none" when no ref of the series differs, else one of those
 * with the fewest differences.
 */
static int check_refused(struct parser *p, const char *nearest)
{
	struct kfp_check *k = p->k;
	struct kfp_ref *r = NULL;
	size_t i;

	if (strcmp(nearest, "none")) {
		r = find_ref(k, nearest);
		if (!r || r->kind != KFP_REF_DIFFERS)
			return fail(p, "the nearest build %s has no 'differs' record",
				    nearest);
	}
	for (i = 0; i < k->nrefs; i++) {
		if (k->refs[i].kind == KFP_REF_IDENTICAL)
			return fail(p, "refused although %s is identical",
				    k->refs[i].release);
		if (k->refs[i].kind == KFP_REF_DIFFERS &&
		    (!r || k->refs[i].ndiffs < r->ndiffs))
			return fail(p, "%s is nearer (%zu differences) than the nearest named",
				    k->refs[i].release, k->refs[i].ndiffs);
	}
	k->verdict = r;
	return 0;
}

static int rec_verdict(struct parser *p, const char *kw, char *rest)
{
	bool eq = !strcmp(kw, "equivalent");
	struct kfp_check *k = p->k;
	char *f[1];

	if (fields(rest, f, 1))
		return fail(p, "expected '%s RELEASE'", kw);
	if (k->nrefs != p->nfps)
		return fail(p, "kfp reported on %zu of the %zu fingerprints given",
			    k->nrefs, p->nfps);
	if (p->exit_status != (eq ? 0 : 1))
		return fail(p, "kfp exited with status %d after '%s'",
			    p->exit_status, kw);
	p->want = W_DONE;
	if (!eq)
		return check_refused(p, f[0]);
	k->equivalent = true;
	k->verdict = find_ref(k, f[0]);
	if (!k->verdict || k->verdict->kind != KFP_REF_IDENTICAL)
		return fail(p, "equivalent to %s, which has no 'identical' record",
			    f[0]);
	return 0;
}

/* The three records that open the output, in order (enum want). */
static const struct {
	const char *keyword;
	int (*parse)(struct parser *p, char *rest);
} header[] = {
	[W_IMAGE]	= { "image", rec_image },
	[W_VERSION]	= { "version", rec_version },
	[W_BUILD_ID]	= { "build-id", rec_build_id },
};

static int parse_line(struct parser *p, char *line)
{
	char *rest = line, *kw;

	snapshot(p, line);
	kw = field(&rest);
	if (p->want < W_REFS) {
		if (strcmp(kw, header[p->want].keyword))
			return fail(p, "expected %s", want_text[p->want]);
		return header[p->want++].parse(p, rest);
	}
	if (p->want == W_DONE)
		return fail(p, "a line after the verdict");
	if (!strcmp(kw, "ref"))
		return rec_ref(p, rest);
	if (!strcmp(kw, "equivalent") || !strcmp(kw, "refused"))
		return rec_verdict(p, kw, rest);
	return fail(p, "expected %s", want_text[W_REFS]);
}

int kfp_check_parse(char *out, size_t len, const char *release, size_t nfps,
		    int exit_status, struct kfp_check *k, char *err,
		    size_t errlen)
{
	struct parser p = {
		.k = k, .release = release, .nfps = nfps,
		.exit_status = exit_status, .err = err, .errlen = errlen,
	};
	char *line = out, *nl;
	unsigned int lines;
	const char *nul = memchr(out, '\0', len);

	memset(k, 0, sizeof(*k));
	if (!len)
		return fail(&p, "kfp printed nothing (exit status %d)", exit_status);
	if (nul)
		return fail(&p, "a NUL byte at offset %zu", (size_t)(nul - out));
	/* every line ends in '\n': an unterminated one was cut short */
	if (out[len - 1] != '\n')
		return fail(&p, "the output ends in the middle of a line");
	k->refs = calloc(nfps ? nfps : 1, sizeof(*k->refs));
	if (!k->refs)
		return fail(&p, "out of memory");
	while (line < out + len) {
		nl = memchr(line, '\n', out + len - line);
		*nl = '\0';
		p.lineno++;
		if (parse_line(&p, line))
			goto fail;
		line = nl + 1;
	}
	if (p.want == W_DONE)
		return 0;
	lines = p.lineno;
	p.lineno = 0;	/* about the whole output, not its last line */
	fail(&p, "the output ends after %u line%s without the verdict ('equivalent REF' or 'refused NEAREST')",
	     lines, lines == 1 ? "" : "s");
fail:
	kfp_check_free(k);
	return -1;
}

void kfp_check_free(struct kfp_check *k)
{
	free(k->refs);
	memset(k, 0, sizeof(*k));
}

/* ---- the verdict ---- */

static const char *plural(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

void kernel_verdict_text(FILE *f, const struct kernel_verdict *v)
{
	const struct kfp_ref *r = v->ref;
	const char *d;
	size_t i;

	if (!v->tier)
		return;
	if (tier_validated(v->tier)) {
		fprintf(f, "%s: validated (%s)\n", v->release, tier_text(v->tier));
		return;
	}
	if (!strcmp(v->tier, "equivalent") && r) {
		fprintf(f, "%s: equivalent to %s: %llu function%s, %llu struct%s, %llu config option%s identical\n",
			v->release, r->release, r->nfuncs, plural(r->nfuncs),
			r->nstructs, plural(r->nstructs), r->noptions,
			plural(r->noptions));
		return;
	}
	if (r) {
		fprintf(f, "%s: refused: differs from the nearest validated build %s in:",
			v->release, r->release);
		for (i = 0, d = r->diffs; i < r->ndiffs; i++, d += strlen(d) + 1)
			fprintf(f, " %s", d);
		fputc('\n', f);
	} else {
		fprintf(f, "%s: refused: no validated build of its series to compare with\n",
			v->release);
	}
	fprintf(f, "to support it, port it in the vmamerge source tree: make port KVER=%s (docs/testing.md, \"Porting to a new build\")\n",
		v->release);
}

static void json_opt(FILE *f, const char *s)
{
	if (s)
		json_string(f, s);
	else
		fputs("null", f);
}

void kernel_verdict_json(FILE *f, const struct kernel_verdict *v)
{
	const struct kfp_ref *r = v->ref;
	bool validated = v->tier && tier_validated(v->tier);
	bool eq = v->tier && !strcmp(v->tier, "equivalent") && r;
	const char *d;
	size_t i;

	fputs("{\"kernel\": ", f);
	json_string(f, v->release);
	fprintf(f, ", \"validated\": %s, \"tier\": ", validated ? "true" : "false");
	json_opt(f, v->tier);
	fputs(", \"equivalent_to\": ", f);
	json_opt(f, eq ? r->release : NULL);
	/* the build itself, the one it is identical to, or the nearest */
	fputs(", \"nearest\": ", f);
	json_opt(f, validated ? v->release : v->tier && r ? r->release : NULL);
	fputs(", \"build_id\": ", f);
	json_opt(f, v->build_id);
	fputs(", \"differs\": [", f);
	if (v->tier && r && r->kind == KFP_REF_DIFFERS)
		for (i = 0, d = r->diffs; i < r->ndiffs; i++, d += strlen(d) + 1) {
			fputs(i ? ", " : "", f);
			json_string(f, d);
		}
	fputs("], \"error\": ", f);
	json_opt(f, v->error);
	fputs("}\n", f);
}

/* ---- tiers ---- */

static const char *const validated_tiers[] = { "full", "smoke", "debug" };

#define NR_VALIDATED_TIERS \
	(sizeof(validated_tiers) / sizeof(validated_tiers[0]))

bool tier_validated(const char *tier)
{
	size_t i;

	for (i = 0; i < NR_VALIDATED_TIERS; i++)
		if (!strcmp(tier, validated_tiers[i]))
			return true;
	return false;
}

const char *tier_text(const char *tier)
{
	return !strcmp(tier, "debug") ? "debug twin of a full build" :
	       !strcmp(tier, "full") ? "full tier" :
	       !strcmp(tier, "smoke") ? "smoke tier" :
	       !strcmp(tier, "equivalent") ? "equivalent to a validated build" :
	       "unknown tier";
}

int tier_parse(const char *s, const char **tier, const char **ref)
{
	size_t i;

	for (i = 0; i < NR_VALIDATED_TIERS; i++) {
		if (!strcmp(s, validated_tiers[i])) {
			*tier = validated_tiers[i];
			*ref = NULL;
			return 0;
		}
	}
	if (!strncmp(s, "equivalent ", 11) && release_valid(s + 11)) {
		*tier = "equivalent";
		*ref = s + 11;
		return 0;
	}
	return -1;
}
