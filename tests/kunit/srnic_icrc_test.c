// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "srnic_icrc": kernel/srnic_icrc.c against real packets.
 *
 * The vectors (srnic_icrc_vectors.h) are RoCEv2 frames captured from Linux
 * 6.1 rdma_rxe talking to itself across a veth pair, over IPv4 and IPv6,
 * with non-zero TOS / traffic class and TTL / hop limit 64, plus two
 * synthetic CNPs. For each:
 *   - the ICRC srnic computes equals the one rxe sent (little-endian);
 *   - the packet parses with the opcode table (lengths, pad, payload);
 *   - changing any byte the ICRC covers changes it; changing only the
 *     fields IBA A17.3.3 masks (TOS/ECN, TTL, IPv4 checksum, IPv6 traffic
 *     class / flow label / hop limit, UDP checksum, FECN/BECN) does not;
 *   - srnic_icrc_skb() on the packet split over a linear head, page frags
 *     at odd offsets and a frag_list, with the network header in or before
 *     skb->data, equals srnic_icrc_buf().
 *
 * Linked into srnic.o when CONFIG_RDMA_SRNIC_KUNIT_TEST=y; run it with
 * tests/kunit/run.sh 'srnic_icrc'.
 */
#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/mm.h>
#include <linux/skbuff.h>

/* Relative to this file: see srnic_port_test.c. */
#include "../../kernel/srnic_compat.h"
#include "../../kernel/srnic_hdr.h"
#include "../../kernel/srnic_opcode.h"
#include "srnic_icrc_vectors.h"

#define SRNIC_ICRC_TEST_UDP_LEN	8

static void srnic_icrc_vec_desc(const struct srnic_icrc_vector *v, char *desc)
{
	strscpy(desc, v->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srnic_icrc_vec, srnic_icrc_vectors, srnic_icrc_vec_desc);

/* Bytes of the ICRC-covered part: everything but the trailing ICRC. */
static unsigned int srnic_icrc_test_covered(const struct srnic_icrc_vector *v)
{
	return v->len - SRNIC_ICRC_LEN;
}

static unsigned int srnic_icrc_test_iphl(const struct srnic_icrc_vector *v)
{
	return v->ipv6 ? 40 : (v->pkt[0] & 0xf) * 4;
}

static u32 srnic_icrc_test_wire(const struct srnic_icrc_vector *v)
{
	return get_unaligned_le32(v->pkt + srnic_icrc_test_covered(v));
}

/* A private, writable copy of a vector, freed with the test. */
static u8 *srnic_icrc_test_copy(struct kunit *test,
				const struct srnic_icrc_vector *v)
{
	u8 *p = kunit_kmalloc(test, v->len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	memcpy(p, v->pkt, v->len);
	return p;
}

/* The 8 ones of the masked LRH, folded into the seed. */
static void icrc_seed_is_crc_of_masked_lrh(struct kunit *test)
{
	static const u8 lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};

	KUNIT_EXPECT_EQ(test, crc32_le(~0U, lrh, sizeof(lrh)),
			SRNIC_ICRC_SEED);
}

static void icrc_matches_rxe(struct kunit *test)
{
	const struct srnic_icrc_vector *v = test->param_value;
	unsigned int n = srnic_icrc_test_covered(v);
	u32 got = srnic_icrc_buf(v->pkt, n);

	KUNIT_EXPECT_EQ_MSG(test, got, srnic_icrc_test_wire(v),
			    "%s: computed %08x, on the wire %4ph", v->name, got,
			    v->pkt + n);
	/* least significant byte first, like the Ethernet FCS */
	KUNIT_EXPECT_EQ(test, v->pkt[n], got & 0xff);
	KUNIT_EXPECT_EQ(test, v->pkt[n + 3], got >> 24);
}

/* The vector parses: IP and UDP lengths, opcode, pad and payload agree. */
static void vector_parses_with_opcode_table(struct kunit *test)
{
	const struct srnic_icrc_vector *v = test->param_value;
	unsigned int iphl = srnic_icrc_test_iphl(v), udp_len, hdr, pad;
	const struct srnic_opcode_info *info;
	const struct srnic_bth *bth;
	const u8 *udp;
	int payload;

	KUNIT_ASSERT_GT(test, v->len, iphl + SRNIC_ICRC_TEST_UDP_LEN +
			SRNIC_BTH_LEN + SRNIC_ICRC_LEN);
	KUNIT_EXPECT_EQ(test, v->pkt[0] >> 4, v->ipv6 ? 6 : 4);
	if (v->ipv6)
		KUNIT_EXPECT_EQ(test, get_unaligned_be16(v->pkt + 4) + 40,
				v->len);
	else
		KUNIT_EXPECT_EQ(test, get_unaligned_be16(v->pkt + 2), v->len);
	KUNIT_EXPECT_EQ(test, v->pkt[v->ipv6 ? 6 : 9], IPPROTO_UDP);

	udp = v->pkt + iphl;
	udp_len = get_unaligned_be16(udp + 4);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(udp + 2), ROCE_V2_UDP_DPORT);
	KUNIT_EXPECT_EQ(test, udp_len, v->len - iphl);

	bth = (const struct srnic_bth *)(udp + SRNIC_ICRC_TEST_UDP_LEN);
	KUNIT_EXPECT_EQ(test, srnic_bth_opcode(bth), v->opcode);
	KUNIT_ASSERT_TRUE_MSG(test, srnic_opcode_valid(v->opcode),
			      "opcode %#x", v->opcode);
	KUNIT_EXPECT_EQ(test, srnic_bth_tver(bth), SRNIC_BTH_TVER);

	info = srnic_opcode_info(v->opcode);
	hdr = srnic_opcode_hdr_len(v->opcode);
	pad = srnic_bth_pad(bth);
	payload = (int)udp_len - SRNIC_ICRC_TEST_UDP_LEN - hdr - pad -
		  SRNIC_ICRC_LEN;
	KUNIT_EXPECT_GE_MSG(test, payload, 0, "%s: %s", v->name, info->name);
	KUNIT_EXPECT_EQ(test, (payload + pad) % 4, 0);
	if (!(info->flags & SRNIC_OPF_PAYLOAD))
		KUNIT_EXPECT_EQ_MSG(test, payload, 0, "%s", info->name);
	if (info->flags & SRNIC_OPF_DETH)
		KUNIT_EXPECT_NE(test, srnic_deth_qkey((const void *)(bth + 1)),
				0U);
}

