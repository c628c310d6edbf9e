// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send path: work requests become struct rxe_send_wqe entries in the
 * mapped send queue, then one empty POST_SEND command (the doorbell) tells
 * the kernel there is work.
 *
 * What the kernel reads from an entry (kernel/srnic_req.c
 * srnic_swqe_from_user()): wr.wr_id, wr.opcode, wr.send_flags, wr.ex, the
 * rdma/atomic/ud part of wr.wr for the opcode and QP type, and dma.length
 * with the inline bytes, or dma.num_sge with the scatter list. It checks
 * all of it again and completes a bad entry in error; the checks here turn
 * the same mistakes into an immediate EINVAL with *bad_wr set, as verbs
 * users expect, and keep every write inside the slot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "srnic.h"

/* Opcodes a user QP of each type may post (the kernel's srnic_wr_allowed()). */
bool srnic_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	/*
	 * XRC and a DCI (srnicdv.h): RC's remote operations, no invalidation,
	 * no local ops
	 */
	if (type == IBV_QPT_XRC_SEND || type == IBV_QPT_DRIVER)
		return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
		       op == IBV_WR_RDMA_WRITE ||
		       op == IBV_WR_RDMA_WRITE_WITH_IMM ||
		       op == IBV_WR_RDMA_READ ||
		       op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
	/* an XRC receive QP sends nothing */
	if (type == IBV_QPT_XRC_RECV)
		return false;
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

static bool srnic_opcode_is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static uint64_t srnic_wr_length(const struct ibv_send_wr *wr)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	return total;
}

/* The checks that need no ring: EINVAL for a WR the kernel would fail. */
static int srnic_send_wr_check(const struct srnic_qp *qp,
			       const struct ibv_send_wr *wr)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	uint64_t len;

	/* a DCI's target is set through the ibv_wr_*() API only (srnicdv.h) */
	if (!srnic_opcode_ok(type, wr->opcode) || type == IBV_QPT_DRIVER)
		return EINVAL;
	/* a bind carries no data: its scatter list is not read */
	if (wr->opcode == IBV_WR_BIND_MW)
		return srnic_bind_check(&qp->vqp.qp, wr->bind_mw.mw,
					wr->bind_mw.rkey,
					&wr->bind_mw.bind_info);
	if (wr->num_sge < 0)
		return EINVAL;
	/* inline data may gather from more buffers than a WQE has SGEs */
	if (!(wr->send_flags & IBV_SEND_INLINE) &&
	    (uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	len = srnic_wr_length(wr);
	if (len > UINT32_MAX)
		return EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    (len > qp->max_inline || srnic_opcode_is_atomic(wr->opcode) ||
	     wr->opcode == IBV_WR_RDMA_READ))
		return EINVAL;
	/* IBA 9.4.5: an atomic operates on 8 aligned bytes */
	if (srnic_opcode_is_atomic(wr->opcode) &&
	    (len != sizeof(uint64_t) || (wr->wr.atomic.remote_addr & 7)))
		return EINVAL;
	if (type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	return 0;
}

/* The opcode-specific part of the entry. */
static void srnic_wqe_fill_wr(struct rxe_send_wqe *wqe,
			      const struct ibv_send_wr *wr,
			      enum ibv_qp_type type)
{
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->wr.ex.imm_data = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		wqe->wr.ex.invalidate_rkey = wr->invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->wr.wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	default:
		break;
	}

	/* native ABI: the XRC SRQ at the target, in wr.reserved (srnic.h) */
	if (type == IBV_QPT_XRC_SEND)
		wqe->wr.reserved = wr->qp_type.xrc.remote_srqn;
	if (type == IBV_QPT_UD) {
		/* the kernel resolves the path from the AH number, per PD */
		wqe->wr.wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		wqe->wr.wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		wqe->wr.wr.ud.ah_num = to_srnic_ah(wr->wr.ud.ah)->ah_num;
	}
}

/* Inline: the bytes themselves follow the entry (checked to fit). */
static void srnic_wqe_fill_inline(struct rxe_send_wqe *wqe,
				  const struct ibv_send_wr *wr)
{
	uint8_t *p = wqe->dma.inline_data;
	uint32_t total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *sge = &wr->sg_list[i];

		memcpy(p, (const void *)(uintptr_t)sge->addr, sge->length);
		p += sge->length;
		total += sge->length;
	}
	wqe->dma.length = total;
	wqe->dma.resid = total;
}

static void srnic_wqe_fill_sges(struct rxe_send_wqe *wqe,
				const struct ibv_send_wr *wr)
{
	uint32_t total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		wqe->dma.sge[i].addr = wr->sg_list[i].addr;
		wqe->dma.sge[i].length = wr->sg_list[i].length;
		wqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
		total += wr->sg_list[i].length;
	}
	wqe->dma.num_sge = wr->num_sge;
	wqe->dma.length = total;
	wqe->dma.resid = total;
}

static void srnic_wqe_fill(struct rxe_send_wqe *wqe,
			   const struct ibv_send_wr *wr,
			   enum ibv_qp_type type)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr.wr_id = wr->wr_id;
	wqe->wr.opcode = wr->opcode;
	wqe->wr.send_flags = wr->send_flags;
	if (wr->opcode == IBV_WR_BIND_MW) {
		srnic_wqe_fill_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
				    &wr->bind_mw.bind_info);
		return;
	}
	srnic_wqe_fill_wr(wqe, wr, type);
	if (wr->send_flags & IBV_SEND_INLINE)
		srnic_wqe_fill_inline(wqe, wr);
	else
		srnic_wqe_fill_sges(wqe, wr);
}

/* The doorbell: an empty POST_SEND (kernel: srnic_post_send(), user QP). */
int srnic_sq_doorbell(struct srnic_qp *qp)
{
	struct ibv_send_wr *bad;

	return ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
}

int srnic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	enum ibv_qp_state state = __atomic_load_n(&qp->state,
						  __ATOMIC_RELAXED);
	struct ibv_send_wr *first = wr;
	struct rxe_send_wqe *wqe;
	unsigned int posted = 0;
	int err = 0, bell;

	/* IBA 10.8.3.1: no send WR before RTS (the kernel refuses the bell) */
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT ||
	    state == IBV_QPS_RTR) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq_lock);
	for (; wr; wr = wr->next) {
		err = srnic_send_wr_check(qp, wr);
		if (err)
			break;
		wqe = srnic_ring_produce_slot(&qp->sq);
		if (!wqe) {
			err = ENOMEM;
			break;
		}
		srnic_wqe_fill(wqe, wr, ibqp->qp_type);
		srnic_ring_produce(&qp->sq);
		/* the next bind names the window by this key (srnic_mw.c) */
		if (wr->opcode == IBV_WR_BIND_MW)
			wr->bind_mw.mw->rkey = wr->bind_mw.rkey;
		posted++;
	}
	pthread_spin_unlock(&qp->sq_lock);
	if (err)
		*bad_wr = wr;
	/* the WRs before a bad one are posted and must run */
	if (!posted)
		return err;
	bell = srnic_sq_doorbell(qp);
	if (bell) {
		/*
		 * Refused only if another thread moved the QP back to RESET,
		 * INIT or RTR meanwhile: RESET emptied the ring, so none of
		 * this call's WRs will run.
		 */
		*bad_wr = first;
		return bell;
	}
	return err;
}
