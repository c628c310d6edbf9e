#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# observe_qp.py DEV_A IP_A DEV_B IP_B HOLD_FILE: RC traffic with known PSNs
# between two srnic devices from one process, run by tests/vm/test_observe.sh
# to check what srnic reports about it (restrack driver attributes, counters,
# tracepoints).
#
#   live   QP pair a<->b, PSNs fixed: b RDMA WRITEs 8 x 4 KiB into a (32
#          packets at MTU 1024), a RDMA READs 2 x 4 KiB from b (8 response
#          PSNs); data checked. Prints one "live {json}" line with the QPNs,
#          PSNs and packet counts, then holds both QPs until HOLD_FILE exists
#          (the shell reads `rdma -dd resource show qp` meanwhile).
#   access b RDMA WRITEs with a wrong rkey: b completes with
#          IBV_WC_REM_ACCESS_ERR (a sent a remote access error NAK).
#   invreq b SENDs 4 KiB into a 1 KiB receive buffer: b completes with
#          IBV_WC_REM_INV_REQ_ERR (a sent an invalid request NAK), a's
#          receive with IBV_WC_LOC_LEN_ERR.
#
# Output: "ok NAME" / "not ok NAME: reason" per check, and the "live" line;
# exit status 0 when it ran to the end.
import json
import os
import sys
import time

from pyverbs.wr import RecvWR, SGE, SendWR
import pyverbs.enums as e

from pyverbs_lib import RcEnd, check

RETRY_CNT = 5
RNR_RETRY = 3


class End(RcEnd):
    """An RC QP, its CQ and a 64 KiB MR on one device."""

    def __init__(self, dev, ip, psn):
        super().__init__(dev, ip, psn, cqe=64, mr_size=65536, max_send_wr=16,
                         max_recv_wr=16)

    def connect(self, peer):
        self.to_rts(peer.me(), rd_atomic=4, timeout=14, retry_cnt=RETRY_CNT,
                    rnr_retry=RNR_RETRY)

    def post(self, opcode, off, length, peer=None, roff=0, rkey=None):
        sge = SGE(self.mr.buf + off, length, self.mr.lkey)
        wr = SendWR(wr_id=off, opcode=opcode, num_sge=1, sg=[sge])
        if peer is not None:
            wr.set_wr_rdma(peer.mr.rkey if rkey is None else rkey,
                           peer.mr.buf + roff)
        self.qp.post_send(wr)

    def wait(self, n, secs=20):
        """The statuses of the next @n completions (fewer on timeout)."""
        out = []
        deadline = time.monotonic() + secs
        while len(out) < n and time.monotonic() < deadline:
            nc, wcs = self.cq.poll(n - len(out))
            out += [wc.status for wc in wcs[:nc]]
            if nc == 0:
                time.sleep(0.001)
        return out


def pair(dev_a, ip_a, dev_b, ip_b, psn_a, psn_b):
    a = End(dev_a, ip_a, psn_a)
    b = End(dev_b, ip_b, psn_b)
    a.connect(b)
    b.connect(a)
    return a, b


def live(args, hold):
    a, b = pair(*args, 0x100, 0x200)
    src = bytes((i * 7 + 3) & 0xff for i in range(32768))
    b.mr.write(src, 32768, 0)
    for i in range(8):
        b.post(e.IBV_WR_RDMA_WRITE, i * 4096, 4096, a, i * 4096)
    st = b.wait(8)
    check("live: 8 RDMA WRITEs of 4 KiB complete",
          st == [e.IBV_WC_SUCCESS] * 8, f"statuses {st}")
    check("live: WRITE data arrived", a.mr.read(32768, 0) == src,
          "memory differs")
    for i in range(2):
        a.post(e.IBV_WR_RDMA_READ, 32768 + i * 4096, 4096, b, i * 4096)
    st = a.wait(2)
    check("live: 2 RDMA READs of 4 KiB complete",
          st == [e.IBV_WC_SUCCESS] * 2, f"statuses {st}")
    check("live: READ data arrived", a.mr.read(8192, 32768) == src[:8192],
          "memory differs")
    info = {"a_qpn": a.qp.qp_num, "b_qpn": b.qp.qp_num,
            "a_psn": a.psn, "b_psn": b.psn, "b_pkts": 32, "a_pkts": 8,
            "retry_cnt": RETRY_CNT, "rnr_retry": RNR_RETRY}
    print("live " + json.dumps(info), flush=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(hold) and time.monotonic() < deadline:
        time.sleep(0.05)


def access(args):
    a, b = pair(*args, 0x300, 0x400)
    b.post(e.IBV_WR_RDMA_WRITE, 0, 1024, a, 0, rkey=a.mr.rkey ^ 0x5a00)
    st = b.wait(1)
    check("access: WRITE with a wrong rkey fails with REM_ACCESS_ERR",
          st == [e.IBV_WC_REM_ACCESS_ERR], f"statuses {st}")


def invreq(args):
    a, b = pair(*args, 0x500, 0x600)
    a.qp.post_recv(RecvWR(wr_id=1, num_sge=1,
                          sg=[SGE(a.mr.buf, 1024, a.mr.lkey)]))
    b.post(e.IBV_WR_SEND, 0, 4096)
    st = b.wait(1)
    check("invreq: SEND too long for the receive fails with REM_INV_REQ_ERR",
          st == [e.IBV_WC_REM_INV_REQ_ERR], f"statuses {st}")
    st = a.wait(1)
    check("invreq: the receive completes with LOC_LEN_ERR",
          st[:1] == [e.IBV_WC_LOC_LEN_ERR], f"statuses {st}")


def main():
    args = sys.argv[1:5]
    live(args, sys.argv[5])
    access(args)
    invreq(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
