#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# wire_fuzz.py IFACE SRC_MAC DST_MAC SECS SEED: malformed and forged RoCEv2
# frames at live srnic QPs, run by tests/vm/test_wire_fuzz.sh in netns nsB
# (srnic1 on vethB 10.99.0.2); frames are written on IFACE (vethB) with an
# AF_PACKET socket and arrive at srnic0 (vethA 10.99.0.1) as if srnic1 had
# sent them. Every QP is on srnic0 <-> srnic1 (rdma devices are shared by
# all netns).
#
#   ghost  QP g on srnic0 aimed at a QP number nobody has: its WRITE is
#          never answered. A forged ACK for a PSN never sent must not
#          complete it; a forged error NAK for a PSN never sent must not
#          complete it nor fail the QP; a forged NAK below the window
#          neither. Then a forged ACK for its PSNs (valid, in the window)
#          completes both WRITEs: forged frames with a right ICRC are taken.
#   fuzz   for SECS seconds, a data-checked RC session (a <-> b: a WRITEs
#          random data into b and READs it back, b WRITEs into a and READs
#          it back, every byte compared) while frames at its QPs and at a
#          victim pair (v on srnic0, w on srnic1) go out in rounds:
#            - every truncation of a request and of a response, lengths
#              kept (lying) or fixed with a fresh ICRC;
#            - requests and responses at PSNs near the expected ones with a
#              bad ICRC, one random byte changed;
#            - lying IP total length and UDP length, both ways;
#            - responses for PSNs never sent, with a right ICRC (ignored:
#              ack_out_of_window);
#            - requests with wild RETH / AtomicETH / payload fields and a
#              right ICRC at the victim v (it may fail: v and w are not
#              data-checked), and responses with wild AETH at the victim.
#   fresh  a new QP pair moves 64 KiB both ways, data checked.
#
# Output: "ok NAME" / "not ok NAME: reason" per check, "sent CLASS N" per
# frame class, "info ..." lines; exit status 0 when it ran to the end.
import os
import random
import socket
import struct
import sys
import time
import zlib

from pyverbs.wr import SGE, SendWR
import pyverbs.enums as e

from pyverbs_lib import RcEnd, check, failures, ok

IP_A, IP_B = "10.99.0.1", "10.99.0.2"
ROCE_PORT = 4791
PMTU = 1024
NO_QPN = 0xfffff0          # above anything srnic allocates at start
ACK_SYN = 0x1f             # ACK, credit field "invalid"
NAK_SEQ, NAK_INV, NAK_ACC, NAK_OP = 0x60, 0x61, 0x62, 0x63

OP_WRITE_ONLY, OP_READ_REQ = 0x0a, 0x0c
OP_SEND_ONLY, OP_CMP_SWAP, OP_FETCH_ADD = 0x04, 0x13, 0x14
OP_READ_RESP_ONLY, OP_ACK, OP_ATOMIC_ACK = 0x10, 0x11, 0x12


def icrc(ipudp_bth, rest):
    """RoCEv2 ICRC (IBA A17.3.3): CRC-32 over 8 bytes of ones, the IPv4 +
    UDP + BTH headers with TOS, TTL, IP checksum, UDP checksum and BTH
    byte 4 masked with ones, then everything after the BTH."""
    h = bytearray(ipudp_bth)
    h[1] = 0xff                     # TOS
    h[8] = 0xff                     # TTL
    h[10:12] = b"\xff\xff"          # IP header checksum
    h[26:28] = b"\xff\xff"          # UDP checksum
    h[28 + 4] = 0xff                # BTH FECN/BECN/resv6
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(h) + rest))


def ip_csum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return struct.pack("!H", ~s & 0xffff)


