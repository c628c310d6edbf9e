// SPDX-License-Identifier: GPL-2.0
/*
 * srnic responder (IBA 9.7, responder side): executes incoming requests -
 * SEND into receive WQEs, RDMA WRITE into memory regions, RDMA READ and
 * atomics with a replay table for duplicates - and answers with ACKs, NAKs,
 * READ responses and atomic ACKs. Also the receive queue verbs.
 *
 * Requests are processed in softirq, inline in the UDP receive hook, under
 * qp->resp_lock. ACKs and NAKs go out from there directly; READ responses
 * and atomic ACKs queue on the replay table and leave from the QP's TX body
 * (srnic_resp_tx()), which keeps responses in PSN order. An ACK that would
 * overtake queued responses is deferred until they are out.
 */
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include <rdma/ib_mad.h>

#include "srnic.h"
#include "srnic_trace.h"

/* Coalesce: an ACK at least every this many packets, even without AckReq. */
#define SRNIC_ACK_EVERY		32
/* READ response packets per TX body run. */
#define SRNIC_RESP_TX_BUDGET	64

/* Global lock making atomics atomic against each other (IBA o9-28). */
static DEFINE_SPINLOCK(srnic_atomic_lock);

/*
 * The opcode a response of RC's @opcode goes with: an XRC target's is the
 * XRC transport's (IBA A14: the same operations and headers under
 * transport 0x5), a DC attachment's the DC transport's (docs/dc.md).
 */
static u8 srnic_resp_opcode(const struct srnic_qp *qp, u8 opcode)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return SRNIC_OPCODE_XRC | opcode;
	if (qp->dc == SRNIC_DC_ATT)
		return SRNIC_OPCODE_DC | opcode;
	return opcode;
}

/*
 * Where a response's headers after the BTH start: a DC attachment's carry
 * a DCRETH first (the DCT and the attachment's generation).
 */
static void *srnic_resp_ext_start(const struct srnic_qp *qp,
				  struct srnic_bth *bth)
{
	if (qp->dc != SRNIC_DC_ATT)
		return bth + 1;
	srnic_dcreth_set(bth + 1, srnic_qpn(qp), qp->dci.gen);
	return (void *)(bth + 1) + SRNIC_DCRETH_LEN;
}

/* @opcode is RC's (srnic_resp_opcode()). */
static void srnic_resp_xmit_ack(struct srnic_qp *qp, u8 opcode, u8 syn,
				u32 psn, u32 msn, const u64 *orig)
{
	u8 wire = srnic_resp_opcode(qp, opcode);
	struct srnic_bth *bth;
	struct sk_buff *skb;
	void *p;

	skb = srnic_xmit_alloc(srnic_opcode_hdr_len(wire), 0);
	if (!skb)
		return;
	bth = (struct srnic_bth *)skb->data;
	srnic_bth_init(bth, wire, false, false, 0, SRNIC_DEFAULT_PKEY,
		       qp->attr.dest_qp_num, false, psn);
	p = srnic_resp_ext_start(qp, bth);
	srnic_aeth_set(p, syn, msn);
	if (orig)
		srnic_atmack_set(p + SRNIC_AETH_LEN, *orig);
	if (opcode == IB_OPCODE_RC_ACKNOWLEDGE &&
	    srnic_aeth_syn_type(syn) == SRNIC_AETH_ACK)
		srnic_count(qp->sdev, SRNIC_CNT_ACK_SENT);
	else if (srnic_aeth_syn_type(syn) != SRNIC_AETH_ACK)
		trace_srnic_nak(qp->sdev->ib_dev.index, srnic_qpn(qp), psn, syn,
				SRNIC_DIR_TX);
	srnic_sched_xmit(qp, &qp->av, qp->av.tclass, skb, 0);
}

/* Send the deferred ACK or NAK, if any. Context: resp_lock held. */
static void srnic_resp_send_deferred(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	if (!qp->resp.ack_deferred)
		return;
	qp->resp.ack_deferred = false;
	srnic_resp_xmit_ack(qp, IB_OPCODE_RC_ACKNOWLEDGE, qp->resp.ack_syn,
			    qp->resp.ack_psn, qp->resp.msn, NULL);
}

/*
 * ACK or NAK @psn: from the QP's transmit side (srnic_resp_tx(), which
 * srnic_resp_rcv() runs next), after the READ responses queued before it,
 * so that it leaves in order with them (srnic_sched_claim_cpu()). One still
 * waiting there is replaced by this one, except a NAK by an ACK of an
 * earlier PSN (a duplicate's): the NAK says more. A NAK that fails the QP
 * goes at once, READ responses queued or not: the error flushes what
 * waits (srnic_resp_flush()), a deferred NAK with it, and a requester never
 * told would retry into a QP in error until its retries ran out.
 */
static void srnic_resp_ack(struct srnic_qp *qp, u8 syn, u32 psn)
{
	lockdep_assert_held(&qp->resp_lock);
	qp->resp.ack_pending = 0;
	if (srnic_aeth_syn_type(syn) == SRNIC_AETH_NAK &&
	    srnic_aeth_syn_value(syn) != SRNIC_NAK_PSN_SEQ_ERR) {
		srnic_resp_xmit_ack(qp, IB_OPCODE_RC_ACKNOWLEDGE, syn, psn,
				    qp->resp.msn, NULL);
		return;
	}
	if (!qp->resp.ack_deferred ||
	    srnic_aeth_syn_type(syn) != SRNIC_AETH_ACK ||
	    srnic_aeth_syn_type(qp->resp.ack_syn) == SRNIC_AETH_ACK ||
	    srnic_psn_cmp(psn, qp->resp.ack_psn) >= 0) {
		qp->resp.ack_psn = psn;
		qp->resp.ack_syn = syn;
	}
	qp->resp.ack_deferred = true;
	qp->resp.kick = true;
}

static void srnic_resp_nak(struct srnic_qp *qp, enum srnic_nak_code code,
			   u32 psn)
{
	/* PSN sequence error NAKs are counted where they are decided. */
	if (code == SRNIC_NAK_INVALID_REQ)
		srnic_count(qp->sdev, SRNIC_CNT_INV_REQ_NAK_SENT);
	else if (code == SRNIC_NAK_REM_ACCESS_ERR)
		srnic_count(qp->sdev, SRNIC_CNT_ACCESS_NAK_SENT);
	else if (code == SRNIC_NAK_REM_OP_ERR)
		srnic_count(qp->sdev, SRNIC_CNT_REM_OP_NAK_SENT);
	srnic_resp_ack(qp, srnic_aeth_syn_nak(code), psn);
}

