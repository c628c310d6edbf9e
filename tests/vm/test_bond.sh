#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RoCEv2 over a bond and a bridge, inside the VM (tests/vm/vmrun):
#
#   netns nsA                                   netns nsB
#   vethA 10.99.0.1 ======= veth ======= vethB 10.99.0.2   (the pingpongs' TCP)
#   bond0 10.98.0.1, active-backup:             br0 10.98.0.2, a bridge:
#     vethC (primary) ===== veth =====            vethD
#     vethE          ====== veth =====            vethF
#
# 1. srnic bound to the bond itself (srnic0 on bond0) and to a bridge
#    (srnic1 on br0): the netdev a packet is handed up on is the device's,
#    although it arrived on a slave or a bridge port. RC pingpong (data
#    checked), rping (RDMA-CM, data verified). srnicctl doctor in nsB says
#    srnic0's netdev is in nsA (before 2026-12-07: "netdev bond0 is gone").
# 2. srnic bound to the slaves, one device each (srnic0 on vethC, srnic2 on
#    vethE): ib_core gives the bond's addresses to the active slave's device
#    only, and what arrives on the bond belongs to that device. The same
#    traffic on srnic0; then the bond fails over to vethE (active_slave):
#    the bond's GID moves to srnic2 and the traffic runs there. UD
#    multicast (ibv_attach_mcast) on srnic0 with the bond's GID: srnic joins
#    the IP group on the bond, and on a VLAN of the bond made after the
#    attach. Before 2026-12-07 srnic dropped every packet handed up on a
#    bond it was not bound to, and part 2 failed.
# 3. DC on the bond's GIDs (native devices, srnic0 on the active slave):
#    the DCT's replies leave through the bond (srnic_dc_pingpong ping and
#    badkey; bond0 sends at least what srnic0 does).
# 4. srnic bound to a bridge's port (srnic1 on vethD): ib_core gives the
#    bridge's addresses to the port's device, and what arrives on br0 is the
#    one srnic device's below it. RC pingpong, rping, UD multicast on br0,
#    and DC with the DCT on the port's device (its replies leave through
#    br0). Before 2026-12-07 srnic dropped every packet handed up on a
#    bridge it was not bound to, and a DCT there answered from the port.
# 5. A bond without an active slave (balance-xor) and one srnic device on
#    its slaves (srnic0 on vethC): the bond's GIDs are that device's, and
#    what arrives on the bond too. RC pingpong, rping, doctor's netdev_bond.
#    Then a bridge over that bond, and UD multicast on a VLAN of the bridge
#    made after the attach: srnic0 joins the group there, two masters up.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

# gid_ndev DEV IDX: the netdev of DEV's GID IDX
gid_ndev() { cat "/sys/class/infiniband/$1/ports/1/gid_attrs/ndevs/$2"; }

# bond_setup: the bond, the bridge and their two veth pairs, addressed and up
bond_setup() {
	ip -n nsA link add vethC type veth peer name vethD netns nsB &&
		ip -n nsA link add vethE type veth peer name vethF netns nsB &&
		ip -n nsA link add bond0 type bond mode active-backup miimon 50 &&
		ip -n nsA link set vethC master bond0 &&
		ip -n nsA link set vethE master bond0 &&
		ip -n nsA link set bond0 type bond primary vethC &&
		ip -n nsA addr add 10.98.0.1/24 dev bond0 &&
		ip -n nsA link set bond0 up &&
		ip -n nsB link add br0 type bridge stp_state 0 &&
		ip -n nsB link set vethD master br0 &&
		ip -n nsB link set vethF master br0 &&
		ip -n nsB link set vethD up && ip -n nsB link set vethF up &&
		ip -n nsB addr add 10.98.0.2/24 dev br0 &&
		ip -n nsB link set br0 up
}

# active_slave: the bond's active slave; is_active DEV: it is DEV
active_slave() { ip netns exec nsA cat /sys/class/net/bond0/bonding/active_slave; }
is_active() { [ "$(active_slave)" = "$1" ]; }

# no_gid DEV IP: DEV has no RoCEv2 GID of IP
no_gid() { ! roce_gid_index "$1" "$2"; }

