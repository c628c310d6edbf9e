// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues, and the receive WQE both they and QP receive
 * queues hold (struct rxe_recv_wqe: wr_id, then the scatter list; the
 * kernel reads num_sge and the entries and recomputes the length).
 *
 * Posting receives needs no system call: the responder takes WQEs from the
 * ring when a message arrives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "srnic.h"

/**
 * srnic_recv_wqe_fill() - write a receive WR into a ring slot
 * @wqe: the slot
 * @wr: the work request
 * @max_sge: scatter entries a slot of this ring holds
 *
 * Return: 0, or EINVAL (more entries than the ring allows, or a total
 * length beyond 32 bits), in which case the slot is left untouched.
 */
int srnic_recv_wqe_fill(struct rxe_recv_wqe *wqe, const struct ibv_recv_wr *wr,
			uint32_t max_sge)
{
	uint64_t total = 0;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total > UINT32_MAX)
		return EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->dma.length = total;
	wqe->dma.resid = total;
	wqe->dma.num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->dma.sge[i].addr = wr->sg_list[i].addr;
		wqe->dma.sge[i].length = wr->sg_list[i].length;
		wqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/* Scatter entries that fit in one slot of a receive ring. */
static uint32_t srnic_recv_slot_sge(const struct srnic_ring *r)
{
	if (r->slot_size < sizeof(struct rxe_recv_wqe))
		return 0;
	return (r->slot_size - sizeof(struct rxe_recv_wqe)) /
	       sizeof(struct rxe_sge);
}

struct srnic_create_srq_cmd {
	struct ibv_create_srq ibv;
};

struct srnic_create_srq_resp {
	struct ib_uverbs_create_srq_resp ibv;
	struct rxe_create_srq_resp drv;
};

/* A new SRQ's memory and lock; NULL (errno set) on failure. */
static struct srnic_srq *srnic_srq_alloc(void)
{
	struct srnic_srq *srq = calloc(1, sizeof(*srq));
	int err;

	if (!srq)
		return NULL;
	err = pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		free(srq);
		errno = err;
		return NULL;
	}
	return srq;
}

/* Undo srnic_srq_alloc(). */
static void srnic_srq_free(struct srnic_srq *srq)
{
	pthread_spin_destroy(&srq->lock);
	free(srq);
}

/*
 * Finish an SRQ the kernel has just created (@err: the create command's
 * result, @resp its answer, @max_sge what was asked for): map its ring and
 * bound max_sge by what a slot holds. On failure the kernel's SRQ is
 * destroyed, @srq freed, errno set and NULL returned.
 */
static struct ibv_srq *srnic_srq_finish(struct srnic_srq *srq, int err,
					int cmd_fd,
					const struct srnic_create_srq_resp *resp,
					uint32_t max_sge)
{
	if (!err) {
		err = srnic_ring_map(&srq->ring, cmd_fd, &resp->drv.mi,
				     sizeof(struct rxe_recv_wqe));
		if (err)
			ibv_cmd_destroy_srq(&srq->vsrq.srq);
	}
	if (err) {
		srnic_srq_free(srq);
		errno = err;
		return NULL;
	}
	srq->vsrq.srq_num = resp->drv.srq_num;
	/* what the kernel granted, bounded by what a slot holds */
	srq->max_sge = max_sge;
	if (srq->max_sge > srnic_recv_slot_sge(&srq->ring))
		srq->max_sge = srnic_recv_slot_sge(&srq->ring);
	return &srq->vsrq.srq;
}

struct ibv_srq *srnic_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct srnic_create_srq_resp resp = {};
	struct srnic_create_srq_cmd cmd;
	struct srnic_srq *srq;
	int err;

	srq = srnic_srq_alloc();
	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv,
				 sizeof(cmd), &resp.ibv, sizeof(resp));
	return srnic_srq_finish(srq, err, pd->context->cmd_fd, &resp,
				attr->attr.max_sge);
}

struct srnic_create_xsrq_cmd {
	struct ibv_create_xsrq ibv;	/* no driver data */
};

/* ibv_create_srq_ex(3): a basic SRQ as create_srq, or an XRC SRQ */
#define SRNIC_SRQ_INIT_ATTR_MASK (IBV_SRQ_INIT_ATTR_TYPE |		\
				  IBV_SRQ_INIT_ATTR_PD |		\
				  IBV_SRQ_INIT_ATTR_XRCD |		\
				  IBV_SRQ_INIT_ATTR_CQ)

static int srnic_srq_ex_check(const struct ibv_srq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~(uint32_t)SRNIC_SRQ_INIT_ATTR_MASK)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD))
		return EINVAL;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ||
	    attr->srq_type == IBV_SRQT_BASIC)
		return 0;
	if (attr->srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ))
		return EINVAL;
	return 0;
}

struct ibv_srq *srnic_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr)
{
	struct srnic_create_srq_resp resp = {};
	struct srnic_create_xsrq_cmd cmd;
	struct srnic_srq *srq;
	int err;

	err = srnic_srq_ex_check(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	srq = srnic_srq_alloc();
	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq_ex(context, &srq->vsrq, attr, &cmd.ibv,
				    sizeof(cmd), &resp.ibv, sizeof(resp));
	return srnic_srq_finish(srq, err, context->cmd_fd, &resp,
				attr->attr.max_sge);
}

/* What a sender names in its XRC send WRs (wr.qp_type.xrc.remote_srqn). */
int srnic_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct srnic_srq *srq = to_srnic_srq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

/* modify_srq's command carries where the kernel writes the new ring's
 * mminfo when max_wr changes (rxe ABI: struct rxe_modify_srq_cmd). */
struct srnic_modify_srq_cmd {
	struct ibv_modify_srq ibv;
	struct rxe_modify_srq_cmd drv;
};

int srnic_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct srnic_srq *srq = to_srnic_srq(ibsrq);
	struct srnic_modify_srq_cmd cmd = {};
	struct srnic_ring ring = {};
	struct mminfo mi = {};
	int err;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv,
					  sizeof(cmd));

	/* a resize: no post may move the producer index meanwhile */
	cmd.drv.mmap_info_addr = (uintptr_t)&mi;
	pthread_spin_lock(&srq->lock);
	err = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv,
				 sizeof(cmd));
	if (!err)
		err = srnic_ring_map(&ring, ibsrq->context->cmd_fd, &mi,
				     sizeof(struct rxe_recv_wqe));
	if (!err) {
		srnic_ring_unmap(&srq->ring);
		srq->ring = ring;
		if (srq->max_sge > srnic_recv_slot_sge(&ring))
			srq->max_sge = srnic_recv_slot_sge(&ring);
	}
	pthread_spin_unlock(&srq->lock);
	return err;
}

int srnic_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int srnic_destroy_srq(struct ibv_srq *ibsrq)
{
	struct srnic_srq *srq = to_srnic_srq(ibsrq);
	int err;

	err = ibv_cmd_destroy_srq(ibsrq);
	if (err)
		return err;
	srnic_ring_unmap(&srq->ring);
	srnic_srq_free(srq);
	return 0;
}

int srnic_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct srnic_srq *srq = to_srnic_srq(ibsrq);
	struct rxe_recv_wqe *wqe;
	int err = 0;

	pthread_spin_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		wqe = srnic_ring_produce_slot(&srq->ring);
		if (!wqe) {
			err = ENOMEM;
			break;
		}
		err = srnic_recv_wqe_fill(wqe, wr, srq->max_sge);
		if (err)
			break;
		srnic_ring_produce(&srq->ring);
	}
	pthread_spin_unlock(&srq->lock);
	if (err)
		*bad_wr = wr;
	return err;
}
