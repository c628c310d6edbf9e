// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: DCQCN (kernel/srnic_dcqcn.c, kernel/srnic_cnp.c). The reaction
 * point is driven with event sequences at chosen times and checked against
 * the equations of Zhu et al. (SIGCOMM 2015) as srnic_dcqcn.c states them;
 * then the NP's CNP rate limit, ECT marking, the CNP wire format, the knob
 * table, and the glue that turns a received CNP into a pacer rate.
 */
#include <kunit/test.h>
#include <net/inet_ecn.h>

#include "../../kernel/srnic.h"

#define US(x)		((u64)(x) * NSEC_PER_USEC)
#define MBPS(x)		((u64)(x) * SRNIC_DCQCN_MBPS)
#define ONE		SRNIC_DCQCN_ALPHA_ONE
#define T0		US(1000000)	/* an arbitrary start time */

/* The paper's parameters (§5.1): g = 1/256, F = 5, T = 55 µs, K = 55 µs. */
static void paper_params(struct srnic_dcqcn_params *p)
{
	srnic_dcqcn_params_default(p);
	p->dce_tcp_g = 1020;		/* 1 - g = 1020/1024: g = 1/256 */
	p->dce_tcp_rtt = 55;
	p->rpg_threshold = 5;
	p->rpg_time_reset = 55;
	p->rpg_byte_reset = 10 * 1000 * 1000;
	p->rpg_ai_rate = 40;
	p->rpg_hai_rate = 200;
	p->rpg_max_rate = 1000;		/* 1 Gb/s = 125 MB/s */
	p->rpg_min_rate = 10;
	p->rate_reduce_monitor_period = 4;
	p->rpg_min_dec_fac = 1;		/* no limit on a single cut */
	p->clamp_tgt_rate = 0;		/* mlx5's; dcqcn_clamp_target tests 1 */
}

/* RC (1 - alpha/2), alpha in 2^20 units: the paper's cut (rpg_gd 11). */
static u64 paper_cut(u64 rc, u32 alpha)
{
	return rc - mul_u64_u32_shr(rc, alpha, 21);
}

/*
 * A QP limited below its target: the first CNP sets 500 Mb/s (RC = RT),
 * a second one 10 µs later cuts RC and keeps RT = 500 Mb/s (no increase in
 * between). Returns the time of the second CNP.
 */
static u64 start_limited(struct srnic_dcqcn_rp *rp,
			 struct srnic_dcqcn_params *p, u64 now)
{
	p->rate_to_set_on_first_cnp = 500;
	srnic_dcqcn_rp_cnp(rp, p, now);
	p->rate_to_set_on_first_cnp = 0;
	now += US(10);
	srnic_dcqcn_rp_cnp(rp, p, now);
	return now;
}

static void expect_near(struct kunit *test, u64 got, u64 want, u64 tol)
{
	KUNIT_EXPECT_LE_MSG(test, got, want + tol, "want %llu", want);
	KUNIT_EXPECT_GE_MSG(test, got + tol, want, "want %llu", want);
}

