"""``bound``: the one-sided upper confidence limit of the measured mean against an explicit-constant bound."""
from __future__ import annotations

import math
from typing import Any, Mapping

from verifiers import stats
from verifiers.checks.base import (
    RISK_MEASURES,
    CheckKind,
    CheckResult,
    CheckSpec,
    Context,
    Facts,
    Misfit,
    Point,
    Rule,
    at,
    compare,
    measurable_theorem,
    result,
)
from verifiers.theorems.base import Theorem


def bound(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    failed = {c for p in points for c in thm.failed_conditions(p.params)}
    if thm.kind != "explicit":
        return result(check, thm, "inapplicable", f"{thm.name} hides its constants (O~): only a rate check can test it")
    if failed:
        return result(check, thm, "inapplicable", "theorem conditions fail: " + "; ".join(sorted(failed)))
    bounds = [thm.evaluate(p.params) for p in points]
    vacuous = [thm.measures in RISK_MEASURES and b >= p.params.get("risk_max", math.inf) for p, b in zip(points, bounds)]
    n_inf = vacuous.count(False)
    conf = 1 - (1 - check.level) / max(n_inf, 1)     # Bonferroni over the informative sweep points
    rows: list[dict[str, Any]] = []
    verdict, need = "pass", None
    for p, b, vac in zip(points, bounds, vacuous):
        x = p.measurements[thm.measures]
        mean, ucl, sd = stats.one_sided_upper(x, conf)
        lcl = 2 * mean - ucl
        # shared errors widen the interval both ways: the Monte Carlo error of the population risk (at
        # the same one-sided level) and the optimiser's certified gap (the optimum can only be lower)
        sys_err = p.systematic.get(thm.measures, {})
        widen = stats.z_quantile(conf) * sys_err.get("mc_se", 0.0)
        ucl, lcl = ucl + widen + sys_err.get("solver_gap", 0.0), lcl - widen
        row = {"point": p.value, "mean": mean, "ucl": ucl, "lcl": lcl, "bound": b, "ratio": mean / b,
               "trials": int(x.size)}
        if thm.measures in RISK_MEASURES:
            row |= {"sup_risk": p.params.get("risk_max"), "vacuous": vac}
        rows.append(row)
        if vac:
            continue
        if lcl > b:
            verdict = "fail"
        elif ucl > b and verdict != "fail":
            verdict = "inconclusive"
            # more trials shrink only the sampling part of the interval, not the shared errors
            margin = b - widen - sys_err.get("solver_gap", 0.0)
            t = stats.trials_needed(mean, sd, margin, conf) if margin > mean else None
            need = max(need or 0, t or 0) or None  # type: ignore[assignment]
    if n_inf == 0:
        return result(check, thm, "inapplicable",
                       f"vacuous at this run's calibration by a factor of at least "
                       f"{min(r['bound'] / r['sup_risk'] for r in rows):.3g}: the bound is that many times sup_W F - F* "
                       f"(the largest excess risk any point of the domain has) at every point, so no measurement "
                       f"could exceed it", rows=tuple(rows))
    decided = [r for r in rows if not r.get("vacuous")]
    worst = max(decided, key=lambda r: r["ucl"] / r["bound"])
    skipped = [r["point"] for r in rows if r.get("vacuous")]
    summary = (f"{thm.measures}: one-sided {conf:.4f} upper confidence limit of the mean vs the explicit bound "
               f"at {len(decided)} point(s); worst UCL/bound = {worst['ucl'] / worst['bound']:.3g}"
               + (f"; left out as vacuous (bound >= sup_W F - F*): {skipped}" if skipped else ""))
    return result(check, thm, verdict, summary, measured=worst["ucl"], bound=worst["bound"], rows=tuple(rows),
                   trials_needed=need if verdict == "inconclusive" else None)
KIND = "bound"


def states_a_bound(check: Any, thm: Theorem, facts: Facts) -> None:
    if not thm.terms:
        raise Misfit("theorem", f"{thm.name} states no bound to compare with: {check.kind} needs a theorem with an "
                                f"expression (`python -m engine list` shows them)")
    measurable_theorem(check, thm, facts)


def describe(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule | None:
    """The rule above, from a stored result's rows (each with its limits and bound; vacuous points left out)."""
    rows = [row for row in r["rows"] if not row.get("vacuous")]
    if r["verdict"] == "inapplicable" or not rows:
        return None
    conf = 1 - (1 - r["confidence"]) / len(rows)
    text = (f"pass iff the one-sided {conf:.4g} upper confidence limit of the mean (Bonferroni over {len(rows)} "
            f"point(s)) <= the explicit bound at every point; fail iff a lower limit is above it")
    over = [row for row in rows if row["lcl"] > row["bound"]]
    if over:
        w = max(over, key=lambda row: row["lcl"] / row["bound"])
        return Rule(text, f"lower limit {compare(w['lcl'], w['bound'])[0]}{at(w['point'])}", "fail")
    w = max(rows, key=lambda row: row["ucl"] / row["bound"])
    if w["ucl"] <= w["bound"]:
        return Rule(text, f"worst upper limit {compare(w['ucl'], w['bound'])[0]}{at(w['point'])}", "pass")
    return Rule(text, f"{at(w['point']).strip() or 'the'} upper limit {compare(w['ucl'], w['bound'])[0]}, the lower limit "
                      f"{w['lcl']:.4g} is not", "undecided")


CHECK = CheckKind(KIND, bound, rules=states_a_bound, describe=describe)
