"""The local-model baseline (local_sgd): every user's own Gaussian noise, accounted and audited per message, and
planted faults -- noise below the calibration, a server that reads clean gradients, a biased server."""
from __future__ import annotations

import math

import numpy as np

from algorithms import mechanisms, shuffle_sgd
from catalog import ALGORITHMS
from engine.kinds.learning import runner
from tests.helpers import _tiny, verdicts
from verifiers import accountants
from verifiers.theorems import THEOREMS


def _tiny_local(audit: bool = False, **over):
    return _tiny("local_sgd", "tiny_local", {"n": 300000, "d": 4}, 6, audit, **over)


def test_calibration_is_lemma_c5_at_one_message_sensitivity():
    c = {"n": 1000.0, "d": 4.0, "L": 2.0, "D": 2.0, "eps0": 0.5, "delta0": 1e-6}
    res = ALGORITHMS.get("local_sgd").resolve(c, "standard", {})
    sigma = math.sqrt(2 * (2 * 2.0) ** 2 * math.log(2 / 1e-6) / 0.5**2)     # 2 Delta^2 log(2/delta)/eps^2, Delta = 2L
    assert math.isclose(res.params["sigma"], sigma, rel_tol=1e-12)
    assert math.isclose(THEOREMS.get("local.sgd.privacy").evaluate(res.params), sigma, rel_tol=1e-12)
    assert res.params["b"] == 100 and res.params["T"] == 10             # our choice, cut to >= 10 rounds
    big = ALGORITHMS.get("local_sgd").resolve(c | {"n": 1e6}, "standard", {})
    assert big.params["b"] == math.floor(4 * sigma**2 / (4 * 2.0**2))       # floor(d sigma^2 / (4 L^2))


def test_each_message_is_accounted_alone_whatever_the_batch():
    """The accountant sees one message of sensitivity 2L and noise sigma: epsilon is the Gaussian mechanism's,
    independent of how many messages the server averages."""
    from algorithms.events import GaussianRelease

    one = GaussianRelease(sigma=20.0, batch_size=1, pool_size=1, sampling="disjoint", rounds=50, max_record_uses=1)
    eps, _ = accountants.epsilon((one,), L=1.0, delta=1e-6)
    # the analytic Gaussian mechanism at Delta/sigma = 2/20 (Balle & Wang 2018): the eps whose delta is 1e-6
    from scipy.optimize import brentq
    from scipy.stats import norm

    def delta_of(e, mu=0.1):
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2)

    assert math.isclose(eps, brentq(lambda e: delta_of(e) - 1e-6, 1e-3, 10), rel_tol=2e-3)
    twice = GaussianRelease(sigma=20.0, batch_size=1, pool_size=1, sampling="disjoint", rounds=50, max_record_uses=2)
    assert accountants.epsilon((twice,), L=1.0, delta=1e-6)[0] > eps


def test_the_server_never_gets_a_clean_gradient(monkeypatch):
    """Structural: the release function gets per-user gradients and noises each one before summing."""
    seen = []
    real = mechanisms.gaussian

    def spy(clean, sigma, *, rng):
        seen.append(clean.shape)
        return real(clean, sigma, rng=rng)

    monkeypatch.setattr(mechanisms, "gaussian", spy)
    runner.run_spec(_tiny_local(), trials=2)
    assert seen and all(len(s) == 3 for s in seen)          # (trials, b users, d): noise per user, not on the sum


def test_clean_run_passes_and_reduced_noise_is_caught(monkeypatch):
    v = verdicts(runner.run_spec(_tiny_local()))
    assert v == {"noise": "pass", "privacy": "pass", "lemma42": "pass"}
    real = mechanisms.gaussian
    monkeypatch.setattr(mechanisms, "gaussian", lambda clean, sigma, *, rng: real(clean, sigma / 10, rng=rng))
    v = verdicts(runner.run_spec(_tiny_local(audit=True)))
    assert v["noise"] == "fail" and v["audit"] == "fail"


def test_a_biased_server_is_caught_by_lemma42(monkeypatch):
    """The fault: the server's sum is shifted by a constant vector (a biased estimator of the gradient sum)."""
    real = shuffle_sgd._sgd

    def biased(records, loss, *, release, **kw):
        return real(records, loss, release=lambda g, exact: release(g, exact) + 0.5 * g.shape[1] * np.ones(g.shape[-1]),
                    **kw)

    monkeypatch.setattr(shuffle_sgd, "_sgd", biased)
    v = verdicts(runner.run_spec(_tiny_local()))
    assert v["lemma42"] == "fail"
