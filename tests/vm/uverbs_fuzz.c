// SPDX-License-Identifier: GPL-2.0
/*
 * uverbs_fuzz: verbs objects created, modified and destroyed with wild
 * attributes and in wild orders, from many threads, against srnic through
 * stock libibverbs (rxe provider); run by tests/vm/test_uverbs_fuzz.sh.
 *
 *   uverbs_fuzz DEV0 GID0 DEV1 GID1 SEED SECS THREADS
 *
 * DEV0 and DEV1 are the two ends of a veth pair, with the indexes of their
 * IPv4 RoCEv2 GIDs.
 *
 * 1. Errors that must occur, one by one: caps beyond the device's limits,
 *    QP types srnic does not support, a CQ of max_cqe + 1, an SRQ limit
 *    above its size, MRs of unmapped, read-only (for writing) or absurdly
 *    long memory, transitions IBA forbids, attributes out of range, an AH
 *    on a GID index that does not exist, wild mmap offsets of the uverbs
 *    file. Each must fail, and a QP keeps its state. Then what must
 *    work: a group attached under two MLIDs is detached twice and its QP
 *    destroyed; a type 1 window bound through an RTS QP completes.
 * 2. THREADS threads for SECS seconds over shared tables of PDs, CQs,
 *    SRQs, QPs, MRs, MWs and AHs on both devices, each step a random verb
 *    with random (often wild) arguments: create_qp of every type with caps
 *    0..huge, modify_qp with a random attribute mask and values (states,
 *    MTU, port, P_Key and GID index, AV, QPNs of live QPs so that traffic
 *    flows, timers, atomics, Q_Key), query_qp, post_send/post_recv of
 *    random WRs, create/resize/destroy CQ, create/modify/destroy SRQ,
 *    reg/dereg MR with wild flags, lengths and addresses, alloc/bind/
 *    dealloc MW, create/destroy AH, attach/detach multicast, post_srq_recv
 *    racing SRQ resizes, destroy of a
 *    CQ or SRQ still in use. A slot's object is never used after it is
 *    destroyed (a slot lock, taken with trylock, keeps user space sane);
 *    the kernel sees every other interleaving. A third context gets
 *    commands written raw to its uverbs file (random command numbers,
 *    handles and lengths, garbage ioctls) and mmaps of random offsets.
 *    Each verb class must have both succeeded and failed at least once
 *    (exceptions in main()).
 * 3. Everything is destroyed (each destroy must succeed).
 * 4. Races on one object (same_object_races()), 12 rounds each: modify_qp
 *    and post_send doorbells (raw commands naming the QP's handle) against
 *    destroy_qp of a QP with WRITEs queued; dereg_mr of the local or the
 *    remote MR of WRITEs in flight; destroy_cq while a QP uses the CQ,
 *    against that QP's destroy; dealloc_pd while an MR, a QP and an AH use
 *    it, against their destroys; resize_cq of a receive CQ while SENDs
 *    complete into it and it is polled. Each call succeeds or fails with
 *    EINVAL, ENOENT or EBUSY, both happen, every WR completes once (the
 *    SENDs in order, intact).
 * 5. A fresh RC pair moves data, every byte compared.
 *
 * The script checks the kernel log, `rdma resource show` and srnic's
 * vmalloc'd rings against the values from before. SEED (printed) replays
 * the random choices of each thread, not the interleaving.
 *
 * Prints one line per check, "ok NAME" or "not ok NAME: reason", then
 * "uverbs_fuzz: done, N failed"; exits 0 when it ran to the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/rdma_user_rxe.h>

#include "vtest.h"

#define N_CQ		8
#define N_SRQ		4
#define N_QP		24
#define N_MR		12
#define N_MW		8
#define N_AH		8
#define N_PD		2
#define BUF_LEN		(64 * 1024)
#define MAX_THREADS	16
#define WAIT_MS		10000

static const char *dev_name[2];
static int gid_index[2];
static struct ibv_context *ctx[2];
static struct ibv_pd *pd0[2];		/* for the checks and the fresh pair */
static struct ibv_device_attr dattr;
static uint64_t seed;
static atomic_bool stop;

struct rng {
	uint64_t s;
};

static uint32_t rnd(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return (uint32_t)(r->s >> 16);
}

static uint64_t rnd64(struct rng *r)
{
	return (uint64_t)rnd(r) << 32 | rnd(r);
}

/* A value around the limit @max: 0, 1, small, max, max + 1, huge. */
static uint32_t wild(struct rng *r, uint32_t max)
{
	switch (rnd(r) % 8) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return max;
	case 3:
		return max + 1;
	case 4:
		return rnd(r);
	case 5:
		return 0xffffffffu;
	default:
		return rnd(r) % 64;
	}
}

/* ------------------------------------------------------------ tables */

struct slot {
	pthread_rwlock_t lk;	/* wr: create/destroy; rd: use */
	int d;			/* device of the object */
	void *obj;
	struct ibv_pd *pd;	/* its PD (compared, never dereferenced) */
	int cq, srq;		/* QP: the slots of its CQ and SRQ (-1) */
	uint32_t qpn;		/* QP: number, read unlocked by others */
	enum ibv_qp_type type;
	int mw_type;
	union ibv_gid mgid[8];	/* QP: groups attached, under mcast_lock */
	uint16_t mlid[8];
	int nmgid;
};

static pthread_mutex_t mcast_lock = PTHREAD_MUTEX_INITIALIZER;

static struct slot cqs[N_CQ], srqs[N_SRQ], qps[N_QP], mrs[N_MR], mws[N_MW],
		   ahs[N_AH], pds[2][N_PD];
static uint32_t live_qpn[2][N_QP];	/* racy hints for DEST_QPN */

/* Verb classes, each counted: successes and failures. */
enum {
	V_CREATE_QP, V_MODIFY_QP, V_QUERY_QP, V_DESTROY_QP, V_POST_SEND,
	V_POST_RECV, V_CREATE_CQ, V_RESIZE_CQ, V_DESTROY_CQ, V_CREATE_SRQ,
	V_MODIFY_SRQ, V_DESTROY_SRQ, V_REG_MR, V_ALLOC_MW, V_BIND_MW,
	V_CREATE_AH, V_ATTACH_MCAST, V_RAW_CMD, V_MMAP, V_N
};

static const char *const vname[V_N] = {
	"create_qp", "modify_qp", "query_qp", "destroy_qp", "post_send",
	"post_recv", "create_cq", "resize_cq", "destroy_cq", "create_srq",
	"modify_srq", "destroy_srq", "reg_mr", "alloc_mw", "bind_mw",
	"create_ah", "attach_mcast", "raw command", "mmap",
};

/* [verb][0]: failed, [verb][1]: succeeded */
static atomic_long tally[V_N][2];

static void count(int v, bool success)
{
	atomic_fetch_add(&tally[v][success], 1);
}

/* Per thread: its buffer, registered on both devices (never fuzzed). */
struct thr {
	int id;
	struct rng r;
	uint8_t *buf;
	struct ibv_mr *mr[2];
	pthread_t t;
	long steps;
};

static struct ibv_pd *some_pd(struct thr *t, int d, struct slot **held)
{
	struct slot *s = &pds[d][rnd(&t->r) % N_PD];

	*held = NULL;
	if (rnd(&t->r) % 4 == 0 || pthread_rwlock_tryrdlock(&s->lk))
		return pd0[d];
	if (!s->obj) {
		pthread_rwlock_unlock(&s->lk);
		return pd0[d];
	}
	*held = s;
	return s->obj;
}

static void unhold(struct slot *s)
{
	if (s)
		pthread_rwlock_unlock(&s->lk);
}

/* ------------------------------------------------------------ CQ */

static void op_cq(struct thr *t)
{
	struct slot *s = &cqs[rnd(&t->r) % N_CQ];
	struct ibv_wc wc[16];

	if (rnd(&t->r) % 2 == 0) {
		/* use it: poll, arm, resize */
		if (pthread_rwlock_tryrdlock(&s->lk))
			return;
		if (s->obj) {
			struct ibv_cq *cq = s->obj;
			int err;

			switch (rnd(&t->r) % 3) {
			case 0:
				ibv_poll_cq(cq, 16, wc);
				break;
			case 1:
				ibv_req_notify_cq(cq, rnd(&t->r) % 2);
				break;
			default:
				err = ibv_resize_cq(cq, wild(&t->r,
							     dattr.max_cqe));
				count(V_RESIZE_CQ, !err);
				break;
			}
		}
		pthread_rwlock_unlock(&s->lk);
		return;
	}
	if (pthread_rwlock_trywrlock(&s->lk))
		return;
	if (s->obj) {
		/* EBUSY while a QP uses it; the slot keeps it then */
		int err = ibv_destroy_cq(s->obj);

		count(V_DESTROY_CQ, !err);
		if (!err)
			s->obj = NULL;
	} else {
		s->d = rnd(&t->r) % 2;
		s->obj = ibv_create_cq(ctx[s->d], wild(&t->r, dattr.max_cqe),
				       NULL, NULL, 0);
		count(V_CREATE_CQ, s->obj);
	}
	pthread_rwlock_unlock(&s->lk);
}

/* ------------------------------------------------------------ SRQ */

/* Receive WRs on the SRQ of @s (read-locked): wild SGEs, up to 4. */
static void srq_post(struct thr *t, struct slot *s)
{
	struct ibv_recv_wr wr[4], *bad_wr;
	struct ibv_sge sge[40];	/* more than max_srq_sge */
	int n = 1 + rnd(&t->r) % 4, i, err;

	for (i = 0; i < 40; i++) {
		sge[i].addr = (uintptr_t)t->buf + rnd(&t->r) % BUF_LEN;
		sge[i].length = rnd(&t->r) % 4096;
		sge[i].lkey = rnd(&t->r) % 8 ? t->mr[s->d]->lkey : rnd(&t->r);
	}
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		wr[i].wr_id = rnd(&t->r);
		wr[i].sg_list = sge;
		wr[i].num_sge = rnd(&t->r) % 8 ? 1 + rnd(&t->r) % 2 :
				rnd(&t->r) % 41;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	err = ibv_post_srq_recv(s->obj, wr, &bad_wr);
	count(V_POST_RECV, !err);
}

static void op_srq(struct thr *t)
{
	struct slot *s = &srqs[rnd(&t->r) % N_SRQ];
	struct ibv_srq_attr a;
	int err;

	if (rnd(&t->r) % 2 == 0) {
		if (pthread_rwlock_tryrdlock(&s->lk))
			return;
		if (s->obj && rnd(&t->r) % 2) {
			srq_post(t, s);
		} else if (s->obj) {
			memset(&a, 0, sizeof(a));
			a.max_wr = wild(&t->r, dattr.max_srq_wr);
			a.srq_limit = wild(&t->r, a.max_wr);
			/* resizing (MAX_WR) remaps the ring: one at a time */
			err = ibv_modify_srq(s->obj, &a,
					     rnd(&t->r) % 4 ? IBV_SRQ_LIMIT :
					     rnd(&t->r) % 4);
			count(V_MODIFY_SRQ, !err);
			ibv_query_srq(s->obj, &a);
		}
		pthread_rwlock_unlock(&s->lk);
		return;
	}
	if (pthread_rwlock_trywrlock(&s->lk))
		return;
	if (s->obj) {
		err = ibv_destroy_srq(s->obj);
		count(V_DESTROY_SRQ, !err);
		if (!err)
			s->obj = NULL;
	} else {
		struct ibv_srq_init_attr ia;
		struct slot *held;
		struct ibv_pd *pd;

		memset(&ia, 0, sizeof(ia));
		s->d = rnd(&t->r) % 2;
		ia.attr.max_wr = wild(&t->r, dattr.max_srq_wr);
		ia.attr.max_sge = wild(&t->r, dattr.max_srq_sge);
		ia.attr.srq_limit = wild(&t->r, ia.attr.max_wr);
		pd = some_pd(t, s->d, &held);
		s->obj = ibv_create_srq(pd, &ia);
		unhold(held);
		count(V_CREATE_SRQ, s->obj);
	}
	pthread_rwlock_unlock(&s->lk);
}

