#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnicctl against a live srnic, run inside the VM; every check asserts on
# srnicctl's -j output (parsed with python3):
#
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#   (perftest server)                        (perftest client)
#
# dev add/del (and `rdma dev` agreeing), show, stats (counters move with
# traffic), qp (srnic's -dd attributes), doctor (passes, loopback self-test included; then reports a
# netdev set down with its fix), dcqcn show/set (knobs, a refused value, an
# unknown knob), top (per-QP bytes move under ib_write_bw, retransmits under
# netem loss, each interval reaches a pipe as it ends) and lat (the histogram
# has samples).
#
# dcqcn (and show's DCQCN state) needs the module's roce_np/roce_rp knobs,
# top and lat its srnic:* tracepoints, qp its -dd driver attributes: without
# them those checks FAIL, they are not skipped.
set -u
cd "$(dirname "$0")/../.."
. tests/vm/lib.sh

CTL=$PWD/build/userspace/ctl/srnicctl
[ -x "$CTL" ] || { echo "srnicctl missing: run make userspace first"; exit 1; }

srnic_load veth sch_netem rdma_ucm || exit 1
veth_pair_setup || exit 1
# top and lat find the tracepoints through tracefs
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

OUT=$(mktemp -d)
ctl() { "$CTL" "$@"; }
# jq-like checks: py 'EXPR' FILE evaluates EXPR with j = the JSON in FILE
# (for top, the list of per-interval arrays) and r = tests/vm/roce_pcap.py;
# exit 0 iff it is true.
py() {
	python3 - "$1" "$2" <<-'PYEOF'
	import json, sys
	sys.path.insert(0, "tests/vm")
	import roce_pcap
	expr, path = sys.argv[1], sys.argv[2]
	text = open(path).read()
	try:
	    j = json.loads(text)
	except ValueError:
	    j = [json.loads(line) for line in text.splitlines() if line.strip()]
	ok = eval(expr, {"j": j, "r": roce_pcap, "any": any, "all": all, "sum": sum,
	                 "len": len})
	if not ok:
	    print("JSON was (%d documents):" % len(j), text[:3000])
	sys.exit(0 if ok else 1)
	PYEOF
}
# jcheck NAME EXPR CMD...: CMD must exit 0 and EXPR hold on its stdout
jcheck() {
	local name=$1 expr=$2 f=$OUT/out.json
	shift 2
	if ! "$@" >"$f" 2>"$OUT/err"; then
		sed 's/^/  | /' "$OUT/err" "$f" | tail -n 20
		t_fail "$name" "exit status non-zero: $*"
		return
	fi
	t_check "$name" py "$expr" "$f"
}
in_rdma_dev() { rdma dev show | grep -q "^[0-9]*: $1:"; }

# ------------------------------------------------------------------ dev
jcheck "dev add srnic0: JSON record of the new srnic device" \
	'len(j) == 1 and j[0]["name"] == "srnic0" and j[0]["kind"] == "srnic" and j[0]["netdev"] == "vethA"' \
	ctl -j dev add srnic0 netdev vethA
t_check "srnic0 appears in rdma dev" in_rdma_dev srnic0
jcheck "dev add srnic1 on vethB" 'j[0]["name"] == "srnic1"' ctl -j dev add srnic1 netdev vethB
t_expect_fail "dev add: duplicate name refused" '^srnicctl: an RDMA device named srnic0 already exists' \
	ctl dev add srnic0 netdev vethB
t_expect_fail "dev add: unknown netdev refused" '^srnicctl: no netdev nonexistent0' \
	ctl dev add srnic9 netdev nonexistent0
t_check "nothing left behind by the bad adds" bash -c "! rdma dev show | grep -q srnic9"
G0=$(settle roce_gid_index srnic0 10.99.0.1)
G1=$(settle roce_gid_index srnic1 10.99.0.2)
t_check "IPv4 RoCEv2 GIDs present" test -n "$G0" -a -n "$G1"
port_active() { ctl -j show "$1" | grep -q '"state":"ACTIVE"'; }
settle port_active srnic0

# ------------------------------------------------------------------ show
jcheck "show: both devices, port ACTIVE, netdev, MTU 1500 -> IB MTU 1024" \
	'sorted(r["dev"] for r in j) == ["srnic0", "srnic1"] and all(r["port"] == 1 and r["state"] == "ACTIVE" and r["mtu"] == 1500 and r["active_mtu"] == 1024 for r in j) and [r["netdev"] for r in j if r["dev"] == "srnic0"] == ["vethA"]' \
	ctl -j show
jcheck "show srnic0: its IPv4 RoCE v2 GID" \
	'len(j) == 1 and any(g["gid"] == "::ffff:10.99.0.1" and g["type"] == "RoCE v2" for g in j[0]["gids"])' \
	ctl -j show srnic0
