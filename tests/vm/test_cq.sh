#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CQs, SRQs and the shared-ring mmaps of srnic, driven by stock rdma-core
# (rxe provider) through pyverbs, inside the VM (tests/vm/vmrun):
#
#   tests/vm/vmrun tests/vm/test_cq.sh
#
#   root netns
#   vethA 10.99.0.1 ---- veth ---- vethB 10.99.0.2
#   srnic0 (rdma link)
#
# No traffic: tests/vm/pyverbs_cq.py creates CQs of several sizes (cqe
# returned >= asked), resizes them up and down, arms them (req_notify_cq is a
# syscall srnic must enable), polls empty rings through the mmap, uses a
# completion channel, creates/modifies/queries/destroys SRQs (resize keeps
# the posted WQEs: the provider's view of the new ring is checked), posts
# receives into an SRQ ring, and expects EINVAL for oversize requests. Then:
# tests/vm/qp_churn.py creates and destroys 2000 QPs (RC and UD) while a UD
# QP sends a datagram to each before it goes (receive lookups racing
# destroy_qp); the time per pair is printed as info. Then:
# no user CQ left in "rdma res show cq", no kernel warning, and both
# "rdma link delete" and rmmod succeed.
#
# SRNIC_KO=path overrides the module (default: srnic.ko at the repo root,
# from "make module").
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

DEV=srnic0
PY=/usr/bin/python3

# user (pid-owned) CQs of $DEV in "rdma res show cq"
user_cqs() { rdma res show cq dev "$DEV" | grep -c ' pid '; }

dmesg -C
# nothing below means anything without the device
if ! t_check "srnic_load: srnic.ko and its dependencies" srnic_load veth ||
   ! t_check "veth_pair_setup" veth_pair_setup ||
   ! t_check "rdma link add $DEV on vethA" \
	rdma link add "$DEV" type srnic netdev vethA; then
	t_summary
	exit 1
fi
t_check "uverbs device of $DEV present" \
	bash -c "grep -qx $DEV /sys/class/infiniband_verbs/*/ibdev"

# --- the pyverbs checks ----------------------------------------------------
out=$(with_timeout 300 "$PY" tests/vm/pyverbs_cq.py "$DEV" 2>&1)
rc=$?
t_from_output pyverbs_cq.py "$rc" "$out"

# --- QP churn: 2000 create/destroy pairs, datagrams racing the destroys ----
SNAP_DEVS=$DEV
snap
out=$(with_timeout 600 "$PY" tests/vm/qp_churn.py "$DEV" 10.99.0.1 2000 2>&1)
rc=$?
t_from_output qp_churn.py "$rc" "$out" "info: *"
rx=$(delta "$DEV" rcvd_pkts)
t_check "the churned QPs' datagrams were received ($rx packets)" test "$rx" -ge 2000
t_eq "no user QP left once the process exited" \
	"$(rdma res show qp link "$DEV/1" | grep -c ' pid ')" 0

# --- nothing left behind ---------------------------------------------------
t_eq "no user CQ left once the process exited" "$(user_cqs)" 0
t_kernel_clean "no kernel warning or corrupt-ring report" 'WARNING|corrupt|Call Trace'
t_check "rdma link delete $DEV" rdma link delete "$DEV"
t_check "rmmod srnic" rmmod srnic
t_check "srnic unloaded" test ! -e /sys/module/srnic
t_kernel_clean "still no kernel warning after teardown" 'WARNING|Call Trace'

t_summary
