#!/usr/bin/python3
"""The coordinator's cost per trial of one `hml search`, from its record.

usage: bench/coordinator_cost.py SHOW_JSON   (the output of `hml --json show sN`)

Prints, per trial, the coordinator's time outside its waits
(coordinator_busy_seconds: reading results, the history, the scheduler,
starting trials), the optimiser's part of it (coordinator_suggest_seconds)
and the rest -- in wall time and in the coordinating thread's CPU time
(coordinator_*_cpu_seconds). bench/coordinator.sh, bench/search.sh --full and
bench/search-target.sh print it this way.
"""
import json
import sys


def report(search, indent="  "):
    """Print the per-trial figures of a search record (`show --json`'s "search")."""
    n = max(search["counts"]["trials"], 1)
    for clock, busy, sug, goal in (
            ("wall time:", "coordinator_busy_seconds", "coordinator_suggest_seconds",
             " (goal <= 1 ms)"),
            ("CPU time: ", "coordinator_busy_cpu_seconds", "coordinator_suggest_cpu_seconds", "")):
        b, s = search[busy], search[sug]
        print("%scoordinator per trial, %s %.3f ms outside its waits, of which %.3f ms in the "
              "optimiser; %.3f ms the rest%s"
              % (indent, clock, 1e3 * b / n, 1e3 * s / n, 1e3 * (b - s) / n, goal))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench/coordinator_cost.py SHOW_JSON")
    report(json.load(open(sys.argv[1]))["search"])
