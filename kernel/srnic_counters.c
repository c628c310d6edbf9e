// SPDX-License-Identifier: GPL-2.0
/*
 * srnic counters through ib_core's hw_counters: "rdma statistic show link
 * srnic0/1" and /sys/class/infiniband/<dev>/ports/1/hw_counters/<name>;
 * and per-QP transport state in "rdma resource show qp -dd".
 */
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "srnic.h"

static const struct rdma_stat_desc srnic_counter_descs[] = {
	[SRNIC_CNT_TX_PACKETS].name = "sent_pkts",
	[SRNIC_CNT_RX_PACKETS].name = "rcvd_pkts",
	[SRNIC_CNT_TX_DROPPED].name = "send_err",
	[SRNIC_CNT_TX_NO_ROUTE].name = "send_no_route",
	[SRNIC_CNT_RX_ICRC_ERR].name = "rcvd_icrc_err",
	[SRNIC_CNT_RX_BAD_HDR].name = "rcvd_bad_hdr",
	[SRNIC_CNT_RX_NO_QP].name = "rcvd_no_qp",
	[SRNIC_CNT_RETRANSMITS].name = "retransmits",
	[SRNIC_CNT_RETRANS_TIMEOUTS].name = "local_ack_timeout_err",
	[SRNIC_CNT_RETRY_EXCEEDED].name = "retry_exceeded_err",
	[SRNIC_CNT_RNR_NAK_SENT].name = "send_rnr_err",
	[SRNIC_CNT_RNR_NAK_RCVD].name = "rcvd_rnr_err",
	[SRNIC_CNT_RNR_RETRY_EXCEEDED].name = "retry_rnr_exceeded_err",
	[SRNIC_CNT_SEQ_NAK_SENT].name = "send_seq_err",
	[SRNIC_CNT_SEQ_NAK_RCVD].name = "rcvd_seq_err",
	[SRNIC_CNT_DUP_REQUEST].name = "duplicate_request",
	[SRNIC_CNT_OUT_OF_SEQ].name = "out_of_seq_request",
	[SRNIC_CNT_UD_NO_RECV].name = "rcvd_no_recv_wqe",
	[SRNIC_CNT_SENDS].name = "rdma_sends",
	[SRNIC_CNT_RECVS].name = "rdma_recvs",
	[SRNIC_CNT_TX_BYTES].name = "tx_bytes",
	[SRNIC_CNT_RX_BYTES].name = "rx_bytes",
	[SRNIC_CNT_ACK_SENT].name = "sent_acks",
	[SRNIC_CNT_ACK_RCVD].name = "rcvd_acks",
	[SRNIC_CNT_INV_REQ_NAK_SENT].name = "send_inv_req_err",
	[SRNIC_CNT_INV_REQ_NAK_RCVD].name = "req_remote_invalid_request",
	[SRNIC_CNT_ACCESS_NAK_SENT].name = "resp_remote_access_errors",
	[SRNIC_CNT_ACCESS_NAK_RCVD].name = "req_remote_access_errors",
	[SRNIC_CNT_REM_OP_NAK_SENT].name = "send_rem_op_err",
	[SRNIC_CNT_REM_OP_NAK_RCVD].name = "rcvd_rem_op_err",
	[SRNIC_CNT_NP_CNP_SENT].name = "np_cnp_sent",
	[SRNIC_CNT_NP_ECN_MARKED].name = "np_ecn_marked_roce_packets",
	[SRNIC_CNT_RP_CNP_HANDLED].name = "rp_cnp_handled",
	[SRNIC_CNT_RP_CNP_IGNORED].name = "rp_cnp_ignored",
	[SRNIC_CNT_READ_GAP_RETRY].name = "read_gap_retries",
	[SRNIC_CNT_READ_RESP_OOO].name = "read_resp_out_of_order",
	[SRNIC_CNT_REQ_OOO].name = "req_placed_out_of_order",
	[SRNIC_CNT_RING_INDEX_ERR].name = "ring_index_errors",
	[SRNIC_CNT_WQE_FORMAT_ERR].name = "wqe_format_errors",
	[SRNIC_CNT_ACK_OUT_OF_WINDOW].name = "ack_out_of_window",
	[SRNIC_CNT_TX_HANDOVER].name = "tx_handovers",
	[SRNIC_CNT_REPATHS].name = "repaths",
	[SRNIC_CNT_RX_STEERED].name = "rx_steered",
	[SRNIC_CNT_RX_STEER_DROPS].name = "rx_steer_drops",
	[SRNIC_CNT_RX_SPREAD].name = "rx_spread",
	[SRNIC_CNT_TX_TRAIN_PKTS].name = "tx_train_packets",
	[SRNIC_CNT_TAIL_PROBES].name = "tail_probes",
	[SRNIC_CNT_DC_ATTACH].name = "dc_attach",
	[SRNIC_CNT_DC_ATTACH_REUSED].name = "dc_attach_reused",
	[SRNIC_CNT_DC_DETACH].name = "dc_detach",
	[SRNIC_CNT_DC_IDLE_EVICTIONS].name = "dc_idle_evictions",
	[SRNIC_CNT_DC_LRU_EVICTIONS].name = "dc_lru_evictions",
	[SRNIC_CNT_DC_ATTACH_RNR].name = "dc_attach_rnr",
	[SRNIC_CNT_DC_KEY_VIOLATIONS].name = "dc_key_violations",
	[SRNIC_CNT_DC_UNKNOWN_DCT].name = "dc_unknown_dct",
	[SRNIC_CNT_DC_NOT_DC_QP_DROPS].name = "dc_not_dc_qp_drops",
	[SRNIC_CNT_DC_NO_ATTACH_NAKS].name = "dc_no_attachment_naks",
};

