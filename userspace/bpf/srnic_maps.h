/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Map keys and values shared by the srnic BPF programs (*.bpf.c) and srnicctl, which
 * reads the maps (ctl/top.cpp, ctl/lat.cpp). C, so that both sides include it.
 */
#ifndef SRNIC_MAPS_H
#define SRNIC_MAPS_H

#include <linux/types.h>

/* srnic_top: per-QP totals since the programs were attached. */
struct srnic_qp_key {
	__u32 dev;	/* ib_device index */
	__u32 qpn;
};

struct srnic_qp_stats {
	__u64 tx_bytes;		/* payload bytes (srnic_pkt_tx.len) */
	__u64 tx_pkts;
	__u64 rx_bytes;
	__u64 rx_pkts;
	__u64 retransmits;	/* srnic_retransmit events */
	__u64 naks_tx;
	__u64 naks_rx;
	__u64 cnps_tx;		/* notification point sent one */
	__u64 cnps_rx;		/* reaction point got one */
	__u64 rate;		/* new_rate of the last srnic_rate event, bytes/s */
	__u64 rate_events;
};

/* srnic_lat: log2 histogram of WQE post-to-completion latency in microseconds. */
#define SRNIC_LAT_SLOTS 27

struct srnic_wqe_key {
	__u64 wr_id;
	__u32 dev;
	__u32 qpn;
};

struct srnic_lat_hist {
	__u64 slots[SRNIC_LAT_SLOTS];	/* slot i: [2^i, 2^(i+1)) us; slot 0 also 0 */
	__u64 count;
	__u64 sum_ns;
	__u64 unmatched;		/* completions with no recorded post */
};

#endif /* SRNIC_MAPS_H */
