// SPDX-License-Identifier: GPL-2.0
/*
 * Data-checking torture: a seeded random sequence of address-space
 * operations over a 2 MiB aligned window - mmap (MAP_FIXED, into holes,
 * 2 MiB THP-backed), munmap, mremap (move, grow, shrink, DONTUNMAP),
 * mprotect, madvise (DONTNEED, FREE, PAGEOUT, COLD, [NO]HUGEPAGE, COLLAPSE,
 * [UN]MERGEABLE, fork flags), mlock/munlock, mbind, userfaultfd fills,
 * writes, fork (children check their copy, some stay alive while the
 * parent goes on) - with a byte-exact shadow model (torture.h) and
 * /proc/self/maps checked after every step, and the rmap verifier
 * (vm_verify_self_ok) after every step.
 *
 * usage: t_torture [-o] [-v] [-s SEED] [-n NOPS] [-w WINDOW_PAGES]
 *                  [-t SECONDS] [-c CHECK_EVERY] [-p PUBFILE]
 *   -o  opt this process in through /dev/vmamerge (fails if absent)
 *   -n  number of ops (0: no limit, then -t must be given); default 1000
 *   -w  window size in pages, a multiple of 512 (default 1024 = 4 MiB)
 *   -t  stop after SECONDS (the summary names the step reached)
 *   -c  check data/maps/rmap every N steps (default 1: every step)
 *   -p  write "PID START END" (hex addresses) there once the window
 *       exists, for t_migrate
 *   -v  print every op
 *   -B  self-test: corrupt the model after step B; the run must fail
 *
 * The sequence depends only on the seed, on the model and on the VMA
 * layout the kernel reports (mremap sources are picked inside one VMA of
 * /proc/self/maps), so one kernel with the same module state runs the same
 * syscalls for a seed.  KSM, khugepaged, migration, compaction and swap
 * are external noise: they must never change what a page reads as, but
 * they do not replay.
 *
 * Output: "# seed S: N ops (...) in T s", then "ok - torture seed S (N ops)"
 * or, on the first failure, one "not ok" line naming seed, step, op,
 * address and first bad byte, diagnostics and a reproduction hint.
 */
#include "torture.h"
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MREMAP_FIXED
#define MREMAP_FIXED		2
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif

enum {
	OP_WRITE, OP_MMAP, OP_MMAP_NR, OP_MUNMAP, OP_MOVE, OP_GROW, OP_SHRINK,
	OP_DONTUNMAP, OP_MPROTECT, OP_DONTNEED, OP_PAGEOUT, OP_COLD, OP_FREE,
	OP_HUGEPAGE, OP_NOHUGEPAGE, OP_COLLAPSE, OP_MERGEABLE, OP_UNMERGEABLE,
	OP_FORKFLAGS, OP_MLOCK, OP_MUNLOCK, OP_FORK, OP_LINGER, OP_RELEASE,
	OP_HUGE, OP_CHECKALL, OP_MBIND, OP_UFFD, OP_NR
};

static const struct {
	const char *name;
	unsigned int weight;	/* per mille, roughly */
	char group;		/* summary group */
} ops[OP_NR] = {
	[OP_WRITE]	= { "write", 190, 'w' },
	[OP_MMAP]	= { "mmap-fixed", 50, 'm' },
	[OP_MMAP_NR]	= { "mmap-noreplace", 40, 'm' },
	[OP_MUNMAP]	= { "munmap", 50, 'u' },
	[OP_MOVE]	= { "mremap-move", 80, 'r' },
	[OP_GROW]	= { "mremap-grow", 35, 'r' },
	[OP_SHRINK]	= { "mremap-shrink", 30, 'r' },
	[OP_DONTUNMAP]	= { "mremap-dontunmap", 30, 'r' },
	[OP_MPROTECT]	= { "mprotect", 90, 'p' },
	[OP_DONTNEED]	= { "madv-dontneed", 35, 'a' },
	[OP_PAGEOUT]	= { "madv-pageout", 35, 'a' },
	[OP_COLD]	= { "madv-cold", 10, 'a' },
	[OP_FREE]	= { "madv-free", 20, 'a' },
	[OP_HUGEPAGE]	= { "madv-hugepage", 15, 'a' },
	[OP_NOHUGEPAGE]	= { "madv-nohugepage", 8, 'a' },
	[OP_COLLAPSE]	= { "madv-collapse", 10, 'a' },
	[OP_MERGEABLE]	= { "madv-mergeable", 25, 'a' },
	[OP_UNMERGEABLE] = { "madv-unmergeable", 8, 'a' },
	[OP_FORKFLAGS]	= { "madv-forkflags", 15, 'a' },
	[OP_MLOCK]	= { "mlock", 20, 'l' },
	[OP_MUNLOCK]	= { "munlock", 20, 'l' },
	[OP_FORK]	= { "fork", 12, 'f' },
	[OP_LINGER]	= { "fork-linger", 8, 'f' },
	[OP_RELEASE]	= { "release-child", 10, 'f' },
	[OP_HUGE]	= { "huge-2m", 12, 'm' },
	[OP_CHECKALL]	= { "check-all", 15, 'c' },
	[OP_MBIND]	= { "mbind", 20, 'b' },
	[OP_UFFD]	= { "uffd-fill", 15, 'y' },
};

static struct torture T;
static unsigned long nr_ops[OP_NR], nr_skipped, nr_soft_fail, nr_free_shared;
static int cur_op = -1;
static int in_child;
static struct tvma *vmas;

#define MAX_LINGER	2
static struct {
	pid_t pid;
	int wfd;
	unsigned long step;
} linger[MAX_LINGER];
static int nr_linger;

static void step_desc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void step_desc(const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(T.desc, sizeof(T.desc), "%s ", cur_op >= 0 ? ops[cur_op].name : "?");
	va_start(ap, fmt);
	vsnprintf(T.desc + n, sizeof(T.desc) - n, fmt, ap);
	va_end(ap);
	if (T.verbose)
		diag("%sstep %lu: %s", T.who, T.step, T.desc);
}

