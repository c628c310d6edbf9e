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
 * A window is a memory object of kind SRNIC_MEM_MW (srnic_mem.h): the key
 * space, remote lookups through a window's rkey and invalidation are
 * srnic_mem.c's, which finds the MR a window is bound to. What is here: the
 * verbs and IBA's rules of a bind. The window's state lives in a struct
 * srnic_win, freed after an RCU grace period, so that the data path reads
 * it without locks.
 */
#include <linux/slab.h>

#include "srnic.h"

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
static int srnic_mw_check_mr(struct srnic_mem *m, const struct ib_pd *pd,
			     u32 lkey, u64 addr, u64 length, int access)
{
	/* C10-73: the MR must allow binding. */
	int need = IB_ACCESS_MW_BIND;

	/* C10-74: a writable window needs a locally writable MR. */
	if (access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC))
		need |= IB_ACCESS_LOCAL_WRITE;
	/* C10-75: the window lies within the MR (checked there too). */
	return srnic_mem_hold_target(m, pd, lkey, addr, length, need);
}

int srnic_mw_bind(struct srnic_dev *sdev, struct ib_pd *pd, u32 qpn,
		  u32 mw_rkey, u32 new_rkey, u32 mr_lkey, u64 addr, u64 length,
		  int access)
{
	struct srnic_mem *mr = NULL;
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
		mr = srnic_mem_get(sdev, mr_lkey, SRNIC_MEM_MR);
		if (!mr)
			return -EINVAL;
	}

	mem = srnic_mem_get(sdev, mw_rkey, SRNIC_MEM_MW);
	if (!mem) {
		err = -EINVAL;
		goto out_put_mr;
	}
	win = container_of(mem, struct srnic_win, mem);
	spin_lock_bh(&mem->lock);
	err = srnic_win_check_bind(win, pd, mw_rkey, length);
	if (!err && mr)
		err = srnic_mw_check_mr(mr, pd, mr_lkey, addr, length, access);
	if (!err) {
		/* Our lookup reference on @mr becomes the window's. */
		srnic_mem_bind(mem, new_rkey, mr,
			       win->type == IB_MW_TYPE_2 ? qpn :
							   SRNIC_MEM_ANY_QPN,
			       addr, length, access);
		mr = NULL;
	}
	spin_unlock_bh(&mem->lock);
	srnic_mem_put(mem);
out_put_mr:
	srnic_mem_put(mr);
	return err;
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
	win->type = ibmw->type;
	/* Type 1: VALID from allocation, and never invalidated by a WR. */
	srnic_mem_init(&win->mem, SRNIC_MEM_MW, ibmw->pd,
		       win->type == IB_MW_TYPE_1 ? SRNIC_MEM_VALID :
						   SRNIC_MEM_FREE,
		       win->type == IB_MW_TYPE_2);
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
 * Teardown. Once the window is INVALID and its index gone, nothing new
 * reaches it; remote lookups already in flight hold no window reference
 * (they only read it under RCU, which kfree_rcu() waits for) and either got
 * an MR reference of their own or fail; a bind in flight holds one, which
 * srnic_mem_del() waits for.
 */
static int srnic_dealloc_mw(struct ib_mw *ibmw)
{
	struct srnic_dev *sdev = to_srnic_dev(ibmw->device);
	struct srnic_win *win = to_srnic_mw(ibmw)->win;

	spin_lock_bh(&win->mem.lock);
	srnic_mem_set_state(&win->mem, SRNIC_MEM_INVALID);
	spin_unlock_bh(&win->mem.lock);
	srnic_mem_del(sdev, &win->mem);
	kfree_rcu(win, mem.rcu);
	atomic_dec(&sdev->mw_count);
	return 0;
}

const struct ib_device_ops srnic_mw_ops = {
	.alloc_mw = srnic_alloc_mw,
	.dealloc_mw = srnic_dealloc_mw,

	INIT_RDMA_OBJ_SIZE(ib_mw, srnic_mw, ibmw),
};
