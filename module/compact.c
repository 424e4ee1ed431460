// SPDX-License-Identifier: GPL-2.0
/*
 * Compaction on demand (VMAMERGE_IOC_COMPACT): one walk over a process's
 * address space that offers every private anonymous VMA whose
 * predecessor it touches to the merge logic, as an mprotect() that
 * changes nothing would (vmamerge_rg_merge_in_place(), path
 * VMAMERGE_PATH_COMPACT).  The decision point then does what it does for
 * every merge: makes offsets and anon_vmas agree by rewriting the cheaper
 * side where that is provably safe, refuses and counts otherwise, and the
 * stock logic merges.  Nothing here decides a merge.
 *
 * mmap_lock is taken for writing - the merge paths need it - in slices:
 * it is dropped and taken again between two VMAs once a slice has held it
 * for VMAMERGE_COMPACT_SLICE_NS, so the target's threads can fault and
 * map meanwhile.  One merge is not interrupted; its rewrite is bounded by
 * rewrite_max_pages.  The walk goes on from the end of the last VMA it
 * looked at, re-looked up after each retake: whatever changed meanwhile
 * is simply what the walk finds.
 *
 * The same walk runs by itself for an active process (opted in, or any
 * process in mode always) whose VMA count reaches compact_at_pct percent
 * of vm.max_map_count (module parameter, default 80, 0 = never), before
 * mmap(), mremap() or a split would fail with ENOMEM: a merge attempt
 * that fails (the count may grow) queues it on our workqueue with a
 * reference on the mm (vmamerge_compact_maybe_queue()).
 * It runs in a kworker, not in the task, which holds mmap_lock then; the
 * task may meanwhile go on mapping - the walk catches up with what it
 * finds.  Its allocations (the anon_vma_chains of a transplant, maple
 * nodes, the VMA of a split) are charged to the mm's memory cgroup, as
 * if the process had made the merges itself; its CPU time is the
 * kworker's (no cgroup's).  Walks of different mms run side by side (an
 * unbound workqueue without an ordering), so one process that keeps
 * triggering delays only its own.  Once per mm at a time, and again only
 * after the count grew by a thirty-second of the limit past what the
 * last walk left (a process whose VMAs do not merge is not walked on
 * every mmap(): at most 32 VMAs looked at per VMA it creates).  Disabling the
 * livepatch stops both walks at their next slice and queues nothing more
 * (vmamerge_patch_live); unload flushes the queue (vmamerge_compact_exit(),
 * after the livepatch is gone).
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/moduleparam.h>

#include "vmamerge.h"
#include "page_rewrite.h"

/*
 * One slice: offer the VMAs from *@addr on until the slice is used up.
 * Returns true when the walk reached the end.  mmap_lock held for writing.
 */
static bool vmamerge_compact_slice(struct mm_struct *mm, unsigned long *addr,
				   struct vmamerge_compact *c, u64 t0)
{
	struct vm_area_struct *vma, *prev, *merged;

	vma = find_vma_prev(mm, *addr, &prev);
	while (vma) {
		/*
		 * Only a VMA that may merge with the one before it: keeps
		 * the walk from making a merge attempt - counted in
		 * merge_attempts - for every VMA of the mm.  Merging to the
		 * right is covered when the next VMA is offered.
		 */
		if (vmamerge_vmas_joinable(prev, vma)) {
			c->vmas_offered++;
			merged = vmamerge_rg_merge_in_place(vma,
							    VMAMERGE_PATH_COMPACT,
							    NULL);
			if (merged) {
				c->merges++;
				vma = merged;
			}
		}
		*addr = vma->vm_end;
		if (ktime_get_ns() - t0 >= VMAMERGE_COMPACT_SLICE_NS)
			return false;
		prev = vma;
		vma = find_vma(mm, *addr);
	}
	return true;
}

/*
 * vmamerge_compact_mm - the walk, for an active @mm the caller holds an
 * mm_users reference to.  Fills the out fields of @c but the counters.
 * Returns 0, -EOPNOTSUPP (the mode leaves @mm out: mode never, or mode
 * optin and @mm not opted in), -ESHUTDOWN (the livepatch is disabled or
 * being disabled) or -EINTR.
 */
