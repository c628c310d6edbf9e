#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/fabric.sh's fabric, inside the VM (tests/vm/vmrun
# tests/vm/test_fabric.sh): tests/bench/fabric_guest.sh with 2 spines, 2
# leaves and 2 hosts per leaf, links at 200 Mbit/s marking CE from 32 KiB,
# 4 RC QPs per flow for 3 s:
#   - it exits 0: every one of the 4 cross-leaf flows moved data
#   - flows.tsv has 4 flows, links.tsv every one of the 4 fabric links, and
#     both spines carried RoCEv2 bytes (16 QPs hashed over 2 spines)
#   - nothing it created is left: no fb* namespace, no srnic device
#   - tools/fabric.sh refuses bad options with one line and exit 2 before
#     it boots anything: --spines 9, --hosts 0, --rate x, --qps, --bogus
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

OUT=$(mktemp -d)
dmesg -C
for bad in "--spines 9" "--hosts 0" "--rate x" "--qps" "--bogus"; do
	# shellcheck disable=SC2086 # the option and its value
	err=$(tools/fabric.sh $bad 2>&1)
	rc=$?
	t_check "tools/fabric.sh $bad: exit 2 with one line ($err)" \
		test "$rc" = 2 -a "$(printf '%s\n' "$err" | wc -l)" = 1
done

with_timeout 600 tests/bench/fabric_guest.sh 2 2 2 200 32 3 4 "$OUT" >"$OUT/guest.log" 2>&1
rc=$?
grep -E '^(fabric|  )' "$OUT/guest.log"
t_eq "fabric_guest.sh 2 spines x 2 leaves x 2 hosts: every flow moved data (exit 0)" "$rc" 0
t_eq "4 flows reported" "$(wc -l <"$OUT/flows.tsv")" 4
t_eq "4 fabric links reported" "$(wc -l <"$OUT/links.tsv")" 4
for s in 1 2; do
	b=$(awk -v s="$s" '$2 == s { n += $3 + $4 } END { print n + 0 }' "$OUT/links.tsv")
	t_check "spine $s carried traffic ($b bytes)" test "$b" -gt 1000000
done
t_eq "no fb* namespace left" "$(ip netns list | grep -c '^fb')" 0
# (a device goes with its netdev, from a work item: settle)
fb_devices_gone() { ! rdma link show 2>/dev/null | grep -q 'link fb'; }
t_check "no srnic device left" settle -t 20 fb_devices_gone
t_kernel_clean "no kernel warnings"
rmmod srnic 2>/dev/null
rm -rf "$OUT"
t_summary
