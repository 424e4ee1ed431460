/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernelcheck.h - "vmamerge check-kernel" and the tier "vmamerge status"
 * shows: the output of `kfp check` parsed strictly, the verdict as text
 * or JSON, the module's tier line.  Pure, so that test_maps.c can check
 * them.
 */
#ifndef VMAMERGE_KERNELCHECK_H
#define VMAMERGE_KERNELCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum kfp_ref_kind {
	KFP_REF_IDENTICAL,
	KFP_REF_DIFFERS,
	KFP_REF_OTHER_SERIES,
};

/* One "ref" record: the image compared with one validated build. */
struct kfp_ref {
	const char *release;
	enum kfp_ref_kind kind;
	/* identical: how many of each the fingerprint has (all the same) */
	unsigned long long nfuncs, nstructs, noptions;
	size_t ndiffs;		/* differs: how many items differ */
	const char *diffs;	/* differs: ndiffs NUL-terminated items in a row */
};

/* What `kfp check` printed, every record checked. */
struct kfp_check {
	const char *image, *version;
	const char *build_id;		/* NULL for "build-id none" */
	struct kfp_ref *refs;
	size_t nrefs;
	bool equivalent;
	/* equivalent: the identical ref; refused: the nearest, NULL for "none" */
	const struct kfp_ref *verdict;
};

/*
 * Parse the stdout of `kfp check --release RELEASE` run with nfps
 * fingerprints, which exited with exit_status (0 or 1): out, len bytes,
 * is cut into strings in place and *k points into it.  Every line must be
 * a record of the format, in order (image, version, build-id, one ref per
 * fingerprint, the verdict last), consistent with itself and with the exit
 * status.  0, or -1 with why in err (one line; *k is freed then).
 */
int kfp_check_parse(char *out, size_t len, const char *release, size_t nfps,
		    int exit_status, struct kfp_check *k, char *err,
		    size_t errlen);
void kfp_check_free(struct kfp_check *k);

/* The verdict of check-kernel, to print. */
struct kernel_verdict {
	const char *release;
	/* "full", "smoke", "debug", "equivalent", "refused"; NULL on error */
	const char *tier;
	const struct kfp_ref *ref;	/* see kfp_check.verdict */
	const char *build_id;		/* kfp's, or NULL */
	const char *error;		/* NULL, or the error message */
};

/*
 * As text: one line, "REL: validated (full tier)", "REL: equivalent to
 * REF: N functions, N structs, N config options identical" or "REL:
 * refused: ..." and a second line with what to do.  Nothing on error (the
 * message goes to stderr).
 */
void kernel_verdict_text(FILE *f, const struct kernel_verdict *v);
/*
 * As one JSON object and a newline: kernel, validated, tier,
 * equivalent_to, nearest, build_id, differs, error.
 */
void kernel_verdict_json(FILE *f, const struct kernel_verdict *v);

/* full, smoke, debug: the tiers of module/builds.list. */
bool tier_validated(const char *tier);
/* "full tier", "smoke tier", "debug twin of a full build", ... */
const char *tier_text(const char *tier);
/*
 * The module's tier line (/sys/module/vmamerge/build, modinfo's "tier",
 * without the newline): "full", "smoke", "debug" or "equivalent REF".
 * Sets *tier to a constant string and *ref to REF inside s (NULL for the
 * others).  0, or -1 when s is none of them.
 */
int tier_parse(const char *s, const char **tier, const char **ref);

#endif /* VMAMERGE_KERNELCHECK_H */