int vmamerge_compact_mm(struct mm_struct *mm, struct vmamerge_compact *c)
{
	unsigned long addr = 0;
	bool done = false;
	u64 t0, held;

	while (!done) {
		if (mmap_write_lock_killable(mm))
			return -EINTR;
		t0 = ktime_get_ns();
		/* the livepatch disabled: stop, whatever else holds */
		if (!READ_ONCE(vmamerge_patch_live)) {
			mmap_write_unlock(mm);
			return -ESHUTDOWN;
		}
		/*
		 * Checked under the lock: the walk stops when the mm opts
		 * out or the mode changes.  The mode decides, as for every
		 * merge path: in mode always every mm is active.
		 */
		if (!vmamerge_mm_active(mm)) {
			mmap_write_unlock(mm);
			return -EOPNOTSUPP;
		}
		if (!c->lock_slices)
			c->vmas_before = mm->map_count;
		done = vmamerge_compact_slice(mm, &addr, c, t0);
		if (done)
			c->vmas_after = mm->map_count;
		held = ktime_get_ns() - t0;
		mmap_write_unlock(mm);
		c->lock_slices++;
		c->max_hold_ns = max(c->max_hold_ns, held);
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/* ---- automatic compaction ---- */

/* compact_at_pct: 0..100 (0: never); read locklessly */
static unsigned long vmamerge_compact_at_pct = 80;
static const struct vmamerge_bounded_param vmamerge_compact_at_pct_param = {
	.val = &vmamerge_compact_at_pct,
	.min = 0,
	.max = 100,
};
module_param_cb(compact_at_pct, &vmamerge_param_bounded_ops,
		(void *)&vmamerge_compact_at_pct_param, 0644);
MODULE_PARM_DESC(compact_at_pct,
		 "compact an active process (opted in, or any in mode always) by itself when its VMA count reaches this percentage of vm.max_map_count (0..100, default 80, 0: never)");

static struct workqueue_struct *vmamerge_compact_wq;

struct vmamerge_compact_work {
	struct work_struct work;
	struct mm_struct *mm;	/* an mm_users reference */
};

/*
 * The walk of @mm with its allocations charged to @mm's memory cgroup
 * (held by a css reference for the scope; NULL without memcg, which
 * charges the kworker's, the root).
 */
static int vmamerge_compact_charged(struct mm_struct *mm,
				    struct vmamerge_compact *c)
{
	struct mem_cgroup *memcg = get_mem_cgroup_from_mm(mm), *old;
	int ret;

	old = set_active_memcg(memcg);
	ret = vmamerge_compact_mm(mm, c);
	set_active_memcg(old);
	mem_cgroup_put(memcg);
	return ret;
}

static void vmamerge_compact_worker(struct work_struct *work)
{
	struct vmamerge_compact_work *cw =
		container_of(work, struct vmamerge_compact_work, work);
	struct vmamerge_compact c = { };
	struct mm_struct *mm = cw->mm;

	/*
	 * Opted out (EOPNOTSUPP) or the livepatch disabled (ESHUTDOWN)
	 * meanwhile: not counted, and vmas_after stays 0, so the next time
	 * the limit is reached queues again.
	 */
	if (!vmamerge_compact_charged(mm, &c))
		vmamerge_count(mm, VMAMERGE_C_COMPACTIONS_AUTO, 1);
	vmamerge_mm_auto_done(mm, c.vmas_after);
	/* the last reference: the mm is torn down here, in process context */
	mmput(mm);
	kfree(cw);
}

/*
 * vmamerge_compact_maybe_queue - after a merge attempt on @mm failed:
 * queue the walk if the mode makes @mm active (opted in, or mode always)
 * and its VMA count reached the limit.
 * mmap_lock held for writing (read: mm->map_count); never sleeps.
 * sysctl_max_map_count is read locklessly, as mmap_region() reads it.
 */
void vmamerge_compact_maybe_queue(struct mm_struct *mm)
{
	unsigned long pct = READ_ONCE(vmamerge_compact_at_pct);
	struct vmamerge_compact_work *cw;
	int limit;

	if (!pct || !vmamerge_mm_active(mm) || !READ_ONCE(vmamerge_patch_live))
		return;
	limit = (int)((u64)READ_ONCE(sysctl_max_map_count) * pct / 100);
	if (mm->map_count < limit ||
	    !vmamerge_mm_auto_claim(mm, mm->map_count, max(limit / 32, 1)))
		return;
	cw = kmalloc(sizeof(*cw), GFP_NOWAIT | __GFP_NOWARN);
	if (!cw || !mmget_not_zero(mm)) {
		kfree(cw);
		vmamerge_mm_auto_done(mm, 0);
		return;
	}
	INIT_WORK(&cw->work, vmamerge_compact_worker);
	cw->mm = mm;
	queue_work(vmamerge_compact_wq, &cw->work);
}

int vmamerge_compact_init(void)
{
	/* max_active 0: the default, so that mms do not wait for each other */
	vmamerge_compact_wq = alloc_workqueue("vmamerge_compact", WQ_UNBOUND,
					      0);
	return vmamerge_compact_wq ? 0 : -ENOMEM;
}

/* After the livepatch is gone nothing queues: run what is queued, free. */
void vmamerge_compact_exit(void)
{
	destroy_workqueue(vmamerge_compact_wq);
}
