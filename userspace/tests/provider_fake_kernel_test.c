// SPDX-License-Identifier: GPL-2.0
/*
 * libsrnic's data path against a fake kernel: no device, no root.
 *
 *   provider_fake_kernel_test <dir>/libsrnic
 *
 * The test executable defines the libibverbs functions the provider calls
 * for its commands (it is linked with --export-dynamic, so the provider
 * binds to these before libibverbs'), and answers them as srnic's kernel
 * does (kernel/srnic_queue.c, srnic_cq.c, srnic_qp.c, srnic_ah.c): rings
 * laid out as struct rxe_queue_buf in a memfd the provider mmaps as if it
 * were the uverbs file, the mminfo of each ring in the response, the QP's
 * granted capabilities. Then it reads what the provider wrote where the
 * kernel reads it (srnic_swqe_from_user(), srnic_srq_wqe_copy()), produces
 * completions for poll_cq, and counts doorbells.
 *
 * What it cannot show: that the real kernel accepts the commands (the VM
 * test does that).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <uapi/rdma/srnic.h>

#include "ibv_private.h"

static int failures;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			failures++;					\
		}							\
	} while (0)

/* ---- the fake kernel: rings in a memfd ---- */

static int kfd = -1;		/* the "uverbs file" the provider mmaps */
static off_t kfd_len;
static const struct verbs_device_ops *dev_ops;
static const struct verbs_context_ops *ctx_ops;
static uint32_t ioctl_driver_id;
static int send_doorbells, recv_doorbells;
static bool bad_cq_header;	/* answer create_cq with slots too small */
static int cqs_destroyed;

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* srnic_queue_init(): slot = pow2(max(elem, 64)), slots = pow2(n + 1). */
static struct rxe_queue_buf *kring_new(uint32_t *num_elem, uint32_t elem_size,
				       struct mminfo *mi)
{
	uint32_t slot = pow2_at_least(elem_size < 64 ? 64 : elem_size);
	uint32_t slots = pow2_at_least(*num_elem + 1);
	size_t size = sizeof(struct rxe_queue_buf) + (size_t)slots * slot;
	size_t map = (size + 4095) & ~(size_t)4095;
	struct rxe_queue_buf *q;
	off_t off = kfd_len;

	if (ftruncate(kfd, off + map))
		return NULL;
	kfd_len += map;
	q = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, kfd, off);
	if (q == MAP_FAILED)
		return NULL;
	q->log2_elem_size = __builtin_ctz(slot);
	q->index_mask = slots - 1;
	mi->offset = off;
	mi->size = size;
	*num_elem = slots - 1;
	return q;
}

static void *kslot(struct rxe_queue_buf *q, uint32_t i)
{
	return q->data + ((size_t)(i & q->index_mask) << q->log2_elem_size);
}

static struct rxe_queue_buf *last_cq, *last_sq, *last_rq, *last_srq;

/* ---- libibverbs, as the provider sees it ---- */

void verbs_register_driver_34(const struct verbs_device_ops *ops)
{
	dev_ops = ops;
}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id)
{
	char *p = calloc(1, alloc_size);
	struct verbs_context *vctx;

	if (!p)
		return NULL;
	vctx = (struct verbs_context *)(p + (uintptr_t)context_offset);
	vctx->context.device = device;
	vctx->context.cmd_fd = cmd_fd;
	ioctl_driver_id = driver_id;
	return p;
}

void verbs_uninit_context(struct verbs_context *context)
{
	(void)context;
}

void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops)
{
	(void)vctx;
	ctx_ops = ops;
}

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size)
{
	(void)context;
	(void)cmd;
	(void)resp;
	/* the rxe ABI has no driver data here */
	CHECK(cmd_size == sizeof(*cmd));
	CHECK(resp_size == sizeof(*resp));
	return 0;
}

int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size)
{
	struct rxe_create_cq_resp *drv = (void *)(resp + 1);
	uint32_t n = cqe;

	(void)channel;
	(void)comp_vector;
	(void)cmd;
	CHECK(cmd_size == sizeof(*cmd));
	/* srnic_create_cq(): udata->outlen >= sizeof(rxe_create_cq_resp) */
	CHECK(resp_size >= sizeof(*resp) + sizeof(*drv));
	last_cq = kring_new(&n, sizeof(struct ib_uverbs_wc), &drv->mi);
	if (!last_cq)
		return ENOMEM;
	if (bad_cq_header)
		last_cq->log2_elem_size = 3;
	cq->context = context;
	cq->cqe = n;
	return 0;
}

int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags)
{
	struct rxe_create_cq_resp *drv = (void *)(resp + 1);
	uint32_t n = cq_attr->cqe;

	(void)cmd;
	CHECK(cmd_size == sizeof(*cmd));
	CHECK(resp_size >= sizeof(*resp) + sizeof(*drv));
	CHECK(cmd_flags == 0);
	last_cq = kring_new(&n, sizeof(struct ib_uverbs_wc), &drv->mi);
	if (!last_cq)
		return ENOMEM;
	cq->cq.context = context;
	cq->cq.cqe = n;
	return 0;
}

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
	(void)cq;
	cqs_destroyed++;
	return 0;
}

int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr,
		      struct ibv_create_qp *cmd, size_t cmd_size,
		      struct ib_uverbs_create_qp_resp *resp, size_t resp_size)
{
	struct rxe_create_qp_resp *drv = (void *)(resp + 1);
	struct ibv_qp_cap *cap = &attr->cap;
	uint32_t sge, room;

