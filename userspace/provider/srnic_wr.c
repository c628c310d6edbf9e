// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ibv_wr_*() send API (ibv_create_qp_ex with send_ops_flags), which
 * perftest uses by default: the same send queue entries as post_send
 * (srnic_send.c), built a call at a time.
 *
 * wr_start takes the SQ lock; each opcode call opens a WQE in the next free
 * slot, past the published producer index, and the wr_set_*() calls fill
 * its data; wr_complete publishes every WQE of the batch with one release
 * store of the producer index and rings the doorbell once, wr_abort drops
 * them. The first error (ring full, a limit exceeded, a QP before RTS)
 * sticks: later calls of the batch do nothing and wr_complete returns it
 * without publishing anything, so a batch is posted whole or not at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include <uapi/rdma/srnic.h>

#include "srnic.h"

#define SRNIC_WR_OPS (IBV_QP_EX_WITH_RDMA_WRITE |			\
		      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |		\
		      IBV_QP_EX_WITH_SEND |				\
		      IBV_QP_EX_WITH_SEND_WITH_IMM |			\
		      IBV_QP_EX_WITH_RDMA_READ |			\
		      IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |		\
		      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |		\
		      IBV_QP_EX_WITH_LOCAL_INV |			\
		      IBV_QP_EX_WITH_SEND_WITH_INV |			\
		      IBV_QP_EX_WITH_BIND_MW)

bool srnic_wr_ops_supported(uint64_t send_ops_flags)
{
	return !(send_ops_flags & ~(uint64_t)SRNIC_WR_OPS);
}

static struct srnic_qp *qpx_to_srnic(struct ibv_qp_ex *qpx)
{
	return to_srnic_qp(&qpx->qp_base);
}

void srnic_wr_fail(struct srnic_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/* Open the next WQE of the batch for @opcode, or record why not. */
static struct rxe_send_wqe *srnic_wr_open(struct ibv_qp_ex *qpx,
					  enum ibv_wr_opcode opcode)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);
	uint32_t cons, next = (qp->wr_prod + 1) & qp->sq.mask;
	struct rxe_send_wqe *wqe;

	if (qp->wr_err)
		return NULL;
	/* a DCT sends nothing of its own */
	if (!srnic_opcode_ok(qpx->qp_base.qp_type, opcode) ||
	    (qpx->qp_base.qp_type == IBV_QPT_DRIVER &&
	     qp->dc_type != SRNIC_DC_TYPE_DCI)) {
		srnic_wr_fail(qp, EINVAL);
		return NULL;
	}
	/* the kernel has finished with a slot before it moves past it */
	cons = __atomic_load_n(&qp->sq.buf->consumer_index, __ATOMIC_ACQUIRE);
	if (next == (cons & qp->sq.mask)) {
		srnic_wr_fail(qp, ENOMEM);
		return NULL;
	}
	wqe = srnic_ring_slot(&qp->sq, qp->wr_prod);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr.wr_id = qpx->wr_id;
	wqe->wr.opcode = opcode;
	wqe->wr.send_flags = qpx->wr_flags;
	qp->wr_prod = next;
	qp->wr_count++;
	qp->wr_cur = wqe;
	return wqe;
}

static void srnic_wr_start(struct ibv_qp_ex *qpx)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);
	enum ibv_qp_state state = __atomic_load_n(&qp->state,
						  __ATOMIC_RELAXED);

	pthread_spin_lock(&qp->sq_lock);
	qp->wr_prod = __atomic_load_n(&qp->sq.buf->producer_index,
				      __ATOMIC_RELAXED);
	qp->wr_count = 0;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
	/* IBA 10.8.3.1: no send WR before RTS */
	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT ||
	    state == IBV_QPS_RTR)
		qp->wr_err = EINVAL;
}

static int srnic_wr_complete(struct ibv_qp_ex *qpx)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);
	unsigned int count = qp->wr_count;
	int err = qp->wr_err;

	if (!err && count)
		/* the WQEs are written before the kernel may read them */
		__atomic_store_n(&qp->sq.buf->producer_index, qp->wr_prod,
				 __ATOMIC_RELEASE);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq_lock);
	if (err || !count)
		return err;
	return srnic_sq_doorbell(qp);
}

static void srnic_wr_abort(struct ibv_qp_ex *qpx)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);

	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq_lock);
}

static void srnic_wr_send(struct ibv_qp_ex *qpx)
{
	srnic_wr_open(qpx, IBV_WR_SEND);
}

static void srnic_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct rxe_send_wqe *wqe = srnic_wr_open(qpx, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->wr.ex.imm_data = imm_data;
}

static void srnic_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct rxe_send_wqe *wqe = srnic_wr_open(qpx, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->wr.ex.invalidate_rkey = rkey;
}

static void srnic_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct rxe_send_wqe *wqe = srnic_wr_open(qpx, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->wr.ex.invalidate_rkey = rkey;
}

/*
 * The window's rkey becomes @rkey now, as with post_send: a batch that is
 * aborted or fails leaves the window named by a key it did not get, and a
 * later bind of it fails (IBV_WC_MW_BIND_ERR).
 */
static void srnic_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);
	struct rxe_send_wqe *wqe;
	int err;

	if (qp->wr_err)
		return;
	err = srnic_bind_check(&qpx->qp_base, mw, rkey, bind_info);
	if (err) {
		srnic_wr_fail(qp, err);
		return;
	}
	wqe = srnic_wr_open(qpx, IBV_WR_BIND_MW);
	if (!wqe)
		return;
	srnic_wqe_fill_bind(wqe, mw, rkey, bind_info);
	mw->rkey = rkey;
}

