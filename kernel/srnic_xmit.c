// SPDX-License-Identifier: GPL-2.0
/*
 * srnic xmit: RoCEv2 packets onto the IP stack. The transport engines build
 * BTH, extension headers and payload; this file adds the UDP and IPv4/IPv6
 * headers, routes the packet, computes the ICRC over the final headers and
 * hands it to ip_local_out()/ip6_local_out().
 *
 * Header fields follow what RoCEv2 hardware and rdma_rxe put on the wire
 * (IBA Annex A17): UDP destination port 4791, a per-QP source port, UDP
 * checksum 0, IPv4 with DF and IP ID 0, TOS / traffic class from the path.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/udp.h>

#include "srnic.h"
#include "srnic_trace.h"

#define SRNIC_XMIT_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
				 sizeof(struct udphdr))

/**
 * srnic_xmit_alloc() - a packet buffer for a RoCEv2 packet
 * @hdr_len: bytes of BTH + extension headers
 * @room: further bytes the caller will skb_put() (payload and pad)
 *
 * Return: an skb whose data is @hdr_len zeroed bytes (the BTH is at
 * skb->data), with room for @room more bytes, the ICRC and all outer
 * headers; or NULL.
 */
struct sk_buff *srnic_xmit_alloc(unsigned int hdr_len, unsigned int room)
{
	unsigned int len = SRNIC_XMIT_HEADROOM + hdr_len + room + SRNIC_ICRC_LEN;
	unsigned int fragsz = SKB_DATA_ALIGN(len) +
			      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	/*
	 * The head from the per-CPU page-fragment cache, not kmalloc: a
	 * kmalloc'd head is cleared whole when the kernel zeroes allocations
	 * (init_on_alloc, Debian's default), which cost a small packet more
	 * than building it (tools/profile.sh, 64 B ib_send_bw: 2.3-2.7% of
	 * all samples in memset under kmalloc_reserve). __netdev_alloc_skb()
	 * would still kmalloc heads under 1 KiB. Only the headers written
	 * below need zeroing. Heads over a page: alloc_skb().
	 */
	if (likely(fragsz <= PAGE_SIZE)) {
		data = netdev_alloc_frag(fragsz);
		if (unlikely(!data))
			return NULL;
		skb = build_skb(data, fragsz);
		if (unlikely(!skb)) {
			skb_free_frag(data);
			return NULL;
		}
	} else {
		skb = alloc_skb(len, GFP_ATOMIC);
		if (unlikely(!skb))
			return NULL;
	}
	skb_reserve(skb, SRNIC_XMIT_HEADROOM);
	skb_reset_transport_header(skb);
	memset(skb_put(skb, hdr_len), 0, hdr_len);
	return skb;
}

/*
 * Room for the pad bytes and the ICRC after the payload: in the linear
 * area, or, when the payload is in page fragments (zero-copy), in one more
 * small fragment. Returns the zeroed trailer, or NULL.
 */
static void *srnic_xmit_trailer(struct sk_buff *skb, unsigned int len)
{
	struct page *page;
	void *t;

	if (!skb_is_nonlinear(skb))
		return skb_put_zero(skb, len);
	if (skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS)
		return NULL;
	t = netdev_alloc_frag(SMP_CACHE_BYTES);
	if (!t)
		return NULL;
	memset(t, 0, len);
	page = virt_to_head_page(t);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page,
			t - page_address(page), len, SMP_CACHE_BYTES);
	return t;
}

/*
 * The route cache of @qp, if its packets all take one path: RC and UC QPs.
 * A UD or GSI QP sends each WQE to the address of its own AH (a unicast
 * peer, then a multicast group...), so it must not reuse a cached route.
 */
static struct dst_cache *srnic_xmit_dst_cache(struct srnic_qp *qp)
{
	if (qp && (srnic_qp_reliable(qp) || qp->ibqp.qp_type == IB_QPT_UC))
		return &qp->dst_cache;
	return NULL;
}

static struct dst_entry *srnic_route4(struct net *net, struct srnic_qp *qp,
				      const struct srnic_av *av, __be32 *saddr)
{
	struct flowi4 fl4 = {
		.flowi4_oif = av->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.daddr = av->daddr.s6_addr32[3],
		.saddr = av->saddr.s6_addr32[3],
	};
	struct dst_cache *cache = srnic_xmit_dst_cache(qp);
	struct rtable *rt;

	if (cache) {
		rt = dst_cache_get_ip4(cache, saddr);
		if (rt)
			return &rt->dst;
	}
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt))
		return ERR_CAST(rt);
	*saddr = fl4.saddr;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl4.saddr);
	return &rt->dst;
}

