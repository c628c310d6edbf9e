#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Incast on the leaf-spine (issue 16 item 6), inside the VM (tests/vm/vmrun
# tests/vm/test_incast.sh): tests/vm/incast_lib.sh's fabric, 2 spines x 4
# leaves x 3 hosts, every link 20 Mbit/s (2.38 MiB/s) with RED marking CE
# from 5 KiB, 150 KiB buffers; 8 senders (2 per leaf, 6 of them across the
# spines) -> 1 receiver (fbh1x3), one ib_send_bw RC flow each, 8 s from
# when all send. Figures are taken over the samples in which all 8 flows
# are under way.
#   - tools/fabric.sh --incast refuses bad options with one line and exit 2
# DCQCN on means srnic's with incast_lib.sh's fabric scaling
# ($SRNIC_INC_RP_KNOBS: an increase every 50 ms, additive from the first
# period after a cut; "none" runs srnic's defaults, whose figures README.md
# "Incast on the fabric" keeps).
#   - incast, DCQCN off, then on. On: no flow fails, CNPs sent and
#     handled; the receiver link busy (median egress >= INC_T_BUSY x its
#     rate, default 0.75; measured 0.86-0.92); goodput (that egress x the share of the
#     receiver's packets that were new, sample by sample) >=
#     INC_T_GOODPUT x its rate (default 0.6; measured 0.84-0.92 here,
#     0.70 in one CI run, the issue's 0.8; srnic's default DCQCN knobs
#     give 0.42-0.57); Jain's
#     index of the 8 flows >= 0.9 (measured 1.0); qdisc drops <=
#     INC_T_DROPS % (default 30; measured 8-15 %) and retransmissions <=
#     INC_T_RETX % (default 40; measured 14-22 %) of DCQCN off's; the
#     guest's CPU is not the limit (>= 20 % idle while the flows send)
#   - the 6 remote flows pinned 3 to each spine (incast_lib.sh: ECMP's
#     per-boot hash put all 6 on one spine in a CI run): each sender's
#     route to the receiver on its leaf names its spine
#   - two bottlenecks: every spine's link down to leaf 1 shaped to 5
#     Mbit/s, so the 6 remote flows share 10 Mbit/s and the 2 local ones
#     the rest of the receiver link. DCQCN off, then on. On: no flow
#     fails, each spine link carries >= 0.35 of the spine links' bytes,
#     both bottlenecks busy (each >= INC_T_BUSY of its rate;
#     measured 0.89-0.90 and 0.96-1.0), the local flows get more than the remote ones
#     (the spine links hold those), drops <= INC_T_DROPS % (measured 14 %)
#     and retransmissions <= INC_T_RETX % (measured 17-21 %) of off's
#   - nothing left: no fb* namespace, no srnic device; no kernel warnings
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh
# shellcheck source=tests/vm/fabric_lib.sh
. tests/vm/fabric_lib.sh
# shellcheck source=tests/vm/incast_lib.sh
. tests/vm/incast_lib.sh

RATE=20 ECN=5 SRATE=5 SECS=${INC_TEST_SECS:-8}
# margins over what was measured (3-4 runs each, below): a CI host runs
# this once, and DCQCN doing nothing gives ~100 %
T_DROPS=${INC_T_DROPS:-30} T_RETX=${INC_T_RETX:-40} T_GOODPUT=${INC_T_GOODPUT:-0.6}
T_BUSY=${INC_T_BUSY:-0.75}
INC_OUT=$(mktemp -d)
# lib.sh's EXIT trap counts an early end; the fabric goes first
trap 'rc=$?; fab_down; (exit $rc); _t_exit' EXIT

for bad in "--incast --leaves 2" "--incast --dcqcn maybe" "--incast --rate 0" \
	"--incast --spine-rate x" "--dcqcn on"; do
	# shellcheck disable=SC2086 # the options
	err=$(tools/fabric.sh $bad 2>&1)
	rc=$?
	t_check "tools/fabric.sh $bad: exit 2 with one line ($err)" \
		test "$rc" = 2 -a "$(printf '%s\n' "$err" | wc -l)" = 1