	(void)cmd;
	/* srnic_qp_check_init(): the kernel refuses driver data */
	CHECK(cmd_size == sizeof(*cmd));
	CHECK(resp_size >= sizeof(*resp) + sizeof(*drv));
	/* srnic_qp_init_sq() */
	sge = cap->max_send_sge ? cap->max_send_sge : 1;
	room = sge * sizeof(struct rxe_sge);
	if (cap->max_inline_data > room)
		room = cap->max_inline_data;
	last_sq = kring_new(&cap->max_send_wr,
			    sizeof(struct rxe_send_wqe) + room, &drv->sq_mi);
	cap->max_send_sge = sge;
	if (cap->max_inline_data < sge * sizeof(struct rxe_sge))
		cap->max_inline_data = sge * sizeof(struct rxe_sge);
	last_rq = NULL;
	if (!attr->srq) {
		sge = cap->max_recv_sge ? cap->max_recv_sge : 1;
		last_rq = kring_new(&cap->max_recv_wr,
				    sizeof(struct rxe_recv_wqe) +
				    sge * sizeof(struct rxe_sge), &drv->rq_mi);
		cap->max_recv_sge = sge;
	}
	qp->context = pd->context;
	qp->pd = pd;
	qp->qp_type = attr->qp_type;
	qp->qp_num = 17;
	qp->srq = attr->srq;
	return 0;
}

int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = attr_ex->send_cq, .recv_cq = attr_ex->recv_cq,
		.srq = attr_ex->srq, .cap = attr_ex->cap,
		.qp_type = attr_ex->qp_type,
	};
	int err;

	(void)context;
	/* libibverbs' check: PD, XRCD and SEND_OPS_FLAGS only */
	if (attr_ex->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					     IBV_QP_INIT_ATTR_XRCD |
					     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return EINVAL;
	err = ibv_cmd_create_qp(attr_ex->pd, &qp->qp, &attr, cmd, cmd_size,
				resp, resp_size);
	attr_ex->cap = attr.cap;
	return err;
}

int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size)
{
	(void)qp;
	(void)attr;
	(void)attr_mask;
	(void)cmd;
	CHECK(cmd_size == sizeof(*cmd));
	return 0;
}

int ibv_cmd_destroy_qp(struct ibv_qp *qp)
{
	(void)qp;
	return 0;
}

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size)
{
	struct rxe_create_srq_resp *drv = (void *)(resp + 1);
	uint32_t sge = attr->attr.max_sge ? attr->attr.max_sge : 1;

	(void)cmd;
	CHECK(cmd_size == sizeof(*cmd));
	CHECK(resp_size >= sizeof(*resp) + sizeof(*drv));
	last_srq = kring_new(&attr->attr.max_wr,
			     sizeof(struct rxe_recv_wqe) +
			     sge * sizeof(struct rxe_sge), &drv->mi);
	attr->attr.max_sge = sge;
	drv->srq_num = 5;
	srq->context = pd->context;
	srq->pd = pd;
	return 0;
}

int ibv_cmd_destroy_srq(struct ibv_srq *srq)
{
	(void)srq;
	return 0;
}

int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	(void)ibqp;
	(void)bad_wr;
	CHECK(wr == NULL);	/* the doorbell carries no WR */
	send_doorbells++;
	return 0;
}

int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	(void)ibqp;
	(void)bad_wr;
	CHECK(wr == NULL);
	recv_doorbells++;
	return 0;
}

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size)
{
	struct rxe_create_ah_resp *drv = (void *)(resp + 1);

	(void)attr;
	/* srnic_create_ah() answers the AH number only into room for it */
	CHECK(resp_size >= sizeof(*resp) + sizeof(*drv));
	drv->ah_num = 7;
	ah->context = pd->context;
	ah->pd = pd;
	return 0;
}

int ibv_cmd_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return 0;
}

static int mws_allocated;

int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size)
{
	(void)cmd;
	/* srnic_alloc_mw() takes no driver data and answers none */
	CHECK(cmd_size == sizeof(*cmd));
	CHECK(resp_size == sizeof(*resp));
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		return EINVAL;
	mws_allocated++;
	mw->context = pd->context;
	mw->pd = pd;
	mw->type = type;
	mw->handle = 40 + mws_allocated;
	mw->rkey = (0x300u + mws_allocated) << 8 | 0x2a;
	return 0;
}

int ibv_cmd_dealloc_mw(struct ibv_mw *mw)
{
	(void)mw;
	mws_allocated--;
	return 0;
}

/* What the last ibv_cmd_rereg_mr() was given; its answer. */
static struct {
	struct verbs_mr *vmr;
	uint32_t flags;
	void *addr;
	size_t length;
	uint64_t hca_va;
	int access;
	struct ibv_pd *pd;
	int answer;		/* errno value to fail with, or 0 */
} rereg;

int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz)
{
	(void)cmd;
	/* no driver data either way (the rxe ABI has none for MRs) */
	CHECK(cmd_sz == sizeof(*cmd));
	CHECK(resp_sz == sizeof(*resp));
	rereg.vmr = vmr;
	rereg.flags = flags;
	rereg.addr = addr;
	rereg.length = length;
	rereg.hca_va = hca_va;
	rereg.access = access;
	rereg.pd = pd;
	if (rereg.answer) {
		errno = rereg.answer;
		return rereg.answer;
	}
	/* srnic_rereg_user_mr() keeps the keys; as libibverbs, copy them */
	resp->lkey = vmr->ibv_mr.lkey;
	resp->rkey = vmr->ibv_mr.rkey;
	return 0;
}

/* ---- the checks ---- */

static struct ibv_context *open_context(const char *drivers_entry)
{
	static struct verbs_device dev;
	char so[PATH_MAX];
	struct verbs_context *vctx;

