# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib.sh: helpers for srnic test scripts that run as root inside a vmrun guest.
#
#   . tests/vm/lib.sh        (vmrun starts scripts with cwd = repo root)
#
# Results
#   t_ok NAME                     PASS
#   t_fail NAME MSG...            FAIL with a reason
#   t_skip NAME MSG...            SKIP (not counted in the summary)
#   t_check NAME CMD...           PASS if CMD exits 0
#   t_expect_fail NAME ERE CMD... PASS if CMD exits non-zero AND its
#                                 stdout+stderr matches the grep -E pattern ERE
#   t_eq NAME GOT WANT            PASS if the two strings are equal
#   t_summary                     prints "N passed, N failed"; returns 1 if any
#                                 check failed
#   t_kernel_clean [-i] NAME [ERE]
#                                 PASS if no dmesg line matches T_SPLAT_RE
#                                 (or ERE, a test's own extra lines; with -i
#                                 in any case); else FAIL showing the first
#                                 matching lines. Every test's "no kernel
#                                 warnings" check is this one.
#   T_SPLAT_RE                    what a kernel bug report looks like in the
#                                 log: WARNING/BUG/Oops, KASAN, KFENCE, UBSAN,
#                                 lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_LIST,
#                                 DEBUG_OBJECTS, kmemleak, RCU stalls, soft/
#                                 hard lockups, hung tasks, workqueue stalls.
#                                 Most of these only exist on the debug
#                                 kernel (tools/debug-kernel.sh, tests/
#                                 tier_debug.sh); the stock 6.1 prints the
#                                 WARNING/BUG/Oops/stall ones. tier_debug also
#                                 greps each guest's whole console with it.
#   t_from_output PROG RC OUT [GLOB]
#                                 the checks a guest program PROG reported in
#                                 its output OUT: "ok NAME" PASS, "not ok
#                                 NAME: WHY" FAIL (lines matching GLOB are
#                                 echoed); then "PROG ran to the end (exit
#                                 status)" (RC is 0, else OUT's last 30 lines)
#                                 and "PROG printed its done line" (one line
#                                 "${PROG%.py}: done")
# Each check prints one line, "PASS: NAME" or "FAIL: NAME: details", and
# appends it to "$T_RESULTS" if that is set (so the host can aggregate).
# On failure t_check/t_expect_fail first print the command's output, indented
# with "  | ". Checks return 0 on PASS and 1 on FAIL; don't use `set -e` in
# test scripts (or add `|| true`), so that one failure does not end the run.
#
# Processes
#   with_timeout SECS CMD...      run CMD (an executable, not a function),
#                                 TERM after SECS, KILL 5 s later; exit 124
#                                 on timeout, like timeout(1)
#   bg_start VAR CMD...           start CMD (an executable, not a function;
#                                 redirections apply: bg_start p cmd >log)
#                                 in the background in its own session and
#                                 process group; VAR = its PID
#   bg_stop PID                   TERM (then KILL) the process group of PID,
#                                 reap it; returns the exit status
#   bg_cleanup                    bg_stop every PID still running; lib.sh
#                                 installs it as the EXIT trap. If you set your
#                                 own EXIT trap, call bg_cleanup from it.
#   wait_done SECS PID            wait up to SECS (wall clock) for background
#                                 PID (a child of this shell) to exit: its exit
#                                 status, or 124 if it still runs (its command
#                                 line and the tasks in D state go to the log)
#
# Waiting
#   tcp_listening PORT [NS]       a TCP socket LISTENs on PORT (IPv4 or IPv6)
#                                 in this netns, or in netns NS (a command
#                                 for settle and ready)
#   wait_tcp_listen PORT [SECS]   settle (default 10 s) for tcp_listening PORT
#   wait_rdma_cm_listen [SECS]    settle (default 10 s) for pair_cm_listening
#   settle [-t SECS] CMD...       retry CMD (function or executable) every
#                                 0.1 s for up to SECS (default 5 times
#                                 $SRNIC_TIME_SCALE) s of wall clock; status
#                                 of the last try
#   ready CMD...                  settle for a server to listen (CMD: e.g.
#                                 tcp_listening): up to $SRNIC_READY_SECS s
#                                 (default 20: a Python server took over 5 s
#                                 in a guest on a loaded host; the debug
#                                 tier sets 90)
#
# Modules
#   KO                            the srnic.ko under test: $SRNIC_KO, default
#                                 srnic.ko at the repo root ("make module")
#   mod_deps KO [MODULE...]       modprobe -a KO's dependencies (modinfo -F
#                                 depends; modprobe loads theirs in turn) and
#                                 MODULEs; fails (with a message) if KO is
#                                 missing or modprobe fails
#   mod_load KO [MODULE...]       the one way tests load a module file:
#                                 mod_deps, then insmod KO
#   srnic_load [MODULE...]        mod_load "$KO" MODULE...
#
# RDMA
#   roce_gid_index DEV IP         print the index of DEV's RoCEv2 GID holding
#                                 IP: an IPv4 address (GID ::ffff:a.b.c.d) or
#                                 an IPv6 one (any notation); fail if none (yet)
#   counter DEV NAME              print hw counter NAME of DEV's port 1
#   srnic_pair_up [MODULE...]     srnic_load veth rdma_ucm MODULE...;
#                                 netns_pair_setup;
#                                 srnic_devs_ns as the check "IPv4 RoCEv2
#                                 GIDs present" (G0, G1 set). Exits the
#                                 script if a step fails.
#   snap [SNAP]                   remember every hw counter of the devices in
#                                 $SNAP_DEVS (default "srnic0 srnic1") in the
#                                 global associative array SNAP (default C0)
#   delta [SNAP] DEV NAME         growth of counter NAME of DEV since snap SNAP
#   delta_sum [SNAP] NAME         growth of NAME summed over $SNAP_DEVS
#   deltas LABEL [NAME...]        one line "info LABEL: DEV.NAME=GROWTH ..."
#                                 for every NAME (default: those in $CNTS) of
#                                 every device in $SNAP_DEVS that moved since
#                                 snap (C0)
#   rate_window FILE N [SKIP]     "FIRST LAST": the line numbers of FILE's
#                                 samples in which all N flows are under way
#                                 (FILE: a sampler's "t r1 .. rN ..." lines,
#                                 t the sample's end in s, a flow under way
#                                 at >= 0.01 MiB/s): after the one in which
#                                 the last flow started, before the one in
#                                 which the first flow ended, without those
#                                 that begin less than SKIP s (default 0)
#                                 after the last flow's first one began;
#                                 nothing if there are none
#   meminfo KEY                   the kB value of KEY (SUnreclaim, ...) in
#                                 /proc/meminfo
#   srnic_vmalloc                 "COUNT BYTES" of srnic's vmalloc'd buffers
#                                 (its rings) in /proc/vmallocinfo
#   srnic_devs_ns                 srnic0 on vethA in nsA, srnic1 on vethB in
#                                 nsB (after netns_pair_setup); G0, G1 = their
#                                 IPv4 RoCEv2 GID indexes; fails if a step does
#   srnic_devs_root               the same in the root netns (after
#                                 veth_pair_setup); a device already there is
#                                 kept
#   SRNIC_PROVIDER                the mode both make their devices in: rxe
#                                 (default: "type srnic", stock rdma-core's
#                                 rxe provider) or native ("type
#                                 srnic_native", and RDMAV_DRIVERS exported
#                                 so that libibverbs loads srnic's provider
#                                 from the build: $SRNIC_PROVIDER_LIB)
#   native_trio_up                srnic_load veth dummy rdma_ucm;
#                                 netns_pair_setup; srnic0 (nsA, vethA) and
#                                 srnic1 (nsB, vethB) made "type
#                                 srnic_native", srnicd "type srnic" on a
#                                 dummy netdev dum0 beside them, each a
#                                 check; G0, G1 set. Exits the script if a
#                                 step fails.
#   tagged TAG                    stdin's "ok NAME" / "not ok NAME" lines with
#                                 NAME prefixed "[TAG] " (t_from_output input)
#   srnic_pair_down [ERE]         checks "no kernel warnings" (t_kernel_clean
#                                 with ERE), deletes srnic0 and srnic1 (nsA,
#                                 nsB), "rmmod after traffic", and the log
#                                 again: five checks
#   pair NAME SRV... -- CLI...    SRV in netns $PAIR_SERVER_NS (default nsA)
#                                 in the background (timeout
#                                 $PAIR_SERVER_SECS, default 45), once
#                                 $PAIR_READY (a command for ready, default
#                                 pair_tcp_listening) succeeds CLI in netns
#                                 $PAIR_CLIENT_NS (default nsB) (timeout
#                                 $PAIR_CLIENT_SECS, default 40); an empty
#                                 netns name is the root netns (for
#                                 veth_pair_setup); both timeouts times
#                                 $SRNIC_TIME_SCALE (default 1; the debug
#                                 tier's KASAN kernel sets 8); PASS NAME iff
#                                 both exit 0,
#                                 else FAIL with the client's output (and
#                                 return 1)
#   pair_tcp_listening            a TCP socket LISTENs on 18515 (pingpong,
#                                 perftest) in $PAIR_SERVER_NS
#   pair_cm_listening             an rdma_cm id is in state LISTEN
#   time_scaled SECS              SECS times $SRNIC_TIME_SCALE (a timeout
#                                 that holds on the debug tier's kernel)
#
# Networks (10.99.0.0/24 only ever exists on veths inside the guest)
#   veth_pair_setup     root netns:  vethA 10.99.0.1/24 <-> vethB 10.99.0.2/24
#   netns_pair_setup    nsA: vethA 10.99.0.1/24 <-> nsB: vethB 10.99.0.2/24
#   veth_pkts IFACE     prints tx_packets + rx_packets of IFACE (this netns)
#   rxe_load            load rdma_rxe: modprobe, or insmod by path if the host's
#                       modprobe.d keeps it from loading (it and srnic both
#                       claim RDMA_DRIVER_RXE and UDP 4791)
#
# Topology made by veth_pair_setup (one netns, both addresses local):
#
#     rxe0/srnic0 on vethA 10.99.0.1 <==== veth ====> vethB 10.99.0.2 on rxe1/...
#
# Without policy routing the kernel sends traffic between two local addresses
# through `lo`, so RoCE frames would never cross the veth pair (and rxe drops
# frames that arrive on lo). veth_pair_setup therefore:
#   * moves the `local` table lookup from rule pref 0 to pref 1000;
#   * routes 10.99.0.2 out of vethA (table 100, pref 10: oif vethA) and
#     10.99.0.1 out of vethB (table 101, pref 11: oif vethB);
#   * makes locally generated traffic to the peer take that path even when no
#     output device is given (pref 20/21: iif lo to <peer>), which is also how
#     rdma_cm picks the source device;
#   * sets accept_local=1 (a packet from one local address arriving on the
#     other veth is accepted) and rp_filter=0 on all, default, vethA, vethB.
# Note: 6.1's rxe only works in init_net, so netns_pair_setup is for testing
# that limitation (and srnic's netns support), not for rxe traffic.
#
# Both setup functions are idempotent: calling them again keeps (or repairs)
# the same state; they return non-zero if the result is not as described.