# bond_mac: bond0's MAC (its slaves' too); fdb_on PORT: br0 forwards to
# bond0's MAC through PORT
bond_mac() { ip -n nsA -br link show bond0 | awk '{ print $3 }'; }
fdb_on() { bridge -n nsB fdb show br br0 | grep -qi "^$(bond_mac) dev $1 "; }

# l2_state: what the bond and the bridge knew, printed when traffic failed
l2_state() {
	local d
	echo "  | bond0 $(bond_mac), active slave $(active_slave); br0's fdb entry:"
	bridge -n nsB fdb show br br0 | grep -i "^$(bond_mac)" | sed 's/^/  |   /'
	echo "  | nsB neigh: $(ip -n nsB neigh show 10.98.0.1)"
	for d in vethC vethE; do
		echo "  | $d rx $(ip netns exec nsA cat /sys/class/net/$d/statistics/rx_packets)" \
			"dropped $(ip netns exec nsA cat /sys/class/net/$d/statistics/rx_dropped)"
	done
	for d in srnic0 srnic1 srnic2; do
		[ -e "/sys/class/infiniband/$d" ] &&
			echo "  | $d sent $(delta $d sent_pkts) rcvd $(delta $d rcvd_pkts)" \
				"no_route $(delta $d send_no_route) no_qp $(delta $d rcvd_no_qp)" \
				"retransmits $(delta $d retransmits)"
	done
}

# traffic NAME SDEV GID_S CDEV GID_C: an RC pingpong and an rping between
# SDEV (nsA) and CDEV (nsB); SDEV must receive what they sent
traffic() {
	local name=$1 sdev=$2 gs=$3 cdev=$4 gc=$5
	snap
	pair "$name: ibv_rc_pingpong, 4 KiB x 100, data checked" \
		ibv_rc_pingpong -d "$sdev" -g "$gs" -n 100 -s 4096 -c -- \
		ibv_rc_pingpong -d "$cdev" -g "$gc" -n 100 -s 4096 -c 10.99.0.1 ||
		l2_state
	# 100 x 4 KiB, 4 packets each at IB MTU 1024
	t_check "$name: $sdev received the pingpong's packets (>= 400)" \
		test "$(delta "$sdev" rcvd_pkts)" -ge 400
	pair "$name: rping (RDMA-CM) to 10.98.0.1, 20 x 1 KiB, data verified" \
		rping -s -a 10.98.0.1 -C 20 -S 1024 -V -- \
		rping -c -a 10.98.0.1 -C 20 -S 1024 -V
}

# relink TYPE NDEV_A NDEV_B: srnic0 (nsA) and srnic1 (nsB) made again, of
# rdma link type TYPE, on NDEV_A and NDEV_B
relink() {
	ip netns exec nsA rdma link delete srnic0 && ip netns exec nsB rdma link delete srnic1 &&
		ip netns exec nsA rdma link add srnic0 type "$1" netdev "$2" &&
		ip netns exec nsB rdma link add srnic1 type "$1" netdev "$3"
}

# dc_through LABEL NS MASTER DEV [reverse]: dc_ping_badkey on the native
# devices' GIDs of 10.98.0.1 and .2; MASTER (a bond or bridge in NS) must
# have sent every packet DEV, the DCT's device, did: its replies too
dc_through() {
	local label=$1 ns=$2 master=$3 dev=$4 g0 g1 tx0 tx n
	local stat=/sys/class/net/$3/statistics/tx_packets
	g0=$(ready roce_gid_index srnic0 10.98.0.1)
	g1=$(ready roce_gid_index srnic1 10.98.0.2)
	snap
	tx0=$(ip netns exec "$ns" cat "$stat")
	dc_ping_badkey "$label" "${g0:-0}" "${g1:-0}" ${5:+"$5"}
	n=$(delta "$dev" sent_pkts) tx=$(($(ip netns exec "$ns" cat "$stat") - tx0))
	t_check "DC: $dev sent packets (>= 100)" test "$n" -ge 100
	t_check "DC: $master sent every packet $dev did, its DCT's replies too ($tx >= $n)" \
		test "$tx" -ge "$n"
}

