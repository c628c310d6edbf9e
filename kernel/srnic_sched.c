// SPDX-License-Identifier: GPL-2.0
/*
 * srnic TX scheduler: everything that decides when a QP's packets leave.
 *
 * - A run (srnic_sched_run()) asks the QP's producers (srnic_sched.h: the
 *   responder, then the requester) for packets, each up to its budget
 *   (struct srnic_producer); with work left it queues the QP's work item (qp->tx_work, on
 *   srnic_wq) and yields the CPU.
 * - PSN order (issue 11 finding 7): this file is where the guarantee lives
 *   that one QP's packets never leave from two CPUs at once. A run holds
 *   SRNIC_TX_RUNNING (one runner per QP; a second asker sets
 *   SRNIC_TX_AGAIN and the runner goes once more), runs with migration
 *   disabled, and only on the QP's owner CPU (qp->tx_cpu,
 *   srnic_sched_claim_cpu()): packets sent from two CPUs may overtake each
 *   other below (a veth queues them on the sending CPU's backlog, a NIC on
 *   that CPU's TX queue). The owner changes only while nothing of the QP is
 *   in flight and every producer is quiet; elsewhere the run is handed to
 *   the owner (an IPI that schedules qp->tx_tasklet there).
 * - Local backpressure: every packet of a QP is counted while in the local
 *   stack (srnic_sched_xmit()); producers stop at a high mark
 *   (srnic_sched_full()), the skb destructor schedules the tasklet at the
 *   low mark.
 * - Pacing: a token bucket per QP (srnic_sched_pace(), asked by the
 *   requester for each packet) whose hrtimer kicks the QP when tokens are
 *   there; its rate is the QP's rate limit or the DCQCN reaction point's
 *   (srnic_sched_rate_changed(), run on every rate change).
 *
 * Beneath the requester and the responder, which produce; above srnic_xmit.c
 * and the QP core. Runs take no lock of the QP; the producers call the
 * pacer and the reaction point glue with req_lock held, srnic_sched_full()
 * under their own lock, and the responder srnic_sched_xmit() under
 * resp_lock.
 */
#include <linux/ktime.h>
#include <linux/udp.h>

#include "srnic.h"
#include "srnic_trace.h"

/* Runs the QPs' transmit sides. */
static struct workqueue_struct *srnic_wq;

int srnic_sched_init(void)
{
	/* Per CPU, not unbound: a QP's TX side runs on its owner CPU. */
	srnic_wq = alloc_workqueue("srnic", WQ_MEM_RECLAIM | SRNIC_WQ_PERCPU, 0);
	return srnic_wq ? 0 : -ENOMEM;
}

void srnic_sched_exit(void)
{
	destroy_workqueue(srnic_wq);
}

/* ------------------------------------------------------------ pacing */

/*
 * Pacer burst: this many packets - of the QP's path MTU while DCQCN paces
 * a QP that had no rate limit, of 4096 bytes for a rate limit. A burst is
 * what the bottleneck queue must absorb on top of the rate; more than a
 * few packets crosses the marking threshold of a shallow queue by itself.
 */
#define SRNIC_PACE_BURST_PKTS	4

/* (Re)start the token bucket full. Context: req_lock held. */
static void srnic_sched_pace_start(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->req_lock);
	qp->pace.tokens = qp->pace.burst;
	qp->pace.last = ktime_get();
}

/* The DCQCN reaction point on the pacer (srnic_dcqcn.c: the logic). */

/* The pacer rate: DCQCN's RC, or the QP's own rate limit if lower. */
static void srnic_sched_rp_apply(struct srnic_qp *qp)
{
	u64 user = (u64)READ_ONCE(qp->attr.rate_limit) * 1000 / 8;
	u64 rate = qp->dcqcn.active ? qp->dcqcn.rc : 0;

	lockdep_assert_held(&qp->req_lock);
	if (user && (!rate || user < rate))
		rate = user;
	if (rate && !qp->pace.rate) {
		if (!qp->pace.burst)
			qp->pace.burst = SRNIC_PACE_BURST_PKTS *
				(ib_mtu_enum_to_int(qp->attr.path_mtu ?:
						    IB_MTU_256) +
				 SRNIC_BTH_LEN);
		srnic_sched_pace_start(qp);
	}
	qp->pace.rate = rate;
}

