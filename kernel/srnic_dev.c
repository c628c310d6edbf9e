// SPDX-License-Identifier: GPL-2.0
/*
 * srnic device: creation, registration with ib_core, device attributes,
 * user contexts and the verbs ops table.
 *
 * User space: stock rdma-core drives srnic through its rxe provider, which
 * matches on driver_id RDMA_DRIVER_RXE and user verbs ABI version 2. That is
 * why srnic and rdma_rxe must never be loaded together (srnic_main.c).
 *
 * A device made in native mode (link type "srnic_native") is the same device
 * published differently, so that only srnic's own provider matches it
 * (docs/native-provider.md): ib_uverbs reports no driver id for it and its
 * uverbs ABI version is outside the rxe provider's range. Inside the kernel
 * it keeps driver id RDMA_DRIVER_RXE, like every srnic device: the unload
 * path, the netdev lookups and the rdma_rxe guard treat both modes alike.
 */
#include <linux/dma-mapping.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_verbs.h>

#include "srnic.h"

/*
 * ib_core zeroes ibdev->attrs and fills them through this op when the device
 * registers; uverbs calls it again for every query.
 */
static int srnic_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *a,
			      struct ib_udata *uhw)
{
	/* NULL when ib_core queries for itself (7.x; older kernels: empty) */
	if (uhw && (uhw->inlen || uhw->outlen))
		return -EINVAL;

	memset(a, 0, sizeof(*a));
	a->fw_ver = SRNIC_FW_VER;
	a->sys_image_guid = ibdev->node_guid;
	a->max_mr_size = SRNIC_MR_MAX_SIZE;
	a->page_size_cap = SRNIC_PAGE_SIZE_CAP;
	a->vendor_id = SRNIC_VENDOR_ID;
	a->vendor_part_id = SRNIC_VENDOR_PART_ID;
	a->hw_ver = SRNIC_HW_VER;
	a->max_qp = SRNIC_MAX_QP;
	a->max_qp_wr = SRNIC_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_BAD_PKEY_CNTR |
			      IB_DEVICE_BAD_QKEY_CNTR |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_MEM_MGT_EXTENSIONS;
	/* XRC: native mode only (srnic_xrcd.c) */
	if (to_srnic_dev(ibdev)->mode == SRNIC_MODE_NATIVE)
		a->device_cap_flags |= IB_DEVICE_XRC;
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_ON_DEMAND_PAGING;
	/*
	 * Explicit ODP MRs (srnic_odp.h): RC sends, receives, WRITEs, READs
	 * and atomics, UD sends. Not implicit ODP.
	 */
	a->odp_caps.general_caps = IB_ODP_SUPPORT;
	a->odp_caps.per_transport_caps.rc_odp_caps = IB_ODP_SUPPORT_SEND |
						      IB_ODP_SUPPORT_RECV |
						      IB_ODP_SUPPORT_WRITE |
						      IB_ODP_SUPPORT_READ |
						      IB_ODP_SUPPORT_ATOMIC;
	a->odp_caps.per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
	a->max_send_sge = SRNIC_MAX_SGE;
	a->max_recv_sge = SRNIC_MAX_SGE;
	a->max_sge_rd = SRNIC_MAX_SGE_RD;
	a->max_cq = SRNIC_MAX_CQ;
	a->max_cqe = SRNIC_MAX_CQE - 1;
	a->max_mr = SRNIC_MAX_MR;
	a->max_mw = SRNIC_MAX_MW;
	a->max_pd = SRNIC_MAX_PD;
	a->max_qp_rd_atom = SRNIC_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = SRNIC_MAX_QP_RD_ATOM;
	a->max_res_rd_atom = SRNIC_MAX_QP_RD_ATOM * SRNIC_MAX_QP;
	a->atomic_cap = IB_ATOMIC_HCA;
	a->max_ah = SRNIC_MAX_AH;
	a->max_srq = SRNIC_MAX_SRQ;
	a->max_srq_wr = SRNIC_MAX_SRQ_WR;
	a->max_srq_sge = SRNIC_MAX_SGE;
	a->max_fast_reg_page_list_len = SRNIC_MAX_FAST_REG_PAGES;
	a->max_pkeys = SRNIC_PKEY_TBL_LEN;
	a->local_ca_ack_delay = SRNIC_LOCAL_CA_ACK_DELAY;
	a->max_mcast_grp = SRNIC_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = SRNIC_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = SRNIC_MAX_TOT_MCAST_QP_ATTACH;
	if (to_srnic_dev(ibdev)->mode == SRNIC_MODE_NATIVE) {
		/* completion timestamps: srnic_native_cqe */
		a->timestamp_mask = U64_MAX;
		a->hca_core_clock = SRNIC_NATIVE_CLOCK_KHZ;
	}
	return 0;
}

