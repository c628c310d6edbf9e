#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RoCEv2 over an 802.1Q VLAN, inside the VM (tests/vm/vmrun):
#
#   netns nsA                                        netns nsB
#   vethA.100 10.100.0.1                             vethB.100 10.100.0.2
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#
# 1. srnic on the real netdev, traffic on its VLAN: ib_core lists the
#    VLAN's address among the device's GIDs (its netdev the VLAN), a QP
#    sending from that GID sends through the VLAN (tagged), and what
#    arrives on the VLAN belongs to the device of the real netdev. RC and UD
#    pingpongs (data checked) and ib_write_bw on the VLAN GID; rping
#    (RDMA-CM, data verified), whose connection request the target's CM
#    answers from the GID of the VLAN the request came on: srnic's GSI
#    completion must say which (IB_WC_WITH_VLAN); mckey (RDMA-CM
#    multicast: the CM joins the group on the VLAN) and mcast_verbs
#    (ibv_attach_mcast alone: srnic joins it on the VLAN, and on a VLAN made
#    after the attach). The VLAN devices' own
#    packet counters move by at least what srnic counted: the RoCE packets
#    went through the VLAN. DC on the VLAN GIDs (native devices): a DCT's
#    replies, from an attachment or without one (a wrong key's NAK), leave
#    through the VLAN the request came on. Then the VLANs deleted under an
#    ib_write_bw on them: the deletion returns, both ends end, the devices
#    work on. A macvlan of each netdev in its namespace: its address is a
#    GID of the device below, and RC pingpong and rping run on it. Then the
#    macvlan moved into a third namespace, as a container's: srnic refuses
#    the GID ib_core offers the device below for it, with a kernel log
#    line, and a device bound to the macvlan there carries RC and RDMA-CM.
# 2. srnic bound to the VLAN netdev itself (rdma link add ... netdev
#    vethA.100): ib_core gives such a device only its link-local GID (the
#    VLAN's addresses go to the device of the real netdev), and srnic's
#    kernel log and srnicctl doctor say so. RC pingpong on the link-local
#    GIDs.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

# vstat NS DEV rx|tx: DEV's packets received or sent, in netns NS
vstat() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3_packets"; }

# rc_counted NAME GID0 GID1 N: ibv_rc_pingpong -c, N x 4 KiB, between srnic0
# (nsA, GID0) and srnic1 (nsB, GID1); srnic0 must receive every packet of
# it (4 a message at IB MTU 1024)
rc_counted() {
	snap
	pair "$1: ibv_rc_pingpong, 4 KiB x $4, data checked" \
		ibv_rc_pingpong -d srnic0 -g "$2" -n "$4" -s 4096 -c -- \
		ibv_rc_pingpong -d srnic1 -g "$3" -n "$4" -s 4096 -c 10.99.0.1
	t_check "$1: srnic0 received the pingpong's packets (>= $(($4 * 4)))" \
		test "$(delta srnic0 rcvd_pkts)" -ge $(($4 * 4))
}

# gid_ndev DEV IDX: the netdev of DEV's GID IDX
gid_ndev() { cat "/sys/class/infiniband/$1/ports/1/gid_attrs/ndevs/$2"; }

# vlans_up: VLAN 100 on vethA (10.100.0.1) and on vethB (10.100.0.2), up
vlans_up() {
	ip -n nsA link add link vethA name vethA.100 type vlan id 100 &&
		ip -n nsB link add link vethB name vethB.100 type vlan id 100 &&
		ip -n nsA addr add 10.100.0.1/24 dev vethA.100 &&
		ip -n nsB addr add 10.100.0.2/24 dev vethB.100 &&
		ip -n nsA link set vethA.100 up && ip -n nsB link set vethB.100 up
}

# no_gid DEV IP: DEV has no RoCEv2 GID of IP
no_gid() { ! roce_gid_index "$1" "$2"; }

# relink TYPE: srnic0 (vethA, nsA) and srnic1 (vethB, nsB) deleted and made
# again as rdma link type TYPE
relink() {
	ip netns exec nsA rdma link delete srnic0 &&
		ip netns exec nsB rdma link delete srnic1 &&
		ip netns exec nsA rdma link add srnic0 type "$1" netdev vethA &&
		ip netns exec nsB rdma link add srnic1 type "$1" netdev vethB
}

