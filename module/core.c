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

/*
 * Test hook: make init fail at point N (1 before the exec/exit hooks,
 * 2 after them, 3 after the control device, 4 after debugfs, just before
 * the livepatch would be enabled), so the test suite can check that a
 * failed load leaves nothing behind.
 */
static int test_fail_init;
module_param(test_fail_init, int, 0400);
MODULE_PARM_DESC(test_fail_init, "testing only: fail init at point N (1-4)");

static int vmamerge_injected_failure(int step)
{
	if (test_fail_init != step)
		return 0;
	pr_info("test_fail_init=%d: failing init on purpose\n", step);
	return -EAGAIN;
}

static int __init vmamerge_init(void)
{
	int ret;

	ret = vmamerge_check_running_build();
	if (ret)
		return ret;
	/* The counters need no setup: per-CPU data, shadows made on demand. */
	ret = vmamerge_transplant_init();
	if (ret)
		goto err_counters;
	ret = vmamerge_injected_failure(1) ?: vmamerge_optin_init();
	if (ret)
		goto err_transplant;
	ret = vmamerge_injected_failure(2) ?: vmamerge_control_init();
	if (ret)
		goto err_optin;
	ret = vmamerge_injected_failure(3) ?: vmamerge_debugfs_init();
	if (ret)
		goto err_control;
	/*
	 * The livepatch is enabled last: once klp_enable_patch() succeeded
	 * the livepatch core owns a reference on this module and init must
	 * not fail any more.
	 */
	ret = vmamerge_injected_failure(4) ?: vmamerge_livepatch_enable();
	if (ret)
		goto err_debugfs;
	pr_info("loaded for %s, mode %s\n", init_utsname()->release,
		vmamerge_mode_name(vmamerge_mode));
	return 0;

err_debugfs:
	vmamerge_debugfs_exit();
err_control:
	vmamerge_control_exit();
err_optin:
	vmamerge_optin_exit();
err_transplant:
	vmamerge_transplant_exit();
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
	vmamerge_transplant_exit();
	vmamerge_counters_exit();
	pr_info("unloaded\n");
}

module_init(vmamerge_init);
module_exit(vmamerge_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Wider anonymous VMA merging (renumber, transplant) for opted-in processes");
MODULE_AUTHOR("The vmamerge developers");
MODULE_INFO(livepatch, "Y");
