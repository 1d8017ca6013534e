#!/usr/bin/python3
"""bench/fidelity_report.py - the table of bench/fidelity.sh.

Each RUN directory (named FIDELITY-SEED) holds hml.json (`hml --json show
s1` of the search) and wall (its seconds). Per run: wall time, the best
validation error of the front (the top rung's feasible results) and the
front's hypervolume in decades against one reference point for all runs
(bench/search_report.py's hypervolume); then per fidelity the means over
the seeds and their ratios to the epochs fidelity's.

usage: fidelity_report.py RUN [RUN...]
"""
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_report import hypervolume  # noqa: E402


def error_key(results):
    return "val_mape" if results.get("metric") == "mape" else "val_rmse"


def top_points(results):
    key = error_key(results)
    return [(math.log10(t[key]), math.log10(t["latency_seconds_per_sample"]))
            for t in results["trials"] if t["top"] and t["feasible"]
            and t.get(key) and t.get("latency_seconds_per_sample")]


def main():
    runs = []
    for path in sys.argv[1:]:
        fid, seed = os.path.basename(os.path.normpath(path)).rsplit("-", 1)
        results = json.load(open(os.path.join(path, "hml.json")))["results"]
        runs.append({"fid": fid, "seed": seed, "pts": top_points(results),
                     "wall": float(open(os.path.join(path, "wall")).read()),
                     "metric": error_key(results)[4:]})
    every = [p for r in runs for p in r["pts"]]
    if not every:
        sys.exit("fidelity_report.py: no run has a front")
    ref = (max(p[0] for p in every) + 0.1, max(p[1] for p in every) + 0.1)
    print("%-8s %5s %9s %7s %12s %12s" % ("fidelity", "seed", "wall s", "front",
                                         "best " + runs[0]["metric"], "hypervolume"))
    for r in runs:
        r["hv"] = hypervolume(r["pts"], ref)
        r["best"] = 10 ** min(p[0] for p in r["pts"]) if r["pts"] else float("nan")
        print("%-8s %5s %9.1f %7d %12.4g %12.4f" % (r["fid"], r["seed"], r["wall"],
                                                    len(r["pts"]), r["best"], r["hv"]))
    print("\nmeans over the seeds (ratio to epochs)")
    base = None
    for fid in dict.fromkeys(r["fid"] for r in runs):
        sel = [r for r in runs if r["fid"] == fid]
        m = {k: statistics.mean(r[k] for r in sel) for k in ("wall", "best", "hv")}
        sd = statistics.stdev(r["hv"] for r in sel) if len(sel) > 1 else 0.0
        base = base or m
        print("%-8s wall %7.1f s (%.2fx)  best %s %.4g (%.2fx)  hypervolume %.4f +- %.4f (%.2fx)"
              % (fid, m["wall"], m["wall"] / base["wall"], runs[0]["metric"], m["best"],
                 m["best"] / base["best"], m["hv"], sd, m["hv"] / base["hv"] if base["hv"] else
                 float("nan")))


if __name__ == "__main__":
    main()
