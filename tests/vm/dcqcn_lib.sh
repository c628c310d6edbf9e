# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# dcqcn_lib.sh: the congested topology of the DCQCN test and benchmark, for
# scripts running as root inside a vmrun guest, after tests/vm/lib.sh and
# with srnic.ko loaded.
#
#   nsS1: srnicS1 on vethS1 10.1.1.2 --.
#   nsS2: srnicS2 on vethS2 10.1.2.2 ---+--> nsR (forwards IPv4) --> vethRD
#   ...   (up to 4 senders)           --'     htb RATE + red ecn        |
#                                                                        v
#                                               nsD: srnicD on vethD 10.1.100.2
#
# vethRD, the router's egress to the receiver, is the bottleneck: an htb
# class at RATE with a RED child that marks ECT packets CE (ECN) between
# DQ_RED_MIN and DQ_RED_MAX bytes of average queue and drops past its limit.
#
#   dq_setup N RATE_MBIT      build it (idempotent per boot: call once)
#   dq_dcqcn on|off           roce_np/enable and roce_rp/enable, all devices
#   dq_run SECS SIZE          N concurrent ib_write_bw flows Si -> D for SECS
#                             seconds (messages of SIZE bytes); samples each
#                             sender's rate at the router and the
#                             bottleneck's egress every DQ_SAMPLE s into
#                             $DQ_OUT/rate.dat ("t r1 .. rN e d x": MiB/s,
#                             then the qdisc's drops and the senders'
#                             retransmits in the sample).
#                             Sets DQ_BW[i] (MB/s of flow i per perftest,
#                             0 if it failed), DQ_GOODPUT, DQ_JAIN, DQ_TXRATE
#                             (mean sender rate at the router, MB/s),
#                             DQ_EGRESS (MiB/s out of the bottleneck, from
#                             before the flows' setup to after their end),
#                             DQ_EGRESS_STEADY (the same while the flows
#                             send: median of the samples),
#                             DQ_DROPS, DQ_MARKS (qdisc), DQ_RETX,
#                             DQ_STEADY_SECS, DQ_STEADY_DROPS,
#                             DQ_STEADY_RETX (DCQCN's steady state:
#                             dq_steady_sums),
#                             DQ_CNP_SENT, DQ_CNP_HANDLED (srnic counters),
#                             and DQ_FAILED (flows whose perftest failed).
#   dq_ipv6                   add IPv6 (nodad): fd10:I::2 on sender I,
#                             fd10:100::2 on the receiver, forwarding in nsR,
#                             RoCEv2/IPv6 into the same htb + RED class;
#                             waits until their RoCEv2 GIDs exist
#   dq_report LABEL           one line with all of the above
set -u

DQ_N=0
DQ_RATE=0
DQ_OUT=${DQ_OUT:-$PWD/build/dcqcn}
DQ_SAMPLE=${DQ_SAMPLE:-0.5}
DQ_RED_MIN=${DQ_RED_MIN:-5000}
DQ_RED_MAX=${DQ_RED_MAX:-15000}
DQ_RED_LIMIT=${DQ_RED_LIMIT:-150000}
DQ_AVPKT=1100			# IB MTU 1024 + RoCEv2/IPv4 headers
declare -a DQ_BW=()

