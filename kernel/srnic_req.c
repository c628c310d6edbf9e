// SPDX-License-Identifier: GPL-2.0
/*
 * srnic requester (IBA 9.7, requester side): takes send work requests off
 * the send queue, copies and validates them, cuts each message into path-MTU
 * packets and transmits them; go-back-N retransmission on NAK or timeout.
 *
 * The send queue has three positions, all SQ slot indices, under req_lock:
 *   oldest  first WQE not yet completed (the ring's consumer index trails it
 *           so that the user may reuse a slot only after its completion)
 *   cur     first WQE with packets still to send
 *   fetch   first ring entry not yet copied into the shadow array
 * oldest <= cur <= fetch <= producer (modulo the ring).
 *
 * The requester is a producer of the TX scheduler (srnic_sched.c), which
 * runs srnic_req_tx() on one CPU at a time per QP: packets are built under
 * req_lock and handed to the IP stack outside it.
 */
#include <linux/jiffies.h>

#include "srnic.h"
#include "srnic_trace.h"

/* At most this many unacknowledged packets in flight per RC QP. */
#define SRNIC_MAX_INFLIGHT_PKTS	512
/* Ask for an ACK at least this often within a long message. */
#define SRNIC_ACKREQ_EVERY	64
/* Payloads from this size on are sent zero-copy (RC). */
#define SRNIC_ZCOPY_MIN		512
/* Packets one run of the TX scheduler takes from the requester. */
#define SRNIC_REQ_TX_BUDGET	128

static bool srnic_wr_allowed(enum ib_qp_type type, u32 opcode, bool user)
{
	/*
	 * XRC and a DCI (the only IB_QPT_DRIVER QP that sends): RC's remote
	 * operations, no invalidation, no local ops
	 */
	if (type == IB_QPT_XRC_INI || type == IB_QPT_DRIVER)
		return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
		       opcode == IB_WR_RDMA_WRITE ||
		       opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
		       opcode == IB_WR_RDMA_READ ||
		       srnic_wr_is_atomic(opcode);
	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return type == IB_QPT_RC;
	case IB_WR_REG_MR:
		/* Kernel ULPs only: it carries a kernel ib_mr pointer. */
		return !user && (type == IB_QPT_RC || type == IB_QPT_UC);
	default:
		return false;
	}
}

static bool srnic_wr_is_local(u32 opcode)
{
	return opcode == IB_WR_LOCAL_INV || opcode == IB_WR_REG_MR ||
	       opcode == IB_WR_BIND_MW;
}

static u32 srnic_qp_pmtu(struct srnic_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI)
		return ib_mtu_enum_to_int(srnic_port_active_mtu(READ_ONCE(qp->sdev->ndev->mtu)));
	return ib_mtu_enum_to_int(qp->attr.path_mtu ?: IB_MTU_256);
}

/* Checks shared by kernel and user WQEs once the shadow is filled. */
static int srnic_swqe_check(struct srnic_qp *qp, struct srnic_send_wqe *wqe)
{
	enum ib_qp_type type = qp->ibqp.qp_type;

	if (!srnic_wr_allowed(type, wqe->opcode, qp->is_user))
		return -EINVAL;
	if (srnic_wr_is_atomic(wqe->opcode) &&
	    (wqe->length != sizeof(u64) || (wqe->remote_addr & 7)))
		return -EINVAL;
	if ((type == IB_QPT_UD || type == IB_QPT_GSI) &&
	    wqe->length > srnic_qp_pmtu(qp))
		return -EMSGSIZE;
	if (wqe->length > SRNIC_MAX_MSG_SZ)
		return -EMSGSIZE;
	return 0;
}

/* Sums SGE lengths; fails on more than SRNIC_MAX_MSG_SZ. */
static int srnic_sge_total(const struct ib_sge *sge, u32 num, u32 *total)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < num; i++)
		sum += sge[i].length;
	if (sum > SRNIC_MAX_MSG_SZ)
		return -EMSGSIZE;
	*total = sum;
	return 0;
}

static void srnic_swqe_reset_progress(struct srnic_send_wqe *wqe)
{
	wqe->state = SRNIC_WQE_POSTED;
	wqe->status = IB_WC_SUCCESS;
	wqe->sent = 0;
	wqe->acked_bytes = 0;
}

/*
 * A DCI's WQE names its target (native ABI: struct srnic_dc_wr_addr at the
 * start of wr.wr.ud.av, include/uapi/rdma/srnic.h): the AH, which must be
 * of the QP's PD, the DCT number and its access key.
 */
static int srnic_swqe_dc_addr(struct srnic_qp *qp, const struct rxe_send_wqe *u,
			      struct srnic_send_wqe *wqe)
{
	struct srnic_dc_wr_addr a;

	BUILD_BUG_ON(sizeof(a) > sizeof(u->wr.wr.ud.av));
	memcpy(&a, &u->wr.wr.ud.av, sizeof(a));
	wqe->remote_qpn = a.dct_num & SRNIC_QPN_MASK;
	wqe->dc_key = a.dc_key;
	if (!a.ah_num)
		return -EINVAL;
	return srnic_ah_lookup_av(qp->sdev, qp->ibqp.pd, a.ah_num, &wqe->av);
}

/*
 * Copy one user WQE from the SQ ring into its shadow. The ring entry is read
 * exactly once (into @u, then the tail), so the user cannot change what was
 * validated.
 */
static int srnic_swqe_from_user(struct srnic_qp *qp, u32 index,
				struct srnic_send_wqe *wqe)
{
	const struct rxe_send_wqe *src = srnic_queue_addr(&qp->sq, index);
	struct rxe_send_wqe u;
	u32 i;

	memcpy(&u, src, sizeof(u));
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = u.wr.wr_id;
	wqe->opcode = u.wr.opcode;
	wqe->send_flags = u.wr.send_flags;
	wqe->ex = (__force u32)u.wr.ex.imm_data;
	srnic_swqe_reset_progress(wqe);

	switch (wqe->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->remote_addr = u.wr.wr.rdma.remote_addr;
		wqe->rkey = u.wr.wr.rdma.rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->remote_addr = u.wr.wr.atomic.remote_addr;
		wqe->rkey = u.wr.wr.atomic.rkey;
		wqe->compare_add = u.wr.wr.atomic.compare_add;
		wqe->swap = u.wr.wr.atomic.swap;
		break;
	case IB_WR_BIND_MW:
		wqe->mw_addr = u.wr.wr.mw.addr;
		wqe->mw_length = u.wr.wr.mw.length;
		wqe->mw_lkey = u.wr.wr.mw.mr_lkey;
		wqe->mw_rkey = u.wr.wr.mw.mw_rkey;
		wqe->mw_new_rkey = u.wr.wr.mw.rkey;
		wqe->mw_access = u.wr.wr.mw.access;
		break;
	default:
		break;
	}

	/* native ABI: an XRC send WQE names its SRQ in wr.reserved */
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI)
		wqe->xrc_srqn = u.wr.reserved & SRNIC_QPN_MASK;
	if (srnic_qp_is_dci(qp) && srnic_swqe_dc_addr(qp, &u, wqe))
		return -EINVAL;
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		wqe->remote_qpn = u.wr.wr.ud.remote_qpn & SRNIC_QPN_MASK;
		wqe->remote_qkey = u.wr.wr.ud.remote_qkey;
		wqe->pkey_index = u.wr.wr.ud.pkey_index;
		if (!u.wr.wr.ud.ah_num ||
		    srnic_ah_lookup_av(qp->sdev, qp->ibqp.pd,
				       u.wr.wr.ud.ah_num, &wqe->av))
			return -EINVAL;
	}

	if (wqe->send_flags & IB_SEND_INLINE) {
		if (u.dma.length > qp->max_inline)
			return -EINVAL;
		wqe->is_inline = true;
		wqe->length = u.dma.length;
		memcpy(wqe->inline_data, src->dma.inline_data, wqe->length);
	} else {
		if (u.dma.num_sge > qp->max_send_sge)
			return -EINVAL;
		wqe->num_sge = u.dma.num_sge;
		for (i = 0; i < wqe->num_sge; i++) {
			struct rxe_sge sge;

			memcpy(&sge, &src->dma.sge[i], sizeof(sge));
			wqe->sge[i].addr = sge.addr;
			wqe->sge[i].length = sge.length;
			wqe->sge[i].lkey = sge.lkey;
		}
		if (srnic_sge_total(wqe->sge, wqe->num_sge, &wqe->length))
			return -EINVAL;
	}
	return srnic_swqe_check(qp, wqe);
}