static void dcqcn_defaults(struct kunit *test)
{
	struct srnic_dcqcn_params p;

	memset(&p, 0xaa, sizeof(p));
	srnic_dcqcn_params_default(&p);
	KUNIT_EXPECT_EQ(test, p.np_enable, 1U);
	KUNIT_EXPECT_EQ(test, p.rp_enable, 1U);
	KUNIT_EXPECT_EQ(test, p.min_time_between_cnps, 4U);
	KUNIT_EXPECT_EQ(test, p.cnp_dscp, 48U);
	KUNIT_EXPECT_EQ(test, p.cnp_802p_prio, 6U);
	KUNIT_EXPECT_EQ(test, p.clamp_tgt_rate, 1U);	/* mlx5: 0 */
	KUNIT_EXPECT_EQ(test, p.clamp_tgt_rate_after_time_inc, 1U);
	KUNIT_EXPECT_EQ(test, p.dce_tcp_g, 1019U);
	KUNIT_EXPECT_EQ(test, p.dce_tcp_rtt, 50000U);	/* mlx5: 1 */
	KUNIT_EXPECT_EQ(test, p.initial_alpha_value, 1023U);
	KUNIT_EXPECT_EQ(test, p.rate_reduce_monitor_period, 4000U); /* 4 */
	KUNIT_EXPECT_EQ(test, p.rate_to_set_on_first_cnp, 0U);
	KUNIT_EXPECT_EQ(test, p.rpg_ai_rate, 1U);	/* mlx5: 5 */
	KUNIT_EXPECT_EQ(test, p.rpg_byte_reset, 1000000U); /* 32767 */
	KUNIT_EXPECT_EQ(test, p.rpg_gd, 11U);
	KUNIT_EXPECT_EQ(test, p.rpg_hai_rate, 5U);	/* mlx5: 50 */
	KUNIT_EXPECT_EQ(test, p.rpg_max_rate, 0U);
	KUNIT_EXPECT_EQ(test, p.rpg_min_dec_fac, 50U);
	KUNIT_EXPECT_EQ(test, p.rpg_min_rate, 1U);
	KUNIT_EXPECT_EQ(test, p.rpg_threshold, 5U);	/* mlx5: 1 */
	KUNIT_EXPECT_EQ(test, p.rpg_time_reset, 10000U); /* 300 */
	KUNIT_EXPECT_EQ(test, p.ecn_mark, 1U);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_max_rate(&p),
			MBPS(SRNIC_DCQCN_LINE_RATE_MBPS));
}

/* Every knob: 4 in roce_np, 18 in roce_rp, unique names, ranges enforced. */
static void dcqcn_knob_ranges(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	unsigned int i, j, np = 0, rp = 0;

	srnic_dcqcn_params_default(&p);
	for (i = 0; i < SRNIC_DCQCN_NKNOBS; i++) {
		const struct srnic_dcqcn_knob *k = &srnic_dcqcn_knobs[i];
		u32 def = srnic_dcqcn_knob_get(&p, k);

		KUNIT_ASSERT_NOT_NULL(test, k->name);
		if (k->set == SRNIC_DCQCN_NP)
			np++;
		else
			rp++;
		for (j = 0; j < i; j++)
			if (srnic_dcqcn_knobs[j].set == k->set)
				KUNIT_EXPECT_STRNEQ(test, srnic_dcqcn_knobs[j].name,
						    k->name);
		KUNIT_EXPECT_EQ(test, def, k->def);
		KUNIT_EXPECT_GE(test, k->def, k->min);
		KUNIT_EXPECT_LE(test, k->def, k->max);
		KUNIT_EXPECT_EQ(test, srnic_dcqcn_knob_set(&p, k, k->max), 0);
		KUNIT_EXPECT_EQ(test, srnic_dcqcn_knob_get(&p, k), k->max);
		KUNIT_EXPECT_EQ(test, srnic_dcqcn_knob_set(&p, k, k->min), 0);
		KUNIT_EXPECT_EQ(test, srnic_dcqcn_knob_get(&p, k), k->min);
		/* out of range: -EINVAL and the value is unchanged */
		KUNIT_EXPECT_EQ(test, srnic_dcqcn_knob_set(&p, k, k->max + 1),
				-EINVAL);
		if (k->min)
			KUNIT_EXPECT_EQ(test,
					srnic_dcqcn_knob_set(&p, k, k->min - 1),
					-EINVAL);
		KUNIT_EXPECT_EQ(test, srnic_dcqcn_knob_get(&p, k), k->min);
	}
	KUNIT_EXPECT_EQ(test, np, 4U);
	KUNIT_EXPECT_EQ(test, rp, 18U);
}

/* alpha (1 - g)^n, by squaring, against repeated multiplication. */
static void dcqcn_alpha_decay(struct kunit *test)
{
	u64 a = ONE;
	int i;

	/* 2^20 (1019/1024)^1000 = 7849.9 (exact, computed off line) */
	expect_near(test, srnic_dcqcn_alpha_decay(ONE, 1019, 1000), 7850, 40);

	KUNIT_EXPECT_EQ(test, srnic_dcqcn_alpha_decay(ONE, 1019, 0), ONE);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_alpha_decay(ONE, 1019, 1),
			ONE / 1024 * 1019);
	/* against repeated multiplication, which rounds down 13 times */
	for (i = 0; i < 13; i++)
		a = a * 1019 / 1024;
	expect_near(test, srnic_dcqcn_alpha_decay(ONE, 1019, 13), a, 13);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_alpha_decay(ONE, 1019, U64_MAX), 0U);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_alpha_decay(ONE, 0, 1), 0U);
}

