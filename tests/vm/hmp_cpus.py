#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a hung guest's vCPUs are: asked of QEMU's monitor.

    hmp_cpus.py SOCKET [KALLSYMS]

vmrun calls it when a guest runs into its timeout, before killing it: the
guest may be stuck with no CPU free to print anything (a lockup, a vCPU
looping in the kernel), and the console then says nothing of where. For
each vCPU it prints one line: the instruction pointer, and the kernel text
addresses found in the top 512 bytes of its stack (a crude backtrace: the
return addresses, and some stale words), named from KALLSYMS (the guest
kernel's /proc/kallsyms, or its text lines, that vmrun keeps from a boot:
Debian ships no real System.map). vmrun boots the vmlinux by PVH, where the
kernel runs at its link address (no KASLR of the text), so one boot's
addresses hold for every boot; a module's address is printed as "module or
unknown".
"""
import bisect
import re
import socket
import sys
import time

PROMPT = b"(qemu) "
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][AB0-9]")


class Monitor:
    """The human monitor (HMP) on a unix socket, one command at a time."""

    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self._read_to_prompt()

    def _read_to_prompt(self):
        buf = b""
        end = time.monotonic() + 20
        while not ANSI.sub(b"", buf).rstrip(b" ").endswith(PROMPT.rstrip()):
            if time.monotonic() > end:
                raise TimeoutError("no monitor prompt")
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("monitor closed")
            buf += chunk
        return ANSI.sub(b"", buf).replace(b"\r", b"").decode(errors="replace")

    def cmd(self, line):
        self.sock.sendall(line.encode() + b"\n")
        out = self._read_to_prompt()
        # drop the echoed command and the prompt
        lines = out.split("\n")
        return "\n".join(ln for ln in lines[1:-1])


class Symbols:
    """The kernel's text symbols (kallsyms), for address -> "name+0xoff"."""

    def __init__(self, path):
        self.addrs, self.names = [], []
        self.lo = self.hi = 0
        if not path:
            return
        try:
            with open(path, encoding="ascii", errors="replace") as f:
                rows = []
                for ln in f:
                    parts = ln.split()
                    # "ADDR TYPE NAME", a module's with "[MOD]" after
                    if len(parts) == 3 and parts[1] in "tTwW":
                        rows.append((int(parts[0], 16), parts[2]))
        except OSError:
            return
        rows.sort()
        self.addrs = [a for a, _ in rows]
        self.names = [n for _, n in rows]
        named = dict((n, a) for a, n in rows)
        self.lo = named.get("_stext", self.addrs[0] if rows else 0)
        self.hi = named.get("_etext", self.addrs[-1] if rows else 0)

    def text(self, addr):
        return self.lo <= addr < self.hi

    def name(self, addr):
        if not self.addrs:
            return "%x" % addr
        if not self.text(addr):
            return "%x (module or unknown)" % addr
        i = bisect.bisect_right(self.addrs, addr) - 1
        return "%s+0x%x" % (self.names[i], addr - self.addrs[i])


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().split("\n")[2].strip(), file=sys.stderr)
        return 2
    syms = Symbols(sys.argv[2] if len(sys.argv) == 3 else "")
    try:
        mon = Monitor(sys.argv[1])
        regs = mon.cmd("info registers -a")
    except (OSError, TimeoutError, ConnectionError) as e:
        print("no answer from the monitor: %s" % e)
        return 1
    cpus = re.split(r"^CPU#(\d+)", regs, flags=re.M)
    # ['', '0', 'regs of 0', '1', 'regs of 1', ...]
    for i in range(1, len(cpus) - 1, 2):
        n, body = cpus[i], cpus[i + 1]
        rip = re.search(r"RIP=([0-9a-f]{16})", body)
        rsp = re.search(r"RSP=([0-9a-f]{16})", body)
        if not rip:
            print("vCPU%s: no RIP in the monitor's answer" % n)
            continue
        pc = int(rip.group(1), 16)
        where = syms.name(pc) if pc >= 1 << 63 else "user space %x" % pc
        seen = []
        if rsp and pc >= 1 << 63:
            mon.cmd("cpu %s" % n)
            words = mon.cmd("x/64gx 0x%s" % rsp.group(1))
            for w in re.findall(r"0x([0-9a-f]{16})", words):
                a = int(w, 16)
                if syms.text(a):
                    s = syms.name(a)
                    if s not in seen:
                        seen.append(s)
        line = "vCPU%s at %s" % (n, where)
        if seen:
            line += "; text on its stack: " + " < ".join(seen[:14])
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
