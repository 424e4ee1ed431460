/* SPDX-License-Identifier: GPL-2.0 */
/*
 * modvmas.h - reading a process's VMAs from the module with
 * VMAMERGE_IOC_VMAS (what /proc/PID/maps does not show: anonymous pgoffs
 * and anon_vma sharing).  The batching loop takes the ioctl as a callback
 * so that test_maps.c can drive it without the module.
 */
#ifndef VMAMERGE_MODVMAS_H
#define VMAMERGE_MODVMAS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vmamerge.h"	/* module/uapi */

/* One VMAMERGE_IOC_VMAS call: 0 or -errno. */
typedef int (*modvmas_ioctl_fn)(void *ctx, struct vmamerge_vmas *arg);

/*
 * Read all VMAs of the target in batches of up to batch entries (0: a
 * default; capped at VMAMERGE_VMAS_MAX), each call continuing at the last
 * end, until a call returns fewer than asked.  *out is malloc()ed (NULL
 * if there are none), *nr its length.  Returns 0 or -errno (-EIO if the
 * answers make no sense: too many, out of order).
 */
int modvmas_fetch(modvmas_ioctl_fn fn, void *ctx, __u32 target_kind,
		  __s32 target_id, __u32 batch, struct vmamerge_vma **out,
		  size_t *nr);

/* The real ioctl on the open device; ctx points to the fd (an int). */
int modvmas_ioctl_fd(void *ctx, struct vmamerge_vmas *arg);

/*
 * Open dev (normally VMAMERGE_DEVICE) read-only, name pid by a pidfd (by
 * pid if pidfd_open() is not available) and fetch its VMAs.  Returns 0 or
 * -errno; no message is printed.  -ENOENT/-ENXIO/-ENODEV: no module;
 * -ENOTTY: the module predates VMAMERGE_IOC_VMAS; -EPERM/-EACCES,
 * -ESRCH, -EINVAL as the ioctl returns them.  *open_failed tells whether
 * the error came from opening dev.
 */
int modvmas_load(const char *dev, pid_t pid, struct vmamerge_vma **out,
		 size_t *nr, bool *open_failed);

#endif /* VMAMERGE_MODVMAS_H */