/*
 * Where receives complete: an XRC target's on the CQ of the XRC SRQ of
 * the packet being handled (srnic_resp_xrc()), others on their own.
 */
static struct srnic_cq *srnic_resp_rcq(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	if (qp->resp.xsrq)
		return to_srnic_cq(qp->resp.xsrq->ibsrq.ext.cq);
	return qp->rcq;
}

/*
 * The PD that keys and receive WQEs of a request are checked in: an XRC
 * target's is that of the XRC SRQ the request names (IBA A14: the
 * domain's receive side lives in its SRQs), others' their own.
 */
static struct ib_pd *srnic_resp_pd(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	return qp->resp.xsrq ? qp->resp.xsrq->ibsrq.pd : qp->ibqp.pd;
}

/* Fetch the next receive WQE (RQ or SRQ) into qp->wqe. */
static int srnic_resp_get_wqe(struct srnic_qp *qp)
{
	struct srnic_srq *srq = qp->resp.xsrq ?: qp->srq;
	int err;

	lockdep_assert_held(&qp->resp_lock);
	if (qp->resp.has_wqe)
		return 0;
	if (srq) {
		err = srnic_srq_pop(srq, qp->wqe);
		/* XRC: the SRQ to complete it on, should the QP fail */
		qp->resp.xsrqn = qp->resp.xsrq ? srq->srq_num : 0;
	} else {
		unsigned long flags;

		spin_lock_irqsave(&qp->rq_lock, flags);
		if (srnic_queue_empty(&qp->rq)) {
			err = srnic_queue_corrupt(&qp->rq) ? -EIO : -EAGAIN;
		} else {
			err = srnic_srq_wqe_copy(srnic_queue_consumer_addr(&qp->rq),
						 qp->max_recv_sge, qp->wqe);
			srnic_queue_advance_consumer(&qp->rq);
		}
		spin_unlock_irqrestore(&qp->rq_lock, flags);
	}
	if (err == -EINVAL) {
		/*
		 * A malformed user WQE: complete it in error, drop the
		 * packet; the QP goes to the error state (IBA 10.8.3).
		 */
		struct ib_wc wc = {
			.wr_id = qp->wqe->wr_id,
			.status = IB_WC_LOC_QP_OP_ERR,
			.opcode = IB_WC_RECV,
			.qp = &qp->ibqp,
			.port_num = SRNIC_PORT_NUM,
		};

		srnic_count(qp->sdev, SRNIC_CNT_WQE_FORMAT_ERR);
		srnic_cq_post(srnic_resp_rcq(qp), &wc, false);
		qp->resp.fatal = true;
		return err;
	}
	if (err == -EIO) {
		/* The user broke the RQ's (or SRQ's) producer index. */
		srnic_count(qp->sdev, SRNIC_CNT_RING_INDEX_ERR);
		qp->resp.fatal = true;
		return err;
	}
	if (err)
		return err;
	qp->resp.has_wqe = true;
	qp->resp.wqe_offset = 0;
	return 0;
}

/* Copy @len bytes from @skb at @skb_off into the open receive WQE. */
static int srnic_resp_place(struct srnic_qp *qp, const struct sk_buff *skb,
			    int skb_off, const void *buf, u32 len)
{
	struct srnic_recv_wqe_copy *wqe = qp->wqe;
	struct srnic_sge_cursor c;
	int err;

	if (len > wqe->length || qp->resp.wqe_offset > wqe->length - len)
		return -EMSGSIZE;
	srnic_sge_cursor_init(&c, qp->sdev, srnic_resp_pd(qp), wqe->sge,
			      wqe->num_sge, qp->resp.wqe_offset);
	if (buf)
		err = srnic_sge_copy_to(&c, buf, len);
	else
		err = srnic_sge_copy_from_skb(&c, skb, skb_off, len);
	/* what was placed, also on error */
	qp->resp.wqe_offset = c.pos;
	return err;
}

static void srnic_resp_complete(struct srnic_qp *qp, struct srnic_pkt *pkt,
				enum ib_wc_status status, bool solicited)
{
	struct ib_wc wc = {
		.wr_id = qp->wqe->wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.byte_len = qp->resp.wqe_offset,
		.port_num = SRNIC_PORT_NUM,
	};

	if (pkt && status == IB_WC_SUCCESS) {
		const struct srnic_opcode_info *info =
			srnic_opcode_info(pkt->opcode);

		if (info->flags & SRNIC_OPF_WRITE)
			wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
		if (pkt->immdt) {
			wc.ex.imm_data = srnic_immdt_imm(pkt->immdt);
			wc.wc_flags |= IB_WC_WITH_IMM;
		}
		if (pkt->ieth) {
			wc.ex.invalidate_rkey = srnic_ieth_rkey(pkt->ieth);
			wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		}
		if (pkt->deth) {
			struct ethhdr *eth = eth_hdr(pkt->skb);

			wc.src_qp = srnic_deth_sqp(pkt->deth);
			wc.wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
			wc.network_hdr_type =
				ip_hdr(pkt->skb)->version == 4 ?
				RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
			/* none on multicast looped back by the IP stack */
			if (skb_mac_header_was_set(pkt->skb) &&
			    skb_mac_header_len(pkt->skb) >= ETH_HLEN) {
				ether_addr_copy(wc.smac, eth->h_source);
				wc.wc_flags |= IB_WC_WITH_SMAC;
			}
			/* ib_core picks the GID of a reply by it (RDMA-CM) */
			if (pkt->vlan_id != SRNIC_NO_VLAN) {
				wc.vlan_id = pkt->vlan_id;
				wc.wc_flags |= IB_WC_WITH_VLAN;
			}
		}
	}
	qp->resp.has_wqe = false;
	srnic_count(qp->sdev, SRNIC_CNT_RECVS);
	/* A full CQ is fatal (IBA 11.4.2.1); acted on after the lock. */
	if (srnic_cq_post(srnic_resp_rcq(qp), &wc, solicited))
		qp->resp.fatal = true;
}

