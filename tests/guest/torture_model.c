// SPDX-License-Identifier: GPL-2.0
/*
 * t_torture's shadow model and checks (see torture.h).
 */
#include "torture.h"
#include "tap.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

static const uint8_t zero_page[TPG];

/* ---- PRNG ---- */

uint64_t t_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

uint64_t t_next(struct torture *t)
{
	uint64_t x = t->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

unsigned long t_rnd(struct torture *t, unsigned long n)
{
	return n ? (unsigned long)(t_next(t) >> 11) % n : 0;
}

/* ---- setup ---- */

int t_init(struct torture *t, uint64_t seed, unsigned long np)
{
	size_t len = np * TPG;
	void *m;

	t->np = np;
	t->seed = seed;
	t->rng = seed;
	t->rng = t_splitmix(&t->rng) | 1;
	t->who = "";
	t->pg = calloc(np, sizeof(*t->pg));
	t->shadow = calloc(np, TPG);
	if (!t->pg || !t->shadow)
		return -ENOMEM;

	m = mmap((void *)TWIN_HINT, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m != MAP_FAILED && m != (void *)TWIN_HINT) {
		munmap(m, len);
		m = MAP_FAILED;
	}
	if (m == MAP_FAILED) {
		/* any 2 MiB aligned spot will do */
		unsigned long x, al = THP_PAGES * TPG;
		char *big = mmap(NULL, len + al, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (big == MAP_FAILED)
			return -errno;
		x = ((unsigned long)big + al - 1) & ~(al - 1);
		if (x > (unsigned long)big)
			munmap(big, x - (unsigned long)big);
		if ((unsigned long)big + al > x)
			munmap((char *)x + len, (unsigned long)big + al - x);
		m = (void *)x;
		diag("note: window at %p instead of %#lx", m, TWIN_HINT);
	}
	t->base = m;
	t_set_zero(t, 0, np, PROT_NONE, 0);
	return 0;
}

/* ---- model updates ---- */

void t_set_hole(struct torture *t, unsigned long p, unsigned long n)
{
	unsigned long i;

	for (i = p; i < p + n; i++) {
		memset(&t->pg[i], 0, sizeof(t->pg[i]));
		t->pg[i].last = t->step;
	}
	memset(t_shadow(t, p), 0, n * TPG);
}

void t_set_zero(struct torture *t, unsigned long p, unsigned long n,
		int prot, uint8_t flags)
{
	unsigned long i;

	for (i = p; i < p + n; i++) {
		t->pg[i].mapped = 1;
		t->pg[i].prot = prot;
		t->pg[i].flags = flags;
		t->pg[i].last = t->step;
	}
	memset(t_shadow(t, p), 0, n * TPG);
}

/* ---- reporting ---- */

void t_repro_hint(struct torture *t)
{
	char w[40] = "";

	if (t->wsz)
		snprintf(w, sizeof(w), " -w %lu", t->wsz);
	diag("reproduce: t_torture -s %llu -n %lu%s%s (same kernel%s); KSM, "
	     "THP/khugepaged, migration by t_migrate, compaction and swap are "
	     "external noise: if the seed alone does not reproduce it, run it "
	     "under torture.sh",
	     (unsigned long long)t->seed, t->step, t->optin ? " -o" : "", w,
	     t->optin ? ", module loaded" : "");
}

void t_fail(struct torture *t, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ok(0, "torture seed %llu: %sstep %lu (%s): %s",
	   (unsigned long long)t->seed, t->who, t->step, t->desc, msg);
	if (!t->failed)
		t_repro_hint(t);
	t->failed = 1;
}

static void hexbytes(char *out, size_t len, const uint8_t *b, long from, long n)
{
	size_t k = 0;
	long i;

	out[0] = 0;
	for (i = from; i < from + n && i < (long)TPG && k + 4 < len; i++)
		k += snprintf(out + k, len - k, "%02x%s", b[i],
			      i + 1 < from + n ? " " : "");
}

static const char *prot_str(int prot)
{
	static char s[4];

	s[0] = prot & PROT_READ ? 'r' : '-';
	s[1] = prot & PROT_WRITE ? 'w' : '-';
	s[2] = prot & PROT_EXEC ? 'x' : '-';
	s[3] = 0;
	return s;
}

void t_report_mismatch(struct torture *t, const struct mismatch *m,
		       const char *when)
{
	const uint8_t *a = (const uint8_t *)t_page(t, m->page);
	const uint8_t *s = t_shadow(t, m->page);
	const struct tpage *pg = &t->pg[m->page];
	unsigned long q, ndiff = 0, i;
	long from = m->off >= 8 ? m->off - 8 : 0;
	char hw[80], hg[80];

	for (i = 0; i < TPG; i++)
		ndiff += a[i] != s[i];
	t_fail(t, "data mismatch %s at %p (page %lu, window+0x%lx) byte offset %ld: "
	       "want 0x%02x got 0x%02x",
	       when, (void *)a, m->page, m->page * TPG, m->off, m->want, m->got);
	diag("%s%lu of 4096 bytes differ; model: %s flags 0x%x%s, last changed "
	     "at step %lu", t->who, ndiff, prot_str(pg->prot), pg->flags,
	     pg->flags & TP_EITHER ? " (MADV_FREE: old or zero)" : "",
	     (unsigned long)pg->last);
	hexbytes(hw, sizeof(hw), s, from, 16);
	hexbytes(hg, sizeof(hg), a, from, 16);
	diag("%sbytes %ld..: want %s", t->who, from, hw);
	diag("%sbytes %ld..: got  %s", t->who, from, hg);
	if (!memcmp(a, zero_page, TPG))
		diag("%sthe page reads as all zeros", t->who);
	for (q = 0; q < t->np; q++) {
		if (q == m->page || !t->pg[q].mapped)
			continue;
		if (!memcmp(t_shadow(t, q), zero_page, TPG))
			continue;
		if (!memcmp(a, t_shadow(t, q), TPG)) {
			diag("%sthe page holds what the model expects at page %lu "
			     "(%p, last changed at step %lu)", t->who, q,
			     (void *)t_page(t, q), (unsigned long)t->pg[q].last);
			break;
		}
	}
}

/* ---- checks ---- */

/*
 * Page compares.  Under QEMU TCG a plain 64-bit loop is more than twice as
 * fast as glibc's vector memcmp (measured: 1.2 vs 2.7 ms per 4 MiB), and
 * the per-step check reads the whole window.
 */
__attribute__((optimize("no-tree-vectorize")))
static int page_differs(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	uint64_t acc = 0;
	unsigned long i;

	for (i = 0; i < TPG / 8; i += 4)
		acc |= (x[i] ^ y[i]) | (x[i + 1] ^ y[i + 1]) |
		       (x[i + 2] ^ y[i + 2]) | (x[i + 3] ^ y[i + 3]);
	return acc != 0;
}

__attribute__((optimize("no-tree-vectorize")))
static int page_nonzero(const void *a)
{
	const uint64_t *x = a;
	uint64_t acc = 0;
	unsigned long i;

	for (i = 0; i < TPG / 8; i += 4)
		acc |= x[i] | x[i + 1] | x[i + 2] | x[i + 3];
	return acc != 0;
}

int t_check_page(struct torture *t, unsigned long p, struct mismatch *m)
{
	const uint8_t *a = (const uint8_t *)t_page(t, p);
	const uint8_t *s = t_shadow(t, p);
	long off;

	if (!page_differs(a, s))
		return 0;
	if ((t->pg[p].flags & TP_EITHER) && !page_nonzero(a))
		return 0;
	for (off = 0; off < (long)TPG && a[off] == s[off]; off++)
		;
	if (off == (long)TPG)	/* changed under us: noise, not data */
		return 0;
	m->page = p;
	m->off = off;
	m->want = s[off];
	m->got = a[off];
	return -1;
}

int t_check_readable(struct torture *t, const char *when)
{
	struct mismatch m;
	unsigned long p;

	for (p = 0; p < t->np; p++) {
		if (!t->pg[p].mapped || !(t->pg[p].prot & PROT_READ))
			continue;
		if (t_check_page(t, p, &m)) {
			t_report_mismatch(t, &m, when);
			return -1;
		}
	}
	return 0;
}

int t_check_everything(struct torture *t, const char *when)
{
	struct mismatch m;
	unsigned long p, e, i;
	int bad = 0;

	for (p = 0; p < t->np && !bad; p = e) {
		if (!t->pg[p].mapped || (t->pg[p].prot & PROT_READ)) {
			e = p + 1;
			continue;
		}
		for (e = p; e < t->np && t->pg[e].mapped &&
		     t->pg[e].prot == t->pg[p].prot; e++)
			;
		if (mprotect(t_page(t, p), (e - p) * TPG, PROT_READ)) {
			t_fail(t, "%s: mprotect(%p, %lu pages, PROT_READ): %s",
			       when, (void *)t_page(t, p), e - p, strerror(errno));
			return -1;
		}
		for (i = p; i < e; i++) {
			if (t_check_page(t, i, &m)) {
				t_report_mismatch(t, &m, when);
				bad = 1;
				break;
			}
		}
		if (mprotect(t_page(t, p), (e - p) * TPG, t->pg[p].prot)) {
			t_fail(t, "%s: mprotect(%p, %lu pages, %s) back: %s",
			       when, (void *)t_page(t, p), e - p,
			       prot_str(t->pg[p].prot), strerror(errno));
			return -1;
		}
	}
	if (bad)
		return -1;
	return t_check_readable(t, when);
}

static char *mapsbuf;
#define MAPSBUF_SZ	(4UL << 20)

static int slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (!mapsbuf)
		mapsbuf = malloc(MAPSBUF_SZ);
	if (fd < 0 || !mapsbuf) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (n + 1 < MAPSBUF_SZ && (r = read(fd, mapsbuf + n, MAPSBUF_SZ - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		n += r;
	}
	close(fd);
	mapsbuf[n] = 0;
	return n + 1 < MAPSBUF_SZ ? (int)n : -1;
}

static int perms_to_prot(const char *s)
{
	return (s[0] == 'r' ? PROT_READ : 0) | (s[1] == 'w' ? PROT_WRITE : 0) |
	       (s[2] == 'x' ? PROT_EXEC : 0);
}

int t_read_vmas(struct torture *t, struct tvma *v, int max)
{
	unsigned long lo = (unsigned long)t->base, hi = lo + t->np * TPG;
	char *line, *save;
	int n = 0;

	if (slurp("/proc/self/maps") < 0)
		return -1;
	for (line = strtok_r(mapsbuf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long s, e;
		char *x;

		/* "start-end perms ...", hand-parsed: sscanf is slow in TCG */
		s = strtoul(line, &x, 16);
		if (*x != '-')
			continue;
		e = strtoul(x + 1, &x, 16);
		if (*x != ' ' || strlen(x) < 4)
			continue;
		if (e <= lo || s >= hi)
			continue;
		if (n == max)
			return -1;
		v[n].s = ((s < lo ? lo : s) - lo) / TPG;
		v[n].e = ((e > hi ? hi : e) - lo) / TPG;
		v[n].prot = perms_to_prot(x + 1);
		n++;
	}
	return n;
}

int t_check_maps(struct torture *t, const char *when)
{
	static struct tvma *v;
	unsigned long p = 0, i;
	int n, k;

	if (!v)
		v = malloc(sizeof(*v) * (t->np + 1));
	n = v ? t_read_vmas(t, v, t->np + 1) : -1;
	if (n < 0) {
		t_fail(t, "%s: cannot read /proc/self/maps", when);
		return -1;
	}
	for (k = 0; k <= n; k++) {
		unsigned long s = k < n ? v[k].s : t->np;

		for (i = p; i < s; i++)
			if (t->pg[i].mapped)
				goto bad;
		if (k == n)
			break;
		for (i = v[k].s; i < v[k].e; i++)
			if (!t->pg[i].mapped || t->pg[i].prot != v[k].prot)
				goto bad;
		p = v[k].e;
	}
	return 0;
bad:
	t_fail(t, "%s: model and /proc/self/maps differ at page %lu (%p): "
	       "model %s %s", when, i, (void *)t_page(t, i),
	       t->pg[i].mapped ? "mapped" : "hole",
	       t->pg[i].mapped ? prot_str(t->pg[i].prot) : "");
	for (k = 0; k < n; k++) {
		if (v[k].e + 4 < i || v[k].s > i + 4)
			continue;
		diag("%smaps: pages %lu-%lu %s", t->who, v[k].s, v[k].e,
		     prot_str(v[k].prot));
	}
	return -1;
}

/* ---- noise observed ---- */

static unsigned long read_ulong(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoul(buf, NULL, 10);
}

void t_sample_noise(struct torture *t, struct tnoise *nz)
{
	unsigned long lo = (unsigned long)t->base, hi = lo + t->np * TPG;
	unsigned long thp = 0, x;
	char *line, *save;
	int in = 0;

	nz->samples++;
	if (slurp("/proc/self/smaps") >= 0) {
		for (line = strtok_r(mapsbuf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			unsigned long s, e;

			if (sscanf(line, "%lx-%lx ", &s, &e) == 2 &&
			    strchr(line, '-') < strchr(line, ' ')) {
				in = e > lo && s < hi;
				continue;
			}
			if (in && sscanf(line, "AnonHugePages: %lu", &x) == 1)
				thp += x;
		}
	}
	if (thp > nz->thp_kb_max)
		nz->thp_kb_max = thp;
	x = read_ulong("/proc/self/ksm_merging_pages");
	if (x > nz->ksm_max)
		nz->ksm_max = x;
	if (slurp("/proc/self/status") >= 0) {
		char *s = strstr(mapsbuf, "VmSwap:");

		if (s && sscanf(s, "VmSwap: %lu", &x) == 1 && x > nz->swap_kb_max)
			nz->swap_kb_max = x;
	}
}

/* ---- the rmap verifier ---- */

int t_verify(struct torture *t, const char *ctx)
{
	char buf[300];
	int r;

	snprintf(buf, sizeof(buf), "torture seed %llu %sstep %lu (%s) %s",
		 (unsigned long long)t->seed, t->who, t->step, t->desc, ctx);
	r = vm_verify_self_ok(buf);
	if (!r) {
		if (!t->failed)
			t_repro_hint(t);
		t->failed = 1;
		return -1;
	}
	return 0;
}
