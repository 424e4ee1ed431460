// SPDX-License-Identifier: GPL-2.0
/*
 * Testing only: hold a folio of the writer's memory locked for a while, as
 * migration and reclaim hold one between their two rmap walks, so that a
 * test can check that no rewrite writes the index or mapping of a folio
 * someone else holds locked (page_rewrite.c, vmamerge_rewrite_present()).
 *
 * Writing an address to /sys/module/vmamerge/parameters/test_lock_addr
 * takes a reference on the page mapped there in the writer's mm (faulting
 * it in if need be) and its folio's lock; test_lock_ms later a work item
 * drops both.  Reading it gives the address while the folio is held, else
 * 0.  One folio at a time (-EBUSY), only while the livepatch is live
 * (-EAGAIN: not at insmod time, not while the module goes away).  The
 * lock is taken in the writer's context, which may sleep on it.  Module
 * exit releases a folio still held (vmamerge_test_lock_exit()).
 *
 * test_rewrite_hold_ms (0: off) makes every rewrite that changes the
 * anon_vma of order-0 folios sleep that long (at most a second) after its
 * collect walk, before its commit or undo, with every lock it holds still
 * held: a test reads /proc/kpageflags meanwhile to see that each folio
 * whose mapping the walk wrote, or will write, is locked
 * (vmamerge_test_rewrite_hold(), page_rewrite.c).
 */
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>

#include "vmamerge.h"

static unsigned int test_lock_ms = 2000;
module_param(test_lock_ms, uint, 0600);
MODULE_PARM_DESC(test_lock_ms,
		 "testing only: how long test_lock_addr holds a folio locked");

/* the held folio and its address; all three under the mutex */
static DEFINE_MUTEX(vmamerge_test_lock_mutex);
static struct folio *vmamerge_test_locked;
static unsigned long vmamerge_test_locked_addr;
static bool vmamerge_test_lock_closed;

static void vmamerge_test_unlock(struct work_struct *work)
{
	mutex_lock(&vmamerge_test_lock_mutex);
	if (vmamerge_test_locked) {
		folio_unlock(vmamerge_test_locked);
		folio_put(vmamerge_test_locked);
		vmamerge_test_locked = NULL;
		vmamerge_test_locked_addr = 0;
	}
	mutex_unlock(&vmamerge_test_lock_mutex);
}

static DECLARE_DELAYED_WORK(vmamerge_test_unlock_work, vmamerge_test_unlock);

static int vmamerge_test_lock_set(const char *val,
				  const struct kernel_param *kp)
{
	unsigned int ms = READ_ONCE(test_lock_ms);
	struct folio *folio;
	unsigned long addr;
	struct page *page;
	int ret;

	ret = kstrtoul(val, 0, &addr);
	if (ret)
		return ret;
	if (!addr || !current->mm)
		return -EINVAL;
	if (!READ_ONCE(vmamerge_patch_live))
		return -EAGAIN;
	if (get_user_pages_fast(addr, 1, 0, &page) != 1)
		return -EFAULT;
	folio = page_folio(page);
	mutex_lock(&vmamerge_test_lock_mutex);
	if (vmamerge_test_locked || vmamerge_test_lock_closed) {
		mutex_unlock(&vmamerge_test_lock_mutex);
		folio_put(folio);
		return vmamerge_test_lock_closed ? -EAGAIN : -EBUSY;
	}
	/* nobody takes the mutex while holding a folio lock */
	folio_lock(folio);
	vmamerge_test_locked = folio;
	vmamerge_test_locked_addr = addr;
	schedule_delayed_work(&vmamerge_test_unlock_work,
			      msecs_to_jiffies(ms));
	mutex_unlock(&vmamerge_test_lock_mutex);
	pr_info("test_lock_addr: holding the folio at %#lx of pid %d locked for %u ms\n",
		addr, task_tgid_nr(current), ms);
	return 0;
}

static int vmamerge_test_lock_get(char *buf, const struct kernel_param *kp)
{
	unsigned long addr;

	mutex_lock(&vmamerge_test_lock_mutex);
	addr = vmamerge_test_locked_addr;
	mutex_unlock(&vmamerge_test_lock_mutex);
	return sysfs_emit(buf, "%#lx\n", addr);
}

static const struct kernel_param_ops vmamerge_test_lock_ops = {
	.set = vmamerge_test_lock_set,
	.get = vmamerge_test_lock_get,
};
module_param_cb(test_lock_addr, &vmamerge_test_lock_ops, NULL, 0600);
MODULE_PARM_DESC(test_lock_addr,
		 "testing only: hold the writer's folio at this address locked for test_lock_ms");

/* Module exit: no new hold, and a folio still held is released now. */
void vmamerge_test_lock_exit(void)
{
	mutex_lock(&vmamerge_test_lock_mutex);
	vmamerge_test_lock_closed = true;
	mutex_unlock(&vmamerge_test_lock_mutex);
	cancel_delayed_work_sync(&vmamerge_test_unlock_work);
	vmamerge_test_unlock(NULL);
}

static unsigned int test_rewrite_hold_ms;
module_param(test_rewrite_hold_ms, uint, 0600);
MODULE_PARM_DESC(test_rewrite_hold_ms,
		 "testing only: how long a rewrite of anon_vmas waits, locks held, between its collect walk and its commit or undo (0 = not at all, at most 1000)");

/*
 * Sleeping here is what the rewrite's caller may do anyway: it holds only
 * sleeping locks (mmap_lock, the VMA lock, the root anon_vma rwsems) and
 * folio locks, no spinlock.
 */
void vmamerge_test_rewrite_hold(void)
{
	unsigned int ms = READ_ONCE(test_rewrite_hold_ms);

	if (unlikely(ms))
		msleep(min(ms, 1000U));
}
