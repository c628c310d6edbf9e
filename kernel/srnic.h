/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic: a software RoCEv2 RDMA NIC.
 *
 * Private umbrella header: device structures, limits and the prototypes of
 * the device-level files, grouped by file; it includes the headers of the
 * objects and of the transport (srnic_qp.h and what it includes).
 *
 * Layers (imports go downward only; tools/imports.sh checks it on the
 * objects, run by tests/tier_style.sh)
 * ------
 *   link and device    srnic_main.c > srnic_dev.c > srnic_net.c (the UDP
 *                      sockets, whose encap hook is srnic_recv.c)
 *   verbs on top       srnic_qp.c (QP verbs), srnic_ah.c, srnic_cq.c, ...
 *   receive            srnic_recv.c: parse, dispatch to the roles below
 *   IBA roles          srnic_mcast.c > srnic_resp.c; srnic_req.c <->
 *                      srnic_comp.c; srnic_cnp.c
 *   TX scheduler       srnic_sched.c: runs the requester and responder as
 *                      producers registered per QP, paces, backpressure
 *   wire and QP core   srnic_xmit.c; srnic_qp_core.c (lookup, error state)
 *   memory             srnic_mr.c, srnic_mw.c (verbs) > srnic_sge.c (the
 *                      one SGE walk) > srnic_mem.c (keys, lookup by kind,
 *                      references, MW bindings), srnic_mtt.c (translation)
 *   beneath all        srnic_registry.c (devices by netdev), rings,
 *                      opcode/ICRC/DCQCN logic, counters
 * The one cycle is requester <-> completer, as IBA couples them (9.7): the
 * completer retires and fails the requester's WQEs and re-arms its timer,
 * the requester retires what completes without an ACK (UC, UD, local
 * operations) and fails the oldest WQE on retry exhaustion. Anything may
 * ask the scheduler for a run (srnic_sched_kick()) without an upward import.
 *
 * Object lifetimes
 * ----------------
 * An srnic device is an ib_device allocated by ib_alloc_device() and owned by
 * ib_core's refcount. It is created by "rdma link add" (srnic_newlink()) and
 * destroyed through ib_core's unregistration, which calls
 * srnic_dealloc_driver() exactly once, from one of:
 *   - "rdma link delete" (IBK_ALLOW_USER_UNREG),
 *   - NETDEV_UNREGISTER of its netdev (queued, srnic_netdev_event()),
 *   - module unload (ib_unregister_driver()).
 */
#ifndef SRNIC_H
#define SRNIC_H

#include <linux/hashtable.h>
#include <linux/netdevice.h>
#include <linux/mutex.h>
#include <linux/stringify.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "srnic_compat.h"
#include "srnic_counters.h"
#include "srnic_dcqcn.h"

#include <uapi/rdma/srnic.h>

#define SRNIC_DRV_NAME		"srnic"

#define SRNIC_VERSION_MAJOR	0
#define SRNIC_VERSION_MINOR	1
#define SRNIC_VERSION_PATCH	0
#define SRNIC_VERSION		__stringify(SRNIC_VERSION_MAJOR) "." \
				__stringify(SRNIC_VERSION_MINOR) "." \
				__stringify(SRNIC_VERSION_PATCH)
/* ib_device_attr.fw_ver: 16 bits each, as rdma-core prints it (x.y.z). */
#define SRNIC_FW_VER		((u64)SRNIC_VERSION_MAJOR << 32 | \
				 SRNIC_VERSION_MINOR << 16 | SRNIC_VERSION_PATCH)

/* The rdma-core provider that drives us is rxe's: see README.md. */
#define SRNIC_UVERBS_ABI_VERSION	2

#define SRNIC_ROCE_V2_PORT	SRNIC_ROCE_V2_UDP_PORT

