#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Unit tier: the C++ GoogleTest suite through ctest (no root, no kernel).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
make -s userspace >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
out=$(ctest --test-dir build/userspace --output-on-failure 2>&1)
rc=$?
echo "$out"
# ctest: "100% tests passed, 0 tests failed out of 25"
line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' <<<"$out" | tail -n 1)
if [ -z "$line" ]; then
	echo "0 passed, 1 failed"
	exit 1
fi
failed=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")
total=$(sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\2/' <<<"$line")
[ "$total" -gt 0 ] || { echo "ctest ran no test"; echo "0 passed, 1 failed"; exit 1; }
echo "$((total - failed)) passed, $failed failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
