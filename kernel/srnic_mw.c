// SPDX-License-Identifier: GPL-2.0
/*
 * srnic memory windows, type 1 and type 2 (2B: bound to a QP).
 *
 * Both are bound by a work request (IB_WR_BIND_MW: rdma-core turns
 * ibv_bind_mw() of a type 1 window into one), executed by the requester
 * through srnic_mw_bind(). A type 1 window is VALID from allocation, bound or
 * not, and is never invalidated by a work request; a type 2 window goes FREE
 * -> VALID by a bind and back by local or remote invalidation.
 *
 * Windows share the key space of MRs (srnic_mr.h). Their state lives in a
 * struct srnic_win, freed after an RCU grace period, so that the data path
 * reads it without locks or references; see srnic_mw_get_mr().
 */
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "srnic.h"

/*
 * Install a new binding (or none: @mr NULL, @length 0) and return the MR
 * the window was bound to, whose reference passes to the caller.
 */
static struct srnic_mr *srnic_win_set(struct srnic_win *win,
				      enum srnic_mem_state state, u32 key,
				      struct srnic_mr *mr, u32 qpn, u64 addr,
				      u64 length, int access)
{
	struct srnic_mr *old = win->mr;

	lockdep_assert_held(&win->mem.lock);
	write_seqcount_begin(&win->mem.seq);
	win->mem.state = state;
	win->mem.key = key;
	win->mem.access = access;
	win->mem.iova = addr;
	win->mem.length = length;
	win->mr = mr;
	win->qpn = qpn;
	write_seqcount_end(&win->mem.seq);
	return old;
}

/* A window let go of @mr (may be NULL). Context: its lock held, BHs off. */
static void srnic_win_release_mr(struct srnic_mr *mr)
{
	if (!mr)
		return;
	spin_lock(&mr->mem.lock);
	WARN_ON_ONCE(!mr->num_mw);
	mr->num_mw--;
	spin_unlock(&mr->mem.lock);
	srnic_mr_put(mr);
}

/* Leave @state with no binding. */
static void srnic_win_unbind(struct srnic_win *win, enum srnic_mem_state state)
{
	srnic_win_release_mr(srnic_win_set(win, state, win->mem.key, NULL, 0,
					   0, 0, 0));
}

/* The window's side of a bind. */
static int srnic_win_check_bind(const struct srnic_win *win,
				const struct ib_pd *pd, u32 mw_rkey, u64 length)
{
	lockdep_assert_held(&win->mem.lock);
	if (win->mem.key != mw_rkey || win->mem.state == SRNIC_MEM_INVALID)
		return -EINVAL;
	/* C10-72: the QP's PD must be the window's (type 1 too, here). */
	if (win->mem.pd != pd)
		return -EINVAL;
	if (win->type == IB_MW_TYPE_2) {
		/* o10-37.2.30: a type 2 window is bound from Free only. */
		if (win->mem.state != SRNIC_MEM_FREE)
			return -EINVAL;
		/* o10-37.2.40: and not to nothing. */
		if (!length)
			return -EINVAL;
	}
	return 0;
}

/*
 * The MR's side of a bind: on success the MR counts one more window.
 * Context: the window's lock held (BHs off).
 */
static int srnic_mr_bind_mw(struct srnic_mr *mr, const struct ib_pd *pd,
			    u32 lkey, u64 addr, u64 length, int access)
{
	const struct srnic_mem *m = &mr->mem;
	int err = 0;
	u64 end;

	spin_lock(&mr->mem.lock);
	if (m->key != lkey || m->state != SRNIC_MEM_VALID || m->pd != pd)
		err = -EINVAL;
	/* C10-73: the MR must allow binding. */
	else if (!(m->access & IB_ACCESS_MW_BIND))
		err = -EINVAL;
	/* C10-74: a writable window needs a locally writable MR. */
	else if ((access & (IB_ACCESS_REMOTE_WRITE |
			    IB_ACCESS_REMOTE_ATOMIC)) &&
		 !(m->access & IB_ACCESS_LOCAL_WRITE))
		err = -EINVAL;
	/* C10-75: the window lies within the MR. */
	else if (check_add_overflow(addr, length, &end) || addr < m->iova ||
		 end - m->iova > m->length)
		err = -EINVAL;
	else
		mr->num_mw++;
	spin_unlock(&mr->mem.lock);
	return err;
}

