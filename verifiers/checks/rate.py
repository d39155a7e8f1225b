"""``rate``: the weighted log-log slope of the measured mean against the swept variable, at least as fast as the
exponent SymPy derives from the theorem's term."""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from algorithms.registry import choice_message
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
    compare,
    result,
)
from verifiers.checks.bound import states_a_bound
from verifiers.theorems.base import Theorem

MIN_RATE_POINTS = 3


def rate(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    var = check.variable or ctx.sweep_symbol
    term = check.term or thm.rate_term
    if ctx.sweep_symbol is None or var != ctx.sweep_symbol:
        return result(check, thm, "inapplicable", f"the spec does not sweep {var}")
    if len(points) < MIN_RATE_POINTS:
        return result(check, thm, "inapplicable", f"{len(points)} sweep points; a slope needs >= {MIN_RATE_POINTS}")
    failed = {c for p in points for c in thm.failed_conditions(p.params)}
    if failed:
        return result(check, thm, "inapplicable", "theorem conditions fail: " + "; ".join(sorted(failed)))
    short = [p.value for p in points if p.params["R"] < check.min_rounds]
    if short:
        return result(check, thm, "inapplicable", f"fewer than {check.min_rounds} rounds at {var} = {short}")
    exponent = float(thm.exponent(var, term))
    if check.saturation == "measured":      # O() theorems whose constant-1 bound is loose: judge by the data
        saturated = [p.value for p in points
                     if float(np.mean(p.measurements[thm.measures])) >= _risk_ceiling(p.params) / 2]
    else:
        saturated = [p.value for p in points if thm.evaluate(p.params) >= _risk_ceiling(p.params)]
    rows: list[dict[str, Any]] = []
    dominated = []
    for p in points:
        parts = {name: thm.evaluate(p.params, name) for name in thm.terms}
        others = sum(v for k, v in parts.items() if k != term)
        if parts[term] < others:
            dominated.append(p.value)
        x = p.measurements[thm.measures]
        ci = stats.mean_ci(x, check.level)
        total = sum(parts.values())
        rows.append({"point": p.value, "mean": ci.mean, "se": ci.se, "term": parts[term], "other_terms": others,
                     "hidden_constant": ci.mean / total, "rounds": p.params["R"]})
    if saturated and check.saturation == "measured":
        return result(check, thm, "inapplicable",
                       f"the measured mean {thm.measures} is at least half of min(sup_W F - F*, F(w0) - F*) at "
                       f"{var} = {saturated}: the risk is near its trivial level there, so no rate can show",
                       rows=tuple(rows), extra={"exponent": exponent})
    if saturated:
        return result(check, thm, "inapplicable",
                       f"the theorem's bound (constants set to 1) is at least min(sup_W F - F*, F(w0) - F*) at "
                       f"{var} = {saturated}: there the trivial output w0 (or any point of the domain) already meets "
                       f"the bound, so the risk saturates and no rate can show",
                       rows=tuple(rows), extra={"exponent": exponent})
    if dominated:
        return result(check, thm, "inapplicable",
                       f"the {term} term (constants set to 1) does not dominate the other terms at {var} = {dominated}",
                       rows=tuple(rows), extra={"exponent": exponent})
    nonpositive = [r["point"] for r in rows if not r["mean"] > 0]
    if nonpositive:
        return result(check, thm, "inapplicable", f"the mean {thm.measures} is not positive at {var} = "
                       f"{nonpositive} (within the optimiser's tolerance of 0): a log-log slope is undefined",
                       rows=tuple(rows), extra={"exponent": exponent})
    xs = np.log(np.array([p.value for p in points], dtype=float))
    ys = np.log([r["mean"] for r in rows])
    ses = np.array([r["se"] / r["mean"] for r in rows])
    fit = stats.weighted_slope(xs, ys, ses, check.level)
    # the term's own slope over the swept range: the exponent itself for a power law, bent by log factors
    # (e.g. log(T)/sqrt(T)), which a finite sweep sees; the check allows the flatter of the two
    local = float(np.polyfit(xs, np.log([r["term"] for r in rows]), 1)[0])
    limit = max(exponent, local) + check.tol
    verdict = "fail" if fit.lower > limit else "pass" if fit.upper <= limit else "inconclusive"
    hc = [r["hidden_constant"] for r in rows]
    guard = ("; saturation judged on the measurements (mean < half the trivial risk at every point)"
             if check.saturation == "measured" else "")
    bend = (f", {local:.3f} over the swept range (its log factors)" if abs(local - exponent) > 1e-6 else "")
    summary = (f"does the mean {thm.measures} fall at least as fast as the theorem says? Slope of log mean vs log "
               f"{var}: {fit.slope:.3f} (CI {fit.lower:.3f} .. {fit.upper:.3f} at {check.level:g}); the theorem's "
               f"{term} term gives exponent {exponent:.3f} (SymPy){bend}, tolerance {check.tol:g}. One-sided, as for "
               f"an upper bound: pass if the CI's upper end <= {limit:.3f} (a faster fall passes too), fail if its "
               f"lower end > {limit:.3f}; hidden constant measured/bound ranges {min(hc):.3g} .. {max(hc):.3g} "
               f"(ratio {max(hc) / min(hc):.2f})" + guard)
    return result(check, thm, verdict, summary, measured=fit.slope, bound=exponent, rows=tuple(rows),
                   extra={"exponent": exponent, "local_exponent": local, "tol": check.tol, "slope": fit.slope,
                          "slope_lower": fit.lower,
                          "slope_upper": fit.upper, "intercept": fit.intercept, "variable": var, "term": term})


def _risk_ceiling(params: Mapping[str, float]) -> float:
    """The excess risk below which a bound says something: neither sup_W F - F* nor F(w0) - F* (the risk
    of never moving from the initial point w0 = 0)."""
    return min(params.get("risk_max", math.inf), params.get("Delta", math.inf))
KIND = "rate"


def _rules(check: Any, thm: Theorem, facts: Facts) -> None:
    states_a_bound(check, thm, facts)
    if facts.sweep_symbol is None:
        raise Misfit("kind", f"check {check.id!r}: a rate check needs a sweep")
    if check.variable is not None and check.variable != facts.sweep_symbol:
        raise Misfit("variable", f"{check.variable} is not what the sweep varies ({facts.sweep_symbol})")
    if check.term is not None and check.term not in thm.terms:
        raise Misfit("term", choice_message(f"term of {thm.name}", check.term, list(thm.terms)))


def describe(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule | None:
    """The slope rule above, from a stored result (its extra holds the fit and the exponents)."""
    x = r.get("extra") or {}
    if r["verdict"] == "inapplicable" or "slope_upper" not in x:
        return None
    local = x.get("local_exponent", x["exponent"])
    limit = max(x["exponent"], local) + x["tol"]
    bent = f", its term's slope over the range {local:.3f}" if abs(local - x["exponent"]) > 1e-6 else ""
    text = (f"pass iff the upper end of the log-log slope's {r['confidence']:g} interval <= {limit:.3f} (the "
            f"theorem's exponent {x['exponent']:.3f}{bent}, + tolerance {x['tol']:g}); fail iff its lower end > "
            f"{limit:.3f}")
    if x["slope_lower"] > limit:
        return Rule(text, "lower end " + compare(x["slope_lower"], limit, relative=False)[0], "fail")
    if x["slope_upper"] <= limit:
        return Rule(text, "upper end " + compare(x["slope_upper"], limit, relative=False)[0], "pass")
    return Rule(text, f"interval {x['slope_lower']:.3f} .. {x['slope_upper']:.3f} contains {limit:.3f}", "undecided")


CHECK = CheckKind(KIND, rate, rules=_rules, describe=describe)
