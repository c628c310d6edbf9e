#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real kernel ULP on srnic, run inside the VM (tests/vm/vmrun): NVMe over
# Fabrics over RDMA, Debian's nvmet-rdma target and nvme-rdma host.
#
#   root netns (nvme-rdma and nvmet-rdma only use init_net)
#   nvme-rdma host 10.99.0.2 vethB/srnic1 <== veth ==> vethA/srnic0 10.99.0.1 nvmet-rdma
#   target: subsystem srnic-nvmeof, namespace 1 = a 32 MiB file (buffered I/O)
#
# The host connects with one I/O queue per CPU, default and read queues
# (IB_POLL_SOFTIRQ CQs) and one poll queue (IB_POLL_DIRECT CQ); the target's
# CQs are IB_POLL_WORKQUEUE. Asserts: 32 MiB written (four writers spread
# over the CPUs, so on every I/O queue at once) and read back through /dev/nvmeXn1 with
# O_DIRECT, byte for byte; on this lossless link (veth, qdisc, softnet and
# UDP drop counters checked to stay 0) nothing is sent twice: both devices'
# retransmits, local_ack_timeout_err, duplicate_request, sequence NAKs,
# READ gap retries and out-of-order counters stay 0 (issue 11 finding 8: a
# write is the target RDMA-READing the host, and reordered READ responses
# made it ask again); delete_controller returns within
# 20 s (ib_drain_qp on every host queue, all three poll contexts); the target
# is torn down (ib_drain_qp in nvmet-rdma's workqueue) within 20 s; no hung
# task (hung_task_timeout_secs=5), no kernel warnings, both srnic devices and
# the modules removed.
#
# Every step that can hang runs in the background and is waited for with a
# deadline: a task stuck in D state cannot be killed, so the test reports the
# failure with the blocked tasks' stacks and ends (the guest is powered off).
# SRNIC_KO=path overrides the module (default: srnic.ko at the repo root).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh
NVME_NQN=srnic-nvmeof
NVME_IMG=/tmp/nvmeof-ns.img
. tests/vm/nvme_lib.sh

SRC=/tmp/nvmeof-src
DST=/tmp/nvmeof-dst

# stuck NAME: FAIL NAME, report what we have and end: a task in D state
# cannot be killed, so nothing after this could be trusted
stuck() {
	t_fail "$1" "did not return (hung)"
	t_summary
	exit 1
}

nvme_prologue 5
veth_pair_setup || exit 1
t_check "devices up, IPv4 RoCEv2 GIDs present" srnic_devs_root

# --- target: file-backed namespace, RDMA port on srnic0's address ----------
if ! t_check "nvmet-rdma target: subsystem and namespace" nvmet_subsys_up ||
   ! t_check "nvmet-rdma target listens on srnic0" nvmet_port_up; then
	t_summary
	exit 1
fi
t_check "rdma_cm id listening" ready pair_cm_listening

# --- host: connect through /dev/nvme-fabrics, with a poll queue -------------
t_check "nvme-rdma connects to the target, its namespace's block device appears" \
	nvme_host_up nr_poll_queues=1 || {
	dmesg | tail -20
	t_summary
	exit 1
}
t_check "controller $CTRL is live over rdma" \
	settle bash -c "grep -qx live /sys/class/nvme/$CTRL/state && grep -qx rdma /sys/class/nvme/$CTRL/transport"
# the admin queue, an I/O queue per CPU and the poll queue: 3 QPs at least
nqp=$(rdma res show qp link srnic1/1 2>/dev/null | grep -c 'type RC')
t_check "host has its queues on srnic1 ($nqp RC QPs)" test "$nqp" -ge 3