static int srnic_swqe_from_wr(struct srnic_qp *qp, const struct ib_send_wr *wr,
			      struct srnic_send_wqe *wqe)
{
	u32 i;
	int err;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	srnic_swqe_reset_progress(wqe);

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wqe->ex = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->remote_addr = atomic_wr(wr)->remote_addr;
		wqe->rkey = atomic_wr(wr)->rkey;
		wqe->compare_add = atomic_wr(wr)->compare_add;
		wqe->swap = atomic_wr(wr)->swap;
		break;
	case IB_WR_REG_MR:
		wqe->reg_mr = reg_wr(wr)->mr;
		wqe->reg_key = reg_wr(wr)->key;
		wqe->reg_access = reg_wr(wr)->access;
		break;
	default:
		break;
	}

	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		if (!ud->ah)
			return -EINVAL;
		wqe->remote_qpn = ud->remote_qpn & SRNIC_QPN_MASK;
		wqe->remote_qkey = ud->remote_qkey;
		wqe->pkey_index = ud->pkey_index;
		wqe->av = to_srnic_ah(ud->ah)->av;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *p = wqe->inline_data;

		for (i = 0; i < wr->num_sge; i++) {
			if (wqe->length + wr->sg_list[i].length > qp->max_inline)
				return -EINVAL;
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
			wqe->length += wr->sg_list[i].length;
		}
		wqe->is_inline = true;
	} else {
		if (wr->num_sge > qp->max_send_sge)
			return -EINVAL;
		wqe->num_sge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
		err = srnic_sge_total(wqe->sge, wqe->num_sge, &wqe->length);
		if (err)
			return err;
	}
	return srnic_swqe_check(qp, wqe);
}

/*
 * Copy new user WQEs into the shadow array: at most the ring's free part,
 * whatever the user wrote. A malformed one keeps its error status and
 * fails in its turn (srnic_req_fail()). Returns false if the producer
 * index is corrupt: out of range, or moved back over WQEs fetched already.
 */
static bool srnic_req_fetch(struct srnic_qp *qp)
{
	u32 mask = qp->sq.index_mask;
	u32 n;

	lockdep_assert_held(&qp->req_lock);
	if (!qp->is_user)
		return true;
	if (!srnic_queue_fetch(&qp->sq, qp->req.fetch, &n))
		return false;
	for (; n; n--) {
		struct srnic_send_wqe *wqe = srnic_swqe(qp, qp->req.fetch);

		if (srnic_swqe_from_user(qp, qp->req.fetch, wqe)) {
			srnic_swqe_reset_progress(wqe);
			wqe->status = IB_WC_LOC_QP_OP_ERR;
			srnic_count(qp->sdev, SRNIC_CNT_WQE_FORMAT_ERR);
		}
		trace_srnic_wqe_post(qp->sdev->ib_dev.index, srnic_qpn(qp),
				     wqe->wr_id, wqe->length, wqe->opcode);
		qp->req.fetch = (qp->req.fetch + 1) & mask;
	}
	return true;
}

/*
 * Outgoing packet and its path, handed from the builder to srnic_xmit();
 * without a packet, @fatal: move the QP to the error state, @again: run
 * the TX side again later (out of memory), @odp_wait: fault @odp_miss in
 * (for @odp_access), then run again (srnic_req_odp_fault()).
 */
struct srnic_req_pkt {
	struct sk_buff		*skb;
	unsigned int		pad;
	const struct srnic_av	*av;
	struct srnic_av		ud_av;
	bool			fatal;
	bool			again;
	bool			odp_wait;
	struct ib_sge		odp_miss;
	int			odp_access;
};

/*
 * A walk of a WQE's SGEs stopped with -EAGAIN at @c: a page of an ODP MR is
 * not faulted in. @miss is the rest of the SGE piece there, which
 * srnic_req_odp_fault() faults in.
 */
static void srnic_req_odp_miss(const struct srnic_sge_cursor *c,
			       struct ib_sge *miss)
{
	const struct ib_sge *sge = &c->sge[c->i];

	miss->lkey = sge->lkey;
	miss->addr = sge->addr + c->off;
	miss->length = sge->length - c->off;
}

/*
 * Copy @len bytes of the message of @wqe, from byte @off, into @dst. The
 * local keys are checked here, at use. -EAGAIN: see srnic_req_odp_miss().
 */
static int srnic_wqe_copy_out(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
			      u32 off, void *dst, u32 len, struct ib_sge *miss)
{
	struct srnic_sge_cursor c;
	int err;

	if (wqe->is_inline) {
		memcpy(dst, wqe->inline_data + off, len);
		return 0;
	}
	srnic_sge_cursor_init(&c, qp->sdev, qp->ibqp.pd, wqe->sge,
			      wqe->num_sge, off);
	err = srnic_sge_copy_from(&c, dst, len);
	if (err == -EAGAIN)
		srnic_req_odp_miss(&c, miss);
	return err;
}

/*
 * Zero-copy: attach @len bytes of the message, from byte @off, to @skb as
 * page fragments of the registered memory. -EMSGSIZE: does not fit in
 * fragments, copy instead.
 */
static int srnic_wqe_add_frags(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
			       u32 off, u32 len, struct sk_buff *skb)
{
	struct srnic_sge_cursor c;
	int err;

	srnic_sge_cursor_init(&c, qp->sdev, qp->ibqp.pd, wqe->sge,
			      wqe->num_sge, off);
	err = srnic_sge_add_frags(&c, len, skb);
	if (err)
		return err;
	/* Keep a fragment slot for the pad and ICRC (srnic_xmit()). */
	return skb_shinfo(skb)->nr_frags < MAX_SKB_FRAGS ? 0 : -EMSGSIZE;
}

/*
 * A READ's or an atomic's local buffers in ODP MRs are faulted in before
 * the request goes (the completer places the responses in softirq, where
 * it cannot fault): 0, or -EAGAIN (@out says what to fault in).
 */
static int srnic_req_read_ready(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
				struct srnic_req_pkt *out)
{
	struct srnic_sge_cursor c;
	int err;

	srnic_sge_cursor_init(&c, qp->sdev, qp->ibqp.pd, wqe->sge,
			      wqe->num_sge, 0);
	err = srnic_sge_ready(&c, min_t(u32, wqe->length, SRNIC_ODP_READY_MAX),
			      IB_ACCESS_LOCAL_WRITE);
	if (err != -EAGAIN)
		return 0;	/* any other fault is the completer's to find */
	srnic_req_odp_miss(&c, &out->odp_miss);
	out->odp_access = IB_ACCESS_LOCAL_WRITE;
	return err;
}

/*
 * The payload of the next packet. RC sends straight from the pinned pages
 * of the memory region (the responder has copied the data out before it
 * ACKs, and the completion waits for the ACK). UC and UD complete as soon
 * as the packet is handed to IP, when the user may reuse the buffer while
 * the packet still waits in a queue, so they copy; so do small payloads,
 * where a copy is cheaper than fragments, inline data and ODP MRs' pages.
 * -EAGAIN in *@err: a page of an ODP MR is not faulted in (@out says
 * which), also one that a READ's response will land in.
 */
static struct sk_buff *srnic_req_payload(struct srnic_qp *qp,
					 struct srnic_send_wqe *wqe,
					 unsigned int hdr_len, u32 paylen,
					 struct srnic_req_pkt *out, int *err)
{
	struct sk_buff *skb;