static void sysfail(const char *call)
{
	t_fail(&T, "%s failed: %s", call, strerror(errno));
}

/* ---- picking from the model ---- */

enum { PK_MAPPED, PK_HOLE, PK_WRITABLE, PK_ACCESSIBLE, PK_UNLOCKED };

static int pk(unsigned long p, int mode)
{
	const struct tpage *g = &T.pg[p];

	switch (mode) {
	case PK_MAPPED: return g->mapped;
	case PK_HOLE: return !g->mapped;
	case PK_WRITABLE: return g->mapped && (g->prot & PROT_WRITE);
	case PK_ACCESSIBLE: return g->mapped && g->prot != PROT_NONE;
	case PK_UNLOCKED: return g->mapped && !(g->flags & TP_LOCKED);
	}
	return 0;
}

static unsigned long pick_len(void)
{
	unsigned long r = t_rnd(&T, 10);

	if (r < 6)
		return 1 + t_rnd(&T, 8);
	if (r < 9)
		return 1 + t_rnd(&T, 64);
	return 1 + t_rnd(&T, T.np / 2);
}

static void pick_any(unsigned long *p, unsigned long *n)
{
	*n = pick_len();
	*p = t_rnd(&T, T.np - *n + 1);
}

/* A range [p, p+n) inside one run of pages satisfying mode. */
static int pick_run(int mode, unsigned long *p, unsigned long *n)
{
	unsigned long s = t_rnd(&T, T.np), i, q = 0, e, len;

	for (i = 0; i < T.np; i++) {
		q = (s + i) % T.np;
		if (pk(q, mode))
			break;
	}
	if (i == T.np)
		return -1;
	for (e = q; e < T.np && pk(e, mode); e++)
		;
	len = pick_len();
	if (len > e - q)
		len = e - q;
	*p = q + t_rnd(&T, e - q - len + 1);
	*n = len;
	return 0;
}

static int read_vmas(void)
{
	int n = t_read_vmas(&T, vmas, T.np + 1);

	if (n < 0)
		t_fail(&T, "cannot read /proc/self/maps");
	return n;
}

static int pick_prot(void)
{
	unsigned long r = t_rnd(&T, 100);

	if (r < 45)
		return PROT_READ | PROT_WRITE;
	if (r < 70)
		return PROT_READ;
	if (r < 90)
		return PROT_NONE;
	return PROT_READ | PROT_EXEC;
}

/* ---- content ---- */

static const uint8_t patterns[] = { 0x00, 0x5a, 0xff, 0x11 };

static void gen_words(uint8_t *s, uint64_t key)
{
	uint64_t *w = (uint64_t *)s, x = key, m = t_splitmix(&x);
	unsigned long i;

	for (i = 0; i < TPG / 8; i++)
		w[i] = m + i * 0x9E3779B97F4A7C15ULL;
}

/*
 * A page MADV_FREE'd may read as its old contents or as zeros until it is
 * written again.  Writing one byte pins whichever it is (the PTE is dirty
 * from then on); then the model can follow.
 */
static int settle_either(unsigned long p)
{
	volatile uint8_t *a = (volatile uint8_t *)t_page(&T, p);
	uint8_t *s = t_shadow(&T, p);
	struct mismatch m;
	unsigned long i;

	if (!(T.pg[p].flags & TP_EITHER))
		return 0;
	a[0] = s[0];
	T.pg[p].flags &= ~TP_EITHER;
	if (!memcmp((const void *)a, s, TPG))
		return 0;
	for (i = 1; i < TPG && !a[i]; i++)
		;
	if (i == TPG) {		/* it had been dropped: zeros */
		memset(s + 1, 0, TPG - 1);
		return 0;
	}
	if (!t_check_page(&T, p, &m))
		return 0;
	t_report_mismatch(&T, &m, "settling a MADV_FREE page before a write");
	return -1;
}

/* ---- ops ---- */

static void op_write(void)
{
	unsigned long p, n, i, q, off, len, k;
	int kind = t_rnd(&T, 4);
	uint8_t *s;

	if (pick_run(PK_WRITABLE, &p, &n)) {
		nr_skipped++;
		return;
	}
	if (n > 32)
		n = 32;
	step_desc("kind %d %p +%lu pages", kind, (void *)t_page(&T, p), n);
	for (i = p; i < p + n; i++) {
		s = t_shadow(&T, i);
		switch (kind) {
		case 0:	/* random bytes into part of the page */
			if (settle_either(i))
				return;
			off = t_rnd(&T, TPG);
			len = 1 + t_rnd(&T, TPG - off);
			for (k = off; k < off + len; k += 8) {
				uint64_t x = t_next(&T);

				memcpy(s + k, &x, off + len - k < 8 ? off + len - k : 8);
			}
			memcpy(t_page(&T, i) + off, s + off, len);
			break;
		case 1:	/* a whole page of one byte: KSM material */
			memset(s, patterns[t_rnd(&T, sizeof(patterns))], TPG);
			memcpy(t_page(&T, i), s, TPG);
			break;
		case 2:	/* a copy of another page's contents */
			q = t_rnd(&T, T.np);
			if (q != i)
				memcpy(s, t_shadow(&T, q), TPG);
			memcpy(t_page(&T, i), s, TPG);
			break;
		default:
			gen_words(s, T.seed << 32 ^ T.step << 12 ^ i);
			memcpy(t_page(&T, i), s, TPG);
			break;
		}
		T.pg[i].flags &= ~TP_EITHER;
		T.pg[i].last = T.step;
	}
}

