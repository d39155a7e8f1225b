"""Seed 004's experiments (catalog/isrl_experiments_004.py): the accountant against the analytic Gaussian mechanism,
the numerics, and a planted fault per check kind of verifiers/checks/isrl_experiments.py."""
from __future__ import annotations

import math
from types import SimpleNamespace

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import optimize, stats

from algorithms import fl_experiments as fl
from catalog import isrl_experiments_004 as exp
from verifiers.accountants import appendix_i
from verifiers.accountants.pld_epsilon import epsilon_for_delta_add
from verifiers.accountants.pld_pmfs import same as same_pld
from verifiers.accountants.pld_pmfs import same_pmf
from verifiers.checks import isrl_experiments as chk


def analytic_gaussian_eps(sens_over_sigma: float, delta: float) -> float:
    """Balle & Wang (2018): delta(eps) = Phi(a/2 - eps/a) - e^eps Phi(-a/2 - eps/a), a = sensitivity/sigma; solved
    for eps (an independent reference for the unsampled case)."""
    a = sens_over_sigma

    def gap(e: float) -> float:
        return stats.norm.cdf(a / 2 - e / a) - math.exp(e) * stats.norm.cdf(-a / 2 - e / a) - delta

    return optimize.brentq(gap, 0.0, 100.0)


@pytest.mark.parametrize("relation, sens", [("replace_one", 2.0), ("add_remove", 1.0)])
def test_unsampled_accountant_matches_the_analytic_gaussian(relation, sens):
    # z in units of one record's contribution: replace-one moves the mean by 2 units, add/remove by 1; T rounds of a
    # Gaussian compose to one with sigma / sqrt(T)
    z, T, delta = 3.0, 4, 1e-5
    ours = appendix_i.epsilon(z=z, q=1.0, steps=T, delta=delta, relation=relation, interval=1e-4)
    ref = analytic_gaussian_eps(sens * math.sqrt(T) / z, delta)
    assert ours == pytest.approx(ref, rel=2e-3)
    low = appendix_i.epsilon(z=z, q=1.0, steps=T, delta=delta, relation=relation, interval=1e-4, pessimistic=False)
    assert low <= ours and low == pytest.approx(ref, rel=5e-3)


def test_sampling_amplifies_and_replace_one_costs_more_than_add_remove():
    kw = dict(z=2.0, steps=35, delta=1e-6)
    full = appendix_i.epsilon(q=1.0, relation="replace_one", **kw)
    ro = appendix_i.epsilon(q=0.1, relation="replace_one", **kw)
    ar = appendix_i.epsilon(q=0.1, relation="add_remove", **kw)
    assert ar < ro < full


def test_calibration_is_app_i():
    c = exp.calibration(n=1238, R=35, eps=3.0, L=2.0)
    assert c["K"] == round(1238 * math.sqrt(3) / (2 * math.sqrt(35)))
    assert c["sigma_mb"] ** 2 == pytest.approx(8 * 4 * math.log(1238**2) * 35 / (1238**2 * 9))
    assert c["sigma_local"] ** 2 == pytest.approx(c["sigma_mb"] ** 2 * c["K"])


def test_released_noise_has_the_calibrated_variance_and_nonprivate_runs_learn():
    rng = np.random.default_rng(1)
    N, n, d = 3, 40, 5
    X = rng.standard_normal((N, n, d))
    w_true = rng.standard_normal(d)
    y = X @ w_true
    sigma = np.array([0.7, 0.0])
    eta = np.array([0.05, 0.05])
    clip = np.full(2, np.inf)
    for run in (fl.mbsgd, fl.local_sgd):
        w, noise_sq = run("squared", X, y, R=200, K=5, M=N, sigma=sigma, eta=eta, clip=clip, rng=rng)
        coords = 200 * N * d * (5 if run is fl.local_sgd else 1)
        assert noise_sq[0] / coords == pytest.approx(0.49, rel=0.05)
        assert noise_sq[1] == 0
        assert np.linalg.norm(w[1] - w_true) < 1e-3 * np.linalg.norm(w_true)


def _point(eps, alg_errors, *, task="digits", accounting=None, order_eps_max=100.0, np_min=12.0, naive=1.0):
    return {"eps": eps, "task": task, "errors": alg_errors, "accounting": accounting or {},
            "params": {"order_eps_max": order_eps_max, "nonprivate_eps_min": np_min, "naive_eps": naive}}


