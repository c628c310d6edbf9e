#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Compat tier: srnic on kernels other than Debian 12's 6.1, in QEMU guests
# booting the kernel the module was built for (tests/vm/vmrun picks it from
# srnic.ko's vermagic), one boot per kernel for its list (tests/vm/suite.sh)
# but for the tests that ask for single-threaded TCG (test_dc_cnp.sh):
#   6.12 (bookworm-backports)  test_lifecycle.sh, test_verbs.sh,
#                              test_rdmacore56.sh (rdma-core 56 tools),
#                              test_native.sh, test_xrc.sh, test_odp.sh,
#                              test_dc.sh, test_dc_wire.sh, test_dc_loss.sh,
#                              test_dc_cnp.sh
#   newest Debian kernel       test_lifecycle.sh, test_verbs.sh,
#                              test_native.sh, test_odp.sh (mm's notifier
#                              and HMM APIs, the likeliest to move),
#                              test_vlan.sh (ib_core's VLAN GIDs),
#                              test_bond.sh (bonding's active slave); XRC and
#                              DC run on 6.12 and 6.1 only (~3.5 min that
#                              CI's 60-minute budget has no room for; they
#                              passed on 7.3.4 in CI until session 23,
#                              tests/README.md); SRNIC_COMPAT_NEWEST_ALL=1
#                              adds test_xrc, test_dc and the DC wire, loss
#                              and CNP tests
# A subset of the VM tier: device lifecycle and the stock tools are what a
# new kernel breaks first (ib_core, netdev, UDP tunnel APIs, uverbs ABI); the
# whole tier per kernel would add ~20 min to CI.
# plus the kernel/guest pairing: srnic.ko built for the default kernel boots
# 6.1 and loads although 6.12 is installed, and VMRUN_KVER naming another
# kernel than srnic.ko's fails in one line. Leaves srnic.ko built for the
# default kernel. Needs tools/kernels.sh setup (tools/setup.sh runs it).
# Each kernel's srnic.ko is the one the build tier built for it when that
# tier ran on the same sources (build/ko/, tests/kocache.sh), else built here.
#
#   tests/tier_compat.sh            everything above
#   SRNIC_COMPAT_ONLY=6.12 tests/tier_compat.sh    one kernel (6.12|newest)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. tests/tally.sh
. tests/kocache.sh
logdir=${SRNIC_TEST_LOGS:-$top/build/test-logs}/compat
mkdir -p "$logdir"

pass=0
fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
now() { date +%s; }

k612='' knew=''
while read -r k _; do
	case $k in
	6.1.*) ;;
	6.12.*) k612=$k ;;
	*) knew=$k ;;
	esac
done < <(tools/kernels.sh list)

