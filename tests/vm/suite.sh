#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# suite.sh TEST...: several VM test scripts in one guest boot, one after
# another, each as vmrun would run it alone (its own bash, the repo as its
# directory, its exit status and "N passed, N failed" line its result):
#
#   tests/vm/vmrun --timeout 1800 tests/vm/suite.sh tests/vm/test_a.sh tests/vm/test_b.sh
#
# tests/tier_compat.sh runs a kernel's list this way: a boot (5-8 s under
# TCG) per list, not per test. Between two tests what a failed one may have
# left goes: its processes, network namespaces, veth and dummy links, RDMA
# links, the srnic, srnic_hwsim and rdma_rxe modules; and the kernel log is
# cleared (kept in the console output), so that each test's "no kernel
# warnings" judges its own run. Prints "suite: NAME N passed, N failed
# (S s)" after each (a test with no result line, or a non-zero exit with no
# failure counted, counts as one failure) and the totals last; exits 1 on
# any failure.
set -u
cd "$(dirname "$0")/../.." || exit 1

# suite_reset: the guest as a test found it
suite_reset() {
	local p l
	# what the test started and left running (bg_start puts each in its
	# own session, so by name)
	pkill -KILL -x 'ib_.*|ibv_.*|rping|ucmatose|udaddy|rdma_server|rdma_client|bpftrace|tcpdump|python3|iperf3|srnic_.*' \
		2>/dev/null
	sleep 0.2
	ip -all netns delete 2>/dev/null
	for l in $(rdma link show 2>/dev/null | awk '{ print $2 }' | cut -d/ -f1 | sort -u); do
		rdma link delete "$l" 2>/dev/null
	done
	for l in $(ip -o link show type veth 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1) \
		 $(ip -o link show type dummy 2>/dev/null | awk -F': ' '{ print $2 }'); do
		ip link delete "$l" 2>/dev/null
	done
	for p in srnic_hwsim srnic rdma_rxe; do
		grep -q "^$p " /proc/modules && rmmod "$p" 2>/dev/null
	done
	dmesg -C
}

pass=0
fail=0
for t; do
	n=$(basename "$t" .sh)
	t0=$SECONDS
	echo "=== suite: $n"
	out=$(mktemp)
	bash "$t" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	line=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	rm -f "$out"
	if [ -z "$line" ]; then
		p=0 f=1
		echo "FAIL: $n: no result line (exit $rc)"
	else
		read -r p _ f _ <<<"$line"
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1
			echo "FAIL: $n: exited $rc with no failure counted"
		fi
	fi
	echo "suite: $n $p passed, $f failed ($((SECONDS - t0)) s)"
	pass=$((pass + p))
	fail=$((fail + f))
	suite_reset
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