/* First CNP: alpha = initial_alpha_value, RT = max, RC = max (1 - alpha/2). */
static void dcqcn_first_cnp_cuts_from_max(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};
	u32 alpha = 1023U << 10;

	paper_params(&p);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_cnp(&rp, &p, T0),
			(int)SRNIC_RATE_CNP);
	KUNIT_EXPECT_TRUE(test, rp.active);
	KUNIT_EXPECT_EQ(test, rp.alpha, alpha);
	KUNIT_EXPECT_EQ(test, rp.rt, MBPS(1000));
	expect_near(test, rp.rc, paper_cut(MBPS(1000), alpha), 1);
	KUNIT_EXPECT_EQ(test, rp.t, 0U);
	KUNIT_EXPECT_EQ(test, rp.bc, 0U);
}

/* rate_to_set_on_first_cnp: the first CNP sets that rate, with no cut. */
static void dcqcn_first_cnp_rate(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};

	paper_params(&p);
	p.rate_to_set_on_first_cnp = 300;
	srnic_dcqcn_rp_cnp(&rp, &p, T0);
	KUNIT_EXPECT_EQ(test, rp.rc, MBPS(300));
	KUNIT_EXPECT_EQ(test, rp.rt, MBPS(300));
	/* above the maximum: clamped to it */
	memset(&rp, 0, sizeof(rp));
	p.rate_to_set_on_first_cnp = 5000;
	srnic_dcqcn_rp_cnp(&rp, &p, T0);
	KUNIT_EXPECT_EQ(test, rp.rc, MBPS(1000));
}

/*
 * CNPs later: alpha first decays (1 - g) per K without a CNP, then
 * alpha = (1 - g) alpha + g; RT = RC only if the rate rose in between;
 * RC = RC (1 - alpha/2).
 */
static void dcqcn_cnp_alpha_and_cut(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};
	u64 now = T0, rc, rt;
	u64 a;

	paper_params(&p);
	srnic_dcqcn_rp_cnp(&rp, &p, now);
	a = rp.alpha;
	rc = rp.rc;
	rt = rp.rt;

	/* 120 µs later: two alpha periods (55 µs) passed without a CNP */
	now += US(50);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_alpha(&rp, &p, now), (u32)a);
	now += US(70);
	a = a * 1020 / 1024;
	a = a * 1020 / 1024;
	expect_near(test, srnic_dcqcn_rp_alpha(&rp, &p, now), a, 2);
	/* no increase happened (advance not called): RT is kept */
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_cnp(&rp, &p, now),
			(int)SRNIC_RATE_CNP);
	a = a * 1020 / 1024 + (4 << 10);
	expect_near(test, rp.alpha, a, 2);
	KUNIT_EXPECT_EQ(test, rp.rt, rt);
	expect_near(test, rp.rc, paper_cut(rc, rp.alpha), 1);
	rc = rp.rc;

	/* a timer increase, then a CNP: RT = RC before the cut */
	now += US(55);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 0, now),
			(int)SRNIC_RATE_FAST_RECOVERY);
	KUNIT_EXPECT_EQ(test, rp.rc, DIV_ROUND_UP_ULL(rt + rc, 2));
	rc = rp.rc;
	now += US(1);
	srnic_dcqcn_rp_cnp(&rp, &p, now);
	KUNIT_EXPECT_EQ(test, rp.rt, rc);
	expect_near(test, rp.rc, paper_cut(rc, rp.alpha), 1);
}

