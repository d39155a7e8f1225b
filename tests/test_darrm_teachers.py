"""Seed 003's private label prediction (catalog/darrm_teachers_003.py): the teachers' DP-SGD against a per-example
loop, the exact accuracies against sampling, the accounting against independent references (dp-accounting's PLD,
the closed-form minimiser of B.4.1's sigma^2, the thesis's printed totals), clean runs of the orderings, and planted
faults for each check kind (verifiers/checks/darrm_teachers.py)."""
from __future__ import annotations

import copy
import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant as pld

from algorithms import teachers
from catalog import darrm_teachers_003 as cat
from engine.kinds.mechanism import run as mechanism_run
from engine.kinds.mechanism.spec import parse_mechanism
from tests.helpers import raw, verdicts
from verifiers.accountants import darrm_lp
from verifiers.accountants import darrm_teachers as acct
from verifiers.checks import darrm_teachers as checks


def _run(name: str, trials: int = 100, one_point: bool = False, **params) -> dict:
    """The shipped spec at ``trials`` (quick mode's), with ``params`` changed; ``one_point``: its fixed point only."""
    r = copy.deepcopy(raw(name))
    r["params"].update(params)
    if one_point:
        r.pop("sweep", None)
    r["trials"] = trials
    r.pop("expect", None)
    r.pop("expect_quick", None)
    return mechanism_run.run(parse_mechanism(r, f"{name}.yaml"))


# --------------------------------------------------------------------------------------------------------------
# numerics


def test_dpsgd_step_is_a_per_example_clip_and_noise_loop():
    """One step of ``train`` against a loop over examples (clip each gradient to C, sum, add sigma C noise, / q n),
    with the same draws."""
    rng = np.random.default_rng(0)
    K, n, d, q, sigma, C, lr = 3, 7, 4, 0.6, 2.0, 0.5, 0.3
    X, y = rng.normal(size=(K, n, d)) * 2, rng.integers(0, 2, (K, n)).astype(float)
    got = teachers.train(X, y, q=q, steps=1, sigma=sigma, clip=C, lr=lr, rng=np.random.default_rng(5)).weights
    ref_rng = np.random.default_rng(5)
    batch = ref_rng.random((K, n)) < q
    noise = ref_rng.standard_normal((K, d))
    ref = np.zeros((K, d))
    for k in range(K):
        total = np.zeros(d)
        for i in range(n):
            if batch[k, i]:
                g = (0.5 - y[k, i]) * X[k, i]                     # the logistic loss's gradient at w = 0
                total += g / max(1.0, np.linalg.norm(g) / C)
        ref[k] = -lr * (total + sigma * C * noise[k]) / (q * n)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-14)


def test_exact_accuracies_match_the_sampled_aggregators():
    rng = np.random.default_rng(1)
    K, n = 11, 200_000
    L, y = rng.integers(0, K + 1, n), rng.integers(0, 2, n).astype(float)
    gamma = darrm_lp.full_gamma(rng.random(6), K)
    for exact, out in ((teachers.darrm_accuracy(L, y, gamma), teachers.darrm_sample(L, gamma, rng)),
                       (teachers.gnmax_accuracy(L, K, y, 3.0), teachers.gnmax_sample(L, K, 3.0, rng))):
        hit = (out == (y > 0)).astype(float)
        assert abs(hit.mean() - exact.mean()) < 4 * hit.std() / math.sqrt(n)


def test_shards_are_equal_and_disjoint():
    s = teachers.shards(256, 11, np.random.default_rng(0))
    assert s.shape == (11, 23) and np.unique(s).size == s.size
    with pytest.raises(ValueError):
        teachers.shards(5, 11, np.random.default_rng(0))


# --------------------------------------------------------------------------------------------------------------
# accounting against independent references


@pytest.mark.parametrize("q,steps", [(1.0, 5), (0.03, 167)])
def test_dpsgd_epsilon_lies_between_the_pld_and_a_loose_rdp_bound(q, steps):
    """dp-accounting's PLD accountant (an exact numerical method) is at most the RDP epsilon, which is close to it."""
    got = acct.dpsgd_epsilon(q, steps, 12.0, 1e-4)
    ref = pld.PLDAccountant(value_discretization_interval=1e-4)
    ref.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(12.0)), steps)
    exact = ref.get_epsilon(1e-4)
    assert exact <= got * (1 + 1e-3) and got <= 1.5 * exact


def test_gnmax_grid_meets_the_budget_and_the_continuous_minimum():
    """sigma^2 = lambda / (eps - b / (lambda - 1)) is minimised at lambda - 1 = (b + sqrt(b^2 + a b)) / a (setting its
    derivative to 0); the grid's minimum lies within the grid step of it and meets the budget exactly."""
    for eps, delta in ((0.2676, 3e-4), (0.2556, 3e-4), (1.0, 1e-5)):
        sig, lam = acct.gnmax_sigma(eps, delta)
        b = math.log(1 / delta)
        u = (b + math.sqrt(b * b + eps * b)) / eps
        s_cont = math.sqrt((u + 1) * u / (eps * u - b))
        assert s_cont <= sig <= s_cont * (1 + 1e-3) and abs(lam - 1 - u) <= 0.5
        assert acct.gnmax_epsilon(sig, lam, delta) == pytest.approx(eps, rel=1e-12)