static void srnic_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.%d.%d", SRNIC_VERSION_MAJOR,
		 SRNIC_VERSION_MINOR, SRNIC_VERSION_PATCH);
}

static int srnic_alloc_ucontext(struct ib_ucontext *ibuc,
				struct ib_udata *udata)
{
	struct srnic_ucontext *uc = container_of(ibuc, struct srnic_ucontext,
						 ibuc);

	mutex_init(&uc->mm_lock);
	INIT_LIST_HEAD(&uc->mms);
	return 0;
}

static void srnic_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct srnic_ucontext *uc = container_of(ibuc, struct srnic_ucontext,
						 ibuc);

	srnic_ucontext_zap(uc);
	mutex_destroy(&uc->mm_lock);
}

/*
 * The device is going (netdev deleted, rdma link delete, netns exit, rmmod)
 * while a process still has it open. Having this op makes ib_core revoke
 * the process's context at once - destroy its objects through our verbs,
 * tell it IB_EVENT_DEVICE_FATAL, fail its later verbs with EIO - instead of
 * waiting for it to close the device, which held the netdev (and "ip link
 * del") for as long as the process ran. The objects are gone when this
 * runs; what is left is the process's mappings of their rings: unmapped
 * here, as ib_core does for the mappings it tracks (a later access faults:
 * SIGBUS), so that the pages are freed now and nothing of the device stays
 * reachable.
 */
static void srnic_disassociate_ucontext(struct ib_ucontext *ibuc)
{
	srnic_ucontext_zap(container_of(ibuc, struct srnic_ucontext, ibuc));
}

/* Object number spaces (QPs and AHs by number) and object counts. */
static void srnic_dev_init_tables(struct srnic_dev *sdev)
{
	atomic_set(&sdev->qp_count, 0);
	atomic_set(&sdev->cq_count, 0);
	atomic_set(&sdev->pd_count, 0);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	/*
	 * From a random start, so that QP numbers are not the same on every
	 * host (a peer forging packets must learn them; srnic authenticates
	 * nothing else, see README "Robustness").
	 */
	sdev->qp_next = SRNIC_QPN_MIN + (get_random_u32() & 0xffff);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
}

static void srnic_dev_fini_tables(struct srnic_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->qp_xa));
	xa_destroy(&sdev->qp_xa);
	WARN_ON(!xa_empty(&sdev->ah_xa));
	xa_destroy(&sdev->ah_xa);
}

static void srnic_dealloc_driver(struct ib_device *ibdev)
{
	struct srnic_dev *sdev = to_srnic_dev(ibdev);

	/* Already done if the netdev went away first; harmless twice. */
	srnic_net_put(sdev);
	srnic_dev_fini_tables(sdev);
	srnic_srq_dev_fini(sdev);
	srnic_mem_dev_fini(sdev);
	srnic_mcast_dev_fini(sdev);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
	ibdev_dbg(ibdev, "deallocated\n");
}

/*
 * sysfs: /sys/class/infiniband/<dev>/srnic/{version,netdev,repath_timeouts,
 * rx_steer,rx_spread,tx_batch,provider,dc_max_attach,dc_idle_ms}
 */
