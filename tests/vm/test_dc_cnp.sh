#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vmrun-tcg: single (it switches tracepoints on and off: see tests/vm/vmrun)
#
# DCQCN per DCI (issue 15 item 3, docs/dc.md "Entropy and congestion"),
# native mode, inside the VM:
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#   one DCT (the server)         vethB egress: prio    DCIs A and B
#                                band 1:1 netem ecn     (two clients)
#
# Two srnic_dc_pingpong clients (mode forever -W: 512-byte SENDs, one at a
# time, to the same DCT) on srnic1, each with its own DCI. A tc u32 filter
# on vethB puts DCI A's requests (the DCI number in their DCETH) into a
# prio band whose netem marks a share of them CE (netem's "ecn": an ECT
# packet it would lose is marked instead); DCI B's requests take a band
# without netem. Checks:
#   - srnic0, the DCT's device, counts the marks
#     (np_ecn_marked_roce_packets) and sends CNPs (np_cnp_sent); srnic_cnp
#     fires (tx) for the DCT's number there;
#   - srnic1 handles them (rp_cnp_handled; rp_cnp_ignored unmoved: each
#     named a DCI that exists); srnic_cnp fires (rx) for DCI A and never
#     for DCI B; srnic_rate shows DCI A's rate cut on a CNP, nothing for B;
#   - srnicctl -j qp show srnic1, sampled while both send: DCI A's
#     rate_bytes_per_sec is set and below the line rate (DCQCN's maximum,
#     10 Gb/s) in every sample, DCI B's is 0 (not paced) in every sample:
#     the rate state is the DCI's, not the device's;
#   - the server checks every SEND of both clients byte for byte and in
#     order; both clients get its OK;
#   - no ICRC errors, no kernel warnings, rmmod.
# Without cls_u32 (the debug kernel) nothing can pick one DCI's packets:
# the test says SKIP and stops.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

PP=build/userspace/tools/srnic_dc_pingpong
CTL=build/userspace/ctl/srnicctl
WAIT=/tmp/dcc_wait
SRV_OUT=/tmp/dcc_srv.txt
LINE_RATE=1250000000	# bytes/s: SRNIC_DCQCN_LINE_RATE_MBPS (10 Gb/s)
MARK=${DCC_MARK:-30%}	# netem's share of DCI A's requests marked CE
dmesg -C
native_trio_up
export RDMAV_DRIVERS=$SRNIC_PROVIDER_LIB
t_check "srnic_dc_pingpong and srnicctl are built" test -x "$PP" -a -x "$CTL"
t_check "modprobe sch_prio sch_netem" modprobe -a sch_prio sch_netem
if ! modprobe cls_u32 2>/dev/null; then
	t_skip "DCQCN per DCI" "no cls_u32 in this kernel: no tc filter can pick one DCI's packets"
	native_trio_down
	t_summary
	exit
fi

c0() { counter srnic0 "$1"; }
c1() { counter srnic1 "$1"; }
c1_ge() { [ "$(c1 "$1")" -ge "$2" ]; }

# dc_report NAME RC OUT: the checks of one srnic_dc_pingpong run
dc_report() {
	t_from_output "$1" "$2" "$(sed -E "s/^(ok|not ok) /\1 [$1] /;
		s/^srnic_dc_pingpong: done/$1: done/" <<<"$3")"
}
# cli_dci OUT: the DCI number a client printed
cli_dci() { sed -n 's/^# client: DCI \([0-9]*\),.*/\1/p' "$1"; }
# mark_dci DCI: DCI's requests (UDP 4791; the DCETH's DCI number, at 48
# from the IPv4 header) into band 1:1, where netem marks $MARK of them CE
mark_dci() {
	tc -n nsB qdisc add dev vethB root handle 1: prio bands 3 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
		tc -n nsB qdisc add dev vethB parent 1:1 handle 10: netem \
			loss "$MARK" ecn &&
		tc -n nsB filter add dev vethB parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u32 "$1" 0x00ffffff at 48 flowid 1:1
}

rm -f "$WAIT".*
spid=
bg_start spid timeout 200 ip netns exec nsA "$PP" -d srnic0 -g "$G0" -s -n 1 \
	-c 2 >"$SRV_OUT" 2>&1
ready tcp_listening 18515 nsA
settle grep -q "^# dctn 0 " "$SRV_OUT"
dct=$(sed -n 's/^# dctn 0 //p' "$SRV_OUT")
for x in a b; do
	bg_start "cl_$x" timeout 180 ip netns exec nsB "$PP" -d srnic1 -g "$G1" \
		-m forever -W "$WAIT" 10.99.0.1 >"/tmp/dcc_$x.txt" 2>&1
	settle -t 60 grep -q "^# client: DCI" "/tmp/dcc_$x.txt"
done
dci_a=$(cli_dci /tmp/dcc_a.txt) dci_b=$(cli_dci /tmp/dcc_b.txt)
echo "# DCT ${dct:-?} (srnic0); DCI A ${dci_a:-?}, DCI B ${dci_b:-?} (srnic1)"
t_check "both clients have a DCI, each its own" \
	test -n "$dci_a" -a -n "$dci_b" -a "${dci_a:-x}" != "${dci_b:-x}"
