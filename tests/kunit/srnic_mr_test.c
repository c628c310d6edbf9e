// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "srnic_mr": kernel/srnic_mem.c, srnic_mr.c, srnic_mtt.c,
 * srnic_mw.c and srnic_sge.c.
 *
 *   - MTT translation over separately allocated 4 KiB pages and over
 *     physically contiguous 2 MiB blocks (order-9 allocations);
 *   - the key space: lkey == rkey, distinct indices, lookups by key,
 *     fast registration with a new key byte, invalidation;
 *   - range and access checks, registration-time access validation;
 *   - the memory layer: lookup by key and kind, a window's rkey resolving
 *     to its MR, references, freed keys refused;
 *   - memory windows, type 1 and type 2, and IBA's bind rules;
 *   - zero-copy fragment append and copy from a non-linear skb;
 *   - atomic mapping and its alignment checks;
 *   - the SGE walks (srnic_sge.c): gather, scatter from memory and from an
 *     skb, zero copy, keys checked per SGE at use, the position reached.
 *
 * The device is a zeroed struct srnic_dev that only has its key space set
 * up (srnic_mem_dev_init()), the PDs are bare struct ib_pd; verbs are called
 * through srnic_mr_ops and srnic_mw_ops, as ib_core would. User MRs need a
 * process's memory and are covered in the VM (tests/vm/test_mr.sh); here
 * MRs over kernel pages come from srnic_mr_reg_pages().
 *
 * Linked into srnic.o when CONFIG_RDMA_SRNIC_KUNIT_TEST=y; run it with
 * tests/kunit/run.sh 'srnic_mr'.
 */
#include <kunit/test.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

/* Relative to this file: see srnic_port_test.c. */
#include "../../kernel/srnic.h"

#define SRNIC_MR_TEST_MAX_PAGES	8
#define SRNIC_MR_TEST_RW	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC)

struct srnic_mr_test_ctx {
	struct srnic_dev	*sdev;
	struct ib_pd		*pd;
	struct ib_pd		*other_pd;
};

static int srnic_mr_test_init(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->sdev = kunit_kzalloc(test, sizeof(*ctx->sdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->sdev);
	ctx->pd = kunit_kzalloc(test, sizeof(*ctx->pd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->pd);
	ctx->other_pd = kunit_kzalloc(test, sizeof(*ctx->other_pd),
				      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->other_pd);
	srnic_mem_dev_init(ctx->sdev);
	ctx->pd->device = &ctx->sdev->ib_dev;
	ctx->other_pd->device = &ctx->sdev->ib_dev;
	test->priv = ctx;
	return 0;
}

static void srnic_mr_test_exit(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;

	/* Every test frees what it made; fini WARNs (a failure) if not. */
	KUNIT_EXPECT_TRUE(test, xa_empty(&ctx->sdev->mr_keys));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->sdev->mr_count), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->sdev->mw_count), 0);
	srnic_mem_dev_fini(ctx->sdev);
}

/* ----------------------------------------------------------- helpers */

struct srnic_mr_test_pages {
	struct page	*page[SRNIC_MR_TEST_MAX_PAGES];
	unsigned int	n;
	unsigned int	order;
};

static int srnic_mr_test_pages_init(struct kunit_resource *res, void *context)
{
	const struct srnic_mr_test_pages *want = context;
	struct srnic_mr_test_pages *p;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->order = want->order;
	for (; p->n < want->n; p->n++) {
		p->page[p->n] = alloc_pages(GFP_KERNEL | __GFP_ZERO |
					    __GFP_NOWARN, p->order);
		if (!p->page[p->n])
			break;
	}
	res->data = p;
	return 0;
}

static void srnic_mr_test_pages_free(struct kunit_resource *res)
{
	struct srnic_mr_test_pages *p = res->data;
	unsigned int i;

	for (i = 0; i < p->n; i++)
		__free_pages(p->page[i], p->order);
	kfree(p);
}

/* @n zeroed blocks of 2^@order pages, freed when the test ends. */
static struct page **srnic_mr_test_pages(struct kunit *test, unsigned int n,
					 unsigned int order)
{
	struct srnic_mr_test_pages want = { .n = n, .order = order };
	struct srnic_mr_test_pages *p;

	p = kunit_alloc_resource(test, srnic_mr_test_pages_init,
				 srnic_mr_test_pages_free, GFP_KERNEL, &want);
	if (!p || p->n < n)
		return NULL;
	return p->page;
}

static void srnic_mr_test_fill(u8 *buf, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = seed + i * 13 + (i >> 8);
}

/* Where byte @k of a table MR lives, computed independently of the MTT. */
static u8 *srnic_mr_test_byte(struct page **blocks, unsigned int page_shift,
			      u64 offset, u64 k)
{
	u64 off = offset + k;

	return (u8 *)page_address(blocks[off >> page_shift]) +
	       (off & (BIT_ULL(page_shift) - 1));
}

static struct srnic_mr *srnic_mr_test_reg(struct kunit *test,
					  struct page **blocks, u32 nblocks,
					  unsigned int page_shift, u64 offset,
					  u64 iova, u64 length, int access)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	struct srnic_mr *mr;

	mr = srnic_mr_reg_pages(ctx->pd, blocks, nblocks, page_shift, offset,
				iova, length, access);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	return mr;
}

static void srnic_mr_test_dereg(struct kunit *test, struct srnic_mr *mr)
{
	KUNIT_EXPECT_EQ(test, srnic_mr_ops.dereg_mr(&mr->ibmr, NULL), 0);
}

static struct srnic_mw *srnic_mr_test_alloc_mw(struct kunit *test,
					       enum ib_mw_type type)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	struct srnic_mw *mw;

	mw = kunit_kzalloc(test, sizeof(*mw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mw);
	mw->ibmw.device = &ctx->sdev->ib_dev;
	mw->ibmw.pd = ctx->pd;
	mw->ibmw.type = type;
	KUNIT_ASSERT_EQ(test, srnic_mw_ops.alloc_mw(&mw->ibmw, NULL), 0);
	return mw;
}

/* Error code of a lookup (0 for a referenced MR, which is released). */
static int srnic_mr_test_lkey(struct kunit *test, struct ib_pd *pd, u32 key,
			      u64 iova, u64 len, int access)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	struct srnic_mr *mr;

	mr = srnic_mr_get_lkey(ctx->sdev, pd, key, iova, len, access);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	srnic_mr_put(mr);
	return 0;
}

static int srnic_mr_test_rkey(struct kunit *test, struct ib_pd *pd, u32 qpn,
			      u32 key, u64 iova, u64 len, int access)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	struct srnic_mr *mr;

	mr = srnic_mr_get_rkey(ctx->sdev, pd, qpn, key, iova, len, access);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	srnic_mr_put(mr);
	return 0;
}

