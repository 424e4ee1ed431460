// SPDX-License-Identifier: GPL-2.0
/*
 * A task parked in a userfaultfd wait inside a syscall, for as long as
 * run.sh likes (a replaced function on a sleeping task's stack holds every
 * livepatch transition open: docs/design.md, "Transitions and tasks that
 * sleep").
 *
 *   t_uffd_park [-o] mmap|mremap DIR
 *
 * Registers userfaultfd (UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMAP)
 * on a faulted anonymous range R and never reads the uffd until told to.
 * A thread then parks:
 *   mmap    mmap(MAP_FIXED) over R: vm_mmap_pgoff() waits for the monitor
 *           to read UFFD_EVENT_UNMAP (userfaultfd_unmap_complete());
 *   mremap  mremap() moving R: the syscall waits for UFFD_EVENT_REMAP
 *           (mremap_userfaultfd_complete()).
 * Both waits are TASK_KILLABLE: livepatch's fake signals do not wake them.
 * Once the event is queued and the thread sleeps (state D), DIR/parked
 * gets its tid; then the program waits for DIR/release (up to 600 s),
 * reads the events until the thread is back (a move also unmaps the
 * source: REMAP, then UNMAP), and checks that the thread's syscall returned what it
 * should, the event names the range, and every page reads back exact:
 * mmap - R reads zeros (a new mapping), mremap - the pages moved; a page
 * elsewhere is untouched.  DIR/done at exit.  -o: opt the process in first
 * (/dev/vmamerge).
 * TAP on stdout; exit status 0 when everything passed.
 */
#include "tap.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define PG	4096UL
#define NPG	8UL
#define LEN	(NPG * PG)
#define TAG	0x51
#define KEEP_TAG 0x77

static int remap_mode;
static const char *dir;
static char *range, *dest;
static void *result;
static int result_errno;
static pid_t worker_tid;
static int finished;

