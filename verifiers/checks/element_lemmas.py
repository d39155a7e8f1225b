"""Seed 002's supporting lemmas of Prop. 1 and Prop. 2 (Appendices B and C; Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt), decided by exact computation (catalog/element_lemmas_002.py computes the
numbers; this module judges them):

- ``lemma_b1`` (L438): for Y = 1(X), X ~ Multinomial(m, p): E Y_j = E Y_j^2 = q_j = 1 - (1 - p_j)^m,
  E Y_j Y_l = q_j + q_l - q_jl (q_jl = 1 - (1 - p_j - p_l)^m), Var(Y_j - Y_l) <= q_j + q_l. The identities are
  checked against a Monte Carlo of the multinomial (independent of the formulas: counts of draws), each by a z-test
  under the claimed mean (the indicators' standard error at that mean), Bonferroni over every quantity; the
  variance bound exactly (from the identities).
- ``lemma_b2`` (L454-458): P(H_i < H_j) <= exp(-min{5 n (q_i - q_j)^2 / (12 v_ij + 20 sigma^2 / n), n (q_i - q_j)/8})
  for i < j, with v_ij = Var(Y_i - Y_j): the exact probability (the law of sum_u (Y_i - Y_j)^(u), a sum of n i.i.d.
  {-1, 0, 1} variables, convolved with the N(0, 2 sigma^2) noise) against the bound, every pair of a grid.
- ``lemma_c1`` (L498-500): X ~ Bin(m, p), p <= 1/4, l >= 3mp: sum_{i >= ceil l} P(X >= i) <= 2 P(X >= ceil l) <=
  4 P(X = ceil l), exact over a grid of (m, p, l).
- ``lemma_c2`` (L502-504): l = 3mp + 3 log m + t, m >= 3: P(X = ceil l) <= p 2^-t, the logarithm base 2 (the proof's
  2^{-2 log m} = m^-2, note P2), exact over a grid; the natural-log reading is reported beside it.

Every check is exact (confidence 1) except lemma_b1's Monte Carlo comparison (its stated confidence).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from algorithms.registry import Registry
from verifiers.checks.base import CheckResult, Rule, cited_result, compare, exceeds

SEED = "seed 002 (Asi, Duchi, Javidi)"
CITES = {"lemma_b1": (f"{SEED}: Lemma B.1 (L438), indicator moments of a multinomial, against a Monte Carlo of the "
                      f"multinomial", ("002 Lemma B.1",)),
         "lemma_b2": (f"{SEED}: Lemma B.2 (L454-458), the mis-ordering probability of mechanism (7), against its exact "
                      f"value", ("002 Lemma B.2",)),
         "lemma_c1": (f"{SEED}: Lemma C.1 (L498-500), binomial tail sums, exact", ("002 Lemma C.1",)),
         "lemma_c2": (f"{SEED}: Lemma C.2 (L502-504), the binomial point mass at 3mp + 3 log2 m + t, exact",
                      ("002 Lemma C.2",))}


def _result(check: Any, kind: str, verdict: str, summary: str, rows: list[dict], *, measured: float | None,
            bound: float | None, confidence: float = 1.0) -> CheckResult:
    citation, claims = CITES[kind]
    return cited_result(check, citation, claims, verdict, summary, confidence=confidence, rows=rows,
                        measured=measured, bound=bound)


def lemma_b1(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, bad, var_bad = [], [], []
    tested = sum(len(pt["b1"]["moments"]) for pt in points)
    from scipy import stats

    z = float(stats.norm.ppf(1 - (1 - check.confidence) / (2 * max(tested, 1))))
    worst = 0.0
    for pt in points:
        for r in pt["b1"]["moments"]:
            dev = abs(r["monte_carlo"] - r["formula"]) / r["se"] if r["se"] > 0 else (
                0.0 if r["monte_carlo"] == r["formula"] else float("inf"))
            worst = max(worst, dev)
            if dev > z:
                bad.append(f"{pt['value']}, {r['what']}: Monte Carlo {r['monte_carlo']:.5g} vs {r['formula']:.5g} "
                           f"({dev:.1f} se)")
        for r in pt["b1"]["variance"]:
            if exceeds(r["var"], r["bound"]):
                var_bad.append(f"{pt['value']}, pair {r['pair']}: Var {r['var']:.5g} > {r['bound']:.5g}")
        rows += [{"point": pt["value"], **r} for r in pt["b1"]["moments"][:12]]
    verdict = "fail" if bad or var_bad else "pass"
    summary = (f"{tested} moments against a Monte Carlo of {points[0]['b1']['draws']} multinomial draws per point "
               f"(largest deviation {worst:.2f} se, limit {z:.2f} se, Bonferroni), and Var(Y_j - Y_l) <= q_j + q_l "
               f"exactly at {sum(len(pt['b1']['variance']) for pt in points)} pairs"
               + (f"; FAILS: {'; '.join((bad + var_bad)[:6])}" if verdict == "fail" else ""))
    return _result(check, "lemma_b1", verdict, summary, rows, measured=worst, bound=z, confidence=check.confidence)


def _exact_bound_check(check: Any, kind: str, points: list[dict], key: str, what: str) -> CheckResult:
    rows, bad, n = [], [], 0
    worst: dict | None = None
    for pt in points:
        for r in pt[key]:
            n += 1
            ratio = r["exact"] / r["bound"] if r["bound"] > 0 else (0.0 if r["exact"] == 0 else float("inf"))
            r = dict(r, ratio=ratio)
            if worst is None or ratio > worst["ratio"]:
                worst = dict(r, point=pt["value"])
            if exceeds(r["exact"], r["bound"]):
                bad.append(f"{pt['value']}: {r.get('case', '')} exact {r['exact']:.4g} > bound {r['bound']:.4g}")
        rows += [dict(r, point=pt["value"]) for r in pt[key][:8]]
    verdict = "fail" if bad else "pass" if n else "inapplicable"
    summary = (f"{what} at {n} cases: worst exact / bound {worst['ratio']:.3g}" if worst else "no case") + (
        f"; FAILS at {len(bad)}: {'; '.join(bad[:5])}" if bad else "")
    return _result(check, kind, verdict, summary, rows, measured=None if worst is None else worst["exact"],
                   bound=None if worst is None else worst["bound"])


def lemma_b2(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _exact_bound_check(check, "lemma_b2", points, "b2", "exact P(H_i < H_j) against Lemma B.2's bound")


def lemma_c1(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _exact_bound_check(check, "lemma_c1", points, "c1", "Lemma C.1's two inequalities, exact")


def lemma_c2(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    res = _exact_bound_check(check, "lemma_c2", points, "c2", "P(X = ceil l) against p 2^-t with l's log base 2")
    nat = [r for pt in points for r in pt["c2_natural"] if exceeds(r["exact"], r["bound"])]
    total = sum(len(pt["c2_natural"]) for pt in points)
    note = (f"; with the natural logarithm (not the proof's reading) the bound fails at {len(nat)} of {total} cases"
            if nat else f"; with the natural logarithm it also holds at all {total} cases")
    return CheckResult(**{**res.__dict__, "summary": res.summary + note})


LemmaCheckFn = Callable[[Any, str, list[dict]], CheckResult]
LEMMA_CHECKS: Registry[LemmaCheckFn] = Registry("element lemma check kind")
LEMMA_CHECKS.add("lemma_b1", lemma_b1)
LEMMA_CHECKS.add("lemma_b2", lemma_b2)
LEMMA_CHECKS.add("lemma_c1", lemma_c1)
LEMMA_CHECKS.add("lemma_c2", lemma_c2)


def _b1_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    return Rule(f"fail iff a moment's Monte Carlo estimate is more than {float(r['bound']):.2f} standard errors from "
                f"the lemma's formula (two-sided, Bonferroni) or Var(Y_j - Y_l) exceeds q_j + q_l exactly at some pair; "
                f"pass otherwise", f"largest deviation {float(r['measured']):.2f} se (limit {float(r['bound']):.2f})",
                "fail" if float(r["measured"]) > float(r["bound"]) else "pass")


def _exact_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    m, b = float(r["measured"]), float(r["bound"])
    return Rule("fail iff the exact value exceeds the lemma's bound in some case; pass otherwise (exact)",
                f"worst case: exact {compare(m, b)[0]} (the bound)", "fail" if exceeds(m, b) else "pass")


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
LEMMA_RULES = {"lemma_b1": _b1_rule, "lemma_b2": _exact_rule, "lemma_c1": _exact_rule, "lemma_c2": _exact_rule}
