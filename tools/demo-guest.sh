#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of tools/demo.sh (runs as root inside the VM).
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/vm/lib.sh

step() { printf '\n### %s\n' "$*"; }

modprobe -a veth ib_uverbs rdma_ucm
veth_pair_setup
step "insmod srnic.ko"
insmod srnic.ko
step "rdma link add srnic0 type srnic netdev vethA; rdma link add srnic1 ... vethB"
rdma link add srnic0 type srnic netdev vethA
rdma link add srnic1 type srnic netdev vethB
step "rdma link show"
rdma link show
step "rdma dev show"
rdma dev show
step "ibv_devices (stock rdma-core, rxe provider)"
ibv_devices
step "ibv_devinfo -v -d srnic0 (port section)"
ibv_devinfo -v -d srnic0 | sed -n '/port:/,$p'
step "srnicctl dev"
build/userspace/ctl/srnicctl dev
step "rdma link delete srnic1; rmmod srnic"
rdma link delete srnic1
rmmod srnic
rdma dev show
echo "demo done"
