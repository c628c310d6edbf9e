#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# debug_run.sh: run one VM test script in a guest of the debug kernel
# (tools/debug-kernel.sh) and add kmemleak's verdict to its counts.
# tests/tier_debug.sh runs it as:
#
#   tests/vm/vmrun tests/vm/debug_run.sh tests/vm/test_X.sh [ARGS...]
#
# Before the test: one kmemleak scan, then `clear`. This sets aside what
# kmemleak suspects from boot: allocations whose only references live where
# it does not look (early boot, the 9p/overlay root's caches, per-CPU data)
# and that would be reported on every run whatever the test does.
# After the test: srnic is unloaded if the test left it loaded (a leak is
# only visible once nothing refers to the object any more), kmemleak's
# minimum object age (5 s) is waited out, and two scans run (the report only
# keeps what the last scan still found unreferenced, which drops objects
# that were merely in flight). Every suspect left fails the check "kmemleak:
# no leak", whoever allocated it; its backtraces are printed, and the lines
# naming srnic are counted apart.
#
# Output: the test's, then the kmemleak checks, then one line
# "N passed, N failed" (the test's last such line plus these checks). Exit
# status: non-zero if the test or a check failed.

# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

kl=/sys/kernel/debug/kmemleak
test=${1:?usage: debug_run.sh TEST [ARGS...]}
shift
# tests/tier_debug.sh reads this line to know which kernel really ran
echo "debug_run: guest kernel $(uname -r)"

if ! [ -w "$kl" ] || ! echo scan >"$kl" 2>/dev/null; then
	t_fail "kmemleak available" "no usable $kl: not the debug kernel? (uname -r: $(uname -r))"
	have_kl=0
else
	echo clear >"$kl"
	have_kl=1
fi

out=/tmp/debug_run.out
bash "$test" "$@" </dev/null 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
if [ -z "$line" ]; then
	t_fail "$(basename "$test") printed its result line" "exit $rc, no 'N passed, N failed'"
	tp=0 tf=0
else
	tp=${line%% passed*}
	tf=${line#* passed, }
	tf=${tf%% failed}
	[ "$rc" = 0 ] || [ "$tf" != 0 ] ||
		t_fail "$(basename "$test") exit status" "exit $rc with no failure counted"
fi

if [ "$have_kl" = 1 ]; then
	grep -qw '^srnic' /proc/modules && rmmod srnic
	sleep 6
	echo scan >"$kl"
	sleep 2
	echo scan >"$kl"
	report=$(cat "$kl")
	n=$(grep -c '^unreferenced object' <<<"$report")
	nsr=$(grep -c 'srnic' <<<"$report")
	if [ "$n" = 0 ]; then
		t_ok "kmemleak: no leak"
	else
		head -n 80 <<<"$report" | sed 's/^/  | /'
		t_fail "kmemleak: no leak" "$n unreferenced object(s), $nsr backtrace line(s) naming srnic"
	fi
fi

# its own summary line: lib.sh's exit trap must not count an early end
_T_SUMMARIZED=1
echo "$((tp + T_PASS)) passed, $((tf + T_FAIL)) failed"
[ "$rc" = 0 ] && [ "$((tf + T_FAIL))" = 0 ]
