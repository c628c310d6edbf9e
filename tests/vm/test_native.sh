#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Native mode (issue 14, docs/native-provider.md), run inside the VM:
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#   both made with "type srnic_native"
#   root netns: srnicd on dum0, "type srnic" (the default mode, beside them)
#
# A native device publishes itself so that stock rdma-core's rxe provider
# never matches it (no driver id, uverbs ABI SRNIC_NATIVE_ABI_VERSION) while
# a default-mode device beside it stays exactly what it was.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

NATIVE_ABI=$(awk '$2 == "SRNIC_NATIVE_ABI_VERSION" { print $3 }' include/uapi/rdma/srnic.h)

# uverbs_abi DEV: the uverbs ABI version user space reads for DEV
uverbs_abi() {
	local u
	for u in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$u/ibdev" 2>/dev/null)" = "$1" ] && { cat "$u/abi_version"; return; }
	done
	return 1
}
# listed DEV: libibverbs lists DEV (with the providers RDMAV_DRIVERS adds)
listed() { ibv_devices | awk 'NR > 2 { print $1 }' | grep -qx "$1"; }

t_check "modinfo: the native link type autoloads srnic" \
	grep -qx rdma-link-srnic_native <(modinfo -F alias "$KO")

native_trio_up

t_eq "srnic0 sysfs srnic/provider" "$(cat "$(srnic_knob srnic0 provider)")" native
t_eq "srnicd sysfs srnic/provider" "$(cat "$(srnic_knob srnicd provider)")" rxe
t_expect_fail "srnic/provider is read-only" "Permission denied|Input/output" \
	sh -c "echo rxe > $(srnic_knob srnic0 provider)"
t_eq "srnic0 uverbs abi_version is native's" "$(uverbs_abi srnic0)" "$NATIVE_ABI"
t_eq "srnicd uverbs abi_version is rxe's" "$(uverbs_abi srnicd)" 2
# show_providers: "DEV PROVIDER ..." from srnicctl -j show
show_providers() {
	build/userspace/ctl/srnicctl -j show | python3 -c '
import json, sys
print(" ".join(r["dev"] + " " + r["modes"]["provider"] for r in json.load(sys.stdin)))'
}
t_eq "srnicctl show: each device's provider" "$(show_providers)" \
	"srnic0 native srnic1 native srnicd rxe"
t_check "rdma link shows the native devices" \
	grep -q 'link srnic0/1 .*netdev vethA' <(ip netns exec nsA rdma link show)

# stock rdma-core: the rxe provider takes the default device, never a native one
unset RDMAV_DRIVERS
t_check "stock libibverbs lists the default-mode device" listed srnicd
t_expect_fail "stock libibverbs does not list native srnic0" "" listed srnic0
t_expect_fail "stock ibv_devinfo -d srnic1 finds no device" "wasn't found|No IB devices" \
	ibv_devinfo -d srnic1
t_check "stock ibv_devinfo -d srnicd still works" \
	grep -q 'transport:.*InfiniBand' <(ibv_devinfo -d srnicd)

CTL=build/userspace/ctl/srnicctl
# doctor_status [ARGS]: "CHECK:STATUS" of srnicctl doctor's native_provider
# and selftest checks of srnic0
doctor_status() {
	"$CTL" -j doctor "$@" 2>/dev/null | python3 -c '
import json, sys
for c in json.load(sys.stdin):
    if c.get("dev") == "srnic0" and c["check"] in ("native_provider", "selftest"):
        print(c["check"] + ":" + c["status"], end=" ")'
}
t_check "doctor without the provider: native_provider fails for srnic0" \
	grep -q "native_provider:fail" <(doctor_status --no-selftest)

# srnic's provider from the build, as a user who has not installed it
export RDMAV_DRIVERS=$SRNIC_PROVIDER_LIB
t_check "srnic's provider is built" test -f "$SRNIC_PROVIDER_LIB-rdmav34.so"
listed_all() { listed srnic0 && listed srnic1 && listed srnicd; }
t_check "with srnic's provider: srnic0, srnic1 and srnicd listed" listed_all
t_check "ibv_devinfo -d srnic0 through srnic's provider" \
	grep -q 'state:.*PORT_ACTIVE' <(ibv_devinfo -d srnic0)
t_check "ibv_devinfo -d srnicd still through rxe's provider beside it" \
	grep -q 'state:.*PORT_ACTIVE' <(ibv_devinfo -d srnicd)
t_check "doctor with the provider: native_provider ok, loopback self-test passes" \
	grep -q "native_provider:ok selftest:ok" <(ip netns exec nsA bash -c "$(declare -f doctor_status); CTL=$CTL doctor_status")
