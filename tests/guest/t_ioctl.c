// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vmamerge: every ioctl with good and bad input, as root and as an
 * unprivileged uid.  Expects the module freshly loaded (defaults: mode
 * optin, all features) and leaves those defaults behind.
 *
 * Errnos asserted (see the summary in run.sh's header):
 *   unknown/bad values, size < VER0, reserved != 0   EINVAL
 *   size > 4096, nonzero bytes beyond the struct      E2BIG
 *   no such process, exited (zombie or reaped)        ESRCH
 *   pidfd that is not an open fd                      EBADF
 *   fd that is not a pidfd                            EINVAL
 *   process without mm (kernel thread)                EINVAL
 *   no ptrace rights over the target                  EPERM
 *   SET_CONFIG without CAP_SYS_ADMIN                  EPERM
 *   state-changing ioctl on an O_RDONLY fd            EBADF
 *   unknown ioctl command                             ENOTTY
 * and after every failing call the states and the config are unchanged.
 */
#include "tap.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

static int fd = -1, rofd = -1;
static pid_t sleeper;		/* a live child we may target */
static int sleeper_wfd;
static int have_kthread;	/* pid 2 is kthreadd */

static const char *const mode_debugfs[] = {
	"always optin [never]",		/* NEVER */
	"always [optin] never",		/* OPTIN */
	"[always] optin never",		/* ALWAYS */
};

static const char *const features_debugfs[] = {
	"renumber transplant",
	"[renumber] transplant",
	"renumber [transplant]",
	"[renumber] [transplant]",
};

/* ---- snapshots: nothing may change when a call fails ---- */

struct snap {
	int self, child;
	int cfg;
	uint32_t mode, features;
};

static struct snap take_snap(void)
{
	struct vmamerge_config c;
	struct snap s;

	s.self = vm_state(fd, VMAMERGE_TARGET_SELF, 0);
	s.child = sleeper > 0 ? vm_state(fd, VMAMERGE_TARGET_PID, sleeper) : 0;
	s.cfg = vm_get_config(fd, &c);
	s.mode = c.mode;
	s.features = c.features;
	return s;
}

static void check_unchanged(const struct snap *b, const char *desc)
{
	struct snap a = take_snap();

	if (a.self == b->self && a.child == b->child && a.cfg == b->cfg &&
	    a.mode == b->mode && a.features == b->features)
		return;
	ok(0, "%s: nothing changed", desc);
	diag("before: self %s child %s mode %u features %#x (%d)", state_str(b->self),
	     state_str(b->child), b->mode, b->features, b->cfg);
	diag("after:  self %s child %s mode %u features %#x (%d)", state_str(a.self),
	     state_str(a.child), a.mode, a.features, a.cfg);
}

/* ---- raw calls with arbitrary sizes ---- */

static union {
	unsigned char b[8192];
	struct vmamerge_advise a;
	struct vmamerge_query q;
	struct vmamerge_config c;
} buf;

/* size: value of the size field; tail_off: if nonzero, buf.b[tail_off] = 1 */
static int raw(int f, unsigned long cmd, uint32_t size, unsigned int tail_off)
{
	buf.a.size = size;	/* size is the first field of every struct */
	if (tail_off)
		buf.b[tail_off] = 1;
	return vm_ioctl(f, cmd, &buf);
}

static void set_advise(uint32_t kind, int32_t id, uint32_t advice, uint64_t flags)
{
	memset(&buf, 0, sizeof(buf));
	buf.a.target_kind = kind;
	buf.a.target_id = id;
	buf.a.advice = advice;
	buf.a.flags = flags;
}

static void set_query(uint32_t kind, int32_t id, uint32_t global)
{
	memset(&buf, 0, sizeof(buf));
	buf.q.target_kind = kind;
	buf.q.target_id = id;
	buf.q.global = global;
}

static void set_config(uint32_t set_mask, uint32_t mode, uint32_t features)
{
	memset(&buf, 0, sizeof(buf));
	buf.c.set_mask = set_mask;
	buf.c.mode = mode;
	buf.c.features = features;
}

/* One failing call: the errno (or either of two) and nothing changed. */
static void fail_call(int f, unsigned long cmd, uint32_t size, unsigned int tail,
		      int e1, int e2, const char *desc)
{
	struct snap s = take_snap();
	int r = raw(f, cmd, size, tail);

	if (e2)
		expect_errno2(r, e1, e2, "%s", desc);
	else
		expect_errno(r, e1, "%s", desc);
	check_unchanged(&s, desc);
}

/* ---- helpers for dead processes ---- */

/* A pid that existed and has been reaped; *pidfd: its pidfd (opened
 * while it lived), now referring to a reaped process. */
static pid_t dead_pid(int *pidfd)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(0);
	*pidfd = sys_pidfd_open(pid, 0);
	waitpid(pid, &st, 0);
	return pid;
}

/* A zombie child (exited, not reaped). */
static pid_t zombie(int *pidfd)
{
	siginfo_t si;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	*pidfd = sys_pidfd_open(pid, 0);
	memset(&si, 0, sizeof(si));
	waitid(P_PID, pid, &si, WEXITED | WNOWAIT);
	return pid;
}

static void set_self(int enabled, uint64_t flags)
{
	int r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0,
			  enabled ? VMAMERGE_ADVISE_ENABLE : VMAMERGE_ADVISE_DISABLE,
			  flags);
	if (r)
		diag("set_self(%d): %s", enabled, errname(-r));
}

static int expect_state(int got, int want, const char *desc)
{
	if (!ok(got == want, "%s: state %s", desc, state_str(want)))
		diag("%s: got %s", desc, state_str(got));
	return got == want;
}

