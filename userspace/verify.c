// SPDX-License-Identifier: GPL-2.0
/*
 * verify.c - output of "vmamerge verify" (pure).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "verify.h"

static const char *const kind_names[] = {
	[VMAMERGE_VIOL_NONE]		= "none",
	[VMAMERGE_VIOL_ANON_ROOT]	= "anon_root",
	[VMAMERGE_VIOL_INDEX]		= "index",
	[VMAMERGE_VIOL_TREE]		= "tree",
	[VMAMERGE_VIOL_CHAIN]		= "chain",
	[VMAMERGE_VIOL_COUNTS]		= "counts",
	[VMAMERGE_VIOL_NOT_ANON]	= "not_anon",
};

const char *verify_kind_name(unsigned int kind)
{
	if (kind < sizeof(kind_names) / sizeof(kind_names[0]))
		return kind_names[kind];
	return "unknown";
}

/* The kernel's message, NUL-terminated even if the kernel did not. */
static void verify_msg(const struct vmamerge_verify *v, char *buf, size_t len)
{
	size_t n = strnlen(v->msg, sizeof(v->msg));

	if (n >= len)
		n = len - 1;
	memcpy(buf, v->msg, n);
	buf[n] = '\0';
}

void verify_print_text(FILE *f, pid_t pid, const struct vmamerge_verify *v)
{
	char msg[sizeof(v->msg) + 1];

	fprintf(f, "pid %d: %llu VMAs, %llu pages (%llu in the swap cache) checked: ",
		(int)pid, (unsigned long long)v->nr_vmas,
		(unsigned long long)v->nr_pages,
		(unsigned long long)v->nr_swapcache);
	if (!v->nr_violations) {
		fprintf(f, "rmap invariants hold\n");
		return;
	}
	fprintf(f, "%llu violation%s\n", (unsigned long long)v->nr_violations,
		v->nr_violations == 1 ? "" : "s");
	verify_msg(v, msg, sizeof(msg));
	fprintf(f, "first: %s at 0x%llx: %s\n", verify_kind_name(v->kind),
		(unsigned long long)v->addr, msg);
	fprintf(f, "  vma 0x%llx-0x%llx pgoff 0x%llx, expected 0x%llx, found 0x%llx\n",
		(unsigned long long)v->vma_start, (unsigned long long)v->vma_end,
		(unsigned long long)v->vma_pgoff,
		(unsigned long long)v->expected, (unsigned long long)v->found);
}

void verify_print_json(FILE *f, pid_t pid, const struct vmamerge_verify *v)
{
	char msg[sizeof(v->msg) + 1];

	fprintf(f, "{\"pid\": %d, \"nr_vmas\": %llu, \"nr_pages\": %llu, \"nr_swapcache\": %llu, \"nr_violations\": %llu, \"first_violation\": ",
		(int)pid, (unsigned long long)v->nr_vmas,
		(unsigned long long)v->nr_pages,
		(unsigned long long)v->nr_swapcache,
		(unsigned long long)v->nr_violations);
	if (!v->nr_violations) {
		fprintf(f, "null}\n");
		return;
	}
	verify_msg(v, msg, sizeof(msg));
	fprintf(f, "{\"kind\": \"%s\", \"addr\": \"0x%llx\", \"vma_start\": \"0x%llx\", \"vma_end\": \"0x%llx\", \"vma_pgoff\": \"0x%llx\", \"expected\": \"0x%llx\", \"found\": \"0x%llx\", \"msg\": ",
		verify_kind_name(v->kind), (unsigned long long)v->addr,
		(unsigned long long)v->vma_start, (unsigned long long)v->vma_end,
		(unsigned long long)v->vma_pgoff,
		(unsigned long long)v->expected, (unsigned long long)v->found);
	json_string(f, msg);
	fprintf(f, "}}\n");
}
