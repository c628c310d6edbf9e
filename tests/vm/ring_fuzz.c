// SPDX-License-Identifier: GPL-2.0
/*
 * ring_fuzz: hostile user rings against srnic, through stock libibverbs
 * (rxe provider), run by tests/vm/test_ring_fuzz.sh.
 *
 *   ring_fuzz DEV0 GID0 DEV1 GID1 SEED
 *
 * DEV0 and DEV1 are the two ends of a veth pair, with the indexes of their
 * IPv4 RoCEv2 GIDs; RC QPs on DEV0 ("a") talk to RC QPs on DEV1 ("b").
 *
 * The rxe provider keeps each ring (SQ, RQ, SRQ, CQ) mmap'd from the uverbs
 * file: the mappings of /dev/infiniband/uverbsN that appear in
 * /proc/self/maps while a QP, CQ or SRQ is created are its rings (header:
 * struct rxe_queue_buf of <rdma/rdma_user_rxe.h>), told apart by their
 * capacities (index_mask), which this program chooses distinct. It writes
 * the rings behind the provider's back - indices backward, forward, out of
 * range, malformed WQEs, garbage - and rings the SQ doorbell itself: an
 * empty IB_USER_VERBS_CMD_POST_SEND written to the context's cmd_fd, as the
 * provider does.
 *
 * Each case checks that the call returns (the script bounds the run in
 * time and checks the kernel log for stalls and warnings), that the QP
 * whose ring was broken goes to ERR (ibv_query_qp) and its WQEs complete,
 * that the counter that fits moves (ring_index_errors, wqe_format_errors),
 * and that a fresh pair then moves data, every byte compared. The random
 * cases draw from SEED (printed, so a failure can be replayed).
 *
 * Prints one line per check, "ok NAME" or "not ok NAME: reason", then
 * "ring_fuzz: done, N failed"; exits 0 when it ran to the end.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/select.h>
#include <sys/time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "vtest.h"

/* Capacities (index_mask) that tell the rings apart. */
#define SQ_WR		31
#define RQ_WR		63
#define SRQ_WR		127
#define CQ_CQE		255
#define BUF_LEN		(64 * 1024)
#define WAIT_MS		10000		/* an expected event, busy TCG host */
#define MAX_MAPS	64

static const char *dev_name[2];
static int gid_index[2];
static struct ibv_context *ctx[2];
static struct ibv_pd *pd[2];
static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* hw counter NAME of device @d, port 1; -1 if it cannot be read */
static long long counter(int d, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 dev_name[d], name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * hw counter NAME of device @d once it has moved past @before, or its value
 * after 2 s. ib_core caches a device's counters for a few jiffies after each
 * read (rdma_hw_stats lifespan), so a read right after the event may still
 * show the value from before it.
 */
static long long counter_past(int d, const char *name, long long before)
{
	long end = now_ms() + 2000;
	long long v;

	while ((v = counter(d, name)) <= before && now_ms() < end)
		sleep_ms(20);
	return v;
}

/* ------------------------------------------------------------ ring maps */

struct maps {
	int n;
	uintptr_t start[MAX_MAPS];
};

static void maps_read(struct maps *m)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	m->n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && m->n < MAX_MAPS) {
		unsigned long lo, hi;

		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			m->start[m->n++] = lo;
	}
	fclose(f);
}

/* The ring of capacity @mask that appeared between @before and now. */
static struct rxe_queue_buf *ring_find(const struct maps *before,
				       uint32_t mask)
{
	struct maps after;
	int i, j;

	maps_read(&after);
	for (i = 0; i < after.n; i++) {
		struct rxe_queue_buf *q = (void *)after.start[i];
		bool old = false;

		for (j = 0; j < before->n; j++)
			old |= before->start[j] == after.start[i];
		if (!old && q->index_mask == mask)
			return q;
	}
	return NULL;
}

static void *slot(struct rxe_queue_buf *q, uint32_t index)
{
	return q->data + ((size_t)(index & q->index_mask) << q->log2_elem_size);
}

