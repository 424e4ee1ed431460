// SPDX-License-Identifier: GPL-2.0
/*
 * Migration noise for t_torture: moves the pages of another process's
 * address range back and forth between NUMA nodes 0 and 1 with
 * move_pages(2) (the syscall; no libnuma), and every K rounds asks for a
 * full compaction (/proc/sys/vm/compact_memory).
 *
 * usage: t_migrate [-i MS] [-k K] [-w MS] PUBFILE
 *        t_migrate [-i MS] [-k K] PID START END
 *   PUBFILE  "PID START END" (hex addresses) as t_torture -p writes it;
 *            waited for up to -w MS (default 30000)
 *   -i MS    pause between rounds (default 20)
 *   -k K     compaction every K rounds (default 10; 0: never)
 *
 * Runs until SIGTERM/SIGINT or until the target exits, then prints its
 * counts as "#" lines: rounds, pages moved per node, errors by errno (of
 * the call and per page), compactions.  Exit status 0, or 1 if it could
 * not start (bad arguments, no such process).
 */
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define PG		4096UL
#define CHUNK		1024
#define MPOL_MF_MOVE	(1 << 1)
#define MPOL_MF_MOVE_ALL (1 << 2)
#define NERR		160

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static long move_pages(pid_t pid, unsigned long n, void **pages,
		       const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, pid, n, pages, nodes, status, flags);
}

/* Alive and not a zombie. */
static int alive(pid_t pid)
{
	char path[64], buf[512], *p;

	if (kill(pid, 0) && errno == ESRCH)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static void errlist(char *out, size_t len, const unsigned long *e)
{
	size_t k = 0;
	int i;

	out[0] = 0;
	for (i = 1; i < NERR; i++)
		if (e[i])
			k += snprintf(out + k, len - k, " %s=%lu", errname(i), e[i]);
	if (!k)
		snprintf(out, len, " none");
}

int main(int argc, char **argv)
{
	unsigned long start, end, n, i, m, rounds = 0, moved[2] = { 0, 0 };
	unsigned long call_err[NERR] = { 0 }, page_err[NERR] = { 0 };
	unsigned long compactions = 0, compact_err = 0, nodes_seen = 0;
	long interval = 20, k_compact = 10, wait_ms = 30000, t0;
	static void *pages[CHUNK], *mv[CHUNK];
	static int status[CHUNK], nodes[CHUNK], st2[CHUNK];
	struct sigaction sa;
	char buf[256], el[800];
	int c, pid, two_nodes;

	while ((c = getopt(argc, argv, "i:k:w:")) != -1) {
		switch (c) {
		case 'i': interval = strtol(optarg, NULL, 0); break;
		case 'k': k_compact = strtol(optarg, NULL, 0); break;
		case 'w': wait_ms = strtol(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	tap_init("t_migrate", 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (argc - optind == 1) {
		t0 = now_ms();
		while (read_file(argv[optind], buf, sizeof(buf)) <= 0) {
			if (stop) {
				diag("t_migrate: stopped before %s appeared", argv[optind]);
				return 0;
			}
			if (now_ms() - t0 > wait_ms) {
				diag("t_migrate: %s did not appear within %ld ms",
				     argv[optind], wait_ms);
				return 1;
			}
			usleep(10000);
		}
		if (sscanf(buf, "%d %lx %lx", &pid, &start, &end) != 3) {
			diag("t_migrate: %s: cannot parse '%s'", argv[optind], buf);
			return 1;
		}
	} else if (argc - optind == 3) {
		pid = atoi(argv[optind]);
		start = strtoul(argv[optind + 1], NULL, 16);
		end = strtoul(argv[optind + 2], NULL, 16);
	} else {
		goto usage;
	}
	if (pid <= 0 || end <= start || start % PG || end % PG)
		goto usage;

	two_nodes = access("/sys/devices/system/node/node1", F_OK) == 0;
	if (!two_nodes)
		diag("t_migrate: no NUMA node 1: compaction only");
	n = (end - start) / PG;
	t0 = now_ms();

	while (!stop && alive(pid)) {
		unsigned long off;

		rounds++;
		for (off = 0; two_nodes && off < n && !stop; off += CHUNK) {
			unsigned long cnt = n - off < CHUNK ? n - off : CHUNK;
			long r;

			for (i = 0; i < cnt; i++)
				pages[i] = (void *)(start + (off + i) * PG);
			/* where is each page now? */
			r = move_pages(pid, cnt, pages, NULL, status, 0);
			if (r < 0) {
				if (errno == ESRCH)
					stop = 1;
				else if (errno < NERR)
					call_err[errno]++;
				continue;
			}
			for (i = 0, m = 0; i < cnt; i++) {
				if (status[i] < 0) {
					continue;	/* not present: nothing to move */
				}
				nodes_seen |= 1UL << (status[i] & 63);
				mv[m] = pages[i];
				/* mostly to the other node, sometimes stay */
				nodes[m] = (rounds + i) % 7 ? !status[i] : status[i];
				m++;
			}
			if (!m)
				continue;
			r = move_pages(pid, m, mv, nodes, st2,
				       rounds % 2 ? MPOL_MF_MOVE_ALL : MPOL_MF_MOVE);
			if (r < 0) {
				if (errno == ESRCH)
					stop = 1;
				else if (errno < NERR)
					call_err[errno]++;
				continue;
			}
			for (i = 0; i < m; i++) {
				if (st2[i] >= 0 && st2[i] < 2)
					moved[st2[i]] += st2[i] == nodes[i];
				else if (st2[i] < 0 && -st2[i] < NERR)
					page_err[-st2[i]]++;
			}
		}
		if (k_compact > 0 && rounds % k_compact == 0) {
			if (write_file("/proc/sys/vm/compact_memory", "1", 1))
				compact_err++;
			else
				compactions++;
		}
		if (interval > 0 && !stop)
			usleep(interval * 1000);
	}

	diag("t_migrate pid %d %#lx-%#lx: %lu rounds in %.1f s, pages now on "
	     "node0 %lu, node1 %lu (moves that landed), nodes seen mask %#lx, "
	     "compactions %lu (failed %lu)",
	     pid, start, end, rounds, (now_ms() - t0) / 1000.0, moved[0], moved[1],
	     nodes_seen, compactions, compact_err);
	errlist(el, sizeof(el), call_err);
	diag("t_migrate errors of move_pages calls:%s", el);
	errlist(el, sizeof(el), page_err);
	diag("t_migrate per-page statuses that were errors:%s", el);
	return 0;
usage:
	fprintf(stderr, "usage: t_migrate [-i MS] [-k K] [-w MS] PUBFILE | PID START END\n");
	return 2;
}
