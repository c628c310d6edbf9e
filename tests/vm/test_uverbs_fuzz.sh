#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# uverbs fuzzer, inside the VM (tests/vm/vmrun): verbs objects created,
# modified and destroyed with wild attributes and in wild orders from many
# threads (tests/vm/uverbs_fuzz.c, built here, libibverbs; run in the root
# netns). srnic0 (nsA) and srnic1 (nsB) on a veth pair.
#
#   errors that must occur (caps beyond the limits, unsupported QP types,
#     transitions IBA forbids, attributes out of range, bad memory for an
#     MR, a GID index that does not exist, an mmap offset never handed
#     out): each call fails and the QP keeps its state; a group attached
#     under two MLIDs detaches twice and its QP is destroyed (it leaked
#     before the fix); a type 1 MW bind completes;
#   two runs of 6 threads, $SECS (20) s each: the fixed seed 1, then a
#     random one (printed; SRNIC_UVERBS_FUZZ_SEED replays it,
#     SRNIC_UVERBS_FUZZ_SECS and _THREADS change the defaults): each verb
#     class succeeded and failed, every object left is destroyed; then
#     races on one object (modify_qp, post_send and destroy_qp of one QP;
#     dereg_mr under WRITEs; destroy_cq and dealloc_pd with children;
#     resize_cq under traffic and polls): each call succeeds or fails with
#     EINVAL, ENOENT or EBUSY, every WR completes once; a fresh RC pair
#     moves data (WRITE and SEND, every byte compared);
# then: the kernel log holds no stall, lockup, hung task, warning or oops;
# `rdma resource show` of srnic0/srnic1 is back to its value from before,
# so are srnic's vmalloc'd rings (count and bytes, /proc/vmallocinfo) and,
# within 4 MiB, the unreclaimable slab (SUnreclaim).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/vm/lib.sh
. tests/vm/lib.sh

BIN=/tmp/uverbs_fuzz
LOG=/tmp/uverbs_fuzz.log
SECS=${SRNIC_UVERBS_FUZZ_SECS:-20}
THREADS=${SRNIC_UVERBS_FUZZ_THREADS:-6}
RAND_SEED=${SRNIC_UVERBS_FUZZ_SEED:-$(date +%s%N)}

# srnic's objects per device, as `rdma resource show` counts them
res_counts() {
	rdma resource show | grep -E ' srnic[01]: ' | sort
}

dmesg -C
if ! t_check "build uverbs_fuzz.c against libibverbs" \
	cc -O2 -Wall -Werror -o "$BIN" tests/vm/uverbs_fuzz.c -libverbs \
	-lpthread; then
	t_summary
	exit 1
fi
srnic_pair_up

res0=$(res_counts)
vm0=$(srnic_vmalloc)
slab0=$(meminfo SUnreclaim)
echo "# before: $(echo "$res0" | tr '\n' ';') vmalloc $vm0, SUnreclaim $slab0 kB"

for seed in 1 "$RAND_SEED"; do
	# In the background: a task stuck in the kernel cannot be killed,
	# and the script must still be able to say so.
	bg_start FUZZ_PID "$BIN" srnic0 "$G0" srnic1 "$G1" "$seed" "$SECS" \
		"$THREADS" >"$LOG" 2>&1
	rc=0
	wait_done $((SECS + 240)) "$FUZZ_PID" || rc=$?
	t_from_output uverbs_fuzz "$rc" "$(cat "$LOG")" '#*'
	if [ "$rc" = 124 ]; then
		tail -n 1 "$LOG" | sed 's/^/  | /'
		break
	fi
done

# Objects go back to ib_core's deferred cleanup: give it a moment.
settle bash -c "[ \"\$(rdma resource show | grep -E ' srnic[01]: ' | sort)\" = '$res0' ]"
t_eq "rdma resource show: srnic's objects back to the baseline" \
	"$(res_counts)" "$res0"
t_eq "srnic's vmalloc'd rings back to the baseline (count bytes)" \
	"$(srnic_vmalloc)" "$vm0"
slab1=$(meminfo SUnreclaim)
echo "# after: vmalloc $(srnic_vmalloc), SUnreclaim $slab1 kB"
t_check "unreclaimable slab within 4 MiB of the baseline ($slab0 -> $slab1 kB)" \
	test $((slab1 - slab0)) -lt 4096
# kernel log clean (no stall, lockup, hung task, warning or oops), before
# and after the teardown
srnic_pair_down 'rcu.*(stall|detected)|hung_task|Call Trace'
t_summary
