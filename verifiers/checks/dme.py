"""Checks of seed 003 chapter 2's distributed mean estimators (the ``dme`` mechanism, catalog/dme_003.py): numbers in,
verdicts out. Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt.

- ``mse_identity``: each estimator with a closed-form MSE against its runs: Rand-k (Eq. 2.1, any vectors), Rand-k
  after one rotation shared by every client (App. A.1.1: Eq. 2.1 unchanged),
  Rand-Proj-Spatial with T = 1 (Thm 2.4.4 / Eq. 2.10, stated for orthogonal vectors; its proof does not use
  orthogonality), Rand-k-Spatial with each T (Eq. 2.3's form, its c1 and c2 derived exactly: notes 003a §1.3). A
  two-sided Student interval of the mean squared error at the check's confidence (Bonferroni over the estimators
  and points) must hold the closed form: pass when every one does, fail when one does not.
- ``thm243``: Thm 2.4.3 (Eq. 2.9) for Rand-Proj-Spatial(Max) on identical vectors: the measured MSE against the
  bound [d/((1 - delta)nk + delta k) - 1]||x||^2 with delta the measured share of rank-deficient S. The proof's
  identity MSE = (betabar - 1)||x||^2 (A.12, betabar = d / E[rank S]) makes the bound tight when delta = 0, so the
  rule is: fail when the interval's lower end is above the bound (beyond float slack), else pass when the interval
  holds the identity's value and that value is at most the bound; otherwise inconclusive. (The identity's value is
  at most the bound almost by construction, rank S >= k: the decision rests on the measured MSE.)
- ``unbiased_estimators``: every estimator's mean error, W = sum_j bias_j^2 / sum_j se_j^2 against its weighted
  chi-square (Welch-Satterthwaite), Bonferroni over estimators and points: fail when it exceeds the critical value.
- ``mse_ordering``: the chapter's orderings by one-sided Welch tests (Bonferroni over the pairs): identical vectors
  (§2.4.1 / Fig. 2.2): RPS(Max) < Rand-k-Spatial(Max) < Rand-k; groups of shared basis vectors with R > 0 (§2.4.3 /
  Fig. 2.3): RPS with Eq. 2.11's T < Rand-k-Spatial(Opt) and < Rand-k. Where the higher one has a closed form its
  exact MSE is used (a one-sample test). Pass when every pair is significant, fail when one is significant the other
  way, else inconclusive.
- ``lemma241`` (Lemma 2.4.1): Eq. 2.5 with G_i = E_i decoded by the generic decoder equals Rand-k-Spatial (Eq. 2.2)
  on the same runs, to float rounding, for every T.
- ``a32_condition`` (App. A.3.2): Eq. 2.9's bound is at most Rand-k's MSE (identical vectors) iff delta <= kn/(d +
  kn - k) (sufficient for RPS(Max) <= Rand-k, not necessary); the thesis adds "for n >= 2, delta <= 2/3 suffices",
  reaching 2/3 by a step that reverses the inequality. Exact over a grid of (n, k, d) with n k <= d: the threshold
  against 2/3 (SymPy: kn/(d + kn - k) <= n/(2n - 1) <= 2/3 whenever d >= nk, n >= 2); and at the spec's points the
  measured delta against the threshold (the comparison itself, with the MSEs).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np
import sympy as sp
from scipy import stats

from algorithms.registry import Registry
from verifiers.checks.base import CheckResult, Rule, cited_result, combine_verdicts, compare, exact_result, side_of
from verifiers.checks.dme_tasks import spatial_vs_randk
from verifiers.stats import mean_ci, welch_one_sided

SEED = "seed 003 (Jiang's thesis) ch. 2"
CLAIM = {"rand_k": "003 Eq. 2.1", "rps_one": "003 Thm 2.4.4 / Thm 4.4 (A.3.4), Eq. 2.10",
         "rand_k_rotated": "003 App. A.1.1"}


def mse_identity(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    items = [(pt, name, e) for pt in points for name, e in pt["estimators"].items()
             if e["closed_form"] is not None and not name.startswith("rps_max")]
    level = 1 - (1 - check.confidence) / max(len(items), 1)
    rows, failed, claims = [], False, set()
    for pt, name, e in items:
        ci = mean_ci(np.asarray(e["sq_error"]), level)
        ok = ci.lower <= e["closed_form"] * (1 + 1e-9) + 1e-12 and e["closed_form"] <= ci.upper * (1 + 1e-9) + 1e-12
        failed = failed or not ok
        claims.add(CLAIM.get(name, "003 Eq. 2.3"))
        rows.append({"point": pt["value"], "estimator": name, "R": pt["R"], "mse": ci.mean, "lower": ci.lower,
                     "upper": ci.upper, "closed_form": e["closed_form"], "source": e["closed_form_source"],
                     "ratio": ci.mean / e["closed_form"] if e["closed_form"] else math.nan,
                     "verdict": "pass" if ok else "fail"})
    v = "fail" if failed else "pass" if rows else "inapplicable"
    worst = max(rows, key=lambda r: abs(r["ratio"] - 1) if r["ratio"] == r["ratio"] else 0, default=None)
    summary = ("no closed form at these points" if worst is None else
               f"{len(rows)} estimator-points; largest deviation: {worst['estimator']} at {worst['point']}: MSE "
               f"{worst['mse']:.5g} [{worst['lower']:.5g}, {worst['upper']:.5g}] against {worst['closed_form']:.5g}")
    return cited_result(check, f"{SEED}: Eq. 2.1, Eq. 2.3, Thm 2.4.4 (Eq. 2.10)", tuple(sorted(claims)), v, summary,
                        confidence=check.confidence, rows=rows,
                        measured=None if worst is None else worst["mse"],
                        bound=None if worst is None else worst["closed_form"], uncited="" if claims else "none")


def thm243(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, verdicts = [], []
    for pt in points:
        if pt["params"]["vectors"] != "identical":
            rows.append({"point": pt["value"], "verdict": "inapplicable", "why": "not identical vectors"})
            verdicts.append("inapplicable")
            continue
        p = pt["params"]
        d, n, k = p["d"], p["n"], p["k"]
        x2 = pt["norm2_sum"] / n
        delta = pt["rank"]["deficient"] / pt["rank"]["runs"]
        bound = (d / ((1 - delta) * n * k + delta * k) - 1) * x2
        e = pt["estimators"]["rps_max"]
        ci = mean_ci(np.asarray(e["sq_error"]), check.confidence)
        ident = e["closed_form"]
        slack = 1e-9 * bound + 1e-12
        if ci.lower > bound + slack:
            v = "fail"
        elif ci.lower - slack <= ident <= ci.upper + slack and ident <= bound + slack:
            v = "pass"
        else:
            v = "inconclusive"
        verdicts.append(v)
        rows.append({"point": pt["value"], "n": n, "k": k, "d": d, "delta": delta, "mean_rank": pt["rank"]["mean"],
                     "mse": ci.mean, "lower": ci.lower, "upper": ci.upper, "identity": ident, "bound": bound,
                     "rand_k_spatial_max": float(np.mean(pt["estimators"]["rand_k_spatial_max"]["sq_error"])),
                     "verdict": v})
    v = combine_verdicts(verdicts)
    judged = [r for r in rows if "bound" in r]
    worst = max(judged, key=lambda r: r["mse"] / r["bound"], default=None)
    summary = ("no identical-vector point" if worst is None else
               f"at {worst['point']}: MSE {worst['mse']:.5g} [{worst['lower']:.5g}, {worst['upper']:.5g}], the proof's "
               f"(betabar - 1)||x||^2 = {worst['identity']:.5g}, the bound {worst['bound']:.5g} (delta = "
               f"{worst['delta']:.3g})")
    return cited_result(check, f"{SEED}: Thm 2.4.3 (Eq. 2.9) with A.9-A.12", ("003 Thm 2.4.3 / Thm 4.3 (A.3.1), Eq. 2.9",)
                        if v != "inapplicable" else (), v, summary, confidence=check.confidence, rows=rows,
                        measured=None if worst is None else worst["mse"],
                        bound=None if worst is None else worst["bound"], uncited="" if v != "inapplicable" else "none")


def unbiased(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """W = sum_j mean_error_j^2 / sum_j se_j^2 (about 1 without bias; a bias b adds ||b||^2 / sum se^2) against the
    weighted chi-square it follows, by Welch-Satterthwaite's degrees of freedom (sum se^2)^2 / sum se^4, at the
    check's confidence with Bonferroni over estimators and points. One statistic per estimator: a per-coordinate
    maximum would rest on normal tails that rare-event coordinates (a coordinate sent in 2% of the runs) do not have."""
    items = [(pt, name, e) for pt in points for name, e in pt["estimators"].items()]
    q = 1 - (1 - check.confidence) / len(items)
    rows, failed = [], False
    for pt, name, e in items:
        b, se = np.asarray(e["bias"]), np.asarray(e["bias_se"])
        v2 = se**2
        W = float(np.sum(b**2) / np.sum(v2))
        df = float(np.sum(v2) ** 2 / np.sum(v2**2))
        crit = float(stats.chi2.ppf(q, df) / df)
        bad = W > crit
        failed = failed or bad
        rows.append({"point": pt["value"], "estimator": name, "W": W, "critical": crit, "df": df,
                     "bias_norm": float(np.linalg.norm(b)), "verdict": "fail" if bad else "pass"})
    worst = max(rows, key=lambda r: r["W"] / r["critical"])
    summary = (f"largest W = sum bias^2 / sum se^2: {worst['W']:.3g} ({worst['estimator']} at {worst['point']}; "
               f"critical {worst['critical']:.3g}, df {worst['df']:.0f}); about 1 without bias")
    claims = ("003 Eq. 2.1", "003 Eq. 2.3")
    return cited_result(check, f"{SEED}: the estimators' unbiasedness (§2.2, Eqs. 2.2, 2.5)", claims,
                        "fail" if failed else "pass", summary, confidence=check.confidence, rows=rows,
                        measured=worst["W"], bound=worst["critical"])


def mse_ordering(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    pairs_by: list[tuple[dict, str, str, str]] = []
    for pt in points:
        kind = pt["params"]["vectors"]
        if kind == "identical":
            chain = [("rps_max", "rand_k_spatial_max"), ("rand_k_spatial_max", "rand_k")]
            claim = "003 §2.4.1 / Fig. 2.2"
        elif kind == "groups" and pt["R"] > 0:
            chain = [("rps_opt", "rand_k_spatial_opt"), ("rps_opt", "rand_k")]
            claim = "003 §2.4.3 / Fig. 2.3 / App. A.2.4"
        else:
            continue
        pairs_by += [(pt, a, b, claim) for a, b in chain]
    if not pairs_by:
        return cited_result(check, f"{SEED}: §2.4.1 / Fig. 2.2, §2.4.3 / Fig. 2.3", (), "inapplicable",
                            "no point with correlated vectors", confidence=check.confidence, rows=[],
                            uncited="no correlated point")
    level = (1 - check.confidence) / len(pairs_by)
    rows, verdicts = [], []
    for pt, a, b, claim in pairs_by:
        ea, eb = np.asarray(pt["estimators"][a]["sq_error"]), np.asarray(pt["estimators"][b]["sq_error"])
        closed = pt["estimators"][b]["closed_form"]
        if closed is not None:       # the higher one's MSE is exact: a one-sample test of the lower one against it
            t = stats.ttest_1samp(ea, closed)
            half = float(t.pvalue) / 2
            lo, hi = (half, 1 - half) if t.statistic < 0 else (1 - half, half)
            eb = np.array([closed])
        else:
            lo, hi = welch_one_sided(ea, eb)
        v = "pass" if lo < level else "fail" if hi < level else "inconclusive"
        verdicts.append(v)
        rows.append({"point": pt["value"], "R": pt["R"], "lower": a, "higher": b, "mse_lower": float(ea.mean()),
                     "mse_higher": float(eb.mean()), "p_value": lo, "claim": claim, "verdict": v})
    v = "fail" if "fail" in verdicts else "pass" if all(x == "pass" for x in verdicts) else "inconclusive"
    worst = max(rows, key=lambda r: r["mse_lower"] / max(r["mse_higher"], 1e-300))
    summary = (f"{len(rows)} pairs; closest: {worst['lower']} {worst['mse_lower']:.4g} against {worst['higher']} "
               f"{worst['mse_higher']:.4g} at {worst['point']} (R = {worst['R']:.3g})")
    claims = tuple(sorted({r["claim"] for r in rows}))
    return cited_result(check, f"{SEED}: §2.4.1 / Fig. 2.2, §2.4.3 / Fig. 2.3", claims, v, summary,
                        confidence=check.confidence, rows=rows, measured=worst["mse_lower"], bound=worst["mse_higher"])


def a32_condition(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    n_, k_, d_ = sp.symbols("n k d", positive=True)
    thr = k_ * n_ / (d_ + k_ * n_ - k_)
    # at d = n k the threshold is its largest over d >= n k: n / (2n - 1), which is at most 2/3 for n >= 2
    at_dmin = sp.simplify(thr.subs(d_, n_ * k_) - n_ / (2 * n_ - 1)) == 0
    rows, below = [], 0
    for d in (64, 256, 1024, 4096):
        for n in (2, 3, 5, 10, 20, 50, 100):
            for k in (1, 2, 4, 8, 16, 64):
                if n * k > d:
                    continue
                t = k * n / (d + k * n - k)
                below += t < 2 / 3 - 1e-12
                rows.append({"d": d, "n": n, "k": k, "threshold": t, "below_2_3": t < 2 / 3 - 1e-12})
    at_points = []
    for pt in points:
        p = pt["params"]
        if p["vectors"] != "identical":
            continue
        t = p["k"] * p["n"] / (p["d"] + p["k"] * p["n"] - p["k"])
        delta = pt["rank"]["deficient"] / pt["rank"]["runs"]
        at_points.append({"point": pt["value"], "delta": delta, "threshold": t,
                          "rps_max": float(np.mean(pt["estimators"]["rps_max"]["sq_error"])),
                          "rand_k": pt["estimators"]["rand_k"]["closed_form"]})
    v = "fail" if below else "pass"
    summary = (f"the threshold kn/(d + kn - k) is below 2/3 at {below} of {len(rows)} grid points with n >= 2, n k <= d "
               f"(its largest value, at d = n k, is n/(2n - 1): {'verified' if at_dmin else 'NOT verified'} by SymPy), "
               "so delta <= 2/3 does not imply the A.3.2 condition (the thesis's step reverses the inequality)")
    if at_points:
        cond = all(a["delta"] <= a["threshold"] for a in at_points)
        comp = all(a["rps_max"] <= a["rand_k"] for a in at_points)
        summary += (f"; at the spec's {len(at_points)} points delta {'<=' if cond else '> at some point'} the threshold "
                    f"and RPS(Max) {'<=' if comp else '> at some point'} Rand-k (measured against the closed form)")
    return exact_result(check, "App. A.3.2", f"{SEED}: App. A.3.2 (the comparison with Rand-k and its sufficient "
                        "condition)", ("003 App. A.3.2",), v, summary, measured=float(below), bound=0.0,
                        rows=rows + at_points)


def lemma241(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Lemma 2.4.1 (A.3.5): Eq. 2.5 with G_i = E_i reproduces Rand-k-Spatial for any T. Exact: the same runs decoded
    by the generic decoder of Eq. 2.5 and by Eq. 2.2 per coordinate must agree to float rounding (1e-9 relative) for
    T = 1, Max, Opt and Avg."""
    rows, failed = [], False
    for pt in points:
        for name, diff in pt["lemma241"]["max_rel_diff"].items():
            bad = diff > 1e-9
            failed = failed or bad
            rows.append({"point": pt["value"], "T": name, "runs": pt["lemma241"]["runs"], "max_rel_diff": diff,
                         "verdict": "fail" if bad else "pass"})
    worst = max(rows, key=lambda r: r["max_rel_diff"])
    summary = (f"largest relative difference between Eq. 2.5 (G_i = E_i) and Eq. 2.2 over {len(rows)} (point, T) "
               f"pairs: {worst['max_rel_diff']:.2g} (T = {worst['T']})")
    return exact_result(check, "Lemma 2.4.1", f"{SEED}: Lemma 2.4.1 (A.3.5)", ("003 Lemma 2.4.1 / Lemma 4.1 (A.3.5)",),
                        "fail" if failed else "pass", summary, measured=worst["max_rel_diff"], bound=1e-9, rows=rows)


