/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic opcodes: what each BTH opcode means (IBA 9.2.1, table 38; RoCEv2
 * CNP from Annex A17.9.3) and which opcode a requester sends for a work
 * request.
 *
 * The opcode byte is transport (bits 7:5) | operation (bits 4:0); the
 * numeric values are those of <rdma/ib_pack.h> (IB_OPCODE_RC_SEND_FIRST and
 * friends), plus SRNIC_OPCODE_CNP and the XRC transport (Annex A14:
 * transport 0x5, the operations of RC; <rdma/ib_pack.h> has no XRC
 * opcodes, so SRNIC_OPCODE_XRC | IB_OPCODE_<op>). srnic speaks RC, UC, UD,
 * XRC and CNP; RD and the 6.2+ FLUSH / ATOMIC_WRITE opcodes are invalid
 * here, as are all others that the table leaves empty: the RX path drops
 * them. XRC requests carry an XRCETH right after the BTH; XRC responses
 * (ACK, READ response, atomic ACK) are laid out as RC's.
 */
#ifndef SRNIC_OPCODE_H
#define SRNIC_OPCODE_H

#include <linux/bits.h>
#include <linux/types.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "srnic_hdr.h"

/* RoCEv2 CNP: transport IB_OPCODE_CNP (0x80), operation 1 */
#define SRNIC_OPCODE_CNP	(IB_OPCODE_CNP | 0x01)
/* XRC transport (IBA Annex A14): opcode bits 7:5 = 101 */
#define SRNIC_OPCODE_XRC	0xa0
/*
 * DC (docs/dc.md): the manufacturer-specific transport 110b; the low five
 * bits are RC's operation, plus DETACH and DETACH ACK.
 */
#define SRNIC_OPCODE_DC		0xc0
#define SRNIC_OPCODE_DC_DETACH	0xde
#define SRNIC_OPCODE_DC_DETACH_ACK 0xdf
/* the operation (low five bits) of an RC, XRC or DC opcode */
#define SRNIC_OPCODE_OP_MASK	0x1f
#define SRNIC_NUM_OPCODES	256

/**
 * enum srnic_transport - BTH transport field (opcode bits 7:5)
 * @SRNIC_TRANSPORT_RC: reliable connected
 * @SRNIC_TRANSPORT_UC: unreliable connected
 * @SRNIC_TRANSPORT_UD: unreliable datagram
 * @SRNIC_TRANSPORT_CNP: RoCEv2 congestion notification
 * @SRNIC_TRANSPORT_XRC: extended reliable connected
 * @SRNIC_TRANSPORT_DC: dynamically connected (srnic's, native mode only)
 */
enum srnic_transport {
	SRNIC_TRANSPORT_RC	= IB_OPCODE_RC >> 5,
	SRNIC_TRANSPORT_UC	= IB_OPCODE_UC >> 5,
	SRNIC_TRANSPORT_UD	= IB_OPCODE_UD >> 5,
	SRNIC_TRANSPORT_CNP	= IB_OPCODE_CNP >> 5,
	SRNIC_TRANSPORT_XRC	= SRNIC_OPCODE_XRC >> 5,
	SRNIC_TRANSPORT_DC	= SRNIC_OPCODE_DC >> 5,
};

/**
 * enum srnic_pkt_pos - place of a packet in its message
 * @SRNIC_POS_MIDDLE: neither first nor last
 * @SRNIC_POS_FIRST: first of several
 * @SRNIC_POS_LAST: last of several
 * @SRNIC_POS_ONLY: the whole message (also every single-packet operation:
 *	READ request, atomics, ACKs, CNP)
 *
 * The values are two bits, "starts a message" and "ends a message", so
 * (pos & SRNIC_POS_FIRST) and (pos & SRNIC_POS_LAST) test for each.
 */
enum srnic_pkt_pos {
	SRNIC_POS_MIDDLE	= 0,
	SRNIC_POS_FIRST		= 1,
	SRNIC_POS_LAST		= 2,
	SRNIC_POS_ONLY		= SRNIC_POS_FIRST | SRNIC_POS_LAST,
};

