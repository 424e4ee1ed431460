/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compact.h - "vmamerge compact": printing the result of
 * VMAMERGE_IOC_COMPACT (pure functions on the struct, so that test_maps.c
 * can check them).
 */
#ifndef VMAMERGE_COMPACT_H
#define VMAMERGE_COMPACT_H

#include <stdio.h>
#include <sys/types.h>

#include "vmamerge.h"	/* module/uapi */

/* Pages the walk rewrote: the pages_renumbered + pages_transplanted deltas. */
unsigned long long compact_pages_rewritten(const struct vmamerge_compact *r);

/*
 * The report as "vmamerge compact" prints it, four lines:
 *   pid 42: 120 VMAs -> 12, 108 merges (110 VMAs offered)
 *   pages rewritten: 4096 (4000 renumbered, 96 transplanted)
 *   refused: refused_shared 1, refused_thp 2          ("refused: none")
 *   mmap_lock: 37 slices, longest hold 1.234 ms
 * Refusals are the counters named refused_* whose delta is not 0.
 */
void compact_print_text(FILE *f, pid_t pid, const struct vmamerge_compact *r);
/*
 * The same as one JSON object and a newline: the numbers above, "refused"
 * {name: count} with the same refusals, and "counters" with every delta.
 */
void compact_print_json(FILE *f, pid_t pid, const struct vmamerge_compact *r);

#endif /* VMAMERGE_COMPACT_H */
