// SPDX-License-Identifier: GPL-2.0
/*
 * srnic DC targets (docs/dc.md): a DCT answers each initiator (DCI) from an
 * attachment, made by the initiator's first request (ATTACH in its DCETH)
 * and found by (initiator address, DCI number) for every packet after it.
 *
 * An attachment's responder is RC's (srnic_resp.c), unchanged: each
 * attachment owns a kernel-internal struct srnic_qp of type IB_QPT_RC in
 * state RTR, on the DCT's PD, SRQ and CQ, with the DCT's number, its
 * access flags and path MTU, its path back to the initiator from the
 * ATTACH packet's addresses. It is never in the device's QP table, never
 * seen by ib_core or a user; it sends RC's ACKs, READ responses and atomic
 * ACKs under DC opcodes with a DCRETH (srnic_resp.c, qp->dc ==
 * SRNIC_DC_ATT), so sequencing, duplicates, the READ/atomic replay
 * window, RNR and out-of-order placement are RC's code and tests. It is
 * the DCQCN notification point for its initiator as an RC QP is for its
 * peer (srnic_cnp.c): a CE-marked request makes it send a CNP to the DCI
 * number, from its path and UDP source port, at most one per
 * min_time_between_cnps per attachment.
 *
 * Bounds: at most the device's dc_max_attach attachments per DCT; a new
 * ATTACH beyond evicts the least recently used quiescent one (no message
 * open, no response queued, idle past the initiator's retransmission
 * horizon) or is answered with an RNR NAK. An idle scan (a delayed work
 * item while the DCT has attachments) frees those idle for the device's
 * dc_idle_ms (sysfs srnic/), and those detached once idle past the
 * horizon.
 *
 * DETACH does not free an attachment: it marks it detached, and it stays
 * until quiescent. Freed at once, a late duplicate of its first packet
 * (ATTACH, the same generation) would open it again at that packet's PSN
 * and execute the request a second time; kept, the duplicate is RC's
 * duplicate (test_dc_loss.sh replays one).
 *
 * Lifetime: the table (a hash of RCU lists) holds one reference of each
 * attachment's QP; a packet takes another for its handling. Unlinking
 * (under @lock) moves an attachment to @dead; the reap work item (process
 * context) moves its QP to the error state (a receive WQE it had open is
 * flushed to the DCT's CQ), waits for its last reference (packets in the
 * stack hold one: srnic_sched.c), stops its transmit side and frees it
 * after an RCU grace period. DCT destruction unlinks and reaps them all
 * once no packet can reach the DCT any more.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/rculist.h>
#include <net/inet_ecn.h>
#include <net/ipv6.h>

#include "srnic.h"
#include "srnic_trace.h"

#define SRNIC_DCT_HASH_BITS	8
static_assert(SRNIC_DC_RD_ATOMIC == SRNIC_DC_MAX_RD_ATOMIC);

/**
 * struct srnic_dct - a DC target's attachments
 * @qp: the DCT
 * @key: its access key; never changes
 * @max_attach: at most this many attachments; never changes
 * @lock: protects @hash's changes, @count, @dying and @dead (readers of
 *	@hash walk it under RCU)
 * @hash: the attachments, by initiator address and DCI number
 * @count: attachments in @hash
 * @dying: the DCT is being destroyed: no new attachment, no idle scan
 * @dead: attachments unlinked, waiting for @reap
 * @reap: frees @dead (srnic_dct_reap())
 * @idle: the idle scan
 */
struct srnic_dct {
	struct srnic_qp		*qp;
	u64			key;
	u32			max_attach;
	spinlock_t		lock;	/* see above */
	DECLARE_HASHTABLE(hash, SRNIC_DCT_HASH_BITS);
	u32			count;
	bool			dying;
	struct list_head	dead;
	struct work_struct	reap;
	struct delayed_work	idle;
};

