#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DC reliability (issue 15 item 3, docs/dc.md), native mode, inside the VM:
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#   the DCTs (servers)     netem / tc filters       the DCIs (clients)
#
# build/userspace/tools/srnic_dc_pingpong (its header says what each mode
# does; the server checks every SEND byte for byte, each DCI's sequence
# numbers one by one - in order, exactly once - and the atomic slots; the
# client checks every completion in order, what each READ and atomic
# returns):
#   1. netem loss, duplication and reordering on both veths: one DCI
#      touring 4 DCTs (SENDs of 1-4000 bytes, WRITE, READ back, FETCH_ADD,
#      CMP_SWP, up to 32 WRs in flight across targets), so ATTACH, DETACH,
#      requests and responses are all lost, duplicated and reordered;
#      retransmits (srnic1) and duplicate_request (srnic0) must move;
#   2. every DETACH dropped (tc u32 on the opcode): data still right, the
#      targets never see one (dc_detach still);
#   3. dc_replay.py: a copy of an attachment's first packet (a FETCH_ADD
#      with ATTACH) sent again after the target's DETACH ACK, as a
#      duplicate delayed past the DETACH would come: it must not execute
#      again (the client's next FETCH_ADD there and the server's slots);
#   4. NO ATTACHMENT: dc_idle_ms 300, the DCI idle past its horizon while
#      attached; the DCT's idle scan frees the attachment; the DCI's next
#      WRs (in flight together) get the NO ATTACHMENT NAK, it re-attaches
#      and resends them: data right, dc_no_attachment_naks and
#      dc_idle_evictions move;
#   5. a full DCT (dc_max_attach 1) whose one attachment is busy answers
#      another DCI's ATTACH with an RNR NAK (dc_attach_rnr): that DCI
#      (rnr_retry 7, for ever) is served once the first stops and its
#      attachment is quiescent (dc_lru_evictions); a third with rnr_retry
#      1 fails IBV_WC_RNR_RETRY_EXC_ERR;
#   6. retry exhaustion to one target (tc drops requests to DCT 1 while
#      the DCI is attached to it): that WR fails IBV_WC_RETRY_EXC_ERR, the
#      rest is flushed and the DCI is in the error state (as an RC QP, as
#      ConnectX's DCI); reset, it serves DCT 0, and DCT 1 once reachable
#      (retry_exceeded_err moves);
#   7. 64 DCIs in 8 processes at one DCT, under netem loss 1%: every SEND,
#      WRITE and READ checked.
# Parts 2 and 6 drop packets with a tc u32 filter and a gact drop action.
# A kernel without cls_u32 and act_gact (the debug tier's) skips them (a
# SKIP line each); where modprobe loads both, a filter that cannot be set
# up fails as before.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

PP=build/userspace/tools/srnic_dc_pingpong
WAIT=/tmp/dcl_wait
SRV_OUT=/tmp/dcl_srv.txt
K=/sys/class/infiniband/srnic0/srnic
dmesg -C
native_trio_up
t_check "modprobe sch_netem" modprobe sch_netem
# TC_DROP: tc u32 filters with a drop action can be set up (parts 2 and 6)
TC_DROP=1
modprobe -a cls_u32 act_gact 2>/dev/null || TC_DROP=0
export RDMAV_DRIVERS=$SRNIC_PROVIDER_LIB
t_check "srnic_dc_pingpong is built" test -x "$PP"

c0() { counter srnic0 "$1"; }
c1() { counter srnic1 "$1"; }
# drop_on U32_MATCH...: drop what srnic1 sends that the match picks
# (offsets from the IPv4 header: the BTH starts at 28, its DestQP at 33)
drop_on() {
	tc -n nsB qdisc add dev vethB clsact &&
		tc -n nsB filter add dev vethB egress protocol ip u32 "$@" \
			action drop
}
drop_stats() {
	tc -s -n nsB filter show dev vethB egress | grep -m1 -o \
		"Sent [0-9]* bytes [0-9]* pkt" | sed 's/^/# tc drop: /'
}
drop_off() { tc -n nsB qdisc del dev vethB clsact; }
# no_drop NAME: part NAME needs TC_DROP; says SKIP when it is 0
no_drop() {
	[ "$TC_DROP" = 0 ] || return 1
	t_skip "$1" "no tc u32 drop filter: modprobe cls_u32 act_gact fails in this kernel"
}

# dc_report NAME RC OUT: the checks of one srnic_dc_pingpong run
dc_report() {
	t_from_output "$1" "$2" "$(sed -E "s/^(ok|not ok) /\1 [$1] /;
		s/^srnic_dc_pingpong: done/$1: done/" <<<"$3")"
}

