"""Unit tests of the numerics against closed forms, scipy, and exact combinatorics."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize, stats

from algorithms import optimum, sampling
from algorithms.data import make_sphere_linear
from algorithms.result import max_multiplicity
from catalog import isrl_004 as calibration
from catalog.base import multistage
from verifiers.theorems import isrl_004
from verifiers.theorems.base import evaluate

P_FLOOR = 1e-4   # a chi-square goodness-of-fit p-value below this rejects uniformity


@pytest.mark.parametrize("n,K", [(6, 2), (7, 3), (5, 4)])
def test_k_subsets_are_uniform_subsets(n, K):
    rng = np.random.default_rng(0)
    draws = np.sort(sampling.k_subsets(rng, (60000,), n, K), axis=1)
    assert (np.diff(draws, axis=1) > 0).all()               # distinct within a subset
    subsets = list(itertools.combinations(range(n), K))
    index = {s: i for i, s in enumerate(subsets)}
    counts = np.bincount([index[tuple(r)] for r in draws], minlength=len(subsets))
    assert stats.chisquare(counts).pvalue > P_FLOOR


def _floyd_numpy(u: np.ndarray, n: int) -> np.ndarray:
    """Floyd's algorithm vectorised in numpy over the cells of u (..., K): the reference for the compiled loop."""
    K = u.shape[-1]
    out = np.empty(u.shape, dtype=np.int64)
    for col, j in enumerate(range(n - K, n)):
        t = np.minimum(np.floor(u[..., col] * (j + 1)), j).astype(np.int64)
        out[..., col] = np.where((out[..., :col] == t[..., None]).any(axis=-1), j, t) if col else t
    return out


@pytest.mark.parametrize("shape,n", [((500, 4), 200), ((3, 7, 5), 25), ((1000, 1), 1000), ((200, 10), 10),
                                     ((50, 3), 3), ((0, 2), 5)])
def test_compiled_floyd_is_the_numpy_steps(shape, n):
    from algorithms import kernels

    u = np.random.default_rng(n).random(shape)
    u[:1] = 1 - 2.0**-53                                      # the largest uniform: floor(u (j + 1)) = j, then taken
    got = kernels.floyd_subsets(u, n)
    assert got.dtype == np.int64 and np.array_equal(got, _floyd_numpy(u, n))


def test_disjoint_batches_never_share_a_record():
    b = sampling.disjoint_batches(np.random.default_rng(1), (3, 4), 50, 7, 7)
    flat = np.moveaxis(b, 0, -2).reshape(3, 4, -1)
    assert max_multiplicity(flat) == 1
    with pytest.raises(ValueError):
        sampling.disjoint_batches(np.random.default_rng(1), (1,), 10, 4, 3)


def test_the_order_of_fresh_records_is_the_identity_after_the_same_draws():
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    random = sampling.random_order(a, (2, 3), 40)
    fresh = sampling.random_order(b, (2, 3), 40, fresh=True)
    assert (np.sort(random, axis=-1) == fresh).all() and fresh.flags.writeable
    assert a.random() == b.random()                          # the generator's later draws are unchanged


@pytest.mark.parametrize("name", ["agd_smooth", "shuffle_sgd", "shuffle_agd_sc_hinge_acc_eps", "shuffle_agd_smooth",
                                  "sdp_accelerated_d1"])
def test_a_streamed_run_does_not_depend_on_the_order_of_its_fresh_records(monkeypatch, name):
    """Streamed records are drawn as they are read, whatever their index: the identity order (``fresh``) and the
    random order give the same numbers, and the record uses measured from the indices are the same."""
    from algorithms.data import Records
    from engine.kinds.learning import runner
    from tests.helpers import _tiny

    data = {"agd_smooth": {"N": 4, "n": 2000, "d": 10}, "sdp_accelerated_d1": {"N": 4, "n": 2000}}.get(name, {"n": 20000})
    spec = _tiny(name, "tiny_" + name, data, 3)
    outs = []
    for fresh in (True, False):
        monkeypatch.setattr(Records, "fresh", property(lambda self, f=fresh: f and not self.materialised))
        (point,) = runner.run_spec(spec)["points"]
        assert not point["materialised"]
        outs.append((point["measurements"], point["events"], point["noise_sq_sum"]))
    assert outs[0] == outs[1]


def test_a_reused_fresh_record_is_still_refused(monkeypatch):
    """The identity order of fresh records keeps the guard: a one-pass run that reads its first batch again raises."""
    from engine.kinds.learning import runner
    from tests.helpers import tiny_onepass

    real = sampling.disjoint_batches

    def reuse(rng, shape, n, K, R, **k):
        b = real(rng, shape, n, K, R, **k)
        assert k.get("fresh")                                   # the streamed run asks for the identity order
        return np.broadcast_to(b[:1], b.shape).copy()

    monkeypatch.setattr(sampling, "disjoint_batches", reuse)
    with pytest.raises(RuntimeError, match="read twice"):
        runner.run_spec(tiny_onepass())