/**
 * struct srnic_dc_att - one initiator's attachment to a DCT
 * @node: in the DCT's @hash
 * @dead: in the DCT's @dead once unlinked
 * @gid: the initiator's address (IPv4 as v4-mapped IPv6); never changes
 * @dci: the initiator's DCI number; never changes
 * @gen: the attachment generation; never changes
 * @last_rx: jiffies of its last request (WRITE_ONCE/READ_ONCE)
 * @horizon: the initiator's retransmission horizon, in jiffies
 * @detached: the initiator detached (under the DCT's @lock): freed once
 *	quiescent, whatever dc_idle_ms is
 * @rcu: frees it after readers of @hash are done
 * @qp: its RC responder (see the top of the file)
 */
struct srnic_dc_att {
	struct hlist_node	node;
	struct list_head	dead;
	struct in6_addr		gid;
	u32			dci;
	u32			gen;
	unsigned long		last_rx;
	unsigned long		horizon;
	bool			detached;
	struct rcu_head		rcu;
	struct srnic_qp		qp;
};

static u32 srnic_dct_hash(const struct in6_addr *gid, u32 dci)
{
	return jhash(gid, sizeof(*gid), dci);
}

/* The packet's source and destination addresses and traffic class. */
static void srnic_dct_pkt_addr(const struct sk_buff *skb, struct in6_addr *src,
			       struct in6_addr *dst, u8 *tclass)
{
	if (ip_hdr(skb)->version == 4) {
		const struct iphdr *iph = ip_hdr(skb);

		ipv6_addr_set_v4mapped(iph->saddr, src);
		ipv6_addr_set_v4mapped(iph->daddr, dst);
		*tclass = iph->tos;
	} else {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		*src = ip6h->saddr;
		*dst = ip6h->daddr;
		*tclass = ipv6_get_dsfield(ip6h);
	}
}

/*
 * The netdev a reply to a packet that came on VLAN @vlan_id leaves from:
 * that VLAN of the device's netdev (ib_core gives a VLAN's addresses to
 * the device on its real netdev), or the device's netdev itself. A bond's
 * slave or a bridge's port answers through the bond or bridge, which
 * handed the packet up (its addresses are the device's GIDs; srnic_recv.c).
 */
static int srnic_dct_reply_ifindex(struct srnic_dev *sdev, u16 vlan_id)
{
	struct net_device *ndev = READ_ONCE(sdev->ndev);
	struct net_device *master, *vdev;
	int ifindex;

	rcu_read_lock();
	master = srnic_port_master(ndev);
	if (master)
		ndev = master;
	ifindex = ndev->ifindex;
	if (vlan_id == SRNIC_NO_VLAN ||
	    (is_vlan_dev(ndev) && vlan_dev_vlan_id(ndev) == vlan_id))
		goto out_unlock;
	vdev = __vlan_find_dev_deep_rcu(ndev, htons(ETH_P_8021Q), vlan_id);
	if (!vdev)
		vdev = __vlan_find_dev_deep_rcu(ndev, htons(ETH_P_8021AD),
						vlan_id);
	if (vdev)
		ifindex = vdev->ifindex;
out_unlock:
	rcu_read_unlock();
	return ifindex;
}

/* The path back to the sender of @pkt, through the netdev it came on. */
static void srnic_dct_reply_av(struct srnic_dev *sdev,
			       const struct srnic_pkt *pkt, struct srnic_av *av)
{
	struct in6_addr src, dst;
	u8 tclass;

	memset(av, 0, sizeof(*av));
	srnic_dct_pkt_addr(pkt->skb, &src, &dst, &tclass);
	av->family = ipv6_addr_v4mapped(&src) ? AF_INET : AF_INET6;
	av->ifindex = srnic_dct_reply_ifindex(sdev, pkt->vlan_id);
	av->saddr = dst;
	av->daddr = src;
	av->tclass = tclass & ~INET_ECN_MASK;
}

/*
 * Answer @pkt without an attachment: a NAK (wrong key, no attachment, no
 * room) or a DETACH ACK, from the DCT's number, on the initiator's flow.
 */