static void srnic_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			  uint32_t rkey, uint64_t remote_addr, __be32 imm)
{
	struct rxe_send_wqe *wqe = srnic_wr_open(qpx, op);

	if (!wqe)
		return;
	wqe->wr.wr.rdma.remote_addr = remote_addr;
	wqe->wr.wr.rdma.rkey = rkey;
	wqe->wr.ex.imm_data = imm;
}

static void srnic_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t remote_addr)
{
	srnic_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void srnic_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm_data)
{
	srnic_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		      imm_data);
}

static void srnic_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	srnic_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void srnic_wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			    uint32_t rkey, uint64_t remote_addr,
			    uint64_t compare_add, uint64_t swap)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);
	struct rxe_send_wqe *wqe;

	/* IBA 9.4.5: an atomic operates on 8 aligned bytes */
	if (remote_addr & 7) {
		srnic_wr_fail(qp, EINVAL);
		return;
	}
	wqe = srnic_wr_open(qpx, op);
	if (!wqe)
		return;
	wqe->wr.wr.atomic.remote_addr = remote_addr;
	wqe->wr.wr.atomic.compare_add = compare_add;
	wqe->wr.wr.atomic.swap = swap;
	wqe->wr.wr.atomic.rkey = rkey;
}

static void srnic_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	srnic_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
			compare, swap);
}

static void srnic_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	srnic_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
			add, 0);
}

static void srnic_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);
	struct rxe_send_wqe *wqe = qp->wr_cur;

	if (!wqe)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_UD || !ah) {
		srnic_wr_fail(qp, EINVAL);
		return;
	}
	wqe->wr.wr.ud.remote_qpn = remote_qpn;
	wqe->wr.wr.ud.remote_qkey = remote_qkey;
	wqe->wr.wr.ud.ah_num = to_srnic_ah(ah)->ah_num;
}

/* ibv_wr_set_xrc_srqn(3): the native ABI carries it in wr.reserved */
static void srnic_wr_set_xrc_srqn(struct ibv_qp_ex *qpx,
				  uint32_t remote_srqn)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);
	struct rxe_send_wqe *wqe = qp->wr_cur;

	if (!wqe)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_XRC_SEND) {
		srnic_wr_fail(qp, EINVAL);
		return;
	}
	wqe->wr.reserved = remote_srqn;
}

static bool srnic_wr_is_atomic(const struct rxe_send_wqe *wqe)
{
	return wqe->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       wqe->wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static void srnic_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);
	struct rxe_send_wqe *wqe = qp->wr_cur;
	uint64_t total = 0;
	size_t i;

	if (!wqe)
		return;
	if (num_sge > qp->max_send_sge) {
		srnic_wr_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num_sge; i++) {
		wqe->dma.sge[i].addr = sg_list[i].addr;
		wqe->dma.sge[i].length = sg_list[i].length;
		wqe->dma.sge[i].lkey = sg_list[i].lkey;
		total += sg_list[i].length;
	}
	if (total > UINT32_MAX ||
	    (srnic_wr_is_atomic(wqe) && total != sizeof(uint64_t))) {
		srnic_wr_fail(qp, EINVAL);
		return;
	}
	wqe->dma.num_sge = num_sge;
	wqe->dma.length = total;
	wqe->dma.resid = total;
}

static void srnic_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	srnic_wr_set_sge_list(qpx, 1, &sge);
}

static void srnic_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					  size_t num_buf,
					  const struct ibv_data_buf *buf_list)
{
	struct srnic_qp *qp = qpx_to_srnic(qpx);
	struct rxe_send_wqe *wqe = qp->wr_cur;
	uint8_t *p;
	size_t total = 0, i;

	if (!wqe)
		return;
	for (i = 0; i < num_buf; i++)
		total += buf_list[i].length;
	if (total > qp->max_inline || srnic_wr_is_atomic(wqe) ||
	    wqe->wr.opcode == IBV_WR_RDMA_READ) {
		srnic_wr_fail(qp, EINVAL);
		return;
	}
	p = wqe->dma.inline_data;
	for (i = 0; i < num_buf; i++) {
		memcpy(p, buf_list[i].addr, buf_list[i].length);
		p += buf_list[i].length;
	}
	wqe->wr.send_flags |= IBV_SEND_INLINE;
	wqe->dma.length = total;
	wqe->dma.resid = total;
}

static void srnic_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	srnic_wr_set_inline_data_list(qpx, 1, &buf);
}

/* Install the API on a QP made by create_qp_ex with send_ops_flags. */
void srnic_qp_set_wr_ops(struct srnic_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = srnic_wr_start;
	qpx->wr_complete = srnic_wr_complete;
	qpx->wr_abort = srnic_wr_abort;
	qpx->wr_send = srnic_wr_send;
	qpx->wr_send_imm = srnic_wr_send_imm;
	qpx->wr_send_inv = srnic_wr_send_inv;
	qpx->wr_local_inv = srnic_wr_local_inv;
	qpx->wr_bind_mw = srnic_wr_bind_mw;
	qpx->wr_rdma_write = srnic_wr_rdma_write;
	qpx->wr_rdma_write_imm = srnic_wr_rdma_write_imm;
	qpx->wr_rdma_read = srnic_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = srnic_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = srnic_wr_atomic_fetch_add;
	qpx->wr_set_ud_addr = srnic_wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = srnic_wr_set_xrc_srqn;
	qpx->wr_set_sge = srnic_wr_set_sge;
	qpx->wr_set_sge_list = srnic_wr_set_sge_list;
	qpx->wr_set_inline_data = srnic_wr_set_inline_data;
	qpx->wr_set_inline_data_list = srnic_wr_set_inline_data_list;
	qp->vqp.comp_mask |= SRNIC_VERBS_QP_EX;
}
