/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic queue pairs: the QP and its send WQEs, shared by the QP verbs
 * (srnic_qp.c), the QP core (srnic_qp_core.c) and the transport (the
 * prototypes of its files: srnic_transport.h).
 *
 * Contexts
 * --------
 * - verbs calls (create/modify/destroy, post_send/post_recv, the user
 *   doorbell) run in process context;
 * - received packets are processed in softirq, in the UDP encap receive hook
 *   (srnic_recv.c): requests by the responder, responses and ACKs by the
 *   completer, both inline;
 * - the transmit side of a QP (new requests, retransmissions, RDMA READ
 *   responses) is the TX scheduler's (srnic_sched.c): runs from one work
 *   item per QP (qp->tx_work) on srnic_wq, so that everything a QP puts on
 *   the wire is serialised in one place where it can be paced; the user
 *   doorbell runs it inline instead when it is idle, which saves a context
 *   switch per post. It runs on one CPU at a time, the QP's owner, so that
 *   one QP's packets stay in PSN order (srnic_sched_claim_cpu()).
 */
#ifndef SRNIC_QP_H
#define SRNIC_QP_H

#include <linux/bitmap.h>
#include <linux/hrtimer.h>
#include <linux/in6.h>
#include <linux/interrupt.h>
#include <linux/refcount.h>
#include <linux/smp.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "srnic_av.h"
#include "srnic_dcqcn.h"
#include "srnic_sched.h"

/*
 * READ/atomic requests a DCI may have in flight, and the replay entries of
 * each DCT attachment (docs/dc.md).
 */
#define SRNIC_DC_RD_ATOMIC	16

/* QP numbers 0 and 1 are the special QPs; ordinary QPs start here. */
#define SRNIC_QPN_MIN		16

/*
 * Packets past a hole that a QP keeps - READ responses on the requester
 * side, the MIDDLE packets of a SEND or WRITE on the responder side: it
 * places them and remembers them in a bitmap of this many bits (128 bytes
 * per side), a 1 MiB message at a 1024-byte path MTU.
 */
#define SRNIC_OOO_WIN	1024

/*
 * The packets past a hole one side of a QP keeps: bit i stands for PSN
 * @psn + i, @psn being the next one due in order (never set itself).
 */
struct srnic_ooo {
	u32			psn;
	DECLARE_BITMAP(map, SRNIC_OOO_WIN);
};

struct srnic_dev;
struct srnic_cq;
struct srnic_srq;

/* Send WQE progress, kept in the kernel's shadow copy only. */
enum srnic_wqe_state {
	SRNIC_WQE_POSTED,	/* copied and validated, nothing sent */
	SRNIC_WQE_SENDING,	/* some packets sent */
	SRNIC_WQE_SENT,		/* every packet sent, waiting for the ACK/response */
	SRNIC_WQE_DONE,		/* completed (or flushed); slot can be retired */
};

/**
 * struct srnic_send_wqe - kernel copy of one send work request
 *
 * User QPs write rxe_send_wqe entries into the mmap'd SQ ring; the requester
 * copies each one ONCE into this shadow (same slot index) and validates it
 * there; the ring entry is never read again. Kernel QPs build it from the
 * ib_send_wr in post_send. The flexible tail holds the SGEs or inline data.
 */