dq_setup() {
	local n=$1 rate=$2 i
	DQ_N=$n
	DQ_RATE=$rate
	mkdir -p "$DQ_OUT"
	for ns in nsR nsD $(for i in $(seq "$n"); do echo "nsS$i"; done); do
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up
	done
	ip netns exec nsR sysctl -qw net.ipv4.ip_forward=1 || return 1
	bg_start DQ_RPID ip netns exec nsR sleep infinity
	ip -n nsR link add vethRD type veth peer name vethD netns nsD || return 1
	ip -n nsR addr add 10.1.100.1/24 dev vethRD
	ip -n nsR link set vethRD up
	ip -n nsD addr add 10.1.100.2/24 dev vethD
	ip -n nsD link set vethD up
	ip -n nsD route add default via 10.1.100.1
	for i in $(seq "$n"); do
		ip -n nsR link add "vethR$i" type veth peer name "vethS$i" \
			netns "nsS$i" || return 1
		ip -n nsR addr add "10.1.$i.1/24" dev "vethR$i"
		ip -n nsR link set "vethR$i" up
		ip -n "nsS$i" addr add "10.1.$i.2/24" dev "vethS$i"
		ip -n "nsS$i" link set "vethS$i" up
		ip -n "nsS$i" route add default via "10.1.$i.1"
	done
	# the bottleneck: RATE, RED marking CE between min and max
	# (RoCEv2 only: perftest's TCP side channel takes the fast class 1:2)
	ip netns exec nsR tc qdisc add dev vethRD root handle 1: htb default 2 &&
	ip netns exec nsR tc class add dev vethRD parent 1: classid 1:1 \
		htb rate "${rate}mbit" ceil "${rate}mbit" burst 64k cburst 64k \
		quantum 1514 &&
	ip netns exec nsR tc class add dev vethRD parent 1: classid 1:2 \
		htb rate 1000mbit quantum 1514 &&
	ip netns exec nsR tc filter add dev vethRD parent 1: protocol ip \
		u32 match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:1 &&
	ip netns exec nsR tc qdisc add dev vethRD parent 1:1 handle 10: red \
		limit "$DQ_RED_LIMIT" min "$DQ_RED_MIN" max "$DQ_RED_MAX" \
		avpkt "$DQ_AVPKT" burst $(((2 * DQ_RED_MIN + DQ_RED_MAX) / (3 * DQ_AVPKT))) \
		probability 0.1 bandwidth "${rate}mbit" ecn || return 1
	ip netns exec nsD rdma link add srnicD type srnic netdev vethD || return 1
	for i in $(seq "$n"); do
		ip netns exec "nsS$i" rdma link add "srnicS$i" type srnic \
			netdev "vethS$i" || return 1
	done
	settle roce_gid_index srnicD 10.1.100.2 >/dev/null || return 1
	for i in $(seq "$n"); do
		settle roce_gid_index "srnicS$i" "10.1.$i.2" >/dev/null || return 1
	done
	ip netns exec nsS1 busybox ping -c1 -W3 10.1.100.2 >/dev/null
}

dq_ipv6() {
	local i
	ip netns exec nsR sysctl -qw net.ipv6.conf.all.forwarding=1 || return 1
	ip -n nsR addr add fd10:100::1/64 dev vethRD nodad || return 1
	ip -n nsD addr add fd10:100::2/64 dev vethD nodad || return 1
	ip -n nsD -6 route add default via fd10:100::1 || return 1
	for i in $(seq "$DQ_N"); do
		ip -n nsR addr add "fd10:$i::1/64" dev "vethR$i" nodad || return 1
		ip -n "nsS$i" addr add "fd10:$i::2/64" dev "vethS$i" nodad || return 1
		ip -n "nsS$i" -6 route add default via "fd10:$i::1" || return 1
	done
	ip netns exec nsR tc filter add dev vethRD parent 1: protocol ipv6 \
		u32 match ip6 protocol 17 0xff match ip6 dport 4791 0xffff \
		flowid 1:1 || return 1
	settle roce_gid_index srnicD fd10:100::2 >/dev/null || return 1
	for i in $(seq "$DQ_N"); do
		settle roce_gid_index "srnicS$i" "fd10:$i::2" >/dev/null || return 1
	done
}

dq_dcqcn() {
	local v=0 d
	[ "$1" = on ] && v=1
	for d in srnicD $(for i in $(seq "$DQ_N"); do echo "srnicS$i"; done); do
		echo "$v" >"/sys/class/infiniband/$d/roce_np/enable" || return 1
		echo "$v" >"/sys/class/infiniband/$d/roce_rp/enable" || return 1
	done
}

