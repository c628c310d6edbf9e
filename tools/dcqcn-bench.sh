#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# dcqcn-bench.sh: DCQCN on vs off in a congested topology, one VM run per
# incast size. A measurement, not a test: no pass/fail thresholds.
#
#   tools/dcqcn-bench.sh [--flows "2 4"] [--rate MBIT] [--secs SECS]
#                        [--out DIR]
#
#   --flows  incast sizes: senders sharing the bottleneck (default "2 4")
#   --rate   bottleneck rate in Mbit/s (default 20: about what the 2-vCPU
#            TCG guest forwards while senders flood it, so the htb is the
#            bottleneck; a heavily loaded host can push the guest below it)
#   --secs   duration of each run (default 10)
#   --out    results directory (default build/dcqcn-bench-<date>)
#
# Each incast size boots one tests/vm/vmrun guest running
# tests/bench/dcqcn_guest.sh: N senders (own netns and srnic device each) ->
# a router netns whose egress to the receiver is htb RATE + RED with ECN
# marking -> a receiver netns (tests/vm/dcqcn_lib.sh). N concurrent
# ib_write_bw flows run with DCQCN off, then on.
#
# Prints, per incast and mode: goodput, per-flow throughput, sender rate at
# the router, Jain's fairness index, qdisc drops and CE marks, srnic
# retransmissions and CNPs. Writes DIR/incastN/{summary.txt,rate-off.dat,
# rate-on.dat} and, if gnuplot is installed, DIR/dcqcn-rate.png: per-flow
# sender rate and the bottleneck's egress over time, one row per incast
# size, DCQCN off left, on right.
set -euo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
flows="2 4" rate=20 secs=10 out=

usage() { sed -n '7,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--flows) [ $# -ge 2 ] || usage; flows=$2; shift 2 ;;
	--rate) [ $# -ge 2 ] || usage; rate=$2; shift 2 ;;
	--secs) [ $# -ge 2 ] || usage; secs=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "dcqcn-bench.sh: unknown argument $1" >&2; usage ;;
	esac
done
out=${out:-$REPO/build/dcqcn-bench-$(date +%Y%m%d-%H%M%S)}
case $out in
"$REPO"/*) ;;
*) echo "dcqcn-bench.sh: --out must be inside the checkout (the guest writes it)" >&2; exit 2 ;;
esac
mkdir -p "$out"
[ -f "$REPO/srnic.ko" ] || make -C "$REPO" module >/dev/null

for n in $flows; do
	echo "dcqcn-bench: incast of $n flows, bottleneck $rate Mbit/s, $secs s per run" >&2
	"$REPO/tests/vm/vmrun" --timeout $((secs * 2 + 600)) \
		"$REPO/tests/bench/dcqcn_guest.sh" "$n" "$rate" "$secs" "$out/incast$n" \
		>"$out/incast$n.log" 2>&1 ||
		echo "dcqcn-bench: incast $n: guest failed, see $out/incast$n.log" >&2
done
echo
cat "$out"/incast*/summary.txt 2>/dev/null

if ! command -v gnuplot >/dev/null; then
	echo "dcqcn-bench: gnuplot not installed (tools/setup.sh): no picture" >&2
	exit 0
fi
rows=$(echo "$flows" | wc -w)
{
	echo "set terminal pngcairo size 1200,$((360 * rows)) font ',10'"
	echo "set output '$out/dcqcn-rate.png'"
	echo "set multiplot layout $rows,2 title 'srnic DCQCN: per-flow sender rate, bottleneck $rate Mbit/s ($(awk -v r="$rate" 'BEGIN { printf "%.2f", r / 8.388608 }') MiB/s)'"
	echo "set xlabel 'time (s)'; set ylabel 'MiB/s'; set grid; set key top right"
	for n in $flows; do
		for mode in off on; do
			f=$out/incast$n/rate-$mode.dat
			echo "set title 'incast $n, DCQCN $mode'"
			plot="plot"
			for i in $(seq "$n"); do
				plot+=" '$f' using 1:$((i + 1)) with linespoints title 'flow $i',"
			done
			plot+=" '$f' using 1:$((n + 2)) with lines lw 2 title 'bottleneck egress',"
			echo "${plot%,}, $(awk -v r="$rate" 'BEGIN { printf "%.3f", r / 8.388608 }') with lines dt 2 lc 'black' title 'bottleneck'"
		done
	done
	echo "unset multiplot"
} | gnuplot && echo "dcqcn-bench: picture: $out/dcqcn-rate.png"
