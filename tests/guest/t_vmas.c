// SPDX-License-Identifier: GPL-2.0
/*
 * VMAMERGE_IOC_VMAS: exact page offsets and anon_vma sharing of layouts
 * built on purpose, batching, bad input and permissions.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/ioctl.h>

#include "tap.h"

#define PG	4096UL
#define MAXV	4096

static struct vmamerge_vma vmas[MAXV];

/* Fill vmas[] for (kind, id) from addr; returns count or -errno. */
static int get_vmas(int fd, uint32_t kind, int32_t id, uint64_t addr,
		    uint32_t nr, struct vmamerge_vma *out)
{
	struct vmamerge_vmas v = {
		.size = sizeof(v), .target_kind = kind, .target_id = id,
		.nr = nr, .addr = addr, .vmas_ptr = (uintptr_t)out,
		.vma_size = sizeof(*out),
	};
	int ret = vm_ioctl(fd, VMAMERGE_IOC_VMAS, &v);

	return ret ? ret : (int)v.nr;
}

static const struct vmamerge_vma *find(int n, unsigned long start)
{
	int i;

	for (i = 0; i < n; i++)
		if (vmas[i].start == start)
			return &vmas[i];
	return NULL;
}

static void *map_at(unsigned long addr, size_t len)
{
	void *p = mmap((void *)addr, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	if (p == MAP_FAILED) {
		diag("mmap %#lx: %s", addr, strerror(errno));
		exit(1);
	}
	memset(p, 0x5a, len);	/* fault every page: anon_vma exists */
	return p;
}

/* A moved block keeps its old pgoff and anon_vma next to a neighbour. */
static void test_moved_block(int fd, unsigned long base)
{
	unsigned long a = base, b_old = base + 64 * PG, b_new = base + 4 * PG;
	const struct vmamerge_vma *va, *vb;
	void *p;
	int n;

	map_at(a, 4 * PG);
	map_at(b_old, 4 * PG);
	p = mremap((void *)b_old, 4 * PG, 4 * PG,
		   MREMAP_MAYMOVE | MREMAP_FIXED, (void *)b_new);
	if (!ok(p == (void *)b_new, "mremap next to a faulted neighbour"))
		return;
	n = get_vmas(fd, VMAMERGE_TARGET_SELF, 0, 0, MAXV, vmas);
	ok(n > 0, "VMAS on self returns VMAs (%d)", n);
	va = find(n, a);
	vb = find(n, b_new);
	if (!ok(va && vb, "both VMAs reported"))
		return;
	ok(va->end == b_new && vb->end == b_new + 4 * PG,
	   "exact ranges %#llx-%#llx %#llx-%#llx", (unsigned long long)va->start,
	   (unsigned long long)va->end, (unsigned long long)vb->start,
	   (unsigned long long)vb->end);
	ok(va->pgoff == a / PG, "first block pgoff == addr >> 12 (%#llx)",
	   (unsigned long long)va->pgoff);
	ok(vb->pgoff == b_old / PG,
	   "moved block keeps its old pgoff (%#llx, want %#lx)",
	   (unsigned long long)vb->pgoff, b_old / PG);
	ok((va->flags & VMAMERGE_VMA_ANON) && (vb->flags & VMAMERGE_VMA_ANON),
	   "both have an anon_vma");
	ok(vb->flags & VMAMERGE_VMA_ADJACENT_PREV, "moved block is adjacent");
	ok(!(vb->flags & (VMAMERGE_VMA_SAME_AV_PREV |
			  VMAMERGE_VMA_SAME_ROOT_PREV)),
	   "different anon_vma and root (flags %#x)", vb->flags);
	ok(!(va->flags & VMAMERGE_VMA_FILE), "anonymous, not file");
	munmap((void *)a, 8 * PG);
}

/* mprotect splits share one anon_vma and stay linear. */
static void test_split(int fd, unsigned long base)
{
	const struct vmamerge_vma *v1, *v2, *v3;
	int n;

	map_at(base, 8 * PG);
	if (!ok(!mprotect((void *)(base + 2 * PG), 2 * PG, PROT_READ),
		"mprotect the middle"))
		return;
	n = get_vmas(fd, VMAMERGE_TARGET_SELF, 0, 0, MAXV, vmas);
	v1 = find(n, base);
	v2 = find(n, base + 2 * PG);
	v3 = find(n, base + 4 * PG);
	if (!ok(v1 && v2 && v3, "three VMAs after the split"))
		return;
	ok(v1->pgoff == base / PG && v2->pgoff == base / PG + 2 &&
	   v3->pgoff == base / PG + 4, "pgoffs are linear");
	ok((v2->flags & VMAMERGE_VMA_SAME_AV_PREV) &&
	   (v3->flags & VMAMERGE_VMA_SAME_AV_PREV) &&
	   (v3->flags & VMAMERGE_VMA_SAME_ROOT_PREV),
	   "split parts share the anon_vma");
	ok(!(v2->vm_flags & 0x2) && (v1->vm_flags & 0x2),
	   "vm_flags shows VM_WRITE only outside the RO middle");
	munmap((void *)base, 8 * PG);
}

/* Reading one VMA at a time yields the same list as one big read. */
static void test_batching(int fd)
{
	static struct vmamerge_vma one[MAXV];
	uint64_t addr = 0;
	int n_all, n = 0, got, same = 1;

	n_all = get_vmas(fd, VMAMERGE_TARGET_SELF, 0, 0, MAXV, vmas);
	while (n < MAXV) {
		got = get_vmas(fd, VMAMERGE_TARGET_SELF, 0, addr, 1, &one[n]);
		if (got <= 0)
			break;
		addr = one[n++].end;
	}
	if (n != n_all)
		same = 0;
	for (int i = 0; same && i < n; i++)
		same = one[i].start == vmas[i].start &&
		       one[i].pgoff == vmas[i].pgoff &&
		       one[i].flags == vmas[i].flags;
	ok(same, "batches of one give the same %d VMAs as one call (%d)",
	   n_all, n);
	ok(get_vmas(fd, VMAMERGE_TARGET_SELF, 0, 0, 0, vmas) == 0,
	   "nr == 0 is fine and returns nothing");
}

static void test_bad_input(int fd)
{
	struct vmamerge_vmas v;

#define RESET() do { memset(&v, 0, sizeof(v)); v.size = sizeof(v); \
	v.nr = 4; v.vmas_ptr = (uintptr_t)vmas; v.vma_size = sizeof(vmas[0]); \
	} while (0)
	RESET(); v.vma_size = 8;
	expect_errno(vm_ioctl(fd, VMAMERGE_IOC_VMAS, &v), EINVAL,
		     "vma_size below the element size");
	RESET(); v.vma_size = 8192;
	expect_errno(vm_ioctl(fd, VMAMERGE_IOC_VMAS, &v), EINVAL,
		     "vma_size above a page");
	RESET(); v.nr = VMAMERGE_VMAS_MAX + 1;
	expect_errno(vm_ioctl(fd, VMAMERGE_IOC_VMAS, &v), EINVAL,
		     "nr above VMAMERGE_VMAS_MAX");
	RESET(); v.reserved[1] = 1;
	expect_errno(vm_ioctl(fd, VMAMERGE_IOC_VMAS, &v), EINVAL,
		     "reserved field set");
	RESET(); v.reserved0 = 1;
	expect_errno(vm_ioctl(fd, VMAMERGE_IOC_VMAS, &v), EINVAL,
		     "reserved0 set");
	RESET(); v.size = 16;
	expect_errno(vm_ioctl(fd, VMAMERGE_IOC_VMAS, &v), EINVAL,
		     "size below VER0");
	RESET(); v.target_kind = 7;
	expect_errno(vm_ioctl(fd, VMAMERGE_IOC_VMAS, &v), EINVAL,
		     "unknown target kind");
	RESET(); v.vmas_ptr = 16;
	expect_errno(vm_ioctl(fd, VMAMERGE_IOC_VMAS, &v), EFAULT,
		     "bad buffer pointer");
#undef RESET
}

