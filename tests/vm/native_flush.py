#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""native_flush DEV: a receive posted to an RC QP already in the error state
completes with IBV_WC_WR_FLUSH_ERR (IBA 10.8.3.2), and one posted before the
move to ERR too; run by tests/vm/test_native.sh on a native device (srnic's
provider rings the empty POST_RECV that has the kernel flush the ring).
Prints "ok NAME" / "not ok NAME: why" lines, then "native_flush: done"."""
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR


def poll_one(cq, secs=5.0):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        n, wcs = cq.poll(1)
        if n:
            return wcs[0]
        time.sleep(0.01)
    return None


def check(name, wc, wr_id):
    if wc is None:
        print(f'not ok {name}: no completion within 5 s')
    elif wc.status != e.IBV_WC_WR_FLUSH_ERR or wc.wr_id != wr_id:
        print(f'not ok {name}: status {wc.status} wr_id {wc.wr_id}')
    else:
        print(f'ok {name}')


def main():
    ctx = Context(name=sys.argv[1])
    pd = PD(ctx)
    cq = CQ(ctx, 8)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    sge = [SGE(mr.buf, 4096, mr.lkey)]
    init = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
    init.qp_access_flags = 0
    qp.modify(init, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
              e.IBV_QP_ACCESS_FLAGS)
    qp.post_recv(RecvWR(wr_id=1, num_sge=1, sg=sge))
    qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    check('a receive posted before the move to ERR completes flushed',
          poll_one(cq), 1)
    qp.post_recv(RecvWR(wr_id=2, num_sge=1, sg=sge))
    check('a receive posted in ERR completes flushed', poll_one(cq), 2)
    print('native_flush: done')


main()
