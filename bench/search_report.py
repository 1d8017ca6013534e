#!/usr/bin/python3
"""bench/search_report.py - sample efficiency tables of bench/search.sh.

Each RUN directory holds one run of bench/search.sh (b) with one seed:
hml.json (the search, as `hml --json show SEARCH_ID` prints it: every
result with its rung, configuration and the order it ended), peers.json
(the peers' trials, bench/search_peers.py; a run may hold any subset of
the peers), wall (hml's wall time in seconds) and, where bench/search.sh
wrote it, settings (budget, data, epochs, workers, target: runs whose
settings differ are refused). For each run, at each
budget B, it prints the hypervolume of the (validation RMSE, latency per
sample) front each method had found after B configurations, and hml's
ratio to each peer. With two runs or more it then prints, per budget and
peer, the mean and standard deviation of both hypervolumes over the runs,
the ratio of the means, the per-run ratios (lowest and highest), the
number of runs hml was ahead in, and a 90% interval of the mean per-run
ratio (Student's t over the runs; the runs are the seeds' repeats).

Hypervolume: in decades (log10 of both objectives, as hml show reports
it), against one reference point common to every run, method and budget
(so that hypervolumes of different runs compare): one tenth of a decade
beyond the largest log10 error and latency of any result counted.

What counts: for hml, the results of the top rung (full fidelity: the
front it hands to hml deploy), in the order trials ended, up to the end of
the last trial of the B-th configuration to end -- a configuration
promoted later is not credited to the earlier budget; for a peer, its
first B trials (all at full fidelity). Failed trials count against the
budget and add nothing.

A last line per run compares at equal wall time instead: hml's front after
its whole run against each peer's trials that had ended by then (the peers
record when each trial ended, bench/search_peers.py).

usage: search_report.py BUDGETS RUN [RUN...]
"""
import json
import math
import os
import statistics
import sys


def hypervolume(points, ref):
    area, best_y = 0.0, ref[1]
    for x, y in sorted(p for p in points if p[0] < ref[0] and p[1] < ref[1]):
        if y < best_y:
            area += (ref[0] - x) * (best_y - y)
            best_y = y
    return area


def log_point(t):
    return (math.log10(t["val_rmse"]), math.log10(t["latency_seconds_per_sample"]))


def hml_prefix(results, budget):
    """Top-rung points of hml after `budget` configurations had ended a trial."""
    seen, pts = set(), []
    for t in sorted(results["trials"], key=lambda t: t["ended"]):
        if t["config"] not in seen:
            if len(seen) == budget:
                break
            seen.add(t["config"])
        if t["top"] and t["feasible"]:
            pts.append(log_point(t))
    return pts


def load_run(path, budgets):
    """One run: its name, seed, points per method and budget, peers, results, wall."""
    results = json.load(open(os.path.join(path, "hml.json")))["results"]
    peers = json.load(open(os.path.join(path, "peers.json")))
    wall = float(open(os.path.join(path, "wall")).read())
    pts = {"hml": {b: hml_prefix(results, b) for b in budgets}}
    for m, d in peers.items():
        pts[m] = {b: [log_point(t) for t in d["trials"][:b] if t] for b in budgets}
    sfile = os.path.join(path, "settings")
    settings = open(sfile).read().strip() if os.path.exists(sfile) else None
    return {"name": os.path.basename(os.path.normpath(path)), "pts": pts, "peers": peers,
            "results": results, "wall": wall, "settings": settings, "path": path}


def fmt_ratio(a, b):
    return "%.3f" % (a / b) if b > 0 else "inf"


