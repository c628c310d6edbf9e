#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# dc_replay.py IFACE DCTN: a late duplicate of an attachment's first packet
# (docs/dc.md "Detaching"), run by test_dc_loss.sh in the initiator's netns.
# Watches IFACE (both directions) for the first DC FETCH_ADD with ATTACH
# sent to the DCT DCTN and keeps a copy; once the DCT's DETACH ACK for that
# attachment has come back, sends the copy again, byte for byte (the UDP
# checksum zeroed: the kernel may have left it to the device), as a
# duplicate that the network delayed past the DETACH would come. Then
# waits for the DCT's answer to it (ACKNOWLEDGE or ATOMIC ACKNOWLEDGE).
# A target that forgot the attachment at DETACH opens it again and adds a
# second time; the client's later FETCH_ADD and the server's check of the
# slot see it.
# Output: "ok captured", "ok replayed", "info answer opcode 0x.." or
# "info no answer", "dc_replay: done".
import socket
import sys
import time

ETH_P_ALL = 3
PACKET_OUTGOING = 4
BTH = 42                                # Ethernet, IPv4 (20), UDP
OP_DC_FADD, OP_DC_ACK, OP_DC_ATOMIC_ACK = 0xd4, 0xd1, 0xd2
OP_DC_DETACH_ACK = 0xdf
ATTACH = 0x80


def roce(frame):
    """The BTH opcode of a RoCEv2 frame over IPv4, or None."""
    if len(frame) < BTH + 20 or frame[12:14] != b"\x08\x00":
        return None
    if frame[14] != 0x45 or frame[23] != 17 or frame[36:38] != b"\x12\xb7":
        return None
    return frame[BTH]


def dest_qp(frame):
    return int.from_bytes(frame[BTH + 5:BTH + 8], "big")


def dcreth_dct(frame):
    return int.from_bytes(frame[BTH + 13:BTH + 16], "big")


def wait_for(sock, want, secs):
    """The first frame for which want(frame, outgoing) holds, or None."""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        sock.settimeout(max(end - time.monotonic(), 0.01))
        try:
            frame, addr = sock.recvfrom(65535)
        except socket.timeout:
            return None
        op = roce(frame)
        if op is not None and want(frame, op, addr[2] == PACKET_OUTGOING):
            return frame
    return None


def main():
    iface, dctn = sys.argv[1], int(sys.argv[2])
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                         socket.htons(ETH_P_ALL))
    sock.bind((iface, 0))
    print("info watching", flush=True)
    first = wait_for(sock, lambda f, op, out: out and op == OP_DC_FADD and
                     dest_qp(f) == dctn and f[BTH + 20] & ATTACH, 120)
    if first is None:
        print("not ok captured: no FETCH_ADD with ATTACH to", dctn)
        return 1
    print("ok captured", flush=True)
    gen = first[BTH + 24:BTH + 28]
    if wait_for(sock, lambda f, op, out: not out and
                op == OP_DC_DETACH_ACK and dcreth_dct(f) == dctn and
                f[BTH + 16:BTH + 20] == gen, 120) is None:
        print("not ok replayed: no DETACH ACK from", dctn)
        return 1
    dup = bytearray(first)
    dup[40:42] = b"\x00\x00"
    sock.send(bytes(dup))
    print("ok replayed", flush=True)
    ans = wait_for(sock, lambda f, op, out: not out and
                   op in (OP_DC_ACK, OP_DC_ATOMIC_ACK) and
                   dcreth_dct(f) == dctn and f[BTH + 16:BTH + 20] == gen, 5)
    print("info " + (f"answer opcode {ans[BTH]:#x}" if ans else "no answer"))
    print("dc_replay: done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
