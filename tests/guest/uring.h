/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal io_uring for the guest tests, raw syscalls (no liburing in the
 * static guest): a ring with registered ("fixed") buffers - pinned by the
 * kernel with FOLL_PIN | FOLL_LONGTERM for as long as they are registered,
 * the way a DMA target is - and IORING_OP_READ_FIXED into one of them,
 * which writes through the pin, not through the page tables.
 */
#ifndef VMAMERGE_TESTS_URING_H
#define VMAMERGE_TESTS_URING_H

#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/io_uring.h>

struct uring {
	int fd;
	struct io_uring_params p;
	void *sq, *cq;
	size_t sq_len, cq_len;
	struct io_uring_sqe *sqes;
	size_t sqes_len;
};

static inline int uring_setup(struct uring *u, unsigned int entries)
{
	memset(u, 0, sizeof(*u));
	u->fd = syscall(__NR_io_uring_setup, entries, &u->p);
	if (u->fd < 0)
		return -1;
	u->sq_len = u->p.sq_off.array + u->p.sq_entries * sizeof(uint32_t);
	u->cq_len = u->p.cq_off.cqes +
		    u->p.cq_entries * sizeof(struct io_uring_cqe);
	u->sq = mmap(NULL, u->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     u->fd, IORING_OFF_SQ_RING);
	u->cq = mmap(NULL, u->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     u->fd, IORING_OFF_CQ_RING);
	u->sqes_len = u->p.sq_entries * sizeof(struct io_uring_sqe);
	u->sqes = mmap(NULL, u->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       u->fd, IORING_OFF_SQES);
	if (u->sq == MAP_FAILED || u->cq == MAP_FAILED ||
	    u->sqes == MAP_FAILED) {
		close(u->fd);
		u->fd = -1;
		return -1;
	}
	return 0;
}

static inline void uring_close(struct uring *u)
{
	if (u->fd < 0)
		return;
	munmap(u->sq, u->sq_len);
	munmap(u->cq, u->cq_len);
	munmap(u->sqes, u->sqes_len);
	close(u->fd);
	u->fd = -1;
}

/* Register @n buffers (pins their pages); 0 or -1 with errno. */
static inline int uring_register(struct uring *u, struct iovec *iov,
				 unsigned int n)
{
	return syscall(__NR_io_uring_register, u->fd, IORING_REGISTER_BUFFERS,
		       iov, n) ? -1 : 0;
}

static inline int uring_unregister(struct uring *u)
{
	return syscall(__NR_io_uring_register, u->fd,
		       IORING_UNREGISTER_BUFFERS, NULL, 0) ? -1 : 0;
}

/*
 * READ_FIXED of @len bytes at @off of @file into @addr, inside registered
 * buffer @index; waits for it.  Returns the CQE's result (bytes or -errno),
 * or -1000 if the ring misbehaved.
 */
static inline int uring_read_fixed(struct uring *u, int file, void *addr,
				   unsigned int len, uint64_t off,
				   unsigned int index)
{
	volatile uint32_t *sq_tail = (uint32_t *)((char *)u->sq + u->p.sq_off.tail);
	uint32_t *sq_array = (uint32_t *)((char *)u->sq + u->p.sq_off.array);
	uint32_t mask = *(uint32_t *)((char *)u->sq + u->p.sq_off.ring_mask);
	volatile uint32_t *cq_head = (uint32_t *)((char *)u->cq + u->p.cq_off.head);
	volatile uint32_t *cq_tail = (uint32_t *)((char *)u->cq + u->p.cq_off.tail);
	uint32_t cmask = *(uint32_t *)((char *)u->cq + u->p.cq_off.ring_mask);
	struct io_uring_cqe *cqes =
		(struct io_uring_cqe *)((char *)u->cq + u->p.cq_off.cqes);
	uint32_t tail = *sq_tail, head;
	struct io_uring_sqe *sqe = &u->sqes[tail & mask];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ_FIXED;
	sqe->fd = file;
	sqe->off = off;
	sqe->addr = (unsigned long)addr;
	sqe->len = len;
	sqe->buf_index = index;
	sq_array[tail & mask] = tail & mask;
	__atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0)
		return -1000;
	head = *cq_head;
	if (head == __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE))
		return -1000;
	res = cqes[head & cmask].res;
	__atomic_store_n(cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

#endif
