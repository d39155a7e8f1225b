"""Correlated distributed mean estimation of seed 003, chapter 2 (Jiang's thesis; Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt; notes ../shared/notes/003a_thesis_ch2_ch3.md §1): n clients hold x_i in
R^d, each sends k numbers, the server estimates xbar = (1/n) sum_i x_i without bias. Pure numerics, no privacy.

- Rand-k: client i sends k coordinates drawn uniformly without replacement; xhat = (1/n)(d/k) sum_i E_i^T E_i x_i.
- Rand-k-Spatial (Eq. 2.2): the same encoding; xhat(j) = (1/n)(betabar / T(M_j)) sum_i xhat_i(j), M_j the number of
  clients that sent coordinate j, T a transformation (Max: T(m) = m; Opt, Eq. 2.11: 1 + R/(n-1)(m-1); Avg:
  1 + (n/2)(m-1)/(n-1); One: 1), betabar = (d/k) / E[1/T(1 + B)], B ~ Bin(n-1, k/d) (unbiasedness, exact).
- Rand-Proj-Spatial (Eq. 2.5) with SRHT G_i = (1/sqrt d) E_i H D_i (Eq. 2.6; H the +-1 Sylvester Hadamard matrix,
  D_i Rademacher): xhat = betabar T(S)^+ sum_i G_i^T G_i x_i, S = sum_i G_i^T G_i, T applied to the eigenvalues;
  computed from the stacked B = [G_1; ...; G_n] (nk x d) by its SVD B = U Sigma V^T: xhat = betabar V diag(s_j /
  T(s_j^2)) U^T y (y the stacked encodings; zero singular values dropped). betabar by unbiasedness (the notes'
  implementation rule): betabar = 1/(n c), c = (1/d) tr E[T(S)^+ G_1^T G_1] = (1/(n d)) E[sum_j s_j^2 / T(s_j^2)]
  over the nonzero s_j; for T = Max that is d / E[rank S] (A.9); estimated on independent runs when not exact.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
from scipy.stats import binom


def hadamard(d: int) -> np.ndarray:
    """The +-1 Sylvester Hadamard matrix of order d (a power of two): H^T H = d I."""
    if d < 1 or d & (d - 1):
        raise ValueError(f"d = {d}: the Hadamard transform needs a power of two")
    H = np.ones((1, 1))
    while H.shape[0] < d:
        H = np.block([[H, H], [H, -H]])
    return H


def transform(name: str, n: int, R: float = 0.0) -> Callable[[np.ndarray], np.ndarray]:
    """T for the spatial estimators (applied to counts M_j or to eigenvalues of S)."""
    if name == "max":
        return lambda m: np.asarray(m, dtype=np.float64)
    if name == "one":
        return lambda m: np.ones_like(np.asarray(m, dtype=np.float64))
    if name == "opt":
        return lambda m: 1.0 + R / (n - 1) * (np.asarray(m, dtype=np.float64) - 1.0)
    if name == "avg":
        return lambda m: 1.0 + n / 2.0 * (np.asarray(m, dtype=np.float64) - 1.0) / (n - 1)
    raise ValueError(f"unknown transform {name!r}")


def subsets(rng: np.random.Generator, trials: int, n: int, d: int, k: int) -> np.ndarray:
    """(trials, n, k) coordinate indices, k distinct per client (uniformly without replacement)."""
    return np.argsort(rng.random((trials, n, d)), axis=2)[:, :, :k]


def rand_k(X: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Rand-k's estimate per trial: X (n, d), idx (trials, n, k) -> (trials, d)."""
    trials, n, k = idx.shape
    d = X.shape[1]
    out = np.zeros((trials, d))
    vals = X[np.arange(n)[None, :, None], idx]                      # (trials, n, k)
    np.add.at(out, (np.arange(trials)[:, None, None], idx), vals)
    return out * (d / k) / n


