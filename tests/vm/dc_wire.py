#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""DC on the wire against docs/dc.md, run by tests/vm/test_dc_wire.sh.

  dc_wire.py capture IFACE FILE
      every frame on IFACE, both directions, whole, into the pcap FILE until
      SIGTERM, through a TPACKET_V2 ring (bytes copied when the frame
      passes, below); prints "capturing" once the socket is bound and, at
      the end, "captured N dropped D truncated T" (D: the socket's
      PACKET_STATISTICS; T: frames longer than a ring slot)
  dc_wire.py check FILE PMTU TIMEOUT RETRY DCT=KEY...
      parses every RoCEv2 frame of FILE as docs/dc.md describes DC and
      prints "ok CHECK" / "not ok CHECK: first offence (N frames)" per
      check, "count NAME N" lines and "dc_wire: done". DCT=KEY: the DCTs
      the exchange talks to and the access keys they were made with (every
      request must name one of them, with its key). PMTU: the path MTU;
      TIMEOUT, RETRY: the DCIs' IB timeout and retry count (the ATTACH
      horizon is derived from them).

Written from docs/dc.md and the IBA/RoCEv2 layouts alone, not from the
kernel's headers: a DC opcode is 0xC0 | the RC operation, DETACH 0xDE,
DETACH ACK 0xDF; initiator-to-target packets carry a 16-byte DCETH right
after the BTH (key 64, flags 8 (bit 7 ATTACH, bits 4:0 the horizon in
ATTACH packets, all else 0), DCI 24, generation 32), target-to-initiator
packets an 8-byte DCRETH (reserved 8, DCT 24, generation 32), then RC's
headers (RETH, ImmDt, AtomicETH, AETH, AtomicAckETH) in RC's order. BTH
DestQP is the DCT on requests, the DCI on responses. An attachment (the
initiator, its DCI, a generation) starts with exactly one ATTACH packet
(AckReq set), which goes alone until a response of the generation comes;
PSNs run on one by one (a READ request takes one per response packet);
DETACH goes at the next PSN once everything is answered, then the next
generation (one more) attaches. The UDP source port of every packet is
rdma_get_udp_sport()'s fold of the flow label of (DCI, DCT).
"""
import math
import mmap
import select
import signal
import socket
import struct
import sys
import zlib

ROCE_PORT = 4791
PSN_MOD = 1 << 24

# RC operation -> (name, extension headers after the DC header, payload?)
RC_OPS = {
    0x00: ("SEND_FIRST", (), True),
    0x01: ("SEND_MIDDLE", (), True),
    0x02: ("SEND_LAST", (), True),
    0x03: ("SEND_LAST_IMM", ("ImmDt",), True),
    0x04: ("SEND_ONLY", (), True),
    0x05: ("SEND_ONLY_IMM", ("ImmDt",), True),
    0x06: ("WRITE_FIRST", ("RETH",), True),
    0x07: ("WRITE_MIDDLE", (), True),
    0x08: ("WRITE_LAST", (), True),
    0x09: ("WRITE_LAST_IMM", ("ImmDt",), True),
    0x0a: ("WRITE_ONLY", ("RETH",), True),
    0x0b: ("WRITE_ONLY_IMM", ("RETH", "ImmDt"), True),
    0x0c: ("READ_REQ", ("RETH",), False),
    0x0d: ("READ_RESP_FIRST", ("AETH",), True),
    0x0e: ("READ_RESP_MIDDLE", (), True),
    0x0f: ("READ_RESP_LAST", ("AETH",), True),
    0x10: ("READ_RESP_ONLY", ("AETH",), True),
    0x11: ("ACK", ("AETH",), False),
    0x12: ("ATOMIC_ACK", ("AETH", "AtomicAckETH"), False),
    0x13: ("CMP_SWP", ("AtomicETH",), False),
    0x14: ("FETCH_ADD", ("AtomicETH",), False),
}
RESPONSES = {0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12}
EXT_LEN = {"DCETH": 16, "DCRETH": 8, "RETH": 16, "ImmDt": 4,
           "AtomicETH": 28, "AETH": 4, "AtomicAckETH": 8}
DETACH, DETACH_ACK = 0xde, 0xdf
# opcode -> (name, is a request, headers, payload?)
DC_OPS = {0xc0 | op: ("DC_" + n, op not in RESPONSES,
                      ("DCRETH" if op in RESPONSES else "DCETH",) + h, p)
          for op, (n, h, p) in RC_OPS.items()}
DC_OPS[DETACH] = ("DC_DETACH", True, ("DCETH",), False)
DC_OPS[DETACH_ACK] = ("DC_DETACH_ACK", False, ("DCRETH",), False)
ATTACH = 0x80


# ------------------------------------------------------------ capture

# AF_PACKET TPACKET_V2 receive ring (linux/if_packet.h): the kernel copies
# each frame into the ring when the tap sees it. A plain AF_PACKET socket
# queues a clone and copies at recv() time: srnic sends large payloads as
# page fragments of the user's memory region (zero-copy), which the
# application may have rewritten by then (once the WR completed), so such
# a capture shows later bytes under the old ICRC.
SOL_PACKET, PACKET_RX_RING, PACKET_VERSION, PACKET_STATISTICS = 263, 5, 10, 6
TPACKET_V2, TP_STATUS_USER, TP_STATUS_LOSING = 1, 1, 4
BLOCK, NBLOCKS, FRAME = 1 << 16, 64, 1 << 11     # 2048 frames of 2 KiB


def capture(iface, path):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V2)
    s.setsockopt(SOL_PACKET, PACKET_RX_RING,
                 struct.pack("IIII", BLOCK, NBLOCKS, FRAME,
                             BLOCK * NBLOCKS // FRAME))
    ring = mmap.mmap(s.fileno(), BLOCK * NBLOCKS)
    s.bind((iface, 0))
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    n = trunc = 0
    slot, nslots = 0, BLOCK * NBLOCKS // FRAME
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        print("capturing", flush=True)
        while True:
            base = slot * FRAME
            # struct tpacket2_hdr: status, len, snaplen, mac, net, sec, nsec
            st, ln, snap, mac, _, sec, nsec = struct.unpack_from(
                "IIIHHII", ring, base)
            if not st & TP_STATUS_USER:
                if stop:
                    break
                select.select([s], [], [], 0.2)
                continue
            trunc += snap != ln
            f.write(struct.pack("<IIII", sec, nsec // 1000, snap, ln) +
                    ring[base + mac:base + mac + snap])
            struct.pack_into("I", ring, base, 0)        # back to the kernel
            slot = (slot + 1) % nslots
            n += 1
    packets, drops = struct.unpack("II", s.getsockopt(SOL_PACKET,
                                                      PACKET_STATISTICS, 8))
    print(f"captured {n} dropped {drops} truncated {trunc} (socket saw "
          f"{packets})", flush=True)


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack_from("<I", data, off + 8)[0]
        yield data[off + 16:off + 16 + caplen]
        off += 16 + caplen


# ------------------------------------------------------------ checking

def icrc(l3):
    """RoCEv2 ICRC (IBA Annex A17.3.3) of an IPv4 packet (IP header to the
    ICRC, exclusive): CRC-32 over 64 one bits standing for the LRH, the
    IPv4, UDP and BTH headers with the IP TOS, TTL and header checksum,
    the UDP checksum and the BTH's resv8a byte set to ones, and everything
    after the BTH; sent least significant byte first."""
    h = bytearray(l3[:40])
    h[1] = 0xff
    h[8] = 0xff
    h[10] = h[11] = 0xff
    h[26] = h[27] = 0xff
    h[32] = 0xff
    return zlib.crc32(b"\xff" * 8 + bytes(h) + l3[40:]) & 0xffffffff


def udp_sport(a, b):
    """rdma_get_udp_sport() of the flow label of QPs a and b."""
    v = a * b
    v ^= v >> 20
    v ^= v >> 40
    fl = v & 0xfffff
    return ((fl & 0x3fff) ^ (fl >> 14)) | 0xc000


def psn_diff(a, b):
    """a - b in PSN space, -2^23 .. 2^23-1."""
    return (a - b + (1 << 23)) % PSN_MOD - (1 << 23)


class Checks:
    NAMES = (
        "every RoCEv2 frame's ICRC is right",
        "IPv4 and UDP lengths match the frame",
        "UDP source port is the fold of the (DCI, DCT) flow label",
        "every opcode is a DC one (0xC0-0xD4, 0xDE, 0xDF)",
        "BTH: TVer 0, MigReq 0, P_Key 0xffff, reserved bits 0",
        "BTH pad count is -payload mod 4",
        "payload only where RC has it, FIRST/MIDDLE exactly PMTU, none above",
        "DCETH on every request and DETACH, DCRETH on every response",
        "DCETH: the DCT's access key (a wrong one only on an ATTACH)",
        "DCETH flags: only ATTACH and, with it, the horizon",
        "DCETH ATTACH horizon is log2 ms of timeout x (retry + 1)",
        "BTH DestQP: the DCT on requests, the DCI on responses",
        "ATTACH exactly on the first packet of a generation, with AckReq",
        "one ATTACH PSN per generation (retransmissions repeat it)",
        "nothing more of a generation before its first response",
        "a new generation is the last one + 1, after a DETACH or a NAK",
        "request PSNs run on one by one per attachment",
        "DETACH: the next PSN, the generation it leaves, no flags",
        "DCRETH: reserved 0, the attachment's DCT and generation",
        "DETACH ACK: the DETACH's PSN, DCRETH only, no AETH",
        "responses only within the attachment's PSNs",
        "AETH: ACKs only (a clean exchange), MSN counts up",
        "a wrong key's ATTACH: NAK remote access error, nothing more",
        "RETH: WRITE length is the message's payload",
        "READ responses: the request's PSNs, FIRST..LAST, its length",
        "AtomicETH: 8-byte aligned VA; ATOMIC ACK at its request's PSN",
        "SEND/WRITE messages: FIRST, MIDDLE..., LAST in order",
    )

    def __init__(self):
        self.bad = {n: [] for n in self.NAMES}

    def __call__(self, name, cond, why):
        if not cond:
            self.bad[name].append(why)
        return cond

    def report(self):
        for n in self.NAMES:
            b = self.bad[n]
            if b:
                print(f"not ok {n}: {b[0]} ({len(b)} frames)")
            else:
                print(f"ok {n}")


class Att:
    """One attachment: a DCI's generation at a DCT, as the wire shows it."""

    def __init__(self, dct, gen, psn):
        self.dct, self.gen = dct, gen
        self.first = self.next = psn
        self.attach_psns = {psn}
        self.sent = {}              # PSN -> opcode
        self.confirmed = False
        self.detach = None          # its DETACH's PSN
        self.badkey = False         # opened with a wrong key
        self.nak = False            # failed by a NAK
        self.msg = None             # SEND/WRITE message in progress
        self.reads = {}             # first PSN -> [npkts, length, got, next]
        self.atomics = set()
        self.atomics_acked = set()
        self.msn = 0


