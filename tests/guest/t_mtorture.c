// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-threaded concurrency torture (the SMP set of docs/testing.md): one
 * mover thread rearranges the VMAs of a buffer while reader threads fault,
 * write and verify its pages byte-exact, a helper process reads them with
 * process_vm_readv() and fork children check their copy-on-write copies.
 *
 * usage: t_mtorture [-o] [-s SEED] [-t SECONDS] [-n OPS] [-j READERS]
 *   -o  opt this process in through /dev/vmamerge (fails if absent); the
 *       VMA layouts are then those of the module (merges after moves,
 *       unless the module counted a refusal), else the stock kernel's
 *   -t  stop after SECONDS (default 20); -n  stop after OPS mover steps
 *       (default 0: no limit)
 *   -j  reader threads, 1..4 (default 3)
 *   -B  self-test: after mover step B, flip a byte of page 0 behind its
 *       owner's back; the run must report a data error and fail
 *
 * The buffer: 1040 logical pages in a 2 MiB aligned 8 MiB window (the
 * torture.h window, PROT_NONE around the buffer): "home" (logical pages
 * 0..1023 at window pages 0..1023, one mmap) and the "anchor" (logical
 * 1024..1039 at window pages 1536..1551, its own mmap, so its own
 * anon_vma).  Word i of logical page p with generation g holds
 * pat(p, g, i); g == 0 is a zero page; g with GEN_KSM reads the same on
 * every page (KSM merges those).
 *
 * Ownership: page p belongs to reader p % (R + 1) when that is < R, else
 * to the mover.  Only the owner changes a page (readers write new
 * generations, the mover zaps, rewrites and UFFDIO_MOVEs its own); anyone
 * verifies any page.
 *
 * Addressing while the mover moves pages: ctl->addr[p] is where page p is,
 * ctl->mseq a sequence count that is odd while the mover changes mappings
 * (mremap, re-reserving PROT_NONE).  A reader loads mseq, addr[p], the
 * page's own sequence count pseq[p] (odd while its owner writes it) and
 * gen[p], reads the page with SIGSEGV caught (sigsetjmp), then loads both
 * counts again: only a read during which neither count changed is judged
 * - a mismatch or a SIGSEGV there is an error; the others count as raced.
 * Content is never wrong during a move (mremap moves whole PTEs), but a
 * stale address may already hold another page after a later move.
 * Writers must never write through such a stale address: a writer
 * publishes the mseq it started in (wslot), and the mover, after each
 * change of mappings, waits until no writer still runs in an older one -
 * so a write overlaps at most one mremap, whose destination was a hole or
 * a PROT_NONE reservation and never another page.
 *
 * Mover steps (each followed by the rmap verifier and a check of the
 * window's VMAs against the model): a round of moves - two pieces of one
 * home VMA to the anchor's end, one after the other (the module renumbers
 * and transplants: anchor+pieces become one VMA; the stock kernel keeps
 * three), then back into their holes (one VMA again) -, mprotect split and
 * merge (PROT_EXEC on and off inside one VMA), MADV_DONTNEED of own pages,
 * rewrites of own pages (some KSM-identical), MADV_PAGEOUT, MADV_COLLAPSE,
 * move_pages() to the other NUMA node, fork (the child checks its copy,
 * stays while the parent goes on, checks again), vmsplice() of own pages
 * into a pipe held across later steps and read back, UFFDIO_MOVE of own
 * pages out of the buffer (6.8+).  The module's refusals (pinned, shared,
 * KSM, THP pieces ...) keep the stock layout; a missing merge is an error
 * only when the process's refused_* counters did not move.
 *
 * Output: TAP ("ok - ...", "not ok - ...", "# ..." with the counts);
 * exit status 0 when every check passed.
 */
#include "torture.h"
#include "tap.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>

#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE		(1 << 1)
#endif
/* UFFDIO_MOVE (6.8+); bookworm's uapi headers predate it */
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE	(1 << 16)
struct uffdio_move {
	__u64 dst;
	__u64 src;
	__u64 len;
	__u64 mode;
	__s64 move;
};
#define UFFDIO_MOVE		_IOWR(UFFDIO, 0x05, struct uffdio_move)
#endif

#define WIN		2048UL		/* window pages (8 MiB) */
#define HOME		1024UL		/* home: window pages [0, HOME) */
#define ANCHOR		1536UL		/* anchor: window pages [ANCHOR, LAND) */
#define NANCHOR		16UL
#define LAND		(ANCHOR + NANCHOR)	/* pieces land from here */
#define NPL		(HOME + NANCHOR)	/* logical pages */
#define MAXPIECE	48UL
#define MAXR		4
#define GEN_KSM		0x800000u	/* content independent of the page */
#define GEN_MASK	0xffffffu
#define NPIN		8
#define NUFFD		16

/* state shared with the helper process (MAP_SHARED) */
struct ctl {
	_Atomic unsigned int mseq;	/* odd: mappings changing */
	_Atomic int stop;
	_Atomic int ready;		/* the buffer exists */
	_Atomic int freeze;		/* writers pause (fork) */
	_Atomic unsigned int wslot[MAXR];	/* mseq a writer started in */
	_Atomic unsigned long addr[NPL];
	_Atomic unsigned int pseq[NPL];	/* odd: the owner changes the page */
	_Atomic unsigned int gen[NPL];
	/* process_vm_readv helper's results */
	_Atomic unsigned long pvm_ok, pvm_raced, pvm_err, pvm_eperm;
	char pvm_msg[256];
};

static struct ctl *C;
static struct torture T;	/* the window; T.rng is the mover's */
static int nr_readers = 3, optin, vfd = -1;
static unsigned long break_step;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long data_errors;

/* ---- patterns ---- */

static inline uint64_t pat(unsigned long p, unsigned int g, unsigned long i)
{
	if (!g)
		return 0;
	if (g & GEN_KSM)
		p = 0xfffff;
	return (uint64_t)p << 44 | (uint64_t)(g & GEN_MASK) << 20 |
	       (uint64_t)i << 8 | 0xa5;
}

static void fill(void *addr, unsigned long p, unsigned int g)
{
	uint64_t *w = addr;
	unsigned long i;

	for (i = 0; i < TPG / 8; i++)
		w[i] = pat(p, g, i);
}

/* Index of the first word that differs, or -1. */
__attribute__((noinline))
static long differs(const void *addr, unsigned long p, unsigned int g)
{
	const volatile uint64_t *w = addr;
	unsigned long i;

	for (i = 0; i < TPG / 8; i++)
		if (w[i] != pat(p, g, i))
			return i;
	return -1;
}

static int owner(unsigned long p)
{
	return p % (nr_readers + 1);	/* nr_readers: the mover */
}

static char *wpage(unsigned long w)
{
	return T.base + w * TPG;
}

/* ---- faults caught per thread ---- */

