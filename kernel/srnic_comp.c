// SPDX-License-Identifier: GPL-2.0
/*
 * srnic completer (IBA 9.7.5, requester side of responses): ACKs, NAKs,
 * RDMA READ responses and atomic ACKs arriving for our requests; send
 * completions, in send-queue order.
 *
 * Runs in softirq from srnic_recv.c with qp->req_lock held, and from the
 * requester's TX body (srnic_comp_retire()).
 */
#include "srnic.h"
#include "srnic_trace.h"

static enum ib_wc_opcode srnic_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Retire completed WQEs from the oldest on, in order: post their
 * completions (signalled ones, and every error) and give their ring slots
 * back to the producer.
 *
 * Return: true if the CQ refused a completion (full, overrun before, or its
 * consumer index corrupt): the requester stops, and the caller must move
 * the QP to the error state once it has dropped req_lock (IBA 11.4.2.1).
 */
bool srnic_comp_retire(struct srnic_qp *qp)
{
	u32 mask = qp->sq.index_mask;
	bool refused = false;

	lockdep_assert_held(&qp->req_lock);
	while (qp->req.oldest != qp->req.cur) {
		struct srnic_send_wqe *wqe = srnic_swqe(qp, qp->req.oldest);
		struct ib_wc wc = {
			.qp = &qp->ibqp,
			.port_num = SRNIC_PORT_NUM,
		};
		bool signal;

		if (wqe->state != SRNIC_WQE_DONE)
			break;
		signal = wqe->status != IB_WC_SUCCESS ||
			 srnic_wqe_signaled(qp, wqe);
		if (signal) {
			wc.wr_id = wqe->wr_id;
			wc.status = wqe->status;
			wc.opcode = srnic_wc_opcode(wqe->opcode);
			wc.byte_len = wqe->length;
		}
		if (wqe->opcode == IB_WR_SEND || wqe->opcode == IB_WR_SEND_WITH_IMM ||
		    wqe->opcode == IB_WR_SEND_WITH_INV)
			srnic_count(qp->sdev, SRNIC_CNT_SENDS);
		/*
		 * Free the ring slot before the completion is visible: a
		 * consumer that sees it may post again at once, into a full
		 * ring otherwise. The shadow entry stays ours (req_lock).
		 */
		srnic_queue_advance_consumer(&qp->sq);
		if (signal && srnic_cq_post(qp->scq, &wc, false)) {
			qp->req.stopped = true;
			refused = true;
		}
		qp->req.oldest = (qp->req.oldest + 1) & mask;
	}
	return refused;
}

/* Fail the oldest outstanding WQE (retry exhausted, fatal NAK). */
void srnic_comp_fail_oldest(struct srnic_qp *qp, enum ib_wc_status status)
{
	struct srnic_send_wqe *wqe;

	lockdep_assert_held(&qp->req_lock);
	if (qp->req.oldest == qp->req.fetch)
		return;
	wqe = srnic_swqe(qp, qp->req.oldest);
	wqe->status = status;
	wqe->state = SRNIC_WQE_DONE;
	/*
	 * Partly sent, or rewound and not resent yet, it is still at @cur:
	 * step past it so that it retires with this status (else the flush
	 * that follows reports it as IB_WC_WR_FLUSH_ERR).
	 */
	if (qp->req.cur == qp->req.oldest)
		qp->req.cur = (qp->req.cur + 1) & qp->sq.index_mask;
	qp->req.stopped = true;
	srnic_comp_retire(qp);
}

/*
 * Everything up to and including @psn is acknowledged. SENDs and WRITEs
 * whose last packet is covered complete; a READ or atomic covered by an ACK
 * without its response lost the response: retransmit (IBA 9.7.5.1.1).
 */