T_PASS=0
T_FAIL=0
# No single quote in it: tests embed it in bash -c "... '$T_SPLAT_RE'".
T_SPLAT_RE='(^|\] )(WARNING|BUG|Oops|general protection|kernel BUG|UBSAN|ODEBUG)'
T_SPLAT_RE+='|BUG: (KASAN|KFENCE)|kmemleak: [0-9]+ new suspected'
T_SPLAT_RE+='|possible (circular|recursive) locking|inconsistent lock state'
T_SPLAT_RE+='|suspicious RCU usage|sleeping function called from invalid context'
T_SPLAT_RE+='|scheduling while atomic|bad unlock balance|held lock freed'
T_SPLAT_RE+='|list_(add|del) corruption|rcu.*(self-detected stall|detected stall)'
T_SPLAT_RE+='|soft lockup|hard LOCKUP|blocked for more than|workqueue lockup'
T_SPLAT_RE+='|Kernel panic|enqueued on deprecated workqueue'
T_BG_PIDS=()
T_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)

# ------------------------------------------------------------------ results

_t_line() {
	echo "$1"
	if [ -n "${T_RESULTS:-}" ]; then
		echo "$1" >>"$T_RESULTS"
	fi
}

t_ok() {
	T_PASS=$((T_PASS + 1))
	_t_line "PASS: $1"
	return 0
}