static __thread sigjmp_buf *fault_jb;
static __thread volatile int in_access;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	char buf[200];
	int n;

	(void)uc;
	if (in_access)
		siglongjmp(*fault_jb, 1);
	n = snprintf(buf, sizeof(buf),
		     "not ok - mtorture: signal %d at %p outside a checked access (step %lu: %s)\n",
		     sig, si->si_addr, T.step, T.desc);
	if (write(1, buf, n) < 0)
		_exit(98);
	_exit(4);
}

/*
 * One access of page p at addr: the first differing word (or -1) into
 * *bad, or fills it with generation g when write is set.  Returns 1 when
 * it faulted.
 */
static int access_page(char *addr, unsigned long p, unsigned int g, int write,
		       long *bad)
{
	sigjmp_buf jb;

	fault_jb = &jb;
	if (sigsetjmp(jb, 0)) {
		in_access = 0;
		return 1;
	}
	in_access = 1;
	if (write)
		fill(addr, p, g);
	else
		*bad = differs(addr, p, g);
	in_access = 0;
	return 0;
}

static void report_mismatch(const char *who, unsigned long p, const char *addr,
			    unsigned int g, long i, const uint64_t *got)
{
	uint64_t x = got[i];

	pthread_mutex_lock(&out_lock);
	if (atomic_fetch_add(&data_errors, 1) < 5) {
		ok(0, "mtorture: %s: page %lu at %p (gen %#x) word %ld: want %#llx got %#llx (step %lu: %s)",
		   who, p, (void *)addr, g, i, (unsigned long long)pat(p, g, i),
		   (unsigned long long)x, T.step, T.desc);
		diag("the word decodes as page %llu gen %#llx word %llu%s",
		     (unsigned long long)(x >> 44),
		     (unsigned long long)((x >> 20) & GEN_MASK),
		     (unsigned long long)((x >> 8) & 0xfff),
		     x ? "" : " (zero)");
	}
	pthread_mutex_unlock(&out_lock);
}

/*
 * Verifies page p under the sequence counts (see the top).  Returns 0
 * when it matched, 1 when the read raced with the mover or the owner,
 * -1 on an error (reported).
 */
static int check_page(unsigned long p, const char *who, unsigned long *in_move)
{
	unsigned int m1, m2, s1, s2, g;
	char *addr;
	long bad = -1;
	int faulted;

	m1 = atomic_load(&C->mseq);
	s1 = atomic_load(&C->pseq[p]);
	if (s1 & 1)
		return 1;
	g = atomic_load(&C->gen[p]);
	addr = (char *)atomic_load(&C->addr[p]);
	faulted = access_page(addr, p, g, 0, &bad);
	m2 = atomic_load(&C->mseq);
	s2 = atomic_load(&C->pseq[p]);
	if (s1 != s2 || m1 != m2 || (m1 & 1)) {
		if (!faulted && bad < 0 && in_move && (m1 & 1))
			(*in_move)++;
		return 1;
	}
	if (faulted) {
		pthread_mutex_lock(&out_lock);
		if (atomic_fetch_add(&data_errors, 1) < 5)
			ok(0, "mtorture: %s: SIGSEGV/SIGBUS reading page %lu at %p with no move in progress (step %lu: %s)",
			   who, p, (void *)addr, T.step, T.desc);
		pthread_mutex_unlock(&out_lock);
		return -1;
	}
	if (bad >= 0) {
		report_mismatch(who, p, addr, g, bad, (const uint64_t *)addr);
		return -1;
	}
	return 0;
}

/* ---- readers ---- */

struct reader {
	pthread_t th;
	int id;
	struct torture rng;
	unsigned long verified, raced, in_move, writes, write_faults, froze;
};

static struct reader readers[MAXR];

/* Owner r writes generation g+1 to page p (see the top for wslot). */
static void write_page(struct reader *r, unsigned long p)
{
	unsigned int s = atomic_load(&C->pseq[p]);
	unsigned int g = (atomic_load(&C->gen[p]) + 1) & GEN_MASK;
	long dummy;

	if (!g)
		g = 1;
	atomic_store(&C->pseq[p], s + 1);
	for (;;) {
		unsigned int m = atomic_load(&C->mseq);
		char *addr;

		if (atomic_load(&C->stop))
			break;	/* leaves the page odd: nobody judges it */
		if (m & 1) {
			sched_yield();
			continue;
		}
		atomic_store(&C->wslot[r->id], m);
		if (atomic_load(&C->freeze)) {
			atomic_store(&C->wslot[r->id], 0);
			r->froze++;
			while (atomic_load(&C->freeze) && !atomic_load(&C->stop))
				sched_yield();
			continue;
		}
		addr = (char *)atomic_load(&C->addr[p]);
		if (!access_page(addr, p, g, 1, &dummy)) {
			atomic_store(&C->wslot[r->id], 0);
			atomic_store(&C->gen[p], g);
			atomic_store(&C->pseq[p], s + 2);
			r->writes++;
			return;
		}
		atomic_store(&C->wslot[r->id], 0);
		r->write_faults++;
		if (m == atomic_load(&C->mseq)) {
			pthread_mutex_lock(&out_lock);
			if (atomic_fetch_add(&data_errors, 1) < 5)
				ok(0, "mtorture: reader %d: SIGSEGV writing page %lu at %p with no move in progress",
				   r->id, p, (void *)addr);
			pthread_mutex_unlock(&out_lock);
			return;
		}
	}
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char who[32];

	snprintf(who, sizeof(who), "reader %d", r->id);
	while (!atomic_load(&C->stop)) {
		unsigned long p = t_rnd(&r->rng, NPL);
		int k;

		/* on one vCPU, let the mover in now and then */
		if ((r->verified + r->raced + r->writes) % 32 == 31)
			sched_yield();
		if (owner(p) == r->id && t_rnd(&r->rng, 4) == 0) {
			write_page(r, p);
			continue;
		}
		k = check_page(p, who, &r->in_move);
		if (k == 0)
			r->verified++;
		else if (k == 1)
			r->raced++;
	}
	return NULL;
}

/* ---- the process_vm_readv helper (a child process) ---- */

