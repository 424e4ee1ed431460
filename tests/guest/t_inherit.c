// SPDX-License-Identifier: GPL-2.0
/*
 * Opt-in inheritance across fork and exec.
 *
 *   t_inherit               run the tests
 *   t_inherit query-self    exit status = own state bits (0..7), 99 on error
 *   t_inherit query-exec    exec "query-self" once more (a chain of execs)
 *   t_inherit query-pid PID exit status = state bits of PID, 99 on error
 *   t_inherit advise-pid PID  opt PID in (default flags); 0, or 99 on error
 *   t_inherit leader-exit FILE  opt in, start a thread, end the main thread;
 *                           the thread writes its tid to FILE and waits to
 *                           be killed (the mm outlives the group leader)
 */
#include "tap.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static int fd = -1;
static const int OPT_NOEXEC = VMAMERGE_STATE_OPTED_IN | VMAMERGE_STATE_ACTIVE;

static void exec_self(const char *what)
{
	char *const argv[] = { "t_inherit", (char *)what, NULL };

	execv("/proc/self/exe", argv);
	_exit(98);
}

static void set_self(uint32_t advice, uint64_t flags)
{
	int r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, advice, flags);

	if (r)
		diag("ADVISE self %u %#llx: %s", advice, (unsigned long long)flags,
		     errname(-r));
}

static int wait_code(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(st))
		return 200 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

static void expect_code(int code, int want, const char *desc)
{
	if (!ok(code == want, "%s: %s", desc, state_str(want)))
		diag("%s: exit code %d (%s)", desc, code,
		     code >= 0 && code < 8 ? state_str(code) :
		     code == 98 ? "exec failed" : code == 99 ? "query failed" : "?");
}

static void expect_state(int got, int want, const char *desc)
{
	if (!ok(got == want, "%s: %s", desc, state_str(want)))
		diag("%s: got %s", desc, state_str(got));
}

/* fork; child reports its own state, waits for "go", reports again. */
static void test_fork(int parent_state, uint64_t flags, const char *ctx)
{
	int up[2], down[2], s1 = -1, s2 = -1, want = parent_state;
	char go = 'g';
	pid_t pid;

	if (pipe(up) || pipe(down)) {
		ok(0, "%s: pipes", ctx);
		return;
	}
	pid = fork();
	if (pid == 0) {
		int s;

		close(up[0]);
		close(down[1]);
		s = vm_self_state();
		if (write(up[1], &s, sizeof(s)) != sizeof(s))
			_exit(1);
		if (read(down[0], &go, 1) != 1)
			_exit(1);
		s = vm_self_state();
		if (write(up[1], &s, sizeof(s)) != sizeof(s))
			_exit(1);
		/* live on until the parent has queried us (EOF) */
		while (read(down[0], &go, 1) > 0)
			;
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], &s1, sizeof(s1)) != sizeof(s1))
		s1 = -EIO;
	expect_state(s1, want, "forked child's own QUERY");
	diag("(%s)", ctx);
	expect_state(vm_state(fd, VMAMERGE_TARGET_PID, pid), want,
		     "parent's QUERY of the forked child by pid");
	/* the parent flips its own state; the child must not follow */
	if (parent_state)
		set_self(VMAMERGE_ADVISE_DISABLE, 0);
	else
		set_self(VMAMERGE_ADVISE_ENABLE, flags);
	if (write(down[1], &go, 1) != 1)
		diag("write go: %s", strerror(errno));
	if (read(up[0], &s2, sizeof(s2)) != sizeof(s2))
		s2 = -EIO;
	expect_state(s2, want, parent_state ?
		     "child keeps its opt-in after the parent disables itself" :
		     "child stays out after the parent enables itself");
	expect_state(vm_state(fd, VMAMERGE_TARGET_PID, pid), want,
		     "parent's QUERY of the child after the parent's change");
	close(up[0]);
	close(down[1]);
	ok(wait_code(pid) == 0, "%s: child exited cleanly", ctx);
}

/* fork + exec of "what"; returns the exit code. */
static int fork_exec(const char *what)
{
	pid_t pid = fork();

	if (pid == 0)
		exec_self(what);
	return wait_code(pid);
}

/* fork; the child (no exec) forks again and execs: grandchild state. */
static void test_fork_then_exec(int want_child, int want_exec, const char *ctx)
{
	int p[2], s = -1, code;
	pid_t pid;

	if (pipe(p)) {
		ok(0, "pipe");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		s = vm_self_state();
		if (write(p[1], &s, sizeof(s)) != sizeof(s))
			_exit(1);
		exec_self("query-self");
	}
	close(p[1]);
	if (read(p[0], &s, sizeof(s)) != sizeof(s))
		s = -EIO;
	close(p[0]);
	code = wait_code(pid);
	expect_state(s, want_child, "forked child before exec");
	diag("(%s)", ctx);
	expect_code(code, want_exec, "the same child after exec");
}

/* The target is opted in by pid while it waits, then it execs. */
static void test_exec_after_advise_by_pid(uint64_t flags, int want)
{
	int p[2], r, code;
	char go = 'g';
	pid_t pid;

	if (pipe(p)) {
		ok(0, "pipe");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &go, 1) != 1)
			_exit(1);
		exec_self("query-self");
	}
	close(p[0]);
	r = vm_advise(fd, VMAMERGE_TARGET_PID, pid, VMAMERGE_ADVISE_ENABLE, flags);
	expect_errno(r, 0, "ADVISE ENABLE%s a waiting child by pid",
		     flags ? "|NO_EXEC" : "");
	if (write(p[1], &go, 1) != 1)
		diag("write go: %s", strerror(errno));
	close(p[1]);
	code = wait_code(pid);
	expect_code(code, want, flags ? "child opted in by pid with NO_EXEC, after exec" :
			      "child opted in by pid, after exec");
}

