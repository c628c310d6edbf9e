#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# dc_bench_guest.sh: RC against DC to N peers (docs/dc.md "The point of DC,
# measured"), inside one vmrun guest; run by tools/dc-bench.sh. A
# measurement, not a test: there are no pass/fail thresholds (but every
# run's data are verified by the tool, and a run that fails says so).
#
#   tests/vm/vmrun tests/bench/dc_bench_guest.sh PEERS DCIS SIZE ITERS BYTES \
#       OP DEPTH
#
#   PEERS  peer counts, e.g. "16 256 1024"
#   DCIS   DCI counts for DC, e.g. "1" or "1 8" (a DC run for each)
#   SIZE   bytes per WR; ITERS WRs per peer (0: BYTES in all); OP write|send;
#   DEPTH  WRs in flight
#
#   nsA: srnic0 (srnic_native) on vethA 10.99.0.1 <== veth ==> vethB
#   10.99.0.2, srnic1 (srnic_native) in nsB
#
# For each N: build/userspace/tools/srnic_dc_bench, the server on srnic0,
# the client on srnic1: RC, then DC with each DCI count. While the client
# holds after its setup (--hold), `srnicctl -j qp show` counts the QPs the
# kernel has on each device by type (RC, DCI, DCT). Output, one line per
# run: "DCBENCH-RESULT <the tool's JSON with kernel_qps_client,
# kernel_qps_server, dc_attach (srnic0's counter's growth), status, wall_s
# added>"; the tool's own lines with "  cli| " / "  srv| " before them.
export SRNIC_PROVIDER=native
. tests/vm/lib.sh

peers=${1:-16 256 1024} dcis=${2:-1} size=${3:-4096} iters=${4:-0}
bytes=${5:-32M} op=${6:-write} depth=${7:-32}
BIN=build/userspace/tools/srnic_dc_bench
CTL=build/userspace/ctl/srnicctl
HOLD=/tmp/dcbench.hold

[ -x "$BIN" ] && [ -x "$CTL" ] || { echo "dcbench: build the userspace first"; exit 1; }
sysctl -qw vm.max_map_count=262144
ulimit -n 65536
srnic_load veth rdma_ucm || { echo "dcbench: srnic_load failed"; exit 1; }
netns_pair_setup || { echo "dcbench: netns_pair_setup failed"; exit 1; }
srnic_devs_ns || { echo "dcbench: the native devices did not come up"; exit 1; }
echo "dcbench: guest: kernel $(uname -r), $(nproc) vCPUs, $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo)"

# kqps NS DEV TYPE: the QPs of TYPE the kernel lists for DEV
kqps() {
	ip netns exec "$1" "$CTL" -j qp show "$2" 2>/dev/null |
		grep -o "\"type\":\"$3\"" | wc -l
}

# one TRANSPORT N K: one run; its DCBENCH-RESULT line
one() {
	local tr=$1 n=$2 k=$3 srv cli rc kc=0 ks=0 att0 t0 json status=ok
	rm -f "$HOLD" "$HOLD.ready"
	sleep 1		# the last run's deferred frees (RCU, work items) done
	att0=$(counter srnic0 dc_attach)
	t0=$EPOCHREALTIME
	bg_start srv timeout 600 ip netns exec nsA "$BIN" -d srnic0 -g "$G0" \
		--server >/tmp/dcbench.srv 2>&1
	ready tcp_listening 18516 nsA
	bg_start cli timeout 600 ip netns exec nsB "$BIN" -d srnic1 -g "$G1" \
		--transport "$tr" --peers "$n" --dcis "$k" --size "$size" \
		--iters "$iters" --bytes "$bytes" --op "$op" --depth "$depth" \
		--hold "$HOLD" 10.99.0.1 >/tmp/dcbench.cli 2>&1
	if settle -t 300 test -e "$HOLD.ready"; then
		if [ "$tr" = rc ]; then
			kc=$(kqps nsB srnic1 RC) ks=$(kqps nsA srnic0 RC)
		else
			kc=$(kqps nsB srnic1 DCI) ks=$(kqps nsA srnic0 DCT)
		fi
	fi
	touch "$HOLD"
	wait_done 600 "$cli"
	rc=$?
	[ "$rc" = 0 ] || status=client_exit_$rc
	wait_done 60 "$srv" || status=${status/#ok/server_failed}
	sed 's/^/  cli| /' /tmp/dcbench.cli
	sed 's/^/  srv| /' /tmp/dcbench.srv
	json=$(grep -m1 '^{' /tmp/dcbench.cli)
	[ -n "$json" ] || json="{\"transport\":\"$tr\",\"peers\":$n,\"dcis\":$k"
	json=${json%\}}
	printf 'DCBENCH-RESULT %s,"kernel_qps_client":%s,"kernel_qps_server":%s,"dc_attach":%s,"status":"%s","wall_s":%s}\n' \
		"$json" "$kc" "$ks" $(($(counter srnic0 dc_attach) - att0)) \
		"$status" "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')"
}

for n in $peers; do
	one rc "$n" 1
	for k in $dcis; do
		one dc "$n" "$k"
	done
done
ip netns exec nsA rdma link delete srnic0
ip netns exec nsB rdma link delete srnic1
rmmod srnic
t_kernel_clean "dcbench: no kernel warnings"
echo "dcbench: done"
t_summary