def test_general_composition_reduces_to_its_branches():
    assert acct.general_composition(0.1, 0.0, 1, 1e-4)[0] == pytest.approx(0.1)             # k eps when k = 1
    e, d = acct.general_composition(0.2676, 3e-4, 50, 1e-4)
    third = math.tanh(0.1338) * 0.2676 * 50 + 0.2676 * math.sqrt(100 * math.log(1e4))
    assert e == pytest.approx(third, rel=1e-12) and d == pytest.approx(1 - 0.9997**50 * 0.9999, rel=1e-12)


def test_the_printed_budgets_are_reproduced_except_table_b2s_lambda():
    res = _run("darrm_pate_budget")
    assert verdicts(res) == {"totals": "pass", "gnmax_sigma": "fail"}
    gn = next(c for c in res["checks"] if c["id"] == "gnmax_sigma")
    assert "sigma_min" not in gn["summary"].split("FAILS")[1] and "lambda 62.31" in gn["summary"]


# --------------------------------------------------------------------------------------------------------------
# clean runs and planted faults


def test_digits_and_mixture_runs():
    """The digits stand-in (~22 records per teacher): GNMax ahead; the mixture at MNIST's size: DaRRM_opt ahead of
    both, as Table 3.1."""
    res = _run("darrm_teachers")
    assert verdicts(res)["opt_vs_gnmax"] == "fail"
    mix = _run("darrm_teachers_mixture", one_point=True)
    assert verdicts(mix) == {"opt_vs_gnmax": "pass", "opt_vs_sub": "pass"}
    pt = mix["points"][0]
    assert pt["opt_lp"]["max_f_over_rhs"] <= 1 + 1e-12 and pt["records_per_teacher"] == 11272 // 11


def test_too_little_gnmax_noise_is_caught_by_teachers_vs_gnmax(monkeypatch):
    real = acct.gnmax_sigma
    monkeypatch.setattr(acct, "gnmax_sigma", lambda e, d, **kw: (real(e, d)[0] / 10, real(e, d)[1]))
    assert verdicts(_run("darrm_teachers_mixture", one_point=True))["opt_vs_gnmax"] == "fail"


def test_a_shrunk_gamma_opt_is_caught_by_teachers_vs_sub(monkeypatch):
    real = darrm_lp.optimal_gamma_cg

    def shrunk(*a, **kw):
        r = real(*a, **kw)
        return darrm_lp.OptimalCG(**{**r.__dict__, "gamma": r.gamma * 0.5})
    monkeypatch.setattr(darrm_lp, "optimal_gamma_cg", shrunk)
    assert verdicts(_run("darrm_teachers_mixture", one_point=True))["opt_vs_sub"] == "fail"


def test_simple_composition_is_caught_by_pate_budget_totals(monkeypatch):
    monkeypatch.setattr(acct, "general_composition", lambda e, d, k, dp: (k * e, k * d + dp))
    res = _run("darrm_pate_budget")
    assert verdicts(res)["totals"] == "fail"


def test_a_log10_in_the_gnmax_grid_is_caught_by_gnmax_calibration(monkeypatch):
    real = acct.gnmax_sigma
    monkeypatch.setattr(acct, "gnmax_sigma", lambda e, d, **kw: real(e, d ** (1 / math.log(10)), **kw))
    res = _run("darrm_pate_budget")
    gn = next(c for c in res["checks"] if c["id"] == "gnmax_sigma")
    assert gn["verdict"] == "fail" and "sigma_min" in gn["summary"].split("FAILS")[1]


def test_paired_test_and_m1_inapplicable():
    assert checks.paired_test(np.array([0.1, 0.2, 0.15]))[1] < 0.05
    assert checks.paired_test(np.zeros(4)) == (0.0, 1.0, 1.0)
    pts = [{"value": 1, "params": {"m": 1}, "expected": {"opt": [0.6, 0.7], "sub": [0.5, 0.6], "gnmax": [0.5, 0.5]}}]

    class C:
        id, kind, confidence = "x", "teachers_vs_sub", 0.99
    assert checks.teachers_vs_sub(C, "darrm_teachers", pts).verdict == "inapplicable"


@pytest.mark.parametrize("over,field", [({"K": 10}, "K"), ({"m": 13}, "m"), ({"train_fraction": 0.8}, "train_fraction"),
                                        ({"q": 0.0005}, "q")])
def test_rules_refuse_bad_points(over, field):
    p = cat.TeacherParams(**{**raw("darrm_teachers")["params"], **over}).model_dump()
    with pytest.raises(ValueError) as e:
        cat.teacher_rules(p)
    assert e.value.field == field                                      # type: ignore[attr-defined]
