#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic <-> rdma_rxe on the wire: two guests of `tests/vm/vmrun --pair`,
# joined by one virtio-net link, each running this script:
#
#   guest a: srnic0 on $VMRUN_IFACE 10.77.0.1 <== virtio-net ==> 10.77.0.2 rxe0 :guest b
#
#   tests/vm/vmrun --pair --timeout 900 tests/vm/test_interop.sh
#
# Every tool runs twice, srnic as the server (rxe the client) and srnic as
# the client (rxe the server): ibv_{rc,ud,uc}_pingpong with the data checked
# (-c), perftest RC bandwidth and latency, and rping through RDMA-CM (which
# needs srnic's GSI QP for the CM MADs) with the data verified (-V).
#
# Both guests go through the same list of steps. For each step the server's
# guest starts the server by PID under a timeout and, once it listens, drops
# a "ready" marker in $VMRUN_SYNC; the client's guest waits for it, runs the
# client under a timeout and drops its exit status; the server's guest then
# reaps its server (stopping it if the client failed) and drops the server's
# exit status. Logs of both ends go to $VMRUN_SYNC, so guest a, which keeps
# the tally, can show them. Guest b reports its local checks to guest a at
# the end, and guest a prints the joint "N passed, N failed" (which vmrun
# prefixes with "[a] "; tests/tier_vm.sh strips it). Also checked: both
# guest clocks run at the host's speed; the headers of what srnic sends
# during the light steps (captured on guest a with tests/vm/roce_pcap.py:
# UDP source port range, UDP checksum 0, DF, BTH TVer/MigReq/reserved bits,
# P_Key, PadCnt); no ICRC or header errors on either side (rxe logs "bad
# ICRC"); each stack accepted the RoCEv2 packets that reached its guest
# (its rcvd_pkts against the guest's UDP InDatagrams); no kernel warnings.
#
# Note: rdma_rxe never gives up retrying with retry_cnt 7 (rxe_comp.c takes
# 7 as "infinite", which IBA defines for rnr_retry only); srnic gives up
# after 7 retries of the local ACK timeout (67 ms for pingpong/perftest),
# as hardware does. So a guest b stalled for more than ~0.5 s (a heavily
# loaded host) fails the steps where srnic is the requester.
#
# Debugging knobs (environment of vmrun, passed to both guests):
#   SRNIC_INTEROP_DEBUG=1      counters of both devices after every step,
#                              link/qdisc/IP statistics at the end
#   SRNIC_INTEROP_ONLY=ERE     run only the steps whose name matches ERE
#   SRNIC_INTEROP_NETEM=ARGS   netem on both guests' egress, e.g.
#                              "loss 1% limit 100000" (UD/UC steps cannot
#                              pass with loss: nothing resends)
#   SRNIC_INTEROP_PCAP=FILE    guest a captures its link into FILE (a repo
#                              path, e.g. build/interop.pcap; read it with
#                              tests/vm/roce_pcap.py decode|fields FILE);
#                              the header check then covers the whole run
#   SRNIC_INTEROP_BASELINE=rxe rdma_rxe on guest a too (names say srnic)
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

if [ -z "${VMRUN_SYNC:-}" ] || [ -z "${VMRUN_IFACE:-}" ]; then
	t_fail "interop setup" "needs two guests: tests/vm/vmrun --pair $0"
	t_summary
	exit 1
fi

ROLE=$VMRUN_ROLE
SYNC=$VMRUN_SYNC
PEER_ROLE=$([ "$ROLE" = a ] && echo b || echo a)
# a full run moves far more packets than this each way
MIN_PKTS=$([ -z "${SRNIC_INTEROP_ONLY:-}" ] && echo 10000 || echo 0)
CLI_T=40	# seconds a client may run
SRV_T=60	# seconds a server may run (it waits for its client)

now() { echo "${EPOCHREALTIME%.*}"; }
# (nap, sync_put and sync_await: tests/vm/lib.sh)
nap 0

