/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maps.h - parsing /proc/PID/{maps,smaps,numa_maps} text and finding
 * adjacent anonymous VMAs that were not merged.  Pure functions on
 * text buffers so that test_maps.c can exercise them without /proc.
 */
#ifndef VMAMERGE_MAPS_H
#define VMAMERGE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct vma_info {
	unsigned long long start;
	unsigned long long end;
	char perms[5];			/* "rw-p" */
	unsigned long long offset;	/* offset column (bytes) */
	unsigned int dev_major;
	unsigned int dev_minor;
	unsigned long long inode;
	char *name;			/* "" if none */
	char *vmflags;			/* smaps VmFlags, NULL if unknown */
	char *policy;			/* numa_maps policy, NULL if unknown */
	bool anon;			/* private anonymous (see maps.c) */
	bool pgoff_known;		/* pgoff below is meaningful */
	unsigned long long pgoff;	/* in pages */
	/* From VMAMERGE_IOC_VMAS (maps_merge_module()), if matched: */
	bool mod;			/* the module reported this VMA */
	unsigned int mod_flags;		/* VMAMERGE_VMA_* */
	unsigned long long vm_flags;	/* the kernel's vm_flags */
};

struct vma_list {
	struct vma_info *v;
	size_t nr;
	size_t cap;
	unsigned int page_shift;	/* 12 unless told otherwise */
	bool have_vmflags;		/* parsed text was smaps */
	bool have_policy;		/* numa_maps was applied */
	bool anon_pgoff_visible;	/* text shows pgoff of anon VMAs */
	bool have_mod;			/* maps_merge_module() was applied */
	size_t nr_mod_unmatched;	/* /proc VMAs the module did not report */
};

/*
 * Why two adjacent anonymous VMAs with equal permissions are separate.
 * With the module's information (pair.exact) PGOFF, ANON_VMA and BOTH are
 * exact and UNEXPLAINED is possible; from /proc text alone ANON_VMA only
 * means "pgoff is linear" and UNKNOWN is the usual answer.
 */
enum pair_reason {
	PAIR_PGOFF,		/* pgoff not linear: renumber would fix it */
	PAIR_ANON_VMA,		/* pgoff linear, anon_vmas differ: transplant */
	PAIR_UNKNOWN,		/* pgoff or anon_vma: anon pgoff not shown */
	PAIR_FLAGS,		/* VmFlags differ: not a candidate */
	PAIR_POLICY,		/* NUMA policy differs: not a candidate */
	PAIR_SPECIAL,		/* VM_IO/PFNMAP/MIXEDMAP/DONTEXPAND */
	PAIR_BOTH,		/* pgoff not linear and anon_vmas differ */
	PAIR_UNEXPLAINED,	/* module: pgoff linear, anon_vma shared or
				 * absent - should not happen */
	PAIR_NR_REASONS
};

struct vma_pair {
	size_t a;		/* index of the lower VMA */
	size_t b;		/* index of the next one, b == a + 1 */
	enum pair_reason reason;
	bool exact;		/* classified with the module's information */
	bool different_root;	/* exact, anon_vmas differ, roots differ too */
	bool changed;		/* module info given but not for this pair */
	unsigned long long want_pgoff;	/* pgoff b needs to be linear */
};

struct maps_summary {
	size_t nr_vmas;
	size_t nr_pairs;
	size_t by_reason[PAIR_NR_REASONS];
	bool have_mod;		/* the list had the module's information */
};

void vma_list_init(struct vma_list *list);
void vma_list_free(struct vma_list *list);

/*
 * Parse one maps header line ("start-end perms offset maj:min inode name").
 * Returns 0 on success, -1 if the line is not a header.  On success
 * vma->name is allocated.
 */
int maps_parse_header(const char *line, size_t len, struct vma_info *vma);

/*
 * Parse the text of /proc/PID/maps or /proc/PID/smaps, appending to list.
 * Returns 0, -1 on malformed text (*bad_line = 1-based line number)
 * or -2 on allocation failure.
 */
int maps_parse(struct vma_list *list, const char *text, size_t *bad_line);

/* Attach numa_maps policies (matched by start address).  Returns 0/-2. */
int maps_apply_numa(struct vma_list *list, const char *text);

/* Decide anon_pgoff_visible and fill pgoff/pgoff_known. */
void maps_finish(struct vma_list *list);

struct vmamerge_vma;

/*
 * Merge what VMAMERGE_IOC_VMAS reported (nr entries in address order)
 * into a finished list: VMAs are matched by start and end; a matched VMA
 * gets the real pgoff (pgoff_known), mod_flags and vm_flags.  Sets
 * have_mod and anon_pgoff_visible.  VMAs that changed between the two
 * reads stay unmatched (nr_mod_unmatched counts the /proc ones).
 * Returns the number of matched VMAs.  Call after maps_finish().
 */
size_t maps_merge_module(struct vma_list *list, const struct vmamerge_vma *kv,
			 size_t nr);

/*
 * Find the adjacent anonymous pairs.  *pairs is malloc()ed (may be NULL
 * if none).  Returns the number of pairs, or (size_t)-1 on ENOMEM.
 */
size_t maps_analyze(const struct vma_list *list, struct vma_pair **pairs,
		    struct maps_summary *sum);

bool vma_is_private_anon(const struct vma_info *vma);
bool vmflags_equal(const char *a, const char *b);
bool vmflags_has(const char *flags, const char *mnemonic);
bool anon_names_compatible(const char *a, const char *b);

const char *pair_reason_name(enum pair_reason r);
const char *pair_reason_text(enum pair_reason r);
bool pair_reason_is_candidate(enum pair_reason r);
/*
 * Merges the process misses: adjacent pairs that vmamerge's features
 * address (pgoff, anon_vma, both, unknown); each one merged is one VMA less.
 */
size_t maps_missed_merges(const struct maps_summary *sum);

/*
 * The reason of one pair as "vmamerge maps" prints it: exact pairs say
 * "pgoff (linear would be 0x...)", "anon_vma", "anon_vma (different root)",
 * "pgoff and anon_vma"...; others pair_reason_text().
 */
void maps_format_pair(char *buf, size_t len, const struct vma_pair *p);

/*
 * Runs: pairs chained VMA to VMA (each pair's lower VMA is the previous
 * one's upper) that stay apart for the same reason, told the same way.
 * A run of nr pairs is nr + 1 VMAs, from pairs[0].a to pairs[nr - 1].b;
 * a lone pair is a run of two VMAs.  maps_run_end() returns the end (one
 * past) of the run that starts at pairs[i], i < nr.
 */
size_t maps_run_end(const struct vma_pair *pairs, size_t nr, size_t i);

/*
 * The reason of a run of nr pairs: maps_format_pair() for one pair, else
 * the same words without the pgoff a single pair would need.
 */
void maps_format_run(char *buf, size_t len, const struct vma_pair *pairs,
		     size_t nr);

/* The pgoff column: "0x..." (pages), or "-" where it is not known. */
void maps_format_pgoff(char *buf, size_t len, const struct vma_info *v);

/*
 * "missed merges: N (vmamerge compact would leave M vmas at best)": the
 * maps_missed_merges() count and the VMAs left with every one merged.
 */
void maps_print_missed(FILE *f, const struct maps_summary *sum);

/* One-line summary, as printed by "vmamerge maps". */
void maps_print_summary(FILE *f, const struct maps_summary *sum,
			bool anon_pgoff_visible);

#endif /* VMAMERGE_MAPS_H */