static ssize_t version_show(struct device *device,
			    struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", SRNIC_VERSION);
}
static DEVICE_ATTR_RO(version);

static ssize_t provider_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));

	return sysfs_emit(buf, "%s\n", sdev->mode == SRNIC_MODE_NATIVE ?
			  SRNIC_PROVIDER_NATIVE : SRNIC_PROVIDER_RXE);
}
static DEVICE_ATTR_RO(provider);

static ssize_t netdev_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(netdev);

/*
 * The inode number of the bound netdev's network namespace, as stat() of
 * /proc/PID/ns/net gives it: a device is seen from every namespace (ib_core's
 * shared mode), and a tool there tells by this that its netdev lives in
 * another one rather than being gone, or being a same-named one of its own.
 */
static ssize_t netns_show(struct device *device,
			  struct device_attribute *attr, char *buf)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));

	return sysfs_emit(buf, "%u\n", dev_net(sdev->ndev)->ns.inum);
}
static DEVICE_ATTR_RO(netns);

/* A number knob from @min to @max, read without a lock. */
static ssize_t srnic_dev_u32_show(u32 *knob, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(*knob));
}

static ssize_t srnic_dev_u32_store(u32 *knob, u32 min, u32 max,
				   const char *buf, size_t count)
{
	u32 v;
	int err;

	err = kstrtou32(buf, 0, &v);
	if (err)
		return err;
	if (v < min || v > max)
		return -ERANGE;
	WRITE_ONCE(*knob, v);
	return count;
}

/*
 * Re-pathing (srnic_req_repath()): after this many retransmit timeouts in a
 * row without progress an RC QP takes a new UDP source port; 0 (default):
 * never. Read without a lock by the data path.
 */
static ssize_t repath_timeouts_show(struct device *device,
				    struct device_attribute *attr, char *buf)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));

	return srnic_dev_u32_show(&sdev->repath_timeouts, buf);
}

static ssize_t repath_timeouts_store(struct device *device,
				     struct device_attribute *attr,
				     const char *buf, size_t count)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));

	return srnic_dev_u32_store(&sdev->repath_timeouts, 0,
				   SRNIC_REPATH_TIMEOUTS_MAX, buf, count);
}
static DEVICE_ATTR_RW(repath_timeouts);

/*
 * A yes/no knob: a bool of struct srnic_dev, read without a lock by the
 * data path; 0 or 1 (kstrtobool() words too).
 */
struct srnic_dev_knob_attr {
	struct device_attribute	attr;
	size_t			offset;	/* of the bool in struct srnic_dev */
};

static bool *srnic_dev_knob(struct device *device,
			    struct device_attribute *attr)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));
	size_t offset = container_of(attr, struct srnic_dev_knob_attr,
				     attr)->offset;

	return (bool *)((char *)sdev + offset);
}

static ssize_t srnic_dev_knob_show(struct device *device,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(*srnic_dev_knob(device, attr)));
}

static ssize_t srnic_dev_knob_store(struct device *device,
				    struct device_attribute *attr,
				    const char *buf, size_t count)
{
	bool v;
	int err;

	err = kstrtobool(buf, &v);
	if (err)
		return err;
	WRITE_ONCE(*srnic_dev_knob(device, attr), v);
	return count;
}

/*
 * Receive steering (srnic_recv.c): 1: a user QP's packets are run on the
 * CPU of the process that created it; 0 (default): on the CPU that received
 * them.
 */
static struct srnic_dev_knob_attr srnic_dev_attr_rx_steer = {
	.attr = __ATTR(rx_steer, 0644, srnic_dev_knob_show,
		       srnic_dev_knob_store),
	.offset = offsetof(struct srnic_dev, rx_steer),
};

/*
 * Spreading (srnic_recv.c): 1 (default): a user QP's packets of a message
 * of several run on another CPU than the one that received them; 0: where
 * they were received (unless steered).
 */
