// SPDX-License-Identifier: GPL-2.0
#include "tap.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

int tap_fails;
static const char *tap_prog = "?";

static void out(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s", prefix);

	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	/* one write per line: children and parents share stdout */
	if (write(1, buf, n) < 0)
		_exit(99);
}

void tap_init(const char *prog, unsigned int timeout_s)
{
	tap_prog = prog;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	/* a hung test dies of SIGALRM; run.sh reports the signal */
	if (timeout_s)
		alarm(timeout_s);
}

int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out(cond ? "ok - " : "not ok - ", fmt, ap);
	va_end(ap);
	if (!cond)
		tap_fails++;
	return cond;
}

void skip(const char *why, const char *fmt, ...)
{
	char desc[512], line[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "ok - %s # SKIP %s\n", desc, why);
	if (write(1, line, strlen(line)) < 0)
		_exit(99);
}

void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out("# ", fmt, ap);
	va_end(ap);
}

int tap_exit(void)
{
	if (tap_fails)
		diag("%s: %d failure(s)", tap_prog, tap_fails);
	return tap_fails > 100 ? 100 : tap_fails;
}

const char *errname(int err)
{
	static char buf[32];

	switch (err) {
	case 0: return "success";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EINTR: return "EINTR";
	case EBADF: return "EBADF";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOTTY: return "ENOTTY";
	case ENOSPC: return "ENOSPC";
	case EROFS: return "EROFS";
	case E2BIG: return "E2BIG";
	case ENOSYS: return "ENOSYS";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENXIO: return "ENXIO";
	}
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

static int vexpect(int ret, int e1, int e2, const char *fmt, va_list ap)
{
	char desc[512];
	int good = ret == -e1 || (e2 && ret == -e2);

	vsnprintf(desc, sizeof(desc), fmt, ap);
	if (e2)
		ok(good, "%s -> %s or %s", desc, errname(e1), errname(e2));
	else
		ok(good, "%s -> %s", desc, errname(e1));
	if (!good)
		diag("%s: got %s (ret %d)", desc,
		     ret < 0 ? errname(-ret) : "success", ret);
	return good;
}

int expect_errno(int ret, int expected, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vexpect(ret, expected, 0, fmt, ap);
	va_end(ap);
	return r;
}

int expect_errno2(int ret, int e1, int e2, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vexpect(ret, e1, e2, fmt, ap);
	va_end(ap);
	return r;
}

int vm_open(int flags)
{
	int fd = open(VMAMERGE_DEVICE, flags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int vm_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int vm_advise(int fd, uint32_t kind, int32_t id, uint32_t advice, uint64_t flags)
{
	struct vmamerge_advise a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.target_kind = kind;
	a.target_id = id;
	a.advice = advice;
	a.flags = flags;
	return vm_ioctl(fd, VMAMERGE_IOC_ADVISE, &a);
}

int vm_query(int fd, uint32_t kind, int32_t id, uint32_t global,
	     struct vmamerge_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->target_kind = kind;
	q->target_id = id;
	q->global = global;
	return vm_ioctl(fd, VMAMERGE_IOC_QUERY, q);
}

int vm_state(int fd, uint32_t kind, int32_t id)
{
	struct vmamerge_query q;
	int r = vm_query(fd, kind, id, 0, &q);

	return r < 0 ? r : (int)q.state;
}

int vm_self_state(void)
{
	int fd = vm_open(O_RDONLY), r;

	if (fd < 0)
		return fd;
	r = vm_state(fd, VMAMERGE_TARGET_SELF, 0);
	close(fd);
	return r;
}

int vm_get_config(int fd, struct vmamerge_config *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	return vm_ioctl(fd, VMAMERGE_IOC_GET_CONFIG, c);
}

int vm_set_config(int fd, uint32_t set_mask, uint32_t mode, uint32_t features)
{
	struct vmamerge_config c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.set_mask = set_mask;
	c.mode = mode;
	c.features = features;
	return vm_ioctl(fd, VMAMERGE_IOC_SET_CONFIG, &c);
}

int vm_verify(int fd, uint32_t kind, int32_t id, struct vmamerge_verify *v)
{
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	v->target_kind = kind;
	v->target_id = id;
	return vm_ioctl(fd, VMAMERGE_IOC_VERIFY, v);
}

const char *vm_violation_name(uint32_t kind)
{
	static const char *const names[] = {
		"none", "anon_root", "index", "tree", "chain", "counts",
		"not_anon",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

int vm_verify_self_ok(const char *ctx)
{
	static int said_eperm;
	struct vmamerge_verify v;
	int fd = vm_open(O_RDONLY), r;

	if (fd == -ENOENT || fd == -ENXIO || fd == -ENODEV)
		return 1;
	if (fd < 0) {
		ok(0, "%s: rmap invariants: cannot open %s", ctx, VMAMERGE_DEVICE);
		diag("open: %s", errname(-fd));
		return 0;
	}
	r = vm_verify(fd, VMAMERGE_TARGET_SELF, 0, &v);
	close(fd);
	if (r == -ENOTTY)
		return 1;
	if (r == -EPERM) {
		if (!said_eperm++)
			diag("%s: rmap verifier needs root: not checked", ctx);
		return 1;
	}
	if (r) {
		ok(0, "%s: rmap invariants: VMAMERGE_IOC_VERIFY failed", ctx);
		diag("verify: %s", errname(-r));
		return 0;
	}
	if (!v.nr_violations)
		return 1;
	v.msg[sizeof(v.msg) - 1] = 0;
	ok(0, "%s: rmap invariants hold (%llu violation(s))", ctx,
	   (unsigned long long)v.nr_violations);
	diag("first: %s at 0x%llx: %s", vm_violation_name(v.kind),
	     (unsigned long long)v.addr, v.msg);
	diag("vma 0x%llx-0x%llx pgoff 0x%llx, expected 0x%llx, found 0x%llx",
	     (unsigned long long)v.vma_start, (unsigned long long)v.vma_end,
	     (unsigned long long)v.vma_pgoff, (unsigned long long)v.expected,
	     (unsigned long long)v.found);
	return 0;
}

int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	long r = syscall(434 /* __NR_pidfd_open */, pid, flags);

	return r < 0 ? -errno : (int)r;
}

int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			return r;
		}
		n += r;
	}
	close(fd);
	buf[n] = 0;
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return n;
}

int write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, data, len);
	if (r < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	close(fd);
	return r == (ssize_t)len ? 0 : -EIO;
}