static void op_mmap(int noreplace)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS, prot;
	unsigned long p, n, r;
	void *m;

	if (noreplace) {
		if (pick_run(PK_HOLE, &p, &n)) {
			nr_skipped++;
			return;
		}
		flags |= MAP_FIXED_NOREPLACE;
	} else {
		pick_any(&p, &n);
		flags |= MAP_FIXED;
	}
	prot = pick_prot();
	r = t_rnd(&T, 20);
	if (r < 2)
		flags |= MAP_POPULATE;
	else if (r == 2)
		flags |= MAP_NORESERVE;
	step_desc("%p +%lu pages prot %d flags 0x%x", (void *)t_page(&T, p), n,
		  prot, flags);
	m = mmap(t_page(&T, p), n * TPG, prot, flags, -1, 0);
	if (m == MAP_FAILED) {
		sysfail("mmap");
		return;
	}
	if (m != t_page(&T, p)) {
		t_fail(&T, "mmap returned %p", m);
		return;
	}
	t_set_zero(&T, p, n, prot, 0);
}

static void op_huge(void)
{
	unsigned long slot = t_rnd(&T, T.np / THP_PAGES), p = slot * THP_PAGES, i;
	int sparse = t_rnd(&T, 3) == 0;

	step_desc("%p 2 MiB, MADV_HUGEPAGE, %s", (void *)t_page(&T, p),
		  sparse ? "one write per 64 pages" : "all written");
	if (mmap(t_page(&T, p), THP_PAGES * TPG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		sysfail("mmap");
		return;
	}
	t_set_zero(&T, p, THP_PAGES, PROT_READ | PROT_WRITE, 0);
	if (madvise(t_page(&T, p), THP_PAGES * TPG, MADV_HUGEPAGE)) {
		sysfail("madvise(MADV_HUGEPAGE)");
		return;
	}
	for (i = p; i < p + THP_PAGES; i++) {
		if (sparse && (i - p) % 64)
			continue;
		gen_words(t_shadow(&T, i), T.seed << 32 ^ T.step << 12 ^ i);
		memcpy(t_page(&T, i), t_shadow(&T, i), TPG);
	}
}

static void op_munmap(void)
{
	unsigned long p, n;

	pick_any(&p, &n);
	step_desc("%p +%lu pages", (void *)t_page(&T, p), n);
	if (munmap(t_page(&T, p), n * TPG)) {
		sysfail("munmap");
		return;
	}
	t_set_hole(&T, p, n);
}

/* Moves the model of [p, p+n) to [q, q+nn); dontunmap leaves p mapped. */
static void model_move(unsigned long p, unsigned long n, unsigned long q,
		       unsigned long nn, int dontunmap)
{
	static struct tpage *pg;
	static uint8_t *sh;
	unsigned long i, c = n < nn ? n : nn;
	struct tpage last = T.pg[p + n - 1];

	if (!pg) {
		pg = malloc(T.np * sizeof(*pg));
		sh = malloc(T.np * TPG);
		if (!pg || !sh) {
			t_fail(&T, "out of memory");
			return;
		}
	}
	memcpy(pg, T.pg + p, c * sizeof(*pg));
	memcpy(sh, t_shadow(&T, p), c * TPG);
	if (dontunmap) {
		for (i = p; i < p + n; i++) {
			/* the old range stays, empty and unlocked */
			T.pg[i].flags &= ~(TP_LOCKED | TP_EITHER);
			T.pg[i].last = T.step;
		}
		memset(t_shadow(&T, p), 0, n * TPG);
	} else {
		t_set_hole(&T, p, n);
	}
	memcpy(T.pg + q, pg, c * sizeof(*pg));
	memcpy(t_shadow(&T, q), sh, c * TPG);
	for (i = q; i < q + c; i++)
		T.pg[i].last = T.step;
	if (nn > n)
		t_set_zero(&T, q + n, nn - n, last.prot, last.flags & ~TP_EITHER);
}

static int overlaps(unsigned long a, unsigned long an, unsigned long b,
		    unsigned long bn)
{
	return a < b + bn && b < a + an;
}

/* A destination for nn pages not overlapping [p, p+n): random, or next to
 * another VMA (where a merge might happen). */
static int pick_dst(int nv, unsigned long p, unsigned long n, unsigned long nn,
		    unsigned long *q)
{
	int tries;

	if (nn > T.np)
		return -1;
	for (tries = 0; tries < 4; tries++) {
		unsigned long r = t_rnd(&T, 4);
		const struct tvma *w = &vmas[t_rnd(&T, nv)];

		if (r < 2)
			*q = t_rnd(&T, T.np - nn + 1);
		else if (r == 2)
			*q = w->e;
		else
			*q = w->s >= nn ? w->s - nn : T.np;
		if (*q + nn > T.np)
			continue;
		if (!overlaps(*q, nn, p, n))
			return 0;
	}
	return -1;
}

static void op_mremap(int op)
{
	unsigned long p, n, nn, q = 0, len, r;
	const struct tvma *v;
	int nv, flags = MREMAP_MAYMOVE | MREMAP_FIXED;
	void *m;

	nv = read_vmas();
	if (nv <= 0) {
		if (nv == 0)
			nr_skipped++;
		return;
	}
	v = &vmas[t_rnd(&T, nv)];
	len = v->e - v->s;
	n = pick_len();
	if (n > len)
		n = len;
	p = v->s + t_rnd(&T, len - n + 1);

	switch (op) {
	case OP_GROW:
		/* the tail of the VMA, into the hole after it */
		p = v->s + t_rnd(&T, len);
		n = v->e - p;
		for (r = 0; v->e + r < T.np && !T.pg[v->e + r].mapped && r < 16; r++)
			;
		if (!r) {
			nr_skipped++;
			return;
		}
		nn = n + 1 + t_rnd(&T, r);
		step_desc("%p +%lu -> +%lu pages in place", (void *)t_page(&T, p), n, nn);
		m = mremap(t_page(&T, p), n * TPG, nn * TPG, 0);
		if (m == MAP_FAILED) {
			sysfail("mremap");
			return;
		}
		model_move(p, n, p, nn, 0);
		return;
	case OP_SHRINK:
		if (n < 2) {
			nr_skipped++;
			return;
		}
		nn = 1 + t_rnd(&T, n - 1);
		step_desc("%p +%lu -> +%lu pages", (void *)t_page(&T, p), n, nn);
		m = mremap(t_page(&T, p), n * TPG, nn * TPG, 0);
		if (m == MAP_FAILED) {
			sysfail("mremap");
			return;
		}
		t_set_hole(&T, p + nn, n - nn);
		return;
	case OP_DONTUNMAP:
		flags |= MREMAP_DONTUNMAP;
		nn = n;
		break;
	default:
		r = t_rnd(&T, 10);
		if (r < 6)
			nn = n;
		else if (r < 8)
			nn = 1 + t_rnd(&T, n);
		else
			nn = n + 1 + t_rnd(&T, 16);
		break;
	}
	if (pick_dst(nv, p, n, nn, &q)) {
		nr_skipped++;
		return;
	}
	step_desc("%p +%lu -> %p +%lu pages", (void *)t_page(&T, p), n,
		  (void *)t_page(&T, q), nn);
	m = mremap(t_page(&T, p), n * TPG, nn * TPG, flags, t_page(&T, q));
	if (m == MAP_FAILED) {
		sysfail("mremap");
		return;
	}
	if (m != t_page(&T, q)) {
		t_fail(&T, "mremap returned %p", m);
		return;
	}
	/* a shrinking move unmaps the rest of the old range first */
	if (nn < n) {
		t_set_hole(&T, p + nn, n - nn);
		n = nn;
	}
	model_move(p, n, q, nn, op == OP_DONTUNMAP);
}

static void op_mprotect(void)
{
	unsigned long p, n, i;
	int prot;

	if (pick_run(PK_MAPPED, &p, &n)) {
		nr_skipped++;
		return;
	}
	prot = pick_prot();
	step_desc("%p +%lu pages prot %d", (void *)t_page(&T, p), n, prot);
	if (mprotect(t_page(&T, p), n * TPG, prot)) {
		sysfail("mprotect");
		return;
	}
	for (i = p; i < p + n; i++)
		T.pg[i].prot = prot;
}

/*
 * MADV_FREE and a kernel bug (docs/testing.md, "The seed-1 finding";
 * tests/guest/repro_lazyfree.c): madvise_free_pte_range() checks that a
 * folio is not mapped elsewhere only when it is dirty or in the swap cache,
 * so MADV_FREE of a page shared with a fork child or parent makes the
 * other process's copy lazy-free too.  That copy is lost (reads as zeros)
 * when it is clean in every sense - read back from zram by a read fault,
 * which skips the swap cache and leaves PTE and folio clean - and reclaim
 * then finds only clean mappings (stock 6.1 and 6.12).  The torture must
 * not trip over that stock bug, and must not accept zeros for it either:
 * MADV_FREE goes only to pages no other process can depend on, as
 * /proc/self/pagemap tells just before the call:
 *   - present and mapped exclusively (PM_MMAP_EXCLUSIVE), or
 *   - not present: none, or a swap entry of a swap device (a lower type
 *     than the migration, hwpoison and marker entries, which start at
 *     MAX_SWAPFILES: 23 or more on these configs; a page under migration
 *     may be shared), or
 *   - expected to read as zeros anyway (a zero page, never written).
 * A present page must not be a KSM page either (a second stock bug,
 * docs/testing.md "The 6.1 data failure without the module";
 * tests/guest/repro_ksm_lazyfree.c): MADV_FREE of a KSM page mapped once
 * leaves it clean and lazy-free in KSM's stable tree, ksmd later merges an
 * equal page of ours into it with a clean PTE, and reclaim drops it under
 * that page - which then reads as zeros.  /proc/kpageflags (root) tells
 * KSM pages; a page whose frame it cannot name is left out.
 * Other pages of the range are left out (the range is cut into runs); the
 * model marks only the pages freed.  Nothing can make an exclusive page
 * shared meanwhile by us: only our own fork shares, and a child never
 * forks.  ksmd can turn a page into a KSM page within those microseconds:
 * KSM marks a new KSM page dirty, and once its second page is merged in it
 * is mapped twice, which MADV_FREE leaves alone; only between ksmd's two
 * merge steps is it mapped once - a window of ksmd's that would have to
 * meet ours.  Not covered, not seen.
 */
/* is the present page @e a KSM page, or one whose frame we cannot read? */
static int ksm_or_unknown(uint64_t e)
{
	unsigned long long f;

	return kpageflags_of(e, &f) || (f & (1ULL << KPF_KSM));
}

static int free_ok(unsigned long p, uint64_t e)
{
	static const uint8_t zero[TPG];

	if (!memcmp(t_shadow(&T, p), zero, TPG))
		return 1;
	if (e & PM_PRESENT)
		return (e & PM_EXCLUSIVE) && !ksm_or_unknown(e);
	if (e & PM_SWAP)
		return PM_SWAP_TYPE(e) < 16;
	return 1;
}

static void op_free(unsigned long p, unsigned long n)
{
	static uint64_t *pm;
	unsigned long i, s, k, nfree = 0, nruns = 0;
	off_t off = ((unsigned long)t_page(&T, p) / TPG) * sizeof(*pm);
	int fd;

	if (!pm)
		pm = malloc(T.np * sizeof(*pm));
	/* per call: a fork child inherits fds, and /proc/self is resolved
	 * at open */
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (!pm || fd < 0 ||
	    pread(fd, pm, n * sizeof(*pm), off) != (ssize_t)(n * sizeof(*pm))) {
		sysfail("reading /proc/self/pagemap");
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	for (s = 0; s < n; s = i) {
		for (; s < n && !free_ok(p + s, pm[s]); s++)
			;
		for (i = s; i < n && free_ok(p + i, pm[i]); i++)
			;
		if (i == s)
			break;
		if (madvise(t_page(&T, p + s), (i - s) * TPG, MADV_FREE)) {
			sysfail("madvise(MADV_FREE)");
			return;
		}
		for (k = p + s; k < p + i; k++) {
			T.pg[k].flags |= TP_EITHER;
			T.pg[k].last = T.step;
		}
		nfree += i - s;
		nruns++;
	}
	nr_free_shared += n - nfree;
	if (T.verbose && nfree < n)
		diag("%smadv-free: %lu of %lu pages freed in %lu run(s); the others "
		     "are shared with another process or KSM pages", T.who, nfree, n, nruns);
}

static void op_madvise(int op)
{
	static const struct { int adv; uint8_t set, clear; const char *name; } ff[] = {
		{ MADV_DONTFORK, TP_DONTFORK, 0, "DONTFORK" },
		{ MADV_DOFORK, 0, TP_DONTFORK, "DOFORK" },
		{ MADV_WIPEONFORK, TP_WIPE, 0, "WIPEONFORK" },
		{ MADV_KEEPONFORK, 0, TP_WIPE, "KEEPONFORK" },
	};
	unsigned long p, n, i, k = 0, slot;
	int adv, soft = 0;
	char name[40];

	switch (op) {
	case OP_DONTNEED:
	case OP_FREE:
	case OP_PAGEOUT:
	case OP_COLD:
		/* all four refuse VM_LOCKED with EINVAL */
		if (pick_run(PK_UNLOCKED, &p, &n)) {
			nr_skipped++;
			return;
		}
		adv = op == OP_DONTNEED ? MADV_DONTNEED : op == OP_FREE ? MADV_FREE :
		      op == OP_PAGEOUT ? MADV_PAGEOUT : MADV_COLD;
		break;
	case OP_HUGEPAGE:
	case OP_NOHUGEPAGE:
	case OP_COLLAPSE:
		/* a 2 MiB slot, or the mapped run inside it */
		slot = t_rnd(&T, T.np / THP_PAGES) * THP_PAGES;
		for (p = slot; p < slot + THP_PAGES && !T.pg[p].mapped; p++)
			;
		for (n = 0; p + n < slot + THP_PAGES && T.pg[p + n].mapped; n++)
			;
		if (!n) {
			nr_skipped++;
			return;
		}
		adv = op == OP_HUGEPAGE ? MADV_HUGEPAGE :
		      op == OP_NOHUGEPAGE ? MADV_NOHUGEPAGE : MADV_COLLAPSE;
		soft = op == OP_COLLAPSE;
		break;
	case OP_FORKFLAGS:
		k = t_rnd(&T, 4);
		adv = ff[k].adv;
		if (pick_run(PK_MAPPED, &p, &n)) {
			nr_skipped++;
			return;
		}
		break;
	default:
		if (pick_run(PK_MAPPED, &p, &n)) {
			nr_skipped++;
			return;
		}
		adv = op == OP_MERGEABLE ? MADV_MERGEABLE : MADV_UNMERGEABLE;
		break;
	}
	if (op == OP_FORKFLAGS)
		step_desc("%s %p +%lu pages", ff[k].name, (void *)t_page(&T, p), n);
	else
		step_desc("%p +%lu pages", (void *)t_page(&T, p), n);
	if (op == OP_FREE) {
		op_free(p, n);
		return;
	}
	if (madvise(t_page(&T, p), n * TPG, adv)) {
		if (soft) {	/* MADV_COLLAPSE may fail: data must not */
			nr_soft_fail++;
			return;
		}
		snprintf(name, sizeof(name), "madvise(%d)", adv);
		sysfail(name);
		return;
	}
	for (i = p; i < p + n; i++) {
		switch (op) {
		case OP_DONTNEED:
			memset(t_shadow(&T, i), 0, TPG);
			T.pg[i].flags &= ~TP_EITHER;
			T.pg[i].last = T.step;
			break;
		case OP_FORKFLAGS:
			T.pg[i].flags = (T.pg[i].flags | ff[k].set) & ~ff[k].clear;
			break;
		}
	}
}

static void op_mlock(int lock)
{
	unsigned long p, n, i;

	if (pick_run(lock ? PK_ACCESSIBLE : PK_MAPPED, &p, &n)) {
		nr_skipped++;
		return;
	}
	step_desc("%p +%lu pages", (void *)t_page(&T, p), n);
	if (lock ? mlock(t_page(&T, p), n * TPG) : munlock(t_page(&T, p), n * TPG)) {
		sysfail(lock ? "mlock" : "munlock");
		return;
	}
	for (i = p; i < p + n; i++) {
		if (lock)
			T.pg[i].flags |= TP_LOCKED;
		else
			T.pg[i].flags &= ~TP_LOCKED;
	}
}

static int two_nodes;

/* A NUMA policy for a range (VMA policies split and merge VMAs); with
 * MPOL_MF_MOVE the kernel migrates the pages too. */
static void op_mbind(void)
{
	unsigned long p, n, mask = 0, r = t_rnd(&T, 5), node = t_rnd(&T, 2);
	int mode, flags = t_rnd(&T, 3) == 0 ? MPOL_MF_MOVE : 0;

	if (pick_run(PK_MAPPED, &p, &n)) {
		nr_skipped++;
		return;
	}
	if (!two_nodes)
		node = 0;
	switch (r) {
	case 0: mode = MPOL_DEFAULT; break;
	case 1: mode = MPOL_BIND; mask = 1UL << node; break;
	case 2: mode = MPOL_PREFERRED; mask = 1UL << node; break;
	case 3: mode = MPOL_INTERLEAVE; mask = two_nodes ? 3 : 1; break;
	default: mode = MPOL_BIND; mask = two_nodes ? 3 : 1; break;
	}
	step_desc("%p +%lu pages mode %d nodes 0x%lx flags %d",
		  (void *)t_page(&T, p), n, mode, mask, flags);
	if (syscall(SYS_mbind, t_page(&T, p), n * TPG, mode, mode ? &mask : NULL,
		    mode ? 64UL : 0UL, flags)) {
		/*
		 * 6.1: with MPOL_MF_MOVE, a page that cannot be isolated
		 * (t_migrate is moving it) makes mbind() fail with EIO after
		 * it applied the policy.  Data must not change: soft.
		 */
		if (errno == EIO && flags) {
			nr_soft_fail++;
			return;
		}
		sysfail("mbind");
	}
}

/*
 * userfaultfd: register a range for missing faults, empty it, fill it with
 * UFFDIO_COPY (new contents) and UFFDIO_ZEROPAGE, unregister.  Nothing
 * faults while it is registered (khugepaged does not fill holes of armed
 * VMAs), so no handler thread is needed.
 */
static void op_uffd(void)
{
	static uint64_t buf[TPG / 8] __attribute__((aligned(4096)));
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	unsigned long p, n, i, filled = 0;
	int fd;

	if (pick_run(PK_UNLOCKED, &p, &n)) {
		nr_skipped++;
		return;
	}
	if (n > 64)
		n = 64;
	step_desc("%p +%lu pages", (void *)t_page(&T, p), n);
	fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		sysfail("userfaultfd");
		return;
	}
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)t_page(&T, p);
	reg.range.len = n * TPG;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg)) {
		sysfail("UFFDIO_API/REGISTER");
		goto out;
	}
	if (madvise(t_page(&T, p), n * TPG, MADV_DONTNEED)) {
		sysfail("madvise(MADV_DONTNEED)");
		goto out;
	}
	for (i = p; i < p + n; i++) {
		memset(t_shadow(&T, i), 0, TPG);
		T.pg[i].flags &= ~TP_EITHER;
		T.pg[i].last = T.step;
	}
	for (i = p; i < p + n; i++) {
		int zero = t_rnd(&T, 4) == 0, r;

		if (zero) {
			struct uffdio_zeropage z = {
				.range = { (unsigned long)t_page(&T, i), TPG },
			};

			r = ioctl(fd, UFFDIO_ZEROPAGE, &z);
		} else {
			struct uffdio_copy c = {
				.dst = (unsigned long)t_page(&T, i),
				.src = (unsigned long)buf, .len = TPG,
			};

			gen_words((uint8_t *)buf, T.seed << 32 ^ T.step << 12 ^ i ^ 0x55);
			r = ioctl(fd, UFFDIO_COPY, &c);
			if (!r)
				memcpy(t_shadow(&T, i), buf, TPG);
		}
		if (!r) {
			filled++;
		} else if (errno != EEXIST) {
			sysfail(zero ? "UFFDIO_ZEROPAGE" : "UFFDIO_COPY");
			goto out;
		}
	}
	if (T.verbose)
		diag("uffd: %lu of %lu pages filled", filled, n);