/* ---------------------------------------------------------------- UD */

/* The 40-byte GRH area UD receive buffers start with (IBA 11.4.1.2). */
static int srnic_resp_place_grh(struct srnic_qp *qp, struct sk_buff *skb)
{
	u8 grh[40] = {};
	const void *nh = skb_network_header(skb);

	if (ip_hdr(skb)->version == 4)
		memcpy(grh + 20, nh, sizeof(struct iphdr));
	else
		memcpy(grh, nh, sizeof(struct ipv6hdr));
	return srnic_resp_place(qp, NULL, 0, grh, sizeof(grh));
}

static void srnic_resp_ud(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	u32 qkey = qp->ibqp.qp_type == IB_QPT_GSI ? IB_QP1_QKEY : qp->attr.qkey;
	int err;

	if (!pkt->deth || srnic_deth_qkey(pkt->deth) != qkey) {
		srnic_count(qp->sdev, SRNIC_CNT_RX_BAD_HDR);
		return;
	}
	if (srnic_resp_get_wqe(qp)) {
		srnic_count(qp->sdev, SRNIC_CNT_UD_NO_RECV);
		return;
	}
	err = srnic_resp_place_grh(qp, pkt->skb);
	if (!err)
		err = srnic_resp_place(qp, pkt->skb, pkt->hdr_len, NULL,
				       pkt->paylen);
	if (err == -EAGAIN) {
		/* ODP: dropped, the WQE kept for the next datagram */
		qp->resp.wqe_offset = 0;
		srnic_count(qp->sdev, SRNIC_CNT_UD_NO_RECV);
		return;
	}
	if (err) {
		srnic_resp_complete(qp, NULL, IB_WC_LOC_LEN_ERR, false);
		return;
	}
	srnic_resp_complete(qp, pkt, IB_WC_SUCCESS, pkt->se);
}

/* ----------------------------------------------------------- RC / UC */

/* Is @opcode allowed after the previous packet (IBA 9.8.3 sequencing)? */
static bool srnic_resp_seq_ok(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	const struct srnic_opcode_info *last =
		srnic_opcode_info(qp->resp.last_opcode);

	if (qp->resp.in_msg)
		return !(pkt->pos & SRNIC_POS_FIRST) &&
		       ((info->flags & last->flags) &
			(SRNIC_OPF_SEND | SRNIC_OPF_WRITE));
	return pkt->pos & SRNIC_POS_FIRST;
}

/*
 * A request packet ahead of the expected PSN. On a link that reorders much
 * most are, and dropping them all (a PSN sequence NAK, go-back-N) made the
 * requester send the rest of the message again and again, reordered in
 * turn: a long SEND or WRITE never finished. So a MIDDLE packet of the
 * message in progress is placed at once - where it goes follows from its
 * PSN, as every MIDDLE packet carries one path MTU - and remembered in
 * @ooo_map; when the late packets come, srnic_resp_rc() moves on over it.
 * Anything else (another message, a LAST packet, too far ahead, out of
 * bounds) is a sequence error, as before. Returns true if placed.
 */
static bool srnic_resp_ahead(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	u32 d = (pkt->psn - qp->resp.epsn) & SRNIC_PSN_MASK;
	u64 off = (u64)d * pmtu;	/* bytes ahead of the next expected */
	struct srnic_mr *mr;
	u32 save;
	int err;

	lockdep_assert_held(&qp->resp_lock);
	if (pkt->pos != SRNIC_POS_MIDDLE || pkt->paylen != pmtu ||
	    !qp->resp.in_msg || !srnic_resp_seq_ok(qp, pkt) ||
	    d >= SRNIC_OOO_WIN)
		return false;
	if (srnic_ooo_has(&qp->resp.ooo, qp->resp.epsn, d))
		return true;	/* a duplicate of one placed already */
	if (info->flags & SRNIC_OPF_WRITE) {
		/* A MIDDLE packet leaves the LAST one a byte at least. */
		if (off + pmtu >= qp->resp.write_resid)
			return false;
		mr = srnic_mr_get_rkey(qp->sdev, srnic_resp_pd(qp),
				       srnic_qpn(qp), qp->resp.write_rkey,
				       qp->resp.write_va + off, pmtu,
				       IB_ACCESS_REMOTE_WRITE);
		if (IS_ERR(mr))
			return false;
		err = srnic_mr_copy_from_skb(mr, qp->resp.write_va + off,
					     pkt->skb, pkt->hdr_len, pmtu);
		srnic_mr_put(mr);
	} else {
		if (!qp->resp.has_wqe ||
		    off + pmtu >= qp->wqe->length - qp->resp.wqe_offset)
			return false;
		save = qp->resp.wqe_offset;
		qp->resp.wqe_offset += off;
		err = srnic_resp_place(qp, pkt->skb, pkt->hdr_len, NULL, pmtu);
		qp->resp.wqe_offset = save;
	}
	if (err)
		return false;
	srnic_ooo_set(&qp->resp.ooo, d);
	srnic_count(qp->sdev, SRNIC_CNT_REQ_OOO);
	return true;
}

static int srnic_resp_write(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	struct srnic_mr *mr;
	int err;

	if (pkt->reth) {
		u32 len = srnic_reth_len(pkt->reth);

		qp->resp.write_va = srnic_reth_va(pkt->reth);
		qp->resp.write_rkey = srnic_reth_rkey(pkt->reth);
		qp->resp.write_resid = len;
		if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
			return -EACCES;
		if (len) {
			mr = srnic_mr_get_rkey(qp->sdev, srnic_resp_pd(qp),
					       srnic_qpn(qp), qp->resp.write_rkey,
					       qp->resp.write_va, len,
					       IB_ACCESS_REMOTE_WRITE);
			if (IS_ERR(mr))
				return -EACCES;
			srnic_mr_put(mr);
		}
	}
	if (pkt->paylen > qp->resp.write_resid)
		return -EMSGSIZE;
	if ((pkt->pos & SRNIC_POS_LAST) && pkt->paylen != qp->resp.write_resid)
		return -EMSGSIZE;
	if (pkt->paylen) {
		mr = srnic_mr_get_rkey(qp->sdev, srnic_resp_pd(qp),
				       srnic_qpn(qp), qp->resp.write_rkey,
				       qp->resp.write_va, pkt->paylen,
				       IB_ACCESS_REMOTE_WRITE);
		if (IS_ERR(mr))
			return -EACCES;
		err = srnic_mr_copy_from_skb(mr, qp->resp.write_va, pkt->skb,
					     pkt->hdr_len, pkt->paylen);
		srnic_mr_put(mr);
		if (err)
			return err == -EAGAIN ? err : -EACCES;
	}
	qp->resp.write_va += pkt->paylen;
	qp->resp.write_resid -= pkt->paylen;
	return 0;
}

