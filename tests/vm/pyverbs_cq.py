#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# pyverbs_cq.py DEVICE: CQ and SRQ verbs of an srnic device through stock
# rdma-core (rxe provider) and pyverbs, run by tests/vm/test_cq.sh.
#
# Prints one line per check, "ok NAME" or "not ok NAME: reason"; the shell
# turns them into lib.sh results. Exits 0 when it ran to the end (whatever
# the checks said), non-zero if it crashed.
#
# What it exercises on the kernel side: create_cq/resize_cq/destroy_cq and
# their mminfo replies, the mmap of every ring (the provider maps each
# buffer and reads its header on poll/post), req_notify_cq (a syscall, which
# srnic enables in uverbs_cmd_mask), create/modify/query/destroy_srq with
# the modify_srq mminfo write-back, and SRQ capacity as the provider sees it
# in the mapped ring (which checks that resize kept the posted WQEs).
import errno
import mmap
import os
import signal
import struct
import subprocess
import sys

from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SGE
import pyverbs.enums as e

from pyverbs_lib import bad, check, failures, ok


def expect_errno(name, want, fn):
    """fn() must raise PyverbsRDMAError with errno want."""
    try:
        fn()
    except PyverbsRDMAError as ex:
        got = abs(ex.error_code)
        check(name, got == want,
              f"errno {got} ({errno.errorcode.get(got, '?')}), want "
              f"{want} ({errno.errorcode[want]}): {ex}")
        return
    bad(name, "succeeded")


def user_objects(dev, kind):
    """Count the user (pid-owned) objects of a kind in 'rdma res show'."""
    out = subprocess.run(["rdma", "res", "show", kind, "dev", dev],
                         capture_output=True, text=True, check=False).stdout
    return sum(1 for line in out.splitlines() if " pid " in line)


def post_until_full(srq, limit):
    """Post 1-SGE recv WRs until the provider says the ring is full."""
    sge = SGE(0x1000, 64, 0)
    for n in range(limit + 1):
        try:
            srq.post_recv(RecvWR(wr_id=n, num_sge=1, sg=[sge]))
        except PyverbsRDMAError as ex:
            if abs(ex.error_code) == errno.ENOMEM:
                return n
            raise
    return n


def test_cq(ctx, dev, attr):
    max_cqe = attr.max_cqe
    check("device max_cqe is 32767", max_cqe == 32767, f"max_cqe {max_cqe}")

    cqs = []
    for want in (1, 2, 3, 15, 16, 100, 1000, 4096, max_cqe):
        cq = CQ(ctx, want)
        cqs.append(cq)
        check(f"create_cq({want}) returns cqe >= {want}", cq.cqe >= want,
              f"cqe {cq.cqe}")
        n, _ = cq.poll(4)
        check(f"poll of empty CQ({want}) returns 0", n == 0, f"polled {n}")
    check("rdma res show cq lists the open CQs",
          user_objects(dev, "cq") >= len(cqs),
          f"{user_objects(dev, 'cq')} user CQs listed, {len(cqs)} open")

    cq = CQ(ctx, 10)
    cqs.append(cq)
    for want in (100, 3000, 20, 1, max_cqe, 5):
        try:
            cq.resize(want)
        except PyverbsRDMAError as ex:
            bad(f"resize_cq to {want}", str(ex))
            continue
        n, _ = cq.poll(1)
        check(f"resize_cq to {want}: cqe >= {want}, new ring polls empty",
              cq.cqe >= want and n == 0, f"cqe {cq.cqe}, polled {n}")
    expect_errno("resize_cq beyond max_cqe is EINVAL", errno.EINVAL,
                 lambda: cq.resize(max_cqe + 1))
    n, _ = cq.poll(1)
    check("CQ still usable after a refused resize", n == 0, f"polled {n}")

    try:
        cq.req_notify()
        cq.req_notify(1)
        cq.req_notify(0)
        ok("req_notify_cq (next, solicited, next)")
    except PyverbsRDMAError as ex:
        bad("req_notify_cq", str(ex))

    channel = CompChannel(ctx)
    try:
        ccq = CQ(ctx, 64, None, channel, 0)
        ccq.req_notify()
        n, _ = ccq.poll(8)
        check("CQ on a completion channel: create, arm, poll", n == 0,
              f"polled {n}")
        ccq.close()
    except PyverbsRDMAError as ex:
        bad("CQ on a completion channel", str(ex))
    channel.close()

    expect_errno("create_cq(max_cqe + 1) is EINVAL", errno.EINVAL,
                 lambda: CQ(ctx, max_cqe + 1))
    expect_errno("create_cq(0) is EINVAL", errno.EINVAL, lambda: CQ(ctx, 0))
    expect_errno("create_cq on a comp_vector beyond the device's is EINVAL",
                 errno.EINVAL,
                 lambda: CQ(ctx, 8, None, None, ctx.num_comp_vectors))

    # many create/destroy cycles: offsets are reused, nothing accumulates
    for i in range(200):
        CQ(ctx, 1 + (i * 37) % 2000).close()
    ok("200 CQ create/destroy cycles")

    for cq in cqs:
        cq.close()
    check("no user CQ left after closing them", user_objects(dev, "cq") == 0,
          f"{user_objects(dev, 'cq')} left")