/**
 * enum srnic_opf - srnic_opcode_info.flags
 * @SRNIC_OPF_RETH: an RETH follows the BTH
 * @SRNIC_OPF_AETH: an AETH follows
 * @SRNIC_OPF_ATMETH: an AtomicETH follows
 * @SRNIC_OPF_ATMACK: an AtomicAckETH follows
 * @SRNIC_OPF_DETH: a DETH follows
 * @SRNIC_OPF_IMMDT: an ImmDt follows
 * @SRNIC_OPF_IETH: an IETH follows
 * @SRNIC_OPF_CNP_RSVD: the 16 reserved bytes of a CNP follow
 * @SRNIC_OPF_XRCETH: an XRCETH follows (first, right after the BTH)
 * @SRNIC_OPF_DCETH: a DCETH follows (first, right after the BTH)
 * @SRNIC_OPF_DCRETH: a DCRETH follows (first, right after the BTH)
 * @SRNIC_OPF_HDR_MASK: all of the above
 * @SRNIC_OPF_PAYLOAD: the packet may carry payload
 * @SRNIC_OPF_REQ: sent by a requester (handled by the responder)
 * @SRNIC_OPF_RESP: sent by a responder (handled by the completer)
 * @SRNIC_OPF_SEND: part of a SEND message
 * @SRNIC_OPF_WRITE: part of an RDMA WRITE message
 * @SRNIC_OPF_READ: RDMA READ request or response
 * @SRNIC_OPF_ATOMIC: atomic request or atomic ACK
 * @SRNIC_OPF_RWR: consumes a receive WQE (first/only of a SEND, WRITE with
 *	immediate)
 * @SRNIC_OPF_COMP: completes a receive WQE (last/only of a SEND, WRITE with
 *	immediate)
 * @SRNIC_OPF_DC_CTL: DC DETACH or DETACH ACK (no RC operation)
 * @SRNIC_OPF_VALID: the opcode is one srnic knows
 *
 * The header bits are listed in wire order but for XRCETH, DCETH and
 * DCRETH: ext headers follow the BTH in the order XRCETH/DCETH/DCRETH,
 * RETH/DETH, AETH, ATMETH, ATMACK,
 * IMMDT, IETH (IBA 9.2.1 table 38 and A14; an opcode never has both RETH
 * and DETH).
 */
enum srnic_opf {
	SRNIC_OPF_RETH		= BIT(0),
	SRNIC_OPF_DETH		= BIT(1),
	SRNIC_OPF_AETH		= BIT(2),
	SRNIC_OPF_ATMETH	= BIT(3),
	SRNIC_OPF_ATMACK	= BIT(4),
	SRNIC_OPF_IMMDT		= BIT(5),
	SRNIC_OPF_IETH		= BIT(6),
	SRNIC_OPF_CNP_RSVD	= BIT(7),
	SRNIC_OPF_XRCETH	= BIT(8),
	SRNIC_OPF_DCETH		= BIT(18),
	SRNIC_OPF_DCRETH	= BIT(19),
	SRNIC_OPF_HDR_MASK	= 0x1ff | BIT(18) | BIT(19),

	SRNIC_OPF_PAYLOAD	= BIT(9),
	SRNIC_OPF_REQ		= BIT(10),
	SRNIC_OPF_RESP		= BIT(11),
	SRNIC_OPF_SEND		= BIT(12),
	SRNIC_OPF_WRITE		= BIT(13),
	SRNIC_OPF_READ		= BIT(14),
	SRNIC_OPF_ATOMIC	= BIT(15),
	SRNIC_OPF_RWR		= BIT(16),
	SRNIC_OPF_COMP		= BIT(17),
	SRNIC_OPF_DC_CTL	= BIT(20),
	SRNIC_OPF_VALID		= BIT(31),
};

/**
 * struct srnic_opcode_info - what one BTH opcode means
 * @name: e.g. "RC_SEND_FIRST"; NULL for invalid opcodes
 * @flags: SRNIC_OPF_* (0 for invalid opcodes)
 * @wr_mask: the work requests whose packets use this opcode, as
 *	BIT(IB_WR_*) (0 for responses and CNP)
 * @transport: enum srnic_transport (equals opcode >> 5)
 * @pos: enum srnic_pkt_pos
 * @hdr_len: bytes of extension headers between the BTH and the payload
 *	(the sum of the lengths of the headers in @flags)
 */
struct srnic_opcode_info {
	const char	*name;
	u32		flags;
	u32		wr_mask;
	u8		transport;
	u8		pos;
	u8		hdr_len;
};

extern const struct srnic_opcode_info srnic_opcode_table[SRNIC_NUM_OPCODES];

/**
 * srnic_opcode_info() - table entry for a BTH opcode
 * @opcode: BTH opcode byte
 *
 * Return: the entry; never NULL. For an invalid opcode its flags are 0.
 */
static inline const struct srnic_opcode_info *srnic_opcode_info(u8 opcode)
{
	return &srnic_opcode_table[opcode];
}

/**
 * srnic_opcode_valid() - is @opcode one srnic handles?
 * @opcode: BTH opcode byte
 *
 * Return: true for the RC, UC, UD, XRC and CNP opcodes of the table.
 */
static inline bool srnic_opcode_valid(u8 opcode)
{
	return srnic_opcode_table[opcode].flags & SRNIC_OPF_VALID;
}

/**
 * srnic_opcode_hdr_len() - BTH plus extension headers of @opcode
 * @opcode: a valid BTH opcode
 *
 * Return: bytes from the start of the BTH to the payload.
 */
static inline unsigned int srnic_opcode_hdr_len(u8 opcode)
{
	return SRNIC_BTH_LEN + srnic_opcode_table[opcode].hdr_len;
}

/* srnic_opcode.c */
int srnic_opcode_for_wr(enum ib_qp_type qpt, enum ib_wr_opcode wr,
			enum srnic_pkt_pos pos);
u8 srnic_opcode_read_resp(enum srnic_pkt_pos pos);
const char *srnic_opcode_name(u8 opcode);

#endif /* SRNIC_OPCODE_H */
