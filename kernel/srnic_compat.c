// SPDX-License-Identifier: GPL-2.0
/*
 * srnic compat: ib_device_ops whose prototype differs between the kernels
 * srnic builds against, adapted to srnic's one implementation of each (see
 * srnic_compat.h for the SRNIC_HAVE_* feature macros Kbuild defines).
 */
#include <linux/limits.h>
#include <linux/module.h>
#include <rdma/uverbs_ioctl.h>

#include "srnic.h"

#ifdef SRNIC_HAVE_CREATE_CQ_ATTRS
/* A kernel CQ has no attribute bundle; a user CQ's udata is in it. */
static int srnic_compat_create_cq(struct ib_cq *ibcq,
				  const struct ib_cq_init_attr *attr,
				  struct uverbs_attr_bundle *attrs)
{
	return srnic_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define srnic_compat_create_cq srnic_create_cq
#endif

#ifdef SRNIC_HAVE_RESIZE_USER_CQ
static int srnic_compat_resize_cq(struct ib_cq *ibcq, unsigned int cqe,
				  struct ib_udata *udata)
{
	if (cqe > INT_MAX)
		return -EINVAL;
	return srnic_resize_cq(ibcq, cqe, udata);
}
#endif

#ifdef SRNIC_HAVE_REG_USER_MR_DMAH
static struct ib_mr *srnic_compat_reg_user_mr(struct ib_pd *pd, u64 start,
					      u64 length, u64 iova,
					      int access,
					      struct ib_dmah *dmah,
					      struct ib_udata *udata)
{
	/* ib_core passes one only to drivers that implement alloc_dmah */
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return srnic_reg_user_mr(pd, start, length, iova, access, udata);
}
#else
#define srnic_compat_reg_user_mr srnic_reg_user_mr
#endif

/*
 * reg_user_mr_dmabuf: 6.1 passes the udata, 6.10 the uverbs attribute
 * bundle, 6.17 a DMA handle too; srnic needs none of them (the rxe ABI has
 * no driver data for it).
 */
#if defined(SRNIC_HAVE_REG_DMABUF_DMAH)
static struct ib_mr *srnic_compat_reg_dmabuf(struct ib_pd *pd, u64 offset,
					     u64 length, u64 iova, int fd,
					     int access,
					     struct ib_dmah *dmah,
					     struct uverbs_attr_bundle *attrs)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return srnic_reg_user_mr_dmabuf(pd, offset, length, iova, fd, access);
}
#elif defined(SRNIC_HAVE_REG_DMABUF_ATTRS)
static struct ib_mr *srnic_compat_reg_dmabuf(struct ib_pd *pd, u64 offset,
					     u64 length, u64 iova, int fd,
					     int access,
					     struct uverbs_attr_bundle *attrs)
{
	return srnic_reg_user_mr_dmabuf(pd, offset, length, iova, fd, access);
}
#else
static struct ib_mr *srnic_compat_reg_dmabuf(struct ib_pd *pd, u64 offset,
					     u64 length, u64 iova, int fd,
					     int access,
					     struct ib_udata *udata)
{
	return srnic_reg_user_mr_dmabuf(pd, offset, length, iova, fd, access);
}
#endif

/* dma-buf's symbols are in their own namespace; 6.13 made its name a string */
#ifdef SRNIC_HAVE_IMPORT_NS_STRING
MODULE_IMPORT_NS("DMA_BUF");
#else
MODULE_IMPORT_NS(DMA_BUF);
#endif

const struct ib_device_ops srnic_compat_ops = {
	.create_cq = srnic_compat_create_cq,
#ifdef SRNIC_HAVE_CREATE_USER_CQ
	.create_user_cq = srnic_compat_create_cq,
#endif
#ifdef SRNIC_HAVE_RESIZE_USER_CQ
	.resize_user_cq = srnic_compat_resize_cq,
#else
	.resize_cq = srnic_resize_cq,
#endif
	.reg_user_mr = srnic_compat_reg_user_mr,
	.reg_user_mr_dmabuf = srnic_compat_reg_dmabuf,
};