t_fail() {
	local name=$1
	shift
	T_FAIL=$((T_FAIL + 1))
	_t_line "FAIL: $name: ${*:-failed}"
	return 1
}

t_skip() {
	local name=$1
	shift
	_t_line "SKIP: $name: ${*:-skipped}"
	return 0
}

# _t_run CMD...: run CMD with stdout+stderr captured in $_t_out; sets _t_rc.
# No mktemp/cat/rm: every exec costs ~0.1 s under TCG.
_T_OUT=${TMPDIR:-/tmp}/t_out.$$
_t_run() {
	"$@" >"$_T_OUT" 2>&1 </dev/null
	_t_rc=$?
	_t_out=$(<"$_T_OUT")
}

_t_show_output() {
	[ -n "$_t_out" ] || return 0
	printf '%s\n' "$_t_out" | tail -n 30 | sed 's/^/  | /'
}

t_check() {
	local name=$1
	shift
	_t_run "$@"
	if [ "$_t_rc" -eq 0 ]; then
		t_ok "$name"
	else
		_t_show_output
		t_fail "$name" "exit $_t_rc: $*"
	fi
}

t_expect_fail() {
	local name=$1 pat=$2
	shift 2
	_t_run "$@"
	if [ "$_t_rc" -eq 0 ]; then
		_t_show_output
		t_fail "$name" "succeeded, expected failure: $*"
	elif ! printf '%s\n' "$_t_out" | grep -Eq -- "$pat"; then
		_t_show_output
		t_fail "$name" "exit $_t_rc but output does not match /$pat/: $*"
	else
		t_ok "$name"
	fi
}

t_eq() {
	if [ "$2" = "$3" ]; then
		t_ok "$1"
	else
		t_fail "$1" "got '$2', want '$3'"
	fi
}

_T_SUMMARIZED=
# t_reported_elsewhere: this guest's counts reach the summary of another
# (the second guest of a pair hands them to the first): no summary here,
# and its end is not an early one
t_reported_elsewhere() {
	_T_SUMMARIZED=1
}
t_summary() {
	_T_SUMMARIZED=1
	echo "$T_PASS passed, $T_FAIL failed"
	[ "$T_FAIL" -eq 0 ]
}

t_kernel_clean() {
	local icase=() name re=$T_SPLAT_RE hits
	[ "$1" != -i ] || { icase=(-i); shift; }
	name=$1
	if [ -n "${2:-}" ] && [ ${#icase[@]} -gt 0 ]; then
		# T_SPLAT_RE as it is, ERE in any case; lines in log order
		dmesg >"$_T_OUT"
		hits=$({ grep -nE -- "$re" "$_T_OUT"; grep -niE -- "$2" "$_T_OUT"; } |
			sort -t: -k1,1n -u | cut -d: -f2-)
	else
		[ -z "${2:-}" ] || re+="|$2"
		hits=$(dmesg | grep -E -- "$re")
	fi
	if [ -z "$hits" ]; then
		t_ok "$name"
	else
		printf '%s\n' "$hits" | head -n 20 | sed 's/^/  | /'
		t_fail "$name" "$(grep -c '' <<<"$hits") kernel log line(s) match the splat pattern"
	fi
}

# shellcheck disable=SC2053 # GLOB is a pattern
t_from_output() {
	local prog=$1 rc=$2 out=$3 glob=${4:-} line name
	while IFS= read -r line; do
		case $line in
		"ok "*) t_ok "${line#ok }" ;;
		"not ok "*)
			name=${line#not ok }
			t_fail "${name%%: *}" "${name#*: }"
			;;
		*) [ -n "$glob" ] && [[ $line == $glob ]] && echo "$line" ;;
		esac
	done <<<"$out"
	if ! t_eq "$prog ran to the end (exit status)" "$rc" 0; then
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/  | /'
	fi
	t_eq "$prog printed its done line" "$(grep -c "^${prog%.py}: done" <<<"$out")" 1
}

# ------------------------------------------------------------------ processes

with_timeout() {
	local secs=$1
	shift
	timeout --kill-after=5 "$secs" "$@"
}

bg_start() {
	local var=$1
	shift
	if [[ $- == *m* ]]; then
		# job control: the job already is its own process group
		"$@" &
	else
		# setsid execs CMD directly (a background job is not a group
		# leader), so $! is CMD's PID and also its process group id
		setsid "$@" &
	fi
	printf -v "$var" '%s' "$!"
	T_BG_PIDS+=("$!")
}

bg_stop() {
	local pid=$1 rc=0 keep=() p
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	rc=$?
	for p in "${T_BG_PIDS[@]}"; do
		[ "$p" = "$pid" ] || keep+=("$p")
	done
	T_BG_PIDS=("${keep[@]}")
	return "$rc"
}

wait_done() {
	local secs=$1 pid=$2 end
	end=$(($(_t_now_us) + secs * 1000000))
	while [ "$(_t_now_us)" -lt "$end" ]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			return
		fi
		sleep 0.1
	done
	echo "still running after ${secs} s: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
	echo w >/proc/sysrq-trigger
	dmesg | grep -A25 'task:.*state:D' | head -60 | sed 's/^/  | /'
	return 124
}

bg_cleanup() {
	local p
	for p in "${T_BG_PIDS[@]}"; do
		bg_stop "$p" || true
	done
	T_BG_PIDS=()
}
# A test (test_*.sh, or any script that counted a result) that ends before
# its summary line, by `exit` or an error, has its early end counted as a
# failure and its summary printed: the runner sees a count and where it
# stopped, not a test that printed nothing.
_t_exit() {
	local rc=$?
	bg_cleanup
	rm -f "$_T_OUT"
	[ -z "$_T_SUMMARIZED" ] || return 0
	case ${0##*/} in
	test_*) ;;
	*) [ $((T_PASS + T_FAIL)) -gt 0 ] || return 0 ;;
	esac
	t_fail "${0##*/} ended before its summary" "exit $rc"
	t_summary
}
trap _t_exit EXIT