static void srnic_comp_ack_psn(struct srnic_qp *qp, u32 psn)
{
	u32 mask = qp->sq.index_mask;
	u32 i;

	lockdep_assert_held(&qp->req_lock);
	for (i = qp->req.oldest; i != qp->req.cur; i = (i + 1) & mask) {
		struct srnic_send_wqe *wqe = srnic_swqe(qp, i);

		if (wqe->state == SRNIC_WQE_DONE)
			continue;
		if (wqe->state != SRNIC_WQE_SENT ||
		    srnic_psn_cmp(wqe->last_psn, psn) > 0)
			break;
		if (srnic_wr_is_read_atomic(wqe->opcode)) {
			qp->req.need_retry = true;
			qp->req.retx_cause = SRNIC_RETX_READ_GAP;
			break;
		}
		wqe->state = SRNIC_WQE_DONE;
	}
	if (srnic_psn_cmp(srnic_psn_add(psn, 1), qp->req.acked_psn) > 0) {
		qp->req.acked_psn = srnic_psn_add(psn, 1);
		srnic_req_progress(qp);
		qp->req.rnr_retry_left = qp->attr.rnr_retry;
	}
}

/* The in-flight WQE whose PSN range holds @psn, or NULL. */
static struct srnic_send_wqe *srnic_comp_find(struct srnic_qp *qp, u32 psn)
{
	u32 mask = qp->sq.index_mask;
	u32 i;

	/*
	 * Up to @fetch: the WQE at @cur may be partly sent (SENDING), its
	 * last_psn not set yet; its packets so far end before req.psn.
	 */
	for (i = qp->req.oldest; i != qp->req.fetch; i = (i + 1) & mask) {
		struct srnic_send_wqe *wqe = srnic_swqe(qp, i);
		u32 last;

		if (wqe->state == SRNIC_WQE_POSTED)
			break;
		if (wqe->state == SRNIC_WQE_SENT)
			last = wqe->last_psn;
		else if (wqe->state == SRNIC_WQE_SENDING)
			last = srnic_psn_add(qp->req.psn, SRNIC_PSN_MASK);
		else
			continue;
		if (srnic_psn_cmp(psn, wqe->first_psn) >= 0 &&
		    srnic_psn_cmp(psn, last) <= 0)
			return wqe;
	}
	return NULL;
}

