// SPDX-License-Identifier: GPL-2.0
/*
 * demo-prog: the program `make demo` runs twice, on the stock kernel and
 * opted in to vmamerge. Built static on the host, run in the guest.
 *
 * Inside a PROT_NONE window it builds two situations a stock kernel cannot
 * merge:
 *   A|B  A is faulted; B is faulted elsewhere, then mremap()ed right after
 *        A. B keeps its old page offset and its own anon_vma.
 *   C|D  C is faulted, then mremap()ed to a new place; D is mmap()ed right
 *        after C and faulted. C's page offset is still that of its old place.
 * It checks the data, prints its VMAs in the window, prints
 * "READY pid=<pid>" and waits for a signal so that others can look at it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NPAGES 64

static size_t pg;
static char *win;

static void die(const char *what)
{
	fprintf(stderr, "demo-prog: %s: %s\n", what, strerror(errno));
	exit(1);
}

static char *at(int page)
{
	return win + (size_t)page * pg;
}

static char *map_fill(int page, int npages, char fill)
{
	char *p = mmap(at(page), npages * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	memset(p, fill, npages * pg);
	return p;
}

static void move(int from, int npages, int to)
{
	void *p = mremap(at(from), npages * pg, npages * pg,
			 MREMAP_MAYMOVE | MREMAP_FIXED, at(to));

	if (p == MAP_FAILED)
		die("mremap");
}

static int check(int page, int npages, char fill)
{
	const char *p = at(page);
	size_t i;

	for (i = 0; i < npages * pg; i++)
		if (p[i] != fill)
			return 0;
	return 1;
}

static char label(uintptr_t start)
{
	int page = (int)((start - (uintptr_t)win) / pg);

	switch (page) {
	case 4: return 'A';
	case 8: return 'B';
	case 40: return 'C';
	case 44: return 'D';
	default: return '?';
	}
}

/* Print the VMAs inside the window (guards excluded), return their count. */
static int show_window(void)
{
	uintptr_t lo = (uintptr_t)at(1), hi = (uintptr_t)at(NPAGES - 1);
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		die("/proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) != 3)
			continue;
		if (e <= lo || s >= hi || !strcmp(perms, "---p"))
			continue;
		printf("  %lx-%lx %s %3lu pages  starts with %c\n", s, e, perms,
		       (e - s) / pg, label(s));
		n++;
	}
	fclose(f);
	return n;
}

static void on_signal(int sig)
{
	(void)sig;
	_exit(0);
}

int main(void)
{
	int ok, n;

	pg = (size_t)sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	win = mmap(NULL, NPAGES * pg, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (win == MAP_FAILED)
		die("mmap window");

	/* A|B: fault A at 4..8, fault B at 20..24, move B to 8..12. */
	map_fill(4, 4, 'A');
	map_fill(20, 4, 'B');
	move(20, 4, 8);

	/* C|D: fault C at 28..32, move it to 40..44, map+fault D at 44..48. */
	map_fill(28, 4, 'C');
	move(28, 4, 40);
	map_fill(44, 4, 'D');

	ok = check(4, 4, 'A') && check(8, 4, 'B') && check(40, 4, 'C') &&
	     check(44, 4, 'D');

	printf("demo-prog pid %d: window %p, 4 regions of 4 pages: A|B at +4, C|D at +40\n",
	       (int)getpid(), (void *)win);
	printf("VMAs in the window (stock kernel: 4; merged: A|B and C|D become 1 each):\n");
	n = show_window();
	printf("=> %d VMAs, data %s\n", n, ok ? "intact" : "CORRUPTED");
	printf("READY pid=%d\n", (int)getpid());
	for (;;)
		pause();
}
