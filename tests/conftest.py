import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.allocator import keep_freed_memory  # noqa: E402  (after the path set-up above)

keep_freed_memory()     # as the command line does: the spec suite's in-process runs without per-round page faults
if os.environ.get("PYTEST_XDIST_WORKER"):
    from engine.threads import one_blas_thread  # noqa: E402

    one_blas_thread()   # one xdist worker per core, as the engine's own workers: no BLAS threads on top


def _quick_cost(stem: str) -> float:
    """A spec's quick run's cost, a scheduling guess from its committed default run: the report's seconds times
    0.3 + 0.7 x (quick trials / default trials) -- a part of a run does not shrink with its trials (calibrations,
    accountants, the report) -- and 0 when there is no report yet. Only the order of the tests depends on it."""
    import json

    try:
        results = json.loads((ROOT / "reports" / f"{stem}.json").read_text(encoding="utf-8"))
        from engine import kinds

        spec = kinds.load(ROOT / "specs" / f"{stem}.yaml")
    except Exception:                                   # a report not yet generated: no estimate, run it later
        return 0.0
    default = getattr(spec, "trials", None)
    quick = getattr(getattr(spec, "quick", None), "trials", None)
    if hasattr(spec, "quick_trials"):
        quick = spec.quick_trials()
    scale = quick / default if quick and default else 1.0
    return float(results.get("seconds", 0.0)) * (0.3 + 0.7 * scale)


def pytest_collection_modifyitems(session, config, items):
    """The spec suite's quick runs first, the costliest first, then every other test in its order: with xdist's
    work stealing the long runs start at once instead of ending the session on one worker."""
    costs = {}
    for item in items:
        if getattr(item, "originalname", None) == "test_spec_quick_verdicts_match_expect" and hasattr(item, "callspec"):
            costs[item.nodeid] = _quick_cost(item.callspec.id)
    items.sort(key=lambda item: (item.nodeid not in costs, -costs.get(item.nodeid, 0.0)))


PROJECT = ("algorithms", "verifiers", "catalog", "engine", "benchmarks", "examples")


def _clear_project_caches() -> int:
    """cache_clear() on every memoised function of the project's loaded modules (functools.lru_cache / cache);
    how many were cleared."""
    n = 0
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in PROJECT:
            continue
        for obj in list(vars(module).values()):
            clear = getattr(obj, "cache_clear", None)
            if callable(clear) and getattr(obj, "__module__", None) == name:
                clear()
                n += 1
    return n


@pytest.fixture(autouse=True)
def _fresh_caches_around_planted_faults(request):
    """A test that patches the project (monkeypatch: a planted fault, a stand-in) starts and ends with every memoised
    accounting, calibration and problem forgotten: a value cached by an earlier test would hide its fault from the
    check under test, and a value cached under its fault would reach later tests. Tests that patch nothing share
    the caches (the spec suite's quick runs repeat each other's accountings). So: plant faults with monkeypatch
    (unittest.mock's patch would bypass this fixture)."""
    if "monkeypatch" not in request.fixturenames:
        yield
        return
    _clear_project_caches()
    yield
    _clear_project_caches()