static u32 srnic_mr_test_next_key(u32 key)
{
	return (key & ~SRNIC_KEY_BYTE_MASK) | ((key + 1) & SRNIC_KEY_BYTE_MASK);
}

/* --------------------------------------------------------- translation */

static void mtt_translates_across_4k_blocks(struct kunit *test)
{
	const u64 offset = 100, iova = 0x7f1200000064ULL;
	const u64 length = 4 * PAGE_SIZE - offset - 60;
	struct page **pages, *blocks[4];
	struct srnic_mr *mr;
	u8 *src, *dst;
	u64 k;

	pages = srnic_mr_test_pages(test, 4, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	/* reversed, so that neighbours in the table are not in memory */
	for (k = 0; k < 4; k++)
		blocks[k] = pages[3 - k];
	src = kunit_kmalloc(test, length, GFP_KERNEL);
	dst = kunit_kzalloc(test, length, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	srnic_mr_test_fill(src, length, 1);

	mr = srnic_mr_test_reg(test, blocks, 4, PAGE_SHIFT, offset, iova,
			       length, IB_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, mr->page_shift, PAGE_SHIFT);
	KUNIT_EXPECT_EQ(test, mr->nblocks, 4);

	srnic_mr_copy_to(mr, iova, src, length);
	for (k = 0; k < length; k++)
		if (*srnic_mr_test_byte(blocks, PAGE_SHIFT, offset, k) !=
		    src[k])
			break;
	KUNIT_EXPECT_EQ_MSG(test, k, length, "first wrong byte at %llu", k);

	/* a piece across the block 1 -> 2 boundary */
	k = 2 * PAGE_SIZE - offset - 10;
	srnic_mr_copy_from(mr, iova + k, dst, 20);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src + k, 20), 0);
	/* the last byte */
	srnic_mr_copy_from(mr, iova + length - 1, dst, 1);
	KUNIT_EXPECT_EQ(test, dst[0], src[length - 1]);

	srnic_mr_test_dereg(test, mr);
}

static void mtt_translates_2m_blocks(struct kunit *test)
{
	/* starts 104 bytes before the end of block 0, ends in block 1 */
	const u64 offset = SZ_2M - 104, length = SZ_2M;
	const u64 iova = SZ_1G + offset;
	const unsigned int shift = 21;
	struct page **blocks;
	struct srnic_mr *mr;
	u8 src[300], dst[300];
	u64 *p, k;

	blocks = srnic_mr_test_pages(test, 2, shift - PAGE_SHIFT);
	if (!blocks)
		kunit_skip(test, "no two order-%d blocks", shift - PAGE_SHIFT);
	srnic_mr_test_fill(src, sizeof(src), 7);
	mr = srnic_mr_test_reg(test, blocks, 2, shift, offset, iova, length,
			       SRNIC_MR_TEST_RW);
	KUNIT_EXPECT_EQ(test, mr->nblocks, 2);

	/* across the 2 MiB block boundary */
	srnic_mr_copy_to(mr, iova, src, sizeof(src));
	for (k = 0; k < sizeof(src); k++)
		KUNIT_EXPECT_EQ_MSG(test, *srnic_mr_test_byte(blocks, shift,
							      offset, k),
				    src[k], "byte %llu", k);
	/* block 1 starts at MR byte 104 */
	KUNIT_EXPECT_EQ(test, *((u8 *)page_address(blocks[1]) + 103),
			src[104 + 103]);
	KUNIT_EXPECT_EQ(test, *((u8 *)page_address(blocks[0]) + SZ_2M - 104),
			src[0]);

	/* deep inside block 1, across one of its 4 KiB pages */
	k = 104 + SZ_1M - 5;
	srnic_mr_copy_to(mr, iova + k, src, 10);
	KUNIT_EXPECT_EQ(test, memcmp((u8 *)page_address(blocks[1]) + SZ_1M - 5,
				     src, 10), 0);
	srnic_mr_copy_from(mr, iova + k, dst, 10);
	KUNIT_EXPECT_EQ(test, memcmp(dst, src, 10), 0);

	/* an atomic's u64, 8 bytes into block 1 */
	p = srnic_mr_atomic_map(mr, iova + 112);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_PTR_EQ(test, (void *)p,
			    (void *)((u8 *)page_address(blocks[1]) + 8));
	srnic_mr_atomic_unmap(p);

	srnic_mr_test_dereg(test, mr);
}

/* ---------------------------------------------------------------- keys */

static void keys_name_one_object_each(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	struct ib_mr *mrs[4];
	struct srnic_mw *mws[2];
	u32 keys[6];
	int i, j;

	mrs[0] = srnic_mr_ops.get_dma_mr(ctx->pd, IB_ACCESS_LOCAL_WRITE);
	mrs[1] = srnic_mr_ops.get_dma_mr(ctx->pd, 0);
	mrs[2] = srnic_mr_ops.alloc_mr(ctx->pd, IB_MR_TYPE_MEM_REG, 8);
	mrs[3] = srnic_mr_ops.alloc_mr(ctx->pd, IB_MR_TYPE_MEM_REG, 1);
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mrs[i]);
		KUNIT_EXPECT_EQ(test, mrs[i]->lkey, mrs[i]->rkey);
		keys[i] = mrs[i]->lkey;
	}
	mws[0] = srnic_mr_test_alloc_mw(test, IB_MW_TYPE_1);
	mws[1] = srnic_mr_test_alloc_mw(test, IB_MW_TYPE_2);
	keys[4] = mws[0]->ibmw.rkey;
	keys[5] = mws[1]->ibmw.rkey;
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->sdev->mr_count), 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->sdev->mw_count), 2);

	for (i = 0; i < 6; i++) {
		/* index 0 is never used: key 0 .. 0xff names nothing */
		KUNIT_EXPECT_GE(test, keys[i] >> SRNIC_KEY_INDEX_SHIFT, 1);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test,
					keys[i] >> SRNIC_KEY_INDEX_SHIFT,
					keys[j] >> SRNIC_KEY_INDEX_SHIFT);
	}

	/* the DMA MR: by its key; not by a stale key byte or another index */
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, keys[0], 4096,
						 8, IB_ACCESS_LOCAL_WRITE), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd,
						 keys[0] ^ 0x80, 4096, 8, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd,
						 keys[0] + (0x1000 << 8), 4096,
						 8, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, 0, 4096, 8, 0),
			-EINVAL);
	/* fast-reg MRs start FREE; a window's key is no lkey */
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, keys[2], 4096,
						 8, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, keys[4], 4096,
						 8, 0), -EINVAL);

	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, srnic_mw_ops.dealloc_mw(&mws[i]->ibmw),
				0);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, srnic_mr_ops.dereg_mr(mrs[i], NULL), 0);
	/* gone with its index */
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, keys[0], 4096,
						 8, 0), -EINVAL);
}