/*
 * Every DCQCN rate change of a QP comes here, with req_lock held and the
 * reason (enum srnic_rate_reason); fires srnic_rate.
 */
void srnic_sched_rate_changed(struct srnic_qp *qp, int why)
{
	u64 old = qp->pace.rate;

	srnic_sched_rp_apply(qp);
	if (trace_srnic_rate_enabled()) {
		/* alpha is kept with 1.0 = 2^20; the event carries 1.0 = 1024 */
		u32 alpha = srnic_dcqcn_rp_alpha(&qp->dcqcn, &qp->sdev->dcqcn,
						 ktime_get_ns()) >> 10;

		trace_srnic_rate(qp->sdev->ib_dev.index, srnic_qpn(qp), old,
				 qp->pace.rate, qp->dcqcn.rt, alpha, why);
	}
}

/*
 * srnic_sched_rp_tx() - the reaction point's timers, evaluated lazily
 * @qp: the QP (req_lock held), with qp->dcqcn.active
 * @bytes: bytes just sent, or 0 to let only the time pass
 *
 * Called by the pacer (srnic_sched_pace()); the caller checks
 * qp->dcqcn.active first, so a QP at full rate never gets here.
 */
static void srnic_sched_rp_tx(struct srnic_qp *qp, u32 bytes)
{
	int why;

	lockdep_assert_held(&qp->req_lock);
	why = srnic_dcqcn_rp_advance(&qp->dcqcn, &qp->sdev->dcqcn, bytes,
				     ktime_get_ns());
	if (why >= 0)
		srnic_sched_rate_changed(qp, why);
}

/*
 * srnic_sched_rp_wait_ns() - how long a paced QP may sleep at most
 * @qp: the QP (req_lock held)
 *
 * Return: ns until DCQCN's next rate-increase timer expiry, U64_MAX when
 * DCQCN is not limiting the QP.
 */
static u64 srnic_sched_rp_wait_ns(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->req_lock);
	if (!qp->dcqcn.active)
		return U64_MAX;
	return srnic_dcqcn_rp_next_ns(&qp->dcqcn, &qp->sdev->dcqcn,
				      ktime_get_ns());
}

/**
 * srnic_sched_rate() - a QP's current transmit rate limit
 * @qp: the QP
 *
 * For observability (rdma resource show qp -dd): the pacer's rate, which is
 * DCQCN's current rate RC while DCQCN limits the QP (qp->dcqcn.active;
 * target rate qp->dcqcn.rt, alpha srnic_dcqcn_rp_alpha()), else the QP's
 * own rate limit.
 *
 * Return: bytes/s, 0 when the QP is not paced (full rate).
 */
u64 srnic_sched_rate(struct srnic_qp *qp)
{
	return READ_ONCE(qp->pace.rate);
}

/**
 * srnic_sched_set_rate() - pace the QP's requests
 * @qp: the QP
 * @kbps: rate in kbit/s (IB_QP_RATE_LIMIT units), 0 to stop pacing
 */
void srnic_sched_set_rate(struct srnic_qp *qp, u32 kbps)
{
	spin_lock_bh(&qp->req_lock);
	qp->pace.rate = (u64)kbps * 1000 / 8;
	qp->pace.burst = SRNIC_PACE_BURST_PKTS * 4096;
	srnic_sched_pace_start(qp);
	spin_unlock_bh(&qp->req_lock);
	srnic_sched_kick(qp);
}

/**
 * srnic_sched_pace() - may @bytes go out now?
 * @qp: the QP (req_lock held)
 * @bytes: size of the next packet
 *
 * Return: true, with the bytes' tokens taken; or false, with the pacing
 * timer armed to kick the TX side when enough tokens will have accumulated.
 */
