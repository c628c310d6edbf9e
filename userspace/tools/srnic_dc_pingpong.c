// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srnic_dc_pingpong: Dynamically Connected QPs (docs/dc.md) between two
 * srnic devices in native mode, every byte and value checked. Shaped after
 * ibv_rc_pingpong: a server and a client exchange what they need (GID, DCT
 * numbers, access key, a memory region) over TCP, then move data with DC.
 *
 *   srnic_dc_pingpong -d srnic0 -g 1 [-n DCTS] [-c CLIENTS] -s         server
 *   srnic_dc_pingpong -d srnic1 -g 1 -m MODE [-i N] [-q DCIS] HOST     client
 *
 * The server makes DCTS DCTs (one key) on one SRQ and CQ, one DCI to echo
 * with, and a memory region (a 16 KiB region per DCT or client slot and a
 * 64-bit atomic slot per DCT). It checks every SEND it receives: the DCT
 * it arrived on, its length, every payload byte, and that each sender's
 * sequence numbers come one by one (in order, exactly once). It serves
 * CLIENTS clients, concurrently, and exits 0 if nothing was wrong. A
 * client that dies is forgotten; the DCTs keep serving.
 *
 * Client modes:
 *   ping     N SENDs to DCT 0, each echoed back (server DCI -> client DCT)
 *   multi    N rounds over every DCT in turn: SEND, RDMA WRITE, RDMA READ
 *            (compared with what was written), FETCH_ADD and CMP_SWP (the
 *            values they return checked; the server checks the slots)
 *   flood    Q DCIs, N SENDs each to DCT 0, interleaved, then a WRITE and
 *            READ each in its own part of the client's region
 *   badkey   a SEND with a wrong access key must fail with
 *            IBV_WC_REM_ACCESS_ERR; then, reset, the right key works
 *   unknown  a SEND to a DCT number nobody has must fail (retries run out)
 *   forever  SENDs to DCT 0 until killed (with -W: until PATH.1 exists,
 *            then DONE like the others)
 *   tour     N rounds over every DCT in turn with the send queue kept full
 *            (up to 32 WRs in flight, across DCTs: the DCI drains and moves
 *            with WRs queued behind): even visits 5 SENDs of 1-4000 bytes,
 *            an RDMA WRITE and a READ of it back (compared), FETCH_ADD and
 *            CMP_SWP; odd visits the two atomics alone (a short
 *            attachment). Every completion in order and successful, every
 *            value returned checked; the server checks SENDs and slots.
 *            With -W, the client drains and waits for PATH.R before round
 *            R > 0 (the test changes something meanwhile)
 *   exhaust  (-n 2 at the server, -W) SENDs to DCTs 0 and 1, then, once
 *            PATH.1 exists (the test drops requests to DCT 1), SENDs to
 *            DCT 1, 1 and 0 queued: the first fails IBV_WC_RETRY_EXC_ERR,
 *            the others are flushed, the DCI is in the error state; reset,
 *            it serves DCT 0; once PATH.2 exists, DCT 1 and 0 again
 *   rnrfail  a SEND must fail with IBV_WC_RNR_RETRY_EXC_ERR (a full DCT;
 *            -R sets the DCI's rnr_retry)
 * Options: -r RETRY the DCIs' retry count (7), -R RNR the DCIs' rnr_retry
 * (7: for ever), -W PATH (above), -T SECS how long a ping or forever SEND
 * and a pong may take (30; a DCI waiting for a full DCT may need more).
 * Output: "ok NAME" / "not ok NAME: why" lines, "# ..." information (the
 * QP numbers and keys of each side: tests/vm/test_dc_wire.sh reads them),
 * and "srnic_dc_pingpong: done" at the end; exit status 0 iff all ok.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/srnicdv.h>
#include <infiniband/verbs.h>

#include "tool_common.h"

#define PORT		18515
#define MAX_DCT		64
#define MAX_CLIENTS	16
#define MAX_DCI		8
#define REGION		16384
#define CHUNK		(REGION / MAX_DCI)
#define MSG_MAX		4096
#define SRQ_DEPTH	256
#define MAGIC		0x44435050u	/* "DCPP" */
#define F_ECHO		1u
#define CLI_KEY		0x5eedu		/* the access key of a client's DCT */
#define REMOTE_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

struct msg {
	uint32_t magic;
	uint32_t client;
	uint32_t dct;
	uint32_t dci;
	uint32_t seq;
	uint32_t len;
	uint32_t flags;
	uint32_t pad;
};

struct peer {			/* what the other side told us */
	union ibv_gid gid;
	uint32_t ndct;
	uint32_t dctn[MAX_DCT];
	uint64_t key;
	uint32_t rkey;
	uint64_t addr;
	uint32_t slot;
};

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_mr *mr, *rmr;
	uint8_t *buf;		/* local: send/read buffer */
	uint8_t *rbuf;		/* receive buffers, SRQ_DEPTH slots */
	int gidx;
	union ibv_gid gid;
};

static int opt_retry = 7, opt_rnr_retry = 7, opt_cq_secs = 30;
static const char *opt_wait;

static uint8_t pat(uint32_t client, uint32_t seq, uint32_t dct, uint32_t k)
{
	return (uint8_t)(client * 7 + seq * 13 + dct * 3 + k);
}

/* ------------------------------------------------------------ verbs */

