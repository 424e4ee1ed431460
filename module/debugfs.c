// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs vmamerge/: mode, features, stats.
 *
 * Under Secure Boot lockdown debugfs refuses to open writable files; the
 * same controls stay available through the ioctl (control.c).  Writes are
 * all-or-nothing: a malformed write returns -EINVAL and changes nothing.
 */
#include <linux/kernel.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/string.h>
#include <linux/slab.h>

#include "vmamerge.h"

/* Longest write accepted: "+renumber -transplant" and then some. */
#define VMAMERGE_DEBUGFS_WRITE_MAX	128

static struct dentry *vmamerge_debugfs_dir;

#define VMAMERGE_COUNTER_NAME_(id, name) name,
static const char *const vmamerge_counter_names[] = {
	VMAMERGE_COUNTERS(VMAMERGE_COUNTER_NAME_)
};

#undef VMAMERGE_COUNTER_NAME_

/* Copy a short write from userspace as a trimmed, NUL-terminated string. */
static char *vmamerge_get_write(const char __user *ubuf, size_t count)
{
	char *buf;

	if (!count || count > VMAMERGE_DEBUGFS_WRITE_MAX)
		return ERR_PTR(-EINVAL);
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return buf;
	strim(buf);
	return buf;
}

static int vmamerge_mode_show(struct seq_file *m, void *v)
{
	static const int order[] = { VMAMERGE_MODE_ALWAYS, VMAMERGE_MODE_OPTIN,
				     VMAMERGE_MODE_NEVER };
	int mode = READ_ONCE(vmamerge_mode);
	int i;

	for (i = 0; i < ARRAY_SIZE(order); i++)
		seq_printf(m, mode == order[i] ? "%s[%s]" : "%s%s",
			   i ? " " : "", vmamerge_mode_name(order[i]));
	seq_putc(m, '\n');
	return 0;
}

static ssize_t vmamerge_mode_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	char *buf = vmamerge_get_write(ubuf, count);
	int mode;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	mode = vmamerge_parse_mode(buf);
	kfree(buf);
	if (mode < 0)
		return mode;
	vmamerge_set_mode(mode);
	return count;
}

static int vmamerge_features_show(struct seq_file *m, void *v)
{
	unsigned int features = READ_ONCE(vmamerge_features);
	int i;

	for (i = 0; vmamerge_feature_name(i); i++)
		seq_printf(m, features & BIT(i) ? "%s[%s]" : "%s%s",
			   i ? " " : "", vmamerge_feature_name(i));
	seq_putc(m, '\n');
	return 0;
}

static ssize_t vmamerge_features_write(struct file *file,
				       const char __user *ubuf, size_t count,
				       loff_t *ppos)
{
	char *buf = vmamerge_get_write(ubuf, count);
	int ret;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = vmamerge_edit_features(buf);
	kfree(buf);
	return ret ? ret : count;
}

static int vmamerge_stats_show(struct seq_file *m, void *v)
{
	u64 c[VMAMERGE_NR_COUNTERS];
	int i;

	vmamerge_counters_read_global(c);
	for (i = 0; i < VMAMERGE_NR_COUNTERS; i++)
		seq_printf(m, "%s %llu\n", vmamerge_counter_names[i], c[i]);
	return 0;
}

static int vmamerge_mode_open(struct inode *inode, struct file *file)
{
	return single_open(file, vmamerge_mode_show, NULL);
}

static int vmamerge_features_open(struct inode *inode, struct file *file)
{
	return single_open(file, vmamerge_features_show, NULL);
}

static const struct file_operations vmamerge_mode_fops = {
	.owner		= THIS_MODULE,
	.open		= vmamerge_mode_open,
	.read		= seq_read,
	.write		= vmamerge_mode_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static const struct file_operations vmamerge_features_fops = {
	.owner		= THIS_MODULE,
	.open		= vmamerge_features_open,
	.read		= seq_read,
	.write		= vmamerge_features_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

DEFINE_SHOW_ATTRIBUTE(vmamerge_stats);

/* debugfs is optional: the module works without it (ioctl only). */
int vmamerge_debugfs_init(void)
{
	vmamerge_debugfs_dir = debugfs_create_dir(VMAMERGE_NAME, NULL);
	debugfs_create_file("mode", 0644, vmamerge_debugfs_dir, NULL,
			    &vmamerge_mode_fops);
	debugfs_create_file("features", 0644, vmamerge_debugfs_dir, NULL,
			    &vmamerge_features_fops);
	debugfs_create_file("stats", 0444, vmamerge_debugfs_dir, NULL,
			    &vmamerge_stats_fops);
	return 0;
}

void vmamerge_debugfs_exit(void)
{
	debugfs_remove(vmamerge_debugfs_dir);
}
