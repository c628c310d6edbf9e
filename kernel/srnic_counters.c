// SPDX-License-Identifier: GPL-2.0
/*
 * srnic counters through ib_core's hw_counters: "rdma statistic show link
 * srnic0/1" and /sys/class/infiniband/<dev>/ports/1/hw_counters/<name>.
 */
#include <rdma/ib_verbs.h>

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
	[SRNIC_CNT_READ_GAP_RETRY].name = "read_gap_retries",
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

const struct ib_device_ops srnic_counters_ops = {
	.alloc_hw_port_stats = srnic_alloc_hw_port_stats,
	.get_hw_stats = srnic_get_hw_stats,
};
