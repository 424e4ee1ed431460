// SPDX-License-Identifier: GPL-2.0
/*
 * selftest.c - "vmamerge selftest": did the install work?
 *
 * A child process opts itself in (ADVISE ENABLE on /dev/vmamerge, as
 * "vmamerge run" does) and builds two layouts, each inside a PROT_NONE
 * reservation that keeps other mappings from touching it:
 *
 *   renumber    one mapping of 2 x ST_PAGES pages, every page faulted with
 *               its own pattern; its first half moved (mremap FIXED) right
 *               behind its second: the halves' page offsets are no longer
 *               linear, so the stock kernel leaves two VMAs.
 *   transplant  mapping A faulted, parked elsewhere; mapping B faulted
 *               where A's neighbour is (its own anon_vma: A is away); A
 *               moved back: offsets linear, anon_vmas different - two
 *               VMAs in the stock kernel.
 *
 * Each must end as one VMA (/proc/self/maps), read back byte for byte, and
 * the process's own counters (QUERY, as "vmamerge stats -p" reads them)
 * are taken before and after it.  The child sends its report through a
 * pipe; the parent prints it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "selftest.h"

#define ST_TIMEOUT_S	10	/* the child's whole run (a few ms normally) */

static const char *const case_names[ST_NR_CASES] = {
	[ST_RENUMBER]	= "renumber",
	[ST_TRANSPLANT]	= "transplant",
};

/*
 * The features each case needs.  The transplant case merges inside a
 * move, and the module decides there only with renumber on (with
 * transplant alone moves stay stock; docs/benchmarks.md).
 */
static const unsigned int case_features[ST_NR_CASES] = {
	[ST_RENUMBER]	= VMAMERGE_FEATURE_RENUMBER,
	[ST_TRANSPLANT]	= VMAMERGE_FEATURE_RENUMBER | VMAMERGE_FEATURE_TRANSPLANT,
};

const char *st_case_name(int id)
{
	return id >= 0 && id < ST_NR_CASES ? case_names[id] : "?";
}

/*
 * Distinct for every page at every offset: 37 is odd, so id * 37 differs
 * modulo 256 for the 2 * ST_PAGES ids; the offset terms vary each page's
 * bytes.
 */
unsigned char st_pattern(unsigned int id, unsigned long off)
{
	return (unsigned char)(id * 37 + 11 + off * 7 + (off >> 8) * 3);
}

/* ---- /proc/self/maps ---- */

int st_maps_spans(FILE *f, unsigned long start, unsigned long end,
		  struct st_span *spans, int max)
{
	unsigned long s, e;
	char line[512];
	int n = 0;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) != 2 || s >= e)
			return -1;
		if (e <= start || s >= end)
			continue;
		if (n < max) {
			spans[n].start = s;
			spans[n].end = e;
		}
		n++;
	}
	return n;
}

bool st_one_vma(const struct st_span *spans, int n, unsigned long start,
		unsigned long end, char *saw, size_t len)
{
	size_t used;
	int i;

	if (n == 1 && spans[0].start <= start && spans[0].end >= end)
		return true;
	if (n <= 0) {
		snprintf(saw, len, "no VMA over %lx-%lx", start, end);
		return false;
	}
	snprintf(saw, len, "%d VMA%s over %lx-%lx:", n, n == 1 ? "" : "s",
		 start, end);
	for (i = 0; i < n && i < ST_MAX_SPANS; i++) {
		used = strlen(saw);
		snprintf(saw + used, len - used, " %lx-%lx", spans[i].start,
			 spans[i].end);
	}
	used = strlen(saw);
	snprintf(saw + used, len - used, "%s", n > ST_MAX_SPANS ? " ..." : "");
	return false;
}

/* ---- the child: the cases ---- */

struct st_ctx {
	const struct selftest_ops *ops;
	int fd;
	size_t half;		/* ST_PAGES pages, in bytes */
	size_t page;
	struct st_case *c;
};

/* Record the failed step and what it saw; returns -1. */
static int st_fail(struct st_ctx *x, const char *step, const char *fmt, ...)
{
	va_list ap;

	x->c->status = ST_FAILED;
	snprintf(x->c->step, sizeof(x->c->step), "%s", step);
	va_start(ap, fmt);
	vsnprintf(x->c->saw, sizeof(x->c->saw), fmt, ap);
	va_end(ap);
	return -1;
}

