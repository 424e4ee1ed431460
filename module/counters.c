// SPDX-License-Identifier: GPL-2.0
/*
 * Counters: global ones per CPU, summed on read, and per-mm ones for
 * opted-in processes.
 *
 * The per-mm counters live in a livepatch shadow variable attached to the
 * mm_struct.  It is allocated when a process is opted in (or inherits the
 * opt-in), and freed when the address space is torn down (optin.c hooks
 * exit_mmap()) or when the module goes away.  Counting never allocates:
 * an mm without a shadow only counts globally.
 *
 * VMAMERGE_MMF_COUNTERS in mm->flags says that the mm has the shadow, so
 * that neither counting nor exit looks up (exit: locks) klp_shadow's
 * global hash for the other mms of the system.  It is set once the shadow
 * exists and never cleared while the module is loaded; the mm cannot reach
 * exit_mmap() meanwhile (callers hold mm_users, or the mm is not live yet:
 * fork, exec).
 *
 * An operation counts through its struct vmamerge_counting (vmamerge.h):
 * one klp_shadow_get() per operation, not one per count.
 */
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/atomic.h>
#include <linux/livepatch.h>

#include "vmamerge.h"

/* A klp shadow id, unique among all livepatches: "vmmg". */
#define VMAMERGE_SHADOW_MM_COUNTERS	0x766d6d67UL

/*
 * @auto_queued: an automatic compaction of the mm is queued or running
 * (compact.c); @auto_after: the mm's VMA count after the last one.
 */
struct vmamerge_mm_counters {
	atomic64_t c[VMAMERGE_NR_COUNTERS];
	atomic_t auto_queued;
	atomic_t auto_after;
};

struct vmamerge_pcpu_counters {
	u64 c[VMAMERGE_NR_COUNTERS];
};

static DEFINE_PER_CPU(struct vmamerge_pcpu_counters, vmamerge_pcpu);

static_assert(VMAMERGE_NR_COUNTERS <= VMAMERGE_MAX_COUNTERS);

/* @mm's counters, or NULL: the flag spares other mms the hash walk */
static struct vmamerge_mm_counters *vmamerge_mm_counters(struct mm_struct *mm)
{
	if (!mm || !test_bit(VMAMERGE_MMF_COUNTERS, &mm->flags))
		return NULL;
	return klp_shadow_get(mm, VMAMERGE_SHADOW_MM_COUNTERS);
}

/*
 * Count @n in @c, globally and for @mm, whose counters @cn looks up
 * once per operation (struct vmamerge_counting).
 */
void vmamerge_count_in(struct mm_struct *mm, struct vmamerge_counting *cn,
		       enum vmamerge_counter c, u64 n)
{
	if (WARN_ON_ONCE(c >= VMAMERGE_NR_COUNTERS))
		return;
	this_cpu_add(vmamerge_pcpu.c[c], n);
	if (!cn->looked_up) {
		cn->mc = vmamerge_mm_counters(mm);
		cn->looked_up = true;
	}
	if (cn->mc)
		atomic64_add(n, &cn->mc->c[c]);
}

void vmamerge_count(struct mm_struct *mm, enum vmamerge_counter c, u64 n)
{
	struct vmamerge_counting cn = { };

	vmamerge_count_in(mm, &cn, c, n);
}

bool vmamerge_mm_auto_claim(struct mm_struct *mm, int count, int step)
{
	struct vmamerge_mm_counters *mc = vmamerge_mm_counters(mm);

	if (!mc || count < atomic_read(&mc->auto_after) + step)
		return false;
	return !atomic_xchg(&mc->auto_queued, 1);
}

void vmamerge_mm_auto_done(struct mm_struct *mm, int after)
{
	struct vmamerge_mm_counters *mc = vmamerge_mm_counters(mm);

	if (!mc)
		return;
	atomic_set(&mc->auto_after, after);
	atomic_set(&mc->auto_queued, 0);
}

void vmamerge_counters_read_global(u64 *out)
{
	int cpu, i;

	memset(out, 0, sizeof(u64) * VMAMERGE_NR_COUNTERS);
	for_each_possible_cpu(cpu) {
		struct vmamerge_pcpu_counters *pc = per_cpu_ptr(&vmamerge_pcpu,
								 cpu);

		for (i = 0; i < VMAMERGE_NR_COUNTERS; i++)
			out[i] += READ_ONCE(pc->c[i]);
	}
}

void vmamerge_counters_read_mm(struct mm_struct *mm, u64 *out)
{
	struct vmamerge_mm_counters *mc;
	int i;

	mc = klp_shadow_get(mm, VMAMERGE_SHADOW_MM_COUNTERS);
	for (i = 0; i < VMAMERGE_NR_COUNTERS; i++)
		out[i] = mc ? atomic64_read(&mc->c[i]) : 0;
}

/*
 * vmamerge_mm_counters_alloc - give @mm zeroed per-mm counters.
 * A shadow left over from an earlier mm at the same address cannot exist:
 * every mm we attach one to passes exit_mmap() before it is freed, and
 * exit frees it.  Keep whatever is there if it does.
 */
int vmamerge_mm_counters_alloc(struct mm_struct *mm, gfp_t gfp)
{
	if (!klp_shadow_get_or_alloc(mm, VMAMERGE_SHADOW_MM_COUNTERS,
				     sizeof(struct vmamerge_mm_counters),
				     gfp, NULL, NULL))
		return -ENOMEM;
	set_bit(VMAMERGE_MMF_COUNTERS, &mm->flags);
	return 0;
}

void vmamerge_mm_counters_free(struct mm_struct *mm)
{
	if (test_and_clear_bit(VMAMERGE_MMF_COUNTERS, &mm->flags))
		klp_shadow_free(mm, VMAMERGE_SHADOW_MM_COUNTERS, NULL);
}

void vmamerge_mm_counters_free_all(void)
{
	klp_shadow_free_all(VMAMERGE_SHADOW_MM_COUNTERS, NULL);
}

void vmamerge_counters_exit(void)
{
	vmamerge_mm_counters_free_all();
}
