/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic transport: the prototypes of its files, one block per file (the QP
 * core and verbs are in srnic_qp.h, the scheduler in srnic_sched.h, the
 * address handles in srnic_av.h). See srnic.h for their layering.
 */
#ifndef SRNIC_TRANSPORT_H
#define SRNIC_TRANSPORT_H

#include "srnic_av.h"
#include "srnic_pkt.h"
#include "srnic_qp.h"
#include "srnic_sched.h"

/* srnic_req.c: requester (send queue) and completer glue */
extern const struct srnic_producer srnic_req_producer;
int srnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
void srnic_req_arm_timer(struct srnic_qp *qp);
unsigned long srnic_req_timeout(struct srnic_qp *qp);
void srnic_req_answered(struct srnic_qp *qp, u32 psn);
bool srnic_req_idle(struct srnic_qp *qp);
bool srnic_req_has_work(struct srnic_qp *qp);
void srnic_req_retrans_timer(struct timer_list *t);
void srnic_req_rnr_timer(struct timer_list *t);

/* srnic_resp.c: responder (receive queue) */
extern const struct srnic_producer srnic_resp_producer;
int srnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
void srnic_resp_rcv(struct srnic_qp *qp, struct srnic_pkt *pkt);

/*
 * Forward progress of the requester (an ACK or response moved it on): the
 * retry budget and re-pathing count timeouts without it.
 */
static inline void srnic_req_progress(struct srnic_qp *qp)
{
	lockdep_assert_held(&qp->req_lock);
	qp->req.retry_left = qp->attr.retry_cnt;
	qp->req.stall_timeouts = 0;
	qp->req.stall_repaths = 0;
}

/* srnic_comp.c: completer */
void srnic_comp_rcv(struct srnic_qp *qp, struct srnic_pkt *pkt);
bool srnic_comp_retire(struct srnic_qp *qp);
void srnic_comp_fail_oldest(struct srnic_qp *qp, enum ib_wc_status status);

/* srnic_dct.c: DC targets and their attachments (docs/dc.md) */
int srnic_dct_create(struct srnic_qp *qp, u64 key);
void srnic_dct_destroy(struct srnic_qp *qp);
void srnic_dct_rcv(struct srnic_qp *qp, struct srnic_pkt *pkt);
u32 srnic_dct_attachments(struct srnic_qp *qp);

/* srnic_dci.c: DC initiators (docs/dc.md) */
int srnic_dci_prepare(struct srnic_qp *qp, struct srnic_send_wqe *wqe,
		      bool idle, struct sk_buff **detach, struct srnic_av *av);
bool srnic_dci_window_open(struct srnic_qp *qp);
bool srnic_dci_attaching(struct srnic_qp *qp, u32 psn);
bool srnic_dci_same(struct srnic_qp *qp, const struct srnic_send_wqe *wqe);
u8 srnic_dci_flags(struct srnic_qp *qp, u32 psn, unsigned long timeout);
bool srnic_dci_rcv(struct srnic_qp *qp, struct srnic_pkt *pkt);
void srnic_dci_reset(struct srnic_qp *qp);

/* srnic_xmit.c */
struct sk_buff *srnic_xmit_alloc(unsigned int hdr_len, unsigned int room);
int srnic_xmit(struct srnic_dev *sdev, struct srnic_qp *qp,
	       const struct srnic_av *av, u16 sport, u8 tclass,
	       struct sk_buff *skb, unsigned int pad);
int srnic_xmit_build(struct srnic_dev *sdev, struct srnic_qp *qp,
		     const struct srnic_av *av, u16 sport, u8 tclass,
		     struct sk_buff *skb, unsigned int pad, u16 ip_id);
int srnic_xmit_out(struct srnic_dev *sdev, struct sk_buff *skb,
		   unsigned int pkts, unsigned int roce_bytes);

/* srnic_cnp.c: CNPs (the reaction point's pacer glue: srnic_sched.c) */
void srnic_cnp_build(struct srnic_cnp *cnp, u32 dqpn);
bool srnic_cnp_skb_ce(const struct sk_buff *skb);
void srnic_cnp_np_rcv(struct srnic_qp *qp, struct srnic_pkt *pkt);
void srnic_cnp_rp_rcv(struct srnic_dev *sdev, struct srnic_pkt *pkt);

/* srnic_recv.c */
int srnic_udp_encap_recv(struct sock *sk, struct sk_buff *skb);
void srnic_recv_init(void);
void srnic_recv_exit(void);

#endif /* SRNIC_TRANSPORT_H */
