// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows, type 1 and type 2 (kernel/srnic_mw.c).
 *
 * Allocation and deallocation are commands. A bind is a send WQE of opcode
 * IBV_WR_BIND_MW that the kernel's requester executes in order with the
 * QP's other work (kernel/srnic_req.c srnic_req_local_op()): its wr.mw part
 * names the window by its current rkey (mw_rkey), the key it gets (rkey:
 * same index, the consumer's key byte), the MR by its lkey (mr_lkey, unused
 * for a zero-length bind), the range and the remote rights. The kernel
 * checks all of it again and completes a bad bind with IBV_WC_MW_BIND_ERR.
 *
 * ibv_mw.rkey follows the binds: the new key is stored when the WQE is
 * written, as the next bind must name the window by it (the kernel matches
 * mw_rkey against the window's key). A type 1 window is bound through
 * ibv_bind_mw() (a BIND_MW WQE with the next key byte), a type 2 window
 * through ibv_post_send() or ibv_wr_bind_mw() with the consumer's key.
 * Invalidation needs nothing here: LOCAL_INV and SEND_WITH_INV name the
 * window's rkey like an MR's, and a type 1 window is unbound by a bind of
 * length 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "srnic.h"

struct ibv_mw *srnic_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int err;

	/* what the kernel allocates (srnic_alloc_mw()): EINVAL as it does */
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

int srnic_dealloc_mw(struct ibv_mw *mw)
{
	int err = ibv_cmd_dealloc_mw(mw);

	if (!err)
		free(mw);
	return err;
}

/* A bind WR's checks that need no ring: EINVAL for what the kernel fails. */
int srnic_bind_check(const struct ibv_qp *qp, const struct ibv_mw *mw,
		     uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	if (!mw || mw->context != qp->context)
		return EINVAL;
	/* the consumer chooses the key byte, not the index */
	if ((rkey ^ mw->rkey) >> 8)
		return EINVAL;
	if (info->length && !info->mr)
		return EINVAL;
	/* a type 2 window is bound to something (o10-37.2.40) */
	if (mw->type == IBV_MW_TYPE_2 && !info->length)
		return EINVAL;
	return 0;
}

/* The opcode-specific part of a bind WQE (the common part is filled). */
void srnic_wqe_fill_bind(struct rxe_send_wqe *wqe, const struct ibv_mw *mw,
			 uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	wqe->wr.send_flags &= ~(uint32_t)IBV_SEND_INLINE;
	wqe->wr.wr.mw.addr = info->addr;
	wqe->wr.wr.mw.length = info->length;
	wqe->wr.wr.mw.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->wr.wr.mw.mw_rkey = mw->rkey;
	wqe->wr.wr.mw.rkey = rkey;
	wqe->wr.wr.mw.access = info->mw_access_flags;
}

/* ibv_bind_mw(): a type 1 window, the next key byte, one WQE. */
int srnic_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	};
	struct ibv_send_wr *bad;

	if (!mw || mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	return srnic_post_send(qp, &wr, &bad);
}