static uint32_t load(uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* The SQ doorbell, as the rxe provider rings it: POST_SEND of no WR. */
static int doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} c;
	struct ib_uverbs_post_send_resp resp;

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp->handle;
	c.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (write(qp->context->cmd_fd, &c, sizeof(c)) != sizeof(c))
		return errno;
	return 0;
}

/* ------------------------------------------------------------ endpoints */

/* An endpoint (vtest.h) and the rings the rxe provider mapped for it. */
struct ep {
	struct vt_ep v;
	struct rxe_queue_buf *sq, *rq, *srq_ring, *cq_ring;
};

static void ep_destroy(struct ep *e)
{
	vt_ep_destroy(&e->v);
	memset(e, 0, sizeof(*e));
}

static bool ep_create(struct ep *e, int d, bool with_srq)
{
	struct vt_ep_attr a = {
		.ctx = ctx[d],
		.pd = pd[d],
		.buf_len = BUF_LEN,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
		.cqe = CQ_CQE,
		.type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = SQ_WR,
			.max_recv_wr = RQ_WR,
			.max_send_sge = 2,
			.max_recv_sge = 2,
		},
	};
	struct maps m;

	memset(e, 0, sizeof(*e));
	/* the rings tell apart by their capacities: one look before them all */
	maps_read(&m);
	if (with_srq) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = SRQ_WR, .max_sge = 2 },
		};

		a.srq = ibv_create_srq(pd[d], &sa);
		if (!a.srq)
			return false;
	}
	if (!vt_ep_create(&e->v, d, &a))
		return false;
	e->cq_ring = ring_find(&m, CQ_CQE);
	e->srq_ring = with_srq ? ring_find(&m, SRQ_WR) : NULL;
	e->sq = ring_find(&m, SQ_WR);
	e->rq = with_srq ? NULL : ring_find(&m, RQ_WR);
	if (!e->cq_ring || !e->sq || (!with_srq && !e->rq) ||
	    (with_srq && !e->srq_ring)) {
		fprintf(stderr, "ring_fuzz: rings not found in /proc/self/maps\n");
		ep_destroy(e);
		return false;
	}
	return true;
}