bool srnic_sched_pace(struct srnic_qp *qp, u32 bytes)
{
	ktime_t now;
	u64 ns;

	lockdep_assert_held(&qp->req_lock);
	if (unlikely(qp->dcqcn.active))
		srnic_sched_rp_tx(qp, 0);		/* DCQCN: timers, lazily */
	if (!qp->pace.rate)
		return true;
	now = ktime_get();
	ns = ktime_to_ns(ktime_sub(now, qp->pace.last));
	qp->pace.last = now;
	qp->pace.tokens = min(qp->pace.burst,
			      qp->pace.tokens +
			      mul_u64_u64_div_u64(ns, qp->pace.rate, NSEC_PER_SEC));
	if (qp->pace.tokens >= bytes) {
		qp->pace.tokens -= bytes;
		if (qp->dcqcn.active)
			srnic_sched_rp_tx(qp, bytes);	/* byte counter */
		return true;
	}
	ns = mul_u64_u64_div_u64(bytes - qp->pace.tokens, NSEC_PER_SEC,
				 qp->pace.rate);
	/* wake up for DCQCN's next rate increase too */
	ns = min(ns, srnic_sched_rp_wait_ns(qp));
	if (!hrtimer_active(&qp->pace.timer))
		hrtimer_start(&qp->pace.timer, ns_to_ktime(ns),
			      HRTIMER_MODE_REL);
	return false;
}

static enum hrtimer_restart srnic_sched_pace_timer(struct hrtimer *t)
{
	struct srnic_qp *qp = container_of(t, struct srnic_qp, pace.timer);

	srnic_sched_kick(qp);
	return HRTIMER_NORESTART;
}

/* ------------------------------------------------------------ backpressure */

/*
 * Local transmit backpressure
 * ---------------------------
 * A QP must not flood the local qdisc: behind a slow or shaped link (htb,
 * a busy NIC) a go-back-N sender that queues faster than the link drains
 * only fills the queue until the qdisc drops (fq_codel, pfifo limit), and
 * every drop costs a whole window of retransmissions. So every packet a QP
 * sends is counted in qp->tx_skbs until the stack lets go of it: the skb
 * destructor (srnic_sched_skb_done()) runs when the packet is freed - sent
 * by the driver, delivered across a veth (ip_rcv orphans it), or dropped
 * anywhere (qdisc, netem, no neighbour: kfree_skb runs destructors too), or
 * orphaned early by a qdisc that holds packets for long (netem with delay,
 * fq). The TX side stops taking new packets at SRNIC_TX_SKBS_HIGH
 * (srnic_sched_full()) and the destructor kicks it again when the count
 * falls to SRNIC_TX_SKBS_LOW; the low mark leaves the queue short enough
 * that an AQM (CoDel's 5 ms target at 20 Mbit/s is ~12 KB) sees it drain.
 *
 * The kick is a tasklet (qp->tx_tasklet, srnic_sched_tasklet()) that runs
 * the TX side in softirq, not the work item: the queue holds only a few
 * packets' worth of time, and a worker competing with busy-polling
 * processes for the CPU came too late (ib_write_bw over a 20 Mbit/s link
 * reached a quarter of it). Not inline in the destructor either: that may
 * run under the very qdisc lock a transmit would take (a qdisc dropping in
 * its dequeue).
 * Counted in packets, not bytes: a packet costs the qdisc a slot whatever
 * its size, and the path MTU bounds the bytes.
 *
 * Lifetime: the destructor may run long after srnic_xmit() returned, even
 * while the QP is being destroyed, so each counted skb holds a QP
 * reference (qp->ref) taken with refcount_inc_not_zero(): destroy_qp()
 * waits for @released, so it waits for the QP's last packet to leave the
 * stack (bounded: qdiscs drop or send, a downed device resets its queues),
 * and the QP memory, its work item and the module code all outlive every
 * destructor call. Once destroy dropped the last reference no packet can
 * be counted any more: it is dropped. The QP pointer rides in
 * skb_shinfo()->destructor_arg, unused by skbs without zerocopy state
 * (srnic never sets SKBFL_ZEROCOPY_ENABLE), so skb->sk stays NULL as
 * ip_local_out() wants it for a socketless sender.
 */
