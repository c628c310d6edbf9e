# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# incast_lib.sh: incast on the leaf-spine of tests/vm/fabric_lib.sh, for
# tests/bench/incast_guest.sh (tools/fabric.sh --incast) and
# tests/vm/test_incast.sh. Source it after tests/vm/lib.sh and
# fabric_lib.sh, with srnic.ko loaded.
#
#   SPINES spines x 4 leaves x 3 hosts, every link RATE Mbit/s with RED
#   marking CE from ECN_KB KiB, buffers of INC_BUF_KB KiB (default 150:
#   dcqcn_lib.sh's) (fabric_lib.sh); the receiver is fbh1x3
#   (device fb1x3, 10.1.3.2), the 8 senders fbh<j>x<k>, j = 1..4, k = 1..2
#   (flow (j - 1) * 2 + k): 2 on the receiver's leaf, 6 across the spines.
#   Every host's own egress (its NIC's port) is shaped to RATE too, without
#   marking, in a deep FIFO: a NIC sends no faster than its port.
#
#   fbh1x1 fbh1x2 --- fbl1 --[receiver link]--> fbh1x3 (receiver)
#                      ^^ the spines' links down to leaf 1 (two-bottleneck)
#   fbh2x1 fbh2x2 --- fbl2 ==== fbs1 .. fbsS
#   ...  fbl3, fbl4
#
#   The 6 remote senders' traffic to leaf 1 is pinned to the spines in
#   turn (remote sender m = 0..5 over spine m % SPINES + 1, by a source
#   rule on its leaf), not left to ECMP: the multipath hash's key is
#   random per boot, and in one CI run it put all 6 flows on one spine -
#   6 x rpg_min_rate (1 Mb/s) above that spine's 5 Mbit/s link in the
#   two-bottleneck case, the other spine idle, the flows held at the
#   minimum rate and dropping (README.md "Incast on the fabric").
#
#   inc_up SPINES RATE ECN_KB     build it, srnic devices on the 9 hosts
#   inc_spine_rate MBIT           shape every spine's link down to leaf 1
#                                 to MBIT (0: back to RATE): with
#                                 SPINES x MBIT below what the 6 remote
#                                 flows would get of the receiver link,
#                                 both are bottlenecks
#   inc_devs                      the 9 hosts' srnic devices
#   inc_dcqcn on|off              roce_np/enable, roce_rp/enable, all hosts;
#                                 on: also $SRNIC_INC_RP_KNOBS (below)
#   inc_run SECS                  8 concurrent ib_send_bw (64 KiB, 1 QP,
#                                 sleeping on CQ events: 8 polling clients
#                                 would starve the 2 vCPUs' softirq work)
#                                 senders -> receiver, SECS seconds from
#                                 when all 8 have sent, then stopped;
#                                 samples every INC_SAMPLE s into
#                                 $INC_OUT/rate.dat: "t r1 .. r8 e s g"
#                                 (MiB/s: each sender's rate into its leaf,
#                                 the receiver link's egress, the spines'
#                                 links into leaf 1 together, goodput: e x
#                                 the share of the receiver's packets that
#                                 were new, not out of sequence (go-back-N
#                                 throws those away), not duplicates). Over
#                                 the window in which all 8 are under way
#                                 (INC_WINDOW samples, those in which one
#                                 starts or ends left out): INC_BW[n] (flow
#                                 n's mean rate), INC_JAIN (their Jain's
#                                 index), INC_RX_STEADY / INC_SP_STEADY /
#                                 INC_GOODPUT (medians of e, s, g),
#                                 INC_EFF (INC_GOODPUT / INC_RX_STEADY); over
#                                 the run: INC_FAILED (flows that never
#                                 sent or whose client ended before the
#                                 stop), INC_DROPS (every
#                                 shaped fabric port), INC_RX_DROPS
#                                 (receiver link), INC_SP_DROPS (spine links
#                                 into leaf 1), INC_MARKS (CE, every port),
#                                 INC_RETX (senders' retransmits),
#                                 INC_CNP_SENT (receiver), INC_CNP_HANDLED
#                                 (senders), INC_KERNEL and INC_IDLE (% of
#                                 the guest's CPU time in the kernel and
#                                 idle during the SECS)
#   inc_report LABEL              one line with all of the above
#   inc_spine N                   the spine remote flow N (3..8) is
#                                 pinned to
set -u

