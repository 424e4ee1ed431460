/* SPDX-License-Identifier: GPL-2.0 */
/*
 * subproc.h - run a helper program without a shell and capture what it
 * prints (check-kernel's kfp, status's modinfo).
 */
#ifndef VMAMERGE_SUBPROC_H
#define VMAMERGE_SUBPROC_H

#include <stdbool.h>
#include <stddef.h>

/* What a program printed, at most this much of each stream. */
#define SPAWN_MAX_OUTPUT	(1 << 20)

struct spawn_out {
	char *out, *err;	/* NUL-terminated (a NUL it printed stays) */
	size_t out_len, err_len;
	bool truncated;		/* a stream passed SPAWN_MAX_OUTPUT: the rest dropped */
	int status;		/* waitpid()'s */
};

/*
 * Run @path (no PATH search) with @argv, standard input /dev/null, and
 * wait for it.  Returns 0 with *o filled (free with spawn_out_free()), or
 * an errno when it could not be run (ENOENT, EACCES, ENOEXEC from the
 * exec; what pipe(), posix_spawn() or waitpid() failed with); *o is then
 * empty.
 */
int spawn_capture(const char *path, char *const argv[], struct spawn_out *o);
void spawn_out_free(struct spawn_out *o);

/*
 * The executable @name in $PATH, else in @dirs (':'-separated) into buf.
 * 0, or -1 when none is found.
 */
int spawn_find(const char *name, const char *dirs, char *buf, size_t len);

#endif /* VMAMERGE_SUBPROC_H */
