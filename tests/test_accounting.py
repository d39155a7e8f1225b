"""Pin the semantics of verifiers/accountants/gaussian.py against an independent analytic Gaussian mechanism.

Reference: Balle & Wang (2018), "Improving the Gaussian Mechanism for Differential Privacy: Analytical
Calibration and Optimal Denoising", Thm 8: the Gaussian mechanism with sensitivity Delta and noise
sigma is (eps, delta)-DP iff
    delta >= Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),   mu = Delta / sigma.
A k-fold composition of such mechanisms is the Gaussian mechanism with sqrt(k) mu (Dong, Roth & Su
2019, Cor. 3.3: mu-GDP composes as sqrt(sum mu_i^2)).

The wrapper's documented semantics (module docstring): a silo releases (1/K) sum of K per-record
gradients of norm <= L plus N(0, sigma^2 I); under replace-one adjacency the sensitivity is 2L/K
(seed 004, L672), so mu = (2L/K) / sigma = 1/z with z = sigma K / (2L).
"""
from __future__ import annotations

import math

import dp_accounting
import pytest
from dp_accounting.pld import pld_privacy_accountant
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from algorithms.events import GaussianRelease
from verifiers.accountants import epsilon
from verifiers.accountants.gaussian import noise_multiplier

# PLD accounting of an unsampled Gaussian is tight up to its discretisation (value_discretization_interval
# = 1e-4 in verifiers/accountants/gaussian.py; Koskela et al. 2021 / dp-accounting PLD docs): 2 % is ample.
PLD_REL_TOL = 0.02
# RDP -> (eps, delta) conversion of a single Gaussian over-estimates the exact curve (Mironov 2017,
# Prop. 3; Canonne, Kamath & Steinke 2020, Prop. 12); on the grids used here the loss is < 1.25x, 1.6 bounds it.
RDP_MAX_FACTOR = 1.6
# monotonicity comparisons: pure floating point slack
MONO_REL_TOL = 1e-9

DELTAS = (1e-5, 1e-3)
# (z, K, L): z = sigma K / (2L) in {0.8, 1.5, 4.0}, with different K and L so a K- or L-scaling slip shows
Z_K_L = ((0.8, 50, 1.0), (1.5, 8, 2.5), (4.0, 20, 0.5))
# (z, k): k = max_record_uses
Z_USES = ((0.8, 2), (1.5, 5), (4.0, 3))


