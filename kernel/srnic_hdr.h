/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic wire format: the InfiniBand transport headers carried by RoCEv2
 * (IBA Vol 1 ch. 9 and Annex A17), as they appear after the UDP header:
 *
 *   IPv4/IPv6 | UDP (dport 4791) | BTH | [ext headers] | payload | pad | ICRC
 *
 * Every multi-byte field is big-endian on the wire except the ICRC, which is
 * sent least-significant byte first (see srnic_icrc_buf()). The structs are
 * __packed because a header may start at any byte offset (on x86
 * NET_IP_ALIGN is 0, so the BTH usually sits at 2 mod 4), and their fields
 * are __be so that sparse catches a missing conversion; use the accessors.
 */
#ifndef SRNIC_HDR_H
#define SRNIC_HDR_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>
#include <asm/byteorder.h>

#include "srnic_compat.h"

struct sk_buff;

/* ------------------------------------------------------------------ BTH */

/**
 * struct srnic_bth - Base Transport Header (IBA 9.2), 12 bytes
 * @opcode: transport (bits 7:5) and operation (bits 4:0)
 * @flags: SE (bit 7), MigReq (bit 6), PadCnt (bits 5:4), TVer (bits 3:0)
 * @pkey: partition key
 * @qpn: FECN (bit 31), BECN (bit 30), reserved (29:24), DestQP (23:0);
 *	bits 31:24 are the byte masked to ones by the ICRC
 * @apsn: AckReq (bit 31), reserved (30:24), PSN (23:0)
 */
struct srnic_bth {
	u8	opcode;
	u8	flags;
	__be16	pkey;
	__be32	qpn;
	__be32	apsn;
} __packed;

#define SRNIC_BTH_SE		BIT(7)
#define SRNIC_BTH_MIG		BIT(6)
#define SRNIC_BTH_PAD_SHIFT	4
#define SRNIC_BTH_PAD_MASK	(0x3 << SRNIC_BTH_PAD_SHIFT)
#define SRNIC_BTH_TVER_MASK	0xf
/* IBA 9.2.5: the only defined transport header version */
#define SRNIC_BTH_TVER		0

#define SRNIC_BTH_FECN		BIT(31)
#define SRNIC_BTH_BECN		BIT(30)
#define SRNIC_BTH_ACKREQ	BIT(31)

/* Byte of the BTH (FECN, BECN, resv6) that the ICRC covers as all ones. */
#define SRNIC_BTH_ICRC_MASKED_BYTE 4

#define SRNIC_QPN_MASK		0xffffffU
/* DestQP of multicast packets (IBA 9.2.4) */
#define SRNIC_MULTICAST_QPN	0xffffffU
/* Default partition key: full member of the default partition. */
#define SRNIC_PKEY_DEFAULT	0xffff
#define SRNIC_PKEY_FULL_MEMBER	0x8000
#define SRNIC_PKEY_BASE_MASK	0x7fff

/* ------------------------------------------------------ extension headers */

/**
 * struct srnic_reth - RDMA Extended Transport Header (IBA 9.3.3), 16 bytes
 * @va: remote virtual address
 * @rkey: remote key
 * @len: DMA length of the whole message
 */
struct srnic_reth {
	__be64	va;
	__be32	rkey;
	__be32	len;
} __packed;

/**
 * struct srnic_aeth - ACK Extended Transport Header (IBA 9.3.5), 4 bytes
 * @smsn: syndrome (bits 31:24) and MSN (bits 23:0)
 */
struct srnic_aeth {
	__be32	smsn;
} __packed;

/**
 * struct srnic_atmeth - Atomic Extended Transport Header (IBA 9.3.4), 28 bytes
 * @va: remote virtual address (8-byte aligned)
 * @rkey: remote key
 * @swap_add: swap value (CmpSwap) or add value (FetchAdd)
 * @cmp: compare value (CmpSwap only)
 */
struct srnic_atmeth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;
	__be64	cmp;
} __packed;

/**
 * struct srnic_atmack - Atomic ACK Extended Transport Header (IBA 9.5.3), 8 B
 * @orig: the original remote data
 */
