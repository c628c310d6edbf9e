// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsrnic entry points: registration with libibverbs, the device and
 * context, and the verbs that are one command each (device and port
 * queries, PD, MR, AH, multicast).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <uapi/rdma/srnic.h>

#include "srnic.h"

static int srnic_query_device_ex(struct ibv_context *context,
				 const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr,
				 size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(context, input, attr, attr_size,
				       &resp, &resp_size);
	if (err)
		return err;
	/* the kernel reports a number; tools print a string */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

/*
 * The device clock of completion timestamps (<uapi/rdma/srnic.h>):
 * CLOCK_MONOTONIC in nanoseconds, as the kernel reads it, given as a raw
 * clock value (tv_sec 0), the way hardware providers give their counter.
 */
static int srnic_query_rt_values(struct ibv_context *context,
				 struct ibv_values_ex *values)
{
	struct timespec ts;

	(void)context;
	/* on return, comp_mask says which of the asked-for values are set */
	if (!(values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)) {
		values->comp_mask = 0;
		return 0;
	}
	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		return errno;
	values->raw_clock.tv_sec = 0;
	values->raw_clock.tv_nsec = ts.tv_sec * 1000000000L + ts.tv_nsec;
	values->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	return 0;
}

static int srnic_query_port(struct ibv_context *context, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *srnic_alloc_pd(struct ibv_context *context)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	err = ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return pd;
}

static int srnic_dealloc_pd(struct ibv_pd *pd)
{
	int err = ibv_cmd_dealloc_pd(pd);

	if (!err)
		free(pd);
	return err;
}

static struct ibv_mr *srnic_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * A dma-buf MR (ibv_reg_dmabuf_mr): the kernel attaches to the buffer and
 * reads its pages; nothing in the rxe ABI's driver data.
 */
static struct ibv_mr *srnic_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					  size_t length, uint64_t iova, int fd,
					  int access)
{
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	err = SRNIC_CMD_REG_DMABUF_MR(pd, offset, length, iova, fd, access,
				      vmr);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_rereg_mr: the kernel makes a new MR that keeps the keys (or refuses
 * with EBUSY while windows are bound to it). libibverbs has checked the
 * flags and updates pd, addr and length itself; it turns a failure into
 * IBV_REREG_MR_ERR_CMD and leaves the reason in errno.
 */
static int srnic_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int err;

	err = ibv_cmd_rereg_mr(vmr, (uint32_t)flags, addr, length,
			       (uintptr_t)addr, access, pd, &cmd, sizeof(cmd),
			       &resp, sizeof(resp));
	if (err)
		errno = err;
	return err;
}

static int srnic_dereg_mr(struct verbs_mr *vmr)
{
	int err = ibv_cmd_dereg_mr(vmr);

	if (!err)
		free(vmr);
	return err;
}

/* create_ah's response: the core one, then the rxe ABI's AH number. */
struct srnic_create_ah_resp {
	struct ib_uverbs_create_ah_resp ibv;
	struct rxe_create_ah_resp drv;
};

static struct ibv_ah *srnic_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct srnic_create_ah_resp resp = {};
	struct srnic_ah *ah;
	int err;

	/* RoCEv2 paths are global: the kernel refuses an AH without GRH */
	if (!attr->is_global) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv,
				sizeof(resp));
	if (!err && !resp.drv.ah_num) {
		/* a kernel that names no AH in WQEs is not native ABI v1 */
		ibv_cmd_destroy_ah(&ah->ibv_ah);
		err = EPROTO;
	}
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	ah->ah_num = resp.drv.ah_num;
	return &ah->ibv_ah;
}

static int srnic_destroy_ah(struct ibv_ah *ibah)
{
	int err = ibv_cmd_destroy_ah(ibah);

	if (!err)
		free(to_srnic_ah(ibah));
	return err;
}

