#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench_guest.sh: perftest benchmark of one RDMA stack; runs inside a vmrun
# guest, started by tools/bench.sh (one VM per stack and round).
#
#   tests/vm/vmrun tests/bench/bench_guest.sh rxe|srnic [quick|full] [MTU [STEER [BATCH]]]
#
#     dev0 (rxe0|srnic0) on vethA 10.99.0.1 <== veth ==> vethB 10.99.0.2 on dev1
#     server: dev0, client: dev1; policy routing so frames cross the veth;
#     MTU (default 1500) is the netdev MTU of both veths (9000: IB MTU 4096)
#     STEER (default 0) is srnic's receive steering (sysfs srnic/rx_steer),
#     BATCH (default 0) its trains (sysfs srnic/tx_batch)
#
# First a single-thread memcpy rate: glibc memcpy() called through Python's
# ctypes, 64 MiB source to 64 MiB destination (both faulted in first, far
# larger than the caches), repeated for at least 1 s; MiB/s.
# Then perftest "ib" mode, GID index 1 (::ffff:10.99.0.x, RoCE v2):
#   full:  ib_{write,read,send}_bw at 4096, 65536, 1048576 B and
#          ib_send_bw at 64 B (the message rate) (-D 2 -F);
#          ib_{write,send,read}_lat at 8 B (-n 1000 -F);
#          qp_churn: tests/vm/qp_churn.py, 2000 QP create/destroy pairs on
#          dev0 (t_avg_us = microseconds per pair, datagram and modify included)
#   quick: ib_write_bw 65536 B, ib_send_bw 64 B (-D 1), ib_write_lat 8 B
#          (-n 300); no qp_churn.
# CPU cost of each bandwidth run: while the client runs, /proc/stat (all
# CPUs) and vethA's byte counters are sampled every 0.1 s; the window is the
# intervals where traffic flows (at least 5% of the busiest interval's
# bytes) from the first to the last, less those two; cpu_cores = non-idle
# ticks / all ticks in the window x CPUs (perftest busy-polls: about one core
# of it is polling),
# cpu_s_per_gib = cpu_cores / (bandwidth in GiB/s), memcpy_frac = bandwidth /
# the memcpy rate. "-" if the window is shorter than 0.3 s or its veth bytes
# (both directions, headers included) fall below half the payload bandwidth
# perftest reports (the samples missed the transfer; with 1 MiB messages the
# window and perftest's own period differ enough that the wire rate can fall
# a little below the payload rate); the console line says what the window
# was.
# Every client/server runs under timeout; the server is started by PID and
# killed. A run whose latency calibration fails (perftest prints
# "Correlation coefficient" and inf/nan figures when the host is busy) is
# retried up to 3 times.
#
# Results go to the console as one tab-separated line per run (tools/bench.sh
# collects them):
#   BENCH-RESULT stack test size bw_avg_mib_s msg_rate_mpps t_min_us
#                t_typical_us t_avg_us p99_us cpu_cores cpu_s_per_gib
#                memcpy_frac veth_pkts attempts status
# with "-" for figures a test does not have, status ok|fail|not_yet (test
# "memcpy": its rate in bw_avg_mib_s), and "BENCH-META key value" lines
# (netdev_mtu, ib_mtu, memcpy_mib_s).
# Without $SRNIC_KO (default $REPO/srnic.ko), or after srnic's first failed
# run, the remaining srnic runs are reported not_yet.

. tests/vm/lib.sh

stack=${1:?usage: bench_guest.sh rxe|srnic [quick|full] [MTU]}
mode=${2:-full}
mtu=${3:-1500}
steer=${4:-0}		# srnic: sysfs srnic/rx_steer of both devices
batch=${5:-0}		# srnic: sysfs srnic/tx_batch of both devices
spread=${6:-1}		# srnic: sysfs srnic/rx_spread of both devices
LOG=/tmp/bench
mkdir -p "$LOG"

# runs: "TEST SIZE KIND"
if [ "$mode" = quick ]; then
	runs=("ib_write_bw 65536 bw" "ib_send_bw 64 bw" "ib_write_lat 8 lat")
	dur=1 iters=300 churn=0
