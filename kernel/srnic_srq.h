/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic shared receive queues, and the receive WQE helpers that QP receive
 * queues share with them.
 *
 * An SRQ is a FROM_USER ring (srnic_queue.h) of struct rxe_recv_wqe slots
 * with room for max_sge scatter entries each. A user process posts by
 * writing the ring (rdma-core's rxe provider; there is no doorbell), a
 * kernel ULP through post_srq_recv. The responder takes entries with
 * srnic_srq_pop(), which copies and validates them: the ring is shared, the
 * copy is what the responder uses.
 */
#ifndef SRNIC_SRQ_H
#define SRNIC_SRQ_H

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "srnic_queue.h"

struct srnic_dev;

/**
 * struct srnic_recv_wqe_copy - a receive WQE, copied out of its ring and
 *	validated (srnic_srq_wqe_copy())
 * @wr_id: the work request id, for the completion
 * @num_sge: entries of @sge in use (at most the queue's max_sge)
 * @length: the sum of the @sge lengths (checked not to overflow)
 * @sge: the scatter list
 */
struct srnic_recv_wqe_copy {
	u64		wr_id;
	u32		num_sge;
	u32		length;
	struct ib_sge	sge[SRNIC_MAX_SGE];
};

/**
 * struct srnic_srq - a shared receive queue
 * @ibsrq: ib_core's SRQ; first (INIT_RDMA_OBJ_SIZE)
 * @lock: protects @rq (its kernel consumer side; for a kernel SRQ also its
 *	ULP producer side) and @limit. Taken with irqsave: the responder
 *	pops from softirq, ULPs post from any context.
 * @modify_mutex: serialises modify_srq (uverbs takes the SRQ object shared)
 * @rq: the ring
 * @srq_num: the SRQ number (per-device xarray); never changes
 * @max_sge: scatter entries per WQE; never changes
 * @limit: the armed SRQ limit, 0 when not armed
 * @is_user: the ring is mapped by a user process; never changes
 * @is_xrc: an XRC SRQ (ibsrq.ext.xrc.xrcd, ibsrq.ext.cq); never changes
 */
struct srnic_srq {
	struct ib_srq		ibsrq;
	spinlock_t		lock;	/* rq, limit; irqsave */
	struct mutex		modify_mutex;	/* serialises modify_srq */
	struct srnic_queue	rq;
	u32			srq_num;
	u32			max_sge;
	u32			limit;
	bool			is_user;
	bool			is_xrc;
};

static inline struct srnic_srq *to_srnic_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct srnic_srq, ibsrq);
}

extern const struct ib_device_ops srnic_srq_ops;

void srnic_srq_dev_init(struct srnic_dev *sdev);
void srnic_srq_dev_fini(struct srnic_dev *sdev);

int srnic_srq_pop(struct srnic_srq *srq, struct srnic_recv_wqe_copy *out);
struct srnic_srq *srnic_srq_xrc_lookup(struct srnic_dev *sdev, u32 srq_num,
				       const struct ib_xrcd *xrcd);

u32 srnic_srq_wqe_size(u32 max_sge);
int srnic_srq_wqe_copy(const struct rxe_recv_wqe *src_in_ring, u32 max_sge,
		       struct srnic_recv_wqe_copy *out);
int srnic_srq_wqe_build(struct rxe_recv_wqe *dst, const struct ib_recv_wr *wr,
			u32 max_sge);

#endif /* SRNIC_SRQ_H */
