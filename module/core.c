// SPDX-License-Identifier: GPL-2.0
/*
 * vmamerge: wider anonymous VMA merging for processes that opt in.
 *
 * This file owns the global configuration and the order in which the parts
 * of the module come up and go down.  The merge logic itself lives in the
 * per-kernel glue (module/kernel-<series>/) and merge_hook.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/utsname.h>

#include "vmamerge.h"

int vmamerge_mode = VMAMERGE_MODE_OPTIN;
unsigned int vmamerge_features = VMAMERGE_FEATURES_ALL;

/* Serialises writers of mode/features (debugfs and ioctl). */
static DEFINE_MUTEX(vmamerge_config_lock);

static const char *const vmamerge_mode_names[] = {
	[VMAMERGE_MODE_NEVER]	= "never",
	[VMAMERGE_MODE_OPTIN]	= "optin",
	[VMAMERGE_MODE_ALWAYS]	= "always",
};

const char *vmamerge_mode_name(int mode)
{
	if (mode < 0 || mode >= ARRAY_SIZE(vmamerge_mode_names))
		return NULL;
	return vmamerge_mode_names[mode];
}

int vmamerge_set_mode(int mode)
{
	if (!vmamerge_mode_name(mode))
		return -EINVAL;
	mutex_lock(&vmamerge_config_lock);
	if (READ_ONCE(vmamerge_mode) != mode)
		pr_info("mode %s\n", vmamerge_mode_name(mode));
	WRITE_ONCE(vmamerge_mode, mode);
	mutex_unlock(&vmamerge_config_lock);
	return 0;
}

int vmamerge_set_features(unsigned int features)
{
	if (features & ~VMAMERGE_FEATURES_ALL)
		return -EINVAL;
	mutex_lock(&vmamerge_config_lock);
	WRITE_ONCE(vmamerge_features, features);
	mutex_unlock(&vmamerge_config_lock);
	return 0;
}

static int __init vmamerge_init(void)
{
	int ret;

	ret = vmamerge_check_running_build();
	if (ret)
		return ret;
	ret = vmamerge_glue_check();
	if (ret)
		return ret;
	ret = vmamerge_counters_init();
	if (ret)
		return ret;
	ret = vmamerge_optin_init();
	if (ret)
		goto err_counters;
	ret = vmamerge_control_init();
	if (ret)
		goto err_optin;
	vmamerge_debugfs_init();
	/*
	 * The livepatch is enabled last: once klp_enable_patch() succeeded
	 * the livepatch core owns a reference on this module and init must
	 * not fail any more.  The transition finishes in the background
	 * (sysfs livepatch/vmamerge/transition).
	 */
	ret = vmamerge_livepatch_enable();
	if (ret)
		goto err_control;
	pr_info("loaded for %s, mode %s\n", init_utsname()->release,
		vmamerge_mode_name(vmamerge_mode));
	return 0;

err_control:
	vmamerge_debugfs_exit();
	vmamerge_control_exit();
err_optin:
	vmamerge_optin_exit();
err_counters:
	vmamerge_counters_exit();
	return ret;
}

/*
 * Module exit runs only after the livepatch was disabled through sysfs and
 * its transition completed (the livepatch core holds a module reference
 * until then), so no task runs replacement code any more.
 */
static void __exit vmamerge_exit(void)
{
	vmamerge_debugfs_exit();
	vmamerge_control_exit();
	vmamerge_optin_exit();
	vmamerge_counters_exit();
	pr_info("unloaded\n");
}

module_init(vmamerge_init);
module_exit(vmamerge_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Wider anonymous VMA merging (renumber, transplant) for opted-in processes");
MODULE_AUTHOR("The vmamerge developers");
MODULE_INFO(livepatch, "Y");
