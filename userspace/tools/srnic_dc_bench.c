// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srnic_dc_bench: one process reaching N peers, with RC (N QP pairs) or DC
 * (N DCTs on the server, K DCIs on the client), between two srnic devices
 * in native mode (docs/dc.md "The point of DC, measured"). A measurement
 * whose data are checked: it exits 0 only if every byte it moved was
 * verified.
 *
 *   srnic_dc_bench -d srnic0 -g 1 --server                          (nsA)
 *   srnic_dc_bench -d srnic1 -g 1 --transport rc|dc --peers N
 *                  [--dcis K] [--op write|send] [--size B]
 *                  [--iters I | --bytes TOTAL] [--depth D]
 *                  [--lat-size B] [--lat-rounds R] [--hold FILE] HOST  (nsB)
 *
 * The client sends its parameters over TCP; the server opens its device, a
 * memory region of N regions of S slots of --size bytes (S = min(iters,
 * 64 MiB / (N x size))) filled with a known pattern, then:
 *   setup (timed from the client's GO to the last QP in RTS on both
 *   sides): RC: the server makes N RC QPs on one SRQ, the client N RC QPs
 *   (send queue --depth, an SRQ it never posts to), both connect them
 *   (INIT, RTR, RTS); DC: the server makes N DCTs (one key) on one SRQ, the
 *   client K DCIs and one address handle: there is nothing to connect (a DCI
 *   attaches to a DCT with its first packet, inside the timed traffic);
 *   latency: an RDMA READ of --lat-size bytes from each peer in turn, R
 *   rounds, each timed alone (median, min, 99th percentile), then as many
 *   (256 to 1000) to peer 0 alone; every byte read compared with the server's pattern;
 *   bandwidth: iters rounds over the N peers in turn (peer j's WRs on its
 *   RC QP, or on DCI j % K), RDMA WRITE into slot (round % S) of peer j's
 *   region, or SEND into the server's SRQ; at most --depth WRs in flight in
 *   all, each signaled;
 *   verification: WRITE: the server compares every slot of every peer
 *   with what the client wrote there (every write's bytes when iters <= S,
 *   else the last write of each slot); SEND: the server checks every
 *   message as it comes: the QP it came on (RC QP or DCT of its peer), its
 *   length, each byte, and its place in that peer's sequence (in order,
 *   exactly once), and at the end that each peer sent iters;
 *   kernel memory: /proc/meminfo SUnreclaim + VmallocUsed + Percpu +
 *   PageTables (the reclaimable slabs, dentries and inodes, only add
 *   noise), every slab cache shrunk first (as tests/vm/test_scale.sh;
 *   needs root for the shrink), read by the client (both sides run in one kernel)
 *   before setup (after devices, memory regions and SRQs exist on both
 *   sides), after the server made its QPs, after setup, and after the
 *   traffic (DC: the attachments the DCTs made).
 * --hold FILE: after setup the client creates FILE.ready and waits (120 s at
 * most) for FILE to exist, so that a script can look at the QPs.
 * --corrupt: a self-check of the verification: the client changes one byte
 * of the last peer's last slot before it sends it; the server must say
 * FAIL and the client exit 1.
 *
 * Output (client): "# ..." text, "ok NAME" / "not ok NAME: why" checks, one
 * JSON line (starts with '{'), "srnic_dc_bench: done"; exit 0 iff all ok.
 * The server prints its own checks and exits after one client.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/srnicdv.h>
#include <infiniband/verbs.h>

#include "meminfo.h"
#include "tool_common.h"

#define PORT		18516
#define MAX_PEERS	8192
#define MAX_DCIS	64
#define MAX_DEPTH	256
#define REGION_CAP	(64u << 20)	/* server memory region, bytes */
#define SRQ_BYTES	(16u << 20)	/* server receive buffers, bytes */
#define SRQ_MAX		512
#define SEED_INIT	0x5a17c0de5eed0001ULL
#define SEED_DATA	0xdcbe7c4a11ed0002ULL
#define DC_KEY		0xdcbe5c0ffeeULL
#define WAIT_SECS	60
#define REMOTE_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

enum transport { T_RC, T_DC };
enum op { OP_WRITE, OP_SEND };

struct params {			/* what the client tells the server */
	enum transport tr;
	enum op op;
	uint32_t peers, size, slots, iters;
};

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_mr *mr, *rmr;
	uint64_t *buf;		/* the data region */
	size_t len;
	uint8_t *rbuf;		/* receive buffers (server, SEND) */
	uint32_t nrecv;
	int gidx;
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

struct link {			/* the TCP side channel */
	FILE *in, *out;
	char *line;
	size_t cap;
};

/* ------------------------------------------------------------ pattern */

/* Word @w of peer @peer's region, as the server (INIT) or client (DATA)
 * fills it: a different value for every peer, word and seed. */
static uint64_t patw(uint32_t peer, uint64_t w, uint64_t seed)
{
	uint64_t x = (((uint64_t)peer << 40) ^ w ^ seed) *
		     0x9e3779b97f4a7c15ULL;

	return x ^ (x >> 29);
}

static void pat_fill(uint64_t *p, uint32_t peer, uint64_t w0, size_t n,
		     uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = patw(peer, w0 + i, seed);
}

