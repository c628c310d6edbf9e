#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Any checkout path: git clone this checkout (plus its uncommitted changes to
# tracked files) under /tmp into a directory whose path has a space, build
# there and run the README's main job, tools/demo.sh (make module userspace,
# then the VM), from it. /tmp is where the guest puts a fresh tmpfs, and
# kbuild cannot take a path with spaces: both used to break (vmrun: "mount:
# mounting repo on /newroot/tmp/... failed"), and so did the userspace build
# (cmake -B with the path unquoted).
#
#   tests/deploy/anypath.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd -P)
pass=0
fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
check() { local n=$1; shift; if "$@"; then ok "$n"; else ko "$n"; fi; }

base=$(mktemp -d /tmp/srnic-anypath.XXXXXX)
dir="$base/a checkout, with spaces/srnic"
cleanup() {
	# the per-user kbuild symlink the Makefile made for this clone
	find /tmp -maxdepth 1 -name 'srnic-kbuild-*' -lname "$dir" -delete 2>/dev/null
	rm -rf -- "$base"
}
trap cleanup EXIT
mkdir -p "$(dirname "$dir")"

check "git clone into '$dir'" git clone -q "$top" "$dir"
git -C "$top" diff HEAD --binary >"$base/wip.patch"
check "uncommitted changes applied" bash -c '[ ! -s "$1" ] || git -C "$2" apply "$1"' _ "$base/wip.patch" "$dir"
cd "$dir" || exit 1
make module >"$base/make.log" 2>&1
rc=$?
tail -n 5 "$base/make.log"
check "make module in a path with spaces" test "$rc" -eq 0 -a -f srnic.ko
check "W=1 build there has no warnings" bash -c '! grep -q "warning:" "$1"' _ "$base/make.log"

out=$(tools/demo.sh 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 40 | sed 's/^/  | /'
check "tools/demo.sh from the clone exits 0" test "$rc" -eq 0
check "demo built srnicctl in the clone" test -x build/userspace/ctl/srnicctl
check "demo: the guest mounted the clone and ran the demo" grep -q '^vmrun: guest a booted' <<<"$out"
check "demo: ibv_rc_pingpong moved 200 x 4 KiB each way" grep -q "1638400 bytes in" <<<"$out"
check "demo: printed its done line" grep -qx 'demo done' <<<"$out"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
