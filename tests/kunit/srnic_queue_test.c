// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "srnic_queue": kernel/srnic_queue.[ch], srnic_cq.c and
 * srnic_srq.c, on kernel rings (no user process: the ULP side of a ring is
 * driven with the srnic_queue_k*() helpers, and a misbehaving user is
 * simulated by writing the ring header directly).
 *
 *   - ring sizing: power-of-two slots and element sizes, capacity slots-1,
 *     the rxe header the user maps;
 *   - full/empty/wrap in both directions, entries in order;
 *   - corrupt peer indices: out of range, producer moving backwards,
 *     consumer passing the producer;
 *   - resize keeping entries in order, and refusing to drop any;
 *   - CQs through the verbs: create checks, post/poll, overrun (-ENOSPC and
 *     one CQ_ERR event), notification arming, resize, the user CQE format;
 *   - receive WQEs: copy validation, build validation;
 *   - SRQs through the verbs: post/pop, limit event, bad and corrupt WQEs,
 *     modify (resize, limit, all-or-nothing), create checks.
 *
 * Linked into srnic.o when CONFIG_RDMA_SRNIC_KUNIT_TEST=y; run it with
 * tests/kunit/run.sh 'srnic_queue'.
 */
#include <kunit/test.h>
#include <linux/log2.h>
#include <linux/spinlock.h>

/* Relative to this file: see srnic_port_test.c. */
#include "../../kernel/srnic.h"

#define SRNIC_QUEUE_TEST_MAX_OBJS	8

/* Per-test fixture; the objects a test creates are destroyed by .exit. */
struct srnic_queue_test {
	struct srnic_dev *sdev;
	int events;			/* async events seen */
	enum ib_event_type last_event;
	int comps;			/* completion handler calls */
	struct srnic_queue *queues[SRNIC_QUEUE_TEST_MAX_OBJS];
	struct srnic_cq *cqs[SRNIC_QUEUE_TEST_MAX_OBJS];
	struct srnic_srq *srqs[SRNIC_QUEUE_TEST_MAX_OBJS];
	int nqueues, ncqs, nsrqs;
};

static int srnic_queue_test_init(struct kunit *test)
{
	struct srnic_queue_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->sdev = kunit_kzalloc(test, sizeof(*t->sdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->sdev);
	t->sdev->ib_dev.num_comp_vectors = 1;
	srnic_srq_dev_init(t->sdev);
	test->priv = t;
	return 0;
}

static void srnic_queue_test_exit(struct kunit *test)
{
	struct srnic_queue_test *t = test->priv;

	while (t->nsrqs)
		srnic_srq_ops.destroy_srq(&t->srqs[--t->nsrqs]->ibsrq, NULL);
	while (t->ncqs)
		srnic_cq_ops.destroy_cq(&t->cqs[--t->ncqs]->ibcq, NULL);
	while (t->nqueues)
		srnic_queue_cleanup(t->queues[--t->nqueues]);
	srnic_srq_dev_fini(t->sdev);
}

static struct srnic_dev *tsdev(struct kunit *test)
{
	return ((struct srnic_queue_test *)test->priv)->sdev;
}

/* A kernel ring of u32 sequence numbers; freed at the end of the test. */
static struct srnic_queue *tqueue(struct kunit *test, u32 *num,
				  enum srnic_queue_dir dir)
{
	struct srnic_queue_test *t = test->priv;
	struct srnic_queue *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_LT(test, t->nqueues, SRNIC_QUEUE_TEST_MAX_OBJS);
	KUNIT_ASSERT_EQ(test, srnic_queue_init(tsdev(test), q, NULL, num,
					       sizeof(u32), dir, NULL), 0);
	t->queues[t->nqueues++] = q;
	return q;
}

/* ULP side of a FROM_USER ring: post one sequence number. */
static void tpush(struct kunit *test, struct srnic_queue *q, u32 v)
{
	KUNIT_ASSERT_FALSE(test, srnic_queue_kfull(q));
	*(u32 *)srnic_queue_kproduce_addr(q) = v;
	srnic_queue_kadvance_producer(q);
}

/* Kernel side of a FROM_USER ring: take one. */
static u32 tpop(struct kunit *test, struct srnic_queue *q)
{
	u32 v;

	KUNIT_ASSERT_FALSE(test, srnic_queue_empty(q));
	v = *(u32 *)srnic_queue_consumer_addr(q);
	srnic_queue_advance_consumer(q);
	return v;
}

/* ---------------------------------------------------------- ring sizing */

struct srnic_queue_size_case {
	u32 wanted;
	u32 elem_size;
	u32 capacity;
};

static const struct srnic_queue_size_case srnic_queue_size_cases[] = {
	{ 0,	 4,	0 },		/* one slot, always empty */
	{ 1,	 16,	1 },
	{ 2,	 64,	3 },
	{ 3,	 100,	3 },		/* 4 slots: one stays free */
	{ 4,	 128,	7 },
	{ 7,	 129,	7 },
	{ 8,	 560,	15 },		/* a recv WQE with 32 SGEs */
	{ 1000,	 72,	1023 },
	{ 32767, sizeof(union srnic_cqe), 32767 },
};

static void srnic_queue_size_case_desc(const struct srnic_queue_size_case *c,
				       char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u x %u bytes", c->wanted,
		 c->elem_size);
}

KUNIT_ARRAY_PARAM(srnic_queue_size, srnic_queue_size_cases,
		  srnic_queue_size_case_desc);

static void init_rounds_slots_and_elements_up(struct kunit *test)
{
	const struct srnic_queue_size_case *c = test->param_value;
	u32 slot = roundup_pow_of_two(max_t(u32, c->elem_size,
					    cache_line_size()));
	struct srnic_queue q;
	u32 n = c->wanted;

	KUNIT_ASSERT_EQ(test, srnic_queue_init(tsdev(test), &q, NULL, &n,
					       c->elem_size,
					       SRNIC_QUEUE_FROM_USER, NULL), 0);
	KUNIT_EXPECT_EQ(test, n, c->capacity);
	KUNIT_EXPECT_EQ(test, q.index_mask, c->capacity);
	KUNIT_EXPECT_EQ(test, 1U << q.log2_elem_size, slot);
	KUNIT_EXPECT_GE(test, slot, (u32)cache_line_size());
	/* what the user reads from the header */
	KUNIT_EXPECT_EQ(test, q.buf->log2_elem_size, q.log2_elem_size);
	KUNIT_EXPECT_EQ(test, q.buf->index_mask, c->capacity);
	KUNIT_EXPECT_EQ(test, q.buf->producer_index, 0U);
	KUNIT_EXPECT_EQ(test, q.buf->consumer_index, 0U);
	KUNIT_EXPECT_EQ(test, q.buf_size,
			384 + (size_t)(c->capacity + 1) * slot);
	KUNIT_EXPECT_PTR_EQ(test, srnic_queue_addr(&q, c->capacity + 1),
			    (void *)q.buf->data);
	KUNIT_EXPECT_TRUE(test, srnic_queue_empty(&q));
	KUNIT_EXPECT_EQ(test, srnic_queue_full(&q), c->capacity == 0);
	srnic_queue_cleanup(&q);
}

