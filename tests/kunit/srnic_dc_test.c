// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "srnic_dc": a DC target's attachments (kernel/srnic_dct.c,
 * docs/dc.md), through the real receive path, under KASAN and lockdep.
 *
 * Each case builds a real srnic device in native mode on a test Ethernet
 * netdev (srnic_kunit_wire.c, shared with srnic_dp_test.c), a PD, a DMA
 * MR, a CQ, an SRQ and a DCT. The test plays the initiators: it forges
 * each DC request (IPv4, UDP 4791, BTH, DCETH with the key, ATTACH and
 * horizon, DCI number and generation, RETH or AtomicETH, ICRC) and hands
 * it to srnic_udp_encap_recv() with bottom halves off, as a NIC's receive
 * would.
 * Everything the DCT answers leaves through srnic_xmit() and the IP stack
 * to the netdev, which keeps it for the case to read: opcode, DestQP, PSN,
 * the DCRETH's DCT and generation, the AETH's syndrome, an atomic ACK's
 * original value. The attachments, their RC responders, the idle scan and
 * the reap work are the driver's, unchanged.
 *
 * A DC QP can only be made from user space (its driver data says DCI or
 * DCT), and a kernel thread has no user memory to pass it in: the case
 * makes a kernel RC QP on the SRQ and turns it into a DCT as
 * srnic_create_qp() would (srnic_dct_create(), type IB_QPT_DRIVER) before
 * its first modify; it is then destroyed by ib_destroy_qp() as a DCT
 * (srnic_dct_destroy() frees what attachments are left).
 *
 * The initiator's side is covered by its decisions: a kernel RC QP made
 * a DCI the same way, srnic_dci_prepare() called as the requester calls
 * it, and forged DC responses through the receive path to
 * srnic_dci_rcv(). Not covered: a DCI sending real WRs (they come from
 * the native ABI's user send ring only), so no end-to-end exchange,
 * retransmission or re-attach with data (the VM tests'); IPv6
 * initiators; SENDs into the SRQ.
 *
 * Linked into srnic.o when CONFIG_RDMA_SRNIC_KUNIT_TEST=y; run it with
 * tests/kunit/run.sh 'srnic_dc'.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/ip.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

/* The device, the wire and the packet helpers: shared with srnic_dp. */
#include "srnic_kunit_wire.h"

#define SRNIC_DC_DEV_NAME	"srnic_dc0"
#define SRNIC_DC_IP_LOCAL	0x0a4e0001	/* 10.78.0.1: the DCT's */
#define SRNIC_DC_IP_INI		0x0a4e0002	/* the initiators' */
#define SRNIC_DC_BUF		4096
#define SRNIC_DC_KEY		0x0123456789abcdefULL
/* ATTACH horizons (log2 ms): 1 ms, 512 ms, 4 s */
#define SRNIC_DC_H_SHORT	0
#define SRNIC_DC_H_MID		9
#define SRNIC_DC_H_LONG		12
#define SRNIC_DC_SYN_NO_ATT	srnic_aeth_syn_nak(SRNIC_NAK_DC_NO_ATTACH)
#define SRNIC_DC_OP(op)		(SRNIC_OPCODE_DC | IB_OPCODE_##op)

/**
 * struct srnic_dc_ctx - one case's device and DCT
 * @kd: the device and its wire, which holds what srnic sends (linear,
 *	orphaned) for the case to take
 * @cq: the DCT's (and a DCI's) CQ
 * @srq: the DCT's SRQ
 * @dct: the DCT
 * @dci: a DCI, for the cases that make one
 * @buf: the target of WRITEs and atomics, in @kd.mr
 */
struct srnic_dc_ctx {
	struct srnic_kw_dev	kd;
	struct ib_cq		*cq;
	struct ib_srq		*srq;
	struct ib_qp		*dct;
	struct ib_qp		*dci;
	u8			*buf;
};

/* What one forged request carries. */
struct srnic_dc_req {
	u8	op;		/* SRNIC_DC_OP(...) */
	u32	dct;		/* BTH DestQP */
	u64	key;
	u8	flags;		/* DCETH: ATTACH | horizon */
	u32	dci;
	u32	gen;
	u32	psn;
	u32	off;		/* RETH/AtomicETH: this offset of @buf */
	u64	add;		/* FETCH_ADD: the addend */
	u32	len;		/* WRITE: payload length (bytes of 0xa5) */
	u8	syn;		/* a response's AETH syndrome */
};

/* ------------------------------------------------------------- the wire */

/* @r's BTH and the headers after it; the payload is bytes of 0xa5. */
static void srnic_dc_fill(const struct srnic_dc_ctx *ctx,
			  const struct srnic_dc_req *r, struct srnic_bth *bth,
			  unsigned int pad)
{
	void *p = bth + 1;

	if (srnic_opcode_info(r->op)->flags & SRNIC_OPF_DCRETH) {
		/* a DCT's answer, to the DCI */
		srnic_bth_init(bth, r->op, false, false, 0, SRNIC_DEFAULT_PKEY,
			       r->dci, false, r->psn);
		srnic_dcreth_set(p, r->dct, r->gen);
		srnic_aeth_set(p + SRNIC_DCRETH_LEN, r->syn, 0);
		return;
	}
	srnic_bth_init(bth, r->op, false, false, pad, SRNIC_DEFAULT_PKEY,
		       r->dct, r->op != SRNIC_OPCODE_DC_DETACH, r->psn);
	srnic_dceth_set(p, r->key, r->flags, r->dci, r->gen);
	p += SRNIC_DCETH_LEN;
	if (r->op == SRNIC_DC_OP(RDMA_WRITE_ONLY))
		srnic_reth_set(p, (uintptr_t)(ctx->buf + r->off),
			       ctx->kd.mr->rkey, r->len);
	else if (r->op == SRNIC_DC_OP(FETCH_ADD))
		srnic_atmeth_set(p, (uintptr_t)(ctx->buf + r->off),
				 ctx->kd.mr->rkey, r->add, 0);
	memset((u8 *)bth + srnic_opcode_hdr_len(r->op), 0xa5, r->len);
}

/* Build @r as it would arrive: data at the IP header, ICRC computed. */
static struct sk_buff *srnic_dc_build(const struct srnic_dc_ctx *ctx,
				      const struct srnic_dc_req *r)
{
	unsigned int hlen = srnic_opcode_hdr_len(r->op), pad, len;
	struct sk_buff *skb;
	struct iphdr *iph;
	struct udphdr *uh;

	pad = srnic_pad_count(r->len);
	len = sizeof(*iph) + sizeof(*uh) + hlen + r->len + pad + SRNIC_ICRC_LEN;
	skb = alloc_skb(len + 64, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, 64);
	iph = skb_put_zero(skb, len);
	iph->version = 4;
	iph->ihl = 5;
	iph->tot_len = htons(len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = htonl(SRNIC_DC_IP_INI);
	iph->daddr = htonl(SRNIC_DC_IP_LOCAL);
	ip_send_check(iph);
	uh = (struct udphdr *)(iph + 1);
	uh->source = htons(0xc123);
	uh->dest = htons(SRNIC_ROCE_V2_PORT);
	uh->len = htons(len - sizeof(*iph));
	srnic_dc_fill(ctx, r, (struct srnic_bth *)(uh + 1), pad);
	srnic_kw_icrc(skb);
	return skb;
}

/* Forge @r and hand it to srnic, in softirq context as a NIC would. */
static void srnic_dc_send(struct kunit *test, struct srnic_dc_ctx *ctx,
			  const struct srnic_dc_req *r)
{
	struct sk_buff *skb = srnic_dc_build(ctx, r);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	local_bh_disable();
	rcu_read_lock();
	srnic_kw_deliver(ctx->kd.wire, skb);
	rcu_read_unlock();
	local_bh_enable();
}

/* The next packet srnic sent (data at its IP header), or NULL. */
static struct sk_buff *srnic_dc_take(struct srnic_dc_ctx *ctx)
{
	srnic_kw_wait_held(ctx->kd.wire, 1);
	return skb_dequeue(&ctx->kd.wire->held);
}

/* srnic sends nothing (more) within 100 ms. */
static void srnic_dc_expect_quiet(struct kunit *test, struct srnic_dc_ctx *ctx)
{
	msleep(100);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&ctx->kd.wire->held), 0U);
	skb_queue_purge(&ctx->kd.wire->held);
}

/*
 * The DCT's answer to @r: @op at @r's PSN to its DCI, from the DCT to
 * @r's generation; returns the AETH syndrome (0 for none) and, in *@orig,
 * an atomic ACK's original value.
 */
static u8 srnic_dc_answer(struct kunit *test, struct srnic_dc_ctx *ctx,
			  const struct srnic_dc_req *r, u8 op, u64 *orig)
{
	struct sk_buff *skb = srnic_dc_take(ctx);
	const struct srnic_dcreth *dcr;
	const struct srnic_bth *bth;
	const void *p;
	u8 syn = 0;

	KUNIT_ASSERT_NOT_NULL_MSG(test, skb, "no answer to PSN %#x", r->psn);
	bth = srnic_kw_bth(skb);
	KUNIT_EXPECT_EQ(test, srnic_bth_opcode(bth), op);
	KUNIT_EXPECT_EQ(test, srnic_bth_qpn(bth), r->dci);
	KUNIT_EXPECT_EQ(test, srnic_bth_psn(bth), r->psn);
	dcr = (const void *)(bth + 1);
	KUNIT_EXPECT_EQ(test, srnic_dcreth_dctn(dcr), r->dct);
	KUNIT_EXPECT_EQ(test, srnic_dcreth_gen(dcr), r->gen);
	p = (const u8 *)dcr + SRNIC_DCRETH_LEN;
	if (srnic_opcode_info(op)->flags & SRNIC_OPF_AETH) {
		syn = srnic_aeth_syndrome(p);
		p += SRNIC_AETH_LEN;
	}
	if (orig && op == SRNIC_DC_OP(ATOMIC_ACKNOWLEDGE))
		*orig = srnic_atmack_orig(p);
	kfree_skb(skb);
	return syn;
}

/* @r answered with a positive ACK (a WRITE) or an atomic ACK (FETCH_ADD). */
static u64 srnic_dc_expect_ok(struct kunit *test, struct srnic_dc_ctx *ctx,
			      const struct srnic_dc_req *r)
{
	u64 orig = ~0ULL;
	u8 op = r->op == SRNIC_DC_OP(FETCH_ADD) ?
		SRNIC_DC_OP(ATOMIC_ACKNOWLEDGE) : SRNIC_DC_OP(ACKNOWLEDGE);
	u8 syn = srnic_dc_answer(test, ctx, r, op, &orig);

	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_type(syn), SRNIC_AETH_ACK);
	return orig;
}

