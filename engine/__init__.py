"""privbench engine: load specs, resolve calibrations, run seeded trials, store results, render reports."""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "load_results"]


def load_results(path):
    """The results JSON written by ``python -m engine run`` as a pandas DataFrame (see engine/results.py)."""
    from engine.results import load_results as _load

    return _load(path)