/* Bits of byte @i that the ICRC replaces by ones (IBA A17.3.3). */
static u8 srnic_icrc_test_masked_bits(const struct srnic_icrc_vector *v,
				      unsigned int i)
{
	unsigned int iphl = srnic_icrc_test_iphl(v);

	if (i == iphl + 6 || i == iphl + 7)		/* UDP checksum */
		return 0xff;
	if (i == iphl + SRNIC_ICRC_TEST_UDP_LEN + SRNIC_BTH_ICRC_MASKED_BYTE)
		return 0xff;				/* FECN/BECN/resv6 */
	if (v->ipv6) {
		if (i == 0)				/* TC, high nibble */
			return 0x0f;
		if (i >= 1 && i <= 3)			/* TC, flow label */
			return 0xff;
		if (i == 7)				/* hop limit */
			return 0xff;
		return 0;
	}
	if (i == 1 || i == 8 || i == 10 || i == 11)	/* TOS, TTL, check */
		return 0xff;
	return 0;
}

/*
 * Flip bits of every covered byte in turn: the ICRC must change unless
 * only masked bits changed. Two patterns: one bit (walking through the
 * bit positions) and the whole byte.
 */
static void icrc_covers_every_unmasked_byte(struct kunit *test)
{
	const struct srnic_icrc_vector *v = test->param_value;
	unsigned int n = srnic_icrc_test_covered(v), i, pass;
	u32 want = srnic_icrc_test_wire(v);
	u8 *p = srnic_icrc_test_copy(test, v);

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			u8 flip = pass ? 0xff : BIT(i & 7);
			u8 keep = ~srnic_icrc_test_masked_bits(v, i);
			bool masked = !(flip & keep);
			u32 got;

			p[i] ^= flip;
			got = srnic_icrc_buf(p, n);
			p[i] ^= flip;
			if (masked)
				KUNIT_EXPECT_EQ_MSG(test, got, want,
						    "%s: byte %u ^ %#x is masked",
						    v->name, i, flip);
			else
				KUNIT_EXPECT_NE_MSG(test, got, want,
						    "%s: byte %u ^ %#x is covered",
						    v->name, i, flip);
		}
	}
}

