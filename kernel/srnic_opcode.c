// SPDX-License-Identifier: GPL-2.0
/*
 * srnic opcodes: the table of BTH opcodes (IBA 9.2.1, table 38; Annex
 * A17.9.3 for the CNP) and the requester's work-request -> opcode mapping.
 */
#include <linux/errno.h>

#include "srnic_opcode.h"

/* Work requests that become SEND / RDMA WRITE packets, as wr_mask bits. */
#define SRNIC_WR_SEND		BIT(IB_WR_SEND)
#define SRNIC_WR_SEND_IMM	BIT(IB_WR_SEND_WITH_IMM)
#define SRNIC_WR_SEND_INV	BIT(IB_WR_SEND_WITH_INV)
#define SRNIC_WR_WRITE		BIT(IB_WR_RDMA_WRITE)
#define SRNIC_WR_WRITE_IMM	BIT(IB_WR_RDMA_WRITE_WITH_IMM)
#define SRNIC_WR_READ		(BIT(IB_WR_RDMA_READ) | \
				 BIT(IB_WR_RDMA_READ_WITH_INV))

/* SEND packets of RC (which also has SEND with invalidate) and of UC */
#define SRNIC_WR_RC_SENDS	(SRNIC_WR_SEND | SRNIC_WR_SEND_IMM | \
				 SRNIC_WR_SEND_INV)
#define SRNIC_WR_UC_SENDS	(SRNIC_WR_SEND | SRNIC_WR_SEND_IMM)
#define SRNIC_WR_WRITES		(SRNIC_WR_WRITE | SRNIC_WR_WRITE_IMM)

/* Flags shared by the packets of one kind of message. */
#define SRNIC_F_SEND		(SRNIC_OPF_REQ | SRNIC_OPF_SEND | \
				 SRNIC_OPF_PAYLOAD)
#define SRNIC_F_WRITE		(SRNIC_OPF_REQ | SRNIC_OPF_WRITE | \
				 SRNIC_OPF_PAYLOAD)
#define SRNIC_F_READ_RESP	(SRNIC_OPF_RESP | SRNIC_OPF_READ | \
				 SRNIC_OPF_PAYLOAD)
#define SRNIC_F_ATOMIC		(SRNIC_OPF_REQ | SRNIC_OPF_ATOMIC | \
				 SRNIC_OPF_ATMETH)

/*
 * One entry: transport tr (RC/UC/UD), operation op (the suffix of the
 * IB_OPCODE_<tr>_<op> constant), flags, work requests, position and the
 * length of the extension headers, spelled out rather than derived from
 * the flags so that KUnit can check one against the other.
 */
#define SRNIC_OP(tr, op, _flags, _wr, _pos, _len)			\
	[IB_OPCODE_##tr##_##op] = {					\
		.name		= #tr "_" #op,				\
		.flags		= SRNIC_OPF_VALID | (_flags),		\
		.wr_mask	= (_wr),				\
		.transport	= SRNIC_TRANSPORT_##tr,			\
		.pos		= SRNIC_POS_##_pos,			\
		.hdr_len	= (_len),				\
	}