static void dev_open(struct dev *d, const char *name, int gidx)
{
	size_t rsize = (size_t)SRQ_DEPTH * (sizeof(struct msg) + MSG_MAX);
	size_t bsize = (size_t)MAX_DCT * REGION + MAX_DCT * 8;
	int acc = IBV_ACCESS_LOCAL_WRITE | REMOTE_ACCESS;

	d->ctx = dev_ctx_open(name);
	d->gidx = gidx;
	if (ibv_query_gid(d->ctx, 1, gidx, &d->gid))
		die("ibv_query_gid");
	d->pd = ibv_alloc_pd(d->ctx);
	d->scq = ibv_create_cq(d->ctx, 512, NULL, NULL, 0);
	d->rcq = ibv_create_cq(d->ctx, 1024, NULL, NULL, 0);
	if (!d->pd || !d->scq || !d->rcq)
		die("pd/cq");
	d->buf = aligned_alloc(4096, bsize);
	d->rbuf = aligned_alloc(4096, rsize);
	if (!d->buf || !d->rbuf)
		die("malloc");
	memset(d->buf, 0, bsize);
	d->mr = ibv_reg_mr(d->pd, d->buf, bsize, acc);
	d->rmr = ibv_reg_mr(d->pd, d->rbuf, rsize, IBV_ACCESS_LOCAL_WRITE);
	if (!d->mr || !d->rmr)
		die("ibv_reg_mr");
}

static void srq_post(struct dev *d, uint32_t slot)
{
	size_t sz = sizeof(struct msg) + MSG_MAX;

	srq_post_buf(d->srq, d->rmr, d->rbuf + slot * sz, sz, slot);
}

static void srq_make(struct dev *d)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = SRQ_DEPTH, .max_sge = 1 },
	};
	uint32_t i;

	d->srq = ibv_create_srq(d->pd, &a);
	if (!d->srq)
		die("ibv_create_srq");
	for (i = 0; i < SRQ_DEPTH; i++)
		srq_post(d, i);
}

static struct ibv_qp *dc_make(struct dev *d, bool dci, uint64_t key)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = d->scq,
		.recv_cq = d->rcq,
		.cap = { .max_send_wr = 64, .max_send_sge = 1,
			 .max_inline_data = 0 },
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = d->pd,
	};
	struct srnicdv_qp_init_attr dv = {
		.comp_mask = SRNICDV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = {
			.dc_type = dci ? SRNICDV_DCTYPE_DCI : SRNICDV_DCTYPE_DCT,
			.dct_access_key = key,
		},
	};
	struct ibv_qp *qp;

	if (dci) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND |
				   IBV_QP_EX_WITH_RDMA_WRITE |
				   IBV_QP_EX_WITH_RDMA_READ |
				   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	} else {
		a.srq = d->srq;
	}
	qp = srnicdv_create_qp(d->ctx, &a, &dv);
	if (qp && dc_up(qp, dci, REMOTE_ACCESS, opt_retry, opt_rnr_retry)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

enum op { OP_SEND, OP_WRITE, OP_READ, OP_FADD, OP_CSWP };

/* One work request on @qp to DCT @dctn, in a batch ibv_wr_start() opened */
static void dc_wr(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t dctn,
		  uint64_t key, enum op op, struct ibv_sge *sge,
		  uint32_t rkey, uint64_t raddr, uint64_t a1, uint64_t a2,
		  uint64_t wr_id)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);

	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case OP_SEND:
		ibv_wr_send(qpx);
		break;
	case OP_WRITE:
		ibv_wr_rdma_write(qpx, rkey, raddr);
		break;
	case OP_READ:
		ibv_wr_rdma_read(qpx, rkey, raddr);
		break;
	case OP_FADD:
		ibv_wr_atomic_fetch_add(qpx, rkey, raddr, a1);
		break;
	case OP_CSWP:
		ibv_wr_atomic_cmp_swp(qpx, rkey, raddr, a1, a2);
		break;
	}
	srnicdv_wr_set_dc_addr(qpx, ah, dctn, key);
	ibv_wr_set_sge_list(qpx, 1, sge);
}

/* One work request on @qp to DCT @dctn, posted: 0 or an error number. */
static int dc_post(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t dctn,
		   uint64_t key, enum op op, struct ibv_sge *sge,
		   uint32_t rkey, uint64_t raddr, uint64_t a1, uint64_t a2,
		   uint64_t wr_id)
{
	ibv_wr_start(ibv_qp_to_qp_ex(qp));
	dc_wr(qp, ah, dctn, key, op, sge, rkey, raddr, a1, a2, wr_id);
	return ibv_wr_complete(ibv_qp_to_qp_ex(qp));
}

/* Wait for one completion on @cq: its status, or -1 on a timeout. */
static int cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	double end = now() + secs;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		if (now() > end)
			return -1;
	return n < 0 ? -1 : (int)wc->status;
}

/* ------------------------------------------------------------ TCP */

static int tcp_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
	return 0;
}

/* "<gid> <key> <rkey> <addr> <slot> <ndct> <dctn>..." */
static int peer_send(int fd, const char *tag, const union ibv_gid *gid,
		     uint64_t key, uint32_t rkey, uint64_t addr, uint32_t slot,
		     uint32_t ndct, const uint32_t *dctn)
{
	char line[1024], g[33];
	int n;
	uint32_t i;

	gid_str(gid, g);
	n = snprintf(line, sizeof(line), "%s %s %" PRIu64 " %u %" PRIu64
		     " %u %u", tag, g, key, rkey, addr, slot, ndct);
	for (i = 0; i < ndct; i++)
		n += snprintf(line + n, sizeof(line) - n, " %u", dctn[i]);
	n += snprintf(line + n, sizeof(line) - n, "\n");
	return write(fd, line, n) == n ? 0 : -1;
}

static int peer_recv(int fd, struct peer *p)
{
	char line[1024], tag[8], g[40], *s;
	uint32_t i;
	int off;

	if (tcp_line(fd, line, sizeof(line)) ||
	    sscanf(line, "%7s %39s %" SCNu64 " %u %" SCNu64 " %u %u%n", tag,
		   g, &p->key, &p->rkey, &p->addr, &p->slot, &p->ndct,
		   &off) != 7 || gid_parse(g, &p->gid) || p->ndct > MAX_DCT)
		return -1;
	s = line + off;
	for (i = 0; i < p->ndct; i++) {
		if (sscanf(s, " %u%n", &p->dctn[i], &off) != 1)
			return -1;
		s += off;
	}
	return 0;
}

