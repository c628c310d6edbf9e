#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DC, Dynamically Connected (issue 15, docs/dc.md), native mode only, run
# inside the VM:
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#   both made with "type srnic_native", driven by srnic's provider
#   root netns: srnicd on dum0, "type srnic" (the default mode)
#
# build/userspace/tools/srnic_dc_pingpong (its header says what each mode
# checks; the server checks every SEND it gets byte for byte and in order):
#   - ping-pong, one DCI to a DCT and back, every byte compared;
#   - one DCI to 64 DCTs in turn, SEND, WRITE, READ, FETCH_ADD and
#     CMP_SWP at each, data and values checked; dc_attach moves by 64 or
#     more and dc_detach by 63 or more (srnic0, the targets' side);
#   - 8 DCIs in 2 processes at one DCT at once, SENDs, WRITE and READ;
#   - a wrong access key: IBV_WC_REM_ACCESS_ERR, dc_key_violations moves,
#     and the DCT serves the same DCI (reset) and others after;
#   - a DCT number nobody has: the WR fails, dc_unknown_dct moves;
#   - kill -9 of a client mid-stream, then a new client is served;
#   - srnicctl qp show lists the DCT and DCI (type DCI/DCT); so does
#     Debian 13's `rdma -dd resource show qp` (type DRIVER, drv_dc_type),
#     not Debian 12's (it never asks nldev for driver-detail QPs);
#   - tests/vm/dc_forge.py: forged DC frames at an RC QP (dropped,
#     dc_not_dc_qp_drops), at no QP (dc_unknown_dct), cut inside the
#     DCETH (rcvd_bad_hdr), with a wrong key and no ATTACH
#     (dc_key_violations);
#   - the DC knobs in sysfs srnic/: out-of-range values refused; with
#     dc_max_attach 1 a killed client's quiescent attachment is evicted
#     for the next client (dc_lru_evictions), with dc_idle_ms 300 one is
#     freed by the idle scan (dc_idle_evictions);
#   - srnic_dc_bench (tools/dc-bench.sh's tool) to 16 peers: RC, DC (1 DCI),
#     DC SEND (2 DCIs): exit 0, every byte verified, its JSON fields, the
#     QPs srnicctl lists during the run (16 + 16 RC; 1 DCI + 16 DCTs); one
#     corrupted byte makes it fail;
#   - the default mode refuses DC (EOPNOTSUPP).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

PP=build/userspace/tools/srnic_dc_pingpong
dmesg -C
native_trio_up
export RDMAV_DRIVERS=$SRNIC_PROVIDER_LIB
t_check "srnic_dc_pingpong is built" test -x "$PP"

# dc_run NAME SERVER_ARGS -- CLIENT_ARGS: a server on srnic0 (nsA) and one
# client on srnic1 (nsB); both outputs' checks reported
dc_run() {
	local name=$1 srv=() cli=() pid rc_s rc_c out_s out_c
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	out_s=$(mktemp)
	bg_start pid timeout 150 ip netns exec nsA "$PP" -d srnic0 -g "$G0" \
		-s "${srv[@]}" >"$out_s" 2>&1
	ready tcp_listening 18515 nsA
	out_c=$(with_timeout 120 ip netns exec nsB "$PP" -d srnic1 -g "$G1" \
		"${cli[@]}" 10.99.0.1 2>&1)
	rc_c=$?
	wait "$pid"
	rc_s=$?
	dc_report "$name" "$rc_c" "$out_c"
	t_eq "$name: server exit status" "$rc_s" 0 || sed 's/^/  | /' "$out_s"
	rm -f "$out_s"
}

# dc_report NAME RC OUT: the checks of one srnic_dc_pingpong run
dc_report() {
	t_from_output "$1" "$2" "$(sed -E "s/^(ok|not ok) /\1 [$1] /;
		s/^srnic_dc_pingpong: done/$1: done/" <<<"$3")" "#*"
}

c0() { counter srnic0 "$1"; }
c1() { counter srnic1 "$1"; }
dc_run ping -n 1 -c 1 -- -m ping -i 50 -S 1024
dc_run "ping 4 KiB (multi-packet)" -n 1 -c 1 -- -m ping -i 10 -S 4000

