// SPDX-License-Identifier: GPL-2.0
/*
 * srnic registry: which RDMA device a netdev has. srnic's own devices are
 * found in ib_core's netdev hash (srnic_dev_get_by_netdev(): the receive
 * path and the link code); other drivers' devices there or, for drivers
 * that report their netdev only through the get_netdev op, in the list an
 * ib_client keeps (srnic_other_dev_get_by_netdev(): srnic refuses a netdev
 * that has one, see srnic_main.c). And the bond or bridge a netdev is a
 * port of (srnic_port_master(): the device and DC code), and the one
 * device below a bond or bridge (srnic_dev_get_below(): the receive path).
 *
 * Beneath the device, link and receive code, which all ask it; it asks
 * nothing of theirs.
 */
#include <linux/module.h>
#include <linux/slab.h>

#include "srnic.h"

/**
 * srnic_dev_get_by_netdev() - the srnic device bound to a netdev
 * @ndev: the netdev
 *
 * Return: the device with a reference held (release with
 * ib_device_put(&sdev->ib_dev)), or NULL.
 */
struct srnic_dev *srnic_dev_get_by_netdev(struct net_device *ndev)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_RXE);
	if (!ibdev)
		return NULL;
	/* Never rdma_rxe's (srnic_main.c keeps it out), but be sure. */
	if (ibdev->ops.owner != THIS_MODULE) {
		ib_device_put(ibdev);
		return NULL;
	}
	return to_srnic_dev(ibdev);
}

/* Serializes changes to srnic_live_devs; readers walk it under RCU. */
static DEFINE_MUTEX(srnic_live_mutex);
/* Every srnic device between srnic_net_get() and srnic_net_put(). */
static HLIST_HEAD(srnic_live_devs);

/**
 * srnic_registry_add() - list a device whose netdev's namespace it joined
 * @sdev: the device (srnic_net_get())
 */
void srnic_registry_add(struct srnic_dev *sdev)
{
	mutex_lock(&srnic_live_mutex);
	hlist_add_head_rcu(&sdev->live_node, &srnic_live_devs);
	mutex_unlock(&srnic_live_mutex);
}

/**
 * srnic_registry_del() - unlist a device (srnic_net_put())
 * @sdev: the device; listed or not
 *
 * A reader may still see it until a grace period has passed: ib_core frees
 * the device with kfree_rcu(), and the netdev it names outlives it.
 */
void srnic_registry_del(struct srnic_dev *sdev)
{
	mutex_lock(&srnic_live_mutex);
	if (!hlist_unhashed(&sdev->live_node))
		hlist_del_init_rcu(&sdev->live_node);
	mutex_unlock(&srnic_live_mutex);
}

/**
 * srnic_dev_get_below() - the one srnic device below a bond or bridge
 * @master: the bond or bridge
 *
 * Walks srnic's devices, not @master's ports: a bridge may have hundreds of
 * ports, and this runs for each packet handed up on one that has no device
 * of its own (srnic_recv.c).
 *
 * Context: RCU read side.
 * Return: the device with a reference held, or NULL: none below @master,
 * or two or more (they share its GIDs).
 */
struct srnic_dev *srnic_dev_get_below(struct net_device *master)
{
	struct srnic_dev *sdev, *found = NULL;

	hlist_for_each_entry_rcu(sdev, &srnic_live_devs, live_node) {
		if (!net_eq(dev_net(sdev->ndev), dev_net(master)) ||
		    !netdev_has_upper_dev_all_rcu(sdev->ndev, master))
			continue;
		if (found)
			return NULL;
		found = sdev;
	}
	return found && ib_device_try_get(&found->ib_dev) ? found : NULL;
}

/**
 * srnic_port_master() - the bond or bridge a netdev is a port of
 * @ndev: the netdev
 *
 * ib_core lists the addresses of a bond or a bridge among the GIDs of the
 * RDMA devices below it (roce_gid_mgmt.c), so a device bound to a port
 * sends and receives through the master (srnic_recv.c, srnic_dct.c).
 *
 * Context: RCU read side.
 * Return: the master netdev, or NULL: @ndev is no bond slave or bridge
 * port (a team's port, a VRF's member: not handled).
 */
