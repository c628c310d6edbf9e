#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""RoCEv2 packet capture for debugging wire interop (no tcpdump needed).

  roce_pcap.py capture IFACE FILE   capture the first 128 bytes of every
                                    frame on IFACE, both directions, into a
                                    pcap FILE until SIGTERM/SIGINT (run it in
                                    the guest, by PID)
  roce_pcap.py decode FILE [MAC]    one line per RoCEv2 packet: direction
                                    ('>' sent by MAC, '<' received), opcode,
                                    DestQP, PSN, AckReq, pad, payload, IP and
                                    UDP fields, RETH/AETH/DETH
  roce_pcap.py fields FILE [MAC]    per sender and opcode, how often each
                                    header field value occurs (IP TOS, TTL,
                                    DF/ID, UDP checksum and source port
                                    range, BTH flags, P_Key, the ICRC-masked
                                    byte, reserved bits, AETH syndrome), to
                                    compare two stacks at a glance

  roce_pcap.py check FILE [MAC]     exit 1 unless every RoCEv2 packet sent
                                    by MAC follows RoCEv2 practice (what
                                    rdma_rxe and RoCE NICs send): UDP source
                                    port 0xC000-0xFFFF, UDP checksum 0, IPv4
                                    DF set and not a fragment, BTH TVer 0,
                                    MigReq 0, reserved bits 0, default
                                    P_Key, PadCnt = -payload mod 4; prints
                                    the fields table too
  roce_pcap.py entropy FILE [--until-cm]
                                    exit 1 unless every RC packet's UDP
                                    source port, and on IPv6 its flow
                                    label, is its QP pair's (the kernel's
                                    rdma_get_udp_sport() with no flow label
                                    in the AV: from both QP numbers; the
                                    pair found by the port, which both ends
                                    share); needs packets both ways.
                                    --until-cm: stop at the first packet
                                    to QP1 (RDMA-CM sets flow labels of its
                                    own, hidden in IPv4)

