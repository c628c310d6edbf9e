// SPDX-License-Identifier: GPL-2.0
/*
 * srnic main: module init/exit, the "srnic" rdma link type, the netdev
 * notifier, and the guard that keeps rdma_rxe out.
 *
 * srnic and rdma_rxe cannot be loaded together: both register devices with
 * driver_id RDMA_DRIVER_RXE (the id rdma-core's rxe provider matches, see
 * srnic_dev.c), rxe would take srnic's devices for its own in
 * ib_device_get_by_netdev() and tear them down in ib_unregister_driver(), and
 * both want UDP port 4791. srnic refuses to load while rdma_rxe is loaded, and
 * refuses rdma_rxe's load while srnic is.
 *
 * Nor does srnic bind a netdev that already has another driver's RDMA device
 * (a hardware RoCE NIC such as mlx5_ib, or siw): both would answer RoCEv2 on
 * the same addresses, and the hardware takes the packets first. See
 * srnic_other_dev_get_by_netdev() (srnic_registry.c).
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>

#include "srnic.h"

#define SRNIC_RXE_MODULE	"rdma_rxe"

/* Serialises srnic_newlink() so its checks and the registration are atomic. */
static DEFINE_MUTEX(srnic_link_mutex);

static int srnic_newlink_mode(const char *ibdev_name, struct net_device *ndev,
			      enum srnic_mode mode)
{
	int err;

	mutex_lock(&srnic_link_mutex);
	err = srnic_dev_add(ibdev_name, ndev, mode);
	mutex_unlock(&srnic_link_mutex);
	return err;
}

static int srnic_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return srnic_newlink_mode(ibdev_name, ndev, SRNIC_MODE_RXE);
}

static int srnic_newlink_native(const char *ibdev_name,
				struct net_device *ndev)
{
	return srnic_newlink_mode(ibdev_name, ndev, SRNIC_MODE_NATIVE);
}

/*
 * Two link types, one per provider mode: the mode must be fixed before the
 * device registers (user space matches a provider on what registration
 * publishes), and the link type is the one per-device choice "rdma link add"
 * carries (docs/native-provider.md).
 */
static struct rdma_link_ops srnic_link_ops = {
	.type = SRNIC_LINK_TYPE,
	.newlink = srnic_newlink,
};

static struct rdma_link_ops srnic_native_link_ops = {
	.type = SRNIC_LINK_TYPE_NATIVE,
	.newlink = srnic_newlink_native,
};

/* One netdev below a bond or bridge: its device, if any, hears of the upper. */
static int srnic_lower_uppers_changed(struct net_device *lower,
				      struct netdev_nested_priv *priv)
{
	struct srnic_dev *sdev = srnic_dev_get_by_netdev(lower);

	if (sdev) {
		srnic_mcast_uppers_changed(sdev, priv->data);
		ib_device_put(&sdev->ib_dev);
	}
	return 0;
}

/*
 * Tell the devices below a bond or bridge, at any depth (a bridge over a
 * bond over the device's netdev), that @upper is on it: receive and the
 * multicast upper walk look through nested masters, so this must too.
 */
static void srnic_master_uppers_changed(struct net_device *master,
					struct net_device *upper)
{
	struct netdev_nested_priv priv = { .data = upper };

	ASSERT_RTNL();
	netdev_walk_all_lower_dev(master, srnic_lower_uppers_changed, &priv);
}

static int srnic_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct netdev_notifier_changeupper_info *upper_info = ptr;
	struct srnic_dev *sdev;

	sdev = srnic_dev_get_by_netdev(ndev);
	if (!sdev) {
		/* a VLAN on a bond or bridge over srnic devices' netdevs */
		if (event == NETDEV_CHANGEUPPER &&
		    (netif_is_bond_master(ndev) || netif_is_bridge_master(ndev)))
			srnic_master_uppers_changed(ndev,
						    upper_info->upper_dev);
		return NOTIFY_DONE;
	}

	switch (event) {
	case NETDEV_UNREGISTER:
		/*
		 * The netdev is leaving (deleted, or moved to another
		 * namespace). Let go of its namespace now, while RTNL still
		 * keeps the namespace alive; the device itself goes from a
		 * work item, as ib_core cannot unregister under RTNL.
		 */
		ibdev_info(&sdev->ib_dev, "netdev %s unregistered, removing device\n",
			   netdev_name(ndev));
		srnic_net_put(sdev);
		ib_unregister_device_queued(&sdev->ib_dev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		srnic_port_update(sdev, ndev);
		break;
	case NETDEV_CHANGEUPPER:
		srnic_mcast_uppers_changed(sdev, upper_info->upper_dev);
		break;
	default:
		break;
	}

	ib_device_put(&sdev->ib_dev);
	return NOTIFY_OK;
}

