#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device removal under user traffic, run inside the VM (tests/vm/vmrun):
#
#   nsA: vethA 10.99.0.1 srnic0 <==== veth ====> nsB: vethB 10.99.0.2 srnic1
#   ibv_rc_pingpong -e (server, nsA)              ibv_rc_pingpong -e (client, nsB)
#   ibv_asyncwatch -d srnic0 (nsA)
#
# Three times, with a fresh pair of devices each time: while the pingpong
# runs, the device goes by (1) "ip link del vethA" (both devices go), (2)
# "rdma link delete srnic0", (3) "ip netns del nsA" (the processes run in
# the root netns then, so that nothing but srnic0 holds nsA's netdev).
# Asserts: the removal command returns and the device is gone within 10 s
# each (before srnic revoked user contexts with disassociate_ucontext, both
# waited for the processes to exit), ibv_asyncwatch gets
# IBV_EVENT_DEVICE_FATAL, the pingpong on the removed device fails within
# 10 s instead of running on, no kernel warning; at the end a fresh pair of
# devices passes traffic and srnic unloads.
#
# Each removal runs in the background and is waited for with a deadline: a
# task stuck in unregister_netdevice cannot be killed, so the test reports
# the failure and ends (the guest is powered off).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

LOG=/tmp/revoke
mkdir -p "$LOG"

# The bounds below (10 s) are for the stock kernel; a guest
# SRNIC_TIME_SCALE times slower (the debug tier's KASAN kernel, about 50
# times slower in all, measured 25 s for `ip link del` under traffic) gets
# them that many times longer.
LIM=$((10 * SRNIC_TIME_SCALE))

# wait_gone DEV: wait up to LIM s for RDMA device DEV to go
wait_gone() {
	for _ in $(seq $((LIM * 10))); do
		[ -e "/sys/class/infiniband/$1" ] || return 0
		sleep 0.1
	done
	return 1
}

# devices_up: the namespaces (again) and srnic0, srnic1 in them
devices_up() { netns_pair_setup && srnic_devs_ns; }

# pingpong_up [SRV_NS TCP_ADDR]: pingpong server on srnic0 (in netns SRV_NS,
# default nsA; "" = the root netns) and client on srnic1 (nsB) exchanging
# QP data by TCP with TCP_ADDR (default 10.99.0.1), with events (-e), many
# iterations; asyncwatch on srnic0 next to the server; returns once packets
# flow. Sets SRV, CLI, AW.
pingpong_up() {
	local srv_ns addr g0 g1 p0
	local -a pfx=()
	srv_ns=${1-nsA}
	addr=${2:-10.99.0.1}
	if [ -n "$srv_ns" ]; then
		pfx=(ip netns exec "$srv_ns")
	fi
	g0=$(roce_gid_index srnic0 10.99.0.1)
	g1=$(roce_gid_index srnic1 10.99.0.2)
	bg_start AW "${pfx[@]}" stdbuf -oL ibv_asyncwatch -d srnic0 >"$LOG/aw" 2>&1
	bg_start SRV "${pfx[@]}" ibv_rc_pingpong -d srnic0 -g "$g0" -e \
		-n 10000000 -s 4096 >"$LOG/srv" 2>&1
	PAIR_SERVER_NS=$srv_ns ready pair_tcp_listening || return 1
	bg_start CLI ip netns exec nsB ibv_rc_pingpong -d srnic1 -g "$g1" -e \
		-n 10000000 -s 4096 "$addr" >"$LOG/cli" 2>&1
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
# traffic (pingpong_up "$PP_NS" "$PP_ADDR" if PP_NS is set); check it
# returns, the device goes, the processes learn it
removal() {
	local name=$1 pid rc t0
	shift
	t_check "$name: pingpong traffic flows on srnic0" \
		pingpong_up "${PP_NS-nsA}" "${PP_ADDR:-}"
	t0=$(_t_now_us)
	"$@" &
	pid=$!
	wait_done "$LIM" "$pid"
	rc=$?
	echo "info: $name took $((($(_t_now_us) - t0) / 1000)) ms"
	if [ "$rc" = 124 ]; then
		t_fail "$name returns within $LIM s under traffic" "still running"
		t_summary
		exit 1
	fi
	t_eq "$name returns within $LIM s under traffic" "$rc" 0
	t_check "$name: srnic0 gone" wait_gone srnic0
	t_check "$name: the server gets IBV_EVENT_DEVICE_FATAL" \
		settle grep -q DEVICE_FATAL "$LOG/aw"
	wait_done "$LIM" "$SRV"
	rc=$?
	t_check "$name: the pingpong on srnic0 ends within $LIM s" test "$rc" != 124
	t_check "$name: ... with an error (exit $rc)" test "$rc" != 0 -a "$rc" != 124
	bg_cleanup
}

dmesg -C
# "unregister_netdevice: waiting for X to become free" comes after this
# many seconds of waiting, and fails the test: the same bound, scaled
sysctl -qw net.core.netdev_unregister_timeout_secs="$LIM"
srnic_load veth rdma_ucm || exit 1

t_check "devices up" devices_up || { t_summary; exit 1; }
removal "ip link del vethA" ip netns exec nsA ip link del vethA
t_check "ip link del vethA: srnic1 gone too" \
	settle test ! -e /sys/class/infiniband/srnic1

t_check "devices up again" devices_up || { t_summary; exit 1; }
removal "rdma link delete srnic0" ip netns exec nsA rdma link delete srnic0
ip netns exec nsB rdma link delete srnic1

# netns deletion: the processes in the root netns (their TCP exchange over
# vethC 10.98.0.1 <-> nsB vethD 10.98.0.2), so that nothing holds nsA
t_check "devices up for the netns deletion" devices_up || { t_summary; exit 1; }
ip link add vethC type veth peer name vethD netns nsB &&
	ip addr add 10.98.0.1/24 dev vethC && ip link set vethC up &&
	ip netns exec nsB ip addr add 10.98.0.2/24 dev vethD &&
	ip netns exec nsB ip link set vethD up
PP_NS='' PP_ADDR=10.98.0.1 removal "ip netns del nsA" ip netns del nsA
ip netns exec nsB rdma link delete srnic1
ip link del vethC

t_kernel_clean "no kernel warnings" 'unregister_netdevice: waiting'

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
