// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "srnic_opcode": the pure wire-format helpers of
 * kernel/srnic_hdr.h and the opcode table of kernel/srnic_opcode.c.
 *
 *   - 24-bit PSN arithmetic and comparison across the 2^24 wrap;
 *   - BTH field packing, AETH syndrome encode/decode, pad count;
 *   - the opcode table: exactly the expected opcodes are valid, each
 *     entry's header length is the sum of the headers its flags name, and
 *     its transport, position and request/response flags agree;
 *   - the requester's (QP type, work request, position) -> opcode mapping
 *     round-trips with the table, in both directions.
 *
 * Linked into srnic.o when CONFIG_RDMA_SRNIC_KUNIT_TEST=y; run it with
 * tests/kunit/run.sh 'srnic_opcode'.
 */
#include <kunit/test.h>
#include <linux/bitops.h>

/* Relative to this file: see srnic_port_test.c. */
#include "../../kernel/srnic_hdr.h"
#include "../../kernel/srnic_opcode.h"

/* Byte-for-byte comparison of a header with its expected wire image. */
static void srnic_opcode_test_bytes(struct kunit *test, const char *what,
				    const void *got, const void *want,
				    unsigned int len)
{
	KUNIT_EXPECT_EQ_MSG(test, memcmp(got, want, len), 0,
			    "%s: got %*ph, want %*ph", what, len, got, len,
			    want);
}

/* srnic_psn_add() / srnic_psn_cmp() */

static void psn_add_wraps_at_2_24(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0, 1), 1U);
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0xfffffe, 1), 0xffffffU);
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0xffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0xfffffe, 3), 1U);
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0x123456, 0x1000000), 0x123456U);
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0x000010, 0xffffffff), 0x00000fU);
	/* stray high bits of the input PSN are dropped */
	KUNIT_EXPECT_EQ(test, srnic_psn_add(0xff000005, 0), 5U);
}

struct srnic_psn_cmp_case {
	u32 a;
	u32 b;
	int sign;	/* -1, 0, 1 */
};

static const struct srnic_psn_cmp_case srnic_psn_cmp_cases[] = {
	{ 0,		0,		0 },
	{ 1,		0,		1 },
	{ 0,		1,		-1 },
	{ 0xffffff,	0xffffff,	0 },
	/* across the wrap: 0 follows 0xffffff */
	{ 0,		0xffffff,	1 },
	{ 0xffffff,	0,		-1 },
	{ 0x000002,	0xfffffe,	1 },
	{ 0xfffffe,	0x000002,	-1 },
	/* the 2^23 window */
	{ 0x7fffff,	0,		1 },
	{ 0x800000,	0,		-1 },	/* exactly half-way: "before" */
	{ 0x800001,	0,		-1 },
	{ 0,		0x7fffff,	-1 },
	{ 0,		0x800001,	1 },
	{ 0x800000,	0xffffff,	-1 },
	{ 0x7ffffe,	0xffffff,	1 },
	/* bits above the 24 are ignored */
	{ 0x01000005,	5,		0 },
	{ 5,		0xff000004,	1 },
};

static void srnic_psn_cmp_case_desc(const struct srnic_psn_cmp_case *c,
				    char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "cmp(%#x, %#x) %s 0", c->a, c->b,
		 c->sign < 0 ? "<" : c->sign > 0 ? ">" : "==");
}

KUNIT_ARRAY_PARAM(srnic_psn_cmp, srnic_psn_cmp_cases, srnic_psn_cmp_case_desc);

static void psn_cmp_uses_2_23_window(struct kunit *test)
{
	const struct srnic_psn_cmp_case *c = test->param_value;
	int got = srnic_psn_cmp(c->a, c->b);

	KUNIT_EXPECT_EQ_MSG(test, (got > 0) - (got < 0), c->sign,
			    "srnic_psn_cmp(%#x, %#x) = %d", c->a, c->b, got);
}

/* Every PSN near the wrap compares as "after" its predecessor. */
static void psn_successor_is_after(struct kunit *test)
{
	u32 psn;

	for (psn = 0xffff00; psn != 0x000100; psn = srnic_psn_add(psn, 1)) {
		u32 next = srnic_psn_add(psn, 1);

		KUNIT_ASSERT_GT(test, srnic_psn_cmp(next, psn), 0);
		KUNIT_ASSERT_LT(test, srnic_psn_cmp(psn, next), 0);
		KUNIT_ASSERT_EQ(test, srnic_psn_cmp(psn, psn), 0);
	}
}

/* BTH */

