#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh: perftest numbers for rxe and/or srnic, one VM run per stack.
# A measurement, not a test: there are no pass/fail thresholds.
#
#   tools/bench.sh [--stack rxe|srnic|both] [--quick] [--out FILE]
#                  [--wait-idle SECS]
#
#   --stack      which stack(s) to measure (default: both)
#   --quick      65536 B only, shorter runs (about 1 minute per stack)
#   --out        machine-readable results (TSV), default
#                /tmp/srnic-bench-<date>.tsv
#   --wait-idle  before each stack, wait up to SECS for the host to be idle
#                (other processes < 0.3 cores over 3 s), then run anyway
#
# Each stack runs tests/bench/bench_guest.sh in its own tests/vm/vmrun guest
# (2 vCPUs, 2 GiB): two devices on a veth pair with policy routing, perftest
# in "ib" mode, ib_{write,read,send}_bw at 64/4096/65536 B and
# ib_{write,send}_lat at 8 B, and the time per QP create/destroy pair
# (qp_churn, tests/vm/qp_churn.py). See that script for the details. The
# full rxe run takes about 2 minutes.
#
# Output: a table (test, size, metric, rxe, srnic, srnic/rxe) on stdout, and
# the TSV file: comment lines "# key: value" (date, kernel, per-stack wall
# time and host contention), then a header and one row per figure:
#   stack test size metric value unit veth_pkts attempts status
# Host contention = CPU time used by processes other than this benchmark
# (/proc/stat busy time minus our own children's CPU time) per second of wall
# time, in cores; the VM wants both host cores, so only compare runs where it
# is about 0. The console log of each VM run is kept next to the TSV file
# (<out>.<stack>.log).
#
# Environment: SRNIC_KO (default <repo>/srnic.ko) is passed to the guest, and
# so is every other SRNIC_* variable.
set -euo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
VMRUN=$REPO/tests/vm/vmrun
stack=both quick= out= wait_idle=0

usage() { sed -n '7,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--stack) [ $# -ge 2 ] || usage; stack=$2; shift 2 ;;
	--quick) quick=quick; shift ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--wait-idle) [ $# -ge 2 ] || usage; wait_idle=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "bench.sh: unknown argument $1" >&2; usage ;;
	esac
done
case $stack in
rxe|srnic) stacks=("$stack") ;;
both) stacks=(rxe srnic) ;;
*) usage ;;
esac
out=${out:-/tmp/srnic-bench-$(date +%Y%m%d-%H%M%S).tsv}
: >"$out" || { echo "bench.sh: cannot write $out" >&2; exit 2; }

# busy_ticks: non-idle jiffies of all CPUs (/proc/stat, USER_HZ).
busy_ticks() {
	local _cpu user nice sys idle iowait irq softirq steal _rest
	read -r _cpu user nice sys idle iowait irq softirq steal _rest </proc/stat
	echo $((user + nice + sys + irq + softirq + steal))
}
# child_cpu: CHILD_CPU = user+sys seconds of this shell's waited-for children
# (`times` must run in this shell: never call this in a $(...) subshell).
child_cpu() {
	times >"$results.times"
	CHILD_CPU=$(awk 'NR == 2 { split($0, f, /[ms ]+/); print f[1] * 60 + f[2] + f[3] * 60 + f[4] }' "$results.times")
}

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

declare -A meta=()
results=$(mktemp /tmp/srnic-bench.XXXXXX)
trap 'rm -f "$results" "$results.times"' EXIT
kernel=