out:
	close(fd);	/* unregisters */
}

/* ---- fork ---- */

static void do_step(void);

static void child_main(unsigned long fork_step, int rfd)
{
	static char who[64];
	unsigned long p, i;
	char c;

	in_child = 1;
	/* the parent's other children are not ours: without their pipes'
	 * write ends here, they see EOF when the parent releases them */
	for (i = 0; i < (unsigned long)nr_linger; i++)
		close(linger[i].wfd);
	nr_linger = 0;
	snprintf(who, sizeof(who), "fork child of step %lu: ", fork_step);
	T.who = who;
	/* what fork gives the child */
	for (p = 0; p < T.np; p++) {
		if (!T.pg[p].mapped)
			continue;
		if (T.pg[p].flags & TP_DONTFORK) {
			t_set_hole(&T, p, 1);
		} else if (T.pg[p].flags & TP_WIPE) {
			memset(t_shadow(&T, p), 0, TPG);
			T.pg[p].flags &= ~TP_EITHER;
		}
		/* mlock is not inherited */
		T.pg[p].flags &= ~TP_LOCKED;
	}
	snprintf(T.desc, sizeof(T.desc), "checking the child's view");
	if (t_check_maps(&T, "in the fork child") ||
	    t_check_everything(&T, "in the fork child"))
		_exit(3);
	/* its own ops on its own copy, from its own stream */
	T.rng ^= 0xC4CEB9FE1A85EC53ULL;
	for (i = 0; i < 8 && !T.failed; i++)
		do_step();
	if (T.failed)
		_exit(3);
	if (rfd >= 0) {
		/* stay alive while the parent goes on; then check again */
		while (read(rfd, &c, 1) < 0 && errno == EINTR)
			;
		snprintf(T.desc, sizeof(T.desc), "lingering child released");
		if (t_check_maps(&T, "in the lingering child at release") ||
		    t_check_everything(&T, "in the lingering child at release"))
			_exit(3);
	}
	_exit(0);
}