static void bth_init_packs_fields(struct kunit *test)
{
	/* opcode, SE|M|pad 3|TVer 0, P_Key, F/B/resv, QPN, A|resv, PSN */
	static const u8 want[SRNIC_BTH_LEN] = {
		0x0a, 0xf0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
	};
	struct srnic_bth bth;

	srnic_bth_init(&bth, 0x0a, true, true, 3, SRNIC_PKEY_DEFAULT,
		       0xff123456, true, 0x7fabcdef);
	srnic_opcode_test_bytes(test, "bth", &bth, want, sizeof(want));

	KUNIT_EXPECT_EQ(test, srnic_bth_opcode(&bth), 0x0a);
	KUNIT_EXPECT_TRUE(test, srnic_bth_se(&bth));
	KUNIT_EXPECT_TRUE(test, srnic_bth_mig(&bth));
	KUNIT_EXPECT_EQ(test, srnic_bth_pad(&bth), 3U);
	KUNIT_EXPECT_EQ(test, srnic_bth_tver(&bth), 0U);
	KUNIT_EXPECT_EQ(test, srnic_bth_pkey(&bth), 0xffff);
	KUNIT_EXPECT_FALSE(test, srnic_bth_fecn(&bth));
	KUNIT_EXPECT_FALSE(test, srnic_bth_becn(&bth));
	KUNIT_EXPECT_EQ(test, srnic_bth_qpn(&bth), 0x123456U);
	KUNIT_EXPECT_TRUE(test, srnic_bth_ackreq(&bth));
	KUNIT_EXPECT_EQ(test, srnic_bth_psn(&bth), 0xabcdefU);

	/* FECN/BECN live in byte 4 and leave the QPN alone */
	srnic_bth_set_ecn(&bth, false, true);
	KUNIT_EXPECT_EQ(test, ((u8 *)&bth)[4], 0x40);
	KUNIT_EXPECT_TRUE(test, srnic_bth_becn(&bth));
	KUNIT_EXPECT_FALSE(test, srnic_bth_fecn(&bth));
	srnic_bth_set_ecn(&bth, true, false);
	KUNIT_EXPECT_EQ(test, ((u8 *)&bth)[4], 0x80);
	KUNIT_EXPECT_EQ(test, srnic_bth_qpn(&bth), 0x123456U);

	/* PSN and AckReq setters keep each other */
	srnic_bth_set_psn(&bth, 0x1000001);
	KUNIT_EXPECT_EQ(test, srnic_bth_psn(&bth), 1U);
	KUNIT_EXPECT_TRUE(test, srnic_bth_ackreq(&bth));
	srnic_bth_set_ackreq(&bth, false);
	KUNIT_EXPECT_FALSE(test, srnic_bth_ackreq(&bth));
	KUNIT_EXPECT_EQ(test, srnic_bth_psn(&bth), 1U);

	srnic_bth_init(&bth, 0x04, false, false, 0, 0x8001, 1, false, 0);
	KUNIT_EXPECT_EQ(test, ((u8 *)&bth)[1], 0x00);
	KUNIT_EXPECT_FALSE(test, srnic_bth_se(&bth));
	KUNIT_EXPECT_FALSE(test, srnic_bth_mig(&bth));
	KUNIT_EXPECT_EQ(test, srnic_bth_pkey(&bth), 0x8001);
}

static void pad_count_rounds_to_4(struct kunit *test)
{
	static const unsigned int want[] = { 0, 3, 2, 1, 0, 3, 2, 1 };
	unsigned int len;

	for (len = 0; len < ARRAY_SIZE(want); len++)
		KUNIT_EXPECT_EQ_MSG(test, srnic_pad_count(len), want[len],
				    "payload %u", len);
	KUNIT_EXPECT_EQ(test, srnic_pad_count(61), 3U);
	KUNIT_EXPECT_EQ(test, srnic_pad_count(1024), 0U);
	KUNIT_EXPECT_EQ(test, srnic_pad_count(UINT_MAX), 1U);
}

/* AETH */

static void aeth_syndrome_encoding(struct kunit *test)
{
	unsigned int v;

	/* IBA table 42: 0tt vvvvv */
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_ack(SRNIC_AETH_CREDIT_INVALID),
			0x1f);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_ack(0), 0x00);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_rnr(0), 0x20);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_rnr(0x12), 0x32);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_rnr(0x1f), 0x3f);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_nak(SRNIC_NAK_PSN_SEQ_ERR), 0x60);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_nak(SRNIC_NAK_INVALID_REQ), 0x61);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_nak(SRNIC_NAK_REM_ACCESS_ERR),
			0x62);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_nak(SRNIC_NAK_REM_OP_ERR), 0x63);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_nak(SRNIC_NAK_INVALID_RD_REQ),
			0x64);
	/* the value is 5 bits: a too-large timer must not leak into the type */
	KUNIT_EXPECT_EQ(test, srnic_aeth_syn_rnr(0x3f), 0x3f);

	for (v = 0; v < 32; v++) {
		u8 s = srnic_aeth_syn_rnr(v);

		KUNIT_EXPECT_EQ(test, srnic_aeth_syn_type(s),
				SRNIC_AETH_RNR_NAK);
		KUNIT_EXPECT_EQ(test, srnic_aeth_syn_value(s), v);
		KUNIT_EXPECT_TRUE(test, srnic_aeth_syn_valid(s));
		s = srnic_aeth_syn_ack(v);
		KUNIT_EXPECT_EQ(test, srnic_aeth_syn_type(s), SRNIC_AETH_ACK);
		KUNIT_EXPECT_EQ(test, srnic_aeth_syn_value(s), v);
		KUNIT_EXPECT_TRUE(test, srnic_aeth_syn_valid(s));
		s = srnic_aeth_syn(SRNIC_AETH_NAK, v);
		KUNIT_EXPECT_EQ(test, srnic_aeth_syn_type(s), SRNIC_AETH_NAK);
		KUNIT_EXPECT_EQ(test, srnic_aeth_syn_valid(s),
				v <= SRNIC_NAK_INVALID_RD_REQ);
		s = srnic_aeth_syn(SRNIC_AETH_RESERVED, v);
		KUNIT_EXPECT_FALSE(test, srnic_aeth_syn_valid(s));
		KUNIT_EXPECT_FALSE(test, srnic_aeth_syn_valid(s | 0x80));
		KUNIT_EXPECT_FALSE(test,
				   srnic_aeth_syn_valid(srnic_aeth_syn_ack(v) |
							0x80));
	}
}