/* What routers and switches rewrite must not break the ICRC. */
static void icrc_ignores_masked_fields(struct kunit *test)
{
	const struct srnic_icrc_vector *v = test->param_value;
	unsigned int n = srnic_icrc_test_covered(v);
	unsigned int iphl = srnic_icrc_test_iphl(v);
	struct srnic_bth *bth;
	u32 want = srnic_icrc_test_wire(v);
	u8 *p = srnic_icrc_test_copy(test, v);
	u8 *udp = p + iphl;
	unsigned int k;

	bth = (struct srnic_bth *)(udp + SRNIC_ICRC_TEST_UDP_LEN);

	/* k: the ECN codepoint a switch leaves (Not-ECT, ECT(1), ECT(0), CE) */
	for (k = 0; k < 4; k++) {
		if (v->ipv6) {
			/* DSCP 46 + ECN k, flow label 0xfffff - k, hop k */
			p[0] = 0x60 | 0xb;
			p[1] = (0x8 | k) << 4 | 0xf;
			p[2] = 0xff;
			p[3] = 0xff - k;
			p[7] = k;
		} else {
			/* ECN marked by a switch, TTL decremented, new check */
			p[1] = (p[1] & ~0x3) | k;
			p[8] = p[8] - 1 - k;
			put_unaligned_be16(0x1234 + k, p + 10);
		}
		put_unaligned_be16(0xbeef - k, udp + 6);
		srnic_bth_set_ecn(bth, k & 1, k & 2);
		KUNIT_EXPECT_EQ_MSG(test, srnic_icrc_buf(p, n), want,
				    "%s: variant %u", v->name, k);
	}
	/* resv6 is masked too */
	((u8 *)bth)[SRNIC_BTH_ICRC_MASKED_BYTE] = 0x3f;
	KUNIT_EXPECT_EQ(test, srnic_icrc_buf(p, n), want);
	/* but DestQP is not */
	bth->qpn ^= cpu_to_be32(1);
	KUNIT_EXPECT_NE(test, srnic_icrc_buf(p, n), want);
}

/* ------------------------------------------------------------------ skbs */

#define SRNIC_ICRC_TEST_MAX_FRAGS	5

/**
 * struct srnic_icrc_layout - how to spread a packet over an skb
 * @name: for messages
 * @head: bytes in the linear part
 * @frag: sizes of the page frags that follow (0 ends the list); the bytes
 *	left after them go into one last frag, or into @frag_list
 * @pull: bytes to skb_pull() after setting the network header, as the
 *	receive path does with the IP and UDP headers (only if linear)
 * @frag_list: put the rest into a frag_list skb (5 linear bytes + 2 frags)
 */
struct srnic_icrc_layout {
	const char *name;
	unsigned int head;
	unsigned int frag[SRNIC_ICRC_TEST_MAX_FRAGS];
	unsigned int pull;
	bool frag_list;
};

static const struct srnic_icrc_layout srnic_icrc_layouts[] = {
	{ .name = "linear", .head = UINT_MAX },
	{ .name = "linear, 28 bytes pulled", .head = UINT_MAX, .pull = 28 },
	{ .name = "1 byte head", .head = 1, .frag = { 7, 13, 1, 200 } },
	{ .name = "headers across frags", .head = 21, .frag = { 3, 5, 9, 517 } },
	{ .name = "ip in head, rest in frags", .head = 20, .frag = { 331 },
	  .pull = 20 },
	{ .name = "frag_list", .head = 37, .frag = { 11, 301 },
	  .frag_list = true },
	{ .name = "only frag_list", .head = 0, .frag_list = true },
};

/* An odd page offset at which @size bytes still fit in the page. */
static unsigned int srnic_icrc_test_page_off(unsigned int j, unsigned int size)
{
	unsigned int room = PAGE_SIZE - size;

	if (room < 2)
		return 0;
	return ((977 * j + 1) % (room - 1)) | 1;
}

