// SPDX-License-Identifier: GPL-2.0
/*
 * srnic DC initiators (docs/dc.md): RC's requester and completer
 * (srnic_req.c, srnic_comp.c) with a destination per WQE - an address
 * handle, a DCT number and the DCT's access key. The requester works
 * through the send queue in order; when the next WQE names another target
 * than the current attachment, it waits until everything sent is
 * acknowledged (srnic_req_idle()), sends DETACH, and attaches to the new
 * target: the generation goes up, a random start PSN is taken, and the
 * first packet (its DCETH has ATTACH) goes alone until a response of the
 * new generation confirms the attachment (srnic_dci_window_open()).
 *
 * Responses carry the generation in their DCRETH: one of another
 * generation or target is stale and dropped. A NAK "no attachment" (the
 * target evicted or lost it) makes the DCI attach anew and send every
 * uncompleted WQE again from its first byte.
 *
 * All of it runs under the QP's req_lock, as the requester does. It is
 * called by the requester (srnic_req.c) and the receive path, and calls
 * neither requester nor completer: what it needs of them comes as
 * arguments, and a response it lets through goes to the completer from
 * the receive path (no import cycle: tools/imports.sh).
 */
#include <linux/log2.h>
#include <linux/random.h>

#include "srnic.h"

/**
 * srnic_dci_same() - does @wqe go to the target the DCI is attached to?
 * @qp: the DCI, req_lock held
 * @wqe: a WQE of its send queue
 *
 * Return: true if @wqe can follow what was sent without a drain, DETACH
 * and attach (srnic_dci_prepare()).
 */
bool srnic_dci_same(struct srnic_qp *qp, const struct srnic_send_wqe *wqe)
{
	lockdep_assert_held(&qp->req_lock);
	return qp->dci.attached && qp->dci.dctn == wqe->remote_qpn &&
	       qp->dci.key == wqe->dc_key &&
	       ipv6_addr_equal(&qp->av.daddr, &wqe->av.daddr) &&
	       ipv6_addr_equal(&qp->av.saddr, &wqe->av.saddr);
}

/**
 * srnic_dci_attaching() - does the request packet at @psn open the attachment?
 * @qp: the DCI, req_lock held
 * @psn: the packet's PSN
 *
 * Return: true for the attachment's first packet until it is confirmed
 * (its retransmissions too).
 */
bool srnic_dci_attaching(struct srnic_qp *qp, u32 psn)
{
	lockdep_assert_held(&qp->req_lock);
	return !qp->dci.confirmed && psn == qp->dci.attach_psn;
}

/**
 * srnic_dci_flags() - the DCETH flags of the request packet at @psn
 * @qp: the DCI, req_lock held
 * @psn: the packet's PSN
 * @timeout: the requester's retransmit timeout, in jiffies
 *
 * Return: for an ATTACH packet, ATTACH and the initiator's retransmission
 * horizon, which the target keeps an idle attachment for at least: timeout
 * x (retry count + 1), as log2 ms; else 0.
 */
u8 srnic_dci_flags(struct srnic_qp *qp, u32 psn, unsigned long timeout)
{
	u64 ms = (u64)jiffies_to_msecs(timeout) * (qp->attr.retry_cnt + 1);

	if (!srnic_dci_attaching(qp, psn))
		return 0;
	return SRNIC_DCETH_ATTACH |
	       min_t(u32, order_base_2(max_t(u64, ms, 1)), SRNIC_DCETH_HORIZON);
}

/**
 * srnic_dci_window_open() - may the next request packet go?
 * @qp: the DCI, req_lock held
 *
 * Return: false while an attachment is not confirmed and its first packet
 * has gone: only that one is in flight until the target answers it.
 */
bool srnic_dci_window_open(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->req_lock);
	return qp->dci.confirmed || qp->req.psn == qp->dci.attach_psn;
}

/* DETACH from the current attachment, at the next PSN. */
static struct sk_buff *srnic_dci_detach_skb(struct srnic_qp *qp)
{
	u8 opcode = SRNIC_OPCODE_DC_DETACH;
	struct srnic_bth *bth;
	struct sk_buff *skb;

	skb = srnic_xmit_alloc(srnic_opcode_hdr_len(opcode), 0);
	if (!skb)
		return NULL;
	bth = (struct srnic_bth *)skb->data;
	srnic_bth_init(bth, opcode, false, false, 0, SRNIC_DEFAULT_PKEY,
		       qp->dci.dctn, false, qp->req.psn);
	srnic_dceth_set(bth + 1, qp->dci.key, 0, srnic_qpn(qp), qp->dci.gen);
	return skb;
}