/*
 * Re-pathing: the largest repath_timeouts (sysfs), and the most re-paths
 * one stall of an RC QP may take before its timeouts count against
 * retry_cnt again (a peer that is gone still fails, later: on a fabric of
 * two paths each way a re-path finds a working pair with chance 1/4, and
 * (3/4)^32 < 0.01 %).
 */
#define SRNIC_REPATH_TIMEOUTS_MAX	16
#define SRNIC_REPATH_MAX		32

/* Device limits reported by query_device. */
/* SRNIC_VENDOR_ID: <uapi/rdma/srnic.h> (ECE in native mode uses it too) */
#define SRNIC_VENDOR_PART_ID	0x5352		/* "SR" */
#define SRNIC_HW_VER		1
#define SRNIC_MAX_QP		0x10000
/* DC (srnic_dct.c): attachments per DCT and idle time, sysfs srnic/ */
#define SRNIC_DC_MAX_ATTACH_DEFAULT	256
#define SRNIC_DC_IDLE_MS_DEFAULT	10000
#define SRNIC_DC_IDLE_MS_MAX		3600000
#define SRNIC_MAX_QP_WR		0x4000
#define SRNIC_MAX_SGE		32
#define SRNIC_MAX_SGE_RD	32
#define SRNIC_MAX_CQ		0x10000
#define SRNIC_MAX_CQE		0x8000
#define SRNIC_MAX_MR		0x40000
#define SRNIC_MAX_PD		0x10000
#define SRNIC_MAX_XRCD		0x1000
#define SRNIC_MAX_QP_RD_ATOM	128
#define SRNIC_MAX_SRQ		0x10000
#define SRNIC_MAX_SRQ_WR	0x4000
#define SRNIC_MAX_AH		0x8000
#define SRNIC_MAX_MW		0x10000
#define SRNIC_MAX_FAST_REG_PAGES 512
#define SRNIC_MAX_MSG_SZ	0x80000000U	/* 2 GiB */
#define SRNIC_MAX_INLINE	512
#define SRNIC_PAGE_SIZE_CAP	0xfffff000U
#define SRNIC_LOCAL_CA_ACK_DELAY 15
#define SRNIC_RATE_LIMIT_MIN_KBPS 1000		/* 1 Mbit/s */
#define SRNIC_RATE_LIMIT_MAX_KBPS 100000000	/* 100 Gbit/s */
#define SRNIC_MAX_MCAST_GRP	1024
#define SRNIC_MAX_MCAST_QP_ATTACH 32		/* QPs per group */
#define SRNIC_MCG_MAX_UPPERS	8	/* netdevs above its own a group joins on */
#define SRNIC_MAX_TOT_MCAST_QP_ATTACH 8192	/* attachments, all groups */

/* Port limits. */
#define SRNIC_PORT_NUM		1
#define SRNIC_GID_TBL_LEN	1024
#define SRNIC_PKEY_TBL_LEN	1
#define SRNIC_DEFAULT_PKEY	0xffff

#define SRNIC_MCAST_HASH_BITS	6

/**
 * struct srnic_mcast - the multicast group table of a device (srnic_mcast.c)
 * @mutex: serialises attach and detach; protects @ngroups, @nattached, the
 *	insertions into and removals from @hash and the QP lists of its
 *	groups. Taken before RTNL (joining and leaving IP groups need it).
 * @hash: MGID -> struct srnic_mcg; changed under @mutex, read under RCU by
 *	the receive path
 * @ngroups: groups in @hash, at most SRNIC_MAX_MCAST_GRP
 * @nattached: QP attachments over all groups, at most
 *	SRNIC_MAX_TOT_MCAST_QP_ATTACH; read without @mutex only as a hint
 * @upper_work: brings every group's memberships on the netdevs stacked
 *	above the device's (VLANs, a bond) up to date after one was linked or
 *	unlinked (the netdev notifier runs under RTNL, which nests inside
 *	@mutex); cancelled at dealloc
 */
