// SPDX-License-Identifier: GPL-2.0
/*
 * xrc_share: XRC with several processes in one XRC domain, run by
 * tests/vm/test_xrc.sh on a native device (srnic's provider):
 *
 *   xrc_share DEV GID_INDEX            the XRC checks below
 *   xrc_share DEV GID_INDEX refused    DEV is a default-mode device: XRC
 *                                      domains and QPs are refused
 *
 * The parent opens the domain on a file (ibv_open_xrcd with O_CREAT) and
 * makes the XRC receive (target) QP. Two receiver processes open the same
 * domain through the file, ibv_open_qp() the target QP by its number, and
 * each makes its own XRC SRQ on its own CQ and posts receives. A sender
 * process makes an XRC send (initiator) QP connected to the target (the
 * loopback path through GID_INDEX) and sends messages of several sizes,
 * multi-packet ones included, alternately to the two SRQs. Each receiver
 * checks every byte it got, that every completion names the target QP,
 * and that nothing meant for the other receiver came to it. An RDMA
 * WRITE, FETCH_ADDs and CMP_SWPs over XRC land in receiver 0's buffer, keyed in
 * the PD of its SRQ, and RDMA READs over XRC of several sizes (one byte to
 * ten packets) bring back what receiver 0 put in its buffer, every byte.
 * Then the refusals: a send naming an SRQ number nobody has and one naming
 * an SRQ of another domain complete in error at the sender (remote invalid
 * request; test_xrc.sh checks that the device's send_inv_req_err counter
 * moved by two), while the SRQ of the other domain receives nothing; a
 * READ with a wrong R_Key completes with a remote access error
 * (resp_remote_access_errors moves by one).
 *
 * Processes talk through pipes: SRQ numbers up, "go" and "done" across.
 * Prints one line per check, "ok NAME" or "not ok NAME: reason", then
 * "xrc_share: done, N failed"; exits 0 when it ran to the end.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vtest.h"

#define NRECV		2
#define NMSG		6		/* per receiver */
#define MSG_MAX		(10 * 1024)	/* ten 1 KiB packets */
#define SLOT		(MSG_MAX + 64)	/* a receive buffer */
#define WAIT_MS		20000
#define DOMAIN_FILE	"/tmp/xrc_share.domain"

static const char *dev_name;
static int gid_index;

/* Message @i to receiver @r: its size, and the byte at offset @off. */
static size_t msg_len(int i)
{
	static const size_t lens[NMSG] = { 1, 100, 1024, 1025, 4096, MSG_MAX };

	return lens[i];
}

static uint8_t msg_byte(int r, int i, size_t off)
{
	return (uint8_t)(0x40 * r + 7 * i + off * 13 + (off >> 8));
}

static bool xwrite(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n;
}

static bool xread(int fd, void *p, size_t n)
{
	return read(fd, p, n) == (ssize_t)n;
}

static struct ibv_xrcd *open_domain(struct ibv_context *ctx, int *fd)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = O_CREAT,
	};

	*fd = open(DOMAIN_FILE, O_RDONLY | O_CREAT, 0600);
	if (*fd < 0)
		return NULL;
	xa.fd = *fd;
	return ibv_open_xrcd(ctx, &xa);
}

static struct ibv_srq *xrc_srq(struct ibv_context *ctx, struct ibv_pd *pd,
			       struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 2 * NMSG, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
	};

	return ibv_create_srq_ex(ctx, &sa);
}

/* Post @n receives of SLOT bytes at @buf. */
static int post_recvs(struct ibv_srq *srq, struct ibv_mr *mr, uint8_t *buf,
		      int n)
{
	struct ibv_recv_wr *bad;
	int i, err;

	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)(buf + (size_t)i * SLOT),
			.length = SLOT,
			.lkey = mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
		};

		err = ibv_post_srq_recv(srq, &wr, &bad);
		if (err)
			return err;
	}
	return 0;
}

/* What a receiver tells the sender: its SRQ, and a buffer for RDMA. */
struct peer {
	uint32_t srqn;
	uint32_t rkey;
	uint64_t addr;
};

/* Receiver 0's buffer, past its first message: an RDMA WRITE and a word. */
#define RDMA_OFF	4096
#define RDMA_LEN	3000	/* three packets */
#define ATOMIC_OFF	8192
/* Receiver 0's extra slot past its receive buffers: what READs read. */
#define READ_OFF	((size_t)NMSG * SLOT)
#define READ_MAX	(MSG_MAX - 240)	/* ten packets, the last one short */
#define RCV_BUF		((size_t)(NMSG + 1) * SLOT)

