#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build tier: srnic.ko warning-free with W=1 against every supported kernel
# (Debian 12's 6.1, bookworm-backports' 6.12 and the newest Debian kernel
# tools/kernels.sh prepared, through its chroot), one-line errors for a bad
# KVER/KDIR; then against the default 6.1 headers with the metadata
# "rdma link add" autoloading relies on, and the C++ userspace warning-free
# (-Werror) with CMake. Each kernel's srnic.ko is kept in build/ko/ for the
# compat tier (tests/kocache.sh).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. tests/kocache.sh
pass=0
fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
check() { local n=$1; shift; if "$@"; then ok "$n"; else ko "$n"; fi; }

# build_for KVER: W=1 build for KVER, no warning, vermagic says KVER
build_for() {
	local k=$1 out rc
	make -s module-clean KVER="$k" >/dev/null 2>&1
	out=$(make module KVER="$k" 2>&1)
	rc=$?
	echo "$out" | grep -vE '^  (CC|LD|MODPOST|BTF)|^make|^tools/kernels.sh make'
	check "$k: make module KVER=$k succeeds" test "$rc" -eq 0
	check "$k: W=1 build has no warnings" bash -c "! grep -qE 'warning:' <<<\"\$1\"" _ "$out"
	check "$k: srnic.ko vermagic is $k" \
		bash -c '[ "$(modinfo -F vermagic srnic.ko | cut -d" " -f1)" = "$1" ]' _ "$k"
	# for the compat tier, which boots it
	[ "$rc" -ne 0 ] || kocache_put "$k"
	make -s module-clean KVER="$k" >/dev/null 2>&1
}
mapfile -t kernels < <(tools/kernels.sh list | cut -d' ' -f1)
echo "supported kernels present: ${kernels[*]}"
k612='' knew=''
for k in "${kernels[@]}"; do
	case $k in
	6.1.*) ;;
	6.12.*) k612=$k ;;
	*) knew=$k ;;
	esac
done
check "Linux 6.12 headers present (tools/kernels.sh install-6.12)" test -n "$k612"
check "newest kernel's chroot present (tools/kernels.sh prepare-newest)" test -n "$knew"
for k in $k612 $knew; do
	build_for "$k"
done
# bad input: one line saying what to install
out=$(make module KVER=0.0.0-none 2>&1 | grep -v '^make')
check "KVER without headers: one line naming linux-headers-KVER" \
	bash -c '[ "$(wc -l <<<"$1")" = 1 ] && grep -q "install linux-headers-0.0.0-none" <<<"$1"' _ "$out"
out=$(make module KDIR=/nonexistent 2>&1 | grep -v '^make')
check "KDIR not a build dir: one line" \
	bash -c '[ "$(wc -l <<<"$1")" = 1 ] && grep -q "KDIR=/nonexistent is not a kernel build dir" <<<"$1"' _ "$out"

make -s module-clean >/dev/null 2>&1
out=$(make module 2>&1)
rc=$?
echo "$out" | grep -vE '^  (CC|LD|MODPOST|BTF)|^make'
check "make module succeeds" test "$rc" -eq 0
check "W=1 build has no warnings" bash -c "! grep -qE 'warning:' <<<\"\$1\"" _ "$out"
check "srnic.ko built" test -f srnic.ko
[ "$rc" -ne 0 ] || kocache_put "$(make -s --no-print-directory kernelrelease)"
check "modinfo: rdma-link-srnic alias" bash -c "modinfo srnic.ko | grep -q '^alias: *rdma-link-srnic$'"
check "modinfo: depends on ib_core" bash -c "modinfo -F depends srnic.ko | grep -qw ib_core"

out=$(make userspace 2>&1)
rc=$?
echo "$out" | tail -n 5
check "userspace builds (CMake, -Werror)" test "$rc" -eq 0
check "srnicctl built" test -x build/userspace/ctl/srnicctl

# make module-clean: what make module wrote goes, build/ stays (kbuild's
# own clean took the userspace objects and the kept modules with it)
make -s module-clean >/dev/null 2>&1
check "make module-clean: no kbuild product left" \
	bash -c '! compgen -G "kernel/*.o" && ! compgen -G ".*.cmd" &&
		 ! compgen -G "kernel/.*.cmd" && ! compgen -G "srnic.*"'
check "make module-clean: build/ untouched (srnicctl, userspace objects, kept modules)" \
	bash -c 'test -x build/userspace/ctl/srnicctl &&
		 compgen -G "build/userspace/ctl/CMakeFiles/*/*.o" >/dev/null &&
		 compgen -G "build/ko/*.srnic-module" >/dev/null'
kocache_get "$(make -s --no-print-directory kernelrelease)" ||
	make -s module >/dev/null 2>&1
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
