#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# User-ring fuzzer, inside the VM (tests/vm/vmrun): hostile SQ/RQ/SRQ/CQ
# indices and entries, written behind the rxe provider's back into the
# rings it maps, and doorbells rung by hand (tests/vm/ring_fuzz.c, built
# here, libibverbs; run in the root netns, where it reads the counters).
# RC QPs on srnic0 (nsA) talk to RC QPs on srnic1 (nsB).
#
#   SQ producer index out of range, at 0xffffffff, wrapped past the WQEs
#     srnic fetched already, moved back below them (the last: it stalled a
#     CPU for ever before srnic_queue_fetch()), random values with 200
#     doorbells over a ring full of garbage: each doorbell returns at once,
#     the QP goes to ERR, its WQEs complete in error, ring_index_errors
#     moves;
#   malformed send WQEs (bad opcode, num_sge 1000, 1 MiB inline): the WRITE
#     before completes (data verified), the bad one with LOC_QP_OP_ERR, the
#     QP goes to ERR, a WR posted after it is flushed, wqe_format_errors
#     moves;
#   RQ/SRQ producer out of range or moved back, a malformed receive WQE:
#     the receiving QP goes to ERR, the SEND fails (NAK), the counter moves;
#   CQ consumer index out of range or past the producer: IBV_EVENT_CQ_ERR,
#     the QP whose completion the CQ refused goes to ERR;
#   20 rounds of modify_qp to ERR, to RESET and back to RTS while a thread
#     keeps the SQ and RQ full: each returns within 2 s;
#   modify_qp RTS->RTS from a thread while a malformed WQE takes the QP to
#     ERR, 300 rounds: the QP is in ERR after every round (modify_qp does
#     not write RTS over the data path's error);
# after every case a fresh pair moves data (64 KiB WRITE, SEND), every
# byte compared. Here: the run ends within 300 s, the kernel log holds no
# stall, lockup, warning or oops.
#
# SRNIC_RING_FUZZ_SEED replays a run's random cases (the seed is printed).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

BIN=/tmp/ring_fuzz
LOG=/tmp/ring_fuzz.log
SECS=300
SEED=${SRNIC_RING_FUZZ_SEED:-$(date +%s%N)}

# beyond T_SPLAT_RE: any stall line and any backtrace
splat_re='rcu.*(stall|detected)|Call Trace'

dmesg -C
if ! t_check "build ring_fuzz.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$BIN" tests/vm/ring_fuzz.c -libverbs -lpthread; then
	t_summary
	exit 1
fi
srnic_pair_up

# In the background: a CPU stuck in the kernel cannot be killed, and the
# script must still be able to say so.
bg_start FUZZ_PID "$BIN" srnic0 "$G0" srnic1 "$G1" "$SEED" \
	>"$LOG" 2>&1
end=$((SECONDS + SECS))
while kill -0 "$FUZZ_PID" 2>/dev/null && [ $SECONDS -lt $end ]; do
	sleep 1
done
if kill -0 "$FUZZ_PID" 2>/dev/null; then
	# Stuck (in the kernel, unkillable): report what it checked so far.
	t_fail "ring_fuzz ends within $SECS s" "still running after its last line:"
	tail -n 1 "$LOG" | sed 's/^/  | /'
	t_from_output ring_fuzz 124 "$(cat "$LOG")" '#*'
	t_kernel_clean "kernel log: no stall, lockup, warning or oops" "$splat_re|RIP: 0010"
	t_summary
	exit 1
fi
rc=0
wait "$FUZZ_PID" || rc=$?
t_from_output ring_fuzz "$rc" "$(cat "$LOG")" '#*'

if [ -z "${SRNIC_RING_FUZZ_ONLY:-}" ]; then
	t_check "corrupt user indices were reported (rate-limited)" \
		bash -c "dmesg | grep -q 'user ring producer index .* is corrupt'"
fi
# kernel log clean (no stall, lockup, warning or oops) before and after
srnic_pair_down "$splat_re"
t_summary
