// SPDX-License-Identifier: GPL-2.0
/*
 * srnic_lat: log2 histogram of send WQE latency, from srnic_wqe_post (the requester takes
 * the WQE) to srnic_wqe_done (its completion is posted), keyed by (dev, qpn, wr_id).
 * WQEs posted unsignaled never complete: the LRU map lets their start times age out. Of
 * two WQEs posted with one wr_id, the later post is matched (completions come in order).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "uapi/rdma/srnic_probe.h"
#include "srnic_maps.h"

const volatile __u32 filter_dev = 0;
const volatile __u32 targ_dev = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct srnic_wqe_key);
	__type(value, __u64);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct srnic_lat_hist);
} hist SEC(".maps");

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

SEC("tracepoint/srnic/srnic_wqe_post")
int on_wqe_post(struct srnic_probe_wqe_post *ctx)
{
	struct srnic_wqe_key key = { .wr_id = ctx->wr_id, .dev = ctx->dev, .qpn = ctx->qpn };
	__u64 ts = bpf_ktime_get_ns();

	if (filter_dev && ctx->dev != targ_dev)
		return 0;
	bpf_map_update_elem(&starts, &key, &ts, BPF_ANY);
	return 0;
}

SEC("tracepoint/srnic/srnic_wqe_done")
int on_wqe_done(struct srnic_probe_wqe_done *ctx)
{
	struct srnic_wqe_key key = { .wr_id = ctx->wr_id, .dev = ctx->dev, .qpn = ctx->qpn };
	struct srnic_lat_hist *h;
	__u32 zero = 0, slot;
	__u64 *start, delta;

	if (ctx->is_recv || (filter_dev && ctx->dev != targ_dev))
		return 0;
	h = bpf_map_lookup_elem(&hist, &zero);
	if (!h)
		return 0;
	start = bpf_map_lookup_elem(&starts, &key);
	if (!start) {
		__sync_fetch_and_add(&h->unmatched, 1);
		return 0;
	}
	delta = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(&starts, &key);
	slot = log2_u64(delta / 1000);
	if (slot >= SRNIC_LAT_SLOTS)
		slot = SRNIC_LAT_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum_ns, delta);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
