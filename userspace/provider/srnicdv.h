/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * srnicdv.h: srnic's direct verbs, for what plain verbs cannot say. Today:
 * Dynamically Connected QPs (docs/dc.md), on devices in native mode
 * (`rdma link add NAME type srnic_native netdev IF`), through srnic's own
 * provider (libsrnic). Shaped after mlx5dv.h, so that DC code written for
 * ConnectX ports by renaming (mlx5dv_ -> srnicdv_, MLX5DV_ -> SRNICDV_):
 *
 *   struct srnicdv_qp_init_attr dv = {
 *       .comp_mask = SRNICDV_QP_INIT_ATTR_MASK_DC,
 *       .dc_init_attr = { .dc_type = SRNICDV_DCTYPE_DCT,
 *                         .dct_access_key = KEY },
 *   };
 *   attr_ex.qp_type = IBV_QPT_DRIVER;     a DCT also needs attr_ex.srq
 *   qp = srnicdv_create_qp(ctx, &attr_ex, &dv);
 *
 * A DCI (SRNICDV_DCTYPE_DCI) is created with send_ops_flags and posts with
 * the ibv_wr_*() API, naming the target of each work request after the
 * opcode call: ibv_wr_send(qpx); srnicdv_wr_set_dc_addr(qpx, ah, dctn,
 * key); ibv_wr_set_sge(...). Both move RESET -> INIT -> RTR -> RTS with no
 * remote attribute (IBV_QP_STATE, plus IBV_QP_PORT / IBV_QP_ACCESS_FLAGS
 * at INIT as usual; path MTU, timeout, retry counts, max_rd_atomic <= 16
 * optional). Operations: SEND (with immediate), RDMA WRITE (with
 * immediate), RDMA READ, compare-and-swap, fetch-and-add.
 *
 * Link with the provider library (libsrnic-rdmav34.so), as with libmlx5.
 * Errors: NULL / an errno value; EOPNOTSUPP on a device that is not
 * srnic's in native mode.
 */
#ifndef SRNICDV_H
#define SRNICDV_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

enum srnicdv_dc_type {
	SRNICDV_DCTYPE_DCT = 1,
	SRNICDV_DCTYPE_DCI = 2,
};

enum srnicdv_qp_init_attr_mask {
	SRNICDV_QP_INIT_ATTR_MASK_DC = 1 << 1,
};

struct srnicdv_dc_init_attr {
	enum srnicdv_dc_type	dc_type;
	uint64_t		dct_access_key;	/* DCT only */
};

struct srnicdv_qp_init_attr {
	uint64_t		comp_mask;	/* enum srnicdv_qp_init_attr_mask */
	uint32_t		create_flags;	/* none: 0 */
	struct srnicdv_dc_init_attr dc_init_attr;
};

/* true if @device is driven by srnic's provider (a native-mode device) */
bool srnicdv_is_supported(struct ibv_device *device);

/*
 * Create a QP; with SRNICDV_QP_INIT_ATTR_MASK_DC a DCI or DCT
 * (qp_attr->qp_type IBV_QPT_DRIVER), else as ibv_create_qp_ex().
 */
struct ibv_qp *srnicdv_create_qp(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *qp_attr,
				 struct srnicdv_qp_init_attr *srnic_qp_attr);

/* The target of the DCI work request being built (after its ibv_wr_*()). */
void srnicdv_wr_set_dc_addr(struct ibv_qp_ex *qp, struct ibv_ah *ah,
			    uint32_t remote_dctn, uint64_t remote_dc_key);

#ifdef __cplusplus
}
#endif

#endif /* SRNICDV_H */
