"""Seed 002's subsampled Gaussian element sum, mechanism (4) (Asi, Duchi, Javidi, L132-134 of
../shared/seeds/002_d3919fba655c6f58.txt), vectorised over trials, and the audit's canary scores.

M(S) = sum_u B_u (sum_k x_k^(u)) + rho sigma W, W ~ N(0, I), with B_u i.i.d. Bernoulli(q) (``poisson``) or the
indicator of a uniformly random subset of size round(q n) (``fixed``). Pure numerics: randomness only through the
``np.random.Generator`` handed in, float64 throughout.

``release`` takes the users whose vectors are listed (``sums``: their per-user sums) and ``n``, the number of users in
all: the unlisted users hold zero vectors, so only their sampling matters (for the fixed-size scheme, through the
listed users' joint law: the first rows of a uniform random subset of size m of n). That is exactly the
mechanism on a data set whose other users contribute 0, at the cost of the listed users only.
"""
from __future__ import annotations

import math

import numpy as np

SAMPLINGS = ("poisson", "fixed")


def sample_indicators(listed: int, n: int, q: float, sampling: str, size: tuple[int, ...],
                      rng: np.random.Generator) -> np.ndarray:
    """B_u for the ``listed`` first users of n: shape size + (listed,), 0/1 float64."""
    if sampling == "poisson":
        return (rng.random(size + (listed,)) < q).astype(np.float64)
    if sampling != "fixed":
        raise ValueError(f"sampling {sampling!r}: one of {', '.join(SAMPLINGS)}")
    m = int(round(q * n))
    out = np.zeros(size + (listed,))
    remaining_n = np.full(size, n, dtype=np.int64)
    remaining_m = np.full(size, m, dtype=np.int64)
    for j in range(listed):          # sequential draw of a uniform size-m subset, restricted to the listed users
        take = rng.random(size) * remaining_n < remaining_m
        out[..., j] = take
        remaining_m -= take
        remaining_n -= 1
    return out


def release(sums: np.ndarray, n: int, *, q: float, sigma: float, rho: float, sampling: str, rounds: int, trials: int,
            rng: np.random.Generator) -> np.ndarray:
    """Mechanism (4) run ``rounds`` times independently, ``trials`` times: (trials, rounds, d) releases.
    ``sums``: (listed, d) per-user sums sum_k x_k^(u) of the listed users (the other n - listed users hold 0)."""
    sums = np.asarray(sums, dtype=np.float64)
    if sums.ndim != 2 or sums.shape[0] > n:
        raise ValueError(f"sums of shape {sums.shape}: need (listed <= n = {n}, d)")
    B = sample_indicators(sums.shape[0], n, q, sampling, (trials, rounds), rng)
    return B @ sums + rho * sigma * rng.standard_normal((trials, rounds, sums.shape[1]))


def user_sum(vectors: np.ndarray) -> np.ndarray:
    """sum_k x_k^(u) of a user's K element vectors (K, d)."""
    return np.asarray(vectors, dtype=np.float64).sum(axis=0)


def canary_vectors(K: int, d: int, rho: float, sign: float) -> np.ndarray:
    """The canary user's K element vectors: rho e_1 in each of its K - 1 unchanged elements and sign * rho e_1 in the
    changed one (the collinear worst case of the element relation: the user's sum is rho (K - 1 + sign) e_1)."""
    v = np.zeros((K, d))
    v[:, 0] = rho
    v[-1, 0] = sign * rho
    return v


def log_mixture(y: np.ndarray, q: float, a: float, s: float) -> np.ndarray:
    """log density (up to the shared constant) of q N(a, s^2) + (1 - q) N(0, s^2) at y."""
    la = math.log(q) - 0.5 * ((y - a) / s) ** 2
    if q >= 1.0:
        return la
    return np.logaddexp(la, math.log1p(-q) - 0.5 * (y / s) ** 2)


def llr_scores(releases: np.ndarray, *, a: float, b: float, q: float, scale: float) -> np.ndarray:
    """The Neyman-Pearson score of the canary pair on the releases' first coordinate: sum over rounds of
    log [q N(a) + (1-q) N(0)] / [q N(b) + (1-q) N(0)] (a, b: the canary's sums on e_1; scale: the noise std)."""
    y = releases[..., 0]
    return (log_mixture(y, q, a, scale) - log_mixture(y, q, b, scale)).sum(axis=-1)


def audit_scores(*, K: int, n: int, q: float, sigma: float, rho: float, sampling: str, rounds: int, trials: int,
                 seq: np.random.SeedSequence, sensitivity_units: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Scores of ``trials`` runs on each side of the canary pair: D (the canary's changed element at +rho e_1) and D'
    (at -rho e_1); every other user holds zero vectors. Larger scores say D. ``sensitivity_units`` is the canary's
    nominal (a - b) / 2 in units of rho the score is built for (1: the element relation)."""
    d_rng, p_rng = (np.random.default_rng(s) for s in seq.spawn(2))
    out = []
    for sign, rng in ((1.0, d_rng), (-1.0, p_rng)):
        s = user_sum(canary_vectors(K, 1, rho, sign))[None, :]
        out.append(release(s, n, q=q, sigma=sigma, rho=rho, sampling=sampling, rounds=rounds, trials=trials, rng=rng))
    a, b = rho * (K - 1 + sensitivity_units), rho * (K - 1 - sensitivity_units)
    return (llr_scores(out[0], a=a, b=b, q=q, scale=rho * sigma),
            llr_scores(out[1], a=a, b=b, q=q, scale=rho * sigma))
