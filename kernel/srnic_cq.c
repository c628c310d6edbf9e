// SPDX-License-Identifier: GPL-2.0
/*
 * srnic completion queues: the CQ verbs and srnic_cq_post(), through which
 * the transport completes work requests.
 *
 * Lifetime: ib_core counts the QPs using a CQ (ib_cq.usecnt) and refuses to
 * destroy it while any is left, and a QP's transport work ends before its
 * destroy returns. So srnic_cq_post() never races with srnic_destroy_cq();
 * no reference of our own is needed.
 */
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "srnic.h"
#include "srnic_trace.h"

/*
 * wc_flags as the user reads them: rdma-core's enum ibv_wc_flags. Two bits
 * differ from the kernel's enum ib_wc_flags (invalidate and IP checksum
 * are swapped), and the kernel-only SMAC/VLAN/network-header bits have no
 * user meaning.
 */
#define SRNIC_UWC_GRH		BIT(0)
#define SRNIC_UWC_WITH_IMM	BIT(1)
#define SRNIC_UWC_IP_CSUM_OK	BIT(2)
#define SRNIC_UWC_WITH_INV	BIT(3)

static u32 srnic_cq_uwc_flags(int wc_flags)
{
	u32 f = 0;

	if (wc_flags & IB_WC_GRH)
		f |= SRNIC_UWC_GRH;
	if (wc_flags & IB_WC_WITH_IMM)
		f |= SRNIC_UWC_WITH_IMM;
	if (wc_flags & IB_WC_WITH_INVALIDATE)
		f |= SRNIC_UWC_WITH_INV;
	if (wc_flags & IB_WC_IP_CSUM_OK)
		f |= SRNIC_UWC_IP_CSUM_OK;
	return f;
}

/**
 * srnic_cq_wc_to_uwc() - a kernel work completion in the user's format
 * @wc: the completion; @wc->qp may be NULL (qp_num 0)
 * @uwc: filled completely (reserved bytes zeroed)
 *
 * Status and opcode values are the same in both ABIs (enum ib_wc_opcode is
 * defined from IB_UVERBS_WC_*); wc_flags are translated.
 */
void srnic_cq_wc_to_uwc(const struct ib_wc *wc, struct ib_uverbs_wc *uwc)
{
	memset(uwc, 0, sizeof(*uwc));
	uwc->wr_id = wc->wr_id;
	uwc->status = wc->status;
	uwc->opcode = wc->opcode;
	uwc->vendor_err = wc->vendor_err;
	uwc->byte_len = wc->byte_len;
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		uwc->ex.invalidate_rkey = wc->ex.invalidate_rkey;
	else
		uwc->ex.imm_data = wc->ex.imm_data;
	uwc->qp_num = wc->qp ? wc->qp->qp_num : 0;
	uwc->src_qp = wc->src_qp;
	uwc->wc_flags = srnic_cq_uwc_flags(wc->wc_flags);
	uwc->pkey_index = wc->pkey_index;
	uwc->slid = ib_lid_cpu16(wc->slid);
	uwc->sl = wc->sl;
	uwc->dlid_path_bits = wc->dlid_path_bits;
	uwc->port_num = wc->port_num;
}

/* IBA vol. 1 ch. 11: a CQ overrun is an affiliated asynchronous error. */
static void srnic_cq_error_event(struct srnic_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	ibdev_warn_ratelimited(cq->ibcq.device,
			       "CQ overrun (%u entries): CQ in error state\n",
			       cq->queue.index_mask);
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * Does this completion satisfy the armed notification? If so, disarm.
 * IBA vol. 1, Request Completion Notification: a Solicited request is
 * satisfied by a solicited completion or by an unsuccessful one.
 */
static bool srnic_cq_fire_locked(struct srnic_cq *cq, const struct ib_wc *wc,
				 bool solicited)
{
	lockdep_assert_held(&cq->lock);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		return true;
	}
	return false;
}

/**
 * srnic_cq_post() - add a work completion to a CQ
 * @cq: the CQ
 * @wc: the completion; for a user CQ @wc->qp gives qp_num
 * @solicited: the completion is for a message with the solicited event bit
 *
 * Calls the CQ's completion handler if the CQ was armed and this completion
 * satisfies the request. The handler runs after the CQ lock is dropped, but
 * in the caller's context: it may poll, re-arm, or post work requests (a
 * kernel ULP's handler may), so the caller must not hold locks that those
 * verbs take.
 *
 * Context: process or softirq context (any context: the lock is irqsave).
 * Return: 0, or -ENOSPC if the CQ is full or already overran; the caller
 * must then move its QP to the error state. The first overrun dispatches
 * IB_EVENT_CQ_ERR; the CQ stays in error until destroyed.
 */
