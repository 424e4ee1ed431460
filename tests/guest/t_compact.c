// SPDX-License-Identifier: GPL-2.0
/*
 * VMAMERGE_IOC_COMPACT: an address space that fragmented
 * before the process opted in is merged by one walk.
 *
 * usage: t_compact [-s]
 *   -s  expect the stock result: features off (the walk merges nothing)
 *        t_compact hold N FILE
 *       the helper of t_compact_cli.sh: opts itself out, fragments N
 *       pages into N VMAs, writes "ready V" to FILE (V: the VMAs over
 *       them), then on each SIGUSR1 checks every page byte-exact and
 *       writes "checked V" or "bad page I"; SIGTERM ends it.  FILE is
 *       written whole (a temporary file renamed over it).
 *
 * Fragmentation is made while the process is not opted in: N one-page
 * mappings, each faulted in its own anon_vma, moved side by side (the
 * spacing pattern: N VMAs with other offsets and other anon_vmas).  Then
 * the process opts in and compacts.  Checked: the exact VMA layout of the
 * window, every page byte-exact, the rmap verifier, the out fields; the
 * walk's lock slices on a large N; a child that shares every page (all
 * refused, counted); different protections (not ours: they stay); errors;
 * a thread reading and writing every page while the walk runs; and the
 * walk racing with fork, exit and munmap in other threads.
 */
#include "tap.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#define PG		4096UL
#define PCT_PARAM	"/sys/module/vmamerge/parameters/compact_at_pct"
#define WIN_PAGES	(3 * 2000UL + 64)	/* room for fragment(0, 2000) */

static int stock;
static int vfd = -1;
static char *W;

static char *pg(unsigned long i)
{
	return W + i * PG;
}

/*
 * Pages [first, first + n) as n VMAs of one page, page i with tag 1 + i:
 * each mapped at first + n + 2i (a gap after each, so nothing merges),
 * faulted, and moved to first + i.
 */
static int fragment(unsigned long first, unsigned long n)
{
	unsigned long i;
	char *src, *dst;

	for (i = 0; i < n; i++) {
		src = pg(first + n + 2 * i);
		if (mmap(src, PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0) != src)
			return -1;
		page_fill(src, 1 + i);
	}
	for (i = 0; i < n; i++) {
		src = pg(first + n + 2 * i);
		dst = pg(first + i);
		if (mremap(src, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, dst) != dst)
			return -1;
	}
	return 0;
}

/*
 * The number of VMAs over pages [0, n) of the window (the rest of it may
 * hold a thread's stack).
 */
static long window_vmas(unsigned long n)
{
	return vmas_in(W, pg(n));
}

static int compact(pid_t pid, struct vmamerge_compact *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->target_kind = pid ? VMAMERGE_TARGET_PID : VMAMERGE_TARGET_SELF;
	c->target_id = pid;
	return vm_ioctl(vfd, VMAMERGE_IOC_COMPACT, c);
}

/* The delta of counter @name in a compaction's result, or -1. */
static long delta(const struct vmamerge_compact *c, const char *name)
{
#define VMAMERGE_NAME_(id, n) n,
	static const char *const names[] = { VMAMERGE_COUNTERS(VMAMERGE_NAME_) };
#undef VMAMERGE_NAME_
	unsigned int i;

	for (i = 0; i < c->nr_counters && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i], name))
			return (long)c->counters[i];
	return -1;
}

static void expect_pages(const char *ctx, unsigned long first, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		if (page_check(pg(first + i), 1 + i, NULL))
			break;
	if (!ok(i == n, "%s: every page byte-exact", ctx))
		diag("page %lu differs", i);
}

static int opt(uint32_t advice)
{
	return vm_advise(vfd, VMAMERGE_TARGET_SELF, 0, advice, 0);
}

