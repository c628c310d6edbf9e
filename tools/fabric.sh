#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# fabric.sh: srnic on a leaf-spine fabric, on one machine. A measurement,
# not a test: no pass/fail thresholds.
#
#   tools/fabric.sh [--spines N] [--leaves N] [--hosts N] [--rate MBIT]
#                   [--ecn-kb KIB] [--secs S] [--qps N] [--out DIR]
#
#   --spines  spines, 2-4 (default 2)
#   --leaves  leaves, 2-4 (default 2)
#   --hosts   hosts per leaf, 1-4 (default 2)
#   --rate    every link's rate in Mbit/s, 0: unshaped (default 0)
#   --ecn-kb  queue at which a shaped link marks CE (RED), KiB; 0: no
#             marking, drop-tail (default 64)
#   --secs    traffic duration (default 5)
#   --qps     RC QPs per flow (default 4)
#   --out     results directory inside the checkout (default
#             build/fabric-<date>)
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
set -euo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=tests/vm/fabric_lib.sh
. "$REPO/tests/vm/fabric_lib.sh"
spines=2 leaves=2 hosts=2 rate=0 ecn=64 secs=5 qps=4 out=

usage() { sed -n '7,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--spines | --leaves | --hosts | --rate | --ecn-kb | --secs | --qps | --out)
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
		esac
		shift 2
		;;
	-h | --help) usage ;;
	*) echo "fabric.sh: unknown argument $1 (--help lists them)" >&2; exit 2 ;;
	esac
done
if ! err=$({ fab_check "$spines" "$leaves" "$hosts" "$rate" "$ecn" &&
	     _fab_int secs "$secs" 1 600 && _fab_int qps "$qps" 1 64; } 2>&1); then
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
"$REPO/tests/vm/vmrun" --timeout $((secs * 3 + 600)) "$REPO/tests/bench/fabric_guest.sh" \
	"$spines" "$leaves" "$hosts" "$rate" "$ecn" "$secs" "$qps" "$out" >"$out/guest.log" 2>&1 || rc=$?
grep -E '^(fabric|  )' "$out/guest.log" || true
[ "$rc" = 0 ] || echo "fabric.sh: the guest ended with $rc, see $out/guest.log" >&2

# The picture: spines on top, leaves, hosts below; fabric links as thick as
# their bytes (up + down), labelled in MB.
if command -v gnuplot >/dev/null && [ -s "$out/links.tsv" ]; then
	awk -v S="$spines" -v L="$leaves" -v H="$hosts" -v OUT="$out/fabric.png" '
	function x(i, n) { return (i - 0.5) * 10 / n }
	{ b[NR] = $3 + $4; lj[NR] = $1; si[NR] = $2; if (b[NR] > max) max = b[NR] }
	END {
		print "set terminal pngcairo size 900,520"
		print "set output \"" OUT "\""
		print "unset border; unset tics; unset key"
		print "set style textbox opaque noborder"
		print "set xrange [-0.5:10.5]; set yrange [-0.6:2.6]"
		print "set title \"srnic leaf-spine: bytes per fabric link (MB, up + down)\""
		for (n = 1; n <= NR; n++) {
			w = max ? 1 + 9 * b[n] / max : 1
			printf "set arrow from %f,1 to %f,2 nohead lw %f lc rgb \"#3060c0\"\n", x(lj[n], L), x(si[n], S), w
			# a third of the way up: crossing links keep their labels apart
			printf "set label \"%.1f\" at %f,1.3 center front boxed\n", b[n] / 1e6, x(lj[n], L) + (x(si[n], S) - x(lj[n], L)) / 3
		}
		for (j = 1; j <= L; j++)
			for (k = 1; k <= H; k++) {
				hx = x(j, L) + (k - (H + 1) / 2) * 0.8
				printf "set arrow from %f,1 to %f,0 nohead lw 1 lc rgb \"#909090\"\n", x(j, L), hx
				printf "set label \"h%dx%d\" at %f,-0.15 center\n", j, k, hx
			}
		for (i = 1; i <= S; i++) printf "set label \"spine %d\" at %f,2.2 center\n", i, x(i, S)
		for (j = 1; j <= L; j++) printf "set label \"leaf %d\" at %f,0.8 center\n", j, x(j, L)
		print "plot NaN notitle"
	}' "$out/links.tsv" | gnuplot && echo "fabric.sh: picture in $out/fabric.png" >&2
fi
exit "$rc"
