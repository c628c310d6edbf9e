#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench_guest.sh: perftest benchmark of one RDMA stack; runs inside a vmrun
# guest, started by tools/bench.sh (one VM per stack).
#
#   tests/vm/vmrun tests/bench/bench_guest.sh rxe|srnic [quick]
#
#     dev0 (rxe0|srnic0) on vethA 10.99.0.1 <== veth ==> vethB 10.99.0.2 on dev1
#     server: dev0, client: dev1; policy routing so frames cross the veth
#
# perftest "ib" mode, GID index 1 (::ffff:10.99.0.x, RoCE v2):
#   ib_write_bw, ib_read_bw, ib_send_bw at 64, 4096, 65536 B (-D 2 -F)
#   ib_write_lat, ib_send_lat at 8 B (-n 1000 -F)
#   qp_churn: tests/vm/qp_churn.py, 2000 QP create/destroy pairs on dev0
#     (t_avg_us = microseconds per pair, datagram and modify included)
#   quick: 65536 B only, -D 1, -n 300, 500 QP pairs.
# Every client/server runs under timeout; the server is started by PID and
# killed. A run whose latency calibration fails (perftest prints
# "Correlation coefficient" and inf/nan figures when the host is busy) is
# retried up to 3 times.
#
# Results go to the console as one tab-separated line per run (tools/bench.sh
# collects them):
#   BENCH-RESULT stack test size bw_avg_mib_s msg_rate_mpps t_min_us
#                t_typical_us t_avg_us p99_us veth_pkts attempts status
# with "-" for figures a test does not have, status ok|fail|not_yet.
# srnic cannot move data yet: without $SRNIC_KO (default $REPO/srnic.ko), or
# after its first failed run, the remaining srnic runs are reported not_yet.

. tests/vm/lib.sh

stack=${1:?usage: bench_guest.sh rxe|srnic [quick]}
quick=${2:-}
LOG=/tmp/bench
mkdir -p "$LOG"

if [ "$quick" = quick ]; then
	sizes=(65536) dur=1 iters=300
else
	sizes=(64 4096 65536) dur=2 iters=1000
fi
bw_tests=(ib_write_bw ib_read_bw ib_send_bw)
lat_tests=(ib_write_lat ib_send_lat)
port=18515

emit() {
	local IFS=$'\t'
	echo "BENCH-RESULT${IFS}$stack${IFS}$*"
}

# all_not_yet WHY: report every remaining run as not_yet and stop.
not_yet() {
	local t s
	echo "bench: $stack: not yet: $*"
	for t in "${bw_tests[@]}"; do
		for s in "${sizes[@]}"; do
			[ -n "${done_runs[$t/$s]:-}" ] || emit "$t" "$s" - - - - - - - 0 not_yet
		done
	done
	for t in "${lat_tests[@]}"; do
		[ -n "${done_runs[$t/8]:-}" ] || emit "$t" 8 - - - - - - - 0 not_yet
	done
	exit 0
}
declare -A done_runs=()

setup_stack() {
	veth_pair_setup || { echo "bench: veth_pair_setup failed"; exit 1; }
	case $stack in
	rxe)
		rxe_load || { echo "bench: cannot load rdma_rxe"; exit 1; }
		rdma link add rxe0 type rxe netdev vethA &&
			rdma link add rxe1 type rxe netdev vethB || exit 1
		dev0=rxe0 dev1=rxe1
		;;
	srnic)
		srnic_load || not_yet "srnic_load $KO failed (build the module first)"
		rdma link add srnic0 type srnic netdev vethA &&
			rdma link add srnic1 type srnic netdev vethB ||
			not_yet "rdma link add ... type srnic failed"
		dev0=srnic0 dev1=srnic1
		;;
	*)
		echo "bench: unknown stack $stack"
		exit 2
		;;
	esac
	echo "bench: $stack: $dev0 on vethA (server), $dev1 on vethB (client)"
}

# run_once TEST SIZE ARGS...: one server/client run; output in $LOG/cli.log.
run_once() {
	local test=$1 size=$2 srv rc i
	shift 2
	port=$((port + 1))
	bg_start srv timeout 60 "$test" -d "$dev0" -x 1 -s "$size" -F -p "$port" "$@" \
		>"$LOG/srv.log" 2>&1
	if ! wait_tcp_listen "$port" 20; then
		echo "server did not listen on $port" >"$LOG/cli.log"
		bg_stop "$srv"
		return 1
	fi
	timeout 60 "$test" -d "$dev1" -x 1 -s "$size" -F -p "$port" "$@" 10.99.0.1 \
		>"$LOG/cli.log" 2>&1
	rc=$?
	for i in $(seq 30); do
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.1
	done
	bg_stop "$srv"
	return "$rc"
}

