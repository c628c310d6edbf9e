#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# fabric.sh: srnic on a leaf-spine fabric, on one machine (or, --pair, two:
# srnic <-> rdma_rxe). A measurement, not a test: no pass/fail thresholds
# (but --pair's, which runs a test).
#
#   tools/fabric.sh [--spines N] [--leaves N] [--hosts N] [--rate MBIT]
#                   [--ecn-kb KIB] [--secs S] [--qps N] [--out DIR]
#   tools/fabric.sh --incast [--dcqcn on|off|both] [--spine-rate MBIT]
#                   [--spines N] [--rate MBIT] [--ecn-kb KIB] [--secs S]
#                   [--out DIR]
#
#   --spines  spines, 2-4 (default 2)
#   --leaves  leaves, 2-4 (default 2)
#   --hosts   hosts per leaf, 1-4 (default 2)
#   --rate    every link's rate in Mbit/s, 0: unshaped (default 0;
#             --incast: 20, 1 or more)
#   --ecn-kb  queue at which a shaped link marks CE (RED), KiB; 0: no
#             marking, drop-tail (default 64; --incast: 5)
#   --secs    traffic duration (default 5; --incast: 10 per run)
#   --qps     RC QPs per flow (default 4)
#   --out     results directory inside the checkout (default
#             build/fabric-<date>)
#   --incast  8 senders on the 4 leaves (2 each) to 1 receiver (a third
#             host on leaf 1): 4 leaves x 3 hosts, 1 QP per flow
#   --dcqcn   with --incast: DCQCN off, on, or both, one run each (both)
#   --spine-rate  with --incast: then again with every spine's link down
#             to the receiver's leaf at MBIT, a second bottleneck; 0: not
#             (default: a quarter of --rate)
#   tools/fabric.sh --pair [--spines N] [--leaves N] [--hosts N] [--rate MBIT]
#                   [--ecn-kb KIB] [--qps N] [--out DIR]
#   --pair    two guests (vmrun --pair): spines and leaves 1..N-1 with srnic
#             hosts on guest a, leaf N with an rdma_rxe host on guest b
#             (default 3 leaves, 1 host per leaf, 200 Mbit/s, 32 KiB, 64
#             QPs); runs tests/vm/test_fabric_pair.sh at that size
#
# Boots one tests/vm/vmrun guest running tests/bench/fabric_guest.sh: the
# leaf-spine of tests/vm/fabric_lib.sh in network namespaces (every leaf
# linked to every spine, ECMP on the UDP ports, links shaped like switch
# ports with --rate), an srnic device on every host, and every host sending
# to its counterpart on the next leaf at once. Prints the topology, each
# flow's bandwidth and each fabric link's bytes; writes DIR/flows.tsv,
# DIR/links.tsv, the guest's log DIR/guest.log and, with gnuplot,
# DIR/fabric.png: the topology with each link drawn as thick as the bytes it
# carried. The guest removes everything it created when it ends; Ctrl-C
# stops the guest (vmrun) and this script.
#
# --incast boots tests/bench/incast_guest.sh instead (tests/vm/incast_lib.sh):
# the 8 flows (ib_send_bw 64 KiB, 1 QP each, CQ events) run at once for
# --secs from when all 8 send, with DCQCN off and on, then the same with
# two bottlenecks; the 6 remote senders are pinned to the spines in turn,
# not hashed by ECMP. Prints per run
# goodput against the receiver link, each flow's MiB/s, Jain's index, qdisc
# drops (all ports, the receiver link, the spine links into leaf 1), CE
# marks, retransmissions, CNPs and the guest's CPU; writes DIR/summary.txt,
# DIR/rate-<case>-<mode>.dat and, with gnuplot, DIR/incast-rate.png: each
# sender's rate and the bottlenecks' egress over time, one row per case,
# one column per DCQCN mode.
#
# --pair boots two guests (tests/vm/vmrun --pair) running
# tests/vm/test_fabric_pair.sh: the same fabric split across them (spines
# and leaves 1..N-1, srnic on their hosts, on guest a; leaf N, rdma_rxe on
# its one host, the root netns, on guest b; each link of leaf N to a spine a
# VLAN of its own on the guests' virtio-net link). Prints the topology,
# ib_write_bw -q QPS srnic -> rxe and rxe -> srnic with each spine's share
# of the bytes that crossed, a spine link cut under data-verified
# transfers both ways, each fabric link's bytes, and the test's checks;
# writes DIR/flows.tsv, DIR/links.tsv, DIR/guest.log and DIR/fabric.png.
set -euo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=tests/vm/fabric_lib.sh
. "$REPO/tests/vm/fabric_lib.sh"
spines=2 leaves='' hosts='' rate='' ecn='' secs='' qps='' out='' incast=0 dcqcn='' srate='' pair=0

