// SPDX-License-Identifier: GPL-2.0
/*
 * srnic address handles: the RoCEv2 path (addresses, traffic class, hop
 * limit, flow label) of UD sends, and of RC/UC QPs through modify_qp.
 *
 * rdma-core's rxe provider gets an AH number back from create_ah and writes
 * it into each UD send WQE (wr.ud.ah_num); the kernel resolves it here,
 * checking that the AH belongs to the QP's PD.
 */
#include <linux/xarray.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_addr.h>

#include "srnic.h"

/*
 * The netdev of @sgid_attr, in srnic_av.ifindex: a path's packets are
 * routed by it in the namespace of the device's netdev (srnic_xmit.c).
 * srnic refuses the GIDs of netdevs in other namespaces (srnic_add_gid());
 * one that moved there since is refused here too (-EOPNOTSUPP), rather than
 * routed by an ifindex that means another netdev here, or none.
 */
static int srnic_av_ifindex(struct srnic_av *av,
			    const struct ib_gid_attr *sgid_attr)
{
	struct net_device *ndev;
	int err = 0;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);
	if (IS_ERR(ndev))
		err = -EINVAL;
	else if (!srnic_port_netns_ok(to_srnic_dev(sgid_attr->device), ndev))
		err = -EOPNOTSUPP;
	else
		av->ifindex = ndev->ifindex;
	rcu_read_unlock();
	return err;
}

/**
 * srnic_av_from_attr() - resolve an ah_attr into an srnic path
 * @av: filled in
 * @attr: the attributes; must carry a GRH with a RoCEv2 source GID
 *
 * Return: 0, -EINVAL when the attributes cannot describe a RoCEv2 path, or
 * -EOPNOTSUPP when the source GID's netdev is in another namespace.
 */
int srnic_av_from_attr(struct srnic_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	union {
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} sa;
	int err;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	err = srnic_av_ifindex(av, sgid_attr);
	if (err)
		return err;

	if (ipv6_addr_v4mapped((struct in6_addr *)grh->dgid.raw) !=
	    ipv6_addr_v4mapped((struct in6_addr *)sgid_attr->gid.raw))
		return -EINVAL;	/* one end IPv4, the other IPv6 */

	rdma_gid2ip((struct sockaddr *)&sa, &sgid_attr->gid);
	if (sa.in.sin_family == AF_INET) {
		av->family = AF_INET;
		ipv6_addr_set_v4mapped(sa.in.sin_addr.s_addr, &av->saddr);
	} else {
		av->family = AF_INET6;
		av->saddr = sa.in6.sin6_addr;
	}
	memcpy(&av->daddr, grh->dgid.raw, sizeof(av->daddr));
	av->tclass = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->flow_label = grh->flow_label & 0xfffff;
	return 0;
}

/*
 * The AH table's lock is taken with interrupts saved: kernel consumers
 * create and destroy AHs in any context, interrupts off included (ib_cm's
 * cm_alloc_msg() holds a spin_lock_irqsave() lock around rdma_create_ah()),
 * where a BH lock's unlock would enable softirqs (lockdep: KUnit
 * srnic_dp_ah_irqs_off).
 */
static int srnic_ah_insert(struct srnic_dev *sdev, struct srnic_ah *ah)
{
	unsigned long flags;
	u32 num;
	int err;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&sdev->ah_xa, &num, ah,
				XA_LIMIT(1, SRNIC_MAX_AH), &sdev->ah_next,
				GFP_ATOMIC);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	ah->ah_num = num;
	return 0;
}

static void srnic_ah_remove(struct srnic_dev *sdev, struct srnic_ah *ah)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	__xa_erase(&sdev->ah_xa, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
}

static int srnic_create_ah(struct ib_ah *ibah,
			   struct rdma_ah_init_attr *init_attr,
			   struct ib_udata *udata)
{
	struct srnic_dev *sdev = to_srnic_dev(ibah->device);
	struct srnic_ah *ah = to_srnic_ah(ibah);
	struct rxe_create_ah_resp resp = {};
	int err;

	err = srnic_av_from_attr(&ah->av, init_attr->ah_attr);
	if (err)
		return err;
	err = srnic_ah_insert(sdev, ah);
	if (err)
		return err;

	if (udata && udata->outlen >= sizeof(resp)) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			srnic_ah_remove(sdev, ah);
			return err;
		}
	}
	return 0;
}

static int srnic_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	/* ib_core keeps the creation attributes; nothing to add. */
	return 0;
}

static int srnic_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct srnic_dev *sdev = to_srnic_dev(ibah->device);
	struct srnic_ah *ah = to_srnic_ah(ibah);

	srnic_ah_remove(sdev, ah);
	/*
	 * srnic_ah_lookup_av() copies the AV under RCU; let it finish before
	 * ib_core frees the AH. Only user AHs are looked up by number, and
	 * user AHs are always destroyed from sleepable context.
	 */
	if (flags & RDMA_DESTROY_AH_SLEEPABLE)
		synchronize_rcu();
	return 0;
}

/**
 * srnic_ah_lookup_av() - copy the path of a user AH named in a UD WQE
 * @sdev: the device
 * @pd: the QP's PD; the AH must belong to it
 * @ah_num: the number create_ah returned
 * @av: filled in
 *
 * Return: 0, or -EINVAL for an unknown AH or one of another PD.
 */
int srnic_ah_lookup_av(struct srnic_dev *sdev, struct ib_pd *pd, u32 ah_num,
		       struct srnic_av *av)
{
	struct srnic_ah *ah;
	int err = -EINVAL;

	rcu_read_lock();
	ah = xa_load(&sdev->ah_xa, ah_num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		err = 0;
	}
	rcu_read_unlock();
	return err;
}

const struct ib_device_ops srnic_ah_ops = {
	.create_ah = srnic_create_ah,
	.create_user_ah = srnic_create_ah,
	.destroy_ah = srnic_destroy_ah,
	.query_ah = srnic_query_ah,

	INIT_RDMA_OBJ_SIZE(ib_ah, srnic_ah, ibah),
};
