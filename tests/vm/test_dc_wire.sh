#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DC on the wire (issue 15, docs/dc.md), run inside the VM:
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#
# 1. Both devices "type srnic_native". tests/vm/dc_wire.py captures every
#    frame on vethB (both directions, whole, through a TPACKET_V2 ring;
#    kept in build/test-logs/dc_wire.pcap when a check fails) while
#    srnic_dc_pingpong runs a short exchange: a server with two DCTs (a
#    key with eight different bytes); a ping client (3 SENDs of 3,033 bytes, FIRST/MIDDLE/LAST, each
#    echoed by the server's DCI to the client's DCT); a multi client (two
#    rounds over both DCTs: SEND, WRITE of one or two packets, READ back,
#    FETCH_ADD, CMP_SWP; its DCI moves DCT 0 -> 1 -> 0 -> 1: four
#    generations, three DETACHes); a badkey client (an ATTACH with a wrong
#    key, NAKed; the DCI reset attaches anew with the right key, no
#    DETACH between). Then dc_wire.py parses every RoCEv2 frame
#    with a parser written from docs/dc.md alone (its header lists what it
#    checks: ICRC recomputed, opcodes, BTH fields, DCETH/DCRETH and RC's
#    headers at their offsets, keys, ATTACH and its horizon, generations,
#    PSNs, DETACH and DETACH ACK, READ responses, the NAK, UDP source
#    ports), and this script checks the counts the exchange must give
#    (generations and DETACHes per DCI, each opcode it uses, messages).
# 2. Both devices again, "type srnic" (the default mode), on the same veth:
#    dc_forge.py --default writes 150 well-formed DC frames (every kind of
#    DC request and response, at QP 1, at an RC QP, at no QP) at srnic0:
#    dc_not_dc_qp_drops moves by exactly 150, nothing else drops them, and
#    srnic0 sends nothing in answer; then ibv_rc_pingpong between the two
#    checks its data: the device works on.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

PP=build/userspace/tools/srnic_dc_pingpong
W=tests/vm/dc_wire.py
KEY=0x0123456789abcdef
spid='' cpid=''
PCAP=/tmp/dc_wire.pcap CAP_OUT=/tmp/dc_wire_cap.txt SRV_OUT=/tmp/dc_wire_srv.txt
dmesg -C
native_trio_up
t_check "srnic_dc_pingpong is built" test -x "$PP"

# dc_report NAME RC OUT: the checks of one srnic_dc_pingpong run
dc_report() {
	t_from_output "$1" "$2" "$(sed -E "s/^(ok|not ok) /\1 [$1] /;
		s/^srnic_dc_pingpong: done/$1: done/" <<<"$3")" "#*"
}

# ---------------------------------------------------------------- 1. wire
export RDMAV_DRIVERS=$SRNIC_PROVIDER_LIB
bg_start cpid ip netns exec nsB python3 "$W" capture vethB "$PCAP" >"$CAP_OUT" 2>&1
ready grep -q capturing "$CAP_OUT" || _t_setup_failed "dc_wire.py capture"
bg_start spid timeout 150 ip netns exec nsA "$PP" -d srnic0 -g "$G0" -s -n 2 -c 3 -k "$KEY" \
	>"$SRV_OUT" 2>&1
ready tcp_listening 18515 nsA
out_a=$(with_timeout 90 ip netns exec nsB "$PP" -d srnic1 -g "$G1" -m ping -i 3 -S 3001 10.99.0.1 2>&1)
dc_report ping $? "$out_a"
out_b=$(with_timeout 90 ip netns exec nsB "$PP" -d srnic1 -g "$G1" -m multi -i 2 10.99.0.1 2>&1)
dc_report multi $? "$out_b"
out_c=$(with_timeout 90 ip netns exec nsB "$PP" -d srnic1 -g "$G1" -m badkey 10.99.0.1 2>&1)
dc_report badkey $? "$out_c"
wait_done 60 "$spid"
rc=$?
[ "$rc" -eq 124 ] && bg_stop "$spid"
t_eq "the server checked the three clients (exit status)" "$rc" 0 ||
	sed 's/^/  | /' "$SRV_OUT"
bg_stop "$cpid"
sed 's/^/# /' "$CAP_OUT"
t_check "the capture dropped and cut nothing" grep -q "dropped 0 truncated 0 " "$CAP_OUT"

# the QP numbers: "# server: 2 DCTs (A..B), key K, DCI S" and
# "# client: DCI C, DCT D, key K" per client
srv_line=$(grep -m1 "^# server:" "$SRV_OUT")
read -r dct0 dct1 sdci < <(sed -E 's/.*\(([0-9]+)\.\.([0-9]+)\).*DCI ([0-9]+).*/\1 \2 \3/' <<<"$srv_line")
read -r adci adct akey < <(sed -nE 's/^# client: DCI ([0-9]+), DCT ([0-9]+), key (0x[0-9a-f]+)/\1 \2 \3/p' <<<"$out_a")
read -r bdci bdct bkey < <(sed -nE 's/^# client: DCI ([0-9]+), DCT ([0-9]+), key (0x[0-9a-f]+)/\1 \2 \3/p' <<<"$out_b")
read -r cdci cdct ckey < <(sed -nE 's/^# client: DCI ([0-9]+), DCT ([0-9]+), key (0x[0-9a-f]+)/\1 \2 \3/p' <<<"$out_c")
t_check "the QP numbers of both sides are known" test -n "${dct1:-}" -a \
	-n "${sdci:-}" -a -n "${akey:-}" -a -n "${bkey:-}" -a -n "${ckey:-}"
