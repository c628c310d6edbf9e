// SPDX-License-Identifier: GPL-2.0
/*
 * srnic multicast: UD QPs attached to multicast groups (IBA 10.5, RoCEv2
 * Annex A17.4.5), the attach_mcast/detach_mcast verbs and the fan-out of
 * received multicast packets.
 *
 * A group is named by its MGID. On RoCEv2 the MGID is an IP multicast
 * address: an IPv4 group ::ffff:224.0.0.0/100 (IPv4-mapped, the form
 * rdma_cm uses) or an IPv6 group ff00::/8. A UD send to a group needs
 * nothing special on transmit: the AH's destination GID is the group's IP
 * address, the IP stack routes it as multicast and maps it to the Ethernet
 * multicast MAC, and the application sets DestQP 0xFFFFFF.
 *
 * To receive, the host must be a member of the IP group on the netdev the
 * packets arrive on, or the IP layer drops them before they reach srnic's
 * UDP socket (which, like every socket, accepts any group the host is a
 * member of). The first QP attached to a group joins it (ip_mc_inc_group()
 * / ipv6_dev_mc_inc(), which also programs the netdev's MAC filter) on the
 * bound netdev and on the netdevs stacked on it whose packets are the
 * device's: its VLANs, and the bond it is a slave of and that bond's VLANs
 * (ib_core lists their addresses among the device's GIDs, so a group may
 * be reached through one); the last one to leave drops those memberships.
 * Memberships are counted by the IP stack, so rdma_cm's own join of the
 * same group (cma_igmp_send()) and ours coexist.
 *
 * Receive: a packet to DestQP 0xFFFFFF and a multicast IP destination goes
 * to every QP attached to the group, each checking its Q_Key and consuming
 * one of its own receive WQEs (srnic_resp_rcv()); a QP without a WQE or in
 * the wrong state drops its copy without affecting the others. The skb is
 * shared read-only by all of them and never linearized.
 *
 * Lifetimes and locking
 * ---------------------
 * The table (struct srnic_mcast in srnic.h) is changed under its mutex and
 * read by the receive path under RCU. A group (struct srnic_mcg) holds one
 * reference per attached QP (struct srnic_mca); the detach that drops the
 * last one leaves the IP group, unhashes the group and frees it after an RCU
 * grace period. An attachment is freed after a grace period too; the QP it
 * names stays valid for readers because destroy_qp detaches the QP, then
 * waits for a grace period if it was ever attached (@mcast_used, set here;
 * srnic_qp.c), and readers take a QP reference with refcount_inc_not_zero()
 * as lookups by QPN do.
 */
#include <linux/if_vlan.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jhash.h>
#include <linux/kref.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>

#include "srnic.h"

/**
 * struct srnic_mcg - a multicast group of a device
 * @node: in sdev->mcast.hash
 * @mgid: the group's GID: an IPv4-mapped or IPv6 multicast address
 * @ref: one reference per attached QP
 * @qps: struct srnic_mca of the attached QPs; changed under the table's
 *	mutex, walked under RCU by the receive path
 * @nqps: entries of @qps; under the table's mutex
 * @uppers: ifindexes of the netdevs stacked above the device's own (its
 *	VLANs, its bond, the bond's VLANs) that joined the IP group with it
 *	(@nuppers of them); set at creation and as such netdevs come and go
 *	(srnic_mcg_sync_uppers()), left at release; under the table's mutex
 *	and RTNL
 * @nuppers: entries of @uppers
 * @sdev: the device
 * @rcu: frees the group after a grace period
 */
struct srnic_mcg {
	struct hlist_node	node;
	union ib_gid		mgid;
	struct kref		ref;
	struct list_head	qps;
	u32			nqps;
	int			uppers[SRNIC_MCG_MAX_UPPERS];
	unsigned int		nuppers;
	struct srnic_dev	*sdev;
	struct rcu_head		rcu;
};

/**
 * struct srnic_mca - one QP attached to one group
 * @node: in mcg->qps
 * @qp: the QP (not counted: see the file comment)
 * @count: successful attach calls not yet undone by a detach; under the
 *	table's mutex. ib_core counts each one in the QP's usecnt (a QP is
 *	destroyed only at 0) and uverbs keeps one entry per (MGID, MLID):
 *	every attach that succeeded must have a detach that succeeds.
 * @rcu: frees the attachment after a grace period
 */
struct srnic_mca {
	struct list_head	node;
	struct srnic_qp		*qp;
	unsigned int		count;
	struct rcu_head		rcu;
};