/* the index of the first word of @p that differs, or -1 */
static long pat_check(const uint64_t *p, uint32_t peer, uint64_t w0,
		      size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != patw(peer, w0 + i, seed))
			return (long)i;
	return -1;
}

/* ------------------------------------------------------------ memory */

/* Shrink every slab cache (root only), then read /proc/meminfo. */
static void kmem_read(struct meminfo *m)
{
	glob_t g;
	size_t i;

	if (!glob("/sys/kernel/slab/*/shrink", 0, NULL, &g)) {
		for (i = 0; i < g.gl_pathc; i++) {
			int fd = open(g.gl_pathv[i], O_WRONLY);

			if (fd >= 0) {
				if (write(fd, "1", 1) < 0)
					errno = 0;
				close(fd);
			}
		}
		globfree(&g);
	}
	meminfo_read(m);
}

static long kmem_kb(const struct meminfo *a, const struct meminfo *b)
{
	return (b->sunreclaim + b->vmalloc + b->percpu + b->pagetables) -
	       (a->sunreclaim + a->vmalloc + a->percpu + a->pagetables);
}

/* ------------------------------------------------------------ TCP */

static int link_open(struct link *l, int fd)
{
	int fd2 = dup(fd);

	memset(l, 0, sizeof(*l));
	l->in = fdopen(fd, "r");
	l->out = fd2 >= 0 ? fdopen(fd2, "w") : NULL;
	return l->in && l->out ? 0 : -1;
}

/* the next line (without its newline), or NULL at EOF */
static char *link_get(struct link *l)
{
	ssize_t n = getline(&l->line, &l->cap, l->in);

	if (n <= 0)
		return NULL;
	if (l->line[n - 1] == '\n')
		l->line[n - 1] = 0;
	return l->line;
}

static char *link_want(struct link *l, const char *tag)
{
	char *s = link_get(l);

	if (!s || strncmp(s, tag, strlen(tag))) {
		printf("not ok protocol: expected %s, got \"%.60s\"\n", tag,
		       s ? s : "EOF");
		exit(1);
	}
	return s + strlen(tag);
}

static void link_put(struct link *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void link_put(struct link *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(l->out, fmt, ap);
	va_end(ap);
	if (fflush(l->out))
		die("TCP write");
}

/* " n a b c ...": @n numbers into @v (at most @max) */
static void link_put_nums(struct link *l, const char *tag, const uint32_t *v,
			  uint32_t n)
{
	uint32_t i;

	fprintf(l->out, "%s %u", tag, n);
	for (i = 0; i < n; i++)
		fprintf(l->out, " %u", v[i]);
	link_put(l, "\n");
}

static uint32_t parse_nums(char *s, uint32_t *v, uint32_t max)
{
	uint32_t n, i;
	char *end;

	n = strtoul(s, &end, 10);
	if (n > max)
		n = 0;
	for (i = 0; i < n; i++)
		v[i] = strtoul(end, &end, 10);
	return n;
}

/* ------------------------------------------------------------ verbs */

static void dev_open(struct dev *d, const char *name, int gidx, int cqe)
{
	struct ibv_port_attr pa;

	d->ctx = dev_ctx_open(name);
	d->gidx = gidx;
	if (ibv_query_gid(d->ctx, 1, gidx, &d->gid) ||
	    ibv_query_port(d->ctx, 1, &pa))
		die("ibv_query_gid/port");
	d->mtu = pa.active_mtu;
	d->pd = ibv_alloc_pd(d->ctx);
	d->scq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
	d->rcq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
	if (!d->pd || !d->scq || !d->rcq)
		die("pd/cq");
}

static void dev_region(struct dev *d, size_t len)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;

	d->len = len;
	d->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!d->buf)
		die("malloc");
	d->mr = ibv_reg_mr(d->pd, d->buf, len, acc);
	if (!d->mr)
		die("ibv_reg_mr");
}

static void srq_post(struct dev *d, uint32_t slot, uint32_t size)
{
	srq_post_buf(d->srq, d->rmr, d->rbuf + (size_t)slot * size, size, slot);
}

/* An SRQ with @n receive buffers of @size bytes posted (n may be 0). */
static void srq_make(struct dev *d, uint32_t n, uint32_t size)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = n ? n : 1, .max_sge = 1 },
	};
	uint32_t i;

	d->srq = ibv_create_srq(d->pd, &a);
	if (!d->srq)
		die("ibv_create_srq");
	d->nrecv = n;
	if (!n)
		return;
	d->rbuf = aligned_alloc(4096, ((size_t)n * size + 4095) &
			       ~(size_t)4095);
	if (!d->rbuf)
		die("malloc");
	d->rmr = ibv_reg_mr(d->pd, d->rbuf, (size_t)n * size,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!d->rmr)
		die("ibv_reg_mr");
	for (i = 0; i < n; i++)
		srq_post(d, i, size);
}

static uint32_t psn_of(uint32_t qpn)
{
	return (qpn * 2654435761u) & 0xffffff;
}

