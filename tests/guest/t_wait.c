// SPDX-License-Identifier: GPL-2.0
/*
 * Polling helper for run.sh (busybox sh has no sub-second sleep we can
 * rely on, and forking busybox in a loop is slow under TCG).
 *
 *   t_wait value PATH VALUE MS   until PATH reads VALUE (newline ignored)
 *   t_wait gone PATH MS          until PATH does not exist
 *   t_wait exists PATH MS        until PATH exists
 *   t_wait sleep MS
 *   t_wait now                   prints CLOCK_MONOTONIC in ms
 *
 * Exit 0 on success, 1 on timeout (with a "# " line saying what was seen).
 */
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int usage(void)
{
	fprintf(stderr, "usage: t_wait value PATH VALUE MS | gone PATH MS | "
		"exists PATH MS | sleep MS | now\n");
	return 2;
}

int main(int argc, char **argv)
{
	char buf[256];
	long t0 = now_ms(), limit;
	int r = 0;

	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "now")) {
		printf("%ld\n", t0);
		return 0;
	}
	if (!strcmp(argv[1], "sleep") && argc == 3) {
		msleep(strtol(argv[2], NULL, 0));
		return 0;
	}
	if (!strcmp(argv[1], "value") && argc == 5) {
		limit = strtol(argv[4], NULL, 0);
		for (;;) {
			r = read_file(argv[2], buf, sizeof(buf));
			if (r >= 0 && !strcmp(buf, argv[3]))
				return 0;
			if (now_ms() - t0 > limit)
				break;
			msleep(20);
		}
		printf("# timeout after %ld ms: %s reads %s%s%s\n", limit, argv[2],
		       r < 0 ? "error " : "'", r < 0 ? errname(-r) : buf,
		       r < 0 ? "" : "'");
		return 1;
	}
	if ((!strcmp(argv[1], "gone") || !strcmp(argv[1], "exists")) && argc == 4) {
		int want = !strcmp(argv[1], "exists");

		limit = strtol(argv[3], NULL, 0);
		for (;;) {
			if ((access(argv[2], F_OK) == 0) == want)
				return 0;
			if (now_ms() - t0 > limit)
				break;
			msleep(20);
		}
		printf("# timeout after %ld ms: %s %s\n", limit, argv[2],
		       want ? "still missing" : "still exists");
		return 1;
	}
	return usage();
}
