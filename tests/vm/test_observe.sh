#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vmrun-tcg: single (it switches tracepoints on and off: see tests/vm/vmrun)
#
# srnic observability, run inside the VM (issue 5, kernel side):
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#
# 1. tracepoints: the nine srnic:* events exist (their layout against
#    include/uapi/rdma/srnic_probe.h is checked at build time);
# 2. clean traffic (rc pingpong, ib_write_bw, ib_read_bw, ud pingpong) with
#    every srnic event enabled: the hw counters moved by plausible amounts
#    (bytes >= payload, per-packet size bounds, what one side sent the
#    other received) and the events fired (pkt_tx/pkt_rx counts equal the
#    packet counters, wqe_post, wqe_done, qp_state transitions);
# 3. observe_qp.py: QPs with known PSNs held open; `rdma -dd resource show
#    qp` shows srnic's driver attributes with the exact PSNs, retry budgets
#    and rate; then a wrong-rkey WRITE and an overlong SEND: the NAK counters
#    by kind move on both sides, srnic_nak fires both ways and wqe_done
#    reports the error statuses;
# 4. bpftrace one-liners (the README's) over the tracepoints, with their
#    output checked;
# 5. netem loss on both veths: retransmit counters and srnic_retransmit
#    (with a cause), sequence NAKs (counters and srnic_nak), and a live QP's
#    drv_retransmits attribute moves.
set -u
cd "$(dirname "$0")/../.."
. tests/vm/lib.sh

srnic_pair_up sch_netem

W=$(mktemp -d)
trace_mount
EVENTS="srnic_pkt_tx srnic_pkt_rx srnic_retransmit srnic_nak srnic_cnp
srnic_rate srnic_qp_state srnic_wqe_post srnic_wqe_done srnic_repath"

# snap S / delta S DEV COUNTER (lib.sh): every counter of both devices
# ge NAME A B, gt NAME A B: assert A >= B, A > B (an empty A fails)
ge() {
	if [ "${2:--1}" -ge "$3" ]; then t_ok "$1"; else t_fail "$1" "'$2' < $3"; fi
}
gt() {
	if [ "${2:--1}" -gt "$3" ]; then t_ok "$1"; else t_fail "$1" "'$2' <= $3"; fi
}
# wait_for SECS CMD...: poll CMD every 0.2 s for up to SECS seconds
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.2
	done
}
# trace_mount, trace_start, trace_stop, trace_overruns: lib.sh
nev() { grep -c " $2: " "$1"; }

# pair (lib.sh): slower tools here (every event traced, netem loss)
PAIR_SERVER_SECS=90
PAIR_CLIENT_SECS=80

# --------------------------------------------------- 1. the tracepoints
echo "== part 1 at ${SECONDS}s"

for ev in $EVENTS; do
	t_check "tracepoint srnic:$ev exists" test -f "$TRACEFS/events/srnic/$ev/format"
done

# ------------------------------------- 2. clean traffic: counters, events
echo "== part 2 at ${SECONDS}s"

snap S
trace_start -b 16384 $EVENTS
pair "ibv_rc_pingpong 4 KiB x 100, data checked" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 100 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 100 -s 4096 -c 10.99.0.1
pair "ib_write_bw 64 KiB x 100" \
	ib_write_bw -d srnic0 -x "$G0" -s 65536 -n 100 -F -- \
	ib_write_bw -d srnic1 -x "$G1" -s 65536 -n 100 -F 10.99.0.1
pair "ib_read_bw 64 KiB x 50" \
	ib_read_bw -d srnic0 -x "$G0" -s 65536 -n 50 -F -- \
	ib_read_bw -d srnic1 -x "$G1" -s 65536 -n 50 -F 10.99.0.1
pair "ibv_ud_pingpong 512 B x 50, data checked" \
	ibv_ud_pingpong -d srnic0 -g "$G0" -n 50 -s 512 -c -- \
	ibv_ud_pingpong -d srnic1 -g "$G1" -n 50 -s 512 -c 10.99.0.1
trace_stop "$W/clean.trace"
t_eq "trace buffer kept every event" "$(trace_overruns)" 0

