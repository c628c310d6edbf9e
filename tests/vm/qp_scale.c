// SPDX-License-Identifier: GPL-2.0
/*
 * qp_scale.c: N RC QPs on each of two RDMA devices, QP i of DEV0 connected
 * to QP i of DEV1, data moved on a sample of the pairs, then every QP
 * destroyed. Built and run in a vmrun guest by tests/vm/test_scale.sh and
 * tests/bench/scale_guest.sh (any stack: srnic or rxe).
 *
 *   qp_scale DEV0 GID0 DEV1 GID1 N EVERY FLAT [BUCKET]
 *   qp_scale limit DEV pd|cq|qp EXPECT     (see limit())
 *
 * Phases, each timed per bucket of BUCKET pairs (default 1000):
 *   create   ibv_create_qp on DEV0 then DEV1 (SQ/RQ of 4 WRs, 1 SGE; one
 *            CQ per device shared by all its QPs)
 *   connect  RESET -> INIT -> RTR -> RTS on both QPs of a pair (3 modifies
 *            per QP)
 *   traffic  pairs 0, N-1 and every EVERY-th: a 256-byte SEND from DEV0's QP
 *            to DEV1's and a 256-byte RDMA WRITE back, each byte compared
 *   (hold)   with QP_SCALE_HOLD=FILE set: FILE created, then wait until
 *            it is removed (see hold())
 *   destroy  ibv_destroy_qp of both QPs of each pair
 * Kernel memory (/proc/meminfo Slab + VmallocUsed + Percpu + PageTables) is
 * read before the first bucket and after each bucket of create and connect:
 * the growth per QP of each bucket (create + connect) is its memory per QP.
 *
 * Output: JSON lines, one per bucket and phase, one for the memory of each
 * bucket and one summary line ("qp_scale:" then the JSON); and checks, "ok
 * NAME" or "not ok NAME: why" (vtest.h): every call succeeds, every sampled
 * byte arrives, the memory per QP of the last bucket is at most FLAT times
 * that of the first (a QP must not cost more because many exist). Times are
 * figures, never checks. Ends with "qp_scale: done".
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "vtest.h"
#include "../../userspace/tools/meminfo.h"

#define MSG		256
#define DEPTH		4

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct vt_ep ep;	/* no QP; buffer: one MSG slot per sampled pair */
	union ibv_gid gid;
	int gid_index;
	struct ibv_qp **qp;
};

static struct side sd[2];
static long t_mod[3];	/* microseconds in INIT, RTR, RTS modifies */
static long npairs, every, bucket = 1000, nslots;

static long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* The kernel memory a QP can cost, in KiB. */
static long mem_kernel(const struct meminfo *m)
{
	return m->slab + m->vmalloc + m->percpu + m->pagetables;
}

static void mem_print(long qps, const struct meminfo *m,
		      const struct meminfo *base)
{
	printf("{\"phase\":\"mem\",\"qps\":%ld,\"slab_kb\":%ld,"
	       "\"sunreclaim_kb\":%ld,\"vmalloc_kb\":%ld,\"percpu_kb\":%ld,"
	       "\"pagetables_kb\":%ld,\"kernel_kb\":%ld,\"used_kb\":%ld}\n",
	       qps, m->slab - base->slab, m->sunreclaim - base->sunreclaim,
	       m->vmalloc - base->vmalloc, m->percpu - base->percpu,
	       m->pagetables - base->pagetables,
	       mem_kernel(m) - mem_kernel(base), base->memfree - m->memfree);
	fflush(stdout);
}

static int side_open(struct side *s, const char *name, int gid_index)
{
	struct vt_ep_attr a = {
		.buf_len = nslots * MSG,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		.cqe = 4 * DEPTH,
	};

	s->ctx = open_dev(name);
	if (!s->ctx)
		return ENODEV;
	s->gid_index = gid_index;
	if (ibv_query_gid(s->ctx, 1, gid_index, &s->gid))
		return errno;
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		return errno;
	a.ctx = s->ctx;
	a.pd = s->pd;
	if (!vt_ep_create(&s->ep, 0, &a))
		return errno;
	s->qp = calloc(npairs, sizeof(*s->qp));
	return s->qp ? 0 : ENOMEM;
}

