// SPDX-License-Identifier: GPL-2.0
/*
 * srnic receive: every RoCEv2 packet of a namespace arrives in the UDP
 * tunnel hook of srnic_net.c and is checked here before anything acts on
 * it: lengths, opcode, transport version, P_Key, ICRC, destination QP and
 * its type. Then requests go to the responder, responses to the completer.
 *
 * The skb is never linearized: only the BTH and extension headers (at most
 * 40 bytes) are pulled into the linear area; payload stays where the netdev
 * put it and is copied straight into the destination memory region.
 *
 * Loopback: a packet srnic sends to a local address (a QP talking to a QP of
 * the same device, or to another srnic device of the namespace) is routed
 * by the IP stack through the loopback netdev and arrives here with skb->dev
 * == lo. Such a packet belongs to the device whose netdev holds the
 * destination address, as the GID table says on the wire side.
 */
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ipv6.h>

#include "srnic.h"
#include "srnic_trace.h"

static bool srnic_recv_qp_type_ok(const struct srnic_qp *qp, u8 transport)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return transport == SRNIC_TRANSPORT_RC;
	case IB_QPT_UC:
		return transport == SRNIC_TRANSPORT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return transport == SRNIC_TRANSPORT_UD;
	default:
		return false;
	}
}

/* Point the extension header fields of @pkt into the linear headers. */
static void srnic_recv_ext_hdrs(struct srnic_pkt *pkt, u32 flags)
{
	const void *p = pkt->skb->data + SRNIC_BTH_LEN;

	if (flags & SRNIC_OPF_RETH) {
		pkt->reth = p;
		p += SRNIC_RETH_LEN;
	}
	if (flags & SRNIC_OPF_DETH) {
		pkt->deth = p;
		p += SRNIC_DETH_LEN;
	}
	if (flags & SRNIC_OPF_AETH) {
		pkt->aeth = p;
		p += SRNIC_AETH_LEN;
	}
	if (flags & SRNIC_OPF_ATMETH) {
		pkt->atmeth = p;
		p += SRNIC_ATMETH_LEN;
	}
	if (flags & SRNIC_OPF_ATMACK) {
		pkt->atmack = p;
		p += SRNIC_ATMACK_LEN;
	}
	if (flags & SRNIC_OPF_IMMDT) {
		pkt->immdt = p;
		p += SRNIC_IMMDT_LEN;
	}
	if (flags & SRNIC_OPF_IETH)
		pkt->ieth = p;
}

/*
 * Validate the packet and fill @pkt. skb->data is at the BTH on entry.
 * Return: 0, or a counter saying why the packet is dropped.
 */
static int srnic_recv_parse(struct srnic_dev *sdev, struct sk_buff *skb,
			    struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info;
	const struct srnic_bth *bth;
	unsigned int len = skb->len, pad, hdr_len, nh_off;
	u32 icrc, want;

	if (!pskb_may_pull(skb, SRNIC_BTH_LEN))
		return SRNIC_CNT_RX_BAD_HDR;
	bth = (const struct srnic_bth *)skb->data;
	if (!srnic_opcode_valid(srnic_bth_opcode(bth)) ||
	    srnic_bth_tver(bth) != SRNIC_BTH_TVER)
		return SRNIC_CNT_RX_BAD_HDR;
	hdr_len = srnic_opcode_hdr_len(srnic_bth_opcode(bth));
	pad = srnic_bth_pad(bth);
	if (len < hdr_len + pad + SRNIC_ICRC_LEN)
		return SRNIC_CNT_RX_BAD_HDR;
	if (!pskb_may_pull(skb, hdr_len))
		return SRNIC_CNT_RX_BAD_HDR;
	bth = (const struct srnic_bth *)skb->data;	/* may have moved */

	/* The ICRC covers the packet from the IP header on. */
	nh_off = skb->data - skb_network_header(skb);
	if (skb_copy_bits(skb, len - SRNIC_ICRC_LEN, &icrc, sizeof(icrc)))
		return SRNIC_CNT_RX_BAD_HDR;
	want = srnic_icrc_skb(skb, nh_off + len - SRNIC_ICRC_LEN);
	if (le32_to_cpu((__force __le32)icrc) != want)
		return SRNIC_CNT_RX_ICRC_ERR;

	/* P_Key: only the default partition exists (base 0x7fff). */
	if ((srnic_bth_pkey(bth) & SRNIC_PKEY_BASE_MASK) !=
	    (SRNIC_DEFAULT_PKEY & SRNIC_PKEY_BASE_MASK))
		return SRNIC_CNT_RX_BAD_HDR;

	memset(pkt, 0, sizeof(*pkt));
	info = srnic_opcode_info(srnic_bth_opcode(bth));
	pkt->skb = skb;
	pkt->sdev = sdev;
	pkt->opcode = srnic_bth_opcode(bth);
	pkt->pos = info->pos;
	pkt->psn = srnic_bth_psn(bth);
	pkt->qpn = srnic_bth_qpn(bth);
	pkt->hdr_len = hdr_len;
	pkt->paylen = len - hdr_len - pad - SRNIC_ICRC_LEN;
	pkt->ackreq = srnic_bth_ackreq(bth);
	pkt->se = srnic_bth_se(bth);
	if (pkt->paylen && !(info->flags & SRNIC_OPF_PAYLOAD))
		return SRNIC_CNT_RX_BAD_HDR;
	srnic_recv_ext_hdrs(pkt, info->flags);
	return 0;
}