class Frames:
    """Ethernet + IPv4 + UDP + RoCEv2 frames from IP_B to IP_A."""

    def __init__(self, iface, src_mac, dst_mac):
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.bind((iface, 0))
        self.eth = (bytes.fromhex(dst_mac.replace(":", "")) +
                    bytes.fromhex(src_mac.replace(":", "")) + b"\x08\x00")
        self.ident = random.randrange(1, 0xffff)
        self.sent = {}

    def roce(self, opcode, qpn, psn, ext=b"", payload=b"", ackreq=False,
             pad=None):
        """The RoCEv2 part: BTH, extension headers, payload and pad."""
        if pad is None:
            pad = -len(payload) % 4
        bth = struct.pack("!BBHI", opcode, pad << 4, 0xffff, qpn & 0xffffff)
        bth += struct.pack("!I", (0x80000000 if ackreq else 0) |
                           (psn & 0xffffff))
        return bth, ext + payload + b"\0" * pad

    def build(self, bth, rest, good_icrc=True, ip_len=None, udp_len=None):
        """A whole frame; lengths true unless given, ICRC right or wrong."""
        self.ident = (self.ident + 1) & 0xffff or 1
        n = 20 + 8 + len(bth) + len(rest) + 4
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, n if ip_len is None
                         else ip_len, self.ident, 0x4000, 64, 17, 0,
                         socket.inet_aton(IP_B), socket.inet_aton(IP_A))
        ip = ip[:10] + ip_csum(ip) + ip[12:]
        udp = struct.pack("!HHHH", 0xc000 + self.ident % 0x3fff, ROCE_PORT,
                          n - 20 if udp_len is None else udp_len, 0)
        crc = icrc(ip + udp + bth, rest)
        if not good_icrc:
            crc = bytes(b ^ 0x5a for b in crc)
        return self.eth + ip + udp + bth + rest + crc

    def send(self, cls, frame):
        self.sock.send(frame)
        self.sent[cls] = self.sent.get(cls, 0) + 1

    def aeth(self, syn, msn=0):
        return struct.pack("!I", syn << 24 | (msn & 0xffffff))


