#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The import graph of the module: file A -> file B when A's object uses a
# symbol that B's object defines (nm of kernel/*.o in a built tree). Exits 1
# and names every cycle (strongly connected component of more than one file)
# but the ones allowed below, and every allowed one that is gone; exits 2 if
# a kernel/srnic_*.c has no object. -v prints the graph too.
#
# usage: tools/imports.sh [-v] [DIR]     (DIR: the built tree, default: this one)
set -euo pipefail
verbose=0
[ "${1:-}" = -v ] && { verbose=1; shift; }
dir=${1:-$(cd "$(dirname "$0")/.." && pwd)}
shopt -s nullglob
objs=("$dir"/kernel/srnic_*.o)
[ ${#objs[@]} -gt 0 ] || { echo "imports: no kernel/*.o under $dir (make module first)" >&2; exit 2; }
# every source built: a file that failed to compile would drop out unseen
missing=()
for c in "$dir"/kernel/srnic_*.c; do
	[ -f "${c%.c}.o" ] || missing+=("${c#"$dir"/}")
done
[ ${#missing[@]} -eq 0 ] || { echo "imports: not built: ${missing[*]}" >&2; exit 2; }

for o in "${objs[@]}"; do
	f=$(basename "$o" .o)
	nm "$o" | awk -v f="$f" '$1 == "U" { print "U", f, $2; next }
		NF == 3 && $2 ~ /^[TDBRVWG]$/ { print "D", f, $3 }'
done | VERBOSE=$verbose python3 -c '
import os, sys
# Cycles allowed: requester <-> completer is the one IBA couples (see
# kernel/srnic.h). Each entry is one cycle, written as its sorted files.
allowed = {
    ("srnic_comp", "srnic_req"),
}
defs, uses, files = {}, [], set()
for line in sys.stdin:
    kind, f, sym = line.split()
    files.add(f)
    if kind == "D":
        defs[sym] = f
    else:
        uses.append((f, sym))
graph = {f: {} for f in files}
for f, sym in uses:
    t = defs.get(sym)
    if t and t != f:
        graph[f].setdefault(t, []).append(sym)
if os.environ["VERBOSE"] == "1":
    for f in sorted(graph):
        for t in sorted(graph[f]):
            print("%s -> %s: %s" % (f, t, " ".join(sorted(graph[f][t]))))

# Tarjan: strongly connected components.
index, low, stack, on, sccs = {}, {}, [], set(), []
def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v:
                break
        sccs.append(tuple(sorted(c)))
sys.setrecursionlimit(10000)
for v in sorted(graph):
    if v not in index:
        visit(v)
bad = 0
for c in sorted(allowed - set(sccs)):
    bad += 1
    print("GONE: allowed cycle {" + ", ".join(c) + "} no longer exists: drop it from the list")
for c in sorted(s for s in sccs if len(s) > 1):
    ok = c in allowed
    bad += not ok
    print(("allowed" if ok else "CYCLE") + ": {" + ", ".join(c) + "}")
    if not ok:
        for f in c:
            for t in sorted(graph[f]):
                if t in c:
                    print("  %s -> %s: %s" % (f, t, " ".join(sorted(graph[f][t]))))
print(f"imports: {len(graph)} files, {bad} cycle(s) not allowed or allowed ones gone")
sys.exit(1 if bad else 0)
'
