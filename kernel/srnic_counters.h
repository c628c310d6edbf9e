/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic counters: per-device event counts, exported through ib_core's
 * hw_counters (rdma statistic show, /sys/class/infiniband/<dev>/ports/1/
 * hw_counters/). Names follow rdma_rxe's and mlx5's where they mean the
 * same thing.
 */
#ifndef SRNIC_COUNTERS_H
#define SRNIC_COUNTERS_H

#include <linux/atomic.h>

enum srnic_counter {
	SRNIC_CNT_TX_PACKETS,
	SRNIC_CNT_RX_PACKETS,
	SRNIC_CNT_TX_DROPPED,		/* refused by the IP stack */
	SRNIC_CNT_TX_NO_ROUTE,
	SRNIC_CNT_RX_ICRC_ERR,		/* dropped: bad ICRC */
	SRNIC_CNT_RX_BAD_HDR,		/* dropped: malformed or unknown opcode */
	SRNIC_CNT_RX_NO_QP,		/* dropped: no such QP, or wrong state */
	SRNIC_CNT_RETRANSMITS,		/* packets sent again (go-back-N) */
	SRNIC_CNT_RETRANS_TIMEOUTS,	/* retransmit timer expiries */
	SRNIC_CNT_RETRY_EXCEEDED,	/* WQEs failed: retry_cnt exhausted */
	SRNIC_CNT_RNR_NAK_SENT,
	SRNIC_CNT_RNR_NAK_RCVD,
	SRNIC_CNT_RNR_RETRY_EXCEEDED,
	SRNIC_CNT_SEQ_NAK_SENT,		/* PSN sequence error NAKs */
	SRNIC_CNT_SEQ_NAK_RCVD,
	SRNIC_CNT_DUP_REQUEST,		/* duplicate requests answered */
	SRNIC_CNT_OUT_OF_SEQ,		/* requests ahead of the expected PSN */
	SRNIC_CNT_UD_NO_RECV,		/* UD/UC packets dropped: no receive WQE */
	SRNIC_CNT_SENDS,		/* SEND messages completed */
	SRNIC_CNT_RECVS,		/* receive WQEs completed */
	SRNIC_CNT_TX_BYTES,		/* sent_pkts' bytes, BTH to ICRC */
	SRNIC_CNT_RX_BYTES,		/* rcvd_pkts' bytes, BTH to ICRC */
	SRNIC_CNT_ACK_SENT,		/* positive ACKs (ACKNOWLEDGE packets) */
	SRNIC_CNT_ACK_RCVD,
	SRNIC_CNT_INV_REQ_NAK_SENT,	/* NAK invalid request */
	SRNIC_CNT_INV_REQ_NAK_RCVD,
	SRNIC_CNT_ACCESS_NAK_SENT,	/* NAK remote access error */
	SRNIC_CNT_ACCESS_NAK_RCVD,
	SRNIC_CNT_REM_OP_NAK_SENT,	/* NAK remote operational error */
	SRNIC_CNT_REM_OP_NAK_RCVD,
	SRNIC_CNT_NP_CNP_SENT,		/* DCQCN NP: CNPs sent */
	SRNIC_CNT_NP_ECN_MARKED,	/* DCQCN NP: CE-marked packets received */
	SRNIC_CNT_RP_CNP_HANDLED,	/* DCQCN RP: CNPs acted on */
	SRNIC_CNT_RP_CNP_IGNORED,	/* DCQCN RP: RP off, no such RC/UC QP */
	SRNIC_CNT_READ_GAP_RETRY,	/* READs asked again on a response gap */
	SRNIC_CNT_READ_RESP_OOO,	/* READ responses placed ahead of a hole */
	SRNIC_CNT_REQ_OOO,		/* SEND/WRITE packets placed ahead of a hole */
	SRNIC_CNT_RING_INDEX_ERR,	/* user ring index out of its window */
	SRNIC_CNT_WQE_FORMAT_ERR,	/* malformed WQEs completed in error */
	SRNIC_CNT_ACK_OUT_OF_WINDOW,	/* responses for PSNs not outstanding */
	SRNIC_CNT_TX_HANDOVER,		/* TX runs handed to the owner CPU */
	SRNIC_CNT_REPATHS,		/* RC QPs moved to a new UDP source port */
	SRNIC_CNT_RX_STEERED,		/* packets run on their consumer's CPU */
	SRNIC_CNT_RX_STEER_DROPS,	/* dropped: that CPU's queue was full */
	SRNIC_CNT_RX_SPREAD,		/* packets spread to another CPU */
	SRNIC_CNT_TX_TRAIN_PKTS,	/* packets sent in trains of 2 or more */
	SRNIC_CNT_TAIL_PROBES,		/* unasked tails asked for an ACK */
	/* DC (docs/dc.md); target side but for dc_attach_reused */
	SRNIC_CNT_DC_ATTACH,		/* attachments made */
	SRNIC_CNT_DC_ATTACH_REUSED,	/* DCI: a WR to the attached target */
	SRNIC_CNT_DC_DETACH,		/* attachments freed by DETACH */
	SRNIC_CNT_DC_IDLE_EVICTIONS,	/* freed: idle for dc_idle_ms */
	SRNIC_CNT_DC_LRU_EVICTIONS,	/* freed: room for a new one */
	SRNIC_CNT_DC_ATTACH_RNR,	/* ATTACH refused for room: RNR NAK */
	SRNIC_CNT_DC_KEY_VIOLATIONS,	/* wrong DC access key */
	SRNIC_CNT_DC_UNKNOWN_DCT,	/* DC request to no QP */
	SRNIC_CNT_DC_NOT_DC_QP_DROPS,	/* DC packet to a non-DC QP or device */
	SRNIC_CNT_DC_NO_ATTACH_NAKS,	/* NAK no attachment sent */
	SRNIC_CNT_MAX
};

struct srnic_counters {
	atomic64_t	v[SRNIC_CNT_MAX];
};

#endif /* SRNIC_COUNTERS_H */
