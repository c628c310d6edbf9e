// SPDX-License-Identifier: GPL-2.0
/*
 * srnic memory regions: registration (DMA, user, dma-buf, fast-register), which fills
 * the memory translation table. The design is described in srnic_mr.h;
 * keys, lookups and references are srnic_mem.c's, translation (iova to
 * pages, copies) srnic_mtt.c's.
 */
#include <linux/dma-buf.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "srnic.h"

/* ------------------------------------------------------- registration */

/*
 * Access rights of a registration. ZERO_BASED needs iova rewriting that the
 * data path does not do; ON_DEMAND is only for reg_user_mr, which takes it
 * off before it asks (srnic_mr_new_odp()). HUGETLB is a hint and the
 * optional range (relaxed ordering) may be ignored.
 */
static int srnic_mr_check_access(int access)
{
	if (access & (IB_ZERO_BASED | IB_ACCESS_ON_DEMAND))
		return -EOPNOTSUPP;
	if (access & ~(SRNIC_MR_ACCESS | IB_ACCESS_HUGETLB | IB_ACCESS_OPTIONAL))
		return -EINVAL;
	/* IBA: Remote Write or Remote Atomic requires Local Write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* Does [iova, iova + length) fit a table of @nblocks from @offset on? */
static int srnic_mr_check_table(unsigned int page_shift, u64 offset,
				u64 iova, u64 length, u32 nblocks)
{
	u64 end, span;

	if (!length || check_add_overflow(iova, length, &end))
		return -EINVAL;
	if (page_shift < PAGE_SHIFT || page_shift > 31 ||
	    offset >> page_shift)
		return -EINVAL;
	if (check_add_overflow(offset, length, &span) ||
	    span > (u64)nblocks << page_shift)
		return -EINVAL;
	return 0;
}

/* SRNIC_MR_MAX_BLOCKS: srnic_mr.h */
/* tables sized by user space: charged to its memory cgroup, no warning */
#define SRNIC_MR_TABLE_GFP	(GFP_KERNEL_ACCOUNT | __GFP_NOWARN)

/*
 * A new, unpublished MR of @type with a table of @nblocks (two for fast-reg
 * MRs), counted against SRNIC_MAX_MR. Undo with srnic_mr_free().
 */
static struct srnic_mr *srnic_mr_alloc(struct ib_pd *pd,
				       enum srnic_mr_type type, u32 nblocks)
{
	struct srnic_dev *sdev = to_srnic_dev(pd->device);
	struct srnic_mr *mr;
	int err = -ENOMEM;

	if (nblocks > SRNIC_MR_MAX_BLOCKS)
		return ERR_PTR(-ENOMEM);
	if (!atomic_add_unless(&sdev->mr_count, 1, SRNIC_MAX_MR))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		goto err_uncount;
	if (nblocks) {
		mr->blocks = kvcalloc(nblocks, sizeof(*mr->blocks),
				      SRNIC_MR_TABLE_GFP);
		if (!mr->blocks)
			goto err_free_mr;
	}
	if (type == SRNIC_MR_FAST) {
		mr->fr_blocks = kvcalloc(nblocks, sizeof(*mr->fr_blocks),
					 SRNIC_MR_TABLE_GFP);
		if (!mr->fr_blocks)
			goto err_free_blocks;
	}
	mr->max_blocks = nblocks;
	mr->sdev = sdev;
	mr->type = type;
	/* ib_core sets these too; set them for callers that are not it. */
	mr->ibmr.device = pd->device;
	mr->ibmr.pd = pd;
	srnic_mem_init(&mr->mem, SRNIC_MEM_MR, pd, SRNIC_MEM_INVALID,
		       type == SRNIC_MR_FAST);
	return mr;

err_free_blocks:
	kvfree(mr->blocks);
err_free_mr:
	kfree(mr);
err_uncount:
	atomic_dec(&sdev->mr_count);
	return ERR_PTR(err);
}

/*
 * Let go of a dma-buf MR's buffer: unmap, detach, and drop the reference
 * the attachment held. Skbs that got its pages as fragments hold their own
 * page references.
 */
static void srnic_mr_dmabuf_release(struct srnic_mr *mr)
{
	struct dma_buf *dmabuf;

	if (!mr->dmabuf)
		return;
	dmabuf = mr->dmabuf->dmabuf;
	if (mr->dmabuf_sgt)
		dma_buf_unmap_attachment_unlocked(mr->dmabuf, mr->dmabuf_sgt,
						  DMA_BIDIRECTIONAL);
	dma_buf_detach(dmabuf, mr->dmabuf);
	dma_buf_put(dmabuf);
}

/* Free an MR nobody can reach any more (never published, or released). */
static void srnic_mr_free(struct srnic_mr *mr)
{
	struct srnic_dev *sdev = mr->sdev;

	ib_umem_release(mr->umem);
	srnic_mr_dmabuf_release(mr);
	srnic_odp_release(mr);
	kvfree(mr->fr_blocks);
	kvfree(mr->blocks);
	/* A lookup that lost the race may still read the count under RCU. */
	kfree_rcu(mr, mem.rcu);
	atomic_dec(&sdev->mr_count);
}

/* Make a fully set up MR reachable through its new key. */
static int srnic_mr_publish(struct srnic_mr *mr)
{
	int err;

	err = srnic_mem_add(mr->sdev, &mr->mem);
	if (err)
		return err;
	mr->ibmr.lkey = mr->mem.key;
	mr->ibmr.rkey = mr->mem.key;
	return 0;
}

/*
 * The last step of a table MR's set-up, once its table is filled: the range
 * checked against the table (the caller sized the table for it, so a
 * mismatch is a bug), the MR valid. srnic_mr_publish() or
 * srnic_mem_replace() then makes it reachable.
 */
static int srnic_mr_set_valid(struct srnic_mr *mr, u64 iova, u64 length,
			      int access)
{
	if (WARN_ON_ONCE(srnic_mr_check_table(mr->page_shift, mr->offset, iova,
					      length, mr->nblocks)))
		return -EINVAL;
	mr->mem.access = access & SRNIC_MR_ACCESS;
	mr->mem.iova = iova;
	mr->mem.length = length;
	mr->mem.state = SRNIC_MEM_VALID;
	return 0;
}

/* srnic_mr_set_valid() and srnic_mr_publish(): a table MR ready for use */
static int srnic_mr_activate(struct srnic_mr *mr, u64 iova, u64 length,
			     int access)
{
	int err;

	err = srnic_mr_set_valid(mr, iova, length, access);
	if (err)
		return err;
	return srnic_mr_publish(mr);
}

static struct ib_mr *srnic_get_dma_mr(struct ib_pd *pd, int access)
{
	struct srnic_mr *mr;
	int err;

	err = srnic_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	mr = srnic_mr_alloc(pd, SRNIC_MR_DMA, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* The whole kernel address space; iova is the kernel VA. */
	mr->mem.access = access & SRNIC_MR_ACCESS;
	mr->mem.iova = 0;
	mr->mem.length = U64_MAX;
	mr->mem.state = SRNIC_MEM_VALID;
	err = srnic_mr_publish(mr);
	if (err)
		goto err_free_mr;
	return &mr->ibmr;

err_free_mr:
	srnic_mr_free(mr);
	return ERR_PTR(err);
}

/*
 * Fill the MTT from pinned user memory, one entry per @pgsz block. With
 * virtual DMA, a umem's DMA addresses are the kernel VAs of its pages.
 */
static int srnic_mr_fill_umem(struct srnic_mr *mr, struct ib_umem *umem,
			      unsigned long pgsz)
{
	struct ib_block_iter biter;
	u32 i = 0;

	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		dma_addr_t va = rdma_block_iter_dma_address(&biter);

		if (WARN_ON_ONCE(i == mr->max_blocks))
			return -EINVAL;
		mr->blocks[i++] = virt_to_page((void *)(uintptr_t)va);
	}
	mr->nblocks = i;
	mr->page_shift = __ffs(pgsz);
	mr->offset = ib_umem_dma_offset(umem, pgsz);
	return 0;
}

/*
 * A user MR over [@start, @start + @length) at @iova, pinned and
 * translated, VALID but not yet reachable: srnic_mr_publish() gives it a
 * key, srnic_mem_replace() an existing one. Undo with srnic_mr_free().
 */
static struct srnic_mr *srnic_mr_new_user(struct ib_pd *pd, u64 start,
					  u64 length, u64 iova, int access)
{
	struct ib_umem *umem;
	struct srnic_mr *mr;
	unsigned long pgsz;
	size_t nblocks;
	u64 end;
	int err;

	err = srnic_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!length || check_add_overflow(iova, length, &end))
		return ERR_PTR(-EINVAL);

	umem = ib_umem_get_va(pd->device, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	/*
	 * The largest blocks the physical layout allows. The table is indexed
	 * from the MR's start, so the layout is judged against the user
	 * address, whatever iova the MR is given.
	 */
	pgsz = ib_umem_find_best_pgsz(umem, SRNIC_MR_PGSZ_BITMAP,
				      umem->address);
	if (!pgsz) {
		err = -EINVAL;
		goto err_release_umem;
	}
	nblocks = ib_umem_num_dma_blocks(umem, pgsz);
	if (nblocks > U32_MAX) {
		err = -EINVAL;
		goto err_release_umem;
	}
	mr = srnic_mr_alloc(pd, SRNIC_MR_USER, nblocks);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto err_release_umem;
	}
	mr->umem = umem;	/* from here srnic_mr_free() releases it */
	err = srnic_mr_fill_umem(mr, umem, pgsz);
	if (err)
		goto err_free_mr;
	err = srnic_mr_set_valid(mr, iova, length, access);
	if (err)
		goto err_free_mr;
	return mr;

err_free_mr:
	srnic_mr_free(mr);
	return ERR_PTR(err);
err_release_umem:
	ib_umem_release(umem);
	return ERR_PTR(err);
}

