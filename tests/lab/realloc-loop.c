// SPDX-License-Identifier: GPL-2.0
/*
 * realloc-loop: a program that fragments its address space the ordinary
 * way - glibc's realloc() of blocks above the mmap threshold is mremap()
 * with MREMAP_MAYMOVE - and then prints its VMA count and its own vmamerge
 * counters (`vmamerge stats -p PID --json`, one line each):
 *   vmas N
 *   {"pid": ..., "counters": {...}}
 * Eight blocks grow in turn, 64 KiB at a time, every byte written and
 * checked; a block that cannot grow in place moves (its neighbour is in
 * the way), lands next to another anonymous mapping and stays apart from
 * it on a stock kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBLOCKS 8
#define ROUNDS 24
#define STEP (64 << 10)

static int count_vmas(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int main(void)
{
	unsigned char *b[NBLOCKS] = { NULL };
	size_t len[NBLOCKS] = { 0 }, i, j;
	char cmd[64];
	int r;

	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < NBLOCKS; i++) {
			unsigned char *p = realloc(b[i], len[i] + 2 * STEP);

			if (!p) {
				perror("realloc");
				return 1;
			}
			for (j = 0; j < len[i]; j++) {
				if (p[j] != (unsigned char)(i + j)) {
					fprintf(stderr, "block %zu byte %zu: %u\n",
						i, j, p[j]);
					return 1;
				}
			}
			for (j = len[i]; j < len[i] + 2 * STEP; j++)
				p[j] = (unsigned char)(i + j);
			b[i] = p;
			len[i] += 2 * STEP;
		}
	}
	printf("vmas %d\n", count_vmas());
	fflush(stdout);
	snprintf(cmd, sizeof(cmd), "vmamerge stats -p %d --json", (int)getpid());
	return system(cmd) ? 1 : 0;
}
