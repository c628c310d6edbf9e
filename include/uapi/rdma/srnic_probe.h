/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * srnic tracepoints: the contract between the module (kernel/srnic_trace.h),
 * BPF programs attached with SEC("tracepoint/srnic/<event>") and the C++
 * tools that read their maps.
 *
 * Each struct srnic_probe_* is the exact record layout of one event as a
 * BPF tracepoint program sees it: the 8-byte common trace header, then the
 * event's fields in TP_STRUCT__entry order. The module checks every offset
 * against the real trace_event_raw_* layout at build time (srnic_trace.c),
 * so a field added there without a matching change here fails the build.
 *
 * Events (all under /sys/kernel/tracing/events/srnic/):
 *   srnic_pkt_tx       a RoCEv2 packet handed to the IP stack
 *   srnic_pkt_rx       a RoCEv2 packet accepted (ICRC and header checks passed)
 *   srnic_retransmit   the requester rewinds and sends again from @psn
 *   srnic_nak          a NAK (or RNR NAK) sent or received
 *   srnic_cnp          a CNP sent (notification point) or received (reaction point)
 *   srnic_rate         a DCQCN reaction-point rate change
 *   srnic_qp_state     a QP state transition
 *   srnic_wqe_post     the requester takes a send WQE from the send queue
 *   srnic_wqe_done     a completion is posted (status != 0: error completion)
 *   srnic_repath       an RC QP's packets move to a new UDP source port
 *   srnic_dc_attach    a DCT made an attachment for an initiator (DC)
 *   srnic_dc_detach    a DCT let go of an attachment (DC), and why
 *
 * @dev is the ib_device index (as in `rdma dev`), @qpn the local QP number.
 */
#ifndef _UAPI_RDMA_SRNIC_PROBE_H
#define _UAPI_RDMA_SRNIC_PROBE_H

#include <linux/types.h>

#define SRNIC_TRACE_SYSTEM	"srnic"

/* srnic_retransmit.cause */
enum srnic_retx_cause {
	SRNIC_RETX_TIMEOUT	= 0,	/* retransmit timer expired */
	SRNIC_RETX_SEQ_NAK	= 1,	/* PSN sequence error NAK received */
	SRNIC_RETX_RNR_NAK	= 2,	/* RNR NAK timer expired */
	SRNIC_RETX_READ_GAP	= 3,	/* RDMA READ response missing */
};

/* srnic_dc_detach.cause */
enum srnic_dc_cause {
	SRNIC_DC_CAUSE_DETACH	= 0,	/* the initiator's DETACH */
	SRNIC_DC_CAUSE_IDLE	= 1,	/* idle for dc_idle_ms */
	SRNIC_DC_CAUSE_LRU	= 2,	/* evicted for a new attachment */
	SRNIC_DC_CAUSE_REPLACED	= 3,	/* the initiator attached anew */
	SRNIC_DC_CAUSE_DESTROY	= 4,	/* the DCT was destroyed */
};

/* srnic_repath.cause */
enum srnic_repath_cause {
	SRNIC_REPATH_TIMEOUT	= 0,	/* retransmit timeouts without progress */
	SRNIC_REPATH_PEER	= 1,	/* the peer's packets came from a new port */
};

/* srnic_nak.dir, srnic_cnp.dir */
enum srnic_probe_dir {
	SRNIC_DIR_TX		= 0,
	SRNIC_DIR_RX		= 1,
};

/* srnic_rate.reason */
enum srnic_rate_reason {
	SRNIC_RATE_CNP		= 0,	/* decrease on a CNP */
	SRNIC_RATE_FAST_RECOVERY = 1,
	SRNIC_RATE_ADDITIVE	= 2,
	SRNIC_RATE_HYPER	= 3,
	SRNIC_RATE_RESET	= 4,	/* back to line rate / DCQCN turned off */
};

struct srnic_probe_pkt {		/* srnic_pkt_tx, srnic_pkt_rx */
	__u64	common;
	__u32	dev;
	__u32	qpn;
	__u32	dqpn;			/* tx: destination QP; rx: 0 */
	__u32	psn;
	__u32	len;			/* payload bytes (no headers, pad, ICRC) */
	__u8	opcode;			/* BTH opcode */
};

struct srnic_probe_retransmit {
	__u64	common;
	__u32	dev;
	__u32	qpn;
	__u32	psn;
	__u8	cause;			/* enum srnic_retx_cause */
};

struct srnic_probe_nak {
	__u64	common;
	__u32	dev;
	__u32	qpn;
	__u32	psn;
	__u8	syndrome;		/* AETH syndrome byte */
	__u8	dir;			/* enum srnic_probe_dir */
};

struct srnic_probe_cnp {
	__u64	common;
	__u32	dev;
	__u32	qpn;
	__u8	dir;			/* TX: NP sent one; RX: RP got one */
};

struct srnic_probe_rate {
	__u64	common;
	__u64	old_rate;		/* bytes/s, 0 = unpaced */
	__u64	new_rate;		/* bytes/s */
	__u64	target_rate;		/* bytes/s */
	__u32	dev;
	__u32	qpn;
	__u32	alpha;			/* fixed point, 1024 = 1.0 */
	__u8	reason;			/* enum srnic_rate_reason */
};

struct srnic_probe_qp_state {
	__u64	common;
	__u32	dev;
	__u32	qpn;
	__u8	old_state;		/* enum ib_qp_state */
	__u8	new_state;
};

struct srnic_probe_wqe_post {
	__u64	common;
	__u64	wr_id;
	__u32	dev;
	__u32	qpn;
	__u32	len;			/* total bytes of the WQE */
	__u8	opcode;			/* enum ib_wr_opcode */
};

struct srnic_probe_wqe_done {
	__u64	common;
	__u64	wr_id;
	__u32	dev;
	__u32	qpn;
	__u8	status;			/* enum ib_wc_status; != 0 is an error */
	__u8	opcode;			/* enum ib_wc_opcode */
	__u8	is_recv;		/* 1: receive queue, 0: send queue */
};

struct srnic_probe_dc_attach {
	__u64	common;
	__u32	dev;
	__u32	dci;			/* the initiator's DCI number */
	__u32	dct;			/* the DCT number */
	__u32	gen;			/* the attachment generation */
	__u8	gid[16];		/* the initiator's address (IPv6 or v4-mapped) */
};

struct srnic_probe_dc_detach {
	__u64	common;
	__u32	dev;
	__u32	dci;
	__u32	dct;
	__u32	gen;
	__u8	cause;			/* enum srnic_dc_cause */
};

struct srnic_probe_repath {
	__u64	common;
	__u32	dev;
	__u32	qpn;
	__u16	old_sport;
	__u16	new_sport;
	__u8	cause;			/* enum srnic_repath_cause */
};

#endif /* _UAPI_RDMA_SRNIC_PROBE_H */