/*
 * An ODP MR over [@start, @start + @length) at @iova: a table of one entry
 * per page, all empty, and an MMU interval notifier over the range
 * (srnic_odp.h). Nothing is pinned or faulted in. Explicit ODP only: an
 * implicit MR (the whole address space) is refused.
 */
static struct srnic_mr *srnic_mr_new_odp(struct ib_pd *pd, u64 start,
					 u64 length, u64 iova, int access)
{
	struct srnic_mr *mr;
	u64 nblocks, end;
	int err;

	err = srnic_mr_check_access(access & ~IB_ACCESS_ON_DEMAND);
	if (err)
		return ERR_PTR(err);
	if (!start && length == U64_MAX)
		return ERR_PTR(-EOPNOTSUPP);
	if (!length || check_add_overflow(iova, length, &end) ||
	    check_add_overflow(start, length, &end) || end > TASK_SIZE)
		return ERR_PTR(-EINVAL);
	nblocks = DIV_ROUND_UP_ULL(offset_in_page(start) + length, PAGE_SIZE);
	if (nblocks > U32_MAX)
		return ERR_PTR(-EINVAL);
	mr = srnic_mr_alloc(pd, SRNIC_MR_ODP, nblocks);
	if (IS_ERR(mr))
		return mr;
	mr->nblocks = nblocks;
	mr->page_shift = PAGE_SHIFT;
	mr->offset = offset_in_page(start);
	err = srnic_odp_init(mr, start, length, access);
	if (err)
		goto err_free_mr;
	err = srnic_mr_set_valid(mr, iova, length, access);
	if (err)
		goto err_free_mr;
	return mr;

err_free_mr:
	srnic_mr_free(mr);
	return ERR_PTR(err);
}

