#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# capture_rxe.sh: record real RoCEv2 frames sent by rdma_rxe, as reference
# vectors for srnic's wire-format code (ICRC, headers, opcodes).
#
#   tests/vm/vmrun tests/vm/capture_rxe.sh OUTDIR
#
# OUTDIR must lie inside the checkout (the only host directory the guest can
# write); it is created if needed. Runs as root inside a vmrun guest:
#
#   rxe0 on vethA 10.99.0.1 fd00:99::1 <== veth ==> vethB 10.99.0.2 fd00:99::2 rxe1
#
# IPv4 uses lib.sh's veth_pair_setup; IPv6 gets the same policy routing here
# (without it the kernel would route between the two local addresses via lo).
# For each run a small python3 AF_PACKET socket on vethB records every
# Ethernet frame carrying UDP port 4791, in both directions (rxe1's are
# PACKET_OUTGOING on vethB, rxe0's arrive on it), while one verbs tool pair
# runs: server on rxe0, client on rxe1 (TCP out-of-band exchange over IPv4).
#
# Output: OUTDIR/<run>.hex, one frame per line, "<in|out> <hex>", the hex
# being the whole Ethernet frame (no FCS) as seen on vethB; OUTDIR/<run>.log
# the tools' output; OUTDIR/summary.txt the GID indexes and frame counts.
# tests/kunit/vectors/mkvectors.py turns a selection into
# tests/kunit/srnic_icrc_vectors.h.
#
# Runs (G4/G6: the RoCEv2 GID index of the IPv4-mapped / fd00:99:: address):
#   v4_rc_send   ibv_rc_pingpong -g G4 -s 3000      SEND F/M/L, ACK
#   v4_write     ib_write_bw -x G4 -s 3000 --tclass 106
#   v4_read      ib_read_bw  -x G4 -s 3000 --tclass 106
#   v4_atomic    ib_atomic_bw -x G4 --tclass 106    FETCH_ADD, ATOMIC ACK
#   v4_cas       ib_atomic_bw -A CMP_AND_SWAP ...   CMP_SWAP, ATOMIC ACK
#   v4_send_pad  ib_send_bw -x G4 -s 1025 ...       SEND FIRST + LAST, pad 3
#   v4_send_only ib_send_bw -x G4 -s 61 ...         SEND ONLY, pad 3
#   v4_ud        ibv_ud_pingpong -g G4 -s 512       UD SEND ONLY + DETH
#   v4_ud_tc     ib_send_bw -c UD -x G4 --tclass 106
#   v6_*         the same over IPv6 (perftest runs with --tclass 106;
#                perftest keeps its default hop limit 64: -L is RawEth only)
# rxe always sends a zero IPv6 flow label, and ib_core replaces the hop
# limit an application asks for (pingpong: 1) with the route's (64) when it
# resolves the destination MAC, so those masked fields are exercised by the
# KUnit suite mutating them.
set -u
. tests/vm/lib.sh

OUT=${1:-}
[ -n "$OUT" ] || { echo "usage: capture_rxe.sh OUTDIR" >&2; exit 2; }
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd -P)
CAP=/tmp/capture_rxe.py
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"

cat >"$CAP" <<'EOF'
# AF_PACKET capture of RoCEv2 frames: capture_rxe.py IFACE OUTFILE READYFILE
import signal
import socket
import sys

iface, out, ready = sys.argv[1:4]
ETH_P_ALL = 3
PACKET_OUTGOING = 4
ROCE_PORT = 4791


def udp_dport(f):
    etype = f[12:14]
    if etype == b'\x08\x00' and len(f) >= 34 and f[23] == 17:
        off = 14 + (f[14] & 0x0f) * 4
    elif etype == b'\x86\xdd' and len(f) >= 62 and f[20] == 17:
        off = 54
    else:
        return -1
    return int.from_bytes(f[off + 2:off + 4], 'big')


signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
s.bind((iface, 0))
open(ready, 'w').close()
n = 0
with open(out, 'w') as f:
    while n < 4000:
        data, addr = s.recvfrom(65536)
        if udp_dport(data) != ROCE_PORT:
            continue
        way = 'out' if addr[2] == PACKET_OUTGOING else 'in'
        f.write('%s %s\n' % (way, data.hex()))
        f.flush()
        n += 1
EOF

say() { echo "capture_rxe: $*"; echo "$*" >>"$SUMMARY"; }

# gid_index DEV PATTERN: first RoCE v2 GID index of DEV whose GID matches
gid_index() {
	local d=/sys/class/infiniband/$1/ports/1 g i gid type
	for g in "$d"/gids/*; do
		i=${g##*/}
		read -r gid <"$g" 2>/dev/null || continue
		[[ $gid == "$2" ]] || continue
		read -r type <"$d/gid_attrs/types/$i" 2>/dev/null || continue
		[ "$type" = "RoCE v2" ] && { echo "$i"; return 0; }
	done
	return 1
}

# wait_gid DEV PATTERN: up to 10 s for the GID to show up (async gid mgmt)
wait_gid() {
	local _
	for _ in $(seq 100); do
		gid_index "$1" "$2" && return 0
		sleep 0.1
	done
	return 1
}

ipv6_pair_setup() {
	ip -6 -force -batch - >/dev/null 2>&1 <<-'EOF'
	addr replace fd00:99::1/64 dev vethA nodad
	addr replace fd00:99::2/64 dev vethB nodad
	rule add pref 1000 lookup local
	route replace fd00:99::2 dev vethA src fd00:99::1 table 100
	route replace fd00:99::1 dev vethB src fd00:99::2 table 101
	rule add pref 10 oif vethA lookup 100
	rule add pref 11 oif vethB lookup 101
	rule add pref 20 iif lo to fd00:99::2 lookup 100
	rule add pref 21 iif lo to fd00:99::1 lookup 101
	EOF
	if [[ $(ip -6 rule show) == *"1000:"*"lookup local"* ]]; then
		ip -6 rule del pref 0 lookup local 2>/dev/null
	fi
	[[ $(ip -6 rule show) != "0:"*"lookup local"* ]]
}

# run NAME SERVER_CMD... -- CLIENT_CMD...: one captured server/client run
run() {
	local name=$1 srv_args=() cli_args=() cap srv rc n
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv_args+=("$1"); shift; done
	shift
	cli_args=("$@")
	rm -f /tmp/cap.ready
	bg_start cap python3 "$CAP" vethB "$OUT/$name.hex" /tmp/cap.ready
	for _ in $(seq 100); do [ -e /tmp/cap.ready ] && break; sleep 0.1; done
	{
		echo "## server: ${srv_args[*]}"
		echo "## client: ${cli_args[*]}"
	} >"$OUT/$name.log"
	bg_start srv timeout 60 "${srv_args[@]}" >>"$OUT/$name.log" 2>&1
	# wait for the TCP listen socket, unless the server gave up already
	for _ in $(seq 20); do
		wait_tcp_listen 18515 1 && break
		kill -0 "$srv" 2>/dev/null || break
	done
	if ! wait_tcp_listen 18515 0; then
		t_fail "$name" "server did not listen: $(tail -n 3 "$OUT/$name.log")"
		bg_stop "$srv"
		bg_stop "$cap"
		return 1
	fi
	with_timeout 60 "${cli_args[@]}" >>"$OUT/$name.log" 2>&1
	rc=$?
	bg_stop "$srv"
	sleep 0.3
	bg_stop "$cap"
	n=$(wc -l <"$OUT/$name.hex")
	say "$name: client exit $rc, $n frames"
	if [ "$rc" -eq 0 ] && [ "$n" -gt 0 ]; then
		t_ok "$name ($n frames)"
	else
		t_fail "$name" "client exit $rc, $n frames (see $OUT/$name.log)"
	fi
}