static void side_close(struct side *s)
{
	vt_ep_destroy(&s->ep);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	free(s->qp);
}

static struct ibv_qp *qp_create(struct side *s)
{
	const struct ibv_qp_cap cap = {
		.max_send_wr = DEPTH, .max_recv_wr = DEPTH,
		.max_send_sge = 1, .max_recv_sge = 1,
	};

	return vt_qp_create(&s->ep, IBV_QPT_RC, &cap);
}

/* RESET -> INIT -> RTR -> RTS of @qp on @s towards @peer_qpn on @p. */
static int qp_connect(struct side *s, struct ibv_qp *qp, struct side *p,
		      uint32_t peer_qpn)
{
	const struct vt_conn c = {
		.dgid = p->gid,
		.sgid_index = s->gid_index,
		.dest_qpn = peer_qpn,
		.psn = 7,
		.access = IBV_ACCESS_REMOTE_WRITE,
		.timeout = 14,
		.rnr_retry = 7,
	};
	struct ibv_qp_attr a;
	long t = now_us(), t1;
	int err;

	vt_init_attr(&a, &c);
	err = ibv_modify_qp(qp, &a, VT_INIT_MASK);
	if (err)
		return err;
	t1 = now_us();
	t_mod[0] += t1 - t;
	t = t1;
	vt_rtr_attr(&a, &c);
	err = ibv_modify_qp(qp, &a, VT_RTR_MASK);
	if (err)
		return err;
	t1 = now_us();
	t_mod[1] += t1 - t;
	t = t1;
	vt_rts_attr(&a, &c);
	err = ibv_modify_qp(qp, &a, VT_RTS_MASK);
	t_mod[2] += now_us() - t;
	return err;
}

/* Wait up to 5 s for the completion @wr_id on @s's CQ; its status. */
static int wait_wc(struct side *s, uint64_t wr_id, enum ibv_wc_opcode *op)
{
	long end = now_ms() + 5000;
	struct ibv_wc wc;
	int n;

	while (now_ms() < end) {
		n = ibv_poll_cq(s->ep.cq, 1, &wc);
		if (n < 0)
			return -1;
		if (!n)
			continue;
		if (wc.wr_id != wr_id) {
			bad("completion order", "wr_id %llu, want %llu",
			    (unsigned long long)wc.wr_id,
			    (unsigned long long)wr_id);
			continue;
		}
		*op = wc.opcode;
		return wc.status;
	}
	return -ETIMEDOUT;
}

static void fill(uint8_t *p, long pair, int dir)
{
	int i;

	for (i = 0; i < MSG; i++)
		p[i] = (uint8_t)(pair * 7 + i * 13 + dir);
}

static bool pattern_ok(const uint8_t *p, long pair, int dir)
{
	uint8_t want[MSG];

	fill(want, pair, dir);
	return !memcmp(p, want, MSG);
}