	snprintf(so, sizeof(so), "%s-rdmav34.so", drivers_entry);
	if (!dlopen(so, RTLD_NOW | RTLD_LOCAL)) {
		fprintf(stderr, "dlopen %s: %s\n", so, dlerror());
		return NULL;
	}
	CHECK(dev_ops != NULL);
	if (!dev_ops)
		return NULL;
	vctx = dev_ops->alloc_context(&dev.device, kfd, NULL);
	CHECK(vctx != NULL);
	CHECK(ctx_ops != NULL);
	CHECK(ioctl_driver_id == RDMA_DRIVER_RXE);
	return vctx && ctx_ops ? &vctx->context : NULL;
}

static uint32_t kprod(struct rxe_queue_buf *q)
{
	return __atomic_load_n(&q->producer_index, __ATOMIC_ACQUIRE);
}

static struct ibv_qp *make_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			      struct ibv_cq *cq, enum ibv_qp_type type,
			      uint32_t depth)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	struct ibv_qp_attr mod = { .qp_state = IBV_QPS_RTS };
	struct ibv_qp *qp;

	(void)ctx;
	qp = ctx_ops->create_qp(pd, &attr);
	CHECK(qp != NULL);
	if (qp)
		CHECK(ctx_ops->modify_qp(qp, &mod, IBV_QP_STATE) == 0);
	return qp;
}

static void check_rc_sends(struct ibv_context *ctx, struct ibv_pd *pd,
			   struct ibv_cq *cq)
{
	static char payload[] = "inline bytes";
	struct ibv_sge sg[3] = { { 0x1000, 100, 11 }, { 0x2000, 28, 12 },
				 { 0x3000, 1, 13 } };
	struct ibv_sge isg = { (uintptr_t)payload, sizeof(payload), 0 };
	struct ibv_sge asg = { 0x3000, 8, 13 };
	struct ibv_send_wr write = {
		.wr_id = 1, .sg_list = sg, .num_sge = 2,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(0xabcd),
		.wr.rdma = { .remote_addr = 0x7000, .rkey = 99 },
	};
	struct ibv_send_wr inl = {
		.wr_id = 2, .sg_list = &isg, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE,
	};
	struct ibv_send_wr cas = {
		.wr_id = 3, .sg_list = &asg, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
		.wr.atomic = { .remote_addr = 0x8008, .compare_add = 5,
			       .swap = 6, .rkey = 77 },
	};
	struct ibv_send_wr *bad = NULL;
	struct rxe_send_wqe *w;
	struct ibv_qp *qp;

	/* 3 WRs asked: 4 slots, one always free, so the ring holds 3 */
	qp = make_qp(ctx, pd, cq, IBV_QPT_RC, 3);
	if (!qp)
		return;
	write.next = &inl;
	send_doorbells = 0;
	CHECK(ctx_ops->post_send(qp, &write, &bad) == 0);
	CHECK(send_doorbells == 1);	/* one bell per call */
	CHECK(kprod(last_sq) == 2);
	/* the ring fills after the CAS: the WR behind it is refused */
	cas.next = &inl;
	inl.next = NULL;
	CHECK(ctx_ops->post_send(qp, &cas, &bad) == ENOMEM);
	CHECK(bad == &inl);
	CHECK(send_doorbells == 2);	/* the CAS posted still rings */
	CHECK(kprod(last_sq) == 3);

	w = kslot(last_sq, 0);
	CHECK(w->wr.wr_id == 1);
	CHECK(w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM);
	CHECK(w->wr.send_flags == IBV_SEND_SIGNALED);
	CHECK(w->wr.ex.imm_data == htobe32(0xabcd));
	CHECK(w->wr.wr.rdma.remote_addr == 0x7000 && w->wr.wr.rdma.rkey == 99);
	CHECK(w->dma.num_sge == 2 && w->dma.length == 128);
	CHECK(w->dma.sge[1].addr == 0x2000 && w->dma.sge[1].length == 28 &&
	      w->dma.sge[1].lkey == 12);

	w = kslot(last_sq, 1);
	CHECK(w->wr.opcode == IBV_WR_SEND);
	CHECK(w->wr.send_flags & IBV_SEND_INLINE);
	CHECK(w->dma.length == sizeof(payload));
	CHECK(memcmp(w->dma.inline_data, payload, sizeof(payload)) == 0);

	w = kslot(last_sq, 2);
	CHECK(w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP);
	CHECK(w->wr.wr.atomic.remote_addr == 0x8008);
	CHECK(w->wr.wr.atomic.compare_add == 5 && w->wr.wr.atomic.swap == 6);
	CHECK(w->wr.wr.atomic.rkey == 77 && w->dma.sge[0].lkey == 13);

	/* the kernel completes all three: the producer wraps to slot 0 */
	__atomic_store_n(&last_sq->consumer_index, 3, __ATOMIC_RELEASE);
	CHECK(ctx_ops->post_send(qp, &inl, &bad) == 0);
	CHECK(kprod(last_sq) == 0);	/* stored masked */

	/* immediate errors: no slot written, no bell */
	send_doorbells = 0;
	asg.length = 4;
	cas.next = NULL;
	CHECK(ctx_ops->post_send(qp, &cas, &bad) == EINVAL && bad == &cas);
	write.num_sge = 3;
	write.next = NULL;
	CHECK(ctx_ops->post_send(qp, &write, &bad) == EINVAL && bad == &write);
	CHECK(send_doorbells == 0 && kprod(last_sq) == 0);
	CHECK(ctx_ops->destroy_qp(qp) == 0);
}

