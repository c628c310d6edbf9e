// SPDX-License-Identifier: GPL-2.0
/*
 * srnic DCQCN: the reaction point as pure logic, the NP's CNP rate limit
 * and the knob table (see srnic_dcqcn.h). Nothing here takes a lock, reads
 * the clock or touches a QP: the glue in srnic_cnp.c and srnic_sched.c does.
 *
 * Reaction point (Zhu et al. 2015, with mlx5's knobs):
 *   on a CNP:	alpha decays for each full dce_tcp_rtt period without a
 *		CNP, then alpha = (1 - g) alpha + g, with 1 - g = G/1024
 *		(dce_tcp_g); the first CNP sets alpha = initial_alpha_value
 *		instead. Unless the last cut is less than
 *		rate_reduce_monitor_period ago:
 *		RT = RC (see srnic_dcqcn_clamp_rt()),
 *		RC = max(RC (1 - alpha / 2^(rpg_gd - 10)),
 *			 RC rpg_min_dec_fac / 100, rpg_min_rate),
 *		and T, BC and the byte count restart.
 *   each rpg_time_reset µs: T++, then an increase (at most one per
 *		evaluation: periods in which the QP sent nothing do not count);
 *   each rpg_byte_reset bytes sent: BC++, then an increase.
 *   increase, F = rpg_threshold:
 *		max(T, BC) <= F		fast recovery: RC = (RT + RC) / 2
 *		min(T, BC) > F		hyper: RT += (min(T, BC) - F) rpg_hai_rate,
 *					RC = (RT + RC) / 2
 *		otherwise		additive: RT += rpg_ai_rate,
 *					RC = (RT + RC) / 2
 *		RT and RC never exceed the maximum rate; once both reach it the
 *		QP is unpaced again (reason SRNIC_RATE_RESET).
 */
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/stddef.h>
#include <net/inet_ecn.h>
#include <uapi/rdma/srnic.h>

#include "srnic_dcqcn.h"

#define SRNIC_DCQCN_KNOB(_set, _field, _name, _min, _max, _def) {	\
	.name = _name, .set = _set,					\
	.offset = offsetof(struct srnic_dcqcn_params, _field),		\
	.min = _min, .max = _max, .def = _def }
#define NP(f, n, lo, hi, d) SRNIC_DCQCN_KNOB(SRNIC_DCQCN_NP, f, n, lo, hi, d)
#define RP(f, n, lo, hi, d) SRNIC_DCQCN_KNOB(SRNIC_DCQCN_RP, f, n, lo, hi, d)

/*
 * Every knob: file name, range and default. Defaults are mlx5's (ANCHORS
 * §5.4) except three time constants, the byte counter, which mlx5 sizes for the µs round
 * trips of a hardware fabric; srnic's round trips in VMs are 100-1000
 * times longer, and clamp_tgt_rate (README.md "DCQCN"):
 *   clamp_tgt_rate		0 -> 1: RT = RC on every cut, as in the paper;
 *				with 0, CNPs that come faster than the increase
 *				timer keep RT at the rate before them (the line
 *				rate after the first CNP), and fast recovery
 *				jumps back halfway to it
 *   rpg_ai_rate		5 -> 1 Mb/s, and
 *   rpg_hai_rate		50 -> 5 Mb/s: mlx5's steps are 0.01 % and 0.1 %
 *				of a 50 Gb/s port, srnic's bottlenecks in VMs
 *				are tens of Mb/s
 *   rpg_threshold		1 -> 5 (F of the paper): with 1, hyper increase
 *				starts 2 timer periods after a cut
 *   dce_tcp_rtt			1 µs -> 50000 µs (alpha timer): congestion
 *				episodes come seconds apart in a VM; at 1000
 *				µs alpha decayed to nothing between them, so an
 *				episode's first cuts were tiny while additive
 *				increase ran past the bottleneck, and the queue
 *				overflowed (steady-state drops in 9 of 19
 *				runs, 0 of 19 at 50000 µs)
 *   rate_reduce_monitor_period	4 µs -> 4000 µs (about one cut per
 *				round trip of a loaded VM: at 1000 µs the
 *				CNPs that keep coming while a queue drains,
 *				tens of ms, cut RC down to rpg_min_rate in
 *				one episode; at 10000 µs the queue overflowed
 *				more often)
 *   rpg_time_reset		300 µs -> 10000 µs (rate increase timer):
 *				at 1500 µs the additive increase (1 Mb/s a
 *				step) added a third of a 40 Mb/s bottleneck
 *				per queue-inflated round trip
 *   rpg_byte_reset		32767 -> 1000000 bytes: at tens of Mb/s 32 KB
 *				go by every ~15 ms, so the byte counter
 *				passed F soon after each cut and hyper
 *				increase overran the queue; as in the paper
 *				(10 MB vs 55 µs at 40 Gb/s), the byte counter
 *				now ticks far less often than the timer
 * Ranges are what the arithmetic below accepts.
 */