/*
 * Re-pathing on (sysfs repath_timeouts): an RC QP whose peer moved to another
 * UDP source port (and IPv6 flow label) follows it, so both directions take
 * the peer's new path (srnic_qp_peer_sport()). Read here, not when parsing:
 * with re-pathing off a packet costs nothing more.
 */
static void srnic_recv_follow_peer(struct srnic_qp *qp,
				   const struct sk_buff *skb)
{
	u16 sport = ntohs(udp_hdr(skb)->source);
	u32 flow_label = 0;

	if (READ_ONCE(qp->peer_sport) == sport)
		return;
	if (ip_hdr(skb)->version == 6)
		flow_label = ntohl(ip6_flowlabel(ipv6_hdr(skb)));
	srnic_qp_peer_sport(qp, sport, flow_label);
}

static void srnic_recv_dispatch(struct srnic_dev *sdev, struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	struct srnic_qp *qp;

	if (info->transport == SRNIC_TRANSPORT_CNP) {
		srnic_cnp_rp_rcv(sdev, pkt);	/* DCQCN reaction point */
		return;
	}
	if (pkt->qpn == SRNIC_MULTICAST_QPN) {
		srnic_mcast_rcv(sdev, pkt);
		return;
	}
	qp = srnic_qp_get(sdev, pkt->qpn);
	if (!qp) {
		srnic_count(sdev, SRNIC_CNT_RX_NO_QP);
		return;
	}
	if (!srnic_recv_qp_type_ok(qp, info->transport)) {
		srnic_count(sdev, SRNIC_CNT_RX_BAD_HDR);
		goto put;
	}
	srnic_cnp_np_rcv(qp, pkt);		/* DCQCN: CE mark -> CNP */
	if (qp->ibqp.qp_type == IB_QPT_RC && READ_ONCE(sdev->repath_timeouts))
		srnic_recv_follow_peer(qp, pkt->skb);
	if (info->flags & SRNIC_OPF_REQ) {
		srnic_resp_rcv(qp, pkt);
	} else if (info->flags & SRNIC_OPF_RESP) {
		if (qp->ibqp.qp_type == IB_QPT_RC)
			srnic_comp_rcv(qp, pkt);
		else
			srnic_count(sdev, SRNIC_CNT_RX_BAD_HDR);
	}
put:
	srnic_qp_put(qp);
}

/*
 * The device a looped-back packet is for: the one bound to the netdev that
 * holds its destination address in this namespace.
 */
static struct srnic_dev *srnic_recv_loopback_dev(struct sk_buff *skb)
{
	struct net *net = dev_net(skb->dev);
	struct net_device *ndev = NULL;
	struct srnic_dev *sdev = NULL;

	rcu_read_lock();
	if (skb->protocol == htons(ETH_P_IP))
		ndev = __ip_dev_find(net, ip_hdr(skb)->daddr, false);
	else if (IS_ENABLED(CONFIG_IPV6) && skb->protocol == htons(ETH_P_IPV6))
		ndev = ipv6_dev_find(net, &ipv6_hdr(skb)->daddr, NULL);
	if (ndev && !(ndev->flags & IFF_LOOPBACK))
		sdev = srnic_dev_get_by_netdev(ndev);
	rcu_read_unlock();
	return sdev;
}

/**
 * srnic_udp_encap_recv() - UDP tunnel receive hook for port 4791
 * @sk: the namespace's tunnel socket
 * @skb: the packet; skb->data is at the UDP header
 *
 * Return: 0: the packet is always consumed.
 */
int srnic_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct srnic_dev *sdev;
	struct srnic_pkt pkt;
	unsigned int ulen;
	int why;

	sdev = srnic_dev_get_by_netdev(skb->dev);
	if (!sdev && (skb->dev->flags & IFF_LOOPBACK))
		sdev = srnic_recv_loopback_dev(skb);
	if (!sdev)
		goto drop;

	ulen = ntohs(udp_hdr(skb)->len);
	if (ulen < sizeof(struct udphdr) || ulen > skb->len ||
	    pskb_trim(skb, ulen)) {
		srnic_count(sdev, SRNIC_CNT_RX_BAD_HDR);
		goto put_dev;
	}
	__skb_pull(skb, sizeof(struct udphdr));

	why = srnic_recv_parse(sdev, skb, &pkt);
	if (why) {
		srnic_count(sdev, why);
		goto put_dev;
	}
	srnic_count(sdev, SRNIC_CNT_RX_PACKETS);
	srnic_count_add(sdev, SRNIC_CNT_RX_BYTES, skb->len);
	trace_srnic_pkt_rx(sdev->ib_dev.index, pkt.qpn, 0, pkt.psn, pkt.paylen,
			   pkt.opcode);
	srnic_recv_dispatch(sdev, &pkt);
	ib_device_put(&sdev->ib_dev);
	consume_skb(skb);
	return 0;

put_dev:
	ib_device_put(&sdev->ib_dev);
drop:
	kfree_skb(skb);
	return 0;
}