# late_vlan LABEL UPPER: mcast_verbs' late scenario on srnic0 (nsA): UPPER.300,
# a VLAN of UPPER (a bond or bridge above srnic0's netdev) made after the
# attach, must join the group; the sender is srnic1 on br0.300 (nsB). Both
# VLANs are deleted after it
late_vlan() {
	local label=$1 upper=$2 g out
	ip -n nsB link add link br0 name br0.300 type vlan id 300 &&
		ip -n nsB addr add 10.97.0.2/24 dev br0.300 &&
		ip -n nsB link set br0.300 up
	g=$(ready roce_gid_index srnic1 10.97.0.2)
	echo "ip link add link $upper name $upper.300 type vlan id 300 &&
		ip addr add 10.97.0.1/24 dev $upper.300 && ip link set $upper.300 up" >/tmp/late_vlan.sh
	out=$(MCAST_VERBS_LATE="sh /tmp/late_vlan.sh" with_timeout 300 \
		ip netns exec nsA "$MV" srnic0 "$upper.300" srnic1 "${g:-0}" 2>&1)
	t_from_output mcast_verbs $? "$(sed -E "s/^(ok|not ok) /\1 [$label] /" <<<"$out")" '*'
	ip -n nsA link del "$upper.300"
	ip -n nsB link del br0.300
}

SNAP_DEVS="srnic0 srnic1 srnic2"
dmesg -C
# no bond0 of the module's own in the root namespace
modprobe bonding max_bonds=0
if ! t_check "srnic_load: srnic.ko and its dependencies" srnic_load veth bonding bridge 8021q rdma_ucm ||
   ! t_check "two namespaces on a veth pair" netns_pair_setup ||
   ! t_check "bond0 (vethC, vethE; active-backup) in nsA, br0 (vethD, vethF) in nsB" bond_setup; then
	t_summary
	exit 1
fi
t_check "bond0's active slave is vethC" ready is_active vethC

# 1. On the bond and on the bridge
pair_link_add srnic bond0 br0
# srnic2 exists from part 2 on; until then its counters read as 0
G0=$(ready roce_gid_index srnic0 10.98.0.1)
G1=$(ready roce_gid_index srnic1 10.98.0.2)
t_check "the bond's and the bridge's RoCEv2 GIDs (srnic0 #$G0, srnic1 #$G1)" \
	test -n "$G0" -a -n "$G1"
traffic "on bond0 and br0" srnic0 "${G0:-0}" srnic1 "${G1:-0}"
# both devices are seen from nsB (ib_core's shared mode); srnic0's netdev is
# in nsA, and doctor in nsB says so instead of failing it as gone
t_check "srnicctl doctor in nsB: srnic0's netdev bond0 is in nsA, checked there" \
	doctor_has nsB srnic0 netdev skip "bound to netdev bond0 in network namespace nsA, not this one"
t_check "srnicctl doctor in nsB finds no problem" \
	ip netns exec nsB "$T_REPO/build/userspace/ctl/srnicctl" doctor --no-selftest
# a device on a port of br0, which has srnic1 of its own: the kernel log says
# the port's device gets nothing
t_check "srnic3 on vethD, a port of br0 (srnic1's)" \
	ip netns exec nsB rdma link add srnic3 type srnic netdev vethD
t_check "the kernel log says srnic1 on br0 takes what arrives there, srnic3 none of it" \
	bash -c 'dmesg | grep -q "br0 has srnic device srnic1 of its own, which takes what arrives on br0: a device on vethD gets none of it"'
t_check "rdma link delete srnic3" ip netns exec nsB rdma link delete srnic3

# 2. On the slaves
t_check "rdma link delete srnic0" ip netns exec nsA rdma link delete srnic0
t_check "rdma link add srnic0 netdev vethC, srnic2 netdev vethE (the slaves)" \
	bash -c 'ip netns exec nsA rdma link add srnic0 type srnic netdev vethC &&
		ip netns exec nsA rdma link add srnic2 type srnic netdev vethE'
t_check "the kernel log says vethC is a slave of bond0 (whose addresses it gets while active)" \
	bash -c 'dmesg | grep -q "vethC is a slave of bond bond0: the bond.s addresses are this device.s GIDs while vethC is the active slave"'
t_check "srnicctl doctor: srnic0's netdev_bond says vethC is bond0's active slave (ok)" \
	doctor_has nsA srnic0 netdev_bond ok "vethC is a slave of bond0 (active-backup)" "(now active)"
