"""Checks of DP-ShuffleG's rate at the thesis's schedule (the ``shuffleg_rate`` mechanism, catalog/shuffleg_003.py).
Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt.

- ``eq413_rate`` (Eq. 4.13, L1466: E[G] - G* = O~(n^(-2/3) (sqrt(d)/eps)^(4/3)) with K = O(n eps^2 / d) and §4.5.3's
  step): the local exponent of the exact expected excess in n over the spec's largest decade (the slope of log
  excess against log n between the largest n and the largest n at most a tenth of it), exact numbers (confidence
  1). The claimed rate hides logarithms: a factor (log n)^a changes the local slope by a / ln n, under RATE_TOL =
  0.1 for a <= 1 at n >= 10^4. Fail when the measured exponent exceeds -2/3 + RATE_TOL (the excess decays slower
  than any O~(n^(-2/3)) bound can), pass when it is at most that; points where the step is capped by the
  condition (not the schedule's) are excluded from the fit.
- ``table44_rate``: the same for Interleaved against Table 4.4's row (its public records 0 too, so C^part = 0).
- ``exact_bound`` (Cor 4.5.1, L1419, or Cor 4.6.1 for Interleaved, at the schedule's parameters): the exact expected excess against the bound
  with every term; fail at any point where it exceeds it (no sampling).
- ``exact_vs_simulation``: the closed form against the simulated runs where they exist (two-sided Student
  interval of the simulated mean at the check's confidence must hold the exact value): the second method that pins
  the closed form to the algorithm.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

from algorithms.registry import Registry
from verifiers.checks.base import CheckResult, Rule, cited_result, compare, exact_result, side_of
from verifiers.stats import mean_ci

SEED = "seed 003 (Jiang's thesis) ch. 4"
CLAIMED = -2.0 / 3.0
RATE_TOL = 0.1


def _rate(check: Any, points: list[dict], claims: tuple[str, ...], cite: str, name: str) -> CheckResult:
    usable = sorted((pt for pt in points if not pt["capped"]), key=lambda pt: pt["params"]["n"])
    rows = [{"n": pt["params"]["n"], "K": pt["K"], "exact": pt["exact"]["total"], "capped": pt["capped"],
             "claimed_form": pt["claimed_rate_value"]} for pt in sorted(points, key=lambda q: q["params"]["n"])]
    if len(usable) < 2:
        return cited_result(check, cite, (), "inapplicable", "fewer than two points on the schedule's own step",
                            confidence=1.0, rows=rows, uncited="fewer than two points on the schedule's step")
    top = usable[-1]
    below = [pt for pt in usable if pt["params"]["n"] <= top["params"]["n"] / 10]
    base = below[-1] if below else usable[0]
    ln = math.log(top["params"]["n"]) - math.log(base["params"]["n"])
    if top["exact"]["total"] <= 0.0 or base["exact"]["total"] <= 0.0:
        # the expected excess underflowed (below 1e-308): it fell faster than any power of n can show in floats
        slope = -math.inf
    else:
        slope = (math.log(top["exact"]["total"]) - math.log(base["exact"]["total"])) / ln
    claimed = (math.log(top["claimed_rate_value"]) - math.log(base["claimed_rate_value"])) / ln
    v = "fail" if slope > claimed + RATE_TOL else "pass"
    summary = (f"local exponent in n of the exact expected excess between n = {base['params']['n']:g} and "
               f"{top['params']['n']:g}: {slope:.3f}; claimed {claimed:.3f} (tolerance {RATE_TOL} for the hidden logs)")
    return exact_result(check, name, cite, claims, v, summary, measured=slope, bound=claimed + RATE_TOL, rows=rows)


def eq413_rate(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    if any(pt["params"]["instance"] != "dp_shuffleg" for pt in points):
        return cited_result(check, f"{SEED}: Eq. 4.13", (), "inapplicable", "Eq. 4.13 is DP-ShuffleG's rate",
                            confidence=1.0, rows=[], uncited="not DP-ShuffleG")
    return _rate(check, points, ("003 Eq. 4.13",), f"{SEED}: Eq. 4.13 (L1466) with §4.5.3's schedule (L1453)",
                 "Eq. 4.13")


def table44_rate(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Table 4.4's rows for the public variants: Interleaved O~((1/(n((1 - p)n + 1)))^(2/3) (sqrt(d)/eps)^(4/3) +
    (C_n^part)^2/(n^2 beta)), Priv-Pub and Pub-Priv O~((p/n)^(2/3) (sqrt(d)/eps)^(4/3) + (C_n^full)^2/(n^2 beta)), with
    C = 0 (public records equal to the private ones): the local exponent of the exact expected excess against that of
    the claimed expression (about -4/3 and -2/3 at fixed p), as ``eq413_rate``, at DP-ShuffleG's schedule (K = n
    eps^2 / d; the thesis gives no K of its own for the public variants)."""
    inst = points[0]["params"]["instance"]
    if inst == "dp_shuffleg" or any(pt["params"]["instance"] != inst for pt in points):
        return cited_result(check, f"{SEED}: Table 4.4", (), "inapplicable", "Table 4.4's rows are the public "
                            "variants' (DP-ShuffleG's is Eq. 4.13)", confidence=1.0, rows=[], uncited="not a public variant")
    return _rate(check, points, ("003 Table 4.4",), f"{SEED}: Table 4.4 ({inst}) at §4.5.3 / §4.6.5's schedule",
                 "Table 4.4")


