"""bench/field_arms.py - the figures of bench/field_arms.sh's arms
(bench/residual.sh, bench/rollout.sh) and their table."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import apps_goals  # noqa: E402


def arm(tmp, app, n):
    """The card, the evaluation, the final state's relative L2 error and
    miniWeather's mass drift (None for heat) of arm n of app."""
    tr = json.load(open(os.path.join(tmp, "%s-%s-train.json" % (app, n))))["model"]
    ev = json.load(open(os.path.join(tmp, "%s-%s-eval.json" % (app, n))))["evaluation"]
    exp = os.path.join(tmp, app)
    rel = apps_goals._rel_l2(exp, ev, "state" if app == "miniweather" else "field")
    drift = apps_goals._mass_drift(exp, ev) if app == "miniweather" else None
    return tr, ev, rel, drift


def table(hdr, rows):
    w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(len(hdr))]
    for r in [hdr] + rows:
        print("  ".join(str(v).ljust(w[i]) for i, v in enumerate(r)).rstrip())
