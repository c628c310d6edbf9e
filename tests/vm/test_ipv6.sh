#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RoCEv2 over IPv6 between two srnic devices, inside the VM (tests/vm/vmrun):
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA fd99::1 ==== veth ==== vethB fd99::2, srnic1
#   (server side)                               (client side)
#
# IPv6 addresses without DAD (nodad), so that they, and the RoCEv2 GIDs
# srnic derives from them, are usable at once. Every tool is pointed at the
# IPv6 GID (-g / -x with its index) or, for RDMA-CM, at the IPv6 address;
# pingpong and perftest still exchange QP numbers over TCP to the IPv4
# address, which has nothing to do with the RDMA traffic. Checks: each
# tool's own verdict (pingpong -c and rping -V verify the data), srnic's
# packet counters, and the namespaces' UDP-over-IPv6 counters (Udp6 in
# /proc/net/snmp6) moving with the traffic while UDP over IPv4 stays still:
# the RoCE packets really were IPv6. A capture of vethA during the RC tools
# checks each RC packet's UDP source port and IPv6 flow label: both from its
# QP pair's numbers (roce_pcap.py entropy), as the kernel's
# rdma_get_udp_sport() and hardware derive them.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

# snmp NS FILE FIELD: a counter of /proc/net/snmp or snmp6 in netns NS
snmp() {
	ip netns exec "$1" awk -v f="$3" '
		$1 == f { print $2; exit }                  # snmp6: "Name value"
		$1 == "Udp:" && !h { for (i = 2; i <= NF; i++) n[i] = $i; h = 1; next }
		$1 == "Udp:" && h { for (i = 2; i <= NF; i++) if (n[i] == f) print $i; exit }
	' "/proc/net/$2"
}

dmesg -C
if ! t_check "srnic_load: srnic.ko and its dependencies" srnic_load veth rdma_ucm ||
   ! t_check "two namespaces on a veth pair" netns_pair_setup; then
	t_summary
	exit 1
fi
ip -n nsA addr add fd99::1/64 dev vethA nodad
ip -n nsB addr add fd99::2/64 dev vethB nodad
# tentative until the veth carrier is up, even with nodad
v6_ready() {
	local a b
	a=$(ip -n nsA -6 addr show dev vethA) && b=$(ip -n nsB -6 addr show dev vethB) &&
		[[ $a == *fd99::1/64* && $b == *fd99::2/64* &&
		   $a$b != *tentative* ]]
}
t_check "IPv6 addresses up, not tentative" settle v6_ready
t_check "rdma link add srnic0 (nsA)" \
	ip netns exec nsA rdma link add srnic0 type srnic netdev vethA
t_check "rdma link add srnic1 (nsB)" \
	ip netns exec nsB rdma link add srnic1 type srnic netdev vethB

G0=$(settle roce_gid_index srnic0 fd99::1)
G1=$(settle roce_gid_index srnic1 fd99::2)
t_check "IPv6 RoCEv2 GIDs present (srnic0 #$G0, srnic1 #$G1)" \
	test -n "$G0" -a -n "$G1"
t_eq "srnic0's GID #$G0 is RoCE v2" \
	"$(cat /sys/class/infiniband/srnic0/ports/1/gid_attrs/types/"${G0:-0}")" "RoCE v2"
t_eq "srnic0's GID #$G0 is on vethA" \
	"$(cat /sys/class/infiniband/srnic0/ports/1/gid_attrs/ndevs/"${G0:-0}")" vethA

PAIR_SERVER_SECS=60
PAIR_CLIENT_SECS=55

snap
u6a0=$(snmp nsA snmp6 Udp6InDatagrams)
u6b0=$(snmp nsB snmp6 Udp6InDatagrams)
u4a0=$(snmp nsA snmp InDatagrams)

# vethA captured for the RC tools (perftest and pingpong set no flow label)
PCAP=/tmp/ipv6.pcap
rm -f "$PCAP"
bg_start PCAP_PID ip netns exec nsA /usr/bin/python3 tests/vm/roce_pcap.py \
	capture vethA "$PCAP"
settle test -f "$PCAP"