static uint8_t rdma_byte(size_t off)
{
	return (uint8_t)(off * 7 + 3);
}

static uint8_t read_byte(size_t off)
{
	return (uint8_t)(off * 11 + (off >> 9) + 0x21);
}

/* ------------------------------------------------------------ receiver */

struct rcv {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *tgt;
	uint8_t *buf;
	int fd;
};

static bool rcv_setup(struct rcv *v, int r, uint32_t tgt_qpn)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt_qpn,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	char name[64];

	v->ctx = open_dev(dev_name);
	v->pd = v->ctx ? ibv_alloc_pd(v->ctx) : NULL;
	snprintf(name, sizeof(name), "receiver %d: device and PD", r);
	if (!check(name, v->pd, "%s", strerror(errno)))
		return false;
	v->xrcd = open_domain(v->ctx, &v->fd);
	snprintf(name, sizeof(name), "receiver %d: ibv_open_xrcd on the shared file", r);
	if (!check(name, v->xrcd, "%s", strerror(errno)))
		return false;
	oa.xrcd = v->xrcd;
	v->tgt = ibv_open_qp(v->ctx, &oa);
	snprintf(name, sizeof(name), "receiver %d: ibv_open_qp of the target QP", r);
	if (!check(name, v->tgt && v->tgt->qp_num == tgt_qpn, "%s",
		   strerror(errno)))
		return false;
	v->buf = aligned_alloc(4096, RCV_BUF);
	v->mr = v->buf ? ibv_reg_mr(v->pd, v->buf, RCV_BUF,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	v->cq = ibv_create_cq(v->ctx, 4 * NMSG, NULL, NULL, 0);
	v->srq = v->mr && v->cq ? xrc_srq(v->ctx, v->pd, v->xrcd, v->cq) : NULL;
	snprintf(name, sizeof(name), "receiver %d: XRC SRQ on its own CQ", r);
	if (!check(name, v->srq, "%s", strerror(errno)))
		return false;
	memset(v->buf, 0, RCV_BUF);
	for (size_t off = 0; off < SLOT; off++)
		v->buf[READ_OFF + off] = read_byte(off);
	return !post_recvs(v->srq, v->mr, v->buf, NMSG);
}

/* The NMSG messages of receiver @r, in order, every byte. */
static void rcv_check(struct rcv *v, int r, uint32_t tgt_qpn)
{
	char name[80];
	int i, bad_bytes = 0, bad_wc = 0;
	struct ibv_wc wc;

	for (i = 0; i < NMSG; i++) {
		size_t off, len = msg_len(i);
		const uint8_t *p;

		if (vt_poll_one(v->cq, &wc, WAIT_MS) != 1) {
			bad("receiver completions", "receiver %d: message %d never completed", r, i);
			return;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.byte_len != len || wc.qp_num != tgt_qpn ||
		    wc.wr_id != (uint64_t)i) {
			bad_wc++;
			printf("# receiver %d msg %d: status %d opcode %d len %u qp %u wr_id %llu\n",
			       r, i, wc.status, wc.opcode, wc.byte_len,
			       wc.qp_num, (unsigned long long)wc.wr_id);
			continue;
		}
		p = v->buf + (size_t)i * SLOT;
		for (off = 0; off < len; off++)
			bad_bytes += p[off] != msg_byte(r, i, off);
		/* nothing past the message */
		bad_bytes += p[len] != 0;
	}
	snprintf(name, sizeof(name),
		 "receiver %d: %d messages on its SRQ's CQ, each naming the target QP",
		 r, NMSG);
	check(name, !bad_wc, "%d completions wrong", bad_wc);
	snprintf(name, sizeof(name), "receiver %d: every byte as sent", r);
	check(name, !bad_bytes, "%d bytes differ", bad_bytes);
	snprintf(name, sizeof(name), "receiver %d: nothing else on its CQ", r);
	check(name, vt_poll_one(v->cq, &wc, 200) == 0, "an extra completion");
}

/*
 * After the sender is done: its RDMA WRITE, two FETCH_ADDs of 5, a CMP_SWP
 * of 10 with 77 and one that does not match.
 */
