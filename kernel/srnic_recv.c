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
 *
 * VLANs: a packet that arrives on a VLAN of a device's netdev is that
 * device's (srnic_recv_dev()), and a UD or GSI completion says which VLAN
 * (IB_WC_WITH_VLAN): RDMA-CM finds the GID to answer from by it.
 *
 * Bonds and bridges: a device may be bound to the bond or bridge itself,
 * or to a slave or port; then ib_core gives the master's addresses to the
 * active slave's device (or to every one below, without an active slave),
 * and what arrives on the master is that device's, or the one device's
 * below it (srnic_recv_master_dev()).
 *
 * Macvlans: what arrives on a macvlan of a device's netdev, in the same
 * namespace, is that device's (ib_core gives it the macvlan's addresses).
 */
#include <linux/if_macvlan.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/interrupt.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/bonding.h>
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
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return transport == SRNIC_TRANSPORT_XRC;
	case IB_QPT_DRIVER:	/* a DCI or DCT */
		return transport == SRNIC_TRANSPORT_DC;
	default:
		return false;
	}
}

/* Point the extension header fields of @pkt into the linear headers. */
static void srnic_recv_ext_hdrs(struct srnic_pkt *pkt, u32 flags)
{
	const void *p = pkt->skb->data + SRNIC_BTH_LEN;

	if (flags & SRNIC_OPF_XRCETH) {
		pkt->xrceth = p;
		p += SRNIC_XRCETH_LEN;
	}
	if (flags & SRNIC_OPF_DCETH) {
		pkt->dceth = p;
		p += SRNIC_DCETH_LEN;
	}
	if (flags & SRNIC_OPF_DCRETH) {
		pkt->dcreth = p;
		p += SRNIC_DCRETH_LEN;
	}
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
 * Fill @pkt from a packet srnic_recv_check() passed: its headers are
 * linear. Also run again on the CPU a packet is steered to (the parse does
 * not fit in skb->cb).
 */
static void srnic_recv_fill(struct srnic_dev *sdev, struct sk_buff *skb,
			    struct srnic_pkt *pkt)
{
	const struct srnic_bth *bth = (const struct srnic_bth *)skb->data;
	const struct srnic_opcode_info *info;

	memset(pkt, 0, sizeof(*pkt));
	info = srnic_opcode_info(srnic_bth_opcode(bth));
	pkt->skb = skb;
	pkt->sdev = sdev;
	pkt->opcode = srnic_bth_opcode(bth);
	pkt->pos = info->pos;
	pkt->psn = srnic_bth_psn(bth);
	pkt->qpn = srnic_bth_qpn(bth);
	pkt->hdr_len = srnic_opcode_hdr_len(pkt->opcode);
	pkt->paylen = skb->len - pkt->hdr_len - srnic_bth_pad(bth) -
		      SRNIC_ICRC_LEN;
	pkt->ackreq = srnic_bth_ackreq(bth);
	pkt->se = srnic_bth_se(bth);
	pkt->vlan_id = SRNIC_NO_VLAN;	/* the caller knows where it came */
	srnic_recv_ext_hdrs(pkt, info->flags);
}

/*
 * Check the packet's structure and pull its headers into the linear area.
 * skb->data is at the BTH. Return: 0, or a counter saying why the packet
 * is dropped.
 */
static int srnic_recv_check(struct sk_buff *skb)
{
	const struct srnic_bth *bth;
	unsigned int len = skb->len, pad, hdr_len;

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
	return 0;
}

/*
 * Then its ICRC and what the headers claim (srnic_recv_check() passed).
 * Return: 0, or a counter saying why the packet is dropped.
 */
static int srnic_recv_verify(struct sk_buff *skb)
{
	const struct srnic_bth *bth = (const struct srnic_bth *)skb->data;
	u8 opcode = srnic_bth_opcode(bth);
	unsigned int len = skb->len, nh_off;
	u32 icrc, want;

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

	if (len - srnic_opcode_hdr_len(opcode) - srnic_bth_pad(bth) -
	    SRNIC_ICRC_LEN &&
	    !(srnic_opcode_info(opcode)->flags & SRNIC_OPF_PAYLOAD))
		return SRNIC_CNT_RX_BAD_HDR;
	return 0;
}

/*
 * Verify a parsed packet and count it received. Return: false if it is
 * dropped (counted; the caller frees it).
 */
static bool srnic_recv_accept(struct srnic_dev *sdev, struct srnic_pkt *pkt)
{
	int why = srnic_recv_verify(pkt->skb);

	if (why) {
		srnic_count(sdev, why);
		return false;
	}
	pkt->verified = true;
	srnic_count(sdev, SRNIC_CNT_RX_PACKETS);
	srnic_count_add(sdev, SRNIC_CNT_RX_BYTES, pkt->skb->len);
	trace_srnic_pkt_rx(sdev->ib_dev.index, pkt->qpn, 0, pkt->psn,
			   pkt->paylen, pkt->opcode);
	return true;
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

/* A packet for @qp, of a type it takes: to its role. */
static void srnic_recv_qp(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);

	/* DC: a DCT answers (and notifies) from its attachments: srnic_dct.c */
	if (qp->dc == SRNIC_DC_DCT) {
		srnic_dct_rcv(qp, pkt);
		return;
	}
	if (!pkt->np_seen)
		srnic_cnp_np_rcv(qp, pkt);	/* DCQCN: CE mark -> CNP */
	if (srnic_qp_is_dci(qp)) {
		/* a DCI takes responses only */
		if (!(info->flags & SRNIC_OPF_RESP))
			srnic_count(qp->sdev, SRNIC_CNT_DC_NOT_DC_QP_DROPS);
		else if (srnic_dci_rcv(qp, pkt))
			srnic_comp_rcv(qp, pkt);
		return;
	}
	if (srnic_qp_reliable(qp) &&
	    READ_ONCE(qp->sdev->repath_timeouts))
		srnic_recv_follow_peer(qp, pkt->skb);
	/* An XRC initiator only sends requests, a target only answers. */
	if ((info->flags & SRNIC_OPF_REQ) &&
	    qp->ibqp.qp_type != IB_QPT_XRC_INI) {
		srnic_resp_rcv(qp, pkt);
	} else if (info->flags & SRNIC_OPF_RESP) {
		if (srnic_qp_reliable(qp) &&
		    qp->ibqp.qp_type != IB_QPT_XRC_TGT)
			srnic_comp_rcv(qp, pkt);
		else
			srnic_count(qp->sdev, SRNIC_CNT_RX_BAD_HDR);
	} else {
		srnic_count(qp->sdev, SRNIC_CNT_RX_BAD_HDR);
	}
}

/* ------------------------------------------------------------ steering */

/*
 * Receive steering
 * ----------------
 * A packet is received on whatever CPU the netdev hands it to: on a veth,
 * the CPU that sent it. The requester's doorbell then also runs the peer's
 * responder, its completion and its ACK, and the completer of that ACK, on
 * one CPU, while the CPUs of the processes that wait for those completions
 * only poll (README "Benchmark": the 64 B message rate of both stacks
 * doubles when the receive side runs where its consumer is). So, as RFS
 * does for sockets, a user QP's packets are run on the CPU of its consumer
 * (the task that created the QP; task_cpu(): where it runs or last ran),
 * after their checks here: they are queued on that CPU's srnic_rx_cpu and
 * its tasklet, kicked by an IPI, runs them. Kernel QPs (ULPs) are not
 * steered. Off by default, on per device with sysfs srnic/rx_steer: in a
 * TCG guest it raises the 64 B message rate by a fifth and triples the
 * 8 B latency (an IPI per hop; README "Benchmark").
 *
 * Spreading (sysfs srnic/rx_spread, on by default) does the same for bulk
 * data only, and earlier: a user RC or UC QP's packet of a message of
 * several (FIRST, MIDDLE or LAST; srnic_recv_spreads()) runs on its
 * consumer's CPU, or on another CPU if the consumer's is this one, with
 * its ICRC checked there too (srnic_recv_accept() on the CPU it runs on).
 * On a veth, where one CPU would otherwise build, send, receive, check and
 * place every packet of a transfer, the receiving half moves to the other
 * CPU: ib_write_bw 64 KiB +43 % in a TCG guest (README "Benchmark"). A
 * message of one packet - a ping-pong's, a small message's - runs where it
 * was received, as before: no IPI on the latency path. Counted rx_spread
 * (rx_steered counts steering's). DCQCN's notification point sees a
 * spread packet's CE mark as it arrives, before the queue
 * (srnic_recv_np_early()): when it saw it after the queue, test_dcqcn's
 * drops with DCQCN on rose from ~3 % to 6-17 % of off's.
 *
 * Order: a QP's packets are run in the order they were received on one
 * CPU. qp->rx_cpu, the CPU they are queued for, changes only while none is
 * queued (qp->rx_queued, under qp->rx_lock), so a packet never overtakes
 * one queued before it, and one run in place finds none queued.
 *
 * Bounds: a CPU's queue holds at most SRNIC_RX_STEER_MAX packets; beyond,
 * packets are dropped and counted (rx_steer_drops), as the backlog of the
 * stack drops (the requester retransmits). Each queued packet holds a QP
 * reference: destroy_qp() waits for it to be run.
 *
 * CPU hotplug: a CPU that is not active is not chosen - one going down is
 * inactive, its ksoftirqd parked, well before it is offline, and softirq
 * work a packet run there leaves behind would wait for its death; an IPI
 * that cannot be sent (the CPU went down meanwhile) schedules the queue's
 * tasklet on this CPU instead, and a tasklet of a CPU gone down is run
 * elsewhere by the kernel: the queue is drained in every case.
 */
#define SRNIC_RX_STEER_MAX	1024
#define SRNIC_RX_STEER_BUDGET	64

/**
 * struct srnic_rx_cpu - packets steered to one CPU
 * @queue: the packets, each holding a reference of its QP (skb->cb);
 *	@queue.lock protects it
 * @csd: the IPI that schedules @run on the CPU; sent under @queue.lock:
 *	smp_call_function_single_async() tests and sets the csd's lock
 *	non-atomically, and two senders at once could queue it twice (a
 *	cycle in the CPU's call-function list, walked forever)
 * @run: runs the queue, in softirq (srnic_recv_steered())
 */
struct srnic_rx_cpu {
	struct sk_buff_head	queue;
	call_single_data_t	csd;
	struct tasklet_struct	run;
};

static DEFINE_PER_CPU(struct srnic_rx_cpu, srnic_rx_cpus);

struct srnic_recv_cb {
	struct srnic_qp		*qp;
	bool			verified;	/* struct srnic_pkt's */
	bool			np_seen;
	u16			vlan_id;
};

static struct srnic_recv_cb *srnic_recv_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct srnic_recv_cb) > sizeof(skb->cb));
	return (struct srnic_recv_cb *)skb->cb;
}

