#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic with Debian 13's userspace: the stock tools of rdma-core 56 and
# perftest 25.01 (from the trixie chroot of tools/trixie-chroot.sh), run
# inside the VM on whatever kernel it boots:
#
#   netns nsA                                   netns nsB
#   srnic0 on vethA 10.99.0.1 ==== veth ==== vethB 10.99.0.2, srnic1
#   (server side)                               (client side)
#
# 56 <-> 56: ibv_devinfo; ibv_{rc,uc,ud,srq}_pingpong with the data checked
# (-c); perftest ib_{write,read,send}_bw and _lat; rping -V (RDMA-CM).
# 44 <-> 56 (the host's Debian 12 tools against the chroot's, both ways):
# ibv_rc_pingpong -c, ib_send_bw, rping -V. Native mode (issue 14): srnic's
# provider built for 56 in the chroot drives "type srnic_native" devices
# for what the default mode runs above (56's pingpongs with -c, perftest
# bw and lat, rping -V) plus ib_atomic_bw, ibv_rc_pingpong -o (ODP) and XRC:
# ibv_xsrq_pingpong (56's has no data check: its -c is a client count) and
# tests/vm/xrc_share.c built in the chroot against 56's libibverbs (every
# byte of SENDs, WRITE, READs and atomics over XRC checked, refusals); the
# 44 build under 56 lists no device. The tools run through
# `chroot ROOT` with /dev and /sys bound and /proc mounted in ROOT. The
# chroot's packages must be rdma-core 56 and perftest 25.01; a missing
# chroot fails the run (build it on the host: tools/trixie-chroot.sh, which
# tests/tier_vm.sh runs first).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

if ! R=$(tools/trixie-chroot.sh --path); then
	t_fail "trixie chroot present" "build it on the host first: sudo tools/trixie-chroot.sh"
	t_summary
	exit 1
fi
versions=$(cat "$R/../versions")
t_check "chroot has rdma-core 56" grep -Eq '^rdma-core[[:space:]]+56\.' "$R/../versions"
t_check "chroot has perftest 25.01" grep -Eq '^perftest[[:space:]]+25\.01' "$R/../versions"
echo "chroot $R: $(echo "$versions" | tr '\t\n' ' ')"
echo "host: $(dpkg-query -W rdma-core perftest | tr '\t\n' ' ')"

mount --bind /dev "$R/dev"
mount --bind /sys "$R/sys"
mount -t proc proc "$R/proc"
# the chroot's tools (N for "new"): `$N ibv_devinfo`
N=(chroot "$R")

srnic_pair_up

t_check "56: ibv_devinfo lists srnic0 and srnic1" \
	bash -c "chroot '$R' ibv_devinfo -l | grep -q srnic0 && chroot '$R' ibv_devinfo -l | grep -q srnic1"
t_check "56: ibv_devinfo -v srnic0: port ACTIVE, RoCE v2 GID" \
	bash -c "chroot '$R' ibv_devinfo -v -d srnic0 | grep -q PORT_ACTIVE &&
		 chroot '$R' ibv_devinfo -v -d srnic0 | grep -q '::ffff:10.99.0.1, RoCE v2'"

snap
pair "56: ibv_rc_pingpong 4 KiB, data checked" \
	"${N[@]}" ibv_rc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	"${N[@]}" ibv_rc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
t_check "56: RC packets counted on srnic1" test "$(delta srnic1 sent_pkts)" -gt 400
pair "56: ibv_uc_pingpong 4 KiB, data checked" \
	"${N[@]}" ibv_uc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	"${N[@]}" ibv_uc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
pair "56: ibv_ud_pingpong 1 KiB, data checked" \
	"${N[@]}" ibv_ud_pingpong -d srnic0 -g "$G0" -n 200 -s 1024 -c -- \
	"${N[@]}" ibv_ud_pingpong -d srnic1 -g "$G1" -n 200 -s 1024 -c 10.99.0.1
pair "56: ibv_srq_pingpong 16 QPs on one SRQ, data checked" \
	"${N[@]}" ibv_srq_pingpong -d srnic0 -g "$G0" -n 100 -s 4096 -c -- \
	"${N[@]}" ibv_srq_pingpong -d srnic1 -g "$G1" -n 100 -s 4096 -c 10.99.0.1

for t in ib_write_bw ib_read_bw ib_send_bw; do
	pair "56: perftest 25.01 $t 64 KiB" \
		"${N[@]}" $t -d srnic0 -x "$G0" -s 65536 -n 200 -F -- \
		"${N[@]}" $t -d srnic1 -x "$G1" -s 65536 -n 200 -F 10.99.0.1
