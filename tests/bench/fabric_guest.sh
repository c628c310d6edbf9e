#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of tools/fabric.sh (runs inside tests/vm/vmrun), also run by
# tests/vm/test_fabric.sh:
#
#   fabric_guest.sh SPINES LEAVES HOSTS RATE ECN_KB SECS QPS OUTDIR
#
# Builds the leaf-spine of tests/vm/fabric_lib.sh, an srnic device on every
# host (fb<j>x<k> on fbh<j>x<k>), and prints the topology. Then every host
# sends to the host of the same number on the next leaf (leaf L to leaf 1),
# all at once: ib_write_bw -s 65536 -q QPS -D SECS, each pair its own port.
# Prints each flow's bandwidth and each fabric link's bytes up and down, and
# writes OUTDIR/flows.tsv ("src dst MiB/s") and OUTDIR/links.tsv ("leaf
# spine up_bytes down_bytes"). Everything it creates is removed when it ends,
# however it ends. Exit 0 when every flow moved data, 1 otherwise, 2 for bad
# arguments (one line on stderr).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh
. tests/vm/fabric_lib.sh

if [ $# -ne 8 ]; then
	echo "usage: fabric_guest.sh SPINES LEAVES HOSTS RATE ECN_KB SECS QPS OUTDIR" >&2
	exit 2
fi
spines=$1 leaves=$2 hosts=$3 rate=$4 ecn=$5 secs=$6 qps=$7 out=$8
fab_check "$spines" "$leaves" "$hosts" "$rate" "$ecn" || exit 2
_fab_int secs "$secs" 1 600 && _fab_int qps "$qps" 1 64 || exit 2
mkdir -p "$out" || exit 2

# (this trap replaces lib.sh's, whose bg_cleanup stops the servers and
# clients bg_start started)
cleanup() {
	bg_cleanup >/dev/null 2>&1
	fab_down
}
trap cleanup EXIT
trap 'exit 130' INT TERM

srnic_load veth sch_htb sch_red cls_u32 || { echo "fabric: srnic_load failed"; exit 1; }
fab_up "$spines" "$leaves" "$hosts" "$rate" "$ecn" || exit 1
fab_topology
declare -A gid
while read -r j k; do
	ip netns exec "fbh${j}x$k" rdma link add "fb${j}x$k" type srnic netdev eth0 ||
		{ echo "fabric: rdma link add on fbh${j}x$k failed"; exit 1; }
done < <(fab_hosts)
while read -r j k; do
	gid[$j.$k]=$(settle roce_gid_index "fb${j}x$k" "10.$j.$k.2")
	[ -n "${gid[$j.$k]}" ] || { echo "fabric: no RoCEv2 GID on fb${j}x$k"; exit 1; }
done < <(fab_hosts)

# flows: (j, k) -> (j mod L + 1, k)
bytes0=$(fab_link_bytes)
port=18700
flows=()
while read -r j k; do
	d=$((j % leaves + 1))
	port=$((port + 1))
	bg_start pid timeout --kill-after=5 $((secs + 60)) ip netns exec "fbh${d}x$k" \
		ib_write_bw -d "fb${d}x$k" -x "${gid[$d.$k]}" -s 65536 -q "$qps" -D "$secs" \
		-F -p "$port" >"$out/srv.$j.$k.log" 2>&1
	ready tcp_listening "$port" "fbh${d}x$k" || { echo "fabric: server on fbh${d}x$k not listening"; exit 1; }
	flows+=("$j $k $d $port")
done < <(fab_hosts)
cpids=()
for f in "${flows[@]}"; do
	read -r j k d port <<<"$f"
	bg_start pid timeout --kill-after=5 $((secs + 50)) ip netns exec "fbh${j}x$k" \
		ib_write_bw -d "fb${j}x$k" -x "${gid[$j.$k]}" -s 65536 -q "$qps" -D "$secs" \
		-F -p "$port" "10.$d.$k.2" >"$out/cli.$j.$k.log" 2>&1
	cpids+=("$pid")
done
for p in "${cpids[@]}"; do
	wait "$p"
done

status=0 total=0
: >"$out/flows.tsv"
echo "fabric: flows (ib_write_bw -s 65536 -q $qps -D $secs, all at once):"
for f in "${flows[@]}"; do
	read -r j k d port <<<"$f"
	bw=$(bw_avg "$out/cli.$j.$k.log")
	printf '  fbh%sx%s -> fbh%sx%s  %s MiB/s\n' "$j" "$k" "$d" "$k" "${bw:-none}"
	printf '%s.%s\t%s.%s\t%s\n' "$j" "$k" "$d" "$k" "${bw:-0}" >>"$out/flows.tsv"
	if [ -z "$bw" ]; then
		status=1
		sed 's/^/  | /' "$out/cli.$j.$k.log" | tail -n 5
	else
		total=$(awk -v a="$total" -v b="$bw" 'BEGIN { print a + b }')
	fi
done
echo "fabric: total $total MiB/s"
echo "fabric: bytes per fabric link (leaf -> spine up, spine -> leaf down):"
: >"$out/links.tsv"
paste -d' ' <(echo "$bytes0") <(fab_link_bytes) |
	while read -r j i u0 d0 _ _ u1 d1; do
		printf '  fbl%s - fbs%s  up %12d  down %12d\n' "$j" "$i" $((u1 - u0)) $((d1 - d0))
		printf '%s\t%s\t%s\t%s\n' "$j" "$i" $((u1 - u0)) $((d1 - d0)) >>"$out/links.tsv"
	done
exit "$status"