struct srnic_mcast {
	struct mutex		mutex;	/* see above */
	DECLARE_HASHTABLE(hash, SRNIC_MCAST_HASH_BITS);
	u32			ngroups;
	u32			nattached;
	struct work_struct	upper_work;
};

/**
 * enum srnic_mode - the user-space provider a device is made for
 * @SRNIC_MODE_RXE: default; rdma-core's stock rxe provider (driver id
 *	RDMA_DRIVER_RXE reported, uverbs ABI SRNIC_UVERBS_ABI_VERSION)
 * @SRNIC_MODE_NATIVE: srnic's own provider (link type "srnic_native"): no
 *	driver id reported, uverbs ABI SRNIC_NATIVE_ABI_VERSION
 */
enum srnic_mode {
	SRNIC_MODE_RXE,
	SRNIC_MODE_NATIVE,
};

/**
 * struct srnic_dev - one srnic RDMA device, bound to one Ethernet netdev
 * @ib_dev: the ib_core device; must stay first (INIT_RDMA_OBJ_SIZE rules)
 * @ndev: the bound netdev; a reference is held from creation until
 *	srnic_dealloc_driver(), so the pointer is valid for the device's
 *	whole life (even after NETDEV_UNREGISTER, until ib_core lets go)
 * @ndev_tracker: tracks the reference on @ndev
 * @net: network namespace whose UDP 4791 sockets this device holds a
 *	reference on, or NULL once released (srnic_net_put()); protected by
 *	srnic_net_mutex
 * @live_node: in srnic_registry.c's list of devices with a namespace
 *	(from srnic_net_get() to srnic_net_put()), which the receive path
 *	walks under RCU (srnic_dev_get_below())
 * @port_state: last port state dispatched as an event; protected by RTNL
 * @srq_xa: SRQ number -> struct srnic_srq (srnic_srq.c); an allocating
 *	xarray, protected by its own lock; an SRQ is published once complete
 * @srq_next: next SRQ number to try (xa_alloc_cyclic()); under @srq_xa's lock
 * @xsrq_xa: SRQ number -> struct srnic_srq of the XRC SRQs only, for the
 *	receive path (XRCETH); changed under its own lock in process
 *	context, read under RCU (srnic_srq_xrc_lookup())
 * @qp_xa: QP number -> struct srnic_qp; xa_lock (bh) for changes, RCU for
 *	lookups from the receive path
 * @qp_next: next QP number to try (cyclic allocation); under @qp_xa's lock
 * @ah_xa: AH number -> struct srnic_ah (rxe ABI ah_num); xa_lock taken
 *	with interrupts saved (AHs come and go with interrupts off), RCU for
 *	lookups
 * @ah_next: next AH number to try; under @ah_xa's lock
 * @counters: event counters (srnic_counters.h); atomic, no lock
 * @mr_keys: key index (key >> 8) -> struct srnic_mem of every MR and MW
 *	(srnic_mem.h), one space so a key names one object; an allocating
 *	xarray changed under its own lock, always with softirqs off
 *	(XA_FLAGS_LOCK_BH: ibv_rereg_mr replaces an entry under the MR's
 *	lock, which a QP's requester takes under its req_lock to bind a
 *	window), read under RCU by the data path
 * @mr_key_next: next key index to try (xa_alloc_cyclic()); under
 *	@mr_keys' lock
 * @mr_count: MRs of the device, at most SRNIC_MAX_MR; atomic
 * @mw_count: MWs of the device, at most SRNIC_MAX_MW; atomic
 * @qp_count: QPs of the device, at most SRNIC_MAX_QP; atomic
 * @cq_count: CQs of the device, at most SRNIC_MAX_CQ; atomic
 * @pd_count: PDs of the device, at most SRNIC_MAX_PD; atomic
 * @xrcd_count: XRC domains of the device, at most SRNIC_MAX_XRCD; atomic
 * @mcast: multicast groups and the UD QPs attached to them
 * @dcqcn: DCQCN knobs (srnic_dcqcn.h; written by sysfs, read locklessly)
 * @dcqcn_sysfs: the roce_np/ and roce_rp/ files of those knobs
 * @repath_timeouts: re-pathing threshold (sysfs srnic/; 0: off)
 * @rx_steer: receive steering on (sysfs srnic/; srnic_recv.c)
 * @rx_spread: packets of messages of several spread to another CPU (sysfs
 *	srnic/; srnic_recv.c)
 * @tx_batch: trains on (sysfs srnic/; srnic_sched.c)
 * @dc_max_attach: DC: attachments per DCT, read at DCT creation (sysfs
 *	srnic/; srnic_dct.c)
 * @dc_idle_ms: DC: an attachment idle this long is freed (sysfs srnic/;
 *	srnic_dct.c, read locklessly)
 * @mode: which user-space provider the device is made for; fixed at
 *	creation, read-only after
 * @dma_mask: the DMA mask of @ib_dev's struct device, which attaches to
 *	dma-bufs (srnic_mr.c)
 */
