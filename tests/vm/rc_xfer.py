#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# rc_xfer.py: RC RDMA WRITE / READ of random data between two srnic devices,
# every byte verified; run by tests/vm/test_loss.sh, one process per end,
# each in its own network namespace:
#
#   ip netns exec nsA rc_xfer.py server --dev srnic0 --port 18600
#   ip netns exec nsB rc_xfer.py client --dev srnic1 --server 10.99.0.1 \
#       --port 18600 --size 4194304 --msg 65536
#
# The ends exchange QP number, PSN, GID, buffer address and rkey over one TCP
# connection (JSON lines), then the client, per round:
#   write  RDMA WRITEs its random buffer A into the server's region R1 (in
#          --msg sized messages, --depth of them in flight); the server then
#          compares R1 with A byte for byte (it regenerates A from the seed)
#   read   RDMA READs the server's random region R2 (data B) and compares it
#          with B
#   readback  (with write and read) READs R1 back and compares it with A
# --ops picks them (default write,read,readback).
# Every work completion must be IBV_WC_SUCCESS. Each transfer prints its
# goodput ("info xfer ...").
#
# In RTS the client prints "info rts: ..."; with --go-file F it then waits
# (at most --op-timeout) for F to exist before it transfers, so that a shell
# can start several transfers together.
#
# --gone-file F (retry exhaustion): after one verified round the client
# prints "streaming" and keeps the send queue full of WRITEs until a
# completion fails; the shell makes the peer unreachable and then writes the
# time it did so (seconds since the epoch) into F. The client checks that the
# first failed completion is IBV_WC_RETRY_EXC_ERR, that the others are
# IBV_WC_WR_FLUSH_ERR, that the QP went to the error state, and prints the
# time from the cut to the failure ("info gone ... elapsed=S").
#
# --bad-wqe lkey|range (local protection error): one WRITE completes, then
# a WRITE whose SGE has a bad lkey (lkey) or runs past the end of its MR
# (range: the first packets are in bounds, so it fails part way) is posted
# with a good WRITE behind it. Like hardware, the bad one must complete with
# IBV_WC_LOC_PROT_ERR, the one behind with IBV_WC_WR_FLUSH_ERR, and the QP
# must be in the error state; all within --op-timeout.
#
# Output: one line per check, "ok NAME" or "not ok NAME: reason", plus "info"
# lines; exit status 0 when every check passed, 1 otherwise, 2 on a crash.
import argparse
import json
import os
import random
import socket
import sys
import time

from pyverbs.wr import SGE, SendWR
import pyverbs.enums as e

from pyverbs_lib import RcEnd, bad, failures, ok

STATUS_NAMES = {getattr(e, n): n for n in dir(e) if n.startswith("IBV_WC_")
                and n.endswith(("_ERR", "SUCCESS"))}


def info(msg):
    print(f"info {msg}", flush=True)


def status_name(status):
    return STATUS_NAMES.get(status, str(status))


def data(seed, n):
    return random.Random(seed).randbytes(n)


def first_diff(a, b):
    """(offset of the first differing byte, number of differing bytes)."""
    if a == b:
        return -1, 0
    n = min(len(a), len(b))
    first = -1
    diff = abs(len(a) - len(b))
    step = 65536
    for off in range(0, n, step):
        x, y = a[off:off + step], b[off:off + step]
        if x != y:
            for i, (p, q) in enumerate(zip(x, y)):
                if p != q:
                    diff += 1
                    if first < 0:
                        first = off + i
    return first, diff


class Line:
    """JSON lines over a TCP socket."""

    def __init__(self, sock):
        self.sock = sock
        self.rf = sock.makefile("r")

    def send(self, obj):
        self.sock.sendall((json.dumps(obj) + "\n").encode())

    def recv(self):
        line = self.rf.readline()
        if not line:
            raise EOFError("peer closed the connection")
        return json.loads(line)


class End(RcEnd):
    """One RC QP with its CQ and a 2 * size byte MR."""

    def __init__(self, dev, ip, size, depth):
        super().__init__(dev, ip, random.getrandbits(24), cqe=2 * depth + 16,
                         mr_size=2 * size, max_send_wr=depth, max_recv_wr=4)
        self.size = size
        self.depth = depth

    def connect(self, peer, timeout, retry):
        self.to_rts(peer, rd_atomic=16, timeout=timeout, retry_cnt=retry,
                    rnr_retry=7)


