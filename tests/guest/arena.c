// SPDX-License-Identifier: GPL-2.0
/*
 * Random address-space operations over a fixed arena with a shadow model.
 *
 * Every op draws its parameters from the model (never from the actual VMA
 * layout), so the sequence of syscalls depends only on the seed and on
 * which syscalls succeed.  A syscall that fails is legitimate (e.g. an
 * mremap over two VMAs, an in-place grow with no room); the model is then
 * re-synchronised from /proc/self/maps for mapped/prot (a failed mremap
 * may already have unmapped its target), contents are kept.
 */
#include "arena.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MREMAP_FIXED
#define MREMAP_FIXED		2
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif
#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

#define PG		4096UL
#define AF_DONTFORK	1
#define AF_WIPE		2

enum {
	OP_WRITE, OP_READ, OP_MMAP, OP_MUNMAP, OP_SHRINK, OP_GROW, OP_MOVE,
	OP_DONTUNMAP, OP_MPROTECT, OP_MADVISE, OP_FORK, OP_NR
};

static const char *const op_names[OP_NR] = {
	"write", "read", "mmap", "munmap", "mremap-shrink", "mremap-grow",
	"mremap-move", "mremap-dontunmap", "mprotect", "madvise", "fork",
};

const char *arena_op_name(int op)
{
	return op >= 0 && op < OP_NR ? op_names[op] : "?";
}

static const struct {
	int advice;
	const char *name;
} advices[] = {
	{ MADV_DONTNEED, "DONTNEED" },
	{ MADV_WILLNEED, "WILLNEED" },
	{ MADV_HUGEPAGE, "HUGEPAGE" },
	{ MADV_NOHUGEPAGE, "NOHUGEPAGE" },
	{ MADV_NORMAL, "NORMAL" },
	{ MADV_RANDOM, "RANDOM" },
	{ MADV_SEQUENTIAL, "SEQUENTIAL" },
	{ MADV_DONTFORK, "DONTFORK" },
	{ MADV_DOFORK, "DOFORK" },
	{ MADV_WIPEONFORK, "WIPEONFORK" },
	{ MADV_KEEPONFORK, "KEEPONFORK" },
	{ MADV_COLD, "COLD" },
	{ MADV_PAGEOUT, "PAGEOUT" },
	{ MADV_MERGEABLE, "MERGEABLE" },
	{ MADV_UNMERGEABLE, "UNMERGEABLE" },
	{ MADV_POPULATE_READ, "POPULATE_READ" },
	{ MADV_POPULATE_WRITE, "POPULATE_WRITE" },
};
#define NR_ADVICES (sizeof(advices) / sizeof(advices[0]))

static struct arena *cur;	/* for the SIGSEGV report */

/* ---- PRNG: splitmix64 seeding, xorshift64* ---- */

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static uint64_t next(struct arena *a)
{
	uint64_t x = a->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	a->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static unsigned long rnd(struct arena *a, unsigned long n)
{
	return n ? (unsigned long)(next(a) >> 11) % n : 0;
}

/* ---- page contents ---- */

static void fill(char *p, uint64_t tag)
{
	uint64_t *w = (uint64_t *)p, x = tag, m = splitmix(&x);
	unsigned int i;

	for (i = 0; i < PG / 8; i++)
		w[i] = m + i * 0x9E3779B97F4A7C15ULL;
}

/* Returns -1 if the page holds the tag's pattern, else the first bad
 * byte offset; *got receives the bad 64-bit word. */
static long check(const char *p, uint64_t tag, uint64_t *want, uint64_t *got)
{
	const uint64_t *w = (const uint64_t *)p;
	uint64_t x = tag, m = tag ? splitmix(&x) : 0;
	unsigned int i;

	for (i = 0; i < PG / 8; i++) {
		uint64_t e = tag ? m + i * 0x9E3779B97F4A7C15ULL : 0;

		if (w[i] != e) {
			*want = e;
			*got = w[i];
			return i * 8;
		}
	}
	return -1;
}

static char *page(struct arena *a, unsigned long p)
{
	return a->base + p * PG;
}

static int verify_page(struct arena *a, unsigned long p, uint64_t tag,
		       const char *who)
{
	uint64_t want, got;
	long off = check(page(a, p), tag, &want, &got);

	if (off < 0)
		return 0;
	a->errors++;
	diag("%s: DATA MISMATCH seed %llu step %lu: page %lu (+0x%lx) offset %ld: "
	     "want 0x%016llx got 0x%016llx (tag %llu)", who,
	     (unsigned long long)a->seed, a->step, p, p * PG, off,
	     (unsigned long long)want, (unsigned long long)got,
	     (unsigned long long)tag);
	return -1;
}

/* ---- reading /proc/self/maps ---- */

static char mapsbuf[4 << 20];

static int slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) != 0) {
		if (r < 0) {
			close(fd);
			return -1;
		}
		n += r;
	}
	close(fd);
	buf[n] = 0;
	return n + 1 < len ? (int)n : -1;
}

