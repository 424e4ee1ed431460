// SPDX-License-Identifier: GPL-2.0
/*
 * Long-term pins: a page registered as an io_uring fixed
 * buffer is pinned with FOLL_PIN | FOLL_LONGTERM for as long as it stays
 * registered - the way a device's DMA target is - and io_uring writes into
 * it through the pin, never through the page tables.  Such a page must
 * never be rewritten (its folio must stay the one the pin holds):
 *  1. a one-page VMA "A" with a pinned page, moved behind an eight-page
 *     VMA "B" it would merge with: the cheaper side to rewrite is A, whose
 *     page is pinned - refused_pinned +1, the layout stays two VMAs;
 *  2. IORING_OP_READ_FIXED through the pin after the move: the file's
 *     bytes appear at A's new address (the page was neither copied nor
 *     replaced), B reads back intact;
 *  3. unregistered, A moved away and back: now it merges (opted in), one
 *     VMA, every page intact.
 * The rmap verifier after every step.
 *
 * usage: t_pins [-o] [-r | -s]   (-s: expect the stock layouts)
 */
#include "tap.h"
#include "uring.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define PG	4096UL
#define NB	8		/* pages of B */

static int stock, renumber_only, vfd = -1;
static char *win;

static int b_intact(void)
{
	int i;

	for (i = 0; i < (int)NB; i++)
		if (page_check(win + i * PG, 1 + i, NULL))
			return 0;
	return 1;
}

static int move_to(char *from, char *to)
{
	return mremap(from, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, to) == to ? 0 : -1;
}

int main(int argc, char **argv)
{
	char *a, *far, path[64], file_page[PG];
	long pinned0 = stats_counter("refused_pinned"), d;
	struct iovec iov;
	struct uring u;
	int i, file, want_vmas, r;

	if (mode_init(argc, argv, "t_pins", 120, &stock, &renumber_only, NULL,
		      &vfd))
		return 2;
	win = aligned_window(2UL << 20);
	if (!win || mmap(win, NB * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != win) {
		ok(0, "pins: mmap B");
		return tap_exit();
	}
	for (i = 0; i < (int)NB; i++)
		page_fill(win + i * PG, 1 + i);
	far = win + (1UL << 20);
	a = mmap(far, PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (a != far) {
		ok(0, "pins: mmap A");
		return tap_exit();
	}
	page_fill(a, 99);
	if (uring_setup(&u, 4)) {
		skip("no io_uring", "pins: io_uring_setup: %s", errname(errno));
		return tap_exit();
	}
	iov.iov_base = a;
	iov.iov_len = PG;
	if (uring_register(&u, &iov, 1)) {
		skip("cannot register a fixed buffer", "pins: %s", errname(errno));
		uring_close(&u);
		return tap_exit();
	}
	/* 1. moved behind B while pinned */
	if (!ok(!move_to(a, win + NB * PG), "pins: A (pinned) moved behind B"))
		return tap_exit();
	ok(vmas_in(win, win + (NB + 1) * PG) == 2,
	   "pins: pinned A stays apart from B: 2 VMAs (%d)",
	   vmas_in(win, win + (NB + 1) * PG));
	d = stats_counter("refused_pinned") - pinned0;
	if (pinned0 < 0)
		skip("no debugfs stats", "pins: refused_pinned");
	else
		ok(d == (stock ? 0 : 1), "pins: refused_pinned +%d (%ld)",
		   stock ? 0 : 1, d);
	ok(!page_check(win + NB * PG, 99, NULL) && b_intact(),
	   "pins: A and B read back intact after the move");
	vm_verify_self_ok("pins: after the move");

	/* 2. io_uring writes through the pin: it must land in A */
	snprintf(path, sizeof(path), "/tmp/t_pins.%d", (int)getpid());
	file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	memset(file_page, 0x6b, sizeof(file_page));
	if (file < 0 || write(file, file_page, PG) != (ssize_t)PG) {
		ok(0, "pins: the file to read from");
		return tap_exit();
	}
	/* the registered range is A's address at registration time */
	r = uring_read_fixed(&u, file, far, PG, 0, 0);
	ok(r == (int)PG, "pins: READ_FIXED into the pinned buffer (%d)", r);
	for (i = 0; i < (int)PG && win[NB * PG + i] == 0x6b; i++)
		;
	ok(i == (int)PG,
	   "pins: the bytes written through the pin are at A's new address (first differing offset %d)",
	   i);
	ok(b_intact(), "pins: B intact");
	vm_verify_self_ok("pins: after READ_FIXED");

	/* 3. unpinned: the same move merges */
	ok(!uring_unregister(&u), "pins: buffer unregistered");
	uring_close(&u);
	close(file);
	unlink(path);
	ok(!move_to(win + NB * PG, far) && !move_to(far, win + NB * PG),
	   "pins: A moved away and back, unpinned");
	want_vmas = stock ? 2 : 1;
	ok(vmas_in(win, win + (NB + 1) * PG) == want_vmas,
	   "pins: unpinned A %s B: %d VMA(s) (%d)",
	   stock ? "stays apart from" : "merges with", want_vmas,
	   vmas_in(win, win + (NB + 1) * PG));
	for (i = 0; i < (int)PG && win[NB * PG + i] == 0x6b; i++)
		;
	ok(i == (int)PG && b_intact(), "pins: every page intact after the merge");
	vm_verify_self_ok("pins: at the end");
	munmap(win, 2UL << 20);
	return tap_exit();
}
