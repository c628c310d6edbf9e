/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic completion queues.
 *
 * A CQ is a TO_USER ring (srnic_queue.h) of union srnic_cqe slots. The
 * transport produces into it with srnic_cq_post(); a user process consumes
 * straight from the mapped ring (rdma-core's rxe provider memcpy's an
 * ibv_wc, which is layout-identical to struct ib_uverbs_wc, from each slot),
 * a kernel ULP through srnic_poll_cq().
 */
#ifndef SRNIC_CQ_H
#define SRNIC_CQ_H

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <uapi/rdma/srnic.h>

#include "srnic_queue.h"

/* ib_device_attr.max_cqe, the largest cqe create_cq/resize_cq accept */
#define SRNIC_CQ_MAX_CQE	(SRNIC_MAX_CQE - 1)

/**
 * union srnic_cqe - one CQ slot
 * @ibwc: kernel CQs: the work completion as ib_poll_cq() returns it
 * @uwc: user CQs: the user ABI's work completion, at offset 0
 * @ncqe: user CQs with completion timestamps (native mode): @uwc and the
 *	times it was queued (<uapi/rdma/srnic.h>)
 *
 * The slot's size is the user ring's element size; the timestamps fit in
 * it, so a CQ's ring looks the same to the stock rxe provider either way.
 */
union srnic_cqe {
	struct ib_wc		ibwc;
	struct ib_uverbs_wc	uwc;
	struct srnic_native_cqe	ncqe;
};

static_assert(sizeof(struct srnic_native_cqe) <= sizeof(struct ib_wc));

/**
 * struct srnic_cq - a completion queue
 * @ibcq: ib_core's CQ; first (INIT_RDMA_OBJ_SIZE)
 * @lock: protects @queue (the producer side, and for a kernel CQ the
 *	consumer side too), @notify and @error. Taken with irqsave: posts
 *	come from softirq and process context, ULPs poll from any context.
 * @resize_mutex: serialises resize_cq (uverbs takes the CQ object shared)
 * @queue: the ring
 * @notify: the armed notification: 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP
 * @error: a post found the CQ full (overrun); the CQ is in the error state
 *	and every later post fails
 * @is_user: the ring is mapped by a user process; never changes
 * @timestamp: each completion carries the times it was queued (@ncqe);
 *	a user CQ of a native device only; never changes
 */
struct srnic_cq {
	struct ib_cq		ibcq;
	spinlock_t		lock;	/* queue, notify, error; irqsave */
	struct mutex		resize_mutex;	/* serialises resize_cq */
	struct srnic_queue	queue;
	u8			notify;
	bool			error;
	bool			is_user;
	bool			timestamp;
};

static inline struct srnic_cq *to_srnic_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct srnic_cq, ibcq);
}

extern const struct ib_device_ops srnic_cq_ops;
/* ib_device_ops.create_cq/resize_cq through srnic_compat_ops */
int srnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int srnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);

int srnic_cq_post(struct srnic_cq *cq, const struct ib_wc *wc,
		  bool solicited);
void srnic_cq_wc_to_uwc(const struct ib_wc *wc, struct ib_uverbs_wc *uwc);

#endif /* SRNIC_CQ_H */
