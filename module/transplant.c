// SPDX-License-Identifier: GPL-2.0
/*
 * Transplanting: move a VMA and its pages from its own anon_vma to the
 * anon_vma of a neighbour it could otherwise merge with (thesis §2.8), so
 * that the stock merge logic, which wants one anon_vma on both sides,
 * merges them.  Which VMA joins which is decided at the merge decision
 * point (transplant_merge.c); this file does the moving.
 *
 * Only the simplest family shape is taken on, both sides without ancestors:
 *  - the VMA's chain has one entry, for its own anon_vma, which is a root
 *    - so no page of the VMA belongs to another anon_vma.  The root may
 *    have children (the process forked since it faulted): their VMAs sit
 *    in its tree, the VMA leaves it as unlink_anon_vmas() leaves it when
 *    such a VMA is unmapped (its chain entry out of the tree, the root's
 *    num_active_vmas one less, the root itself kept for the children), and
 *    every page that goes with the VMA is exclusive to it - a page still
 *    COW-shared with a child is refused_shared - so no child's mapping
 *    needed the root for it;
 *  - the neighbour's chain has one entry, for its own anon_vma, a root:
 *    after the transplant the VMA's chain equals the neighbour's, which
 *    is what VMAs sharing an anon_vma look like (vma_prepare() re-keys
 *    every entry under one root's lock);
 *  - every page passes the sharing check and belongs to the VMA's
 *    anon_vma (page_rewrite.c).
 * A VMA with ancestors (either side) keeps the stock behaviour: refused
 * with VMAMERGE_R_FAMILY, decided from the family's shape alone, in O(1),
 * before any page is looked at - the pages may all be exclusive by now
 * (the parent unmapped its copy or exited) or still COW-shared.  What is
 * counted is decided on the refusal path by vmamerge_family_refusal()
 * below: refused_shared if a page that would move is mapped or referenced
 * twice (as everywhere: sharing.c, page_rewrite.c), refused_family if
 * every one is exclusive.  What a forked family would need, and why none
 * of it is done:
 *  - a VMA with ancestors (chain of several entries, anon_vma not a root)
 *    has pages whose anon_vma is an ancestor's (faulted before the fork,
 *    never written since), and one chain entry per ancestor, each keeping
 *    it findable from that ancestor's tree; moving one entry would strand
 *    the others, and dropping them would need the ancestors'
 *    num_children/num_active_vmas and references unwound exactly as
 *    unlink_anon_vmas() does, level by level;
 *  - an owner with ancestors would need the mover to get a chain entry
 *    for every anon_vma of the owner's chain (anon_vma_clone()), not the
 *    one entry moved here.
 * None of it is impossible; each is a structure the kernel builds only in
 * fork() and unwinds only in unlink_anon_vmas(), and the verifier would
 * first have to check such multi-level families (issue 14).  Renumbering
 * needs none of it (renumber.c re-keys every chain entry; each page is
 * proved exclusive), so a forked VMA is renumbered where a move needs
 * only that.
 *
 * Locks: mmap_lock (write) and the VMA's write lock (caller), the VMA's
 * anon_vma rwsem (write), then the neighbour's root rwsem by trylock only:
 * the kernel never holds two roots but in mm_take_all_locks(), which
 * takes them in its own order.  Under both, the walker collects the
 * folios (locked), the chain entry moves from one interval tree to the
 * other, vma->anon_vma and the active-VMA counts change, and every folio's
 * mapping is rewritten.  Nothing can look at a half-done state: rmap walks
 * of either tree wait for the rwsems, everything else that reads a
 * folio's anon_vma holds its folio lock or our mmap_lock.
 *
 * The old anon_vma: when its tree is now empty it is released as
 * unlink_anon_vmas() would (its self-parent link, then its reference) -
 * but only after an RCU grace period.  A lockless rmap walker
 * (folio_lock_anon_vma_read()) may have read the old mapping just before
 * the rewrite; it relies on "a mapped folio's anon_vma is not freed" and
 * rechecks only folio_mapped(), which stays true here.  After a grace
 * period every such reader has either taken a reference or the rwsem,
 * which anon_vma_free() waits for.  An old anon_vma that is not empty -
 * other VMAs of the process share it, or the children of a fork sit in
 * its tree - is freed later by whoever unmaps the last of them, which may
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

/* A chain of one entry, for the VMA's own anon_vma, a root. */
static bool vmamerge_unforked(struct vm_area_struct *vma)
{
	struct anon_vma *av = vma->anon_vma;

	return av && av->root == av &&
	       list_is_singular(&vma->anon_vma_chain) &&
	       list_first_entry(&vma->anon_vma_chain, struct anon_vma_chain,
				same_vma)->anon_vma == av;
}

