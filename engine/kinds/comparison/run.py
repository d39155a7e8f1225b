"""Run a comparison spec (engine/kinds/comparison/spec.py): every run over every sweep as an ordinary learning spec (the
store makes an interrupted comparison resume where it stopped), then the ordering checks between runs."""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict
from typing import Any, Callable

import numpy as np

from catalog import ALGORITHMS
from engine.kinds.comparison.spec import SWEEP_TAGS, ComparisonSpec
from engine.kinds.learning import runner
from engine.kinds.learning.spec import SWEEPABLE
from engine.specbase import RESULTS_SCHEMA
from engine.stamp import jsonable, run_stamp, verdict_counts
from verifiers.checks import ordering
from verifiers.theorems import THEOREMS


def _side(point: dict) -> ordering.Side:
    risks = np.asarray(point["measurements"]["excess_risk"], dtype=float)
    mc = point.get("systematic", {}).get("excess_risk", {}).get("mc_se", 0.0)
    return ordering.Side(params=point["params"], risks=risks, mc_se=float(mc))


def check_work(spec: ComparisonSpec, *, quick: bool = False, trials: int | None = None, seed: int | None = None,
               workers: int | None = None, file: str = "spec") -> float:
    """All runs' work together, before the first: refused in one line above the time limit (each run checks its own
    again, counting the trials the store already holds). Returns the estimate in seconds."""
    coords = seconds = 0.0
    for sweep in spec.sweeps_for(quick):
        for r in spec.runs:
            learning = spec.learning_spec(r, sweep)
            c, s, _ = runner.work_estimate(learning, runner.effective_trials(learning, trials, quick),
                                           spec.seed if seed is None else seed, workers)
            coords, seconds = coords + c, seconds + s
    runner.refuse_work(file, coords, seconds, f" over its {len(spec.runs)} runs")
    return seconds


def run(spec: ComparisonSpec, *, quick: bool = False, trials: int | None = None, seed: int | None = None,
        progress: Callable[..., Callable[[int], None]] | None = None, store=None, executor=None,
        log: Callable[[str], None] | None = None) -> dict:
    check_work(spec, quick=quick, trials=trials, seed=seed, workers=runner.workers_of(executor))
    started = dt.datetime.now(dt.timezone.utc)
    sweeps: list[dict[str, Any]] = []
    checks: list[dict] = []
    for sweep in spec.sweeps_for(quick):
        tag = SWEEP_TAGS[sweep.field]
        subs = {}
        for r in spec.runs:
            if log:
                log(f"{spec.name}: run {r.id} ({r.threat_model}, {r.algorithm.kind}) over {sweep.field}")
            sub = runner.run_spec(spec.learning_spec(r, sweep), trials=trials, seed=seed, quick=quick,
                                  progress=progress, store=store, executor=executor)
            subs[r.id] = sub
            for c in sub["checks"]:
                checks.append(dict(c, id=f"{r.id}_{c['id']}_{tag}", run=r.id, sweep=sweep.field))
        sweeps.append({"field": sweep.field, "symbol": SWEEPABLE[sweep.field], "values": list(sweep.values),
                       "runs": subs})
    ordered = []
    for c in spec.checks:
        pts = []
        for sw in sweeps:
            b_pts, w_pts = sw["runs"][c.better]["points"], sw["runs"][c.worse]["points"]
            for value, pb, pw in zip(sw["values"], b_pts, w_pts):
                pts.append((f"{sw['symbol']} = {value:g}", _side(pb), _side(pw)))
        res = ordering.ordering(check_id=c.id, better=c.better, worse=c.worse,
                                better_thm=THEOREMS.get(spec.run(c.better).rate_theorem),
                                worse_thm=THEOREMS.get(spec.run(c.worse).rate_theorem), points=pts, margin=c.margin,
                                confidence=c.confidence, variable=" and ".join(SWEEP_TAGS[s.field] for s in spec.sweeps))
        ordered.append(jsonable(asdict(res) | {"better": c.better, "worse": c.worse}))
    checks = ordered + checks
    counts = verdict_counts(checks)
    runs = [{"id": r.id, "threat_model": r.threat_model, "algorithm": r.algorithm.kind, "silos": r.silos,
             "description": ALGORITHMS.get(r.algorithm.kind).description,
             "citation": ALGORITHMS.get(r.algorithm.kind).citation, "rate_theorem": r.rate_theorem,
             "rate_citation": THEOREMS.get(r.rate_theorem).citation} for r in spec.runs]
    return {
        "schema": RESULTS_SCHEMA, "kind": "comparison", "name": spec.name, "description": spec.description, "notes": spec.notes,
        "spec": spec.model_dump(mode="json"), "seed": spec.seed if seed is None else seed, "quick": quick,
        "trials": sweeps[0]["runs"][spec.runs[0].id]["trials"], "runs": runs, "sweeps": sweeps, "checks": checks,
        "verdict_counts": counts, "started": started.isoformat(timespec="seconds"),
        "seconds": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(), **run_stamp(),
    }