struct ib_mr *srnic_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct srnic_mr *mr;
	int err;

	if (access & IB_ACCESS_ON_DEMAND)
		mr = srnic_mr_new_odp(pd, start, length, iova, access);
	else
		mr = srnic_mr_new_user(pd, start, length, iova, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = srnic_mr_publish(mr);
	if (err)
		goto err_free_mr;
	ibdev_dbg(pd->device, "MR %#x: %llu bytes in %u blocks of %llu\n",
		  mr->mem.key, length, mr->nblocks, BIT_ULL(mr->page_shift));
	return &mr->ibmr;

err_free_mr:
	srnic_mr_free(mr);
	return ERR_PTR(err);
}

/*
 * ibv_rereg_mr: IB_MR_REREG_TRANS, _PD and _ACCESS, in any combination.
 * srnic's PD, pages and (for write access) pinning are fixed for an MR's
 * life, so every change makes a new MR, which ib_uverbs puts in the old
 * one's place before it destroys the old one. The new MR keeps the keys:
 * consumers (and peers that were sent the rkey) go on using them, as with
 * hardware that reregisters in place. What is not changed is taken from
 * the old MR; an unchanged range is pinned again, so an access change that
 * adds write rights gets pages pinned for writing.
 *
 * Only user MRs: a dma-buf MR would need its file descriptor again (and
 * libibverbs refuses to reregister one). IBA: an MR with bound windows
 * cannot be reregistered, as it cannot be deregistered.
 */
