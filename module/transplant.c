// SPDX-License-Identifier: GPL-2.0
/*
 * Transplanting: move a VMA and its pages from its own anon_vma to the
 * anon_vma of a neighbour it could otherwise merge with (thesis §2.8), so
 * that the stock merge logic, which wants one anon_vma on both sides,
 * merges them.  Which VMA joins which is decided at the merge decision
 * point (transplant_merge.c); this file does the moving.
 *
 * Any family shape is taken on, as long as each chain is at most
 * VMAMERGE_CHAIN_MAX entries long (else refused_family):
 *  - a VMA that comes from a fork (a worker whose parent mapped and
 *    faulted the memory) has a chain entry per ancestor, each keeping it
 *    findable from that ancestor's tree, and pages whose anon_vma is an
 *    ancestor's (faulted before the fork, never written since).  It
 *    leaves every tree of its chain that the owner's chain does not name,
 *    each as unlink_anon_vmas() leaves it for an unmapped VMA: the entry
 *    out of the tree, and a tree left empty drops its parent's
 *    num_children and (after a grace period) its reference.  Its entries
 *    for anon_vmas the owner's chain names too (siblings below one
 *    parent share the ancestors) stay, re-keyed;
 *  - an anon_vma with children (the process forked since it faulted):
 *    their VMAs sit in its tree, so it is not emptied, only left;
 *  - the new chain is one entry for each anon_vma of the owner's chain,
 *    in its order: what anon_vma_clone() gives a VMA that takes over an
 *    anon_vma, so both merge partners carry the same chain whichever
 *    survives the merge, and every page keeps an anon_vma its VMA's
 *    chain names (the owner's own, where every moved page goes);
 *  - num_active_vmas moves from the old anon_vma to the owner's; no other
 *    count changes (every tree of the owner's chain holds the owner, so
 *    none becomes non-empty);
 *  - every page that changes anon_vma must be exclusive to the VMA
 *    (sharing.c: mapped once, its swap slot referenced by this PTE alone,
 *    not KSM, not pinned) - a page still COW-shared with a relative is
 *    refused_shared - and belong to the VMA's family (page_rewrite.c).
 * Chain entries come from the kernel's own anon_vma_chain cache; the ones
 * the new chain needs beyond the VMA's old entries are allocated before
 * any lock is taken, the ones left over freed after the commit.
 * vmamerge_family_refusal() below decides what a refusal for a too long
 * chain counts: refused_shared if a page would have stopped the rewrite
 * anyway, else refused_family.
 *
 * Locks: mmap_lock (write) and the VMA's write lock (caller), the VMA's
 * root anon_vma rwsem (write), then the owner's root rwsem by trylock
 * only (one lock when both share a root): the kernel never holds two
 * roots but in mm_take_all_locks(), which takes them in its own order.
 * Every anon_vma of a chain has that chain's root.  Under both, the
 * walker collects the folios (locked), the chain entries leave and join
 * the interval trees, vma->anon_vma and the counts change, and every
 * folio's mapping is rewritten.  Nothing can look at a half-done state: rmap walks
 * of either tree wait for the rwsems, everything else that reads a
 * folio's anon_vma holds its folio lock or our mmap_lock.
 *
 * The old anon_vmas (every one of the VMA's old chain: a page may have
 * pointed at any of them): one whose tree is now empty is released as
 * unlink_anon_vmas() would (its parent's num_children, then its
 * reference) - but only after an RCU grace period.  A lockless rmap walker
 * (folio_lock_anon_vma_read()) may have read the old mapping just before
 * the rewrite; it relies on "a mapped folio's anon_vma is not freed" and
 * rechecks only folio_mapped(), which stays true here.  After a grace
 * period every such reader has either taken a reference or the rwsem,
 * which anon_vma_free() waits for.  An old anon_vma that is not empty -
 * other VMAs of the process share it, the children of a fork sit in its
 * tree, or the VMA is still in it (an ancestor the owner shares) - is
 * freed later by whoever unmaps the last of them, which may
 * come before such a reader's grace period is over: so the transplant
 * takes a reference of its own on it, put the same way.  These puts wait
 * for the grace period in batches (below: one grace period and one work
 * item per batch, not per anon_vma).
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/rmap.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "vmamerge.h"
#include "kernel_internal.h"
#include "page_rewrite.h"

/*
 * Batched release of old anon_vmas (emptied, or kept alive by our own
 * reference: top of file).
 *
 * A batch is a page: an rcu_work and an array of anon_vma pointers.  The
 * array is the batch's own memory, not the anon_vmas': until the grace
 * period ends, a lockless reader that loaded the old folio->mapping
 * (folio_lock_anon_vma_read(), and rmap walkers after it) may still read
 * every field of an emptied anon_vma - ->root and the root's ->rwsem
 * (trylock), ->refcount (atomic_inc_not_zero()), and, with the rwsem,
 * ->rb_root, which must still read as the empty tree - so none of them
 * may be borrowed to link it into a list or to carry an rcu_head (the
 * anon_vma cache is SLAB_TYPESAFE_BY_RCU for such readers).  An emptied
 * anon_vma is untouched from the commit until put_anon_vma(); one that is
 * not empty stays in use by its other VMAs, and only our reference is
 * put.
 *
 * A transplant reserves a slot before it changes anything (*held*); the
 * reservation may allocate a batch (GFP_KERNEL: the caller holds only
 * mmap_lock and the VMA lock, both sleeping locks, as the kmalloc() of
 * one record per anon_vma did before) and, failing that, the transplant
 * is refused as VMAMERGE_R_NOMEM with nothing changed.  Once the
 * anon_vma's tree is empty there is no way back, so the slot must be
 * there: the alternatives at that point - waiting for a grace period
 * (synchronize_rcu()) under mmap_lock, or an allocation that cannot fail
 * - are not taken.  Every transplant fills its slot: the old anon_vma's
 * own reference if its tree emptied, else the one it took.
 *
 * One grace period per batch: the filling batch is handed to RCU
 * (queue_rcu_work()) when no slot of it is held and either no batch is in
 * flight or it is full; otherwise it fills on while the one in flight
 * waits, and the work function of the last batch in flight hands it over
 * when it finishes.  So an emptied anon_vma waits at most about two grace
 * periods, and a burst of N transplants costs N / VMAMERGE_AV_BATCH_MAX
 * (at least one per grace period) callbacks and work items instead of N.
 * A full batch that still has held slots is detached (no longer filling);
 * whoever gives back its last slot hands it to RCU.
 *
 * vmamerge_av_lock, a spinlock, taken in process context only (never
 * with an anon_vma lock held, never in the work function while it puts),
 * protects the filling and spare pointers, every batch's nr and held,
 * and the count in flight.
 */