/* @r answered with an ACKNOWLEDGE whose syndrome is @syn. */
static void srnic_dc_expect_nak(struct kunit *test, struct srnic_dc_ctx *ctx,
				const struct srnic_dc_req *r, u8 syn)
{
	KUNIT_EXPECT_EQ(test, srnic_dc_answer(test, ctx, r,
					      SRNIC_DC_OP(ACKNOWLEDGE), NULL),
			syn);
}

/* ------------------------------------------------------------- fixture */

static u64 srnic_dc_cnt(struct srnic_dc_ctx *ctx, enum srnic_counter c)
{
	return srnic_kw_cnt(&ctx->kd, c);
}

static u32 srnic_dc_count(struct srnic_dc_ctx *ctx)
{
	return srnic_dct_attachments(to_srnic_qp(ctx->dct));
}

static u64 srnic_dc_slot(struct srnic_dc_ctx *ctx, u32 off)
{
	return READ_ONCE(*(u64 *)(ctx->buf + off));
}

/*
 * The DCT: a kernel RC QP on the SRQ made a DCT as srnic_create_qp() does
 * for a user's (see the top of the file), taken to RTR with a DC QP's
 * modify. @max_attach and @idle_ms are the device's knobs it starts with.
 */
static int srnic_dc_make_dct(struct srnic_dc_ctx *ctx, u32 max_attach,
			     u32 idle_ms)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.send_cq = ctx->cq,
		.recv_cq = ctx->cq,
		.srq = ctx->srq,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
	};
	struct ib_qp_attr attr = {};
	struct srnic_qp *qp;
	int err;

	WRITE_ONCE(ctx->kd.sdev->dc_max_attach, max_attach);
	WRITE_ONCE(ctx->kd.sdev->dc_idle_ms, idle_ms);
	ctx->dct = ib_create_qp(ctx->kd.pd, &init);
	if (IS_ERR(ctx->dct)) {
		err = PTR_ERR(ctx->dct);
		ctx->dct = NULL;
		return err;
	}
	qp = to_srnic_qp(ctx->dct);
	err = srnic_dct_create(qp, SRNIC_DC_KEY);
	if (err)
		return err;
	ctx->dct->qp_type = IB_QPT_DRIVER;	/* qp->ibqp */

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = SRNIC_PORT_NUM;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			       IB_ACCESS_REMOTE_ATOMIC;
	err = ib_modify_qp(ctx->dct, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.min_rnr_timer = 1;
	return ib_modify_qp(ctx->dct, &attr, IB_QP_STATE | IB_QP_PATH_MTU |
			    IB_QP_MIN_RNR_TIMER);
}