static struct ib_mr *srnic_rereg_user_mr(struct ib_mr *ibmr, int flags,
					 u64 start, u64 length, u64 iova,
					 int access, struct ib_pd *pd,
					 struct ib_udata *udata)
{
	struct srnic_mr *old = to_srnic_mr(ibmr);
	struct srnic_mr *mr;
	int err;

	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EINVAL);
	/* ib_uverbs drops a PD "change" to the same PD: nothing left to do */
	if (!flags)
		return NULL;
	if (old->type != SRNIC_MR_USER)
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_TRANS)) {
		/* immutable for a user MR */
		start = old->umem->address;
		length = old->mem.length;
		iova = old->mem.iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = old->mem.access;
	/* fail before pinning; srnic_mem_replace() has the last word */
	spin_lock_bh(&old->mem.lock);
	err = old->mem.nbound ? -EBUSY : 0;
	spin_unlock_bh(&old->mem.lock);
	if (err)
		return ERR_PTR(err);

	mr = srnic_mr_new_user(pd, start, length, iova, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* ib_uverbs sets these at registration, not for a reregistered MR */
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	spin_lock_bh(&old->mem.lock);
	err = srnic_mem_replace(old->sdev, &old->mem, &mr->mem);
	spin_unlock_bh(&old->mem.lock);
	if (err)
		goto err_free_mr;
	mr->ibmr.lkey = mr->mem.key;
	mr->ibmr.rkey = mr->mem.key;
	ibdev_dbg(pd->device, "MR %#x reregistered (flags %#x): %llu bytes\n",
		  mr->mem.key, flags, length);
	return &mr->ibmr;

err_free_mr:
	srnic_mr_free(mr);
	return ERR_PTR(err);
}

/*
 * Fill the MTT of a dma-buf MR, one page per entry, from the pages of the
 * mapped attachment: [@offset, @offset + @length) of the buffer. srnic moves
 * data with the CPU, so every piece must be memory with struct pages; an
 * exporter that maps device memory for peer-to-peer DMA only (no pages)
 * cannot be reached by a software NIC and is refused.
 */
static int srnic_mr_fill_dmabuf(struct srnic_mr *mr, struct sg_table *sgt,
				u64 offset, u64 length)
{
	struct sg_page_iter piter;
	u32 i = 0;

	for_each_sgtable_page(sgt, &piter, offset >> PAGE_SHIFT) {
		if (!sg_page(piter.sg))
			return -EOPNOTSUPP;
		if (i == mr->max_blocks)
			break;
		mr->blocks[i++] = sg_page_iter_page(&piter);
	}
	if (i < mr->max_blocks)		/* the mapping is shorter than the buffer */
		return -EINVAL;
	mr->nblocks = i;
	mr->page_shift = PAGE_SHIFT;
	mr->offset = offset_in_page(offset);
	return 0;
}

/*
 * Attach to the dma-buf of @fd as a static importer (the exporter keeps the
 * buffer in place while it is mapped: udmabuf always does, a GPU driver pins
 * or migrates it for such an importer) and map it once for the MR's life.
 * The attachment holds the buffer: closing @fd, or every other reference,
 * while registered leaves the pages with the MR until deregistration.
 */
static int srnic_mr_attach_dmabuf(struct srnic_mr *mr, int fd, u64 offset,
				  u64 length)
{
	struct dma_buf *dmabuf;
	u64 end;
	int err;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	if (check_add_overflow(offset, length, &end) || end > dmabuf->size) {
		err = -EINVAL;
		goto err_put;
	}
	mr->dmabuf = dma_buf_attach(dmabuf, &mr->sdev->ib_dev.dev);
	if (IS_ERR(mr->dmabuf)) {
		err = PTR_ERR(mr->dmabuf);
		mr->dmabuf = NULL;
		goto err_put;
	}
	/* from here srnic_mr_free() detaches and puts */
	mr->dmabuf_sgt = dma_buf_map_attachment_unlocked(mr->dmabuf,
							 DMA_BIDIRECTIONAL);
	if (IS_ERR(mr->dmabuf_sgt)) {
		err = PTR_ERR(mr->dmabuf_sgt);
		mr->dmabuf_sgt = NULL;
		return err;
	}
	return srnic_mr_fill_dmabuf(mr, mr->dmabuf_sgt, offset, length);

err_put:
	dma_buf_put(dmabuf);
	return err;
}

/**
 * srnic_reg_user_mr_dmabuf() - register [@offset, @offset + @length) of the
 *	dma-buf @fd at @iova (ibv_reg_dmabuf_mr)
 * @pd: protection domain
 * @offset: start in the buffer
 * @length: bytes
 * @iova: address the MR is accessed at
 * @fd: the dma-buf's file descriptor
 * @access: IB_ACCESS_* flags
 *
 * Return: the MR, or an ERR_PTR: -EBADF/-EINVAL for a bad fd or range,
 * -EOPNOTSUPP for a buffer without pages, -ENOMEM.
 */
struct ib_mr *srnic_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset,
				       u64 length, u64 iova, int fd,
				       int access)
{
	struct srnic_mr *mr;
	u64 nblocks, end;
	int err;

	err = srnic_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	if (!length || check_add_overflow(iova, length, &end) ||
	    check_add_overflow(offset, length, &end))
		return ERR_PTR(-EINVAL);
	nblocks = DIV_ROUND_UP_ULL(offset_in_page(offset) + length, PAGE_SIZE);
	if (nblocks > U32_MAX)
		return ERR_PTR(-EINVAL);
	mr = srnic_mr_alloc(pd, SRNIC_MR_DMABUF, nblocks);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = srnic_mr_attach_dmabuf(mr, fd, offset, length);
	if (err)
		goto err_free_mr;
	err = srnic_mr_activate(mr, iova, length, access);
	if (err)
		goto err_free_mr;
	ibdev_dbg(pd->device, "MR %#x: %llu bytes of dma-buf %s\n",
		  mr->mem.key, length, mr->dmabuf->dmabuf->exp_name);
	return &mr->ibmr;

err_free_mr:
	srnic_mr_free(mr);
	return ERR_PTR(err);
}