# latency runs only: perftest's rdtsc-vs-gettimeofday calibration failed
calibration_failed() {
	grep -Eqi 'correlation coefficient|\binf\b|\bnan\b' "$LOG/cli.log"
}

# bench TEST SIZE KIND: run with retries, emit the result line.
bench() {
	local test=$1 size=$2 kind=$3 attempt rc p0 p1 f status
	local bw=- mpps=- tmin=- ttyp=- tavg=- p99=- line
	for attempt in 1 2 3; do
		p0=$(veth_pkts vethA)
		if [ "$kind" = bw ]; then
			run_once "$test" "$size" -D "$dur"
		else
			run_once "$test" "$size" -n "$iters"
		fi
		rc=$?
		p1=$(veth_pkts vethA)
		[ "$kind" = lat ] && calibration_failed || break
		echo "bench: $test $size: latency calibration failed (attempt $attempt):" \
			"$(grep -m1 -Ei 'correlation coefficient|\binf\b|\bnan\b' "$LOG/cli.log")"
	done
	# perftest's result line starts with the message size
	if [ "$kind" = bw ]; then
		# #bytes #iterations BW-peak BW-average MsgRate
		line=$(awk -v s="$size" '$1 == s && NF >= 5 { print $4, $5; exit }' "$LOG/cli.log")
		[ -z "$line" ] || read -r bw mpps <<<"$line"
	else
		# #bytes #iter t_min t_max t_typical t_avg t_stdev p99 p99.9
		line=$(awk -v s="$size" '$1 == s && NF >= 9 { print $3, $5, $6, $8; exit }' "$LOG/cli.log")
		[ -z "$line" ] || read -r tmin ttyp tavg p99 <<<"$line"
	fi
	status=ok
	[ -n "$line" ] && [ "$rc" = 0 ] || status=fail
	for f in "$bw" "$mpps" "$tmin" "$ttyp" "$tavg" "$p99"; do
		[ "$f" = - ] || [[ $f =~ ^[0-9]+(\.[0-9]+)?$ ]] || status=fail
	done
	done_runs[$test/$size]=1
	emit "$test" "$size" "$bw" "$mpps" "$tmin" "$ttyp" "$tavg" "$p99" \
		"$((p1 - p0))" "$attempt" "$status"
	if [ "$status" = ok ]; then
		printf 'bench: %-12s %6s B  %s  (%s veth pkts, attempt %s)\n' "$test" "$size" \
			"$([ "$kind" = bw ] && echo "$bw MiB/s $mpps Mpps" || echo "t_typical $ttyp us")" \
			"$((p1 - p0))" "$attempt"
		return 0
	fi
	echo "bench: $test $size: FAILED (exit $rc); client and server output:"
	tail -n 15 "$LOG/cli.log" | sed 's/^/  cli| /'
	tail -n 5 "$LOG/srv.log" | sed 's/^/  srv| /'
	[ "$stack" = srnic ] && not_yet "$test $size failed"
	return 1
}

echo "bench: guest: kernel $(uname -r), $(nproc) vCPUs, perftest $(dpkg-query -W -f='${Version}' perftest 2>/dev/null), rdma-core $(dpkg-query -W -f='${Version}' rdma-core 2>/dev/null)"
setup_stack
for t in "${bw_tests[@]}"; do
	for s in "${sizes[@]}"; do
		bench "$t" "$s" bw
	done
done
for t in "${lat_tests[@]}"; do
	bench "$t" 8 lat
done
# QP create/destroy: tests/vm/qp_churn.py, N pairs on dev0; t_avg = us/pair
churn=2000
[ "$quick" = quick ] && churn=500
out=$(with_timeout 600 /usr/bin/python3 tests/vm/qp_churn.py "$dev0" 10.99.0.1 "$churn" 2>&1)
rc=$?
ms=$(sed -n 's/^info: .* (\([0-9.]*\) ms each)$/\1/p' <<<"$out")
if [ "$rc" = 0 ] && [ -n "$ms" ]; then
	emit qp_churn "$churn" - - - - "$(awk -v m="$ms" 'BEGIN { printf "%.0f", m * 1000 }')" - - 1 ok
	echo "bench: qp_churn $churn create/destroy pairs: $ms ms each"
else
	emit qp_churn "$churn" - - - - - - - 1 fail
	echo "bench: qp_churn failed (exit $rc):"
	tail -n 10 <<<"$out" | sed 's/^/  | /'
fi
if [ "$stack" = rxe ]; then
	echo "bench: rxe1 counters: $(rdma -d statistic show link rxe1/1 2>/dev/null | tr -s ' \n' ' ')"
fi
exit 0
