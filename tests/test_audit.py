"""The empirical privacy audit: its power on a Gaussian mechanism of known epsilon, its validity (never above
the true epsilon), and the planted faults it must catch."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from algorithms import audit as mech_audit
from algorithms import mechanisms
from algorithms.events import GaussianRelease
from algorithms.losses import Squared
from engine.kinds.learning import runner
from tests.helpers import tiny_onepass, verdicts
from tests.test_accounting import analytic_epsilon
from verifiers import audit as stat_audit

DELTA = 1e-5


def _gaussian_audit(mu: float, trials: int, seed: int, confidence: float = 0.95, release=mechanisms.gaussian):
    """One release of the Gaussian mechanism with sensitivity 1 and noise 1/mu, through the audit's code."""
    reads = mech_audit.canary_reads("disjoint", n=1, K=1, rounds=1)
    s_d, s_p = mech_audit.scores(reads, rounds=1, shift=1.0, sigma=1 / mu, q=1.0, trials=trials,
                                 rng=np.random.default_rng(seed), release=release)
    return stat_audit.lower_bound(s_d, s_p, delta=DELTA, confidence=confidence)


@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_audit_power_reaches_half_the_exact_epsilon(eps):
    """Balle & Wang's exact epsilon of the Gaussian mechanism (tests/test_accounting.py) at delta 1e-5; at the
    default trial count (10^5 per side) the lower bound must reach at least half of it."""
    mu = brentq(lambda m: analytic_epsilon(m, DELTA) - eps, 0.01, 20)
    bound = _gaussian_audit(mu, 100_000, seed=int(eps))
    assert eps / 2 <= bound.epsilon_lower <= eps


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.floats(0.1, 1.5), st.integers(0, 10**6))
def test_audit_lower_bound_never_exceeds_the_exact_epsilon(mu, seed):
    bound = _gaussian_audit(mu, 20_000, seed=seed, confidence=0.999)
    assert bound.epsilon_lower <= analytic_epsilon(mu, DELTA) + 1e-9


def test_clopper_pearson_matches_its_definition():
    from scipy.stats import binom
    up = stat_audit.clopper_pearson_upper(3, 1000, 0.95)
    assert binom.cdf(3, 1000, up) == pytest.approx(0.05, rel=1e-6)


def _lower_bound_one_threshold_at_a_time(scores_d, scores_dp, *, delta, confidence):
    """lower_bound as it was written before its quantiles were taken in one call: every candidate threshold's two
    Clopper-Pearson limits computed one by one (the reference the vectorised search must reproduce)."""
    h = min(len(scores_d), len(scores_dp)) // 2
    sel_d, ev_d = np.sort(scores_d[:h]), scores_d[h:2 * h]
    sel_p, ev_p = np.sort(scores_dp[:h]), scores_dp[h:2 * h]
    pooled = np.concatenate([sel_d, sel_p])
    cands = np.unique(np.quantile(pooled, np.linspace(0.0005, 0.9995, stat_audit.CANDIDATES)))
    side = (1 + confidence) / 2
    best_t, best = float(cands[0]), -1.0
    for t in cands:
        fp = len(sel_p) - np.searchsorted(sel_p, t, side="right")
        fn = np.searchsorted(sel_d, t, side="right")
        e = stat_audit._eps(stat_audit.clopper_pearson_upper(int(fp), h, side),
                            stat_audit.clopper_pearson_upper(int(fn), h, side), delta)
        if e > best:
            best, best_t = e, float(t)
    return stat_audit.counts_lower_bound(int((ev_p > best_t).sum()), int((ev_d <= best_t).sum()), h,
                                         threshold=best_t, delta=delta, confidence=confidence)


@pytest.mark.parametrize("mu, trials, seed", [(0.05, 400, 1), (1.0, 2000, 2), (4.0, 3000, 3), (9.0, 1000, 4),
                                              (0.5, 7, 5)])