static void init_uses_the_rxe_header_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct rxe_queue_buf, log2_elem_size), 0);
	KUNIT_EXPECT_EQ(test, offsetof(struct rxe_queue_buf, index_mask), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct rxe_queue_buf, producer_index),
			128);
	KUNIT_EXPECT_EQ(test, offsetof(struct rxe_queue_buf, consumer_index),
			256);
	KUNIT_EXPECT_EQ(test, offsetof(struct rxe_queue_buf, data), 384);
	KUNIT_EXPECT_EQ(test, sizeof(struct mminfo), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct rxe_create_srq_resp), 24);
	KUNIT_EXPECT_EQ(test, sizeof(struct rxe_recv_wqe), 40);
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_size(2), 40 + 2 * 16);
}

static void init_rejects_bad_sizes(struct kunit *test)
{
	struct srnic_queue q;
	u32 n;

	n = 4;
	KUNIT_EXPECT_EQ(test, srnic_queue_init(tsdev(test), &q, NULL, &n, 0,
					       SRNIC_QUEUE_TO_USER, NULL),
			-EINVAL);
	n = 4;
	KUNIT_EXPECT_EQ(test, srnic_queue_init(tsdev(test), &q, NULL, &n,
					       SRNIC_QUEUE_MAX_ELEM_SIZE + 1,
					       SRNIC_QUEUE_TO_USER, NULL),
			-EINVAL);
	n = SRNIC_QUEUE_MAX_ELEM + 1;
	KUNIT_EXPECT_EQ(test, srnic_queue_init(tsdev(test), &q, NULL, &n, 64,
					       SRNIC_QUEUE_TO_USER, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, n, SRNIC_QUEUE_MAX_ELEM + 1);	/* untouched */
}

/* ------------------------------------------------ full, empty, wrap-around */

static void from_user_ring_wraps_in_order(struct kunit *test)
{
	u32 n = 3, next_in = 0, next_out = 0, round;
	struct srnic_queue *q = tqueue(test, &n, SRNIC_QUEUE_FROM_USER);

	KUNIT_ASSERT_EQ(test, n, 3U);
	/* fill and drain by different amounts, so every offset wraps */
	for (round = 0; round < 50; round++) {
		u32 fill = 1 + round % 3, i;

		for (i = 0; i < fill; i++)
			tpush(test, q, next_in++);
		KUNIT_EXPECT_EQ(test, srnic_queue_count(q), fill);
		KUNIT_EXPECT_EQ(test, srnic_queue_full(q), fill == 3);
		KUNIT_EXPECT_EQ(test, srnic_queue_kfull(q), fill == 3);
		KUNIT_EXPECT_LE(test, q->buf->producer_index, q->index_mask);
		for (i = 0; i < fill; i++)
			KUNIT_EXPECT_EQ(test, tpop(test, q), next_out++);
		KUNIT_EXPECT_TRUE(test, srnic_queue_empty(q));
		KUNIT_EXPECT_LE(test, q->buf->consumer_index, q->index_mask);
		KUNIT_EXPECT_FALSE(test, srnic_queue_corrupt(q));
	}
	KUNIT_EXPECT_EQ(test, srnic_queue_consumer_index(q),
			next_out & q->index_mask);
}

static void to_user_ring_wraps_in_order(struct kunit *test)
{
	u32 n = 7, next_in = 0, next_out = 0, round, i;
	struct srnic_queue *q = tqueue(test, &n, SRNIC_QUEUE_TO_USER);

	for (round = 0; round < 40; round++) {
		u32 fill = 1 + round % 7;

		for (i = 0; i < fill; i++) {
			KUNIT_ASSERT_FALSE(test, srnic_queue_full(q));
			*(u32 *)srnic_queue_producer_addr(q) = next_in++;
			srnic_queue_advance_producer(q);
		}
		KUNIT_EXPECT_EQ(test, srnic_queue_count(q), fill);
		KUNIT_EXPECT_EQ(test, srnic_queue_full(q), fill == 7);
		KUNIT_EXPECT_EQ(test, srnic_queue_producer_index(q),
				q->buf->producer_index);
		for (i = 0; i < fill; i++) {
			u32 *v = srnic_queue_kconsume_addr(q);

			KUNIT_EXPECT_EQ(test, *v, next_out++);
			srnic_queue_kadvance_consumer(q);
		}
		KUNIT_EXPECT_TRUE(test, srnic_queue_empty(q));
		KUNIT_EXPECT_FALSE(test, srnic_queue_corrupt(q));
	}
}

/* ----------------------------------------------------- corrupt peer index */

static void producer_index_out_of_range_is_corrupt(struct kunit *test)
{
	u32 n = 7;
	struct srnic_queue *q = tqueue(test, &n, SRNIC_QUEUE_FROM_USER);

	tpush(test, q, 10);
	tpush(test, q, 11);
	WRITE_ONCE(q->buf->producer_index, q->index_mask + 1);
	KUNIT_EXPECT_TRUE(test, srnic_queue_corrupt(q));
	KUNIT_EXPECT_EQ(test, srnic_queue_count(q), 0U);	/* looks empty */
	KUNIT_EXPECT_TRUE(test, srnic_queue_empty(q));
	KUNIT_EXPECT_EQ(test, srnic_queue_producer_index(q), 0U);

	WRITE_ONCE(q->buf->producer_index, 0xffffffff);
	KUNIT_EXPECT_TRUE(test, srnic_queue_corrupt(q));
	KUNIT_EXPECT_TRUE(test, srnic_queue_empty(q));

	/* repaired by the producer: usable again */
	WRITE_ONCE(q->buf->producer_index, 2);
	KUNIT_EXPECT_FALSE(test, srnic_queue_corrupt(q));
	KUNIT_EXPECT_EQ(test, srnic_queue_count(q), 2U);
	KUNIT_EXPECT_EQ(test, tpop(test, q), 10U);
}

static void producer_moving_backwards_is_corrupt(struct kunit *test)
{
	u32 n = 7;
	struct srnic_queue *q = tqueue(test, &n, SRNIC_QUEUE_FROM_USER);

	tpush(test, q, 1);
	tpush(test, q, 2);
	tpush(test, q, 3);
	KUNIT_EXPECT_EQ(test, tpop(test, q), 1U);	/* sees producer 3 */

	/* still ahead of the consumer, but behind what it published */
	WRITE_ONCE(q->buf->producer_index, 2);
	KUNIT_EXPECT_TRUE(test, srnic_queue_corrupt(q));
	KUNIT_EXPECT_EQ(test, srnic_queue_count(q), 0U);

	WRITE_ONCE(q->buf->producer_index, 3);
	KUNIT_EXPECT_FALSE(test, srnic_queue_corrupt(q));
	KUNIT_EXPECT_EQ(test, srnic_queue_count(q), 2U);
}

/*
 * The SQ reads WQEs ahead of consuming them: a producer moved back below
 * what was read ahead (even if still ahead of the consumer), or wrapped
 * round past it, is corrupt, and the count of new entries never exceeds
 * the ring's free part (it underflowed to ~2^32 before, a CPU stall).
 */
static void producer_behind_fetched_is_corrupt(struct kunit *test)
{
	u32 n = 7, fetch = 0, got = ~0U, i;
	struct srnic_queue *q = tqueue(test, &n, SRNIC_QUEUE_FROM_USER);

	for (i = 0; i < 5; i++)
		tpush(test, q, i);
	KUNIT_ASSERT_TRUE(test, srnic_queue_fetch(q, fetch, &got));
	KUNIT_EXPECT_EQ(test, got, 5U);
	fetch = 5;

	/* back to consumer + 2: behind the 5 read ahead */
	WRITE_ONCE(q->buf->producer_index, 2);
	got = ~0U;
	KUNIT_EXPECT_FALSE(test, srnic_queue_fetch(q, fetch, &got));
	KUNIT_EXPECT_EQ(test, got, ~0U);
	/* the window's start stays where it was read ahead to */
	KUNIT_EXPECT_TRUE(test, srnic_queue_corrupt(q));
	/* the oldest fetched WQE completes: its slot goes back */
	srnic_queue_advance_consumer(q);
	KUNIT_EXPECT_EQ(test, q->index, 1U);
	KUNIT_EXPECT_TRUE(test, srnic_queue_corrupt(q));
	KUNIT_EXPECT_FALSE(test, srnic_queue_fetch(q, fetch, &got));

	/* wrapped: 7 more posted after 5, one short of a lap from fetch */
	WRITE_ONCE(q->buf->producer_index, 4);
	KUNIT_EXPECT_FALSE(test, srnic_queue_fetch(q, fetch, &got));

	/* out of range */
	WRITE_ONCE(q->buf->producer_index, 0xffffffff);
	KUNIT_EXPECT_FALSE(test, srnic_queue_fetch(q, fetch, &got));

	/* repaired and moved on to a full ring: 3 new past the 4 fetched */
	WRITE_ONCE(q->buf->producer_index, 0);
	KUNIT_EXPECT_TRUE(test, srnic_queue_fetch(q, fetch, &got));
	KUNIT_EXPECT_EQ(test, got, 3U);
	KUNIT_EXPECT_LE(test, got + ((fetch - q->index) & q->index_mask),
			q->index_mask);
}

static void consumer_passing_producer_is_corrupt(struct kunit *test)
{
	u32 n = 7, i;
	struct srnic_queue *q = tqueue(test, &n, SRNIC_QUEUE_TO_USER);

	for (i = 0; i < 3; i++) {
		*(u32 *)srnic_queue_producer_addr(q) = i;
		srnic_queue_advance_producer(q);
	}

	/* the consumer claims an entry never produced */
	WRITE_ONCE(q->buf->consumer_index, 4);
	KUNIT_EXPECT_TRUE(test, srnic_queue_corrupt(q));
	KUNIT_EXPECT_TRUE(test, srnic_queue_full(q));	/* no room */
	KUNIT_EXPECT_EQ(test, srnic_queue_count(q), q->index_mask);

	WRITE_ONCE(q->buf->consumer_index, q->index_mask + 1);
	KUNIT_EXPECT_TRUE(test, srnic_queue_corrupt(q));
	KUNIT_EXPECT_TRUE(test, srnic_queue_full(q));

	/* consumed two, legitimately */
	WRITE_ONCE(q->buf->consumer_index, 2);
	KUNIT_EXPECT_FALSE(test, srnic_queue_corrupt(q));
	KUNIT_EXPECT_EQ(test, srnic_queue_count(q), 1U);
	KUNIT_EXPECT_EQ(test, srnic_queue_consumer_index(q), 2U);
}

/* ----------------------------------------------------------------- resize */

static void resize_keeps_entries_in_order(struct kunit *test)
{
	u32 n = 3, i;
	struct srnic_queue *q = tqueue(test, &n, SRNIC_QUEUE_FROM_USER);
	spinlock_t lock;	/* stands in for the owner's kernel-side lock */

	spin_lock_init(&lock);
	/* wrap first, so the live entries straddle the end of the ring */
	tpush(test, q, 100);
	tpush(test, q, 101);
	tpop(test, q);
	tpop(test, q);
	for (i = 0; i < 3; i++)
		tpush(test, q, i);

	n = 10;
	KUNIT_ASSERT_EQ(test, srnic_queue_resize(q, NULL, &n, NULL, &lock), 0);
	KUNIT_EXPECT_EQ(test, n, 15U);
	KUNIT_EXPECT_EQ(test, q->buf->index_mask, 15U);
	KUNIT_EXPECT_EQ(test, srnic_queue_count(q), 3U);
	KUNIT_EXPECT_FALSE(test, srnic_queue_corrupt(q));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, tpop(test, q), i);
	KUNIT_EXPECT_TRUE(test, srnic_queue_empty(q));
	tpush(test, q, 7);
	KUNIT_EXPECT_EQ(test, tpop(test, q), 7U);
}