G0=$(ready roce_gid_index srnic0 10.98.0.1)
t_check "the bond's GID is the active slave's device's (srnic0 #$G0)" test -n "$G0"
t_eq "srnic0's GID #$G0 is on bond0" "$(gid_ndev srnic0 "${G0:-0}")" bond0
t_check "srnic2 (the backup slave's) has no GID of 10.98.0.1" no_gid srnic2 10.98.0.1
traffic "on the active slave vethC" srnic0 "${G0:-0}" srnic1 "${G1:-0}"

# UD multicast with ibv_attach_mcast on the slave's device (test_mcast's
# mcast_verbs.c, with bond0 as its netdev): srnic joins the IP group on the
# bond too, whose packets are srnic0's; then a VLAN made on the bond after
# the attach (bond0.300; br0.300 on the other side) joins it as well
MV=/tmp/mcast_verbs
if t_check "build mcast_verbs.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$MV" tests/vm/mcast_verbs.c -libverbs; then
	out=$(with_timeout 300 ip netns exec nsA "$MV" srnic0 bond0 srnic1 "${G1:-0}" 2>&1)
	t_from_output mcast_verbs $? "$(sed -E "s/^(ok|not ok) /\1 [bond] /" <<<"$out")" 'caps:*'
	late_vlan "bond VLAN" bond0
fi

t_check "failover: bond0's active slave set to vethE" \
	ip -n nsA link set bond0 type bond active_slave vethE
t_check "bond0's active slave is vethE" ready is_active vethE
G2=$(ready roce_gid_index srnic2 10.98.0.1)
t_check "after the failover the bond's GID is srnic2's (#$G2)" test -n "$G2"
t_check "and no longer srnic0's" ready no_gid srnic0 10.98.0.1
# br0 learns that bond0's MAC moved behind vethF from the bond's gratuitous
# ARP on failover; were it not sent or lost, a host's own traffic through
# the bond would teach it: a ping stands in for that, and says so
if ! settle fdb_on vethF; then
	echo "# br0 had not learned bond0's move to vethE in 5 s: a ping through bond0"
	ip netns exec nsA ping -c 1 -W 2 -I bond0 10.98.0.2 >/dev/null
fi
t_check "br0 forwards to bond0's MAC through vethF (to vethE)" ready fdb_on vethF
traffic "after failover, on vethE" srnic2 "${G2:-0}" srnic1 "${G1:-0}"

t_eq "no ICRC errors" "$(counter srnic0 rcvd_icrc_err)$(counter srnic1 rcvd_icrc_err)$(counter srnic2 rcvd_icrc_err)" 000

# 3. DC on the bond's GIDs (native devices: srnic0 on the active slave vethE,
# srnic1 on br0): a DCT's replies, from an attachment (ACKs) or without one
# (a wrong key's NAK), leave through the bond that handed the request up;
# sent from the slave itself they found no neighbour (the slave has no
# address; ARP replies go to the bond) and the DCI timed out
t_check "rdma link delete srnic2" ip netns exec nsA rdma link delete srnic2
t_check "native devices: srnic0 on vethE, srnic1 on br0" relink srnic_native vethE br0
dc_through bond nsA bond0 srnic0

# 4. On a bridge's port: srnic1 on vethD, below br0 (srnic0 on the active
# slave vethE); the only srnic device below br0, so what arrives there is its
t_check "srnic0 on vethE (the active slave), srnic1 on vethD (a port of br0)" \
	relink srnic vethE vethD
t_check "the kernel log says vethD is a port of bridge br0 (whose addresses it gets)" \
	bash -c 'dmesg | grep -q "vethD is a port of bridge br0: the bridge.s addresses are this device.s GIDs"'
G0=$(ready roce_gid_index srnic0 10.98.0.1)
G1=$(ready roce_gid_index srnic1 10.98.0.2)
t_check "the bridge's GID is its port's device's (srnic1 #$G1)" test -n "$G1"
t_eq "srnic1's GID #$G1 is on br0" "$(gid_ndev srnic1 "${G1:-0}")" br0
traffic "on the bridge port vethD" srnic0 "${G0:-0}" srnic1 "${G1:-0}"
t_check "on the bridge port vethD: srnic1 received the pingpong's packets (>= 400)" \
	test "$(delta srnic1 rcvd_pkts)" -ge 400
