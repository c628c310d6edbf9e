/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vtest.h: what the VM tests' C programs (mcast_verbs.c, ring_fuzz.c,
 * uverbs_fuzz.c, qp_scale.c) share: one line per check, "ok NAME" or
 * "not ok NAME: reason" (counted in fails; check() picks one by a
 * condition), a monotonic clock, opening an RDMA device by name, and an
 * endpoint (buffer, MR, CQ, QP: vt_ep_create) taken to RTS towards a peer
 * (vt_qp_connect, or step by step with vt_*_attr and VT_*_MASK), and two
 * RC QPs of one device connected to each other (vt_rc_qp,
 * vt_qp_connect_pair).
 * Header only: each program is built from its one .c file in the guest.
 */
#ifndef SRNIC_VTEST_H
#define SRNIC_VTEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

static int fails;

static inline void ok(const char *name)
{
	printf("ok %s\n", name);
	fflush(stdout);
}

static inline void vbad(const char *name, const char *fmt, va_list ap)
{
	fails++;
	printf("not ok %s: ", name);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline __attribute__((format(printf, 2, 3)))
void bad(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vbad(name, fmt, ap);
	va_end(ap);
}

/* ok NAME if @cond, else not ok NAME with the printf-style reason. */
static inline __attribute__((format(printf, 3, 4)))
bool check(const char *name, bool cond, const char *fmt, ...)
{
	va_list ap;

	if (cond) {
		ok(name);
		return true;
	}
	va_start(ap, fmt);
	vbad(name, fmt, ap);
	va_end(ap);
	return false;
}

static inline long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The device named @name, opened; NULL if there is none. */
static inline struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			c = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return c;
}

/* ------------------------------------------------------------ endpoints */

/* What vt_ep_create() makes: a QP of @type (none if 0) with @cap. */
struct vt_ep_attr {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	size_t buf_len;
	int access;			/* the MR's access flags */
	int cqe;
	enum ibv_qp_type type;
	struct ibv_qp_cap cap;
	struct ibv_srq *srq;		/* the QP's receives, or NULL */
};

/*
 * An endpoint: a zeroed, page-aligned buffer and its MR, a CQ, and a QP
 * whose sends and receives complete on that CQ. It owns the SRQ it was
 * given: vt_ep_destroy() destroys it too.
 */
struct vt_ep {
	int d;				/* the caller's device index */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* A QP of @type on @e's CQ (and SRQ); NULL with errno set on failure. */
static inline struct ibv_qp *vt_qp_create(struct vt_ep *e,
					  enum ibv_qp_type type,
					  const struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.srq = e->srq,
		.cap = *cap,
		.qp_type = type,
	};

	return ibv_create_qp(e->pd, &ia);
}

static inline void vt_ep_destroy(struct vt_ep *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->srq)
		ibv_destroy_srq(e->srq);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

/* @e on device @d as @a says; false (errno set, @e empty) if a step fails. */
static inline bool vt_ep_create(struct vt_ep *e, int d,
				const struct vt_ep_attr *a)
{
	int err;

	memset(e, 0, sizeof(*e));
	e->d = d;
	e->pd = a->pd;
	e->srq = a->srq;
	e->buf = aligned_alloc(4096, a->buf_len);
	if (!e->buf)
		goto fail;
	memset(e->buf, 0, a->buf_len);
	e->mr = ibv_reg_mr(a->pd, e->buf, a->buf_len, a->access);
	if (!e->mr)
		goto fail;
	e->cq = ibv_create_cq(a->ctx, a->cqe, NULL, NULL, 0);
	if (!e->cq)
		goto fail;
	if (a->type) {
		e->qp = vt_qp_create(e, a->type, &a->cap);
		if (!e->qp)
			goto fail;
	}
	return true;
fail:
	err = errno;
	vt_ep_destroy(e);
	errno = err;
	return false;
}

/* Where and how vt_qp_connect() takes an RC QP: towards @dest_qpn at @dgid. */
struct vt_conn {
	union ibv_gid dgid;
	int sgid_index;
	uint32_t dest_qpn;
	uint32_t psn;			/* the first PSN both ways */
	int access;			/* the QP's remote access flags */
	uint8_t timeout;
	uint8_t rnr_retry;
};

#define VT_INIT_MASK (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | \
		      IBV_QP_ACCESS_FLAGS)