static void aeth_packs_syndrome_and_msn(struct kunit *test)
{
	static const u8 want[] = { 0x32, 0xab, 0xcd, 0xef };
	struct srnic_aeth aeth;

	srnic_aeth_set(&aeth, srnic_aeth_syn_rnr(0x12), 0xabcdef);
	srnic_opcode_test_bytes(test, "aeth", &aeth, want,
				sizeof(want));
	KUNIT_EXPECT_EQ(test, srnic_aeth_syndrome(&aeth), 0x32);
	KUNIT_EXPECT_EQ(test, srnic_aeth_msn(&aeth), 0xabcdefU);

	/* the MSN is 24 bits and never spills into the syndrome */
	srnic_aeth_set(&aeth, srnic_aeth_syn_ack(SRNIC_AETH_CREDIT_INVALID),
		       0x1ffffff);
	KUNIT_EXPECT_EQ(test, srnic_aeth_syndrome(&aeth), 0x1f);
	KUNIT_EXPECT_EQ(test, srnic_aeth_msn(&aeth), 0xffffffU);
}

/* Other extension headers: big-endian, byte for byte. */
static void ext_headers_are_big_endian(struct kunit *test)
{
	static const u8 reth_want[] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0x0b, 0xb8,
	};
	static const u8 deth_want[] = {
		0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x11,
	};
	struct srnic_atmeth atm;
	struct srnic_atmack ack;
	struct srnic_reth reth;
	struct srnic_deth deth;
	u8 *b = (u8 *)&atm;

	srnic_reth_set(&reth, 0x0102030405060708ULL, 0xaabbccdd, 3000);
	srnic_opcode_test_bytes(test, "reth", &reth, reth_want,
				sizeof(reth_want));
	KUNIT_EXPECT_EQ(test, srnic_reth_va(&reth), 0x0102030405060708ULL);
	KUNIT_EXPECT_EQ(test, srnic_reth_rkey(&reth), 0xaabbccddU);
	KUNIT_EXPECT_EQ(test, srnic_reth_len(&reth), 3000U);

	srnic_deth_set(&deth, 0x11111111, 0xff000011);
	srnic_opcode_test_bytes(test, "deth", &deth, deth_want,
				sizeof(deth_want));
	KUNIT_EXPECT_EQ(test, srnic_deth_qkey(&deth), 0x11111111U);
	KUNIT_EXPECT_EQ(test, srnic_deth_sqp(&deth), 0x11U);

	/* AtomicETH: swap/add at byte 12, compare at byte 20 (unaligned) */
	srnic_atmeth_set(&atm, 0x1000, 0x42, 0x1122334455667788ULL, 7);
	KUNIT_EXPECT_EQ(test, b[11], 0x42);
	KUNIT_EXPECT_EQ(test, b[12], 0x11);
	KUNIT_EXPECT_EQ(test, b[19], 0x88);
	KUNIT_EXPECT_EQ(test, b[27], 0x07);
	KUNIT_EXPECT_EQ(test, srnic_atmeth_va(&atm), 0x1000ULL);
	KUNIT_EXPECT_EQ(test, srnic_atmeth_rkey(&atm), 0x42U);
	KUNIT_EXPECT_EQ(test, srnic_atmeth_swap_add(&atm),
			0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, srnic_atmeth_cmp(&atm), 7ULL);

	srnic_atmack_set(&ack, 0xfedcba9876543210ULL);
	KUNIT_EXPECT_EQ(test, ((u8 *)&ack)[0], 0xfe);
	KUNIT_EXPECT_EQ(test, srnic_atmack_orig(&ack), 0xfedcba9876543210ULL);
}

/* The opcode table */

/* The opcodes srnic must accept (IBA table 38 for RC/UC/UD; CNP). */
static bool srnic_opcode_test_expected_valid(unsigned int op)
{
	return (op <= 0x14 || op == 0x16 || op == 0x17) ||	/* RC */
	       (op >= 0x20 && op <= 0x2b) ||			/* UC */
	       op == 0x64 || op == 0x65 ||			/* UD */
	       (op >= 0xa0 && op <= 0xb7 && op != 0xb5) ||	/* XRC */
	       (op >= 0xc0 && op <= 0xd4) || op == 0xde || op == 0xdf || /* DC */
	       op == SRNIC_OPCODE_CNP;
}

/* Sum of the extension headers named by @flags, computed independently. */
static unsigned int srnic_opcode_test_hdrs_len(u32 flags)
{
	static const struct {
		u32 flag;
		unsigned int len;
	} hdrs[] = {
		{ SRNIC_OPF_XRCETH,	sizeof(struct srnic_xrceth) },
		{ SRNIC_OPF_DCETH,	sizeof(struct srnic_dceth) },
		{ SRNIC_OPF_DCRETH,	sizeof(struct srnic_dcreth) },
		{ SRNIC_OPF_RETH,	sizeof(struct srnic_reth) },
		{ SRNIC_OPF_DETH,	sizeof(struct srnic_deth) },
		{ SRNIC_OPF_AETH,	sizeof(struct srnic_aeth) },
		{ SRNIC_OPF_ATMETH,	sizeof(struct srnic_atmeth) },
		{ SRNIC_OPF_ATMACK,	sizeof(struct srnic_atmack) },
		{ SRNIC_OPF_IMMDT,	sizeof(struct srnic_immdt) },
		{ SRNIC_OPF_IETH,	sizeof(struct srnic_ieth) },
		{ SRNIC_OPF_CNP_RSVD,
		  sizeof(struct srnic_cnp) - sizeof(struct srnic_bth) },
	};
	unsigned int i, len = 0;

	for (i = 0; i < ARRAY_SIZE(hdrs); i++)
		if (flags & hdrs[i].flag)
			len += hdrs[i].len;
	return len;
}