/* N pages fragmented, then one compaction: one VMA (stock: N). */
static void t_merge(const char *ctx, unsigned long n)
{
	struct vmamerge_compact c;
	long before, after;
	int r;

	if (opt(VMAMERGE_ADVISE_DISABLE) || fragment(0, n)) {
		ok(0, "%s: setup", ctx);
		return;
	}
	before = window_vmas(n);
	ok(before == (long)n, "%s: %lu VMAs before", ctx, n);
	opt(VMAMERGE_ADVISE_ENABLE);
	r = compact(0, &c);
	if (!ok(!r, "%s: VMAMERGE_IOC_COMPACT", ctx)) {
		diag("%s", errname(-r));
		return;
	}
	after = window_vmas(n);
	if (!ok(after == (stock ? (long)n : 1), "%s: %ld VMA(s) after", ctx,
		stock ? (long)n : 1L))
		diag("%ld VMAs", after);
	/* one merge may take in both neighbours */
	ok(c.vmas_before - c.vmas_after == (stock ? 0 : n - 1) &&
	   (stock ? !c.merges : c.merges >= (n - 1) / 2),
	   "%s: merges %llu, VMAs %llu -> %llu", ctx,
	   (unsigned long long)c.merges, (unsigned long long)c.vmas_before,
	   (unsigned long long)c.vmas_after);
	ok(delta(&c, "pages_renumbered") == (stock ? 0 : (long)n - 1),
	   "%s: pages_renumbered +%lu", ctx, stock ? 0 : n - 1);
	ok(c.lock_slices >= 1 && c.max_hold_ns > 0,
	   "%s: %llu lock slice(s), longest hold %llu us", ctx,
	   (unsigned long long)c.lock_slices,
	   (unsigned long long)c.max_hold_ns / 1000);
	expect_pages(ctx, 0, n);
	vm_verify_self_ok(ctx);
	munmap(W, WIN_PAGES * PG);
}

/*
 * A larger N takes more than one slice of mmap_lock (2000 one-page merges
 * took about 20 slices on 6.1 under TCG; not more: the debug kernels
 * check the whole maple tree on every change, O(N) each); a slice ends
 * after the VMA that used it up, so no hold is much longer than the slice
 * (one one-page merge; 20 ms of slack for TCG, 500 ms on debug kernels).
 */
static void t_slices(void)
{
	const unsigned long n = 2000;
	struct vmamerge_compact c;
	/*
	 * One merge on a debug kernel validates the whole maple tree (and
	 * KASAN or KCSAN checks every access): 53 ms were seen on 6.1's with
	 * two vCPUs under TCG on a loaded host.
	 */
	struct utsname u;
	unsigned long long slack_ms =
		!uname(&u) && strstr(u.release, "-vmamerge-") ? 500 : 20;

	if (stock)
		return;
	if (opt(VMAMERGE_ADVISE_DISABLE) || fragment(0, n)) {
		ok(0, "slices: setup");
		return;
	}
	opt(VMAMERGE_ADVISE_ENABLE);
	if (!ok(!compact(0, &c), "slices: VMAMERGE_IOC_COMPACT"))
		return;
	ok(window_vmas(n) == 1, "slices: %lu VMAs merged into one", n);
	ok(c.lock_slices > 1, "slices: mmap_lock taken %llu times",
	   (unsigned long long)c.lock_slices);
	if (!ok(c.max_hold_ns < VMAMERGE_COMPACT_SLICE_NS + slack_ms * 1000000ULL,
		"slices: longest hold under the slice + %llu ms", slack_ms))
		diag("longest hold %llu ns", (unsigned long long)c.max_hold_ns);
	diag("slices: longest hold %llu us", (unsigned long long)c.max_hold_ns / 1000);
	expect_pages("slices", 0, n);
	vm_verify_self_ok("slices");
	munmap(W, WIN_PAGES * PG);
}

