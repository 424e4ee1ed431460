// SPDX-License-Identifier: GPL-2.0
/*
 * VMAMERGE_IOC_VERIFY, the rmap-invariant verifier, against layouts built
 * on purpose.  The stock kernel keeps the invariants, so every layout must
 * verify clean, with exact counts: each layout is measured as the
 * difference between a verification before and after building it, in a
 * process that does nothing else meanwhile.
 *
 *   t_verify              the tests (root; module loaded)
 *   t_verify bench MIB    time the verification of MIB faulted memory
 *
 * Covered: faulted anonymous memory (by self, pid, pidfd), the zero page
 * and the huge zero page (skipped, not NOT_ANON), mremap moves
 * (the stock kernel keeps the old pgoff: still consistent), fork with
 * COW-shared and COW-broken pages over three generations, MADV_PAGEOUT
 * (swap entries with and without a swap-cache folio), a PMD-mapped THP
 * and its split, KSM-merged pages, a private file mapping with COW'ed
 * pages, a concurrent churn of faults, moves, pageouts and forks while we
 * verify, a provoked INDEX violation (module parameter test_verify_skew),
 * the CLI, and bad input:
 *   not root                                 EPERM
 *   no such / exited process                 ESRCH
 *   flags or reserved != 0, size < VER0,
 *   SELF with an id, unknown kind, kthread   EINVAL
 *   size > 4096 or nonzero bytes beyond      E2BIG
 */
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif

#define PG		4096UL
#define HPAGE		(2UL << 20)
#define SKEW_PARAM	"/sys/module/vmamerge/parameters/test_verify_skew"
#define KSM		"/sys/kernel/mm/ksm/"
/* the skew test's mapping: below a static binary's text (0x400000) */
#define LOW_ADDR	0x100000UL

static int fd = -1;

/* ---- helpers ---- */

static void die(const char *what)
{
	ok(0, "%s: %s", what, strerror(errno));
	exit(tap_exit() ? tap_exit() : 1);
}

static int verify_self(struct vmamerge_verify *v)
{
	return vm_verify(fd, VMAMERGE_TARGET_SELF, 0, v);
}

static void describe(const char *who, int ret, const struct vmamerge_verify *v)
{
	if (ret) {
		diag("%s: verify failed: %s", who, errname(-ret));
		return;
	}
	diag("%s: %llu vmas, %llu pages (%llu swap cache), %llu violation(s)",
	     who, (unsigned long long)v->nr_vmas,
	     (unsigned long long)v->nr_pages,
	     (unsigned long long)v->nr_swapcache,
	     (unsigned long long)v->nr_violations);
	if (v->nr_violations)
		diag("  first %s at 0x%llx: %.*s; expected 0x%llx found 0x%llx",
		     vm_violation_name(v->kind), (unsigned long long)v->addr,
		     (int)sizeof(v->msg), v->msg,
		     (unsigned long long)v->expected,
		     (unsigned long long)v->found);
}

/*
 * ok() for one verification: it succeeded, found nothing, and (when
 * dvmas/dpages are >= 0) counted that many more VMAs/pages than @base.
 */
static int check(int ret, const struct vmamerge_verify *v,
		 const struct vmamerge_verify *base, long dvmas, long dpages,
		 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int check(int ret, const struct vmamerge_verify *v,
		 const struct vmamerge_verify *base, long dvmas, long dpages,
		 const char *fmt, ...)
{
	char desc[300];
	va_list ap;
	int good;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	good = !ret && !v->nr_violations;
	if (good && base && dvmas >= 0)
		good = v->nr_vmas == base->nr_vmas + dvmas;
	if (good && base && dpages >= 0)
		good = v->nr_pages == base->nr_pages + dpages;
	ok(good, "%s", desc);
	if (!good) {
		if (base)
			describe("before", 0, base);
		describe("after", ret, v);
		if (base && dvmas >= 0)
			diag("wanted %ld more vmas, %ld more pages", dvmas, dpages);
	}
	return good;
}

/* @n read-write pages between PROT_NONE guards: a VMA of its own. */
static char *island(size_t n)
{
	char *p = mmap(NULL, (n + 2) * PG, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	if (mprotect(p + PG, n * PG, PROT_READ | PROT_WRITE))
		die("mprotect");
	return p + PG;
}

static void island_free(char *p, size_t n)
{
	munmap(p - PG, (n + 2) * PG);
}

/* Fault @n pages with contents that differ per page (and from zero). */
static void touch(char *p, size_t n, unsigned int seed)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < PG; j += sizeof(long))
			*(long *)(p + i * PG + j) = (long)(seed + i * 7 + j + 1);
}

