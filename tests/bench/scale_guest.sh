#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scale_guest.sh: QP scale benchmark, srnic against rdma_rxe in one guest.
# A measurement, not a test: there are no pass/fail thresholds.
#
#   tests/vm/vmrun --timeout 3600 --mem 3072 tests/bench/scale_guest.sh \
#       [ROUNDS [N...]]
#
#     dev0 (rxe0|srnic0) on vethA 10.99.0.1 <== veth ==> vethB 10.99.0.2 on dev1
#
# ROUNDS (default 3) rounds; in each, for every N (default 1000 10000), one
# run of tests/vm/qp_scale.c per stack (N RC QPs per device, connected in
# pairs, traffic on every 100th pair, all destroyed), the stacks in turn
# (srnic first in odd rounds, rxe first in even ones), each stack's module
# loaded for its run and removed after it, so both see the same guest. In
# each run, `ib_write_bw -q 8 -s 65536 -n 100` (8 active RC QPs, 100 WRITEs
# each; perftest's -D reports 0 iterations with -q 8 on rxe) runs twice
# between the same devices: before qp_scale creates its QPs, and while its
# N QPs per device are connected and idle (QP_SCALE_HOLD): per-QP cost is
# flat if the second is as fast as the first.
#
# Output: one line per run,
#   SCALE-RESULT stack n round create_us connect_us destroy_us kb_per_1k_qps
#                init_us rtr_us rts_us bw8_mib_s bw8_idle_mib_s
# (microseconds per QP; connect = the three modifies to INIT, RTR and RTS;
# kernel memory per 1000 QPs: meminfo Slab + VmallocUsed + Percpu +
# PageTables; bw8: the 8 QPs' bandwidth alone, bw8_idle: beside the idle
# QPs, "-" if a run failed), then per stack and N the medians of the
# rounds, "SCALE-MEDIAN stack n runs" and the same fields. A run that fails
# prints its checks and counts as no figure.
. tests/vm/lib.sh

rounds=${1:-3}
shift
ns=("${@:-1000}")
[ $# -gt 0 ] || ns=(1000 10000)
BIN=/tmp/qp_scale
RES=/tmp/scale.res
HOLD=/tmp/scale.hold
: >"$RES"

cc -O2 -Wall -Werror -o "$BIN" tests/vm/qp_scale.c -libverbs || exit 1
sysctl -qw vm.max_map_count=262144
ulimit -n 65536
veth_pair_setup || { echo "scale: veth_pair_setup failed"; exit 1; }
echo "scale: guest: kernel $(uname -r), $(nproc) vCPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)"

up() {
	case $1 in
	rxe) rxe_load || return 1 ;;
	srnic) srnic_load || return 1 ;;
	esac
	rdma link add "${1}0" type "$1" netdev vethA &&
		rdma link add "${1}1" type "$1" netdev vethB
}

down() {
	rdma link delete "${1}0"
	rdma link delete "${1}1"
	case $1 in
	rxe) rmmod rdma_rxe ;;
	srnic) rmmod srnic ;;
	esac
}

# bw8 STACK G0 G1: MiB/s of ib_write_bw with 8 QPs, 100 x 64 KiB each; "-" on failure
bw8() {
	local s=$1 g0=$2 g1=$3 srv v
	bg_start srv timeout 60 ib_write_bw -d "${s}0" -x "$g0" -q 8 -s 65536 -n 100 -F \
		>/tmp/bw8.srv 2>&1
	if ! wait_tcp_listen 18515 20; then
		bg_stop "$srv"
		echo -
		return
	fi
	timeout 60 ib_write_bw -d "${s}1" -x "$g1" -q 8 -s 65536 -n 100 -F 10.99.0.1 \
		>/tmp/bw8.cli 2>&1
	bg_stop "$srv"
	# #bytes #iterations BW-peak BW-average MsgRate
	v=$(awk '$1 == 65536 && NF >= 5 { print $4; exit }' /tmp/bw8.cli)
	[[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] && echo "$v" || echo -
}

# run STACK N ROUND: one qp_scale run, its SCALE-RESULT line
run() {
	local s=$1 n=$2 r=$3 g0 g1 out line bw0 bwn=- qpid
	up "$s" || { echo "scale: $s: cannot bring the devices up"; return 1; }
	g0=$(settle roce_gid_index "${s}0" 10.99.0.1)
	g1=$(settle roce_gid_index "${s}1" 10.99.0.2)
	bw0=$(bw8 "$s" "$g0" "$g1")
	rm -f "$HOLD"
	bg_start qpid env QP_SCALE_HOLD="$HOLD" timeout --kill-after=5 1200 "$BIN" \
		"${s}0" "$g0" "${s}1" "$g1" "$n" 100 1000 >/tmp/scale.out 2>&1
	for _ in $(seq 6000); do
		[ -e "$HOLD" ] && break
		kill -0 "$qpid" 2>/dev/null || break
		sleep 0.2
	done
	[ -e "$HOLD" ] && bwn=$(bw8 "$s" "$g0" "$g1")
	rm -f "$HOLD"
	wait "$qpid"
	out=$(cat /tmp/scale.out)
	down "$s"
	line=$(grep '^qp_scale: {' <<<"$out")
	if [ -z "$line" ] || grep -q '^not ok' <<<"$out"; then
		echo "scale: $s n=$n round $r failed:"
		grep -E '^not ok' <<<"$out" | head -n 5
		tail -n 3 <<<"$out"
		return 1
	fi
	# shellcheck disable=SC2001 # one sed for the seven fields
	line=$(sed 's/.*"create_us_per_qp":\([0-9.]*\),"connect_us_per_qp":\([0-9.]*\),"destroy_us_per_qp":\([0-9.]*\),"kernel_kb_per_1k_qps":\([0-9-]*\).*"init_us":\([0-9.]*\),"rtr_us":\([0-9.]*\),"rts_us":\([0-9.]*\).*/\1 \2 \3 \4 \5 \6 \7/' <<<"$line")
	echo "SCALE-RESULT $s $n $r $line $bw0 $bwn" | tee -a "$RES"
}

for r in $(seq "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then order=(srnic rxe); else order=(rxe srnic); fi
	for n in "${ns[@]}"; do
		for s in "${order[@]}"; do
			run "$s" "$n" "$r"
		done
	done
done

# medians of each field per stack and N
for s in srnic rxe; do
	for n in "${ns[@]}"; do
		med=()
		for f in 5 6 7 8 9 10 11 12 13; do
			med+=("$(awk -v s="$s" -v n="$n" -v f="$f" \
				'$2 == s && $3 == n && $f != "-" { print $f }' "$RES" |
				sort -g | awk '{ v[NR] = $1 }
				END { if (!NR) print "-";
				      else if (NR % 2) print v[(NR + 1) / 2];
				      else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')")
		done
		echo "SCALE-MEDIAN $s $n $(grep -c "^SCALE-RESULT $s $n " "$RES") ${med[*]}"
	done
done