INC_OUT=${INC_OUT:-$PWD/build/incast}
INC_SAMPLE=${INC_SAMPLE:-0.5}
INC_N=8
# the QPs' local ACK timeout (4.096 us x 2^N): 17, 537 ms, above a full
# 150 KiB buffer's drain at 5 Mbit/s (240 ms); perftest's 14 (67 ms) is
# below it, and spurious timeouts resend whole windows
INC_QP_TIMEOUT=${INC_QP_TIMEOUT:-17}
declare -a INC_BW=()
declare -A INC_PID=()

# the hosts: senders 1..8, then the receiver
_inc_host() { # flow number -> "j k"
	echo $((($1 - 1) / 2 + 1)) $((($1 - 1) % 2 + 1))
}

inc_up() {
	local spines=$1 rate=$2 ecn=$3 n j k ns
	mkdir -p "$INC_OUT" || return 1
	# a switch port's buffer: 150 KiB (RED's default of 12 x ECN_KB, 60
	# KiB at 5, overflowed at every flow's start: most of the drops)
	# shellcheck disable=SC2034 # fabric_lib.sh reads it
	FAB_BUF_KB=${INC_BUF_KB:-150}
	fab_up "$spines" 4 3 "$rate" "$ecn" || return 1
	_inc_pin || return 1
	# the hosts' NIC ports: RATE, a FIFO deep enough that a sender's
	# own port never drops (it holds what the QPs have in flight)
	if [ "$rate" -gt 0 ]; then
		for n in $(seq 9); do
			read -r j k <<<"$(_inc_host "$n")"
			[ "$n" = 9 ] && j=1 k=3
			ns=fbh${j}x$k
			tc -n "$ns" qdisc add dev eth0 root handle 1: htb default 2 &&
				tc -n "$ns" class add dev eth0 parent 1: classid 1:1 \
					htb rate "${rate}mbit" ceil "${rate}mbit" burst 64k \
					cburst 64k quantum 1514 &&
				tc -n "$ns" class add dev eth0 parent 1: classid 1:2 \
					htb rate 10000mbit quantum 1514 &&
				tc -n "$ns" filter add dev eth0 parent 1: protocol ip u32 \
					match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:1 &&
				tc -n "$ns" qdisc add dev eth0 parent 1:1 handle 10: pfifo limit 10000 ||
				{ echo "incast: shaping $ns failed" >&2; return 1; }
		done
	fi
	# a sleeper in every router: its /proc/PID/net/dev without a fork
	for ns in $(seq -f 'fbl%g' 4) $(seq -f 'fbs%g' "$spines"); do
		bg_start "INC_PID[$ns]" ip netns exec "$ns" sleep infinity
	done
	for n in $(seq 9); do
		read -r j k <<<"$(_inc_host "$n")"
		[ "$n" = 9 ] && j=1 k=3
		ip netns exec "fbh${j}x$k" rdma link add "fb${j}x$k" type srnic netdev eth0 ||
			{ echo "incast: rdma link add on fbh${j}x$k failed" >&2; return 1; }
	done
	for n in $(seq 9); do
		read -r j k <<<"$(_inc_host "$n")"
		[ "$n" = 9 ] && j=1 k=3
		settle roce_gid_index "fb${j}x$k" "10.$j.$k.2" >/dev/null ||
			{ echo "incast: no RoCEv2 GID on fb${j}x$k" >&2; return 1; }
	done
	# every route works before the first flow
	for n in $(seq 8); do
		read -r j k <<<"$(_inc_host "$n")"
		ip netns exec "fbh${j}x$k" busybox ping -c1 -W3 10.1.3.2 >/dev/null ||
			{ echo "incast: fbh${j}x$k cannot reach the receiver" >&2; return 1; }
	done
}

