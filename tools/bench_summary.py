#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# bench_summary.py: the summarizing part of tools/bench.sh (run it as
# `tools/bench.sh --summarize [--json FILE] [--png FILE] TSV...`); needs no VM.
#
# Reads bench.sh TSV files ("# key: value" comment lines, a header, then
#   round stack test size metric value unit veth_pkts attempts status host_load
# one row per figure per VM run), and prints for each figure (test, size,
# metric) the median, min and max of each stack's values over the rounds
# (rows with status "ok" only) and the srnic/rxe ratio of the medians.
# A VM run (round, stack) is "loaded" when its host_load (cores used by other
# processes on the host during that run) exceeds LOADED_CORES; if any run
# is, the ratios are not comparable. Rounds of a second TSV file follow the
# first's (they are numbered on). The exit status is 0 unless the input
# cannot be read: this is a measurement, not a test.
#
# --json FILE: one JSON document: date, host, kernel, mtu, mode, rounds,
#   stacks, runs [{round, stack, host_load, loaded}], loaded, comparable,
#   loaded_cores, figures [{test, size, metric, unit, ratio,
#   stacks {STACK: {values, median, min, max, failed}}}].
# --png FILE: ib_write_bw medians (MiB/s) vs message size, both stacks
#   (gnuplot, pngcairo or png terminal).
import argparse
import json
import statistics
import subprocess
import sys

LOADED_CORES = 0.3
STACKS = ("rxe", "srnic")
COLUMNS = ("round", "stack", "test", "size", "metric", "value", "unit",
           "veth_pkts", "attempts", "status", "host_load")


def read_tsvs(paths):
    """Rows (dicts) of every file, rounds numbered on; meta of the first."""
    meta, rows, offset = {}, [], 0
    for path in paths:
        top = 0
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line:
                    continue
                if line.startswith("#"):
                    key, sep, val = line[1:].strip().partition(": ")
                    if sep and key not in meta:
                        meta[key] = val
                    continue
                cells = line.split("\t")
                if cells[0] == "round":
                    continue
                if len(cells) != len(COLUMNS):
                    sys.exit("bench_summary: %s: %d columns, want %d: %s"
                             % (path, len(cells), len(COLUMNS), line))
                row = dict(zip(COLUMNS, cells))
                row["round"] = int(row["round"]) + offset
                top = max(top, row["round"])
                rows.append(row)
        offset = top
    return meta, rows


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def runs_of(rows):
    """{(round, stack): host_load} of every VM run in the rows."""
    runs = {}
    for r in rows:
        load = number(r["host_load"])
        key = (r["round"], r["stack"])
        runs[key] = max(runs.get(key, 0.0), load if load is not None else 0.0)
    return runs


def figures_of(rows):
    """Figures in order of first appearance, the VM-run rows left out."""
    figs, order = {}, []
    for r in rows:
        if r["test"] == "vm":
            continue
        key = (r["test"], r["size"], r["metric"])
        if key not in figs:
            figs[key] = {"test": r["test"], "size": int(r["size"]),
                         "metric": r["metric"], "unit": r["unit"], "rows": {}}
            order.append(key)
        figs[key]["rows"].setdefault(r["stack"], []).append(r)
    out = []
    for key in order:
        fig = figs[key]
        stacks = {}
        for stack, srows in fig.pop("rows").items():
            srows.sort(key=lambda r: r["round"])
            vals = [number(r["value"]) for r in srows if r["status"] == "ok"]
            vals = [v for v in vals if v is not None]
            stacks[stack] = {
                "values": vals,
                "median": statistics.median(vals) if vals else None,
                "min": min(vals) if vals else None,
                "max": max(vals) if vals else None,
                "failed": len(srows) - len(vals),
            }
        fig["stacks"] = stacks
        rxe = stacks.get("rxe", {}).get("median")
        srn = stacks.get("srnic", {}).get("median")
        fig["ratio"] = srn / rxe if rxe and srn is not None else None
        out.append(fig)
    return out


def human_size(test, size):
    if test == "qp_churn":
        return "%d QPs" % size
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return "%d %s" % (size >> shift, unit)
    return "%d B" % size


def shown(fig):
    """The figures the table shows (the JSON has them all)."""
    test, size, metric = fig["test"], fig["size"], fig["metric"]
    if test.endswith("_bw"):
        if size <= 64:
            return metric in ("msg_rate", "cpu_s_per_gib")
        return metric in ("bw_avg", "cpu_s_per_gib", "memcpy_frac")
    if test.endswith("_lat"):
        return metric == "t_typical"
    return True


def g(v):
    if v is None:
        return "-"
    return "%.0f" % v if abs(v) >= 1e4 else "%.4g" % v


def cell(st):
    """median [min-max], and (ok/runs) when some runs gave no value."""
    if not st or st["median"] is None:
        return "-"
    text = "%s [%s-%s]" % (g(st["median"]), g(st["min"]), g(st["max"]))
    if st["failed"]:
        text += " (%d/%d)" % (len(st["values"]), len(st["values"]) + st["failed"])
    return text