/* ------------------------------------------------------------ server */

struct client {
	int fd;			/* -1: free */
	struct peer peer;
	uint32_t id;
	struct ibv_ah *ah;
	uint64_t got;		/* SENDs received */
	uint32_t next_seq[MAX_DCI];
	uint64_t want;		/* DONE's count, once it came */
	uint32_t rounds;	/* DONE's atomic rounds (multi) */
	bool done;
	double deadline;
};

struct server {
	struct dev d;
	uint32_t ndct;
	struct ibv_qp *dct[MAX_DCT];
	uint32_t dctn[MAX_DCT];
	struct ibv_qp *dci;
	uint64_t key;
	struct client cl[MAX_CLIENTS];
};

static struct client *srv_client(struct server *s, uint32_t id)
{
	int i;

	for (i = 0; i < MAX_CLIENTS; i++)
		if (s->cl[i].fd >= 0 && s->cl[i].id == id)
			return &s->cl[i];
	return NULL;
}

/* Echo @m (and its payload) back to its client's DCT. */
static void srv_echo(struct server *s, struct client *c, struct msg *m)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)m, .length = sizeof(*m) + m->len,
		.lkey = s->d.rmr->lkey,
	};
	struct ibv_wc wc;

	if (dc_post(s->dci, c->ah, c->peer.dctn[0], c->peer.key, OP_SEND,
		    &sge, 0, 0, 0, 0, 1) ||
	    cq_wait(s->d.scq, &wc, 10) != IBV_WC_SUCCESS)
		bad("server echo", "the echo SEND failed");
}

/* Check one received SEND, byte for byte. */
static void srv_recv(struct server *s, struct ibv_wc *wc)
{
	size_t sz = sizeof(struct msg) + MSG_MAX;
	struct msg *m = (struct msg *)(s->d.rbuf + wc->wr_id * sz);
	uint8_t *p = (uint8_t *)(m + 1);
	struct client *c;
	char why[160];
	uint32_t k;

	if (wc->status != IBV_WC_SUCCESS) {
		snprintf(why, sizeof(why), "status %s",
			 ibv_wc_status_str(wc->status));
		bad("server receive", why);
		goto repost;
	}
	c = srv_client(s, m->client);
	if (wc->byte_len != sizeof(*m) + m->len || m->magic != MAGIC ||
	    m->dct >= s->ndct || m->dci >= MAX_DCI || m->len > MSG_MAX) {
		bad("server receive", "malformed message");
		goto repost;
	}
	if (wc->qp_num != s->dctn[m->dct]) {
		snprintf(why, sizeof(why), "for DCT %u came on QP %u",
			 s->dctn[m->dct], wc->qp_num);
		bad("server receive", why);
	}
	for (k = 0; k < m->len; k++)
		if (p[k] != pat(m->client, m->seq, m->dct, k)) {
			snprintf(why, sizeof(why),
				 "client %u seq %u byte %u: %#x", m->client,
				 m->seq, k, p[k]);
			bad("server receive: payload", why);
			break;
		}
	if (c) {
		if (m->seq != c->next_seq[m->dci]) {
			snprintf(why, sizeof(why),
				 "client %u dci %u: seq %u, expected %u",
				 m->client, m->dci, m->seq,
				 c->next_seq[m->dci]);
			bad("server receive: order", why);
		}
		c->next_seq[m->dci] = m->seq + 1;
		c->got++;
		if (m->flags & F_ECHO)
			srv_echo(s, c, m);
	}
repost:
	srq_post(&s->d, wc->wr_id);
}

/* A client's DONE: all its SENDs here, its atomic slots as expected. */
static bool srv_check(struct server *s, struct client *c, char *why,
		      size_t len)
{
	uint64_t *slot = (uint64_t *)(s->d.buf + MAX_DCT * REGION);
	uint32_t j;

	if (c->got != c->want) {
		snprintf(why, len, "%" PRIu64 " SENDs of %" PRIu64,
			 c->got, c->want);
		return false;
	}
	for (j = 0; c->rounds && j < s->ndct; j++)
		if (slot[j] != 2ULL * c->rounds) {
			snprintf(why, len, "atomic slot %u is %" PRIu64
				 ", expected %u", j, slot[j], 2 * c->rounds);
			return false;
		}
	return true;
}

static void srv_finish(struct client *c, int *left)
{
	close(c->fd);
	c->fd = -1;
	if (c->ah)
		ibv_destroy_ah(c->ah);
	c->ah = NULL;
	(*left)--;
}