int srnic_cq_post(struct srnic_cq *cq, const struct ib_wc *wc,
		  bool solicited)
{
	union srnic_cqe *cqe;
	unsigned long flags;
	bool overrun, fire;

	spin_lock_irqsave(&cq->lock, flags);
	if (unlikely(cq->error || srnic_queue_full(&cq->queue))) {
		overrun = !cq->error;
		cq->error = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (overrun)
			srnic_cq_error_event(cq);
		return -ENOSPC;
	}

	cqe = srnic_queue_producer_addr(&cq->queue);
	if (cq->is_user) {
		srnic_cq_wc_to_uwc(wc, &cqe->uwc);
		if (cq->timestamp) {
			cqe->ncqe.timestamp = ktime_get_ns();
			cqe->ncqe.wallclock = ktime_get_real_ns();
		}
	} else {
		cqe->ibwc = *wc;
	}
	srnic_queue_advance_producer(&cq->queue);
	fire = srnic_cq_fire_locked(cq, wc, solicited);
	spin_unlock_irqrestore(&cq->lock, flags);
	trace_srnic_wqe_done(cq->ibcq.device->index,
			     wc->qp ? wc->qp->qp_num : 0, wc->wr_id, wc->status,
			     wc->opcode, !!(wc->opcode & IB_WC_RECV));

	if (fire && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

static int srnic_cq_check_cqe(struct ib_device *ibdev, unsigned int cqe)
{
	if (!cqe || cqe > SRNIC_CQ_MAX_CQE) {
		ibdev_dbg(ibdev, "cqe %u not in 1..%u\n", cqe,
			  SRNIC_CQ_MAX_CQE);
		return -EINVAL;
	}
	return 0;
}

/*
 * Creation flags: completion timestamps for a user CQ of a native device
 * (srnic's provider reads them; the stock rxe provider has no reader, and
 * a kernel CQ has no field for them). Nothing else.
 */
static int srnic_cq_check_flags(struct srnic_dev *sdev, u32 flags,
				struct ib_udata *udata)
{
	if (!flags)
		return 0;
	if (flags != IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION || !udata ||
	    sdev->mode != SRNIC_MODE_NATIVE)
		return -EOPNOTSUPP;
	return 0;
}

int srnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_srnic_dev(ibcq->device);
	struct srnic_cq *cq = to_srnic_cq(ibcq);
	struct rxe_create_cq_resp resp = {};
	u32 n = attr->cqe;
	int err;

	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = srnic_cq_check_flags(sdev, attr->flags, udata);
	if (err)
		return err;
	err = srnic_cq_check_cqe(ibcq->device, attr->cqe);
	if (err)
		return err;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	/* No more than the device reports (max_cq). */
	if (!atomic_add_unless(&sdev->cq_count, 1, SRNIC_MAX_CQ))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_mutex);
	cq->is_user = !!udata;
	cq->timestamp = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	err = srnic_queue_init(sdev, &cq->queue, udata, &n,
			       sizeof(union srnic_cqe), SRNIC_QUEUE_TO_USER,
			       &resp.mi);
	if (err)
		goto err_destroy_mutex;
	ibcq->cqe = n;

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_cleanup_queue;
	}
	return 0;

err_cleanup_queue:
	srnic_queue_cleanup(&cq->queue);
err_destroy_mutex:
	mutex_destroy(&cq->resize_mutex);
	atomic_dec(&sdev->cq_count);
	return err;
}

static int srnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct srnic_cq *cq = to_srnic_cq(ibcq);

	srnic_queue_cleanup(&cq->queue);
	mutex_destroy(&cq->resize_mutex);
	atomic_dec(&to_srnic_dev(ibcq->device)->cq_count);
	return 0;
}

int srnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct srnic_cq *cq = to_srnic_cq(ibcq);
	struct rxe_resize_cq_resp resp = {};
	u32 n = cqe;
	int err;

	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (cqe < 0)
		return -EINVAL;
	err = srnic_cq_check_cqe(ibcq->device, cqe);
	if (err)
		return err;

	mutex_lock(&cq->resize_mutex);
	/* -EINVAL if the live entries do not fit in the new size */
	err = srnic_queue_resize(&cq->queue, udata, &n, &resp.mi, &cq->lock);
	if (err)
		goto out_unlock;
	ibcq->cqe = n;
	if (udata)
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
out_unlock:
	mutex_unlock(&cq->resize_mutex);
	return err;
}

/* Kernel CQs only: user processes poll the mapped ring themselves. */
static int srnic_poll_cq(struct ib_cq *ibcq, int num_entries,
			 struct ib_wc *wc)
{
	struct srnic_cq *cq = to_srnic_cq(ibcq);
	unsigned long flags;
	int n;

	if (WARN_ON_ONCE(cq->is_user))
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num_entries && !srnic_queue_empty(&cq->queue); n++) {
		union srnic_cqe *cqe = srnic_queue_kconsume_addr(&cq->queue);

		wc[n] = cqe->ibwc;
		srnic_queue_kadvance_consumer(&cq->queue);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/*
 * Arm the CQ. An armed NEXT_COMP is never weakened to SOLICITED. With
 * IB_CQ_REPORT_MISSED_EVENTS, return 1 if completions are already waiting
 * (they would raise no event), so the caller polls again.
 */
static int srnic_req_notify_cq(struct ib_cq *ibcq,
			       enum ib_cq_notify_flags flags)
{
	struct srnic_cq *cq = to_srnic_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    !srnic_queue_empty(&cq->queue))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* create_cq and resize_cq: srnic_compat_ops */
const struct ib_device_ops srnic_cq_ops = {
	.destroy_cq = srnic_destroy_cq,
	.poll_cq = srnic_poll_cq,
	.req_notify_cq = srnic_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, srnic_cq, ibcq),
};