class End(RcEnd):
    def __init__(self, dev, ip, psn, mr_size=1 << 18):
        super().__init__(dev, ip, psn, cqe=256, mr_size=mr_size,
                         max_send_wr=64, max_recv_wr=16)
        self.next_psn = psn
        self.mr_size = mr_size

    def connect(self, peer, timeout=14, retry_cnt=7):
        self.to_rts(peer, rd_atomic=8, timeout=timeout, retry_cnt=retry_cnt,
                    rnr_retry=7)

    def post(self, opcode, off, length, peer, roff):
        sge = SGE(self.mr.buf + off, length, self.mr.lkey)
        wr = SendWR(wr_id=off, opcode=opcode, num_sge=1, sg=[sge])
        wr.set_wr_rdma(peer["rkey"], peer["addr"] + roff)
        self.qp.post_send(wr)
        self.next_psn += max(1, -(-length // PMTU))

    def wait(self, n, secs):
        """The statuses of the next n completions (fewer on timeout)."""
        out = []
        deadline = time.monotonic() + secs
        while len(out) < n and time.monotonic() < deadline:
            got, wcs = self.cq.poll(n - len(out))
            if got > 0:
                out += [wc.status for wc in wcs]
            else:
                time.sleep(0.001)
        return out


def ghost(fr):
    """Finding 3: forged ACKs and NAKs outside the outstanding window."""
    g = End("srnic0", IP_A, 0x1000, mr_size=8192)
    gid_b = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(
        int(x) for x in IP_B.split("."))
    g.connect({"qpn": NO_QPN, "psn": 0, "gid": gid_b, "addr": 0, "rkey": 0},
              timeout=18, retry_cnt=7)
    qpn = g.qp.qp_num
    nowhere = {"addr": 0x10000, "rkey": 0x1234}
    g.post(e.IBV_WR_RDMA_WRITE, 0, 64, nowhere, 0)       # PSN 0x1000
    g.post(e.IBV_WR_RDMA_WRITE, 64, 64, nowhere, 0)      # PSN 0x1001
    # Past anything sent: an ACK, then an error NAK, then a NAK before it.
    fr.send("ghost", fr.build(*fr.roce(OP_ACK, qpn, 0x1000 + 100,
                                        fr.aeth(ACK_SYN, 5))))
    st = g.wait(1, 0.5)
    check("ghost: a forged ACK for a PSN never sent completes nothing",
          st == [], f"completions {st}")
    fr.send("ghost", fr.build(*fr.roce(OP_ACK, qpn, 0x1000 + 50,
                                        fr.aeth(NAK_ACC, 5))))
    st = g.wait(1, 0.5)
    check("ghost: a stray NAK (PSN never sent) completes nothing",
          st == [], f"completions {st}")
    check("ghost: a stray NAK leaves the QP in RTS",
          g.qp_state() == e.IBV_QPS_RTS, f"state {g.qp_state()}")
    fr.send("ghost", fr.build(*fr.roce(OP_ACK, qpn, 0x1000 - 10,
                                        fr.aeth(NAK_OP, 5))))
    st = g.wait(1, 0.5)
    check("ghost: a NAK below the window completes nothing",
          st == [] and g.qp_state() == e.IBV_QPS_RTS,
          f"completions {st}, state {g.qp_state()}")
    # In the window: a forged ACK is as good as a real one.
    fr.send("ghost", fr.build(*fr.roce(OP_ACK, qpn, 0x1001,
                                        fr.aeth(ACK_SYN, 2))))
    st = g.wait(2, 3)
    check("ghost: an ACK in the window completes both WRITEs",
          st == [e.IBV_WC_SUCCESS] * 2, f"completions {st}")
    return g


class Session:
    """a (srnic0) <-> b (srnic1): rounds of WRITE + READ back both ways,
    every byte compared."""

    SIZE = 16384

    def __init__(self):
        self.a = End("srnic0", IP_A, 0x20000)
        self.b = End("srnic1", IP_B, 0x30000)
        self.a.connect(self.b.me())
        self.b.connect(self.a.me())
        self.rounds = 0
        self.errors = []

    def step(self):
        n = self.SIZE
        for src, dst in ((self.a, self.b), (self.b, self.a)):
            data = os.urandom(n)
            src.mr.write(data, n, 0)
            src.post(e.IBV_WR_RDMA_WRITE, 0, n, dst.me(), n)
            src.post(e.IBV_WR_RDMA_READ, 2 * n, n, dst.me(), n)
            st = src.wait(2, 30)
            if st != [e.IBV_WC_SUCCESS] * 2:
                self.errors.append(f"round {self.rounds}: statuses {st}")
                return False
            back = src.mr.read(n, 2 * n)
            if back != data or dst.mr.read(n, n) != data:
                self.errors.append(f"round {self.rounds}: data differs")
                return False
        self.rounds += 1
        return True


def truncations(fr, cls, frame):
    """Every truncation of @frame past the Ethernet header, lengths lying,
    and with IP/UDP lengths fixed and a fresh ICRC (short RoCE parts)."""
    for cut in range(15, len(frame)):
        fr.send(cls + "_trunc_lying", frame[:cut])
    ipudp = 14 + 28
    for cut in range(0, len(frame) - ipudp - 4):
        roce = frame[ipudp:ipudp + cut]
        bth, rest = roce[:12], roce[12:]
        if len(bth) < 12:
            # no whole BTH: send it raw behind true lengths, no ICRC
            body = frame[14:ipudp] + roce
            n = len(body)
            ip = bytearray(body[:20])
            ip[2:4] = struct.pack("!H", n)
            ip[10:12] = b"\0\0"
            ip[10:12] = ip_csum(bytes(ip))
            udp = bytearray(body[20:28])
            udp[4:6] = struct.pack("!H", n - 20)
            fr.send(cls + "_trunc_short", frame[:14] + bytes(ip) +
                    bytes(udp) + roce)
        else:
            fr.send(cls + "_trunc_icrc", fr.build(bth, rest))


def fuzz_round(fr, rng, s, v, w):
    """One round of every frame class; returns nothing, counts in fr.sent."""
    a, b = s.a, s.b
    # PSNs near the expected ones: a's responder expects b.next_psn, a's
    # completer waits for a.next_psn - 1 and below.
    near_req = (b.next_psn + rng.randint(-4, 4)) & 0xffffff
    near_resp = (a.next_psn + rng.randint(-4, 4)) & 0xffffff
    reth = struct.pack("!QII", a.mr.buf, a.mr.rkey, 64)
    req = fr.build(*fr.roce(OP_WRITE_ONLY, a.qp.qp_num, near_req, reth,
                            os.urandom(64), ackreq=True))
    resp = fr.build(*fr.roce(OP_READ_RESP_ONLY, a.qp.qp_num, near_resp,
                             fr.aeth(ACK_SYN, 1), os.urandom(64)))
    # Cut short with a fresh ICRC the frames are valid RoCE packets: at an
    # old PSN (a duplicate, only ACKed) and with a wrong rkey, so that
    # none can take the place of a session request.
    dup = fr.build(*fr.roce(OP_WRITE_ONLY, a.qp.qp_num,
                            (b.next_psn - 1000) & 0xffffff,
                            struct.pack("!QII", a.mr.buf, a.mr.rkey ^ 0xff,
                                        64), os.urandom(64), ackreq=True))
    truncations(fr, "req", dup)
    truncations(fr, "resp", resp)
    # bad ICRC, one byte changed anywhere from the IP header on
    for frame, cls in ((req, "req_badicrc"), (resp, "resp_badicrc")):
        for _ in range(16):
            f = bytearray(frame)
            i = rng.randrange(14 + 28, len(f) - 4)
            f[i] ^= rng.randrange(1, 256)
            f[-4:] = bytes(x ^ 0xa5 for x in f[-4:])
            fr.send(cls, bytes(f))
    # lying IP and UDP lengths (ICRC computed over the lie)
    bth, rest = fr.roce(OP_WRITE_ONLY, a.qp.qp_num, near_req, reth,
                        os.urandom(64))
    n = 28 + len(bth) + len(rest) + 4
    for d in (-60, -8, -4, -1, 1, 4, 200):
        fr.send("ip_len_lie", fr.build(bth, rest, ip_len=20 + n + d))
        fr.send("udp_len_lie", fr.build(bth, rest, udp_len=n - 20 + d))
    # responses for PSNs never sent, right ICRC: every response opcode
    for op, ext, pay in ((OP_ACK, fr.aeth(ACK_SYN), b""),
                         (OP_ACK, fr.aeth(NAK_SEQ), b""),
                         (OP_ACK, fr.aeth(NAK_ACC), b""),
                         (OP_ACK, fr.aeth(0x20 | 5), b""),
                         (OP_READ_RESP_ONLY, fr.aeth(ACK_SYN), b"x" * 64),
                         (OP_ATOMIC_ACK, fr.aeth(ACK_SYN) + b"\0" * 8, b"")):
        for qp in (a, v):
            psn = (qp.next_psn + rng.randint(1000, 100000)) & 0xffffff
            fr.send("ghost_resp_a" if qp is a else "ghost_resp_v",
                    fr.build(*fr.roce(op, qp.qp.qp_num, psn,
                                                    ext, pay)))
    # wild requests with a right ICRC at the victim v, PSN at or near its
    # expected one (w.next_psn: w sends nothing, so v's epsn moves only
    # with what v takes)
    for _ in range(24):
        psn = (w.next_psn + rng.randint(-2, 2)) & 0xffffff
        op = rng.choice((OP_WRITE_ONLY, OP_READ_REQ, OP_CMP_SWAP,
                         OP_FETCH_ADD, OP_SEND_ONLY, 0x06, 0x07, 0x08))
        if op in (OP_WRITE_ONLY, OP_READ_REQ, 0x06):
            va = rng.choice((0, 2 ** 64 - 1, v.mr.buf - 1,
                             v.mr.buf + v.mr_size - 8,
                             rng.getrandbits(64)))
            key = rng.choice((v.mr.rkey, v.mr.rkey ^ 1, rng.getrandbits(32)))
            ln = rng.choice((0, 1, 64, 2 ** 31, 2 ** 32 - 1, PMTU + 1))
            ext = struct.pack("!QII", va, key, ln)
            pay = os.urandom(rng.choice((0, 4, 64))) if op != OP_READ_REQ \
                else b""
        elif op in (OP_CMP_SWAP, OP_FETCH_ADD):
            ext = struct.pack("!QIQQ", rng.choice((v.mr.buf + 3,
                                                   rng.getrandbits(64))),
                              rng.choice((v.mr.rkey, rng.getrandbits(32))),
                              rng.getrandbits(64), rng.getrandbits(64))
            pay = b""
        else:
            ext, pay = b"", os.urandom(rng.choice((0, 8, PMTU, PMTU + 4)))
        bth, rest = fr.roce(op, v.qp.qp_num, psn, ext, pay,
                            ackreq=rng.random() < 0.5,
                            pad=rng.choice((None, 3)))
        fr.send("wild_req", fr.build(bth, rest))
    # wild AETH at the victim v's completer
    for _ in range(8):
        psn = (v.next_psn + rng.randint(-3, 3)) & 0xffffff
        fr.send("wild_aeth", fr.build(*fr.roce(
            rng.choice((OP_ACK, OP_READ_RESP_ONLY, OP_ATOMIC_ACK)),
            v.qp.qp_num, psn, struct.pack("!I", rng.getrandbits(32)))))


def fresh():
    """A new QP pair after all that: 64 KiB each way, data checked."""
    x = End("srnic0", IP_A, 0x400)
    y = End("srnic1", IP_B, 0x500)
    x.connect(y.me())
    y.connect(x.me())
    good = True
    for src, dst in ((x, y), (y, x)):
        data = os.urandom(65536)
        src.mr.write(data, 65536, 0)
        src.post(e.IBV_WR_RDMA_WRITE, 0, 65536, dst.me(), 65536)
        good = good and src.wait(1, 20) == [e.IBV_WC_SUCCESS] and \
            dst.mr.read(65536, 65536) == data
    check("fresh: a new QP pair moves 64 KiB both ways, data intact", good)


def main():
    iface, src_mac, dst_mac, secs, seed = sys.argv[1:6]
    rng = random.Random(int(seed))
    random.seed(int(seed))
    fr = Frames(iface, src_mac, dst_mac)
    ghost(fr)
    s = Session()
    v = End("srnic0", IP_A, 0x50000, mr_size=8192)
    w = End("srnic1", IP_B, 0x60000, mr_size=8192)
    v.connect(w.me(), timeout=10, retry_cnt=1)
    w.connect(v.me(), timeout=10, retry_cnt=1)
    ok("fuzz: session and victim QPs up")
    end = time.monotonic() + float(secs)
    fuzz_rounds = 0
    while time.monotonic() < end:
        if not s.step():
            break
        fuzz_round(fr, rng, s, v, w)
        fuzz_rounds += 1
    last = not s.errors and s.step()
    check("fuzz: session data intact through every round",
          last and fuzz_rounds > 0, "; ".join(s.errors) or
          f"{fuzz_rounds} fuzz rounds")
    print(f"info fuzz: {fuzz_rounds} rounds, {s.rounds} session rounds",
          flush=True)
    for cls in sorted(fr.sent):
        print(f"sent {cls} {fr.sent[cls]}", flush=True)
    fresh()
    print("wire_fuzz: done", flush=True)
    return 0 if failures() == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
