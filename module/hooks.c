// SPDX-License-Identifier: GPL-2.0
/*
 * The merge hooks' registration and teardown (hooks.h).  Which functions
 * are hooked, their trampolines and the replacements they lead to are the
 * glue's business (kernel-<series>/glue.c, hooks.S); this file attaches
 * them and, on the way out, waits until no task runs their code.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/srcu.h>

#include "vmamerge.h"
#include "hooks.h"

/*
 * The replacements run inside this SRCU section (kernel-<series>/glue.c);
 * vmamerge_hooks_unregister() waits for it.
 */
DEFINE_SRCU(vmamerge_hook_srcu);

/*
 * Testing only: hold every merge attempt of an active mm this many ms at
 * the decision point - inside a replacement entered through a hook - so
 * that a test can disable and unload the module while a task sleeps there
 * (tests/guest/run.sh, hook_hold_test).
 */
static unsigned int test_hook_hold_ms;
module_param(test_hook_hold_ms, uint, 0600);
MODULE_PARM_DESC(test_hook_hold_ms,
		 "testing only: sleep this many ms at each merge attempt of an active mm");

void vmamerge_hook_test_hold(void)
{
	unsigned int ms = READ_ONCE(test_hook_hold_ms);

	if (likely(!ms))
		return;
	pr_info("test_hook_hold_ms: holding a merge attempt of pid %d for %u ms\n",
		task_tgid_nr(current), ms);
	msleep(ms);
}

static void vmamerge_hook_explain(const struct vmamerge_hook *h, int err)
{
	switch (err) {
	case -EBUSY:
		pr_err("cannot hook %s(): something else already redirects it (another livepatch, a BPF trampoline or another module's direct call; see /sys/kernel/tracing/enabled_functions). Detach it and load vmamerge again.\n",
		       h->name);
		break;
	case -ENODEV:
		pr_err("cannot hook %s(): ftrace is disabled on this kernel (an earlier ftrace failure, see dmesg); reboot to load vmamerge\n",
		       h->name);
		break;
	default:
		pr_err("cannot hook %s() (error %d)\n", h->name, err);
	}
}

/*
 * After its filter was freed, an ftrace_ops may only be forgotten:
 * ftrace_free_filter() frees the hashes but leaves the ops pointing at
 * them, and the next ftrace_set_filter_ip() would copy the freed hash (a
 * disable reversed during its transition attaches the hooks again,
 * tests/guest/run.sh reverse_test).  ftrace holds no reference to the ops
 * any more (the unregistration waited for its users), so it starts over
 * from zero, as at load.
 */
static void vmamerge_hook_forget(struct vmamerge_hook *h)
{
	h->ops = (struct ftrace_ops){ };
	h->registered = false;
}

static int vmamerge_hook_attach(struct vmamerge_hook *h)
{
	int err;

	/* sym+0 is mapped to the function's fentry call (ftrace_location()) */
	err = ftrace_set_filter_ip(&h->ops, (unsigned long)h->stock, 0, 0);
	if (err) {
		pr_err("cannot hook %s(): no ftrace entry at its address (error %d)\n",
		       h->name, err);
		return err;
	}
	err = vmamerge_glue_direct_register(&h->ops, h->tramp);
	if (err) {
		ftrace_free_filter(&h->ops);
		vmamerge_hook_forget(h);
		vmamerge_hook_explain(h, err);
		return err;
	}
	h->registered = true;
	return 0;
}

/*
 * Testing only: while set, every detach of the last hook fails as
 * ftrace's does once ftrace_bug() disabled it (-ENODEV, nothing detached;
 * post_unpatch's second try too).
 */
static bool test_fail_detach;
module_param(test_fail_detach, bool, 0600);
MODULE_PARM_DESC(test_fail_detach,
		 "testing only: every detach of the last merge hook fails (the module then stays loaded)");

static int vmamerge_hook_unregister(struct vmamerge_hook *h)
{
	if (!h[1].name && READ_ONCE(test_fail_detach)) {
		pr_info("test_fail_detach: failing the detach of %s() on purpose\n",
			h->name);
		return -ENODEV;
	}
	return vmamerge_glue_direct_unregister(&h->ops, h->tramp);
}

/*
 * A hook ftrace could not detach (it fails once ftrace_bug() disabled
 * ftrace) may still send calls to its trampoline: the ops, its filter and
 * our text must stay.  It stays registered (a later attach skips it), and
 * the module takes a reference on itself that nothing drops, so that
 * rmmod refuses until the next boot.
 */
static void vmamerge_hook_stuck(struct vmamerge_hook *h, int err)
{
	static bool pinned;

	if (!pinned) {
		__module_get(THIS_MODULE);
		pinned = true;
	}
	pr_err("cannot detach the merge hook of %s() (error %d): it stays attached and vmamerge stays loaded until the next boot\n",
	       h->name, err);
}

static void vmamerge_hook_detach(struct vmamerge_hook *h)
{
	int err = vmamerge_hook_unregister(h);

	if (err) {
		vmamerge_hook_stuck(h, err);
		return;
	}
	ftrace_free_filter(&h->ops);
	vmamerge_hook_forget(h);
}

/*
 * vmamerge_hooks_register - attach every hook not attached yet.
 * All or nothing: on an error the ones attached here are detached again.
 * Called from the livepatch's pre_patch and post_patch callbacks
 * (klp_mutex held), so never concurrently with vmamerge_hooks_unregister().
 */
int vmamerge_hooks_register(void)
{
	struct vmamerge_hook *h;
	int err;

	for (h = vmamerge_glue_hooks; h->name; h++) {
		if (h->registered)
			continue;
		/* test_fail_init=5: the last one is taken by someone else */
		if (!h[1].name && vmamerge_injected_failure(5)) {
			vmamerge_hook_explain(h, -EBUSY);
			err = -EBUSY;
		} else {
			err = vmamerge_hook_attach(h);
		}
		if (err) {
			vmamerge_hooks_unregister();
			return err;
		}
	}
	return 0;
}

/*
 * vmamerge_hooks_unregister - detach every hook, then wait until no task
 * runs a trampoline, a test function or a replacement entered through one.
 *
 * After the detach no new call enters.  A task may still be inside a
 * trampoline, a test function or an entry's prologue (none of them
 * sleeps: the first RCU Tasks grace period waits for them to leave), or
 * inside an entry's SRCU section, possibly asleep (synchronize_srcu()),
 * or past srcu_read_unlock() on its way out of the entry (the second RCU
 * Tasks grace period).  Then the module text may go.
 */
void vmamerge_hooks_unregister(void)
{
	struct vmamerge_hook *h;
	bool any = false;

	for (h = vmamerge_glue_hooks; h->name; h++) {
		if (!h->registered)
			continue;
		vmamerge_hook_detach(h);
		any = true;
	}
	if (!any)
		return;
	synchronize_rcu_tasks();
	synchronize_srcu(&vmamerge_hook_srcu);
	synchronize_rcu_tasks();
}