dev0=$(ip netns exec nsA rdma dev show srnic0 | cut -d: -f1)
dev1=$(ip netns exec nsB rdma dev show srnic1 | cut -d: -f1)

SNAP_DEVS="srnic0 srnic1"
snap
hs0=$(c1 rp_cnp_handled)
trace_start srnic_cnp srnic_rate
t_check "tc: netem ecn ($MARK) on DCI A's requests only" mark_dci "${dci_a:-0}"
t_check "srnic1 handled a CNP" settle -t 30 c1_ge rp_cnp_handled $((hs0 + 1))
# six samples of both DCIs' pacing rate while they send
for i in 1 2 3 4 5 6; do
	ip netns exec nsB "$CTL" -j qp show srnic1 >"/tmp/dcc_qp.$i" 2>&1
	sleep 0.5
done
trace_stop /tmp/dcc_trace.txt
tc -s -n nsB qdisc show dev vethB | sed 's/^/# /'
touch "$WAIT.1"
for x in a b; do
	pid_var=cl_$x
	wait_done 60 "${!pid_var}"
	rc=$?
	[ "$rc" -eq 124 ] && bg_stop "${!pid_var}"
	dc_report "DCI ${x^^}" "$rc" "$(cat "/tmp/dcc_$x.txt")"
done
wait_done 60 "$spid"
rc=$?
[ "$rc" -eq 124 ] && bg_stop "$spid"
t_eq "the server found every SEND of both right, ended" "$rc" 0 ||
	sed 's/^/  | /' "$SRV_OUT"
tc -n nsB qdisc del dev vethB root

# --- the notification point (srnic0) and the reaction point (srnic1)
marked=$(delta srnic0 np_ecn_marked_roce_packets)
sent=$(delta srnic0 np_cnp_sent)
handled=$(delta srnic1 rp_cnp_handled)
t_check "srnic0 counted CE-marked DC requests (np_ecn_marked_roce_packets +$marked)" \
	test "$marked" -gt 0
t_check "srnic0 (the DCT side) sent CNPs (np_cnp_sent +$sent)" test "$sent" -gt 0
t_check "srnic1 (the DCIs) handled CNPs (rp_cnp_handled +$handled)" \
	test "$handled" -gt 0
t_eq "srnic1 ignored none (rp_cnp_ignored: each named an existing DCI)" \
	"$(delta srnic1 rp_cnp_ignored)" 0
t_check "srnic_cnp tx at srnic0 for the DCT ($dct)" \
	grep -qE "srnic_cnp: dev=$dev0 qpn=$dct tx" /tmp/dcc_trace.txt
t_check "srnic_cnp rx at srnic1 for DCI A ($dci_a)" \
	grep -qE "srnic_cnp: dev=$dev1 qpn=$dci_a rx" /tmp/dcc_trace.txt
t_eq "srnic_cnp rx for DCI B ($dci_b): none" \
	"$(grep -cE "srnic_cnp: dev=$dev1 qpn=$dci_b rx" /tmp/dcc_trace.txt)" 0
t_check "srnic_rate: DCI A's rate cut on a CNP" \
	grep -qE "srnic_rate: dev=$dev1 qpn=$dci_a .*reason=cnp" /tmp/dcc_trace.txt
t_eq "srnic_rate for DCI B: none" \
	"$(grep -cE "srnic_rate: dev=$dev1 qpn=$dci_b " /tmp/dcc_trace.txt)" 0

# --- each DCI's rate, as srnicctl shows it
# rates FILE DCI: DCI's rate_bytes_per_sec in srnicctl's JSON, or "none"
rates() {
	python3 -c '
import json, sys
text = open(sys.argv[1]).read()
try:
    recs = json.loads(text)
except ValueError:
    recs = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
if isinstance(recs, dict):
    recs = [recs]
for r in recs:
    if r.get("lqpn") == int(sys.argv[2]):
        print(r.get("driver", {}).get("rate_bytes_per_sec", "none"))
        sys.exit(0)
print("none")' "$1" "$2"
}
ra=() rb=()
for i in 1 2 3 4 5 6; do
	ra+=("$(rates "/tmp/dcc_qp.$i" "${dci_a:-0}")")
	rb+=("$(rates "/tmp/dcc_qp.$i" "${dci_b:-0}")")
done
echo "# rate_bytes_per_sec, DCI A: ${ra[*]}; DCI B: ${rb[*]}"
paced=0
for r in "${ra[@]}"; do
	[[ $r =~ ^[0-9]+$ ]] && [ "$r" -gt 0 ] && [ "$r" -lt "$LINE_RATE" ] &&
		paced=$((paced + 1))
done
t_eq "DCI A paced below the line rate in all 6 samples" "$paced" 6 ||
	sed 's/^/  | /' /tmp/dcc_qp.1
t_eq "DCI B not paced (rate 0: the line rate) in all 6 samples" \
	"${rb[*]}" "0 0 0 0 0 0"

t_eq "no ICRC errors" "$(c0 rcvd_icrc_err)" 0
native_trio_down
t_summary