static void srnic_dct_reply(struct srnic_qp *dqp, struct srnic_pkt *pkt,
			    u8 opcode, u8 syn)
{
	u32 dci = srnic_dceth_dci(pkt->dceth);
	struct srnic_dev *sdev = pkt->sdev;
	struct srnic_bth *bth;
	struct sk_buff *skb;
	struct srnic_av av;
	void *p;
	u32 fl;

	skb = srnic_xmit_alloc(srnic_opcode_hdr_len(opcode), 0);
	if (!skb)
		return;
	bth = (struct srnic_bth *)skb->data;
	srnic_bth_init(bth, opcode, false, false, 0, SRNIC_DEFAULT_PKEY, dci,
		       false, pkt->psn);
	p = bth + 1;
	srnic_dcreth_set(p, srnic_qpn(dqp), srnic_dceth_gen(pkt->dceth));
	if (srnic_opcode_info(opcode)->flags & SRNIC_OPF_AETH)
		srnic_aeth_set(p + SRNIC_DCRETH_LEN, syn, 0);
	srnic_dct_reply_av(sdev, pkt, &av);
	fl = rdma_calc_flow_label(srnic_qpn(dqp), dci);
	srnic_xmit(sdev, NULL, &av, rdma_flow_label_to_udp_sport(fl), av.tclass,
		   skb, 0);
}

static void srnic_dct_nak(struct srnic_qp *dqp, struct srnic_pkt *pkt, u8 syn)
{
	srnic_dct_reply(dqp, pkt, SRNIC_OPCODE_DC | IB_OPCODE_ACKNOWLEDGE, syn);
}

/* The attachment of (@gid, @dci), or NULL. Context: RCU or @dct->lock. */
static struct srnic_dc_att *srnic_dct_find(struct srnic_dct *dct,
					   const struct in6_addr *gid, u32 dci)
{
	struct srnic_dc_att *att;

	hash_for_each_possible_rcu(dct->hash, att, node,
				   srnic_dct_hash(gid, dci),
				   lockdep_is_held(&dct->lock))
		if (att->dci == dci && ipv6_addr_equal(&att->gid, gid))
			return att;
	return NULL;
}

/* Off the table, to be freed by the reap work. */
static void srnic_dct_unlink(struct srnic_dct *dct, struct srnic_dc_att *att,
			     u8 cause)
{
	lockdep_assert_held(&dct->lock);
	hash_del_rcu(&att->node);
	list_add_tail(&att->dead, &dct->dead);
	dct->count--;
	trace_srnic_dc_detach(dct->qp->sdev->ib_dev.index, att->dci,
			      srnic_qpn(dct->qp), att->gen, cause);
	if (!dct->dying)
		schedule_work(&dct->reap);
}

/* No message open, no response queued, idle for @idle jiffies. */
static bool srnic_dc_att_quiescent(struct srnic_dc_att *att,
				   unsigned long idle)
{
	return time_after(jiffies, READ_ONCE(att->last_rx) + idle) &&
	       !READ_ONCE(att->qp.resp.in_msg) &&
	       !READ_ONCE(att->qp.resp.tx_busy);
}

/* The least recently used quiescent attachment, or NULL. */
static struct srnic_dc_att *srnic_dct_lru(struct srnic_dct *dct)
{
	struct srnic_dc_att *att, *best = NULL;
	unsigned int bkt;

	lockdep_assert_held(&dct->lock);
	hash_for_each(dct->hash, bkt, att, node) {
		if (!srnic_dc_att_quiescent(att, att->horizon))
			continue;
		if (!best || time_before(READ_ONCE(att->last_rx),
					 READ_ONCE(best->last_rx)))
			best = att;
	}
	return best;
}

/* The responder of a new attachment (see the top of the file). */
static int srnic_dc_att_init_qp(struct srnic_dct *dct, struct srnic_dc_att *att,
				struct srnic_pkt *pkt)
{
	struct srnic_qp *dqp = dct->qp, *qp = &att->qp;