/* size bytes of PROT_NONE: the case's room, kept apart from the rest */
static char *st_reserve(struct st_ctx *x, size_t size)
{
	void *p = mmap(NULL, size, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p != MAP_FAILED)
		return p;
	st_fail(x, "reserve", "mmap of %zu bytes PROT_NONE: %s", size,
		strerror(errno));
	return NULL;
}

/*
 * A private anonymous read-write mapping at addr (inside the reservation).
 * No transparent huge pages: a large folio would straddle the halves the
 * cases move apart, which the module refuses (refused_thp).
 */
static int st_map(struct st_ctx *x, char *addr, size_t size)
{
	void *p = mmap(addr, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	if (p == MAP_FAILED)
		return st_fail(x, "map", "mmap of %zu bytes at %p: %s", size,
			       (void *)addr, strerror(errno));
	madvise(addr, size, MADV_NOHUGEPAGE);	/* best effort */
	return 0;
}

/* Write every byte of the pages at addr, the first as page id first_id. */
static void st_fault(struct st_ctx *x, char *addr, unsigned int first_id,
		     unsigned int nr)
{
	unsigned long off;
	unsigned int i;

	for (i = 0; i < nr; i++)
		for (off = 0; off < x->page; off++)
			addr[i * x->page + off] = st_pattern(first_id + i, off);
}

static int st_move(struct st_ctx *x, char *from, size_t size, char *to)
{
	void *p = mremap(from, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, to);

	if (p == MAP_FAILED)
		return st_fail(x, "mremap", "mremap of %zu bytes %p -> %p: %s",
			       size, (void *)from, (void *)to, strerror(errno));
	return 0;
}

/* [addr, addr + size) is one VMA in /proc/self/maps. */
static int st_check_vma(struct st_ctx *x, char *addr, size_t size)
{
	unsigned long s = (unsigned long)addr, e = s + size;
	struct st_span spans[ST_MAX_SPANS];
	FILE *f = fopen("/proc/self/maps", "re");
	char saw[ST_TEXT - 96];	/* the rest: room for the hint below */
	int n;

	if (!f)
		return st_fail(x, "one VMA", "cannot read /proc/self/maps: %s",
			       strerror(errno));
	n = st_maps_spans(f, s, e, spans, ST_MAX_SPANS);
	fclose(f);
	x->c->nr_vmas = n;
	if (n < 0)
		return st_fail(x, "one VMA", "/proc/self/maps has a line that is not a VMA");
	if (!st_one_vma(spans, n, s, e, saw, sizeof(saw)))
		return st_fail(x, "one VMA",
			       "%s (the stock kernel's layout: is the livepatch enabled? see 'vmamerge status')",
			       saw);
	return 0;
}

/* Every byte of page i at addr is that of page ids[i]. */
static int st_read_back(struct st_ctx *x, const char *addr,
			const unsigned int *ids, unsigned int nr)
{
	unsigned long off;
	unsigned char want;
	unsigned int i;

	for (i = 0; i < nr; i++)
		for (off = 0; off < x->page; off++) {
			want = st_pattern(ids[i], off);
			if ((unsigned char)addr[i * x->page + off] == want)
				continue;
			return st_fail(x, "read back",
				       "byte %lu of page %u (%p) is 0x%02x, want 0x%02x (page %u's)",
				       off, i, (void *)(addr + i * x->page),
				       (unsigned char)addr[i * x->page + off],
				       want, ids[i]);
		}
	return 0;
}

/* The first half behind the second: offsets p + N, then p. */
static int st_renumber(struct st_ctx *x, char *r)
{
	size_t n = x->half;
	unsigned int ids[2 * ST_PAGES], i;

	if (st_map(x, r + n, 2 * n))
		return -1;
	st_fault(x, r + n, 0, 2 * ST_PAGES);
	if (st_move(x, r + n, n, r + 3 * n))
		return -1;
	for (i = 0; i < ST_PAGES; i++) {
		ids[i] = ST_PAGES + i;	/* the second half stayed */
		ids[ST_PAGES + i] = i;	/* the first came behind it */
	}
	if (st_check_vma(x, r + 2 * n, 2 * n))
		return -1;
	return st_read_back(x, r + 2 * n, ids, 2 * ST_PAGES);
}

/*
 * A away, B faulted in A's neighbourhood, A back.  B's fault finds no
 * neighbour whose anon_vma it could share (A is parked, the reservation
 * is PROT_NONE), so the two have different anon_vmas; their offsets are
 * where they were mapped, linear again once A is back.
 */
static int st_transplant(struct st_ctx *x, char *r)
{
	size_t n = x->half;
	unsigned int ids[2 * ST_PAGES], i;

	if (st_map(x, r + n, n))
		return -1;
	st_fault(x, r + n, 0, ST_PAGES);
	if (st_move(x, r + n, n, r + 4 * n) || st_map(x, r + 2 * n, n))
		return -1;
	st_fault(x, r + 2 * n, ST_PAGES, ST_PAGES);
	if (st_move(x, r + 4 * n, n, r + n))
		return -1;
	for (i = 0; i < 2 * ST_PAGES; i++)
		ids[i] = i;
	if (st_check_vma(x, r + n, 2 * n))
		return -1;
	return st_read_back(x, r + n, ids, 2 * ST_PAGES);
}

static int st_counters(struct st_ctx *x, struct vmamerge_query *q)
{
	int ret = x->ops->query(x->fd, q);

	if (ret)
		return st_fail(x, "counters", "query of this process: %s",
			       strerror(-ret));
	return 0;
}

/* The counters the case moved into c->delta. */
static void st_delta(struct st_case *c, const struct vmamerge_query *a,
		     const struct vmamerge_query *b)
{
	unsigned int i, nr = a->nr_counters < b->nr_counters ?
			     a->nr_counters : b->nr_counters;

	if (nr > VMAMERGE_MAX_COUNTERS)
		nr = VMAMERGE_MAX_COUNTERS;
	c->nr_counters = nr;
	for (i = 0; i < nr; i++)
		c->delta[i] = b->counters[i] - a->counters[i];
}

/* Case id in a reservation of 6 halves: guard, 4 halves of room, guard. */
static void st_run_case(struct st_ctx *x, int id)
{
	struct vmamerge_query before, after;
	size_t size = 6 * x->half;
	char *r;
	int ret;

	x->c->nr_vmas = -1;
	if (st_counters(x, &before))
		return;
	r = st_reserve(x, size);
	if (!r)
		return;
	ret = id == ST_RENUMBER ? st_renumber(x, r) : st_transplant(x, r);
	munmap(r, size);
	if (ret || st_counters(x, &after))
		return;
	st_delta(x->c, &before, &after);
	x->c->status = ST_OK;
}

/* Opted in, and merging under the mode: 0, or -1 with r->error set. */
static int st_opt_in(struct st_ctx *x, struct st_report *r)
{
	struct vmamerge_query q;
	int ret = x->ops->opt_in(x->fd);

	if (!ret)
		ret = x->ops->query(x->fd, &q);
	if (ret) {
		snprintf(r->error, sizeof(r->error), "opt in: %s",
			 strerror(-ret));
		return -1;
	}
	if (!(q.state & VMAMERGE_STATE_ACTIVE)) {
		snprintf(r->error, sizeof(r->error),
			 "opt in: opted in but not active (state 0x%x): the mode is never?",
			 q.state);
		return -1;
	}
	return 0;
}

/* A case whose features are not all on is skipped, saying which is off. */
static bool st_skip(struct st_case *c, int id, unsigned int features)
{
	unsigned int off = case_features[id] & ~features;

	if (!off)
		return false;
	c->status = ST_SKIPPED;
	snprintf(c->saw, sizeof(c->saw), "feature %s off",
		 off & VMAMERGE_FEATURE_RENUMBER ? "renumber" : "transplant");
	return true;
}

static void st_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= n;
	}
}