/* A CNP within rate_reduce_monitor_period only updates alpha. */
static void dcqcn_monitor_period(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};
	u64 rc;
	u32 a;

	paper_params(&p);
	p.rate_reduce_monitor_period = 50;
	srnic_dcqcn_rp_cnp(&rp, &p, T0);
	rc = rp.rc;
	a = rp.alpha;
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_cnp(&rp, &p, T0 + US(10)), -1);
	KUNIT_EXPECT_EQ(test, rp.rc, rc);
	KUNIT_EXPECT_EQ(test, rp.alpha, (u32)((u64)a * 1020 / 1024 + (4 << 10)));
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_cnp(&rp, &p, T0 + US(50)),
			(int)SRNIC_RATE_CNP);
	KUNIT_EXPECT_LT(test, rp.rc, rc);
}

/* rpg_min_dec_fac bounds a single cut; rpg_gd scales it. */
static void dcqcn_max_decrease(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};

	paper_params(&p);
	p.rpg_gd = 10;			/* cut = alpha, ~100 % */
	p.rpg_min_dec_fac = 50;
	srnic_dcqcn_rp_cnp(&rp, &p, T0);
	KUNIT_EXPECT_EQ(test, rp.rc, MBPS(1000) / 2);

	memset(&rp, 0, sizeof(rp));
	p.rpg_min_dec_fac = 80;		/* at most 20 % per CNP */
	srnic_dcqcn_rp_cnp(&rp, &p, T0);
	KUNIT_EXPECT_EQ(test, rp.rc, MBPS(800));
	srnic_dcqcn_rp_cnp(&rp, &p, T0 + US(100));
	KUNIT_EXPECT_EQ(test, rp.rc, MBPS(640));

	memset(&rp, 0, sizeof(rp));
	p.rpg_gd = 12;			/* cut = alpha / 4 */
	p.rpg_min_dec_fac = 1;
	srnic_dcqcn_rp_cnp(&rp, &p, T0);
	expect_near(test, rp.rc,
		    MBPS(1000) - ((MBPS(1000) * (1023U << 10)) >> 22), 1);
}

/* RC never goes below rpg_min_rate, however many CNPs. */
static void dcqcn_min_rate_floor(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};
	u64 now = T0;
	int i;

	paper_params(&p);
	p.rpg_min_rate = 20;
	for (i = 0; i < 200; i++) {
		srnic_dcqcn_rp_cnp(&rp, &p, now);
		KUNIT_EXPECT_GE(test, rp.rc, MBPS(20));
		now += US(10);
	}
	KUNIT_EXPECT_EQ(test, rp.rc, MBPS(20));
	/* a minimum above the maximum is capped at the maximum */
	p.rpg_min_rate = 5000;
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_min_rate(&p), MBPS(1000));
}

/*
 * Timer-driven increases: F expiries of fast recovery, then additive
 * increase (BC stays 0, so never hyper).
 */
static void dcqcn_timer_stages(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};
	u64 now = T0, rc, rt;
	int i;

	paper_params(&p);
	p.rpg_max_rate = 100000;	/* far away: no reset in this test */
	now = start_limited(&rp, &p, now);
	rc = rp.rc;
	rt = rp.rt;
	KUNIT_EXPECT_EQ(test, rt, MBPS(500));
	KUNIT_EXPECT_LT(test, rc, MBPS(500));
	/* less than a period: nothing */
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 0, now + US(54)),
			-1);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_next_ns(&rp, &p, now + US(54)),
			US(1));
	for (i = 1; i <= 5; i++) {
		now += US(55);
		KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 0, now),
				(int)SRNIC_RATE_FAST_RECOVERY);
		rc = DIV_ROUND_UP_ULL(rt + rc, 2);
		KUNIT_EXPECT_EQ(test, rp.rc, rc);
		KUNIT_EXPECT_EQ(test, rp.rt, rt);
		KUNIT_EXPECT_EQ(test, rp.t, (u32)i);
	}
	for (i = 0; i < 3; i++) {
		now += US(55);
		KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 0, now),
				(int)SRNIC_RATE_ADDITIVE);
		rt += MBPS(40);
		rc = DIV_ROUND_UP_ULL(rt + rc, 2);
		KUNIT_EXPECT_EQ(test, rp.rt, rt);
		KUNIT_EXPECT_EQ(test, rp.rc, rc);
	}
	/* three periods at once (the QP sent nothing): one step only */
	now += US(165);
	srnic_dcqcn_rp_advance(&rp, &p, 0, now);
	rt += MBPS(40);
	rc = DIV_ROUND_UP_ULL(rt + rc, 2);
	KUNIT_EXPECT_EQ(test, rp.rt, rt);
	KUNIT_EXPECT_EQ(test, rp.rc, rc);
	KUNIT_EXPECT_EQ(test, rp.t, 9U);
	/* and the next period is due a full period later */
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_next_ns(&rp, &p, now), US(55));
	/* a CNP restarts the stages */
	srnic_dcqcn_rp_cnp(&rp, &p, now);
	KUNIT_EXPECT_EQ(test, rp.t, 0U);
	now += US(55);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 0, now),
			(int)SRNIC_RATE_FAST_RECOVERY);
}