#define SRNIC_TX_SKBS_HIGH	16
#define SRNIC_TX_SKBS_LOW	4

static void srnic_sched_skb_done(struct sk_buff *skb)
{
	struct srnic_qp *qp = skb_shinfo(skb)->destructor_arg;

	/*
	 * Once: a packet of a train is released when the stack cuts the
	 * train (skb_segment_list()) and freed later with its fields as they
	 * were, this one included.
	 */
	skb->destructor = NULL;
	if (atomic_dec_return(&qp->tx_skbs) <= SRNIC_TX_SKBS_LOW &&
	    test_and_clear_bit(SRNIC_TX_BLOCKED, &qp->tx_flags))
		tasklet_schedule(&qp->tx_tasklet);
	/* Last: may let destroy_qp() go on (see above). */
	srnic_qp_put(qp);
}

/*
 * Count @skb in @qp's backpressure. False when the QP is being destroyed:
 * the packet is dropped (counted).
 */
static bool srnic_sched_own(struct srnic_qp *qp, struct sk_buff *skb)
{
	if (unlikely(!refcount_inc_not_zero(&qp->ref))) {
		srnic_count(qp->sdev, SRNIC_CNT_TX_DROPPED);
		kfree_skb(skb);
		return false;
	}
	atomic_inc(&qp->tx_skbs);
	skb_shinfo(skb)->destructor_arg = qp;
	skb->destructor = srnic_sched_skb_done;
	return true;
}

/**
 * srnic_sched_full() - must the QP's TX side stop for backpressure?
 * @qp: the QP
 *
 * Return: true when SRNIC_TX_SKBS_HIGH of its packets are still in the
 * local stack; the TX side then runs again from its tasklet
 * (srnic_sched_tasklet()) once the count has fallen to SRNIC_TX_SKBS_LOW.
 * Any context.
 */
bool srnic_sched_full(struct srnic_qp *qp)
{
	if (atomic_read(&qp->tx_skbs) < SRNIC_TX_SKBS_HIGH)
		return false;
	set_bit(SRNIC_TX_BLOCKED, &qp->tx_flags);
	/*
	 * Pairs with the atomic_dec_return() in srnic_sched_skb_done(): a
	 * destructor that did not see the bit has already decremented, so
	 * this second look sees its count.
	 */
	smp_mb__after_atomic();
	if (atomic_read(&qp->tx_skbs) > SRNIC_TX_SKBS_LOW)
		return true;
	clear_bit(SRNIC_TX_BLOCKED, &qp->tx_flags);
	return false;
}

/**
 * srnic_sched_xmit() - send a packet of @qp, counted in its backpressure
 * @qp: the QP; the packet leaves from its UDP source port
 * @av: the path
 * @tclass: IPv4 TOS / IPv6 traffic class
 * @skb: the packet, from srnic_xmit_alloc(); consumed in every case
 * @pad: pad bytes to add after the payload
 *
 * Every packet of a QP leaves through here: a run's (srnic_sched_send()),
 * and those its producers' helpers send themselves - the responder's ACKs
 * and NAKs, from the receive path and from its turn in a run (under
 * resp_lock: srnic_resp_xmit_ack()) - and CNPs; these never go in a train
 * (see "Trains"). Return: as srnic_xmit().
 */
int srnic_sched_xmit(struct srnic_qp *qp, const struct srnic_av *av,
		     u8 tclass, struct sk_buff *skb, unsigned int pad)
{
	if (!srnic_sched_own(qp, skb))
		return -ENODEV;		/* the QP is being destroyed */
	return srnic_xmit(qp->sdev, qp, av, READ_ONCE(qp->src_port), tclass, skb,
			  pad);
}

