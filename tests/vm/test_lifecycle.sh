#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device lifecycle of srnic, run inside the VM (tests/vm/vmrun):
#
#   root netns                                  netns nsL
#   vethA 10.99.0.1 ---- veth ---- vethB        vethC 10.98.0.1 ---- vethD (root)
#   srnic0 (rdma link)                          srnic1 (rdma link, created in nsL)
#
# Asserts: rdma_rxe exclusion both ways, autoload through the rdma-link alias,
# what rdma/ibv_devices/ibv_devinfo show (GUID, port state, MTU, GIDs),
# port state following carrier, MTU following the netdev, GIDs following
# addresses, per-netns UDP 4791 sockets, every error case of "rdma link add"
# leaving nothing behind, and teardown by rdma link delete, ip link del,
# netns deletion and rmmod with devices present.
set -u
cd "$(dirname "$0")/../.."
. tests/vm/lib.sh

KVER=$(uname -r)

# 4791 = 0x12B7: is a UDP socket bound to it in the current netns?
udp4791() { grep -qi ':12B7 ' /proc/net/udp /proc/net/udp6; }
rdma_devs() { ls /sys/class/infiniband 2>/dev/null | tr '\n' ' '; }
dmesg_has() { dmesg | grep -qE "$1"; }
# Port attribute from ibv_devinfo -v (e.g. "state", "active_mtu").
devinfo() { ibv_devinfo -v -d "$1" | awk -v k="$2:" '$1 == k { print $2; exit }'; }
gids() { cat /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null; }
# Wait up to 5 s for a command to succeed (asynchronous teardown/events).
gone() { [ ! -e /sys/class/infiniband/"$1" ]; }

dmesg -C
# srnic's dependencies, so that the insmod below fails for rdma_rxe alone
mod_deps "$KO" veth rdma_ucm || exit 1
veth_pair_setup

# --- rdma_rxe exclusion -----------------------------------------------------
modprobe rdma_rxe
t_expect_fail "insmod refused while rdma_rxe is loaded" "busy|Device or resource busy" \
	insmod "$KO"
t_check "dmesg says why insmod was refused" \
	dmesg_has "srnic: rdma_rxe is loaded; srnic and rdma_rxe cannot be loaded together"
t_check "no srnic module after refused insmod" test ! -e /sys/module/srnic
modprobe -r rdma_rxe

# --- autoload through MODULE_ALIAS_RDMA_LINK ----------------------------------
mkdir -p /lib/modules/"$KVER"/extra
cp "$KO" /lib/modules/"$KVER"/extra/srnic.ko
depmod -a
t_check "rdma link add autoloads srnic" \
	rdma link add srnic0 type srnic netdev vethA
t_check "srnic module loaded by alias" test -d /sys/module/srnic

t_expect_fail "rdma_rxe refused while srnic is loaded" "busy|Device or resource busy" \
	modprobe rdma_rxe
t_check "dmesg says why rdma_rxe was refused" \
	dmesg_has "srnic: refusing to load rdma_rxe"

# --- what the tools show -----------------------------------------------------
mac=$(cat /sys/class/net/vethA/address)
IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"$mac"
m0=$(printf '%02x' $((0x$m0 ^ 2)))
want_guid="$m0$m1:${m2}ff:fe$m3:$m4$m5"
t_check "rdma link show: srnic0 ACTIVE on vethA" \
	bash -c "rdma link show srnic0/1 | grep -E 'state ACTIVE physical_state LINK_UP netdev vethA'"
t_check "rdma dev shows srnic0 with the MAC-derived node GUID" \
	bash -c "rdma dev show srnic0 | grep -q 'node_guid $want_guid'"
t_check "ibv_devices lists srnic0 with the node GUID" \
	bash -c "ibv_devices | grep -E 'srnic0[[:space:]]+${want_guid//:/}'"