static void check_states_and_uc(struct ibv_context *ctx, struct ibv_pd *pd,
				struct ibv_cq *cq)
{
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT };
	struct ibv_send_wr read = { .opcode = IBV_WR_RDMA_READ };
	struct ibv_send_wr send = { .opcode = IBV_WR_SEND };
	struct ibv_send_wr *bad = NULL;
	struct ibv_qp *qp;

	qp = make_qp(ctx, pd, cq, IBV_QPT_UC, 8);
	if (!qp)
		return;
	/* UC has no READ (IBA 9.7.4) */
	CHECK(ctx_ops->post_send(qp, &read, &bad) == EINVAL);
	/* before RTS: refused without touching the ring */
	CHECK(ctx_ops->modify_qp(qp, &init, IBV_QP_STATE) == 0);
	send_doorbells = 0;
	CHECK(ctx_ops->post_send(qp, &send, &bad) == EINVAL && bad == &send);
	CHECK(send_doorbells == 0 && kprod(last_sq) == 0);
	CHECK(ctx_ops->destroy_qp(qp) == 0);
}

static void check_ud(struct ibv_context *ctx, struct ibv_pd *pd,
		     struct ibv_cq *cq)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_ah_attr no_grh = { .port_num = 1 };
	struct ibv_sge sg = { 0x1000, 64, 3 };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(1),
	};
	struct ibv_send_wr *bad = NULL;
	struct rxe_send_wqe *w;
	struct ibv_ah *ah;
	struct ibv_qp *qp;

	CHECK(ctx_ops->create_ah(pd, &no_grh) == NULL && errno == EINVAL);
	ah = ctx_ops->create_ah(pd, &aa);
	CHECK(ah != NULL);
	qp = make_qp(ctx, pd, cq, IBV_QPT_UD, 8);
	if (!qp || !ah)
		return;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0x123;
	wr.wr.ud.remote_qkey = 0x11111111;
	CHECK(ctx_ops->post_send(qp, &wr, &bad) == 0);
	w = kslot(last_sq, 0);
	CHECK(w->wr.wr.ud.ah_num == 7);
	CHECK(w->wr.wr.ud.remote_qpn == 0x123);
	CHECK(w->wr.wr.ud.remote_qkey == 0x11111111);
	CHECK(w->wr.ex.imm_data == htobe32(1));
	/* UD has no RDMA */
	wr.opcode = IBV_WR_RDMA_WRITE;
	CHECK(ctx_ops->post_send(qp, &wr, &bad) == EINVAL);
	CHECK(ctx_ops->destroy_qp(qp) == 0);
	CHECK(ctx_ops->destroy_ah(ah) == 0);
}

static void check_recv_and_poll(struct ibv_context *ctx, struct ibv_pd *pd,
				struct ibv_cq *cq)
{
	struct ibv_sge sg[3] = { { 0x5000, 10, 1 }, { 0x6000, 20, 2 },
				 { 0x7000, 1, 3 } };
	struct ibv_recv_wr rwr = { .wr_id = 42, .sg_list = sg, .num_sge = 2 };
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_recv_wr *bad = NULL;
	struct ib_uverbs_wc *kwc;
	struct rxe_recv_wqe *r;
	struct ibv_wc wc[4];
	struct ibv_qp *qp;

	qp = make_qp(ctx, pd, cq, IBV_QPT_RC, 8);
	if (!qp)
		return;
	CHECK(ctx_ops->post_recv(qp, &rwr, &bad) == 0);
	CHECK(kprod(last_rq) == 1);
	r = kslot(last_rq, 0);
	CHECK(r->wr_id == 42 && r->dma.num_sge == 2 && r->dma.length == 30);
	CHECK(r->dma.sge[1].addr == 0x6000 && r->dma.sge[1].lkey == 2);
	rwr.num_sge = 3;
	CHECK(ctx_ops->post_recv(qp, &rwr, &bad) == EINVAL && bad == &rwr);
	rwr.num_sge = 2;

	/* a receive posted in ERR tells the kernel, which flushes it */
	recv_doorbells = 0;
	CHECK(ctx_ops->modify_qp(qp, &err, IBV_QP_STATE) == 0);
	CHECK(ctx_ops->post_recv(qp, &rwr, &bad) == 0);
	CHECK(recv_doorbells == 1);
	CHECK(ctx_ops->modify_qp(qp, &reset, IBV_QP_STATE) == 0);
	CHECK(ctx_ops->post_recv(qp, &rwr, &bad) == EINVAL);

	/* the kernel completes two WRs */
	kwc = kslot(last_cq, 0);
	memset(kwc, 0, sizeof(*kwc));
	kwc->wr_id = 42;
	kwc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	kwc->byte_len = 30;
	kwc->ex.imm_data = htobe32(0x55);
	kwc->qp_num = 17;
	kwc->wc_flags = IBV_WC_WITH_IMM;
	kwc = kslot(last_cq, 1);
	memset(kwc, 0, sizeof(*kwc));
	kwc->wr_id = 43;
	kwc->status = IBV_WC_WR_FLUSH_ERR;
	__atomic_store_n(&last_cq->producer_index, 2, __ATOMIC_RELEASE);

	CHECK(ctx_ops->poll_cq(cq, 1, wc) == 1);
	CHECK(wc[0].wr_id == 42 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK(wc[0].byte_len == 30 && wc[0].qp_num == 17);
	CHECK(wc[0].imm_data == htobe32(0x55));
	CHECK(wc[0].wc_flags == IBV_WC_WITH_IMM);
	CHECK(ctx_ops->poll_cq(cq, 4, wc) == 1);
	CHECK(wc[0].wr_id == 43 && wc[0].status == IBV_WC_WR_FLUSH_ERR);
	CHECK(ctx_ops->poll_cq(cq, 4, wc) == 0);
	CHECK(last_cq->consumer_index == 2);
	CHECK(ctx_ops->destroy_qp(qp) == 0);
}

/* The ibv_wr_*() API: batches published whole, one bell per batch. */
static void check_wr_api(struct ibv_context *ctx, struct ibv_pd *pd,
			 struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 3, .max_recv_wr = 3, .max_send_sge = 2,
			 .max_recv_sge = 1, .max_inline_data = 32 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS };
	static char msg[] = "hello";
	struct rxe_send_wqe *w;
	struct ibv_qp_ex *qpx;
	struct ibv_qp *qp;

