// SPDX-License-Identifier: GPL-2.0
/*
 * srnic memory translation: an MR's iova to pages through its MTT (or, for
 * a DMA MR, as a kernel VA), and the data-path accessors built on it:
 * copies to and from kernel memory and skbs, zero-copy page fragments and
 * the mapping of an atomic's u64. The table is described in srnic_mtt.h;
 * srnic_mr.c fills it.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/skbuff.h>

#include "srnic.h"

/*
 * The page holding @iova and the offset in it. Table MRs: O(1) through the
 * MTT; an index outside the table means a caller skipped the range check,
 * so it WARNs. DMA MRs: @iova is a kernel VA; NULL outside the linear map.
 */
static struct page *srnic_mtt_page(const struct srnic_mr *mr, u64 iova,
				   unsigned int *poff)
{
	struct page *first;
	u64 off, idx, boff;

	if (mr->type == SRNIC_MR_DMA) {
		const void *va = (const void *)(uintptr_t)iova;

		if (!virt_addr_valid(va))
			return NULL;
		*poff = offset_in_page(va);
		return virt_to_page(va);
	}
	off = iova - mr->mem.iova + mr->offset;
	idx = off >> mr->page_shift;
	boff = off & (BIT_ULL(mr->page_shift) - 1);
	if (WARN_ON_ONCE(idx >= mr->nblocks))
		return NULL;
	first = mr->blocks[idx];
	if (WARN_ON_ONCE(!first))
		return NULL;
	*poff = offset_in_page(boff);
	/* The block is physically contiguous: its pages follow the first. */
	return nth_page(first, boff >> PAGE_SHIFT);
}

/*
 * Walk [iova, iova + len) of a table MR, calling @fn on each page's piece
 * through kmap_local_page().
 */
static __always_inline int
srnic_mtt_walk_pages(struct srnic_mr *mr, u64 iova, u32 len,
		     int (*fn)(void *va, u32 n, void *ctx), void *ctx)
{
	while (len) {
		unsigned int poff;
		struct page *page;
		void *va;
		int err;
		u32 n;

		page = srnic_mtt_page(mr, iova, &poff);
		if (unlikely(!page))
			return -EFAULT;
		n = min_t(u32, len, PAGE_SIZE - poff);
		va = kmap_local_page(page);
		err = fn(va + poff, n, ctx);
		kunmap_local(va);
		if (unlikely(err))
			return err;
		iova += n;
		len -= n;
	}
	return 0;
}

/*
 * Walk [iova, iova + len) of @mr, calling @fn on each mapped piece: in one
 * go for DMA MRs, page by page otherwise. An ODP MR's pages are walked
 * under its lock (srnic_odp.h), which an invalidation waits for, and only
 * when all of them are there: else -EAGAIN (with a fault queued) or
 * -EFAULT, and nothing is copied. Always inlined so that @fn is a direct
 * call.
 */
static __always_inline int srnic_mtt_walk(struct srnic_mr *mr, u64 iova,
					  u32 len,
					  int (*fn)(void *va, u32 n, void *ctx),
					  void *ctx)
{
	unsigned long flags;
	int err;

	if (mr->type == SRNIC_MR_DMA)
		return fn((void *)(uintptr_t)iova, len, ctx);
	if (mr->type != SRNIC_MR_ODP)
		return srnic_mtt_walk_pages(mr, iova, len, fn, ctx);
	spin_lock_irqsave(&mr->odp->lock, flags);
	err = srnic_odp_check(mr, iova, len);
	if (!err)
		err = srnic_mtt_walk_pages(mr, iova, len, fn, ctx);
	spin_unlock_irqrestore(&mr->odp->lock, flags);
	if (err == -EAGAIN)
		srnic_odp_request(mr, iova, len);
	return err;
}

static int srnic_mtt_chunk_to(void *va, u32 n, void *ctx)
{
	const void **src = ctx;

	memcpy(va, *src, n);
	*src += n;
	return 0;
}

static int srnic_mtt_chunk_from(void *va, u32 n, void *ctx)
{
	void **dst = ctx;

	memcpy(*dst, va, n);
	*dst += n;
	return 0;
}

struct srnic_mtt_skb_pos {
	const struct sk_buff	*skb;
	int			off;
};

static int srnic_mtt_chunk_from_skb(void *va, u32 n, void *ctx)
{
	struct srnic_mtt_skb_pos *pos = ctx;

	if (skb_copy_bits(pos->skb, pos->off, va, n))
		return -EFAULT;
	pos->off += n;
	return 0;
}

int srnic_mr_copy_to(struct srnic_mr *mr, u64 iova, const void *src, u32 len)
{
	if (!len)
		return 0;
	return srnic_mtt_walk(mr, iova, len, srnic_mtt_chunk_to, &src);
}