t_eq "ibv_devinfo state" "$(devinfo srnic0 state)" "PORT_ACTIVE"
t_eq "ibv_devinfo link_layer" "$(devinfo srnic0 link_layer)" "Ethernet"
t_eq "ibv_devinfo max_mtu" "$(devinfo srnic0 max_mtu)" "4096"
t_eq "ibv_devinfo active_mtu at netdev MTU 1500" "$(devinfo srnic0 active_mtu)" "1024"
t_eq "ibv_devinfo fw_ver" "$(devinfo srnic0 fw_ver)" "$(cat /sys/module/srnic/version)"
t_eq "ibv_devinfo max_qp" "$(devinfo srnic0 max_qp)" "65536"
t_eq "ibv_devinfo max_cqe" "$(devinfo srnic0 max_cqe)" "32767"
t_eq "ibv_devinfo atomic_cap" "$(devinfo srnic0 atomic_cap)" "ATOMIC_HCA"
# 2^26 translation entries of 4 KiB pages (a longer ODP MR fails: ENOMEM)
t_eq "ibv_devinfo max_mr_size (256 GiB)" "$(devinfo srnic0 max_mr_size)" "0x4000000000"
t_eq "ibv_devinfo sys_image_guid" "$(devinfo srnic0 sys_image_guid)" "$want_guid"
t_check "ibv_devinfo -v lists the RoCEv2 IPv4 GID" \
	bash -c "ibv_devinfo -v -d srnic0 | grep -E 'GID\[ *[0-9]+\]:.*::ffff:10.99.0.1, RoCE v2'"
t_eq "sysfs srnic/netdev" "$(cat /sys/class/infiniband/srnic0/srnic/netdev)" "vethA"
t_eq "sysfs node_type" "$(cat /sys/class/infiniband/srnic0/node_type)" "1: CA"
t_check "UDP 4791 bound while a device exists" udp4791

# --- port state follows carrier ----------------------------------------------
ip link set vethB down          # vethA loses carrier
t_check "port DOWN when the peer drops carrier" \
	settle bash -c "rdma link show srnic0/1 | grep -q 'state DOWN'"
t_eq "ibv_devinfo state without carrier" "$(devinfo srnic0 state)" "PORT_DOWN"
t_check "PORT_ERR logged" dmesg_has "srnic0: port DOWN"
ip link set vethB up
t_check "port ACTIVE when carrier returns" \
	settle bash -c "rdma link show srnic0/1 | grep -q 'state ACTIVE'"
ip link set vethA down
t_check "port DOWN when the netdev is down" \
	settle bash -c "rdma link show srnic0/1 | grep -q 'state DOWN'"
ip link set vethA up
settle bash -c "rdma link show srnic0/1 | grep -q 'state ACTIVE'"

# --- active MTU follows the netdev MTU ----------------------------------------
ip link set vethA mtu 9000
t_eq "active_mtu at netdev MTU 9000" "$(devinfo srnic0 active_mtu)" "4096"
ip link set vethA mtu 2200
t_eq "active_mtu at netdev MTU 2200" "$(devinfo srnic0 active_mtu)" "2048"
ip link set vethA mtu 600
t_eq "active_mtu at netdev MTU 600" "$(devinfo srnic0 active_mtu)" "512"
ip link set vethA mtu 1500
t_eq "active_mtu back at 1500" "$(devinfo srnic0 active_mtu)" "1024"

# --- GIDs follow addresses -----------------------------------------------------
ip addr add 10.99.5.1/24 dev vethA
t_check "GID appears with a new IPv4 address" \
	settle bash -c "cat /sys/class/infiniband/srnic0/ports/1/gids/* | grep -q '0000:0000:0000:0000:0000:ffff:0a63:0501'"
ip addr del 10.99.5.1/24 dev vethA
t_check "GID goes with the IPv4 address" \
	settle bash -c "! cat /sys/class/infiniband/srnic0/ports/1/gids/* | grep -q 'ffff:0a63:0501'"
ip addr add fd00:99::1/64 dev vethA nodad
t_check "GID appears with a new IPv6 address" \
	settle bash -c "cat /sys/class/infiniband/srnic0/ports/1/gids/* | grep -q 'fd00:0099:0000:0000:0000:0000:0000:0001'"
ip addr del fd00:99::1/64 dev vethA
t_check "GID goes with the IPv6 address" \
	settle bash -c "! cat /sys/class/infiniband/srnic0/ports/1/gids/* | grep -q 'fd00:0099'"