static void opcode_table_valid_set(struct kunit *test)
{
	unsigned int op, n = 0;

	for (op = 0; op < SRNIC_NUM_OPCODES; op++) {
		const struct srnic_opcode_info *info = srnic_opcode_info(op);
		bool want = srnic_opcode_test_expected_valid(op);

		KUNIT_EXPECT_EQ_MSG(test, srnic_opcode_valid(op), want,
				    "opcode %#04x", op);
		if (!want) {
			KUNIT_EXPECT_EQ_MSG(test, info->flags, 0U,
					    "opcode %#04x", op);
			KUNIT_EXPECT_NULL(test, info->name);
			KUNIT_EXPECT_STREQ(test, srnic_opcode_name(op),
					   "INVALID");
			continue;
		}
		n++;
		KUNIT_EXPECT_NOT_NULL_MSG(test, info->name, "opcode %#04x", op);
	}
	/* RC 23, UC 12, UD 2, XRC 23, DC 21 + DETACH (ACK) 2, CNP 1 */
	KUNIT_EXPECT_EQ(test, n, 84U);
}

static void opcode_table_entries_consistent(struct kunit *test)
{
	unsigned int op;

	for (op = 0; op < SRNIC_NUM_OPCODES; op++) {
		const struct srnic_opcode_info *info = srnic_opcode_info(op);
		u32 f = info->flags;
		const char *name = srnic_opcode_name(op);

		if (!srnic_opcode_valid(op))
			continue;

		KUNIT_EXPECT_EQ_MSG(test, info->hdr_len,
				    srnic_opcode_test_hdrs_len(f),
				    "%s: hdr_len vs its headers", name);
		KUNIT_EXPECT_EQ_MSG(test, srnic_opcode_hdr_len(op),
				    SRNIC_BTH_LEN + info->hdr_len, "%s", name);
		KUNIT_EXPECT_EQ_MSG(test, info->transport, op >> 5, "%s", name);
		KUNIT_EXPECT_LE_MSG(test, info->pos, SRNIC_POS_ONLY, "%s",
				    name);
		KUNIT_EXPECT_FALSE_MSG(test,
				       (f & SRNIC_OPF_RETH) &&
				       (f & SRNIC_OPF_DETH), "%s", name);

		/* DC headers exactly on DC packets, by direction */
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SRNIC_OPF_DCETH),
				    info->transport == SRNIC_TRANSPORT_DC &&
				    (f & SRNIC_OPF_REQ), "%s", name);
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SRNIC_OPF_DCRETH),
				    info->transport == SRNIC_TRANSPORT_DC &&
				    (f & SRNIC_OPF_RESP), "%s", name);
		if (f & SRNIC_OPF_DC_CTL) {
			/* DETACH and its ACK: a DC header and nothing else */
			KUNIT_EXPECT_EQ(test, info->wr_mask, 0U);
			KUNIT_EXPECT_EQ(test, info->pos, SRNIC_POS_ONLY);
			KUNIT_EXPECT_FALSE(test, f & SRNIC_OPF_PAYLOAD);
			continue;
		}
		if (info->transport == SRNIC_TRANSPORT_CNP) {
			KUNIT_EXPECT_EQ(test, f & ~SRNIC_OPF_VALID,
					(u32)SRNIC_OPF_CNP_RSVD);
			KUNIT_EXPECT_EQ(test, info->wr_mask, 0U);
			KUNIT_EXPECT_EQ(test, srnic_opcode_hdr_len(op),
					(unsigned int)SRNIC_CNP_LEN);
			continue;
		}

		/* a request or a response, never both */
		KUNIT_EXPECT_TRUE_MSG(test, !(f & SRNIC_OPF_REQ) !=
				      !(f & SRNIC_OPF_RESP), "%s", name);
		/* requests name their work requests, responses none */
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SRNIC_OPF_REQ),
				    !!info->wr_mask, "%s", name);
		/* exactly one kind of operation, except a plain ACK */
		KUNIT_EXPECT_EQ_MSG(test,
				    hweight32(f & (SRNIC_OPF_SEND |
						   SRNIC_OPF_WRITE |
						   SRNIC_OPF_READ |
						   SRNIC_OPF_ATOMIC)),
				    (op & 0x1f) == IB_OPCODE_ACKNOWLEDGE ?
				    0 : 1,
				    "%s", name);
		/* responses (ACKs, read responses) carry an AETH, except the
		 * middle of a read response
		 */
		if (f & SRNIC_OPF_RESP)
			KUNIT_EXPECT_EQ_MSG(test, !!(f & SRNIC_OPF_AETH),
					    info->pos != SRNIC_POS_MIDDLE,
					    "%s", name);
		else
			KUNIT_EXPECT_FALSE_MSG(test, f & SRNIC_OPF_AETH, "%s",
					       name);
		/* RETH: first/only packet of a WRITE, and READ requests */
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SRNIC_OPF_RETH),
				    ((f & SRNIC_OPF_WRITE) &&
				     (info->pos & SRNIC_POS_FIRST)) ||
				    ((f & SRNIC_OPF_READ) &&
				     (f & SRNIC_OPF_REQ)),
				    "%s", name);
		/* DETH exactly on UD */
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SRNIC_OPF_DETH),
				    info->transport == SRNIC_TRANSPORT_UD,
				    "%s", name);
		/* ImmDt / IETH only on the packet that completes */
		if (f & (SRNIC_OPF_IMMDT | SRNIC_OPF_IETH))
			KUNIT_EXPECT_TRUE_MSG(test,
					      (f & SRNIC_OPF_COMP) &&
					      (info->pos & SRNIC_POS_LAST),
					      "%s", name);
		/* payload: SEND/WRITE packets and read responses only */
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SRNIC_OPF_PAYLOAD),
				    !!(f & (SRNIC_OPF_SEND | SRNIC_OPF_WRITE)) ||
				    ((f & SRNIC_OPF_READ) &&
				     (f & SRNIC_OPF_RESP)),
				    "%s", name);
		/* a receive WQE is consumed by a message's first packet */
		if (f & SRNIC_OPF_RWR)
			KUNIT_EXPECT_TRUE_MSG(test,
					      (info->pos & SRNIC_POS_FIRST) ||
					      (f & SRNIC_OPF_IMMDT), "%s",
					      name);
		/* XRCETH exactly on XRC requests */
		KUNIT_EXPECT_EQ_MSG(test, !!(f & SRNIC_OPF_XRCETH),
				    info->transport == SRNIC_TRANSPORT_XRC &&
				    (f & SRNIC_OPF_REQ), "%s", name);
		/* UD: one packet per message */
		if (info->transport == SRNIC_TRANSPORT_UD)
			KUNIT_EXPECT_EQ(test, info->pos, SRNIC_POS_ONLY);
	}
}