static void resize_refuses_to_drop_entries(struct kunit *test)
{
	u32 n = 7, i;
	struct srnic_queue *q = tqueue(test, &n, SRNIC_QUEUE_FROM_USER);
	struct rxe_queue_buf *old;
	spinlock_t lock;	/* stands in for the owner's kernel-side lock */

	spin_lock_init(&lock);
	for (i = 0; i < 5; i++)
		tpush(test, q, i);
	old = q->buf;
	n = 3;
	KUNIT_EXPECT_EQ(test, srnic_queue_resize(q, NULL, &n, NULL, &lock),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, n, 3U);			/* untouched */
	KUNIT_EXPECT_PTR_EQ(test, q->buf, old);	/* same ring */
	KUNIT_EXPECT_EQ(test, srnic_queue_count(q), 5U);

	n = 5;	/* 8 slots: fits */
	KUNIT_EXPECT_EQ(test, srnic_queue_resize(q, NULL, &n, NULL, &lock), 0);
	KUNIT_EXPECT_EQ(test, n, 7U);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, tpop(test, q), i);

	/* a corrupt ring is not resized */
	WRITE_ONCE(q->buf->producer_index, 99);
	n = 20;
	KUNIT_EXPECT_EQ(test, srnic_queue_resize(q, NULL, &n, NULL, &lock),
			-EIO);
}