static struct dst_entry *srnic_route6(struct net *net, struct srnic_qp *qp,
				      const struct srnic_av *av,
				      struct in6_addr *saddr)
{
	struct flowi6 fl6 = {
		.flowi6_oif = av->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = av->daddr,
		.saddr = av->saddr,
	};
	struct dst_cache *cache = srnic_xmit_dst_cache(qp);
	struct dst_entry *dst;

	if (cache) {
		dst = dst_cache_get_ip6(cache, saddr);
		if (dst)
			return dst;
	}
	dst = ip6_route_output(net, NULL, &fl6);
	if (dst->error) {
		int err = dst->error;

		dst_release(dst);
		return ERR_PTR(err);
	}
	*saddr = fl6.saddr;
	if (cache)
		dst_cache_set_ip6(cache, dst, &fl6.saddr);
	return dst;
}

static void srnic_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;
	unsigned int len = skb->len;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(SRNIC_ROCE_V2_PORT);
	uh->len = htons(len + sizeof(*uh));
	uh->check = 0;
}

static void srnic_push_ip4(struct sk_buff *skb, const struct srnic_av *av,
			   __be32 saddr, u8 tos, u16 id)
{
	struct iphdr *iph;

	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tos;
	iph->tot_len = htons(skb->len);
	/* DF is set: no fragments to identify; 0 but in a train */
	iph->id = htons(id);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ?: IPDEFTTL;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = saddr;
	iph->daddr = av->daddr.s6_addr32[3];
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
}

static void srnic_push_ip6(struct sk_buff *skb, const struct srnic_qp *qp,
			   const struct srnic_av *av,
			   const struct in6_addr *saddr, u8 tclass)
{
	/* an RC/UC QP's own (srnic_qp_set_src_port()), else the AV's */
	u32 fl = (qp ? READ_ONCE(qp->flow_label) : 0) ?: av->flow_label;

	struct ipv6hdr *ip6h;
	unsigned int payload = skb->len;

	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, tclass, htonl(fl));
	ip6h->payload_len = htons(payload);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ?: IPV6_DEFAULT_HOPLIMIT;
	ip6h->saddr = *saddr;
	ip6h->daddr = av->daddr;
	skb->protocol = htons(ETH_P_IPV6);
}

/* A built packet's bytes from the BTH to the ICRC, data at the IP header. */
static unsigned int srnic_xmit_roce_len(const struct sk_buff *skb)
{
	return skb->len - skb_transport_offset(skb) - sizeof(struct udphdr);
}

/* srnic:srnic_pkt_tx for a packet ready to go, its BTH after the UDP header. */
static void srnic_xmit_trace(struct srnic_dev *sdev, struct srnic_qp *qp,
			     struct sk_buff *skb, unsigned int roce_len,
			     unsigned int pad)
{
	const struct srnic_bth *bth = (void *)udp_hdr(skb) + sizeof(struct udphdr);
	u8 opcode = srnic_bth_opcode(bth);

	trace_srnic_pkt_tx(sdev->ib_dev.index, qp ? srnic_qpn(qp) : 0,
			   srnic_bth_qpn(bth), srnic_bth_psn(bth),
			   roce_len - srnic_opcode_hdr_len(opcode) - pad -
			   SRNIC_ICRC_LEN, opcode);
}

/**
 * srnic_xmit_build() - a RoCEv2 packet, ready for the IP stack
 * @sdev: the device
 * @qp: the sending QP (its route cache is used), or NULL
 * @av: the path
 * @sport: UDP source port
 * @tclass: IPv4 TOS / IPv6 traffic class, ECN bits included
 * @skb: BTH + extension headers + payload, from srnic_xmit_alloc(); the
 *	payload may be in page fragments
 * @pad: pad bytes to add after the payload (BTH PadCnt)
 * @ip_id: IPv4 ID (0, or its place in a train: srnic_sched.c)
 *
 * Adds pad, ICRC, UDP and IP headers, routes it (skb_dst) and computes the
 * ICRC over the headers as they will be on the wire. skb->data is at the IP
 * header on return.
 *
 * Return: 0, or a negative errno with @skb consumed and counted.
 */
int srnic_xmit_build(struct srnic_dev *sdev, struct srnic_qp *qp,
		     const struct srnic_av *av, u16 sport, u8 tclass,
		     struct sk_buff *skb, unsigned int pad, u16 ip_id)
{
	struct net *net = dev_net(sdev->ndev);
	struct dst_entry *dst;
	unsigned int ip_len;
	void *trailer;