static void srv_accept(struct server *s, int lfd)
{
	int fd = accept(lfd, NULL, NULL), i;
	struct client *c = NULL;

	if (fd < 0)
		return;
	for (i = 0; i < MAX_CLIENTS && !c; i++)
		if (s->cl[i].fd < 0)
			c = &s->cl[i];
	if (!c) {
		close(fd);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->peer.slot = c - s->cl;
	if (peer_send(fd, "SRV", &s->d.gid, s->key, s->d.mr->rkey,
		      (uintptr_t)s->d.buf, c->peer.slot, s->ndct, s->dctn) ||
	    peer_recv(fd, &c->peer) ||
	    !(c->ah = ah_make(s->d.pd, s->d.gidx, &c->peer.gid))) {
		close(fd);
		c->fd = -1;
		return;
	}
	/* the client's id rides in its slot field */
	c->id = c->peer.slot;
}

/* A line from a client: DONE, or EOF (it died: forget it). */
static void srv_client_io(struct client *c, int *left)
{
	char line[128];

	if (tcp_line(c->fd, line, sizeof(line))) {
		printf("# client %u gone after %" PRIu64 " SENDs\n", c->id,
		       c->got);
		srv_finish(c, left);
		return;
	}
	if (sscanf(line, "DONE %" SCNu64 " %u", &c->want, &c->rounds) == 2) {
		c->done = true;
		c->deadline = now() + 20;
	}
}

static void srv_poll_done(struct server *s, int *left)
{
	char why[128];
	int i;

	for (i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &s->cl[i];
		bool good;

		if (c->fd < 0 || !c->done ||
		    (c->got < c->want && now() < c->deadline))
			continue;
		good = srv_check(s, c, why, sizeof(why));
		if (!good)
			bad("server: a client's data", why);
		if (write(c->fd, good ? "OK\n" : "FAIL\n", good ? 3 : 5) < 0)
			bad("server", "reply");
		srv_finish(c, left);
	}
}

static void srv_loop(struct server *s, int lfd, int clients)
{
	int left = clients, i, n;
	struct ibv_wc wc[16];

	while (left > 0) {
		struct pollfd pf[MAX_CLIENTS + 1];
		int map[MAX_CLIENTS + 1], np = 0;

		if (clients > 0) {
			pf[np].fd = lfd;
			pf[np].events = POLLIN;
			map[np++] = -1;
		}
		for (i = 0; i < MAX_CLIENTS; i++)
			if (s->cl[i].fd >= 0) {
				pf[np].fd = s->cl[i].fd;
				pf[np].events = POLLIN;
				map[np++] = i;
			}
		n = ibv_poll_cq(s->d.rcq, 16, wc);
		for (i = 0; i < n; i++)
			srv_recv(s, &wc[i]);
		if (poll(pf, np, n ? 0 : 1) > 0)
			for (i = 0; i < np; i++) {
				if (!(pf[i].revents & (POLLIN | POLLHUP)))
					continue;
				if (map[i] < 0) {
					srv_accept(s, lfd);
					clients--;
				} else {
					srv_client_io(&s->cl[map[i]], &left);
				}
			}
		srv_poll_done(s, &left);
	}
}

static int server(const char *devname, int gidx, uint32_t ndct, int clients,
		  uint64_t key)
{
	struct server *s = calloc(1, sizeof(*s));
	uint32_t j;
	int lfd, i;

	if (!s)
		die("calloc");
	dev_open(&s->d, devname, gidx);
	srq_make(&s->d);
	s->key = key;
	s->ndct = ndct;
	for (j = 0; j < ndct; j++) {
		s->dct[j] = dc_make(&s->d, false, key);
		if (!s->dct[j])
			die("DCT");
		s->dctn[j] = s->dct[j]->qp_num;
	}
	s->dci = dc_make(&s->d, true, 0);
	if (!s->dci)
		die("server DCI");
	for (i = 0; i < MAX_CLIENTS; i++)
		s->cl[i].fd = -1;
	printf("# server: %u DCTs (%u..%u), key %#" PRIx64 ", DCI %u\n", ndct,
	       s->dctn[0], s->dctn[ndct - 1], key, s->dci->qp_num);
	for (j = 0; j < ndct; j++)
		printf("# dctn %u %u\n", j, s->dctn[j]);
	fflush(stdout);
	lfd = tcp_listen(PORT, 16);
	srv_loop(s, lfd, clients);
	close(lfd);
	if (!fails)
		ok("server: every SEND, byte and value as sent");
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------ client */

struct cli {
	struct dev d;
	struct peer srv;
	struct ibv_ah *ah;
	struct ibv_qp *dct;
	uint32_t id;
	uint64_t sends;
	int fd;
	uint32_t iters, ndci, size;	/* -i, -q, -S */
};

static void msg_fill(struct cli *c, uint8_t *at, uint32_t dct, uint32_t dci,
		     uint32_t seq, uint32_t len, uint32_t flags)
{
	struct msg *m = (struct msg *)at;
	uint8_t *p = (uint8_t *)(m + 1);
	uint32_t k;

	*m = (struct msg){ .magic = MAGIC, .client = c->id, .dct = dct,
			   .dci = dci, .seq = seq, .len = len,
			   .flags = flags };
	for (k = 0; k < len; k++)
		p[k] = pat(c->id, seq, dct, k);
}

/* SEND message (@dci, @seq) of @len bytes to DCT index @dct; status. */
static int cli_send(struct cli *c, struct ibv_qp *qp, uint32_t dct,
		    uint32_t dci, uint32_t seq, uint32_t len, uint32_t flags)
{
	uint8_t *at = c->d.buf + dci * CHUNK;
	struct ibv_sge sge = { .addr = (uintptr_t)at,
			       .length = sizeof(struct msg) + len,
			       .lkey = c->d.mr->lkey };
	struct ibv_wc wc;

	msg_fill(c, at, dct, dci, seq, len, flags);
	if (dc_post(qp, c->ah, c->srv.dctn[dct], c->srv.key, OP_SEND, &sge,
		    0, 0, 0, 0, seq))
		return -1;
	c->sends++;
	return cq_wait(c->d.scq, &wc, opt_cq_secs);
}

/* One RDMA/atomic op on the server's memory at @roff; status. */
static int cli_rdma(struct cli *c, struct ibv_qp *qp, uint32_t dct, enum op op,
		    uint64_t loff, uint64_t roff, uint32_t len, uint64_t a1,
		    uint64_t a2)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->d.buf + loff,
			       .length = len, .lkey = c->d.mr->lkey };
	struct ibv_wc wc;

	if (dc_post(qp, c->ah, c->srv.dctn[dct], c->srv.key, op, &sge,
		    c->srv.rkey, c->srv.addr + roff, a1, a2, 7))
		return -1;
	return cq_wait(c->d.scq, &wc, 30);
}

static void check_st(const char *name, int st, int want)
{
	char why[96];

	if (st == want)
		return;
	snprintf(why, sizeof(why), "status %s, expected %s",
		 st < 0 ? "timeout/post error" : ibv_wc_status_str(st),
		 ibv_wc_status_str(want));
	bad(name, why);
}

