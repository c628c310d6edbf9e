/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic tracepoints (/sys/kernel/tracing/events/srnic/).
 *
 * The record of every event is a contract with BPF programs and tools:
 * include/uapi/rdma/srnic_probe.h describes each one, field by field, and
 * srnic_trace.c checks at build time that the layouts below match it. Add a
 * field here only together with the matching field there.
 *
 * Arguments are plain values so that the header needs no srnic structure;
 * call sites compute anything costly only under trace_<event>_enabled().
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM srnic

#if !defined(SRNIC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SRNIC_TRACE_H

#include <linux/in6.h>
#include <linux/tracepoint.h>
#include <uapi/rdma/srnic_probe.h>

/* BTH opcodes (IBA 9.2 / <rdma/ib_pack.h>), for TP_printk. */
#define srnic_show_bth_opcode(op)					\
	__print_symbolic(op,						\
		{ 0x00, "RC_SEND_FIRST" }, { 0x01, "RC_SEND_MIDDLE" },	\
		{ 0x02, "RC_SEND_LAST" }, { 0x03, "RC_SEND_LAST_IMM" },	\
		{ 0x04, "RC_SEND_ONLY" }, { 0x05, "RC_SEND_ONLY_IMM" },	\
		{ 0x06, "RC_WRITE_FIRST" }, { 0x07, "RC_WRITE_MIDDLE" },	\
		{ 0x08, "RC_WRITE_LAST" }, { 0x09, "RC_WRITE_LAST_IMM" },	\
		{ 0x0a, "RC_WRITE_ONLY" }, { 0x0b, "RC_WRITE_ONLY_IMM" },	\
		{ 0x0c, "RC_READ_REQUEST" },				\
		{ 0x0d, "RC_READ_RESPONSE_FIRST" },			\
		{ 0x0e, "RC_READ_RESPONSE_MIDDLE" },			\
		{ 0x0f, "RC_READ_RESPONSE_LAST" },			\
		{ 0x10, "RC_READ_RESPONSE_ONLY" },			\
		{ 0x11, "RC_ACKNOWLEDGE" },				\
		{ 0x12, "RC_ATOMIC_ACKNOWLEDGE" },			\
		{ 0x13, "RC_COMPARE_SWAP" }, { 0x14, "RC_FETCH_ADD" },	\
		{ 0x16, "RC_SEND_LAST_INV" }, { 0x17, "RC_SEND_ONLY_INV" }, \
		{ 0x20, "UC_SEND_FIRST" }, { 0x21, "UC_SEND_MIDDLE" },	\
		{ 0x22, "UC_SEND_LAST" }, { 0x23, "UC_SEND_LAST_IMM" },	\
		{ 0x24, "UC_SEND_ONLY" }, { 0x25, "UC_SEND_ONLY_IMM" },	\
		{ 0x26, "UC_WRITE_FIRST" }, { 0x27, "UC_WRITE_MIDDLE" },	\
		{ 0x28, "UC_WRITE_LAST" }, { 0x29, "UC_WRITE_LAST_IMM" },	\
		{ 0x2a, "UC_WRITE_ONLY" }, { 0x2b, "UC_WRITE_ONLY_IMM" },	\
		{ 0x64, "UD_SEND_ONLY" }, { 0x65, "UD_SEND_ONLY_IMM" },	\
		{ 0x81, "CNP" })

/* enum srnic_retx_cause */
#define srnic_show_retx_cause(c)					\
	__print_symbolic(c, { 0, "timeout" }, { 1, "seq_nak" },		\
			 { 2, "rnr_nak" }, { 3, "read_gap" })

/* enum srnic_probe_dir */
#define srnic_show_dir(d)	__print_symbolic(d, { 0, "tx" }, { 1, "rx" })

/* AETH syndrome (IBA 9.3.5): NAK codes and RNR NAK. */
#define srnic_show_nak(syn)						\
	__print_symbolic(syn,						\
		{ 0x60, "psn_seq_err" }, { 0x61, "invalid_request" },	\
		{ 0x62, "remote_access_err" },				\
		{ 0x63, "remote_op_err" },				\
		{ 0x64, "invalid_rd_request" })