/* ------------------------------------------------------------ QP */

static const enum ibv_qp_type qp_types[] = {
	IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RC, IBV_QPT_UD,
	IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV,
	IBV_QPT_DRIVER, (enum ibv_qp_type)0, (enum ibv_qp_type)99,
};

static void qp_create(struct thr *t, struct slot *s)
{
	struct ibv_qp_init_attr ia;
	struct slot *sc = &cqs[rnd(&t->r) % N_CQ];
	struct slot *rc = rnd(&t->r) % 2 ? sc : &cqs[rnd(&t->r) % N_CQ];
	struct slot *ss = &srqs[rnd(&t->r) % N_SRQ];
	bool use_srq = rnd(&t->r) % 3 == 0;
	bool have_rc = false, have_ss = false;
	struct slot *held;
	struct ibv_pd *pd;
	struct ibv_qp *qp;

	if (pthread_rwlock_tryrdlock(&sc->lk))
		return;
	if (rc != sc) {
		if (pthread_rwlock_tryrdlock(&rc->lk))
			goto out_sc;
		have_rc = true;
	}
	if (use_srq) {
		if (pthread_rwlock_tryrdlock(&ss->lk))
			goto out_rc;
		have_ss = true;
	}
	if (!sc->obj || !rc->obj || sc->d != rc->d ||
	    (use_srq && (!ss->obj || ss->d != sc->d)))
		goto out;
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = rnd(&t->r) % 4 ? qp_types[rnd(&t->r) % 3] :
		     qp_types[rnd(&t->r) % (sizeof(qp_types) /
					    sizeof(qp_types[0]))];
	ia.send_cq = sc->obj;
	ia.recv_cq = rc->obj;
	ia.srq = use_srq ? ss->obj : NULL;
	ia.sq_sig_all = rnd(&t->r) % 2;
	ia.cap.max_send_wr = rnd(&t->r) % 8 ? rnd(&t->r) % 128 :
			     wild(&t->r, dattr.max_qp_wr);
	ia.cap.max_recv_wr = rnd(&t->r) % 8 ? rnd(&t->r) % 128 :
			     wild(&t->r, dattr.max_qp_wr);
	ia.cap.max_send_sge = rnd(&t->r) % 8 ? rnd(&t->r) % 4 :
			      wild(&t->r, dattr.max_sge);
	ia.cap.max_recv_sge = rnd(&t->r) % 8 ? rnd(&t->r) % 4 :
			      wild(&t->r, dattr.max_sge);
	ia.cap.max_inline_data = rnd(&t->r) % 8 ? rnd(&t->r) % 256 :
				 wild(&t->r, 512);
	pd = some_pd(t, sc->d, &held);
	qp = ibv_create_qp(pd, &ia);
	unhold(held);
	count(V_CREATE_QP, qp);
	if (qp) {
		s->obj = qp;
		s->pd = pd;
		s->d = sc->d;
		s->cq = sc - cqs;
		s->srq = use_srq ? ss - srqs : -1;
		s->qpn = qp->qp_num;
		s->type = ia.qp_type;
		live_qpn[s->d][s - qps] = qp->qp_num;
	}
out:
	if (have_ss)
		pthread_rwlock_unlock(&ss->lk);
out_rc:
	if (have_rc)
		pthread_rwlock_unlock(&rc->lk);
out_sc:
	pthread_rwlock_unlock(&sc->lk);
}

static uint32_t some_qpn(struct thr *t, int d)
{
	uint32_t n = live_qpn[d][rnd(&t->r) % N_QP];

	return n && rnd(&t->r) % 8 ? n : wild(&t->r, 0xffffff);
}

static const int all_masks[] = {
	IBV_QP_STATE, IBV_QP_CUR_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY,
	IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT, IBV_QP_QKEY,
	IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT,
	IBV_QP_RNR_RETRY, IBV_QP_RQ_PSN, IBV_QP_MAX_QP_RD_ATOMIC,
	IBV_QP_ALT_PATH, IBV_QP_MIN_RNR_TIMER, IBV_QP_SQ_PSN,
	IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_PATH_MIG_STATE, IBV_QP_CAP,
	IBV_QP_DEST_QPN, IBV_QP_RATE_LIMIT,
};

/*
 * RESET -> INIT -> RTR -> RTS with valid attributes (@a: the GIDs, a live
 * QPN of the other device): a QP that gets there moves data, to whichever
 * QP has that number now.
 */
static void qp_connect(struct thr *t, struct slot *s, struct ibv_qp_attr *a)
{
	struct ibv_qp *qp = s->obj;
	bool ud = s->type == IBV_QPT_UD;
	int err;

	a->qp_state = IBV_QPS_RESET;
	ibv_modify_qp(qp, a, IBV_QP_STATE);
	a->qp_state = IBV_QPS_INIT;
	a->port_num = 1;
	a->pkey_index = 0;
	a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_ATOMIC;
	a->qkey = 0x11111111;
	err = ibv_modify_qp(qp, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | (ud ? IBV_QP_QKEY :
					   IBV_QP_ACCESS_FLAGS));
	count(V_MODIFY_QP, !err);
	if (err)
		return;
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->max_dest_rd_atomic = 4;
	a->min_rnr_timer = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.sgid_index = gid_index[s->d];
	a->ah_attr.grh.hop_limit = 64;
	ibv_query_gid(ctx[!s->d], 1, gid_index[!s->d], &a->ah_attr.grh.dgid);
	err = ibv_modify_qp(qp, a, ud ? IBV_QP_STATE :
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (s->type == IBV_QPT_RC ?
			     IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER : 0));
	count(V_MODIFY_QP, !err);
	if (err)
		return;
	a->qp_state = IBV_QPS_RTS;
	a->timeout = 10;
	a->retry_cnt = 2;
	a->rnr_retry = 1;
	a->max_rd_atomic = 1;
	err = ibv_modify_qp(qp, a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    (s->type == IBV_QPT_RC ? IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_MAX_QP_RD_ATOMIC : 0));
	count(V_MODIFY_QP, !err);
}

/*
 * The attributes a valid step from the QP's likely state carries, so that
 * many QPs do reach RTS and talk; plus random extra bits and values.
 */
static void qp_modify(struct thr *t, struct slot *s)
{
	struct ibv_qp *qp = s->obj;
	struct ibv_qp_attr a;
	union ibv_gid gid;
	int mask = 0, i, peer = !s->d, err;

	memset(&a, 0, sizeof(a));
	a.qp_state = rnd(&t->r) % 8;
	a.cur_qp_state = rnd(&t->r) % 8;
	a.port_num = rnd(&t->r) % 8 ? 1 : rnd(&t->r) % 4;
	a.pkey_index = rnd(&t->r) % 8 ? 0 : rnd(&t->r);
	a.qp_access_flags = rnd(&t->r) % 4 ? IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC : rnd(&t->r);
	a.qkey = rnd(&t->r) % 2 ? 0x11111111 : rnd(&t->r);
	a.path_mtu = rnd(&t->r) % 4 ? IBV_MTU_1024 : rnd(&t->r) % 8;
	a.dest_qp_num = some_qpn(t, peer);
	a.rq_psn = rnd(&t->r);
	a.sq_psn = rnd(&t->r);
	a.max_rd_atomic = rnd(&t->r) % 4 ? 1 : wild(&t->r, 128);
	a.max_dest_rd_atomic = rnd(&t->r) % 4 ? 4 : wild(&t->r, 128);
	a.min_rnr_timer = rnd(&t->r) % 4 ? 1 : rnd(&t->r);
	a.timeout = rnd(&t->r) % 4 ? 10 : rnd(&t->r);
	a.retry_cnt = rnd(&t->r) % 4 ? 2 : rnd(&t->r);
	a.rnr_retry = rnd(&t->r) % 4 ? 1 : rnd(&t->r);
	a.rate_limit = rnd(&t->r) % 2 ? 0 : rnd(&t->r);
	a.cap.max_send_wr = wild(&t->r, 64);
	a.cap.max_recv_wr = wild(&t->r, 64);
	a.ah_attr.port_num = a.port_num;
	a.ah_attr.is_global = rnd(&t->r) % 8 != 0;
	a.ah_attr.sl = rnd(&t->r) % 4 ? 0 : rnd(&t->r);
	a.ah_attr.dlid = rnd(&t->r) % 4 ? 0 : rnd(&t->r);
	a.ah_attr.static_rate = rnd(&t->r) % 4 ? 0 : rnd(&t->r);
	a.ah_attr.grh.hop_limit = rnd(&t->r);
	a.ah_attr.grh.traffic_class = rnd(&t->r);
	a.ah_attr.grh.flow_label = rnd(&t->r);
	a.ah_attr.grh.sgid_index = rnd(&t->r) % 4 ? gid_index[s->d] :
				   rnd(&t->r) % 256;
	if (rnd(&t->r) % 4 && !ibv_query_gid(ctx[peer], 1, gid_index[peer],
					      &gid)) {
		a.ah_attr.grh.dgid = gid;
	} else {
		for (i = 0; i < 16; i++)
			a.ah_attr.grh.dgid.raw[i] = rnd(&t->r);
	}
	a.alt_ah_attr = a.ah_attr;
	a.alt_port_num = rnd(&t->r) % 4;

	switch (rnd(&t->r) % 6) {
	case 0:
		mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       (s->type == IBV_QPT_UD ? IBV_QP_QKEY :
			IBV_QP_ACCESS_FLAGS);
		a.qp_state = IBV_QPS_INIT;
		break;
	case 1:
		mask = IBV_QP_STATE;
		if (s->type != IBV_QPT_UD)
			mask |= IBV_QP_AV | IBV_QP_PATH_MTU |
				IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (s->type == IBV_QPT_RC)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
		a.qp_state = IBV_QPS_RTR;
		break;
	case 2:
		mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (s->type == IBV_QPT_RC)
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		a.qp_state = IBV_QPS_RTS;
		break;
	case 3:
		mask = IBV_QP_STATE;
		a.qp_state = rnd(&t->r) % 2 ? IBV_QPS_ERR : IBV_QPS_RESET;
		break;
	default:
		break;
	}
	/* random extra bits, sometimes all of them */
	for (i = rnd(&t->r) % 4 ? 0 : 1 + rnd(&t->r) % 3; i > 0; i--)
		mask |= all_masks[rnd(&t->r) % (sizeof(all_masks) /
						 sizeof(all_masks[0]))];
	if (rnd(&t->r) % 64 == 0)
		mask = rnd(&t->r);
	if (rnd(&t->r) % 4 == 0) {
		qp_connect(t, s, &a);
		return;
	}
	err = ibv_modify_qp(qp, &a, mask);
	count(V_MODIFY_QP, !err);
}

