// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the TX scheduler's token-bucket pacer (srnic_sched_pace()), the hook
 * congestion control drives.
 */
#include <kunit/test.h>

#include "../../kernel/srnic.h"

static struct srnic_qp *srnic_pace_qp(struct kunit *test, u64 rate,
				      u64 burst)
{
	struct srnic_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, qp);
	spin_lock_init(&qp->req_lock);
	srnic_sched_qp_init(qp);
	qp->pace.rate = rate;
	qp->pace.burst = burst;
	qp->pace.tokens = burst;
	qp->pace.last = ktime_get();
	return qp;
}

static bool srnic_pace_try(struct srnic_qp *qp, u32 bytes)
{
	bool ok;

	spin_lock_bh(&qp->req_lock);
	ok = srnic_sched_pace(qp, bytes);
	spin_unlock_bh(&qp->req_lock);
	return ok;
}

static void srnic_pace_unpaced_always_passes(struct kunit *test)
{
	struct srnic_qp *qp = srnic_pace_qp(test, 0, 0);
	int i;

	for (i = 0; i < 1000; i++)
		KUNIT_EXPECT_TRUE(test, srnic_pace_try(qp, 4096));
	KUNIT_EXPECT_FALSE(test, hrtimer_active(&qp->pace.timer));
}

static void srnic_pace_burst_then_waits(struct kunit *test)
{
	/* 1 MB/s, 16 KiB burst: 16 KiB pass at once, the next KiB waits. */
	struct srnic_qp *qp = srnic_pace_qp(test, 1000000, 16384);

	KUNIT_EXPECT_TRUE(test, srnic_pace_try(qp, 8192));
	KUNIT_EXPECT_TRUE(test, srnic_pace_try(qp, 8192));
	KUNIT_EXPECT_FALSE(test, srnic_pace_try(qp, 1024));
	KUNIT_EXPECT_TRUE(test, hrtimer_active(&qp->pace.timer));
	/* The timer is due when 1 KiB of tokens exists: ~1 ms at 1 MB/s. */
	KUNIT_EXPECT_LE(test, ktime_to_ns(hrtimer_get_remaining(&qp->pace.timer)),
			(s64)1100 * NSEC_PER_USEC);
	srnic_sched_qp_fini(qp);
}

static void srnic_pace_refills_with_time(struct kunit *test)
{
	struct srnic_qp *qp = srnic_pace_qp(test, 1000000, 16384);

	qp->pace.tokens = 0;
	/* 10 ms ago at 1 MB/s: 10000 bytes of tokens. */
	qp->pace.last = ktime_sub_ms(ktime_get(), 10);
	KUNIT_EXPECT_TRUE(test, srnic_pace_try(qp, 9000));
	KUNIT_EXPECT_FALSE(test, srnic_pace_try(qp, 4096));
	srnic_sched_qp_fini(qp);
}

static void srnic_pace_tokens_capped_at_burst(struct kunit *test)
{
	struct srnic_qp *qp = srnic_pace_qp(test, 1000000, 16384);

	/* A long idle time does not bank more than the burst. */
	qp->pace.last = ktime_sub_ms(ktime_get(), 10000);
	KUNIT_EXPECT_TRUE(test, srnic_pace_try(qp, 16384));
	KUNIT_EXPECT_FALSE(test, srnic_pace_try(qp, 4096));
	srnic_sched_qp_fini(qp);
}

static struct kunit_case srnic_pace_cases[] = {
	KUNIT_CASE(srnic_pace_unpaced_always_passes),
	KUNIT_CASE(srnic_pace_burst_then_waits),
	KUNIT_CASE(srnic_pace_refills_with_time),
	KUNIT_CASE(srnic_pace_tokens_capped_at_burst),
	{}
};

static struct kunit_suite srnic_pace_suite = {
	.name = "srnic_pace",
	.test_cases = srnic_pace_cases,
};

kunit_test_suite(srnic_pace_suite);
