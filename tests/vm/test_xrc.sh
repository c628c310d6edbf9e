#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# XRC (issue 14 item 4), native mode only, run inside the VM:
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#   both made with "type srnic_native", driven by srnic's provider
#   root netns: srnicd on dum0, "type srnic" (the default mode)
#
# rdma-core's ibv_xsrq_pingpong between the two native devices (one client,
# then two client processes on one server); tests/vm/xrc_share.c: several
# processes in one XRC domain (one makes the target QP, two others open it
# and receive on their own XRC SRQs and CQs, every byte checked), sends to
# an unknown SRQ number and to an SRQ of another domain refused (remote
# invalid request at the sender, send_inv_req_err counted); RDMA READs over
# XRC of 1 B to ten packets, every byte checked, and one with a wrong R_Key
# (remote access error, resp_remote_access_errors counted); the default
# mode refuses XRC (stock rxe provider, no XRC capability). srnicctl qp
# show (rdma restrack) lists the XRC QP types.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

native_trio_up

# the default mode, through the stock rxe provider
XRC=/tmp/xrc_share
t_check "build xrc_share.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$XRC" tests/vm/xrc_share.c -libverbs
unset RDMAV_DRIVERS
out=$(with_timeout 60 "$XRC" srnicd 0 refused 2>&1)
rc=$?
t_from_output xrc_share "$rc" "$(tagged "default mode" <<<"$out")"

export RDMAV_DRIVERS=$SRNIC_PROVIDER_LIB
t_check "srnic0 reports XRC (through srnic's provider)" \
	grep -q XRC <(ibv_devinfo -v -d srnic0)
inv0=$(counter srnic0 send_inv_req_err)
pair "ibv_xsrq_pingpong between native devices" \
	ibv_xsrq_pingpong -d srnic0 -g "$G0" -m 1024 -n 50 -- \
	ibv_xsrq_pingpong -d srnic1 -g "$G1" -m 1024 -n 50 10.99.0.1
pair "ibv_xsrq_pingpong, 8 KiB messages (multi-packet)" \
	ibv_xsrq_pingpong -d srnic0 -g "$G0" -m 1024 -s 8192 -n 20 -- \
	ibv_xsrq_pingpong -d srnic1 -g "$G1" -m 1024 -s 8192 -n 20 10.99.0.1

# two client processes of one server (-c 2): each its own XRC QPs and SRQs
xsrq2() {
	local c1 rc1 rc2 rcs srv
	bg_start srv timeout 60 ip netns exec nsA \
		ibv_xsrq_pingpong -d srnic0 -g "$G0" -m 1024 -c 2 -n 20
	ready pair_tcp_listening || return 1
	bg_start c1 timeout 50 ip netns exec nsB \
		ibv_xsrq_pingpong -d srnic1 -g "$G1" -m 1024 -n 20 10.99.0.1
	sleep 1
	timeout 50 ip netns exec nsB \
		ibv_xsrq_pingpong -d srnic1 -g "$G1" -m 1024 -n 20 10.99.0.1
	rc2=$?
	wait "$c1"
	rc1=$?
	wait "$srv"
	rcs=$?
	echo "client 1 exit $rc1, client 2 exit $rc2, server exit $rcs"
	[ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ "$rcs" -eq 0 ]
}
t_check "ibv_xsrq_pingpong: two client processes on one server" xsrq2

# restrack: the XRC QP types while an ibv_xsrq_pingpong server waits
QPS=/tmp/xrc_qps.txt
xrc_restrack() {
	local srv rc
	bg_start srv timeout 60 ip netns exec nsA \
		ibv_xsrq_pingpong -d srnic0 -g "$G0" -m 1024 -n 5
	ready pair_tcp_listening || return 1
	ip netns exec nsA build/userspace/ctl/srnicctl qp show srnic0 >"$QPS" 2>&1
	timeout 50 ip netns exec nsB \
		ibv_xsrq_pingpong -d srnic1 -g "$G1" -m 1024 -n 5 10.99.0.1 >/dev/null
	rc=$?
	wait "$srv" || rc=1
	[ "$rc" -eq 0 ]
}
t_check "ibv_xsrq_pingpong with the server's QPs listed" xrc_restrack
t_check "srnicctl qp show: the XRC send QP (XRC_INI)" grep -q XRC_INI "$QPS"
t_check "srnicctl qp show: the XRC receive QP (XRC_TGT)" grep -q XRC_TGT "$QPS"
t_eq "no XRC request refused by the pingpongs" \
	"$(counter srnic0 send_inv_req_err)" "$inv0"

inv0=$(counter srnic0 send_inv_req_err)
acc0=$(counter srnic0 resp_remote_access_errors)
out=$(with_timeout 120 ip netns exec nsA "$XRC" srnic0 "$G0" 2>&1)
rc=$?
t_from_output xrc_share "$rc" "$(tagged native <<<"$out")" "#*"
t_eq "the two refused XRC sends counted (send_inv_req_err)" \
	"$(($(counter srnic0 send_inv_req_err) - inv0))" 2
t_eq "the XRC READ with a wrong R_Key NAKed (resp_remote_access_errors)" \
	"$(($(counter srnic0 resp_remote_access_errors) - acc0))" 1
t_eq "no ICRC errors" "$(counter srnic0 rcvd_icrc_err)" 0

native_trio_down
t_summary