/* RESET -> INIT -> RTR -> RTS towards @peer_qpn on device @peer_d. */
static int ep_connect(struct ep *e, int peer_d, uint32_t peer_qpn,
		      uint8_t timeout)
{
	struct vt_conn c = {
		.sgid_index = gid_index[e->v.d],
		.dest_qpn = peer_qpn,
		.psn = 100,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.timeout = timeout,
		.rnr_retry = 3,
	};

	if (ibv_query_gid(ctx[peer_d], 1, gid_index[peer_d], &c.dgid))
		return errno;
	return vt_qp_connect(e->v.qp, &c);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* Wait for @qp to reach ERR; false after WAIT_MS. */
static bool wait_err(struct ibv_qp *qp)
{
	long end = now_ms() + WAIT_MS;

	while (qp_state(qp) != IBV_QPS_ERR) {
		if (now_ms() > end)
			return false;
		sleep_ms(10);
	}
	return true;
}

/* Poll @want completions into @wc within WAIT_MS; returns how many came. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int want)
{
	long end = now_ms() + WAIT_MS;
	int got = 0;

	while (got < want && now_ms() < end) {
		int n = ibv_poll_cq(cq, want - got, wc + got);

		if (n < 0)
			break;
		got += n;
		if (!n)
			sleep_ms(1);
	}
	return got;
}

static int post_write(struct ep *e, uint64_t wr_id, uint32_t off, uint32_t len,
		      uint64_t raddr, uint32_t rkey, bool signaled)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->v.buf + off,
		.length = len,
		.lkey = e->v.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *badwr;

	return ibv_post_send(e->v.qp, &wr, &badwr);
}

static int post_send(struct ep *e, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->v.buf,
		.length = len,
		.lkey = e->v.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *badwr;

	return ibv_post_send(e->v.qp, &wr, &badwr);
}

static int post_recv(struct ep *e, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->v.buf + off,
		.length = len,
		.lkey = e->v.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ibv_recv_wr *badwr;

	if (e->v.srq)
		return ibv_post_srq_recv(e->v.srq, &wr, &badwr);
	return ibv_post_recv(e->v.qp, &wr, &badwr);
}

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1, i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = x;
	}
}

/* A connected pair a (device 0) <-> b (device 1). */
static bool pair_up(struct ep *a, struct ep *b, bool srq, uint8_t timeout)
{
	if (!ep_create(a, 0, false))
		return false;
	if (!ep_create(b, 1, srq)) {
		ep_destroy(a);
		return false;
	}
	if (ep_connect(a, 1, b->v.qp->qp_num, timeout) ||
	    ep_connect(b, 0, a->v.qp->qp_num, timeout)) {
		ep_destroy(a);
		ep_destroy(b);
		return false;
	}
	return true;
}

/*
 * Data-checked traffic on a pair: a WRITE of BUF_LEN/2 bytes and a SEND of
 * 4000, every byte compared. Returns an error text, NULL if all went well.
 */
static const char *traffic(struct ep *a, struct ep *b, uint32_t seed)
{
	static char why[128];
	struct ibv_wc wc[2];
	uint32_t half = BUF_LEN / 2;

	fill(a->v.buf, half, seed);
	memset(b->v.buf, 0, BUF_LEN);
	if (post_write(a, 1, 0, half, (uintptr_t)b->v.buf, b->v.mr->rkey, true))
		return "post WRITE failed";
	if (poll_n(a->v.cq, wc, 1) != 1 || wc[0].status != IBV_WC_SUCCESS) {
		snprintf(why, sizeof(why), "WRITE did not complete (%s)",
			 wc[0].status ? ibv_wc_status_str(wc[0].status) : "none");
		return why;
	}
	if (memcmp(a->v.buf, b->v.buf, half))
		return "WRITE data differ";
	fill(a->v.buf, 4000, seed + 1);
	if (post_recv(b, 2, half, 4000) || post_send(a, 3, 4000))
		return "post SEND/RECV failed";
	if (poll_n(a->v.cq, wc, 1) != 1 || wc[0].status != IBV_WC_SUCCESS)
		return "SEND did not complete";
	if (poll_n(b->v.cq, wc, 1) != 1 || wc[0].status != IBV_WC_SUCCESS ||
	    wc[0].byte_len != 4000)
		return "RECV did not complete with 4000 bytes";
	if (memcmp(a->v.buf, b->v.buf + half, 4000))
		return "SEND data differ";
	return NULL;
}

static void fresh_pair_works(const char *c)
{
	struct ep a, b;
	const char *why = "pair setup failed";
	char name[128];

	snprintf(name, sizeof(name), "%s: a fresh pair moves data, verified", c);
	if (pair_up(&a, &b, false, 14)) {
		why = traffic(&a, &b, rnd());
		ep_destroy(&a);
		ep_destroy(&b);
	}
	check(name, !why, "%s", why);
}

/* Drain @cq for up to WAIT_MS: every completion is an error; how many. */
static int drain_errors(struct ibv_cq *cq, int want, int *n_ok)
{
	struct ibv_wc wc[64];
	int got, i, errs = 0;

	*n_ok = 0;
	got = poll_n(cq, wc, want > 64 ? 64 : want);
	for (i = 0; i < got; i++) {
		if (wc[i].status == IBV_WC_SUCCESS)
			(*n_ok)++;
		else
			errs++;
	}
	return errs;
}

/* ------------------------------------------------------------ the cases */

/*
 * 16 WRITEs fetched and outstanding (the peer is left in INIT and drops
 * them; timeout 0: no retry limit), then the SQ producer index is set to
 * @prod(consumer) and the doorbell rung.
 */
static void sq_index_case(const char *c, uint32_t (*prod)(uint32_t cons))
{
	long long before = counter(0, "ring_index_errors"), now;
	char name[160];
	struct ep a, b;
	uint32_t cons, p;
	long t0;
	int i, errs, n_ok, rc;

	if (!ep_create(&a, 0, false) || !ep_create(&b, 1, false)) {
		bad(c, "setup failed");
		return;
	}
	if (ep_connect(&a, 1, b.v.qp->qp_num, 0)) {
		bad(c, "connect failed");
		goto out;
	}
	for (i = 0; i < 16; i++)
		post_write(&a, 100 + i, 0, 64, (uintptr_t)b.v.buf, b.v.mr->rkey,
			   true);
	sleep_ms(200);
	cons = load(&a.sq->consumer_index);
	p = prod(cons);
	printf("# %s: consumer %u, producer %u -> %u (mask %u)\n", c, cons,
	       load(&a.sq->producer_index), p, a.sq->index_mask);
	store(&a.sq->producer_index, p);
	t0 = now_ms();
	rc = doorbell(a.v.qp);
	snprintf(name, sizeof(name), "%s: doorbell returns at once", c);
	check(name, now_ms() - t0 < 2000, "took %ld ms (rc %d)",
	      now_ms() - t0, rc);
	snprintf(name, sizeof(name), "%s: the QP goes to ERR", c);
	check(name, wait_err(a.v.qp), "state %d", qp_state(a.v.qp));
	errs = drain_errors(a.v.cq, 16, &n_ok);
	snprintf(name, sizeof(name),
		 "%s: the 16 outstanding WRITEs complete in error", c);
	check(name, errs == 16 && !n_ok, "%d errors, %d successes", errs,
	      n_ok);
	snprintf(name, sizeof(name), "%s: ring_index_errors moves", c);
	now = counter_past(0, "ring_index_errors", before);
	check(name, now > before, "%lld -> %lld", before, now);
out:
	ep_destroy(&a);
	ep_destroy(&b);
	fresh_pair_works(c);
}

static uint32_t prod_back(uint32_t cons)
{
	return (cons + 2) & SQ_WR;
}

static uint32_t prod_wrapped(uint32_t cons)
{
	/* 16 fetched, then SQ_WR more posted: one short of a full lap */
	return (cons + 15) & SQ_WR;
}

static uint32_t prod_out_of_range(uint32_t cons)
{
	return cons | (SQ_WR + 1);
}

static uint32_t prod_far(uint32_t cons)
{
	(void)cons;
	return 0xffffffffu;
}

/* Write a malformed send WQE at the SQ's producer index, publish it. */
static void sq_put_bad_wqe(struct ep *e, uint64_t wr_id, int how)
{
	uint32_t p = load(&e->sq->producer_index);
	struct rxe_send_wqe *w = slot(e->sq, p);

	memset(w, 0, 1U << e->sq->log2_elem_size);
	w->wr.wr_id = wr_id;
	w->wr.opcode = IBV_WR_RDMA_WRITE;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	switch (how) {
	case 0:
		w->wr.opcode = 0x7f;			/* no such opcode */
		break;
	case 1:
		w->dma.num_sge = 1000;			/* > max_send_sge */
		break;
	default:
		w->wr.send_flags |= IBV_SEND_INLINE;	/* > max_inline */
		w->dma.length = 1U << 20;
		break;
	}
	store(&e->sq->producer_index, (p + 1) & e->sq->index_mask);
}

/*
 * IBA 10.8.3: a malformed WQE completes with LOC_QP_OP_ERR, the QP goes to
 * ERR, and a WR posted after it is flushed. The WRITE posted before it
 * completes normally, its data verified.
 */
static void bad_send_wqe(int how)
{
	static const char *const kind[] = {
		"bad opcode", "num_sge 1000", "inline 1 MiB",
	};
	long long before = counter(0, "wqe_format_errors"), now;
	char c[64], name[160];
	struct ibv_wc wc[2];
	struct ep a, b;
	int n;

	snprintf(c, sizeof(c), "bad send WQE (%s)", kind[how]);
	if (!pair_up(&a, &b, false, 14)) {
		bad(c, "setup failed");
		return;
	}
	fill(a.v.buf, 4096, how);
	post_write(&a, 1, 0, 4096, (uintptr_t)b.v.buf, b.v.mr->rkey, true);
	sq_put_bad_wqe(&a, 2, how);
	doorbell(a.v.qp);
	n = poll_n(a.v.cq, wc, 2);
	snprintf(name, sizeof(name),
		 "%s: the WRITE before it succeeds, data verified", c);
	check(name, n >= 1 && wc[0].wr_id == 1 &&
	      wc[0].status == IBV_WC_SUCCESS && !memcmp(a.v.buf, b.v.buf, 4096),
	      "%d completions, first wr_id %llu %s", n,
	      n ? (unsigned long long)wc[0].wr_id : 0ULL,
	      n ? ibv_wc_status_str(wc[0].status) : "");
	snprintf(name, sizeof(name), "%s: completes with LOC_QP_OP_ERR", c);
	check(name, n == 2 && wc[1].wr_id == 2 &&
	      wc[1].status == IBV_WC_LOC_QP_OP_ERR, "%d completions%s%s", n,
	      n == 2 ? ", second: " : "",
	      n == 2 ? ibv_wc_status_str(wc[1].status) : "");
	snprintf(name, sizeof(name), "%s: the QP goes to ERR", c);
	check(name, wait_err(a.v.qp), "state %d", qp_state(a.v.qp));
	post_write(&a, 3, 0, 64, (uintptr_t)b.v.buf, b.v.mr->rkey, true);
	n = poll_n(a.v.cq, wc, 1);
	snprintf(name, sizeof(name),
		 "%s: a WR posted after it is flushed", c);
	check(name, n == 1 && wc[0].wr_id == 3 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR, "%d completions%s%s", n,
	      n ? ": " : "", n ? ibv_wc_status_str(wc[0].status) : "");
	snprintf(name, sizeof(name), "%s: wqe_format_errors moves", c);
	now = counter_past(0, "wqe_format_errors", before);
	check(name, now > before, "%lld -> %lld", before, now);
	ep_destroy(&a);
	ep_destroy(&b);
	fresh_pair_works(c);
}

/*
 * Garbage: the whole free part of the SQ filled with random bytes (the
 * opcode made invalid, so that no WR goes to the wire), the producer index
 * moved to the far end; then random producer values, each with a doorbell.
 */
static void sq_garbage(void)
{
	const char *c = "SQ garbage";
	char name[160];
	struct ep a, b;
	uint32_t cons, i, j;
	long t0;
	int errs, n_ok;

	if (!pair_up(&a, &b, false, 14)) {
		bad(c, "setup failed");
		return;
	}
	cons = load(&a.sq->consumer_index);
	for (i = 0; i < SQ_WR; i++) {
		uint32_t *w = slot(a.sq, cons + i);

		for (j = 0; j < (1U << a.sq->log2_elem_size) / 4; j++)
			w[j] = rnd();
		((struct rxe_send_wqe *)w)->wr.opcode = 0x100 + (rnd() & 0xff);
		((struct rxe_send_wqe *)w)->wr.send_flags |=
			IBV_SEND_SIGNALED;
	}
	store(&a.sq->producer_index, (cons + SQ_WR) & SQ_WR);
	t0 = now_ms();
	doorbell(a.v.qp);
	for (i = 0; i < 200; i++) {
		store(&a.sq->producer_index,
		      (i & 1) ? rnd() : (rnd() & SQ_WR));
		doorbell(a.v.qp);
	}
	snprintf(name, sizeof(name), "%s: 201 doorbells return at once", c);
	check(name, now_ms() - t0 < 5000, "took %ld ms", now_ms() - t0);
	snprintf(name, sizeof(name), "%s: the QP goes to ERR", c);
	check(name, wait_err(a.v.qp), "state %d", qp_state(a.v.qp));
	errs = drain_errors(a.v.cq, 64, &n_ok);
	/*
	 * None at all if a doorbell found the TX side busy and it read a
	 * corrupt producer index first: then no WQE was ever taken.
	 */
	printf("# %s: %d error completions\n", c, errs);
	snprintf(name, sizeof(name), "%s: no completion is a success", c);
	check(name, !n_ok,
	      "%d errors, %d successes; CQ ring prod %u cons %u, SQ ring prod %u cons %u",
	      errs, n_ok, load(&a.cq_ring->producer_index),
	      load(&a.cq_ring->consumer_index),
	      load(&a.sq->producer_index), load(&a.sq->consumer_index));
	ep_destroy(&a);
	ep_destroy(&b);
	fresh_pair_works(c);
}

/*
 * The receive side: b's RQ (or SRQ) producer index set out of range, or
 * moved back over WQEs srnic has seen, or a malformed receive WQE
 * published; a SEND from a arrives. b goes to ERR and the counter moves;
 * a's SEND completes in error (NAK).
 */
static void recv_case(const char *c, bool srq, int how)
{
	const char *cnt = how == 2 ? "wqe_format_errors" : "ring_index_errors";
	long long before = counter(1, cnt), now;
	struct rxe_queue_buf *q;
	char name[160];
	struct ibv_wc wc;
	struct ep a, b;
	uint32_t p;
	int n;

	if (!pair_up(&a, &b, srq, 14)) {
		bad(c, "setup failed");
		return;
	}
	q = srq ? b.srq_ring : b.rq;
	post_recv(&b, 5, 0, 4096);
	post_recv(&b, 6, 0, 4096);
	post_recv(&b, 7, 0, 4096);
	p = load(&q->producer_index);
	if (how == 0) {
		store(&q->producer_index, q->index_mask + 1);
	} else if (how == 1) {
		/*
		 * One SEND takes a WQE (srnic sees the producer at p), then
		 * the producer moves back, still ahead of the consumer.
		 */
		post_send(&a, 9, 100);
		n = poll_n(a.v.cq, &wc, 1);
		snprintf(name, sizeof(name), "%s: a first SEND succeeds", c);
		check(name, n == 1 && wc.status == IBV_WC_SUCCESS, "%s",
		      n ? ibv_wc_status_str(wc.status) : "no completion");
		poll_n(b.v.cq, &wc, 1);
		store(&q->producer_index, (p - 1) & q->index_mask);
	} else {
		struct rxe_recv_wqe *w = slot(q, p - 3);

		w->dma.num_sge = 1000;
	}
	post_send(&a, 8, 100);
	n = poll_n(a.v.cq, &wc, 1);
	snprintf(name, sizeof(name), "%s: the SEND completes in error", c);
	check(name, n == 1 && wc.status != IBV_WC_SUCCESS, "%s",
	      n ? ibv_wc_status_str(wc.status) : "no completion");
	snprintf(name, sizeof(name), "%s: b's QP goes to ERR", c);
	check(name, wait_err(b.v.qp), "state %d", qp_state(b.v.qp));
	snprintf(name, sizeof(name), "%s: %s moves", c, cnt);
	now = counter_past(1, cnt, before);
	check(name, now > before, "%lld -> %lld", before, now);
	ep_destroy(&a);
	ep_destroy(&b);
	fresh_pair_works(c);
}

/*
 * The CQ's consumer index scribbled (ahead of the producer, out of range):
 * the CQ looks full to srnic; the completions that follow are refused,
 * the CQ reports IBV_EVENT_CQ_ERR, the QP whose completion it refused goes
 * to ERR, and nothing hangs.
 */
static void cq_case(const char *c, uint32_t v)
{
	struct ibv_async_event ev;
	char name[160];
	struct ep a, b;
	bool got = false;
	long end;
	int i;

	if (!pair_up(&a, &b, false, 14)) {
		bad(c, "setup failed");
		return;
	}
	store(&a.cq_ring->consumer_index, v);
	for (i = 0; i < 4; i++)
		post_write(&a, i, 0, 64, (uintptr_t)b.v.buf, b.v.mr->rkey, true);
	end = now_ms() + WAIT_MS;
	while (!got && now_ms() < end) {
		struct timeval tv = { 0, 100000 };
		fd_set fds;

		FD_ZERO(&fds);
		FD_SET(ctx[0]->async_fd, &fds);
		if (select(ctx[0]->async_fd + 1, &fds, NULL, NULL, &tv) <= 0)
			continue;
		if (ibv_get_async_event(ctx[0], &ev))
			break;
		got = ev.event_type == IBV_EVENT_CQ_ERR &&
		      ev.element.cq == a.v.cq;
		ibv_ack_async_event(&ev);
	}
	snprintf(name, sizeof(name), "%s: IBV_EVENT_CQ_ERR", c);
	check(name, got, "no CQ error event in %d ms", WAIT_MS);
	/* IBA 11.4.2.1: a completion the CQ refused takes its QP to ERR */
	snprintf(name, sizeof(name), "%s: the QP goes to ERR", c);
	check(name, wait_err(a.v.qp), "state %d", qp_state(a.v.qp));
	ep_destroy(&a);
	ep_destroy(&b);
	fresh_pair_works(c);
}

/* ---------------------------------------------- RESET while producing */

struct producer {
	struct rxe_queue_buf *q[2];
	volatile bool stop;
	unsigned long n;
};

/* Keep both rings full: producer one behind the consumer, all the time. */
static void *produce(void *arg)
{
	struct producer *p = arg;
	int i;

	while (!p->stop) {
		for (i = 0; i < 2; i++) {
			struct rxe_queue_buf *q = p->q[i];

			store(&q->producer_index,
			      (load(&q->consumer_index) - 1) & q->index_mask);
		}
		p->n++;
	}
	return NULL;
}

static void reset_while_producing(void)
{
	const char *c = "RESET/ERR while user space produces";
	struct producer pr = { 0 };
	struct ibv_qp_attr attr;
	long worst = 0, t0;
	pthread_t th;
	char name[160];
	struct ep a, b;
	int i, err = 0;

	if (!pair_up(&a, &b, false, 14)) {
		bad(c, "setup failed");
		return;
	}
	/* garbage that is not sent: invalid opcodes */
	for (i = 0; i <= SQ_WR; i++)
		((struct rxe_send_wqe *)slot(a.sq, i))->wr.opcode = 0x1ff;
	pr.q[0] = a.sq;
	pr.q[1] = a.rq;
	pthread_create(&th, NULL, produce, &pr);
	for (i = 0; i < 60 && !err; i++) {
		t0 = now_ms();
		if (i % 3 == 2) {
			/* back to RTS: the full ring of garbage fails it */
			err = ep_connect(&a, 1, b.v.qp->qp_num, 14);
		} else {
			memset(&attr, 0, sizeof(attr));
			attr.qp_state = i % 3 ? IBV_QPS_RESET : IBV_QPS_ERR;
			err = ibv_modify_qp(a.v.qp, &attr, IBV_QP_STATE);
		}
		if (now_ms() - t0 > worst)
			worst = now_ms() - t0;
	}
	pr.stop = true;
	pthread_join(th, NULL);
	snprintf(name, sizeof(name),
		 "%s: 20 rounds of ERR, RESET, RTS succeed", c);
	check(name, !err, "modify_qp: %s", strerror(err));
	snprintf(name, sizeof(name),
		 "%s: each returns within 2 s", c);
	printf("# %s: slowest modify %ld ms\n", c, worst);
	check(name, worst < 2000, "worst %ld ms", worst);
	ep_destroy(&a);
	ep_destroy(&b);
	fresh_pair_works(c);
}

/* ------------------------------------------------------ modify_qp race */

struct modifier {
	struct ibv_qp *qp;
	volatile bool stop;
	unsigned long ok;
};

/* RTS -> RTS, as fast as it goes (fails with EINVAL once in ERR). */
static void *modify_loop(void *arg)
{
	struct modifier *m = arg;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS };

	while (!m->stop)
		if (!ibv_modify_qp(m->qp, &attr, IBV_QP_STATE))
			m->ok++;
	return NULL;
}