/* --------------------------------------------------------------------- CQ */

static void tcq_event(struct ib_event *ev, void *ctx)
{
	struct srnic_queue_test *t = ctx;

	t->events++;
	t->last_event = ev->event;
}

static void tcq_comp(struct ib_cq *ibcq, void *ctx)
{
	struct srnic_queue_test *t = ctx;

	t->comps++;
}

static struct srnic_cq *tcq_create(struct kunit *test, unsigned int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct srnic_cq *cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	struct srnic_queue_test *t = test->priv;

	KUNIT_ASSERT_NOT_NULL(test, cq);
	KUNIT_ASSERT_LT(test, t->ncqs, SRNIC_QUEUE_TEST_MAX_OBJS);
	cq->ibcq.device = &tsdev(test)->ib_dev;
	cq->ibcq.event_handler = tcq_event;
	cq->ibcq.comp_handler = tcq_comp;
	cq->ibcq.cq_context = test->priv;
	KUNIT_ASSERT_EQ(test, srnic_create_cq(&cq->ibcq, &attr, NULL), 0);
	t->cqs[t->ncqs++] = cq;
	return cq;
}

static int tcq_post(struct srnic_cq *cq, u64 wr_id, enum ib_wc_status status,
		    bool solicited)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.byte_len = (u32)wr_id * 3,
		.src_qp = 0x42,
	};

	return srnic_cq_post(cq, &wc, solicited);
}

static void create_cq_checks_attributes(struct kunit *test)
{
	struct srnic_cq *cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	struct ib_cq_init_attr attr = {};

	KUNIT_ASSERT_NOT_NULL(test, cq);
	cq->ibcq.device = &tsdev(test)->ib_dev;

	attr.cqe = 0;
	KUNIT_EXPECT_EQ(test, srnic_create_cq(&cq->ibcq, &attr, NULL),
			-EINVAL);
	attr.cqe = SRNIC_CQ_MAX_CQE + 1;
	KUNIT_EXPECT_EQ(test, srnic_create_cq(&cq->ibcq, &attr, NULL),
			-EINVAL);
	attr.cqe = 16;
	attr.flags = 1;
	KUNIT_EXPECT_EQ(test, srnic_create_cq(&cq->ibcq, &attr, NULL),
			-EOPNOTSUPP);
	attr.flags = 0;
	attr.comp_vector = 1;	/* the test device has one */
	KUNIT_EXPECT_EQ(test, srnic_create_cq(&cq->ibcq, &attr, NULL),
			-EINVAL);

	/* the largest CQ: cqe reported back is at least what was asked */
	cq = tcq_create(test, SRNIC_CQ_MAX_CQE);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, SRNIC_CQ_MAX_CQE);
	cq = tcq_create(test, 5);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 7);
}

static void cq_post_then_poll_in_order(struct kunit *test)
{
	struct srnic_cq *cq = tcq_create(test, 4);
	struct ib_wc wc[8];
	int i;

	KUNIT_EXPECT_EQ(test, srnic_cq_ops.poll_cq(&cq->ibcq, 8, wc), 0);
	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_EQ(test, tcq_post(cq, i, IB_WC_SUCCESS, false), 0);

	KUNIT_ASSERT_EQ(test, srnic_cq_ops.poll_cq(&cq->ibcq, 3, wc), 3);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, (u64)i);
		KUNIT_EXPECT_EQ(test, wc[i].byte_len, (u32)i * 3);
		KUNIT_EXPECT_EQ(test, wc[i].opcode, IB_WC_RECV);
		KUNIT_EXPECT_EQ(test, wc[i].src_qp, 0x42U);
	}
	KUNIT_ASSERT_EQ(test, srnic_cq_ops.poll_cq(&cq->ibcq, 8, wc), 2);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 3ULL);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 4ULL);
	KUNIT_EXPECT_EQ(test, srnic_cq_ops.poll_cq(&cq->ibcq, 8, wc), 0);
}

static void cq_overrun_returns_enospc_and_one_event(struct kunit *test)
{
	struct srnic_queue_test *t = test->priv;
	struct srnic_cq *cq = tcq_create(test, 3);
	struct ib_wc wc;
	int i;

	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, tcq_post(cq, i, IB_WC_SUCCESS, false), 0);
	KUNIT_EXPECT_EQ(test, t->events, 0);
	KUNIT_EXPECT_EQ(test, tcq_post(cq, 3, IB_WC_SUCCESS, false), -ENOSPC);
	KUNIT_EXPECT_EQ(test, t->events, 1);
	KUNIT_EXPECT_EQ(test, t->last_event, IB_EVENT_CQ_ERR);

	/* in error from now on, but the event is not repeated */
	KUNIT_EXPECT_EQ(test, srnic_cq_ops.poll_cq(&cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 0ULL);
	KUNIT_EXPECT_EQ(test, tcq_post(cq, 4, IB_WC_SUCCESS, false), -ENOSPC);
	KUNIT_EXPECT_EQ(test, t->events, 1);
}

