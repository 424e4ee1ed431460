/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verify.h - "vmamerge verify": printing the result of VMAMERGE_IOC_VERIFY
 * (pure functions on the struct, so that test_maps.c can check them).
 */
#ifndef VMAMERGE_VERIFY_H
#define VMAMERGE_VERIFY_H

#include <stdio.h>
#include <sys/types.h>

#include "vmamerge.h"	/* module/uapi */

/* "anon_root", "index", ... for enum vmamerge_violation; "unknown". */
const char *verify_kind_name(unsigned int kind);

/*
 * The report as "vmamerge verify" prints it: one summary line, and for a
 * violation the first one in detail.  The kernel's msg is printed only up
 * to its NUL or the end of the field.
 */
void verify_print_text(FILE *f, pid_t pid, const struct vmamerge_verify *v);
/* The same as one JSON object and a newline. */
void verify_print_json(FILE *f, pid_t pid, const struct vmamerge_verify *v);

#endif /* VMAMERGE_VERIFY_H */
