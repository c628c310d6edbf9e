/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * srnic: names shared by the kernel module and its user-space tools.
 *
 * Verbs themselves use rdma-core's rxe ABI (<rdma/rdma_user_rxe.h>); this
 * file holds only what srnic adds around it:
 *
 *   rdma link add NAME type SRNIC_LINK_TYPE netdev IFNAME
 *   rdma link add NAME type SRNIC_LINK_TYPE_NATIVE netdev IFNAME
 *
 * The first makes a device in the default mode, driven by rdma-core's stock
 * rxe provider (driver id RDMA_DRIVER_RXE reported, uverbs ABI 2). The second
 * makes a device in native mode (docs/native-provider.md), matched only by
 * srnic's own provider (libsrnic): ib_uverbs reports no driver id for it and
 * its uverbs ABI version is SRNIC_NATIVE_ABI_VERSION, outside the stock rxe
 * provider's range. Version 1 of the native ABI is the rxe ABI's commands,
 * responses, rings and work-request layouts (<rdma/rdma_user_rxe.h>); a
 * native provider fills the ioctl header's driver id with RDMA_DRIVER_RXE.
 *
 * XRC (native mode only): the send WQE of an XRC initiator QP
 * (IB_QPT_XRC_INI / IBV_QPT_XRC_SEND) carries the number of the XRC SRQ at
 * the target in struct rxe_send_wr's top-level `reserved` word
 * (SRNIC_XRC_SRQN_FIELD; bits 23:0, the rest ignored), which no rxe-ABI
 * work request uses. An XRC target QP (IB_QPT_XRC_TGT) is made by ib_uverbs
 * without driver data and has no rings; its create and open responses
 * carry no driver part. XRC SRQs are created with the rxe SRQ command and
 * response (struct rxe_create_srq_resp: ring and srq_num). srnic's XRC
 * takes SENDs, RDMA WRITEs, RDMA READs and atomics.
 *
 * DC, Dynamically Connected (native mode only, docs/dc.md): a DC QP is
 * created with qp_type IB_QPT_DRIVER and, as the create-QP command's driver
 * data, struct srnic_create_dc_qp: dc_type SRNIC_DC_TYPE_DCI (an initiator:
 * a send queue whose WQEs each name their target) or SRNIC_DC_TYPE_DCT (a
 * target: receives into the SRQ it must be created with, answers requests
 * that carry its dct_access_key). The response is struct rxe_create_qp_resp
 * (a DCT's send queue and a DCI's receive queue are never used). A DCI's
 * send WQE carries struct srnic_dc_wr_addr at the start of struct
 * rxe_send_wr's wr.ud.av (SRNIC_DC_ADDR_FIELD), which no DCI operation's
 * part of that union reaches: the AH (wr.ud.ah_num's number, of the QP's
 * PD), the DCT number and its access key. DC QPs move RESET -> INIT -> RTR
 * -> RTS with no remote attribute; path MTU, timeout, retry counts and
 * max_rd_atomic (at most SRNIC_DC_MAX_RD_ATOMIC) are optional. A device in
 * the default mode refuses IB_QPT_DRIVER (EOPNOTSUPP). DC opcodes: the
 * transport 0xc0 (docs/dc.md).
 *
 *   /sys/class/infiniband/<dev>/SRNIC_SYSFS_GROUP/
 *       SRNIC_SYSFS_VERSION   module version, "x.y.z\n"
 *       SRNIC_SYSFS_NETDEV    name of the bound netdev, "eth0\n"
 *       SRNIC_SYSFS_NETNS     inode number of the bound netdev's network
 *                             namespace (stat() of /proc/PID/ns/net), decimal
 *       SRNIC_SYSFS_REPATH_TIMEOUTS  re-pathing: RC QPs take a new UDP source
 *                             port after this many timeouts, 0-16 (0: off)
 *       SRNIC_SYSFS_RX_STEER  receive steering to the consumer's CPU, 0 or 1
 *       SRNIC_SYSFS_RX_SPREAD spreading of messages of several packets to
 *                             another CPU, 0 or 1 (0 by default)
 *       SRNIC_SYSFS_TX_BATCH  trains of an RC/UC QP's requests, 0 or 1
 *       SRNIC_SYSFS_PROVIDER  the user-space provider the device is made
 *                             for: SRNIC_PROVIDER_RXE or SRNIC_PROVIDER_NATIVE
 *                             followed by a newline (fixed at creation)
 *       SRNIC_SYSFS_DC_MAX_ATTACH  DC: attachments a DCT holds at most, 1-65536
 *                             (default 256), read when a DCT is created
 *       SRNIC_SYSFS_DC_IDLE_MS  DC: an attachment idle this long (ms) is
 *                             freed, 1-3600000 (default 10000)
 *
 * A device is an srnic device exactly when that directory exists.
 *
 * DCQCN congestion control knobs (names, units and defaults of mlx5's
 * roce_np / roce_rp sets; README.md "DCQCN"), one file per knob, readable
 * and writable at runtime; a write out of range fails with EINVAL:
 *
 *   /sys/class/infiniband/<dev>/SRNIC_SYSFS_ROCE_NP/<knob>   notification point
 *   /sys/class/infiniband/<dev>/SRNIC_SYSFS_ROCE_RP/<knob>   reaction point
 *
 * Tools list these directories generically (every regular file is a knob
 * holding one decimal number); the names are below for reference.
 */
