"""Empirical privacy audit, the numerical side: run a silo's release mechanism many times on a pair of
neighbouring data sets and score each transcript with a likelihood-ratio statistic.

The pair (a "gradient canary", as in white-box DP-SGD audits): one silo's data sets differ in one record,
the canary, and every other record is the same on both sides. ``worst_pair`` searches a grid of query
points and candidate canaries in the data domain for the pair whose per-record gradients differ most (using
the loss's own gradient code), so the released mean moves by a = ||g - g'|| / K between the two sides. The
audit then runs, for every trial, the mechanism exactly as the algorithm does: the algorithm's own batch
sampler decides in which rounds (and how many times) the canary is read, and ``mechanisms.gaussian`` adds
the noise. Only the coordinate along g - g' carries information (the others are the same on both sides),
so the transcript is released in that coordinate. A fault in the sampler, the noise or the gradients
therefore shows up in the audit.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from algorithms import mechanisms, sampling

CHUNK = 20_000          # audit trials simulated at once
CELLS = 4_000_000       # trial x round x sampler values held at once


def worst_pair(loss, *, r: float, rho: float, y_values: tuple[float, ...], d: int) -> tuple[float, dict]:
    """max ||grad f(w, z) - grad f(w, z')|| over query points w in {0} and rho e, and canaries z, z' with
    x = r e and y in y_values, for the directions e in {+-u, +-v, (+-u +-v)/sqrt 2} (u, v orthonormal).
    A grid, so a lower bound on the sensitivity; returns (the distance, the pair)."""
    u = np.zeros(d)
    u[0] = 1.0
    v = np.zeros(d)
    v[min(1, d - 1)] = 1.0
    dirs = [s * e for e in (u, v) for s in (1.0, -1.0)]
    if d > 1:
        dirs += [(su * u + sv * v) / np.sqrt(2) for su in (1.0, -1.0) for sv in (1.0, -1.0)]
    ws = [np.zeros(d)] + [rho * e for e in dirs]
    xs = [r * e for e in dirs]
    recs = [(x, y) for x in xs for y in y_values]
    best, pair = -1.0, {}
    for w in ws:
        X = np.array([x for x, _ in recs])
        Y = np.array([y for _, y in recs])
        G = loss.dphi(X @ w, Y, (X * X).sum(1))[:, None] * X          # the ridge term cancels in differences
        diff = np.linalg.norm(G[:, None, :] - G[None, :, :], axis=2)
        i, j = np.unravel_index(np.argmax(diff), diff.shape)
        if diff[i, j] > best:
            best = float(diff[i, j])
            pair = {"w": w.tolist(), "x": recs[i][0].tolist(), "y": float(recs[i][1]),
                    "x_prime": recs[j][0].tolist(), "y_prime": float(recs[j][1])}
    return best, pair


def canary_reads(kind: str, *, n: int, K: int, rounds: int) -> Callable[[np.random.Generator, int, int], np.ndarray]:
    """How often the canary (record 0 of the silo) is read in each of ``block`` rounds, per trial:
    reads(rng, trials, block) -> (trials, block), drawn with the algorithm's own sampler. 'without_replacement':
    a fresh K-subset every round (sampling.k_subsets); 'disjoint' (one pass): the canary's round is given to
    the attacker (the one-pass analysis holds for any batch assignment), so one round with one read."""
    if kind == "without_replacement":
        return lambda rng, trials, block: (sampling.k_subsets(rng, (trials, block), n, K) == 0).sum(axis=-1)
    if kind == "disjoint":
        return lambda rng, trials, block: np.ones((trials, block))
    raise ValueError(f"no audit for sampling {kind!r}")


def scores(reads: Callable[[np.random.Generator, int, int], np.ndarray], *, rounds: int, shift: float, sigma: float,
           q: float, trials: int, rng: np.random.Generator, pool: int = 1,
           release: Callable[..., np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Likelihood-ratio scores of ``trials`` transcripts on each side. Each read of the canary adds +a on
    side D and -a on side D' (a = shift/2: the pair centred at 0) before the mechanism's noise. A transcript
    y_1..y_R scores sum_r ln[(1-q) + q e^{(a y_r - a^2/2)/s^2}] - ln[(1-q) + q e^{(-a y_r - a^2/2)/s^2}],
    the log-likelihood ratio of D against D' for an attacker who reads the canary in each round with
    probability q and assumes the noise s = sigma the algorithm claims. Large scores say D. Trials and
    rounds are simulated in blocks of about CELLS values (``pool``: values the sampler touches per round)."""
    a = shift / 2
    release = release or mechanisms.gaussian        # looked up now: the mechanism exactly as the algorithms use it
    out = []
    for sign in (1.0, -1.0):
        parts = []
        for lo in range(0, trials, CHUNK):
            m = min(CHUNK, trials - lo)
            block = max(1, min(rounds, CELLS // (m * max(pool, 1))))
            total = np.zeros(m)
            for r0 in range(0, rounds, block):
                b = min(block, rounds - r0)
                y = release(sign * a * reads(rng, m, b), sigma, rng=rng)
                total += _llr(y, a, sigma, q)
            parts.append(total)
        out.append(np.concatenate(parts))
    return out[0], out[1]


def _llr(y: np.ndarray, a: float, s: float, q: float) -> np.ndarray:
    plus = (a * y - a * a / 2) / s**2
    minus = (-a * y - a * a / 2) / s**2
    if q >= 1.0:
        return (plus - minus).sum(axis=1)
    lq, l1q = np.log(q), np.log1p(-q)
    return (np.logaddexp(l1q, lq + plus) - np.logaddexp(l1q, lq + minus)).sum(axis=1)
