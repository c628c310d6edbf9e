# SPDX-License-Identifier: GPL-2.0
#
# qp_churn.py DEV IP N: create and destroy N QPs on DEV (RC and UD in turn,
# each taken to INIT, UD ones to RTS), while a UD QP on the same device sends
# a datagram to each churned QP's number just before it is destroyed, so
# that the receive path's lookup by QPN races with destroy_qp. IP is the
# IPv4 address whose RoCEv2 GID the datagrams go to (the device's own).
#
# Checks: every create, modify and destroy succeeds; every datagram
# completes successfully at the sender. Prints the time per create/destroy
# pair as "info" (a figure, not a check) and "qp_churn: done".
import sys
import time

from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR
import pyverbs.enums as e

from pyverbs_lib import PORT, bad, check, failures, gid_index

QKEY = 0x11111111


def ud_attr():
    attr = QPAttr(port_num=PORT)
    attr.qkey = QKEY
    attr.pkey_index = 0
    return attr


def main():
    dev, ip, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ctx = Context(name=dev)
    gidx = gid_index(ctx, ip)
    pd = PD(ctx)
    scq = CQ(ctx, 64, None, None, 0)
    ccq = CQ(ctx, 64, None, None, 0)
    mr = MR(pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
    cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)
    sender = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=scq, rcq=scq,
                               cap=cap, sq_sig_all=1))
    sender.to_rts(ud_attr())
    gr = GlobalRoute(dgid=GID(str(ctx.query_gid(PORT, gidx))),
                     sgid_index=gidx, hop_limit=64)
    ah = AH(pd, attr=AHAttr(port_num=PORT, is_global=1, gr=gr))
    sge = SGE(mr.buf, 64, mr.lkey)

    sent = errors = 0
    t0 = time.monotonic()
    for i in range(n):
        qpt = e.IBV_QPT_RC if i % 2 == 0 else e.IBV_QPT_UD
        try:
            qp = QP(pd, QPInitAttr(qp_type=qpt, scq=ccq, rcq=ccq, cap=cap))
            if qpt == e.IBV_QPT_UD:
                qp.to_rts(ud_attr())
            else:
                attr = QPAttr(port_num=PORT)
                attr.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE
                qp.to_init(attr)
            wr = SendWR(opcode=e.IBV_WR_SEND, num_sge=1, sg=[sge])
            wr.set_wr_ud(ah, qp.qp_num, QKEY)
            sender.post_send(wr)
            sent += 1
            qp.close()
        except Exception as ex:  # pylint: disable=broad-except
            errors += 1
            if errors <= 3:
                bad(f"create/modify/destroy QP {i}", repr(ex))
        # reap the datagram's completion
        deadline = time.monotonic() + 10
        while sent:
            npolled, wcs = scq.poll()
            for wc in wcs[:npolled]:
                sent -= 1
                if wc.status != e.IBV_WC_SUCCESS:
                    errors += 1
                    bad(f"datagram to churned QP {i}", f"status {wc.status}")
            if time.monotonic() > deadline:
                bad(f"datagram to churned QP {i}", "no completion in 10 s")
                return 1
    secs = time.monotonic() - t0
    check(f"{n} QPs created and destroyed, a datagram sent to each",
          errors == 0, f"{errors} errors")
    print(f"info: {n} QP create/destroy pairs in {secs:.1f} s "
          f"({secs * 1000 / n:.2f} ms each)", flush=True)
    sender.close()
    print("qp_churn: done", flush=True)
    return 1 if failures() else 0


if __name__ == "__main__":
    sys.exit(main())
