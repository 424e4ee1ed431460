// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vmamerge: the ioctl control plane (module/uapi/vmamerge.h).
 *
 * Every command validates its whole argument before it acts, so a call
 * that fails changes nothing.  Permissions (docs/design.md):
 *  - ADVISE on the caller's own process: anyone with the device open for
 *    writing, like prctl(PR_SET_MEMORY_MERGE) for KSM;
 *  - ADVISE on another process: PTRACE_MODE_ATTACH_REALCREDS, the right
 *    to rewrite its memory through ptrace - nothing new is granted;
 *  - QUERY of another process: PTRACE_MODE_READ_FSCREDS, as for
 *    /proc/PID/smaps;
 *  - SET_CONFIG: CAP_SYS_ADMIN;
 *  - VERIFY: CAP_SYS_ADMIN (it walks page tables and anon_vma trees
 *    under their locks: a debugging aid, not for everyone), plus
 *    PTRACE_MODE_READ_FSCREDS over the target like QUERY.
 * mm_access() does the ptrace check under the target's exec_update_lock,
 * so a concurrent setuid exec cannot slip a new mm under the check.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/uaccess.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/capability.h>
#include <linux/slab.h>

#include "vmamerge.h"
#include "kernel_internal.h"
#include "trace.h"

/*
 * vmamerge_copy_arg - copy a size-versioned argument from userspace.
 * The struct's first field is its __u32 size (see the uapi header).
 */
