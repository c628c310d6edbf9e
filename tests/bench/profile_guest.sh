#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# profile_guest.sh: where one perftest run's CPU time goes; runs inside a
# vmrun guest, started by tools/profile.sh.
#
#   tests/vm/vmrun tests/bench/profile_guest.sh rxe|srnic TEST SIZE [ITERS] [trains]
#
# Two devices on a veth pair as in bench_guest.sh, TEST (ib_write_bw,
# ib_send_bw, ib_write_lat, ...) of SIZE bytes, ITERS iterations (default:
# 2000 for latency, 3000 for 16 KiB or more, else 50000; not perftest's -D,
# whose server may stop before a slower client has finished), the client
# under `perf record -a -g` (cpu-clock, 499 Hz: TCG guests have no PMU).
# Prints:
#   - perftest's result line and the packets that crossed the veth pair;
#   - each sample classified twice: by path (the innermost of srnic_xmit /
#     rxe_xmit_packet = "tx", srnic_udp_encap_recv / rxe_udp_encap_recv =
#     "rx", else net_rx_action = "rx-stack", a user-space frame = "user",
#     the idle loop = "idle", else "other") and by what the sampled function
#     is (icrc, copy, alloc/free, the driver itself, the network stack,
#     other); shares of all samples and CPU microseconds per veth packet;
#   - the 25 functions with the most samples of their own, and the 15
#     kernel call chains (5 frames, innermost first) with the most samples.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

stack=${1:?usage: profile_guest.sh rxe|srnic TEST SIZE [ITERS]}
test=${2:?test}
size=${3:?size}
iters=${4:-}
trains=${5:-}
if [ -z "$iters" ]; then
	case $test in
	*_lat) iters=2000 ;;
	*) iters=$((size >= 16384 ? 3000 : 50000)) ;;
	esac
fi
P=/tmp/profile

mkdir -p "$P"
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
# the set-up of tests/bench/bench_guest.sh: one namespace, policy routing
# so that frames cross the veth pair
veth_pair_setup || exit 1
if [ "$stack" = rxe ]; then
	rxe_load || exit 1
	d0=rxe0 d1=rxe1 type=rxe
else
	srnic_load || exit 1
	d0=srnic0 d1=srnic1 type=srnic
fi
rdma link add "$d0" type "$type" netdev vethA &&
	rdma link add "$d1" type "$type" netdev vethB || exit 1
if [ "$trains" = trains ] && [ "$stack" = srnic ]; then
	echo 1 >/sys/class/infiniband/$d0/srnic/tx_batch &&
		echo 1 >/sys/class/infiniband/$d1/srnic/tx_batch || exit 1
fi
G0=$(settle roce_gid_index "$d0" 10.99.0.1) &&
	G1=$(settle roce_gid_index "$d1" 10.99.0.2) || exit 1

args=(-s "$size" -F -n "$iters")
pk0=$(veth_pkts vethA)
sp=
bg_start sp timeout 300 "$test" -d "$d0" -x "$G0" -p 18600 "${args[@]}" \
	>"$P/server.out" 2>&1
wait_tcp_listen 18600 60 || { echo "profile: the server never listened"; exit 1; }
t0=$EPOCHREALTIME
perf record -o "$P/perf.data" -a -F 499 -e cpu-clock -g -- \
	timeout 280 "$test" -d "$d1" -x "$G1" -p 18600 "${args[@]}" 10.99.0.1 \
	>"$P/client.out" 2>"$P/perf.err"
rc=$?
t1=$EPOCHREALTIME
wait "$sp"
pkts=$(($(veth_pkts vethA) - pk0))
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')

echo "profile: $stack $test -s $size: client exit $rc, $pkts veth packets in $wall s, $(nproc) CPUs"
if [ "$rc" = 0 ]; then
	grep -A1 -E '^ *#bytes' "$P/client.out" | sed 's/^/profile: | /'
else
	tail -n 15 "$P/client.out" "$P/perf.err" | sed 's/^/profile: | /'
	tail -n 5 "$P/server.out" | sed 's/^/profile: srv| /'
	exit 1
fi

perf script -i "$P/perf.data" -F comm,cpu,ip,sym,dso 2>/dev/null | awk -v pkts="$pkts" \
	-v wall="$wall" -v ncpu="$(nproc)" '