usage() { sed -n '8,36p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--spines | --leaves | --hosts | --rate | --ecn-kb | --secs | --qps | --out | --dcqcn | --spine-rate)
		[ $# -ge 2 ] || { echo "fabric.sh: $1 needs a value" >&2; exit 2; }
		case $1 in
		--spines) spines=$2 ;;
		--leaves) leaves=$2 ;;
		--hosts) hosts=$2 ;;
		--rate) rate=$2 ;;
		--ecn-kb) ecn=$2 ;;
		--secs) secs=$2 ;;
		--qps) qps=$2 ;;
		--out) out=$2 ;;
		--dcqcn) dcqcn=$2 ;;
		--spine-rate) srate=$2 ;;
		esac
		shift 2
		;;
	--incast) incast=1; shift ;;
	--pair) pair=1; shift ;;
	-h | --help) usage ;;
	*) echo "fabric.sh: unknown argument $1 (--help lists them)" >&2; exit 2 ;;
	esac
done
if [ "$pair" = 1 ]; then
	for o in incast secs dcqcn srate; do
		[ -z "${!o#0}" ] || { echo "fabric.sh: --pair takes no --${o/srate/spine-rate}" >&2; exit 2; }
	done
	leaves=${leaves:-3} hosts=${hosts:-1} rate=${rate:-200} ecn=${ecn:-32} qps=${qps:-64} secs=1 srate=0
elif [ "$incast" = 1 ]; then
	for o in leaves hosts qps; do
		[ -z "${!o}" ] || { echo "fabric.sh: --incast has 4 leaves, 3 hosts per leaf and 1 QP per flow: no --$o" >&2; exit 2; }
	done
	leaves=4 hosts=3 qps=1 rate=${rate:-20} ecn=${ecn:-5} secs=${secs:-10} dcqcn=${dcqcn:-both}
	case $dcqcn in
	on | off) ;;
	both) dcqcn="off on" ;;
	*) echo "fabric.sh: --dcqcn must be on, off or both, not '$dcqcn'" >&2; exit 2 ;;
	esac
	[[ $rate =~ ^[0-9]+$ ]] && [ "$rate" -ge 1 ] ||
		{ echo "fabric.sh: --incast needs shaped links: --rate from 1, not '$rate'" >&2; exit 2; }
	srate=${srate:-$((rate / 4))}
else
	for o in dcqcn srate; do
		[ -z "${!o}" ] || { echo "fabric.sh: --${o/srate/spine-rate} needs --incast" >&2; exit 2; }
	done
	leaves=${leaves:-2} hosts=${hosts:-2} rate=${rate:-0} ecn=${ecn:-64} secs=${secs:-5} qps=${qps:-4} srate=0
fi
if ! err=$({ fab_check "$spines" "$leaves" "$hosts" "$rate" "$ecn" &&
	     _fab_int secs "$secs" 1 600 && _fab_int qps "$qps" 1 64 &&
	     _fab_int spine-rate "$srate" 0 10000; } 2>&1); then
	echo "${err/#fabric:/fabric.sh:}" >&2
	exit 2
