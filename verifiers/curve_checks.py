"""Checks on privacy curves (engine/curves.py): data in, verdicts out."""
from __future__ import annotations

from typing import Callable

from algorithms.registry import Registry
from verifiers.checks import CheckResult

REL_SLACK = 1e-9


def bounds_ordered(check_id: str, points: list[dict], citation: str) -> CheckResult:
    """A lower bound on the mechanism's epsilon above an upper bound on it means one of the two (or their
    evaluation) is wrong: fail. Exact arithmetic: no confidence level is involved."""
    rows = tuple({"point": p["value"], "epsilon_lower_bound": p["lower"]["epsilon"],
                  "epsilon_upper_bound": p["upper"]["epsilon"],
                  "ratio": p["upper"]["epsilon"] / p["lower"]["epsilon"] if p["lower"]["epsilon"] > 0 else None}
                 for p in points)
    bad = [r["point"] for r in rows if r["epsilon_lower_bound"] > r["epsilon_upper_bound"] * (1 + REL_SLACK)]
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    summary = ("Thm 2's epsilon <= Thm 1's epsilon at every point"
               + (f"; upper/lower ratio {min(ratios):.3g} .. {max(ratios):.3g}" if ratios else "")
               if not bad else f"Thm 2's epsilon exceeds Thm 1's at {bad}")
    worst = max(rows, key=lambda r: r["epsilon_lower_bound"] / r["epsilon_upper_bound"])
    return CheckResult(id=check_id, kind="bounds_ordered", theorem="shuffle.thm1_thm2", citation=citation,
                       verdict="fail" if bad else "pass", measured=worst["epsilon_lower_bound"],
                       bound=worst["epsilon_upper_bound"], confidence=1.0, summary=summary, rows=rows)


CurveCheckFn = Callable[[str, list[dict], str], CheckResult]
CURVE_CHECKS: Registry[CurveCheckFn] = Registry("curve check kind")
CURVE_CHECKS.add("bounds_ordered", bounds_ordered)