static void rcv_check_rdma(struct rcv *v)
{
	uint64_t word;
	size_t off;
	int bad_bytes = 0;

	for (off = 0; off < RDMA_LEN; off++)
		bad_bytes += v->buf[RDMA_OFF + off] != rdma_byte(off);
	bad_bytes += v->buf[RDMA_OFF + RDMA_LEN] != 0;
	check("receiver 0: the XRC RDMA WRITE landed in its SRQ's PD, every byte",
	      !bad_bytes, "%d bytes differ", bad_bytes);
	memcpy(&word, v->buf + ATOMIC_OFF, sizeof(word));
	check("receiver 0: two XRC FETCH_ADDs of 5 and a CMP_SWP made 77",
	      word == 77, "the word is %llu", (unsigned long long)word);
}

static void rcv_teardown(struct rcv *v)
{
	if (v->srq)
		ibv_destroy_srq(v->srq);
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->mr)
		ibv_dereg_mr(v->mr);
	if (v->tgt)
		ibv_destroy_qp(v->tgt);
	if (v->xrcd)
		ibv_close_xrcd(v->xrcd);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	free(v->buf);
}

/*
 * A receiver process: up[1] gets its SRQ number (0 on failure), down[0]
 * says when the sends are done. Exit status: its failed checks.
 */
static int receiver(int r, uint32_t tgt_qpn, int up, int down)
{
	struct rcv v = {};
	struct peer p = {};
	char c;

	if (rcv_setup(&v, r, tgt_qpn) && ibv_get_srq_num(v.srq, &p.srqn))
		p.srqn = 0;
	check(r ? "receiver 1: ibv_get_srq_num" : "receiver 0: ibv_get_srq_num",
	      p.srqn, "no SRQ number");
	if (p.srqn) {
		p.rkey = v.mr->rkey;
		p.addr = (uintptr_t)v.buf;
	}
	xwrite(up, &p, sizeof(p));
	if (p.srqn)
		rcv_check(&v, r, tgt_qpn);
	xread(down, &c, 1);
	if (p.srqn && r == 0)
		rcv_check_rdma(&v);
	rcv_teardown(&v);
	return fails;
}

/* -------------------------------------------------------------- parent */

struct tgt {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *tgt, *ini;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int fd;
};

static struct ibv_qp *make_qp(struct tgt *t, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = type,
		.cap = { .max_send_wr = 2 * NMSG, .max_send_sge = 1 },
	};

	if (type == IBV_QPT_XRC_RECV) {
		qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		qa.xrcd = t->xrcd;
		memset(&qa.cap, 0, sizeof(qa.cap));
	} else {
		qa.comp_mask = IBV_QP_INIT_ATTR_PD;
		qa.pd = t->pd;
		qa.send_cq = t->scq;
	}
	return ibv_create_qp_ex(t->ctx, &qa);
}

