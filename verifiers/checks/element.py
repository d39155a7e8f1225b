"""Checks of seed 002's element-level mechanisms (catalog/element_002.py: heavy hitters (7), the clipped histogram
(9); Lnnn = line of ../shared/seeds/002_d3919fba655c6f58.txt): numbers in, verdicts out.

- ``element_privacy`` (exact, confidence 1): under the spec's neighbouring relation, (a) no pair the search over
  neighbouring users finds is farther apart than the derived sensitivity (under any relation: a derivation below a
  found pair is a bug or a finding); (b) the claim (ii): the exact delta(eps) of the Gaussian release at the
  sensitivity is at most the claimed delta; (c) the claim (i): D_alpha at sigma^2 = alpha/eps is at most eps.
  Element relations decide Lemma 3.1 (with Eq. (1), Eq. (6): heavy hitters) or Lemma 3.2 (histogram); the user
  relation decides heavy hitters' user-level release, Eq. (1) at gs = sqrt(2m) (L184); the histogram's user-level
  release (rho = m, "global sensitivity rho = m", L238) is no inventory row.
- ``element_audit``: the audit's epsilon lower bound (Clopper-Pearson, the worst pair the search found) above the
  claimed epsilon fails; otherwise it passes as "not refuted" (an audit bounds epsilon from below only).
- ``ordering_loss`` (heavy hitters): Prop. 1 (L190-199): E[mis-ordered pairs at separation >= gamma] <= t^2, the
  mean over trials with one-sided limits per point (Bonferroni over points): the upper limit is the smaller of the
  Student-t one and an exact, distribution-free one (the count is at most the number of separated pairs times
  1{count > 0}, whose probability has a Clopper-Pearson limit: the only usable limit when no trial mis-orders any
  pair); pass if every upper limit is at most t^2, fail if a lower limit exceeds it. Points with p1 > 1/(2m) (the proposition's condition) or with no pair
  at separation gamma (the bound cannot fail) are inapplicable.
- ``element_vs_user``: the paired difference (user level minus element level, same data) of the loss (mis-ordered
  pairs; squared error summed over items): the element level better at every point (lower limit > 0) passes, the
  user level better anywhere (upper limit < 0) fails (Prop. 1's comparison, L201-203; Prop. 2's, L237-241).
- ``mse_rate`` (histogram, a sweep of n or eps): the log-log slope of the measured MSE against the swept variable
  against the slope of Prop. 2's bracket sum_j (m p_j/n + sigma^2 rho^2/n^2) (L233) at the same points: the
  confidence interval of the measured slope within the predicted one +- RATE_TOL passes, entirely outside fails.
- ``finer_partition`` (histogram, a sweep of K): Sec. 4.1 / Fig. 2's "finer partitions are better": the element-level
  MSE falls at every step of K (its ratio to the non-private MSE is shown, as Fig. 2 plots it).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np
from scipy import stats as sps

from algorithms.registry import Registry
from verifiers.audit import clopper_pearson_upper
from verifiers.checks.base import CheckResult, Rule, at, cited_result, compare, exceeds, interval_side, side_of
from verifiers.stats import mean_ci, weighted_slope

SEED = "seed 002 (Asi, Duchi, Javidi)"
RATE_TOL = 0.1
CLAIMS_PRIVACY = {
    ("heavy_hitters", "element"): ("002 Eq. (1) (+App. A)", "002 Eq. (6)", "002 Lemma 3.1"),
    ("heavy_hitters", "user"): ("002 Eq. (1) (+App. A)",),
    ("element_histogram", "element"): ("002 Lemma 3.2",),
    ("element_histogram", "user"): (),
}
CITE_PRIVACY = {
    "heavy_hitters": f"{SEED}: mechanism (7) (L176) at Lemma 3.1's calibrations (L180-182), element sensitivity 1 "
                     f"(L178), user level sigma_std via gs = sqrt(2m) (L184) and Eq. (1) (L128, App. A)",
    "element_histogram": f"{SEED}: mechanism (9) (L217) at Lemma 3.2's calibrations (L221-225); user level rho = m "
                         f"(L238)",
}
CITE_AUDIT = f"{SEED}: the claims of Lemmas 3.1/3.2, audited at the worst neighbouring pair the search finds"
CITE_ORDER = f"{SEED}: Prop. 1 (L190-199) with the ordering loss (8) (L188) read as mis-ordered pairs (its proof)"
CITE_VS = {"heavy_hitters": f"{SEED}: Prop. 1's comparison (L201-203): element level fewer mis-orderings when "
                            f"p1 << sqrt(m/n)",
           "element_histogram": f"{SEED}: Prop. 2's comparison (L237-241): element level smaller MSE when m is large "
                                f"and P(c) small"}
CLAIMS_VS = {"heavy_hitters": ("002 Prop 1 (comparison)",), "element_histogram": ("002 Prop 2 (element vs user)",)}
CITE_RATE = f"{SEED}: Prop. 2 (L227-235): E|M_j - m p_j|^2 within constants of m p_j/n + sigma^2 rho^2/n^2"
CLAIMS_RATE = ("002 Prop 2 (upper)", "002 Prop 2 (lower)")
CITE_FIG2 = (f"{SEED}: Sec. 4.1 / Fig. 2 (L372-380, the Reddit histogram): the error ratio falls as the partition gets finer; "
             f"a Zipf-like multinomial stands in for Reddit/GloVe")
CLAIMS_FIG2 = ("002 §4.1 / Fig. 2",)


def _unit(pt: dict) -> str:
    return pt["relation"].split("/")[0]


def element_privacy(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, why, failed, judged = [], [], False, 0
    unit = _unit(points[0])
    vacuous = []
    for pt in points:
        mine = next(r for r in pt["relations"] if r["relation"] == pt["relation"])
        if mine["derived"] == 0 and mine["found"] == 0:
            vacuous.append(str(pt["value"]))
    if len(vacuous) == len(points):
        return cited_result(check, CITE_PRIVACY[mechanism], CLAIMS_PRIVACY[(mechanism, unit)], "inapplicable",
                    f"under {points[0]['relation']} neighbouring data sets are equal (sensitivity 0, derived and "
                    f"found): the claim holds vacuously and no check can fail (note P3)", confidence=1.0, rows=[],
                    uncited="vacuous")
    for pt in points:
        for r in pt["relations"]:
            if exceeds(r["found"], r["derived"]):
                failed = True
                why.append(f"{pt['value']}, {r['relation']}: the search finds a pair at distance {r['found']:.6g} > "
                           f"the derived sensitivity {r['derived']:.6g}")
        c = pt["claimed"]
        over_delta = exceeds(c["delta_exact"], c["delta"])
        over_renyi = unit == "element" and exceeds(c["renyi_exact"], c["eps"])
        if over_delta:
            why.append(f"{pt['value']}: (ii) exact delta at eps = {c['eps']:.4g} is {c['delta_exact']:.4g} > "
                       f"{c['delta']:.3g} (eps at that delta: {c['epsilon_exact']:.4g}; Delta/s = {c['mu']:.4g})")
        if over_renyi:
            why.append(f"{pt['value']}: (i) D_alpha at alpha = {c['alpha']:g} is {c['renyi_exact']:.4g} > "
                       f"{c['eps']:.4g}")
        failed |= over_delta or over_renyi
        judged += 1
        pair = next(r["pair_change"] for r in pt["relations"] if r["relation"] == pt["relation"])
        rows.append({"point": pt["value"], "relation": pt["relation"], "worst_pair": pair, "eps": c["eps"],
                     "delta": c["delta"],
                     "delta_exact": c["delta_exact"], "eps_exact": c["epsilon_exact"], "delta_over_claim":
                     c["delta_exact"] / c["delta"], "mu": c["mu"], "alpha": c["alpha"],
                     "renyi_exact": c["renyi_exact"] if unit == "element" else None})
    worst = max(rows, key=lambda r: r["delta_over_claim"])
    claims = CLAIMS_PRIVACY[(mechanism, unit)]
    summary = (f"{judged} point(s) under {points[0]['relation']}: exact delta / claimed delta up to "
               f"{worst['delta_over_claim']:.3g} (eps at the claimed delta {worst['eps_exact']:.4g} vs "
               f"{worst['eps']:.4g}); the search never exceeds the derived sensitivities"
               if not why else f"FAILS: {'; '.join(why[:6])}" + (f" (+{len(why) - 6} more)" if len(why) > 6 else ""))
    return cited_result(check, CITE_PRIVACY[mechanism], claims, "fail" if failed else "pass", summary, confidence=1.0,
                rows=rows, measured=worst["eps_exact"], bound=worst["eps"],
                uncited="the user-level histogram's calibration (rho = m as global sensitivity, L238) is not an "
                        "inventory row")


def element_audit(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, why = [], []
    if all(pt["audit"].get("separation", 1.0) == 0 for pt in points):
        return cited_result(check, CITE_AUDIT, CLAIMS_PRIVACY[(mechanism, _unit(points[0]))], "inapplicable",
                    "the worst pair's noiseless releases coincide at every point: nothing to distinguish",
                    confidence=1.0, rows=[], uncited="vacuous")
    for pt in points:
        a, eps = pt["audit"], pt["claimed"]["eps"]
        rows.append({"point": pt["value"], "relation": pt["relation"], "claimed_eps": eps,
                     "audit_eps_lower": a["epsilon_lower"], "trials_per_side": a["trials_per_side"]})
        if a["epsilon_lower"] > eps:
            why.append(f"{pt['value']}: audit lower bound {a['epsilon_lower']:.4g} > claimed {eps:.4g}")
    unit = _unit(points[0])
    conf = float(points[0]["audit"].get("confidence", 0.95)) ** len(points)     # every point's bound holds jointly
    top = max(rows, key=lambda r: r["audit_eps_lower"] - r["claimed_eps"])
    summary = (f"FAILS: {'; '.join(why)}" if why else
               f"not refuted: the audit's epsilon lower bound is at most the claim at every point (largest "
               f"{top['audit_eps_lower']:.3g} vs {top['claimed_eps']:.3g}); an audit can refute a claim, not confirm it")
    return cited_result(check, CITE_AUDIT, CLAIMS_PRIVACY[(mechanism, unit)], "fail" if why else "pass", summary,
                confidence=conf, rows=rows, measured=top["audit_eps_lower"], bound=top["claimed_eps"],
                uncited="the user-level histogram's calibration is not an inventory row")


def _one_sided(x: np.ndarray, level: float) -> tuple[float, float, float]:
    """Mean and one-sided (lower, upper) limits at ``level`` each: the two-sided Student interval at 2 level - 1."""
    ci = mean_ci(x, 2 * level - 1)
    return ci.mean, ci.lower, ci.upper


def ordering_loss(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    judged = [pt for pt in points if pt["p1"] <= pt["p1_limit"] and pt["separated_pairs"] > pt["bound"]]
    skipped = [f"{pt['value']}: " + ("p1 > 1/(2m)" if pt["p1"] > pt["p1_limit"] else
                                     f"{pt['separated_pairs']} pairs at separation gamma <= t^2: the count cannot "
                                     f"exceed the bound") for pt in points if pt not in judged]
    level = 1 - (1 - check.confidence) / max(len(judged), 1)
    rows, fail, unsure = [], [], []
    for pt in judged:
        counts = np.asarray(pt["misordered_element"])
        half = 1 - (1 - level) / 2                   # Bonferroni over the two upper limits below
        mean, lo, t_hi = _one_sided(counts, half) if np.any(counts) else (0.0, 0.0, math.inf)
        # exact and distribution-free: C <= pairs * 1{C > 0}, so E C <= pairs * P(C > 0) <= pairs * its
        # Clopper-Pearson upper limit (the only usable limit when no trial mis-orders anything)
        exact_hi = pt["separated_pairs"] * clopper_pearson_upper(int(np.count_nonzero(counts)), counts.size, half)
        hi = min(t_hi, exact_hi)
        rows.append({"point": pt["value"], "gamma": pt["gamma"], "pairs": pt["separated_pairs"], "mean": mean,
                     "lower": lo, "upper": hi, "upper_exact": exact_hi, "upper_t": t_hi, "bound_t2": pt["bound"]})
        if lo > pt["bound"]:
            fail.append(f"{pt['value']}: mean {mean:.4g} (lower limit {lo:.4g}) > t^2 = {pt['bound']:.4g}")
        elif hi > pt["bound"]:
            unsure.append(f"{pt['value']}: upper limit {hi:.4g} > t^2 = {pt['bound']:.4g}")
    verdict = "inapplicable" if not judged else "fail" if fail else "inconclusive" if unsure else "pass"
    summary = (f"mis-ordered pairs at Prop. 1's gamma against t^2 at {len(judged)} point(s)"
               + (f"; FAILS: {'; '.join(fail)}" if fail else "") + (f"; undecided: {'; '.join(unsure)}" if unsure else "")
               + (f"; inapplicable: {'; '.join(skipped)}" if skipped else ""))
    top = max(rows, key=lambda r: r["upper"] / r["bound_t2"]) if rows else None
    return cited_result(check, CITE_ORDER, ("002 Prop 1",), verdict, summary, confidence=check.confidence, rows=rows,
                measured=None if top is None else top["mean"], bound=None if top is None else top["bound_t2"])


def element_vs_user(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    key = ("misordered", "mis-ordered pairs") if mechanism == "heavy_hitters" else ("mse", "squared error")
    judged = [pt for pt in points if np.any(np.asarray(pt[f"{key[0]}_user"]) != np.asarray(pt[f"{key[0]}_element"]))]
    vacuous = [str(pt["value"]) for pt in points if pt not in judged]
    level = 1 - (1 - check.confidence) / max(len(judged), 1)
    rows, worse, unsure = [], [], []
    for pt in judged:
        diff = np.asarray(pt[f"{key[0]}_user"], float) - np.asarray(pt[f"{key[0]}_element"], float)
        mean, lo, hi = _one_sided(diff, level)
        rows.append({"point": pt["value"], "user": float(np.mean(pt[f"{key[0]}_user"])),
                     "element": float(np.mean(pt[f"{key[0]}_element"])), "user_minus_element": mean,
                     "lower": lo, "upper": hi})
        if hi < 0:
            worse.append(f"{pt['value']}: user level better by {-mean:.4g}")
        elif lo <= 0:
            unsure.append(f"{pt['value']}: difference {mean:.4g}, interval [{lo:.3g}, {hi:.3g}]")
    verdict = "inapplicable" if not judged else "fail" if worse else "inconclusive" if unsure else "pass"
    summary = (f"{key[1]} of the user level minus the element level, same data, paired one-sided limits at "
               f"{level:.4g} per point" + (f"; FAILS: {'; '.join(worse)}" if worse else "")
               + (f"; undecided: {'; '.join(unsure)}" if unsure else "")
               + (f"; not compared (both levels equal in every trial, e.g. no error at all): {', '.join(vacuous)}"
                  if vacuous else ""))
    return cited_result(check, CITE_VS[mechanism], CLAIMS_VS[mechanism], verdict, summary, confidence=check.confidence,
                rows=rows, measured=min((r["user_minus_element"] for r in rows), default=None), bound=0.0)


def mse_rate(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    swept = [pt["value"] for pt in points]
    if len(points) < 3 or any(v is None for v in swept):
        return cited_result(check, CITE_RATE, CLAIMS_RATE, "inapplicable", "a rate needs a sweep of at least 3 points",
                    confidence=check.confidence, rows=[])
    x = np.log(np.asarray(swept, float))
    rows: list[dict[str, Any]] = []
    verdicts, notes = [], []
    fixed_rho = any(pt["params"].get("rho", 0) for pt in points)
    levels = ("user",) if fixed_rho else ("element", "user")
    if fixed_rho:
        notes.append("element level not judged: with a fixed rho its clipping bias 2^(2-t) q_j does not shrink with "
                     "the sweep, and the bracket leaves it out (Prop. 2 takes rho from its rule)")
    for level in levels:
        mse = [np.asarray(pt[f"mse_{level}"], float) for pt in points]
        y = np.log([v.mean() for v in mse])
        se = np.array([v.std(ddof=1) / math.sqrt(v.size) / v.mean() for v in mse])      # delta method
        fit = weighted_slope(x, y, se, check.confidence)
        env = np.log([pt[f"envelope_{level}"] for pt in points])
        pred = float(np.polyfit(x, env, 1)[0])
        lo, hi = pred - RATE_TOL, pred + RATE_TOL
        v = "pass" if lo <= fit.lower and fit.upper <= hi else "fail" if fit.upper < lo or fit.lower > hi \
            else "inconclusive"
        verdicts.append(v)
        rows.append({"level": level, "measured_slope": fit.slope, "lower": fit.lower, "upper": fit.upper,
                     "predicted_slope": pred, "tolerance": RATE_TOL, "verdict": v})
        notes.append(f"{level}: slope {fit.slope:.3f} [{fit.lower:.3f}, {fit.upper:.3f}] vs Prop. 2's bracket "
                     f"{pred:.3f} +- {RATE_TOL}")
    verdict = "fail" if "fail" in verdicts else "inconclusive" if "inconclusive" in verdicts else "pass"
    return cited_result(check, CITE_RATE, CLAIMS_RATE, verdict, "log MSE against log of the swept variable: " + "; ".join(notes),
                confidence=check.confidence, rows=rows, measured=float(rows[0]["measured_slope"]),
                bound=float(rows[0]["predicted_slope"]))


def finer_partition(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Sec. 4.1 / Fig. 2 (L378: "increasingly fine partitions yield better estimators"): along a sweep of K, the
    element-level MSE falls from each point to the next (Welch limits on the difference of two independent means,
    Bonferroni over the steps)."""
    if len(points) < 2 or any(pt["value"] is None for pt in points):
        return cited_result(check, CITE_FIG2, CLAIMS_FIG2, "inapplicable", "needs a sweep of K", confidence=check.confidence,
                    rows=[])
    pts = sorted(points, key=lambda pt: pt["value"])
    level = 1 - (1 - check.confidence) / (len(pts) - 1)
    rows, up, unsure = [], [], []
    for a, b in zip(pts, pts[1:]):
        xa, xb = np.asarray(a["mse_element"], float), np.asarray(b["mse_element"], float)
        diff = xa.mean() - xb.mean()
        se = math.sqrt(xa.var(ddof=1) / xa.size + xb.var(ddof=1) / xb.size)
        z = float(sps.norm.ppf(level))
        rows.append({"from_K": a["value"], "to_K": b["value"], "mse_from": float(xa.mean()), "mse_to": float(xb.mean()),
                     "ratio_to_nonprivate_from": float(xa.mean()) / a["mse_nonprivate"],
                     "ratio_to_nonprivate_to": float(xb.mean()) / b["mse_nonprivate"],
                     "decrease": diff, "lower": diff - z * se, "upper": diff + z * se})
        if diff + z * se < 0:
            up.append(f"K {a['value']:g} -> {b['value']:g}: MSE rises by {-diff:.4g}")
        elif diff - z * se <= 0:
            unsure.append(f"K {a['value']:g} -> {b['value']:g}: change {diff:.4g} +- {z * se:.3g}")
    verdict = "fail" if up else "inconclusive" if unsure else "pass"
    summary = ("element-level MSE along K (finer partitions), one-sided Welch limits per step"
               + (f"; FAILS: {'; '.join(up)}" if up else "") + (f"; undecided: {'; '.join(unsure)}" if unsure else ""))
    return cited_result(check, CITE_FIG2, CLAIMS_FIG2, verdict, summary, confidence=check.confidence, rows=rows,
                measured=min(float(r["decrease"]) for r in rows), bound=0.0)