static struct srnic_dev_knob_attr srnic_dev_attr_rx_spread = {
	.attr = __ATTR(rx_spread, 0644, srnic_dev_knob_show,
		       srnic_dev_knob_store),
	.offset = offsetof(struct srnic_dev, rx_spread),
};

/*
 * Trains (srnic_sched.c): 1: an RC/UC QP's requests of one run leave as
 * fraglist GSO trains; 0 (default): one by one.
 */
static struct srnic_dev_knob_attr srnic_dev_attr_tx_batch = {
	.attr = __ATTR(tx_batch, 0644, srnic_dev_knob_show,
		       srnic_dev_knob_store),
	.offset = offsetof(struct srnic_dev, tx_batch),
};

/* DC: attachments a DCT holds at most, read when a DCT is created */
static ssize_t dc_max_attach_show(struct device *device,
				  struct device_attribute *attr, char *buf)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));

	return srnic_dev_u32_show(&sdev->dc_max_attach, buf);
}

static ssize_t dc_max_attach_store(struct device *device,
				   struct device_attribute *attr,
				   const char *buf, size_t count)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));

	return srnic_dev_u32_store(&sdev->dc_max_attach, 1, SRNIC_MAX_QP,
				   buf, count);
}
static DEVICE_ATTR_RW(dc_max_attach);

/* DC: a DCT frees an attachment idle this long (ms) */
static ssize_t dc_idle_ms_show(struct device *device,
			       struct device_attribute *attr, char *buf)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));

	return srnic_dev_u32_show(&sdev->dc_idle_ms, buf);
}

static ssize_t dc_idle_ms_store(struct device *device,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));

	return srnic_dev_u32_store(&sdev->dc_idle_ms, 1,
				   SRNIC_DC_IDLE_MS_MAX, buf, count);
}
static DEVICE_ATTR_RW(dc_idle_ms);

static struct attribute *srnic_dev_attrs[] = {
	&dev_attr_version.attr,
	&dev_attr_netdev.attr,
	&dev_attr_netns.attr,
	&dev_attr_repath_timeouts.attr,
	&srnic_dev_attr_rx_steer.attr.attr,
	&srnic_dev_attr_rx_spread.attr.attr,
	&srnic_dev_attr_tx_batch.attr.attr,
	&dev_attr_provider.attr,
	&dev_attr_dc_max_attach.attr,
	&dev_attr_dc_idle_ms.attr,
	NULL,
};

static const struct attribute_group srnic_dev_attr_group = {
	.name = SRNIC_SYSFS_GROUP,
	.attrs = srnic_dev_attrs,
};

static const struct ib_device_ops srnic_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = SRNIC_UVERBS_ABI_VERSION,

	.alloc_pd = srnic_alloc_pd,
	.alloc_ucontext = srnic_alloc_ucontext,
	.dealloc_driver = srnic_dealloc_driver,
	.dealloc_pd = srnic_dealloc_pd,
	.dealloc_ucontext = srnic_dealloc_ucontext,
	.disassociate_ucontext = srnic_disassociate_ucontext,
	.device_group = &srnic_dev_attr_group,
	.get_dev_fw_str = srnic_get_dev_fw_str,
	.query_device = srnic_query_device,

	INIT_RDMA_OBJ_SIZE(ib_pd, srnic_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, srnic_ucontext, ibuc),
};

/*
 * Each verbs-object file owns the ops of its object (and its
 * INIT_RDMA_OBJ_SIZE); ib_set_device_ops() merges them.
 */
static const struct ib_device_ops *const srnic_ops_tables[] = {
	&srnic_dev_ops,
	&srnic_port_ops,
	&srnic_queue_ops,
	&srnic_cq_ops,
	&srnic_srq_ops,
	&srnic_mr_ops,
	&srnic_mw_ops,
	&srnic_counters_ops,
	&srnic_ah_ops,
	&srnic_qp_ops,
	&srnic_mcast_ops,
	&srnic_compat_ops,
};