modprobe -a veth ib_uverbs rdma_rxe || exit 1
veth_pair_setup || exit 1
ipv6_pair_setup || { t_fail "ipv6 policy routing" "$(ip -6 rule show)"; exit 1; }
rdma link add rxe0 type rxe netdev vethA || exit 1
rdma link add rxe1 type rxe netdev vethB || exit 1

g4a=$(wait_gid rxe0 '0000:0000:0000:0000:0000:ffff:0a63:0001') || g4a=
g4b=$(wait_gid rxe1 '0000:0000:0000:0000:0000:ffff:0a63:0002') || g4b=
g6a=$(wait_gid rxe0 'fd00:0099:0000:0000:0000:0000:0000:0001') || g6a=
g6b=$(wait_gid rxe1 'fd00:0099:0000:0000:0000:0000:0000:0002') || g6b=
say "gid index: rxe0 v4 ${g4a:-none} v6 ${g6a:-none}; rxe1 v4 ${g4b:-none} v6 ${g6b:-none}"
say "kernel $(uname -r); $(ibv_devinfo -d rxe0 | grep -E 'active_mtu' | tr -s ' \t' ' ')"
if [ -z "$g4a" ] || [ -z "$g4b" ]; then
	t_fail "IPv4 GIDs" "missing"
	exit 1
fi

PEER=10.99.0.1
TC=(--tclass=106)

# pingpong: server and client pick their own GID index (-g)
pp() {
	local name=$1 tool=$2 ga=$3 gb=$4
	shift 4
	run "$name" "$tool" -d rxe0 -g "$ga" "$@" -- "$tool" -d rxe1 -g "$gb" "$@" "$PEER"
}

# perftest: -x picks the local GID index on each side
pt() {
	local name=$1 tool=$2 ga=$3 gb=$4
	shift 4
	run "$name" "$tool" -d rxe0 -x "$ga" -F "$@" -- "$tool" -d rxe1 -x "$gb" -F "$@" "$PEER"
}

pp v4_rc_send ibv_rc_pingpong "$g4a" "$g4b" -s 3000 -n 2
pt v4_write ib_write_bw "$g4a" "$g4b" -s 3000 -n 5 "${TC[@]}"
pt v4_read ib_read_bw "$g4a" "$g4b" -s 3000 -n 5 "${TC[@]}"
pt v4_atomic ib_atomic_bw "$g4a" "$g4b" -n 5 "${TC[@]}"
pt v4_cas ib_atomic_bw "$g4a" "$g4b" -n 5 -A CMP_AND_SWAP "${TC[@]}"
pt v4_send_pad ib_send_bw "$g4a" "$g4b" -s 1025 -n 5 "${TC[@]}"
pt v4_send_only ib_send_bw "$g4a" "$g4b" -s 61 -n 5 "${TC[@]}"
pp v4_ud ibv_ud_pingpong "$g4a" "$g4b" -s 512 -n 2
pt v4_ud_tc ib_send_bw "$g4a" "$g4b" -c UD -s 512 -n 5 "${TC[@]}"

if [ -n "$g6a" ] && [ -n "$g6b" ]; then
	pp v6_rc_send ibv_rc_pingpong "$g6a" "$g6b" -s 3000 -n 2
	pt v6_write ib_write_bw "$g6a" "$g6b" -s 3000 -n 5 "${TC[@]}"
	pt v6_read ib_read_bw "$g6a" "$g6b" -s 3000 -n 5 "${TC[@]}"
	pt v6_send_only ib_send_bw "$g6a" "$g6b" -s 61 -n 5 "${TC[@]}"
	pp v6_ud ibv_ud_pingpong "$g6a" "$g6b" -s 512 -n 2
	pt v6_ud_tc ib_send_bw "$g6a" "$g6b" -c UD -s 512 -n 5 "${TC[@]}"
else
	t_fail "IPv6 GIDs" "rxe0 ${g6a:-none} rxe1 ${g6b:-none}"
fi

rdma link delete rxe1
rdma link delete rxe0
modprobe -r rdma_rxe
t_summary
