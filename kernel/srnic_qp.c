// SPDX-License-Identifier: GPL-2.0
/*
 * srnic queue pairs, the verbs: creation with rxe-ABI rings, the QP state
 * machine (IBA 10.3), query, destruction; the ops table with the
 * post_send/post_recv verbs of the requester and responder. Above the
 * transport; the QP core beneath it is srnic_qp_core.c.
 *
 * Lifetime: ib_core allocates and frees struct srnic_qp. The receive path
 * finds QPs by number under RCU and takes @ref; destroy removes the number,
 * waits for an RCU grace period (so no new reference can be taken from a
 * stale lookup) and then for @released (every reference dropped), cancels
 * the work item and timers, and only then lets ib_core free the memory.
 */
#include <linux/random.h>
#include <linux/sched/task.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "srnic.h"
#include "srnic_trace.h"

#define SRNIC_QPN_MAX		0xffffff
#define SRNIC_GSI_QPN		1

static int srnic_qp_check_cap(struct srnic_dev *sdev,
			      struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > SRNIC_MAX_QP_WR ||
	    cap->max_send_sge > SRNIC_MAX_SGE ||
	    cap->max_inline_data > SRNIC_MAX_INLINE)
		return -EINVAL;
	if (!init->srq &&
	    (cap->max_recv_wr > SRNIC_MAX_QP_WR ||
	     cap->max_recv_sge > SRNIC_MAX_SGE))
		return -EINVAL;
	/* XRC: an initiator only sends, a target completes on SRQs' CQs */
	if (init->qp_type == IB_QPT_XRC_TGT)
		return init->xrcd ? 0 : -EINVAL;
	if (!init->send_cq ||
	    (!init->recv_cq && init->qp_type != IB_QPT_XRC_INI))
		return -EINVAL;
	return 0;
}

static u32 srnic_sq_elem_size(u32 max_sge, u32 max_inline)
{
	return sizeof(struct rxe_send_wqe) +
	       max_t(u32, max_sge * sizeof(struct rxe_sge), max_inline);
}

static int srnic_qp_init_sq(struct srnic_qp *qp, struct ib_qp_init_attr *init,
			    struct ib_udata *udata, struct mminfo *mi)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 nelem = max_t(u32, cap->max_send_wr, 1);
	u32 elem, slots;
	int err;

	qp->max_send_sge = max_t(u32, cap->max_send_sge, 1);
	qp->max_inline = cap->max_inline_data;
	elem = srnic_sq_elem_size(qp->max_send_sge, qp->max_inline);
	err = srnic_queue_init(qp->sdev, &qp->sq, udata, &nelem, elem,
			       SRNIC_QUEUE_FROM_USER, mi);
	if (err)
		return err;
	cap->max_send_wr = nelem;
	cap->max_send_sge = qp->max_send_sge;
	/* The ring element has room for this much inline data. */
	qp->max_inline = min_t(u32, SRNIC_MAX_INLINE,
			       qp->max_send_sge * sizeof(struct rxe_sge));
	qp->max_inline = max_t(u32, qp->max_inline, cap->max_inline_data);
	cap->max_inline_data = qp->max_inline;

	qp->swqe_size = ALIGN(sizeof(struct srnic_send_wqe) +
			      max_t(u32, qp->max_send_sge * sizeof(struct ib_sge),
				    qp->max_inline), 8);
	slots = qp->sq.index_mask + 1;
	qp->swqe = kvcalloc(slots, qp->swqe_size, GFP_KERNEL);
	if (!qp->swqe) {
		srnic_queue_cleanup(&qp->sq);
		return -ENOMEM;
	}
	return 0;
}

static int srnic_qp_init_rq(struct srnic_qp *qp, struct ib_qp_init_attr *init,
			    struct ib_udata *udata, struct mminfo *mi)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 nelem = max_t(u32, cap->max_recv_wr, 1);
	u32 elem;
	int err;

	qp->max_recv_sge = max_t(u32, cap->max_recv_sge, 1);
	elem = sizeof(struct rxe_recv_wqe) +
	       qp->max_recv_sge * sizeof(struct rxe_sge);
	err = srnic_queue_init(qp->sdev, &qp->rq, udata, &nelem, elem,
			       SRNIC_QUEUE_FROM_USER, mi);
	if (err)
		return err;
	cap->max_recv_wr = nelem;
	cap->max_recv_sge = qp->max_recv_sge;
	return 0;
}

