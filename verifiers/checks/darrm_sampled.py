"""Checks of DaRRM SAMPLED (seed 003, chapter 3; the ``darrm_sampled`` mechanism, catalog/darrm_sampled_003.py): the
runs' counts in, verdicts out. Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt.

- ``darrm_audit``: at the corner pair, output o and order where the audited gamma's exact epsilon is largest (fixed
  before the runs), the test "say the first data set when the output is o" over n runs per side; its false-positive
  and false-negative rates replaced by one-sided Clopper-Pearson upper limits (Bonferroni over the two) give a lower
  bound on epsilon at the claimed delta, valid at the check's confidence whatever the mechanism (verifiers/audit.py).
  H0: DaRRM_gamma is (m eps, delta)-DP. The bound above m eps rejects it: fail. The bound above the exact epsilon
  at that corner refutes the exact computation (or the sampler): fail too. Otherwise pass (not refuted); the summary
  gives the bound the audit would reach at the exact probabilities and the largest any outcome could give, i.e. its
  power at this n.
- ``darrm_utility_sim``: for each configuration and gamma, the mean of g(S) - out over n runs (a {-1, 0, 1} variable)
  with a two-sided normal-approximation interval at the check's confidence, Bonferroni over every (configuration,
  gamma); it must contain Eq. B.56's exact value (L3358), which must also equal algorithms/darrm.error's |error| (two
  exact computations of Def 3.3.4, L826-830). A row with no non-zero difference gets |mean| <= the Clopper-Pearson
  upper limit of Pr[g(S) != out] instead.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from scipy.stats import norm

from algorithms.registry import Registry
from verifiers.audit import clopper_pearson_upper, counts_lower_bound, largest_lower_bound
from verifiers.checks.base import EXACT_ABS_SLACK, EXACT_REL_SLACK, CheckResult, Rule, cited_result, compare, exceeds

SEED = "seed 003 (Jiang, thesis ch. 3)"
CITE_AUDIT = (f"{SEED}: DaRRM (Alg. 1, L865-880) sampled at the worst pair of Lemma 3.6.1's corners (L961-967); the "
              f"(m eps, delta) claims of gamma_Sub (Lemma 3.4.1, L849-857, with m-fold composition), RR (Lemma B.1.1, "
              f"L2364-2368) and gamma_opt (the LP, L931-939, private by Lemma 3.4.4, L897-903)")
CITE_UTILITY = f"{SEED}: Def 3.3.4 (L826-830) and Eq. B.56 (L3352-3358): the error of DaRRM_gamma, simulated and exact"
CLAIMS_AUDIT = {"sub": ("003 Lemma 3.4.1 / B.1.2",), "const": ("003 Lemma B.1.1",),
                "opt": ("003 Lemma 3.4.4 / B.1.5",)}      # the LP's rows are Lemma 3.4.4's condition
CLAIMS_UTILITY = ("003 Eq. B.56",)


def darrm_audit(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Every point: the Clopper-Pearson lower bound at the worst corner pair <= the claim and <= the exact epsilon."""
    rows, why = [], []
    conf = check.confidence
    for pt in points:
        a = pt["audit"]
        n, o, delta = a["runs_per_side"], a["output"], a["delta"]
        fp, fn = a["hits_second"], n - a["hits_first"]
        lb = counts_lower_bound(fp, fn, n, threshold=o, delta=delta, confidence=conf).epsilon_lower
        at_exact = counts_lower_bound(round(n * a["prob_second"]), round(n * (1 - a["prob_first"])), n, threshold=o,
                                      delta=delta, confidence=conf).epsilon_lower
        most = largest_lower_bound(n, delta=delta, confidence=conf)
        bad = []
        if lb > a["claim"]:
            bad.append(f"lower bound {lb:.4g} > claimed m eps = {a['claim']:.4g}")
        if exceeds(lb, a["exact"]):
            bad.append(f"lower bound {lb:.4g} > the exact epsilon {a['exact']:.4g} at that corner")
        if bad:
            why.append(f"{pt['value']} ({a['gamma_name']}): {'; '.join(bad)}")
        rows.append({"point": pt["value"], "gamma": a["gamma_name"], "claim": a["claim"], "exact": a["exact"],
                     "audit_lower": lb, "audit_lower_at_exact_probabilities": at_exact, "largest_possible": most,
                     "runs_per_side": n, "output": o, "false_positives": fp, "false_negatives": fn,
                     "corner_counts": tuple(a["counts"])})
    names = sorted({r["gamma"] for r in rows})
    claims = tuple(c for nm in names for c in CLAIMS_AUDIT[nm])
    span = "; ".join(f"{r['point']}: {r['audit_lower']:.3g} (exact {r['exact']:.3g}, claim {r['claim']:.3g}, "
                     f"{r['audit_lower_at_exact_probabilities']:.3g} at the exact probabilities)" for r in rows)
    summary = (f"Clopper-Pearson epsilon lower bound of sampled DaRRM ({', '.join(names)}) at its exact worst corner "
               f"pair, {rows[0]['runs_per_side'] if rows else 0} runs per side, confidence {conf:g}: {span}"
               + (f"; FAILS: {'; '.join(why)}" if why else "; no claim refuted"))
    worst = max(rows, key=lambda r: r["audit_lower"] / r["claim"]) if rows else None
    return cited_result(check, CITE_AUDIT, claims, "fail" if why else "pass" if rows else "inapplicable", summary,
                        confidence=conf, rows=rows, measured=None if worst is None else worst["audit_lower"],
                        bound=None if worst is None else worst["claim"], theorem="darrm.audit")