	*err = 0;
	out->odp_access = 0;
	if ((wqe->opcode == IB_WR_RDMA_READ ||
	     srnic_wr_is_atomic(wqe->opcode)) && !wqe->sent &&
	    srnic_req_read_ready(qp, wqe, out)) {
		*err = -EAGAIN;
		return NULL;
	}
	if (srnic_qp_reliable(qp) && !wqe->is_inline &&
	    paylen >= SRNIC_ZCOPY_MIN) {
		skb = srnic_xmit_alloc(hdr_len, 0);
		if (!skb) {
			*err = -ENOMEM;
			return NULL;
		}
		*err = srnic_wqe_add_frags(qp, wqe, wqe->sent, paylen, skb);
		if (!*err)
			return skb;
		kfree_skb(skb);
		if (*err != -EMSGSIZE)
			return NULL;
	}
	skb = srnic_xmit_alloc(hdr_len, paylen);
	if (!skb) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = paylen ? srnic_wqe_copy_out(qp, wqe, wqe->sent,
					   skb_put(skb, paylen), paylen,
					   &out->odp_miss) : 0;
	if (*err) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/* Execute a local operation (no packet) when the SQ reaches it. */
static void srnic_req_local_op(struct srnic_qp *qp, struct srnic_send_wqe *wqe)
{
	struct srnic_dev *sdev = qp->sdev;
	int err = 0;

	switch (wqe->opcode) {
	case IB_WR_LOCAL_INV:
		err = srnic_mem_invalidate(sdev, qp->ibqp.pd, wqe->ex);
		break;
	case IB_WR_REG_MR: {
		struct ib_reg_wr reg = {
			.mr = wqe->reg_mr,
			.key = wqe->reg_key,
			.access = wqe->reg_access,
		};

		err = srnic_mr_fast_reg(sdev, qp->ibqp.pd, &reg);
		break;
	}
	case IB_WR_BIND_MW:
		err = srnic_mw_bind(sdev, qp->ibqp.pd, srnic_qpn(qp),
				    wqe->mw_rkey, wqe->mw_new_rkey, wqe->mw_lkey,
				    wqe->mw_addr, wqe->mw_length,
				    wqe->mw_access);
		break;
	}
	wqe->status = err ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
	if (err && wqe->opcode != IB_WR_BIND_MW)
		wqe->status = IB_WC_LOC_PROT_ERR;
	wqe->state = SRNIC_WQE_DONE;
}

/*
 * Will the WQE after the one at @cur be sent right after it? Only a fetched
 * remote operation, not fenced, on a QP in RTS, and on a DCI only one to
 * the target it is attached to: its packets carry the AckReq
 * (srnic_req_ackreq()). A local operation, a fence, SQD or a DCI's move to
 * another target (which waits for everything sent to be acknowledged) may
 * hold the queue, and the message before would wait for its ACK until the
 * retransmit timer.
 */
static bool srnic_req_next_goes(struct srnic_qp *qp)
{
	u32 next = (qp->req.cur + 1) & qp->sq.index_mask;
	const struct srnic_send_wqe *wqe;

	if (next == qp->req.fetch || srnic_qp_state(qp) != IB_QPS_RTS)
		return false;
	wqe = srnic_swqe(qp, next);
	return wqe->state == SRNIC_WQE_POSTED &&
	       !srnic_wr_is_local(wqe->opcode) &&
	       !(wqe->send_flags & IB_SEND_FENCE) &&
	       (!srnic_qp_is_dci(qp) || srnic_dci_same(qp, wqe));
}

/*
 * May the next packet of @wqe go, as far as an RC QP's window and READ
 * credits (max_rd_atomic) go?
 */
static bool srnic_req_window_open(struct srnic_qp *qp,
				  const struct srnic_send_wqe *wqe)
{
	bool is_read = wqe->opcode == IB_WR_RDMA_READ;

	/*
	 * The window counts from a request's first PSN. A READ resumed part
	 * way (after a rewind) starts inside its own response range, which
	 * may reach past the window: it was let through whole before, and
	 * held back now it could never be asked again (the QP hung, with no
	 * timer running).
	 */
	if (srnic_psn_cmp(is_read && wqe->sent ? wqe->first_psn : qp->req.psn,
			  srnic_psn_add(qp->req.acked_psn,
					SRNIC_MAX_INFLIGHT_PKTS)) >= 0)
		return false;
	/* A READ resumed part way (@sent: the rest) is a request too. */
	if ((is_read || srnic_wr_is_atomic(wqe->opcode)) &&
	    qp->req.rd_outstanding >= max_t(u32, qp->attr.max_rd_atomic, 1))
		return false;
	/* DC: an attachment's first packet goes alone (srnic_dci.c) */
	return !srnic_qp_is_dci(qp) || srnic_dci_window_open(qp);
}

/*
 * May @wqe, at @cur, end without AckReq although no request is sent right
 * after it? When nobody waits for its completion (unsignaled), nothing is
 * posted behind it (which could wait for it: a local operation, a fence),
 * and on a QP in RTS that is not a DCI (SQD and a DCI's move wait for every
 * ACK). The next request that asks for an ACK covers it; if none follows,
 * it is sent again asking for one (srnic_req_probe()).
 */
static bool srnic_req_may_leave_unasked(struct srnic_qp *qp,
					const struct srnic_send_wqe *wqe)
{
	lockdep_assert_held(&qp->req_lock);
	return !srnic_wqe_signaled(qp, wqe) &&
	       ((qp->req.cur + 1) & qp->sq.index_mask) == qp->req.fetch &&
	       !srnic_qp_is_dci(qp) && srnic_qp_state(qp) == IB_QPS_RTS;
}

/*
 * Does the RC packet at @pos of @wqe ask for an ACK? AckReq every
 * SRNIC_ACKREQ_EVERY packets, and on a message's last packet unless
 * another request goes right after it (which then asks for both) or the
 * message is unsignaled with nothing behind it
 * (srnic_req_may_leave_unasked()): one ACK per small message halved the
 * message rate, and perftest, UCX and NFS/RDMA post one WR per doorbell,
 * mostly unsignaled - an ACK each way per message until these were left
 * unasked (ib_send_bw 64 B: 40000 ACKs for 40000 SENDs, then 1600). A
 * probe asks (srnic_req_probe()). While DCQCN slows the QP down, also
 * every eighth of the retransmit timeout, or 64 packets could take longer
 * than the timeout (an ACK for every packet cost the paced sender much of
 * its rate in a VM).
 */
static bool srnic_req_ackreq(struct srnic_qp *qp,
			     const struct srnic_send_wqe *wqe,
			     enum srnic_pkt_pos pos)
{
	bool ackreq;

