"""The learning kind: a spec (engine/kinds/learning/spec.py) whose algorithm is run on data, trial by trial, with its checks
(engine/kinds/learning/runner.py), and its report (``report.py``)."""
from __future__ import annotations

from engine.kinds.base import RunOptions, SpecKind
from engine.kinds.learning import runner
from engine.kinds.learning import spec as model
from engine.kinds.learning.report import report


def _run(spec: model.Spec, o: RunOptions) -> dict:
    return runner.run_spec(spec, trials=o.trials, seed=o.seed, quick=o.quick, progress=o.progress, store=o.store,
                           executor=o.executor, log=o.log)


def _headline(spec: model.Spec, results: dict) -> str:
    return f"{len(results['points'])} point(s) x {results['trials']} trials"


def _fits_memory(spec: model.Spec, file: str) -> None:
    runner.check_memory(spec, spec.trials, file)


def _work(spec: model.Spec, file: str) -> float:
    return runner.check_work(spec, spec.trials, file=file)


KIND = SpecKind(name="learning", summary="an algorithm run on data, trial by trial, against its theorems (no kind: key)",
                model=model.Spec, parse=model.parse, run=_run, markdown=report, headline=_headline, uses_store=True,
                fits_memory=_fits_memory, work=_work)
