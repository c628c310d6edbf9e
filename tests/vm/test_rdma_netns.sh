#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic with ib_core's exclusive network namespace mode (`rdma system set
# netns exclusive`, the mode that gives a container its own RDMA devices),
# inside the VM (tests/vm/vmrun), in a guest of its own (the mode can only
# change while no namespace but the initial one exists, and every other
# test expects the default, shared):
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#
# Each device is moved into its netdev's namespace (`rdma dev set ...
# netns`): ib_core unregisters it there and registers it again (srnic's
# device lives on), after which only that namespace sees it. Checks: the
# devices listed where they were moved and nowhere else; RC pingpong (data
# checked) and rping (RDMA-CM, data verified) between the namespaces; a move
# under an ib_write_bw (both ends' contexts revoked: the move returns, both
# processes end) to a third namespace and back, then traffic again; the
# namespace deleted (ib_core moves the device back to the initial
# namespace, the veth goes with the namespace, both devices are removed);
# the mode back to shared; rmmod; a clean kernel log.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

# links NS: the RDMA links namespace NS sees (the initial one: NS empty)
links() {
	local pfx=()
	_pair_ns_prefix pfx "$1"
	"${pfx[@]}" rdma link show | awk '{ print $2 }' | sed 's|/.*||' | sort | tr '\n' ' '
}

# mode_set MODE: the netns mode set, once the namespaces a test deleted are
# gone (until then: EBUSY)
mode_is() { rdma system show | grep -q "netns $1"; }
mode_set() { rdma system set netns "$1" 2>/dev/null && mode_is "$1"; }

PAIR_SERVER_SECS=40
PAIR_CLIENT_SECS=35

dmesg -C
if ! t_check "srnic_load: srnic.ko and its dependencies" srnic_load veth rdma_ucm ||
   ! t_check "rdma system set netns exclusive" settle mode_set exclusive ||
   ! t_check "two namespaces on a veth pair" netns_pair_setup; then
	t_summary
	exit 1
fi
t_check "rdma link add srnic0 netdev vethA (nsA)" \
	ip netns exec nsA rdma link add srnic0 type srnic netdev vethA
t_check "rdma link add srnic1 netdev vethB (nsB)" \
	ip netns exec nsB rdma link add srnic1 type srnic netdev vethB
t_check "rdma dev set srnic0 netns nsA" rdma dev set srnic0 netns nsA
t_check "rdma dev set srnic1 netns nsB" rdma dev set srnic1 netns nsB
t_eq "nsA sees srnic0 only" "$(links nsA)" "srnic0 "
t_eq "nsB sees srnic1 only" "$(links nsB)" "srnic1 "
t_eq "the initial namespace sees neither" "$(links '')" ""
t_check "vethA's link-local address ready (DAD done)" ready ll_ready nsA vethA
t_check "vethB's link-local address ready (DAD done)" ready ll_ready nsB vethB

# GID 0: the netdev's link-local one, RoCE v2
pair "in nsA/nsB: ibv_rc_pingpong, 4 KiB x 100, data checked" \
	ibv_rc_pingpong -d srnic0 -g 0 -n 100 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g 0 -n 100 -s 4096 -c 10.99.0.1
PAIR_READY=pair_cm_listening
pair "in nsA/nsB: rping (RDMA-CM) to 10.99.0.1, 50 x 1 KiB, data verified" \
	rping -s -a 10.99.0.1 -C 50 -S 1024 -V -- \
	rping -c -a 10.99.0.1 -C 50 -S 1024 -V
PAIR_READY=pair_tcp_listening

# Moved under traffic: ib_core revokes the device's user contexts first.
t_check "netns nsC" ip netns add nsC
t_check "ib_write_bw between the namespaces moving packets" bw_bg_start 0 0
t_check "srnic0 moved to nsC under an ib_write_bw, within 20 s" \
	timeout 20 ip netns exec nsA rdma dev set srnic0 netns nsC
bw_bg_ended "the move"
t_eq "nsC sees srnic0" "$(links nsC)" "srnic0 "
t_eq "nsA sees nothing" "$(links nsA)" ""
t_check "srnic0 moved back to nsA" ip netns exec nsC rdma dev set srnic0 netns nsA
t_eq "nsA sees srnic0 again" "$(links nsA)" "srnic0 "
pair "after the moves: ibv_rc_pingpong, 4 KiB x 100, data checked" \
	ibv_rc_pingpong -d srnic0 -g 0 -n 100 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g 0 -n 100 -s 4096 -c 10.99.0.1

# The namespace deleted (a process in it would keep it alive: deletion under
# user traffic cannot happen here): ib_core hands srnic0 back to the initial
# namespace, then vethA (and its peer) are unregistered.
t_check "ip netns del nsA" ip netns del nsA
t_check "both devices removed with their veths" \
	settle -t 30 bash -c '[ -z "$(rdma link show)" ] &&
		[ -z "$(ip netns exec nsB rdma link show)" ]'
t_check "rdma system set netns shared, once the namespaces are gone" \
	bash -c 'ip netns del nsB; ip netns del nsC'
t_check "the mode back to shared" settle -t 60 mode_set shared
t_kernel_clean "no kernel warnings"
t_check "rmmod" rmmod srnic
t_kernel_clean "still no kernel warnings after rmmod"
t_summary