def serve(args):
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("0.0.0.0", args.port))
    lsock.listen(1)
    conn, _ = lsock.accept()
    line = Line(conn)
    hello = line.recv()
    size = hello["size"]
    end = End(args.dev, args.ip, size, 4)
    line.send(end.me())
    end.connect(hello, 14, 7)
    line.send({"rts": True})
    while True:
        try:
            msg = line.recv()
        except EOFError:
            return 0
        cmd = msg["cmd"]
        if cmd == "fill":
            # R1 zero, R2 random data B
            end.mr.write(bytes(size), size, 0)
            end.mr.write(data(msg["seed_b"], size), size, size)
            line.send({"done": True})
        elif cmd == "verify":
            got = end.mr.read(size, 0)
            first, n = first_diff(got, data(msg["seed_a"], size))
            line.send({"first": first, "nbad": n})
        elif cmd == "bye":
            line.send({"bye": True})
            return 0


def run_ops(end, opcode, lbase, rbase, rinfo, msg, what):
    """Post size/msg messages, depth in flight; returns (secs, error)."""
    n = end.size // msg
    posted = done = 0
    t0 = time.monotonic()
    deadline = t0 + ARGS.op_timeout
    while done < n:
        while posted < n and posted - done < end.depth:
            off = posted * msg
            sge = SGE(end.mr.buf + lbase + off, msg, end.mr.lkey)
            wr = SendWR(wr_id=posted, opcode=opcode, num_sge=1, sg=[sge])
            wr.set_wr_rdma(rinfo["rkey"], rinfo["addr"] + rbase + off)
            end.qp.post_send(wr)
            posted += 1
        nc, wcs = end.cq.poll(end.depth)
        for wc in wcs:
            if wc.status != e.IBV_WC_SUCCESS:
                return time.monotonic() - t0, \
                    f"{what}: wr {wc.wr_id} completed with " \
                    f"{status_name(wc.status)} after {done} of {n}"
        done += nc
        if nc == 0 and time.monotonic() > deadline:
            return time.monotonic() - t0, \
                f"{what}: no completion in {ARGS.op_timeout} s " \
                f"({done} of {n} done, QP state {end.qp_state()})"
    return time.monotonic() - t0, None


def xfer(end, line, peer, rnd, tag):
    size, msg = end.size, ARGS.msg
    seed_a, seed_b = ARGS.seed * 1000 + 2 * rnd, ARGS.seed * 1000 + 2 * rnd + 1
    a = data(seed_a, size)
    end.mr.write(a, size, 0)
    end.mr.write(bytes(size), size, size)
    line.send({"cmd": "fill", "seed_b": seed_b})
    line.recv()
    name = f"{tag}round {rnd}"
    if "write" in ARGS.ops:
        secs, err = run_ops(end, e.IBV_WR_RDMA_WRITE, 0, 0, peer, msg,
                            "write")
        if err:
            bad(f"{name}: RDMA WRITE {size} B completes", err)
            return False
        info(f"xfer op=write bytes={size} msg={msg} secs={secs:.3f} "
             f"MiBps={size / secs / 2**20:.2f}")
        line.send({"cmd": "verify", "seed_a": seed_a})
        r = line.recv()
        if r["nbad"]:
            bad(f"{name}: WRITE data at the server",
                f"{r['nbad']} bad bytes, first at offset {r['first']}")
            return False
        ok(f"{name}: RDMA WRITE {size} B, server memory verified")
    if "read" in ARGS.ops:
        secs, err = run_ops(end, e.IBV_WR_RDMA_READ, size, size, peer, msg,
                            "read")
        if err:
            bad(f"{name}: RDMA READ {size} B completes", err)
            return False
        info(f"xfer op=read bytes={size} msg={msg} secs={secs:.3f} "
             f"MiBps={size / secs / 2**20:.2f}")
        first, n = first_diff(end.mr.read(size, size), data(seed_b, size))
        if n:
            bad(f"{name}: READ data", f"{n} bad bytes, first at {first}")
            return False
        ok(f"{name}: RDMA READ {size} B, data verified")
        if "readback" in ARGS.ops and "write" in ARGS.ops:
            end.mr.write(bytes(size), size, size)
            secs, err = run_ops(end, e.IBV_WR_RDMA_READ, size, 0, peer, msg,
                                "read-back")
            if err:
                bad(f"{name}: RDMA READ back completes", err)
                return False
            first, n = first_diff(end.mr.read(size, size), a)
            if n:
                bad(f"{name}: READ-back data",
                    f"{n} bad bytes, first at {first}")
                return False
            ok(f"{name}: RDMA READ back of the written data verified")
    return True