static struct ib_mr *srnic_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
				    u32 max_num_sg)
{
	struct srnic_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG || !max_num_sg ||
	    max_num_sg > SRNIC_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = srnic_mr_alloc(pd, SRNIC_MR_FAST, max_num_sg);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* Unusable until an IB_WR_REG_MR makes it VALID. */
	mr->mem.state = SRNIC_MEM_FREE;
	err = srnic_mr_publish(mr);
	if (err)
		goto err_free_mr;
	return &mr->ibmr;

err_free_mr:
	srnic_mr_free(mr);
	return ERR_PTR(err);
}

/* ib_sg_to_pages() callback: @addr is the kernel VA of a block. */
static int srnic_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct srnic_mr *mr = to_srnic_mr(ibmr);
	void *va = (void *)(uintptr_t)addr;

	if (unlikely(mr->fr_nblocks == mr->max_blocks))
		return -ENOMEM;
	if (unlikely(!virt_addr_valid(va)))
		return -EINVAL;
	mr->fr_blocks[mr->fr_nblocks++] = virt_to_page(va);
	return 0;
}

/*
 * Fill the staging table; srnic_mr_fast_reg() installs it. ib_map_mr_sg()
 * set ibmr->page_size; ib_sg_to_pages() sets ibmr->iova and ->length.
 */
