#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory registration through stock rdma-core, run inside the VM
# (tests/vm/vmrun tests/vm/test_mr.sh):
#
#   vethA 10.99.0.1 ---- veth ---- vethB 10.99.0.2
#   srnic0 (rdma link on vethA)
#
# A pyverbs script (/usr/bin/python3; rdma-core's rxe provider drives srnic)
# opens srnic0, allocates a PD and asserts: MRs of several sizes and access
# flags register (with lkey == rkey, non-zero, one key index each, also for
# the same range twice and for an unaligned range), access combinations
# IBA forbids fail with EINVAL, zero-length/unmapped/read-only cases fail as
# they should, a 2 MiB hugetlb buffer registers with blocks of at least
# 2 MiB (srnic's driver attributes in "rdma -dd resource show mr": type,
# block_size, blocks, also checked for every other MR), hundreds of MRs get distinct keys, type 1 and
# type 2 memory windows allocate and free, and deregistration leaves nothing in
# "rdma res show mr". Then the device and module go away without a kernel
# warning. Translation itself is covered by KUnit (tests/kunit, srnic_mr).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh

DEV=srnic0
PY=${TMPDIR:-/tmp}/test_mr.py
OUT=${TMPDIR:-/tmp}/test_mr.out

dmesg -C
veth_pair_setup || t_fail "veth pair" "veth_pair_setup failed"

# Huge pages for the hugetlb case (may come up short on a fragmented guest).
echo 8 >/proc/sys/vm/nr_hugepages 2>/dev/null

t_check "srnic_load: srnic.ko and its dependencies" srnic_load
t_check "rdma link add $DEV" rdma link add "$DEV" type srnic netdev vethA

cat >"$PY" <<'EOF'
# Prints one "STATUS|name|detail" line per check (STATUS: OK, FAIL, SKIP).
import ctypes
import errno
import json
import subprocess
import sys

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR, MW
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError

DEV = sys.argv[1]
LW = e.IBV_ACCESS_LOCAL_WRITE
RW = e.IBV_ACCESS_REMOTE_WRITE
RR = e.IBV_ACCESS_REMOTE_READ
RA = e.IBV_ACCESS_REMOTE_ATOMIC
MWB = e.IBV_ACCESS_MW_BIND
HUGE = 2 << 20

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
PROT_READ, PROT_WRITE = 1, 2
MAP_PRIVATE, MAP_ANONYMOUS, MAP_HUGETLB = 0x02, 0x20, 0x40000
MAP_FAILED = ctypes.c_void_p(-1).value


def report(status, name, detail=''):
    print(f'{status}|{name}|{detail}', flush=True)


def check(name, cond, detail=''):
    report('OK' if cond else 'FAIL', name, '' if cond else detail)


def mmap(length, prot=PROT_READ | PROT_WRITE, flags=0):
    addr = libc.mmap(None, length, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags,
                     -1, 0)
    return None if addr in (None, MAP_FAILED) else addr


def reg_err(pd, length, access, address=None):
    """errno of a registration that should fail (0 if it succeeded)."""
    try:
        mr = MR(pd, length, access, address=address)
    except PyverbsRDMAError as ex:
        return ex.error_code
    mr.close()
    return 0


def key_ok(mr, indices):
    """lkey == rkey, non-zero, and an index no other live object has."""
    idx = mr.lkey >> 8
    ok = mr.lkey != 0 and mr.lkey == mr.rkey and idx != 0 and \
        idx not in indices
    indices.add(idx)
    return ok


def res_mr_lines():
    out = subprocess.run(['rdma', 'res', 'show', 'mr'],
                         capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if f'dev {DEV} ' in l and 'mrn' in l]


def mr_drv(mr):
    """srnic's driver attributes of mr in "rdma -j -dd resource show mr"."""
    out = subprocess.run(['rdma', '-j', '-dd', 'resource', 'show', 'mr'],
                         capture_output=True, text=True).stdout
    for ent in json.loads(out or '[]'):
        lkey = ent.get('lkey')
        if isinstance(lkey, str):
            lkey = int(lkey, 16)  # iproute2 prints keys in hex
        if ent.get('ifname') == DEV and lkey == mr.lkey:
            return {k[4:]: v for k, v in ent.items() if k.startswith('drv_')}
    return {}


def table_ok(mr, addr, length, min_block=4096):
    """A user MR whose blocks (a power of two, >= min_block) span it."""
    d = mr_drv(mr)
    bs, n = d.get('block_size', 0), d.get('blocks', 0)
    span = (addr % bs if bs else 0) + length
    ok = d.get('type') == 'user' and bs >= min_block and \
        bs & (bs - 1) == 0 and n * bs >= span and (n - 1) * bs < span
    return ok, f'{d}'


ctx = Context(name=DEV)
pd = PD(ctx)
indices = set()
live = []

# --- sizes and access flags ------------------------------------------------
cases = [
    ('1 byte, no access', 1, 0),
    ('4 KiB, local write', 4096, LW),
    ('64 KiB + 123, all rights', 65536 + 123, LW | RW | RR | RA | MWB),
    ('8 MiB, remote read', 8 << 20, RR),
    ('12 KiB, relaxed ordering', 12288, LW | e.IBV_ACCESS_RELAXED_ORDERING),
]
for name, length, access in cases:
    try:
        mr = MR(pd, length, access)
    except PyverbsRDMAError as ex:
        report('FAIL', 'reg ' + name, str(ex))
        continue
    live.append(mr)
    check('reg ' + name, True)
    check('keys of ' + name, key_ok(mr, indices),
          f'lkey {mr.lkey:#x} rkey {mr.rkey:#x}')
    check('restrack: type, block size and blocks of ' + name,
          *table_ok(mr, mr.buf, length))

