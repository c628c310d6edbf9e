/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic TX scheduler (srnic_sched.c): the one place a QP's packets are
 * sent from. Each QP has producers - the responder (READ responses, atomic
 * and deferred ACKs) and the requester (requests, retransmissions) -
 * registered on it when it is created (qp->producers, responder first: its
 * packets answer the peer and must not wait behind a train of requests).
 * A run of the scheduler asks each producer in turn for packets; anything
 * may ask for a run (srnic_sched_kick(), srnic_sched_kick_now()) without
 * knowing who produces, as with a work_struct.
 */
#ifndef SRNIC_SCHED_H
#define SRNIC_SCHED_H

#include <linux/types.h>

struct sk_buff;
struct srnic_av;
struct srnic_qp;

/**
 * struct srnic_tx_run - one run of a QP's TX side, on one CPU
 * @qp: the QP
 * @budget: packets the producer being asked may still send in this run
 * @trains: this producer's packets may leave in trains (its
 *	struct srnic_producer's @trains, the device's tx_batch knob)
 * @train: the train being built, NULL when none (srnic_sched.c, "Trains")
 * @train_tail: where its next packet is linked
 * @train_av: the path of its packets
 * @train_sport: their UDP source port
 * @train_pkts: its packets
 * @train_seg: its first packet's bytes after the UDP header
 * @train_roce: its packets' bytes from BTH to ICRC, for the counters
 *
 * Producers hand the packets of their turn to srnic_sched_send() with the
 * run; ACKs the responder builds under its lock leave through
 * srnic_sched_xmit() (see there).
 */
struct srnic_tx_run {
	struct srnic_qp		*qp;
	unsigned int		budget;
	bool			trains;
	struct sk_buff		*train;
	struct sk_buff		**train_tail;
	const struct srnic_av	*train_av;
	u16			train_sport;
	unsigned int		train_pkts;
	unsigned int		train_seg;
	unsigned int		train_roce;
};

/**
 * struct srnic_producer - one source of a QP's packets
 * @budget: packets it sends in one run before the TX side yields the CPU
 * @trains: its packets may leave in trains: nothing it sends outside a
 *	run must follow them in order (the requester's; not the responder's,
 *	whose deferred ACK follows its READ responses)
 * @tx: send up to @run's budget packets through srnic_sched_send(); true
 *	if it has more to send (the scheduler runs again later)
 * @quiet: nothing it sent may still be overtaken, no multi-packet answer
 *	waits to go (takes its own locks): the TX side may move to another
 *	CPU
 * @flush: the QP is in the error state: complete what it holds with
 *	IB_WC_WR_FLUSH_ERR (srnic_qp_flush())
 */
struct srnic_producer {
	unsigned int budget;
	bool trains;
	bool (*tx)(struct srnic_qp *qp, struct srnic_tx_run *run);
	bool (*quiet)(struct srnic_qp *qp);
	void (*flush)(struct srnic_qp *qp);
};

/* qp->producers: a run asks them in this order (the responder first) */
enum {
	SRNIC_PRODUCER_RESP,
	SRNIC_PRODUCER_REQ,
	SRNIC_SCHED_PRODUCERS
};

/* qp->tx_flags */
enum {
	SRNIC_TX_RUNNING,	/* tx body is running somewhere */
	SRNIC_TX_AGAIN,		/* run it once more when it finishes */
	SRNIC_TX_BLOCKED,	/* stopped by srnic_sched_full(): kick at low mark */
	SRNIC_TX_IPI,		/* a hand-over IPI is on its way (tx_csd's one sender) */
};

int srnic_sched_init(void);
void srnic_sched_exit(void);
void srnic_sched_qp_init(struct srnic_qp *qp);
void srnic_sched_qp_stop(struct srnic_qp *qp);
void srnic_sched_qp_fini(struct srnic_qp *qp);
void srnic_sched_kick(struct srnic_qp *qp);
void srnic_sched_kick_now(struct srnic_qp *qp);
int srnic_sched_send(struct srnic_tx_run *run, const struct srnic_av *av,
		     struct sk_buff *skb, unsigned int pad);
int srnic_sched_xmit(struct srnic_qp *qp, const struct srnic_av *av,
		     u8 tclass, struct sk_buff *skb, unsigned int pad);
bool srnic_sched_full(struct srnic_qp *qp);
bool srnic_sched_in_order_here(struct srnic_qp *qp);
void srnic_sched_set_rate(struct srnic_qp *qp, u32 kbps);
bool srnic_sched_pace(struct srnic_qp *qp, u32 bytes);
void srnic_sched_rate_changed(struct srnic_qp *qp, int why);
u64 srnic_sched_rate(struct srnic_qp *qp);

#endif /* SRNIC_SCHED_H */