# --------------------------------------------------------------- setup
# virtio-net reports no link speed, so ib_get_eth_speed() warns on every
# port query ("eth0 speed is unknown"): keep warnings off the console (the
# checks at the end still look for kernel warnings in dmesg).
dmesg -n 4
# The other guest may still be booting: give it up to a minute to answer.
for _ in $(seq 30); do
	busybox ping -c 1 -W 2 "$VMRUN_PEER" >/tmp/ping.log 2>&1
	ping_rc=$?
	[ "$ping_rc" = 0 ] && break
done
setup_err=
# rdma_cm for rping; srnic_load and rxe_load load the drivers' dependencies
modprobe rdma_ucm || setup_err="modprobe rdma_ucm failed"
if [ -z "$setup_err" ]; then
	if [ "$ROLE" = a ] && [ "${SRNIC_INTEROP_BASELINE:-}" = rxe ]; then
		# debugging: rdma_rxe on both guests, same steps (the names
		# still say srnic)
		DEV=rxe0
		rxe_load && rdma link add rxe0 type rxe netdev "$VMRUN_IFACE" ||
			setup_err="rdma_rxe on guest a failed"
	elif [ "$ROLE" = a ]; then
		DEV=srnic0
		if ! srnic_load; then
			setup_err="srnic_load failed (srnic.ko missing or not loadable)"
		elif ! rdma link add srnic0 type srnic netdev "$VMRUN_IFACE"; then
			setup_err="rdma link add srnic0 failed"
		fi
	else
		DEV=rxe0
		if ! rxe_load; then
			setup_err="cannot load rdma_rxe"
		elif ! rdma link add rxe0 type rxe netdev "$VMRUN_IFACE"; then
			setup_err="rdma link add rxe0 failed"
		fi
	fi
fi

GID=
if [ -z "$setup_err" ]; then
	GID=$(settle roce_gid_index "$DEV" "$VMRUN_ADDR")
	[ -n "$GID" ] || setup_err="no RoCEv2 GID for $VMRUN_ADDR on $DEV"
fi

# The guest clock against the host's: files created in the shared dir get
# the host's time as mtime. A host overloaded while a guest boots can spoil
# its TSC calibration ("tsc: PIT calibration deviates from HPET"), and then
# the guest's clock, so every timeout in it, runs several times too fast:
# srnic's 67 ms ACK timeout becomes ~15 ms and RC steps fail at random.
clock_ratio() {
	local f=$SYNC/.clock.$ROLE a0 b0 a1 b1 h0 h1
	rm -f "$f.0" "$f.1"
	a0=$EPOCHREALTIME; echo >"$f.0"; b0=$EPOCHREALTIME
	nap 4
	a1=$EPOCHREALTIME; echo >"$f.1"; b1=$EPOCHREALTIME
	h0=$(stat -c %.3Y "$f.0") && h1=$(stat -c %.3Y "$f.1") || return 1
	rm -f "$f.0" "$f.1"
	# guest seconds / host seconds; "ok" if the host's interval fits
	# the guest's, whose ends are only known within [a, b] each
	awk -v a0="$a0" -v b0="$b0" -v a1="$a1" -v b1="$b1" -v h="$h1" -v h0="$h0" '
		BEGIN {
			h -= h0
			r = h > 0 ? ((a1 + b1) - (a0 + b0)) / 2 / h : 99
			ok = h >= (a1 - b0) * 0.9 - 0.1 && h <= (b1 - a0) * 1.1 + 0.1
			printf "%.2f%s", r, ok ? "" : "!"
		}'
}
clock=$(clock_ratio) || clock=unknown
echo "guest $ROLE clock: $clock x the host's"

sync_put "setup.$ROLE" "${setup_err:-ok} ping=$ping_rc gid=$GID clock=$clock"
peer_setup=$(sync_await "setup.$PEER_ROLE" 120) || peer_setup="no answer from guest $PEER_ROLE"
if [ "$ROLE" = a ]; then
	[ "$ping_rc" = 0 ] || sed 's/^/  | /' /tmp/ping.log
	t_eq "busybox ping a -> b over the link" "$ping_rc" 0
	t_eq "guest a: srnic0 on $VMRUN_IFACE, GID index $GID" "${setup_err:-ok}" ok
	t_eq "guest b: rxe0 on its NIC (${peer_setup#* })" "${peer_setup%% *}" ok
	[[ $peer_setup == *ping=0* ]]
	t_eq "busybox ping b -> a over the link" "$?" 0
	for who in "a $clock" "b ${peer_setup##*clock=}"; do
		# shellcheck disable=SC2086 # "ROLE RATIO"
		set -- $who
		t_check "guest $1: clock runs at host speed (x$2; TSC calibrated at boot)" \
			test -n "$2" -a "${2%!}" = "$2" -a "$2" != unknown
	done
