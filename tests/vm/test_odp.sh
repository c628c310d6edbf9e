#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# On-demand-paging MRs (IBV_ACCESS_ON_DEMAND, issue 14 item 5), run inside
# the VM, in both modes:
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#
# first as "type srnic" (the default mode: stock rdma-core's rxe provider,
# which passes the flag through to the kernel), then as "type srnic_native"
# (srnic's provider from the build). Each mode: ibv_rc_pingpong -o (ODP
# buffers on both sides, data checked), ib_write_bw --odp, and
# tests/vm/odp_mr.c (built here): pinned-page counts, WRITE/READ/SEND into
# and out of untouched ODP pages, atomics on untouched ODP pages,
# ibv_advise_mr (native mode: prefetched ranges need no RNR NAK; default
# mode: EOPNOTSUPP from the stock provider), madvise(MADV_DONTNEED) and
# munmap while registered.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

srnic_load veth rdma_ucm || _t_setup_failed "srnic_load"
netns_pair_setup || _t_setup_failed "netns_pair_setup"

ODP_MR=/tmp/odp_mr
t_check "build odp_mr.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$ODP_MR" tests/vm/odp_mr.c -libverbs

# odp_mr's lines, each name prefixed with [TAG]

for mode in default native; do
	if [ "$mode" = native ]; then
		SRNIC_LINK_TYPE=srnic_native
		export RDMAV_DRIVERS=$SRNIC_PROVIDER_LIB
		t_check "srnic's provider is built" test -f "$SRNIC_PROVIDER_LIB-rdmav34.so"
	else
		SRNIC_LINK_TYPE=srnic
		unset RDMAV_DRIVERS
	fi
	t_check "[$mode] srnic0 and srnic1 with RoCEv2 GIDs" srnic_devs_ns ||
		_t_setup_failed ""
	t_check "[$mode] ibv_devinfo -v: ODP caps" \
		grep -q 'general_odp_caps' <(ip netns exec nsA ibv_devinfo -v -d srnic0)
	snap
	pair "[$mode] ibv_rc_pingpong -o 4 KiB x 100, data checked" \
		ibv_rc_pingpong -d srnic0 -g "$G0" -n 100 -s 4096 -c -o -- \
		ibv_rc_pingpong -d srnic1 -g "$G1" -n 100 -s 4096 -c -o 10.99.0.1
	pair "[$mode] ibv_rc_pingpong -o 64 KiB x 20 (multi-packet), data checked" \
		ibv_rc_pingpong -d srnic0 -g "$G0" -n 20 -s 65536 -c -o -- \
		ibv_rc_pingpong -d srnic1 -g "$G1" -n 20 -s 65536 -c -o 10.99.0.1
	pair "[$mode] ib_write_bw --odp 64 KiB x 200" \
		ib_write_bw -d srnic0 -x "$G0" -s 65536 -n 200 -F --odp -- \
		ib_write_bw -d srnic1 -x "$G1" -s 65536 -n 200 -F --odp 10.99.0.1
	# the first touch of a page on the receiving side is an RNR NAK
	t_check "[$mode] ODP faults answered with RNR NAKs" \
		test "$(delta srnic0 send_rnr_err)" -gt 0
	# fd 3: srnic0's RNR NAK counter, which nsA's sysfs does not show
	out=$(with_timeout 120 ip netns exec nsA "$ODP_MR" srnic0 "$G0" "$mode" \
		2>&1 3<"/sys/class/infiniband/srnic0/ports/1/hw_counters/send_rnr_err")
	rc=$?
	printf '%s\n' "$out" | grep '^#'
	t_from_output odp_mr "$rc" "$(tagged "$mode" <<<"$out")"
	t_check "[$mode] rdma link delete srnic0" ip netns exec nsA rdma link delete srnic0
	t_check "[$mode] rdma link delete srnic1" ip netns exec nsB rdma link delete srnic1
done

t_kernel_clean "no kernel warnings"
t_check "rmmod srnic" rmmod srnic
t_kernel_clean "still no kernel warnings after rmmod"
t_summary