ElementCheckFn = Callable[[Any, str, list[dict]], CheckResult]
ELEMENT_CHECKS: Registry[ElementCheckFn] = Registry("element histogram check kind")
ELEMENT_CHECKS.add("element_privacy", element_privacy)
ELEMENT_CHECKS.add("element_audit", element_audit)
ELEMENT_CHECKS.add("element_vs_user", element_vs_user)
ELEMENT_CHECKS.add("mse_rate", mse_rate)
ELEMENT_CHECKS.add("finer_partition", finer_partition)
HH_CHECKS: Registry[ElementCheckFn] = Registry("heavy hitters check kind")
HH_CHECKS.add("element_privacy", element_privacy)
HH_CHECKS.add("element_audit", element_audit)
HH_CHECKS.add("element_vs_user", element_vs_user)
HH_CHECKS.add("ordering_loss", ordering_loss)


def _privacy_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    w = max(rows, key=lambda x: x["delta_over_claim"])
    over = [x for x in rows if exceeds(x["delta_exact"], x["delta"])
            or (x.get("renyi_exact") is not None and exceeds(x["renyi_exact"], x["eps"]))]
    return Rule("fail iff, under the spec's relation, the exact delta of the Gaussian at the worst pair exceeds the "
                "claimed delta at the claimed eps (or, at element level, the exact Renyi divergence exceeds the "
                "claimed RDP), or the pair search finds a pair farther apart than the derived sensitivity; pass "
                "otherwise (exact)", f"exact delta {compare(w['delta_exact'], w['delta'])[0]} (claimed; eps at the "
                f"claimed delta {w['eps_exact']:.4g} against {w['eps']:.4g}){at(w['point'])}",
                "fail" if over else "pass")