static void req_notify_cq_arms_once(struct kunit *test)
{
	struct srnic_queue_test *t = test->priv;
	struct srnic_cq *cq = tcq_create(test, 16);
	struct ib_cq *ibcq = &cq->ibcq;
	enum ib_cq_notify_flags missed = IB_CQ_NEXT_COMP |
					 IB_CQ_REPORT_MISSED_EVENTS;
	struct ib_wc wc[16];

	/* not armed: nothing */
	tcq_post(cq, 0, IB_WC_SUCCESS, true);
	KUNIT_EXPECT_EQ(test, t->comps, 0);

	/* NEXT_COMP: the next completion of any kind, once */
	KUNIT_EXPECT_EQ(test, srnic_cq_ops.req_notify_cq(ibcq, IB_CQ_NEXT_COMP),
			0);
	tcq_post(cq, 1, IB_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, t->comps, 1);
	tcq_post(cq, 2, IB_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, t->comps, 1);

	/* SOLICITED: not an unsolicited success; a solicited one, or an error */
	srnic_cq_ops.req_notify_cq(ibcq, IB_CQ_SOLICITED);
	tcq_post(cq, 3, IB_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, t->comps, 1);
	tcq_post(cq, 4, IB_WC_SUCCESS, true);
	KUNIT_EXPECT_EQ(test, t->comps, 2);
	srnic_cq_ops.req_notify_cq(ibcq, IB_CQ_SOLICITED);
	tcq_post(cq, 5, IB_WC_REM_ACCESS_ERR, false);
	KUNIT_EXPECT_EQ(test, t->comps, 3);

	/* an armed NEXT_COMP is not weakened by a later SOLICITED */
	srnic_cq_ops.req_notify_cq(ibcq, IB_CQ_NEXT_COMP);
	srnic_cq_ops.req_notify_cq(ibcq, IB_CQ_SOLICITED);
	tcq_post(cq, 6, IB_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, t->comps, 4);

	/* REPORT_MISSED_EVENTS: 1 while completions wait, 0 once drained */
	KUNIT_EXPECT_EQ(test, srnic_cq_ops.req_notify_cq(ibcq, missed), 1);
	KUNIT_EXPECT_EQ(test, srnic_cq_ops.poll_cq(ibcq, 16, wc), 7);
	KUNIT_EXPECT_EQ(test, srnic_cq_ops.req_notify_cq(ibcq, missed), 0);
}

static void resize_cq_keeps_completions(struct kunit *test)
{
	struct srnic_cq *cq = tcq_create(test, 7);
	struct ib_wc wc[8];
	int i;

	for (i = 0; i < 5; i++)
		tcq_post(cq, i, IB_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, srnic_resize_cq(&cq->ibcq, 2, NULL),
			-EINVAL);	/* 3 < 5 */
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 7);
	KUNIT_EXPECT_EQ(test, srnic_resize_cq(&cq->ibcq, 0, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_resize_cq(&cq->ibcq, SRNIC_CQ_MAX_CQE + 1,
					      NULL), -EINVAL);

	KUNIT_ASSERT_EQ(test, srnic_resize_cq(&cq->ibcq, 100, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 127);
	tcq_post(cq, 5, IB_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, srnic_cq_ops.poll_cq(&cq->ibcq, 8, wc), 6);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, (u64)i);

	/* and down again, to the exact count */
	for (i = 0; i < 3; i++)
		tcq_post(cq, 10 + i, IB_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, srnic_resize_cq(&cq->ibcq, 3, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 3);
	KUNIT_ASSERT_EQ(test, srnic_cq_ops.poll_cq(&cq->ibcq, 8, wc), 3);
	KUNIT_EXPECT_EQ(test, wc[2].wr_id, 12ULL);
}

static void wc_to_uwc_fills_the_user_layout(struct kunit *test)
{
	struct ib_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct ib_uverbs_wc uwc;
	struct ib_wc wc = {
		.wr_id = 0x1122334455667788ULL,
		.status = IB_WC_LOC_LEN_ERR,
		.opcode = IB_WC_RECV_RDMA_WITH_IMM,
		.vendor_err = 7,
		.byte_len = 4096,
		.ex.imm_data = cpu_to_be32(0xdeadbeef),
		.src_qp = 0x33,
		.wc_flags = IB_WC_GRH | IB_WC_WITH_IMM | IB_WC_WITH_SMAC |
			    IB_WC_WITH_VLAN,
		.pkey_index = 0,
		.sl = 3,
		.port_num = 1,
	};

	KUNIT_ASSERT_NOT_NULL(test, qp);
	/* rdma-core memcpy's a 48-byte ibv_wc from the start of the slot */
	KUNIT_EXPECT_EQ(test, sizeof(struct ib_uverbs_wc), 48);
	KUNIT_EXPECT_EQ(test, offsetof(union srnic_cqe, uwc), 0);

	qp->qp_num = 0x123456;
	wc.qp = qp;
	memset(&uwc, 0xa5, sizeof(uwc));
	srnic_cq_wc_to_uwc(&wc, &uwc);
	KUNIT_EXPECT_EQ(test, uwc.wr_id, wc.wr_id);
	KUNIT_EXPECT_EQ(test, uwc.status, (u32)IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, uwc.opcode, 129U);	/* IBV_WC_RECV_RDMA_WITH_IMM */
	KUNIT_EXPECT_EQ(test, uwc.vendor_err, 7U);
	KUNIT_EXPECT_EQ(test, uwc.byte_len, 4096U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(uwc.ex.imm_data), 0xdeadbeef);
	KUNIT_EXPECT_EQ(test, uwc.qp_num, 0x123456U);
	KUNIT_EXPECT_EQ(test, uwc.src_qp, 0x33U);
	/* ibv_wc_flags: GRH 1, WITH_IMM 2; kernel-only bits dropped */
	KUNIT_EXPECT_EQ(test, uwc.wc_flags, 3U);
	KUNIT_EXPECT_EQ(test, uwc.sl, 3);
	KUNIT_EXPECT_EQ(test, uwc.port_num, 1);
	KUNIT_EXPECT_EQ(test, uwc.reserved, 0);
	KUNIT_EXPECT_EQ(test, uwc.slid, 0);

	/* invalidate and checksum bits differ between the two ABIs */
	wc.wc_flags = IB_WC_WITH_INVALIDATE;
	wc.ex.invalidate_rkey = 0x4321;
	wc.qp = NULL;
	srnic_cq_wc_to_uwc(&wc, &uwc);
	KUNIT_EXPECT_EQ(test, uwc.wc_flags, 8U);	/* IBV_WC_WITH_INV */
	KUNIT_EXPECT_EQ(test, uwc.ex.invalidate_rkey, 0x4321U);
	KUNIT_EXPECT_EQ(test, uwc.qp_num, 0U);
	wc.wc_flags = IB_WC_IP_CSUM_OK;
	srnic_cq_wc_to_uwc(&wc, &uwc);
	KUNIT_EXPECT_EQ(test, uwc.wc_flags, 4U);	/* IBV_WC_IP_CSUM_OK */
}

/* ------------------------------------------------------------ recv WQEs */

/* A recv WQE with room for 40 SGEs, as it would sit in a ring slot. */
static struct rxe_recv_wqe *twqe(struct kunit *test, u64 wr_id, u32 num_sge,
				 u32 len)
{
	struct rxe_recv_wqe *w;
	u32 i;

	w = kunit_kzalloc(test, srnic_srq_wqe_size(40), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	w->wr_id = wr_id;
	w->dma.num_sge = num_sge;
	for (i = 0; i < 40; i++) {
		w->dma.sge[i].addr = 0x1000 * (i + 1);
		w->dma.sge[i].length = len;
		w->dma.sge[i].lkey = 0x100 + i;
	}
	/* what the producer claims: ignored, recomputed */
	w->dma.length = 1;
	return w;
}

static void recv_wqe_copy_takes_a_valid_wqe(struct kunit *test)
{
	struct srnic_recv_wqe_copy out;
	struct rxe_recv_wqe *w = twqe(test, 77, 3, 100);

	KUNIT_ASSERT_EQ(test, srnic_srq_wqe_copy(w, 4, &out), 0);
	KUNIT_EXPECT_EQ(test, out.wr_id, 77ULL);
	KUNIT_EXPECT_EQ(test, out.num_sge, 3U);
	KUNIT_EXPECT_EQ(test, out.length, 300U);
	KUNIT_EXPECT_EQ(test, out.sge[2].addr, 0x3000ULL);
	KUNIT_EXPECT_EQ(test, out.sge[2].length, 100U);
	KUNIT_EXPECT_EQ(test, out.sge[2].lkey, 0x102U);

	/* exactly max_sge, and no SGE at all, are fine */
	w->dma.num_sge = 4;
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_copy(w, 4, &out), 0);
	KUNIT_EXPECT_EQ(test, out.length, 400U);
	w->dma.num_sge = 0;
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_copy(w, 4, &out), 0);
	KUNIT_EXPECT_EQ(test, out.length, 0U);

	/* the total may reach U32_MAX */
	w = twqe(test, 1, 2, 0x80000000);
	w->dma.sge[1].length = 0x7fffffff;
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_copy(w, 2, &out), 0);
	KUNIT_EXPECT_EQ(test, out.length, U32_MAX);
}

