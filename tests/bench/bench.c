// SPDX-License-Identifier: GPL-2.0
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(2);
}

void bench_optin_from_env(void)
{
	const char *e = getenv("BENCH_OPTIN");
	struct vmamerge_advise a;
	int fd;

	if (!e || strcmp(e, "1"))
		return;
	fd = open(VMAMERGE_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("BENCH_OPTIN=1 but %s: %s", VMAMERGE_DEVICE, strerror(errno));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.target_kind = VMAMERGE_TARGET_SELF;
	a.advice = VMAMERGE_ADVISE_ENABLE;
	if (ioctl(fd, VMAMERGE_IOC_ADVISE, &a))
		die("ADVISE ENABLE: %s", strerror(errno));
	close(fd);
}

int bench_inproc_configs(const char *names[BENCH_MAX_CFG])
{
	const char *e = getenv("BENCH_INPROC");
	char *s, *tok, *save = NULL;
	int n = 0;

	s = strdup(e && *e ? e : "stock");
	for (tok = strtok_r(s, ", ", &save); tok && n < BENCH_MAX_CFG;
	     tok = strtok_r(NULL, ", ", &save))
		names[n++] = tok;
	return n;
}

static int vm_fd(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open(VMAMERGE_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("%s: %s", VMAMERGE_DEVICE, strerror(errno));
	return fd;
}

void bench_set_config(const char *name)
{
	static const struct { const char *name; int optin; __u32 features; } t[] = {
		{ "loaded", 0, VMAMERGE_FEATURES_ALL },
		{ "off", 1, 0 },
		{ "renumber", 1, VMAMERGE_FEATURE_RENUMBER },
		{ "transplant", 1, VMAMERGE_FEATURE_TRANSPLANT },
		{ "both", 1, VMAMERGE_FEATURES_ALL },
	};
	struct vmamerge_advise a;
	struct vmamerge_config c;
	unsigned int i;

	if (!strncmp(name, "stock", 5))
		return;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(name, t[i].name))
			break;
	if (i == sizeof(t) / sizeof(t[0]))
		die("unknown configuration %s", name);
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.set_mask = VMAMERGE_CONFIG_SET_FEATURES;
	c.features = t[i].features;
	if (ioctl(vm_fd(), VMAMERGE_IOC_SET_CONFIG, &c))
		die("SET_CONFIG features 0x%x: %s", t[i].features, strerror(errno));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.target_kind = VMAMERGE_TARGET_SELF;
	a.advice = t[i].optin ? VMAMERGE_ADVISE_ENABLE : VMAMERGE_ADVISE_DISABLE;
	if (ioctl(vm_fd(), VMAMERGE_IOC_ADVISE, &a))
		die("ADVISE %s: %s", t[i].optin ? "ENABLE" : "DISABLE",
		    strerror(errno));
}

int bench_counters(int global, uint64_t c[VMAMERGE_NR_COUNTERS])
{
	static int fd = -2;
	struct vmamerge_query q;
	int i;

	memset(c, 0, sizeof(uint64_t) * VMAMERGE_NR_COUNTERS);
	if (fd == -2)
		fd = open(VMAMERGE_DEVICE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.target_kind = VMAMERGE_TARGET_SELF;
	q.global = global;
	if (ioctl(fd, VMAMERGE_IOC_QUERY, &q))
		return -1;
	for (i = 0; i < VMAMERGE_NR_COUNTERS && i < (int)q.nr_counters; i++)
		c[i] = q.counters[i];
	return 0;
}

/* /proc/vmstat's @name, or -1 */
static long vmstat_value(const char *name)
{
	char line[128], key[64];
	long v, found = -1;
	FILE *f = fopen("/proc/vmstat", "re");

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", key, &v) == 2 && !strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

void bench_noise_take(struct bench_noise *n)
{
	struct rusage ru;

	n->collapses = vmstat_value("thp_collapse_alloc");
	getrusage(RUSAGE_SELF, &ru);
	n->sleeps = ru.ru_nvcsw;
	n->preempted = ru.ru_nivcsw;
}

void j_noise(const struct bench_noise *a, const struct bench_noise *b)
{
	j_int("collapses", b->collapses - a->collapses);
	j_int("sleeps", b->sleeps - a->sleeps);
	j_int("preempted", b->preempted - a->preempted);
}

long count_vmas(pid_t pid, unsigned long lo, unsigned long hi, long *in_range)
{
	static char *buf;
	static size_t cap = 1 << 20;
	char path[64];
	size_t n = 0;
	long total = 0, inr = 0;
	ssize_t r;
	char *p, *q, *end;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!buf)
		buf = malloc(cap);
	for (;;) {
		if (cap - n < 65536) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				die("out of memory");
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	buf[n] = 0;
	for (p = buf; p < buf + n; p = end + 1) {
		unsigned long s, e;

		end = memchr(p, '\n', buf + n - p);
		if (!end)
			end = buf + n;
		total++;
		if (!in_range)
			continue;
		/* not sscanf(): it would strlen() the rest of the buffer */
		s = strtoul(p, &q, 16);
		e = *q == '-' ? strtoul(q + 1, NULL, 16) : 0;
		if (s < hi && e > lo)
			inr++;
	}
	if (in_range)
		*in_range = inr;
	return total;
}

unsigned long free_range(unsigned long size, unsigned long align)
{
	void *p = mmap(NULL, size + align, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned long a;

	if (p == MAP_FAILED)
		die("reserving %lu bytes: %s", size + align, strerror(errno));
	a = ((unsigned long)p + align - 1) & ~(align - 1);
	munmap(p, size + align);
	return a;
}

/* ---- JSON ---- */
static char jbuf[65536];
static size_t jn;

static void jput(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void jput(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(jbuf + jn, sizeof(jbuf) - jn, fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= sizeof(jbuf) - jn)
		die("JSON line too long");
	jn += r;
}

static void jkey(const char *key)
{
	jput("%s\"%s\":", jn > 1 ? "," : "", key);
}

void j_begin(const char *bench)
{
	j_begin_cfg(bench, NULL);
}

void j_begin_cfg(const char *bench, const char *config)
{
	const char *cfg = config ? config : getenv("BENCH_CONFIG");
	const char *rep = getenv("BENCH_REP");

	jn = 0;
	jput("{");
	j_str("bench", bench);
	j_str("config", cfg ? cfg : "unknown");
	j_int("rep", rep ? atoi(rep) : 0);
}

void j_str(const char *key, const char *val)
{
	jkey(key);
	jput("\"");
	for (; *val; val++) {
		if (*val == '"' || *val == '\\')
			jput("\\%c", *val);
		else if ((unsigned char)*val < 0x20)
			jput("\\u%04x", *val);
		else
			jput("%c", *val);
	}
	jput("\"");
}

void j_int(const char *key, long long val)
{
	jkey(key);
	jput("%lld", val);
}

void j_u64(const char *key, uint64_t val)
{
	jkey(key);
	jput("%llu", (unsigned long long)val);
}

void j_dbl(const char *key, double val)
{
	jkey(key);
	jput("%.6g", val);
}

#define CNAME_(id, name) name,
static const char *const cnames[] = { VMAMERGE_COUNTERS(CNAME_) };
#undef CNAME_

void j_counters(const char *key, const uint64_t before[], const uint64_t after[])
{
	int i, first = 1;

	jkey(key);
	jput("{");
	for (i = 0; i < VMAMERGE_NR_COUNTERS; i++) {
		if (after[i] == before[i])
			continue;
		jput("%s\"%s\":%lld", first ? "" : ",", cnames[i],
		     (long long)(after[i] - before[i]));
		first = 0;
	}
	jput("}");
}

void j_u64_array(const char *key, const uint64_t *v, int n)
{
	int i;

	jkey(key);
	jput("[");
	for (i = 0; i < n; i++)
		jput("%s%llu", i ? "," : "", (unsigned long long)v[i]);
	jput("]");
}

void j_end(void)
{
	jput("}\n");
	if (write(1, jbuf, jn) != (ssize_t)jn)
		exit(3);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t median_u64(const uint64_t *v, int n)
{
	uint64_t *c, m;

	if (n <= 0)
		return 0;
	c = malloc(n * sizeof(*c));
	if (!c)
		die("out of memory");
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_u64);
	m = n & 1 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}