/*
 * The data path moves the QP to ERR (a malformed WQE) while another thread
 * modifies it RTS -> RTS: the QP must stay in ERR once the error
 * completion is out. Before the fix the modify could write RTS over it.
 */
static void modify_race(int rounds)
{
	const char *c = "modify_qp vs data-path error";
	struct modifier m = { 0 };
	int i, lost = 0, done = 0;
	struct ibv_qp_attr attr;
	struct ibv_wc wc;
	struct ep a, b;
	pthread_t th;
	char name[160];

	if (!pair_up(&a, &b, false, 14)) {
		bad(c, "setup failed");
		return;
	}
	for (i = 0; i < rounds; i++) {
		enum ibv_qp_state st;

		unsigned long start = m.ok;
		long end = now_ms() + WAIT_MS;

		m.qp = a.v.qp;
		m.stop = false;
		pthread_create(&th, NULL, modify_loop, &m);
		/* the error lands while the modifies go on */
		while (__atomic_load_n(&m.ok, __ATOMIC_RELAXED) < start + 2 &&
		       now_ms() < end)
			;
		sq_put_bad_wqe(&a, 50, 0);
		doorbell(a.v.qp);
		if (poll_n(a.v.cq, &wc, 1) != 1) {
			m.stop = true;
			pthread_join(th, NULL);
			break;
		}
		/* the error was set before its completion went out */
		sleep_ms(1);
		m.stop = true;
		pthread_join(th, NULL);
		st = qp_state(a.v.qp);
		if (st != IBV_QPS_ERR)
			lost++;
		done++;
		/* back to RTS for the next round */
		memset(&attr, 0, sizeof(attr));
		attr.qp_state = IBV_QPS_RESET;
		if (ibv_modify_qp(a.v.qp, &attr, IBV_QP_STATE) ||
		    ep_connect(&a, 1, b.v.qp->qp_num, 14))
			break;
		while (ibv_poll_cq(a.v.cq, 1, &wc) > 0)
			;
	}
	printf("# %s: %d rounds, %lu modify_qp succeeded, %d left the QP out of ERR\n",
	       c, done, m.ok, lost);
	snprintf(name, sizeof(name), "%s: %d rounds ran", c, rounds);
	check(name, done == rounds, "only %d", done);
	snprintf(name, sizeof(name),
		 "%s: RTS->RTS modifies ran during the rounds", c);
	check(name, m.ok >= 2UL * done, "%lu", m.ok);
	snprintf(name, sizeof(name), "%s: the QP stays in ERR", c);
	check(name, !lost, "%d of %d rounds ended out of ERR", lost, done);
	ep_destroy(&a);
	ep_destroy(&b);
	fresh_pair_works(c);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	const char *only = getenv("SRNIC_RING_FUZZ_ONLY");
	int d, how;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 6) {
		fprintf(stderr, "usage: %s DEV0 GID0 DEV1 GID1 SEED\n", argv[0]);
		return 2;
	}
	for (d = 0; d < 2; d++) {
		dev_name[d] = argv[1 + 2 * d];
		gid_index[d] = atoi(argv[2 + 2 * d]);
		ctx[d] = open_dev(dev_name[d]);
		pd[d] = ctx[d] ? ibv_alloc_pd(ctx[d]) : NULL;
		if (!pd[d]) {
			fprintf(stderr, "cannot open %s\n", dev_name[d]);
			return 1;
		}
	}
	rng = strtoull(argv[5], NULL, 0) | 1;
	printf("# seed %s\n", argv[5]);

	fresh_pair_works("baseline");
