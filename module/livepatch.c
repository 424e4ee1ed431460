// SPDX-License-Identifier: GPL-2.0
/*
 * The one livepatch this module registers.  Which functions it replaces
 * is the glue's business (vmamerge_glue_funcs[]); this file only wraps
 * them into a klp_patch on vmlinux.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/livepatch.h>
#include <linux/delay.h>
#include <linux/jiffies.h>

#include "vmamerge.h"
#include "hooks.h"
#include "kernel_internal.h"

/*
 * vmamerge_patch_live - is the livepatch enabled (and not being disabled)?
 * False before the patch is enabled and from the moment an administrator
 * disables it (pre_unpatch, before the unpatch transition starts); true
 * again when a disable is reversed (post_patch runs when that transition
 * completes).  It stops the work the module does outside the replaced
 * functions - compaction, by ioctl or queued (compact.c) - when the
 * module is disabled, not only at rmmod: "disabled" means no merge of
 * ours anywhere.  Tasks still in replacement code during the transition
 * finish as the consistency model lets them.  Read locklessly: a walk
 * that read true just before the disable ends its slice (bounded by
 * VMAMERGE_COMPACT_SLICE_NS); the module text stays meanwhile - rmmod
 * needs /dev/vmamerge closed and flushes the compaction queue first.
 */
bool vmamerge_patch_live;

/*
 * The merge hooks (hooks.h) follow the livepatch: attached before its
 * transition starts (the livepatch relocations they need are resolved by
 * then), detached - and waited for - before an unpatch transition
 * starts.  pre_patch failing fails the enable cleanly; post_unpatch runs
 * after an enable that failed later, and after every unpatch transition.
 * The hooks act before the fork hook has reached every task: a process
 * cannot opt in before init returns (which waits for the transition),
 * and with mode=always at load nothing needs the fork hook - it only
 * passes the opt-in on.
 */
static int vmamerge_klp_pre_patch(struct klp_object *obj)
{
	int ret = vmamerge_hooks_register();

	if (ret)
		return ret;
	WRITE_ONCE(vmamerge_patch_live, true);
	return 0;
}

/*
 * An unpatch transition reversed by writing 1 to "enabled" ends here
 * (its pre_unpatch detached the hooks).  This callback cannot fail the
 * patch: if the hooks cannot come back, say so; the module then merges
 * nothing until it is disabled and loaded again.
 */
static void vmamerge_klp_post_patch(struct klp_object *obj)
{
	if (vmamerge_hooks_register())
		pr_err("the merge hooks could not be attached again after the disable was reversed; vmamerge merges nothing until it is disabled, unloaded and loaded again\n");
	WRITE_ONCE(vmamerge_patch_live, true);
}

static void vmamerge_klp_pre_unpatch(struct klp_object *obj)
{
	WRITE_ONCE(vmamerge_patch_live, false);
	vmamerge_hooks_unregister();
}

static void vmamerge_klp_post_unpatch(struct klp_object *obj)
{
	vmamerge_hooks_unregister();
}

static struct klp_object vmamerge_klp_objs[] = {
	{
		/* name == NULL: vmlinux */
		.funcs = vmamerge_glue_funcs,
		.callbacks = {
			.pre_patch = vmamerge_klp_pre_patch,
			.post_patch = vmamerge_klp_post_patch,
			.pre_unpatch = vmamerge_klp_pre_unpatch,
			.post_unpatch = vmamerge_klp_post_unpatch,
		},
	},
	{ }
};

static struct klp_patch vmamerge_klp_patch = {
	.mod = THIS_MODULE,
	.objs = vmamerge_klp_objs,
};

/* How long loading waits for every task to switch to the new code. */
#define VMAMERGE_TRANSITION_WAIT_S	60

/*
 * Loading waits until the transition is over, so that a process opted in
 * right after insmod returns is already handled by the replacement code.
 * This task sleeps in our init, not in a patched function, so it does not
 * hold the transition up.  A transition that takes longer (a task asleep
 * in a patched function for a minute) is left to finish in the background.
 */
static void vmamerge_wait_transition(void)
{
	unsigned long deadline = jiffies + VMAMERGE_TRANSITION_WAIT_S * HZ;

	while (READ_ONCE(klp_transition_patch) == &vmamerge_klp_patch) {
		if (time_after(jiffies, deadline)) {
			pr_warn("livepatch transition still running after %ds; it completes in the background (see /sys/kernel/livepatch/vmamerge/transition)\n",
				VMAMERGE_TRANSITION_WAIT_S);
			return;
		}
		msleep(20);
	}
}

int vmamerge_livepatch_enable(void)
{
	int ret;

	ret = klp_enable_patch(&vmamerge_klp_patch);
	if (ret) {
		pr_err("enabling the livepatch failed (%d): a merge hook that could not attach (the message above), or another livepatch replacing uprobe_dup_mmap() or still in transition (see /sys/kernel/livepatch/)\n",
		       ret);
		return ret;
	}
	vmamerge_wait_transition();
	return 0;
}
