// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation maps the send queue and (without an SRQ) the
 * receive queue the kernel announces; query/modify/destroy are commands;
 * receive WRs go straight into the mapped ring; ECE is the QP's own state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uapi/rdma/srnic.h>

#include "srnic.h"

struct srnic_create_qp_cmd {
	struct ibv_create_qp ibv;	/* no driver data: the kernel refuses any */
};

struct srnic_create_qp_resp {
	struct ib_uverbs_create_qp_resp ibv;
	struct rxe_create_qp_resp drv;
};

static struct ibv_qp *srnic_create_xrc_send_qp(struct ibv_pd *pd,
					       struct ibv_qp_init_attr *attr);

static bool srnic_qp_type_ok(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_UD;
}

/*
 * Bound the limits the kernel granted by what a slot of each mapped ring
 * holds, so that no post can write past a slot whatever the kernel said.
 */
void srnic_qp_set_limits(struct srnic_qp *qp,
				const struct ibv_qp_cap *cap)
{
	size_t sq_room = 0, rq_room = 0;

	if (qp->sq.slot_size > sizeof(struct rxe_send_wqe))
		sq_room = qp->sq.slot_size - sizeof(struct rxe_send_wqe);
	qp->max_send_sge = cap->max_send_sge;
	if (qp->max_send_sge > sq_room / sizeof(struct rxe_sge))
		qp->max_send_sge = sq_room / sizeof(struct rxe_sge);
	qp->max_inline = cap->max_inline_data;
	if (qp->max_inline > sq_room)
		qp->max_inline = sq_room;

	if (qp->rq.buf && qp->rq.slot_size > sizeof(struct rxe_recv_wqe))
		rq_room = qp->rq.slot_size - sizeof(struct rxe_recv_wqe);
	qp->max_recv_sge = cap->max_recv_sge;
	if (qp->max_recv_sge > rq_room / sizeof(struct rxe_sge))
		qp->max_recv_sge = rq_room / sizeof(struct rxe_sge);
}

int srnic_qp_map(struct srnic_qp *qp, int cmd_fd,
			const struct rxe_create_qp_resp *drv, bool has_rq)
{
	int err;

	err = srnic_ring_map(&qp->sq, cmd_fd, &drv->sq_mi,
			     sizeof(struct rxe_send_wqe));
	if (err || !has_rq)
		return err;
	err = srnic_ring_map(&qp->rq, cmd_fd, &drv->rq_mi,
			     sizeof(struct rxe_recv_wqe));
	if (err)
		srnic_ring_unmap(&qp->sq);
	return err;
}

/* A zeroed QP with its locks; NULL with errno set on failure. */
struct srnic_qp *srnic_qp_alloc(void)
{
	struct srnic_qp *qp = calloc(1, sizeof(*qp));
	int err;

	if (!qp)
		return NULL;
	qp->ece_options = SRNIC_ECE_OPTIONS;
	err = pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	if (!err) {
		err = pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
		if (!err)
			return qp;
		pthread_spin_destroy(&qp->sq_lock);
	}
	free(qp);
	errno = err;
	return NULL;
}

void srnic_qp_free(struct srnic_qp *qp)
{
	pthread_spin_destroy(&qp->rq_lock);
	pthread_spin_destroy(&qp->sq_lock);
	free(qp);
}

struct ibv_qp *srnic_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{
	struct srnic_create_qp_resp resp = {};
	struct srnic_create_qp_cmd cmd;
	struct srnic_qp *qp;
	int err;