static int perms_to_prot(const char *s)
{
	return (s[0] == 'r' ? PROT_READ : 0) | (s[1] == 'w' ? PROT_WRITE : 0) |
	       (s[2] == 'x' ? PROT_EXEC : 0);
}

/* Fills mapped[]/prot[] of every arena page from /proc/self/maps. */
static int actual_state(struct arena *a, uint8_t *mapped, uint8_t *prot)
{
	unsigned long lo = (unsigned long)a->base, hi = lo + a->np * PG;
	char *line, *save;

	memset(mapped, 0, a->np);
	memset(prot, 0, a->np);
	if (slurp("/proc/self/maps", mapsbuf, sizeof(mapsbuf)) < 0) {
		diag("cannot read /proc/self/maps");
		return -1;
	}
	for (line = strtok_r(mapsbuf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long s, e, x;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) != 3)
			continue;
		if (e <= lo || s >= hi)
			continue;
		if (s < lo)
			s = lo;
		if (e > hi)
			e = hi;
		for (x = s; x < e; x += PG) {
			mapped[(x - lo) / PG] = 1;
			prot[(x - lo) / PG] = perms_to_prot(perms);
		}
	}
	return 0;
}

static void resync(struct arena *a, const char *what)
{
	uint8_t m[ARENA_PAGES], pr[ARENA_PAGES];
	unsigned long p;

	a->nr_resync++;
	if (actual_state(a, m, pr)) {
		a->errors++;
		return;
	}
	for (p = 0; p < a->np; p++) {
		if (a->mapped[p] && !m[p]) {
			a->mapped[p] = 0;
			a->tag[p] = 0;
			a->pflags[p] = 0;
		} else if (!a->mapped[p] && m[p]) {
			a->errors++;
			diag("MODEL: seed %llu step %lu (%s failed): page %lu became mapped",
			     (unsigned long long)a->seed, a->step, what, p);
			a->mapped[p] = 1;
			a->prot[p] = pr[p];
			a->tag[p] = 0;
		} else if (a->mapped[p] && a->prot[p] != pr[p]) {
			diag("note: seed %llu step %lu (%s failed): page %lu prot %d -> %d",
			     (unsigned long long)a->seed, a->step, what, p,
			     a->prot[p], pr[p]);
			a->prot[p] = pr[p];
		}
	}
}

int arena_check_model(struct arena *a)
{
	uint8_t m[ARENA_PAGES], pr[ARENA_PAGES];
	unsigned long p;
	int bad = 0;

	if (actual_state(a, m, pr)) {
		a->errors++;
		return -1;
	}
	for (p = 0; p < a->np; p++) {
		if (m[p] != a->mapped[p] || (m[p] && pr[p] != a->prot[p])) {
			if (bad++ < 5)
				diag("MODEL MISMATCH seed %llu step %lu: page %lu model %d/%d maps %d/%d",
				     (unsigned long long)a->seed, a->step, p,
				     a->mapped[p], a->prot[p], m[p], pr[p]);
		}
	}
	if (bad)
		a->errors++;
	return bad ? -1 : 0;
}

