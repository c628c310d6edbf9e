// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_top: per-QP packet, byte, retransmit, NAK and CNP totals and the current DCQCN
 * rate, from the srnic tracepoints (include/uapi/rdma/srnic_probe.h). srnicctl top reads
 * qp_stats every interval and prints the differences.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "uapi/rdma/srnic_probe.h"
#include "srnic_maps.h"

/* Set by srnicctl before load: count only ib_device index targ_dev when filter_dev. */
const volatile __u32 filter_dev = 0;
const volatile __u32 targ_dev = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct srnic_qp_key);
	__type(value, struct srnic_qp_stats);
} qp_stats SEC(".maps");

static __always_inline struct srnic_qp_stats *stats_of(__u32 dev, __u32 qpn)
{
	struct srnic_qp_key key = { .dev = dev, .qpn = qpn };
	static const struct srnic_qp_stats zero;
	struct srnic_qp_stats *s;

	if (filter_dev && dev != targ_dev)
		return 0;
	s = bpf_map_lookup_elem(&qp_stats, &key);
	if (s)
		return s;
	bpf_map_update_elem(&qp_stats, &key, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&qp_stats, &key);
}

SEC("tracepoint/srnic/srnic_pkt_tx")
int on_pkt_tx(struct srnic_probe_pkt *ctx)
{
	struct srnic_qp_stats *s = stats_of(ctx->dev, ctx->qpn);

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->tx_bytes, ctx->len);
	__sync_fetch_and_add(&s->tx_pkts, 1);
	return 0;
}

SEC("tracepoint/srnic/srnic_pkt_rx")
int on_pkt_rx(struct srnic_probe_pkt *ctx)
{
	struct srnic_qp_stats *s = stats_of(ctx->dev, ctx->qpn);

	if (!s)
		return 0;
	__sync_fetch_and_add(&s->rx_bytes, ctx->len);
	__sync_fetch_and_add(&s->rx_pkts, 1);
	return 0;
}

SEC("tracepoint/srnic/srnic_retransmit")
int on_retransmit(struct srnic_probe_retransmit *ctx)
{
	struct srnic_qp_stats *s = stats_of(ctx->dev, ctx->qpn);

	if (s)
		__sync_fetch_and_add(&s->retransmits, 1);
	return 0;
}

SEC("tracepoint/srnic/srnic_nak")
int on_nak(struct srnic_probe_nak *ctx)
{
	struct srnic_qp_stats *s = stats_of(ctx->dev, ctx->qpn);

	if (!s)
		return 0;
	if (ctx->dir == SRNIC_DIR_TX)
		__sync_fetch_and_add(&s->naks_tx, 1);
	else
		__sync_fetch_and_add(&s->naks_rx, 1);
	return 0;
}

SEC("tracepoint/srnic/srnic_cnp")
int on_cnp(struct srnic_probe_cnp *ctx)
{
	struct srnic_qp_stats *s = stats_of(ctx->dev, ctx->qpn);

	if (!s)
		return 0;
	if (ctx->dir == SRNIC_DIR_TX)
		__sync_fetch_and_add(&s->cnps_tx, 1);
	else
		__sync_fetch_and_add(&s->cnps_rx, 1);
	return 0;
}

SEC("tracepoint/srnic/srnic_rate")
int on_rate(struct srnic_probe_rate *ctx)
{
	struct srnic_qp_stats *s = stats_of(ctx->dev, ctx->qpn);

	if (!s)
		return 0;
	s->rate = ctx->new_rate;
	__sync_fetch_and_add(&s->rate_events, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