/* Append @len bytes from @src as one page frag at an odd offset. */
static int srnic_icrc_test_add_frag(struct sk_buff *skb, const u8 *src,
				    unsigned int len)
{
	unsigned int i = skb_shinfo(skb)->nr_frags, off;
	struct page *page;

	if (i >= MAX_SKB_FRAGS)
		return -E2BIG;
	page = alloc_page(GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	off = srnic_icrc_test_page_off(i, len);
	memcpy(page_address(page) + off, src, len);
	skb_fill_page_desc(skb, i, page, off, len);	/* skb owns the page */
	skb->len += len;
	skb->data_len += len;
	skb->truesize += PAGE_SIZE;
	return 0;
}

/* A frag_list member: 5 linear bytes (if any), the rest in 2 frags. */
static struct sk_buff *srnic_icrc_test_tail(const u8 *src, unsigned int len)
{
	unsigned int head = min(len, 5U), half;
	struct sk_buff *skb = alloc_skb(head, GFP_KERNEL);

	if (!skb)
		return NULL;
	skb_put_data(skb, src, head);
	src += head;
	len -= head;
	half = len / 2;
	if ((half && srnic_icrc_test_add_frag(skb, src, half)) ||
	    (len - half && srnic_icrc_test_add_frag(skb, src + half,
						    len - half))) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/*
 * Build @pkt (@len bytes) into an skb as @l says. The skb owns every page
 * and the frag_list; kfree_skb() frees it all.
 */
static struct sk_buff *srnic_icrc_test_build(const u8 *pkt, unsigned int len,
					     const struct srnic_icrc_layout *l)
{
	unsigned int head = min(l->head, len), done, j;
	struct sk_buff *skb;

	/* odd headroom, so the IP header is not aligned either */
	skb = alloc_skb(head + 3, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, 3);
	skb_put_data(skb, pkt, head);
	skb_reset_network_header(skb);
	done = head;

	for (j = 0; j < SRNIC_ICRC_TEST_MAX_FRAGS && l->frag[j]; j++) {
		unsigned int n = min(l->frag[j], len - done);

		if (!n)
			break;
		if (srnic_icrc_test_add_frag(skb, pkt + done, n))
			goto err;
		done += n;
	}

	if (done < len && l->frag_list) {
		struct sk_buff *tail = srnic_icrc_test_tail(pkt + done,
							    len - done);

		if (!tail)
			goto err;
		skb_shinfo(skb)->frag_list = tail;
		skb->len += tail->len;
		skb->data_len += tail->len;
		skb->truesize += tail->truesize;
		done = len;
	} else if (done < len) {
		if (srnic_icrc_test_add_frag(skb, pkt + done, len - done))
			goto err;
		done = len;
	}

	if (l->pull && l->pull <= skb_headlen(skb))
		skb_pull(skb, l->pull);
	return skb;

err:
	kfree_skb(skb);
	return NULL;
}

static void icrc_skb_equals_buf_when_split(struct kunit *test)
{
	const struct srnic_icrc_vector *v = test->param_value;
	unsigned int n = srnic_icrc_test_covered(v), i;
	u32 want = srnic_icrc_test_wire(v);

	KUNIT_ASSERT_EQ(test, srnic_icrc_buf(v->pkt, n), want);

	for (i = 0; i < ARRAY_SIZE(srnic_icrc_layouts); i++) {
		const struct srnic_icrc_layout *l = &srnic_icrc_layouts[i];
		struct sk_buff *skb = srnic_icrc_test_build(v->pkt, v->len, l);
		u32 got, all;
		int noff;

		KUNIT_ASSERT_NOT_NULL_MSG(test, skb, "%s", l->name);
		noff = skb_network_offset(skb);
		got = srnic_icrc_skb(skb, n);
		/* a too-long @len covers what the skb holds: the whole packet */
		all = srnic_icrc_skb(skb, v->len + 100);
		kfree_skb(skb);

		KUNIT_EXPECT_EQ_MSG(test, got, want,
				    "%s, layout \"%s\" (network offset %d)",
				    v->name, l->name, noff);
		KUNIT_EXPECT_EQ_MSG(test, all, srnic_icrc_buf(v->pkt, v->len),
				    "%s, layout \"%s\", clamped", v->name,
				    l->name);
	}
}

/* Headers that do not parse are CRC'ed raw, without reading past @len. */
static void icrc_unparsable_packets_are_not_masked(struct kunit *test)
{
	const struct srnic_icrc_vector *v = &srnic_icrc_vectors[0];
	const struct srnic_icrc_layout linear = { .head = UINT_MAX };
	u8 *p = srnic_icrc_test_copy(test, v);
	unsigned int n = srnic_icrc_test_covered(v), cut;
	struct sk_buff *skb;

	KUNIT_ASSERT_FALSE(test, v->ipv6);
	KUNIT_EXPECT_EQ(test, srnic_icrc_buf(p, 0), ~SRNIC_ICRC_SEED);

	/* shorter than IPv4 + UDP + BTH: nothing masked */
	for (cut = 1; cut < 40; cut++) {
		u8 *tail = kunit_kmalloc(test, cut, GFP_KERNEL);

		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, tail);
		memcpy(tail, p, cut);	/* KASAN flags any read past @cut */
		KUNIT_EXPECT_EQ(test, srnic_icrc_buf(tail, cut),
				~crc32_le(SRNIC_ICRC_SEED, tail, cut));
		skb = srnic_icrc_test_build(tail, cut, &linear);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		KUNIT_EXPECT_EQ(test, srnic_icrc_skb(skb, cut),
				srnic_icrc_buf(tail, cut));
		kfree_skb(skb);
	}
	/* exactly IPv4 + UDP + BTH is masked */
	KUNIT_EXPECT_NE(test, srnic_icrc_buf(p, 40),
			~crc32_le(SRNIC_ICRC_SEED, p, 40));

	/* IP version 5, or an IHL below 5: raw */
	p[0] = 0x55;
	KUNIT_EXPECT_EQ(test, srnic_icrc_buf(p, n),
			~crc32_le(SRNIC_ICRC_SEED, p, n));
	p[0] = 0x44;
	KUNIT_EXPECT_EQ(test, srnic_icrc_buf(p, n),
			~crc32_le(SRNIC_ICRC_SEED, p, n));
	skb = srnic_icrc_test_build(p, n, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srnic_icrc_skb(skb, n), srnic_icrc_buf(p, n));
	kfree_skb(skb);
}

/* srnic_bth_init() builds the CNP of the synthetic vectors byte for byte. */
static void cnp_built_by_srnic_matches_vector(struct kunit *test)
{
	static const u8 zeros[SRNIC_CNP_RSVD_LEN];
	unsigned int i, found = 0;

	for (i = 0; i < ARRAY_SIZE(srnic_icrc_vectors); i++) {
		const struct srnic_icrc_vector *v = &srnic_icrc_vectors[i];
		unsigned int off = srnic_icrc_test_iphl(v) +
				   SRNIC_ICRC_TEST_UDP_LEN;
		unsigned int n = srnic_icrc_test_covered(v);
		struct srnic_cnp cnp;
		u8 *p;

		if (v->opcode != SRNIC_OPCODE_CNP)
			continue;
		found++;
		KUNIT_ASSERT_EQ(test, off + SRNIC_CNP_LEN, n);

		memset(&cnp, 0, sizeof(cnp));
		srnic_bth_init(&cnp.bth, SRNIC_OPCODE_CNP, false, false, 0,
			       SRNIC_PKEY_DEFAULT, 0x11, false, 0);
		srnic_bth_set_ecn(&cnp.bth, false, true);
		KUNIT_EXPECT_EQ_MSG(test,
				    memcmp(&cnp, v->pkt + off, sizeof(cnp)), 0,
				    "%s: built %*ph", v->name,
				    (int)sizeof(cnp), &cnp);
		KUNIT_EXPECT_EQ(test, memcmp(cnp.rsvd, zeros, sizeof(zeros)),
				0);

		/* sender side: store the ICRC as the wire wants it */
		p = srnic_icrc_test_copy(test, v);
		memset(p + n, 0, SRNIC_ICRC_LEN);
		put_unaligned_le32(srnic_icrc_buf(p, n), p + n);
		KUNIT_EXPECT_EQ(test, memcmp(p, v->pkt, v->len), 0);
	}
	KUNIT_EXPECT_EQ(test, found, 2U);
}

static struct kunit_case srnic_icrc_test_cases[] = {
	KUNIT_CASE(icrc_seed_is_crc_of_masked_lrh),
	KUNIT_CASE_PARAM(icrc_matches_rxe, srnic_icrc_vec_gen_params),
	KUNIT_CASE_PARAM(vector_parses_with_opcode_table,
			 srnic_icrc_vec_gen_params),
	KUNIT_CASE_PARAM(icrc_covers_every_unmasked_byte,
			 srnic_icrc_vec_gen_params),
	KUNIT_CASE_PARAM(icrc_ignores_masked_fields, srnic_icrc_vec_gen_params),
	KUNIT_CASE_PARAM(icrc_skb_equals_buf_when_split,
			 srnic_icrc_vec_gen_params),
	KUNIT_CASE(icrc_unparsable_packets_are_not_masked),
	KUNIT_CASE(cnp_built_by_srnic_matches_vector),
	{}
};

static struct kunit_suite srnic_icrc_test_suite = {
	.name = "srnic_icrc",
	.test_cases = srnic_icrc_test_cases,
};

kunit_test_suite(srnic_icrc_test_suite);