static enum ib_wc_status srnic_nak_status(unsigned int code)
{
	switch (code) {
	case SRNIC_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SRNIC_NAK_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/* IBA 9.7.5.2.8: the RNR NAK timer field, in microseconds. */
static const u32 srnic_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/*
 * A NAK stands for the request at its PSN: one outstanding, from the
 * oldest unacknowledged PSN to the last one sent (IBA 9.7.5.1). One for
 * an older PSN is stale; one for no request at all is forged or corrupt.
 * Either is ignored: acting on it acknowledged every request before its
 * PSN as a success, and an error NAK then failed the QP.
 */
static bool srnic_comp_nak_in_window(struct srnic_qp *qp, u32 psn, u8 syn)
{
	unsigned int value = srnic_aeth_syn_value(syn);

	if (srnic_psn_cmp(psn, qp->req.acked_psn) < 0 ||
	    srnic_psn_cmp(psn, qp->req.max_psn) >= 0)
		return false;
	/* An error NAK fails the request it names: there must be one. */
	if (srnic_aeth_syn_type(syn) == SRNIC_AETH_NAK &&
	    value != SRNIC_NAK_PSN_SEQ_ERR && !srnic_comp_find(qp, psn))
		return false;
	return true;
}

/* Returns true when the QP must go to the error state. */
static bool srnic_comp_aeth(struct srnic_qp *qp, u32 psn, u8 syn)
{
	unsigned int value = srnic_aeth_syn_value(syn);
	struct srnic_send_wqe *wqe;

	if (srnic_aeth_syn_type(syn) != SRNIC_AETH_ACK &&
	    !srnic_comp_nak_in_window(qp, psn, syn)) {
		srnic_count(qp->sdev, SRNIC_CNT_ACK_OUT_OF_WINDOW);
		return false;
	}
	if (srnic_aeth_syn_type(syn) == SRNIC_AETH_ACK)
		srnic_count(qp->sdev, SRNIC_CNT_ACK_RCVD);
	else
		trace_srnic_nak(qp->sdev->ib_dev.index, srnic_qpn(qp), psn, syn,
				SRNIC_DIR_RX);
	switch (srnic_aeth_syn_type(syn)) {
	case SRNIC_AETH_ACK:
		srnic_comp_ack_psn(qp, psn);
		return false;
	case SRNIC_AETH_RNR_NAK:
		srnic_count(qp->sdev, SRNIC_CNT_RNR_NAK_RCVD);
		/* Everything before the NAKed PSN made it. */
		srnic_comp_ack_psn(qp, srnic_psn_add(psn, SRNIC_PSN_MASK));
		if (qp->req.rnr_retry_left == 0) {
			srnic_count(qp->sdev, SRNIC_CNT_RNR_RETRY_EXCEEDED);
			srnic_comp_fail_oldest(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return true;
		}
		if (qp->req.rnr_retry_left != 7)	/* 7: retry forever */
			qp->req.rnr_retry_left--;
		qp->req.rnr_wait = true;
		qp->req.need_retry = true;
		qp->req.retx_cause = SRNIC_RETX_RNR_NAK;
		mod_timer(&qp->rnr_timer,
			  jiffies + usecs_to_jiffies(srnic_rnr_usec[value]) + 1);
		return false;
	case SRNIC_AETH_NAK:
		srnic_comp_ack_psn(qp, srnic_psn_add(psn, SRNIC_PSN_MASK));
		if (value == SRNIC_NAK_PSN_SEQ_ERR) {
			srnic_count(qp->sdev, SRNIC_CNT_SEQ_NAK_RCVD);
			qp->req.need_retry = true;
			qp->req.retx_cause = SRNIC_RETX_SEQ_NAK;
			return false;
		}
		if (value == SRNIC_NAK_INVALID_REQ)
			srnic_count(qp->sdev, SRNIC_CNT_INV_REQ_NAK_RCVD);
		else if (value == SRNIC_NAK_REM_ACCESS_ERR)
			srnic_count(qp->sdev, SRNIC_CNT_ACCESS_NAK_RCVD);
		else if (value == SRNIC_NAK_REM_OP_ERR)
			srnic_count(qp->sdev, SRNIC_CNT_REM_OP_NAK_RCVD);
		wqe = srnic_comp_find(qp, psn);
		if (wqe) {
			wqe->status = srnic_nak_status(value);
			wqe->state = SRNIC_WQE_DONE;
		}
		qp->req.stopped = true;
		return true;
	default:
		return false;
	}
}

/*
 * Responses come in request order (IBA 9.7.5.1): one for a READ or atomic
 * while an earlier READ or atomic is unanswered is stale, or its
 * predecessor's responses were lost. Completing it out of order would let
 * more READs start than the responder keeps replay entries for
 * (max_rd_atomic counts from the oldest unanswered one).
 */
static bool srnic_comp_rd_in_order(struct srnic_qp *qp,
				   const struct srnic_send_wqe *wqe)
{
	u32 mask = qp->sq.index_mask;
	u32 i;

	for (i = qp->req.oldest; srnic_swqe(qp, i) != wqe; i = (i + 1) & mask) {
		const struct srnic_send_wqe *w = srnic_swqe(qp, i);

		if (w->state != SRNIC_WQE_DONE &&
		    srnic_wr_is_read_atomic(w->opcode))
			return false;
	}
	return true;
}

/*
 * Place the payload of READ response @pkt at @off of @wqe's local SGEs.
 * Returns 0; -EAGAIN if a page of an ODP MR is not faulted in (the packet
 * is dropped as if lost, and the fault queued: the READ asks again); or 1
 * if they cannot take it: the WQE then fails with a local protection
 * error.
 */
static int srnic_comp_place(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
			    u32 off, const struct srnic_pkt *pkt)
{
	struct srnic_sge_cursor c;
	int err;

	srnic_sge_cursor_init(&c, qp->sdev, qp->ibqp.pd, wqe->sge,
			      wqe->num_sge, off);
	err = srnic_sge_copy_from_skb(&c, pkt->skb, pkt->hdr_len, pkt->paylen);
	if (err == -EAGAIN || !err)
		return err;
	wqe->status = IB_WC_LOC_PROT_ERR;
	wqe->state = SRNIC_WQE_DONE;
	return 1;
}

/*
 * A response for @wqe at PSN @psn came that is not the next one expected:
 * a stale duplicate, or one beyond a gap - responses come in request order
 * (IBA 9.7.5.1), so everything between the next expected response and
 * @psn was lost. Ask again at once from the first missing response
 * (srnic_req_rewind(): the READ resumes there, every later request is sent
 * again after it, go-back-N) instead of waiting for the retransmit timer.
 *
 * Once per gap: the responses still in flight behind the first one past
 * the gap land here too, and so would the rest of an old response stream
 * after the rewind; asking again for each of them (or for every one of a
 * stream that is replayed) fed itself without end. So a gap is asked for
 * only when its first missing PSN differs from the last one asked for;
 * if that request or its answer is lost too, the retransmit timer takes
 * over (and clears the memory of the gap).
 *
 * And not often: each ask makes the responder send everything from the
 * hole on again, every later READ included. On a link that reorders a
 * lot, the hole moves on quickly as the late responses come in, and asking
 * at each new hole flooded the link with replays that were reordered in
 * turn (the QP never finished). So a new gap waits a quarter of the
 * retransmit timeout after the last ask: loss is still recovered well
 * before the timer, reordering gets the time to sort itself out.
 */
static void srnic_comp_read_gap(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
				u32 psn, u32 pmtu)
{
	u32 mask = qp->sq.index_mask;
	struct srnic_send_wqe *w;
	u32 i, expect;

	lockdep_assert_held(&qp->req_lock);
	if (qp->req.need_retry)
		return;		/* a rewind is coming anyway */
	/* The oldest unanswered READ or atomic is the one missing data. */
	for (i = qp->req.oldest; ; i = (i + 1) & mask) {
		w = srnic_swqe(qp, i);
		if (w == wqe || (w->state != SRNIC_WQE_DONE &&
				 srnic_wr_is_read_atomic(w->opcode)))
			break;
	}
	if (w->state != SRNIC_WQE_SENT)
		return;
	expect = w->first_psn;
	if (w->opcode == IB_WR_RDMA_READ)
		expect = srnic_psn_add(expect, w->acked_bytes / pmtu);
	if (srnic_psn_cmp(psn, expect) <= 0)
		return;		/* a duplicate of what we have */
	if (qp->req.gap_valid &&
	    (qp->req.gap_psn == expect ||
	     time_before(jiffies, qp->req.gap_jiffies +
			 max(srnic_req_timeout(qp) / 4, 1UL))))
		return;		/* asked for already, or just now */
	qp->req.gap_valid = true;
	qp->req.gap_psn = expect;
	qp->req.gap_jiffies = jiffies;
	/*
	 * The responder executed every request before @w's: complete the
	 * SENDs and WRITEs there, so that the rewind starts at @w.
	 */
	srnic_comp_ack_psn(qp, srnic_psn_add(w->first_psn, SRNIC_PSN_MASK));
	qp->req.need_retry = true;
	qp->req.retx_cause = SRNIC_RETX_READ_GAP;
	srnic_count(qp->sdev, SRNIC_CNT_READ_GAP_RETRY);
}

/*
 * A response of the oldest unanswered READ that came ahead of a hole (an
 * IP network may reorder; IBA assumes it does not): place its payload now
 * and remember it in @ooo_map, so that a late response fills the hole and
 * the READ completes without asking again. Dropped, as IBA would have it,
 * every reordered response made the QP ask for the rest of the READ, whose
 * replay was reordered again: on a link that reorders much the READ never
 * finished. A response too far ahead to remember is a gap; so is the last
 * one with a hole before it (everything was sent: what is missing is lost
 * or late).
 */
static bool srnic_comp_read_ahead(struct srnic_qp *qp,
				  struct srnic_send_wqe *wqe,
				  struct srnic_pkt *pkt, u32 off, u32 pmtu)
{
	u32 expect = srnic_psn_add(wqe->first_psn, wqe->acked_bytes / pmtu);
	u32 d = (pkt->psn - expect) & SRNIC_PSN_MASK;
	int err;

	lockdep_assert_held(&qp->req_lock);
	if (d >= SRNIC_OOO_WIN) {
		srnic_comp_read_gap(qp, wqe, pkt->psn, pmtu);
		return false;
	}
	if (srnic_ooo_has(&qp->req.ooo, expect, d))
		return false;	/* a duplicate of one placed already */
	err = srnic_comp_place(qp, wqe, off, pkt);
	if (err)
		return err > 0;
	srnic_ooo_set(&qp->req.ooo, d);
	srnic_count(qp->sdev, SRNIC_CNT_READ_RESP_OOO);
	/* Forward progress: the retry budget counts timeouts without. */
	srnic_req_progress(qp);
	if (srnic_psn_cmp(pkt->psn, wqe->last_psn) == 0)
		srnic_comp_read_gap(qp, wqe, pkt->psn, pmtu);
	return false;
}

static bool srnic_comp_read_resp(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	struct srnic_send_wqe *wqe = srnic_comp_find(qp, pkt->psn);
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	u32 off, n;
	int err;

	if (!wqe || wqe->opcode != IB_WR_RDMA_READ)
		return false;	/* stale duplicate */
	off = (pkt->psn - wqe->first_psn) & SRNIC_PSN_MASK;
	off *= pmtu;
	if (off < wqe->acked_bytes)
		return false;	/* a duplicate of what we have */
	/*
	 * A READ completes in order: its responses while an earlier READ or
	 * atomic is unanswered (srnic_comp_rd_in_order()) show a gap there.
	 */
	if (!srnic_comp_rd_in_order(qp, wqe)) {
		srnic_comp_read_gap(qp, wqe, pkt->psn, pmtu);
		return false;
	}
	if (pkt->paylen > wqe->length - off ||
	    ((pkt->pos & SRNIC_POS_LAST) && off + pkt->paylen != wqe->length) ||
	    (!(pkt->pos & SRNIC_POS_LAST) && pkt->paylen != pmtu)) {
		wqe->status = IB_WC_LOC_LEN_ERR;
		wqe->state = SRNIC_WQE_DONE;
		return true;
	}
	if (off != wqe->acked_bytes)
		return srnic_comp_read_ahead(qp, wqe, pkt, off, pmtu);
	err = srnic_comp_place(qp, wqe, off, pkt);
	if (err)
		return err > 0;
	/* This one, and those placed ahead of it that now follow on. */
	n = srnic_ooo_advance(&qp->req.ooo, pkt->psn, true);
	wqe->acked_bytes = min_t(u64, wqe->length, (u64)off + (u64)n * pmtu);
	/* Forward progress: the retry budget counts timeouts without. */
	srnic_req_progress(qp);
	if (wqe->acked_bytes == wqe->length) {
		wqe->state = SRNIC_WQE_DONE;
		qp->req.rd_outstanding--;
		/* The read response also acknowledges what preceded it. */
		srnic_comp_ack_psn(qp, wqe->last_psn);
	}
	return false;
}

static bool srnic_comp_atomic_ack(struct srnic_qp *qp, struct srnic_pkt *pkt,
				  u64 orig)
{
	struct srnic_send_wqe *wqe = srnic_comp_find(qp, pkt->psn);
	struct srnic_mr *mr;
	int err;

	if (!wqe || !srnic_wr_is_atomic(wqe->opcode))
		return false;
	if (!srnic_comp_rd_in_order(qp, wqe)) {
		srnic_comp_read_gap(qp, wqe, pkt->psn,
				    ib_mtu_enum_to_int(qp->attr.path_mtu));
		return false;
	}
	if (wqe->num_sge != 1 || wqe->sge[0].length < sizeof(u64)) {
		wqe->status = IB_WC_LOC_LEN_ERR;
		wqe->state = SRNIC_WQE_DONE;
		return true;
	}
	mr = srnic_mr_get_lkey(qp->sdev, qp->ibqp.pd, wqe->sge[0].lkey,
			       wqe->sge[0].addr, sizeof(u64),
			       IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(mr)) {
		wqe->status = IB_WC_LOC_PROT_ERR;
		wqe->state = SRNIC_WQE_DONE;
		return true;
	}
	err = srnic_mr_copy_to(mr, wqe->sge[0].addr, &orig, sizeof(orig));
	srnic_mr_put(mr);
	/*
	 * An ODP page invalidated since the request went (srnic_req.c
	 * faulted it in): its fault is queued; the ACK is dropped, and the
	 * retry is answered from the responder's replay entry.
	 */
	if (err == -EAGAIN)
		return false;
	if (err)
		wqe->status = IB_WC_LOC_PROT_ERR;	/* an ODP MR's fault */
	wqe->state = SRNIC_WQE_DONE;
	qp->req.rd_outstanding--;
	srnic_comp_ack_psn(qp, pkt->psn);
	return false;
}

/**
 * srnic_comp_rcv() - handle a response packet for an RC requester
 * @qp: the QP (reference held by the caller)
 * @pkt: the parsed packet
 */
void srnic_comp_rcv(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	bool fatal = false;
	bool kick;

	spin_lock_bh(&qp->req_lock);
	if (srnic_qp_state(qp) != IB_QPS_RTS && srnic_qp_state(qp) != IB_QPS_SQD) {
		spin_unlock_bh(&qp->req_lock);
		return;
	}
	/*
	 * Nothing sent has this PSN: an ACK, NAK or response for it is forged
	 * or corrupt, and acting on it completed requests never answered
	 * (IBA 9.7.5.1: ignored).
	 */
	if (srnic_psn_cmp(pkt->psn, qp->req.max_psn) >= 0) {
		srnic_count(qp->sdev, SRNIC_CNT_ACK_OUT_OF_WINDOW);
		spin_unlock_bh(&qp->req_lock);
		return;
	}
	srnic_req_answered(qp, pkt->psn);
	if (info->flags & SRNIC_OPF_AETH) {
		const struct srnic_aeth *aeth = pkt->aeth;
		u8 syn = srnic_aeth_syndrome(aeth);

		if (info->flags & SRNIC_OPF_ATMACK)
			fatal = srnic_comp_atomic_ack(qp, pkt,
						      srnic_atmack_orig(pkt->atmack));
		else if (srnic_aeth_syn_type(syn) != SRNIC_AETH_ACK ||
			 !(info->flags & SRNIC_OPF_READ))
			fatal = srnic_comp_aeth(qp, pkt->psn, syn);
	}
	if (!fatal && (info->flags & SRNIC_OPF_READ))
		fatal = srnic_comp_read_resp(qp, pkt);

	if (srnic_comp_retire(qp))
		fatal = true;
	/* Anything to send: a retry, fetched WQEs, new WQEs in the ring? */
	kick = qp->req.need_retry || qp->req.cur != qp->req.fetch ||
	       (qp->is_user && srnic_queue_count(&qp->sq) !=
		((qp->req.fetch - srnic_queue_consumer_index(&qp->sq)) &
		 qp->sq.index_mask));
	if (srnic_req_idle(qp))
		timer_delete(&qp->retrans_timer);	/* nothing in flight */
	else if (!fatal)
		srnic_req_arm_timer(qp);
	spin_unlock_bh(&qp->req_lock);

	if (fatal)
		srnic_qp_error(qp);
	else if (kick && !READ_ONCE(qp->req.rnr_wait))
		srnic_sched_kick_now(qp);
}