	qp->sdev = dqp->sdev;
	qp->ibqp.device = dqp->ibqp.device;
	qp->ibqp.qp_type = IB_QPT_RC;
	qp->ibqp.qp_num = srnic_qpn(dqp);
	qp->ibqp.pd = dqp->ibqp.pd;
	qp->dc = SRNIC_DC_ATT;
	qp->att = att;
	qp->dci.gen = att->gen;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->req_lock);
	spin_lock_init(&qp->resp_lock);
	spin_lock_init(&qp->path_lock);
	spin_lock_init(&qp->rx_lock);
	qp->rx_cpu = -1;
	qp->rcq = dqp->rcq;
	qp->scq = dqp->scq;
	qp->srq = dqp->srq;
	spin_lock_bh(&dqp->state_lock);
	qp->attr.path_mtu = dqp->attr.path_mtu;
	qp->attr.qp_access_flags = dqp->attr.qp_access_flags;
	qp->attr.min_rnr_timer = dqp->attr.min_rnr_timer;
	spin_unlock_bh(&dqp->state_lock);
	qp->attr.max_dest_rd_atomic = SRNIC_DC_RD_ATOMIC;
	qp->attr.dest_qp_num = att->dci;
	qp->state = IB_QPS_RTR;
	qp->attr.qp_state = IB_QPS_RTR;
	srnic_dct_reply_av(qp->sdev, pkt, &qp->av);
	timer_setup(&qp->retrans_timer, srnic_req_retrans_timer, 0);
	timer_setup(&qp->rnr_timer, srnic_req_rnr_timer, 0);
	srnic_sched_qp_init(qp);
	qp->producers[SRNIC_PRODUCER_RESP] = &srnic_resp_producer;
	if (dst_cache_init(&qp->dst_cache, GFP_ATOMIC))
		return -ENOMEM;
	qp->wqe = kzalloc(sizeof(*qp->wqe), GFP_ATOMIC);
	qp->resp.rd = kcalloc(SRNIC_DC_RD_ATOMIC, sizeof(*qp->resp.rd),
			      GFP_ATOMIC);
	if (!qp->wqe || !qp->resp.rd) {
		kfree(qp->resp.rd);
		kfree(qp->wqe);
		dst_cache_destroy(&qp->dst_cache);
		return -ENOMEM;
	}
	qp->resp.rd_count = SRNIC_DC_RD_ATOMIC;
	qp->resp.epsn = pkt->psn;
	srnic_qp_set_path(qp);
	return 0;
}

/* Free an unlinked attachment: process context (see the top). */
static void srnic_dc_att_free(struct srnic_dc_att *att)
{
	struct srnic_qp *qp = &att->qp;

	srnic_qp_error(qp);	/* flushes a receive WQE it had open */
	srnic_qp_put(qp);
	wait_for_completion(&qp->released);
	srnic_sched_qp_stop(qp);
	timer_delete_sync(&qp->retrans_timer);
	timer_delete_sync(&qp->rnr_timer);
	srnic_sched_qp_fini(qp);
	kfree(qp->resp.rd);
	kfree(qp->wqe);
	dst_cache_destroy(&qp->dst_cache);
	kfree_rcu(att, rcu);
}

static void srnic_dct_reap(struct srnic_dct *dct)
{
	struct srnic_dc_att *att, *tmp;
	LIST_HEAD(list);

	spin_lock_bh(&dct->lock);
	list_splice_init(&dct->dead, &list);
	spin_unlock_bh(&dct->lock);
	list_for_each_entry_safe(att, tmp, &list, dead) {
		list_del(&att->dead);
		srnic_dc_att_free(att);
	}
}

static void srnic_dct_reap_work(struct work_struct *work)
{
	srnic_dct_reap(container_of(work, struct srnic_dct, reap));
}

/* an attachment idle this long is freed (dc_idle_evictions; sysfs) */
static unsigned long srnic_dct_idle_jiffies(struct srnic_dct *dct)
{
	return msecs_to_jiffies(max(READ_ONCE(dct->qp->sdev->dc_idle_ms), 1U));
}

