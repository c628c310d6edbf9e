// SPDX-License-Identifier: GPL-2.0
/*
 * srnic tracepoints: instantiation, and the build-time check that every
 * event record is laid out exactly as include/uapi/rdma/srnic_probe.h says,
 * which is what BPF programs read.
 */
#include <linux/build_bug.h>
#include <linux/stddef.h>

#include <uapi/rdma/srnic_probe.h>

#define CREATE_TRACE_POINTS
#include "srnic_trace.h"

/*
 * A record is the 8-byte common header (struct trace_entry), then the
 * fields. Each field must sit at the contract's offset, and the record's
 * fields must end where the contract's last field ends: together that
 * pins every field's size too. (The contract structs are padded to 8 bytes
 * by their __u64 header; the record may be shorter, BPF reads fields only.)
 * srnic_pkt_tx and srnic_pkt_rx share their class's record, srnic_pkt.
 */
#ifdef TRACEPOINTS_ENABLED	/* else no records (e.g. the UML KUnit build) */
static_assert(sizeof(struct trace_entry) == 8);

/* srnic_pkt_tx, srnic_pkt_rx */
static_assert(sizeof_field(struct srnic_probe_pkt, common) == 8);
static_assert(offsetof(struct trace_event_raw_srnic_pkt, dev) ==
	      offsetof(struct srnic_probe_pkt, dev));
static_assert(offsetof(struct trace_event_raw_srnic_pkt, qpn) ==
	      offsetof(struct srnic_probe_pkt, qpn));
static_assert(offsetof(struct trace_event_raw_srnic_pkt, dqpn) ==
	      offsetof(struct srnic_probe_pkt, dqpn));
static_assert(offsetof(struct trace_event_raw_srnic_pkt, psn) ==
	      offsetof(struct srnic_probe_pkt, psn));
static_assert(offsetof(struct trace_event_raw_srnic_pkt, len) ==
	      offsetof(struct srnic_probe_pkt, len));
static_assert(offsetof(struct trace_event_raw_srnic_pkt, opcode) ==
	      offsetof(struct srnic_probe_pkt, opcode));
static_assert(offsetof(struct trace_event_raw_srnic_pkt, __data) ==
	      offsetofend(struct srnic_probe_pkt, opcode));

/* srnic_retransmit */
static_assert(sizeof_field(struct srnic_probe_retransmit, common) == 8);
static_assert(offsetof(struct trace_event_raw_srnic_retransmit, dev) ==
	      offsetof(struct srnic_probe_retransmit, dev));
static_assert(offsetof(struct trace_event_raw_srnic_retransmit, qpn) ==
	      offsetof(struct srnic_probe_retransmit, qpn));
static_assert(offsetof(struct trace_event_raw_srnic_retransmit, psn) ==
	      offsetof(struct srnic_probe_retransmit, psn));
static_assert(offsetof(struct trace_event_raw_srnic_retransmit, cause) ==
	      offsetof(struct srnic_probe_retransmit, cause));
static_assert(offsetof(struct trace_event_raw_srnic_retransmit, __data) ==
	      offsetofend(struct srnic_probe_retransmit, cause));

/* srnic_nak */
static_assert(sizeof_field(struct srnic_probe_nak, common) == 8);
static_assert(offsetof(struct trace_event_raw_srnic_nak, dev) ==
	      offsetof(struct srnic_probe_nak, dev));
static_assert(offsetof(struct trace_event_raw_srnic_nak, qpn) ==
	      offsetof(struct srnic_probe_nak, qpn));
static_assert(offsetof(struct trace_event_raw_srnic_nak, psn) ==
	      offsetof(struct srnic_probe_nak, psn));
static_assert(offsetof(struct trace_event_raw_srnic_nak, syndrome) ==
	      offsetof(struct srnic_probe_nak, syndrome));
static_assert(offsetof(struct trace_event_raw_srnic_nak, dir) ==
	      offsetof(struct srnic_probe_nak, dir));
static_assert(offsetof(struct trace_event_raw_srnic_nak, __data) ==
	      offsetofend(struct srnic_probe_nak, dir));

/* srnic_cnp */
static_assert(sizeof_field(struct srnic_probe_cnp, common) == 8);
static_assert(offsetof(struct trace_event_raw_srnic_cnp, dev) ==
	      offsetof(struct srnic_probe_cnp, dev));