static u32 srnic_mcg_hash(const union ib_gid *mgid)
{
	return jhash(mgid->raw, sizeof(mgid->raw), 0);
}

/* Under the table's mutex or RCU. */
static struct srnic_mcg *srnic_mcg_find(struct srnic_dev *sdev,
					const union ib_gid *mgid)
{
	struct srnic_mcg *mcg;

	hash_for_each_possible_rcu(sdev->mcast.hash, mcg, node,
				   srnic_mcg_hash(mgid),
				   lockdep_is_held(&sdev->mcast.mutex)) {
		if (!memcmp(mcg->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return mcg;
	}
	return NULL;
}

static struct srnic_mca *srnic_mca_find(struct srnic_mcg *mcg,
					struct srnic_qp *qp)
{
	struct srnic_mca *mca;

	lockdep_assert_held(&mcg->sdev->mcast.mutex);
	list_for_each_entry(mca, &mcg->qps, node) {
		if (mca->qp == qp)
			return mca;
	}
	return NULL;
}

/*
 * Join (@join) or leave the IP multicast group of @mgid on @ndev; both
 * families change group lists under RTNL. Leaving a group the netdev no
 * longer has (its IP state was torn down with it) is harmless.
 */
static int srnic_mcg_ndev_member(struct net_device *ndev,
				 const union ib_gid *mgid, bool join)
{
	const struct in6_addr *addr = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;

	ASSERT_RTNL();
	if (ipv6_addr_v4mapped(addr)) {
		in_dev = __in_dev_get_rtnl(ndev);
		if (!in_dev)
			return -ENODEV;
		if (join)
			ip_mc_inc_group(in_dev, addr->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, addr->s6_addr32[3]);
		return 0;
	}
	return join ? ipv6_dev_mc_inc(ndev, addr) : ipv6_dev_mc_dec(ndev, addr);
}

/*
 * Whether the device's multicast packets may arrive on @upper, a netdev
 * stacked above its own (srnic_recv_dev()): a VLAN of its netdev, the bond
 * or bridge its netdev is a port of, or a VLAN of that. Only such netdevs in
 * the netdev's netns count: leaving looks them up by index there. Whether
 * @upper is above the netdev at all is the caller's to know (the upper
 * walk) or to ask (srnic_mcg_still_upper()).
 */
static bool srnic_mcg_upper_ok(struct srnic_dev *sdev,
			       struct net_device *upper)
{
	struct net_device *real = upper;

	ASSERT_RTNL();
	if (!net_eq(dev_net(upper), dev_net(sdev->ndev)))
		return false;
	if (is_vlan_dev(upper))
		real = vlan_dev_real_dev(upper);
	return real == sdev->ndev || netif_is_bond_master(real) ||
	       netif_is_bridge_master(real);
}

/* Whether @upper, joined before, is still one to be joined on. */
static bool srnic_mcg_still_upper(struct srnic_dev *sdev,
				  struct net_device *upper)
{
	return upper && netdev_has_upper_dev(sdev->ndev, upper) &&
	       srnic_mcg_upper_ok(sdev, upper);
}

static bool srnic_mcg_has_upper(const struct srnic_mcg *mcg, int ifindex)
{
	unsigned int i;

	for (i = 0; i < mcg->nuppers; i++)
		if (mcg->uppers[i] == ifindex)
			return true;
	return false;
}

/* netdev_walk_all_upper_dev_rcu() callback: join on @upper if it is one. */
static int srnic_mcg_join_upper(struct net_device *upper,
				struct netdev_nested_priv *priv)
{
	struct srnic_mcg *mcg = priv->data;

	if (mcg->nuppers == SRNIC_MCG_MAX_UPPERS)
		return 1;	/* full: stop the walk */
	if (!srnic_mcg_upper_ok(mcg->sdev, upper) ||
	    srnic_mcg_has_upper(mcg, upper->ifindex))
		return 0;
	if (!srnic_mcg_ndev_member(upper, &mcg->mgid, true))
		mcg->uppers[mcg->nuppers++] = upper->ifindex;
	return 0;
}

/*
 * Bring @mcg's memberships above the netdev up to date. A netdev that is
 * gone took its IP state with it: forgotten. One that is no longer above
 * the netdev (a bond the netdev left) is left, then forgotten. Then every
 * such netdev that has not joined yet joins, while there is room
 * (SRNIC_MCG_MAX_UPPERS).
 */
static void srnic_mcg_sync_uppers(struct srnic_dev *sdev,
				  struct srnic_mcg *mcg)
{
	struct netdev_nested_priv priv = { .data = mcg };
	struct net_device *upper;
	unsigned int i = 0;

	lockdep_assert_held(&sdev->mcast.mutex);
	ASSERT_RTNL();
	while (i < mcg->nuppers) {
		upper = __dev_get_by_index(dev_net(sdev->ndev), mcg->uppers[i]);
		if (srnic_mcg_still_upper(sdev, upper)) {
			i++;
			continue;
		}
		if (upper)
			srnic_mcg_ndev_member(upper, &mcg->mgid, false);
		mcg->uppers[i] = mcg->uppers[--mcg->nuppers];
	}
	/* under RTNL, which keeps the upper lists as they are */
	netdev_walk_all_upper_dev_rcu(sdev->ndev, srnic_mcg_join_upper, &priv);
}

/*
 * Make the host a member of @mcg's IP group where the device's multicast
 * packets may arrive: on its netdev and on the netdevs stacked above it
 * that hand packets up as the device's (srnic_mcg_upper_ok(); ib_core
 * lists their addresses among the device's GIDs, and the IP stack drops a
 * group's packets on a netdev that has not joined it). The ones joined
 * are kept, and only they are left, so that another member of the group
 * there (rdma_cm's join) keeps its membership. One stacked later joins the
 * groups from srnic_mcast_upper_work().
 */
static int srnic_mcg_join(struct srnic_dev *sdev, struct srnic_mcg *mcg)
{
	const struct in6_addr *addr = (const struct in6_addr *)mcg->mgid.raw;
	int err;

	lockdep_assert_held(&sdev->mcast.mutex);
	if (!ipv6_addr_v4mapped(addr) && !IS_ENABLED(CONFIG_IPV6))
		return -EAFNOSUPPORT;
	rtnl_lock();
	err = srnic_mcg_ndev_member(sdev->ndev, &mcg->mgid, true);
	if (!err)
		srnic_mcg_sync_uppers(sdev, mcg);
	rtnl_unlock();
	return err;
}

/* Leave what srnic_mcg_join() joined; a netdev gone since is skipped. */
static void srnic_mcg_leave(struct srnic_dev *sdev, struct srnic_mcg *mcg)
{
	struct net_device *upper;
	unsigned int i;

	lockdep_assert_held(&sdev->mcast.mutex);
	rtnl_lock();
	srnic_mcg_ndev_member(sdev->ndev, &mcg->mgid, false);
	for (i = 0; i < mcg->nuppers; i++) {
		upper = __dev_get_by_index(dev_net(sdev->ndev), mcg->uppers[i]);
		if (upper)
			srnic_mcg_ndev_member(upper, &mcg->mgid, false);
	}
	rtnl_unlock();
}

static struct srnic_mcg *srnic_mcg_create(struct srnic_dev *sdev,
					  const union ib_gid *mgid)
{
	struct srnic_mcg *mcg;
	int err;

	lockdep_assert_held(&sdev->mcast.mutex);
	if (sdev->mcast.ngroups >= SRNIC_MAX_MCAST_GRP)
		return ERR_PTR(-ENOMEM);
	mcg = kzalloc(sizeof(*mcg), GFP_KERNEL);
	if (!mcg)
		return ERR_PTR(-ENOMEM);
	mcg->mgid = *mgid;
	kref_init(&mcg->ref);
	INIT_LIST_HEAD(&mcg->qps);
	mcg->sdev = sdev;

	err = srnic_mcg_join(sdev, mcg);
	if (err) {
		ibdev_dbg(&sdev->ib_dev, "joining IP group %pI6 failed: %d\n",
			  mgid->raw, err);
		kfree(mcg);
		return ERR_PTR(err);
	}
	hash_add_rcu(sdev->mcast.hash, &mcg->node, srnic_mcg_hash(mgid));
	sdev->mcast.ngroups++;
	return mcg;
}

/* kref release: the last attached QP has left. */
static void srnic_mcg_release(struct kref *ref)
{
	struct srnic_mcg *mcg = container_of(ref, struct srnic_mcg, ref);
	struct srnic_dev *sdev = mcg->sdev;

	lockdep_assert_held(&sdev->mcast.mutex);
	hash_del_rcu(&mcg->node);
	sdev->mcast.ngroups--;
	srnic_mcg_leave(sdev, mcg);
	kfree_rcu(mcg, rcu);
}

static void srnic_mca_remove(struct srnic_mcg *mcg, struct srnic_mca *mca)
{
	struct srnic_dev *sdev = mcg->sdev;

	lockdep_assert_held(&sdev->mcast.mutex);
	list_del_rcu(&mca->node);
	kfree_rcu(mca, rcu);
	mcg->nqps--;
	sdev->mcast.nattached--;
	kref_put(&mcg->ref, srnic_mcg_release);
}

static int srnic_mcast_check(struct ib_qp *ibqp, const union ib_gid *mgid)
{
	if (ibqp->qp_type != IB_QPT_UD)
		return -EINVAL;
	if (!rdma_is_multicast_addr((struct in6_addr *)mgid->raw))
		return -EINVAL;
	return 0;
}

/*
 * ib_device_ops.attach_mcast. Attaching a QP to a group it is already
 * attached to succeeds and only counts the call: uverbs filters repeats of
 * the same (MGID, MLID), not the same MGID with another MLID (ignored on
 * RoCE), and each such call needs its own detach.
 */
static int srnic_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid,
			      u16 mlid)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	struct srnic_dev *sdev = qp->sdev;
	struct srnic_mcg *mcg;
	struct srnic_mca *mca;
	int err;

	err = srnic_mcast_check(ibqp, mgid);
	if (err)
		return err;
	mca = kzalloc(sizeof(*mca), GFP_KERNEL);
	if (!mca)
		return -ENOMEM;
	mca->qp = qp;
	mca->count = 1;

	mutex_lock(&sdev->mcast.mutex);
	mcg = srnic_mcg_find(sdev, mgid);
	if (mcg) {
		struct srnic_mca *old = srnic_mca_find(mcg, qp);

		if (old) {
			old->count++;
			err = 0;
			goto err_free_mca;
		}
	}
	if (sdev->mcast.nattached >= SRNIC_MAX_TOT_MCAST_QP_ATTACH ||
	    (mcg && mcg->nqps >= SRNIC_MAX_MCAST_QP_ATTACH)) {
		err = -ENOMEM;
		goto err_free_mca;
	}
	if (mcg) {
		kref_get(&mcg->ref);
	} else {
		mcg = srnic_mcg_create(sdev, mgid);
		if (IS_ERR(mcg)) {
			err = PTR_ERR(mcg);
			goto err_free_mca;
		}
	}
	/* destroy_qp then waits for the fan-out's RCU readers. */
	WRITE_ONCE(qp->mcast_used, true);
	list_add_tail_rcu(&mca->node, &mcg->qps);
	mcg->nqps++;
	sdev->mcast.nattached++;
	mutex_unlock(&sdev->mcast.mutex);
	return 0;

err_free_mca:
	mutex_unlock(&sdev->mcast.mutex);
	kfree(mca);
	return err;
}

