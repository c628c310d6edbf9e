// SPDX-License-Identifier: GPL-2.0
/*
 * srnic scatter/gather lists: one walk, four uses (srnic_sge.h).
 */
#include <linux/minmax.h>

#include "srnic.h"

void srnic_sge_cursor_init(struct srnic_sge_cursor *c, struct srnic_dev *sdev,
			   struct ib_pd *pd, const struct ib_sge *sge, u32 num,
			   u32 off)
{
	c->sdev = sdev;
	c->pd = pd;
	c->sge = sge;
	c->num = num;
	c->i = 0;
	c->off = off;
	c->pos = off;
}

/*
 * Walk @len bytes from @c, calling @fn on each piece: the rest of the
 * current SGE, up to what is left, its lkey checked for @access. Always
 * inlined so that @fn is a direct call.
 */
static __always_inline int
srnic_sge_walk(struct srnic_sge_cursor *c, u32 len, int access,
	       int (*fn)(struct srnic_mr *mr, u64 iova, u32 n, void *ctx),
	       void *ctx)
{
	while (len) {
		const struct ib_sge *sge;
		struct srnic_mr *mr;
		u64 iova;
		int err;
		u32 n;

		if (c->i == c->num)
			return -EINVAL;
		sge = &c->sge[c->i];
		if (c->off >= sge->length) {
			c->off -= sge->length;
			c->i++;
			continue;
		}
		n = min(len, sge->length - c->off);
		iova = sge->addr + c->off;
		/* n > 0: an MR or an error, never NULL */
		mr = srnic_mr_get_lkey(c->sdev, c->pd, sge->lkey, iova, n,
				       access);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		err = fn(mr, iova, n, ctx);
		srnic_mr_put(mr);
		if (err)
			return err;
		c->off += n;
		c->pos += n;
		len -= n;
	}
	return 0;
}

static int srnic_sge_piece_from(struct srnic_mr *mr, u64 iova, u32 n,
				void *ctx)
{
	void **dst = ctx;
	int err;

	err = srnic_mr_copy_from(mr, iova, *dst, n);
	*dst += n;
	return err;
}

int srnic_sge_copy_from(struct srnic_sge_cursor *c, void *dst, u32 len)
{
	return srnic_sge_walk(c, len, 0, srnic_sge_piece_from, &dst);
}

static int srnic_sge_piece_to(struct srnic_mr *mr, u64 iova, u32 n,
			      void *ctx)
{
	const void **src = ctx;
	int err;

	err = srnic_mr_copy_to(mr, iova, *src, n);
	*src += n;
	return err;
}

int srnic_sge_copy_to(struct srnic_sge_cursor *c, const void *src, u32 len)
{
	return srnic_sge_walk(c, len, IB_ACCESS_LOCAL_WRITE,
			      srnic_sge_piece_to, &src);
}

struct srnic_sge_skb_pos {
	const struct sk_buff	*skb;
	int			off;
};

static int srnic_sge_piece_from_skb(struct srnic_mr *mr, u64 iova, u32 n,
				    void *ctx)
{
	struct srnic_sge_skb_pos *pos = ctx;
	int err;

	err = srnic_mr_copy_from_skb(mr, iova, pos->skb, pos->off, n);
	pos->off += n;
	return err;
}

int srnic_sge_copy_from_skb(struct srnic_sge_cursor *c,
			    const struct sk_buff *skb, int skb_off, u32 len)
{
	struct srnic_sge_skb_pos pos = { .skb = skb, .off = skb_off };

	return srnic_sge_walk(c, len, IB_ACCESS_LOCAL_WRITE,
			      srnic_sge_piece_from_skb, &pos);
}

static int srnic_sge_piece_frags(struct srnic_mr *mr, u64 iova, u32 n,
				 void *ctx)
{
	return srnic_mr_add_frags(mr, iova, n, ctx);
}

int srnic_sge_add_frags(struct srnic_sge_cursor *c, u32 len,
			struct sk_buff *skb)
{
	return srnic_sge_walk(c, len, 0, srnic_sge_piece_frags, skb);
}

static int srnic_sge_piece_ready(struct srnic_mr *mr, u64 iova, u32 n,
				 void *ctx)
{
	return mr->type == SRNIC_MR_ODP ? srnic_odp_ready(mr, iova, n) : 0;
}

int srnic_sge_ready(struct srnic_sge_cursor *c, u32 len, int access)
{
	return srnic_sge_walk(c, len, access, srnic_sge_piece_ready, NULL);
}

int srnic_sge_fault(struct srnic_sge_cursor *c, int access)
{
	const struct ib_sge *sge;
	struct srnic_mr *mr;
	u64 iova;
	int err;
	u32 n;

	might_sleep();
	if (c->i == c->num || c->off >= c->sge[c->i].length)
		return 0;
	sge = &c->sge[c->i];
	iova = sge->addr + c->off;
	n = min_t(u32, sge->length - c->off, SRNIC_ODP_READY_MAX);
	mr = srnic_mr_get_lkey(c->sdev, c->pd, sge->lkey, iova, n, access);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	err = mr->type == SRNIC_MR_ODP ? srnic_odp_fault(mr, iova, n) : 0;
	srnic_mr_put(mr);
	return err;
}
