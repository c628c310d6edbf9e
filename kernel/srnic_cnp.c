// SPDX-License-Identifier: GPL-2.0
/*
 * srnic CNP and DCQCN glue: what connects the pure DCQCN logic of
 * srnic_dcqcn.c to QPs, packets and sysfs.
 *
 * - Notification point: srnic_cnp_np_rcv() looks at every packet received
 *   for an RC/UC QP, and every request a DCT hands to an attachment (an
 *   RC QP whose peer is the DCI: srnic_dct.c); a CE mark makes it send a
 *   CNP to the peer QP (at most one per QP or attachment per
 *   min_time_between_cnps; lock-free).
 * - Reaction point: srnic_cnp_rp_rcv() hands a received CNP to the named
 *   QP's DCQCN state, under the QP's req_lock, which protects qp->dcqcn and
 *   qp->pace; the increase timer and byte counter run from the pacer
 *   (srnic_sched_pace()). Every change of the rate goes through
 *   srnic_sched_rate_changed(), which programs the pacer (srnic_sched.c).
 * - Knobs: /sys/class/infiniband/<dev>/roce_np/ and roce_rp/.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/ktime.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>

#include "srnic.h"
#include "srnic_trace.h"

/* A CNP reached the reaction point of @qp. Fires srnic_cnp (RX). */
static void srnic_cnp_rcvd(struct srnic_qp *qp)
{
	srnic_count(qp->sdev, SRNIC_CNT_RP_CNP_HANDLED);
	trace_srnic_cnp(qp->sdev->ib_dev.index, srnic_qpn(qp), SRNIC_DIR_RX);
}

static bool srnic_cnp_qp_ok(const struct srnic_qp *qp)
{
	return srnic_qp_reliable(qp) || qp->ibqp.qp_type == IB_QPT_UC;
}

/**
 * srnic_cnp_rp_rcv() - a CNP arrived (BTH opcode 0x81)
 * @sdev: the receiving device
 * @pkt: the CNP, checked by srnic_recv_check() (ICRC included)
 *
 * Goes to the reaction point of the QP the CNP names; ignored (and counted
 * as such) when roce_rp/enable is off or the QP does not exist or is not
 * RC/UC.
 */
void srnic_cnp_rp_rcv(struct srnic_dev *sdev, struct srnic_pkt *pkt)
{
	struct srnic_qp *qp;
	int why;

	if (!READ_ONCE(sdev->dcqcn.rp_enable))
		goto ignore;
	qp = srnic_qp_get(sdev, pkt->qpn);
	if (!qp)
		goto ignore;
	if (!srnic_cnp_qp_ok(qp)) {
		srnic_qp_put(qp);
		goto ignore;
	}
	spin_lock_bh(&qp->req_lock);
	why = srnic_dcqcn_rp_cnp(&qp->dcqcn, &sdev->dcqcn, ktime_get_ns());
	if (why >= 0)
		srnic_sched_rate_changed(qp, why);
	spin_unlock_bh(&qp->req_lock);
	srnic_cnp_rcvd(qp);
	srnic_qp_put(qp);
	return;

ignore:
	srnic_count(sdev, SRNIC_CNT_RP_CNP_IGNORED);
}

/* ------------------------------------------------------------ NP */

/**
 * srnic_cnp_build() - the CNP to a QP (RoCEv2 Annex A17.9.3)
 * @cnp: BTH and 16 reserved bytes to fill
 * @dqpn: the QP that must slow down (the peer's QPN)
 *
 * Opcode 0x81, P_Key default, BECN set, PSN 0, the reserved bytes zero.
 */
void srnic_cnp_build(struct srnic_cnp *cnp, u32 dqpn)
{
	srnic_bth_init(&cnp->bth, SRNIC_OPCODE_CNP, false, false, 0,
		       SRNIC_DEFAULT_PKEY, dqpn, false, 0);
	srnic_bth_set_ecn(&cnp->bth, false, true);
	memset(cnp->rsvd, 0, sizeof(cnp->rsvd));
}

/* A CNP for @qp's peer went out. Fires srnic_cnp (TX). */
static void srnic_cnp_sent(struct srnic_qp *qp)
{
	srnic_count(qp->sdev, SRNIC_CNT_NP_CNP_SENT);
	trace_srnic_cnp(qp->sdev->ib_dev.index, srnic_qpn(qp), SRNIC_DIR_TX);
}

static void srnic_cnp_send(struct srnic_qp *qp)
{
	struct srnic_dev *sdev = qp->sdev;
	struct sk_buff *skb;

	skb = srnic_xmit_alloc(SRNIC_CNP_LEN, 0);
	if (!skb)
		return;
	srnic_cnp_build((struct srnic_cnp *)skb->data,
			READ_ONCE(qp->attr.dest_qp_num));
	skb->priority = READ_ONCE(sdev->dcqcn.cnp_802p_prio);
	/* on the flow's path and UDP source port; DSCP cnp_dscp, Not-ECT */
	if (!srnic_sched_xmit(qp, &qp->av,
			      READ_ONCE(sdev->dcqcn.cnp_dscp) << 2, skb, 0))
		srnic_cnp_sent(qp);
}