/* Byte-driven increases, and hyper increase once both counters pass F. */
static void dcqcn_byte_counter_and_hyper(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};
	u64 now = T0, rc, rt;
	int i;

	paper_params(&p);
	p.rpg_max_rate = 100000;
	p.rpg_byte_reset = 100000;
	p.rpg_time_reset = 1000000;	/* the timer stays out of the way */
	now = start_limited(&rp, &p, now);
	rc = rp.rc;
	rt = rp.rt;
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 99999, now), -1);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 1, now),
			(int)SRNIC_RATE_FAST_RECOVERY);
	rc = DIV_ROUND_UP_ULL(rt + rc, 2);
	KUNIT_EXPECT_EQ(test, rp.rc, rc);
	KUNIT_EXPECT_EQ(test, rp.bc, 1U);
	/* 4 more in one go: still fast recovery (BC <= F) */
	srnic_dcqcn_rp_advance(&rp, &p, 400000, now);
	for (i = 0; i < 4; i++)
		rc = DIV_ROUND_UP_ULL(rt + rc, 2);
	KUNIT_EXPECT_EQ(test, rp.rc, rc);
	KUNIT_EXPECT_EQ(test, rp.stage, (u8)SRNIC_RATE_FAST_RECOVERY);
	/* BC = 6 > F, T = 0: additive */
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 100000, now),
			(int)SRNIC_RATE_ADDITIVE);
	rt += MBPS(40);
	rc = DIV_ROUND_UP_ULL(rt + rc, 2);
	KUNIT_EXPECT_EQ(test, rp.rc, rc);

	/* now let T pass F too: T = 6 with BC = 6 is hyper, i = 1 */
	p.rpg_time_reset = 10;
	rp.timer_ns = now;
	rp.t = 5;
	now += US(10);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 0, now),
			(int)SRNIC_RATE_HYPER);
	rt += MBPS(200);
	rc = DIV_ROUND_UP_ULL(rt + rc, 2);
	KUNIT_EXPECT_EQ(test, rp.rt, rt);
	KUNIT_EXPECT_EQ(test, rp.rc, rc);
	/* BC = 7, T = 6: i = min - F = 1 again; then T = 7: i = 2 */
	srnic_dcqcn_rp_advance(&rp, &p, 100000, now);
	rt += MBPS(200);
	rc = DIV_ROUND_UP_ULL(rt + rc, 2);
	KUNIT_EXPECT_EQ(test, rp.rt, rt);
	now += US(10);
	srnic_dcqcn_rp_advance(&rp, &p, 0, now);
	rt += 2 * MBPS(200);
	rc = DIV_ROUND_UP_ULL(rt + rc, 2);
	KUNIT_EXPECT_EQ(test, rp.rt, rt);
	KUNIT_EXPECT_EQ(test, rp.rc, rc);
}