function kind(s) {
	if (s ~ /^(crc32_|crc32c|srnic_icrc|rxe_icrc|crc32_le|crypto_shash|crc32_pclmul|__crc32)/) return "icrc"
	if (s ~ /^(memcpy|__memcpy|copy_user|rep_movs|skb_copy_bits|_copy_to_|_copy_from_|copy_page)/) return "copy"
	if (s ~ /^(memset|__alloc_skb|kmem_cache|__kmem_cache|kmalloc|__kmalloc|kfree|__slab|slab_|___slab|skb_release|consume_skb|kfree_skb|__build_skb|page_frag|napi_alloc|__netdev_alloc|alloc_pages|__alloc_pages|free_unref|__free_pages|get_page_from_freelist|skb_free_head|build_skb)/) return "alloc/free"
	if (s ~ /^(srnic_|rxe_)/) return "driver"
	if (s ~ /^(ip_|ip6_|__ip|udp|__udp|inet_|fib|__fib|neigh|dev_|__dev|netif|__netif|net_rx|napi|__napi|process_backlog|veth|nf_|__nf|skb_|__skb|dst_|eth_|raw_|sch_|qdisc|__qdisc|validate_xmit|rt_|__rt|sock_|sk_)/) return "stack"
	return "other"
}
function flush() {
	if (!nf) return
	path = "other"
	if (dso[1] !~ /kernel/) path = "user"
	else if (sym[1] ~ /(safe_halt|default_idle|cpu_idle|mwait)/) path = "idle"
	else {
		for (i = 1; i <= nf; i++) {
			if (sym[i] ~ /^(srnic_xmit|rxe_xmit_packet|rxe_prepare|rxe_send)$/) { path = "tx"; break }
			if (sym[i] ~ /^(srnic_udp_encap_recv|rxe_udp_encap_recv)$/) { path = "rx"; break }
		}
		if (path == "other")
			for (i = 1; i <= nf; i++)
				if (sym[i] == "net_rx_action") { path = "rx-stack"; break }
	}
	k = (path == "user" || path == "idle") ? "-" : kind(sym[1])
	n[path, k]++; np[path]++; nk[k]++; total++
	self[sym[1] " " (dso[1] ~ /kernel/ ? "[k]" : "[u]")]++
	if (path != "user" && path != "idle")
		chain[sym[1] " <- " sym[2] " <- " sym[3] " <- " sym[4] " <- " sym[5]]++
	paths[path] = 1; kinds[k] = 1
	nf = 0
}
/^[^ \t]/ { flush(); next }
/^[ \t]*$/ { flush(); next }
{
	# "  ffffffff8100 symbol+0x1f (dso)" or "  7f12 [unknown] (dso)"
	s = $2; sub(/\+0x[0-9a-f]+$/, "", s)
	d = $NF
	nf++; sym[nf] = s; dso[nf] = d
}
END {
	flush()
	if (!total) { print "profile: no samples"; exit }
	us = (pkts > 0) ? wall * ncpu * 1e6 / pkts : 0
	np_n = split("tx rx rx-stack other user idle", order, " ")
	nk_n = split("icrc copy alloc/free driver stack other -", korder, " ")
	printf "profile: samples %d; share of all samples (CPU us per veth packet)\n", total
	printf "profile: %-9s %7s", "path", "all"
	for (j = 1; j <= nk_n; j++) if (korder[j] != "-") printf " %17s", korder[j]
	printf "\n"
	for (i = 1; i <= np_n; i++) {
		p = order[i]; if (!(p in np)) continue
		printf "profile: %-9s %6.1f%% (%5.1f)", p, 100 * np[p] / total, us * np[p] / total
		for (j = 1; j <= nk_n; j++) {
			k = korder[j]; if (k == "-") continue
			c = ((p, k) in n) ? n[p, k] : 0
			if (c) printf " %6.1f%% (%5.1f)", 100 * c / total, us * c / total
			else printf " %17s", "-"
		}
		printf "\n"
	}
	printf "profile: %-9s", "by kind"
	for (j = 1; j <= nk_n; j++) {
		k = korder[j]; if (k == "-") continue
		c = (k in nk) ? nk[k] : 0
		printf " %s %.1f%% (%.1f)", k, 100 * c / total, us * c / total
	}
	printf "\n"
	for (f in self) printf "SELF\t%.1f\t%s\n", 100 * self[f] / total, f
	for (f in chain) printf "CHAIN\t%.1f\t%s\n", 100 * chain[f] / total, f
}' >"$P/table.txt"
grep -vE '^(SELF|CHAIN)' "$P/table.txt"
grep '^SELF' "$P/table.txt" | sort -t$'\t' -k2,2 -rn | head -n 25 |
	awk -F'\t' '{ printf "profile: self %5.1f%%  %s\n", $2, $3 }'
grep '^CHAIN' "$P/table.txt" | sort -t$'\t' -k2,2 -rn | head -n 15 |
	awk -F'\t' '{ printf "profile: chain %5.1f%%  %s\n", $2, $3 }'
