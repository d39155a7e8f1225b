"""Checks of seed 002's §4.2 / Fig. 3 (Asi, Duchi, Javidi; Lnnn = line of ../shared/seeds/002_d3919fba655c6f58.txt):
numbers in (the points of catalog/element_fig3_002.py, one per k = clusters per user, each with the test errors of
the element-level, user-level and non-private runs at every eps, same data sets for the three methods), verdicts out.

The qualitative claims of L400, each an ordering decided by intervals at the check's confidence, Bonferroni over the
comparisons it makes; pass when every interval lies on the claimed side, fail when one lies entirely on the other,
inconclusive otherwise:
- ``el_error_falls_with_k``: at each eps, the element-level mean error at k_i minus that at k_{i+1} (consecutive k of
  the sweep), Welch interval (different k: independent data): > 0.
- ``nonprivate_falls_with_k``: the same for the non-private run.
- ``user_flat_in_k`` ("user-level private mechanisms exhibit little change on this axis"). OUR RULE for "little":
  the relative change of the user level between the smallest and the largest k is smaller in magnitude than the
  element level's decrease, on the log scale: with D_m = log(mean error at k_first) - log(mean error at k_last),
  both D_el - D_user > 0 and D_el + D_user > 0 (i.e. |D_user| < D_el), each by a delta-method interval (the element
  and user errors at one k are paired, same data; different k independent).
- ``faster_convergence_with_k`` ("the convergence of the error of the private ... method to that of the non-private
  error is faster for scenarios with more clusters"). OUR RULE: at each eps, the ratio (err_el - err_np)/err_np at
  the smallest k exceeds that at the largest k; tested as log(mean el / mean np) (= log(1 + ratio), paired within a
  k, delta method) at k_first minus at k_last > 0.
- ``element_below_user``: at every (eps, k), the paired difference user minus element > 0 (Student t).

Privacy of the runs (exact, confidence 1, or an audit):
- ``sgd_accounting``: under the spec's relation, at every (k, eps), the claimed eps (the run's calibration target:
  element, Cor 3.1 with Cor 2.5's pair gives eps at the chosen (q, sigma); user, Cor 3.2 at sigma / (K ^ M); the
  accountant's value at the run's parameters is shown beside it) against our exact epsilon of the worst
  realisable pair [optimistic, pessimistic] (element: a = k, b = k - 2; user: a = K ^ M, b = -(K ^ M)), Poisson
  sampling: the optimistic value above the claim fails, the pessimistic one at or below it passes, else inconclusive.
- ``sgd_audit``: the Clopper-Pearson lower bound of the audit of (15) itself (a canary, the released iterates) above the
  claimed epsilon fails; otherwise pass (not refuted: an audit bounds epsilon from below only).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np
from scipy import stats as sps

from algorithms.registry import Registry
from verifiers.checks.base import CheckResult, Rule, cite, cited_result, compare, exceeds, interval_side, side_of
from verifiers.stats import mean_ci

SEED = "seed 002 (Asi, Duchi, Javidi)"
CLAIMS_FIG3 = ("002 §4.2 / Fig. 3",)
CITE_FIG3 = (f"{SEED}: §4.2 / Fig. 3 (L383-402; the claims of L400), on the paper's own simulated model with its "
             f"unstated choices filled in")
CITE_ACC = {"element": f"{SEED}: Cor 3.1 (L329; Cor 2.5's eps_alpha, L138-142) at the run's (q, sigma, T), against our "
                       f"exact PLD of the worst element pair of users holding k clusters",
            "user": f"{SEED}: Cor 3.2 (L331; sigma_std = sigma/(K ^ M)) at the run's (q, sigma, T), against our exact PLD "
                    f"of the worst user pair"}
CLAIMS_ACC = {"element": ("002 Cor 3.1",), "user": ("002 Cor 3.2",)}
CITE_AUDIT = {"element": f"{SEED}: Cor 3.1 (L329), audited on iteration (15) (L319-325) with a canary user",
              "user": f"{SEED}: Cor 3.2 (L331), audited on iteration (15) (L319-325) with a canary user"}


def _errors(pt: dict, method: str, eps: float | None) -> np.ndarray:
    for r in pt["methods"][method]:
        if method == "nonprivate" or r["eps"] == eps:
            return np.asarray(r["errors"], float)
    raise KeyError(f"no {method} run at eps = {eps} in point k = {pt['k']}")


def welch(x: np.ndarray, y: np.ndarray, level: float) -> tuple[float, float, float]:
    """mean(x) - mean(y) and its two-sided Welch interval at ``level``."""
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    diff = float(x.mean() - y.mean())
    se = math.sqrt(vx + vy)
    if se == 0:
        return diff, diff, diff
    df = (vx + vy) ** 2 / (vx**2 / (x.size - 1) + vy**2 / (y.size - 1))
    t = float(sps.t.ppf(1 - (1 - level) / 2, df))
    return diff, diff - t * se, diff + t * se


def paired(x: np.ndarray, y: np.ndarray, level: float) -> tuple[float, float, float]:
    """mean(x - y) and its two-sided Student interval at ``level`` (x, y paired trial by trial)."""
    ci = mean_ci(x - y, level)
    return ci.mean, ci.lower, ci.upper


def log_ratio(x: np.ndarray, y: np.ndarray, sign: float = -1.0) -> tuple[float, float]:
    """log(mean x) + sign log(mean y) for paired x, y (same trials) and its delta-method variance."""
    mx, my = float(x.mean()), float(y.mean())
    c = np.cov(x, y, ddof=1) / x.size
    var = c[0, 0] / mx**2 + c[1, 1] / my**2 + 2 * sign * c[0, 1] / (mx * my)
    return math.log(mx) + sign * math.log(my), float(max(var, 0.0))


def _interval(est: float, var: float, level: float) -> tuple[float, float, float]:
    z = float(sps.norm.ppf(1 - (1 - level) / 2))
    return est, est - z * math.sqrt(var), est + z * math.sqrt(var)


def _verdict(rows: list[dict]) -> str:
    if any(r["upper"] < 0 for r in rows):
        return "fail"
    return "pass" if all(r["lower"] > 0 for r in rows) else "inconclusive"


def _summarise(what: str, rows: list[dict], level: float, label: Callable[[dict], str]) -> str:
    bad = [label(r) for r in rows if r["upper"] < 0]
    open_ = [label(r) for r in rows if r["lower"] <= 0 <= r["upper"]]
    s = f"{what}; {len(rows)} comparison(s), two-sided intervals at {level:.5g} each (Bonferroni)"
    if bad:
        s += f"; REVERSED at {', '.join(bad)}"
    if open_:
        s += f"; undecided at {', '.join(open_)}"
    if not bad and not open_:
        s += "; all on the claimed side"
    return s


def _sorted(points: list[dict]) -> list[dict]:
    return sorted(points, key=lambda pt: pt["k"])


def _inapplicable(check: Any, why: str) -> CheckResult:
    return cited_result(check, CITE_FIG3, CLAIMS_FIG3, "inapplicable", why, confidence=check.confidence, rows=[])


def _falls_with_k(check: Any, points: list[dict], method: str) -> CheckResult:
    pts = _sorted(points)
    if len(pts) < 2:
        return _inapplicable(check, "needs at least two values of k (a sweep of k)")
    epss = [None] if method == "nonprivate" else list(pts[0]["eps"])
    tests = len(epss) * (len(pts) - 1)
    level = 1 - (1 - check.confidence) / tests
    rows = []
    for e in epss:
        for a, b in zip(pts, pts[1:]):
            x, y = _errors(a, method, e), _errors(b, method, e)
            d, lo, hi = welch(x, y, level)
            rows.append({"eps": e, "k": a["k"], "next k": b["k"], "error at k": float(x.mean()),
                         "error at next k": float(y.mean()), "fall": d, "lower": lo, "upper": hi})
    name = {"element": "element-level", "nonprivate": "non-private"}[method]
    summary = _summarise(f"{name} mean final-iterate error at k minus at the next k (Welch)", rows, level,
                         lambda r: (f"eps = {r['eps']:g}, " if r["eps"] is not None else "") + f"k = {r['k']} -> "
                                   f"{r['next k']} ({r['error at k']:.3g} -> {r['error at next k']:.3g})")
    return cited_result(check, CITE_FIG3, CLAIMS_FIG3, _verdict(rows), summary, confidence=check.confidence, rows=rows,
                measured=min(r["fall"] for r in rows), bound=0.0)


def el_error_falls_with_k(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _falls_with_k(check, points, "element")


def nonprivate_falls_with_k(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _falls_with_k(check, points, "nonprivate")


def user_flat_in_k(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    pts = _sorted(points)
    if len(pts) < 2:
        return _inapplicable(check, "needs at least two values of k (a sweep of k)")
    first, last = pts[0], pts[-1]
    epss = list(first["eps"])
    level = 1 - (1 - check.confidence) / (2 * len(epss))
    rows = []
    for e in epss:
        ef, uf, el_, ul = (_errors(first, "element", e), _errors(first, "user", e), _errors(last, "element", e),
                           _errors(last, "user", e))
        d_el = math.log(ef.mean()) - math.log(el_.mean())
        d_us = math.log(uf.mean()) - math.log(ul.mean())
        for s, name in ((-1.0, "D_el - D_user"), (1.0, "D_el + D_user")):
            # D_el + s D_user = [log mean el + s log mean user at k_first] - [the same at k_last]
            a, va = log_ratio(ef, uf, s)
            b, vb = log_ratio(el_, ul, s)
            est, lo, hi = _interval(a - b, va + vb, level)
            rows.append({"eps": e, "test": name, "D_el (log fall, element)": d_el, "D_user (log fall, user)": d_us,
                         "user error k_first": float(uf.mean()), "user error k_last": float(ul.mean()),
                         "estimate": est, "lower": lo, "upper": hi})
    summary = _summarise(f"|relative change of the user level| < relative fall of the element level between k = "
                         f"{first['k']} and k = {last['k']} (log scale, delta method)", rows, level,
                         lambda r: f"eps = {r['eps']:g} ({r['test']}: D_el = {r['D_el (log fall, element)']:.3g}, "
                                   f"D_user = {r['D_user (log fall, user)']:.3g})")
    return cited_result(check, CITE_FIG3, CLAIMS_FIG3, _verdict(rows), summary, confidence=check.confidence, rows=rows,
                measured=max(abs(r["D_user (log fall, user)"]) for r in rows), bound=None)


def faster_convergence_with_k(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    pts = _sorted(points)
    if len(pts) < 2:
        return _inapplicable(check, "needs at least two values of k (a sweep of k)")
    first, last = pts[0], pts[-1]
    epss = list(first["eps"])
    level = 1 - (1 - check.confidence) / len(epss)
    rows = []
    for e in epss:
        a, va = log_ratio(_errors(first, "element", e), _errors(first, "nonprivate", None))
        b, vb = log_ratio(_errors(last, "element", e), _errors(last, "nonprivate", None))
        est, lo, hi = _interval(a - b, va + vb, level)
        rows.append({"eps": e, "k_first": first["k"], "k_last": last["k"], "(el - np)/np at k_first": math.expm1(a),
                     "(el - np)/np at k_last": math.expm1(b), "log-ratio difference": est, "lower": lo, "upper": hi})
    summary = _summarise(f"(err_el - err_np)/err_np at k = {first['k']} above that at k = {last['k']} (as log(1 + "
                         "ratio), paired within k, delta method)", rows, level,
                         lambda r: f"eps = {r['eps']:g} ({r['(el - np)/np at k_first']:.3g} vs "
                                   f"{r['(el - np)/np at k_last']:.3g})")
    return cited_result(check, CITE_FIG3, CLAIMS_FIG3, _verdict(rows), summary, confidence=check.confidence, rows=rows,
                measured=min(r["log-ratio difference"] for r in rows), bound=0.0)


def element_below_user(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    pts = _sorted(points)
    tests = sum(len(pt["eps"]) for pt in pts)
    level = 1 - (1 - check.confidence) / max(tests, 1)
    rows = []
    for pt in pts:
        for e in pt["eps"]:
            u, el = _errors(pt, "user", e), _errors(pt, "element", e)
            d, lo, hi = paired(u, el, level)
            rows.append({"k": pt["k"], "eps": e, "user": float(u.mean()), "element": float(el.mean()),
                         "user - element": d, "lower": lo, "upper": hi})
    summary = _summarise("user-level minus element-level final-iterate error, same data (paired t)", rows, level,
                         lambda r: f"k = {r['k']}, eps = {r['eps']:g}")
    return cited_result(check, CITE_FIG3, CLAIMS_FIG3, _verdict(rows), summary, confidence=check.confidence, rows=rows,
                measured=min(r["user - element"] for r in rows), bound=0.0)


def sgd_accounting(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    unit = points[0]["relation"]["unit"]
    rows, why, passed, open_, failed = [], [], 0, 0, False
    for pt in _sorted(points):
        for acc in pt["accounting"]:
            a = acc[unit]
            claim, lo, hi = acc["eps"], a["exact_lower"], a["exact_upper"]
            if lo is not None and exceeds(lo, claim):        # lo None: not computed, the upper end is within
                failed = True
                verdict = "fail"
                why.append(f"k = {pt['k']}, eps = {acc['eps']:g}: exact >= {lo:.4g} > {claim:.4g}")
            elif hi <= claim:
                passed += 1
                verdict = "pass"
            else:
                open_ += 1
                verdict = "inconclusive"
            rows.append({"k": pt["k"], "claimed eps": claim, "q": a["q"], "sigma": a["sigma"],
                         "paper's accountant at (q, sigma)": a["claim"], "pair a": a["pair"][0], "pair b": a["pair"][1],
                         "exact lower": lo, "exact upper": hi, "exact / claim": hi / claim, "verdict": verdict})
    verdict = "fail" if failed else "inconclusive" if open_ else "pass" if passed else "inapplicable"
    ratio = [r["exact / claim"] for r in rows]
    worst = max(rows, key=lambda r: r["exact / claim"])        # measured and bound from one row: the worst cell
    summary = (f"the eps each run was calibrated to by {'Cor 3.1' if unit == 'element' else 'Cor 3.2'} (its value at the "
               f"run's chosen (q, sigma), T = {points[0]['params']['T']}, is shown) against our exact epsilon of the worst "
               f"{unit} pair, Poisson sampling: "
               f"exact / claim from {min(ratio):.3g} to {max(ratio):.3g}; "
               + (f"{len(why)} above the claim: " + "; ".join(why[:5]) + ("; ..." if len(why) > 5 else "") if why else
                  f"{passed} within the claim" + (f", {open_} open" if open_ else "")))
    return CheckResult(id=check.id, kind=check.kind, theorem="002 Cor 3.1" if unit == "element" else "002 Cor 3.2",
                       citation=cite(CITE_ACC[unit], CLAIMS_ACC[unit]), verdict=verdict,
                       measured=worst["exact upper"], bound=worst["claimed eps"],
                       confidence=1.0, summary=summary, rows=tuple(rows), claims=CLAIMS_ACC[unit])


def sgd_audit(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    unit = points[0]["relation"]["unit"]
    rows, why, miss = [], [], 0.0
    for pt in _sorted(points):
        au = pt.get("audit")
        if not au:
            continue
        miss += 1 - au["confidence"]
        if au["epsilon_lower"] > au["claim"]:
            why.append(f"k = {pt['k']}: lower bound {au['epsilon_lower']:.4g} > claimed {au['claim']:.4g}")
        rows.append({"k": pt["k"], "eps": au["eps"], "method": au["method"], "q": au["q"], "sigma": au["sigma"],
                     "pair a": au["pair"][0], "pair b": au["pair"][1], "claimed eps": au["claim"],
                     "paper's accountant at (q, sigma)": au["paper"],
                     "audit lower bound": au["epsilon_lower"], "false positives": au["false_positives"],
                     "false negatives": au["false_negatives"], "trials per side": au["trials_per_side"]})
    if not rows:
        verdict, conf = "inapplicable", 1.0
        summary = "no point ran the audit (params.audit_trials = 0)"
    else:
        conf = max(0.0, 1 - miss)
        verdict = "fail" if why else "pass"
        summary = (f"Clopper-Pearson lower bound on epsilon ({conf:.4g} family-wise) from the released iterates of (15) "
                   "with a canary user, against the claimed eps (the calibration target): "
                   + ("; ".join(why) if why else "never above it: not refuted (an audit can only refute)"))
    return CheckResult(id=check.id, kind=check.kind, theorem="002 Cor 3.1" if unit == "element" else "002 Cor 3.2",
                       citation=cite(CITE_AUDIT[unit], CLAIMS_ACC[unit]), verdict=verdict,
                       measured=max((r["audit lower bound"] for r in rows), default=None),
                       bound=min((r["claimed eps"] for r in rows), default=None), confidence=conf, summary=summary,
                       rows=tuple(rows), claims=CLAIMS_ACC[unit])


Fig3CheckFn = Callable[[Any, str, list[dict]], CheckResult]
FIG3_CHECKS: Registry[Fig3CheckFn] = Registry("element Fig. 3 check kind")
FIG3_CHECKS.add("el_error_falls_with_k", el_error_falls_with_k)
FIG3_CHECKS.add("nonprivate_falls_with_k", nonprivate_falls_with_k)
FIG3_CHECKS.add("user_flat_in_k", user_flat_in_k)
FIG3_CHECKS.add("faster_convergence_with_k", faster_convergence_with_k)
FIG3_CHECKS.add("element_below_user", element_below_user)
FIG3_CHECKS.add("sgd_accounting", sgd_accounting)
FIG3_CHECKS.add("sgd_audit", sgd_audit)


def _interval_rule(what: str) -> Callable[[Mapping[str, Any], Mapping[str, Any]], Rule]:
    """The five interval kinds above share their rule: every comparison's two-sided interval (Bonferroni) above 0
    passes, one below 0 fails."""
    def rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
        w = min(r["rows"], key=lambda x: x["lower"])
        return Rule(f"{what}: pass iff every comparison's two-sided interval (Bonferroni over {len(r['rows'])}) lies "
                    f"above 0, fail iff one lies below 0; else inconclusive",
                    f"lowest interval [{w['lower']:.3g}, {w['upper']:.3g}]" + (f" (eps = {w['eps']:g})"
                                                                              if w.get("eps") is not None else ""),
                    interval_side(r["rows"]))
    return rule


def _accounting_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["exact / claim"])
    return Rule("per k: fail iff the exact epsilon of the run's worst pair (lower end) exceeds the claimed epsilon; pass "
                "iff its upper end is at most the claim; else inconclusive (exact)",
                f"exact upper {compare(w['exact upper'], w['claimed eps'])[0]} (claimed) at k = {w['k']}",
                side_of(r["rows"]))


def _audit_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["audit lower bound"] - x["claimed eps"])
    return Rule("fail iff the canary audit's Clopper-Pearson epsilon lower bound exceeds the claimed epsilon at some k; "
                "pass otherwise (one-sided: an audit can only refute)",
                f"lower bound {compare(w['audit lower bound'], w['claimed eps'])[0]} (claimed) at k = {w['k']}",
                "fail" if any(x["audit lower bound"] > x["claimed eps"] for x in r["rows"]) else "pass")


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
FIG3_RULES = {"el_error_falls_with_k": _interval_rule("element-level error at k minus at the next k (Welch)"),
              "nonprivate_falls_with_k": _interval_rule("non-private error at k minus at the next k (Welch)"),
              "user_flat_in_k": _interval_rule("D_el -+ D_user, the element level's log fall against the user "
                                               "level's change (delta method)"),
              "faster_convergence_with_k": _interval_rule("the element level's log excess over non-private, first k "
                                                          "minus last k"),
              "element_below_user": _interval_rule("user-level minus element-level error (paired)"),
              "sgd_accounting": _accounting_rule, "sgd_audit": _audit_rule}