/* ------------------------------------------------------------ trains */

/*
 * Trains (sysfs srnic/tx_batch, off by default)
 * ------
 * Every packet pays the stack's cost once on each side - routing, netfilter
 * hooks, the neighbour, the netdev, the backlog softirq, IP input, the UDP
 * socket lookup - and in a TCG guest that cost, not srnic, bounds a QP's
 * bandwidth (README "Benchmark"). So the requester's consecutive packets of
 * one run leave as one skb: a fraglist GSO train (SKB_GSO_UDP_L4 |
 * SKB_GSO_FRAGLIST), the form UDP GRO gives a train it received. Each
 * packet in it is a whole RoCEv2 packet with its own IP and UDP headers and
 * ICRC, built as it will be on the wire; the first one is the skb, the
 * others hang in its frag_list holding their payload, their headers in
 * their headroom. Where a netdev cannot carry the train (any real NIC),
 * the stack cuts it back into exactly those packets before the driver; a
 * veth carries it whole and the receiving UDP socket cuts it: the stack's
 * cost is paid once per train up to there.
 *
 * What the cut changes, and so what the ICRC (which covers the IP ID and
 * the lengths) is computed with: the first packet gets the train's IP ID
 * (0), the n-th packet ID n; each gets its own IP total length and the
 * first its own UDP length (while a train, the first packet's headers
 * carry the train's lengths, as the stack wants). Every packet of a train
 * has the first one's addresses and ports and is no longer than it (the
 * stack checks the path MTU on the first one's size), a train is at most
 * SRNIC_TX_TRAIN_MAX packets and 64 KiB; anything else closes the train.
 * Not the same as single packets: a qdisc that marks ECN on a train marks
 * its first packet only, a router on the way decrements only the first
 * one's TTL, and a drop loses the whole train.
 */
#define SRNIC_TX_TRAIN_MAX	64
#define SRNIC_TX_TRAIN_BYTES	(U16_MAX - 1024)

/*
 * Trains for this QP's requests? Connected QPs only: one unicast peer. A UD
 * QP's packets go to as many addresses as its AHs, multicast groups too,
 * whose local copies the stack loops back in ways it does not for trains.
 */
static bool srnic_sched_trains(struct srnic_qp *qp)
{
	return READ_ONCE(qp->sdev->tx_batch) &&
	       (srnic_qp_reliable(qp) || qp->ibqp.qp_type == IB_QPT_UC);
}

/* Send the run's train, if any. */
static void srnic_sched_flush(struct srnic_tx_run *run)
{
	struct sk_buff *skb = run->train;
	struct srnic_dev *sdev = run->qp->sdev;
	unsigned int n = run->train_pkts;

	if (!skb)
		return;
	run->train = NULL;
	run->train_pkts = 0;
	if (n > 1) {
		/* the train's length, from the UDP header on */
		udp_hdr(skb)->len = htons(skb->len - skb_transport_offset(skb));
		skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
		skb_shinfo(skb)->gso_size = run->train_seg;
		skb_shinfo(skb)->gso_segs = n;
		/* UDP checksum 0: nothing for the stack or a NIC to fill in */
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		srnic_count_add(sdev, SRNIC_CNT_TX_TRAIN_PKTS, n);
	}
	srnic_xmit_out(sdev, skb, n, run->train_roce);
}

/* May a packet of @len bytes from the UDP header on join the run's train? */
static bool srnic_sched_train_fits(struct srnic_tx_run *run,
				   const struct srnic_av *av, u16 sport,
				   unsigned int len)
{
	unsigned int seg = len - sizeof(struct udphdr);

	return av == run->train_av && sport == run->train_sport &&
	       seg <= run->train_seg && run->train_pkts < SRNIC_TX_TRAIN_MAX &&
	       run->train->len + seg <= SRNIC_TX_TRAIN_BYTES;
}