/*
 * What native mode changes, merged over the tables above: ib_set_device_ops()
 * takes the last ABI version given and ORs the binding flag in.
 */
static const struct ib_device_ops srnic_native_ops = {
	.uverbs_abi_ver = SRNIC_NATIVE_ABI_VERSION,
	.uverbs_no_driver_id_binding = 1,
};

static void srnic_dev_set_ops(struct ib_device *ibdev, enum srnic_mode mode)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(srnic_ops_tables); i++)
		ib_set_device_ops(ibdev, srnic_ops_tables[i]);
	if (mode == SRNIC_MODE_NATIVE) {
		ib_set_device_ops(ibdev, &srnic_native_ops);
		/* XRC: the rxe provider could not open a domain anyway */
		ib_set_device_ops(ibdev, &srnic_xrcd_ops);
	}
}

static int srnic_dev_name_taken(const char *name)
{
	pr_err("an RDMA device named %s already exists\n", name);
	return -EEXIST;
}

static int srnic_dev_check_name(const char *name)
{
	return srnic_ib_name_taken(name) ? srnic_dev_name_taken(name) : 0;
}

/* A netdev below a bond or bridge: does it have a device of its own? */
static int srnic_dev_lower_has_dev(struct net_device *lower,
				   struct netdev_nested_priv *priv)
{
	struct srnic_dev *sdev = srnic_dev_get_by_netdev(lower);

	if (!sdev)
		return 0;
	priv->data = sdev;
	return 1;
}

/*
 * A device on a bond or bridge takes all that arrives there (srnic_recv.c):
 * one on a port below it gets none of it, whichever was made first.
 */
static void srnic_dev_note_shadowing(struct net_device *ndev,
				     struct net_device *master)
{
	struct netdev_nested_priv priv = {};
	struct srnic_dev *other;

	other = master ? srnic_dev_get_by_netdev(master) : NULL;
	if (other) {
		pr_warn("%s has srnic device %s of its own, which takes what arrives on %s: a device on %s gets none of it\n",
			netdev_name(master), dev_name(&other->ib_dev.dev),
			netdev_name(master), netdev_name(ndev));
		ib_device_put(&other->ib_dev);
		return;
	}
	if (!netif_is_bond_master(ndev) && !netif_is_bridge_master(ndev))
		return;
	netdev_walk_all_lower_dev_rcu(ndev, srnic_dev_lower_has_dev, &priv);
	other = priv.data;
	if (other) {
		pr_warn("srnic device %s is below %s: a device on %s takes what arrives there, and %s gets none of it\n",
			dev_name(&other->ib_dev.dev), netdev_name(ndev),
			netdev_name(ndev), dev_name(&other->ib_dev.dev));
		ib_device_put(&other->ib_dev);
	}
}

/*
 * Say what a device bound to a netdev stacked on another, or under one,
 * will get: ib_core gives the IP addresses of a VLAN to the RDMA device of
 * its real netdev (roce_gid_mgmt.c), never to one bound to the VLAN;
 * those of a bond to the device of its active slave, or to every slave's
 * device in the modes without one; those of a bridge to every port's
 * device (srnic_recv.c: what arrives on a bond is the active slave's
 * device's, or else that of the one device below the bond or bridge).
 */