# ------------------------------------------------------------------ waiting

_t_now_us() { echo "${EPOCHREALTIME/[.,]/}"; }

# tcp_listening PORT [NS]: a TCP socket LISTENs on PORT (IPv4 or IPv6), in
# netns NS when one is named
tcp_listening() {
	local re ns=()
	printf -v re ':%04X 0+:0000 0A' "$1"
	_pair_ns_prefix ns "${2:-}"
	"${ns[@]}" grep -sqiE "$re" /proc/net/tcp /proc/net/tcp6
}

wait_tcp_listen() { settle -t "${2:-10}" tcp_listening "$1"; }

wait_rdma_cm_listen() { settle -t "${1:-10}" pair_cm_listening; }

# Two guests of `tests/vm/vmrun --pair` meet through marker files in
# $VMRUN_SYNC, their shared directory:
#   sync_put NAME TEXT   publish $VMRUN_SYNC/NAME atomically
#   sync_await NAME SECS wait for it (1 after SECS), print its first line
#   nap SECS             sleep without an exec (read -t on a private fifo:
#                        every exec costs ~0.1 s under TCG); `nap 0` once
#                        in the main shell first, or each $(sync_await)
#                        makes a fifo of its own
_T_NAP_FD=
nap() {
	if [ -z "$_T_NAP_FD" ]; then
		local f=${TMPDIR:-/tmp}/t_nap.$$
		mkfifo "$f" && exec {_T_NAP_FD}<>"$f"
		rm -f "$f"
	fi
	read -r -t "$1" -u "$_T_NAP_FD" _ || true
}
sync_put() {
	printf '%s\n' "$2" >"$VMRUN_SYNC/.$1.tmp" && mv -f "$VMRUN_SYNC/.$1.tmp" "$VMRUN_SYNC/$1"
}
sync_await() {
	local f=$VMRUN_SYNC/$1 end=$(($(_t_now_us) + $2 * 1000000)) line
	while [ ! -f "$f" ]; do
		[ "$(_t_now_us)" -lt "$end" ] || return 1
		nap 0.2
	done
	read -r line <"$f"
	echo "$line"
}

# ------------------------------------------------------------------ networks

_t_sysctl() { echo "$2" >"/proc/sys/net/ipv4/conf/$1" 2>/dev/null; }

veth_pair_setup() {
	local dev rules
	modprobe veth || return 1
	# one exec for everything (each exec costs ~0.1 s under TCG); -force
	# goes on past "File exists" and friends on a second call
	ip -force -batch - >/dev/null 2>&1 <<-'EOF'
	link add vethA type veth peer name vethB
	addr replace 10.99.0.1/24 dev vethA
	addr replace 10.99.0.2/24 dev vethB
	link set vethA up
	link set vethB up
	rule add pref 1000 lookup local
	route replace 10.99.0.2 dev vethA src 10.99.0.1 table 100
	route replace 10.99.0.1 dev vethB src 10.99.0.2 table 101
	rule add pref 10 oif vethA lookup 100
	rule add pref 11 oif vethB lookup 101
	rule add pref 20 iif lo to 10.99.0.2 lookup 100
	rule add pref 21 iif lo to 10.99.0.1 lookup 101
	EOF
	for dev in all default vethA vethB; do
		_t_sysctl "$dev/accept_local" 1
		_t_sysctl "$dev/rp_filter" 0
	done
	rules=$(ip rule show)
	# drop the pref-0 local rule only once the pref-1000 one exists
	if [[ $rules == *"1000:"*"lookup local"* && $rules == "0:"*"lookup local"* ]]; then
		ip rule del pref 0 lookup local || return 1
		rules=$(ip rule show)
	fi
	_t_expect_lines "veth_pair_setup" "$rules
$(ip -4 -o addr show dev vethA) $(ip -4 -o addr show dev vethB)" \
		"1000:	from all lookup local" \
		"10:	from all oif vethA lookup 100" \
		"11:	from all oif vethB lookup 101" \
		"20:	from all to 10.99.0.2 iif lo lookup 100" \
		"21:	from all to 10.99.0.1 iif lo lookup 101" \
		"inet 10.99.0.1/24" "inet 10.99.0.2/24" || return 1
	[[ $rules != "0:"*"lookup local"* ]] || { echo "veth_pair_setup: pref 0 rule still there" >&2; return 1; }
}

netns_pair_setup() {
	local ns
	modprobe veth || return 1
	# not in an -batch: `netns add` unshares the ip process itself
	for ns in nsA nsB; do
		[ -e "/run/netns/$ns" ] || ip netns add "$ns" || return 1
	done
	# created from inside nsA: 6.1 checks the new name in the caller's netns,
	# which clashes with veth_pair_setup's vethA
	ip -n nsA link add vethA type veth peer name vethB netns nsB 2>/dev/null
	ip -n nsA -force -batch - >/dev/null 2>&1 <<-'EOF'
	link set lo up
	addr replace 10.99.0.1/24 dev vethA
	link set vethA up
	EOF
	ip -n nsB -force -batch - >/dev/null 2>&1 <<-'EOF'
	link set lo up
	addr replace 10.99.0.2/24 dev vethB
	link set vethB up
	EOF
	_t_expect_lines "netns_pair_setup" \
		"$(ip -n nsA -4 -o addr show dev vethA) $(ip -n nsB -4 -o addr show dev vethB)" \
		"inet 10.99.0.1/24" "inet 10.99.0.2/24"
}

# netem SPEC...: the same netem on both ends of netns_pair_setup's pair
# (the egress of vethA and of vethB)
netem() {
	tc -n nsA qdisc replace dev vethA root netem "$@" &&
		tc -n nsB qdisc replace dev vethB root netem "$@"
}
# unshape: no root qdisc on vethA and vethB (netem's or any other); never fails
unshape() {
	tc -n nsA qdisc del dev vethA root 2>/dev/null
	tc -n nsB qdisc del dev vethB root 2>/dev/null
	return 0
}