# ll_addr NS DEV: DEV's IPv6 link-local address in netns NS
ll_addr() { ip -n "$1" -6 -o addr show dev "$2" scope link | awk '{ sub("/.*", "", $4); print $4 }'; }

dmesg -C
if ! t_check "srnic_load: srnic.ko and its dependencies" srnic_load veth 8021q macvlan rdma_ucm ||
   ! t_check "two namespaces on a veth pair" netns_pair_setup; then
	t_summary
	exit 1
fi
t_check "VLAN 100 on vethA (nsA) and vethB (nsB)" vlans_up
pair_link_add srnic vethA vethB

G0=$(ready roce_gid_index srnic0 10.100.0.1)
G1=$(ready roce_gid_index srnic1 10.100.0.2)
t_check "the VLAN's RoCEv2 GIDs present (srnic0 #$G0, srnic1 #$G1)" \
	test -n "$G0" -a -n "$G1"
t_eq "srnic0's GID #$G0 is on vethA.100" "$(gid_ndev srnic0 "${G0:-0}")" vethA.100
t_eq "srnic1's GID #$G1 is on vethB.100" "$(gid_ndev srnic1 "${G1:-0}")" vethB.100

snap
va0=$(vstat nsA vethA.100 rx) vb0=$(vstat nsB vethB.100 tx)
pair "VLAN: ibv_rc_pingpong, 4 KiB x 200, data checked" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
pair "VLAN: ibv_ud_pingpong, 1 KiB x 100, data checked" \
	ibv_ud_pingpong -d srnic0 -g "$G0" -n 100 -s 1024 -c -- \
	ibv_ud_pingpong -d srnic1 -g "$G1" -n 100 -s 1024 -c 10.99.0.1
pair "VLAN: ib_write_bw -s 65536 -n 100" \
	ib_write_bw -d srnic0 -x "$G0" -s 65536 -n 100 -F -- \
	ib_write_bw -d srnic1 -x "$G1" -s 65536 -n 100 -F 10.99.0.1
rx=$(delta srnic0 rcvd_pkts) tx=$(delta srnic1 sent_pkts)
va=$(($(vstat nsA vethA.100 rx) - va0)) vb=$(($(vstat nsB vethB.100 tx) - vb0))
echo "srnic1 sent $tx packets, vethB.100 sent $vb; srnic0 received $rx, vethA.100 received $va"
# ib_write_bw alone: 100 x 64 KiB, 64 packets each (IB MTU 1024)
t_check "srnic0 received packets (>= 6400)" test "$rx" -ge 6400
t_check "vethA.100 received every packet srnic0 did ($va >= $rx)" test "$va" -ge "$rx"
t_check "vethB.100 sent every packet srnic1 did ($vb >= $tx)" test "$vb" -ge "$tx"

PAIR_READY=pair_cm_listening
pair "VLAN: rping (RDMA-CM) to 10.100.0.1, 50 x 1 KiB, data verified" \
	rping -s -a 10.100.0.1 -C 50 -S 1024 -V -- \
	rping -c -a 10.100.0.1 -C 50 -S 1024 -V
PAIR_READY=pair_tcp_listening

# RDMA-CM multicast on the VLAN (mckey): the CM joins the IP group on the
# VLAN (the netdev of the address it is bound to) and the QP is attached;
# the sender's 10 UD messages reach the receiver through the VLAN (mckey
# ends when its CQ had 10 completions; srnic0's rdma_recvs moves by them)
snap
va0=$(vstat nsA vethA.100 rx)
mck=
bg_start mck timeout 90 ip netns exec nsA stdbuf -oL mckey -m 239.1.2.4 -b 10.100.0.1 \
	-C 10 -S 256 >/tmp/vlan-mckey.txt 2>&1
t_check "VLAN: mckey's receiver joined 239.1.2.4 on vethA.100" \
	ready bash -c 'ip -n nsA maddr show dev vethA.100 | grep -q 239.1.2.4'
# The CM joins the IP group before librdmacm attaches the QP (when it takes
# the join event); a message sent in between is dropped (rx_no_qp). The
# receiver prints this line once it has the event, 3 s later.
t_check "VLAN: mckey's receiver has its QP attached (receiving)" \
	ready grep -q '^receiving data transfers' /tmp/vlan-mckey.txt