static void qp_post(struct thr *t, struct slot *s)
{
	struct ibv_qp *qp = s->obj;
	struct ibv_sge sge[4];
	struct ibv_send_wr swr[4], *bs;
	struct ibv_recv_wr rwr[4], *br;
	struct slot *ah = NULL;
	int n = 1 + rnd(&t->r) % 4, i, j, err;
	bool inl = false;

	memset(swr, 0, sizeof(swr));
	memset(rwr, 0, sizeof(rwr));
	for (j = 0; j < 4; j++) {
		uint32_t off = rnd(&t->r) % BUF_LEN;

		sge[j].addr = (uintptr_t)t->buf + off;
		sge[j].length = rnd(&t->r) % 8 ? rnd(&t->r) % (BUF_LEN - off) :
				rnd(&t->r);
		sge[j].lkey = rnd(&t->r) % 8 ? t->mr[s->d]->lkey : rnd(&t->r);
	}
	for (i = 0; i < n; i++) {
		swr[i].wr_id = rnd(&t->r);
		swr[i].sg_list = sge;
		swr[i].num_sge = rnd(&t->r) % 3;
		swr[i].opcode = rnd(&t->r) % 4 ? rnd(&t->r) % 4 :
				rnd(&t->r) % 16;
		/* the provider reads bind_mw.mw, a user-space pointer */
		if (swr[i].opcode == IBV_WR_BIND_MW)
			swr[i].opcode = IBV_WR_SEND;
		/*
		 * The provider copies inline data from the SGEs after a
		 * 32-bit sum of their lengths (which wraps): keep them
		 * inside the buffer.
		 */
		if (swr[i].send_flags & IBV_SEND_INLINE)
			inl = true;
		swr[i].send_flags = rnd(&t->r) % 4 ? IBV_SEND_SIGNALED :
				    rnd(&t->r) % 32;
		swr[i].wr.rdma.remote_addr = rnd(&t->r) % 2 ?
			(uintptr_t)t->buf : rnd64(&t->r);
		swr[i].wr.rdma.rkey = rnd(&t->r) % 2 ? t->mr[!s->d]->rkey :
				      rnd(&t->r);
		swr[i].next = i + 1 < n ? &swr[i + 1] : NULL;
		rwr[i].wr_id = rnd(&t->r);
		rwr[i].sg_list = sge;
		rwr[i].num_sge = rnd(&t->r) % 3;
		rwr[i].next = i + 1 < n ? &rwr[i + 1] : NULL;
	}
	for (j = 0; inl && j < 4; j++) {
		sge[j].addr = (uintptr_t)t->buf;
		sge[j].length %= 128;
	}
	if (s->type == IBV_QPT_UD) {
		ah = &ahs[rnd(&t->r) % N_AH];
		if (pthread_rwlock_tryrdlock(&ah->lk))
			return;
		if (!ah->obj || ah->d != s->d) {
			pthread_rwlock_unlock(&ah->lk);
			return;
		}
		for (i = 0; i < n; i++) {
			swr[i].wr.ud.ah = ah->obj;
			swr[i].wr.ud.remote_qpn = some_qpn(t, !s->d);
			swr[i].wr.ud.remote_qkey = 0x11111111;
		}
	}
	if (rnd(&t->r) % 2) {
		err = ibv_post_send(qp, swr, &bs);
		count(V_POST_SEND, !err);
	} else {
		err = ibv_post_recv(qp, rwr, &br);
		count(V_POST_RECV, !err);
	}
	if (ah)
		pthread_rwlock_unlock(&ah->lk);
}

static void qp_mcast(struct thr *t, struct slot *s)
{
	union ibv_gid gid;
	int i, err;

	memset(&gid, 0, sizeof(gid));
	gid.raw[0] = 0xff;
	gid.raw[1] = 0x0e;
	gid.raw[15] = rnd(&t->r) % 4;
	if (rnd(&t->r) % 4 == 0)
		for (i = 0; i < 16; i++)
			gid.raw[i] = rnd(&t->r);
	if (rnd(&t->r) % 2) {
		uint16_t lid = rnd(&t->r) % 2 ? 0 : rnd(&t->r);

		pthread_mutex_lock(&mcast_lock);
		err = s->nmgid < 8 ? ibv_attach_mcast(s->obj, &gid, lid) : -1;
		if (!err) {
			s->mgid[s->nmgid] = gid;
			s->mlid[s->nmgid++] = lid;
		}
		pthread_mutex_unlock(&mcast_lock);
		if (err >= 0)
			count(V_ATTACH_MCAST, !err);
	} else {
		ibv_detach_mcast(s->obj, &gid, 0);
	}
}

/*
 * Destroy the QP of @s (write-locked). ib_core refuses (EBUSY) while it is
 * attached to a group: then detach what it attached and try again.
 */
static int qp_destroy(struct slot *s)
{
	int err = ibv_destroy_qp(s->obj), i;

	if (err == EBUSY) {
		count(V_DESTROY_QP, false);
		for (i = 0; i < s->nmgid; i++)
			ibv_detach_mcast(s->obj, &s->mgid[i], s->mlid[i]);
		err = ibv_destroy_qp(s->obj);
	}
	if (!err) {
		s->obj = NULL;
		s->nmgid = 0;
	}
	return err;
}

static void op_qp(struct thr *t)
{
	struct slot *s = &qps[rnd(&t->r) % N_QP];
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int err;

	if (rnd(&t->r) % 8 == 0) {
		if (pthread_rwlock_trywrlock(&s->lk))
			return;
		if (s->obj) {
			live_qpn[s->d][s - qps] = 0;
			err = qp_destroy(s);
			count(V_DESTROY_QP, !err);
		} else {
			qp_create(t, s);
		}
		pthread_rwlock_unlock(&s->lk);
		return;
	}
	if (pthread_rwlock_tryrdlock(&s->lk))
		return;
	if (s->obj) {
		switch (rnd(&t->r) % 8) {
		case 0:
		case 1:
		case 2:
			qp_modify(t, s);
			break;
		case 3:
			err = ibv_query_qp(s->obj, &a, rnd(&t->r) % 8 ?
					   rnd(&t->r) & (IBV_QP_RATE_LIMIT - 1) :
					   rnd(&t->r), &ia);
			count(V_QUERY_QP, !err);
			break;
		case 4:
			qp_mcast(t, s);
			break;
		default:
			qp_post(t, s);
			break;
		}
		/* completions: keep the CQs from overflowing */
		if (rnd(&t->r) % 2) {
			struct slot *c = &cqs[s->cq];
			struct ibv_wc wc[32];

			if (!pthread_rwlock_tryrdlock(&c->lk)) {
				if (c->obj)
					ibv_poll_cq(c->obj, 32, wc);
				pthread_rwlock_unlock(&c->lk);
			}
		}
	}
	pthread_rwlock_unlock(&s->lk);
}

/* ------------------------------------------------------------ MR, MW, AH */

static void *ro_page, *gone_page;

static void op_mr(struct thr *t)
{
	struct slot *s = &mrs[rnd(&t->r) % N_MR];
	struct slot *held;
	struct ibv_pd *pd;
	void *addr;
	size_t len;

	if (pthread_rwlock_trywrlock(&s->lk))
		return;
	if (s->obj) {
		/* fails while a window is bound to it (IBA 10.6.7.2) */
		if (!ibv_dereg_mr(s->obj))
			s->obj = NULL;
		goto out;
	}
	switch (rnd(&t->r) % 6) {
	case 0:
		addr = ro_page;
		len = 4096;
		break;
	case 1:
		addr = gone_page;
		len = 4096;
		break;
	case 2:
		addr = (void *)(uintptr_t)rnd64(&t->r);
		len = rnd(&t->r);
		break;
	case 3:
		addr = t->buf;
		len = rnd(&t->r) % 2 ? 0 : (size_t)1 << (30 + rnd(&t->r) % 20);
		break;
	default:
		addr = t->buf + rnd(&t->r) % BUF_LEN;
		len = rnd(&t->r) % (BUF_LEN - (addr - (void *)t->buf)) + 1;
		break;
	}
	s->d = rnd(&t->r) % 2;
	pd = some_pd(t, s->d, &held);
	s->pd = pd;
	s->obj = ibv_reg_mr(pd, addr, len, rnd(&t->r) % 4 ?
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND :
			    rnd(&t->r) & 0xffff);
	unhold(held);
	count(V_REG_MR, s->obj);
out:
	pthread_rwlock_unlock(&s->lk);
}

static void op_mw(struct thr *t)
{
	struct slot *s = &mws[rnd(&t->r) % N_MW];
	struct slot *q, *m;
	struct ibv_mw_bind b;
	struct slot *held;
	struct ibv_pd *pd;
	int err, i, same;

	if (rnd(&t->r) % 2) {
		if (pthread_rwlock_trywrlock(&s->lk))
			return;
		if (s->obj) {
			if (ibv_dealloc_mw(s->obj))
				bad("dealloc_mw", "%s", strerror(errno));
			s->obj = NULL;
		} else {
			s->d = rnd(&t->r) % 2;
			s->mw_type = rnd(&t->r) % 2 ? IBV_MW_TYPE_1 :
				     IBV_MW_TYPE_2;
			pd = some_pd(t, s->d, &held);
			s->pd = pd;
			s->obj = ibv_alloc_mw(pd, rnd(&t->r) % 8 ? s->mw_type :
					      rnd(&t->r) % 4);
			unhold(held);
			count(V_ALLOC_MW, s->obj);
		}
		pthread_rwlock_unlock(&s->lk);
		return;
	}
	/*
	 * Bind a type 1 MW through a QP to an MR, wild access and range;
	 * mostly all three in one PD (else libibverbs refuses it itself).
	 */
	if (pthread_rwlock_tryrdlock(&s->lk))
		return;
	same = rnd(&t->r) % 8;
	for (i = 0, q = NULL; i < N_QP && !q; i++) {
		q = &qps[(rnd(&t->r) + i) % N_QP];
		if (q->d != s->d || !q->obj || (same && q->pd != s->pd))
			q = NULL;
	}
	for (i = 0, m = NULL; i < N_MR && !m; i++) {
		m = &mrs[(rnd(&t->r) + i) % N_MR];
		if (!m->obj || (same && m->pd != s->pd))
			m = NULL;
	}
	if (!q || !m || pthread_rwlock_tryrdlock(&q->lk))
		goto out_s;
	if (pthread_rwlock_tryrdlock(&m->lk))
		goto out_q;
	if (s->obj && q->obj && m->obj && s->mw_type == IBV_MW_TYPE_1 &&
	    s->d == q->d) {
		struct ibv_mr *mr = m->obj;

		memset(&b, 0, sizeof(b));
		b.wr_id = rnd(&t->r);
		b.send_flags = IBV_SEND_SIGNALED;
		b.bind_info.mr = mr;
		b.bind_info.addr = rnd(&t->r) % 8 ? (uintptr_t)mr->addr :
				   rnd64(&t->r);
		b.bind_info.length = rnd(&t->r) % 8 ? mr->length : rnd(&t->r);
		b.bind_info.mw_access_flags = rnd(&t->r) % 8 ?
			IBV_ACCESS_REMOTE_WRITE : rnd(&t->r) & 0xff;
		err = ibv_bind_mw(q->obj, s->obj, &b);
		count(V_BIND_MW, !err);
	}
	pthread_rwlock_unlock(&m->lk);
out_q:
	pthread_rwlock_unlock(&q->lk);
out_s:
	pthread_rwlock_unlock(&s->lk);
}

