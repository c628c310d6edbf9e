#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC over a bad link, inside the VM (tests/vm/vmrun tests/vm/test_loss.sh):
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#   (server side)         netem / htb on both ends         (client side)
#
# With netem on both veths (so requests, ACKs/NAKs and READ responses all
# suffer) - loss 1% and 10%, reordering, duplication, corruption - RC must
# still deliver every byte:
#   * ibv_rc_pingpong -c -s 65536 -n 100 (SEND, data checked by the tool);
#   * tests/vm/rc_xfer.py: 4 MiB (1% loss; 2 MiB in the other cases) of
#     random data RDMA-WRITten to the server (the server compares its memory
#     byte for byte) and as much of the server's random data READ and
#     compared;
# and the recovery counters (retransmits, local_ack_timeout_err,
# rcvd_seq_err) must show that recovery happened; lost READ responses must
# be asked for again at once (read_gap_retries); corruption must show in
# rcvd_icrc_err.
# A send WQE with a bad lkey or an SGE past its MR's end must complete with
# IBV_WC_LOC_PROT_ERR, flush the next one and take the QP to error.
# Peer gone (netem loss 100%, the server's QP destroyed) while the client
# keeps WRITEs in flight: the first failed WQE must complete with
# IBV_WC_RETRY_EXC_ERR within 10 s x SRNIC_TIME_SCALE (timeout 14 = 67 ms,
# retry_cnt 7, each timeout doubling the next up to 4x: about 1.8 s), the
# rest flushed, the QP in error, and retry_exceeded_err /
# local_ack_timeout_err must count it.
# Rate-limited link (htb RATE_MBIT + a 32-packet drop-tail queue): RC goodput
# must stay close to the shaped rate, MIN_PCT at least, and the queue never
# overflow (ib_write_bw -D 5 and rc_xfer.py WRITE/READ): srnic
# keeps only a few packets per QP in the local qdisc (srnic_xmit.c).
#
# "info" lines carry the measured figures (counter deltas, goodput, time to
# retry exhaustion). SRNIC_KO=path overrides the module (default: srnic.ko
# at the repo root, from "make module").
set -u
cd "$(dirname "$0")/../.." || exit 1
REPO=$PWD
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

PY=/usr/bin/python3
XFER=$REPO/tests/vm/rc_xfer.py
RATE_MBIT=10
# Goodput over the shaped rate must reach this (headers cost ~7%). In a TCG
# guest on a loaded 2-core host it swings run to run (measured: WRITE
# 78-92%, ib_write_bw 67-76%, READ 49-80%; 91-93% for all three when the
# host was quiet), so this checks "does not
# collapse" - rdma_rxe falls below 10% on such a link - more than "how
# close"; the figures are in the info lines.
MIN_PCT=40
# The debug tier's KASAN guest runs everything 8x slower (SRNIC_TIME_SCALE,
# lib.sh): every bound on time below is scaled by it. The goodput bound is
# checked only at scale 1: in that guest the CPU, not srnic, sets the rate.
dmesg -C
if ! t_check "build destroy_barrier.c (LD_PRELOAD for the pingpongs)" \
	cc -O2 -Wall -Werror -shared -fPIC -o /tmp/destroy_barrier.so \
	tests/vm/destroy_barrier.c -ldl; then
	t_summary
	exit 1
fi
srnic_pair_up sch_netem sch_htb

# ------------------------------------------------------------ counters

CNTS="retransmits local_ack_timeout_err rcvd_seq_err send_seq_err
duplicate_request out_of_seq_request rcvd_icrc_err retry_exceeded_err
rcvd_no_qp send_no_route send_err sent_pkts read_gap_retries
read_resp_out_of_order req_placed_out_of_order"

# ------------------------------------------------------------ link shaping

