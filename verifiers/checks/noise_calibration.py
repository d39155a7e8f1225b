"""``noise_calibration``: the resolved sigma against the theorem's SymPy calibration, and the noise actually
released against sigma^2 by a two-sided chi-square test."""
from __future__ import annotations

from typing import Any

from verifiers import stats
from verifiers.checks.base import (
    CheckKind,
    CheckResult,
    CheckSpec,
    Context,
    Facts,
    Misfit,
    Point,
    result,
)
from verifiers.theorems.base import Theorem

SIGMA_REL_TOL = 1e-9          # resolved sigma vs the SymPy calibration: equal up to float rounding
NOISE_POWER_TARGET = 0.10     # the noise test must be able to see a 10% variance error, else inconclusive
MODELS = ("isrl", "central", "local")   # where Gaussian noise is calibrated by the privacy theorem's sigma


def noise_calibration(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    failed = sorted({c for p in points for c in thm.failed_conditions(p.params)})
    if failed:
        return result(check, thm, "inapplicable", f"the calibration's conditions fail: {'; '.join(failed)} (the "
                                                   f"privacy_accounting check still bounds the run's epsilon)")
    alpha = (1 - check.level) / len(points)
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
               f"variance / sigma^2 by a two-sided chi-square test at level {1 - check.level:g} "
               f"(Bonferroni over {len(points)} point(s)); worst |ratio - 1| = {worst:.2e}")
    return result(check, thm, verdict, summary, measured=1 + worst, bound=1.0, rows=tuple(rows))


def _fits(facts: Facts) -> None:
    # Gaussian noise calibrated by a sigma formula applies in any threat model (seed 004 Thm 5.1)
    if facts.privacy_measures != "sigma" and facts.threat_model not in MODELS:
        raise Misfit("kind", f"noise_calibration checks a mechanism of the {' or '.join(MODELS)} threat model (the "
                             f"Gaussian noise of a silo, curator or user, or a client's local randomizer); this spec's "
                             f"is {facts.threat_model}")


# noise tests see 10^5-10^6 values and have power to spare: a stricter level keeps false alarms rare
CHECK = CheckKind("noise_calibration", noise_calibration, fits=_fits, confidence=0.999, privacy=True)
