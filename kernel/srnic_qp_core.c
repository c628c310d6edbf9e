// SPDX-License-Identifier: GPL-2.0
/*
 * srnic QP core: what the transport needs of a QP - lookup by number with a
 * reference (srnic_qp_get(), srnic_qp_put()), the move to the error
 * state from the data path (srnic_qp_error()), which flushes both queues
 * through the producers the QP verbs registered (srnic_sched.h), and the
 * QP's path: its UDP source port and flow label, and re-pathing. Beneath
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

/* ------------------------------------------------------------- path */

static void srnic_qp_path_locked(struct srnic_qp *qp, u32 fl, u16 sport)
{
	lockdep_assert_held(&qp->path_lock);
	WRITE_ONCE(qp->flow_label, fl);
	WRITE_ONCE(qp->src_port, sport);
}

/**
 * srnic_qp_set_path() - the QP's UDP source port and flow label, on modify
 * @qp: the QP
 *
 * Constant per QP (until a re-path) so that ECMP keeps its packets on one
 * path and in order. RC/UC: the AV's flow label, or when it has none the
 * one derived from both QP numbers (so both ends of a QP pair use the same
 * one, as the kernel's rdma_get_udp_sport() and hardware derive it); the
 * port is folded from it into 0xC000-0xFFFF, and IPv6 packets carry it.
 * UD and GSI: one port per QP from its number, each AH's own flow label.
 */
void srnic_qp_set_path(struct srnic_qp *qp)
{
	unsigned long flags;
	u32 fl = qp->av.flow_label;

	spin_lock_irqsave(&qp->path_lock, flags);
	if (srnic_qp_reliable(qp) || qp->ibqp.qp_type == IB_QPT_UC) {
		if (!fl)
			fl = rdma_calc_flow_label(srnic_qpn(qp),
						  qp->attr.dest_qp_num);
		srnic_qp_path_locked(qp, fl, rdma_flow_label_to_udp_sport(fl));
	} else {
		srnic_qp_path_locked(qp, 0, IB_ROCE_UDP_ENCAP_VALID_PORT_MIN +
				     (hash_32(srnic_qpn(qp), 14) & 0x3fff));
	}
	WRITE_ONCE(qp->peer_sport, 0);
	spin_unlock_irqrestore(&qp->path_lock, flags);
}

static void srnic_qp_repath_locked(struct srnic_qp *qp, u32 fl, u16 sport,
				   u8 cause)
{
	u16 old = qp->src_port;

	lockdep_assert_held(&qp->path_lock);
	srnic_qp_path_locked(qp, fl, sport);
	WRITE_ONCE(qp->repaths, qp->repaths + 1);
	srnic_count(qp->sdev, SRNIC_CNT_REPATHS);
	trace_srnic_repath(qp->sdev->ib_dev.index, srnic_qpn(qp), old, sport,
			   cause);
}

/**
 * srnic_qp_repath() - move an RC QP to a new path after timeouts
 * @qp: the QP
 *
 * A random flow label, and the UDP source port folded from it, other than
 * the current one: ECMP hashes the flow onto another path, or the same
 * one with the chance of one path in the fabric's number (protective load
 * balancing). The peer follows (srnic_qp_peer_sport()).
 * Context: any.
 */
void srnic_qp_repath(struct srnic_qp *qp)
{
	unsigned long flags;
	u16 sport;
	u32 fl;
	int i;

	spin_lock_irqsave(&qp->path_lock, flags);
	/* bounded: a port other than the current one, almost always at once */
	for (i = 0; i < 8; i++) {
		fl = (get_random_u32() & IB_GRH_FLOWLABEL_MASK) ?: 1;
		sport = rdma_flow_label_to_udp_sport(fl);
		if (sport != qp->src_port)
			break;
	}
	srnic_qp_repath_locked(qp, fl, sport, SRNIC_REPATH_TIMEOUT);
	spin_unlock_irqrestore(&qp->path_lock, flags);
}

/**
 * srnic_qp_peer_sport() - an RC packet from the peer, with re-pathing on
 * @qp: the QP
 * @sport: the packet's UDP source port
 * @flow_label: its IPv6 flow label (0 for IPv4)
 *
 * The first port seen is the peer's; when it changes, the peer re-pathed,
 * and this QP takes the same port (and label) so that its answers leave on
 * a new path too: its old one may be the broken one. Context: softirq.
 */
void srnic_qp_peer_sport(struct srnic_qp *qp, u16 sport, u32 flow_label)
{
	unsigned long flags;
	u16 seen;

	spin_lock_irqsave(&qp->path_lock, flags);
	seen = qp->peer_sport;
	WRITE_ONCE(qp->peer_sport, sport);
	if (seen && seen != sport && sport != qp->src_port)
		srnic_qp_repath_locked(qp, flow_label ?: sport & 0x3fff, sport,
				       SRNIC_REPATH_PEER);
	spin_unlock_irqrestore(&qp->path_lock, flags);
}
