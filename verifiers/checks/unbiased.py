"""``unbiased``: the randomizer as run, along its input, by a martingale z-test."""
from __future__ import annotations

import math
from typing import Any, Mapping

from verifiers import stats
from verifiers.checks.base import (
    CheckKind,
    CheckResult,
    CheckSpec,
    Context,
    Facts,
    Misfit,
    Point,
    Rule,
    at,
    measurable_theorem,
    result,
)
from verifiers.theorems.base import Theorem

BIAS_POWER = 0.05             # the unbiasedness test must see a bias of 5% of the input ball's radius, else inconclusive


def unbiased(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    """The randomizer as run, along its input: u = <R(x) - x, x/||x||> (the projection only: a bias orthogonal to x
    is left to ldp_exact's exact mean) has mean 0 given x for every message when R is unbiased, so
    the sum of u over all messages of all trials is a martingale; z = sum u / sqrt(sum u^2) is then standard
    normal (martingale CLT). Two-sided test at the check's level (Bonferroni over the points); inconclusive
    unless it would see a bias of BIAS_POWER x C (the input ball's radius)."""
    alpha = (1 - check.level) / len(points)
    zq = stats.z_quantile(1 - alpha / 2)
    rows: list[dict[str, Any]] = []
    verdict = "pass"
    for p in points:
        mean_t, sq_t = p.measurements[thm.measures], p.measurements[thm.measures + "_sq"]
        messages = p.params["T"] * p.params["k"]                       # per trial
        total, total_sq = float(mean_t.sum() * messages), float(sq_t.sum() * messages)
        count = messages * mean_t.size
        mean, se = total / count, math.sqrt(total_sq) / count
        C = p.params["C"]
        if se == 0:                                    # every message's input was 0: nothing to test
            verdict = "inconclusive" if verdict == "pass" else verdict
        elif abs(mean) > zq * se:
            verdict = "fail"
        elif zq * se > BIAS_POWER * C and verdict == "pass":
            verdict = "inconclusive"
        rows.append({"point": p.value, "mean": mean, "lcl": mean - zq * se, "ucl": mean + zq * se,
                     "z": mean / se if se > 0 else 0.0, "half_width_over_C": zq * se / C, "messages": int(count)})
    worst = max(rows, key=lambda r: abs(r["z"]))
    summary = (f"{thm.measures}: mean of <R(x) - x, x/||x||> (the bias along the input) over every message sent; "
               f"martingale z-test, two-sided "
               f"at {1 - alpha:.4f} (Bonferroni over {len(points)} point(s)): the interval must contain 0 and be "
               f"narrower than {BIAS_POWER:g} C; worst point: {worst['mean']:.3g} (z = {worst['z']:.2f}, "
               f"CI {worst['lcl']:.3g} .. {worst['ucl']:.3g})")
    return result(check, thm, verdict, summary, measured=worst["mean"], bound=0.0, rows=tuple(rows))
KIND = "unbiased"


def _fits(facts: Facts) -> None:
    if facts.threat_model != "shuffle":
        raise Misfit("kind", f"{KIND} checks a mechanism of the shuffle threat model (the Gaussian noise of a silo, "
                             f"curator or user, or a client's local randomizer); this spec's is {facts.threat_model}")


def _rules(check: Any, thm: Theorem, facts: Facts) -> None:
    if thm.measures != "ldp_bias":
        raise Misfit("theorem", f"{thm.name} is about {thm.measures}; unbiased tests the randomizer's messages (a "
                                f"theorem measuring ldp_bias, e.g. shuffle.alg1.randomizer)")
    measurable_theorem(check, thm, facts)


def describe(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule | None:
    """The rule above, from a stored result's rows."""
    rows = r["rows"]
    if r["verdict"] == "inapplicable" or not rows:
        return None
    w = max(rows, key=lambda x: abs(x["z"]))
    side = ("fail" if any(x["lcl"] > 0 or x["ucl"] < 0 for x in rows) else
            "undecided" if any(x["half_width_over_C"] > BIAS_POWER or x["messages"] == 0 for x in rows) else "pass")
    return Rule(f"a two-sided martingale z-test of the mean bias along the input, Bonferroni over {len(rows)} "
                f"point(s): fail iff the interval excludes 0; pass iff it contains 0 and is narrower than "
                f"{BIAS_POWER:g} C", f"worst |z| = {abs(w['z']):.2f}; interval half-width {w['half_width_over_C']:.2g} "
                f"C{at(w['point'])}", side)


CHECK = CheckKind(KIND, unbiased, fits=_fits, rules=_rules, confidence=0.999, describe=describe)