	/* DC: an attachment's first packet (qp->req.psn) goes alone */
	ackreq = ((pos & SRNIC_POS_LAST) && !srnic_req_next_goes(qp) &&
		  !srnic_req_may_leave_unasked(qp, wqe)) ||
		 qp->req.probe ||
		 (srnic_qp_is_dci(qp) && srnic_dci_attaching(qp, qp->req.psn)) ||
		 ++qp->req.since_ackreq >= SRNIC_ACKREQ_EVERY ||
		 (qp->dcqcn.active &&
		  ktime_get_ns() - qp->req.ackreq_ns >=
		  jiffies_to_nsecs(srnic_req_timeout(qp)) / 8);
	if (ackreq) {
		qp->req.since_ackreq = 0;
		qp->req.probe = false;
		if (qp->dcqcn.active)
			qp->req.ackreq_ns = ktime_get_ns();
	}
	return ackreq;
}

/*
 * Write the extension headers that @flags (the opcode's) name at @p, right
 * after the BTH, in the order srnic_recv_ext_hdrs() reads them (IBA 9.2).
 */
static void srnic_req_ext_hdrs(struct srnic_qp *qp,
			       const struct srnic_send_wqe *wqe, void *p,
			       u32 flags)
{
	if (flags & SRNIC_OPF_XRCETH) {
		srnic_xrceth_set(p, wqe->xrc_srqn);
		p += SRNIC_XRCETH_LEN;
	}
	if (flags & SRNIC_OPF_DCETH) {
		/* the packet's PSN is qp->req.psn still */
		srnic_dceth_set(p, qp->dci.key,
				srnic_dci_flags(qp, qp->req.psn,
						srnic_req_timeout(qp)),
				srnic_qpn(qp), qp->dci.gen);
		p += SRNIC_DCETH_LEN;
	}
	if (flags & SRNIC_OPF_RETH) {
		/* A resumed READ asks for the rest only. */
		if (wqe->opcode == IB_WR_RDMA_READ)
			srnic_reth_set(p, wqe->remote_addr + wqe->sent,
				       wqe->rkey, wqe->length - wqe->sent);
		else
			srnic_reth_set(p, wqe->remote_addr, wqe->rkey,
				       wqe->length);
		p += SRNIC_RETH_LEN;
	}
	if (flags & SRNIC_OPF_DETH) {
		u32 qkey = (wqe->remote_qkey & 0x80000000) ? qp->attr.qkey :
							     wqe->remote_qkey;

		srnic_deth_set(p, qkey, srnic_qpn(qp));
		p += SRNIC_DETH_LEN;
	}
	if (flags & SRNIC_OPF_ATMETH) {
		u64 swap_add = wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			       wqe->swap : wqe->compare_add;

		srnic_atmeth_set(p, wqe->remote_addr, wqe->rkey, swap_add,
				 wqe->compare_add);
		p += SRNIC_ATMETH_LEN;
	}
	if (flags & SRNIC_OPF_IMMDT) {
		memcpy(p, &wqe->ex, SRNIC_IMMDT_LEN);
		p += SRNIC_IMMDT_LEN;
	}
	if (flags & SRNIC_OPF_IETH)
		put_unaligned_be32(wqe->ex, p);
}

/*
 * Retransmit timeout: the QP's local ACK timeout (IBA 9.7.6.1.3: 4.096 us *
 * 2^timeout, 0 meaning infinite) is its lower bound. IBA sets no upper one,
 * and a peer may take longer to answer than the timeout says: a receiver
 * on a loaded or debug kernel (KASAN in a TCG guest: 1-4 ms a packet, so a
 * 64 KiB WRITE is answered 64-256 ms after it was sent, at a 67 ms
 * timeout). Go-back-N on such a timeout resends every byte in flight into
 * the queue that made it late, again and again, up to retry exhaustion
 * (issue 11 finding 8; the debug tier's ib_write_bw: 249 timeouts on a
 * lossless link). So, as TCP (RFC 6298): the timeout is at least the
 * measured round trip plus four times its variation (srnic_req_rtt_*()),
 * doubled by each timeout until a new measurement (at most
 * SRNIC_REQ_BACKOFF_MAX times: a peer that is gone is given up after
 * about 1.8 s at 67 ms and 7 retries, not 0.55 s), and never more than
 * SRNIC_REQ_RTO_MAX_MS unless the QP's own timeout is longer. On a healthy
 * link the round trip is far below the local ACK timeout, which then rules
 * alone.
 */
#define SRNIC_REQ_BACKOFF_MAX	2
#define SRNIC_REQ_RTO_MAX_MS	4000

static unsigned long srnic_req_ack_timeout(struct srnic_qp *qp)
{
	u64 ns;

	if (!qp->attr.timeout)
		return 0;
	/* rounded up: never shorter than IBA's (67.1 ms was 64 at HZ 250) */
	ns = (4096ULL << qp->attr.timeout) + TICK_NSEC - 1;
	return max_t(unsigned long, nsecs_to_jiffies(ns), 2);
}

unsigned long srnic_req_timeout(struct srnic_qp *qp)
{
	unsigned long base = srnic_req_ack_timeout(qp);
	unsigned long t = base;

	if (!base)
		return 0;
	if (qp->req.srtt_us)
		t = max(t, usecs_to_jiffies(qp->req.srtt_us +
					    4 * qp->req.rttvar_us));
	t <<= qp->req.rto_shift;
	return min(t, max(base, msecs_to_jiffies(SRNIC_REQ_RTO_MAX_MS)));
}

/*
 * Time the round trip of the packet @psn, one the responder answers at once
 * (AckReq, a READ or an atomic), if nothing is timed now and it is sent for
 * the first time. A rewind that resends it ends the timing: either copy may
 * be answered (Karn). But not before the first sample: then the first send
 * time is kept, and the answer to either copy measures at least the round
 * trip (an overestimate, which later samples correct). Dropping it, a peer
 * slower than the timeout never gave a sample: each timeout resent the
 * window, the copies queued ahead of the next timed packet, and its answer
 * came after the next timeout again.
 */
static void srnic_req_rtt_start(struct srnic_qp *qp, u32 psn)
{
	lockdep_assert_held(&qp->req_lock);
	if (qp->req.rtt_timing || srnic_psn_cmp(psn, qp->req.max_psn) < 0)
		return;
	qp->req.rtt_timing = true;
	qp->req.rtt_psn = psn;
	qp->req.rtt_start_ns = ktime_get_ns();
}

/**
 * srnic_req_rtt_sample() - fold one round trip into the estimate
 * @qp: the QP, its req_lock held
 * @us: the round trip in µs
 *
 * RFC 6298 2.2 and 2.3, in µs: the first sample sets the smoothed round
 * trip and half of it as its variation; later ones move them by 1/8 and
 * 1/4. A sample ends the backoff.
 */
static void srnic_req_rtt_sample(struct srnic_qp *qp, u32 us)
{
	u32 srtt = qp->req.srtt_us;

	lockdep_assert_held(&qp->req_lock);
	us = clamp_t(u32, us, 1, SRNIC_REQ_RTO_MAX_MS * USEC_PER_MSEC);
	if (!srtt) {
		qp->req.srtt_us = us;
		qp->req.rttvar_us = us / 2;
	} else {
		u32 delta = srtt > us ? srtt - us : us - srtt;

		qp->req.rttvar_us = qp->req.rttvar_us -
				    qp->req.rttvar_us / 4 + delta / 4;
		qp->req.srtt_us = max(srtt - srtt / 8 + us / 8, 1U);
	}
	qp->req.rto_shift = 0;
}

/*
 * An RC request packet that the peer answers at once (AckReq, READ,
 * atomic) leaves: @psn its first PSN, @npsn how many it takes (a READ's
 * responses). It may be timed (srnic_req_rtt_start()), and it is owed an
 * answer. The retransmit timeout counts from the oldest packet owed one,
 * not from the last answer: a sender slower than the timeout (a KASAN
 * guest takes 100 ms to send a 64 KiB WRITE, whose only AckReq is its
 * last packet) is owed nothing while it sends the message's middle, and
 * timing from the last ACK resent what the peer was never asked to answer
 * yet (issue 11 finding 8: the debug tier's test_order, 7 timeouts each
 * 70 ms after the previous message's ACK).
 */
static void srnic_req_owe(struct srnic_qp *qp, u32 psn, u32 npsn)
{
	lockdep_assert_held(&qp->req_lock);
	srnic_req_rtt_start(qp, psn);
	if (!qp->req.owed) {
		qp->req.owed = true;
		qp->req.owed_since = jiffies;
	}
	qp->req.owed_psn = srnic_psn_add(psn, npsn - 1);
}

/**
 * srnic_req_answered() - a response arrived for @psn
 * @qp: the QP, its req_lock held
 * @psn: the response's PSN, below the first PSN never sent
 *
 * An ACK, NAK or READ/atomic response at or past the timed packet answers
 * it (an ACK covers every PSN up to its own), and at or past @owed_psn
 * everything owed. One that answers new PSNs short of it (the peer is
 * working through the window) moves the oldest unanswered send time on;
 * an old duplicate does not.
 */
void srnic_req_answered(struct srnic_qp *qp, u32 psn)
{
	u64 ns;

	lockdep_assert_held(&qp->req_lock);
	if (qp->req.owed) {
		if (srnic_psn_cmp(psn, qp->req.owed_psn) >= 0)
			qp->req.owed = false;
		else if (srnic_psn_cmp(psn, qp->req.acked_psn) >= 0)
			qp->req.owed_since = jiffies;
	}
	if (!qp->req.rtt_timing || srnic_psn_cmp(psn, qp->req.rtt_psn) < 0)
		return;
	qp->req.rtt_timing = false;
	ns = ktime_get_ns() - qp->req.rtt_start_ns;
	srnic_req_rtt_sample(qp, min_t(u64, div_u64(ns, NSEC_PER_USEC),
				       U32_MAX));
}

/*
 * How long an unasked tail waits for the next request before it is probed:
 * two round trips, at least two ticks (one may be nearly over when it is
 * set), at most the timeout.
 */
static unsigned long srnic_req_probe_delay(struct srnic_qp *qp,
					   unsigned long timeout)
{
	unsigned long d = usecs_to_jiffies(2 * qp->req.srtt_us);

	return min(max(d, 2UL), timeout);
}

/*
 * Is the last packet sent the end of a message that did not ask for an
 * ACK, with nothing owed an answer (so no ACK is coming by itself)?
 */
static bool srnic_req_tail_unasked(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->req_lock);
	return qp->req.unasked && !qp->req.owed;
}