/* Attach to @wqe's target: a new generation and start PSN. */
static void srnic_dci_attach(struct srnic_qp *qp, struct srnic_send_wqe *wqe)
{
	u32 psn = get_random_u32() & SRNIC_PSN_MASK;

	lockdep_assert_held(&qp->req_lock);
	qp->dci.gen++;
	qp->dci.dctn = wqe->remote_qpn;
	qp->dci.key = wqe->dc_key;
	qp->dci.attach_psn = psn;
	qp->dci.confirmed = false;
	qp->dci.attached = true;
	qp->av = wqe->av;
	WRITE_ONCE(qp->attr.dest_qp_num, wqe->remote_qpn);
	dst_cache_reset(&qp->dst_cache);
	srnic_qp_set_path(qp);
	qp->req.psn = psn;
	qp->req.max_psn = psn;
	qp->req.acked_psn = psn;
	qp->req.owed = false;
	qp->req.rtt_timing = false;
	qp->req.rd_outstanding = 0;
}

/**
 * srnic_dci_prepare() - may @wqe, at @cur, be sent now?
 * @qp: the DCI, req_lock held
 * @wqe: the WQE about to be built
 * @idle: nothing is in flight (srnic_req_idle())
 * @detach: set to a DETACH packet to send first (return 2)
 * @av: its path
 *
 * Return: 1: build @wqe's next packet; 0: wait (draining the attachment,
 * or out of memory for the DETACH: the retransmit timer runs again); 2:
 * send *@detach, then call again.
 */
int srnic_dci_prepare(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
		      bool idle, struct sk_buff **detach, struct srnic_av *av)
{
	lockdep_assert_held(&qp->req_lock);
	if (wqe->state != SRNIC_WQE_POSTED || wqe->sent ||
	    srnic_dci_same(qp, wqe)) {
		if (!wqe->dc_started) {
			wqe->dc_started = true;
			srnic_count(qp->sdev, SRNIC_CNT_DC_ATTACH_REUSED);
		}
		return 1;
	}
	if (!idle)
		return 0;
	if (qp->dci.attached) {
		*detach = srnic_dci_detach_skb(qp);
		if (!*detach)
			return 0;
		qp->dci.attached = false;
		*av = qp->av;
		return 2;
	}
	srnic_dci_attach(qp, wqe);
	wqe->dc_started = true;
	return 1;
}

/*
 * The target has no attachment of this generation: attach anew and send
 * every uncompleted WQE again, whole.
 */
static void srnic_dci_reattach(struct srnic_qp *qp)
{
	u32 mask = qp->sq.index_mask;
	u32 i;

	lockdep_assert_held(&qp->req_lock);
	for (i = qp->req.oldest; i != qp->req.fetch; i = (i + 1) & mask) {
		struct srnic_send_wqe *wqe = srnic_swqe(qp, i);

		if (wqe->state == SRNIC_WQE_DONE)
			continue;
		wqe->state = SRNIC_WQE_POSTED;
		wqe->sent = 0;
		wqe->acked_bytes = 0;
	}
	qp->req.cur = qp->req.oldest;
	qp->req.need_retry = false;
	qp->req.rnr_wait = false;
	qp->dci.attached = false;
	/* what was in flight is gone with the attachment */
	qp->req.acked_psn = qp->req.psn;
	qp->req.rd_outstanding = 0;
}

/**
 * srnic_dci_rcv() - a DC response for a DCI
 * @qp: the DCI (reference held by the caller)
 * @pkt: a response (DCRETH) of the DC transport
 *
 * Return: true if the response is the completer's to handle (it is one of
 * the current attachment's), false if it was taken or dropped here.
 */
bool srnic_dci_rcv(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	u8 syn = pkt->aeth ? srnic_aeth_syndrome(pkt->aeth) : 0;
	bool stale, no_att;

	if (pkt->opcode == SRNIC_OPCODE_DC_DETACH_ACK)
		return false;	/* DETACH is not retried: nothing waits */
	spin_lock_bh(&qp->req_lock);
	stale = !qp->dci.attached ||
		srnic_dcreth_gen(pkt->dcreth) != qp->dci.gen ||
		srnic_dcreth_dctn(pkt->dcreth) != qp->dci.dctn;
	no_att = !stale && pkt->aeth &&
		 syn == srnic_aeth_syn_nak(SRNIC_NAK_DC_NO_ATTACH);
	if (no_att) {
		if (srnic_qp_state(qp) == IB_QPS_RTS)
			srnic_dci_reattach(qp);
	} else if (!stale && (!pkt->aeth ||
			      srnic_aeth_syn_type(syn) != SRNIC_AETH_RNR_NAK)) {
		/* the target holds the attachment: the window opens */
		qp->dci.confirmed = true;
	}
	spin_unlock_bh(&qp->req_lock);
	if (stale)
		srnic_count(qp->sdev, SRNIC_CNT_ACK_OUT_OF_WINDOW);
	else if (no_att)
		srnic_sched_kick_now(qp);
	return !stale && !no_att;
}

/**
 * srnic_dci_reset() - a DCI moved to RESET: no attachment
 * @qp: the DCI, req_lock held
 *
 * The generation goes on counting: an attachment the target still holds
 * is replaced by the next one.
 */
void srnic_dci_reset(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->req_lock);
	qp->dci.attached = false;
	qp->dci.confirmed = false;
}