/* An initiator and a target QP, connected to each other. */
static bool make_pair(struct tgt *t)
{
	struct vt_conn c = {
		.dgid = t->gid, .sgid_index = gid_index, .psn = 0x123,
		.timeout = 14, .rnr_retry = 7,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_qp_attr a;

	t->tgt = make_qp(t, IBV_QPT_XRC_RECV);
	t->ini = make_qp(t, IBV_QPT_XRC_SEND);
	if (!t->tgt || !t->ini)
		return false;
	/* the target only answers: INIT and RTR */
	vt_init_attr(&a, &c);
	if (ibv_modify_qp(t->tgt, &a, VT_INIT_MASK))
		return false;
	c.dest_qpn = t->ini->qp_num;
	vt_rtr_attr(&a, &c);
	if (ibv_modify_qp(t->tgt, &a, VT_RTR_MASK))
		return false;
	c.dest_qpn = t->tgt->qp_num;
	return !vt_qp_connect(t->ini, &c);
}

static void drop_pair(struct tgt *t)
{
	if (t->ini)
		ibv_destroy_qp(t->ini);
	if (t->tgt)
		ibv_destroy_qp(t->tgt);
	t->ini = t->tgt = NULL;
}

static int send_to(struct tgt *t, uint32_t srqn, size_t off, size_t len,
		   uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(t->buf + off), .length = len,
		.lkey = t->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *badwr;

	wr.qp_type.xrc.remote_srqn = srqn;
	return ibv_post_send(t->ini, &wr, &badwr);
}

/* Send NMSG messages to each receiver, alternately; check the sends. */
static void send_all(struct tgt *t, const uint32_t *srqn)
{
	int i, r, n = 0, bad_wc = 0, err = 0;
	struct ibv_wc wc;

	for (i = 0; i < NMSG; i++) {
		for (r = 0; r < NRECV; r++) {
			size_t off = (size_t)(i * NRECV + r) * SLOT, k;

			for (k = 0; k < msg_len(i); k++)
				t->buf[off + k] = msg_byte(r, i, k);
			err = err ?: send_to(t, srqn[r], off, msg_len(i),
					     i * NRECV + r);
		}
	}
	check("sender: XRC sends posted", !err, "%s", strerror(err));
	for (n = 0; n < NMSG * NRECV; n++) {
		if (vt_poll_one(t->scq, &wc, WAIT_MS) != 1)
			break;
		bad_wc += wc.status != IBV_WC_SUCCESS;
	}
	check("sender: every send completed successfully",
	      n == NMSG * NRECV && !bad_wc, "%d completions, %d in error",
	      n, bad_wc);
}

/* Post one WR on the initiator and wait for its completion: its status. */
static int post_wait(struct tgt *t, struct ibv_send_wr *wr, struct ibv_wc *wc)
{
	struct ibv_send_wr *badwr;

	if (ibv_post_send(t->ini, wr, &badwr))
		return -1;
	if (vt_poll_one(t->scq, wc, WAIT_MS) != 1)
		return -1;
	return wc->status;
}

/*
 * RDMA over XRC to receiver 0: a WRITE of RDMA_LEN bytes and two
 * FETCH_ADDs, keyed in the PD of its SRQ (the target QP has none).
 */
static void rdma_to(struct tgt *t, const struct peer *p)
{
	uint8_t *src = t->buf + 2 * SLOT;
	uint64_t *orig = (uint64_t *)(t->buf + 3 * SLOT);
	struct ibv_sge sge = {
		.addr = (uintptr_t)src, .length = RDMA_LEN,
		.lkey = t->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 200, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;
	size_t off;
	int st, i;

	for (off = 0; off < RDMA_LEN; off++)
		src[off] = rdma_byte(off);
	wr.qp_type.xrc.remote_srqn = p->srqn;
	wr.wr.rdma.remote_addr = p->addr + RDMA_OFF;
	wr.wr.rdma.rkey = p->rkey;
	st = post_wait(t, &wr, &wc);
	check("sender: XRC RDMA WRITE completed", st == IBV_WC_SUCCESS,
	      "status %d", st);
	for (i = 0; i < 2; i++) {
		sge.addr = (uintptr_t)&orig[i];
		sge.length = sizeof(uint64_t);
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = p->addr + ATOMIC_OFF;
		wr.wr.atomic.rkey = p->rkey;
		wr.wr.atomic.compare_add = 5;
		orig[i] = 99;
		st = post_wait(t, &wr, &wc);
		check(i ? "sender: second XRC FETCH_ADD returned 5" :
			  "sender: first XRC FETCH_ADD returned 0",
		      st == IBV_WC_SUCCESS && orig[i] == (uint64_t)(5 * i),
		      "status %d, original %llu", st,
		      (unsigned long long)orig[i]);
	}
	/* 10 -> 77, then a compare that fails: 77 stays */
	for (i = 0; i < 2; i++) {
		sge.addr = (uintptr_t)&orig[i];
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = 10;
		wr.wr.atomic.swap = i ? 5 : 77;
		orig[i] = 99;
		st = post_wait(t, &wr, &wc);
		check(i ? "sender: failing XRC CMP_SWP returned 77" :
			  "sender: XRC CMP_SWP 10 -> 77 returned 10",
		      st == IBV_WC_SUCCESS && orig[i] == (i ? 77u : 10u),
		      "status %d, original %llu", st,
		      (unsigned long long)orig[i]);
	}
}

/*
 * RDMA READs over XRC from receiver 0's READ slot, keyed in the PD of its
 * SRQ: one byte, one packet, a packet and a byte, four packets, ten
 * (1 KiB MTU), each into a fresh part of the sender's buffer, every byte
 * and the byte after the last checked.
 */
static void read_from(struct tgt *t, const struct peer *p)
{
	static const size_t lens[] = { 1, 1024, 1025, 4096, READ_MAX };
	uint8_t *dst = t->buf + 4 * SLOT;
	struct ibv_sge sge = { .addr = (uintptr_t)dst, .lkey = t->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 300, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;
	char name[80];
	size_t i, off;
	int st, bad_bytes;

	wr.qp_type.xrc.remote_srqn = p->srqn;
	wr.wr.rdma.rkey = p->rkey;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		/* a different offset each time: a stale byte shows */
		off = 3 * i;
		memset(dst, 0xee, lens[i] + 1);
		sge.length = lens[i];
		wr.wr.rdma.remote_addr = p->addr + READ_OFF + off;
		st = post_wait(t, &wr, &wc);
		bad_bytes = dst[lens[i]] != 0xee;
		for (size_t k = 0; k < lens[i]; k++)
			bad_bytes += dst[k] != read_byte(off + k);
		snprintf(name, sizeof(name),
			 "sender: XRC RDMA READ of %zu bytes, every byte", lens[i]);
		check(name, st == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ &&
		      wc.byte_len == lens[i] && !bad_bytes,
		      "status %d opcode %d byte_len %u, %d bytes differ", st,
		      wc.opcode, wc.byte_len, bad_bytes);
	}
}

/* A READ with a wrong R_Key on a fresh pair: a remote access error. */
static void read_refused(struct tgt *t, const struct peer *p)
{
	const char *name = "an XRC READ with a wrong R_Key fails: remote access error";
	struct ibv_sge sge = {
		.addr = (uintptr_t)(t->buf + 4 * SLOT), .length = 64,
		.lkey = t->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 400, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc = {};
	int st;

	if (!make_pair(t)) {
		bad(name, "a fresh QP pair: %s", strerror(errno));
		drop_pair(t);
		return;
	}
	wr.qp_type.xrc.remote_srqn = p->srqn;
	wr.wr.rdma.remote_addr = p->addr + READ_OFF;
	/* another key byte: that MR's index, not its key */
	wr.wr.rdma.rkey = p->rkey ^ 0x5a;
	st = post_wait(t, &wr, &wc);
	check(name, st == IBV_WC_REM_ACCESS_ERR, "completion status %d (%s)",
	      st, st >= 0 ? ibv_wc_status_str(wc.status) : "none");
	drop_pair(t);
}

/* A send to @srqn on a fresh pair: completes with remote invalid request. */
static void send_refused(struct tgt *t, uint32_t srqn, const char *name)
{
	struct ibv_wc wc = {};
	int err;

	if (!make_pair(t)) {
		bad(name, "a fresh QP pair: %s", strerror(errno));
		drop_pair(t);
		return;
	}
	err = send_to(t, srqn, 0, 64, 99);
	if (!err && vt_poll_one(t->scq, &wc, WAIT_MS) != 1)
		err = ETIMEDOUT;
	check(name, !err && wc.status == IBV_WC_REM_INV_REQ_ERR,
	      "post %s, completion status %s", strerror(err),
	      ibv_wc_status_str(wc.status));
	drop_pair(t);
}

/* An SRQ of another XRC domain: its number is refused, it gets nothing. */
static void other_domain(struct tgt *t)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
					 IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	struct ibv_xrcd *other = ibv_open_xrcd(t->ctx, &xa);
	struct ibv_cq *cq = ibv_create_cq(t->ctx, 4, NULL, NULL, 0);
	struct ibv_srq *srq = other && cq ? xrc_srq(t->ctx, t->pd, other, cq) :
					    NULL;
	uint32_t srqn = 0;
	struct ibv_wc wc;

	if (check("another XRC domain with an XRC SRQ", srq &&
		  !ibv_get_srq_num(srq, &srqn), "%s", strerror(errno)) &&
	    !post_recvs(srq, t->mr, t->buf + 2 * SLOT, 1)) {
		send_refused(t, srqn, "a send to an SRQ of another domain fails: remote invalid request");
		check("the other domain's SRQ received nothing",
		      vt_poll_one(cq, &wc, 200) == 0, "a completion, status %d",
		      wc.status);
	}
	if (srq)
		ibv_destroy_srq(srq);
	if (cq)
		ibv_destroy_cq(cq);
	if (other)
		ibv_close_xrcd(other);
}

static bool parent_setup(struct tgt *t)
{
	t->ctx = open_dev(dev_name);
	t->pd = t->ctx ? ibv_alloc_pd(t->ctx) : NULL;
	if (!check("open the device", t->pd, "%s: %s", dev_name,
		   strerror(errno)))
		return false;
	if (!check("gid", !ibv_query_gid(t->ctx, 1, gid_index, &t->gid),
		   "index %d", gid_index))
		return false;
	t->xrcd = open_domain(t->ctx, &t->fd);
	if (!check("ibv_open_xrcd on a file, O_CREAT", t->xrcd, "%s",
		   strerror(errno)))
		return false;
	t->scq = ibv_create_cq(t->ctx, 4 * NMSG * NRECV, NULL, NULL, 0);
	t->buf = aligned_alloc(4096, (size_t)NMSG * NRECV * SLOT);
	t->mr = t->buf ? ibv_reg_mr(t->pd, t->buf, (size_t)NMSG * NRECV * SLOT,
				    IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!check("sender CQ and MR", t->scq && t->mr, "%s", strerror(errno)))
		return false;
	return check("an XRC target QP and an XRC initiator QP, connected",
		     make_pair(t), "%s", strerror(errno));
}

static void parent_teardown(struct tgt *t)
{
	drop_pair(t);
	if (t->mr)
		ibv_dereg_mr(t->mr);
	if (t->scq)
		ibv_destroy_cq(t->scq);
	if (t->xrcd)
		ibv_close_xrcd(t->xrcd);
	if (t->pd)
		ibv_dealloc_pd(t->pd);
	if (t->ctx)
		ibv_close_device(t->ctx);
	free(t->buf);
}

/* Start the receivers, send to them, collect their verdicts. */
static void shared_domain(struct tgt *t)
{
	int up[NRECV][2], down[2], r, st;
	struct peer peer[NRECV] = {};
	uint32_t srqn[NRECV] = {};
	pid_t pid[NRECV];

	if (pipe(down))
		return;
	for (r = 0; r < NRECV; r++) {
		if (pipe(up[r]))
			return;
		fflush(stdout);
		pid[r] = fork();
		if (pid[r] == 0) {
			/* "done" is the end of file: no write end here */
			close(down[1]);
			_exit(receiver(r, t->tgt->qp_num, up[r][1], down[0]));
		}
		if (!xread(up[r][0], &peer[r], sizeof(peer[r])))
			peer[r].srqn = 0;
		srqn[r] = peer[r].srqn;
	}
	if (check("two receiver processes made XRC SRQs in the shared domain",
		  srqn[0] && srqn[1] && srqn[0] != srqn[1], "SRQ numbers %u %u",
		  srqn[0], srqn[1])) {
		send_all(t, srqn);
		rdma_to(t, &peer[0]);
		read_from(t, &peer[0]);
		read_refused(t, &peer[0]);
	}
	/* the unknown SRQ number: past every SRQ there is */
	send_refused(t, 0xfffff0, "a send to an unknown SRQ number fails: remote invalid request");
	other_domain(t);
	close(down[1]);
	for (r = 0; r < NRECV; r++) {
		waitpid(pid[r], &st, 0);
		check("receiver process passed its checks",
		      WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	}
}

/* A default-mode device: the stock rxe provider has no XRC. */
static void refused(void)
{
	struct ibv_context *ctx = open_dev(dev_name);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
					 IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
	};
	struct ibv_device_attr da;
	struct ibv_xrcd *x;
	struct ibv_qp *qp;

	if (!check("open the default-mode device", ctx, "%s", dev_name))
		return;
	check("default mode: no XRC capability",
	      !ibv_query_device(ctx, &da) &&
	      !(da.device_cap_flags & IBV_DEVICE_XRC), "flags %#x",
	      da.device_cap_flags);
	x = ibv_open_xrcd(ctx, &xa);
	check("default mode: ibv_open_xrcd refused", !x, "it opened");
	if (x)
		ibv_close_xrcd(x);
	qa.pd = ibv_alloc_pd(ctx);
	qa.send_cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	qp = qa.pd && qa.send_cq ? ibv_create_qp_ex(ctx, &qa) : NULL;
	check("default mode: XRC send QP refused", !qp, "it was made");
	if (qp)
		ibv_destroy_qp(qp);
	if (qa.send_cq)
		ibv_destroy_cq(qa.send_cq);
	if (qa.pd)
		ibv_dealloc_pd(qa.pd);
	ibv_close_device(ctx);
}

int main(int argc, char **argv)
{
	struct tgt t = {};

	if (argc < 3) {
		fprintf(stderr, "usage: xrc_share DEV GID_INDEX [refused]\n");
		return 2;
	}
	dev_name = argv[1];
	gid_index = atoi(argv[2]);
	if (argc > 3) {
		refused();
	} else {
		unlink(DOMAIN_FILE);
		if (parent_setup(&t))
			shared_domain(&t);
		parent_teardown(&t);
		unlink(DOMAIN_FILE);
	}
	printf("xrc_share: done, %d failed\n", fails);
	return 0;
}