static void srnic_dev_note_stacking(struct net_device *ndev)
{
	struct net_device *master;

	if (is_vlan_dev(ndev))
		pr_notice("%s is a VLAN of %s: a device bound to it has only its link-local GID; bind to %s to use the VLAN's addresses (RDMA-CM)\n",
			  netdev_name(ndev),
			  netdev_name(vlan_dev_real_dev(ndev)),
			  netdev_name(vlan_dev_real_dev(ndev)));
	rcu_read_lock();
	master = srnic_port_master(ndev);
	if (master && netif_is_bond_master(master))
		pr_notice("%s is a slave of bond %s: the bond's addresses are this device's GIDs while %s is the active slave (bond modes active-backup, tlb, alb); in the other modes bind to %s\n",
			  netdev_name(ndev), netdev_name(master),
			  netdev_name(ndev), netdev_name(master));
	else if (master)
		pr_notice("%s is a port of bridge %s: the bridge's addresses are this device's GIDs; what arrives on %s is this device's while it is the only srnic device on the bridge's ports\n",
			  netdev_name(ndev), netdev_name(master),
			  netdev_name(master));
	srnic_dev_note_shadowing(ndev, master);
	rcu_read_unlock();
}

static int srnic_dev_check_netdev(struct net_device *ndev)
{
	struct ib_device *hw;
	struct srnic_dev *other;

	if (ndev->type != ARPHRD_ETHER) {
		pr_err("%s is not an Ethernet device (type %u); RoCEv2 needs Ethernet\n",
		       netdev_name(ndev), ndev->type);
		return -EINVAL;
	}
	other = srnic_dev_get_by_netdev(ndev);
	if (other) {
		pr_err("%s already has RDMA device %s; one srnic device per netdev\n",
		       netdev_name(ndev), dev_name(&other->ib_dev.dev));
		ib_device_put(&other->ib_dev);
		return -EBUSY;
	}
	hw = srnic_other_dev_get_by_netdev(ndev);
	if (hw) {
		pr_err("%s already has RDMA device %s (driver %s); srnic does not share a netdev with another RDMA device: use another netdev or remove %s\n",
		       netdev_name(ndev), dev_name(&hw->dev),
		       module_name(hw->ops.owner),
		       dev_name(&hw->dev));
		ib_device_put(hw);
		return -EBUSY;
	}
	srnic_dev_note_stacking(ndev);
	return 0;
}

/* The attributes and verbs of a new device bound to @ndev. */
static void srnic_dev_init_ibdev(struct srnic_dev *sdev,
				 struct net_device *ndev, enum srnic_mode mode)
{
	struct ib_device *ibdev = &sdev->ib_dev;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = SRNIC_PORT_NUM;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	ibdev->node_guid = srnic_port_guid_from_mac(ndev->dev_addr);
	strscpy(ibdev->node_desc, SRNIC_DRV_NAME, sizeof(ibdev->node_desc));
	/*
	 * Data moves with the CPU (ib_core's virtual DMA: no DMA device). The
	 * one DMA mapping srnic makes is of a dma-buf it imports
	 * (srnic_reg_user_mr_dmabuf()), through the ib_device's own device;
	 * the exporter maps for it, srnic then reads the pages.
	 */
	sdev->dma_mask = DMA_BIT_MASK(64);
	ibdev->dev.dma_mask = &sdev->dma_mask;
	ibdev->dev.coherent_dma_mask = DMA_BIT_MASK(64);
	srnic_dev_set_ops(ibdev, mode);
	/* rdma-core's rxe provider rings the SQ doorbell with POST_SEND. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
	/* Off by default in ib_core; rdma-core's rxe provider arms CQs with it. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	/*
	 * srnic's provider (native mode) rings it, empty, after posting
	 * receives to a QP in the error state, so that they complete flushed
	 * (IBA 10.8.3.2); srnic_post_recv() takes no WRs from user space.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
}

/*
 * The last steps of srnic_dev_add(), after ib_register_device(). On error
 * the device is unregistered, which frees it (srnic_dealloc_driver()).
 */
static int srnic_dev_go_live(struct srnic_dev *sdev, const char *name)
{
	struct net_device *ndev = sdev->ndev;
	struct ib_device *ibdev = &sdev->ib_dev;
	bool gone;
	int err;

	/*
	 * From here the netdev notifier finds the device by its netdev. If
	 * the netdev was unregistered while we registered, the notifier could
	 * not see us: undo here. After this check it will.
	 */
	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED;
	if (!gone)
		sdev->port_state = srnic_port_state(ndev);
	rtnl_unlock();
	if (gone) {
		/* Frees sdev through srnic_dealloc_driver(). */
		ib_unregister_device(ibdev);
		return -ENODEV;
	}
	err = srnic_cnp_sysfs_add(sdev);
	if (err) {
		pr_err("%s: cannot create the DCQCN sysfs files: %d\n", name, err);
		ib_unregister_device(ibdev);
		return err;
	}
	return 0;
}

/**
 * srnic_dev_add() - create and register an srnic device on a netdev
 * @name: the ib_device name asked for with "rdma link add"
 * @ndev: the Ethernet netdev to bind (reference held by the caller)
 * @mode: the user-space provider the device is made for
 *
 * The caller serialises calls (srnic_link_mutex) so that the name and netdev
 * checks cannot race with another creation.
 *
 * Return: 0 or a negative errno; on error nothing is left behind.
 */
int srnic_dev_add(const char *name, struct net_device *ndev,
		  enum srnic_mode mode)
{
	struct srnic_dev *sdev;
	struct ib_device *ibdev;
	int err;