static void fast_reg_installs_mapping_and_key(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	struct scatterlist sgl[3];
	struct ib_reg_wr wr = {};
	struct srnic_mr *mr;
	struct page **pages;
	struct ib_mr *ibmr;
	u32 key0, key1;
	u8 src[64];
	u64 iova;
	int i;

	pages = srnic_mr_test_pages(test, 3, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	srnic_mr_test_fill(src, sizeof(src), 3);

	ibmr = srnic_mr_ops.alloc_mr(ctx->pd, IB_MR_TYPE_SG_GAPS, 4);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ibmr), -EINVAL);
	ibmr = srnic_mr_ops.alloc_mr(ctx->pd, IB_MR_TYPE_MEM_REG, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ibmr), -EINVAL);
	ibmr = srnic_mr_ops.alloc_mr(ctx->pd, IB_MR_TYPE_MEM_REG,
				     SRNIC_MAX_FAST_REG_PAGES + 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ibmr), -EINVAL);
	ibmr = srnic_mr_ops.alloc_mr(ctx->pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ibmr);
	mr = to_srnic_mr(ibmr);
	key0 = ibmr->lkey;

	/* what ib_dma_map_sg() does with a NULL dma_device: DMA addr = VA */
	sg_init_table(sgl, 3);
	sg_set_page(&sgl[0], pages[0], PAGE_SIZE - 16, 16);
	sg_set_page(&sgl[1], pages[1], PAGE_SIZE, 0);
	sg_set_page(&sgl[2], pages[2], 100, 0);
	for (i = 0; i < 3; i++) {
		sg_dma_address(&sgl[i]) = (uintptr_t)sg_virt(&sgl[i]);
		sg_dma_len(&sgl[i]) = sgl[i].length;
	}
	/* ib_map_mr_sg() sets the page size, then calls the driver */
	ibmr->page_size = PAGE_SIZE / 2;
	KUNIT_EXPECT_EQ(test, srnic_mr_ops.map_mr_sg(ibmr, sgl, 3, NULL),
			-EINVAL);
	ibmr->page_size = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, srnic_mr_ops.map_mr_sg(ibmr, sgl, 3, NULL), 3);
	iova = ibmr->iova;
	KUNIT_EXPECT_EQ(test, iova, (u64)(uintptr_t)page_address(pages[0]) + 16);
	KUNIT_EXPECT_EQ(test, ibmr->length, 2 * PAGE_SIZE - 16 + 100);
	/* mapped, not registered yet */
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key0, iova, 8,
						 0), -EINVAL);

	/* IB_WR_REG_MR with the next key byte (ib_inc_rkey()) */
	key1 = ib_inc_rkey(key0);
	ib_update_fast_reg_key(ibmr, key1);
	wr.mr = ibmr;
	wr.key = key1;
	wr.access = IB_ACCESS_REMOTE_WRITE;
	KUNIT_EXPECT_EQ(test, srnic_mr_fast_reg(ctx->sdev, ctx->pd, &wr),
			-EINVAL);	/* remote write without local write */
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	wr.key = key1 + (1 << SRNIC_KEY_INDEX_SHIFT);
	KUNIT_EXPECT_EQ(test, srnic_mr_fast_reg(ctx->sdev, ctx->pd, &wr),
			-EINVAL);	/* the index is not the consumer's */
	wr.key = key1;
	KUNIT_EXPECT_EQ(test, srnic_mr_fast_reg(ctx->sdev, ctx->other_pd, &wr),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mr_fast_reg(ctx->sdev, ctx->pd, &wr), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_fast_reg(ctx->sdev, ctx->pd, &wr),
			-EINVAL);	/* only from FREE */

	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key0, iova, 8,
						 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key1, iova,
						 ibmr->length,
						 IB_ACCESS_LOCAL_WRITE), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, key1, iova,
						 8, IB_ACCESS_REMOTE_WRITE),
			0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, key1, iova,
						 8, IB_ACCESS_REMOTE_READ),
			-EACCES);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key1, iova,
						 ibmr->length + 1, 0), -ERANGE);

	/* across pages 0 -> 1 */
	srnic_mr_copy_to(mr, iova + PAGE_SIZE - 16 - 32, src, 64);
	KUNIT_EXPECT_EQ(test, memcmp((u8 *)page_address(pages[0]) +
				     PAGE_SIZE - 32, src, 32), 0);
	KUNIT_EXPECT_EQ(test, memcmp(page_address(pages[1]), src + 32, 32), 0);

	/* invalidate: exact key, same PD; FREE stays FREE */
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(ctx->sdev, ctx->pd, key0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(ctx->sdev, ctx->other_pd,
						   key1), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(ctx->sdev, ctx->pd, key1), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key1, iova, 8,
						 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(ctx->sdev, ctx->pd, key1), 0);

	/* zero-based (ib_map_mr_sg_zbva()): iova 0 is the first mapped byte */
	ibmr->iova = 0;
	wr.key = ib_inc_rkey(key1);
	KUNIT_EXPECT_EQ(test, srnic_mr_fast_reg(ctx->sdev, ctx->pd, &wr), 0);
	srnic_mr_copy_to(mr, 0, src, 8);
	KUNIT_EXPECT_EQ(test, memcmp((u8 *)page_address(pages[0]) + 16, src,
				     8), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, wr.key, 0,
						 2 * PAGE_SIZE - 16 + 100, 0),
			0);
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(ctx->sdev, ctx->pd, wr.key),
			0);

	/* only fast-reg MRs are invalidated by work requests */
	mr = srnic_mr_test_reg(test, pages, 1, PAGE_SHIFT, 0, 0x1000,
			       PAGE_SIZE, 0);
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(ctx->sdev, ctx->pd,
						   mr->mem.key), -EINVAL);
	srnic_mr_test_dereg(test, mr);
	KUNIT_EXPECT_EQ(test, srnic_mr_ops.dereg_mr(ibmr, NULL), 0);
}

/* ------------------------------------------------------ range, access */

static void lookups_check_range(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	const u64 iova = 0x10000, len = 2 * PAGE_SIZE;
	struct page **pages;
	struct srnic_mr *mr;
	u32 key;

	pages = srnic_mr_test_pages(test, 2, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	mr = srnic_mr_test_reg(test, pages, 2, PAGE_SHIFT, 0, iova, len,
			       SRNIC_MR_TEST_RW);
	key = mr->mem.key;

	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key, iova, len,
						 0), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key,
						 iova + len - 1, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key, iova - 1,
						 2, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key,
						 iova + len - 1, 2, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key, iova,
						 len + 1, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key,
						 iova + len, 1, 0), -ERANGE);
	/* iova + len wraps */
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, key,
						 U64_MAX - 2, 8, 0), -ERANGE);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, key,
						 iova + 8, U64_MAX - 4,
						 IB_ACCESS_REMOTE_READ),
			-ERANGE);
	srnic_mr_test_dereg(test, mr);
}

