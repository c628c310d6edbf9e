#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build test_hwnic's stand-in module for one kernel, once per kernel and
# source, into build/hwsim/<kernel>-<hash>/ of the checkout, and print the
# .ko's path. tests/tier_vm.sh runs it on the host before the guests boot (a
# few seconds; compiling inside a TCG guest takes 1-2 min); test_hwnic.sh
# runs it in the guest, where it only builds if the host did not. kbuild
# cannot take a path with spaces (M=): it builds in a directory under /tmp.
#
#   tests/vm/hwsim/build.sh [KVER]      (default: the running kernel)
set -euo pipefail
cd "$(dirname "$0")/../../.."
kver=${1:-$(uname -r)}
kdir=/lib/modules/$kver/build
hw=$PWD/build/hwsim/$kver-$(cat tests/vm/hwsim/srnic_hwsim.c tests/vm/hwsim/Kbuild |
	sha256sum | cut -c1-12)
if [ ! -f "$hw/srnic_hwsim.ko" ]; then
	[ -f "$kdir/Makefile" ] || { echo "hwsim/build.sh: no kernel build dir $kdir" >&2; exit 1; }
	b=$(mktemp -d /tmp/srnic-hwsim.XXXXXX)
	trap 'rm -rf "$b"' EXIT
	cp tests/vm/hwsim/srnic_hwsim.c tests/vm/hwsim/Kbuild "$b/"
	make -s -C "$kdir" M="$b" modules >&2
	mkdir -p "$hw"
	cp "$b/srnic_hwsim.ko" "$hw/"
fi
echo "$hw/srnic_hwsim.ko"