done

srnic_load veth sch_htb sch_red cls_u32 || exit 1
dmesg -C
t_check "fabric: 2 spines x 4 leaves x 3 hosts, $RATE Mbit/s links, srnic on 9 hosts" \
	inc_up 2 "$RATE" "$ECN"
fab_topology
MIBS=$(inc_mibs "$RATE")
# each remote sender's packets leave its leaf for the spine it is pinned to
for n in $(seq 3 8); do
	read -r j k <<<"$(_inc_host "$n")"
	i=$(inc_spine "$n")
	via=$(ip -n "fbl$j" route get 10.1.3.2 from "10.$j.$k.2" iif "toh$k" 2>&1 |
		grep -o 'via [0-9.]* dev [a-z0-9]*')
	t_eq "fbh${j}x$k's flow to the receiver pinned to spine $i" "$via" \
		"via 172.$((16 + i)).$j.2 dev tos$i"
done
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
# bytes each spine sent down to leaf 1 so far
spine_down() { fab_link_bytes | awk '$1 == 1 { printf "%s ", $4 }'; }

# --- incast 8:1 ---------------------------------------------------------------
t_check "DCQCN off on every device" inc_dcqcn off
inc_run "$SECS"
inc_report "incast 8:1, DCQCN off"
cp "$INC_OUT/rate.dat" "$INC_OUT/rate-incast-off.dat"
OFF_DROPS=$INC_DROPS OFF_RETX=$INC_RETX
t_check "DCQCN off: the receiver link drops ($INC_RX_DROPS)" test "$INC_RX_DROPS" -gt 0
t_eq "DCQCN off: no CNP sent" "$INC_CNP_SENT" 0

t_check "DCQCN on on every device" inc_dcqcn on
inc_run "$SECS"
inc_report "incast 8:1, DCQCN on"
cp "$INC_OUT/rate.dat" "$INC_OUT/rate-incast-on.dat"
t_eq "DCQCN on: every flow sent and none failed" "$INC_FAILED" 0
t_check "DCQCN on: all 8 flows under way together for >= 4 samples ($INC_WINDOW)" \
	test "$INC_WINDOW" -ge 4
t_check "DCQCN on: the receiver sent CNPs ($INC_CNP_SENT), the senders handled them ($INC_CNP_HANDLED)" \
	test "$INC_CNP_SENT" -gt 0 -a "$INC_CNP_HANDLED" -gt 0
t_check "DCQCN on: the receiver link busy ($INC_RX_STEADY >= $T_BUSY x $MIBS MiB/s)" \
	ge "$INC_RX_STEADY" "$(awk -v c="$MIBS" -v f="$T_BUSY" 'BEGIN { print f * c }')"
t_check "DCQCN on: goodput $INC_GOODPUT MiB/s >= $T_GOODPUT x the receiver link's $MIBS MiB/s" \
	ge "$INC_GOODPUT" "$(awk -v c="$MIBS" -v f="$T_GOODPUT" 'BEGIN { print f * c }')"
t_check "DCQCN on: Jain's index of the 8 flows $INC_JAIN >= 0.9" ge "$INC_JAIN" 0.9
t_check "DCQCN on: drops <= $T_DROPS % of off ($INC_DROPS vs $OFF_DROPS)" \
	test $((INC_DROPS * 100)) -le $((OFF_DROPS * T_DROPS))
t_check "DCQCN on: retransmissions <= $T_RETX % of off ($INC_RETX vs $OFF_RETX)" \
	test $((INC_RETX * 100)) -le $((OFF_RETX * T_RETX))
t_check "DCQCN on: the guest's CPU is not the limit ($INC_IDLE % idle, $INC_KERNEL % in the kernel)" \
	test "$INC_IDLE" -ge 20
echo "incast, DCQCN on: t (s), each sender's MiB/s into its leaf, receiver link, spine links into leaf 1:"
sed 's/^/  /' "$INC_OUT/rate-incast-on.dat"