def interval(mean: float, var: float, n: int, nonzero: int, level: float) -> tuple[float, float]:
    """Two-sided interval for the mean of a {-1, 0, 1} variable at ``level``: normal approximation with the sample
    variance; with no non-zero draw, +-(Clopper-Pearson upper limit of Pr[variable != 0])."""
    if nonzero == 0:
        u = clopper_pearson_upper(0, n, 1 - (1 - level) / 2)
        return -u, u
    half = float(norm.ppf(1 - (1 - level) / 2)) * math.sqrt(var / n)
    return mean - half, mean + half


def darrm_utility_sim(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Every (point, configuration, gamma): the simulated error's interval contains Eq. B.56's exact value, and
    |B.56| equals algorithms/darrm.error."""
    conf = check.confidence
    total = sum(len(pt["utility"]) for pt in points)
    level = 1 - (1 - conf) / max(total, 1)              # Bonferroni over every row
    rows, why = [], []
    for pt in points:
        for u in pt["utility"]:
            lo, hi = interval(u["sim_mean"], u["sim_var"], u["runs"], u["nonzero"], level)
            inside = lo <= u["exact_b56"] <= hi
            same = abs(abs(u["exact_b56"]) - u["exact_abs_error"]) <= EXACT_REL_SLACK * u["exact_abs_error"] + \
                EXACT_ABS_SLACK
            if not inside:
                why.append(f"{pt['value']}, {u['config']}, {u['gamma']}: exact {u['exact_b56']:.5g} outside the "
                           f"simulated [{lo:.5g}, {hi:.5g}]")
            if not same:
                why.append(f"{pt['value']}, {u['config']}, {u['gamma']}: |B.56| = {abs(u['exact_b56']):.6g} but "
                           f"darrm.error = {u['exact_abs_error']:.6g}")
            rows.append({"point": pt["value"], "config": u["config"], "gamma": u["gamma"], "runs": u["runs"],
                         "simulated": u["sim_mean"], "lower": lo, "upper": hi, "exact_b56": u["exact_b56"],
                         "exact_abs_error": u["exact_abs_error"], "z": (u["sim_mean"] - u["exact_b56"]) /
                         math.sqrt(u["sim_var"] / u["runs"]) if u["sim_var"] > 0 else 0.0})
    zmax = max((abs(r["z"]) for r in rows), default=0.0)
    summary = (f"simulated error of sampled DaRRM (g(S) - out, {rows[0]['runs'] if rows else 0} runs per row) against "
               f"Eq. B.56's exact value at {total} (configuration, gamma) rows: two-sided normal intervals at "
               f"{conf:g} overall (Bonferroni: {level:.6g} each); largest |z| = {zmax:.3g}; |B.56| equals "
               f"darrm.error at every row" + (f"; FAILS: {'; '.join(why[:6])}" + (" ..." if len(why) > 6 else "")
                                              if why else ""))
    return cited_result(check, CITE_UTILITY, CLAIMS_UTILITY, "fail" if why else "pass" if rows else "inapplicable",
                        summary, confidence=conf, rows=rows, measured=zmax, bound=float(norm.ppf(1 - (1 - level) / 2)),
                        theorem="darrm.utility_sim")


DarrmSampledCheckFn = Callable[[Any, str, list[dict]], CheckResult]
DARRM_SAMPLED_CHECKS: Registry[DarrmSampledCheckFn] = Registry("DaRRM sampled check kind")
DARRM_SAMPLED_CHECKS.add("darrm_audit", darrm_audit)
DARRM_SAMPLED_CHECKS.add("darrm_utility_sim", darrm_utility_sim)


def _audit_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["audit_lower"] / x["claim"])
    bad = any(x["audit_lower"] > x["claim"] or exceeds(x["audit_lower"], x["exact"]) for x in r["rows"])
    return Rule(f"fail iff the Clopper-Pearson epsilon lower bound ({r['confidence']:g}) of the sampled mechanism at its "
                f"exact worst corner pair (the test fixed before the runs) exceeds the claimed m eps or the exact "
                f"epsilon at some point; pass otherwise (one-sided: no leak found)",
                f"lower bound {compare(w['audit_lower'], w['claim'])[0]} (claimed; exact {w['exact']:.4g}, at most "
                f"{w['largest_possible']:.3g} could show) at {w['point']}", "fail" if bad else "pass")


def _utility_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    outside = [x for x in r["rows"] if not x["lower"] <= x["exact_b56"] <= x["upper"]]
    return Rule("pass iff at every (configuration, gamma) the simulated error's two-sided interval (Bonferroni over the "
                "rows) contains Eq. B.56's exact value and |B.56| equals the exact error; fail otherwise",
                f"largest |z| {float(r['measured']):.3g} against {float(r['bound']):.3g}; {len(outside)} of "
                f"{len(r['rows'])} rows outside", "fail" if outside else "pass")


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
DARRM_SAMPLED_RULES = {"darrm_audit": _audit_rule, "darrm_utility_sim": _utility_rule}