static void lookups_check_access_and_pd(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	const u64 iova = 0x20000;
	struct srnic_mr *ro, *rr;
	struct page **pages;

	pages = srnic_mr_test_pages(test, 1, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	ro = srnic_mr_test_reg(test, pages, 1, PAGE_SHIFT, 0, iova, PAGE_SIZE,
			       0);
	rr = srnic_mr_test_reg(test, pages, 1, PAGE_SHIFT, 0, iova, PAGE_SIZE,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ);

	/* local read needs no right, local write does */
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, ro->mem.key,
						 iova, 8, 0), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, ro->mem.key,
						 iova, 8,
						 IB_ACCESS_LOCAL_WRITE),
			-EACCES);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, ro->mem.key,
						 iova, 8,
						 IB_ACCESS_REMOTE_READ),
			-EACCES);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, rr->mem.key,
						 iova, 8,
						 IB_ACCESS_LOCAL_WRITE), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, rr->mem.key,
						 iova, 8,
						 IB_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, rr->mem.key,
						 iova, 8,
						 IB_ACCESS_REMOTE_WRITE),
			-EACCES);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, rr->mem.key,
						 iova, 8,
						 IB_ACCESS_REMOTE_ATOMIC),
			-EACCES);
	/* another PD's QP sees nothing */
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->other_pd,
						 rr->mem.key, iova, 8, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->other_pd, 0,
						 rr->mem.key, iova, 8,
						 IB_ACCESS_REMOTE_READ),
			-EINVAL);
	srnic_mr_test_dereg(test, rr);
	srnic_mr_test_dereg(test, ro);
}

static void zero_length_needs_no_key(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	struct sk_buff *skb;
	u8 buf[4];

	KUNIT_EXPECT_NULL(test, srnic_mr_get_lkey(ctx->sdev, ctx->pd,
						  0xdeadbeef, 0, 0,
						  IB_ACCESS_LOCAL_WRITE));
	KUNIT_EXPECT_NULL(test, srnic_mr_get_rkey(ctx->sdev, ctx->pd, 1, 0,
						  U64_MAX, 0,
						  IB_ACCESS_REMOTE_WRITE));
	/* and the NULL "no MR needed" goes through every accessor */
	srnic_mr_put(NULL);
	srnic_mr_copy_to(NULL, 0, buf, 0);
	srnic_mr_copy_from(NULL, 0, buf, 0);
	skb = alloc_skb(16, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srnic_mr_copy_from_skb(NULL, 0, skb, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_add_frags(NULL, 0, 0, skb), 0);
	KUNIT_EXPECT_EQ(test, skb->len, 0);
	kfree_skb(skb);
}

struct srnic_mr_access_case {
	const char *name;
	int access;
	int err;
};

static const struct srnic_mr_access_case srnic_mr_access_cases[] = {
	{ "none",		0,				0 },
	{ "local write",	IB_ACCESS_LOCAL_WRITE,		0 },
	{ "remote read",	IB_ACCESS_REMOTE_READ,		0 },
	{ "mw bind",		IB_ACCESS_MW_BIND,		0 },
	{ "remote write alone",	IB_ACCESS_REMOTE_WRITE,		-EINVAL },
	{ "remote atomic alone", IB_ACCESS_REMOTE_ATOMIC,	-EINVAL },
	{ "remote write + read", IB_ACCESS_REMOTE_WRITE |
				 IB_ACCESS_REMOTE_READ,		-EINVAL },
	{ "local + remote write", IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE,	0 },
	{ "local write + atomic", IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_ATOMIC,	0 },
	{ "all",		SRNIC_MR_TEST_RW | IB_ACCESS_MW_BIND, 0 },
	{ "relaxed ordering",	IB_ACCESS_LOCAL_WRITE |
				IB_ACCESS_RELAXED_ORDERING,	0 },
	{ "hugetlb hint",	IB_ACCESS_HUGETLB,		0 },
	{ "zero based",		IB_ZERO_BASED,			-EOPNOTSUPP },
	{ "on demand",		IB_ACCESS_ON_DEMAND,		-EOPNOTSUPP },
	{ "unknown bit",	BIT(8),				-EINVAL },
};

static void srnic_mr_access_case_desc(const struct srnic_mr_access_case *c,
				      char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srnic_mr_access, srnic_mr_access_cases,
		  srnic_mr_access_case_desc);

static void registration_validates_access(struct kunit *test)
{
	const struct srnic_mr_access_case *c = test->param_value;
	struct srnic_mr_test_ctx *ctx = test->priv;
	struct page **pages;
	struct srnic_mr *mr;
	struct ib_mr *ibmr;

	ibmr = srnic_mr_ops.get_dma_mr(ctx->pd, c->access);
	if (c->err) {
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ibmr), c->err);
	} else {
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ibmr);
		KUNIT_EXPECT_EQ(test, to_srnic_mr(ibmr)->mem.access,
				c->access & SRNIC_MR_ACCESS);
		KUNIT_EXPECT_EQ(test, srnic_mr_ops.dereg_mr(ibmr, NULL), 0);
	}

	pages = srnic_mr_test_pages(test, 1, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	mr = srnic_mr_reg_pages(ctx->pd, pages, 1, PAGE_SHIFT, 0, 0x1000,
				PAGE_SIZE, c->access);
	if (c->err) {
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(mr), c->err);
	} else {
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
		srnic_mr_test_dereg(test, mr);
	}
}

