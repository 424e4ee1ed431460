// SPDX-License-Identifier: GPL-2.0
/*
 * vmamerge - control the vmamerge livepatch module: global mode and
 * features, per-process opt-in, counters, and a look at a process's VMAs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmamerge.h"	/* module/uapi */
#include "cli.h"
#include "compact.h"
#include "kernelcheck.h"
#include "maps.h"
#include "modvmas.h"
#include "selftest.h"
#include "subproc.h"
#include "verify.h"
#include "builds.h"		/* module/: struct vmamerge_build, nearest */
#include <validated-builds.h>	/* generated from module/builds.list (-I.) */
#include <vmamerge-paths.h>	/* generated: VMAMERGE_KFP_PATH (-I.) */

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434	/* the same on every architecture */
#endif

#ifndef VMAMERGE_VERSION	/* dkms.conf's PACKAGE_VERSION (userspace/Makefile) */
#error "VMAMERGE_VERSION is not defined: build with userspace/Makefile"
#endif

#define SYSFS_MODULE	"/sys/module/vmamerge"
#define SYSFS_LIVEPATCH	"/sys/kernel/livepatch/vmamerge"
#define DEBUGFS_DIR	"/sys/kernel/debug/vmamerge"
/* the validated builds' fingerprints, in the module source dkms builds */
#define FINGERPRINT_DIR	"/usr/src/vmamerge-" VMAMERGE_VERSION "/module/fingerprints"

#define EXIT_RUNTIME	1
#define EXIT_USAGE	2
#define EXIT_RUN_FAILED	125	/* run: vmamerge itself failed (as env, nice) */

/* What an errno from an ioctl means depends on what we asked. */
enum err_ctx {
	CTX_SELF,	/* own process or global read */
	CTX_OTHER,	/* another process */
	CTX_CONFIG,	/* SET_CONFIG */
};

/*
 * With --json, the first error message also becomes the command's output
 * when it fails: {"error": "..."} on stdout (main()).
 */
static bool json_mode;
static char json_err[512];

static void msg(const char *fmt, ...)
{
	va_list ap;

	fputs("vmamerge: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (json_mode && !json_err[0]) {
		va_start(ap, fmt);
		vsnprintf(json_err, sizeof(json_err), fmt, ap);
		va_end(ap);
	}
}

static void json_error(const char *text)
{
	printf("{\"error\": ");
	json_string(stdout, text);
	printf("}\n");
}

static bool path_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

static bool module_loaded(void)
{
	return path_exists(SYSFS_MODULE);
}

/*
 * Read a whole (proc/sys/debugfs) file into a NUL-terminated buffer.
 * Returns NULL with errno set.
 */