	attr.send_ops_flags |= IBV_QP_EX_WITH_TSO;
	CHECK(ctx_ops->create_qp_ex(ctx, &attr) == NULL && errno == EOPNOTSUPP);
	attr.send_ops_flags &= ~(uint64_t)IBV_QP_EX_WITH_TSO;
	qp = ctx_ops->create_qp_ex(ctx, &attr);
	CHECK(qp != NULL);
	if (!qp)
		return;
	/* libibverbs' own accessor: the comp_mask bit, at its offset */
	qpx = ibv_qp_to_qp_ex(qp);
	CHECK(qpx != NULL);
	if (!qpx)
		return;

	/* before RTS the batch fails whole */
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	CHECK(ibv_wr_complete(qpx) == EINVAL);
	CHECK(ctx_ops->modify_qp(qp, &rts, IBV_QP_STATE) == 0);

	send_doorbells = 0;
	ibv_wr_start(qpx);
	qpx->wr_id = 11;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, 55, 0x4000);
	ibv_wr_set_sge(qpx, 3, 0x1000, 4096);
	qpx->wr_id = 12;
	qpx->wr_flags = 0;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, msg, sizeof(msg));
	CHECK(kprod(last_sq) == 0);	/* nothing published before complete */
	CHECK(ibv_wr_complete(qpx) == 0);
	CHECK(send_doorbells == 1 && kprod(last_sq) == 2);
	w = kslot(last_sq, 0);
	CHECK(w->wr.wr_id == 11 && w->wr.opcode == IBV_WR_RDMA_WRITE);
	CHECK(w->wr.send_flags == IBV_SEND_SIGNALED);
	CHECK(w->wr.wr.rdma.rkey == 55 && w->wr.wr.rdma.remote_addr == 0x4000);
	CHECK(w->dma.num_sge == 1 && w->dma.length == 4096);
	w = kslot(last_sq, 1);
	CHECK(w->wr.wr_id == 12 && (w->wr.send_flags & IBV_SEND_INLINE));
	CHECK(w->dma.length == sizeof(msg) &&
	      memcmp(w->dma.inline_data, msg, sizeof(msg)) == 0);

	/* one slot left: a batch of two fails whole, nothing published */
	ibv_wr_start(qpx);
	ibv_wr_atomic_fetch_add(qpx, 1, 0x8000, 1);
	ibv_wr_set_sge(qpx, 3, 0x1000, 8);
	ibv_wr_send(qpx);
	CHECK(ibv_wr_complete(qpx) == ENOMEM);
	CHECK(kprod(last_sq) == 2 && send_doorbells == 1);
	/* a 4-byte atomic is refused; abort releases the lock */
	ibv_wr_start(qpx);
	ibv_wr_atomic_fetch_add(qpx, 1, 0x8000, 1);
	ibv_wr_set_sge(qpx, 3, 0x1000, 4);
	CHECK(ibv_wr_complete(qpx) == EINVAL);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_abort(qpx);
	CHECK(kprod(last_sq) == 2);
	ibv_wr_start(qpx);
	ibv_wr_atomic_fetch_add(qpx, 1, 0x8000, 1);
	ibv_wr_set_sge(qpx, 3, 0x1000, 8);
	CHECK(ibv_wr_complete(qpx) == 0 && kprod(last_sq) == 3);
	w = kslot(last_sq, 2);
	CHECK(w->wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD);
	CHECK(w->wr.wr.atomic.compare_add == 1 && w->dma.length == 8);
	CHECK(ctx_ops->destroy_qp(qp) == 0);
}

/*
 * Memory windows: type 1 bound by ibv_bind_mw() with the next key byte,
 * type 2 by post_send and ibv_wr_bind_mw() with the consumer's key; every
 * bind a BIND_MW WQE in the rxe layout (what srnic_swqe_from_user() reads).
 */