/*
 * The replay entry being sent is done with (its last response left, or it
 * gave way): the next one, if any is queued, is sent from its start.
 */
static void srnic_resp_tx_next(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	qp->resp.tx_head = (qp->resp.tx_head + 1) % qp->resp.rd_count;
	qp->resp.tx_sent = 0;
	if (qp->resp.tx_head == qp->resp.rd_next)
		qp->resp.tx_busy = false;
}

/*
 * Make room for one more READ or atomic, if there is any: the oldest
 * replay entry (@rd_next) is taken unless its responses are still queued.
 * Idempotent: asked before an atomic is done and again for its entry. If
 * it is being sent again - a duplicate request, or a stale copy of one,
 * restarted it - it gives way: a requester keeps at most
 * max_dest_rd_atomic READs and atomics outstanding, so one that asks for
 * one more is done with the oldest, whose responses all left once. Its
 * replay stops there; the entries after it are still sent. Never answered
 * whole, it is not given up: the request is one too many (invalid-request
 * NAK).
 */
static bool srnic_resp_rd_make_room(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	if (!qp->resp.rd_count)
		return false;
	if (!(qp->resp.tx_busy && qp->resp.rd_next == qp->resp.tx_head))
		return true;
	if (!qp->resp.rd[qp->resp.rd_next].sent)
		return false;
	srnic_resp_tx_next(qp);
	return true;
}

static struct srnic_rd_atomic *srnic_resp_rd_alloc(struct srnic_qp *qp)
{
	struct srnic_rd_atomic *rd;

	if (!srnic_resp_rd_make_room(qp))
		return NULL;
	rd = &qp->resp.rd[qp->resp.rd_next];
	qp->resp.rd_next = (qp->resp.rd_next + 1) % qp->resp.rd_count;
	memset(rd, 0, sizeof(*rd));
	return rd;
}

static void srnic_resp_queue_tx(struct srnic_qp *qp, struct srnic_rd_atomic *rd)
{
	if (!qp->resp.tx_busy) {
		qp->resp.tx_busy = true;
		qp->resp.tx_head = rd - qp->resp.rd;
		qp->resp.tx_sent = 0;
	}
	qp->resp.kick = true;	/* srnic_resp_rcv() runs the TX side */
}

static int srnic_resp_read(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	u32 len = srnic_reth_len(pkt->reth);
	struct ib_pd *pd = srnic_resp_pd(qp);
	struct srnic_rd_atomic *rd;
	struct srnic_mr *mr;
	int err;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ))
		return -EACCES;
	if (len) {
		mr = srnic_mr_get_rkey(qp->sdev, pd, srnic_qpn(qp),
				       srnic_reth_rkey(pkt->reth),
				       srnic_reth_va(pkt->reth), len,
				       IB_ACCESS_REMOTE_READ);
		if (IS_ERR(mr))
			return -EACCES;
		/* ODP: the responses are built where faults cannot be taken. */
		err = mr->type == SRNIC_MR_ODP ?
		      srnic_odp_ready(mr, srnic_reth_va(pkt->reth), len) : 0;
		srnic_mr_put(mr);
		if (err)
			return err == -EAGAIN ? err : -EACCES;
	}
	rd = srnic_resp_rd_alloc(qp);
	if (!rd)
		return -EINVAL;	/* more READs than max_dest_rd_atomic */
	rd->valid = true;
	rd->psn = pkt->psn;
	rd->last_psn = srnic_psn_add(pkt->psn,
				     max_t(u32, DIV_ROUND_UP(len, pmtu), 1) - 1);
	rd->va = srnic_reth_va(pkt->reth);
	rd->rkey = srnic_reth_rkey(pkt->reth);
	rd->length = len;
	rd->pd = pd;
	rd->pd_serial = srnic_pd_serial(pd);
	srnic_resp_queue_tx(qp, rd);
	return 0;
}

/* An atomic request's operation, run by srnic_mr_atomic() on its u64. */
struct srnic_resp_atomic_op {
	const struct srnic_atmeth	*a;
	bool				cmp_swap;
	u64				orig;
};

static void srnic_resp_atomic_op(u64 *p, void *ctx)
{
	struct srnic_resp_atomic_op *op = ctx;

	spin_lock(&srnic_atomic_lock);
	op->orig = *p;
	if (op->cmp_swap) {
		if (op->orig == srnic_atmeth_cmp(op->a))
			*p = srnic_atmeth_swap_add(op->a);
	} else {
		*p = op->orig + srnic_atmeth_swap_add(op->a);
	}
	spin_unlock(&srnic_atomic_lock);
}

/*
 * -EAGAIN: the u64 is on a page of an ODP MR that is being faulted in;
 * nothing was done (RNR NAK, the requester asks again).
 */
static int srnic_resp_atomic(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	struct srnic_resp_atomic_op op = {
		.a = pkt->atmeth,
		/* the operation, whatever the transport (RC, XRC or DC) */
		.cmp_swap = (pkt->opcode & SRNIC_OPCODE_OP_MASK) ==
			    IB_OPCODE_COMPARE_SWAP,
	};
	struct srnic_rd_atomic *rd;
	struct srnic_mr *mr;
	int err;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_ATOMIC))
		return -EACCES;
	if (srnic_atmeth_va(op.a) & 7)
		return -EINVAL;
	/* its replay entry must be there before the operation is done */
	if (!srnic_resp_rd_make_room(qp))
		return -EINVAL;
	mr = srnic_mr_get_rkey(qp->sdev, srnic_resp_pd(qp), srnic_qpn(qp),
			       srnic_atmeth_rkey(op.a), srnic_atmeth_va(op.a),
			       sizeof(u64), IB_ACCESS_REMOTE_ATOMIC);
	if (IS_ERR(mr))
		return -EACCES;
	err = srnic_mr_atomic(mr, srnic_atmeth_va(op.a), srnic_resp_atomic_op,
			      &op);
	srnic_mr_put(mr);
	if (err == -EFAULT)
		return -EACCES;	/* an ODP page that failed to fault */
	if (err)
		return err;	/* -EAGAIN, or misaligned memory: -EINVAL */

	rd = srnic_resp_rd_alloc(qp);
	rd->valid = true;
	rd->is_atomic = true;
	rd->psn = pkt->psn;
	rd->last_psn = pkt->psn;
	rd->atomic_orig = op.orig;
	srnic_resp_queue_tx(qp, rd);
	return 0;
}

