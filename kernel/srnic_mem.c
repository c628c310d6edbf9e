// SPDX-License-Identifier: GPL-2.0
/*
 * srnic memory objects: the key space of MRs and MWs, lookup by key and
 * kind, references, invalidation and window bindings. The design is
 * described in srnic_mem.h.
 */
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/xarray.h>

#include "srnic.h"

/* How long destruction waits for data-path users before it warns. */
#define SRNIC_MEM_RELEASE_TIMEOUT	(10 * HZ)

/*
 * One lock class per kind: a window's lock is taken before its MR's (see
 * srnic_mem.h), which lockdep must not take for recursion.
 */
static struct lock_class_key srnic_mem_lock_class[SRNIC_MEM_MW + 1];

/* ------------------------------------------------------------ key space */

static void srnic_mem_release(struct kref *ref)
{
	struct srnic_mem *mem = container_of(ref, struct srnic_mem, ref);

	complete(&mem->released);
}

void srnic_mem_init(struct srnic_mem *mem, enum srnic_mem_kind kind,
		    struct ib_pd *pd, enum srnic_mem_state state,
		    bool wr_invalidate)
{
	spin_lock_init(&mem->lock);
	lockdep_set_class(&mem->lock, &srnic_mem_lock_class[kind]);
	seqcount_spinlock_init(&mem->seq, &mem->lock);
	kref_init(&mem->ref);
	init_completion(&mem->released);
	mem->kind = kind;
	mem->pd = pd;
	mem->state = state;
	mem->qpn = SRNIC_MEM_ANY_QPN;
	mem->wr_invalidate = wr_invalidate;
}

/**
 * srnic_mem_add() - give an initialised MR or MW its index and key
 * @sdev: the device
 * @mem: the object, complete but for @mem->index and @mem->key
 *
 * The index is reserved first and the object stored only once its key is
 * set, so the data path never finds it half made.
 *
 * Return: 0, or -ENOMEM when the key space or memory is exhausted.
 */