/*
 * DC's operations are RC's (docs/dc.md): at SRNIC_OPCODE_DC | op the same
 * flags, position and work requests (but SEND with invalidate), plus a
 * DCETH on requests and a DCRETH on responses.
 */
static void opcode_table_dc_is_rc(struct kunit *test)
{
	unsigned int op, n = 0;

	for (op = 0; op <= IB_OPCODE_FETCH_ADD; op++) {
		const struct srnic_opcode_info *rc =
			srnic_opcode_info(IB_OPCODE_RC | op);
		const struct srnic_opcode_info *dc =
			srnic_opcode_info(SRNIC_OPCODE_DC | op);
		u32 ext = (rc->flags & SRNIC_OPF_REQ) ? SRNIC_OPF_DCETH :
			  SRNIC_OPF_DCRETH;
		unsigned int len = (rc->flags & SRNIC_OPF_REQ) ?
				   SRNIC_DCETH_LEN : SRNIC_DCRETH_LEN;

		KUNIT_ASSERT_TRUE(test, srnic_opcode_valid(IB_OPCODE_RC | op));
		n++;
		KUNIT_EXPECT_EQ_MSG(test, dc->flags, rc->flags | ext,
				    "op %#04x", op);
		KUNIT_EXPECT_EQ_MSG(test, dc->wr_mask,
				    rc->wr_mask & ~BIT(IB_WR_SEND_WITH_INV),
				    "op %#04x", op);
		KUNIT_EXPECT_EQ_MSG(test, dc->pos, rc->pos, "op %#04x", op);
		KUNIT_EXPECT_EQ_MSG(test, dc->hdr_len, rc->hdr_len + len,
				    "op %#04x", op);
		KUNIT_EXPECT_STREQ(test, dc->name + 2, rc->name + 2);
	}
	KUNIT_EXPECT_EQ(test, n, 21U);
	/* no SEND with invalidate over DC */
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(SRNIC_OPCODE_DC | 0x16));
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(SRNIC_OPCODE_DC | 0x17));
	KUNIT_EXPECT_EQ(test, srnic_opcode_hdr_len(SRNIC_OPCODE_DC_DETACH),
			(unsigned int)(SRNIC_BTH_LEN + SRNIC_DCETH_LEN));
	KUNIT_EXPECT_EQ(test, srnic_opcode_hdr_len(SRNIC_OPCODE_DC_DETACH_ACK),
			(unsigned int)(SRNIC_BTH_LEN + SRNIC_DCRETH_LEN));
}

/* DCETH and DCRETH round trip, big endian, the DCI/DCT number 24 bits. */
static void dc_headers_round_trip(struct kunit *test)
{
	static const u8 want[SRNIC_DCETH_LEN] = {
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0x8a, 0x12, 0x34, 0x56, 0xfe, 0xdc, 0xba, 0x98,
	};
	struct srnic_dceth d;
	struct srnic_dcreth r;
	u8 *b = (u8 *)&r;

	srnic_dceth_set(&d, 0x0123456789abcdefULL, SRNIC_DCETH_ATTACH | 10,
			0xff123456, 0xfedcba98);
	KUNIT_EXPECT_EQ(test, memcmp(&d, want, sizeof(want)), 0);
	KUNIT_EXPECT_EQ(test, srnic_dceth_key(&d), 0x0123456789abcdefULL);
	KUNIT_EXPECT_EQ(test, srnic_dceth_flags(&d),
			(u8)(SRNIC_DCETH_ATTACH | 10));
	KUNIT_EXPECT_EQ(test, srnic_dceth_dci(&d), 0x123456U);
	KUNIT_EXPECT_EQ(test, srnic_dceth_gen(&d), 0xfedcba98U);

	srnic_dcreth_set(&r, 0xab654321, 7);
	KUNIT_EXPECT_EQ(test, b[0], 0);		/* reserved */
	KUNIT_EXPECT_EQ(test, srnic_dcreth_dctn(&r), 0x654321U);
	KUNIT_EXPECT_EQ(test, srnic_dcreth_gen(&r), 7U);
}