struct srnic_send_wqe {
	u64			wr_id;
	u32			opcode;		/* IB_WR_* */
	u32			send_flags;	/* IB_SEND_* */
	u32			ex;		/* imm (raw __be32) or invalidate rkey */
	u32			length;		/* total payload bytes */
	u64			remote_addr;
	u32			rkey;
	u32			num_sge;
	u64			compare_add;
	u64			swap;
	/* UD/GSI */
	u32			remote_qpn;
	u32			remote_qkey;
	u32			xrc_srqn;	/* XRC: the target's SRQ */
	u64			dc_key;		/* DCI: the DCT's access key */
	bool			dc_started;	/* DCI: counted once */
	u16			pkey_index;
	struct srnic_av		av;
	/* IB_WR_REG_MR */
	struct ib_mr		*reg_mr;
	u32			reg_key;
	int			reg_access;
	/* IB_WR_BIND_MW */
	u64			mw_addr;
	u64			mw_length;
	u32			mw_lkey;
	u32			mw_rkey;
	u32			mw_new_rkey;
	int			mw_access;
	/* progress */
	enum srnic_wqe_state	state;
	enum ib_wc_status	status;
	u32			first_psn;
	u32			last_psn;
	u32			sent;		/* payload bytes sent so far */
	u32			acked_bytes;	/* READ: response bytes placed */
	bool			is_inline;
	union {
		DECLARE_FLEX_ARRAY(struct ib_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/*
 * One entry of the responder's RDMA READ / ATOMIC replay table. A READ's
 * responses are built (and replayed) after the request, its R_Key checked
 * again each time in @pd: the QP's, or an XRC target's the PD of the XRC
 * SRQ the request named, which may be destroyed meanwhile, and its PD
 * with it. @pd is only compared, never dereferenced: an MR that matches
 * it holds that PD, whose serial then tells whether it is @pd_serial's or
 * a later PD at the same address (srnic_resp_build()).
 */
struct srnic_rd_atomic {
	bool			valid;
	bool			is_atomic;
	u32			psn;		/* PSN of the request */
	u32			last_psn;	/* PSN of its last response */
	u64			va;
	u32			rkey;
	u32			length;
	struct ib_pd		*pd;		/* READ: where @rkey is */
	u64			pd_serial;	/* srnic_pd_serial() of @pd */
	u64			atomic_orig;	/* value returned by the atomic */
	u8			atomic_status;	/* AETH syndrome of the atomic */
	bool			sent;		/* every response left once */
};

/**
 * enum srnic_dc_kind - what a QP is to the DC transport (docs/dc.md)
 * @SRNIC_DC_NONE: not a DC QP
 * @SRNIC_DC_DCI: a DC initiator (IB_QPT_DRIVER, native mode)
 * @SRNIC_DC_DCT: a DC target (IB_QPT_DRIVER, native mode): answers from its
 *	attachments, never from a queue of its own
 * @SRNIC_DC_ATT: the RC responder of one attachment of a DCT (srnic_dct.c),
 *	made by the kernel, never seen by ib_core or a user
 */
enum srnic_dc_kind {
	SRNIC_DC_NONE,
	SRNIC_DC_DCI,
	SRNIC_DC_DCT,
	SRNIC_DC_ATT,
};

/**
 * struct srnic_dci - a DC initiator's attachment (srnic_dci.c), under the
 *	QP's req_lock
 * @attached: the fields below name the current attachment
 * @confirmed: a response of this generation came: the target has it, and
 *	requests after the ATTACH packet may go
 * @gen: the attachment generation (goes up with every attachment)
 * @dctn: the target's DCT number
 * @key: the target's access key
 * @attach_psn: the attachment's first PSN (its ATTACH packet's)
 */
struct srnic_dci {
	bool			attached;
	bool			confirmed;
	u32			gen;
	u32			dctn;
	u64			key;
	u32			attach_psn;
};

struct srnic_dct;
struct srnic_dc_att;

/**
 * struct srnic_qp - a queue pair
 *
 * Locks (outermost first):
 * @state_lock: protects @attr, @state and the fields changed by modify_qp;
 *	taken in process and softirq context (bh-safe)
 * @sq_lock: protects the kernel producer side of @sq (kernel post_send)
 * @rq_lock: protects @rq's producer (kernel post_recv) and consumer
 *	(responder) sides
 * @req_lock: protects the requester/completer state (@req); both run under
 *	it, from the tx work item, the receive softirq and the timers
 * @resp_lock: protects the responder state (@resp)
 * @path_lock: innermost; protects the writers of @src_port, @flow_label,
 *	@peer_sport and @repaths (srnic_qp_core.c); the data path reads the
 *	first two without it (READ_ONCE)
 * @rx_lock: innermost; protects the choice of @rx_cpu against @rx_queued
 *	(srnic_recv.c, receive steering): @rx_cpu changes only while no
 *	packet of the QP is queued for steering, and @rx_queued goes up only
 *	under it (it goes down, atomically, without it)
 */
struct srnic_qp {
	struct ib_qp		ibqp;
	struct srnic_dev	*sdev;
	refcount_t		ref;		/* lookups by QPN (RX path) */
	struct completion	released;	/* @ref reached zero */
	bool			is_user;
	bool			mcast_used;	/* ever attached to a group */
	u8			dc;		/* enum srnic_dc_kind */
	struct srnic_dct	*dct;		/* DCT: its attachments */
	struct srnic_dc_att	*att;		/* SRNIC_DC_ATT: its own */
	struct srnic_dci	dci;		/* DCI, under @req_lock */

	spinlock_t		state_lock;	/* see above */
	enum ib_qp_state	state;
	struct ib_qp_attr	attr;		/* as last modified */
	bool			sq_sig_all;
	spinlock_t		path_lock;	/* see above */
	u16			src_port;	/* UDP source port */
	u32			flow_label;	/* RC/UC: IPv6 flow label, 0: the AV's */
	u16			peer_sport;	/* RC: the peer's, last seen */
	u32			repaths;	/* RC: new source ports taken */
	struct srnic_av		av;		/* RC/UC: the path */
	struct dst_cache	dst_cache;	/* RC/UC route cache */

	/* receive steering to the consumer's CPU (srnic_recv.c) */
	struct task_struct	*rx_task;	/* consumer; NULL: kernel QP */
	spinlock_t		rx_lock;	/* see above */
	int			rx_cpu;		/* where @rx_queued wait */
	atomic_t		rx_queued;	/* packets steered, not yet run */

	struct srnic_cq		*scq;
	struct srnic_cq		*rcq;
	struct srnic_srq	*srq;
	struct ib_xrcd		*xrcd;		/* XRC target: its domain */

	/* send queue: user ring (or kernel ring) + kernel shadow copies */
	spinlock_t		sq_lock;	/* see above */
	struct srnic_queue	sq;
	struct srnic_send_wqe	*swqe;		/* shadow, one per SQ slot */
	u32			swqe_size;	/* bytes per shadow entry */
	u32			max_send_sge;
	u32			max_inline;

	/* receive queue (absent with an SRQ) */
	spinlock_t		rq_lock;	/* see above */
	struct srnic_queue	rq;
	u32			max_recv_sge;

	/* requester + completer */
	spinlock_t		req_lock;	/* see above */
	struct {
		u32		fetch;		/* next SQ slot to copy from the ring */
		u32		cur;		/* next slot to transmit from */
		u32		oldest;		/* oldest slot not yet completed */
		u32		psn;		/* next PSN to send */
		u32		max_psn;	/* first PSN never sent */
		u32		acked_psn;	/* all PSNs before this are acked */
		u32		rd_outstanding;	/* READ/ATOMIC requests in flight */
		u32		retry_left;
		u32		rnr_retry_left;
		bool		need_retry;	/* rewind to @oldest and resend */
		u8		retx_cause;	/* why: enum srnic_retx_cause */
		bool		gap_valid;	/* @gap_psn is set */
		u32		gap_psn;	/* READ gap asked for (once) */
		unsigned long	gap_jiffies;	/* when it was asked for */
		/*
		 * Responses of the oldest unanswered READ that came ahead
		 * of a hole, placed already (srnic_comp_read_ahead()).
		 */
		struct srnic_ooo ooo;
		bool		rnr_wait;	/* stopped until the RNR timer */
		bool		stopped;	/* fatal error: no more transmit */
		u32		msn;		/* last MSN seen in an ACK */
		u32		since_ackreq;	/* packets sent without AckReq */
		u64		ackreq_ns;	/* last AckReq (DCQCN active) */
		u64		retransmits;	/* WQEs sent again (go-back-N) */
		unsigned long	timer_due;	/* when retrans_timer should fire */
		u8		timer_graces;	/* times put off since armed */
		/*
		 * What the peer owes an answer for (srnic_req_owe()): a
		 * packet sent with AckReq, a READ or an atomic request, up
		 * to @owed_psn, unanswered since @owed_since (jiffies; moved
		 * on by each answer to new PSNs). @last_tx: when the stack
		 * took the last request packet (written by the QP's
		 * transmit run alone, after it lets go of req_lock).
		 */
		bool		owed;
		u32		owed_psn;
		unsigned long	owed_since;
		unsigned long	last_tx;
		/*
		 * The last packet sent ended an unsignaled message without
		 * AckReq (srnic_req_ackreq()): @unasked, the WQE at
		 * @unasked_idx. If nothing follows it, it is sent again
		 * asking for one (@probe_due, then @probe for its packet;
		 * srnic_req_probe()).
		 */
		bool		unasked;
		bool		probe_due;
		bool		probe;
		u32		unasked_idx;
		/*
		 * The round trip, measured one packet at a time, and the
		 * timeout it gives (srnic_req_timeout()): smoothed and
		 * variation in µs (0: nothing measured yet), and the
		 * backoff, doubled by each timeout until the next sample.
		 */
		bool		rtt_timing;	/* @rtt_psn waits for its answer */
		u8		rto_shift;	/* timeout << this */
		u32		rtt_psn;	/* the packet being timed */
		u64		rtt_start_ns;	/* when it was sent */
		u32		srtt_us;
		u32		rttvar_us;
		/*
		 * Re-pathing (srnic_req_repath()): timeouts and re-paths
		 * since the last forward progress.
		 */
		u8		stall_timeouts;
		u8		stall_repaths;
	} req;
	struct timer_list	retrans_timer;
	struct timer_list	rnr_timer;

	/*
	 * Transmit pacing (token bucket), under @req_lock: every packet the
	 * QP sends as a requester waits for its bytes' worth of tokens.
	 * @rate is bytes/s, 0 = unpaced. Set by IB_QP_RATE_LIMIT today and
	 * by congestion control (DCQCN) next.
	 */
	struct {
		u64		rate;
		u64		tokens;		/* bytes, at most @burst */
		u64		burst;
		ktime_t		last;		/* when @tokens was computed */
		struct hrtimer	timer;		/* wakes the TX side */
	} pace;

	/* DCQCN reaction point (srnic_cnp.c), under @req_lock */
	struct srnic_dcqcn_rp	dcqcn;
	/* DCQCN notification point: when the last CNP went out (cmpxchg) */
	u64			cnp_last_ns;

	/* responder */
	spinlock_t		resp_lock;	/* see above */
	struct {
		u32		epsn;		/* expected PSN */
		u32		msn;		/* completed messages */
		bool		nak_sent;	/* PSN seq NAK outstanding */
		bool		fatal;		/* move the QP to ERR after */
		bool		kick;		/* run the TX side after */
		bool		in_msg;		/* a multi-packet message is open */
		bool		has_wqe;	/* @wqe holds an RQ entry */
		u32		wqe_offset;	/* bytes placed into @wqe */
		u64		write_va;	/* open RDMA WRITE: next VA */
		u32		write_rkey;
		u32		write_resid;
		u8		last_opcode;
		u32		ack_pending;	/* packets received since last ACK */
		/*
		 * MIDDLE packets of the open message that came ahead of a
		 * hole, placed already (srnic_resp_ahead()).
		 */
		struct srnic_ooo ooo;
		struct srnic_rd_atomic *rd;	/* max_dest_rd_atomic entries */
		u32		rd_count;
		u32		rd_next;	/* next entry to overwrite */
		/* READ/atomic responses still to send: @rd[tx_head..rd_next) */
		u32		tx_head;	/* entry being answered */
		u32		tx_sent;	/* bytes of it sent */
		bool		tx_busy;	/* responses queued */
		bool		ack_deferred;	/* send an ACK after them */
		u32		ack_psn;	/* PSN of that ACK */
		u8		ack_syn;	/* and its syndrome */
		/*
		 * XRC target: the SRQ the XRCETH of the packet being
		 * handled names (a reference, NULL outside
		 * srnic_resp_rcv()), and the number of the SRQ @wqe came
		 * from (0: none), for a flush.
		 */
		struct srnic_srq *xsrq;
		u32		xsrqn;
	} resp;
	struct srnic_recv_wqe_copy *wqe;	/* responder's open receive WQE */

	/* the QP's transmit side: the TX scheduler's (srnic_sched.c) */
	const struct srnic_producer *producers[SRNIC_SCHED_PRODUCERS];
	struct work_struct	tx_work;	/* runs the TX side */
	unsigned long		tx_flags;	/* SRNIC_TX_* bits */
	int			tx_cpu;		/* owner CPU, -1: none yet */
	call_single_data_t	tx_csd;		/* hands the TX side to it */
	atomic_t		tx_skbs;	/* in the stack (backpressure) */
	struct tasklet_struct	tx_tasklet;	/* kick at the low mark */
};

static inline bool srnic_wr_is_atomic(u32 opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* Work requests answered by a response, not an ACK: READ and atomics. */
static inline bool srnic_wr_is_read_atomic(u32 opcode)
{
	return opcode == IB_WR_RDMA_READ || srnic_wr_is_atomic(opcode);
}

/*
 * Is the packet @d PSNs past @expect (the next one due) kept already? What
 * @ooo keeps for another next-due PSN belongs to another message, or to
 * one gone back to: it is forgotten.
 */
static inline bool srnic_ooo_has(struct srnic_ooo *ooo, u32 expect, u32 d)
{
	if (ooo->psn != expect) {
		bitmap_zero(ooo->map, SRNIC_OOO_WIN);
		ooo->psn = expect;
	}
	return test_bit(d, ooo->map);
}

/* Keep the packet srnic_ooo_has() was asked about (once it is placed). */
static inline void srnic_ooo_set(struct srnic_ooo *ooo, u32 d)
{
	__set_bit(d, ooo->map);
}

/*
 * The packet at @psn was taken in order. Returns how many packets that
 * makes taken: 1, plus those kept right after it when @follow (the same
 * message goes on); they are forgotten, and so is everything when not.
 */
static inline u32 srnic_ooo_advance(struct srnic_ooo *ooo, u32 psn,
				    bool follow)
{
	u32 n = 1;

	if (follow && ooo->psn == psn) {
		n = find_next_zero_bit(ooo->map, SRNIC_OOO_WIN, 1);
		bitmap_shift_right(ooo->map, ooo->map, n, SRNIC_OOO_WIN);
	} else {
		bitmap_zero(ooo->map, SRNIC_OOO_WIN);
	}
	ooo->psn = srnic_psn_add(psn, n);
	return n;
}

static inline struct srnic_qp *to_srnic_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct srnic_qp, ibqp);
}

/*
 * RC, or one of XRC's halves: acknowledged, retried, sequenced as RC
 * (the requester of an XRC initiator, the responder of an XRC target), or
 * a DC initiator (RC's requester; a DCT's responders are RC QPs).
 */
static inline bool srnic_qp_reliable(const struct srnic_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT ||
	       qp->dc == SRNIC_DC_DCI;
}

/* A DC initiator: RC's requester, its destination from each WQE. */
static inline bool srnic_qp_is_dci(const struct srnic_qp *qp)
{
	return qp->dc == SRNIC_DC_DCI;
}

static inline u32 srnic_qpn(const struct srnic_qp *qp)
{
	return qp->ibqp.qp_num;
}

static inline struct srnic_send_wqe *srnic_swqe(struct srnic_qp *qp, u32 index)
{
	return (void *)qp->swqe + (size_t)index * qp->swqe_size;
}

/* Does @wqe complete with a work completion when it succeeds? */
static inline bool srnic_wqe_signaled(const struct srnic_qp *qp,
				      const struct srnic_send_wqe *wqe)
{
	return qp->sq_sig_all || (wqe->send_flags & IB_SEND_SIGNALED);
}

/* srnic_qp.c: the QP verbs */
extern const struct ib_device_ops srnic_qp_ops;

/* srnic_qp_core.c */
struct srnic_qp *srnic_qp_get(struct srnic_dev *sdev, u32 qpn);
void srnic_qp_put(struct srnic_qp *qp);
void srnic_qp_error(struct srnic_qp *qp);
void srnic_qp_flush(struct srnic_qp *qp);
void srnic_qp_set_path(struct srnic_qp *qp);
void srnic_qp_repath(struct srnic_qp *qp);
void srnic_qp_peer_sport(struct srnic_qp *qp, u16 sport, u32 flow_label);

static inline enum ib_qp_state srnic_qp_state(struct srnic_qp *qp)
{
	return READ_ONCE(qp->state);
}

#endif /* SRNIC_QP_H */
