# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/run.sh and tier scripts: run a command, stream its output
# to the console and a log, and add the counts of the last
# "N passed, N failed" line it printed to TALLY_PASS/TALLY_FAIL. A command
# that prints no such line, or exits non-zero with no failure counted,
# counts as one failure.

TALLY_PASS=0
TALLY_FAIL=0
TALLY_LINES=()

# tally NAME LOGFILE CMD...
tally() {
	local name=$1 log=$2 rc line p f
	shift 2
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -aE '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		p=0
		f=1
		echo "=== $name: no result line (exit $rc): counted as 1 failure"
	else
		p=$(sed -E 's/^([A-Za-z-]+: )?([0-9]+) passed.*/\2/' <<<"$line")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1
			echo "=== $name: exited $rc with no failure counted: counted as 1 failure"
		fi
	fi
	TALLY_PASS=$((TALLY_PASS + p))
	TALLY_FAIL=$((TALLY_FAIL + f))
	TALLY_LINES+=("$(printf '%-16s %4d passed, %d failed' "$name" "$p" "$f")")
}