/* On the target CPU, in hard interrupt context. */
static void srnic_recv_ipi(void *info)
{
	tasklet_schedule(info);
}

/* Run a CPU's queue, up to a budget; the tasklet goes again for the rest. */
static void srnic_recv_steered(struct tasklet_struct *t)
{
	struct srnic_rx_cpu *rc = from_tasklet(rc, t, run);
	struct srnic_pkt pkt;
	struct sk_buff *skb;
	struct srnic_qp *qp;
	int n;

	for (n = 0; n < SRNIC_RX_STEER_BUDGET; n++) {
		skb = skb_dequeue(&rc->queue);
		if (!skb)
			return;
		qp = srnic_recv_cb(skb)->qp;
		srnic_recv_fill(qp->sdev, skb, &pkt);
		pkt.verified = srnic_recv_cb(skb)->verified;
		pkt.np_seen = srnic_recv_cb(skb)->np_seen;
		pkt.vlan_id = srnic_recv_cb(skb)->vlan_id;
		if (pkt.verified || srnic_recv_accept(qp->sdev, &pkt))
			srnic_recv_qp(qp, &pkt);
		atomic_dec(&qp->rx_queued);
		srnic_qp_put(qp);
		consume_skb(skb);
	}
	if (!skb_queue_empty_lockless(&rc->queue))
		tasklet_schedule(t);
}