def exact_bound(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, failed = [], False
    for pt in sorted(points, key=lambda q: q["params"]["n"]):
        e, b = pt["exact"]["total"], pt["bound"]["total"]
        over = e > b * (1 + 1e-9)
        failed = failed or over
        rows.append({"n": pt["params"]["n"], "K": pt["K"], "eta": pt["eta"], "exact": e, "bound": b,
                     "bound_init": pt["bound"]["init"], "bound_noise": pt["bound"]["noise"], "ratio": e / b,
                     "verdict": "fail" if over else "pass"})
    worst = max(rows, key=lambda r: r["ratio"])
    summary = (f"largest exact excess / bound {worst['ratio']:.3g} at n = {worst['n']:g} (exact {worst['exact']:.4g}, "
               f"bound {worst['bound']:.4g})")
    inst = points[0]["params"]["instance"]
    claim = {"interleaved": "003 Cor 4.6.1 (Interleaved)", "priv_pub": "003 Cor 4.6.1 (Priv-Pub)",
             "pub_priv": "003 Cor 4.6.1 (Pub-Priv)"}.get(inst, "003 Cor 4.5.1")
    return exact_result(check, claim[4:], f"{SEED}: {claim[4:]} (L1627 / L1419) at §4.5.3's schedule", (claim,),
                        "fail" if failed else "pass", summary, measured=worst["exact"], bound=worst["bound"],
                        rows=rows)


def exact_vs_simulation(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, verdicts = [], []
    for pt in points:
        if not pt["simulated"]:
            continue
        ci = mean_ci(np.asarray(pt["simulated"]), check.confidence)
        ok = ci.lower <= pt["exact"]["total"] <= ci.upper
        verdicts.append("pass" if ok else "fail")
        rows.append({"n": pt["params"]["n"], "exact": pt["exact"]["total"], "simulated_mean": ci.mean,
                     "lower": ci.lower, "upper": ci.upper, "trials": ci.trials, "verdict": verdicts[-1]})
    v = "fail" if "fail" in verdicts else "pass" if verdicts else "inapplicable"
    summary = ("no point small enough to simulate" if not rows else
               "; ".join(f"n = {r['n']}: exact {r['exact']:.4g} in [{r['lower']:.4g}, {r['upper']:.4g}]" for r in rows))
    return cited_result(check, f"{SEED}: Alg. 3 as DP-ShuffleG (the closed form of its expectation)", (), v,
                        summary, confidence=check.confidence, rows=rows,
                        uncited="a test of our closed form against the algorithm, no claim of the thesis")


ShuffleGRateCheckFn = Callable[[Any, str, list[dict]], CheckResult]
SHUFFLEG_RATE_CHECKS: Registry[ShuffleGRateCheckFn] = Registry("shuffled-gradient rate check kind")
SHUFFLEG_RATE_CHECKS.add("eq413_rate", eq413_rate)
SHUFFLEG_RATE_CHECKS.add("table44_rate", table44_rate)
SHUFFLEG_RATE_CHECKS.add("exact_bound", exact_bound)
SHUFFLEG_RATE_CHECKS.add("exact_vs_simulation", exact_vs_simulation)


def dpsgd_order(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """§4.5.4 (L1475-1485): DP-ShuffleG's guarantee is worse than DP-(S)GD's (O~(sqrt(d)/(n eps)), optimal). On this
    instance, exactly: each method's expected excess at its best step, same privacy, same number of gradient steps.
    Judged at the largest n (the claim is about rates): pass when DP-SGD's is lower, fail when DP-ShuffleG's is
    lower; a best step at the edge of the grid makes the point inconclusive. Both local exponents in n are shown."""
    pts = sorted(points, key=lambda q: q["params"]["n"])
    if any(pt["versus_dpsgd"] is None for pt in pts):
        return cited_result(check, f"{SEED}: §4.5.4", (), "inapplicable", "the comparison is DP-ShuffleG's",
                            confidence=1.0, rows=[], uncited="not DP-ShuffleG")
    rows = [{"n": pt["params"]["n"], **{k: v for k, v in pt["versus_dpsgd"].items()}} for pt in pts]
    top = rows[-1]
    v = "inconclusive" if top["edge"] else "pass" if top["dpsgd"] < top["dp_shuffleg"] else "fail"
    slopes = ""
    if len(rows) >= 2:
        a, b = rows[-2], rows[-1]
        ln = math.log(b["n"] / a["n"])
        slopes = (f"; local exponents in n: DP-ShuffleG {math.log(b['dp_shuffleg'] / a['dp_shuffleg']) / ln:.3f}, "
                  f"DP-SGD {math.log(b['dpsgd'] / a['dpsgd']) / ln:.3f}")
    summary = (f"at n = {top['n']:g}: DP-SGD {top['dpsgd']:.4g} (z = {top['dpsgd_noise_multiplier']:.3g}) against "
               f"DP-ShuffleG {top['dp_shuffleg']:.4g}, each at its best step" + slopes)
    return exact_result(check, "§4.5.4", f"{SEED}: §4.5.4 (DP-ShuffleG against DP-SGD)", ("003 §4.5.4 (vs DP-SGD)",),
                        v, summary, measured=top["dp_shuffleg"], bound=top["dpsgd"], rows=rows)


SHUFFLEG_RATE_CHECKS.add("dpsgd_order", dpsgd_order)


def _rate_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    slope, limit = float(r["measured"]), float(r["bound"])      # a stored -inf is the string '-inf'
    if slope == -math.inf:
        return Rule(f"fail iff the exact expected excess's local exponent in n over the largest decade exceeds the "
                    f"claimed expression's + {RATE_TOL}; pass otherwise (exact)",
                    "the excess underflowed to 0: it falls faster than any power of n", "pass")
    return Rule(f"fail iff the exact expected excess's local exponent in n over the largest decade exceeds the "
                f"claimed expression's + {RATE_TOL} (its hidden logs); pass otherwise (exact)",
                f"exponent {compare(slope, limit, relative=False)[0]}", "fail" if slope > limit else "pass")


def _exact_bound_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["ratio"])
    return Rule("fail iff the exact expected excess exceeds the corollary's bound at some n (rel. 1e-9); pass otherwise "
                "(exact)", f"largest: exact {compare(w['exact'], w['bound'])[0]} (the bound) at n = {w['n']:g}",
                side_of(r["rows"]))


def _simulation_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: abs(x["exact"] - x["simulated_mean"]) / max(x["upper"] - x["lower"], 1e-300))
    return Rule(f"pass iff the exact expectation lies in the simulated mean's two-sided {r['confidence']:g} interval at "
                f"every simulated n; fail otherwise", f"farthest: exact {w['exact']:.4g} against [{w['lower']:.4g}, "
                f"{w['upper']:.4g}] at n = {w['n']:g}", side_of(r["rows"]))


def _dpsgd_order_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    top = r["rows"][-1]
    side = "undecided" if top["edge"] else "pass" if top["dpsgd"] < top["dp_shuffleg"] else "fail"
    return Rule("at the largest n, each at its best step: pass iff DP-SGD's exact expected excess is below "
                "DP-ShuffleG's, fail iff above; a best step at the grid's edge leaves it inconclusive (exact)",
                f"DP-SGD {compare(top['dpsgd'], top['dp_shuffleg'])[0]} (DP-ShuffleG) at n = {top['n']:g}", side)


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
SHUFFLEG_RATE_RULES = {"eq413_rate": _rate_rule, "table44_rate": _rate_rule, "exact_bound": _exact_bound_rule,
                       "exact_vs_simulation": _simulation_rule, "dpsgd_order": _dpsgd_order_rule}
