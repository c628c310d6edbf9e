# SPDX-License-Identifier: GPL-2.0
#
# pyverbs_lib.py: what the pyverbs scripts in tests/vm share (observe_qp.py,
# rc_xfer.py, pyverbs_cq.py):
#   ok/bad/check  one "ok NAME" / "not ok NAME: reason" line per check (the
#                 shell turns them into lib.sh results); failures() counts
#                 the "not ok" lines
#   gid_index     the index of the RoCEv2 GID ::ffff:IP on port 1
#   RcEnd         an RC QP on one device with its PD, CQ and MR, brought up
#                 to RTS against a peer described by me() (QP number, PSN,
#                 GID; plus MR address and rkey for RDMA)
#
# The scripts are run by path (python3 tests/vm/X.py, from any directory),
# so Python puts tests/vm first on sys.path and `import pyverbs_lib` finds
# this file.
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
import pyverbs.enums as e

PORT = 1
ACC = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
       e.IBV_ACCESS_REMOTE_READ)

_FAILS = 0


def ok(name):
    print(f"ok {name}", flush=True)


def bad(name, why):
    global _FAILS
    _FAILS += 1
    print(f"not ok {name}: {why}", flush=True)


def check(name, cond, why=""):
    if cond:
        ok(name)
    else:
        bad(name, why or "condition false")


def failures():
    """How many checks failed so far (bad() calls)."""
    return _FAILS


def gid_index(ctx, ip):
    """Index of the RoCEv2 GID ::ffff:ip."""
    want = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(
        int(x) for x in ip.split("."))
    for i in range(16):
        try:
            if str(ctx.query_gid(PORT, i)) == want:
                return i
        except Exception:  # pylint: disable=broad-except
            continue
    raise RuntimeError(f"no GID for {ip}")


class RcEnd:
    """
    An RC QP on device dev, addressed by the GID of ip: its PD, one CQ of cqe
    entries for sends and receives, an MR of mr_size bytes (local write,
    remote write and read), send and receive queues of 1-SGE WQEs, every
    send signalled. The QP stays in RESET until to_rts().
    """

    def __init__(self, dev, ip, psn, cqe, mr_size, max_send_wr, max_recv_wr):
        self.ctx = Context(name=dev)
        self.gidx = gid_index(self.ctx, ip)
        self.gid = str(self.ctx.query_gid(PORT, self.gidx))
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, cqe, None, None, 0)
        self.mr = MR(self.pd, mr_size, ACC)
        cap = QPCap(max_send_wr=max_send_wr, max_recv_wr=max_recv_wr,
                    max_send_sge=1, max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq,
                          cap=cap, sq_sig_all=1)
        self.qp = QP(self.pd, init)
        self.psn = psn

    def me(self):
        """What the peer needs: for its to_rts(), and to RDMA to our MR."""
        return {"qpn": self.qp.qp_num, "psn": self.psn, "gid": self.gid,
                "addr": self.mr.buf, "rkey": self.mr.rkey}

    def to_rts(self, peer, rd_atomic, timeout, retry_cnt, rnr_retry):
        """INIT, RTR, RTS towards peer (another end's me()), path MTU 1024,
        rd_atomic READs in flight each way."""
        attr = QPAttr(port_num=PORT)
        attr.path_mtu = e.IBV_MTU_1024
        attr.max_dest_rd_atomic = rd_atomic
        attr.max_rd_atomic = rd_atomic
        attr.min_rnr_timer = 12
        attr.timeout = timeout
        attr.retry_cnt = retry_cnt
        attr.rnr_retry = rnr_retry
        attr.dest_qp_num = peer["qpn"]
        attr.rq_psn = peer["psn"]
        attr.sq_psn = self.psn
        attr.qp_access_flags = ACC
        gr = GlobalRoute(dgid=GID(peer["gid"]), sgid_index=self.gidx,
                         hop_limit=64)
        attr.ah_attr = AHAttr(port_num=PORT, is_global=1, gr=gr)
        self.qp.to_rts(attr)

    def qp_state(self):
        attr, _ = self.qp.query(e.IBV_QP_STATE)
        return attr.qp_state