static void op_ah(struct thr *t)
{
	struct slot *s = &ahs[rnd(&t->r) % N_AH];
	struct ibv_ah_attr a;
	union ibv_gid gid;
	struct slot *held;
	struct ibv_pd *pd;
	int i;

	if (pthread_rwlock_trywrlock(&s->lk))
		return;
	if (s->obj) {
		if (ibv_destroy_ah(s->obj))
			bad("destroy_ah", "%s", strerror(errno));
		s->obj = NULL;
		goto out;
	}
	s->d = rnd(&t->r) % 2;
	memset(&a, 0, sizeof(a));
	a.port_num = rnd(&t->r) % 8 ? 1 : rnd(&t->r) % 4;
	a.is_global = rnd(&t->r) % 8 != 0;
	a.sl = rnd(&t->r) % 4 ? 0 : rnd(&t->r);
	a.static_rate = rnd(&t->r) % 4 ? 0 : rnd(&t->r);
	a.dlid = rnd(&t->r) % 4 ? 0 : rnd(&t->r);
	a.grh.sgid_index = rnd(&t->r) % 4 ? gid_index[s->d] : rnd(&t->r);
	a.grh.hop_limit = rnd(&t->r);
	a.grh.flow_label = rnd(&t->r);
	a.grh.traffic_class = rnd(&t->r);
	if (rnd(&t->r) % 2 &&
	    !ibv_query_gid(ctx[!s->d], 1, gid_index[!s->d], &gid)) {
		a.grh.dgid = gid;
	} else {
		for (i = 0; i < 16; i++)
			a.grh.dgid.raw[i] = rnd(&t->r);
	}
	pd = some_pd(t, s->d, &held);
	s->obj = ibv_create_ah(pd, &a);
	unhold(held);
	count(V_CREATE_AH, s->obj);
out:
	pthread_rwlock_unlock(&s->lk);
}

static void op_pd(struct thr *t)
{
	int d = rnd(&t->r) % 2;
	struct slot *s = &pds[d][rnd(&t->r) % N_PD];

	if (pthread_rwlock_trywrlock(&s->lk))
		return;
	if (s->obj) {
		/* EBUSY while objects use it */
		if (!ibv_dealloc_pd(s->obj))
			s->obj = NULL;
	} else {
		s->obj = ibv_alloc_pd(ctx[d]);
	}
	pthread_rwlock_unlock(&s->lk);
}

/* ------------------------------------------------------------ raw */

/*
 * A context of its own: random handles written here can only reach its
 * own objects, which the fuzzing threads never touch.
 */
static struct ibv_context *raw_ctx;
static pthread_mutex_t raw_lock = PTHREAD_MUTEX_INITIALIZER;

/* Write command @cmd (header + @len bytes of @body) on @fd. */
static ssize_t raw_write(int fd, uint32_t cmd, const void *body, size_t len,
			 size_t out)
{
	uint8_t w[256];
	struct ib_uverbs_cmd_hdr h = {
		.command = cmd,
		.in_words = (sizeof(h) + len) / 4,
		.out_words = out / 4,
	};

	memcpy(w, &h, sizeof(h));
	memcpy(w + sizeof(h), body, len);
	return write(fd, w, sizeof(h) + len);
}

/*
 * A well-formed write() command, one field of it sometimes changed: what
 * parses far enough to reach srnic. Objects it creates are destroyed.
 */
static void raw_valid(struct thr *t, int fd, uint8_t *resp)
{
	union {
		struct ib_uverbs_query_port qp;
		struct ib_uverbs_alloc_pd pd;
		struct ib_uverbs_create_cq cq;
		struct ib_uverbs_destroy_cq dcq;
		struct ib_uverbs_dealloc_pd dpd;
		uint32_t w[16];
	} c;
	uint32_t cmd, len;
	ssize_t n;

	memset(&c, 0, sizeof(c));
	switch (rnd(&t->r) % 3) {
	case 0:
		cmd = IB_USER_VERBS_CMD_QUERY_PORT;
		len = sizeof(c.qp);
		c.qp.response = (uintptr_t)resp;
		c.qp.port_num = rnd(&t->r) % 3;
		break;
	case 1:
		cmd = IB_USER_VERBS_CMD_ALLOC_PD;
		len = sizeof(c.pd);
		c.pd.response = (uintptr_t)resp;
		break;
	default:
		cmd = IB_USER_VERBS_CMD_CREATE_CQ;
		len = sizeof(c.cq);
		c.cq.response = (uintptr_t)resp;
		c.cq.user_handle = rnd64(&t->r);
		c.cq.cqe = wild(&t->r, dattr.max_cqe);
		c.cq.comp_vector = rnd(&t->r) % 4 ? 0 : rnd(&t->r);
		c.cq.comp_channel = -1;
		break;
	}
	/* one word after the response pointer, changed */
	if (rnd(&t->r) % 2 && len > 8)
		c.w[2 + rnd(&t->r) % ((len - 8) / 4)] = rnd(&t->r);
	memset(resp, 0, 4096);
	n = raw_write(fd, cmd, &c, len, 1024);
	count(V_RAW_CMD, n >= 0);
	if (n < 0)
		return;
	if (cmd == IB_USER_VERBS_CMD_ALLOC_PD) {
		memset(&c, 0, sizeof(c));
		c.dpd.pd_handle = ((struct ib_uverbs_alloc_pd_resp *)resp)->pd_handle;
		if (raw_write(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &c,
			      sizeof(c.dpd), 0) < 0)
			bad("raw DEALLOC_PD of a raw ALLOC_PD", "%s",
			    strerror(errno));
	} else if (cmd == IB_USER_VERBS_CMD_CREATE_CQ) {
		uint32_t h = ((struct ib_uverbs_create_cq_resp *)resp)->cq_handle;
		struct mminfo mi;
		void *ring, *p;

		/* its ring: mapped past its size no, at its size yes */
		memcpy(&mi, resp + sizeof(struct ib_uverbs_create_cq_resp),
		       sizeof(mi));
		p = mmap(NULL, mi.size + 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, mi.offset);
		count(V_MMAP, p != MAP_FAILED);
		if (p != MAP_FAILED) {
			bad("raw mmap past a ring's size fails", "mapped");
			munmap(p, mi.size + 4096);
		}
		ring = mmap(NULL, mi.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fd, mi.offset);
		count(V_MMAP, ring != MAP_FAILED);
		if (ring == MAP_FAILED)
			bad("raw mmap of a ring at its offset and size", "%s",
			    strerror(errno));
		memset(&c, 0, sizeof(c));
		c.dcq.response = (uintptr_t)resp + 2048;
		c.dcq.cq_handle = h;
		if (raw_write(fd, IB_USER_VERBS_CMD_DESTROY_CQ, &c,
			      sizeof(c.dcq),
			      sizeof(struct ib_uverbs_destroy_cq_resp)) < 0)
			bad("raw DESTROY_CQ of a raw CREATE_CQ", "%s",
			    strerror(errno));
		if (ring == MAP_FAILED)
			return;
		/* the CQ is gone: its pages stay while mapped, its offset not */
		memset(ring, 0x5a, mi.size);
		munmap(ring, mi.size);
		p = mmap(NULL, mi.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 mi.offset);
		count(V_MMAP, p != MAP_FAILED);
		if (p != MAP_FAILED) {
			bad("raw mmap of a destroyed CQ's ring fails", "mapped");
			munmap(p, mi.size);
		}
	}
}

static void op_raw(struct thr *t)
{
	uint32_t w[64];
	static uint8_t resp[4096];	/* under raw_lock */
	int fd = raw_ctx->cmd_fd, i;
	ssize_t n;
	size_t len;

	pthread_mutex_lock(&raw_lock);
	switch (rnd(&t->r) % 4) {
	case 3:
		raw_valid(t, fd, resp);
		break;
	case 0: {
		/* a write() command: the old ABI header and garbage */
		struct ib_uverbs_cmd_hdr *h = (void *)w;
		static const uint32_t cmds[] = {
			IB_USER_VERBS_CMD_QUERY_DEVICE,
			IB_USER_VERBS_CMD_ALLOC_PD,
			IB_USER_VERBS_CMD_DEALLOC_PD,
			IB_USER_VERBS_CMD_REG_MR,
			IB_USER_VERBS_CMD_CREATE_CQ,
			IB_USER_VERBS_CMD_RESIZE_CQ,
			IB_USER_VERBS_CMD_CREATE_QP,
			IB_USER_VERBS_CMD_MODIFY_QP,
			IB_USER_VERBS_CMD_QUERY_QP,
			IB_USER_VERBS_CMD_POST_SEND,
			IB_USER_VERBS_CMD_POST_RECV,
			IB_USER_VERBS_CMD_CREATE_SRQ,
			IB_USER_VERBS_CMD_MODIFY_SRQ,
			IB_USER_VERBS_CMD_CREATE_AH,
			IB_USER_VERBS_CMD_ALLOC_MW,
			IB_USER_VERBS_CMD_ATTACH_MCAST,
			IB_USER_VERBS_CMD_DESTROY_QP,
			IB_USER_VERBS_CMD_DESTROY_CQ,
		};

		for (i = 0; i < 64; i++)
			w[i] = rnd(&t->r) % 4 ? rnd(&t->r) % 8 : rnd(&t->r);
		/* response pointers into our buffer, or wild */
		for (i = 2; i < 4; i++) {
			uint64_t p = rnd(&t->r) % 4 ? (uintptr_t)resp :
				     rnd64(&t->r);

			memcpy(&w[i], &p, 8);
		}
		h->command = rnd(&t->r) % 8 ?
			cmds[rnd(&t->r) % (sizeof(cmds) / sizeof(cmds[0]))] :
			rnd(&t->r) % 64;
		h->in_words = rnd(&t->r) % 4 ? rnd(&t->r) % 64 : rnd(&t->r);
		h->out_words = rnd(&t->r) % 4 ? sizeof(resp) / 4 :
			       rnd(&t->r);
		len = rnd(&t->r) % 4 ? (size_t)h->in_words * 4 :
		      rnd(&t->r) % sizeof(w);
		if (len > sizeof(w))
			len = sizeof(w);
		n = write(fd, w, len);
		count(V_RAW_CMD, n >= 0);
		break;
	}
	case 1: {
		/* an ioctl: struct ib_uverbs_ioctl_hdr and garbage */
		struct ib_uverbs_ioctl_hdr *h = (void *)w;

		for (i = 0; i < 64; i++)
			w[i] = rnd(&t->r) % 2 ? rnd(&t->r) % 8 : rnd(&t->r);
		h->length = rnd(&t->r) % 2 ? sizeof(w) : rnd(&t->r);
		h->num_attrs = rnd(&t->r) % 2 ? (sizeof(w) - sizeof(*h)) /
			       sizeof(struct ib_uverbs_attr) : rnd(&t->r);
		h->object_id = rnd(&t->r) % 32;
		h->method_id = rnd(&t->r) % 16;
		h->driver_id = rnd(&t->r) % 2 ? RDMA_DRIVER_RXE : rnd(&t->r);
		h->reserved1 = 0;
		n = ioctl(fd, RDMA_VERBS_IOCTL, w);
		count(V_RAW_CMD, n >= 0);
		break;
	}
	default: {
		/* mmap of a wild offset and length */
		size_t l = rnd(&t->r) % 4 ? 4096 * (1 + rnd(&t->r) % 16) :
			   (size_t)rnd(&t->r) << 12;
		off_t off = rnd(&t->r) % 2 ? (off_t)(rnd(&t->r) % 64) << 12 :
			    (off_t)(rnd64(&t->r) & 0x7ffffffffffff000ull);
		void *p = mmap(NULL, l, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fd, off);

		count(V_MMAP, p != MAP_FAILED);
		if (p != MAP_FAILED) {
			(void)*(volatile uint8_t *)p;
			munmap(p, l);
		}
		break;
	}
	}
	pthread_mutex_unlock(&raw_lock);
}

