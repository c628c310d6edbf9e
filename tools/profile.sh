#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# profile.sh: where the CPU time of one perftest run goes, for rxe or srnic,
# in a vmrun guest (perf record -a -g inside it). A measurement, not a test.
#
#   tools/profile.sh [--stack rxe|srnic] [--test ib_write_bw] [--size 65536]
#                    [--iters N] [--log FILE] [--tx-batch]
#
# Prints perftest's result, veth packets moved, a table of where the samples
# fell (path: tx, rx, rx-stack, other, user, idle; kind: icrc, copy,
# alloc/free, driver, stack, other) as shares and as CPU microseconds
# per veth packet, the 25 functions with the most samples of their own and
# the 15 kernel call chains (5 frames) with the most samples.
# See tests/bench/profile_guest.sh for how samples are classified. Needs
# srnic.ko built for the guest kernel (make module) for --stack srnic.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
stack=srnic test=ib_write_bw size=65536 iters='' log='' trains=''

usage() { sed -n '7,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	[ "$1" = --tx-batch ] && { trains=trains; shift; continue; }
	[ $# -ge 2 ] || usage
	case $1 in
	--stack) stack=$2 ;;
	--test) test=$2 ;;
	--size) size=$2 ;;
	--iters) iters=$2 ;;
	--log) log=$2 ;;
	*) usage ;;
	esac
	shift 2
done
case $stack in rxe | srnic) ;; *) usage ;; esac
[[ $test =~ ^ib_(write|read|send|atomic)_(bw|lat)$ ]] || usage
[[ $size =~ ^[0-9]+$ && $iters =~ ^[0-9]*$ ]] || usage
log=${log:-/tmp/srnic-profile-$stack-$test-$size.log}

cd "$REPO"
"$REPO/tests/vm/vmrun" --timeout 600 --keep-log "$log" \
	tests/bench/profile_guest.sh "$stack" "$test" "$size" "$iters" $trains |
	grep --line-buffered -E '^(profile|vmrun):'
echo "profile.sh: console log in $log"
