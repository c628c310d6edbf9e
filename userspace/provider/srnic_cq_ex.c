// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Extended CQs (ibv_create_cq_ex): the same ring as srnic_cq.c, read one
 * completion at a time through ibv_start_poll()/ibv_next_poll()/
 * ibv_end_poll() and the ibv_wc_read_*() accessors.
 *
 * start_poll takes the CQ lock and, if a completion is there, makes it the
 * current one (cq->cur) without releasing its slot; next_poll releases the
 * current slot and moves to the next; end_poll releases the last one read
 * and drops the lock. An empty CQ at start_poll drops the lock at once
 * (the caller then does not call end_poll). The standard completion fields
 * and, when asked for at creation, the completion timestamps the kernel
 * writes after each completion (struct srnic_native_cqe, <uapi/rdma/srnic.h>):
 * CLOCK_MONOTONIC nanoseconds as the device clock, CLOCK_REALTIME
 * nanoseconds as the wall clock. No VLAN or flow tag.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include <uapi/rdma/srnic.h>

#include "srnic.h"

/* what an extended CQ can be asked to report */
#define SRNIC_CQX_TIMESTAMPS	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define SRNIC_CQX_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | SRNIC_CQX_TIMESTAMPS)

struct srnic_create_cq_ex_cmd {
	struct ibv_create_cq_ex ibv;
};

struct srnic_create_cq_ex_resp {
	struct ib_uverbs_ex_create_cq_resp ibv;
	struct rxe_create_cq_resp drv;
};

static struct srnic_cq *cqx_to_srnic(struct ibv_cq_ex *cqx)
{
	return SRNIC_STRUCT_OF(cqx, struct srnic_cq, vcq.cq_ex);
}

/* Make the next ring entry current, or report the CQ empty. */
static int srnic_cqx_load(struct srnic_cq *cq)
{
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;

	cq->cur = srnic_ring_consume_slot(&cq->ring);
	if (!cq->cur)
		return ENOENT;
	cqx->wr_id = cq->cur->wr_id;
	cqx->status = cq->cur->status;
	return 0;
}

static void srnic_cqx_release(struct srnic_cq *cq)
{
	if (!cq->cur)
		return;
	srnic_ring_consume(&cq->ring);
	cq->cur = NULL;
}

static int srnic_cqx_start_poll(struct ibv_cq_ex *cqx,
				struct ibv_poll_cq_attr *attr)
{
	struct srnic_cq *cq = cqx_to_srnic(cqx);
	int err;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	err = srnic_cqx_load(cq);
	if (err)
		pthread_spin_unlock(&cq->lock);
	return err;
}

static int srnic_cqx_next_poll(struct ibv_cq_ex *cqx)
{
	struct srnic_cq *cq = cqx_to_srnic(cqx);

	srnic_cqx_release(cq);
	return srnic_cqx_load(cq);
}

static void srnic_cqx_end_poll(struct ibv_cq_ex *cqx)
{
	struct srnic_cq *cq = cqx_to_srnic(cqx);

	srnic_cqx_release(cq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode srnic_cqx_read_opcode(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->opcode;
}

static uint32_t srnic_cqx_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->vendor_err;
}

static uint32_t srnic_cqx_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->byte_len;
}

static __be32 srnic_cqx_read_imm_data(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->ex.imm_data;
}

static uint32_t srnic_cqx_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->qp_num;
}

static uint32_t srnic_cqx_read_src_qp(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->src_qp;
}

static unsigned int srnic_cqx_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->wc_flags;
}

static uint32_t srnic_cqx_read_slid(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->slid;
}

static uint8_t srnic_cqx_read_sl(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->sl;
}

static uint8_t srnic_cqx_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return cqx_to_srnic(cqx)->cur->dlid_path_bits;
}

static const struct srnic_native_cqe *cqx_cur_ts(struct ibv_cq_ex *cqx)
{
	return (const struct srnic_native_cqe *)cqx_to_srnic(cqx)->cur;
}

static uint64_t srnic_cqx_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return cqx_cur_ts(cqx)->timestamp;
}

static uint64_t srnic_cqx_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	return cqx_cur_ts(cqx)->wallclock;
}

static void srnic_cqx_set_ops(struct ibv_cq_ex *cqx)
{
	cqx->start_poll = srnic_cqx_start_poll;
	cqx->next_poll = srnic_cqx_next_poll;
	cqx->end_poll = srnic_cqx_end_poll;
	cqx->read_opcode = srnic_cqx_read_opcode;
	cqx->read_vendor_err = srnic_cqx_read_vendor_err;
	cqx->read_byte_len = srnic_cqx_read_byte_len;
	cqx->read_imm_data = srnic_cqx_read_imm_data;
	cqx->read_qp_num = srnic_cqx_read_qp_num;
	cqx->read_src_qp = srnic_cqx_read_src_qp;
	cqx->read_wc_flags = srnic_cqx_read_wc_flags;
	cqx->read_slid = srnic_cqx_read_slid;
	cqx->read_sl = srnic_cqx_read_sl;
	cqx->read_dlid_path_bits = srnic_cqx_read_dlid_path_bits;
	cqx->read_completion_ts = srnic_cqx_read_completion_ts;
	cqx->read_completion_wallclock_ns =
		srnic_cqx_read_completion_wallclock_ns;
}

/* What an extended CQ can be asked for here. */
static int srnic_cq_ex_check(const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->wc_flags & ~(uint64_t)SRNIC_CQX_WC_FLAGS)
		return EOPNOTSUPP;
	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS)
		return EOPNOTSUPP;
	/* the kernel refuses every creation flag */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags)
		return EOPNOTSUPP;
	return 0;
}

struct ibv_cq_ex *srnic_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct srnic_create_cq_ex_resp resp = {};
	struct ibv_cq_init_attr_ex kattr;
	struct srnic_create_cq_ex_cmd cmd;
	struct srnic_cq *cq;
	int err;

	err = srnic_cq_ex_check(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	cq = srnic_cq_alloc();
	if (!cq)
		return NULL;
	/*
	 * libibverbs asks the kernel for timestamps when the device clock is
	 * asked for; the wall clock alone needs them too.
	 */
	kattr = *attr;
	if (kattr.wc_flags & SRNIC_CQX_TIMESTAMPS)
		kattr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	err = ibv_cmd_create_cq_ex(context, &kattr, &cq->vcq, &cmd.ibv,
				   sizeof(cmd), &resp.ibv, sizeof(resp), 0);
	if (srnic_cq_map(cq, err, context->cmd_fd, &resp.drv.mi,
			 kattr.wc_flags & SRNIC_CQX_TIMESTAMPS ?
			 sizeof(struct srnic_native_cqe) :
			 sizeof(struct ib_uverbs_wc)))
		return NULL;
	srnic_cqx_set_ops(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;
}
