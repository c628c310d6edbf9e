#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A hardware RoCE NIC on the netdev (issue 10 item 7), run inside the VM.
# Debian's kernels build neither siw nor (without the hardware) mlx5_ib, so
# tests/vm/hwsim/srnic_hwsim.c, built here against the running kernel, stands
# in: an RDMA device of another driver with one RoCEv2 port on a netdev,
# bound either through ib_device_set_netdev() (type hwsim, as siw and mlx5
# from 6.13) or only through the get_netdev op (type hwsim_legacy, as mlx5
# before 6.13, mlx4, bnxt_re).
#
#   vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2 (root netns), dum0 (dummy)
#
# Checks: `rdma link add ... type srnic` on a netdev that has such a device
# fails with EBUSY and a kernel message naming the device and its driver, and
# leaves nothing behind, for both kinds of binding; srnic on another netdev is
# accepted; once the other device is gone srnic binds the netdev; srnicctl
# doctor reports a netdev shared with another RDMA device (exit status 1) and
# srnicctl show lists the other device with its netdev; no kernel warnings.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

CTL=$PWD/build/userspace/ctl/srnicctl

# The stand-in for this kernel: tests/vm/hwsim/build.sh (tests/tier_vm.sh has
# built it on the host; else it builds here, ~1-2 min under TCG).
HW_KO=$(tests/vm/hwsim/build.sh)
t_check "srnic_hwsim.ko for $(uname -r)" test -f "$HW_KO"
mod_load "$HW_KO" || { t_fail "insmod srnic_hwsim"; t_summary; exit 1; }
srnic_load veth dummy rdma_ucm || { t_fail "insmod srnic.ko"; t_summary; exit 1; }
veth_pair_setup || exit 1
ip link add dum0 type dummy && ip link set dum0 up

dmesg_has() { dmesg | grep -qF -- "$1"; }
no_dev() { ! rdma dev show "$1" >/dev/null 2>&1; }

# --- another driver's device bound the modern way (ib_core's netdev hash)
t_check "hwsim device hw0 on vethA" rdma link add hw0 type hwsim netdev vethA
t_check "hw0 reports netdev vethA" bash -c "rdma link show hw0/1 | grep -q 'netdev vethA'"
t_expect_fail "srnic on vethA (hw0 there) refused with EBUSY" 'Device or resource busy' \
	rdma link add srnic0 type srnic netdev vethA
t_check "kernel log names hw0 and its driver" \
	dmesg_has "vethA already has RDMA device hw0 (driver srnic_hwsim)"
t_check "nothing left behind (no srnic0)" no_dev srnic0
t_check "srnic on vethB accepted" rdma link add srnic1 type srnic netdev vethB

# --- bound through the get_netdev op only (not in ib_core's netdev hash)
t_check "hwsim_legacy device hw1 on dum0" rdma link add hw1 type hwsim_legacy netdev dum0
t_check "hw1 reports netdev dum0" bash -c "rdma link show hw1/1 | grep -q 'netdev dum0'"
t_expect_fail "srnic on dum0 (hw1 there, get_netdev op) refused with EBUSY" \
	'Device or resource busy' rdma link add srnic2 type srnic netdev dum0
t_check "kernel log names hw1" dmesg_has "dum0 already has RDMA device hw1 (driver srnic_hwsim)"
t_check "nothing left behind (no srnic2)" no_dev srnic2

# --- srnicctl sees the other devices (hw0 joins srnic1 on vethB: srnic
# cannot stop another driver from binding a netdev srnic already has)
if [ -x "$CTL" ]; then
	t_check "hwsim device hw2 on vethB (srnic1 there)" \
		rdma link add hw2 type hwsim netdev vethB
	t_expect_fail "srnicctl doctor reports vethB shared by srnic1 and hw2" \
		'srnic1 shares netdev vethB with RDMA device hw2' \
		"$CTL" doctor --no-selftest
	t_check "srnicctl show lists hw0 on vethA as another RDMA device" \
		bash -c "'$CTL' -j show hw0 | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j and all(r[\"dev\"] == \"hw0\" and r[\"kind\"] == \"other\" and r[\"netdev\"] == \"vethA\" for r in j), j'"
	t_check "hw2 deleted" rdma link delete hw2
else
	t_fail "srnicctl checks" "$CTL missing: run make userspace first"
fi

# --- once the other device is gone, srnic binds the netdev
t_check "hw0 deleted" rdma link delete hw0
t_check "srnic on vethA accepted once hw0 is gone" \
	rdma link add srnic0 type srnic netdev vethA
t_check "hw1 deleted" rdma link delete hw1
t_check "srnic on dum0 accepted once hw1 is gone" \
	rdma link add srnic2 type srnic netdev dum0

t_kernel_clean "no kernel warnings"
for d in srnic0 srnic1 srnic2; do rdma link delete "$d" 2>/dev/null; done
t_check "rmmod srnic" rmmod srnic
t_check "rmmod srnic_hwsim" rmmod srnic_hwsim
t_summary