def stream_until_error(end, peer):
    """Keep the SQ full of WRITEs until a completion fails."""
    msg = ARGS.msg
    n = end.size // msg
    posted = done = 0
    wcs_bad = []
    print("streaming", flush=True)
    t_end = time.monotonic() + ARGS.op_timeout
    while time.monotonic() < t_end:
        while not wcs_bad and posted - done < end.depth:
            off = (posted % n) * msg
            sge = SGE(end.mr.buf + off, msg, end.mr.lkey)
            wr = SendWR(wr_id=posted, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                        sg=[sge])
            wr.set_wr_rdma(peer["rkey"], peer["addr"] + off)
            end.qp.post_send(wr)
            posted += 1
        nc, wcs = end.cq.poll(end.depth)
        for wc in wcs:
            if wc.status != e.IBV_WC_SUCCESS or wcs_bad:
                if not wcs_bad:
                    wcs_bad.append((time.time(), wc))
                else:
                    wcs_bad.append((None, wc))
        done += nc
        if wcs_bad and done == posted:
            break
    return wcs_bad, posted, done


def gone(end, peer):
    bad_wcs, posted, done = stream_until_error(end, peer)
    if not bad_wcs:
        bad("a WRITE to the unreachable peer fails",
            f"all {done} of {posted} WRITEs still succeed after "
            f"{ARGS.op_timeout} s (QP state {end.qp_state()})")
        return
    t_err, first = bad_wcs[0]
    cut = None
    for _ in range(100):
        try:
            with open(ARGS.gone_file) as f:
                cut = float(f.read().strip())
            break
        except (OSError, ValueError):
            time.sleep(0.1)
    elapsed = t_err - cut if cut is not None else -1.0
    info(f"gone status={status_name(first.status)} wr={first.wr_id} "
         f"posted={posted} completed={done} failed={len(bad_wcs)} "
         f"elapsed={elapsed:.3f}")
    if first.status == e.IBV_WC_RETRY_EXC_ERR:
        ok("first failed completion is IBV_WC_RETRY_EXC_ERR")
    else:
        bad("first failed completion is IBV_WC_RETRY_EXC_ERR",
            f"got {status_name(first.status)} (wr {first.wr_id})")
    others = [status_name(wc.status) for _, wc in bad_wcs[1:]
              if wc.status != e.IBV_WC_WR_FLUSH_ERR]
    if others:
        bad("later WQEs flushed with IBV_WC_WR_FLUSH_ERR", ",".join(others))
    else:
        ok(f"later WQEs flushed with IBV_WC_WR_FLUSH_ERR ({len(bad_wcs) - 1})")
    if cut is None:
        bad("retry exhaustion timed", f"no time in {ARGS.gone_file}")
    elif 0 <= elapsed <= ARGS.gone_max:
        ok(f"retry exhaustion within {ARGS.gone_max} s of the cut")
    else:
        bad(f"retry exhaustion within {ARGS.gone_max} s of the cut",
            f"elapsed {elapsed:.3f} s")
    state = end.qp_state()
    if state == e.IBV_QPS_ERR:
        ok("QP in the error state")
    else:
        bad("QP in the error state", f"state {state}")


def poll_n(end, n, timeout):
    """Up to n completions within timeout seconds."""
    got = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        _, wcs = end.cq.poll(n - len(got))
        got += wcs
    return got


