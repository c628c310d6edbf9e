#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of tools/fabric.sh --incast (runs inside tests/vm/vmrun):
#
#   incast_guest.sh SPINES RATE ECN_KB SPINE_RATE SECS MODES OUTDIR
#
# Builds the incast fabric of tests/vm/incast_lib.sh (SPINES spines, 4
# leaves, 3 hosts each, every link RATE Mbit/s marking CE from ECN_KB KiB)
# and runs the 8-to-1 incast for SECS seconds with DCQCN in each of MODES
# ("off on", "on" or "off"); then, when SPINE_RATE > 0, again with every
# spine's link down to the receiver's leaf shaped to SPINE_RATE (two
# bottlenecks). Writes OUTDIR/summary.txt (one inc_report line per run),
# OUTDIR/rate-<case>-<mode>.dat (case "incast" or "two"; "t r1 .. r8 e s",
# s and MiB/s) and prints the topology and the summary lines. Everything
# it creates is removed when it ends, however it ends. Exit 0 when every
# run's flows completed, 1 otherwise, 2 for bad arguments (one line).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh
. tests/vm/fabric_lib.sh
. tests/vm/incast_lib.sh

if [ $# -ne 7 ]; then
	echo "usage: incast_guest.sh SPINES RATE ECN_KB SPINE_RATE SECS MODES OUTDIR" >&2
	exit 2
fi
spines=$1 rate=$2 ecn=$3 srate=$4 secs=$5 modes=$6 out=$7
fab_check "$spines" 4 3 "$rate" "$ecn" || exit 2
_fab_int spine-rate "$srate" 0 10000 && _fab_int secs "$secs" 1 600 || exit 2
case $modes in
"off on" | "on off" | on | off) ;;
*) echo "incast: MODES must be \"off on\", on or off, not '$modes'" >&2; exit 2 ;;
esac
mkdir -p "$out" || exit 2
INC_OUT=$out

cleanup() {
	bg_cleanup >/dev/null 2>&1
	fab_down
}
trap cleanup EXIT
trap 'exit 130' INT TERM

srnic_load veth sch_htb sch_red cls_u32 || { echo "incast: srnic_load failed"; exit 1; }
inc_up "$spines" "$rate" "$ecn" || exit 1
fab_topology
echo "incast: senders fbh1x1 fbh1x2 fbh2x1 .. fbh4x2 (flows 1-8) -> receiver fbh1x3, ib_send_bw 64 KiB, $secs s from when all send"
: >"$out/summary.txt"
status=0
cases=incast
[ "$srate" -gt 0 ] && cases="incast two"
for c in $cases; do
	if [ "$c" = two ]; then
		inc_spine_rate "$srate" || { echo "incast: shaping the spine links failed"; exit 1; }
		label="two bottlenecks (spine links into leaf 1 at $srate Mbit/s)"
	else
		label="incast 8:1"
	fi
	for mode in $modes; do
		inc_dcqcn "$mode" || exit 1
		inc_run "$secs"
		inc_report "$label, DCQCN $mode" | tee -a "$out/summary.txt"
		cp "$INC_OUT/rate.dat" "$out/rate-$c-$mode.dat"
		[ "$INC_FAILED" = 0 ] || status=1
	done
done
exit "$status"