	err = srnic_dev_check_name(name);
	if (err)
		return err;
	err = srnic_dev_check_netdev(ndev);
	if (err)
		return err;

	sdev = ib_alloc_device(srnic_dev, ib_dev);
	if (!sdev)
		return -ENOMEM;
	srnic_mem_dev_init(sdev);
	ibdev = &sdev->ib_dev;
	srnic_dev_init_tables(sdev);
	sdev->ndev = ndev;
	sdev->mode = mode;
	sdev->rx_spread = true;	/* sysfs srnic/rx_spread */
	sdev->dc_max_attach = SRNIC_DC_MAX_ATTACH_DEFAULT;
	sdev->dc_idle_ms = SRNIC_DC_IDLE_MS_DEFAULT;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	/* allocates nothing: no undo on the error paths below */
	srnic_srq_dev_init(sdev);
	srnic_mcast_dev_init(sdev);
	srnic_cnp_dev_init(sdev);

	err = srnic_net_get(sdev, dev_net(ndev));
	if (err)
		goto err_dealloc;

	/*
	 * Sets the ops: from here ib_dealloc_device() calls
	 * srnic_dealloc_driver(), which undoes all of the above.
	 */
	srnic_dev_init_ibdev(sdev, ndev, mode);

	err = ib_device_set_netdev(ibdev, ndev, SRNIC_PORT_NUM);
	if (err)
		goto err_dealloc_driver;

	/* NULL dma_device: ib_core's virtual DMA (addresses are kernel VAs). */
	err = ib_register_device(ibdev, name, NULL);
	/* a taken name, where srnic_ib_name_taken() cannot tell beforehand */
	if (err == -ENFILE)
		err = srnic_dev_name_taken(name);
	if (err)
		goto err_dealloc_driver;

	err = srnic_dev_go_live(sdev, name);
	if (err)
		return err;

	ibdev_info(ibdev, "created on %s (port %s, active MTU %d, provider %s)\n",
		   netdev_name(ndev),
		   sdev->port_state == IB_PORT_ACTIVE ? "ACTIVE" : "DOWN",
		   ib_mtu_enum_to_int(srnic_port_active_mtu(ndev->mtu)),
		   mode == SRNIC_MODE_NATIVE ? SRNIC_PROVIDER_NATIVE :
		   SRNIC_PROVIDER_RXE);
	return 0;

err_dealloc_driver:
	/* srnic_dealloc_driver(): the namespace, tables and netdev reference */
	ib_dealloc_device(ibdev);
	return err;
err_dealloc:
	netdev_put(ndev, &sdev->ndev_tracker);
	srnic_dev_fini_tables(sdev);
	srnic_mem_dev_fini(sdev);
	ib_dealloc_device(ibdev);
	return err;
}