struct vmamerge_av_batch {
	struct rcu_work rwork;
	unsigned int nr;	/* anon_vmas in avs[] */
	unsigned int held;	/* slots reserved by transplants under way */
	struct anon_vma *avs[];
};

#define VMAMERGE_AV_BATCH_BYTES	PAGE_SIZE
#define VMAMERGE_AV_BATCH_MAX						\
	((VMAMERGE_AV_BATCH_BYTES - offsetof(struct vmamerge_av_batch, avs)) / \
	 sizeof(struct anon_vma *))

static DEFINE_SPINLOCK(vmamerge_av_lock);
static struct vmamerge_av_batch *vmamerge_av_filling;
/* one finished batch kept for reuse: no allocation in the steady state */
static struct vmamerge_av_batch *vmamerge_av_spare;
static unsigned int vmamerge_av_in_flight;
static struct workqueue_struct *vmamerge_release_wq;

static void vmamerge_av_release_fn(struct work_struct *work);

static struct vmamerge_av_batch *vmamerge_av_batch_alloc(void)
{
	struct vmamerge_av_batch *b = kmalloc(VMAMERGE_AV_BATCH_BYTES,
					      GFP_KERNEL);

	if (b)
		INIT_RCU_WORK(&b->rwork, vmamerge_av_release_fn);
	return b;
}

/* Hand @b to RCU: its anon_vmas are put after the next grace period. */
static void vmamerge_av_submit_locked(struct vmamerge_av_batch *b)
{
	lockdep_assert_held(&vmamerge_av_lock);
	vmamerge_av_in_flight++;
	queue_rcu_work(vmamerge_release_wq, &b->rwork);
}

