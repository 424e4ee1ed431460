// SPDX-License-Identifier: GPL-2.0
/*
 * compact.c - output of "vmamerge compact" (pure).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "compact.h"

/* The counters the module filled, never more than the struct holds. */
static unsigned int nr_counters(const struct vmamerge_compact *r)
{
	return r->nr_counters > VMAMERGE_MAX_COUNTERS ? VMAMERGE_MAX_COUNTERS :
	       r->nr_counters;
}

/* Delta of counter id, 0 when the module did not report it. */
static unsigned long long delta(const struct vmamerge_compact *r,
				unsigned int id)
{
	return id < nr_counters(r) ? (unsigned long long)r->counters[id] : 0;
}

unsigned long long compact_pages_rewritten(const struct vmamerge_compact *r)
{
	/* a page renumbered and transplanted in one pass counts once */
	if (VMAMERGE_C_PAGES_REWRITTEN < nr_counters(r))
		return delta(r, VMAMERGE_C_PAGES_REWRITTEN);
	/* a module without that counter: an upper bound */
	return delta(r, VMAMERGE_C_PAGES_RENUMBERED) +
	       delta(r, VMAMERGE_C_PAGES_TRANSPLANTED);
}

/*
 * Print each refusal that moved - a refused_* counter whose delta is not
 * 0 - with fmt, whose arguments are: "" for the first and sep for the
 * others, the name, the count.  Returns how many were printed.
 */
static unsigned int print_refusals(FILE *f, const struct vmamerge_compact *r,
				   const char *fmt, const char *sep)
{
	unsigned int i, n = 0, nr = nr_counters(r);
	const char *name;
	char buf[32];

	for (i = 0; i < nr; i++) {
		name = counter_name(i, buf, sizeof(buf));
		if (!r->counters[i] || strncmp(name, "refused_", 8))
			continue;
		fprintf(f, fmt, n++ ? sep : "", name,
			(unsigned long long)r->counters[i]);
	}
	return n;
}

/* "1.234": ns as milliseconds with three decimals, without rounding up. */
static void print_ms(FILE *f, unsigned long long ns)
{
	fprintf(f, "%llu.%03llu", ns / 1000000, ns / 1000 % 1000);
}

void compact_print_text(FILE *f, pid_t pid, const struct vmamerge_compact *r)
{
	fprintf(f, "pid %d: %llu VMAs -> %llu, %llu merge%s (%llu VMAs offered)\n",
		(int)pid, (unsigned long long)r->vmas_before,
		(unsigned long long)r->vmas_after,
		(unsigned long long)r->merges, r->merges == 1 ? "" : "s",
		(unsigned long long)r->vmas_offered);
	fprintf(f, "pages rewritten: %llu (%llu renumbered, %llu transplanted)\n",
		compact_pages_rewritten(r),
		delta(r, VMAMERGE_C_PAGES_RENUMBERED),
		delta(r, VMAMERGE_C_PAGES_TRANSPLANTED));
	fputs("refused:", f);
	fputs(print_refusals(f, r, "%s %s %llu", ",") ? "\n" : " none\n", f);
	fprintf(f, "mmap_lock: %llu slice%s, longest hold ",
		(unsigned long long)r->lock_slices,
		r->lock_slices == 1 ? "" : "s");
	print_ms(f, r->max_hold_ns);
	fputs(" ms\n", f);
}

void compact_print_json(FILE *f, pid_t pid, const struct vmamerge_compact *r)
{
	unsigned int i, nr = nr_counters(r);
	char buf[32];

	fprintf(f, "{\"pid\": %d, \"vmas_before\": %llu, \"vmas_after\": %llu, \"vmas_offered\": %llu, \"merges\": %llu, \"pages_rewritten\": %llu, \"pages_renumbered\": %llu, \"pages_transplanted\": %llu, \"refused\": {",
		(int)pid, (unsigned long long)r->vmas_before,
		(unsigned long long)r->vmas_after,
		(unsigned long long)r->vmas_offered,
		(unsigned long long)r->merges, compact_pages_rewritten(r),
		delta(r, VMAMERGE_C_PAGES_RENUMBERED),
		delta(r, VMAMERGE_C_PAGES_TRANSPLANTED));
	print_refusals(f, r, "%s\"%s\": %llu", ", ");
	fprintf(f, "}, \"lock_slices\": %llu, \"max_hold_ns\": %llu, \"max_hold_ms\": ",
		(unsigned long long)r->lock_slices,
		(unsigned long long)r->max_hold_ns);
	print_ms(f, r->max_hold_ns);
	fputs(", \"counters\": {", f);
	for (i = 0; i < nr; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "",
			counter_name(i, buf, sizeof(buf)),
			(unsigned long long)r->counters[i]);
	fputs("}}\n", f);
}
