#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every test tier and ends with one line "N passed, N failed".
#
#   tests/run.sh                 all tiers: style build unit kunit vm deploy compat
#   tests/run.sh kunit vm        only these tiers
#   tests/run.sh debug           the data-path VM tests on the debug kernel
#                                (not in the default run)
#
# Each tier prints its own "N passed, N failed" line; this script adds them
# up. A tier that dies without such a line counts as one failure. See
# tests/README.md for what each tier covers and how to run one test.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

all_tiers=(style build unit kunit vm deploy compat)
tiers=("$@")
# the debug tier (tests/run.sh debug) only when asked: on its KASAN kernel
# under TCG the data-path tests alone take longer than CI's budget
[ ${#tiers[@]} -gt 0 ] || tiers=("${all_tiers[@]}")

logdir=${SRNIC_TEST_LOGS:-$top/build/test-logs}
mkdir -p "$logdir"
. tests/tally.sh

for t in "${tiers[@]}"; do
	case $t in
	style) tally style "$logdir/style.log" tests/tier_style.sh ;;
	build) tally build "$logdir/build.log" tests/tier_build.sh ;;
	unit) tally unit "$logdir/unit.log" tests/tier_unit.sh ;;
	kunit) tally kunit "$logdir/kunit.log" tests/kunit/run.sh ;;
	vm) tally vm "$logdir/vm.log" tests/tier_vm.sh ;;
	deploy) tally deploy "$logdir/deploy.log" tests/tier_deploy.sh ;;
	compat) tally compat "$logdir/compat.log" tests/tier_compat.sh ;;
	debug) tally debug "$logdir/debug.log" tests/tier_debug.sh ;;
	*)
		echo "run.sh: unknown tier '$t' (tiers: ${all_tiers[*]} debug)" >&2
		exit 2
		;;
	esac
done

tally_failures
echo "=== summary"
printf '%s\n' "${TALLY_LINES[@]}"
echo "$TALLY_PASS passed, $TALLY_FAIL failed"
[ "$TALLY_FAIL" -eq 0 ]