inc_spine() { echo $((($1 - 3) % FAB_SPINES + 1)); }

# _inc_pin: remote flow n (3..8) reaches leaf 1 over inc_spine n: a rule
# for its sender's address on its leaf, a table of one route (197 + n)
_inc_pin() {
	local n j k i
	for n in $(seq 3 8); do
		read -r j k <<<"$(_inc_host "$n")"
		i=$(inc_spine "$n")
		ip -n "fbl$j" route add 10.1.0.0/16 via "172.$((16 + i)).$j.2" \
			dev "tos$i" table $((197 + n)) &&
			ip -n "fbl$j" rule add from "10.$j.$k.2" to 10.1.0.0/16 \
				table $((197 + n)) ||
			{ echo "incast: pinning fbh${j}x$k to spine $i failed" >&2; return 1; }
	done
}

inc_spine_rate() {
	local i r=$1
	[ "$r" -gt 0 ] || r=$FAB_RATE
	for i in $(seq "$FAB_SPINES"); do
		tc -n "fbs$i" class change dev tol1 parent 1: classid 1:1 htb \
			rate "${r}mbit" ceil "${r}mbit" burst 64k cburst 64k quantum 1514 ||
			return 1
	done
}

# the srnic devices of the 9 hosts: the receiver's leaf, then the senders'
inc_devs() {
	echo $(seq -f 'fb1x%g' 3) $(seq -f 'fb2x%g' 2) $(seq -f 'fb3x%g' 2) $(seq -f 'fb4x%g' 2)
}

# DCQCN scaled to this fabric, as an operator scales a NIC's defaults to
# the links: roce_rp KNOB=VALUE pairs inc_dcqcn on writes on every host
# ("none": srnic's defaults). srnic's increase every 10 ms lets 8 flows add
# 8 x rpg_ai_rate (1 Mb/s) = 40 % of a 20 Mbit/s link per 10 ms while a CNP
# takes a queue-inflated round trip (up to 60 ms) to come back: the sum
# overshoots, the 150 KiB buffers overflow and go-back-N throws away what
# followed each drop (about half of what the receiver gets). An increase
# every 50 ms, additive from the first period after a cut (rpg_threshold
# 1, mlx5's default: a flow cut to rpg_min_rate climbs back without
# waiting out 5 periods of fast recovery, which cannot raise a rate the cut
# clamped its target to) - README.md "Incast on the fabric" has the sets
# measured with tests/bench/incast_knobs.sh.
SRNIC_INC_RP_KNOBS=${SRNIC_INC_RP_KNOBS:-rpg_time_reset=50000 rpg_threshold=1}
inc_dcqcn() {
	local v=0 d kv
	[ "$1" = on ] && v=1
	for d in $(inc_devs); do
		echo "$v" >"/sys/class/infiniband/$d/roce_np/enable" || return 1
		echo "$v" >"/sys/class/infiniband/$d/roce_rp/enable" || return 1
		if [ "$v" = 0 ] || [ "$SRNIC_INC_RP_KNOBS" = none ]; then
			continue
		fi
		for kv in $SRNIC_INC_RP_KNOBS; do
			echo "${kv#*=}" >"/sys/class/infiniband/$d/roce_rp/${kv%%=*}" ||
				return 1
		done
	done
}

# _inc_qstat NS DEV: "dropped marked" of the shaped port's leaf qdisc
_inc_qstat() {
	tc -n "$1" -s qdisc show dev "$2" | awk '
		/^qdisc (red|pfifo) 10:/ { q = 1; next }
		/^qdisc/ { q = 0 }
		q && /dropped/ { d = $0; sub(/.*dropped /, "", d); sub(/,.*/, "", d) }
		q && /marked/ { for (i = 1; i < NF; i++) if ($i == "marked") m = $(i + 1) }
		END { print d + 0, m + 0 }'
}