def _audit_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["audit_eps_lower"] - x["claimed_eps"])
    return Rule("fail iff the canary audit's epsilon lower bound (Clopper-Pearson) exceeds the claimed epsilon at some "
                "point; pass otherwise (one-sided: no leak found, not a proof)",
                f"lower bound {compare(w['audit_eps_lower'], w['claimed_eps'])[0]} (the claim){at(w['point'])}",
                "fail" if any(x["audit_eps_lower"] > x["claimed_eps"] for x in r["rows"]) else "pass")


def _ordering_loss_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    w = max(rows, key=lambda x: x["upper"] / x["bound_t2"])
    side = ("fail" if any(x["lower"] > x["bound_t2"] for x in rows) else
            "undecided" if any(x["upper"] > x["bound_t2"] for x in rows) else "pass")
    return Rule("at each point meeting Prop. 1's conditions: pass iff the upper confidence limit of the mean number of "
                "mis-ordered pairs at separation gamma (the smaller of Student's and a distribution-free limit; "
                "Bonferroni) is at most t^2; fail iff the lower limit exceeds it",
                f"upper limit {compare(w['upper'], w['bound_t2'])[0]} (t^2){at(w['point'])}", side)


def _vs_user_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    w = min(rows, key=lambda x: x["lower"])
    side = interval_side(rows)
    return Rule("paired one-sided limits of user-level minus element-level error, per point (Bonferroni): pass iff "
                "every lower limit is above 0 (element level better), fail iff an upper limit is below 0",
                f"smallest lower limit {w['lower']:.4g} (difference {w['user_minus_element']:.4g}){at(w['point'])}",
                side)