/* enum srnic_rate_reason */
#define srnic_show_rate_reason(r)					\
	__print_symbolic(r, { 0, "cnp" }, { 1, "fast_recovery" },	\
			 { 2, "additive" }, { 3, "hyper" }, { 4, "reset" })

/* enum ib_qp_state */
#define srnic_show_qp_state(s)						\
	__print_symbolic(s, { 0, "RESET" }, { 1, "INIT" }, { 2, "RTR" },	\
			 { 3, "RTS" }, { 4, "SQD" }, { 5, "SQE" },	\
			 { 6, "ERR" })

/* enum ib_wr_opcode */
#define srnic_show_wr_opcode(op)					\
	__print_symbolic(op,						\
		{ 0, "RDMA_WRITE" }, { 1, "RDMA_WRITE_IMM" },		\
		{ 2, "SEND" }, { 3, "SEND_IMM" }, { 4, "RDMA_READ" },	\
		{ 5, "CMP_AND_SWP" }, { 6, "FETCH_AND_ADD" },		\
		{ 7, "LOCAL_INV" }, { 8, "BIND_MW" },			\
		{ 9, "SEND_INV" }, { 0x20, "REG_MR" })

/* enum ib_wc_opcode */
#define srnic_show_wc_opcode(op)					\
	__print_symbolic(op,						\
		{ 0, "SEND" }, { 1, "RDMA_WRITE" }, { 2, "RDMA_READ" },	\
		{ 3, "COMP_SWAP" }, { 4, "FETCH_ADD" },			\
		{ 5, "BIND_MW" }, { 6, "LOCAL_INV" }, { 8, "REG_MR" },	\
		{ 0x80, "RECV" }, { 0x81, "RECV_RDMA_WITH_IMM" })

/* enum ib_wc_status: the usual ones by name, the rest by number. */
#define srnic_show_wc_status(s)						\
	__print_symbolic(s,						\
		{ 0, "SUCCESS" }, { 1, "LOC_LEN_ERR" },			\
		{ 2, "LOC_QP_OP_ERR" }, { 4, "LOC_PROT_ERR" },		\
		{ 5, "WR_FLUSH_ERR" }, { 9, "REM_INV_REQ_ERR" },	\
		{ 10, "REM_ACCESS_ERR" }, { 11, "REM_OP_ERR" },		\
		{ 12, "RETRY_EXC_ERR" }, { 13, "RNR_RETRY_EXC_ERR" })

DECLARE_EVENT_CLASS(srnic_pkt,
		    TP_PROTO(u32 dev, u32 qpn, u32 dqpn, u32 psn, u32 len,
			     u8 opcode),
		    TP_ARGS(dev, qpn, dqpn, psn, len, opcode),
		    TP_STRUCT__entry(__field(u32, dev)
				     __field(u32, qpn)
				     __field(u32, dqpn)
				     __field(u32, psn)
				     __field(u32, len)
				     __field(u8, opcode)),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->qpn = qpn;
				   __entry->dqpn = dqpn;
				   __entry->psn = psn;
				   __entry->len = len;
				   __entry->opcode = opcode;),
		    TP_printk("dev=%u qpn=%u dqpn=%u psn=%u len=%u opcode=%s",
			      __entry->dev, __entry->qpn, __entry->dqpn,
			      __entry->psn, __entry->len,
			      srnic_show_bth_opcode(__entry->opcode))
);

/* A RoCEv2 packet handed to the IP stack. */
DEFINE_EVENT(srnic_pkt, srnic_pkt_tx,
	     TP_PROTO(u32 dev, u32 qpn, u32 dqpn, u32 psn, u32 len, u8 opcode),
	     TP_ARGS(dev, qpn, dqpn, psn, len, opcode)
);

/* A RoCEv2 packet accepted (ICRC and header checks passed). */
DEFINE_EVENT(srnic_pkt, srnic_pkt_rx,
	     TP_PROTO(u32 dev, u32 qpn, u32 dqpn, u32 psn, u32 len, u8 opcode),
	     TP_ARGS(dev, qpn, dqpn, psn, len, opcode)
);