# _inc_ports: "NS DEV" of every shaped fabric port (not the hosts' NICs)
_inc_ports() {
	local i j k
	for j in 1 2 3 4; do
		for i in $(seq "$FAB_SPINES"); do
			echo "fbl$j tos$i"
			echo "fbs$i tol$j"
		done
		for k in 1 2 3; do echo "fbl$j toh$k"; done
	done
}

# _inc_qstats: "all_drops all_marks rx_drops sp_drops"
_inc_qstats() {
	local ns dev d m ad=0 am=0 rd=0 sd=0
	[ "$FAB_RATE" -gt 0 ] || { echo 0 0 0 0; return; }
	while read -r ns dev; do
		read -r d m <<<"$(_inc_qstat "$ns" "$dev")"
		ad=$((ad + d)) am=$((am + m))
		[ "$ns $dev" = "fbl1 toh3" ] && rd=$d
		[ "${ns#fbs}" != "$ns" ] && [ "$dev" = tol1 ] && sd=$((sd + d))
	done < <(_inc_ports)
	echo "$ad $am $rd $sd"
}

# _inc_bytes: "b1 .. b8 e s": bytes each sender's leaf received from it,
# bytes the receiver link and the spines' links into leaf 1 sent; from
# /proc/PID/net/dev of the sleepers (no fork: the guest is busy)
_inc_bytes() {
	local name rx rest f ns j k n out="" s=0 e=0
	local -A by=()
	local -a fields
	for ns in "${!INC_PID[@]}"; do
		while read -r name rx rest; do
			read -r -a fields <<<"$rest"
			by[$ns.${name%:}]="$rx ${fields[7]:-0}"
		done <"/proc/${INC_PID[$ns]}/net/dev"
	done
	for n in $(seq "$INC_N"); do
		read -r j k <<<"$(_inc_host "$n")"
		read -r f _ <<<"${by[fbl$j.toh$k]:-0 0}"
		out+="$f "
	done
	read -r _ e <<<"${by[fbl1.toh3]:-0 0}"
	for ns in "${!INC_PID[@]}"; do
		[ "${ns#fbs}" != "$ns" ] || continue
		read -r _ f <<<"${by[$ns.tol1]:-0 0}"
		s=$((s + f))
	done
	# the receiver's packets: all, out of sequence, duplicates
	local c=/sys/class/infiniband/fb1x3/ports/1/hw_counters r o d
	read -r r <"$c/rcvd_pkts"
	read -r o <"$c/out_of_seq_request"
	read -r d <"$c/duplicate_request"
	echo "$out$e $s $r $o $d"
}

# _inc_sampler STOPFILE: "t r1 .. r8 e s" every INC_SAMPLE s until STOPFILE
_inc_sampler() {
	local stop=$1 t0 now tprev line i r pk new
	local -a prev cur
	t0=${EPOCHREALTIME/[.,]/}
	tprev=$t0
	read -r -a prev <<<"$(_inc_bytes)"
	while :; do
		sleep "$INC_SAMPLE"
		now=${EPOCHREALTIME/[.,]/}
		read -r -a cur <<<"$(_inc_bytes)"
		printf -v line '%d.%02d' $(((now - t0) / 1000000)) $(((now - t0) / 10000 % 100))
		for ((i = 0; i < INC_N + 3; i++)); do
			if [ "$i" -lt $((INC_N + 2)) ]; then
				r=$((cur[i] - prev[i]))
			else
				# goodput: the receiver link's bytes x the share of
				# the receiver's packets that were new
				pk=$((cur[i] - prev[i]))
				new=$((pk - (cur[i + 1] - prev[i + 1]) - (cur[i + 2] - prev[i + 2])))
				r=0
				[ "$pk" -le 0 ] || r=$(((cur[INC_N] - prev[INC_N]) * new / pk))
			fi
			r=$((r * 100000000 / 1048576 / (now - tprev)))
			printf -v line '%s %d.%02d' "$line" $((r / 100)) $((r % 100))
		done
		echo "$line"
		prev=("${cur[@]}")
		tprev=$now
		[ -e "$stop" ] && break
	done
}