/* The state letter of thread @tid of this process ('Z': exited). */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", getpid(), tid);
	f = open(path, O_RDONLY);
	if (f < 0)
		return '?';
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static void *leader_exit_thread(void *arg)
{
	const char *file = arg;
	char tmp[256];
	FILE *f;

	/* wait for the leader to have exited (a zombie without an mm) */
	while (thread_state(getpid()) != 'Z')
		usleep(10000);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", gettid()) < 0 || fclose(f) ||
	    rename(tmp, file))
		_exit(97);
	for (;;)
		pause();
	return NULL;
}

/* The main thread exits, the process lives on in a second thread. */
static int leader_exit(char *file)
{
	pthread_t t;

	fd = vm_open(O_RDWR);
	if (fd < 0 || vm_advise(fd, VMAMERGE_TARGET_SELF, 0,
				VMAMERGE_ADVISE_ENABLE, 0))
		return 99;
	close(fd);	/* the open device would pin the module */
	if (pthread_create(&t, NULL, leader_exit_thread, file))
		return 99;
	pthread_exit(NULL);
}

static int helper(int argc, char **argv)
{
	int r;

	if (!strcmp(argv[1], "query-self")) {
		r = vm_self_state();
		return r < 0 ? 99 : r;
	}
	if (!strcmp(argv[1], "query-exec")) {
		exec_self("query-self");
		return 98;
	}
	if (!strcmp(argv[1], "query-pid") && argc == 3) {
		int f = vm_open(O_RDONLY);

		if (f < 0)
			return 99;
		r = vm_state(f, VMAMERGE_TARGET_PID, atoi(argv[2]));
		return r < 0 ? 99 : r;
	}
	if (!strcmp(argv[1], "advise-pid") && argc == 3) {
		int f = vm_open(O_RDWR);

		if (f < 0)
			return 99;
		r = vm_advise(f, VMAMERGE_TARGET_PID, atoi(argv[2]),
			      VMAMERGE_ADVISE_ENABLE, 0);
		if (r)
			fprintf(stderr, "ADVISE ENABLE pid %s: %s\n", argv[2], errname(-r));
		return r ? 99 : 0;
	}
	if (!strcmp(argv[1], "leader-exit") && argc == 3)
		return leader_exit(argv[2]);
	fprintf(stderr, "usage: t_inherit [query-self | query-exec | query-pid PID | "
		"advise-pid PID | leader-exit FILE]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return helper(argc, argv);

	tap_init("t_inherit", 120);
	fd = vm_open(O_RDWR);
	if (!ok(fd >= 0, "open %s", VMAMERGE_DEVICE)) {
		diag("open: %s", errname(-fd));
		return tap_exit();
	}

	/* fork */
	set_self(VMAMERGE_ADVISE_ENABLE, 0);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), ALL_STATE, "parent opted in");
	test_fork(ALL_STATE, 0, "opted-in parent forks");
	set_self(VMAMERGE_ADVISE_DISABLE, 0);
	test_fork(0, 0, "parent not opted in forks");
	set_self(VMAMERGE_ADVISE_DISABLE, 0);
	set_self(VMAMERGE_ADVISE_ENABLE, VMAMERGE_ADVISE_F_NO_EXEC);
	test_fork(OPT_NOEXEC, VMAMERGE_ADVISE_F_NO_EXEC,
		  "parent opted in with NO_EXEC forks");

	/* exec */
	set_self(VMAMERGE_ADVISE_DISABLE, 0);
	expect_code(fork_exec("query-self"), 0, "exec from a parent not opted in");
	set_self(VMAMERGE_ADVISE_ENABLE, 0);
	expect_code(fork_exec("query-self"), ALL_STATE,
		    "fork+exec from an opted-in parent keeps the opt-in");
	expect_code(fork_exec("query-exec"), ALL_STATE,
		    "fork+exec+exec keeps the opt-in");
	test_fork_then_exec(ALL_STATE, ALL_STATE, "default opt-in");

	set_self(VMAMERGE_ADVISE_ENABLE, VMAMERGE_ADVISE_F_NO_EXEC);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), OPT_NOEXEC,
		     "parent opted in with NO_EXEC");
	expect_code(fork_exec("query-self"), 0,
		    "NO_EXEC: the exec'd program is not opted in");
	test_fork_then_exec(OPT_NOEXEC, 0, "NO_EXEC opt-in");
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), OPT_NOEXEC,
		     "NO_EXEC parent itself unchanged");

	/* EXEC_ONCE: the next exec keeps it, without exec-keep; one more not */
	set_self(VMAMERGE_ADVISE_ENABLE, VMAMERGE_ADVISE_F_EXEC_ONCE);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0),
		     ALL_STATE | VMAMERGE_STATE_EXEC_ONCE,
		     "parent opted in with EXEC_ONCE");
	expect_code(fork_exec("query-self"), OPT_NOEXEC,
		    "EXEC_ONCE: the exec'd program is opted in, no exec-keep");
	expect_code(fork_exec("query-exec"), 0,
		    "EXEC_ONCE: a second exec is not opted in");

	set_self(VMAMERGE_ADVISE_DISABLE, 0);
	test_exec_after_advise_by_pid(0, ALL_STATE);
	test_exec_after_advise_by_pid(VMAMERGE_ADVISE_F_NO_EXEC, 0);
	expect_state(vm_state(fd, VMAMERGE_TARGET_SELF, 0), 0, "parent left disabled");
	close(fd);
	return tap_exit();
}