/* Back at the maximum: the limit ends (reason RESET), the QP is unpaced. */
static void dcqcn_recovers_to_full_rate(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};
	u64 now = T0;
	int i, why = -1;

	paper_params(&p);
	srnic_dcqcn_rp_cnp(&rp, &p, now);
	for (i = 0; i < 200 && rp.active; i++) {
		now += US(55);
		why = srnic_dcqcn_rp_advance(&rp, &p, 0, now);
		KUNIT_EXPECT_LE(test, rp.rc, MBPS(1000));
		KUNIT_EXPECT_LE(test, rp.rt, MBPS(1000));
	}
	KUNIT_EXPECT_FALSE(test, rp.active);
	KUNIT_EXPECT_EQ(test, why, (int)SRNIC_RATE_RESET);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_next_ns(&rp, &p, now), U64_MAX);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 4096, now), -1);

	/* a long idle time ends the limit without replaying every period */
	srnic_dcqcn_rp_cnp(&rp, &p, now);
	now += US(55) * (SRNIC_DCQCN_MAX_CATCHUP + 1);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 0, now),
			(int)SRNIC_RATE_RESET);
	KUNIT_EXPECT_FALSE(test, rp.active);

	/* roce_rp/enable off ends it too */
	srnic_dcqcn_rp_cnp(&rp, &p, now);
	p.rp_enable = 0;
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_rp_advance(&rp, &p, 0, now),
			(int)SRNIC_RATE_RESET);
	KUNIT_EXPECT_FALSE(test, rp.active);
}

/* clamp_tgt_rate / clamp_tgt_rate_after_time_inc decide RT at a cut. */
static void dcqcn_clamp_target(struct kunit *test)
{
	struct srnic_dcqcn_params p;
	struct srnic_dcqcn_rp rp = {};
	u64 now = T0, rc;

	paper_params(&p);
	now = start_limited(&rp, &p, now);
	now += US(55);
	srnic_dcqcn_rp_advance(&rp, &p, 0, now);	/* a timer increase */
	KUNIT_EXPECT_LT(test, rp.rc, MBPS(500));
	p.clamp_tgt_rate_after_time_inc = 0;
	srnic_dcqcn_rp_cnp(&rp, &p, now);
	KUNIT_EXPECT_EQ(test, rp.rt, MBPS(500));	/* kept */

	p.clamp_tgt_rate = 1;				/* always */
	now += US(10);
	rc = rp.rc;
	srnic_dcqcn_rp_cnp(&rp, &p, now);
	KUNIT_EXPECT_EQ(test, rp.rt, rc);
}

/* The NP sends at most one CNP per QP per min_time_between_cnps. */
static void dcqcn_np_rate_limit(struct kunit *test)
{
	u64 last = 0, now = T0;
	int i, sent = 0;

	KUNIT_EXPECT_TRUE(test, srnic_dcqcn_np_allow(&last, 50, now));
	KUNIT_EXPECT_EQ(test, last, now);
	KUNIT_EXPECT_FALSE(test, srnic_dcqcn_np_allow(&last, 50, now + US(49)));
	KUNIT_EXPECT_TRUE(test, srnic_dcqcn_np_allow(&last, 50, now + US(50)));
	/* CE on every packet, one packet per µs for 1 ms: 20 CNPs */
	last = 0;
	for (i = 0; i < 1000; i++)
		sent += srnic_dcqcn_np_allow(&last, 50, now + US(i));
	KUNIT_EXPECT_EQ(test, sent, 20);
	/* 0: every CE-marked packet gets a CNP */
	for (i = 0, sent = 0; i < 10; i++)
		sent += srnic_dcqcn_np_allow(&last, 0, now + US(2000));
	KUNIT_EXPECT_EQ(test, sent, 10);
}

static void dcqcn_ect_marking(struct kunit *test)
{
	struct srnic_dcqcn_params p;

	srnic_dcqcn_params_default(&p);
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_data_tclass(&p, 0), INET_ECN_ECT_0);
	/* DSCP 26 kept */
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_data_tclass(&p, 26 << 2),
			(26 << 2) | INET_ECN_ECT_0);
	/* the AH's own ECN bits win */
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_data_tclass(&p, INET_ECN_ECT_1),
			INET_ECN_ECT_1);
	p.ecn_mark = 0;
	KUNIT_EXPECT_EQ(test, srnic_dcqcn_data_tclass(&p, 26 << 2), 26 << 2);
}