def test_max_multiplicity():
    assert max_multiplicity(np.array([[1, 2, 3], [4, 4, 5]])) == 2
    assert max_multiplicity(np.array([[7, 7, 7, 1]])) == 3


def test_population_closed_form_matches_monte_carlo():
    pop = make_sphere_linear(np.random.default_rng(2), d=4, N=3, radius=1.5, label_noise=0.3, w_norm=0.6,
                             heterogeneity=0.5, mu=0.1, diameter=3.0)
    X, y = pop.sample(np.random.default_rng(3), (1, 3, 200000))
    w = np.array([[0.3, -0.2, 0.1, 0.4]])
    mc = lambda v: float(np.mean(0.5 * (np.einsum("tnmd,td->tnm", X, v) - y) ** 2) + 0.5 * pop.mu * (v * v).sum())
    excess = mc(w) - mc(pop.w_opt[None])
    assert excess == pytest.approx(float(pop.excess_risk(w)[0]), rel=0.03)
    g = np.einsum("tnm,tnmd->td", np.einsum("tnmd,td->tnm", X, w) - y, X) / (3 * 200000) + pop.mu * w
    assert np.allclose(g, pop.grad_F(w), atol=5e-3)
    # every per-record gradient on the domain is within the Lipschitz constant L
    ws = np.random.default_rng(4).standard_normal((200, 4))
    ws *= (pop.diameter / 2) / np.linalg.norm(ws, axis=1, keepdims=True)
    Xs, ys = X[0, :, :50].reshape(-1, 4), y[0, :, :50].reshape(-1)
    grads = (ws @ Xs.T - ys)[:, :, None] * Xs[None] + pop.mu * ws[:, None, :]
    assert np.linalg.norm(grads, axis=2).max() <= pop.L


def test_ball_ridge_matches_scipy():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((3, 40, 4))
    y = X @ np.array([3.0, -2.0, 1.0, 0.5]) + 0.1 * rng.standard_normal((3, 40))
    for mu, rho in [(0.0, 1.0), (0.2, 0.5), (0.0, 100.0)]:
        w = optimum.ball_ridge(X, y, mu, rho)
        for t in range(3):
            f = lambda v: 0.5 * np.mean((X[t] @ v - y[t]) ** 2) + 0.5 * mu * v @ v
            cons = {"type": "ineq", "fun": lambda v: rho**2 - v @ v}
            ref = optimize.minimize(f, np.zeros(4), constraints=[cons], method="SLSQP", options={"ftol": 1e-14})
            assert f(w[t]) <= ref.fun + 1e-9
            assert np.linalg.norm(w[t]) <= rho * (1 + 1e-9)


def test_numeric_calibrations_equal_the_sympy_ones():
    p = {"L": 1.7, "R": 321, "n": 900, "eps0": 0.8, "delta0": 1e-5, "K": 13}
    assert calibration.alg2_sigma(L=1.7, R=321, n=900, eps0=0.8, delta0=1e-5) == pytest.approx(
        evaluate(isrl_004.ALG2_SIGMA, p), rel=1e-12)
    assert calibration.onepass_sigma(L=1.7, K=13, eps0=0.8, delta0=1e-5) == pytest.approx(
        evaluate(isrl_004.ONEPASS_SIGMA, p), rel=1e-12)
    # the seed's own derivation (L672): at K = K_min the noise multiplier is sqrt(2 ln(2.5R/delta0))
    K = calibration.alg2_K_min(R=321, n=900, eps0=0.8, delta0=1e-5)
    z = calibration.alg2_sigma(L=1.7, R=321, n=900, eps0=0.8, delta0=1e-5) * K / (2 * 1.7)
    assert z == pytest.approx(math.sqrt(2 * math.log(2.5 * 321 / 1e-5)), rel=1e-12)
    # one-pass (L1036): z = sqrt(8 ln(1.25/delta0)) / eps0
    z1 = calibration.onepass_sigma(L=1.7, K=13, eps0=0.8, delta0=1e-5) * 13 / (2 * 1.7)
    assert z1 == pytest.approx(math.sqrt(8 * math.log(1.25e5)) / 0.8, rel=1e-12)


def test_multistage_schedule_uses_the_whole_budget_and_doubles_its_target():
    stages = multistage(R=500, beta=1.0, mu=0.1, V2=0.01, Delta=1.0)
    assert sum(s.rounds for s in stages) == 500
    assert all(s.v >= 2.0 for s in stages)
    first = math.ceil(max(4 * math.sqrt(20), 128 * 0.01 / (3 * 0.1 * 0.25)))
    assert stages[0].rounds == min(first, 500)