static void mode_ping(struct cli *c, struct ibv_qp *qp)
{
	uint32_t iters = c->iters, size = c->size;
	size_t sz = sizeof(struct msg) + MSG_MAX;
	uint32_t i, k, bad_bytes = 0;
	struct ibv_wc wc;
	int st;

	for (i = 0; i < iters && !fails; i++) {
		st = cli_send(c, qp, 0, 0, i, size, F_ECHO);
		check_st("ping SEND", st, IBV_WC_SUCCESS);
		st = cq_wait(c->d.rcq, &wc, opt_cq_secs);
		check_st("pong received", st, IBV_WC_SUCCESS);
		if (st == IBV_WC_SUCCESS) {
			const uint8_t *m = c->d.rbuf + wc.wr_id * sz;

			for (k = 0; k < sizeof(struct msg) + size; k++)
				bad_bytes += m[k] != c->d.buf[k];
			if (wc.qp_num != c->dct->qp_num)
				bad("pong", "not on the client's DCT");
			srq_post(&c->d, wc.wr_id);
		}
	}
	if (bad_bytes)
		bad("pong data", "differs from the ping");
	else if (!fails)
		ok("ping-pong: every pong byte for byte the ping");
}

/* Round @r at DCT @j: SEND, WRITE, READ back, FETCH_ADD, CMP_SWP. */
static void multi_one(struct cli *c, struct ibv_qp *qp, uint32_t r,
		      uint32_t j, uint32_t *seq)
{
	uint64_t slot = (uint64_t)MAX_DCT * REGION + j * 8;
	uint64_t *res = (uint64_t *)(c->d.buf + REGION + 64);
	uint8_t *w = c->d.buf + 2 * REGION, *rd = c->d.buf + 3 * REGION;
	uint32_t len = 1000 + (j * 37 + r * 11) % 3000, k;

	check_st("multi SEND", cli_send(c, qp, j, 0, (*seq)++, 256, 0),
		 IBV_WC_SUCCESS);
	for (k = 0; k < len; k++)
		w[k] = pat(c->id, r, j, k) ^ 0x5a;
	memset(rd, 0, len);
	check_st("multi WRITE", cli_rdma(c, qp, j, OP_WRITE, 2 * REGION,
					  (uint64_t)j * REGION, len, 0, 0),
		 IBV_WC_SUCCESS);
	check_st("multi READ", cli_rdma(c, qp, j, OP_READ, 3 * REGION,
					 (uint64_t)j * REGION, len, 0, 0),
		 IBV_WC_SUCCESS);
	if (memcmp(w, rd, len))
		bad("multi READ", "the bytes read back differ from those written");
	*res = ~0ULL;
	check_st("multi FETCH_ADD",
		 cli_rdma(c, qp, j, OP_FADD, REGION + 64, slot, 8, 1, 0),
		 IBV_WC_SUCCESS);
	if (*res != 2ULL * r)
		bad("multi FETCH_ADD", "returned the wrong original value");
	*res = ~0ULL;
	check_st("multi CMP_SWP",
		 cli_rdma(c, qp, j, OP_CSWP, REGION + 64, slot, 8,
			  2ULL * r + 1, 2ULL * r + 2), IBV_WC_SUCCESS);
	if (*res != 2ULL * r + 1)
		bad("multi CMP_SWP", "returned the wrong original value");
}

static void mode_multi(struct cli *c, struct ibv_qp *qp)
{
	uint32_t rounds = c->iters, r, j, seq = 0;

	for (r = 0; r < rounds && !fails; r++)
		for (j = 0; j < c->srv.ndct && !fails; j++)
			multi_one(c, qp, r, j, &seq);
	if (!fails)
		ok("multi: SEND, WRITE, READ, FETCH_ADD, CMP_SWP at every DCT");
}

/* @dci0 is not used: flood makes its own -q DCIs */
static void mode_flood(struct cli *c, struct ibv_qp *dci0)
{
	struct ibv_qp *qp[MAX_DCI];
	uint64_t base = (uint64_t)c->srv.slot * REGION;
	uint8_t *rd = c->d.buf + 3 * REGION;
	uint32_t ndci = c->ndci, iters = c->iters, q, i;

	(void)dci0;

	for (q = 0; q < ndci; q++) {
		qp[q] = dc_make(&c->d, true, 0);
		if (!qp[q])
			die("DCI");
	}
	for (i = 0; i < iters && !fails; i++)
		for (q = 0; q < ndci && !fails; q++)
			check_st("flood SEND",
				 cli_send(c, qp[q], 0, q, i,
					  64 + (i * 97 + q) % 1900, 0),
				 IBV_WC_SUCCESS);
	for (q = 0; q < ndci && !fails; q++) {
		uint8_t *w = c->d.buf + q * CHUNK;
		uint32_t k;

		for (k = 0; k < CHUNK; k++)
			w[k] = pat(c->id, q, 99, k);
		check_st("flood WRITE",
			 cli_rdma(c, qp[q], 0, OP_WRITE, q * CHUNK,
				  base + q * CHUNK, CHUNK, 0, 0),
			 IBV_WC_SUCCESS);
		check_st("flood READ",
			 cli_rdma(c, qp[q], 0, OP_READ, 3 * REGION,
				  base + q * CHUNK, CHUNK, 0, 0),
			 IBV_WC_SUCCESS);
		if (memcmp(w, rd, CHUNK))
			bad("flood READ", "differs from what was written");
	}
	for (q = 0; q < ndci; q++)
		ibv_destroy_qp(qp[q]);
	if (!fails)
		ok("flood: every DCI's SENDs, WRITE and READ");
}

