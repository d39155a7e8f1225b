"""Checks of seed 003's DaRRM claims (chapter 3 of Jiang's thesis; the ``darrm`` mechanism, catalog/darrm_003.py) against
exact computations: numbers in, verdicts out. Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt.

A point holds, per named noise function (sub, const, dsub, majority), the claimed epsilon (None where the chapter
claims nothing at that point), its delta and scope, the exact epsilon over every corner multiset of Lemma 3.6.1, the
largest exact loss at random configurations of the feasible region, the largest i.i.d. loss on a dense grid, the
gamma values and the exact errors over i.i.d. p.

- ``darrm_privacy``: the claims for every neighbouring pair: gamma_Sub (Lemma 3.4.1 + m-fold composition) and
  randomized response at Lemma B.1.1's p_const are (m eps, 1-(1-Delta)^m)-DP. The exact epsilon above the claim at
  any point fails. So does a random configuration whose exact loss exceeds the corner maximum (the corner reduction
  of Lemma 3.6.1, as implemented, missed a worse configuration), for any gamma.
- ``darrm_amplification``: Thm 3.5.1 (L909-915; Lemmas B.2.5 and B.2.10): with Delta = delta = 0 and i.i.d.
  mechanisms, DaRRM with gamma_DSub (gamma = 1 once m >= (K+1)/2) is m eps-DP. The largest i.i.d. loss on the grid
  above m eps fails; points with Delta > 0 are inapplicable (outside the theorem).
- ``darrm_optimal``: the LP's gamma_opt (points with ``lp: 1``) is exactly (m eps, delta)-DP, its expected error
  under the LP's prior is at most every private baseline's (the LP optimises over all of them), equal to gamma_Sub's
  at m = 1 (Fig. 3.2's discussion, L998, and Lemma 3.4.2) and 0 under pure DP once m >= (K+1)/2 (Fig. B.5/B.6).
- ``darrm_utility``: L3341 with Lemma B.2.11 (L3305): gamma_DSub >= gamma_Sub pointwise, hence for i.i.d.
  mechanisms the error of DaRRM_gamma_DSub is at most that of DaRRM_gamma_Sub, at every p. Either ordering reversed
  anywhere (beyond rounding) fails.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from algorithms.registry import Registry
from verifiers.checks.base import EXACT_ABS_SLACK, CheckResult, Rule, compare, decided, exact_result, exceeds

SEED = "seed 003 (Jiang, thesis ch. 3)"
CITE_PRIVACY = (f"{SEED}: DaRRM (Alg. 1, L865-880) with gamma_Sub (Lemma 3.4.1, L849-857; m-fold composition, L843-845, "
                f"delta 1-(1-Delta)^m as in Fig. 3.2, L982) and randomized response (Lemma B.1.1, L2364-2368), against "
                f"the exact epsilon over Lemma 3.6.1's corners (L961-967), cross-checked at random configurations")
CITE_AMPLIFICATION = (f"{SEED}: Thm 3.5.1 (L909-915; Lemma B.2.5, L2851; Lemma B.2.10, L3185), i.i.d. mechanisms, "
                      f"delta = Delta = 0, gamma_DSub, against the largest exact i.i.d. loss on a dense grid of F")
CITE_UTILITY = f"{SEED}: Lemma B.2.11 (L3305) and L3341: gamma_DSub >= gamma_Sub, so E(DSub) <= E(Sub), i.i.d. p"
# the identity of Lemma 3.4.1 / B.1.2 and the general composition of Thm 3.3.3 are only used here (tests check the
# identity by brute force), so the check cites the claims it decides
CLAIMS_PRIVACY = ("003 Lemma B.1.1", "003 Lemma 3.6.1 / B.3.1")
CLAIMS_AMPLIFICATION = ("003 Thm 3.5.1 / B.2.4", "003 Lemma B.2.5", "003 Lemma B.2.10")
CLAIMS_UTILITY = ("003 Lemma B.2.11",)
CITE_OPT = (f"{SEED}: the LP (3.2)-(3.3) (L931-939) with Lemma 3.6.1's rows (L961-967); Fig. 3.2's discussion (L998) and "
            f"Fig. B.5/B.6 (L3542-3586): gamma_opt against gamma_Sub, RR and gamma_DSub under the uniform prior")
CLAIMS_OPT_APPROX = ("003 §3.7.1 / Fig. 3.2",)
CLAIMS_OPT_PURE = ("003 Fig. B.5 / B.6",)
LP_SLACK = 1e-9           # the LP's solution is scaled onto its rows; its objective then moves by ~1e-11
GENERAL = ("sub", "const")          # gammas with a claim for every neighbouring pair





def darrm_privacy(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Every point: exact epsilon <= claim for gamma_Sub and RR; interior loss <= corner maximum for every gamma."""
    rows, why, passed, failed = [], [], 0, False
    worst: tuple[float, float, float] | None = None
    for pt in points:
        for name, g in pt["gammas"].items():
            if exceeds(g["interior_max"], g["exact"]):
                failed = True
                why.append(f"{pt['value']}, {name}: a random configuration has loss {g['interior_max']:.6g} > the corner "
                           f"maximum {g['exact']:.6g} (the corners miss a worse configuration)")
            if name not in GENERAL or g["claim"] is None:
                continue
            over = exceeds(g["exact"], g["claim"])
            if over:
                failed = True
                why.append(f"{pt['value']}, {name}: exact epsilon {g['exact']:.6g} > claimed {g['claim']:.6g} at delta "
                           f"{g['delta']:.3g} (worst corner counts {tuple(g['worst_counts'])})")
            else:
                passed += 1
            ratio = g["exact"] / g["claim"] if g["claim"] > 0 else float("inf")
            if worst is None or ratio > worst[0]:
                worst = (ratio, g["exact"], g["claim"])
            rows.append({"point": pt["value"], "gamma": name, "delta": g["delta"], "claim": g["claim"],
                         "exact": g["exact"], "exact_over_claim": ratio, "interior_max": g["interior_max"],
                         "worst_counts": tuple(g["worst_counts"])})
    span = (f"exact / claimed epsilon from {min(r['exact_over_claim'] for r in rows):.3g} to "
            f"{max(r['exact_over_claim'] for r in rows):.3g}") if rows else "no claim checked"
    summary = (f"exact epsilon of DaRRM's output (every corner multiset, both outputs and orders) for gamma_Sub and RR "
               f"against m eps at delta = 1-(1-Delta)^m: {span}; every gamma's loss at the random configurations at most "
               f"its corner maximum" + ("" if not why else f"; FAILS: {'; '.join(why)}"))
    return exact_result(check, "darrm.privacy", CITE_PRIVACY, CLAIMS_PRIVACY, decided(failed, passed), summary,
                   measured=None if worst is None else worst[1], bound=None if worst is None else worst[2], rows=rows)