def print_run(run, budgets, ref):
    pts, peers = run["pts"], run["peers"]
    methods = list(pts)
    print("-- %s --" % run["name"])
    print("%-7s" % "budget" + "".join("%11s" % ("HV " + m) for m in methods) +
          "".join("%14s" % ("hml/" + m) for m in methods[1:]) +
          "".join("%13s" % ("best " + m) for m in methods))
    for b in budgets:
        hv = {m: hypervolume(pts[m][b], ref) for m in methods}
        print("%-7d" % b + "".join("%11.4f" % hv[m] for m in methods) +
              "".join("%14s" % fmt_ratio(hv["hml"], hv[m]) for m in methods[1:]) +
              "".join("%13.4g" % (10 ** min(p[0] for p in pts[m][b]) if pts[m][b] else math.nan)
                      for m in methods))
    print("wall time of the %d-configuration run: hml %.1f s" % (max(budgets), run["wall"]) +
          "".join(", %s %.1f s" % (m, peers[m]["wall_seconds"]) for m in peers))
    # The same wall time for every method: each peer's trials that had ended
    # by the time hml's whole run had (hml's largest budget).
    hv_hml = hypervolume(pts["hml"][max(budgets)], ref)
    row = []
    for m, d in peers.items():
        done = [t for t in d["trials"] if t and t.get("ended_seconds", math.inf) <= run["wall"]]
        hv = hypervolume([log_point(t) for t in done], ref)
        row.append("%s %d trials, HV %.4f, hml/%s %s" % (m, len(done), hv, m,
                                                          fmt_ratio(hv_hml, hv)))
    print("at hml's wall time (%.1f s, HV %.4f): " % (run["wall"], hv_hml) + "; ".join(row))
    print("top-rung (full-fidelity) results: hml %d" %
          sum(1 for t in run["results"]["trials"] if t["top"]) +
          "".join(", %s %d" % (m, sum(1 for t in peers[m]["trials"] if t)) for m in peers))


def t90(n):
    """Two-sided 90% quantile of Student's t with n - 1 degrees of freedom."""
    try:
        from scipy.stats import t
        return float(t.ppf(0.95, n - 1))
    except ImportError:   # the table, for the few runs a bench makes
        table = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895,
                 8: 1.860, 9: 1.833}
        return table.get(n - 1, 1.645)


def print_summary(runs, budgets, ref):
    peers = []
    for r in runs:
        peers += [m for m in r["peers"] if m not in peers]
    print("== over the runs: mean (sd) of each hypervolume, ratio of the means, per-run "
          "ratios hml/peer: lowest..highest, runs hml was ahead, mean ratio [90% interval] ==")
    print("%-7s%-8s%3s %19s %19s %9s %15s %6s %24s" %
          ("budget", "peer", "n", "HV hml", "HV peer", "hml/peer", "per run", "ahead",
           "mean ratio [90%]"))
    for b in budgets:
        for m in peers:
            rs = [r for r in runs if m in r["pts"]]
            a = [hypervolume(r["pts"]["hml"][b], ref) for r in rs]
            p = [hypervolume(r["pts"][m][b], ref) for r in rs]
            ratios = [x / y for x, y in zip(a, p) if y > 0]
            n = len(rs)
            sd = (lambda v: statistics.stdev(v) if len(v) > 1 else math.nan)
            mr = statistics.mean(ratios) if ratios else math.nan
            half = t90(len(ratios)) * sd(ratios) / math.sqrt(len(ratios)) \
                if len(ratios) > 1 else math.nan
            print("%-7d%-8s%3d %11.4f (%5.3f) %11.4f (%5.3f) %9s %7.3f..%5.3f %3d/%-2d "
                  "%7.3f [%5.3f, %5.3f]" %
                  (b, m, n, statistics.mean(a), sd(a), statistics.mean(p), sd(p),
                   fmt_ratio(statistics.mean(a), statistics.mean(p)),
                   min(ratios, default=math.nan), max(ratios, default=math.nan),
                   sum(1 for x in ratios if x >= 1), n, mr, mr - half, mr + half))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    budgets = [int(b) for b in sys.argv[1].split(",")]
    runs = [load_run(d, budgets) for d in sys.argv[2:]]
    known = [r for r in runs if r["settings"] is not None]
    for r in known[1:]:
        if r["settings"] != known[0]["settings"]:
            sys.exit("search_report: %s was run with %s, %s with %s: not comparable"
                     % (known[0]["path"], known[0]["settings"], r["path"], r["settings"]))
    every = [p for r in runs for m in r["pts"] for b in budgets for p in r["pts"][m][b]]
    if not every:
        sys.exit("search_report: no method has a result")
    ref = (max(p[0] for p in every) + 0.1, max(p[1] for p in every) + 0.1)
    print("hypervolume of the (log10 val RMSE, log10 latency/sample) front, reference "
          "(%.3f, %.3f), common to the %d run(s); ratio = hml / peer (> 1: hml better)"
          % (ref[0], ref[1], len(runs)))
    for r in runs:
        print_run(r, budgets, ref)
    if len(runs) > 1:
        print_summary(runs, budgets, ref)


if __name__ == "__main__":
    main()