struct net_device *srnic_port_master(struct net_device *ndev)
{
	struct net_device *master = netdev_master_upper_dev_get_rcu(ndev);

	return master && (netif_is_bond_master(master) ||
			  netif_is_bridge_master(master)) ? master : NULL;
}

/* An RDMA device of another driver, as srnic_client sees it. */
struct srnic_other_dev {
	struct list_head list;
	struct ib_device *ibdev;
};

/* Protects srnic_other_devs. */
static DEFINE_MUTEX(srnic_other_mutex);
/* Every registered ib_device that is not srnic's (struct srnic_other_dev). */
static LIST_HEAD(srnic_other_devs);

static struct ib_client srnic_client;

static int srnic_client_add(struct ib_device *ibdev)
{
	struct srnic_other_dev *other;

	if (ibdev->ops.owner == THIS_MODULE)
		return -EOPNOTSUPP;
	other = kzalloc(sizeof(*other), GFP_KERNEL);
	if (!other)
		return -ENOMEM;
	other->ibdev = ibdev;
	mutex_lock(&srnic_other_mutex);
	list_add_tail(&other->list, &srnic_other_devs);
	mutex_unlock(&srnic_other_mutex);
	ib_set_client_data(ibdev, &srnic_client, other);
	return 0;
}

static void srnic_client_remove(struct ib_device *ibdev, void *client_data)
{
	struct srnic_other_dev *other = client_data;

	mutex_lock(&srnic_other_mutex);
	list_del(&other->list);
	mutex_unlock(&srnic_other_mutex);
	kfree(other);
}

/* Tracks other drivers' devices; no kverbs needed (siw, for one, has none). */
static struct ib_client srnic_client = {
	.name = "srnic",
	.add = srnic_client_add,
	.remove = srnic_client_remove,
	.no_kverbs_req = 1,
};

/* Does @ibdev report @ndev through the legacy get_netdev op on some port? */
static bool srnic_other_dev_uses(struct ib_device *ibdev,
				 struct net_device *ndev)
{
	struct net_device *port_ndev;
	u32 port;

	lockdep_assert_held(&srnic_other_mutex);
	if (!ibdev->ops.get_netdev)
		return false;
	rdma_for_each_port(ibdev, port) {
		port_ndev = ibdev->ops.get_netdev(ibdev, port);
		if (!port_ndev)
			continue;
		dev_put(port_ndev);
		if (port_ndev == ndev)
			return true;
	}
	return false;
}

/**
 * srnic_other_dev_get_by_netdev() - another driver's RDMA device on a netdev
 * @ndev: the netdev
 *
 * Drivers that bind their ports with ib_device_set_netdev() (siw, mlx5 from
 * Linux 6.13) are found in ib_core's netdev hash; older ones report the
 * netdev only through their get_netdev op (mlx4, mlx5 before 6.13, bnxt_re,
 * ...), so srnic_client's list of devices is asked too.
 *
 * Return: the device with a reference held (release with ib_device_put()),
 * or NULL.
 */
struct ib_device *srnic_other_dev_get_by_netdev(struct net_device *ndev)
{
	struct srnic_other_dev *other;
	struct ib_device *ibdev;

	/* RDMA_DRIVER_UNKNOWN matches a device of any driver. */
	ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
	if (ibdev) {
		if (ibdev->ops.owner != THIS_MODULE)
			return ibdev;
		ib_device_put(ibdev);
	}
	ibdev = NULL;
	mutex_lock(&srnic_other_mutex);
	list_for_each_entry(other, &srnic_other_devs, list) {
		if (srnic_other_dev_uses(other->ibdev, ndev) &&
		    ib_device_try_get(other->ibdev)) {
			ibdev = other->ibdev;
			break;
		}
	}
	mutex_unlock(&srnic_other_mutex);
	return ibdev;
}

int srnic_registry_init(void)
{
	return ib_register_client(&srnic_client);
}

void srnic_registry_exit(void)
{
	ib_unregister_client(&srnic_client);
	/* every device let go of its namespace at dealloc, at the latest */
	WARN_ON(!hlist_empty(&srnic_live_devs));
}
