// SPDX-License-Identifier: GPL-2.0
/*
 * cq_timestamp: completion timestamps on a native-mode device, run by
 * tests/vm/test_native.sh.
 *
 *   cq_timestamp DEV GID_INDEX
 *   cq_timestamp DEV GID_INDEX unsupported   (a device the stock rxe
 *                                             provider drives: no clock,
 *                                             timestamp CQs refused)
 *
 * The device reports a 64-bit completion timestamp mask and a 1 GHz clock;
 * ibv_query_rt_values_ex reads that clock. Two RC QPs on DEV, connected to
 * each other through GID_INDEX, exchange SENDs; each side's extended CQ
 * asks for both timestamps. Every completion's device-clock timestamp lies
 * between the clock read before the post and after the poll, and so does
 * its wall-clock timestamp against CLOCK_REALTIME; both grow from one
 * completion to the next; the data arrives. A CQ asking for the wall clock
 * alone gets it too; a field srnic has no value for is still refused.
 *
 * Prints one line per check, "ok NAME" or "not ok NAME: reason", then
 * "cq_timestamp: done, N failed"; exits 0 when it ran to the end.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "vtest.h"

#define N_MSG		32
#define MSG_LEN		64
#define WAIT_MS		20000
#define TS_FLAGS	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

struct side {
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[N_MSG * MSG_LEN];
	uint64_t last_ts, last_wall;
};

/* What one completion said. */
struct comp {
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	uint64_t ts, wall;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct side a, b;	/* a sends to b */

static struct ibv_cq_ex *cq_ex(uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 2 * N_MSG,
		.wc_flags = IBV_WC_STANDARD_FLAGS | wc_flags,
	};

	return ibv_create_cq_ex(ctx, &attr);
}