/* The CNP on the wire (Annex A17.9.3; scapy: BTH(opcode=0x81, becn=1)). */
static void dcqcn_cnp_wire_format(struct kunit *test)
{
	static const u8 want[SRNIC_CNP_LEN] = {
		0x81, 0x00, 0xff, 0xff,		/* opcode, flags, P_Key */
		0x40, 0x12, 0x34, 0x56,		/* BECN, DestQP 0x123456 */
		0x00, 0x00, 0x00, 0x00,		/* AckReq 0, PSN 0 */
	};
	struct srnic_cnp cnp;

	memset(&cnp, 0xee, sizeof(cnp));
	srnic_cnp_build(&cnp, 0x123456);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(&cnp, want, sizeof(want)), 0,
			    "built %*ph", (int)sizeof(cnp), &cnp);
	/* the receive side parses it as the 28-byte CNP */
	KUNIT_EXPECT_TRUE(test, srnic_opcode_valid(SRNIC_OPCODE_CNP));
	KUNIT_EXPECT_EQ(test, srnic_opcode_hdr_len(SRNIC_OPCODE_CNP),
			(unsigned int)SRNIC_CNP_LEN);
}

/* ---------------------------------------------- glue: CNP -> pacer rate */

struct dcqcn_fixture {
	struct srnic_dev	*sdev;
	struct srnic_qp		*qp;
};

static void dcqcn_fixture_init(struct kunit *test, struct dcqcn_fixture *f,
			       enum ib_qp_type type)
{
	f->sdev = kunit_kzalloc(test, sizeof(*f->sdev), GFP_KERNEL);
	f->qp = kunit_kzalloc(test, sizeof(*f->qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->sdev);
	KUNIT_ASSERT_NOT_NULL(test, f->qp);
	xa_init_flags(&f->sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	srnic_cnp_dev_init(f->sdev);
	f->qp->sdev = f->sdev;
	f->qp->ibqp.qp_type = type;
	f->qp->ibqp.qp_num = 20;
	refcount_set(&f->qp->ref, 1);
	init_completion(&f->qp->released);
	spin_lock_init(&f->qp->req_lock);
	srnic_sched_qp_init(f->qp);
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&f->sdev->qp_xa, 20, f->qp,
					      GFP_KERNEL)), 0);
}

static void dcqcn_fixture_fini(struct dcqcn_fixture *f)
{
	srnic_sched_qp_fini(f->qp);
	xa_erase(&f->sdev->qp_xa, 20);
	xa_destroy(&f->sdev->qp_xa);
}

static u64 cnt(struct dcqcn_fixture *f, enum srnic_counter c)
{
	return atomic64_read(&f->sdev->counters.v[c]);
}

static void dcqcn_cnp_paces_the_qp(struct kunit *test)
{
	struct srnic_pkt pkt = { .opcode = SRNIC_OPCODE_CNP, .qpn = 20 };
	struct dcqcn_fixture f;
	bool ok;

	dcqcn_fixture_init(test, &f, IB_QPT_RC);
	f.sdev->dcqcn.rpg_max_rate = 1000;
	f.qp->attr.path_mtu = IB_MTU_1024;
	KUNIT_EXPECT_EQ(test, srnic_sched_rate(f.qp), 0ULL);

	srnic_cnp_rp_rcv(f.sdev, &pkt);
	KUNIT_EXPECT_EQ(test, cnt(&f, SRNIC_CNT_RP_CNP_HANDLED), 1ULL);
	KUNIT_EXPECT_TRUE(test, f.qp->dcqcn.active);
	KUNIT_EXPECT_EQ(test, srnic_sched_rate(f.qp), f.qp->dcqcn.rc);
	KUNIT_EXPECT_LT(test, srnic_sched_rate(f.qp), MBPS(1000));
	/* a burst of 4 packets of the path MTU (BTH included) */
	KUNIT_EXPECT_EQ(test, f.qp->pace.burst, 4ULL * (1024 + 12));

	/* the pacer lets the burst out, then holds the QP back */
	spin_lock_bh(&f.qp->req_lock);
	ok = srnic_sched_pace(f.qp, 1024 + 12);
	spin_unlock_bh(&f.qp->req_lock);
	KUNIT_EXPECT_TRUE(test, ok);

	/* CNPs for other QPs, QP types, or with the RP off are ignored */
	pkt.qpn = 21;
	srnic_cnp_rp_rcv(f.sdev, &pkt);
	KUNIT_EXPECT_EQ(test, cnt(&f, SRNIC_CNT_RP_CNP_IGNORED), 1ULL);
	pkt.qpn = 20;
	f.sdev->dcqcn.rp_enable = 0;
	srnic_cnp_rp_rcv(f.sdev, &pkt);
	KUNIT_EXPECT_EQ(test, cnt(&f, SRNIC_CNT_RP_CNP_IGNORED), 2ULL);
	KUNIT_EXPECT_EQ(test, cnt(&f, SRNIC_CNT_RP_CNP_HANDLED), 1ULL);

	/* with the RP off, the next packet ends the limit: unpaced again */
	spin_lock_bh(&f.qp->req_lock);
	ok = srnic_sched_pace(f.qp, 64);
	spin_unlock_bh(&f.qp->req_lock);
	KUNIT_EXPECT_TRUE(test, ok);
	KUNIT_EXPECT_FALSE(test, f.qp->dcqcn.active);
	KUNIT_EXPECT_EQ(test, srnic_sched_rate(f.qp), 0ULL);
	dcqcn_fixture_fini(&f);
}

