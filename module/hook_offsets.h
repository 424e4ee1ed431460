/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the trampolines' inline opt-in test (hooks_tramp.S) reads, as
 * constants for assembly: each series' kernel-<series>/hook_offsets.c
 * emits these and its own with DEFINE(), and Kbuild turns them into
 * vmamerge-hook-offsets.h (as the kernel builds asm-offsets.h).  That
 * file is compiled to assembly only, never linked into the module.
 */
#ifndef _VMAMERGE_HOOK_OFFSETS_H
#define _VMAMERGE_HOOK_OFFSETS_H

#include <linux/kbuild.h>
#include <linux/mm_types.h>

#include "vmamerge.h"

/*
 * The opt-in bit as a byte of mm->flags and a mask in it (x86 is
 * little-endian: bit n of the long is bit n & 7 of byte n >> 3; no '%'
 * here: DEFINE() puts the expression's text into an asm template), the mode
 * for which the bit decides, and where a VMA keeps its mm.
 */
#define VMAMERGE_COMMON_HOOK_OFFSETS()					\
	do {								\
		DEFINE(VMAMERGE_HO_MODE_OPTIN, VMAMERGE_MODE_OPTIN);	\
		DEFINE(VMAMERGE_HO_OPTIN_BYTE,				\
		       offsetof(struct mm_struct, flags) +		\
		       (VMAMERGE_MMF_OPTED_IN >> 3));			\
		DEFINE(VMAMERGE_HO_OPTIN_MASK,				\
		       1 << (VMAMERGE_MMF_OPTED_IN & 7));		\
		DEFINE(VMAMERGE_HO_VMA_MM,				\
		       offsetof(struct vm_area_struct, vm_mm));		\
	} while (0)

#endif /* _VMAMERGE_HOOK_OFFSETS_H */