#define RUN(tag) (!only || strstr(only, tag))
	if (RUN("bad")) {
		for (how = 0; how < 3; how++)
			bad_send_wqe(how);
	}
	if (RUN("race"))
		modify_race(300);
	if (RUN("recv")) {
		recv_case("RQ producer out of range", false, 0);
		recv_case("RQ producer backward", false, 1);
		recv_case("malformed receive WQE", false, 2);
		recv_case("SRQ producer out of range", true, 0);
		recv_case("SRQ producer backward", true, 1);
	}
	if (RUN("cq")) {
		cq_case("CQ consumer out of range", CQ_CQE + 1);
		cq_case("CQ consumer past the producer", 17);
	}
	if (RUN("sq")) {
		sq_index_case("SQ producer out of range", prod_out_of_range);
		sq_index_case("SQ producer far (0xffffffff)", prod_far);
		sq_index_case("SQ producer wrapped past fetched WQEs",
			      prod_wrapped);
		sq_garbage();
		reset_while_producing();
		/* last: it stalled the CPU before the fix */
		sq_index_case("SQ producer back below fetched WQEs", prod_back);
	}
	for (d = 0; d < 2; d++) {
		ibv_dealloc_pd(pd[d]);
		ibv_close_device(ctx[d]);
	}
	printf("ring_fuzz: done, %d failed\n", fails);
	return 0;
}