/* ---- picking ranges from the model ---- */

static unsigned long pick_len(struct arena *a)
{
	unsigned long r = rnd(a, 10);

	if (r < 7)
		return 1 + rnd(a, 8);
	if (r < 9)
		return 1 + rnd(a, 64);
	return 1 + rnd(a, a->np);
}

static void pick_any(struct arena *a, unsigned long *p, unsigned long *n)
{
	*n = pick_len(a);
	*p = rnd(a, a->np - *n + 1);
}

/* A range of mapped pages (possibly several VMAs).  -1 if none. */
static int pick_mapped(struct arena *a, unsigned long *p, unsigned long *n)
{
	unsigned long s = rnd(a, a->np), i, e, len = pick_len(a);

	for (i = 0; i < a->np; i++)
		if (a->mapped[(s + i) % a->np])
			break;
	if (i == a->np)
		return -1;
	s = (s + i) % a->np;
	for (e = s; e < a->np && a->mapped[e]; e++)
		;
	if (len > e - s)
		len = e - s;
	*p = s;
	*n = 1 + rnd(a, len);
	return 0;
}

static int pick_prot(struct arena *a)
{
	unsigned long r = rnd(a, 8);

	if (r < 4)
		return PROT_READ | PROT_WRITE;
	if (r < 6)
		return PROT_READ;
	if (r < 7)
		return PROT_NONE;
	return PROT_READ | PROT_EXEC;
}

/* Destination for a move of n pages that does not overlap [p, p+n0). */
static int pick_dst(struct arena *a, unsigned long p, unsigned long n0,
		    unsigned long n, unsigned long *q)
{
	if (n > a->np)
		return -1;
	*q = rnd(a, a->np - n + 1);
	if (*q < p + n0 && p < *q + n)
		return -1;	/* overlap: the kernel says EINVAL; skip */
	return 0;
}

static void set_unmapped(struct arena *a, unsigned long p, unsigned long n)
{
	memset(a->mapped + p, 0, n);
	memset(a->prot + p, 0, n);
	memset(a->pflags + p, 0, n);
	memset(a->tag + p, 0, n * sizeof(a->tag[0]));
}

static void failed(struct arena *a, const char *what)
{
	a->nr_failed++;
	resync(a, what);
}

/* ---- ops ---- */

static void op_write(struct arena *a)
{
	unsigned long p = rnd(a, a->np), n = 1 + rnd(a, 8), i;

	for (i = p; i < p + n && i < a->np; i++) {
		if (!a->mapped[i] || !(a->prot[i] & PROT_WRITE))
			continue;
		a->tag[i] = ((uint64_t)a->step << 8 | (i - p)) + 1;
		fill(page(a, i), a->tag[i]);
	}
}

static void op_read(struct arena *a)
{
	unsigned long p = rnd(a, a->np), i;

	for (i = 0; i < 4 && p + i < a->np; i++)
		if (a->mapped[p + i] && (a->prot[p + i] & PROT_READ))
			verify_page(a, p + i, a->tag[p + i], "read");
}

static void op_mmap(struct arena *a)
{
	unsigned long p, n;
	int prot, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
	unsigned long r;

	pick_any(a, &p, &n);
	prot = pick_prot(a);
	r = rnd(a, 10);
	if (r == 0)
		flags |= MAP_NORESERVE;
	else if (r == 1)
		flags |= MAP_POPULATE;
	if (mmap(page(a, p), n * PG, prot, flags, -1, 0) == MAP_FAILED) {
		failed(a, "mmap");
		return;
	}
	memset(a->mapped + p, 1, n);
	memset(a->prot + p, prot, n);
	memset(a->pflags + p, 0, n);
	memset(a->tag + p, 0, n * sizeof(a->tag[0]));
}

