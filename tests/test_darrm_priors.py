"""Fig. B.7's priors (catalog/darrm_priors_003.py, verifiers/accountants/darrm_priors.py,
verifiers/checks/darrm_priors.py): the LP with the uniform prior's coefficients equals darrm_privacy.optimal_gamma,
the one-sign property behind the exact errors (every p_i <= 1/2) on random configurations, the exact expected error
against a Monte Carlo over p, clean runs, and a planted fault (T_P's objective integrated over T_U's interval, so that
gamma_opt-P is gamma_opt-U), caught by darrm_prior_choice."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from algorithms import darrm
from catalog import darrm_priors_003 as cat
from engine.kinds.mechanism import run as mechanism_run
from engine.kinds.mechanism.spec import parse_mechanism
from tests.helpers import raw, verdicts
from verifiers.accountants import darrm_priors as pr
from verifiers.accountants import darrm_privacy as dp


def _spec(name: str, trials: int = 100, **params):
    r = copy.deepcopy(raw(name))
    r["params"].update(params)
    r["trials"] = trials
    r["expect"], r["expect_quick"] = {}, {}
    return parse_mechanism(r, "t.yaml")


def test_lp_under_the_uniform_prior_is_darrm_privacys_optimal_gamma():
    K, m, eps, Delta = 9, 2, 0.2, 1e-4
    laws = dp.corner_laws(K, eps, Delta)
    delta = 1 - (1 - Delta) ** m
    ours = pr.optimal_gamma_under(laws, K, m, eps, delta, dp.prior_weights(K, 0.75))
    theirs = dp.optimal_gamma(laws, K, m, eps, delta)
    assert dp.prior_error(ours.gamma, dp.prior_weights(K)) == pytest.approx(
        dp.prior_error(theirs.gamma, dp.prior_weights(K)), abs=1e-12)


def test_b56_has_one_sign_when_every_p_is_below_one_half():
    rng = np.random.default_rng(0)
    for K in (3, 7, 11):
        p = 0.5 * rng.random((2000, K))
        alpha = darrm.poisson_binomial(p)
        for _ in range(5):
            half = rng.random((K + 1) // 2)
            g = np.concatenate([half, half[::-1]])
            assert (pr.signed_error(alpha, g) <= 1e-15).all()


def test_exact_error_under_u_0_01_matches_a_monte_carlo_over_p():
    K = 11
    g = darrm.gamma_sub(K, 3)
    e = pr.mc_errors(K, 0.0, 0.1, [g], 200_000, np.random.default_rng(1))[0]
    assert abs(e.mean() - pr.exact_error(K, 0.0, 0.1, g)) <= 5 * e.std() / np.sqrt(e.size)
    with pytest.raises(ValueError):
        pr.exact_error(K, 0.0, 1.0, g)


def test_clean_runs_pass_and_the_degenerate_setting_fails():
    res = mechanism_run.run(_spec("darrm_priors_low"))
    assert verdicts(res) == {"fig_b7": "pass"} and res["checks"][0]["claims"] == ["003 Fig. B.7"]
    res = mechanism_run.run(_spec("darrm_priors_uniform", 100_000))
    assert verdicts(res) == {"fig_b7": "pass"}
    res = mechanism_run.run(_spec("darrm_priors_half"))
    assert verdicts(res) == {"fig_b7": "fail"}
    assert "every gamma's error is 0 to rounding" in res["checks"][0]["summary"]
    off = mechanism_run.run(_spec("darrm_priors_low", lo=0.0, hi=0.2))
    assert verdicts(off) == {"fig_b7": "inapplicable"}


def test_t_p_integrated_over_t_us_interval_is_caught_by_darrm_prior_choice(monkeypatch):
    monkeypatch.setattr(cat, "PRIOR_P", cat.PRIOR_U)
    res = mechanism_run.run(_spec("darrm_priors_low"))
    assert verdicts(res) == {"fig_b7": "fail"}
    assert "E(opt_P) = " in res["checks"][0]["summary"]