MAC defaults to 52:54:00:77:00:01 (guest a of `vmrun --pair`). Capture
timestamps are taken when the capture reads a frame, so they are only
roughly the wire times; the order is exact.
"""
import collections
import signal
import socket
import struct
import sys
import time

SNAP = 128
OPS = {
    0x00: 'RC_SEND_FIRST', 0x01: 'RC_SEND_MIDDLE', 0x02: 'RC_SEND_LAST',
    0x03: 'RC_SEND_LAST_IMM', 0x04: 'RC_SEND_ONLY', 0x05: 'RC_SEND_ONLY_IMM',
    0x06: 'RC_WRITE_FIRST', 0x07: 'RC_WRITE_MIDDLE', 0x08: 'RC_WRITE_LAST',
    0x09: 'RC_WRITE_LAST_IMM', 0x0a: 'RC_WRITE_ONLY', 0x0b: 'RC_WRITE_ONLY_IMM',
    0x0c: 'RC_READ_REQ', 0x0d: 'RC_READ_RESP_FIRST', 0x0e: 'RC_READ_RESP_MIDDLE',
    0x0f: 'RC_READ_RESP_LAST', 0x10: 'RC_READ_RESP_ONLY', 0x11: 'RC_ACK',
    0x12: 'RC_ATOMIC_ACK', 0x13: 'RC_CMP_SWAP', 0x14: 'RC_FETCH_ADD',
    0x16: 'RC_SEND_LAST_INV', 0x17: 'RC_SEND_ONLY_INV',
    0x20: 'UC_SEND_FIRST', 0x21: 'UC_SEND_MIDDLE', 0x22: 'UC_SEND_LAST',
    0x23: 'UC_SEND_LAST_IMM', 0x24: 'UC_SEND_ONLY', 0x25: 'UC_SEND_ONLY_IMM',
    0x26: 'UC_WRITE_FIRST', 0x27: 'UC_WRITE_MIDDLE', 0x28: 'UC_WRITE_LAST',
    0x29: 'UC_WRITE_LAST_IMM', 0x2a: 'UC_WRITE_ONLY', 0x2b: 'UC_WRITE_ONLY_IMM',
    0x64: 'UD_SEND_ONLY', 0x65: 'UD_SEND_ONLY_IMM', 0x81: 'CNP',
}
RETH = {0x06, 0x0a, 0x0b, 0x0c, 0x26, 0x2a, 0x2b}
AETH = {0x0d, 0x0f, 0x10, 0x11, 0x12}
DETH = {0x64, 0x65}
AETH_TYPE = ('ACK', 'RNR', 'RSV', 'NAK')


def capture(iface, path):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)   # SO_RCVBUFFORCE
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    s.bind((iface, 0))
    s.settimeout(0.5)
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    n = 0
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, SNAP, 1))
        while not stop:
            try:
                data = s.recv(SNAP)
            except (socket.timeout, InterruptedError):
                continue
            t = time.time()
            f.write(struct.pack('<IIII', int(t), int((t % 1) * 1e6),
                                len(data), len(data)))
            f.write(data)
            n += 1
    st = struct.unpack('II', s.getsockopt(263, 6, 8))   # PACKET_STATISTICS
    print('roce_pcap: %d frames to %s (socket: %d seen, %d dropped)'
          % (n, path, st[0], st[1]))


def frames(path):
    with open(path, 'rb') as f:
        if len(f.read(24)) < 24:
            return
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, usec, caplen, _ = struct.unpack('<IIII', h)
            yield sec + usec / 1e6, f.read(caplen)


def parse(d):
    """The RoCEv2 fields of an Ethernet/IPv4 or IPv6/UDP 4791 frame, or None.
    IPv6 has no fragment fields: its packets read as DF set, ID 0."""
    if len(d) >= 54 and d[12:14] == b'\x08\x00' and d[23] == 17:
        ihl = (d[14] & 15) * 4
        ip = d[14:14 + ihl]
        ipf = dict(v6=False, flow=0, tos=ip[1], ttl=ip[8],
                   frag=struct.unpack('>H', ip[6:8])[0],
                   ipid=struct.unpack('>H', ip[4:6])[0])
        off = 14 + ihl
    elif len(d) >= 74 and d[12:14] == b'\x86\xdd' and d[20] == 17:
        w, = struct.unpack('>I', d[14:18])
        ipf = dict(v6=True, flow=w & 0xfffff, tos=(w >> 20) & 0xff,
                   ttl=d[21], frag=0x4000, ipid=0)
        off = 54
    else:
        return None
    u = d[off:off + 8]
    b = d[off + 8:]
    sport, dport, ulen, csum = struct.unpack('>HHHH', u)
    if dport != 4791 or len(b) < 12:
        return None
    op, fl, pkey, qpn, apsn = struct.unpack('>BBHII', b[:12])
    p = dict(op=op, flags=fl, pad=(fl >> 4) & 3, pkey=pkey,
             b4=qpn >> 24, qpn=qpn & 0xffffff, ackreq=apsn >> 31,
             apsn_resv=(apsn >> 24) & 0x7f, psn=apsn & 0xffffff,
             sport=sport, csum=csum, **ipf)
    rest = b[12:]
    paylen = ulen - 8 - 12 - 4 - p['pad']
    ext = ''
    if op in RETH and len(rest) >= 16:
        va, rkey, ln = struct.unpack('>QII', rest[:16])
        ext += ' reth(va=%x rkey=%x len=%d)' % (va, rkey, ln)
        rest, paylen = rest[16:], paylen - 16
    if op in DETH and len(rest) >= 8:
        qkey, sqp = struct.unpack('>II', rest[:8])
        ext += ' deth(qkey=%x sqp=%d)' % (qkey, sqp & 0xffffff)
        rest, paylen = rest[8:], paylen - 8
    if op in AETH and len(rest) >= 4:
        a, = struct.unpack('>I', rest[:4])
        p['syn'] = a >> 24
        ext += ' aeth(%s %d msn=%d)' % (AETH_TYPE[(a >> 29) & 3], (a >> 24) & 31,
                                        a & 0xffffff)
        paylen -= 4
        if op == 0x12:
            paylen -= 8
    p['paylen'] = paylen
    p['ext'] = ext
    return p


def decode(path, mac):
    t0 = None
    for t, d in frames(path):
        p = parse(d)
        if not p:
            continue
        t0 = t if t0 is None else t0
        print('%9.4f %s %-19s qp=%-6x psn=%06x%s pad=%d pay=%-4d se=%d m=%d '
              'tos=%d ttl=%d sport=%d%s'
              % (t - t0, '>' if d[6:12] == mac else '<',
                 OPS.get(p['op'], hex(p['op'])), p['qpn'], p['psn'],
                 ' A' if p['ackreq'] else '  ', p['pad'], p['paylen'],
                 p['flags'] >> 7, (p['flags'] >> 6) & 1, p['tos'], p['ttl'],
                 p['sport'], p['ext']))


def fields(path, mac):
    stats = collections.defaultdict(collections.Counter)
    for _, d in frames(path):
        p = parse(d)
        if not p:
            continue
        st = stats[('sent' if d[6:12] == mac else 'rcvd', p['op'])]
        st['n'] += 1
        for k in ('tos', 'ttl'):
            st['%s=%d' % (k, p[k])] += 1
        for k in ('pkey', 'b4', 'apsn_resv'):
            st['%s=%x' % (k, p[k])] += 1
        st['df=%d' % bool(p['frag'] & 0x4000)] += 1
        st['frag_off=%d' % (p['frag'] & 0x1fff)] += 1
        st['ipid0=%d' % (p['ipid'] == 0)] += 1
        st['udp_csum0=%d' % (p['csum'] == 0)] += 1
        st['sport>=c000=%d' % (p['sport'] >= 0xc000)] += 1
        st['se_m_tver=%02x' % (p['flags'] & 0xcf)] += 1
        if 'syn' in p:
            st['syn=%02x' % p['syn']] += 1
    for (who, op), st in sorted(stats.items()):
        n = st.pop('n')
        print('%s %-19s %6d  %s' % (
            who, OPS.get(op, hex(op)), n,
            ' '.join(k if c == n else '%s(%d)' % (k, c)
                     for k, c in sorted(st.items()))))


def check(path, mac):
    bad = collections.Counter()
    n = 0
    for _, d in frames(path):
        p = parse(d)
        if not p or d[6:12] != mac:
            continue
        n += 1
        rules = {
            'UDP source port < 0xC000': p['sport'] < 0xc000,
            'UDP checksum not 0': p['csum'] != 0,
            'IPv4 DF clear': not p['frag'] & 0x4000,
            'IPv4 fragment': p['frag'] & 0x3fff,
            'BTH TVer not 0': p['flags'] & 0x0f,
            'BTH MigReq set': p['flags'] & 0x40,
            'BTH FECN/BECN/reserved set': p['b4'],
            'BTH reserved (PSN word) set': p['apsn_resv'],
            'P_Key not 0xffff': p['pkey'] != 0xffff,
            'PadCnt not -payload mod 4': p['paylen'] >= 0 and
                                         p['pad'] != -p['paylen'] % 4,
        }
        for what, broken in rules.items():
            if broken:
                bad['%s (%s)' % (what, OPS.get(p['op'], hex(p['op'])))] += 1
    fields(path, mac)
    for what, count in sorted(bad.items()):
        print('roce_pcap check: %d packets: %s' % (count, what))
    print('roce_pcap check: %d packets sent, %d with a deviation'
          % (n, sum(bad.values())))
    return 0 if n and not bad else 1


def calc_flow_label(lqpn, rqpn):
    """The flow label of an RC/UC QP pair whose AV has none: the kernel's
    rdma_calc_flow_label() (include/rdma/ib_verbs.h), the same from both
    ends."""
    fl = lqpn * rqpn
    fl ^= fl >> 20
    fl ^= fl >> 40
    return fl & 0xfffff


def flow_label_to_sport(fl):
    """rdma_flow_label_to_udp_sport(): 20 bits folded into 0xC000-0xFFFF."""
    return ((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)) | 0xc000


def entropy(path, until_cm=False):
    """Every RC packet's UDP source port (and on IPv6 its flow label) is the
    one of its QP pair, from both QP numbers: a packet's pair is found among
    the destination QPs of the other packets with the same source port (its
    peer's packets, ACKs included, carry the same port). until_cm: only the
    packets before the first to QP1 (RDMA-CM's MADs): rdma_cm gives the QPs
    it connects a flow label of its own (a hash of the port numbers), which
    IPv4 packets do not show."""
    dests = collections.defaultdict(set)
    pkts = []
    for _, d in frames(path):
        p = parse(d)
        if p and until_cm and p['qpn'] == 1:
            break
        if p and p['op'] < 0x20:
            dests[p['sport']].add(p['qpn'])
            pkts.append(p)
    bad = collections.Counter()
    for p in pkts:
        fls = [calc_flow_label(p['qpn'], q) for q in dests[p['sport']]
               if q != p['qpn']]
        if not any(flow_label_to_sport(fl) == p['sport'] and
                   (not p['v6'] or p['flow'] == fl) for fl in fls):
            bad['qp %#x sport %#x flow %#x' % (p['qpn'], p['sport'],
                                               p['flow'])] += 1
    pairs = {(min(p['qpn'], q), max(p['qpn'], q), p['sport'])
             for p in pkts for q in dests[p['sport']] if q != p['qpn']}
    for a, b, sport in sorted(pairs):
        print('roce_pcap entropy: QPs %#x <-> %#x: sport %#x, flow label %#x'
              % (a, b, sport, calc_flow_label(a, b)))
    for what, count in sorted(bad.items()):
        print('roce_pcap entropy: %d packets not from their pair: %s'
              % (count, what))
    print('roce_pcap entropy: %d RC packets (%d IPv6), %d with a deviation'
          % (len(pkts), sum(p['v6'] for p in pkts), sum(bad.values())))
    return 0 if pkts and not bad else 1


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ('capture', 'decode', 'fields',
                                                 'check', 'entropy'):
        sys.exit(__doc__)
    if sys.argv[1] == 'capture':
        capture(sys.argv[2], sys.argv[3])
        return
    if sys.argv[1] == 'entropy':
        sys.exit(entropy(sys.argv[2], sys.argv[3:] == ['--until-cm']))
    mac = bytes.fromhex((sys.argv[3] if len(sys.argv) > 3 else
                         '52:54:00:77:00:01').replace(':', ''))
    if sys.argv[1] == 'check':
        sys.exit(check(sys.argv[2], mac))
    (decode if sys.argv[1] == 'decode' else fields)(sys.argv[2], mac)


if __name__ == '__main__':
    main()
