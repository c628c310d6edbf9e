// SPDX-License-Identifier: GPL-2.0
/*
 * srnic shared receive queues: the SRQ verbs, srnic_srq_pop() for the
 * responder, and the receive WQE copy/build helpers QP receive queues use
 * too.
 *
 * Lifetime: ib_core counts the QPs attached to an SRQ (ib_srq.usecnt) and
 * refuses to destroy it while any is left, and a QP's responder work ends
 * before its destroy returns, so srnic_srq_pop() never races with
 * srnic_destroy_srq().
 */
#include <linux/overflow.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "srnic.h"

/**
 * srnic_srq_wqe_size() - ring element size of a receive queue
 * @max_sge: scatter entries per WQE
 *
 * Return: sizeof(struct rxe_recv_wqe) plus @max_sge struct rxe_sge.
 */
u32 srnic_srq_wqe_size(u32 max_sge)
{
	return struct_size((struct rxe_recv_wqe *)NULL, dma.sge, max_sge);
}

/**
 * srnic_srq_wqe_copy() - copy a receive WQE out of a shared ring, validated
 * @src_in_ring: the WQE in the ring; the producer may rewrite it meanwhile,
 *	so each field is read exactly once and only the copy is used
 * @max_sge: scatter entries the ring's slots hold
 * @out: the copy; @out->wr_id is valid even on error, for the completion
 *
 * The dma.length/resid/cur_sge/sge_offset the producer wrote are ignored:
 * the length is recomputed from the scatter list.
 *
 * Context: any.
 * Return: 0, or -EINVAL if num_sge exceeds @max_sge or the lengths
 * overflow 32 bits (the caller completes the WQE in error).
 */
int srnic_srq_wqe_copy(const struct rxe_recv_wqe *src_in_ring, u32 max_sge,
		       struct srnic_recv_wqe_copy *out)
{
	const struct rxe_sge *sge = src_in_ring->dma.sge;
	u32 num_sge, total = 0, i;

	out->wr_id = READ_ONCE(src_in_ring->wr_id);
	out->num_sge = 0;
	out->length = 0;
	num_sge = READ_ONCE(src_in_ring->dma.num_sge);
	if (unlikely(num_sge > min_t(u32, max_sge, SRNIC_MAX_SGE)))
		return -EINVAL;

	for (i = 0; i < num_sge; i++) {
		out->sge[i].addr = READ_ONCE(sge[i].addr);
		out->sge[i].length = READ_ONCE(sge[i].length);
		out->sge[i].lkey = READ_ONCE(sge[i].lkey);
		if (unlikely(check_add_overflow(total, out->sge[i].length,
						&total)))
			return -EINVAL;
	}
	out->num_sge = num_sge;
	out->length = total;
	return 0;
}

/**
 * srnic_srq_wqe_build() - write a kernel ULP's receive WR into a ring slot
 * @dst: the slot (kernel ring)
 * @wr: the work request
 * @max_sge: scatter entries the slot holds
 *
 * Writes the slot only if @wr is valid, in the layout rdma-core writes.
 *
 * Return: 0, or -EINVAL (too many entries, or lengths overflow).
 */