static char *read_file(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *tmp;
	ssize_t n;
	int fd, err;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	for (;;) {
		if (cap - len < 2) {
			tmp = realloc(buf, cap * 2);
			if (!tmp) {
				errno = ENOMEM;
				goto fail_fd;
			}
			buf = tmp;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail_fd;
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail_fd:
	err = errno;
	close(fd);
	errno = err;
fail:
	err = errno;
	free(buf);
	errno = err;
	return NULL;
}

/* First line of a small file, without the newline; NULL on error. */
static char *read_line(const char *path)
{
	char *s = read_file(path);

	if (s)
		s[strcspn(s, "\n")] = '\0';
	return s;
}

static void device_error(int err)
{
	if (err == ENOENT && !module_loaded())
		msg("module not loaded: run 'sudo modprobe vmamerge'");
	else if (err == ENOENT)
		msg("%s is missing although the module is loaded (udev rule not installed?)",
		    VMAMERGE_DEVICE);
	else if (err == EACCES || err == EPERM)
		msg("permission denied opening %s (the udev rule installed by 'make install' makes it 0666)",
		    VMAMERGE_DEVICE);
	else if (err == ENXIO || err == ENODEV)
		msg("%s has no driver behind it: module not loaded? run 'sudo modprobe vmamerge'",
		    VMAMERGE_DEVICE);
	else
		msg("cannot open %s: %s", VMAMERGE_DEVICE, strerror(err));
}

/*
 * Open the device.  ADVISE needs it open for writing; reads fall back to
 * O_RDONLY.  Returns the fd or -errno; prints the error unless quiet.
 */
static int dev_open(bool need_write, bool quiet)
{
	int fd = open(VMAMERGE_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno == EACCES && !need_write)
		fd = open(VMAMERGE_DEVICE, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (!quiet)
			device_error(err);
		return -err;
	}
	return fd;
}

static void ioctl_error(const char *what, int err, enum err_ctx ctx, pid_t pid)
{
	switch (err) {
	case EPERM:
	case EACCES:
		if (ctx == CTX_CONFIG)
			msg("%s: permission denied: changing mode/features needs CAP_SYS_ADMIN",
			    what);
		else if (ctx == CTX_OTHER)
			msg("%s: permission denied: acting on another process needs ptrace rights over it (pid %d)",
			    what, (int)pid);
		else
			msg("%s: permission denied: acting on another process needs ptrace rights over it; changing mode/features needs CAP_SYS_ADMIN",
			    what);
		break;
	case ESRCH:
		if (pid)
			msg("%s: no such process: %d", what, (int)pid);
		else
			msg("%s: no such process", what);
		break;
	case ENOTTY:
		msg("%s: not supported by the loaded module (ioctl unknown: version mismatch?)",
		    what);
		break;
	case E2BIG:
		msg("%s: the loaded module is older than this tool (argument struct too large)",
		    what);
		break;
	case EINVAL:
		msg("%s: invalid argument (module ABI differs from this tool's, version %d?)",
		    what, VMAMERGE_ABI_VERSION);
		break;
	default:
		msg("%s: %s", what, strerror(err));
	}
}

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

static int get_config(int fd, struct vmamerge_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	return xioctl(fd, VMAMERGE_IOC_GET_CONFIG, cfg);
}

static int set_config(int fd, __u32 set_mask, __u32 mode, __u32 features)
{
	struct vmamerge_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.set_mask = set_mask;
	cfg.mode = mode;
	cfg.features = features;
	return xioctl(fd, VMAMERGE_IOC_SET_CONFIG, &cfg);
}

/* How to name a process to the module. */
struct target {
	__u32 kind;
	__s32 id;
	int pidfd;	/* to close, or -1 */
	pid_t pid;	/* for messages; 0 for self */
};

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static void target_self(struct target *t)
{
	t->kind = VMAMERGE_TARGET_SELF;
	t->id = 0;
	t->pidfd = -1;
	t->pid = 0;
}

/* 0, or -1 after printing why. */
static int target_open(struct target *t, pid_t pid)
{
	int fd = pidfd_open(pid);

	t->pid = pid;
	t->pidfd = -1;
	if (fd >= 0) {
		t->kind = VMAMERGE_TARGET_PIDFD;
		t->id = fd;
		t->pidfd = fd;
		return 0;
	}
	if (errno == ENOSYS) {
		t->kind = VMAMERGE_TARGET_PID;
		t->id = pid;
		return 0;
	}
	if (errno == ESRCH)
		msg("no such process: %d", (int)pid);
	else
		msg("pidfd_open(%d): %s", (int)pid, strerror(errno));
	return -1;
}

static void target_close(struct target *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->pidfd = -1;
}

/*
 * The argument structs of the ioctls about one process that have no
 * helper of their own (verify, compact) start alike: size, target_kind,
 * target_id.
 */
struct target_head {
	__u32 size;
	__u32 target_kind;
	__s32 target_id;
};

#define SAME_HEAD(type) \
	(offsetof(type, target_kind) == offsetof(struct target_head, target_kind) && \
	 offsetof(type, target_id) == offsetof(struct target_head, target_id))
_Static_assert(SAME_HEAD(struct vmamerge_verify), "verify's head");
_Static_assert(SAME_HEAD(struct vmamerge_compact), "compact's head");

/*
 * Zero *arg (size bytes, one of the structs above), fill its head for
 * pid and call req.  Returns 0, -errno from the ioctl, or 1 when the
 * device or pid could not be opened (said why).
 */
static int pid_ioctl(pid_t pid, bool need_write, unsigned long req,
		     void *arg, size_t size)
{
	struct target_head head;
	struct target t;
	int fd, ret;

	fd = dev_open(need_write, false);
	if (fd < 0)
		return 1;
	if (target_open(&t, pid)) {
		close(fd);
		return 1;
	}
	head.size = size;
	head.target_kind = t.kind;
	head.target_id = t.id;
	memset(arg, 0, size);
	memcpy(arg, &head, sizeof(head));
	ret = xioctl(fd, req, arg);
	target_close(&t);
	close(fd);
	return ret;
}

/* What pid_ioctl()'s errors mean, for the command what (ioctl ioc). */
static void pid_ioctl_error(const char *what, const char *ioc, int err,
			    pid_t pid)
{
	if (err == ENOTTY)
		msg("%s: module too old: the loaded vmamerge has no %s", what, ioc);
	else if (err == EINVAL)
		msg("%s: invalid argument: pid %d has no user address space (a kernel thread?), or the module's ABI differs from this tool's (version %d)",
		    what, (int)pid, VMAMERGE_ABI_VERSION);
	else
		ioctl_error(what, err, CTX_OTHER, pid);
}

static int advise(int fd, const struct target *t, __u32 advice, __u64 flags)
{
	struct vmamerge_advise a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.target_kind = t->kind;
	a.target_id = t->id;
	a.advice = advice;
	a.flags = flags;
	return xioctl(fd, VMAMERGE_IOC_ADVISE, &a);
}

static int query(int fd, const struct target *t, bool global,
		 struct vmamerge_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->target_kind = t->kind;
	q->target_id = t->id;
	q->global = global;
	return xioctl(fd, VMAMERGE_IOC_QUERY, q);
}

/* ---- status ---- */

static void print_state_line(FILE *f, const char *label, __u32 state)
{
	fprintf(f, "%s%s", label,
		state & VMAMERGE_STATE_OPTED_IN ? "opted in" : "not opted in");
	if (state & VMAMERGE_STATE_OPTED_IN)
		fprintf(f, ", %s",
			!(state & VMAMERGE_STATE_EXEC_KEEP) ? "ends at execve" :
			state & VMAMERGE_STATE_EXEC_ONCE ?
			"kept across the next execve only" :
			"kept across execve");
	fprintf(f, ", %s\n",
		state & VMAMERGE_STATE_ACTIVE ? "active" : "not active");
}

static const char *json_bool(bool b)
{
	return b ? "true" : "false";
}

static void json_state(FILE *f, __u32 state)
{
	fprintf(f, "{\"opted_in\": %s, \"exec_keep\": %s, \"exec_once\": %s, \"active\": %s, \"raw\": %u}",
		json_bool(state & VMAMERGE_STATE_OPTED_IN),
		json_bool(state & VMAMERGE_STATE_EXEC_KEEP),
		json_bool(state & VMAMERGE_STATE_EXEC_ONCE),
		json_bool(state & VMAMERGE_STATE_ACTIVE), state);
}

/* Mode and features from debugfs, for when the device is unusable. */
static int config_from_debugfs(struct vmamerge_config *cfg)
{
	char *m = read_file(DEBUGFS_DIR "/mode");
	char *f = read_file(DEBUGFS_DIR "/features");
	int mode = m ? debugfs_parse_mode(m) : -1;
	unsigned int feat = 0;
	int ret = -1;

	if (mode >= 0 && f && !debugfs_parse_features(f, &feat)) {
		memset(cfg, 0, sizeof(*cfg));
		cfg->mode = mode;
		cfg->features = feat;
		ret = 0;
	}
	free(m);
	free(f);
	return ret;
}

/* ---- the running build against module/builds.list ---- */

static const struct vmamerge_build validated_builds[] = {
	VMAMERGE_VALIDATED_BUILDS
};
#define N_BUILDS ((int)(sizeof(validated_builds) / sizeof(validated_builds[0])))

/*
 * The validated build of @release and UTS version @version (NULL: of
 * @release whatever its version, for a kernel that is not running), or
 * NULL.
 */
static const struct vmamerge_build *listed_build(const char *release,
						 const char *version)
{
	int i;

	for (i = 0; i < N_BUILDS; i++)
		if (!strcmp(validated_builds[i].release, release) &&
		    (!version || !strcmp(validated_builds[i].version, version)))
			return &validated_builds[i];
	return NULL;
}

/* The validated build that is running, or NULL. */
static const struct vmamerge_build *running_build(const struct utsname *u)
{
	return listed_build(u->release, u->version);
}

/* The nearest validated build to port from (module/builds.h), or NULL. */
static const struct vmamerge_build *nearest_build(const struct utsname *u)
{
	int i = vmamerge_nearest_build(validated_builds, N_BUILDS, u->release,
				       u->version);

	return i < 0 ? NULL : &validated_builds[i];
}

/* The tier of the running build (status). */
struct build_tier {
	const char *tier;	/* full, smoke, debug, equivalent, refused */
	char ref[72];		/* equivalent: to this validated build */
};

/* Take a tier line (tier_parse()) into t: 0, or -1 if it is none. */
static int tier_take(struct build_tier *t, const char *line)
{
	const char *tier, *ref;

	if (!line || tier_parse(line, &tier, &ref))
		return -1;
	t->tier = tier;
	snprintf(t->ref, sizeof(t->ref), "%s", ref ? ref : "");
	return 0;
}

/*
 * The tier of the module installed for @release: modinfo's "tier" field,
 * one line.  modinfo is looked up in $PATH, then /usr/sbin and /sbin
 * (which a user's PATH may lack); without it, or without a module, or with
 * a module that has no tier, -1.
 */
static int modinfo_tier(const char *release, struct build_tier *t)
{
	char path[PATH_MAX];
	char *argv[] = { "modinfo", "-k", (char *)release, "-F", "tier",
			 "vmamerge", NULL };
	struct spawn_out o;
	int ret = -1;

	if (spawn_find("modinfo", "/usr/sbin:/sbin", path, sizeof(path)) ||
	    spawn_capture(path, argv, &o))
		return -1;
	/* exactly one line, no NUL: the field of the one module */
	if (WIFEXITED(o.status) && !WEXITSTATUS(o.status) && !o.truncated &&
	    o.out_len && strlen(o.out) == o.out_len &&
	    strchr(o.out, '\n') == o.out + o.out_len - 1) {
		o.out[o.out_len - 1] = '\0';
		ret = tier_take(t, o.out);
	}
	spawn_out_free(&o);
	return ret;
}

/*
 * What the running build is to the module: the loaded module's own word
 * (/sys/module/vmamerge/build), else module/builds.list, else the tier
 * of the module installed for it (an equivalent build's), else refused.
 */
static void running_tier(const struct utsname *u, struct build_tier *t)
{
	const struct vmamerge_build *b;
	char *line = module_loaded() ? read_line(SYSFS_MODULE "/build") : NULL;
	int ret = tier_take(t, line);

	free(line);
	if (!ret)
		return;
	b = running_build(u);
	if (b && !tier_take(t, b->tier))
		return;
	if (!modinfo_tier(u->release, t))
		return;
	t->tier = "refused";
	t->ref[0] = '\0';
}

static bool tier_is(const struct build_tier *t, const char *tier)
{
	return !strcmp(t->tier, tier);
}

/*
 * "build:" of status: validated (tier), equivalent (to what), or what to
 * port from and how.
 */
static void status_build_line(const struct utsname *u,
			      const struct build_tier *t)
{
	const struct vmamerge_build *n;

	if (tier_validated(t->tier)) {
		printf("build:        validated (%s)\n", tier_text(t->tier));
		return;
	}
	if (tier_is(t, "equivalent")) {
		printf("build:        equivalent (to %s)\n", t->ref);
		return;
	}
	n = nearest_build(u);
	printf("build:        not validated (%s); nearest validated build: %s%s%s%s; to port: make port KVER=%s; whether it is equivalent to a validated build: vmamerge check-kernel\n",
	       u->version, n ? n->release : "none of this series",
	       n ? " (" : "", n ? n->debver : "", n ? ")" : "", u->release);
}

/*
 * "build" of status --json: validated or not, the tier ("full", "smoke",
 * "debug" from module/builds.list; "equivalent" for a build proven
 * identical to the validated build "equivalent_to"; "refused" for a build
 * the module does not load on) and the nearest validated build (the build
 * itself when it is validated, the one it is equivalent to, else the one
 * to port from; null when none of its series is).
 */
static void status_build_json(const struct utsname *u,
			      const struct build_tier *t)
{
	const struct vmamerge_build *n = nearest_build(u);
	bool validated = tier_validated(t->tier);
	bool eq = tier_is(t, "equivalent");

	printf("{\"validated\": %s, \"tier\": ", json_bool(validated));
	json_string(stdout, t->tier);
	printf(", \"nearest\": ");
	if (validated || eq || n)
		json_string(stdout, validated ? u->release : eq ? t->ref :
			    n->release);
	else
		printf("null");
	printf(", \"equivalent_to\": ");
	if (eq)
		json_string(stdout, t->ref);
	else
		printf("null");
	printf("}");
}

/* What status shows; -1 where unknown. */
struct status {
	struct utsname uts;
	bool have_uts;
	struct build_tier tier;	/* when have_uts */
	char *version;		/* the module's, from sysfs */
	int lp_enabled, lp_transition;
	bool have_abi, have_config, have_self;
	struct vmamerge_config cfg;
	__u32 self_state;
};

static int sysfs_bool(const char *path)
{
	char *v = read_line(path);
	int ret = !v ? -1 : !strcmp(v, "1") ? 1 : !strcmp(v, "0") ? 0 : -1;

	free(v);
	return ret;
}

/* Config (ioctl, else debugfs) and our own state into st. */
static void status_collect(int fd, struct status *st)
{
	struct vmamerge_query q;
	struct target self;
	int ret = fd >= 0 ? get_config(fd, &st->cfg) : fd;

	if (ret && fd >= 0)
		ioctl_error("get config", -ret, CTX_SELF, 0);
	if (!ret)
		st->have_abi = st->have_config = true;
	else if (!config_from_debugfs(&st->cfg))
		st->have_config = true;
	if (fd < 0)
		return;
	target_self(&self);
	ret = query(fd, &self, false, &q);
	if (ret) {
		ioctl_error("query", -ret, CTX_SELF, 0);
		return;
	}
	st->have_self = true;
	st->self_state = q.state;
}

static void status_text(const struct status *st)
{
	char buf[128];

	printf("livepatch:    ");
	if (st->lp_enabled < 0)
		printf("not registered (%s missing)\n", SYSFS_LIVEPATCH);
	else
		printf("%s%s\n", st->lp_enabled ? "enabled" : "disabled",
		       st->lp_transition == 1 ? ", transition in progress" :
		       st->lp_transition == 0 ? ", no transition in progress" : "");
	if (st->have_abi)
		printf("abi version:  %u (this tool: %d)%s\n", st->cfg.abi_version,
		       VMAMERGE_ABI_VERSION,
		       st->cfg.abi_version != VMAMERGE_ABI_VERSION ?
		       "  MISMATCH" : "");
	else if (st->have_config)
		printf("abi version:  unknown (read from %s)\n", DEBUGFS_DIR);
	if (st->have_config) {
		format_mode(buf, sizeof(buf), st->cfg.mode);
		printf("mode:         %s\n", buf);
		format_features(buf, sizeof(buf), st->cfg.features);
		printf("features:     %s\n", buf);
	} else {
		printf("mode:         unknown\nfeatures:     unknown\n");
	}
	if (st->have_self)
		print_state_line(stdout, "this process: ", st->self_state);
	else
		printf("this process: unknown (%s not usable)\n", VMAMERGE_DEVICE);
}

static void json_tristate(int v)
{
	printf("%s", v < 0 ? "null" : json_bool(v));
}

static void status_json(const struct status *st)
{
	printf("{\"kernel\": ");
	json_string(stdout, st->have_uts ? st->uts.release : "");
	if (st->have_uts) {
		printf(", \"build\": ");
		status_build_json(&st->uts, &st->tier);
	}
	printf(", \"module\": {\"loaded\": true, \"version\": ");
	if (st->version)
		json_string(stdout, st->version);
	else
		printf("null");
	printf("}, \"tool_version\": \"%s\", \"livepatch\": {\"enabled\": ",
	       VMAMERGE_VERSION);
	json_tristate(st->lp_enabled);
	printf(", \"transition\": ");
	json_tristate(st->lp_transition);
	printf("}, \"abi_version\": ");
	if (st->have_abi)
		printf("%u", st->cfg.abi_version);
	else
		printf("null");
	printf(", \"tool_abi_version\": %d, \"mode\": ", VMAMERGE_ABI_VERSION);
	if (st->have_config && mode_name(st->cfg.mode))
		json_string(stdout, mode_name(st->cfg.mode));
	else
		printf("null");
	printf(", \"features\": ");
	if (st->have_config)
		json_features(stdout, st->cfg.features);
	else
		printf("null");
	printf(", \"this_process\": ");
	if (st->have_self)
		json_state(stdout, st->self_state);
	else
		printf("null");
	printf("}\n");
}

/*
 * Why a module might not load here, and what to do about it: no
 * livepatch support, or lockdown (Secure Boot) refusing unsigned modules.
 */
static void status_load_hints(void)
{
	char *lockdown;

	if (access("/sys/kernel/livepatch", F_OK))
		msg("this kernel has no livepatch support (CONFIG_LIVEPATCH): vmamerge cannot work on it");
	lockdown = read_line("/sys/kernel/security/lockdown");
	if (lockdown && !strstr(lockdown, "[none]"))
		msg("kernel lockdown is on (%s): only signed modules load; dkms signs with /var/lib/dkms/mok.key - enroll it once with 'sudo mokutil --import /var/lib/dkms/mok.pub' and reboot",
		    lockdown);
	free(lockdown);
}

/*
 * status without the module: the kernel and its build (what a script
 * needs before loading), "module: not loaded", and why, as text or as one
 * JSON object whose "error" says it.  Exit status 1.
 */
static int status_unloaded(const struct cli *c, struct status *st)
{
	if (!c->json && st->have_uts) {
		printf("kernel:       %s\n", st->uts.release);
		status_build_line(&st->uts, &st->tier);
	}
	if (!c->json) {
		printf("module:       not loaded\n");
		fflush(stdout);
	}
	if (st->have_uts && tier_is(&st->tier, "refused"))
		msg("module not loaded: no module is built for %s, which is not a validated build: boot a validated kernel, or port this one (make port KVER=%s); 'vmamerge check-kernel' says whether it is equivalent to a validated build",
		    st->uts.release, st->uts.release);
	else
		msg("module not loaded: load it with 'sudo modprobe vmamerge' (after 'sudo make install')");
	status_load_hints();
	if (c->json) {
		printf("{\"kernel\": ");
		json_string(stdout, st->have_uts ? st->uts.release : "");
		if (st->have_uts) {
			printf(", \"build\": ");
			status_build_json(&st->uts, &st->tier);
		}
		printf(", \"module\": {\"loaded\": false, \"version\": null}, \"tool_version\": \"%s\", \"error\": ",
		       VMAMERGE_VERSION);
		json_string(stdout, json_err);
		printf("}\n");
		/* the object has it: main() must not print a second one */
		json_err[0] = '\0';
	}
	return EXIT_RUNTIME;
}

static int cmd_status(const struct cli *c)
{
	struct status st;
	int fd;

	memset(&st, 0, sizeof(st));
	st.have_uts = !uname(&st.uts);
	if (st.have_uts)
		running_tier(&st.uts, &st.tier);
	if (!module_loaded())
		return status_unloaded(c, &st);
	st.version = read_line(SYSFS_MODULE "/version");
	st.lp_enabled = sysfs_bool(SYSFS_LIVEPATCH "/enabled");
	st.lp_transition = sysfs_bool(SYSFS_LIVEPATCH "/transition");
	fd = dev_open(false, true);
	if (fd < 0)
		device_error(-fd);
	status_collect(fd, &st);
	if (fd >= 0)
		close(fd);
	if (c->json) {
		if (fd >= 0)
			status_json(&st);
	} else {
		if (st.have_uts) {
			printf("kernel:       %s\n", st.uts.release);
			status_build_line(&st.uts, &st.tier);
		}
		printf("module:       loaded%s%s\n", st.version ? ", version " : "",
		       st.version ? st.version : "");
		status_text(&st);
	}
	free(st.version);
	return fd < 0 ? EXIT_RUNTIME : 0;
}

/* ---- mode, features ---- */

/* Current config via ioctl, else debugfs.  0 or -1 (printed). */
static int read_config(struct vmamerge_config *cfg)
{
	int fd = dev_open(false, true), ret;

	if (fd < 0) {
		if (!config_from_debugfs(cfg))
			return 0;
		device_error(-fd);
		return -1;
	}
	ret = get_config(fd, cfg);
	close(fd);
	if (ret) {
		ioctl_error("get config", -ret, CTX_SELF, 0);
		return -1;
	}
	return 0;
}

/*
 * Print the mode or the features: text as debugfs shows them, or JSON.
 * After a change, only with --json (the new value, read back).
 */
static int show_config(const struct cli *c, bool changed)
{
	struct vmamerge_config cfg;
	char buf[128];

	if (changed && !c->json)
		return 0;
	if (read_config(&cfg))
		return EXIT_RUNTIME;
	if (c->json && c->cmd == CMD_MODE) {
		printf("{\"mode\": ");
		if (mode_name(cfg.mode))
			json_string(stdout, mode_name(cfg.mode));
		else
			printf("null");
		printf("}\n");
	} else if (c->json) {
		printf("{\"features\": ");
		json_features(stdout, cfg.features);
		printf("}\n");
	} else {
		if (c->cmd == CMD_MODE)
			format_mode(buf, sizeof(buf), cfg.mode);
		else
			format_features(buf, sizeof(buf), cfg.features);
		printf("%s\n", buf);
	}
	return 0;
}

static int cmd_mode(const struct cli *c)
{
	int fd, ret;

	if (!c->nargs)
		return show_config(c, false);
	fd = dev_open(true, false);
	if (fd < 0)
		return EXIT_RUNTIME;
	ret = set_config(fd, VMAMERGE_CONFIG_SET_MODE,
			 mode_from_name(c->args[0]), 0);
	close(fd);
	if (ret) {
		ioctl_error("set mode", -ret, CTX_CONFIG, 0);
		return EXIT_RUNTIME;
	}
	return show_config(c, true);
}

static int cmd_features(const struct cli *c)
{
	struct vmamerge_config cfg;
	unsigned int mask;
	char buf[128];
	int fd, ret;

	if (!c->nargs)
		return show_config(c, false);
	fd = dev_open(true, false);
	if (fd < 0)
		return EXIT_RUNTIME;
	ret = get_config(fd, &cfg);
	if (ret) {
		ioctl_error("get config", -ret, CTX_SELF, 0);
		close(fd);
		return EXIT_RUNTIME;
	}
	mask = cfg.features;
	/* cli_parse() checked the tokens */
	features_apply(&mask, c->nargs, c->args, buf, sizeof(buf));
	ret = set_config(fd, VMAMERGE_CONFIG_SET_FEATURES, 0, mask);
	close(fd);
	if (ret) {
		ioctl_error("set features", -ret, CTX_CONFIG, 0);
		return EXIT_RUNTIME;
	}
	return show_config(c, true);
}

/* ---- enable, disable ---- */

static int cmd_advise(const struct cli *c, __u32 advice)
{
	struct target t;
	int fd, ret;

	fd = dev_open(true, false);
	if (fd < 0)
		return EXIT_RUNTIME;
	if (target_open(&t, c->pid)) {
		close(fd);
		return EXIT_RUNTIME;
	}
	ret = advise(fd, &t, advice,
		     c->no_exec ? VMAMERGE_ADVISE_F_NO_EXEC : 0);
	target_close(&t);
	close(fd);
	if (ret) {
		ioctl_error(advice == VMAMERGE_ADVISE_ENABLE ? "enable" : "disable",
			    -ret, CTX_OTHER, c->pid);
		return EXIT_RUNTIME;
	}
	return 0;
}

/* ---- run ---- */

static int exec_status(int err)
{
	return err == ENOENT || err == ENOTDIR ? 127 : 126;
}

static void exec_error(const char *cmd, int err)
{
	if (err == ENOENT)
		msg("%s: command not found", cmd);
	else
		msg("%s: cannot execute: %s", cmd, strerror(err));
}

/*
 * Opt ourselves in and become CMD.  Without --no-exec the opt-in is kept
 * across every execve (CMD and whatever it executes); with --no-exec it is
 * kept across this one execve only (VMAMERGE_ADVISE_F_EXEC_ONCE), so CMD
 * and its forks are opted in but the programs CMD executes are not.
 */
static int cmd_run(const struct cli *c)
{
	__u64 flags = c->no_exec ? VMAMERGE_ADVISE_F_EXEC_ONCE : 0;
	struct target self;
	int fd, ret;

	fd = dev_open(true, false);
	if (fd < 0)
		return EXIT_RUN_FAILED;
	target_self(&self);
	ret = advise(fd, &self, VMAMERGE_ADVISE_ENABLE, flags);
	close(fd);
	if (ret) {
		ioctl_error("enable", -ret, CTX_SELF, 0);
		return EXIT_RUN_FAILED;
	}
	execvp(c->args[0], c->args);
	ret = errno;
	exec_error(c->args[0], ret);
	return exec_status(ret);
}

/* ---- stats ---- */

static void stats_text(const struct cli *c, const struct vmamerge_query *q,
		       unsigned int nr)
{
	char buf[32];
	size_t w = 0, l;
	unsigned int i;

	if (c->have_pid) {
		printf("pid %d: ", (int)c->pid);
		print_state_line(stdout, "", q->state);
	}
	for (i = 0; i < nr; i++) {
		l = strlen(counter_name(i, buf, sizeof(buf)));
		if (l > w)
			w = l;
	}
	for (i = 0; i < nr; i++)
		printf("%-*s %llu\n", (int)w, counter_name(i, buf, sizeof(buf)),
		       (unsigned long long)q->counters[i]);
}

static unsigned int nr_counters_of(const struct vmamerge_query *q)
{
	return q->nr_counters > VMAMERGE_MAX_COUNTERS ? VMAMERGE_MAX_COUNTERS :
	       q->nr_counters;
}

static void json_counters(const struct vmamerge_query *q)
{
	unsigned int i, nr = nr_counters_of(q);
	char buf[32];

	printf("{");
	for (i = 0; i < nr; i++) {
		printf("%s", i ? ", " : "");
		json_string(stdout, counter_name(i, buf, sizeof(buf)));
		printf(": %llu", (unsigned long long)q->counters[i]);
	}
	printf("}");
}

static void stats_json(const struct cli *c, const struct vmamerge_query *q)
{
	if (c->have_pid) {
		printf("{\"pid\": %d, \"state\": ", (int)c->pid);
		json_state(stdout, q->state);
	} else {
		printf("{\"pid\": null, \"state\": null");
	}
	printf(", \"counters\": ");
	json_counters(q);
	printf("}\n");
}

/*
 * stats --all: every process this user may query that is opted in (like
 * /proc/PID/ksm_stat for KSM), found through /proc.
 */
static int cmd_stats_all(const struct cli *c)
{
	size_t nr_opted = 0, nr_hidden = 0;
	unsigned int i, nr, shown;
	struct vmamerge_query q;
	char path[64], buf[32], *comm;
	struct dirent *e;
	struct target t;
	pid_t pid;
	DIR *d;
	int fd, ret;

	fd = dev_open(false, false);
	if (fd < 0)
		return EXIT_RUNTIME;
	d = opendir("/proc");
	if (!d) {
		msg("cannot read /proc: %s", strerror(errno));
		close(fd);
		return EXIT_RUNTIME;
	}
	if (c->json)
		printf("{\"processes\": [");
	while ((e = readdir(d))) {
		if (parse_pid(e->d_name, &pid))
			continue;
		t.kind = VMAMERGE_TARGET_PID;	/* no pidfd per process */
		t.id = pid;
		t.pidfd = -1;
		t.pid = pid;
		ret = query(fd, &t, false, &q);
		if (ret == -EPERM || ret == -EACCES)
			nr_hidden++;
		/* gone since (ESRCH), kernel threads (EINVAL): not listed */
		if (ret || !(q.state & VMAMERGE_STATE_OPTED_IN))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		comm = read_line(path);
		if (c->json) {
			printf("%s\n  {\"pid\": %d, \"comm\": ", nr_opted ? "," : "",
			       (int)pid);
			json_string(stdout, comm ? comm : "");
			printf(", \"state\": ");
			json_state(stdout, q.state);
			printf(", \"counters\": ");
			json_counters(&q);
			printf("}");
		} else {
			printf("pid %d (%s): ", (int)pid, comm ? comm : "?");
			print_state_line(stdout, "", q.state);
			nr = nr_counters_of(&q);
			for (i = 0, shown = 0; i < nr; i++) {
				if (!q.counters[i])
					continue;
				printf("%s%s %llu", shown++ ? ", " : "  ",
				       counter_name(i, buf, sizeof(buf)),
				       (unsigned long long)q.counters[i]);
			}
			printf("%s\n", shown ? "" : "  (all counters 0)");
		}
		free(comm);
		nr_opted++;
	}
	closedir(d);
	close(fd);
	if (c->json) {
		printf("],\n \"nr_processes\": %zu, \"not_readable\": %zu}\n",
		       nr_opted, nr_hidden);
		return 0;
	}
	printf("%zu opted-in process%s", nr_opted, nr_opted == 1 ? "" : "es");
	if (nr_hidden)
		printf(" (%zu other process%s not readable by this user)", nr_hidden,
		       nr_hidden == 1 ? "" : "es");
	printf("\n");
	return 0;
}

/* Global counters from debugfs "name value" lines, into q. */
static int stats_from_debugfs(struct vmamerge_query *q)
{
	char *text = read_file(DEBUGFS_DIR "/stats"), *line, *save = NULL;
	char name[64], buf[32];
	unsigned long long v;
	unsigned int i;

	if (!text)
		return -1;
	memset(q, 0, sizeof(*q));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63s %llu", name, &v) != 2)
			continue;
		for (i = 0; i < VMAMERGE_NR_COUNTERS; i++)
			if (!strcmp(name, counter_name(i, buf, sizeof(buf)))) {
				q->counters[i] = v;
				if (i + 1 > q->nr_counters)
					q->nr_counters = i + 1;
			}
	}
	free(text);
	return q->nr_counters ? 0 : -1;
}

static int cmd_stats(const struct cli *c)
{
	struct vmamerge_query q;
	struct target t;
	int fd, ret;

	if (c->all)
		return cmd_stats_all(c);
	fd = dev_open(false, true);
	if (fd < 0) {
		if (c->have_pid || stats_from_debugfs(&q)) {
			device_error(-fd);
			return EXIT_RUNTIME;
		}
	} else {
		if (c->have_pid) {
			if (target_open(&t, c->pid)) {
				close(fd);
				return EXIT_RUNTIME;
			}
		} else {
			target_self(&t);
		}
		ret = query(fd, &t, !c->have_pid, &q);
		target_close(&t);
		close(fd);
		if (ret) {
			ioctl_error("query", -ret,
				    c->have_pid ? CTX_OTHER : CTX_SELF, c->pid);
			return EXIT_RUNTIME;
		}
	}
	if (c->json)
		stats_json(c, &q);
	else
		stats_text(c, &q, nr_counters_of(&q));
	return 0;
}

/* ---- maps ---- */

static void proc_error(const char *path, int err, pid_t pid)
{
	if (err == ENOENT || err == ESRCH)
		msg("no such process: %d", (int)pid);
	else if (err == EACCES || err == EPERM)
		msg("permission denied reading %s (needs ptrace read rights over the process)",
		    path);
	else
		msg("cannot read %s: %s", path, strerror(err));
}

/* Read smaps (for VmFlags), else maps, and numa_maps if readable. */
static int maps_load(pid_t pid, struct vma_list *list, char *src, size_t len)
{
	char path[64], *text;
	size_t bad = 0;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	text = read_file(path);
	if (!text) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		text = read_file(path);
	}
	if (!text) {
		proc_error(path, errno, pid);
		return -1;
	}
	snprintf(src, len, "%s", path);
	ret = maps_parse(list, text, &bad);
	free(text);
	if (ret == -1) {
		msg("%s: cannot parse line %zu", path, bad);
		return -1;
	}
	if (ret) {
		msg("out of memory");
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
	text = read_file(path);
	if (text) {
		if (maps_apply_numa(list, text)) {
			free(text);
			msg("out of memory");
			return -1;
		}
		free(text);
	}
	maps_finish(list);
	return 0;
}

/*
 * What the module could add to /proc: the VMAs as it sees them, merged
 * into list, or why not (note, for the output).  Errors other than "no
 * module" and "module too old" are printed; the /proc analysis goes on.
 */
static void maps_from_module(pid_t pid, struct vma_list *list, char *note,
			     size_t len)
{
	struct vmamerge_vma *kv;
	bool open_failed;
	size_t nr;
	int ret;

	ret = modvmas_load(VMAMERGE_DEVICE, pid, &kv, &nr, &open_failed);
	if (!ret) {
		maps_merge_module(list, kv, nr);
		free(kv);
		note[0] = '\0';
		return;
	}
	if (open_failed && (ret == -ENOENT || ret == -ENXIO || ret == -ENODEV) &&
	    !module_loaded()) {
		snprintf(note, len, "module not loaded");
		return;
	}
	if (ret == -ENOTTY) {
		snprintf(note, len, "the loaded module predates the VMA report");
		return;
	}
	if (open_failed)
		device_error(-ret);
	else if (ret == -ENOMEM)
		msg("VMA report: out of memory");
	else if (ret == -EIO)
		msg("VMA report: the module's answer makes no sense (ABI mismatch?)");
	else
		ioctl_error("VMA report", -ret, CTX_OTHER, pid);
	snprintf(note, len, "the module's VMA report failed");
}

/*
 * One run of pairs[0..nr - 1] (nr + 1 VMAs): start, end, permissions,
 * VMA count and why each VMA stays apart from the next; a lone pair adds
 * what differs between its two VMAs.
 */
static void maps_text_run(const struct vma_list *l, const struct vma_pair *pairs,
			  size_t nr)
{
	const struct vma_info *a = &l->v[pairs[0].a], *b = &l->v[pairs[nr - 1].b];
	char buf[160];

	maps_format_run(buf, sizeof(buf), pairs, nr);
	printf("  %012llx-%012llx %.4s %6zu vmas  %s", a->start, b->end,
	       a->perms, nr + 1, buf);
	if (nr == 1 && pairs->reason == PAIR_FLAGS)
		printf(": [%s] vs [%s]", a->vmflags, b->vmflags);
	else if (nr == 1 && pairs->reason == PAIR_POLICY)
		printf(": %s vs %s", a->policy, b->policy);
	else if (nr == 1 && pairs->reason == PAIR_UNEXPLAINED)
		printf(": vm_flags %#llx vs %#llx, flags %#x vs %#x",
		       a->vm_flags, b->vm_flags, a->mod_flags, b->mod_flags);
	printf("\n");
}

static void maps_text(pid_t pid, const char *src, const char *note,
		      const struct vma_list *l, const struct vma_pair *pairs,
		      const struct maps_summary *s)
{
	const struct vma_info *a;
	char pgoff[24];
	size_t i, j;

	if (l->have_mod)
		printf("VMAs of pid %d (from %s and the module; pgoff in pages, hex):\n",
		       (int)pid, src);
	else
		printf("VMAs of pid %d (from %s; pgoff in pages, hex, '-' = not shown for anonymous VMAs):\n",
		       (int)pid, src);
	for (i = 0; i < l->nr; i++) {
		a = &l->v[i];
		maps_format_pgoff(pgoff, sizeof(pgoff), a);
		printf("  %012llx-%012llx %.4s %12s %s\n", a->start, a->end,
		       a->perms, pgoff, a->name);
	}
	printf("%zu vmas\n", l->nr);
	printf("Runs of adjacent anonymous VMAs that do not merge (start-end, perms, VMAs, reason):\n");
	if (!s->nr_pairs)
		printf("  none\n");
	for (i = 0; i < s->nr_pairs; i = j) {
		j = maps_run_end(pairs, s->nr_pairs, i);
		maps_text_run(l, &pairs[i], j - i);
	}
	maps_print_summary(stdout, s, l->anon_pgoff_visible);
	maps_print_missed(stdout, s);
	if (l->have_mod && l->nr_mod_unmatched)
		printf("(%zu VMAs changed between reading %s and the module's report: their pgoff and anon_vma are not shown)\n",
		       l->nr_mod_unmatched, src);
	if (note[0])
		printf("(%s: pgoff and anon_vma not visible)\n", note);
}

static void json_opt_string(const char *s)
{
	if (s)
		json_string(stdout, s);
	else
		printf("null");
}

/* A VMAMERGE_VMA_* flag of v as true/false, or null if not reported. */
static const char *json_mod_flag(const struct vma_info *v, unsigned int flag)
{
	return v->mod ? json_bool(v->mod_flags & flag) : "null";
}

/*
 * The counts of maps, the same members in both its JSON forms:
 * "nr_vmas", "adjacent_anon_pairs", "missed_merges", "compact_would_leave",
 * "by_reason": {REASON: N}.
 */
static void maps_json_counts(const struct vma_list *l,
			     const struct maps_summary *s)
{
	size_t missed = maps_missed_merges(s);
	unsigned int r;

	printf("\"nr_vmas\": %zu, \"adjacent_anon_pairs\": %zu, \"missed_merges\": %zu, \"compact_would_leave\": %zu, \"by_reason\": {",
	       s->nr_vmas, s->nr_pairs, missed, l->nr - missed);
	for (r = 0; r < PAIR_NR_REASONS; r++)
		printf("%s\"%s\": %zu", r ? ", " : "", pair_reason_name(r),
		       s->by_reason[r]);
	printf("}");
}

/*
 * A run of pairs[0..nr - 1] as JSON, the @k-th of its array; @pair: one
 * of "pairs", which have the same keys as "runs" but "nr_vmas".
 */
static void maps_json_run(const struct vma_list *l, const struct vma_pair *pairs,
			  size_t nr, size_t k, bool pair)
{
	const struct vma_pair *p = pairs, *last = &pairs[nr - 1];

	printf("%s\n  {\"a\": %zu, \"b\": %zu, \"start\": \"0x%llx\", \"end\": \"0x%llx\", ",
	       k ? "," : "", p->a, last->b, l->v[p->a].start, l->v[last->b].end);
	if (!pair)
		printf("\"nr_vmas\": %zu, ", nr + 1);
	printf("\"reason\": \"%s\", \"exact\": %s, \"different_root\": %s, \"candidate\": %s}",
	       pair_reason_name(p->reason), json_bool(p->exact),
	       p->exact && (p->reason == PAIR_ANON_VMA ||
			    p->reason == PAIR_BOTH) ?
	       json_bool(p->different_root) : "null",
	       json_bool(pair_reason_is_candidate(p->reason)));
}

static void maps_json(pid_t pid, const char *src, const char *note,
		      const struct vma_list *l, const struct vma_pair *pairs,
		      const struct maps_summary *s)
{
	const struct vma_info *v;
	size_t i, j, k;

	printf("{\"pid\": %d, \"source\": ", (int)pid);
	json_string(stdout, src);
	printf(", \"module_info\": %s, \"module_note\": ",
	       json_bool(l->have_mod));
	json_opt_string(note[0] ? note : NULL);
	printf(", \"vmas_changed\": %zu", l->nr_mod_unmatched);
	printf(", \"page_size\": %lu, \"anon_pgoff_visible\": %s, \"vmas\": [",
	       1UL << l->page_shift, json_bool(l->anon_pgoff_visible));
	for (i = 0; i < l->nr; i++) {
		v = &l->v[i];
		printf("%s\n  {\"start\": \"0x%llx\", \"end\": \"0x%llx\", \"perms\": \"%.4s\", \"pgoff\": ",
		       i ? "," : "", v->start, v->end, v->perms);
		if (v->pgoff_known)
			printf("%llu", v->pgoff);
		else
			printf("null");
		printf(", \"anon\": %s, \"name\": ", json_bool(v->anon));
		json_string(stdout, v->name);
		printf(", \"vm_flags_smaps\": ");
		json_opt_string(v->vmflags);
		printf(", \"policy\": ");
		json_opt_string(v->policy);
		printf(", \"anon_vma\": %s, \"same_anon_vma_prev\": %s, \"same_anon_vma_root_prev\": %s, \"vm_flags\": ",
		       json_mod_flag(v, VMAMERGE_VMA_ANON),
		       json_mod_flag(v, VMAMERGE_VMA_SAME_AV_PREV),
		       json_mod_flag(v, VMAMERGE_VMA_SAME_ROOT_PREV));
		if (v->mod)
			printf("\"0x%llx\"", v->vm_flags);
		else
			printf("null");
		printf("}");
	}
	printf("],\n \"nr_vmas\": %zu, \"pairs\": [", l->nr);
	for (i = 0; i < s->nr_pairs; i++)
		maps_json_run(l, &pairs[i], 1, i, true);
	printf("],\n \"runs\": [");
	for (i = 0, k = 0; i < s->nr_pairs; i = j, k++) {
		j = maps_run_end(pairs, s->nr_pairs, i);
		maps_json_run(l, &pairs[i], j - i, k, false);
	}
	printf("],\n \"summary\": {");
	maps_json_counts(l, s);
	printf("}}\n");
}

/* vm.max_map_count, or -1 */
static long max_map_count(void)
{
	char *v = read_line("/proc/sys/vm/max_map_count");
	unsigned long long n;
	long ret = -1;

	if (v && !parse_ull_strict(v, LONG_MAX, &n))
		ret = n;
	free(v);
	return ret;
}

/* maps --summary: the counts, the missed merges, the distance to the limit */
static void maps_summary(const struct cli *c, const struct vma_list *l,
			 const struct maps_summary *s)
{
	long max = max_map_count();

	if (c->json) {
		printf("{\"pid\": %d, \"max_map_count\": ", (int)c->pid);
		if (max >= 0)
			printf("%ld, \"headroom\": %ld", max, max - (long)s->nr_vmas);
		else
			printf("null, \"headroom\": null");
		printf(", \"module_info\": %s, ", json_bool(l->have_mod));
		maps_json_counts(l, s);
		printf("}\n");
		return;
	}
	printf("pid %d: %zu vmas", (int)c->pid, s->nr_vmas);
	if (max >= 0)
		printf(", vm.max_map_count %ld (%ld to go)", max,
		       max - (long)s->nr_vmas);
	printf("\n");
	maps_print_missed(stdout, s);
	maps_print_summary(stdout, s, l->anon_pgoff_visible);
}

static int cmd_maps(const struct cli *c)
{
	struct vma_list list;
	struct vma_pair *pairs = NULL;
	struct maps_summary sum;
	char src[64], note[64];
	long ps = sysconf(_SC_PAGESIZE);
	int ret = EXIT_RUNTIME;

	vma_list_init(&list);
	if (ps > 0)
		list.page_shift = __builtin_ctzl(ps);
	if (maps_load(c->pid, &list, src, sizeof(src)))
		goto out;
	maps_from_module(c->pid, &list, note, sizeof(note));
	if (maps_analyze(&list, &pairs, &sum) == (size_t)-1) {
		msg("out of memory");
		goto out;
	}
	if (c->summary)
		maps_summary(c, &list, &sum);
	else if (c->json)
		maps_json(c->pid, src, note, &list, pairs, &sum);
	else
		maps_text(c->pid, src, note, &list, pairs, &sum);
	ret = 0;
out:
	free(pairs);
	vma_list_free(&list);
	return ret;
}

/* ---- compact ---- */

/*
 * EOPNOTSUPP has two causes: say which one the mode shows (both when it
 * cannot be read).
 */
static void compact_not_supported(pid_t pid)
{
	struct vmamerge_config cfg;
	int fd = dev_open(false, true);
	bool known = fd >= 0 && !get_config(fd, &cfg);

	if (fd >= 0)
		close(fd);
	if (known && cfg.mode == VMAMERGE_MODE_NEVER)
		msg("compact: the mode is never, nothing merges: run 'sudo vmamerge mode optin' first");
	else if (known)
		msg("compact: process %d is not opted in: run 'vmamerge enable -p %d' first",
		    (int)pid, (int)pid);
	else
		msg("compact: process %d is not opted in (or the mode is never): run 'vmamerge enable -p %d' first",
		    (int)pid, (int)pid);
}

static void compact_error(int err, pid_t pid)
{
	if (err == EOPNOTSUPP)
		compact_not_supported(pid);
	else if (err == ESHUTDOWN)
		msg("compact: the module's livepatch is disabled, nothing merges: load it again with 'sudo modprobe -r vmamerge && sudo modprobe vmamerge'");
	else
		pid_ioctl_error("compact", "VMAMERGE_IOC_COMPACT", err, pid);
}

/*
 * A fatal signal ends the walk with EINTR (what was merged stays merged);
 * this process dies with it before xioctl() could try again.
 */
static int cmd_compact(const struct cli *c)
{
	struct vmamerge_compact r;
	int ret = pid_ioctl(c->pid, true, VMAMERGE_IOC_COMPACT, &r, sizeof(r));

	if (ret > 0)
		return EXIT_RUNTIME;
	if (ret) {
		compact_error(-ret, c->pid);
		return EXIT_RUNTIME;
	}
	if (c->json)
		compact_print_json(stdout, c->pid, &r);
	else
		compact_print_text(stdout, c->pid, &r);
	return 0;
}

/* ---- verify ---- */

static void verify_error(int err, pid_t pid)
{
	if (err == EPERM || err == EACCES)
		msg("verify: permission denied: must be root (CAP_SYS_ADMIN, and ptrace read rights over pid %d)",
		    (int)pid);
	else
		pid_ioctl_error("verify", "VMAMERGE_IOC_VERIFY", err, pid);
}

/* Exit 0: the invariants hold; 1: a violation; 2: could not check. */
static int cmd_verify(const struct cli *c)
{
	struct vmamerge_verify v;
	int ret = pid_ioctl(c->pid, false, VMAMERGE_IOC_VERIFY, &v, sizeof(v));

	if (ret > 0)
		return EXIT_USAGE;
	if (ret) {
		verify_error(-ret, c->pid);
		return EXIT_USAGE;
	}
	if (c->json)
		verify_print_json(stdout, c->pid, &v);
	else
		verify_print_text(stdout, c->pid, &v);
	return v.nr_violations ? EXIT_RUNTIME : 0;
}

/* ---- check-kernel ---- */

/* kfp: $VMAMERGE_KFP, else where make install puts it (vmamerge-paths.h). */
static const char *kfp_path(void)
{
	const char *p = getenv("VMAMERGE_KFP");

	return p && *p ? p : VMAMERGE_KFP_PATH;
}

/* 0, or -1 after saying why kfp cannot be run and how to get it. */
static int kfp_usable(const char *kfp)
{
	if (!access(kfp, X_OK))
		return 0;
	if (errno == ENOENT)
		msg("check-kernel: kfp is not installed: no %s (it comes with the CLI: sudo make install in the vmamerge source tree, or the vmamerge package; or set VMAMERGE_KFP)",
		    kfp);
	else
		msg("check-kernel: cannot run kfp %s: %s", kfp, strerror(errno));
	return -1;
}

/*
 * path, as an argument of kfp into buf: kfp takes one that starts with
 * '-' for an option, so such a relative path gets "./" in front.
 */
static int kfp_arg(char *buf, size_t len, const char *path)
{
	size_t n = snprintf(buf, len, "%s%s", path[0] == '-' ? "./" : "", path);

	if (n < len)
		return 0;
	msg("check-kernel: path too long: %s", path);
	return -1;
}

/*
 * The image (name "vmlinuz") or config to check into buf: the one given,
 * else the first of Debian's places that exists: /boot/NAME-RELEASE, or
 * /usr/lib/modules/RELEASE/NAME (7.x kernels).  0, or -1 after saying
 * what is missing.
 */
static int kernel_file(char *buf, size_t len, const char *given,
		       const char *name, const char *opt, const char *release)
{
	char boot[PATH_MAX], mod[PATH_MAX];
	const char *path = given;

	if (!path) {
		snprintf(boot, sizeof(boot), "/boot/%s-%s", name, release);
		snprintf(mod, sizeof(mod), "/usr/lib/modules/%s/%s", release, name);
		path = access(boot, F_OK) && !access(mod, F_OK) ? mod : boot;
		if (access(path, F_OK)) {
			msg("check-kernel: no %s of %s: neither %s nor %s exists (give one with %s PATH)",
			    !strcmp(name, "vmlinuz") ? "kernel image" : "kernel config",
			    release, boot, mod, opt);
			return -1;
		}
	}
	if (access(path, R_OK)) {
		msg("check-kernel: cannot read %s: %s%s", path, strerror(errno),
		    errno == EACCES ? " (as root?)" : "");
		return -1;
	}
	return kfp_arg(buf, len, path);
}

static int is_kfp(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 4 && !strcmp(e->d_name + n - 4, ".kfp");
}

static void free_strings(char **v, int n)
{
	while (n > 0)
		free(v[--n]);
	free(v);
}

/*
 * The fingerprints in dir (*.kfp, sorted by name: kfp admits by the first
 * identical one) as paths into *out.  Their number, or -1 after saying
 * what is missing.
 */
static int fingerprints(const char *dir, char ***out)
{
	struct dirent **e;
	int n = scandir(dir, &e, is_kfp, alphasort), i, bad = 0;
	char **p;

	if (n < 0 && errno == ENOENT)
		msg("check-kernel: no fingerprints: %s does not exist (they come with the module source: sudo make install in the vmamerge source tree, or the vmamerge-dkms package; or set VMAMERGE_FINGERPRINTS)",
		    dir);
	else if (n < 0)
		msg("check-kernel: cannot read the fingerprints in %s: %s", dir,
		    strerror(errno));
	else if (!n)
		msg("check-kernel: no fingerprint (*.kfp) in %s (they come with the module source: sudo make install in the vmamerge source tree, or the vmamerge-dkms package; or set VMAMERGE_FINGERPRINTS)",
		    dir);
	if (n <= 0) {
		if (!n)
			free(e);
		return -1;
	}
	p = calloc(n, sizeof(*p));
	for (i = 0; i < n; i++) {
		if (p && asprintf(&p[i], "%s%s/%s", dir[0] == '-' ? "./" : "",
				  dir, e[i]->d_name) < 0) {
			p[i] = NULL;
			bad = 1;
		}
		free(e[i]);
	}
	free(e);
	if (!p || bad) {
		msg("check-kernel: out of memory");
		if (p)
			free_strings(p, n);
		return -1;
	}
	*out = p;
	return n;
}

/* kfp's exit 2: its one "kfp: ..." line says what is wrong, passed on. */
static int kfp_failed(const char *kfp, const struct spawn_out *o)
{
	int n = (int)strcspn(o->err, "\n");

	if (n > 400)
		n = 400;
	if (!strncmp(o->err, "kfp: ", 5))
		msg("check-kernel: %.*s", n, o->err);
	else
		msg("check-kernel: %s failed (exit status 2) without its 'kfp: ...' message%s%.*s",
		    kfp, n ? "; it printed: " : "", n, o->err);
	return -1;
}

/*
 * Run kfp check (argv, the fingerprints last) and take its verdict into
 * *v, which then points into *o and *k (the caller frees them).  0, or
 * -1 after saying what went wrong.
 */
static int kfp_run(char **argv, size_t nfps, struct spawn_out *o,
		   struct kfp_check *k, struct kernel_verdict *v)
{
	int ret = spawn_capture(argv[0], argv, o), code;
	char err[256];

	if (ret) {
		msg("check-kernel: cannot run %s: %s", argv[0], strerror(ret));
		return -1;
	}
	if (WIFSIGNALED(o->status)) {
		msg("check-kernel: %s was killed by signal %d (%s)", argv[0],
		    WTERMSIG(o->status), strsignal(WTERMSIG(o->status)));
		return -1;
	}
	if (o->truncated) {
		msg("check-kernel: %s printed more than %d bytes", argv[0],
		    SPAWN_MAX_OUTPUT);
		return -1;
	}
	code = WEXITSTATUS(o->status);
	if (code == 2)
		return kfp_failed(argv[0], o);
	if (code != 0 && code != 1) {
		msg("check-kernel: %s exited with status %d (kfp check exits 0, 1 or 2)",
		    argv[0], code);
		return -1;
	}
	if (kfp_check_parse(o->out, o->out_len, v->release, nfps, code, k, err,
			    sizeof(err))) {
		msg("check-kernel: the output of %s is not kfp check's: %s",
		    argv[0], err);
		return -1;
	}
	v->tier = k->equivalent ? "equivalent" : "refused";
	v->ref = k->verdict;
	v->build_id = k->build_id;
	return 0;
}

/* A build not in the list: kfp check of its image against the fingerprints. */
static int check_by_kfp(const struct cli *c, struct kernel_verdict *v,
			struct spawn_out *o, struct kfp_check *k)
{
	const char *kfp = kfp_path(), *dir = getenv("VMAMERGE_FINGERPRINTS");
	char image[PATH_MAX], config[PATH_MAX], **fps, **argv;
	int n, ret = -1;

	if (!dir || !*dir)
		dir = FINGERPRINT_DIR;
	if (kfp_usable(kfp) ||
	    kernel_file(image, sizeof(image), c->image, "vmlinuz", "--image",
			v->release) ||
	    kernel_file(config, sizeof(config), c->config, "config", "--config",
			v->release))
		return -1;
	n = fingerprints(dir, &fps);
	if (n < 0)
		return -1;
	argv = calloc(n + 8, sizeof(*argv));
	if (argv) {
		argv[0] = (char *)kfp;
		argv[1] = "check";
		argv[2] = image;
		argv[3] = "--config";
		argv[4] = config;
		argv[5] = "--release";
		argv[6] = (char *)v->release;
		memcpy(argv + 7, fps, n * sizeof(*fps));
		ret = kfp_run(argv, n, o, k, v);
	} else {
		msg("check-kernel: out of memory");
	}
	free(argv);
	free_strings(fps, n);
	return ret;
}

/*
 * check-kernel: a build of module/builds.list is supported as it is (for
 * the running kernel its UTS version must match too; kfp is not run); any
 * other when kfp check proves its image equivalent to one.  Exit 0
 * supported, 1 refused, 2 error (--json: the error inside the object).
 */
static int cmd_check_kernel(const struct cli *c)
{
	struct kernel_verdict v = { 0 };
	struct spawn_out o = { 0 };
	struct kfp_check k = { 0 };
	const struct vmamerge_build *b;
	bool have_u;
	struct utsname u;
	int ret = 0;

	have_u = !uname(&u);
	v.release = c->nargs ? c->args[0] : have_u ? u.release : "";
	if (!c->nargs && (!have_u || !release_valid(u.release))) {
		msg("check-kernel: the running kernel's release '%s' is not one to check: give RELEASE",
		    v.release);
		ret = -1;
	} else {
		b = listed_build(v.release, have_u && !strcmp(v.release, u.release) ?
				 u.version : NULL);
		if (b)
			v.tier = b->tier;
		else
			ret = check_by_kfp(c, &v, &o, &k);
	}
	if (c->json) {
		v.error = ret ? json_err : NULL;
		kernel_verdict_json(stdout, &v);
		/* the object has it: main() must not print a second one */
		json_err[0] = '\0';
	} else {
		kernel_verdict_text(stdout, &v);
	}
	if (!ret)
		ret = tier_validated(v.tier) || !strcmp(v.tier, "equivalent") ?
		      0 : EXIT_RUNTIME;
	else
		ret = EXIT_USAGE;
	kfp_check_free(&k);
	spawn_out_free(&o);
	return ret;
}

/* ---- selftest (selftest.c): the device as run and stats use it ---- */

static int selftest_open(void)
{
	int fd = dev_open(true, false);

	return fd < 0 ? -1 : fd;
}

static int selftest_opt_in(int fd)
{
	struct target self;

	target_self(&self);
	return advise(fd, &self, VMAMERGE_ADVISE_ENABLE, VMAMERGE_ADVISE_F_NO_EXEC);
}

static int selftest_query(int fd, struct vmamerge_query *q)
{
	struct target self;

	target_self(&self);
	return query(fd, &self, false, q);
}

static int cmd_selftest(const struct cli *c)
{
	static const struct selftest_ops ops = {
		.open = selftest_open,
		.config = get_config,
		.opt_in = selftest_opt_in,
		.query = selftest_query,
		.msg = msg,
	};

	return selftest_main(&ops, module_loaded(), c->json);
}

/* ---- main ---- */

static int dispatch(const struct cli *c)
{
	switch (c->cmd) {
	case CMD_HELP:
		cli_help(stdout, c->help_cmd);
		return 0;
	case CMD_VERSION:
		printf("vmamerge %s (ABI version %d)\n", VMAMERGE_VERSION,
		       VMAMERGE_ABI_VERSION);
		return 0;
	case CMD_STATUS:	return cmd_status(c);
	case CMD_MODE:		return cmd_mode(c);
	case CMD_FEATURES:	return cmd_features(c);
	case CMD_ENABLE:	return cmd_advise(c, VMAMERGE_ADVISE_ENABLE);
	case CMD_DISABLE:	return cmd_advise(c, VMAMERGE_ADVISE_DISABLE);
	case CMD_RUN:		return cmd_run(c);
	case CMD_STATS:		return cmd_stats(c);
	case CMD_MAPS:		return cmd_maps(c);
	case CMD_VERIFY:	return cmd_verify(c);
	case CMD_COMPACT:	return cmd_compact(c);
	case CMD_CHECK_KERNEL:	return cmd_check_kernel(c);
	case CMD_SELFTEST:	return cmd_selftest(c);
	default:
		return EXIT_USAGE;
	}
}

/*
 * --json among the options (before a "--"): usage errors as JSON too.
 * Asked before cli_parse(), which reorders argv (getopt_long() permutes
 * it; the features parser moves its tokens to the front and ends them
 * with NULL).
 */
static bool wants_json(int argc, char **argv)
{
	int i;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	bool json_usage = wants_json(argc, argv);
	char err[256];
	struct cli c;
	int ret;

	if (cli_parse(argc, argv, &c, err, sizeof(err))) {
		msg("%s", err);
		if (json_usage)
			json_error(err);
		return cli_usage_status(&c);
	}
	json_mode = c.json;
	ret = dispatch(&c);
	/* verify's 1 is a result (printed), not an error */
	if (json_mode && ret && json_err[0] &&
	    !(c.cmd == CMD_VERIFY && ret == EXIT_RUNTIME))
		json_error(json_err);
	if (fflush(stdout) || ferror(stdout)) {
		msg("write error: %s", strerror(errno));
		/* verify's 1 means "violation found", check-kernel's "refused" */
		return c.cmd == CMD_VERIFY || c.cmd == CMD_CHECK_KERNEL ?
		       EXIT_USAGE : EXIT_RUNTIME;
	}
	return ret;
}