/*
 * The table spells the UC half out again (a macro for the shared entries
 * did not pass checkpatch): UC's SEND and RDMA WRITE opcodes must stay
 * RC's, at IB_OPCODE_UC | op, but for SEND with invalidate (RC only).
 */
static void opcode_table_uc_is_rc(struct kunit *test)
{
	unsigned int op;

	for (op = 0; op <= IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE; op++) {
		const struct srnic_opcode_info *rc =
			srnic_opcode_info(IB_OPCODE_RC | op);
		const struct srnic_opcode_info *uc =
			srnic_opcode_info(IB_OPCODE_UC | op);

		KUNIT_EXPECT_EQ_MSG(test, uc->flags, rc->flags, "op %#04x", op);
		KUNIT_EXPECT_EQ_MSG(test, uc->wr_mask,
				    rc->wr_mask & ~BIT(IB_WR_SEND_WITH_INV),
				    "op %#04x", op);
		KUNIT_EXPECT_EQ_MSG(test, uc->pos, rc->pos, "op %#04x", op);
		KUNIT_EXPECT_EQ_MSG(test, uc->hdr_len, rc->hdr_len,
				    "op %#04x", op);
		KUNIT_EXPECT_EQ_MSG(test, uc->transport, SRNIC_TRANSPORT_UC,
				    "op %#04x", op);
		KUNIT_EXPECT_STREQ(test, uc->name + 2, rc->name + 2);
	}
}

/* Spot checks against IBA table 38, independent of the table's own flags. */
static void opcode_table_known_lengths(struct kunit *test)
{
	static const struct {
		u8 op;
		unsigned int hdr_len;	/* BTH included */
		u8 pos;
	} cases[] = {
		{ 0x00, 12, SRNIC_POS_FIRST },	/* RC SEND FIRST */
		{ 0x04, 12, SRNIC_POS_ONLY },	/* RC SEND ONLY */
		{ 0x05, 16, SRNIC_POS_ONLY },	/* + ImmDt */
		{ 0x06, 28, SRNIC_POS_FIRST },	/* RC WRITE FIRST: RETH */
		{ 0x07, 12, SRNIC_POS_MIDDLE },
		{ 0x0b, 32, SRNIC_POS_ONLY },	/* RETH + ImmDt */
		{ 0x0c, 28, SRNIC_POS_ONLY },	/* READ REQUEST */
		{ 0x0d, 16, SRNIC_POS_FIRST },	/* READ RESP FIRST: AETH */
		{ 0x0e, 12, SRNIC_POS_MIDDLE },
		{ 0x10, 16, SRNIC_POS_ONLY },
		{ 0x11, 16, SRNIC_POS_ONLY },	/* ACK */
		{ 0x12, 24, SRNIC_POS_ONLY },	/* ATOMIC ACK: AETH + 8 */
		{ 0x13, 40, SRNIC_POS_ONLY },	/* CMP SWAP: AtomicETH */
		{ 0x14, 40, SRNIC_POS_ONLY },
		{ 0x16, 16, SRNIC_POS_LAST },	/* SEND LAST INV: IETH */
		{ 0x17, 16, SRNIC_POS_ONLY },
		{ 0x2a, 28, SRNIC_POS_ONLY },	/* UC WRITE ONLY */
		{ 0x64, 20, SRNIC_POS_ONLY },	/* UD SEND ONLY: DETH */
		{ 0x65, 24, SRNIC_POS_ONLY },	/* + ImmDt */
		{ 0x81, 28, SRNIC_POS_ONLY },	/* CNP */
		{ 0xa4, 16, SRNIC_POS_ONLY },	/* XRC SEND ONLY: XRCETH */
		{ 0xa5, 20, SRNIC_POS_ONLY },	/* + ImmDt */
		{ 0xa6, 32, SRNIC_POS_FIRST },	/* XRC WRITE FIRST: + RETH */
		{ 0xac, 32, SRNIC_POS_ONLY },	/* XRC READ REQUEST */
		{ 0xad, 16, SRNIC_POS_FIRST },	/* XRC READ RESP: AETH only */
		{ 0xb1, 16, SRNIC_POS_ONLY },	/* XRC ACK: as RC's */
		{ 0xb2, 24, SRNIC_POS_ONLY },	/* XRC ATOMIC ACK */
		{ 0xb3, 44, SRNIC_POS_ONLY },	/* XRC CMP SWAP */
		{ 0xb7, 20, SRNIC_POS_ONLY },	/* XRC SEND ONLY INV */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u8 op = cases[i].op;

		KUNIT_EXPECT_TRUE_MSG(test, srnic_opcode_valid(op), "%#x", op);
		KUNIT_EXPECT_EQ_MSG(test, srnic_opcode_hdr_len(op),
				    cases[i].hdr_len, "%s",
				    srnic_opcode_name(op));
		KUNIT_EXPECT_EQ_MSG(test, srnic_opcode_info(op)->pos,
				    cases[i].pos, "%s", srnic_opcode_name(op));
	}
	KUNIT_EXPECT_STREQ(test, srnic_opcode_name(0x00), "RC_SEND_FIRST");
	KUNIT_EXPECT_STREQ(test, srnic_opcode_name(0x81), "CNP");
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(0x15));
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(0x2c));	/* UC READ */
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(0x40));	/* RD */
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(0x60));	/* UD FIRST */
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(0x80));
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(0xb5));	/* XRC resv */
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(0xb8));
	KUNIT_EXPECT_STREQ(test, srnic_opcode_name(0xa4), "XRC_SEND_ONLY");
	KUNIT_EXPECT_FALSE(test, srnic_opcode_valid(0xff));
}