static void pvm_helper(pid_t parent, uint64_t seed)
{
	static uint64_t buf[TPG / 8];
	struct torture rng = { .rng = seed | 1 };

	while (!atomic_load(&C->ready) && !atomic_load(&C->stop))
		usleep(1000);
	while (!atomic_load(&C->stop)) {
		unsigned long p = t_rnd(&rng, NPL);
		unsigned int m1, m2, s1, s2, g;
		struct iovec l = { buf, TPG }, rm;
		ssize_t n;
		long i;

		m1 = atomic_load(&C->mseq);
		s1 = atomic_load(&C->pseq[p]);
		g = atomic_load(&C->gen[p]);
		rm.iov_base = (void *)atomic_load(&C->addr[p]);
		rm.iov_len = TPG;
		if ((m1 | s1) & 1) {
			sched_yield();
			continue;
		}
		n = process_vm_readv(parent, &l, 1, &rm, 1, 0);
		if (n < 0 && (errno == EPERM || errno == ENOSYS)) {
			/* ENOSYS: built without CROSS_MEMORY_ATTACH (the
			 * debug twins) */
			atomic_store(&C->pvm_eperm, errno);
			break;
		}
		if (n < 0 && errno == ESRCH)
			break;
		m2 = atomic_load(&C->mseq);
		s2 = atomic_load(&C->pseq[p]);
		if (m1 != m2 || s1 != s2) {
			atomic_fetch_add(&C->pvm_raced, 1);
			continue;
		}
		i = n == (ssize_t)TPG ? differs(buf, p, g) : 0;
		if (n == (ssize_t)TPG && i < 0) {
			atomic_fetch_add(&C->pvm_ok, 1);
			continue;
		}
		if (atomic_fetch_add(&C->pvm_err, 1))
			continue;
		if (n == (ssize_t)TPG)
			snprintf(C->pvm_msg, sizeof(C->pvm_msg),
				 "page %lu at %p gen %#x word %ld: want %#llx got %#llx",
				 p, rm.iov_base, g, i, (unsigned long long)pat(p, g, i),
				 (unsigned long long)buf[i]);
		else
			snprintf(C->pvm_msg, sizeof(C->pvm_msg),
				 "page %lu at %p gen %#x: process_vm_readv returned %ld (%s)",
				 p, rm.iov_base, g, (long)n, strerror(errno));
	}
	_exit(0);
}

/* ---- the mover's model of the window's VMAs ---- */

enum { B_NONE, B_MUST, B_STOCK_SPLIT, B_MODULE_MAY };

/*
 * bk[w]: what the model expects between window pages w-1 and w when both
 * are mapped: no VMA boundary (B_NONE), always one (B_MUST), one in the
 * stock kernel but a merge by the module (B_STOCK_SPLIT), a merge in both
 * (B_MODULE_MAY: the module merges only after renumbering/transplanting).
 * For the last two the module may keep the boundary when its refused_*
 * counters moved since bref[w] (taken at the start of the round of moves
 * that made it: a piece refused earlier in the round keeps the next one
 * from merging with it), or when the VMA on either side has a page offset
 * that is not linear (VMAMERGE_IOC_VMAS: a VMA whose renumbering was
 * refused before keeps its pgoff, and no later move of a neighbour makes
 * it mergeable).  Two linear neighbours left apart without a refusal are
 * an error: the stock merge or a transplant should have joined them.
 */
static uint8_t mapped[WIN], bk[WIN], bseen[WIN], nonlinear[WIN];
static uint64_t bref[WIN], round_ref;
static unsigned long nr_nonlinear_kept;
static unsigned long merges_seen, merges_refused, layout_checks;
static struct tvma vmas[WIN + 1];

static uint64_t refusals(void)
{
	struct vmamerge_query q;
	uint64_t sum = 0;
	int i;

	if (vfd < 0 || vm_query(vfd, VMAMERGE_TARGET_SELF, 0, 0, &q))
		return 0;
	for (i = VMAMERGE_C_REFUSED_SHARED; i <= VMAMERGE_C_REFUSED_SWAP; i++)
		sum += q.counters[i];
	return sum + q.counters[VMAMERGE_C_REFUSED_NOMEM] +
	       q.counters[VMAMERGE_C_REFUSED_UNSTABLE] +
	       q.counters[VMAMERGE_C_REFUSED_FAMILY];
}

static void mfail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mfail(const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&out_lock);
	ok(0, "mtorture seed %llu step %lu (%s): %s",
	   (unsigned long long)T.seed, T.step, T.desc, msg);
	T.failed++;
	pthread_mutex_unlock(&out_lock);
}

/* The window's mapped (not PROT_NONE) VMAs; count or -1 (reported). */
static int read_layout(void)
{
	int n = t_read_vmas(&T, vmas, WIN + 1), i, k = 0;

	if (n < 0) {
		mfail("cannot read /proc/self/maps");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (vmas[i].prot)
			vmas[k++] = vmas[i];
	return k;
}

static void dump_layout(int n)
{
	char buf[900];
	int i, k = 0;

	for (i = 0; i < n && k < (int)sizeof(buf) - 40; i++)
		k += snprintf(buf + k, sizeof(buf) - k, " %lu-%lu%s%s",
			      vmas[i].s, vmas[i].e,
			      vmas[i].prot & PROT_EXEC ? "x" : "",
			      nonlinear[vmas[i].s] ? "~" : "");
	diag("window VMAs (pages; x: PROT_EXEC, ~: pgoff not linear):%s", buf);
}

/* nonlinear[w]: the VMA at window page w has a pgoff that is not linear. */
static void read_pgoffs(void)
{
	static struct vmamerge_vma v[256];
	unsigned long w, lo = (unsigned long)T.base;
	int i, n;

	memset(nonlinear, 0, sizeof(nonlinear));
	n = vm_self_vmas(vfd, lo, v, 256);
	for (i = 0; i < n && v[i].start < lo + WIN * TPG; i++)
		if (v[i].pgoff != v[i].start / TPG)
			for (w = (v[i].start - lo) / TPG;
			     w < WIN && w < (v[i].end - lo) / TPG; w++)
				nonlinear[w] = 1;
}

/* Checks the window's VMAs against mapped[]/bk[]; 0 or -1 (reported). */
static int check_layout(void)
{
	static uint8_t am[WIN], ab[WIN];
	uint64_t ref = refusals();
	unsigned long w, i;
	int n = read_layout(), k;

	layout_checks++;
	if (n < 0)
		return -1;
	if (optin)
		read_pgoffs();
	memset(am, 0, sizeof(am));
	memset(ab, 0, sizeof(ab));
	for (k = 0; k < n; k++) {
		for (i = vmas[k].s; i < vmas[k].e; i++)
			am[i] = 1;
		ab[vmas[k].s] = 1;
	}
	for (w = 0; w < WIN; w++) {
		if (am[w] != mapped[w]) {
			mfail("window page %lu is %s, the model says %s", w,
			      am[w] ? "mapped" : "not mapped",
			      mapped[w] ? "mapped" : "a hole or PROT_NONE");
			dump_layout(n);
			return -1;
		}
	}
	for (w = 1; w < WIN; w++) {
		const char *why = NULL;

		if (!mapped[w] || !mapped[w - 1])
			continue;
		switch (bk[w]) {
		case B_NONE:
			if (ab[w])
				why = "a VMA boundary where none belongs";
			break;
		case B_MUST:
			if (!ab[w])
				why = "no VMA boundary where one must be";
			break;
		case B_STOCK_SPLIT:
		case B_MODULE_MAY:
			if (!optin) {
				if (ab[w] != (bk[w] == B_STOCK_SPLIT))
					why = ab[w] ? "a boundary the stock kernel merges" :
						      "a merge the stock kernel does not make";
				break;
			}
			if (!ab[w]) {
				merges_seen++;
				bk[w] = B_NONE;
				break;
			}
			if (ref == bref[w] && !nonlinear[w - 1] && !nonlinear[w]) {
				why = "no merge of linear neighbours, and the module counted no refusal";
				break;
			}
			if (!bseen[w]) {
				merges_refused += ref != bref[w];
				nr_nonlinear_kept += ref == bref[w];
			}
			bseen[w] = 1;
			break;
		}
		if (why) {
			mfail("window page %lu: %s (model kind %d)", w, why, bk[w]);
			dump_layout(n);
			return -1;
		}
	}
	return 0;
}

static void set_bound(unsigned long w, int kind)
{
	if (w >= WIN)
		return;
	bk[w] = kind;
	bref[w] = round_ref;
	bseen[w] = 0;
}

static pid_t fork_pid;			/* the fork child, op_fork() */
static unsigned long fork_step;

/* The last steps, for the diagnosis of a verifier failure. */
#define HIST 48
static char hist[HIST][sizeof(T.desc)];

/* /proc/self/pagemap's entry for @addr, 0 if unreadable */
static uint64_t pagemap_of(unsigned long addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &e, sizeof(e), (addr / TPG) * sizeof(e)) != sizeof(e))
			e = 0;
		close(fd);
	}
	return e;
}