att0=$(c0 dc_attach) det0=$(c0 dc_detach) reu0=$(c1 dc_attach_reused)
dc_run "64 DCTs" -n 64 -c 1 -- -m multi -i 1
t_check "dc_attach moved by 64 or more ($(($(c0 dc_attach) - att0)))" \
	test $(($(c0 dc_attach) - att0)) -ge 64
t_check "dc_detach moved by 63 or more ($(($(c0 dc_detach) - det0)))" \
	test $(($(c0 dc_detach) - det0)) -ge 63
t_check "dc_attach_reused moved (srnic1, 4 WRs a target after its first)" \
	test $(($(c1 dc_attach_reused) - reu0)) -ge 256

# one server, six clients: two flooding at once, a wrong key, an unknown
# DCT, one killed mid-stream, then a ping; the server must end clean
SRV_OUT=/tmp/dc_srv.txt QPS=/tmp/dc_qps.txt RES=/tmp/dc_res.txt
bg_start srv timeout 170 ip netns exec nsA "$PP" -d srnic0 -g "$G0" -s -n 1 \
	-c 6 >"$SRV_OUT" 2>&1
ready tcp_listening 18515 nsA
cli() { with_timeout 90 ip netns exec nsB "$PP" -d srnic1 -g "$G1" "$@" \
	10.99.0.1 2>&1; }
bg_start f1 ip netns exec nsB "$PP" -d srnic1 -g "$G1" -m flood -q 4 -i 25 \
	10.99.0.1 >/tmp/dc_f1.txt 2>&1
bg_start f2 ip netns exec nsB "$PP" -d srnic1 -g "$G1" -m flood -q 4 -i 25 \
	10.99.0.1 >/tmp/dc_f2.txt 2>&1
wait_done 120 "$f1"
rc=$?
dc_report "flood process 1" "$rc" "$(cat /tmp/dc_f1.txt)"
wait_done 120 "$f2"
rc=$?
dc_report "flood process 2" "$rc" "$(cat /tmp/dc_f2.txt)"

kv0=$(c0 dc_key_violations)
out=$(cli -m badkey)
dc_report "wrong key" $? "$out"
t_check "dc_key_violations moved" test "$(c0 dc_key_violations)" -gt "$kv0"

ud0=$(c0 dc_unknown_dct)
out=$(cli -m unknown)
dc_report "unknown DCT" $? "$out"
t_check "dc_unknown_dct moved" test "$(c0 dc_unknown_dct)" -gt "$ud0"

bg_start k ip netns exec nsB "$PP" -d srnic1 -g "$G1" -m forever 10.99.0.1 \
	>/dev/null 2>&1
sleep 3
ip netns exec nsA build/userspace/ctl/srnicctl qp show srnic0 >"$QPS" 2>&1
ip netns exec nsA rdma -dd resource show qp >"$RES" 2>&1
# ib_core dumps a QP of type DRIVER (DC QPs, like mlx5's) only to a request
# that asks for driver details (RDMA_NLDEV_ATTR_DRIVER_DETAILS). Debian 12's
# rdma (iproute2 6.1) never asks; Debian 13's (the trixie chroot) does with -dd.
RES13=/tmp/dc_res13.txt
R13=$(tools/trixie-chroot.sh --path 2>/dev/null) || R13=
if [ -n "$R13" ]; then
	mountpoint -q "$R13/proc" || mount -t proc proc "$R13/proc"
	# its lines wrap: one line per QP again
	ip netns exec nsA chroot "$R13" rdma -dd resource show qp 2>&1 |
		awk '/^link / { if (l != "") print l; l = $0; next }
		     { sub(/^ +/, " "); l = l $0 } END { if (l != "") print l }' >"$RES13"
	ip netns exec nsA chroot "$R13" rdma resource show qp >"$RES13.nodd" 2>&1
fi
kill -9 -- "-$k" 2>/dev/null
wait "$k" 2>/dev/null
t_check "srnicctl qp show: the DCT" grep -Eq '(^|[^_])type[ =:"]*DCT' "$QPS" ||
	sed 's/^/  | /' "$QPS"
t_check "srnicctl qp show: the DCI" grep -Eq '(^|[^_])type[ =:"]*DCI' "$QPS"
t_eq "rdma -dd (iproute2 6.1, no driver details asked): no DC QP" \
	"$(grep -c 'dc_type' "$RES")" 0