class Wire:
    def __init__(self, pmtu, timeout, retry, keys):
        self.pmtu, self.keys = pmtu, keys
        # docs/dc.md: timeout x (retry count + 1) rounded up to a power of
        # two ms, the timeout being the requester's retransmission timeout
        # at the time: the QP's, or more from the RTT and back-off, at
        # most 4 s
        ms = 4.096e-3 * (1 << timeout)
        self.horizon = (math.ceil(math.log2(ms * (retry + 1))),
                        math.ceil(math.log2(max(ms, 4000) * (retry + 1))))
        self.c = Checks()
        self.dcis = {}              # (initiator IP, DCI) -> [Att, ...]
        self.counts = {}

    def count(self, name, n=1):
        self.counts[name] = self.counts.get(name, 0) + n

    def frame(self, idx, fr):
        if len(fr) < 14 + 20 + 8 + 12 + 4 or fr[12:14] != b"\x08\x00":
            return
        l3 = fr[14:]
        if l3[0] != 0x45 or l3[9] != 17:
            return
        sport, dport, ulen = struct.unpack_from("!HHH", l3, 20)
        if dport != ROCE_PORT:
            return
        self.count("RoCEv2 frames")
        c = self.c
        tot = struct.unpack_from("!H", l3, 2)[0]
        if not c("IPv4 and UDP lengths match the frame",
                 tot == len(l3) and ulen == tot - 20,
                 f"frame {idx}: IP {tot}, UDP {ulen}, frame {len(l3)}"):
            return
        crc = struct.unpack_from("<I", l3, tot - 4)[0]
        c("every RoCEv2 frame's ICRC is right", icrc(l3[:tot - 4]) == crc,
          f"frame {idx} ({socket.inet_ntoa(l3[12:16])} op {l3[28]:#04x} "
          f"length {tot}): ICRC {crc:#010x}, computed "
          f"{icrc(l3[:tot - 4]):#010x}")
        self.roce(idx, l3[:tot - 4], sport)

    def roce(self, idx, l3, sport):
        c = self.c
        src, dst = socket.inet_ntoa(l3[12:16]), socket.inet_ntoa(l3[16:20])
        b = l3[28:]
        op, f1, pkey = b[0], b[1], struct.unpack_from("!H", b, 2)[0]
        resv, dqp, f8 = b[4], int.from_bytes(b[5:8], "big"), b[8]
        psn = int.from_bytes(b[9:12], "big")
        pad, ackreq = (f1 >> 4) & 3, bool(f8 & 0x80)
        where = f"frame {idx} ({src} op {op:#04x} qp {dqp} psn {psn})"
        if not c("every opcode is a DC one (0xC0-0xD4, 0xDE, 0xDF)",
                 op in DC_OPS, where):
            return
        name, req, hdrs, has_pl = DC_OPS[op]
        self.count(name)
        c("BTH: TVer 0, MigReq 0, P_Key 0xffff, reserved bits 0",
          f1 & 0x4f == 0 and pkey == 0xffff and resv == 0 and
          f8 & 0x7f == 0, f"{where}: byte1 {f1:#x} pkey {pkey:#x} "
          f"resv {resv:#x} byte8 {f8:#x}")
        off, ext = 12, {}
        for h in hdrs:
            ext[h] = b[off:off + EXT_LEN[h]]
            off += EXT_LEN[h]
        plen = len(b) - off - pad
        if not c("DCETH on every request and DETACH, DCRETH on every response",
                 plen >= 0, f"{where}: {len(b)} bytes after the UDP header, "
                 f"headers {hdrs} need {off + pad}"):
            return
        c("BTH pad count is -payload mod 4", pad == -plen % 4,
          f"{where}: pad {pad}, payload {plen}")
        pos = name.rsplit("_", 1)[-1] if has_pl else ""
        c("payload only where RC has it, FIRST/MIDDLE exactly PMTU, none above",
          (plen == 0 or has_pl) and plen <= self.pmtu and
          (pos not in ("FIRST", "MIDDLE") or plen == self.pmtu),
          f"{where}: payload {plen}")
        if req:
            self.request(where, op, ext, dqp, psn, ackreq, plen, src, sport)
        else:
            self.response(where, op, ext, dqp, psn, plen, dst, sport)

    # -------------------------------------------------------- requests

    def request(self, where, op, ext, dct, psn, ackreq, plen, src, sport):
        c = self.c
        key, fdci, gen = struct.unpack("!QII", ext["DCETH"])
        flags, dci = fdci >> 24, fdci & 0xffffff
        self.count("requests")
        c("UDP source port is the fold of the (DCI, DCT) flow label",
          sport == udp_sport(dci, dct),
          f"{where}: {sport:#x}, want {udp_sport(dci, dct):#x}")
        c("BTH DestQP: the DCT on requests, the DCI on responses",
          dct in self.keys, f"{where}: DestQP {dct} is not a DCT of "
          f"the exchange {sorted(self.keys)}")
        badkey = key != self.keys.get(dct)
        c("DCETH: the DCT's access key (a wrong one only on an ATTACH)",
          not badkey or flags & ATTACH,
          f"{where}: key {key:#x}, the DCT's {self.keys.get(dct, 0):#x}")
        c("DCETH flags: only ATTACH and, with it, the horizon",
          flags & 0x60 == 0 and (flags & ATTACH or flags == 0),
          f"{where}: flags {flags:#x}")
        atts = self.dcis.setdefault((src, dci), [])
        att = atts[-1] if atts else None
        if att is None or gen != att.gen:
            self.new_gen(where, op, atts, dct, gen, psn, flags, ackreq,
                         ext, plen, badkey)
            return
        if op == DETACH:
            self.detach(where, att, flags, psn, plen, dct)
            return
        c("BTH DestQP: the DCT on requests, the DCI on responses",
          dct == att.dct, f"{where}: DCT {dct} in the attachment to "
          f"{att.dct}")
        if psn in att.sent:
            self.count("retransmitted requests")
            if flags & ATTACH:
                self.horizon_check(where, flags)
            c("ATTACH exactly on the first packet of a generation, with "
              "AckReq", bool(flags & ATTACH) == (psn == att.first) and
              att.sent[psn] == op, f"{where}: retransmission, ATTACH "
              f"{bool(flags & ATTACH)}, first PSN {att.first}")
            return
        if flags & ATTACH:
            att.attach_psns.add(psn)
        c("ATTACH exactly on the first packet of a generation, with AckReq",
          not flags & ATTACH, f"{where}: ATTACH on a later packet of "
          f"generation {gen}")
        c("nothing more of a generation before its first response",
          att.confirmed, f"{where}: generation {gen} unanswered yet")
        c("a wrong key's ATTACH: NAK remote access error, nothing more",
          not att.badkey and not att.nak, f"{where}: more of generation "
          f"{gen} after a wrong key or NAK")
        c("request PSNs run on one by one per attachment", psn == att.next,
          f"{where}: want PSN {att.next}")
        c("a new generation is the last one + 1, after a DETACH or a NAK",
          att.detach is None, f"{where}: request after DETACH")
        self.sequence(where, att, op, ext, psn, plen)

    def new_gen(self, where, op, atts, dct, gen, psn, flags, ackreq, ext,
                plen, badkey):
        """The first packet of a generation: it must ATTACH."""
        c = self.c
        prev = atts[-1] if atts else None
        if prev is not None:
            c("a new generation is the last one + 1, after a DETACH or a NAK",
              gen == (prev.gen + 1) & 0xffffffff and
              (prev.detach is not None or prev.nak),
              f"{where}: generation {gen} after {prev.gen} (DETACH "
              f"{prev.detach}, NAK {prev.nak})")
        if not c("ATTACH exactly on the first packet of a generation, with "
                 "AckReq", op != DETACH and flags & ATTACH and ackreq,
                 f"{where}: first of generation {gen}: ATTACH "
                 f"{bool(flags & ATTACH)}, AckReq {ackreq}"):
            return
        self.horizon_check(where, flags)
        att = Att(dct, gen, psn)
        att.badkey = badkey
        atts.append(att)
        self.count("generations")
        if badkey:
            self.count("wrong-key ATTACHes")
        self.sequence(where, att, op, ext, psn, plen)

    def horizon_check(self, where, flags):
        lo, hi = self.horizon
        self.counts.setdefault("ATTACH horizons", set()).add(flags & 0x1f)
        self.c("DCETH ATTACH horizon is log2 ms of timeout x (retry + 1)",
               lo <= flags & 0x1f <= hi,
               f"{where}: {flags & 0x1f}, want {lo}..{hi}")

    def sequence(self, where, att, op, ext, psn, plen):
        """Record a new request PSN: message order, lengths, READs."""
        c = self.c
        att.sent[psn] = op
        rc = op & 0x1f
        name = RC_OPS[rc][0]
        att.next = (psn + 1) % PSN_MOD
        if rc == 0x0c:
            va, rkey, ln = struct.unpack("!QII", ext["RETH"])
            n = max(1, -(-ln // self.pmtu))
            att.reads[psn] = [n, ln, 0, psn]
            att.next = (psn + n) % PSN_MOD
        elif rc in (0x13, 0x14):
            va = struct.unpack_from("!Q", ext["AtomicETH"])[0]
            c("AtomicETH: 8-byte aligned VA; ATOMIC ACK at its request's PSN",
              va % 8 == 0, f"{where}: VA {va:#x}")
            att.atomics.add(psn)
        kind = name.split("_")[0]
        pos = name.split("_")[1] if kind in ("SEND", "WRITE") else ""
        if not pos:
            c("SEND/WRITE messages: FIRST, MIDDLE..., LAST in order",
              att.msg is None, f"{where}: {name} inside a message")
            return
        if pos in ("FIRST", "ONLY"):
            c("SEND/WRITE messages: FIRST, MIDDLE..., LAST in order",
              att.msg is None, f"{where}: {name} inside a message")
            want = (struct.unpack("!QII", ext["RETH"])[2]
                    if "RETH" in ext else None)
            att.msg = [kind, want, 0]
        elif not c("SEND/WRITE messages: FIRST, MIDDLE..., LAST in order",
                   att.msg is not None and att.msg[0] == kind,
                   f"{where}: {name} outside its message"):
            return
        att.msg[2] += plen
        if pos in ("LAST", "ONLY"):
            if att.msg[1] is not None:
                c("RETH: WRITE length is the message's payload",
                  att.msg[2] == att.msg[1],
                  f"{where}: {att.msg[2]} bytes, RETH {att.msg[1]}")
                self.count("WRITE messages")
            else:
                self.count("SEND messages")
            att.msg = None

    def detach(self, where, att, flags, psn, plen, dct):
        c = self.c
        self.count("DETACHes")
        c("DETACH: the next PSN, the generation it leaves, no flags",
          flags == 0 and psn == att.next and plen == 0 and
          dct == att.dct and att.detach is None,
          f"{where}: flags {flags:#x}, next PSN {att.next}, payload "
          f"{plen}, DCT {att.dct}, earlier DETACH {att.detach}")
        att.detach = psn

    # -------------------------------------------------------- responses

    def response(self, where, op, ext, dci, psn, plen, dst, sport):
        c = self.c
        resv_dct, gen = struct.unpack("!II", ext["DCRETH"])
        resv, dct = resv_dct >> 24, resv_dct & 0xffffff
        self.count("responses")
        c("UDP source port is the fold of the (DCI, DCT) flow label",
          sport == udp_sport(dci, dct),
          f"{where}: {sport:#x}, want {udp_sport(dci, dct):#x}")
        atts = self.dcis.get((dst, dci), [])
        att = next((a for a in atts if a.gen == gen), None)
        if not c("DCRETH: reserved 0, the attachment's DCT and generation",
                 resv == 0 and att is not None and att.dct == dct,
                 f"{where}: reserved {resv:#x}, no attachment (DCI {dci}, "
                 f"DCT {dct}, generation {gen}) on the wire"):
            c("BTH DestQP: the DCT on requests, the DCI on responses",
              att is not None or atts, f"{where}: DestQP {dci} is no DCI")
            return
        if op == DETACH_ACK:
            self.count("DETACH ACKs")
            c("DETACH ACK: the DETACH's PSN, DCRETH only, no AETH",
              att.detach == psn and plen == 0,
              f"{where}: DETACH PSN {att.detach}, payload {plen}")
            return
        c("responses only within the attachment's PSNs",
          0 <= psn_diff(psn, att.first) < psn_diff(att.next, att.first),
          f"{where}: PSNs {att.first}..{att.next} - 1")
        if "AETH" in ext:
            syn, msn = ext["AETH"][0], int.from_bytes(ext["AETH"][1:], "big")
            if att.badkey:
                # IBA 9.7.5.1: NAK (011b) code 2, remote access error
                c("a wrong key's ATTACH: NAK remote access error, nothing "
                  "more", op == 0xd1 and syn == 0x62 and psn == att.first,
                  f"{where}: syndrome {syn:#x} to PSN {att.first}")
                if not att.nak:
                    self.count("remote access NAKs")
                att.nak = True
                return
            c("AETH: ACKs only (a clean exchange), MSN counts up",
              syn >> 5 == 0 and msn >= att.msn,
              f"{where}: syndrome {syn:#x}, MSN {msn} after {att.msn}")
            att.msn = max(att.msn, msn)
        c("a wrong key's ATTACH: NAK remote access error, nothing more",
          not att.badkey, f"{where}: a response other than a NAK")
        att.confirmed = True
        rc = op & 0x1f
        if rc == 0x12:
            c("AtomicETH: 8-byte aligned VA; ATOMIC ACK at its request's PSN",
              psn in att.atomics, f"{where}: no atomic at PSN {psn}")
            if psn in att.atomics_acked:
                self.count("duplicate responses")
            else:
                att.atomics_acked.add(psn)
                self.count("ATOMIC ACKs")
        elif rc != 0x11:
            self.read_resp(where, att, rc, psn, plen)

    def read_resp(self, where, att, rc, psn, plen):
        c = self.c
        rd = next((r for f, r in att.reads.items()
                   if 0 <= psn_diff(psn, f) < r[0]), None)
        if not c("READ responses: the request's PSNs, FIRST..LAST, its length",
                 rd is not None, f"{where}: no READ request covers it"):
            return
        start = next(f for f, r in att.reads.items() if r is rd)
        n, ln, nxt = rd[0], rd[1], rd[3]
        if psn_diff(psn, nxt) < 0:
            self.count("duplicate responses")     # a READ sent again
            return
        j = psn_diff(psn, start)
        want = 0x10 if n == 1 else 0x0d if j == 0 else \
            0x0f if j == n - 1 else 0x0e
        c("READ responses: the request's PSNs, FIRST..LAST, its length",
          rc == want and psn == nxt,
          f"{where}: response {j} of {n} has op {rc:#x}, want {want:#x}; "
          f"next PSN {nxt}")
        rd[2] += plen
        rd[3] = (psn + 1) % PSN_MOD
        if j == n - 1:
            c("READ responses: the request's PSNs, FIRST..LAST, its length",
              rd[2] == ln, f"{where}: {rd[2]} bytes for a READ of {ln}")
            self.count("READs answered")

    # -------------------------------------------------------- the end

    def end(self):
        c = self.c
        for (ip, dci), atts in sorted(self.dcis.items()):
            gens = [a.gen for a in atts]
            print(f"info DCI {dci} at {ip}: generations {gens}, DCTs "
                  f"{[a.dct for a in atts]}")
            for a in atts:
                c("one ATTACH PSN per generation (retransmissions repeat it)",
                  len(a.attach_psns) == 1, f"DCI {dci} generation {a.gen}: "
                  f"ATTACH at PSNs {sorted(a.attach_psns)}")
                c("a wrong key's ATTACH: NAK remote access error, nothing "
                  "more", a.nak or not a.badkey, f"DCI {dci} generation "
                  f"{a.gen}: a wrong key, no NAK")
                c("READ responses: the request's PSNs, FIRST..LAST, its length",
                  all(r[2] == r[1] for r in a.reads.values()),
                  f"DCI {dci} generation {a.gen}: a READ not answered whole")
            self.count("DCIs")
            self.count(f"DCI {dci} generations", len(atts))
            self.count(f"DCI {dci} DETACHes",
                       sum(a.detach is not None for a in atts))
        c.report()
        hz = self.counts.pop("ATTACH horizons", set())
        print(f"info ATTACH horizons (log2 ms) {sorted(hz)}, docs/dc.md: "
              f"{self.horizon[0]}..{self.horizon[1]}")
        for k, v in sorted(self.counts.items()):
            print(f"count {k} {v}")


def check(path, pmtu, timeout, retry, dcts):
    keys = {}
    for d in dcts:
        n, k = d.split("=")
        keys[int(n, 0)] = int(k, 0)
    w = Wire(int(pmtu), int(timeout), int(retry), keys)
    for i, fr in enumerate(frames(path)):
        w.frame(i, fr)
    w.end()
    print("dc_wire: done", flush=True)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "capture":
        capture(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 7 and sys.argv[1] == "check":
        check(*sys.argv[2:6], sys.argv[6:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