#define VT_RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
		     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
		     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define VT_RTS_MASK (IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
		     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)

static inline void vt_init_attr(struct ibv_qp_attr *a, const struct vt_conn *c)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->port_num = 1;
	a->qp_access_flags = c->access;
}

/* RTR: IB MTU 1024, one READ/atomic in, port 1, RoCEv2 GRH. */
static inline void vt_rtr_attr(struct ibv_qp_attr *a, const struct vt_conn *c)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = c->dest_qpn;
	a->rq_psn = c->psn;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 1;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = c->dgid;
	a->ah_attr.grh.sgid_index = c->sgid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
}

/* RTS: retry_cnt 7, one READ/atomic out. */
static inline void vt_rts_attr(struct ibv_qp_attr *a, const struct vt_conn *c)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->timeout = c->timeout;
	a->retry_cnt = 7;
	a->rnr_retry = c->rnr_retry;
	a->sq_psn = c->psn;
	a->max_rd_atomic = 1;
}

/* RESET -> INIT -> RTR -> RTS as @c says; 0 or the failed modify's error. */
static inline int vt_qp_connect(struct ibv_qp *qp, const struct vt_conn *c)
{
	struct ibv_qp_attr a;
	int err;

	vt_init_attr(&a, c);
	err = ibv_modify_qp(qp, &a, VT_INIT_MASK);
	if (err)
		return err;
	vt_rtr_attr(&a, c);
	err = ibv_modify_qp(qp, &a, VT_RTR_MASK);
	if (err)
		return err;
	vt_rts_attr(&a, c);
	return ibv_modify_qp(qp, &a, VT_RTS_MASK);
}

/*
 * An RC QP on @pd whose sends and receives complete on @cq, @depth deep
 * each way, one SGE; NULL with errno set on failure.
 */
static inline struct ibv_qp *vt_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq,
				      uint32_t depth)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(pd, &ia);
}

/*
 * Two RC QPs of one device connected to each other through its GID
 * @c->sgid_index (a loopback over the device's netdev), each as @c says;
 * @c's dgid and dest_qpn are filled here. 0 or the failed step's error.
 */
static inline int vt_qp_connect_pair(struct ibv_qp *a, struct ibv_qp *b,
				     struct vt_conn *c)
{
	int err;

	err = ibv_query_gid(a->context, 1, c->sgid_index, &c->dgid);
	if (err)
		return err;
	c->dest_qpn = b->qp_num;
	err = vt_qp_connect(a, c);
	if (err)
		return err;
	c->dest_qpn = a->qp_num;
	return vt_qp_connect(b, c);
}

/*
 * Poll @cq for one completion into *@wc for up to @ms milliseconds: 1 if
 * one came, 0 on timeout, ibv_poll_cq()'s negative error.
 */
static inline int vt_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	long end = now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		sleep_ms(1);
	} while (now_ms() < end);
	return 0;
}

/*
 * One completion of @cq within @ms milliseconds: its status, and its opcode
 * in *@op if @op is not NULL; -1 on timeout or a poll error.
 */
static inline int vt_wait_wc(struct ibv_cq *cq, long ms,
			     enum ibv_wc_opcode *op)
{
	struct ibv_wc wc;

	if (vt_poll_one(cq, &wc, ms) != 1)
		return -1;
	if (op)
		*op = wc.opcode;
	return wc.status;
}

/*
 * One signaled @op of @len from (@laddr, @lkey) on @qp, to (@raddr, @rkey)
 * for RDMA ops: ibv_post_send()'s error, else the status of the next
 * completion of @cq within @ms milliseconds (-1 on timeout).
 */
static inline int vt_rdma_op(struct ibv_qp *qp, struct ibv_cq *cq, long ms,
			     enum ibv_wr_opcode op, uint64_t laddr,
			     uint32_t lkey, uint64_t raddr, uint32_t rkey,
			     uint32_t len)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *badwr;
	int err = ibv_post_send(qp, &wr, &badwr);

	return err ? err : vt_wait_wc(cq, ms, NULL);
}

/* @qp to RESET from any state (ERR too), and its CQ @cq emptied. */
static inline bool vt_qp_reset(struct ibv_qp *qp, struct ibv_cq *cq)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;

	if (ibv_modify_qp(qp, &reset, IBV_QP_STATE))
		return false;
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	return true;
}

#endif /* SRNIC_VTEST_H */