else
	runs=()
	for t in ib_write_bw ib_read_bw ib_send_bw; do
		for s in 4096 65536 1048576; do
			runs+=("$t $s bw")
		done
	done
	runs+=("ib_send_bw 64 bw")
	for t in ib_write_lat ib_send_lat ib_read_lat; do
		runs+=("$t 8 lat")
	done
	dur=2 iters=1000 churn=2000
fi
port=18515
memcpy_mib_s=

emit() {
	local IFS=$'\t'
	echo "BENCH-RESULT${IFS}$stack${IFS}$*"
}
meta() { printf 'BENCH-META\t%s\t%s\n' "$1" "$2"; }

# not_yet WHY: report every remaining run as not_yet and stop.
not_yet() {
	local r t s _k
	echo "bench: $stack: not yet: $*"
	for r in "${runs[@]}"; do
		read -r t s _k <<<"$r"
		[ -n "${done_runs[$t/$s]:-}" ] || emit "$t" "$s" - - - - - - - - - - 0 not_yet
	done
	exit 0
}
declare -A done_runs=()

setup_stack() {
	veth_pair_setup || { echo "bench: veth_pair_setup failed"; exit 1; }
	if ! ip link set dev vethA mtu "$mtu" || ! ip link set dev vethB mtu "$mtu"; then
		echo "bench: cannot set MTU $mtu on the veths"
		exit 1
	fi
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
		srnic_knob_set rx_steer "$steer" srnic0 srnic1 ||
			not_yet "cannot set srnic/rx_steer to $steer"
		meta rx_steer "$steer"
		srnic_knob_set tx_batch "$batch" srnic0 srnic1 ||
			not_yet "cannot set srnic/tx_batch to $batch"
		meta tx_batch "$batch"
		srnic_knob_set rx_spread "$spread" srnic0 srnic1 ||
			not_yet "cannot set srnic/rx_spread to $spread"
		meta rx_spread "$spread"
		;;
	*)
		echo "bench: unknown stack $stack"
		exit 2
		;;
	esac
	local ib_mtu
	ib_mtu=$(ibv_devinfo -d "$dev1" | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
	meta netdev_mtu "$mtu"
	meta ib_mtu "${ib_mtu:-unknown}"
	echo "bench: $stack: $dev0 on vethA (server), $dev1 on vethB (client), netdev MTU $mtu, IB MTU ${ib_mtu:-unknown}"
}

# memcpy_rate: single-thread glibc memcpy of 64 MiB, MiB/s (see the header).
memcpy_rate() {
	/usr/bin/python3 - <<-'EOF'
	import ctypes, time
	n = 64 << 20
	libc = ctypes.CDLL("libc.so.6")
	libc.memcpy.restype = ctypes.c_void_p
	libc.memcpy.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
	libc.memcmp.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
	src = ctypes.create_string_buffer(n)
	dst = ctypes.create_string_buffer(n)
	ctypes.memset(src, 0x5a, n)
	libc.memcpy(dst, src, n)
	reps, t0 = 0, time.perf_counter()
	while reps < 4 or time.perf_counter() - t0 < 1.0:
	    libc.memcpy(dst, src, n)
	    reps += 1
	secs = time.perf_counter() - t0
	assert libc.memcmp(dst, src, n) == 0
	print("%.1f" % (reps * n / secs / 2**20))
	EOF
}

# sample_while PID FILE: until PID exits, every 0.1 s one line "busy total
# bytes": non-idle and all jiffies of all CPUs, vethA tx+rx bytes. Builtins
# only (a fork costs ~0.1 s under TCG and would show in the figures).
sample_while() {
	local pid=$1 f=$2 _c u n s i w q sq st _r tx rx
	: >"$f"
	while kill -0 "$pid" 2>/dev/null; do
		read -r _c u n s i w q sq st _r </proc/stat
		read -r tx </sys/class/net/vethA/statistics/tx_bytes
		read -r rx </sys/class/net/vethA/statistics/rx_bytes
		echo "$((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st)) $((tx + rx))" >>"$f"
		read -rt 0.1 -u "$sleep_fd" _r
	done
}
exec {sleep_fd}<> <(:)