static int srnic_dc_make_verbs(struct srnic_dc_ctx *ctx)
{
	struct ib_srq_init_attr sattr = {
		.attr = { .max_wr = 8, .max_sge = 1 },
	};

	ctx->cq = ib_alloc_cq(ctx->kd.ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(ctx->cq))
		return PTR_ERR(xchg(&ctx->cq, NULL));
	ctx->srq = ib_create_srq(ctx->kd.pd, &sattr);
	if (IS_ERR(ctx->srq))
		return PTR_ERR(xchg(&ctx->srq, NULL));
	return 0;
}

static int srnic_dc_init(struct kunit *test)
{
	struct srnic_dc_ctx *ctx;
	struct srnic_kw_wire *w;
	int i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->buf = kunit_kzalloc(test, SRNIC_DC_BUF, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->buf);
	srnic_kw_dev_add(test, &ctx->kd, "srnicdc%d", SRNIC_DC_DEV_NAME,
			 SRNIC_DC_IP_LOCAL, SRNIC_MODE_NATIVE);
	/* the initiators' side: keep every answer, sent, for the case */
	w = ctx->kd.wire;
	w->orphan = true;
	w->linear = true;
	WRITE_ONCE(w->hold, true);
	KUNIT_ASSERT_EQ(test, srnic_dc_make_verbs(ctx), 0);
	/* every 8-byte slot starts at 100 + its index */
	for (i = 0; i < SRNIC_DC_BUF / 8; i++)
		((u64 *)ctx->buf)[i] = 100 + i;
	srnic_kw_cnt_zero(&ctx->kd);
	return 0;
}

static void srnic_dc_exit(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;

	if (!ctx || !ctx->kd.ndev)
		return;
	srnic_kw_stop(ctx->kd.wire);
	if (ctx->dci)
		ib_destroy_qp(ctx->dci);
	if (ctx->dct)
		ib_destroy_qp(ctx->dct);
	if (ctx->srq)
		ib_destroy_srq(ctx->srq);
	if (ctx->cq)
		ib_free_cq(ctx->cq);
	srnic_kw_dev_del(&ctx->kd);
}