/* ------------------------------------------------------------ threads */

static void *fuzz(void *arg)
{
	struct thr *t = arg;

	while (!atomic_load(&stop)) {
		switch (rnd(&t->r) % 20) {
		case 0:
		case 1:
			op_cq(t);
			break;
		case 2:
		case 3:
			op_srq(t);
			break;
		case 4:
		case 5:
			op_mr(t);
			break;
		case 6:
			op_mw(t);
			break;
		case 7:
			op_ah(t);
			break;
		case 8:
			op_pd(t);
			break;
		case 9:
			op_raw(t);
			break;
		default:
			op_qp(t);
			break;
		}
		t->steps++;
	}
	return NULL;
}

/* Destroy what a table still holds; every destroy must succeed. */
static int teardown_failed(const char *what, int i)
{
	printf("# teardown: %s %d: %s\n", what, i, strerror(errno));
	return 1;
}

static int teardown(void)
{
	int i, d, fail = 0;

	for (i = 0; i < N_QP; i++)
		if (qps[i].obj && qp_destroy(&qps[i]))
			fail += teardown_failed("qps", i);
	for (i = 0; i < N_MW; i++)
		if (mws[i].obj && ibv_dealloc_mw(mws[i].obj))
			fail += teardown_failed("mws", i);
	for (i = 0; i < N_AH; i++)
		if (ahs[i].obj && ibv_destroy_ah(ahs[i].obj))
			fail += teardown_failed("ahs", i);
	for (i = 0; i < N_MR; i++)
		if (mrs[i].obj && ibv_dereg_mr(mrs[i].obj))
			fail += teardown_failed("mrs", i);
	for (i = 0; i < N_SRQ; i++)
		if (srqs[i].obj && ibv_destroy_srq(srqs[i].obj))
			fail += teardown_failed("srqs", i);
	for (i = 0; i < N_CQ; i++)
		if (cqs[i].obj && ibv_destroy_cq(cqs[i].obj))
			fail += teardown_failed("cqs", i);
	for (d = 0; d < 2; d++)
		for (i = 0; i < N_PD; i++)
			if (pds[d][i].obj && ibv_dealloc_pd(pds[d][i].obj))
				fail += teardown_failed("pd", i);
	return fail;
}

/* ------------------------------------------------------------ checks */

/* An RC or UD endpoint on device @d (vtest.h), buffer BUF_LEN. */
static bool ep_create(struct vt_ep *e, int d, enum ibv_qp_type type)
{
	const struct vt_ep_attr a = {
		.ctx = ctx[d],
		.pd = pd0[d],
		.buf_len = BUF_LEN,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		.cqe = 64,
		.type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return vt_ep_create(e, d, &a);
}

/* This program's connections: PSN 7, remote WRITE, timeout 14, rnr_retry 7. */
static const struct vt_conn conn_base = {
	.psn = 7,
	.access = IBV_ACCESS_REMOTE_WRITE,
	.timeout = 14,
	.rnr_retry = 7,
};

/* From @e towards QP @peer_qpn on device @peer_d. */
static void conn_to(struct vt_conn *c, const struct vt_ep *e, int peer_d,
		    uint32_t peer_qpn)
{
	*c = conn_base;
	ibv_query_gid(ctx[peer_d], 1, gid_index[peer_d], &c->dgid);
	c->sgid_index = gid_index[e->d];
	c->dest_qpn = peer_qpn;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	vt_init_attr(&a, &conn_base);
	return ibv_modify_qp(qp, &a, VT_INIT_MASK);
}

static void rtr_attr(struct vt_ep *e, int peer_d, uint32_t peer_qpn,
		     struct ibv_qp_attr *a)
{
	struct vt_conn c;

	conn_to(&c, e, peer_d, peer_qpn);
	vt_rtr_attr(a, &c);
}

static void rts_attr(struct ibv_qp_attr *a)
{
	vt_rts_attr(a, &conn_base);
}

static int ep_connect(struct vt_ep *e, int peer_d, uint32_t peer_qpn)
{
	struct vt_conn c;

	conn_to(&c, e, peer_d, peer_qpn);
	return vt_qp_connect(e->qp, &c);
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	long end = now_ms() + WAIT_MS;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0 && now_ms() < end)
		sleep_ms(1);
	return n;
}

/* Post a signaled WRITE of @len bytes from @a to @b, with these keys. */
static int post_write(struct vt_ep *a, struct vt_ep *b, uint32_t lkey,
		      uint32_t rkey, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)a->buf, len, lkey };
	struct ibv_send_wr wr, *bw;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(a->qp, &wr, &bw);
}

/* @a on device 0 and @b on device 1, RC, connected to each other. */
static bool pair_up(struct vt_ep *a, struct vt_ep *b)
{
	if (!ep_create(a, 0, IBV_QPT_RC))
		return false;
	if (!ep_create(b, 1, IBV_QPT_RC)) {
		vt_ep_destroy(a);
		return false;
	}
	if (ep_connect(a, 1, b->qp->qp_num) ||
	    ep_connect(b, 0, a->qp->qp_num)) {
		vt_ep_destroy(a);
		vt_ep_destroy(b);
		return false;
	}
	return true;
}

