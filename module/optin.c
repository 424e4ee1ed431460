// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process (per-mm) opt-in state.
 *
 * Bits in mm->flags that the running kernel does not use (the glue names
 * them, glue.h) say whether an address space is opted in, whether the
 * opt-in survives execve() and whether it does so only once.  They live
 * and die with the mm; nothing is looked up on the hot path but one bit.
 *
 * Inheritance:
 *  - fork: dup_mmap() calls uprobe_dup_mmap(oldmm, mm) with the parent's
 *    mm write-locked (the child's is not locked yet, and nobody else can
 *    see it); the glue replaces it and calls vmamerge_mm_fork().
 *  - exec: a kprobe on begin_new_exec() copies the bits from the old mm
 *    (current->mm) to bprm->mm when EXEC_KEEP is set.  begin_new_exec()
 *    is exported and keeps its ENDBR, and a kprobe handler is a call from
 *    the kprobe machinery, not an indirect call to a sealed function.
 *  - privilege change: a kprobe on setup_new_exec(), which runs once the
 *    new credentials are computed (bprm->secureexec, the AT_SECURE of the
 *    new program), drops the opt-in again for a set-user-ID, set-group-ID
 *    or file-capability program: a user may not change how a privileged
 *    program's memory is handled.
 *  - teardown: a kprobe on exit_mmap() frees the per-mm counters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/binfmts.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/mm_types.h>

#include "vmamerge.h"

bool vmamerge_mm_exec_keep(const struct mm_struct *mm)
{
	return test_bit(VMAMERGE_MMF_EXEC_KEEP, &mm->flags);
}

bool vmamerge_mm_exec_once(const struct mm_struct *mm)
{
	return test_bit(VMAMERGE_MMF_EXEC_ONCE, &mm->flags);
}

static void vmamerge_mm_assign_bit(struct mm_struct *mm, int bit, bool on)
{
	if (on)
		set_bit(bit, &mm->flags);
	else
		clear_bit(bit, &mm->flags);
}

/* Set the opt-in bits, exec bits first: OPTED_IN never shows stale ones. */
static void vmamerge_mm_set(struct mm_struct *mm, bool exec_keep,
			    bool exec_once)
{
	vmamerge_mm_assign_bit(mm, VMAMERGE_MMF_EXEC_KEEP, exec_keep);
	vmamerge_mm_assign_bit(mm, VMAMERGE_MMF_EXEC_ONCE, exec_once);
	set_bit(VMAMERGE_MMF_OPTED_IN, &mm->flags);
}

/*
 * vmamerge_mm_enable - opt @mm in.  The caller holds a reference on @mm
 * (mm_users), so it cannot reach exit_mmap() meanwhile.  On failure the
 * state is unchanged.
 */
int vmamerge_mm_enable(struct mm_struct *mm, bool exec_keep, bool exec_once)
{
	int ret;

	ret = vmamerge_mm_counters_alloc(mm, GFP_KERNEL);
	if (ret)
		return ret;
	vmamerge_mm_set(mm, exec_keep, exec_once);
	return 0;
}

/* The per-mm counters stay readable until the mm goes away. */
void vmamerge_mm_disable(struct mm_struct *mm)
{
	clear_bit(VMAMERGE_MMF_OPTED_IN, &mm->flags);
	clear_bit(VMAMERGE_MMF_EXEC_KEEP, &mm->flags);
	clear_bit(VMAMERGE_MMF_EXEC_ONCE, &mm->flags);
}

/*
 * Opt the new mm @to in, with the given exec behaviour.  Without counters
 * (allocation failure) the mm still merges; it only counts globally.
 */
static void vmamerge_mm_inherit(struct mm_struct *to, bool exec_keep,
				bool exec_once, gfp_t gfp)
{
	vmamerge_mm_counters_alloc(to, gfp);
	vmamerge_mm_set(to, exec_keep, exec_once);
}

/*
 * Testing only: hold every fork of an opted-in process this many ms inside
 * the fork hook, so that a test can disable and unload the module while a
 * task sleeps in module code called from a replacement function (see
 * vmamerge_mm_fork() and tests/guest/run.sh, fork_hold_test).
 */
static unsigned int test_fork_hold_ms;
module_param(test_fork_hold_ms, uint, 0600);
MODULE_PARM_DESC(test_fork_hold_ms,
		 "testing only: sleep this many ms in the fork hook of opted-in processes");

static void vmamerge_test_fork_hold(void)
{
	unsigned int ms = READ_ONCE(test_fork_hold_ms);

	if (likely(!ms))
		return;
	pr_info("test_fork_hold_ms: holding a fork of pid %d for %u ms\n",
		task_tgid_nr(current), ms);
	msleep(ms);
}