/*
 * How long the QP waits for an answer before it acts: the timeout, or with
 * an unasked tail, the probe delay.
 */
static unsigned long srnic_req_wait(struct srnic_qp *qp)
{
	unsigned long t = srnic_req_timeout(qp);

	lockdep_assert_held(&qp->req_lock);
	if (t && srnic_req_tail_unasked(qp))
		t = srnic_req_probe_delay(qp, t);
	return t;
}

/*
 * A packet at @pos, @psn (@npsn PSNs) leaves. On an RC QP, if it @asks for
 * an answer (AckReq, a READ or an atomic), it is owed one; if it ends a
 * message without asking (srnic_req_may_leave_unasked(), or a request
 * right behind it), the retransmit timer comes at the probe delay.
 */
static void srnic_req_asked(struct srnic_qp *qp, bool asks,
			    enum srnic_pkt_pos pos, u32 psn, u32 npsn)
{
	unsigned long t;

	lockdep_assert_held(&qp->req_lock);
	if (!srnic_qp_reliable(qp))
		return;
	if (asks)
		srnic_req_owe(qp, psn, npsn);
	qp->req.unasked = !asks && (pos & SRNIC_POS_LAST);
	if (!qp->req.unasked)
		return;
	qp->req.unasked_idx = qp->req.cur;
	if (!srnic_req_tail_unasked(qp))
		return;
	t = srnic_req_wait(qp);
	if (t)
		timer_reduce(&qp->retrans_timer, jiffies + t);
}

/*
 * Build the next packet of @wqe. Returns 1 when a packet was built, 0 when
 * the window, read credits or pacing stop us, or a negative errno when the
 * WQE cannot be sent (it is then completed in error).
 */
static int srnic_req_build(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
			   struct srnic_req_pkt *out)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	bool rc = srnic_qp_reliable(qp);
	bool ud = type == IB_QPT_UD || type == IB_QPT_GSI;
	bool is_read = wqe->opcode == IB_WR_RDMA_READ;
	bool is_atomic = srnic_wr_is_atomic(wqe->opcode);
	u32 pmtu = srnic_qp_pmtu(qp);
	u32 remaining = wqe->length - wqe->sent;
	u32 paylen, pad, npsn, hdr_len;
	enum srnic_pkt_pos pos = 0;
	struct srnic_bth *bth;
	struct sk_buff *skb;
	int opcode, err;
	bool ackreq;
	u32 psn = qp->req.psn;

	if (rc && !srnic_req_window_open(qp, wqe))
		return 0;

	if (is_read || is_atomic) {
		pos = SRNIC_POS_ONLY;
		paylen = 0;
		npsn = is_read ? max_t(u32, DIV_ROUND_UP(remaining, pmtu), 1) : 1;
	} else {
		paylen = min(remaining, pmtu);
		if (wqe->sent == 0)
			pos |= SRNIC_POS_FIRST;
		if (remaining <= pmtu)
			pos |= SRNIC_POS_LAST;
		npsn = 1;
	}
	opcode = srnic_opcode_for_wr(type, wqe->opcode, pos);
	if (opcode < 0)
		return -EINVAL;
	if (!srnic_sched_pace(qp, paylen + SRNIC_BTH_LEN))
		return 0;

	pad = srnic_pad_count(paylen);
	hdr_len = srnic_opcode_hdr_len(opcode);
	skb = srnic_req_payload(qp, wqe, hdr_len, paylen, out, &err);
	if (!skb)
		return err == -ENOMEM || err == -EAGAIN ? err : -EACCES;

	ackreq = rc && srnic_req_ackreq(qp, wqe, pos);
	bth = (struct srnic_bth *)skb->data;
	srnic_bth_init(bth, opcode,
		       (pos & SRNIC_POS_LAST) &&
		       (wqe->send_flags & IB_SEND_SOLICITED),
		       false, pad, SRNIC_DEFAULT_PKEY,
		       ud ? wqe->remote_qpn : qp->attr.dest_qp_num,
		       ackreq, psn);
	srnic_req_ext_hdrs(qp, wqe, bth + 1, srnic_opcode_info(opcode)->flags);

	if (wqe->sent == 0)
		wqe->first_psn = psn;
	srnic_req_asked(qp, ackreq || is_read || is_atomic, pos, psn, npsn);
	if (is_read || is_atomic)
		qp->req.rd_outstanding++;
	wqe->sent += paylen;
	if (is_read || is_atomic || (pos & SRNIC_POS_LAST)) {
		wqe->last_psn = srnic_psn_add(psn, npsn - 1);
		wqe->state = SRNIC_WQE_SENT;
	} else {
		wqe->state = SRNIC_WQE_SENDING;
	}
	qp->req.psn = srnic_psn_add(psn, npsn);
	if (srnic_psn_cmp(qp->req.psn, qp->req.max_psn) > 0)
		qp->req.max_psn = qp->req.psn;

	out->skb = skb;
	out->pad = pad;
	if (ud) {
		out->ud_av = wqe->av;
		out->av = &out->ud_av;
	} else {
		out->av = &qp->av;
	}
	return 1;
}

/*
 * Nothing in flight: every PSN sent is acknowledged and no sent WQE waits
 * for its completion. The PSNs alone do not say it: a READ or atomic may
 * be covered by a later ACK without its response, and a rewind may resend
 * PSNs below acked_psn.
 */
bool srnic_req_idle(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->req_lock);
	return qp->req.acked_psn == qp->req.psn && !qp->req.need_retry &&
	       qp->req.oldest == qp->req.cur;
}

/**
 * srnic_req_has_work() - has the send queue anything to start or finish?
 * @qp: the QP; its req_lock not held
 *
 * WQEs not completed yet (fetched, sent or not), a resend asked for, or on
 * a user QP WQEs in the ring beyond what was fetched (any other producer
 * value too: the run finds a corrupt one and fails the QP). The transition
 * to RTS kicks the transmit side only then: with an empty SQ a run finds
 * nothing, and at scale that is a work item per connected QP for nothing.
 *
 * Return: true if a run of the transmit side may have something to do.
 */
bool srnic_req_has_work(struct srnic_qp *qp)
{
	bool work;

	spin_lock_bh(&qp->req_lock);
	work = qp->req.oldest != qp->req.fetch || qp->req.need_retry ||
	       (qp->is_user &&
		READ_ONCE(qp->sq.buf->producer_index) != qp->req.fetch);
	spin_unlock_bh(&qp->req_lock);
	return work;
}

void srnic_req_arm_timer(struct srnic_qp *qp)
{
	unsigned long t = srnic_req_wait(qp);

	lockdep_assert_held(&qp->req_lock);
	if (!t)
		return;
	qp->req.timer_due = jiffies + t;
	qp->req.timer_graces = 0;
	mod_timer(&qp->retrans_timer, qp->req.timer_due);
}

/*
 * How many timeouts an expiry may be put off while this QP's packets are
 * still in the local stack; at the default local ACK timeout (67 ms) about
 * half a second in all. Bounded: a queue that never lets go of a packet
 * (a stuck driver) must not keep the QP from its retries for ever.
 */
#define SRNIC_REQ_GRACES_MAX	8

