"""The rate check decides "at least as fast as the theorem's exponent" from the measurements alone: a risk that falls
as the theorem says passes, a risk that does not fall fails, and a risk that falls faster passes (the check is
one-sided, for upper bounds)."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from verifiers.checks import CheckSpec, Context, Point
from verifiers.checks.rate import rate
from verifiers.theorems.base import Theorem, n

# a toy order theorem: E excess risk = O(1/n), its privacy term the only one
THM = Theorem(name="toy.rate", citation="test", inventory="-", kind="order", measures="excess_risk",
              terms={"privacy": 1 / n}, algorithms=("noisy_mbsgd",), loss_class="convex")
NS = (100.0, 1000.0, 10000.0)


def _points(mean_of_n, trials: int = 200, seed: int = 0) -> list[Point]:
    rng = np.random.default_rng(seed)
    pts = []
    for v in NS:
        m = mean_of_n(v)
        x = m * (1 + 0.05 * rng.standard_normal(trials))          # 5% relative noise per trial
        pts.append(Point(value=v, params={"n": v, "R": 100.0, "risk_max": 10.0, "Delta": 10.0},
                         overridden=frozenset(), measurements={"excess_risk": x}, events=(), noise_sq_sum=0.0,
                         noise_coords=0))
    return pts


def _verdict(mean_of_n) -> str:
    check = CheckSpec(id="rate_n", kind="rate", tol=0.1, confidence=0.95)
    ctx = Context(algorithm="noisy_mbsgd", sweep_symbol="n", privacy_theorem=THM)
    return rate(check, THM, _points(mean_of_n), ctx).verdict


def test_the_toy_theorem_exponent_is_derived_by_sympy():
    assert float(THM.exponent("n")) == -1.0
    assert sp.simplify(THM.terms["privacy"] * n) == 1


@pytest.mark.parametrize("law, verdict", [
    (lambda v: 3.0 / v, "pass"),               # the theorem's rate, any constant
    (lambda v: 3.0 / v**2, "pass"),            # faster: an upper bound's rate is met
    (lambda v: 0.5, "fail"),                   # a risk that does not fall with n
    (lambda v: 3.0 / v**0.5, "fail"),          # slower than n^-1 beyond the tolerance
])
def test_rate_check_passes_and_fails_on_the_measured_slope(law, verdict):
    assert _verdict(law) == verdict