int srnic_srq_wqe_build(struct rxe_recv_wqe *dst, const struct ib_recv_wr *wr,
			u32 max_sge)
{
	u32 total = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		if (check_add_overflow(total, wr->sg_list[i].length, &total))
			return -EINVAL;

	memset(dst, 0, sizeof(*dst));
	dst->wr_id = wr->wr_id;
	dst->dma.length = total;
	dst->dma.resid = total;
	dst->dma.num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		dst->dma.sge[i].addr = wr->sg_list[i].addr;
		dst->dma.sge[i].length = wr->sg_list[i].length;
		dst->dma.sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

static void srnic_srq_limit_event(struct srnic_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/* Has the count dropped below the armed limit? If so, disarm. */
static bool srnic_srq_limit_reached_locked(struct srnic_srq *srq)
{
	lockdep_assert_held(&srq->lock);

	if (!srq->limit || srnic_queue_count(&srq->rq) >= srq->limit)
		return false;
	srq->limit = 0;
	return true;
}

/**
 * srnic_srq_pop() - take the next receive WQE of an SRQ
 * @srq: the SRQ
 * @out: the validated copy (@out->wr_id also set when -EINVAL)
 *
 * The WQE is consumed even when invalid, so that one bad WQE cannot wedge
 * the SRQ. Dispatches IB_EVENT_SRQ_LIMIT_REACHED, once per arming, when the
 * count drops below the armed limit.
 *
 * Context: softirq or process context (the lock is irqsave).
 * Return: 0; -EAGAIN if the SRQ is empty (RNR); -EINVAL for an invalid WQE
 * (complete it in error); -EIO if the user corrupted the ring's producer
 * index (nothing consumed).
 */
int srnic_srq_pop(struct srnic_srq *srq, struct srnic_recv_wqe_copy *out)
{
	struct srnic_queue *q = &srq->rq;
	unsigned long flags;
	bool limit = false;
	int err;

	spin_lock_irqsave(&srq->lock, flags);
	if (srnic_queue_empty(q)) {
		err = srnic_queue_corrupt(q) ? -EIO : -EAGAIN;
		goto out_unlock;
	}
	err = srnic_srq_wqe_copy(srnic_queue_consumer_addr(q), srq->max_sge,
				 out);
	srnic_queue_advance_consumer(q);
	limit = srnic_srq_limit_reached_locked(srq);
out_unlock:
	spin_unlock_irqrestore(&srq->lock, flags);

	if (limit)
		srnic_srq_limit_event(srq);
	return err;
}

static int srnic_srq_check_max_wr(struct ib_device *ibdev, u32 max_wr)
{
	if (!max_wr || max_wr > SRNIC_MAX_SRQ_WR) {
		ibdev_dbg(ibdev, "SRQ max_wr %u not in 1..%u\n", max_wr,
			  SRNIC_MAX_SRQ_WR);
		return -EINVAL;
	}
	return 0;
}

static int srnic_srq_check_init(struct ib_device *ibdev,
				const struct ib_srq_init_attr *init)
{
	/* XRC SRQs: native mode, which alone has XRC domains */
	if (init->srq_type != IB_SRQT_BASIC &&
	    (init->srq_type != IB_SRQT_XRC ||
	     to_srnic_dev(ibdev)->mode != SRNIC_MODE_NATIVE ||
	     !init->ext.xrc.xrcd || !init->ext.cq))
		return -EOPNOTSUPP;
	if (init->attr.max_sge > SRNIC_MAX_SGE) {
		ibdev_dbg(ibdev, "SRQ max_sge %u > %u\n", init->attr.max_sge,
			  SRNIC_MAX_SGE);
		return -EINVAL;
	}
	return srnic_srq_check_max_wr(ibdev, init->attr.max_wr);
}

/*
 * Make a complete SRQ findable: by number, and an XRC SRQ by the receive
 * path too (XRCETH), which ib_uverbs answers with ext.xrc.srq_num.
 */
static int srnic_srq_publish(struct srnic_dev *sdev, struct srnic_srq *srq,
			     struct ib_srq_init_attr *init)
{
	int err;

	srq->is_xrc = init->srq_type == IB_SRQT_XRC;
	if (srq->is_xrc) {
		srq->ibsrq.ext.xrc.srq_num = srq->srq_num;
		err = xa_err(xa_store(&sdev->xsrq_xa, srq->srq_num, srq,
				      GFP_KERNEL));
		if (err)
			return err;
	}
	err = xa_err(xa_store(&sdev->srq_xa, srq->srq_num, srq, GFP_KERNEL));
	if (err && srq->is_xrc)
		xa_erase(&sdev->xsrq_xa, srq->srq_num);
	return err;
}

/**
 * srnic_srq_xrc_lookup() - the XRC SRQ an XRCETH names, in a domain
 * @sdev: the device
 * @srq_num: the SRQ number
 * @xrcd: the XRC domain it must be in (its target QP's)
 *
 * Context: rcu_read_lock() held; the SRQ stays valid until it is dropped
 *	(srnic_destroy_srq() waits for a grace period after unpublishing an
 *	XRC SRQ).
 * Return: the SRQ, or NULL if no XRC SRQ of @xrcd has that number.
 */
struct srnic_srq *srnic_srq_xrc_lookup(struct srnic_dev *sdev, u32 srq_num,
				       const struct ib_xrcd *xrcd)
{
	struct srnic_srq *srq;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "srnic_srq_xrc_lookup");
	srq = xa_load(&sdev->xsrq_xa, srq_num);
	return srq && srq->ibsrq.ext.xrc.xrcd == xrcd ? srq : NULL;
}

static int srnic_create_srq(struct ib_srq *ibsrq,
			    struct ib_srq_init_attr *init,
			    struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_srnic_dev(ibsrq->device);
	struct srnic_srq *srq = to_srnic_srq(ibsrq);
	struct rxe_create_srq_resp resp = {};
	u32 n = init->attr.max_wr;
	int err;

	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = srnic_srq_check_init(ibsrq->device, init);
	if (err)
		return err;

	spin_lock_init(&srq->lock);
	mutex_init(&srq->modify_mutex);
	srq->is_user = !!udata;
	srq->max_sge = max_t(u32, init->attr.max_sge, 1);
	/* srq_limit is ignored at creation (ibv_create_srq(3)): not armed */
	srq->limit = 0;

	/* Reserve a number now, publish the SRQ once it is complete. */
	err = xa_alloc_cyclic(&sdev->srq_xa, &srq->srq_num, NULL,
			      XA_LIMIT(1, SRNIC_MAX_SRQ), &sdev->srq_next,
			      GFP_KERNEL);
	if (err < 0)
		goto err_destroy_mutex;
	err = srnic_queue_init(sdev, &srq->rq, udata, &n,
			       srnic_srq_wqe_size(srq->max_sge),
			       SRNIC_QUEUE_FROM_USER, &resp.mi);
	if (err)
		goto err_erase_num;
	if (udata) {
		resp.srq_num = srq->srq_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_cleanup_queue;
	}
	err = srnic_srq_publish(sdev, srq, init);
	if (err)
		goto err_cleanup_queue;

	init->attr.max_wr = n;
	init->attr.max_sge = srq->max_sge;
	return 0;

err_cleanup_queue:
	srnic_queue_cleanup(&srq->rq);
err_erase_num:
	xa_erase(&sdev->srq_xa, srq->srq_num);
err_destroy_mutex:
	mutex_destroy(&srq->modify_mutex);
	return err;
}

static int srnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_srnic_dev(ibsrq->device);
	struct srnic_srq *srq = to_srnic_srq(ibsrq);

	xa_erase(&sdev->srq_xa, srq->srq_num);
	if (srq->is_xrc) {
		/* A packet that found it in the receive path is done with it. */
		xa_erase(&sdev->xsrq_xa, srq->srq_num);
		synchronize_rcu();
	}
	srnic_queue_cleanup(&srq->rq);
	mutex_destroy(&srq->modify_mutex);
	return 0;
}

