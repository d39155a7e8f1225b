"""CLDP-SGD (seed 001, Algorithm 1): the R_inf randomizer against its stated distribution and an independent
formula, the shuffler's view, the accountant, spec rules, and planted faults with the check that catches each."""
from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from scipy import stats

from algorithms import ldp
from algorithms.events import ShuffledLDPRelease
from engine.kinds.learning import runner
from engine.kinds.learning import spec as spec_mod
from tests.helpers import _tiny, raw, verdicts
from verifiers import accountants
from verifiers.accountants import subsampled_shuffle

R = ldp.RANDOMIZERS.get("r_inf")


def tiny_cldp(audit: bool = True, **over):
    s = _tiny("cldp_sgd_digits", "tiny_cldp", {"n": 400}, 6, audit, **over)
    r = s.model_dump(mode="json")
    r["algorithm"]["overrides"] = {"k": 100, "eps_ldp": 1.5, "T": 1200}
    r["checks"] = [c for c in r["checks"] if c["kind"] != "bound" or c["theorem"] == "shuffle.remark1.r_inf"]
    return spec_mod.parse(r, "tiny_cldp")


def _independent_probs(x: np.ndarray, eps: float, C: float) -> np.ndarray:
    """Girgis et al. 2021 (AISTATS), eq. (11): output +-C d sqrt(kappa) e_j, j uniform, with
    P(+ | j) = 1/2 + x_j/(2C) (e^eps - 1)/(e^eps + 1); written out here, not taken from algorithms/ldp.py."""
    d = x.shape[-1]
    plus = 0.5 + x / (2 * C) * (math.exp(eps) - 1) / (math.exp(eps) + 1)
    return np.concatenate([plus / d, (1 - plus) / d], axis=-1)


def test_stated_distribution_matches_the_paper_formula():
    rng = np.random.default_rng(0)
    for eps, C, d in [(0.5, 1.0, 3), (1.5, 0.2, 8), (4.0, 3.0, 5)]:
        x = rng.uniform(-C, C, size=(20, d))
        np.testing.assert_allclose(R.probabilities(x, eps, C), _independent_probs(x, eps, C), rtol=1e-14)


@pytest.mark.parametrize("eps", [0.3, 1.5, 5.0])
def test_exact_ldp_unbiasedness_and_variance(eps):
    d, C = 4, 0.7
    # a grid of the box including its corners: the worst ratio is e^eps exactly, reached at the corners
    g = np.linspace(-C, C, 5)
    X = np.array(np.meshgrid(*[g] * d)).reshape(d, -1).T
    P = _independent_probs(X, eps, C)
    ratio = np.log(P.max(axis=0) / P.min(axis=0)).max()
    assert ratio == pytest.approx(eps, rel=1e-12)
    V = R.values(d, eps, C)
    np.testing.assert_allclose(P @ V, X, atol=1e-12)                       # condition (ii): unbiased
    var = (P * ((V[None, :, :] - X[:, None, :]) ** 2).sum(-1)).sum(1)
    kappa = ((math.exp(eps) + 1) / math.expm1(eps)) ** 2
    np.testing.assert_allclose(var, C**2 * d**2 * kappa - (X * X).sum(1), rtol=1e-12)
    assert var.max() <= R.variance_bound(d, eps, C)                         # Remark 1: C^2 d^2 kappa


def test_sampler_has_the_stated_distribution():
    rng = np.random.default_rng(1)
    d, C, eps = 4, 1.0, 1.2
    x = np.array([0.9, -0.3, 0.0, -1.0])
    m = R.sample(np.broadcast_to(x, (200_000, d)), eps, C, rng)
    counts = np.bincount(m.coord + d * (m.bit < 0), minlength=2 * d)
    expected = 200_000 * _independent_probs(x[None], eps, C)[0]
    keep = expected > 0
    assert stats.chisquare(counts[keep], expected[keep]).pvalue > 1e-4


def test_server_sees_the_multiset_only():
    rng = np.random.default_rng(2)
    d, C, eps = 6, 0.5, 1.0
    x = rng.uniform(-C, C, size=(3, 50, d))
    m = R.sample(x, eps, C, rng)
    total = R.decode_sum(m, d, eps, C)
    one_by_one = np.zeros((3, d))
    for t in range(3):
        for j in range(50):
            one_by_one[t] += R.values(d, eps, C)[m.coord[t, j] + d * (m.bit[t, j] < 0)]
    np.testing.assert_allclose(total, one_by_one, rtol=1e-12, atol=1e-12)
    perm = rng.permutation(50)
    shuffled = ldp.Messages(m.coord[:, perm], m.bit[:, perm])
    np.testing.assert_array_equal(R.decode_sum(shuffled, d, eps, C), total)