out=$(with_timeout 60 ip netns exec nsB mckey -s -m 239.1.2.4 -b 10.100.0.2 -C 10 -S 256 2>&1)
t_eq "VLAN: mckey sender (10 x 256 B to 239.1.2.4) exit status" $? 0 ||
	printf '%s\n' "$out" | sed 's/^/  | /'
wait "$mck"
t_eq "VLAN: mckey receiver got its 10 completions (exit status)" $? 0 ||
	sed 's/^/  | /' /tmp/vlan-mckey.txt
t_check "VLAN: mckey receiver: data transfers complete" \
	grep -q '^data transfers complete' /tmp/vlan-mckey.txt
mr=$(delta srnic0 rdma_recvs) va=$(($(vstat nsA vethA.100 rx) - va0))
t_check "VLAN: srnic0 took the 10 messages as receives (rdma_recvs +$mr)" test "$mr" -ge 10
t_check "VLAN: vethA.100 received them ($va >= 10)" test "$va" -ge 10

# UD multicast on the VLAN with ibv_attach_mcast alone, no RDMA-CM
# (tests/vm/mcast_verbs.c, as test_mcast runs it on vethA): srnic joins the
# IP group on its netdev's VLANs too (the stack drops a group's packets on
# a netdev that has not joined it), and leaves it with the last detach
MV=/tmp/mcast_verbs
if t_check "build mcast_verbs.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$MV" tests/vm/mcast_verbs.c -libverbs; then
	out=$(with_timeout 300 ip netns exec nsA "$MV" srnic0 vethA.100 srnic1 "$G1" 2>&1)
	t_from_output mcast_verbs $? "$(sed -E "s/^(ok|not ok) /\1 [VLAN] /" <<<"$out")" 'caps:*'

	# A VLAN made after the attach joins the group too (srnic's work on
	# NETDEV_CHANGEUPPER), and a deleted one gives its place back: nine
	# VLANs made, joined and deleted in turn (more than the 8 a group
	# records), then vethA.200, which must join and carry the messages
	# sent from srnic1's GID on vethB.200.
	late_vlans() {
		local id n
		for id in 201 202 203 204 205 206 207 208 209; do
			ip link add link vethA name "vethA.$id" type vlan id "$id" &&
				ip link set "vethA.$id" up || return 1
			n=0
			until ip maddr show dev "vethA.$id" | grep -q 239.1.2.6; do
				[ $((n += 1)) -le 300 ] ||
					{ echo "vethA.$id did not join 239.1.2.6" >&2; return 1; }
				sleep 0.1
			done
			ip link del "vethA.$id" || return 1
		done
		ip link add link vethA name vethA.200 type vlan id 200 &&
			ip addr add 10.200.0.1/24 dev vethA.200 &&
			ip link set vethA.200 up
	}
	# system() runs it with dash, which drops bash's exported functions
	{ declare -f late_vlans; echo late_vlans; } >/tmp/late_vlans.sh
	ip -n nsB link add link vethB name vethB.200 type vlan id 200 &&
		ip -n nsB addr add 10.200.0.2/24 dev vethB.200 &&
		ip -n nsB link set vethB.200 up
	G2=$(ready roce_gid_index srnic1 10.200.0.2)
	out=$(MCAST_VERBS_LATE="bash /tmp/late_vlans.sh" with_timeout 300 \
		ip netns exec nsA "$MV" srnic0 vethA.200 srnic1 "${G2:-0}" 2>&1)
	t_from_output mcast_verbs $? "$(sed -E "s/^(ok|not ok) /\1 [VLAN] /" <<<"$out")" '*'
	ip -n nsA link del vethA.200
	ip -n nsB link del vethB.200
fi

# 1d. A macvlan of each device's netdev, in its namespace (mvA on vethA,
# mvB on vethB): ib_core gives its addresses to the device below (the
# macvlan is an upper of its netdev), and what arrives on the macvlan is
# that device's. Before session 37 srnic dropped it: RC retried out
t_check "macvlans mvA 10.95.0.1 (on vethA) and mvB 10.95.0.2 (on vethB)" bash -c '
	ip -n nsA link add mvA link vethA type macvlan mode bridge &&
	ip -n nsA addr add 10.95.0.1/24 dev mvA && ip -n nsA link set mvA up &&
	ip -n nsB link add mvB link vethB type macvlan mode bridge &&
	ip -n nsB addr add 10.95.0.2/24 dev mvB && ip -n nsB link set mvB up'