/* Indexed by the BTH opcode byte; unlisted opcodes are invalid (all 0). */
const struct srnic_opcode_info srnic_opcode_table[SRNIC_NUM_OPCODES] = {
	/* RC: 0x00 - 0x17 */
	SRNIC_OP(RC, SEND_FIRST, SRNIC_F_SEND | SRNIC_OPF_RWR,
		 SRNIC_WR_RC_SENDS, FIRST, 0),
	SRNIC_OP(RC, SEND_MIDDLE, SRNIC_F_SEND,
		 SRNIC_WR_RC_SENDS, MIDDLE, 0),
	SRNIC_OP(RC, SEND_LAST, SRNIC_F_SEND | SRNIC_OPF_COMP,
		 SRNIC_WR_SEND, LAST, 0),
	SRNIC_OP(RC, SEND_LAST_WITH_IMMEDIATE,
		 SRNIC_F_SEND | SRNIC_OPF_COMP | SRNIC_OPF_IMMDT,
		 SRNIC_WR_SEND_IMM, LAST, SRNIC_IMMDT_LEN),
	SRNIC_OP(RC, SEND_ONLY, SRNIC_F_SEND | SRNIC_OPF_RWR | SRNIC_OPF_COMP,
		 SRNIC_WR_SEND, ONLY, 0),
	SRNIC_OP(RC, SEND_ONLY_WITH_IMMEDIATE,
		 SRNIC_F_SEND | SRNIC_OPF_RWR | SRNIC_OPF_COMP | SRNIC_OPF_IMMDT,
		 SRNIC_WR_SEND_IMM, ONLY, SRNIC_IMMDT_LEN),
	SRNIC_OP(RC, RDMA_WRITE_FIRST, SRNIC_F_WRITE | SRNIC_OPF_RETH,
		 SRNIC_WR_WRITES, FIRST, SRNIC_RETH_LEN),
	SRNIC_OP(RC, RDMA_WRITE_MIDDLE, SRNIC_F_WRITE,
		 SRNIC_WR_WRITES, MIDDLE, 0),
	SRNIC_OP(RC, RDMA_WRITE_LAST, SRNIC_F_WRITE,
		 SRNIC_WR_WRITE, LAST, 0),
	SRNIC_OP(RC, RDMA_WRITE_LAST_WITH_IMMEDIATE,
		 SRNIC_F_WRITE | SRNIC_OPF_IMMDT | SRNIC_OPF_RWR | SRNIC_OPF_COMP,
		 SRNIC_WR_WRITE_IMM, LAST, SRNIC_IMMDT_LEN),
	SRNIC_OP(RC, RDMA_WRITE_ONLY, SRNIC_F_WRITE | SRNIC_OPF_RETH,
		 SRNIC_WR_WRITE, ONLY, SRNIC_RETH_LEN),
	SRNIC_OP(RC, RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		 SRNIC_F_WRITE | SRNIC_OPF_RETH | SRNIC_OPF_IMMDT |
		 SRNIC_OPF_RWR | SRNIC_OPF_COMP,
		 SRNIC_WR_WRITE_IMM, ONLY, SRNIC_RETH_LEN + SRNIC_IMMDT_LEN),
	SRNIC_OP(RC, RDMA_READ_REQUEST,
		 SRNIC_OPF_REQ | SRNIC_OPF_READ | SRNIC_OPF_RETH,
		 SRNIC_WR_READ, ONLY, SRNIC_RETH_LEN),
	SRNIC_OP(RC, RDMA_READ_RESPONSE_FIRST,
		 SRNIC_F_READ_RESP | SRNIC_OPF_AETH,
		 0, FIRST, SRNIC_AETH_LEN),
	SRNIC_OP(RC, RDMA_READ_RESPONSE_MIDDLE, SRNIC_F_READ_RESP,
		 0, MIDDLE, 0),
	SRNIC_OP(RC, RDMA_READ_RESPONSE_LAST,
		 SRNIC_F_READ_RESP | SRNIC_OPF_AETH,
		 0, LAST, SRNIC_AETH_LEN),
	SRNIC_OP(RC, RDMA_READ_RESPONSE_ONLY,
		 SRNIC_F_READ_RESP | SRNIC_OPF_AETH,
		 0, ONLY, SRNIC_AETH_LEN),
	SRNIC_OP(RC, ACKNOWLEDGE, SRNIC_OPF_RESP | SRNIC_OPF_AETH,
		 0, ONLY, SRNIC_AETH_LEN),
	SRNIC_OP(RC, ATOMIC_ACKNOWLEDGE,
		 SRNIC_OPF_RESP | SRNIC_OPF_ATOMIC | SRNIC_OPF_AETH |
		 SRNIC_OPF_ATMACK,
		 0, ONLY, SRNIC_AETH_LEN + SRNIC_ATMACK_LEN),
	SRNIC_OP(RC, COMPARE_SWAP, SRNIC_F_ATOMIC,
		 BIT(IB_WR_ATOMIC_CMP_AND_SWP), ONLY, SRNIC_ATMETH_LEN),
	SRNIC_OP(RC, FETCH_ADD, SRNIC_F_ATOMIC,
		 BIT(IB_WR_ATOMIC_FETCH_AND_ADD), ONLY, SRNIC_ATMETH_LEN),
	SRNIC_OP(RC, SEND_LAST_WITH_INVALIDATE,
		 SRNIC_F_SEND | SRNIC_OPF_COMP | SRNIC_OPF_IETH,
		 SRNIC_WR_SEND_INV, LAST, SRNIC_IETH_LEN),
	SRNIC_OP(RC, SEND_ONLY_WITH_INVALIDATE,
		 SRNIC_F_SEND | SRNIC_OPF_RWR | SRNIC_OPF_COMP |
		 SRNIC_OPF_IETH,
		 SRNIC_WR_SEND_INV, ONLY, SRNIC_IETH_LEN),

	/* UC: 0x20 - 0x2b */
	SRNIC_OP(UC, SEND_FIRST, SRNIC_F_SEND | SRNIC_OPF_RWR,
		 SRNIC_WR_UC_SENDS, FIRST, 0),
	SRNIC_OP(UC, SEND_MIDDLE, SRNIC_F_SEND,
		 SRNIC_WR_UC_SENDS, MIDDLE, 0),
	SRNIC_OP(UC, SEND_LAST, SRNIC_F_SEND | SRNIC_OPF_COMP,
		 SRNIC_WR_SEND, LAST, 0),
	SRNIC_OP(UC, SEND_LAST_WITH_IMMEDIATE,
		 SRNIC_F_SEND | SRNIC_OPF_COMP | SRNIC_OPF_IMMDT,
		 SRNIC_WR_SEND_IMM, LAST, SRNIC_IMMDT_LEN),
	SRNIC_OP(UC, SEND_ONLY, SRNIC_F_SEND | SRNIC_OPF_RWR | SRNIC_OPF_COMP,
		 SRNIC_WR_SEND, ONLY, 0),
	SRNIC_OP(UC, SEND_ONLY_WITH_IMMEDIATE,
		 SRNIC_F_SEND | SRNIC_OPF_RWR | SRNIC_OPF_COMP | SRNIC_OPF_IMMDT,
		 SRNIC_WR_SEND_IMM, ONLY, SRNIC_IMMDT_LEN),
	SRNIC_OP(UC, RDMA_WRITE_FIRST, SRNIC_F_WRITE | SRNIC_OPF_RETH,
		 SRNIC_WR_WRITES, FIRST, SRNIC_RETH_LEN),
	SRNIC_OP(UC, RDMA_WRITE_MIDDLE, SRNIC_F_WRITE,
		 SRNIC_WR_WRITES, MIDDLE, 0),
	SRNIC_OP(UC, RDMA_WRITE_LAST, SRNIC_F_WRITE,
		 SRNIC_WR_WRITE, LAST, 0),
	SRNIC_OP(UC, RDMA_WRITE_LAST_WITH_IMMEDIATE,
		 SRNIC_F_WRITE | SRNIC_OPF_IMMDT | SRNIC_OPF_RWR | SRNIC_OPF_COMP,
		 SRNIC_WR_WRITE_IMM, LAST, SRNIC_IMMDT_LEN),
	SRNIC_OP(UC, RDMA_WRITE_ONLY, SRNIC_F_WRITE | SRNIC_OPF_RETH,
		 SRNIC_WR_WRITE, ONLY, SRNIC_RETH_LEN),
	SRNIC_OP(UC, RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		 SRNIC_F_WRITE | SRNIC_OPF_RETH | SRNIC_OPF_IMMDT |
		 SRNIC_OPF_RWR | SRNIC_OPF_COMP,
		 SRNIC_WR_WRITE_IMM, ONLY, SRNIC_RETH_LEN + SRNIC_IMMDT_LEN),

	/* UD: 0x64, 0x65 */
	SRNIC_OP(UD, SEND_ONLY,
		 SRNIC_F_SEND | SRNIC_OPF_RWR | SRNIC_OPF_COMP |
		 SRNIC_OPF_DETH,
		 SRNIC_WR_SEND, ONLY, SRNIC_DETH_LEN),
	SRNIC_OP(UD, SEND_ONLY_WITH_IMMEDIATE,
		 SRNIC_F_SEND | SRNIC_OPF_RWR | SRNIC_OPF_COMP |
		 SRNIC_OPF_DETH | SRNIC_OPF_IMMDT,
		 SRNIC_WR_SEND_IMM, ONLY, SRNIC_DETH_LEN + SRNIC_IMMDT_LEN),

	/* RoCEv2 CNP: 0x81 */
	[SRNIC_OPCODE_CNP] = {
		.name		= "CNP",
		.flags		= SRNIC_OPF_VALID | SRNIC_OPF_CNP_RSVD,
		.transport	= SRNIC_TRANSPORT_CNP,
		.pos		= SRNIC_POS_ONLY,
		.hdr_len	= SRNIC_CNP_RSVD_LEN,
	},
};