struct srnic_atmack {
	__be64	orig;
} __packed;

/**
 * struct srnic_deth - Datagram Extended Transport Header (IBA 9.3.2), 8 bytes
 * @qkey: queue key
 * @sqp: reserved (bits 31:24) and source QP (bits 23:0)
 */
struct srnic_deth {
	__be32	qkey;
	__be32	sqp;
} __packed;

/**
 * struct srnic_xrceth - XRC Extended Transport Header (IBA Annex A14), 4 bytes
 * @srqn: reserved (bits 31:24) and the XRC SRQ number at the responder
 *	(23:0); follows the BTH of every XRC request, before RETH/AtomicETH
 */
struct srnic_xrceth {
	__be32	srqn;
} __packed;

/**
 * struct srnic_dceth - DC Extended Transport Header (docs/dc.md), 16 bytes
 * @key: the DCT's access key
 * @fdci: flags (bits 31:24: SRNIC_DCETH_ATTACH, and in an ATTACH packet
 *	the initiator's retransmission horizon, log2 ms, in bits 28:24) and
 *	the DCI number (23:0)
 * @gen: the attachment generation
 *
 * Follows the BTH of every DC initiator-to-target packet (requests and
 * DETACH), before RETH/AtomicETH/ImmDt.
 */
struct srnic_dceth {
	__be64	key;
	__be32	fdci;
	__be32	gen;
} __packed;

/**
 * struct srnic_dcreth - DC Response Extended Transport Header, 8 bytes
 * @dctn: reserved (bits 31:24) and the DCT number (23:0)
 * @gen: the attachment generation the response belongs to
 *
 * Follows the BTH of every DC target-to-initiator packet (ACK, READ
 * responses, atomic ACK, DETACH ACK), before the AETH.
 */
struct srnic_dcreth {
	__be32	dctn;
	__be32	gen;
} __packed;

/**
 * struct srnic_immdt - Immediate Data Extended Transport Header (IBA 9.3.6)
 * @imm: immediate data, opaque (passed to ib_wc.ex.imm_data as is)
 */
struct srnic_immdt {
	__be32	imm;
} __packed;

/**
 * struct srnic_ieth - Invalidate Extended Transport Header (IBA 9.3.7)
 * @rkey: the R_Key to invalidate
 */
struct srnic_ieth {
	__be32	rkey;
} __packed;

/**
 * struct srnic_cnp - RoCEv2 Congestion Notification Packet (Annex A17.9.3)
 * @bth: opcode 0x81, BECN set, DestQP = the QP that must slow down, PSN 0
 * @rsvd: 16 reserved bytes, sent as zero
 */
struct srnic_cnp {
	struct srnic_bth	bth;
	u8			rsvd[16];
} __packed;

enum srnic_hdr_len {
	SRNIC_BTH_LEN		= 12,
	SRNIC_RETH_LEN		= 16,
	SRNIC_AETH_LEN		= 4,
	SRNIC_ATMETH_LEN	= 28,
	SRNIC_ATMACK_LEN	= 8,
	SRNIC_DETH_LEN		= 8,
	SRNIC_IMMDT_LEN		= 4,
	SRNIC_IETH_LEN		= 4,
	SRNIC_XRCETH_LEN	= 4,
	SRNIC_DCETH_LEN		= 16,
	SRNIC_DCRETH_LEN	= 8,
	SRNIC_CNP_RSVD_LEN	= 16,
	SRNIC_CNP_LEN		= 28,
	SRNIC_ICRC_LEN		= 4,
};