/*
 * Will the responses of replay entry @i from byte @off leave anyway, queued
 * at or after the one being sent? (With @tx_busy and @rd_next == @tx_head
 * every entry is queued.)
 */
static bool srnic_resp_rd_queued(struct srnic_qp *qp, u32 i, u32 off)
{
	u32 n = qp->resp.rd_count;
	u32 pending = (qp->resp.rd_next + n - qp->resp.tx_head) % n ?: n;
	u32 d = (i + n - qp->resp.tx_head) % n;

	if (!qp->resp.tx_busy)
		return false;
	if (d == 0)
		return off >= qp->resp.tx_sent;
	return d < pending;
}

/* Requests below the expected PSN (IBA 9.7.5.1.2 duplicate requests). */
static void srnic_resp_duplicate(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	u32 i;

	srnic_count(qp->sdev, SRNIC_CNT_DUP_REQUEST);
	if (!(info->flags & (SRNIC_OPF_READ | SRNIC_OPF_ATOMIC))) {
		/* Already executed: acknowledge what we have. */
		srnic_resp_ack(qp, srnic_aeth_syn_ack(SRNIC_AETH_CREDIT_INVALID),
			       srnic_psn_add(qp->resp.epsn, SRNIC_PSN_MASK));
		return;
	}
	/* Replay the response from the table, and everything after it. */
	for (i = 0; i < qp->resp.rd_count; i++) {
		struct srnic_rd_atomic *rd = &qp->resp.rd[i];
		u32 off = 0;

		if (!rd->valid)
			continue;
		if (rd->is_atomic || !pkt->reth) {
			if (rd->psn != pkt->psn)
				continue;
		} else {
			/*
			 * A READ may be asked again from a PSN inside its
			 * response range, for the rest of its data (rdma_rxe
			 * does so when a response is lost). Answer from that
			 * PSN with MIDDLE/LAST responses (srnic_resp_build()
			 * sends FIRST only at offset 0), which is what the
			 * requester's read in progress expects.
			 */
			if (srnic_psn_cmp(pkt->psn, rd->psn) < 0 ||
			    srnic_psn_cmp(pkt->psn, rd->last_psn) > 0)
				continue;
			off = ((pkt->psn - rd->psn) & SRNIC_PSN_MASK) *
			      ib_mtu_enum_to_int(qp->attr.path_mtu);
			if (srnic_reth_len(pkt->reth) != rd->length - off ||
			    srnic_reth_va(pkt->reth) != rd->va + off ||
			    srnic_reth_rkey(pkt->reth) != rd->rkey)
				return;
		}
		/*
		 * Going back, the requester asks again for every READ after
		 * the one it resumes (go-back-N): restarting the replay at
		 * each in turn cut the earlier ones short, and only the last
		 * was ever answered. One still to be sent needs nothing.
		 */
		if (srnic_resp_rd_queued(qp, i, off))
			return;
		qp->resp.tx_busy = true;
		qp->resp.tx_head = i;
		qp->resp.tx_sent = off;
		qp->resp.kick = true;
		return;
	}
}

/*
 * @pkt was taken in order (@epsn is past it): move on over the MIDDLE
 * packets placed ahead of it that now follow on (srnic_resp_ahead()).
 */
static void srnic_resp_follow_on(struct srnic_qp *qp, struct srnic_pkt *pkt,
				 const struct srnic_opcode_info *info)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	u32 n = srnic_ooo_advance(&qp->resp.ooo, pkt->psn, qp->resp.in_msg) - 1;

	if (n) {
		if (info->flags & SRNIC_OPF_WRITE) {
			qp->resp.write_va += (u64)n * pmtu;
			qp->resp.write_resid -= n * pmtu;
		} else {
			qp->resp.wqe_offset += n * pmtu;
		}
		qp->resp.epsn = srnic_psn_add(qp->resp.epsn, n);
		qp->resp.ack_pending += n;
	}
}

/* The NAK for a request that failed with @err: -EACCES is an access error. */
static enum srnic_nak_code srnic_resp_nak_for(int err)
{
	return err == -EACCES ? SRNIC_NAK_REM_ACCESS_ERR : SRNIC_NAK_INVALID_REQ;
}

/*
 * XRC target: the request's XRCETH must name an XRC SRQ of the QP's domain
 * (srnic_resp_xrc() found it), the one the message's open receive WQE
 * came from if there is one. srnic's XRC target takes SENDs, RDMA WRITEs,
 * READs and atomics, all checked in that SRQ's PD (a READ's responses
 * again later, in the PD its replay entry keeps: the SRQ may be gone by
 * then); not invalidation. Anything else is an invalid request (IBA A14),
 * NAKed and counted.
 */
static bool srnic_resp_xrc_ok(struct srnic_qp *qp,
			      const struct srnic_opcode_info *info)
{
	struct srnic_srq *srq = qp->resp.xsrq;

	lockdep_assert_held(&qp->resp_lock);
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return true;
	if (!srq || (qp->resp.has_wqe && qp->resp.xsrqn != srq->srq_num))
		return false;
	return !(info->flags & SRNIC_OPF_IETH);
}

/*
 * Execute the RC or UC request @pkt, at the expected PSN. Sets *@npsn to the
 * PSNs it takes (a READ takes one per response packet).
 * Return: 0; -EAGAIN when no receive WQE is posted for it or a page of an
 * ODP MR it needs is being faulted in (nothing done); or -EINVAL, with
 * *@nak the NAK that an RC responder answers it with.
 */
