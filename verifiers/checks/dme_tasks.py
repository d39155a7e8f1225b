"""Checks of seed 003 chapter 2's orderings (Jiang's thesis; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt):
the distributed tasks of §2.5 (the ``dme_tasks`` mechanism, catalog/dme_tasks_003.py) and §2.3.3's comparison of
Rand-k-Spatial with Rand-k (a kind of the ``dme`` mechanism, catalog/dme_003.py). Numbers in, verdicts out.

- ``task_ordering`` (§2.5.4 / Fig. 2.4, L676: RPS(Avg) "consistently outperforms the other estimators in all three
  tasks"): per point, for the per-run estimation error and the per-run task loss, RPS(Avg) against Rand-k and
  Rand-k-Spatial(Avg) by one-sided Welch tests over the independent runs, Bonferroni over points x measures x pairs
  at the check's confidence. A pair passes when RPS(Avg) is significantly lower, fails when it is significantly
  higher, else is inconclusive; the check combines them (any fail fails; all pass passes). Rand-k(Wangni) and the
  Induced compressor are not defined in the seed (L653 cites [135], [55] only): their rows are reported, not judged.
- ``codec_time`` (§2.5.4 / Fig. 2.5, L676: RPS(Avg) "has the longest decoding time", its encoding "less than that of
  the adaptive Rand-k(Wangni)"): per run the median over rounds of each codec's CPU seconds (all clients' encoding;
  the server's decoding). Timing on a shared 2-core machine is noisy, so the rule is a sign test with a margin fixed
  before the run: for each judged codec, the runs where RPS(Avg) decodes more than (1 + MARGIN) times slower count
  for the claim, those where the other is more than (1 + MARGIN) slower count against; a one-sided binomial test
  (p = 1/2, Bonferroni over points x pairs) of either count decides pass or fail, else inconclusive. Judged: the
  decoders of Rand-k and Rand-k-Spatial(Avg). The encoding claim's comparator, Rand-k(Wangni), is our reading of
  [135] (not in the seed): its sign test is reported, not judged.
- ``spatial_vs_randk`` (§2.3.3, L549: "When the client vectors are orthogonal ... with appropriately chosen T, the MSE
  in Eq. 2.3 reduces to Eq. 2.1. ... if there exists a positive correlation ..., the MSE in Eq. 2.3 is strictly
  smaller"): at each ``dme`` point, Rand-k-Spatial with Eq. 2.11's T at the true R (R = 0: T = 1, the suitable T)
  against Eq. 2.1. Exact: Eq. 2.3's closed form (c1, c2 derived: notes 003a §1.3; tested against the runs by
  ``mse_identity``) equal to Eq. 2.1 at R = 0 (relative 1e-9), strictly below it at R > 0. Monte Carlo: at R = 0 a
  two one-sided tests equivalence rule, the runs' MSE within +-EQUIV_TOL (5%, fixed before the run) of Eq. 2.1 (pass
  when the interval at the Bonferroni level lies inside the band, fail when it lies wholly outside); at R > 0 a
  one-sided t-test of the runs' MSE below Eq. 2.1 (fail when significantly above). The exact rows decide; a Monte
  Carlo row can fail the check (a significant contradiction), an unresolved one (too small a gap for the runs) is
  shown as inconclusive without blocking the exact verdict.
- ``rank_deficiency`` (App. A.3.3 / Fig. A.2, L2202 and L2325: rank S = n k "with high probability, i.e. delta ~ 0";
  1e5 trials per (n k, d), full rank in all of them except d = n k = 32, rank 31 in 2100): per point, the share of
  draws with rank S < n k and its Clopper-Pearson interval at the check's confidence (Bonferroni over points). Where
  n k < d: pass when the upper limit is at most DELTA_SMALL (1e-3, OUR reading of "delta ~ 0", fixed before the run:
  the first term of Thm 2.4.3's bound, d / ((1 - delta) n k + delta k), then moves by under 0.1%), fail when the
  lower limit is above it, else inconclusive. Where n k = d the thesis reports one number (2100 in 1e5 at d = 32) without the split of n k
  into n and k, on which the share depends strongly: those points are reported, not judged.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np
from scipy import stats

from algorithms.registry import Registry
from verifiers.checks.base import CheckResult, Rule, cited_result, combine_verdicts, compare, side_of
from verifiers.stats import mean_ci, welch_one_sided

SEED = "seed 003 (Jiang's thesis) ch. 2"
FIG24 = "003 §2.5.4 / Fig. 2.4 / App. A.4.1"
FIG25 = "003 §2.5.4 / Fig. 2.5"
S233 = "003 §2.3.3 (ordering)"
JUDGED = ("rand_k", "rand_k_spatial_avg")
UNJUDGED = ("rand_k_wangni", "induced")
MARGIN = 0.25
EQUIV_TOL = 0.05
DELTA_SMALL = 1e-3
A33 = "003 App. A.3.3 / Fig. A.2"


def _at(value: Any) -> str:
    """' at <point>' in a summary, nothing for a spec without a sweep."""
    return "" if value is None else f" at {value:g}"


def task_ordering(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    items = [(pt, key, other) for pt in points for key in ("err", "loss") for other in JUDGED]
    level = (1 - check.confidence) / max(len(items), 1)
    rows, verdicts = [], []
    for pt, key, other in items:
        a, b = np.asarray(pt["runs"]["rps_avg"][key]), np.asarray(pt["runs"][other][key])
        lo, hi = welch_one_sided(a, b)
        v = "pass" if lo < level else "fail" if hi < level else "inconclusive"
        if not pt["finite"]:
            v = "fail"
        verdicts.append(v)
        rows.append({"point": pt["value"], "task": pt["params"]["task"], "measure": key, "rps_avg": float(a.mean()),
                     "other": other, "other_mean": float(b.mean()), "ratio": float(a.mean() / b.mean()),
                     "p_lower": lo, "p_higher": hi, "level": level, "verdict": v})
    for pt in points:
        for key in ("err", "loss"):
            a = np.asarray(pt["runs"]["rps_avg"][key])
            for other in UNJUDGED:
                b = np.asarray(pt["runs"][other][key])
                lo, hi = welch_one_sided(a, b)
                rows.append({"point": pt["value"], "task": pt["params"]["task"], "measure": key,
                             "rps_avg": float(a.mean()), "other": other, "other_mean": float(b.mean()),
                             "ratio": float(a.mean() / b.mean()), "p_lower": lo, "p_higher": hi, "level": level,
                             "verdict": "not judged (not defined in the seed)"})
    v = combine_verdicts(verdicts)
    judged = [r for r in rows if r["other"] in JUDGED]
    worst = max(judged, key=lambda r: r["ratio"])
    cited = [r for r in rows if r["other"] in UNJUDGED]
    beat = sum(r["ratio"] < 1 for r in cited)
    summary = (f"{len(judged)} judged pairs ({sum(x == 'pass' for x in verdicts)} pass); closest: RPS(Avg) "
               f"{worst['rps_avg']:.4g} against {worst['other']} {worst['other_mean']:.4g} ({worst['measure']}, "
               f"{worst['task']}{_at(worst['point'])}, ratio {worst['ratio']:.3f}); not judged: RPS(Avg) below our "
               f"reading of Rand-k(Wangni) / Induced in {beat} of {len(cited)} comparisons")
    return cited_result(check, f"{SEED}: §2.5.4 / Fig. 2.4 (L676), App. A.4.1", (FIG24,), v, summary,
                        confidence=check.confidence, rows=rows, measured=worst["rps_avg"], bound=worst["other_mean"])


def _sign_test(a: np.ndarray, b: np.ndarray, level: float) -> tuple[str, int, int, float, float]:
    """a slower than b by the margin: (verdict, runs for, runs against, p for, p against)."""
    up = int(np.sum(a > (1 + MARGIN) * b))
    down = int(np.sum(b > (1 + MARGIN) * a))
    n = a.size
    p_up = float(stats.binom.sf(up - 1, n, 0.5))
    p_down = float(stats.binom.sf(down - 1, n, 0.5))
    return ("pass" if p_up < level else "fail" if p_down < level else "inconclusive"), up, down, p_up, p_down


def codec_time(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    level = (1 - check.confidence) / max(len(points) * len(JUDGED), 1)
    rows, verdicts = [], []
    for pt in points:
        rps = np.asarray(pt["runs"]["rps_avg"]["dec"])
        for other in JUDGED:
            b = np.asarray(pt["runs"][other]["dec"])
            v, up, down, p_up, p_down = _sign_test(rps, b, level)
            verdicts.append(v)
            rows.append({"point": pt["value"], "task": pt["params"]["task"], "claim": "RPS(Avg) decodes slower",
                         "other": other, "rps_median_ms": 1e3 * float(np.median(rps)),
                         "other_median_ms": 1e3 * float(np.median(b)), "runs_for": up, "runs_against": down,
                         "runs": int(rps.size), "p_for": p_up, "p_against": p_down, "verdict": v})
        for claim, key, rps_slower in (("RPS(Avg) decodes slower", "dec", True),
                                       ("RPS(Avg) encodes faster", "enc", False)):
            a = np.asarray(pt["runs"]["rps_avg"][key])
            for other in UNJUDGED if key == "dec" else ("rand_k_wangni",):
                b = np.asarray(pt["runs"][other][key])
                x, y = (a, b) if rps_slower else (b, a)
                v, up, down, p_up, p_down = _sign_test(x, y, level)
                rows.append({"point": pt["value"], "task": pt["params"]["task"], "claim": claim, "other": other,
                             "rps_median_ms": 1e3 * float(np.median(a)), "other_median_ms": 1e3 * float(np.median(b)),
                             "runs_for": up, "runs_against": down, "runs": int(a.size), "p_for": p_up,
                             "p_against": p_down, "verdict": f"not judged (would be {v}; comparator not in the seed)"})
    v = combine_verdicts(verdicts)
    dec = [r for r in rows if r["claim"].startswith("RPS(Avg) decodes") and r["other"] in JUDGED]
    worst = min(dec, key=lambda r: r["rps_median_ms"] / max(r["other_median_ms"], 1e-12))
    enc = [r for r in rows if r["claim"].startswith("RPS(Avg) encodes")]
    summary = (f"decode: RPS(Avg) median {worst['rps_median_ms']:.3g} ms against {worst['other']} "
               f"{worst['other_median_ms']:.3g} ms{_at(worst['point'])} (slower by > {MARGIN:.0%} in {worst['runs_for']} "
               f"of {worst['runs']} runs); encode, not judged: RPS(Avg) "
               + "; ".join(f"{r['rps_median_ms']:.3g} ms against our Rand-k(Wangni) {r['other_median_ms']:.3g} ms"
                           for r in enc[:3]))
    return cited_result(check, f"{SEED}: §2.5.4 / Fig. 2.5 (L676)", (FIG25,), v, summary,
                        confidence=check.confidence, rows=rows, measured=worst["rps_median_ms"],
                        bound=worst["other_median_ms"])


def spatial_vs_randk(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    mc_n = max(len(points), 1)
    alpha = (1 - check.confidence) / mc_n
    rows, exact, mc = [], [], []
    for pt in points:
        R = pt["R"]
        rk = pt["estimators"]["rand_k"]["closed_form"]
        e = pt["estimators"]["rand_k_spatial_opt"]
        cf = e["closed_form"]
        x = np.asarray(e["sq_error"])
        if R < 0:
            continue
        if abs(R) < 1e-12:
            ve = "pass" if abs(cf - rk) <= 1e-9 * rk else "fail"
            ci = mean_ci(x, 1 - 2 * alpha)                # two one-sided tests at alpha each
            lo_b, hi_b = rk * (1 - EQUIV_TOL), rk * (1 + EQUIV_TOL)
            vm = ("pass" if lo_b <= ci.lower and ci.upper <= hi_b else
                  "fail" if ci.upper < lo_b or ci.lower > hi_b else "inconclusive")
            rule = f"equivalence within +-{EQUIV_TOL:.0%} of Eq. 2.1 (TOST)"
            lower, upper = ci.lower, ci.upper
        else:
            ve = "pass" if cf < rk * (1 - 1e-9) else "fail"
            t = stats.ttest_1samp(x, rk)
            half = float(t.pvalue) / 2
            p_below, p_above = (half, 1 - half) if t.statistic < 0 else (1 - half, half)
            vm = "pass" if p_below < alpha else "fail" if p_above < alpha else "inconclusive"
            rule = "one-sided t-test below Eq. 2.1"
            ci = mean_ci(x, 1 - 2 * alpha)
            lower, upper = ci.lower, ci.upper
        exact.append(ve)
        mc.append(vm)
        rows.append({"point": pt["value"], "R": R, "eq_2_1": rk, "eq_2_3_opt": cf, "closed_ratio": cf / rk,
                     "mse_runs": float(x.mean()), "lower": lower, "upper": upper, "runs": int(x.size),
                     "monte_carlo_rule": rule, "exact": ve, "monte_carlo": vm})
    if not rows:
        return cited_result(check, f"{SEED}: §2.3.3 (L549)", (), "inapplicable", "no point", confidence=check.confidence,
                            rows=[], uncited="no point")
    v = "fail" if "fail" in mc else combine_verdicts(exact)
    pos = [r for r in rows if r["R"] > 1e-12]
    zero = [r for r in rows if r["R"] <= 1e-12]
    worst = max(pos, key=lambda r: r["closed_ratio"], default=None)
    summary = ((f"R = 0: Eq. 2.3 (T = 1) / Eq. 2.1 = {zero[0]['closed_ratio']:.12g}, runs {zero[0]['mse_runs']:.4g} "
                f"[{zero[0]['lower']:.4g}, {zero[0]['upper']:.4g}] against {zero[0]['eq_2_1']:.4g} ({zero[0]['monte_carlo']}); "
                if zero else "no orthogonal point; ")
               + (f"R > 0: largest Eq. 2.3 (Opt) / Eq. 2.1 = {worst['closed_ratio']:.4f} at R = {worst['R']:.3g}; "
                  f"Monte Carlo below Eq. 2.1 at {sum(r['monte_carlo'] == 'pass' for r in pos)} of {len(pos)} points "
                  f"({sum(r['monte_carlo'] == 'inconclusive' for r in pos)} unresolved)" if worst else "no correlated point"))
    return cited_result(check, f"{SEED}: §2.3.3 (L549), Eq. 2.1, Eq. 2.3, Eq. 2.11", (S233,), v, summary,
                        confidence=check.confidence, rows=rows,
                        measured=None if worst is None else worst["eq_2_3_opt"],
                        bound=None if worst is None else worst["eq_2_1"])


def rank_deficiency(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    level = check.confidence ** (1 / max(len(points), 1))        # joint coverage over the points (Bonferroni-like)
    rows, verdicts = [], []
    for pt in points:
        x, N = pt["deficient"], pt["trials"]
        ci = stats.binomtest(x, N).proportion_ci(confidence_level=level, method="exact")
        p = pt["params"]
        if pt["nk"] < p["d"]:
            v = "pass" if ci.high <= DELTA_SMALL else "fail" if ci.low > DELTA_SMALL else "inconclusive"
        else:
            v = "not judged (n k = d: the thesis's split of n k unstated)"
        if not v.startswith("not"):
            verdicts.append(v)
        rows.append({"point": pt["value"], "d": p["d"], "n": p["n"], "k": p["k"], "nk": pt["nk"], "deficient": x,
                     "draws": N, "share": x / N, "lower": float(ci.low), "upper": float(ci.high),
                     "threshold": DELTA_SMALL, "verdict": v})
    v = combine_verdicts(verdicts)
    judged = [r for r in rows if not r["verdict"].startswith("not")]
    worst = max(judged, key=lambda r: r["upper"], default=None)
    square = [r for r in rows if r["verdict"].startswith("not")]
    summary = ("no point with n k < d" if worst is None else
               f"n k < d: largest upper limit of delta {worst['upper']:.3g} ({worst['deficient']} of {worst['draws']} "
               f"deficient at d = {worst['d']}, n = {worst['n']}, k = {worst['k']}) against {DELTA_SMALL:g}")
    summary += "".join(f"; n k = d = {r['d']} (n = {r['n']}, k = {r['k']}, not judged): {r['deficient']} of "
                       f"{r['draws']} deficient ({r['share']:.3g}; the thesis: 2100 of 1e5 at d = 32, split unstated)"
                       for r in square)
    return cited_result(check, f"{SEED}: App. A.3.3 (L2202), Fig. A.2 (L2325)", (A33,) if judged else (), v, summary,
                        confidence=check.confidence, rows=rows,
                        measured=None if worst is None else worst["upper"],
                        bound=None if worst is None else DELTA_SMALL, uncited="" if judged else "no point judged")


DmeTaskCheckFn = Callable[[Any, str, list[dict]], CheckResult]
DME_TASK_CHECKS: Registry[DmeTaskCheckFn] = Registry("distributed task check kind")
DME_TASK_CHECKS.add("task_ordering", task_ordering)
DME_TASK_CHECKS.add("codec_time", codec_time)
SRHT_RANK_CHECKS: Registry[DmeTaskCheckFn] = Registry("SRHT rank check kind")
SRHT_RANK_CHECKS.add("rank_deficiency", rank_deficiency)


def _task_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    judged = [x for x in r["rows"] if x["other"] in JUDGED]
    w = max(judged, key=lambda x: x["ratio"])
    side = ("fail" if any(x["p_higher"] < x["level"] for x in judged) else
            "pass" if all(x["p_lower"] < x["level"] for x in judged) else "undecided")
    return Rule(f"per task measure (estimation error, task loss) and judged comparator (Rand-k, Rand-k-Spatial(Avg)): a "
                f"one-sided Welch test at {w['level']:.2g} (Bonferroni); pass iff RPS(Avg) is significantly lower in "
                f"every one, fail iff significantly higher in one (Wangni and Induced reported, not judged)",
                f"closest: RPS(Avg) {compare(w['rps_avg'], w['other_mean'])[0]} ({w['other']}, {w['measure']})", side)


def _codec_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    judged = [x for x in r["rows"] if x["claim"].startswith("RPS(Avg) decodes") and x["other"] in JUDGED]
    w = min(judged, key=lambda x: x["rps_median_ms"] / max(x["other_median_ms"], 1e-12))
    return Rule(f"per judged comparator: a sign test over the runs that RPS(Avg)'s decode is slower by more than "
                f"{MARGIN:.0%} (one core's CPU time, Bonferroni); pass iff it is for every one, fail iff the reverse "
                f"is significant for one", f"closest: RPS(Avg) {w['rps_median_ms']:.3g} ms against {w['other']} "
                f"{w['other_median_ms']:.3g} ms (median; slower by > {MARGIN:.0%} in {w['runs_for']} of {w['runs']})",
                side_of(judged))


def _spatial_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    exact_bad = any((abs(x["eq_2_3_opt"] - x["eq_2_1"]) > 1e-9 * x["eq_2_1"]) if x["R"] <= 1e-12 else
                    x["eq_2_3_opt"] >= x["eq_2_1"] * (1 - 1e-9) for x in rows)
    mc_bad = any(x["upper"] < x["eq_2_1"] * (1 - EQUIV_TOL) or x["lower"] > x["eq_2_1"] * (1 + EQUIV_TOL)
                 if x["R"] <= 1e-12 else x["lower"] > x["eq_2_1"] for x in rows)
    pos = [x for x in rows if x["R"] > 1e-12]
    w = max(pos, key=lambda x: x["closed_ratio"]) if pos else rows[0]
    return Rule(f"exact: Eq. 2.3 equals Eq. 2.1 at R = 0 and is strictly below it at R > 0; the runs can only "
                f"contradict (TOST within +-{EQUIV_TOL:.0%} at R = 0, one-sided below Eq. 2.1 at R > 0): pass iff the "
                f"closed forms hold and no run contradicts them", f"largest Eq. 2.3 / Eq. 2.1 = "
                f"{w['closed_ratio']:.4f} at R = {w['R']:.3g}", "fail" if exact_bad or mc_bad else "pass")


def _rank_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    judged = [x for x in r["rows"] if not str(x["verdict"]).startswith("not")]
    w = max(judged, key=lambda x: x["deficient"])
    return Rule(f"where n k < d: the Clopper-Pearson interval of the rank-deficiency frequency against delta <= "
                f"{DELTA_SMALL:g} (the reading of 'delta ~ 0', fixed before the run); pass iff every upper end is at "
                f"or below it, fail iff a lower end is above it (n k = d reported, not judged)",
                f"largest: {w['deficient']} deficient draws at d = {w['d']}, n = {w['n']}, k = {w['k']}",
                side_of(judged))


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
DME_TASK_RULES = {"task_ordering": _task_rule, "codec_time": _codec_rule, "spatial_vs_randk": _spatial_rule,
                  "rank_deficiency": _rank_rule}