# srv_start ARGS...: a server on srnic0 (nsA), output in SRV_OUT
srv_start() {
	rm -f "$WAIT".*
	bg_start srv timeout 240 ip netns exec nsA "$PP" -d srnic0 -g "$G0" \
		-s "$@" >"$SRV_OUT" 2>&1
	ready tcp_listening 18515 nsA
	settle grep -q "^# server:" "$SRV_OUT"
}
# srv_end NAME
srv_end() {
	local rc
	wait_done 90 "$srv"
	rc=$?
	[ "$rc" -eq 124 ] && bg_stop "$srv"
	t_eq "$1: the server found every SEND and slot right, ended" "$rc" 0 ||
		sed 's/^/  | /' "$SRV_OUT"
}
# dctn J: the server's DCT number J
dctn() { sed -n "s/^# dctn $1 //p" "$SRV_OUT"; }
# cli_bg VAR OUT ARGS...: a client on srnic1 (nsB) in the background
cli_bg() {
	local var=$1 out=$2
	shift 2
	bg_start "$var" timeout 200 ip netns exec nsB "$PP" -d srnic1 \
		-g "$G1" "$@" 10.99.0.1 >"$out" 2>&1
}
# cli_end NAME PID OUT
cli_end() {
	local rc
	wait_done 210 "$2"
	rc=$?
	[ "$rc" -eq 124 ] && bg_stop "$2"
	dc_report "$1" "$rc" "$(cat "$3")"
}
# moved NAME DELTA MIN: a counter moved by MIN or more
moved() { t_check "$1 moved by $3 or more (+$2)" test "$2" -ge "$3"; }
# lap NAME: how long the part before took (information only)
LAP=$SECONDS
lap() {
	echo "# $1: $((SECONDS - LAP)) s"
	LAP=$SECONDS
}

# ------------------------------------------- 1. loss, duplication, reorder

NETEM="loss 3% duplicate 3% delay 1ms 1ms reorder 10%"
# shellcheck disable=SC2086 # NETEM is words
t_check "netem $NETEM on vethA and vethB" netem $NETEM
rt0=$(c1 retransmits) dup0=$(c0 duplicate_request) att0=$(c0 dc_attach)
srv_start -n 4 -c 1
cli_bg cl /tmp/dcl_c.txt -m tour -i 6
cli_end "netem tour" "$cl" /tmp/dcl_c.txt
srv_end "netem tour"
unshape
moved "netem: retransmits (srnic1, the DCI resent)" \
	$(($(c1 retransmits) - rt0)) 1
moved "netem: duplicate_request (srnic0, the attachments)" \
	$(($(c0 duplicate_request) - dup0)) 1
moved "netem: dc_attach (24 visits, each a new attachment)" \
	$(($(c0 dc_attach) - att0)) 24
lap "1. netem tour"

# ------------------------------------------------------ 2. DETACH all lost

part2() {
	srv_start -n 4 -c 1
	det0=$(c0 dc_detach) att0=$(c0 dc_attach)
	t_check "tc: every DETACH (opcode 0xde) srnic1 sends is dropped" \
		drop_on match u8 0xde 0xff at 28
	cli_bg cl /tmp/dcl_c.txt -m tour -i 3
	cli_end "DETACH lost" "$cl" /tmp/dcl_c.txt
	srv_end "DETACH lost"
	drop_stats
	drop_off
	t_eq "DETACH lost: dc_detach did not move" $(($(c0 dc_detach) - det0)) 0
	moved "DETACH lost: dc_attach" $(($(c0 dc_attach) - att0)) 12
}
no_drop "2. DETACH lost" || part2
lap "2. DETACH lost"

# ------------------------------------- 3. an ATTACH replayed after DETACH

srv_start -n 3 -c 1
d1=$(dctn 1)
bg_start rp timeout 150 ip netns exec nsB python3 tests/vm/dc_replay.py \
	vethB "${d1:-0}" >/tmp/dcl_rp.txt 2>&1
settle grep -q "info watching" /tmp/dcl_rp.txt
cli_bg cl /tmp/dcl_c.txt -m tour -i 2 -W "$WAIT"
settle -t 120 grep -q "^# wait 1" /tmp/dcl_c.txt
wait_done 60 "$rp"
rc=$?
[ "$rc" -eq 124 ] && bg_stop "$rp"
t_from_output dc_replay.py "$rc" "$(cat /tmp/dcl_rp.txt)" "info *"
touch "$WAIT.1"
cli_end "ATTACH replayed after DETACH" "$cl" /tmp/dcl_c.txt
srv_end "ATTACH replayed after DETACH"
lap "3. replay"

# ----------------------------------------------- 4. NO ATTACHMENT, re-attach

echo 300 >"$K/dc_idle_ms"
# a delay on the wire, so that a batch's requests are all out before the
# first one's NAK is back (on a bare veth the answer comes in the same
# softirq as the request went)
t_check "netem delay 10ms on vethA and vethB" netem delay 10ms
srv_start -n 1 -c 1
na0=$(c0 dc_no_attachment_naks) ie0=$(c0 dc_idle_evictions)
att0=$(c0 dc_attach) oow0=$(c1 ack_out_of_window)
cli_bg cl /tmp/dcl_c.txt -m tour -i 3 -W "$WAIT"
for r in 1 2; do
	settle -t 120 grep -q "^# wait $r" /tmp/dcl_c.txt
	# the attachment idle past the DCI's horizon (about 1 s) and freed
	settle -t 60 counter_ge srnic0 dc_idle_evictions $((ie0 + r))
	touch "$WAIT.$r"