# _run_one KVER NAME VMRUN-ARGS...: one guest, tallied as NAME; it must boot KVER
_run_one() {
	local k=$1 name=$2 log
	shift 2
	log=$logdir/$k-${name#*/}.log
	tally "$name" "$log" tests/vm/vmrun "$@"
	if grep -q "^vmrun: kernel $k " "$log"; then
		ok "$name: the guest booted $k"
	else
		ko "$name: the guest booted $k"
	fi
}

# run_on KVER NAME SCRIPT...: build srnic.ko for KVER, run the SCRIPTs in
# one guest (tests/vm/suite.sh: a boot per kernel, not per test), those
# that ask for single-threaded TCG ("# vmrun-tcg: single") each in its own;
# check each guest booted KVER.
run_on() {
	local k=$1 name=$2 t t0 multi=()
	shift 2
	if [ -z "$k" ]; then
		ko "$name kernel present (tools/kernels.sh setup)"
		return
	fi
	t0=$(now)
	# the build tier's module for $k if it kept one for these sources
	if kocache_get "$k"; then
		echo "compat: srnic.ko for $k from build/ko/ (the build tier's)"
	else
		make -s module-clean >/dev/null 2>&1
		if ! make -s module KVER="$k" >"$logdir/build-$k.log" 2>&1; then
			ko "$k: make module KVER=$k (see $logdir/build-$k.log)"
			return
		fi
	fi
	# userspace test helpers (rc_xfer.py, ...) need nothing built; the
	# stock tools are the host's rdma-core
	for t in "$@"; do
		if grep -q '^# vmrun-tcg: *single' "$t"; then
			_run_one "$k" "$name/$(basename "$t" .sh)" --timeout 900 "$t"
		else
			multi+=("$t")
		fi
	done
	if [ ${#multi[@]} -gt 0 ]; then
		_run_one "$k" "$name/suite" --timeout $((120 * ${#multi[@]} + 300)) \
			tests/vm/suite.sh "${multi[@]}"
		tally_suite_lines "$name/" "$logdir/$k-suite.log"
	fi
	echo "compat: $name ($k): $(( $(now) - t0 )) s"
}

# rdma-core 56 for test_rdmacore56.sh (cached; tier_vm builds it too)
tools/trixie-chroot.sh >"$logdir/trixie-chroot.log" 2>&1 ||
	echo "compat: tools/trixie-chroot.sh failed (see $logdir/trixie-chroot.log)"
# srnic's provider built for rdma-core 56 in it (test_rdmacore56's native part)
tools/trixie-chroot.sh provider >>"$logdir/trixie-chroot.log" 2>&1 ||
	echo "compat: tools/trixie-chroot.sh provider failed (see $logdir/trixie-chroot.log)"

only=${SRNIC_COMPAT_ONLY:-}
if [ -z "$only" ] || [ "$only" = 6.12 ]; then
	run_on "$k612" 6.12 tests/vm/test_lifecycle.sh tests/vm/test_verbs.sh \
		tests/vm/test_rdmacore56.sh tests/vm/test_native.sh \
		tests/vm/test_xrc.sh tests/vm/test_odp.sh tests/vm/test_dc.sh \
		tests/vm/test_dc_wire.sh tests/vm/test_dc_loss.sh \
		tests/vm/test_dc_cnp.sh
fi
if [ -z "$only" ] || [ "$only" = newest ]; then
	newest_more=()
	[ "${SRNIC_COMPAT_NEWEST_ALL:-0}" = 1 ] &&
		newest_more=(tests/vm/test_xrc.sh tests/vm/test_dc.sh
			tests/vm/test_dc_wire.sh tests/vm/test_dc_loss.sh
			tests/vm/test_dc_cnp.sh)
	run_on "$knew" newest tests/vm/test_lifecycle.sh tests/vm/test_verbs.sh \
		tests/vm/test_native.sh tests/vm/test_odp.sh tests/vm/test_vlan.sh \
		tests/vm/test_bond.sh "${newest_more[@]}"
fi

# Pairing: the default build boots its own kernel and loads there.
t0=$(now)
kdef=$(make -s --no-print-directory kernelrelease)
if kocache_get "$kdef" ||
   { make -s module-clean >/dev/null 2>&1; make -s module >"$logdir/build-default.log" 2>&1; }; then
	kdef=$(modinfo -F vermagic srnic.ko | cut -d' ' -f1)
	cat >"$logdir/pairing.sh" <<-'EOF'
		echo "guest kernel $(uname -r)"
		. tests/vm/lib.sh
		srnic_load || exit 1
		grep -qw '^srnic' /proc/modules && echo "srnic loaded"
	EOF
	tests/vm/vmrun --timeout 300 "$logdir/pairing.sh" >"$logdir/pairing.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && grep -q "^guest kernel $kdef\$" "$logdir/pairing.log" &&
	   grep -q '^srnic loaded$' "$logdir/pairing.log"; then
		ok "default build ($kdef): the guest boots $kdef and srnic.ko loads"
	else
		tail -n 20 "$logdir/pairing.log"
		ko "default build ($kdef): the guest boots $kdef and srnic.ko loads (vmrun exit $rc)"
	fi
	other=${k612:-$knew}
	if [ -n "$other" ]; then
		out=$(VMRUN_KVER=$other tests/vm/vmrun "$logdir/pairing.sh" 2>&1)
		rc=$?
		if [ "$rc" = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] &&
		   grep -q "srnic.ko is built for $kdef but VMRUN_KVER=$other" <<<"$out"; then
			ok "VMRUN_KVER=$other with srnic.ko for $kdef: one-line error, exit 2"
		else
			echo "$out" | tail -n 5
			ko "VMRUN_KVER=$other with srnic.ko for $kdef: one-line error, exit 2 (exit $rc)"
		fi
	fi
else
	ko "make module (default kernel; see $logdir/build-default.log)"
fi
echo "compat: pairing: $(( $(now) - t0 )) s"

printf '%s\n' "${TALLY_LINES[@]}"
pass=$((pass + TALLY_PASS))
fail=$((fail + TALLY_FAIL))
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