# The client (srnic1) wrote 100 x 64 KiB, sent 100 x 4 KiB + 50 x 512 B;
# the server (srnic0) sent 100 x 4 KiB + 50 x 512 B and 50 x 64 KiB of READ
# responses. Byte counters count BTH to ICRC, so they are above that.
wr=$((100 * 65536)) rd=$((50 * 65536)) pp=$((100 * 4096 + 50 * 512))
ge "srnic1 tx_bytes >= WRITE + SEND payload" "$(delta S srnic1 tx_bytes)" $((wr + pp))
ge "srnic0 rx_bytes >= WRITE + SEND payload" "$(delta S srnic0 rx_bytes)" $((wr + pp))
ge "srnic0 tx_bytes >= READ + SEND payload" "$(delta S srnic0 tx_bytes)" $((rd + pp))
ge "srnic1 rx_bytes >= READ + SEND payload" "$(delta S srnic1 rx_bytes)" $((rd + pp))
for d in srnic0:srnic1 srnic1:srnic0; do
	a=${d%:*} b=${d#*:}
	ge "$b received no more packets than $a sent" \
		"$(delta S "$a" sent_pkts)" "$(delta S "$b" rcvd_pkts)"
	ge "$b received no more bytes than $a sent" \
		"$(delta S "$a" tx_bytes)" "$(delta S "$b" rx_bytes)"
	ge "$a sent at least as many ACKs as $b received" \
		"$(delta S "$a" sent_acks)" "$(delta S "$b" rcvd_acks)"
	gt "$b received ACKs" "$(delta S "$b" rcvd_acks)" 0
	p=$(delta S "$a" sent_pkts) n=$(delta S "$a" tx_bytes)
	# BTH + ICRC at least; MTU 1024 + BTH, RETH/AETH, DETH, pad, ICRC at most
	ge "$a tx_bytes/sent_pkts >= 16" "$n" $((p * 16))
	ge "$a tx_bytes/sent_pkts <= 1080" $((p * 1080)) "$n"
	ge "$a rdma_sends counts its SENDs" "$(delta S "$a" rdma_sends)" 150
	ge "$b rdma_recvs counts its receives" "$(delta S "$b" rdma_recvs)" 150
done
for c in rcvd_icrc_err rcvd_bad_hdr send_err send_no_route; do
	t_eq "no $c" "$(delta S srnic0 "$c")$(delta S srnic1 "$c")" "00"
done

f=$W/clean.trace
tx=$(delta_sum S sent_pkts)
rx=$(delta_sum S rcvd_pkts)
t_eq "srnic_pkt_tx fired once per sent packet" "$(nev "$f" srnic_pkt_tx)" "$tx"
t_eq "srnic_pkt_rx fired once per received packet" "$(nev "$f" srnic_pkt_rx)" "$rx"
gt "srnic_pkt_tx shows RC_WRITE_MIDDLE packets of 1024 B" \
	"$(grep -c 'srnic_pkt_tx: .* len=1024 opcode=RC_WRITE_MIDDLE' "$f")" 1000
gt "srnic_pkt_rx shows RC_READ_REQUESTs" \
	"$(grep -c 'srnic_pkt_rx: .* opcode=RC_READ_REQUEST' "$f")" 0
gt "srnic_pkt_tx shows UD_SEND_ONLY packets" \
	"$(grep -c 'srnic_pkt_tx: .* len=512 opcode=UD_SEND_ONLY' "$f")" 0
ge "srnic_wqe_post: 100 WRITEs of 64 KiB" \
	"$(grep -c 'srnic_wqe_post: .* len=65536 opcode=RDMA_WRITE' "$f")" 100
ge "srnic_wqe_post: 50 READs of 64 KiB" \
	"$(grep -c 'srnic_wqe_post: .* len=65536 opcode=RDMA_READ' "$f")" 50
ge "srnic_wqe_done: receive completions" \
	"$(grep -c 'srnic_wqe_done: .* rq opcode=RECV status=SUCCESS' "$f")" 300
ge "srnic_wqe_done: send completions" \
	"$(grep -c 'srnic_wqe_done: .* sq opcode=SEND status=SUCCESS' "$f")" 300
t_eq "srnic_wqe_done: no error completions" \
	"$(grep 'srnic_wqe_done: ' "$f" | grep -vc 'status=SUCCESS')" 0
# 8 QPs; perftest's WRITE/READ servers stay in RTR
for tr in RESET-\>INIT:8 INIT-\>RTR:8 RTR-\>RTS:6 -\>RESET:8; do
	ge "srnic_qp_state: ${tr%:*} at least ${tr#*:} times" \
		"$(grep -c "srnic_qp_state: .*${tr%:*}\$" "$f")" "${tr#*:}"
done

# ------------------------------- 3. live QPs in rdma resource, error NAKs
echo "== part 3 at ${SECONDS}s"

snap S
trace_start srnic_nak srnic_wqe_done srnic_qp_state
hold=$W/hold out=$W/qp.out
: >"$out"
bg_start qpid bash -c "exec timeout 200 python3 tests/vm/observe_qp.py \
	srnic0 10.99.0.1 srnic1 10.99.0.2 '$hold' >'$out' 2>&1"
wait_for 60 grep -q '^live ' "$out"
live=$(sed -n 's/^live //p' "$out")
if [ -z "$live" ]; then
	t_fail "observe_qp.py holds its QPs" "no live line"
	sed 's/^/  | /' "$out"
else
	rdma -dd resource show qp >"$W/res.txt"
	rdma -j -dd resource show qp >"$W/res.json"
	sed 's/^/  | /' "$W/res.txt"
	t_check "rdma resource show qp -dd prints drv_sq_psn" grep -q drv_sq_psn "$W/res.txt"
	chk=$(python3 - "$W/res.json" "$live" <<-'EOF'
	import json, sys
	qps = json.load(open(sys.argv[1]))
	live = json.loads(sys.argv[2])
	M = 0xffffff
	def qp(dev, qpn):
	    return next(q for q in qps if q["ifname"] == dev and q["lqpn"] == qpn)
	a, b = qp("srnic0", live["a_qpn"]), qp("srnic1", live["b_qpn"])
	want = {
	    ("a", "drv_sq_psn"): (live["a_psn"] + live["a_pkts"]) & M,
	    ("a", "drv_una_psn"): (live["a_psn"] + live["a_pkts"]) & M,
	    ("a", "drv_epsn"): (live["b_psn"] + live["b_pkts"]) & M,
	    ("b", "drv_sq_psn"): (live["b_psn"] + live["b_pkts"]) & M,
	    ("b", "drv_una_psn"): (live["b_psn"] + live["b_pkts"]) & M,
	    ("b", "drv_epsn"): (live["a_psn"] + live["a_pkts"]) & M,
	    ("a", "drv_retry_cnt_left"): live["retry_cnt"],
	    ("b", "drv_retry_cnt_left"): live["retry_cnt"],
	    ("a", "drv_rnr_retry_left"): live["rnr_retry"],
	    ("b", "drv_rnr_retry_left"): live["rnr_retry"],
	    ("a", "drv_rd_atomic_outstanding"): 0,
	    ("b", "drv_rd_atomic_outstanding"): 0,
	    ("a", "drv_rate_bytes_per_sec"): 0,
	    ("b", "drv_rate_bytes_per_sec"): 0,
	}
	for (who, key), v in want.items():
	    q = a if who == "a" else b
	    got = q.get(key)
	    print(("ok" if got == v else "bad") + f" {who}.{key} got {got} want {v}")
	for q, who in ((a, "a"), (b, "b")):
	    ok = q["state"] == "RTS" and isinstance(q.get("drv_retransmits"), int)
	    print(("ok" if ok else "bad") + f" {who}.state {q['state']} drv_retransmits {q.get('drv_retransmits')}")
	# round trip measured by each QP that sent requests; the retransmit
	# timeout at least the QP's local ACK timeout (14: 67 ms), at most 4 s
	for q, who in ((a, "a"), (b, "b")):
	    srtt, var, rto = (q.get("drv_" + k) for k in ("srtt_us", "rttvar_us", "rto_ms"))
	    ok = (isinstance(srtt, int) and isinstance(var, int) and isinstance(rto, int)
	          and (srtt > 0) == (live[who + "_pkts"] > 0) and 67 <= rto <= 4000)
	    print(("ok" if ok else "bad") + f" {who}.rtt srtt_us {srtt} rttvar_us {var} rto_ms {rto} pkts {live[who + '_pkts']}")
	EOF
	)
	echo "$chk" | sed 's/^/  | /'
	t_eq "rdma -j -dd resource show qp: srnic attributes exact (18 values)" \
		"$(grep -c '^ok ' <<<"$chk")" 18
fi
touch "$hold"
wait "$qpid"
t_eq "observe_qp.py ran to the end" "$?" 0
sed 's/^/  | /' "$out"
t_eq "observe_qp.py: every check ok" "$(grep -c '^not ok' "$out")" 0
t_eq "observe_qp.py: 7 checks" "$(grep -c '^ok ' "$out")" 7
trace_stop "$W/err.trace"
t_eq "trace buffer kept every event" "$(trace_overruns)" 0
f=$W/err.trace
t_eq "srnic0 sent one remote access NAK" "$(delta S srnic0 resp_remote_access_errors)" 1
t_eq "srnic1 received one remote access NAK" "$(delta S srnic1 req_remote_access_errors)" 1
t_eq "srnic0 sent one invalid request NAK" "$(delta S srnic0 send_inv_req_err)" 1
t_eq "srnic1 received one invalid request NAK" "$(delta S srnic1 req_remote_invalid_request)" 1
t_eq "srnic_nak: remote access NAK sent (dev 0)" \
	"$(grep -c 'srnic_nak: dev=0 .* tx remote_access_err' "$f")" 1
t_eq "srnic_nak: remote access NAK received (dev 1)" \
	"$(grep -c 'srnic_nak: dev=1 .* rx remote_access_err' "$f")" 1
t_eq "srnic_nak: invalid request NAK sent and received" \
	"$(grep -c 'srnic_nak: .* invalid_request' "$f")" 2
t_eq "srnic_wqe_done: REM_ACCESS_ERR completion" \
	"$(grep -c 'srnic_wqe_done: dev=1 .* status=REM_ACCESS_ERR' "$f")" 1
t_eq "srnic_wqe_done: REM_INV_REQ_ERR completion" \
	"$(grep -c 'srnic_wqe_done: dev=1 .* status=REM_INV_REQ_ERR' "$f")" 1
t_eq "srnic_wqe_done: LOC_LEN_ERR receive completion" \
	"$(grep -c 'srnic_wqe_done: dev=0 .* rq opcode=RECV status=LOC_LEN_ERR' "$f")" 1
ge "srnic_qp_state: data-path errors move QPs RTS->ERR" \
	"$(grep -c 'srnic_qp_state: .* RTS->ERR$' "$f")" 3

# ------------------------------------------------------- 4. bpftrace
echo "== part 4 at ${SECONDS}s"
# The README's one-liners, each checked on its output.

# bt NAME PROGRAM TICK: start bpftrace in the background (output in
# $W/NAME.out, unbuffered). Besides PROGRAM it prints "--- tick" and the maps
# TICK names (print(@m); ...) every second, and "--- end" before the maps it
# prints at exit: what is checked is the last block with maps in it (bt_maps),
# so the counts do not depend on bpftrace's exit, which under TCG on a loaded
# host can take minutes (CI once saw one still running 180 s after SIGINT,
# and once a run whose output held no maps to check).
bt() {
	: >"$W/$1.out"
	bg_start "$1" bash -c "exec timeout -s INT 600 bpftrace -B none -e '$2
interval:s:1 { printf(\"--- tick\\n\"); $3 }
END { printf(\"--- end\\n\"); }' >'$W/$1.out' 2>&1"
}
bt_attached() { wait_for 90 grep -q '^Attaching' "$W/$1.out"; }
bt_ticks() { grep -c '^--- tick$' "$W/$1.out"; }
# bt_settle NAME...: two more ticks printed by each, so their last tick
# holds every event of the traffic that ended before the call
bt_settle() {
	local b n
	for b; do
		n=$(bt_ticks "$b")
		wait_for 30 bash -c "[ \"\$(grep -c '^--- tick\$' '$W/$b.out')\" -ge $((n + 2)) ]" ||
			echo "info bpftrace $b: no new tick in 30 s"
	done
}
# bt_maps NAME: the last block of the output that has map lines in it (the
# maps printed at exit, or the last tick's when the exit did not print them)
bt_maps() {
	awk '/^--- (tick|end)$/ { if (has) last = cur; cur = ""; has = 0; next }
		{ cur = cur $0 "\n"; if (/^@/) has = 1 }
		END { if (has) last = cur; printf "%s", last }' "$W/$1.out"
}
# bt_stop PID...: SIGINT makes bpftrace print its maps and exit. All are
# signalled at once and share one deadline: under TCG on a loaded host a
# bpftrace takes tens of seconds to detach and free its programs. What srnic
# owes is that its tracepoints leave nothing stuck: one still running after
# 120 s has its state and kernel stack logged (the lead for the next look)
# and gets SIGKILL; it must then be gone within 60 s (a task stuck in the
# kernel, which SIGKILL cannot end, fails). The caller checks bt_maps.
bt_stop() {
	local p c slow=0
	for p; do kill -INT "$p" 2>/dev/null; done
	for p; do
		if ! wait_for 120 bash -c "! kill -0 $p 2>/dev/null"; then
			slow=$((slow + 1))
			for c in "$p" $(pgrep -P "$p"); do
				echo "info bpftrace $p: still running 120 s after SIGINT:" \
					"pid $c $(ps -o stat=,wchan:32=,etimes=,comm= -p "$c")"
				sed "s/^/  | stack $c: /" "/proc/$c/stack" 2>/dev/null
			done
			kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null
			t_check "bpftrace $p: ended by SIGKILL after a slow exit" \
				wait_for 60 bash -c "! kill -0 $p 2>/dev/null"
		fi
		bg_stop "$p"
	done
	echo "info bpftrace: $slow of $# needed SIGKILL after 120 s"
}
have_bt=
command -v bpftrace >/dev/null && have_bt=1
if [ -n "$have_bt" ]; then
	# All four start at once (bpftrace's startup is slow under TCG); the
	# fourth one counts retransmissions in part 5.
	bt bt1 'tracepoint:srnic:srnic_pkt_tx { @pkts[args->opcode] = count(); }' 'print(@pkts);'
	bt bt2 'tracepoint:srnic:srnic_wqe_post { @t[args->dev, args->qpn, args->wr_id] = nsecs; }
tracepoint:srnic:srnic_wqe_done /!args->is_recv && @t[args->dev, args->qpn, args->wr_id]/ {
@usecs = hist((nsecs - @t[args->dev, args->qpn, args->wr_id]) / 1000); @n = count();
delete(@t[args->dev, args->qpn, args->wr_id]); }' 'print(@usecs); print(@n);'
	bt bt3 'tracepoint:srnic:srnic_pkt_rx { @bytes[args->dev, args->qpn] = sum(args->len); }' \
		'print(@bytes);'
	bt bt4 'tracepoint:srnic:srnic_retransmit { @retx[args->cause] = count(); }' 'print(@retx);'
	for b in bt1 bt2 bt3 bt4; do
		t_check "bpftrace $b attached" bt_attached "$b"
	done
	pair "ibv_rc_pingpong 4 KiB x 100 under bpftrace" \
		ibv_rc_pingpong -d srnic0 -g "$G0" -n 100 -s 4096 -c -- \
		ibv_rc_pingpong -d srnic1 -g "$G1" -n 100 -s 4096 -c 10.99.0.1
	bt_settle bt1 bt2 bt3
	bt_stop "$bt1" "$bt2" "$bt3"
	for b in bt1 bt2 bt3; do
		bt_maps "$b" >"$W/$b.maps"
		echo "info bpftrace $b: $(bt_ticks "$b") ticks, $(grep -c '^--- end$' "$W/$b.out") end; its last maps:"
		sed "s/^/  | $b: /" "$W/$b.maps"
	done
	# 100 messages of 4 KiB each way: FIRST, 2 MIDDLE, LAST per message
	n() { sed -n "s/^@$2: \([0-9]*\)$/\1/p" "$W/$1.maps"; }
	ge "bpftrace: pkt_tx RC_SEND_FIRST per opcode" "$(n bt1 'pkts\[0\]')" 200
	ge "bpftrace: pkt_tx RC_SEND_MIDDLE per opcode" "$(n bt1 'pkts\[1\]')" 400
	ge "bpftrace: pkt_tx RC_SEND_LAST per opcode" "$(n bt1 'pkts\[2\]')" 200
	gt "bpftrace: pkt_tx RC_ACKNOWLEDGE per opcode" "$(n bt1 'pkts\[17\]')" 0
	ge "bpftrace: post-to-completion latencies counted" "$(n bt2 n)" 200
	t_check "bpftrace: latency histogram printed" grep -q '^@usecs:' "$W/bt2.maps"
	t_check "bpftrace: latency histogram has buckets" grep -qE '^\[[0-9]+[KM]?, [0-9]+[KM]?\)' "$W/bt2.maps"
	# each QP received 100 x 4096 B of SEND payload (more if resent)
	t_eq "bpftrace: received payload per QP (2 QPs, >= 409600 B each)" \
		"$(awk '/^@bytes\[[01], [0-9]+\]: / && $3 >= 409600 { n++ } END { print n + 0 }' "$W/bt3.maps")" 2
else
	t_fail "bpftrace installed" "tools/setup.sh installs it"
fi

# ---------------------------------------------------------- 5. loss
echo "== part 5 at ${SECONDS}s"
# 3% loss each way: data packets, ACKs, NAKs and READ responses all get lost.

tc -n nsA qdisc replace dev vethA root netem loss 3%
tc -n nsB qdisc replace dev vethB root netem loss 3%
snap S
trace_start srnic_retransmit srnic_nak
# A live QP under loss: its drv_retransmits attribute moves.
bg_start spid timeout --kill-after=5 90 ip netns exec nsA \
	ib_write_bw -d srnic0 -x "$G0" -s 65536 -D 8 -F
settle pair_tcp_listening
bg_start cpid timeout --kill-after=5 90 ip netns exec nsB \
	ib_write_bw -d srnic1 -x "$G1" -s 65536 -D 8 -F 10.99.0.1
# the client's RC QP, from the text output (cheap enough to poll often)
qp_retx() {
	rdma -dd resource show qp link srnic1/1 |
		sed -n 's/.* type RC .* drv_retransmits \([0-9]*\) .*/\1/p' | head -1
}
retx=0
for _ in $(seq 150); do
	retx=$(qp_retx)
	[ "${retx:-0}" -gt 0 ] && break
	kill -0 "$cpid" 2>/dev/null || break
	sleep 0.1
done
gt "live QP under loss: drv_retransmits moves" "$retx" 0
wait "$cpid"; rc_c=$?
wait "$spid"; rc_s=$?
t_eq "ib_write_bw -D 8 under 3% loss (client, server exit)" "$rc_c $rc_s" "0 0"
pair "ib_read_bw 64 KiB x 20 under 3% loss" \
	ib_read_bw -d srnic0 -x "$G0" -s 65536 -n 20 -F -- \
	ib_read_bw -d srnic1 -x "$G1" -s 65536 -n 20 -F 10.99.0.1
if [ -n "$have_bt" ]; then
	bt_settle bt4
	bt_stop "$bt4"
fi
trace_stop "$W/loss.trace"
t_eq "trace buffer kept every event" "$(trace_overruns)" 0
tc -n nsA qdisc del dev vethA root
tc -n nsB qdisc del dev vethB root
f=$W/loss.trace
gt "retransmits counter moves under loss" "$(delta S srnic1 retransmits)" 0
gt "local_ack_timeout_err moves under loss" \
	"$(delta_sum S local_ack_timeout_err)" 0
gt "srnic_retransmit fires under loss" "$(nev "$f" srnic_retransmit)" 0
gt "srnic_retransmit: cause timeout" "$(grep -c 'srnic_retransmit: .* cause=timeout' "$f")" 0
gt "srnic_retransmit: cause seq_nak" "$(grep -c 'srnic_retransmit: .* cause=seq_nak' "$f")" 0
gt "srnic0 sent sequence NAKs (send_seq_err)" "$(delta S srnic0 send_seq_err)" 0
gt "srnic1 received sequence NAKs (rcvd_seq_err)" "$(delta S srnic1 rcvd_seq_err)" 0
gt "out_of_seq_request moves" "$(delta S srnic0 out_of_seq_request)" 0
gt "duplicate_request moves" \
	"$(delta_sum S duplicate_request)" 0
gt "srnic_nak: sequence NAKs sent" "$(grep -c 'srnic_nak: .* tx psn_seq_err' "$f")" 0
gt "srnic_nak: sequence NAKs received" "$(grep -c 'srnic_nak: .* rx psn_seq_err' "$f")" 0
ge "srnic_nak tx events == send_seq_err" \
	"$(grep -c 'srnic_nak: dev=0 .* tx psn_seq_err' "$f")" "$(delta S srnic0 send_seq_err)"
if [ -n "$have_bt" ]; then
	bt_maps bt4 >"$W/bt4.maps"
	echo "info bpftrace bt4: $(bt_ticks bt4) ticks, $(grep -c '^--- end$' "$W/bt4.out") end; its last maps:"
	sed 's/^/  | bt4: /' "$W/bt4.maps"
	gt "bpftrace: retransmits by cause (timeout)" \
		"$(sed -n 's/^@retx\[0\]: \([0-9]*\)$/\1/p' "$W/bt4.maps")" 0
fi

echo "== done at ${SECONDS}s"
srnic_pair_down
rm -rf "$W"
t_summary
