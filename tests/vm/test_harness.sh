#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test_harness.sh: host-side tests of tests/vm/vmrun (about 1-2 minutes).
#
#   tests/vm/test_harness.sh
#
# 1. vmrun tests/vm/selftest.sh exits 0 (kernel, rw repo, veth + policy
#    routing, netns, rdma_rxe + rdma-core in the guest)
# 2. a guest script's exit status (7) is vmrun's exit status; a guest that
#    dies before its script starts, or has not started it after
#    VMRUN_BOOT_SECS, is booted once more (exit 125 when it fails again), one
#    that dies after is not; a script's "# vmrun-tcg:
#    single" line reaches qemu's -accel, VMRUN_TCG and --tcg override it, a
#    bad mode is a one-line error
# 3. --timeout 10 on a script sleeping 600 s: exit 124 within 30 s, and no
#    qemu of that run is left (pgrep -f on the run's unique VMRUN_TAG); each
#    vCPU's place named from QEMU's monitor before the kill
# 4. --pair: guests a and b ping each other over their link and exchange a
#    file through VMRUN_SYNC
# 5. lib.sh's T_SPLAT_RE matches each kind of kernel report as 6.1 prints it
#    (KASAN, KFENCE, UBSAN, lockdep, sleep in atomic, list corruption,
#    ODEBUG, kmemleak, stalls, lockups, hung tasks) and none of the debug
#    kernel's boot lines announcing those detectors (no VM)
# 6. tools/bench.sh --summarize on canned TSV rows (no VM): median of an odd
#    and of an even count, min-max, failed and n/a rows left out, srnic/rxe
#    ratio of the medians, the loaded verdict (a run above 0.3 cores of
#    other processes; 0.30 is not), valid JSON with the same figures, rounds
#    of a second file numbered on, exit status 0 when loaded, a PNG
# 7. lib.sh's EXIT trap (no VM): a test_*.sh that exits before t_summary,
#    after one PASS, prints "FAIL: ... ended before its summary: exit 3"
#    and "1 passed, 1 failed" and keeps its exit status; one that ends with
#    t_summary prints one summary line; a helper script (not test_*) that
#    counted nothing prints none
# 8. suite.sh's per-test timeout: with SUITE_TEST_TIMEOUT=6 a test that
#    hangs after one PASS is reported (processes, blocked tasks), killed
#    and counted "1 passed, 1 failed", and the test after it still runs
# 9. tests/tally.sh lists each failure under its test's name with the quoted
#    lines above it (t_kernel_clean's matches); a quoted FAIL is not one
# Prints one PASS/FAIL line per check and "N passed, N failed"; exits 1 on
# any failure. Console logs of failed runs are shown (last 40 lines).
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$HERE/lib.sh"
VMRUN=$HERE/vmrun
cd "$T_REPO" || exit 1
TMP=$(mktemp -d /tmp/vmrun-harness.XXXXXX)
trap 'bg_cleanup; rm -rf "$TMP"' EXIT

# run_vm LOG ARGS...: vmrun ARGS with its output in LOG; sets rc and secs.
run_vm() {
	local log=$1 t0
	shift
	t0=$EPOCHREALTIME
	"$VMRUN" "$@" >"$log" 2>&1
	rc=$?
	secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
}
show_log() { tail -n 40 "$1" | sed 's/^/  | /'; }

# 1. the guest self-test
run_vm "$TMP/selftest.log" --timeout 300 tests/vm/selftest.sh
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$TMP/selftest.log" | tail -n1)
boot=$(sed -n 's/.*booted (uptime \([0-9.]*\)s).*/\1/p' "$TMP/selftest.log")
if [ "$rc" = 0 ] && [[ $summary == *" passed, 0 failed" ]]; then
	t_ok "selftest.sh in the guest ($summary, boot ${boot}s, ${secs}s)"
else
	show_log "$TMP/selftest.log"
	t_fail "selftest.sh in the guest" "vmrun exit $rc, summary '$summary'"
fi

# 2. exit status propagation
printf 'echo "about to exit 7"\nexit 7\n' >"$TMP/exit7.sh"
run_vm "$TMP/exit7.log" --timeout 120 "$TMP/exit7.sh"
if [ "$rc" = 7 ]; then
	t_ok "guest exit 7 -> vmrun exit 7 (${secs}s)"
else
	show_log "$TMP/exit7.log"
	t_fail "guest exit 7 -> vmrun exit 7" "vmrun exit $rc"
fi