/* A request of DCI @dci, generation @gen, to the case's DCT. */
static struct srnic_dc_req srnic_dc_req(struct srnic_dc_ctx *ctx, u8 op,
					u32 dci, u32 gen, u32 psn, u8 flags)
{
	struct srnic_dc_req r = {
		.op = op,
		.dct = ctx->dct->qp_num,
		.key = SRNIC_DC_KEY,
		.flags = flags,
		.dci = dci,
		.gen = gen,
		.psn = psn,
		.add = 1,
	};

	if (op == SRNIC_DC_OP(RDMA_WRITE_ONLY))
		r.len = 64;
	return r;
}

#define SRNIC_DC_ATTACH(h)	(SRNIC_DCETH_ATTACH | (h))

/* -------------------------------------------------------------- cases */

/*
 * A new initiator's ATTACH makes an attachment and is executed; its next
 * request, without ATTACH, goes to the same attachment; another DCI of the
 * same address gets an attachment of its own.
 */
static void srnic_dc_attach_reuse(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;
	struct srnic_dc_req r;
	int i;

	KUNIT_ASSERT_EQ(test, srnic_dc_make_dct(ctx, 4, 10000), 0);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 0U);
	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x101, 7, 0x100,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_LONG));
	r.add = 5;
	srnic_dc_send(test, ctx, &r);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &r), 100ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 105ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 1U);

	/* the next two, without ATTACH: the same attachment, in sequence */
	r = srnic_dc_req(ctx, SRNIC_DC_OP(RDMA_WRITE_ONLY), 0x101, 7, 0x101, 0);
	r.off = 1024;
	srnic_dc_send(test, ctx, &r);
	srnic_dc_expect_ok(test, ctx, &r);
	for (i = 0; i < 64; i++)
		KUNIT_EXPECT_EQ(test, ctx->buf[1024 + i], 0xa5);
	KUNIT_EXPECT_NE(test, ctx->buf[1024 + 64], 0xa5);
	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x101, 7, 0x102, 0);
	srnic_dc_send(test, ctx, &r);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &r), 105ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 106ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 1U);

	/* another DCI, same address and generation: its own attachment */
	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x102, 7, 0x900,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_LONG));
	srnic_dc_send(test, ctx, &r);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &r), 106ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 2ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 2U);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DUP_REQUEST), 0ULL);
	srnic_dc_expect_quiet(test, ctx);
}

/*
 * A wrong access key: an ATTACH is NAKed (remote access error), one
 * without ATTACH dropped; both counted, no attachment made, nothing
 * executed, an existing attachment untouched. A DCT number nobody has:
 * counted, no answer.
 */
static void srnic_dc_keys(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;
	struct srnic_dc_req r;

	KUNIT_ASSERT_EQ(test, srnic_dc_make_dct(ctx, 4, 10000), 0);
	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x201, 1, 0x10,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_LONG));
	r.key = SRNIC_DC_KEY ^ 1;
	srnic_dc_send(test, ctx, &r);
	srnic_dc_expect_nak(test, ctx, &r,
			    srnic_aeth_syn_nak(SRNIC_NAK_REM_ACCESS_ERR));
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_KEY_VIOLATIONS),
			1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 0ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 0U);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 100ULL);

	/* the right key: served */
	r.key = SRNIC_DC_KEY;
	srnic_dc_send(test, ctx, &r);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &r), 100ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 1U);

	/* a wrong key on the attachment's next PSN: dropped, not answered */
	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x201, 1, 0x11, 0);
	r.key = 0;
	srnic_dc_send(test, ctx, &r);
	srnic_dc_expect_quiet(test, ctx);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_KEY_VIOLATIONS),
			2ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 101ULL);
	/* ... and the attachment still expects that PSN */
	r.key = SRNIC_DC_KEY;
	srnic_dc_send(test, ctx, &r);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &r), 101ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 102ULL);

	/* a DCT number nobody has */
	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x202, 1, 0x10,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_LONG));
	r.dct = ctx->dct->qp_num + 100;
	srnic_dc_send(test, ctx, &r);
	srnic_dc_expect_quiet(test, ctx);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_UNKNOWN_DCT), 1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 1U);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 102ULL);
}

/*
 * dc_max_attach 1, the one attachment not quiescent (idle less than its
 * horizon): a second initiator's ATTACH gets an RNR NAK and is not
 * executed; the first is served on.
 */
static void srnic_dc_full_rnr(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;
	struct srnic_dc_req a, b;

	KUNIT_ASSERT_EQ(test, srnic_dc_make_dct(ctx, 1, 10000), 0);
	a = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x301, 3, 0x40,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_LONG));
	srnic_dc_send(test, ctx, &a);
	srnic_dc_expect_ok(test, ctx, &a);
	msleep(50);
	b = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x302, 3, 0x80,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_SHORT));
	b.off = 8;
	srnic_dc_send(test, ctx, &b);
	srnic_dc_expect_nak(test, ctx, &b, srnic_aeth_syn_rnr(1));
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH_RNR), 1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_LRU_EVICTIONS),
			0ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 1U);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 8), 101ULL);

	a = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x301, 3, 0x41, 0);
	srnic_dc_send(test, ctx, &a);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &a), 101ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 102ULL);
	srnic_dc_expect_quiet(test, ctx);
}