static void registration_validates_geometry(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	struct ib_pd *pd = ctx->pd;
	struct page **pages;
	struct srnic_mr *mr;

	pages = srnic_mr_test_pages(test, 2, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	/* zero length */
	mr = srnic_mr_reg_pages(pd, pages, 2, PAGE_SHIFT, 0, 0x1000, 0, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EINVAL);
	/* iova + length overflows */
	mr = srnic_mr_reg_pages(pd, pages, 2, PAGE_SHIFT, 0, U64_MAX - 10,
				100, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EINVAL);
	/* more than the table holds */
	mr = srnic_mr_reg_pages(pd, pages, 2, PAGE_SHIFT, 1, 0x1000,
				2 * PAGE_SIZE, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EINVAL);
	/* blocks smaller than a page */
	mr = srnic_mr_reg_pages(pd, pages, 2, PAGE_SHIFT - 1, 0, 0x1000, 100,
				0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EINVAL);
	/* offset outside block 0 */
	mr = srnic_mr_reg_pages(pd, pages, 2, PAGE_SHIFT, PAGE_SIZE, 0x1000,
				100, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EINVAL);
	/* exactly the table */
	mr = srnic_mr_reg_pages(pd, pages, 2, PAGE_SHIFT, 1, 0x1000,
				2 * PAGE_SIZE - 1, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	srnic_mr_test_dereg(test, mr);
}

/* ------------------------------------------------------ memory layer */

static void mem_lookup_by_key_and_kind(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	const u64 iova = 0x50000;
	const int ra = IB_ACCESS_REMOTE_READ;
	struct srnic_dev *sdev = ctx->sdev;
	struct srnic_mem *got;
	struct page **pages;
	struct srnic_mw *mw;
	struct srnic_mr *mr;
	u32 lkey, wkey, k1;

	pages = srnic_mr_test_pages(test, 1, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	mr = srnic_mr_test_reg(test, pages, 1, PAGE_SHIFT, 0, iova, PAGE_SIZE,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND);
	lkey = mr->mem.key;
	mw = srnic_mr_test_alloc_mw(test, IB_MW_TYPE_2);
	wkey = mw->ibmw.rkey;
	k1 = srnic_mr_test_next_key(wkey);

	/* by kind: each key names one object of one kind, referenced */
	got = srnic_mem_get(sdev, lkey, SRNIC_MEM_MR);
	KUNIT_EXPECT_PTR_EQ(test, got, &mr->mem);
	KUNIT_EXPECT_EQ(test, kref_read(&mr->mem.ref), 2U);
	srnic_mem_put(got);
	KUNIT_EXPECT_EQ(test, kref_read(&mr->mem.ref), 1U);
	KUNIT_EXPECT_NULL(test, srnic_mem_get(sdev, lkey, SRNIC_MEM_MW));
	got = srnic_mem_get(sdev, wkey, SRNIC_MEM_MW);
	KUNIT_EXPECT_PTR_EQ(test, got, &mw->win->mem);
	srnic_mem_put(got);
	KUNIT_EXPECT_NULL(test, srnic_mem_get(sdev, wkey, SRNIC_MEM_MR));
	/* an index nobody has */
	KUNIT_EXPECT_NULL(test, srnic_mem_get(sdev, 0x7fff00, SRNIC_MEM_MR));

	/* the rkey of a bound window resolves to its MR, checked */
	KUNIT_ASSERT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 3, wkey, k1, lkey,
					    iova + 64, 128, ra), 0);
	KUNIT_EXPECT_EQ(test, mr->mem.nbound, 1U);
	KUNIT_EXPECT_PTR_EQ(test, mw->win->mem.target, &mr->mem);
	got = srnic_mem_get_rkey(sdev, ctx->pd, 3, k1, iova + 64, 128, ra);
	KUNIT_EXPECT_PTR_EQ(test, got, &mr->mem);
	if (!IS_ERR_OR_NULL(got))
		srnic_mem_put(got);
	KUNIT_EXPECT_PTR_EQ(test, srnic_mem_get_rkey(sdev, ctx->pd, 3, k1,
						     iova, 8, ra),
			    ERR_PTR(-ERANGE));
	KUNIT_EXPECT_PTR_EQ(test, srnic_mem_get_rkey(sdev, ctx->pd, 4, k1,
						     iova + 64, 8, ra),
			    ERR_PTR(-EINVAL));
	/* a window's key is no lkey */
	KUNIT_EXPECT_PTR_EQ(test, srnic_mem_get_lkey(sdev, ctx->pd, k1,
						     iova + 64, 8, 0),
			    ERR_PTR(-EINVAL));
	/* invalidation lets go of the MR */
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(sdev, ctx->pd, k1), 0);
	KUNIT_EXPECT_EQ(test, mr->mem.nbound, 0U);
	KUNIT_EXPECT_NULL(test, mw->win->mem.target);
	KUNIT_EXPECT_EQ(test, kref_read(&mr->mem.ref), 1U);

	/* freed keys are refused */
	KUNIT_EXPECT_EQ(test, srnic_mw_ops.dealloc_mw(&mw->ibmw), 0);
	KUNIT_EXPECT_NULL(test, srnic_mem_get(sdev, k1, SRNIC_MEM_MW));
	KUNIT_EXPECT_PTR_EQ(test, srnic_mem_get_rkey(sdev, ctx->pd, 3, k1,
						     iova + 64, 8, ra),
			    ERR_PTR(-EINVAL));
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(sdev, ctx->pd, k1),
			-EINVAL);
	srnic_mr_test_dereg(test, mr);
	KUNIT_EXPECT_NULL(test, srnic_mem_get(sdev, lkey, SRNIC_MEM_MR));
	KUNIT_EXPECT_PTR_EQ(test, srnic_mem_get_lkey(sdev, ctx->pd, lkey, iova,
						     8, 0),
			    ERR_PTR(-EINVAL));
	KUNIT_EXPECT_PTR_EQ(test, srnic_mem_get_rkey(sdev, ctx->pd, 0, lkey,
						     iova, 8, 0),
			    ERR_PTR(-EINVAL));
}

/* ----------------------------------------------------- memory windows */

static void mw_type1_binds_within_mr(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	const u64 iova = 0x40000, addr = iova + 100, wlen = 1000;
	const int ra = IB_ACCESS_REMOTE_READ;
	struct srnic_dev *sdev = ctx->sdev;
	struct srnic_mr *mr, *got;
	struct page **pages;
	struct srnic_mw *mw;
	u32 k0, k1, k2, lkey;

	pages = srnic_mr_test_pages(test, 2, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	mr = srnic_mr_test_reg(test, pages, 2, PAGE_SHIFT, 0, iova,
			       2 * PAGE_SIZE, IB_ACCESS_LOCAL_WRITE |
			       IB_ACCESS_MW_BIND);
	lkey = mr->mem.key;
	mw = srnic_mr_test_alloc_mw(test, IB_MW_TYPE_1);
	k0 = mw->ibmw.rkey;
	k1 = srnic_mr_test_next_key(k0);
	k2 = srnic_mr_test_next_key(k1);

	/* unbound */
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, k0, addr, 8,
						 ra), -EINVAL);
	/* refused binds leave it as it was */
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k0,
					    k1 + (1 << SRNIC_KEY_INDEX_SHIFT),
					    lkey, addr, wlen, ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k1, k2, lkey,
					    addr, wlen, ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k0, k1, lkey,
					    addr, wlen, ra | IB_ZERO_BASED),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k0, k1, lkey,
					    addr, wlen,
					    ra | IB_ACCESS_MW_BIND), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k0, k1, lkey,
					    iova - 1, wlen, ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k0, k1, lkey,
					    iova + 1, 2 * PAGE_SIZE, ra),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k0, k1, lkey,
					    addr, U64_MAX, ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k0, k1,
					    srnic_mr_test_next_key(lkey), addr,
					    wlen, ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->other_pd, 0, k0, k1,
					    lkey, addr, wlen, ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, mr->mem.nbound, 0);

	KUNIT_ASSERT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k0, k1, lkey,
					    addr, wlen, ra), 0);
	KUNIT_EXPECT_EQ(test, mr->mem.nbound, 1);
	got = srnic_mr_get_rkey(sdev, ctx->pd, 0, k1, addr, wlen, ra);
	KUNIT_EXPECT_PTR_EQ(test, got, mr);
	if (!IS_ERR(got))
		srnic_mr_put(got);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, k0, addr, 8,
						 ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, k1,
						 addr - 1, 2, ra), -ERANGE);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, k1,
						 addr + wlen - 1, 2, ra),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, k1, addr, 8,
						 IB_ACCESS_REMOTE_WRITE),
			-EACCES);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->other_pd, 0, k1,
						 addr, 8, ra), -EINVAL);
	/* a window key is no lkey */
	KUNIT_EXPECT_EQ(test, srnic_mr_test_lkey(test, ctx->pd, k1, addr, 8,
						 0), -EINVAL);

	/* an MR with a bound window stays */
	KUNIT_EXPECT_EQ(test, srnic_mr_ops.dereg_mr(&mr->ibmr, NULL), -EBUSY);
	/* type 1 windows are not invalidated by work requests */
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(sdev, ctx->pd, k1), -EINVAL);

	/* rebind (writable now), then unbind with length 0 */
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k1, k2, lkey,
					    iova, 2 * PAGE_SIZE,
					    IB_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, mr->mem.nbound, 1);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0, k2, iova,
						 2 * PAGE_SIZE,
						 IB_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 0, k2,
					    srnic_mr_test_next_key(k2), 0, 0,
					    0, 0), 0);
	KUNIT_EXPECT_EQ(test, mr->mem.nbound, 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 0,
						 srnic_mr_test_next_key(k2),
						 iova, 8, ra), -EINVAL);

	KUNIT_EXPECT_EQ(test, srnic_mw_ops.dealloc_mw(&mw->ibmw), 0);
	srnic_mr_test_dereg(test, mr);
}