# --- bad requests: clear errors, nothing left behind ---------------------------
before=$(rdma_devs)
t_expect_fail "unknown netdev refused" "No such device" \
	rdma link add srnic7 type srnic netdev nosuchdev0
t_expect_fail "non-Ethernet netdev refused" "Invalid argument" \
	rdma link add srnic7 type srnic netdev lo
t_check "dmesg explains the non-Ethernet refusal" \
	dmesg_has "srnic: lo is not an Ethernet device"
t_expect_fail "duplicate device name refused" "File exists" \
	rdma link add srnic0 type srnic netdev vethB
t_check "dmesg explains the duplicate name" \
	dmesg_has "srnic: an RDMA device named srnic0 already exists"
# the same on a netdev of its own, deleted at the end: on 7.x, which cannot
# tell a taken name before ib_register_device() refuses it, the refusal put
# the netdev's reference twice and its deletion waited forever
ip link add vethS type veth peer name vethT
t_expect_fail "duplicate device name refused (a free netdev)" "File exists" \
	rdma link add srnic0 type srnic netdev vethS
t_expect_fail "second device on the same netdev refused" "Device or resource busy" \
	rdma link add srnic7 type srnic netdev vethA
t_check "dmesg explains the busy netdev" \
	dmesg_has "srnic: vethA already has RDMA device srnic0"
t_expect_fail "name with % refused" "Invalid argument" \
	rdma link add 'srnic%d' type srnic netdev vethB
t_eq "failed adds left no device behind" "$(rdma_devs)" "$before"

# --- rdma link delete ----------------------------------------------------------
t_check "rdma link delete srnic0" rdma link delete srnic0
t_check "srnic0 gone from sysfs" gone srnic0
t_check "srnic0 gone from ibv_devices" bash -c "! ibv_devices | grep -q srnic0"
t_check "UDP 4791 closed with the last device" bash -c "! udp4791"
t_check "device can be recreated after delete" \
	rdma link add srnic0 type srnic netdev vethA

# --- per-namespace sockets and devices -----------------------------------------
ip netns add nsL
ip link add vethC type veth peer name vethD
ip link set vethC netns nsL
ip -n nsL addr add 10.98.0.1/24 dev vethC
ip -n nsL link set vethC up
ip -n nsL link set lo up
ip link set vethD up
t_check "rdma link add inside a netns" \
	ip netns exec nsL rdma link add srnic1 type srnic netdev vethC
t_check "UDP 4791 bound inside nsL" ip netns exec nsL bash -c \
	"grep -qi ':12B7 ' /proc/net/udp"
rdma link delete srnic0
t_check "root netns socket closed, nsL's stays" bash -c \
	"! grep -qi ':12B7 ' /proc/net/udp && ip netns exec nsL grep -qi ':12B7 ' /proc/net/udp"
rdma link add srnic0 type srnic netdev vethA

# --- teardown by netdev removal and netns deletion ------------------------------
ip link add vethE type veth peer name vethF
ip link set vethE up
rdma link add srnic2 type srnic netdev vethE
t_check "srnic2 exists" test -d /sys/class/infiniband/srnic2
ip link del vethE
t_check "ip link del removes the device" settle gone srnic2
ip netns del nsL
t_check "netns deletion removes its device" settle gone srnic1

# --- rmmod with devices present ---------------------------------------------------
ip link add vethG type veth peer name vethH
ip link set vethG up
rdma link add srnic3 type srnic netdev vethG
ibv_devinfo -d srnic3 >/dev/null
t_check "rmmod with two devices present" rmmod srnic
t_check "no RDMA devices left after rmmod" test -z "$(rdma_devs)"
t_check "module gone after rmmod" test ! -e /sys/module/srnic
t_check "no UDP 4791 socket left after rmmod" bash -c "! udp4791"
t_check "insmod again after rmmod" srnic_load
t_check "device again after reload" rdma link add srnic0 type srnic netdev vethA
t_check "rmmod again" rmmod srnic
ip link del vethG
ip link del vethS &
del_pid=$!
t_check "the netdev of the refused duplicate name can be deleted" \
	settle -t 20 bash -c "! kill -0 $del_pid 2>/dev/null"

t_kernel_clean "no kernel warnings, bugs or leaks reported" \
	'unregister_netdevice: waiting'

t_summary
