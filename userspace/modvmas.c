// SPDX-License-Identifier: GPL-2.0
/*
 * modvmas.c - VMAMERGE_IOC_VMAS: a process's VMAs as the module sees
 * them.  See modvmas.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "modvmas.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434	/* the same on every architecture */
#endif

#define MODVMAS_BATCH	1024

int modvmas_fetch(modvmas_ioctl_fn fn, void *ctx, __u32 target_kind,
		  __s32 target_id, __u32 batch, struct vmamerge_vma **out,
		  size_t *nr)
{
	struct vmamerge_vma *v = NULL, *tmp;
	struct vmamerge_vmas arg;
	size_t n = 0, cap = 0, i;
	__u64 addr = 0;
	int ret;

	*out = NULL;
	*nr = 0;
	if (!batch)
		batch = MODVMAS_BATCH;
	if (batch > VMAMERGE_VMAS_MAX)
		batch = VMAMERGE_VMAS_MAX;
	for (;;) {
		if (cap - n < batch) {
			cap = n + batch;
			tmp = realloc(v, cap * sizeof(*v));
			if (!tmp) {
				ret = -ENOMEM;
				goto fail;
			}
			v = tmp;
		}
		memset(&arg, 0, sizeof(arg));
		arg.size = sizeof(arg);
		arg.target_kind = target_kind;
		arg.target_id = target_id;
		arg.nr = batch;
		arg.addr = addr;
		arg.vmas_ptr = (__u64)(uintptr_t)(v + n);
		arg.vma_size = sizeof(*v);
		ret = fn(ctx, &arg);
		if (ret)
			goto fail;
		if (arg.nr > batch) {
			ret = -EIO;
			goto fail;
		}
		/*
		 * Each batch in address order, all ending above addr.  Across
		 * batches the layout may have changed in between; then
		 * maps_merge_module() just finds fewer matches.
		 */
		for (i = n; i < n + arg.nr; i++)
			if (v[i].end <= v[i].start || v[i].end <= addr ||
			    (i > n && v[i].start < v[i - 1].end)) {
				ret = -EIO;
				goto fail;
			}
		n += arg.nr;
		if (arg.nr < batch)
			break;
		addr = v[n - 1].end;	/* full batch: there may be more */
	}
	if (!n) {
		free(v);
		v = NULL;
	}
	*out = v;
	*nr = n;
	return 0;
fail:
	free(v);
	return ret;
}

int modvmas_ioctl_fd(void *ctx, struct vmamerge_vmas *arg)
{
	int fd = *(int *)ctx, ret;

	do {
		ret = ioctl(fd, VMAMERGE_IOC_VMAS, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int modvmas_load(const char *dev, pid_t pid, struct vmamerge_vma **out,
		 size_t *nr, bool *open_failed)
{
	__u32 kind = VMAMERGE_TARGET_PIDFD;
	int fd, pidfd, ret;
	__s32 id;

	*out = NULL;
	*nr = 0;
	*open_failed = false;
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*open_failed = true;
		return -errno;
	}
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0) {
		id = pidfd;
	} else if (errno == ENOSYS) {
		kind = VMAMERGE_TARGET_PID;
		id = pid;
	} else {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = modvmas_fetch(modvmas_ioctl_fd, &fd, kind, id, 0, out, nr);
	if (pidfd >= 0)
		close(pidfd);
	close(fd);
	return ret;
}