/* Put a built packet (data at its IP header) on the run's train. */
static void srnic_sched_train_add(struct srnic_tx_run *run,
				  const struct srnic_av *av, u16 sport,
				  struct sk_buff *skb)
{
	unsigned int hdrs = skb_transport_offset(skb) + sizeof(struct udphdr);
	struct sk_buff *head = run->train;

	if (!head) {
		run->train = skb;
		run->train_tail = &skb_shinfo(skb)->frag_list;
		run->train_av = av;
		run->train_sport = sport;
		run->train_seg = skb->len - hdrs;
		run->train_roce = skb->len - hdrs;
		run->train_pkts = 1;
		return;
	}
	/* its payload in the train, its headers in its headroom */
	skb_dst_drop(skb);
	__skb_pull(skb, hdrs);
	*run->train_tail = skb;
	run->train_tail = &skb->next;
	head->len += skb->len;
	head->data_len += skb->len;
	head->truesize += skb->truesize;
	run->train_roce += skb->len;
	run->train_pkts++;
}

/**
 * srnic_sched_send() - a producer's packet, in a run
 * @run: the run
 * @av: the path and its traffic class
 * @skb: the packet; consumed in every case
 * @pad: pad bytes to add after the payload
 *
 * Sent at once (srnic_sched_xmit()), or, for a producer that sends trains
 * with the device's tx_batch on, put on the run's train (see "Trains"),
 * which leaves when a packet cannot join it and at the end of the
 * producer's turn.
 *
 * Return: as srnic_xmit(); 0 for a packet put on a train.
 */
int srnic_sched_send(struct srnic_tx_run *run, const struct srnic_av *av,
		     struct sk_buff *skb, unsigned int pad)
{
	struct srnic_qp *qp = run->qp;
	u16 sport = READ_ONCE(qp->src_port);
	unsigned int len;
	int err;

	if (!run->trains)
		return srnic_sched_xmit(qp, av, av->tclass, skb, pad);
	if (!srnic_sched_own(qp, skb))
		return -ENODEV;
	len = sizeof(struct udphdr) + skb->len + pad + SRNIC_ICRC_LEN;
	if (run->train && !srnic_sched_train_fits(run, av, sport, len))
		srnic_sched_flush(run);
	err = srnic_xmit_build(qp->sdev, qp, av, sport, av->tclass, skb, pad,
			       run->train_pkts);
	if (err)
		return err;
	srnic_sched_train_add(run, av, sport, skb);
	return 0;
}

/* ------------------------------------------------------------ runs */

/* Backpressure released (srnic_sched_skb_done()): send on, in softirq. */
static void srnic_sched_tasklet(struct tasklet_struct *t)
{
	struct srnic_qp *qp = from_tasklet(qp, t, tx_tasklet);

	srnic_sched_kick_now(qp);
}

/*
 * On the owner CPU, in hard interrupt context: run the TX side there, from
 * the tasklet (srnic_sched_hand_over()).
 */
static void srnic_sched_ipi(void *info)
{
	struct srnic_qp *qp = info;

	/* The csd is free again: the next hand-over may send it. */
	clear_bit(SRNIC_TX_IPI, &qp->tx_flags);
	tasklet_schedule(&qp->tx_tasklet);
	srnic_qp_put(qp);
}

/* The owner CPU of the QP's transmit side, or -1 (srnic_sched_claim_cpu()). */
static int srnic_sched_owner(struct srnic_qp *qp)
{
	int cpu = READ_ONCE(qp->tx_cpu);

	return cpu >= 0 && cpu_online(cpu) ? cpu : -1;
}

/*
 * May the transmit side run on this CPU? On its owner, yes. Elsewhere only
 * when nothing the QP sent before can still be overtaken: none of its
 * packets is in the local stack, every request sent is acknowledged (the
 * peer has taken them all) and no READ response or atomic ACK waits to go
 * (a deferred ACK may: this run sends it). The CPU then becomes the owner.
 * Else the caller hands over to the owner (counted: tx_handovers).
 * Called with SRNIC_TX_RUNNING held, migration disabled.
 */