/*
 * ibv_modify_srq(3): if any attribute is invalid, none is modified; so
 * check everything before resizing.
 */
static int srnic_srq_check_modify(struct srnic_srq *srq,
				  const struct ib_srq_attr *attr,
				  enum ib_srq_attr_mask mask)
{
	struct ib_device *ibdev = srq->ibsrq.device;
	u32 max_wr, limit;
	unsigned long flags;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;

	spin_lock_irqsave(&srq->lock, flags);
	max_wr = srq->rq.index_mask;
	limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);

	if (mask & IB_SRQ_MAX_WR) {
		err = srnic_srq_check_max_wr(ibdev, attr->max_wr);
		if (err)
			return err;
		max_wr = attr->max_wr;
	}
	if (mask & IB_SRQ_LIMIT)
		limit = attr->srq_limit;
	if (limit > max_wr) {
		ibdev_dbg(ibdev, "SRQ limit %u > max_wr %u\n", limit, max_wr);
		return -EINVAL;
	}
	return 0;
}

/* Resize; write the new ring's mminfo where rdma-core asked for it. */
static int srnic_srq_resize(struct srnic_srq *srq, u32 max_wr,
			    struct ib_udata *udata,
			    const struct rxe_modify_srq_cmd *cmd)
{
	struct mminfo mi = {};
	u32 n = max_wr;
	int err;

	err = srnic_queue_resize(&srq->rq, udata, &n, &mi, &srq->lock);
	if (err)
		return err;
	if (udata && copy_to_user(u64_to_user_ptr(cmd->mmap_info_addr), &mi,
				  sizeof(mi)))
		return -EFAULT;
	return 0;
}