CHECK = SimpleNamespace(id="c", kind="k", confidence=0.99)


def test_halved_noise_in_the_mbsgd_calibration_is_caught_by_calibration_mbsgd(monkeypatch):
    def points():
        return [_point(e, {}, accounting={"paper": exp.accounting(n=357, R=35, eps=e, G_over_L=1.0)})
                for e in (0.5, 1.0)]

    assert chk.calibration_mbsgd(CHECK, "m", points()).verdict == "pass"
    real = exp.calibration
    monkeypatch.setattr(exp, "calibration", lambda **kw: {**real(**kw), "sigma_mb": real(**kw)["sigma_mb"] / 2})
    res = chk.calibration_mbsgd(CHECK, "m", points())
    assert res.verdict == "fail" and res.claims == ("004 App. I (MB-SGD calibration)",)


def test_local_noise_without_its_factor_k_is_caught_by_calibration_local_sgd(monkeypatch):
    def points():
        return [_point(0.5, {}, accounting={"stand_in": exp.accounting(n=116, R=35, eps=0.5, G_over_L=1.0)})]

    assert chk.calibration_local_sgd(CHECK, "m", points()).verdict == "pass"
    real = exp.calibration
    monkeypatch.setattr(exp, "calibration", lambda **kw: {**real(**kw), "sigma_local": real(**kw)["sigma_mb"]})
    assert chk.calibration_local_sgd(CHECK, "m", points()).verdict == "fail"


def _errors(rng, mb, other, key, splits=20):
    base = rng.uniform(0.1, 0.2, splits)
    return {"mbsgd_dp": base + mb + rng.normal(0, 0.002, splits), key: base + other + rng.normal(0, 0.002, splits)}


@pytest.mark.parametrize("fn, key, eps", [(chk.order_vs_local_dp, "local_dp", 1.0),
                                          (chk.order_vs_local_np, "local_np", 12.0)])
def test_mbsgd_worse_than_local_is_caught_by_the_order_checks(fn, key, eps):
    rng = np.random.default_rng(3)
    good = fn(CHECK, "m", [_point(eps, _errors(rng, 0.0, 0.05, key))])
    assert good.verdict == "pass" and good.claims == ("004 §6 / Fig. 4, 7 (MNIST)",)
    assert fn(CHECK, "m", [_point(eps, _errors(rng, 0.05, 0.0, key))]).verdict == "fail"
    # two splits with equal differences give a zero-width interval: nothing is decided
    tied = {"mbsgd_dp": np.array([0.3, 0.4]), key: np.array([0.2, 0.3])}
    assert fn(CHECK, "m", [_point(eps, tied)]).verdict == "inconclusive"


def test_mbsgd_worse_than_the_naive_predictor_is_caught_by_below_naive():
    rng = np.random.default_rng(4)
    good = chk.below_naive(CHECK, "m", [_point(1.0, {"mbsgd_dp": 0.7 + rng.normal(0, 0.02, 20),
                                                     "mbsgd_np": np.full(20, 0.7)}, task="diabetes")])
    assert good.verdict == "pass"
    bad = chk.below_naive(CHECK, "m", [_point(1.0, {"mbsgd_dp": 1.2 + rng.normal(0, 0.02, 20),
                                                    "mbsgd_np": np.full(20, 0.7)}, task="diabetes")])
    assert bad.verdict == "fail"


def _hockey_stick_eps(P, Q, delta: float) -> float:
    """epsilon at delta of the pair (P, Q) of densities on the line, by quadrature (an independent reference)."""
    from scipy import integrate

    def d(e: float) -> float:
        return integrate.quad(lambda x: max(0.0, P(x) - math.exp(e) * Q(x)), -40, 40, limit=400, points=[0.0, 2.0])[0]

    return optimize.brentq(lambda e: d(e) - delta, 0.0, 30.0)


