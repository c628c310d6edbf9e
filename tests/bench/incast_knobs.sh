#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DCQCN knob sets against the 8-to-1 incast (an experiment, not a test; runs
# inside tests/vm/vmrun):
#
#   tests/vm/vmrun --timeout 900 tests/bench/incast_knobs.sh ECN_KB SET...
#
# Builds tests/vm/incast_lib.sh's fabric (2 spines, 4 leaves, 3 hosts each,
# 20 Mbit/s links marking CE from ECN_KB KiB), turns DCQCN on, and for each
# SET runs the incast for SRNIC_INCX_SECS seconds (default 8) and prints one
# inc_report line "CFG SET: ...". A SET is "def" (srnic's defaults) or
# comma-separated roce_rp knobs, e.g. rpg_time_reset=100000,rate_reduce_
# monitor_period=20000 (roce_np's prefixed np., e.g. np.min_time_between_
# cnps=10000); every set starts from srnic's defaults (read from
# the fresh devices); with SRNIC_INCX_DUMP=1 also the rate samples.
# README.md "DCQCN scaled to the fabric" has what it measured.
set -u
cd "$(dirname "$0")/../.." || exit 1
# inc_dcqcn on leaves the knobs alone: every set says its own
SRNIC_INC_RP_KNOBS=none
. tests/vm/lib.sh
. tests/vm/fabric_lib.sh
. tests/vm/incast_lib.sh

if [ $# -lt 2 ]; then
	echo "usage: incast_knobs.sh ECN_KB SET..." >&2
	exit 2
fi
ecn=$1
shift
INC_OUT=$(mktemp -d)
trap 'bg_cleanup >/dev/null 2>&1; fab_down' EXIT
trap 'exit 130' INT TERM

setk() { # [np.]KNOB VALUE on every host (roce_np's with np., else roce_rp's)
	local d dir=roce_rp k=$1
	[ "${k#np.}" = "$k" ] || { dir=roce_np; k=${k#np.}; }
	for d in $(inc_devs); do
		echo "$2" >"/sys/class/infiniband/$d/$dir/$k" || return 1
	done
}

srnic_load veth sch_htb sch_red cls_u32 || { echo "incast_knobs: srnic_load failed"; exit 1; }
inc_up 2 20 "$ecn" || { echo "incast_knobs: inc_up failed"; exit 1; }
# srnic's defaults: every roce_rp knob of a device nothing has changed yet
declare -A DEF=()
for f in /sys/class/infiniband/fb1x1/roce_rp/*; do
	DEF[${f##*/}]=$(<"$f")
done
for f in /sys/class/infiniband/fb1x1/roce_np/*; do
	[ "${f##*/}" = enable ] || DEF[np.${f##*/}]=$(<"$f")
done
for set in "$@"; do
	for k in "${!DEF[@]}"; do
		setk "$k" "${DEF[$k]}" || exit 1
	done
	inc_dcqcn on || exit 1
	if [ "$set" != def ]; then
		IFS=, read -ra kv <<<"$set"
		for x in "${kv[@]}"; do
			setk "${x%%=*}" "${x#*=}" || { echo "incast_knobs: bad set '$set'"; exit 2; }
		done
	fi
	inc_run "${SRNIC_INCX_SECS:-8}"
	inc_report "CFG $set"
	# SRNIC_INCX_DUMP=1: the samples too ("t r1 .. r8 e s g", MiB/s)
	[ -z "${SRNIC_INCX_DUMP:-}" ] || sed 's/^/  /' "$INC_OUT/rate.dat"
done