struct srnic_dev {
	struct ib_device	ib_dev;
	struct net_device	*ndev;
	netdevice_tracker	ndev_tracker;
	struct net		*net;
	struct hlist_node	live_node;
	enum ib_port_state	port_state;
	struct xarray		srq_xa;
	u32			srq_next;
	struct xarray		xsrq_xa;
	struct xarray		qp_xa;
	u32			qp_next;
	struct xarray		ah_xa;
	u32			ah_next;
	struct srnic_counters	counters;
	struct xarray		mr_keys;
	u32			mr_key_next;
	atomic_t		mr_count;
	atomic_t		mw_count;
	atomic_t		qp_count;
	atomic_t		cq_count;
	atomic_t		pd_count;
	atomic_t		xrcd_count;
	struct srnic_mcast	mcast;
	struct srnic_dcqcn_params dcqcn;
	struct srnic_dcqcn_sysfs dcqcn_sysfs;
	u32			repath_timeouts; /* 0: off; sysfs srnic/ */
	bool			rx_steer;	/* sysfs srnic/; srnic_recv.c */
	bool			rx_spread;	/* sysfs srnic/; srnic_recv.c */
	bool			tx_batch;	/* sysfs srnic/; srnic_sched.c */
	u32			dc_max_attach;	/* sysfs srnic/; srnic_dct.c */
	u32			dc_idle_ms;	/* sysfs srnic/; srnic_dct.c */
	enum srnic_mode		mode;		/* fixed at creation */
	u64			dma_mask;	/* ib_dev.dev's */
};

static inline struct srnic_dev *to_srnic_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srnic_dev, ib_dev);
}

/**
 * struct srnic_ucontext - a user process's context
 * @ibuc: ib_core's part
 * @mm_lock: protects @mms; taken inside the mmap lock (srnic_mmap())
 * @mms: the address spaces that mapped a ring of this context, each held
 *	by mmgrab() (struct srnic_umm): where srnic_ucontext_zap() looks for
 *	the rings to unmap when the context is revoked
 */
struct srnic_ucontext {
	struct ib_ucontext	ibuc;
	struct mutex		mm_lock;	/* protects @mms */
	struct list_head	mms;
};

int srnic_ucontext_add_mm(struct srnic_ucontext *uc, struct mm_struct *mm);
void srnic_ucontext_zap(struct srnic_ucontext *uc);

/**
 * struct srnic_pd - a protection domain
 * @ibpd: ib_core's part
 * @serial: unique for the module's lifetime (never reused, unlike the
 *	memory of a PD): what a READ response entry keeps to tell its PD
 *	from a later one at the same address (srnic_resp.c); immutable
 */
struct srnic_pd {
	struct ib_pd		ibpd;
	u64			serial;
};