out=$(with_timeout 30 /usr/bin/python3 tests/vm/native_flush.py srnic0 2>&1)
rc=$?
t_from_output native_flush.py "$rc" "$out"
pair "ibv_rc_pingpong between native devices, data checked" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 100 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 100 -s 4096 -c 10.99.0.1

# dma-buf MRs: a vgem buffer (6.1 has no other exporter), and on kernels
# that have them the system heap and udmabuf
DMABUF=/tmp/dmabuf_mr
t_check "build dmabuf_mr.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$DMABUF" tests/vm/dmabuf_mr.c -libverbs
modprobe vgem 2>/dev/null
srcs=()
# a kernel built without vgem (the debug kernel) says so; one that ships
# the module must load it
if [ -e /sys/module/vgem ] ||
	[ -n "$(find "/lib/modules/$(uname -r)" -name 'vgem.ko*' -print -quit 2>/dev/null)" ]; then
	t_check "vgem loaded (a dma-buf exporter)" test -e /sys/module/vgem
	srcs=(vgem)
else
	t_skip "dma-buf MRs on vgem" "kernel $(uname -r) has no vgem module"
fi
[ -e /dev/dma_heap/system ] && srcs+=(heap)
[ -e /dev/udmabuf ] && srcs+=(udmabuf)
# dmabuf_mr's lines, each name prefixed with [TAG]
for s in "${srcs[@]}"; do
	out=$(with_timeout 60 ip netns exec nsA "$DMABUF" srnic0 "$G0" "$s" 2>&1)
	rc=$?
	t_from_output dmabuf_mr "$rc" "$(tagged "$s" <<<"$out")"
done
if [ -e /sys/module/vgem ]; then
	out=$(with_timeout 60 "$DMABUF" srnicd 0 unsupported 2>&1)
	rc=$?
	t_from_output dmabuf_mr "$rc" "$(tagged "default mode, stock rxe provider" <<<"$out")"
fi

# native_prog PROG [LIB...]: tests/vm/PROG.c built in the guest (with
# libibverbs and LIBs), run on srnic0 (native mode) and on srnicd with
# "unsupported" (the stock rxe provider)
native_prog() {
	local bin=/tmp/$1 out rc
	t_check "build $1.c against libibverbs" \
		cc -O2 -Wall -Werror -o "$bin" "tests/vm/$1.c" -libverbs "${@:2}"
	out=$(with_timeout 60 ip netns exec nsA "$bin" srnic0 "$G0" 2>&1)
	rc=$?
	t_from_output "$1" "$rc" "$(tagged native <<<"$out")"
	out=$(with_timeout 60 "$bin" srnicd 0 unsupported 2>&1)
	rc=$?
	t_from_output "$1" "$rc" "$(tagged "default mode, stock rxe provider" <<<"$out")"
}
# ibv_rereg_mr: translation, access and PD changes seen by the data path;
# the stock provider beside it has no rereg_mr
native_prog rereg_mr
# completion timestamps: the device clock and the wall clock in each
# completion of an extended CQ; the stock provider beside it has neither
native_prog cq_timestamp
# ECE: ibv_query_ece/ibv_set_ece on srnic0 (the stock provider: neither);
# then rdma_cm between srnic0 and srnic1: the CM REQ carries the client's
# ECE (srnic's vendor id), each side's QP reports srnic's, a SEND arrives
native_prog ece -lrdmacm
ece_srv=$(mktemp)
ece_pid=
bg_start ece_pid timeout --kill-after=5 60 ip netns exec nsA /tmp/ece server 10.99.0.1 18531 \
	>"$ece_srv" 2>&1
ready pair_cm_listening
out=$(with_timeout 60 ip netns exec nsB /tmp/ece client 10.99.0.1 18531 2>&1)
rc=$?
t_from_output ece "$rc" "$(tagged "rdma_cm client" <<<"$out")"
wait "$ece_pid"
rc=$?
t_from_output ece "$rc" "$(tagged "rdma_cm server" <"$ece_srv")"
rm -f "$ece_srv"
t_eq "no ICRC errors" "$(counter srnic0 rcvd_icrc_err)" 0

t_kernel_clean "no kernel warnings"
t_check "rdma link delete srnic0" ip netns exec nsA rdma link delete srnic0
t_check "rdma link delete srnicd" rdma link delete srnicd
# srnic1 stays: rmmod takes native devices down too
t_check "rmmod with a native device left" rmmod srnic
t_expect_fail "no srnic device left" "No such file" ls -d /sys/class/infiniband/srnic1
t_kernel_clean "still no kernel warnings after teardown"
t_summary
