#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic moving data with stock rdma-core tools, run inside the VM:
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#   (server side)                               (client side)
#
# Every client/server pair runs under a timeout; servers are started by PID
# and stopped at exit. Each check asserts the tool's own verdict (pingpong
# --chk verifies the data byte for byte) plus counters proving that the
# packets crossed the veth pair.
set -u
cd "$(dirname "$0")/../.."
. tests/vm/lib.sh

srnic_pair_up

snap
pair "ibv_rc_pingpong 4 KiB x 200, data checked" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
t_check "RC packets counted on srnic1" test "$(delta srnic1 sent_pkts)" -gt 400
pair "ibv_rc_pingpong 64 KiB x 20 (multi-packet), data checked" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 20 -s 65536 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 20 -s 65536 -c 10.99.0.1
pair "ibv_rc_pingpong 1 B, data checked" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 50 -s 1 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 50 -s 1 -c 10.99.0.1
pair "ibv_rc_pingpong with completion events" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 50 -s 4096 -c -e -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 50 -s 4096 -c -e 10.99.0.1
pair "ibv_uc_pingpong 4 KiB, data checked" \
	ibv_uc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	ibv_uc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
pair "ibv_ud_pingpong 1 KiB, data checked" \
	ibv_ud_pingpong -d srnic0 -g "$G0" -n 200 -s 1024 -c -- \
	ibv_ud_pingpong -d srnic1 -g "$G1" -n 200 -s 1024 -c 10.99.0.1
pair "ibv_srq_pingpong 16 QPs on one SRQ, data checked" \
	ibv_srq_pingpong -d srnic0 -g "$G0" -n 100 -s 4096 -c -- \
	ibv_srq_pingpong -d srnic1 -g "$G1" -n 100 -s 4096 -c 10.99.0.1

# perftest's local ACK timeout (-u, 4.096 us * 2^u) is 67 ms by default,
# also in the debug tier's KASAN guest, whose answers to 8 MiB in flight
# take seconds: the retransmit timer follows the measured round trip
# (srnic_req_timeout()), so no go-back-N into the peer's backlog.
for t in ib_write_bw ib_read_bw ib_send_bw; do
	for s in 1 4096 65536 1048576; do
		n=200
		[ "$s" -gt 65536 ] && n=20
		pair "$t -s $s" \
			$t -d srnic0 -x "$G0" -s "$s" -n "$n" -F -- \
			$t -d srnic1 -x "$G1" -s "$s" -n "$n" -F 10.99.0.1
	done
done
pair "ib_atomic_bw" \
	ib_atomic_bw -d srnic0 -x "$G0" -n 500 -F -- \
	ib_atomic_bw -d srnic1 -x "$G1" -n 500 -F 10.99.0.1
n=200
for t in ib_write_lat ib_read_lat ib_send_lat ib_atomic_lat; do
	pair "$t" \
		$t -d srnic0 -x "$G0" -n "$n" -F -- \
		$t -d srnic1 -x "$G1" -n "$n" -F 10.99.0.1
done

# RDMA-CM: connection management MADs over the GSI QP (QP1), then RC.
PAIR_READY=pair_cm_listening
pair "rping (RDMA-CM), 100 x 1 KiB, data verified" \
	rping -s -a 10.99.0.1 -C 100 -S 1024 -V -- \
	rping -c -a 10.99.0.1 -C 100 -S 1024 -V
pair "ucmatose (RDMA-CM RC connections)" \
	ucmatose -b 10.99.0.1 -- \
	ucmatose -s 10.99.0.1
pair "udaddy (RDMA-CM UD)" \
	udaddy -b 10.99.0.1 -- \
	udaddy -s 10.99.0.1
pair "rdma_server / rdma_client" \
	rdma_server -s 10.99.0.1 -- \
	rdma_client -s 10.99.0.1
PAIR_READY=pair_tcp_listening

t_eq "no ICRC errors" "$(counter srnic0 rcvd_icrc_err)$(counter srnic1 rcvd_icrc_err)" "00"
srnic_pair_down
t_summary
