// SPDX-License-Identifier: GPL-2.0
/*
 * t_uffd_park: park this process inside mremap() until it is killed.
 *
 * It registers a faulted anonymous page with a userfaultfd that asks for
 * UFFD_EVENT_REMAP and moves it: mremap() then waits, TASK_KILLABLE, in
 * mremap_userfaultfd_complete() until a monitor reads the event - and
 * nobody ever reads this userfaultfd.  run.sh's uffd_park_mremap_test
 * loads and unloads the module around it: a livepatch that replaces a
 * function this task sleeps in (the old __x64_sys_mremap hook) can never
 * finish its transition.
 *
 * usage: t_uffd_park [-o]
 *   -o  opt this process in first (the move then goes through our
 *       copy_vma() with the merge decision)
 * Prints "parked PID" (flushed) just before the mremap() call; if the call
 * ever returns it prints "returned" and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "tap.h"

#define PG	4096UL

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_EVENT_REMAP };
	struct uffdio_register reg = { 0 };
	char *p, *q;
	int uffd, fd;

	if (argc > 1 && !strcmp(argv[1], "-o")) {
		fd = vm_open(O_RDWR);
		if (fd < 0 || vm_advise(fd, VMAMERGE_TARGET_SELF, 0,
					VMAMERGE_ADVISE_ENABLE, 0)) {
			fprintf(stderr, "opt-in: %s\n", strerror(errno));
			return 2;
		}
		close(fd);	/* an open file would pin the module */
	}
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		fprintf(stderr, "userfaultfd: %s\n", strerror(errno));
		return 2;
	}
	/* a page to move, one next to its destination, a hole between */
	p = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || munmap(p + PG, 3 * PG))
		return 2;
	q = p + 4 * PG;
	memset(p, 1, PG);
	memset(q, 2, 4 * PG);
	reg.range.start = (unsigned long)p;
	reg.range.len = PG;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		fprintf(stderr, "UFFDIO_REGISTER: %s\n", strerror(errno));
		return 2;
	}
	printf("parked %d\n", getpid());
	fflush(stdout);
	/* to just before q: a move the module merges when opted in */
	if (mremap(p, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, q - PG) ==
	    MAP_FAILED)
		fprintf(stderr, "mremap: %s\n", strerror(errno));
	printf("returned\n");
	return 1;
}
