// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srnicdv.h: DC QPs (docs/dc.md). A DCI or DCT is an IBV_QPT_DRIVER QP
 * whose create command carries struct srnic_create_dc_qp
 * (include/uapi/rdma/srnic.h); a DCI's send WQE names its target in
 * struct srnic_dc_wr_addr, at wr.ud.av of the ring entry.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include <uapi/rdma/srnic.h>

#include "srnic.h"
#include "srnicdv.h"

#define SRNICDV_EXPORT __attribute__((visibility("default")))

struct srnic_create_dc_qp_cmd {
	struct ibv_create_qp ibv;
	struct srnic_create_dc_qp drv;
};

struct srnic_create_dc_qp_resp {
	struct ib_uverbs_create_qp_resp ibv;
	struct rxe_create_qp_resp drv;
};

SRNICDV_EXPORT bool srnicdv_is_supported(struct ibv_device *device)
{
	return srnic_is_srnic_device(device);
}

static int srnic_dc_check(struct ibv_context *context,
			  const struct ibv_qp_init_attr_ex *attr,
			  const struct srnicdv_qp_init_attr *dv)
{
	const struct srnicdv_dc_init_attr *dc = &dv->dc_init_attr;

	if (!srnic_is_srnic_device(context->device))
		return EOPNOTSUPP;
	if ((dv->comp_mask & ~(uint64_t)SRNICDV_QP_INIT_ATTR_MASK_DC) ||
	    dv->create_flags || attr->qp_type != IBV_QPT_DRIVER ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) ||
	    (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)))
		return EINVAL;
	if (dc->dc_type == SRNICDV_DCTYPE_DCT)
		return attr->srq ? 0 : EINVAL;
	if (dc->dc_type != SRNICDV_DCTYPE_DCI || attr->srq)
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    !srnic_wr_ops_supported(attr->send_ops_flags))
		return EOPNOTSUPP;
	return 0;
}

SRNICDV_EXPORT struct ibv_qp *
srnicdv_create_qp(struct ibv_context *context,
		  struct ibv_qp_init_attr_ex *attr,
		  struct srnicdv_qp_init_attr *dv)
{
	struct srnic_create_dc_qp_resp resp = {};
	struct srnic_create_dc_qp_cmd cmd;
	struct srnic_qp *qp;
	int err;

	if (!dv || !(dv->comp_mask & SRNICDV_QP_INIT_ATTR_MASK_DC))
		return ibv_create_qp_ex(context, attr);
	err = srnic_dc_check(context, attr, dv);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = srnic_qp_alloc();
	if (!qp)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	cmd.drv.dc_type = dv->dc_init_attr.dc_type == SRNICDV_DCTYPE_DCT ?
			  SRNIC_DC_TYPE_DCT : SRNIC_DC_TYPE_DCI;
	cmd.drv.dct_access_key = dv->dc_init_attr.dct_access_key;
	err = ibv_cmd_create_qp_ex(context, &qp->vqp, attr, &cmd.ibv,
				   sizeof(cmd), &resp.ibv, sizeof(resp));
	if (err)
		goto err_free;
	/* the send queue only: a DCT's goes unused, a DCI receives nothing */
	err = srnic_qp_map(qp, context->cmd_fd, &resp.drv, false);
	if (err)
		goto err_destroy;
	srnic_qp_set_limits(qp, &attr->cap);
	qp->state = IBV_QPS_RESET;
	qp->dc_type = cmd.drv.dc_type;
	if (qp->dc_type == SRNIC_DC_TYPE_DCI &&
	    (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		srnic_qp_set_wr_ops(qp);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	srnic_qp_free(qp);
	errno = err;
	return NULL;
}

SRNICDV_EXPORT void srnicdv_wr_set_dc_addr(struct ibv_qp_ex *qpx,
					   struct ibv_ah *ah,
					   uint32_t remote_dctn,
					   uint64_t remote_dc_key)
{
	struct srnic_qp *qp = to_srnic_qp(&qpx->qp_base);
	struct rxe_send_wqe *wqe = qp->wr_cur;
	struct srnic_dc_wr_addr a = {
		.dct_num = remote_dctn,
		.dc_key = remote_dc_key,
	};

	if (!wqe)
		return;
	if (qp->dc_type != SRNIC_DC_TYPE_DCI || !ah) {
		srnic_wr_fail(qp, EINVAL);
		return;
	}
	a.ah_num = to_srnic_ah(ah)->ah_num;
	_Static_assert(sizeof(a) <= sizeof(wqe->wr.SRNIC_DC_ADDR_FIELD),
		       "the DC address fits rxe_send_wr.wr.ud.av");
	memcpy(&wqe->wr.SRNIC_DC_ADDR_FIELD, &a, sizeof(a));
}
