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

``shuffled_scores``: the same for the SHUFFLED reports of Shuffled Noisy MB-SGD (seed 004, Thm 5.1 / G.1) on a few
silos, scored by the exact likelihood ratio of the shuffled multiset (a sum over permutations in log space).
"""
from __future__ import annotations

import itertools
import math
from typing import Callable

import numpy as np
from scipy.special import logsumexp

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


MAX_SHUFFLED_SILOS = 6      # the shuffled view's likelihood sums over silos! permutations


def shuffled_scores(*, silos: int, pool: int, rounds: int, shift: float, sigma: float, trials: int,
                    rng: np.random.Generator, release: Callable[..., np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Likelihood-ratio scores of ``trials`` transcripts per side of what the server sees in Shuffled Noisy MB-SGD
    (algorithms/sdp_fl.py: K = 1, all M = ``silos`` silos every round): the shuffled multiset of the M reports of
    every round. The loss is linear, f(w, x) = <w, x> (convex and L-Lipschitz for ||x|| <= L: Thm G.1's class), so
    a report is the record read plus noise whatever w is, and one coordinate suffices. D: silo 0's record 0 (the
    canary) is +shift/2; D': it is -shift/2; every other record of every silo is -shift/2 on both sides (clones
    of the D' canary). Every round each silo reads one of its ``pool`` records with the algorithm's own sampler
    (sampling.k_subsets, K = 1), ``mechanisms.gaussian`` adds the noise (looked up now: the mechanism as the
    algorithms use it) and the shuffler puts the M reports in a uniform random order. A transcript scores
    sum_r ln[(1 - p) + p l_r], p = 1/pool, with l_r the likelihood ratio of the round's multiset with silo 0 on
    the canary against all clones, summed over the M! assignments of reports to silos in log space, for the
    noise sigma the algorithm claims. Large scores say D. Nothing of the accountant enters."""
    if not 1 <= silos <= MAX_SHUFFLED_SILOS:
        raise ValueError(f"the exact shuffled likelihood sums over silos! permutations: silos must be in "
                         f"[1, {MAX_SHUFFLED_SILOS}], not {silos}")
    a = shift / 2
    release = release or mechanisms.gaussian
    perms = np.array(list(itertools.permutations(range(silos))))
    clones = np.full(silos, -a)
    canary = clones.copy()
    canary[0] = a
    first = np.arange(silos) == 0
    out = []
    for on_d in (True, False):
        parts = []
        for lo in range(0, trials, CHUNK):
            m = min(CHUNK, trials - lo)
            read = sampling.k_subsets(rng, (m, rounds, silos), pool, 1)[..., 0] == 0    # (m, R, M): record 0 read
            clean = np.where(read & first & on_d, a, -a)
            y = rng.permuted(release(clean, sigma, rng=rng), axis=-1)                   # the shuffler, per round
            ell = _log_shuffled(y, canary, sigma, perms) - _log_shuffled(y, clones, sigma, perms)
            mix = ell if pool == 1 else np.logaddexp(math.log1p(-1 / pool), ell - math.log(pool))
            parts.append(mix.sum(axis=1))
        out.append(np.concatenate(parts))
    return out[0], out[1]


def _log_shuffled(y: np.ndarray, means: np.ndarray, s: float, perms: np.ndarray) -> np.ndarray:
    """ln of the density of the multiset of reports y (..., M) when silo i reports N(means[i], s^2), up to terms
    that do not depend on the means: ln sum_pi prod_i phi((y_pi(i) - means[i])/s), the sum over permutations
    taken in log space."""
    A = -(y[..., None, :] - means[:, None]) ** 2 / (2 * s * s)          # (..., i, j): silo i sent report j
    return logsumexp(A[..., np.arange(len(means)), perms].sum(axis=-1), axis=-1)