if [ -n "$R13" ]; then
	sed 's/^/  | rdma 13: /' "$RES13"
	t_check "rdma -dd (Debian 13's iproute2): the DCT, type DRIVER, drv_dc_type DCT" \
		grep -Eq 'link srnic0/1 .*type DRIVER .*drv_dc_type DCT' "$RES13"
	dct=$(awk '/^link srnic0\/1 .*drv_dc_type DCT/ { for (i = 1; i < NF; i++)
		if ($i == "lqpn") { print $(i + 1); exit } }' "$RES13")
	t_check "rdma -dd (Debian 13's iproute2): the client's DCI, its target the DCT (${dct:-none})" \
		grep -Eq "^link srnic1/1 .*type DRIVER .*drv_dc_type DCI drv_dc_dct ${dct:-none} " "$RES13"
	t_eq "rdma without -dd (Debian 13's iproute2): no DC QP" \
		"$(grep -c 'type DRIVER' "$RES13.nodd")" 0
else
	t_fail "trixie chroot present (Debian 13's rdma)" "tools/trixie-chroot.sh"
fi

out=$(cli -m ping -i 20)
dc_report "a new client after kill -9 of one" $? "$out"
wait_done 60 "$srv"
rc=$?
[ "$rc" -eq 124 ] && bg_stop "$srv"
t_eq "the shared server checked everything and ended (exit status)" "$rc" 0 ||
	sed 's/^/  | /' "$SRV_OUT"
t_check "the server saw the killed client go" grep -q "client .* gone" "$SRV_OUT"

# forged DC frames at srnic0, a DCT waiting there
bg_start srv timeout 90 ip netns exec nsA "$PP" -d srnic0 -g "$G0" -s -n 1 \
	-c 1 >"$SRV_OUT" 2>&1
ready tcp_listening 18515 nsA
settle grep -q "^# server:" "$SRV_OUT"
dctn=$(sed -n 's/^# server: 1 DCTs (\([0-9]*\)\.\..*/\1/p' "$SRV_OUT")
nd0=$(c0 dc_not_dc_qp_drops) ud0=$(c0 dc_unknown_dct)
kv0=$(c0 dc_key_violations) bh0=$(c0 rcvd_bad_hdr)
mac_a=$(ip netns exec nsA cat /sys/class/net/vethA/address)
mac_b=$(ip netns exec nsB cat /sys/class/net/vethB/address)
out=$(with_timeout 60 ip netns exec nsB python3 tests/vm/dc_forge.py vethB \
	"$mac_b" "$mac_a" "${dctn:-0}" 2>&1)
t_from_output dc_forge.py $? "$out" "info *"
settle counter_ge srnic0 dc_not_dc_qp_drops $((nd0 + 5))
t_eq "dc_not_dc_qp_drops: the 5 DC frames at an RC QP" \
	$(($(c0 dc_not_dc_qp_drops) - nd0)) 5
t_eq "dc_unknown_dct: the 5 at no QP" $(($(c0 dc_unknown_dct) - ud0)) 5
t_eq "rcvd_bad_hdr: the 5 cut in their DCETH" \
	$(($(c0 rcvd_bad_hdr) - bh0)) 5
t_eq "dc_key_violations: the 5 with a wrong key" \
	$(($(c0 dc_key_violations) - kv0)) 5
out=$(cli -m ping -i 5)
dc_report "the DCT serves after the forged frames" $? "$out"
wait_done 30 "$srv"
rc=$?
[ "$rc" -eq 124 ] && bg_stop "$srv"
t_eq "its server ended clean" "$rc" 0 || sed 's/^/  | /' "$SRV_OUT"

# the DC knobs (sysfs srnic/): out-of-range values refused; a DCT made
# with dc_max_attach 1 evicts a killed client's quiescent attachment for
# the next client (LRU), and one idle past dc_idle_ms is freed by the scan
K=/sys/class/infiniband/srnic0/srnic
t_eq "dc_max_attach defaults to 256" "$(cat $K/dc_max_attach)" 256
t_eq "dc_idle_ms defaults to 10000" "$(cat $K/dc_idle_ms)" 10000
t_expect_fail "dc_max_attach 0 refused" "" sh -c "echo 0 >$K/dc_max_attach"
t_expect_fail "dc_idle_ms 3600001 refused" "" \
	sh -c "echo 3600001 >$K/dc_idle_ms"