static void mode_badkey(struct cli *c, struct ibv_qp *qp)
{
	uint64_t good = c->srv.key;
	struct ibv_qp_attr a = {};

	c->srv.key = good + 1;
	check_st("SEND with a wrong key fails",
		 cli_send(c, qp, 0, 0, 0, 64, 0), IBV_WC_REM_ACCESS_ERR);
	c->sends--;		/* refused: never received */
	c->srv.key = good;
	if (qp_to(qp, IBV_QPS_RESET, 0, &a) ||
	    dc_up(qp, true, 0, 7, opt_rnr_retry))
		bad("DCI reset after the error", strerror(errno));
	check_st("the right key works after", cli_send(c, qp, 0, 0, 0, 64, 0),
		 IBV_WC_SUCCESS);
	if (!fails)
		ok("badkey: IBV_WC_REM_ACCESS_ERR, then served with the right key");
}

static void mode_unknown(struct cli *c, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {};
	int st;

	c->srv.dctn[0] = 0xfffff0;
	if (qp_to(qp, IBV_QPS_RESET, 0, &a) ||
	    dc_up(qp, true, 0, 1, opt_rnr_retry))
		bad("DCI with one retry", strerror(errno));
	st = cli_send(c, qp, 0, 0, 0, 64, 0);
	c->sends--;
	check_st("SEND to an unknown DCT fails", st, IBV_WC_RETRY_EXC_ERR);
	if (!fails)
		ok("unknown: a DCT number nobody has: retries exhausted");
}

/* Wait for the file PATH.@n (-W), the test's signal to go on. */
static bool wait_file(uint32_t n)
{
	double end = now() + 300;
	char path[512];

	if (!opt_wait)
		return true;
	snprintf(path, sizeof(path), "%s.%u", opt_wait, n);
	printf("# wait %u\n", n);
	fflush(stdout);
	while (access(path, F_OK)) {
		if (now() > end) {
			bad("wait", path);
			return false;
		}
		usleep(10000);
	}
	return true;
}

/* ---------------------------------------- pipelined WRs (tour, exhaust) */

#define TOUR_WIN	32
#define TOUR_SLOTS	64
#define TOUR_SLOT	8192

struct tour_op {
	enum op op;
	uint32_t j, len, key;
	uint64_t want;		/* an atomic's original value */
	int st;			/* the status it must complete with */
};

struct tour {
	struct cli *c;
	struct ibv_qp *qp;
	struct tour_op ops[TOUR_SLOTS];
	uint64_t posted, done;
	uint32_t seq;		/* the next SEND's sequence number */
	uint32_t pairs[MAX_DCT];	/* atomic pairs done at each DCT */
	bool broken;
};

static uint8_t *tour_buf(struct tour *t, uint64_t n)
{
	return t->c->d.buf + (n % TOUR_SLOTS) * TOUR_SLOT;
}

/* Check the oldest WR's completion; false once anything was wrong. */
static bool tour_reap(struct tour *t)
{
	struct tour_op *o = &t->ops[t->done % TOUR_SLOTS];
	uint8_t *b = tour_buf(t, t->done);
	char why[160];
	struct ibv_wc wc;
	int st = cq_wait(t->c->d.scq, &wc, 60);
	uint32_t k;

	if (st >= 0 && wc.wr_id != t->done) {
		snprintf(why, sizeof(why), "WR %" PRIu64 " completed, expected %"
			 PRIu64, (uint64_t)wc.wr_id, t->done);
		bad("completion order", why);
		t->broken = true;
		return false;
	}
	t->done++;
	if (st != o->st) {
		snprintf(why, sizeof(why), "op %d at DCT %u: %s, expected %s",
			 o->op, o->j, st < 0 ? "timeout" : ibv_wc_status_str(st),
			 ibv_wc_status_str(o->st));
		bad("completion status", why);
		t->broken = true;
		return false;
	}
	if (st != IBV_WC_SUCCESS)
		return true;
	if ((o->op == OP_FADD || o->op == OP_CSWP) &&
	    *(uint64_t *)b != o->want) {
		snprintf(why, sizeof(why), "DCT %u: %s returned %" PRIu64
			 ", expected %" PRIu64, o->j,
			 o->op == OP_FADD ? "FETCH_ADD" : "CMP_SWP",
			 *(uint64_t *)b, o->want);
		bad("atomic executed once", why);
		t->broken = true;
	}
	for (k = 0; o->op == OP_READ && k < o->len; k++)
		if (b[k] != (uint8_t)(pat(t->c->id, o->key, o->j, k) ^ 0x5a)) {
			snprintf(why, sizeof(why), "DCT %u byte %u", o->j, k);
			bad("READ returns what was written", why);
			t->broken = true;
			break;
		}
	return !t->broken;
}

static bool tour_drain(struct tour *t)
{
	while (t->done < t->posted)
		if (!tour_reap(t))
			return false;
	return true;
}

/*
 * Open a batch of @n WRs once there is room for them in the window: they
 * go to the DCI together (one doorbell), so that they are in flight
 * together.
 */
static bool tour_begin(struct tour *t, uint32_t n)
{
	while (t->posted - t->done + n > TOUR_WIN)
		if (!tour_reap(t))
			return false;
	ibv_wr_start(ibv_qp_to_qp_ex(t->qp));
	return true;
}

static bool tour_end(struct tour *t)
{
	int err = ibv_wr_complete(ibv_qp_to_qp_ex(t->qp));

	if (err) {
		bad("post", strerror(err));
		t->broken = true;
	}
	return !err;
}

/*
 * Add @op to DCT index @j (@len bytes; @key: a WRITE's and READ's
 * pattern) to the batch tour_begin() opened; it must complete @st.
 */