# --- two bottlenecks ------------------------------------------------------------
t_check "spine links into leaf 1 shaped to $SRATE Mbit/s" inc_spine_rate "$SRATE"
SMIBS=$(inc_mibs $((2 * SRATE)))
t_check "DCQCN off on every device" inc_dcqcn off
inc_run "$SECS"
inc_report "two bottlenecks, DCQCN off"
OFF_DROPS=$INC_DROPS OFF_RETX=$INC_RETX
t_check "DCQCN off: the spine links into leaf 1 drop ($INC_SP_DROPS)" test "$INC_SP_DROPS" -gt 0
t_check "DCQCN on on every device" inc_dcqcn on
read -r -a SP0 <<<"$(spine_down)"
inc_run "$SECS"
inc_report "two bottlenecks, DCQCN on"
read -r -a SP1 <<<"$(spine_down)"
SHARES=$(awk -v a="${SP0[*]}" -v b="${SP1[*]}" 'BEGIN {
	n = split(a, x); split(b, y)
	for (i = 1; i <= n; i++) { d[i] = y[i] - x[i]; s += d[i] }
	for (i = 1; i <= n; i++) printf "%.2f ", s ? d[i] / s : 0 }')
t_check "two bottlenecks, DCQCN on: each spine link into leaf 1 carried >= 0.35 of their bytes ($SHARES)" \
	awk -v s="$SHARES" 'BEGIN { n = split(s, x); for (i = 1; i <= n; i++) if (x[i] < 0.35) exit 1; exit n != 2 }'
cp "$INC_OUT/rate.dat" "$INC_OUT/rate-two-on.dat"
t_eq "two bottlenecks, DCQCN on: every flow sent and none failed" "$INC_FAILED" 0
t_check "two bottlenecks, DCQCN on: the receiver link busy ($INC_RX_STEADY >= $T_BUSY x $MIBS MiB/s)" \
	ge "$INC_RX_STEADY" "$(awk -v c="$MIBS" -v f="$T_BUSY" 'BEGIN { print f * c }')"
t_check "two bottlenecks, DCQCN on: the spine links into leaf 1 busy ($INC_SP_STEADY >= $T_BUSY x $SMIBS MiB/s)" \
	ge "$INC_SP_STEADY" "$(awk -v c="$SMIBS" -v f="$T_BUSY" 'BEGIN { print f * c }')"
LOCAL=$(awk -v a="${INC_BW[1]}" -v b="${INC_BW[2]}" 'BEGIN { print (a + b) / 2 }')
REMOTE=$(printf '%s\n' "${INC_BW[@]:3:6}" | awk '{ s += $1 } END { print s / NR }')
t_check "two bottlenecks, DCQCN on: the local flows get more than the remote ones ($LOCAL vs $REMOTE MiB/s each)" \
	ge "$LOCAL" "$REMOTE"
t_check "two bottlenecks, DCQCN on: drops <= $T_DROPS % of off ($INC_DROPS vs $OFF_DROPS; spine links $INC_SP_DROPS)" \
	test $((INC_DROPS * 100)) -le $((OFF_DROPS * T_DROPS))
t_check "two bottlenecks, DCQCN on: retransmissions <= $T_RETX % of off ($INC_RETX vs $OFF_RETX)" \
	test $((INC_RETX * 100)) -le $((OFF_RETX * T_RETX))
echo "two bottlenecks, DCQCN on: t (s), each sender's MiB/s into its leaf, receiver link, spine links into leaf 1:"
sed 's/^/  /' "$INC_OUT/rate-two-on.dat"

bg_cleanup
fab_down
t_eq "no fb* namespace left" "$(ip netns list | grep -c '^fb')" 0
fb_devices_gone() { ! rdma link show 2>/dev/null | grep -q 'link fb'; }
t_check "no srnic device left" settle -t 20 fb_devices_gone
t_kernel_clean "no kernel warnings"
rmmod srnic 2>/dev/null
rm -rf "$INC_OUT"
t_summary