G0=$(ready roce_gid_index srnic0 10.95.0.1)
G1=$(ready roce_gid_index srnic1 10.95.0.2)
t_check "the macvlans' GIDs are the devices' below them (srnic0 #$G0, srnic1 #$G1)" \
	test -n "$G0" -a -n "$G1"
t_eq "srnic0's GID #$G0 is on mvA" "$(gid_ndev srnic0 "${G0:-0}")" mvA
rc_counted "on the macvlans" "${G0:-0}" "${G1:-0}" 50
pair "on the macvlans: rping (RDMA-CM) to 10.95.0.1, 10 x 1 KiB, data verified" \
	rping -s -a 10.95.0.1 -C 10 -S 1024 -V -- rping -c -a 10.95.0.1 -C 10 -S 1024 -V

# mvA moved into nsC, as a container's macvlan is: ib_core offers its
# address as a GID of srnic0 again (mvA is still an upper of vethA), but
# srnic carries RoCE only in vethA's namespace, refuses it and says so in
# the kernel log. Before session 38 srnic0 listed it, RDMA-CM in nsC picked
# it, and its packets were routed in nsA by mvA's ifindex and lost. A
# device bound to mvA in nsC carries it, RDMA-CM's pick too
t_check "mvA moved into nsC, 10.95.0.1 there" bash -c '
	ip netns add nsC && ip -n nsA link set mvA netns nsC &&
	ip -n nsC link set lo up && ip -n nsC addr add 10.95.0.1/24 dev mvA &&
	ip -n nsC link set mvA up'
t_check "the kernel log says mvA's addresses are no GIDs of srnic0, and why" ready bash -c \
	"dmesg | grep -q 'srnic0: mvA is in another network namespace than vethA: srnic carries RoCE only'"
t_check "srnic0 has no GID of 10.95.0.1 (mvA, in nsC)" ready no_gid srnic0 10.95.0.1
t_check "srnic9 on mvA, in nsC" ip netns exec nsC rdma link add srnic9 type srnic netdev mvA
G9=$(ready roce_gid_index srnic9 10.95.0.1)
PAIR_SERVER_NS=nsB PAIR_CLIENT_NS=nsC \
	pair "srnic9 in nsC: ibv_rc_pingpong to srnic1, 4 KiB x 20, data checked" \
	ibv_rc_pingpong -d srnic1 -g "${G1:-0}" -n 20 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic9 -g "${G9:-0}" -n 20 -s 4096 -c 10.95.0.2
s9=$(counter srnic9 sent_pkts)
PAIR_SERVER_NS=nsB PAIR_CLIENT_NS=nsC \
	pair "from nsC: rping (RDMA-CM) to 10.95.0.2, 10 x 1 KiB, data verified" \
	rping -s -a 10.95.0.2 -C 10 -S 1024 -V -- rping -c -a 10.95.0.2 -C 10 -S 1024 -V
t_check "RDMA-CM in nsC picked srnic9: it sent the rping's packets" \
	test "$(counter srnic9 sent_pkts)" -gt "${s9:-0}"
t_check "rdma link delete srnic9" ip netns exec nsC rdma link delete srnic9
ip netns del nsC
ip -n nsB link del mvB

