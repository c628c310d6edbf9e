/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic memory regions (MRs). An MR maps [iova, iova + length) through
 * srnic's own memory translation table (MTT), described in srnic_mtt.h,
 * which also holds the data-path accessors that copy through it.
 *
 * Keys, lookups and lifetimes
 * ---------------------------
 * An MR is a memory object of kind SRNIC_MEM_MR (srnic_mem.h: key space,
 * state, references, windows bound to it). Deregistration marks it
 * INVALID and waits in srnic_mem_del() for the data-path users before it
 * unpins and frees the pages; its memory is freed after an RCU grace
 * period. An MR with bound windows cannot be deregistered or invalidated.
 *
 * Reregistration (rereg_user_mr) builds a new MR that takes over the old
 * one's key (srnic_mem_replace()); ib_uverbs then deregisters the old one.
 */
#ifndef SRNIC_MR_H
#define SRNIC_MR_H

#include <linux/err.h>
#include <rdma/ib_verbs.h>

#include "srnic_mem.h"

struct srnic_dev;
struct dma_buf_attachment;
struct ib_umem;
struct sg_table;

/* Access rights an MR may carry (besides the ignored optional/hint bits). */
#define SRNIC_MR_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND)
/* Block sizes of user MRs: every power of two from a page to 1 GiB. */
#define SRNIC_MR_PGSZ_BITMAP	GENMASK(30, PAGE_SHIFT)
/*
 * The most entries an MR's table may have: 2^26 (512 MiB of table, 256 GiB
 * in 4 KiB pages). User space sets the count (an ODP MR pins nothing, so
 * its length alone does), and kvmalloc() warns and fails above INT_MAX
 * bytes; a bigger MR is refused with ENOMEM, as a NIC out of translation
 * entries refuses it. max_mr_size says so: the longest MR of any kind
 * (pages of PAGE_SIZE) is SRNIC_MR_MAX_SIZE.
 */
#define SRNIC_MR_MAX_BLOCKS	BIT(26)
#define SRNIC_MR_MAX_SIZE	((u64)SRNIC_MR_MAX_BLOCKS << PAGE_SHIFT)

enum srnic_mr_type {
	SRNIC_MR_DMA,		/* get_dma_mr: iova is a kernel VA */
	SRNIC_MR_USER,		/* reg_user_mr: pinned user pages */
	SRNIC_MR_FAST,		/* alloc_mr(IB_MR_TYPE_MEM_REG) */
	SRNIC_MR_DMABUF,	/* reg_user_mr_dmabuf: an attached dma-buf */
	SRNIC_MR_ODP,		/* reg_user_mr(IB_ACCESS_ON_DEMAND): srnic_odp.h */
};

/**
 * struct srnic_mr - a memory region
 * @ibmr: the ib_core MR; must stay first
 * @mem: key, state, range, access and references (see struct srnic_mem)
 * @sdev: the device
 * @type: enum srnic_mr_type; immutable
 * @page_shift: log2 of the block size
 * @offset: byte offset of @mem.iova in block 0
 * @blocks: first page of each block (NULL for DMA MRs)
 * @nblocks: blocks in use
 * @max_blocks: entries of @blocks (and @fr_blocks); immutable
 * @fr_blocks: fast-reg staging table written by map_mr_sg; installed by
 *	srnic_mr_fast_reg(), so remapping never disturbs a valid mapping
 * @fr_nblocks: entries of @fr_blocks in use
 * @fr_page_shift: block size of @fr_blocks
 * @fr_offset: offset of the mapped iova in @fr_blocks[0]
 * @umem: pinned user memory (user MRs)
 * @dmabuf: the dma-buf attachment of a dma-buf MR (which holds a reference
 *	on the dma-buf); NULL for other MRs
 * @dmabuf_sgt: @dmabuf mapped, from registration to srnic_mr_free()
 * @odp: ODP state (ODP MRs; NULL for others). An ODP MR's table has one
 *	entry per page, each NULL until faulted in (srnic_odp.h)
 *
 * @page_shift, @offset, @blocks and @nblocks of a fast-reg MR change only in
 * srnic_mr_fast_reg(), which IBA allows only in the FREE state, i.e. when
 * the consumer guarantees no access is in flight. The translation checks its
 * index against @nblocks anyway, so a misbehaving consumer gets wrong data,
 * never an out-of-bounds access.
 */