/*
 * dc_max_attach 2, both quiescent: a third initiator's ATTACH evicts the
 * least recently used one (not the one attached first: its initiator sent
 * since). The evicted initiator's next request, without ATTACH, gets the
 * NAK NO ATTACHMENT and is not executed; the other is served on.
 */
static void srnic_dc_lru(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;
	struct srnic_dc_req a, b, c;

	KUNIT_ASSERT_EQ(test, srnic_dc_make_dct(ctx, 2, 10000), 0);
	a = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x401, 9, 0x10,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_SHORT));
	srnic_dc_send(test, ctx, &a);
	srnic_dc_expect_ok(test, ctx, &a);
	msleep(30);
	b = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x402, 9, 0x20,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_SHORT));
	b.off = 8;
	srnic_dc_send(test, ctx, &b);
	srnic_dc_expect_ok(test, ctx, &b);
	msleep(30);
	a = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x401, 9, 0x11, 0);
	srnic_dc_send(test, ctx, &a);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &a), 101ULL);
	msleep(50);	/* both idle past their 1 ms horizon */

	c = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x403, 9, 0x30,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_SHORT));
	c.off = 16;
	srnic_dc_send(test, ctx, &c);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &c), 102ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_LRU_EVICTIONS),
			1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH_RNR), 0ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 3ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 2U);

	/* B was the victim: NO ATTACHMENT, not executed */
	b = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x402, 9, 0x21, 0);
	b.off = 8;
	srnic_dc_send(test, ctx, &b);
	srnic_dc_expect_nak(test, ctx, &b, SRNIC_DC_SYN_NO_ATT);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_NO_ATTACH_NAKS),
			1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 8), 102ULL);
	/* A was not */
	a = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x401, 9, 0x12, 0);
	srnic_dc_send(test, ctx, &a);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &a), 102ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 103ULL);
	srnic_dc_expect_quiet(test, ctx);
}

/* Wait until counter @c moved by @n; returns what it moved by. */
static u64 srnic_dc_wait_cnt(struct srnic_dc_ctx *ctx, enum srnic_counter c,
			     u64 n)
{
	return srnic_kw_wait_cnt(&ctx->kd, c, n);
}

/*
 * dc_idle_ms 40: the idle scan frees an attachment idle that long (and
 * past its 1 ms horizon), but not one whose initiator's horizon (4 s) is
 * not over. The freed one's initiator, still sending without ATTACH, gets
 * the NAK NO ATTACHMENT; its WRITE is not executed.
 */
static void srnic_dc_idle(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;
	struct srnic_dc_req a, b;

	KUNIT_ASSERT_EQ(test, srnic_dc_make_dct(ctx, 4, 40), 0);
	b = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x502, 4, 0x70,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_LONG));
	b.off = 8;
	srnic_dc_send(test, ctx, &b);
	srnic_dc_expect_ok(test, ctx, &b);
	a = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x501, 4, 0x50,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_SHORT));
	srnic_dc_send(test, ctx, &a);
	srnic_dc_expect_ok(test, ctx, &a);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 2U);

	KUNIT_EXPECT_EQ(test, srnic_dc_wait_cnt(ctx,
						SRNIC_CNT_DC_IDLE_EVICTIONS, 1),
			1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 1U);

	a = srnic_dc_req(ctx, SRNIC_DC_OP(RDMA_WRITE_ONLY), 0x501, 4, 0x51, 0);
	a.off = 2048;
	srnic_dc_send(test, ctx, &a);
	srnic_dc_expect_nak(test, ctx, &a, SRNIC_DC_SYN_NO_ATT);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_NO_ATTACH_NAKS),
			1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 2048), 100ULL + 2048 / 8);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 2ULL);

	/* B, within its horizon, is still there and served */
	b = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x502, 4, 0x71, 0);
	b.off = 8;
	srnic_dc_send(test, ctx, &b);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &b), 102ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_IDLE_EVICTIONS),
			1ULL);
	srnic_dc_expect_quiet(test, ctx);
}

/*
 * DETACH: one at a PSN the attachment has not reached leaves it attached;
 * one at its expected PSN detaches it (dc_detach), but it stays: a late
 * copy of its first packet (ATTACH, the same generation) is answered as a
 * duplicate from the replay table, the FETCH_ADD not run again. The idle
 * scan frees it once quiet for its horizon (512 ms), not as an idle
 * eviction. Every DETACH is answered with a DETACH ACK.
 */
