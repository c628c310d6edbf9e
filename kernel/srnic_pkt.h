/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic received packets: what srnic_recv.c parses out of a RoCEv2 packet
 * and hands to the responder, the completer, the CNP code and multicast.
 */
#ifndef SRNIC_PKT_H
#define SRNIC_PKT_H

#include <linux/skbuff.h>

#include "srnic_hdr.h"

struct srnic_dev;

/* srnic_pkt.vlan_id of a packet that came on no VLAN (as ib_core's 0xffff) */
#define SRNIC_NO_VLAN	0xffff

/**
 * struct srnic_pkt - a received RoCEv2 packet, parsed
 * @skb: the packet; skb->data is at the BTH, headers are linear
 * @sdev: receiving device
 * @opcode: BTH opcode (valid)
 * @pos: enum srnic_pkt_pos of @opcode
 * @psn: BTH PSN
 * @qpn: BTH destination QP
 * @hdr_len: BTH + extension headers; the payload starts there
 * @paylen: payload bytes (pad and ICRC excluded)
 * @ackreq: BTH AckReq
 * @se: BTH solicited event
 * @vlan_id: the VLAN it arrived on (the VID), or SRNIC_NO_VLAN
 * @dceth, @dcreth, @xrceth, @reth, @aeth, @atmeth, @atmack, @deth, @immdt, @ieth: extension
 *	headers present in @opcode, else NULL
 */
struct srnic_pkt {
	struct sk_buff		*skb;
	struct srnic_dev	*sdev;
	u8			opcode;
	u8			pos;
	u32			psn;
	u32			qpn;
	u32			hdr_len;
	u32			paylen;
	bool			ackreq;
	bool			se;
	/* receive (srnic_recv.c): its ICRC and headers checked */
	bool			verified;
	/* and DCQCN's notification point has seen its ECN bits */
	bool			np_seen;
	u16			vlan_id;
	const struct srnic_dceth *dceth;
	const struct srnic_dcreth *dcreth;
	const struct srnic_xrceth *xrceth;
	const struct srnic_reth	*reth;
	const struct srnic_aeth	*aeth;
	const struct srnic_atmeth *atmeth;
	const struct srnic_atmack *atmack;
	const struct srnic_deth	*deth;
	const struct srnic_immdt *immdt;
	const struct srnic_ieth	*ieth;
};

#endif /* SRNIC_PKT_H */