static void mw_type2_follows_iba_rules(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	const int rw = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
	const u64 iova = 0x80000;
	struct srnic_dev *sdev = ctx->sdev;
	struct srnic_mr *mr, *nobind, *ro;
	struct page **pages;
	struct srnic_mw *mw;
	u32 k0, k1, k2;

	pages = srnic_mr_test_pages(test, 1, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	mr = srnic_mr_test_reg(test, pages, 1, PAGE_SHIFT, 0, iova, PAGE_SIZE,
			       IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND);
	nobind = srnic_mr_test_reg(test, pages, 1, PAGE_SHIFT, 0, iova,
				   PAGE_SIZE, IB_ACCESS_LOCAL_WRITE);
	ro = srnic_mr_test_reg(test, pages, 1, PAGE_SHIFT, 0, iova, PAGE_SIZE,
			       IB_ACCESS_MW_BIND);
	mw = srnic_mr_test_alloc_mw(test, IB_MW_TYPE_2);
	k0 = mw->ibmw.rkey;
	k1 = srnic_mr_test_next_key(k0);
	k2 = srnic_mr_test_next_key(k1);

	/* o10-37.2.40: not to nothing; C10-73: MR allows binding */
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 7, k0, k1,
					    mr->mem.key, iova, 0, rw),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 7, k0, k1,
					    nobind->mem.key, iova, 8, rw),
			-EINVAL);
	/* C10-74: writable window on a read-only MR */
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 7, k0, k1,
					    ro->mem.key, iova, 8, rw), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 7, k0, k1,
					    ro->mem.key, iova, 8,
					    IB_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(sdev, ctx->pd, k1), 0);
	KUNIT_EXPECT_EQ(test, ro->mem.nbound, 0);

	/* bound to QP 7 */
	KUNIT_ASSERT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 7, k1, k2,
					    mr->mem.key, iova + 64, 64, rw),
			0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 7, k2,
						 iova + 64, 64,
						 IB_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 8, k2,
						 iova + 64, 64,
						 IB_ACCESS_REMOTE_WRITE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 7, k2,
						 iova + 64, 8,
						 IB_ACCESS_REMOTE_ATOMIC),
			-EACCES);
	/* o10-37.2.30: bound only from FREE */
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 7, k2,
					    srnic_mr_test_next_key(k2),
					    mr->mem.key, iova, 8, rw),
			-EINVAL);
	/* an MR with a bound window is neither deregistered nor changed */
	KUNIT_EXPECT_EQ(test, srnic_mr_ops.dereg_mr(&mr->ibmr, NULL), -EBUSY);

	/* invalidate: exact key and PD */
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(sdev, ctx->pd, k1), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(sdev, ctx->other_pd, k2),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(sdev, ctx->pd, k2), 0);
	KUNIT_EXPECT_EQ(test, mr->mem.nbound, 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 7, k2,
						 iova + 64, 8,
						 IB_ACCESS_REMOTE_READ),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_mem_invalidate(sdev, ctx->pd, k2), 0);

	/* deallocating a bound window lets go of the MR */
	KUNIT_EXPECT_EQ(test, srnic_mw_bind(sdev, ctx->pd, 9, k2, k0,
					    mr->mem.key, iova, PAGE_SIZE, rw),
			0);
	KUNIT_EXPECT_EQ(test, mr->mem.nbound, 1);
	KUNIT_EXPECT_EQ(test, srnic_mw_ops.dealloc_mw(&mw->ibmw), 0);
	KUNIT_EXPECT_EQ(test, mr->mem.nbound, 0);
	KUNIT_EXPECT_EQ(test, srnic_mr_test_rkey(test, ctx->pd, 9, k0, iova, 8,
						 IB_ACCESS_REMOTE_READ),
			-EINVAL);

	srnic_mr_test_dereg(test, ro);
	srnic_mr_test_dereg(test, nobind);
	srnic_mr_test_dereg(test, mr);
}

/* ------------------------------------------------------------- skbs */