/* ---- tests ---- */

static void test_device_node(void)
{
	struct stat st;

	if (!ok(stat(VMAMERGE_DEVICE, &st) == 0, "%s exists", VMAMERGE_DEVICE)) {
		diag("stat: %s", strerror(errno));
		return;
	}
	ok(S_ISCHR(st.st_mode), "%s is a character device", VMAMERGE_DEVICE);
	if (!ok((st.st_mode & 07777) == 0666, "%s has mode 0666", VMAMERGE_DEVICE))
		diag("mode is %04o", st.st_mode & 07777);
	if (!ok(st.st_uid == 0 && st.st_gid == 0, "%s is owned by root:root",
		VMAMERGE_DEVICE))
		diag("owner %u:%u", st.st_uid, st.st_gid);
	diag("%s is %u:%u", VMAMERGE_DEVICE, major(st.st_rdev), minor(st.st_rdev));
}

static void test_advise_good(void)
{
	int pfd, r;
	pid_t me = getpid();

	set_self(0, 0);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), 0, "initially");

	r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
	expect_errno(r, 0, "ADVISE ENABLE self");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "after ENABLE self");
	r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
	expect_errno(r, 0, "ADVISE ENABLE self again (idempotent)");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "after second ENABLE");
	r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE,
		      VMAMERGE_ADVISE_F_NO_EXEC);
	expect_errno(r, 0, "ADVISE ENABLE|NO_EXEC self over ENABLE");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0),
		     VMAMERGE_STATE_OPTED_IN | VMAMERGE_STATE_ACTIVE,
		     "re-ENABLE with NO_EXEC drops EXEC_KEEP");
	r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
	expect_errno(r, 0, "ADVISE ENABLE self without NO_EXEC");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "re-ENABLE without NO_EXEC sets EXEC_KEEP");
	r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_DISABLE, 0);
	expect_errno(r, 0, "ADVISE DISABLE self");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), 0, "after DISABLE self");
	r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_DISABLE, 0);
	expect_errno(r, 0, "ADVISE DISABLE self again (idempotent)");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), 0, "after second DISABLE");

	/* self through PID and PIDFD */
	r = vm_advise(fd, VMAMERGE_TARGET_PID, me, VMAMERGE_ADVISE_ENABLE,
		      VMAMERGE_ADVISE_F_NO_EXEC);
	expect_errno(r, 0, "ADVISE ENABLE|NO_EXEC own pid");
	expect_state(vm_state(fd, VMAMERGE_TARGET_PID, me),
		     VMAMERGE_STATE_OPTED_IN | VMAMERGE_STATE_ACTIVE,
		     "QUERY own pid");
	r = vm_advise(fd, VMAMERGE_TARGET_PID, me, VMAMERGE_ADVISE_DISABLE, 0);
	expect_errno(r, 0, "ADVISE DISABLE own pid");
	pfd = sys_pidfd_open(me, 0);
	if (pfd < 0) {
		skip("pidfd_open unavailable", "ADVISE through own pidfd");
	} else {
		r = vm_advise(fd, VMAMERGE_TARGET_PIDFD, pfd, VMAMERGE_ADVISE_ENABLE, 0);
		expect_errno(r, 0, "ADVISE ENABLE own pidfd");
		expect_state(vm_state(fd, VMAMERGE_TARGET_PIDFD, pfd), ALL_STATE,
			     "QUERY own pidfd");
		r = vm_advise(fd, VMAMERGE_TARGET_PIDFD, pfd, VMAMERGE_ADVISE_DISABLE, 0);
		expect_errno(r, 0, "ADVISE DISABLE own pidfd");
		close(pfd);
	}
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), 0, "self after pid/pidfd");

	/* another process by pid and by pidfd */
	r = vm_advise(fd, VMAMERGE_TARGET_PID, sleeper, VMAMERGE_ADVISE_ENABLE, 0);
	expect_errno(r, 0, "ADVISE ENABLE child by pid");
	expect_state(vm_state(fd, VMAMERGE_TARGET_PID, sleeper), ALL_STATE,
		     "QUERY child by pid");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), 0,
		     "advising the child leaves the caller alone");
	r = vm_advise(fd, VMAMERGE_TARGET_PID, sleeper, VMAMERGE_ADVISE_DISABLE, 0);
	expect_errno(r, 0, "ADVISE DISABLE child by pid");
	expect_state(vm_state(fd, VMAMERGE_TARGET_PID, sleeper), 0,
		     "QUERY child by pid after DISABLE");
	pfd = sys_pidfd_open(sleeper, 0);
	if (pfd < 0) {
		skip("pidfd_open unavailable", "ADVISE child by pidfd");
	} else {
		r = vm_advise(fd, VMAMERGE_TARGET_PIDFD, pfd, VMAMERGE_ADVISE_ENABLE,
			      VMAMERGE_ADVISE_F_NO_EXEC);
		expect_errno(r, 0, "ADVISE ENABLE|NO_EXEC child by pidfd");
		expect_state(vm_state(fd, VMAMERGE_TARGET_PIDFD, pfd),
			     VMAMERGE_STATE_OPTED_IN | VMAMERGE_STATE_ACTIVE,
			     "QUERY child by pidfd");
		expect_state(vm_state(fd, VMAMERGE_TARGET_PID, sleeper),
			     VMAMERGE_STATE_OPTED_IN | VMAMERGE_STATE_ACTIVE,
			     "QUERY child by pid agrees");
		r = vm_advise(fd, VMAMERGE_TARGET_PIDFD, pfd, VMAMERGE_ADVISE_DISABLE, 0);
		expect_errno(r, 0, "ADVISE DISABLE child by pidfd");
		expect_state(vm_state(fd, VMAMERGE_TARGET_PIDFD, pfd), 0,
			     "QUERY child by pidfd after DISABLE");
		close(pfd);
	}

	/* the size bits of the command number are ignored */
	set_advise(VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
	r = raw(fd, _IOC(_IOC_WRITE, VMAMERGE_IOC_MAGIC, 1, 48),
		sizeof(struct vmamerge_advise), 0);
	expect_errno(r, 0, "ADVISE through a command number with other size bits");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "after ADVISE with other size bits");
	set_self(0, 0);

	/* a larger struct with a zero tail is fine */
	set_advise(VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
	r = raw(fd, VMAMERGE_IOC_ADVISE, 48, 0);
	expect_errno(r, 0, "ADVISE size 48 with zero tail");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "after ADVISE size 48");
	set_advise(VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_DISABLE, 0);
	r = raw(fd, VMAMERGE_IOC_ADVISE, 4096, 0);
	expect_errno(r, 0, "ADVISE size 4096 with zero tail");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), 0, "after ADVISE size 4096");
	set_advise(VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
	r = raw(fd, VMAMERGE_IOC_ADVISE, VMAMERGE_ADVISE_SIZE_VER0, 0);
	expect_errno(r, 0, "ADVISE size VER0");
	set_self(0, 0);
}