def test_the_threshold_search_takes_every_quantile_at_once_with_the_same_result(mu, trials, seed):
    """The candidates' Clopper-Pearson limits in one beta-quantile call (issue 17: 5614 scalar calls were 1.3 s of
    agd_smooth's run) give the bound the one-at-a-time search gave, field for field, ties (the first best threshold)
    the no-error corner (k = n: limit 1) and scores tied with a threshold (rounded scores) included."""
    rng = np.random.default_rng(seed)
    s_d, s_p = rng.normal(mu, 1.0, trials), rng.normal(0.0, 1.0, trials)
    for confidence, a, b in ((0.95, s_d, s_p), (0.999, s_d, s_p), (0.95, np.round(s_d), np.round(s_p))):
        assert (stat_audit.lower_bound(a, b, delta=DELTA, confidence=confidence)     # rounded: scores on the
                == _lower_bound_one_threshold_at_a_time(a, b, delta=DELTA, confidence=confidence))  # thresholds
    ks = np.array([0, 1, 3, 499, 500])
    assert stat_audit.clopper_pearson_uppers(ks, 500, 0.975).tolist() == [
        stat_audit.clopper_pearson_upper(int(k), 500, 0.975) for k in ks]


def test_worst_pair_of_a_lipschitz_loss_is_within_twice_its_constant():
    loss = Squared()
    dist, pair = mech_audit.worst_pair(loss, r=1.0, rho=1.0, y_values=(-0.5, 0.0, 0.5), d=3)
    L, _ = loss.constants(r=1.0, rho=1.0, y_max=0.5)
    assert 0 < dist <= 2 * L


def _audited(spec, **kw):
    return runner.run_spec(spec, **kw)


def _onepass_audit_spec(eps: float = 4.0):
    return tiny_onepass(threat_model={"kind": "isrl", "epsilon": eps, "delta": 1e-5},
                        checks=[{"id": "privacy", "kind": "privacy_accounting"},
                                {"id": "audit", "kind": "privacy_audit", "audit_trials": 100_000}])


def test_clean_run_passes_the_audit():
    res = _audited(_onepass_audit_spec(), trials=4)
    assert verdicts(res) == {"privacy": "pass", "audit": "pass"}
    assert 0 < res["checks"][1]["measured"] <= res["checks"][0]["measured"]


def test_noise_divided_by_ten_inside_the_mechanism_is_caught_by_the_audit(monkeypatch):
    real = mechanisms.gaussian
    monkeypatch.setattr(mechanisms, "gaussian", lambda clean, sigma, *, rng: real(clean, sigma / 10, rng=rng))
    res = _audited(_onepass_audit_spec(), trials=4)
    assert verdicts(res)["audit"] == "fail"


def test_gradients_beyond_the_lipschitz_bound_are_caught_by_the_audit(monkeypatch):
    """'Clipping skipped': per-record gradients ten times the L the calibration assumes."""
    real = Squared.dphi
    monkeypatch.setattr(Squared, "dphi", lambda self, z, y, xsq: 10 * real(self, z, y, xsq))
    res = _audited(_onepass_audit_spec(), trials=4)
    assert verdicts(res)["audit"] == "fail"