	/* data as ECT(0) unless roce_rp/ecn_mark is off; CNPs never */
	if (skb->data[0] != SRNIC_OPCODE_CNP)
		tclass = srnic_dcqcn_data_tclass(&sdev->dcqcn, tclass);
	trailer = srnic_xmit_trailer(skb, pad + SRNIC_ICRC_LEN);
	if (unlikely(!trailer)) {
		srnic_count(sdev, SRNIC_CNT_TX_DROPPED);
		kfree_skb(skb);
		return -ENOMEM;
	}
	srnic_push_udp(skb, sport);

	if (av->family == AF_INET) {
		__be32 saddr;

		dst = srnic_route4(net, qp, av, &saddr);
		if (IS_ERR(dst))
			goto err_route;
		srnic_push_ip4(skb, av, saddr, tclass, ip_id);
	} else {
		struct in6_addr saddr;

		dst = srnic_route6(net, qp, av, &saddr);
		if (IS_ERR(dst))
			goto err_route;
		srnic_push_ip6(skb, qp, av, &saddr, tclass);
	}
	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
	memset(IPCB(skb), 0, sizeof(struct inet6_skb_parm));

	/* Everything but the ICRC itself, from the IP header on. */
	ip_len = skb->len - SRNIC_ICRC_LEN;
	put_unaligned_le32(skb_is_nonlinear(skb) ?
			   srnic_icrc_skb(skb, ip_len) :
			   srnic_icrc_buf(skb->data, ip_len), trailer + pad);

	if (trace_srnic_pkt_tx_enabled())
		srnic_xmit_trace(sdev, qp, skb, srnic_xmit_roce_len(skb), pad);
	return 0;

err_route:
	srnic_count(sdev, SRNIC_CNT_TX_NO_ROUTE);
	kfree_skb(skb);
	return PTR_ERR(dst);
}

/**
 * srnic_xmit_out() - hand built packets to the IP stack
 * @sdev: the device
 * @skb: from srnic_xmit_build(), or a train of them (srnic_sched.c)
 * @pkts: RoCEv2 packets in @skb
 * @roce_bytes: their bytes, BTH to ICRC (what the counters measure)
 *
 * Consumes @skb in every case. Return: 0 when the stack took it, or a
 * negative errno (netdev gone, dropped by the stack: reliable QPs recover
 * by retransmission).
 */
int srnic_xmit_out(struct srnic_dev *sdev, struct sk_buff *skb,
		   unsigned int pkts, unsigned int roce_bytes)
{
	struct net *net = dev_net(sdev->ndev);
	int err;

	if (skb->protocol == htons(ETH_P_IP))
		err = ip_local_out(net, NULL, skb);
	else
		err = ip6_local_out(net, NULL, skb);
	err = net_xmit_eval(err);
	if (unlikely(err)) {
		srnic_count_add(sdev, SRNIC_CNT_TX_DROPPED, pkts);
		return err;
	}
	srnic_count_add(sdev, SRNIC_CNT_TX_PACKETS, pkts);
	srnic_count_add(sdev, SRNIC_CNT_TX_BYTES, roce_bytes);
	return 0;
}

/**
 * srnic_xmit() - send a RoCEv2 packet
 * @sdev: the device
 * @qp: the sending QP (its route cache is used), or NULL; a QP's packets
 *	come through srnic_sched_xmit(), which counts them in its backpressure
 * @av: the path
 * @sport: UDP source port
 * @tclass: IPv4 TOS / IPv6 traffic class, ECN bits included
 * @skb: BTH + extension headers + payload, from srnic_xmit_alloc(); the
 *	payload may be in page fragments
 * @pad: pad bytes to add after the payload (BTH PadCnt)
 *
 * srnic_xmit_build() and srnic_xmit_out(); consumes @skb in every case.
 *
 * Return: 0 when the packet was handed to the IP stack, or a negative errno
 * (no route, netdev gone, dropped by the stack: reliable QPs recover by
 * retransmission).
 */
int srnic_xmit(struct srnic_dev *sdev, struct srnic_qp *qp,
	       const struct srnic_av *av, u16 sport, u8 tclass,
	       struct sk_buff *skb, unsigned int pad)
{
	int err;

	err = srnic_xmit_build(sdev, qp, av, sport, tclass, skb, pad, 0);
	if (err)
		return err;
	return srnic_xmit_out(sdev, skb, 1, srnic_xmit_roce_len(skb));
}