/* SEND 0 -> 1 and RDMA WRITE 1 -> 0 on pair @i, slot @slot; 0 or why. */
static const char *traffic(long i, long slot)
{
	uint8_t *b0 = sd[0].ep.buf + slot * MSG, *b1 = sd[1].ep.buf + slot * MSG;
	struct ibv_sge sge = { .length = MSG };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1 }, *sbad;
	enum ibv_wc_opcode op;
	uint64_t id = (uint64_t)i << 8;

	memset(b1, 0, MSG);
	sge.addr = (uintptr_t)b1;
	sge.lkey = sd[1].ep.mr->lkey;
	rwr.wr_id = id | 1;
	if (ibv_post_recv(sd[1].qp[i], &rwr, &rbad))
		return "post_recv";
	fill(b0, i, 0);
	sge.addr = (uintptr_t)b0;
	sge.lkey = sd[0].ep.mr->lkey;
	swr.wr_id = id | 2;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(sd[0].qp[i], &swr, &sbad))
		return "post_send SEND";
	if (wait_wc(&sd[0], id | 2, &op) || op != IBV_WC_SEND)
		return "SEND completion";
	if (wait_wc(&sd[1], id | 1, &op) || op != IBV_WC_RECV)
		return "RECV completion";
	if (!pattern_ok(b1, i, 0))
		return "SEND data";

	memset(b0, 0, MSG);
	fill(b1, i, 1);
	sge.addr = (uintptr_t)b1;
	sge.lkey = sd[1].ep.mr->lkey;
	swr.wr_id = id | 3;
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.wr.rdma.remote_addr = (uintptr_t)b0;
	swr.wr.rdma.rkey = sd[0].ep.mr->rkey;
	if (ibv_post_send(sd[1].qp[i], &swr, &sbad))
		return "post_send WRITE";
	if (wait_wc(&sd[1], id | 3, &op) || op != IBV_WC_RDMA_WRITE)
		return "WRITE completion";
	/* The requester's completion means the responder acked: placed. */
	if (!pattern_ok(b0, i, 1))
		return "WRITE data";
	return NULL;
}

static void bucket_print(const char *phase, long b, long from, long to,
			 long us)
{
	printf("{\"phase\":\"%s\",\"bucket\":%ld,\"from\":%ld,\"to\":%ld,"
	       "\"qps\":%ld,\"us_per_qp\":%.1f}\n", phase, b, from, to,
	       2 * (to - from), (double)us / (2.0 * (to - from)));
	fflush(stdout);
}

static bool sampled(long i)
{
	return i == 0 || i == npairs - 1 || i % every == 0;
}

/*
 * qp_scale limit DEV pd|cq|qp EXPECT: create objects of one kind on DEV
 * until one fails, at most all EXPECT + 1 (EXPECT = the device's max_pd,
 * max_cq or max_qp less those that exist already); check that exactly
 * EXPECT exist then (this program holds one PD and one CQ besides) and the
 * next one failed with ENOMEM, then destroy them all.
 */
static int limit(const char *dev, const char *kind, long expect)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct side *s = &sd[0];
	long n = 0, i, t0;
	void **obj;
	char name[80];
	int err = 0;

	snprintf(name, sizeof(name), "%s: %ld %ss, the next one fails with ENOMEM",
		 dev, expect, kind);
	nslots = 1;
	npairs = 1;
	obj = calloc(expect + 1, sizeof(*obj));
	if (!obj || side_open(s, dev, 0)) {
		bad(name, "cannot open %s", dev);
		return 1;
	}
	ia.send_cq = s->ep.cq;
	ia.recv_cq = s->ep.cq;
	/* side_open() took one PD and one CQ of those. */
	if (strcmp(kind, "qp"))
		expect--;
	t0 = now_us();
	for (n = 0; n <= expect; n++) {
		if (!strcmp(kind, "pd"))
			obj[n] = ibv_alloc_pd(s->ctx);
		else if (!strcmp(kind, "cq"))
			obj[n] = ibv_create_cq(s->ctx, 1, NULL, NULL, 0);
		else
			obj[n] = ibv_create_qp(s->pd, &ia);
		if (!obj[n]) {
			err = errno;
			break;
		}
	}
	t0 = now_us() - t0;
	printf("{\"phase\":\"limit\",\"kind\":\"%s\",\"created\":%ld,"
	       "\"errno\":%d,\"us_per_obj\":%.1f}\n", kind, n, err,
	       (double)t0 / (n + 1));
	if (n == expect && err == ENOMEM)
		ok(name);
	else
		bad(name, "%ld created, then %s", n,
		    err ? strerror(err) : "none failed");
	for (i = 0; i < n; i++) {
		if (!strcmp(kind, "pd"))
			err = ibv_dealloc_pd(obj[i]);
		else if (!strcmp(kind, "cq"))
			err = ibv_destroy_cq(obj[i]);
		else
			err = ibv_destroy_qp(obj[i]);
		if (err) {
			bad(name, "destroying %s %ld: %s", kind, i,
			    strerror(err));
			break;
		}
	}
	free(obj);
	side_close(s);
	printf("qp_scale: done\n");
	return fails ? 1 : 0;
}