/*
 * vmamerge_transplant_allowed - may @mover's pages join the anon_vma of
 * @owner?  Both families must have the shape described at the top of this
 * file; otherwise VMAMERGE_R_FAMILY.  A chain changes only under our
 * mmap_lock (held for writing); children of either root are allowed.
 */
enum vmamerge_refusal
vmamerge_transplant_allowed(struct vm_area_struct *mover,
			    struct vm_area_struct *owner)
{
	if (!vmamerge_unforked(mover) || !vmamerge_unforked(owner))
		return VMAMERGE_R_FAMILY;
	return VMAMERGE_R_NONE;
}

enum vmamerge_refusal vmamerge_adopt_allowed(struct vm_area_struct *owner)
{
	return vmamerge_unforked(owner) ? VMAMERGE_R_NONE : VMAMERGE_R_FAMILY;
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
 * A transient refusal (a busy folio, a migration entry) or no memory for
 * the folio list proves nothing about sharing: counted as the family.
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
	if (!r || r == VMAMERGE_R_NOMEM || vmamerge_refusal_transient(r))
		return VMAMERGE_R_FAMILY;
	return r;
}

/*
 * vmamerge_adopt_anon_vma - give @vma, which has never had an anon_vma
 * (no anonymous page), the anon_vma of @owner, as the stock merge code
 * does for the VMA that grows over a faulted one (dup_anon_vma()): a
 * chain entry for each of @owner's.  No page changes owner, so @owner's
 * family may have forked children; @owner itself must be unforked, so
 * that @vma's chain looks like a sibling's.  mmap_lock held for writing.
 */
enum vmamerge_refusal vmamerge_adopt_anon_vma(struct vm_area_struct *vma,
					      struct vm_area_struct *owner)
{
	/* callers offer only never-faulted VMAs; anything else is not ours */
	if (vma->anon_vma)
		return VMAMERGE_R_SPECIAL;
	if (vmamerge_adopt_allowed(owner))
		return VMAMERGE_R_FAMILY;
	vmamerge_rg_vma_start_write(vma);
	vma->anon_vma = owner->anon_vma;
	/* on failure, anon_vma_clone() resets vma->anon_vma and the chain */
	if (anon_vma_clone(vma, owner))
		return VMAMERGE_R_NOMEM;
	return VMAMERGE_R_NONE;
}

/*
 * Transplanting collects under both anon_vma locks, the second one by
 * trylock (a held one is a transient refusal).
 */
static enum vmamerge_refusal
vmamerge_transplant_lock(struct vmamerge_rewrite *rw)
{
	struct anon_vma *from = rw->vma->anon_vma, *to = rw->to_anon_vma;

	anon_vma_lock_write(from);
	if (!down_write_trylock(&to->rwsem)) {
		anon_vma_unlock_write(from);
		return VMAMERGE_R_BUSY;
	}
	return VMAMERGE_R_NONE;
}

static void vmamerge_transplant_unlock(struct vmamerge_rewrite *rw)
{
	up_write(&rw->to_anon_vma->rwsem);
	anon_vma_unlock_write(rw->vma->anon_vma);
}