/* ib_device_ops.detach_mcast: -EINVAL if @ibqp is not attached to @mgid. */
static int srnic_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid,
			      u16 mlid)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	struct srnic_dev *sdev = qp->sdev;
	struct srnic_mcg *mcg;
	struct srnic_mca *mca = NULL;
	int err;

	err = srnic_mcast_check(ibqp, mgid);
	if (err)
		return err;
	mutex_lock(&sdev->mcast.mutex);
	mcg = srnic_mcg_find(sdev, mgid);
	if (mcg)
		mca = srnic_mca_find(mcg, qp);
	if (!mca)
		err = -EINVAL;
	else if (!--mca->count)
		srnic_mca_remove(mcg, mca);
	mutex_unlock(&sdev->mcast.mutex);
	return err;
}

/**
 * srnic_mcast_qp_detach_all() - detach a QP that is being destroyed
 * @qp: the QP
 *
 * Called by destroy_qp before its RCU grace period: once that has passed,
 * no receive-path reader can still see @qp through a group.
 */
void srnic_mcast_qp_detach_all(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = qp->sdev;
	struct srnic_mcg *mcg;
	struct hlist_node *tmp;
	struct srnic_mca *mca;
	int bkt;

	if (qp->ibqp.qp_type != IB_QPT_UD || !READ_ONCE(sdev->mcast.nattached))
		return;
	mutex_lock(&sdev->mcast.mutex);
	/* _safe: the last detach from a group unhashes it. */
	hash_for_each_safe(sdev->mcast.hash, bkt, tmp, mcg, node) {
		mca = srnic_mca_find(mcg, qp);
		if (mca)
			srnic_mca_remove(mcg, mca);
	}
	mutex_unlock(&sdev->mcast.mutex);
}