/*
 * Operation (low 5 bits of the opcode) of a SEND / RDMA WRITE / READ /
 * atomic packet of an RC or UC QP, or -EINVAL. @rc: RC, which also has
 * SEND with invalidate, READ and atomics.
 */
static int srnic_opcode_rc_uc(enum ib_wr_opcode wr, enum srnic_pkt_pos pos,
			      bool rc)
{
	switch (wr) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		if (wr == IB_WR_SEND_WITH_INV && !rc)
			return -EINVAL;
		switch (pos) {
		case SRNIC_POS_FIRST:
			return IB_OPCODE_SEND_FIRST;
		case SRNIC_POS_MIDDLE:
			return IB_OPCODE_SEND_MIDDLE;
		case SRNIC_POS_LAST:
			if (wr == IB_WR_SEND_WITH_IMM)
				return IB_OPCODE_SEND_LAST_WITH_IMMEDIATE;
			if (wr == IB_WR_SEND_WITH_INV)
				return IB_OPCODE_SEND_LAST_WITH_INVALIDATE;
			return IB_OPCODE_SEND_LAST;
		case SRNIC_POS_ONLY:
			if (wr == IB_WR_SEND_WITH_IMM)
				return IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE;
			if (wr == IB_WR_SEND_WITH_INV)
				return IB_OPCODE_SEND_ONLY_WITH_INVALIDATE;
			return IB_OPCODE_SEND_ONLY;
		}
		return -EINVAL;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		switch (pos) {
		case SRNIC_POS_FIRST:
			return IB_OPCODE_RDMA_WRITE_FIRST;
		case SRNIC_POS_MIDDLE:
			return IB_OPCODE_RDMA_WRITE_MIDDLE;
		case SRNIC_POS_LAST:
			return wr == IB_WR_RDMA_WRITE_WITH_IMM ?
			       IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE :
			       IB_OPCODE_RDMA_WRITE_LAST;
		case SRNIC_POS_ONLY:
			return wr == IB_WR_RDMA_WRITE_WITH_IMM ?
			       IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
			       IB_OPCODE_RDMA_WRITE_ONLY;
		}
		return -EINVAL;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		/* one request per READ, whatever the response size */
		return rc && pos == SRNIC_POS_ONLY ?
		       IB_OPCODE_RDMA_READ_REQUEST : -EINVAL;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return rc && pos == SRNIC_POS_ONLY ?
		       IB_OPCODE_COMPARE_SWAP : -EINVAL;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return rc && pos == SRNIC_POS_ONLY ?
		       IB_OPCODE_FETCH_ADD : -EINVAL;
	default:
		return -EINVAL;
	}
}

