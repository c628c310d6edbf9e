// SPDX-License-Identifier: GPL-2.0
/*
 * The test wire of the KUnit suites that drive a real srnic device: see
 * srnic_kunit_wire.h. Linked into srnic.o with the suites when
 * CONFIG_RDMA_SRNIC_KUNIT_TEST=y.
 */
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>

#include "srnic_kunit_wire.h"

/* ------------------------------------------------------------- the wire */

/**
 * srnic_kw_deliver - hand one packet to srnic
 * @w: the wire
 * @skb: the packet, data at its IP header
 *
 * Calls srnic_udp_encap_recv() as the UDP tunnel would; the caller is in
 * softirq, or has bottom halves off.
 */
void srnic_kw_deliver(struct srnic_kw_wire *w, struct sk_buff *skb)
{
	unsigned int hlen;

	/* A NIC lets go of what it sent: srnic's TX accounting ends here. */
	skb_orphan(skb);
	skb->dev = w->ndev;
	skb->protocol = htons(ETH_P_IP);
	skb_reset_network_header(skb);
	hlen = ip_hdrlen(skb);
	__skb_pull(skb, hlen);
	skb_reset_transport_header(skb);
	srnic_udp_encap_recv(NULL, skb);
}

static void srnic_kw_tasklet(struct tasklet_struct *t)
{
	struct srnic_kw_wire *w = from_tasklet(w, t, tasklet);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&w->rx))) {
		srnic_kw_deliver(w, skb);
		atomic_inc(&w->delivered);
	}
}

/* Put @skb (data at the IP header) on the wire towards srnic. */
void srnic_kw_inject(struct srnic_kw_wire *w, struct sk_buff *skb)
{
	atomic_inc(&w->queued);
	skb_queue_tail(&w->rx, skb);
	tasklet_schedule(&w->tasklet);
}

/* Only srnic's packets go on the wire: IPv4, UDP, to port 4791. */
static bool srnic_kw_is_roce(struct sk_buff *skb)
{
	const struct iphdr *iph;
	const struct udphdr *uh;

	if (skb->protocol != htons(ETH_P_IP) ||
	    !pskb_may_pull(skb, ETH_HLEN + sizeof(*iph)))
		return false;
	iph = (const struct iphdr *)(skb->data + ETH_HLEN);
	if (iph->protocol != IPPROTO_UDP ||
	    !pskb_may_pull(skb, ETH_HLEN + iph->ihl * 4 + sizeof(*uh)))
		return false;
	iph = (const struct iphdr *)(skb->data + ETH_HLEN);
	uh = (const struct udphdr *)((const u8 *)iph + iph->ihl * 4);
	return uh->dest == htons(SRNIC_ROCE_V2_PORT);
}