def test_replace_one_without_replacement_is_the_doubled_remove_pair_by_quadrature():
    # sampling without replacement under substitution (q < 1): (1 - q) N(0, z^2) + q N(2, z^2) against N(0, z^2),
    # both orders; the Poisson REPLACE pair (+1 against -1 around a common part) would under-state it
    z, q, delta = 1.5, 0.2, 1e-4
    mix = lambda x: (1 - q) * stats.norm.pdf(x, 0, z) + q * stats.norm.pdf(x, 2, z)   # noqa: E731
    base = lambda x: stats.norm.pdf(x, 0, z)                                          # noqa: E731
    ref = max(_hockey_stick_eps(mix, base, delta), _hockey_stick_eps(base, mix, delta))
    ours = appendix_i.epsilon(z=z, q=q, steps=1, delta=delta, relation="replace_one", interval=1e-4)
    low = appendix_i.epsilon(z=z, q=q, steps=1, delta=delta, relation="replace_one", interval=1e-4, pessimistic=False)
    assert low <= ref * (1 + 1e-3) and ours >= ref * (1 - 1e-3) and ours == pytest.approx(ref, rel=5e-3)
    plus = lambda x: (1 - q) * stats.norm.pdf(x, 0, z) + q * stats.norm.pdf(x, 1, z)   # noqa: E731
    minus = lambda x: (1 - q) * stats.norm.pdf(x, 0, z) + q * stats.norm.pdf(x, -1, z)  # noqa: E731
    assert _hockey_stick_eps(plus, minus, delta) < 0.9 * ref


def test_local_round_lower_bound_is_below_the_all_steps_composition_and_the_steps_pair():
    kw = dict(z=2.0, q=0.05, delta=1e-5)
    one_step = appendix_i.local_round_lower(K=1, rounds=3, interval=1e-3, **kw)
    same = appendix_i.epsilon(steps=3, relation="replace_one", interval=1e-3, pessimistic=False, **kw)
    assert 0 < one_step <= same                  # one direction of the same pair (K = 1: the step's pair)
    assert appendix_i.local_round_lower(K=1, rounds=3, interval=1e-3, z=1.0, q=0.05, delta=1e-5) > one_step
    low = appendix_i.local_round_lower(K=20, rounds=5, **kw)
    high = appendix_i.epsilon(steps=100, relation="replace_one", **kw)
    assert 0 < low <= high


@pytest.mark.parametrize("sd, sens, probs, interval, rounds", [
    (3.0, [0.0, 2.0, 4.0], [0.8, 0.15, 0.05], 1e-3, 5),
    (1.7, [0.0, 2.0], [0.95, 0.05], 3e-3, 35),
    (12.5, [0.0, 2.0, 4.0, 6.0, 8.0], [0.6, 0.25, 0.1, 0.04, 0.01], 3e-4, 12),
])
def test_the_add_only_mixture_pmf_is_the_librarys_add_direction_bit_for_bit(sd, sens, probs, interval, rounds):
    """local_round_lower builds only the ADD direction (issue 17): its PMF, its composition and the epsilons at delta
    are the library's full PLD's ADD direction, exactly."""
    full = pld_lib.from_mixture_gaussian_mechanism(standard_deviation=sd, sensitivities=sens, sampling_probs=probs,
                                                   pessimistic_estimate=False, value_discretization_interval=interval,
                                                   use_connect_dots=False, log_mass_truncation_bound=-30)
    add = appendix_i.mixture_add_pmf(standard_deviation=sd, sensitivities=sens, sampling_probs=probs,
                                     interval=interval)
    for ours, lib in ((add, full._pmf_add),
                      (add.self_compose(rounds, tail_mass_truncation=1e-15), full.self_compose(rounds)._pmf_add)):
        assert ours._lower_loss == lib._lower_loss and ours._infinity_mass == lib._infinity_mass
        assert np.array_equal(ours._probs, lib._probs)
    composed = full.self_compose(rounds)
    for delta in (1e-3, 1e-5, 1e-7):
        assert (epsilon_for_delta_add(pld_lib.PrivacyLossDistribution(
            add.self_compose(rounds, tail_mass_truncation=1e-15)), delta) == epsilon_for_delta_add(composed, delta))