# _t_expect_lines WHO TEXT SUBSTRING...: every SUBSTRING occurs in TEXT.
_t_expect_lines() {
	local who=$1 text=$2 s
	shift 2
	for s in "$@"; do
		if [[ $text != *"$s"* ]]; then
			echo "$who: missing '$s'" >&2
			return 1
		fi
	done
}

rxe_load() {
	local ko
	modprobe rdma_rxe 2>/dev/null && return 0
	ko=$(modinfo -n rdma_rxe) || return 1
	mod_load "$ko"
}

veth_pkts() {
	local d=/sys/class/net/$1/statistics tx rx
	read -r tx <"$d/tx_packets" || return 1
	read -r rx <"$d/rx_packets" || return 1
	echo $((tx + rx))
}

settle() {
	local _secs=$((5 * ${SRNIC_TIME_SCALE:-1})) _end
	if [ "$1" = -t ]; then
		_secs=$2
		shift 2
	fi
	_end=$(($(_t_now_us) + _secs * 1000000))
	until "$@"; do
		[ "$(_t_now_us)" -lt "$_end" ] || return 1
		sleep 0.1
	done
}
# a KASAN guest under TCG starts a perftest server in tens of seconds
ready() { settle -t "${SRNIC_READY_SECS:-20}" "$@"; }

