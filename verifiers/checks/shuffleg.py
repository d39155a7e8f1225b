"""Checks of seed 003 ch. 4's private shuffled gradient methods (the ``shuffleg`` mechanism, catalog/shuffleg_003.py):
numbers in, verdicts out. Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt.

- ``shuffleg_accounting`` (Lemma 4.5.2 / 4.6.2 inverted, §4.5.3 / Table 4.3; Prop 4.3.4): the epsilon of the epochs that
  ran (their declared noise, clipping norm and noisy steps after the last private one) by our accountant must meet
  the target the noise was calibrated to, and an independent view must agree: dp-accounting's RDP accountant on the
  same epochs as Gaussian events (sensitivity 2G) gives the same RDP curve at its orders (relative difference
  <= 1e-9), Prop 4.3.4 on its order grid is no smaller than our continuous optimum (and within 1%), and its tighter
  conversion no larger. The thesis's own alpha is reported (it must exceed 1 to be an order). A point whose step
  exceeds the privacy lemma's condition (eta <= 1/L*; Interleaved 1/max{L*, L~*}) is outside the claim: inapplicable.
  The dp-accounting view recomputes the same Gaussian RDP: it checks our composition and conversion arithmetic
  against a library, not the lemma (the audit tests the lemma).
- ``injected_noise`` (an implementation test, citing no claim): the noise the loop injected, against what the
  schedule declared to the accountant: the same schedule on all-zero data outputs pure noise whose variance is known
  exactly (algorithms/shuffleg.py exact_noise_excess);
  a two-sided chi-square test over trials x d outputs. Fail when it rejects at the check's confidence; pass when it
  does not and it could detect a 10% variance error (else inconclusive). Catches noise missing on some steps.
- ``last_iterate_audit``: a last-iterate audit (catalog run_audit: the linear loss, the canary at the last private
  position, at the sizes where the audited run's output is exactly Gaussian with the shift of the lemma's RDP curve,
  so the lemma's RDP is attained; Clopper-Pearson, 95%): its epsilon lower bound must not exceed the claim. One-sided:
  pass means "not refuted"; the report shows the exact epsilon of the audited mechanism (below the claim by the
  looseness of Prop 4.3.4's conversion alone).
- ``corollary_bound`` (the instance's corollary: Cor 4.4.15, 4.5.1, 4.6.1) and ``theorem_bound`` (Thm 4.4.7 with the max over
  s exact): the mean excess empirical risk over the trials against the bound with every constant from the data set
  of the run (verifiers/theorems/shuffleg_003.py; the dissimilarities by upper bounds that dominate the thesis's
  suprema, so a failure is never an artefact of under-estimating them). Student interval at the check's
  confidence: pass when its upper end is at most the bound, fail when its lower end is above it, else
  inconclusive. For the mean loss with a linear prox and no clipping, the noise's exact contribution to the
  expectation is a lower bound on it: when that alone exceeds the bound the point fails with certainty (no
  sampling). When a trial clipped a gradient, the run followed the Huberised loss (the clipped gradient is its
  gradient: convex, as smooth), and the claim is judged for it: its optimum, excess and constants. Inapplicable
  points: the claim's conditions fail (step size, mu_psi >= L_H + beta with beta > 0 when public steps make H
  non-zero). Every point's terms are reported, and which term dominates.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np

from algorithms.registry import Registry
from verifiers.checks.base import CheckResult, Rule, at, cited_result, combine_verdicts, compare, side_of
from verifiers.stats import chi2_variance_test, detectable_variance_ratio, mean_ci
from verifiers.theorems import shuffleg_003 as thm

SEED = "seed 003 (Jiang's thesis) ch. 4"
NOISE_POWER = 0.10            # the noise check must be able to see a 10% variance error
DP_ACC_REL = 1e-9
GRID_SLACK = 0.01

PRIVACY_CLAIMS = {"dp_shuffleg": ("003 Lemma 4.5.2",), "interleaved": ("003 Lemma 4.6.2 (Interleaved)",),
                  "priv_pub": ("003 Lemma 4.6.2 (Priv-Pub)",), "pub_priv": ("003 Lemma 4.6.2 (Pub-Priv)",)}
CALIBRATION_CLAIMS = {"dp_shuffleg": ("003 §4.5.3 (calibration)", "003 Prop 4.3.4 / Thm B.4.1"),
                      "interleaved": ("003 Table 4.3", "003 Prop 4.3.4 / Thm B.4.1"),
                      "priv_pub": ("003 Table 4.3", "003 Prop 4.3.4 / Thm B.4.1"),
                      "pub_priv": ("003 Table 4.3", "003 Prop 4.3.4 / Thm B.4.1")}
COROLLARY_CLAIMS = {"shuffleg": ("003 Cor 4.4.15 (Eq. 4.11)",), "dp_shuffleg": ("003 Cor 4.5.1",),
                    "interleaved": ("003 Cor 4.6.1 (Interleaved)",), "priv_pub": ("003 Cor 4.6.1 (Priv-Pub)",),
                    "pub_priv": ("003 Cor 4.6.1 (Pub-Priv)",)}
CITE = {"accounting": "Lemma 4.5.2 (L1427) / 4.6.2 (L1650) inverted for sigma; Prop 4.3.4 (RDP to DP)",
        "noise": "Alg. 3 (L1240-1290): the noise of every noisy step, as declared to the privacy accounting",
        "audit": "Lemma 4.5.2 (L1427) / Lemma 4.6.2 (L1650): (eps, delta)-DP of the last iterate",
        "bound": "the instance's corollary: Cor 4.4.15 (L1392), Cor 4.5.1 (L1419), Cor 4.6.1 (L1627)",
        "theorem_bound": "Thm 4.4.7 (L1304, Eq. 4.7), max over s exact"}


def step_caps(c: Any, n: int, K: int, instance: str) -> dict:
    """The step-size caps of the convergence theorem, the instance's corollary, and its privacy lemma."""
    t = thm.theorem_cap(n=n, K=K, L=c.L, L_hat=list(c.L_hat), L_hat_star=list(c.L_hat_star))
    return {"theorem": t,
            "corollary": thm.corollary_cap(instance, n=n, K=K, L=c.L, L_star=c.L_star, L_pub_star=c.L_pub_star,
                                           theorem=t),
            "privacy": thm.privacy_cap(instance, L_star=c.L_star, L_pub_star=c.L_pub_star)}