/* Hand the filling batch over if it has anon_vmas and nothing holds it up. */
static void vmamerge_av_kick_locked(void)
{
	struct vmamerge_av_batch *b = vmamerge_av_filling;

	if (!b || !b->nr || b->held ||
	    (vmamerge_av_in_flight && b->nr < VMAMERGE_AV_BATCH_MAX))
		return;
	vmamerge_av_filling = NULL;
	vmamerge_av_submit_locked(b);
}

/* A batch now unused: keep it as the spare or free it (returned). */
static struct vmamerge_av_batch *
vmamerge_av_recycle_locked(struct vmamerge_av_batch *b)
{
	if (vmamerge_av_spare)
		return b;
	vmamerge_av_spare = b;
	return NULL;
}

static void vmamerge_av_release_fn(struct work_struct *work)
{
	struct vmamerge_av_batch *b =
		container_of(to_rcu_work(work), struct vmamerge_av_batch,
			     rwork);
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		put_anon_vma(b->avs[i]);
	spin_lock(&vmamerge_av_lock);
	vmamerge_av_in_flight--;
	b = vmamerge_av_recycle_locked(b);
	vmamerge_av_kick_locked();
	spin_unlock(&vmamerge_av_lock);
	kfree(b);
}

/*
 * Reserve a slot for an anon_vma the transplant may empty.  Returns the
 * batch the slot is in, or NULL without memory.  May sleep.
 */
static struct vmamerge_av_batch *vmamerge_av_reserve(void)
{
	struct vmamerge_av_batch *b, *new = NULL;

	spin_lock(&vmamerge_av_lock);
	for (;;) {
		b = vmamerge_av_filling;
		if (b && b->nr + b->held < VMAMERGE_AV_BATCH_MAX)
			break;
		if (b) {
			/* full: detached; its last holder hands it over */
			vmamerge_av_filling = NULL;
			if (!b->held)
				vmamerge_av_submit_locked(b);
		}
		if (vmamerge_av_spare) {
			b = vmamerge_av_spare;
			vmamerge_av_spare = NULL;
		} else if (new) {
			b = new;
			new = NULL;
		} else {
			spin_unlock(&vmamerge_av_lock);
			new = vmamerge_av_batch_alloc();
			if (!new)
				return NULL;
			spin_lock(&vmamerge_av_lock);
			continue;
		}
		b->nr = 0;
		b->held = 0;
		vmamerge_av_filling = b;
	}
	b->held++;
	/* allocated, but another transplant installed a batch meanwhile */
	if (new)
		new = vmamerge_av_recycle_locked(new);
	spin_unlock(&vmamerge_av_lock);
	kfree(new);
	return b;
}

/* Give back a slot of @b, filled with @av (to put) or not (NULL). */
static void vmamerge_av_unreserve(struct vmamerge_av_batch *b,
				  struct anon_vma *av)
{
	struct vmamerge_av_batch *unused = NULL;

	spin_lock(&vmamerge_av_lock);
	if (av)
		b->avs[b->nr++] = av;
	b->held--;
	if (b == vmamerge_av_filling)
		vmamerge_av_kick_locked();
	else if (!b->held && b->nr)
		vmamerge_av_submit_locked(b);	/* detached when full */
	else if (!b->held)
		unused = vmamerge_av_recycle_locked(b);
	spin_unlock(&vmamerge_av_lock);
	kfree(unused);
}

int vmamerge_transplant_init(void)
{
	vmamerge_release_wq = alloc_workqueue("vmamerge_release", 0, 0);
	return vmamerge_release_wq ? 0 : -ENOMEM;
}

/*
 * After the livepatch is gone (or a failed init): no transplant runs, so
 * no slot is held.  The filling batch is handed to RCU here (nobody else
 * would: only reservations and work functions do, and with no filling
 * batch left no work function hands one over again); rcu_barrier() waits
 * until every batch in flight has had its grace period and its work
 * queued, destroy_workqueue() until the work has run.  Every emptied
 * anon_vma is then put, each after a grace period, before the module
 * text goes.
 */