/* Another active CPU than @here, -1 if there is none. */
static int srnic_recv_other_cpu(int here)
{
	int cpu = cpumask_next(here, cpu_active_mask);

	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_active_mask);
	return cpu < nr_cpu_ids && cpu != here ? cpu : -1;
}

/*
 * The CPU to run @qp's packet on: -1 for this one. With steering on, the
 * consumer's; else a packet of a message of several (@spread) goes to the
 * consumer's CPU if it is not this one, else to another.
 */
static int srnic_recv_steer_cpu(struct srnic_qp *qp, bool spread)
{
	int here = smp_processor_id();
	int cpu;

	lockdep_assert_held(&qp->rx_lock);
	if (atomic_read(&qp->rx_queued))
		return qp->rx_cpu;	/* behind those, in order */
	cpu = task_cpu(qp->rx_task);
	if (cpu == here || !cpu_active(cpu))
		cpu = spread ? srnic_recv_other_cpu(here) : -1;
	else if (!spread && !READ_ONCE(qp->sdev->rx_steer))
		cpu = -1;
	if (cpu >= 0)
		qp->rx_cpu = cpu;
	return cpu;
}

/*
 * Steer @pkt, a packet for @qp, to its consumer's CPU, or spread it
 * (@spread). Return: true if it was queued there, or dropped (counted): the
 * skb and the caller's QP reference are gone; false: run it here.
 */
