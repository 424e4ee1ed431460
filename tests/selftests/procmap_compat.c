// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl(PROCMAP_QUERY) for kernels without it (before 6.11): linked into
 * the upstream mm selftests with -Wl,--wrap=ioctl.  When the kernel
 * answers ENOTTY to PROCMAP_QUERY on a /proc/PID/maps file, the query is
 * answered from the file's text instead: the VMA covering query_addr (or,
 * with PROCMAP_QUERY_COVERING_OR_NEXT_VMA, the first VMA ending above it),
 * its start, end, offset and protection flags.  Every other request goes
 * to the real ioctl unchanged.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

int __real_ioctl(int fd, unsigned long request, ...);

static __u64 maps_flags(const char *perms)
{
	__u64 f = 0;

	if (perms[0] == 'r')
		f |= PROCMAP_QUERY_VMA_READABLE;
	if (perms[1] == 'w')
		f |= PROCMAP_QUERY_VMA_WRITABLE;
	if (perms[2] == 'x')
		f |= PROCMAP_QUERY_VMA_EXECUTABLE;
	if (perms[3] == 's')
		f |= PROCMAP_QUERY_VMA_SHARED;
	return f;
}

/* One pass over the maps text of @fd; 0, or -1 with errno set */
static int query_from_text(int fd, struct procmap_query *q)
{
	char buf[1 << 16], line[4096], perms[8];
	unsigned long start, end, off;
	size_t used = 0;
	ssize_t n;
	off_t pos = 0;

	for (;;) {
		n = pread(fd, buf + used, sizeof(buf) - used, pos);
		if (n < 0)
			return -1;
		pos += n;
		used += n;
		for (;;) {
			char *nl = memchr(buf, '\n', used);
			size_t len;

			if (!nl)
				break;
			len = nl - buf;
			if (len >= sizeof(line))
				len = sizeof(line) - 1;
			memcpy(line, buf, len);
			line[len] = '\0';
			used -= nl + 1 - buf;
			memmove(buf, nl + 1, used);
			if (sscanf(line, "%lx-%lx %4s %lx", &start, &end, perms, &off) != 4)
				continue;
			if (end <= q->query_addr)
				continue;
			if (start > q->query_addr &&
			    !(q->query_flags & PROCMAP_QUERY_COVERING_OR_NEXT_VMA))
				break;
			q->vma_start = start;
			q->vma_end = end;
			q->vma_offset = off;
			q->vma_flags = maps_flags(perms);
			q->vma_page_size = sysconf(_SC_PAGESIZE);
			q->vma_name_size = 0;
			q->build_id_size = 0;
			return 0;
		}
		if (n == 0 || used == sizeof(buf))
			break;
	}
	errno = ENOENT;
	return -1;
}

int __wrap_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	ret = __real_ioctl(fd, request, arg);
	if (ret == -1 && errno == ENOTTY && request == PROCMAP_QUERY)
		ret = query_from_text(fd, arg);
	return ret;
}