static void check_mw(struct ibv_context *ctx, struct ibv_pd *pd,
		     struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_BIND_MW,
	};
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS };
	struct ibv_mr mr = { .context = ctx, .pd = pd, .lkey = 0x77 };
	struct ibv_mw_bind bind = {
		.wr_id = 5, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = &mr, .addr = 0x10000, .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_send_wr wr = { .wr_id = 6, .opcode = IBV_WR_BIND_MW };
	struct ibv_send_wr *bad = NULL;
	struct ibv_mw *mw1, *mw2;
	struct rxe_send_wqe *w;
	struct ibv_qp_ex *qpx;
	struct ibv_qp *qp, *ud;
	uint32_t key1, key2;

	errno = 0;
	CHECK(ctx_ops->alloc_mw(pd, (enum ibv_mw_type)3) == NULL &&
	      errno == EINVAL);
	mw1 = ctx_ops->alloc_mw(pd, IBV_MW_TYPE_1);
	mw2 = ctx_ops->alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw1 && mw2 && mws_allocated == 2);
	qp = ctx_ops->create_qp_ex(ctx, &attr);
	CHECK(qp != NULL);
	if (!mw1 || !mw2 || !qp)
		return;
	qpx = ibv_qp_to_qp_ex(qp);
	CHECK(qpx != NULL && qpx->wr_bind_mw != NULL);
	/* before RTS, nothing is posted and the key stays */
	key1 = mw1->rkey;
	CHECK(ctx_ops->bind_mw(qp, mw1, &bind) == EINVAL && mw1->rkey == key1);
	CHECK(ctx_ops->modify_qp(qp, &rts, IBV_QP_STATE) == 0);

	/* type 1: ibv_bind_mw(), the next key byte */
	send_doorbells = 0;
	CHECK(ctx_ops->bind_mw(qp, mw2, &bind) == EINVAL);
	CHECK(ctx_ops->bind_mw(qp, mw1, &bind) == 0);
	CHECK(send_doorbells == 1 && kprod(last_sq) == 1);
	CHECK(mw1->rkey == ((key1 & ~0xffu) | ((key1 + 1) & 0xff)));
	w = kslot(last_sq, 0);
	CHECK(w->wr.opcode == IBV_WR_BIND_MW && w->wr.wr_id == 5);
	CHECK(w->wr.send_flags == IBV_SEND_SIGNALED);
	CHECK(w->wr.wr.mw.mw_rkey == key1 && w->wr.wr.mw.rkey == mw1->rkey);
	CHECK(w->wr.wr.mw.mr_lkey == 0x77 && w->wr.wr.mw.addr == 0x10000);
	CHECK(w->wr.wr.mw.length == 4096);
	CHECK(w->wr.wr.mw.access == IBV_ACCESS_REMOTE_WRITE);
	CHECK(w->dma.num_sge == 0 && w->dma.length == 0);
	/* unbinding a type 1 window: length 0, the key moves on again */
	key1 = mw1->rkey;
	bind.bind_info.length = 0;
	CHECK(ctx_ops->bind_mw(qp, mw1, &bind) == 0);
	w = kslot(last_sq, 1);
	CHECK(w->wr.wr.mw.mw_rkey == key1 && w->wr.wr.mw.length == 0);
	CHECK(mw1->rkey != key1 && (mw1->rkey >> 8) == (key1 >> 8));
	bind.bind_info.length = 4096;

	/* type 2 by post_send: the consumer's key byte, not the index */
	key2 = mw2->rkey;
	wr.bind_mw.mw = mw2;
	wr.bind_mw.bind_info = bind.bind_info;
	wr.bind_mw.rkey = key2 + 0x100;
	CHECK(ctx_ops->post_send(qp, &wr, &bad) == EINVAL && bad == &wr);
	wr.bind_mw.rkey = (key2 & ~0xffu) | 0x99;
	wr.bind_mw.bind_info.length = 0;	/* a type 2 bind binds */
	CHECK(ctx_ops->post_send(qp, &wr, &bad) == EINVAL);
	wr.bind_mw.bind_info.length = 4096;
	wr.num_sge = -1;			/* not read for a bind */
	CHECK(ctx_ops->post_send(qp, &wr, &bad) == 0 && kprod(last_sq) == 3);
	w = kslot(last_sq, 2);
	CHECK(w->wr.opcode == IBV_WR_BIND_MW && w->wr.wr_id == 6);
	CHECK(w->wr.wr.mw.mw_rkey == key2 && w->wr.wr.mw.rkey == wr.bind_mw.rkey);
	CHECK(mw2->rkey == wr.bind_mw.rkey);

	/* type 2 by ibv_wr_bind_mw() */
	key2 = mw2->rkey;
	ibv_wr_start(qpx);
	qpx->wr_id = 7;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, mw2, (key2 & ~0xffu) | 0x5a, &bind.bind_info);
	CHECK(ibv_wr_complete(qpx) == 0 && kprod(last_sq) == 4);
	w = kslot(last_sq, 3);
	CHECK(w->wr.opcode == IBV_WR_BIND_MW && w->wr.wr_id == 7);
	CHECK(w->wr.wr.mw.mw_rkey == key2 &&
	      w->wr.wr.mw.rkey == ((key2 & ~0xffu) | 0x5a));
	CHECK(w->wr.wr.mw.mr_lkey == 0x77 && w->wr.wr.mw.length == 4096);
	CHECK(mw2->rkey == ((key2 & ~0xffu) | 0x5a));
	/* a bad bind fails the batch whole */
	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, mw2, mw2->rkey + 0x100, &bind.bind_info);
	CHECK(ibv_wr_complete(qpx) == EINVAL && kprod(last_sq) == 4);
	CHECK(ctx_ops->destroy_qp(qp) == 0);

	/* UD QPs bind no window */
	ud = make_qp(ctx, pd, cq, IBV_QPT_UD, 4);
	if (ud) {
		wr.bind_mw.rkey = mw2->rkey + 1;
		wr.num_sge = 0;
		CHECK(ctx_ops->post_send(ud, &wr, &bad) == EINVAL);
		CHECK(ctx_ops->destroy_qp(ud) == 0);
	}
	CHECK(ctx_ops->dealloc_mw(mw1) == 0);
	CHECK(ctx_ops->dealloc_mw(mw2) == 0);
	CHECK(mws_allocated == 0);
}

/*
 * create_qp_ex of each type, with the empty set of creation flags (pyverbs
 * passes it); a flag is refused, and libibverbs never sees CREATE_FLAGS.
 */
static void check_qp_ex_types(struct ibv_context *ctx, struct ibv_pd *pd,
			      struct ibv_cq *cq)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD
	};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct ibv_qp_init_attr_ex attr = {
			.send_cq = cq, .recv_cq = cq, .qp_type = types[i],
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_CREATE_FLAGS,
			.pd = pd,
		};
		struct ibv_qp *qp;

		qp = ctx_ops->create_qp_ex(ctx, &attr);
		CHECK(qp != NULL && qp->qp_type == types[i]);
		CHECK(attr.comp_mask == (IBV_QP_INIT_ATTR_PD |
					 IBV_QP_INIT_ATTR_CREATE_FLAGS));
		if (qp)
			CHECK(ctx_ops->destroy_qp(qp) == 0);
		attr.create_flags = IBV_QP_CREATE_SCATTER_FCS;
		errno = 0;
		CHECK(ctx_ops->create_qp_ex(ctx, &attr) == NULL &&
		      errno == EOPNOTSUPP);
	}
}

