#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Reproducer, not a test (tests/run.sh does not run it): the guest hang that
# makes vmrun boot tracing tests with --tcg single. It switches two sched
# tracepoints on and off (each switch live-patches __schedule: text_poke_bp)
# while the other vCPU context-switches hard, and prints its progress.
#
#   tests/vm/vmrun --tcg multi  --timeout 150 tests/vm/tcg_text_poke.sh
#   SRNIC_DUR=300 tests/vm/vmrun --tcg single --timeout 400 tests/vm/tcg_text_poke.sh
#
# With QEMU 7.2's multi-threaded TCG the guest stops within ~75 rounds:
# "rcu_preempt detected stalls" (a vCPU looping in exc_int3 on a stale
# translation) and "soft lockup ... text_poke_bp_batch" (the patching vCPU
# waiting for it), then vmrun's timeout (exit 124). With single-threaded
# TCG it runs to "TOGGLES=N" and exits 0. A newer QEMU that fixes it shows
# here first.
set -u
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
T=/sys/kernel/tracing/events/sched
# context switches on every CPU: a pipe and a sleeper pinned to CPU 0
(while :; do echo x; done | while read -r _; do :; done) &
writer=$!
taskset -c 0 bash -c 'while :; do sleep 0.001; done' &
sleeper=$!
end=$((SECONDS + ${SRNIC_DUR:-90}))
n=0
while [ "$SECONDS" -lt "$end" ]; do
	for ev in sched_switch sched_wakeup; do
		echo 1 >"$T/$ev/enable"
		echo 0 >"$T/$ev/enable"
	done
	n=$((n + 1))
	[ $((n % 10)) -ne 0 ] || echo "toggles $n at ${SECONDS}s"
done
kill "$writer" "$sleeper" 2>/dev/null
pkill -P "$writer" 2>/dev/null
echo "TOGGLES=$n"