def delta_gauss(eps: float, mu: float) -> float:
    """Balle & Wang (2018), Thm 8: the smallest delta at which the mu-Gaussian mechanism is (eps, delta)-DP."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def analytic_epsilon(mu: float, delta: float) -> float:
    if delta_gauss(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while delta_gauss(hi, mu) > delta:
        hi *= 2
    return brentq(lambda e: delta_gauss(e, mu) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12)


def _sigma(z: float, K: int, L: float) -> float:
    return z * 2 * L / K


def test_reference_implementation_sanity():
    # delta(eps) decreases in eps, and the solver inverts it
    mu = 1.0
    assert delta_gauss(0.5, mu) > delta_gauss(1.0, mu) > delta_gauss(2.0, mu) > 0
    eps = analytic_epsilon(mu, 1e-5)
    assert delta_gauss(eps, mu) == pytest.approx(1e-5, rel=1e-6)
    # classic calibration sigma = Delta sqrt(2 ln(1.25/delta))/eps is (eps, delta)-DP for eps < 1
    for e0 in (0.3, 0.9):
        mu = e0 / math.sqrt(2 * math.log(1.25 / 1e-5))
        assert analytic_epsilon(mu, 1e-5) <= e0


def test_noise_multiplier_is_sigma_K_over_2L():
    ev = GaussianRelease(sigma=0.3, batch_size=40, pool_size=400, sampling="disjoint", rounds=10, max_record_uses=1)
    assert noise_multiplier(ev, L=1.5) == pytest.approx(0.3 * 40 / 3.0)


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("z, K, L", Z_K_L)
def test_disjoint_single_use_matches_analytic_gaussian(z, K, L, delta):
    ev = GaussianRelease(_sigma(z, K, L), K, 10 * K, "disjoint", rounds=10, max_record_uses=1)
    eps, name = epsilon((ev,), L=L, delta=delta)
    assert "PLD" in name
    assert eps == pytest.approx(analytic_epsilon(1 / z, delta), rel=PLD_REL_TOL)


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("z, k", Z_USES)
def test_disjoint_k_uses_is_sqrt_k_gaussian(z, k, delta):
    K, L = 50, 1.0
    ev = GaussianRelease(_sigma(z, K, L), K, 10 * K, "disjoint", rounds=10, max_record_uses=k)
    eps, _ = epsilon((ev,), L=L, delta=delta)
    assert eps == pytest.approx(analytic_epsilon(math.sqrt(k) / z, delta), rel=PLD_REL_TOL)


@pytest.mark.parametrize("z, k", ((0.8, 1), (1.5, 5), (4.0, 1)))
def test_disjoint_never_below_analytic(z, k):
    """Whatever the constant, the accountant must not under-state epsilon (that would be a privacy bug)."""
    delta = 1e-5
    K, L = 50, 1.0
    ev = GaussianRelease(_sigma(z, K, L), K, 10 * K, "disjoint", rounds=10, max_record_uses=k)
    eps, _ = epsilon((ev,), L=L, delta=delta)
    assert eps >= analytic_epsilon(math.sqrt(k) / z, delta) * (1 - PLD_REL_TOL)


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("z, K, L", Z_K_L)
def test_without_replacement_full_batch_is_rdp_upper_bound(z, K, L, delta):
    ev = GaussianRelease(_sigma(z, K, L), K, K, "without_replacement", rounds=1, max_record_uses=1)
    eps, name = epsilon((ev,), L=L, delta=delta)
    assert "RDP" in name
    exact = analytic_epsilon(1 / z, delta)
    assert exact * (1 - MONO_REL_TOL) <= eps <= RDP_MAX_FACTOR * exact


@settings(max_examples=100, deadline=None)  # ~0.02 s per RDP accounting call (rdp_wor; 0.5 s in dp-accounting)
@given(
    pool=st.integers(10, 2000),
    batch_frac=st.floats(0.001, 1.0),
    z=st.floats(0.4, 8.0),
    L=st.floats(0.1, 5.0),
    rounds=st.integers(1, 100),
    extra=st.integers(1, 200),
    sigma_factor=st.floats(1.05, 3.0),
    delta=st.sampled_from([1e-6, 1e-5, 1e-3]),
)
def test_without_replacement_monotone(pool, batch_frac, z, L, rounds, extra, sigma_factor, delta):
    K = max(1, min(pool, round(batch_frac * pool)))
    sigma = _sigma(z, K, L)

    def eps(sigma: float, rounds: int) -> float:
        ev = GaussianRelease(sigma, K, pool, "without_replacement", rounds=rounds, max_record_uses=1)
        return epsilon((ev,), L=L, delta=delta)[0]

    base = eps(sigma, rounds)
    assert math.isfinite(base) and base >= 0
    more_rounds = eps(sigma, rounds + extra)
    assert more_rounds >= base * (1 - MONO_REL_TOL)
    more_noise = eps(sigma * sigma_factor, rounds)
    assert more_noise <= base * (1 + MONO_REL_TOL)


@pytest.mark.parametrize("delta0", (1e-5, 1e-4))
@pytest.mark.parametrize("eps0", (0.5, 1.0, 2.0))
def test_one_pass_calibration_of_thm_3_1_is_private(eps0, delta0):
    """Seed 004, Thm 3.1 (L186): sigma = sqrt(32 L^2 ln(1.25/delta0)) / (eps0 K), one pass (each record read once)."""
    L, K, n = 1.0, 25, 2500
    sigma = math.sqrt(32 * L**2 * math.log(1.25 / delta0)) / (eps0 * K)
    ev = GaussianRelease(sigma, K, n, "disjoint", rounds=n // K, max_record_uses=1)
    eps, _ = epsilon((ev,), L=L, delta=delta0)
    assert eps <= eps0
    # and independently of the wrapper: the exact curve with sensitivity 2L/K
    assert analytic_epsilon((2 * L / K) / sigma, delta0) <= eps0


# --- event trees (algorithms/events.py ComposedEvent, SelfComposedEvent) -------------------------------------------
def _gauss(sigma: float, K: int = 1, rounds: int = 1) -> GaussianRelease:
    return GaussianRelease(sigma=sigma, batch_size=K, pool_size=100, sampling="disjoint", rounds=rounds,
                           max_record_uses=1)


def test_event_trees_round_trip_through_dicts():
    from algorithms.events import ComposedEvent, SelfComposedEvent, from_dict, to_dict

    tree = ComposedEvent((_gauss(2.0), SelfComposedEvent(ComposedEvent((_gauss(3.0), _gauss(4.0, K=2))), 5)))
    assert from_dict(to_dict(tree)) == tree


def test_composed_and_self_composed_gaussians_match_dp_accounting_built_by_hand():
    """A tree of Gaussian releases is accounted as dp-accounting composes the same Gaussians written by hand (noise
    multiplier sigma K / L under REPLACE_ONE's PLD convention, see the module docstring)."""
    from algorithms.events import ComposedEvent, SelfComposedEvent

    L, delta = 1.0, 1e-5
    by_hand = dp_accounting.ComposedDpEvent([
        dp_accounting.GaussianDpEvent(2.0), dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(3.0), 4)])
    acc = pld_privacy_accountant.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE,
                                               value_discretization_interval=1e-4)
    acc.compose(by_hand)
    want = acc.get_epsilon(delta)
    tree = ComposedEvent((_gauss(2.0), SelfComposedEvent(_gauss(3.0), 4)))
    assert epsilon((tree,), L=L, delta=delta)[0] == pytest.approx(want, rel=1e-12)
    flat = ComposedEvent((_gauss(2.0), _gauss(3.0), _gauss(3.0), _gauss(3.0), _gauss(3.0)))
    assert epsilon((flat,), L=L, delta=delta)[0] == pytest.approx(want, rel=1e-3)   # 4 x 1 vs 1 x 4: same event


def test_an_accountant_that_cannot_compose_names_the_node():
    from algorithms.events import ComposedEvent, SelfComposedEvent, ShuffledLDPRelease

    ldp = ShuffledLDPRelease(eps_ldp=1.0, batch_size=10, pool_size=100, randomizer="r_inf", clip=1.0, dimension=3,
                             rounds=5, max_record_uses=1)
    with pytest.raises(ValueError, match="kinds gaussian, shuffled_ldp"):
        epsilon((ComposedEvent((_gauss(2.0), ldp)),), L=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="shuffled_ldp accountant accounts one release on its own"):
        epsilon((SelfComposedEvent(ldp, 2),), L=1.0, delta=1e-5)