int srnic_mem_add(struct srnic_dev *sdev, struct srnic_mem *mem)
{
	void *old;
	u32 index;
	int err;

	err = xa_alloc_cyclic_bh(&sdev->mr_keys, &index, NULL,
				 XA_LIMIT(1, SRNIC_KEY_INDEX_MAX),
				 &sdev->mr_key_next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	mem->index = index;
	mem->key = index << SRNIC_KEY_INDEX_SHIFT | get_random_u8();
	old = xa_store_bh(&sdev->mr_keys, index, mem, GFP_KERNEL);
	if (xa_is_err(old)) {
		xa_erase_bh(&sdev->mr_keys, index);
		return xa_err(old);
	}
	return 0;
}

int srnic_mem_replace(struct srnic_dev *sdev, struct srnic_mem *old,
		      struct srnic_mem *mem)
{
	void *curr;

	lockdep_assert_held(&old->lock);
	if (old->nbound)
		return -EBUSY;
	if (WARN_ON_ONCE(old->state != SRNIC_MEM_VALID))
		return -EINVAL;
	/* unpublished: no reader yet, the store below publishes it */
	mem->index = old->index;
	mem->key = old->key;
	/*
	 * the slot is taken: replacing its entry allocates nothing; softirqs
	 * are off (the caller holds @old's lock), as @mr_keys' lock needs
	 */
	curr = xa_cmpxchg(&sdev->mr_keys, old->index, old, mem, GFP_ATOMIC);
	if (WARN_ON_ONCE(curr != old))
		return xa_is_err(curr) ? xa_err(curr) : -EINVAL;
	srnic_mem_set_state(old, SRNIC_MEM_INVALID);
	return 0;
}

/*
 * srnic_mem_del() - the reverse of srnic_mem_add(), for an object the caller
 * made INVALID: removing its index stops new lookups; then the creator's
 * reference goes and the data-path users, whose operations end with
 * srnic_mem_put(), are waited for. An object whose index went to its
 * replacement (srnic_mem_replace()) leaves the index alone.
 */
void srnic_mem_del(struct srnic_dev *sdev, struct srnic_mem *mem)
{
	xa_lock_bh(&sdev->mr_keys);
	if (xa_load(&sdev->mr_keys, mem->index) == mem)
		__xa_erase(&sdev->mr_keys, mem->index);
	xa_unlock_bh(&sdev->mr_keys);
	srnic_mem_put(mem);
	if (wait_for_completion_timeout(&mem->released,
					SRNIC_MEM_RELEASE_TIMEOUT))
		return;
	WARN_ONCE(1, "srnic: %s %#x still referenced after %d s\n",
		  mem->kind == SRNIC_MEM_MR ? "MR" : "MW", mem->key,
		  SRNIC_MEM_RELEASE_TIMEOUT / HZ);
	wait_for_completion(&mem->released);
}

/* --------------------------------------------------------------- state */

/* A window lets go of @target (may be NULL). Context: its lock held. */
static void srnic_mem_release_target(struct srnic_mem *target)
{
	if (!target)
		return;
	spin_lock(&target->lock);
	WARN_ON_ONCE(!target->nbound);
	target->nbound--;
	spin_unlock(&target->lock);
	srnic_mem_put(target);
}

void srnic_mem_set_state(struct srnic_mem *mem, enum srnic_mem_state state)
{
	struct srnic_mem *old = mem->target;

	lockdep_assert_held(&mem->lock);
	write_seqcount_begin(&mem->seq);
	mem->state = state;
	if (old) {
		mem->access = 0;
		mem->iova = 0;
		mem->length = 0;
		mem->target = NULL;
		mem->qpn = SRNIC_MEM_ANY_QPN;
	}
	write_seqcount_end(&mem->seq);
	srnic_mem_release_target(old);
}

void srnic_mem_bind(struct srnic_mem *mem, u32 key, struct srnic_mem *target,
		    u32 qpn, u64 iova, u64 length, int access)
{
	struct srnic_mem *old = mem->target;

	lockdep_assert_held(&mem->lock);
	write_seqcount_begin(&mem->seq);
	mem->state = SRNIC_MEM_VALID;
	mem->key = key;
	mem->access = access;
	mem->iova = iova;
	mem->length = length;
	mem->target = target;
	mem->qpn = qpn;
	write_seqcount_end(&mem->seq);
	srnic_mem_release_target(old);
}

int srnic_mem_invalidate(struct srnic_dev *sdev, struct ib_pd *pd, u32 key)
{
	struct srnic_mem *mem;
	int err = 0;

	rcu_read_lock();	/* keeps @mem's memory */
	mem = xa_load(&sdev->mr_keys, key >> SRNIC_KEY_INDEX_SHIFT);
	if (!mem) {
		rcu_read_unlock();
		return -EINVAL;
	}
	spin_lock_bh(&mem->lock);
	/*
	 * Only fast-reg MRs and type 2 windows (o10-37.2.26: not type 1); an
	 * MR with bound windows stays.
	 */
	if (mem->key != key || mem->pd != pd ||
	    mem->state == SRNIC_MEM_INVALID || !mem->wr_invalidate ||
	    mem->nbound)
		err = -EINVAL;
	else
		srnic_mem_set_state(mem, SRNIC_MEM_FREE);
	spin_unlock_bh(&mem->lock);
	rcu_read_unlock();
	return err;
}

/* ------------------------------------------------------ lookup and put */

void srnic_mem_put(struct srnic_mem *mem)
{
	if (mem)
		kref_put(&mem->ref, srnic_mem_release);
}

/* A reference on @mem, if it is of @kind and still live. */
static struct srnic_mem *srnic_mem_tryget(struct srnic_mem *mem,
					  enum srnic_mem_kind kind)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "key lookup outside an RCU read side");
	if (!mem || mem->kind != kind)
		return NULL;
	return kref_get_unless_zero(&mem->ref) ? mem : NULL;
}

struct srnic_mem *srnic_mem_get(struct srnic_dev *sdev, u32 key,
				enum srnic_mem_kind kind)
{
	struct srnic_mem *mem;

	rcu_read_lock();
	mem = srnic_mem_tryget(xa_load(&sdev->mr_keys,
				       key >> SRNIC_KEY_INDEX_SHIFT), kind);
	rcu_read_unlock();
	return mem;
}

/*
 * May this access go through @mem? 0, -EINVAL (key, state, PD), -EACCES or
 * -ERANGE. Context: inside a read section of @mem->seq, or @mem->lock held.
 */
static int srnic_mem_check(const struct srnic_mem *mem, const struct ib_pd *pd,
			   u32 key, u64 iova, u64 len, int access)
{
	u64 end;

	if (mem->key != key || mem->state != SRNIC_MEM_VALID || mem->pd != pd)
		return -EINVAL;
	if (access & ~mem->access)
		return -EACCES;
	/* mem->iova + mem->length does not overflow (checked at creation) */
	if (check_add_overflow(iova, len, &end) || iova < mem->iova ||
	    end - mem->iova > mem->length)
		return -ERANGE;
	return 0;
}

int srnic_mem_hold_target(struct srnic_mem *target, const struct ib_pd *pd,
			  u32 lkey, u64 iova, u64 len, int access)
{
	int err;

	spin_lock(&target->lock);
	err = srnic_mem_check(target, pd, lkey, iova, len, access);
	if (!err)
		target->nbound++;
	spin_unlock(&target->lock);
	return err ? -EINVAL : 0;
}