static struct rdma_hw_stats *
srnic_alloc_hw_port_stats(struct ib_device *ibdev, u32 port_num)
{
	BUILD_BUG_ON(ARRAY_SIZE(srnic_counter_descs) != SRNIC_CNT_MAX);
	return rdma_alloc_hw_stats_struct(srnic_counter_descs,
					  ARRAY_SIZE(srnic_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int srnic_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct srnic_dev *sdev = to_srnic_dev(ibdev);
	int i;

	for (i = 0; i < SRNIC_CNT_MAX; i++)
		stats->value[i] = atomic64_read(&sdev->counters.v[i]);
	return SRNIC_CNT_MAX;
}

/* A snapshot of a QP's transport state, for restrack. */
struct srnic_qp_snapshot {
	u32	sq_psn;
	u32	una_psn;
	u32	epsn;
	u32	retry_left;
	u32	rnr_retry_left;
	u32	rd_outstanding;
	u64	retransmits;
	u64	rate;
	u32	srtt_us;
	u32	rttvar_us;
	u32	rto_ms;
	u32	udp_sport;
	u32	flow_label;
	u32	repaths;
};

static void srnic_qp_snapshot(struct srnic_qp *qp, struct srnic_qp_snapshot *s)
{
	spin_lock_bh(&qp->req_lock);
	s->sq_psn = qp->req.psn;
	s->una_psn = qp->req.acked_psn;
	s->retry_left = qp->req.retry_left;
	s->rnr_retry_left = qp->req.rnr_retry_left;
	s->rd_outstanding = qp->req.rd_outstanding;
	s->retransmits = qp->req.retransmits;
	s->rate = srnic_sched_rate(qp);
	s->srtt_us = qp->req.srtt_us;
	s->rttvar_us = qp->req.rttvar_us;
	s->rto_ms = jiffies_to_msecs(srnic_req_timeout(qp));
	spin_unlock_bh(&qp->req_lock);
	s->udp_sport = READ_ONCE(qp->src_port);
	s->flow_label = READ_ONCE(qp->flow_label);
	s->repaths = READ_ONCE(qp->repaths);
	spin_lock_bh(&qp->resp_lock);
	s->epsn = qp->resp.epsn;
	spin_unlock_bh(&qp->resp_lock);
}

/*
 * A DC QP (type DRIVER to ib_core): "dc_type" DCI or DCT, and a DCI's
 * current target ("dc_dct", 0 when not attached) or a DCT's attachments in
 * use ("dc_attachments").
 */
static int srnic_fill_res_dc(struct sk_buff *msg, struct srnic_qp *qp)
{
	u32 dctn = 0;

	if (qp->dc == SRNIC_DC_DCT)
		return rdma_nl_put_driver_string(msg, "dc_type", "DCT") ||
		       rdma_nl_put_driver_u32(msg, "dc_attachments",
					      srnic_dct_attachments(qp));
	if (qp->dc != SRNIC_DC_DCI)
		return 0;
	spin_lock_bh(&qp->req_lock);
	if (qp->dci.attached)
		dctn = qp->dci.dctn;
	spin_unlock_bh(&qp->req_lock);
	return rdma_nl_put_driver_string(msg, "dc_type", "DCI") ||
	       rdma_nl_put_driver_u32(msg, "dc_dct", dctn);
}

/*
 * Driver attributes of "rdma resource show qp -dd": requester PSNs (next to
 * send, oldest unacknowledged), the responder's expected PSN, retries left,
 * READs/atomics in flight, go-back-N retransmissions, the pacing rate
 * (bytes/s, 0 = unpaced), the measured round trip and its variation (µs, 0
 * until measured), the retransmit timeout they give (ms, 0 = none), and the
 * UDP source port and (RC/UC) IPv6 flow label of the QP's packets, and how
 * often it re-pathed (took a new port: srnic_qp_repath()).
 */
static int srnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct srnic_qp *qp = to_srnic_qp(ibqp);
	struct srnic_qp_snapshot s;
	struct nlattr *table;

	srnic_qp_snapshot(qp, &s);
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (srnic_fill_res_dc(msg, qp))
		goto err_cancel;
	if (rdma_nl_put_driver_u32(msg, "sq_psn", s.sq_psn) ||
	    rdma_nl_put_driver_u32(msg, "una_psn", s.una_psn) ||
	    rdma_nl_put_driver_u32(msg, "epsn", s.epsn) ||
	    rdma_nl_put_driver_u32(msg, "retry_cnt_left", s.retry_left) ||
	    rdma_nl_put_driver_u32(msg, "rnr_retry_left", s.rnr_retry_left) ||
	    rdma_nl_put_driver_u32(msg, "rd_atomic_outstanding",
				   s.rd_outstanding) ||
	    rdma_nl_put_driver_u64(msg, "retransmits", s.retransmits) ||
	    rdma_nl_put_driver_u64(msg, "rate_bytes_per_sec", s.rate) ||
	    rdma_nl_put_driver_u32(msg, "srtt_us", s.srtt_us) ||
	    rdma_nl_put_driver_u32(msg, "rttvar_us", s.rttvar_us) ||
	    rdma_nl_put_driver_u32(msg, "rto_ms", s.rto_ms) ||
	    rdma_nl_put_driver_u32_hex(msg, "udp_sport", s.udp_sport) ||
	    rdma_nl_put_driver_u32_hex(msg, "flow_label", s.flow_label) ||
	    rdma_nl_put_driver_u32(msg, "repaths", s.repaths))
		goto err_cancel;
	nla_nest_end(msg, table);
	return 0;

err_cancel:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

const struct ib_device_ops srnic_counters_ops = {
	.alloc_hw_port_stats = srnic_alloc_hw_port_stats,
	.fill_res_qp_entry = srnic_fill_res_qp_entry,
	.get_hw_stats = srnic_get_hw_stats,
};
