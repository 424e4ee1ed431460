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
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/stringify.h>
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

static const char *const vmamerge_feature_names[] = {
	"renumber",
	"transplant",
};

static_assert(ARRAY_SIZE(vmamerge_feature_names) ==
	      ilog2(VMAMERGE_FEATURES_ALL) + 1);

const char *vmamerge_feature_name(int i)
{
	if (i < 0 || i >= ARRAY_SIZE(vmamerge_feature_names))
		return NULL;
	return vmamerge_feature_names[i];
}

/* A mode name, or -EINVAL. */
int vmamerge_parse_mode(const char *s)
{
	int mode;

	for (mode = VMAMERGE_MODE_NEVER; vmamerge_mode_name(mode); mode++)
		if (!strcmp(s, vmamerge_mode_name(mode)))
			return mode;
	return -EINVAL;
}

static int vmamerge_feature_bit(const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vmamerge_feature_names); i++)
		if (!strcmp(name, vmamerge_feature_names[i]))
			return BIT(i);
	return 0;
}

/*
 * Apply one token to @features: "all", "none", "name" or "+name" (enable),
 * "-name" (disable).  Returns -EINVAL for anything else.
 */
static int vmamerge_apply_feature_token(const char *tok,
					unsigned int *features)
{
	bool enable = true;
	int bit;

	if (!strcmp(tok, "all")) {
		*features = VMAMERGE_FEATURES_ALL;
		return 0;
	}
	if (!strcmp(tok, "none")) {
		*features = 0;
		return 0;
	}
	if (*tok == '+' || *tok == '-')
		enable = *tok++ == '+';
	bit = vmamerge_feature_bit(tok);
	if (!bit)
		return -EINVAL;
	if (enable)
		*features |= bit;
	else
		*features &= ~bit;
	return 0;
}

/*
 * Apply the tokens in @buf (separated by blanks or commas; @buf is cut
 * up) to *@features, left to right.  -EINVAL for a bad token or none at
 * all; *@features may then be partly changed (callers work on a copy).
 */
