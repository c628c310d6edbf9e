/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test wire of the KUnit suites that drive a real srnic device
 * (srnic_dp_test.c, srnic_dc_test.c): srnic_kunit_wire.c.
 *
 * srnic_kw_dev_add() makes a test Ethernet netdev with an IPv4 address
 * (no ARP, no qdisc), a srnic device on it with srnic_dev_add() (what
 * "rdma link add" calls), and a PD and a DMA MR with every access right.
 * Everything srnic sends leaves through srnic_xmit(), the IP stack and the
 * netdev's ndo_start_xmit: the wire, which keeps only IPv4 UDP 4791
 * packets (the IPv6 stack's ND and MLD are dropped) and strips their
 * Ethernet header. The wire then delivers each packet to
 * srnic_udp_encap_recv() from a tasklet (softirq, as a NIC's receive), or
 * holds it for the case to take, look at, tamper with and deliver.
 *
 * Names: srnic_kw_ ("KUnit wire").
 */
#ifndef SRNIC_KUNIT_WIRE_H
#define SRNIC_KUNIT_WIRE_H

#include <kunit/test.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <rdma/ib_verbs.h>

/* Relative to this file: see srnic_port_test.c. */
#include "../../kernel/srnic.h"

/* How long a case waits for the wire or for a counter. */
#define SRNIC_KW_WAIT_MS	3000

/**
 * struct srnic_kw_wire - the test netdev's private data: the wire
 * @ndev: the netdev
 * @rx: packets to hand to srnic_udp_encap_recv(), by @tasklet
 * @held: packets captured while @hold, for the case to take
 * @tasklet: delivers @rx in softirq, as a NIC's receive would
 * @hold: capture what srnic sends instead of delivering it
 * @orphan: end srnic's TX accounting (and its QP reference) at transmit;
 *	otherwise a held packet keeps it until delivered, as a packet still
 *	in the local stack would
 * @linear: make each packet linear at transmit (dropped if that fails)
 * @dead: drop what srnic sends (teardown)
 * @slow_ms: busy-wait this long in each transmit of a packet to
 *	@slow_daddr: a sender on a slow CPU
 * @slow_daddr: see @slow_ms
 * @queued: packets put on @rx
 * @delivered: packets of @rx srnic_udp_encap_recv() has returned from
 *
 * Each queue has its own lock; the flags are read locklessly.
 */
struct srnic_kw_wire {
	struct net_device	*ndev;
	struct sk_buff_head	rx;
	struct sk_buff_head	held;
	struct tasklet_struct	tasklet;
	bool			hold;
	bool			orphan;
	bool			linear;
	bool			dead;
	u32			slow_ms;
	__be32			slow_daddr;
	atomic_t		queued;
	atomic_t		delivered;
};

/**
 * struct srnic_kw_dev - a srnic device on a test wire, for one case
 * @ndev: the test netdev
 * @wire: its private data
 * @ibdev: the device, as ib_core sees it
 * @sdev: the device
 * @sgid_index: the RoCEv2 GID of the netdev's IPv4 address
 * @pd: a PD
 * @mr: a DMA MR of @pd with every access right
 * @cnt0: the device's counters when srnic_kw_cnt_zero() last ran
 */
struct srnic_kw_dev {
	struct net_device	*ndev;
	struct srnic_kw_wire	*wire;
	struct ib_device	*ibdev;
	struct srnic_dev	*sdev;
	u8			sgid_index;
	struct ib_pd		*pd;
	struct ib_mr		*mr;
	u64			cnt0[SRNIC_CNT_MAX];
};

/* the wire */
void srnic_kw_deliver(struct srnic_kw_wire *w, struct sk_buff *skb);
void srnic_kw_inject(struct srnic_kw_wire *w, struct sk_buff *skb);
bool srnic_kw_settle(struct srnic_kw_wire *w);
u32 srnic_kw_wait_held(struct srnic_kw_wire *w, u32 n);
void srnic_kw_release(struct srnic_kw_wire *w);
void srnic_kw_orphan_held(struct srnic_kw_wire *w);
void srnic_kw_purge(struct srnic_kw_wire *w);
void srnic_kw_stop(struct srnic_kw_wire *w);

/* packets: data at the IP header */
struct sk_buff *srnic_kw_copy(struct kunit *test, struct sk_buff *skb);
void srnic_kw_icrc(struct sk_buff *skb);

static inline struct srnic_bth *srnic_kw_bth(struct sk_buff *skb)
{
	return (void *)skb_network_header(skb) + ip_hdrlen(skb) +
	       sizeof(struct udphdr);
}

static inline struct srnic_aeth *srnic_kw_aeth(struct sk_buff *skb)
{
	return (void *)srnic_kw_bth(skb) + SRNIC_BTH_LEN;
}

static inline u8 srnic_kw_opcode(struct sk_buff *skb)
{
	return srnic_bth_opcode(srnic_kw_bth(skb));
}

static inline u32 srnic_kw_psn(struct sk_buff *skb)
{
	return srnic_bth_psn(srnic_kw_bth(skb));
}

/* the device */
void srnic_kw_v4_gid(union ib_gid *gid, u32 ip);
void srnic_kw_dev_add(struct kunit *test, struct srnic_kw_dev *kd,
		      const char *ifname, const char *ibname, u32 ip,
		      enum srnic_mode mode);
void srnic_kw_dev_del(struct srnic_kw_dev *kd);
u64 srnic_kw_cnt(struct srnic_kw_dev *kd, enum srnic_counter c);
void srnic_kw_cnt_zero(struct srnic_kw_dev *kd);
u64 srnic_kw_wait_cnt(struct srnic_kw_dev *kd, enum srnic_counter c, u64 n);

#endif /* SRNIC_KUNIT_WIRE_H */