# cpu_window FILE BW: "cpu_cores cpu_s_per_gib note" of the traffic window
# of the samples in FILE (see the header); "- - note" without one. The note
# says what the window was (no spaces).
cpu_window() {
	awk -v bw="$2" -v ncpu="$(nproc)" -v hz="$(getconf CLK_TCK)" '
	{ b[NR] = $1; t[NR] = $2; y[NR] = $3 }
	END {
		for (i = 2; i <= NR; i++) if (y[i] - y[i - 1] > max) max = y[i] - y[i - 1]
		# traffic: intervals with at least 5% of the busiest one (not
		# the TCP exchange of perftest before and after)
		for (i = 2; i <= NR; i++) if (max > 0 && y[i] - y[i - 1] >= max / 20) { if (!fa) fa = i; la = i }
		# intervals fa+1 .. la-1 (the partial first and last left out)
		# span samples fa .. la-1
		if (!fa || la - 1 <= fa) { printf "- - no_window(%d_samples,%d_active)\n", NR, fa ? la - fa + 1 : 0; exit }
		ticks = t[la - 1] - t[fa]; secs = ticks / ncpu / hz
		wire = secs > 0 ? (y[la - 1] - y[fa]) / secs / 1048576 : 0
		note = sprintf("window_%.2fs_of_%d_samples,wire_%.2fMiB/s", secs, NR, wire)
		if (secs < 0.3 || bw + 0 <= 0 || wire < bw / 2) { print "- -", note ",too_short_or_below_bw/2"; exit }
		cores = (b[la - 1] - b[fa]) / ticks * ncpu
		printf "%.3f %.3f %s\n", cores, cores / (bw / 1024), note
	}' "$1"
}

