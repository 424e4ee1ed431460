// SPDX-License-Identifier: GPL-2.0
/*
 * Load generator for the load/unload cycles: mmap/munmap/mremap/mprotect/
 * madvise/fork churn over an arena with data checks, until SIGTERM or the
 * time limit.  Prints only diagnostics; the exit status says whether the
 * data and the model held (0) or not (1).
 *
 * usage: t_churn [-o] [-r READYFILE] [-t MAXMS] [-s SEED]
 *   -o  opt in through /dev/vmamerge (the fd is closed again, so that
 *       the module can be removed while we run)
 *   -r  created once we are opted in and running
 */
#include "arena.h"
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct arena A;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	unsigned long long seed = 0;
	long maxms = 60000, t0;
	int optin = 0, c, fd, r;
	struct sigaction sa;

	while ((c = getopt(argc, argv, "or:t:s:")) != -1) {
		switch (c) {
		case 'o': optin = 1; break;
		case 'r': ready = optarg; break;
		case 't': maxms = strtol(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: t_churn [-o] [-r FILE] [-t MS] [-s SEED]\n");
			return 2;
		}
	}
	tap_init("t_churn", maxms / 1000 + 120);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (!seed)
		seed = (unsigned long long)now_ms() * 1000003ULL ^ getpid();

	if (optin) {
		fd = vm_open(O_RDWR);
		if (fd < 0) {
			diag("churn: open %s: %s", VMAMERGE_DEVICE, errname(-fd));
			return 1;
		}
		r = vm_advise(fd, VMAMERGE_TARGET_SELF, 0, VMAMERGE_ADVISE_ENABLE, 0);
		r = r ? r : vm_state(fd, VMAMERGE_TARGET_SELF, 0);
		close(fd);
		if (r < 0 || !(r & VMAMERGE_STATE_OPTED_IN)) {
			diag("churn: opt-in failed: %s", state_str(r));
			return 1;
		}
	}
	r = arena_init(&A, seed, "churn");
	if (r) {
		diag("churn: arena: %s", errname(-r));
		return 1;
	}
	A.fork_pct = 10;
	if (ready) {
		fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "1\n", 2) != 2) {
			diag("churn: cannot write %s: %s", ready, strerror(errno));
			return 1;
		}
		close(fd);
	}
	t0 = now_ms();
	while (!stop && now_ms() - t0 < maxms) {
		if (arena_step(&A))
			break;
		/* a full check now and then; cheap next to the syscalls */
		if (A.step % 500 == 0 && (arena_check_model(&A) || arena_verify_all(&A)))
			break;
	}
	if (!A.errors && !arena_check_model(&A))
		arena_verify_all(&A);
	diag("churn seed %llu: %lu ops (%lu forks, %lu failed syscalls) in %ld ms%s: %s",
	     seed, A.step, A.nr_ops[10], A.nr_failed, now_ms() - t0,
	     stop ? " until SIGTERM" : " until the time limit",
	     A.errors ? "ERRORS" : "data ok");
	return A.errors ? 1 : 0;
}