echo "# DCTs $dct0 $dct1 (server, $KEY), $adct $bdct $cdct (clients, $akey);" \
	"DCIs: server $sdci, ping $adci, multi $bdci, badkey $cdci"

out=$(with_timeout 120 python3 "$W" check "$PCAP" 1024 14 7 "$dct0=$KEY" \
	"$dct1=$KEY" "$adct=$akey" "$bdct=$bkey" "$cdct=$ckey" 2>&1)
rc=$?
t_from_output dc_wire.py "$rc" "$out" "info *"
# kept for a look (Wireshark, dc_wire.py check) when a check failed
if [ "$rc" -ne 0 ] || grep -q "^not ok" <<<"$out"; then
	mkdir -p build/test-logs && cp "$PCAP" build/test-logs/dc_wire.pcap &&
		echo "# the capture: build/test-logs/dc_wire.pcap"
fi
grep "^count " <<<"$out" | sed 's/^/# /'
cnt() { awk -v k="count $1" 'index($0, k " ") == 1 { print $NF }' <<<"$out"; }
# cnt_eq NAME WANT [LABEL]: dc_wire.py counted exactly WANT of NAME
cnt_eq() { t_eq "wire: ${3:-$1} = $2" "$(cnt "$1")" "$2"; }
cnt_eq "DCI $adci generations" 1 "the ping DCI's generations"
cnt_eq "DCI $sdci generations" 1 "the server DCI's generations"
cnt_eq "DCI $bdci generations" 4 "the multi DCI's generations"
cnt_eq "DCI $bdci DETACHes" 3 "the multi DCI's DETACHes"
cnt_eq "DCI $cdci generations" 2 "the badkey DCI's generations"
cnt_eq "DCI $cdci DETACHes" 0 "the badkey DCI's DETACHes"
cnt_eq "DCIs" 4
cnt_eq generations 8
cnt_eq DETACHes 3
cnt_eq "DETACH ACKs" 3
cnt_eq "wrong-key ATTACHes" 1
cnt_eq "remote access NAKs" 1
# 3 pings + 3 echoes + 4 multi SENDs + 2 badkey SENDs (one refused); 2
# one-packet and 2 two-packet WRITEs
cnt_eq "SEND messages" 12
cnt_eq "WRITE messages" 4
cnt_eq "READs answered" 4
cnt_eq "ATOMIC ACKs" 8
for op in SEND_FIRST SEND_MIDDLE SEND_LAST SEND_ONLY WRITE_FIRST WRITE_LAST \
	WRITE_ONLY READ_REQ READ_RESP_FIRST READ_RESP_LAST READ_RESP_ONLY ACK \
	ATOMIC_ACK CMP_SWP FETCH_ADD DETACH DETACH_ACK; do
	n=$(cnt "DC_$op")
	t_check "wire: DC_$op seen (${n:-0})" test "${n:-0}" -gt 0
done
t_eq "no ICRC errors at either end" \
	"$(counter srnic0 rcvd_icrc_err)$(counter srnic1 rcvd_icrc_err)" 00

# ------------------------------------------------- 2. default mode, a veth
unset RDMAV_DRIVERS
t_check "rdma link delete srnic0 (native)" ip netns exec nsA rdma link delete srnic0
t_check "rdma link delete srnic1 (native)" ip netns exec nsB rdma link delete srnic1
t_check "rdma link add srnic0 type srnic (default mode) on vethA" \
	ip netns exec nsA rdma link add srnic0 type srnic netdev vethA
t_check "rdma link add srnic1 type srnic (default mode) on vethB" \
	ip netns exec nsB rdma link add srnic1 type srnic netdev vethB
t_eq "srnic0 is in the default mode" "$(cat "$(srnic_knob srnic0 provider)")" rxe
G0=$(ready roce_gid_index srnic0 10.99.0.1) || _t_setup_failed "srnic0 GID"
G1=$(ready roce_gid_index srnic1 10.99.0.2) || _t_setup_failed "srnic1 GID"
SNAP_DEVS=srnic0
snap
mac_a=$(ip netns exec nsA cat /sys/class/net/vethA/address)
mac_b=$(ip netns exec nsB cat /sys/class/net/vethB/address)
out=$(with_timeout 60 ip netns exec nsB python3 tests/vm/dc_forge.py --default \
	vethB "$mac_b" "$mac_a" 2>&1)
t_from_output dc_forge.py $? "$out" "info *"
sent=$(sed -n 's/^info sent_total //p' <<<"$out")
t_eq "dc_forge.py wrote 150 DC frames" "${sent:-0}" 150
settle test "$(delta srnic0 dc_not_dc_qp_drops)" -ge 150
t_eq "dc_not_dc_qp_drops moved by exactly the 150" \
	"$(delta srnic0 dc_not_dc_qp_drops)" 150
t_eq "srnic0 received the 150 (rcvd_pkts)" "$(delta srnic0 rcvd_pkts)" 150
for c in rcvd_bad_hdr rcvd_icrc_err rcvd_no_qp dc_unknown_dct \
	dc_key_violations dc_attach sent_pkts sent_acks; do
	t_eq "$c unmoved by them" "$(delta srnic0 "$c")" 0
done
pair "ibv_rc_pingpong after them (default mode, data checked)" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 50 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 50 -s 4096 -c 10.99.0.1

native_trio_down
t_summary
