#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Debug tier: the data-path VM tests on the cached debug kernel
# (tools/debug-kernel.sh: KASAN, KFENCE, UBSAN, lockdep, kmemleak, ...), each
# in one guest through tests/vm/debug_run.sh (adds a kmemleak check). Each
# test also fails if its guest's whole console, boot included, holds a line
# matching lib.sh's T_SPLAT_RE (a test's own dmesg checks only see what
# follows its `dmesg -C`).
#
# No cached debug kernel: says so and counts 0 passed, 0 failed (building
# one takes ~35-50 min on 2 cores: `tools/debug-kernel.sh build`). The tests:
# SRNIC_DEBUG_TESTS (names, default the list below); per-guest timeout
# SRNIC_DEBUG_TIMEOUT (s, default 3600: TCG with KASAN and lockdep is 3-5x
# slower than the stock kernel; test_order took 2141 s on 2026-12-06, and
# its next run ended its 82 checks just before 2400 s, the kmemleak scan cut
# off). srnic.ko is built for the debug kernel, then
# rebuilt for the default one at the end.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. tests/tally.sh
. tests/kocache.sh
logdir=${SRNIC_TEST_LOGS:-$top/build/test-logs}/debug
mkdir -p "$logdir"

if ! d=$(tools/debug-kernel.sh dir 2>"$logdir/dir.err"); then
	echo "debug tier: no cached debug kernel (build with tools/debug-kernel.sh build)"
	cat "$logdir/dir.err"
	echo "0 passed, 0 failed"
	exit 0
fi
kver=$(cat "$d/ready")

pass=0
fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
# shellcheck disable=SC2016 # expands in the inner bash
splat_re=$(bash -c '. tests/vm/lib.sh; printf %s "$T_SPLAT_RE"')

read -ra tests <<<"${SRNIC_DEBUG_TESTS:-test_verbs test_cq test_mr test_order \
test_loss test_ring_fuzz test_wire_fuzz test_revoke test_nvmeof test_lifecycle \
test_native test_xrc test_odp test_dc test_vlan test_rdma_netns test_mcast \
test_bond}"
tmo=${SRNIC_DEBUG_TIMEOUT:-3600}
t0=$SECONDS

# test_native, test_xrc and test_odp need the userspace build (srnic's
# provider, srnicctl) as the vm tier does
if ! make -s userspace >"$logdir/build-userspace.log" 2>&1; then
	tail -n 20 "$logdir/build-userspace.log"
	ko "make userspace (see $logdir/build-userspace.log)"
fi
# test_dc lists DC QPs with Debian 13's rdma (cached; tier_vm builds it too)
tools/trixie-chroot.sh >"$logdir/trixie-chroot.log" 2>&1 ||
	echo "debug: tools/trixie-chroot.sh failed (see $logdir/trixie-chroot.log)"
make -s module-clean >/dev/null 2>&1
if ! make -s module KDIR="$d/linux" >"$logdir/build.log" 2>&1; then
	tail -n 20 "$logdir/build.log"
	ko "make module KDIR=$d/linux (see $logdir/build.log)"
else
	ok "srnic.ko built for the debug kernel $kver"
	# runs of this tier on different days hold for one revision of the
	# driver when this says the same (Kbuild, kernel/, include/)
	echo "debug: srnic's kernel code $(src_hash Kbuild kernel include)"
	# the debug kernel's watchdogs, given a starved TCG vCPU some slack
	export VMRUN_KERNEL_DIR=$d/root
	# through PVH this kernel exits right after SeaBIOS: boot its bzImage
	export VMRUN_PVH=0
	# servers take tens of seconds to listen there (lib.sh's ready)
	export SRNIC_READY_SECS=${SRNIC_READY_SECS:-90}
	# client/server timeouts of lib.sh's pair() and test_revoke's bounds
	# times 8
	export SRNIC_TIME_SCALE=${SRNIC_TIME_SCALE:-8}
	export VMRUN_APPEND="${VMRUN_APPEND:-} watchdog_thresh=30 rcupdate.rcu_cpu_stall_timeout=60 kasan_multi_shot"
	for n in "${tests[@]}"; do
		c=$logdir/$n.console
		s=$SECONDS
		# vmrun boots a guest that died before debug_run.sh started (so
		# before srnic was loaded) once more, and says so: this kernel
		# under TCG has died in early boot now and then (a KASAN report
		# in identify_boot_cpu after "tsc: Unable to calibrate against
		# PIT"); the first console is kept as $c.noboot.
		# the test's own "# vmrun-tcg:" line (vmrun reads debug_run.sh's)
		tcg=$(sed -n 's/^# vmrun-tcg: *\([a-z]*\).*/\1/p' "tests/vm/$n.sh" | head -n1)
		tally "$n" "$logdir/$n.log" tests/vm/vmrun --timeout "$tmo" \
			--tcg "${VMRUN_TCG:-${tcg:-multi}}" --keep-log "$c" \
			tests/vm/debug_run.sh "tests/vm/$n.sh"
		# said by debug_run.sh in the guest (vmrun's own line comes
		# before any boot, and loglevel=5 hides the kernel's banner)
		booted=0
		grep -aq "^debug_run: guest kernel $kver\$" "$c" && booted=1
		echo "debug: $n: $((SECONDS - s)) s"
		if [ "$booted" -eq 1 ]; then
			ok "$n: the guest booted $kver"
		else
			ko "$n: the guest booted $kver"
			# an empty console has no splat and proves nothing
			ko "$n: console has no kernel splat (no boot)"
			continue
		fi
		if grep -aE "$splat_re" "$c" | grep -avE '^(  \| |FAIL: )' | head -n 20 | grep -q .; then
			grep -aE -B2 -A12 "$splat_re" "$c" | head -n 60 | sed 's/^/  | /'
			ko "$n: console has no kernel splat"
		else
			ok "$n: console has no kernel splat"
		fi
	done
fi
echo "debug: ${#tests[@]} tests in $((SECONDS - t0)) s on $kver"

make -s module-clean >/dev/null 2>&1
make -s module >"$logdir/build-default.log" 2>&1 ||
	ko "make module for the default kernel (see $logdir/build-default.log)"

printf '%s\n' "${TALLY_LINES[@]}"
echo "$((TALLY_PASS + pass)) passed, $((TALLY_FAIL + fail)) failed"
[ "$((TALLY_FAIL + fail))" -eq 0 ]