void vmamerge_transplant_exit(void)
{
	struct vmamerge_av_batch *b;

	spin_lock(&vmamerge_av_lock);
	b = vmamerge_av_filling;
	vmamerge_av_filling = NULL;
	if (b && WARN_ON_ONCE(b->held)) {
		b = NULL;	/* a bug: leak rather than free what a holder fills */
	} else if (b && b->nr) {
		vmamerge_av_submit_locked(b);
		b = NULL;
	}
	spin_unlock(&vmamerge_av_lock);
	kfree(b);
	rcu_barrier();
	destroy_workqueue(vmamerge_release_wq);
	WARN_ON_ONCE(vmamerge_av_in_flight);
	kfree(vmamerge_av_spare);
	vmamerge_av_spare = NULL;
}

/*
 * The longest anon_vma chain a transplant takes on, on either side: one
 * entry per generation of forks the memory went through.  A longer one
 * is refused_family (fixed arrays on the stack, no allocation to track
 * the levels).
 */
#define VMAMERGE_CHAIN_MAX	8

/* Entries of @vma's chain, counted up to VMAMERGE_CHAIN_MAX + 1. */
static unsigned int vmamerge_chain_len(struct vm_area_struct *vma)
{
	struct anon_vma_chain *avc;
	unsigned int n = 0;

	list_for_each_entry(avc, &vma->anon_vma_chain, same_vma)
		if (++n > VMAMERGE_CHAIN_MAX)
			break;
	return n;
}

/* Has @vma's chain an entry for @av? */
static bool vmamerge_chain_has(struct vm_area_struct *vma, struct anon_vma *av)
{
	struct anon_vma_chain *avc;

	list_for_each_entry(avc, &vma->anon_vma_chain, same_vma)
		if (avc->anon_vma == av)
			return true;
	return false;
}

/*
 * vmamerge_transplant_allowed - may @mover's pages join the anon_vma of
 * @owner?  Any family shape whose chains are at most VMAMERGE_CHAIN_MAX
 * entries long (else VMAMERGE_R_FAMILY); the pages decide the rest.  A
 * chain changes only under our mmap_lock (held for writing).
 */
enum vmamerge_refusal
vmamerge_transplant_allowed(struct vm_area_struct *mover,
			    struct vm_area_struct *owner)
{
	if (!mover->anon_vma || !owner->anon_vma)
		return VMAMERGE_R_SPECIAL;
	if (vmamerge_chain_len(mover) > VMAMERGE_CHAIN_MAX ||
	    vmamerge_chain_len(owner) > VMAMERGE_CHAIN_MAX)
		return VMAMERGE_R_FAMILY;
	return VMAMERGE_R_NONE;
}

/*
 * Adoption links a chain entry for each of the owner's anon_vmas
 * (anon_vma_clone()), as the stock kernel does for a VMA that expands
 * over a faulted one: any family shape.  The stock merge refuses a
 * never-faulted VMA next to a forked one only to keep anon_vma trees
 * short (is_mergeable_anon_vma()'s list_is_singular()), not for
 * correctness; an opted-in process asked for the merge.
 */
enum vmamerge_refusal vmamerge_adopt_allowed(struct vm_area_struct *owner)
{
	return owner->anon_vma ? VMAMERGE_R_NONE : VMAMERGE_R_SPECIAL;
}

/*
 * vmamerge_family_refusal - the reason to count for a VMAMERGE_R_FAMILY
 * refusal of @vma, the VMA whose pages would have changed anon_vma: a
 * page-level reason if one of its pages would have stopped the rewrite
 * anyway - above all refused_shared, a page still mapped or referenced by
 * another process (COW after fork) - else VMAMERGE_R_FAMILY: every page
 * is provably exclusive, only the family's shape stops us, so that
 * refused_family counts exactly the merges that rewriting forked families
 * would gain.  A never-faulted @vma (adoption) moves no page.
 *
 * One pass of the rewrite walker (page_rewrite.c) under the same locks as
 * a renumbering - mmap_lock (write, the caller's), the VMA write-locked,
 * the root anon_vma's rwsem (write) - whose folios are released unchanged.
 * Only on the refusal path, bounded by rewrite_max_pages like any rewrite.
 * A transient refusal (a busy folio, a migration entry, a folio list that
 * must grow first) proves nothing about sharing: counted as the family.
 */
enum vmamerge_refusal vmamerge_family_refusal(struct vm_area_struct *vma)
{
	struct vmamerge_rewrite rw;
	enum vmamerge_refusal r;