# run_once TEST SIZE KIND ARGS...: one server/client run; output in
# $LOG/cli.log; bandwidth runs sample the CPU into $LOG/cpu.samples.
run_once() {
	local test=$1 size=$2 kind=$3 srv cli rc i
	shift 3
	port=$((port + 1))
	bg_start srv timeout 60 "$test" -d "$dev0" -x 1 -s "$size" -F -p "$port" "$@" \
		>"$LOG/srv.log" 2>&1
	if ! wait_tcp_listen "$port" 20; then
		echo "server did not listen on $port" >"$LOG/cli.log"
		bg_stop "$srv"
		return 1
	fi
	if [ "$kind" = bw ]; then
		bg_start cli timeout 60 "$test" -d "$dev1" -x 1 -s "$size" -F -p "$port" "$@" \
			10.99.0.1 >"$LOG/cli.log" 2>&1
		sample_while "$cli" "$LOG/cpu.samples"
		bg_stop "$cli"
		rc=$?
	else
		timeout 60 "$test" -d "$dev1" -x 1 -s "$size" -F -p "$port" "$@" 10.99.0.1 \
			>"$LOG/cli.log" 2>&1
		rc=$?
	fi
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

# bandwidth runs only: perftest printed 0 MB/s for SIZE although PKTS
# packets crossed the veth pair (and its iteration count is right): its
# clock calibration failed. perftest times with rdtsc and converts with the
# MHz that get_cpu_mhz() returns; under a busy TCG vCPU the regression of
# rdtsc against gettimeofday gives r^2 < 0.9 ("Correlation coefficient
# r^2: ... < 0.9" on stderr), get_cpu_mhz() returns 0, and every rate it
# prints is 0 - the latency runs' calibration_failed(), in a bandwidth run.
# Seen about once in 20 runs of -D 1; not a measurement
bw_misreported() {
	[ "$2" -gt 1000 ] &&
		awk -v s="$1" '$1 == s && NF >= 5 { z = ($4 + 0 == 0) } END { exit !z }' "$LOG/cli.log"
}

# bench TEST SIZE KIND: run with retries, emit the result line.
bench() {
	local test=$1 size=$2 kind=$3 attempt rc p0 p1 f status
	local bw=- mpps=- tmin=- ttyp=- tavg=- p99=- cores=- cpu_gib=- frac=- line note=
	for attempt in 1 2 3; do
		p0=$(veth_pkts vethA)
		if [ "$kind" = bw ]; then
			run_once "$test" "$size" bw -D "$dur"
		else
			run_once "$test" "$size" lat -n "$iters"
		fi
		rc=$?
		p1=$(veth_pkts vethA)
		if [ "$kind" = bw ]; then
			bw_misreported "$size" $((p1 - p0)) || break
			echo "bench: $test $size: perftest printed 0 MB/s while $((p1 - p0))" \
				"packets crossed the veth pair (attempt $attempt; calibration:" \
				"$(grep -m1 -Ei 'correlation coefficient|timestamp frequency' "$LOG/cli.log" || echo none printed)); its output:"
			grep -v '^ *$' "$LOG/cli.log" | tail -n 6 | sed 's/^/  cli| /'
			continue
		fi
		calibration_failed || break
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
	if [ "$kind" = bw ] && [ "$status" = ok ]; then
		read -r cores cpu_gib note < <(cpu_window "$LOG/cpu.samples" "$bw")
		[ -z "$memcpy_mib_s" ] ||
			frac=$(awk -v b="$bw" -v m="$memcpy_mib_s" 'BEGIN { printf "%.4f", b / m }')
	fi
	done_runs[$test/$size]=1
	emit "$test" "$size" "$bw" "$mpps" "$tmin" "$ttyp" "$tavg" "$p99" \
		"$cores" "$cpu_gib" "$frac" "$((p1 - p0))" "$attempt" "$status"
	if [ "$status" = ok ]; then
		printf 'bench: %-12s %7s B  %s  (%s veth pkts, attempt %s)\n' "$test" "$size" \
			"$([ "$kind" = bw ] && echo "$bw MiB/s $mpps Mpps, $cores cores ($note), $cpu_gib CPU-s/GiB, $frac x memcpy" ||
				echo "t_typical $ttyp us")" \
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
if memcpy_mib_s=$(memcpy_rate) && [[ $memcpy_mib_s =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
	emit memcpy $((64 << 20)) "$memcpy_mib_s" - - - - - - - - 0 1 ok
	meta memcpy_mib_s "$memcpy_mib_s"
	echo "bench: memcpy (glibc, 64 MiB, one thread): $memcpy_mib_s MiB/s"
else
	echo "bench: memcpy rate failed: $memcpy_mib_s"
	memcpy_mib_s=
	emit memcpy $((64 << 20)) - - - - - - - - - 0 1 fail
fi
setup_stack
for r in "${runs[@]}"; do
	read -r t s k <<<"$r"
	bench "$t" "$s" "$k"
done
# QP create/destroy: tests/vm/qp_churn.py, N pairs on dev0; t_avg = us/pair
if [ "$churn" -gt 0 ]; then
	out=$(with_timeout 600 /usr/bin/python3 tests/vm/qp_churn.py "$dev0" 10.99.0.1 "$churn" 2>&1)
	rc=$?
	ms=$(sed -n 's/^info: .* (\([0-9.]*\) ms each)$/\1/p' <<<"$out")
	if [ "$rc" = 0 ] && [ -n "$ms" ]; then
		emit qp_churn "$churn" - - - - "$(awk -v m="$ms" 'BEGIN { printf "%.0f", m * 1000 }')" - - - - - 1 ok
		echo "bench: qp_churn $churn create/destroy pairs: $ms ms each"
	else
		emit qp_churn "$churn" - - - - - - - - - - 1 fail
		echo "bench: qp_churn failed (exit $rc):"
		tail -n 10 <<<"$out" | sed 's/^/  | /'
	fi
fi
if [ "$stack" = rxe ]; then
	echo "bench: rxe1 counters: $(rdma -d statistic show link rxe1/1 2>/dev/null | tr -s ' \n' ' ')"
fi
exit 0