/* A fresh RC pair: a 32 KiB WRITE and a SEND, every byte compared. */
static void fresh_pair_works(const char *c)
{
	struct vt_ep a, b;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bw;
	struct ibv_recv_wr rw, *br;
	struct ibv_wc wc;
	const char *why = NULL;
	char name[128];
	uint32_t i;

	snprintf(name, sizeof(name), "%s: a fresh RC pair moves data, verified",
		 c);
	if (!pair_up(&a, &b)) {
		bad(name, "create or connect: %s", strerror(errno));
		return;
	}
	for (i = 0; i < BUF_LEN / 2; i++)
		a.buf[i] = i * 7 + 3;
	if (post_write(&a, &b, a.mr->lkey, b.mr->rkey, BUF_LEN / 2, 0) ||
	    poll_one(a.cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS) {
		why = "WRITE did not complete";
		goto out;
	}
	if (memcmp(a.buf, b.buf, BUF_LEN / 2)) {
		why = "WRITE data differ";
		goto out;
	}
	for (i = 0; i < 4000; i++)
		a.buf[i] = i * 13 + 1;
	sge = (struct ibv_sge){ (uintptr_t)a.buf, 4000, a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = &(struct ibv_sge){ (uintptr_t)b.buf + BUF_LEN / 2, 4000,
					b.mr->lkey };
	rw.num_sge = 1;
	if (ibv_post_recv(b.qp, &rw, &br) || ibv_post_send(a.qp, &wr, &bw) ||
	    poll_one(a.cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
	    poll_one(b.cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != 4000) {
		why = "SEND did not complete";
		goto out;
	}
	if (memcmp(a.buf, b.buf + BUF_LEN / 2, 4000))
		why = "SEND data differ";
out:
	vt_ep_destroy(&a);
	vt_ep_destroy(&b);
	check(name, !why, "%s", why);
}

/* ibv_create_qp with @cap on device 0 must fail. */
static void qp_cap_fails(const char *name, enum ibv_qp_type type,
			 struct ibv_qp_cap cap)
{
	struct ibv_cq *cq = ibv_create_cq(ctx[0], 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type, .cap = cap,
	};
	struct ibv_qp *qp = cq ? ibv_create_qp(pd0[0], &ia) : NULL;

	check(name, cq && !qp, "%s", cq ? "created" : "no CQ");
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

/* modify_qp of a fresh RC QP in state @from (RESET, INIT, RTR, RTS). */
static int transition(enum ibv_qp_state from, struct ibv_qp_attr *a,
		      int mask, enum ibv_qp_state *after)
{
	struct vt_ep e, peer;
	struct ibv_qp_attr r;
	struct ibv_qp_init_attr ia;
	int err = -1;

	if (!ep_create(&e, 0, IBV_QPT_RC))
		return -1;
	if (!ep_create(&peer, 1, IBV_QPT_RC)) {
		vt_ep_destroy(&e);
		return -1;
	}
	if (from >= IBV_QPS_INIT && to_init(e.qp))
		goto out;
	rtr_attr(&e, 1, peer.qp->qp_num, &r);
	if (from >= IBV_QPS_RTR && ibv_modify_qp(e.qp, &r, VT_RTR_MASK))
		goto out;
	rts_attr(&r);
	if (from >= IBV_QPS_RTS && ibv_modify_qp(e.qp, &r, VT_RTS_MASK))
		goto out;
	err = ibv_modify_qp(e.qp, a, mask);
	if (ibv_query_qp(e.qp, &r, IBV_QP_STATE, &ia))
		*after = (enum ibv_qp_state)-1;
	else
		*after = r.qp_state;
out:
	vt_ep_destroy(&e);
	vt_ep_destroy(&peer);
	return err;
}

static void transition_fails(const char *name, enum ibv_qp_state from,
			     struct ibv_qp_attr *a, int mask)
{
	enum ibv_qp_state after = (enum ibv_qp_state)-1;
	int err = transition(from, a, mask, &after);

	check(name, err > 0 && after == from,
	      "modify_qp returned %d, state %d after (was %d)", err, after,
	      from);
}

/*
 * One group, attached twice under two MLIDs (uverbs keeps both, ib_core
 * counts both in the QP's usecnt): both detaches succeed and then the QP
 * can be destroyed. Before srnic counted attach calls the second detach
 * failed and the QP could never be destroyed, not even at close (a WARN
 * in uverbs_destroy_ufile_hw; the QP, its CQ and PD leaked).
 */
static void mcast_two_mlids(void)
{
	const char *name = "attach_mcast twice (MLID 0, 5): both detach, the QP is destroyed";
	union ibv_gid gid = { .raw = { 0xff, 0x0e, [15] = 0x42 } };
	struct vt_ep e;
	int a1, a2, d1, d2, err;

	if (!ep_create(&e, 0, IBV_QPT_UD)) {
		bad(name, "create: %s", strerror(errno));
		return;
	}
	a1 = ibv_attach_mcast(e.qp, &gid, 0);
	a2 = ibv_attach_mcast(e.qp, &gid, 5);
	d1 = ibv_detach_mcast(e.qp, &gid, 0);
	d2 = ibv_detach_mcast(e.qp, &gid, 5);
	err = ibv_destroy_qp(e.qp);
	if (!err)
		e.qp = NULL;
	check(name, !a1 && !a2 && !d1 && !d2 && !err,
	      "attach %d %d, detach %d %d, destroy_qp %d", a1, a2, d1, d2,
	      err);
	if (e.qp) {
		/* still attached once: try what a user would */
		ibv_detach_mcast(e.qp, &gid, 0);
		ibv_detach_mcast(e.qp, &gid, 5);
		if (!ibv_destroy_qp(e.qp))
			e.qp = NULL;
	}
	vt_ep_destroy(&e);
}

/*
 * A type 1 window bound through a connected RC QP: the bind completes;
 * one reaching past its MR completes in error (or is refused at once).
 */
static void mw_bind_checks(void)
{
	const char *ok_name = "bind_mw: type 1 window over its MR completes";
	const char *bad_name = "bind_mw: a window past its MR fails";
	struct vt_ep a, b;
	struct ibv_mw_bind bind;
	struct ibv_mr *mr = NULL;
	struct ibv_mw *mw = NULL;
	struct ibv_wc wc;
	int err;

	if (!pair_up(&a, &b)) {
		bad(ok_name, "create or connect: %s", strerror(errno));
		return;
	}
	mr = ibv_reg_mr(pd0[0], a.buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(pd0[0], IBV_MW_TYPE_1);
	if (!mr || !mw) {
		bad(ok_name, "reg_mr/alloc_mw: %s", strerror(errno));
		goto out;
	}
	memset(&bind, 0, sizeof(bind));
	bind.wr_id = 1;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = (uintptr_t)a.buf;
	bind.bind_info.length = 4096;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	err = ibv_bind_mw(a.qp, mw, &bind);
	check(ok_name, !err && poll_one(a.cq, &wc) == 1 &&
	      wc.status == IBV_WC_SUCCESS, "bind_mw %d, completion %s", err,
	      err ? "-" : ibv_wc_status_str(wc.status));
	bind.wr_id = 2;
	bind.bind_info.length = 8192;
	err = ibv_bind_mw(a.qp, mw, &bind);
	check(bad_name, err || (poll_one(a.cq, &wc) == 1 &&
	      wc.status != IBV_WC_SUCCESS), "bound 8 KiB over a 4 KiB MR");
out:
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr)
		ibv_dereg_mr(mr);
	vt_ep_destroy(&a);
	vt_ep_destroy(&b);
}

static void errors_that_must_occur(void)
{
	struct ibv_qp_cap c = { 4, 4, 1, 1, 0 };
	struct ibv_qp_attr a;
	struct ibv_srq_init_attr sa;
	struct ibv_ah_attr ah;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_ah *h;
	void *p;

	c.max_send_wr = dattr.max_qp_wr + 1;
	qp_cap_fails("create_qp: max_send_wr = max + 1 fails", IBV_QPT_RC, c);
	c.max_send_wr = 0xffffffff;
	qp_cap_fails("create_qp: max_send_wr = 2^32 - 1 fails", IBV_QPT_RC, c);
	c.max_send_wr = 4;
	c.max_recv_sge = dattr.max_sge + 1;
	qp_cap_fails("create_qp: max_recv_sge = max + 1 fails", IBV_QPT_UC, c);
	c.max_recv_sge = 1;
	c.max_inline_data = 0x100000;
	qp_cap_fails("create_qp: max_inline_data 1 MiB fails", IBV_QPT_RC, c);
	c.max_inline_data = 0;
	qp_cap_fails("create_qp: XRC_SEND is not supported", IBV_QPT_XRC_SEND,
		     c);
	qp_cap_fails("create_qp: QP type 99 is not supported",
		     (enum ibv_qp_type)99, c);

	cq = ibv_create_cq(ctx[0], dattr.max_cqe + 1, NULL, NULL, 0);
	check("create_cq: max_cqe + 1 fails", !cq, "created");
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx[0], 16, NULL, NULL, 0);
	check("resize_cq: max_cqe + 1 fails",
	      cq && ibv_resize_cq(cq, dattr.max_cqe + 1), "resized");
	if (cq)
		ibv_destroy_cq(cq);

	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	sa.attr.max_wr = dattr.max_srq_wr + 1;
	srq = ibv_create_srq(pd0[0], &sa);
	check("create_srq: max_wr = max + 1 fails", !srq, "created");
	if (srq)
		ibv_destroy_srq(srq);
	sa.attr.max_wr = 16;
	srq = ibv_create_srq(pd0[0], &sa);
	if (srq) {
		struct ibv_srq_attr m = { .srq_limit = 1000 };

		check("modify_srq: srq_limit above its size fails",
		      ibv_modify_srq(srq, &m, IBV_SRQ_LIMIT), "modified");
		ibv_destroy_srq(srq);
	} else {
		bad("modify_srq: srq_limit above its size fails", "no SRQ");
	}

	mr = ibv_reg_mr(pd0[0], gone_page, 4096, IBV_ACCESS_LOCAL_WRITE);
	check("reg_mr: unmapped memory fails", !mr, "registered");
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd0[0], ro_page, 4096, IBV_ACCESS_LOCAL_WRITE);
	check("reg_mr: read-only memory for LOCAL_WRITE fails", !mr,
	      "registered");
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd0[0], ro_page, 4096, 0);
	check("reg_mr: read-only memory without write access works", mr,
	      "%s", strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	p = malloc(4096);
	mr = p ? ibv_reg_mr(pd0[0], p, (size_t)1 << 40,
			    IBV_ACCESS_LOCAL_WRITE) : NULL;
	check("reg_mr: 1 TiB past a 4 KiB buffer fails", !mr, "registered");
	if (mr)
		ibv_dereg_mr(mr);
	/*
	 * An ODP MR pins nothing: its length alone sized a 2 GiB translation
	 * table here (kvmalloc's WARN above INT_MAX, found by the random
	 * part); too big a table is refused with ENOMEM
	 */
	errno = 0;
	mr = p ? ibv_reg_mr(pd0[0], p, (size_t)1 << 40, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_ON_DEMAND) : NULL;
	check("reg_mr: a 1 TiB ODP MR fails with ENOMEM (its table too big)",
	      !mr && errno == ENOMEM, "%s", mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	free(p);

	/* IBA 10.3.1: transitions that are not in the state diagram */
	rts_attr(&a);
	transition_fails("modify_qp: RESET -> RTS fails", IBV_QPS_RESET, &a,
			 VT_RTS_MASK);
	transition_fails("modify_qp: INIT -> RTS fails", IBV_QPS_INIT, &a,
			 VT_RTS_MASK);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	transition_fails("modify_qp: RTS -> RTR fails", IBV_QPS_RTS, &a,
			 IBV_QP_STATE);
	a.qp_state = IBV_QPS_SQE;
	transition_fails("modify_qp: RTS -> SQE (user) fails", IBV_QPS_RTS,
			 &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 2;
	transition_fails("modify_qp: port 2 fails", IBV_QPS_RESET, &a,
			 IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			 IBV_QP_ACCESS_FLAGS);
	a.port_num = 1;
	a.pkey_index = 1000;
	transition_fails("modify_qp: P_Key index 1000 fails", IBV_QPS_RESET,
			 &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			 IBV_QP_ACCESS_FLAGS);
	a.pkey_index = 0;
	a.qp_state = IBV_QPS_INIT;
	a.qp_access_flags = 0x80000000;
	transition_fails("modify_qp: unknown access flag fails",
			 IBV_QPS_RESET, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	{
		struct vt_ep e;

		if (ep_create(&e, 0, IBV_QPT_RC)) {
			rtr_attr(&e, 1, 0x1234, &a);
			vt_ep_destroy(&e);
		}
	}
	a.path_mtu = 6;
	transition_fails("modify_qp: path MTU 6 fails", IBV_QPS_INIT, &a,
			 VT_RTR_MASK);
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x1000000;
	transition_fails("modify_qp: dest QPN 2^24 fails", IBV_QPS_INIT, &a,
			 VT_RTR_MASK);
	a.dest_qp_num = 0x1234;
	a.ah_attr.grh.sgid_index = 200;
	transition_fails("modify_qp: AV on GID index 200 fails",
			 IBV_QPS_INIT, &a, VT_RTR_MASK);
	a.ah_attr.grh.sgid_index = gid_index[0];
	a.max_dest_rd_atomic = dattr.max_qp_init_rd_atom + 1;
	transition_fails("modify_qp: max_dest_rd_atomic = max + 1 fails",
			 IBV_QPS_INIT, &a, VT_RTR_MASK);
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 32;
	transition_fails("modify_qp: min_rnr_timer 32 fails", IBV_QPS_INIT,
			 &a, VT_RTR_MASK);
	rts_attr(&a);
	a.timeout = 32;
	transition_fails("modify_qp: timeout 32 fails", IBV_QPS_RTR, &a,
			 VT_RTS_MASK);
	a.timeout = 14;
	a.retry_cnt = 8;
	transition_fails("modify_qp: retry_cnt 8 fails", IBV_QPS_RTR, &a,
			 VT_RTS_MASK);
	a.retry_cnt = 7;
	a.max_rd_atomic = dattr.max_qp_rd_atom + 1;
	transition_fails("modify_qp: max_rd_atomic = max + 1 fails",
			 IBV_QPS_RTR, &a, VT_RTS_MASK);

	memset(&ah, 0, sizeof(ah));
	ah.is_global = 1;
	ah.port_num = 1;
	ah.grh.sgid_index = 200;
	ah.grh.hop_limit = 64;
	ibv_query_gid(ctx[1], 1, gid_index[1], &ah.grh.dgid);
	h = ibv_create_ah(pd0[0], &ah);
	check("create_ah: GID index 200 fails", !h, "created");
	if (h)
		ibv_destroy_ah(h);
	ah.grh.sgid_index = gid_index[0];
	ah.port_num = 2;
	h = ibv_create_ah(pd0[0], &ah);
	check("create_ah: port 2 fails", !h, "created");
	if (h)
		ibv_destroy_ah(h);

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ctx[0]->cmd_fd, (off_t)0x7fff0000ull << 12);
	check("mmap of an offset never handed out fails", p == MAP_FAILED,
	      "mapped");
	if (p != MAP_FAILED)
		munmap(p, 4096);
}

/* ------------------------------------------------------------ races */

/*
 * 4. Races on one object: several threads at the same object at once.
 * Each call either succeeds or fails with a clean errno (EINVAL, ENOENT or
 * EBUSY: the object is gone, busy or in the wrong state); every WR posted
 * completes. A verb user space cannot race with a destroy without touching
 * freed memory (libibverbs frees a QP's struct in ibv_destroy_qp()) goes
 * as a raw write() command that names the object by its handle, which the
 * kernel looks up: modify_qp and the post_send doorbell.
 */
#define RACE_ROUNDS	12
#define RACE_WRS	12

struct race {
	atomic_bool stop;
	atomic_int started;
	int fd;
	uint32_t handle;
	struct rng r;
	atomic_long ok, clean;	/* successes; failures with a clean errno */
	atomic_long unclean;	/* failures with another errno */
	atomic_int bad_errno;	/* the last such errno */
};

static void race_note(struct race *x, bool success)
{
	int e = errno;

	if (success)
		atomic_fetch_add(&x->ok, 1);
	else if (e == EINVAL || e == ENOENT || e == EBUSY)
		atomic_fetch_add(&x->clean, 1);
	else {
		atomic_fetch_add(&x->unclean, 1);
		atomic_store(&x->bad_errno, e);
	}
}

static void race_init(struct race *x, int fd, uint32_t handle, int round)
{
	memset(x, 0, sizeof(*x));
	x->fd = fd;
	x->handle = handle;
	x->r.s = (seed + 7) * 0x9e3779b97f4a7c15ull + round * 0x51ed27u;
	x->r.s |= 1;
}

static void race_sum(struct race *sum, struct race *x)
{
	atomic_fetch_add(&sum->ok, atomic_load(&x->ok));
	atomic_fetch_add(&sum->clean, atomic_load(&x->clean));
	atomic_fetch_add(&sum->unclean, atomic_load(&x->unclean));
	if (atomic_load(&x->unclean))
		atomic_store(&sum->bad_errno, atomic_load(&x->bad_errno));
}

/*
 * Successes, and clean failures when @need_fail (the race happened both
 * ways), nothing else.
 */
static void race_check(const char *name, struct race *x, bool need_fail)
{
	check(name, atomic_load(&x->ok) &&
	      (!need_fail || atomic_load(&x->clean)) &&
	      !atomic_load(&x->unclean),
	      "%ld ok, %ld failed cleanly, %ld failed with another errno (%s)",
	      atomic_load(&x->ok), atomic_load(&x->clean),
	      atomic_load(&x->unclean), strerror(atomic_load(&x->bad_errno)));
}

/* The rxe provider's doorbell (a POST_SEND of no WR), raw, until stopped. */
static void *race_doorbell(void *arg)
{
	struct race *x = arg;
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_post_send c = {
		.response = (uintptr_t)&resp,
		.qp_handle = x->handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	atomic_fetch_add(&x->started, 1);
	while (!atomic_load(&x->stop))
		race_note(x, raw_write(x->fd, IB_USER_VERBS_CMD_POST_SEND, &c,
				       sizeof(c), sizeof(resp)) >= 0);
	return NULL;
}

/* Raw MODIFY_QP to a random state (the attributes INIT needs), until stopped. */
static void *race_modify(void *arg)
{
	static const uint32_t states[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTS, IBV_QPS_SQD,
		IBV_QPS_SQE, IBV_QPS_ERR,
	};
	struct race *x = arg;
	struct ib_uverbs_modify_qp c;

	atomic_fetch_add(&x->started, 1);
	while (!atomic_load(&x->stop)) {
		memset(&c, 0, sizeof(c));
		c.qp_handle = x->handle;
		c.qp_state = states[rnd(&x->r) %
				   (sizeof(states) / sizeof(states[0]))];
		c.attr_mask = IBV_QP_STATE;
		if (c.qp_state == IBV_QPS_INIT) {
			c.attr_mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       IBV_QP_ACCESS_FLAGS;
			c.port_num = 1;
			c.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		}
		race_note(x, raw_write(x->fd, IB_USER_VERBS_CMD_MODIFY_QP, &c,
				       sizeof(c), 0) >= 0);
	}
	return NULL;
}

/* Let racers run: all @n of @x started, then @ms milliseconds. */
static void race_let_run(struct race *const *x, int n, long ms)
{
	long end = now_ms() + WAIT_MS;
	int i;

	for (i = 0; i < n; i++)
		while (atomic_load(&x[i]->started) == 0 && now_ms() < end)
			sleep_ms(1);
	sleep_ms(ms);
}

/* ibv_destroy_qp, again while a raw command holds the QP (EBUSY). */
static int destroy_qp_busy(struct ibv_qp *qp)
{
	long end = now_ms() + WAIT_MS;
	int err;

	while ((err = ibv_destroy_qp(qp)) == EBUSY && now_ms() < end)
		;
	return err;
}

/* modify_qp, the post_send doorbell and destroy_qp on one QP, with WRITEs queued. */
static void race_qp(void)
{
	struct race door, mod, sd, sm;
	struct race *all[2] = { &door, &mod };
	pthread_t t[2];
	struct vt_ep a, b;
	int round, i, setup = 0, destroy = 0;

	memset(&sd, 0, sizeof(sd));
	memset(&sm, 0, sizeof(sm));
	for (round = 0; round < RACE_ROUNDS; round++) {
		if (!pair_up(&a, &b)) {
			setup++;
			continue;
		}
		for (i = 0; i < RACE_WRS / 2; i++)
			if (post_write(&a, &b, a.mr->lkey, b.mr->rkey, 4096, i))
				setup++;
		race_init(&door, ctx[0]->cmd_fd, a.qp->handle, round);
		race_init(&mod, ctx[0]->cmd_fd, a.qp->handle, round + 100);
		pthread_create(&t[0], NULL, race_doorbell, &door);
		pthread_create(&t[1], NULL, race_modify, &mod);
		race_let_run(all, 2, 1 + round % 5);
		if (destroy_qp_busy(a.qp))
			destroy++;
		else
			a.qp = NULL;
		sleep_ms(2);	/* the racers now meet a handle that is gone */
		atomic_store(&door.stop, true);
		atomic_store(&mod.stop, true);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		race_sum(&sd, &door);
		race_sum(&sm, &mod);
		vt_ep_destroy(&a);
		vt_ep_destroy(&b);
	}
	check("race on one QP: set up (pair connected, WRITEs posted)",
	      !setup, "%d rounds failed", setup);
	check("race on one QP: destroy_qp succeeds under modify_qp and doorbells",
	      !destroy, "%d of %d failed", destroy, RACE_ROUNDS);
	race_check("race on one QP: doorbells succeed, then fail cleanly", &sd,
		   true);
	race_check("race on one QP: modify_qp succeeds and fails cleanly", &sm,
		   true);
}

/*
 * dereg_mr of the local or the remote MR of RDMA WRITEs in flight; more
 * WRITEs follow with its key until one fails. Every WRITE completes once:
 * in success, with the one access error of the round, or flushed. A flush
 * may come before the access error: WRITEs sent before a later one failed
 * to gather from the dead local MR, still waiting for their ACK when the
 * QP enters the error state, are outstanding and complete flushed (IBA
 * 10.8.3.2; rdma_rxe's completer does the same), and completions come in
 * order. Seen on a loaded host: a flush, then the local protection error.
 */
static void race_dereg_mr(void)
{
	enum { TOTAL = 512, DEPTH = 12, LEN = BUF_LEN / 4 };
	int round, setup = 0, dereg = 0, lost = 0, badst = 0, noerr = 0;
	enum ibv_wc_status bad_status = IBV_WC_SUCCESS;
	static uint8_t seen[TOTAL];
	uint32_t posted, done, lkey, rkey;
	struct ibv_wc wc;
	struct vt_ep a, b;
	bool failed, erred;
	long end;

	for (round = 0; round < RACE_ROUNDS; round++) {
		struct vt_ep *owner = round % 2 ? &a : &b;

		if (!pair_up(&a, &b)) {
			setup++;
			continue;
		}
		memset(seen, 0, sizeof(seen));
		lkey = a.mr->lkey;
		rkey = b.mr->rkey;
		for (posted = 0; posted < DEPTH; posted++)
			if (post_write(&a, &b, lkey, rkey, LEN, posted))
				break;
		setup += posted < DEPTH;
		sleep_ms(round % 3);
		if (ibv_dereg_mr(owner->mr))
			dereg++;
		else
			owner->mr = NULL;
		failed = false;
		erred = false;
		done = 0;
		end = now_ms() + WAIT_MS;
		while (done < posted && now_ms() < end) {
			if (!failed && posted < TOTAL && posted - done < DEPTH &&
			    !post_write(&a, &b, lkey, rkey, LEN, posted))
				posted++;
			if (ibv_poll_cq(a.cq, 1, &wc) != 1) {
				sched_yield();
				continue;
			}
			if (wc.wr_id >= TOTAL || seen[wc.wr_id]++) {
				lost++;
				break;
			}
			done++;
			if (wc.status == IBV_WC_SUCCESS)
				continue;
			failed = true;
			if (wc.status == IBV_WC_WR_FLUSH_ERR)
				continue;
			if (!erred && (wc.status == IBV_WC_LOC_PROT_ERR ||
				       wc.status == IBV_WC_REM_ACCESS_ERR)) {
				erred = true;
				continue;
			}
			badst++;		/* a second error, or another one */
			bad_status = wc.status;
		}
		lost += done < posted;
		noerr += !erred;
		vt_ep_destroy(&a);
		vt_ep_destroy(&b);
	}
	check("dereg_mr under WRITEs: set up", !setup, "%d rounds failed",
	      setup);
	check("dereg_mr under WRITEs: the dereg succeeds", !dereg,
	      "%d of %d failed", dereg, RACE_ROUNDS);
	check("dereg_mr under WRITEs: every WRITE completes once",
	      !lost, "%d rounds lost or doubled a completion", lost);
	check("dereg_mr under WRITEs: success, one access error, flushes",
	      !badst, "%d other statuses (last %s)", badst,
	      ibv_wc_status_str(bad_status));
	check("dereg_mr under WRITEs: a WRITE with the key fails in each round",
	      !noerr, "%d rounds without an access error", noerr);
}

struct destroyer {
	struct race x;
	void *obj;
	int (*destroy)(void *obj);
};

static int destroy_cq_obj(void *obj) { return ibv_destroy_cq(obj); }
static int dealloc_pd_obj(void *obj) { return ibv_dealloc_pd(obj); }

/* Destroy ->obj again and again until it succeeds (or the deadline). */
static void *race_destroyer(void *arg)
{
	struct destroyer *d = arg;
	long end = now_ms() + WAIT_MS;
	int err;

	atomic_fetch_add(&d->x.started, 1);
	do {
		err = d->destroy(d->obj);
		errno = err;
		race_note(&d->x, !err);
	} while (err && now_ms() < end);
	return NULL;
}

/* destroy_cq while a QP uses it, racing that QP's destroy. */
static void race_destroy_cq(void)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct race sum, *all[1];
	struct destroyer d;
	int round, setup = 0, destroy = 0;
	struct ibv_qp *qp;
	pthread_t t;

	memset(&sum, 0, sizeof(sum));
	for (round = 0; round < RACE_ROUNDS; round++) {
		memset(&d, 0, sizeof(d));
		d.destroy = destroy_cq_obj;
		d.obj = ibv_create_cq(ctx[0], 16, NULL, NULL, 0);
		if (!d.obj) {
			setup++;
			continue;
		}
		ia.send_cq = d.obj;
		ia.recv_cq = d.obj;
		qp = ibv_create_qp(pd0[0], &ia);
		if (!qp) {
			setup++;
			ibv_destroy_cq(d.obj);
			continue;
		}
		if (round % 2)
			to_init(qp);
		all[0] = &d.x;
		pthread_create(&t, NULL, race_destroyer, &d);
		race_let_run(all, 1, round % 3);
		if (ibv_destroy_qp(qp))
			destroy++;
		pthread_join(t, NULL);
		race_sum(&sum, &d.x);
	}
	check("destroy_cq with a QP attached: set up", !setup,
	      "%d rounds failed", setup);
	check("destroy_cq with a QP attached: the QP's destroy succeeds",
	      !destroy, "%d of %d failed", destroy, RACE_ROUNDS);
	check("destroy_cq with a QP attached: the CQ is destroyed once the QP is",
	      atomic_load(&sum.ok) == RACE_ROUNDS - setup, "%ld of %d",
	      atomic_load(&sum.ok), RACE_ROUNDS - setup);
	race_check("destroy_cq with a QP attached: fails cleanly, then succeeds",
		   &sum, true);
}

/* dealloc_pd while an MR, a QP and an AH use it, racing their destroys. */
static void race_dealloc_pd(void)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .hop_limit = 64 },
	};
	int round, setup = 0, destroy = 0;
	struct race sum, *all[1];
	struct destroyer d;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	pthread_t t;

	memset(&sum, 0, sizeof(sum));
	aa.grh.sgid_index = gid_index[0];
	ibv_query_gid(ctx[1], 1, gid_index[1], &aa.grh.dgid);
	buf = aligned_alloc(4096, 4096);
	cq = ibv_create_cq(ctx[0], 16, NULL, NULL, 0);
	if (!buf || !cq) {
		bad("dealloc_pd with children: set up", "%s", strerror(errno));
		free(buf);
		return;
	}
	ia.send_cq = cq;
	ia.recv_cq = cq;
	for (round = 0; round < RACE_ROUNDS; round++) {
		memset(&d, 0, sizeof(d));
		d.destroy = dealloc_pd_obj;
		d.obj = ibv_alloc_pd(ctx[0]);
		mr = d.obj ? ibv_reg_mr(d.obj, buf, 4096,
					IBV_ACCESS_LOCAL_WRITE) : NULL;
		qp = mr ? ibv_create_qp(d.obj, &ia) : NULL;
		ah = qp ? ibv_create_ah(d.obj, &aa) : NULL;
		if (!ah) {
			setup++;
			if (qp)
				ibv_destroy_qp(qp);
			if (mr)
				ibv_dereg_mr(mr);
			if (d.obj)
				ibv_dealloc_pd(d.obj);
			continue;
		}
		all[0] = &d.x;
		pthread_create(&t, NULL, race_destroyer, &d);
		race_let_run(all, 1, round % 3);
		/* the children go in a different order each round */
		if (round % 2) {
			destroy += !!ibv_destroy_qp(qp);
			destroy += !!ibv_destroy_ah(ah);
			destroy += !!ibv_dereg_mr(mr);
		} else {
			destroy += !!ibv_dereg_mr(mr);
			destroy += !!ibv_destroy_ah(ah);
			destroy += !!ibv_destroy_qp(qp);
		}
		pthread_join(t, NULL);
		race_sum(&sum, &d.x);
	}
	ibv_destroy_cq(cq);
	free(buf);
	check("dealloc_pd with children: set up", !setup, "%d rounds failed",
	      setup);
	check("dealloc_pd with children: each child's destroy succeeds",
	      !destroy, "%d failed", destroy);
	check("dealloc_pd with children: the PD is freed once they are",
	      atomic_load(&sum.ok) == RACE_ROUNDS - setup, "%ld of %d",
	      atomic_load(&sum.ok), RACE_ROUNDS - setup);
	race_check("dealloc_pd with children: fails cleanly, then succeeds",
		   &sum, true);
}

struct resizer {
	struct race x;
	struct ibv_cq *cq;
};

/* Resize @cq to random sizes (never below what may be in it), until stopped. */
static void *race_resize(void *arg)
{
	struct resizer *z = arg;

	atomic_fetch_add(&z->x.started, 1);
	while (!atomic_load(&z->x.stop)) {
		errno = ibv_resize_cq(z->cq, 32 + rnd(&z->x.r) % 225);
		race_note(&z->x, !errno);
		/* rdma-core's CQ spinlock is unfair: let the poller in */
		usleep(200 + rnd(&z->x.r) % 800);
	}
	return NULL;
}

/*
 * resize_cq of a receive CQ while SENDs complete into it and it is polled:
 * every SEND arrives once, in order, its bytes intact.
 */
static void race_resize_cq(void)
{
	enum { SENDS = 160, RQ = 16, SQ = 8, LEN = 200 };
	struct ibv_recv_wr rw, *br;
	struct ibv_send_wr wr, *bw;
	struct resizer z;
	struct race *all[1];
	struct ibv_sge sge;
	uint32_t posted = 0, recv_posted = 0, sent_done = 0, got = 0;
	const char *why = NULL;
	struct ibv_wc wc;
	struct vt_ep a, b;
	long end;
	pthread_t t;
	int i;

	if (!pair_up(&a, &b)) {
		bad("resize_cq under traffic: set up", "%s", strerror(errno));
		return;
	}
	memset(&z, 0, sizeof(z));
	race_init(&z.x, 0, 0, 1);
	z.cq = b.cq;
	all[0] = &z.x;
	pthread_create(&t, NULL, race_resize, &z);
	race_let_run(all, 1, 0);
	end = now_ms() + 6 * WAIT_MS;
	while (got < SENDS && !why && now_ms() < end) {
		while (recv_posted < SENDS && recv_posted - got < RQ) {
			uint32_t slot = recv_posted % RQ;

			rw = (struct ibv_recv_wr){ .wr_id = recv_posted,
				.num_sge = 1 };
			rw.sg_list = &(struct ibv_sge){
				(uintptr_t)b.buf + slot * 256, 256, b.mr->lkey };
			if (ibv_post_recv(b.qp, &rw, &br)) {
				why = "post_recv failed";
				break;
			}
			recv_posted++;
		}
		while (posted < recv_posted && posted - sent_done < SQ) {
			uint32_t slot = posted % RQ;

			for (i = 0; i < LEN; i++)
				a.buf[slot * 256 + i] = (uint8_t)(posted * 31 + i);
			sge = (struct ibv_sge){ (uintptr_t)a.buf + slot * 256,
						LEN, a.mr->lkey };
			wr = (struct ibv_send_wr){ .wr_id = posted,
				.sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED };
			if (ibv_post_send(a.qp, &wr, &bw)) {
				why = "post_send failed";
				break;
			}
			posted++;
		}
		while (ibv_poll_cq(a.cq, 1, &wc) == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				why = "a SEND failed";
			sent_done++;
		}
		while (!why && ibv_poll_cq(b.cq, 1, &wc) == 1) {
			uint32_t slot = got % RQ;

			if (wc.status != IBV_WC_SUCCESS || wc.wr_id != got ||
			    wc.byte_len != LEN) {
				why = "a receive completion failed, was lost or came out of order";
				break;
			}
			for (i = 0; i < LEN; i++)
				if (b.buf[slot * 256 + i] !=
				    (uint8_t)(got * 31 + i))
					why = "received bytes differ";
			got++;
		}
		if (!why)
			sched_yield();
	}
	atomic_store(&z.x.stop, true);
	pthread_join(t, NULL);
	vt_ep_destroy(&a);
	vt_ep_destroy(&b);
	if (!why && got < SENDS)
		why = "not every SEND arrived in time";
	check("resize_cq under traffic and polls: every SEND arrives once, in order, intact",
	      !why, "%s (%u of %d)", why, got, SENDS);
	race_check("resize_cq under traffic and polls: resizes succeed or fail cleanly",
		   &z.x, false);
}

static void same_object_races(void)
{
	race_qp();
	race_dereg_mr();
	race_destroy_cq();
	race_dealloc_pd();
	race_resize_cq();
}

int main(int argc, char **argv)
{
	struct thr th[MAX_THREADS];
	int d, i, v, nthr, secs, left;
	long steps = 0, end;
	char name[128];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 8) {
		fprintf(stderr,
			"usage: %s DEV0 GID0 DEV1 GID1 SEED SECS THREADS\n",
			argv[0]);
		return 2;
	}
	for (d = 0; d < 2; d++) {
		dev_name[d] = argv[1 + 2 * d];
		gid_index[d] = atoi(argv[2 + 2 * d]);
		ctx[d] = open_dev(dev_name[d]);
		pd0[d] = ctx[d] ? ibv_alloc_pd(ctx[d]) : NULL;
		if (!pd0[d]) {
			fprintf(stderr, "cannot open %s\n", dev_name[d]);
			return 1;
		}
	}
	raw_ctx = open_dev(dev_name[0]);
	if (!raw_ctx || ibv_query_device(ctx[0], &dattr)) {
		fprintf(stderr, "cannot query %s\n", dev_name[0]);
		return 1;
	}
	seed = strtoull(argv[5], NULL, 0);
	secs = atoi(argv[6]);
	nthr = atoi(argv[7]);
	if (nthr < 1 || nthr > MAX_THREADS)
		nthr = 4;
	printf("# seed %s, %d s, %d threads\n", argv[5], secs, nthr);

	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	gone_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro_page == MAP_FAILED || gone_page == MAP_FAILED)
		return 1;
	munmap(gone_page, 4096);
	(void)*(volatile uint8_t *)ro_page;

	fresh_pair_works("before");
	errors_that_must_occur();
	mcast_two_mlids();
	mw_bind_checks();

	for (i = 0; i < N_CQ; i++)
		pthread_rwlock_init(&cqs[i].lk, NULL);
	for (i = 0; i < N_SRQ; i++)
		pthread_rwlock_init(&srqs[i].lk, NULL);
	for (i = 0; i < N_QP; i++)
		pthread_rwlock_init(&qps[i].lk, NULL);
	for (i = 0; i < N_MR; i++)
		pthread_rwlock_init(&mrs[i].lk, NULL);
	for (i = 0; i < N_MW; i++)
		pthread_rwlock_init(&mws[i].lk, NULL);
	for (i = 0; i < N_AH; i++)
		pthread_rwlock_init(&ahs[i].lk, NULL);
	for (d = 0; d < 2; d++)
		for (i = 0; i < N_PD; i++)
			pthread_rwlock_init(&pds[d][i].lk, NULL);

	for (i = 0; i < nthr; i++) {
		th[i].id = i;
		th[i].r.s = (seed + 1) * 0x9e3779b97f4a7c15ull + i * 0x1234567u;
		th[i].r.s |= 1;
		th[i].steps = 0;
		th[i].buf = aligned_alloc(4096, BUF_LEN);
		if (!th[i].buf)
			return 1;
		memset(th[i].buf, 0, BUF_LEN);
		for (d = 0; d < 2; d++) {
			th[i].mr[d] = ibv_reg_mr(pd0[d], th[i].buf, BUF_LEN,
						 IBV_ACCESS_LOCAL_WRITE |
						 IBV_ACCESS_REMOTE_WRITE |
						 IBV_ACCESS_REMOTE_READ |
						 IBV_ACCESS_REMOTE_ATOMIC);
			if (!th[i].mr[d])
				return 1;
		}
	}
	end = now_ms() + secs * 1000L;
	for (i = 0; i < nthr; i++)
		pthread_create(&th[i].t, NULL, fuzz, &th[i]);
	while ((left = end - now_ms()) > 0)
		sleep_ms(left > 1000 ? 1000 : left);
	atomic_store(&stop, true);
	for (i = 0; i < nthr; i++) {
		pthread_join(th[i].t, NULL);
		steps += th[i].steps;
	}
	printf("# %ld steps\n", steps);
	/*
	 * Each class must have succeeded and failed, except: a bind
	 * succeeds only through a QP in RTS, rare here (mw_bind_checks()
	 * checks one that does); a destroy fails
	 * only for an object in use (a QP only while attached to a group).
	 */
	for (v = 0; v < V_N; v++) {
		bool need_ok = v != V_BIND_MW;
		bool need_fail = v != V_DESTROY_QP && v != V_DESTROY_SRQ &&
				 v != V_DESTROY_CQ;
		long n_ok = atomic_load(&tally[v][1]);
		long n_fail = atomic_load(&tally[v][0]);

		printf("# %-12s %6ld ok %6ld failed\n", vname[v], n_ok, n_fail);
		snprintf(name, sizeof(name), "fuzz: %s %s", vname[v],
			 need_ok && need_fail ? "both succeeded and failed" :
			 need_ok ? "succeeded" : "failed");
		check(name, (!need_ok || n_ok) && (!need_fail || n_fail),
		      "%ld ok, %ld failed", n_ok, n_fail);
	}
	i = teardown();
	check("teardown: every object left is destroyed", !i,
	      "%d destroy calls failed", i);
	same_object_races();
	for (i = 0; i < nthr; i++) {
		for (d = 0; d < 2; d++)
			ibv_dereg_mr(th[i].mr[d]);
		free(th[i].buf);
	}
	fresh_pair_works("after");

	ibv_close_device(raw_ctx);
	for (d = 0; d < 2; d++) {
		ibv_dealloc_pd(pd0[d]);
		ibv_close_device(ctx[d]);
	}
	printf("uverbs_fuzz: done, %d failed\n", fails);
	return 0;
}