static int unpriv_query_parent(void *arg)
{
	pid_t parent = (pid_t)(intptr_t)arg;
	int fd = vm_open(O_RDONLY);
	int ret;

	if (!ok(fd >= 0, "uid 65534 opens the device"))
		return 1;
	ret = get_vmas(fd, VMAMERGE_TARGET_PID, parent, 0, 4, vmas);
	return !expect_errno(ret < 0 ? ret : 0, EPERM,
			     "uid 65534 cannot read a root process's VMAs");
}

int main(void)
{
	unsigned long base;
	void *arena;
	int fd;

	tap_init("t_vmas", 120);
	fd = vm_open(O_RDONLY);
	if (!ok(fd >= 0, "open /dev/vmamerge read-only"))
		return tap_exit();
	/* A private arena, so fixed mappings never hit anything else. */
	arena = mmap(NULL, 256 * PG, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!ok(arena != MAP_FAILED, "reserve an arena"))
		return tap_exit();
	base = ((unsigned long)arena + 31 * PG) & ~(32 * PG - 1);
	test_moved_block(fd, base);
	test_split(fd, base + 128 * PG);
	test_batching(fd);
	test_bad_input(fd);
	ok(run_unprivileged(unpriv_query_parent,
			    (void *)(intptr_t)getpid()) == 0,
	   "unprivileged child sees EPERM");
	close(fd);
	return tap_exit();
}