/*
 * Is the expiry of the retransmit timer no evidence of loss (yet)? Two
 * cases, measured in a loaded TCG guest on a lossless link, where they made
 * every spurious timeout (issue 11 finding 8):
 * - it fired late, past the timer wheel's slack (an eighth): the CPU did
 *   not run for a while, and the answers that came meanwhile wait in a
 *   receive backlog. The timer softirq runs before NET_RX's, so acting now
 *   resent what was answered (seen: 21 to 480 ms late at a 67 ms timeout,
 *   nothing received for as long). Put off once;
 * - packets of this QP are still in the local stack (srnic_sched.c): they
 *   have not reached the peer, which cannot have answered them (seen: 16).
 *   Put off as long as that lasts, up to SRNIC_REQ_GRACES_MAX timeouts: a
 *   slow receiver on the same host (a KASAN guest: 1-4 ms a packet, so
 *   64-256 ms until a 64 KiB WRITE's ACK) keeps a few of them queued for
 *   longer than the timeout, and go-back-N would resend every byte in
 *   flight into that queue, up to retry exhaustion (debug tier, ib_write_bw
 *   and ib_read_bw at 64 KiB).
 * Then the timer is put off by a timeout, and the decision is taken at the
 * next expiry: a response meanwhile rearms it as usual, real loss is acted
 * on once the local queue has let go of the QP's packets (a lost packet
 * mid-stream is NAKed by the responder when the next one arrives; the
 * timer is for a lost tail). IBA's local ACK timeout is a lower bound.
 */
static bool srnic_req_timer_grace(struct srnic_qp *qp)
{
	unsigned long t = srnic_req_timeout(qp);
	bool late, queued;

	lockdep_assert_held(&qp->req_lock);
	if (!t || qp->req.timer_graces >= SRNIC_REQ_GRACES_MAX)
		return false;
	late = time_after(jiffies, qp->req.timer_due + t / 8 + 1);
	queued = atomic_read(&qp->tx_skbs);
	if (!queued && (!late || qp->req.timer_graces))
		return false;
	qp->req.timer_graces++;
	qp->req.timer_due = jiffies + t;
	mod_timer(&qp->retrans_timer, qp->req.timer_due);
	return true;
}

/*
 * Is the timeout not over yet, counted from the oldest packet whose answer
 * is owed (srnic_req_owe()), or with none owed from the last packet sent?
 * Then the timer is set for then. Bounded: the oldest owed time moves only
 * with answers to new PSNs, and the requester sends without one owed at
 * most SRNIC_ACKREQ_EVERY packets.
 */
static bool srnic_req_timer_early(struct srnic_qp *qp)
{
	unsigned long t = srnic_req_wait(qp);
	unsigned long due;

	lockdep_assert_held(&qp->req_lock);
	if (!t)
		return false;
	due = (qp->req.owed ? qp->req.owed_since :
	       READ_ONCE(qp->req.last_tx)) + t;
	if (!time_before(jiffies, due))
		return false;
	qp->req.timer_due = due;
	mod_timer(&qp->retrans_timer, due);
	return true;
}

/* Go-back-N: post the WQEs from slot @i on again, to be sent whole. */
static void srnic_req_repost_from(struct srnic_qp *qp, u32 i)
{
	u32 mask = qp->sq.index_mask;

	lockdep_assert_held(&qp->req_lock);
	for (; i != qp->req.fetch; i = (i + 1) & mask) {
		struct srnic_send_wqe *wqe = srnic_swqe(qp, i);

		/*
		 * Resent in PSN order from here, also a READ or atomic that
		 * is done already (answered out of order): skipping it gave
		 * every WQE after it the PSNs of the one before, so that the
		 * responder took a READ for another, answered it with that
		 * one's data (or, checking the VA, never) and the QP died
		 * of retry exhaustion. Failed WQEs (no PSNs) stay done.
		 */
		if (srnic_wr_is_local(wqe->opcode) ||
		    (wqe->state == SRNIC_WQE_DONE &&
		     wqe->status != IB_WC_SUCCESS))
			continue;
		if (wqe->state != SRNIC_WQE_POSTED) {
			srnic_count(qp->sdev, SRNIC_CNT_RETRANSMITS);
			qp->req.retransmits++;
		}
		wqe->state = SRNIC_WQE_POSTED;
		wqe->sent = 0;
		wqe->acked_bytes = 0;
	}
}

/* Rewind to the oldest unacknowledged WQE for go-back-N. */
static void srnic_req_rewind(struct srnic_qp *qp)
{
	struct srnic_send_wqe *resume = NULL;
	u32 mask = qp->sq.index_mask;
	u32 read_done = 0;
	u32 i;

	lockdep_assert_held(&qp->req_lock);
	qp->req.need_retry = false;
	/* What is resent is owed again, from when it leaves. */
	qp->req.owed = false;
	qp->req.unasked = false;
	qp->req.probe_due = false;
	qp->req.probe = false;
	/* Either copy may be answered: no sample (srnic_req_rtt_start()) */
	if (qp->req.srtt_us)
		qp->req.rtt_timing = false;
	/*
	 * The first WQE with packets on the wire that is not complete - it
	 * may be the one still being sent, at @cur - is where we go back to.
	 */
	for (i = qp->req.oldest; i != qp->req.fetch; i = (i + 1) & mask) {
		struct srnic_send_wqe *wqe = srnic_swqe(qp, i);

		if (wqe->state == SRNIC_WQE_DONE || srnic_wr_is_local(wqe->opcode))
			continue;
		if (wqe->state != SRNIC_WQE_POSTED)
			resume = wqe;
		break;
	}
	if (!resume)
		return;		/* nothing was sent: nothing to resend */
	qp->req.cur = i;
	qp->req.psn = resume->first_psn;
	qp->req.rd_outstanding = 0;
	if (resume->opcode == IB_WR_RDMA_READ)
		read_done = resume->acked_bytes;
	srnic_req_repost_from(qp, i);
	/*
	 * A READ resumes at its first missing response: the request asks
	 * for the rest only, from that PSN (IBA 9.7.4.1.4; the responder
	 * answers it from its replay entry). Asked again whole, a long READ
	 * on a lossy link hardly ever got all its responses through.
	 */
	if (read_done) {
		resume->acked_bytes = read_done;
		resume->sent = read_done;
		qp->req.psn = srnic_psn_add(resume->first_psn,
					    read_done / srnic_qp_pmtu(qp));
	}
	/*
	 * A SEND or WRITE resumes at the first unacknowledged PSN: the
	 * responder holds the message state up to there (IBA 9.7.4.1.4).
	 * Atomics are asked again whole.
	 */
	if (srnic_psn_cmp(qp->req.acked_psn, resume->first_psn) > 0 &&
	    resume->opcode != IB_WR_RDMA_READ &&
	    !srnic_wr_is_atomic(resume->opcode)) {
		u32 pmtu = srnic_qp_pmtu(qp);
		u32 done = (qp->req.acked_psn - resume->first_psn) &
			   SRNIC_PSN_MASK;

		/*
		 * An ACK that came while this WQE was being resent (not SENT,
		 * so srnic_comp_ack_psn() left it) may cover all of it and
		 * more. Resuming past its end overran the message (a copy
		 * error that stopped the QP): send it again whole instead;
		 * the responder ACKs the duplicate and that completes it.
		 */
		if (done < DIV_ROUND_UP(resume->length, pmtu)) {
			resume->sent = done * pmtu;
			resume->state = SRNIC_WQE_SENDING;
			qp->req.psn = qp->req.acked_psn;
		}
	}
	trace_srnic_retransmit(qp->sdev->ib_dev.index, srnic_qpn(qp),
			       qp->req.psn, qp->req.retx_cause);
}

/*
 * Tail probe: the last packet sent ended an unsignaled message without
 * AckReq and nothing followed it (the timer at the probe delay, or a local
 * operation that must wait for its completion). That packet is sent again,
 * asking for an ACK: the responder answers the duplicate with an ACK for
 * everything it has, or, if packets before it were lost, with a sequence
 * NAK (go-back-N then). Not a retransmit: no retry is used up. Counted
 * tail_probes.
 */
static void srnic_req_probe(struct srnic_qp *qp)
{
	struct srnic_send_wqe *wqe = srnic_swqe(qp, qp->req.unasked_idx);
	u32 pmtu = srnic_qp_pmtu(qp);

	lockdep_assert_held(&qp->req_lock);
	qp->req.probe_due = false;
	if (!srnic_req_tail_unasked(qp))
		return;
	qp->req.unasked = false;
	/* acknowledged meanwhile, or not what was sent last */
	if (wqe->state != SRNIC_WQE_SENT ||
	    srnic_psn_add(wqe->last_psn, 1) != qp->req.psn)
		return;
	srnic_count(qp->sdev, SRNIC_CNT_TAIL_PROBES);
	wqe->sent = (max_t(u32, DIV_ROUND_UP(wqe->length, pmtu), 1) - 1) * pmtu;
	wqe->state = SRNIC_WQE_SENDING;
	qp->req.cur = qp->req.unasked_idx;
	qp->req.psn = wqe->last_psn;
	qp->req.probe = true;
}