static void srnic_dc_detach(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;
	struct srnic_dc_req a, d;
	int ms;

	KUNIT_ASSERT_EQ(test, srnic_dc_make_dct(ctx, 4, 40), 0);
	a = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x601, 11, 0xfffffe,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_MID));
	a.add = 1000;
	srnic_dc_send(test, ctx, &a);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &a), 100ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 1100ULL);

	/* not at the expected PSN (0xffffff): not detached */
	d = srnic_dc_req(ctx, SRNIC_OPCODE_DC_DETACH, 0x601, 11, 1, 0);
	srnic_dc_send(test, ctx, &d);
	srnic_dc_answer(test, ctx, &d, SRNIC_OPCODE_DC_DETACH_ACK, NULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_DETACH), 0ULL);
	d.psn = 0xffffff;
	srnic_dc_send(test, ctx, &d);
	srnic_dc_answer(test, ctx, &d, SRNIC_OPCODE_DC_DETACH_ACK, NULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_DETACH), 1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 1U);

	/* the late copy of the ATTACH FETCH_ADD: a duplicate, not run */
	srnic_dc_send(test, ctx, &a);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &a), 100ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 1100ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DUP_REQUEST), 1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 1ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 1U);

	/* freed once quiescent, by the scan, as a detach */
	for (ms = 0; ms < SRNIC_KW_WAIT_MS && srnic_dc_count(ctx); ms += 5)
		usleep_range(5000, 6000);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 0U);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_IDLE_EVICTIONS),
			0ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_DETACH), 1ULL);
	srnic_dc_expect_quiet(test, ctx);
}

/*
 * Generations: with generation 21 attached, generation 20's ATTACH is
 * dropped unexecuted, its request without ATTACH NAKed NO ATTACHMENT;
 * generation 22's ATTACH replaces the attachment, after which generation
 * 21's next request is NAKed NO ATTACHMENT, not executed.
 */
static void srnic_dc_generation(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;
	struct srnic_dc_req r;

	KUNIT_ASSERT_EQ(test, srnic_dc_make_dct(ctx, 4, 10000), 0);
	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x701, 21, 0x500,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_LONG));
	srnic_dc_send(test, ctx, &r);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &r), 100ULL);

	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x701, 20, 0x300,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_LONG));
	srnic_dc_send(test, ctx, &r);
	srnic_dc_expect_quiet(test, ctx);
	r.flags = 0;
	r.psn = 0x301;
	srnic_dc_send(test, ctx, &r);
	srnic_dc_expect_nak(test, ctx, &r, SRNIC_DC_SYN_NO_ATT);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 101ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 1ULL);

	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x701, 22, 0x800,
			 SRNIC_DC_ATTACH(SRNIC_DC_H_LONG));
	srnic_dc_send(test, ctx, &r);
	KUNIT_EXPECT_EQ(test, srnic_dc_expect_ok(test, ctx, &r), 101ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH), 2ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_count(ctx), 1U);

	r = srnic_dc_req(ctx, SRNIC_DC_OP(FETCH_ADD), 0x701, 21, 0x501, 0);
	srnic_dc_send(test, ctx, &r);
	srnic_dc_expect_nak(test, ctx, &r, SRNIC_DC_SYN_NO_ATT);
	KUNIT_EXPECT_EQ(test, srnic_dc_slot(ctx, 0), 102ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_NO_ATTACH_NAKS),
			2ULL);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_LRU_EVICTIONS) +
			srnic_dc_cnt(ctx, SRNIC_CNT_DC_IDLE_EVICTIONS), 0ULL);
	srnic_dc_expect_quiet(test, ctx);
}

/* ------------------------------------------------------ the initiator */

/*
 * A DCI: a kernel RC QP made one as srnic_create_qp() does for a user's
 * (see the top of the file; its generation starts at @gen instead of a
 * random one), taken to RTS with a DC QP's modify. No retransmit timer.
 */
static int srnic_dc_make_dci(struct srnic_dc_ctx *ctx, u32 gen)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.send_cq = ctx->cq,
		.recv_cq = ctx->cq,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 4, .max_send_sge = 1,
			 .max_recv_wr = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr attr = {};
	struct srnic_qp *qp;
	int err;

	ctx->dci = ib_create_qp(ctx->kd.pd, &init);
	if (IS_ERR(ctx->dci)) {
		err = PTR_ERR(ctx->dci);
		ctx->dci = NULL;
		return err;
	}
	qp = to_srnic_qp(ctx->dci);
	qp->dc = SRNIC_DC_DCI;
	qp->dci.gen = gen;
	ctx->dci->qp_type = IB_QPT_DRIVER;	/* qp->ibqp */

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = SRNIC_PORT_NUM;
	err = ib_modify_qp(ctx->dci, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	err = ib_modify_qp(ctx->dci, &attr, IB_QP_STATE | IB_QP_PATH_MTU);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 0;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	return ib_modify_qp(ctx->dci, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY);
}

/* A send WQE to DCT @dctn at the initiators' address, as posted. */
static void srnic_dc_wqe(struct srnic_dc_ctx *ctx, struct srnic_send_wqe *wqe,
			 u32 dctn)
{
	memset(wqe, 0, sizeof(*wqe));
	wqe->opcode = IB_WR_RDMA_WRITE;
	wqe->state = SRNIC_WQE_POSTED;
	wqe->remote_qpn = dctn;
	wqe->dc_key = SRNIC_DC_KEY;
	wqe->av.family = AF_INET;
	wqe->av.ifindex = ctx->kd.ndev->ifindex;
	wqe->av.hop_limit = 64;
	ipv6_addr_set_v4mapped(htonl(SRNIC_DC_IP_LOCAL), &wqe->av.saddr);
	ipv6_addr_set_v4mapped(htonl(SRNIC_DC_IP_INI), &wqe->av.daddr);
}