done
for t in ib_write_lat ib_read_lat ib_send_lat; do
	pair "56: perftest 25.01 $t" \
		"${N[@]}" $t -d srnic0 -x "$G0" -n 200 -F -- \
		"${N[@]}" $t -d srnic1 -x "$G1" -n 200 -F 10.99.0.1
done

# Cross-version: Debian 12's tools (rdma-core 44, perftest 4.5) on one end.
pair "44 server <-> 56 client: ibv_rc_pingpong, data checked" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	"${N[@]}" ibv_rc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
pair "56 server <-> 44 client: ibv_rc_pingpong, data checked" \
	"${N[@]}" ibv_rc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
pair "perftest 4.5 server <-> 25.01 client: ib_send_bw" \
	ib_send_bw -d srnic0 -x "$G0" -s 65536 -n 200 -F -- \
	"${N[@]}" ib_send_bw -d srnic1 -x "$G1" -s 65536 -n 200 -F 10.99.0.1
pair "perftest 25.01 server <-> 4.5 client: ib_send_bw" \
	"${N[@]}" ib_send_bw -d srnic0 -x "$G0" -s 65536 -n 200 -F -- \
	ib_send_bw -d srnic1 -x "$G1" -s 65536 -n 200 -F 10.99.0.1

PAIR_READY=pair_cm_listening
pair "56: rping (RDMA-CM), 100 x 1 KiB, data verified" \
	"${N[@]}" rping -s -a 10.99.0.1 -C 100 -S 1024 -V -- \
	"${N[@]}" rping -c -a 10.99.0.1 -C 100 -S 1024 -V
pair "44 server <-> 56 client: rping, data verified" \
	rping -s -a 10.99.0.1 -C 100 -S 1024 -V -- \
	"${N[@]}" rping -c -a 10.99.0.1 -C 100 -S 1024 -V
pair "56 server <-> 44 client: rping, data verified" \
	"${N[@]}" rping -s -a 10.99.0.1 -C 100 -S 1024 -V -- \
	rping -c -a 10.99.0.1 -C 100 -S 1024 -V
PAIR_READY=pair_tcp_listening

t_eq "no ICRC errors" "$(counter srnic0 rcvd_icrc_err)$(counter srnic1 rcvd_icrc_err)" "00"

# Native mode under rdma-core 56: srnic's provider built in the chroot
# against its libibverbs (tools/trixie-chroot.sh provider, run by the tier
# on the host), devices made again with "type srnic_native".
NP=/opt/srnic/libsrnic
t_check "srnic's provider built for 56 ($R$NP-rdmav34.so)" test -f "$R$NP-rdmav34.so"
ip netns exec nsA rdma link delete srnic0
ip netns exec nsB rdma link delete srnic1
SRNIC_LINK_TYPE=srnic_native
t_check "native devices srnic0, srnic1" srnic_devs_ns
t_expect_fail "56 without srnic's provider: srnic0 not listed" "" \
	bash -c "chroot '$R' ibv_devinfo -l | grep -q srnic0"
N=(chroot "$R" env "RDMAV_DRIVERS=$NP")
t_check "56 with srnic's provider: ibv_devinfo -d srnic0 PORT_ACTIVE" \
	bash -c "$(printf '%q ' "${N[@]}") ibv_devinfo -d srnic0 | grep -q PORT_ACTIVE"
pair "56 native: ibv_rc_pingpong 4 KiB, data checked" \
	"${N[@]}" ibv_rc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	"${N[@]}" ibv_rc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
pair "56 native: ibv_ud_pingpong 1 KiB, data checked" \
	"${N[@]}" ibv_ud_pingpong -d srnic0 -g "$G0" -n 200 -s 1024 -c -- \
	"${N[@]}" ibv_ud_pingpong -d srnic1 -g "$G1" -n 200 -s 1024 -c 10.99.0.1
pair "56 native: ibv_srq_pingpong, data checked" \
	"${N[@]}" ibv_srq_pingpong -d srnic0 -g "$G0" -n 100 -s 4096 -c -- \
	"${N[@]}" ibv_srq_pingpong -d srnic1 -g "$G1" -n 100 -s 4096 -c 10.99.0.1
