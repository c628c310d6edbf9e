#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# dc_forge.py IFACE SRC_MAC DST_MAC DCTN: forged DC frames (docs/dc.md) at
# srnic0 (vethA 10.99.0.1), written on IFACE (vethB, netns nsB) with
# wire_fuzz.py's Frames (right ICRCs unless said), run by test_dc.sh
# (srnic0 in native mode):
#   - a DC SEND ONLY with a DCETH at an RC QP of srnic0 (made here with
#     pyverbs): dropped, dc_not_dc_qp_drops
#   - the same at a QP number nobody has: dropped, dc_unknown_dct
#   - a DC SEND ONLY cut inside its DCETH (lengths fixed, ICRC right):
#     dropped as a bad header
#   - a DC SEND ONLY at the DCT DCTN with a wrong key and no ATTACH:
#     dropped, dc_key_violations (no NAK: only ATTACH packets get one)
# Each kind N times. Output: "info rc_qpn N" and "ok sent" lines.
#
# dc_forge.py --default IFACE SRC_MAC DST_MAC: the same way, at srnic0 in
# the default mode (run by test_dc_wire.sh), N rounds of every DC opcode
# kind - SEND ONLY with ATTACH, WRITE ONLY, READ request, FETCH_ADD,
# CMP_SWP, DETACH (DCETH), ACK, READ response ONLY, ATOMIC ACK, DETACH ACK
# (DCRETH) - each at QP 1, at an RC QP of srnic0 and at a QP number nobody
# has, well formed (right lengths and ICRC): a default-mode device drops
# and counts every one (dc_not_dc_qp_drops). Output as above, plus
# "info sent_total N".
import struct
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr

from wire_fuzz import NO_QPN, Frames

OP_DC_SEND_ONLY = 0xc4
OP_DC_WRITE_ONLY, OP_DC_READ_REQ = 0xca, 0xcc
OP_DC_READ_RESP_ONLY, OP_DC_ACK, OP_DC_ATOMIC_ACK = 0xd0, 0xd1, 0xd2
OP_DC_CMP_SWP, OP_DC_FETCH_ADD = 0xd3, 0xd4
OP_DC_DETACH, OP_DC_DETACH_ACK = 0xde, 0xdf
N = 5


def dceth(key, flags, dci, gen):
    return struct.pack("!QII", key, flags << 24 | dci, gen)


def dcreth(dctn, gen):
    return struct.pack("!II", dctn & 0xffffff, gen)


def rc_qp():
    """An RC QP of srnic0 (pyverbs), for DC frames to hit."""
    ctx = Context(name="srnic0")
    pd = PD(ctx)
    cq = CQ(ctx, 8)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=1, max_recv_wr=1)))
    print(f"info rc_qpn {qp.qp_num}", flush=True)
    return ctx, pd, cq, qp


def default_mode(fr, rc_qpn):
    """Every DC opcode kind at QP 1, an RC QP and no QP, N rounds."""
    reth = struct.pack("!QII", 0x10000, 0x1234, 64)
    atom = struct.pack("!QIQQ", 0x10000, 0x1234, 1, 2)
    aeth = struct.pack("!I", 0)
    payload = bytes(range(64))
    for i in range(N):
        req = dceth(0x1234, 0x8a, 0x123, i + 1)
        resp = dcreth(0x456, i + 1)
        kinds = [
            (OP_DC_SEND_ONLY, req, payload),
            (OP_DC_WRITE_ONLY, req + reth, payload),
            (OP_DC_READ_REQ, req + reth, b""),
            (OP_DC_FETCH_ADD, req + atom, b""),
            (OP_DC_CMP_SWP, req + atom, b""),
            (OP_DC_DETACH, dceth(0x1234, 0, 0x123, i + 1), b""),
            (OP_DC_ACK, resp + aeth, b""),
            (OP_DC_READ_RESP_ONLY, resp + aeth, payload),
            (OP_DC_ATOMIC_ACK, resp + aeth + struct.pack("!Q", 7), b""),
            (OP_DC_DETACH_ACK, resp, b""),
        ]
        for qpn, cls in ((1, "dc_at_gsi"), (rc_qpn, "dc_at_rc"),
                         (NO_QPN, "dc_at_none")):
            for op, ext, pl in kinds:
                bth, rest = fr.roce(op, qpn, 100 + i, ext, pl,
                                    ackreq=op == OP_DC_SEND_ONLY)
                fr.send(cls, fr.build(bth, rest))


def main():
    default = sys.argv[1:2] == ["--default"]
    if default:
        del sys.argv[1]
    iface, src, dst = sys.argv[1:4]
    ctx, pd, cq, qp = rc_qp()
    fr = Frames(iface, src, dst)
    if default:
        default_mode(fr, qp.qp_num)
        for cls, n in sorted(fr.sent.items()):
            print(f"ok sent {n} {cls}", flush=True)
        print(f"info sent_total {sum(fr.sent.values())}", flush=True)
        print("dc_forge: done", flush=True)
        return
    dctn = sys.argv[4]
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