# 2a. TCG threading: a script's "# vmrun-tcg: single" line reaches qemu's
# -accel; VMRUN_TCG overrides the line, --tcg overrides both; a bad mode is
# a one-line usage error before any boot
printf '# vmrun-tcg: single\necho "tcg script"\nsleep 3\n' >"$TMP/single.sh"
tag=harness-tcg-$$-$RANDOM
VMRUN_TAG=$tag "$VMRUN" --timeout 120 "$TMP/single.sh" >"$TMP/single.log" 2>&1 &
vpid=$!
accel=
for _ in $(seq 300); do
	accel=$(pgrep -af "vmrun-$tag-a" | grep -o 'tcg,thread=[a-z]*' | head -n1)
	[ -n "$accel" ] && break
	sleep 0.2
done
wait "$vpid"
vrc=$?
t_eq "a script's '# vmrun-tcg: single' line: qemu runs with -accel $accel" \
	"$accel exit $vrc $(grep -c '^tcg script' "$TMP/single.log")" "tcg,thread=single exit 0 1"
VMRUN_TCG=multi run_vm "$TMP/multi.log" --timeout 120 "$TMP/single.sh"
t_eq "VMRUN_TCG=multi overrides the script's line" \
	"$rc $(grep -c 'TCG multi,' "$TMP/multi.log")" "0 1"
VMRUN_TCG=multi run_vm "$TMP/bad.log" --tcg 2 "$TMP/single.sh"
t_eq "--tcg overrides VMRUN_TCG; --tcg 2: one-line error, exit 2, no boot" \
	"$rc $(wc -l <"$TMP/bad.log") $(grep -c "single or multi, not '2'" "$TMP/bad.log")" "2 1 1"

# 2b. a guest that dies in early boot (here: no init, so the kernel panics
# before SCRIPT) is booted once more, once, saying so; --keep-log keeps the
# first console as FILE.noboot
printf 'echo "script ran"\n' >"$TMP/never.sh"
VMRUN_APPEND="rdinit=/nonexistent root=/dev/nonexistent" run_vm "$TMP/noboot.log" \
	--timeout 120 --keep-log "$TMP/noboot.console" "$TMP/never.sh"
n=$(grep -c "died before .* started: booting it once more" "$TMP/noboot.log")
if [ "$rc" = 125 ] && [ "$n" = 1 ] && ! grep -q "script ran" "$TMP/noboot.log" &&
   [ "$(grep -c "Kernel panic" "$TMP/noboot.log")" = 2 ] &&
   grep -q "Kernel panic" "$TMP/noboot.console.noboot" &&
   grep -q "Kernel panic" "$TMP/noboot.console"; then
	t_ok "early-boot death: booted once more, exit 125, first console kept (${secs}s)"
else
	show_log "$TMP/noboot.log"
	t_fail "early-boot death: booted once more" "exit $rc, retry messages $n"
fi

# 2b'. a guest that has not started SCRIPT after VMRUN_BOOT_SECS is killed
# and booted once more: with 1 s neither boot gets there (a boot takes ~5 s)
VMRUN_BOOT_SECS=1 run_vm "$TMP/slowboot.log" --timeout 120 "$TMP/never.sh"
n=$(grep -c "guest not booted after 1s; killing it" "$TMP/slowboot.log")
if [ "$rc" = 125 ] && [ "$n" = 2 ] && ! grep -q "script ran" "$TMP/slowboot.log" &&
   [ "$(grep -c "died before .* started: booting it once more" "$TMP/slowboot.log")" = 1 ]; then
	t_ok "no boot within VMRUN_BOOT_SECS=1: killed, booted once more, exit 125 (${secs}s)"
else
	show_log "$TMP/slowboot.log"
	t_fail "no boot within VMRUN_BOOT_SECS=1" "exit $rc, kill messages $n"
fi
VMRUN_BOOT_SECS=x run_vm "$TMP/badboot.log" --timeout 120 "$TMP/never.sh"
t_eq "VMRUN_BOOT_SECS=x: one-line error, exit 2" \
	"$rc $(wc -l <"$TMP/badboot.log")" "2 1"

# 2c. a guest that dies after SCRIPT started is not booted again
printf 'echo "panicking now"\necho c >/proc/sysrq-trigger\nsleep 60\n' >"$TMP/panic.sh"
run_vm "$TMP/panic.log" --timeout 120 "$TMP/panic.sh"
if [ "$rc" = 125 ] && grep -q "panicking now" "$TMP/panic.log" &&
   ! grep -q "booting it once more" "$TMP/panic.log"; then
	t_ok "a panic after the script started: exit 125, not booted again (${secs}s)"
