// SPDX-License-Identifier: GPL-2.0
/*
 * srnic port: the single RoCEv2 port of a device and how its attributes
 * follow the netdev (carrier -> port state, netdev MTU -> active MTU,
 * MAC -> GUID). GIDs are not kept here: ib_core's roce_gid_mgmt fills the
 * GID table from the netdev's addresses because the port advertises
 * RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "srnic.h"

/*
 * Bytes a RoCEv2 packet carries besides its payload, at worst: IPv6 header,
 * UDP header, BTH, the largest extension headers that go with a payload
 * (RETH + ImmDt, RDMA WRITE Only with Immediate) and the ICRC.
 * IBA Annex A17.4: the path MTU counts the IBA payload only.
 */
#define SRNIC_BTH_BYTES		12
#define SRNIC_RETH_BYTES	16
#define SRNIC_IMMDT_BYTES	4
#define SRNIC_ICRC_BYTES	4
#define SRNIC_MAX_HDR_OVERHEAD	(sizeof(struct ipv6hdr) + sizeof(struct udphdr) + \
				 SRNIC_BTH_BYTES + SRNIC_RETH_BYTES + \
				 SRNIC_IMMDT_BYTES + SRNIC_ICRC_BYTES)

/**
 * srnic_port_active_mtu() - the largest IB MTU that fits a netdev MTU
 * @netdev_mtu: the netdev's MTU (L3 bytes)
 *
 * Return: IB_MTU_256..IB_MTU_4096; IB_MTU_256 also when even that does not
 * fit (such a netdev cannot carry RoCEv2 without fragmentation, and IB has no
 * smaller MTU to offer).
 */
enum ib_mtu srnic_port_active_mtu(unsigned int netdev_mtu)
{
	unsigned int room;

	if (netdev_mtu <= SRNIC_MAX_HDR_OVERHEAD)
		return IB_MTU_256;
	room = netdev_mtu - SRNIC_MAX_HDR_OVERHEAD;
	if (room >= 4096)
		return IB_MTU_4096;
	if (room >= 2048)
		return IB_MTU_2048;
	if (room >= 1024)
		return IB_MTU_1024;
	if (room >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

/**
 * srnic_port_guid_from_mac() - EUI-64 GUID derived from a 48-bit MAC
 * @mac: the netdev's MAC address (6 bytes)
 *
 * Inserts ff:fe in the middle and flips the universal/local bit, as for IPv6
 * interface identifiers (RFC 4291 appendix A) and the RoCE default GID.
 *
 * Return: the GUID in network byte order.
 */
__be64 srnic_port_guid_from_mac(const u8 *mac)
{
	__be64 guid;

	addrconf_addr_eui48((u8 *)&guid, mac);
	return guid;
}

/**
 * srnic_port_state() - port state implied by a netdev's state
 * @ndev: the netdev
 *
 * Return: IB_PORT_ACTIVE when the netdev is up with carrier, else
 * IB_PORT_DOWN.
 */
enum ib_port_state srnic_port_state(const struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
}

int srnic_query_port(struct ib_device *ibdev, u32 port_num,
		     struct ib_port_attr *attr)
{
	struct net_device *ndev = to_srnic_dev(ibdev)->ndev;
	int err;

	/* ib_core zeroed *attr and checked port_num. */
	attr->state = srnic_port_state(ndev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
		IB_PORT_PHYS_STATE_LINK_UP : IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = srnic_port_active_mtu(READ_ONCE(ndev->mtu));

	attr->gid_tbl_len = SRNIC_GID_TBL_LEN;
	attr->pkey_tbl_len = SRNIC_PKEY_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SRNIC_MAX_MSG_SZ;
	attr->max_vl_num = 1;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;

	/*
	 * Width and speed from the netdev's ethtool link speed; while the
	 * netdev is going away ib_core can no longer tell, so report the
	 * slowest link rather than fail the query.
	 */
	err = ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			       &attr->active_width);
	if (err) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

int srnic_get_port_immutable(struct ib_device *ibdev, u32 port_num,
			     struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = SRNIC_PKEY_TBL_LEN;
	immutable->gid_tbl_len = SRNIC_GID_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

int srnic_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
		     u16 *pkey)
{
	if (index >= SRNIC_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = SRNIC_DEFAULT_PKEY;
	return 0;
}

enum rdma_link_layer srnic_get_link_layer(struct ib_device *ibdev,
					  u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

/**
 * srnic_port_netns_ok() - may a GID on @ndev be @sdev's?
 * @sdev: the device
 * @ndev: the GID's netdev: the device's own, or an upper of it
 *
 * ib_core lists the addresses of every upper of the device's netdev among
 * its GIDs (roce_gid_mgmt.c), also of one moved into another network
 * namespace (a container's macvlan or VLAN). srnic carries RoCE only in
 * the namespace of its netdev, where its sockets are (srnic_net.c) and
 * where its packets are routed (srnic_xmit.c); a device bound to @ndev in
 * its own namespace carries the rest. Says so in the kernel log when not.
 *
 * Context: any; RCU read side when @ndev is not held otherwise.
 * Return: true if @ndev is in the namespace of @sdev's netdev.
 */
bool srnic_port_netns_ok(struct srnic_dev *sdev, const struct net_device *ndev)
{
	if (likely(net_eq(dev_net(ndev), dev_net(sdev->ndev))))
		return true;
	ibdev_warn_ratelimited(&sdev->ib_dev,
			       "%s is in another network namespace than %s: srnic carries RoCE only in its netdev's namespace, and its addresses are no GIDs of this device; a device bound to %s in its namespace carries them\n",
			       netdev_name(ndev), netdev_name(sdev->ndev),
			       netdev_name(ndev));
	return false;
}

/*
 * ib_core's GID table calls these for each GID it adds or deletes: a GID
 * srnic refuses (-EOPNOTSUPP) is not listed, so neither RDMA-CM nor a user
 * picks an address whose packets would be lost. Nothing to undo on delete.
 */
static int srnic_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct net_device *ndev;
	int err = 0;

	rcu_read_lock();
	ndev = rcu_dereference(attr->ndev);
	if (ndev && !srnic_port_netns_ok(to_srnic_dev(attr->device), ndev))
		err = -EOPNOTSUPP;
	rcu_read_unlock();
	return err;
}

static int srnic_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return 0;
}

const struct ib_device_ops srnic_port_ops = {
	.add_gid = srnic_add_gid,
	.del_gid = srnic_del_gid,
	.get_link_layer = srnic_get_link_layer,
	.get_port_immutable = srnic_get_port_immutable,
	.query_pkey = srnic_query_pkey,
	.query_port = srnic_query_port,
};

/**
 * srnic_port_update() - follow a netdev state change
 * @sdev: the device bound to @ndev
 * @ndev: its netdev
 *
 * Dispatches IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR when the port state
 * implied by the netdev differs from the last one dispatched.
 */
void srnic_port_update(struct srnic_dev *sdev, struct net_device *ndev)
{
	enum ib_port_state state;
	struct ib_event ev = {
		.device = &sdev->ib_dev,
		.element.port_num = SRNIC_PORT_NUM,
	};

	ASSERT_RTNL();
	state = srnic_port_state(ndev);
	if (state == sdev->port_state)
		return;
	sdev->port_state = state;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ibdev_info(&sdev->ib_dev, "port %s (netdev %s)\n",
		   state == IB_PORT_ACTIVE ? "ACTIVE" : "DOWN", ndev->name);
	ib_dispatch_event(&ev);
}