static int srnic_qp_alloc_qpn(struct srnic_qp *qp, enum ib_qp_type type)
{
	struct srnic_dev *sdev = qp->sdev;
	u32 qpn;
	int err;

	if (type == IB_QPT_GSI) {
		err = xa_insert_bh(&sdev->qp_xa, SRNIC_GSI_QPN, qp, GFP_KERNEL);
		if (err)
			return err == -EBUSY ? -EEXIST : err;
		qp->ibqp.qp_num = SRNIC_GSI_QPN;
		return 0;
	}
	err = xa_alloc_cyclic_bh(&sdev->qp_xa, &qpn, qp,
				 XA_LIMIT(SRNIC_QPN_MIN, SRNIC_QPN_MAX),
				 &sdev->qp_next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

/* The TX scheduler, and the producers it runs: responder first. */
static void srnic_qp_init_tx(struct srnic_qp *qp)
{
	srnic_sched_qp_init(qp);
	qp->producers[SRNIC_PRODUCER_RESP] = &srnic_resp_producer;
	qp->producers[SRNIC_PRODUCER_REQ] = &srnic_req_producer;
}

/*
 * A DC QP (docs/dc.md): native mode, user space, its driver data says
 * which kind; a DCT receives into an SRQ, a DCI has none.
 */
static int srnic_qp_check_dc(struct srnic_dev *sdev,
			     struct ib_qp_init_attr *init,
			     struct ib_udata *udata,
			     struct srnic_create_dc_qp *cmd)
{
	int err;

	if (sdev->mode != SRNIC_MODE_NATIVE || !udata)
		return -EOPNOTSUPP;
	if (udata->inlen < sizeof(*cmd))
		return -EINVAL;
	err = ib_copy_from_udata(cmd, udata, sizeof(*cmd));
	if (err)
		return err;
	if (cmd->reserved ||
	    !ib_is_udata_cleared(udata, sizeof(*cmd),
				 udata->inlen - sizeof(*cmd)))
		return -EINVAL;
	if (cmd->dc_type == SRNIC_DC_TYPE_DCT)
		return init->srq ? 0 : -EINVAL;
	if (cmd->dc_type == SRNIC_DC_TYPE_DCI)
		return init->srq ? -EINVAL : 0;
	return -EINVAL;
}

/* Can srnic create the QP @init asks for? */
static int srnic_qp_check_init(struct srnic_dev *sdev,
			       struct ib_qp_init_attr *init,
			       struct ib_udata *udata,
			       struct srnic_create_dc_qp *dc)
{
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_GSI:
		break;
	case IB_QPT_XRC_INI:
		/*
		 * Native mode (the rxe provider has no XRC), user space: a
		 * send WQE names its SRQ in the native ABI's ring only.
		 */
		if (sdev->mode != SRNIC_MODE_NATIVE || !udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_TGT:
		/* made by ib_uverbs for a process, without udata */
		if (sdev->mode != SRNIC_MODE_NATIVE)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_DRIVER:
		err = srnic_qp_check_dc(sdev, init, udata, dc);
		if (err)
			return err;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	/* the rxe provider passes no driver data; a DC QP its own */
	if (udata && udata->inlen && init->qp_type != IB_QPT_DRIVER)
		return -EINVAL;
	return srnic_qp_check_cap(sdev, init);
}

/* The QP's locks, reference and the objects it was created with. */
static void srnic_qp_init_fields(struct srnic_qp *qp, struct srnic_dev *sdev,
				 struct ib_qp_init_attr *init,
				 struct ib_udata *udata)
{
	qp->sdev = sdev;
	qp->is_user = !!udata;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->req_lock);
	spin_lock_init(&qp->resp_lock);
	spin_lock_init(&qp->path_lock);
	spin_lock_init(&qp->rx_lock);
	qp->rx_cpu = -1;
	/* Receive steering runs its packets where this task runs. */
	if (udata)
		qp->rx_task = get_task_struct(current);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	/* none for an XRC target, no receive CQ for an XRC initiator */
	qp->scq = init->send_cq ? to_srnic_cq(init->send_cq) : NULL;
	qp->rcq = init->recv_cq ? to_srnic_cq(init->recv_cq) : NULL;
	qp->srq = init->srq ? to_srnic_srq(init->srq) : NULL;
	qp->xrcd = init->xrcd;
}

/*
 * A DC QP's defaults (docs/dc.md: no remote attribute is needed): the
 * port's path MTU, RC's usual timeout and retries, 16 READs/atomics.
 */
static int srnic_qp_init_dc(struct srnic_qp *qp,
			    const struct srnic_create_dc_qp *cmd)
{
	qp->attr.path_mtu = srnic_port_active_mtu(READ_ONCE(qp->sdev->ndev->mtu));
	qp->attr.timeout = 14;
	qp->attr.retry_cnt = 7;
	qp->attr.rnr_retry = 7;
	qp->attr.min_rnr_timer = 12;
	qp->attr.max_rd_atomic = SRNIC_DC_RD_ATOMIC;
	if (cmd->dc_type == SRNIC_DC_TYPE_DCT)
		return srnic_dct_create(qp, cmd->dct_access_key);
	qp->dc = SRNIC_DC_DCI;
	qp->dci.gen = get_random_u32();
	return 0;
}

static int srnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			   struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_srnic_dev(ibqp->device);
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	struct rxe_create_qp_resp resp = {};
	struct srnic_create_dc_qp dc = {};
	int err;

	err = srnic_qp_check_init(sdev, init, udata, &dc);
	if (err)
		return err;
	/* No more than the device reports (max_qp), special QPs included. */
	if (!atomic_add_unless(&sdev->qp_count, 1, SRNIC_MAX_QP))
		return -ENOMEM;

	srnic_qp_init_fields(qp, sdev, init, udata);
	timer_setup(&qp->retrans_timer, srnic_req_retrans_timer, 0);
	timer_setup(&qp->rnr_timer, srnic_req_rnr_timer, 0);
	srnic_qp_init_tx(qp);

	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err)
		goto err_uncount;

	qp->wqe = kzalloc(sizeof(*qp->wqe), GFP_KERNEL);
	if (!qp->wqe) {
		err = -ENOMEM;
		goto err_dst_cache;
	}

	err = srnic_qp_init_sq(qp, init, udata, &resp.sq_mi);
	if (err)
		goto err_free_wqe;
	if (!qp->srq) {
		err = srnic_qp_init_rq(qp, init, udata, &resp.rq_mi);
		if (err)
			goto err_cleanup_sq;
	}

	if (init->qp_type == IB_QPT_DRIVER) {
		err = srnic_qp_init_dc(qp, &dc);
		if (err)
			goto err_cleanup_rq;
	}
	err = srnic_qp_alloc_qpn(qp, init->qp_type);
	if (err)
		goto err_destroy_dct;

	if (udata) {
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err)
			goto err_erase_qpn;
	}
	return 0;