fi
out=${out:-$REPO/build/fabric-$(date +%Y%m%d-%H%M%S)}
case $out in
/*) ;;
*) out=$PWD/$out ;;
esac
case $out in
"$REPO"/*) ;;
*) echo "fabric.sh: --out must be inside the checkout (the guest writes it)" >&2; exit 2 ;;
esac
mkdir -p "$out"
[ -f "$REPO/srnic.ko" ] || make -C "$REPO" module >/dev/null

echo "fabric.sh: $spines spines, $leaves leaves, $hosts hosts per leaf, rate ${rate} Mbit/s, results in $out" >&2
rc=0
if [ "$pair" = 1 ]; then
	: >"$out/flows.tsv"
	: >"$out/links.tsv"
	"$REPO/tests/vm/vmrun" --pair --timeout 900 "$REPO/tests/vm/test_fabric_pair.sh" \
		"$spines" "$leaves" "$hosts" "$rate" "$ecn" "$qps" "$out" >"$out/guest.log" 2>&1 || rc=$?
	sed -n 's/^\[a\] //p' "$out/guest.log" | grep -E '^(fabric|  [^|]|FAIL|[0-9]+ passed)' || true
	[ "$rc" = 0 ] || echo "fabric.sh: the guests ended with $rc, see $out/guest.log" >&2
fi
if [ "$incast" = 1 ]; then
	"$REPO/tests/vm/vmrun" --timeout $((secs * 8 + 600)) "$REPO/tests/bench/incast_guest.sh" \
		"$spines" "$rate" "$ecn" "$srate" "$secs" "$dcqcn" "$out" >"$out/guest.log" 2>&1 || rc=$?
	grep -E '^(fabric|incast|two|  )' "$out/guest.log" || true
	[ "$rc" = 0 ] || echo "fabric.sh: the guest ended with $rc, see $out/guest.log" >&2
	if ! command -v gnuplot >/dev/null; then
		echo "fabric.sh: gnuplot not installed (tools/setup.sh): no picture" >&2
		exit "$rc"
	fi
	cases=incast
	[ "$srate" -gt 0 ] && cases="incast two"
	rows=$(echo "$cases" | wc -w) cols=$(echo "$dcqcn" | wc -w)
	mib=$(awk -v r="$rate" 'BEGIN { printf "%.3f", r / 8.388608 }')
	smib=$(awk -v r="$srate" -v s="$spines" 'BEGIN { printf "%.3f", r * s / 8.388608 }')
	{
		echo "set terminal pngcairo size $((600 * cols)),$((380 * rows)) font ',10'"
		echo "set output '$out/incast-rate.png'"
		echo "set multiplot layout $rows,$cols title \"srnic incast 8:1 on a leaf-spine ($spines spines, 4 leaves): each sender's rate into its leaf, links $rate Mbit/s ($mib MiB/s)\""
		echo "set xlabel 'time (s)'; set ylabel 'MiB/s'; set grid; set key top right font ',8'"
		for c in $cases; do
			for mode in $dcqcn; do
				f=$out/rate-$c-$mode.dat
				if [ "$c" = two ]; then
					echo "set title 'two bottlenecks: spine links into leaf 1 at $srate Mbit/s each, DCQCN $mode'"
				else
					echo "set title 'incast, DCQCN $mode'"
				fi
				plot="plot"
				for i in $(seq 8); do
					plot+=" '$f' using 1:$((i + 1)) with linespoints pt 7 ps 0.4 title 'flow $i (h$(((i - 1) / 2 + 1))x$(((i - 1) % 2 + 1)))',"
				done
				plot+=" '$f' using 1:10 with lines lw 3 lc 'black' title 'receiver link egress',"
				[ "$c" = two ] && plot+=" '$f' using 1:11 with lines lw 2 lc 'red' title 'spine links into leaf 1',"
				plot+=" $mib with lines dt 2 lc 'black' title 'receiver link rate',"
				[ "$c" = two ] && plot+=" $smib with lines dt 2 lc 'red' title 'spine links rate',"
				echo "${plot%,}"
			done
		done
		echo "unset multiplot"
	} | gnuplot && echo "fabric.sh: picture in $out/incast-rate.png" >&2
	exit "$rc"
fi
if [ "$pair" = 0 ]; then
	"$REPO/tests/vm/vmrun" --timeout $((secs * 3 + 600)) "$REPO/tests/bench/fabric_guest.sh" \
		"$spines" "$leaves" "$hosts" "$rate" "$ecn" "$secs" "$qps" "$out" >"$out/guest.log" 2>&1 || rc=$?
	grep -E '^(fabric|  )' "$out/guest.log" || true
	[ "$rc" = 0 ] || echo "fabric.sh: the guest ended with $rc, see $out/guest.log" >&2
fi

# The picture: spines on top, leaves, hosts below; fabric links as thick as
# their bytes (up + down), labelled in MB.
if command -v gnuplot >/dev/null && [ -s "$out/links.tsv" ]; then
	awk -v S="$spines" -v L="$leaves" -v H="$hosts" -v P="$pair" -v OUT="$out/fabric.png" '
	function x(i, n) { return (i - 0.5) * 10 / n }
	{ b[NR] = $3 + $4; lj[NR] = $1; si[NR] = $2; if (b[NR] > max) max = b[NR] }
	END {
		print "set terminal pngcairo size 900,520"
		print "set output \"" OUT "\""
		print "unset border; unset tics; unset key"
		print "set style textbox opaque noborder"
		print "set xrange [-0.5:10.5]; set yrange [-0.6:2.6]"
		print "set title \"" (P ? "srnic (VM a) <-> rdma_rxe (VM b) leaf-spine" : "srnic leaf-spine") ": bytes per fabric link (MB, up + down)\" noenhanced"
		for (n = 1; n <= NR; n++) {
			w = max ? 1 + 9 * b[n] / max : 1
			printf "set arrow from %f,1 to %f,2 nohead lw %f lc rgb \"#3060c0\"\n", x(lj[n], L), x(si[n], S), w
			# a third of the way up: crossing links keep their labels apart
			printf "set label \"%.1f\" at %f,1.3 center front boxed\n", b[n] / 1e6, x(lj[n], L) + (x(si[n], S) - x(lj[n], L)) / 3
		}
		for (j = 1; j <= L; j++)
			for (k = 1; k <= (P && j == L ? 1 : H); k++) {
				hx = x(j, L) + (k - ((P && j == L ? 1 : H) + 1) / 2) * 0.8
				printf "set arrow from %f,1 to %f,0 nohead lw 1 lc rgb \"#909090\"\n", x(j, L), hx
				if (P && j == L)
					printf "set label \"rxe0 (guest b)\" at %f,-0.15 center\n", hx
				else
					printf "set label \"h%dx%d%s\" at %f,-0.15 center\n", j, k, P ? " srnic" : "", hx
			}
		for (i = 1; i <= S; i++) printf "set label \"spine %d\" at %f,2.2 center\n", i, x(i, S)
		for (j = 1; j <= L; j++) printf "set label \"leaf %d\" at %f,0.8 center\n", j, x(j, L)
		print "plot NaN notitle"
	}' "$out/links.tsv" | gnuplot && echo "fabric.sh: picture in $out/fabric.png" >&2
fi
exit "$rc"