static int srnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			   int sg_nents, unsigned int *sg_offset)
{
	struct srnic_mr *mr = to_srnic_mr(ibmr);
	unsigned int page_size = ibmr->page_size;
	int n;

	if (mr->type != SRNIC_MR_FAST)
		return -EINVAL;
	/* A block must hold whole pages: the MTT stores struct pages. */
	if (!is_power_of_2(page_size) || page_size < PAGE_SIZE)
		return -EINVAL;
	mr->fr_nblocks = 0;
	mr->fr_page_shift = ilog2(page_size);
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, srnic_mr_set_page);
	/* Kept apart from iova: ib_map_mr_sg_zbva() then sets iova to 0. */
	mr->fr_offset = ibmr->iova & (page_size - 1);
	return n;
}

int srnic_mr_fast_reg(struct srnic_dev *sdev, struct ib_pd *pd,
		      const struct ib_reg_wr *wr)
{
	struct srnic_mr *mr;
	u64 iova, length;
	int err;

	if (unlikely(!wr->mr || wr->mr->device != &sdev->ib_dev))
		return -EINVAL;
	mr = to_srnic_mr(wr->mr);
	if (mr->type != SRNIC_MR_FAST || mr->mem.pd != pd)
		return -EINVAL;
	/* Only the key byte is the consumer's to change. */
	if (wr->key >> SRNIC_KEY_INDEX_SHIFT != mr->mem.index)
		return -EINVAL;
	if (srnic_mr_check_access(wr->access))
		return -EINVAL;
	iova = mr->ibmr.iova;
	length = mr->ibmr.length;
	if (srnic_mr_check_table(mr->fr_page_shift, mr->fr_offset, iova,
				 length, mr->fr_nblocks))
		return -EINVAL;

	spin_lock_bh(&mr->mem.lock);
	/* IBA: fast registration only from the Free state. */
	if (mr->mem.state != SRNIC_MEM_FREE) {
		err = -EINVAL;
		goto out_unlock;
	}
	write_seqcount_begin(&mr->mem.seq);
	memcpy(mr->blocks, mr->fr_blocks,
	       mr->fr_nblocks * sizeof(*mr->blocks));
	mr->nblocks = mr->fr_nblocks;
	mr->page_shift = mr->fr_page_shift;
	mr->offset = mr->fr_offset;
	mr->mem.key = wr->key;
	mr->mem.access = wr->access & SRNIC_MR_ACCESS;
	mr->mem.iova = iova;
	mr->mem.length = length;
	mr->mem.state = SRNIC_MEM_VALID;
	write_seqcount_end(&mr->mem.seq);
	err = 0;
out_unlock:
	spin_unlock_bh(&mr->mem.lock);
	return err;
}

/*
 * Teardown. Marking the MR INVALID stops new accesses; srnic_mem_del()
 * removes its index, which stops new lookups, and waits for whoever still
 * holds a reference: a transport engine in the middle of a copy, a
 * zero-copy append or an atomic (each ends with srnic_mr_put() when that
 * operation ends), or a bind that looked the MR up and finds it INVALID
 * under its lock. Windows cannot: nbound is 0 and, with the MR INVALID,
 * stays 0. Then the pages can go: skbs that got them as fragments hold
 * their own page references.
 */
