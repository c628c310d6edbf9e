#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Work in progress, not run by CI: reproduces a known RC READ livelock.
# 1 MiB RDMA READs (ib_read_bw -n 20) over a veth pair with netem delay
# 40 ms +- 30 ms on both sides (heavy reordering, some spurious timeouts).
# srnic today: every run times out; read_gap_retries and the responder's
# duplicate_request climb into the thousands - each reordered READ response
# is taken for a loss (srnic_comp.c READ gap recovery), the READ is asked
# again, its replayed responses are reordered again, and so on.
# Run: make module && tests/vm/vmrun --timeout 900 tests/vm/wip/read_reorder.sh
cd "$(dirname "$0")/../../.." || exit 1
. tests/vm/lib.sh
KO=$PWD/srnic.ko
PAIR_SERVER_SECS=120 PAIR_CLIENT_SECS=110
srnic_pair_up sch_netem
ip netns exec nsA tc qdisc add dev vethA root netem delay 40ms 30ms
ip netns exec nsB tc qdisc add dev vethB root netem delay 40ms 30ms
for i in 1 2 3; do
	pair "ib_read_bw 1 MiB x 20 under reordering, run $i" \
		ib_read_bw -d srnic0 -x "$G0" -s 1048576 -n 20 -F -- \
		ib_read_bw -d srnic1 -x "$G1" -s 1048576 -n 20 -F 10.99.0.1
done
for c in retransmits local_ack_timeout_err read_gap_retries duplicate_request; do
	echo "info: $c srnic0=$(counter srnic0 "$c") srnic1=$(counter srnic1 "$c")"
done
t_summary
