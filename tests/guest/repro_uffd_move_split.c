// SPDX-License-Identifier: GPL-2.0
/*
 * Standalone reproducer of a stock kernel livelock found by t_mtorture
 * (docs/testing.md, "UFFDIO_MOVE livelock"): UFFDIO_MOVE of one page of a
 * PTE-mapped THP while a pipe holds a reference to another page of the
 * same THP.  move_pages_pte() (mm/userfaultfd.c, 6.8+) must split the
 * large folio first; split_folio() fails with -EAGAIN on the pipe's extra
 * reference, and move_pages() retries -EAGAIN until a fatal signal - for
 * ever.  Not part of the suite: it needs no module.
 *
 * usage: repro_uffd_move_split [SECONDS]   (default 5)
 * Exit status: 0 the ioctl returned (no livelock; its result is printed),
 * 1 it was still spinning after SECONDS (then SIGKILLed), 2 setup failed
 * (no THP, no UFFD_FEATURE_MOVE, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/userfaultfd.h>

#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE	(1 << 16)
struct uffdio_move {
	uint64_t dst, src, len, mode;
	int64_t move;
};
#define UFFDIO_MOVE		_IOWR(UFFDIO, 0x05, struct uffdio_move)
#endif

#define PMD	(2UL << 20)
#define PG	4096UL

/* AnonHugePages of the mapping around @p in /proc/self/smaps, in kB */
static long thp_kb(void *p)
{
	char line[256];
	unsigned long lo, hi;
	long kb = -1, in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (unsigned long)p >= lo && (unsigned long)p < hi;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static int child(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MOVE };
	struct uffdio_register reg;
	struct uffdio_move mv;
	struct iovec iov;
	int uffd, pfd[2];
	char *raw, *thp, *dst;

	raw = mmap(NULL, 2 * PMD, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED || dst == MAP_FAILED)
		return 2;
	thp = (char *)(((unsigned long)raw + PMD - 1) & ~(PMD - 1));
	madvise(thp, PMD, MADV_HUGEPAGE);
	memset(thp, 0x5a, PMD);
	if (thp_kb(thp) < 2048) {
		printf("setup: no PMD-mapped THP (AnonHugePages %ld kB)\n",
		       thp_kb(thp));
		return 2;
	}
	/* split the PMD mapping, keep the large folio: PTE-mapped THP */
	if (mprotect(thp + PG, PG, PROT_READ) ||
	    mprotect(thp + PG, PG, PROT_READ | PROT_WRITE))
		return 2;
	/* the pipe takes a reference on page 1 of the folio */
	iov.iov_base = thp + PG;
	iov.iov_len = PG;
	if (pipe(pfd) || vmsplice(pfd[1], &iov, 1, 0) != (ssize_t)PG)
		return 2;
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) ||
	    !(api.features & UFFD_FEATURE_MOVE)) {
		printf("setup: no userfaultfd with UFFD_FEATURE_MOVE\n");
		return 2;
	}
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (unsigned long)dst;
	reg.range.len = PG;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	madvise(dst, PG, MADV_DONTNEED);
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		return 2;
	memset(&mv, 0, sizeof(mv));
	mv.dst = (unsigned long)dst;
	mv.src = (unsigned long)thp;	/* page 0: not the one in the pipe */
	mv.len = PG;
	printf("UFFDIO_MOVE of page 0 of a PTE-mapped THP, page 1 in a pipe...\n");
	fflush(stdout);
	if (ioctl(uffd, UFFDIO_MOVE, &mv))
		printf("returned: %s (moved %lld)\n", strerror(errno),
		       (long long)mv.move);
	else
		printf("returned: moved %lld bytes\n", (long long)mv.move);
	return 0;
}

int main(int argc, char **argv)
{
	int secs = argc > 1 ? atoi(argv[1]) : 5, st, i;
	pid_t pid = fork();

	if (pid == 0)
		_exit(child());
	for (i = 0; i < secs * 10; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
		usleep(100000);
	}
	printf("livelock: the ioctl still runs after %d s (SIGKILL ends it)\n",
	       secs);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 1;
}
