#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Wire fuzzer, inside the VM (tests/vm/vmrun tests/vm/test_wire_fuzz.sh):
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#                                               wire_fuzz.py writes frames
#                                               on vethB (AF_PACKET)
#
# tests/vm/wire_fuzz.py (read its header): forged ACKs and NAKs outside the
# outstanding window complete nothing and fail nothing (issue 11 finding 3);
# then for SRNIC_FUZZ_SECS (default 30) a data-checked RC session runs while
# malformed frames (every truncation, bad and right ICRCs, lying IP/UDP
# lengths, PSNs near the expected ones, wild RETH/AETH/AtomicETH) go to its
# QPs and to a victim pair; a fresh QP pair works afterwards. Here: every
# check of the script passes, srnic0's rcvd_icrc_err, rcvd_bad_hdr and
# ack_out_of_window move (the last by at least the ghost responses sent
# to the session's QP), the kernel log is clean and the module unloads.
#
# SRNIC_KO=path overrides the module; SRNIC_FUZZ_SECS and SRNIC_FUZZ_SEED
# the run (the seed is printed).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

SECS=${SRNIC_FUZZ_SECS:-30}
SEED=${SRNIC_FUZZ_SEED:-$RANDOM}

dmesg -C
srnic_pair_up

CNTS="rcvd_icrc_err rcvd_bad_hdr ack_out_of_window rcvd_no_qp"
snap

mac_a=$(ip netns exec nsA cat /sys/class/net/vethA/address)
mac_b=$(ip netns exec nsB cat /sys/class/net/vethB/address)
echo "info seed $SEED, $SECS s"
out=$(with_timeout $((SECS + 120)) ip netns exec nsB python3 \
	tests/vm/wire_fuzz.py vethB "$mac_b" "$mac_a" "$SECS" "$SEED" 2>&1)
rc=$?
t_from_output wire_fuzz.py "$rc" "$out" '@(info|sent) *'

deltas "srnic counters"
ghosts=$(sed -n 's/^sent ghost_resp_a //p' <<<"$out")
t_check "rcvd_icrc_err moved" test "$(delta srnic0 rcvd_icrc_err)" -gt 0
t_check "rcvd_bad_hdr moved" test "$(delta srnic0 rcvd_bad_hdr)" -gt 0
t_check "ack_out_of_window counts every ghost response at the session" \
	test "$(delta srnic0 ack_out_of_window)" -ge "${ghosts:-1}"
srnic_pair_down 'BUG|WARNING|RCU|rcu_|Call Trace'
t_summary