/* Check a referenced MR; on failure drop the reference. */
static struct srnic_mem *srnic_mem_checked(struct srnic_mem *mem,
					   struct ib_pd *pd, u32 key, u64 iova,
					   u64 len, int access)
{
	unsigned int seq;
	int err;

	do {
		seq = read_seqcount_begin(&mem->seq);
		err = srnic_mem_check(mem, pd, key, iova, len, access);
	} while (read_seqcount_retry(&mem->seq, seq));
	if (unlikely(err)) {
		srnic_mem_put(mem);
		return ERR_PTR(err);
	}
	return mem;
}

struct srnic_mem *srnic_mem_get_lkey(struct srnic_dev *sdev, struct ib_pd *pd,
				     u32 lkey, u64 iova, u64 len, int access)
{
	struct srnic_mem *mem;

	/* IBA: a zero-length access may carry any key (see srnic_mem.h). */
	if (!len)
		return NULL;
	mem = srnic_mem_get(sdev, lkey, SRNIC_MEM_MR);
	if (unlikely(!mem))
		return ERR_PTR(-EINVAL);
	return srnic_mem_checked(mem, pd, lkey, iova, len, access);
}

/*
 * The MR behind window @win, for a remote access. Lock-free: the checks run
 * on a snapshot; the MR reference is taken, then the snapshot confirmed
 * unchanged, so the window was bound to that MR when the reference was
 * taken (a binding holds one, so it is never the last).
 *
 * Context: RCU read side (keeps @win's memory).
 */
static struct srnic_mem *srnic_mem_get_target(struct srnic_mem *win,
					      struct ib_pd *pd, u32 qpn,
					      u32 rkey, u64 iova, u64 len,
					      int access)
{
	struct srnic_mem *mr;
	unsigned int seq;
	int err;

	for (;;) {
		do {
			seq = read_seqcount_begin(&win->seq);
			mr = win->target;
			if (!mr)
				err = -EINVAL;	/* unbound, FREE or INVALID */
			else
				err = srnic_mem_check(win, pd, rkey, iova, len,
						      access);
			if (!err && win->qpn != SRNIC_MEM_ANY_QPN &&
			    win->qpn != qpn)
				err = -EINVAL;
		} while (read_seqcount_retry(&win->seq, seq));
		if (err)
			return ERR_PTR(err);
		if (kref_get_unless_zero(&mr->ref)) {
			if (!read_seqcount_retry(&win->seq, seq))
				return mr;
			srnic_mem_put(mr);
		} else if (!read_seqcount_retry(&win->seq, seq)) {
			/* Cannot happen: the binding holds a reference. */
			WARN_ON_ONCE(1);
			return ERR_PTR(-EINVAL);
		}
		/* Rebound or invalidated meanwhile: look again. */
	}
}

struct srnic_mem *srnic_mem_get_rkey(struct srnic_dev *sdev, struct ib_pd *pd,
				     u32 qpn, u32 rkey, u64 iova, u64 len,
				     int access)
{
	struct srnic_mem *mem;

	if (!len)
		return NULL;
	rcu_read_lock();
	mem = xa_load(&sdev->mr_keys, rkey >> SRNIC_KEY_INDEX_SHIFT);
	if (mem && mem->kind == SRNIC_MEM_MW) {
		mem = srnic_mem_get_target(mem, pd, qpn, rkey, iova, len,
					   access);
		rcu_read_unlock();
		return mem;
	}
	mem = srnic_mem_tryget(mem, SRNIC_MEM_MR);
	rcu_read_unlock();
	if (unlikely(!mem))
		return ERR_PTR(-EINVAL);
	return srnic_mem_checked(mem, pd, rkey, iova, len, access);
}

/* -------------------------------------------------------- per device */

void srnic_mem_dev_init(struct srnic_dev *sdev)
{
	/* the index must fit the 24 bits above the key byte */
	BUILD_BUG_ON(SRNIC_KEY_INDEX_MAX >> (32 - SRNIC_KEY_INDEX_SHIFT));
	xa_init_flags(&sdev->mr_keys, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	sdev->mr_key_next = 1;
	atomic_set(&sdev->mr_count, 0);
	atomic_set(&sdev->mw_count, 0);
}

void srnic_mem_dev_fini(struct srnic_dev *sdev)
{
	/* ib_core destroyed every MR and MW before letting the device go. */
	WARN_ON(!xa_empty(&sdev->mr_keys));
	xa_destroy(&sdev->mr_keys);
}
