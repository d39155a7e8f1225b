"""The non-private empirical optimum on the domain ball: exactly for the squared loss (+ ridge),
by scipy with a certified optimality gap for any other loss of a linear model.

Squared loss:

min_w (1/2) w^T A w - b^T w  s.t. ||w|| <= rho,  A = X^T X / m + mu I,  b = X^T y / m.
With A = Q diag(lam) Q^T the solution is w(t) = Q (Q^T b / (lam + t)) with t = 0 when that is
feasible, else the t > 0 with ||w(t)|| = rho (monotone in t; found by bisection to float precision).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

BISECTION_STEPS = 200


def ball_ridge(X: np.ndarray, y: np.ndarray, mu: float, rho: float) -> np.ndarray:
    """X (T, m, d), y (T, m) -> the minimiser w (T, d) of each trial's empirical objective on the ball."""
    m = X.shape[1]
    A = np.einsum("tmd,tme->tde", X, X) / m + mu * np.eye(X.shape[2])
    b = np.einsum("tmd,tm->td", X, y) / m
    lam, Q = np.linalg.eigh(A)
    c = np.einsum("tde,td->te", Q, b)

    def norm(t: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sqrt(((c / (lam + t[:, None])) ** 2).sum(axis=1))

    lo = np.zeros(X.shape[0])
    free = (lam.min(axis=1) > 1e-12) & (norm(lo) <= rho)
    hi = np.full_like(lo, np.abs(c).sum(axis=1).max() / rho + 1.0)
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        big = norm(mid) > rho
        lo = np.where(big, mid, lo)
        hi = np.where(big, hi, mid)
    t = np.where(free, 0.0, hi)
    return np.einsum("tde,te->td", Q, c / (lam + t[:, None]))


# --- any loss of a linear model: scipy on the ball, with a certified optimality gap ------------------
SOLVER_TOL = 1e-10          # target Frank-Wolfe gap of the smooth solve (absolute, in loss units)
HINGE_SMOOTHING = (1e1, 1e2, 1e3, 1e4, 1e5, 1e6)   # continuation for non-smooth losses


@dataclass(frozen=True)
class Minimum:
    w: np.ndarray           # (d,) the solver's point on the ball
    value: float            # F_X(w) of the loss as given (the non-smooth one for the hinge)
    gap: float              # certified: F_X(w) - min_W F_X <= gap


def frank_wolfe_gap(loss, w: np.ndarray, X: np.ndarray, y: np.ndarray, rho: float) -> float:
    """max_{||v|| <= rho} <grad F(w), w - v> = <g, w> + rho ||g||: an upper bound on F(w) - min_W F for a
    convex differentiable F (and ||g||^2/(2 mu) when F is mu-strongly convex, if smaller), so the
    solver's accuracy is certified, not assumed."""
    g = loss.record_grad_mean(w[None], X, y)[0]
    gap = max(float(g @ w + rho * np.linalg.norm(g)), 0.0)
    if loss.mu > 0:     # mu-strong convexity: F(w) - min_{R^d} F <= ||g||^2 / (2 mu), and min_W F >= min_{R^d} F
        gap = min(gap, float(g @ g) / (2 * loss.mu))
    return gap


def _slsqp(loss, w0: np.ndarray, X: np.ndarray, y: np.ndarray, rho: float) -> np.ndarray:
    fun = lambda w: float(loss.record_values(w[None], X, y).mean())
    jac = lambda w: loss.record_grad_mean(w[None], X, y)[0]
    cons = {"type": "ineq", "fun": lambda w: rho**2 - w @ w, "jac": lambda w: -2 * w}
    w = w0
    for _ in range(3):      # a restart from the last point if the certificate is not yet tight
        # ftol well above float precision: asking for 1e-15 makes SLSQP wander until its iteration limit
        res = optimize.minimize(fun, w, jac=jac, constraints=[cons], method="SLSQP",
                                options={"ftol": 1e-12, "maxiter": 1000})
        w = res.x
        norm = np.linalg.norm(w)
        w = w * (rho / norm) if norm > rho else w
        if frank_wolfe_gap(loss, w, X, y, rho) <= SOLVER_TOL:
            break
    return w


def ball_minimise(loss, X: np.ndarray, y: np.ndarray, rho: float) -> Minimum:
    """min over ||w|| <= rho of the mean loss over one data set X (P, d), y (P,), by scipy's SLSQP.

    Smooth losses: the Frank-Wolfe gap at the solution is the certified error. Non-smooth hinge:
    SLSQP on its beta-Moreau envelopes for growing beta (warm-started), keeping the best certificate:
    since f_b <= f (Lemma D.7 of seed 004), min F >= min F_b >= F_b(w) - gap_b(w), so
    F(w) - min F <= F(w) - F_b(w) + gap_b(w)."""
    w = np.zeros(X.shape[1])
    if loss.smooth:
        w = _slsqp(loss, w, X, y, rho)
        value = float(loss.record_values(w[None], X, y).mean())
        return Minimum(w, value, frank_wolfe_gap(loss, w, X, y, rho))
    best: Minimum | None = None
    for b in HINGE_SMOOTHING:
        env = loss.envelope(b)
        w = _slsqp(env, w, X, y, rho)
        value = float(loss.record_values(w[None], X, y).mean())
        gap = value - float(env.record_values(w[None], X, y).mean()) + frank_wolfe_gap(env, w, X, y, rho)
        if best is None or gap < best.gap:
            best = Minimum(w.copy(), value, gap)
    assert best is not None
    return best
