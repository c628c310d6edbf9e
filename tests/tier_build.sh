#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build tier: srnic.ko warning-free with W=1 against the Debian 6.1 headers,
# with the metadata "rdma link add" autoloading relies on, and the C++
# userspace warning-free (-Werror) with CMake.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
pass=0
fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
check() { local n=$1; shift; if "$@"; then ok "$n"; else ko "$n"; fi; }

make -s module-clean >/dev/null 2>&1
out=$(make module 2>&1)
rc=$?
echo "$out" | grep -vE '^  (CC|LD|MODPOST|BTF)|^make'
check "make module succeeds" test "$rc" -eq 0
check "W=1 build has no warnings" bash -c "! grep -qE 'warning:' <<<\"\$1\"" _ "$out"
check "srnic.ko built" test -f srnic.ko
check "modinfo: rdma-link-srnic alias" bash -c "modinfo srnic.ko | grep -q '^alias: *rdma-link-srnic$'"
check "modinfo: depends on ib_core" bash -c "modinfo -F depends srnic.ko | grep -qw ib_core"

out=$(make userspace 2>&1)
rc=$?
echo "$out" | tail -n 5
check "userspace builds (CMake, -Werror)" test "$rc" -eq 0
check "srnicctl built" test -x build/userspace/ctl/srnicctl
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
