"""Run a mechanism spec (engine/kinds/mechanism/spec.py): at every sweep point, the entry's ``run_point`` (its
``trials`` runs, from a SeedSequence the engine derives from the spec's seed and the point's value), then the
checks the spec names, from the entry's check registry."""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict
from typing import Any, Callable

import numpy as np

from engine.kinds.mechanism.spec import MechanismSpec
from engine.specbase import RESULTS_SCHEMA
from engine.stamp import jsonable, run_stamp, value_key, verdict_counts


def point_seed(seed: int, value: float | None) -> np.random.SeedSequence:
    """The root of every random stream of one sweep point (the entry spawns its streams from it)."""
    return np.random.SeedSequence([seed, 7], spawn_key=(value_key(value),))


def run_point(spec: MechanismSpec, value: float | None, trials: int) -> dict:
    extra = {"relation": spec.relation} if spec.entry.relations else {}
    return {"value": value} | spec.entry.run_point(spec.point(value), trials, point_seed(spec.seed, value), **extra)


def _indexed_point(unit: tuple[int, MechanismSpec, float | None, int]) -> tuple[int, dict]:
    """One sweep point as an executor's unit (module level, so worker processes can receive it)."""
    i, spec, value, trials = unit
    return i, run_point(spec, value, trials)


def run(spec: MechanismSpec, *, quick: bool = False,
        progress: Callable[..., Callable[[int], None]] | None = None, executor: Any = None) -> dict:
    """``executor`` (engine/executors.py, e.g. the command line's worker processes): the sweep points run on it, in
    parallel; each point's streams come from its own seed (``point_seed``), so the numbers are those of a run point
    by point (None: one after another, in this process)."""
    started = dt.datetime.now(dt.timezone.utc)
    entry = spec.entry
    trials = spec.quick_trials() if quick else spec.trials
    values = spec.values()
    tick = progress(len(values), 1, "mechanism points") if progress else (lambda k: None)
    done: dict[int, dict] = {}
    if executor is not None and len(values) > 1:
        for i, point in executor.run(_indexed_point, [(i, spec, v, trials) for i, v in enumerate(values)]):
            done[i] = point                                # in the order they finish
            tick(1)
    else:
        for i, v in enumerate(values):
            done[i] = run_point(spec, v, trials)
            tick(1)
    points = [done[i] for i in range(len(values))]
    # a mechanism's checks can be long (exact accountants, audits, an LP): a bar of their own
    ctick = progress(len(spec.checks), 1, "checks") if progress else (lambda k: None)
    checks = []
    for c in spec.checks:
        checks.append(jsonable(asdict(entry.checks.get(c.kind)(c, spec.mechanism, points))))
        ctick(1)
    counts = verdict_counts(checks)
    return {"schema": RESULTS_SCHEMA, "kind": "mechanism", "name": spec.name, "description": spec.description,
            "spec": spec.model_dump(mode="json"), "mechanism": spec.mechanism, "citation": entry.citation,
            "sweep": None if spec.sweep is None else {"field": spec.sweep.field},
            "neighbouring": None if spec.relation is None else spec.relation.as_dict() | {"text": spec.relation.text},
            **({"data": entry.data} if entry.data else {}),
            "points": jsonable(points),
            "checks": checks, "verdict_counts": counts, "seed": spec.seed, "trials": trials, "quick": quick,
            "started": started.isoformat(timespec="seconds"),
            "seconds": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(), "reused_trials": 0,
            **run_stamp()}
