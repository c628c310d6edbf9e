#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# dc_forge.py IFACE SRC_MAC DST_MAC DCTN: forged DC frames (docs/dc.md) at
# srnic0 (vethA 10.99.0.1), written on IFACE (vethB, netns nsB) with
# wire_fuzz.py's Frames (right ICRCs unless said), run by test_dc.sh:
#   - a DC SEND ONLY with a DCETH at an RC QP of srnic0 (made here with
#     pyverbs): dropped, dc_not_dc_qp_drops
#   - the same at a QP number nobody has: dropped, dc_unknown_dct
#   - a DC SEND ONLY cut inside its DCETH (lengths fixed, ICRC right):
#     dropped as a bad header
#   - a DC SEND ONLY at the DCT DCTN with a wrong key and no ATTACH:
#     dropped, dc_key_violations (no NAK: only ATTACH packets get one)
# Each kind N times. Output: "info rc_qpn N" and "ok sent" lines.
import struct
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr

from wire_fuzz import NO_QPN, Frames

OP_DC_SEND_ONLY = 0xc4
N = 5


def dceth(key, flags, dci, gen):
    return struct.pack("!QII", key, flags << 24 | dci, gen)


def main():
    iface, src, dst, dctn = sys.argv[1:5]
    ctx = Context(name="srnic0")
    pd = PD(ctx)
    cq = CQ(ctx, 8)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=1, max_recv_wr=1)))
    print(f"info rc_qpn {qp.qp_num}", flush=True)
    fr = Frames(iface, src, dst)
    payload = bytes(range(64))
    for i in range(N):
        ext = dceth(0x1234, 0x80, 0x123, i)
        bth, rest = fr.roce(OP_DC_SEND_ONLY, qp.qp_num, i, ext, payload)
        fr.send("dc_at_rc", fr.build(bth, rest))
        bth, rest = fr.roce(OP_DC_SEND_ONLY, NO_QPN, i, ext, payload)
        fr.send("dc_unknown", fr.build(bth, rest))
        bth, rest = fr.roce(OP_DC_SEND_ONLY, int(dctn), i, ext[:8])
        fr.send("dc_short", fr.build(bth, rest))
        ext = dceth(0xbad0bad0, 0, 0x123, i)
        bth, rest = fr.roce(OP_DC_SEND_ONLY, int(dctn), i, ext, payload)
        fr.send("dc_badkey", fr.build(bth, rest))
    for cls, n in sorted(fr.sent.items()):
        print(f"ok sent {n} {cls}", flush=True)
    print("dc_forge: done", flush=True)


if __name__ == "__main__":
    main()