/* A child shares every page: nothing may move, every offer refused. */
static void t_shared(void)
{
	const unsigned long n = 8;
	struct vmamerge_compact c;
	int p[2], st;
	pid_t pid;
	char x;

	if (opt(VMAMERGE_ADVISE_DISABLE) || fragment(0, n) || pipe(p)) {
		ok(0, "shared: setup");
		return;
	}
	pid = fork();
	if (!pid) {
		close(p[1]);
		if (read(p[0], &x, 1) < 0)
			_exit(2);
		_exit(window_vmas(n) == (long)n ? 0 : 1);
	}
	close(p[0]);
	opt(VMAMERGE_ADVISE_ENABLE);
	if (ok(!compact(0, &c), "shared: VMAMERGE_IOC_COMPACT")) {
		ok(window_vmas(n) == (long)n && c.merges == 0,
		   "shared: %lu VMAs stay, no merge", n);
		ok(delta(&c, "refused_shared") == (stock ? 0 : (long)n - 1),
		   "shared: refused_shared +%lu", stock ? 0 : n - 1);
	}
	close(p[1]);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "shared: the child's VMAs stay");
	expect_pages("shared", 0, n);
	vm_verify_self_ok("shared");
	munmap(W, WIN_PAGES * PG);
}

/* Different protections are not ours to merge: two VMAs stay. */
static void t_protections(void)
{
	struct vmamerge_compact c;

	if (opt(VMAMERGE_ADVISE_DISABLE) || fragment(0, 4) ||
	    mprotect(pg(2), 2 * PG, PROT_READ)) {
		ok(0, "protections: setup");
		return;
	}
	opt(VMAMERGE_ADVISE_ENABLE);
	if (ok(!compact(0, &c), "protections: VMAMERGE_IOC_COMPACT"))
		ok(window_vmas(4) == (stock ? 4 : 2),
		   "protections: %d VMAs (read-write and read-only)",
		   stock ? 4 : 2);
	expect_pages("protections", 0, 4);
	vm_verify_self_ok("protections");
	munmap(W, WIN_PAGES * PG);
}

/*
 * The tests' threads run on stacks of their own in .bss: a stack glibc
 * mmap()s may land in the window's free part, and glibc keeps the stacks
 * of joined threads for reuse, so the munmap() of the whole window at the
 * end of a case would pull one from under the next pthread_create().
 */
#define THREAD_STACK	(256 * 1024)
static char thread_stacks[2][THREAD_STACK] __attribute__((aligned(4096)));

static int start_thread(pthread_t *t, int slot, void *(*fn)(void *),
			void *arg)
{
	pthread_attr_t a;
	int r;

	if (pthread_attr_init(&a))
		return -1;
	r = pthread_attr_setstack(&a, thread_stacks[slot], THREAD_STACK);
	if (!r)
		r = pthread_create(t, &a, fn, arg);
	pthread_attr_destroy(&a);
	return r;
}

/*
 * A thread stamps every page, round after round, while the walk runs;
 * afterwards the last complete round's stamps must all be there (a write
 * lost to a page the walk replaced would show).
 */
static volatile int stop_worker;
static volatile unsigned long rounds_done;

static unsigned long *stamp(unsigned long i, unsigned long round)
{
	return (unsigned long *)(pg(i) + 8 * (round % 64));
}

static void *worker(void *arg)
{
	unsigned long n = (unsigned long)arg, i, round;

	for (round = 0; !stop_worker; round++) {
		for (i = 0; i < n; i++)
			*(volatile unsigned long *)stamp(i, round) = round * n + i;
		rounds_done = round + 1;
	}
	return NULL;
}

static void t_concurrent(void)
{
	const unsigned long n = 2000;
	struct vmamerge_compact c;
	unsigned long i, last;
	pthread_t t;
	int r;

	if (opt(VMAMERGE_ADVISE_DISABLE) || fragment(0, n)) {
		ok(0, "concurrent: setup");
		return;
	}
	opt(VMAMERGE_ADVISE_ENABLE);
	stop_worker = 0;
	rounds_done = 0;
	if (start_thread(&t, 0, worker, (void *)n)) {
		ok(0, "concurrent: thread");
		return;
	}
	while (!rounds_done)
		usleep(1000);
	r = compact(0, &c);
	stop_worker = 1;
	pthread_join(t, NULL);
	ok(!r, "concurrent: VMAMERGE_IOC_COMPACT while a thread writes");
	ok(window_vmas(n) == (stock ? (long)n : 1), "concurrent: %ld VMA(s)",
	   stock ? (long)n : 1L);
	last = rounds_done - 1;
	for (i = 0; i < n; i++)
		if (*stamp(i, last) != last * n + i)
			break;
	if (!ok(i == n, "concurrent: round %lu's stamps on every page", last))
		diag("page %lu holds %lu", i, *stamp(i, last));
	vm_verify_self_ok("concurrent");
	munmap(W, WIN_PAGES * PG);
}