# the same range twice, and a range that starts mid-page
buf = ctypes.create_string_buffer(5 * 4096)
base = ctypes.addressof(buf)
for name, addr, length in (('range, first', base, 4096),
                           ('range, again', base, 4096),
                           ('unaligned range', base + 100, 9000)):
    try:
        mr = MR(pd, length, LW, address=addr)
        live.append(mr)
        check('reg ' + name, key_ok(mr, indices), f'lkey {mr.lkey:#x}')
        check('restrack: blocks of ' + name, *table_ok(mr, addr, length))
    except PyverbsRDMAError as ex:
        report('FAIL', 'reg ' + name, str(ex))

check('rdma res show mr lists them', len(res_mr_lines()) == len(live),
      f'{len(res_mr_lines())} lines for {len(live)} MRs')

# --- what must fail --------------------------------------------------------
for name, access in (('remote write without local write', RW),
                     ('remote atomic without local write', RA),
                     ('remote write + read without local write', RW | RR)):
    err = reg_err(pd, 4096, access)
    check('EINVAL: ' + name, err == errno.EINVAL, f'errno {err}')
err = reg_err(pd, 4096, LW | e.IBV_ACCESS_ZERO_BASED)
check('EOPNOTSUPP: zero-based MR', err == errno.EOPNOTSUPP, f'errno {err}')
err = reg_err(pd, 0, LW, address=base)
check('EINVAL: zero length', err == errno.EINVAL, f'errno {err}')

hole = mmap(4 * 4096)
libc.munmap(hole, 4 * 4096)
err = reg_err(pd, 4 * 4096, 0, address=hole)
check('EFAULT: unmapped range', err == errno.EFAULT, f'errno {err}')
ro = mmap(4096, prot=PROT_READ)
err = reg_err(pd, 4096, 0, address=ro)
check('read-only mapping, read-only MR', err == 0, f'errno {err}')
err = reg_err(pd, 4096, LW, address=ro)
check('EFAULT: read-only mapping, local write', err == errno.EFAULT,
      f'errno {err}')
libc.munmap(ro, 4096)

# --- hugetlb: 2 MiB blocks -------------------------------------------------
huge = mmap(2 * HUGE, flags=MAP_HUGETLB)
if huge is None:
    report('SKIP', 'hugetlb MR', 'no huge pages in the guest')
else:
    ctypes.memset(huge, 0x5a, 2 * HUGE)
    check('hugetlb buffer is 2 MiB aligned', huge % HUGE == 0, f'{huge:#x}')
    for name, addr, length in (('hugetlb MR, 4 MiB', huge, 2 * HUGE),
                               ('hugetlb MR, across the 2 MiB boundary',
                                huge + HUGE - 4096, 8192),
                               ('hugetlb MR, inside one huge page',
                                huge + 4096 * 3 + 100, HUGE // 2)):
        try:
            mr = MR(pd, length, LW | RW | RR, address=addr)
            live.append(mr)
            check('reg ' + name, key_ok(mr, indices), f'lkey {mr.lkey:#x}')
            check(name + ': blocks of 2 MiB or more',
                  *table_ok(mr, addr, length, HUGE))
        except PyverbsRDMAError as ex:
            report('FAIL', 'reg ' + name, str(ex))

# --- many MRs ---------------------------------------------------------------
many = []
try:
    for i in range(300):
        many.append(MR(pd, 4096, LW if i % 2 else RR))
    report('OK', 'reg 300 MRs')
except PyverbsRDMAError as ex:
    report('FAIL', 'reg 300 MRs', f'after {len(many)}: {ex}')
idx = {m.lkey >> 8 for m in many}
check('300 MRs have 300 new key indices',
      len(idx) == len(many) and not idx & indices, f'{len(idx)} distinct')
for m in many:
    m.close()

# --- memory windows --------------------------------------------------------
for name, t in (('type 1', e.IBV_MW_TYPE_1), ('type 2', e.IBV_MW_TYPE_2)):
    try:
        mw = MW(pd, t)
    except PyverbsRDMAError as ex:
        report('FAIL', 'alloc MW ' + name, str(ex))
        continue
    i = mw.rkey >> 8
    check('alloc MW ' + name, mw.rkey != 0 and i != 0 and i not in indices,
          f'rkey {mw.rkey:#x}')
    indices.add(i)
    try:
        mw.close()
        report('OK', 'dealloc MW ' + name)
    except PyverbsRDMAError as ex:
        report('FAIL', 'dealloc MW ' + name, str(ex))

# --- deregistration ----------------------------------------------------------
failed = 0
for mr in live:
    try:
        mr.close()
    except PyverbsRDMAError:
        failed += 1
check('dereg every MR', failed == 0, f'{failed} failed')
check('rdma res show mr is empty', not res_mr_lines(), str(res_mr_lines()))
if huge is not None:
    libc.munmap(huge, 2 * HUGE)
pd.close()
ctx.close()
report('OK', 'PD and context closed')
EOF

with_timeout 300 /usr/bin/python3 "$PY" "$DEV" >"$OUT" 2>&1
rc=$?
while IFS='|' read -r st name detail; do
	case $st in
	OK) t_ok "$name" ;;
	FAIL) t_fail "$name" "$detail" ;;
	SKIP) t_skip "$name" "$detail" ;;
	*) echo "  | $st${name:+|$name}${detail:+|$detail}" ;;
	esac
done <"$OUT"
t_eq "pyverbs script exit status" "$rc" 0

t_check "rdma link delete $DEV" rdma link delete "$DEV"
t_check "rmmod srnic" rmmod srnic
t_kernel_clean "no kernel warning"

t_summary