static void __attribute__((noreturn))
st_child(const struct selftest_ops *ops, int fd, unsigned int features,
	 int wfd)
{
	struct st_report r;
	struct st_ctx x = { .ops = ops, .fd = fd };
	int id;

	alarm(ST_TIMEOUT_S);
	memset(&r, 0, sizeof(r));
	x.page = sysconf(_SC_PAGESIZE);
	x.half = ST_PAGES * x.page;
	if (!st_opt_in(&x, &r))
		for (id = 0; id < ST_NR_CASES; id++) {
			x.c = &r.cases[id];
			if (!st_skip(x.c, id, features))
				st_run_case(&x, id);
		}
	st_write_all(wfd, &r, sizeof(r));
	_exit(0);
}

/* ---- the parent ---- */

static size_t st_read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* A child that sent no whole report: how it ended. */
static void st_child_died(const struct selftest_ops *ops, int status)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		ops->msg("selftest: the test process timed out after %d s",
			 ST_TIMEOUT_S);
	else if (WIFSIGNALED(status))
		ops->msg("selftest: the test process was killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		ops->msg("selftest: the test process exited with status %d without a report",
			 WEXITSTATUS(status));
}

/* Fork the child, take its report: 0, or -1 after saying why not. */
static int st_fork(const struct selftest_ops *ops, int fd,
		   unsigned int features, struct st_report *r)
{
	int p[2], status;
	size_t got;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC)) {
		ops->msg("selftest: pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);	/* nothing buffered twice */
	pid = fork();
	if (pid < 0) {
		ops->msg("selftest: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		close(p[0]);
		st_child(ops, fd, features, p[1]);
	}
	close(p[1]);
	got = st_read_all(p[0], r, sizeof(*r));
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got == sizeof(*r))
		return 0;
	st_child_died(ops, status);
	return -1;
}

/* The mode and features allow a case: 0, or -1 after saying why not. */
static int st_config(const struct selftest_ops *ops, int fd,
		     unsigned int *features)
{
	struct vmamerge_config cfg;
	int ret = ops->config(fd, &cfg);

	if (ret)
		ops->msg("selftest: get config: %s", strerror(-ret));
	else if (cfg.mode == VMAMERGE_MODE_NEVER)
		ops->msg("selftest: the mode is never, nothing merges: set it with 'sudo vmamerge mode optin'");
	else if (!(cfg.features & VMAMERGE_FEATURE_RENUMBER))
		ops->msg("selftest: the renumber feature is off, which every case needs: enable it with 'sudo vmamerge features +renumber'");
	else
		*features = cfg.features;
	/* (case_features[]: renumber is in each) */
	return ret || cfg.mode == VMAMERGE_MODE_NEVER ||
	       !(cfg.features & VMAMERGE_FEATURE_RENUMBER) ? -1 : 0;
}

int selftest_main(const struct selftest_ops *ops, bool loaded, bool json)
{
	unsigned int features = 0;
	struct st_report r;
	int fd, ret;

	if (!loaded) {
		ops->msg("selftest: module not loaded: load it with 'sudo modprobe vmamerge'");
		return 1;
	}
	fd = ops->open();
	if (fd < 0)
		return 1;
	ret = st_config(ops, fd, &features);
	if (!ret)
		ret = st_fork(ops, fd, features, &r);
	close(fd);
	if (ret)
		return 1;
	return json ? st_print_json(stdout, &r) : st_print_text(stdout, &r);
}

/* ---- the report ---- */

/* ok: no case failed, and one at least ran */
static bool st_ok(const struct st_report *r)
{
	int id, nr_ok = 0;

	if (r->error[0])
		return false;
	for (id = 0; id < ST_NR_CASES; id++) {
		if (r->cases[id].status == ST_OK)
			nr_ok++;
		else if (r->cases[id].status != ST_SKIPPED)
			return false;
	}
	return nr_ok > 0;
}

/*
 * Counter i in the report: the sum over the cases.  time_ns is left
 * out: a time, not a count, never the same twice.
 */
static bool st_sum(const struct st_report *r, unsigned int i,
		   unsigned long long *sum)
{
	int id;

	*sum = 0;
	if (i == VMAMERGE_C_TIME_NS)
		return false;
	for (id = 0; id < ST_NR_CASES; id++)
		if (r->cases[id].status == ST_OK && i < r->cases[id].nr_counters)
			*sum += r->cases[id].delta[i];
	return *sum != 0;
}

static void st_text_counters(FILE *f, const struct st_report *r)
{
	unsigned long long v;
	unsigned int i, shown = 0;
	char buf[32];

	fputs("counters:", f);
	for (i = 0; i < VMAMERGE_MAX_COUNTERS; i++)
		if (st_sum(r, i, &v))
			fprintf(f, "%s %s +%llu", shown++ ? "," : "",
				counter_name(i, buf, sizeof(buf)), v);
	if (!shown)
		fputs(" none moved", f);
}

static void st_text_case(FILE *f, int id, const struct st_case *c)
{
	fprintf(f, "%s merge: ", case_names[id]);
	switch (c->status) {
	case ST_OK:
		fprintf(f, "%d VMA%s", c->nr_vmas, c->nr_vmas == 1 ? "" : "s");
		break;
	case ST_SKIPPED:
		fprintf(f, "skipped, %s", c->saw);
		break;
	case ST_FAILED:
		fprintf(f, "FAILED at '%s'", c->step);
		break;
	default:
		fputs("not run", f);
	}
}

int st_print_text(FILE *f, const struct st_report *r)
{
	bool ok = st_ok(r);
	int id;

	if (r->error[0]) {
		fprintf(f, "selftest: failed: %s\n", r->error);
		return 1;
	}
	fprintf(f, "selftest: %s (", ok ? "ok" : "failed");
	for (id = 0; id < ST_NR_CASES; id++) {
		st_text_case(f, id, &r->cases[id]);
		fputs("; ", f);
	}
	st_text_counters(f, r);
	fputs(")\n", f);
	for (id = 0; id < ST_NR_CASES; id++)
		if (r->cases[id].status == ST_FAILED)
			fprintf(f, "selftest: %s merge failed at '%s': %s\n",
				case_names[id], r->cases[id].step,
				r->cases[id].saw);
	return ok ? 0 : 1;
}

static const char *st_status_name(int status)
{
	switch (status) {
	case ST_OK:		return "ok";
	case ST_FAILED:		return "failed";
	case ST_SKIPPED:	return "skipped";
	default:		return "not run";
	}
}

static void st_json_text(FILE *f, const char *s)
{
	if (s[0])
		json_string(f, s);
	else
		fputs("null", f);
}

/* {"name": delta, ...}: the counters moved (sum when c is NULL) */
static void st_json_counters(FILE *f, const struct st_report *r,
			     const struct st_case *c)
{
	unsigned long long v;
	unsigned int i, shown = 0, nr = c ? c->nr_counters :
					      VMAMERGE_MAX_COUNTERS;
	char buf[32];

	fputc('{', f);
	for (i = 0; i < nr; i++) {
		if (c)
			v = i == VMAMERGE_C_TIME_NS ? 0 : c->delta[i];
		else
			st_sum(r, i, &v);
		if (!v)
			continue;
		fputs(shown++ ? ", " : "", f);
		json_string(f, counter_name(i, buf, sizeof(buf)));
		fprintf(f, ": %llu", v);
	}
	fputc('}', f);
}

static void st_json_case(FILE *f, const struct st_report *r, int id)
{
	const struct st_case *c = &r->cases[id];

	fprintf(f, "{\"name\": \"%s\", \"status\": \"%s\", \"vmas\": ",
		case_names[id], st_status_name(c->status));
	if (c->status == ST_OK || c->status == ST_FAILED)
		fprintf(f, "%d", c->nr_vmas);
	else
		fputs("null", f);
	fputs(", \"step\": ", f);
	st_json_text(f, c->status == ST_FAILED ? c->step : "");
	fputs(", \"saw\": ", f);
	st_json_text(f, c->status == ST_OK ? "" : c->saw);
	fputs(", \"counters\": ", f);
	if (c->status == ST_OK)
		st_json_counters(f, r, c);
	else
		fputs("null", f);
	fputc('}', f);
}

/* The first failure, as one line: "renumber merge: one VMA: ..." */
static void st_json_error(FILE *f, const struct st_report *r)
{
	char buf[ST_TEXT + 64];
	int id;

	if (r->error[0]) {
		json_string(f, r->error);
		return;
	}
	for (id = 0; id < ST_NR_CASES; id++)
		if (r->cases[id].status == ST_FAILED) {
			snprintf(buf, sizeof(buf), "%s merge: %s: %s",
				 case_names[id], r->cases[id].step,
				 r->cases[id].saw);
			json_string(f, buf);
			return;
		}
	fputs("null", f);
}

int st_print_json(FILE *f, const struct st_report *r)
{
	bool ok = st_ok(r);
	int id;

	fprintf(f, "{\"ok\": %s, \"error\": ", ok ? "true" : "false");
	st_json_error(f, r);
	fputs(", \"cases\": [", f);
	for (id = 0; id < ST_NR_CASES && !r->error[0]; id++) {
		fputs(id ? ", " : "", f);
		st_json_case(f, r, id);
	}
	fputs("], \"counters\": ", f);
	st_json_counters(f, r, NULL);
	fputs("}\n", f);
	return ok ? 0 : 1;
}