/*
 * The walk racing with fork, exit and munmap: while it runs, one thread
 * forks children that exit at once (each fork copies every VMA and makes
 * the pages COW-shared and the anon_vmas a family until the child is
 * gone: merges refused meanwhile) and another maps, writes and unmaps
 * scratch pages elsewhere (the maple tree changes between the walk's
 * lock slices).  Whatever merged: every page byte-exact and the verifier
 * clean; once the racers stopped, a second walk ends with one VMA.
 */
static volatile int stop_racers;

static void *forker(void *arg)
{
	unsigned long *forks = arg;
	pid_t pid;

	while (!stop_racers) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0) {
			waitpid(pid, NULL, 0);
			(*forks)++;
		}
	}
	return NULL;
}

static void *unmapper(void *arg)
{
	unsigned long *maps = arg;
	char *p;

	while (!stop_racers) {
		p = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			continue;
		memset(p, 1, 4 * PG);
		munmap(p + PG, PG);
		munmap(p, 4 * PG);
		(*maps)++;
	}
	return NULL;
}

static void t_racing(void)
{
	const unsigned long n = 1000;
	unsigned long forks = 0, maps = 0;
	struct vmamerge_compact c;
	pthread_t tf, tu;
	int r;

	if (opt(VMAMERGE_ADVISE_DISABLE) || fragment(0, n)) {
		ok(0, "racing: setup");
		return;
	}
	opt(VMAMERGE_ADVISE_ENABLE);
	stop_racers = 0;
	if (start_thread(&tf, 0, forker, &forks) ||
	    start_thread(&tu, 1, unmapper, &maps)) {
		ok(0, "racing: threads");
		return;
	}
	while (!forks || !maps)
		usleep(1000);
	r = compact(0, &c);
	stop_racers = 1;
	pthread_join(tf, NULL);
	pthread_join(tu, NULL);
	ok(!r, "racing: VMAMERGE_IOC_COMPACT while %lu forks and %lu munmaps ran (VMAs %llu -> %llu)",
	   forks, maps, (unsigned long long)c.vmas_before,
	   (unsigned long long)c.vmas_after);
	expect_pages("racing", 0, n);
	vm_verify_self_ok("racing");
	r = compact(0, &c);
	if (!ok(!r && window_vmas(n) == (stock ? (long)n : 1),
		"racing: a second walk, alone: %ld VMA(s)",
		stock ? (long)n : 1L))
		diag("%ld VMAs (%s)", window_vmas(n), r ? errname(-r) : "0");
	expect_pages("racing: after the second walk", 0, n);
	vm_verify_self_ok("racing: after the second walk");
	munmap(W, WIN_PAGES * PG);
}

/*
 * The automatic walk (module parameter compact_at_pct, default 80): with
 * vm.max_map_count at 1000, a process fragmented into 400 VMAs before it
 * opted in then maps 700 more pages, each next to the last with the
 * other protection (a failed merge attempt each, a new VMA each).  Not
 * opted in it fails with ENOMEM near the limit - the stock result; opted
 * in, the walk queued at 800 VMAs merges the 400 and it maps all 700.
 * The walk runs in a kworker while the process goes on mapping: with two
 * CPUs, 800 fragments and the trigger at 900 the process reached the
 * limit first (it did about 90 mappings while the walk merged 760), and
 * with the trigger at 800 and 400 fragments it still did once, on a host
 * whose other QEMU guests starved the vCPUs (mapping 590 of 700, 852
 * VMAs in the window: the walk had merged a third).  So the process maps
 * one page every AUTO_PACE_US, as a program doing work between its
 * allocations would, not in a tight loop; one that maps faster than the
 * walk merges can still reach the limit (docs/design.md).
 * Each run in a child: 0 all mapped, 1 ENOMEM, 2 setup.
 */