static int touched(const char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (*(const long *)(p + i * PG) != (long)(seed + i * 7 + 1))
			return 0;
	return 1;
}

/* Pages of [p, p + n pages) that mincore() reports resident. */
static size_t resident(char *p, size_t n)
{
	unsigned char vec[512];
	size_t i, r = 0;

	if (n > sizeof(vec) || mincore(p, n * PG, vec))
		die("mincore");
	for (i = 0; i < n; i++)
		r += vec[i] & 1;
	return r;
}

static long anon_huge_kb(unsigned long addr);

/*
 * Everything the process itself touches between two measurements is
 * faulted in before the first: a deep stack, stdio and malloc (smaps is
 * read with fopen), the TAP paths.
 */
static void warm_up(void)
{
	volatile char stack[64 * 1024];
	struct vmamerge_verify v;
	size_t i;

	for (i = 0; i < sizeof(stack); i += 256)
		stack[i] = 1;
	anon_huge_kb(0);
	ok(!verify_self(&v), "verify self");
	describe("warm-up", 0, &v);
}

/* ---- clean layouts ---- */

static void test_faulted(void)
{
	struct vmamerge_verify a, b, c;
	char *p = island(16);
	int pfd, r;

	r = verify_self(&a);
	touch(p, 16, 1);
	check(verify_self(&b), &b, &a, 1, 16,
	      "16 faulted pages: 1 more VMA, 16 more pages, no violation");
	ok(!r && b.nr_swapcache == a.nr_swapcache,
	   "nothing found through the swap cache");
	r = vm_verify(fd, VMAMERGE_TARGET_PID, getpid(), &c);
	check(r, &c, &b, 0, 0, "by pid: the same counts");
	pfd = sys_pidfd_open(getpid(), 0);
	r = pfd < 0 ? pfd : vm_verify(fd, VMAMERGE_TARGET_PIDFD, pfd, &c);
	check(r, &c, &b, 0, 0, "by pidfd: the same counts");
	if (pfd >= 0)
		close(pfd);
	island_free(p, 16);
	check(verify_self(&c), &c, &a, 0, 0, "after munmap: back to before");
}

/* Read faults map the zero page: not anonymous, not counted, no NOT_ANON. */
static void test_zero_page(void)
{
	struct vmamerge_verify a, b;
	volatile char sum = 0;
	char *p = island(16);
	int i;

	verify_self(&a);
	p[0] = 1;			/* the anon_vma */
	for (i = 1; i < 16; i++)
		sum += p[i * PG];
	check(verify_self(&b), &b, &a, 1, 1,
	      "1 page written, 15 read (the zero page): 1 VMA, 1 page, no violation");
	island_free(p, 16);
}

/* The pgoff the module reports for the VMA at @addr, or -1. */
static long long pgoff_at(unsigned long addr)
{
	return vm_vma_pgoff(fd, addr);
}

static void test_mremap(void)
{
	struct vmamerge_verify a, b, c;
	char *p = island(16), *q = island(32), *m;

	touch(p, 16, 2);
	verify_self(&a);
	m = mremap(p, 16 * PG, 16 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
		   q + 8 * PG);
	if (m == MAP_FAILED)
		die("mremap");
	check(verify_self(&b), &b, &a, 0, 0,
	      "mremap into another VMA's middle: same VMAs and pages, no violation");
	diag("moved VMA: pgoff %#llx at linear %#lx (old address's %#lx)",
	     pgoff_at((unsigned long)m), (unsigned long)m / PG,
	     (unsigned long)p / PG);
	ok(touched(m, 16, 2), "moved contents intact");
	/* half of it once more: two VMAs on one anon_vma */
	if (mremap(m + 8 * PG, 8 * PG, 8 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
		   p) == MAP_FAILED)
		die("mremap");
	check(verify_self(&c), &c, &a, 1, 0,
	      "half moved back: the VMA split in two, same pages, no violation");
	ok(touched(m, 8, 2) && touched(p, 8, 2 + 8 * 7),
	   "contents intact after the second move");
	munmap(p, 8 * PG);
	island_free(q, 32);
	island_free(p, 16);
}

/*
 * A child (COW-breaking half of the pages) and a grandchild (a quarter),
 * all blocked until @hold[1] closes; returns the child, *gchild the other.
 */