static void srnic_req_flush_locked(struct srnic_qp *qp);

/*
 * The WQE at @cur fails with @status: a malformed WR (IBA 10.8.3), a bad
 * local key or range (10.7.3.1 local protection error). It completes with
 * that status and takes the QP to the error state, which flushes the rest
 * (o10-2.1). It moves past @cur so that it retires.
 */
static void srnic_req_fail(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
			   enum ib_wc_status status, struct srnic_req_pkt *pkt)
{
	lockdep_assert_held(&qp->req_lock);
	wqe->status = status;
	wqe->state = SRNIC_WQE_DONE;
	qp->req.cur = (qp->req.cur + 1) & qp->sq.index_mask;
	qp->req.stopped = true;
	pkt->fatal = true;
}

/*
 * A WQE malformed when fetched (@wqe, at @cur) fails in its turn, once the
 * WQEs before it have their answers - the completer kicks the requester
 * then - so that they complete as they would have without it.
 */
static void srnic_req_malformed(struct srnic_qp *qp,
				struct srnic_send_wqe *wqe,
				struct srnic_req_pkt *pkt)
{
	u32 i;

	lockdep_assert_held(&qp->req_lock);
	for (i = qp->req.oldest; i != qp->req.cur;
	     i = (i + 1) & qp->sq.index_mask)
		if (srnic_swqe(qp, i)->state != SRNIC_WQE_DONE)
			return;		/* sent: its ACK is to come */
	srnic_req_fail(qp, wqe, wqe->status, pkt);
}

/*
 * May the requester send (state, stopped, RNR wait)? Rewinds for a retry
 * and fetches what was posted first. Flushes in the error state.
 */
static bool srnic_req_may_go(struct srnic_qp *qp, enum ib_qp_state state,
			     struct srnic_req_pkt *pkt)
{
	lockdep_assert_held(&qp->req_lock);
	if (state == IB_QPS_ERR) {
		/* WQEs posted in the error state are flushed (IBA 10.8.3.2). */
		srnic_req_flush_locked(qp);
		return false;
	}
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;
	if (qp->req.stopped || qp->req.rnr_wait)
		return false;
	if (qp->req.need_retry)
		srnic_req_rewind(qp);
	else if (qp->req.probe_due)
		srnic_req_probe(qp);
	if (!srnic_req_fetch(qp)) {
		/* The user broke the SQ's producer index: the QP fails. */
		srnic_count(qp->sdev, SRNIC_CNT_RING_INDEX_ERR);
		qp->req.stopped = true;
		pkt->fatal = true;
		return false;
	}
	return true;
}

/*
 * Past a fully sent WQE (@wqe, at @cur) at once, so that an ACK racing with
 * the transmission finds it outstanding. UC and UD need no ACK: done once
 * the last packet is out.
 */
static void srnic_req_past_sent(struct srnic_qp *qp,
				struct srnic_send_wqe *wqe)
{
	lockdep_assert_held(&qp->req_lock);
	if (!srnic_qp_reliable(qp))
		wqe->state = SRNIC_WQE_DONE;
	/*
	 * Resent after a rewind, a SEND or WRITE may be acknowledged
	 * already: the ACK came while it was at @cur, where
	 * srnic_comp_ack_psn() does not look, and no other ACK may come.
	 * Complete it.
	 */
	else if (!srnic_wr_is_read_atomic(wqe->opcode) &&
		 srnic_psn_cmp(wqe->last_psn, qp->req.acked_psn) < 0)
		wqe->state = SRNIC_WQE_DONE;
	qp->req.cur = (qp->req.cur + 1) & qp->sq.index_mask;
}

/*
 * Build the next packet to send, or return NULL. Advances @cur past WQEs
 * that are fully sent, completes local operations and UC/UD sends.
 */
static struct sk_buff *srnic_req_next(struct srnic_qp *qp,
				      struct srnic_req_pkt *pkt)
{
	u32 mask = qp->sq.index_mask;
	enum ib_qp_state state = srnic_qp_state(qp);

	lockdep_assert_held(&qp->req_lock);
	if (!srnic_req_may_go(qp, state, pkt))
		return NULL;

	while (qp->req.cur != qp->req.fetch) {
		struct srnic_send_wqe *wqe = srnic_swqe(qp, qp->req.cur);
		int ret;

		if (wqe->state == SRNIC_WQE_DONE ||
		    wqe->state == SRNIC_WQE_SENT) {
			qp->req.cur = (qp->req.cur + 1) & mask;
			continue;
		}
		if (state == IB_QPS_SQD && wqe->state == SRNIC_WQE_POSTED)
			return NULL;
		if (unlikely(wqe->status != IB_WC_SUCCESS)) {
			srnic_req_malformed(qp, wqe, pkt);
			return NULL;
		}
		/* IBA 10.8.3.3: a fenced WR waits for earlier READs/atomics. */
		if ((wqe->send_flags & IB_SEND_FENCE) && qp->req.rd_outstanding &&
		    wqe->state == SRNIC_WQE_POSTED)
			return NULL;
		if (srnic_wr_is_local(wqe->opcode)) {
			/* its completion waits for the unasked one's ACK */
			if (srnic_req_tail_unasked(qp)) {
				srnic_req_probe(qp);
				continue;
			}
			srnic_req_local_op(qp, wqe);
			continue;
		}
		/* Local backpressure: see srnic_sched.c. */
		if (srnic_sched_full(qp))
			return NULL;
		if (srnic_qp_is_dci(qp)) {
			ret = srnic_dci_prepare(qp, wqe, srnic_req_idle(qp),
						&pkt->skb, &pkt->ud_av);
			if (ret == 2) {
				/* a DETACH first, on the old path */
				pkt->av = &pkt->ud_av;
				pkt->pad = 0;
				return pkt->skb;
			}
			if (ret == 0)
				return NULL;
		}
		ret = srnic_req_build(qp, wqe, pkt);
		if (ret == 0)
			return NULL;
		if (ret == -ENOMEM) {
			/* Nothing changed: try again from the work item. */
			pkt->again = true;
			return NULL;
		}
		if (ret == -EAGAIN) {
			/* Nothing changed: fault in, then try again. */
			pkt->odp_wait = true;
			return NULL;
		}
		if (ret < 0) {
			srnic_req_fail(qp, wqe,
				       ret == -EACCES ? IB_WC_LOC_PROT_ERR :
				       ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
							  IB_WC_LOC_QP_OP_ERR,
				       pkt);
			return NULL;
		}
		if (wqe->state == SRNIC_WQE_SENT)
			srnic_req_past_sent(qp, wqe);
		return pkt->skb;
	}
	return NULL;
}

/*
 * The next packet needs a page of an ODP MR that is not faulted in
 * (@pkt->odp_miss). Only the QP's work item faults it in: it holds no
 * lock and may sleep (a run in softirq may not, and a system call's run
 * may hold locks that must not wait for the mmap lock). Returns true: run
 * again. A fault that fails marks the pages, and the WQE then fails with a
 * local protection error.
 */
static bool srnic_req_odp_fault(struct srnic_qp *qp, struct srnic_req_pkt *pkt)
{
	struct srnic_sge_cursor c;

	if (current_work() != &qp->tx_work)
		return true;
	srnic_sge_cursor_init(&c, qp->sdev, qp->ibqp.pd, &pkt->odp_miss, 1, 0);
	srnic_sge_fault(&c, pkt->odp_access);
	return true;
}