for s in "${stacks[@]}"; do
	log=$out.$s.log
	echo "bench.sh: === $s ($([ -n "$quick" ] && echo quick || echo full)); console log $log"
	[ "$wait_idle" = 0 ] || wait_for_idle "$wait_idle"
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	child_cpu
	b0=$(busy_ticks) c0=$CHILD_CPU t0=$EPOCHREALTIME
	set +e
	"$VMRUN" --timeout 600 --keep-log "$log" tests/bench/bench_guest.sh "$s" $quick |
		grep --line-buffered -E '^(bench|vmrun):|^  (cli|srv)\|'
	rc=${PIPESTATUS[0]}
	set -e
	child_cpu
	t1=$EPOCHREALTIME b1=$(busy_ticks) c1=$CHILD_CPU
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	hz=$(getconf CLK_TCK)
	meta[$s]=$(awk -v t0="$t0" -v t1="$t1" -v b0="$b0" -v b1="$b1" -v c0="$c0" -v c1="$c1" -v hz="$hz" \
		'BEGIN { w = t1 - t0; o = ((b1 - b0) / hz - (c1 - c0)) / w; if (o < 0) o = 0;
			 printf "wall %.0f s, benchmark CPU %.2f cores, other processes %.2f cores", w, (c1 - c0) / w, o }')
	meta[$s]+=", loadavg $load0 -> $load1, vmrun exit $rc"
	echo "bench.sh: $s: ${meta[$s]}"
	case ${meta[$s]} in
	*"other processes 0.0"* | *"other processes 0.1"* | *"other processes 0.2"*) ;;
	*) echo "bench.sh: WARNING: $s ran on a busy host; its figures are not comparable" ;;
	esac
	grep -a $'^BENCH-RESULT\t' "$log" | cut -f2- >>"$results" || true
	k=$(sed -n 's/^bench: guest: //p' "$log" | head -n1)
	kernel=${kernel:-$k}
	[ "$rc" = 0 ] || echo "bench.sh: $s: vmrun exited $rc (see $log)" >&2
done

# results columns: stack test size bw mpps tmin ttyp tavg p99 pkts attempts status
{
	echo "# srnic benchmark, $(date -Is)"
	echo "# guest: ${kernel:-unknown}; host: $(nproc) CPUs"
	for s in "${stacks[@]}"; do
		echo "# $s: ${meta[$s]}"
	done
	printf 'stack\ttest\tsize\tmetric\tvalue\tunit\tveth_pkts\tattempts\tstatus\n'
	awk -F'\t' -v OFS='\t' '
	function row(metric, v, unit) { print $1, $2, $3, metric, v, unit, $10, $11, $12 }
	$2 ~ /_bw$/  { row("bw_avg", $4, "MiB/s"); row("msg_rate", $5, "Mpps") }
	$2 ~ /_lat$/ { row("t_typical", $7, "us"); row("t_min", $6, "us"); row("t_avg", $8, "us"); row("p99", $9, "us") }
	$2 == "qp_churn" { row("t_avg", $8, "us") }
	' "$results"
} >"$out"

# the table: one line per (test, size, metric) shown
awk -F'\t' '
	/^#/ || $1 == "stack" { next }
	$4 !~ /^(bw_avg|msg_rate|t_typical)$/ && $2 != "qp_churn" { next }
	{
		k = $2 SUBSEP $3 SUBSEP $4
		if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		v[k, $1] = ($9 == "ok") ? $5 : $9
		unit[k] = $6
	}
	END {
		printf "%-13s %6s  %-16s %10s %10s %10s\n", "test", "size", "metric", "rxe", "srnic", "srnic/rxe"
		for (i = 1; i <= n; i++) {
			k = order[i]; split(k, p, SUBSEP)
			r = ((k, "rxe") in v) ? v[k, "rxe"] : "-"
			s = ((k, "srnic") in v) ? v[k, "srnic"] : "-"
			ratio = (r ~ /^[0-9.]+$/ && s ~ /^[0-9.]+$/ && r + 0 > 0) ? sprintf("%.2f", s / r) : "-"
			printf "%-13s %6s  %-16s %10s %10s %10s\n", p[1], p[2], p[3] " " unit[k], r, s, ratio
		}
	}' "$out"
echo "bench.sh: results in $out"