static void reap(pid_t pid, unsigned long fork_step)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			t_fail(&T, "waitpid(child of step %lu): %s", fork_step,
			       strerror(errno));
			return;
		}
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (WIFEXITED(st) && (WEXITSTATUS(st) == 3 || WEXITSTATUS(st) == 4)) {
		/* the child printed its "not ok" line */
		diag("fork child of step %lu failed (reported above)", fork_step);
		T.failed = 1;
		return;
	}
	t_fail(&T, "fork child of step %lu died: wait status 0x%x", fork_step, st);
}

static void op_fork(int keep)
{
	int pfd[2] = { -1, -1 };
	pid_t pid;

	if (keep && nr_linger == MAX_LINGER) {
		nr_skipped++;
		return;
	}
	step_desc("%s", keep ? "child stays until released" : "child checks and exits");
	if (keep && pipe(pfd)) {
		sysfail("pipe");
		return;
	}
	pid = fork();
	if (pid < 0) {
		sysfail("fork");
		return;
	}
	if (pid == 0) {
		if (keep)
			close(pfd[1]);
		child_main(T.step, keep ? pfd[0] : -1);
	}
	if (!keep) {
		reap(pid, T.step);
		return;
	}
	close(pfd[0]);
	linger[nr_linger].pid = pid;
	linger[nr_linger].wfd = pfd[1];
	linger[nr_linger].step = T.step;
	nr_linger++;
}