static bool srnic_sched_claim_cpu(struct srnic_qp *qp)
{
	int cpu = raw_smp_processor_id();
	int owner = srnic_sched_owner(qp);
	const struct srnic_producer *p;
	int i;

	if (owner == cpu)
		return true;
	if (owner >= 0) {
		if (atomic_read(&qp->tx_skbs))
			return false;
		for (i = 0; i < SRNIC_SCHED_PRODUCERS; i++) {
			p = qp->producers[i];
			if (p && !p->quiet(qp))
				return false;
		}
	}
	WRITE_ONCE(qp->tx_cpu, cpu);
	return true;
}

/**
 * srnic_sched_in_order_here() - may a packet of @qp leave from this CPU
 * outside a run without overtaking one the QP sent before?
 * @qp: the QP
 *
 * Yes on its owner CPU (or with none), and anywhere while none of its
 * packets is in the local stack. For the responder's ACKs from the receive
 * path (srnic_resp_rcv()): sent at once on the CPU that received the
 * request, they leave the QP's transmit side where it is - on the CPU that
 * posts its requests - instead of claiming it for this one, where the
 * requests would follow (a run here, or a hand-over). A later response
 * from the owner may still pass such an ACK in the stack; ACKs are
 * cumulative and a later response implies it (IBA 9.7.5.1.2), so the
 * requester loses nothing. Context: migration disabled (softirq).
 *
 * Return: true if the packet may be sent here and now.
 */
bool srnic_sched_in_order_here(struct srnic_qp *qp)
{
	int owner = srnic_sched_owner(qp);

	return owner < 0 || owner == raw_smp_processor_id() ||
	       !atomic_read(&qp->tx_skbs);
}

/* Queue the transmit side's work item on its owner CPU (or this one). */
static void srnic_sched_queue(struct srnic_qp *qp)
{
	int cpu = srnic_sched_owner(qp);

	queue_work_on(cpu >= 0 ? cpu : WORK_CPU_UNBOUND, srnic_wq,
		      &qp->tx_work);
}

/*
 * Hand the transmit side over to its owner CPU: an IPI there schedules the
 * TX tasklet, which runs it in softirq - at once, where a worker could
 * wait long behind a process busy-polling its CQ. The IPI holds a QP
 * reference: destroy_qp() waits for the last one before it kills the
 * tasklet. One already on its way does the job (an owner going offline
 * runs the IPIs queued to it first); without an owner online, or when the
 * QP is going, the work item runs it.
 *
 * Runners on two CPUs may hand over at once, and
 * smp_call_function_single_async() tests and sets the csd's lock
 * non-atomically: both could queue it, twice in the owner's call-function
 * list, a cycle the owner then walks forever (seen in a CI run). So
 * SRNIC_TX_IPI picks the one sender; the IPI clears it, after the kernel
 * has taken the csd off that list.
 */
static void srnic_sched_hand_over(struct srnic_qp *qp)
{
	int cpu = srnic_sched_owner(qp);

	srnic_count(qp->sdev, SRNIC_CNT_TX_HANDOVER);
	if (cpu >= 0) {
		if (test_and_set_bit(SRNIC_TX_IPI, &qp->tx_flags))
			return;		/* one is on its way */
		if (refcount_inc_not_zero(&qp->ref)) {
			if (!smp_call_function_single_async(cpu, &qp->tx_csd))
				return;
			srnic_qp_put(qp);
		}
		clear_bit(SRNIC_TX_IPI, &qp->tx_flags);
	}
	srnic_sched_queue(qp);
}

/*
 * One run of the QP's transmit side: each producer in turn, the responder
 * first, each up to its budget. Returns true if work remains.
 */