/* The requester's mapping */

static const enum ib_qp_type srnic_opcode_test_qpts[] = {
	IB_QPT_RC, IB_QPT_UC, IB_QPT_UD, IB_QPT_GSI, IB_QPT_XRC_INI,
	IB_QPT_DRIVER,
};

static u8 srnic_opcode_test_transport(enum ib_qp_type qpt)
{
	switch (qpt) {
	case IB_QPT_RC:
		return SRNIC_TRANSPORT_RC;
	case IB_QPT_XRC_INI:
		return SRNIC_TRANSPORT_XRC;
	case IB_QPT_DRIVER:
		return SRNIC_TRANSPORT_DC;
	case IB_QPT_UC:
		return SRNIC_TRANSPORT_UC;
	default:
		return SRNIC_TRANSPORT_UD;
	}
}

/* Every opcode the mapping returns agrees with the table. */
static void wr_to_opcode_agrees_with_table(struct kunit *test)
{
	unsigned int q, wr, pos, hits = 0;

	for (q = 0; q < ARRAY_SIZE(srnic_opcode_test_qpts); q++) {
		enum ib_qp_type qpt = srnic_opcode_test_qpts[q];

		for (wr = 0; wr < 32; wr++) {
			for (pos = 0; pos <= SRNIC_POS_ONLY; pos++) {
				int op = srnic_opcode_for_wr(qpt, wr, pos);
				const struct srnic_opcode_info *info;

				if (op < 0) {
					KUNIT_EXPECT_EQ(test, op, -EINVAL);
					continue;
				}
				hits++;
				KUNIT_ASSERT_LT(test, op, SRNIC_NUM_OPCODES);
				info = srnic_opcode_info(op);
				KUNIT_EXPECT_TRUE_MSG(test,
						      srnic_opcode_valid(op),
						      "qpt %u wr %u pos %u: %#x",
						      qpt, wr, pos, op);
				KUNIT_EXPECT_TRUE(test,
						  info->flags & SRNIC_OPF_REQ);
				KUNIT_EXPECT_EQ(test, info->transport,
						srnic_opcode_test_transport(qpt));
				KUNIT_EXPECT_TRUE_MSG(test,
						      info->wr_mask & BIT(wr),
						      "%s lacks wr %u",
						      info->name, wr);
				KUNIT_EXPECT_EQ_MSG(test, info->pos, pos,
						    "%s", info->name);
			}
		}
	}
	/*
	 * RC: SEND x3 and WRITE x2 at 4 positions, READ x2 + 2 atomics once;
	 * UC: SEND x2 and WRITE x2 at 4 positions; UD and GSI: 2 each.
	 */
	/* DC (IB_QPT_DRIVER: a DCI): RC's less SEND with invalidate */
	KUNIT_EXPECT_EQ(test, hits, 20U + 4 + 16 + 2 + 2 + 20 + 4 + 16 + 4);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_RC, IB_WR_SEND, 4),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_XRC_TGT, IB_WR_SEND,
						  SRNIC_POS_ONLY), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_RC, IB_WR_REG_MR,
						  SRNIC_POS_ONLY), -EINVAL);
}

/* Every request opcode is reached from each work request it lists. */
static void opcode_to_wr_round_trips(struct kunit *test)
{
	unsigned int op, wr;

	for (op = 0; op < SRNIC_NUM_OPCODES; op++) {
		const struct srnic_opcode_info *info = srnic_opcode_info(op);
		enum ib_qp_type qpt;

		/* DC DETACH: no work request's */
		if (!(info->flags & SRNIC_OPF_REQ) ||
		    (info->flags & SRNIC_OPF_DC_CTL))
			continue;
		switch (info->transport) {
		case SRNIC_TRANSPORT_RC:
			qpt = IB_QPT_RC;
			break;
		case SRNIC_TRANSPORT_UC:
			qpt = IB_QPT_UC;
			break;
		case SRNIC_TRANSPORT_XRC:
			qpt = IB_QPT_XRC_INI;
			break;
		case SRNIC_TRANSPORT_DC:
			qpt = IB_QPT_DRIVER;
			break;
		default:
			qpt = IB_QPT_UD;
			break;
		}
		KUNIT_EXPECT_NE_MSG(test, info->wr_mask, 0U, "%s", info->name);
		for (wr = 0; wr < 32; wr++) {
			if (!(info->wr_mask & BIT(wr)))
				continue;
			KUNIT_EXPECT_EQ_MSG(test,
					    srnic_opcode_for_wr(qpt, wr,
								info->pos),
					    (int)op, "%s via wr %u",
					    info->name, wr);
			if (qpt == IB_QPT_UD)
				KUNIT_EXPECT_EQ(test,
						srnic_opcode_for_wr(IB_QPT_GSI,
								    wr,
								    info->pos),
						(int)op);
		}
	}
}