static void recv_wqe_copy_rejects_too_many_sges(struct kunit *test)
{
	struct srnic_recv_wqe_copy out;
	struct rxe_recv_wqe *w = twqe(test, 78, 5, 10);

	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_copy(w, 4, &out), -EINVAL);
	KUNIT_EXPECT_EQ(test, out.wr_id, 78ULL);	/* for the completion */
	KUNIT_EXPECT_EQ(test, out.num_sge, 0U);

	/* never more than the copy holds, whatever the caller says */
	w->dma.num_sge = SRNIC_MAX_SGE + 1;
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_copy(w, 40, &out), -EINVAL);
	w->dma.num_sge = 0xffffffff;
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_copy(w, 40, &out), -EINVAL);
}

static void recv_wqe_copy_rejects_length_overflow(struct kunit *test)
{
	struct srnic_recv_wqe_copy out;
	struct rxe_recv_wqe *w = twqe(test, 79, 2, 0x80000000);

	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_copy(w, 4, &out), -EINVAL);
	KUNIT_EXPECT_EQ(test, out.wr_id, 79ULL);
	w = twqe(test, 80, 3, 0x7fffffff);
	w->dma.sge[2].length = 2;
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_copy(w, 4, &out), -EINVAL);
}

static void recv_wqe_build_checks_the_wr(struct kunit *test)
{
	struct rxe_recv_wqe *w = twqe(test, 0, 0, 0);
	struct ib_sge sg[3] = {
		{ .addr = 0x10, .length = 8, .lkey = 1 },
		{ .addr = 0x20, .length = 16, .lkey = 2 },
		{ .addr = 0x30, .length = U32_MAX, .lkey = 3 },
	};
	struct ib_recv_wr wr = { .wr_id = 5, .sg_list = sg, .num_sge = 2 };
	struct srnic_recv_wqe_copy out;

	KUNIT_ASSERT_EQ(test, srnic_srq_wqe_build(w, &wr, 2), 0);
	KUNIT_EXPECT_EQ(test, w->dma.length, 24U);
	KUNIT_EXPECT_EQ(test, w->dma.resid, 24U);
	KUNIT_EXPECT_EQ(test, w->dma.cur_sge, 0U);
	KUNIT_ASSERT_EQ(test, srnic_srq_wqe_copy(w, 2, &out), 0);
	KUNIT_EXPECT_EQ(test, out.wr_id, 5ULL);
	KUNIT_EXPECT_EQ(test, out.sge[1].addr, 0x20ULL);

	wr.num_sge = 3;
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_build(w, &wr, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_build(w, &wr, 3), -EINVAL);
	wr.num_sge = -1;
	KUNIT_EXPECT_EQ(test, srnic_srq_wqe_build(w, &wr, 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, w->wr_id, 5ULL);	/* untouched on error */
}

/* -------------------------------------------------------------------- SRQ */

static void tsrq_event(struct ib_event *ev, void *ctx)
{
	struct srnic_queue_test *t = ctx;

	t->events++;
	t->last_event = ev->event;
}

static struct srnic_srq *tsrq_create(struct kunit *test, u32 max_wr,
				     u32 max_sge)
{
	struct srnic_srq *srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = max_wr, .max_sge = max_sge, .srq_limit = 1 },
	};

	struct srnic_queue_test *t = test->priv;

	KUNIT_ASSERT_NOT_NULL(test, srq);
	KUNIT_ASSERT_LT(test, t->nsrqs, SRNIC_QUEUE_TEST_MAX_OBJS);
	srq->ibsrq.device = &tsdev(test)->ib_dev;
	srq->ibsrq.event_handler = tsrq_event;
	srq->ibsrq.srq_context = test->priv;
	KUNIT_ASSERT_EQ(test, srnic_srq_ops.create_srq(&srq->ibsrq, &init,
						       NULL), 0);
	t->srqs[t->nsrqs++] = srq;
	KUNIT_EXPECT_GE(test, init.attr.max_wr, max_wr);
	KUNIT_EXPECT_GE(test, init.attr.max_sge, max_sge);
	return srq;
}