/*
 * What the verifier saw, for an index violation: both addresses involved
 * (the page's and the one its index names, in the VMA's numbering), as
 * pagemap entries (bit 63 present, 62 swapped, 61 file/shared-anon, 56
 * exclusively mapped; swap type/offset or PFN below), the fork child,
 * KSM, and the last steps.
 */
static void verify_diag(void)
{
	unsigned long a, b, k;
	struct vmamerge_verify v;
	char buf[64];
	int fd = vm_open(O_RDONLY);

	if (fd < 0 || vm_verify(fd, VMAMERGE_TARGET_SELF, 0, &v) ||
	    !v.nr_violations) {
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	a = v.addr;
	b = v.vma_start + (v.found - v.vma_pgoff) * TPG;
	diag("diag: %s at %#lx: pagemap %#llx; index names %#lx: pagemap %#llx",
	     vm_violation_name(v.kind), a, (unsigned long long)pagemap_of(a), b,
	     (unsigned long long)pagemap_of(b));
	if (read_file("/proc/self/ksm_merging_pages", buf, sizeof(buf)) > 0)
		diag("diag: ksm_merging_pages %s", buf);
	diag("diag: fork child %d (forked at step %lu)", (int)fork_pid, fork_step);
	for (k = T.step > HIST ? T.step - HIST + 1 : 1; k <= T.step; k++)
		diag("diag: step %lu: %s", k, hist[k % HIST]);
}

static int verify(const char *ctx)
{
	char buf[300];
	int r;

	snprintf(buf, sizeof(buf), "mtorture seed %llu step %lu (%s) %s",
		 (unsigned long long)T.seed, T.step, T.desc, ctx);
	pthread_mutex_lock(&out_lock);
	r = vm_verify_self_ok(buf);
	if (!r)
		verify_diag();
	pthread_mutex_unlock(&out_lock);
	if (!r)
		T.failed++;
	return r ? 0 : -1;
}

/* ---- the mover ---- */

enum {
	OP_MOVE, OP_MPROTECT, OP_DONTNEED, OP_REWRITE, OP_PAGEOUT, OP_COLLAPSE,
	OP_MIGRATE, OP_FORK, OP_PIN, OP_UFFD, OP_NR
};
static const char *const op_names[OP_NR] = {
	"mremap", "mprotect-split-merge", "dontneed", "rewrite", "pageout",
	"collapse", "move_pages", "fork", "vmsplice", "uffdio_move",
};
static unsigned long nr_ops[OP_NR], nr_fail[OP_NR];
static unsigned long pages_moved_node, ksm_writes, pin_pages, uffd_moved;
static unsigned long fork_checks, verifier_calls;
static int two_nodes, uffd = -1;
static char *uarea;
static const char *uffd_note = "";

static void desc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void desc(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(T.desc, sizeof(T.desc), fmt, ap);
	va_end(ap);
}

/* Begin/end a change of mappings (see the top). */
static void maps_begin(void)
{
	atomic_fetch_add(&C->mseq, 1);
}

static void maps_end(void)
{
	unsigned int m = atomic_fetch_add(&C->mseq, 1) + 1;
	int i;

	for (i = 0; i < nr_readers; i++) {
		unsigned int s;

		while ((s = atomic_load(&C->wslot[i])) && s != m)
			sched_yield();
	}
}

static unsigned long mover_page(void)
{
	unsigned long p = t_rnd(&T, NPL / (nr_readers + 1));

	return p * (nr_readers + 1) + nr_readers;
}

/* Moves n pages at window page from to window page to (MREMAP_FIXED). */
static int move_pages_w(unsigned long from, unsigned long n, unsigned long to,
			unsigned long lp)
{
	unsigned long i;
	void *r;

	maps_begin();
	r = mremap(wpage(from), n * TPG, n * TPG, MREMAP_MAYMOVE | MREMAP_FIXED,
		   wpage(to));
	if (r == wpage(to)) {
		for (i = 0; i < n; i++)
			atomic_store(&C->addr[lp + i], (unsigned long)wpage(to + i));
		if (to >= LAND && mmap(wpage(from), n * TPG, PROT_NONE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				       -1, 0) != wpage(from))
			mfail("re-reserving the home hole: %s", strerror(errno));
		if (from >= LAND && mmap(wpage(from), n * TPG, PROT_NONE,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
					 -1, 0) != wpage(from))
			mfail("re-reserving the landing area: %s", strerror(errno));
	}
	maps_end();
	if (r != wpage(to)) {
		mfail("mremap(%p, %lu pages -> %p): %s", (void *)wpage(from), n,
		      (void *)wpage(to), strerror(errno));
		return -1;
	}
	memset(mapped + from, 0, n);
	memset(bk + from, B_NONE, n);
	memset(mapped + to, 1, n);
	memset(bk + to, B_NONE, n);
	if (to >= LAND) {
		/* after the anchor or the first piece */
		set_bound(to, B_STOCK_SPLIT);
	} else {
		/* back into its hole: the stock kernel merges both sides
		 * (same anon_vma, pgoff unchanged); the module after
		 * renumbering and transplanting it back */
		set_bound(to, optin ? B_MODULE_MAY : B_NONE);
		set_bound(to + n, optin ? B_MODULE_MAY : B_NONE);
	}
	for (i = 0; i < n; i++) {
		while (check_page(lp + i, "mover after mremap", NULL) == 1)
			sched_yield();
	}
	return 0;
}

static struct {
	unsigned long lp, n, at;	/* logical start, pages, window page */
} piece[2];
static int round_phase;

static void op_move(void)
{
	int n, k, cand[WIN], nc = 0;

	if (round_phase == 0) {
		unsigned long s, e, len, k1, k2, a, gap;

		n = read_layout();
		if (n < 0)
			return;
		for (k = 0; k < n; k++)
			if (vmas[k].e <= HOME && vmas[k].e - vmas[k].s >= 8)
				cand[nc++] = k;
		if (!nc) {
			nr_fail[OP_MOVE]++;
			return;
		}
		k = cand[t_rnd(&T, nc)];
		s = vmas[k].s;
		e = vmas[k].e;
		len = e - s;
		k1 = 1 + t_rnd(&T, len / 3 < MAXPIECE ? len / 3 : MAXPIECE);
		k2 = 1 + t_rnd(&T, len / 3 < MAXPIECE ? len / 3 : MAXPIECE);
		a = s + t_rnd(&T, len - k1 - k2 - 1 + 1);
		gap = 1 + t_rnd(&T, e - (a + k1 + k2));
		piece[0].lp = a;
		piece[0].n = k1;
		piece[1].lp = a + k1 + gap;
		piece[1].n = k2;
		round_ref = refusals();
	}
	switch (round_phase) {
	case 0:
	case 1:
		k = round_phase;
		piece[k].at = k ? piece[0].at + piece[0].n : LAND;
		desc("move piece %d: logical pages %lu+%lu to window page %lu",
		     k, piece[k].lp, piece[k].n, piece[k].at);
		move_pages_w(piece[k].lp, piece[k].n, piece[k].at, piece[k].lp);
		break;
	default:
		/* back: the second piece first or the first, at random */
		k = round_phase == 2 ? (int)t_rnd(&T, 2) : !piece[0].at;
		if (!piece[k].at)
			k = !k;
		desc("move piece %d back: window page %lu+%lu to %lu", k,
		     piece[k].at, piece[k].n, piece[k].lp);
		move_pages_w(piece[k].at, piece[k].n, piece[k].lp, piece[k].lp);
		piece[k].at = 0;
		break;
	}
	round_phase = (round_phase + 1) % 4;
}

static void op_mprotect(void)
{
	int n = read_layout(), k, cand[WIN], nc = 0;
	unsigned long s, e;

	if (n < 0)
		return;
	for (k = 0; k < n; k++)
		if (vmas[k].e - vmas[k].s >= 3)
			cand[nc++] = k;
	if (!nc) {
		nr_fail[OP_MPROTECT]++;
		return;
	}
	k = cand[t_rnd(&T, nc)];
	s = vmas[k].s + 1 + t_rnd(&T, vmas[k].e - vmas[k].s - 2);
	e = s + 1 + t_rnd(&T, vmas[k].e - 1 - s);
	desc("mprotect window pages %lu-%lu rwx, then rw", s, e);
	if (mprotect(wpage(s), (e - s) * TPG, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		mfail("mprotect rwx: %s", strerror(errno));
		return;
	}
	set_bound(s, B_MUST);
	set_bound(e, B_MUST);
	if (check_layout() || verify("after the split"))
		return;
	if (mprotect(wpage(s), (e - s) * TPG, PROT_READ | PROT_WRITE)) {
		mfail("mprotect rw: %s", strerror(errno));
		return;
	}
	set_bound(s, B_NONE);
	set_bound(e, B_NONE);
}

static uint8_t pinned[NPL];
static unsigned int pin_gen[NPIN];
static unsigned long pin_p[NPIN], pin_step;
static int pin_n, pipefd[2] = { -1, -1 };

/* Own page p: set it to generation g by writing (or zapping for 0). */
static void mover_set(unsigned long p, unsigned int g, int zap)
{
	unsigned int s = atomic_load(&C->pseq[p]);
	char *addr = (char *)atomic_load(&C->addr[p]);

	atomic_store(&C->pseq[p], s + 1);
	if (zap) {
		if (madvise(addr, TPG, MADV_DONTNEED))
			mfail("MADV_DONTNEED page %lu at %p: %s", p, (void *)addr,
			      strerror(errno));
	} else {
		fill(addr, p, g);
	}
	atomic_store(&C->gen[p], g);
	atomic_store(&C->pseq[p], s + 2);
	if (check_page(p, "mover after its change", NULL) < 0)
		T.failed++;
}

static void op_dontneed(void)
{
	unsigned long i, n = 1 + t_rnd(&T, 8);

	desc("MADV_DONTNEED of %lu own pages", n);
	for (i = 0; i < n; i++)
		mover_set(mover_page(), 0, 1);
}

static void op_rewrite(void)
{
	unsigned long i, p, n = 1 + t_rnd(&T, 16);
	int ksm = t_rnd(&T, 2);

	desc("rewrite %lu own pages%s", n, ksm ? " with KSM-identical data" : "");
	for (i = 0; i < n; i++) {
		unsigned int g;

		p = mover_page();
		if (pinned[p])
			continue;	/* the pipe reads this very page */
		g = ksm ? GEN_KSM | (1 + t_rnd(&T, 2)) :
			  1 + t_rnd(&T, GEN_MASK - 1);
		mover_set(p, g, 0);
		ksm_writes += ksm;
	}
}

static void op_pageout(void)
{
	int n = read_layout(), k;
	unsigned long s, len;

	if (n <= 0)
		return;
	k = t_rnd(&T, n);
	s = vmas[k].s + t_rnd(&T, vmas[k].e - vmas[k].s);
	len = 1 + t_rnd(&T, vmas[k].e - s < 256 ? vmas[k].e - s : 256);
	desc("MADV_PAGEOUT window pages %lu+%lu", s, len);
	if (madvise(wpage(s), len * TPG, MADV_PAGEOUT))
		nr_fail[OP_PAGEOUT]++;
}

static void op_collapse(void)
{
	unsigned long h = t_rnd(&T, 2) * THP_PAGES;

	desc("MADV_COLLAPSE window pages %lu+512", h);
	if (madvise(wpage(h), THP_PAGES * TPG, MADV_COLLAPSE))
		nr_fail[OP_COLLAPSE]++;	/* holes, VMA edges, EAGAIN: fine */
}

static void op_migrate(void)
{
	void *pages[32];
	int status[32], nodes[32];
	unsigned long i, n = 32;

	if (!two_nodes) {
		nr_fail[OP_MIGRATE]++;
		return;
	}
	desc("move_pages of 32 pages to the other node");
	for (i = 0; i < n; i++)
		pages[i] = (void *)atomic_load(&C->addr[t_rnd(&T, NPL)]);
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		nr_fail[OP_MIGRATE]++;
		return;
	}
	for (i = 0; i < n; i++)
		nodes[i] = status[i] == 1 ? 0 : 1;
	if (syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE) < 0) {
		nr_fail[OP_MIGRATE]++;
		return;
	}
	for (i = 0; i < n; i++)
		pages_moved_node += status[i] == nodes[i];
}