# _t_ipv6_full ADDR: ADDR in the sysfs GID notation (8 x 4 hex digits).
_t_ipv6_full() {
	local a=$1 h=() t=() g=() n=0 i
	if [[ $a == *::* ]]; then
		IFS=: read -ra h <<<"${a%%::*}"
		IFS=: read -ra t <<<"${a#*::}"
		n=$((8 - ${#h[@]} - ${#t[@]}))
	else
		IFS=: read -ra h <<<"$a"
	fi
	g=("${h[@]}")
	for ((i = 0; i < n; i++)); do g+=(0); done
	g+=("${t[@]}")
	[ "${#g[@]}" -eq 8 ] || return 1
	for i in "${!g[@]}"; do
		[[ ${g[$i]} =~ ^[0-9a-fA-F]{1,4}$ ]] || return 1
		printf -v "g[$i]" '%04x' "$((16#${g[$i]}))"
	done
	(IFS=:; echo "${g[*]}")
}

roce_gid_index() {
	local dev=$1 ip=$2 want i g t d=/sys/class/infiniband/$1/ports/1
	if [[ $ip == *:* ]]; then
		want=$(_t_ipv6_full "$ip") || return 1
	else
		# shellcheck disable=SC2086 # the four octets as four arguments
		want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ip//./ })
	fi
	for i in $(seq 0 15); do
		read -r g <"$d/gids/$i" 2>/dev/null || continue
		[ "$g" = "$want" ] || continue
		t=
		read -r t <"$d/gid_attrs/types/$i" 2>/dev/null
		[ -z "$t" ] || [ "$t" = "RoCE v2" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

# ------------------------------------------------------------------ modules

KO=${SRNIC_KO:-$T_REPO/srnic.ko}

mod_deps() {
	local ko=$1 deps
	shift
	[ -f "$ko" ] || { echo "$ko missing (srnic.ko: run make module first)" >&2; return 1; }
	IFS=, read -ra deps <<<"$(modinfo -F depends "$ko")"
	# modprobe -a with no name fails
	[ $((${#deps[@]} + $#)) -gt 0 ] || return 0
	modprobe -a "${deps[@]}" "$@" || { echo "mod_deps: modprobe -a ${deps[*]} $* failed" >&2; return 1; }
}
mod_load() { mod_deps "$@" && insmod "$1"; }
srnic_load() { mod_load "$KO" "$@"; }

counter() { cat /sys/class/infiniband/"$1"/ports/1/hw_counters/"$2"; }
# counter_ge DEV NAME MIN: DEV's counter NAME is MIN or more now (for settle,
# which runs its command again and again: a "$(counter ...)" argument would
# be read once)
counter_ge() { [ "$(counter "$1" "$2")" -ge "$3" ]; }
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
srnic_vmalloc() {
	awk '/srnic/ { n++; b += $2 } END { print n + 0, b + 0 }' /proc/vmallocinfo
}

SNAP_DEVS="srnic0 srnic1"
# read, not cat: one snapshot reads ~100 files, and each exec costs ~0.1 s
# under TCG
# shellcheck disable=SC2120 # SNAP is optional
snap() {
	local name=${1:-C0} d f v
	unset "$name"
	declare -gA "$name=()"
	local -n _s=$name
	for d in $SNAP_DEVS; do
		# a device not made yet, or deleted: not in the snapshot
		[ -d "/sys/class/infiniband/$d" ] || continue
		for f in /sys/class/infiniband/"$d"/ports/1/hw_counters/*; do
			read -r v <"$f" && _s[$d.${f##*/}]=$v
		done
	done
}
delta() {
	[ $# -eq 3 ] || set -- C0 "$@"
	local -n _d=$1
	local v
	read -r v <"/sys/class/infiniband/$2/ports/1/hw_counters/$3" || return 1
	echo $((v - ${_d[$2.$3]}))
}
delta_sum() {
	[ $# -eq 2 ] || set -- C0 "$@"
	local d n=0
	for d in $SNAP_DEVS; do
		n=$((n + $(delta "$1" "$d" "$2")))
	done
	echo "$n"
}
rate_window() {
	awk -v n="$2" -v skip="${3:-0}" '{ t[NR] = $1
			for (i = 2; i <= n + 1; i++) if ($i >= 0.01) { if (!f[i]) f[i] = NR; e[i] = NR } }
		END { lo = 0; hi = NR + 1
			for (i = 2; i <= n + 1; i++) {
				if (!f[i]) exit
				if (f[i] > lo) lo = f[i]; if (e[i] < hi) hi = e[i] }
			first = lo + 1
			while (first < hi && t[first - 1] < t[lo - 1] + skip) first++
			if (first < hi) print first, hi - 1 }' "$1"
}
deltas() {
	local line="info $1:" d c v
	shift
	# shellcheck disable=SC2086 # a list of names
	[ $# -gt 0 ] || set -- $CNTS
	for d in $SNAP_DEVS; do
		for c in "$@"; do
			v=$(delta "$d" "$c")
			[ "$v" = 0 ] || line+=" $d.$c=$v"
		done
	done
	echo "$line"
}

# the link type of SRNIC_PROVIDER's mode; native: the provider loaded
SRNIC_PROVIDER_LIB=$T_REPO/build/userspace/provider/libsrnic
case ${SRNIC_PROVIDER:=rxe} in
rxe) SRNIC_LINK_TYPE=srnic ;;
native)
	SRNIC_LINK_TYPE=srnic_native
	export RDMAV_DRIVERS=$SRNIC_PROVIDER_LIB
	;;
*) echo "lib.sh: SRNIC_PROVIDER=$SRNIC_PROVIDER: rxe or native" >&2; exit 2 ;;
esac
srnic_devs_ns() {
	ip netns exec nsA rdma link add srnic0 type "$SRNIC_LINK_TYPE" netdev vethA &&
		ip netns exec nsB rdma link add srnic1 type "$SRNIC_LINK_TYPE" netdev vethB &&
		G0=$(ready roce_gid_index srnic0 10.99.0.1) &&
		G1=$(ready roce_gid_index srnic1 10.99.0.2)
}
srnic_devs_root() {
	{ [ -e /sys/class/infiniband/srnic0 ] ||
		rdma link add srnic0 type "$SRNIC_LINK_TYPE" netdev vethA; } &&
		{ [ -e /sys/class/infiniband/srnic1 ] ||
			rdma link add srnic1 type "$SRNIC_LINK_TYPE" netdev vethB; } &&
		G0=$(settle roce_gid_index srnic0 10.99.0.1) &&
		G1=$(settle roce_gid_index srnic1 10.99.0.2)
}

# _t_setup_failed STEP: a set-up step failed: show why (kernel log, links,
# GID tables), count it (unless STEP is "", already counted by t_check),
# print the summary line and exit 1, so the runner sees the count and the
# cause rather than a test that printed nothing
_t_setup_failed() {
	local d
	[ -z "$1" ] || t_fail "set-up: $1" "see the state below"
	dmesg | tail -n 30 | sed 's/^/  | dmesg: /'
	for d in nsA nsB; do
		ip netns exec "$d" rdma link show 2>&1 | sed "s/^/  | $d: /"
	done
	for d in /sys/class/infiniband/*/ports/1/gids/[0-3]; do
		[ -e "$d" ] && echo "  | $d: $(cat "$d" 2>&1)"
	done
	t_summary
	exit 1
}

srnic_pair_up() {
	srnic_load veth rdma_ucm "$@" || _t_setup_failed "srnic_load veth rdma_ucm $*"
	netns_pair_setup || _t_setup_failed "netns_pair_setup"
	t_check "IPv4 RoCEv2 GIDs present" srnic_devs_ns || _t_setup_failed ""
}

native_trio_up() {
	srnic_load veth dummy rdma_ucm || _t_setup_failed "srnic_load"
	netns_pair_setup || _t_setup_failed "netns_pair_setup"
	{ ip link add dum0 type dummy && ip link set dum0 up; } ||
		_t_setup_failed "dummy netdev"
	t_check "rdma link add srnic0 type srnic_native (nsA)" \
		ip netns exec nsA rdma link add srnic0 type srnic_native netdev vethA
	t_check "rdma link add srnic1 type srnic_native (nsB)" \
		ip netns exec nsB rdma link add srnic1 type srnic_native netdev vethB
	t_check "rdma link add srnicd type srnic (default mode, beside them)" \
		rdma link add srnicd type srnic netdev dum0
	G0=$(ready roce_gid_index srnic0 10.99.0.1) || _t_setup_failed "srnic0 GID"
	G1=$(ready roce_gid_index srnic1 10.99.0.2) || _t_setup_failed "srnic1 GID"
}

# native_trio_down: undo native_trio_up (each step checked, the kernel log
# clean before and after)
native_trio_down() {
	t_kernel_clean "no kernel warnings"
	t_check "rdma link delete srnic0" ip netns exec nsA rdma link delete srnic0
	t_check "rdma link delete srnic1" ip netns exec nsB rdma link delete srnic1
	t_check "rdma link delete srnicd" rdma link delete srnicd
	t_check "rmmod" rmmod srnic
	t_kernel_clean "still no kernel warnings after teardown"
}

tagged() { sed -E "s/^(ok|not ok) /\1 [$1] /"; }

# srnic_pair_down [ERE]: undo srnic_pair_up after a test's traffic: a clean
# kernel log (t_kernel_clean, ERE its extra lines), the two devices deleted,
# the module removed, the log still clean (each checked)
# shellcheck disable=SC2120 # ERE is optional
# doctor_has NS DEV CHECK STATUS TEXT...: `srnicctl doctor` (no self-test),
# run in netns NS, has a record of CHECK for DEV with STATUS (ok, warn,
# fail) whose detail or fix holds every TEXT
doctor_has() {
	local ns=$1
	shift
	# shellcheck disable=SC2016 # python, not shell
	ip netns exec "$ns" "$T_REPO/build/userspace/ctl/srnicctl" -j doctor --no-selftest 2>/dev/null |
		python3 -c '
import json, sys
dev, check, status, texts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
sys.exit(not any(c["check"] == check and c.get("dev") == dev and c["status"] == status and
                 all(t in c["detail"] + " " + c.get("fix", "") for t in texts)
                 for c in json.load(sys.stdin)))' "$@"
}

# dc_ping_badkey LABEL GID_A GID_B [reverse]: srnic_dc_pingpong between the
# native devices srnic0 (nsA, the server, its GID index GID_A) and srnic1
# (nsB, GID_B), or with "reverse" srnic1 the server and srnic0 the client:
# the client's ping (50 x 1 KiB echoed, bytes checked) and badkey (a wrong
# key's NAK, then served) modes, each one's checks named "[LABEL DC MODE]",
# and the server's exit status
dc_ping_badkey() {
	local label=$1 m out dcsrv=
	local sns=nsA sdev=srnic0 sg=$2 sip=10.99.0.1 cns=nsB cdev=srnic1 cg=$3
	local dc=(env RDMAV_DRIVERS="$SRNIC_PROVIDER_LIB"
		"$T_REPO/build/userspace/tools/srnic_dc_pingpong")
	if [ "${4:-}" = reverse ]; then
		sns=nsB sdev=srnic1 sg=$3 sip=10.99.0.2 cns=nsA cdev=srnic0 cg=$2
	fi
	bg_start dcsrv timeout 150 ip netns exec "$sns" "${dc[@]}" -d "$sdev" -g "$sg" \
		-s -n 1 -c 2 >/tmp/dcsrv.txt 2>&1
	ready tcp_listening 18515 "$sns"
	for m in ping badkey; do
		out=$(with_timeout 90 ip netns exec "$cns" "${dc[@]}" -d "$cdev" -g "$cg" \
			-m "$m" -i 50 -S 1024 "$sip" 2>&1)
		t_from_output "$label DC $m" $? "$(sed -E "s/^(ok|not ok) /\1 [$label DC $m] /;
			s/^srnic_dc_pingpong: done/$label DC $m: done/" <<<"$out")" "#*"
	done
	wait "$dcsrv"
	t_eq "$label: the DC server's exit status" $? 0 || sed 's/^/  | /' /tmp/dcsrv.txt
}

# pair_link_add TYPE NETDEV_A NETDEV_B: srnic0 on NETDEV_A (nsA) and srnic1
# on NETDEV_B (nsB), of rdma link type TYPE; a check each
pair_link_add() {
	t_check "rdma link add srnic0 type $1 netdev $2 (nsA)" \
		ip netns exec nsA rdma link add srnic0 type "$1" netdev "$2"
	t_check "rdma link add srnic1 type $1 netdev $3 (nsB)" \
		ip netns exec nsB rdma link add srnic1 type "$1" netdev "$3"
}

srnic_pair_down() {
	t_kernel_clean "no kernel warnings" "${1:-}"
	t_check "rdma link delete srnic0" ip netns exec nsA rdma link delete srnic0
	t_check "rdma link delete srnic1" ip netns exec nsB rdma link delete srnic1
	t_check "rmmod after traffic" rmmod srnic
	t_kernel_clean "still no kernel warnings after teardown" "${1:-}"
}

# _pair_ns_prefix VAR NS: array VAR = the words that run a command in netns
# NS (none for the root netns, NS empty)
_pair_ns_prefix() {
	local -n _pfx=$1
	_pfx=()
	[ -z "$2" ] || _pfx=(ip netns exec "$2")
}

pair_tcp_listening() { tcp_listening 18515 "$PAIR_SERVER_NS"; }
pair_cm_listening() { rdma res show cm_id 2>/dev/null | grep -q 'state LISTEN'; }

# ll_ready NS DEV: DEV in netns NS has its IPv6 link-local address and it is
# no longer tentative (DAD done). ib_core resolves the peer of a QP on a
# link-local RoCE v2 GID through it: moving the QP to RTR fails until then.
ll_ready() {
	local a
	a=$(ip -n "$1" -6 addr show dev "$2" scope link) &&
		[[ $a == *fe80::* && $a != *tentative* ]]
}

# bw_bg_start X0 X1: ib_write_bw -s 65536 -D 20 from srnic1 (netns nsB, GID
# index X1) to srnic0 (nsA, GID index X0) in the background, each end under
# a 60 s timeout (PIDs in BW_CLI and BW_SRV); true once srnic0 has received
# 500 more packets, false if not within 20 s. For a test that breaks
# something under traffic, then bw_bg_ended.
_BW_LOG=${TMPDIR:-/tmp}/t_bw.$$
# (in ib_core's exclusive netns mode only nsA sees srnic0)
_bw_rcvd() {
	local f=/sys/class/infiniband/srnic0/ports/1/hw_counters/rcvd_pkts
	cat "$f" 2>/dev/null || ip netns exec nsA cat "$f"
}
_bw_rcvd_ge() { [ "$(_bw_rcvd)" -ge "$1" ]; }
bw_bg_start() {
	local n0
	BW_SRV='' BW_CLI=''
	n0=$(_bw_rcvd) || return 1
	bg_start BW_SRV ip netns exec nsA timeout 60 ib_write_bw -d srnic0 -x "$1" -s 65536 -D 20 \
		-F >"$_BW_LOG.srv" 2>&1
	ready pair_tcp_listening
	bg_start BW_CLI ip netns exec nsB timeout 60 ib_write_bw -d srnic1 -x "$2" -s 65536 -D 20 \
		-F 10.99.0.1 >"$_BW_LOG.cli" 2>&1
	settle -t 20 _bw_rcvd_ge $((n0 + 500))
}

# bw_bg_ended WHAT: both ends of bw_bg_start's ib_write_bw exited by
# themselves (not at their timeout) after WHAT, each checked
bw_bg_ended() {
	local rc_c rc_s
	if [ -z "${BW_CLI:-}" ] || [ -z "${BW_SRV:-}" ]; then
		t_fail "ib_write_bw ended by itself after $1" "bw_bg_start did not start both ends"
		return
	fi
	wait_done 70 "$BW_CLI"
	rc_c=$?
	wait_done 70 "$BW_SRV"
	rc_s=$?
	bg_stop "$BW_CLI"
	bg_stop "$BW_SRV"
	[ "$rc_c" -ne 124 ] && [ "$rc_s" -ne 124 ] ||
		tail -n 15 "$_BW_LOG.cli" "$_BW_LOG.srv" | sed 's/^/  | /'
	rm -f "$_BW_LOG.cli" "$_BW_LOG.srv"
	t_check "ib_write_bw client ended by itself after $1 (exit $rc_c)" test "$rc_c" -ne 124
	t_check "ib_write_bw server ended by itself after $1 (exit $rc_s)" test "$rc_s" -ne 124
}

# srnic's tracepoints through tracefs, one way for every test:
#   trace_mount: tracefs mounted at $TRACEFS
#   trace_start [-b KB] [-f EVENT FILTER]... EVENT...: tracefs mounted, the
#       ring buffer emptied (KB per CPU with -b), only these srnic events
#       enabled (EVENT's -f FILTER: a tracefs filter expression), tracing on
#   trace_stop [FILE]: srnic events off, their filters cleared, tracing
#       off; the trace saved to FILE when given ("$TRACEFS/trace" keeps it
#       until the next trace_start)
#   trace_overruns: events the ring buffer overwrote since trace_start
TRACEFS=/sys/kernel/tracing
trace_mount() {
	mountpoint -q "$TRACEFS" || mount -t tracefs nodev "$TRACEFS"
}
trace_start() {
	local ev
	trace_mount
	echo 0 >"$TRACEFS/tracing_on"
	echo 0 >"$TRACEFS/events/srnic/enable"
	while [ $# -gt 0 ]; do
		case $1 in
		-b) echo "$2" >"$TRACEFS/buffer_size_kb"; shift 2 ;;
		-f) echo "$3" >"$TRACEFS/events/srnic/$2/filter"; shift 3 ;;
		*) break ;;
		esac
	done
	: >"$TRACEFS/trace"
	for ev in "$@"; do echo 1 >"$TRACEFS/events/srnic/$ev/enable"; done
	echo 1 >"$TRACEFS/tracing_on"
}
trace_stop() {
	echo 0 >"$TRACEFS/events/srnic/enable"
	echo 0 >"$TRACEFS/events/srnic/filter"
	echo 0 >"$TRACEFS/tracing_on"
	[ $# -eq 0 ] || cat "$TRACEFS/trace" >"$1"
}
trace_overruns() {
	cat "$TRACEFS"/per_cpu/cpu*/stats |
		awk '/^overrun:/ { n += $2 } END { print n + 0 }'
}

# how much slower than the stock kernel the guest runs (the debug tier: 8)
SRNIC_TIME_SCALE=${SRNIC_TIME_SCALE:-1}
time_scaled() { echo $(($1 * SRNIC_TIME_SCALE)); }
PAIR_SERVER_NS=nsA
PAIR_CLIENT_NS=nsB
PAIR_SERVER_SECS=45
PAIR_CLIENT_SECS=40
PAIR_READY=pair_tcp_listening
# commands the server and the client run under, e.g. (taskset -c 0)
PAIR_SERVER_PREFIX=()
PAIR_CLIENT_PREFIX=()

pair() {
	local name=$1 srv=() cli=() srv_ns=() cli_ns=() pid rc_c rc_s out
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	_pair_ns_prefix srv_ns "$PAIR_SERVER_NS"
	_pair_ns_prefix cli_ns "$PAIR_CLIENT_NS"
	out=$(mktemp)
	bg_start pid timeout --kill-after=5 "$((PAIR_SERVER_SECS * SRNIC_TIME_SCALE))" \
		"${srv_ns[@]}" "${PAIR_SERVER_PREFIX[@]}" "${srv[@]}"
	ready "$PAIR_READY"
	with_timeout "$((PAIR_CLIENT_SECS * SRNIC_TIME_SCALE))" "${cli_ns[@]}" \
		"${PAIR_CLIENT_PREFIX[@]}" "${cli[@]}" >"$out" 2>&1
	rc_c=$?
	wait "$pid"
	rc_s=$?
	if [ "$rc_c" -eq 0 ] && [ "$rc_s" -eq 0 ]; then
		t_ok "$name"
	else
		sed 's/^/  | /' "$out"
		t_fail "$name" "client exit $rc_c, server exit $rc_s"
	fi
	rc_c=$?
	rm -f "$out"
	return "$rc_c"
}

# rc_xfer_report FILE: turn tests/vm/rc_xfer.py's lines into results
rc_xfer_report() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) t_ok "${line#ok }" ;;
		"not ok "*) line=${line#not ok }; t_fail "${line%%: *}" "${line#*: }" ;;
		"info "*) echo "$line" ;;
		esac
	done <"$1"
}

# rc_xfer [-c SCPU:CCPU] TAG CLIENT_ARGS...: tests/vm/rc_xfer.py (every byte
# verified) with its server on srnic0 in nsA and its client on srnic1 in
# nsB, each pinned to a CPU with -c; its output in $RC_XFER_OUT
RC_XFER_PORT=18600
RC_XFER_OUT=/tmp/rc_xfer.out
rc_xfer() {
	local srv_pin=() cli_pin=() tag pid rc
	local py=/usr/bin/python3 xfer
	xfer=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/rc_xfer.py
	if [ "$1" = -c ]; then
		srv_pin=(taskset -c "${2%%:*}")
		cli_pin=(taskset -c "${2#*:}")
		shift 2
	fi
	tag=$1
	shift
	RC_XFER_PORT=$((RC_XFER_PORT + 1))
	bg_start pid timeout --kill-after=5 "$(time_scaled 290)" ip netns exec nsA \
		"${srv_pin[@]}" "$py" "$xfer" server --dev srnic0 --port "$RC_XFER_PORT"
	ready tcp_listening "$RC_XFER_PORT" nsA
	with_timeout "$(time_scaled 280)" ip netns exec nsB "${cli_pin[@]}" "$py" "$xfer" \
		client --dev srnic1 --port "$RC_XFER_PORT" --tag "$tag: " "$@" \
		>"$RC_XFER_OUT" 2>&1
	rc=$?
	bg_stop "$pid" >/dev/null
	rc_xfer_report "$RC_XFER_OUT"
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok' "$RC_XFER_OUT"; then
		sed 's/^/  | /' "$RC_XFER_OUT"
		t_fail "$tag: rc_xfer.py" "exit $rc"
	fi
	return "$rc"
}

# srnic_knob DEV NAME: the path of device DEV's knob NAME (sysfs srnic/)
srnic_knob() { echo "/sys/class/infiniband/$1/srnic/$2"; }
# srnic_knob_set NAME VALUE DEV...: VALUE into knob NAME of every DEV
srnic_knob_set() {
	local name=$1 value=$2 d
	shift 2
	for d in "$@"; do
		echo "$value" >"$(srnic_knob "$d" "$name")" || return 1
	done
}

# bw_avg FILE [SIZE]: perftest's average bandwidth (MB/s column) of its SIZE
# (default 65536) line in FILE, if it printed one
bw_avg() { awk -v s="${2:-65536}" '$1 == s && NF >= 5 { print $4 }' "$1" | tail -n 1; }