#define AUTO_FRAGMENTS	400UL
#define AUTO_NEW	700UL
/* auto_child()'s @optin: not opted in, mode always once fragmented */
#define AUTO_ALWAYS	2
#define AUTO_PACE_US	3000

static int auto_child(int optin)
{
	unsigned long i;
	int prot;
	char *p;

	if (opt(VMAMERGE_ADVISE_DISABLE) || fragment(0, AUTO_FRAGMENTS))
		return 2;
	if (optin == AUTO_ALWAYS) {
		/* fragmented while left out: now the mode takes it in */
		if (vm_set_config(vfd, VMAMERGE_CONFIG_SET_MODE,
				  VMAMERGE_MODE_ALWAYS, 0))
			return 2;
	} else if (optin && opt(VMAMERGE_ADVISE_ENABLE)) {
		return 2;
	}
	for (i = 0; i < AUTO_NEW; i++) {
		p = pg(3 * AUTO_FRAGMENTS + 1 + i);
		prot = i % 2 ? PROT_READ | PROT_WRITE : PROT_READ;
		if (mmap(p, PG, prot, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED_NOREPLACE, -1, 0) != p) {
			printf("# mapping %lu of %lu: %s (%ld VMAs here)\n", i,
			       AUTO_NEW, strerror(errno),
			       window_vmas(3 * AUTO_FRAGMENTS + 1 + i));
			return errno == ENOMEM ? 1 : 2;
		}
		if (prot & PROT_WRITE)
			*p = 1;
		usleep(AUTO_PACE_US);
	}
	for (i = 0; i < AUTO_FRAGMENTS; i++)
		if (page_check(pg(i), 1 + i, NULL))
			return 3;
	printf("# all %lu mapped, %ld VMAs over the window\n", AUTO_NEW,
	       window_vmas(3 * AUTO_FRAGMENTS + 1 + AUTO_NEW));
	return 0;
}