static pid_t spawn_family(char *p, const int *hold, pid_t *gchild)
{
	int rp[2], gp[2];
	pid_t child, g;
	char c;

	if (pipe(rp) || pipe(gp))
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		close(hold[1]);
		touch(p, 8, 3);		/* COW: 8 pages of its own */
		g = fork();
		if (!g) {
			touch(p, 4, 4);	/* and again, a generation down */
			if (write(gp[1], "g", 1) != 1)
				_exit(1);
			while (read(hold[0], &c, 1) > 0)
				;
			_exit(0);
		}
		if (g < 0 || read(gp[0], &c, 1) != 1 ||
		    write(rp[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		while (read(hold[0], &c, 1) > 0)
			;
		waitpid(g, NULL, 0);
		_exit(0);
	}
	close(gp[0]);
	close(gp[1]);
	close(rp[1]);
	if (read(rp[0], gchild, sizeof(*gchild)) != sizeof(*gchild))
		die("family did not start");
	close(rp[0]);
	return child;
}

static void test_fork(void)
{
	struct vmamerge_verify a, b, c, g;
	char *p = island(16);
	pid_t child, gchild;
	int hold[2], r;

	touch(p, 16, 5);
	verify_self(&a);
	if (pipe(hold))
		die("pipe");
	child = spawn_family(p, hold, &gchild);
	close(hold[0]);
	check(verify_self(&b), &b, &a, 0, -1,
	      "fork: parent still clean, same VMAs");
	r = vm_verify(fd, VMAMERGE_TARGET_PID, child, &c);
	check(r, &c, &a, 0, -1,
	      "fork: child (8 pages COW-shared, 8 copied) clean by pid, parent's VMAs");
	ok(!r && c.nr_pages >= 16, "child counts at least the 16 pages (%llu)",
	   (unsigned long long)c.nr_pages);
	r = vm_verify(fd, VMAMERGE_TARGET_PID, gchild, &g);
	check(r, &g, &a, 0, -1,
	      "fork: grandchild (a chain of three anon_vmas) clean by pid");
	ok(touched(p, 16, 5), "parent's contents unchanged by the COW children");
	close(hold[1]);
	waitpid(child, NULL, 0);
	island_free(p, 16);
	check(verify_self(&b), &b, &a, -1, -1, "parent clean after the children exited");
}

/* ---- swap ---- */

/*
 * After the parent read the swapped pages back, the child's swap PTEs
 * (the slot is shared: swap count 2, so the fault went through the swap
 * cache and the folio stays there) must be found in the swap cache.
 */
static void swap_shared(char *p, size_t n, size_t in_cache)
{
	struct vmamerge_verify c, s;
	pid_t child;
	int hold[2], r;
	char ch;

	if (pipe(hold))
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (!child) {
		close(hold[1]);
		while (read(hold[0], &ch, 1) > 0)
			;
		_exit(0);
	}
	close(hold[0]);
	ok(touched(p, n, 6), "parent reads the swapped pages back intact");
	r = vm_verify(fd, VMAMERGE_TARGET_PID, child, &c);
	check(r, &c, NULL, -1, -1,
	      "child whose swap entries the parent faulted in: clean");
	ok(!r && c.nr_swapcache == in_cache,
	   "child: its %zu swapped pages found in the swap cache (%llu)",
	   in_cache, (unsigned long long)c.nr_swapcache);
	check(verify_self(&s), &s, NULL, -1, -1, "parent after swap-in: clean");
	close(hold[1]);
	waitpid(child, NULL, 0);
}

static void test_pageout(void)
{
	struct vmamerge_verify a, b, c;
	const size_t n = 32;
	char *p = island(n);
	size_t res, out;

	touch(p, n, 6);
	verify_self(&a);
	if (madvise(p, n * PG, MADV_PAGEOUT)) {
		skip(strerror(errno), "MADV_PAGEOUT");
		island_free(p, n);
		return;
	}
	res = resident(p, n);
	out = n - res;
	check(verify_self(&b), &b, &a, 0, -1, "MADV_PAGEOUT: clean, same VMAs");
	/* resident = mapped or in the swap cache: exactly what is counted */
	ok(b.nr_pages == a.nr_pages - out,
	   "pages counted: %llu = %llu - %zu swapped out without a swap-cache folio (%llu of them via the swap cache)",
	   (unsigned long long)b.nr_pages, (unsigned long long)a.nr_pages,
	   out, (unsigned long long)(b.nr_swapcache - a.nr_swapcache));
	if (!out) {
		skip("MADV_PAGEOUT left every page resident (no swap?)",
		     "swap entries shared with a child, through the swap cache");
	} else {
		swap_shared(p, n, out + (b.nr_swapcache - a.nr_swapcache));
	}
	check(verify_self(&c), &c, &a, 0, 0, "all pages back: counts as before");
	island_free(p, n);
}

/* ---- THP ---- */

#define THP	"/sys/kernel/mm/transparent_hugepage/"
static long read_long(const char *path);

/* AnonHugePages (kB) of the VMA starting at @addr, -1 if not found. */
static long anon_huge_kb(unsigned long addr)
{
	unsigned long start, end;
	char line[256];
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* a header "start-end perms ..."; field lines never parse so */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = start == addr;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static void test_thp(void)
{
	struct vmamerge_verify a, b, c;
	volatile char sum = 0;
	char *res, *p;
	long kb, nthp, want;
	int r;

	res = mmap(NULL, 3 * HPAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (res == MAP_FAILED)
		die("mmap");
	p = (char *)(((unsigned long)res + HPAGE) & ~(HPAGE - 1));
	if (mprotect(p, 2 * HPAGE, PROT_READ | PROT_WRITE))
		die("mprotect");
	if (madvise(p, 2 * HPAGE, MADV_HUGEPAGE)) {
		skip(strerror(errno), "THP: MADV_HUGEPAGE");
		munmap(res, 3 * HPAGE);
		return;
	}
	verify_self(&a);
	p[0] = 1;
	sum += p[HPAGE];	/* the huge zero page, unless use_zero_page=0 */
	r = verify_self(&b);
	kb = anon_huge_kb((unsigned long)p);
	nthp = kb > 0 ? kb / 2048 : 0;
	want = nthp ? nthp * 512 : 1;
	diag("THP use_zero_page: %ld", read_long(THP "use_zero_page"));
	check(r, &b, &a, 1, want,
	      "4 MiB MADV_HUGEPAGE, first 2 MiB written, second read: %ld THP(s), %ld more pages, clean",
	      nthp, want);
	if (!nthp) {
		skip("no THP was allocated", "a PMD-mapped THP counts 512 pages");
		munmap(res, 3 * HPAGE);
		return;
	}
	ok(b.nr_pages - a.nr_pages == (unsigned long long)want,
	   "a PMD-mapped THP counts 512 pages");
	/* split the first PMD: its pages stay mapped, through PTEs */
	if (mprotect(p + 5 * PG, PG, PROT_READ))
		die("mprotect");
	check(verify_self(&c), &c, &b, 2, 0,
	      "THP split by mprotect of one page: 3 VMAs, same pages (PTE-mapped THP), clean");
	munmap(res, 3 * HPAGE);
}

/* ---- KSM ---- */

static long read_long(const char *path)
{
	char buf[64];

	return read_file(path, buf, sizeof(buf)) > 0 ? atol(buf) : -1;
}

static void write_long(const char *path, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld\n", v);
	write_file(path, buf, strlen(buf));
}

/* Wait up to @ms for our pages to be merged; returns how many are. */
static long ksm_wait(long want, long ms)
{
	long t0 = now_ms(), n = 0;

	while (now_ms() - t0 < ms) {
		n = read_long("/proc/self/ksm_merging_pages");
		if (n < 0)
			n = read_long(KSM "pages_sharing");
		if (n >= want)
			break;
		usleep(50 * 1000);
	}
	return n;
}

static void test_ksm(void)
{
	long run = read_long(KSM "run"), scan = read_long(KSM "pages_to_scan");
	long sleep_ms = read_long(KSM "sleep_millisecs"), merged;
	struct vmamerge_verify a, b, c;
	const size_t n = 32;
	char *p;

	if (run < 0) {
		skip("no " KSM, "KSM-merged pages");
		return;
	}
	p = island(n);
	memset(p, 0x5a, n * PG);	/* identical, not zero */
	verify_self(&a);
	if (madvise(p, n * PG, MADV_MERGEABLE)) {
		skip(strerror(errno), "KSM: MADV_MERGEABLE");
		island_free(p, n);
		return;
	}
	write_long(KSM "pages_to_scan", 1000);
	write_long(KSM "sleep_millisecs", 10);
	write_long(KSM "run", 1);
	merged = ksm_wait(n - 1, 20000);
	diag("KSM merged %ld of our pages", merged);
	if (merged <= 0) {
		skip("ksmd merged nothing within 20 s", "KSM-merged pages");
	} else {
		check(verify_self(&b), &b, &a, 0, 0,
		      "KSM-merged pages: counted, not checked, no violation");
		if (madvise(p, n * PG, MADV_UNMERGEABLE))
			die("madvise(MADV_UNMERGEABLE)");
		check(verify_self(&c), &c, &a, 0, 0,
		      "after MADV_UNMERGEABLE: fresh anonymous copies, clean");
	}
	write_long(KSM "run", run == 1 ? 1 : 0);
	write_long(KSM "pages_to_scan", scan);
	write_long(KSM "sleep_millisecs", sleep_ms);
	island_free(p, n);
}

/* ---- a KSM page swapped out, half swapped back in ---- */

#define MEMCG	"t_verify_ksm"	/* our memory cgroup (memcg_enter()) */

#define PM_SWAP		(1ULL << 62)
#define PM_SWAP_ENTRY	((1ULL << 55) - 1)	/* type and offset */

/*
 * The stock kernel's own nonlinear state: a KSM page mapped at two
 * addresses is swapped out (both PTEs name one slot, the folio loses its
 * KSM state with its last copy); reading the first address back creates
 * an ordinary folio indexed for that address, which stays in the swap
 * cache because the second PTE still names the slot.  That PTE reaches a
 * folio whose index does not fit it - legitimately: swap-in there maps a
 * copy (ksm_might_need_to_copy()).  The verifier must accept it.
 */
static void test_ksm_swapped(void)
{
	long run = read_long(KSM "run"), scan = read_long(KSM "pages_to_scan");
	long sleep_ms = read_long(KSM "sleep_millisecs"), merged;
	unsigned long long e0 = 0, e1 = 0;
	struct vmamerge_verify v;
	const size_t n = 2;
	const char *why;
	volatile char c;
	char *p = NULL;
	int i;

	if (run < 0) {
		skip("no " KSM, "KSM page swapped out");
		return;
	}
	why = memcg_enter(MEMCG);
	if (why) {
		skip(why, "KSM page swapped out");
		memcg_leave(MEMCG);
		return;
	}
	p = island(n);
	memset(p, 0x3c, n * PG);
	if (madvise(p, n * PG, MADV_MERGEABLE)) {
		skip(strerror(errno), "KSM page swapped out: MADV_MERGEABLE");
		goto out;
	}
	write_long(KSM "pages_to_scan", 1000);
	write_long(KSM "sleep_millisecs", 10);
	write_long(KSM "run", 1);
	merged = ksm_wait(n - 1, 20000);
	if (merged < (long)n - 1) {
		skip("ksmd did not merge both pages within 20 s",
		     "KSM page swapped out (%ld)", merged);
		goto out;
	}
	write_long(KSM "run", 0);	/* stop ksmd; the merged page stays */
	for (i = 0; i < 10; i++) {
		memcg_reclaim(MEMCG, "16M");
		e0 = pagemap_entry(p);
		e1 = pagemap_entry(p + PG);
		if ((e0 & PM_SWAP) && (e1 & PM_SWAP))
			break;
	}
	if (!(e0 & PM_SWAP) || !(e1 & PM_SWAP) ||
	    (e0 & PM_SWAP_ENTRY) != (e1 & PM_SWAP_ENTRY)) {
		skip("memory.reclaim did not swap the KSM page out",
		     "KSM page swapped out (pagemap %#llx %#llx)", e0, e1);
		goto out;
	}
	ok(1, "KSM page swapped out: both PTEs name one swap slot");
	c = p[0];			/* the first address reads it back */
	(void)c;
	e1 = pagemap_entry(p + PG);
	ok((e1 & PM_SWAP) != 0,
	   "KSM page swapped out: the second PTE still names the slot");
	check(verify_self(&v), &v, NULL, -1, -1,
	      "KSM page swapped out, read back at the first address: no violation (the second address's swap-in copies)");
	ok(p[PG] == 0x3c && p[2 * PG - 1] == 0x3c && p[0] == 0x3c,
	   "KSM page swapped out: both addresses read back intact");
	check(verify_self(&v), &v, NULL, -1, -1,
	      "KSM page swapped out, both read back: clean");
out:
	write_long(KSM "run", run == 1 ? 1 : 0);
	write_long(KSM "pages_to_scan", scan);
	write_long(KSM "sleep_millisecs", sleep_ms);
	island_free(p, n);
	memcg_leave(MEMCG);
}

/* ---- private file mapping ---- */

static void test_private_file(void)
{
	struct vmamerge_verify a, b, c;
	char path[64], page[PG];
	volatile char sum = 0;
	int f, i;
	char *m;

	snprintf(path, sizeof(path), "/tmp/t_verify.%d", (int)getpid());
	f = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (f < 0)
		die("open");
	for (i = 0; i < 16; i++) {
		memset(page, 'a' + i, sizeof(page));
		if (write(f, page, sizeof(page)) != (ssize_t)sizeof(page))
			die("write");
	}
	verify_self(&a);
	m = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, f, 0);
	if (m == MAP_FAILED)
		die("mmap");
	for (i = 0; i < 16; i++)
		sum += m[i * PG];
	check(verify_self(&b), &b, &a, 0, 0,
	      "private file mapping, read: page cache only, nothing to check");
	for (i = 0; i < 16; i += 2)
		m[i * PG] = 'z';
	check(verify_self(&c), &c, &a, 1, 8,
	      "8 pages COW'ed: the VMA and its 8 anonymous pages counted, page cache skipped, clean");
	ok(m[PG] == 'b' && m[0] == 'z', "contents: COW'ed and page cache pages");
	munmap(m, 16 * PG);
	close(f);
	unlink(path);
}

/* ---- a provoked violation ---- */

static int set_skew(int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d\n", v);
	return write_file(SKEW_PARAM, buf, strlen(buf));
}

/* Run the CLI with @args; its stdout into @out; returns its exit status. */
static int cli(const char *const *args, char *out, size_t len);

static void test_skew(void)
{
	const char *want = "index 0x100 != linear 0x101 at 0x100000 (vma 0x100000-0x110000 pgoff 0x100)";
	struct vmamerge_verify v, c;
	char pid[16], out[2048];
	const char *args[] = { "verify", "-p", pid, NULL };
	int r, st;
	char *p;

	p = mmap((void *)LOW_ADDR, 16 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != (char *)LOW_ADDR) {
		skip(strerror(errno), "INDEX violation provoked at %#lx", LOW_ADDR);
		return;
	}
	touch(p, 16, 7);
	r = set_skew(1);
	if (r) {
		ok(0, "set %s: %s", SKEW_PARAM, errname(-r));
		munmap(p, 16 * PG);
		return;
	}
	r = verify_self(&v);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	st = cli(args, out, sizeof(out));
	set_skew(0);
	v.msg[sizeof(v.msg) - 1] = 0;
	ok(!r && v.nr_violations >= 16 && v.kind == VMAMERGE_VIOL_INDEX &&
	   v.addr == LOW_ADDR && v.vma_start == LOW_ADDR &&
	   v.vma_end == LOW_ADDR + 16 * PG && v.vma_pgoff == LOW_ADDR / PG &&
	   v.expected == LOW_ADDR / PG + 1 && v.found == LOW_ADDR / PG,
	   "test_verify_skew=1: INDEX violation at the lowest page, exact addr/vma/expected/found");
	ok(!strcmp(v.msg, want), "violation message: '%s'", v.msg);
	if (strcmp(v.msg, want))
		diag("wanted '%s'", want);
	describe("skewed", r, &v);
	if (st == -ENOENT) {
		skip("no CLI at $VMAMERGE_CLI or /bin/vmamerge",
		     "CLI: vmamerge verify names the violation");
	} else {
		ok(st == 1 && strstr(out, "first: index at 0x100000: index 0x100 != linear 0x101"),
		   "CLI: vmamerge verify -p PID exits 1 and names the violation");
		if (st != 1)
			diag("exit status %d, output: %s", st, out);
	}
	check(verify_self(&c), &c, NULL, -1, -1, "test_verify_skew=0: clean again");
	munmap(p, 16 * PG);
}

/* ---- concurrency: verify a process that keeps changing ---- */

static void churn(void)
{
	const size_t n = 64;
	char *p = island(n), *q = island(n), *t;
	unsigned int i;
	pid_t g;

	for (i = 0;; i++) {
		touch(p, n, i);
		if (i % 4 == 1)
			madvise(p + 8 * PG, 16 * PG, MADV_PAGEOUT);
		if (i % 4 == 2)
			madvise(p, 8 * PG, MADV_DONTNEED);
		if (i % 8 == 3) {
			g = fork();
			if (!g) {
				touch(p, 4, i);
				_exit(0);
			}
			if (g > 0)
				waitpid(g, NULL, 0);
		}
		t = mremap(p, n * PG, n * PG, MREMAP_MAYMOVE | MREMAP_FIXED, q);
		if (t == MAP_FAILED)
			_exit(1);
		q = p;
		p = t;
		if (mmap(q, n * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			_exit(1);
	}
}

static void test_churn(void)
{
	struct vmamerge_verify v;
	long t0 = now_ms();
	int runs = 0, bad = 0, r = 0, st;
	pid_t child = fork();

	if (child < 0)
		die("fork");
	if (!child)
		churn();
	while (now_ms() - t0 < 3000) {
		r = vm_verify(fd, VMAMERGE_TARGET_PID, child, &v);
		if (r || v.nr_violations) {
			if (!bad++)
				describe("churning child", r, &v);
		}
		runs++;
		usleep(1000);
	}
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	ok(!bad && runs > 0, "%d verifications of a process faulting, moving, swapping and forking: all clean",
	   runs);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	   "the churning child ran until killed");
}

/* ---- the CLI ---- */

static const char *cli_path(void)
{
	const char *c = getenv("VMAMERGE_CLI");

	return c ? c : "/bin/vmamerge";
}

/* -ENOENT when there is no CLI. */
static int cli(const char *const *args, char *out, size_t len)
{
	const char *path = cli_path();
	const char *argv[8] = { path };
	int p[2], st, i;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	if (access(path, X_OK))
		return -ENOENT;
	for (i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	if (pipe(p))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	while (n + 1 < len && (r = read(p[0], out + n, len - 1 - n)) > 0)
		n += r;
	out[n] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int cli_unpriv(void *arg)
{
	const char *const *args = arg;
	char out[1024];
	int st = cli(args, out, sizeof(out));

	ok(st == 2 && strstr(out, "must be root"),
	   "CLI as uid 65534: exit 2, 'must be root'");
	if (st != 2)
		diag("exit status %d, output: %s", st, out);
	return 0;
}

static void test_cli(void)
{
	char pid[16], out[2048];
	const char *text[] = { "verify", "-p", pid, NULL };
	const char *json[] = { "verify", "-p", pid, "--json", NULL };
	const char *gone[] = { "verify", "-p", "999999", NULL };
	int st, wfd;
	pid_t s = spawn_sleeper(&wfd);

	if (access(cli_path(), X_OK)) {
		skip("no CLI at $VMAMERGE_CLI or /bin/vmamerge",
		     "CLI: vmamerge verify");
		reap_sleeper(s, wfd);
		return;
	}
	snprintf(pid, sizeof(pid), "%d", (int)s);
	st = cli(text, out, sizeof(out));
	ok(st == 0 && strstr(out, "checked: rmap invariants hold"),
	   "CLI: vmamerge verify -p PID of a clean process: exit 0, 'rmap invariants hold'");
	diag("%s", out);
	st = cli(json, out, sizeof(out));
	ok(st == 0 && strstr(out, "\"nr_violations\": 0, \"first_violation\": null}"),
	   "CLI: vmamerge verify -p PID --json");
	if (st)
		diag("exit status %d: %s", st, out);
	st = cli(gone, out, sizeof(out));
	ok(st == 2 && strstr(out, "no such process"),
	   "CLI: a missing pid: exit 2, 'no such process'");
	if (st != 2)
		diag("exit status %d: %s", st, out);
	run_unprivileged(cli_unpriv, text);
	reap_sleeper(s, wfd);
}

/* ---- bad input ---- */

static int verify_raw(struct vmamerge_verify *v)
{
	return vm_ioctl(fd, VMAMERGE_IOC_VERIFY, v);
}

static int unpriv(void *arg)
{
	struct vmamerge_verify v;
	int ufd = vm_open(O_RDWR);

	(void)arg;
	if (ufd < 0) {
		ok(0, "unprivileged open: %s", errname(-ufd));
		return 0;
	}
	expect_errno(vm_verify(ufd, VMAMERGE_TARGET_SELF, 0, &v), EPERM,
		     "verify self as uid 65534");
	expect_errno(vm_verify(ufd, VMAMERGE_TARGET_PID, 1, &v), EPERM,
		     "verify pid 1 as uid 65534");
	close(ufd);
	return 0;
}

static void test_errors(void)
{
	struct {
		struct vmamerge_verify v;
		char tail[64];
	} big;
	struct vmamerge_verify v;
	int rofd, st;
	pid_t z;

	vm_verify(fd, VMAMERGE_TARGET_SELF, 0, &v);
	v.flags = 1;
	expect_errno(verify_raw(&v), EINVAL, "flags = 1");
	vm_verify(fd, VMAMERGE_TARGET_SELF, 0, &v);
	v.reserved[0] = 1;
	expect_errno(verify_raw(&v), EINVAL, "reserved[0] = 1");
	vm_verify(fd, VMAMERGE_TARGET_SELF, 0, &v);
	v.reserved[1] = 1;
	expect_errno(verify_raw(&v), EINVAL, "reserved[1] = 1");
	memset(&v, 0, sizeof(v));
	v.size = VMAMERGE_VERIFY_SIZE_VER0 - 8;
	expect_errno(verify_raw(&v), EINVAL, "size < VER0");
	memset(&big, 0, sizeof(big));
	big.v.size = sizeof(big);
	ok(!verify_raw(&big.v) && big.v.nr_vmas > 0,
	   "larger struct with a zero tail: accepted");
	big.tail[3] = 1;
	expect_errno(verify_raw(&big.v), E2BIG, "nonzero byte beyond the struct");
	memset(&v, 0, sizeof(v));
	v.size = 4097;
	expect_errno(verify_raw(&v), E2BIG, "size 4097");
	expect_errno(vm_verify(fd, VMAMERGE_TARGET_SELF, 1, &v), EINVAL,
		     "SELF with target_id 1");
	expect_errno(vm_verify(fd, 7, 1, &v), EINVAL, "target_kind 7");
	expect_errno(vm_verify(fd, VMAMERGE_TARGET_PIDFD, 1000, &v), EBADF,
		     "pidfd that is not open");
	expect_errno(vm_verify(fd, VMAMERGE_TARGET_PID, 2, &v), EINVAL,
		     "kernel thread (pid 2)");
	z = fork();
	if (z < 0)
		die("fork");
	if (!z)
		_exit(0);
	usleep(200 * 1000);
	expect_errno(vm_verify(fd, VMAMERGE_TARGET_PID, z, &v), ESRCH,
		     "zombie");
	waitpid(z, &st, 0);
	expect_errno(vm_verify(fd, VMAMERGE_TARGET_PID, z, &v), ESRCH,
		     "reaped process");
	rofd = vm_open(O_RDONLY);
	ok(rofd >= 0 && !vm_verify(rofd, VMAMERGE_TARGET_SELF, 0, &v) &&
	   !v.nr_violations, "an O_RDONLY fd may verify");
	if (rofd >= 0)
		close(rofd);
	run_unprivileged(unpriv, NULL);
}

/* ---- bench ---- */

static int bench(long mib)
{
	struct vmamerge_verify v;
	size_t n = (size_t)mib << 8;
	long best = -1, t0, t;
	char *p;
	int i, r;

	p = mmap(NULL, n * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	madvise(p, n * PG, MADV_NOHUGEPAGE);
	for (i = 0; (size_t)i < n; i++)
		p[(size_t)i * PG] = 1;
	for (i = 0; i < 5; i++) {
		t0 = now_ms();
		r = verify_self(&v);
		t = now_ms() - t0;
		if (best < 0 || t < best)
			best = t;
		if (r || v.nr_violations)
			break;
	}
	ok(!r && !v.nr_violations && v.nr_pages >= n,
	   "bench: %ld MiB in 4 KiB pages (%llu pages, %llu vmas) verified clean, best of 5: %ld ms",
	   mib, (unsigned long long)v.nr_pages,
	   (unsigned long long)v.nr_vmas, best);
	madvise(p, n * PG, MADV_HUGEPAGE);
	return tap_exit();
}

int main(int argc, char **argv)
{
	tap_init("t_verify", 600);
	fd = vm_open(O_RDWR);
	if (fd < 0) {
		ok(0, "open %s: %s", VMAMERGE_DEVICE, errname(-fd));
		return tap_exit();
	}
	if (argc == 3 && !strcmp(argv[1], "bench"))
		return bench(atol(argv[2]));
	warm_up();
	test_faulted();
	test_zero_page();
	test_mremap();
	test_fork();
	test_pageout();
	test_thp();
	test_ksm();
	test_ksm_swapped();
	test_private_file();
	test_skew();
	test_churn();
	test_cli();
	test_errors();
	ok(vm_verify_self_ok("t_verify at the end"), "vm_verify_self_ok(): clean");
	close(fd);
	return tap_exit();
}
