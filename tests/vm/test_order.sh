#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vmrun-tcg: single (it switches tracepoints on and off: see tests/vm/vmrun)
#
# One QP's packets leave in PSN order, inside the VM
# (tests/vm/vmrun tests/vm/test_order.sh):
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#
# On a lossless link (no qdisc, and every drop counter of both veths and
# the softnet backlogs checked to stay 0), ib_write_bw -s 65536 -n 1000 and
# ib_read_bw -s 65536 -n 500 (a few seconds each; perftest's QP timeout, 14:
# 67 ms) must not reorder or resend anything: on both devices
# req_placed_out_of_order, out_of_seq_request, read_resp_out_of_order,
# retransmits and rcvd_seq_err stay 0. A QP that transmits from two CPUs
# at once, or from one CPU and then another while its packets still wait
# in the first one's backlog, breaks this (veth queues a packet on the
# sending CPU's backlog). So does a retransmit timer that fires after a
# stall of the (TCG) guest, before the ACKs waiting in a receive backlog
# are processed (issue 11 finding 8: 1-8 timeouts a run before the fix at
# host load 14; none at lower load, so this catches it only on a busy host).
# On the debug tier's KASAN guest the receiver is slow (1-4 ms a packet):
# answers come long after 67 ms, and only a timer that follows the measured
# round trip keeps this at 0 there (srnic_req_timeout()). Its sender is slow
# too (100 ms to send a 64 KiB WRITE, whose last packet alone asks for an
# ACK): the timeout counts from the oldest packet owed an answer, not from
# the last ACK (srnic_req_owe(); 7 timeouts a run before, none after).
# Receive steering (sysfs srnic/rx_steer, off by default: README
# "Benchmark"): with it on and each end pinned to its own CPU, the same
# ib_write_bw and ib_read_bw leave every counter above at 0 as well - a
# packet run on its consumer's CPU never overtakes one received before it -
# and rx_steered grows on both devices; rc_xfer.py then moves 2 MiB each way
# (WRITE, READ, read back), every byte compared. Turned off again, nothing
# more is steered.
# Trains (sysfs srnic/tx_batch, off by default: a run's requests leave as
# one fraglist GSO skb, cut back into packets by the receiving UDP socket):
# 0 by default, 2 refused; on, the same ib_write_bw and ib_read_bw leave
# the same counters at 0, tx_train_packets grows on the requesting
# device, and rc_xfer.py moves 2 MiB each way, every byte compared.
# Spreading (sysfs srnic/rx_spread, on by default: a packet of a message of
# several runs on another CPU): 1 by default, 2 refused. The first
# ib_write_bw and ib_read_bw run with it: nothing out of order (retransmits
# are not checked there: on a busy host a descheduled vCPU may hold a spread
# packet, and so its ACK, past perftest's 67 ms), rx_spread grows on the
# receiving device (srnic0 for the WRITEs, srnic1 for the READ responses),
# no queue overflows. Then spreading goes off for the same two runs, which
# must leave every counter above at 0 and spread nothing, and for the
# steering and trains runs below.
# Then ib_write_lat -s 8 -n 1000: each side's ACKs go from the CPU that
# received the request, the other's requests are not handed over to it
# (tx_handovers grows by fewer than 100 for 2000 WRITEs; it grew by one
# per ACK before), and with spreading on nothing is spread (one packet a
# message).
# "info" lines carry the counter deltas.
#
# SRNIC_KO=path overrides the module (default: srnic.ko at the repo root).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

# perftest's default QP timeout: 14 = 4.096 us * 2^14 = 67 ms, shorter
# than a loaded TCG host's scheduling stalls (srnic_req_timer_grace()).
# Iterations, not -D SECS: perftest then ends with READs outstanding, and
# the client's timer fires while the server's QP is gone (retransmits).
QP_TIMEOUT=14

dmesg -C
srnic_pair_up

ORDER_CNTS="req_placed_out_of_order out_of_seq_request read_resp_out_of_order
rcvd_seq_err"
CNTS="$ORDER_CNTS retransmits"
# reordered LABEL [COUNTERS]: the sum of COUNTERS' growth (default $CNTS),
# both devices; an info line names every counter that moved
reordered() {
	local c sum=0
	deltas "$1" >&2
	for c in ${2:-$CNTS}; do
		sum=$((sum + $(delta_sum "$c")))
	done
	echo "$sum"
}