static void op_munmap(struct arena *a)
{
	unsigned long p, n;

	pick_any(a, &p, &n);
	if (munmap(page(a, p), n * PG)) {
		failed(a, "munmap");
		return;
	}
	set_unmapped(a, p, n);
}

static void op_shrink(struct arena *a)
{
	unsigned long p, n, nn;

	if (pick_mapped(a, &p, &n) || n < 2)
		return;
	nn = 1 + rnd(a, n - 1);
	if (mremap(page(a, p), n * PG, nn * PG, 0) == MAP_FAILED) {
		failed(a, "mremap-shrink");
		return;
	}
	set_unmapped(a, p + nn, n - nn);
}

static void op_grow(struct arena *a)
{
	unsigned long p, n, nn, i;

	if (pick_mapped(a, &p, &n))
		return;
	nn = n + 1 + rnd(a, 16);
	if (p + nn > a->np)
		return;
	if (mremap(page(a, p), n * PG, nn * PG, 0) == MAP_FAILED) {
		failed(a, "mremap-grow");
		return;
	}
	for (i = p + n; i < p + nn; i++) {
		a->mapped[i] = 1;
		a->prot[i] = a->prot[p + n - 1];
		a->pflags[i] = a->pflags[p + n - 1];
		a->tag[i] = 0;
	}
}

static void op_move(struct arena *a, int dontunmap)
{
	uint8_t prot[ARENA_PAGES], pfl[ARENA_PAGES];
	uint64_t tag[ARENA_PAGES];
	unsigned long p, n, nn, q, i;
	int flags = MREMAP_MAYMOVE | MREMAP_FIXED;
	unsigned long r;

	if (pick_mapped(a, &p, &n))
		return;
	r = rnd(a, 10);
	if (dontunmap || r < 6)
		nn = n;
	else if (r < 8)
		nn = 1 + rnd(a, n);
	else
		nn = n + 1 + rnd(a, 16);
	if (pick_dst(a, p, n, nn, &q))
		return;
	if (dontunmap)
		flags |= MREMAP_DONTUNMAP;
	memcpy(prot, a->prot + p, n);
	memcpy(pfl, a->pflags + p, n);
	memcpy(tag, a->tag + p, n * sizeof(tag[0]));
	if (mremap(page(a, p), n * PG, nn * PG, flags, page(a, q)) == MAP_FAILED) {
		failed(a, dontunmap ? "mremap-dontunmap" : "mremap-move");
		return;
	}
	if (dontunmap)
		memset(a->tag + p, 0, n * sizeof(a->tag[0]));	/* left empty */
	else
		set_unmapped(a, p, n);
	for (i = 0; i < nn; i++) {
		unsigned long s = i < n ? i : n - 1;

		a->mapped[q + i] = 1;
		a->prot[q + i] = prot[s];
		a->pflags[q + i] = pfl[s];
		a->tag[q + i] = i < n ? tag[i] : 0;
	}
}

static void op_mprotect(struct arena *a)
{
	unsigned long p, n;
	int prot;

	if (pick_mapped(a, &p, &n))
		return;
	prot = pick_prot(a);
	if (mprotect(page(a, p), n * PG, prot)) {
		failed(a, "mprotect");
		return;
	}
	memset(a->prot + p, prot, n);
}