int vmamerge_copy_arg(void *karg, size_t ksize, size_t ver0,
		      const void __user *uarg, u32 *usize)
{
	if (get_user(*usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (*usize < ver0)
		return -EINVAL;
	if (*usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(karg, ksize, uarg, *usize);
}

/* Copy a result back: as much as both sides know. */
int vmamerge_copy_result(void __user *uarg, u32 usize, const void *karg,
			 size_t ksize)
{
	if (copy_to_user(uarg, karg, min_t(size_t, usize, ksize)))
		return -EFAULT;
	return 0;
}

static bool vmamerge_reserved_zero(const u64 *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i])
			return false;
	return true;
}

/* Validate a (kind, id) pair without looking anything up. */
int vmamerge_check_target(u32 kind, s32 id)
{
	switch (kind) {
	case VMAMERGE_TARGET_SELF:
		return id == 0 ? 0 : -EINVAL;
	case VMAMERGE_TARGET_PID:
		return id > 0 ? 0 : -EINVAL;
	case VMAMERGE_TARGET_PIDFD:
		return id >= 0 ? 0 : -EBADF;
	}
	return -EINVAL;
}

/*
 * The pid behind a pidfd: -EBADF when @fd is not an open file, -EINVAL
 * when it is open but not a pidfd (pidfd_get_pid() says -EBADF for both).
 */
static struct pid *vmamerge_pidfd_get_pid(int fd)
{
	unsigned int f_flags;
	struct file *file;
	struct pid *pid;

	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	fput(file);
	pid = pidfd_get_pid(fd, &f_flags);
	if (pid == ERR_PTR(-EBADF))
		return ERR_PTR(-EINVAL);
	return pid;
}

/* Resolve a validated target to a task reference (put_task_struct it). */
static struct task_struct *vmamerge_get_task(u32 kind, s32 id)
{
	struct task_struct *task;
	struct pid *pid;

	if (kind == VMAMERGE_TARGET_SELF) {
		get_task_struct(current);
		return current;
	}
	if (kind == VMAMERGE_TARGET_PID)
		pid = find_get_pid(id);
	else
		pid = vmamerge_pidfd_get_pid(id);
	if (IS_ERR(pid))
		return ERR_CAST(pid);
	if (!pid)
		return ERR_PTR(-ESRCH);
	task = get_pid_task(pid, PIDTYPE_PID);
	put_pid(pid);
	return task ? task : ERR_PTR(-ESRCH);
}

/*
 * vmamerge_get_target_mm - the mm of the target, with ptrace-mode @mode
 * checked when it is not the caller's own.  Returns an mm reference
 * (mmput it) or an ERR_PTR: -ESRCH for a dead process, -EINVAL for one
 * without an address space (kernel thread), -EPERM without rights.
 */
struct mm_struct *vmamerge_get_target_mm(u32 kind, s32 id, unsigned int mode,
					 pid_t *pid)
{
	struct task_struct *task;
	struct mm_struct *mm;

	task = vmamerge_get_task(kind, id);
	if (IS_ERR(task))
		return ERR_CAST(task);
	*pid = task_tgid_vnr(task);
	if (task->flags & PF_KTHREAD) {
		mm = ERR_PTR(-EINVAL);
		goto out;
	}
	/* 6.1 returns NULL for a task without mm, 6.12 -ESRCH. */
	mm = mm_access(task, mode);
	if (!mm)
		mm = ERR_PTR(-ESRCH);
	else if (mm == ERR_PTR(-EACCES))
		mm = ERR_PTR(-EPERM);
out:
	put_task_struct(task);
	return mm;
}

static int vmamerge_ioctl_advise(struct file *file, void __user *uarg)
{
	struct vmamerge_advise a;
	struct mm_struct *mm;
	pid_t pid = 0;
	u32 usize;
	int ret;

	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	ret = vmamerge_copy_arg(&a, sizeof(a), VMAMERGE_ADVISE_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	if (!vmamerge_reserved_zero(a.reserved, ARRAY_SIZE(a.reserved)))
		return -EINVAL;
	if (a.flags & ~VMAMERGE_ADVISE_F_ALL)
		return -EINVAL;
	if (a.advice == VMAMERGE_ADVISE_DISABLE && a.flags)
		return -EINVAL;
	/* "ends at exec" and "survives one exec" contradict each other */
	if ((a.flags & VMAMERGE_ADVISE_F_NO_EXEC) &&
	    (a.flags & VMAMERGE_ADVISE_F_EXEC_ONCE))
		return -EINVAL;
	if (a.advice != VMAMERGE_ADVISE_ENABLE &&
	    a.advice != VMAMERGE_ADVISE_DISABLE)
		return -EINVAL;
	ret = vmamerge_check_target(a.target_kind, a.target_id);
	if (ret)
		return ret;

	mm = vmamerge_get_target_mm(a.target_kind, a.target_id,
				    PTRACE_MODE_ATTACH_REALCREDS, &pid);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	if (a.advice == VMAMERGE_ADVISE_ENABLE)
		ret = vmamerge_mm_enable(mm,
					 !(a.flags & VMAMERGE_ADVISE_F_NO_EXEC),
					 a.flags & VMAMERGE_ADVISE_F_EXEC_ONCE);
	else
		vmamerge_mm_disable(mm);
	if (!ret)
		trace_vmamerge_optin(mm, pid, vmamerge_mm_opted_in(mm),
				     vmamerge_mm_exec_keep(mm));
	mmput(mm);
	return ret;
}

static u32 vmamerge_mm_state(struct mm_struct *mm)
{
	u32 state = 0;

	if (vmamerge_mm_opted_in(mm))
		state |= VMAMERGE_STATE_OPTED_IN;
	if (vmamerge_mm_exec_keep(mm))
		state |= VMAMERGE_STATE_EXEC_KEEP;
	if (vmamerge_mm_exec_once(mm))
		state |= VMAMERGE_STATE_EXEC_ONCE;
	if (vmamerge_mm_active(mm))
		state |= VMAMERGE_STATE_ACTIVE;
	return state;
}

static int vmamerge_query_fill(struct vmamerge_query *q)
{
	struct mm_struct *mm;
	pid_t pid;

	q->nr_counters = VMAMERGE_NR_COUNTERS;
	if (q->global) {
		q->state = 0;
		vmamerge_counters_read_global(q->counters);
		return 0;
	}
	mm = vmamerge_get_target_mm(q->target_kind, q->target_id,
				    PTRACE_MODE_READ_FSCREDS, &pid);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	q->state = vmamerge_mm_state(mm);
	vmamerge_counters_read_mm(mm, q->counters);
	mmput(mm);
	return 0;
}

static int vmamerge_ioctl_query(void __user *uarg)
{
	struct vmamerge_query *q;
	u32 usize;
	int ret;

	/* Over half a kilobyte: keep it off the stack. */
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	ret = vmamerge_copy_arg(q, sizeof(*q), VMAMERGE_QUERY_SIZE_VER0,
				uarg, &usize);
	if (ret)
		goto out;
	ret = -EINVAL;
	if (!vmamerge_reserved_zero(q->reserved, ARRAY_SIZE(q->reserved)))
		goto out;
	if (q->global > 1)
		goto out;
	if (q->global && (q->target_kind != VMAMERGE_TARGET_SELF ||
			  q->target_id))
		goto out;
	ret = vmamerge_check_target(q->target_kind, q->target_id);
	if (ret)
		goto out;
	ret = vmamerge_query_fill(q);
	if (!ret)
		ret = vmamerge_copy_result(uarg, usize, q, sizeof(*q));
out:
	kfree(q);
	return ret;
}

static void vmamerge_config_fill(struct vmamerge_config *c)
{
	c->mode = READ_ONCE(vmamerge_mode);
	c->features = READ_ONCE(vmamerge_features);
	c->abi_version = VMAMERGE_ABI_VERSION;
}

static bool vmamerge_config_reserved_zero(const struct vmamerge_config *c)
{
	return !c->reserved0 &&
	       vmamerge_reserved_zero(c->reserved, ARRAY_SIZE(c->reserved));
}

static int vmamerge_ioctl_get_config(void __user *uarg)
{
	struct vmamerge_config c;
	u32 usize;
	int ret;

	ret = vmamerge_copy_arg(&c, sizeof(c), VMAMERGE_CONFIG_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	if (c.set_mask || !vmamerge_config_reserved_zero(&c))
		return -EINVAL;
	vmamerge_config_fill(&c);
	return vmamerge_copy_result(uarg, usize, &c, sizeof(c));
}

static int vmamerge_ioctl_set_config(struct file *file, void __user *uarg)
{
	struct vmamerge_config c;
	u32 usize;
	int ret;

	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	ret = vmamerge_copy_arg(&c, sizeof(c), VMAMERGE_CONFIG_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	if (!c.set_mask || (c.set_mask & ~VMAMERGE_CONFIG_SET_ALL) ||
	    !vmamerge_config_reserved_zero(&c))
		return -EINVAL;
	if ((c.set_mask & VMAMERGE_CONFIG_SET_MODE) &&
	    !vmamerge_mode_name(c.mode))
		return -EINVAL;
	if ((c.set_mask & VMAMERGE_CONFIG_SET_FEATURES) &&
	    (c.features & ~VMAMERGE_FEATURES_ALL))
		return -EINVAL;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	/* Both values were validated: neither setter can fail now. */
	if (c.set_mask & VMAMERGE_CONFIG_SET_MODE)
		vmamerge_set_mode(c.mode);
	if (c.set_mask & VMAMERGE_CONFIG_SET_FEATURES)
		vmamerge_set_features(c.features);
	return 0;
}

/*
 * The mm of the target of a command with @flags (none defined) and two
 * reserved words, all of which must be zero: as vmamerge_get_target_mm(),
 * or -EINVAL first.
 */
static struct mm_struct *vmamerge_plain_target_mm(u32 kind, s32 id, u32 flags,
						  const u64 *reserved,
						  unsigned int mode)
{
	pid_t pid;
	int ret;

	if (flags || !vmamerge_reserved_zero(reserved, 2))
		return ERR_PTR(-EINVAL);
	ret = vmamerge_check_target(kind, id);
	if (ret)
		return ERR_PTR(ret);
	return vmamerge_get_target_mm(kind, id, mode, &pid);
}

static_assert(sizeof(struct vmamerge_verify) == VMAMERGE_VERIFY_SIZE_VER0);

/* Out fields of VMAMERGE_IOC_VERIFY start at nr_vmas: zero what came in. */
static void vmamerge_verify_clear_out(struct vmamerge_verify *v)
{
	size_t off = offsetof(struct vmamerge_verify, nr_vmas);

	memset((char *)v + off, 0, sizeof(*v) - off);
}

static int vmamerge_ioctl_verify(void __user *uarg)
{
	struct vmamerge_verify v;
	struct mm_struct *mm;
	u32 usize;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = vmamerge_copy_arg(&v, sizeof(v), VMAMERGE_VERIFY_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	mm = vmamerge_plain_target_mm(v.target_kind, v.target_id, v.flags,
				      v.reserved, PTRACE_MODE_READ_FSCREDS);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	vmamerge_verify_clear_out(&v);
	ret = vmamerge_verify_mm(mm, &v);
	mmput(mm);
	if (ret)
		return ret;
	return vmamerge_copy_result(uarg, usize, &v, sizeof(v));
}

static_assert(sizeof(struct vmamerge_compact) == VMAMERGE_COMPACT_SIZE_VER0);
static_assert(VMAMERGE_NR_COUNTERS <= VMAMERGE_MAX_COUNTERS);
static_assert(ARRAY_SIZE(((struct vmamerge_compact *)0)->reserved) == 2);
static_assert(ARRAY_SIZE(((struct vmamerge_verify *)0)->reserved) == 2);

/* Out fields of VMAMERGE_IOC_COMPACT start at vmas_before. */
static void vmamerge_compact_clear_out(struct vmamerge_compact *c)
{
	size_t off = offsetof(struct vmamerge_compact, vmas_before);

	memset((char *)c + off, 0, sizeof(*c) - off);
}

/*
 * The walk, with how @mm's counters moved meanwhile in @c->counters.
 * Only opted-in mms have counters of their own, and only those are
 * compacted.
 */
static int vmamerge_compact_counted(struct mm_struct *mm,
				    struct vmamerge_compact *c)
{
	u64 after[VMAMERGE_NR_COUNTERS];
	int i, ret;

	vmamerge_counters_read_mm(mm, c->counters);
	ret = vmamerge_compact_mm(mm, c);
	if (ret)
		return ret;
	vmamerge_counters_read_mm(mm, after);
	for (i = 0; i < VMAMERGE_NR_COUNTERS; i++)
		c->counters[i] = after[i] - c->counters[i];
	c->nr_counters = VMAMERGE_NR_COUNTERS;
	return 0;
}

static int vmamerge_ioctl_compact(struct file *file, void __user *uarg)
{
	struct vmamerge_compact c;
	struct mm_struct *mm;
	u32 usize;
	int ret;

	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	ret = vmamerge_copy_arg(&c, sizeof(c), VMAMERGE_COMPACT_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	mm = vmamerge_plain_target_mm(c.target_kind, c.target_id, c.flags,
				      c.reserved, PTRACE_MODE_ATTACH_REALCREDS);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	vmamerge_compact_clear_out(&c);
	ret = vmamerge_compact_counted(mm, &c);
	mmput(mm);
	if (ret)
		return ret;
	return vmamerge_copy_result(uarg, usize, &c, sizeof(c));
}

/*
 * Commands are matched on type, number and direction; the size bits of
 * the command are ignored because sizes are versioned inside the structs.
 */
static bool vmamerge_cmd_is(unsigned int cmd, unsigned int want)
{
	return _IOC_TYPE(cmd) == _IOC_TYPE(want) &&
	       _IOC_NR(cmd) == _IOC_NR(want) &&
	       _IOC_DIR(cmd) == _IOC_DIR(want);
}

static long vmamerge_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (vmamerge_cmd_is(cmd, VMAMERGE_IOC_ADVISE))
		return vmamerge_ioctl_advise(file, uarg);
	if (vmamerge_cmd_is(cmd, VMAMERGE_IOC_QUERY))
		return vmamerge_ioctl_query(uarg);
	if (vmamerge_cmd_is(cmd, VMAMERGE_IOC_GET_CONFIG))
		return vmamerge_ioctl_get_config(uarg);
	if (vmamerge_cmd_is(cmd, VMAMERGE_IOC_SET_CONFIG))
		return vmamerge_ioctl_set_config(file, uarg);
	if (vmamerge_cmd_is(cmd, VMAMERGE_IOC_VMAS))
		return vmamerge_ioctl_vmas(uarg);
	if (vmamerge_cmd_is(cmd, VMAMERGE_IOC_VERIFY))
		return vmamerge_ioctl_verify(uarg);
	if (vmamerge_cmd_is(cmd, VMAMERGE_IOC_COMPACT))
		return vmamerge_ioctl_compact(file, uarg);
	return -ENOTTY;
}

static const struct file_operations vmamerge_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= vmamerge_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* 0666: every action is gated inside the ioctl, see the top comment. */
static struct miscdevice vmamerge_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= VMAMERGE_NAME,
	.fops	= &vmamerge_fops,
	.mode	= 0666,
};

int vmamerge_control_init(void)
{
	int ret;

	ret = misc_register(&vmamerge_miscdev);
	if (ret)
		pr_err("cannot register /dev/%s: %d\n", VMAMERGE_NAME, ret);
	return ret;
}

void vmamerge_control_exit(void)
{
	misc_deregister(&vmamerge_miscdev);
}
