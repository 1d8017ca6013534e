#!/usr/bin/python3
"""bench/search_peers.py - the peers of `hml search` in bench/search.sh.

Drives the same objective as hml search -- one `hml train` command line per
trial, validation RMSE and the inference latency per sample of the
deployment form TARGET (c or torchscript, the search's --target) as the
model card records it (hml train measures every target) -- with Optuna's samplers (python3-optuna): RandomSampler
(random search), TPESampler and NSGAIISampler, over the region's search
space as the workflow states it (model.search_space of workflow.json), and
prints one JSON document: per method, its trials in the order they were
asked (each with the seconds from the method's start to its end), and its
wall time.

Each point maps onto `hml train` through hml itself: `hml search
--train-args POINT` prints the arguments a trial of hml search trains the
point with at full fidelity (lib/search/trialmap.h), so the peers train exactly
what hml's workers would; a point hml cannot map fails its trial.

usage: search_peers.py HML EXPERIMENT WORKFLOW_JSON REGION BUDGET EPOCHS
                       METHODS THREADS JOBS SEED TARGET
  METHODS: comma-separated of random, tpe, nsga2
"""
import json
import os
import shutil
import subprocess
import sys
import time

import optuna

def space_of(workflow, region):
    wf = json.load(open(workflow))
    for r in wf["regions"]:
        if r["label"] == region:
            return r["model"]["search_space"]
    sys.exit("search_peers: no region %r in %s" % (region, workflow))


def suggest(trial, space):
    p = {}
    for name, d in space.items():
        if d["type"] == "int":
            p[name] = trial.suggest_int(name, d["low"], d["high"], log=d.get("log", False))
        elif d["type"] == "float":
            p[name] = trial.suggest_float(name, d["low"], d["high"], log=d.get("log", False))
        elif d["type"] == "choice":
            p[name] = trial.suggest_categorical(name, d["values"])
        else:
            sys.exit("search_peers: parameter %r has type %r" % (name, d["type"]))
    return p


def command(hml, exp, region, p, epochs, threads):
    """The hml train command line of point p, or None when hml refuses it."""
    out = subprocess.run([hml, "-q", "-C", exp, "--json", "search", "--region", region,
                          "--max-epochs", str(epochs), "--train-args", json.dumps(p)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print("search_peers: " + out.stderr.strip(), file=sys.stderr)
        return None
    args = json.loads(out.stdout)["train_args"]
    return [hml, "-q", "-C", exp, "--json"] + args + ["--threads", str(threads)]


def run_method(method, args, space):
    hml, exp0, region, budget, epochs, threads, jobs, seed, target = args
    exp = exp0 + "-" + method
    shutil.rmtree(exp, ignore_errors=True)
    shutil.copytree(exp0, exp)
    if method == "random":
        sampler = optuna.samplers.RandomSampler(seed=seed)
    elif method == "tpe":
        sampler = optuna.samplers.TPESampler(seed=seed)
    elif method == "nsga2":
        # Optuna's default population (50) would make a small budget pure
        # random search; a quarter of the budget gives it generations.
        sampler = optuna.samplers.NSGAIISampler(seed=seed,
                                                population_size=max(4, min(50, budget // 4)))
    else:
        sys.exit("search_peers: unknown method %r" % method)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    results = {}

    def objective(trial):
        p = suggest(trial, space)
        argv = command(hml, exp, region, p, epochs, threads)
        out = subprocess.run(argv, capture_output=True, text=True) if argv else None
        if out is None or out.returncode != 0:
            results[trial.number] = None
            raise optuna.TrialPruned()   # failed: no objective values (like hml's failed trials)
        model = json.loads(out.stdout)["model"]
        lat = (model.get("latency") or {}).get(target)
        if lat is None:   # not measured in that form: failed, as in hml search
            print("search_peers: trial %d: no %s latency in the card" % (trial.number, target),
                  file=sys.stderr)
            results[trial.number] = None
            raise optuna.TrialPruned()
        results[trial.number] = (model["metrics"]["val_rmse"], lat, time.monotonic() - t0)
        return results[trial.number][:2]

    t0 = time.monotonic()
    study.optimize(objective, n_trials=budget, n_jobs=jobs)
    wall = time.monotonic() - t0
    shutil.rmtree(exp, ignore_errors=True)
    trials = [results.get(i) for i in range(budget)]
    return {"wall_seconds": wall,
            "trials": [None if t is None else {"val_rmse": t[0], "latency_seconds_per_sample": t[1],
                                               "ended_seconds": t[2]}
                       for t in trials]}


def main():
    if len(sys.argv) != 12:
        sys.exit(__doc__)
    hml, exp0, workflow, region = sys.argv[1:5]
    budget, epochs = int(sys.argv[5]), int(sys.argv[6])
    methods = sys.argv[7].split(",")
    threads, jobs, seed = int(sys.argv[8]), int(sys.argv[9]), int(sys.argv[10])
    target = sys.argv[11]
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = space_of(workflow, region)
    out = {}
    for m in methods:
        out[m] = run_method(m, (hml, exp0, region, budget, epochs, threads, jobs, seed, target),
                            space)
        print("search_peers: %s: %d trials in %.1f s" % (m, budget, out[m]["wall_seconds"]),
              file=sys.stderr)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