def rand_k_rotated(X: np.ndarray, idx: np.ndarray, H: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """App. A.1.1 (L1897-1905): every client applies the same orthogonal G = H D / sqrt d (D Rademacher, drawn per run),
    then Rand-k on the rotated vector; the server decodes (1/n)(d/k) G^T sum_i E_i^T E_i G x_i. Per trial (trials, d)."""
    trials = idx.shape[0]
    d = X.shape[1]
    out = np.empty((trials, d))
    for t in range(trials):
        signs = 2.0 * rng.integers(0, 2, size=(1, d)) - 1.0
        G = H * signs / math.sqrt(d)
        out[t] = rand_k(X @ G.T, idx[t:t + 1])[0] @ G
    return out


def spatial_beta(T: Callable[[np.ndarray], np.ndarray], n: int, d: int, k: int) -> float:
    """Rand-k-Spatial's betabar in the Eq. 2.2 convention: (d/k) / E[1/T(1 + B)], B ~ Bin(n - 1, k/d), exactly."""
    b = np.arange(n)
    return (d / k) / float(np.sum(binom.pmf(b, n - 1, k / d) / T(1.0 + b)))


def rand_k_spatial(X: np.ndarray, idx: np.ndarray, T: Callable[[np.ndarray], np.ndarray], beta: float) -> np.ndarray:
    trials, n, k = idx.shape
    d = X.shape[1]
    sums = np.zeros((trials, d))
    counts = np.zeros((trials, d))
    vals = X[np.arange(n)[None, :, None], idx]
    np.add.at(sums, (np.arange(trials)[:, None, None], idx), vals)
    np.add.at(counts, (np.arange(trials)[:, None, None], idx), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(counts > 0, beta * sums / np.where(counts > 0, T(np.maximum(counts, 1.0)), 1.0), 0.0)
    return est / n


def spatial_closed_form(X: np.ndarray, T: Callable[[np.ndarray], np.ndarray], beta: float, k: int) -> float:
    """The exact MSE of Rand-k-Spatial (notes 003a §1.3, derived): (1/n^2)[beta^2 p a1 sum ||x_i||^2 + beta^2 p^2 a2
    sum_{i != l} <x_i, x_l>] - ||xbar||^2, p = k/d, a1 = E[T(1 + B_{n-1})^-2], a2 = E[T(2 + B_{n-2})^-2]."""
    n, d = X.shape
    p = k / d
    b1, b2 = np.arange(n), np.arange(max(n - 1, 1))
    a1 = float(np.sum(binom.pmf(b1, n - 1, p) / T(1.0 + b1) ** 2))
    a2 = float(np.sum(binom.pmf(b2, n - 2, p) / T(2.0 + b2) ** 2)) if n >= 2 else 0.0
    G = X @ X.T
    diag = float(np.trace(G))
    off = float(G.sum() - diag)
    xbar = X.mean(axis=0)
    return (beta**2 * p * a1 * diag + beta**2 * p**2 * a2 * off) / n**2 - float(xbar @ xbar)


def srht_rows(rng: np.random.Generator, H: np.ndarray, n: int, k: int, scale: float | None = None) -> np.ndarray:
    """B = [G_1; ...; G_n] (n k x d), G_i = (1/sqrt d) E_i H D_i (``scale`` overrides 1/sqrt d: a planted fault)."""
    d = H.shape[0]
    s = 1.0 / math.sqrt(d) if scale is None else scale
    rows = []
    for _ in range(n):
        sel = rng.choice(d, size=k, replace=False)
        signs = rng.choice((-1.0, 1.0), size=d)
        rows.append(s * H[sel] * signs[None, :])
    return np.vstack(rows)


def _spectrum(B: np.ndarray, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The SVD of B kept to its nonzero singular values (s_j > tol max(s, 1)): (U_k, s_k, V_k^T)."""
    U, s, Vt = np.linalg.svd(B, full_matrices=False)
    keep = s > tol * max(s.max(initial=0.0), 1.0)
    return U[:, keep], s[keep], Vt[keep]


def rps_once(B: np.ndarray, y: np.ndarray, T: Callable[[np.ndarray], np.ndarray], tol: float = 1e-9
             ) -> tuple[np.ndarray, int, float]:
    """One decode without betabar: (V diag(s_j / T(s_j^2)) U^T y, rank, sum_j s_j^2 / T(s_j^2)) over s_j > tol."""
    U, s, Vt = _spectrum(B, tol)
    lam = s**2
    return Vt.T @ (s / T(lam) * (U.T @ y)), int(s.size), float(np.sum(lam / T(lam)))


def rps_t_one(X: np.ndarray, H: np.ndarray, k: int, trials: int, rng: np.random.Generator,
              scale: float | None = None) -> np.ndarray:
    """Rand-Proj-Spatial with T = 1 (Thm 2.4.4): xhat = betabar sum_i G_i^T G_i x_i with betabar = d/(n k) (exact:
    E[G_i^T G_i] = (k/d) I for the SRHT)."""
    n, d = X.shape
    out = np.empty((trials, d))
    for t in range(trials):
        B = srht_rows(rng, H, n, k, scale)
        acc = np.zeros(d)
        for i in range(n):
            G = B[i * k:(i + 1) * k]
            acc += G.T @ (G @ X[i])
        out[t] = acc * d / (n * k)
    return out


def rps_multi(X: np.ndarray, H: np.ndarray, k: int, Ts: dict[str, Callable[[np.ndarray], np.ndarray]], trials: int,
              rng: np.random.Generator, scale: float | None = None) -> tuple[dict, np.ndarray]:
    """``trials`` SRHT draws, each decoded with every T of ``Ts`` (common random numbers): per T (estimates without
    betabar (trials, d), sum lam/T(lam) (trials,)), and the ranks of S."""
    n, d = X.shape
    est = {name: np.empty((trials, d)) for name in Ts}
    tr = {name: np.empty(trials) for name in Ts}
    ranks = np.empty(trials, dtype=np.int64)
    for t in range(trials):
        B = srht_rows(rng, H, n, k, scale)
        y = np.concatenate([B[i * k:(i + 1) * k] @ X[i] for i in range(n)])
        U, s, Vt = _spectrum(B)
        ranks[t] = int(s.size)
        lam = s**2
        Uy = U.T @ y
        for name, T in Ts.items():
            tl = T(lam)
            est[name][t] = Vt.T @ (s / tl * Uy)
            tr[name][t] = float(np.sum(lam / tl))
    return {name: (est[name], tr[name]) for name in Ts}, ranks