/* The QP's own rate limit stays in force below DCQCN's rate. */
static void dcqcn_user_rate_limit_kept(struct kunit *test)
{
	struct srnic_pkt pkt = { .opcode = SRNIC_OPCODE_CNP, .qpn = 20 };
	struct dcqcn_fixture f;

	dcqcn_fixture_init(test, &f, IB_QPT_RC);
	f.sdev->dcqcn.rpg_max_rate = 1000;
	f.qp->attr.rate_limit = 8000;			/* kbit/s: 1 MB/s */
	srnic_cnp_rp_rcv(f.sdev, &pkt);
	KUNIT_EXPECT_EQ(test, srnic_sched_rate(f.qp), 1000000ULL);
	dcqcn_fixture_fini(&f);
}

static void dcqcn_cnp_to_ud_ignored(struct kunit *test)
{
	struct srnic_pkt pkt = { .opcode = SRNIC_OPCODE_CNP, .qpn = 20 };
	struct dcqcn_fixture f;

	dcqcn_fixture_init(test, &f, IB_QPT_UD);
	srnic_cnp_rp_rcv(f.sdev, &pkt);
	KUNIT_EXPECT_EQ(test, cnt(&f, SRNIC_CNT_RP_CNP_IGNORED), 1ULL);
	KUNIT_EXPECT_FALSE(test, f.qp->dcqcn.active);
	KUNIT_EXPECT_EQ(test, srnic_sched_rate(f.qp), 0ULL);
	dcqcn_fixture_fini(&f);
}

static struct kunit_case srnic_dcqcn_cases[] = {
	KUNIT_CASE(dcqcn_defaults),
	KUNIT_CASE(dcqcn_knob_ranges),
	KUNIT_CASE(dcqcn_alpha_decay),
	KUNIT_CASE(dcqcn_first_cnp_cuts_from_max),
	KUNIT_CASE(dcqcn_first_cnp_rate),
	KUNIT_CASE(dcqcn_cnp_alpha_and_cut),
	KUNIT_CASE(dcqcn_monitor_period),
	KUNIT_CASE(dcqcn_max_decrease),
	KUNIT_CASE(dcqcn_min_rate_floor),
	KUNIT_CASE(dcqcn_timer_stages),
	KUNIT_CASE(dcqcn_byte_counter_and_hyper),
	KUNIT_CASE(dcqcn_recovers_to_full_rate),
	KUNIT_CASE(dcqcn_clamp_target),
	KUNIT_CASE(dcqcn_np_rate_limit),
	KUNIT_CASE(dcqcn_ect_marking),
	KUNIT_CASE(dcqcn_cnp_wire_format),
	KUNIT_CASE(dcqcn_cnp_paces_the_qp),
	KUNIT_CASE(dcqcn_user_rate_limit_kept),
	KUNIT_CASE(dcqcn_cnp_to_ud_ignored),
	{}
};

static struct kunit_suite srnic_dcqcn_suite = {
	.name = "srnic_dcqcn",
	.test_cases = srnic_dcqcn_cases,
};

kunit_test_suite(srnic_dcqcn_suite);