/* sized by the initializers: the extern in srnic_dcqcn.h checks the count */
const struct srnic_dcqcn_knob srnic_dcqcn_knobs[] = {
	NP(np_enable, SRNIC_NP_ENABLE, 0, 1, 1),
	NP(min_time_between_cnps, SRNIC_NP_MIN_TIME_BETWEEN_CNPS, 0, 1000000, 4),
	NP(cnp_dscp, SRNIC_NP_CNP_DSCP, 0, 63, 48),
	NP(cnp_802p_prio, SRNIC_NP_CNP_802P_PRIO, 0, 7, 6),
	RP(rp_enable, SRNIC_RP_ENABLE, 0, 1, 1),
	RP(clamp_tgt_rate, SRNIC_RP_CLAMP_TGT_RATE, 0, 1, 1),
	RP(clamp_tgt_rate_after_time_inc,
	   SRNIC_RP_CLAMP_TGT_RATE_AFTER_TIME_INC, 0, 1, 1),
	RP(dce_tcp_g, SRNIC_RP_DCE_TCP_G, 0, 1023, 1019),
	RP(dce_tcp_rtt, SRNIC_RP_DCE_TCP_RTT, 1, 1000000, 50000),
	RP(initial_alpha_value, SRNIC_RP_INITIAL_ALPHA_VALUE, 0, 1023, 1023),
	RP(rate_reduce_monitor_period, SRNIC_RP_RATE_REDUCE_MONITOR_PERIOD,
	   0, 1000000, 4000),
	RP(rate_to_set_on_first_cnp, SRNIC_RP_RATE_TO_SET_ON_FIRST_CNP,
	   0, 400000, 0),
	RP(rpg_ai_rate, SRNIC_RP_RPG_AI_RATE, 1, 400000, 1),
	RP(rpg_byte_reset, SRNIC_RP_RPG_BYTE_RESET, 0, 1U << 30, 1000000),
	RP(rpg_gd, SRNIC_RP_RPG_GD, 0, 15, 11),
	RP(rpg_hai_rate, SRNIC_RP_RPG_HAI_RATE, 1, 400000, 5),
	RP(rpg_max_rate, SRNIC_RP_RPG_MAX_RATE, 0, 400000, 0),
	RP(rpg_min_dec_fac, SRNIC_RP_RPG_MIN_DEC_FAC, 1, 100, 50),
	RP(rpg_min_rate, SRNIC_RP_RPG_MIN_RATE, 1, 400000, 1),
	RP(rpg_threshold, SRNIC_RP_RPG_THRESHOLD, 1, 31, 5),
	RP(rpg_time_reset, SRNIC_RP_RPG_TIME_RESET, 1, 10000000, 10000),
	RP(ecn_mark, SRNIC_RP_ECN_MARK, 0, 1, 1),
};

#undef NP
#undef RP

/**
 * srnic_dcqcn_params_default() - fill in every knob's default
 * @p: the parameters
 */
void srnic_dcqcn_params_default(struct srnic_dcqcn_params *p)
{
	unsigned int i;

	for (i = 0; i < SRNIC_DCQCN_NKNOBS; i++)
		*(u32 *)((u8 *)p + srnic_dcqcn_knobs[i].offset) =
			srnic_dcqcn_knobs[i].def;
}

/**
 * srnic_dcqcn_knob_set() - change one knob
 * @p: the parameters
 * @k: the knob
 * @val: the new value
 *
 * Return: 0, or -EINVAL (nothing changed) when @val is out of range.
 */
int srnic_dcqcn_knob_set(struct srnic_dcqcn_params *p,
			 const struct srnic_dcqcn_knob *k, u32 val)
{
	if (val < k->min || val > k->max)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)((u8 *)p + k->offset), val);
	return 0;
}