static void release_oldest(void)
{
	close(linger[0].wfd);
	reap(linger[0].pid, linger[0].step);
	memmove(&linger[0], &linger[1], (MAX_LINGER - 1) * sizeof(linger[0]));
	nr_linger--;
}

static void op_release(void)
{
	if (!nr_linger) {
		nr_skipped++;
		return;
	}
	step_desc("child of step %lu", linger[0].step);
	release_oldest();
}

/* ---- the step ---- */

static int check_every = 1;

static int pick_op(void)
{
	static unsigned int total;
	unsigned long r;
	int op;

	if (!total)
		for (op = 0; op < OP_NR; op++)
			total += ops[op].weight;
	r = t_rnd(&T, total);
	for (op = 0; op < OP_NR; op++) {
		if (r < ops[op].weight)
			break;
		r -= ops[op].weight;
	}
	/* a child neither forks nor waits for others */
	if (in_child && (op == OP_FORK || op == OP_LINGER || op == OP_RELEASE))
		op = OP_WRITE;
	return op;
}

static uint64_t ns_data, ns_maps, ns_verify;
static unsigned long break_step;

/*
 * -B STEP: a self-test of the torture.  After STEP, one byte of the model
 * of a mapped readable page is flipped, as if the kernel had corrupted
 * that byte; the check right after must report it precisely.
 */