#define CGROOT	"/sys/fs/cgroup"

/* Write the string @s to @path; 0 or -errno. */
static int put_str(const char *path, const char *s)
{
	return write_file(path, s, strlen(s));
}

/* @path: CGROOT/@name/@file (or CGROOT/@name without @file) */
static void memcg_path(char *path, size_t len, const char *name,
		       const char *file)
{
	snprintf(path, len, CGROOT "/%s%s%s", name, file ? "/" : "",
		 file ? file : "");
}

const char *memcg_enter(const char *name)
{
	char path[128], pid[32];

	if (access(CGROOT "/cgroup.controllers", F_OK) &&
	    mount("none", CGROOT, "cgroup2", 0, NULL))
		return "cannot mount cgroup2";
	if (put_str(CGROOT "/cgroup.subtree_control", "+memory"))
		return "no memory controller";
	memcg_path(path, sizeof(path), name, NULL);
	if (mkdir(path, 0755) && errno != EEXIST)
		return "cannot create a cgroup";
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	memcg_path(path, sizeof(path), name, "cgroup.procs");
	if (put_str(path, pid))
		return "cannot move into the cgroup";
	memcg_path(path, sizeof(path), name, "memory.reclaim");
	if (access(path, W_OK))
		return "no memory.reclaim";
	return NULL;
}

void memcg_leave(const char *name)
{
	char path[128], pid[32];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	put_str(CGROOT "/cgroup.procs", pid);
	memcg_path(path, sizeof(path), name, NULL);
	rmdir(path);
}

int memcg_reclaim(const char *name, const char *amount)
{
	char path[128];

	memcg_path(path, sizeof(path), name, "memory.reclaim");
	return put_str(path, amount);
}

int run_unprivileged(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		diag("fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534)) {
			diag("dropping privileges: %s", strerror(errno));
			_exit(1);
		}
		/* setuid() cleared dumpable; our own children must stay
		 * ptraceable by us (PTRACE_MODE_ATTACH needs dumpable). */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		tap_fails = 0;
		_exit(fn(arg) ? 1 : (tap_fails > 100 ? 100 : tap_fails));
	}
	if (waitpid(pid, &st, 0) < 0) {
		diag("waitpid: %s", strerror(errno));
		return 1;
	}
	if (WIFSIGNALED(st)) {
		ok(0, "unprivileged child died of signal %d", WTERMSIG(st));
		return 1;
	}
	/* the child's not-ok lines were already printed and counted by
	 * run.sh; count them here only for our exit code */
	tap_fails += WEXITSTATUS(st);
	return WEXITSTATUS(st);
}

