// SPDX-License-Identifier: GPL-2.0
/*
 * The constants of 6.1's trampolines (module/hook_offsets.h): the common
 * ones and where a task keeps its mm (do_mmap() maps into current->mm).
 * Compiled to assembly only (Kbuild): never part of the module.
 */
#include <linux/sched.h>

#include "hook_offsets.h"

void vmamerge_hook_offsets(void);

void vmamerge_hook_offsets(void)
{
	VMAMERGE_COMMON_HOOK_OFFSETS();
	DEFINE(VMAMERGE_HO_TASK_MM, offsetof(struct task_struct, mm));
}