def darrm_amplification(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Points with Delta = 0: the largest i.i.d. loss of DaRRM_gamma_DSub <= m eps (Thm 3.5.1)."""
    rows, why, skipped, passed, failed = [], [], [], 0, False
    worst: tuple[float, float, float] | None = None
    for pt in points:
        g = pt["gammas"]["dsub"]
        if pt["params"]["Delta"] != 0 or g["claim"] is None:
            skipped.append(f"{pt['value']}: Delta = {pt['params']['Delta']:g} > 0 (Thm 3.5.1 needs Delta = 0)")
            continue
        over = exceeds(g["iid"], g["claim"])
        if over:
            failed = True
            why.append(f"{pt['value']}: i.i.d. epsilon {g['iid']:.6g} > m eps = {g['claim']:.6g} at (p, p') = "
                       f"({g['iid_at'][0]:.4g}, {g['iid_at'][1]:.4g})")
        else:
            passed += 1
        ratio = g["iid"] / g["claim"]
        if worst is None or ratio > worst[0]:
            worst = (ratio, g["iid"], g["claim"])
        rows.append({"point": pt["value"], "m": pt["params"]["m"], "claim": g["claim"], "iid": g["iid"],
                     "iid_over_claim": ratio, "iid_at": tuple(g["iid_at"]), "every_pair_exact": g["exact"],
                     "every_pair_over_claim": g["exact"] / g["claim"]})
    span = (f"i.i.d. epsilon / (m eps) from {min(r['iid_over_claim'] for r in rows):.3g} to "
            f"{max(r['iid_over_claim'] for r in rows):.3g}; over every (non-i.i.d.) pair, which the theorem does not "
            f"claim, exact / (m eps) up to {max(r['every_pair_over_claim'] for r in rows):.3g}") if rows else "no point"
    summary = (f"Thm 3.5.1, gamma_DSub, pure DP, i.i.d. pairs: {span}"
               + (f"; inapplicable: {'; '.join(skipped)}" if skipped else "")
               + (f"; FAILS: {'; '.join(why)}" if why else ""))
    return exact_result(check, "darrm.thm3_5_1", CITE_AMPLIFICATION, CLAIMS_AMPLIFICATION, decided(failed, passed), summary,
                   measured=None if worst is None else worst[1], bound=None if worst is None else worst[2], rows=rows)


def darrm_utility(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Every point: gamma_DSub >= gamma_Sub at every l, and error(DSub) <= error(Sub) at every i.i.d. p of the grid."""
    rows, why, passed, failed = [], [], 0, False
    for pt in points:
        sub, dsub = pt["gammas"]["sub"], pt["gammas"]["dsub"]
        gap_gamma = min(d - s for d, s in zip(dsub["gamma"], sub["gamma"]))
        gap_err = min(s - d for d, s in zip(dsub["errors"], sub["errors"]))
        bad = []
        if gap_gamma < -EXACT_ABS_SLACK:
            bad.append(f"gamma_DSub below gamma_Sub by {-gap_gamma:.3g}")
        if gap_err < -EXACT_ABS_SLACK:
            bad.append(f"error(DSub) above error(Sub) by {-gap_err:.3g}")
        if bad:
            failed = True
            why.append(f"{pt['value']}: {', '.join(bad)}")
        else:
            passed += 1
        rows.append({"point": pt["value"], "min_gamma_dsub_minus_sub": gap_gamma, "min_error_sub_minus_dsub": gap_err,
                     "error_max_sub": sub["error_max"], "error_max_dsub": dsub["error_max"],
                     "error_mean_sub": sub["error_mean"], "error_mean_dsub": dsub["error_mean"],
                     "error_mean_const": pt["gammas"]["const"]["error_mean"]})
    summary = ("gamma_DSub >= gamma_Sub pointwise and error(DSub) <= error(Sub) at every i.i.d. p of the grid"
               + (f" (mean error over the grid: Sub {rows[0]['error_mean_sub']:.3g}, DSub "
                  f"{rows[0]['error_mean_dsub']:.3g} at the first point)" if rows else "")
               + (f"; FAILS: {'; '.join(why)}" if why else ""))
    return exact_result(check, "darrm.lemma_b2_11", CITE_UTILITY, CLAIMS_UTILITY, decided(failed, passed), summary,
                   measured=None, bound=None, rows=rows)


def darrm_optimal(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    """Points where the spec solved the LP (``lp: 1``): gamma_opt is (m eps, delta)-DP exactly; its prior error is at
    most that of every private baseline (gamma_Sub, RR, and gamma_DSub where its exact epsilon meets m eps); at m = 1
    it equals gamma_Sub's (Fig. 3.2, L998: the LP cannot beat subsampling there, Lemma 3.4.2); under pure DP with
    m >= (K+1)/2 it is 0 (Fig. B.5/B.6)."""
    rows, why, skipped, passed, failed = [], [], [], 0, False
    approx = pure = False
    for pt in points:
        gs = pt["gammas"]
        if "opt" not in gs:
            skipped.append(f"{pt['value']}: no LP solved (params.lp = 0)")
            continue
        K, m, Delta = pt["params"]["K"], pt["params"]["m"], pt["params"]["Delta"]
        approx, pure = approx or Delta > 0, pure or Delta == 0
        opt, bad = gs["opt"], []
        if exceeds(opt["exact"], opt["claim"]):
            bad.append(f"gamma_opt's exact epsilon {opt['exact']:.6g} > m eps = {opt['claim']:.6g}")
        base = {n: g["prior_error"] for n, g in gs.items() if n in ("sub", "const")
                or (n == "dsub" and not exceeds(g["exact"], m * pt["params"]["eps"]))}
        beaten = {n: e for n, e in base.items() if opt["prior_error"] > e + LP_SLACK}
        if beaten:
            bad.append(f"gamma_opt's prior error {opt['prior_error']:.6g} above {beaten}")
        if m == 1 and opt["prior_error"] < gs["sub"]["prior_error"] - LP_SLACK:
            bad.append(f"at m = 1 gamma_opt's error {opt['prior_error']:.6g} below gamma_Sub's "
                       f"{gs['sub']['prior_error']:.6g} (Lemma 3.4.2 forbids it)")
        if Delta == 0 and 2 * m >= K + 1 and opt["prior_error"] > LP_SLACK:
            bad.append(f"pure DP, m >= (K+1)/2: gamma_opt's error {opt['prior_error']:.3g} is not 0")
        if bad:
            failed = True
            why.append(f"{pt['value']}: {'; '.join(bad)}")
        else:
            passed += 1
        rows.append({"point": pt["value"], "m": m, "exact": opt["exact"], "claim": opt["claim"],
                     "prior_error_opt": opt["prior_error"]} | {f"prior_error_{n}": e for n, e in base.items()}
                    | {"lp_scaled": opt["lp_scaled"], "lp_rows": opt["lp_rows"]})
    claims = CLAIMS_OPT_APPROX * approx + CLAIMS_OPT_PURE * pure
    span = ("; ".join(f"{r['point']}: opt {r['prior_error_opt']:.3g} vs sub {r['prior_error_sub']:.3g}, const "
                      f"{r['prior_error_const']:.3g}" for r in rows) if rows else "no LP solved")
    summary = ("gamma_opt (the LP over Lemma 3.6.1's corner rows): exactly (m eps, delta)-DP (by construction: its "
               "rows are the corners the exact epsilon maximises over; the corners' completeness is a test's, "
               "tests/test_darrm.py), prior error at most every "
               f"private baseline's, equal to gamma_Sub's at m = 1, 0 under pure DP once m >= (K+1)/2: {span}"
               + (f"; inapplicable: {'; '.join(skipped)}" if skipped else "")
               + (f"; FAILS: {'; '.join(why)}" if why else ""))
    return exact_result(check, "darrm.gamma_opt", CITE_OPT, claims, decided(failed, passed), summary,
                   measured=None, bound=None, rows=rows)


DarrmCheckFn = Callable[[Any, str, list[dict]], CheckResult]
DARRM_CHECKS: Registry[DarrmCheckFn] = Registry("DaRRM check kind")
DARRM_CHECKS.add("darrm_privacy", darrm_privacy)
DARRM_CHECKS.add("darrm_amplification", darrm_amplification)
DARRM_CHECKS.add("darrm_utility", darrm_utility)
DARRM_CHECKS.add("darrm_optimal", darrm_optimal)


def _privacy_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["exact_over_claim"])
    bad = any(exceeds(x["exact"], x["claim"]) or exceeds(x["interior_max"], x["exact"]) for x in r["rows"])
    return Rule("fail iff a gamma's exact epsilon (every corner multiset) exceeds its claimed m eps, or a random interior "
                "configuration beats the corner maximum; pass otherwise (exact)",
                f"closest: {w['gamma']} exact {compare(w['exact'], w['claim'])[0]} (claimed) at {w['point']}",
                "fail" if bad else "pass")


def _amplification_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["iid_over_claim"])
    return Rule("fail iff gamma_DSub's largest i.i.d. privacy loss exceeds m eps at a pure-DP point (Thm 3.5.1); pass "
                "otherwise (exact)", f"i.i.d. epsilon {compare(w['iid'], w['claim'])[0]} (m eps) at m = {w['m']}",
                "fail" if any(exceeds(x["iid"], x["claim"]) for x in r["rows"]) else "pass")