def test_inputs_outside_the_ball_are_refused():
    with pytest.raises(ValueError, match="clip before randomizing"):
        R.sample(np.array([[0.5, 1.5]]), 1.0, 1.0, np.random.default_rng(0))
    np.testing.assert_allclose(np.abs(ldp.clip_inf(np.array([[0.5, -3.0]]), 1.0)).max(), 1.0)


def test_accountant_is_thm1_with_lemma1():
    ev = ShuffledLDPRelease(eps_ldp=1.5, batch_size=300, pool_size=1797, randomizer="r_inf", clip=0.2, dimension=64,
                            rounds=1000, max_record_uses=1)
    eps, name = accountants.epsilon((ev,), L=1.0, delta=1e-5)
    assert "Thm 1" in name
    assert eps == subsampled_shuffle.epsilon("upper", k=300, n=1797, eps0=1.5, T=1000, delta=1e-5).epsilon
    assert accountants.describe(ev, 1.0, 1e-5)["epsilon_thm2_lower"] < eps


def test_clean_tiny_run_passes():
    v = verdicts(runner.run_spec(tiny_cldp()))
    assert v == {"ldp": "pass", "unbiased": "pass", "variance": "pass", "privacy": "pass", "audit": "pass"}


def test_too_little_randomization_is_caught_by_ldp_exact_and_audit(monkeypatch):
    real = ldp.keep_probability
    monkeypatch.setattr(ldp, "keep_probability", lambda eps: real(2 * eps))   # the fault: RR at 2 eps
    v = verdicts(runner.run_spec(tiny_cldp()))
    assert v["ldp"] == "fail" and v["audit"] == "fail"
    assert v["privacy"] == "pass"      # the accountant sees the declared eps_ldp: only the exact test and audit catch it


def test_biased_sampler_is_caught_by_unbiased(monkeypatch):
    real = R.sample

    def biased(x, eps, C, rng):                                                  # the fault: rounding shrinks x by 20%
        return real(0.8 * x, eps, C, rng)

    monkeypatch.setattr(type(R), "sample", lambda self, x, eps, C, rng: biased(x, eps, C, rng))
    v = verdicts(runner.run_spec(tiny_cldp(audit=False)))
    assert v["unbiased"] == "fail"
    assert v["ldp"] == "pass"          # the stated distribution is still right: only the test on the messages sees it


def test_a_sampler_leaking_more_than_its_table_is_caught_by_the_audit(monkeypatch):
    real = R.sample

    def leaky(x, eps, C, rng):                                                   # the fault: RR at 3 eps in the sampler only
        return real(x, 3 * eps, C, rng)

    monkeypatch.setattr(type(R), "sample", lambda self, x, eps, C, rng: leaky(x, eps, C, rng))
    v = verdicts(runner.run_spec(tiny_cldp()))
    assert v["audit"] == "fail" and v["ldp"] == "pass"


def test_spec_rules():
    r = raw("cldp_sgd_digits")
    bad = copy.deepcopy(r)
    bad["threat_model"]["kind"] = "isrl"
    with pytest.raises(spec_mod.SpecError, match="threat_model.kind.*analysed under 'shuffle'"):
        spec_mod.parse(bad, "x.yaml")
    bad = copy.deepcopy(r)
    bad["data"]["N"] = 2
    with pytest.raises(spec_mod.SpecError, match="data.N.*set N = 1"):
        spec_mod.parse(bad, "x.yaml")
    bad = copy.deepcopy(raw("mbsgd_convex"))
    bad["sweep"] = {"field": "algorithm.overrides.T", "values": [10, 20]}
    with pytest.raises(spec_mod.SpecError, match="sweep.field.*no parameter 'T'"):
        spec_mod.parse(bad, "x.yaml")
    bad = copy.deepcopy(r)
    bad["sweep"]["values"] = [100, 150.5]
    with pytest.raises(spec_mod.SpecError, match="whole number"):
        spec_mod.parse(bad, "x.yaml")
    for check, msg in [({"id": "u", "kind": "unbiased", "theorem": "shuffle.remark1.r_inf"}, "unbiased tests"),
                       ({"id": "b", "kind": "bound", "theorem": "shuffle.thm3.privacy"}, "states no bound"),
                       ({"id": "r", "kind": "rate", "theorem": "shuffle.thm3.privacy"}, "states no bound"),
                       ({"id": "n", "kind": "noise_calibration"}, "checks a mechanism of the isrl")]:
        bad = copy.deepcopy(r)
        bad["checks"] = [check]
        bad["expect"] = {}
        bad.pop("expect_quick", None)
        with pytest.raises(spec_mod.SpecError, match=msg):
            spec_mod.parse(bad, "x.yaml")
