"""``noise_calibration``: the resolved sigma against the theorem's SymPy calibration, and the noise actually
released against sigma^2 by a two-sided chi-square test. Where the spec overrides sigma there is no calibration to
judge (the run is not calibrated by the theorem): the row's formula_matches says 'overridden', and only the released
variance is judged there; at a spec whose every point overrides sigma the verdict is about the released noise alone
and the summary says the theorem's calibration was not verified."""
from __future__ import annotations

from typing import Any, Mapping

from verifiers import stats
from verifiers.checks.base import (
    CheckKind,
    CheckResult,
    CheckSpec,
    Context,
    Facts,
    Misfit,
    Point,
    Rule,
    at,
    compare,
    result,
)
from verifiers.theorems.base import Theorem

SIGMA_REL_TOL = 1e-9          # resolved sigma vs the SymPy calibration: equal up to float rounding
NOISE_POWER_TARGET = 0.10     # the noise test must be able to see a 10% variance error, else inconclusive
MODELS = ("isrl", "central", "local")   # where Gaussian noise is calibrated by the privacy theorem's sigma
OVERRIDDEN = "overridden"     # formula_matches where the spec set sigma by hand: no calibration to compare with


def noise_calibration(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    calibrated = [p for p in points if "sigma" not in p.overridden]
    # the calibration's conditions matter where the calibration is judged; an overridden sigma is not the theorem's
    failed = sorted({c for p in calibrated for c in thm.failed_conditions(p.params)})
    if failed:
        return result(check, thm, "inapplicable", f"the calibration's conditions fail: {'; '.join(failed)} (the "
                                                   f"privacy_accounting check still bounds the run's epsilon)")
    alpha = (1 - check.level) / len(points)
    rows: list[dict[str, Any]] = []
    verdict, worst = "pass", 0.0
    for p in points:
        sigma = p.params["sigma"]
        formula: float | None
        formula_ok: bool | str
        if "sigma" in p.overridden:
            formula, formula_ok = None, OVERRIDDEN
        else:
            formula = thm.evaluate(p.params)
            formula_ok = bool(abs(sigma - formula) <= SIGMA_REL_TOL * formula)
        ratio, pval = stats.chi2_variance_test(p.noise_sq_sum, p.noise_coords, sigma)
        power = stats.detectable_variance_ratio(p.noise_coords, alpha)
        worst = max(worst, abs(ratio - 1))
        if formula_ok is False or pval < alpha:
            verdict = "fail"
        elif power > NOISE_POWER_TARGET and verdict == "pass":
            verdict = "inconclusive"
        rows.append({"point": p.value, "sigma_run": sigma, "sigma_theorem": formula,
                     "formula_matches": formula_ok, "released_var_ratio": ratio, "p_value": pval,
                     "noise_values": p.noise_coords, "detectable_ratio": power})
    noise = (f"released noise variance / sigma^2 by a two-sided chi-square test at level {1 - check.level:g} "
             f"(Bonferroni over {len(points)} point(s)); worst |ratio - 1| = {worst:.2e}")
    skipped = [p for p in points if "sigma" in p.overridden]
    if not calibrated:
        summary = (f"sigma is overridden at every point: the theorem's calibration is NOT verified (this run is not "
                   f"calibrated by it); only the released noise is judged, against the overridden sigma: {noise}")
    else:
        summary = (f"resolved sigma vs the SymPy calibration (rel. tol {SIGMA_REL_TOL:g}) at {len(calibrated)} "
                   f"point(s)"
                   + (f"; not judged at the {len(skipped)} point(s) where sigma is overridden, where only the "
                      f"released variance is" if skipped else "")
                   + f"; {noise}")
    return result(check, thm, verdict, summary, measured=1 + worst, bound=1.0, rows=tuple(rows),
                  uncited="" if calibrated else "sigma is overridden at every point: the run decides nothing about "
                                                "the theorem's calibration")


def _fits(facts: Facts) -> None:
    if facts.privacy_measures == "epsilon" and facts.threat_model in MODELS:
        raise Misfit("kind", f"{facts.algorithm}'s privacy theorem states epsilon, not a sigma calibration to compare "
                             f"the resolved sigma with; its privacy is checked by privacy_accounting and privacy_audit")
    # Gaussian noise calibrated by a sigma formula applies in any threat model (seed 004 Thm 5.1)
    if facts.privacy_measures != "sigma" and facts.threat_model not in MODELS:
        raise Misfit("kind", f"noise_calibration checks a mechanism of the {' or '.join(MODELS)} threat model (the "
                             f"Gaussian noise of a silo, curator or user, or a client's local randomizer); this spec's "
                             f"is {facts.threat_model}")


def describe(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule | None:
    """The two rules above, from a stored result's rows."""
    rows = r["rows"]
    if r["verdict"] == "inapplicable" or not rows:
        return None
    alpha = (1 - r["confidence"]) / len(rows)
    text = (f"fail iff the resolved sigma differs from the theorem's formula (rel. tol {SIGMA_REL_TOL:g}; not judged "
            f"where overridden) or a two-sided chi-square test of the released noise's variance against sigma^2 has "
            f"p < {alpha:.2g} (Bonferroni over {len(rows)} point(s)); pass iff neither and the test could see a "
            f"{NOISE_POWER_TARGET:.0%} variance error")
    wrong = [row["point"] for row in rows if row["formula_matches"] is False]
    p_min = min(rows, key=lambda row: row["p_value"])
    seen = max(row["detectable_ratio"] for row in rows)
    ratio = max((row["released_var_ratio"] for row in rows), key=lambda v: abs(v - 1))
    if wrong:
        return Rule(text, f"sigma is not the formula's at {wrong}", "fail")
    if p_min["p_value"] < alpha:
        return Rule(text, f"p = {p_min['p_value']:.2g} < {alpha:.2g}{at(p_min['point'])} (variance ratio "
                          f"{p_min['released_var_ratio']:.4g})", "fail")
    if seen > NOISE_POWER_TARGET:
        return Rule(text, f"the test sees only a {seen:.0%} variance error (needs {NOISE_POWER_TARGET:.0%})", "undecided")
    return Rule(text, f"smallest p: {compare(p_min['p_value'], alpha)[0]} (the level); variance ratio {ratio:.5g}; the "
                      f"test sees a {seen:.2%} error", "pass")


# noise tests see 10^5-10^6 values and have power to spare: a stricter level keeps false alarms rare
CHECK = CheckKind("noise_calibration", noise_calibration, fits=_fits, confidence=0.999, privacy=True,
                  describe=describe)