/* Extended CQ polling: one entry at a time, released as the caller moves. */
static void check_cq_ex(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_poll_cq_attr pattr = {};
	struct ib_uverbs_wc *kwc;
	struct ibv_cq_ex *cqx;

	attr.wc_flags |= IBV_WC_EX_WITH_CVLAN;	/* no value for it here */
	CHECK(ctx_ops->create_cq_ex(ctx, &attr) == NULL && errno == EOPNOTSUPP);
	attr.wc_flags &= ~(uint64_t)IBV_WC_EX_WITH_CVLAN;
	cqx = ctx_ops->create_cq_ex(ctx, &attr);
	CHECK(cqx != NULL);
	if (!cqx)
		return;
	CHECK(ibv_start_poll(cqx, &pattr) == ENOENT);	/* lock dropped */

	kwc = kslot(last_cq, 0);
	memset(kwc, 0, sizeof(*kwc));
	kwc->wr_id = 100;
	kwc->opcode = IBV_WC_RDMA_WRITE;
	kwc->qp_num = 17;
	kwc = kslot(last_cq, 1);
	memset(kwc, 0, sizeof(*kwc));
	kwc->wr_id = 101;
	kwc->opcode = IBV_WC_RECV;
	kwc->byte_len = 512;
	__atomic_store_n(&last_cq->producer_index, 2, __ATOMIC_RELEASE);

	CHECK(ibv_start_poll(cqx, &pattr) == 0);
	CHECK(cqx->wr_id == 100 && cqx->status == IBV_WC_SUCCESS);
	CHECK(ibv_wc_read_opcode(cqx) == IBV_WC_RDMA_WRITE);
	CHECK(ibv_wc_read_qp_num(cqx) == 17);
	CHECK(last_cq->consumer_index == 0);	/* still being read */
	CHECK(ibv_next_poll(cqx) == 0);
	CHECK(cqx->wr_id == 101 && ibv_wc_read_byte_len(cqx) == 512);
	CHECK(last_cq->consumer_index == 1);
	CHECK(ibv_next_poll(cqx) == ENOENT);
	ibv_end_poll(cqx);
	CHECK(last_cq->consumer_index == 2);
	/* the classic verb on the same CQ sees it empty, and the lock free */
	{
		struct ibv_wc wc;

		CHECK(ctx_ops->poll_cq(ibv_cq_ex_to_cq(cqx), 1, &wc) == 0);
	}
	CHECK(ctx_ops->destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0);
}