# drops: every drop the link could have made (veth rx/tx drops in both
# netns, softnet backlog drops: /proc/net/softnet_stat column 2)
drops() {
	local n=0 ns dev f v
	for ns in nsA:vethA nsB:vethB; do
		dev=${ns#*:}
		for f in rx_dropped tx_dropped; do
			v=$(ip netns exec "${ns%%:*}" cat "/sys/class/net/$dev/statistics/$f")
			n=$((n + v))
		done
	done
	while read -r _ v _; do
		n=$((n + 16#$v))
	done </proc/net/softnet_stat
	echo "$n"
}

# Each run traces the ACKs (and READ responses ending a message) received
# and the retransmits: when anything was resent, the info lines show each
# retransmit (cause, PSN) with the three answers before it and their times,
# which says whether the timer fired early or the answers came late (the
# debug tier's KASAN receiver).
trace_acks() {
	# RC ACKNOWLEDGE, RDMA READ response LAST and ONLY
	trace_start -b 4096 \
		-f srnic_pkt_rx 'opcode == 17 || opcode == 15 || opcode == 16' \
		srnic_pkt_rx srnic_retransmit
}
show_retransmits() {
	local tr=$TRACEFS/trace
	trace_stop
	echo "info $1: traced $(grep -c srnic_pkt_rx: "$tr") ACKs/READ" \
		"responses received, $(grep -c srnic_retransmit: "$tr") retransmits"
	grep -q srnic_retransmit: "$tr" || return 0
	echo "info $1: each retransmit with the answers before it:"
	grep -B3 srnic_retransmit: "$tr" | head -n 80 | sed 's/^ */  | /'
}

# run NAME TOOL ITERS [order]: TOOL with ITERS 64 KiB messages, nsB -> nsA;
# nothing out of order and nothing retransmitted, or with "order" only the
# first
run() {
	local name=$1 tool=$2 iters=$3 d0 d1 r what="nothing out of order"
	local cnts=$ORDER_CNTS
	[ "${4:-}" = order ] || { cnts=$CNTS what+=", nothing retransmitted"; }
	d0=$(drops)
	snap
	trace_acks
	pair "$name: $tool -s 65536 -n $iters -u $QP_TIMEOUT" \
		"$tool" -d srnic0 -x "$G0" -s 65536 -n "$iters" -u "$QP_TIMEOUT" \
		-F -- \
		"$tool" -d srnic1 -x "$G1" -s 65536 -n "$iters" -u "$QP_TIMEOUT" \
		-F 10.99.0.1
	show_retransmits "$name"
	r=$(reordered "$name" "$cnts")
	echo "info $name: srnic1 local_ack_timeout_err +$(delta srnic1 local_ack_timeout_err) read_gap_retries +$(delta srnic1 read_gap_retries); send_err now srnic0 $(counter srnic0 send_err) srnic1 $(counter srnic1 send_err)"
	d1=$(drops)
	t_eq "$name: the link dropped nothing" $((d1 - d0)) 0
	t_eq "$name: $what" "$r" 0
}

# Spreading (sysfs srnic/rx_spread, on by default): the packets of a
# message of several run on another CPU than the one that received them,
# their ICRC checked there.
spread() { srnic_knob_set rx_spread "$1" srnic0 srnic1; }
t_eq "rx_spread is 1 (on) by default" "$(cat "$(srnic_knob srnic0 rx_spread)")" 1
t_expect_fail "rx_spread refuses 2" "Invalid argument" \
	bash -c "echo 2 > $(srnic_knob srnic0 rx_spread)"
run write_bw ib_write_bw 1000 order
t_check "write_bw: srnic0 spread the WRITEs' packets (rx_spread +$(delta srnic0 rx_spread))" \
	test "$(delta srnic0 rx_spread)" -gt 0
t_eq "write_bw: no queue overflowed" "$(delta_sum rx_steer_drops)" 0
run read_bw ib_read_bw 500 order
t_check "read_bw: srnic1 spread the READ responses (rx_spread +$(delta srnic1 rx_spread))" \
	test "$(delta srnic1 rx_spread)" -gt 0
t_eq "read_bw: no queue overflowed" "$(delta_sum rx_steer_drops)" 0
t_check "rx_spread off, both devices" spread 0
run "write_bw, spreading off" ib_write_bw 1000
t_eq "write_bw, spreading off: nothing spread" "$(delta_sum rx_spread)" 0
run "read_bw, spreading off" ib_read_bw 500

# hotplug_steered: rc_xfer.py, server pinned to CPU 1, while CPU 1 goes
# offline and online again in a loop: packets steered to it must still be
# run (its queue drains elsewhere, its process moves), data verified.
hotplug_steered() {
	local cpu=/sys/devices/system/cpu/cpu1/online cycles=/tmp/hotplug.cycles hp
	[ -w "$cpu" ] || { echo "info hotplug: $cpu not writable, skipped"; return; }
	rm -f /tmp/hotplug.stop "$cycles"
	# the loop starts once the server runs pinned (taskset has set its
	# affinity before it execs python): pinning to an offline CPU fails.
	# Python's command line only: timeout's and ip's hold the same words,
	# and "[.]" keeps the pattern from matching this loop's own (".*": the
	# checkout's path may hold spaces)
	bg_start hp bash -c "n=0
		until pgrep -f '^/usr/bin/python3 .*rc_xfer[.]py server' >/dev/null || [ -e /tmp/hotplug.stop ]; do
			sleep 0.1
		done
		while [ ! -e /tmp/hotplug.stop ]; do
			echo 0 >$cpu 2>/dev/null && n=\$((n + 1))
			sleep 0.2
			echo 1 >$cpu
			sleep 0.2
		done
		echo \$n >$cycles"
	snap
	rc_xfer -c 1:0 "steered, CPU 1 going offline and back" --size $((8 << 20)) \
		--msg 65536 --depth 16 --rounds 3 --op-timeout "$(time_scaled 60)"
	touch /tmp/hotplug.stop
	wait "$hp"
	echo 1 >"$cpu"
	deltas "hotplug" rx_steered rx_steer_drops retransmits
	t_check "hotplug: CPU 1 went offline during the transfers ($(cat "$cycles" 2>/dev/null) times)" \
		test "$(cat "$cycles" 2>/dev/null || echo 0)" -gt 0
	t_eq "hotplug: CPU 1 online again" "$(cat "$cpu")" 1
}

# Receive steering: a user QP's packets run on its process's CPU.
steer() { srnic_knob_set rx_steer "$1" srnic0 srnic1; }
t_eq "rx_steer is 0 (off) by default" "$(cat "$(srnic_knob srnic0 rx_steer)")" 0
t_expect_fail "rx_steer refuses 2" "Invalid argument" \
	bash -c "echo 2 > $(srnic_knob srnic0 rx_steer)"
run "write_bw, steering off" ib_write_bw 300
t_eq "steering off: nothing steered" "$(delta_sum rx_steered)" 0
if t_check "rx_steer on, both devices" steer 1; then
	# each end on its own CPU (perftest's server on 0, client on 1)
	PAIR_SERVER_PREFIX=(taskset -c 0) PAIR_CLIENT_PREFIX=(taskset -c 1)
	run "steered write_bw" ib_write_bw 1000
	run "steered read_bw" ib_read_bw 500
	PAIR_SERVER_PREFIX=() PAIR_CLIENT_PREFIX=()
	snap
	rc_xfer -c 0:1 "steered" --size $((2 << 20)) --msg 65536 --depth 16 \
		--op-timeout "$(time_scaled 60)"
	t_eq "steered rc_xfer: nothing out of order, nothing retransmitted" \
		"$(reordered "steered rc_xfer")" 0
	t_check "steered: rx_steered grew on both devices ($(delta srnic0 rx_steered), $(delta srnic1 rx_steered))" \
		test "$(delta srnic0 rx_steered)" -gt 0 -a "$(delta srnic1 rx_steered)" -gt 0
	t_eq "steered: no queue overflowed" "$(delta_sum rx_steer_drops)" 0
	hotplug_steered
	t_check "rx_steer off" steer 0
	run "unsteered write_bw" ib_write_bw 300
	t_eq "steering off again: nothing steered" "$(delta_sum rx_steered)" 0
fi

# Trains: a run's requests as one skb through the stack.
batch() { srnic_knob_set tx_batch "$1" srnic0 srnic1; }
t_eq "tx_batch is 0 (off) by default" "$(cat "$(srnic_knob srnic0 tx_batch)")" 0
t_expect_fail "tx_batch refuses 2" "Invalid argument" \
	bash -c "echo 2 > $(srnic_knob srnic0 tx_batch)"
if t_check "tx_batch on, both devices" batch 1; then
	run "trains write_bw" ib_write_bw 1000
	t_check "trains write_bw: srnic1 sent trains (tx_train_packets +$(delta srnic1 tx_train_packets))" \
		test "$(delta srnic1 tx_train_packets)" -gt 0
	run "trains read_bw" ib_read_bw 500
	snap
	rc_xfer "trains" --size $((2 << 20)) --msg 65536 --depth 16 \
		--op-timeout "$(time_scaled 60)"
	t_eq "trains rc_xfer: nothing out of order, nothing retransmitted" \
		"$(reordered "trains rc_xfer")" 0
	t_check "trains rc_xfer: srnic1 sent trains (tx_train_packets +$(delta srnic1 tx_train_packets))" \
		test "$(delta srnic1 tx_train_packets)" -gt 0
	t_check "tx_batch off" batch 0
fi

# A ping-pong: an ACK leaves at once from the CPU that received its request
# (srnic_resp_ack_here()), and the QP's transmit side stays on the CPU that
# posts its requests. Before, the ACK claimed the QP for the receiving CPU
# (a veth receives on the sender's CPU) and the other side's next request
# was handed over to it - an IPI (tx_handovers) for every ACK, two per
# round trip - or ran there: every packet of both directions on one CPU.
t_check "rx_spread on again" spread 1
snap
pair "write_lat: ib_write_lat -s 8 -n 1000" \
	ib_write_lat -d srnic0 -x "$G0" -s 8 -n 1000 -F -- \
	ib_write_lat -d srnic1 -x "$G1" -s 8 -n 1000 -F 10.99.0.1
deltas write_lat
t_check "write_lat: each side acknowledged the other's 1000 WRITEs" \
	test "$(delta srnic0 sent_acks)" -ge 1000 -a "$(delta srnic1 sent_acks)" -ge 1000
h=$(delta_sum tx_handovers)
t_check "write_lat: $h of 2000 WRITEs and 2000 ACKs handed over to another CPU (< 100)" \
	test "$h" -lt 100
t_eq "write_lat: messages of one packet are not spread" "$(delta_sum rx_spread)" 0

srnic_pair_down
t_summary