int srnic_mr_copy_from(struct srnic_mr *mr, u64 iova, void *dst, u32 len)
{
	if (!len)
		return 0;
	return srnic_mtt_walk(mr, iova, len, srnic_mtt_chunk_from, &dst);
}

int srnic_mr_copy_from_skb(struct srnic_mr *mr, u64 iova,
			   const struct sk_buff *skb, int off, u32 len)
{
	struct srnic_mtt_skb_pos pos = { .skb = skb, .off = off };

	if (!len)
		return 0;
	if (off < 0 || (u64)off + len > skb->len)
		return -EFAULT;
	return srnic_mtt_walk(mr, iova, len, srnic_mtt_chunk_from_skb, &pos);
}

struct srnic_mtt_frag {
	struct page	*page;
	unsigned int	off;
	u32		len;
};

int srnic_mr_add_frags(struct srnic_mr *mr, u64 iova, u32 len,
		       struct sk_buff *skb)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	struct srnic_mtt_frag frags[MAX_SKB_FRAGS];
	int nr = shinfo->nr_frags;
	u32 merge_len = 0;
	u32 left = len;
	u64 pos = iova;
	int i, cnt = 0;

	if (!len)
		return 0;
	if (WARN_ON_ONCE(skb_cloned(skb)))
		return -EMSGSIZE;
	/* An ODP MR's pages may go at any time: copy them under its lock. */
	if (mr->type == SRNIC_MR_ODP)
		return -EMSGSIZE;

	/* Translate and vet every page first: on failure @skb is untouched. */
	while (left) {
		unsigned int poff;
		struct page *page;
		u32 n;

		page = srnic_mtt_page(mr, pos, &poff);
		if (!page || !sendpage_ok(page))
			return -EMSGSIZE;
		n = min_t(u32, left, PAGE_SIZE - poff);
		if (pos == iova && skb_can_coalesce(skb, nr, page, poff)) {
			merge_len = n;
		} else {
			if (nr + cnt >= MAX_SKB_FRAGS)
				return -EMSGSIZE;
			frags[cnt].page = page;
			frags[cnt].off = poff;
			frags[cnt].len = n;
			cnt++;
		}
		pos += n;
		left -= n;
	}

	if (merge_len)
		skb_frag_size_add(&shinfo->frags[nr - 1], merge_len);
	for (i = 0; i < cnt; i++) {
		/* The skb may outlive the MR (and the pin on user pages). */
		get_page(frags[i].page);
		skb_fill_page_desc_noacc(skb, nr + i, frags[i].page,
					 frags[i].off, frags[i].len);
	}
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	/* The consumer may write these pages while the skb is in flight. */
	shinfo->flags |= SKBFL_SHARED_FRAG;
	return 0;
}

u64 *srnic_mr_atomic_map(struct srnic_mr *mr, u64 iova)
{
	unsigned int poff;
	struct page *page;

	/* An ODP MR's page may go at any time: srnic_mr_atomic() maps it. */
	if (!IS_ALIGNED(iova, sizeof(u64)) || mr->type == SRNIC_MR_ODP)
		return NULL;
	page = srnic_mtt_page(mr, iova, &poff);
	/* A zero-based fast-reg MR may put an aligned iova on odd memory. */
	if (!page || !IS_ALIGNED(poff, sizeof(u64)))
		return NULL;
	return kmap_local_page(page) + poff;
}

void srnic_mr_atomic_unmap(u64 *p)
{
	kunmap_local(p);
}

int srnic_mr_atomic(struct srnic_mr *mr, u64 iova,
		    void (*op)(u64 *p, void *ctx), void *ctx)
{
	unsigned long flags;
	unsigned int poff;
	struct page *page;
	u64 *p;
	int err;

	if (mr->type != SRNIC_MR_ODP) {
		p = srnic_mr_atomic_map(mr, iova);
		if (!p)
			return -EINVAL;
		op(p, ctx);
		srnic_mr_atomic_unmap(p);
		return 0;
	}
	if (!IS_ALIGNED(iova, sizeof(u64)))
		return -EINVAL;
	/* an ODP page stays while its lock is held: map and use it there */
	spin_lock_irqsave(&mr->odp->lock, flags);
	err = srnic_odp_check(mr, iova, sizeof(u64));
	if (!err) {
		page = srnic_mtt_page(mr, iova, &poff);
		if (page && IS_ALIGNED(poff, sizeof(u64))) {
			p = kmap_local_page(page) + poff;
			op(p, ctx);
			kunmap_local(p);
		} else {
			err = -EINVAL;
		}
	}
	spin_unlock_irqrestore(&mr->odp->lock, flags);
	if (err == -EAGAIN)
		srnic_odp_request(mr, iova, sizeof(u64));
	return err;
}