err_erase_qpn:
	xa_erase_bh(&sdev->qp_xa, srnic_qpn(qp));
	/* A packet may have found it meanwhile: wait for its reference. */
	srnic_qp_put(qp);
	wait_for_completion(&qp->released);
err_destroy_dct:
	srnic_dct_destroy(qp);
err_cleanup_rq:
	if (!qp->srq)
		srnic_queue_cleanup(&qp->rq);
err_cleanup_sq:
	kvfree(qp->swqe);
	srnic_queue_cleanup(&qp->sq);
err_free_wqe:
	kfree(qp->wqe);
err_dst_cache:
	dst_cache_destroy(&qp->dst_cache);
err_uncount:
	if (qp->rx_task)
		put_task_struct(qp->rx_task);
	atomic_dec(&sdev->qp_count);
	return err;
}

/*
 * Attributes a transition may carry, checked beyond ib_modify_qp_is_ok()'s
 * mask rules (IBA 11.2.4.2 Modify Queue Pair).
 */
static int srnic_qp_check_attr(struct srnic_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != SRNIC_PORT_NUM)
		return -EINVAL;
	/* Bits no access flag defines are refused, not kept silently. */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~IB_ACCESS_SUPPORTED))
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SRNIC_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > (qp->dc == SRNIC_DC_NONE ?
				   SRNIC_MAX_QP_RD_ATOM : SRNIC_DC_RD_ATOMIC))
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SRNIC_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SRNIC_QPN_MAX)
		return -EINVAL;
	if (mask & IB_QP_CAP) {
		/* Queues are sized at creation and cannot grow here. */
		if (attr->cap.max_send_wr > qp->sq.index_mask ||
		    (!qp->srq && attr->cap.max_recv_wr > qp->rq.index_mask))
			return -EINVAL;
	}
	return 0;
}

static int srnic_qp_set_av(struct srnic_qp *qp, struct ib_qp_attr *attr)
{
	int err;

	err = srnic_av_from_attr(&qp->av, &attr->ah_attr);
	if (err)
		return err;
	dst_cache_reset(&qp->dst_cache);
	return 0;
}

