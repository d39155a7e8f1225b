"""The non-private empirical optimum on the domain ball, for the squared loss (+ ridge), exactly.

min_w (1/2) w^T A w - b^T w  s.t. ||w|| <= rho,  A = X^T X / m + mu I,  b = X^T y / m.
With A = Q diag(lam) Q^T the solution is w(t) = Q (Q^T b / (lam + t)) with t = 0 when that is
feasible, else the t > 0 with ||w(t)|| = rho (monotone in t; found by bisection to float precision).
"""
from __future__ import annotations

import numpy as np

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