def print_table(figs):
    print("%-34s %-8s %-28s %-28s %9s" % ("figure", "unit", "rxe median [min-max]",
                                         "srnic median [min-max]", "srnic/rxe"))
    for fig in figs:
        if not shown(fig):
            continue
        name = "%s %s %s" % (fig["test"], human_size(fig["test"], fig["size"]), fig["metric"])
        ratio = "-" if fig["ratio"] is None else "%.2f" % fig["ratio"]
        print("%-34s %-8s %-28s %-28s %9s" % (
            name, fig["unit"],
            cell(fig["stacks"].get("rxe")), cell(fig["stacks"].get("srnic")), ratio))


def plot(figs, meta, loaded, path):
    series = {}
    for fig in figs:
        if fig["test"] == "ib_write_bw" and fig["metric"] == "bw_avg":
            for stack, st in fig["stacks"].items():
                if st["median"] is not None:
                    series.setdefault(stack, []).append((fig["size"], st["median"]))
    if not series:
        print("bench: no ib_write_bw figures, no plot", file=sys.stderr)
        return False
    terms = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True,
                           text=True, check=False)
    term = "pngcairo" if "pngcairo" in terms.stdout + terms.stderr else "png"
    title = "ib_write_bw medians, netdev MTU %s, %s%s" % (
        meta.get("mtu", "?"), meta.get("date", ""), " (LOADED host)" if loaded else "")
    script = ["set terminal %s noenhanced size 900,560" % term, "set output '%s'" % path.replace("'", "''"),
              "set title \"%s\"" % title.replace('"', "'"), "set logscale x 2",
              "set xlabel 'message size'", "set ylabel 'MiB/s'",
              "set yrange [0:*]", "set offsets graph 0.05, graph 0.05, 0, 0",
              "set key below", "set grid"]
    sizes = sorted({s for pts in series.values() for s, _ in pts})
    script.append("set xtics (%s)" % ", ".join(
        "\"%s\" %d" % (human_size("", s), s) for s in sizes))
    plots = []
    for stack in sorted(series):
        script.append("$%s << EOD" % stack)
        script += ["%d %s" % (s, repr(v)) for s, v in sorted(series[stack])]
        script.append("EOD")
        plots.append("$%s using 1:2 with linespoints lw 2 title '%s'" % (stack, stack))
    script.append("plot " + ", ".join(plots))
    res = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True,
                         capture_output=True, check=False)
    if res.returncode != 0:
        print("bench: gnuplot failed: %s" % res.stderr.strip(), file=sys.stderr)
        return False
    return True


def main():
    ap = argparse.ArgumentParser(description="summarize tools/bench.sh TSV files")
    ap.add_argument("--json", help="write the summary as JSON here")
    ap.add_argument("--png", help="plot write bandwidth vs size here")
    ap.add_argument("tsv", nargs="+")
    args = ap.parse_args()

    try:
        meta, rows = read_tsvs(args.tsv)
    except OSError as err:
        sys.exit("bench_summary: %s" % err)
    if not rows:
        sys.exit("bench_summary: no result rows in %s" % " ".join(args.tsv))
    runs = runs_of(rows)
    stacks = [s for s in STACKS if any(rs == s for (_, rs) in runs)]
    stacks += sorted({rs for (_, rs) in runs} - set(stacks))
    loaded_runs = sorted(k for k, load in runs.items() if load > LOADED_CORES)
    loaded = bool(loaded_runs)
    figs = figures_of(rows)
    rounds = len({r for (r, _) in runs})

    print("bench: %d round(s), stacks %s, netdev MTU %s; host load per VM run "
          "(cores used by other processes):" % (rounds, " ".join(stacks), meta.get("mtu", "?")))
    for (rnd, stack), load in sorted(runs.items()):
        print("  round %d %-6s %.2f%s" % (rnd, stack, load,
                                          "  LOADED" if load > LOADED_CORES else ""))
    print_table(figs)
    comparable = not loaded and "rxe" in stacks and "srnic" in stacks
    if loaded:
        print("bench: %d of %d VM runs LOADED (other processes > %.1f cores): "
              "the srnic/rxe ratios are NOT comparable" % (len(loaded_runs), len(runs), LOADED_CORES))
    else:
        print("bench: no VM run loaded (other processes <= %.1f cores in each): "
              "ratios comparable" % LOADED_CORES)

    if args.json:
        doc = {
            "date": meta.get("date"), "host": meta.get("host"), "kernel": meta.get("kernel"),
            "mtu": meta.get("mtu"), "mode": meta.get("mode"), "rounds": rounds,
            "stacks": stacks, "loaded_cores": LOADED_CORES, "loaded": loaded,
            "comparable": comparable,
            "runs": [{"round": rnd, "stack": stack, "host_load": load,
                      "loaded": load > LOADED_CORES}
                     for (rnd, stack), load in sorted(runs.items())],
            "figures": figs,
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    if args.png and plot(figs, meta, loaded, args.png):
        print("bench: plot in %s" % args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