pair "ibv_rc_pingpong over IPv6, 4 KiB x 200, data checked" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
pair "ibv_ud_pingpong over IPv6, 1 KiB x 100, data checked" \
	ibv_ud_pingpong -d srnic0 -g "$G0" -n 100 -s 1024 -c -- \
	ibv_ud_pingpong -d srnic1 -g "$G1" -n 100 -s 1024 -c 10.99.0.1
for ts in ib_write_bw:4096 ib_write_bw:1048576 ib_read_bw:4096 ib_read_bw:1048576; do
	t=${ts%:*} s=${ts#*:} n=200
	[ "$s" -gt 65536 ] && n=20
	pair "$t over IPv6 -s $s" \
		"$t" -d srnic0 -x "$G0" -s "$s" -n "$n" -F -- \
		"$t" -d srnic1 -x "$G1" -s "$s" -n "$n" -F 10.99.0.1
done
bg_stop "$PCAP_PID"
t_check "RC packets on the wire: UDP source port and IPv6 flow label from the QP pair's numbers" \
	/usr/bin/python3 tests/vm/roce_pcap.py entropy "$PCAP"
t_check "the captured RC packets were IPv6 (flow label checked)" \
	bash -c "/usr/bin/python3 tests/vm/roce_pcap.py entropy '$PCAP' | grep -Eq ' ([1-9][0-9]*) RC packets \\(\\1 IPv6\\)'"

PAIR_READY=pair_cm_listening
pair "rping (RDMA-CM) to fd99::1, 100 x 1 KiB, data verified" \
	rping -s -a fd99::1 -C 100 -S 1024 -V -- \
	rping -c -a fd99::1 -C 100 -S 1024 -V
PAIR_READY=pair_tcp_listening

# Trains over IPv6 (srnic/tx_batch): each packet's own IPv6 header and
# ICRC; the receiving socket cuts the train.
srnic_knob_set tx_batch 1 srnic0 srnic1
trains0=$(counter srnic1 tx_train_packets)
pair "trains: ibv_rc_pingpong over IPv6, 64 KiB x 20, data checked" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 20 -s 65536 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 20 -s 65536 -c 10.99.0.1
pair "trains: ib_write_bw over IPv6 -s 1048576" \
	ib_write_bw -d srnic0 -x "$G0" -s 1048576 -n 20 -F -- \
	ib_write_bw -d srnic1 -x "$G1" -s 1048576 -n 20 -F 10.99.0.1
trains=$(($(counter srnic1 tx_train_packets) - trains0))
t_check "trains: srnic1 sent $trains packets in trains" test "$trains" -gt 0
srnic_knob_set tx_batch 0 srnic0 srnic1

rx=$(delta srnic0 rcvd_pkts)
tx=$(delta srnic1 sent_pkts)
u6a=$(( $(snmp nsA snmp6 Udp6InDatagrams) - u6a0 ))
u6b=$(( $(snmp nsB snmp6 Udp6InDatagrams) - u6b0 ))
u4a=$(( $(snmp nsA snmp InDatagrams) - u4a0 ))
echo "srnic1 sent $tx, srnic0 received $rx packets; UDP/IPv6 datagrams in: nsA $u6a, nsB $u6b; UDP/IPv4 in nsA: $u4a"
# rc_pingpong alone: 200 x 4 messages of 1 KiB each way
t_check "srnic1 sent packets (> 2000)" test "$tx" -gt 2000
t_check "srnic0 received packets (> 2000)" test "$rx" -gt 2000
t_check "the packets srnic0 received came over UDP/IPv6" test "$u6a" -ge "$rx"
t_check "nsB received its RoCE packets over UDP/IPv6 too (> 2000)" test "$u6b" -gt 2000
t_eq "no RoCE packet over UDP/IPv4 in nsA" "$u4a" 0
t_eq "no ICRC errors" "$(counter srnic0 rcvd_icrc_err)$(counter srnic1 rcvd_icrc_err)" 00
t_eq "no bad headers" "$(counter srnic0 rcvd_bad_hdr)$(counter srnic1 rcvd_bad_hdr)" 00
srnic_pair_down 'Call Trace'
t_summary