@pytest.mark.parametrize("task_n, eps", [(1238, 0.75), (1238, 18.0), (56, 1.5), (56, 12.0), (357, 0.125), (116, 3.0)])
def test_replace_one_at_doubled_noise_is_add_remove_bit_for_bit(task_n, eps):
    """accounting() reads the 'as run' epsilon at G = L/2 (replace-one's shift 2 at noise 2z) off add/remove's (shift 1
    at noise z): the pair scaled by 2, exact in binary floating point. Pinned on dp-accounting's PLDs (both
    directions, pessimistic with connect-the-dots and optimistic) at the specs' calibrations and on their epsilons."""
    c = exp.calibration(n=task_n, R=35, eps=eps, L=1.0)
    K = int(c["K"])
    interval = max(1e-4, 1e-3 * eps)
    for z, q in ((c["sigma_mb"] * K, K / task_n), (c["sigma_local"], 1 / task_n)):
        for pess in (True, False):
            kw = dict(sampling_prob=q, pessimistic_estimate=pess, value_discretization_interval=interval,
                      neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, use_connect_dots=pess)
            a = pld_lib.from_gaussian_mechanism(standard_deviation=z, sensitivity=1.0, **kw)
            b = pld_lib.from_gaussian_mechanism(standard_deviation=z / 0.5, sensitivity=2.0, **kw)
            assert same_pmf(a._pmf_remove, b._pmf_remove) and same_pmf(a._pmf_add, b._pmf_add)
        if eps in (0.75, 3.0):
            kw2 = dict(q=q, steps=35, delta=c["delta"], interval=interval)
            assert (appendix_i.epsilon(z=z / 0.5, relation="replace_one", **kw2)
                    == appendix_i.epsilon(z=z, relation="add_remove", **kw2))


def test_the_sampled_gaussian_pld_is_the_librarys_bit_for_bit():
    """appendix_i.sampled_gaussian_pld (numpy's delta-for-epsilon grid, issue 17) gives dp-accounting's
    from_gaussian_mechanism PLD exactly: both directions, pessimistic (connect-the-dots) and optimistic, at the specs'
    calibrations and at random (z, sensitivity, q, interval), q = 1 included."""
    rng = np.random.default_rng(17)
    cases = []
    for n, eps in ((1238, 0.75), (1238, 18.0), (56, 1.5), (56, 12.0), (357, 0.125), (116, 3.0)):
        c = exp.calibration(n=n, R=35, eps=eps, L=1.0)
        K = int(c["K"])
        for z, q in ((c["sigma_mb"] * K, K / n), (c["sigma_local"], 1 / n)):
            cases += [(z, 2.0, q, max(1e-4, 1e-3 * eps)), (z, 1.0, q, max(1e-4, 1e-3 * eps))]
    cases += [(float(rng.uniform(0.2, 30)), float(rng.choice([0.7, 1.0, 2.0])), float(rng.uniform(5e-4, 0.99)),
               float(rng.choice([1e-4, 1e-3, 1e-2]))) for _ in range(8)] + [(1.5, 1.0, 1.0, 1e-3)]
    for z, sens, q, interval in cases:
        for pess in (True, False):
            lib = pld_lib.from_gaussian_mechanism(
                standard_deviation=z, sensitivity=sens, sampling_prob=q, pessimistic_estimate=pess,
                value_discretization_interval=interval, use_connect_dots=pess,
                neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
            ours = appendix_i.sampled_gaussian_pld(standard_deviation=z, sensitivity=sens, sampling_prob=q,
                                                   pessimistic_estimate=pess, value_discretization_interval=interval)
            assert same_pld(ours, lib)


def test_the_fast_gaussian_loss_defers_to_the_library_on_a_scalar_and_where_it_raises():
    from dp_accounting.pld import privacy_loss_mechanism as plm
    for adj in (plm.AdjacencyType.ADD, plm.AdjacencyType.REMOVE):
        ours = appendix_i._GaussianLoss(2.0, sensitivity=1.0, sampling_prob=0.1, adjacency_type=adj)
        lib = plm.GaussianPrivacyLoss(2.0, sensitivity=1.0, sampling_prob=0.1, adjacency_type=adj)
        grid = np.array([-3.0, -0.2, math.log(0.9), -math.log(0.9), 0.0, 0.05, 0.3, 2.0])
        assert np.array_equal(ours.get_delta_for_epsilon(grid), lib.get_delta_for_epsilon(grid))
        with np.errstate(all="ignore"):             # infinite epsilons: the library's answers (nan included)
            infinite = np.array([-math.inf, -5.0, 0.0, 0.05, math.inf])
            assert np.array_equal(ours.get_delta_for_epsilon(infinite), lib.get_delta_for_epsilon(infinite),
                                  equal_nan=True)
        assert ours.get_delta_for_epsilon(0.3) == lib.get_delta_for_epsilon(0.3)