static int srnic_resp_exec(struct srnic_qp *qp, struct srnic_pkt *pkt,
			   u32 *npsn, enum srnic_nak_code *nak)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	int err = 0;

	*npsn = 1;
	*nak = SRNIC_NAK_INVALID_REQ;
	if (!srnic_resp_seq_ok(qp, pkt) || !srnic_resp_xrc_ok(qp, info))
		return -EINVAL;

	if (info->flags & SRNIC_OPF_RWR) {
		err = srnic_resp_get_wqe(qp);
		if (err == -EAGAIN)
			return -EAGAIN;
		if (err) {
			/* IBA 9.7.5.2.4: the receive WQE is at fault. */
			*nak = SRNIC_NAK_REM_OP_ERR;
			return -EINVAL;
		}
	}

	if (info->flags & SRNIC_OPF_SEND) {
		u32 placed = qp->resp.wqe_offset;

		if (!qp->resp.has_wqe)
			return -EINVAL;
		err = srnic_resp_place(qp, pkt->skb, pkt->hdr_len, NULL,
				       pkt->paylen);
		/* ODP: a page is being faulted in: RNR NAK, the WQE stays. */
		if (err == -EAGAIN) {
			qp->resp.wqe_offset = placed;
			return -EAGAIN;
		}
		/*
		 * IBA 9.9.3.1: a message longer than the WQE is an invalid
		 * request; a fault of the WQE's own buffers (L_Key, PD,
		 * range) is the responder's local protection error, which
		 * the requester learns as a remote operational error.
		 */
		if (err == -EMSGSIZE) {
			srnic_resp_complete(qp, NULL, IB_WC_LOC_LEN_ERR, false);
			return -EINVAL;
		}
		if (err) {
			srnic_resp_complete(qp, NULL, IB_WC_LOC_PROT_ERR, false);
			*nak = SRNIC_NAK_REM_OP_ERR;
			return -EINVAL;
		}
	} else if (info->flags & SRNIC_OPF_WRITE) {
		err = srnic_resp_write(qp, pkt);
	} else if (info->flags & SRNIC_OPF_READ) {
		err = srnic_resp_read(qp, pkt);
		if (!err)
			*npsn = (qp->resp.rd[(qp->resp.rd_next +
					      qp->resp.rd_count - 1) %
					     qp->resp.rd_count].last_psn -
				 pkt->psn + 1) & SRNIC_PSN_MASK;
	} else if (info->flags & SRNIC_OPF_ATOMIC) {
		err = srnic_resp_atomic(qp, pkt);
	}
	if (err == -EAGAIN)
		return err;	/* ODP: RNR NAK while the page is faulted in */
	if (err) {
		*nak = srnic_resp_nak_for(err);
		return -EINVAL;
	}

	if ((info->flags & SRNIC_OPF_IETH) && (pkt->pos & SRNIC_POS_LAST) &&
	    srnic_mem_invalidate(qp->sdev, qp->ibqp.pd,
				 srnic_ieth_rkey(pkt->ieth)))
		return -EINVAL;
	return 0;
}

/* @pkt was executed: the responder moves past it. */
static void srnic_resp_done(struct srnic_qp *qp, struct srnic_pkt *pkt,
			    u32 npsn)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);

	qp->resp.nak_sent = false;
	qp->resp.last_opcode = pkt->opcode;
	qp->resp.in_msg = !(pkt->pos & SRNIC_POS_LAST);
	qp->resp.epsn = srnic_psn_add(pkt->psn, npsn);
	srnic_resp_follow_on(qp, pkt, info);
	if (pkt->pos & SRNIC_POS_LAST)
		qp->resp.msn = (qp->resp.msn + 1) & SRNIC_AETH_MSN_MASK;
	if (info->flags & SRNIC_OPF_COMP)
		srnic_resp_complete(qp, pkt, IB_WC_SUCCESS, pkt->se);
}

/*
 * UC: no ACKs, NAKs or duplicates. A gap, an out-of-sequence
 * packet or an error loses the message in progress; the next one starts
 * at a FIRST or ONLY packet.
 */
static void srnic_resp_uc(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	enum srnic_nak_code nak;
	u32 npsn;
	int err;

	if (srnic_psn_cmp(pkt->psn, qp->resp.epsn) != 0) {
		qp->resp.in_msg = false;
		if (!(pkt->pos & SRNIC_POS_FIRST))
			return;
		qp->resp.epsn = pkt->psn;
	}
	err = srnic_resp_exec(qp, pkt, &npsn, &nak);
	if (err == -EAGAIN) {
		srnic_count(qp->sdev, SRNIC_CNT_UD_NO_RECV);
		return;
	}
	if (err) {
		qp->resp.in_msg = false;
		return;
	}
	srnic_resp_done(qp, pkt, npsn);
}

static void srnic_resp_rc(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	int cmp = srnic_psn_cmp(pkt->psn, qp->resp.epsn);
	enum srnic_nak_code nak;
	u32 npsn;
	int err;

	if (cmp > 0) {
		srnic_count(qp->sdev, SRNIC_CNT_OUT_OF_SEQ);
		if (srnic_resp_ahead(qp, pkt))
			return;
		if (!qp->resp.nak_sent) {
			qp->resp.nak_sent = true;
			srnic_count(qp->sdev, SRNIC_CNT_SEQ_NAK_SENT);
			srnic_resp_nak(qp, SRNIC_NAK_PSN_SEQ_ERR, qp->resp.epsn);
		}
		return;
	}
	if (cmp < 0) {
		srnic_resp_duplicate(qp, pkt);
		return;
	}

	err = srnic_resp_exec(qp, pkt, &npsn, &nak);
	if (err == -EAGAIN) {
		/* IBA 9.7.5.2.8: no receive WQE (or ODP fault): RNR NAK. */
		srnic_count(qp->sdev, SRNIC_CNT_RNR_NAK_SENT);
		srnic_resp_ack(qp, srnic_aeth_syn_rnr(qp->attr.min_rnr_timer),
			       pkt->psn);
		return;
	}
	if (err) {
		/* IBA 9.7.5.2: invalid request / access errors are fatal. */
		srnic_resp_nak(qp, nak, pkt->psn);
		qp->resp.fatal = true;
		return;
	}
	srnic_resp_done(qp, pkt, npsn);

	if (info->flags & (SRNIC_OPF_READ | SRNIC_OPF_ATOMIC))
		return;
	if (pkt->ackreq || ++qp->resp.ack_pending >= SRNIC_ACK_EVERY)
		srnic_resp_ack(qp, srnic_aeth_syn_ack(SRNIC_AETH_CREDIT_INVALID),
			       srnic_psn_add(qp->resp.epsn, SRNIC_PSN_MASK));
}