t_eq "dc_max_attach unchanged by them" "$(cat $K/dc_max_attach)" 256
echo 1 >$K/dc_max_attach && echo 60000 >$K/dc_idle_ms
# dc_knob_server: a server on srnic0 for two clients (a killed one, then a
# ping), made with the knobs as they are now
dc_knob_server() {
	bg_start srv timeout 120 ip netns exec nsA "$PP" -d srnic0 -g "$G0" \
		-s -n 1 -c 2 >"$SRV_OUT" 2>&1
	ready tcp_listening 18515 nsA
}
# dc_knob_server_end NAME
dc_knob_server_end() {
	wait_done 60 "$srv"
	rc=$?
	[ "$rc" -eq 124 ] && bg_stop "$srv"
	t_eq "$1: its server ended clean" "$rc" 0 || sed 's/^/  | /' "$SRV_OUT"
}
# forever_attached NAME: a client sending for ever (process group $k), once
# its DCI has attached at srnic0's DCT (a fixed sleep was not enough on the
# debug kernel: no attachment to evict)
forever_attached() {
	local att
	att=$(c0 dc_attach)
	bg_start k ip netns exec nsB "$PP" -d srnic1 -g "$G1" -m forever 10.99.0.1 \
		>/dev/null 2>&1
	t_check "$1: the killed client's DCI attached first" \
		settle -t 120 counter_ge srnic0 dc_attach $((att + 1))
}
dc_knob_server
lru0=$(c0 dc_lru_evictions) idl0=$(c0 dc_idle_evictions)
forever_attached 'dc_max_attach 1'
kill -9 -- "-$k" 2>/dev/null
wait "$k" 2>/dev/null
# past the killed DCI's retransmission horizon (about 1 s): quiescent
sleep 2
out=$(cli -m ping -i 5)
dc_report "a DCT of one attachment serves a new client" $? "$out"
t_check "dc_lru_evictions moved (the killed client's attachment)" \
	test "$(c0 dc_lru_evictions)" -gt "$lru0"
dc_knob_server_end "dc_max_attach 1"
# the idle scan runs every half dc_idle_ms from a DCT's first attachment
echo 256 >$K/dc_max_attach && echo 300 >$K/dc_idle_ms
dc_knob_server
forever_attached 'dc_idle_ms 300'
kill -9 -- "-$k" 2>/dev/null
wait "$k" 2>/dev/null
settle counter_ge srnic0 dc_idle_evictions $((idl0 + 1))
t_check "dc_idle_evictions moved (dc_idle_ms 300)" \
	test "$(c0 dc_idle_evictions)" -gt "$idl0"
out=$(cli -m ping -i 5)
dc_report "the DCT serves after the idle eviction" $? "$out"
dc_knob_server_end "dc_idle_ms 300"
echo 10000 >$K/dc_idle_ms