pid_t spawn_sleeper(int *wfd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

int reap_sleeper(pid_t pid, int wfd)
{
	int st = -1;

	close(wfd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

int mode_init(int argc, char **argv, const char *prog, unsigned int timeout_s,
	      int *stock, int *renumber_only, int *quick, int *vfd)
{
	int optin = 0, c;

	while ((c = getopt(argc, argv, quick ? "oqrs" : "ors")) != -1) {
		if (c == 'o')
			optin = 1;
		else if (c == 'q' && quick)
			*quick = 1;
		else if (c == 'r')
			*renumber_only = 1;
		else if (c == 's')
			*stock = 1;
		else
			return fprintf(stderr, "usage: %s [-o]%s [-r | -s]\n",
				       prog, quick ? " [-q]" : ""), 2;
	}
	tap_init(prog, timeout_s);
	*vfd = vm_open(O_RDWR);
	if (*vfd < 0)
		*vfd = -1;
	if (optin)
		ok(*vfd >= 0 && vm_advise(*vfd, VMAMERGE_TARGET_SELF, 0,
					  VMAMERGE_ADVISE_ENABLE, 0) == 0,
		   "opted in");
	return 0;
}

static unsigned char page_pat(unsigned int tag, unsigned long off)
{
	return (unsigned char)(tag * 131 + off * 7 + (off >> 8));
}

void page_fill(char *p, unsigned int tag)
{
	unsigned long o;

	for (o = 0; o < 4096; o++)
		p[o] = page_pat(tag, o);
}

int page_check(const char *p, unsigned int tag, unsigned long *off)
{
	unsigned long o;

	for (o = 0; o < 4096; o++)
		if ((unsigned char)p[o] != (tag ? page_pat(tag, o) : 0)) {
			if (off)
				*off = o;
			return -1;
		}
	return 0;
}

int page_map_fill(char *p, unsigned long n, unsigned int tag0)
{
	unsigned long i;

	if (mmap(p, n * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != p)
		return -1;
	for (i = 0; i < n; i++)
		page_fill(p + i * 4096, tag0 + i);
	return 0;
}

int page_map_huge(char *p, unsigned long n)
{
	if (mmap(p, n * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != p)
		return -1;
	madvise(p, n * 4096, MADV_HUGEPAGE);
	return 0;
}

char *aligned_window(unsigned long len)
{
	const unsigned long align = 2UL << 20;
	void *r = mmap(NULL, len + align, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	munmap(r, len + align);
	return (char *)(((unsigned long)r + align - 1) & ~(align - 1));
}

int vmas_in(const void *lo, const void *hi)
{
	unsigned long s, e;
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 &&
		    s < (unsigned long)hi && e > (unsigned long)lo)
			n++;
	fclose(f);
	return n;
}

unsigned long long pagemap_entry(const void *p)
{
	unsigned long long e = 0;
	long psz = sysconf(_SC_PAGESIZE);
	int f = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (f >= 0) {
		if (pread(f, &e, sizeof(e),
			  (unsigned long)p / psz * sizeof(e)) != (ssize_t)sizeof(e))
			e = 0;
		close(f);
	}
	return e;
}

int kpageflags_of(unsigned long long e, unsigned long long *flags)
{
	static int fd = -1;

	if (!(e & PM_PRESENT) || !PM_PFN(e))
		return -1;
	if (fd < 0)
		fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0 ||
	    pread(fd, flags, sizeof(*flags), PM_PFN(e) * sizeof(*flags)) !=
	    (ssize_t)sizeof(*flags))
		return -1;
	return 0;
}

int vm_self_vmas(int vfd, unsigned long addr, struct vmamerge_vma *v,
		 unsigned int nr)
{
	struct vmamerge_vmas q;
	int r;

	if (vfd < 0)
		return -EBADF;
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.target_kind = VMAMERGE_TARGET_SELF;
	q.nr = nr;
	q.addr = addr;
	q.vmas_ptr = (unsigned long)v;
	q.vma_size = sizeof(*v);
	r = vm_ioctl(vfd, VMAMERGE_IOC_VMAS, &q);
	return r ? r : (int)q.nr;
}

long vm_vma_pgoff(int vfd, unsigned long addr)
{
	struct vmamerge_vma v;

	if (vm_self_vmas(vfd, addr, &v, 1) != 1 || v.start != addr)
		return -1;
	return (long)v.pgoff;
}

int window_layout(int vfd, const char *base, unsigned long npages,
		  char *buf, size_t len)
{
	unsigned long s, e, off, lo = (unsigned long)base;
	unsigned long hi = lo + npages * 4096;
	char line[512], path[256];
	size_t n = 0;
	int nr = 0, f;
	long po;
	FILE *fp = fopen("/proc/self/maps", "r");

	buf[0] = 0;
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		path[0] = 0;
		f = sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &s, &e, &off,
			   path);
		if (f < 3 || e <= lo || s >= hi)
			continue;
		po = path[0] ? (long)(off / 4096) : vm_vma_pgoff(vfd, s);
		n += snprintf(buf + n, len - n, "%s%lu-%lu%s%s", n ? " " : "",
			      (s - lo) / 4096, (e - lo) / 4096,
			      po < 0 || (unsigned long)po == s / 4096 ? "" : "~",
			      !strcmp(path, "/dev/zero") ? "z" : "");
		nr++;
	}
	fclose(fp);
	return nr;
}

int window_avs(int vfd, const char *base, unsigned long npages,
	       char *buf, size_t len)
{
	struct vmamerge_vma v[32];
	unsigned long hi = (unsigned long)base + npages * 4096;
	int i, n = vm_self_vmas(vfd, (unsigned long)base, v, 32);
	size_t nr = 0;
	char av = 'a' - 1;

	buf[0] = 0;
	if (n < 0)
		return n;
	for (i = 0; i < n && v[i].start < hi && nr + 1 < len; i++) {
		if (!(v[i].flags & VMAMERGE_VMA_ANON)) {
			buf[nr++] = '-';
			continue;
		}
		if (!(v[i].flags & VMAMERGE_VMA_SAME_AV_PREV))
			av++;
		buf[nr++] = av;
	}
	buf[nr] = 0;
	return 0;
}

int expect_window_layout(const char *ctx, int vfd, const char *base,
			 unsigned long npages, const char *want)
{
	char got[512], w[512];
	size_t i, n = 0;

	/* a /dev/zero mapping's offset is in /proc/self/maps: "~z" stays */
	for (i = 0; want[i] && n < sizeof(w) - 1; i++)
		if (want[i] != '~' || vfd >= 0 || want[i + 1] == 'z')
			w[n++] = want[i];
	w[n] = 0;
	window_layout(vfd, base, npages, got, sizeof(got));
	if (ok(!strcmp(got, w), "%s: layout %s", ctx, w))
		return 1;
	diag("layout is %s", got);
	return 0;
}

int expect_window_avs(const char *ctx, int vfd, const char *base,
		      unsigned long npages, const char *want)
{
	char got[64];

	if (vfd < 0)
		return 1;
	if (!ok(!window_avs(vfd, base, npages, got, sizeof(got)),
		"%s: VMAMERGE_IOC_VMAS", ctx))
		return 0;
	if (ok(!strcmp(got, want), "%s: anon_vmas %s", ctx, want))
		return 1;
	diag("anon_vmas are %s", got);
	return 0;
}

/* N of "name+N" in @want, 0 if @name is not there */
static long wanted_delta(const char *want, const char *name)
{
	size_t l = strlen(name);
	const char *p;

	for (p = want; (p = strstr(p, name)); p += l)
		if ((p == want || p[-1] == ' ') && p[l] == '+')
			return atol(p + l + 1);
	return 0;
}

int expect_counter_deltas(const char *ctx, const char *const *names, int n,
			  const long *before, const char *want)
{
	char got[512] = "";
	size_t gn = 0;
	long now, d;
	int bad = 0, i;

	for (i = 0; i < n; i++) {
		now = stats_counter(names[i]);
		if (now < 0 || before[i] < 0) {
			bad = 1;
			gn += snprintf(got + gn, sizeof(got) - gn,
				       "%s:missing ", names[i]);
			continue;
		}
		d = now - before[i];
		bad |= d != wanted_delta(want, names[i]);
		if (d)
			gn += snprintf(got + gn, sizeof(got) - gn, "%s+%ld ",
				       names[i], d);
	}
	if (ok(!bad, "%s: counters %s", ctx, *want ? want : "unchanged"))
		return 1;
	diag("counters changed: %s", gn ? got : "none");
	return 0;
}

long file_counter(const char *path, const char *name)
{
	char buf[16384], *p;
	size_t l = strlen(name);

	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, l) && p[l] == ' ')
			return atol(p + l + 1);
	return -2;
}

long stats_counter(const char *name)
{
	return file_counter(DBG_STATS, name);
}

long vmstat_counter(const char *name)
{
	return file_counter("/proc/vmstat", name);
}

void stats_snap(const char *const *names, int n, long *v)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = stats_counter(names[i]);
}

const char *state_str(int state)
{
	static char buf[8][64];
	static int i;
	char *b = buf[i++ & 7];

	if (state < 0) {
		snprintf(b, 64, "error %s", errname(-state));
		return b;
	}
	snprintf(b, 64, "0x%x%s%s%s", state,
		 state & VMAMERGE_STATE_OPTED_IN ? " OPTED_IN" : "",
		 state & VMAMERGE_STATE_EXEC_KEEP ? " EXEC_KEEP" : "",
		 state & VMAMERGE_STATE_ACTIVE ? " ACTIVE" : "");
	return b;
}

long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}
