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
#
# A test still running after SUITE_TEST_TIMEOUT seconds (default 300; the
# longest of tier_vm's shared list takes about 60) counts as one failure:
# what it and the kernel wait on is printed first (its processes with their
# wait channels and kernel stacks, the tasks in D state: sysrq w), then its
# process group is killed and the next test runs. One hung test costs the
# suite minutes, not vmrun's whole timeout, and its log says where it hung.
set -u
cd "$(dirname "$0")/../.." || exit 1

# suite_bounded CMD...: CMD, given 60 s; one stuck in the kernel (rmmod
# or rdma link delete waiting for a reference that never goes) is left
# behind with a FAIL line and counted, and the suite goes on
suite_bounded() {
	local pid
	"$@" 2>/dev/null &
	pid=$!
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
		sleep 0.2
	done
	echo "FAIL: after $n: '$*' still running after 60 s:"
	sed 's/^/  /' "/proc/$pid/stack" 2>/dev/null
	fail=$((fail + 1))
	return 1
}

# suite_reset: the guest as a test found it
suite_reset() {
	local p l
	# what the test started and left running (bg_start puts each in its
	# own session, so by name)
	pkill -KILL -x 'ib_.*|ibv_.*|rping|ucmatose|udaddy|rdma_server|rdma_client|bpftrace|tcpdump|python3|iperf3|srnic_.*' \
		2>/dev/null
	sleep 0.2
	suite_bounded ip -all netns delete
	for l in $(rdma link show 2>/dev/null | awk '{ print $2 }' | cut -d/ -f1 | sort -u); do
		suite_bounded rdma link delete "$l"
	done
	for l in $(ip -o link show type veth 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1) \
		 $(ip -o link show type dummy 2>/dev/null | awk -F': ' '{ print $2 }'); do
		ip link delete "$l" 2>/dev/null
	done
	for p in srnic_hwsim srnic rdma_rxe; do
		grep -q "^$p " /proc/modules && suite_bounded rmmod "$p"
	done
	dmesg -C
}

# suite_hung_report PGID: what the test's process group and the kernel's
# blocked tasks are waiting on
suite_hung_report() {
	local p
	echo "--- processes (pid ppid pgid state wchan elapsed command)"
	ps -eo pid,ppid,pgid,stat,wchan:28,etimes,args --sort=pid |
		awk -v g="$1" 'NR == 1 || $3 == g || $4 ~ /^D/ || $7 ~ /^(ib_|ibv_|rping|rdma|python3|srnic)/' |
		cut -c1-200
	for p in $(ps -eo pid=,pgid=,stat= | awk -v g="$1" '$2 == g || $3 ~ /^D/ { print $1 }'); do
		[ -r "/proc/$p/stack" ] || continue
		echo "--- $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-120)"
		sed 's/^/  /' "/proc/$p/stack" 2>/dev/null
	done
	echo "--- blocked tasks (sysrq w)"
	dmesg -C
	echo w >/proc/sysrq-trigger
	sleep 1
	dmesg | head -n 150
	echo "--- srnic's QPs"
	timeout 10 rdma resource show qp 2>&1 | head -n 40
}

limit=${SUITE_TEST_TIMEOUT:-300}
pass=0
fail=0
for t; do
	n=$(basename "$t" .sh)
	t0=$SECONDS
	echo "=== suite: $n"
	out=$(mktemp)
	# the test in a session of its own (setsid execs in place: $! is its
	# bash and its process group), its output streamed as it comes
	setsid bash "$t" >"$out" 2>&1 </dev/null &
	tpid=$!
	tail -n +1 -f --pid="$tpid" "$out" &
	tailpid=$!
	hung=0
	while kill -0 "$tpid" 2>/dev/null; do
		if [ $((SECONDS - t0)) -ge "$limit" ]; then
			hung=1
			sleep 1
			echo "FAIL: $n: still running after $limit s (SUITE_TEST_TIMEOUT): killed"
			suite_hung_report "$tpid"
			kill -KILL -- "-$tpid" 2>/dev/null
			break
		fi
		sleep 0.2
	done
	# a task stuck in the kernel (D state) does not die of SIGKILL:
	# waiting for it would hang the suite after all
	for _ in $(seq 50); do
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$tpid" 2>/dev/null; then
		echo "FAIL: $n: its bash (pid $tpid) outlived SIGKILL by 10 s: not waited for"
		kill "$tailpid" 2>/dev/null
		rc=137
	else
		wait "$tpid"
		rc=$?
		wait "$tailpid"
	fi
	line=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
	if [ "$hung" -eq 1 ]; then
		# what it counted before it hung, and the hang
		p=$(grep -ac '^PASS' "$out")
		f=$(($(grep -ac '^FAIL' "$out") + 1))
	elif [ -z "$line" ]; then
		p=0 f=1
		echo "FAIL: $n: no result line (exit $rc)"
	else
		read -r p _ f _ <<<"$line"
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1
			echo "FAIL: $n: exited $rc with no failure counted"
		fi
	fi
	rm -f "$out"
	echo "suite: $n $p passed, $f failed ($((SECONDS - t0)) s)"
	pass=$((pass + p))
	fail=$((fail + f))
	suite_reset
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
