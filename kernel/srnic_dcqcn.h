/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic DCQCN: congestion control for RoCEv2 (Zhu et al., SIGCOMM 2015),
 * with the knobs of mlx5's roce_np / roce_rp parameter sets.
 *
 *   NP (notification point, receiver): a CE-marked packet for an RC/UC QP
 *	makes srnic send a CNP to the peer QP, at most one per QP per
 *	min_time_between_cnps (srnic_cnp.c).
 *   RP (reaction point, sender): a CNP cuts the QP's rate; timer and byte
 *	counter expiries raise it again through fast recovery, additive and
 *	hyper increase, until it is back at the maximum and the QP is
 *	unpaced again (this file: pure logic; srnic_sched.c: the glue that
 *	drives the QP's token-bucket pacer, qp->pace).
 *
 * The reaction point is a pure function of (state, parameters, event, now):
 * srnic_dcqcn_rp_cnp() and srnic_dcqcn_rp_advance() take the time as an
 * argument and touch nothing but the state, so KUnit drives them with event
 * sequences and no timers. There are no DCQCN timers at all: the alpha timer
 * and the rate-increase timer are evaluated lazily, from the elapsed time,
 * when the QP transmits or gets a CNP. An idle QP costs nothing, and a QP
 * back at full rate is unpaced (qp->pace.rate 0) and skips DCQCN entirely.
 *
 * Units: rates in bytes/s (like qp->pace.rate), knobs in the units of mlx5
 * (Mb/s, µs, bytes, 1/1024 fixed point for alpha and dce_tcp_g).
 */
#ifndef SRNIC_DCQCN_H
#define SRNIC_DCQCN_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/device.h>
#include <linux/sysfs.h>
#include <linux/types.h>
#include <uapi/rdma/srnic_probe.h>

/* alpha inside the RP: fixed point, SRNIC_DCQCN_ALPHA_ONE = 1.0 */
#define SRNIC_DCQCN_ALPHA_SHIFT		20
#define SRNIC_DCQCN_ALPHA_ONE		BIT(SRNIC_DCQCN_ALPHA_SHIFT)
/* knobs dce_tcp_g and initial_alpha_value: 1/1024 units (mlx5) */
#define SRNIC_DCQCN_KNOB_SHIFT		10

/* rpg_max_rate 0 means "line rate": what srnic assumes for it, Mb/s. */
#define SRNIC_DCQCN_LINE_RATE_MBPS	10000
/* bytes/s per Mb/s */
#define SRNIC_DCQCN_MBPS		125000ULL

/*
 * After an idle time longer than this many rate-increase periods, a QP goes
 * straight back to full rate instead of replaying every expiry.
 */
#define SRNIC_DCQCN_MAX_CATCHUP		4096

/**
 * struct srnic_dcqcn_params - one device's DCQCN knobs (sysfs roce_np/,
 * roce_rp/); names, units and defaults of mlx5 (see srnic_dcqcn.c's table)
 *
 * Written by sysfs stores, read without a lock by the data path: each field
 * is a u32 read once per use; a reader may see a mix of old and new values
 * of different fields for one event, which is harmless.
 */
struct srnic_dcqcn_params {
	/* notification point */
	u32	np_enable;
	u32	min_time_between_cnps;		/* µs */
	u32	cnp_dscp;			/* 0..63 */
	u32	cnp_802p_prio;			/* 0..7, skb->priority of CNPs */
	/* reaction point */
	u32	rp_enable;
	u32	clamp_tgt_rate;			/* 0/1 */
	u32	clamp_tgt_rate_after_time_inc;	/* 0/1 */
	u32	dce_tcp_g;			/* 1/1024: (1 - g) = G/1024 */
	u32	dce_tcp_rtt;			/* µs: alpha timer period */
	u32	initial_alpha_value;		/* 1/1024 */
	u32	rate_reduce_monitor_period;	/* µs: min time between cuts */
	u32	rate_to_set_on_first_cnp;	/* Mb/s, 0: cut from max rate */
	u32	rpg_ai_rate;			/* Mb/s */
	u32	rpg_byte_reset;			/* bytes, 0: no byte counter */
	u32	rpg_gd;				/* cut = alpha / 2^(gd-10) */
	u32	rpg_hai_rate;			/* Mb/s */
	u32	rpg_max_rate;			/* Mb/s, 0: line rate */
	u32	rpg_min_dec_fac;		/* %: new rate >= rate * fac / 100 */
	u32	rpg_min_rate;			/* Mb/s */
	u32	rpg_threshold;			/* F: fast recovery steps */
	u32	rpg_time_reset;			/* µs: rate increase timer */
	u32	ecn_mark;			/* 0/1: send data as ECT(0) */
};

/**
 * struct srnic_dcqcn_rp - reaction point state of one QP
 * @active: a DCQCN rate limit is in force (@rc below the maximum); when
 *	false the other fields are meaningless and the QP is not paced by
 *	DCQCN
 * @rc: current rate RC, bytes/s (what qp->pace.rate is set to)
 * @rt: target rate RT, bytes/s
 * @alpha: congestion estimate, SRNIC_DCQCN_ALPHA_ONE = 1.0
 * @alpha_ns: start of the current alpha timer period (dce_tcp_rtt)
 * @timer_ns: start of the current rate-increase timer period
 *	(rpg_time_reset)
 * @cut_ns: time of the last rate cut (rate_reduce_monitor_period)
 * @t: rate-increase timer expiries since the last cut (T)
 * @bc: byte counter expiries since the last cut (BC)
 * @bytes: bytes sent since the last byte counter expiry
 * @stage: reason of the last increase (enum srnic_rate_reason): fast
 *	recovery, additive or hyper
 *
 * Protected by the owning QP's req_lock (srnic_cnp.c, srnic_sched.c).
 */
struct srnic_dcqcn_rp {
	bool	active;
	u8	stage;
	u64	rc;
	u64	rt;
	u32	alpha;
	u32	t;
	u32	bc;
	u64	bytes;
	u64	alpha_ns;
	u64	timer_ns;
	u64	cut_ns;
};

/* srnic_dcqcn.c: pure logic */
void srnic_dcqcn_params_default(struct srnic_dcqcn_params *p);
u64 srnic_dcqcn_max_rate(const struct srnic_dcqcn_params *p);
u64 srnic_dcqcn_min_rate(const struct srnic_dcqcn_params *p);
u32 srnic_dcqcn_alpha_decay(u32 alpha, u32 g_knob, u64 periods);
int srnic_dcqcn_rp_cnp(struct srnic_dcqcn_rp *rp,
		       const struct srnic_dcqcn_params *p, u64 now_ns);
int srnic_dcqcn_rp_advance(struct srnic_dcqcn_rp *rp,
			   const struct srnic_dcqcn_params *p, u64 bytes,
			   u64 now_ns);
u64 srnic_dcqcn_rp_next_ns(const struct srnic_dcqcn_rp *rp,
			   const struct srnic_dcqcn_params *p, u64 now_ns);
u32 srnic_dcqcn_rp_alpha(const struct srnic_dcqcn_rp *rp,
			 const struct srnic_dcqcn_params *p, u64 now_ns);
bool srnic_dcqcn_np_allow(u64 *last_ns, u32 min_us, u64 now_ns);
u8 srnic_dcqcn_data_tclass(const struct srnic_dcqcn_params *p, u8 tclass);

/* Knob table, shared by sysfs (srnic_cnp.c) and KUnit. */
enum srnic_dcqcn_set { SRNIC_DCQCN_NP, SRNIC_DCQCN_RP };

struct srnic_dcqcn_knob {
	const char		*name;
	enum srnic_dcqcn_set	set;
	u16			offset;	/* in struct srnic_dcqcn_params */
	u32			min;
	u32			max;
	u32			def;
};

#define SRNIC_DCQCN_NKNOBS	22
extern const struct srnic_dcqcn_knob srnic_dcqcn_knobs[SRNIC_DCQCN_NKNOBS];
int srnic_dcqcn_knob_set(struct srnic_dcqcn_params *p,
			 const struct srnic_dcqcn_knob *k, u32 val);

/**
 * struct srnic_dcqcn_sysfs - one device's roce_np/ and roce_rp/ directories
 * @attrs: one file per knob, in srnic_dcqcn_knobs order
 * @np: the roce_np files, NULL-terminated
 * @rp: the roce_rp files, NULL-terminated
 * @grp: the two directories
 * @groups: @grp, NULL-terminated, for sysfs_create_groups()
 */
struct srnic_dcqcn_sysfs {
	struct srnic_dcqcn_attr {
		struct device_attribute		dattr;
		const struct srnic_dcqcn_knob	*knob;
	} attrs[SRNIC_DCQCN_NKNOBS];
	struct attribute		*np[SRNIC_DCQCN_NKNOBS + 1];
	struct attribute		*rp[SRNIC_DCQCN_NKNOBS + 1];
	struct attribute_group		grp[2];
	const struct attribute_group	*groups[3];
};

static inline u32 srnic_dcqcn_knob_get(const struct srnic_dcqcn_params *p,
				       const struct srnic_dcqcn_knob *k)
{
	return READ_ONCE(*(const u32 *)((const u8 *)p + k->offset));
}

#endif /* SRNIC_DCQCN_H */