/* The MGID a received packet is addressed to, or false if not multicast. */
static bool srnic_mcast_pkt_mgid(const struct sk_buff *skb, union ib_gid *mgid)
{
	if (ip_hdr(skb)->version == 4) {
		__be32 daddr = ip_hdr(skb)->daddr;

		if (!ipv4_is_multicast(daddr))
			return false;
		ipv6_addr_set_v4mapped(daddr, (struct in6_addr *)mgid->raw);
		return true;
	}
	memcpy(mgid->raw, &ipv6_hdr(skb)->daddr, sizeof(mgid->raw));
	return ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
}

/**
 * srnic_mcast_rcv() - deliver a packet sent to DestQP 0xFFFFFF
 * @sdev: the receiving device
 * @pkt: the parsed packet (its skb is only read)
 *
 * Every QP attached to the group gets the packet, as if it had been sent to
 * it alone. Softirq context.
 */
void srnic_mcast_rcv(struct srnic_dev *sdev, struct srnic_pkt *pkt)
{
	const struct srnic_opcode_info *info = srnic_opcode_info(pkt->opcode);
	struct srnic_mcg *mcg;
	struct srnic_mca *mca;
	union ib_gid mgid;
	bool delivered = false;

	/* Only UD SENDs can be multicast (IBA 10.5). */
	if (info->transport != SRNIC_TRANSPORT_UD ||
	    !(info->flags & SRNIC_OPF_REQ) ||
	    !srnic_mcast_pkt_mgid(pkt->skb, &mgid)) {
		srnic_count(sdev, SRNIC_CNT_RX_BAD_HDR);
		return;
	}

	rcu_read_lock();
	mcg = srnic_mcg_find(sdev, &mgid);
	if (mcg) {
		list_for_each_entry_rcu(mca, &mcg->qps, node) {
			struct srnic_qp *qp = mca->qp;

			if (!refcount_inc_not_zero(&qp->ref))
				continue;	/* being destroyed */
			srnic_resp_rcv(qp, pkt);
			srnic_qp_put(qp);
			delivered = true;
		}
	}
	rcu_read_unlock();
	if (!delivered)
		srnic_count(sdev, SRNIC_CNT_RX_NO_QP);
}