/* Completion timestamps: read from the slot after the completion. */
static void check_cq_ex_timestamps(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_poll_cq_attr pattr = {};
	struct srnic_native_cqe *kcqe;
	struct ibv_cq_ex *cqx;
	struct timespec t0, t1;
	uint64_t clock;

	cqx = ctx_ops->create_cq_ex(ctx, &attr);
	CHECK(cqx != NULL);
	if (!cqx)
		return;
	kcqe = kslot(last_cq, 0);
	memset(kcqe, 0, sizeof(*kcqe));
	kcqe->uwc.wr_id = 7;
	kcqe->timestamp = 123456789;
	kcqe->wallclock = 987654321;
	__atomic_store_n(&last_cq->producer_index, 1, __ATOMIC_RELEASE);
	CHECK(ibv_start_poll(cqx, &pattr) == 0);
	CHECK(cqx->wr_id == 7);
	CHECK(ibv_wc_read_completion_ts(cqx) == 123456789);
	CHECK(ibv_wc_read_completion_wallclock_ns(cqx) == 987654321);
	ibv_end_poll(cqx);
	CHECK(ctx_ops->destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0);

	/* the device clock is CLOCK_MONOTONIC in nanoseconds */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(ctx_ops->query_rt_values(ctx, &v) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock = (uint64_t)v.raw_clock.tv_nsec;
	CHECK(v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK && !v.raw_clock.tv_sec);
	CHECK(clock >= t0.tv_sec * 1000000000ULL + t0.tv_nsec &&
	      clock <= t1.tv_sec * 1000000000ULL + t1.tv_nsec);
	v.comp_mask = 0;
	CHECK(ctx_ops->query_rt_values(ctx, &v) == 0 && v.comp_mask == 0);
}

/* A ring whose header does not fit its entries is refused, not used. */
static void check_bad_ring(struct ibv_context *ctx)
{
	cqs_destroyed = 0;
	bad_cq_header = true;
	CHECK(ctx_ops->create_cq(ctx, 8, NULL, 0) == NULL && errno == EPROTO);
	CHECK(cqs_destroyed == 1);	/* the kernel object is not leaked */
	bad_cq_header = false;
}

static void check_srq(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = 2, .max_sge = 1 } };
	struct ibv_sge sg = { 0x9000, 64, 4 };
	struct ibv_recv_wr a = { .wr_id = 1, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr b = { .wr_id = 2, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr c = { .wr_id = 3, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;
	struct rxe_recv_wqe *r;
	struct ibv_srq *srq;

	(void)ctx;
	srq = ctx_ops->create_srq(pd, &attr);
	CHECK(srq != NULL);
	if (!srq)
		return;
	a.next = &b;
	b.next = &c;
	/* capacity 3 (4 slots, one free): all fit */
	CHECK(ctx_ops->post_srq_recv(srq, &a, &bad) == 0);
	CHECK(kprod(last_srq) == 3);
	r = kslot(last_srq, 2);
	CHECK(r->wr_id == 3 && r->dma.num_sge == 1 && r->dma.sge[0].lkey == 4);
	c.next = NULL;
	CHECK(ctx_ops->post_srq_recv(srq, &c, &bad) == ENOMEM && bad == &c);
	CHECK(ctx_ops->destroy_srq(srq) == 0);
}

/*
 * rereg_mr: one command, the flags and arguments as given, the MR's own
 * address as its iova (ibv_rereg_mr has no iova), the kernel's errno value
 * returned and left in errno.
 */
static void check_rereg_mr(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct verbs_mr vmr = {
		.ibv_mr = { .context = ctx, .pd = pd, .lkey = 0x1234,
			    .rkey = 0x1234 },
	};
	struct ibv_pd pd2 = { .context = ctx, .handle = 9 };
	static char buf[8192];
	int flags;

	CHECK(ctx_ops->rereg_mr != NULL);
	if (!ctx_ops->rereg_mr)
		return;
	flags = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS;
	rereg.answer = 0;
	CHECK(ctx_ops->rereg_mr(&vmr, flags, pd, buf + 4096, 4096,
				IBV_ACCESS_LOCAL_WRITE) == 0);
	CHECK(rereg.vmr == &vmr && rereg.flags == (uint32_t)flags);
	CHECK(rereg.addr == buf + 4096 && rereg.length == 4096);
	CHECK(rereg.hca_va == (uintptr_t)(buf + 4096));
	CHECK(rereg.access == IBV_ACCESS_LOCAL_WRITE && rereg.pd == pd);
	CHECK(vmr.ibv_mr.lkey == 0x1234 && vmr.ibv_mr.rkey == 0x1234);

	CHECK(ctx_ops->rereg_mr(&vmr, IBV_REREG_MR_CHANGE_PD, &pd2, NULL, 0,
				0) == 0);
	CHECK(rereg.flags == IBV_REREG_MR_CHANGE_PD && rereg.pd == &pd2);

	/* windows bound: the kernel's EBUSY, for ibv_rereg_mr's errno */
	rereg.answer = EBUSY;
	errno = 0;
	CHECK(ctx_ops->rereg_mr(&vmr, IBV_REREG_MR_CHANGE_ACCESS, pd, NULL, 0,
				IBV_ACCESS_LOCAL_WRITE) == EBUSY);
	CHECK(errno == EBUSY);
	rereg.answer = 0;
}

/* A QP taken to RESET leaves none of its completions in its CQ. */
static void check_reset_cleans_cq(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	static const uint32_t qpns[] = { 17, 18, 17, 18, 17 };
	struct ib_uverbs_wc *kwc;
	struct ibv_wc wc[8];
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint32_t i;

	cq = ctx_ops->create_cq(ctx, 8, NULL, 0);
	CHECK(cq != NULL);
	if (!cq)
		return;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	qp = ctx_ops->create_qp(pd, &attr);
	CHECK(qp != NULL && qp->qp_num == 17);
	if (!qp)
		goto out;
	/* what ibv_create_qp() sets */
	qp->send_cq = cq;
	qp->recv_cq = cq;
	/* 16 slots: from slot 13 the entries wrap around the ring */
	__atomic_store_n(&last_cq->producer_index, 13, __ATOMIC_RELEASE);
	__atomic_store_n(&last_cq->consumer_index, 13, __ATOMIC_RELEASE);
	for (i = 0; i < 5; i++) {
		kwc = kslot(last_cq, 13 + i);
		memset(kwc, 0, sizeof(*kwc));
		kwc->wr_id = 200 + i;
		kwc->qp_num = qpns[i];
	}
	__atomic_store_n(&last_cq->producer_index,
			 (13 + 5) & last_cq->index_mask, __ATOMIC_RELEASE);
	CHECK(ctx_ops->modify_qp(qp, &reset, IBV_QP_STATE) == 0);
	CHECK(ctx_ops->poll_cq(cq, 8, wc) == 2);
	CHECK(wc[0].wr_id == 201 && wc[0].qp_num == 18);
	CHECK(wc[1].wr_id == 203 && wc[1].qp_num == 18);
	CHECK(ctx_ops->destroy_qp(qp) == 0);
out:
	CHECK(ctx_ops->destroy_cq(cq) == 0);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd pd = {};
	struct ibv_cq *cq;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <dir>/libsrnic\n", argv[0]);
		return 2;
	}
	kfd = memfd_create("srnic_fake_uverbs", MFD_CLOEXEC);
	CHECK(kfd >= 0);
	ctx = kfd >= 0 ? open_context(argv[1]) : NULL;
	if (ctx) {
		pd.context = ctx;
		cq = ctx_ops->create_cq(ctx, 8, NULL, 0);
		CHECK(cq != NULL);
		if (cq) {
			check_rc_sends(ctx, &pd, cq);
			check_states_and_uc(ctx, &pd, cq);
			check_ud(ctx, &pd, cq);
			check_recv_and_poll(ctx, &pd, cq);
			check_wr_api(ctx, &pd, cq);
			check_mw(ctx, &pd, cq);
			check_qp_ex_types(ctx, &pd, cq);
			CHECK(ctx_ops->destroy_cq(cq) == 0);
		}
		check_srq(ctx, &pd);
		check_rereg_mr(ctx, &pd);
		check_reset_cleans_cq(ctx, &pd);
		check_bad_ring(ctx);
		check_cq_ex(ctx);
		check_cq_ex_timestamps(ctx);
		ctx_ops->free_context(ctx);
	}
	if (failures) {
		fprintf(stderr, "provider_fake_kernel_test: %d check(s) failed\n",
			failures);
		return 1;
	}
	printf("provider_fake_kernel_test: ok\n");
	return 0;
}