fi
# Debugging knobs: see the header.
if [ -n "${SRNIC_INTEROP_NETEM:-}" ]; then
	# shellcheck disable=SC2086 # netem arguments
	tc qdisc replace dev "$VMRUN_IFACE" root netem $SRNIC_INTEROP_NETEM ||
		setup_err="tc netem $SRNIC_INTEROP_NETEM failed"
fi
READY=0
[ -z "$setup_err" ] && [ "${peer_setup%% *}" = ok ] && READY=1

# Guest a captures its link (tests/vm/roce_pcap.py) to check the headers
# srnic sends: during the light steps at the end, or the whole run with
# SRNIC_INTEROP_PCAP. The capture is ready once its file exists.
PCAP=
pcap_start() {
	local i
	[ "$ROLE" = a ] && [ "$READY" = 1 ] || return 0
	PCAP=$1
	rm -f "$PCAP"
	bg_start PCAP_PID /usr/bin/python3 tests/vm/roce_pcap.py capture \
		"$VMRUN_IFACE" "$PCAP"
	for i in $(seq 100); do
		[ -f "$PCAP" ] && return 0
		nap 0.1
	done
	echo "capture did not start"
}
pcap_stop() {
	[ -n "${PCAP_PID:-}" ] || return 0
	kill -TERM "$PCAP_PID"
	wait "$PCAP_PID"
	PCAP_PID=
}
[ -n "${SRNIC_INTEROP_PCAP:-}" ] && pcap_start "$SRNIC_INTEROP_PCAP"

# ---------------------------------------------------------------- steps
STEP=0