/* The bad-input table, run from the enabled and from the disabled state
 * with the advice that would flip it. */
static void test_advise_bad(int enabled)
{
	const uint32_t A = enabled ? VMAMERGE_ADVISE_DISABLE : VMAMERGE_ADVISE_ENABLE;
	const unsigned long C = VMAMERGE_IOC_ADVISE;
	const uint32_t S = sizeof(struct vmamerge_advise);
	const char *st = enabled ? "[enabled]" : "[disabled]";
	int devnull, pfd_dead, pfd_zombie, pfd_k;
	pid_t dead, zomb;
	char d[160];

	set_self(enabled, 0);
	if (enabled)	/* the child too, so a wrong-target bug shows */
		vm_advise(fd, VMAMERGE_TARGET_PID, sleeper, VMAMERGE_ADVISE_ENABLE, 0);
	else
		vm_advise(fd, VMAMERGE_TARGET_PID, sleeper, VMAMERGE_ADVISE_DISABLE, 0);

#define F(desc, e1, e2, size, tail) \
	do { snprintf(d, sizeof(d), "ADVISE %s %s", desc, st); \
	     fail_call(fd, C, size, tail, e1, e2, d); } while (0)

	set_advise(VMAMERGE_TARGET_SELF, 0, 0, 0);
	F("advice 0", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, 3, 0);
	F("advice 3", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, 0xffffffffu, 0);
	F("advice 0xffffffff", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 1ULL << 2);
	F("unknown flag bit 2", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A,
		   VMAMERGE_ADVISE_F_NO_EXEC | VMAMERGE_ADVISE_F_EXEC_ONCE);
	F("NO_EXEC together with EXEC_ONCE", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_DISABLE,
		   VMAMERGE_ADVISE_F_EXEC_ONCE);
	F("DISABLE with EXEC_ONCE", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 1ULL << 63);
	F("unknown flag bit 63", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	buf.a.reserved[0] = 1;
	F("reserved[0]=1", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	buf.a.reserved[1] = 1ULL << 63;
	F("reserved[1]=1<<63", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	F("size 0", EINVAL, 0, 0, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	F("size 8", EINVAL, 0, 8, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	F("size VER0-1", EINVAL, 0, VMAMERGE_ADVISE_SIZE_VER0 - 1, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	F("size 4097", E2BIG, 0, 4097, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	F("size 8192 (zero tail)", E2BIG, 0, 8192, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	F("size 0xffffffff", E2BIG, 0, 0xffffffffu, 0);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	F("size 48 nonzero byte 40", E2BIG, 0, 48, 40);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	F("size 48 nonzero byte 47", E2BIG, 0, 48, 47);
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	F("size 4096 nonzero byte 4095", E2BIG, 0, 4096, 4095);
	set_advise(3, 0, A, 0);
	F("target_kind 3", EINVAL, 0, S, 0);
	set_advise(0xffffffffu, 0, A, 0);
	F("target_kind 0xffffffff", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, 1, A, 0);
	F("SELF with target_id 1", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, getpid(), A, 0);
	F("SELF with target_id = own pid", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_SELF, -1, A, 0);
	F("SELF with target_id -1", EINVAL, 0, S, 0);

	/* processes that are gone or have no mm */
	dead = dead_pid(&pfd_dead);
	set_advise(VMAMERGE_TARGET_PID, dead, A, 0);
	F("PID of a reaped child", ESRCH, 0, S, 0);
	if (pfd_dead >= 0) {
		set_advise(VMAMERGE_TARGET_PIDFD, pfd_dead, A, 0);
		F("PIDFD of a reaped child", ESRCH, 0, S, 0);
		close(pfd_dead);
	}
	zomb = zombie(&pfd_zombie);
	set_advise(VMAMERGE_TARGET_PID, zomb, A, 0);
	F("PID of an exited (zombie) child", ESRCH, 0, S, 0);
	if (pfd_zombie >= 0) {
		set_advise(VMAMERGE_TARGET_PIDFD, pfd_zombie, A, 0);
		F("PIDFD of an exited (zombie) child", ESRCH, 0, S, 0);
		close(pfd_zombie);
	}
	waitpid(zomb, NULL, 0);
	set_advise(VMAMERGE_TARGET_PID, -1, A, 0);
	F("PID -1", EINVAL, ESRCH, S, 0);
	set_advise(VMAMERGE_TARGET_PID, INT_MIN, A, 0);
	F("PID INT_MIN", EINVAL, ESRCH, S, 0);
	set_advise(VMAMERGE_TARGET_PID, 0, A, 0);
	F("PID 0", EINVAL, ESRCH, S, 0);
	set_advise(VMAMERGE_TARGET_PID, 0x3fffffff, A, 0);
	F("PID 0x3fffffff (beyond pid_max)", ESRCH, 0, S, 0);
	if (have_kthread) {
		set_advise(VMAMERGE_TARGET_PID, 2, A, 0);
		F("PID 2 (kthreadd, no mm)", EINVAL, 0, S, 0);
		pfd_k = sys_pidfd_open(2, 0);
		if (pfd_k >= 0) {
			set_advise(VMAMERGE_TARGET_PIDFD, pfd_k, A, 0);
			F("PIDFD of kthreadd (no mm)", EINVAL, 0, S, 0);
			close(pfd_k);
		}
	} else {
		skip("pid 2 is not kthreadd", "ADVISE kernel thread %s", st);
	}
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	set_advise(VMAMERGE_TARGET_PIDFD, devnull, A, 0);
	F("PIDFD = fd of /dev/null", EINVAL, 0, S, 0);
	close(devnull);
	set_advise(VMAMERGE_TARGET_PIDFD, fd, A, 0);
	F("PIDFD = fd of /dev/vmamerge", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_PIDFD, -1, A, 0);
	F("PIDFD -1", EBADF, 0, S, 0);
	set_advise(VMAMERGE_TARGET_PIDFD, 99999, A, 0);
	F("PIDFD 99999 (not open)", EBADF, 0, S, 0);

	/* bad input aimed at the live child must not touch it either */
	set_advise(VMAMERGE_TARGET_PID, sleeper, A, 1ULL << 5);
	F("child by pid with an unknown flag", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_PID, sleeper, A, 0);
	buf.a.reserved[0] = 7;
	F("child by pid with reserved[0]", EINVAL, 0, S, 0);
	set_advise(VMAMERGE_TARGET_PID, sleeper, A, 0);
	F("child by pid with nonzero tail", E2BIG, 0, 64, 63);

	/* read-only fd */
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	snprintf(d, sizeof(d), "ADVISE on an O_RDONLY fd %s", st);
	fail_call(rofd, C, S, 0, EBADF, 0, d);
	set_advise(VMAMERGE_TARGET_PID, sleeper, A, 0);
	snprintf(d, sizeof(d), "ADVISE child on an O_RDONLY fd %s", st);
	fail_call(rofd, C, S, 0, EBADF, 0, d);

	/* unknown commands */
	set_advise(VMAMERGE_TARGET_SELF, 0, A, 0);
	snprintf(d, sizeof(d), "unknown command _IO(0xBB, 0) %s", st);
	fail_call(fd, _IO(VMAMERGE_IOC_MAGIC, 0), S, 0, ENOTTY, 0, d);
	snprintf(d, sizeof(d), "unknown command _IOW(0xBB, 5) %s", st);
	fail_call(fd, _IOW(VMAMERGE_IOC_MAGIC, 5, struct vmamerge_advise), S, 0,
		  ENOTTY, 0, d);
	snprintf(d, sizeof(d), "unknown command _IOWR(0xBB, 0xff) %s", st);
	fail_call(fd, _IOWR(VMAMERGE_IOC_MAGIC, 0xff, struct vmamerge_advise), S, 0,
		  ENOTTY, 0, d);
	snprintf(d, sizeof(d), "ADVISE number with another magic %s", st);
	fail_call(fd, _IOW('x', 1, struct vmamerge_advise), S, 0, ENOTTY, 0, d);
	snprintf(d, sizeof(d), "TCGETS on the device %s", st);
	fail_call(fd, 0x5401, S, 0, ENOTTY, 0, d);
#undef F

	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), enabled ? ALL_STATE : 0,
		     enabled ? "self after bad ADVISEs [enabled]" :
			       "self after bad ADVISEs [disabled]");
	set_self(0, 0);
	vm_advise(fd, VMAMERGE_TARGET_PID, sleeper, VMAMERGE_ADVISE_DISABLE, 0);
}

/*
 * Milestone 1: the stock merge outcomes are counted (every attempt ends
 * as exactly one of failed / av_merge_null / av_merge_same), everything
 * that belongs to renumber and transplant reads zero.
 */
static int counters_consistent(const struct vmamerge_query *q, const char *what)
{
	const __u64 *c = q->counters;
	uint64_t outcomes = c[VMAMERGE_C_MERGE_FAILED] +
			    c[VMAMERGE_C_AV_MERGE_NULL] +
			    c[VMAMERGE_C_AV_MERGE_SAME];
	unsigned int i;

	if (c[VMAMERGE_C_MERGE_ATTEMPTS] != outcomes) {
		diag("%s: merge_attempts %llu != outcomes %llu", what,
		     (unsigned long long)c[VMAMERGE_C_MERGE_ATTEMPTS],
		     (unsigned long long)outcomes);
		return 0;
	}
	for (i = VMAMERGE_C_AV_MERGE_DIFFERENT; i < VMAMERGE_NR_COUNTERS; i++)
		if (c[i]) {
			diag("%s: counter %u = %llu", what, i,
			     (unsigned long long)c[i]);
			return 0;
		}
	return 1;
}

static void test_query(void)
{
	const unsigned long C = VMAMERGE_IOC_QUERY;
	const uint32_t S = sizeof(struct vmamerge_query);
	struct vmamerge_query q;
	int r, pfd, devnull, pfd_dead;
	pid_t dead;

	ok(S == VMAMERGE_QUERY_SIZE_VER0, "sizeof(struct vmamerge_query) == VER0 (%u)", S);

	set_self(1, 0);
	r = vm_query(fd, VMAMERGE_TARGET_SELF, 0, 0, &q);
	expect_errno(r, 0, "QUERY self");
	if (!ok(q.nr_counters == VMAMERGE_NR_COUNTERS, "QUERY self: nr_counters == %d",
		VMAMERGE_NR_COUNTERS))
		diag("nr_counters %u", q.nr_counters);
	expect_state(q.state, ALL_STATE, "QUERY self (opted in)");
	ok(counters_consistent(&q, "self"),
	   "QUERY self: attempts == outcomes, feature counters zero");

	r = vm_query(rofd, VMAMERGE_TARGET_SELF, 0, 0, &q);
	expect_errno(r, 0, "QUERY self on an O_RDONLY fd");
	expect_state(q.state, ALL_STATE, "QUERY self on an O_RDONLY fd");

	r = vm_query(fd, VMAMERGE_TARGET_SELF, 0, 1, &q);
	expect_errno(r, 0, "QUERY global");
	ok(q.nr_counters == VMAMERGE_NR_COUNTERS, "QUERY global: nr_counters == %d",
	   VMAMERGE_NR_COUNTERS);
	expect_state(q.state, 0, "QUERY global");
	ok(!q.counters[VMAMERGE_C_MERGE_RENUMBER] &&
	   !q.counters[VMAMERGE_C_MERGE_TRANSPLANT] &&
	   !q.counters[VMAMERGE_C_AV_MERGE_DIFFERENT],
	   "QUERY global: renumber/transplant counters zero (milestone 1)");
	r = vm_query(rofd, VMAMERGE_TARGET_SELF, 0, 1, &q);
	expect_errno(r, 0, "QUERY global on an O_RDONLY fd");

	r = vm_query(fd, VMAMERGE_TARGET_PID, sleeper, 0, &q);
	expect_errno(r, 0, "QUERY child by pid");
	ok(q.nr_counters == VMAMERGE_NR_COUNTERS && counters_consistent(&q, "child"),
	   "QUERY child: nr_counters and zero counters");
	expect_state(q.state, 0, "QUERY child (not opted in)");

	/* bigger struct with zero tail */
	set_query(VMAMERGE_TARGET_SELF, 0, 0);
	r = raw(fd, C, 4096, 0);
	expect_errno(r, 0, "QUERY size 4096 with zero tail");
	expect_state(buf.q.state, ALL_STATE, "QUERY size 4096");
	ok(buf.q.nr_counters == VMAMERGE_NR_COUNTERS, "QUERY size 4096: nr_counters");
	set_query(VMAMERGE_TARGET_SELF, 0, 0);
	r = raw(fd, _IOC(_IOC_READ | _IOC_WRITE, VMAMERGE_IOC_MAGIC, 2, 0), S, 0);
	expect_errno(r, 0, "QUERY through a command number with size bits 0");

	/* bad input */
#define F(desc, e1, e2, size, tail) fail_call(fd, C, size, tail, e1, e2, "QUERY " desc)
	set_query(VMAMERGE_TARGET_PID, getpid(), 1);
	F("global=1 with target PID", EINVAL, 0, S, 0);
	pfd = sys_pidfd_open(getpid(), 0);
	set_query(VMAMERGE_TARGET_PIDFD, pfd, 1);
	F("global=1 with target PIDFD", EINVAL, 0, S, 0);
	close(pfd);
	set_query(VMAMERGE_TARGET_SELF, 0, 2);
	F("global=2", EINVAL, 0, S, 0);
	set_query(VMAMERGE_TARGET_SELF, 0, 0);
	buf.q.reserved[0] = 1;
	F("reserved[0]=1", EINVAL, 0, S, 0);
	set_query(VMAMERGE_TARGET_SELF, 0, 0);
	buf.q.reserved[1] = 1;
	F("reserved[1]=1", EINVAL, 0, S, 0);
	set_query(VMAMERGE_TARGET_SELF, 0, 0);
	F("size 40", EINVAL, 0, 40, 0);
	set_query(VMAMERGE_TARGET_SELF, 0, 0);
	F("size VER0-1", EINVAL, 0, VMAMERGE_QUERY_SIZE_VER0 - 1, 0);
	set_query(VMAMERGE_TARGET_SELF, 0, 0);
	F("size 0", EINVAL, 0, 0, 0);
	set_query(VMAMERGE_TARGET_SELF, 0, 0);
	F("size 4097", E2BIG, 0, 4097, 0);
	set_query(VMAMERGE_TARGET_SELF, 0, 0);
	F("size 600 nonzero byte 599", E2BIG, 0, 600, 599);
	set_query(3, 0, 0);
	F("target_kind 3", EINVAL, 0, S, 0);
	set_query(VMAMERGE_TARGET_SELF, 5, 0);
	F("SELF with target_id 5", EINVAL, 0, S, 0);
	dead = dead_pid(&pfd_dead);
	set_query(VMAMERGE_TARGET_PID, dead, 0);
	F("PID of a reaped child", ESRCH, 0, S, 0);
	if (pfd_dead >= 0) {
		set_query(VMAMERGE_TARGET_PIDFD, pfd_dead, 0);
		F("PIDFD of a reaped child", ESRCH, 0, S, 0);
		close(pfd_dead);
	}
	if (have_kthread) {
		set_query(VMAMERGE_TARGET_PID, 2, 0);
		F("PID 2 (kthreadd, no mm)", EINVAL, 0, S, 0);
	}
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	set_query(VMAMERGE_TARGET_PIDFD, devnull, 0);
	F("PIDFD = fd of /dev/null", EINVAL, 0, S, 0);
	close(devnull);
	set_query(VMAMERGE_TARGET_PIDFD, -1, 0);
	F("PIDFD -1", EBADF, 0, S, 0);
#undef F
	set_self(0, 0);
}

static void check_config(uint32_t mode, uint32_t features, const char *desc)
{
	struct vmamerge_config c;
	char b[128];
	int r = vm_get_config(fd, &c);

	if (!ok(r == 0 && c.mode == mode && c.features == features &&
		c.abi_version == VMAMERGE_ABI_VERSION,
		"%s: GET_CONFIG mode %u features %#x abi %d", desc, mode, features,
		VMAMERGE_ABI_VERSION))
		diag("GET_CONFIG: %s mode %u features %#x abi %u", errname(-r), c.mode,
		     c.features, c.abi_version);
	if (mode <= 2) {
		r = read_file(DBG_MODE, b, sizeof(b));
		if (!ok(r >= 0 && !strcmp(b, mode_debugfs[mode]), "%s: debugfs mode reads '%s'",
			desc, mode_debugfs[mode]))
			diag("debugfs mode: %s", r < 0 ? errname(-r) : b);
	}
	if (features <= 3) {
		r = read_file(DBG_FEATURES, b, sizeof(b));
		if (!ok(r >= 0 && !strcmp(b, features_debugfs[features]),
			"%s: debugfs features reads '%s'", desc, features_debugfs[features]))
			diag("debugfs features: %s", r < 0 ? errname(-r) : b);
	}
}

static void test_config(void)
{
	const unsigned long C = VMAMERGE_IOC_SET_CONFIG, G = VMAMERGE_IOC_GET_CONFIG;
	const uint32_t S = sizeof(struct vmamerge_config);
	static const char *const mname[] = { "never", "optin", "always" };
	static const char *const fname[] = { "none", "renumber", "transplant", "all" };
	struct vmamerge_config c;
	uint32_t m, f;
	int r;
	char d[128];

	check_config(VMAMERGE_MODE_OPTIN, VMAMERGE_FEATURES_ALL, "defaults after load");
	r = vm_get_config(rofd, &c);
	expect_errno(r, 0, "GET_CONFIG on an O_RDONLY fd");

	/* GET with bigger/bad structs */
	memset(&buf, 0, sizeof(buf));
	r = raw(fd, G, 4096, 0);
	ok(r == 0 && buf.c.mode == VMAMERGE_MODE_OPTIN && buf.c.abi_version == 1,
	   "GET_CONFIG size 4096 with zero tail");
	memset(&buf, 0, sizeof(buf));
	fail_call(fd, G, 4097, 0, E2BIG, 0, "GET_CONFIG size 4097");
	memset(&buf, 0, sizeof(buf));
	fail_call(fd, G, 64, 63, E2BIG, 0, "GET_CONFIG size 64 nonzero byte 63");
	memset(&buf, 0, sizeof(buf));
	fail_call(fd, G, VMAMERGE_CONFIG_SIZE_VER0 - 1, 0, EINVAL, 0,
		  "GET_CONFIG size VER0-1");
	memset(&buf, 0, sizeof(buf));
	buf.c.reserved0 = 1;
	fail_call(fd, G, S, 0, EINVAL, 0, "GET_CONFIG reserved0=1");
	memset(&buf, 0, sizeof(buf));
	buf.c.reserved[1] = 1;
	fail_call(fd, G, S, 0, EINVAL, 0, "GET_CONFIG reserved[1]=1");
	memset(&buf, 0, sizeof(buf));
	buf.c.set_mask = VMAMERGE_CONFIG_SET_MODE;
	fail_call(fd, G, S, 0, EINVAL, 0, "GET_CONFIG set_mask!=0");

	/* every mode and feature set, read back twice */
	for (m = 0; m < 3; m++) {
		r = vm_set_config(fd, VMAMERGE_CONFIG_SET_MODE, m, 0);
		snprintf(d, sizeof(d), "SET_CONFIG mode %s", mname[m]);
		expect_errno(r, 0, "%s", d);
		check_config(m, VMAMERGE_FEATURES_ALL, d);
	}
	for (f = 0; f < 4; f++) {
		r = vm_set_config(fd, VMAMERGE_CONFIG_SET_FEATURES, 0, f);
		snprintf(d, sizeof(d), "SET_CONFIG features %s", fname[f]);
		expect_errno(r, 0, "%s", d);
		check_config(VMAMERGE_MODE_ALWAYS, f, d);
	}
	r = vm_set_config(fd, VMAMERGE_CONFIG_SET_ALL, VMAMERGE_MODE_NEVER,
			  VMAMERGE_FEATURE_TRANSPLANT);
	expect_errno(r, 0, "SET_CONFIG mode+features at once");
	check_config(VMAMERGE_MODE_NEVER, VMAMERGE_FEATURE_TRANSPLANT,
		     "SET_CONFIG never+transplant");
	set_config(VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_OPTIN, 0);
	r = raw(fd, C, 4096, 0);
	expect_errno(r, 0, "SET_CONFIG size 4096 with zero tail");
	check_config(VMAMERGE_MODE_OPTIN, VMAMERGE_FEATURE_TRANSPLANT,
		     "SET_CONFIG size 4096");

	/* bad SET_CONFIGs change nothing: start from a non-default config */
	vm_set_config(fd, VMAMERGE_CONFIG_SET_ALL, VMAMERGE_MODE_ALWAYS,
		      VMAMERGE_FEATURE_RENUMBER);
#define F(desc, e1, size, tail) fail_call(fd, C, size, tail, e1, 0, "SET_CONFIG " desc)
	set_config(VMAMERGE_CONFIG_SET_MODE, 3, 0);
	F("mode 3", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_MODE, 0xffffffffu, 0);
	F("mode 0xffffffff", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_ALL, 3, VMAMERGE_FEATURES_ALL);
	F("mode 3 with valid features (all-or-nothing)", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_FEATURES, 0, 1U << 2);
	F("feature bit 2", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_FEATURES, 0, 1U << 31);
	F("feature bit 31", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_ALL, VMAMERGE_MODE_NEVER, 0xff);
	F("valid mode with bad features (all-or-nothing)", EINVAL, S, 0);
	set_config(1U << 2, 0, 0);
	F("set_mask bit 2", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_MODE | (1U << 31), VMAMERGE_MODE_NEVER, 0);
	F("set_mask bit 31 with a valid mode", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	buf.c.reserved0 = 1;
	F("reserved0=1", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	buf.c.reserved[0] = 1;
	F("reserved[0]=1", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	buf.c.reserved[1] = 1ULL << 63;
	F("reserved[1]=1<<63", EINVAL, S, 0);
	set_config(VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	F("size 0", EINVAL, 0, 0);
	set_config(VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	F("size VER0-1", EINVAL, VMAMERGE_CONFIG_SIZE_VER0 - 1, 0);
	set_config(VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	F("size 4097", E2BIG, 4097, 0);
	set_config(VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	F("size 44 nonzero byte 40", E2BIG, 44, 40);
	set_config(VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	fail_call(rofd, C, S, 0, EBADF, 0, "SET_CONFIG on an O_RDONLY fd");
#undef F
	check_config(VMAMERGE_MODE_ALWAYS, VMAMERGE_FEATURE_RENUMBER,
		     "after bad SET_CONFIGs");

	/* ACTIVE follows the mode */
	set_self(1, 0);
	vm_set_config(fd, VMAMERGE_CONFIG_SET_ALL, VMAMERGE_MODE_NEVER,
		      VMAMERGE_FEATURES_ALL);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0),
		     VMAMERGE_STATE_OPTED_IN | VMAMERGE_STATE_EXEC_KEEP,
		     "opted in, mode never: not ACTIVE");
	vm_set_config(fd, VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_OPTIN, 0);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "opted in, mode optin: ACTIVE");
	vm_set_config(fd, VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_ALWAYS, 0);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "opted in, mode always: ACTIVE");
	set_self(0, 0);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), VMAMERGE_STATE_ACTIVE,
		     "not opted in, mode always: ACTIVE only");
	expect_state(vm_state(fd, VMAMERGE_TARGET_PID, sleeper), VMAMERGE_STATE_ACTIVE,
		     "child not opted in, mode always: ACTIVE only");
	vm_set_config(fd, VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_OPTIN, 0);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), 0,
		     "not opted in, mode optin: 0");
	vm_set_config(fd, VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), 0,
		     "not opted in, mode never: 0");

	/* restore the defaults */
	r = vm_set_config(fd, VMAMERGE_CONFIG_SET_ALL, VMAMERGE_MODE_OPTIN,
			  VMAMERGE_FEATURES_ALL);
	expect_errno(r, 0, "SET_CONFIG back to the defaults");
	check_config(VMAMERGE_MODE_OPTIN, VMAMERGE_FEATURES_ALL, "defaults restored");
}

/* ---- as uid 65534 ---- */

static pid_t root_pid;

static int unpriv(void *arg)
{
	struct vmamerge_config c;
	int ufd, r, pfd, cwfd;
	pid_t child;

	(void)arg;
	ok(getuid() == 65534 && geteuid() == 65534, "running as uid 65534");
	ufd = vm_open(O_RDWR);
	if (!ok(ufd >= 0, "unprivileged: open %s O_RDWR", VMAMERGE_DEVICE)) {
		diag("open: %s", errname(-ufd));
		return 1;
	}
	/* we inherited the parent's opt-in through fork */
	expect_state(vm_state(ufd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "unprivileged: inherited opt-in from the root parent");
	r = vm_advise(ufd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_DISABLE, 0);
	expect_errno(r, 0, "unprivileged: ADVISE DISABLE self");
	expect_state(vm_state(ufd, VMAMERGE_TARGET_SELF, 0), 0,
		     "unprivileged: after DISABLE self");
	r = vm_advise(ufd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
	expect_errno(r, 0, "unprivileged: ADVISE ENABLE self");
	expect_state(vm_state(ufd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "unprivileged: after ENABLE self");
	r = vm_advise(ufd, VMAMERGE_TARGET_PID, getpid(), VMAMERGE_ADVISE_ENABLE,
		      VMAMERGE_ADVISE_F_NO_EXEC);
	expect_errno(r, 0, "unprivileged: ADVISE ENABLE|NO_EXEC own pid");
	expect_state(vm_state(ufd, VMAMERGE_TARGET_PID, getpid()),
		     VMAMERGE_STATE_OPTED_IN | VMAMERGE_STATE_ACTIVE,
		     "unprivileged: QUERY own pid");

	/* our own child: same uid, a descendant, dumpable */
	child = spawn_sleeper(&cwfd);
	if (child > 0) {
		r = vm_advise(ufd, VMAMERGE_TARGET_PID, child, VMAMERGE_ADVISE_DISABLE, 0);
		expect_errno(r, 0, "unprivileged: ADVISE DISABLE own child by pid");
		expect_state(vm_state(ufd, VMAMERGE_TARGET_PID, child), 0,
			     "unprivileged: QUERY own child by pid");
		pfd = sys_pidfd_open(child, 0);
		r = vm_advise(ufd, VMAMERGE_TARGET_PIDFD, pfd, VMAMERGE_ADVISE_ENABLE, 0);
		expect_errno(r, 0, "unprivileged: ADVISE ENABLE own child by pidfd");
		expect_state(vm_state(ufd, VMAMERGE_TARGET_PIDFD, pfd), ALL_STATE,
			     "unprivileged: QUERY own child by pidfd");
		close(pfd);
		reap_sleeper(child, cwfd);
	}

	/* a root process: no */
	r = vm_advise(ufd, VMAMERGE_TARGET_PID, root_pid, VMAMERGE_ADVISE_DISABLE, 0);
	expect_errno(r, EPERM, "unprivileged: ADVISE DISABLE root parent by pid");
	r = vm_advise(ufd, VMAMERGE_TARGET_PID, root_pid, VMAMERGE_ADVISE_ENABLE,
		      VMAMERGE_ADVISE_F_NO_EXEC);
	expect_errno(r, EPERM, "unprivileged: ADVISE ENABLE|NO_EXEC root parent by pid");
	pfd = sys_pidfd_open(root_pid, 0);
	r = vm_advise(ufd, VMAMERGE_TARGET_PIDFD, pfd, VMAMERGE_ADVISE_DISABLE, 0);
	expect_errno(r, EPERM, "unprivileged: ADVISE DISABLE root parent by pidfd");
	r = vm_state(ufd, VMAMERGE_TARGET_PIDFD, pfd);
	expect_errno(r < 0 ? r : 0, EPERM, "unprivileged: QUERY root parent by pidfd");
	close(pfd);
	r = vm_state(ufd, VMAMERGE_TARGET_PID, root_pid);
	expect_errno(r < 0 ? r : 0, EPERM, "unprivileged: QUERY root parent by pid");
	r = vm_advise(ufd, VMAMERGE_TARGET_PID, 1, VMAMERGE_ADVISE_ENABLE, 0);
	expect_errno(r, EPERM, "unprivileged: ADVISE ENABLE pid 1");
	r = vm_state(ufd, VMAMERGE_TARGET_PID, 1);
	expect_errno(r < 0 ? r : 0, EPERM, "unprivileged: QUERY pid 1");

	/* global config: read yes, write no */
	r = vm_get_config(ufd, &c);
	expect_errno(r, 0, "unprivileged: GET_CONFIG");
	ok(c.mode == VMAMERGE_MODE_OPTIN && c.features == VMAMERGE_FEATURES_ALL,
	   "unprivileged: GET_CONFIG shows the defaults");
	r = vm_set_config(ufd, VMAMERGE_CONFIG_SET_MODE, VMAMERGE_MODE_NEVER, 0);
	expect_errno(r, EPERM, "unprivileged: SET_CONFIG mode never");
	r = vm_set_config(ufd, VMAMERGE_CONFIG_SET_FEATURES, 0, 0);
	expect_errno(r, EPERM, "unprivileged: SET_CONFIG features none");
	r = vm_set_config(ufd, VMAMERGE_CONFIG_SET_ALL, VMAMERGE_MODE_OPTIN,
			  VMAMERGE_FEATURES_ALL);
	expect_errno(r, EPERM, "unprivileged: SET_CONFIG to the current values");

	/* debugfs: any failure will do, the value is checked by the parent */
	r = write_file(DBG_MODE, "never", 5);
	if (!ok(r < 0, "unprivileged: write 'never' to debugfs mode fails"))
		diag("write succeeded");
	else
		diag("debugfs mode write: %s", errname(-r));
	r = write_file(DBG_FEATURES, "none\n", 5);
	ok(r < 0, "unprivileged: write 'none' to debugfs features fails");

	r = vm_advise(ufd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_DISABLE, 0);
	expect_errno(r, 0, "unprivileged: ADVISE DISABLE self at the end");
	close(ufd);
	return 0;
}

static void test_unprivileged(void)
{
	char b[128];
	int r;

	root_pid = getpid();
	set_self(1, 0);
	run_unprivileged(unpriv, NULL);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), ALL_STATE,
		     "root parent unchanged after the unprivileged attempts");
	check_config(VMAMERGE_MODE_OPTIN, VMAMERGE_FEATURES_ALL,
		     "config unchanged after the unprivileged attempts");
	r = read_file(DBG_MODE, b, sizeof(b));
	ok(r > 0 && !strcmp(b, "always [optin] never"),
	   "debugfs mode unchanged after the unprivileged write");
	set_self(0, 0);
}

int main(void)
{
	char comm[64];

	tap_init("t_ioctl", 300);
	test_device_node();
	fd = vm_open(O_RDWR);
	rofd = vm_open(O_RDONLY);
	if (!ok(fd >= 0 && rofd >= 0, "open %s O_RDWR and O_RDONLY", VMAMERGE_DEVICE)) {
		diag("open: %s / %s", errname(-fd), errname(-rofd));
		return tap_exit();
	}
	have_kthread = read_file("/proc/2/comm", comm, sizeof(comm)) > 0 &&
		       !strcmp(comm, "kthreadd");
	sleeper = spawn_sleeper(&sleeper_wfd);
	if (sleeper < 0) {
		ok(0, "fork a child to target");
		return tap_exit();
	}
	test_advise_good();
	test_advise_bad(0);
	test_advise_bad(1);
	test_query();
	test_config();
	test_unprivileged();
	reap_sleeper(sleeper, sleeper_wfd);
	close(fd);
	close(rofd);
	return tap_exit();
}