static void plant_corruption(void)
{
	unsigned long p, i;

	for (i = 0; i < T.np; i++) {
		p = (T.np / 3 + i) % T.np;
		if (T.pg[p].mapped && (T.pg[p].prot & PROT_READ))
			break;
	}
	if (i == T.np) {
		diag("-B %lu: no mapped readable page to corrupt; trying the next step",
		     T.step);
		break_step++;
		return;
	}
	t_shadow(&T, p)[123] ^= 0x40;
	T.pg[p].flags &= ~TP_EITHER;
	diag("-B: planted a corruption after step %lu: page %lu (%p) byte 123",
	     T.step, p, (void *)t_page(&T, p));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void do_step(void)
{
	uint64_t t_a, t_b;
	int op;

	T.step++;
	op = pick_op();
	cur_op = op;
	nr_ops[op]++;
	snprintf(T.desc, sizeof(T.desc), "%s", ops[op].name);
	switch (op) {
	case OP_WRITE: op_write(); break;
	case OP_MMAP: op_mmap(0); break;
	case OP_MMAP_NR: op_mmap(1); break;
	case OP_HUGE: op_huge(); break;
	case OP_MUNMAP: op_munmap(); break;
	case OP_MOVE:
	case OP_GROW:
	case OP_SHRINK:
	case OP_DONTUNMAP: op_mremap(op); break;
	case OP_MPROTECT: op_mprotect(); break;
	case OP_MLOCK: op_mlock(1); break;
	case OP_MUNLOCK: op_mlock(0); break;
	case OP_FORK: op_fork(0); break;
	case OP_LINGER: op_fork(1); break;
	case OP_RELEASE: op_release(); break;
	case OP_MBIND: op_mbind(); break;
	case OP_UFFD: op_uffd(); break;
	case OP_CHECKALL:
		step_desc("every mapped page, made readable for a moment");
		t_check_everything(&T, "in check-all");
		break;
	default: op_madvise(op); break;
	}
	if (T.failed)
		return;
	if (T.step == break_step && !in_child)
		plant_corruption();
	if (T.step % check_every)
		return;
	/*
	 * The verifier first: it reads no page, so rmap damage it can see -
	 * a migration entry that rmap lost, which the next fault on it
	 * BUGs - is reported with this step instead of crashing the data
	 * check.
	 */
	t_a = now_ns();
	if (t_verify(&T, "after the op"))
		return;
	t_b = now_ns();
	ns_verify += t_b - t_a;
	if (t_check_readable(&T, "after the op"))
		return;
	t_a = now_ns();
	ns_data += t_a - t_b;
	if (t_check_maps(&T, "after the op"))
		return;
	ns_maps += now_ns() - t_a;
}

/* ---- main ---- */

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	char buf[600];
	unsigned long a = (unsigned long)si->si_addr, lo = (unsigned long)T.base;
	int n;

	(void)uc;
	n = snprintf(buf, sizeof(buf),
		     "not ok - torture seed %llu: %sstep %lu (%s): signal %d at %p",
		     (unsigned long long)T.seed, T.who, T.step, T.desc, sig, si->si_addr);
	if (a >= lo && a < lo + T.np * TPG) {
		const struct tpage *g = &T.pg[(a - lo) / TPG];

		n += snprintf(buf + n, sizeof(buf) - n,
			      " (page %lu; model: %s prot %d flags 0x%x)",
			      (a - lo) / TPG, g->mapped ? "mapped" : "hole",
			      g->prot, g->flags);
	}
	n += snprintf(buf + n, sizeof(buf) - n,
		      "\n# reproduce: t_torture -s %llu -n %lu -w %lu%s (KSM, THP, "
		      "migration, compaction and swap are external noise)\n",
		      (unsigned long long)T.seed, T.step, T.np, T.optin ? " -o" : "");
	if (write(1, buf, n) < 0)
		_exit(98);
	_exit(4);
}

static int opt_in(void)
{
	int fd = vm_open(O_RDWR), r;

	if (fd < 0) {
		ok(0, "torture seed %llu: -o: open %s: %s (module not loaded?)",
		   (unsigned long long)T.seed, VMAMERGE_DEVICE, errname(-fd));
		return -1;
	}
	r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
	r = r ? r : vm_state(fd, VMAMERGE_TARGET_SELF, 0);
	close(fd);
	if (r < 0 || !(r & VMAMERGE_STATE_OPTED_IN)) {
		ok(0, "torture seed %llu: -o: opting in: %s",
		   (unsigned long long)T.seed, r < 0 ? errname(-r) : state_str(r));
		return -1;
	}
	return 0;
}