/* srnic_dci_prepare() under the requester's lock, as the requester calls it. */
static int srnic_dc_prepare(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
			    bool idle, struct sk_buff **detach)
{
	struct srnic_av av;
	int ret;

	*detach = NULL;
	spin_lock_bh(&qp->req_lock);
	ret = srnic_dci_prepare(qp, wqe, idle, detach, &av);
	spin_unlock_bh(&qp->req_lock);
	return ret;
}

/* @skb (data at the BTH) is a DETACH from @dci's generation @gen. */
static void srnic_dc_expect_detach(struct kunit *test, struct sk_buff *skb,
				   u32 dctn, u32 psn, u32 dci, u32 gen)
{
	const struct srnic_bth *bth = (const void *)skb->data;
	const struct srnic_dceth *d = (const void *)(bth + 1);

	KUNIT_EXPECT_EQ(test, srnic_bth_opcode(bth), SRNIC_OPCODE_DC_DETACH);
	KUNIT_EXPECT_EQ(test, srnic_bth_qpn(bth), dctn);
	KUNIT_EXPECT_EQ(test, srnic_bth_psn(bth), psn);
	KUNIT_EXPECT_EQ(test, srnic_dceth_key(d), SRNIC_DC_KEY);
	KUNIT_EXPECT_EQ(test, srnic_dceth_flags(d), 0);
	KUNIT_EXPECT_EQ(test, srnic_dceth_dci(d), dci);
	KUNIT_EXPECT_EQ(test, srnic_dceth_gen(d), gen);
}

/*
 * The DCI's state machine (srnic_dci_prepare()): a first WQE attaches (a
 * new generation, ATTACH and the horizon on its first packet only, which
 * goes alone); a WQE to the same target reuses the attachment
 * (dc_attach_reused, once per WQE); one to another target waits for the
 * drain, then makes a DETACH at the next PSN with the old generation,
 * then attaches anew.
 */
static void srnic_dc_dci_prepare(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;
	struct srnic_send_wqe *w = kunit_kcalloc(test, 3, sizeof(*w),
						 GFP_KERNEL);
	unsigned long t = msecs_to_jiffies(100);
	struct srnic_qp *qp;
	struct sk_buff *det;
	u32 psn;

	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_EQ(test, srnic_dc_make_dci(ctx, 0xffffffff), 0);
	qp = to_srnic_qp(ctx->dci);
	srnic_dc_wqe(ctx, &w[0], 0x3001);
	KUNIT_EXPECT_EQ(test, srnic_dc_prepare(qp, &w[0], true, &det), 1);
	KUNIT_EXPECT_TRUE(test, qp->dci.attached);
	KUNIT_EXPECT_FALSE(test, qp->dci.confirmed);
	KUNIT_EXPECT_EQ(test, qp->dci.gen, 0U);		/* wrapped */
	KUNIT_EXPECT_EQ(test, qp->dci.dctn, 0x3001U);
	psn = qp->dci.attach_psn;
	KUNIT_EXPECT_EQ(test, qp->req.psn, psn);
	spin_lock_bh(&qp->req_lock);
	/* 100 ms x (7 + 1) retries: 800 ms, 2^10 */
	KUNIT_EXPECT_EQ(test, srnic_dci_flags(qp, psn, t),
			SRNIC_DCETH_ATTACH | 10);
	KUNIT_EXPECT_EQ(test, srnic_dci_flags(qp, srnic_psn_add(psn, 1), t), 0);
	KUNIT_EXPECT_TRUE(test, srnic_dci_window_open(qp));
	qp->req.psn = srnic_psn_add(psn, 1);	/* the ATTACH packet went */
	KUNIT_EXPECT_FALSE(test, srnic_dci_window_open(qp));
	spin_unlock_bh(&qp->req_lock);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH_REUSED),
			0ULL);

	srnic_dc_wqe(ctx, &w[1], 0x3001);
	KUNIT_EXPECT_EQ(test, srnic_dc_prepare(qp, &w[1], false, &det), 1);
	KUNIT_EXPECT_EQ(test, srnic_dc_prepare(qp, &w[1], false, &det), 1);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH_REUSED),
			1ULL);

	srnic_dc_wqe(ctx, &w[2], 0x3002);
	KUNIT_EXPECT_EQ(test, srnic_dc_prepare(qp, &w[2], false, &det), 0);
	KUNIT_EXPECT_TRUE(test, qp->dci.attached);
	KUNIT_EXPECT_EQ(test, srnic_dc_prepare(qp, &w[2], true, &det), 2);
	KUNIT_ASSERT_NOT_NULL(test, det);
	KUNIT_EXPECT_FALSE(test, qp->dci.attached);
	srnic_dc_expect_detach(test, det, 0x3001, srnic_psn_add(psn, 1),
			       ctx->dci->qp_num, 0);
	kfree_skb(det);
	KUNIT_EXPECT_EQ(test, srnic_dc_prepare(qp, &w[2], true, &det), 1);
	KUNIT_EXPECT_NULL(test, det);
	KUNIT_EXPECT_TRUE(test, qp->dci.attached);
	KUNIT_EXPECT_EQ(test, qp->dci.gen, 1U);
	KUNIT_EXPECT_EQ(test, qp->dci.dctn, 0x3002U);
	KUNIT_EXPECT_FALSE(test, qp->dci.confirmed);
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_DC_ATTACH_REUSED),
			1ULL);
}