#ifndef _UAPI_RDMA_SRNIC_H
#define _UAPI_RDMA_SRNIC_H

#include <linux/types.h>
#include <rdma/ib_user_verbs.h>

#define SRNIC_LINK_TYPE		"srnic"
#define SRNIC_LINK_TYPE_NATIVE	"srnic_native"

/* uverbs ABI version of a native-mode device (sysfs abi_version) */
#define SRNIC_NATIVE_ABI_VERSION	16
/*
 * The vendor id query_device reports (no IEEE OUI: a software device) and
 * native mode's ECE vendor_id (ibv_query_ece; rdma_cm carries it in the CM
 * REQ and REP). SRNIC_ECE_OPTIONS: the ECE options srnic negotiates - none
 * yet (every srnic behaviour works with any RoCEv2 peer), so ibv_set_ece
 * answers any request with options 0 (docs/native-provider.md "ECE").
 */
#define SRNIC_VENDOR_ID		0xffffff
#define SRNIC_ECE_OPTIONS	0u
/* struct rxe_send_wr field that holds an XRC send WQE's remote SRQ number */
#define SRNIC_XRC_SRQN_FIELD	reserved
/* DC (native mode): the create-QP driver data of an IB_QPT_DRIVER QP */
#define SRNIC_DC_TYPE_DCT	1
#define SRNIC_DC_TYPE_DCI	2
#define SRNIC_DC_MAX_RD_ATOMIC	16

struct srnic_create_dc_qp {
	__u32		dc_type;	/* SRNIC_DC_TYPE_* */
	__u32		reserved;	/* 0 */
	__aligned_u64	dct_access_key;	/* DCT: the key requests must carry */
};

/* DC: a DCI send WQE's target, at rxe_send_wr.SRNIC_DC_ADDR_FIELD */
#define SRNIC_DC_ADDR_FIELD	wr.ud.av
struct srnic_dc_wr_addr {
	__u32		ah_num;		/* the address handle (create_ah's) */
	__u32		dct_num;	/* the DCT number, bits 23:0 */
	__aligned_u64	dc_key;		/* the DCT's access key */
};

#define SRNIC_SYSFS_GROUP	"srnic"
#define SRNIC_SYSFS_VERSION	"version"
#define SRNIC_SYSFS_NETDEV	"netdev"
#define SRNIC_SYSFS_NETNS	"netns"
#define SRNIC_SYSFS_REPATH_TIMEOUTS	"repath_timeouts"
#define SRNIC_SYSFS_RX_STEER	"rx_steer"
#define SRNIC_SYSFS_RX_SPREAD	"rx_spread"
#define SRNIC_SYSFS_TX_BATCH	"tx_batch"
#define SRNIC_SYSFS_PROVIDER	"provider"
#define SRNIC_SYSFS_DC_MAX_ATTACH	"dc_max_attach"
#define SRNIC_SYSFS_DC_IDLE_MS	"dc_idle_ms"
#define SRNIC_PROVIDER_RXE	"rxe"
#define SRNIC_PROVIDER_NATIVE	"native"