static int tsrq_post(struct srnic_srq *srq, u64 wr_id, int num_sge)
{
	struct ib_sge sg[2] = {
		{ .addr = 0x1000, .length = 64, .lkey = 9 },
		{ .addr = 0x2000, .length = 32, .lkey = 9 },
	};
	struct ib_recv_wr wr = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = num_sge,
	};
	const struct ib_recv_wr *bad = NULL;
	int err;

	err = srnic_srq_ops.post_srq_recv(&srq->ibsrq, &wr, &bad);
	if (err && bad != &wr)
		return -EFAULT;	/* bad_wr must point at the failing WR */
	return err;
}

static void srq_pops_in_order_and_fires_limit_once(struct kunit *test)
{
	struct srnic_queue_test *t = test->priv;
	struct srnic_srq *srq = tsrq_create(test, 8, 2);
	struct srnic_recv_wqe_copy out;
	struct ib_srq_attr attr = {};
	int i;

	KUNIT_EXPECT_EQ(test, srnic_srq_pop(srq, &out), -EAGAIN);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, tsrq_post(srq, i, 2), 0);

	/* create's srq_limit is ignored: not armed */
	KUNIT_ASSERT_EQ(test, srnic_srq_ops.query_srq(&srq->ibsrq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0U);
	KUNIT_EXPECT_GE(test, attr.max_wr, 8U);
	KUNIT_EXPECT_EQ(test, attr.max_sge, 2U);

	attr.srq_limit = 3;
	KUNIT_ASSERT_EQ(test, srnic_srq_ops.modify_srq(&srq->ibsrq, &attr,
						       IB_SRQ_LIMIT, NULL), 0);
	KUNIT_ASSERT_EQ(test, srnic_srq_pop(srq, &out), 0);	/* 3 left */
	KUNIT_EXPECT_EQ(test, out.wr_id, 0ULL);
	KUNIT_EXPECT_EQ(test, out.num_sge, 2U);
	KUNIT_EXPECT_EQ(test, out.length, 96U);
	KUNIT_EXPECT_EQ(test, t->events, 0);
	KUNIT_ASSERT_EQ(test, srnic_srq_pop(srq, &out), 0);	/* 2 < 3 */
	KUNIT_EXPECT_EQ(test, out.wr_id, 1ULL);
	KUNIT_EXPECT_EQ(test, t->events, 1);
	KUNIT_EXPECT_EQ(test, t->last_event, IB_EVENT_SRQ_LIMIT_REACHED);
	KUNIT_ASSERT_EQ(test, srnic_srq_pop(srq, &out), 0);
	KUNIT_ASSERT_EQ(test, srnic_srq_pop(srq, &out), 0);
	KUNIT_EXPECT_EQ(test, out.wr_id, 3ULL);
	KUNIT_EXPECT_EQ(test, t->events, 1);			/* once */
	KUNIT_EXPECT_EQ(test, srnic_srq_pop(srq, &out), -EAGAIN);

	/* fired: disarmed */
	KUNIT_ASSERT_EQ(test, srnic_srq_ops.query_srq(&srq->ibsrq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0U);
}

static void srq_pop_consumes_a_bad_wqe(struct kunit *test)
{
	struct srnic_srq *srq = tsrq_create(test, 4, 1);
	struct srnic_recv_wqe_copy out;
	struct rxe_recv_wqe *w;

	/* as a user could write it: more SGEs than the slot holds */
	w = srnic_queue_kproduce_addr(&srq->rq);
	w->wr_id = 0xbad;
	w->dma.num_sge = 1000;
	srnic_queue_kadvance_producer(&srq->rq);
	KUNIT_ASSERT_EQ(test, tsrq_post(srq, 2, 1), 0);

	KUNIT_EXPECT_EQ(test, srnic_srq_pop(srq, &out), -EINVAL);
	KUNIT_EXPECT_EQ(test, out.wr_id, 0xbadULL);
	KUNIT_ASSERT_EQ(test, srnic_srq_pop(srq, &out), 0);
	KUNIT_EXPECT_EQ(test, out.wr_id, 2ULL);
}

static void srq_pop_reports_a_corrupt_ring(struct kunit *test)
{
	struct srnic_srq *srq = tsrq_create(test, 4, 1);
	struct srnic_recv_wqe_copy out;

	KUNIT_ASSERT_EQ(test, tsrq_post(srq, 1, 1), 0);
	WRITE_ONCE(srq->rq.buf->producer_index, 0x10000);
	KUNIT_EXPECT_EQ(test, srnic_srq_pop(srq, &out), -EIO);
	WRITE_ONCE(srq->rq.buf->producer_index, 1);
	KUNIT_EXPECT_EQ(test, srnic_srq_pop(srq, &out), 0);
}

static void post_srq_recv_stops_at_the_bad_wr(struct kunit *test)
{
	struct srnic_srq *srq = tsrq_create(test, 3, 1);
	int i;

	KUNIT_EXPECT_EQ(test, tsrq_post(srq, 0, 2), -EINVAL);	/* > max_sge */
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, tsrq_post(srq, i, 1), 0);
	KUNIT_EXPECT_EQ(test, tsrq_post(srq, 3, 1), -ENOMEM);	/* full */
	KUNIT_EXPECT_EQ(test, srnic_queue_count(&srq->rq), 3U);
}

