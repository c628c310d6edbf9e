#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# dc-bench.sh: one process reaching N peers with RC and with DC (issue 15,
# docs/dc.md "The point of DC, measured"): QPs, setup time, kernel memory,
# bandwidth and latency. A measurement, not a test: no pass/fail
# thresholds (the tool verifies every run's data; a failed run says so).
#
#   tools/dc-bench.sh [--peers "16 256 1024"] [--dcis "1"] [--size B]
#                     [--iters I | --bytes TOTAL] [--op write|send]
#                     [--depth D] [--out DIR] [--json FILE]
#
#   --peers  peer counts N (default "16 256 1024")
#   --dcis   DCIs on the client for the DC runs, one run each (default 1)
#   --size   bytes per WR (default 4096)
#   --iters  WRs per peer; default: --bytes in all, spread over the peers
#   --bytes  bytes moved per run (default 32M), when --iters is not given
#   --op     write (RDMA WRITE, default) or send
#   --depth  WRs in flight in all (default 32)
#   --out    directory for the guest's log and results (default
#            build/dc-bench-<date>)
#   --json   also write the results as one JSON array to FILE
#
# Boots one tests/vm/vmrun guest (Debian 6.1, QEMU TCG, 2 vCPUs) running
# tests/bench/dc_bench_guest.sh: two srnic devices in native mode on a veth
# pair (nsA, nsB), and for each N build/userspace/tools/srnic_dc_bench (its
# header says what it measures and verifies): RC (N QP pairs), then DC (N
# DCTs, K DCIs). Needs `make module userspace`.
#
# Prints the host load (CPU time of processes other than this benchmark
# per second of wall time, in cores: the guest wants both cores; over 0.3
# the figures are not comparable), then a table: N, transport, QPs the
# kernel listed (client + server, srnicctl qp show), setup time (create and
# connect all, both sides), kernel memory (meminfo SUnreclaim +
# VmallocUsed + Percpu + PageTables, slab caches shrunk) the client's QPs took, the
# server's, and its growth over the traffic, bandwidth over the
# round-robin, READ latency (median, each peer in turn / peer 0 alone), DC
# attachments made (srnic0's dc_attach), and whether the data were
# verified. Writes DIR/guest.log, DIR/results.jsonl (one line per run),
# DIR/results.json (or --json FILE) and DIR/meta.txt.
set -euo pipefail
export LC_ALL=C

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# shellcheck source=tools/hostload_lib.sh
. "$REPO/tools/hostload_lib.sh"
peers="16 256 1024" dcis=1 size=4096 iters=0 bytes=32M op=write depth=32
out='' json=''

usage() { sed -n '8,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--peers | --dcis | --size | --iters | --bytes | --op | --depth | --out | --json)
		[ $# -ge 2 ] || { echo "dc-bench.sh: $1 needs a value" >&2; exit 2; }
		case $1 in
		--peers) peers=$2 ;;
		--dcis) dcis=$2 ;;
		--size) size=$2 ;;
		--iters) iters=$2 ;;
		--bytes) bytes=$2 ;;
		--op) op=$2 ;;
		--depth) depth=$2 ;;
		--out) out=$2 ;;
		--json) json=$2 ;;
		esac
		shift 2
		;;
	-h | --help) usage ;;
	*) echo "dc-bench.sh: unknown argument $1" >&2; usage ;;
	esac
done
for v in $peers $dcis $size $iters $depth; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "dc-bench.sh: '$v' is not a number" >&2; exit 2; }
done
case $op in write | send) ;; *) echo "dc-bench.sh: --op write or send" >&2; exit 2 ;; esac
out=${out:-$REPO/build/dc-bench-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
[ -f "$REPO/srnic.ko" ] || { echo "dc-bench.sh: no srnic.ko: make module" >&2; exit 2; }
[ -x "$REPO/build/userspace/tools/srnic_dc_bench" ] ||
	{ echo "dc-bench.sh: no srnic_dc_bench: make userspace" >&2; exit 2; }

log=$out/guest.log
echo "dc-bench: peers $peers; DC with $dcis DCI(s); $op $size B, iters ${iters/#0/from $bytes}, depth $depth; log $log"
hostload_start "$out/times"
set +e
"$REPO/tests/vm/vmrun" --timeout 3000 --keep-log "$log" \
	"$REPO/tests/bench/dc_bench_guest.sh" "$peers" "$dcis" "$size" "$iters" "$bytes" "$op" "$depth" |
	grep --line-buffered -E '^(dcbench|vmrun):|^(PASS|FAIL):|^  cli\| (#|not ok)'
rc=${PIPESTATUS[0]}
set -e
hostload_end "$out/times"
load="$HOST_LOAD, vmrun exit $rc"
grep -a '^DCBENCH-RESULT ' "$log" | cut -d' ' -f2- >"$out/results.jsonl" || true
{
	echo "# date: $(date -Is)"
	echo "# host: $(hostname), $(nproc) CPUs, $(uname -r)"
	echo "# command: tools/dc-bench.sh --peers '$peers' --dcis '$dcis' --size $size --iters $iters --bytes $bytes --op $op --depth $depth"
	echo "# host load: $load"
} >"$out/meta.txt"
cat "$out/meta.txt"
python3 - "$out/results.jsonl" "${json:-$out/results.json}" "$out/meta.txt" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
meta = [l[2:].rstrip() for l in open(sys.argv[3])]
json.dump({"meta": meta, "runs": rows}, open(sys.argv[2], "w"), indent=1)
def g(r, k, f="{}", none="-"):
    return f.format(r[k]) if k in r else none
print("| N | transport | QPs client + server (kernel) | setup | kernel memory: client | server | traffic | bandwidth | READ latency: peers in turn / one peer | DC attaches | data |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    tr = r.get("transport", "?").upper()
    if tr == "DC":
        tr += " (%s DCI%s)" % (r.get("dcis", "?"), "" if r.get("dcis") == 1 else "s")
    qps = "%s + %s" % (r.get("kernel_qps_client", "-"), r.get("kernel_qps_server", "-"))
    if r.get("qps_client") is not None and (r.get("qps_client") != r.get("kernel_qps_client") or r.get("qps_server") != r.get("kernel_qps_server")):
        qps += " (tool: %s + %s)" % (r.get("qps_client"), r.get("qps_server"))
    ok = "verified" if r.get("verified") and r.get("status") == "ok" else "FAILED (%s)" % r.get("status")
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        r.get("peers"), tr, qps, g(r, "setup_ms", "{:.0f} ms"),
        g(r, "kmem_client_kb", "{:,} KiB"), g(r, "kmem_server_kb", "{:,} KiB"),
        g(r, "kmem_traffic_kb", "{:+,} KiB"), g(r, "bw_mib_s", "{:.1f} MiB/s"),
        "%s / %s" % (g(r, "lat_rr_us", "{:.0f} µs"), g(r, "lat_one_us", "{:.0f} µs")),
        r.get("dc_attach", "-") if r.get("transport") == "dc" else "-", ok))
print()
print("dc-bench: %d runs; JSON: %s" % (len(rows), sys.argv[2]))
EOF
exit "$rc"
