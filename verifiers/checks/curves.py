"""Checks on privacy curves (engine/kinds/curve/run.py): data in, verdicts out. Exact arithmetic: no confidence level
is involved (confidence 1)."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from algorithms.registry import Registry
from verifiers.checks import CheckResult
from verifiers.checks.base import Rule, at, cite, compare

REL_SLACK = 1e-9
RATIO_TOL = 0.15                   # ratio_claim's default relative tolerance (the paper reads its ratios off a figure)
OWN_CURVES = ("thm1", "thm2")      # seed 001's upper (Thm 1) and lower (Thm 2) bound, each with Lemma 1
# the claims a curve check kind decides when its spec names none (ratio_claim, curves_ordered and paper_value decide the
# statement the spec quotes, so their specs must name it)
DEFAULT_CLAIMS = {"bounds_ordered": ("001 Thm 1", "001 Thm 2")}


def claims_of(check: Any) -> tuple[str, ...]:
    if check.not_inventoried:
        return ()
    return tuple(check.claims) if check.claims else DEFAULT_CLAIMS.get(check.kind, ())


def cited(check: Any, citation: str) -> str:
    claims = claims_of(check)
    return cite(citation, claims) if claims else f"{citation} [not inventoried: {check.not_inventoried}]"


def epsilon_of(point: dict, curve: str) -> float:
    if curve == "thm1":
        return float(point["upper"]["epsilon"])
    if curve == "thm2":
        return float(point["lower"]["epsilon"])
    return float(point["baselines"][curve]["epsilon"])


def bounds_ordered(check: Any, points: list[dict], citation: str) -> CheckResult:
    """A lower bound on the mechanism's epsilon above an upper bound on it means one of the two (or their
    evaluation) is wrong: fail."""
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
    return CheckResult(id=check.id, kind="bounds_ordered", theorem="shuffle.thm1_thm2",
                       citation=cited(check, citation), claims=claims_of(check),
                       verdict="fail" if bad else "pass", measured=worst["epsilon_lower_bound"],
                       bound=worst["epsilon_upper_bound"], confidence=1.0, summary=summary, rows=rows)


def ratio_claim(check: Any, points: list[dict], citation: str) -> CheckResult:
    """The paper's 'Thm 1 gives an epsilon X times smaller than baseline B' (seed 001, L195 and L41) at one point: pass
    when baseline/Thm 1 is within the relative tolerance of X, fail otherwise (the curves are exact)."""
    point = next(p for p in points if p["value"] == check.at)
    ours = epsilon_of(point, check.curve) / epsilon_of(point, "thm1")
    tol = RATIO_TOL if check.tol is None else check.tol
    ok = abs(ours / check.ratio - 1) <= tol
    rows = tuple({"point": p["value"], "epsilon_thm1": epsilon_of(p, "thm1"), "epsilon_baseline": epsilon_of(p, check.curve),
                  "ratio": epsilon_of(p, check.curve) / epsilon_of(p, "thm1")} for p in points)
    summary = (f"{check.curve} / Thm 1 at {check.at:g}: {ours:.3g} against the paper's {check.ratio:g}x "
               f"(relative tolerance {tol:g})")
    return CheckResult(id=check.id, kind="ratio_claim", theorem="shuffle.fig2_ratio", claims=claims_of(check),
                       citation=cited(check, citation + "; Fig. 2 text (L195, L41)"),
                       verdict="pass" if ok else "fail", measured=ours, bound=check.ratio, confidence=1.0,
                       summary=summary, rows=rows)


def curves_ordered(check: Any, points: list[dict], citation: str) -> CheckResult:
    """The paper's 'curve A below curve B below ...' (seed 001, L195): pass when it holds at every point."""
    rows, bad = [], []
    lo = getattr(check, "min_value", None)
    for p in points:
        if lo is not None and p["value"] < lo:
            continue
        eps = [epsilon_of(p, c) for c in check.order]
        ok = all(a <= b * (1 + REL_SLACK) for a, b in zip(eps, eps[1:]))
        if not ok:
            bad.append(p["value"])
        rows.append({"point": p["value"], **{c: e for c, e in zip(check.order, eps)}, "ordered": ok})
    where = "every point" if lo is None else f"every point from {lo:g} on"
    summary = (" <= ".join(check.order) + (f" at {where}" if not bad else f" fails at {bad}"))
    return CheckResult(id=check.id, kind="curves_ordered", theorem="shuffle.fig2_order", claims=claims_of(check),
                       citation=cited(check, citation + "; Fig. 2 text (L195)"),
                       verdict="fail" if bad else "pass", measured=None, bound=None, confidence=1.0, summary=summary,
                       rows=tuple(rows))