t_check "srnicctl doctor: srnic1's netdev_bridge is ok (the only srnic device on br0's ports)" \
	doctor_has nsB srnic1 netdev_bridge ok "vethD is a port of bridge br0" \
	"the only srnic device on its ports"
# UD multicast, receivers on srnic1: srnic joins the IP group on br0 too
if [ -x "$MV" ]; then
	# br0 hands the group's packets up only while joined: count them on
	# vethF, the port they come in on from the active slave vethE
	out=$(MCAST_VERBS_RXDEV=vethF with_timeout 300 ip netns exec nsB \
		"$MV" srnic1 br0 srnic0 "${G0:-0}" 2>&1)
	t_from_output mcast_verbs $? "$(sed -E "s/^(ok|not ok) /\1 [bridge] /" <<<"$out")" 'caps:*'
fi
# a second device below br0 shares its GIDs: doctor warns
t_check "srnic3 on vethF, the bridge's other port" \
	ip netns exec nsB rdma link add srnic3 type srnic netdev vethF
t_check "srnicctl doctor: srnic1's netdev_bridge warns that srnic3 shares br0's GIDs" \
	doctor_has nsB srnic1 netdev_bridge warn "the GIDs of srnic1 and of srnic3 on vethF" \
	"one device on the bridge"
t_check "rdma link delete srnic3" ip netns exec nsB rdma link delete srnic3
# and the other way round: a device made on br0 over srnic1's port
t_check "srnic3 on br0, over srnic1's port vethD" \
	ip netns exec nsB rdma link add srnic3 type srnic netdev br0
t_check "the kernel log says srnic3 on br0 takes what arrives there, srnic1 none of it" \
	bash -c 'dmesg | grep -q "srnic device srnic1 is below br0: a device on br0 takes what arrives there, and srnic1 gets none of it"'
t_check "rdma link delete srnic3" ip netns exec nsB rdma link delete srnic3
# DC with the DCT on the port's device: its replies leave through br0
t_check "native devices: srnic0 on vethE, srnic1 on vethD" relink srnic_native vethE vethD
dc_through bridge nsB br0 srnic1 reverse

# 5. A bond without an active slave (balance-xor): ib_core gives the bond's
# addresses to every slave's device; with one srnic device on its slaves
# (srnic0 on vethC), what arrives on bond0 is that device's
t_check "bond0 made again in mode balance-xor (vethC, vethE)" bash -c '
	ip -n nsA link set bond0 down && ip -n nsA link set vethC nomaster &&
	ip -n nsA link set vethE nomaster &&
	ip -n nsA link set bond0 type bond mode balance-xor &&
	ip -n nsA link set vethC master bond0 && ip -n nsA link set vethE master bond0 &&
	ip -n nsA link set bond0 up &&
	ip -n nsA neigh flush dev bond0 && ip -n nsB neigh flush dev br0'
t_check "srnic0 on the slave vethC, srnic1 on vethD" relink srnic vethC vethD
G0=$(ready roce_gid_index srnic0 10.98.0.1)
G1=$(ready roce_gid_index srnic1 10.98.0.2)
t_check "balance-xor: the bond's GID is srnic0's (#$G0)" test -n "$G0"
t_check "srnicctl doctor: srnic0's netdev_bond is ok (the only srnic device on bond0's slaves)" \
	doctor_has nsA srnic0 netdev_bond ok "vethC is a slave of bond0 (balance-xor), which has no active slave" \
	"the only srnic device on its slaves"
traffic "balance-xor, on the slave vethC" srnic0 "${G0:-0}" srnic1 "${G1:-0}"
# A bridge over the bond (brA over bond0 over vethC, srnic0's netdev) and a
# VLAN made on the bridge after a group's attach: srnic0 joins the group on
# it, two masters up. vethE leaves the bond first: br0 floods the group's
# packets out of both its ports, and balance-xor would hand up both copies
if [ -x "$MV" ]; then
	t_check "brA, a bridge over bond0 (vethC only), in nsA" bash -c '
		ip -n nsA link set vethE nomaster &&
		ip -n nsA link add brA type bridge stp_state 0 &&
		ip -n nsA link set bond0 master brA && ip -n nsA link set brA up'
	late_vlan "VLAN of a bridge over the bond" brA
fi
srnic_pair_down
t_summary
