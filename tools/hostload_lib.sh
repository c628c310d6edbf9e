# shellcheck shell=bash
# Sourced by tools/bench.sh and tools/dc-bench.sh: the host's load while a
# VM run of theirs ran. Host load = CPU time used by processes other than
# the benchmark (/proc/stat busy time minus this shell's children's CPU
# time) per second of wall time, in cores.
#
#   hostload_start FILE   before the run
#   hostload_end FILE     after it: HOST_WALL (s), HOST_OTHER (cores) and
#                         HOST_LOAD ("wall W s, benchmark CPU B cores, other
#                         processes O cores, loadavg L0 -> L1")
# Both in the benchmark's own shell, never in a $(...) subshell (`times`
# must see its children); FILE: a scratch file they write and remove.

# busy_ticks: non-idle jiffies of all CPUs (/proc/stat, USER_HZ).
busy_ticks() {
	local _cpu user nice sys _idle _iowait irq softirq steal _rest
	read -r _cpu user nice sys _idle _iowait irq softirq steal _rest </proc/stat
	echo $((user + nice + sys + irq + softirq + steal))
}

# _hostload_child_cpu FILE: CHILD_CPU = user+sys seconds of this shell's
# waited-for children
_hostload_child_cpu() {
	times >"$1"
	CHILD_CPU=$(awk 'NR == 2 { split($0, f, /[ms ]+/); print f[1] * 60 + f[2] + f[3] * 60 + f[4] }' "$1")
	rm -f "$1"
}

hostload_start() {
	_HL_LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
	_hostload_child_cpu "$1"
	_HL_B0=$(busy_ticks) _HL_C0=$CHILD_CPU _HL_T0=$EPOCHREALTIME
}

hostload_end() {
	local t1 b1 c1 load1
	_hostload_child_cpu "$1"
	t1=$EPOCHREALTIME b1=$(busy_ticks) c1=$CHILD_CPU
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	# shellcheck disable=SC2034 # HOST_WALL and HOST_OTHER: for the caller
	read -r HOST_WALL HOST_OTHER HOST_LOAD < <(awk -v t0="$_HL_T0" -v t1="$t1" -v b0="$_HL_B0" -v b1="$b1" \
		-v c0="$_HL_C0" -v c1="$c1" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { w = t1 - t0; o = ((b1 - b0) / hz - (c1 - c0)) / w; if (o < 0) o = 0;
			 printf "%.0f %.2f wall %.0f s, benchmark CPU %.2f cores, other processes %.2f cores\n", w, o, w, (c1 - c0) / w, o }')
	HOST_LOAD+=", loadavg $_HL_LOAD0 -> $load1"
}
