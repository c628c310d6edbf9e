#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Teardown under load, run inside the VM (tests/vm/vmrun). What
# test_revoke.sh (device removal under user traffic) and test_nvmeof.sh
# (orderly ULP disconnect) already assert is not repeated here.
#
# Part 1, user traffic (nsA: vethA 10.99.0.1 srnic0 <=> nsB: vethB srnic1):
#   * kill -9 of the ib_write_bw -b client, then of the server, mid-transfer
#     (both ends post WRITEs): the survivor's QP fails by retry exhaustion
#     (retry_exceeded_err +1 on its device) and the process exits with an
#     error within 15 s.
#   * rmmod srnic while ibv_rc_pingpong (both ends) and ibv_asyncwatch hold
#     contexts: srnic implements disassociate_ucontext, so ib_uverbs takes no
#     module reference for an open context and the unregister revokes them
#     (as for device removal): rmmod returns 0 within 10 s, the processes
#     get IBV_EVENT_DEVICE_FATAL and end with an error within 10 s, and
#     the rings they had mapped are unmapped: revoke_mmap.c, alive across
#     the rmmod, gets SIGBUS when it reads its CQ ring afterwards.
# Part 2, a kernel ULP (root netns; nvme-rdma and nvmet only use init_net;
# default mode only: with SRNIC_PROVIDER=native it is skipped, kernel QPs
# never meet a provider):
#   nvmet-rdma target on srnic0, nvme-rdma host on srnic1, dd writing
#   through the namespace with O_DIRECT when
#   * the target's device goes (rdma link delete srnic0): the host's
#     reconnects fail, delete_controller returns within 20 s;
#   * the host's device goes (rdma link delete srnic1): nvme-rdma removes the
#     controller within 20 s;
#   * both go (ip link del vethA), and srnic is unloaded (rmmod srnic).
#   Each time: the removal returns within 30 s (when both ends go, it
#   waits for nvme-core to time out the host's in-flight I/O and its
#   shutdown command: io_timeout and admin_timeout, set to 5 s here),
#   the controller goes within 20 s, the dd loop ends (I/O error) within
#   20 s, no task is left in D state, no hung-task report
#   (hung_task_timeout_secs=30).
#   A netns deletion with the ULP inside is not possible: nvme-rdma and
#   nvmet-rdma only use init_net, which cannot be deleted.
# Memory, after each scenario, once everything is set up again as before it
# (devices re-added, module reloaded) and idle: `rdma res show` counts equal
# to the baseline's, SUnreclaim within SLAB_TOL kB and VmallocUsed within
# VMALLOC_TOL kB of it (srnic has no slab caches of its own: its objects
# are kmalloc'd, its rings vmalloc'd). The baseline is taken after a warm-up
# of the same kind (lazily created kernel state is not a leak).
# At the end: a fresh pair passes ibv_rc_pingpong, srnic unloads, and the
# kernel log has no WARNING/BUG/Oops/refcount/hung/stall/leak report.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh
NVME_NQN=srnic-teardown
NVME_IMG=/tmp/teardown-ns.img
. tests/vm/nvme_lib.sh

LOG=/tmp/teardown
# Tolerances (kB) of the memory checks. A leaked user context costs
# well over these: its rings alone (vmalloc) are 3 x 16 KiB or more, plus
# the QP's kmalloc'd state; the leaked objects ib_core tracks are caught
# exactly by the `rdma res` counts. Below them: slab objects that other
# subsystems (netns, sockets, kworkers, the 9p root) free lazily, and
# kernel stacks (vmalloc, VMAP_STACK) that exited tasks free after an RCU
# grace period. Measured on a busy host (load 15 on 2 cores): SUnreclaim
# -144..+456 kB (the biggest: task_struct, i.e. kworkers started under
# load, radix_tree_node, inode caches), VmallocUsed 0..+64 kB, +128 kB
# once at load ~20 (kernel stacks of kworkers). srnic's own vmalloc'd
# buffers (its rings, /proc/vmallocinfo) are checked exactly.
SLAB_TOL=${SLAB_TOL:-512}
VMALLOC_TOL=${VMALLOC_TOL:-192}
mkdir -p "$LOG"

# beyond T_SPLAT_RE, in any case: these lines at the start of a message, and
# refcount, hung-task, stall, restrack and leak reports anywhere
SPLAT_I_RE='^(\[[ 0-9.]+\] )?(WARNING|BUG|Oops|general protection)|refcount|hung_task|blocked for more|stall|restrack|leak|not released'