static_assert(sizeof(struct srnic_bth) == SRNIC_BTH_LEN);
static_assert(sizeof(struct srnic_reth) == SRNIC_RETH_LEN);
static_assert(sizeof(struct srnic_aeth) == SRNIC_AETH_LEN);
static_assert(sizeof(struct srnic_atmeth) == SRNIC_ATMETH_LEN);
static_assert(sizeof(struct srnic_atmack) == SRNIC_ATMACK_LEN);
static_assert(sizeof(struct srnic_deth) == SRNIC_DETH_LEN);
static_assert(sizeof(struct srnic_immdt) == SRNIC_IMMDT_LEN);
static_assert(sizeof(struct srnic_ieth) == SRNIC_IETH_LEN);
static_assert(sizeof(struct srnic_xrceth) == SRNIC_XRCETH_LEN);
static_assert(sizeof(struct srnic_dceth) == SRNIC_DCETH_LEN);
static_assert(sizeof(struct srnic_dcreth) == SRNIC_DCRETH_LEN);
static_assert(sizeof(struct srnic_cnp) == SRNIC_CNP_LEN);

/* ------------------------------------------------------------ PSN helpers */

#define SRNIC_PSN_MASK		0xffffffU

/**
 * srnic_psn_add() - advance a 24-bit PSN
 * @psn: packet sequence number
 * @n: increment (any u32; taken modulo 2^24)
 *
 * Return: (@psn + @n) mod 2^24.
 */
static inline u32 srnic_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SRNIC_PSN_MASK;
}

/**
 * srnic_psn_cmp() - compare two 24-bit PSNs modulo 2^24
 * @a: first PSN
 * @b: second PSN
 *
 * IBA 9.7.1 splits the PSN space in two halves around a reference: a PSN is
 * "after" @b when it lies in the 2^23 PSNs following @b, "before" when it
 * lies in the 2^23 preceding it. Shifting the 24-bit difference into the top
 * of an s32 gives exactly that (bits above 23 of @a and @b are ignored). At
 * the ambiguous distance of exactly 2^23, @a counts as before @b.
 *
 * Return: <0 if @a is before @b, 0 if equal, >0 if @a is after @b.
 */
static inline int srnic_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

/* ------------------------------------------------------------ BTH access */

static inline u8 srnic_bth_opcode(const struct srnic_bth *bth)
{
	return bth->opcode;
}

static inline bool srnic_bth_se(const struct srnic_bth *bth)
{
	return bth->flags & SRNIC_BTH_SE;
}

static inline bool srnic_bth_mig(const struct srnic_bth *bth)
{
	return bth->flags & SRNIC_BTH_MIG;
}

/**
 * srnic_bth_pad() - PadCnt: bytes of padding after the payload
 * @bth: the BTH
 *
 * Return: 0..3.
 */
static inline unsigned int srnic_bth_pad(const struct srnic_bth *bth)
{
	return (bth->flags & SRNIC_BTH_PAD_MASK) >> SRNIC_BTH_PAD_SHIFT;
}

static inline unsigned int srnic_bth_tver(const struct srnic_bth *bth)
{
	return bth->flags & SRNIC_BTH_TVER_MASK;
}

static inline u16 srnic_bth_pkey(const struct srnic_bth *bth)
{
	return be16_to_cpu(bth->pkey);
}

static inline bool srnic_bth_fecn(const struct srnic_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SRNIC_BTH_FECN;
}

static inline bool srnic_bth_becn(const struct srnic_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SRNIC_BTH_BECN;
}

static inline u32 srnic_bth_qpn(const struct srnic_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SRNIC_QPN_MASK;
}

static inline bool srnic_bth_ackreq(const struct srnic_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SRNIC_BTH_ACKREQ;
}

static inline u32 srnic_bth_psn(const struct srnic_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SRNIC_PSN_MASK;
}

/**
 * srnic_pad_count() - PadCnt for a payload (IBA 9.2.3)
 * @payload_len: payload bytes
 *
 * Return: bytes of zero padding that make @payload_len a multiple of 4.
 */
static inline unsigned int srnic_pad_count(unsigned int payload_len)
{
	return -payload_len & 0x3;
}

/**
 * srnic_bth_init() - fill in a whole BTH
 * @bth: header to write
 * @opcode: BTH opcode
 * @se: solicited event
 * @mig: MigReq (IBA 9.2.4, APM migration state); rdma_rxe 6.1 always
 *	sends 0 and receivers ignore it
 * @pad: PadCnt, 0..3
 * @pkey: partition key
 * @qpn: destination QP (24 bits)
 * @ackreq: AckReq
 * @psn: packet sequence number (24 bits)
 *
 * TVer is 0; FECN, BECN and every reserved bit are 0.
 */