static void op_madvise(struct arena *a)
{
	unsigned long p, n, i;
	unsigned int k;
	int adv;

	if (pick_mapped(a, &p, &n))
		return;
	k = rnd(a, NR_ADVICES);
	adv = advices[k].advice;
	if (adv == MADV_POPULATE_READ || adv == MADV_POPULATE_WRITE) {
		int need = adv == MADV_POPULATE_READ ? PROT_READ : PROT_WRITE;

		for (i = p; i < p + n; i++)
			if (!(a->prot[i] & need))
				return;
	}
	if (madvise(page(a, p), n * PG, adv)) {
		a->nr_failed++;
		/* EINVAL for advice this kernel lacks changes nothing */
		if (errno != EINVAL)
			resync(a, advices[k].name);
		return;
	}
	for (i = p; i < p + n; i++) {
		switch (adv) {
		case MADV_DONTNEED: a->tag[i] = 0; break;
		case MADV_DONTFORK: a->pflags[i] |= AF_DONTFORK; break;
		case MADV_DOFORK: a->pflags[i] &= ~AF_DONTFORK; break;
		case MADV_WIPEONFORK: a->pflags[i] |= AF_WIPE; break;
		case MADV_KEEPONFORK: a->pflags[i] &= ~AF_WIPE; break;
		}
	}
}

static void child_work(struct arena *a)
{
	unsigned long i, p;
	int bad = 0;

	/* our copy of the rng diverges from the parent's: fine */
	for (i = 0; i < 32; i++) {
		p = rnd(a, a->np);
		if (!a->mapped[p] || !(a->prot[p] & PROT_READ) ||
		    (a->pflags[p] & AF_DONTFORK))
			continue;
		if (verify_page(a, p, a->pflags[p] & AF_WIPE ? 0 : a->tag[p],
				"fork child"))
			bad = 1;
	}
	for (i = 0; i < 8; i++) {
		p = rnd(a, a->np);
		if (!a->mapped[p] || !(a->prot[p] & PROT_WRITE) ||
		    (a->pflags[p] & AF_DONTFORK))
			continue;
		fill(page(a, p), 0xC0DE0000ULL + i);
		if (verify_page(a, p, 0xC0DE0000ULL + i, "fork child"))
			bad = 1;
	}
	/* rearrange the child's copy a little; the parent must not care */
	p = rnd(a, a->np);
	munmap(page(a, p), PG * (1 + rnd(a, 8)));
	_exit(bad ? 3 : 0);
}

static void op_fork(struct arena *a)
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		a->errors++;
		diag("seed %llu step %lu: fork: %s", (unsigned long long)a->seed,
		     a->step, strerror(errno));
		return;
	}
	if (pid == 0)
		child_work(a);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			a->errors++;
			return;
		}
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		a->errors++;
		diag("seed %llu step %lu: fork child failed (status 0x%x)",
		     (unsigned long long)a->seed, a->step, st);
	}
}

int arena_step(struct arena *a)
{
	unsigned long r = rnd(a, 100);
	int op;

	a->step++;
	if (r < 22)
		op = OP_WRITE;
	else if (r < 27)
		op = OP_READ;
	else if (r < 39)
		op = OP_MMAP;
	else if (r < 47)
		op = OP_MUNMAP;
	else if (r < 51)
		op = OP_SHRINK;
	else if (r < 55)
		op = OP_GROW;
	else if (r < 62)
		op = OP_MOVE;
	else if (r < 65)
		op = OP_DONTUNMAP;
	else if (r < 79)
		op = OP_MPROTECT;
	else if (r < 100UL - a->fork_pct)
		op = OP_MADVISE;
	else
		op = OP_FORK;
	a->nr_ops[op]++;
	switch (op) {
	case OP_WRITE: op_write(a); break;
	case OP_READ: op_read(a); break;
	case OP_MMAP: op_mmap(a); break;
	case OP_MUNMAP: op_munmap(a); break;
	case OP_SHRINK: op_shrink(a); break;
	case OP_GROW: op_grow(a); break;
	case OP_MOVE: op_move(a, 0); break;
	case OP_DONTUNMAP: op_move(a, 1); break;
	case OP_MPROTECT: op_mprotect(a); break;
	case OP_MADVISE: op_madvise(a); break;
	case OP_FORK: op_fork(a); break;
	}
	if (a->check_every && a->step % a->check_every == 0 &&
	    arena_check_model(a))
		diag("... after op %s", op_names[op]);
	return a->errors ? -1 : 0;
}