done
cli_end "NO ATTACHMENT" "$cl" /tmp/dcl_c.txt
srv_end "NO ATTACHMENT"
unshape
echo 10000 >"$K/dc_idle_ms"
moved "NO ATTACHMENT: dc_idle_evictions" $(($(c0 dc_idle_evictions) - ie0)) 2
# rounds 1 and 2 post 2 and 9 WRs as one batch each: every request out
# before the first NAK gets its own
moved "NO ATTACHMENT: dc_no_attachment_naks (2 or more requests a round)" \
	$(($(c0 dc_no_attachment_naks) - na0)) 4
moved "NO ATTACHMENT: ack_out_of_window (srnic1: the NAKs behind the first, stale once the DCI re-attached)" \
	$(($(c1 ack_out_of_window) - oow0)) 1
moved "NO ATTACHMENT: dc_attach (re-attached)" $(($(c0 dc_attach) - att0)) 3
lap "4. NO ATTACHMENT"

# ------------------------------------------------------ 5. a full DCT: RNR

echo 1 >"$K/dc_max_attach"
srv_start -n 1 -c 3
att0=$(c0 dc_attach) rnr0=$(c0 dc_attach_rnr) lru0=$(c0 dc_lru_evictions)
rr0=$(c1 rcvd_rnr_err)
cli_bg ca /tmp/dcl_a.txt -m forever -W "$WAIT"
settle -t 60 counter_ge srnic0 dc_attach $((att0 + 1))
# B waits for as long as A sends: no bound on its SEND's time but -T's
cli_bg cb /tmp/dcl_b.txt -m ping -i 5 -T 170
settle -t 60 counter_ge srnic0 dc_attach_rnr $((rnr0 + 1))
moved "full DCT: dc_attach_rnr (B refused while A is busy)" \
	$(($(c0 dc_attach_rnr) - rnr0)) 1
out=$(with_timeout 60 ip netns exec nsB "$PP" -d srnic1 -g "$G1" \
	-m rnrfail -R 1 10.99.0.1 2>&1)
dc_report "full DCT: C, rnr_retry 1" $? "$out"
touch "$WAIT.1"
cli_end "full DCT: A, stopped" "$ca" /tmp/dcl_a.txt
cli_end "full DCT: B, served after A" "$cb" /tmp/dcl_b.txt
srv_end "full DCT"
echo 256 >"$K/dc_max_attach"
moved "full DCT: rcvd_rnr_err (srnic1)" $(($(c1 rcvd_rnr_err) - rr0)) 2
moved "full DCT: dc_lru_evictions (A's attachment, once quiescent)" \
	$(($(c0 dc_lru_evictions) - lru0)) 1
lap "5. full DCT"

# ----------------------------------------- 6. retries exhausted to one DCT

part6() {
	srv_start -n 2 -c 1
	d1=$(dctn 1)
	re0=$(c1 retry_exceeded_err)
	cli_bg cl /tmp/dcl_c.txt -m exhaust -r 2 -W "$WAIT"
	settle -t 60 grep -q "^# wait 1" /tmp/dcl_c.txt
	t_check "tc: srnic1's requests to DCT 1 ($d1) dropped" \
		drop_on match u32 "${d1:-0}" 0x00ffffff at 32
	touch "$WAIT.1"
	settle -t 120 grep -q "^# wait 2" /tmp/dcl_c.txt
	drop_stats
	t_check "tc: the drop removed" drop_off
	touch "$WAIT.2"
	cli_end "retries exhausted" "$cl" /tmp/dcl_c.txt
	srv_end "retries exhausted"
	moved "retries exhausted: retry_exceeded_err (srnic1)" \
		$(($(c1 retry_exceeded_err) - re0)) 1
}
no_drop "6. retries exhausted" || part6
lap "6. retries exhausted"

# ------------------------------------- 7. 64 DCIs in 8 processes, one DCT

t_check "netem loss 1% on vethA and vethB" netem loss 1%
srv_start -n 1 -c 8
att0=$(c0 dc_attach)
fl=()
for i in 0 1 2 3 4 5 6 7; do
	cli_bg pid "/tmp/dcl_f$i.txt" -m flood -q 8 -i 4
	fl+=("$pid")
done
for i in 0 1 2 3 4 5 6 7; do
	cli_end "64 DCIs: process $i" "${fl[$i]}" "/tmp/dcl_f$i.txt"
done
srv_end "64 DCIs"
unshape
moved "64 DCIs: dc_attach" $(($(c0 dc_attach) - att0)) 64
lap "7. 64 DCIs"

t_eq "no ICRC errors" "$(c0 rcvd_icrc_err)" 0
native_trio_down
t_summary