# 1c. DC on the VLAN's GIDs (native devices): a DCT answers from an
# attachment (ACKs, the echo's) or without one (the NAK of a wrong key),
# on the path the request came on: through the VLAN, as an RC responder.
# The VLAN devices' sent counters move by at least what srnic sent.
t_check "native devices: srnic0, srnic1 made again as type srnic_native" relink srnic_native
G0=$(ready roce_gid_index srnic0 10.100.0.1)
G1=$(ready roce_gid_index srnic1 10.100.0.2)
snap
ta0=$(vstat nsA vethA.100 tx) tb0=$(vstat nsB vethB.100 tx)
dc_ping_badkey VLAN "${G0:-0}" "${G1:-0}"
sa=$(delta srnic0 sent_pkts) sb=$(delta srnic1 sent_pkts)
ta=$(($(vstat nsA vethA.100 tx) - ta0)) tb=$(($(vstat nsB vethB.100 tx) - tb0))
echo "DC: srnic0 sent $sa packets, vethA.100 sent $ta; srnic1 sent $sb, vethB.100 sent $tb"
# 50 SENDs of 1 KiB each way, each ACKed (the DCTs' own replies): >= 100
t_check "DC: srnic0 sent packets (>= 100)" test "$sa" -ge 100
t_check "DC: vethA.100 sent every packet srnic0 did, its DCT's replies too ($ta >= $sa)" \
	test "$ta" -ge "$sa"
t_check "DC: vethB.100 sent every packet srnic1 did ($tb >= $sb)" test "$tb" -ge "$sb"
t_check "default devices again: srnic0, srnic1 made again as type srnic" relink srnic
G0=$(ready roce_gid_index srnic0 10.100.0.1)
G1=$(ready roce_gid_index srnic1 10.100.0.2)

# 1b. The VLANs deleted under an ib_write_bw on their GIDs: the deletion
# returns (nothing of srnic holds the VLAN netdev), both ends end, and the
# devices go on over the real netdevs' GIDs.
B0=$(roce_gid_index srnic0 10.99.0.1)
B1=$(roce_gid_index srnic1 10.99.0.2)
t_check "ib_write_bw on the VLAN GIDs moving packets" bw_bg_start "$G0" "$G1"
t_check "VLANs deleted mid-transfer, within 20 s" timeout 20 bash -c '
	ip -n nsB link del vethB.100 && ip -n nsA link del vethA.100'
bw_bg_ended "the deletion"
t_check "the VLAN GIDs gone" no_gid srnic0 10.100.0.1
pair "after the VLANs: ibv_rc_pingpong on vethA/vethB's GIDs, data checked" \
	ibv_rc_pingpong -d srnic0 -g "$B0" -n 50 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$B1" -n 50 -s 4096 -c 10.99.0.1

# 2. the devices bound to the VLAN netdevs
t_check "VLAN 100 again on vethA (nsA) and vethB (nsB)" vlans_up
t_check "rdma link delete srnic0, srnic1" bash -c '
	ip netns exec nsA rdma link delete srnic0 &&
	ip netns exec nsB rdma link delete srnic1'
pair_link_add srnic vethA.100 vethB.100
t_check "the kernel log says to bind to vethA for the VLAN's addresses" \
	bash -c "dmesg | grep -q 'vethA.100 is a VLAN of vethA: .* bind to vethA '"
# srnicctl doctor in nsA (srnic1's netdev is in nsB: checked there)
t_check "srnicctl doctor warns that srnic0 is on a VLAN, fix: bind to vethA" \
	doctor_has nsA srnic0 netdev_vlan warn "add srnic0 netdev vethA "
G0=$(ready roce_gid_index srnic0 "$(ll_addr nsA vethA.100)")
G1=$(ready roce_gid_index srnic1 "$(ll_addr nsB vethB.100)")
t_check "vethA.100's link-local address ready (DAD done)" ready ll_ready nsA vethA.100
t_check "vethB.100's link-local address ready (DAD done)" ready ll_ready nsB vethB.100
t_check "bound to the VLANs: link-local RoCEv2 GIDs (srnic0 #$G0, srnic1 #$G1)" \
	test -n "$G0" -a -n "$G1"
t_eq "srnic0's GID #$G0 is on vethA.100" "$(gid_ndev srnic0 "${G0:-0}")" vethA.100
t_check "bound to the VLANs: no GID of 10.100.0.1 (ib_core gives a VLAN's addresses to its real netdev's device)" \
	no_gid srnic0 10.100.0.1
rc_counted "bound to the VLANs, on the link-local GIDs" "$G0" "$G1" 100

t_eq "no ICRC errors" "$(counter srnic0 rcvd_icrc_err)$(counter srnic1 rcvd_icrc_err)" 00
t_eq "no bad headers" "$(counter srnic0 rcvd_bad_hdr)$(counter srnic1 rcvd_bad_hdr)" 00
srnic_pair_down
t_summary