/* The idle scan: frees attachments idle for the device's dc_idle_ms. */
static void srnic_dct_idle_work(struct work_struct *work)
{
	struct srnic_dct *dct = container_of(to_delayed_work(work),
					     struct srnic_dct, idle);
	unsigned long idle = srnic_dct_idle_jiffies(dct);
	struct srnic_dc_att *att;
	struct hlist_node *tmp;
	unsigned int bkt;
	bool more;

	spin_lock_bh(&dct->lock);
	hash_for_each_safe(dct->hash, bkt, tmp, att, node) {
		if (!srnic_dc_att_quiescent(att, att->detached ? att->horizon :
					    max(idle, att->horizon)))
			continue;
		if (att->detached) {
			srnic_dct_unlink(dct, att, SRNIC_DC_CAUSE_DETACH);
			continue;
		}
		srnic_count(dct->qp->sdev, SRNIC_CNT_DC_IDLE_EVICTIONS);
		srnic_dct_unlink(dct, att, SRNIC_DC_CAUSE_IDLE);
	}
	more = dct->count && !dct->dying;
	spin_unlock_bh(&dct->lock);
	if (more)
		schedule_delayed_work(&dct->idle, idle / 2 + 1);
}

/* Room for one more attachment: 0, or -EBUSY (RNR NAK). */
static int srnic_dct_make_room(struct srnic_dct *dct)
{
	struct srnic_dc_att *victim;

	lockdep_assert_held(&dct->lock);
	if (dct->count < dct->max_attach)
		return 0;
	victim = srnic_dct_lru(dct);
	if (!victim)
		return -EBUSY;
	if (victim->detached) {
		srnic_dct_unlink(dct, victim, SRNIC_DC_CAUSE_DETACH);
		return 0;
	}
	srnic_count(dct->qp->sdev, SRNIC_CNT_DC_LRU_EVICTIONS);
	srnic_dct_unlink(dct, victim, SRNIC_DC_CAUSE_LRU);
	return 0;
}

/*
 * A new attachment for the ATTACH packet @pkt from @gid, with a reference
 * for the caller; it replaces one of an older generation. NULL with *@err:
 * -EBUSY (no room: RNR NAK), -ESTALE (an older generation than the one
 * held: dropped), -ENOMEM or -ENODEV (dropped).
 */
static struct srnic_dc_att *srnic_dct_attach(struct srnic_dct *dct,
					     struct srnic_pkt *pkt,
					     const struct in6_addr *gid,
					     int *err)
{
	u32 dci = srnic_dceth_dci(pkt->dceth), gen = srnic_dceth_gen(pkt->dceth);
	u8 horizon = srnic_dceth_flags(pkt->dceth) & SRNIC_DCETH_HORIZON;
	struct srnic_dc_att *att = NULL, *old;

	spin_lock_bh(&dct->lock);
	*err = -ENODEV;
	if (dct->dying)
		goto unlock;
	old = srnic_dct_find(dct, gid, dci);
	if (old && old->gen == gen) {
		/* a repeated ATTACH raced with the first: one attachment */
		*err = refcount_inc_not_zero(&old->qp.ref) ? 0 : -ENODEV;
		att = *err ? NULL : old;
		goto unlock;
	}
	*err = -ESTALE;
	if (old && (s32)(gen - old->gen) < 0)
		goto unlock;
	if (old)
		srnic_dct_unlink(dct, old, SRNIC_DC_CAUSE_REPLACED);
	*err = old ? 0 : srnic_dct_make_room(dct);
	if (*err)
		goto unlock;
	*err = -ENOMEM;
	att = kzalloc(sizeof(*att), GFP_ATOMIC);
	if (!att)
		goto unlock;
	att->gid = *gid;
	att->dci = dci;
	att->gen = gen;
	att->last_rx = jiffies;
	att->horizon = msecs_to_jiffies(1U << min_t(u8, horizon, 20));
	if (srnic_dc_att_init_qp(dct, att, pkt)) {
		kfree(att);
		att = NULL;
		goto unlock;
	}
	*err = 0;
	refcount_inc(&att->qp.ref);		/* the caller's */
	hash_add_rcu(dct->hash, &att->node, srnic_dct_hash(gid, dci));
	if (!dct->count++)
		schedule_delayed_work(&dct->idle,
				      srnic_dct_idle_jiffies(dct) / 2 + 1);
	srnic_count(dct->qp->sdev, SRNIC_CNT_DC_ATTACH);
	trace_srnic_dc_attach(dct->qp->sdev->ib_dev.index, dci,
			      srnic_qpn(dct->qp), gen, gid);
unlock:
	spin_unlock_bh(&dct->lock);
	return att;
}