static bool srnic_recv_steer(struct srnic_qp *qp, struct srnic_pkt *pkt,
			     bool spread)
{
	struct sk_buff *skb = pkt->skb;
	struct srnic_rx_cpu *rc;
	unsigned long flags;
	bool kick, lost;
	int cpu;

	if (!qp->rx_task)
		return false;			/* a kernel QP */
	/*
	 * The common cases cost no lock: nothing queued, and steering off
	 * (the default) or the consumer here.
	 */
	if (!atomic_read(&qp->rx_queued) && !spread &&
	    (!READ_ONCE(qp->sdev->rx_steer) ||
	     task_cpu(qp->rx_task) == smp_processor_id()))
		return false;

	spin_lock(&qp->rx_lock);
	cpu = srnic_recv_steer_cpu(qp, spread);
	if (cpu >= 0)
		atomic_inc(&qp->rx_queued);
	spin_unlock(&qp->rx_lock);
	if (cpu < 0)
		return false;

	rc = per_cpu_ptr(&srnic_rx_cpus, cpu);
	/* Nothing of the receive path's context travels with it. */
	skb_dst_drop(skb);
	skb->dev = NULL;
	srnic_recv_cb(skb)->qp = qp;
	srnic_recv_cb(skb)->verified = pkt->verified;
	srnic_recv_cb(skb)->np_seen = pkt->np_seen;
	srnic_recv_cb(skb)->vlan_id = pkt->vlan_id;
	spin_lock_irqsave(&rc->queue.lock, flags);
	if (skb_queue_len(&rc->queue) >= SRNIC_RX_STEER_MAX) {
		spin_unlock_irqrestore(&rc->queue.lock, flags);
		srnic_count(qp->sdev, SRNIC_CNT_RX_STEER_DROPS);
		atomic_dec(&qp->rx_queued);
		srnic_qp_put(qp);
		kfree_skb(skb);
		return true;
	}
	kick = skb_queue_empty(&rc->queue);
	__skb_queue_tail(&rc->queue, skb);
	/*
	 * A queue that was not empty has its kick on the way already; so has
	 * one whose IPI is still pending (-EBUSY): it runs the whole queue.
	 */
	lost = kick && smp_call_function_single_async(cpu, &rc->csd) &&
	       !cpu_online(cpu);
	spin_unlock_irqrestore(&rc->queue.lock, flags);
	srnic_count(qp->sdev, spread ? SRNIC_CNT_RX_SPREAD :
					SRNIC_CNT_RX_STEERED);
	if (lost)
		tasklet_schedule(&rc->run);	/* gone down: drain it here */
	return true;
}

/* Module load: the per-CPU queues. */
void srnic_recv_init(void)
{
	struct srnic_rx_cpu *rc;
	int cpu;

	for_each_possible_cpu(cpu) {
		rc = per_cpu_ptr(&srnic_rx_cpus, cpu);
		skb_queue_head_init(&rc->queue);
		tasklet_setup(&rc->run, srnic_recv_steered);
		INIT_CSD(&rc->csd, srnic_recv_ipi, &rc->run);
	}
}

static void srnic_recv_nop(void *info)
{
}

/*
 * Module unload, every device gone: no packet is queued (each held a QP
 * reference, and every QP has been destroyed). An IPI may still be on its
 * way: one run on every CPU that waits comes after it or shares its
 * interrupt, which the grace period then waits for. Then the tasklets.
 */
void srnic_recv_exit(void)
{
	struct srnic_rx_cpu *rc;
	int cpu;

	on_each_cpu(srnic_recv_nop, NULL, 1);
	synchronize_rcu();
	for_each_possible_cpu(cpu) {
		rc = per_cpu_ptr(&srnic_rx_cpus, cpu);
		tasklet_kill(&rc->run);
		WARN_ON(!skb_queue_empty(&rc->queue));
	}
}