/*
 * A deferred ACK (or sequence NAK) that is all the responder has to send
 * goes at once, from the receive path, when it overtakes nothing
 * (srnic_sched_in_order_here()): no run, so the QP's transmit side stays
 * on the CPU that posts its requests. On a veth the request was received
 * on the sender's CPU; a run claimed the QP for it, and the next request,
 * posted on the other CPU, followed it there (ib_write_lat: every packet
 * of both directions on one CPU). Returns true if nothing is left to send.
 * Context: resp_lock held, softirq.
 */
static bool srnic_resp_ack_here(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	if (qp->resp.tx_busy || !qp->resp.ack_deferred ||
	    !srnic_sched_in_order_here(qp))
		return false;
	srnic_resp_send_deferred(qp);
	return true;
}

/*
 * XRC target: RC's responder, with the receive WQEs, the PD and the CQ of
 * the XRC SRQ the request names, when that SRQ is in the QP's domain
 * (else srnic_resp_xrc_ok() refuses the request). The SRQ is valid until
 * rcu_read_unlock(): its destruction waits for a grace period.
 */
static void srnic_resp_xrc(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	lockdep_assert_held(&qp->resp_lock);
	rcu_read_lock();
	qp->resp.xsrq = srnic_srq_xrc_lookup(qp->sdev,
					     srnic_xrceth_srqn(pkt->xrceth),
					     qp->xrcd);
	srnic_resp_rc(qp, pkt);
	qp->resp.xsrq = NULL;
	rcu_read_unlock();
}

/**
 * srnic_resp_rcv() - handle a request packet
 * @qp: the destination QP (reference held by the caller)
 * @pkt: the parsed packet
 */
void srnic_resp_rcv(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	enum ib_qp_state state = srnic_qp_state(qp);
	bool fatal, kick;

	if (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	    state != IB_QPS_SQD && state != IB_QPS_SQE) {
		srnic_count(qp->sdev, SRNIC_CNT_RX_NO_QP);
		return;
	}
	spin_lock_bh(&qp->resp_lock);
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		srnic_resp_rc(qp, pkt);
		break;
	case IB_QPT_XRC_TGT:
		srnic_resp_xrc(qp, pkt);
		break;
	case IB_QPT_UC:
		srnic_resp_uc(qp, pkt);
		break;
	default:
		srnic_resp_ud(qp, pkt);
		break;
	}
	fatal = qp->resp.fatal;
	qp->resp.fatal = false;
	kick = qp->resp.kick;
	qp->resp.kick = false;
	if (kick && !fatal && srnic_resp_ack_here(qp))
		kick = false;
	spin_unlock_bh(&qp->resp_lock);
	if (fatal)
		srnic_qp_error(qp);
	else if (kick)
		srnic_sched_kick_now(qp);
}

/*
 * The MR @len bytes of READ @rd at @off are read from, checked again: in
 * the PD the request was checked in, which the entry names by address and
 * serial (struct srnic_rd_atomic). The address alone may have become a
 * later PD's, whose MR at the same key would pass the lookup.
 */
static struct srnic_mr *srnic_resp_read_mr(struct srnic_qp *qp,
					   const struct srnic_rd_atomic *rd,
					   u32 off, u32 len)
{
	struct srnic_mr *mr;

	/* the lookup compares rd->pd, it does not follow it */
	mr = srnic_mr_get_rkey(qp->sdev, rd->pd, srnic_qpn(qp), rd->rkey,
			       rd->va + off, len, IB_ACCESS_REMOTE_READ);
	if (IS_ERR(mr))
		return mr;
	/* mr holds its PD, which is rd->pd's memory: the serial is there */
	if (srnic_pd_serial(mr->mem.pd) != rd->pd_serial) {
		srnic_mr_put(mr);
		return ERR_PTR(-EINVAL);
	}
	return mr;
}

/* Build the next READ response packet of @rd, or an atomic ACK. */
static struct sk_buff *srnic_resp_build(struct srnic_qp *qp,
					struct srnic_rd_atomic *rd, bool *done,
					unsigned int *padp)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	u32 off = qp->resp.tx_sent;
	u32 paylen, pad, psn;
	enum srnic_pkt_pos pos = 0;
	struct srnic_bth *bth;
	struct sk_buff *skb;
	struct srnic_mr *mr;
	u8 opcode;
	void *p;
	int err;

	if (rd->is_atomic) {
		*done = true;
		srnic_resp_xmit_ack(qp, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE,
				    srnic_aeth_syn_ack(SRNIC_AETH_CREDIT_INVALID),
				    rd->psn, qp->resp.msn, &rd->atomic_orig);
		return NULL;
	}

	paylen = min(rd->length - off, pmtu);
	if (off == 0)
		pos |= SRNIC_POS_FIRST;
	if (off + paylen >= rd->length)
		pos |= SRNIC_POS_LAST;
	*done = pos & SRNIC_POS_LAST;
	opcode = srnic_resp_opcode(qp, srnic_opcode_read_resp(pos));
	pad = srnic_pad_count(paylen);
	psn = srnic_psn_add(rd->psn, off / pmtu);

	skb = srnic_xmit_alloc(srnic_opcode_hdr_len(opcode), paylen);
	if (!skb)
		return NULL;
	bth = (struct srnic_bth *)skb->data;
	srnic_bth_init(bth, opcode, false, false, pad, SRNIC_DEFAULT_PKEY,
		       qp->attr.dest_qp_num, false, psn);
	p = srnic_resp_ext_start(qp, bth);
	if (srnic_opcode_info(opcode)->flags & SRNIC_OPF_AETH)
		srnic_aeth_set(p, srnic_aeth_syn_ack(SRNIC_AETH_CREDIT_INVALID),
			       qp->resp.msn);
	if (paylen) {
		mr = srnic_resp_read_mr(qp, rd, off, paylen);
		if (IS_ERR(mr)) {
			/* Invalidated since the request: stop answering. */
			kfree_skb(skb);
			*done = true;
			return NULL;
		}
		err = srnic_mr_copy_from(mr, rd->va + off, skb_put(skb, paylen),
					 paylen);
		srnic_mr_put(mr);
		if (err) {
			/*
			 * An ODP page invalidated since the request (or
			 * beyond what it checked): stop answering; the
			 * requester asks again, and the page is faulted in.
			 */
			kfree_skb(skb);
			*done = true;
			return NULL;
		}
	}
	qp->resp.tx_sent += paylen;
	*padp = pad;
	return skb;
}