/* The attachment of generation @gen, with a reference, or NULL. */
static struct srnic_dc_att *srnic_dct_get(struct srnic_dct *dct,
					  const struct in6_addr *gid, u32 dci,
					  u32 gen)
{
	struct srnic_dc_att *att;

	rcu_read_lock();
	att = srnic_dct_find(dct, gid, dci);
	if (att && (att->gen != gen || !refcount_inc_not_zero(&att->qp.ref)))
		att = NULL;
	rcu_read_unlock();
	return att;
}

/*
 * DETACH: everything before its PSN was executed (the initiator drained):
 * the attachment is detached, to be freed once quiescent (see the top of
 * the file). Answered with a DETACH ACK in every case.
 */
static void srnic_dct_detach(struct srnic_qp *dqp, struct srnic_pkt *pkt,
			     const struct in6_addr *gid)
{
	struct srnic_dct *dct = dqp->dct;
	struct srnic_dc_att *att;
	bool done = false;

	spin_lock_bh(&dct->lock);
	att = srnic_dct_find(dct, gid, srnic_dceth_dci(pkt->dceth));
	if (att && att->gen == srnic_dceth_gen(pkt->dceth) && !att->detached) {
		spin_lock(&att->qp.resp_lock);
		done = att->qp.resp.epsn == pkt->psn && !att->qp.resp.in_msg &&
		       !att->qp.resp.tx_busy;
		spin_unlock(&att->qp.resp_lock);
	}
	if (done) {
		srnic_count(dqp->sdev, SRNIC_CNT_DC_DETACH);
		att->detached = true;
		/* its packets' copies may come for a horizon from now */
		WRITE_ONCE(att->last_rx, jiffies);
	}
	spin_unlock_bh(&dct->lock);
	srnic_dct_reply(dqp, pkt, SRNIC_OPCODE_DC_DETACH_ACK, 0);
}

/* A request whose attachment was not found: make one, or refuse. */
static struct srnic_dc_att *srnic_dct_attach_or_nak(struct srnic_qp *dqp,
						    struct srnic_pkt *pkt,
						    const struct in6_addr *gid)
{
	struct srnic_dc_att *att;
	int err;

	if (!(srnic_dceth_flags(pkt->dceth) & SRNIC_DCETH_ATTACH)) {
		srnic_count(dqp->sdev, SRNIC_CNT_DC_NO_ATTACH_NAKS);
		srnic_dct_nak(dqp, pkt,
			      srnic_aeth_syn_nak(SRNIC_NAK_DC_NO_ATTACH));
		return NULL;
	}
	att = srnic_dct_attach(dqp->dct, pkt, gid, &err);
	if (err == -EBUSY) {
		srnic_count(dqp->sdev, SRNIC_CNT_DC_ATTACH_RNR);
		srnic_dct_nak(dqp, pkt,
			      srnic_aeth_syn_rnr(READ_ONCE(dqp->attr.min_rnr_timer)));
	}
	return att;
}

/**
 * srnic_dct_rcv() - a DC packet for a DCT
 * @dqp: the DCT (reference held by the caller)
 * @pkt: the packet, of the DC transport
 *
 * Checks the access key (a wrong one is counted, and NAKed with a remote
 * access error if the packet opens an attachment), then hands the request
 * to its attachment: its notification point (a CE mark sends the DCI a
 * CNP) and its responder.
 */