/*
 * QP_SCALE_HOLD=FILE: with every QP connected and idle, create FILE and wait
 * until it is removed (a benchmark measures traffic beside the idle QPs
 * meanwhile), then destroy them. The caller bounds the wait.
 */
static void hold(void)
{
	const char *path = getenv("QP_SCALE_HOLD");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (!f) {
		bad("hold", "%s: %s", path, strerror(errno));
		return;
	}
	fclose(f);
	printf("qp_scale: holding the QPs until %s is removed\n", path);
	fflush(stdout);
	while (!access(path, F_OK))
		usleep(100000);
}

int main(int argc, char **argv)
{
	long i, b, nb, created = 0, connected = 0, t0, sent = 0, slot = 0;
	long t_create = 0, t_connect = 0, t_destroy = 0;
	long *mem_b, first, last;
	struct meminfo base, m, prev;
	double flat;
	int err, d;

	if (argc == 5 && !strcmp(argv[1], "limit"))
		return limit(argv[2], argv[3], atol(argv[4]));
	if (argc < 8) {
		fprintf(stderr, "usage: qp_scale DEV0 GID0 DEV1 GID1 N EVERY FLAT [BUCKET]\n");
		return 2;
	}
	npairs = atol(argv[5]);
	every = atol(argv[6]);
	flat = atof(argv[7]);
	if (argc > 8)
		bucket = atol(argv[8]);
	if (npairs < 2 || every < 1 || bucket < 1)
		return 2;
	nb = (npairs + bucket - 1) / bucket;
	nslots = npairs / every + 2;
	mem_b = calloc(nb, sizeof(*mem_b));
	if (!mem_b)
		return 1;

	for (d = 0; d < 2; d++) {
		err = side_open(&sd[d], argv[1 + 2 * d], atoi(argv[2 + 2 * d]));
		if (err) {
			bad("open devices", "%s: %s", argv[1 + 2 * d],
			    strerror(err));
			goto out;
		}
	}
	ok("open devices, PD, CQ, MR");

	meminfo_read(&base);
	prev = base;
	for (b = 0; b < nb && created == b * bucket; b++) {
		long to = b * bucket + bucket < npairs ?
			  b * bucket + bucket : npairs;

		t0 = now_us();
		for (i = b * bucket; i < to; i++) {
			for (d = 0; d < 2; d++) {
				sd[d].qp[i] = qp_create(&sd[d]);
				if (!sd[d].qp[i])
					break;
			}
			if (d < 2) {
				bad("create QPs", "pair %ld, device %d: %s", i,
				    d, strerror(errno));
				if (d)
					ibv_destroy_qp(sd[0].qp[i]);
				break;
			}
			created++;
		}
		t0 = now_us() - t0;
		t_create += t0;
		if (i < to)
			break;
		bucket_print("create", b, b * bucket, to, t0);
		meminfo_read(&m);
		mem_print(2 * to, &m, &base);
		mem_b[b] = mem_kernel(&m) - mem_kernel(&prev);
		prev = m;
	}
	if (created == npairs)
		ok("create QPs");

	/* Connect in the same buckets: RTR/RTS may allocate per QP too. */
	for (b = 0; b * bucket < created; b++) {
		long to = b * bucket + bucket < created ?
			  b * bucket + bucket : created;

		meminfo_read(&prev);
		t0 = now_us();
		for (i = b * bucket; i < to; i++) {
			err = qp_connect(&sd[0], sd[0].qp[i], &sd[1],
					 sd[1].qp[i]->qp_num);
			if (!err)
				err = qp_connect(&sd[1], sd[1].qp[i], &sd[0],
						 sd[0].qp[i]->qp_num);
			if (err) {
				bad("connect QPs", "pair %ld: %s", i,
				    strerror(err));
				break;
			}
			connected++;
		}
		t0 = now_us() - t0;
		t_connect += t0;
		if (i < to)
			break;
		bucket_print("connect", b, b * bucket, to, t0);
		meminfo_read(&m);
		mem_b[b] += mem_kernel(&m) - mem_kernel(&prev);
	}
	if (connected == npairs)
		ok("connect QPs (RTR, RTS)");
	meminfo_read(&m);
	mem_print(2 * created, &m, &base);

	for (i = 0; i < connected; i++) {
		const char *why;

		if (!sampled(i))
			continue;
		why = traffic(i, slot++ % nslots);
		if (why) {
			bad("sampled traffic", "pair %ld (QPN %u -> %u): %s",
			    i, sd[0].qp[i]->qp_num, sd[1].qp[i]->qp_num, why);
			break;
		}
		sent++;
	}
	if (connected == npairs && sent == slot)
		ok("sampled traffic: SEND and WRITE data verified");
	printf("{\"phase\":\"traffic\",\"pairs\":%ld}\n", sent);
	hold();

	for (b = 0; b * bucket < created; b++) {
		long to = b * bucket + bucket < created ?
			  b * bucket + bucket : created;
		int fail = 0;

		t0 = now_us();
		for (i = b * bucket; i < to; i++)
			for (d = 0; d < 2; d++)
				if (ibv_destroy_qp(sd[d].qp[i]))
					fail++;
		t0 = now_us() - t0;
		t_destroy += t0;
		if (fail)
			bad("destroy QPs", "%d failed in bucket %ld", fail, b);
		bucket_print("destroy", b, b * bucket, to, t0);
	}
	if (created)
		ok("destroy QPs");

	if (created == npairs) {
		long lb = nb - 1, nlast = npairs - lb * bucket;

		/* KiB per 1000 QPs, so that integers keep the precision. */
		first = mem_b[0] * 1000 / (2 * bucket);
		last = mem_b[lb] * 1000 / (2 * nlast);
		printf("qp_scale: {\"pairs\":%ld,\"qps\":%ld,"
		       "\"create_us_per_qp\":%.1f,\"connect_us_per_qp\":%.1f,"
		       "\"destroy_us_per_qp\":%.1f,\"kernel_kb_per_1k_qps\":%ld,"
		       "\"first_bucket_kb_per_1k_qps\":%ld,"
		       "\"last_bucket_kb_per_1k_qps\":%ld,"
		       "\"init_us\":%.1f,\"rtr_us\":%.1f,\"rts_us\":%.1f}\n",
		       npairs, 2 * npairs, t_create / (2.0 * npairs),
		       t_connect / (2.0 * npairs), t_destroy / (2.0 * npairs),
		       (mem_kernel(&m) - mem_kernel(&base)) * 1000 /
		       (2 * npairs), first, last, t_mod[0] / (2.0 * npairs),
		       t_mod[1] / (2.0 * npairs), t_mod[2] / (2.0 * npairs));
		if (nb >= 2 && first > 0 && last <= flat * first)
			ok("memory per QP is flat (last bucket within the factor of the first)");
		else if (nb >= 2)
			bad("memory per QP is flat (last bucket within the factor of the first)",
			    "first %ld, last %ld KiB per 1000 QPs, factor %.1f",
			    first, last, flat);
	}
out:
	for (d = 0; d < 2; d++)
		side_close(&sd[d]);
	free(mem_b);
	printf("qp_scale: done\n");
	return fails ? 1 : 0;
}