/* ------------------------------------------------------------ dispatch */

/*
 * May @pkt be spread to another CPU, and be verified there? A packet of an
 * RC or UC message of several, to a unicast QP, with spreading on.
 */
static bool srnic_recv_spreads(struct srnic_dev *sdev,
			       const struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info;

	if (!READ_ONCE(sdev->rx_spread) || pkt->pos == SRNIC_POS_ONLY ||
	    pkt->qpn == SRNIC_MULTICAST_QPN)
		return false;
	info = srnic_opcode_info(pkt->opcode);
	return info->transport == SRNIC_TRANSPORT_RC ||
	       info->transport == SRNIC_TRANSPORT_UC;
}

/*
 * A packet about to be spread with a CE mark: DCQCN's notification point
 * sees it now, as it arrives, not when it runs after a queue (the CNP would
 * come late, and the queue grow). It is verified first: no CNP for a
 * packet that is dropped. Return: false if it is dropped (counted).
 */
static bool srnic_recv_np_early(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	if (!srnic_cnp_skb_ce(pkt->skb))
		return true;
	if (!srnic_recv_accept(qp->sdev, pkt))
		return false;
	srnic_cnp_np_rcv(qp, pkt);
	pkt->np_seen = true;
	return true;
}

/*
 * @pkt is verified (srnic_recv_accept()) unless @spread (srnic_recv_spreads()
 * said so): then it is verified where it runs, here or on another CPU.
 * Return: true if the packet was steered to another CPU (it is gone), false
 * if the caller still owns it.
 */
static bool srnic_recv_dispatch(struct srnic_dev *sdev, struct srnic_pkt *pkt,
				bool spread)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	struct srnic_qp *qp;
	bool dc, ok;

	if (info->transport == SRNIC_TRANSPORT_CNP) {
		srnic_cnp_rp_rcv(sdev, pkt);	/* DCQCN reaction point */
		return false;
	}
	if (pkt->qpn == SRNIC_MULTICAST_QPN) {
		srnic_mcast_rcv(sdev, pkt);
		return false;
	}
	/* DC exists in native mode only (docs/dc.md) */
	dc = info->transport == SRNIC_TRANSPORT_DC;
	if (dc && sdev->mode != SRNIC_MODE_NATIVE) {
		srnic_count(sdev, SRNIC_CNT_DC_NOT_DC_QP_DROPS);
		return false;
	}
	qp = srnic_qp_get(sdev, pkt->qpn);
	ok = qp && srnic_recv_qp_type_ok(qp, info->transport);
	if (ok && spread && !srnic_recv_np_early(qp, pkt))
		goto put;
	if (ok && srnic_recv_steer(qp, pkt, spread))
		return true;		/* with our QP reference */

	/* It runs here, verified before any outcome. */
	if (!pkt->verified && !srnic_recv_accept(sdev, pkt))
		goto put;
	if (ok)
		srnic_recv_qp(qp, pkt);
	else if (!qp)
		srnic_count(sdev, dc ? SRNIC_CNT_DC_UNKNOWN_DCT :
				  SRNIC_CNT_RX_NO_QP);
	else
		srnic_count(sdev, dc ? SRNIC_CNT_DC_NOT_DC_QP_DROPS :
				  SRNIC_CNT_RX_BAD_HDR);
put:
	if (qp)
		srnic_qp_put(qp);
	return false;
}

/*
 * The netdev a looped-back packet is for: the one that holds its
 * destination address in this namespace, or NULL. Context: RCU read side.
 */
static struct net_device *srnic_recv_loopback_ndev(struct sk_buff *skb)
{
	struct net *net = dev_net(skb->dev);
	struct net_device *ndev = NULL;

	if (skb->protocol == htons(ETH_P_IP))
		ndev = __ip_dev_find(net, ip_hdr(skb)->daddr, false);
	else if (IS_ENABLED(CONFIG_IPV6) && skb->protocol == htons(ETH_P_IPV6))
		ndev = ipv6_dev_find(net, &ipv6_hdr(skb)->daddr, NULL);
	return ndev && !(ndev->flags & IFF_LOOPBACK) ? ndev : NULL;
}

