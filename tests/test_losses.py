"""Losses, the Moreau envelope and the scipy optimum, against finite differences, a direct numerical prox
and scikit-learn (independent references, never our own output)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from algorithms import optimum
from algorithms.losses import Hinge, Logistic, MoreauHinge, Squared


def _records(seed: int, P: int = 40, d: int = 4, classify: bool = True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((P, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True) / rng.uniform(0.2, 1.0, size=(P, 1))   # ||x|| <= 1
    y = np.where(rng.random(P) < 0.5, 1.0, -1.0) if classify else rng.uniform(-1, 1, P)
    return X, y


@pytest.mark.parametrize("loss", [Squared(mu=0.1), Logistic(), Logistic(mu=0.3), MoreauHinge(beta_s=3.0, mu=0.2)],
                         ids=["squared", "logistic", "logistic_ridge", "moreau_hinge"])
def test_gradient_matches_finite_differences(loss):
    X, y = _records(0, classify=not isinstance(loss, Squared))
    w = np.array([0.3, -0.5, 0.2, 0.1])
    f = lambda v: float(loss.record_values(v[None], X, y).mean())
    numeric = optimize.approx_fprime(w, f, 1e-7)
    assert np.allclose(loss.record_grad_mean(w[None], X, y)[0], numeric, atol=1e-5)
    # the batched gradient used by the algorithms agrees with the per-record one
    g = loss.batch_grad(w[None], X[None, None], y[None, None])
    assert np.allclose(g[0, 0], loss.record_grad_mean(w[None], X, y)[0])


def test_moreau_envelope_equals_a_numerical_prox():
    """h_b(w) = min_v {max(0, 1 - y<v,x>) + (b/2)||w - v||^2}, minimised directly by scipy."""
    rng = np.random.default_rng(1)
    b = 2.5
    for _ in range(20):
        x = rng.standard_normal(3) * 0.6
        yv = rng.choice([-1.0, 1.0])
        w = rng.standard_normal(3)
        obj = lambda v: max(0.0, 1 - yv * v @ x) + 0.5 * b * np.sum((w - v) ** 2)
        direct = min(optimize.minimize(obj, v0, method="Nelder-Mead",
                                       options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}).fun
                     for v0 in (w, w + yv * x / b))
        closed = MoreauHinge(beta_s=b).phi(np.array(w @ x), np.array(yv), np.array(x @ x))
        assert float(closed) == pytest.approx(direct, abs=1e-7)


@settings(max_examples=200, deadline=None)
@given(st.floats(-5, 5), st.sampled_from([-1.0, 1.0]), st.floats(0.01, 4.0), st.floats(0.05, 50.0))
def test_lemma_d7_sandwich(z, y, xsq, b):
    """Lemma D.7 (2): h_b <= h <= h_b + L^2/(2b), with L = ||x|| for the hinge."""
    h = float(Hinge().phi(np.array(z), np.array(y), np.array(xsq)))
    hb = float(MoreauHinge(beta_s=b).phi(np.array(z), np.array(y), np.array(xsq)))
    assert hb <= h + 1e-12
    assert h <= hb + xsq / (2 * b) + 1e-12


@pytest.mark.parametrize("loss", [Squared(mu=0.1), Logistic(mu=0.1), MoreauHinge(beta_s=4.0, mu=0.1)],
                         ids=["squared", "logistic", "moreau_hinge"])
def test_gradients_on_the_ball_are_within_the_stated_constants(loss):
    X, y = _records(2, P=200, classify=not isinstance(loss, Squared))
    rho = 1.5
    L, beta = loss.constants(r=1.0, rho=rho, y_max=1.0)
    W = np.random.default_rng(3).standard_normal((300, 4))
    W *= rho / np.linalg.norm(W, axis=1, keepdims=True) * np.random.default_rng(4).uniform(0, 1, (300, 1))
    s = loss.dphi(W @ X.T, y[None], (X * X).sum(1)[None])
    grads = s[:, :, None] * X[None] + loss.mu * W[:, None, :]
    assert np.linalg.norm(grads, axis=2).max() <= L + 1e-12
    # smoothness along random directions: |g(w1) - g(w2)| <= beta |w1 - w2| for each record
    g2 = loss.dphi((W[::-1]) @ X.T, y[None], (X * X).sum(1)[None])[:, :, None] * X[None] + loss.mu * W[::-1, None, :]
    ratio = np.linalg.norm(grads - g2, axis=2) / np.maximum(np.linalg.norm(W - W[::-1], axis=1)[:, None], 1e-12)
    assert ratio.max() <= beta + 1e-9


def test_ball_minimise_matches_scikit_learn_logistic_regression():
    """Unconstrained ridge logistic regression: mean log-loss + (mu/2)||w||^2 is scikit-learn's
    C sum log-loss + (1/2)||w||^2 with C = 1/(mu m)."""
    from sklearn.linear_model import LogisticRegression

    X, y = _records(5, P=300, d=5)
    mu = 0.05
    ours = optimum.ball_minimise(Logistic(mu=mu), X, y, rho=100.0)
    sk = LogisticRegression(C=1 / (mu * len(y)), fit_intercept=False, tol=1e-12, max_iter=10000).fit(X, y)
    assert np.allclose(ours.w, sk.coef_[0], atol=1e-5)
    assert ours.gap < 1e-8


@pytest.mark.parametrize("loss", [Logistic(), Hinge()], ids=["logistic", "hinge"])
def test_certified_gap_covers_the_true_gap_on_the_ball(loss):
    """The constrained optimum is checked against a fine search on the sphere (d = 2, active constraint)."""
    X, y = _records(6, P=100, d=2)
    rho = 0.8
    m = optimum.ball_minimise(loss, X, y, rho)
    t = np.linspace(0, 2 * np.pi, 200001)
    W = rho * np.stack([np.cos(t), np.sin(t)], axis=1)
    vals = loss.phi(W @ X.T, y[None], (X * X).sum(1)[None]).mean(axis=1)
    best = float(vals.min())
    free = optimize.minimize(lambda v: float(loss.record_values(v[None], X, y).mean()), np.zeros(2),
                             method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000})
    if np.linalg.norm(free.x) <= rho:          # an interior minimum (found without our code)
        best = min(best, float(free.fun))
    assert m.value - best <= m.gap + 1e-9
    assert m.value - best >= -1e-6        # the solver cannot beat the true minimum (up to the grid)