static void srnic_mcast_upper_work(struct work_struct *work)
{
	struct srnic_dev *sdev = container_of(work, struct srnic_dev,
					      mcast.upper_work);
	struct srnic_mcg *mcg;
	int bkt;

	mutex_lock(&sdev->mcast.mutex);
	rtnl_lock();
	hash_for_each(sdev->mcast.hash, bkt, mcg, node)
		srnic_mcg_sync_uppers(sdev, mcg);
	rtnl_unlock();
	mutex_unlock(&sdev->mcast.mutex);
}

/**
 * srnic_mcast_uppers_changed() - a netdev was stacked on the device's own
 * @sdev: the device
 * @upper: the netdev linked or unlinked (NETDEV_CHANGEUPPER), on the
 *	device's netdev or on a bond or bridge above it
 *
 * A VLAN made, or a bond or bridge joined, after a group was joined joins
 * it too; a VLAN deleted is forgotten, which frees its place, and a bond
 * or bridge left is left. Under RTNL: the work does it.
 */
void srnic_mcast_uppers_changed(struct srnic_dev *sdev,
				const struct net_device *upper)
{
	/*
	 * Not only when there are groups: an attach that walked the uppers
	 * before this one was linked may not have counted its group yet.
	 */
	if (is_vlan_dev(upper) || netif_is_bond_master(upper) ||
	    netif_is_bridge_master(upper))
		schedule_work(&sdev->mcast.upper_work);
}

void srnic_mcast_dev_init(struct srnic_dev *sdev)
{
	mutex_init(&sdev->mcast.mutex);
	hash_init(sdev->mcast.hash);
	INIT_WORK(&sdev->mcast.upper_work, srnic_mcast_upper_work);
}

/* Every QP is gone by now, and with them every group. */
void srnic_mcast_dev_fini(struct srnic_dev *sdev)
{
	cancel_work_sync(&sdev->mcast.upper_work);
	WARN_ON(sdev->mcast.ngroups || sdev->mcast.nattached);
	mutex_destroy(&sdev->mcast.mutex);
}

const struct ib_device_ops srnic_mcast_ops = {
	.attach_mcast = srnic_attach_mcast,
	.detach_mcast = srnic_detach_mcast,
};