jcheck "show: DCQCN state (roce_np/roce_rp enable) reported" \
	'all(isinstance(r["dcqcn"], dict) and isinstance(r["dcqcn"].get("np"), bool) and isinstance(r["dcqcn"].get("rp"), bool) for r in j)' \
	ctl -j show
srnic_knob_set tx_batch 1 srnic1
jcheck "show: modes (provider, repath_timeouts, rx_steer, rx_spread, tx_batch) as sysfs has them" \
	'all(r["modes"]["provider"] == "rxe" and r["modes"]["repath_timeouts"] == 0 and r["modes"]["rx_steer"] is False and r["modes"]["rx_spread"] is True and r["modes"]["tx_batch"] is (r["dev"] == "srnic1") for r in j)' \
	ctl -j show
srnic_knob_set tx_batch 0 srnic1
t_expect_fail "show: unknown device" 'no RDMA device nosuch' ctl show nosuch

# ------------------------------------------------------------------ traffic
# bw NAME ARGS...: ib_write_bw srnic0 (server) <- srnic1 (client), a lib.sh
# pair in the root netns (veth_pair_setup)
PAIR_SERVER_NS=
PAIR_CLIENT_NS=
PAIR_SERVER_SECS=90
PAIR_CLIENT_SECS=80
bw() {
	local name=$1
	shift
	pair "$name" ib_write_bw -d srnic0 -x "$G0" -F "$@" -- \
		ib_write_bw -d srnic1 -x "$G1" -F "$@" 10.99.0.1
}

ctl -j stats srnic1 >"$OUT/stats0.json"
bw "ib_write_bw 64 KiB x 200" -s 65536 -n 200
jcheck "stats: sent_pkts of srnic1 moved with the traffic" \
	"j[0]['sent_pkts'] > $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["sent_pkts"])' "$OUT/stats0.json") + 200" \
	ctl -j stats srnic1
jcheck "stats: every counter is a number, one record per port" \
	'len(j) == 2 and all(r["kind"] == "srnic" for r in j) and all(isinstance(v, int) for r in j for k, v in r.items() if k not in ("dev", "kind"))' \
	ctl -j stats

# ------------------------------------------------------------------ doctor
jcheck "doctor: passes on a good setup, loopback self-test included" \
	'all(c["status"] in ("ok", "warn") for c in j) and sum(1 for c in j if c["check"] == "selftest" and c["status"] == "ok") == 2' \
	ctl -j doctor
ip link set vethA down
ctl -j doctor >"$OUT/doctor.json" 2>"$OUT/doctor.err"
rc=$?
t_check "doctor: exit status non-zero with vethA down" test "$rc" -ne 0
t_check "doctor: reports vethA down with its fix" py \
	'any(c["check"] == "netdev_up" and c["dev"] == "srnic0" and c["status"] == "fail" and c["fix"] == "ip link set vethA up" for c in j)' \
	"$OUT/doctor.json"
t_check "doctor: self-test not run on the broken device" py \
	'any(c["check"] == "selftest" and c["dev"] == "srnic0" and c["status"] == "skip" for c in j)' \
	"$OUT/doctor.json"
ip link set vethA up
settle port_active srnic0
settle roce_gid_index srnic0 10.99.0.1 >/dev/null

# ------------------------------------------------------------------ dcqcn
jcheck "dcqcn show: np and rp records with an enable knob" \
	'sorted((r["dev"], r["side"]) for r in j) == [("srnic0", "np"), ("srnic0", "rp"), ("srnic1", "np"), ("srnic1", "rp")] and all("enable" in r for r in j)' \
	ctl -j dcqcn show
jcheck "dcqcn set np min_time_between_cnps 8: read back" \
	'j[0]["min_time_between_cnps"] == 8' \
	ctl -j dcqcn set srnic0 np min_time_between_cnps 8
t_eq "dcqcn set reached sysfs" \
	"$(cat /sys/class/infiniband/srnic0/roce_np/min_time_between_cnps 2>&1)" 8
t_expect_fail "dcqcn set: the kernel refuses a bad value" 'refused value "abc"' \
	ctl dcqcn set srnic0 rp rpg_min_rate abc
t_expect_fail "dcqcn set: unknown knob lists the knobs" 'unknown rp knob "bogus"; knobs: .*enable' \
	ctl dcqcn set srnic0 rp bogus 1
t_expect_fail "dcqcn set: bad side" 'side must be np or rp' ctl dcqcn set srnic0 xp enable 1

