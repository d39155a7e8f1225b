"""privbench engine: load specs, resolve calibrations, run seeded trials, store results, render reports."""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["RunResult", "__version__", "load_results", "run"]


def load_results(path):
    """The results JSON written by ``python -m engine run`` as a pandas DataFrame (see engine/results.py)."""
    from engine.results import load_results as _load

    return _load(path)


class RunResult:
    """What ``engine.run`` returns: ``results`` (the dict ``python -m engine run`` writes as JSON), ``checks`` (one
    row per check: verdict, measured, bound, confidence, claims; engine/exports.py) and ``trials`` (a learning run's
    per-trial measurements, else None)."""

    def __init__(self, results: dict):
        from engine import exports

        self.results = results
        self.checks = exports.checks_frame(results)
        self.trials = exports.trials_frame(results)

    @property
    def verdicts(self) -> dict[str, str]:
        return {c["id"]: c["verdict"] for c in self.results["checks"]}

    def __repr__(self) -> str:
        return f"RunResult({self.results['name']!r}, {self.verdicts})"


def run(spec, *, trials: int | None = None, seed: int | None = None, quick: bool = False, store: str | None = None,
        workers: int | None = None) -> RunResult:
    """Run a spec (a path to its YAML file, or a parsed spec) in this process or ``workers`` local processes and
    return its results; nothing is written unless ``store`` names a result store (finished trials kept and reused).
    Invalid specs raise ``engine.specbase.SpecError`` (its message names the file and the field)."""
    from pathlib import Path

    from engine import executors, kinds
    from engine.store import Store

    parsed = kinds.load(spec) if isinstance(spec, (str, Path)) else spec
    kind = kinds.kind_for(parsed)
    pool = executors.make("processes" if workers and workers > 1 else "sequential", workers=workers)
    db = Store(store) if store else None
    try:
        results = kind.run(parsed, kinds.RunOptions(trials=trials, seed=seed, quick=quick, store=db, executor=pool))
    finally:
        pool.close()
        if db is not None:
            db.close()
    return RunResult(results)