static int srnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct srnic_srq *srq = to_srnic_srq(ibsrq);
	struct rxe_modify_srq_cmd cmd = {};
	unsigned long flags;
	int err;

	/* rdma-core's rxe provider always sends the command. */
	if ((mask & IB_SRQ_MAX_WR) && udata) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}

	mutex_lock(&srq->modify_mutex);
	err = srnic_srq_check_modify(srq, attr, mask);
	if (err)
		goto out_unlock;
	if (mask & IB_SRQ_MAX_WR) {
		err = srnic_srq_resize(srq, attr->max_wr, udata, &cmd);
		if (err)
			goto out_unlock;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
out_unlock:
	mutex_unlock(&srq->modify_mutex);
	return err;
}

static int srnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct srnic_srq *srq = to_srnic_srq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = srq->rq.index_mask;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	attr->max_sge = srq->max_sge;
	return 0;
}

/* Kernel SRQs only: user processes write the mapped ring themselves. */
static int srnic_post_srq_recv(struct ib_srq *ibsrq,
			       const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct srnic_srq *srq = to_srnic_srq(ibsrq);
	struct srnic_queue *q = &srq->rq;
	unsigned long flags;
	int err = 0;

	if (WARN_ON_ONCE(srq->is_user)) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (srnic_queue_kfull(q)) {
			err = -ENOMEM;
			break;
		}
		err = srnic_srq_wqe_build(srnic_queue_kproduce_addr(q), wr,
					  srq->max_sge);
		if (err)
			break;
		srnic_queue_kadvance_producer(q);
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * srnic_srq_dev_init() - per-device SRQ state, before registration
 * @sdev: the device being created
 */
void srnic_srq_dev_init(struct srnic_dev *sdev)
{
	xa_init_flags(&sdev->srq_xa, XA_FLAGS_ALLOC);
	xa_init(&sdev->xsrq_xa);
}

/**
 * srnic_srq_dev_fini() - undo srnic_srq_dev_init()
 * @sdev: the device; ib_core destroyed every SRQ before unregistering it
 */
void srnic_srq_dev_fini(struct srnic_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->srq_xa));
	WARN_ON(!xa_empty(&sdev->xsrq_xa));
	xa_destroy(&sdev->srq_xa);
	xa_destroy(&sdev->xsrq_xa);
}

const struct ib_device_ops srnic_srq_ops = {
	.create_srq = srnic_create_srq,
	.destroy_srq = srnic_destroy_srq,
	.modify_srq = srnic_modify_srq,
	.post_srq_recv = srnic_post_srq_recv,
	.query_srq = srnic_query_srq,

	INIT_RDMA_OBJ_SIZE(ib_srq, srnic_srq, ibsrq),
};