static void wr_to_opcode_spot_checks(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_RC, IB_WR_SEND,
						  SRNIC_POS_ONLY), 0x04);
	KUNIT_EXPECT_EQ(test,
			srnic_opcode_for_wr(IB_QPT_RC, IB_WR_SEND_WITH_IMM,
					    SRNIC_POS_MIDDLE), 0x01);
	KUNIT_EXPECT_EQ(test,
			srnic_opcode_for_wr(IB_QPT_RC, IB_WR_SEND_WITH_INV,
					    SRNIC_POS_LAST), 0x16);
	KUNIT_EXPECT_EQ(test,
			srnic_opcode_for_wr(IB_QPT_RC, IB_WR_SEND_WITH_INV,
					    SRNIC_POS_ONLY), 0x17);
	KUNIT_EXPECT_EQ(test,
			srnic_opcode_for_wr(IB_QPT_RC,
					    IB_WR_RDMA_WRITE_WITH_IMM,
					    SRNIC_POS_LAST), 0x09);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_RC, IB_WR_RDMA_READ,
						  SRNIC_POS_ONLY), 0x0c);
	KUNIT_EXPECT_EQ(test,
			srnic_opcode_for_wr(IB_QPT_RC, IB_WR_ATOMIC_CMP_AND_SWP,
					    SRNIC_POS_ONLY), 0x13);
	KUNIT_EXPECT_EQ(test,
			srnic_opcode_for_wr(IB_QPT_RC,
					    IB_WR_ATOMIC_FETCH_AND_ADD,
					    SRNIC_POS_ONLY), 0x14);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_UC,
						  IB_WR_RDMA_WRITE,
						  SRNIC_POS_FIRST), 0x26);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_UD, IB_WR_SEND,
						  SRNIC_POS_ONLY), 0x64);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_GSI,
						  IB_WR_SEND_WITH_IMM,
						  SRNIC_POS_ONLY), 0x65);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_XRC_INI, IB_WR_SEND,
						  SRNIC_POS_FIRST), 0xa0);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_XRC_INI, IB_WR_SEND,
						  SRNIC_POS_ONLY), 0xa4);

	/* what a transport cannot carry */
	KUNIT_EXPECT_EQ(test,
			srnic_opcode_for_wr(IB_QPT_UC, IB_WR_SEND_WITH_INV,
					    SRNIC_POS_ONLY), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_UC, IB_WR_RDMA_READ,
						  SRNIC_POS_ONLY), -EINVAL);
	KUNIT_EXPECT_EQ(test,
			srnic_opcode_for_wr(IB_QPT_UC, IB_WR_ATOMIC_CMP_AND_SWP,
					    SRNIC_POS_ONLY), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_UD, IB_WR_SEND,
						  SRNIC_POS_FIRST), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_UD, IB_WR_RDMA_WRITE,
						  SRNIC_POS_ONLY), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_RC, IB_WR_RDMA_READ,
						  SRNIC_POS_FIRST), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_opcode_for_wr(IB_QPT_RC, IB_WR_LOCAL_INV,
						  SRNIC_POS_ONLY), -EINVAL);
}

static void read_resp_opcodes(struct kunit *test)
{
	unsigned int pos;

	for (pos = 0; pos <= SRNIC_POS_ONLY; pos++) {
		u8 op = srnic_opcode_read_resp(pos);
		const struct srnic_opcode_info *info = srnic_opcode_info(op);

		KUNIT_EXPECT_TRUE(test, srnic_opcode_valid(op));
		KUNIT_EXPECT_EQ(test, info->pos, pos);
		KUNIT_EXPECT_EQ(test, info->flags &
				(SRNIC_OPF_READ | SRNIC_OPF_RESP),
				(u32)(SRNIC_OPF_READ | SRNIC_OPF_RESP));
	}
	KUNIT_EXPECT_EQ(test, srnic_opcode_read_resp(SRNIC_POS_FIRST), 0x0d);
	KUNIT_EXPECT_EQ(test, srnic_opcode_read_resp(SRNIC_POS_ONLY), 0x10);
}

static struct kunit_case srnic_opcode_test_cases[] = {
	KUNIT_CASE(psn_add_wraps_at_2_24),
	KUNIT_CASE_PARAM(psn_cmp_uses_2_23_window, srnic_psn_cmp_gen_params),
	KUNIT_CASE(psn_successor_is_after),
	KUNIT_CASE(bth_init_packs_fields),
	KUNIT_CASE(pad_count_rounds_to_4),
	KUNIT_CASE(aeth_syndrome_encoding),
	KUNIT_CASE(aeth_packs_syndrome_and_msn),
	KUNIT_CASE(ext_headers_are_big_endian),
	KUNIT_CASE(opcode_table_valid_set),
	KUNIT_CASE(opcode_table_entries_consistent),
	KUNIT_CASE(opcode_table_uc_is_rc),
	KUNIT_CASE(opcode_table_dc_is_rc),
	KUNIT_CASE(dc_headers_round_trip),
	KUNIT_CASE(opcode_table_known_lengths),
	KUNIT_CASE(wr_to_opcode_agrees_with_table),
	KUNIT_CASE(opcode_to_wr_round_trips),
	KUNIT_CASE(wr_to_opcode_spot_checks),
	KUNIT_CASE(read_resp_opcodes),
	{}
};

static struct kunit_suite srnic_opcode_test_suite = {
	.name = "srnic_opcode",
	.test_cases = srnic_opcode_test_cases,
};

kunit_test_suite(srnic_opcode_test_suite);
