# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# fabric_lib.sh: a leaf-spine fabric in network namespaces, for
# tests/bench/fabric_guest.sh (tools/fabric.sh) and tests/vm/test_fabric.sh.
# Source it after tests/vm/lib.sh.
#
#   spines  fbs1 .. fbsS                every leaf links to every spine
#   leaves  fbl1 .. fblL                (leaf j: tos<i> -- spine i: tol<j>,
#                                        172.(16+i).j.1 / .2, /24)
#   hosts   fbh<j>x<k>, k = 1 .. H      (eth0 10.j.k.2/24 -- leaf j: toh<k>,
#                                        10.j.k.1; default route via it)
#
# Leaves route every other leaf's 10.m.0.0/16 over all spines (multipath,
# fib_multipath_hash_policy=1: the UDP ports choose the spine, as switches'
# ECMP does); spines route each leaf's /16 to it. With RATE > 0 every
# fabric link (both directions) and every leaf's link down to a host is
# shaped like a switch port: htb RATE for RoCEv2 (UDP 4791; everything else,
# perftest's TCP side channel included, in a fast class) and RED marking
# CE from ECN_KB KiB of queue, every packet from 3 x ECN_KB, dropping past
# a buffer of FAB_BUF_KB KiB (default 0: 12 x ECN_KB) (ECN_KB 0: no
# marking, drop-tail at 200 packets).
#
#   fab_check SPINES LEAVES HOSTS RATE ECN_KB   one line on stderr and 1 if
#                                               a value is out of range
#   fab_up SPINES LEAVES HOSTS RATE ECN_KB      build it (0, or 1 after a
#                                               message)
#   fab_down                                    remove every fb* namespace
#   fab_hosts                                   "j k" per host, one a line
#   fab_topology                                the fabric, in words
#   fab_link_bytes                              "leaf spine up down" per
#                                               fabric link: bytes sent
#                                               up (leaf -> spine) and down
#
# Split over two guests (tests/vm/vmrun --pair; FAB_SIDE=a or b, FAB_LINK
# the NIC joining them, set before fab_up): the last leaf, fblL, and its one
# host live on guest b, everything else on guest a. Each link between fblL
# and spine i is a VLAN of its own on FAB_LINK (VID 16 x i + L: ECMP still
# has one path per spine), named tol<L> in fbs<i> on a and tos<i> in fblL
# on b, addressed and routed like a veth link. Guest b's host is the root
# netns, not a namespace (rdma_rxe of 6.1 only works in init_net): veth
# fbh<L>x1 (10.L.1.2/24) to fblL's toh1, route to 10.0.0.0/8 through it.
# On b there are no spines and fab_link_bytes prints nothing; on a it
# counts fblL's links at the spines' ends.

FAB_SPINES=0 FAB_LEAVES=0 FAB_HOSTS=0 FAB_RATE=0 FAB_ECN_KB=0
FAB_BUF_KB=${FAB_BUF_KB:-0}
FAB_SIDE=${FAB_SIDE:-} FAB_LINK=${FAB_LINK:-}

# _fab_here_leaf J: leaf J lives in this kernel (in a split fabric, the last
# leaf lives on guest b); _fab_here_spines: the spines do (not guest b)
_fab_here_leaf() {
	case $FAB_SIDE in
	a) [ "$1" -lt "$FAB_LEAVES" ] ;;
	b) [ "$1" -eq "$FAB_LEAVES" ] ;;
	*) true ;;
	esac
}
_fab_here_spines() { [ "$FAB_SIDE" != b ]; }
# _fab_vid I J: the VLAN of the link between spine I and leaf J
_fab_vid() { echo $((16 * $1 + $2)); }