static inline u64 srnic_pd_serial(const struct ib_pd *ibpd)
{
	return container_of(ibpd, struct srnic_pd, ibpd)->serial;
}

/* An XRC domain: ib_core's, nothing of srnic's own (srnic_xrcd.c). */
struct srnic_xrcd {
	struct ib_xrcd		ibxrcd;
};

static inline void srnic_count(struct srnic_dev *sdev, enum srnic_counter c)
{
	atomic64_inc(&sdev->counters.v[c]);
}

static inline void srnic_count_add(struct srnic_dev *sdev,
				   enum srnic_counter c, u64 n)
{
	atomic64_add(n, &sdev->counters.v[c]);
}

/* srnic_registry.c */
int srnic_registry_init(void);
void srnic_registry_exit(void);
struct srnic_dev *srnic_dev_get_by_netdev(struct net_device *ndev);
struct net_device *srnic_port_master(struct net_device *ndev);
void srnic_registry_add(struct srnic_dev *sdev);
void srnic_registry_del(struct srnic_dev *sdev);
struct srnic_dev *srnic_dev_get_below(struct net_device *master);
struct ib_device *srnic_other_dev_get_by_netdev(struct net_device *ndev);

/* srnic_counters.c */
extern const struct ib_device_ops srnic_counters_ops;

/* srnic_dev.c */
int srnic_dev_add(const char *name, struct net_device *ndev,
		  enum srnic_mode mode);

/* srnic_port.c */
enum ib_mtu srnic_port_active_mtu(unsigned int netdev_mtu);
__be64 srnic_port_guid_from_mac(const u8 *mac);
enum ib_port_state srnic_port_state(const struct net_device *ndev);
int srnic_query_port(struct ib_device *ibdev, u32 port_num,
		     struct ib_port_attr *attr);
int srnic_get_port_immutable(struct ib_device *ibdev, u32 port_num,
			     struct ib_port_immutable *immutable);
int srnic_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
		     u16 *pkey);
enum rdma_link_layer srnic_get_link_layer(struct ib_device *ibdev,
					  u32 port_num);
void srnic_port_update(struct srnic_dev *sdev, struct net_device *ndev);
bool srnic_port_netns_ok(struct srnic_dev *sdev, const struct net_device *ndev);
extern const struct ib_device_ops srnic_port_ops;

/* srnic_mcast.c */
struct srnic_qp;
struct srnic_pkt;
extern const struct ib_device_ops srnic_mcast_ops;
void srnic_mcast_dev_init(struct srnic_dev *sdev);
void srnic_mcast_dev_fini(struct srnic_dev *sdev);
void srnic_mcast_qp_detach_all(struct srnic_qp *qp);
void srnic_mcast_rcv(struct srnic_dev *sdev, struct srnic_pkt *pkt);
void srnic_mcast_uppers_changed(struct srnic_dev *sdev,
				const struct net_device *upper);

/* srnic_net.c */
int srnic_net_init(void);
void srnic_net_exit(void);
int srnic_net_get(struct srnic_dev *sdev, struct net *net);
void srnic_net_put(struct srnic_dev *sdev);

/* srnic_cnp.c: the DCQCN knobs of a device (CNPs: srnic_transport.h) */
void srnic_cnp_dev_init(struct srnic_dev *sdev);
int srnic_cnp_sysfs_add(struct srnic_dev *sdev);

/* srnic_pd.c */
int srnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* srnic_xrcd.c */
extern const struct ib_device_ops srnic_xrcd_ops;

#include "srnic_hdr.h"
#include "srnic_opcode.h"
#include "srnic_queue.h"
#include "srnic_cq.h"
#include "srnic_srq.h"
#include "srnic_mem.h"
#include "srnic_mr.h"
#include "srnic_mtt.h"
#include "srnic_odp.h"
#include "srnic_sge.h"
#include "srnic_mw.h"
#include "srnic_qp.h"
#include "srnic_transport.h"

#endif /* SRNIC_H */
