#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh: perftest numbers for rxe and srnic, alternated over rounds.
# A measurement, not a test: there are no pass/fail thresholds.
#
#   tools/bench.sh [--stack rxe|srnic|both] [--rounds N] [--quick]
#                  [--mtu 1500|9000] [--out FILE] [--json FILE] [--png FILE]
#                  [--wait-idle SECS] [--rx-steer] [--tx-batch] [--no-spread]
#   tools/bench.sh --summarize [--json FILE] [--png FILE] TSV...
#
#   --stack      which stack(s) to measure (default: both)
#   --rounds     rounds (default 3); each round runs every stack once, in
#                the order rxe, srnic (rxe, srnic, rxe, srnic, ...)
#   --quick      ib_write_bw 64 KiB, ib_send_bw 64 B, ib_write_lat 8 B only,
#                shorter runs (under a minute per VM run)
#   --mtu        netdev MTU of the guest's veth pair (default 1500: IB MTU
#                1024; 9000: IB MTU 4096)
#   --out        the results as TSV, default /tmp/srnic-bench-<date>.tsv
#   --json       the summary as one JSON document
#   --png        ib_write_bw medians vs message size, both stacks (gnuplot)
#   --wait-idle  before each VM run, wait up to SECS for the host to be idle
#                (other processes < 0.3 cores over 3 s), then run anyway
#   --rx-steer   srnic with receive steering on (sysfs srnic/rx_steer)
#   --tx-batch   srnic with trains on (sysfs srnic/tx_batch)
#   --no-spread  srnic with spreading off (sysfs srnic/rx_spread)
#   --summarize  no VM: summarize TSV files of earlier runs (their rounds
#                numbered on), print the table, write --json/--png
#
# Each VM run is tests/bench/bench_guest.sh in its own tests/vm/vmrun guest
# (2 vCPUs, 2 GiB): a single-thread memcpy rate, then two devices on a veth
# pair with policy routing, perftest in "ib" mode:
# ib_{write,read,send}_bw at 4 KiB, 64 KiB, 1 MiB, the 64 B message rate
# (ib_send_bw -s 64), ib_{write,send,read}_lat at 8 B, the time per QP
# create/destroy pair (tests/vm/qp_churn.py), and for each bandwidth run the
# guest's CPU cost (non-idle CPU-seconds of all vCPUs per GiB, from
# /proc/stat) and the bandwidth as a fraction of the memcpy rate. See that
# script for the details. A full VM run takes about 2-3 minutes.
#
# Output: the host load of each VM run, then a table (figure, unit, each
# stack's median [min-max] over the rounds, srnic/rxe ratio of the medians)
# on stdout (tools/bench_summary.py). Host load = CPU time used by
# processes other than this benchmark (/proc/stat busy time minus our own
# children's CPU time) per second of wall time, in cores; the VM wants both
# host cores. A VM run with more than 0.3 cores of it is "LOADED"; if any run
# is, the summary says the ratios are NOT comparable (exit status still 0).
# The TSV file: comment lines "# key: value" (date, host, kernel, mtu, mode,
# rounds, one per VM run), then a header and one row per figure per run:
#   round stack test size metric value unit veth_pkts attempts status host_load
# (test "vm": the run itself, value its wall time). The console log of each
# VM run is kept next to the TSV file (<out>.r<round>.<stack>.log).
#
# Environment: SRNIC_KO (default <repo>/srnic.ko) is passed to the guest, and
# so is every other SRNIC_* variable.
set -euo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
VMRUN=$REPO/tests/vm/vmrun
SUMMARY=$REPO/tools/bench_summary.py
# shellcheck source=tools/hostload_lib.sh
. "$REPO/tools/hostload_lib.sh"
stack=both mode=full out='' wait_idle=0 rounds=3 mtu=1500 summarize='' steer=0 batch=0 spread=1
sum_args=() tsvs=()

# usage [0]: the options; to stdout and exit 0 when asked for, else an error
usage() {
	if [ "${1:-2}" = 0 ]; then
		sed -n '7,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
	fi
	sed -n '7,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--stack) [ $# -ge 2 ] || usage; stack=$2; shift 2 ;;
	--rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
	--quick) mode=quick; shift ;;
	--mtu) [ $# -ge 2 ] || usage; mtu=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--json | --png) [ $# -ge 2 ] || usage; sum_args+=("$1" "$2"); shift 2 ;;
	--wait-idle) [ $# -ge 2 ] || usage; wait_idle=$2; shift 2 ;;
	--summarize) summarize=1; shift ;;
	--rx-steer) steer=1; shift ;;
	--tx-batch) batch=1; shift ;;
	--no-spread) spread=0; shift ;;
	-h | --help) usage 0 ;;
	-*) echo "bench.sh: unknown argument $1" >&2; usage ;;
	*) tsvs+=("$1"); shift ;;
	esac
done
if [ -n "$summarize" ]; then
	[ ${#tsvs[@]} -gt 0 ] || usage
	exec python3 "$SUMMARY" "${sum_args[@]}" "${tsvs[@]}"
fi
[ ${#tsvs[@]} -eq 0 ] || { echo "bench.sh: TSV files only with --summarize" >&2; usage; }
case $stack in
rxe | srnic) stacks=("$stack") ;;
both) stacks=(rxe srnic) ;;
*) usage ;;
esac
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: --rounds wants a positive number" >&2; usage; }
case $mtu in
1500 | 9000) ;;
*) echo "bench.sh: --mtu 1500 or 9000" >&2; usage ;;
esac
out=${out:-/tmp/srnic-bench-$(date +%Y%m%d-%H%M%S).tsv}
: >"$out" || { echo "bench.sh: cannot write $out" >&2; exit 2; }

