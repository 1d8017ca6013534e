"""bench/apps_goals.py - the goals of issue 30 per application and the
verdict on one bench/apps.sh run, computed from its measured figures (the
thresholds are the constants below; nothing here knows a result).

verdict(app, exp, ev, evc, refusal) -> (goal text, "met" | "not met" | "?",
the figures it was judged on, with the end-to-end ceiling of hml evaluate:
the speedup of a model that cost nothing, which says when a speed goal is
out of any model's reach at this size). exp: the experiment directory; ev, evc:
the `hml evaluate --json` "evaluation" of the TorchScript and the C
deployment (evc may be None); a form meets a speed goal with its own
error, and the form shown is the one that meets it (else the faster).
refusal: the text of hml deploy's refusal of the TorchScript form, or
None. Errors from the evaluations' QoI files: relative L2 of the final
field or state, miniWeather's mass drift in the surrogate run (largest
|m(t) - m(0)| / |m(0)| over its calls), the particle filter's final-position
RMSE against the ground truth beside the filter's own.
"""
import math
import os

import h5py
import numpy as np

# app: (minimum end-to-end speedup, error kind, maximum error); see GOAL_TEXT
GOALS = {
    "binomial": (100.0, "rmse", 0.01),
    "minibude": (20.0, "mape", 5.0),
    "particlefilter": (2.0, "filter", None),
    "miniweather": (5.0, "rel_l2+mass", (0.01, 1e-6)),
    "heat": (10.0, "rel_l2", 0.01),
    "bonds": (1.5, "rmse", 0.01),
    "heat-rows": (None, "refused", None),
}
GOAL_TEXT = {
    "binomial": ">=100x at QoI rmse <=0.01",
    "minibude": ">=20x at MAPE <=5%",
    "particlefilter": ">=2x at final rmse <= filter's",
    "miniweather": ">=5x at rel L2 <=1%, mass drift <=1e-6",
    "heat": ">=10x at rel L2 <=1%",
    "bonds": ">=1.5x at rmse <=0.01",
    "heat-rows": "refused with predicted slowdown",
}


def qoi_bound(app):
    """The goal's error bound where it is in the workflow's own QoI metric
    (rmse, or mape in per cent), the E of hml deploy --max-qoi-error E; else
    None (a relative L2 or the filter's own error: no deploy option says it)."""
    goal = GOALS.get(app)
    return goal[2] if goal and goal[1] in ("rmse", "mape") else None


def _qoi(exp, ev, name):
    """The accurate and the surrogate run's dataset `name` (last repeat)."""
    f = [h5py.File(os.path.join(exp, ev["files"][k]), "r") for k in ("qoi_accurate", "qoi_surrogate")]
    return f[0][name][:].astype(np.float64), f[1][name][:].astype(np.float64)


def _rel_l2(exp, ev, name):
    a, s = _qoi(exp, ev, name)
    n = np.linalg.norm(a)
    return float(np.linalg.norm(s - a) / n) if n > 0 else math.inf


def _mass_drift(exp, ev):
    """The surrogate run's largest relative change of total mass."""
    _, m = _qoi(exp, ev, "mass")
    return float(np.max(np.abs(m - m[0])) / abs(m[0])) if m[0] != 0 else math.inf


def _error(kind, exp, ev):
    """The figures of `kind` for one form's evaluation, as a dict."""
    q = ev["qoi"]
    if kind in ("rmse", "mape"):
        return {kind: q.get(kind, math.nan)}
    if kind == "rel_l2":
        return {"rel_l2": _rel_l2(exp, ev, "field")}
    if kind == "rel_l2+mass":
        return {"rel_l2": _rel_l2(exp, ev, "state"), "mass_drift": _mass_drift(exp, ev)}
    if kind == "filter":
        f = [h5py.File(os.path.join(exp, ev["files"][k]), "r")
             for k in ("qoi_accurate", "qoi_surrogate")]
        t = f[0]["truth"][:]
        r = [float(np.sqrt(np.mean(np.sum((g["final_position"][:] - t) ** 2, axis=1)))) for g in f]
        return {"rmse": r[1], "filter_rmse": r[0]}
    return {}


def _error_met(kind, limit, e):
    if kind in ("rmse", "mape"):
        return e.get(kind, math.nan) <= limit
    if kind == "rel_l2":
        return e.get("rel_l2", math.inf) <= limit
    if kind == "rel_l2+mass":
        return e.get("rel_l2", math.inf) <= limit[0] and e.get("mass_drift", math.inf) <= limit[1]
    if kind == "filter":
        return "rmse" in e and e["rmse"] <= e["filter_rmse"]
    return False


def verdict(app, exp, ev, evc, refusal):
    if app not in GOALS:
        return "-", "?", ""
    speed, kind, limit = GOALS[app]
    if kind == "refused":
        ok = refusal is not None and "predicted 0." in refusal
        return GOAL_TEXT[app], "met" if ok else "not met", \
            (refusal.split("predicted ")[-1].split()[0].rstrip(")") if ok else "deployed")
    best = None
    for form, e in (("ts", ev), ("c", evc)):
        if e is None:
            continue
        try:
            err = _error(kind, exp, e)
        except (KeyError, OSError, ValueError):
            err = {}
        x = e["speedup"]["end_to_end"]["median"]  # a loaded run moves a mean
        met = x >= speed and bool(err) and _error_met(kind, limit, err)
        # hml evaluate's Amdahl bound on these runs (None from an older hml)
        ceiling = (e["speedup"].get("ceiling") or {}).get("median")
        cand = (met, x, form, err, ceiling)
        # prefer the form that meets the goal, then the faster
        if best is None or cand[:2] > best[:2]:
            best = cand
    if best is None:
        return GOAL_TEXT[app], "?", ""
    met, x, form, err, ceiling = best
    figs = "%s %.3gx" % (form, x)
    if ceiling is not None:
        # a goal above it is out of any model's reach at this size
        figs += " (ceiling %.3gx%s)" % (ceiling, ", goal out of reach" if ceiling < speed else "")
    figs += "".join(" %s %.3g" % kv for kv in err.items())
    return GOAL_TEXT[app], "met" if met else "not met", figs