static int auto_run(int optin)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();

	if (!pid) {
		st = auto_child(optin);
		fflush(stdout);
		_exit(st);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * Mode always makes every process active: the walk runs by itself for one
 * that is not opted in (the child sets the mode once it is fragmented).
 */
static void auto_always(void)
{
	long n0 = stats_counter("compactions_auto");

	ok(auto_run(AUTO_ALWAYS) == 0,
	   "auto: mode always, not opted in: all %lu mapped, the fragments byte-exact",
	   AUTO_NEW);
	ok(stats_counter("compactions_auto") > n0,
	   "auto: mode always: compactions_auto moved (%ld)",
	   stats_counter("compactions_auto") - n0);
	ok(!vm_set_config(vfd, VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_OPTIN, 0),
	   "auto: mode optin again");
}

static void t_auto(void)
{
	char old[32] = "", pct[16] = "";
	long n0;

	if (read_file("/proc/sys/vm/max_map_count", old, sizeof(old)) <= 0 ||
	    read_file(PCT_PARAM, pct, sizeof(pct)) <= 0) {
		skip("no compact_at_pct or max_map_count", "auto");
		return;
	}
	ok(write_file(PCT_PARAM, "101", 3) == -EINVAL,
	   "auto: compact_at_pct refuses 101 with EINVAL");
	if (write_file("/proc/sys/vm/max_map_count", "1000", 4)) {
		ok(0, "auto: vm.max_map_count=1000");
		return;
	}
	ok(auto_run(0) == 1, "auto: not opted in: ENOMEM before %lu more mappings",
	   AUTO_NEW);
	if (!stock)
		auto_always();
	n0 = stats_counter("compactions_auto");
	if (stock) {
		ok(auto_run(1) == 1, "auto: opted in, features off: ENOMEM too");
	} else {
		ok(auto_run(1) == 0,
		   "auto: opted in: all %lu mapped, the fragments byte-exact",
		   AUTO_NEW);
		ok(stats_counter("compactions_auto") > n0,
		   "auto: compactions_auto moved (%ld)",
		   stats_counter("compactions_auto") - n0);
	}
	write_file(PCT_PARAM, "0", 1);
	ok(auto_run(1) == 1, "auto: compact_at_pct=0: ENOMEM (never by itself)");
	write_file(PCT_PARAM, pct, strlen(pct));
	write_file("/proc/sys/vm/max_map_count", old, strlen(old));
}

static void t_errors(void)
{
	struct vmamerge_compact c;

	opt(VMAMERGE_ADVISE_DISABLE);
	expect_errno(compact(0, &c), EOPNOTSUPP,
		     "errors: not opted in: EOPNOTSUPP");
	opt(VMAMERGE_ADVISE_ENABLE);
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = 1;
	expect_errno(vm_ioctl(vfd, VMAMERGE_IOC_COMPACT, &c), EINVAL,
		     "errors: flags 1: EINVAL");
	c.flags = 0;
	c.reserved[1] = 1;
	expect_errno(vm_ioctl(vfd, VMAMERGE_IOC_COMPACT, &c), EINVAL,
		     "errors: reserved: EINVAL");
	expect_errno(compact(0x3fffffff, &c), ESRCH,
		     "errors: no such process: ESRCH");
}

/* FILE := the text, whole: a temporary file renamed over it */
static void say(const char *file, const char *fmt, ...)
{
	char tmp[4096], text[128];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, file))
		fprintf(stderr, "t_compact hold: %s: %s\n", file, strerror(errno));
}

/* t_compact hold N FILE (see the top of this file) */
static int hold(unsigned long n, const char *file)
{
	unsigned long i;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	W = aligned_window(3 * n * PG);
	vfd = vm_open(O_RDWR);
	/* fragmenting needs a process that is not active meanwhile */
	if (vfd >= 0)
		opt(VMAMERGE_ADVISE_DISABLE);
	if (!W || fragment(0, n)) {
		say(file, "setup failed: %s", strerror(errno));
		return 1;
	}
	say(file, "ready %ld", window_vmas(n));
	for (;;) {
		if (sigwait(&set, &sig) || sig == SIGTERM)
			return 0;
		for (i = 0; i < n; i++)
			if (page_check(pg(i), 1 + i, NULL))
				break;
		if (i < n)
			say(file, "bad page %lu", i);
		else
			say(file, "checked %ld", window_vmas(n));
	}
}

int main(int argc, char **argv)
{
	struct vmamerge_config cfg;

	if (argc == 4 && !strcmp(argv[1], "hold"))
		return hold(strtoul(argv[2], NULL, 0), argv[3]);
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "-s"))) {
		fprintf(stderr, "usage: t_compact [-s] | t_compact hold N FILE\n");
		return 2;
	}
	stock = argc == 2;
	tap_init("t_compact", 600);
	vfd = vm_open(O_RDWR);
	if (vfd < 0) {
		skip("no /dev/vmamerge", "t_compact");
		return tap_exit();
	}
	/* fragmenting needs a process that is not active meanwhile */
	if (vm_get_config(vfd, &cfg) || cfg.mode != VMAMERGE_MODE_OPTIN) {
		skip("mode is not optin", "t_compact");
		return tap_exit();
	}
	W = aligned_window(WIN_PAGES * PG);
	if (!ok(W != NULL, "window"))
		return tap_exit();
	t_errors();
	t_merge("merge 2", 2);
	t_merge("merge 64", 64);
	t_shared();
	t_protections();
	t_concurrent();
	t_racing();
	t_slices();
	t_auto();
	opt(VMAMERGE_ADVISE_DISABLE);
	return tap_exit();
}