static int srnic_qp_alloc_rd(struct srnic_qp *qp, u32 count)
{
	struct srnic_rd_atomic *rd = NULL;

	if (count) {
		rd = kcalloc(count, sizeof(*rd), GFP_KERNEL);
		if (!rd)
			return -ENOMEM;
	}
	spin_lock_bh(&qp->resp_lock);
	swap(qp->resp.rd, rd);
	qp->resp.rd_count = count;
	qp->resp.rd_next = 0;
	qp->resp.tx_busy = false;
	spin_unlock_bh(&qp->resp_lock);
	kfree(rd);
	return 0;
}

/*
 * Consume the entries of a FROM_USER ring there are now: bounded, however
 * fast the user keeps producing.
 */
static void srnic_qp_empty_ring(struct srnic_queue *q)
{
	u32 n;

	for (n = srnic_queue_count(q); n; n--)
		srnic_queue_advance_consumer(q);
}

static void srnic_qp_reset(struct srnic_qp *qp)
{
	u32 cons;

	/* IBA 10.3.1: RESET empties the queues. */
	spin_lock_bh(&qp->req_lock);
	srnic_qp_empty_ring(&qp->sq);
	cons = srnic_queue_consumer_index(&qp->sq);
	memset(&qp->req, 0, sizeof(qp->req));
	if (srnic_qp_is_dci(qp))
		srnic_dci_reset(qp);
	qp->req.oldest = cons;
	qp->req.cur = cons;
	qp->req.fetch = cons;
	spin_unlock_bh(&qp->req_lock);
	spin_lock_bh(&qp->resp_lock);
	qp->resp.epsn = 0;
	qp->resp.msn = 0;
	qp->resp.nak_sent = false;
	qp->resp.in_msg = false;
	bitmap_zero(qp->resp.ooo.map, SRNIC_OOO_WIN);
	qp->resp.has_wqe = false;
	qp->resp.ack_pending = 0;
	qp->resp.tx_busy = false;
	qp->resp.ack_deferred = false;
	spin_unlock_bh(&qp->resp_lock);
	if (!qp->srq) {
		unsigned long flags;

		spin_lock_irqsave(&qp->rq_lock, flags);
		srnic_qp_empty_ring(&qp->rq);
		spin_unlock_irqrestore(&qp->rq_lock, flags);
	}
}

/* What a DC QP's modify may carry: no remote attribute (docs/dc.md). */
#define SRNIC_DC_MODIFY_MASK	(IB_QP_STATE | IB_QP_CUR_STATE |	\
				 IB_QP_PKEY_INDEX | IB_QP_PORT |	\
				 IB_QP_ACCESS_FLAGS | IB_QP_AV |	\
				 IB_QP_PATH_MTU | IB_QP_TIMEOUT |	\
				 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |	\
				 IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC | \
				 IB_QP_MIN_RNR_TIMER)

/*
 * May the QP go from @cur to @next with @mask? IBA's rules (ib_core's
 * table) but for DC QPs, which ib_core has none for (IB_QPT_DRIVER): any
 * state to RESET or ERR, RESET->INIT, INIT->INIT, INIT->RTR, RTR->RTS,
 * RTS->RTS, each with any of SRNIC_DC_MODIFY_MASK.
 */
static bool srnic_qp_transition_ok(struct srnic_qp *qp, enum ib_qp_state cur,
				   enum ib_qp_state next, int mask)
{
	if (qp->dc == SRNIC_DC_NONE)
		return ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask);
	if (mask & ~SRNIC_DC_MODIFY_MASK)
		return false;
	if (next == IB_QPS_RESET || next == IB_QPS_ERR)
		return true;
	switch (cur) {
	case IB_QPS_RESET:
		return next == IB_QPS_INIT;
	case IB_QPS_INIT:
		return next == IB_QPS_INIT || next == IB_QPS_RTR;
	case IB_QPS_RTR:
		return next == IB_QPS_RTS;
	case IB_QPS_RTS:
		return next == IB_QPS_RTS;
	default:
		return false;
	}
}

/*
 * Check phase of modify_qp: is the change from @seen (the state the QP was
 * in) valid, with valid attributes? Sets *@new to the state asked for.
 */