/*
 * The responder's turn in a run of the TX scheduler: queued READ responses
 * and atomic ACKs, then a deferred ACK. Returns true if work remains.
 */
static bool srnic_resp_tx(struct srnic_qp *qp, struct srnic_tx_run *run)
{
	for (; run->budget; run->budget--) {
		struct srnic_rd_atomic *rd;
		struct sk_buff *skb;
		unsigned int pad = 0;
		bool done = false;

		spin_lock_bh(&qp->resp_lock);
		/* An ACK does not wait for backpressure: it never did. */
		if (!qp->resp.tx_busy) {
			srnic_resp_send_deferred(qp);
			spin_unlock_bh(&qp->resp_lock);
			return false;
		}
		/* Local backpressure: kicked again by the scheduler. */
		if (srnic_sched_full(qp)) {
			spin_unlock_bh(&qp->resp_lock);
			return false;
		}
		rd = &qp->resp.rd[qp->resp.tx_head];
		skb = srnic_resp_build(qp, rd, &done, &pad);
		if (done) {
			rd->sent = true;
			srnic_resp_tx_next(qp);
		}
		spin_unlock_bh(&qp->resp_lock);
		if (skb)
			srnic_sched_send(run, &qp->av, skb, pad);
	}
	return true;
}

/*
 * No READ response or atomic ACK is queued or half sent
 * (srnic_sched_claim_cpu()). A deferred ACK or NAK does not hold the TX
 * side on its CPU: it is one packet, sent by the very run that claims the
 * CPU, after everything the QP sent before has left the local stack. Were
 * it to hold it, an ACK whose request was received on another CPU than
 * the owner's (on a veth: the sender's CPU) and that cannot leave from the
 * receive path (srnic_resp_ack_here()) would cost an IPI to the owner.
 */
static bool srnic_resp_quiet(struct srnic_qp *qp)
{
	bool quiet;

	spin_lock_bh(&qp->resp_lock);
	quiet = !qp->resp.tx_busy;
	spin_unlock_bh(&qp->resp_lock);
	return quiet;
}

static void srnic_resp_flush(struct srnic_qp *qp);

int srnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	unsigned long flags;
	bool flush;
	int err = 0;

	/*
	 * A user QP's receives are in its mapped ring: from user space only
	 * the empty doorbell that flushes them in the error state comes here.
	 */
	if (qp->srq || srnic_qp_state(qp) == IB_QPS_RESET ||
	    (qp->is_user && wr) || ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	for (; wr; wr = wr->next) {
		if (srnic_queue_kfull(&qp->rq)) {
			err = -ENOMEM;
			break;
		}
		err = srnic_srq_wqe_build(srnic_queue_kproduce_addr(&qp->rq),
					  wr, qp->max_recv_sge);
		if (err)
			break;
		srnic_queue_kadvance_producer(&qp->rq);
	}
	/*
	 * Read under rq_lock: a move to ERR that this misses flushes after
	 * it takes rq_lock, so it finds the WQEs just posted.
	 */
	flush = srnic_qp_state(qp) == IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (err)
		*bad_wr = wr;
	/*
	 * IBA 10.8.3.2: a receive WR posted in the error state completes
	 * with IB_WC_WR_FLUSH_ERR. Nothing else would ever complete it:
	 * ib_drain_rq() posts one after moving the QP to ERR and waits.
	 */
	if (flush)
		srnic_resp_flush(qp);
	return err;
}

/*
 * The open receive WQE, flushed: an XRC target's on the CQ of the XRC SRQ
 * it came from, if that still exists (an SRQ destroyed mid-message takes
 * its WQEs with it).
 */
static void srnic_resp_flush_wqe(struct srnic_qp *qp, struct ib_wc *wc)
{
	struct srnic_srq *srq;

	lockdep_assert_held(&qp->resp_lock);
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT) {
		srnic_cq_post(qp->rcq, wc, false);
		return;
	}
	rcu_read_lock();
	srq = srnic_srq_xrc_lookup(qp->sdev, qp->resp.xsrqn, qp->xrcd);
	if (srq)
		srnic_cq_post(to_srnic_cq(srq->ibsrq.ext.cq), wc, false);
	rcu_read_unlock();
}

/*
 * Complete every posted receive WQE with IB_WC_WR_FLUSH_ERR. Also called
 * from srnic_post_recv(), whose kernel callers may hold interrupts off
 * (ib_mad posts its receives under spin_lock_irqsave()): resp_lock is
 * taken with interrupts saved, never with a BH unlock that would enable
 * softirqs there.
 */
static void srnic_resp_flush(struct srnic_qp *qp)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
		.port_num = SRNIC_PORT_NUM,
	};
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&qp->resp_lock, flags);
	if (qp->resp.has_wqe) {
		wc.wr_id = qp->wqe->wr_id;
		srnic_resp_flush_wqe(qp, &wc);
		qp->resp.has_wqe = false;
	}
	qp->resp.tx_busy = false;
	qp->resp.ack_deferred = false;
	spin_unlock_irqrestore(&qp->resp_lock, flags);

	/* An SRQ's WQEs belong to the SRQ, not to this QP. */
	if (qp->srq)
		return;
	spin_lock_irqsave(&qp->rq_lock, flags);
	/* What is there now: bounded while the user keeps producing. */
	for (n = srnic_queue_count(&qp->rq); n; n--) {
		const struct rxe_recv_wqe *src =
			srnic_queue_consumer_addr(&qp->rq);

		wc.wr_id = READ_ONCE(src->wr_id);
		srnic_cq_post(qp->rcq, &wc, false);
		srnic_queue_advance_consumer(&qp->rq);
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

const struct srnic_producer srnic_resp_producer = {
	.budget = SRNIC_RESP_TX_BUDGET,
	.tx = srnic_resp_tx,
	.quiet = srnic_resp_quiet,
	.flush = srnic_resp_flush,
};