static int publish(const char *path)
{
	char tmp[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d %lx %lx\n", (int)getpid(), (unsigned long)T.base,
		(unsigned long)T.base + T.np * TPG);
	if (fclose(f) || rename(tmp, path))
		return -1;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: t_torture [-o] [-v] [-s SEED] [-n NOPS] [-w PAGES] "
		"[-t SECONDS] [-c N] [-p FILE] [-B STEP]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long seed = 1;
	unsigned long nops = 1000, np = 1024, tsec = 0, op;
	const char *pub = NULL;
	struct tnoise noise = { 0 };
	struct sigaction sa;
	long t0, t1;
	char grp[240];
	int c, r, k;

	while ((c = getopt(argc, argv, "ovs:n:w:t:c:p:B:")) != -1) {
		switch (c) {
		case 'B': break_step = strtoul(optarg, NULL, 0); break;
		case 'o': T.optin = 1; break;
		case 'v': T.verbose = 1; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': nops = strtoul(optarg, NULL, 0); break;
		case 'w': np = strtoul(optarg, NULL, 0); T.wsz = np; break;
		case 't': tsec = strtoul(optarg, NULL, 0); break;
		case 'c': check_every = atoi(optarg); break;
		case 'p': pub = optarg; break;
		default: usage();
		}
	}
	if (optind != argc || !np || np % THP_PAGES || check_every < 1 ||
	    (!nops && !tsec))
		usage();
	/* SIGALRM as the last resort against a hang */
	tap_init("t_torture", tsec ? tsec + 600 : 3600);
	T.seed = seed;
	snprintf(T.desc, sizeof(T.desc), "setup");
	if (T.optin && opt_in())
		return tap_exit();
	r = t_init(&T, seed, np);
	vmas = malloc(sizeof(*vmas) * (np + 1));
	two_nodes = access("/sys/devices/system/node/node1", F_OK) == 0;
	if (r || !vmas) {
		ok(0, "torture seed %llu: window of %lu pages: %s", seed, np,
		   errname(r ? -r : ENOMEM));
		return tap_exit();
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	if (pub && publish(pub)) {
		ok(0, "torture seed %llu: writing %s: %s", seed, pub, strerror(errno));
		return tap_exit();
	}
	diag("t_torture seed %llu, %lu ops%s, window %p (%lu pages)%s", seed, nops,
	     tsec ? " or time limit" : "", (void *)T.base, np,
	     T.optin ? ", opted in" : "");

	t0 = now_ms();
	while (!T.failed && (!nops || T.step < nops)) {
		do_step();
		if (!T.failed && T.step % 64 == 0)
			t_sample_noise(&T, &noise);
		if (tsec && now_ms() - t0 >= (long)tsec * 1000)
			break;
	}
	cur_op = -1;
	while (nr_linger)
		release_oldest();
	if (!T.failed) {
		snprintf(T.desc, sizeof(T.desc), "final check");
		if (!t_check_everything(&T, "at the end") &&
		    !t_check_maps(&T, "at the end"))
			t_verify(&T, "at the end");
		t_sample_noise(&T, &noise);
	}
	t1 = now_ms();

	k = 0;
	grp[0] = 0;
	{
		static const struct { char g; const char *n; } gs[] = {
			{ 'm', "mmap" }, { 'u', "munmap" }, { 'r', "mremap" },
			{ 'p', "mprotect" }, { 'a', "madvise" }, { 'l', "mlock" },
			{ 'w', "write" }, { 'f', "fork" }, { 'b', "mbind" },
			{ 'y', "uffd" }, { 'c', "check-all" },
		};
		unsigned int g;

		for (g = 0; g < sizeof(gs) / sizeof(gs[0]); g++) {
			unsigned long sum = 0;

			for (op = 0; op < OP_NR; op++)
				if (ops[op].group == gs[g].g)
					sum += nr_ops[op];
			k += snprintf(grp + k, sizeof(grp) - k, "%s%s %lu",
				      g ? ", " : "", gs[g].n, sum);
		}
	}
	diag("seed %llu: %lu ops (%s) in %.1f s, %.0f ops/s", seed, T.step, grp,
	     (t1 - t0) / 1000.0, T.step * 1000.0 / (t1 - t0 ? t1 - t0 : 1));
	{
		char buf[900];
		int n = 0;

		for (op = 0; op < OP_NR; op++)
			n += snprintf(buf + n, sizeof(buf) - n, " %s=%lu",
				      ops[op].name, nr_ops[op]);
		diag("seed %llu ops:%s; skipped (no candidate) %lu, collapse refused %lu, "
		     "pages left out of MADV_FREE (shared or KSM) %lu", seed, buf, nr_skipped,
		     nr_soft_fail, nr_free_shared);
	}
	diag("seed %llu time in the per-step checks: data %.1f s, maps %.1f s, "
	     "rmap verifier %.1f s", seed, ns_data / 1e9, ns_maps / 1e9,
	     ns_verify / 1e9);
	{
		struct vmamerge_verify v;
		int fd = vm_open(O_RDONLY);

		if (fd >= 0 && !vm_verify(fd, VMAMERGE_TARGET_SELF, 0, &v))
			diag("seed %llu rmap verifier at the end: %llu VMAs, %llu pages "
			     "(%llu via swap), %llu violations", seed,
			     (unsigned long long)v.nr_vmas, (unsigned long long)v.nr_pages,
			     (unsigned long long)v.nr_swapcache,
			     (unsigned long long)v.nr_violations);
		if (fd >= 0)
			close(fd);
	}
	diag("seed %llu noise seen in the window (max over %lu samples): "
	     "AnonHugePages %lu kB, KSM merging pages %lu, VmSwap %lu kB",
	     seed, noise.samples, noise.thp_kb_max, noise.ksm_max, noise.swap_kb_max);
	if (!T.failed)
		ok(1, "torture seed %llu%s (%lu ops)", seed,
		   T.optin ? " opted in" : "", T.step);
	return T.failed ? 1 : 0;
}
