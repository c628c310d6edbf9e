#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scale, inside the VM (tests/vm/vmrun): SRNIC_SCALE_N (default 10000) RC
# QPs on srnic0 (nsA) and as many on srnic1 (nsB), QP i of one connected
# to QP i of the other (RTR, RTS), a SEND and an RDMA WRITE with every byte
# compared on pairs 0, N-1 and every 100th, then every QP destroyed
# (tests/vm/qp_scale.c, built here, libibverbs). The rxe provider maps each
# QP's SQ and RQ: 4 maps per pair, so vm.max_map_count is raised first.
#
# Checks (besides qp_scale's own: every create/modify/destroy succeeds, the
# sampled data arrives, kernel memory per QP in the last bucket of 1000
# pairs at most 2 times that of the first, i.e. no per-QP structure grows
# with the number of QPs):
#   `rdma resource show qp` lists as many QPs afterwards as before;
#   kernel memory (meminfo Slab + VmallocUsed + Percpu + PageTables, slab
#     caches shrunk first) is back to its baseline within 2 MiB + 2% of the
#     peak growth: what SLUB's partial slabs and the xarray's cached nodes
#     may keep, while a leak of even 100 bytes per QP (2 MB) shows;
#   srnic0 holds as many PDs and CQs as its max_pd and max_cq and not one
#     more (the next create fails with ENOMEM);
#   the kernel log holds no warning, oops, stall or lockup.
# Times are printed (the JSON lines of qp_scale), not checked: see
# tests/bench/scale_guest.sh for srnic against rxe.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

BIN=/tmp/qp_scale
LOG=/tmp/qp_scale.log
N=${SRNIC_SCALE_N:-10000}
SECS=600

# kmem: shrink every slab cache, then print the kernel memory in KiB: the
# sum, then Slab, VmallocUsed, Percpu and PageTables.
kmem() {
	local f
	for f in /sys/kernel/slab/*/shrink; do
		echo 1 >"$f" 2>/dev/null
	done
	awk '/^(Slab|VmallocUsed|Percpu|PageTables):/ { v[$1] = $2; s += $2 }
	     END { print s, v["Slab:"], v["VmallocUsed:"], v["Percpu:"],
		   v["PageTables:"] }' /proc/meminfo
}

nqp() { rdma resource show qp | grep -c .; }

dmesg -C
if ! t_check "build qp_scale.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$BIN" tests/vm/qp_scale.c -libverbs; then
	t_summary
	exit 1
fi
sysctl -qw vm.max_map_count=262144
ulimit -n 65536
srnic_pair_up

qp0=$(nqp)
read -r mem0 m0s m0v m0p m0t < <(kmem)
rc=0
with_timeout "$SECS" "$BIN" srnic0 "$G0" srnic1 "$G1" "$N" 100 2 \
	>"$LOG" 2>&1 || rc=$?
t_from_output qp_scale "$rc" "$(cat "$LOG")"
# Figures, not checks: microseconds per QP in each bucket of 1000 pairs.
for ph in create connect destroy; do
	echo "$ph us/QP by bucket: $(sed -n 's/^{"phase":"'"$ph"'".*"us_per_qp":\([0-9.]*\)}/\1/p' "$LOG" | tr '\n' ' ')"
done
grep '^qp_scale: {' "$LOG"

t_eq "rdma resource show qp: as many QPs as before" "$(nqp)" "$qp0"
peak=$(sed -n 's/^{"phase":"mem".*"kernel_kb":\([0-9-]*\).*/\1/p' "$LOG" |
	sort -n | tail -n 1)
read -r mem1 m1s m1v m1p m1t < <(kmem)
echo "kernel memory after - before, KiB: Slab $((m1s - m0s)), VmallocUsed $((m1v - m0v)), Percpu $((m1p - m0p)), PageTables $((m1t - m0t))"
tol=$((2048 + ${peak:-0} / 50))
t_check "kernel memory back to baseline: $((mem1 - mem0)) KiB after, peak ${peak:-?} KiB, tolerance $tol KiB" \
	test "$((mem1 - mem0))" -le "$tol" -a -n "$peak"
# The device's limits hold: as many PDs, CQs (and with SRNIC_SCALE_LIMIT_QP
# set, QPs: ~1 GiB of guest memory, minutes) as it reports, the next one
# fails. ib_core's MAD agent holds a PD, a CQ and QP1 already.
kinds="pd cq${SRNIC_SCALE_LIMIT_QP:+ qp}"
for k in $kinds; do
	max=$(ibv_devinfo -v -d srnic0 | awk -v k="max_$k:" '$1 == k { print $2 }')
	have=$(rdma resource show srnic0 | grep -o " $k [0-9]*" | awk '{ print $2 }')
	rc=0
	with_timeout 300 "$BIN" limit srnic0 "$k" "$((max - have))" \
		>"$LOG" 2>&1 || rc=$?
	t_from_output qp_scale "$rc" "$(cat "$LOG")" '{"phase":"limit"*'
done

# kernel log clean (no stall, lockup, warning or oops) before and after
srnic_pair_down 'rcu.*(stall|detected)|Call Trace'
t_summary