static int srnic_modify_qp_check(struct srnic_qp *qp, struct ib_qp_attr *attr,
				 int mask, enum ib_qp_state seen,
				 enum ib_qp_state *new)
{
	enum ib_qp_state cur;

	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : seen;
	*new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	/*
	 * IBA leaves the rate limit to raw packet QPs; srnic paces every QP
	 * type (and DCQCN will), so take it aside from the IBA mask checks.
	 */
	if (!srnic_qp_transition_ok(qp, cur, *new, mask & ~IB_QP_RATE_LIMIT))
		return -EINVAL;
	if ((mask & IB_QP_RATE_LIMIT) &&
	    (*new != IB_QPS_RTS || (attr->rate_limit &&
	     (attr->rate_limit < SRNIC_RATE_LIMIT_MIN_KBPS ||
	      attr->rate_limit > SRNIC_RATE_LIMIT_MAX_KBPS))))
		return -EINVAL;
	return srnic_qp_check_attr(qp, attr, mask);
}

/* Copy phase of modify_qp: the attributes in @mask into qp->attr. */
static void srnic_modify_qp_copy(struct srnic_qp *qp, struct ib_qp_attr *attr,
				 int mask)
{
	lockdep_assert_held(&qp->state_lock);
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		qp->attr.pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		qp->attr.port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		qp->attr.qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		/* Keep no pointer to ib_core's reference-counted sgid_attr. */
		qp->attr.ah_attr = attr->ah_attr;
		qp->attr.ah_attr.grh.sgid_attr = NULL;
	}
	if (mask & IB_QP_PATH_MTU)
		qp->attr.path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		qp->attr.timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->attr.retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->attr.rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		qp->attr.rq_psn = attr->rq_psn & SRNIC_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		qp->attr.sq_psn = attr->sq_psn & SRNIC_PSN_MASK;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		qp->attr.dest_qp_num = attr->dest_qp_num;
}

/*
 * Apply phase of modify_qp, after the QP's attributes and state changed:
 * what the change means for the requester, the responder and the queues.
 */
static void srnic_modify_qp_apply(struct srnic_qp *qp, struct ib_qp_attr *attr,
				  int mask, enum ib_qp_state new)
{
	/*
	 * UD and GSI QPs never get an AV or a destination QPN: with only
	 * those two triggers their packets left with UDP source port 0. Any
	 * state change (RESET->INIT included) sets it too; for RC/UC the
	 * result is the same as at the last AV/DEST_QPN change.
	 */
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN | IB_QP_STATE))
		srnic_qp_set_path(qp);

	if (mask & IB_QP_RQ_PSN) {
		spin_lock_bh(&qp->resp_lock);
		qp->resp.epsn = qp->attr.rq_psn;
		spin_unlock_bh(&qp->resp_lock);
	}
	/* a DC QP's retry counts may be its defaults */
	if ((mask & (IB_QP_SQ_PSN | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY)) ||
	    (qp->dc != SRNIC_DC_NONE && (mask & IB_QP_STATE) &&
	     new == IB_QPS_RTS)) {
		spin_lock_bh(&qp->req_lock);
		if (mask & IB_QP_SQ_PSN) {
			qp->req.psn = qp->attr.sq_psn;
			qp->req.max_psn = qp->attr.sq_psn;
			qp->req.acked_psn = qp->attr.sq_psn;
			qp->req.rtt_timing = false;
			qp->req.owed = false;
		}
		qp->req.retry_left = qp->attr.retry_cnt;
		qp->req.rnr_retry_left = qp->attr.rnr_retry;
		spin_unlock_bh(&qp->req_lock);
	}

	if (mask & IB_QP_RATE_LIMIT) {
		qp->attr.rate_limit = attr->rate_limit;
		srnic_sched_set_rate(qp, attr->rate_limit);
	}

	if (mask & IB_QP_STATE) {
		switch (new) {
		case IB_QPS_RESET:
			srnic_qp_reset(qp);
			break;
		case IB_QPS_ERR:
			srnic_qp_flush(qp);
			break;
		case IB_QPS_SQD:
			/* No new requests are started; SQD is reached at once. */
			break;
		case IB_QPS_RTS:
			if (srnic_req_has_work(qp))
				srnic_sched_kick(qp);
			break;
		default:
			break;
		}
	}
}

