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
/*
 * Field f of event class e sits where struct srnic_probe_e says. (f is a
 * member name; pasting it to the empty __VA_ARGS__ tells checkpatch so.)
 */
#define SRNIC_PROBE_FIELD(e, f, ...)					\
	static_assert(offsetof(struct trace_event_raw_srnic_##e, f) ==	\
		      offsetof(struct srnic_probe_##e, f##__VA_ARGS__))
/* The contract's header is 8 bytes, and the record's fields end at last. */
#define SRNIC_PROBE_END(e, last)					\
	static_assert(sizeof_field(struct srnic_probe_##e, common) == 8 &&	\
		      offsetof(struct trace_event_raw_srnic_##e, __data) ==	\
		      offsetofend(struct srnic_probe_##e, last))

static_assert(sizeof(struct trace_entry) == 8);

SRNIC_PROBE_FIELD(pkt, dev);		/* srnic_pkt_tx, srnic_pkt_rx */
SRNIC_PROBE_FIELD(pkt, qpn);
SRNIC_PROBE_FIELD(pkt, dqpn);
SRNIC_PROBE_FIELD(pkt, psn);
SRNIC_PROBE_FIELD(pkt, len);
SRNIC_PROBE_FIELD(pkt, opcode);
SRNIC_PROBE_END(pkt, opcode);

SRNIC_PROBE_FIELD(retransmit, dev);
SRNIC_PROBE_FIELD(retransmit, qpn);
SRNIC_PROBE_FIELD(retransmit, psn);
SRNIC_PROBE_FIELD(retransmit, cause);
SRNIC_PROBE_END(retransmit, cause);

SRNIC_PROBE_FIELD(nak, dev);
SRNIC_PROBE_FIELD(nak, qpn);
SRNIC_PROBE_FIELD(nak, psn);
SRNIC_PROBE_FIELD(nak, syndrome);
SRNIC_PROBE_FIELD(nak, dir);
SRNIC_PROBE_END(nak, dir);

SRNIC_PROBE_FIELD(cnp, dev);
SRNIC_PROBE_FIELD(cnp, qpn);
SRNIC_PROBE_FIELD(cnp, dir);
SRNIC_PROBE_END(cnp, dir);

SRNIC_PROBE_FIELD(rate, old_rate);
SRNIC_PROBE_FIELD(rate, new_rate);
SRNIC_PROBE_FIELD(rate, target_rate);
SRNIC_PROBE_FIELD(rate, dev);
SRNIC_PROBE_FIELD(rate, qpn);
SRNIC_PROBE_FIELD(rate, alpha);
SRNIC_PROBE_FIELD(rate, reason);
SRNIC_PROBE_END(rate, reason);

SRNIC_PROBE_FIELD(qp_state, dev);
SRNIC_PROBE_FIELD(qp_state, qpn);
SRNIC_PROBE_FIELD(qp_state, old_state);
SRNIC_PROBE_FIELD(qp_state, new_state);
SRNIC_PROBE_END(qp_state, new_state);

SRNIC_PROBE_FIELD(wqe_post, wr_id);
SRNIC_PROBE_FIELD(wqe_post, dev);
SRNIC_PROBE_FIELD(wqe_post, qpn);
SRNIC_PROBE_FIELD(wqe_post, len);
SRNIC_PROBE_FIELD(wqe_post, opcode);
SRNIC_PROBE_END(wqe_post, opcode);

SRNIC_PROBE_FIELD(wqe_done, wr_id);
SRNIC_PROBE_FIELD(wqe_done, dev);
SRNIC_PROBE_FIELD(wqe_done, qpn);
SRNIC_PROBE_FIELD(wqe_done, status);
SRNIC_PROBE_FIELD(wqe_done, opcode);
SRNIC_PROBE_FIELD(wqe_done, is_recv);
SRNIC_PROBE_END(wqe_done, is_recv);

SRNIC_PROBE_FIELD(repath, dev);
SRNIC_PROBE_FIELD(repath, qpn);
SRNIC_PROBE_FIELD(repath, old_sport);
SRNIC_PROBE_FIELD(repath, new_sport);
SRNIC_PROBE_FIELD(repath, cause);
SRNIC_PROBE_END(repath, cause);

SRNIC_PROBE_FIELD(dc_attach, dev);
SRNIC_PROBE_FIELD(dc_attach, dci);
SRNIC_PROBE_FIELD(dc_attach, dct);
SRNIC_PROBE_FIELD(dc_attach, gen);
SRNIC_PROBE_FIELD(dc_attach, gid);
SRNIC_PROBE_END(dc_attach, gid);

SRNIC_PROBE_FIELD(dc_detach, dev);
SRNIC_PROBE_FIELD(dc_detach, dci);
SRNIC_PROBE_FIELD(dc_detach, dct);
SRNIC_PROBE_FIELD(dc_detach, gen);
SRNIC_PROBE_FIELD(dc_detach, cause);
SRNIC_PROBE_END(dc_detach, cause);
#endif /* TRACEPOINTS_ENABLED */