static void *worker(void *arg)
{
	(void)arg;
	worker_tid = (pid_t)syscall(SYS_gettid);
	if (remap_mode)
		result = mremap(range, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED,
				dest);
	else
		result = mmap(range, LEN, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	result_errno = errno;
	__atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* the state letter of thread @tid ("D": uninterruptible/killable sleep) */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return '?';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static void show_stack(pid_t tid)
{
	char path[64], buf[2048], *l, *save = NULL;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)tid);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return;
	for (l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		diag("parked thread: %s", l);
}

static int wait_file(const char *path, long ms)
{
	long t0 = now_ms();

	while (access(path, F_OK)) {
		if (now_ms() - t0 > ms)
			return -1;
		usleep(100000);
	}
	return 0;
}

/* NPG pages at @p: tags @base + i, or zeros when @base is 0 */
static int check_pages(const char *p, unsigned int base, const char *what)
{
	unsigned long i, off = 0;

	for (i = 0; i < NPG; i++)
		if (page_check(p + i * PG, base ? base + i : 0, &off))
			return ok(0, "%s: page %lu byte %lu differs", what, i,
				  off);
	return ok(1, "%s: %lu pages read back exact", what, NPG);
}

/* DIR/NAME with @text, created whole (rename) */
static int put_file(const char *dir, const char *name, const char *text)
{
	char tmp[512], path[512];
	int fd, r;

	snprintf(tmp, sizeof(tmp), "%s/.%s", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	r = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
	close(fd);
	return r ? r : rename(tmp, path);
}

/* DIR/done at exit: run.sh waits for it, bounded */
static void done(void)
{
	put_file(dir, "done", "");
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffd_msg ev[4];
	struct pollfd pfd;
	char path[512], buf[32];
	pthread_t th;
	char *win, *keep;
	unsigned long i;
	int uffd, vfd, optin = 0, c, nev;
	long t0;

	while ((c = getopt(argc, argv, "o")) != -1) {
		if (c != 'o')
			goto usage;
		optin = 1;
	}
	if (argc - optind != 2)
		goto usage;
	if (!strcmp(argv[optind], "mremap"))
		remap_mode = 1;
	else if (strcmp(argv[optind], "mmap"))
		goto usage;
	dir = argv[optind + 1];
	tap_init("t_uffd_park", 900);
	atexit(done);

	if (optin) {
		vfd = vm_open(O_RDWR);
		ok(vfd >= 0 && vm_advise(vfd, VMAMERGE_TARGET_SELF, 0,
					 VMAMERGE_ADVISE_ENABLE, 0) == 0,
		   "opted in");
		if (vfd >= 0)
			close(vfd);
	}

	/* R at the start of an empty window, the mremap target further on */
	win = aligned_window(64 * PG);
	keep = mmap(NULL, NPG * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!win || keep == MAP_FAILED)
		return ok(0, "window: %s", strerror(errno)), tap_exit();
	range = mmap(win, LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	dest = win + 32 * PG;
	if (range != win)
		return ok(0, "mmap of R: %s", strerror(errno)), tap_exit();
	for (i = 0; i < NPG; i++) {
		page_fill(range + i * PG, TAG + i);
		page_fill(keep + i * PG, KEEP_TAG + i);
	}

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	api.features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMAP;
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		return ok(0, "userfaultfd with UNMAP and REMAP events: %s",
			  strerror(errno)), tap_exit();
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)range;
	reg.range.len = LEN;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (!ok(!ioctl(uffd, UFFDIO_REGISTER, &reg),
		"userfaultfd registered on R (%lu pages, faulted)", NPG))
		return tap_exit();

	if (pthread_create(&th, NULL, worker, NULL))
		return ok(0, "pthread_create"), tap_exit();
	/* the event is queued before the thread sleeps on it */
	pfd.fd = uffd;
	pfd.events = POLLIN;
	if (!ok(poll(&pfd, 1, 20000) == 1, "%s event pending",
		remap_mode ? "REMAP" : "UNMAP"))
		return tap_exit();
	t0 = now_ms();
	while ((!worker_tid || thread_state(worker_tid) != 'D') &&
	       now_ms() - t0 < 10000)
		usleep(10000);
	if (!ok(worker_tid && thread_state(worker_tid) == 'D',
		"the %s() thread sleeps in the kernel (state %c)",
		remap_mode ? "mremap" : "mmap", thread_state(worker_tid)))
		return tap_exit();
	show_stack(worker_tid);

	snprintf(buf, sizeof(buf), "%d\n", (int)worker_tid);
	if (put_file(dir, "parked", buf))
		return ok(0, "write %s/parked: %s", dir, strerror(errno)),
		       tap_exit();
	snprintf(path, sizeof(path), "%s/release", dir);
	ok(!wait_file(path, 600000), "released by %s", path);
	ok(thread_state(worker_tid) == 'D',
	   "the thread was still parked when released (state %c)",
	   thread_state(worker_tid));

	/*
	 * Read every event until the thread is back: a move queues
	 * UFFD_EVENT_REMAP and then, waited for after it, UFFD_EVENT_UNMAP
	 * of the source range (move_vma() unmaps it with the registered
	 * context still there).
	 */
	nev = 0;
	t0 = now_ms();
	while (!__atomic_load_n(&finished, __ATOMIC_ACQUIRE) &&
	       nev < (int)(sizeof(ev) / sizeof(ev[0])) &&
	       now_ms() - t0 < 60000) {
		if (poll(&pfd, 1, 100) != 1)
			continue;
		if (read(uffd, &ev[nev], sizeof(ev[0])) != sizeof(ev[0]))
			continue;
		nev++;
	}
	if (remap_mode) {
		ok(nev == 2 && ev[0].event == UFFD_EVENT_REMAP &&
		   ev[0].arg.remap.from == (unsigned long)range &&
		   ev[0].arg.remap.to == (unsigned long)dest &&
		   ev[0].arg.remap.len == LEN,
		   "UFFD_EVENT_REMAP of R to its destination (%d events, first %u)",
		   nev, nev ? ev[0].event : 0);
		ok(nev == 2 && ev[1].event == UFFD_EVENT_UNMAP &&
		   ev[1].arg.remove.start == (unsigned long)range &&
		   ev[1].arg.remove.end == (unsigned long)range + LEN,
		   "then UFFD_EVENT_UNMAP of the source (%d events, second %u)",
		   nev, nev > 1 ? ev[1].event : 0);
	} else {
		ok(nev == 1 && ev[0].event == UFFD_EVENT_UNMAP &&
		   ev[0].arg.remove.start == (unsigned long)range &&
		   ev[0].arg.remove.end == (unsigned long)range + LEN,
		   "UFFD_EVENT_UNMAP of R, nothing else (%d events, first %u)",
		   nev, nev ? ev[0].event : 0);
	}
	pthread_join(th, NULL);
	if (remap_mode)
		ok(result == dest, "mremap() returned the destination (%p, %s)",
		   result, result == MAP_FAILED ? strerror(result_errno) : "-");
	else
		ok(result == range, "mmap(MAP_FIXED) returned R (%p, %s)",
		   result, result == MAP_FAILED ? strerror(result_errno) : "-");

	if (remap_mode) {
		check_pages(dest, TAG, "the moved pages");
		ok(msync(range, PG, MS_ASYNC) && errno == ENOMEM,
		   "R is unmapped after the move");
	} else {
		check_pages(range, 0, "R after mmap(MAP_FIXED): zeros");
	}
	check_pages(keep, KEEP_TAG, "a mapping elsewhere");
	if (!access("/dev/vmamerge", F_OK))
		vm_verify_self_ok("after the release");
	return tap_exit();
usage:
	fprintf(stderr, "usage: t_uffd_park [-o] mmap|mremap DIR\n");
	return 2;
}
