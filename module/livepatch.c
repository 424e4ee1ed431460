// SPDX-License-Identifier: GPL-2.0
/*
 * The one livepatch this module registers.  Which functions it replaces
 * is the glue's business (vmamerge_glue_funcs[]); this file only wraps
 * them into a klp_patch on vmlinux.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/livepatch.h>

#include "vmamerge.h"

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

int vmamerge_livepatch_enable(void)
{
	int ret;

	ret = klp_enable_patch(&vmamerge_klp_patch);
	if (ret)
		pr_err("enabling the livepatch failed (%d); is another livepatch replacing the same mm functions, or is one still in transition? See /sys/kernel/livepatch/\n",
		       ret);
	return ret;
}