static int srnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			   int mask, struct ib_udata *udata)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	enum ib_qp_state seen, new;
	int err;

	if (mask & ~(IB_QP_ATTR_STANDARD_BITS | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if (udata && udata->inlen)
		return -EINVAL;

	spin_lock_bh(&qp->state_lock);
	seen = qp->state;
	spin_unlock_bh(&qp->state_lock);
	err = srnic_modify_qp_check(qp, attr, mask, seen, &new);
	if (err)
		return err;

	/* a DC QP's path is its WQEs' (DCI) or its initiators' (DCT) */
	if ((mask & IB_QP_AV) && qp->dc == SRNIC_DC_NONE) {
		err = srnic_qp_set_av(qp, attr);
		if (err)
			return err;
	}
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		err = srnic_qp_alloc_rd(qp, attr->max_dest_rd_atomic);
		if (err)
			return err;
	}

	spin_lock_bh(&qp->state_lock);
	/*
	 * The data path may have moved the QP to ERR (srnic_qp_error()), or
	 * another modify_qp moved it, since the checks above: the change
	 * must be valid from the state the QP is in now, or that error would
	 * be overwritten. Nothing but the AV and the responder's READ
	 * entries (set above, unused in ERR) has changed yet. The check, the
	 * copy and the state change are one step under state_lock.
	 */
	if (qp->state != seen &&
	    !srnic_qp_transition_ok(qp, qp->state,
				    (mask & IB_QP_STATE) ? new : qp->state,
				    mask & ~IB_QP_RATE_LIMIT)) {
		spin_unlock_bh(&qp->state_lock);
		return -EINVAL;
	}
	srnic_modify_qp_copy(qp, attr, mask);
	if (mask & IB_QP_STATE) {
		trace_srnic_qp_state(qp->sdev->ib_dev.index, srnic_qpn(qp),
				     qp->state, new);
		qp->state = new;
	}
	qp->attr.qp_state = qp->state;
	spin_unlock_bh(&qp->state_lock);

	srnic_modify_qp_apply(qp, attr, mask, new);
	return 0;
}

static int srnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_qp_init_attr *init)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);

	spin_lock_bh(&qp->state_lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	spin_unlock_bh(&qp->state_lock);
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->cap.max_send_wr = qp->sq.index_mask;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	if (!qp->srq) {
		attr->cap.max_recv_wr = qp->rq.index_mask;
		attr->cap.max_recv_sge = qp->max_recv_sge;
	}

	memset(init, 0, sizeof(*init));
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	return 0;
}

static int srnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	struct srnic_dev *sdev = qp->sdev;

	spin_lock_bh(&qp->state_lock);
	if (qp->state != IB_QPS_RESET)
		trace_srnic_qp_state(sdev->ib_dev.index, srnic_qpn(qp),
				     qp->state, IB_QPS_RESET);
	qp->state = IB_QPS_RESET;
	spin_unlock_bh(&qp->state_lock);

	srnic_mcast_qp_detach_all(qp);
	/* No lookup by QPN finds it now (srnic_qp_get() takes the xa lock). */
	xa_erase_bh(&sdev->qp_xa, srnic_qpn(qp));
	/*
	 * The multicast fan-out reads attachments under RCU and takes its
	 * QP reference from there: a QP ever attached waits for those
	 * readers. No other QP pays for a grace period (17 ms each).
	 */
	if (READ_ONCE(qp->mcast_used))
		synchronize_rcu();
	srnic_qp_put(qp);
	wait_for_completion(&qp->released);

	/*
	 * In RESET and unreachable, nothing starts new work; a TX run still
	 * going may re-arm a timer and a timer may queue a run, so stop the
	 * runs, then the requester's timers, then the pacer and a run a
	 * timer queued.
	 */
	srnic_sched_qp_stop(qp);
	timer_delete_sync(&qp->retrans_timer);
	timer_delete_sync(&qp->rnr_timer);
	srnic_sched_qp_fini(qp);
	/* a DCT's attachments, now that no packet can reach them */
	srnic_dct_destroy(qp);

	if (!qp->srq)
		srnic_queue_cleanup(&qp->rq);
	kvfree(qp->swqe);
	srnic_queue_cleanup(&qp->sq);
	kfree(qp->resp.rd);
	kfree(qp->wqe);
	dst_cache_destroy(&qp->dst_cache);
	if (qp->rx_task)
		put_task_struct(qp->rx_task);
	atomic_dec(&sdev->qp_count);
	return 0;
}

const struct ib_device_ops srnic_qp_ops = {
	.create_qp = srnic_create_qp,
	.destroy_qp = srnic_destroy_qp,
	.modify_qp = srnic_modify_qp,
	.post_recv = srnic_post_recv,
	.post_send = srnic_post_send,
	.query_qp = srnic_query_qp,

	INIT_RDMA_OBJ_SIZE(ib_qp, srnic_qp, ibqp),
};