# _fab_int NAME VALUE MIN MAX
_fab_int() {
	if ! [[ $2 =~ ^[0-9]+$ ]] || [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
		echo "fabric: $1 must be a number from $3 to $4, not '$2'" >&2
		return 1
	fi
}

fab_check() {
	_fab_int spines "$1" 2 4 && _fab_int leaves "$2" 2 4 &&
		_fab_int hosts "$3" 1 4 && _fab_int rate "$4" 0 10000 &&
		_fab_int ecn-kb "$5" 0 1024
}

# _fab_link A IFA B IFB: a veth pair between namespaces A and B, up
_fab_link() {
	ip -n "$1" link add "$2" type veth peer name "$4" netns "$3" &&
		ip -n "$1" link set "$2" up && ip -n "$3" link set "$4" up
}

# _fab_shape NS DEV: the switch port model on DEV's egress (see above)
_fab_shape() {
	local ns=$1 dev=$2 min max
	[ "$FAB_RATE" -gt 0 ] || return 0
	tc -n "$ns" qdisc add dev "$dev" root handle 1: htb default 2 &&
		tc -n "$ns" class add dev "$dev" parent 1: classid 1:1 \
			htb rate "${FAB_RATE}mbit" ceil "${FAB_RATE}mbit" burst 64k \
			cburst 64k quantum 1514 &&
		tc -n "$ns" class add dev "$dev" parent 1: classid 1:2 \
			htb rate 10000mbit quantum 1514 &&
		tc -n "$ns" filter add dev "$dev" parent 1: protocol ip u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:1 ||
		return 1
	if [ "$FAB_ECN_KB" -gt 0 ]; then
		min=$((FAB_ECN_KB * 1024)) max=$((FAB_ECN_KB * 3072))
		tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: red \
			limit $((FAB_BUF_KB > 0 ? FAB_BUF_KB * 1024 : max * 4)) \
			min "$min" max "$max" avpkt 1100 \
			burst $(((2 * min + max) / 3300 + 1)) probability 0.1 \
			bandwidth "${FAB_RATE}mbit" ecn
	else
		tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: pfifo limit 200
	fi
}

fab_up() {
	local s='' l='' h='' i j k m hops
	fab_check "$@" || return 1
	FAB_SPINES=$1 FAB_LEAVES=$2 FAB_HOSTS=$3 FAB_RATE=$4 FAB_ECN_KB=$5
	case $FAB_SIDE in
	'') ;;
	a | b)
		[ -n "$FAB_LINK" ] && [ -e "/sys/class/net/$FAB_LINK" ] ||
			{ echo "fabric: FAB_LINK '$FAB_LINK' is not a NIC here" >&2; return 1; }
		;;
	*) echo "fabric: FAB_SIDE must be a, b or empty, not '$FAB_SIDE'" >&2; return 1 ;;
	esac
	_fab_here_spines && for i in $(seq "$FAB_SPINES"); do s+=" fbs$i"; done
	for j in $(seq "$FAB_LEAVES"); do
		_fab_here_leaf "$j" || continue
		l+=" fbl$j"
		[ "$FAB_SIDE" = b ] && continue
		for k in $(seq "$FAB_HOSTS"); do h+=" fbh${j}x$k"; done
	done
	for m in $s $l $h; do
		ip netns add "$m" && ip -n "$m" link set lo up ||
			{ echo "fabric: cannot create netns $m" >&2; return 1; }
	done
	for m in $s $l; do
		ip netns exec "$m" sysctl -qw net.ipv4.ip_forward=1 \
			net.ipv4.fib_multipath_hash_policy=1 || return 1
	done
	for j in $(seq "$FAB_LEAVES"); do
		for i in $(seq "$FAB_SPINES"); do
			_fab_uplink "$i" "$j" ||
				{ echo "fabric: link leaf $j - spine $i failed" >&2; return 1; }
		done
		_fab_here_leaf "$j" || continue
		if [ "$FAB_SIDE" = b ]; then
			_fab_root_host "$j" || return 1
			continue
		fi
		for k in $(seq "$FAB_HOSTS"); do
			_fab_link "fbh${j}x$k" eth0 "fbl$j" "toh$k" &&
				ip -n "fbh${j}x$k" addr add "10.$j.$k.2/24" dev eth0 &&
				ip -n "fbl$j" addr add "10.$j.$k.1/24" dev "toh$k" &&
				ip -n "fbh${j}x$k" route add default via "10.$j.$k.1" &&
				_fab_shape "fbl$j" "toh$k" ||
				{ echo "fabric: link host $j.$k - leaf $j failed" >&2; return 1; }
		done
	done
	for j in $(seq "$FAB_LEAVES"); do
		_fab_here_leaf "$j" || continue
		hops=()
		for i in $(seq "$FAB_SPINES"); do
			hops+=(nexthop via "172.$((16 + i)).$j.2")
		done
		for m in $(seq "$FAB_LEAVES"); do
			[ "$m" = "$j" ] && continue
			ip -n "fbl$j" route add "10.$m.0.0/16" "${hops[@]}" ||
				{ echo "fabric: ECMP route on leaf $j failed" >&2; return 1; }
		done
	done
}

# _fab_uplink I J: the link between spine I and leaf J, its ends' addresses,
# shaping, and spine I's route to leaf J's hosts: the ends in this kernel
# (both: a veth pair; one: a VLAN on FAB_LINK; none: nothing)
_fab_uplink() {
	local i=$1 j=$2 vid
	vid=$(_fab_vid "$i" "$j")
	if _fab_here_leaf "$j" && _fab_here_spines; then
		_fab_link "fbl$j" "tos$i" "fbs$i" "tol$j" || return 1
	elif _fab_here_leaf "$j"; then
		_fab_vlan "$vid" "fbl$j" "tos$i" || return 1
	elif _fab_here_spines; then
		_fab_vlan "$vid" "fbs$i" "tol$j" || return 1
	else
		return 0
	fi
	if _fab_here_leaf "$j"; then
		ip -n "fbl$j" addr add "172.$((16 + i)).$j.1/24" dev "tos$i" &&
			_fab_shape "fbl$j" "tos$i" || return 1
	fi
	if _fab_here_spines; then
		ip -n "fbs$i" addr add "172.$((16 + i)).$j.2/24" dev "tol$j" &&
			ip -n "fbs$i" route add "10.$j.0.0/16" via "172.$((16 + i)).$j.1" &&
			_fab_shape "fbs$i" "tol$j" || return 1
	fi
}