else
	show_log "$TMP/panic.log"
	t_fail "a panic after the script started: exit 125, not booted again" "exit $rc"
fi

# 3. timeout: exit 124 within 30 s, nothing left behind
tag=harness-$$-$RANDOM
printf 'echo sleeping\nsleep 600\n' >"$TMP/sleep.sh"
VMRUN_TAG=$tag run_vm "$TMP/timeout.log" --timeout 10 "$TMP/sleep.sh"
left=$(pgrep -f "vmrun-$tag" || true)
dirs=$(compgen -G "/tmp/vmrun.$tag.*" || true)
if [ "$rc" = 124 ] && awk -v s="$secs" 'BEGIN { exit !(s < 30) }' &&
   [ -z "$left" ] && [ -z "$dirs" ] && grep -q TIMEOUT "$TMP/timeout.log"; then
	t_ok "--timeout 10 -> exit 124 in ${secs}s, no qemu or run dir left"
else
	show_log "$TMP/timeout.log"
	t_fail "--timeout 10" "exit $rc after ${secs}s; left pids '$left' dirs '$dirs'"
	[ -z "$left" ] || kill -KILL $left 2>/dev/null
fi
# ... and before the kill, where each vCPU was, named from the kernel's
# symbols (hmp_cpus.py; mostly the idle loop's halt)
t_check "--timeout: each vCPU's place named from the monitor (2 vCPUs)" \
	test "$(grep -cE '^vmrun: guest a: vCPU[01] at [a-z_][a-z0-9_.]*\+0x' "$TMP/timeout.log")" = 2
grep -E '^vmrun: guest a: vCPU' "$TMP/timeout.log" | cut -c1-160 | sed 's/^/  | /'

# 4. --pair: ping both ways, exchange a file through VMRUN_SYNC
cat >"$TMP/pair.sh" <<'GUEST'
set -u
peer_role=$([ "$VMRUN_ROLE" = a ] && echo b || echo a)
echo "role $VMRUN_ROLE: $VMRUN_IFACE $VMRUN_ADDR -> $VMRUN_PEER, sync $VMRUN_SYNC"
busybox ping -c3 -W2 "$VMRUN_PEER" || { echo "ping $VMRUN_PEER failed"; exit 1; }
echo "payload from $VMRUN_ROLE $(busybox hostname)" >"$VMRUN_SYNC/$VMRUN_ROLE.tmp"
mv "$VMRUN_SYNC/$VMRUN_ROLE.tmp" "$VMRUN_SYNC/$VMRUN_ROLE.msg"
for _ in $(seq 300); do
	[ -f "$VMRUN_SYNC/$peer_role.msg" ] && break
	sleep 0.1
done
got=$(cat "$VMRUN_SYNC/$peer_role.msg" 2>/dev/null)
want="payload from $peer_role vmrun-$peer_role"
[ "$got" = "$want" ] || { echo "got '$got', want '$want'"; exit 1; }
echo "role $VMRUN_ROLE: received '$got'"
# don't power off before the peer has read our file
touch "$VMRUN_SYNC/$VMRUN_ROLE.done"
for _ in $(seq 300); do
	[ -f "$VMRUN_SYNC/$peer_role.done" ] && exit 0
	sleep 0.1
done
echo "peer never finished"; exit 1
GUEST
run_vm "$TMP/pair.log" --pair --timeout 180 "$TMP/pair.sh"
if [ "$rc" = 0 ] && grep -q "^\[a\] role a: received 'payload from b" "$TMP/pair.log" &&
   grep -q "^\[b\] role b: received 'payload from a" "$TMP/pair.log"; then
	t_ok "--pair: ping + file exchange via VMRUN_SYNC (${secs}s)"
else
	show_log "$TMP/pair.log"
	t_fail "--pair: ping + file exchange" "vmrun exit $rc"
fi

# 5. the splat pattern, on sample lines (console form: "[ time] text")
while IFS= read -r l; do
	t_check "T_SPLAT_RE matches: ${l#\[*\] }" bash -c 'grep -qE -- "$1" <<<"$2"' _ "$T_SPLAT_RE" "$l"