static void add_frags_appends_referenced_pages(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	const u64 iova = 0x50000;
	struct page **pages, *blocks[3];
	struct srnic_mr *mr;
	struct sk_buff *skb;
	u8 *want, *got, *small;
	int refs[3], i;
	u64 va;

	pages = srnic_mr_test_pages(test, 3, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	for (i = 0; i < 3; i++)
		blocks[i] = pages[2 - i];
	want = kunit_kmalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
	got = kunit_kzalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, got);
	srnic_mr_test_fill(want, 3 * PAGE_SIZE, 5);
	mr = srnic_mr_test_reg(test, blocks, 3, PAGE_SHIFT, 0, iova,
			       3 * PAGE_SIZE, IB_ACCESS_LOCAL_WRITE);
	srnic_mr_copy_to(mr, iova, want, 3 * PAGE_SIZE);

	skb = alloc_skb(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_zero(skb, 16);
	for (i = 0; i < 3; i++)
		refs[i] = page_ref_count(blocks[i]);

	/* 96 bytes of block 0, all of block 1, 808 bytes of block 2 */
	KUNIT_EXPECT_EQ(test, srnic_mr_add_frags(mr, iova + PAGE_SIZE - 96,
						 5000, skb), 0);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, 3);
	KUNIT_EXPECT_EQ(test, skb->len, 16 + 5000);
	KUNIT_EXPECT_EQ(test, skb->data_len, 5000);
	KUNIT_EXPECT_TRUE(test, skb_has_shared_frag(skb));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, page_ref_count(blocks[i]), refs[i] + 1);
	KUNIT_EXPECT_EQ(test, skb_copy_bits(skb, 16, got, 5000), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, want + PAGE_SIZE - 96, 5000), 0);

	/* the continuation grows the last fragment: no new page reference */
	KUNIT_EXPECT_EQ(test, srnic_mr_add_frags(mr,
						 iova + PAGE_SIZE - 96 + 5000,
						 100, skb), 0);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, 3);
	KUNIT_EXPECT_EQ(test, page_ref_count(blocks[2]), refs[2] + 1);
	KUNIT_EXPECT_EQ(test, skb_copy_bits(skb, 16, got, 5100), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, want + PAGE_SIZE - 96, 5100), 0);

	/* fill up to MAX_SKB_FRAGS - 1, then two pages do not fit */
	while ((i = skb_shinfo(skb)->nr_frags) < MAX_SKB_FRAGS - 1)
		KUNIT_ASSERT_EQ(test, srnic_mr_add_frags(mr, iova + 8 * i, 1,
							 skb), 0);
	i = skb->len;
	KUNIT_EXPECT_EQ(test, srnic_mr_add_frags(mr, iova + PAGE_SIZE - 1, 2,
						 skb), -EMSGSIZE);
	KUNIT_EXPECT_EQ(test, skb->len, i);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, MAX_SKB_FRAGS - 1);
	KUNIT_EXPECT_EQ(test, srnic_mr_add_frags(mr, iova + 2 * PAGE_SIZE, 2,
						 skb), 0);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, MAX_SKB_FRAGS);

	kfree_skb(skb);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, page_ref_count(blocks[i]), refs[i]);
	srnic_mr_test_dereg(test, mr);

	/* slab memory (through a DMA MR) is never a fragment */
	small = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, small);
	mr = to_srnic_mr(srnic_mr_ops.get_dma_mr(ctx->pd, 0));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	skb = alloc_skb(64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srnic_mr_add_frags(mr, (uintptr_t)small, 8, skb),
			-EMSGSIZE);
	va = (uintptr_t)page_address(pages[0]);
	KUNIT_EXPECT_EQ(test, srnic_mr_add_frags(mr, va + 8, 8, skb), 0);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, 1);
	kfree_skb(skb);
	srnic_mr_test_dereg(test, mr);
}