def test_srq(ctx, pd, attr):
    max_wr, max_sge = attr.max_srq_wr, attr.max_srq_sge

    init = SrqInitAttr(SrqAttr(max_wr=4, max_sge=2))
    srq = SRQ(pd, init)
    got = srq.query()
    check("create_srq(4 WRs, 2 SGEs): query max_wr >= 4, max_sge >= 2",
          got.max_wr >= 4 and got.max_sge >= 2,
          f"max_wr {got.max_wr} max_sge {got.max_sge}")
    check("create_srq reports the same max_wr as query",
          init.max_wr == got.max_wr, f"{init.max_wr} vs {got.max_wr}")
    check("create_srq ignores srq_limit (not armed)", got.srq_limit == 0,
          f"srq_limit {got.srq_limit}")

    cap = got.max_wr
    posted = post_until_full(srq, cap + 1)
    check(f"post_srq_recv fills exactly max_wr ({cap}) ring entries",
          posted == cap, f"posted {posted}")

    # grow: the posted WQEs move to the new ring
    srq.modify(SrqAttr(max_wr=40), e.IBV_SRQ_MAX_WR)
    got = srq.query()
    check("modify_srq(max_wr 40): query max_wr >= 40", got.max_wr >= 40,
          f"max_wr {got.max_wr}")
    more = post_until_full(srq, got.max_wr + 1)
    check("after growing, the new ring holds the old WQEs plus the rest",
          more == got.max_wr - cap, f"posted {more} more, want "
          f"{got.max_wr - cap}")

    expect_errno("modify_srq(max_wr below the posted count) is EINVAL",
                 errno.EINVAL,
                 lambda: srq.modify(SrqAttr(max_wr=4), e.IBV_SRQ_MAX_WR))
    expect_errno("modify_srq(max_wr > device max) is EINVAL", errno.EINVAL,
                 lambda: srq.modify(SrqAttr(max_wr=max_wr + 1),
                                    e.IBV_SRQ_MAX_WR))
    srq.close()

    srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=100, max_sge=1)))
    srq.modify(SrqAttr(srq_limit=10), e.IBV_SRQ_LIMIT)
    got = srq.query()
    check("modify_srq(srq_limit 10) arms the limit", got.srq_limit == 10,
          f"srq_limit {got.srq_limit}")
    expect_errno("modify_srq(srq_limit > max_wr) is EINVAL", errno.EINVAL,
                 lambda: srq.modify(SrqAttr(srq_limit=got.max_wr + 1),
                                    e.IBV_SRQ_LIMIT))
    expect_errno("modify_srq(max_wr below the armed limit) is EINVAL",
                 errno.EINVAL,
                 lambda: srq.modify(SrqAttr(max_wr=5), e.IBV_SRQ_MAX_WR))
    # shrink an empty SRQ, then post into the new ring
    srq.modify(SrqAttr(max_wr=20, srq_limit=0),
               e.IBV_SRQ_MAX_WR | e.IBV_SRQ_LIMIT)
    got = srq.query()
    check("modify_srq(max_wr 20, limit 0) shrinks and disarms",
          20 <= got.max_wr < 100 and got.srq_limit == 0,
          f"max_wr {got.max_wr} srq_limit {got.srq_limit}")
    posted = post_until_full(srq, got.max_wr + 1)
    check("the shrunk ring takes exactly max_wr WQEs", posted == got.max_wr,
          f"posted {posted}")
    srq.close()

    expect_errno("create_srq(max_wr > device max) is EINVAL", errno.EINVAL,
                 lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=max_wr + 1))))
    expect_errno("create_srq(max_sge > device max) is EINVAL", errno.EINVAL,
                 lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=8,
                                                     max_sge=max_sge + 1))))
    expect_errno("create_srq(max_wr 0) is EINVAL", errno.EINVAL,
                 lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=0))))

    shapes = ((1, 1), (7, 32), (max_wr, 4), (1000, 0))
    srqs = [SRQ(pd, SrqInitAttr(SrqAttr(max_wr=w, max_sge=s)))
            for w, s in shapes]
    got = [(s.query().max_wr, s.query().max_sge) for s in srqs]
    check("SRQs of several shapes get at least what they asked for",
          all(g[0] >= w and g[1] >= max(s, 1)
              for g, (w, s) in zip(got, shapes)), f"got {got}")
    for s in srqs:
        s.close()