static_assert(offsetof(struct trace_event_raw_srnic_cnp, qpn) ==
	      offsetof(struct srnic_probe_cnp, qpn));
static_assert(offsetof(struct trace_event_raw_srnic_cnp, dir) ==
	      offsetof(struct srnic_probe_cnp, dir));
static_assert(offsetof(struct trace_event_raw_srnic_cnp, __data) ==
	      offsetofend(struct srnic_probe_cnp, dir));

/* srnic_rate */
static_assert(sizeof_field(struct srnic_probe_rate, common) == 8);
static_assert(offsetof(struct trace_event_raw_srnic_rate, old_rate) ==
	      offsetof(struct srnic_probe_rate, old_rate));
static_assert(offsetof(struct trace_event_raw_srnic_rate, new_rate) ==
	      offsetof(struct srnic_probe_rate, new_rate));
static_assert(offsetof(struct trace_event_raw_srnic_rate, target_rate) ==
	      offsetof(struct srnic_probe_rate, target_rate));
static_assert(offsetof(struct trace_event_raw_srnic_rate, dev) ==
	      offsetof(struct srnic_probe_rate, dev));
static_assert(offsetof(struct trace_event_raw_srnic_rate, qpn) ==
	      offsetof(struct srnic_probe_rate, qpn));
static_assert(offsetof(struct trace_event_raw_srnic_rate, alpha) ==
	      offsetof(struct srnic_probe_rate, alpha));
static_assert(offsetof(struct trace_event_raw_srnic_rate, reason) ==
	      offsetof(struct srnic_probe_rate, reason));
static_assert(offsetof(struct trace_event_raw_srnic_rate, __data) ==
	      offsetofend(struct srnic_probe_rate, reason));

/* srnic_qp_state */
static_assert(sizeof_field(struct srnic_probe_qp_state, common) == 8);
static_assert(offsetof(struct trace_event_raw_srnic_qp_state, dev) ==
	      offsetof(struct srnic_probe_qp_state, dev));
static_assert(offsetof(struct trace_event_raw_srnic_qp_state, qpn) ==
	      offsetof(struct srnic_probe_qp_state, qpn));
static_assert(offsetof(struct trace_event_raw_srnic_qp_state, old_state) ==
	      offsetof(struct srnic_probe_qp_state, old_state));
static_assert(offsetof(struct trace_event_raw_srnic_qp_state, new_state) ==
	      offsetof(struct srnic_probe_qp_state, new_state));
static_assert(offsetof(struct trace_event_raw_srnic_qp_state, __data) ==
	      offsetofend(struct srnic_probe_qp_state, new_state));

/* srnic_wqe_post */
static_assert(sizeof_field(struct srnic_probe_wqe_post, common) == 8);
static_assert(offsetof(struct trace_event_raw_srnic_wqe_post, wr_id) ==
	      offsetof(struct srnic_probe_wqe_post, wr_id));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_post, dev) ==
	      offsetof(struct srnic_probe_wqe_post, dev));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_post, qpn) ==
	      offsetof(struct srnic_probe_wqe_post, qpn));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_post, len) ==
	      offsetof(struct srnic_probe_wqe_post, len));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_post, opcode) ==
	      offsetof(struct srnic_probe_wqe_post, opcode));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_post, __data) ==
	      offsetofend(struct srnic_probe_wqe_post, opcode));

/* srnic_wqe_done */
static_assert(sizeof_field(struct srnic_probe_wqe_done, common) == 8);
static_assert(offsetof(struct trace_event_raw_srnic_wqe_done, wr_id) ==
	      offsetof(struct srnic_probe_wqe_done, wr_id));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_done, dev) ==
	      offsetof(struct srnic_probe_wqe_done, dev));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_done, qpn) ==
	      offsetof(struct srnic_probe_wqe_done, qpn));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_done, status) ==
	      offsetof(struct srnic_probe_wqe_done, status));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_done, opcode) ==
	      offsetof(struct srnic_probe_wqe_done, opcode));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_done, is_recv) ==
	      offsetof(struct srnic_probe_wqe_done, is_recv));
static_assert(offsetof(struct trace_event_raw_srnic_wqe_done, __data) ==
	      offsetofend(struct srnic_probe_wqe_done, is_recv));
#endif /* TRACEPOINTS_ENABLED */