def _instance(points: list[dict]) -> str:
    return points[0]["params"]["instance"]


def accounting(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    inst = _instance(points)
    claims = CALIBRATION_CLAIMS.get(inst, ())
    rows, verdicts = [], []
    for pt in points:
        pv = pt["privacy"]
        row: dict = {"point": pt["value"]}
        if pv is None:
            rows.append(row | {"verdict": "inapplicable", "why": "a non-private instance"})
            verdicts.append("inapplicable")
            continue
        if not pt["calibrated"]:
            rows.append(row | {"verdict": "inapplicable", "why": "sigma set by the spec, not calibrated"})
            verdicts.append("inapplicable")
            continue
        if pt["eta"] > pt["step_caps"]["privacy"] * (1 + 1e-12):
            rows.append(row | {"verdict": "inapplicable", "why": f"eta = {pt['eta']:.3g} > the privacy lemma's "
                               f"cap {pt['step_caps']['privacy']:.3g}: the claim does not cover this run"})
            verdicts.append("inapplicable")
            continue
        view = pv["dp_accounting"] or {}
        uses = max((r["max_record_uses"] for r in pt["releases"]), default=0)
        ok_target = abs(pv["epsilon"] - pv["target_epsilon"]) <= 1e-9 * pv["target_epsilon"]
        ok_curve = view.get("max_rel_rdp_difference", math.inf) <= DP_ACC_REL
        ok_grid = pv["epsilon"] * (1 - 1e-12) <= view.get("prop434_on_its_grid", -math.inf) <= pv["epsilon"] * (
            1 + GRID_SLACK)
        ok_tight = view.get("epsilon", math.inf) <= pv["epsilon"] * (1 + 1e-12)
        ok_uses = uses <= 1
        v = "pass" if all((ok_target, ok_curve, ok_grid, ok_tight, ok_uses)) else "fail"
        verdicts.append(v)
        rows.append(row | {"sigma": pt["sigma"], "epsilon_ours": pv["epsilon"], "target": pv["target_epsilon"],
                           "alpha_opt": pv["alpha"], "thesis_alpha": pv["thesis_alpha"],
                           "epsilon_at_thesis_alpha": pv["thesis_alpha_epsilon"],
                           "dp_accounting_epsilon": view.get("epsilon"),
                           "rdp_curve_rel_diff": view.get("max_rel_rdp_difference"),
                           "prop434_on_dp_accounting_grid": view.get("prop434_on_its_grid"),
                           "max_record_uses_per_epoch": uses, "verdict": v})
    verdict = combine_verdicts(verdicts)
    judged = [r for r in rows if "epsilon_ours" in r]
    worst = max(judged, key=lambda r: abs(r["epsilon_ours"] - r["target"]), default=None)
    summary = ("no point is a calibrated private run" if worst is None else
               f"epsilon of the epochs that ran {worst['epsilon_ours']:.6g} for target {worst['target']:.6g}; "
               f"dp-accounting: same RDP curve (rel. diff {worst['rdp_curve_rel_diff']:.1g}), its conversion "
               f"{worst['dp_accounting_epsilon']:.4g}; the thesis's alpha {fmt_alpha(worst)}")
    return cited_result(check, f"{SEED}: {CITE['accounting']}", claims if verdict != "inapplicable" else (),
                        verdict, summary, confidence=1.0, rows=rows,
                        measured=None if worst is None else worst["epsilon_ours"],
                        bound=None if worst is None else worst["target"], theorem="Lemma 4.5.2 / 4.6.2",
                        uncited="" if verdict != "inapplicable" else "no calibrated private point")


def fmt_alpha(r: dict) -> str:
    a = r.get("thesis_alpha")
    if a is None:
        return "undefined"
    if a <= 1:
        return f"{a:.3g} (<= 1: not an order)"
    return f"{a:.4g} gives epsilon {r['epsilon_at_thesis_alpha']:.4g} (optimal alpha {r['alpha_opt']:.4g})"


def noise(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    rows, verdicts = [], []
    for pt in points:
        pr = pt["probe"]
        if pr is None or pr["declared_variance"] <= 0:
            rows.append({"point": pt["value"], "verdict": "inapplicable", "why": "no noise declared"})
            verdicts.append("inapplicable")
            continue
        ratio, pval = chi2_variance_test(pr["sum_sq"], pr["count"], math.sqrt(pr["declared_variance"]))
        power = detectable_variance_ratio(pr["count"], 1 - check.confidence)
        v = "fail" if pval < 1 - check.confidence else "pass" if power <= NOISE_POWER else "inconclusive"
        verdicts.append(v)
        rows.append({"point": pt["value"], "variance_ratio": ratio, "p_value": pval, "outputs": pr["count"],
                     "detectable_ratio": power, "verdict": v})
    verdict = combine_verdicts(verdicts)
    judged = [r for r in rows if "variance_ratio" in r]
    worst = min(judged, key=lambda r: r["p_value"], default=None)
    summary = ("no noise to test" if worst is None else
               f"output variance / declared {worst['variance_ratio']:.4f} (p = {worst['p_value']:.3g}, "
               f"{worst['outputs']} outputs; detects a {worst['detectable_ratio']:.1%} error)")
    return cited_result(check, f"{SEED}: {CITE['noise']}", (), verdict, summary, confidence=check.confidence,
                        rows=rows, measured=None if worst is None else worst["variance_ratio"],
                        bound=None if worst is None else 1.0, theorem="Alg. 3",
                        uncited="a test of our loop against the schedule declared to the accountant, not of the "
                                "thesis's lemma")


def audit(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    inst = _instance(points)
    rows, verdicts = [], []
    for pt in points:
        au = pt["audit"]
        if au is None:
            rows.append({"point": pt["value"], "verdict": "inapplicable", "why": "non-private or unclipped"})
            verdicts.append("inapplicable")
            continue
        v = "fail" if au["epsilon_lower"] > au["claim_epsilon"] else "pass"
        verdicts.append(v)
        rows.append({"point": pt["value"], "audit_n": au["n"], "canary_position": au["canary_position"],
                     "epsilon_lower": au["epsilon_lower"], "claim": au["claim_epsilon"], "exact_mu": au["exact_mu"],
                     "lemma_mu": au.get("claim_mu"), "largest_detectable": au.get("largest_detectable"),
                     "exact_epsilon": gaussian_epsilon(au["exact_mu"], pt["params"]["delta"]),
                     "trials_per_side": au["trials_per_side"], "verdict": v})
    verdict = combine_verdicts(verdicts)
    judged = [r for r in rows if "epsilon_lower" in r]
    worst = max(judged, key=lambda r: r["epsilon_lower"] / max(r["claim"], 1e-300), default=None)
    summary = ("nothing to audit" if worst is None else
               f"audit epsilon lower bound {worst['epsilon_lower']:.3g} against the claim {worst['claim']:.3g} "
               f"for the audited configuration (n = {worst['audit_n']}, canary at step {worst['canary_position']}; "
               f"its exact epsilon {worst['exact_epsilon']:.3g}, its Gaussian shift {worst['exact_mu']:.4g} against "
               f"the lemma's RDP curve's {worst['lemma_mu']:.4g}; {worst['trials_per_side']} runs per side can show "
               f"at most {worst['largest_detectable']:.3g}); one-sided: "
               f"{'refuted' if verdict == 'fail' else 'not refuted'}")
    claims = PRIVACY_CLAIMS.get(inst, ()) if verdict != "inapplicable" else ()
    return cited_result(check, f"{SEED}: {CITE['audit']}", claims, verdict, summary, confidence=0.95, rows=rows,
                        measured=None if worst is None else worst["epsilon_lower"],
                        bound=None if worst is None else worst["claim"], theorem="Lemma 4.5.2 / 4.6.2",
                        uncited="" if claims else "no private point")


def gaussian_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon at delta of a Gaussian mechanism of sensitivity / noise ratio mu (Balle & Wang 2018),
    by bisection on the monotone delta(eps)."""
    from scipy.stats import norm

    if not math.isfinite(mu):
        return math.inf

    def dlt(e: float) -> float:
        return float(norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2))

    lo, hi = 0.0, 1.0
    if dlt(0.0) <= delta:
        return 0.0
    while dlt(hi) > delta:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if dlt(mid) > delta else (lo, mid)
    return hi


def _bound_terms(pt: dict, which: str) -> tuple[thm.Terms | None, str | None]:
    """The point's bound, or the reason the claim does not apply to it."""
    p, c = pt["params"], pt["constants"]
    inst, n, K = p["instance"], p["n"], p["K"]
    if which == "bound" and inst == "public_only":
        return None, "Public Only has no corollary (an experimental baseline)"
    cap = pt["step_caps"]["corollary" if which == "bound" else "theorem"]
    if pt["eta"] > cap * (1 + 1e-12):
        return None, f"eta = {pt['eta']:.3g} > the claim's step-size cap {cap:.3g}"
    public = any(r["private_steps"] < n for r in pt["releases"])
    beta = pt["mu_psi"] - max(c["L_H"])
    if public and beta <= 0:
        return None, (f"mu_psi - max L_H = {beta:.3g} <= 0: no beta > 0 with mu_psi >= L_H + beta (public steps "
                      "make the surrogate differ)")
    if public and not all(math.isfinite(x) for x in c["C_n"]):
        return None, "the dissimilarity has no finite bound for this loss (it grows with ||x||)"
    beta = beta if public else 1.0                # footnote 3: H = 0, the beta terms vanish (C_n = 0)
    sig = [r["sigma"] for r in pt["releases"]]
    if which == "theorem_bound":
        return thm.theorem_447(eta=pt["eta"], n=n, K=K, d=pt["d"], D2=pt["x1_distance2"],
                               sigma_any2=c["sigma_any2"], L_hat=c["L_hat"], L_hat_star=c["L_hat_star"],
                               C_n=c["C_n"], C_van=c["C_vanishing"], sigma=sig, beta=beta), None
    full = [k for k, r in enumerate(pt["releases"]) if r["private_steps"] == 0]
    part = [k for k, r in enumerate(pt["releases"]) if 0 < r["private_steps"] < n]
    nd = pt["n_d"]
    m = n if inst in ("priv_pub", "pub_priv") else n - nd
    L_pub_mean = c["L_pub_mean"] if m else 0.0
    return thm.corollary(inst, eta=pt["eta"], n=n, K=K, S=pt["S"], d=pt["d"], D2=pt["x1_distance2"],
                         sigma_any2=c["sigma_any2"], L=c["L"], L_star=c["L_star"], L_pub_mean=L_pub_mean,
                         L_pub_star=c["L_pub_star"], C_n_full=max((c["C_n"][k] for k in full), default=0.0),
                         C_van_full=max((c["C_vanishing"][k] for k in full), default=0.0),
                         C_n_part=max((c["C_n"][k] for k in part), default=0.0),
                         C_van_part=max((c["C_vanishing"][k] for k in part), default=0.0),
                         sigma=max(sig), beta=beta), None


def _bound(check: Any, mechanism: str, points: list[dict], which: str) -> CheckResult:
    inst = _instance(points)
    rows, verdicts = [], []
    for pt in points:
        terms, why = _bound_terms(pt, which)
        if terms is None:
            rows.append({"point": pt["value"], "verdict": "inapplicable", "why": why})
            verdicts.append("inapplicable")
            continue
        ci = mean_ci(np.asarray(pt["excess"]), check.confidence)
        exact = pt["exact_noise_excess"]
        b = terms.total
        if exact is not None and exact > b * (1 + 1e-9):
            v, how = "fail", "exact"
        elif ci.lower > b:
            v, how = "fail", "sampled"
        elif ci.upper <= b:
            v, how = "pass", "sampled"
        else:
            v, how = "inconclusive", "sampled"
        verdicts.append(v)
        t = terms.as_dict()
        dom = max(("init", "uncertainty", "nonvanishing", "vanishing", "noise"), key=lambda k: t[k])
        rows.append({"point": pt["value"], "mean": ci.mean, "lower": ci.lower, "upper": ci.upper,
                     "exact_noise_part": exact, "bound": b, "ratio": ci.mean / b if b > 0 else math.inf,
                     **{f"term_{k}": t[k] for k in ("init", "uncertainty", "nonvanishing", "vanishing", "noise")},
                     "dominant": dom, "dominant_share": t[dom] / b if b > 0 else 1.0, "eta": pt["eta"],
                     "eta_over_cap": pt["eta"] / pt["step_caps"]["corollary" if which == "bound" else "theorem"],
                     "decided_by": how, "verdict": v})
    verdict = combine_verdicts(verdicts)
    judged = [r for r in rows if "bound" in r]
    worst = max(judged, key=lambda r: max(r["mean"], r["exact_noise_part"] or 0) / r["bound"], default=None)
    if worst is None:
        summary = "no point meets the claim's conditions: " + "; ".join(sorted({r["why"] for r in rows}))
    else:
        ex = worst["exact_noise_part"]
        summary = (f"worst point {worst['point']}: mean excess {worst['mean']:.4g} [{worst['lower']:.4g}, "
                   f"{worst['upper']:.4g}]" + (f", exact noise part {ex:.4g}" if ex is not None else "")
                   + f" against the bound {worst['bound']:.4g} ({worst['dominant']} term {worst['dominant_share']:.0%} "
                   f"of it)")
    claims = ((COROLLARY_CLAIMS.get(inst, ()) if which == "bound" else ("003 Thm 4.4.7 / C.1.14 (Eq. 4.7)",))
              if verdict != "inapplicable" else ())
    return cited_result(check, f"{SEED}: {CITE[which]}", claims, verdict, summary, confidence=check.confidence,
                        rows=rows, measured=None if worst is None else worst["mean"],
                        bound=None if worst is None else worst["bound"],
                        theorem="Thm 4.4.7" if which == "theorem_bound" else "the instance's corollary",
                        uncited="" if claims else "no point meets the claim's conditions")


def bound(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _bound(check, mechanism, points, "bound")


def theorem_bound(check: Any, mechanism: str, points: list[dict]) -> CheckResult:
    return _bound(check, mechanism, points, "theorem_bound")


def _accounting_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    judged = [row for row in r["rows"] if "epsilon_ours" in row]
    w = max(judged, key=lambda row: abs(row["epsilon_ours"] - row["target"]))
    return Rule(f"at each calibrated private point: pass iff the lemma's epsilon of the epochs that ran equals the "
                f"target (rel. 1e-9), dp-accounting's RDP curve agrees (rel. {DP_ACC_REL:g}) and converts to no more, and "
                f"no record is used twice in an epoch; else fail (exact)",
                f"epsilon {compare(w['epsilon_ours'], w['target'])[0]}; dp-accounting {w['dp_accounting_epsilon']:.4g}",
                side_of(r["rows"]))


def _noise_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    judged = [row for row in r["rows"] if "p_value" in row]
    w = min(judged, key=lambda row: row["p_value"])
    level = 1 - r["confidence"]
    return Rule(f"fail iff a two-sided chi-square test of the output's variance against the declared noise has p < "
                f"{level:.2g} at some point; pass iff not and the test sees a {NOISE_POWER:.0%} error",
                f"smallest p: {compare(w['p_value'], level)[0]} (the level); variance ratio {w['variance_ratio']:.4g}",
                side_of(r["rows"]))


def _audit_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    judged = [row for row in r["rows"] if "epsilon_lower" in row]
    w = max(judged, key=lambda row: row["epsilon_lower"] / max(row["claim"], 1e-300))
    return Rule("fail iff the audit's epsilon lower bound (Clopper-Pearson, 0.95) exceeds the claimed epsilon at some "
                "point; pass otherwise (one-sided: no leak found, not a proof)",
                f"lower bound {compare(w['epsilon_lower'], w['claim'])[0]} (the claim; at most "
                f"{w['largest_detectable']:.3g} could show)", side_of(r["rows"]))


def _bound_rule(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule:
    judged = [row for row in r["rows"] if "bound" in row]
    w = max(judged, key=lambda row: max(row["upper"], row["exact_noise_part"] or 0) / row["bound"])
    exact = w["exact_noise_part"]
    margin = (f"exact noise part {compare(exact, w['bound'])[0]} (the bound)" if exact is not None
              and exact > w["bound"] else f"upper limit {compare(w['upper'], w['bound'])[0]} (the bound)")
    return Rule(f"at each point meeting the claim's conditions: fail iff the exact noise part of the excess or the "
                f"lower end of the mean's {r['confidence']:g} interval is above the bound; pass iff the upper end is "
                f"at or below it; else inconclusive", margin + f"{at(w['point'])}", side_of(r["rows"]))


# the decision rules in words, for the report's first table (verifiers/checks/base.py Rule)
SHUFFLEG_RULES = {"shuffleg_accounting": _accounting_rule, "injected_noise": _noise_rule,
                  "last_iterate_audit": _audit_rule, "corollary_bound": _bound_rule, "theorem_bound": _bound_rule}

ShuffleGCheckFn = Callable[[Any, str, list[dict]], CheckResult]
SHUFFLEG_CHECKS: Registry[ShuffleGCheckFn] = Registry("shuffled-gradient check kind")
SHUFFLEG_CHECKS.add("shuffleg_accounting", accounting)
SHUFFLEG_CHECKS.add("injected_noise", noise)
SHUFFLEG_CHECKS.add("last_iterate_audit", audit)
SHUFFLEG_CHECKS.add("corollary_bound", bound)
SHUFFLEG_CHECKS.add("theorem_bound", theorem_bound)