def ring_header(m):
    """(log2_elem_size, index_mask, producer_index, consumer_index)"""
    return tuple(struct.unpack_from("<I", m, off)[0]
                 for off in (0, 4, 128, 256))


def expect_mmap_errno(name, want, fd, length, flags, offset):
    try:
        mmap.mmap(fd, length, flags, mmap.PROT_READ | mmap.PROT_WRITE,
                  offset=offset).close()
    except OSError as ex:
        check(name, ex.errno == want, f"errno {ex.errno}, want {want}")
        return
    bad(name, "mmap succeeded")


def test_mmap(dev):
    """
    Map a CQ ring a second time, next to the provider's mapping. The first
    ring of a fresh context sits at mmap offset 0 (ib_core hands out the
    lowest free page offset). Then check the mmap error cases, and that the
    buffer outlives a resize, a fork and the CQ itself while still mapped.
    """
    page = mmap.PAGESIZE
    ctx = Context(name=dev)
    cq = CQ(ctx, 1)
    fd = ctx.cmd_fd
    rw = mmap.PROT_READ | mmap.PROT_WRITE
    try:
        m = mmap.mmap(fd, page, mmap.MAP_SHARED, rw, offset=0)
    except OSError as ex:
        bad("mmap of the first CQ ring at offset 0", str(ex))
        cq.close()
        ctx.close()
        return
    hdr = ring_header(m)
    check("ring header: power-of-two slots >= 48 B, 2 slots, indices 0",
          hdr[0] <= 12 and (1 << hdr[0]) >= 48 and hdr[1:] == (1, 0, 0),
          f"header {hdr}")

    expect_mmap_errno("mmap longer than the ring is EINVAL", errno.EINVAL,
                      fd, 2 * page, mmap.MAP_SHARED, 0)
    expect_mmap_errno("MAP_PRIVATE mmap of a ring is EINVAL", errno.EINVAL,
                      fd, page, mmap.MAP_PRIVATE, 0)
    expect_mmap_errno("mmap at an unknown offset is EINVAL", errno.EINVAL,
                      fd, page, mmap.MAP_SHARED, 4096 * page)

    cq.resize(100)
    n, _ = cq.poll(1)
    check("after resize_cq the old ring is still mapped and intact",
          ring_header(m) == hdr and n == 0,
          f"header {ring_header(m)}, polled {n}")

    # The ring VMAs are VM_DONTCOPY (srnic_queue.c: srnic can unmap them on
    # revoke only in the address spaces that mmap()ed them): a fork's child
    # does not inherit them, its read faults; the parent's stay intact.
    pid = os.fork()
    if pid == 0:
        os._exit(0 if ring_header(m) == hdr else 1)
    _, status = os.waitpid(pid, 0)
    check("a forked child does not inherit the ring mapping (its read: SIGSEGV)",
          os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV,
          f"status {status}")
    check("after the fork the parent's ring mapping is intact",
          ring_header(m) == hdr, f"header {ring_header(m)}")

    cq.close()
    check("after destroy_cq a still-mapped ring stays readable",
          ring_header(m) == hdr, f"header {ring_header(m)}")
    m.close()
    ctx.close()


def main():
    dev = sys.argv[1]
    test_mmap(dev)
    ctx = Context(name=dev)
    attr = ctx.query_device()
    pd = PD(ctx)
    test_cq(ctx, dev, attr)
    test_srq(ctx, pd, attr)
    pd.close()
    ctx.close()
    print(f"pyverbs_cq: done, {failures()} failed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