# subst ARGS...: fill ARGV with ARGS, @DEV@/@GID@/@ADDR@/@PEER@ replaced by
# this guest's values.
subst() {
	local a
	ARGV=()
	for a in "$@"; do
		a=${a//@DEV@/$DEV}
		a=${a//@GID@/$GID}
		a=${a//@ADDR@/$VMRUN_ADDR}
		a=${a//@PEER@/$VMRUN_PEER}
		ARGV+=("$a")
	done
}

# Show the last lines of a log of one end, indented.
show_log() {
	local who=$1 f=$2
	[ -s "$f" ] || return 0
	echo "  | --- $who:"
	tail -n 25 "$f" | sed 's/^/  | /'
}

# step NAME SERVER_ROLE LISTEN SERVER_ARGS... -- CLIENT_ARGS...
#   SERVER_ROLE: a (srnic serves, rxe is the client) or b (the reverse);
#   LISTEN: tcp (perftest/pingpong: TCP 18515) or cm (an rdma_cm listener).
step() {
	local name=$1 srv_role=$2 listen=$3 srv=() cli=() base pid rc ready
	local crc src deadline grace
	shift 3
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	STEP=$((STEP + 1))
	base=s$STEP
	[[ $name =~ ${SRNIC_INTEROP_ONLY:-.} ]] || return 0
	if [ "$READY" != 1 ]; then
		[ "$ROLE" = a ] && t_fail "$name" "not run: setup failed"
		return
	fi

	if [ "$ROLE" = "$srv_role" ]; then
		subst "${srv[@]}"
		bg_start pid timeout --kill-after=5 "$SRV_T" "${ARGV[@]}" \
			>"$SYNC/$base.srv.log" 2>&1
		if [ "$listen" = cm ]; then
			wait_rdma_cm_listen 20
		else
			wait_tcp_listen 18515 20
		fi
		ready=$?
		sync_put "$base.ready" "$ready"
		# Reap the server: give it time to finish once the client
		# is done, stop it at once if the client failed.
		deadline=$(($(now) + SRV_T + 10))
		grace=
		while kill -0 "$pid" 2>/dev/null && [ "$(now)" -lt "$deadline" ]; do
			if [ -z "$grace" ] && [ -f "$SYNC/$base.cli" ]; then
				read -r crc <"$SYNC/$base.cli"
				grace=$(($(now) + ($([ "$crc" = 0 ] && echo 15 || echo 2))))
			fi
			[ -n "$grace" ] && [ "$(now)" -ge "$grace" ] && break
			nap 0.2
		done
		bg_stop "$pid"
		rc=$?
		sync_put "$base.srv" "$rc"
	else
		ready=$(sync_await "$base.ready" $((SRV_T + 60))) || ready=timeout
		if [ "$ready" = 0 ]; then
			subst "${cli[@]}"
			with_timeout "$CLI_T" "${ARGV[@]}" >"$SYNC/$base.cli.log" 2>&1 </dev/null
			rc=$?
		else
			echo "server not listening ($ready): client not started" >"$SYNC/$base.cli.log"
			rc=255
		fi
		sync_put "$base.cli" "$rc"
	fi

	[ -n "${SRNIC_INTEROP_DEBUG:-}" ] && debug_counters "after step $STEP"
	[ "$ROLE" = a ] || return 0
	if [ "$srv_role" = a ]; then
		src=$rc
		crc=$(sync_await "$base.cli" $((SRV_T + 90))) || crc="none"
	else
		crc=$rc
		src=$(sync_await "$base.srv" $((SRV_T + 90))) || src="none"
	fi
	if [ "$crc" = 0 ] && [ "$src" = 0 ]; then
		t_ok "$name"
	else
		show_log "server ($([ "$srv_role" = a ] && echo srnic || echo rxe)): ${srv[*]}" "$SYNC/$base.srv.log"
		show_log "client ($([ "$srv_role" = a ] && echo rxe || echo srnic)): ${cli[*]}" "$SYNC/$base.cli.log"
		t_fail "$name" "client exit $crc, server exit $src"
	fi
}

# SRNIC_INTEROP_DEBUG=1: counters after every step, network stats at the end.
debug_counters() {
	local c line=
	for c in sent_pkts rcvd_pkts retransmits local_ack_timeout_err \
		 completer_retry_err duplicate_request out_of_seq_request \
		 rcvd_seq_err send_seq_err rcvd_rnr_err send_rnr_err; do
		[ -f "/sys/class/infiniband/$DEV/ports/1/hw_counters/$c" ] &&
			line+=" $c=$(counter "$DEV" "$c")"
	done
	echo "DEBUG $DEV $1:$line"
}
debug_net() {
	ip -s -s link show "$VMRUN_IFACE"
	nstat -az | grep -E 'Udp|IpIn|IpOut|Discard|Drop|Err' | grep -v ' 0 '
	cat /proc/net/softnet_stat
	ip neigh show
	tc -s qdisc show dev "$VMRUN_IFACE"
}

# both NAME LISTEN SERVER_ARGS... -- CLIENT_ARGS...: srnic as the server,
# then srnic as the client.
both() {
	local name=$1 listen=$2
	shift 2
	step "$name: srnic server, rxe client" a "$listen" "$@"
	step "$name: rxe server, srnic client" b "$listen" "$@"
}

# UDP datagrams this guest received (/proc/net/snmp Udp: InDatagrams):
# every RoCEv2 packet that made it here, whatever the stack did with it.
udp_in() {
	local tag first _
	while read -r tag first _; do
		if [ "$tag" = Udp: ] && [ "$first" != InDatagrams ]; then
			echo "$first"
			return
		fi
	done </proc/net/snmp
}
# the packet counters from here on (none if setup failed: DEV is missing)
SNAP_DEVS=${DEV:-}
snap
# moved NAME: growth of DEV's counter NAME since snap, 0 without DEV
moved() { delta "${DEV:-none}" "$1" 2>/dev/null || echo 0; }
udp0=$(udp_in)

both "ibv_rc_pingpong 4 KiB x 200, data checked" tcp \
	ibv_rc_pingpong -d @DEV@ -g @GID@ -n 200 -s 4096 -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID@ -n 200 -s 4096 -c @PEER@
both "ibv_rc_pingpong 64 KiB x 20, data checked" tcp \
	ibv_rc_pingpong -d @DEV@ -g @GID@ -n 20 -s 65536 -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID@ -n 20 -s 65536 -c @PEER@
for t in ib_write_bw ib_read_bw ib_send_bw; do
	both "$t -s 65536 -n 100" tcp \
		$t -d @DEV@ -x @GID@ -s 65536 -n 100 -F -- \
		$t -d @DEV@ -x @GID@ -s 65536 -n 100 -F @PEER@
done
# srnic's trains (srnic/tx_batch, guest a): its requests leave as one
# fraglist GSO skb per run, which guest a's stack cuts into packets before
# virtio-net; rxe checks each one's ICRC and PSN. The capture of these
# steps goes through the same header checks as the light steps'.
if [ "$DEV" = srnic0 ]; then
	srnic_knob_set tx_batch 1 srnic0 || t_fail "tx_batch on" "write failed"
	trains0=$(counter srnic0 tx_train_packets)
	[ -z "${SRNIC_INTEROP_PCAP:-}" ] && pcap_start /tmp/interop-trains.pcap
fi
both "ibv_rc_pingpong 64 KiB x 20, srnic's trains, data checked" tcp \
	ibv_rc_pingpong -d @DEV@ -g @GID@ -n 20 -s 65536 -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID@ -n 20 -s 65536 -c @PEER@
both "ib_write_bw -s 65536 -n 100, srnic's trains" tcp \
	ib_write_bw -d @DEV@ -x @GID@ -s 65536 -n 100 -F -- \
	ib_write_bw -d @DEV@ -x @GID@ -s 65536 -n 100 -F @PEER@
if [ "$DEV" = srnic0 ]; then
	[ -z "${SRNIC_INTEROP_PCAP:-}" ] && pcap_stop
	srnic_knob_set tx_batch 0 srnic0
	trains=$(($(counter srnic0 tx_train_packets) - trains0))
	t_check "srnic0 sent $trains packets in trains" test "$trains" -gt 0
	if [ -z "${SRNIC_INTEROP_PCAP:-}" ] && [ -n "$PCAP" ]; then
		t_check "srnic's packets cut from trains, on the wire: the header checks" \
			/usr/bin/python3 tests/vm/roce_pcap.py check "$PCAP"
	fi
fi
# The light steps run under a capture (UD, GSI MADs, UC, atomics, RC
# SEND/READ/WRITE/ACK) unless the whole run is captured.
[ -z "${SRNIC_INTEROP_PCAP:-}" ] && pcap_start /tmp/interop-wire.pcap
both "ibv_ud_pingpong 1 KiB x 200, data checked" tcp \
	ibv_ud_pingpong -d @DEV@ -g @GID@ -n 200 -s 1024 -c -- \
	ibv_ud_pingpong -d @DEV@ -g @GID@ -n 200 -s 1024 -c @PEER@
both "ibv_uc_pingpong 4 KiB x 200, data checked" tcp \
	ibv_uc_pingpong -d @DEV@ -g @GID@ -n 200 -s 4096 -c -- \
	ibv_uc_pingpong -d @DEV@ -g @GID@ -n 200 -s 4096 -c @PEER@
both "ib_atomic_bw -n 200" tcp \
	ib_atomic_bw -d @DEV@ -x @GID@ -n 200 -F -- \
	ib_atomic_bw -d @DEV@ -x @GID@ -n 200 -F @PEER@
both "ib_write_lat -n 200" tcp \
	ib_write_lat -d @DEV@ -x @GID@ -n 200 -F -- \
	ib_write_lat -d @DEV@ -x @GID@ -n 200 -F @PEER@
both "rping (RDMA-CM) 50 x 1 KiB, data verified" cm \
	rping -s -a @ADDR@ -C 50 -S 1024 -V -- \
	rping -c -a @PEER@ -C 50 -S 1024 -V
pcap_stop

# ---------------------------------------------------------- local checks
[ -n "${SRNIC_INTEROP_DEBUG:-}" ] && debug_net 2>&1 | sed "s/^/DEBUG $ROLE: /"
if [ "$ROLE" = b ]; then
	[ "$READY" = 1 ] && t_check "guest b: no 'bad ICRC' from rdma_rxe (it accepted srnic's ICRC)" \
		bash -c "! dmesg | grep -i 'bad ICRC'"
	t_kernel_clean "guest b: no kernel warnings"
	tx=$(moved sent_pkts)
	rx=$(moved rcvd_pkts)
	udp=$(($(udp_in) - udp0))
	if [ "$READY" = 1 ]; then
		for c in sent_pkts rcvd_pkts completer_retry_err retry_exceeded_err \
			 rcvd_seq_err send_err duplicate_request out_of_seq_request; do
			echo "rxe0 $c $(counter "$DEV" "$c")"
		done
		# rxe drops packets for QPs already destroyed (late ACKs and
		# retries at teardown) before it counts them: allow 2%.
		t_check "guest b: rxe0 accepted >= 98% of the $udp RoCEv2 packets that reached it ($rx)" \
			test $((rx * 100)) -ge $((udp * 98)) -a "$rx" -gt "$MIN_PKTS"
	fi
	sync_put b.final "$T_PASS $T_FAIL $tx $rx $udp"
	t_reported_elsewhere
	sync_await a.done 300 >/dev/null
	exit 0
fi

if [ "$READY" = 1 ]; then
	for c in sent_pkts rcvd_pkts retransmits local_ack_timeout_err rcvd_seq_err \
		 send_seq_err rcvd_bad_hdr rcvd_no_qp rcvd_icrc_err send_err; do
		echo "srnic0 $c $(counter "$DEV" "$c")"
	done
	t_eq "srnic0: no ICRC errors (it accepted rxe's ICRC)" "$(counter "$DEV" rcvd_icrc_err)" 0
	t_eq "srnic0: no malformed packets from rxe (rcvd_bad_hdr)" "$(counter "$DEV" rcvd_bad_hdr)" 0
fi
t_kernel_clean "guest a: no kernel warnings"
if [ -n "$PCAP" ] && [ "$DEV" = srnic0 ]; then
	t_check "srnic's packets on the wire: UDP sport >= 0xC000, csum 0, DF, BTH TVer/MigReq/reserved 0, P_Key, pad" \
		/usr/bin/python3 tests/vm/roce_pcap.py check "$PCAP"
	t_check "RC packets both ways before RDMA-CM: UDP source port from the QP pair's numbers (srnic and rxe agree)" \
		/usr/bin/python3 tests/vm/roce_pcap.py entropy "$PCAP" --until-cm
fi
if ! final=$(sync_await b.final 300); then
	t_fail "guest b reported its checks" "no answer"
else
	read -r bp bf rxe_tx rxe_rx rxe_udp <<<"$final"
	T_PASS=$((T_PASS + bp))
	T_FAIL=$((T_FAIL + bf))
	if [ "$READY" = 1 ]; then
		tx=$(moved sent_pkts)
		# a late packet (a retry at teardown) may be half counted
		for _ in 1 2 3 4 5; do
			rx=$(moved rcvd_pkts)
			udp=$(($(udp_in) - udp0))
			[ "$rx" = "$udp" ] && break
			nap 0.5
		done
		# Packets lost between the stacks were dropped in the guests'
		# queues (fq_codel when the peer is slow: a loaded host).
		echo "srnic0 sent $tx, guest b received $rxe_udp, rxe0 accepted $rxe_rx"
		echo "rxe0 sent $rxe_tx, guest a received $udp, srnic0 accepted $rx"
		t_check "srnic0 accepted all $udp RoCEv2 packets that reached guest a ($rx)" \
			test "$rx" = "$udp" -a "$rx" -gt "$MIN_PKTS"
	fi
fi
sync_put a.done 1
if [ "$READY" = 1 ] && [ "$DEV" = srnic0 ]; then
	rdma link delete srnic0
	t_check "rmmod srnic after traffic" rmmod srnic
fi
t_summary
