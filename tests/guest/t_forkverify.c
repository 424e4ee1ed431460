// SPDX-License-Identifier: GPL-2.0
/*
 * The rmap verifier's family counts while the family forks (docs/testing.md's
 * num_children finding).  A process maps and writes memory (the family's
 * root anon_vma), forks a verifier child that checks its own mm again and
 * again - walking the root's tree, which every VMA of the family is in -
 * while the parent forks short-lived children as fast as it can: each
 * fork links a VMA into the root's tree and gives it a child anon_vma of
 * its own, each exit unlinks it.  On 6.12, anon_vma_fork() puts the new
 * child anon_vma on the forked VMA's chain before it takes the root lock
 * and counts it in its parent's num_children (mm/rmap.c); a verifier
 * holding that lock meanwhile sees a child the parent does not count yet.
 * Every verification must be clean: the family is the stock kernel's own.
 * Meant for two CPUs (run.sh's SMP set); on one it runs all the same.
 *
 * usage: t_forkverify [SECONDS]   (default 8)
 */
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGES	64UL
#define PG	4096UL

/* The verifier child: verify until @stop_at; exit 0 clean, 1 not, 2 error. */
static int verifier(long stop_at, unsigned long *runs)
{
	struct vmamerge_verify v;
	int fd = vm_open(O_RDONLY), r;

	if (fd < 0)
		return 2;
	while (now_ms() < stop_at) {
		r = vm_verify(fd, VMAMERGE_TARGET_SELF, 0, &v);
		if (r)
			return 2;
		++*runs;
		if (v.nr_violations) {
			v.msg[sizeof(v.msg) - 1] = 0;
			printf("# verification %lu: %llu violation(s), first %s: %s\n",
			       *runs, (unsigned long long)v.nr_violations,
			       vm_violation_name(v.kind), v.msg);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int secs = argc > 1 ? (unsigned int)atoi(argv[1]) : 8;
	unsigned long forks = 0, runs = 0;
	int pipefd[2], st = 0, fd;
	long stop_at;
	pid_t vpid, c;
	char *p;

	tap_init("t_forkverify", secs + 60);
	fd = vm_open(O_RDONLY);
	if (fd < 0) {
		skip("no /dev/vmamerge", "verifier while the family forks");
		return tap_exit();
	}
	close(fd);
	p = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ok(p != MAP_FAILED, "mmap"))
		return tap_exit();
	memset(p, 0x5a, PAGES * PG);
	if (!ok(!pipe(pipefd), "pipe"))
		return tap_exit();
	stop_at = now_ms() + 1000L * secs;
	vpid = fork();
	if (vpid == 0) {
		int rc;

		close(pipefd[0]);
		p[0] = 1;	/* its own page: a child anon_vma of the root */
		rc = verifier(stop_at, &runs);
		if (write(pipefd[1], &runs, sizeof(runs)) < 0)
			rc = 2;
		_exit(rc);
	}
	close(pipefd[1]);
	if (!ok(vpid > 0, "fork the verifier"))
		return tap_exit();
	while (now_ms() < stop_at) {
		c = fork();
		if (c == 0)
			_exit(0);
		if (c < 0)
			break;
		forks++;
		waitpid(c, NULL, 0);
	}
	waitpid(vpid, &st, 0);
	if (read(pipefd[0], &runs, sizeof(runs)) != sizeof(runs))
		runs = 0;
	diag("%lu forks, %lu verifications in %u s", forks, runs, secs);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && runs > 0,
	   "verifier clean while the family forks (%lu forks, %lu verifications; status %#x)",
	   forks, runs, st);
	return tap_exit();
}