static bool srnic_sched_tx(struct srnic_qp *qp)
{
	struct srnic_tx_run run = { .qp = qp };
	const struct srnic_producer *p;
	bool more = false;
	int i;

	for (i = 0; i < SRNIC_SCHED_PRODUCERS; i++) {
		p = qp->producers[i];
		if (!p)
			continue;
		run.budget = p->budget;
		run.trains = p->trains && srnic_sched_trains(qp);
		if (p->tx(qp, &run))
			more = true;
		srnic_sched_flush(&run);
	}
	return more;
}

/*
 * Run the transmit side here, unless it is already running (the runner
 * goes once more) or this CPU does not own it (handed over to the owner).
 */
static void srnic_sched_run(struct srnic_qp *qp)
{
	bool more, mine;

	do {
		if (test_and_set_bit(SRNIC_TX_RUNNING, &qp->tx_flags)) {
			set_bit(SRNIC_TX_AGAIN, &qp->tx_flags);
			/* The runner may have just finished: make sure. */
			if (test_and_set_bit(SRNIC_TX_RUNNING, &qp->tx_flags))
				return;
		}
		clear_bit(SRNIC_TX_AGAIN, &qp->tx_flags);
		/* Every packet of this run leaves from the same CPU. */
		migrate_disable();
		mine = srnic_sched_claim_cpu(qp);
		more = mine && srnic_sched_tx(qp);
		migrate_enable();
		if (!mine) {
			clear_bit(SRNIC_TX_RUNNING, &qp->tx_flags);
			srnic_sched_hand_over(qp);
			return;
		}
		if (more) {
			clear_bit(SRNIC_TX_RUNNING, &qp->tx_flags);
			srnic_sched_queue(qp);
			return;
		}
		clear_bit(SRNIC_TX_RUNNING, &qp->tx_flags);
		/* Order the clear before the AGAIN test; pairs with the setter. */
		smp_mb__after_atomic();
	} while (test_bit(SRNIC_TX_AGAIN, &qp->tx_flags));
}

static void srnic_sched_work(struct work_struct *work)
{
	srnic_sched_run(container_of(work, struct srnic_qp, tx_work));
}

/* Ask for the transmit side to run, from the work item (any context). */
void srnic_sched_kick(struct srnic_qp *qp)
{
	srnic_sched_queue(qp);
}

/**
 * srnic_sched_kick_now() - run the transmit side here, unless it runs already
 * @qp: the QP; none of its locks may be held
 *
 * For process and softirq context (the receive path, timers): an ACK that
 * opens the window or a READ request sends at once, instead of waiting for
 * a worker - which, with every CPU busy-polling a CQ, waits for a tick.
 */
void srnic_sched_kick_now(struct srnic_qp *qp)
{
	srnic_sched_run(qp);
}

/* Before the QP's producers are registered and it is published. */
void srnic_sched_qp_init(struct srnic_qp *qp)
{
	INIT_WORK(&qp->tx_work, srnic_sched_work);
	INIT_CSD(&qp->tx_csd, srnic_sched_ipi, qp);
	hrtimer_setup(&qp->pace.timer, srnic_sched_pace_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL);
	tasklet_setup(&qp->tx_tasklet, srnic_sched_tasklet);
	qp->tx_cpu = -1;
}

/*
 * Destroy, once the QP is unreachable and its last reference gone: no run
 * is pending or running when this returns. The tasklet is only scheduled
 * by packets holding a reference (backpressure, hand-over): it can be
 * pending now, not scheduled again. A timer may still queue a run: the
 * caller stops its timers, then calls srnic_sched_qp_fini().
 */
void srnic_sched_qp_stop(struct srnic_qp *qp)
{
	tasklet_kill(&qp->tx_tasklet);
	cancel_work_sync(&qp->tx_work);
}

/* After srnic_sched_qp_stop() and the requester's timers: the pacer too. */
void srnic_sched_qp_fini(struct srnic_qp *qp)
{
	hrtimer_cancel(&qp->pace.timer);
	cancel_work_sync(&qp->tx_work);
}