def _mse_rate_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    w = max(rows, key=lambda x: max(abs(x["lower"] - x["predicted_slope"]), abs(x["upper"] - x["predicted_slope"])))
    return Rule(f"per level judged: pass iff the log-log slope's {r['confidence']:g} interval lies within Prop. 2's "
                f"predicted slope +- {w['tolerance']:g}; fail iff it lies wholly outside; else inconclusive",
                f"{w['level']}: interval [{w['lower']:.3f}, {w['upper']:.3f}] against {w['predicted_slope']:.3f} +- "
                f"{w['tolerance']:g}", side_of(rows))


def _finer_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    w = min(rows, key=lambda x: x["lower"])
    side = interval_side(rows)
    return Rule("along K: one-sided Welch limits of each step's MSE decrease (Bonferroni over the steps); pass iff "
                "every lower limit is above 0, fail iff an upper limit is below 0",
                f"smallest step K {w['from_K']:g} -> {w['to_K']:g}: decrease {w['decrease']:.4g} (lower limit "
                f"{w['lower']:.3g})", side)


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
ELEMENT_RULES = {"element_privacy": _privacy_rule, "element_audit": _audit_rule, "ordering_loss": _ordering_loss_rule,
                 "element_vs_user": _vs_user_rule, "mse_rate": _mse_rate_rule, "finer_partition": _finer_rule}