struct srnic_mr {
	struct ib_mr		ibmr;
	struct srnic_mem	mem;
	struct srnic_dev	*sdev;
	enum srnic_mr_type	type;
	unsigned int		page_shift;
	u64			offset;
	struct page		**blocks;
	u32			nblocks;
	u32			max_blocks;
	struct page		**fr_blocks;
	u32			fr_nblocks;
	unsigned int		fr_page_shift;
	u64			fr_offset;
	struct ib_umem		*umem;
	struct dma_buf_attachment *dmabuf;
	struct sg_table		*dmabuf_sgt;
	struct srnic_odp	*odp;
};

static inline struct srnic_mr *to_srnic_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct srnic_mr, ibmr);
}

/*
 * Data-path API (transport engines): srnic_mem_get_lkey() and
 * srnic_mem_get_rkey() (srnic_mem.h) for an MR. Any context up to
 * softirq. A length of 0 gives NULL ("no MR needed"); every function below
 * accepts that NULL together with a length of 0, and srnic_mr_put(NULL)
 * does nothing.
 */

static inline struct srnic_mr *srnic_mr_of(struct srnic_mem *mem)
{
	if (IS_ERR_OR_NULL(mem))
		return ERR_CAST(mem);
	return container_of(mem, struct srnic_mr, mem);
}

/* srnic_mem_get_lkey() of an MR */
static inline struct srnic_mr *srnic_mr_get_lkey(struct srnic_dev *sdev,
						 struct ib_pd *pd, u32 lkey,
						 u64 iova, u64 len, int access)
{
	return srnic_mr_of(srnic_mem_get_lkey(sdev, pd, lkey, iova, len,
					      access));
}

/* srnic_mem_get_rkey() of an MR, or of the MR a window is bound to */
static inline struct srnic_mr *srnic_mr_get_rkey(struct srnic_dev *sdev,
						 struct ib_pd *pd, u32 qpn,
						 u32 rkey, u64 iova, u64 len,
						 int access)
{
	return srnic_mr_of(srnic_mem_get_rkey(sdev, pd, qpn, rkey, iova, len,
					      access));
}

/* Release an MR from srnic_mr_get_lkey()/_rkey(), or NULL. */
static inline void srnic_mr_put(struct srnic_mr *mr)
{
	if (mr)
		srnic_mem_put(&mr->mem);
}

/**
 * srnic_mr_fast_reg() - IB_WR_REG_MR, executed by the requester
 * @sdev: the device
 * @pd: the QP's PD, which must be the MR's
 * @wr: the work request: @wr->mr mapped by ib_map_mr_sg(), FREE, of this
 *	device; @wr->key differs from the MR's key in the key byte at most
 *
 * Kernel QPs only: @wr->mr is a kernel pointer, never take it from a user
 * WQE.
 *
 * Return: 0, or -EINVAL (with the MR unchanged) when IBA's rules refuse it.
 */
int srnic_mr_fast_reg(struct srnic_dev *sdev, struct ib_pd *pd,
		      const struct ib_reg_wr *wr);

/* get_dma_mr, dereg_mr, alloc_mr, map_mr_sg and rereg_user_mr */
extern const struct ib_device_ops srnic_mr_ops;
/* ib_device_ops.reg_user_mr and reg_user_mr_dmabuf through srnic_compat_ops */
struct ib_mr *srnic_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *srnic_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset,
				       u64 length, u64 iova, int fd,
				       int access);

#if IS_ENABLED(CONFIG_RDMA_SRNIC_KUNIT_TEST)
/* KUnit: an MR over kernel pages, with a given block size. */
struct srnic_mr *srnic_mr_reg_pages(struct ib_pd *pd, struct page **blocks,
				    u32 nblocks, unsigned int page_shift,
				    u64 offset, u64 iova, u64 length,
				    int access);
#endif

#endif /* SRNIC_MR_H */