static int srnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srnic_mr *mr = to_srnic_mr(ibmr);

	spin_lock_bh(&mr->mem.lock);
	/* IBA: an MR with bound windows cannot be deregistered. */
	if (mr->mem.nbound) {
		spin_unlock_bh(&mr->mem.lock);
		return -EBUSY;
	}
	srnic_mem_set_state(&mr->mem, SRNIC_MEM_INVALID);
	spin_unlock_bh(&mr->mem.lock);

	srnic_mem_del(mr->sdev, &mr->mem);
	srnic_mr_free(mr);
	return 0;
}

#if IS_ENABLED(CONFIG_RDMA_SRNIC_KUNIT_TEST)
struct srnic_mr *srnic_mr_reg_pages(struct ib_pd *pd, struct page **blocks,
				    u32 nblocks, unsigned int page_shift,
				    u64 offset, u64 iova, u64 length,
				    int access)
{
	struct srnic_mr *mr;
	int err;

	err = srnic_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	err = srnic_mr_check_table(page_shift, offset, iova, length, nblocks);
	if (err)
		return ERR_PTR(err);
	mr = srnic_mr_alloc(pd, SRNIC_MR_USER, nblocks);
	if (IS_ERR(mr))
		return mr;
	memcpy(mr->blocks, blocks, nblocks * sizeof(*blocks));
	mr->nblocks = nblocks;
	mr->page_shift = page_shift;
	mr->offset = offset;
	err = srnic_mr_activate(mr, iova, length, access);
	if (err) {
		srnic_mr_free(mr);
		return ERR_PTR(err);
	}
	return mr;
}
#endif

static const char *const srnic_mr_type_names[] = {
	[SRNIC_MR_DMA] = "dma",
	[SRNIC_MR_USER] = "user",
	[SRNIC_MR_FAST] = "fast_reg",
	[SRNIC_MR_DMABUF] = "dmabuf",
	[SRNIC_MR_ODP] = "odp",
};

/*
 * Driver attributes of "rdma resource show mr -dd": the kind of region and,
 * for any MR but a DMA one, its translation table as it stands (block size
 * in bytes, blocks in use; a fast-reg MR shows its last registration). The
 * block size is what ib_umem_find_best_pgsz() chose: a hugetlb buffer gets
 * 2 MiB blocks or more.
 */
static int srnic_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct srnic_mr *mr = to_srnic_mr(ibmr);
	unsigned int page_shift;
	struct nlattr *table;
	u32 nblocks;

	spin_lock_bh(&mr->mem.lock);
	page_shift = mr->page_shift;
	nblocks = mr->nblocks;
	spin_unlock_bh(&mr->mem.lock);

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "type",
				      srnic_mr_type_names[mr->type]))
		goto err_cancel;
	/* a DMA MR translates nothing: the iova is a kernel address */
	if (mr->type != SRNIC_MR_DMA &&
	    (rdma_nl_put_driver_u64(msg, "block_size", BIT_ULL(page_shift)) ||
	     rdma_nl_put_driver_u32(msg, "blocks", nblocks)))
		goto err_cancel;
	/* ODP: the pages faulted in and not invalidated since */
	if (mr->type == SRNIC_MR_ODP &&
	    rdma_nl_put_driver_u32(msg, "mapped", srnic_odp_mapped(mr)))
		goto err_cancel;
	nla_nest_end(msg, table);
	return 0;

err_cancel:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

/* reg_user_mr: srnic_compat_ops */
const struct ib_device_ops srnic_mr_ops = {
	/* the same prototype from 6.1 to 7.3 */
	.advise_mr = srnic_odp_advise_mr,
	.alloc_mr = srnic_alloc_mr,
	.dereg_mr = srnic_dereg_mr,
	.fill_res_mr_entry = srnic_fill_res_mr_entry,
	.get_dma_mr = srnic_get_dma_mr,
	.map_mr_sg = srnic_map_mr_sg,
	/* the same prototype from 6.1 to 7.3 */
	.rereg_user_mr = srnic_rereg_user_mr,
};