/**
 * srnic_cnp_skb_ce() - does a received packet carry a CE mark?
 * @skb: the packet, its network header set
 *
 * Return: true if its IP header's ECN field says Congestion Experienced.
 */
bool srnic_cnp_skb_ce(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return INET_ECN_is_ce(ipv4_get_dsfield(ip_hdr(skb)));
	if (skb->protocol == htons(ETH_P_IPV6))
		return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
	return false;
}

/**
 * srnic_cnp_np_rcv() - the notification point sees a packet for @qp
 * @qp: the QP the packet is for, or the DC attachment a DCT found for it
 * @pkt: the packet (any opcode of @qp's transport)
 *
 * The CNP goes to @qp's peer (for an attachment: the DCI) on @qp's path
 * and UDP source port.
 */
void srnic_cnp_np_rcv(struct srnic_qp *qp, struct srnic_pkt *pkt)
{
	struct srnic_dev *sdev = qp->sdev;
	enum ib_qp_state state;

	if (likely(!srnic_cnp_skb_ce(pkt->skb)))
		return;
	srnic_count(sdev, SRNIC_CNT_NP_ECN_MARKED);
	if (!READ_ONCE(sdev->dcqcn.np_enable) || !srnic_cnp_qp_ok(qp))
		return;
	state = srnic_qp_state(qp);
	if (state != IB_QPS_RTR && state != IB_QPS_RTS && state != IB_QPS_SQD)
		return;
	if (!srnic_dcqcn_np_allow(&qp->cnp_last_ns,
				  READ_ONCE(sdev->dcqcn.min_time_between_cnps),
				  ktime_get_ns()))
		return;
	srnic_cnp_send(qp);
}

/* ------------------------------------------------------------ sysfs */

static ssize_t srnic_dcqcn_show(struct device *device,
				struct device_attribute *dattr, char *buf)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));
	struct srnic_dcqcn_attr *a =
		container_of(dattr, struct srnic_dcqcn_attr, dattr);

	return sysfs_emit(buf, "%u\n", srnic_dcqcn_knob_get(&sdev->dcqcn,
							    a->knob));
}

static ssize_t srnic_dcqcn_store(struct device *device,
				 struct device_attribute *dattr,
				 const char *buf, size_t count)
{
	struct srnic_dev *sdev = to_srnic_dev(rdma_device_to_ibdev(device));
	struct srnic_dcqcn_attr *a =
		container_of(dattr, struct srnic_dcqcn_attr, dattr);
	const struct srnic_dcqcn_knob *k = a->knob;
	const char *set = k->set == SRNIC_DCQCN_NP ? SRNIC_SYSFS_ROCE_NP :
						     SRNIC_SYSFS_ROCE_RP;
	u32 val;
	int err;

	err = kstrtou32(buf, 0, &val);
	if (!err)
		err = srnic_dcqcn_knob_set(&sdev->dcqcn, k, val);
	if (err) {
		pr_info_ratelimited("%s: %s/%s: invalid value '%.*s': must be a number from %u to %u\n",
				    dev_name(&sdev->ib_dev.dev), set, k->name,
				    (int)strcspn(buf, "\n"), buf, k->min,
				    k->max);
		return -EINVAL;
	}
	return count;
}

/**
 * srnic_cnp_dev_init() - DCQCN defaults and the sysfs files of a device
 * @sdev: the device, not yet registered
 */
void srnic_cnp_dev_init(struct srnic_dev *sdev)
{
	struct srnic_dcqcn_sysfs *s = &sdev->dcqcn_sysfs;
	unsigned int i, np = 0, rp = 0;

	srnic_dcqcn_params_default(&sdev->dcqcn);
	for (i = 0; i < SRNIC_DCQCN_NKNOBS; i++) {
		struct srnic_dcqcn_attr *a = &s->attrs[i];

		a->knob = &srnic_dcqcn_knobs[i];
		sysfs_attr_init(&a->dattr.attr);
		a->dattr.attr.name = a->knob->name;
		a->dattr.attr.mode = 0644;
		a->dattr.show = srnic_dcqcn_show;
		a->dattr.store = srnic_dcqcn_store;
		if (a->knob->set == SRNIC_DCQCN_NP)
			s->np[np++] = &a->dattr.attr;
		else
			s->rp[rp++] = &a->dattr.attr;
	}
	s->grp[0].name = SRNIC_SYSFS_ROCE_NP;
	s->grp[0].attrs = s->np;
	s->grp[1].name = SRNIC_SYSFS_ROCE_RP;
	s->grp[1].attrs = s->rp;
	s->groups[0] = &s->grp[0];
	s->groups[1] = &s->grp[1];
}

/**
 * srnic_cnp_sysfs_add() - create roce_np/ and roce_rp/
 * @sdev: the device, registered
 *
 * ib_device has no free group slot for two more directories, so they are
 * added after registration; device_del() removes them with the device.
 *
 * Return: 0 or a negative errno.
 */
int srnic_cnp_sysfs_add(struct srnic_dev *sdev)
{
	return sysfs_create_groups(&sdev->ib_dev.dev.kobj,
				   sdev->dcqcn_sysfs.groups);
}