DmeCheckFn = Callable[[Any, str, list[dict]], CheckResult]
DME_CHECKS: Registry[DmeCheckFn] = Registry("distributed mean estimation check kind")
DME_CHECKS.add("mse_identity", mse_identity)
DME_CHECKS.add("thm243", thm243)
DME_CHECKS.add("unbiased_estimators", unbiased)
DME_CHECKS.add("mse_ordering", mse_ordering)
DME_CHECKS.add("a32_condition", a32_condition)
DME_CHECKS.add("lemma241", lemma241)
DME_CHECKS.add("spatial_vs_randk", spatial_vs_randk)     # §2.3.3: verifiers/checks/dme_tasks.py


def _identity_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    out = [x for x in rows if not (x["lower"] <= x["closed_form"] * (1 + 1e-9) + 1e-12
                                   and x["closed_form"] <= x["upper"] * (1 + 1e-9) + 1e-12)]
    w = max(rows, key=lambda x: abs(x["ratio"] - 1) if x["ratio"] == x["ratio"] else 0)
    return Rule(f"pass iff every estimator's Monte Carlo MSE interval ({r['confidence']:g}, Bonferroni over the "
                f"estimator-points) contains its closed form; fail otherwise (a two-sided test)",
                f"largest deviation: {w['estimator']} MSE {w['mse']:.5g} [{w['lower']:.5g}, {w['upper']:.5g}] against "
                f"{w['closed_form']:.5g}", "fail" if out else "pass")


