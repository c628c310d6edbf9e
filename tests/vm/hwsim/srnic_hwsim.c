// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_hwsim: a test-only stand-in for a hardware RoCE NIC's RDMA device
 * (mlx5_ib on a ConnectX, say), for tests/vm/test_hwnic.sh. Debian's kernels
 * build neither siw nor, without the hardware, mlx5_ib; this module registers
 * an ib_device with one RoCEv2 port bound to a netdev and does nothing else
 * (no verbs: it moves no data).
 *
 *   rdma link add hw0 type hwsim netdev vethA
 *	binds the port with ib_device_set_netdev(), as siw and (from Linux
 *	6.13) mlx5_ib do: ib_device_get_by_netdev() finds it
 *   rdma link add hw0 type hwsim_legacy netdev vethA
 *	reports the netdev through the get_netdev op only, as mlx4_ib,
 *	bnxt_re and mlx5_ib before 6.13 do
 *   rdma link delete hw0
 *
 * Delete its devices before their netdev: it does not follow netdev events.
 * Built in the guest by the test against the running kernel.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

struct srnic_hwsim_dev {
	struct ib_device ib_dev;
	/* the netdev of a hwsim_legacy device (reference held), else NULL */
	struct net_device *legacy_ndev;
};

static struct srnic_hwsim_dev *to_hwsim(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srnic_hwsim_dev, ib_dev);
}

static int srnic_hwsim_query_device(struct ib_device *ibdev,
				    struct ib_device_attr *attr,
				    struct ib_udata *udata)
{
	/* ib_core zeroed *attr; "rdma link delete" needs this flag */
	attr->kernel_cap_flags |= IBK_ALLOW_USER_UNREG;
	return 0;
}

static int srnic_hwsim_query_port(struct ib_device *ibdev, u32 port,
				  struct ib_port_attr *attr)
{
	attr->state = IB_PORT_DOWN;
	attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = IB_MTU_1024;
	attr->gid_tbl_len = 16;
	attr->pkey_tbl_len = 1;
	return 0;
}

static int srnic_hwsim_get_port_immutable(struct ib_device *ibdev, u32 port,
					  struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = 16;
	immutable->pkey_tbl_len = 1;
	return 0;
}

static int srnic_hwsim_query_pkey(struct ib_device *ibdev, u32 port,
				  u16 index, u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

static enum rdma_link_layer srnic_hwsim_link_layer(struct ib_device *ibdev,
						   u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static struct net_device *srnic_hwsim_get_netdev(struct ib_device *ibdev,
						 u32 port)
{
	struct net_device *ndev = to_hwsim(ibdev)->legacy_ndev;

	dev_hold(ndev);
	return ndev;
}

static void srnic_hwsim_dealloc(struct ib_device *ibdev)
{
	dev_put(to_hwsim(ibdev)->legacy_ndev);
}

static const struct ib_device_ops srnic_hwsim_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.dealloc_driver = srnic_hwsim_dealloc,
	.get_link_layer = srnic_hwsim_link_layer,
	.get_port_immutable = srnic_hwsim_get_port_immutable,
	.query_device = srnic_hwsim_query_device,
	.query_pkey = srnic_hwsim_query_pkey,
	.query_port = srnic_hwsim_query_port,
};

static const struct ib_device_ops srnic_hwsim_legacy_ops = {
	.get_netdev = srnic_hwsim_get_netdev,
};

static int srnic_hwsim_add(const char *name, struct net_device *ndev,
			   bool legacy)
{
	struct srnic_hwsim_dev *hdev;
	struct ib_device *ibdev;
	int err;

	hdev = ib_alloc_device(srnic_hwsim_dev, ib_dev);
	if (!hdev)
		return -ENOMEM;
	ibdev = &hdev->ib_dev;
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ib_set_device_ops(ibdev, &srnic_hwsim_ops);
	if (legacy) {
		ib_set_device_ops(ibdev, &srnic_hwsim_legacy_ops);
		dev_hold(ndev);
		hdev->legacy_ndev = ndev;
	} else {
		err = ib_device_set_netdev(ibdev, ndev, 1);
		if (err)
			goto err_dealloc;
	}
	err = ib_register_device(ibdev, name, NULL);
	if (err)
		goto err_dealloc;
	return 0;

err_dealloc:
	/* ib_dealloc_device() calls dealloc_driver: it drops legacy_ndev */
	ib_dealloc_device(ibdev);
	return err;
}

static int srnic_hwsim_newlink(const char *name, struct net_device *ndev)
{
	return srnic_hwsim_add(name, ndev, false);
}

static int srnic_hwsim_newlink_legacy(const char *name,
				      struct net_device *ndev)
{
	return srnic_hwsim_add(name, ndev, true);
}

static struct rdma_link_ops srnic_hwsim_link_ops = {
	.type = "hwsim",
	.newlink = srnic_hwsim_newlink,
};

static struct rdma_link_ops srnic_hwsim_legacy_link_ops = {
	.type = "hwsim_legacy",
	.newlink = srnic_hwsim_newlink_legacy,
};

static int __init srnic_hwsim_init(void)
{
	rdma_link_register(&srnic_hwsim_link_ops);
	rdma_link_register(&srnic_hwsim_legacy_link_ops);
	return 0;
}

static void __exit srnic_hwsim_exit(void)
{
	rdma_link_unregister(&srnic_hwsim_legacy_link_ops);
	rdma_link_unregister(&srnic_hwsim_link_ops);
	ib_unregister_driver(RDMA_DRIVER_UNKNOWN);
}

module_init(srnic_hwsim_init);
module_exit(srnic_hwsim_exit);

MODULE_DESCRIPTION("srnic test stand-in for a hardware RoCE RDMA device");
MODULE_LICENSE("GPL");