ms_since() { echo $((($(_t_now_us) - $1) / 1000)); }

# waited SECS PID: wait_done SECS PID, then its status, or 124 if PID ran
# longer than SECS (wait_done polls every 0.1 s: it may see an exit just
# past the deadline); WAITED_MS = how long it ran
waited() {
	local t0 rc
	t0=$(_t_now_us)
	wait_done "$1" "$2"
	rc=$?
	WAITED_MS=$(ms_since "$t0")
	[ "$rc" != 124 ] && [ "$WAITED_MS" -gt $(($1 * 1000)) ] && rc=124
	return "$rc"
}

# ------------------------------------------------------------------ memory

# `rdma res show` without the device indexes (they grow as devices come
# and go)
res_counts() { rdma res show 2>/dev/null | sed 's/^[0-9]*: //' | tr '\n' ' '; }

# slab_caches: "cache kB" of every slab cache (active objects x size)
slab_caches() { awk 'NR > 2 { print $1, int($2 * $4 / 1024) }' /proc/slabinfo; }
# slab_growth BASE: the three caches (stdin vs BASE) that grew most, as info
slab_growth() {
	awk 'NR == FNR { b[$1] = $2; next } $2 - b[$1] > 0 { print $2 - b[$1], $1 }' "$1" - |
		sort -rn | head -n 3 | awk '{ printf "  info | slab %s +%d kB\n", $2, $1 }'
}

# mem_settle: let deferred frees run (RCU callbacks, lazy stack frees)
mem_settle() {
	sync
	echo 2 >/proc/sys/vm/drop_caches
	sleep 1.5
}

mem_base() {
	mem_settle
	BASE_SV=$(srnic_vmalloc)
	BASE_SLAB=$(meminfo SUnreclaim)
	BASE_VMALLOC=$(meminfo VmallocUsed)
	BASE_RES=$(res_counts)
	slab_caches >"$LOG/slab.base"
	echo "info: baseline $1: SUnreclaim ${BASE_SLAB} kB, VmallocUsed ${BASE_VMALLOC} kB, rdma res: $BASE_RES"
}

# mem_check NAME: the checks against the baseline after scenario NAME
mem_check() {
	local name=$1 slab vm res ds dv
	mem_settle
	res=$(res_counts)
	# QPs freed through call_rcu and ib_core's deferred work: settle
	for _ in $(seq 20); do
		[ "$res" = "$BASE_RES" ] && break
		sleep 0.25
		res=$(res_counts)
	done
	slab=$(meminfo SUnreclaim)
	vm=$(meminfo VmallocUsed)
	ds=$((slab - BASE_SLAB))
	dv=$((vm - BASE_VMALLOC))
	echo "info: $name: SUnreclaim ${slab} kB (${ds} kB), VmallocUsed ${vm} kB (${dv} kB)"
	slab_caches | slab_growth "$LOG/slab.base"
	t_eq "$name: rdma res counts back to the baseline" "$res" "$BASE_RES"
	t_eq "$name: srnic's vmalloc'd buffers back to the baseline (count, bytes)" \
		"$(srnic_vmalloc)" "$BASE_SV"
	t_check "$name: SUnreclaim within ${SLAB_TOL} kB of the baseline (${ds} kB)" \
		test "$ds" -le "$SLAB_TOL"
	t_check "$name: VmallocUsed within ${VMALLOC_TOL} kB of the baseline (${dv} kB)" \
		test "$dv" -le "$VMALLOC_TOL"
}

# ------------------------------------------------------------------ tasks