static void tour_post(struct tour *t, enum op op, uint32_t j, uint32_t len,
		      uint32_t key, int st)
{
	struct cli *c = t->c;
	struct tour_op *o = &t->ops[t->posted % TOUR_SLOTS];
	uint8_t *b = tour_buf(t, t->posted);
	uint64_t roff = (uint64_t)j * REGION, slot;
	struct ibv_sge sge = { .addr = (uintptr_t)b, .length = len,
			       .lkey = c->d.mr->lkey };
	uint32_t k;

	*o = (struct tour_op){ .op = op, .j = j, .len = len, .key = key,
			       .st = st };
	slot = (uint64_t)MAX_DCT * REGION + j * 8;
	switch (op) {
	case OP_SEND:
		msg_fill(c, b, j, 0, t->seq++, len, 0);
		sge.length = sizeof(struct msg) + len;
		c->sends++;
		break;
	case OP_WRITE:
		for (k = 0; k < len; k++)
			b[k] = pat(c->id, key, j, k) ^ 0x5a;
		break;
	case OP_READ:
		memset(b, 0, len);
		break;
	case OP_FADD:
		o->want = 2ULL * t->pairs[j];
		roff = slot;
		break;
	case OP_CSWP:
		o->want = 2ULL * t->pairs[j]++ + 1;
		roff = slot;
		break;
	}
	dc_wr(t->qp, c->ah, c->srv.dctn[j], c->srv.key, op, &sge, c->srv.rkey,
	      c->srv.addr + roff, op == OP_FADD ? 1 : o->want, o->want + 1,
	      t->posted);
	t->posted++;
}

/* Visit @v, at DCT @j, one batch: see the modes above. */
static bool tour_visit(struct tour *t, uint32_t v, uint32_t j)
{
	uint32_t i, len = 1000 + (v * 37) % 3000;
	bool full = !(v & 1);

	if (!tour_begin(t, full ? 9 : 2))
		return false;
	for (i = 0; full && i < 5; i++)
		tour_post(t, OP_SEND, j, (v * 131 + i * 977) % 4000 + 1, 0,
			  IBV_WC_SUCCESS);
	if (full) {
		tour_post(t, OP_WRITE, j, len, v, IBV_WC_SUCCESS);
		tour_post(t, OP_READ, j, len, v, IBV_WC_SUCCESS);
	}
	tour_post(t, OP_FADD, j, 8, 0, IBV_WC_SUCCESS);
	tour_post(t, OP_CSWP, j, 8, 0, IBV_WC_SUCCESS);
	return tour_end(t);
}

static void mode_tour(struct cli *c, struct ibv_qp *qp)
{
	struct tour *t = calloc(1, sizeof(*t));
	uint32_t rounds = c->iters, r, j, v = 0;

	if (!t)
		die("calloc");
	t->c = c;
	t->qp = qp;
	for (r = 0; r < rounds && !t->broken; r++) {
		if (r && opt_wait && (!tour_drain(t) || !wait_file(r)))
			break;
		for (j = 0; j < c->srv.ndct && !t->broken; j++)
			tour_visit(t, v++, j);
	}
	if (!t->broken)
		tour_drain(t);
	if (!fails)
		ok("tour: every WR in order, READs and atomics as expected");
	free(t);
}

/* The DCI must be in @want; says so. */
static void qp_state_is(struct ibv_qp *qp, enum ibv_qp_state want,
			const char *name)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	char why[64];

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia)) {
		bad(name, strerror(errno));
	} else if (a.qp_state != want) {
		snprintf(why, sizeof(why), "state %d, expected %d", a.qp_state,
			 want);
		bad(name, why);
	}
}

static void mode_exhaust(struct cli *c, struct ibv_qp *qp)
{
	struct tour *t = calloc(1, sizeof(*t));
	struct ibv_qp_attr a = {};
	uint32_t i, seq;

	if (!t)
		die("calloc");
	t->c = c;
	t->qp = qp;
	if (c->srv.ndct < 2 || !opt_wait) {
		bad("exhaust", "needs two DCTs and -W");
		goto out;
	}
	/* both targets work; the DCI stays attached to DCT 1 */
	tour_begin(t, 4);
	for (i = 0; i < 4; i++)
		tour_post(t, OP_SEND, i / 2 ? 1 : 0, 64, 0, IBV_WC_SUCCESS);
	if (!tour_end(t) || !tour_drain(t) || !wait_file(1))
		goto out;
	/* DCT 1 unreachable now: its WR fails, the rest is flushed */
	seq = t->seq;
	tour_begin(t, 3);
	tour_post(t, OP_SEND, 1, 64, 0, IBV_WC_RETRY_EXC_ERR);
	tour_post(t, OP_SEND, 1, 64, 0, IBV_WC_WR_FLUSH_ERR);
	tour_post(t, OP_SEND, 0, 64, 0, IBV_WC_WR_FLUSH_ERR);
	if (!tour_end(t) || !tour_drain(t))
		goto out;
	t->seq = seq;		/* none of them arrived */
	c->sends -= 3;
	qp_state_is(qp, IBV_QPS_ERR, "the DCI is in the error state after it");
	ok("exhaust: IBV_WC_RETRY_EXC_ERR for DCT 1, the rest flushed");
	if (qp_to(qp, IBV_QPS_RESET, 0, &a) ||
	    dc_up(qp, true, 0, opt_retry, opt_rnr_retry)) {
		bad("DCI reset after the error", strerror(errno));
		goto out;
	}
	tour_begin(t, 2);
	tour_post(t, OP_SEND, 0, 64, 0, IBV_WC_SUCCESS);
	tour_post(t, OP_SEND, 0, 2000, 0, IBV_WC_SUCCESS);
	if (!tour_end(t) || !tour_drain(t) || !wait_file(2))
		goto out;
	ok("exhaust: the DCI, reset, serves DCT 0");
	/* DCT 1 reachable again: a new generation replaces the old one */
	tour_begin(t, 3);
	tour_post(t, OP_SEND, 1, 64, 0, IBV_WC_SUCCESS);
	tour_post(t, OP_SEND, 1, 3000, 0, IBV_WC_SUCCESS);
	tour_post(t, OP_SEND, 0, 64, 0, IBV_WC_SUCCESS);
	if (tour_end(t) && tour_drain(t))
		ok("exhaust: DCT 1 served again once reachable, then DCT 0");
out:
	free(t);
}