static void modify_srq_resizes_keeping_wqes(struct kunit *test)
{
	struct srnic_srq *srq = tsrq_create(test, 4, 2);
	struct srnic_recv_wqe_copy out;
	struct ib_srq_attr attr = {};
	int i;

	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, tsrq_post(srq, i, 1), 0);

	attr.max_wr = 40;
	KUNIT_ASSERT_EQ(test, srnic_srq_ops.modify_srq(&srq->ibsrq, &attr,
						       IB_SRQ_MAX_WR, NULL), 0);
	KUNIT_ASSERT_EQ(test, srnic_srq_ops.query_srq(&srq->ibsrq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.max_wr, 63U);

	attr.max_wr = 2;	/* 4 slots, capacity 3: the 3 WQEs fit */
	KUNIT_EXPECT_EQ(test, srnic_srq_ops.modify_srq(&srq->ibsrq, &attr,
						       IB_SRQ_MAX_WR, NULL), 0);
	KUNIT_ASSERT_EQ(test, tsrq_post(srq, 3, 1), -ENOMEM);
	attr.max_wr = 1;	/* capacity 1 < 3 */
	KUNIT_EXPECT_EQ(test, srnic_srq_ops.modify_srq(&srq->ibsrq, &attr,
						       IB_SRQ_MAX_WR, NULL),
			-EINVAL);

	/* all or nothing: a bad limit stops a good resize */
	attr.max_wr = 100;
	attr.srq_limit = 101;
	KUNIT_EXPECT_EQ(test, srnic_srq_ops.modify_srq(&srq->ibsrq, &attr,
						       IB_SRQ_MAX_WR |
						       IB_SRQ_LIMIT, NULL),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, srnic_srq_ops.query_srq(&srq->ibsrq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.max_wr, 3U);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0U);

	/* an armed limit above the new size is refused too */
	attr.srq_limit = 3;
	KUNIT_ASSERT_EQ(test, srnic_srq_ops.modify_srq(&srq->ibsrq, &attr,
						       IB_SRQ_LIMIT, NULL), 0);
	attr.max_wr = 2;
	KUNIT_EXPECT_EQ(test, srnic_srq_ops.modify_srq(&srq->ibsrq, &attr,
						       IB_SRQ_MAX_WR, NULL),
			-EINVAL);

	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, srnic_srq_pop(srq, &out), 0);
		KUNIT_EXPECT_EQ(test, out.wr_id, (u64)i);
	}
}

static void create_srq_checks_attributes(struct kunit *test)
{
	struct srnic_srq *srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct srnic_srq *a, *b;

	KUNIT_ASSERT_NOT_NULL(test, srq);
	srq->ibsrq.device = &tsdev(test)->ib_dev;

	init.srq_type = IB_SRQT_XRC;
	KUNIT_EXPECT_EQ(test, srnic_srq_ops.create_srq(&srq->ibsrq, &init,
						       NULL), -EOPNOTSUPP);
	init.srq_type = IB_SRQT_BASIC;
	init.attr.max_wr = 0;
	KUNIT_EXPECT_EQ(test, srnic_srq_ops.create_srq(&srq->ibsrq, &init,
						       NULL), -EINVAL);
	init.attr.max_wr = SRNIC_MAX_SRQ_WR + 1;
	KUNIT_EXPECT_EQ(test, srnic_srq_ops.create_srq(&srq->ibsrq, &init,
						       NULL), -EINVAL);
	init.attr.max_wr = 16;
	init.attr.max_sge = SRNIC_MAX_SGE + 1;
	KUNIT_EXPECT_EQ(test, srnic_srq_ops.create_srq(&srq->ibsrq, &init,
						       NULL), -EINVAL);
	KUNIT_EXPECT_TRUE(test, xa_empty(&tsdev(test)->srq_xa));

	/* max_sge 0 still gets one; numbers are distinct and published */
	a = tsrq_create(test, SRNIC_MAX_SRQ_WR, 0);
	b = tsrq_create(test, 1, SRNIC_MAX_SGE);
	KUNIT_EXPECT_EQ(test, a->max_sge, 1U);
	KUNIT_EXPECT_NE(test, a->srq_num, 0U);
	KUNIT_EXPECT_NE(test, a->srq_num, b->srq_num);
	KUNIT_EXPECT_PTR_EQ(test, xa_load(&tsdev(test)->srq_xa, a->srq_num),
			    (void *)a);
}

static struct kunit_case srnic_queue_test_cases[] = {
	KUNIT_CASE_PARAM(init_rounds_slots_and_elements_up,
			 srnic_queue_size_gen_params),
	KUNIT_CASE(init_uses_the_rxe_header_layout),
	KUNIT_CASE(init_rejects_bad_sizes),
	KUNIT_CASE(from_user_ring_wraps_in_order),
	KUNIT_CASE(to_user_ring_wraps_in_order),
	KUNIT_CASE(producer_index_out_of_range_is_corrupt),
	KUNIT_CASE(producer_moving_backwards_is_corrupt),
	KUNIT_CASE(producer_behind_fetched_is_corrupt),
	KUNIT_CASE(consumer_passing_producer_is_corrupt),
	KUNIT_CASE(resize_keeps_entries_in_order),
	KUNIT_CASE(resize_refuses_to_drop_entries),
	KUNIT_CASE(create_cq_checks_attributes),
	KUNIT_CASE(cq_post_then_poll_in_order),
	KUNIT_CASE(cq_overrun_returns_enospc_and_one_event),
	KUNIT_CASE(req_notify_cq_arms_once),
	KUNIT_CASE(resize_cq_keeps_completions),
	KUNIT_CASE(wc_to_uwc_fills_the_user_layout),
	KUNIT_CASE(recv_wqe_copy_takes_a_valid_wqe),
	KUNIT_CASE(recv_wqe_copy_rejects_too_many_sges),
	KUNIT_CASE(recv_wqe_copy_rejects_length_overflow),
	KUNIT_CASE(recv_wqe_build_checks_the_wr),
	KUNIT_CASE(srq_pops_in_order_and_fires_limit_once),
	KUNIT_CASE(srq_pop_consumes_a_bad_wqe),
	KUNIT_CASE(srq_pop_reports_a_corrupt_ring),
	KUNIT_CASE(post_srq_recv_stops_at_the_bad_wr),
	KUNIT_CASE(modify_srq_resizes_keeping_wqes),
	KUNIT_CASE(create_srq_checks_attributes),
	{}
};

static struct kunit_suite srnic_queue_test_suite = {
	.name = "srnic_queue",
	.init = srnic_queue_test_init,
	.exit = srnic_queue_test_exit,
	.test_cases = srnic_queue_test_cases,
};

kunit_test_suite(srnic_queue_test_suite);