# ------------------------------------------------------------------ top, lat
# top_during NAME BWARGS...: srnicctl -j top over an ib_write_bw run
top_during() {
	local name=$1 tpid
	shift
	bg_start tpid "$CTL" -j top -i 1 -n 12 >"$OUT/top.json" 2>"$OUT/top.err"
	sleep 2 # programs attached
	bw "$name" "$@"
	wait "$tpid"
	t_eq "$name: top exited 0" "$?" 0 || sed 's/^/  | /' "$OUT/top.err"
}
# srnicctl qp show in the middle of the run: srnic's -dd driver attributes
# (polled until the perftest RC QPs are up)
bg_start qpid bash -c "for i in \$(seq 60); do '$CTL' -j qp show >'$OUT/qp.json' 2>&1; grep -q '\"type\":\"RC\",\"state\":\"RTS\"' '$OUT/qp.json' && break; sleep 0.5; done"
top_during "ib_write_bw 6 s under top" -s 65536 -D 6
wait "$qpid"
t_check "qp show: RC QPs with srnic's driver attributes (sq_psn, epsn, rate)" py \
	'any(q["type"] == "RC" and q["state"] == "RTS" and "sq_psn" in q["driver"] and "epsn" in q["driver"] and any(k.startswith("rate") for k in q["driver"]) for q in j)' \
	"$OUT/qp.json"
t_check "qp show: each connected RC QP's udp_sport and flow_label are its pair's (rdma_get_udp_sport)" py \
	'len([q for q in j if q["type"] == "RC" and q.get("rqpn")]) > 0 and all(q["driver"]["flow_label"] == r.calc_flow_label(q["lqpn"], q["rqpn"]) and q["driver"]["udp_sport"] == r.flow_label_to_sport(q["driver"]["flow_label"]) for q in j if q["type"] == "RC" and q.get("rqpn"))' \
	"$OUT/qp.json"
t_check "top: per-QP tx bytes move on srnic1, rx bytes on srnic0" py \
	'sum(r["tx_bytes"] for iv in j for r in iv if r["dev"] == "srnic1") > 1000000 and sum(r["rx_bytes"] for iv in j for r in iv if r["dev"] == "srnic0") > 1000000' \
	"$OUT/top.json"
t_check "top: one JSON array per interval" py 'len(j) == 12 and all(isinstance(iv, list) for iv in j)' "$OUT/top.json"

tc qdisc add dev vethB root netem loss 5%
top_during "ib_write_bw under 5% loss under top" -s 65536 -n 300
tc qdisc del dev vethB root
t_check "top: retransmits move under netem loss" py \
	'sum(r["retransmits"] for iv in j for r in iv if r["dev"] == "srnic1") > 0' "$OUT/top.json"

# top into a pipe without -n, as `srnicctl -j top | jq`: each interval's array
# must reach the reader when the interval ends, not when top is stopped
: >"$OUT/top_pipe.json"
bg_start tppid bash -c '"$1" -j top -i 0.5 2>"$2/top_pipe.err" | timeout 60 cat >"$2/top_pipe.json"' \
	_ "$CTL" "$OUT"
sleep 6 # programs attached, then intervals of 0.5 s
before=$(wc -l <"$OUT/top_pipe.json")
bg_stop "$tppid"
t_check "top | reader, no -n: intervals arrive while top runs ($before lines before it was stopped)" \
	test "$before" -ge 2 || sed 's/^/  | /' "$OUT/top_pipe.err"
t_check "top | reader: each line is one interval's JSON array" py \
	'len(j) >= 2 and all(isinstance(iv, list) for iv in j)' "$OUT/top_pipe.json"

# lat traces until SIGINT (a fixed -d could end before perftest, slow to set
# up on a loaded host, sends): wait for its BPF links, run the traffic, stop it
bg_start lpid "$CTL" -j lat -d 600 >"$OUT/lat.json" 2>"$OUT/lat.err"
for _ in $(seq 150); do
	ls -l "/proc/$lpid/fd" 2>/dev/null | grep -q 'bpf_link' && break
	sleep 0.2
done
bw "ib_write_bw under lat" -s 4096 -n 500
kill -INT "$lpid"
wait "$lpid"
t_eq "lat exited 0" "$?" 0 || sed 's/^/  | /' "$OUT/lat.err"
t_check "lat: the histogram has samples" py \
	'sum(b["count"] for b in j) > 0 and all(b["usecs_low"] <= b["usecs_high"] for b in j)' "$OUT/lat.json"

# ------------------------------------------------------------------ dev del
jcheck "dev del srnic0: empty JSON" 'j == []' ctl -j dev del srnic0
t_check "srnic0 gone from rdma dev" bash -c "! rdma dev show | grep -q 'srnic0:'"
t_expect_fail "dev del: unknown device" 'device srnic0: No such device' ctl dev del srnic0
t_check "dev delete srnic1 (iproute2 spelling)" ctl dev delete srnic1

t_kernel_clean "no kernel warnings"
t_check "rmmod" rmmod srnic
rm -rf "$OUT"
t_summary