done <<'EOF'
[   41.207811] BUG: KASAN: slab-use-after-free in srnic_comp_ack+0x1d2/0x6a0 [srnic]
[   41.207811] BUG: KFENCE: out-of-bounds read in srnic_req_fetch+0x113/0x5f0 [srnic]
[   12.500001] UBSAN: shift-out-of-bounds in drivers/infiniband/sw/srnic/srnic_req.c:282:14
[    9.100000] WARNING: possible circular locking dependency detected
[    9.100000] WARNING: suspicious RCU usage
[    9.100000] BUG: sleeping function called from invalid context at mm/slab.h:742
[    9.100000] BUG: scheduling while atomic: kworker/0:1/23/0x00000002
[    9.100000] list_add corruption. prev->next should be next (ffff888004a1c0d8), but was 0000000000000000.
[    9.100000] ODEBUG: free active (active state 0) object type: timer_list hint: srnic_retry_timer+0x0/0x90 [srnic]
[    9.100000] kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
[   88.000000] rcu: INFO: rcu_preempt self-detected stall on CPU
[   88.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [ib_write_bw:512]
[  242.000000] INFO: task nvme:733 blocked for more than 120 seconds.
[  242.000000] BUG: workqueue lockup - pool cpus=0 node=0 flags=0x0 nice=0 stuck for 31s!
[  242.000000] general protection fault, probably for non-canonical address 0xdffffc0000000000: 0000 [#1] PREEMPT SMP KASAN
[a] [   9.100000] WARNING: CPU: 1 PID: 80 at kernel/srnic_qp.c:431 srnic_modify_qp+0x3c/0x2a0 [srnic]
EOF
while IFS= read -r l; do
	t_check "T_SPLAT_RE ignores: ${l#\[*\] }" bash -c '! grep -qE -- "$1" <<<"$2"' _ "$T_SPLAT_RE" "$l"
done <<'EOF'
[    0.000000] kasan: KernelAddressSanitizer initialized
[    0.000000] kfence: initialized - using 2097152 bytes for 255 objects at 0x(____ptrval____)-0x(____ptrval____)
[    0.010000] rcu: RCU lockdep checking is enabled.
[    0.020000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
[    0.300000] kmemleak: Kernel memory leak detector initialized (mem pool available: 14330)
[    0.300000] kmemleak: Automatic memory scanning thread ended
[    1.000000] NMI watchdog: Perf NMI watchdog permanently disabled
PASS: no kernel warnings
EOF

# 6. bench.sh's summary on canned rows (no VM)
bt=$TMP/bench
mkdir -p "$bt"
bench_row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t100\t1\t%s\t%s\n' "$@"; }
{
	printf '# date: 2026-12-02T10:00:00+00:00\n# host: canned\n# kernel: kernel 6.1.0-canned\n# mtu: 1500\n'
	printf 'round\tstack\ttest\tsize\tmetric\tvalue\tunit\tveth_pkts\tattempts\tstatus\thost_load\n'
	# round stack test size metric value unit status host_load
	r=0
	for v in "44 66 16 8 ok 0.05 0.10" "40 60 14 - n/a 0.30 0.00" "50 70 15 7 ok 0.12 0.20"; do
		read -r w1 w2 l1 l2 st h1 h2 <<<"$v"
		r=$((r + 1))
		bench_row "$r" rxe vm 0 wall 200 s ok "$h1"
		bench_row "$r" rxe ib_write_bw 65536 bw_avg "$w1" MiB/s ok "$h1"
		bench_row "$r" rxe ib_write_lat 8 t_typical "$l1" us ok "$h1"
		bench_row "$r" srnic vm 0 wall 200 s ok "$h2"
		bench_row "$r" srnic ib_write_bw 65536 bw_avg "$w2" MiB/s ok "$h2"
		bench_row "$r" srnic ib_write_lat 8 t_typical "$l2" us "$st" "$h2"
	done
	bench_row 3 srnic ib_write_bw 4096 bw_avg 99 MiB/s fail 0.20
} >"$bt/quiet.tsv"
{
	printf 'round\tstack\ttest\tsize\tmetric\tvalue\tunit\tveth_pkts\tattempts\tstatus\thost_load\n'
	bench_row 1 rxe vm 0 wall 200 s ok 0.31
	bench_row 1 rxe ib_write_bw 65536 bw_avg 48 MiB/s ok 0.31
	bench_row 1 srnic vm 0 wall 200 s ok 0.02
	bench_row 1 srnic ib_write_bw 65536 bw_avg 48 MiB/s ok 0.02
} >"$bt/loaded.tsv"
tools/bench.sh --summarize --json "$bt/quiet.json" --png "$bt/quiet.png" "$bt/quiet.tsv" \
	>"$bt/quiet.out" 2>&1
t_eq "bench.sh --summarize (quiet rounds) exits 0" "$?" 0
sed 's/^/  | /' "$bt/quiet.out"
# shellcheck disable=SC2016 # $1 and $2 expand in the inner bash
t_check "bench summary: 3 runs of 40/44/50 -> median 44 [40-50], srnic 66 [60-70], ratio 1.50" \
	bash -c 'grep -Eq "^ib_write_bw 64 KiB bw_avg +MiB/s +44 \[40-50\] +66 \[60-70\] +1\.50$" "$1"' _ "$bt/quiet.out"
# shellcheck disable=SC2016
t_check "bench summary: an n/a row is left out: median of 8 and 7 is 7.5 [7-8] (2/3), ratio 0.50" \
	bash -c 'grep -Eq "^ib_write_lat 8 B t_typical +us +15 \[14-16\] +7\.5 \[7-8\] \(2/3\) +0\.50$" "$1"' _ "$bt/quiet.out"
t_check "bench summary: a figure with only failed runs shows -" \
	grep -Eq '^ib_write_bw 4 KiB bw_avg +MiB/s +- +- +-$' "$bt/quiet.out"
t_check "bench summary: 0.30 cores is not loaded, ratios comparable" \
	grep -q 'no VM run loaded .* ratios comparable$' "$bt/quiet.out"
# shellcheck disable=SC2016 # $w and $l are jq variables
t_check "bench summary: JSON medians, min, max, values, failed, ratios" jq -e '
	(.figures | map(select(.test == "ib_write_bw" and .size == 65536 and .metric == "bw_avg"))[0]) as $w |
	(.figures | map(select(.test == "ib_write_lat"))[0]) as $l |
	$w.stacks.rxe == {values: [44, 40, 50], median: 44, min: 40, max: 50, failed: 0} and
	$w.stacks.srnic.median == 66 and $w.ratio == 1.5 and
	$l.stacks.srnic == {values: [8, 7], median: 7.5, min: 7, max: 8, failed: 1} and
	$l.ratio == 0.5 and (.figures | map(select(.size == 4096))[0].ratio) == null' "$bt/quiet.json"
t_check "bench summary: JSON header, runs, not loaded" jq -e '
	.rounds == 3 and .stacks == ["rxe", "srnic"] and .loaded == false and .comparable == true and
	.kernel == "kernel 6.1.0-canned" and .mtu == "1500" and .date != null and
	(.runs | length) == 6 and ([.runs[].loaded] | any | not)' "$bt/quiet.json"
# shellcheck disable=SC2016
t_check "bench summary: --png writes a PNG" \
	bash -c '[ "$(head -c 8 "$1" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a ]' _ "$bt/quiet.png"
tools/bench.sh --summarize --json "$bt/both.json" "$bt/quiet.tsv" "$bt/loaded.tsv" \
	>"$bt/both.out" 2>&1
t_eq "bench.sh --summarize (a loaded round) exits 0" "$?" 0
sed 's/^/  | /' "$bt/both.out"
t_check "bench summary: 0.31 cores is loaded, ratios NOT comparable" \
	grep -Eq '^  round 4 rxe +0\.31  LOADED$' "$bt/both.out"
t_check "bench summary: the verdict says NOT comparable" \
	grep -q '^bench: 1 of 8 VM runs LOADED .*the srnic/rxe ratios are NOT comparable$' "$bt/both.out"
t_check "bench summary: JSON of two files: rounds numbered on, loaded flags" jq -e '
	.rounds == 4 and .loaded == true and .comparable == false and
	([.runs[] | select(.loaded)] == [{round: 4, stack: "rxe", host_load: 0.31, loaded: true}]) and
	(.figures[0].stacks.rxe.values == [44, 40, 50, 48]) and .figures[0].stacks.rxe.median == 46' "$bt/both.json"

# 7. a test that ends early still prints its count
mkdir -p "$TMP/early"
printf '. %q\nt_ok one\nexit 3\n' "$HERE/lib.sh" >"$TMP/early/test_early.sh"
printf '. %q\nt_ok one\nt_summary\n' "$HERE/lib.sh" >"$TMP/early/test_whole.sh"
printf '. %q\nexit 4\n' "$HERE/lib.sh" >"$TMP/early/helper.sh"
bash "$TMP/early/test_early.sh" >"$TMP/early/out" 2>&1
t_eq "a test_*.sh exiting before t_summary keeps its exit status" "$?" 3
sed 's/^/  | /' "$TMP/early/out"
t_check "... and counts its early end as a failure" \
	grep -qx 'FAIL: test_early.sh ended before its summary: exit 3' "$TMP/early/out"
t_check "... and prints its summary" grep -qx '1 passed, 1 failed' "$TMP/early/out"
out=$(bash "$TMP/early/test_whole.sh" 2>&1)
t_eq "a test ending with t_summary prints one summary line" \
	"$(grep -cE '^[0-9]+ passed' <<<"$out")/$(grep -c FAIL <<<"$out")" 1/0
out=$(bash "$TMP/early/helper.sh" 2>&1)
t_eq "a helper that counted nothing prints nothing at exit (exit 4)" "$?:$out" "4:"

# 8. suite.sh: a hung test is reported, killed and counted; the next runs
# (the tests in the repo: the guest sees the repo, not the host's /tmp)
mkdir -p "$T_REPO/build"
SDIR=$(mktemp -d "$T_REPO/build/harness-suite.XXXXXX")
trap 'bg_cleanup; rm -rf "$TMP" "$SDIR"' EXIT
printf '. %q\nt_ok "before the hang"\nsleep 600\n' "$HERE/lib.sh" >"$SDIR/test_hang.sh"
printf '. %q\nt_ok "after the hang"\nt_summary\n' "$HERE/lib.sh" >"$SDIR/test_after.sh"
printf 'SUITE_TEST_TIMEOUT=6 bash %q %q %q\n' "$HERE/suite.sh" \
	"$SDIR/test_hang.sh" "$SDIR/test_after.sh" >"$SDIR/run.sh"
run_vm "$TMP/suite.log" --timeout 180 "$SDIR/run.sh"
sl=$TMP/suite.log
t_eq "suite.sh with a hung test exits 1" "$rc" 1
t_check "... names it: still running after 6 s, killed" grep -qx \
	'FAIL: test_hang: still running after 6 s (SUITE_TEST_TIMEOUT): killed' "$sl"
t_check "... prints what its sleep waits on" grep -q 'hrtimer_nanosleep\|do_nanosleep' "$sl"
t_check "... and the kernel's blocked tasks" grep -q '^--- blocked tasks' "$sl"
t_check "... counts it 1 passed, 1 failed" grep -q '^suite: test_hang 1 passed, 1 failed' "$sl"
t_check "... and the next test runs: 1 passed, 0 failed" \
	grep -q '^suite: test_after 1 passed, 0 failed' "$sl"
t_check "... totals 2 passed, 1 failed" grep -qx '2 passed, 1 failed' "$sl"
grep -q '^suite: test_after 1 passed, 0 failed' "$sl" || show_log "$sl"

# 9. tests/tally.sh (tests/run.sh and the tiers): the failures it lists at
# the end are named by their test, with the quoted lines above each (what
# t_kernel_clean matched); a quoted FAIL is output, not a failure (no VM)
tl=$TMP/tally.log
printf '%s\n' '=== suite: test_a' '  | [    9.1] WARNING: CPU: 0 PID: 1 at x+0x1/0x2' \
	'FAIL: no kernel warnings: 1 kernel log line(s) match the splat pattern' \
	'=== test_b: tests/vm/vmrun tests/vm/test_b.sh' '  | FAIL: deliberate, quoted' \
	'PASS: one' '[a] FAIL: on guest a' '1 passed, 2 failed' >"$tl"
# shellcheck source=tests/tally.sh
tally_out() { (. "$T_REPO/tests/tally.sh"; tally vm "$TMP/tally.out" cat "$1" >/dev/null; tally_failures); }
t_eq "tally: each failure named by its test, the kernel's line under it" "$(tally_out "$tl")" \
	"=== failures
vm: test_a: FAIL: no kernel warnings: 1 kernel log line(s) match the splat pattern
vm:     | [    9.1] WARNING: CPU: 0 PID: 1 at x+0x1/0x2
vm: test_b: [a] FAIL: on guest a"
# shellcheck disable=SC2016 # $1 expands in the inner bash
t_check "tally: suite.sh's hung test named (section 8's log)" bash -c '
	grep -qx "vm: test_hang: FAIL: test_hang: still running after 6 s (SUITE_TEST_TIMEOUT): killed" <<<"$1"' \
	_ "$(tally_out "$sl")"

t_summary