# _inc_window FILE: the samples of FILE in which all flows are under way
# (lib.sh rate_window)
_inc_window() {
	local first last
	read -r first last <<<"$(rate_window "$1" "$INC_N")"
	[ -n "$first" ] || return 0
	sed -n "${first},${last}p" "$1"
}

# _inc_median FILE COL
_inc_median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print 0 }'
}

# _inc_cpu: "kernel idle total" jiffies of the whole guest (kernel: system,
# irq and softirq time, where the forwarding, the qdiscs and srnic run;
# perftest's clients poll their CQs in user space, which softirqs preempt)
_inc_cpu() {
	awk '$1 == "cpu" { t = 0; for (i = 2; i <= NF; i++) t += $i
		print $4 + $7 + $8, $5 + $6, t; exit }' /proc/stat
}

_inc_gone() { ! kill -0 "$1" 2>/dev/null; }

# _inc_all_sent FILE: every flow has sent in some sample of FILE
_inc_all_sent() {
	awk -v n="$INC_N" '{ for (i = 2; i <= n + 1; i++) if ($i >= 0.01) f[i] = 1 }
		END { for (i = 2; i <= n + 1; i++) if (!f[i]) exit 1 }' "$1"
}

inc_run() {
	local secs=$1 n j k port gd gs spid q0 q1 c0 c1 devs="" pids=()
	gd=$(roce_gid_index fb1x3 10.1.3.2)
	for n in $(seq "$INC_N"); do
		read -r j k <<<"$(_inc_host "$n")"
		devs+="fb${j}x$k "
	done
	q0=$(_inc_qstats)
	# shellcheck disable=SC2034 # snap's devices (lib.sh)
	SNAP_DEVS="fb1x3 $devs"
	snap INC_C0
	# more messages than any run sends: the flows run until stopped
	for n in $(seq "$INC_N"); do
		port=$((18800 + n))
		bg_start "pids[$n]" ip netns exec fbh1x3 ib_send_bw -d fb1x3 -x "$gd" \
			-p "$port" -s 65536 -n 1000000 -e -F >"$INC_OUT/srv$n.log" 2>&1
	done
	for n in $(seq "$INC_N"); do
		ready tcp_listening $((18800 + n)) fbh1x3 ||
			echo "incast: server $n not listening" >&2
	done
	rm -f "$INC_OUT/sampler.stop"
	_inc_sampler "$INC_OUT/sampler.stop" >"$INC_OUT/rate.dat" &
	spid=$!
	# its samples on time, whatever the flows' processes do
	chrt -f -p 10 "$spid" >/dev/null 2>&1
	for n in $(seq "$INC_N"); do
		read -r j k <<<"$(_inc_host "$n")"
		gs=$(roce_gid_index "fb${j}x$k" "10.$j.$k.2")
		bg_start "pids[$((INC_N + n))]" ip netns exec "fbh${j}x$k" ib_send_bw \
			-d "fb${j}x$k" -x "$gs" -p $((18800 + n)) -s 65536 -n 1000000 \
			-e -F -u "$INC_QP_TIMEOUT" 10.1.3.2 >"$INC_OUT/cli$n.log" 2>&1
	done
	settle -t 60 _inc_all_sent "$INC_OUT/rate.dat" ||
		echo "incast: not every flow sent within 60 s" >&2
	c0=$(_inc_cpu)
	sleep "$secs"
	c1=$(_inc_cpu)
	: >"$INC_OUT/sampler.stop"
	wait "$spid"
	rm -f "$INC_OUT/sampler.stop"
	# a flow failed when its client ended before the stop, or never sent
	INC_FAILED=0
	for n in $(seq "$INC_N"); do
		if ! kill -0 "${pids[INC_N + n]}" 2>/dev/null ||
			! awk -v c=$((n + 1)) '$c >= 0.01 { ok = 1 } END { exit !ok }' "$INC_OUT/rate.dat"; then
			INC_FAILED=$((INC_FAILED + 1))
		fi
	done
	for n in $(seq $((2 * INC_N))); do
		bg_stop "${pids[n]}"
	done
	q1=$(_inc_qstats)
	read -r INC_KERNEL INC_IDLE <<<"$(awk -v a="$c0" -v b="$c1" 'BEGIN {
		split(a, x, " "); split(b, y, " "); t = y[3] - x[3]
		if (t > 0) printf "%.0f %.0f", 100 * (y[1] - x[1]) / t, 100 * (y[2] - x[2]) / t
		else print "0 0" }')"
	read -r INC_DROPS INC_MARKS INC_RX_DROPS INC_SP_DROPS <<<"$(awk -v a="$q0" -v b="$q1" \
		'BEGIN { n = split(a, x, " "); split(b, y, " "); for (i = 1; i <= n; i++) printf "%d ", y[i] - x[i] }')"
	_inc_window "$INC_OUT/rate.dat" >"$INC_OUT/window.dat"
	INC_WINDOW=$(wc -l <"$INC_OUT/window.dat")
	INC_RX_STEADY=$(_inc_median "$INC_OUT/window.dat" $((INC_N + 2)))
	INC_SP_STEADY=$(_inc_median "$INC_OUT/window.dat" $((INC_N + 3)))
	INC_GOODPUT=$(_inc_median "$INC_OUT/window.dat" $((INC_N + 4)))
	INC_EFF=$(awk -v g="$INC_GOODPUT" -v r="$INC_RX_STEADY" 'BEGIN { printf "%.3f", (r > 0 ? g / r : 0) }')
	# each flow's mean rate over the window, and their Jain's index
	INC_BW=()
	for n in $(seq "$INC_N"); do
		INC_BW[n]=$(awk -v c=$((n + 1)) '{ s += $c } END { printf "%.2f", NR ? s / NR : 0 }' "$INC_OUT/window.dat")
	done
	INC_JAIN=$(printf '%s\n' "${INC_BW[@]}" | awk '{ s += $1; q += $1 * $1; n++ }
		END { if (q > 0) printf "%.3f", s * s / (n * q); else print 0 }')
	INC_RETX=$(SNAP_DEVS=$devs delta_sum INC_C0 retransmits)
	INC_CNP_HANDLED=$(SNAP_DEVS=$devs delta_sum INC_C0 rp_cnp_handled)
	INC_CNP_SENT=$(delta INC_C0 fb1x3 np_cnp_sent)
}