/* A DCT's answer of generation @gen from DCT @dctn to the case's DCI. */
static void srnic_dc_to_dci(struct kunit *test, struct srnic_dc_ctx *ctx,
			    u32 dctn, u32 gen, u32 psn, u8 syn)
{
	struct srnic_dc_req r = {
		.op = SRNIC_DC_OP(ACKNOWLEDGE),
		.dct = dctn,
		.dci = ctx->dci->qp_num,
		.gen = gen,
		.psn = psn,
		.syn = syn,
	};

	srnic_dc_send(test, ctx, &r);
}

static bool srnic_dc_dci_flag(struct srnic_qp *qp, bool *flag)
{
	bool v;

	spin_lock_bh(&qp->req_lock);
	v = *flag;
	spin_unlock_bh(&qp->req_lock);
	return v;
}

/*
 * Responses at the DCI (srnic_dci_rcv(), through the receive path): one of
 * another generation or DCT is stale (dropped, ack_out_of_window); an RNR
 * NAK does not confirm the attachment, an ACK does; NO ATTACHMENT ends it
 * (the DCI attaches anew), after which its responses are stale.
 */
static void srnic_dc_dci_responses(struct kunit *test)
{
	struct srnic_dc_ctx *ctx = test->priv;
	struct srnic_send_wqe *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct srnic_qp *qp;
	struct sk_buff *det;
	u64 oow;
	u32 psn;

	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_EQ(test, srnic_dc_make_dci(ctx, 40), 0);
	qp = to_srnic_qp(ctx->dci);
	srnic_dc_wqe(ctx, w, 0x4001);
	KUNIT_ASSERT_EQ(test, srnic_dc_prepare(qp, w, true, &det), 1);
	psn = qp->dci.attach_psn;

	srnic_dc_to_dci(test, ctx, 0x4001, 40, psn, srnic_aeth_syn_ack(0));
	srnic_dc_to_dci(test, ctx, 0x4002, 41, psn, srnic_aeth_syn_ack(0));
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_ACK_OUT_OF_WINDOW),
			2ULL);
	KUNIT_EXPECT_FALSE(test, srnic_dc_dci_flag(qp, &qp->dci.confirmed));
	srnic_dc_to_dci(test, ctx, 0x4001, 41, psn, srnic_aeth_syn_rnr(1));
	KUNIT_EXPECT_FALSE(test, srnic_dc_dci_flag(qp, &qp->dci.confirmed));
	KUNIT_EXPECT_TRUE(test, srnic_dc_dci_flag(qp, &qp->dci.attached));
	srnic_dc_to_dci(test, ctx, 0x4001, 41, psn, srnic_aeth_syn_ack(0));
	KUNIT_EXPECT_TRUE(test, srnic_dc_dci_flag(qp, &qp->dci.confirmed));

	srnic_dc_to_dci(test, ctx, 0x4001, 41, psn, SRNIC_DC_SYN_NO_ATT);
	KUNIT_EXPECT_FALSE(test, srnic_dc_dci_flag(qp, &qp->dci.attached));
	KUNIT_EXPECT_EQ(test, qp->dci.gen, 41U);
	spin_lock_bh(&qp->req_lock);
	KUNIT_EXPECT_EQ(test, qp->req.cur, qp->req.oldest);
	spin_unlock_bh(&qp->req_lock);
	/* gone: the attachment's answers are stale now */
	oow = srnic_dc_cnt(ctx, SRNIC_CNT_ACK_OUT_OF_WINDOW);
	srnic_dc_to_dci(test, ctx, 0x4001, 41, psn, srnic_aeth_syn_ack(0));
	KUNIT_EXPECT_EQ(test, srnic_dc_cnt(ctx, SRNIC_CNT_ACK_OUT_OF_WINDOW),
			oow + 1);
	/* the next WQE attaches anew, to the same target */
	srnic_dc_wqe(ctx, w, 0x4001);
	KUNIT_EXPECT_EQ(test, srnic_dc_prepare(qp, w, true, &det), 1);
	KUNIT_EXPECT_NULL(test, det);
	KUNIT_EXPECT_EQ(test, qp->dci.gen, 42U);
	KUNIT_EXPECT_TRUE(test, qp->dci.attached);
}

static struct kunit_case srnic_dc_cases[] = {
	KUNIT_CASE(srnic_dc_attach_reuse),
	KUNIT_CASE(srnic_dc_keys),
	KUNIT_CASE(srnic_dc_full_rnr),
	KUNIT_CASE(srnic_dc_lru),
	KUNIT_CASE(srnic_dc_idle),
	KUNIT_CASE(srnic_dc_detach),
	KUNIT_CASE(srnic_dc_generation),
	KUNIT_CASE(srnic_dc_dci_prepare),
	KUNIT_CASE(srnic_dc_dci_responses),
	{}
};

static struct kunit_suite srnic_dc_suite = {
	.name = "srnic_dc",
	.init = srnic_dc_init,
	.exit = srnic_dc_exit,
	.test_cases = srnic_dc_cases,
};

kunit_test_suite(srnic_dc_suite);
