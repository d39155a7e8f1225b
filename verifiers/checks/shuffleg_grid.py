"""Checks of seed 003 ch. 4's comparisons (the ``shuffleg_grid`` mechanism, catalog/shuffleg_003.py): the methods
at equal privacy (§4.6.6, Table 4.4; the experiments of §4.7.5 / Fig. 4.2). Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt.

- ``interleaved_best`` (§4.7.5, L1800-1812: "Interleaved ... consistently best at smaller epsilon"; §4.6.6, L1752:
  it "achieves a lower empirical excess risk than" Priv-Pub and Pub-Priv): at the smallest epsilon of the spec,
  one-sided Welch tests of Interleaved's mean final excess against each of DP-ShuffleG, Priv-Pub and Pub-Priv
  (Bonferroni over the three). Pass when Interleaved is significantly lower than all three, fail when one of them is
  significantly lower than Interleaved, else inconclusive. Every epsilon is shown.
- ``public_only_suboptimal`` (§4.7.5: "Public Only plateaus at a suboptimal loss" under distribution shift): at the
  largest epsilon, Public Only's mean final excess against the best private method's (one-sided Welch): pass when
  significantly above, fail when significantly below, else inconclusive.
- ``privacy_term_order`` (Table 4.4 / §4.6.6, L1748: Interleaved's privacy term (1/(n((1-p)n+1)))^(2/3) is at most
  Priv-Pub's / Pub-Priv's (p/n)^(2/3) "for p >= 1/n"): exact. SymPy factors p((1-p)n + 1) - 1 = (1 - p)(np - 1),
  which is >= 0 exactly on [1/n, 1]; the check verifies the factorisation and evaluates both terms at the spec's
  (n, p), and reports the ratio of the corollaries' own noise terms at equal privacy and equal step.
- ``dissimilarity_order`` (§4.6.6, L1750: "Clearly C_n^part <= C_n^full"): exact on the data set of the run, for
  the mean loss (x-free gradient differences): C_n^full exactly; C_n^part between a lower bound (the largest value
  over searched orders: the max over all orders can only be larger) and an upper bound. Fail when the lower bound
  exceeds C_n^full, pass when the upper bound does not, else inconclusive; the RR-mean reading is reported.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np
import sympy as sp

from algorithms.registry import Registry
from verifiers.checks.base import CheckResult, Rule, cited_result, combine_verdicts, compare, exact_result, side_of
from verifiers.stats import welch_one_sided

SEED = "seed 003 (Jiang's thesis) ch. 4"
PRIVATE = ("dp_shuffleg", "priv_pub", "pub_priv")


def interleaved_best(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    level = (1 - check.confidence) / len(PRIVATE)
    rows = []
    for pt in points:
        inter = np.asarray(pt["instances"]["interleaved"]["excess"])
        row: dict = {"epsilon": pt["value"], "interleaved": float(inter.mean())}
        better, worse = [], []
        for other in PRIVATE:
            o = np.asarray(pt["instances"][other]["excess"])
            lo, hi = welch_one_sided(inter, o)
            row[other] = float(o.mean())
            row[f"p_{other}"] = lo
            if lo < level:
                better.append(other)
            if hi < level:
                worse.append(other)
        row["verdict"] = "fail" if worse else "pass" if len(better) == len(PRIVATE) else "inconclusive"
        row["beaten_by"] = ", ".join(worse) or "-"
        rows.append(row)
    judged = min(rows, key=lambda r: r["epsilon"] if r["epsilon"] is not None else 0)
    v = judged["verdict"]
    summary = (f"at epsilon = {judged['epsilon']:g}: Interleaved {judged['interleaved']:.4g} against DP-ShuffleG "
               f"{judged['dp_shuffleg']:.4g}, Priv-Pub {judged['priv_pub']:.4g}, Pub-Priv {judged['pub_priv']:.4g}"
               + (f"; beaten by {judged['beaten_by']}" if judged["beaten_by"] != "-" else ""))
    return cited_result(check, f"{SEED}: §4.7.5 / Fig. 4.2 (Interleaved best at the smaller epsilon), §4.6.6 (L1752)",
                        ("003 §4.7.5 / Fig. 4.2",), v, summary, confidence=check.confidence, rows=rows,
                        measured=judged["interleaved"], bound=min(judged[o] for o in PRIVATE))


def public_only_suboptimal(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows = []
    for pt in points:
        pub = np.asarray(pt["instances"]["public_only"]["excess"])
        best = min(PRIVATE + ("interleaved",), key=lambda k: float(np.mean(pt["instances"][k]["excess"])))
        b = np.asarray(pt["instances"][best]["excess"])
        lo, hi = welch_one_sided(b, pub)                  # lo: the best private method below Public Only
        v = "pass" if lo < 1 - check.confidence else "fail" if hi < 1 - check.confidence else "inconclusive"
        rows.append({"epsilon": pt["value"], "public_only": float(pub.mean()), "best_private": best,
                     "best_private_excess": float(b.mean()), "p_value": lo, "verdict": v})
    judged = max(rows, key=lambda r: r["epsilon"] if r["epsilon"] is not None else 0)
    summary = (f"at epsilon = {judged['epsilon']:g}: Public Only {judged['public_only']:.4g} against the best "
               f"private method ({judged['best_private']}) {judged['best_private_excess']:.4g}")
    return cited_result(check, f"{SEED}: §4.7.5 / Fig. 4.2 (Public Only plateaus at a suboptimal loss)",
                        ("003 §4.7.5 / Fig. 4.2",), judged["verdict"], summary, confidence=check.confidence, rows=rows,
                        measured=judged["public_only"], bound=judged["best_private_excess"])


def privacy_term_order(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    p_, n_ = sp.symbols("p n", positive=True)
    gap = sp.factor(p_ * ((1 - p_) * n_ + 1) - 1)
    factored = sp.simplify(gap - (1 - p_) * (n_ * p_ - 1)) == 0
    rows, failed = [], False
    for pt in points:
        n, p = pt["params"]["n"], pt["params"]["p"]
        inter = (1 / (n * ((1 - p) * n + 1))) ** (2 / 3)
        pp = (p / n) ** (2 / 3)
        holds = inter <= pp * (1 + 1e-12)
        applies = p >= 1 / n
        failed = failed or (applies and not holds)
        s_int, s_pp = pt["instances"]["interleaved"]["sigma"], pt["instances"]["priv_pub"]["sigma"]
        K, S = pt["params"]["K"], pt["instances"]["priv_pub"]["S"]
        ratio = (s_int**2 * (1 + math.log(K))) / (s_pp**2 * (1 + math.log(S)))
        rows.append({"epsilon": pt["value"], "n": n, "p": p, "interleaved_term": inter, "priv_pub_term": pp,
                     "p_at_least_1_over_n": applies, "holds": holds, "noise_term_ratio_cor461": ratio})
    v = "fail" if failed or not factored else "pass"
    summary = (f"p((1-p)n+1) - 1 = {gap} (>= 0 exactly for p in [1/n, 1]); at n = {rows[0]['n']}, p = {rows[0]['p']}: "
               f"{rows[0]['interleaved_term']:.4g} <= {rows[0]['priv_pub_term']:.4g}; the corollaries' noise terms "
               f"at equal privacy and step: Interleaved / Priv-Pub = {rows[0]['noise_term_ratio_cor461']:.3g}")
    return exact_result(check, "§4.6.6", f"{SEED}: §4.6.6 (L1748) on Table 4.4's privacy terms", ("003 §4.6.6 (ordering)",),
                        v, summary, measured=rows[0]["interleaved_term"], bound=rows[0]["priv_pub_term"], rows=rows)


def dissimilarity_order(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, verdicts = [], []
    for pt in points:
        dv = pt["dissimilarity"]
        if dv is None:
            rows.append({"epsilon": pt["value"], "verdict": "inapplicable", "why": "not the mean loss"})
            verdicts.append("inapplicable")
            continue
        v = ("fail" if dv["C_part_lower"] > dv["C_full"] * (1 + 1e-12) + 1e-12 else
             "pass" if dv["C_part_upper"] <= dv["C_full"] else "inconclusive")
        verdicts.append(v)
        rows.append({"epsilon": pt["value"], **dv, "verdict": v})
    v = combine_verdicts(verdicts)
    r = next((x for x in rows if "C_full" in x), None)
    summary = ("no point has the mean loss" if r is None else
               f"C_n^full = {r['C_full']:.4g}; C_n^part in [{r['C_part_lower']:.4g}, {r['C_part_upper']:.4g}] "
               f"(m = {r['m']} public steps; its mean over uniform orders {r['C_part_rr_mean']:.4g})")
    claims = ("003 §4.6.6 (ordering)",) if v != "inapplicable" else ()
    return cited_result(check, f"{SEED}: §4.6.6 (L1750), Table 4.2", claims, v, summary, confidence=1.0, rows=rows,
                        measured=None if r is None else r["C_part_lower"], bound=None if r is None else r["C_full"],
                        theorem="§4.6.6", uncited="" if claims else "not the mean loss")


ShuffleGGridCheckFn = Callable[[Any, str, list[dict]], CheckResult]
SHUFFLEG_GRID_CHECKS: Registry[ShuffleGGridCheckFn] = Registry("shuffled-gradient comparison check kind")
SHUFFLEG_GRID_CHECKS.add("interleaved_best", interleaved_best)
SHUFFLEG_GRID_CHECKS.add("public_only_suboptimal", public_only_suboptimal)
SHUFFLEG_GRID_CHECKS.add("privacy_term_order", privacy_term_order)
SHUFFLEG_GRID_CHECKS.add("dissimilarity_order", dissimilarity_order)


def dpsgd_below_dp_shuffleg(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """§4.5.4 (L1475-1485): DP-ShuffleG's guarantee is worse than DP-SGD's. On the spec's problem, at every epsilon:
    one-sided Welch test of DP-SGD's mean final excess below DP-ShuffleG's (each at its tuned step, the same privacy
    and expected number of gradient evaluations). Pass when significantly below at every epsilon, fail when
    significantly above at one, else inconclusive."""
    rows = []
    for pt in points:
        sgd = np.asarray(pt["instances"]["dpsgd"]["excess"])
        shuf = np.asarray(pt["instances"]["dp_shuffleg"]["excess"])
        lo, hi = welch_one_sided(sgd, shuf)
        v = "pass" if lo < 1 - check.confidence else "fail" if hi < 1 - check.confidence else "inconclusive"
        rows.append({"epsilon": pt["value"], "dpsgd": float(sgd.mean()), "dp_shuffleg": float(shuf.mean()),
                     "p_value": lo, "dpsgd_noise_multiplier": pt["instances"]["dpsgd"]["noise_multiplier"],
                     "verdict": v})
    vs = [r["verdict"] for r in rows]
    v = "fail" if "fail" in vs else "pass" if all(x == "pass" for x in vs) else "inconclusive"
    summary = "; ".join(f"epsilon {r['epsilon']:g}: DP-SGD {r['dpsgd']:.4g} against DP-ShuffleG {r['dp_shuffleg']:.4g}"
                        for r in rows)
    worst = max(rows, key=lambda r: r["dpsgd"] / max(r["dp_shuffleg"], 1e-300))
    return cited_result(check, f"{SEED}: §4.5.4 (DP-ShuffleG against DP-SGD)", ("003 §4.5.4 (vs DP-SGD)",), v,
                        summary, confidence=check.confidence, rows=rows, measured=worst["dpsgd"],
                        bound=worst["dp_shuffleg"])


SHUFFLEG_GRID_CHECKS.add("dpsgd_below_dp_shuffleg", dpsgd_below_dp_shuffleg)


def _side(verdict: str) -> str:
    return {"pass": "pass", "fail": "fail"}.get(verdict, "undecided")


def _interleaved_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    row = min(r["rows"], key=lambda x: x["epsilon"] if x["epsilon"] is not None else 0)
    best = min(PRIVATE, key=lambda o: row[o])
    return Rule(f"at the smallest epsilon: one-sided Welch tests of Interleaved's mean final excess against "
                f"DP-ShuffleG, Priv-Pub and Pub-Priv, each at {(1 - r['confidence']) / len(PRIVATE):.3g} (Bonferroni); "
                f"pass iff it is significantly lower than all three, fail iff one is significantly lower than it",
                f"Interleaved {compare(row['interleaved'], row[best])[0]} ({best}, the best other; largest p "
                f"{max(row[f'p_{o}'] for o in PRIVATE):.2g})", _side(row["verdict"]))


def _public_only_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    row = max(r["rows"], key=lambda x: x["epsilon"] if x["epsilon"] is not None else 0)
    return Rule(f"at the largest epsilon: a one-sided Welch test at {1 - r['confidence']:.2g} of the best private "
                f"method's mean final excess against Public Only's; pass iff Public Only is significantly above, fail "
                f"iff significantly below", f"Public Only {compare(row['public_only'], row['best_private_excess'])[0]} "
                f"({row['best_private']}; p = {row['p_value']:.2g})", _side(row["verdict"]))


def _term_order_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    bad = [x for x in r["rows"] if x["p_at_least_1_over_n"] and not x["holds"]]
    row = bad[0] if bad else r["rows"][0]
    return Rule("fail iff SymPy's factorisation p((1-p)n+1) - 1 = (1-p)(np-1) fails or, at a point with p >= 1/n, "
                "Interleaved's privacy term exceeds Priv-Pub's; pass otherwise (exact)",
                f"Interleaved's term {compare(row['interleaved_term'], row['priv_pub_term'])[0]} (Priv-Pub's)",
                "fail" if bad or r["verdict"] == "fail" else "pass")


def _dissimilarity_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    row = next(x for x in r["rows"] if "C_full" in x)
    return Rule("fail iff C_n^part's lower bound (a searched order) exceeds C_n^full; pass iff its upper bound does "
                "not; else inconclusive (exact)", f"C_part in [{row['C_part_lower']:.4g}, {row['C_part_upper']:.4g}] "
                f"against C_full {row['C_full']:.4g}", side_of(r["rows"]))


def _dpsgd_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    row = max(r["rows"], key=lambda x: x["dpsgd"] / max(x["dp_shuffleg"], 1e-300))
    return Rule(f"at every epsilon: a one-sided Welch test at {1 - r['confidence']:.2g} of DP-SGD's mean final excess "
                f"against DP-ShuffleG's; pass iff significantly below at every epsilon, fail iff significantly above "
                f"at one", f"closest: DP-SGD {compare(row['dpsgd'], row['dp_shuffleg'])[0]} (DP-ShuffleG; p = "
                f"{row['p_value']:.2g}, epsilon {row['epsilon']:g})", side_of(r["rows"]))


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
SHUFFLEG_GRID_RULES = {"interleaved_best": _interleaved_rule, "public_only_suboptimal": _public_only_rule,
                       "privacy_term_order": _term_order_rule, "dissimilarity_order": _dissimilarity_rule,
                       "dpsgd_below_dp_shuffleg": _dpsgd_rule}