/* RC and RT never go above this (bytes/s). */
u64 srnic_dcqcn_max_rate(const struct srnic_dcqcn_params *p)
{
	u32 mbps = READ_ONCE(p->rpg_max_rate) ?: SRNIC_DCQCN_LINE_RATE_MBPS;

	return mbps * SRNIC_DCQCN_MBPS;
}

/* ... nor below this (bytes/s); a minimum above the maximum is capped. */
u64 srnic_dcqcn_min_rate(const struct srnic_dcqcn_params *p)
{
	return min_t(u64, READ_ONCE(p->rpg_min_rate) * SRNIC_DCQCN_MBPS,
		     srnic_dcqcn_max_rate(p));
}

/**
 * srnic_dcqcn_alpha_decay() - alpha after @periods alpha timer expiries
 * @alpha: alpha now (SRNIC_DCQCN_ALPHA_ONE = 1.0)
 * @g_knob: dce_tcp_g: each expiry multiplies alpha by @g_knob / 1024
 * @periods: number of expiries
 *
 * Return: alpha * (g_knob / 1024)^periods, by squaring (any @periods).
 */
u32 srnic_dcqcn_alpha_decay(u32 alpha, u32 g_knob, u64 periods)
{
	u64 f = (u64)g_knob << (SRNIC_DCQCN_ALPHA_SHIFT - SRNIC_DCQCN_KNOB_SHIFT);
	u64 a = alpha;

	while (periods && a) {
		if (periods & 1)
			a = (a * f) >> SRNIC_DCQCN_ALPHA_SHIFT;
		f = (f * f) >> SRNIC_DCQCN_ALPHA_SHIFT;
		periods >>= 1;
		if (!f)
			return 0;
	}
	return a;
}

/**
 * srnic_dcqcn_rp_alpha() - the QP's alpha at @now_ns, decay included
 * @rp: the reaction point state
 * @p: the parameters
 * @now_ns: the time
 *
 * Return: alpha (SRNIC_DCQCN_ALPHA_ONE = 1.0), 0 when DCQCN is not active.
 */
u32 srnic_dcqcn_rp_alpha(const struct srnic_dcqcn_rp *rp,
			 const struct srnic_dcqcn_params *p, u64 now_ns)
{
	u64 period = (u64)max(READ_ONCE(p->dce_tcp_rtt), 1U) * NSEC_PER_USEC;

	if (!rp->active)
		return 0;
	if (now_ns <= rp->alpha_ns)
		return rp->alpha;
	return srnic_dcqcn_alpha_decay(rp->alpha, READ_ONCE(p->dce_tcp_g),
				       div64_u64(now_ns - rp->alpha_ns, period));
}

/* Counters restart at a cut: T, BC, the byte count and the increase timer. */
static void srnic_dcqcn_restart(struct srnic_dcqcn_rp *rp, u64 now_ns)
{
	rp->t = 0;
	rp->bc = 0;
	rp->bytes = 0;
	rp->timer_ns = now_ns;
	rp->cut_ns = now_ns;
	rp->stage = SRNIC_RATE_CNP;
}

/*
 * RT = RC on a cut when clamp_tgt_rate is set, or when the rate was raised
 * since the last cut (by the byte counter, or by the timer if
 * clamp_tgt_rate_after_time_inc). Otherwise, as for CNPs in a row, RT keeps
 * the rate before the first of them, which recovery then heads back to.
 */
static void srnic_dcqcn_clamp_rt(struct srnic_dcqcn_rp *rp,
				 const struct srnic_dcqcn_params *p)
{
	if (READ_ONCE(p->clamp_tgt_rate) || rp->bc ||
	    (READ_ONCE(p->clamp_tgt_rate_after_time_inc) && rp->t))
		rp->rt = rp->rc;
}

static void srnic_dcqcn_cut(struct srnic_dcqcn_rp *rp,
			    const struct srnic_dcqcn_params *p, u64 now_ns)
{
	u32 gd = READ_ONCE(p->rpg_gd);
	u64 rc = rp->rc, dec, floor;

	/* alpha (1.0 = 2^20) / 2^(gd - 10): shift by gd + 10 */
	dec = mul_u64_u32_shr(rc, rp->alpha, gd + SRNIC_DCQCN_KNOB_SHIFT);
	rc -= min(dec, rc);
	floor = div_u64(rp->rc * READ_ONCE(p->rpg_min_dec_fac), 100);
	rc = max(rc, floor);
	rp->rc = max(rc, srnic_dcqcn_min_rate(p));
	srnic_dcqcn_restart(rp, now_ns);
}

