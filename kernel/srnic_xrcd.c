// SPDX-License-Identifier: GPL-2.0
/*
 * srnic XRC domains (native mode only: rdma-core's rxe provider has no
 * open_xrcd). An XRC domain is a pure container, like a PD: ib_core and
 * ib_uverbs track its users (XRC SRQs, XRC target QPs, the inode of a
 * domain shared between processes), and srnic only checks, per packet,
 * that the XRC SRQ a request names is in its target QP's domain
 * (srnic_resp.c). The device counts domains against max_xrcds.
 */
#include "srnic.h"

static int srnic_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_srnic_dev(ibxrcd->device);

	return atomic_add_unless(&sdev->xrcd_count, 1, SRNIC_MAX_XRCD) ?
	       0 : -ENOMEM;
}

static int srnic_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	atomic_dec(&to_srnic_dev(ibxrcd->device)->xrcd_count);
	return 0;
}

/* Merged over the common tables for a native device only (srnic_dev.c). */
const struct ib_device_ops srnic_xrcd_ops = {
	.alloc_xrcd = srnic_alloc_xrcd,
	.dealloc_xrcd = srnic_dealloc_xrcd,

	INIT_RDMA_OBJ_SIZE(ib_xrcd, srnic_xrcd, ibxrcd),
};
