"""Run a privacy-curve spec (engine/kinds/curve/spec.py): each sweep point's epsilon from seed 001's upper (Thm 1)
and lower (Thm 2) bounds with Lemma 1, the checks, and the paper's stated values next to ours."""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import asdict
from typing import Callable

from engine.kinds.curve.spec import CurveSpec
from engine.specbase import RESULTS_SCHEMA
from engine.stamp import jsonable, run_stamp, verdict_counts
from verifiers.accountants import shuffle_baselines, subsampled_shuffle
from verifiers.checks.curves import CURVE_CHECKS

CITATION = f"{subsampled_shuffle.SEED}, Thm 1 (L143-147), Thm 2 (L149-153), Lemma 1 (L80-82)"


def run(spec: CurveSpec, *, progress: Callable[..., Callable[[int], None]] | None = None) -> dict:
    started = dt.datetime.now(dt.timezone.utc)
    tick = progress(len(spec.sweep.values), 1, "curve points") if progress else (lambda k: None)
    points = []
    for v in spec.sweep.values:
        p = spec.point(v)
        t0 = time.perf_counter()
        point: dict = {"value": v, "params": p}
        for bound in ("upper", "lower"):
            r = subsampled_shuffle.epsilon(bound, k=p["k"], n=p["n"], eps0=p["eps_ldp"], T=p["T"], delta=p["delta"])
            point[bound] = {"epsilon": r.epsilon, "order": r.order, "grid_top": r.grid_top}
        point["baselines"] = {}
        for b in spec.baselines:
            val = shuffle_baselines.baseline(b.name, k=p["k"], n=p["n"], eps0=p["eps_ldp"], T=p["T"], delta=p["delta"],
                                             convention=b.convention)
            point["baselines"][b.label] = {"epsilon": val.epsilon, "order": val.order}
        point["seconds"] = time.perf_counter() - t0
        points.append(point)
        tick(1)
    checks = [jsonable(asdict(CURVE_CHECKS.get(c.kind)(c, points, CITATION))) for c in spec.checks]
    paper = []
    for pv in spec.paper:
        row = {"at": pv.at, "paper_epsilon": pv.epsilon, "what": pv.what, "ours_thm1": None, "ratio": None,
               "rounds_for_it": rounds_to_reach(spec, pv.epsilon) if spec.sweep.field == "T" else None}
        if pv.at is not None:
            p = spec.point(pv.at)
            ours = subsampled_shuffle.epsilon("upper", k=p["k"], n=p["n"], eps0=p["eps_ldp"], T=p["T"], delta=p["delta"])
            row.update(ours_thm1=ours.epsilon, ratio=ours.epsilon / pv.epsilon)
        paper.append(row)
    counts = verdict_counts(checks)
    return {"schema": RESULTS_SCHEMA, "kind": "privacy_curve", "name": spec.name, "description": spec.description,
            "spec": spec.model_dump(mode="json"), "mechanism": spec.mechanism, "citation": CITATION,
            "sweep": {"field": spec.sweep.field}, "points": points,
            "baselines": {b.label: shuffle_baselines.BASELINES[b.name] + f" ({b.convention})" for b in spec.baselines}, "checks": checks, "paper": paper,
            "verdict_counts": counts, "started": started.isoformat(timespec="seconds"),
            "seconds": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(), "trials": 1, "quick": False,
            "reused_trials": 0, **run_stamp()}


def rounds_to_reach(spec: CurveSpec, eps: float, top: int = 10**7) -> int | None:
    """The largest T at which Thm 1 (with Lemma 1) still certifies eps, by bisection (epsilon grows with T)."""
    def eps_at(T: int) -> float:
        p = spec.point(T)
        return subsampled_shuffle.epsilon("upper", k=p["k"], n=p["n"], eps0=p["eps_ldp"], T=T, delta=p["delta"]).epsilon
    if eps_at(1) > eps:
        return None
    lo, hi = 1, 2
    while hi < top and eps_at(hi) <= eps:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if eps_at(mid) <= eps else (lo, mid)
    return lo