/* ---- fork: the child checks its copy, stays, checks it again ---- */

static unsigned int child_gen[NPL];
static unsigned long child_addr[NPL];
static int fork_wfd = -1;

static int child_check(const char *when)
{
	unsigned long p;
	long i;

	for (p = 0; p < NPL; p++) {
		i = differs((void *)child_addr[p], p, child_gen[p]);
		if (i >= 0) {
			diag("fork child of step %lu, %s: page %lu at %p gen %#x word %ld: want %#llx got %#llx",
			     fork_step, when, p, (void *)child_addr[p], child_gen[p], i,
			     (unsigned long long)pat(p, child_gen[p], i),
			     (unsigned long long)((uint64_t *)child_addr[p])[i]);
			return -1;
		}
	}
	return 0;
}

static void child_main(int rfd, int ready)
{
	unsigned long p, k;
	char c;

	/* a snapshot: no writer ran since the fork (freeze) */
	for (p = 0; p < NPL; p++) {
		child_gen[p] = atomic_load(&C->gen[p]);
		child_addr[p] = atomic_load(&C->addr[p]);
	}
	if (write(ready, "r", 1) != 1)
		_exit(3);
	close(ready);
	if (child_check("right after the fork"))
		_exit(1);
	/* the child's own writes break COW on its side only */
	for (k = 0; k < 16; k++) {
		p = (fork_step * 31 + k * 67) % NPL;
		child_gen[p] = (child_gen[p] + 0x1000) & GEN_MASK ? : 1;
		fill((void *)child_addr[p], p, child_gen[p]);
	}
	while (read(rfd, &c, 1) < 0 && errno == EINTR)
		;
	_exit(child_check("at its end, after the parent went on") ? 2 : 0);
}

