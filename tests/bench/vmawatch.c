// SPDX-License-Identifier: GPL-2.0
/*
 * vmawatch: run a command, time it, and (with -i MS) sample the VMA count
 * of its process every MS milliseconds.
 *
 *   vmawatch [-i MS] [-l LABEL] [-o FILE] -- CMD ARGS...
 *
 * -o FILE: CMD's stdout and stderr go to FILE (ours carries the JSON).
 *
 * With BENCH_OPTIN=1 vmawatch opts itself in before forking: the opt-in
 * is inherited across fork and exec, so CMD runs opted in.  The counters
 * reported are global deltas (nothing else runs opted in meanwhile).
 * Without -i the parent only waits, so the time is not disturbed; with -i
 * the samples (ms since start, VMAs) give the peak and the last count
 * before the command exited ("end").
 * Output: one JSON line (bench "workload", variant LABEL); exit status
 * that of CMD.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define MAXS 4000

int main(int argc, char **argv)
{
	const char *label = "cmd", *out = NULL;
	int ival = 0, opt, st = 0, ns = 0, i;
	uint64_t c0[VMAMERGE_NR_COUNTERS], c1[VMAMERGE_NR_COUNTERS];
	static uint64_t s_ms[MAXS], s_vmas[MAXS];
	uint64_t t0, t1;
	long peak = 0, last = -1;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+i:l:o:")) != -1) {
		switch (opt) {
		case 'i': ival = atoi(optarg); break;
		case 'l': label = optarg; break;
		case 'o': out = optarg; break;
		default: die("usage: vmawatch [-i MS] [-l LABEL] [-o FILE] -- CMD ARGS...");
		}
	}
	if (optind >= argc)
		die("usage: vmawatch [-i MS] [-l LABEL] [-o FILE] -- CMD ARGS...");
	bench_optin_from_env();
	bench_counters(1, c0);
	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (out) {
			int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
				_exit(126);
			close(fd);
		}
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	if (ival > 0) {
		struct timespec ts = { ival / 1000, (ival % 1000) * 1000000L };

		for (;;) {
			pid_t r = waitpid(pid, &st, WNOHANG);
			long v;

			if (r == pid)
				break;
			v = count_vmas(pid, 0, 0, NULL);
			if (v > 0) {
				last = v;
				peak = v > peak ? v : peak;
				if (ns < MAXS) {
					s_ms[ns] = (now_ns() - t0) / 1000000;
					s_vmas[ns++] = v;
				}
			}
			nanosleep(&ts, NULL);
		}
	} else {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	t1 = now_ns();
	bench_counters(1, c1);

	/* keep at most ~200 samples in the output */
	if (ns > 200) {
		int step = (ns + 199) / 200, j = 0;

		for (i = 0; i < ns; i += step, j++) {
			s_ms[j] = s_ms[i];
			s_vmas[j] = s_vmas[i];
		}
		if (s_ms[j - 1] != s_ms[ns - 1]) {
			s_ms[j] = s_ms[ns - 1];
			s_vmas[j++] = s_vmas[ns - 1];
		}
		ns = j;
	}
	j_begin("workload");
	j_str("variant", label);
	j_u64("run_ns", t1 - t0);
	j_int("exit", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	j_counters("counters", c0, c1);
	if (ival > 0) {
		j_int("traced", 1);
		j_int("vmas_peak", peak);
		j_int("vmas_end", last);
		j_u64_array("s_ms", s_ms, ns);
		j_u64_array("s_vmas", s_vmas, ns);
	}
	j_end();
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
