# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/run.sh and tier scripts: run a command, stream its output
# to the console and a log, and add the counts of the last
# "N passed, N failed" line it printed to TALLY_PASS/TALLY_FAIL. A command
# that prints no such line, or exits non-zero with no failure counted,
# counts as one failure. The FAIL lines of each command (at most 20, each
# with its test's name and the quoted lines above it) are kept in
# TALLY_FAILS, so that a run's last lines can say which checks failed and
# why (tally_failures prints them, each cut to 300 characters).

TALLY_PASS=0
TALLY_FAIL=0
TALLY_LINES=()
TALLY_FAILS=()

# _tally_count_one NAME WHY: say why NAME counts as one failure, and keep it
_tally_count_one() {
	echo "=== $1: $2: counted as 1 failure"
	TALLY_FAILS+=("$1: $2")
}

# _tally_fail_lines LOG: each failed check's line in LOG (a guest of a pair
# prefixes "[a] "), named by the test it came from (the last "=== suite:
# NAME" or "=== NAME: " header above it), and after it the quoted output
# ("  | ") right above it, its first 3 lines (what t_kernel_clean matched,
# for one). A quoted FAIL line is output, for example the harness's
# deliberate failures, not a failure.
_tally_fail_lines() {
	awk '
	function fail(line,  i) {
		if (++fails > 20)
			exit
		print line
		for (i = 0; i < q && i < 3; i++)
			print "  " quoted[i]
		q = 0
	}
	/^=== .*counted as 1 failure/ { fail($0); next }
	/^=== suite: / { where = $3 ": "; q = 0; next }
	/^=== [^ ]+: / { where = $2 " "; q = 0; next }
	/^  \| / { if (q < 3) quoted[q] = $0; q++; next }
	/^(\[[a-z]\] )?(FAIL|not ok)([^A-Za-z0-9_]|$)|\[FAILED\] / { fail(where $0); next }
	{ q = 0 }
	' "$1"
}

# tally NAME LOGFILE CMD...
tally() {
	local name=$1 log=$2 rc line p f fl t0=$SECONDS
	shift 2
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -aE '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		p=0
		f=1
		_tally_count_one "$name" "no result line (exit $rc)"
		# where it stopped (a guest that hung: vmrun's timeout): the
		# test suite.sh had started last, and the last lines before
		# vmrun's own
		fl=$(grep -a '^=== suite: ' "$log" | tail -n 1)
		[ -z "$fl" ] || TALLY_FAILS+=("$name: the last test it started: ${fl#=== suite: }")
		while IFS= read -r fl; do
			TALLY_FAILS+=("$name:   | ${fl:0:300}")
		done < <(grep -avE '^(vmrun: |VMRUN-EXIT|\[ *[0-9.]+\] reboot: |$)' "$log" | tail -n 5)
		# the kernel's own reports, and where vmrun found the vCPUs
		while IFS= read -r fl; do
			TALLY_FAILS+=("$name: ${fl:0:300}")
		done < <({ grep -aE 'soft lockup|hard LOCKUP|blocked for more than|self-detected stall|rcu: INFO|BUG: |Oops' "$log" | head -n 4
			grep -aE '^vmrun: guest [a-z]: vCPU' "$log" | head -n 8; })
	else
		p=$(sed -E 's/^([A-Za-z-]+: )?([0-9]+) passed.*/\2/' <<<"$line")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1
			_tally_count_one "$name" "exited $rc with no failure counted"
		fi
	fi
	while IFS= read -r fl; do
		TALLY_FAILS+=("$name: ${fl:0:300}")
	done < <(_tally_fail_lines "$log" | head -n 40)
	TALLY_PASS=$((TALLY_PASS + p))
	TALLY_FAIL=$((TALLY_FAIL + f))
	TALLY_LINES+=("$(printf '%-16s %4d passed, %d failed (%d s)' "$name" "$p" "$f" \
		$((SECONDS - t0)))")
}

# tally_suite_lines PREFIX LOG: a summary line for each test that
# tests/vm/suite.sh ran in LOG's guest ("suite: NAME N passed, N failed (S s)"),
# indented under the suite's own line and named PREFIXNAME (its counts are
# in the suite's)
tally_suite_lines() {
	local line
	while IFS= read -r line; do
		TALLY_LINES+=("$(sed -E 's/^suite: ([^ ]+) ([0-9]+) passed, ([0-9]+) failed \(([0-9]+) s\)$/\1 \2 \3 \4/' <<<"$line" |
			{ read -r n p f t; printf '  %-14s %4d passed, %d failed (%d s)' "$1$n" "$p" "$f" "$t"; })")
	done < <(grep -aE '^suite: [^ ]+ [0-9]+ passed, [0-9]+ failed \([0-9]+ s\)$' "$2")
}

# tally_failures: print the kept FAIL lines, if any, under "=== failures"
tally_failures() {
	[ ${#TALLY_FAILS[@]} -gt 0 ] || return 0
	echo "=== failures"
	printf '%s\n' "${TALLY_FAILS[@]}"
}