# d_tasks: tasks in uninterruptible sleep (D), "pid comm" per line
d_tasks() {
	local f line st
	for f in /proc/[0-9]*/stat; do
		read -r line <"$f" 2>/dev/null || continue
		st=${line##*) }
		[ "${st%% *}" = D ] && echo "${line%% *} $(cut -d' ' -f2 <<<"$line")"
	done
	return 0
}
no_d_tasks() { [ -z "$(d_tasks)" ]; }

# flowing DEV: DEV's rcvd_pkts moves by 100 within a second (15 s to start)
flowing() {
	local p0
	for _ in $(seq 15); do
		p0=$(counter "$1" rcvd_pkts)
		sleep 1
		[ "$(counter "$1" rcvd_pkts)" -gt $((p0 + 100)) ] && return 0
	done
	return 1
}

# ------------------------------------------------------------- part 1: user

# hung tasks after 30 s: above what a removal may wait for nvme-core's
# timeouts (below)
nvme_prologue 30
netns_pair_setup || exit 1
t_check "devices up (netns)" srnic_devs_ns || { t_summary; exit 1; }

pair "warm-up: ibv_rc_pingpong" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 10.99.0.1
# what the scenarios run once before the baseline (first use of a size
# class, socket caches...: measured +64 kB of kmalloc-8k without it)
pair "warm-up: ib_write_bw -b" \
	ib_write_bw -d srnic0 -x "$G0" -s 65536 -D 1 -F -b -- \
	ib_write_bw -d srnic1 -x "$G1" -s 65536 -D 1 -F -b 10.99.0.1
mem_base "user part"

# kill9 WHO: ib_write_bw -b (WRITEs both ways) between srnic0 (server) and
# srnic1 (client); kill -9 WHO (server or client) once traffic flows; the
# other must fail by retry exhaustion and exit with an error
kill9() {
	local who=$1 srv cli victim survivor sdev rc t0 name
	name="kill -9 of the ib_write_bw -b $who"
	bg_start srv ip netns exec nsA ib_write_bw -d srnic0 -x "$G0" -s 65536 \
		-D 60 -F -b >"$LOG/srv" 2>&1
	ready pair_tcp_listening
	bg_start cli ip netns exec nsB ib_write_bw -d srnic1 -x "$G1" -s 65536 \
		-D 60 -F -b 10.99.0.1 >"$LOG/cli" 2>&1
	if ! t_check "$name: WRITEs flow both ways" flowing srnic0; then
		tail -n 5 "$LOG/srv" "$LOG/cli" | sed 's/^/  | /'
		bg_cleanup
		return
	fi
	if [ "$who" = client ]; then
		victim=$cli survivor=$srv sdev=srnic0
	else
		victim=$srv survivor=$cli sdev=srnic1
	fi
	snap
	kill -KILL "$victim"
	waited 15 "$survivor"
	rc=$?
	echo "info: $name: the peer exited (status $rc) after $WAITED_MS ms"
	t_check "$name: the peer exits within 15 s, with an error (status $rc)" \
		test "$rc" != 0 -a "$rc" != 124
	t_check "$name: the peer's QP failed by retry exhaustion ($sdev retry_exceeded_err +$(delta "$sdev" retry_exceeded_err))" \
		test "$(delta "$sdev" retry_exceeded_err)" -ge 1
	grep -iE 'error|fail' "$LOG/srv" "$LOG/cli" | head -n 3 | sed 's/^/  info | /'
	bg_cleanup
	mem_check "$name"
}
kill9 client
kill9 server

# rmmod while user contexts are open; revoke_mmap holds a CQ ring mapped
t_check "build revoke_mmap.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$LOG/revoke_mmap" tests/vm/revoke_mmap.c -libverbs
rm -f "$LOG/rm.ready" "$LOG/rm.gone"
bg_start RM ip netns exec nsA "$LOG/revoke_mmap" srnic0 "$LOG/rm.ready" \
	"$LOG/rm.gone" >"$LOG/rm.out" 2>&1
settle test -e "$LOG/rm.ready"
bg_start AW ip netns exec nsA stdbuf -oL ibv_asyncwatch -d srnic0 >"$LOG/aw" 2>&1
bg_start SRV ip netns exec nsA ibv_rc_pingpong -d srnic0 -g "$G0" -e \
	-n 10000000 -s 4096 >"$LOG/pp_srv" 2>&1
settle pair_tcp_listening
bg_start CLI ip netns exec nsB ibv_rc_pingpong -d srnic1 -g "$G1" -e \
	-n 10000000 -s 4096 10.99.0.1 >"$LOG/pp_cli" 2>&1
t_check "rmmod under traffic: ibv_rc_pingpong flows" flowing srnic0
rmmod srnic >"$LOG/rmmod" 2>&1 &
waited 10 $!
rc=$?
echo "info: rmmod srnic with 3 open contexts took $WAITED_MS ms (status $rc)"
if [ "$rc" = 124 ]; then
	t_fail "rmmod srnic with open user contexts returns within 10 s" "hung"
	t_summary
	exit 1
fi
t_eq "rmmod srnic with open user contexts succeeds (revokes them)" "$rc" 0
sed 's/^/  | /' "$LOG/rmmod"
t_check "srnic unloaded" test ! -e /sys/module/srnic
t_check "rmmod: ibv_asyncwatch gets IBV_EVENT_DEVICE_FATAL" \
	settle grep -q DEVICE_FATAL "$LOG/aw"
: >"$LOG/rm.gone"
waited 10 "$RM"
rc=$?
t_from_output revoke_mmap "$rc" "$(<"$LOG/rm.out")"
for p in SRV CLI; do
	waited 10 "${!p}"
	rc=$?
	t_check "rmmod: the pingpong $p ends within 10 s with an error (status $rc)" \
		test "$rc" != 0 -a "$rc" != 124
done
bg_cleanup
t_check "insmod again" srnic_load
t_check "devices up again (netns)" srnic_devs_ns || { t_summary; exit 1; }
mem_check "rmmod with open user contexts"
t_check "no D-state task after the user part" settle no_d_tasks

t_kernel_clean -i "kernel log clean after the user part" \
	"$SPLAT_I_RE|unregister_netdevice: waiting"
ip netns exec nsA rdma link delete srnic0
ip netns exec nsB rdma link delete srnic1
ip netns del nsA
ip netns del nsB

# -------------------------------------------------------------- part 2: ULP

# fresh_ulp_devices: both devices deleted and added again, the target port
# down: the state mem_base and mem_check compare (a device a ULP has used
# keeps per-device objects, e.g. CQs, until it goes)
fresh_ulp_devices() {
	nvmet_port_down
	[ -e /sys/module/srnic ] || srnic_load || return 1
	veth_pair_setup >/dev/null || return 1
	rdma link delete srnic0 2>/dev/null
	rdma link delete srnic1 2>/dev/null
	srnic_devs_root
}

# When both ends go at once (ip link del, rmmod), the host's in-flight
# requests never get a response: nvme-rdma's controller deletion waits in
# del_gendisk (queue freeze) until nvme-core times the I/O out (io_timeout,
# 30 s by default), then for its shutdown Property Set on the admin queue
# (admin_timeout, 60 s). nvme-core's design, whatever the RNIC (a dead
# target only answers by timeout); short timeouts keep the test short, and
# bound those removals.
echo 5 >/sys/module/nvme_core/parameters/io_timeout
echo 5 >/sys/module/nvme_core/parameters/admin_timeout
# port_up: the RDMA port on 10.99.0.1, listening (its rdma_cm listener is
# bound to srnic0, so it is made again with every new srnic0)
port_up() { nvmet_port_up && settle pair_cm_listening; }
# host_up: nvme-rdma host on srnic1; sets CTRL and NDEV. Reconnects every
# second, gives up after 3 s without the target.
host_up() { nvme_host_up reconnect_delay=1,ctrl_loss_tmo=3; }

veth_pair_setup || exit 1
t_check "devices up (root netns)" srnic_devs_root
# In native mode (SRNIC_PROVIDER=native) only the devices differ for user
# space: nvme-rdma and nvmet-rdma post on kernel QPs, which never meet a
# provider, so the default mode's run of this part covers both; native
# mode goes on to the end part.
ULP_PART=1
if [ "$SRNIC_PROVIDER" = native ]; then
	ULP_PART=0
	echo "info: part 2 (kernel ULP) skipped in native mode: kernel QPs are the same in both modes (run it with SRNIC_PROVIDER=rxe)"
else
	t_check "nvmet-rdma target on srnic0" nvmet_subsys_up
	t_check "target port listens" port_up
	t_check "warm-up: nvme-rdma connects" host_up
	t_check "warm-up: 4 MiB written through the namespace" \
		with_timeout 60 dd if=/dev/zero of="$NDEV" bs=1M count=4 oflag=direct conv=nocreat status=none
	echo 1 >"/sys/class/nvme/$CTRL/delete_controller"
	settle test ! -e "/sys/class/nvme/$CTRL"
	t_check "fresh devices for the ULP baseline" fresh_ulp_devices
	mem_base "ULP part"
fi

# ulp NAME CMD...: with dd writing through the namespace, run CMD (a
# removal) in the background: it returns, the controller goes (removed by
# nvme-rdma with the host's device, or after its reconnects failed: the
# host gives up after ctrl_loss_tmo=3 s), the dd loop ends, no task stays
# in D state; then everything is set up again for mem_check
ulp() {
	local name=$1 dd rc t0
	shift
	echo "step: $name: set up"
	nvmet_port_down
	t_check "$name: target port listens" port_up || return
	if ! t_check "$name: nvme-rdma connects" host_up; then
		return
	fi
	# conv=nocreat: once the namespace's node is gone, a dd without it
	# creates a regular file of that name in /dev, and the next
	# namespace's block device cannot appear there (a CI run lost the
	# last two scenarios to that: "no namespace block device for nvme0")
	bg_start dd bash -c "while :; do dd if=/dev/zero of='$NDEV' bs=1M count=32 oflag=direct conv=nocreat status=none || exit; done" \
		>"$LOG/dd" 2>&1
	t_check "$name: dd writes flow ($CTRL)" flowing srnic0
	echo "step: $name"
	"$@" >"$LOG/cmd" 2>&1 &
	waited 30 $!
	rc=$?
	echo "info: $name during dd took $WAITED_MS ms (status $rc)"
	if [ "$rc" = 124 ] && kill -0 $! 2>/dev/null; then
		t_fail "$name during dd returns within 30 s" "hung"
		t_summary
		exit 1
	fi
	t_eq "$name during dd returns within 30 s" "$rc" 0 ||
		sed 's/^/  | /' "$LOG/cmd"
	t0=$(_t_now_us)
	t_check "$name: controller $CTRL gone within 20 s" \
		settle bash -c "for i in \$(seq 4); do [ ! -e /sys/class/nvme/$CTRL ] && exit 0; sleep 1; done; exit 1"
	echo "info: $name: controller gone after $(ms_since "$t0") ms"
	waited 20 "$dd"
	rc=$?
	t_check "$name: the dd loop ends within 20 s, with an I/O error (status $rc)" \
		test "$rc" != 0 -a "$rc" != 124
	tail -n 1 "$LOG/dd" | sed 's/^/  info | /'
	bg_cleanup
	t_check "$name: no task in D state" settle no_d_tasks || d_tasks
	t_check "$name: devices up again" fresh_ulp_devices
	mem_check "$name"
}

# the target's device goes and comes back without the port: the host's
# reconnects are rejected (no listener) until it gives up
srnic0_bounce() {
	rdma link delete srnic0 && rdma link add srnic0 type "$SRNIC_LINK_TYPE" netdev vethA
}
if [ "$ULP_PART" = 1 ]; then
	ulp "target side: rdma link delete srnic0 (and add)" srnic0_bounce
	dmesg | grep -E 'reconnect|Removing ctrl' | tail -n 3 | sed 's/^/  info | /'
	ulp "host side: rdma link delete srnic1" rdma link delete srnic1
	ulp "both: ip link del vethA" ip link del vethA
	ulp "rmmod srnic" rmmod srnic

	t_kernel_clean "kernel log clean after the ULP part (no hung task)" 'hung_task'
fi

# ------------------------------------------------------------------ the end


G0=$(roce_gid_index srnic0 10.99.0.1)
G1=$(roce_gid_index srnic1 10.99.0.2)
PAIR_SERVER_NS='' PAIR_CLIENT_NS='' \
	pair "fresh devices after it all: ibv_rc_pingpong" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 10.99.0.1 ||
	for c in sent_pkts rcvd_pkts rcvd_no_qp local_ack_timeout_err rcvd_bad_hdr; do
		echo "  info | srnic0 $c $(counter srnic0 $c), srnic1 $c $(counter srnic1 $c)"
	done
if [ "$ULP_PART" = 1 ]; then
	t_check "nvmet-rdma target removed" nvmet_down
	t_check "nvme-rdma and nvmet-rdma unload" modprobe -r nvme-rdma nvmet-rdma
fi
rdma link delete srnic0
rdma link delete srnic1
t_check "rmmod srnic at the end" rmmod srnic
# "unregister_netdevice: waiting" (after 10 s) may appear in part 2: ip link
# del waits for nvme-core's timeouts there (above)
t_kernel_clean -i "kernel log clean (no WARNING/BUG/Oops/refcount/hung/stall/leak)" \
	"$SPLAT_I_RE"
t_summary