for t in ib_write_bw ib_read_bw ib_send_bw; do
	pair "56 native: perftest 25.01 $t 64 KiB" \
		"${N[@]}" $t -d srnic0 -x "$G0" -s 65536 -n 200 -F -- \
		"${N[@]}" $t -d srnic1 -x "$G1" -s 65536 -n 200 -F 10.99.0.1
done
pair "56 native: ib_atomic_bw" \
	"${N[@]}" ib_atomic_bw -d srnic0 -x "$G0" -n 200 -F -- \
	"${N[@]}" ib_atomic_bw -d srnic1 -x "$G1" -n 200 -F 10.99.0.1
for t in ib_write_lat ib_read_lat ib_send_lat; do
	pair "56 native: perftest 25.01 $t" \
		"${N[@]}" $t -d srnic0 -x "$G0" -n 200 -F -- \
		"${N[@]}" $t -d srnic1 -x "$G1" -n 200 -F 10.99.0.1
done
pair "56 native: ibv_uc_pingpong 4 KiB, data checked" \
	"${N[@]}" ibv_uc_pingpong -d srnic0 -g "$G0" -n 200 -s 4096 -c -- \
	"${N[@]}" ibv_uc_pingpong -d srnic1 -g "$G1" -n 200 -s 4096 -c 10.99.0.1
pair "56 native: ibv_rc_pingpong -o (ODP MRs), data checked" \
	"${N[@]}" ibv_rc_pingpong -d srnic0 -g "$G0" -n 100 -s 4096 -c -o -- \
	"${N[@]}" ibv_rc_pingpong -d srnic1 -g "$G1" -n 100 -s 4096 -c -o 10.99.0.1

# XRC (native only): 56's ibv_xsrq_pingpong, then xrc_share.c built in the
# chroot against 56's libibverbs; the chroot's /tmp a tmpfs of this guest
# (xrc_share's domain file, the binary), as the guest's own /tmp is
inv0=$(counter srnic0 send_inv_req_err)
pair "56 native: ibv_xsrq_pingpong" \
	"${N[@]}" ibv_xsrq_pingpong -d srnic0 -g "$G0" -m 1024 -n 50 -- \
	"${N[@]}" ibv_xsrq_pingpong -d srnic1 -g "$G1" -m 1024 -n 50 10.99.0.1
pair "56 native: ibv_xsrq_pingpong, 8 KiB messages (multi-packet)" \
	"${N[@]}" ibv_xsrq_pingpong -d srnic0 -g "$G0" -m 1024 -s 8192 -n 20 -- \
	"${N[@]}" ibv_xsrq_pingpong -d srnic1 -g "$G1" -m 1024 -s 8192 -n 20 10.99.0.1
t_eq "56 native: no XRC request of the pingpongs refused" \
	"$(counter srnic0 send_inv_req_err)" "$inv0"
mount -t tmpfs tmpfs "$R/tmp"
mkdir "$R/tmp/src" && cp tests/vm/xrc_share.c tests/vm/vtest.h "$R/tmp/src/"
t_check "56: build xrc_share.c in the chroot against its libibverbs" \
	chroot "$R" cc -O2 -Wall -Werror -o /tmp/xrc_share /tmp/src/xrc_share.c -libverbs
out=$(with_timeout 120 ip netns exec nsA "${N[@]}" /tmp/xrc_share srnic0 "$G0" 2>&1)
rc=$?
t_from_output xrc_share "$rc" "$(tagged "56 native" <<<"$out")" "#*"
umount "$R/tmp"
PAIR_READY=pair_cm_listening
pair "56 native: rping (RDMA-CM), data verified" \
	"${N[@]}" rping -s -a 10.99.0.1 -C 100 -S 1024 -V -- \
	"${N[@]}" rping -c -a 10.99.0.1 -C 100 -S 1024 -V
PAIR_READY=pair_tcp_listening
# the host's (44) build of the provider under 56's libibverbs matches
# nothing: the device stays invisible rather than half-working
mkdir -p "$R/opt/srnic44" && cp "$SRNIC_PROVIDER_LIB-rdmav34.so" "$R/opt/srnic44/"
t_expect_fail "56 with the 44 build of the provider: srnic0 not listed" "" \
	bash -c "chroot '$R' env RDMAV_DRIVERS=/opt/srnic44/libsrnic ibv_devinfo -l | grep -q srnic0"
t_eq "native: no ICRC errors" "$(counter srnic0 rcvd_icrc_err)$(counter srnic1 rcvd_icrc_err)" "00"
srnic_pair_down
umount "$R/proc" "$R/sys" "$R/dev"
t_summary