static netdev_tx_t srnic_kw_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct srnic_kw_wire *w = netdev_priv(ndev);

	skb_dst_drop(skb);
	if (w->orphan)
		skb_orphan(skb);
	if (READ_ONCE(w->dead) || !srnic_kw_is_roce(skb) ||
	    (w->linear && skb_linearize(skb))) {
		/* the IPv6 stack's own (ND, MLD), or teardown */
		kfree_skb(skb);
		return NETDEV_TX_OK;
	}
	__skb_pull(skb, ETH_HLEN);
	skb_reset_network_header(skb);
	if (READ_ONCE(w->slow_ms) && ip_hdr(skb)->daddr == w->slow_daddr) {
		/* sent: not in the local stack any more, only slow */
		skb_orphan(skb);
		mdelay(READ_ONCE(w->slow_ms));
	}
	if (READ_ONCE(w->hold))
		skb_queue_tail(&w->held, skb);
	else
		srnic_kw_inject(w, skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops srnic_kw_netdev_ops = {
	.ndo_start_xmit = srnic_kw_xmit,
};

/* ib_core asks for the link speed (and logs a default without one). */
static int srnic_kw_get_link_ksettings(struct net_device *ndev,
				       struct ethtool_link_ksettings *cmd)
{
	cmd->base.speed = SPEED_10000;
	cmd->base.duplex = DUPLEX_FULL;
	return 0;
}

static const struct ethtool_ops srnic_kw_ethtool_ops = {
	.get_link_ksettings = srnic_kw_get_link_ksettings,
};

static void srnic_kw_netdev_setup(struct net_device *ndev)
{
	ether_setup(ndev);
	ndev->netdev_ops = &srnic_kw_netdev_ops;
	ndev->ethtool_ops = &srnic_kw_ethtool_ops;
	/* No neighbour resolution, no qdisc: straight to the wire. */
	ndev->flags |= IFF_NOARP;
	ndev->priv_flags |= IFF_NO_QUEUE;
	ndev->features |= NETIF_F_LLTX;
	eth_hw_addr_random(ndev);
}

/* Wait until everything put on the wire has been handled by srnic. */
bool srnic_kw_settle(struct srnic_kw_wire *w)
{
	int ms;

	for (ms = 0; ms < SRNIC_KW_WAIT_MS; ms++) {
		if (atomic_read(&w->delivered) == atomic_read(&w->queued))
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

/* Wait until at least @n packets are held; return how many are. */
u32 srnic_kw_wait_held(struct srnic_kw_wire *w, u32 n)
{
	int ms;

	for (ms = 0; ms < SRNIC_KW_WAIT_MS && skb_queue_len(&w->held) < n; ms++)
		usleep_range(1000, 2000);
	return skb_queue_len(&w->held);
}

/* Deliver every held packet and stop holding. */
void srnic_kw_release(struct srnic_kw_wire *w)
{
	struct sk_buff *skb;

	WRITE_ONCE(w->hold, false);
	while ((skb = skb_dequeue(&w->held)))
		srnic_kw_inject(w, skb);
}

/* What is held has left the sending host: end srnic's TX accounting. */
void srnic_kw_orphan_held(struct srnic_kw_wire *w)
{
	struct sk_buff *skb;
	unsigned long flags;

	spin_lock_irqsave(&w->held.lock, flags);
	skb_queue_walk(&w->held, skb)
		skb_orphan(skb);
	spin_unlock_irqrestore(&w->held.lock, flags);
}

/* Drop what is held or waiting for the tasklet. */
void srnic_kw_purge(struct srnic_kw_wire *w)
{
	skb_queue_purge(&w->held);
	skb_queue_purge(&w->rx);
}

/* Nothing reaches srnic any more; held packets let go of their QP. */
void srnic_kw_stop(struct srnic_kw_wire *w)
{
	WRITE_ONCE(w->dead, true);
	srnic_kw_purge(w);
}

/* ------------------------------------------------------------- packets */

/* A linear copy to tamper with; the ICRC is recomputed by srnic_kw_icrc(). */
struct sk_buff *srnic_kw_copy(struct kunit *test, struct sk_buff *skb)
{
	struct sk_buff *c = skb_copy(skb, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	return c;
}

/* Recompute the ICRC of a linear packet whose data is at its IP header. */
void srnic_kw_icrc(struct sk_buff *skb)
{
	unsigned int len = skb->len - SRNIC_ICRC_LEN;

	put_unaligned_le32(srnic_icrc_buf(skb->data, len), skb->data + len);
}

/* ------------------------------------------------------------- device */

void srnic_kw_v4_gid(union ib_gid *gid, u32 ip)
{
	ipv6_addr_set_v4mapped(htonl(ip), (struct in6_addr *)gid->raw);
}

static int srnic_kw_set_addr(struct net_device *ndev, u32 ip)
{
	struct ifreq ifr = {};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

	strscpy(ifr.ifr_name, ndev->name, sizeof(ifr.ifr_name));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(ip);
	return devinet_ioctl(dev_net(ndev), SIOCSIFADDR, &ifr);
}

/*
 * ib_core fills the GID table from the netdev's addresses, in a worker:
 * wait for @ip's RoCEv2 GID and note its index.
 */
static int srnic_kw_find_gid(struct srnic_kw_dev *kd, u32 ip)
{
	const struct ib_gid_attr *attr;
	union ib_gid gid;
	int ms;

	srnic_kw_v4_gid(&gid, ip);
	for (ms = 0; ms < 5000; ms += 10) {
		attr = rdma_find_gid_by_port(kd->ibdev, &gid,
					     IB_GID_TYPE_ROCE_UDP_ENCAP,
					     SRNIC_PORT_NUM, kd->ndev);
		if (!IS_ERR(attr)) {
			kd->sgid_index = attr->index;
			rdma_put_gid_attr(attr);
			return 0;
		}
		usleep_range(10000, 20000);
	}
	return -ETIMEDOUT;
}

/* The test netdev @ifname (a netdev name format), up, with address @ip. */
static void srnic_kw_netdev_add(struct kunit *test, struct srnic_kw_dev *kd,
				const char *ifname, u32 ip)
{
	struct srnic_kw_wire *w;
	int err;

	kd->ndev = alloc_netdev(sizeof(*w), ifname, NET_NAME_ENUM,
				srnic_kw_netdev_setup);
	KUNIT_ASSERT_NOT_NULL(test, kd->ndev);
	w = netdev_priv(kd->ndev);
	kd->wire = w;
	w->ndev = kd->ndev;
	skb_queue_head_init(&w->rx);
	skb_queue_head_init(&w->held);
	tasklet_setup(&w->tasklet, srnic_kw_tasklet);
	err = register_netdev(kd->ndev);
	if (err) {
		free_netdev(kd->ndev);
		kd->ndev = NULL;
		KUNIT_ASSERT_EQ(test, err, 0);
	}
	rtnl_lock();
	err = dev_open(kd->ndev, NULL);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_EQ(test, srnic_kw_set_addr(kd->ndev, ip), 0);
}

/**
 * srnic_kw_dev_add - a srnic device on a new test wire, with a PD and an MR
 * @test: the case; any failure is an assertion
 * @kd: filled in; zeroed by the caller
 * @ifname: the netdev's name format ("srnicdp%d")
 * @ibname: the srnic device's name
 * @ip: the netdev's IPv4 address, host order
 * @mode: the device's provider mode
 *
 * Returns once ib_core has put @ip's RoCEv2 GID in the device's table.
 * The wire delivers what srnic sends; a case sets its flags. Undone by
 * srnic_kw_stop() and srnic_kw_dev_del(), also after a failure here.
 */
void srnic_kw_dev_add(struct kunit *test, struct srnic_kw_dev *kd,
		      const char *ifname, const char *ibname, u32 ip,
		      enum srnic_mode mode)
{
	struct ib_mr *mr;
	int err;

	srnic_kw_netdev_add(test, kd, ifname, ip);
	KUNIT_ASSERT_EQ(test, srnic_dev_add(ibname, kd->ndev, mode), 0);
	kd->sdev = srnic_dev_get_by_netdev(kd->ndev);
	KUNIT_ASSERT_NOT_NULL(test, kd->sdev);
	/* Owned by ib_core until srnic_kw_dev_del() unregisters it. */
	ib_device_put(&kd->sdev->ib_dev);
	kd->ibdev = &kd->sdev->ib_dev;
	KUNIT_ASSERT_EQ(test, srnic_kw_find_gid(kd, ip), 0);

	kd->pd = ib_alloc_pd(kd->ibdev, 0);
	if (IS_ERR(kd->pd)) {
		err = PTR_ERR(kd->pd);
		kd->pd = NULL;
		KUNIT_ASSERT_EQ(test, err, 0);
	}
	/* ib_core's global rkey has no atomic right: a DMA MR of our own. */
	mr = kd->ibdev->ops.get_dma_mr(kd->pd, IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	kd->mr = mr;
}

/**
 * srnic_kw_dev_del - undo srnic_kw_dev_add()
 * @kd: the device, its wire stopped (srnic_kw_stop()) and every QP, CQ and
 *	SRQ the case made of it destroyed
 */
void srnic_kw_dev_del(struct srnic_kw_dev *kd)
{
	if (!kd->ndev)
		return;
	tasklet_kill(&kd->wire->tasklet);
	srnic_kw_purge(kd->wire);
	if (kd->mr)
		kd->ibdev->ops.dereg_mr(kd->mr, NULL);
	if (kd->pd)
		ib_dealloc_pd(kd->pd);
	if (kd->ibdev)
		ib_unregister_device(kd->ibdev);
	unregister_netdev(kd->ndev);
	free_netdev(kd->ndev);
}

/* What counter @c moved by since srnic_kw_cnt_zero(). */
u64 srnic_kw_cnt(struct srnic_kw_dev *kd, enum srnic_counter c)
{
	return atomic64_read(&kd->sdev->counters.v[c]) - kd->cnt0[c];
}

/* Count from here: srnic_kw_cnt() returns what moved since. */
void srnic_kw_cnt_zero(struct srnic_kw_dev *kd)
{
	int i;

	for (i = 0; i < SRNIC_CNT_MAX; i++)
		kd->cnt0[i] = atomic64_read(&kd->sdev->counters.v[i]);
}

/* Wait until counter @c has moved by at least @n; return what it moved. */
u64 srnic_kw_wait_cnt(struct srnic_kw_dev *kd, enum srnic_counter c, u64 n)
{
	int ms;

	for (ms = 0; ms < SRNIC_KW_WAIT_MS && srnic_kw_cnt(kd, c) < n; ms++)
		usleep_range(1000, 2000);
	return srnic_kw_cnt(kd, c);
}
