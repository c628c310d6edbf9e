#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of tools/demo.sh (runs as root inside the VM): two srnic devices
# on a veth pair between two network namespaces, then RDMA traffic.
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/vm/lib.sh

step() { printf '\n### %s\n' "$*"; }

modprobe -a veth ib_uverbs rdma_ucm udp_tunnel ip6_udp_tunnel
netns_pair_setup
step "insmod srnic.ko"
insmod srnic.ko
step "rdma link add srnic0 (nsA, vethA) / srnic1 (nsB, vethB)"
ip netns exec nsA rdma link add srnic0 type srnic netdev vethA
ip netns exec nsB rdma link add srnic1 type srnic netdev vethB
step "rdma link show"
rdma link show
step "ibv_devices (stock rdma-core, rxe provider)"
ibv_devices
step "ibv_devinfo -d srnic0"
ibv_devinfo -d srnic0
step "srnicctl dev"
build/userspace/ctl/srnicctl dev

# GID index of srnic0's IPv4 address (ib_core adds it shortly after).
gid=$(settle roce_gid_index srnic0 10.99.0.1)

step "ibv_rc_pingpong srnic0 <-> srnic1, 4 KiB x 200, data checked"
timeout 60 ip netns exec nsA ibv_rc_pingpong -d srnic0 -g "$gid" -n 200 -s 4096 -c &
srv=$!
ip netns exec nsA bash -c '. tests/vm/lib.sh; wait_tcp_listen 18515 30'
timeout 60 ip netns exec nsB ibv_rc_pingpong -d srnic1 -g "$gid" -n 200 -s 4096 -c 10.99.0.1
wait "$srv"

step "ib_write_bw srnic0 <-> srnic1, 64 KiB"
timeout 60 ip netns exec nsA ib_write_bw -d srnic0 -x "$gid" -s 65536 -D 2 -F >/dev/null &
srv=$!
ip netns exec nsA bash -c '. tests/vm/lib.sh; wait_tcp_listen 18515 30'
timeout 60 ip netns exec nsB ib_write_bw -d srnic1 -x "$gid" -s 65536 -D 2 -F 10.99.0.1
wait "$srv"

step "counters (rdma statistic)"
rdma statistic show link srnic1/1

step "rdma link delete; rmmod srnic"
ip netns exec nsA rdma link delete srnic0
ip netns exec nsB rdma link delete srnic1
rmmod srnic
echo "demo done"