/* The requester goes back and sends again from @psn. */
TRACE_EVENT(srnic_retransmit,
	    TP_PROTO(u32 dev, u32 qpn, u32 psn, u8 cause),
	    TP_ARGS(dev, qpn, psn, cause),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u8, cause)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->psn = psn;
			   __entry->cause = cause;),
	    TP_printk("dev=%u qpn=%u psn=%u cause=%s", __entry->dev,
		      __entry->qpn, __entry->psn,
		      srnic_show_retx_cause(__entry->cause))
);

/* A NAK or RNR NAK sent (responder) or received (completer). */
TRACE_EVENT(srnic_nak,
	    TP_PROTO(u32 dev, u32 qpn, u32 psn, u8 syndrome, u8 dir),
	    TP_ARGS(dev, qpn, psn, syndrome, dir),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u8, syndrome)
			     __field(u8, dir)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->psn = psn;
			   __entry->syndrome = syndrome;
			   __entry->dir = dir;),
	    TP_printk("dev=%u qpn=%u psn=%u %s %s syndrome=0x%02x",
		      __entry->dev, __entry->qpn, __entry->psn,
		      srnic_show_dir(__entry->dir),
		      (__entry->syndrome >> 5) == 1 ? "rnr_nak" :
		      srnic_show_nak(__entry->syndrome), __entry->syndrome)
);

/* A CNP sent (notification point, TX) or received (reaction point, RX). */
TRACE_EVENT(srnic_cnp,
	    TP_PROTO(u32 dev, u32 qpn, u8 dir),
	    TP_ARGS(dev, qpn, dir),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, qpn)
			     __field(u8, dir)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->dir = dir;),
	    TP_printk("dev=%u qpn=%u %s", __entry->dev, __entry->qpn,
		      srnic_show_dir(__entry->dir))
);

/* A DCQCN reaction-point rate change; rates in bytes/s, 0 = unpaced. */
TRACE_EVENT(srnic_rate,
	    TP_PROTO(u32 dev, u32 qpn, u64 old_rate, u64 new_rate,
		     u64 target_rate, u32 alpha, u8 reason),
	    TP_ARGS(dev, qpn, old_rate, new_rate, target_rate, alpha, reason),
	    TP_STRUCT__entry(__field(u64, old_rate)
			     __field(u64, new_rate)
			     __field(u64, target_rate)
			     __field(u32, dev)
			     __field(u32, qpn)
			     __field(u32, alpha)
			     __field(u8, reason)),
	    TP_fast_assign(__entry->old_rate = old_rate;
			   __entry->new_rate = new_rate;
			   __entry->target_rate = target_rate;
			   __entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->alpha = alpha;
			   __entry->reason = reason;),
	    TP_printk("dev=%u qpn=%u rate=%llu->%llu target=%llu alpha=%u/1024 reason=%s",
		      __entry->dev, __entry->qpn, __entry->old_rate,
		      __entry->new_rate, __entry->target_rate, __entry->alpha,
		      srnic_show_rate_reason(__entry->reason))
);

/* A QP state transition. */
TRACE_EVENT(srnic_qp_state,
	    TP_PROTO(u32 dev, u32 qpn, u8 old_state, u8 new_state),
	    TP_ARGS(dev, qpn, old_state, new_state),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, qpn)
			     __field(u8, old_state)
			     __field(u8, new_state)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->old_state = old_state;
			   __entry->new_state = new_state;),
	    TP_printk("dev=%u qpn=%u %s->%s", __entry->dev, __entry->qpn,
		      srnic_show_qp_state(__entry->old_state),
		      srnic_show_qp_state(__entry->new_state))
);

/* The requester takes a send WQE from the send queue. */
TRACE_EVENT(srnic_wqe_post,
	    TP_PROTO(u32 dev, u32 qpn, u64 wr_id, u32 len, u8 opcode),
	    TP_ARGS(dev, qpn, wr_id, len, opcode),
	    TP_STRUCT__entry(__field(u64, wr_id)
			     __field(u32, dev)
			     __field(u32, qpn)
			     __field(u32, len)
			     __field(u8, opcode)),
	    TP_fast_assign(__entry->wr_id = wr_id;
			   __entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->len = len;
			   __entry->opcode = opcode;),
	    TP_printk("dev=%u qpn=%u wr_id=0x%llx len=%u opcode=%s",
		      __entry->dev, __entry->qpn, __entry->wr_id, __entry->len,
		      srnic_show_wr_opcode(__entry->opcode))
);