/**
 * srnic_opcode_for_wr() - BTH opcode of one packet of a work request
 * @qpt: QP type (IB_QPT_RC, IB_QPT_UC, IB_QPT_UD or IB_QPT_GSI)
 * @wr: work request opcode; SEND/WRITE "with immediate" and SEND "with
 *	invalidate" are their own IB_WR_* values
 * @pos: place of the packet in the message: SRNIC_POS_ONLY when the whole
 *	message fits in one MTU, else FIRST, MIDDLE..., LAST. READ requests
 *	and atomics are always SRNIC_POS_ONLY, as are UD messages, which must
 *	fit in one packet.
 *
 * Context: any; pure function.
 * Return: the BTH opcode (0..255), or -EINVAL if @qpt cannot carry @wr at
 * @pos (e.g. RDMA READ on UC, SEND with invalidate on UC, a multi-packet UD
 * message, local operations such as IB_WR_LOCAL_INV that send nothing).
 */
int srnic_opcode_for_wr(enum ib_qp_type qpt, enum ib_wr_opcode wr,
			enum srnic_pkt_pos pos)
{
	int op;

	switch (qpt) {
	case IB_QPT_RC:
		op = srnic_opcode_rc_uc(wr, pos, true);
		return op < 0 ? op : IB_OPCODE_RC | op;
	case IB_QPT_UC:
		op = srnic_opcode_rc_uc(wr, pos, false);
		/* UC has no READ or atomic opcodes, see IBA table 38 */
		return op < 0 ? op : IB_OPCODE_UC | op;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		if (pos != SRNIC_POS_ONLY)
			return -EINVAL;
		if (wr == IB_WR_SEND)
			return IB_OPCODE_UD_SEND_ONLY;
		if (wr == IB_WR_SEND_WITH_IMM)
			return IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE;
		return -EINVAL;
	default:
		return -EINVAL;
	}
}

/**
 * srnic_opcode_read_resp() - opcode of one RDMA READ response packet
 * @pos: place of the packet in the response
 *
 * Return: the RC READ RESPONSE FIRST/MIDDLE/LAST/ONLY opcode.
 */
u8 srnic_opcode_read_resp(enum srnic_pkt_pos pos)
{
	switch (pos) {
	case SRNIC_POS_FIRST:
		return IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
	case SRNIC_POS_MIDDLE:
		return IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
	case SRNIC_POS_LAST:
		return IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST;
	default:
		return IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY;
	}
}

/**
 * srnic_opcode_name() - printable name of a BTH opcode
 * @opcode: BTH opcode byte
 *
 * Return: e.g. "RC_SEND_FIRST", or "INVALID".
 */
const char *srnic_opcode_name(u8 opcode)
{
	return srnic_opcode_table[opcode].name ?: "INVALID";
}