	/* libibverbs' ibv_create_qp_ex() comes here when only a PD is given */
	if (attr->qp_type == IBV_QPT_XRC_SEND)
		return srnic_create_xrc_send_qp(pd, attr);
	if (!srnic_qp_type_ok(attr->qp_type)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = srnic_qp_alloc();
	if (!qp)
		return NULL;
	err = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv, sizeof(cmd),
				&resp.ibv, sizeof(resp));
	if (err)
		goto err_free;
	err = srnic_qp_map(qp, pd->context->cmd_fd, &resp.drv, !attr->srq);
	if (err)
		goto err_destroy;
	srnic_qp_set_limits(qp, &attr->cap);
	qp->state = IBV_QPS_RESET;
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	srnic_qp_free(qp);
	errno = err;
	return NULL;
}

/*
 * What create_qp_ex can do beyond create_qp: the ibv_wr_*() send API. No
 * creation flag is supported, but the empty set may be passed (pyverbs'
 * tests do, at random).
 */
#define SRNIC_QP_INIT_ATTR_MASK (IBV_QP_INIT_ATTR_PD |			\
				 IBV_QP_INIT_ATTR_XRCD |			\
				 IBV_QP_INIT_ATTR_CREATE_FLAGS |		\
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

static int srnic_qp_ex_check(const struct ibv_qp_init_attr_ex *attr)
{
	/* an XRC receive QP is made in a domain, every other one in a PD */
	uint32_t need = attr->qp_type == IBV_QPT_XRC_RECV ?
			IBV_QP_INIT_ATTR_XRCD : IBV_QP_INIT_ATTR_PD;

	if (!(attr->comp_mask & need) ||
	    (attr->comp_mask & ~(uint32_t)SRNIC_QP_INIT_ATTR_MASK))
		return EOPNOTSUPP;
	if (!srnic_qp_type_ok(attr->qp_type) &&
	    attr->qp_type != IBV_QPT_XRC_SEND &&
	    attr->qp_type != IBV_QPT_XRC_RECV)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    !srnic_wr_ops_supported(attr->send_ops_flags))
		return EOPNOTSUPP;
	return 0;
}

struct ibv_qp *srnic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct srnic_create_qp_resp resp = {};
	struct srnic_create_qp_cmd cmd;
	struct srnic_qp *qp;
	uint32_t comp_mask;
	int err;

	err = srnic_qp_ex_check(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = srnic_qp_alloc();
	if (!qp)
		return NULL;
	/*
	 * libibverbs' command takes PD, XRCD and SEND_OPS_FLAGS only (EINVAL
	 * otherwise, in 44 and 56): no flags is no CREATE_FLAGS.
	 */
	comp_mask = attr->comp_mask;
	attr->comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_CREATE_FLAGS;
	err = ibv_cmd_create_qp_ex(context, &qp->vqp, attr, &cmd.ibv,
				   sizeof(cmd), &resp.ibv, sizeof(resp));
	attr->comp_mask = comp_mask;
	if (err)
		goto err_free;
	/*
	 * The kernel makes an XRC receive QP without rings (it answers from
	 * the XRC SRQs its requests name); an XRC send QP receives nothing.
	 */
	if (attr->qp_type != IBV_QPT_XRC_RECV) {
		err = srnic_qp_map(qp, context->cmd_fd, &resp.drv,
				   !attr->srq &&
				   attr->qp_type != IBV_QPT_XRC_SEND);
		if (err)
			goto err_destroy;
		srnic_qp_set_limits(qp, &attr->cap);
	}
	qp->state = IBV_QPS_RESET;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		srnic_qp_set_wr_ops(qp);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	srnic_qp_free(qp);
	errno = err;
	return NULL;
}

/*
 * ibv_open_qp(3): another process's XRC receive QP, by number, in a
 * domain this process opened too. It has no rings here either.
 */
struct ibv_qp *srnic_open_qp(struct ibv_context *context,
			     struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd;
	struct srnic_qp *qp;
	int err;

	qp = srnic_qp_alloc();
	if (!qp)
		return NULL;
	err = ibv_cmd_open_qp(context, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		srnic_qp_free(qp);
		errno = err;
		return NULL;
	}
	qp->state = IBV_QPS_RESET;
	return &qp->vqp.qp;
}