/*
 * Move @vma's one chain entry from @from's tree to @to's and make @to its
 * anon_vma; its vm_pgoff becomes @pgoff while the entry is out of every
 * tree (the trees are keyed by it).  Both locked.  Returns whether
 * @from's tree is now empty, in which case its self-parent link is
 * dropped here as unlink_anon_vmas() does, and its reference must be put
 * by the caller.  @from's tree is not empty while a child of @from has a
 * VMA (a child VMA's chain holds every ancestor, so it sits in @from's
 * tree too; a child whose VMAs are all gone no longer counts in
 * num_children): then @from stays, its counts as unlink_anon_vmas()
 * leaves them for an unmapped VMA.
 */
static bool vmamerge_move_chain(struct vm_area_struct *vma,
				struct anon_vma *from, struct anon_vma *to,
				pgoff_t pgoff)
{
	struct anon_vma_chain *avc = list_first_entry(&vma->anon_vma_chain,
						      struct anon_vma_chain,
						      same_vma);

	anon_vma_interval_tree_remove(avc, &from->rb_root);
	/*
	 * vm_pgoff's readers: rmap walks of either tree (we hold both
	 * rwsems for writing), faults and everything else that walks the
	 * mm (mmap_lock and, on 6.12, the VMA lock, both held for writing).
	 */
	vma->vm_pgoff = pgoff;
	avc->anon_vma = to;
	anon_vma_interval_tree_insert(avc, &to->rb_root);
	WRITE_ONCE(vma->anon_vma, to);
	to->num_active_vmas++;
	from->num_active_vmas--;
	if (!RB_EMPTY_ROOT(&from->rb_root.rb_root))
		return false;
	from->num_children--;
	return true;
}

/*
 * vmamerge_transplant_vma - make @to the anon_vma of @vma and of every
 * page it maps, and @pgoff its page offset (renumbering its pages in the
 * same pass; @pgoff == vma->vm_pgoff for a transplant alone).
 * mmap_lock held for writing; @vma write-locked by the caller (6.12).
 * Returns the refusal, or VMAMERGE_R_NONE with the number of pages moved
 * in *@pages.
 */
enum vmamerge_refusal vmamerge_transplant_vma(struct vm_area_struct *vma,
					      struct anon_vma *to,
					      pgoff_t pgoff,
					      unsigned long *pages)
{
	long delta = (long)(pgoff - vma->vm_pgoff);
	struct anon_vma *from = vma->anon_vma;
	struct vmamerge_av_batch *batch;
	struct vmamerge_rewrite rw;
	enum vmamerge_refusal r;
	bool emptied;

	*pages = 0;
	/* the slot for @from's put: refused here without one */
	batch = vmamerge_av_reserve();
	if (!batch)
		return VMAMERGE_R_NOMEM;
	r = vmamerge_rewrite_init(&rw, vma);
	rw.only_anon_vma = from;
	rw.to_anon_vma = to;
	if (!r)
		r = vmamerge_rewrite_collect_locked(&rw,
						    vmamerge_transplant_lock,
						    vmamerge_transplant_unlock);
	if (r) {
		vmamerge_rewrite_free(&rw);
		vmamerge_av_unreserve(batch, NULL);
		return r;
	}
	emptied = vmamerge_move_chain(vma, from, to, pgoff);
	/* not emptied: a reference to put after the grace period (top of file) */
	if (!emptied)
		get_anon_vma(from);
	vmamerge_rewrite_commit(&rw, delta, to);
	up_write(&to->rwsem);
	anon_vma_unlock_write(from);	/* @vma's anon_vma is @to by now */
	*pages = rw.nr_pages;
	vmamerge_rewrite_free(&rw);
	/* its reference (emptied) or ours is put after a grace period */
	vmamerge_av_unreserve(batch, from);
	return VMAMERGE_R_NONE;
}