/* An RC QP's RTR and RTS, to @rqpn at @gid. */
static int rc_connect(struct dev *d, struct ibv_qp *qp, uint32_t rqpn,
		      const union ibv_gid *gid)
{
	struct ibv_qp_attr a = {
		.path_mtu = d->mtu,
		.dest_qp_num = rqpn,
		.rq_psn = psn_of(rqpn),
		.max_dest_rd_atomic = 16,
		.min_rnr_timer = 12,
		.ah_attr = ah_attr_of(d->gidx, gid),
	};

	if (qp_to(qp, IBV_QPS_RTR, IBV_QP_AV | IBV_QP_PATH_MTU |
		  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, &a))
		return -1;
	return qp_rts(qp, 7, 7, psn_of(qp->qp_num));
}

static struct ibv_qp *rc_make(struct dev *d, uint32_t depth)
{
	struct ibv_qp_init_attr a = {
		.send_cq = d->scq,
		.recv_cq = d->rcq,
		.srq = d->srq,
		.cap = { .max_send_wr = depth, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(d->pd, &a);

	if (qp && qp_init(qp, REMOTE_ACCESS)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

/* A DCT (INIT, RTR) or a DCI (INIT, RTR, RTS); no remote attribute. */
static struct ibv_qp *dc_make(struct dev *d, bool dci, uint32_t depth)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = d->scq,
		.recv_cq = d->rcq,
		.cap = { .max_send_wr = depth, .max_send_sge = 1 },
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = d->pd,
	};
	struct srnicdv_qp_init_attr dv = {
		.comp_mask = SRNICDV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = {
			.dc_type = dci ? SRNICDV_DCTYPE_DCI : SRNICDV_DCTYPE_DCT,
			.dct_access_key = dci ? 0 : DC_KEY,
		},
	};
	struct ibv_qp *qp;

	if (dci) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND |
				   IBV_QP_EX_WITH_RDMA_WRITE |
				   IBV_QP_EX_WITH_RDMA_READ;
	} else {
		a.srq = d->srq;
	}
	qp = srnicdv_create_qp(d->ctx, &a, &dv);
	if (qp && dc_up(qp, dci, REMOTE_ACCESS, 7, 7)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

/* ------------------------------------------------------------ server */

struct server {
	struct dev d;
	struct params p;
	uint32_t nqp;
	struct ibv_qp **qp;
	uint32_t *qpn;		/* QP (RC) or DCT number of each peer */
	uint32_t *by_qpn;	/* peer indexes sorted by their QP number */
	uint64_t *got;		/* SENDs received from each peer */
	uint64_t msgs, bad_msgs;
};

static struct server *sort_ctx;

static int by_qpn_cmp(const void *a, const void *b)
{
	uint32_t x = sort_ctx->qpn[*(const uint32_t *)a];
	uint32_t y = sort_ctx->qpn[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

static long srv_peer_of(struct server *s, uint32_t qpn)
{
	uint32_t lo = 0, hi = s->p.peers;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2, q = s->qpn[s->by_qpn[mid]];

		if (q == qpn)
			return s->by_qpn[mid];
		if (q < qpn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* One SEND received: its QP, length, place in its peer's sequence, bytes. */
static void srv_recv(struct server *s, const struct ibv_wc *wc)
{
	uint32_t words = s->p.size / 8, slot;
	const uint64_t *m;
	char why[160];
	long peer, at;

	s->msgs++;
	if (wc->status != IBV_WC_SUCCESS) {
		snprintf(why, sizeof(why), "status %s",
			 ibv_wc_status_str(wc->status));
		goto bad;
	}
	peer = srv_peer_of(s, wc->qp_num);
	if (peer < 0 || wc->byte_len != s->p.size) {
		snprintf(why, sizeof(why), "QP %u (peer %ld), %u bytes",
			 wc->qp_num, peer, wc->byte_len);
		goto bad;
	}
	if (s->got[peer] >= s->p.iters) {
		snprintf(why, sizeof(why), "peer %ld: more than %u SENDs",
			 peer, s->p.iters);
		goto bad;
	}
	slot = s->got[peer]++ % s->p.slots;
	m = (const uint64_t *)(s->d.rbuf + wc->wr_id * s->p.size);
	at = pat_check(m, peer, (uint64_t)slot * words, words, SEED_DATA);
	if (at >= 0) {
		snprintf(why, sizeof(why),
			 "peer %ld, SEND %" PRIu64 ": word %ld differs (not "
			 "the next in order, or wrong bytes)", peer,
			 s->got[peer] - 1, at);
		goto bad;
	}
	srq_post(&s->d, wc->wr_id, s->p.size);
	return;
bad:
	if (s->bad_msgs++ < 5)
		bad("server: a SEND", why);
	srq_post(&s->d, wc->wr_id, s->p.size);
}

/* Poll the receive CQ until the client's DONE arrives on @l. */
static void srv_traffic(struct server *s, struct link *l)
{
	struct pollfd pf = { .fd = fileno(l->in), .events = POLLIN };
	struct ibv_wc wc[16];
	int n, i;

	for (;;) {
		n = s->p.op == OP_SEND ? ibv_poll_cq(s->d.rcq, 16, wc) : 0;
		for (i = 0; i < n; i++)
			srv_recv(s, &wc[i]);
		if (poll(&pf, 1, n ? 0 : (s->p.op == OP_SEND ? 1 : 100)) > 0)
			return;
	}
}

/* After DONE: SEND counts, or every slot's bytes; the bytes verified. */
static uint64_t srv_verify(struct server *s, double drain_until)
{
	uint64_t words = s->p.size / 8, per = (uint64_t)s->p.slots * words;
	struct ibv_wc wc[16];
	uint32_t j;
	char why[160];
	long at;
	int n, i;

	if (s->p.op == OP_SEND) {
		while (s->msgs < (uint64_t)s->p.peers * s->p.iters &&
		       now() < drain_until) {
			n = ibv_poll_cq(s->d.rcq, 16, wc);
			for (i = 0; i < n; i++)
				srv_recv(s, &wc[i]);
		}
		for (j = 0; j < s->p.peers; j++)
			if (s->got[j] != s->p.iters) {
				snprintf(why, sizeof(why), "peer %u: %" PRIu64
					 " SENDs of %u", j, s->got[j],
					 s->p.iters);
				bad("server: every peer's SENDs", why);
				return 0;
			}
		return s->bad_msgs ? 0 :
		       (uint64_t)s->p.peers * s->p.iters * s->p.size;
	}
	for (j = 0; j < s->p.peers; j++) {
		at = pat_check(s->d.buf + j * per, j, 0, per, SEED_DATA);
		if (at >= 0) {
			snprintf(why, sizeof(why), "peer %u, slot %" PRIu64
				 ", word %" PRIu64 " differs from what was "
				 "written", j, at / words, at % words);
			bad("server: the written regions", why);
			return 0;
		}
	}
	return (uint64_t)s->p.peers * per * 8;
}

static void srv_make_qps(struct server *s)
{
	uint32_t j;

	s->qp = calloc(s->p.peers, sizeof(*s->qp));
	s->qpn = calloc(s->p.peers, sizeof(*s->qpn));
	s->by_qpn = calloc(s->p.peers, sizeof(*s->by_qpn));
	s->got = calloc(s->p.peers, sizeof(*s->got));
	if (!s->qp || !s->qpn || !s->by_qpn || !s->got)
		die("calloc");
	for (j = 0; j < s->p.peers; j++) {
		s->qp[j] = s->p.tr == T_RC ? rc_make(&s->d, 1) :
					     dc_make(&s->d, false, 1);
		if (!s->qp[j])
			die(s->p.tr == T_RC ? "server RC QP" : "DCT");
		s->qpn[j] = s->qp[j]->qp_num;
		s->by_qpn[j] = j;
		s->nqp++;
	}
	sort_ctx = s;
	qsort(s->by_qpn, s->p.peers, sizeof(*s->by_qpn), by_qpn_cmp);
}

/* HELLO <rc|dc> <peers> <size> <slots> <iters> <write|send> <gid> */
static void srv_hello(struct server *s, struct link *l, union ibv_gid *cgid)
{
	char tr[8], op[8], g[40];
	char *h = link_want(l, "HELLO ");

	if (sscanf(h, "%7s %u %u %u %u %7s %39s", tr, &s->p.peers, &s->p.size,
		   &s->p.slots, &s->p.iters, op, g) != 7 ||
	    gid_parse(g, cgid) || !s->p.peers || s->p.peers > MAX_PEERS ||
	    !s->p.slots || !s->p.size || s->p.size % 8 ||
	    (uint64_t)s->p.peers * s->p.slots * s->p.size > REGION_CAP) {
		printf("not ok protocol: bad HELLO \"%.80s\"\n", h);
		exit(1);
	}
	s->p.tr = strcmp(tr, "dc") ? T_RC : T_DC;
	s->p.op = strcmp(op, "send") ? OP_WRITE : OP_SEND;
}

static int server(const char *devname, int gidx)
{
	struct server *s = calloc(1, sizeof(*s));
	uint32_t *cq = calloc(MAX_PEERS, sizeof(*cq)), n, j, nrecv = 0;
	union ibv_gid cgid;
	struct link l;
	uint64_t checked;
	double t0;
	char g[33];
	int lfd, fd;

	if (!s || !cq)
		die("calloc");
	lfd = tcp_listen(PORT, 1);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0 || link_open(&l, fd))
		die("accept");
	close(lfd);
	srv_hello(s, &l, &cgid);
	dev_open(&s->d, devname, gidx, SRQ_MAX + 16);
	dev_region(&s->d, (size_t)s->p.peers * s->p.slots * s->p.size);
	for (j = 0; j < s->p.peers; j++)
		pat_fill(s->d.buf + (size_t)j * s->p.slots * (s->p.size / 8),
			 j, 0, (size_t)s->p.slots * (s->p.size / 8),
			 SEED_INIT);
	if (s->p.op == OP_SEND) {
		nrecv = SRQ_BYTES / s->p.size;
		nrecv = nrecv > SRQ_MAX ? SRQ_MAX : nrecv ? nrecv : 1;
	}
	srq_make(&s->d, nrecv, s->p.size);
	gid_str(&s->d.gid, g);
	link_put(&l, "READY %s %u %" PRIu64 "\n", g, s->d.mr->rkey,
		 (uint64_t)(uintptr_t)s->d.buf);
	link_want(&l, "GO");
	t0 = now();
	srv_make_qps(s);
	printf("# server: %u %s made in %.1f ms\n", s->nqp,
	       s->p.tr == T_RC ? "RC QPs" : "DCTs", (now() - t0) * 1e3);
	fflush(stdout);
	link_put_nums(&l, "QPS", s->qpn, s->p.peers);
	n = parse_nums(link_want(&l, "CQPS "), cq, MAX_PEERS);
	if (s->p.tr == T_RC) {
		if (n != s->p.peers) {
			printf("not ok protocol: %u client QPs for %u peers\n",
			       n, s->p.peers);
			return 1;
		}
		for (j = 0; j < n; j++)
			if (rc_connect(&s->d, s->qp[j], cq[j], &cgid))
				die("server RC QP to RTR/RTS");
	}
	link_put(&l, "CONNECTED\n");
	srv_traffic(s, &l);
	link_want(&l, "DONE");
	checked = srv_verify(s, now() + WAIT_SECS);
	if (checked && !fails) {
		link_put(&l, "OK %" PRIu64 "\n", checked);
		ok("server: every byte received or written as the client sent it");
	} else {
		link_put(&l, "FAIL\n");
	}
	for (j = 0; j < s->nqp; j++)
		if (ibv_destroy_qp(s->qp[j]))
			bad("server: destroy QP", strerror(errno));
	printf("srnic_dc_bench: done\n");
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------ client */

struct opts {
	const char *dev, *host, *hold;
	int gidx;
	struct params p;
	uint32_t dcis, depth, lat_size, lat_rounds;
	uint64_t bytes;
	bool corrupt;
};

struct client {
	struct dev d;
	struct opts o;
	struct link l;
	union ibv_gid sgid;
	uint32_t rkey;
	uint64_t raddr;
	uint32_t *sqpn;		/* the server's QP / DCT numbers */
	uint32_t nqp;
	struct ibv_qp **qp;
	struct ibv_ah *ah;	/* DC: the server */
	uint64_t *lat;		/* READ landing area */
	double *samples;
};

static struct ibv_qp *cli_qp_of(struct client *c, uint32_t peer)
{
	return c->o.p.tr == T_RC ? c->qp[peer] : c->qp[peer % c->nqp];
}

/* Post one WR of @len bytes at @loc to peer @peer's region + @roff. */
static int cli_post(struct client *c, uint32_t peer, enum ibv_wr_opcode op,
		    void *loc, uint32_t len, uint64_t roff, uint64_t wr_id)
{
	struct ibv_qp *qp = cli_qp_of(c, peer);
	uint64_t raddr = c->raddr + roff;
	struct ibv_qp_ex *qpx;
	struct ibv_sge sge = { .addr = (uintptr_t)loc, .length = len,
			       .lkey = c->d.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = c->rkey },
	}, *badwr;

	if (c->o.p.tr == T_RC)
		return ibv_post_send(qp, &wr, &badwr);
	qpx = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_SEND)
		ibv_wr_send(qpx);
	else if (op == IBV_WR_RDMA_WRITE)
		ibv_wr_rdma_write(qpx, c->rkey, raddr);
	else
		ibv_wr_rdma_read(qpx, c->rkey, raddr);
	srnicdv_wr_set_dc_addr(qpx, c->ah, c->sqpn[peer], DC_KEY);
	ibv_wr_set_sge(qpx, c->d.mr->lkey, (uintptr_t)loc, len);
	return ibv_wr_complete(qpx);
}

/* Up to @max completions within WAIT_SECS; the count, -1 on an error. */
static int cli_reap(struct client *c, int max)
{
	struct ibv_wc wc[16];
	double end = now() + WAIT_SECS;
	char why[96];
	int n, i;

	if (max > 16)
		max = 16;
	while ((n = ibv_poll_cq(c->d.scq, max, wc)) == 0)
		if (now() > end) {
			bad("completion", "none within 60 s");
			return -1;
		}
	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			snprintf(why, sizeof(why), "WR %" PRIu64 ": %s",
				 wc[i].wr_id,
				 ibv_wc_status_str(wc[i].status));
			bad("completion", why);
			return -1;
		}
	return n;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct lat {
	double med, min, p99;
	uint32_t n;
};

static void lat_stats(double *v, uint32_t n, struct lat *l)
{
	qsort(v, n, sizeof(*v), dbl_cmp);
	l->n = n;
	l->min = n ? v[0] : 0;
	l->med = n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
	l->p99 = n ? v[(n * 99 + 99) / 100 - 1] : 0;
}

/* One READ from peer @peer, timed; its bytes compared with the pattern. */
static double cli_read_one(struct client *c, uint32_t peer)
{
	uint64_t roff = (uint64_t)peer * c->o.p.slots * c->o.p.size;
	uint32_t words = c->o.lat_size / 8;
	double t0;

	memset(c->lat, 0, c->o.lat_size);
	t0 = now();
	if (cli_post(c, peer, IBV_WR_RDMA_READ, c->lat, c->o.lat_size, roff,
		     peer) || cli_reap(c, 1) != 1)
		return -1;
	t0 = now() - t0;
	if (pat_check(c->lat, peer, 0, words, SEED_INIT) >= 0) {
		bad("latency READ", "the bytes read differ from the server's");
		return -1;
	}
	return t0 * 1e6;
}

static void cli_latency(struct client *c, struct lat *rr, struct lat *one)
{
	uint32_t n = c->o.p.peers * c->o.lat_rounds, i;

	for (i = 0; i < n && !fails; i++)
		c->samples[i] = cli_read_one(c, i % c->o.p.peers);
	lat_stats(c->samples, fails ? 0 : n, rr);
	n = n < 256 ? 256 : n > 1000 ? 1000 : n;
	for (i = 0; i < n && !fails; i++)
		c->samples[i] = cli_read_one(c, 0);
	lat_stats(c->samples, fails ? 0 : n, one);
}

/* Round-robin over the peers, at most depth WRs in flight; seconds. */
static double cli_bandwidth(struct client *c)
{
	uint64_t total = (uint64_t)c->o.p.peers * c->o.p.iters, posted = 0;
	uint64_t done = 0;
	enum ibv_wr_opcode op = c->o.p.op == OP_SEND ? IBV_WR_SEND :
						       IBV_WR_RDMA_WRITE;
	uint32_t inflight = 0;
	double t0 = now();
	int n;

	while (done < total && !fails) {
		while (inflight < c->o.depth && posted < total) {
			uint32_t peer = posted % c->o.p.peers;
			uint64_t slot = (posted / c->o.p.peers) % c->o.p.slots;
			uint64_t off = ((uint64_t)peer * c->o.p.slots + slot) *
				       c->o.p.size;

			if (cli_post(c, peer, op, c->d.buf + off / 8,
				     c->o.p.size, off, posted)) {
				bad("post", strerror(errno));
				return 0;
			}
			posted++;
			inflight++;
		}
		n = cli_reap(c, (int)inflight);
		if (n < 0)
			return 0;
		done += n;
		inflight -= n;
	}
	return now() - t0;
}

/* Make the client's QPs; RC: each connected to its server QP. */
static void cli_make_qps(struct client *c)
{
	uint32_t n = c->o.p.tr == T_RC ? c->o.p.peers : c->o.dcis, j;

	c->qp = calloc(n, sizeof(*c->qp));
	if (!c->qp)
		die("calloc");
	for (j = 0; j < n; j++) {
		c->qp[j] = c->o.p.tr == T_RC ? rc_make(&c->d, c->o.depth) :
					       dc_make(&c->d, true,
						       c->o.depth);
		if (!c->qp[j])
			die(c->o.p.tr == T_RC ? "client RC QP" : "DCI");
		c->nqp++;
		if (c->o.p.tr == T_RC &&
		    rc_connect(&c->d, c->qp[j], c->sqpn[j], &c->sgid))
			die("client RC QP to RTR/RTS");
	}
	if (c->o.p.tr == T_DC) {
		c->ah = ah_make(c->d.pd, c->d.gidx, &c->sgid);
		if (!c->ah)
			die("ibv_create_ah");
	}
}

static void cli_hold(const char *path)
{
	char ready[4096];
	double end = now() + 120;
	int fd;

	snprintf(ready, sizeof(ready), "%s.ready", path);
	fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(ready);
	close(fd);
	printf("# holding until %s exists\n", path);
	fflush(stdout);
	while (access(path, F_OK) && now() < end)
		usleep(50000);
}

struct result {
	double setup_ms, srv_ms, bw_s;
	long kmem_srv, kmem_cli, kmem_traffic;
	uint32_t srv_qps;
	uint64_t verified;
	struct lat rr, one;
};

static void cli_report(struct client *c, const struct result *r)
{
	const struct opts *o = &c->o;
	const char *tr = o->p.tr == T_RC ? "rc" : "dc";
	const char *op = o->p.op == OP_SEND ? "send" : "write";
	uint64_t bytes = (uint64_t)o->p.peers * o->p.iters * o->p.size;
	double mibs = r->bw_s > 0 ? bytes / r->bw_s / 1048576.0 : 0;
	bool exact = o->p.op == OP_SEND || o->p.iters <= o->p.slots;

	printf("# %s, %u peers: client %u %s, server %u %s; setup %.1f ms "
	       "(server's QPs %.1f ms)\n", tr, o->p.peers, c->nqp,
	       o->p.tr == T_RC ? "RC QPs" : "DCIs", r->srv_qps,
	       o->p.tr == T_RC ? "RC QPs" : "DCTs", r->setup_ms, r->srv_ms);
	printf("# kernel memory: +%ld KiB for the setup (server's QPs %ld, "
	       "client's %ld), %+ld KiB more after the traffic\n",
	       r->kmem_srv + r->kmem_cli, r->kmem_srv, r->kmem_cli,
	       r->kmem_traffic);
	printf("# latency, READ %u B: each peer in turn median %.1f us "
	       "(min %.1f, p99 %.1f, %u), peer 0 alone median %.1f us\n",
	       o->lat_size, r->rr.med, r->rr.min, r->rr.p99, r->rr.n,
	       r->one.med);
	printf("# bandwidth, %s %u B x %u per peer in turn, %u in flight: "
	       "%.2f MiB in %.3f s = %.2f MiB/s; %" PRIu64 " bytes verified "
	       "by the server (%s)\n", op, o->p.size, o->p.iters, o->depth,
	       bytes / 1048576.0, r->bw_s, mibs, r->verified,
	       exact ? "every byte moved" : "each slot's last write");
	printf("{\"tool\":\"srnic_dc_bench\",\"transport\":\"%s\","
	       "\"peers\":%u,\"dcis\":%u,\"op\":\"%s\",\"size\":%u,"
	       "\"iters\":%u,\"depth\":%u,\"qps_client\":%u,"
	       "\"qps_server\":%u,\"setup_ms\":%.2f,\"server_qps_ms\":%.2f,"
	       "\"kmem_setup_kb\":%ld,\"kmem_server_kb\":%ld,"
	       "\"kmem_client_kb\":%ld,\"kmem_traffic_kb\":%ld,"
	       "\"bytes\":%" PRIu64 ",\"bw_s\":%.4f,\"bw_mib_s\":%.3f,"
	       "\"lat_size\":%u,\"lat_rr_us\":%.2f,\"lat_rr_min_us\":%.2f,"
	       "\"lat_rr_p99_us\":%.2f,\"lat_rr_n\":%u,\"lat_one_us\":%.2f,"
	       "\"verified_bytes\":%" PRIu64 ",\"verified_exact\":%s,"
	       "\"verified\":%s}\n", tr, o->p.peers,
	       o->p.tr == T_DC ? c->nqp : 0, op, o->p.size, o->p.iters,
	       o->depth, c->nqp, r->srv_qps, r->setup_ms, r->srv_ms,
	       r->kmem_srv + r->kmem_cli, r->kmem_srv, r->kmem_cli,
	       r->kmem_traffic, bytes, r->bw_s, mibs, o->lat_size, r->rr.med,
	       r->rr.min, r->rr.p99, r->rr.n, r->one.med, r->verified,
	       exact ? "true" : "false", fails ? "false" : "true");
}

/* HELLO, READY, then the device on this side; GO is the caller's. */
static void cli_start(struct client *c)
{
	struct params *p = &c->o.p;
	char g[33], sg[40];
	int fd = tcp_connect(c->o.host, PORT, 20);

	if (fd < 0 || link_open(&c->l, fd))
		die("connect");
	dev_open(&c->d, c->o.dev, c->o.gidx, 2 * c->o.depth + 16);
	gid_str(&c->d.gid, g);
	link_put(&c->l, "HELLO %s %u %u %u %u %s %s\n",
		 p->tr == T_RC ? "rc" : "dc", p->peers, p->size, p->slots,
		 p->iters, p->op == OP_SEND ? "send" : "write", g);
	if (sscanf(link_want(&c->l, "READY "), "%39s %u %" SCNu64, sg,
		   &c->rkey, &c->raddr) != 3 || gid_parse(sg, &c->sgid)) {
		printf("not ok protocol: bad READY\n");
		exit(1);
	}
	dev_region(&c->d, (size_t)p->peers * p->slots * p->size +
		   c->o.lat_size);
	c->lat = c->d.buf + (size_t)p->peers * p->slots * (p->size / 8);
	for (uint32_t j = 0; j < p->peers; j++)
		pat_fill(c->d.buf + (size_t)j * p->slots * (p->size / 8), j,
			 0, (size_t)p->slots * (p->size / 8), SEED_DATA);
	srq_make(&c->d, 0, 0);
	c->sqpn = calloc(MAX_PEERS, sizeof(*c->sqpn));
	c->samples = calloc((size_t)p->peers * c->o.lat_rounds + 1000,
			    sizeof(*c->samples));
	if (!c->sqpn || !c->samples)
		die("calloc");
}

static int client(const struct opts *o)
{
	struct client *c = calloc(1, sizeof(*c));
	struct meminfo m0, m1, m2, m3;
	struct result r = {};
	double t0, pause;
	uint32_t j;
	char *s;

	if (!c)
		die("calloc");
	c->o = *o;
	cli_start(c);
	kmem_read(&m0);
	t0 = now();
	link_put(&c->l, "GO\n");
	r.srv_qps = parse_nums(link_want(&c->l, "QPS "), c->sqpn, MAX_PEERS);
	r.srv_ms = (now() - t0) * 1e3;
	if (r.srv_qps != o->p.peers) {
		printf("not ok protocol: %u server QPs for %u peers\n",
		       r.srv_qps, o->p.peers);
		return 1;
	}
	pause = now();
	kmem_read(&m1);
	t0 += now() - pause;		/* the memory reading is not timed */
	cli_make_qps(c);
	if (o->p.tr == T_RC) {
		uint32_t *q = calloc(c->nqp, sizeof(*q));

		for (j = 0; q && j < c->nqp; j++)
			q[j] = c->qp[j]->qp_num;
		link_put_nums(&c->l, "CQPS", q, q ? c->nqp : 0);
		free(q);
	} else {
		link_put(&c->l, "CQPS 0\n");
	}
	link_want(&c->l, "CONNECTED");
	r.setup_ms = (now() - t0) * 1e3;
	kmem_read(&m2);
	r.kmem_srv = kmem_kb(&m0, &m1);
	r.kmem_cli = kmem_kb(&m1, &m2);
	if (o->hold)
		cli_hold(o->hold);
	cli_latency(c, &r.rr, &r.one);
	if (!fails)
		ok("latency: every READ's bytes as the server holds them");
	if (o->corrupt)		/* the last peer's last slot, its middle byte */
		((uint8_t *)c->d.buf)[(size_t)o->p.peers * o->p.slots *
				      o->p.size - o->p.size / 2] ^= 0x40;
	if (!fails)
		r.bw_s = cli_bandwidth(c);
	kmem_read(&m3);
	r.kmem_traffic = kmem_kb(&m2, &m3);
	link_put(&c->l, "DONE\n");
	s = link_get(&c->l);
	if (s && !strncmp(s, "OK ", 3)) {
		r.verified = strtoull(s + 3, NULL, 10);
		ok("bandwidth: the server verified every peer's data");
	} else {
		bad("bandwidth: the server's verdict", s ? s : "EOF");
	}
	cli_report(c, &r);
	for (j = 0; j < c->nqp; j++)
		if (ibv_destroy_qp(c->qp[j]))
			bad("destroy QP", strerror(errno));
	printf("srnic_dc_bench: done\n");
	return fails ? 1 : 0;
}

/* ------------------------------------------------------------ main */

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': return v << 10;
	case 'm': case 'M': return v << 20;
	case 'g': case 'G': return v << 30;
	default: return v;
	}
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s -d DEV [-g GIDX] --server\n"
		"       %s -d DEV [-g GIDX] --transport rc|dc --peers N [--dcis K]\n"
		"          [--op write|send] [--size B] [--iters I | --bytes TOTAL]\n"
		"          [--depth D] [--lat-size B] [--lat-rounds R]\n"
		"          [--hold FILE] [--corrupt] HOST\n", prog, prog);
	exit(2);
}

/* iters from --bytes if not given; slots; the checks of the options */
static void opts_finish(struct opts *o, const char *prog)
{
	struct params *p = &o->p;
	uint64_t per;

	if (!p->peers || p->peers > MAX_PEERS || !o->dcis ||
	    o->dcis > MAX_DCIS || !o->depth || o->depth > MAX_DEPTH ||
	    p->size < 8 || p->size % 8 || p->size > (1u << 20) ||
	    o->lat_size < 8 || o->lat_size % 8 || o->lat_size > p->size ||
	    !o->lat_rounds || o->lat_rounds > 100) {
		fprintf(stderr, "%s: bad option value (peers 1-%u, dcis 1-%u, "
			"depth 1-%u, sizes multiples of 8, lat-size <= size)\n",
			prog, MAX_PEERS, MAX_DCIS, MAX_DEPTH);
		usage(prog);
	}
	if (!p->iters) {
		per = o->bytes / ((uint64_t)p->peers * p->size);
		p->iters = per ? (per > 1000000 ? 1000000 : per) : 1;
	}
	per = REGION_CAP / ((uint64_t)p->peers * p->size);
	if (!per) {
		fprintf(stderr, "%s: peers x size over %u MiB\n", prog,
			REGION_CAP >> 20);
		usage(prog);
	}
	p->slots = p->iters < per ? p->iters : per;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "server", no_argument, NULL, 's' },
		{ "transport", required_argument, NULL, 't' },
		{ "peers", required_argument, NULL, 'n' },
		{ "dcis", required_argument, NULL, 'k' },
		{ "op", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 'S' },
		{ "iters", required_argument, NULL, 'i' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "depth", required_argument, NULL, 'D' },
		{ "lat-size", required_argument, NULL, 'L' },
		{ "lat-rounds", required_argument, NULL, 'R' },
		{ "hold", required_argument, NULL, 'H' },
		{ "corrupt", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.gidx = 1, .dcis = 1, .depth = 32, .lat_size = 8,
		.lat_rounds = 3, .bytes = 32u << 20,
		.p = { .tr = T_RC, .op = OP_WRITE, .peers = 16, .size = 4096 },
	};
	bool srv = false;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt_long(argc, argv, "d:g:s", lo, NULL)) != -1) {
		switch (opt) {
		case 'd': o.dev = optarg; break;
		case 'g': o.gidx = atoi(optarg); break;
		case 's': srv = true; break;
		case 't':
			if (strcmp(optarg, "rc") && strcmp(optarg, "dc"))
				usage(argv[0]);
			o.p.tr = strcmp(optarg, "dc") ? T_RC : T_DC;
			break;
		case 'n': o.p.peers = strtoul(optarg, NULL, 0); break;
		case 'k': o.dcis = strtoul(optarg, NULL, 0); break;
		case 'o':
			if (strcmp(optarg, "write") && strcmp(optarg, "send"))
				usage(argv[0]);
			o.p.op = strcmp(optarg, "send") ? OP_WRITE : OP_SEND;
			break;
		case 'S': o.p.size = parse_size(optarg); break;
		case 'i': o.p.iters = strtoul(optarg, NULL, 0); break;
		case 'b': o.bytes = parse_size(optarg); break;
		case 'D': o.depth = strtoul(optarg, NULL, 0); break;
		case 'L': o.lat_size = parse_size(optarg); break;
		case 'R': o.lat_rounds = strtoul(optarg, NULL, 0); break;
		case 'H': o.hold = optarg; break;
		case 'C': o.corrupt = true; break;
		default: usage(argv[0]);
		}
	}
	if (!o.dev)
		usage(argv[0]);
	if (srv) {
		if (optind != argc)
			usage(argv[0]);
		return server(o.dev, o.gidx);
	}
	if (optind != argc - 1)
		usage(argv[0]);
	o.host = argv[optind];
	opts_finish(&o, argv[0]);
	return client(&o);
}