static struct notifier_block srnic_netdev_nb = {
	.notifier_call = srnic_netdev_event,
};

#ifdef CONFIG_MODULES
static int srnic_module_event(struct notifier_block *nb, unsigned long event,
			      void *data)
{
	struct module *mod = data;

	if (event != MODULE_STATE_COMING || strcmp(mod->name, SRNIC_RXE_MODULE))
		return NOTIFY_DONE;
	pr_err("refusing to load %s: srnic is loaded and serves rdma-core's rxe provider; srnic and %s cannot be loaded together (rmmod srnic first)\n",
	       SRNIC_RXE_MODULE, SRNIC_RXE_MODULE);
	return notifier_from_errno(-EBUSY);
}

static struct notifier_block srnic_module_nb = {
	.notifier_call = srnic_module_event,
};

/* Is rdma_rxe loaded? Modules appear as kobjects in the "module" kset. */
static bool srnic_rxe_loaded(void)
{
#ifdef MODULE
	struct kobject *kobj;

	kobj = kset_find_obj(THIS_MODULE->mkobj.kobj.kset, SRNIC_RXE_MODULE);
	if (kobj) {
		kobject_put(kobj);
		return true;
	}
#endif
	return false;
}

static int srnic_guard_rxe(void)
{
	int err;

	/* Watch for rdma_rxe first, so that it cannot slip in after the check. */
	err = register_module_notifier(&srnic_module_nb);
	if (err)
		return err;
	if (srnic_rxe_loaded()) {
		pr_err("%s is loaded; srnic and %s cannot be loaded together (both serve rdma-core's rxe provider): rmmod %s first\n",
		       SRNIC_RXE_MODULE, SRNIC_RXE_MODULE, SRNIC_RXE_MODULE);
		unregister_module_notifier(&srnic_module_nb);
		return -EBUSY;
	}
	return 0;
}

static void srnic_unguard_rxe(void)
{
	unregister_module_notifier(&srnic_module_nb);
}
#else
/* Built in, without module support: rdma_rxe can only be built in too. */
static int srnic_guard_rxe(void)
{
	return 0;
}

static void srnic_unguard_rxe(void)
{
}
#endif

static int __init srnic_init(void)
{
	int err;

	err = srnic_guard_rxe();
	if (err)
		return err;

	err = srnic_sched_init();
	if (err)
		goto err_unguard;

	srnic_recv_init();
	err = srnic_net_init();
	if (err)
		goto err_wq;

	err = srnic_registry_init();
	if (err)
		goto err_net;

	err = register_netdevice_notifier(&srnic_netdev_nb);
	if (err)
		goto err_client;

	rdma_link_register(&srnic_link_ops);
	rdma_link_register(&srnic_native_link_ops);
	pr_info("loaded (version %s)\n", SRNIC_VERSION);
	return 0;

err_client:
	srnic_registry_exit();
err_net:
	srnic_net_exit();
err_wq:
	srnic_sched_exit();
err_unguard:
	srnic_unguard_rxe();
	return err;
}

static void __exit srnic_exit(void)
{
	rdma_link_unregister(&srnic_native_link_ops);
	rdma_link_unregister(&srnic_link_ops);
	unregister_netdevice_notifier(&srnic_netdev_nb);
	/* All RDMA_DRIVER_RXE devices are srnic's: rdma_rxe is kept out. */
	ib_unregister_driver(RDMA_DRIVER_RXE);
	srnic_registry_exit();
	srnic_net_exit();
	srnic_recv_exit();
	srnic_sched_exit();
	srnic_unguard_rxe();
	pr_info("unloaded\n");
}

module_init(srnic_init);
module_exit(srnic_exit);

MODULE_AUTHOR("srnic developers");
MODULE_DESCRIPTION("srnic: software RoCEv2 RDMA NIC");
MODULE_LICENSE("GPL");
MODULE_VERSION(SRNIC_VERSION);
MODULE_ALIAS_RDMA_LINK(SRNIC_LINK_TYPE);
MODULE_ALIAS_RDMA_LINK(SRNIC_LINK_TYPE_NATIVE);