	if (!vma->anon_vma)
		return VMAMERGE_R_FAMILY;
	vmamerge_rg_vma_start_write(vma);
	r = vmamerge_rewrite_init(&rw, vma);
	if (!r) {
		anon_vma_lock_write(vma->anon_vma);
		r = vmamerge_rewrite_collect(&rw);
		vmamerge_rewrite_release(&rw);
		anon_vma_unlock_write(vma->anon_vma);
	}
	vmamerge_rewrite_free(&rw);
	if (!r || vmamerge_refusal_transient(r))
		return VMAMERGE_R_FAMILY;
	return r;
}

/*
 * vmamerge_adopt_anon_vma - give @vma, which has never had an anon_vma
 * (no anonymous page), the anon_vma of @owner, as the stock merge code
 * does for the VMA that grows over a faulted one (dup_anon_vma()): a
 * chain entry for each of @owner's.  No page changes owner, so @owner
 * may be forked (a chain of any length: every anon_vma a page of @owner
 * may have is then in @vma's chain too) and its family may have forked
 * children (docs/design.md, "Merges upstream keeps apart").  The pointer
 * is set before the clone, as dup_anon_vma() does, so that the clone
 * counts @vma in num_active_vmas and never reuses an idle anon_vma.
 * mmap_lock held for writing.
 */
enum vmamerge_refusal vmamerge_adopt_anon_vma(struct vm_area_struct *vma,
					      struct vm_area_struct *owner)
{
	enum vmamerge_refusal r;

	/* callers offer only never-faulted VMAs; anything else is not ours */
	if (vma->anon_vma)
		return VMAMERGE_R_SPECIAL;
	r = vmamerge_adopt_allowed(owner);
	if (r)
		return r;
	vmamerge_rg_vma_start_write(vma);
	vma->anon_vma = owner->anon_vma;
	/* on failure, anon_vma_clone() resets vma->anon_vma and the chain */
	if (anon_vma_clone(vma, owner))
		return VMAMERGE_R_NOMEM;
	return VMAMERGE_R_NONE;
}

/*
 * Transplanting collects under both roots' locks, the second one by
 * trylock (a held one is a transient refusal).  Two anon_vmas of one
 * family (a worker's VMAs that inherited one parent VMA) share a root:
 * one lock then.
 */
static enum vmamerge_refusal
vmamerge_transplant_lock(struct vmamerge_rewrite *rw)
{
	struct anon_vma *from = rw->vma->anon_vma, *to = rw->to_anon_vma;

	anon_vma_lock_write(from);
	if (to->root != from->root && !down_write_trylock(&to->root->rwsem)) {
		anon_vma_unlock_write(from);
		return VMAMERGE_R_BUSY;
	}
	return VMAMERGE_R_NONE;
}

/* Before the commit: @rw->vma's anon_vma is still the old one. */
static void vmamerge_transplant_unlock(struct vmamerge_rewrite *rw)
{
	struct anon_vma *from = rw->vma->anon_vma, *to = rw->to_anon_vma;

	if (to->root != from->root)
		up_write(&to->root->rwsem);
	anon_vma_unlock_write(from);
}

/*
 * What a transplant changes in the anon_vma structure, prepared before
 * any lock (the allocations may sleep), applied under both roots' locks.
 *
 * The VMA's new chain is one entry per anon_vma of the owner's chain, in
 * the owner's order - what anon_vma_clone() gives a VMA that takes over
 * an anon_vma, so both merge partners carry the same chain whichever of
 * them survives the merge.  Entries the VMA already has for those
 * anon_vmas (a worker's two VMAs below one parent share the ancestors)
 * are kept; the others are the VMA's own entries for anon_vmas it leaves,
 * reused, or @fresh ones.  Entries left over are freed.
 *
 * Each anon_vma the VMA had (@old) keeps a slot of the batched release:
 * a page of the VMA may have pointed at any of them, and a lockless
 * reader that loaded that pointer must find it alive until a grace
 * period has passed (top of file).  One the VMA leaves with an empty tree
 * is released as unlink_anon_vmas() releases it (its parent's
 * num_children, then its reference, here after the grace period); every
 * other one gets a reference of ours, put the same way.
 */
struct vmamerge_chain_edit {
	struct anon_vma *old[VMAMERGE_CHAIN_MAX];
	struct vmamerge_av_batch *slot[VMAMERGE_CHAIN_MAX];
	unsigned int nr_old;
	struct anon_vma_chain *fresh[VMAMERGE_CHAIN_MAX];
	unsigned int nr_fresh;
	struct list_head unused;	/* entries to free after the commit */
};

