"""The check kinds. Each takes the measured sweep points and returns a CheckResult (data, never
printed). A verdict is one of pass / fail / inconclusive / inapplicable, from a test at a stated
confidence; nothing passes by default."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from algorithms import ldp
from algorithms.events import Event, ShuffledLDPRelease, ShuffleSumRelease
from algorithms.registry import Registry
from verifiers import accounting, shuffle_000_gd, stats
from verifiers.theorem import Theorem

VERDICTS = ("pass", "fail", "inconclusive", "inapplicable")
SIGMA_REL_TOL = 1e-9          # resolved sigma vs the SymPy calibration: equal up to float rounding
NOISE_POWER_TARGET = 0.10     # the noise test must be able to see a 10% variance error, else inconclusive
MIN_RATE_POINTS = 3
RISK_MEASURES = ("excess_risk", "empirical_excess_risk")
LDP_EXACT_TOL = 1e-9          # exact computations: equal up to float rounding
BIAS_POWER = 0.05             # the unbiasedness test must see a bias of 5% of the input ball's radius, else inconclusive


@dataclass(frozen=True)
class Point:
    """One sweep point as run and measured."""

    value: float | None
    params: Mapping[str, float]
    overridden: frozenset[str]
    measurements: Mapping[str, np.ndarray]
    events: tuple[Event, ...]
    noise_sq_sum: float
    noise_coords: int
    # errors shared by every trial of the point, per measure: 'mc_se' (the standard error of the Monte
    # Carlo population risk) and 'solver_gap' (the certified error of the non-private optimum)
    systematic: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    audit: Mapping[str, Any] | None = None       # the privacy audit's result at this point (engine/audit.py)


@dataclass(frozen=True)
class CheckSpec:
    id: str
    kind: str
    theorem: str | None = None
    variable: str | None = None
    term: str | None = None
    tol: float = 0.1
    confidence: float = 0.95
    min_rounds: int = 20
    audit_trials: int = 100_000
    saturation: str = "bound"


@dataclass(frozen=True)
class Context:
    algorithm: str                  # e.g. 'noisy_mbsgd', 'accelerated_mbsgd'
    sweep_symbol: str | None        # the theorem symbol the sweep varies, if any
    privacy_theorem: Theorem


@dataclass(frozen=True)
class CheckResult:
    id: str
    kind: str
    theorem: str | None
    citation: str
    verdict: str
    measured: float | None
    bound: float | None
    confidence: float
    summary: str
    rows: tuple[Mapping[str, Any], ...] = ()
    trials_needed: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def _result(check: CheckSpec, thm: Theorem | None, verdict: str, summary: str, **kw) -> CheckResult:
    return CheckResult(id=check.id, kind=check.kind, theorem=None if thm is None else thm.name,
                       citation="" if thm is None else f"{thm.citation} [inventory: {thm.inventory}]",
                       verdict=verdict, confidence=kw.pop("confidence", check.confidence), summary=summary,
                       measured=kw.pop("measured", None), bound=kw.pop("bound", None), **kw)


# --- noise_calibration -------------------------------------------------------------------------
def noise_calibration(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    failed = sorted({c for p in points for c in thm.failed_conditions(p.params)})
    if failed:
        return _result(check, thm, "inapplicable", f"the calibration's conditions fail: {'; '.join(failed)} (the "
                                                   f"privacy_accounting check still bounds the run's epsilon)")
    alpha = (1 - check.confidence) / len(points)
    rows: list[dict[str, Any]] = []
    verdict, worst = "pass", 0.0
    for p in points:
        sigma = p.params["sigma"]
        if "sigma" in p.overridden:
            formula, formula_ok = None, True
        else:
            formula = thm.evaluate(p.params)
            formula_ok = abs(sigma - formula) <= SIGMA_REL_TOL * formula
        ratio, pval = stats.chi2_variance_test(p.noise_sq_sum, p.noise_coords, sigma)
        power = stats.detectable_variance_ratio(p.noise_coords, alpha)
        worst = max(worst, abs(ratio - 1))
        if not formula_ok or pval < alpha:
            verdict = "fail"
        elif power > NOISE_POWER_TARGET and verdict == "pass":
            verdict = "inconclusive"
        rows.append({"point": p.value, "sigma_run": sigma, "sigma_theorem": formula,
                     "formula_matches": formula_ok, "released_var_ratio": ratio, "p_value": pval,
                     "noise_values": p.noise_coords, "detectable_ratio": power})
    summary = (f"resolved sigma vs the SymPy calibration (rel. tol {SIGMA_REL_TOL:g}); released noise "
               f"variance / sigma^2 by a two-sided chi-square test at level {1 - check.confidence:g} "
               f"(Bonferroni over {len(points)} point(s)); worst |ratio - 1| = {worst:.2e}")
    return _result(check, thm, verdict, summary, measured=1 + worst, bound=1.0, rows=tuple(rows))


# --- privacy_accounting ------------------------------------------------------------------------
def privacy_accounting(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    rows: list[dict[str, Any]] = []
    verdict, worst = "pass", 0.0
    name = ""
    for p in points:
        eps, name = accounting.epsilon(p.events, L=p.params["L"], delta=p.params["delta0"])
        target = p.params["eps0"]
        ok = eps <= target * (1 + 1e-9)
        verdict = verdict if ok else "fail"
        # a shuffle-sum run that declares its per-call target (P_GD): its parameters must be the paper's there, since
        # the canaries bound the worst case from below only (verifiers/shuffle_000_gd.py)
        e0 = p.events[0]
        uncovered = (shuffle_000_gd.calibration_failures(e0, target, p.params["delta0"])
                     if isinstance(e0, ShuffleSumRelease) else [])
        verdict = "fail" if uncovered else verdict
        worst = max(worst, eps / target)
        rows.append({"point": p.value, "epsilon_accountant": eps, "epsilon_target": target, "delta": p.params["delta0"],
                     **({"calibration_failed": "; ".join(uncovered)} if uncovered else {}),
                     **accounting.describe(p.events[0], p.params["L"], p.params["delta0"]),
                     "rounds": p.events[0].rounds, "max_record_uses": p.events[0].max_record_uses,
                     "slack": target / eps if eps > 0 else math.inf,
                     "theorem_conditions_failed": "; ".join(thm.failed_conditions(p.params)) or "none"})
    first = points[0].events[0]
    what = ("the server's shuffled view as run, with Thm 2's lower bound next to it"
            if isinstance(first, ShuffledLDPRelease) else
            "the analyzer's view (P_VEC's counts) as run, largest over canary pairs" if isinstance(first, ShuffleSumRelease)
            else "the server's view of the shuffled Gaussian reports as run (sigma as run, M of N silos, one record "
                 "each, R rounds)" if first.kind == "shuffled_gaussian"
            else "every user's message as run (one record, noise multiplier sigma/(2L), replace-one; each user "
                 "speaks once)" if thm.threat_model == "local"
            else "the Gaussian releases as run (a silo's transcript under ISRL, the curator's under central DP; noise "
                 "multiplier sigma K/(2L), replace-one)")
    summary = f"{name}: epsilon of {what} against the spec's epsilon; worst epsilon/target = {worst:.3f}"
    tightest = max(rows, key=lambda r: r["epsilon_accountant"] / r["epsilon_target"])
    return _result(check, thm, verdict, summary, measured=tightest["epsilon_accountant"],
                   bound=tightest["epsilon_target"], rows=tuple(rows), confidence=1.0)


# --- privacy_audit -----------------------------------------------------------------------------
def privacy_audit(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    """The audit's epsilon lower bound (a distinguishing attack on neighbouring data sets, Clopper-Pearson at
    the check's confidence) against the claimed epsilon and against the accountant's upper bound: a lower
    bound above either means the mechanism leaks more than claimed, or the accountant under-counts."""
    rows, verdict, reasons = [], "pass", []
    for p in points:
        a = p.audit
        if a is None:
            return _result(check, thm, "inapplicable", "no audit was run for this point")
        # an audit of the whole algorithm is judged against the spec's claim and the accountant; an audit of the
        # local randomizer against the randomizer's own claim and its exact epsilon (engine/audit.py says which)
        if "epsilon_claimed" in a:
            claimed, acc = a["epsilon_claimed"], a["epsilon_upper"]
        else:
            acc, _ = accounting.epsilon(p.events, L=p.params["L"], delta=p.params["delta0"])
            claimed = p.params["eps0"]
        lb = a["epsilon_lower"]
        if lb > claimed:
            verdict = "fail"
            reasons.append(f"lower bound {lb:.3g} > claimed {claimed:g} at {p.value}")
        if lb > acc * (1 + 1e-9):
            verdict = "fail"
            reasons.append(f"lower bound {lb:.3g} > the upper bound {acc:.3g} at {p.value}")
        rows.append({"point": p.value, "epsilon_audit_lower": lb, "epsilon_claimed": claimed,
                     "epsilon_upper": acc, "counted_per_side": a["trials_per_side"],
                     "false_positives": a["false_positives"], "false_negatives": a["false_negatives"],
                     "fpr_upper": a["fpr_upper"], "fnr_upper": a["fnr_upper"], "shift": a["shift"],
                     "rounds": a["rounds"]})
    worst = max(rows, key=lambda r: r["epsilon_audit_lower"] / r["epsilon_claimed"])
    attack = (points[0].audit or {}).get("attack", "")
    upper = (points[0].audit or {}).get("upper_name", "accountant")
    summary = (f"{attack}; epsilon lower bound at delta {points[0].params['delta0']:g} with "
               f"Clopper-Pearson limits at {check.confidence:g}: worst {worst['epsilon_audit_lower']:.3g} <= "
               f"claimed {worst['epsilon_claimed']:g} ({upper} {worst['epsilon_upper']:.3g})"
               + ("" if verdict == "pass" else "; FAILS: " + "; ".join(reasons)))
    return _result(check, thm, verdict, summary, measured=worst["epsilon_audit_lower"], bound=worst["epsilon_claimed"],
                   rows=tuple(rows))


# --- ldp_exact ---------------------------------------------------------------------------------
def ldp_exact(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    """The local randomizer's output distribution, computed exactly (no sampling): its worst-case privacy loss
    max_o max_{x,x'} log P(o|x)/P(o|x') over the input ball against the claimed eps_ldp (condition (i)), and
    its mean sum_o P(o|x) value(o) against x (condition (ii)), on the inputs where every output's probability
    is extremal plus 64 random inputs of the ball."""
    rows: list[dict[str, Any]] = []
    verdict = "pass"
    for p in points:
        e = p.events[0]
        if not isinstance(e, ShuffledLDPRelease):
            return _result(check, thm, "inapplicable", "the algorithm runs no local randomizer", confidence=1.0)
        R = ldp.RANDOMIZERS.get(e.randomizer)
        d, C = e.dimension, e.clip
        extreme = R.extreme_inputs(d, C)
        inner = np.random.default_rng(0).uniform(-C, C, size=(64, d))
        X = np.vstack([extreme, inner])
        P = R.probabilities(X, e.eps_ldp, C)
        valid = bool((P >= 0).all() and np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=LDP_EXACT_TOL))
        with np.errstate(divide="ignore"):
            eps_exact = float(np.max(np.log(P.max(axis=0)) - np.log(P.min(axis=0))))
        bias = float(np.abs(P @ R.values(d, e.eps_ldp, C) - X).max() / C)
        ok = valid and eps_exact <= e.eps_ldp * (1 + LDP_EXACT_TOL) and bias <= LDP_EXACT_TOL
        verdict = verdict if ok else "fail"
        rows.append({"point": p.value, "randomizer": e.randomizer, "eps_ldp_claimed": e.eps_ldp,
                     "eps_ldp_exact": eps_exact, "max_bias_over_C": bias, "distribution_valid": valid,
                     "outputs": int(P.shape[1]), "inputs_checked": int(X.shape[0])})
    worst = max(rows, key=lambda r: r["eps_ldp_exact"] / r["eps_ldp_claimed"])
    src = ldp.RANDOMIZERS.get(points[0].events[0].randomizer).source  # type: ignore[union-attr]
    summary = (f"{src}. Exact output distribution on the ball's extreme inputs (where each output's probability is "
               f"largest and smallest) and 64 random ones: worst-case log-ratio {worst['eps_ldp_exact']:.6g} vs "
               f"claimed {worst['eps_ldp_claimed']:g}; largest |E R(x) - x| / C = "
               f"{max(r['max_bias_over_C'] for r in rows):.2g} (must be <= {LDP_EXACT_TOL:g})")
    return _result(check, thm, verdict, summary, measured=worst["eps_ldp_exact"], bound=worst["eps_ldp_claimed"],
                   rows=tuple(rows), confidence=1.0)


# --- unbiased ----------------------------------------------------------------------------------
def unbiased(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    """The randomizer as run, along its input: u = <R(x) - x, x/||x||> (the projection only: a bias orthogonal to x
    is left to ldp_exact's exact mean) has mean 0 given x for every message when R is unbiased, so
    the sum of u over all messages of all trials is a martingale; z = sum u / sqrt(sum u^2) is then standard
    normal (martingale CLT). Two-sided test at the check's level (Bonferroni over the points); inconclusive
    unless it would see a bias of BIAS_POWER x C (the input ball's radius)."""
    alpha = (1 - check.confidence) / len(points)
    zq = stats.z_quantile(1 - alpha / 2)
    rows: list[dict[str, Any]] = []
    verdict = "pass"
    for p in points:
        mean_t, sq_t = p.measurements[thm.measures], p.measurements[thm.measures + "_sq"]
        messages = p.params["T"] * p.params["k"]                       # per trial
        total, total_sq = float(mean_t.sum() * messages), float(sq_t.sum() * messages)
        count = messages * mean_t.size
        mean, se = total / count, math.sqrt(total_sq) / count
        C = p.params["C"]
        if se == 0:                                    # every message's input was 0: nothing to test
            verdict = "inconclusive" if verdict == "pass" else verdict
        elif abs(mean) > zq * se:
            verdict = "fail"
        elif zq * se > BIAS_POWER * C and verdict == "pass":
            verdict = "inconclusive"
        rows.append({"point": p.value, "mean": mean, "lcl": mean - zq * se, "ucl": mean + zq * se,
                     "z": mean / se if se > 0 else 0.0, "half_width_over_C": zq * se / C, "messages": int(count)})
    worst = max(rows, key=lambda r: abs(r["z"]))
    summary = (f"{thm.measures}: mean of <R(x) - x, x/||x||> (the bias along the input) over every message sent; "
               f"martingale z-test, two-sided "
               f"at {1 - alpha:.4f} (Bonferroni over {len(points)} point(s)): the interval must contain 0 and be "
               f"narrower than {BIAS_POWER:g} C; worst point: {worst['mean']:.3g} (z = {worst['z']:.2f}, "
               f"CI {worst['lcl']:.3g} .. {worst['ucl']:.3g})")
    return _result(check, thm, verdict, summary, measured=worst["mean"], bound=0.0, rows=tuple(rows))


# --- bound -------------------------------------------------------------------------------------
def bound(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    failed = {c for p in points for c in thm.failed_conditions(p.params)}
    if thm.kind != "explicit":
        return _result(check, thm, "inapplicable", f"{thm.name} hides its constants (O~): only a rate check can test it")
    if failed:
        return _result(check, thm, "inapplicable", "theorem conditions fail: " + "; ".join(sorted(failed)))
    bounds = [thm.evaluate(p.params) for p in points]
    vacuous = [thm.measures in RISK_MEASURES and b >= p.params.get("risk_max", math.inf) for p, b in zip(points, bounds)]
    n_inf = vacuous.count(False)
    conf = 1 - (1 - check.confidence) / max(n_inf, 1)     # Bonferroni over the informative sweep points
    rows: list[dict[str, Any]] = []
    verdict, need = "pass", None
    for p, b, vac in zip(points, bounds, vacuous):
        x = p.measurements[thm.measures]
        mean, ucl, sd = stats.one_sided_upper(x, conf)
        lcl = 2 * mean - ucl
        # shared errors widen the interval both ways: the Monte Carlo error of the population risk (at
        # the same one-sided level) and the optimiser's certified gap (the optimum can only be lower)
        sys_err = p.systematic.get(thm.measures, {})
        widen = stats.z_quantile(conf) * sys_err.get("mc_se", 0.0)
        ucl, lcl = ucl + widen + sys_err.get("solver_gap", 0.0), lcl - widen
        row = {"point": p.value, "mean": mean, "ucl": ucl, "lcl": lcl, "bound": b, "ratio": mean / b,
               "trials": int(x.size)}
        if thm.measures in RISK_MEASURES:
            row |= {"sup_risk": p.params.get("risk_max"), "vacuous": vac}
        rows.append(row)
        if vac:
            continue
        if lcl > b:
            verdict = "fail"
        elif ucl > b and verdict != "fail":
            verdict = "inconclusive"
            # more trials shrink only the sampling part of the interval, not the shared errors
            margin = b - widen - sys_err.get("solver_gap", 0.0)
            t = stats.trials_needed(mean, sd, margin, conf) if margin > mean else None
            need = max(need or 0, t or 0) or None  # type: ignore[assignment]
    if n_inf == 0:
        return _result(check, thm, "inapplicable",
                       f"vacuous: the bound is at least sup_W F - F* (the largest excess risk any point of the domain "
                       f"has) at every point, so no measurement could exceed it; smallest bound/sup ratio "
                       f"{min(r['bound'] / r['sup_risk'] for r in rows):.3g}", rows=tuple(rows))
    decided = [r for r in rows if not r.get("vacuous")]
    worst = max(decided, key=lambda r: r["ucl"] / r["bound"])
    skipped = [r["point"] for r in rows if r.get("vacuous")]
    summary = (f"{thm.measures}: one-sided {conf:.4f} upper confidence limit of the mean vs the explicit bound "
               f"at {len(decided)} point(s); worst UCL/bound = {worst['ucl'] / worst['bound']:.3g}"
               + (f"; left out as vacuous (bound >= sup_W F - F*): {skipped}" if skipped else ""))
    return _result(check, thm, verdict, summary, measured=worst["ucl"], bound=worst["bound"], rows=tuple(rows),
                   trials_needed=need if verdict == "inconclusive" else None)


# --- rate --------------------------------------------------------------------------------------
def rate(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    var = check.variable or ctx.sweep_symbol
    term = check.term or thm.rate_term
    if ctx.sweep_symbol is None or var != ctx.sweep_symbol:
        return _result(check, thm, "inapplicable", f"the spec does not sweep {var}")
    if len(points) < MIN_RATE_POINTS:
        return _result(check, thm, "inapplicable", f"{len(points)} sweep points; a slope needs >= {MIN_RATE_POINTS}")
    failed = {c for p in points for c in thm.failed_conditions(p.params)}
    if failed:
        return _result(check, thm, "inapplicable", "theorem conditions fail: " + "; ".join(sorted(failed)))
    short = [p.value for p in points if p.params["R"] < check.min_rounds]
    if short:
        return _result(check, thm, "inapplicable", f"fewer than {check.min_rounds} rounds at {var} = {short}")
    exponent = float(thm.exponent(var, term))
    if check.saturation == "measured":      # O() theorems whose constant-1 bound is loose: judge by the data
        saturated = [p.value for p in points
                     if float(np.mean(p.measurements[thm.measures])) >= _risk_ceiling(p.params) / 2]
    else:
        saturated = [p.value for p in points if thm.evaluate(p.params) >= _risk_ceiling(p.params)]
    rows: list[dict[str, Any]] = []
    dominated = []
    for p in points:
        parts = {name: thm.evaluate(p.params, name) for name in thm.terms}
        others = sum(v for k, v in parts.items() if k != term)
        if parts[term] < others:
            dominated.append(p.value)
        x = p.measurements[thm.measures]
        ci = stats.mean_ci(x, check.confidence)
        total = sum(parts.values())
        rows.append({"point": p.value, "mean": ci.mean, "se": ci.se, "term": parts[term], "other_terms": others,
                     "hidden_constant": ci.mean / total, "rounds": p.params["R"]})
    if saturated and check.saturation == "measured":
        return _result(check, thm, "inapplicable",
                       f"the measured mean {thm.measures} is at least half of min(sup_W F - F*, F(w0) - F*) at "
                       f"{var} = {saturated}: the risk is near its trivial level there, so no rate can show",
                       rows=tuple(rows), extra={"exponent": exponent})
    if saturated:
        return _result(check, thm, "inapplicable",
                       f"the theorem's bound (constants set to 1) is at least min(sup_W F - F*, F(w0) - F*) at "
                       f"{var} = {saturated}: there the trivial output w0 (or any point of the domain) already meets "
                       f"the bound, so the risk saturates and no rate can show",
                       rows=tuple(rows), extra={"exponent": exponent})
    if dominated:
        return _result(check, thm, "inapplicable",
                       f"the {term} term (constants set to 1) does not dominate the other terms at {var} = {dominated}",
                       rows=tuple(rows), extra={"exponent": exponent})
    nonpositive = [r["point"] for r in rows if not r["mean"] > 0]
    if nonpositive:
        return _result(check, thm, "inapplicable", f"the mean {thm.measures} is not positive at {var} = "
                       f"{nonpositive} (within the optimiser's tolerance of 0): a log-log slope is undefined",
                       rows=tuple(rows), extra={"exponent": exponent})
    xs = np.log(np.array([p.value for p in points], dtype=float))
    ys = np.log([r["mean"] for r in rows])
    ses = np.array([r["se"] / r["mean"] for r in rows])
    fit = stats.weighted_slope(xs, ys, ses, check.confidence)
    # the term's own slope over the swept range: the exponent itself for a power law, bent by log factors
    # (e.g. log(T)/sqrt(T)), which a finite sweep sees; the check allows the flatter of the two
    local = float(np.polyfit(xs, np.log([r["term"] for r in rows]), 1)[0])
    limit = max(exponent, local) + check.tol
    verdict = "fail" if fit.lower > limit else "pass" if fit.upper <= limit else "inconclusive"
    hc = [r["hidden_constant"] for r in rows]
    guard = ("; saturation judged on the measurements (mean < half the trivial risk at every point)"
             if check.saturation == "measured" else "")
    bend = (f", {local:.3f} over the swept range (its log factors)" if abs(local - exponent) > 1e-6 else "")
    summary = (f"slope of log mean {thm.measures} vs log {var}: {fit.slope:.3f} "
               f"(CI {fit.lower:.3f} .. {fit.upper:.3f} at {check.confidence:g}); the theorem's {term} term "
               f"gives exponent {exponent:.3f} (SymPy){bend}, tolerance {check.tol:g}: pass if the CI's upper end "
               f"<= {limit:.3f}; hidden constant measured/bound ranges {min(hc):.3g} .. {max(hc):.3g} "
               f"(ratio {max(hc) / min(hc):.2f})" + guard)
    return _result(check, thm, verdict, summary, measured=fit.slope, bound=exponent, rows=tuple(rows),
                   extra={"exponent": exponent, "local_exponent": local, "tol": check.tol, "slope": fit.slope,
                          "slope_lower": fit.lower,
                          "slope_upper": fit.upper, "intercept": fit.intercept, "variable": var, "term": term})


def _risk_ceiling(params: Mapping[str, float]) -> float:
    """The excess risk below which a bound says something: neither sup_W F - F* nor F(w0) - F* (the risk
    of never moving from the initial point w0 = 0)."""
    return min(params.get("risk_max", math.inf), params.get("Delta", math.inf))


CheckFn = Callable[[CheckSpec, Theorem, list[Point], Context], CheckResult]
CHECKS: Registry[CheckFn] = Registry("check kind")
CHECKS.add("noise_calibration", noise_calibration)
CHECKS.add("privacy_accounting", privacy_accounting)
CHECKS.add("privacy_audit", privacy_audit)
CHECKS.add("ldp_exact", ldp_exact)
CHECKS.add("unbiased", unbiased)
CHECKS.add("bound", bound)
CHECKS.add("rate", rate)