#define SRNIC_SYSFS_ROCE_NP	"roce_np"
#define SRNIC_SYSFS_ROCE_RP	"roce_rp"

/* roce_np/ */
#define SRNIC_NP_ENABLE				"enable"
#define SRNIC_NP_MIN_TIME_BETWEEN_CNPS		"min_time_between_cnps"
#define SRNIC_NP_CNP_DSCP			"cnp_dscp"
#define SRNIC_NP_CNP_802P_PRIO			"cnp_802p_prio"

/* roce_rp/ */
#define SRNIC_RP_ENABLE				"enable"
#define SRNIC_RP_CLAMP_TGT_RATE			"clamp_tgt_rate"
#define SRNIC_RP_CLAMP_TGT_RATE_AFTER_TIME_INC	"clamp_tgt_rate_after_time_inc"
#define SRNIC_RP_DCE_TCP_G			"dce_tcp_g"
#define SRNIC_RP_DCE_TCP_RTT			"dce_tcp_rtt"
#define SRNIC_RP_INITIAL_ALPHA_VALUE		"initial_alpha_value"
#define SRNIC_RP_RATE_REDUCE_MONITOR_PERIOD	"rate_reduce_monitor_period"
#define SRNIC_RP_RATE_TO_SET_ON_FIRST_CNP	"rate_to_set_on_first_cnp"
#define SRNIC_RP_RPG_AI_RATE			"rpg_ai_rate"
#define SRNIC_RP_RPG_BYTE_RESET			"rpg_byte_reset"
#define SRNIC_RP_RPG_GD				"rpg_gd"
#define SRNIC_RP_RPG_HAI_RATE			"rpg_hai_rate"
#define SRNIC_RP_RPG_MAX_RATE			"rpg_max_rate"
#define SRNIC_RP_RPG_MIN_DEC_FAC		"rpg_min_dec_fac"
#define SRNIC_RP_RPG_MIN_RATE			"rpg_min_rate"
#define SRNIC_RP_RPG_THRESHOLD			"rpg_threshold"
#define SRNIC_RP_RPG_TIME_RESET			"rpg_time_reset"
/* srnic's own: send RoCEv2 data packets as ECT(0) so switches can mark */
#define SRNIC_RP_ECN_MARK			"ecn_mark"

/*
 * Native mode, completion timestamps. A CQ of a native device created with
 * IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION (libibverbs sets it for
 * ibv_create_cq_ex with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) holds a
 * struct srnic_native_cqe at the start of each ring slot (the slot is as
 * large as for any other CQ): the user ABI's work completion, then the
 * times the kernel queued it, in nanoseconds of CLOCK_MONOTONIC (the
 * device clock: ibv_query_rt_values_ex reads it, and the device reports
 * hca_core_clock SRNIC_NATIVE_CLOCK_KHZ and a 64-bit completion timestamp
 * mask) and of CLOCK_REALTIME (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK).
 * Other CQs, and every CQ of a default-mode device, leave those bytes alone;
 * a default-mode device refuses the flag (EOPNOTSUPP).
 */
struct srnic_native_cqe {
	struct ib_uverbs_wc	uwc;
	__aligned_u64		timestamp;	/* CLOCK_MONOTONIC, ns */
	__aligned_u64		wallclock;	/* CLOCK_REALTIME, ns */
};

/* the device clock's rate in kHz (ib_device_attr.hca_core_clock): 1 GHz */
#define SRNIC_NATIVE_CLOCK_KHZ	1000000

/* RoCEv2 destination UDP port (IBA Annex A17). */
#define SRNIC_ROCE_V2_UDP_PORT	4791

#endif /* _UAPI_RDMA_SRNIC_H */