static void fork_release(void)
{
	int st;

	if (!fork_pid)
		return;
	close(fork_wfd);
	while (waitpid(fork_pid, &st, 0) < 0 && errno == EINTR)
		;
	fork_checks++;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		mfail("the fork child of step %lu failed its copy check (status %#x)",
		      fork_step, st);
	fork_pid = 0;
}

static void op_fork(void)
{
	int p[2], rd[2], i;
	pid_t pid;
	char c;

	fork_release();
	if (pipe2(p, O_CLOEXEC) || pipe2(rd, O_CLOEXEC)) {
		mfail("pipe: %s", strerror(errno));
		return;
	}
	desc("fork; the child checks its copy now and later");
	/* no writer may be in the middle of a page while fork copies */
	atomic_store(&C->freeze, 1);
	for (i = 0; i < nr_readers; i++)
		while (atomic_load(&C->wslot[i]))
			sched_yield();
	fork_step = T.step;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		close(rd[0]);
		child_main(p[0], rd[1]);
	}
	close(p[0]);
	close(rd[1]);
	if (pid > 0)
		while (read(rd[0], &c, 1) < 0 && errno == EINTR)
			;
	atomic_store(&C->freeze, 0);
	close(rd[0]);
	if (pid < 0) {
		close(p[1]);
		mfail("fork: %s", strerror(errno));
		return;
	}
	fork_pid = pid;
	fork_wfd = p[1];
}

/* ---- vmsplice: the pipe holds own pages across the next steps ---- */

static void pin_drain(void)
{
	static uint64_t buf[TPG / 8];
	int i;

	for (i = 0; i < pin_n; i++) {
		size_t got = 0;
		long w;

		while (got < TPG) {
			ssize_t r = read(pipefd[0], (char *)buf + got, TPG - got);

			if (r <= 0) {
				mfail("reading the vmsplice pipe: %s",
				      r ? strerror(errno) : "EOF");
				return;
			}
			got += r;
		}
		w = differs(buf, pin_p[i], pin_gen[i]);
		if (w >= 0)
			mfail("the pipe's copy of page %lu (gen %#x, spliced at step %lu) word %ld: want %#llx got %#llx",
			      pin_p[i], pin_gen[i], pin_step, w,
			      (unsigned long long)pat(pin_p[i], pin_gen[i], w),
			      (unsigned long long)buf[w]);
		pinned[pin_p[i]] = 0;
	}
	pin_n = 0;
}

static void op_pin(void)
{
	struct iovec iov[NPIN];
	unsigned long p;
	ssize_t r;
	int i, n;

	if (pin_n) {
		desc("read back %d pages spliced at step %lu", pin_n, pin_step);
		pin_drain();
		return;
	}
	desc("vmsplice own pages into a pipe");
	for (n = 0, i = 0; i < NPIN; i++) {
		p = mover_page();
		if (pinned[p])
			continue;
		pinned[p] = 1;
		pin_p[n] = p;
		pin_gen[n] = atomic_load(&C->gen[p]);
		iov[n].iov_base = (void *)atomic_load(&C->addr[p]);
		iov[n].iov_len = TPG;
		n++;
	}
	r = vmsplice(pipefd[1], iov, n, 0);
	if (r != (ssize_t)(n * TPG)) {
		for (i = 0; i < n; i++)
			pinned[pin_p[i]] = 0;
		mfail("vmsplice of %d pages: %zd (%s)", n, r, r < 0 ? strerror(errno) : "short");
		return;
	}
	pin_n = n;
	pin_step = T.step;
	pin_pages += n;
}

/* ---- UFFDIO_MOVE: an own page out of the buffer into uarea ---- */

static void uffd_init(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MOVE };
	struct uffdio_register reg;

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0) {
		uffd_note = "no userfaultfd";
		return;
	}
	if (ioctl(uffd, UFFDIO_API, &api) || !(api.features & UFFD_FEATURE_MOVE)) {
		uffd_note = "the kernel has no UFFD_FEATURE_MOVE (6.8+)";
		goto fail;
	}
	uarea = mmap(NULL, NUFFD * TPG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (uarea == MAP_FAILED)
		goto fail;
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)uarea;
	reg.range.len = NUFFD * TPG;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		uffd_note = "UFFDIO_REGISTER failed";
		goto fail;
	}
	return;
fail:
	close(uffd);
	uffd = -1;
}

static void op_uffd(void)
{
	unsigned long p = mover_page(), slot = t_rnd(&T, NUFFD);
	struct uffdio_move mv;
	unsigned int s, g;
	char *dst = uarea + slot * TPG;
	long w;

	/*
	 * Not while the pipe holds pages: a page of a PTE-mapped large folio
	 * of which the pipe holds another page makes 6.12's UFFDIO_MOVE loop
	 * for ever (move_pages_pte() retries split_folio(), which fails with
	 * EAGAIN on the pipe's reference, and only a fatal signal ends the
	 * loop) - a stock livelock, docs/testing.md.
	 */
	if (uffd < 0 || pin_n) {
		nr_fail[OP_UFFD]++;
		return;
	}
	desc("UFFDIO_MOVE page %lu out of the buffer", p);
	s = atomic_load(&C->pseq[p]);
	g = atomic_load(&C->gen[p]);
	atomic_store(&C->pseq[p], s + 1);
	memset(&mv, 0, sizeof(mv));
	mv.dst = (unsigned long)dst;
	mv.src = atomic_load(&C->addr[p]);
	mv.len = TPG;
	if (ioctl(uffd, UFFDIO_MOVE, &mv)) {
		/* not present (ENOENT), shared/KSM/busy (EBUSY, EAGAIN) */
		nr_fail[OP_UFFD]++;
		atomic_store(&C->pseq[p], s + 2);
		return;
	}
	w = differs(dst, p, g);
	if (w >= 0)
		mfail("UFFDIO_MOVE: page %lu gen %#x at its new place word %ld: want %#llx got %#llx",
		      p, g, w, (unsigned long long)pat(p, g, w),
		      (unsigned long long)((uint64_t *)dst)[w]);
	madvise(dst, TPG, MADV_DONTNEED);
	atomic_store(&C->gen[p], 0);	/* the buffer's page is a hole now */
	atomic_store(&C->pseq[p], s + 2);
	uffd_moved++;
}