int srnic_mw_bind(struct srnic_dev *sdev, struct ib_pd *pd, u32 qpn,
		  u32 mw_rkey, u32 new_rkey, u32 mr_lkey, u64 addr, u64 length,
		  int access)
{
	struct srnic_mr *mr = NULL;
	struct srnic_mem *mem;
	struct srnic_win *win;
	int err;

	/* The consumer chooses the key byte, not the index. */
	if ((new_rkey ^ mw_rkey) >> SRNIC_KEY_INDEX_SHIFT)
		return -EINVAL;
	/*
	 * Remote rights only; zero-based windows (o10-36.2.2 forbids them for
	 * type 1) are refused for both types: remote addresses are MR iovas.
	 * Local write means nothing for a window, but consumers (rdma-core's
	 * tests among them) pass it along with the remote rights, and rdma_rxe
	 * accepts it: ignore it.
	 */
	access &= ~IB_ACCESS_LOCAL_WRITE;
	if (access & ~SRNIC_MW_ACCESS)
		return -EINVAL;
	if (length) {
		mr = srnic_mr_lookup(sdev, mr_lkey);
		if (!mr)
			return -EINVAL;
	}

	rcu_read_lock();
	mem = xa_load(&sdev->mr_keys, mw_rkey >> SRNIC_KEY_INDEX_SHIFT);
	if (!mem || mem->kind != SRNIC_MEM_MW) {
		err = -EINVAL;
		goto out_unlock_rcu;
	}
	win = container_of(mem, struct srnic_win, mem);
	spin_lock_bh(&win->mem.lock);
	err = srnic_win_check_bind(win, pd, mw_rkey, length);
	if (!err && mr)
		err = srnic_mr_bind_mw(mr, pd, mr_lkey, addr, length, access);
	if (!err) {
		struct srnic_mr *old;

		/* Our lookup reference on @mr becomes the window's. */
		old = srnic_win_set(win, SRNIC_MEM_VALID, new_rkey, mr, qpn,
				    addr, length, access);
		srnic_win_release_mr(old);
		mr = NULL;
	}
	spin_unlock_bh(&win->mem.lock);
out_unlock_rcu:
	rcu_read_unlock();
	srnic_mr_put(mr);
	return err;
}

/**
 * srnic_mw_invalidate() - invalidate a type 2 window
 * @mem: the window's srnic_mem
 * @pd: the QP's PD
 * @key: the key presented
 *
 * Context: RCU read side (keeps the window's memory).
 * Return: 0 (also for a window already FREE) or -EINVAL.
 */
int srnic_mw_invalidate(struct srnic_mem *mem, struct ib_pd *pd, u32 key)
{
	struct srnic_win *win = container_of(mem, struct srnic_win, mem);
	int err = 0;

	spin_lock_bh(&mem->lock);
	if (mem->key != key || mem->pd != pd ||
	    mem->state == SRNIC_MEM_INVALID)
		err = -EINVAL;
	/* o10-37.2.26: type 1 windows are not invalidated by work requests. */
	else if (win->type == IB_MW_TYPE_1)
		err = -EINVAL;
	else
		srnic_win_unbind(win, SRNIC_MEM_FREE);
	spin_unlock_bh(&mem->lock);
	return err;
}