static inline void srnic_bth_init(struct srnic_bth *bth, u8 opcode, bool se,
				  bool mig, unsigned int pad, u16 pkey,
				  u32 qpn, bool ackreq, u32 psn)
{
	bth->opcode = opcode;
	bth->flags = (se ? SRNIC_BTH_SE : 0) | (mig ? SRNIC_BTH_MIG : 0) |
		     ((pad << SRNIC_BTH_PAD_SHIFT) & SRNIC_BTH_PAD_MASK) |
		     SRNIC_BTH_TVER;
	bth->pkey = cpu_to_be16(pkey);
	bth->qpn = cpu_to_be32(qpn & SRNIC_QPN_MASK);
	bth->apsn = cpu_to_be32((ackreq ? SRNIC_BTH_ACKREQ : 0) |
				(psn & SRNIC_PSN_MASK));
}

/**
 * srnic_bth_set_ecn() - set or clear FECN/BECN, keeping the DestQP
 * @bth: the BTH
 * @fecn: forward explicit congestion notification
 * @becn: backward explicit congestion notification (set in CNPs)
 */
static inline void srnic_bth_set_ecn(struct srnic_bth *bth, bool fecn,
				     bool becn)
{
	u32 v = be32_to_cpu(bth->qpn) & ~(SRNIC_BTH_FECN | SRNIC_BTH_BECN);

	bth->qpn = cpu_to_be32(v | (fecn ? SRNIC_BTH_FECN : 0) |
			       (becn ? SRNIC_BTH_BECN : 0));
}

static inline void srnic_bth_set_psn(struct srnic_bth *bth, u32 psn)
{
	u32 v = be32_to_cpu(bth->apsn) & ~SRNIC_PSN_MASK;

	bth->apsn = cpu_to_be32(v | (psn & SRNIC_PSN_MASK));
}

static inline void srnic_bth_set_ackreq(struct srnic_bth *bth, bool ackreq)
{
	u32 v = be32_to_cpu(bth->apsn) & ~SRNIC_BTH_ACKREQ;

	bth->apsn = cpu_to_be32(v | (ackreq ? SRNIC_BTH_ACKREQ : 0));
}

/* ----------------------------------------------------------------- AETH */

/*
 * AETH syndrome (IBA 9.7.5.1, table 42): bit 7 reserved (0), bits 6:5 the
 * type, bits 4:0 a value whose meaning depends on the type: the credit count
 * of an ACK, the timer code of an RNR NAK, the NAK code of a NAK.
 */
enum srnic_aeth_type {
	SRNIC_AETH_ACK		= 0,
	SRNIC_AETH_RNR_NAK	= 1,
	SRNIC_AETH_RESERVED	= 2,
	SRNIC_AETH_NAK		= 3,
};

enum srnic_nak_code {
	SRNIC_NAK_PSN_SEQ_ERR		= 0,
	SRNIC_NAK_INVALID_REQ		= 1,
	SRNIC_NAK_REM_ACCESS_ERR	= 2,
	SRNIC_NAK_REM_OP_ERR		= 3,
	SRNIC_NAK_INVALID_RD_REQ	= 4,
	/* DC only (docs/dc.md): the target has no attachment for the request */
	SRNIC_NAK_DC_NO_ATTACH		= 0x1f,
};

#define SRNIC_AETH_TYPE_SHIFT	5
#define SRNIC_AETH_VALUE_MASK	0x1f
/* ACK credit count 0x1f: "invalid", i.e. no end-to-end flow control */
#define SRNIC_AETH_CREDIT_INVALID 0x1f
#define SRNIC_AETH_MSN_MASK	0xffffffU

static inline u8 srnic_aeth_syn(enum srnic_aeth_type type, unsigned int value)
{
	return (type & 0x3) << SRNIC_AETH_TYPE_SHIFT |
	       (value & SRNIC_AETH_VALUE_MASK);
}

