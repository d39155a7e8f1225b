"""Seed 002's element-level Gaussian mechanisms (heavy hitters (7), the clipped histogram (9); Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt): the paper's calibrations, the l2 sensitivity of each mechanism as
implemented under each neighbouring relation (derived here, checked from below by the search of
algorithms/element.py), and the exact privacy of a Gaussian release of that sensitivity: its Renyi divergence
alpha Delta^2 / (2 s^2) (App. A) and its exact delta(eps) (Balle & Wang 2018, Thm 8; pinned against dp-accounting's
PLD in tests/test_element.py).

Sensitivities (both mechanisms add each user's feature vector: the indicator 1(x) for (7), the per-cluster clipped
counts pi_rho(x) for (9); every coordinate of a feature is >= 0, so two features u, v have
||u - v||^2 = ||u||^2 + ||v||^2 - 2 u.v <= ||u||^2 + ||v||^2):

- heavy hitters, element (each item its own element, L174): x' differs from x in one item's count. Its indicator
  flips at most one coordinate: Delta = 1 when the total count may change; when neighbours keep the total m, a user
  cannot change one item's count alone, so element neighbours are equal and Delta = 0 (the seed's note P3).
  user: both indicators have at most min(m, d) ones and together at most d, so
  Delta^2 <= min(2 min(m, d), d) (the paper's gs = sqrt(2m), L184, when d >= 2m). record (one item moved): two
  coordinates at most, Delta <= sqrt 2.
- histogram (9), element: x' differs from x inside one cluster c; both blocks are non-negative with norm <= rho and
  <= their totals <= m, so ||pi(x)_c - pi(x')_c|| <= sqrt 2 min(rho, m), attained by moving a block of min(rho, m)
  or more items from one item of c to another (c with >= 2 items, with or without keeping the count). A cluster of
  one item: the block is min(count, rho) in [0, min(rho, m)], so Delta = min(rho, m) when the count may change,
  and 0 when it is kept. The mean (1/n) sum_u divides it by n; the noise std is rho sigma / n, so the ratio
  Delta/s is sqrt 2 / sigma on clusters of two or more items. Lemma 3.2 reads "as with Lemma 3.1" (L219), whose
  ratio is 1 / sigma.
  user: Delta^2 <= ||pi(x)||^2 + ||pi(x')||^2 <= 2 G with G = max_x ||pi(x)||^2 = max sum_c min(rho, a_c)^2 over
  cluster totals a_c >= 0 summing to m (a block's l2 norm is at most its total); attained when both users can put
  their mass on different items of the same clusters. record: the projection onto a product of balls is
  1-Lipschitz, and moving one item moves the counts by sqrt 2: Delta <= sqrt 2.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from verifiers.accountants.shuffled_gaussian import gaussian_delta

MECHANISMS = ("heavy_hitters", "element_histogram")


def lemma_sigma2(eps: float, delta: float) -> float:
    """sigma^2 = 1{eps > 1}/eps + 2 log(1/delta)/eps^2: Eq. (1)'s noise per unit of sensitivity (L128) and the
    calibration of Lemmas 3.1 (ii) and 3.2 (ii) (L182, L225)."""
    return (1.0 / eps if eps > 1 else 0.0) + 2 * math.log(1 / delta) / eps**2


def rdp_sigma2(eps: float, alpha: float) -> float:
    """sigma^2 = alpha / eps: Lemmas 3.1 (i) and 3.2 (i) (L181, L224)."""
    return alpha / eps


def max_block_energy(m: int, K: int, rho: float) -> float:
    """G = max sum_c min(rho, a_c)^2 over integers a_c >= 0, sum a_c = m, at most K clusters used (a dynamic
    programme over the clusters; m is at most a few thousand)."""
    best = np.full(m + 1, -np.inf)
    best[0] = 0.0
    gain = np.minimum(rho, np.arange(m + 1, dtype=np.float64)) ** 2
    for _ in range(min(K, m)):
        nxt = best.copy()
        for a in range(1, m + 1):
            nxt[a:] = np.maximum(nxt[a:], best[:m + 1 - a] + gain[a])
        if np.array_equal(nxt, best):         # another cluster adds nothing: the optimum uses fewer
            break
        best = nxt
    return float(best[m])


def sensitivity(mechanism: str, unit: str, keep_count: bool | None, *, m: int, d: int, K: int, max_cluster: int,
                rho: float) -> float:
    """The l2 sensitivity of the sum of users' features (module docstring; the histogram's before its 1/n)."""
    if mechanism == "heavy_hitters":
        if unit == "element":
            return 0.0 if keep_count else 1.0
        if unit == "user":
            return math.sqrt(min(2 * min(m, d), d))
        return math.sqrt(2)
    if mechanism == "element_histogram":
        if unit == "element":
            if max_cluster >= 2:
                return math.sqrt(2) * min(rho, m)
            return 0.0 if keep_count else min(rho, m)
        if unit == "user":
            return math.sqrt(2 * max_block_energy(m, K, rho))
        return math.sqrt(2)
    raise ValueError(f"mechanism {mechanism!r}: one of {', '.join(MECHANISMS)}")


def epsilon_at(delta: float, mu: float) -> float:
    """The exact epsilon at delta of a Gaussian release with sensitivity/std = mu: the root of delta(eps) = delta
    (delta(eps) decreases in eps); 0 when delta(0) <= delta already."""
    if mu <= 0 or gaussian_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(hi, mu) > delta:
        hi *= 2
        if hi > 1e4:
            return math.inf
    return float(brentq(lambda e: gaussian_delta(e, mu) - delta, 0.0, hi, xtol=1e-12, rtol=1e-12))


def renyi(alpha: float, mu: float) -> float:
    """D_alpha(N(0, s^2) || N(Delta, s^2)) = alpha mu^2 / 2 with mu = Delta / s (App. A, L? 'D_alpha = alpha
    ||mu0 - mu1||^2 / (2 s^2)')."""
    return alpha * mu * mu / 2


def gaussian_report(mu: float, *, eps: float, delta: float, alpha: float) -> dict:
    """Exact figures of one Gaussian release with sensitivity/std ratio mu."""
    return {"mu": mu, "delta_at_eps": gaussian_delta(eps, mu), "epsilon_at_delta": epsilon_at(delta, mu),
            "renyi": renyi(alpha, mu)}


def prop1_gamma(*, n: int, m: int, d: int, t: float, sigma: float, p1: float) -> float:
    """Prop. 1's separation (L197-199): max{32 log(d/t)/(nm), 4 sqrt2 sigma sqrt(log(d/t))/(nm),
    (12 sqrt2 / sqrt5) sqrt(p1) sqrt(log(d/t)) / (m sqrt n)} (natural logarithm)."""
    L = math.log(d / t)
    return max(32 * L / (n * m), 4 * math.sqrt(2) * sigma * math.sqrt(L) / (n * m),
               12 * math.sqrt(2) / math.sqrt(5) * math.sqrt(p1) * math.sqrt(L) / (m * math.sqrt(n)))


def prop2_rho(*, m: int, cluster_mass: np.ndarray, t: float) -> float:
    """The smallest rho Prop. 2 allows (L229): min{3 m P(c) + 3 log2 m + t, m} over the clusters' worst, the
    logarithm base 2 as its proof uses it (2^{-2 log m} = m^{-2}; note P2)."""
    return float(min(3 * m * float(np.max(cluster_mass)) + 3 * math.log2(m) + t, m))
