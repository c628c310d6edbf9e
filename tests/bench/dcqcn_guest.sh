#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of tools/dcqcn-bench.sh (runs inside tests/vm/vmrun):
#
#   dcqcn_guest.sh N RATE_MBIT SECS OUTDIR
#
# Builds the congested topology of tests/vm/dcqcn_lib.sh with N senders and
# a RATE_MBIT bottleneck, runs N concurrent ib_write_bw flows for SECS
# seconds with DCQCN off, then on, and writes to OUTDIR: summary.txt (one
# dq_report line per mode) and rate-off.dat / rate-on.dat (per-flow sender
# rate at the router and the bottleneck's egress over time: "t r1 .. rN e",
# s and MiB/s).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh
. tests/vm/dcqcn_lib.sh

n=$1 rate=$2 secs=$3 out=$4
mkdir -p "$out"
srnic_load veth rdma_ucm sch_htb sch_red || exit 1
dq_setup "$n" "$rate" || { echo "dcqcn_guest: topology setup failed"; exit 1; }
: >"$out/summary.txt"
for mode in off on; do
	dq_dcqcn "$mode" || exit 1
	dq_run "$secs" 65536
	dq_report "incast $n, DCQCN $mode" | tee -a "$out/summary.txt"
	cp "$DQ_OUT/rate.dat" "$out/rate-$mode.dat"
done