# inc_mibs MBIT: MiB/s
inc_mibs() { awk -v r="$1" 'BEGIN { printf "%.2f", r * 1e6 / 8 / 1048576 }'; }

inc_report() {
	local n flows=""
	for n in $(seq "$INC_N"); do
		flows+=" ${INC_BW[n]}"
	done
	printf '%s: goodput %s MiB/s (receiver link %s Mbit/s = %s MiB/s; its egress %s MiB/s while all %s flows sent, %s samples, %s of the packets new), MiB/s per flow%s, spine links into leaf 1 %s MiB/s, Jain %s, drops %s (receiver link %s, spine links %s), CE marks %s, retransmits %s, CNPs sent %s handled %s, failed flows %s, guest CPU kernel %s %% idle %s %%\n' \
		"$1" "$INC_GOODPUT" "$FAB_RATE" "$(inc_mibs "$FAB_RATE")" "$INC_RX_STEADY" \
		"$INC_N" "$INC_WINDOW" "$INC_EFF" "$flows" "$INC_SP_STEADY" "$INC_JAIN" "$INC_DROPS" "$INC_RX_DROPS" \
		"$INC_SP_DROPS" "$INC_MARKS" "$INC_RETX" "$INC_CNP_SENT" \
		"$INC_CNP_HANDLED" "$INC_FAILED" "$INC_KERNEL" "$INC_IDLE"
}