/**
 * srnic_dcqcn_rp_cnp() - the reaction point got a CNP
 * @rp: the QP's state
 * @p: the parameters
 * @now_ns: the time (ns, any monotonic origin)
 *
 * Return: SRNIC_RATE_CNP when the rate was cut (or set by the first CNP),
 * -1 when the CNP only updated alpha (within rate_reduce_monitor_period of
 * the last cut).
 */
int srnic_dcqcn_rp_cnp(struct srnic_dcqcn_rp *rp,
		       const struct srnic_dcqcn_params *p, u64 now_ns)
{
	u32 g = READ_ONCE(p->dce_tcp_g);
	u64 monitor;

	if (!rp->active) {
		u64 first = READ_ONCE(p->rate_to_set_on_first_cnp) *
			    SRNIC_DCQCN_MBPS;

		rp->active = true;
		rp->alpha = min_t(u32, READ_ONCE(p->initial_alpha_value) <<
				  (SRNIC_DCQCN_ALPHA_SHIFT -
				   SRNIC_DCQCN_KNOB_SHIFT),
				  SRNIC_DCQCN_ALPHA_ONE);
		rp->alpha_ns = now_ns;
		rp->rc = srnic_dcqcn_max_rate(p);
		rp->rt = rp->rc;
		if (first) {
			/* mlx5: the first CNP sets this rate, no cut */
			rp->rc = clamp(first, srnic_dcqcn_min_rate(p), rp->rc);
			rp->rt = rp->rc;
			srnic_dcqcn_restart(rp, now_ns);
			return SRNIC_RATE_CNP;
		}
		srnic_dcqcn_cut(rp, p, now_ns);
		return SRNIC_RATE_CNP;
	}

	rp->alpha = srnic_dcqcn_rp_alpha(rp, p, now_ns);
	rp->alpha = (((u64)rp->alpha * g) >> SRNIC_DCQCN_KNOB_SHIFT) +
		    ((u64)(1024 - g) << (SRNIC_DCQCN_ALPHA_SHIFT -
					 SRNIC_DCQCN_KNOB_SHIFT));
	rp->alpha_ns = now_ns;

	monitor = (u64)READ_ONCE(p->rate_reduce_monitor_period) *
		  NSEC_PER_USEC;
	if (monitor && now_ns - rp->cut_ns < monitor)
		return -1;
	srnic_dcqcn_clamp_rt(rp, p);
	srnic_dcqcn_cut(rp, p, now_ns);
	return SRNIC_RATE_CNP;
}

/* One rate increase event, after T or BC was counted. */
static int srnic_dcqcn_increase(struct srnic_dcqcn_rp *rp,
				const struct srnic_dcqcn_params *p)
{
	u32 f = READ_ONCE(p->rpg_threshold);
	u64 max = srnic_dcqcn_max_rate(p);

	if (max(rp->t, rp->bc) <= f) {
		rp->stage = SRNIC_RATE_FAST_RECOVERY;
	} else if (min(rp->t, rp->bc) > f) {
		rp->stage = SRNIC_RATE_HYPER;
		rp->rt += (u64)(min(rp->t, rp->bc) - f) *
			  READ_ONCE(p->rpg_hai_rate) * SRNIC_DCQCN_MBPS;
	} else {
		rp->stage = SRNIC_RATE_ADDITIVE;
		rp->rt += READ_ONCE(p->rpg_ai_rate) * SRNIC_DCQCN_MBPS;
	}
	rp->rt = min(rp->rt, max);
	/* rounded up, so that RC reaches RT */
	rp->rc = min(DIV_ROUND_UP_ULL(rp->rt + rp->rc, 2), max);
	if (rp->rc >= max && rp->rt >= max) {
		rp->active = false;
		return SRNIC_RATE_RESET;
	}
	return rp->stage;
}

