// SPDX-License-Identifier: GPL-2.0
/*
 * srnic QP core: what the transport needs of a QP - lookup by number with a
 * reference (srnic_qp_get(), srnic_qp_put()), and the move to the error
 * state from the data path (srnic_qp_error()), which flushes both queues
 * through the producers the QP verbs registered (srnic_sched.h). Beneath
 * the transport (requester, completer, responder, receive, multicast,
 * CNP, scheduler), which all call it; it calls none of them by name.
 * The QP verbs are srnic_qp.c, on top.
 */
#include "srnic.h"
#include "srnic_trace.h"

/*
 * The reference is taken under the xarray's own lock, which xa_erase_bh()
 * in destroy_qp takes too: once a QP is erased no lookup can still hold
 * its pointer without a reference, and destroy_qp only waits for those
 * (@released), not for an RCU grace period (ib_core frees the QP's memory
 * when destroy_qp returns). Softirq or process context.
 */
struct srnic_qp *srnic_qp_get(struct srnic_dev *sdev, u32 qpn)
{
	struct srnic_qp *qp;

	xa_lock_bh(&sdev->qp_xa);
	qp = xa_load(&sdev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_bh(&sdev->qp_xa);
	return qp;
}

void srnic_qp_put(struct srnic_qp *qp)
{
	if (qp && refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/**
 * srnic_qp_error() - move a QP to the error state from the data path
 * @qp: the QP
 *
 * Completes every outstanding work request with IB_WC_WR_FLUSH_ERR and
 * tells the consumer with IB_EVENT_QP_FATAL.
 */
void srnic_qp_error(struct srnic_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};
	bool was_error;

	spin_lock_bh(&qp->state_lock);
	was_error = qp->state == IB_QPS_ERR || qp->state == IB_QPS_RESET;
	if (!was_error) {
		trace_srnic_qp_state(qp->sdev->ib_dev.index, srnic_qpn(qp),
				     qp->state, IB_QPS_ERR);
		qp->state = IB_QPS_ERR;
	}
	qp->attr.qp_state = qp->state;
	spin_unlock_bh(&qp->state_lock);
	if (was_error)
		return;
	srnic_qp_flush(qp);
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * Flush both queues: the QP is in the error state. Through its producers,
 * which the QP verbs registered: the requester's send queue first, then
 * the responder's receive queue.
 */
void srnic_qp_flush(struct srnic_qp *qp)
{
	const struct srnic_producer *req = qp->producers[SRNIC_PRODUCER_REQ];
	const struct srnic_producer *resp = qp->producers[SRNIC_PRODUCER_RESP];

	if (req)
		req->flush(qp);
	if (resp)
		resp->flush(qp);
}
