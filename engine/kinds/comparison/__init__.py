"""The comparison kind (``kind: comparison``): one problem under several threat models, each run checked on its own,
and ordering checks between them."""
from __future__ import annotations

from engine.kinds.base import RunOptions, SpecKind
from engine.kinds.comparison import run
from engine.kinds.comparison.report import report
from engine.kinds.comparison.spec import ComparisonSpec, parse_comparison
from engine.kinds.learning import runner


def _run(spec: ComparisonSpec, o: RunOptions) -> dict:
    return run.run(spec, trials=o.trials, seed=o.seed, quick=o.quick, progress=o.progress, store=o.store,
                   executor=o.executor, log=o.log)


def _headline(spec: ComparisonSpec, results: dict) -> str:
    points = sum(len(sw["values"]) * len(sw["runs"]) for sw in results["sweeps"])
    return f"{len(spec.runs)} runs, {points} point(s) x {results['trials']} trials"


def _sub_results(results: dict) -> list[dict]:
    return [sub for sw in results["sweeps"] for sub in sw["runs"].values()]


def _fits_memory(spec: ComparisonSpec, file: str) -> None:
    for r in spec.runs:
        for sweep in spec.sweeps:
            learning = spec.learning_spec(r, sweep)
            runner.check_memory(learning, learning.trials, file)


def _work(spec: ComparisonSpec, file: str) -> float:
    return run.check_work(spec, file=file)


KIND = SpecKind(name="comparison", summary="one problem under several threat models, with ordering checks",
                model=ComparisonSpec, parse=parse_comparison, run=_run, markdown=report, headline=_headline,
                uses_store=True, extra_checks=lambda spec: spec.run_check_ids(), sub_results=_sub_results,
                fits_memory=_fits_memory, work=_work)