static void copy_from_skb_spans_head_and_frags(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	const u64 iova = 0x60000, offset = 50;
	const u32 head = 40, f0 = 3000, f1 = 2000;
	struct page **pages;
	struct srnic_mr *mr;
	struct sk_buff *skb;
	u8 *want, *got, *buf;
	u32 total;

	pages = srnic_mr_test_pages(test, 4, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	total = head + f0 + f1;
	want = kunit_kmalloc(test, total, GFP_KERNEL);
	got = kunit_kzalloc(test, total, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, got);
	srnic_mr_test_fill(want, total, 9);

	/* head in the linear part, then fragments in pages 2 and 3 */
	skb = alloc_skb(128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, want, head);
	memcpy((u8 *)page_address(pages[2]) + 100, want + head, f0);
	memcpy(page_address(pages[3]), want + head + f0, f1);
	get_page(pages[2]);
	skb_add_rx_frag(skb, 0, pages[2], 100, f0, PAGE_SIZE);
	get_page(pages[3]);
	skb_add_rx_frag(skb, 1, pages[3], 0, f1, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, skb->len, total);

	/* into an MR over pages 0 and 1, across their boundary */
	mr = srnic_mr_test_reg(test, pages, 2, PAGE_SHIFT, offset, iova,
			       2 * PAGE_SIZE - offset, IB_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, srnic_mr_copy_from_skb(mr, iova + 10, skb, 20,
						     total - 20), 0);
	srnic_mr_copy_from(mr, iova + 10, got, total - 20);
	KUNIT_EXPECT_EQ(test, memcmp(got, want + 20, total - 20), 0);
	KUNIT_EXPECT_EQ(test, memcmp((u8 *)page_address(pages[1]),
				     want + 20 + PAGE_SIZE - offset - 10,
				     16), 0);
	/* more than the skb holds */
	KUNIT_EXPECT_EQ(test, srnic_mr_copy_from_skb(mr, iova, skb, 21,
						     total - 20), -EFAULT);
	KUNIT_EXPECT_EQ(test, srnic_mr_copy_from_skb(mr, iova, skb, -1, 4),
			-EFAULT);
	srnic_mr_test_dereg(test, mr);

	/* a DMA MR writes to the kernel VA */
	buf = kunit_kzalloc(test, total, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	mr = to_srnic_mr(srnic_mr_ops.get_dma_mr(ctx->pd,
						 IB_ACCESS_LOCAL_WRITE));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_EXPECT_EQ(test, srnic_mr_copy_from_skb(mr, (uintptr_t)buf, skb,
						     0, total), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, total), 0);
	srnic_mr_test_dereg(test, mr);
	kfree_skb(skb);
}

static void atomic_map_checks_alignment(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	const u64 iova = 0x70000;
	struct page **pages;
	struct srnic_mr *mr;
	u64 *p, v = 0, *kv;

	pages = srnic_mr_test_pages(test, 1, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	mr = srnic_mr_test_reg(test, pages, 1, PAGE_SHIFT, 0, iova, PAGE_SIZE,
			       SRNIC_MR_TEST_RW);
	KUNIT_EXPECT_NULL(test, srnic_mr_atomic_map(mr, iova + 3));
	KUNIT_EXPECT_NULL(test, srnic_mr_atomic_map(mr, iova + 4));
	p = srnic_mr_atomic_map(mr, iova + 16);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_PTR_EQ(test, (void *)p,
			    (void *)((u8 *)page_address(pages[0]) + 16));
	*p = 0x0123456789abcdefULL;
	srnic_mr_atomic_unmap(p);
	srnic_mr_copy_from(mr, iova + 16, &v, sizeof(v));
	KUNIT_EXPECT_EQ(test, v, 0x0123456789abcdefULL);
	/* the last u64 of the MR */
	p = srnic_mr_atomic_map(mr, iova + PAGE_SIZE - 8);
	KUNIT_EXPECT_NOT_NULL(test, p);
	if (p)
		srnic_mr_atomic_unmap(p);
	srnic_mr_test_dereg(test, mr);

	/* aligned iova, misaligned memory (a zero-based mapping at +4) */
	mr = srnic_mr_test_reg(test, pages, 1, PAGE_SHIFT, 4, 0, 64,
			       SRNIC_MR_TEST_RW);
	KUNIT_EXPECT_NULL(test, srnic_mr_atomic_map(mr, 0));
	KUNIT_EXPECT_NULL(test, srnic_mr_atomic_map(mr, 8));
	srnic_mr_test_dereg(test, mr);

	/* a DMA MR maps the kernel VA */
	kv = kunit_kzalloc(test, sizeof(*kv), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kv);
	mr = to_srnic_mr(srnic_mr_ops.get_dma_mr(ctx->pd,
						 IB_ACCESS_LOCAL_WRITE));
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	p = srnic_mr_atomic_map(mr, (uintptr_t)kv);
	KUNIT_EXPECT_PTR_EQ(test, p, kv);
	if (p)
		srnic_mr_atomic_unmap(p);
	srnic_mr_test_dereg(test, mr);
}

/* ------------------------------------------------------ SGE walks */

static void sge_walks_span_mrs(struct kunit *test)
{
	struct srnic_mr_test_ctx *ctx = test->priv;
	const u64 ia = 0x60000, ib = 0x70000;
	struct srnic_mr *a, *b, *ro;
	struct srnic_sge_cursor c;
	struct page **pages;
	struct ib_sge sge[3];
	struct sk_buff *skb;
	u8 *want, *got;

	pages = srnic_mr_test_pages(test, 2, 0);
	KUNIT_ASSERT_NOT_NULL(test, pages);
	want = kunit_kmalloc(test, 400, GFP_KERNEL);
	got = kunit_kzalloc(test, 400, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, got);
	srnic_mr_test_fill(want, 400, 3);
	a = srnic_mr_test_reg(test, &pages[0], 1, PAGE_SHIFT, 0, ia, PAGE_SIZE,
			      IB_ACCESS_LOCAL_WRITE);
	b = srnic_mr_test_reg(test, &pages[1], 1, PAGE_SHIFT, 0, ib, PAGE_SIZE,
			      IB_ACCESS_LOCAL_WRITE);
	ro = srnic_mr_test_reg(test, &pages[1], 1, PAGE_SHIFT, 0, ib,
			       PAGE_SIZE, 0);
	/* 100 bytes of A, an empty SGE with any key, 200 bytes of B */
	sge[0] = (struct ib_sge){ .addr = ia + 10, .length = 100,
				  .lkey = a->mem.key };
	sge[1] = (struct ib_sge){ .addr = 1, .length = 0, .lkey = 0xdead };
	sge[2] = (struct ib_sge){ .addr = ib + 50, .length = 200,
				  .lkey = b->mem.key };

	/* scatter, then gather from the middle: the bytes land per SGE */
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 0);
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_to(&c, want, 300), 0);
	KUNIT_EXPECT_EQ(test, c.pos, 300U);
	KUNIT_EXPECT_EQ(test, memcmp(page_address(pages[0]) + 10, want, 100),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(page_address(pages[1]) + 50, want + 100,
				     200), 0);
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 50);
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_from(&c, got, 200), 0);
	KUNIT_EXPECT_EQ(test, c.pos, 250U);
	KUNIT_EXPECT_EQ(test, memcmp(got, want + 50, 200), 0);
	/* and on from where it stopped */
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_from(&c, got, 50), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, want + 250, 50), 0);

	/* the list ends first: -EINVAL, pos at its end */
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 0);
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_from(&c, got, 301), -EINVAL);
	KUNIT_EXPECT_EQ(test, c.pos, 300U);

	/* from an skb */
	skb = alloc_skb(400, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, want + 100, 400 - 100);
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 0);
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_from_skb(&c, skb, 4, 296), 0);
	KUNIT_EXPECT_EQ(test, memcmp(page_address(pages[0]) + 10, want + 104,
				     100), 0);
	KUNIT_EXPECT_EQ(test, memcmp(page_address(pages[1]) + 50, want + 204,
				     196), 0);
	/* past the skb's end: -EFAULT after the first SGE */
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 0);
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_from_skb(&c, skb, 100, 300),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, c.pos, 100U);
	kfree_skb(skb);

	/* keys are checked at use: bytes before a bad SGE are placed */
	sge[2].lkey = ro->mem.key;
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 0);
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_to(&c, want, 300), -EACCES);
	KUNIT_EXPECT_EQ(test, c.pos, 100U);
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 0);
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_from(&c, got, 300), 0);
	sge[2].lkey = srnic_mr_test_next_key(b->mem.key);
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 0);
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_from(&c, got, 300), -EINVAL);
	KUNIT_EXPECT_EQ(test, c.pos, 100U);
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->other_pd, sge, 3, 0);
	KUNIT_EXPECT_EQ(test, srnic_sge_copy_from(&c, got, 10), -EINVAL);
	KUNIT_EXPECT_EQ(test, c.pos, 0U);
	sge[2].lkey = b->mem.key;

	/* zero copy: one fragment per SGE, the bytes of the list */
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 0);
	KUNIT_ASSERT_EQ(test, srnic_sge_copy_to(&c, want, 300), 0);
	skb = alloc_skb(0, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	srnic_sge_cursor_init(&c, ctx->sdev, ctx->pd, sge, 3, 20);
	KUNIT_EXPECT_EQ(test, srnic_sge_add_frags(&c, 250, skb), 0);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, 2);
	KUNIT_EXPECT_EQ(test, skb->len, 250U);
	memset(got, 0, 400);
	KUNIT_EXPECT_EQ(test, skb_copy_bits(skb, 0, got, 250), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got, want + 20, 250), 0);
	kfree_skb(skb);

	srnic_mr_test_dereg(test, ro);
	srnic_mr_test_dereg(test, b);
	srnic_mr_test_dereg(test, a);
}

static struct kunit_case srnic_mr_test_cases[] = {
	KUNIT_CASE(mtt_translates_across_4k_blocks),
	KUNIT_CASE(mtt_translates_2m_blocks),
	KUNIT_CASE(keys_name_one_object_each),
	KUNIT_CASE(fast_reg_installs_mapping_and_key),
	KUNIT_CASE(lookups_check_range),
	KUNIT_CASE(lookups_check_access_and_pd),
	KUNIT_CASE(zero_length_needs_no_key),
	KUNIT_CASE_PARAM(registration_validates_access,
			 srnic_mr_access_gen_params),
	KUNIT_CASE(registration_validates_geometry),
	KUNIT_CASE(mem_lookup_by_key_and_kind),
	KUNIT_CASE(mw_type1_binds_within_mr),
	KUNIT_CASE(mw_type2_follows_iba_rules),
	KUNIT_CASE(add_frags_appends_referenced_pages),
	KUNIT_CASE(copy_from_skb_spans_head_and_frags),
	KUNIT_CASE(atomic_map_checks_alignment),
	KUNIT_CASE(sge_walks_span_mrs),
	{}
};

static struct kunit_suite srnic_mr_test_suite = {
	.name = "srnic_mr",
	.init = srnic_mr_test_init,
	.exit = srnic_mr_test_exit,
	.test_cases = srnic_mr_test_cases,
};

kunit_test_suite(srnic_mr_test_suite);