/**
 * srnic_aeth_syn_ack() - syndrome of a positive ACK
 * @credits: credit count code (IBA table 43), or SRNIC_AETH_CREDIT_INVALID
 *
 * Return: the syndrome byte.
 */
static inline u8 srnic_aeth_syn_ack(unsigned int credits)
{
	return srnic_aeth_syn(SRNIC_AETH_ACK, credits);
}

/**
 * srnic_aeth_syn_rnr() - syndrome of an RNR NAK
 * @timer: 5-bit RNR timer code (IBA table 45; the ib_verbs min_rnr_timer)
 *
 * Return: the syndrome byte.
 */
static inline u8 srnic_aeth_syn_rnr(unsigned int timer)
{
	return srnic_aeth_syn(SRNIC_AETH_RNR_NAK, timer);
}

static inline u8 srnic_aeth_syn_nak(enum srnic_nak_code code)
{
	return srnic_aeth_syn(SRNIC_AETH_NAK, code);
}

static inline enum srnic_aeth_type srnic_aeth_syn_type(u8 syn)
{
	return (syn >> SRNIC_AETH_TYPE_SHIFT) & 0x3;
}

static inline unsigned int srnic_aeth_syn_value(u8 syn)
{
	return syn & SRNIC_AETH_VALUE_MASK;
}

/**
 * srnic_aeth_syn_valid() - is a received syndrome one we can act on?
 * @syn: syndrome byte
 *
 * Return: false for the reserved bit 7, the reserved type 2 and the
 * reserved NAK codes (5..31); true otherwise.
 */
static inline bool srnic_aeth_syn_valid(u8 syn)
{
	if (syn & BIT(7))
		return false;
	switch (srnic_aeth_syn_type(syn)) {
	case SRNIC_AETH_ACK:
	case SRNIC_AETH_RNR_NAK:
		return true;
	case SRNIC_AETH_NAK:
		return srnic_aeth_syn_value(syn) <= SRNIC_NAK_INVALID_RD_REQ;
	default:
		return false;
	}
}

static inline void srnic_aeth_set(struct srnic_aeth *aeth, u8 syn, u32 msn)
{
	aeth->smsn = cpu_to_be32((u32)syn << 24 | (msn & SRNIC_AETH_MSN_MASK));
}

static inline u8 srnic_aeth_syndrome(const struct srnic_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) >> 24;
}

static inline u32 srnic_aeth_msn(const struct srnic_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) & SRNIC_AETH_MSN_MASK;
}

/* -------------------------------------------------------- other headers */

static inline void srnic_reth_set(struct srnic_reth *reth, u64 va, u32 rkey,
				  u32 len)
{
	reth->va = cpu_to_be64(va);
	reth->rkey = cpu_to_be32(rkey);
	reth->len = cpu_to_be32(len);
}

static inline u64 srnic_reth_va(const struct srnic_reth *reth)
{
	return be64_to_cpu(reth->va);
}

static inline u32 srnic_reth_rkey(const struct srnic_reth *reth)
{
	return be32_to_cpu(reth->rkey);
}

static inline u32 srnic_reth_len(const struct srnic_reth *reth)
{
	return be32_to_cpu(reth->len);
}

static inline void srnic_atmeth_set(struct srnic_atmeth *a, u64 va, u32 rkey,
				    u64 swap_add, u64 cmp)
{
	a->va = cpu_to_be64(va);
	a->rkey = cpu_to_be32(rkey);
	a->swap_add = cpu_to_be64(swap_add);
	a->cmp = cpu_to_be64(cmp);
}

static inline u64 srnic_atmeth_va(const struct srnic_atmeth *a)
{
	return be64_to_cpu(a->va);
}

static inline u32 srnic_atmeth_rkey(const struct srnic_atmeth *a)
{
	return be32_to_cpu(a->rkey);
}

static inline u64 srnic_atmeth_swap_add(const struct srnic_atmeth *a)
{
	return be64_to_cpu(a->swap_add);
}

static inline u64 srnic_atmeth_cmp(const struct srnic_atmeth *a)
{
	return be64_to_cpu(a->cmp);
}

