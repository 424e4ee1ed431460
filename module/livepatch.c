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
#include "kernel_internal.h"

static struct klp_object vmamerge_klp_objs[] = {
	{
		/* name == NULL: vmlinux */
		.funcs = vmamerge_glue_funcs,
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
		pr_err("enabling the livepatch failed (%d); is another livepatch replacing the same mm functions, or still in transition? See /sys/kernel/livepatch/\n",
		       ret);
		return ret;
	}
	vmamerge_wait_transition();
	return 0;
}