static uint64_t dev_clock(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v) ||
	    !(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		return 0;
	return (uint64_t)v.raw_clock.tv_nsec;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The next completion of @cq within WAIT_MS into @c; false on timeout. */
static bool poll_one(struct ibv_cq_ex *cq, struct comp *c)
{
	struct ibv_poll_cq_attr pa = {};
	long end = now_ms() + WAIT_MS;
	int ret;

	while ((ret = ibv_start_poll(cq, &pa)) == ENOENT && now_ms() < end)
		sleep_ms(1);
	if (ret)
		return false;
	c->status = cq->status;
	c->opcode = ibv_wc_read_opcode(cq);
	c->byte_len = ibv_wc_read_byte_len(cq);
	c->ts = ibv_wc_read_completion_ts(cq);
	c->wall = ibv_wc_read_completion_wallclock_ns(cq);
	ibv_end_poll(cq);
	return true;
}

static bool side_create(struct side *s)
{
	s->cq = cq_ex(TS_FLAGS);
	if (!s->cq)
		return false;
	s->mr = ibv_reg_mr(pd, s->buf, sizeof(s->buf), IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		return false;
	s->qp = vt_rc_qp(pd, ibv_cq_ex_to_cq(s->cq), N_MSG);
	return s->qp;
}

static bool connect_sides(int gid_index)
{
	struct vt_conn c = { .sgid_index = gid_index, .timeout = 14,
			     .rnr_retry = 7, .psn = 0x200 };

	return !vt_qp_connect_pair(a.qp, b.qp, &c);
}

static void check_device(void)
{
	struct ibv_device_attr_ex attr;
	uint64_t c0, c1, m0, m1;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	check("query_device_ex: 64-bit completion timestamp mask",
	      !ret && attr.completion_timestamp_mask == UINT64_MAX,
	      "ret %d mask %#llx", ret,
	      (unsigned long long)attr.completion_timestamp_mask);
	check("query_device_ex: hca_core_clock 1000000 kHz",
	      !ret && attr.hca_core_clock == 1000000, "ret %d clock %llu",
	      ret, (unsigned long long)attr.hca_core_clock);
	m0 = monotonic_ns();
	c0 = dev_clock();
	c1 = dev_clock();
	m1 = monotonic_ns();
	check("query_rt_values_ex: the device clock runs with CLOCK_MONOTONIC",
	      c0 && m0 <= c0 && c0 <= c1 && c1 <= m1,
	      "monotonic %llu, clock %llu %llu, monotonic %llu",
	      (unsigned long long)m0, (unsigned long long)c0,
	      (unsigned long long)c1, (unsigned long long)m1);
}

/* Count what is wrong with @c, a completion on @s stamped within [@t0, @t1] and [@r0, @r1]. */
static void check_comp(struct side *s, const struct comp *c,
		       uint64_t t0, uint64_t t1, uint64_t r0, uint64_t r1,
		       int *bad_ts, int *bad_wall, int *bad_order)
{
	if (c->ts < t0 || c->ts > t1)
		(*bad_ts)++;
	if (c->wall < r0 || c->wall > r1)
		(*bad_wall)++;
	if (c->ts <= s->last_ts || c->wall < s->last_wall)
		(*bad_order)++;
	s->last_ts = c->ts;
	s->last_wall = c->wall;
}

static void exchange(void)
{
	int bad_ts = 0, bad_wall = 0, bad_order = 0, bad_data = 0, lost = 0;
	uint64_t t0, t1, r0, r1;
	struct comp cs, cr;
	int i;

	for (i = 0; i < N_MSG; i++) {
		struct ibv_sge rs = { .addr = (uintptr_t)b.buf + i * MSG_LEN,
				      .length = MSG_LEN, .lkey = b.mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = i, .sg_list = &rs,
					   .num_sge = 1 }, *bad_r;

		if (ibv_post_recv(b.qp, &rwr, &bad_r)) {
			bad("post receives", "errno %d", errno);
			return;
		}
	}
	for (i = 0; i < N_MSG; i++) {
		struct ibv_sge ss = { .addr = (uintptr_t)a.buf + i * MSG_LEN,
				      .length = MSG_LEN, .lkey = a.mr->lkey };
		struct ibv_send_wr swr = { .wr_id = i, .sg_list = &ss,
					   .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED },
				   *bad_s;

		memset(a.buf + i * MSG_LEN, 0x40 + i, MSG_LEN);
		r0 = realtime_ns();
		t0 = dev_clock();
		if (ibv_post_send(a.qp, &swr, &bad_s)) {
			bad("post send", "errno %d", errno);
			return;
		}
		if (!poll_one(a.cq, &cs) || !poll_one(b.cq, &cr)) {
			lost++;
			break;
		}
		t1 = dev_clock();
		r1 = realtime_ns();
		if (cs.status || cr.status || cs.opcode != IBV_WC_SEND ||
		    cr.opcode != IBV_WC_RECV || cr.byte_len != MSG_LEN) {
			bad("SEND and RECV complete", "status %d/%d opcode %d/%d",
			    cs.status, cr.status, cs.opcode, cr.opcode);
			return;
		}
		check_comp(&a, &cs, t0, t1, r0, r1, &bad_ts, &bad_wall,
			   &bad_order);
		check_comp(&b, &cr, t0, t1, r0, r1, &bad_ts, &bad_wall,
			   &bad_order);
		if (b.buf[i * MSG_LEN] != 0x40 + i ||
		    memcmp(a.buf + i * MSG_LEN, b.buf + i * MSG_LEN, MSG_LEN))
			bad_data++;
	}
	check("32 SENDs complete on both sides, data received",
	      !lost && !bad_data, "lost %d, bad data %d", lost, bad_data);
	check("each completion's timestamp between the clock before the post and after the poll",
	      !lost && !bad_ts, "%d of %d outside", bad_ts, 2 * N_MSG);
	check("each completion's wall-clock timestamp between CLOCK_REALTIME before and after",
	      !lost && !bad_wall, "%d of %d outside", bad_wall, 2 * N_MSG);
	check("timestamps grow from one completion to the next",
	      !lost && !bad_order, "%d out of order", bad_order);
}

/* A CQ asking for the wall clock alone, and fields srnic has no value for. */
static void check_cq_flags(void)
{
	struct ibv_cq_ex *cq = cq_ex(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);

	check("create_cq_ex with the wall clock alone", cq, "errno %d", errno);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	cq = cq_ex(IBV_WC_EX_WITH_CVLAN);
	check("create_cq_ex with a VLAN field: EOPNOTSUPP",
	      !cq && errno == EOPNOTSUPP, "cq %p errno %d", (void *)cq, errno);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

/* A device driven by the stock rxe provider: no device clock. */
static void check_unsupported(void)
{
	struct ibv_device_attr_ex attr;
	struct ibv_cq_ex *cq;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	check("query_device_ex: no completion timestamp mask, no clock",
	      !ret && !attr.completion_timestamp_mask && !attr.hca_core_clock,
	      "ret %d mask %#llx clock %llu", ret,
	      (unsigned long long)attr.completion_timestamp_mask,
	      (unsigned long long)attr.hca_core_clock);
	cq = cq_ex(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	check("create_cq_ex with completion timestamps: EOPNOTSUPP",
	      !cq && errno == EOPNOTSUPP, "cq %p errno %d", (void *)cq, errno);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: cq_timestamp DEV GID_INDEX [unsupported]\n");
		return 2;
	}
	ctx = open_dev(argv[1]);
	if (!ctx) {
		fprintf(stderr, "cq_timestamp: no device %s\n", argv[1]);
		return 1;
	}
	if (argc > 3 && !strcmp(argv[3], "unsupported")) {
		check_unsupported();
	} else {
		pd = ibv_alloc_pd(ctx);
		check_device();
		check_cq_flags();
		if (check("two RC QPs on extended CQs with timestamps",
			  pd && side_create(&a) && side_create(&b) &&
			  connect_sides(atoi(argv[2])), "errno %d", errno))
			exchange();
	}
	printf("cq_timestamp: done, %d failed\n", fails);
	return 0;
}