static void vmamerge_chain_edit_undo(struct vmamerge_chain_edit *ed)
{
	while (ed->nr_fresh)
		kmem_cache_free(anon_vma_chain_cachep, ed->fresh[--ed->nr_fresh]);
	while (ed->nr_old)
		vmamerge_av_unreserve(ed->slot[--ed->nr_old], NULL);
}

/*
 * Reserve a release slot per anon_vma of @vma's chain and allocate the
 * entries the new chain needs beyond the ones @vma has: the owner's
 * anon_vmas @vma has no entry for, less @vma's entries for anon_vmas the
 * owner has none for (those are reused).  May sleep; mmap_lock held for
 * writing keeps both chains as they are.
 */
static enum vmamerge_refusal
vmamerge_chain_edit_prepare(struct vmamerge_chain_edit *ed,
			    struct vm_area_struct *vma,
			    struct vm_area_struct *owner)
{
	unsigned int n_owner = 0, missing = 0, spare;
	struct anon_vma_chain *avc;

	ed->nr_old = 0;
	ed->nr_fresh = 0;
	INIT_LIST_HEAD(&ed->unused);
	/* the arrays' bound; callers asked vmamerge_transplant_allowed() */
	if (vmamerge_transplant_allowed(vma, owner))
		return VMAMERGE_R_FAMILY;
	list_for_each_entry(avc, &owner->anon_vma_chain, same_vma) {
		n_owner++;
		missing += !vmamerge_chain_has(vma, avc->anon_vma);
	}
	list_for_each_entry(avc, &vma->anon_vma_chain, same_vma) {
		ed->slot[ed->nr_old] = vmamerge_av_reserve();
		if (!ed->slot[ed->nr_old])
			goto nomem;
		ed->old[ed->nr_old++] = avc->anon_vma;
	}
	/* @vma's entries the owner's chain has no anon_vma for */
	spare = ed->nr_old - (n_owner - missing);
	while (missing > spare + ed->nr_fresh) {
		ed->fresh[ed->nr_fresh] = kmem_cache_alloc(anon_vma_chain_cachep,
							   GFP_KERNEL);
		if (!ed->fresh[ed->nr_fresh])
			goto nomem;
		ed->nr_fresh++;
	}
	return VMAMERGE_R_NONE;
nomem:
	vmamerge_chain_edit_undo(ed);
	return VMAMERGE_R_NOMEM;
}

/* @vma's detached entry for @av, unlinked from @old, or NULL. */
static struct anon_vma_chain *vmamerge_chain_take(struct list_head *old,
						  struct anon_vma *av)
{
	struct anon_vma_chain *avc;

	list_for_each_entry(avc, old, same_vma) {
		if (avc->anon_vma == av) {
			list_del(&avc->same_vma);
			return avc;
		}
	}
	return NULL;
}

/*
 * Give @vma the chain of @owner and @owner's anon_vma, @pgoff its page
 * offset while it is out of every tree (they are keyed by it).  Both
 * roots locked for writing.
 */
static void vmamerge_chain_replace(struct vmamerge_chain_edit *ed,
				   struct vm_area_struct *vma,
				   struct vm_area_struct *owner, pgoff_t pgoff)
{
	struct anon_vma_chain *avc, *oavc, *new[VMAMERGE_CHAIN_MAX];
	struct anon_vma *from = vma->anon_vma, *to = owner->anon_vma;
	unsigned int i, n = 0;
	LIST_HEAD(old);

