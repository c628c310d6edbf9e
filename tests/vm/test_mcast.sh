#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UD multicast between two srnic devices, inside the VM (tests/vm/vmrun):
#
#   netns nsA                                       netns nsB
#   srnic0 on vethA 10.99.0.1, fd99::1 ==== veth ==== vethB 10.99.0.2, fd99::2, srnic1
#   receivers: UD QPs A, B, C                         sender: UD QP S
#   attached to 239.1.2.3 / ff0e::db8:1               sends to the group, DQPN 0xFFFFFF
#
# The checks are made by tests/vm/mcast_verbs.c (libibverbs, rxe provider),
# built here and run in nsA: multicast caps in query_device; attach of an
# RC QP, of a unicast GID and detach of an unknown group fail with EINVAL;
# a second attach is a no-op; the netdev joins the IP group with the first
# attach and leaves it with the last detach (ip maddr); S's messages reach
# A and B, each its own completion, payload verified byte for byte, while
# C (attached, no receive WQE) drops its copies; after a detach a QP gets
# nothing more (the next message it gets after re-attaching is the new
# one); the same over an IPv6 group; max_mcast_qp_attach enforced; an
# attached QP cannot be destroyed (ib_core: EBUSY). Then, here: the frames
# the sender put on the wire (captured on vethB) carry the group's Ethernet
# multicast MAC and DestQP 0xFFFFFF; the exit of the program with QPs
# attached detaches them and the host leaves the group; counters; a clean
# teardown.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

BIN=/tmp/mcast_verbs

dmesg -C
if ! t_check "build mcast_verbs.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$BIN" tests/vm/mcast_verbs.c -libverbs ||
   ! t_check "srnic_load: srnic.ko and its dependencies" srnic_load veth rdma_ucm ||
   ! t_check "two namespaces on a veth pair" netns_pair_setup; then
	t_summary
	exit 1
fi
# IPv6 without DAD, so the addresses (and their GIDs) are usable at once.
ip -n nsA addr add fd99::1/64 dev vethA nodad
ip -n nsB addr add fd99::2/64 dev vethB nodad
t_check "rdma link add srnic0 (nsA)" \
	ip netns exec nsA rdma link add srnic0 type srnic netdev vethA
t_check "rdma link add srnic1 (nsB)" \
	ip netns exec nsB rdma link add srnic1 type srnic netdev vethB
G1=$(settle roce_gid_index srnic1 10.99.0.2)
G1v6=$(settle roce_gid_index srnic1 fd99::2)
t_check "srnic1 has its IPv4 and IPv6 RoCEv2 GIDs" test -n "$G1" -a -n "$G1v6"

# The sender's link is captured (tests/vm/roce_pcap.py) for the wire check
# below; the capture is ready once its file exists.
PCAP=/tmp/mcast.pcap
rm -f "$PCAP"
bg_start PCAP_PID ip netns exec nsB /usr/bin/python3 tests/vm/roce_pcap.py \
	capture vethB "$PCAP"
settle test -f "$PCAP"

snap
out=$(with_timeout 300 ip netns exec nsA "$BIN" srnic0 vethA srnic1 "$G1" "$G1v6" 2>&1)
rc=$?
t_from_output mcast_verbs "$rc" "$out" 'caps:*'
bg_stop "$PCAP_PID"

# On the wire: every RoCEv2 frame to a group has DestQP 0xFFFFFF and the
# group's Ethernet multicast MAC (01:00:5e + low 23 bits of the IPv4 group,
# 33:33 + low 32 bits of the IPv6 one). Prints "v4 N v6 N bad N".
wire() {
	/usr/bin/python3 - "$PCAP" <<-'EOF'
	import socket, struct, sys
	sys.path.insert(0, 'tests/vm')
	import roce_pcap
	g4 = socket.inet_pton(socket.AF_INET, '239.1.2.3')
	g6 = socket.inet_pton(socket.AF_INET6, 'ff0e::db8:1')
	n4 = n6 = bad = 0
	for _, d in roce_pcap.frames(sys.argv[1]):
	    if d[12:14] == b'\x08\x00' and d[23] == 17 and d[30:34] == g4:
	        ihl = (d[14] & 15) * 4
	        udp, mac = 14 + ihl, b'\x01\x00\x5e' + bytes([g4[1] & 0x7f]) + g4[2:]
	        n4 += 1
	    elif d[12:14] == b'\x86\xdd' and d[20] == 17 and d[38:54] == g6:
	        udp, mac = 54, b'\x33\x33' + g6[12:]
	        n6 += 1
	    else:
	        continue
	    dport, = struct.unpack('>H', d[udp + 2:udp + 4])
	    qpn, = struct.unpack('>I', d[udp + 12:udp + 16])
	    if d[0:6] != mac or dport != 4791 or qpn & 0xffffff != 0xffffff:
	        bad += 1
	print(f'v4 {n4} v6 {n6} bad {bad}')
	EOF
}
w=$(wire)
echo "captured on vethB: $w"
t_eq "on the wire: 25 frames to 239.1.2.3, 8 to ff0e::db8:1, all to the group MAC and DestQP 0xFFFFFF" \
	"$w" "v4 25 v6 8 bad 0"

# The program exited with 32 QPs attached to 239.1.2.4: uverbs' cleanup
# detached them (through srnic's detach_mcast) before destroying them.
left_group() { ! ip -n nsA maddr show dev vethA | grep -qw "$1"; }
user_qps() {
	local out
	out=$(rdma res show qp link srnic0/1) || { echo "rdma res failed"; return; }
	grep -c ' pid ' <<<"$out"
}
t_check "exit cleanup detached the QPs: host left 239.1.2.4" \
	settle left_group 239.1.2.4
t_eq "no user QP left on srnic0" "$(user_qps)" 0

# 16 + 4 + 4 + 1 messages to 239.1.2.3, 8 to ff0e::db8:1; received by
# srnic0 except the 4 sent while nobody was attached.
rx=$(delta srnic0 rcvd_pkts)
recvs=$(delta srnic0 rdma_recvs)
norecv=$(delta srnic0 rcvd_no_recv_wqe)
tx=$(delta srnic1 sent_pkts)
echo "srnic1 sent $tx, srnic0 received $rx packets, completed $recvs receives, dropped $norecv copies for want of a WQE"
t_check "srnic1 sent the 33 multicast messages" test "$tx" -ge 33
t_check "srnic0 received the 29 delivered ones" test "$rx" -ge 29
# A: 16 + 1 + 8, B: 16 + 4 + 1 + 8; C had no WQE
t_eq "srnic0 completed one receive per attached QP with a WQE" "$recvs" 54
# C was attached for messages 1-16 and 100-103
t_check "QP C's 20 copies were dropped for want of a WQE" test "$norecv" -ge 20
t_eq "no ICRC errors" "$(counter srnic0 rcvd_icrc_err)" 0
srnic_pair_down 'Call Trace'
rm -f "$BIN"
t_summary