# "sent" (bytes), "dropped" or "marked" (packets) of the RED qdisc on the
# bottleneck, 0 if tc shows none; one exec (the sampler calls it): bash
# parses tc's "qdisc red ... Sent B bytes P pkt (dropped D, ...) ...
# marked M early E pdrop P other O"
dq_qdisc_stat() {
	local out re
	out=$(tc -n nsR -s qdisc show dev vethRD)
	case $1 in
	sent) re='Sent ([0-9]+) bytes' ;;
	dropped) re='dropped ([0-9]+)' ;;
	marked) re='marked ([0-9]+)' ;;
	*) return 1 ;;
	esac
	if [[ $out == *"qdisc red"* ]] && [[ ${out#*qdisc red} =~ $re ]]; then
		echo "${BASH_REMATCH[1]}"
	else
		echo 0
	fi
}

# rx_bytes of each router port facing a sender and tx_bytes of its port
# towards the receiver, one line "b1 .. bN e", read from /proc/PID/net/dev
# of a process in nsR: no fork (the guest is busy).
dq_router_bytes() {
	local name rx _rest i out="" fields
	local -A by=() tx=()
	while read -r name rx _rest; do
		by[${name%:}]=$rx
		read -r -a fields <<<"$_rest"
		tx[${name%:}]=${fields[7]:-0}
	done <"/proc/$DQ_RPID/net/dev"
	for ((i = 1; i <= DQ_N; i++)); do
		out+="${by[vethR$i]:-0} "
	done
	echo "$out${tx[vethRD]:-0}"
}

# The senders' retransmits together (read: no fork)
dq_senders_retx() {
	local i v sum=0
	for ((i = 1; i <= DQ_N; i++)); do
		read -r v </sys/class/infiniband/srnicS$i/ports/1/hw_counters/retransmits
		sum=$((sum + v))
	done
	echo "$sum"
}

# Print "t r1 .. rN e d x" (s; MiB/s of each sender at the router; MiB/s
# out of the bottleneck port; the RED qdisc's drops and the senders'
# retransmits since the sample before) every DQ_SAMPLE s until the file $1
# exists.
dq_sampler() {
	local stop=$1
	local t0 now tprev prev cur i line r drops dprev retx xprev
	t0=${EPOCHREALTIME/[.,]/}
	tprev=$t0
	read -r -a prev <<<"$(dq_router_bytes)"
	dprev=$(dq_qdisc_stat dropped)
	xprev=$(dq_senders_retx)
	while :; do
		sleep "$DQ_SAMPLE"
		now=${EPOCHREALTIME/[.,]/}
		read -r -a cur <<<"$(dq_router_bytes)"
		# bash arithmetic only: s with 2 decimals, MiB/s with 2
		printf -v line '%d.%02d' $(((now - t0) / 1000000)) \
			$(((now - t0) / 10000 % 100))
		for ((i = 0; i <= DQ_N; i++)); do
			r=$(((cur[i] - prev[i]) * 100000000 / 1048576 / (now - tprev)))
			printf -v line '%s %d.%02d' "$line" $((r / 100)) $((r % 100))
		done
		drops=$(dq_qdisc_stat dropped)
		retx=$(dq_senders_retx)
		echo "$line $((drops - dprev)) $((retx - xprev))"
		dprev=$drops xprev=$retx
		prev=("${cur[@]}")
		tprev=$now
		[ -e "$stop" ] && break
	done
}

# The bottleneck's steady egress (MiB/s) in a rate.dat: the median of the
# "e" column over the samples in which the flows send, without the first
# and last of them (the flows start and stop within those).
dq_steady_egress() {
	awk -v n="$DQ_N" '{ s = 0; for (i = 2; i <= n + 1; i++) s += $i }
		s > 0.05 { print $(n + 2) }' "$1" | sed '1d;$d' | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print 0 }'
}

# DCQCN's steady state in a rate.dat: the samples that begin at least
# DQ_START s after the one in which the last flow started began (the
# start: a QP begins at line rate and slows down as the first CNPs come
# back; its retransmissions follow a QP timeout later), up to the one
# before the first flow's last (it ends within that one), and what they add
# up to: "SECS DROPS RETX" (0 0 0 when there are none).
DQ_START=${DQ_START:-2}
dq_steady_sums() {
	local first last
	read -r first last <<<"$(rate_window "$1" "$DQ_N" "$DQ_START")"
	[ -n "$first" ] || { echo "0 0 0"; return; }
	awk -v n="$DQ_N" -v lo="$first" -v hi="$last" '{ t[NR] = $1 }
		NR >= lo && NR <= hi { secs += t[NR] - t[NR - 1]; dr += $(n + 3); rx += $(n + 4) }
		END { printf "%.2f %d %d\n", secs, dr, rx }' "$1"
}

dq_run() {
	local secs=$1 size=$2 i pids=() spid gd gs port rc b0 b1 t0 t1
	local drops0 marks0 sent0 senders
	gd=$(roce_gid_index srnicD 10.1.100.2)
	drops0=$(dq_qdisc_stat dropped)
	marks0=$(dq_qdisc_stat marked)
	senders=$(printf 'srnicS%s ' $(seq "$DQ_N"))
	# shellcheck disable=SC2034 # snap's devices (lib.sh)
	SNAP_DEVS="srnicD $senders"
	snap DQ_C0
	for i in $(seq "$DQ_N"); do
		port=$((18600 + i))
		bg_start "pids[$i]" timeout --kill-after=5 $((secs + 60)) \
			ip netns exec nsD ib_write_bw -d srnicD -x "$gd" -p "$port" \
			-s "$size" -D "$secs" -F >"$DQ_OUT/srv$i.log" 2>&1
	done
	for i in $(seq "$DQ_N"); do
		settle ip netns exec nsD grep -qi ":$(printf '%04X' $((18600 + i))) 00000000:0000 0A" \
			/proc/net/tcp
	done
	b0=$(dq_router_bytes)
	sent0=$(dq_qdisc_stat sent)
	t0=${EPOCHREALTIME/[.,]/}
	for i in $(seq "$DQ_N"); do
		gs=$(roce_gid_index "srnicS$i" "10.1.$i.2")
		bg_start "pids[$((DQ_N + i))]" timeout --kill-after=5 $((secs + 50)) \
			ip netns exec "nsS$i" ib_write_bw -d "srnicS$i" -x "$gs" \
			-p $((18600 + i)) -s "$size" -D "$secs" -F 10.1.100.2 \
			>"$DQ_OUT/cli$i.log" 2>&1
	done
	rm -f "$DQ_OUT/sampler.stop"
	dq_sampler "$DQ_OUT/sampler.stop" >"$DQ_OUT/rate.dat" &
	spid=$!
	DQ_FAILED=0
	for i in $(seq "$DQ_N"); do
		wait "${pids[DQ_N + i]}"
		rc=$?
		wait "${pids[i]}"
		[ $? -eq 0 ] && [ "$rc" -eq 0 ] || DQ_FAILED=$((DQ_FAILED + 1))
	done
	t1=${EPOCHREALTIME/[.,]/}
	b1=$(dq_router_bytes)
	DQ_EGRESS=$(awk -v b=$(($(dq_qdisc_stat sent) - sent0)) -v us=$((t1 - t0)) \
		'BEGIN { printf "%.2f", b / us / 1.048576 }')
	: >"$DQ_OUT/sampler.stop"
	wait "$spid"
	rm -f "$DQ_OUT/sampler.stop"
	DQ_EGRESS_STEADY=$(dq_steady_egress "$DQ_OUT/rate.dat")
	read -r DQ_STEADY_SECS DQ_STEADY_DROPS DQ_STEADY_RETX <<<"$(dq_steady_sums "$DQ_OUT/rate.dat")"
	DQ_BW=()
	for i in $(seq "$DQ_N"); do
		# perftest: "#bytes #iterations BW peak BW average MsgRate"
		DQ_BW[i]=$(awk -v s="$size" '$1 == s && NF == 5 { bw = $4 } END { print bw + 0 }' \
			"$DQ_OUT/cli$i.log")
		# a flow the router saw sending but perftest reports 0 for
		# (its clock calibration, tools/bench.sh): its own words
		if [ "${DQ_BW[i]}" = 0 ]; then
			echo "info flow $i: perftest reported no bandwidth; its client's last lines:"
			tail -n 12 "$DQ_OUT/cli$i.log" | sed 's/^/  | /'
		fi
	done
	DQ_GOODPUT=$(printf '%s\n' "${DQ_BW[@]}" | awk '{ s += $1 } END { printf "%.2f", s }')
	DQ_JAIN=$(printf '%s\n' "${DQ_BW[@]}" | awk '{ s += $1; q += $1 * $1; n++ }
		END { if (q > 0) printf "%.3f", s * s / (n * q); else print 0 }')
	DQ_TXRATE=$(awk -v a="$b0" -v b="$b1" -v us=$((t1 - t0)) 'BEGIN {
		n = split(a, x, " ") - 1; split(b, y, " ")
		for (i = 1; i <= n; i++) s += y[i] - x[i]
		printf "%.2f", s / us / 1.048576 }')
	DQ_DROPS=$(($(dq_qdisc_stat dropped) - drops0))
	DQ_MARKS=$(($(dq_qdisc_stat marked) - marks0))
	DQ_RETX=$(SNAP_DEVS=$senders delta_sum DQ_C0 retransmits)
	DQ_CNP_HANDLED=$(SNAP_DEVS=$senders delta_sum DQ_C0 rp_cnp_handled)
	DQ_CNP_SENT=$(delta DQ_C0 srnicD np_cnp_sent)
}

dq_report() {
	local i flows=""
	for i in $(seq "$DQ_N"); do
		flows+=" f$i=${DQ_BW[i]}"
	done
	printf '%s: goodput %s MiB/s (bottleneck %s Mbit/s = %s MiB/s),%s, sender rate %s MiB/s, bottleneck egress %s MiB/s (steady %s), Jain %s, drops %s, CE marks %s, retransmits %s, CNPs sent %s handled %s, failed flows %s\n' \
		"$1" "$DQ_GOODPUT" "$DQ_RATE" \
		"$(awk -v r="$DQ_RATE" 'BEGIN { printf "%.2f", r * 1e6 / 8 / 1048576 }')" \
		"$flows" "$DQ_TXRATE" "$DQ_EGRESS" "$DQ_EGRESS_STEADY" "$DQ_JAIN" "$DQ_DROPS" "$DQ_MARKS" "$DQ_RETX" \
		"$DQ_CNP_SENT" "$DQ_CNP_HANDLED" "$DQ_FAILED"
	# RED's own breakdown (cumulative): marked, early, pdrop
	ip netns exec nsR tc -s qdisc show dev vethRD |
		awk '/qdisc red/ { red = 1 } red && /marked/ { print "  red:" $0; exit }'
}