def paper_value(check: Any, points: list[dict], citation: str) -> CheckResult:
    """A number the paper states for one curve ("Thm 1 gives epsilon = 2.91", seed 001 L205) at the swept value it
    states it at: pass when the curve's epsilon there is within the relative tolerance of the paper's number (the
    tolerance the spec fixes from how precisely the paper prints it), fail outside (the curves are exact: confidence
    1). Where the paper ties its number to no swept value (`at_unstated`), the check says so and is inapplicable: it
    never picks the swept value from our curve."""
    rows = tuple({"point": p["value"], f"epsilon_{check.curve}": epsilon_of(p, check.curve),
                  "ours_over_paper": epsilon_of(p, check.curve) / check.epsilon} for p in points)
    what = f"the paper's epsilon = {check.epsilon:g} for {check.curve}"
    cite_line = cited(check, f"{citation}; the paper's number: {check.source}")
    if check.at is None:
        values = [(p["value"], epsilon_of(p, check.curve)) for p in points]
        crossing = next(((a, b) for (a, ea), (b, eb) in zip(values, values[1:])
                         if min(ea, eb) <= check.epsilon <= max(ea, eb)), None)
        seen = (f"; for information only, our curve passes {check.epsilon:g} between the swept values "
                f"{crossing[0]:g} and {crossing[1]:g}" if crossing else "")
        return CheckResult(id=check.id, kind="paper_value", theorem="shuffle.paper_value", citation=cite_line,
                           claims=claims_of(check), verdict="inapplicable", measured=None, bound=check.epsilon,
                           confidence=1.0, rows=rows,
                           summary=f"{what}: the paper states no swept value for it ({check.at_unstated}), so there is "
                                   f"nothing to judge it at (a value chosen from our curve would make it a fit, "
                                   f"not a check){seen}")
    point = next(p for p in points if p["value"] == check.at)
    ours = epsilon_of(point, check.curve)
    rel = ours / check.epsilon - 1
    ok = abs(rel) <= check.tol
    summary = (f"{check.curve} at {check.at:g}: {ours:.4g} against {what} ({rel:+.2%}; relative tolerance "
               f"{check.tol:g}, fixed from the paper's precision before the run); where {check.at:g} comes from: "
               f"{check.at_source}")
    return CheckResult(id=check.id, kind="paper_value", theorem="shuffle.paper_value", citation=cite_line,
                       claims=claims_of(check), verdict="pass" if ok else "fail", measured=ours, bound=check.epsilon,
                       confidence=1.0, summary=summary, rows=rows, extra={"relative_error": rel, "tol": check.tol})


def _bounds_ordered_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda row: row["epsilon_lower_bound"] / row["epsilon_upper_bound"])
    bad = w["epsilon_lower_bound"] > w["epsilon_upper_bound"] * (1 + REL_SLACK)
    gap = compare(w["epsilon_lower_bound"], w["epsilon_upper_bound"])[0]
    return Rule("fail iff the lower bound's (Thm 2) epsilon exceeds the upper bound's (Thm 1) at some point (exact "
                "curves)", f"closest point{at(w['point'])}: lower {gap} (upper)", "fail" if bad else "pass")


def _ratio_claim_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    tol = RATIO_TOL if spec.get("tol") is None else spec["tol"]
    rel = r["measured"] / r["bound"] - 1
    return Rule(f"pass iff {spec.get('curve', 'the baseline')} / Thm 1 at {spec.get('at', 0):g} is within +-{tol:.0%} "
                f"of the paper's {r['bound']:g}x (exact curves)",
                f"{r['measured']:.3g}x is {rel:+.0%} from {r['bound']:g}x", "pass" if abs(rel) <= tol else "fail")


def _curves_ordered_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    order = list(spec.get("order") or [])
    rows = r["rows"]                           # the judged points (those from min_value on)
    bad = [row["point"] for row in rows
           if not all(row[a] <= row[b] * (1 + REL_SLACK) for a, b in zip(order, order[1:]))]
    closest = max(((row[a] / row[b] if row[b] > 0 else float("inf"), row["point"], a, b)
                   for row in rows for a, b in zip(order, order[1:])), default=None)
    lo = spec.get("min_value")
    where = "every point" if lo is None else f"every point from {lo:g} on"
    text = f"pass iff {' <= '.join(order)} at {where} (exact curves)"
    if bad:
        return Rule(text, f"out of order at {len(bad)} of {len(rows)} points (first{at(bad[0])})", "fail")
    if closest is None:
        return Rule(text, "no point judged", "undecided")
    return Rule(text, f"closest pair: {closest[2]} is {1 - closest[0]:.1%} below {closest[3]}{at(closest[1])}",
                "pass")


def _paper_value_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    x = r["extra"]
    return Rule(f"pass iff our {spec.get('curve')} epsilon at {spec.get('at', 0):g} is within +-{x['tol']:.2%} of "
                f"the paper's {r['bound']:g} (the tolerance from its printed precision, fixed before the run)",
                f"{r['measured']:.4g} is {x['relative_error']:+.2%} from {r['bound']:g}",
                "pass" if abs(x["relative_error"]) <= x["tol"] else "fail")


# each kind's rule in words, from a stored result and the spec's entry for the check (verifiers/checks/base.py Rule)
CURVE_RULES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], Rule]] = {
    "bounds_ordered": _bounds_ordered_rule, "ratio_claim": _ratio_claim_rule,
    "curves_ordered": _curves_ordered_rule, "paper_value": _paper_value_rule}

CurveCheckFn = Callable[[Any, list[dict], str], CheckResult]
CURVE_CHECKS: Registry[CurveCheckFn] = Registry("curve check kind")
CURVE_CHECKS.add("bounds_ordered", bounds_ordered)
CURVE_CHECKS.add("ratio_claim", ratio_claim)
CURVE_CHECKS.add("curves_ordered", curves_ordered)
CURVE_CHECKS.add("paper_value", paper_value)