# netem and unshape: tests/vm/lib.sh
# ratelimit MBIT: htb with a 32-packet drop-tail queue on both ends. A
# sender that floods it loses packets at every burst (rdma_rxe collapses);
# srnic keeps at most 16 packets per QP in the local stack, so it must
# never overflow. (fq_codel's time-based drops measured mostly the CPU
# stalls of a TCG guest on a loaded host, not the transport.)
ratelimit() {
	local ns dev
	for ns in nsA:vethA nsB:vethB; do
		dev=${ns#*:}
		ns=${ns%:*}
		tc -n "$ns" qdisc replace dev "$dev" root handle 1: htb default 10 &&
		tc -n "$ns" class add dev "$dev" parent 1: classid 1:10 htb \
			rate "${1}mbit" ceil "${1}mbit" &&
		tc -n "$ns" qdisc add dev "$dev" parent 1:10 handle 10: pfifo \
			limit 32 ||
			return 1
	done
}

# ------------------------------------------------------------ runners

OUT=/tmp/loss.out
# pingpong NAME [N]: ibv_rc_pingpong 64 KiB x N (100), data checked, server
# in nsA; PASS iff both sides exit 0.
# rc_pingpong has no closing handshake: each side exits (destroying its QP)
# as soon as its own last SEND is acknowledged and its last receive done;
# if the ACK of the other side's last SEND was lost, that side's
# retransmissions would hit no QP and fail with "retry counter exceeded".
# destroy_barrier.so holds each side at its ibv_destroy_qp() until both
# are there (or one has exited): no QP goes while its peer may need it, so
# either side failing is a failure of the transport.
BARRIER=/tmp/destroy_barrier.so
# pp_parked BARRIER PID...: each pingpong side waits at its BARRIER (the
# file BARRIER.wait exists) or its PID is gone
pp_parked() {
	while [ $# -gt 0 ]; do
		[ -e "$1.wait" ] || ! kill -0 "$2" 2>/dev/null || return 1
		shift 2
	done
}

pingpong() {
	local name=$1 n=${2:-100} b=/tmp/loss.pp pid cpid rc_c rc_s
	rm -f "$b".srv.* "$b".cli.*
	bg_start pid timeout --kill-after=5 "$(time_scaled 170)" ip netns exec nsA \
		env LD_PRELOAD="$BARRIER" SRNIC_BARRIER="$b.srv" \
		ibv_rc_pingpong -d srnic0 -g "$G0" -n "$n" -s 65536 -c >"$OUT.srv" 2>&1
	ready tcp_listening 18515 nsA
	bg_start cpid timeout --kill-after=5 "$(time_scaled 160)" ip netns exec nsB \
		env LD_PRELOAD="$BARRIER" SRNIC_BARRIER="$b.cli" \
		ibv_rc_pingpong -d srnic1 -g "$G1" -n "$n" -s 65536 -c 10.99.0.1 >"$OUT" 2>&1
	# both at the barrier or gone: then both may destroy their QP
	settle -t "$(time_scaled 170)" pp_parked "$b.srv" "$pid" "$b.cli" "$cpid"
	: >"$b.srv.go"
	: >"$b.cli.go"
	wait "$cpid"
	rc_c=$?
	wait "$pid"
	rc_s=$?
	grep -E 'bytes in .* seconds' "$OUT" | sed "s/^/info $name: /"
	if [ "$rc_c" -eq 0 ] && [ "$rc_s" -eq 0 ]; then
		t_ok "$name"
	else
		sed 's/^/  | /' "$OUT"
		sed 's/^/  srv| /' "$OUT.srv"
		t_fail "$name" "client exit $rc_c, server exit $rc_s"
	fi
	t_check "$name: each side kept its QP until the other was done (barrier)" \
		test -e "$b.srv.wait" -a -e "$b.cli.wait"
}

# lossy NAME "COUNTER..." MIB NETEM...: pingpong and rc_xfer (MIB MiB each
# way) under netem; the COUNTERs (summed over both devices) must have moved.
# Under 10% loss (slow: a 64 KiB message rarely gets through whole) the
# pingpong runs 20 iterations.
lossy() {
	local name=$1 cnts=$2 mib=$3 n=100 moved=0 c
	shift 3
	[ "$name" = "loss 10%" ] && n=20
	t_check "$name: netem $* on vethA and vethB" netem "$@"
	snap
	pingpong "$name: ibv_rc_pingpong 64 KiB x $n, data checked" "$n"
	rc_xfer "$name" --size $((mib << 20)) --msg 65536 --depth 16 --op-timeout "$(time_scaled 120)" \
		--ops write,read
	unshape
	deltas "$name counters"
	for c in $cnts; do
		moved=$((moved + $(delta_sum "$c")))
	done
	t_check "$name: counted (${cnts// //}: +$moved)" test "$moved" -gt 0
}
RECOVERY="retransmits local_ack_timeout_err rcvd_seq_err"

# --------------------------------------------------------------- clean link

snap
rc_xfer "clean link" --size $((2 << 20)) --msg 65536 --depth 16 --ops write,read
deltas "clean link counters"

# A send WQE that cannot be sent (local protection error), alone on an idle
# QP with a good one behind it: it must complete in error and take the QP to
# the error state, not leave the send queue stuck.
rc_xfer "clean link" --bad-wqe lkey --msg 65536 --op-timeout "$(time_scaled 20)"
rc_xfer "clean link" --bad-wqe range --msg 65536 --op-timeout "$(time_scaled 20)"

# --------------------------------------------------------------- bad links

lossy "loss 1%" "$RECOVERY" 4 loss 1%
# snap/deltas are still those of lossy's snap
t_check "loss 1%: lost READ responses asked for again at once (read_gap_retries +$(delta_sum read_gap_retries))" \
	test "$(delta_sum read_gap_retries)" -gt 0
lossy "loss 10%" "$RECOVERY" 2 loss 10%
lossy "reorder" "$RECOVERY" 2 delay 1ms reorder 25% 50%
# Heavy reordering (delay 40 ms +- 30 ms: most packets overtake others):
# messages of 1 MiB. A READ response, or a MIDDLE packet of a SEND or WRITE,
# that comes ahead of a hole is placed at once and remembered
# (read_resp_out_of_order, req_placed_out_of_order). Taken for losses, they
# made the QP go back again and again, its resends reordered in turn, and
# never finish; and a READ resumed more than 512 PSNs in was held back by
# the send window with no timer running: the QP hung for good.
t_check "heavy reorder: netem delay 40ms 30ms on vethA and vethB" netem delay 40ms 30ms
snap
# 10 round trips: 50 took 70-123 s in six runs (each round trip waits out
# retransmit timeouts) and one took more than the 160 s bound in CI; 20
# took 54 s in CI, the transfers below move 16 MiB through the same link
pingpong "heavy reorder: ibv_rc_pingpong 64 KiB x 10, data checked" 10
rc_xfer "heavy reorder" --size $((8 << 20)) --msg $((1 << 20)) --depth 8 \
	--op-timeout "$(time_scaled 120)" --ops write,read
PAIR_SERVER_SECS=120 PAIR_CLIENT_SECS=110 \
pair "heavy reorder: ib_read_bw 1 MiB x 20, 128 READs outstanding" \
	ib_read_bw -d srnic0 -x "$G0" -s 1048576 -n 20 -F -- \
	ib_read_bw -d srnic1 -x "$G1" -s 1048576 -n 20 -F 10.99.0.1
unshape
deltas "heavy reorder counters"
t_check "heavy reorder: READ responses ahead of a hole kept (read_resp_out_of_order +$(delta_sum read_resp_out_of_order))" \
	test "$(delta_sum read_resp_out_of_order)" -gt 0
t_check "heavy reorder: SEND/WRITE packets ahead of a hole kept (req_placed_out_of_order +$(delta_sum req_placed_out_of_order))" \
	test "$(delta_sum req_placed_out_of_order)" -gt 0
# duplicates need no recovery: the responder answers them as such
lossy "duplicate" duplicate_request 2 duplicate 5%
lossy "corrupt" "$RECOVERY" 2 corrupt 1%
# snap/deltas of the corrupt run are still those of lossy's snap
t_check "corrupt: ICRC errors counted (rcvd_icrc_err +$(delta_sum rcvd_icrc_err))" \
	test "$(delta_sum rcvd_icrc_err)" -gt 0

# --------------------------------------------------------------- peer gone

GONE=/tmp/loss.gone
# gone NAME CUT UNDO CLIENT_ARGS...: WRITEs streaming; CUT makes the peer
# unreachable (eval'd); the client must fail with RETRY_EXC_ERR in time.
gone() {
	local name=$1 cut=$2 undo=$3 pid cpid rc t
	shift 3
	RC_XFER_PORT=$((RC_XFER_PORT + 1))
	rm -f "$GONE"
	: >"$OUT"
	bg_start pid timeout --kill-after=5 "$(time_scaled 120)" ip netns exec nsA "$PY" "$XFER" \
		server --dev srnic0 --port "$RC_XFER_PORT"
	SRV_PID=$pid
	ready tcp_listening "$RC_XFER_PORT" nsA
	bg_start cpid timeout --kill-after=5 "$(time_scaled 110)" ip netns exec nsB "$PY" "$XFER" \
		client --dev srnic1 --port "$RC_XFER_PORT" --tag "$name: " \
		--gone-file "$GONE" --gone-max "$(time_scaled 10)" --op-timeout "$(time_scaled 60)" --ops write "$@" >"$OUT" 2>&1
	for _ in $(seq 300); do
		grep -q '^streaming' "$OUT" && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	if grep -q '^streaming' "$OUT"; then
		sleep 0.5	# WRITEs in flight
		snap
		t=$EPOCHREALTIME
		eval "$cut"
		echo "$t" >"$GONE"
	fi
	wait "$cpid"
	rc=$?
	eval "$undo"
	bg_stop "$SRV_PID" >/dev/null
	rc_xfer_report "$OUT"
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok' "$OUT"; then
		sed 's/^/  | /' "$OUT"
		t_fail "$name: rc_xfer.py" "exit $rc"
	fi
	deltas "$name counters"
	t_eq "$name: retry_exceeded_err counts the failed WQE" \
		"$(delta srnic1 retry_exceeded_err)" 1
	t_check "$name: local_ack_timeout_err +$(delta srnic1 local_ack_timeout_err) >= retry_cnt + 1 = 8" \
		test "$(delta srnic1 local_ack_timeout_err)" -ge 8
}

gone "peer gone (netem loss 100%)" \
	"tc -n nsB qdisc replace dev vethB root netem loss 100%" unshape \
	--size $((1 << 20)) --msg 65536 --depth 16
# shellcheck disable=SC2016 # CUT is eval'd inside gone()
gone "peer gone (server process killed)" \
	'bg_stop "$SRV_PID" >/dev/null' : \
	--size $((1 << 20)) --msg 65536 --depth 16
t_check "peer gone (server process killed): its packets hit no QP" \
	test "$(delta srnic0 rcvd_no_qp)" -gt 0

# --------------------------------------------------------------- rate limit

# ib_write_bw's "BW average[MB/sec]" (MiB/s) from its result line
# ratio GOODPUT_MIBPS: goodput over the shaped rate, in percent
ratio() { awk -v g="$1" -v r="$RATE_MBIT" 'BEGIN { printf "%d", g * 1048576 * 8 / (r * 1e6) * 100 }'; }

# goodput_check NAME PCT: PCT >= MIN_PCT, on the stock kernel's time scale
goodput_check() {
	if [ "$SRNIC_TIME_SCALE" != 1 ]; then
		t_skip "$1" "SRNIC_TIME_SCALE=$SRNIC_TIME_SCALE: the guest's CPU bounds the rate"
		return
	fi
	t_check "$1" test "$2" -ge "$MIN_PCT"
}
# fifo_drops NS DEV: packets the drop-tail queue of ratelimit() dropped
fifo_drops() {
	tc -s -n "$1" qdisc show dev "$2" parent 1:10 |
		sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1
}
# qdisc_drops NAME: the queues must not have overflowed (local backpressure)
qdisc_drops() {
	local a b
	a=$(fifo_drops nsA vethA)
	b=$(fifo_drops nsB vethB)
	t_check "$1: no drop in the 32-packet queues (vethA $a, vethB $b)" \
		test "${a:-x}" = 0 -a "${b:-x}" = 0
}

t_check "rate limit: htb ${RATE_MBIT} mbit + pfifo limit 32 on vethA and vethB" ratelimit "$RATE_MBIT"
snap
bg_start pid timeout --kill-after=5 "$(time_scaled 60)" ip netns exec nsA \
	ib_write_bw -d srnic0 -x "$G0" -s 65536 -D 5 -F
ready tcp_listening 18515 nsA
with_timeout "$(time_scaled 50)" ip netns exec nsB ib_write_bw -d srnic1 -x "$G1" -s 65536 \
	-D 5 -F 10.99.0.1 >"$OUT" 2>&1
rc=$?
wait "$pid"
bw=$(bw_avg "$OUT")
if [ "$rc" -eq 0 ] && [ -n "$bw" ]; then
	pct=$(ratio "$bw")
	echo "info rate limit: ib_write_bw 64 KiB -D 5: $bw MiB/s = $pct% of $RATE_MBIT mbit"
	goodput_check "rate limit: ib_write_bw goodput $pct% of the shaped rate (>= $MIN_PCT%)" "$pct"
else
	sed 's/^/  | /' "$OUT"
	t_fail "rate limit: ib_write_bw -D 5" "exit $rc"
fi
deltas "rate limit ib_write_bw counters"
qdisc_drops "rate limit: ib_write_bw"
snap
rc_xfer "rate limit" --size $((4 << 20)) --msg 65536 --depth 16 --op-timeout "$(time_scaled 120)" \
	--ops write,read
for op in write read; do
	bw=$(sed -n "s/^info xfer op=$op .*MiBps=\([0-9.]*\).*/\1/p" "$RC_XFER_OUT" | head -n 1)
	if [ -n "$bw" ]; then
		pct=$(ratio "$bw")
		echo "info rate limit: rc_xfer $op 4 MiB: $bw MiB/s = $pct% of $RATE_MBIT mbit"
		goodput_check "rate limit: rc_xfer $op goodput $pct% of the shaped rate (>= $MIN_PCT%)" "$pct"
	fi
done
deltas "rate limit rc_xfer counters"
qdisc_drops "rate limit: ib_write_bw and rc_xfer"
unshape

# --------------------------------------------------------------- teardown

srnic_pair_down
t_summary