# --- 32 MiB written and read back, nothing sent twice --------------------------
# Counters that move only when a requester sends again (timeout, sequence
# NAK, READ gap) or a responder sees a request twice or out of order.
CNTS="retransmits local_ack_timeout_err duplicate_request out_of_seq_request
rcvd_seq_err send_seq_err read_gap_retries read_resp_out_of_order
req_placed_out_of_order"
# link_drops: every drop the link could make: veth rx/tx drops, qdisc drops,
# softnet backlog drops (/proc/net/softnet_stat column 2), UDP InErrors and
# RcvbufErrors
link_drops() {
	local n=0 dev f v
	for dev in vethA vethB; do
		for f in rx_dropped tx_dropped; do
			read -r v <"/sys/class/net/$dev/statistics/$f"
			n=$((n + v))
		done
	done
	for v in $(tc -s qdisc show | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p'); do
		n=$((n + v))
	done
	while read -r _ v _; do
		n=$((n + 16#$v))
	done </proc/net/softnet_stat
	v=$(awk '/^Udp:/ { if (!h) { for (i = 2; i <= NF; i++) c[$i] = i; h = 1 }
		else print $c["InErrors"] + $c["RcvbufErrors"] }' /proc/net/snmp)
	echo $((n + v))
}
# write8 CPU I: the I-th 8 MiB of $SRC, written from CPU (on its I/O queue)
write8() {
	with_timeout 120 taskset -c "$1" dd if="$SRC" of="$NDEV" bs=1M count=8 \
		skip=$((8 * $2)) seek=$((8 * $2)) oflag=direct conv=fsync status=none
}
# write32: four writers at once, spread over the CPUs
write32() {
	local i pids=() rc=0
	for i in 0 1 2 3; do
		write8 $((i % $(nproc))) "$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	return "$rc"
}
head -c 32M /dev/urandom >"$SRC"
snap
D0=$(link_drops)
t_check "write 32 MiB through $CTRL (O_DIRECT, four writers)" write32
t_check "read 32 MiB back through $CTRL (O_DIRECT)" \
	with_timeout 120 dd if="$NDEV" of="$DST" bs=1M count=32 iflag=direct status=none
t_check "32 MiB read back equal to what was written" cmp "$SRC" "$DST"
t_check "the target's file holds the data" cmp "$SRC" "$NVME_IMG"
deltas resends
sum=0
for c in $CNTS; do
	sum=$((sum + $(delta_sum "$c")))
done
echo "info wire: $(($(delta_sum tx_bytes) / 1024)) KiB RoCE (BTH..ICRC) for 64 MiB of data moved"
t_eq "lossless link: no drop (veth, qdisc, softnet, UDP)" $(($(link_drops) - D0)) 0
t_eq "no retransmits without loss (srnic0+srnic1)" \
	"$(delta_sum retransmits)" 0
t_eq "no duplicate requests without loss (srnic0+srnic1)" \
	"$(delta_sum duplicate_request)" 0
t_eq "no timeout, sequence NAK, READ gap or reordering (sum)" "$sum" 0

# --- teardown: host, then target ------------------------------------------------
t0=$(_t_now_us)
echo 1 >"/sys/class/nvme/$CTRL/delete_controller" &
pid=$!
wait_done 20 "$pid"
rc=$?
[ "$rc" = 124 ] && stuck "delete_controller returns"
t_eq "delete_controller returns" "$rc" 0
echo "info: delete_controller took $((($(_t_now_us) - t0) / 1000)) ms"
t_check "controller gone" settle test ! -e "/sys/class/nvme/$CTRL"

target_down() { nvmet_down && modprobe -r nvme-rdma nvmet-rdma; }
target_down &
pid=$!
wait_done 20 "$pid"
rc=$?
[ "$rc" = 124 ] && stuck "target torn down, nvme-rdma and nvmet-rdma removed"
t_eq "target torn down, nvme-rdma and nvmet-rdma removed" "$rc" 0
t_eq "no RC QP left on srnic0/srnic1" "$(rdma res show qp 2>/dev/null | grep -c 'type RC')" 0

t_kernel_clean "no hung task, no kernel warnings" 'hung_task|nvme.*(error|failed)'
rdma link delete srnic0
rdma link delete srnic1
t_check "rmmod srnic after the ULP" rmmod srnic
t_summary