# srnic_dc_bench (tools/dc-bench.sh's tool): one client to 16 peers, RC
# (16 QP pairs) and DC (16 DCTs, 1 DCI), WRITE and SEND; every byte
# verified by the tool (its exit status), the JSON line's fields, and the
# QPs the kernel lists while the client holds after its setup; --corrupt
# (one byte changed before it is written) must fail the verification
DCB=build/userspace/tools/srnic_dc_bench HOLD=/tmp/dcb.hold
# dcb_run NAME WANT_RC CLIENT_ARGS...: one server and one client run; the
# client's output in /tmp/dcb.cli, the kernel's QP counts (client's device,
# server's device) in DCB_KQ
dcb_run() {
	local name=$1 want=$2 srv rc cli out_s
	shift 2
	rm -f "$HOLD" "$HOLD.ready"
	out_s=$(mktemp)
	bg_start srv timeout 120 ip netns exec nsA "$DCB" -d srnic0 -g "$G0" \
		--server >"$out_s" 2>&1
	ready tcp_listening 18516 nsA
	bg_start cli timeout 120 ip netns exec nsB "$DCB" -d srnic1 -g "$G1" \
		--peers 16 --iters 4 --hold "$HOLD" "$@" 10.99.0.1 >/tmp/dcb.cli 2>&1
	settle -t 60 test -e "$HOLD.ready"
	DCB_KQ="$(kq nsB srnic1) / $(kq nsA srnic0)"
	touch "$HOLD"
	wait_done 100 "$cli"
	rc=$?
	if [ "$want" = 0 ]; then
		t_from_output "$name" "$rc" "$(sed -E "s/^(ok|not ok) /\1 [$name] /;
			s/^srnic_dc_bench: done/$name: done/" /tmp/dcb.cli)"
	else
		t_eq "$name: the client's exit status" "$rc" 1
	fi
	wait_done 30 "$srv"
	t_eq "$name: the server's exit status" "$?" "$want" || sed 's/^/  | /' "$out_s"
	rm -f "$out_s"
}
# kq NS DEV: "RC=n DCI=n DCT=n", the QPs srnicctl lists for DEV by type
kq() {
	local j t line=
	j=$(ip netns exec "$1" build/userspace/ctl/srnicctl -j qp show "$2" 2>&1)
	for t in RC DCI DCT; do
		line+=" $t=$(grep -o "\"type\":\"$t\"" <<<"$j" | wc -l)"
	done
	echo "${line# }"
}
# dcb_json NAME EXPR: the JSON line of the last client's output has EXPR
# true (python; r is the record)
dcb_json() {
	t_check "$1: JSON $2" python3 -c '
import json, sys
r = [json.loads(l) for l in open("/tmp/dcb.cli") if l.startswith("{")][0]
sys.exit(0 if eval(sys.argv[1]) else 1)' "$2"
}
FIELDS="all(k in r for k in ('transport', 'peers', 'qps_client', 'qps_server', 'setup_ms', 'kmem_setup_kb', 'kmem_traffic_kb', 'bw_mib_s', 'lat_rr_us', 'lat_one_us', 'verified_bytes'))"

dcb_run "bench RC" 0 --transport rc
t_eq "bench RC: the kernel lists 16 RC QPs on each side (client / server)" \
	"$DCB_KQ" "RC=16 DCI=0 DCT=0 / RC=16 DCI=0 DCT=0"
dcb_json "bench RC" "$FIELDS"
dcb_json "bench RC" "r['transport'] == 'rc' and r['qps_client'] == 16 and r['qps_server'] == 16 and r['verified']"
dcb_json "bench RC" "r['verified_bytes'] == 16 * 4 * 4096 and r['verified_exact'] and r['lat_rr_n'] == 48"

att0=$(c0 dc_attach)
dcb_run "bench DC" 0 --transport dc
t_eq "bench DC: the kernel lists 1 DCI (client) and 16 DCTs (server)" \
	"$DCB_KQ" "RC=0 DCI=1 DCT=0 / RC=0 DCI=0 DCT=16"
dcb_json "bench DC" "$FIELDS"
dcb_json "bench DC" "r['transport'] == 'dc' and r['qps_client'] == 1 and r['qps_server'] == 16 and r['dcis'] == 1 and r['verified']"
dcb_json "bench DC" "r['verified_bytes'] == 16 * 4 * 4096 and r['verified_exact']"
t_check "bench DC: dc_attach moved by 16 or more ($(($(c0 dc_attach) - att0)))" \
	test $(($(c0 dc_attach) - att0)) -ge 16

dcb_run "bench DC SEND, 2 DCIs" 0 --transport dc --dcis 2 --op send
t_eq "bench DC SEND: the kernel lists 2 DCIs and 16 DCTs" \
	"$DCB_KQ" "RC=0 DCI=2 DCT=0 / RC=0 DCI=0 DCT=16"
dcb_json "bench DC SEND" "r['op'] == 'send' and r['qps_client'] == 2 and r['verified_bytes'] == 16 * 4 * 4096"

dcb_run "bench DC, one byte corrupted" 1 --transport dc --corrupt
t_check "bench DC --corrupt: the client reports the server's FAIL" \
	grep -q "^not ok bandwidth: the server's verdict: FAIL" /tmp/dcb.cli
dcb_json "bench DC --corrupt" "r['verified'] is False and r['verified_bytes'] == 0"

# the default mode, through the stock rxe provider: no DC
t_expect_fail "the default mode refuses a DCT (EOPNOTSUPP)" \
	"Operation not supported" "$PP" -d srnicd -g 0 -s -c 0
t_eq "no ICRC errors" "$(c0 rcvd_icrc_err)" 0

native_trio_down
t_summary