def _thm243_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = [x for x in r["rows"] if "bound" in x]
    sides = []
    for x in rows:
        slack = 1e-9 * x["bound"] + 1e-12
        sides.append("fail" if x["lower"] > x["bound"] + slack else
                     "pass" if x["lower"] - slack <= x["identity"] <= x["upper"] + slack and
                     x["identity"] <= x["bound"] + slack else "undecided")
    w = max(rows, key=lambda x: x["mse"] / x["bound"])
    return Rule(f"per identical-vector point: fail iff the MSE interval's lower end ({r['confidence']:g}) is above Eq. "
                f"2.9's bound at the measured rank deficiency; pass iff the interval holds the proof's (betabar - "
                f"1)||x||^2 and that is within the bound; else inconclusive",
                f"MSE {compare(w['mse'], w['bound'])[0]} (the bound; delta {w['delta']:.3g})",
                "fail" if "fail" in sides else "pass" if sides and all(v == "pass" for v in sides) else "undecided")


def _unbiased_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["W"] / x["critical"])
    return Rule("per estimator and point: W = sum bias^2 / sum se^2 against its weighted chi-square's critical value "
                "(Welch-Satterthwaite df, Bonferroni); fail iff some W exceeds it, pass otherwise",
                f"largest W {w['W']:.3g} against {w['critical']:.3g} ({w['estimator']} at {w['point']})",
                "fail" if any(x["W"] > x["critical"] for x in r["rows"]) else "pass")