int vmamerge_parse_features(char *buf, unsigned int *features)
{
	char *tok;
	int ntok = 0;
	int ret;

	while ((tok = strsep(&buf, " \t\n,")) != NULL) {
		if (!*tok)
			continue;
		ret = vmamerge_apply_feature_token(tok, features);
		if (ret)
			return ret;
		ntok++;
	}
	return ntok ? 0 : -EINVAL;
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
 * vmamerge_edit_features - apply the tokens in @buf ("+renumber",
 * "-transplant", ...) to the features in force.  Reading, editing and
 * storing happen under the config lock, so two concurrent edits cannot
 * lose each other; on -EINVAL nothing changes.
 */
int vmamerge_edit_features(char *buf)
{
	unsigned int features;
	int ret;

	mutex_lock(&vmamerge_config_lock);
	features = vmamerge_features;
	ret = vmamerge_parse_features(buf, &features);
	if (!ret)
		WRITE_ONCE(vmamerge_features, features);
	mutex_unlock(&vmamerge_config_lock);
	return ret;
}

/*
 * Load-time defaults, e.g. in /etc/modprobe.d/vmamerge.conf:
 *   options vmamerge mode=always features=renumber
 * Parsed like the debugfs writes; a bad value refuses the load.  Reading
 * /sys/module/vmamerge/parameters/{mode,features} shows the current values
 * (changed at run time through debugfs or the ioctl).
 */
static int vmamerge_param_mode_set(const char *val,
				   const struct kernel_param *kp)
{
	char *buf = kstrdup(val ?: "", GFP_KERNEL);
	int mode;

	if (!buf)
		return -ENOMEM;
	mode = vmamerge_parse_mode(strim(buf));
	kfree(buf);
	if (mode < 0) {
		pr_err("mode=%s: unknown mode (always, optin, never)\n",
		       val ?: "");
		return mode;
	}
	return vmamerge_set_mode(mode);
}

static int vmamerge_param_mode_get(char *buffer, const struct kernel_param *kp)
{
	return sysfs_emit(buffer, "%s\n",
			  vmamerge_mode_name(READ_ONCE(vmamerge_mode)));
}

static const struct kernel_param_ops vmamerge_param_mode_ops = {
	.set = vmamerge_param_mode_set,
	.get = vmamerge_param_mode_get,
};
module_param_cb(mode, &vmamerge_param_mode_ops, NULL, 0444);
MODULE_PARM_DESC(mode, "global mode at load: always, optin (default), never");

/* The list of features that are on, from none: "renumber", "all", ... */
static int vmamerge_param_features_set(const char *val,
				       const struct kernel_param *kp)
{
	char *buf = kstrdup(val ?: "", GFP_KERNEL);
	unsigned int features = 0;
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = vmamerge_parse_features(buf, &features);
	kfree(buf);
	if (ret) {
		pr_err("features=%s: not a list of features (all, none, renumber, transplant; +NAME, -NAME; separated by commas)\n",
		       val ?: "");
		return ret;
	}
	return vmamerge_set_features(features);
}

static int vmamerge_param_features_get(char *buffer,
				       const struct kernel_param *kp)
{
	unsigned int features = READ_ONCE(vmamerge_features);
	int i, len = 0;

	for (i = 0; vmamerge_feature_name(i); i++)
		if (features & BIT(i))
			len += sysfs_emit_at(buffer, len, "%s%s", len ? "," : "",
					     vmamerge_feature_name(i));
	return len + sysfs_emit_at(buffer, len, "%s\n", len ? "" : "none");
}

static const struct kernel_param_ops vmamerge_param_features_ops = {
	.set = vmamerge_param_features_set,
	.get = vmamerge_param_features_get,
};
module_param_cb(features, &vmamerge_param_features_ops, NULL, 0444);
MODULE_PARM_DESC(features, "features on at load, from none: all (default), none, or a comma-separated list of renumber, transplant");

/*
 * Run-time numeric parameters with a range (rewrite_max_pages,
 * compact_at_pct): a value outside [min, max] is refused with EINVAL and
 * changes nothing; readers use READ_ONCE() and need no lock (one
 * operation reads the value once).
 */
static int vmamerge_param_bounded_set(const char *val,
				      const struct kernel_param *kp)
{
	const struct vmamerge_bounded_param *b = kp->arg;
	unsigned long v;
	int err = kstrtoul(val, 0, &v);

	if (err)
		return err;
	if (v < b->min || v > b->max)
		return -EINVAL;
	WRITE_ONCE(*b->val, v);
	return 0;
}

static int vmamerge_param_bounded_get(char *buf,
				      const struct kernel_param *kp)
{
	const struct vmamerge_bounded_param *b = kp->arg;

	return sysfs_emit(buf, "%lu\n", READ_ONCE(*b->val));
}

const struct kernel_param_ops vmamerge_param_bounded_ops = {
	.set = vmamerge_param_bounded_set,
	.get = vmamerge_param_bounded_get,
};

/*
 * Test hook: make init fail at point N (1 before the exec/exit hooks,
 * 2 after them, 3 after the control device, 4 after debugfs, just before
 * the livepatch would be enabled, 5 in the livepatch's enable, at the
 * last merge hook, as if something else redirected its function - see
 * hooks.c), so the test suite can check that a failed load leaves
 * nothing behind.
 */
static int test_fail_init;
module_param(test_fail_init, int, 0400);
MODULE_PARM_DESC(test_fail_init, "testing only: fail init at point N (1-5)");

int vmamerge_injected_failure(int step)
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
	ret = vmamerge_build_sysfs_init();
	if (ret)
		return ret;
	/* The counters need no setup: per-CPU data, shadows made on demand. */
	ret = vmamerge_transplant_init();
	if (ret)
		goto err_counters;
	ret = vmamerge_compact_init();
	if (ret)
		goto err_transplant;
	ret = vmamerge_injected_failure(1) ?: vmamerge_optin_init();
	if (ret)
		goto err_compact;
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
	pr_info("%s loaded for %s, mode %s, features %#x\n", VMAMERGE_VERSION_STR,
		init_utsname()->release, vmamerge_mode_name(vmamerge_mode),
		vmamerge_features);
	return 0;

err_debugfs:
	vmamerge_debugfs_exit();
err_control:
	vmamerge_control_exit();
err_optin:
	vmamerge_optin_exit();
err_compact:
	vmamerge_compact_exit();
err_transplant:
	vmamerge_transplant_exit();
err_counters:
	vmamerge_counters_exit();
	vmamerge_build_sysfs_exit();
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
	/* before the per-mm state goes: queued walks use it */
	vmamerge_compact_exit();
	vmamerge_optin_exit();
	vmamerge_transplant_exit();
	vmamerge_counters_exit();
	vmamerge_test_lock_exit();
	vmamerge_build_sysfs_exit();
	pr_info("unloaded\n");
}

module_init(vmamerge_init);
module_exit(vmamerge_exit);
MODULE_LICENSE("GPL");
MODULE_VERSION(VMAMERGE_VERSION_STR);
MODULE_DESCRIPTION("Wider anonymous VMA merging (renumber, transplant) for opted-in processes");
MODULE_AUTHOR("The vmamerge developers");
MODULE_INFO(livepatch, "Y");