/*
 * The device a packet handed up on @master, a bond or a bridge with no
 * device of its own, is for. ib_core lists the master's addresses among
 * the GIDs of the devices below it (roce_gid_mgmt.c): in the bond modes
 * with an active slave (active-backup, tlb, alb) of that slave's device
 * only, otherwise of every one. So it is the active slave's device or,
 * without an active slave, the one srnic device below @master; two or
 * more share the GIDs, and the packet is none of theirs (bind to @master).
 * Context: RCU read side.
 */
static struct srnic_dev *srnic_recv_master_dev(struct net_device *master)
{
	struct net_device *slave;

	if (netif_is_bond_master(master)) {
		slave = bond_option_active_slave_get_rcu(netdev_priv(master));
		if (slave)
			return srnic_dev_get_by_netdev(slave);
	} else if (!netif_is_bridge_master(master)) {
		return NULL;
	}
	return srnic_dev_get_below(master);
}

/*
 * The netdev below macvlan @ndev if it is of the same namespace, or @ndev.
 * ib_core lists a macvlan's addresses among the GIDs of the device of the
 * netdev below it (the macvlan is an upper of it); srnic takes them only
 * from a macvlan in its netdev's namespace (srnic_port_netns_ok()).
 * Context: RCU read side.
 */
static struct net_device *srnic_recv_macvlan_lower(struct net_device *ndev)
{
	struct net_device *lower = macvlan_dev_real_dev(ndev);

	return net_eq(dev_net(lower), dev_net(ndev)) ? lower : ndev;
}

/*
 * The device a received packet is for, and the VLAN it came on (*@vlan_id:
 * the VID, or SRNIC_NO_VLAN). It is the device bound to the netdev the
 * packet arrived on or, when that is a VLAN of another netdev, the device
 * bound to the real one: ib_core lists a VLAN's addresses among the GIDs
 * of the device on its real netdev, and a QP sending from such a GID sends
 * through the VLAN. A bond or bridge (or a VLAN of one) with no device
 * of its own gives the packet to a device below it, for the same reason
 * (srnic_recv_master_dev()), and a macvlan gives it to the device of the
 * netdev below it (srnic_recv_macvlan_lower()). A looped-back packet
 * arrives on lo: it is for the netdev holding its destination address.
 */
static struct srnic_dev *srnic_recv_dev(struct sk_buff *skb, u16 *vlan_id)
{
	struct net_device *ndev = skb->dev;
	struct srnic_dev *sdev = NULL;

	*vlan_id = SRNIC_NO_VLAN;
	rcu_read_lock();
	if (ndev->flags & IFF_LOOPBACK)
		ndev = srnic_recv_loopback_ndev(skb);
	if (ndev) {
		sdev = srnic_dev_get_by_netdev(ndev);
		if (!sdev && netif_is_macvlan(ndev)) {
			ndev = srnic_recv_macvlan_lower(ndev);
			sdev = srnic_dev_get_by_netdev(ndev);
		}
		if (is_vlan_dev(ndev)) {
			*vlan_id = vlan_dev_vlan_id(ndev);
			ndev = vlan_dev_real_dev(ndev);
			if (!sdev)
				sdev = srnic_dev_get_by_netdev(ndev);
		}
		if (!sdev)
			sdev = srnic_recv_master_dev(ndev);
	}
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
	u16 vlan_id;
	bool spread;
	int why;

	sdev = srnic_recv_dev(skb, &vlan_id);
	if (!sdev)
		goto drop;

	ulen = ntohs(udp_hdr(skb)->len);
	if (ulen < sizeof(struct udphdr) || ulen > skb->len ||
	    pskb_trim(skb, ulen)) {
		srnic_count(sdev, SRNIC_CNT_RX_BAD_HDR);
		goto put_dev;
	}
	__skb_pull(skb, sizeof(struct udphdr));

	why = srnic_recv_check(skb);
	if (why) {
		srnic_count(sdev, why);
		goto put_dev;
	}
	srnic_recv_fill(sdev, skb, &pkt);
	pkt.vlan_id = vlan_id;
	spread = srnic_recv_spreads(sdev, &pkt);
	if (!spread && !srnic_recv_accept(sdev, &pkt))
		goto put_dev;
	if (!srnic_recv_dispatch(sdev, &pkt, spread))
		consume_skb(skb);
	ib_device_put(&sdev->ib_dev);
	return 0;

put_dev:
	ib_device_put(&sdev->ib_dev);
drop:
	kfree_skb(skb);
	return 0;
}