	list_for_each_entry(avc, &vma->anon_vma_chain, same_vma)
		anon_vma_interval_tree_remove(avc, &avc->anon_vma->rb_root);
	list_splice_init(&vma->anon_vma_chain, &old);
	/*
	 * vm_pgoff's readers: rmap walks of every tree the VMA was or will
	 * be in (both roots' rwsems held for writing), faults and everything
	 * else that walks the mm (mmap_lock and, on 6.12, the VMA lock, both
	 * held for writing).
	 */
	vma->vm_pgoff = pgoff;
	/* first the entries @vma keeps, then the others (reused or fresh) */
	list_for_each_entry(oavc, &owner->anon_vma_chain, same_vma)
		new[n++] = vmamerge_chain_take(&old, oavc->anon_vma);
	i = 0;
	list_for_each_entry(oavc, &owner->anon_vma_chain, same_vma) {
		avc = new[i];
		if (!avc && !list_empty(&old)) {
			avc = list_first_entry(&old, struct anon_vma_chain,
					       same_vma);
			list_del(&avc->same_vma);
		} else if (!avc) {
			avc = ed->fresh[--ed->nr_fresh];
			avc->vma = vma;
		}
		avc->anon_vma = oavc->anon_vma;
		new[i++] = avc;
	}
	/* linked back to front: list_add() puts each at the head */
	while (n--) {
		list_add(&new[n]->same_vma, &vma->anon_vma_chain);
		anon_vma_interval_tree_insert(new[n], &new[n]->anon_vma->rb_root);
	}
	list_splice(&old, &ed->unused);
	WRITE_ONCE(vma->anon_vma, to);
	to->num_active_vmas++;
	from->num_active_vmas--;
	for (i = 0; i < ed->nr_old; i++) {
		struct anon_vma *av = ed->old[i];

		if (RB_EMPTY_ROOT(&av->rb_root.rb_root))
			av->parent->num_children--;	/* keeps its reference */
		else
			get_anon_vma(av);
	}
}

/* After the commit: each old anon_vma's reference goes to its slot. */
static void vmamerge_chain_edit_finish(struct vmamerge_chain_edit *ed)
{
	struct anon_vma_chain *avc, *next;

	list_for_each_entry_safe(avc, next, &ed->unused, same_vma)
		kmem_cache_free(anon_vma_chain_cachep, avc);
	while (ed->nr_fresh)
		kmem_cache_free(anon_vma_chain_cachep, ed->fresh[--ed->nr_fresh]);
	while (ed->nr_old) {
		ed->nr_old--;
		vmamerge_av_unreserve(ed->slot[ed->nr_old], ed->old[ed->nr_old]);
	}
}

/*
 * vmamerge_transplant_vma - make @owner's anon_vma the anon_vma of @vma
 * and of every page it maps, @owner's chain its chain, and @pgoff its
 * page offset (renumbering its pages in the same pass; @pgoff ==
 * vma->vm_pgoff for a transplant alone).  mmap_lock held for writing;
 * @vma write-locked by the caller (6.12); vmamerge_transplant_allowed().
 * Returns the refusal, or VMAMERGE_R_NONE with the number of pages moved
 * in *@pages.
 */
enum vmamerge_refusal vmamerge_transplant_vma(struct vm_area_struct *vma,
					      struct vm_area_struct *owner,
					      pgoff_t pgoff,
					      unsigned long *pages)
{
	long delta = (long)(pgoff - vma->vm_pgoff);
	struct anon_vma *from = vma->anon_vma, *to = owner->anon_vma;
	struct vmamerge_chain_edit ed;
	struct vmamerge_rewrite rw;
	enum vmamerge_refusal r;

	*pages = 0;
	r = vmamerge_chain_edit_prepare(&ed, vma, owner);
	if (r)
		return r;
	r = vmamerge_rewrite_init(&rw, vma);
	/*
	 * Every page belongs to an anon_vma of the VMA's chain (rmap finds
	 * it there); with one entry that is the VMA's own.
	 */
	if (list_is_singular(&vma->anon_vma_chain))
		rw.only_anon_vma = from;
	rw.to_anon_vma = to;
	vmamerge_rewrite_target(&rw, delta, to);
	if (!r)
		r = vmamerge_rewrite_collect_locked(&rw,
						    vmamerge_transplant_lock,
						    vmamerge_transplant_unlock);
	if (r) {
		vmamerge_rewrite_free(&rw);
		vmamerge_chain_edit_undo(&ed);
		return r;
	}
	vmamerge_chain_replace(&ed, vma, owner, pgoff);
	vmamerge_rewrite_commit(&rw);
	if (to->root != from->root)
		up_write(&to->root->rwsem);
	anon_vma_unlock_write(from);	/* @vma's anon_vma is @to by now */
	*pages = rw.nr_pages;
	vmamerge_rewrite_free(&rw);
	vmamerge_chain_edit_finish(&ed);
	return VMAMERGE_R_NONE;
}