/* The requester's turn in a run of the TX scheduler. */
static bool srnic_req_tx(struct srnic_qp *qp, struct srnic_tx_run *run)
{
	struct srnic_req_pkt pkt;
	struct sk_buff *skb;

	for (; run->budget; run->budget--) {
		pkt.fatal = false;
		pkt.again = false;
		pkt.odp_wait = false;
		spin_lock_bh(&qp->req_lock);
		skb = srnic_req_next(qp, &pkt);
		/*
		 * Every packet needs a running timer, not only the first of
		 * this pass: an ACK for all sent so far (srnic_comp_rcv())
		 * stops it mid-pass, and if the packets sent after that were
		 * lost, nothing would ever resend them. So does a stop with
		 * requests outstanding (window, read credits, pacing), or a
		 * lost response would leave the QP waiting for ever.
		 */
		if (srnic_qp_reliable(qp) &&
		    !timer_pending(&qp->retrans_timer) &&
		    (skb || (!pkt.fatal && !qp->req.stopped &&
			     !qp->req.rnr_wait && !srnic_req_idle(qp))))
			srnic_req_arm_timer(qp);
		/* UD/UC sends and local operations complete here */
		if (srnic_comp_retire(qp))
			pkt.fatal = true;
		spin_unlock_bh(&qp->req_lock);
		if (!skb) {
			if (pkt.fatal)
				srnic_qp_error(qp);
			if (pkt.odp_wait)
				return srnic_req_odp_fault(qp, &pkt);
			return pkt.again;
		}
		srnic_sched_send(run, pkt.av, skb, pkt.pad);
		/* after the stack took it: sending may be what is slow */
		WRITE_ONCE(qp->req.last_tx, jiffies);
		if (pkt.fatal) {
			srnic_qp_error(qp);
			return false;
		}
	}
	return true;
}

int srnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	enum ib_qp_state state = srnic_qp_state(qp);
	u32 mask = qp->sq.index_mask;
	unsigned long flags;
	int err = 0;

	/* an XRC target or a DCT has no send queue of its own */
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR || ibqp->qp_type == IB_QPT_XRC_TGT ||
	    qp->dc == SRNIC_DC_DCT) {
		if (bad_wr)
			*bad_wr = wr;
		return -EINVAL;
	}

	if (qp->is_user) {
		/* rdma-core's doorbell: new WQEs are in the ring. */
		if (wr)
			return -EINVAL;
		srnic_sched_kick_now(qp);
		return 0;
	}

	/*
	 * A kernel ULP may post with interrupts off: ib_mad does, under its
	 * send queue's spin_lock_irqsave() (every RDMA-CM connect). A BH
	 * unlock there enabled softirqs with interrupts off (the debug tier's
	 * "WARNING: ... __local_bh_enable_ip" from rping). With interrupts off
	 * no softirq can take req_lock on this CPU either.
	 */
	spin_lock_irqsave(&qp->req_lock, flags);
	for (; wr; wr = wr->next) {
		u32 next = (qp->req.fetch + 1) & mask;
		struct srnic_send_wqe *wqe;

		if (srnic_queue_kfull(&qp->sq)) {
			err = -ENOMEM;
			break;
		}
		wqe = srnic_swqe(qp, qp->req.fetch);
		err = srnic_swqe_from_wr(qp, wr, wqe);
		if (err)
			break;
		trace_srnic_wqe_post(qp->sdev->ib_dev.index, srnic_qpn(qp),
				     wqe->wr_id, wqe->length, wqe->opcode);
		srnic_queue_kadvance_producer(&qp->sq);
		qp->req.fetch = next;
	}
	spin_unlock_irqrestore(&qp->req_lock, flags);
	if (err && bad_wr)
		*bad_wr = wr;
	srnic_sched_kick(qp);
	return err;
}

/*
 * Re-pathing (protective load balancing): after the device's
 * repath_timeouts timeouts in a row without progress, an RC QP moves to a
 * new UDP source port, which ECMP may hash onto another path; a timeout
 * that does so does not use up retry_cnt, at most SRNIC_REPATH_MAX times a
 * stall (srnic_req_progress() ends one). Returns whether it re-pathed.
 */
static bool srnic_req_repath(struct srnic_qp *qp)
{
	u32 n = READ_ONCE(qp->sdev->repath_timeouts);

	lockdep_assert_held(&qp->req_lock);
	if (!n || !srnic_qp_reliable(qp))
		return false;
	if (++qp->req.stall_timeouts < n)
		return false;
	qp->req.stall_timeouts = 0;
	if (qp->req.stall_repaths >= SRNIC_REPATH_MAX)
		return false;
	qp->req.stall_repaths++;
	srnic_qp_repath(qp);
	return true;
}

void srnic_req_retrans_timer(struct timer_list *t)
{
	struct srnic_qp *qp = timer_container_of(qp, t, retrans_timer);

	spin_lock_bh(&qp->req_lock);
	if (srnic_req_idle(qp) || srnic_req_timer_early(qp)) {
		spin_unlock_bh(&qp->req_lock);
		return;
	}
	/* an unasked tail and nothing after it: ask (no sign of loss) */
	if (srnic_req_tail_unasked(qp)) {
		qp->req.probe_due = true;
		spin_unlock_bh(&qp->req_lock);
		srnic_sched_kick_now(qp);
		return;
	}
	if (srnic_req_timer_grace(qp)) {
		/* Nothing outstanding, or no sign of loss yet. */
		spin_unlock_bh(&qp->req_lock);
		return;
	}
	srnic_count(qp->sdev, SRNIC_CNT_RETRANS_TIMEOUTS);
	/* a timeout that takes a new path does not use up retry_cnt */
	if (!srnic_req_repath(qp)) {
		if (qp->req.retry_left == 0) {
			srnic_comp_fail_oldest(qp, IB_WC_RETRY_EXC_ERR);
			srnic_count(qp->sdev, SRNIC_CNT_RETRY_EXCEEDED);
			spin_unlock_bh(&qp->req_lock);
			srnic_qp_error(qp);
			return;
		}
		qp->req.retry_left--;
	}
	if (qp->req.rto_shift < SRNIC_REQ_BACKOFF_MAX)
		qp->req.rto_shift++;
	qp->req.need_retry = true;
	qp->req.retx_cause = SRNIC_RETX_TIMEOUT;
	/* A READ gap asked for once may be asked for again. */
	qp->req.gap_valid = false;
	spin_unlock_bh(&qp->req_lock);
	srnic_sched_kick_now(qp);
}

void srnic_req_rnr_timer(struct timer_list *t)
{
	struct srnic_qp *qp = timer_container_of(qp, t, rnr_timer);

	spin_lock_bh(&qp->req_lock);
	qp->req.rnr_wait = false;
	qp->req.need_retry = true;
	qp->req.retx_cause = SRNIC_RETX_RNR_NAK;
	spin_unlock_bh(&qp->req_lock);
	srnic_sched_kick_now(qp);
}

/* Complete every WQE still in the send queue with IB_WC_WR_FLUSH_ERR. */
static void srnic_req_flush_locked(struct srnic_qp *qp)
{
	u32 mask = qp->sq.index_mask;
	u32 i;

	lockdep_assert_held(&qp->req_lock);
	srnic_req_fetch(qp);
	for (i = qp->req.oldest; i != qp->req.fetch; i = (i + 1) & mask) {
		struct srnic_send_wqe *wqe = srnic_swqe(qp, i);

		if (wqe->state != SRNIC_WQE_DONE) {
			wqe->status = IB_WC_WR_FLUSH_ERR;
			wqe->state = SRNIC_WQE_DONE;
		}
	}
	qp->req.cur = qp->req.fetch;
	qp->req.stopped = true;
	srnic_comp_retire(qp);
}

static void srnic_req_flush(struct srnic_qp *qp)
{
	spin_lock_bh(&qp->req_lock);
	srnic_req_flush_locked(qp);
	spin_unlock_bh(&qp->req_lock);
	timer_delete(&qp->retrans_timer);
	timer_delete(&qp->rnr_timer);
}

/* Nothing sent waits for its answer (srnic_sched_claim_cpu()). */
static bool srnic_req_quiet(struct srnic_qp *qp)
{
	bool quiet;

	spin_lock_bh(&qp->req_lock);
	quiet = srnic_req_idle(qp);
	spin_unlock_bh(&qp->req_lock);
	return quiet;
}

const struct srnic_producer srnic_req_producer = {
	.budget = SRNIC_REQ_TX_BUDGET,
	.trains = true,
	.tx = srnic_req_tx,
	.quiet = srnic_req_quiet,
	.flush = srnic_req_flush,
};
