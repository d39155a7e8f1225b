"""DaRRM, the data-dependent randomized response majority of seed 003's chapter 3 (Jiang's thesis; Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt): the closed-form noise functions gamma, the law of the vote count L, the
output law and the error. Pure numerics, nothing random: every quantity is an exact sum.

Problem 3.1.1 (L728-735): K (odd) mechanisms M_i, each (eps, Delta)-DP, output one bit each, S_i = 1 w.p. p_i,
independently; L = sum_i S_i ~ PoissonBinomial(p_1, .., p_K). DaRRM_gamma (Algorithm 1, L865-880): with probability
gamma(L) output the majority 1{L >= (K+1)/2}, otherwise a fair coin. So

    Pr[out = 1] = sum_l Pr[L = l] (gamma(l) 1{l >= (K+1)/2} + (1 - gamma(l))/2),

and the error (Def 3.3.4, L826-830) is |Pr[out = 1] - Pr[L >= (K+1)/2]|.

The noise functions (gamma(l) = gamma(K - l), symmetric around K/2):
- ``gamma_sub(K, m)``: Lemma 3.4.1 (L849-857), the majority of m of the K mechanisms drawn without replacement (ties
  of an even m broken by a fair coin), written for l <= (K-1)/2 and mirrored;
- ``gamma_dsub(K, m)``: Theorem 3.5.1 (L909-915), 1 - 2h(l) below K/2 and 2h(l) - 1 above, h(l) = sum_{i=m}^{2m-1}
  C(l, i) C(K-l, 2m-1-i) / C(K, 2m-1) (the majority of 2m - 1 subsampled), and gamma = 1 when m >= (K+1)/2;
- ``gamma_const(K, p)``: randomized response with a constant probability (Algorithm 7, L2376-2392); its p_const is a
  privacy calibration (Lemma B.1.1), computed in verifiers/accountants/darrm_privacy.py.
The hypergeometric weights are ratios of exact integers (math.comb), so they carry one rounding each.
"""
from __future__ import annotations

import math

import numpy as np


def _check_K(K: int) -> None:
    if K < 1 or K % 2 == 0:
        raise ValueError(f"DaRRM needs an odd number of mechanisms K >= 1 (K = {K})")


def _hyper(K: int, l: int, draws: int, lo: int) -> float:
    """Pr[at least lo of `draws` drawn without replacement from K (l of them ones) are ones]: sum_{j >= lo}
    C(l, j) C(K-l, draws-j) / C(K, draws), as one ratio of exact integers."""
    num = sum(math.comb(l, j) * math.comb(K - l, draws - j) for j in range(max(lo, 0), draws + 1))
    return num / math.comb(K, draws)