/*
 * Called from uprobe_dup_mmap() with @oldmm write-locked; @newmm is not
 * visible to anyone else yet.  A forked child is a copy: it keeps the exec
 * behaviour of its parent.
 *
 * No sleeping here: GFP_NOWAIT.  Livepatch counts a task as switched when
 * none of the replacement functions is on its stack (klp_check_stack_func),
 * so module code must not be left before it returns (Kbuild builds the
 * module without sibling calls, module/check-tailcalls.sh proves it); not
 * sleeping keeps the window small and the parent's mmap_lock short.  If
 * the shadow cannot be had without sleeping, the child still merges and
 * counts only globally (vmamerge_count()).
 */
void vmamerge_mm_fork(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	if (!vmamerge_mm_opted_in(oldmm))
		return;
	vmamerge_test_fork_hold();
	vmamerge_mm_inherit(newmm, vmamerge_mm_exec_keep(oldmm),
			    vmamerge_mm_exec_once(oldmm),
			    GFP_NOWAIT | __GFP_NOWARN);
}

/*
 * begin_new_exec(bprm): current->mm is still the old mm, bprm->mm the new
 * one.  A kprobe pre-handler runs with preemption disabled: no sleeping.
 */
static int vmamerge_exec_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct linux_binprm *bprm = (struct linux_binprm *)regs->di;
	struct mm_struct *old = current->mm;

	/* EXEC_ONCE: this exec was the one; the new program keeps no more. */
	if (old && bprm->mm && vmamerge_mm_opted_in(old) &&
	    vmamerge_mm_exec_keep(old))
		vmamerge_mm_inherit(bprm->mm, !vmamerge_mm_exec_once(old), false,
				    GFP_ATOMIC);
	return 0;
}

/*
 * setup_new_exec(bprm): begin_new_exec() has computed the new credentials
 * and installed the new mm (current->mm).  A program that gains privileges
 * runs without the opt-in it may have inherited a moment ago.
 */
static int vmamerge_setup_exec_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct linux_binprm *bprm = (struct linux_binprm *)regs->di;

	if (bprm->secureexec && current->mm)
		vmamerge_mm_disable(current->mm);
	return 0;
}

/* exit_mmap(mm): the address space is going away for good. */
static int vmamerge_exit_mmap_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct mm_struct *mm = (struct mm_struct *)regs->di;

	vmamerge_mm_counters_free(mm);
	return 0;
}

static struct kprobe vmamerge_exec_kp = {
	.symbol_name	= "begin_new_exec",
	.pre_handler	= vmamerge_exec_pre,
};

static struct kprobe vmamerge_setup_exec_kp = {
	.symbol_name	= "setup_new_exec",
	.pre_handler	= vmamerge_setup_exec_pre,
};

static struct kprobe vmamerge_exit_kp = {
	.symbol_name	= "exit_mmap",
	.pre_handler	= vmamerge_exit_mmap_pre,
};

static struct kprobe *vmamerge_kprobes[] = {
	&vmamerge_exec_kp,
	&vmamerge_setup_exec_kp,
	&vmamerge_exit_kp,
};

/*
 * Clear the bits of @p's mm.  The thread-group leader may have exited
 * (its ->mm is NULL then) while other threads still use the mm: the first
 * thread that has one stands for all of them.  task_lock() keeps ->mm from
 * going away under us.
 */
static void vmamerge_clear_process_mm(struct task_struct *p)
{
	struct task_struct *t;

	for_each_thread(p, t) {
		task_lock(t);
		if (t->mm) {
			vmamerge_mm_disable(t->mm);
			/* the shadows go next (vmamerge_counters_exit()) */
			clear_bit(VMAMERGE_MMF_COUNTERS, &t->mm->flags);
			task_unlock(t);
			return;
		}
		task_unlock(t);
	}
}

/* Clear our bits everywhere, so that nothing of ours outlives the module. */
static void vmamerge_clear_all_mms(void)
{
	struct task_struct *p;

	rcu_read_lock();
	for_each_process(p)
		vmamerge_clear_process_mm(p);
	rcu_read_unlock();
}

int vmamerge_optin_init(void)
{
	int ret;

	ret = register_kprobes(vmamerge_kprobes, ARRAY_SIZE(vmamerge_kprobes));
	if (ret)
		pr_err("cannot hook exec/exit (register_kprobes: %d); is CONFIG_KPROBES enabled?\n",
		       ret);
	return ret;
}

/*
 * Runs at module exit, after the livepatch is gone, so no replacement code
 * sets bits any more.  Best effort for one corner: a child whose fork ran
 * the replacement before the transition ended but which is not yet on the
 * task list keeps its bits.  They do nothing without the module; a later
 * load would see that process as opted in.
 */
void vmamerge_optin_exit(void)
{
	unregister_kprobes(vmamerge_kprobes, ARRAY_SIZE(vmamerge_kprobes));
	vmamerge_clear_all_mms();
}
