/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The merge hooks: ftrace direct calls on the stock mm functions whose
 * merge attempts we take over (docs/design.md, "Hooks: direct calls, not
 * the livepatch").
 *
 * Each hooked function's fentry call is patched to call a trampoline
 * (kernel-<series>/hooks.S, built with VMAMERGE_TRAMP, hooks_tramp.S).
 * The trampoline asks whether the call concerns an active mm - in mode
 * optin by reading the mm's opt-in bit itself, in the other modes through
 * a test function; if not it returns into the stock function, which runs
 * as if nothing had happened; if so it drops the stock function's frame
 * and jumps to the glue's entry for it, which runs our replacement inside
 * an SRCU read-side section (vmamerge_hook_srcu) and returns to the stock
 * function's caller.
 *
 * Why not the livepatch for these: every call of a livepatched function
 * goes through klp's ftrace handler (all registers saved, a lookup, the
 * transition check) and then through our copy of the function - in every
 * process of the system, opted in or not.  A direct call costs the
 * processes that are not opted in a call, the test (~8 instructions inline)
 * and a return.
 *
 * What the livepatch did for them that we now do ourselves: keep the
 * module text alive while a task runs in it.  The trampoline and the
 * entries' code outside their SRCU section never sleep, so an RCU Tasks
 * grace period covers them; the replacements run inside the section, so
 * synchronize_srcu() covers them (vmamerge_hooks_unregister()).
 */
#ifndef _VMAMERGE_HOOKS_H
#define _VMAMERGE_HOOKS_H

#include <linux/ftrace.h>
#include <linux/srcu.h>

/*
 * A test function: called by a trampoline (in modes other than optin) with
 * the hooked function's own arguments in their registers, it must give
 * every register back as it found it but %rax (its answer) - hence
 * no_caller_saved_registers - and must not be traced (it runs before the
 * stock function's own frame).
 */
#define VMAMERGE_HOOK_TEST \
	__visible notrace __attribute__((no_caller_saved_registers))

/*
 * struct vmamerge_hook - one hooked stock function.
 * @name: its name, for messages.
 * @stock: its address (a livepatch relocation, resolved before the
 *	   livepatch's pre_patch callback registers the hooks).
 * @tramp: its trampoline (kernel-<series>/hooks.S).
 * @ops: the ftrace_ops of its direct call.
 * @registered: @ops is registered.  Changed only under klp_mutex (the
 *	   livepatch callbacks) or in module init/exit.
 */
struct vmamerge_hook {
	const char *name;
	void *stock;
	void *tramp;
	struct ftrace_ops ops;
	bool registered;
};

/* The glue's hooks (kernel-<series>/glue.c), ended by an empty entry. */
extern struct vmamerge_hook vmamerge_glue_hooks[];

extern struct srcu_struct vmamerge_hook_srcu;

int vmamerge_hooks_register(void);
void vmamerge_hooks_unregister(void);
/* testing only: sleep test_hook_hold_ms at the decision point */
void vmamerge_hook_test_hold(void);

/*
 * The kernel series' direct-call API (kernel-<series>/glue.c).  The
 * unregistration leaves the ops' filter allocated, also on failure.
 */
int vmamerge_glue_direct_register(struct ftrace_ops *ops, void *tramp);
int vmamerge_glue_direct_unregister(struct ftrace_ops *ops, void *tramp);

#endif /* _VMAMERGE_HOOKS_H */