/**
 * srnic_dcqcn_rp_advance() - let time pass and count sent bytes
 * @rp: the QP's state
 * @p: the parameters
 * @bytes: bytes just sent (0: only the time)
 * @now_ns: the time
 *
 * Runs the rate-increase timer (one expiry per call, however many periods
 * passed: a QP that sends nothing does not speed up), then the byte counter.
 * Turning roce_rp/enable off, or an idle time of more than
 * SRNIC_DCQCN_MAX_CATCHUP increase periods, ends the limit at once.
 *
 * Return: the reason of the last rate change (enum srnic_rate_reason), or
 * -1 when the rate did not change.
 */
int srnic_dcqcn_rp_advance(struct srnic_dcqcn_rp *rp,
			   const struct srnic_dcqcn_params *p, u64 bytes,
			   u64 now_ns)
{
	u64 period = (u64)max(READ_ONCE(p->rpg_time_reset), 1U) *
		     NSEC_PER_USEC;
	u32 byte_reset = READ_ONCE(p->rpg_byte_reset);
	int why = -1;
	u64 n;

	if (!rp->active)
		return -1;
	if (!READ_ONCE(p->rp_enable)) {
		rp->active = false;
		return SRNIC_RATE_RESET;
	}
	if (now_ns >= rp->timer_ns + period) {
		n = div64_u64(now_ns - rp->timer_ns, period);
		if (n > SRNIC_DCQCN_MAX_CATCHUP) {
			rp->active = false;
			return SRNIC_RATE_RESET;
		}
		/*
		 * One increase per evaluation: periods that passed while the
		 * QP sent nothing (waiting for ACKs or a retransmission) are
		 * not replayed, or a stalled flow would come back at a rate
		 * that hyper increase drove far past the bottleneck.
		 */
		rp->timer_ns += n * period;
		rp->t++;
		why = srnic_dcqcn_increase(rp, p);
	}
	if (!bytes || !byte_reset || !rp->active)
		return why;
	rp->bytes += bytes;
	if (rp->bytes >= (u64)byte_reset * SRNIC_DCQCN_MAX_CATCHUP) {
		rp->active = false;
		return SRNIC_RATE_RESET;
	}
	while (rp->bytes >= byte_reset && rp->active) {
		rp->bytes -= byte_reset;
		rp->bc++;
		why = srnic_dcqcn_increase(rp, p);
	}
	return why;
}

/**
 * srnic_dcqcn_rp_next_ns() - time until the next rate-increase timer expiry
 * @rp: the QP's state
 * @p: the parameters
 * @now_ns: the time
 *
 * A paced QP waiting for tokens sleeps at most this long, so that timer
 * increases take effect on time without any DCQCN timer.
 *
 * Return: nanoseconds (0: due now), or U64_MAX when DCQCN is not active.
 */
u64 srnic_dcqcn_rp_next_ns(const struct srnic_dcqcn_rp *rp,
			   const struct srnic_dcqcn_params *p, u64 now_ns)
{
	u64 due;

	if (!rp->active)
		return U64_MAX;
	due = rp->timer_ns +
	      (u64)max(READ_ONCE(p->rpg_time_reset), 1U) * NSEC_PER_USEC;
	return due > now_ns ? due - now_ns : 0;
}

/**
 * srnic_dcqcn_np_allow() - the NP's CNP rate limit
 * @last_ns: time of the QP's last CNP (0: none yet); updated when allowed
 * @min_us: min_time_between_cnps
 * @now_ns: the time
 *
 * Lock-free: of concurrent callers, one wins.
 *
 * Return: true when a CNP may be sent now.
 */
bool srnic_dcqcn_np_allow(u64 *last_ns, u32 min_us, u64 now_ns)
{
	u64 last = READ_ONCE(*last_ns);

	if (last && now_ns - last < (u64)min_us * NSEC_PER_USEC)
		return false;
	return cmpxchg64(last_ns, last, now_ns) == last;
}

/**
 * srnic_dcqcn_data_tclass() - the IP TOS / traffic class of a data packet
 * @p: the parameters
 * @tclass: the path's (AH's) traffic class
 *
 * Return: @tclass with ECN = ECT(0) when ecn_mark is on and the path sets
 * no ECN bits itself; the DSCP is kept.
 */
u8 srnic_dcqcn_data_tclass(const struct srnic_dcqcn_params *p, u8 tclass)
{
	if (READ_ONCE(p->ecn_mark) && !(tclass & INET_ECN_MASK))
		return tclass | INET_ECN_ECT_0;
	return tclass;
}