# wait_for_idle SECS: until the host's busy time is < 0.3 cores over 3 s.
wait_for_idle() {
	local end=$((SECONDS + $1)) b0 b1 hz
	hz=$(getconf CLK_TCK)
	while :; do
		b0=$(busy_ticks)
		sleep 3
		b1=$(busy_ticks)
		if [ $(((b1 - b0) * 10 / hz / 3)) -lt 3 ]; then
			return 0
		fi
		if [ "$SECONDS" -ge "$end" ]; then
			echo "bench.sh: host still busy ($(awk -v d=$((b1 - b0)) -v hz="$hz" 'BEGIN { printf "%.1f", d / hz / 3 }') cores); running anyway"
			return 0
		fi
	done
}

# to_rows ROUND LOAD: the guest's BENCH-RESULT lines (stdin, without the
# tag) as TSV rows. Guest columns: stack test size bw mpps tmin ttyp tavg p99
# cores cpu_s_gib memcpy_frac pkts attempts status.
to_rows() {
	awk -F'\t' -v OFS='\t' -v r="$1" -v load="$2" '
	function row(metric, v, unit, st) {
		st = $15
		if (st == "ok" && v == "-") st = "n/a"
		print r, $1, $2, $3, metric, v, unit, $13, $14, st, load
	}
	$2 ~ /_bw$/ {
		row("bw_avg", $4, "MiB/s"); row("msg_rate", $5, "Mpps")
		row("cpu_cores", $10, "cores"); row("cpu_s_per_gib", $11, "s/GiB")
		row("memcpy_frac", $12, "x")
	}
	$2 ~ /_lat$/ { row("t_typical", $7, "us"); row("t_min", $6, "us"); row("t_avg", $8, "us"); row("p99", $9, "us") }
	$2 == "qp_churn" { row("t_avg", $8, "us") }
	$2 == "memcpy" { row("rate", $4, "MiB/s") }
	'
}

tmp=$(mktemp /tmp/srnic-bench.XXXXXX)
trap 'rm -f "$tmp" "$tmp.times"' EXIT
metas=() kernel=''

# one_run ROUND STACK: one VM run; its rows go to $tmp.
one_run() {
	local r=$1 s=$2 log=$out.r$1.$2.log rc m other k
	echo "bench.sh: === round $r/$rounds $s ($mode, MTU $mtu); console log $log"
	[ "$wait_idle" = 0 ] || wait_for_idle "$wait_idle"
	hostload_start "$tmp.times"
	set +e
	"$VMRUN" --timeout 900 --keep-log "$log" tests/bench/bench_guest.sh "$s" "$mode" "$mtu" "$steer" "$batch" "$spread" |
		grep --line-buffered -E '^(bench|vmrun):|^  (cli|srv)\|'
	rc=${PIPESTATUS[0]}
	set -e
	hostload_end "$tmp.times"
	wall=$HOST_WALL other=$HOST_OTHER m="$HOST_LOAD, vmrun exit $rc"
	m+=$(awk -F'\t' '$1 == "BENCH-META" && $2 == "ib_mtu" { printf ", IB MTU %s", $3; exit }' "$log")
	m+=$(awk -F'\t' '$1 == "BENCH-META" && $2 == "rx_steer" { printf ", rx_steer %s", $3; exit }' "$log")
	m+=$(awk -F'\t' '$1 == "BENCH-META" && $2 == "tx_batch" { printf ", tx_batch %s", $3; exit }' "$log")
	m+=$(awk -F'\t' '$1 == "BENCH-META" && $2 == "rx_spread" { printf ", rx_spread %s", $3; exit }' "$log")
	metas+=("run $r $s: $m")
	echo "bench.sh: round $r $s: $m"
	if awk -v o="$other" 'BEGIN { exit !(o > 0.3) }'; then
		echo "bench.sh: WARNING: round $r $s ran on a loaded host (other processes $other cores > 0.3); its figures are not comparable"
	fi
	printf '%s\t%s\tvm\t0\twall\t%s\ts\t-\t1\t%s\t%s\n' "$r" "$s" "$wall" \
		"$([ "$rc" = 0 ] && echo ok || echo "exit_$rc")" "$other" >>"$tmp"
	grep -a $'^BENCH-RESULT\t' "$log" | cut -f2- | to_rows "$r" "$other" >>"$tmp" || true
	k=$(sed -n 's/^bench: guest: //p' "$log" | head -n1)
	kernel=${kernel:-$k}
	[ "$rc" = 0 ] || echo "bench.sh: round $r $s: vmrun exited $rc (see $log)" >&2
}

for ((r = 1; r <= rounds; r++)); do
	for s in "${stacks[@]}"; do
		one_run "$r" "$s"
	done
done

{
	echo "# date: $(date -Is)"
	echo "# host: $(hostname), $(nproc) CPUs, $(uname -r)"
	echo "# kernel: ${kernel:-unknown}"
	echo "# mtu: $mtu"
	echo "# mode: $mode"
	echo "# rounds: $rounds"
	printf '# %s\n' "${metas[@]}"
	printf 'round\tstack\ttest\tsize\tmetric\tvalue\tunit\tveth_pkts\tattempts\tstatus\thost_load\n'
	cat "$tmp"
} >"$out"

python3 "$SUMMARY" "${sum_args[@]}" "$out"
echo "bench.sh: results in $out"