static inline void srnic_atmack_set(struct srnic_atmack *a, u64 orig)
{
	a->orig = cpu_to_be64(orig);
}

static inline u64 srnic_atmack_orig(const struct srnic_atmack *a)
{
	return be64_to_cpu(a->orig);
}

static inline void srnic_deth_set(struct srnic_deth *deth, u32 qkey, u32 sqp)
{
	deth->qkey = cpu_to_be32(qkey);
	deth->sqp = cpu_to_be32(sqp & SRNIC_QPN_MASK);
}

static inline u32 srnic_deth_qkey(const struct srnic_deth *deth)
{
	return be32_to_cpu(deth->qkey);
}

static inline u32 srnic_deth_sqp(const struct srnic_deth *deth)
{
	return be32_to_cpu(deth->sqp) & SRNIC_QPN_MASK;
}

/* ImmDt is opaque: it keeps network order end to end (ib_wc.ex.imm_data). */
static inline __be32 srnic_immdt_imm(const struct srnic_immdt *immdt)
{
	return immdt->imm;
}

static inline u32 srnic_ieth_rkey(const struct srnic_ieth *ieth)
{
	return be32_to_cpu(ieth->rkey);
}

static inline u32 srnic_xrceth_srqn(const struct srnic_xrceth *xrceth)
{
	return be32_to_cpu(xrceth->srqn) & SRNIC_QPN_MASK;
}

static inline void srnic_xrceth_set(void *p, u32 srqn)
{
	struct srnic_xrceth *xrceth = p;

	xrceth->srqn = cpu_to_be32(srqn & SRNIC_QPN_MASK);
}

/* ------------------------------------------------------------------- DC */

/* DCETH flags (the top byte of srnic_dceth.fdci) */
#define SRNIC_DCETH_ATTACH	0x80
#define SRNIC_DCETH_HORIZON	0x1f

static inline u64 srnic_dceth_key(const struct srnic_dceth *d)
{
	return get_unaligned_be64(&d->key);
}

static inline u8 srnic_dceth_flags(const struct srnic_dceth *d)
{
	return get_unaligned_be32(&d->fdci) >> 24;
}

static inline u32 srnic_dceth_dci(const struct srnic_dceth *d)
{
	return get_unaligned_be32(&d->fdci) & SRNIC_QPN_MASK;
}

static inline u32 srnic_dceth_gen(const struct srnic_dceth *d)
{
	return get_unaligned_be32(&d->gen);
}

static inline void srnic_dceth_set(void *p, u64 key, u8 flags, u32 dci,
				   u32 gen)
{
	struct srnic_dceth *d = p;

	put_unaligned_be64(key, &d->key);
	put_unaligned_be32((u32)flags << 24 | (dci & SRNIC_QPN_MASK), &d->fdci);
	put_unaligned_be32(gen, &d->gen);
}

static inline u32 srnic_dcreth_dctn(const struct srnic_dcreth *d)
{
	return get_unaligned_be32(&d->dctn) & SRNIC_QPN_MASK;
}

static inline u32 srnic_dcreth_gen(const struct srnic_dcreth *d)
{
	return get_unaligned_be32(&d->gen);
}

static inline void srnic_dcreth_set(void *p, u32 dctn, u32 gen)
{
	struct srnic_dcreth *d = p;

	put_unaligned_be32(dctn & SRNIC_QPN_MASK, &d->dctn);
	put_unaligned_be32(gen, &d->gen);
}

/* ------------------------------------------------------------------ ICRC */

/*
 * CRC-32 state after the 8 all-ones bytes that stand for the masked LRH
 * (IBA A17.3.3): crc32_le(~0, {0xff x 8}). The ICRC computation continues
 * from here with the masked IP/UDP/BTH headers.
 */
#define SRNIC_ICRC_SEED		0xdebb20e3U

/* srnic_icrc.c */
u32 srnic_icrc_buf(const void *pkt, unsigned int len);
u32 srnic_icrc_skb(const struct sk_buff *skb, unsigned int len);

#endif /* SRNIC_HDR_H */