def bad_wqe(end, peer, kind):
    msg = ARGS.msg
    name = f"{ARGS.tag}bad WQE ({kind})"

    def write(wr_id, addr, length, lkey):
        wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(addr, length, lkey)])
        wr.set_wr_rdma(peer["rkey"], peer["addr"])
        end.qp.post_send(wr)

    write(1, end.mr.buf, msg, end.mr.lkey)
    wcs = poll_n(end, 1, ARGS.op_timeout)
    if len(wcs) != 1 or wcs[0].status != e.IBV_WC_SUCCESS:
        bad(f"{name}: a good WRITE first", "no success completion")
        return
    if kind == "lkey":
        write(2, end.mr.buf, msg, end.mr.lkey ^ 0xff)
    else:
        # from 4 KiB before the end of the MR, 8 KiB long
        write(2, end.mr.buf + 2 * end.size - 4096, 8192, end.mr.lkey)
    write(3, end.mr.buf, msg, end.mr.lkey)
    wcs = poll_n(end, 2, ARGS.op_timeout)
    got = [(wc.wr_id, status_name(wc.status)) for wc in wcs]
    want = [(2, "IBV_WC_LOC_PROT_ERR"), (3, "IBV_WC_WR_FLUSH_ERR")]
    if got == want:
        ok(f"{name}: completes with IBV_WC_LOC_PROT_ERR, the next WQE "
           f"flushed")
    else:
        bad(f"{name}: completes with IBV_WC_LOC_PROT_ERR, the next WQE "
            f"flushed", f"got {got} in {ARGS.op_timeout} s, want {want}")
    state = end.qp_state()
    if state == e.IBV_QPS_ERR:
        ok(f"{name}: QP in the error state")
    else:
        bad(f"{name}: QP in the error state", f"state {state}")


def wait_go(path, secs):
    """Start when PATH exists (another process says when), at most SECS."""
    end = time.monotonic() + secs
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.05)


def client(args):
    sock = socket.create_connection((args.server, args.port), timeout=30)
    sock.settimeout(None)
    line = Line(sock)
    end = End(args.dev, args.ip, args.size, args.depth)
    line.send(dict(end.me(), size=args.size))
    peer = line.recv()
    end.connect(peer, args.timeout, args.retry)
    line.recv()			# the server is in RTS
    info("rts: the TCP line is up and both QPs are in RTS")
    if args.go_file:
        wait_go(args.go_file, args.op_timeout)
    if args.bad_wqe:
        bad_wqe(end, peer, args.bad_wqe)
        line.send({"cmd": "bye"})
        line.recv()
        return
    for rnd in range(args.rounds):
        if not xfer(end, line, peer, rnd, args.tag):
            break
    if args.gone_file:
        if failures() == 0:
            gone(end, peer)
        return
    line.send({"cmd": "bye"})
    line.recv()


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["server", "client"])
    p.add_argument("--dev", required=True)
    p.add_argument("--ip", help="this end's IPv4 address (its GID)")
    p.add_argument("--server", default="10.99.0.1")
    p.add_argument("--port", type=int, default=18600)
    p.add_argument("--size", type=int, default=4 << 20)
    p.add_argument("--msg", type=int, default=65536)
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--ops", default="write,read,readback")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=int, default=14, help="QP timeout")
    p.add_argument("--retry", type=int, default=7, help="QP retry_cnt")
    p.add_argument("--op-timeout", type=float, default=60.0)
    p.add_argument("--gone-file")
    p.add_argument("--go-file", help="in RTS, wait for this file to exist")
    p.add_argument("--gone-max", type=float, default=10.0)
    p.add_argument("--tag", default="")
    p.add_argument("--bad-wqe", choices=["lkey", "range"])
    ARGS = p.parse_args()
    ARGS.ops = set(ARGS.ops.split(","))
    if ARGS.size % ARGS.msg:
        p.error("--size must be a multiple of --msg")
    if not ARGS.ip:
        ARGS.ip = "10.99.0.1" if ARGS.role == "server" else "10.99.0.2"
    if ARGS.role == "server":
        return serve(ARGS)
    client(ARGS)
    return 1 if failures() else 0


ARGS = None
if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as ex:  # pylint: disable=broad-except
        print(f"not ok rc_xfer crashed: {type(ex).__name__}: {ex}",
              flush=True)
        sys.exit(2)