def _ordering_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["mse_lower"] / max(x["mse_higher"], 1e-300))
    return Rule(f"per claimed pair: a one-sided test (Welch, or one-sample against the higher one's exact MSE) at "
                f"{1 - r['confidence']:.2g} / {len(r['rows'])} (Bonferroni); pass iff every lower one is significantly "
                f"below, fail iff one is significantly above", f"closest: {w['lower']} "
                f"{compare(w['mse_lower'], w['mse_higher'])[0]} ({w['higher']}; p = {w['p_value']:.2g})",
                side_of(r["rows"]))


def _a32_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    grid = [x for x in r["rows"] if "below_2_3" in x]
    below = sum(bool(x["below_2_3"]) for x in grid)
    return Rule("fail iff, over a grid of (n >= 2, k, d) with n k <= d, the exact threshold kn/(d + kn - k) of App. "
                "A.3.2's condition falls below 2/3 somewhere (then 'delta <= 2/3 suffices' does not follow); pass "
                "otherwise (exact)", f"below 2/3 at {below} of {len(grid)} grid points",
                "fail" if below else "pass")


def _lemma241_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["max_rel_diff"])
    return Rule("fail iff Eq. 2.5 with G_i = E_i and Rand-k-Spatial's Eq. 2.2 differ by more than 1e-9 (relative) on "
                "the same runs for some T; pass otherwise (exact)",
                f"largest relative difference {w['max_rel_diff']:.2g} (T = {w['T']})",
                "fail" if any(x["max_rel_diff"] > 1e-9 for x in r["rows"]) else "pass")


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
DME_RULES = {"mse_identity": _identity_rule, "thm243": _thm243_rule, "unbiased_estimators": _unbiased_rule,
             "mse_ordering": _ordering_rule, "a32_condition": _a32_rule, "lemma241": _lemma241_rule}
