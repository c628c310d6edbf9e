#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device removal under user traffic, run inside the VM (tests/vm/vmrun):
#
#   nsA: vethA 10.99.0.1 srnic0 <==== veth ====> nsB: vethB 10.99.0.2 srnic1
#   ibv_rc_pingpong -e (server, nsA)              ibv_rc_pingpong -e (client, nsB)
#   ibv_asyncwatch -d srnic0 (nsA)
#
# Twice, with a fresh pair of devices each time: while the pingpong runs,
# the device goes by (1) "ip link del vethA" (both devices go) and (2)
# "rdma link delete srnic0". Asserts: the removal command returns within 10 s
# (it waited for the processes to exit before srnic revoked user contexts:
# disassociate_ucontext), the device is gone, ibv_asyncwatch gets
# IBV_EVENT_DEVICE_FATAL, the pingpong on the removed device fails within
# 10 s instead of running on, no kernel warning; at the end a fresh pair of
# devices passes traffic and srnic unloads.
#
# Each removal runs in the background and is waited for with a deadline: a
# task stuck in unregister_netdevice cannot be killed, so the test reports
# the failure and ends (the guest is powered off).
set -u
cd "$(dirname "$0")/../.." || exit 1
REPO=$PWD
. tests/vm/lib.sh

KO=$REPO/srnic.ko
LOG=/tmp/revoke
mkdir -p "$LOG"

[ -f "$KO" ] || { echo "srnic.ko missing: run make module first"; exit 1; }

# wait_done SECS PID: wait up to SECS for background PID to exit; its exit
# status, or 124 if it still runs
wait_done() {
	local secs=$1 pid=$2 i
	for ((i = 0; i < secs * 10; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			return
		fi
		sleep 0.1
	done
	return 124
}

devices_up() {
	ip netns exec nsA rdma link add srnic0 type srnic netdev vethA &&
		ip netns exec nsB rdma link add srnic1 type srnic netdev vethB &&
		settle roce_gid_index srnic0 10.99.0.1 >/dev/null &&
		settle roce_gid_index srnic1 10.99.0.2 >/dev/null
}

# pingpong_up: pingpong server (nsA) and client (nsB), with events (-e), many
# iterations; asyncwatch on srnic0; returns once packets flow. Sets SRV,
# CLI, AW.
pingpong_up() {
	local g0 g1 p0
	g0=$(roce_gid_index srnic0 10.99.0.1)
	g1=$(roce_gid_index srnic1 10.99.0.2)
	bg_start AW ip netns exec nsA stdbuf -oL ibv_asyncwatch -d srnic0 >"$LOG/aw" 2>&1
	bg_start SRV ip netns exec nsA ibv_rc_pingpong -d srnic0 -g "$g0" -e \
		-n 10000000 -s 4096 >"$LOG/srv" 2>&1
	PAIR_SERVER_NS=nsA settle pair_tcp_listening || return 1
	bg_start CLI ip netns exec nsB ibv_rc_pingpong -d srnic1 -g "$g1" -e \
		-n 10000000 -s 4096 10.99.0.1 >"$LOG/cli" 2>&1
	# flowing: rcvd_pkts moves by 100 within a second (15 s to start)
	for _ in $(seq 15); do
		p0=$(counter srnic0 rcvd_pkts)
		sleep 1
		[ "$(counter srnic0 rcvd_pkts)" -gt $((p0 + 100)) ] && return 0
	done
	tail -n 5 "$LOG/srv" "$LOG/cli"
	return 1
}

# removal NAME CMD...: run CMD (the removal) in the background under
# traffic; check it returns, the device goes, the processes learn it
removal() {
	local name=$1 pid rc t0
	shift
	t_check "$name: pingpong traffic flows on srnic0" pingpong_up
	t0=$(_t_now_us)
	"$@" &
	pid=$!
	wait_done 10 "$pid"
	rc=$?
	echo "info: $name took $((($(_t_now_us) - t0) / 1000)) ms"
	if [ "$rc" = 124 ]; then
		t_fail "$name returns within 10 s under traffic" "still running"
		t_summary
		exit 1
	fi
	t_eq "$name returns within 10 s under traffic" "$rc" 0
	t_check "$name: srnic0 gone" settle test ! -e /sys/class/infiniband/srnic0
	t_check "$name: the server gets IBV_EVENT_DEVICE_FATAL" \
		settle grep -q DEVICE_FATAL "$LOG/aw"
	wait_done 10 "$SRV"
	rc=$?
	t_check "$name: the pingpong on srnic0 ends within 10 s" test "$rc" != 124
	t_check "$name: ... with an error (exit $rc)" test "$rc" != 0 -a "$rc" != 124
	bg_cleanup
}

dmesg -C
modprobe -a veth ib_uverbs rdma_ucm udp_tunnel ip6_udp_tunnel || exit 1
insmod "$KO" || exit 1

netns_pair_setup || exit 1
t_check "devices up" devices_up || { t_summary; exit 1; }
removal "ip link del vethA" ip netns exec nsA ip link del vethA
t_check "ip link del vethA: srnic1 gone too" \
	settle test ! -e /sys/class/infiniband/srnic1

netns_pair_setup || exit 1
t_check "devices up again" devices_up || { t_summary; exit 1; }
removal "rdma link delete srnic0" ip netns exec nsA rdma link delete srnic0
ip netns exec nsB rdma link delete srnic1

t_check "no kernel warnings" bash -c "! dmesg | grep -E '^(\[[ 0-9.]+\] )?(WARNING|BUG|Oops|general protection)|unregister_netdevice: waiting'"

# a fresh pair still works, and srnic unloads
t_check "devices up after the removals" devices_up
g0=$(roce_gid_index srnic0 10.99.0.1)
g1=$(roce_gid_index srnic1 10.99.0.2)
PAIR_SERVER_NS=nsA PAIR_CLIENT_NS=nsB pair "fresh devices: ibv_rc_pingpong -c" \
	ibv_rc_pingpong -d srnic0 -g "$g0" -n 100 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$g1" -n 100 -s 4096 -c 10.99.0.1
ip netns exec nsA rdma link delete srnic0
ip netns exec nsB rdma link delete srnic1
t_check "rmmod srnic" rmmod srnic
t_summary