void srnic_dct_rcv(struct srnic_qp *dqp, struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	enum ib_qp_state state = srnic_qp_state(dqp);
	struct srnic_dc_att *att;
	struct in6_addr gid, dst;
	u8 tclass;

	if (!(info->flags & SRNIC_OPF_REQ)) {
		srnic_count(dqp->sdev, SRNIC_CNT_DC_NOT_DC_QP_DROPS);
		return;
	}
	if (state != IB_QPS_RTR && state != IB_QPS_RTS) {
		srnic_count(dqp->sdev, SRNIC_CNT_RX_NO_QP);
		return;
	}
	if (srnic_dceth_key(pkt->dceth) != dqp->dct->key) {
		srnic_count(dqp->sdev, SRNIC_CNT_DC_KEY_VIOLATIONS);
		if (srnic_dceth_flags(pkt->dceth) & SRNIC_DCETH_ATTACH)
			srnic_dct_nak(dqp, pkt,
				      srnic_aeth_syn_nak(SRNIC_NAK_REM_ACCESS_ERR));
		return;
	}
	srnic_dct_pkt_addr(pkt->skb, &gid, &dst, &tclass);
	if (pkt->opcode == SRNIC_OPCODE_DC_DETACH) {
		srnic_dct_detach(dqp, pkt, &gid);
		return;
	}
	att = srnic_dct_get(dqp->dct, &gid, srnic_dceth_dci(pkt->dceth),
			    srnic_dceth_gen(pkt->dceth));
	if (!att)
		att = srnic_dct_attach_or_nak(dqp, pkt, &gid);
	if (!att)
		return;
	WRITE_ONCE(att->last_rx, jiffies);
	srnic_cnp_np_rcv(&att->qp, pkt);	/* DCQCN: CE mark -> CNP */
	srnic_resp_rcv(&att->qp, pkt);
	srnic_qp_put(&att->qp);
}

/**
 * srnic_dct_create() - a QP becomes a DCT
 * @qp: the QP, not yet published
 * @key: its access key
 *
 * Return: 0 or -ENOMEM.
 */
int srnic_dct_create(struct srnic_qp *qp, u64 key)
{
	struct srnic_dct *dct = kzalloc(sizeof(*dct), GFP_KERNEL);

	if (!dct)
		return -ENOMEM;
	dct->qp = qp;
	dct->key = key;
	dct->max_attach = clamp_t(u32, READ_ONCE(qp->sdev->dc_max_attach), 1,
				  SRNIC_MAX_QP);
	spin_lock_init(&dct->lock);
	hash_init(dct->hash);
	INIT_LIST_HEAD(&dct->dead);
	INIT_WORK(&dct->reap, srnic_dct_reap_work);
	INIT_DELAYED_WORK(&dct->idle, srnic_dct_idle_work);
	qp->dct = dct;
	qp->dc = SRNIC_DC_DCT;
	return 0;
}

/**
 * srnic_dct_destroy() - free a DCT's attachments and its table
 * @qp: the DCT, unreachable by packets (its last reference dropped)
 */
void srnic_dct_destroy(struct srnic_qp *qp)
{
	struct srnic_dct *dct = qp->dct;
	struct srnic_dc_att *att;
	struct hlist_node *tmp;
	unsigned int bkt;

	if (!dct)
		return;
	spin_lock_bh(&dct->lock);
	dct->dying = true;
	spin_unlock_bh(&dct->lock);
	cancel_delayed_work_sync(&dct->idle);
	spin_lock_bh(&dct->lock);
	hash_for_each_safe(dct->hash, bkt, tmp, att, node)
		srnic_dct_unlink(dct, att, SRNIC_DC_CAUSE_DESTROY);
	spin_unlock_bh(&dct->lock);
	cancel_work_sync(&dct->reap);
	srnic_dct_reap(dct);
	qp->dct = NULL;
	kfree(dct);
}

/* Attachments in use (restrack); racy by nature. */
u32 srnic_dct_attachments(struct srnic_qp *qp)
{
	return qp->dct ? READ_ONCE(qp->dct->count) : 0;
}