static void mode_rnrfail(struct cli *c, struct ibv_qp *qp)
{
	int st = cli_send(c, qp, 0, 0, 0, 64, 0);

	c->sends--;		/* never received */
	check_st("SEND to a full DCT fails with RNR retries exhausted", st,
		 IBV_WC_RNR_RETRY_EXC_ERR);
	if (!fails)
		ok("rnrfail: IBV_WC_RNR_RETRY_EXC_ERR");
}

/* SENDs to DCT 0 until killed, or with -W until PATH.1 exists. */
static void mode_forever(struct cli *c, struct ibv_qp *qp)
{
	char path[512];
	uint32_t n;

	snprintf(path, sizeof(path), "%s.1", opt_wait ? opt_wait : "");
	for (n = 0; !fails && (!opt_wait || access(path, F_OK)); n++)
		check_st("forever SEND", cli_send(c, qp, 0, 0, n, 512, 0),
			 IBV_WC_SUCCESS);
	if (!fails)
		ok("forever: every SEND until told to stop");
}

/* The client modes (the header says what each does) */
static const struct mode {
	const char *name;
	void (*run)(struct cli *c, struct ibv_qp *qp);
	bool rounds;	/* DONE carries -i: the atomic rounds the server checks */
} modes[] = {
	{ "ping", mode_ping, false },
	{ "multi", mode_multi, true },
	{ "flood", mode_flood, false },
	{ "badkey", mode_badkey, false },
	{ "unknown", mode_unknown, false },
	{ "forever", mode_forever, false },
	{ "tour", mode_tour, true },
	{ "exhaust", mode_exhaust, false },
	{ "rnrfail", mode_rnrfail, false },
};

static const struct mode *mode_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(modes[i].name, name))
			return &modes[i];
	return NULL;
}

static int cli_connect(struct cli *c, const char *host)
{
	int fd = tcp_connect(host, PORT, 0);

	if (fd < 0)
		return -1;
	c->fd = fd;
	if (peer_recv(fd, &c->srv))
		return -1;
	c->id = c->srv.slot;
	/* our DCT (echoes come to it) and our id, in the slot field */
	return peer_send(fd, "CLI", &c->d.gid, CLI_KEY, c->d.mr->rkey,
			 (uintptr_t)c->d.buf, c->id, 1, &c->dct->qp_num);
}

static int client(const char *devname, int gidx, const char *host,
		  const char *mode, uint32_t iters, uint32_t ndci,
		  uint32_t size)
{
	struct cli *c = calloc(1, sizeof(*c));
	const struct mode *m = mode_of(mode);
	struct ibv_qp *qp;
	char line[64];
	int n;

	if (!c)
		die("calloc");
	c->iters = iters;
	c->ndci = ndci;
	c->size = size;
	dev_open(&c->d, devname, gidx);
	srq_make(&c->d);
	c->dct = dc_make(&c->d, false, CLI_KEY);
	qp = dc_make(&c->d, true, 0);
	if (!c->dct || !qp)
		die("client DC QPs");
	if (cli_connect(c, host))
		die("connect");
	printf("# client: DCI %u, DCT %u, key %#x\n", qp->qp_num,
	       c->dct->qp_num, CLI_KEY);
	fflush(stdout);
	c->ah = ah_make(c->d.pd, c->d.gidx, &c->srv.gid);
	if (!c->ah)
		die("ibv_create_ah");
	if (m)
		m->run(c, qp);
	else
		bad("mode", mode);
	n = snprintf(line, sizeof(line), "DONE %" PRIu64 " %u\n", c->sends,
		     m && m->rounds && !fails ? iters : 0);
	if (write(c->fd, line, n) != n || tcp_line(c->fd, line, sizeof(line)))
		bad("server's verdict", "none");
	else if (strcmp(line, "OK"))
		bad("server's verdict", line);
	else
		ok("server checked this client's data");
	ibv_destroy_qp(qp);
	ibv_destroy_qp(c->dct);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *mode = "ping";
	uint32_t ndct = 1, iters = 10, ndci = 1, size = 1024;
	uint64_t key = 0xdc0ffee;
	int opt, gidx = 1, clients = 1;
	bool srv = false;

	while ((opt = getopt(argc, argv, "d:g:n:c:k:m:i:q:S:sr:R:W:T:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'n': ndct = strtoul(optarg, NULL, 0); break;
		case 'c': clients = atoi(optarg); break;
		case 'k': key = strtoull(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		case 'i': iters = strtoul(optarg, NULL, 0); break;
		case 'q': ndci = strtoul(optarg, NULL, 0); break;
		case 'S': size = strtoul(optarg, NULL, 0); break;
		case 's': srv = true; break;
		case 'r': opt_retry = atoi(optarg); break;
		case 'R': opt_rnr_retry = atoi(optarg); break;
		case 'W': opt_wait = optarg; break;
		case 'T': opt_cq_secs = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (!dev || !ndct || ndct > MAX_DCT || !ndci || ndci > MAX_DCI ||
	    size > MSG_MAX || (!srv && optind != argc - 1))
		goto usage;
	opt = srv ? server(dev, gidx, ndct, clients, key) :
		    client(dev, gidx, argv[optind], mode, iters, ndci, size);
	printf("srnic_dc_pingpong: done\n");
	return opt;
usage:
	fprintf(stderr, "usage: %s -d DEV [-g GIDX] -s [-n DCTS] [-c CLIENTS] [-k KEY]\n"
		"       %s -d DEV [-g GIDX] [-m ping|multi|flood|badkey|unknown|forever|\n"
		"          tour|exhaust|rnrfail] [-i N] [-q DCIS] [-S SIZE] [-r RETRY]\n"
		"          [-R RNR_RETRY] [-W PATH] [-T SECS] HOST\n", argv[0], argv[0]);
	return 2;
}