def _utility_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    gap_g = min(x["min_gamma_dsub_minus_sub"] for x in r["rows"])
    gap_e = min(x["min_error_sub_minus_dsub"] for x in r["rows"])
    bad = gap_g < -EXACT_ABS_SLACK or gap_e < -EXACT_ABS_SLACK
    return Rule("fail iff gamma_DSub falls below gamma_Sub at some l or its error exceeds gamma_Sub's at some i.i.d. p "
                "of the grid; pass otherwise (exact)", f"smallest gamma_DSub - gamma_Sub {gap_g:.3g}; smallest "
                f"error(Sub) - error(DSub) {gap_e:.3g}", "fail" if bad else "pass")


def _optimal_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    margins = []
    bad = False
    for x in rows:
        others = {k[len("prior_error_"):]: v for k, v in x.items() if k.startswith("prior_error_") and k != "prior_error_opt"}
        best = min(others.values())
        margins.append((best - x["prior_error_opt"], x["point"]))
        bad |= exceeds(x["exact"], x["claim"]) or x["prior_error_opt"] > best + LP_SLACK
    gap, at = min(margins)
    return Rule("fail iff gamma_opt's exact epsilon exceeds m eps, its prior error exceeds a private baseline's, it beats "
                "gamma_Sub at m = 1, or (pure DP, m >= (K+1)/2) its error is not 0; pass otherwise (exact)",
                f"smallest lead over the best baseline {gap:.3g} (at {at})", "fail" if bad else "pass")


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
DARRM_RULES = {"darrm_privacy": _privacy_rule, "darrm_amplification": _amplification_rule,
               "darrm_utility": _utility_rule, "darrm_optimal": _optimal_rule}