/**
 * srnic_mw_get_mr() - the MR behind a window, for a remote access
 * @mem: the window's srnic_mem
 * @pd: the QP's PD
 * @qpn: the QP's number
 * @rkey: the key presented
 * @iova: first byte
 * @len: bytes, not 0
 * @access: IB_ACCESS_REMOTE_* needed
 *
 * Lock-free: the checks run on a snapshot; the MR reference is taken, then
 * the snapshot confirmed unchanged, so the window was bound to that MR when
 * the reference was taken (a binding holds one, so it is never the last).
 *
 * Context: RCU read side.
 * Return: the referenced MR, or ERR_PTR(-EINVAL/-EACCES/-ERANGE).
 */
struct srnic_mr *srnic_mw_get_mr(struct srnic_mem *mem, struct ib_pd *pd,
				 u32 qpn, u32 rkey, u64 iova, u64 len,
				 int access)
{
	struct srnic_win *win = container_of(mem, struct srnic_win, mem);
	struct srnic_mr *mr;
	unsigned int seq;
	int err;

	for (;;) {
		do {
			seq = read_seqcount_begin(&mem->seq);
			mr = win->mr;
			if (!mr)
				err = -EINVAL;	/* unbound, FREE or INVALID */
			else
				err = srnic_mem_check(mem, pd, rkey, iova, len,
						      access);
			if (!err && win->type == IB_MW_TYPE_2 &&
			    win->qpn != qpn)
				err = -EINVAL;
		} while (read_seqcount_retry(&mem->seq, seq));
		if (err)
			return ERR_PTR(err);
		if (kref_get_unless_zero(&mr->ref)) {
			if (!read_seqcount_retry(&mem->seq, seq))
				return mr;
			srnic_mr_put(mr);
		} else if (!read_seqcount_retry(&mem->seq, seq)) {
			/* Cannot happen: the binding holds a reference. */
			WARN_ON_ONCE(1);
			return ERR_PTR(-EINVAL);
		}
		/* Rebound or invalidated meanwhile: look again. */
	}
}

static int srnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_srnic_dev(ibmw->device);
	struct srnic_mw *mw = to_srnic_mw(ibmw);
	struct srnic_win *win;
	int err = -ENOMEM;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (!atomic_add_unless(&sdev->mw_count, 1, SRNIC_MAX_MW))
		return -ENOMEM;
	win = kzalloc(sizeof(*win), GFP_KERNEL);
	if (!win)
		goto err_uncount;
	spin_lock_init(&win->mem.lock);
	seqcount_spinlock_init(&win->mem.seq, &win->mem.lock);
	win->mem.kind = SRNIC_MEM_MW;
	win->mem.pd = ibmw->pd;
	win->type = ibmw->type;
	win->mem.state = win->type == IB_MW_TYPE_1 ? SRNIC_MEM_VALID :
						     SRNIC_MEM_FREE;
	err = srnic_mem_add(sdev, &win->mem);
	if (err)
		goto err_free_win;
	mw->win = win;
	ibmw->rkey = win->mem.key;
	return 0;

err_free_win:
	kfree(win);
err_uncount:
	atomic_dec(&sdev->mw_count);
	return err;
}

/*
 * Teardown. After the index is gone and the window INVALID, nothing new
 * reaches it; lookups already in flight hold no window reference (they
 * only read it under RCU, which kfree_rcu() waits for) and either got an
 * MR reference of their own or fail.
 */
static int srnic_dealloc_mw(struct ib_mw *ibmw)
{
	struct srnic_dev *sdev = to_srnic_dev(ibmw->device);
	struct srnic_win *win = to_srnic_mw(ibmw)->win;

	xa_erase(&sdev->mr_keys, win->mem.index);
	spin_lock_bh(&win->mem.lock);
	srnic_win_unbind(win, SRNIC_MEM_INVALID);
	spin_unlock_bh(&win->mem.lock);
	kfree_rcu(win, mem.rcu);
	atomic_dec(&sdev->mw_count);
	return 0;
}

const struct ib_device_ops srnic_mw_ops = {
	.alloc_mw = srnic_alloc_mw,
	.dealloc_mw = srnic_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, srnic_mw, ibmw),
};