/* An XRC send QP asked for through create_qp: create_qp_ex's path. */
static struct ibv_qp *srnic_create_xrc_send_qp(struct ibv_pd *pd,
					       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = srnic_create_qp_ex(pd->context, &ex);

	if (qp)
		attr->cap = ex.cap;
	return qp;
}

int srnic_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	struct ibv_query_qp cmd;
	int err;

	err = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (!err)
		__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELAXED);
	return err;
}

int srnic_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	struct ibv_modify_qp cmd;
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (err || !(attr_mask & IBV_QP_STATE))
		return err;
	__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELAXED);
	/* the kernel has flushed the QP before it answered */
	if (attr->qp_state == IBV_QPS_RESET) {
		/* no receive CQ: an XRC initiator QP */
		if (ibqp->recv_cq)
			srnic_cq_clean(to_srnic_cq(ibqp->recv_cq),
				       ibqp->qp_num);
		if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
			srnic_cq_clean(to_srnic_cq(ibqp->send_cq),
				       ibqp->qp_num);
	}
	return 0;
}

/*
 * ECE (Enhanced Connection Establishment): rdma_cm sends what
 * ibv_query_ece says in the CM REQ (active side) and REP (passive side),
 * and hands the peer's to ibv_set_ece. srnic's ECE vendor id is the
 * device's; the options it takes are the requested ones it supports, none
 * for another vendor's (a mixed fabric: nothing in common, not an error).
 */
int srnic_query_ece(struct ibv_qp *ibqp, struct ibv_ece *ece)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);

	ece->vendor_id = SRNIC_VENDOR_ID;
	ece->options = __atomic_load_n(&qp->ece_options, __ATOMIC_RELAXED);
	ece->comp_mask = 0;
	return 0;
}

int srnic_set_ece(struct ibv_qp *ibqp, struct ibv_ece *ece)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	uint32_t options = 0;

	/* no ibv_ece field beyond the three is defined */
	if (ece->comp_mask) {
		errno = EINVAL;
		return EINVAL;
	}
	if (ece->vendor_id == SRNIC_VENDOR_ID)
		options = ece->options & SRNIC_ECE_OPTIONS;
	__atomic_store_n(&qp->ece_options, options, __ATOMIC_RELAXED);
	ece->options = options;
	return 0;
}

int srnic_destroy_qp(struct ibv_qp *ibqp)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	srnic_ring_unmap(&qp->rq);
	srnic_ring_unmap(&qp->sq);
	srnic_qp_free(qp);
	return 0;
}

/*
 * IBA 10.8.3.2: a receive posted in the error state completes flushed. The
 * kernel flushes when it hears of the QP: an empty POST_RECV tells it
 * (kernel/srnic_resp.c srnic_post_recv()). Only used when this process
 * moved the QP to ERR; a QP the kernel moved there is flushed at the move.
 */
static void srnic_qp_recv_flush_doorbell(struct srnic_qp *qp)
{
	struct ibv_recv_wr *bad;

	ibv_cmd_post_recv(&qp->vqp.qp, NULL, &bad);
}

int srnic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	enum ibv_qp_state state = __atomic_load_n(&qp->state,
						  __ATOMIC_RELAXED);
	struct rxe_recv_wqe *wqe;
	int err = 0;

	if (!qp->rq.buf || state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq_lock);
	for (; wr; wr = wr->next) {
		wqe = srnic_ring_produce_slot(&qp->rq);
		if (!wqe) {
			err = ENOMEM;
			break;
		}
		err = srnic_recv_wqe_fill(wqe, wr, qp->max_recv_sge);
		if (err)
			break;
		srnic_ring_produce(&qp->rq);
	}
	pthread_spin_unlock(&qp->rq_lock);
	if (err)
		*bad_wr = wr;
	if (state == IBV_QPS_ERR)
		srnic_qp_recv_flush_doorbell(qp);
	return err;
}
