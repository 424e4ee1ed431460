// SPDX-License-Identifier: GPL-2.0
/*
 * The constants of 6.12's trampolines (module/hook_offsets.h): the common
 * ones and where a vma_merge_struct keeps its mm.  Compiled to assembly
 * only (Kbuild): never part of the module.
 */
#include "hook_offsets.h"
#include "mm_vma.h"

void vmamerge_hook_offsets(void);

void vmamerge_hook_offsets(void)
{
	VMAMERGE_COMMON_HOOK_OFFSETS();
	DEFINE(VMAMERGE_HO_VMG_MM, offsetof(struct vma_merge_struct, mm));
}
