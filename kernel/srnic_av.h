/* SPDX-License-Identifier: GPL-2.0 */
/*
 * srnic address vectors and address handles (srnic_ah.c): where the
 * packets of a QP or of a UD send go.
 */
#ifndef SRNIC_AV_H
#define SRNIC_AV_H

#include <linux/in6.h>
#include <rdma/ib_verbs.h>

struct srnic_dev;

/**
 * struct srnic_av - where packets of a QP or a UD send go
 * @family: AF_INET or AF_INET6 (RoCEv2 over IPv4 or IPv6)
 * @ifindex: the netdev of the source GID (route lookups are bound to it)
 * @saddr: source address (IPv4 in the low 4 bytes of s6_addr32[3])
 * @daddr: destination address, same convention
 * @tclass: IPv4 TOS / IPv6 traffic class (DSCP and ECN bits)
 * @hop_limit: TTL / hop limit
 * @flow_label: IPv6 flow label; also feeds the UDP source port
 */
struct srnic_av {
	u16			family;
	int			ifindex;
	struct in6_addr		saddr;
	struct in6_addr		daddr;
	u8			tclass;
	u8			hop_limit;
	u32			flow_label;
};

struct srnic_ah {
	struct ib_ah		ibah;
	struct srnic_av		av;
	u32			ah_num;
};

static inline struct srnic_ah *to_srnic_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct srnic_ah, ibah);
}

/* srnic_ah.c */
extern const struct ib_device_ops srnic_ah_ops;
int srnic_av_from_attr(struct srnic_av *av, const struct rdma_ah_attr *attr);
int srnic_ah_lookup_av(struct srnic_dev *sdev, struct ib_pd *pd, u32 ah_num,
		       struct srnic_av *av);

#endif /* SRNIC_AV_H */