/* A completion is posted to a CQ (status != 0: an error completion). */
TRACE_EVENT(srnic_wqe_done,
	    TP_PROTO(u32 dev, u32 qpn, u64 wr_id, u8 status, u8 opcode,
		     u8 is_recv),
	    TP_ARGS(dev, qpn, wr_id, status, opcode, is_recv),
	    TP_STRUCT__entry(__field(u64, wr_id)
			     __field(u32, dev)
			     __field(u32, qpn)
			     __field(u8, status)
			     __field(u8, opcode)
			     __field(u8, is_recv)),
	    TP_fast_assign(__entry->wr_id = wr_id;
			   __entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->status = status;
			   __entry->opcode = opcode;
			   __entry->is_recv = is_recv;),
	    TP_printk("dev=%u qpn=%u wr_id=0x%llx %s opcode=%s status=%s",
		      __entry->dev, __entry->qpn, __entry->wr_id,
		      __entry->is_recv ? "rq" : "sq",
		      srnic_show_wc_opcode(__entry->opcode),
		      srnic_show_wc_status(__entry->status))
);

/*
 * An RC QP's packets move to a new UDP source port (re-pathing): after
 * timeouts without progress, or following its peer's move.
 */
TRACE_EVENT(srnic_repath,
	    TP_PROTO(u32 dev, u32 qpn, u16 old_sport, u16 new_sport, u8 cause),
	    TP_ARGS(dev, qpn, old_sport, new_sport, cause),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, qpn)
			     __field(u16, old_sport)
			     __field(u16, new_sport)
			     __field(u8, cause)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->qpn = qpn;
			   __entry->old_sport = old_sport;
			   __entry->new_sport = new_sport;
			   __entry->cause = cause;),
	    TP_printk("dev=%u qpn=%u sport=0x%04x->0x%04x cause=%s",
		      __entry->dev, __entry->qpn, __entry->old_sport,
		      __entry->new_sport,
		      __print_symbolic(__entry->cause, { 0, "timeout" },
				       { 1, "peer" }))
);

/*
 * DC (srnic_dct.c): a DCT made an attachment for initiator @dci at @gid
 * (IPv6, or IPv4 v4-mapped), generation @gen.
 */
TRACE_EVENT(srnic_dc_attach,
	    TP_PROTO(u32 dev, u32 dci, u32 dct, u32 gen,
		     const struct in6_addr *gid),
	    TP_ARGS(dev, dci, dct, gen, gid),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, dci)
			     __field(u32, dct)
			     __field(u32, gen)
			     __array(u8, gid, 16)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->dci = dci;
			   __entry->dct = dct;
			   __entry->gen = gen;
			   memcpy(__entry->gid, gid, 16);),
	    TP_printk("dev=%u dci=%u dct=%u gen=%u gid=%pI6c", __entry->dev,
		      __entry->dci, __entry->dct, __entry->gen, __entry->gid)
);

/* DC: a DCT let go of an attachment; @cause: enum srnic_dc_cause. */
TRACE_EVENT(srnic_dc_detach,
	    TP_PROTO(u32 dev, u32 dci, u32 dct, u32 gen, u8 cause),
	    TP_ARGS(dev, dci, dct, gen, cause),
	    TP_STRUCT__entry(__field(u32, dev)
			     __field(u32, dci)
			     __field(u32, dct)
			     __field(u32, gen)
			     __field(u8, cause)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->dci = dci;
			   __entry->dct = dct;
			   __entry->gen = gen;
			   __entry->cause = cause;),
	    TP_printk("dev=%u dci=%u dct=%u gen=%u cause=%s", __entry->dev,
		      __entry->dci, __entry->dct, __entry->gen,
		      __print_symbolic(__entry->cause, { 0, "detach" },
				       { 1, "idle" }, { 2, "lru" },
				       { 3, "replaced" }, { 4, "destroy" }))
);

#endif /* SRNIC_TRACE_H */

/* Out-of-tree module: define_trace.h finds this file through -I kernel/. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE srnic_trace

#include <trace/define_trace.h>