# _fab_vlan VID NS NAME: VLAN VID of FAB_LINK, moved into NS as NAME, up
_fab_vlan() {
	ip link add link "$FAB_LINK" name "fbv$1" type vlan id "$1" &&
		ip link set "fbv$1" netns "$2" &&
		ip -n "$2" link set "fbv$1" name "$3" &&
		ip -n "$2" link set "$3" up
}

# _fab_root_host J: guest b's host, the root netns, on leaf J (see above)
_fab_root_host() {
	local j=$1
	ip link add "fbh${j}x1" type veth peer name toh1 netns "fbl$j" &&
		ip link set "fbh${j}x1" up && ip -n "fbl$j" link set toh1 up &&
		ip addr add "10.$j.1.2/24" dev "fbh${j}x1" &&
		ip -n "fbl$j" addr add "10.$j.1.1/24" dev toh1 &&
		ip route add 10.0.0.0/8 via "10.$j.1.1" &&
		_fab_shape "fbl$j" toh1 ||
		{ echo "fabric: link host $j.1 (root netns) - leaf $j failed" >&2; return 1; }
}

fab_down() {
	local ns dev
	for ns in $(ip netns list | awk '$1 ~ /^fb[slh][0-9]/ { print $1 }'); do
		ip netns del "$ns" 2>/dev/null
	done
	# guest b's root-netns host and a VLAN a failed fab_up left behind
	for dev in /sys/class/net/fbh* /sys/class/net/fbv*; do
		[ -e "$dev" ] && ip link del "${dev##*/}" 2>/dev/null
	done
	return 0
}

fab_hosts() {
	local j k
	for j in $(seq "$FAB_LEAVES"); do
		_fab_here_leaf "$j" || continue
		for k in $(seq "$([ "$FAB_SIDE" = b ] && echo 1 || echo "$FAB_HOSTS")"); do
			echo "$j $k"
		done
	done
}

fab_topology() {
	local shape="unshaped" j hosts where
	[ "$FAB_RATE" -gt 0 ] && shape="links ${FAB_RATE} Mbit/s (htb), $([ "$FAB_ECN_KB" -gt 0 ] &&
		echo "RED marks CE from ${FAB_ECN_KB} KiB" || echo "drop-tail 200 packets")"
	echo "fabric: $FAB_SPINES spines, $FAB_LEAVES leaves, $FAB_HOSTS hosts per leaf; $shape"
	if [ -n "$FAB_SIDE" ]; then
		echo "  split over two guests: spines and $([ "$FAB_LEAVES" -gt 2 ] && echo "leaves 1-$((FAB_LEAVES - 1))" || echo "leaf 1") on guest a," \
			"leaf $FAB_LEAVES and its host (the root netns) on guest b;" \
			"fbl$FAB_LEAVES's links to the spines are VLANs" \
			"$(for i in $(seq "$FAB_SPINES"); do _fab_vid "$i" "$FAB_LEAVES"; done | paste -sd,) on $FAB_LINK"
	fi
	echo "  spines: $(seq -s ' ' -f 'fbs%g' "$FAB_SPINES")  (each linked to every leaf)"
	for j in $(seq "$FAB_LEAVES"); do
		hosts=$(seq -s ' ' -f "fbh${j}x%g" "$FAB_HOSTS") where=
		if [ -n "$FAB_SIDE" ] && [ "$j" = "$FAB_LEAVES" ]; then
			hosts=fbh${j}x1 where=" [guest b]"
		elif [ -n "$FAB_SIDE" ]; then
			where=" [guest a]"
		fi
		echo "  leaf fbl$j$where: hosts $hosts" \
			"(10.$j.K.2), ECMP to the other leaves over all spines"
	done
}

fab_link_bytes() {
	local i j up down
	_fab_here_spines || return 0
	for j in $(seq "$FAB_LEAVES"); do
		for i in $(seq "$FAB_SPINES"); do
			if _fab_here_leaf "$j"; then
				up=$(ip netns exec "fbl$j" cat "/sys/class/net/tos$i/statistics/tx_bytes")
			else
				up=$(ip netns exec "fbs$i" cat "/sys/class/net/tol$j/statistics/rx_bytes")
			fi
			down=$(ip netns exec "fbs$i" cat "/sys/class/net/tol$j/statistics/tx_bytes")
			echo "$j $i $up $down"
		done
	done
}
