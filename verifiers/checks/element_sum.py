"""Checks of seed 002's subsampled Gaussian element sum (mechanism (4), Cor 2.5, Cor 3.1/3.2, Eq. (16)) and of its
amplification-by-subsampling corollary (Cor 2.4): numbers in (the points of catalog/element_sum_002.py), verdicts out.
Lnnn = line of ../shared/seeds/002_d3919fba655c6f58.txt.

- ``sum_accounting``: the paper's epsilon (Cor 2.5's eps_alpha, T-fold RDP composition, Mironov's conversion:
  L138-142, Cor 3.1 L329; Cor 3.2 L331 at user level) against our bracket [optimistic, pessimistic] of the exact
  epsilon of the worst realisable neighbouring pair (verifiers/accountants/element_rdp.py). The optimistic value
  above the claim fails (the claim is below the truth); the pessimistic value at or below it passes under Poisson
  sampling (where the pair is the worst case); under fixed-size sampling our pair is only realisable, so a point
  that does not fail is inconclusive.
- ``sum_audit``: Clopper-Pearson lower bound on epsilon from the canary's Neyman-Pearson scores on both sides of
  the worst collinear pair (verifiers/audit.py). Above the claim fails; otherwise pass, which only says this audit
  could not refute the claim (an audit can refute, never prove).
- ``cor25_approximation``: Cor 2.5's eps_alpha <= q^2 alpha/((1-q) sigma^2) + O(q^3/sigma^3) for alpha <= sigma^2
  log(1/(q sigma)), sigma >= 2 (L144-146). Exact eps_alpha at every point; where it is at most the leading term at
  every judged (point, alpha) the claim holds on the sweep (pass). It fails when, at a fixed (sigma, alpha) in the
  range, over at least 3 values of q, the excess eps_alpha - lead is positive, (excess)/(q^3/sigma^3) grows as q
  falls, and eps_alpha / q^2 at the smallest q is within 5 % of the analytic limit 2 alpha sinh(1/sigma^2) >
  alpha/sigma^2: then the excess is of order q^2, which no O(q^3/sigma^3) remainder absorbs as q -> 0. Else
  inconclusive.
Eq. (16) (L333-335) states (O(1) eps, delta) with an unstated constant: no finite computation decides it, so it is
no check kind; the mechanism's report tables our exact epsilon against its expression.
- ``subsampling_amplification``: Cor 2.4 (L127-130) against the exact epsilon of randomized response on each of a
  user's K element bits after subsampling users (enumeration, delta = 0): any exact value above the claim fails.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from algorithms.registry import Registry
from verifiers.checks.base import CheckResult, Rule, at, cite, compare, decided, exact_result, exceeds, side_of

SEED = "seed 002 (Asi, Duchi, Javidi)"
CITE_ACCOUNTING = (f"{SEED}: mechanism (4) (L132-134), Cor 2.5 (L138-140) composed T times with Mironov's conversion "
                   f"(L142; Cor 3.1, L329; Cor 3.2 at user level, L331), against our exact PLD of the worst realisable "
                   f"neighbouring pair")
CITE_AUDIT = f"{SEED}: Cor 3.1 (L329) via Cor 2.5 (L138-140), audited with a canary user on mechanism (4) (L132-134)"
CITE_APPROX = f"{SEED}: the approximation after Cor 2.5 (L144-146), against the exact eps_alpha"
CITE_AMPL = (f"{SEED}: Cor 2.4 (L127-130; [7, Thms 8 & 9]) against the exact epsilon of randomized response on each "
             f"element bit, users subsampled, element neighbours")
CLAIMS_ACCOUNTING = ("002 Cor 2.5", "002 Cor 3.1")
CLAIMS_USER = ("002 Cor 3.2",)
CLAIMS_AUDIT = ("002 Cor 3.1", "002 Cor 2.5")
CLAIMS_APPROX = ("002 Cor 2.5 (approximation)",)
CLAIMS_AMPL = ("002 Cor 2.4",)
LIMIT_TOL = 0.05          # eps_alpha / q^2 at the smallest q within 5 % of its q -> 0 limit


def _claims(points: list[dict]) -> tuple[str, ...]:
    return CLAIMS_USER if points and points[0]["relation"]["unit"] == "user" else CLAIMS_ACCOUNTING


def element_accounting(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, why, passed, failed, open_ = [], [], 0, False, 0
    for pt in points:
        acc = pt["accounting"]
        claim, lo, hi = acc["claim"], acc["tight_lower"], acc["tight_upper"]
        poisson = not pt["params"]["fixed_size"]
        if exceeds(lo, claim):
            failed = True
            why.append(f"{pt['value']}: exact epsilon >= {lo:.4g} > claimed {claim:.4g} (pair a = {acc['pair'][0]:g}, "
                       f"b = {acc['pair'][1]:g} rho)")
            verdict = "fail"
        elif hi <= claim and poisson:
            passed += 1
            verdict = "pass"
        else:
            open_ += 1
            verdict = "inconclusive"
        rows.append({"point": pt["value"], "relation": pt["relation"]["label"], "claim (paper)": claim,
                     "claim alpha": acc["claim_alpha"], "exact lower": lo, "exact upper": hi,
                     "Mironov of the true pair": acc["mironov_true"], "exact / claim": hi / claim, "verdict": verdict})
    verdict = "fail" if failed else "inconclusive" if open_ else decided(False, passed)
    span = (f"exact / claimed epsilon from {min(r['exact / claim'] for r in rows):.3g} to "
            f"{max(r['exact / claim'] for r in rows):.3g}")
    summary = (f"the paper's epsilon (Cor 2.5 + T-fold RDP + Mironov) against the exact epsilon of the worst realisable "
               f"pair under {points[0]['relation']['label']}: {span}; " + ("; ".join(why) if why else
               f"{passed} point(s) pass" + (f", {open_} open (fixed-size sampling: our pair is only a lower bound)"
                                            if open_ else "")))
    return exact_result(check, "002 Cor 2.5 / Cor 3.1", CITE_ACCOUNTING, _claims(points), verdict, summary,
                        measured=max(r["exact upper"] for r in rows), bound=min(r["claim (paper)"] for r in rows),
                        rows=rows)


def element_audit(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, why, judged, miss = [], [], 0, 0.0
    for pt in points:
        au = pt.get("audit")
        if not au:
            continue
        judged += 1
        miss += 1 - au["confidence"]
        claim = pt["accounting"]["claim"]
        over = au["epsilon_lower"] > claim
        if over:
            why.append(f"{pt['value']}: audit lower bound {au['epsilon_lower']:.4g} > claimed {claim:.4g}")
        rows.append({"point": pt["value"], "claim (paper)": claim, "audit lower bound": au["epsilon_lower"],
                     "exact upper": pt["accounting"]["tight_upper"], "false positives": au["false_positives"],
                     "false negatives": au["false_negatives"], "trials per side": au["trials_per_side"]})
    conf = max(0.0, 1 - miss)          # family-wise over the points (Bonferroni)
    if not judged:
        conf = 1.0
        verdict, summary = "inapplicable", "no point ran the audit (params.audit = 0)"
    else:
        verdict = "fail" if why else "pass"
        summary = ("Clopper-Pearson lower bound on epsilon (canary's likelihood-ratio score over the T releases; each "
                   f"point at params.audit_confidence, {conf:.4g} family-wise) against the paper's epsilon: " + ("; ".join(why) if why else
                   "never above it: this audit could not refute the claim (an audit can only refute)"))
    return CheckResult(id=check.id, kind=check.kind, theorem="002 Cor 3.1", citation=cite(CITE_AUDIT, CLAIMS_AUDIT),
                       verdict=verdict, measured=max((r["audit lower bound"] for r in rows), default=None),
                       bound=min((r["claim (paper)"] for r in rows), default=None), confidence=conf,
                       summary=summary, rows=tuple(rows), claims=CLAIMS_AUDIT)


def approximation(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows: list[dict] = []
    for pt in points:
        for r in pt["approximation"]["rows"]:
            if r["in_range"]:
                rows.append({"point": pt["value"], "q": pt["params"]["q"], "sigma": pt["params"]["sigma"]} | r)
    if not rows:
        return exact_result(check, "002 Cor 2.5 (approximation)", CITE_APPROX, CLAIMS_APPROX, "inapplicable",
                            "no point has sigma >= 2 and an alpha in (1, sigma^2 log(1/(q sigma))]", measured=None,
                            bound=None, rows=[])
    if all(r["eps_alpha"] <= r["lead"] * (1 + 1e-9) for r in rows):
        return exact_result(check, "002 Cor 2.5 (approximation)", CITE_APPROX, CLAIMS_APPROX, "pass",
                            f"exact eps_alpha <= q^2 alpha/((1-q) sigma^2) at all {len(rows)} judged (point, alpha)",
                            measured=max(r["ratio"] for r in rows), bound=1.0, rows=rows)
    groups: dict[tuple[float, float], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["sigma"], r["alpha"]), []).append(r)
    refuted = []
    for (s, al), g in groups.items():
        g = sorted(g, key=lambda r: -r["q"])
        if len({r["q"] for r in g}) < 3:
            continue
        excess_pos = all(r["eps_alpha"] > r["lead"] for r in g)
        growing = all(b["remainder_over_q3"] > a["remainder_over_q3"] for a, b in zip(g, g[1:]))
        small = g[-1]
        near = abs(small["eps_over_q2"] / small["limit"] - 1) <= LIMIT_TOL
        if excess_pos and growing and near and small["limit"] > al / s**2:
            refuted.append((s, al, g))
    worst = max(rows, key=lambda r: r["ratio"])
    if refuted:
        s, al, g = refuted[0]
        summary = (f"at sigma = {s:g}, alpha = {al:g} (in range): eps_alpha / (q^2 alpha/((1-q) sigma^2)) = "
                   f"{g[-1]['ratio']:.4g} at q = {g[-1]['q']:g}, and (eps_alpha - lead)/(q^3/sigma^3) grows from "
                   f"{g[0]['remainder_over_q3']:.4g} to {g[-1]['remainder_over_q3']:.4g} as q falls from {g[0]['q']:g} "
                   f"to {g[-1]['q']:g}; eps_alpha/q^2 -> 2 alpha sinh(1/sigma^2) = {g[-1]['limit']:.4g} > alpha/sigma^2 "
                   f"= {al / s**2:.4g}: the excess is of order q^2 (the ratio tends to 2 sigma^2 sinh(1/sigma^2) "
                   f">= 2), so no O(q^3/sigma^3) remainder holds as q -> 0 ({len(refuted)} (sigma, alpha) refuted)")
        verdict = "fail"
    else:
        summary = (f"eps_alpha exceeds the leading term (largest ratio {worst['ratio']:.4g} at q = {worst['q']:g}, "
                   f"alpha = {worst['alpha']:g}) but the sweep does not show the excess to be of order q^2 (needs >= 3 "
                   "values of q at one (sigma, alpha), approaching the q -> 0 limit)")
        verdict = "inconclusive"
    return exact_result(check, "002 Cor 2.5 (approximation)", CITE_APPROX, CLAIMS_APPROX, verdict, summary,
                        measured=worst["ratio"], bound=1.0, rows=rows)


def subsampling_amplification(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, why, passed, failed = [], [], 0, False
    for pt in points:
        for scheme in pt["schemes"]:
            over = exceeds(scheme["exact"], scheme["claim"])
            failed |= over
            passed += not over
            if over:
                why.append(f"{pt['value']}, {scheme['name']}: exact {scheme['exact']:.4g} > claimed "
                           f"{scheme['claim']:.4g}")
            rows.append({"point": pt["value"], "scheme": scheme["name"], "eps0": pt["params"]["eps0"],
                         "q": pt["params"]["q"], "K": pt["params"]["K"], "claim": scheme["claim"],
                         "exact": scheme["exact"], "exact / claim": scheme["exact"] / scheme["claim"]})
    worst = max(rows, key=lambda r: r["exact / claim"])
    summary = ("exact epsilon (delta = 0) of eps0-randomized response on each element bit, users subsampled, element "
               f"neighbours, against Cor 2.4's log(1 + q(e^eps0 - 1)): worst exact / claim {worst['exact / claim']:.4g} "
               f"({worst['scheme']}, K = {worst['K']}, eps0 = {worst['eps0']:g}, q = {worst['q']:g}); "
               + ("; ".join(why[:4]) + (f"; {len(why) - 4} more" if len(why) > 4 else "") if why else
                  f"all {passed} within the claim"))
    return exact_result(check, "002 Cor 2.4", CITE_AMPL, CLAIMS_AMPL, decided(failed, passed), summary,
                        measured=worst["exact"], bound=worst["claim"], rows=rows)


ElementCheckFn = Callable[[Any, str, list[dict]], CheckResult]
ELEMENT_SUM_CHECKS: Registry[ElementCheckFn] = Registry("element-sum check kind")
ELEMENT_SUM_CHECKS.add("sum_accounting", element_accounting)
ELEMENT_SUM_CHECKS.add("sum_audit", element_audit)
ELEMENT_SUM_CHECKS.add("cor25_approximation", approximation)
AMPLIFICATION_CHECKS: Registry[ElementCheckFn] = Registry("amplification check kind")
AMPLIFICATION_CHECKS.add("subsampling_amplification", subsampling_amplification)


def _accounting_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["exact / claim"])
    return Rule("per point: fail iff the exact epsilon of the worst realisable neighbouring pair (its lower end) exceeds "
                "the paper's (Cor 2.5, T-fold RDP, Mironov's conversion); pass iff its upper end is at most the claim "
                "under Poisson sampling; else inconclusive (fixed-size sampling: the pair bounds only from below)",
                f"exact upper {compare(w['exact upper'], w['claim (paper)'])[0]} (claimed){at(w['point'])}",
                side_of(r["rows"]))


def _audit_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["audit lower bound"] - x["claim (paper)"])
    over = any(x["audit lower bound"] > x["claim (paper)"] for x in r["rows"])
    return Rule("fail iff the canary audit's Clopper-Pearson epsilon lower bound exceeds the paper's epsilon at some "
                "point; pass otherwise (one-sided: an audit can only refute)",
                f"lower bound {compare(w['audit lower bound'], w['claim (paper)'])[0]} (claimed){at(w['point'])}",
                "fail" if over else "pass")


def _approximation_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    rows = r["rows"]
    w = max(rows, key=lambda x: x["ratio"])
    groups: dict[tuple[float, float], list] = {}
    for x in rows:
        groups.setdefault((x["sigma"], x["alpha"]), []).append(x)
    refuted = False
    for (s, al), g in groups.items():
        g = sorted(g, key=lambda x: -x["q"])
        if len({x["q"] for x in g}) >= 3 and all(x["eps_alpha"] > x["lead"] for x in g) and all(
                b["remainder_over_q3"] > a["remainder_over_q3"] for a, b in zip(g, g[1:])) and abs(
                g[-1]["eps_over_q2"] / g[-1]["limit"] - 1) <= LIMIT_TOL and g[-1]["limit"] > al / s**2:
            refuted = True
    side = ("pass" if all(x["eps_alpha"] <= x["lead"] * (1 + 1e-9) for x in rows) else
            "fail" if refuted else "undecided")
    return Rule("pass iff the exact eps_alpha is at most the leading term q^2 alpha/((1-q) sigma^2) at every judged "
                "(point, alpha); fail iff at some (sigma, alpha) the excess grows like q^2 as q falls toward the "
                "q -> 0 limit (no O(q^3/sigma^3) remainder); else inconclusive (exact)",
                f"largest eps_alpha / leading term {w['ratio']:.4g} (q = {w['q']:g}, alpha = {w['alpha']:g})", side)


def _amplification_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    w = max(r["rows"], key=lambda x: x["exact / claim"])
    over = any(exceeds(x["exact"], x["claim"]) for x in r["rows"])
    return Rule("fail iff the exact epsilon of element-level randomized response with users subsampled exceeds Cor "
                "2.4's log(1 + q(e^eps0 - 1)) for some scheme and point; pass otherwise (exact)",
                f"exact {compare(w['exact'], w['claim'])[0]} (claimed; {w['scheme']}, K = {w['K']})",
                "fail" if over else "pass")


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
ELEMENT_SUM_RULES = {"sum_accounting": _accounting_rule, "sum_audit": _audit_rule,
                     "cor25_approximation": _approximation_rule, "subsampling_amplification": _amplification_rule}
