#!/usr/bin/python3
"""bench/search_report.py - sample efficiency table of bench/search.sh.

Reads the search `hml --json show SEARCH_ID` printed (its results: every
result with its rung, configuration and the order it ended) and the peers'
trials (bench/search_peers.py), and prints, at each budget B, the
hypervolume of the (validation RMSE, latency per sample) front each method
had found after B configurations, and hml's ratio to each peer.

Hypervolume: in decades (log10 of both objectives, as hml show reports
it), against one reference point common to every method and budget: one
tenth of a decade beyond the largest log10 error and latency of any result
counted.

What counts: for hml, the results of the top rung (full fidelity: the
front it hands to hml deploy), in the order trials ended, up to the end of
the last trial of the B-th configuration to end -- a configuration
promoted later is not credited to the earlier budget; for a peer, its
first B trials (all at full fidelity). Failed trials count against the
budget and add nothing.

A last line compares at equal wall time instead: hml's front after its
whole run against each peer's trials that had ended by then (the peers
record when each trial ended, bench/search_peers.py).

usage: search_report.py SHOW_JSON PEERS_JSON BUDGETS HML_WALL_SECONDS
"""
import json
import math
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


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    results = json.load(open(sys.argv[1]))["results"]
    peers = json.load(open(sys.argv[2]))
    budgets = [int(b) for b in sys.argv[3].split(",")]
    hml_wall = float(sys.argv[4])
    pts = {"hml": {b: hml_prefix(results, b) for b in budgets}}
    for m, d in peers.items():
        pts[m] = {b: [log_point(t) for t in d["trials"][:b] if t] for b in budgets}
    every = [p for m in pts for b in budgets for p in pts[m][b]]
    if not every:
        sys.exit("search_report: no method has a result")
    ref = (max(p[0] for p in every) + 0.1, max(p[1] for p in every) + 0.1)
    methods = list(pts)
    print("hypervolume of the (log10 val RMSE, log10 latency/sample) front, reference "
          "(%.3f, %.3f); ratio = hml / peer (> 1: hml better)" % ref)
    head = "%-7s" % "budget" + "".join("%11s" % ("HV " + m) for m in methods) + \
        "".join("%14s" % ("hml/" + m) for m in methods[1:]) + \
        "".join("%13s" % ("best " + m) for m in methods)
    print(head)
    for b in budgets:
        hv = {m: hypervolume(pts[m][b], ref) for m in methods}
        row = "%-7d" % b + "".join("%11.4f" % hv[m] for m in methods)
        row += "".join("%14s" % ("%.3f" % (hv["hml"] / hv[m]) if hv[m] > 0 else "inf")
                       for m in methods[1:])
        row += "".join("%13.4g" % (10 ** min(p[0] for p in pts[m][b]) if pts[m][b] else math.nan)
                       for m in methods)
        print(row)
    print("wall time of the %d-configuration run: hml %.1f s" % (max(budgets), hml_wall) +
          "".join(", %s %.1f s" % (m, peers[m]["wall_seconds"]) for m in peers))
    # The same wall time for every method: each peer's trials that had ended
    # by the time hml's whole run had (hml's largest budget).
    hv_hml = hypervolume(pts["hml"][max(budgets)], ref)
    row = []
    for m, d in peers.items():
        done = [t for t in d["trials"] if t and t.get("ended_seconds", math.inf) <= hml_wall]
        hv = hypervolume([log_point(t) for t in done], ref)
        row.append("%s %d trials, HV %.4f, hml/%s %s" % (m, len(done), hv, m,
                   "%.3f" % (hv_hml / hv) if hv > 0 else "inf"))
    print("at hml's wall time (%.1f s, HV %.4f): " % (hml_wall, hv_hml) + "; ".join(row))
    print("top-rung (full-fidelity) results: hml %d" %
          sum(1 for t in results["trials"] if t["top"]) +
          "".join(", %s %d" % (m, sum(1 for t in peers[m]["trials"] if t)) for m in peers))


if __name__ == "__main__":
    main()