static void segv(int sig, siginfo_t *si, void *uc)
{
	char buf[200];
	int n;

	(void)uc;
	n = snprintf(buf, sizeof(buf),
		     "# FATAL signal %d at %p: seed %llu step %lu (arena %p)\n",
		     sig, si->si_addr, cur ? (unsigned long long)cur->seed : 0ULL,
		     cur ? cur->step : 0UL, cur ? (void *)cur->base : NULL);
	if (write(1, buf, n) < 0)
		_exit(98);
	signal(sig, SIG_DFL);
	raise(sig);
}

int arena_init(struct arena *a, uint64_t seed, const char *name)
{
	size_t len = ARENA_PAGES * PG;
	struct sigaction sa;
	void *m;

	memset(a, 0, sizeof(*a));
	a->np = ARENA_PAGES;
	a->seed = seed;
	a->name = name;
	a->fork_pct = 3;
	a->rng = seed;
	a->rng = splitmix(&a->rng) | 1;

	m = mmap((void *)ARENA_HINT, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (m != MAP_FAILED && m != (void *)ARENA_HINT) {
		munmap(m, len);	/* kernel without MAP_FIXED_NOREPLACE */
		m = MAP_FAILED;
	}
	if (m == MAP_FAILED) {
		/* fall back to any 2 MiB aligned spot (output is relative) */
		unsigned long x, al = 2UL << 20;
		char *big = mmap(NULL, len + al, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (big == MAP_FAILED)
			return -errno;
		x = ((unsigned long)big + al - 1) & ~(al - 1);
		if (x > (unsigned long)big)
			munmap(big, x - (unsigned long)big);
		munmap((char *)x + len, (unsigned long)big + len + al - x - len);
		m = (void *)x;
		diag("note: arena at %p instead of %#lx", m, ARENA_HINT);
	}
	a->base = m;
	memset(a->mapped, 1, a->np);	/* PROT_NONE, zero */

	cur = a;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	return 0;
}

int arena_print_vmas(struct arena *a, FILE *f, unsigned int *nr_vmas)
{
	unsigned long lo = (unsigned long)a->base, hi = lo + a->np * PG;
	char *line, *save;
	int in = 0;

	*nr_vmas = 0;
	if (slurp("/proc/self/smaps", mapsbuf, sizeof(mapsbuf)) < 0) {
		diag("cannot read /proc/self/smaps");
		return -1;
	}
	for (line = strtok_r(mapsbuf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long s, e, off;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %lx", &s, &e, perms, &off) == 4 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = e > lo && s < hi;
			if (!in)
				continue;
			(*nr_vmas)++;
			/* the offset of an anonymous VMA reads 0 in maps */
			fprintf(f, "%s%06lx-%06lx%s %s %lx",
				s < lo ? "<" : "", (s < lo ? lo : s) - lo,
				(e > hi ? hi : e) - lo, e > hi ? ">" : "",
				perms, off);
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			size_t l = strlen(line);

			while (l && line[l - 1] == ' ')
				line[--l] = 0;
			fprintf(f, " %s\n", line + 8);
		}
	}
	return 0;
}

int arena_verify_all(struct arena *a)
{
	unsigned long p;
	int before = a->errors;

	for (p = 0; p < a->np; p++) {
		if (!a->mapped[p])
			continue;
		if (!(a->prot[p] & PROT_READ) &&
		    mprotect(page(a, p), PG, PROT_READ)) {
			a->errors++;
			diag("mprotect for verify: %s", strerror(errno));
			continue;
		}
		a->prot[p] |= PROT_READ;
		if (verify_page(a, p, a->tag[p], "final") && a->errors - before > 20) {
			diag("... giving up after 20 mismatches");
			break;
		}
	}
	return a->errors != before ? -1 : 0;
}

void arena_fini(struct arena *a)
{
	munmap(a->base, a->np * PG);
	cur = NULL;
}