/* ---- knobs ---- */

static struct {
	const char *path;
	char old[64];
	int set;
} knobs[2] = {
	{ "/sys/kernel/mm/ksm/run", "", 0 },
	{ "/sys/kernel/mm/transparent_hugepage/shrink_underused", "", 0 },
};

static void knob_set(int i, const char *val)
{
	if (read_file(knobs[i].path, knobs[i].old, sizeof(knobs[i].old)) < 0)
		return;
	if (!write_file(knobs[i].path, val, strlen(val)))
		knobs[i].set = 1;
}

static void knobs_restore(void)
{
	int i;

	for (i = 0; i < 2; i++)
		if (knobs[i].set)
			write_file(knobs[i].path, knobs[i].old, strlen(knobs[i].old));
}

/* ---- main ---- */

static int setup_area(unsigned long w, unsigned long n, unsigned long lp,
		      int *ksm)
{
	unsigned long i;

	if (mmap(wpage(w), n * TPG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != wpage(w))
		return -1;
	/* 4 KiB pages first (a large folio split across pieces is refused
	 * by the module), then khugepaged, MADV_COLLAPSE and mTHP faults
	 * may build large folios */
	madvise(wpage(w), n * TPG, MADV_NOHUGEPAGE);
	for (i = 0; i < n; i++) {
		atomic_store(&C->addr[lp + i], (unsigned long)wpage(w + i));
		atomic_store(&C->gen[lp + i], 1);
		fill(wpage(w + i), lp + i, 1);
	}
	madvise(wpage(w), n * TPG, MADV_HUGEPAGE);
	*ksm = !madvise(wpage(w), n * TPG, MADV_MERGEABLE);
	memset(mapped + w, 1, n);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: t_mtorture [-o] [-s SEED] [-t SECONDS] [-n OPS] [-j READERS] [-B STEP]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long seed = 1;
	unsigned long tsec = 20, nops = 0, p, tot[8] = { 0 };
	uint64_t ref0 = 0;
	struct vmamerge_query q0, q1;
	struct tnoise noise = { 0 };
	struct sigaction sa;
	struct utsname u;
	pid_t helper;
	int c, i, ksm = 0, ksm2 = 0, have_q = 0;
	long t0 = now_ms(), t1 = t0, tstart = t0;
	char buf[900];

	while ((c = getopt(argc, argv, "os:t:n:j:B:")) != -1) {
		switch (c) {
		case 'B': break_step = strtoul(optarg, NULL, 0); break;
		case 'o': optin = 1; break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': tsec = strtoul(optarg, NULL, 0); break;
		case 'n': nops = strtoul(optarg, NULL, 0); break;
		case 'j': nr_readers = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind != argc || nr_readers < 1 || nr_readers > MAXR || (!tsec && !nops))
		usage();
	tap_init("t_mtorture", tsec ? tsec + 300 : 3600);
	T.seed = seed;
	desc("setup");
	if (optin) {
		vfd = vm_open(O_RDWR);
		i = vfd < 0 ? vfd : vm_advise(vfd, VMAMERGE_TARGET_SELF, 0,
					      VMAMERGE_ADVISE_ENABLE, 0);
		if (i < 0) {
			ok(0, "mtorture: -o: opting in through %s: %s",
			   VMAMERGE_DEVICE, errname(-i));
			return tap_exit();
		}
		have_q = !vm_query(vfd, VMAMERGE_TARGET_SELF, 0, 0, &q0);
	}
	C = mmap(NULL, sizeof(*C), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (C == MAP_FAILED || t_init(&T, seed, WIN) || pipe2(pipefd, O_CLOEXEC)) {
		ok(0, "mtorture: setup: %s", strerror(errno));
		return tap_exit();
	}
	atomic_store(&C->mseq, 2);
	/*
	 * The helper before the buffer exists: a child that held a copy of
	 * it would make every page COW-shared and the buffer's anon_vma a
	 * forked family for the whole run (refused_shared or
	 * refused_family everywhere).
	 */
	helper = fork();
	if (helper == 0)
		pvm_helper(getppid(), seed * 7919 + 1);
	knob_set(0, "1");
	if (!uname(&u) && strstr(u.release, "debug"))
		knob_set(1, "0");	/* the 6.12 requeue race: torture.sh */
	if (setup_area(0, HOME, 0, &ksm) || setup_area(ANCHOR, NANCHOR, HOME, &ksm2)) {
		ok(0, "mtorture: mapping the buffer: %s", strerror(errno));
		atomic_store(&C->stop, 1);
		knobs_restore();
		return tap_exit();
	}
	atomic_store(&C->ready, 1);
	two_nodes = access("/sys/devices/system/node/node1", F_OK) == 0;
	uffd_init();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	ref0 = refusals();
	for (i = 0; i < nr_readers; i++) {
		readers[i].id = i;
		readers[i].rng.rng = seed * 1000 + i + 1;
		readers[i].rng.rng = t_splitmix(&readers[i].rng.rng) | 1;
		if (pthread_create(&readers[i].th, NULL, reader_main, &readers[i])) {
			ok(0, "mtorture: pthread_create: %s", strerror(errno));
			atomic_store(&C->stop, 1);
			nr_readers = i;
			break;
		}
	}
	diag("t_mtorture seed %llu: %d reader threads, a helper process, %lu s%s%s; "
	     "window %p, %lu logical pages; NUMA %s, KSM %s, UFFDIO_MOVE %s%s",
	     seed, nr_readers, tsec, nops ? " or ops " : "", optin ? ", opted in" : "",
	     (void *)T.base, NPL, two_nodes ? "2 nodes" : "1 node",
	     ksm && ksm2 ? "on" : "off", uffd >= 0 ? "on" : "off: ", uffd_note);
	if (check_layout() || verify("after setup"))
		goto end;

	t0 = now_ms();
	while (!T.failed && !atomic_load(&data_errors) &&
	       (!nops || T.step < nops) && now_ms() - t0 < (long)tsec * 1000) {
		unsigned long r = t_rnd(&T, 100);
		int op;

		T.step++;
		if (r < 35)
			op = OP_MOVE;
		else if (r < 45)
			op = OP_MPROTECT;
		else if (r < 55)
			op = OP_DONTNEED;
		else if (r < 65)
			op = OP_REWRITE;
		else if (r < 72)
			op = OP_PAGEOUT;
		else if (r < 75)
			op = OP_COLLAPSE;
		else if (r < 83)
			op = OP_MIGRATE;
		else if (r < 87)
			op = OP_FORK;
		else if (r < 94)
			op = OP_PIN;
		else
			op = OP_UFFD;
		if ((op == OP_FORK && fork_pid && T.step - fork_step < 3) ||
		    (op == OP_MIGRATE && !two_nodes))
			op = OP_PAGEOUT;
		if (op == OP_UFFD && uffd < 0)
			op = OP_REWRITE;
		nr_ops[op]++;
		switch (op) {
		case OP_MOVE: op_move(); break;
		case OP_MPROTECT: op_mprotect(); break;
		case OP_DONTNEED: op_dontneed(); break;
		case OP_REWRITE: op_rewrite(); break;
		case OP_PAGEOUT: op_pageout(); break;
		case OP_COLLAPSE: op_collapse(); break;
		case OP_MIGRATE: op_migrate(); break;
		case OP_FORK: op_fork(); break;
		case OP_PIN: op_pin(); break;
		case OP_UFFD: op_uffd(); break;
		}
		memcpy(hist[T.step % HIST], T.desc, sizeof(T.desc));
		if (fork_pid && T.step - fork_step >= 4)
			fork_release();
		if (T.step == break_step)	/* -B: a corruption nobody made */
			((volatile char *)atomic_load(&C->addr[0]))[123] ^= 0x40;
		if (T.failed)
			break;
		verifier_calls++;
		if (check_layout() || verify("after the step"))
			break;
		if (T.step % 64 == 0)
			t_sample_noise(&T, &noise);
	}
	t1 = now_ms();
end:
	atomic_store(&C->stop, 1);
	for (i = 0; i < nr_readers; i++)
		pthread_join(readers[i].th, NULL);
	waitpid(helper, NULL, 0);
	fork_release();
	if (pin_n)
		pin_drain();
	/* everything still, every page once more (a write stopped by the
	 * end leaves its page odd: skipped) */
	desc("final check");
	for (p = 0; p < NPL; p++)
		if (!(atomic_load(&C->pseq[p]) & 1) &&
		    check_page(p, "final check", NULL) < 0)
			break;
	if (!T.failed && !check_layout())
		verify("at the end");
	t_sample_noise(&T, &noise);
	knobs_restore();

	for (i = 0; i < nr_readers; i++) {
		tot[0] += readers[i].verified;
		tot[1] += readers[i].raced;
		tot[2] += readers[i].in_move;
		tot[3] += readers[i].writes;
		tot[4] += readers[i].write_faults;
		tot[5] += readers[i].froze;
	}
	c = 0;
	for (i = 0; i < OP_NR; i++)
		c += snprintf(buf + c, sizeof(buf) - c, " %s=%lu", op_names[i], nr_ops[i]);
	diag("mtorture seed %llu: %lu mover steps in %.1f s (the whole run %.1f s):%s",
	     seed, T.step, (t1 - t0) / 1000.0, (now_ms() - tstart) / 1000.0, buf);
	c = 0;
	for (i = 0; i < OP_NR; i++)
		if (nr_fail[i])
			c += snprintf(buf + c, sizeof(buf) - c, " %s=%lu", op_names[i], nr_fail[i]);
	diag("mtorture: not done or refused by the kernel (no candidate, EBUSY, holes):%s",
	     c ? buf : " none");
	diag("mtorture: readers verified %lu pages (%lu of them while a move was in progress), "
	     "wrote %lu, %lu reads raced and were not judged, %lu writes faulted during a move "
	     "and were redone, %lu paused for a fork",
	     tot[0], tot[2], tot[3], tot[1], tot[4], tot[5]);
	diag("mtorture: process_vm_readv helper verified %lu pages, %lu raced",
	     atomic_load(&C->pvm_ok), atomic_load(&C->pvm_raced));
	diag("mtorture: pages to the other node %lu, KSM-identical writes %lu, pages held "
	     "in the pipe %lu, UFFDIO_MOVEd %lu, fork children %lu, layout checks %lu, "
	     "verifier calls %lu", pages_moved_node, ksm_writes, pin_pages, uffd_moved,
	     fork_checks, layout_checks, verifier_calls + 2);
	diag("mtorture: noise in the window (max): AnonHugePages %lu kB, KSM merging pages %lu, "
	     "VmSwap %lu kB", noise.thp_kb_max, noise.ksm_max, noise.swap_kb_max);
	if (optin) {
		diag("mtorture: expected merges seen %lu, kept apart by a counted refusal %lu, "
		     "next to a VMA left unrenumbered by an earlier one %lu", merges_seen,
		     merges_refused, nr_nonlinear_kept);
		if (have_q && !vm_query(vfd, VMAMERGE_TARGET_SELF, 0, 0, &q1)) {
			static const char *const names[] = {
#define N_(id, name) name,
				VMAMERGE_COUNTERS(N_)
#undef N_
			};
			c = 0;
			for (i = 0; i < VMAMERGE_NR_COUNTERS && i < (int)q1.nr_counters; i++)
				if (q1.counters[i] != q0.counters[i] && i != VMAMERGE_C_TIME_NS)
					c += snprintf(buf + c, sizeof(buf) - c, " %s+%llu", names[i],
						      (unsigned long long)(q1.counters[i] - q0.counters[i]));
			diag("mtorture: the process's counters:%s (refusals %llu)", buf,
			     (unsigned long long)(refusals() - ref0));
		}
	}

	ok(!atomic_load(&data_errors), "mtorture seed %llu: data errors 0 (readers, mover)",
	   seed);
	if (atomic_load(&C->pvm_err))
		diag("process_vm_readv: %s", C->pvm_msg);
	if (atomic_load(&C->pvm_eperm) == ENOSYS)
		skip("the kernel has no CROSS_MEMORY_ATTACH",
		     "mtorture seed %llu: process_vm_readv from another process", seed);
	else
		ok(!atomic_load(&C->pvm_err) && !atomic_load(&C->pvm_eperm),
		   "mtorture seed %llu: process_vm_readv from another process: data errors 0 (%lu pages%s)",
		   seed, atomic_load(&C->pvm_ok),
		   atomic_load(&C->pvm_eperm) ? "; EPERM: could not read" : "");
	ok(!T.failed, "mtorture seed %llu: rmap verifier, VMA layouts, fork children, pipe "
	   "and UFFDIO_MOVE checks after every one of %lu steps: failures 0", seed, T.step);
	if (optin && T.step >= 40)
		ok(merges_seen > 0, "mtorture seed %llu: the module's merges happened (%lu seen)",
		   seed, merges_seen);
	if (uffd < 0)
		skip(uffd_note, "mtorture: UFFDIO_MOVE");
	if (!two_nodes)
		skip("one NUMA node", "mtorture: move_pages between nodes");
	return tap_exit();
}