def test_an_accountant_that_halves_the_sensitivity_is_caught_by_the_audit(monkeypatch):
    """The implementation treats replace-one neighbours as add/remove ones (sensitivity L/K, not 2L/K): its
    accountant under-counts. With a canary pair at the threat model's full distance 2L (records whose
    gradients are +-L u, which any L-Lipschitz loss may have), the audit's lower bound rises above that
    accountant's epsilon and the check fails."""
    from algorithms.events import GaussianRelease
    from verifiers import checks
    from verifiers.accountants import gaussian
    from verifiers.checks import privacy_audit
    from verifiers.theorems import isrl_004

    L, K, sigma = 1.0, 10, 0.2             # 2L/K = 0.2: mu = 1, eps about 4.4 at delta 1e-5 (2 if halved)
    event = GaussianRelease(sigma=sigma, batch_size=K, pool_size=1000, sampling="disjoint", rounds=1,
                            max_record_uses=1)
    reads = mech_audit.canary_reads("disjoint", n=1000, K=K, rounds=1)
    s_d, s_p = mech_audit.scores(reads, rounds=1, shift=2 * L / K, sigma=sigma, q=1.0, trials=100_000,
                                 rng=np.random.default_rng(1))
    bound = stat_audit.lower_bound(s_d, s_p, delta=DELTA, confidence=0.95)
    summary = {"epsilon_lower": bound.epsilon_lower, "trials_per_side": bound.trials_per_side,
               "false_positives": bound.false_positives, "false_negatives": bound.false_negatives,
               "fpr_upper": bound.fpr_upper, "fnr_upper": bound.fnr_upper, "shift": 2 * L / K, "rounds": 1,
               "attack": "gradient canary at distance 2L"}
    point = checks.Point(value=None, params={"L": L, "delta0": DELTA, "eps0": 100.0}, overridden=frozenset(),
                         measurements={}, events=(event,), noise_sq_sum=0.0, noise_coords=0, audit=summary)
    spec = checks.CheckSpec(id="audit", kind="privacy_audit", confidence=0.95)
    assert privacy_audit.privacy_audit(spec, isrl_004.PRIVACY_ONEPASS, [point], None).verdict == "pass"
    real = gaussian.noise_multiplier
    monkeypatch.setattr(gaussian, "noise_multiplier", lambda event, L: 2 * real(event, L))
    point = dataclasses.replace(point)       # a fresh point: a point accounts its events once (Point.accounted)
    res = privacy_audit.privacy_audit(spec, isrl_004.PRIVACY_ONEPASS, [point], None)
    assert res.verdict == "fail" and "accountant" in res.summary


def test_the_audit_of_a_composed_event_sums_its_releases_and_stays_below_the_accountant():
    """A tree of Gaussian releases is audited as one transcript (the log-likelihood ratios of independent releases
    add up): four copies of a release leak more than one (the lower bound grows), and no more than dp-accounting
    composes for them (the lower bound stays below the accountant's epsilon of the same tree)."""
    from algorithms.events import ComposedEvent, SelfComposedEvent, to_dict
    from engine.kinds.learning import audit, problem
    from verifiers.accountants import epsilon

    spec = tiny_onepass()
    prob = problem.build(spec, runner.problem_seed(spec.seed), np.random.default_rng(0))
    leaf = GaussianRelease(sigma=1.5, batch_size=1, pool_size=100, sampling="disjoint", rounds=1, max_record_uses=1)
    params = {"d": 10, "delta0": 1e-5, "sigma": 1.5}
    run = lambda event: audit.run(spec, prob, params, to_dict(event), seed=1, value_key=0, trials=40_000,  # noqa: E731
                                  confidence=0.95)
    one, four = run(leaf), run(SelfComposedEvent(leaf, 4))
    assert four["epsilon_lower"] > one["epsilon_lower"] > 0
    L = prob.consts["L"]
    assert four["epsilon_lower"] <= epsilon((SelfComposedEvent(leaf, 4),), L=L, delta=1e-5)[0]
    # the same releases written as a composition of leaves give the same transcript law
    flat = run(ComposedEvent((leaf, leaf, leaf, leaf)))
    assert abs(flat["epsilon_lower"] - four["epsilon_lower"]) < 0.25


def test_an_audit_refuses_a_tree_it_cannot_simulate():
    from algorithms.events import ComposedEvent, ShuffledLDPRelease, to_dict
    from engine.kinds.learning import audit, problem

    spec = tiny_onepass()
    prob = problem.build(spec, runner.problem_seed(spec.seed), np.random.default_rng(0))
    leaf = GaussianRelease(sigma=1.5, batch_size=1, pool_size=100, sampling="disjoint", rounds=1, max_record_uses=1)
    ldp = ShuffledLDPRelease(eps_ldp=1.0, batch_size=10, pool_size=100, randomizer="r_inf", clip=1.0, dimension=3,
                             rounds=5, max_record_uses=1)
    with pytest.raises(ValueError, match="no audit composes shuffled_ldp"):
        audit.run(spec, prob, {"d": 10, "delta0": 1e-5}, to_dict(ComposedEvent((leaf, ldp))), seed=1, value_key=0,
                  trials=2000, confidence=0.95)