def gamma_sub(K: int, m: int) -> np.ndarray:
    """Lemma 3.4.1 (L853-855): gamma_Sub(l) for l <= (K-1)/2, mirrored: odd m, 1 - 2 sum_{j=(m+1)/2}^m C(l,j)C(K-l,m-j)/C(K,m);
    even m, 1 - 2 sum_{j=m/2+1}^m (..) - C(l,m/2)C(K-l,m/2)/C(K,m)."""
    _check_K(K)
    if not 1 <= m <= K:
        raise ValueError(f"gamma_Sub needs 1 <= m <= K (m = {m}, K = {K})")
    g = np.empty(K + 1)
    for l in range(K // 2 + 1):
        if m % 2:
            v = 1 - 2 * _hyper(K, l, m, (m + 1) // 2)
        else:
            tie = math.comb(l, m // 2) * math.comb(K - l, m // 2) / math.comb(K, m)
            v = 1 - 2 * _hyper(K, l, m, m // 2 + 1) - tie
        g[l] = g[K - l] = v
    return g


def h_dsub(K: int, m: int) -> np.ndarray:
    """Theorem 3.5.1's h(l) = sum_{i=m}^{2m-1} C(l,i) C(K-l,2m-1-i) / C(K,2m-1), l = 0..K (m <= (K-1)/2)."""
    return np.array([_hyper(K, l, 2 * m - 1, m) for l in range(K + 1)])


def gamma_dsub(K: int, m: int) -> np.ndarray:
    """Theorem 3.5.1 (L911-915): gamma = 1 if m >= (K+1)/2; else 1 - 2h(l) for l <= (K-1)/2, 2h(l) - 1 above."""
    _check_K(K)
    if m < 1:
        raise ValueError(f"gamma_DSub needs m >= 1 (m = {m})")
    if 2 * m >= K + 1:
        return np.ones(K + 1)
    h = h_dsub(K, m)
    half = (K + 1) // 2
    return np.concatenate([1 - 2 * h[:half], 2 * h[half:] - 1])


def gamma_const(K: int, p: float) -> np.ndarray:
    """Randomized response (Algorithm 7, L2376-2392): gamma(l) = p_const for every l."""
    _check_K(K)
    if not 0 <= p <= 1:
        raise ValueError(f"p_const must be in [0, 1] (p_const = {p})")
    return np.full(K + 1, float(p))


def gamma_majority(K: int) -> np.ndarray:
    """gamma = 1: the plain majority of all K (Lemma B.2.5's gamma_max, L2851)."""
    _check_K(K)
    return np.ones(K + 1)


def output_weights(gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(w1, w0): Pr[out = 1 | L = l] and Pr[out = 0 | L = l] of Algorithm 1 (lines 7-10), each a sum of non-negative
    terms (no cancellation): w1 = gamma 1{l >= (K+1)/2} + (1 - gamma)/2, w0 = gamma 1{l <= (K-1)/2} + (1 - gamma)/2."""
    g = np.asarray(gamma, dtype=np.float64)
    K = g.size - 1
    _check_K(K)
    upper = np.arange(K + 1) >= (K + 1) // 2
    coin = (1 - g) / 2
    return np.where(upper, g, 0.0) + coin, np.where(upper, 0.0, g) + coin


def poisson_binomial(p: np.ndarray) -> np.ndarray:
    """The law of L = sum_i Bernoulli(p_i) for each row of ``p`` (shape (..., K)): (..., K+1), by the recurrence
    pmf <- pmf (1 - p_i) + shift(pmf) p_i over the mechanisms (non-negative terms only: every entry to a few ulps
    relative, tiny tails included)."""
    p = np.asarray(p, dtype=np.float64)
    K = p.shape[-1]
    pmf = np.zeros(p.shape[:-1] + (K + 1,))
    pmf[..., 0] = 1.0
    for i in range(K):
        q = p[..., i:i + 1]
        nxt = pmf * (1 - q)
        nxt[..., 1:] += pmf[..., :-1] * q
        pmf = nxt
    return pmf


def prob_one(pmf: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Pr[DaRRM_gamma outputs 1] for each law of L (rows of ``pmf``)."""
    return pmf @ output_weights(gamma)[0]


def majority_one(pmf: np.ndarray) -> np.ndarray:
    """Pr[g(S) = 1] = Pr[L >= (K+1)/2], the true majority's probability of 1."""
    K = pmf.shape[-1] - 1
    return pmf[..., (K + 1) // 2:].sum(axis=-1)


def error(pmf: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Def 3.3.4 (L826-830): |Pr[DaRRM_gamma = 1] - Pr[g(S) = 1]| = |sum_l Pr[L = l] (1 - gamma(l)) (1/2 - 1{l >=
    (K+1)/2})|, written as that sum (no difference of two near-equal probabilities)."""
    g = np.asarray(gamma, dtype=np.float64)
    K = g.size - 1
    sign = np.where(np.arange(K + 1) >= (K + 1) // 2, -0.5, 0.5)
    return np.abs(pmf @ ((1 - g) * sign))