static void srnic_free_context(struct ibv_context *ibctx)
{
	struct srnic_context *ctx =
		SRNIC_STRUCT_OF(ibctx, struct srnic_context, vctx.context);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops srnic_ctx_ops = {
	/* ODP prefetch: the kernel does it all (srnic_odp_advise_mr()) */
	.advise_mr = ibv_cmd_advise_mr,
	.alloc_mw = srnic_alloc_mw,
	.alloc_pd = srnic_alloc_pd,
	.bind_mw = srnic_bind_mw,
	.close_xrcd = srnic_close_xrcd,
	.attach_mcast = ibv_cmd_attach_mcast,
	.create_ah = srnic_create_ah,
	.create_cq = srnic_create_cq,
	.create_cq_ex = srnic_create_cq_ex,
	.create_qp = srnic_create_qp,
	.create_qp_ex = srnic_create_qp_ex,
	.create_srq = srnic_create_srq,
	.create_srq_ex = srnic_create_srq_ex,
	.dealloc_mw = srnic_dealloc_mw,
	.dealloc_pd = srnic_dealloc_pd,
	.dereg_mr = srnic_dereg_mr,
	.destroy_ah = srnic_destroy_ah,
	.destroy_cq = srnic_destroy_cq,
	.destroy_qp = srnic_destroy_qp,
	.destroy_srq = srnic_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = srnic_free_context,
	.get_srq_num = srnic_get_srq_num,
	.modify_qp = srnic_modify_qp,
	.modify_srq = srnic_modify_srq,
	.open_qp = srnic_open_qp,
	.open_xrcd = srnic_open_xrcd,
	.poll_cq = srnic_poll_cq,
	.post_recv = srnic_post_recv,
	.post_send = srnic_post_send,
	.post_srq_recv = srnic_post_srq_recv,
	.query_device_ex = srnic_query_device_ex,
	.query_ece = srnic_query_ece,
	.query_port = srnic_query_port,
	.query_qp = srnic_query_qp,
	.query_rt_values = srnic_query_rt_values,
	.query_srq = srnic_query_srq,
	.reg_dmabuf_mr = srnic_reg_dmabuf_mr,
	.reg_mr = srnic_reg_mr,
	.req_notify_cq = srnic_req_notify_cq,
	.rereg_mr = srnic_rereg_mr,
	.resize_cq = srnic_resize_cq,
	.set_ece = srnic_set_ece,
};

static struct verbs_context *srnic_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct ib_uverbs_get_context_resp resp;
	struct ibv_get_context cmd;
	struct srnic_context *ctx;
	int err;

	(void)private_data;
	/*
	 * The ioctl header carries the driver id ib_uverbs compares with the
	 * device's: srnic devices keep RDMA_DRIVER_RXE in the kernel in both
	 * modes (a native one only does not report it to user space).
	 */
	_Static_assert(offsetof(struct srnic_context, vctx) == 0,
		       "the context offset passed below is 0");
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx), NULL,
					    RDMA_DRIVER_RXE);
	if (!ctx)
		return NULL;
	err = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp,
				  sizeof(resp));
	if (err) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = err;
		return NULL;
	}
	verbs_set_ops(&ctx->vctx, &srnic_ctx_ops);
	return &ctx->vctx;
}

static struct verbs_device *
srnic_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct srnic_device *dev;

	(void)sysfs_dev;
	dev = calloc(1, sizeof(*dev));
	return dev ? &dev->vdev : NULL;
}

static void srnic_uninit_device(struct verbs_device *vdev)
{
	free(SRNIC_STRUCT_OF(vdev, struct srnic_device, vdev));
}

/* No entry: srnic_match_device() decides. Not NULL (ibv_private.h). */
static const struct verbs_match_ent srnic_match_table[] = {
	{ .kind = SRNIC_IBV_MATCH_SENTINEL },
};

static const struct verbs_device_ops srnic_dev_ops = {
	.name = "srnic",
	.match_min_abi_version = SRNIC_NATIVE_ABI_VERSION,
	.match_max_abi_version = SRNIC_NATIVE_ABI_VERSION,
	.match_table = srnic_match_table,
	.match_device = srnic_match_device,
	.alloc_context = srnic_alloc_context,
	.alloc_device = srnic_alloc_device,
	.uninit_device = srnic_uninit_device,
};

/* libibverbs dlopen()s the provider; registering is all it does then. */
__attribute__((constructor)) static void srnic_register(void)
{
	srnic_runtime_ok();
	verbs_register_driver_34(&srnic_dev_ops);
}

/* Is @dev one of this provider's (srnicdv.h: refuse anyone else's)? */
bool srnic_is_srnic_device(struct ibv_device *dev)
{
	return dev && ((struct verbs_device *)dev)->ops == &srnic_dev_ops;
}
