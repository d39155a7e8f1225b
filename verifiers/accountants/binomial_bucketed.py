"""P_VEC's privacy over many calls when its binomial is too large to tabulate (seed 000's P_GD: n b ~ 10^16 trials per
count, a +-20 sd window of 10^9 counts), as a pessimistic privacy loss distribution built from buckets of counts.

verifiers/accountants/binomial_privacy.pld_epsilon tabulates every count of the window; here the window is cut into buckets of
w consecutive counts. Every canary pair is a pair of shifts of the same log-concave law (the count is
xhat_u + S + Bin(m, p), xhat_u on one side below the other's support), so the likelihood ratio is monotone in the
count (Karlin's MLR theorem): the privacy loss log P(k)/Q(k) falls with k and log Q(k)/P(k) rises. Each bucket's P
mass is given the loss at the bucket's left edge, its Q mass the loss at its right edge: the largest loss in the
bucket, rounded up by dp-accounting to its grid. Raising every loss raises every hockey-stick divergence
(delta(eps) = E_P[(1 - e^(eps - loss))_+] is increasing in the loss), also after composition, so the result is an
upper bound on the pairs' exact composed epsilon (not on the protocol's worst case: the canaries are candidates,
see binomial_privacy).

Losses are exact: log B(k - s) - log B(k) = sum_{i<s} -log1p((x - p - i)/(p (m(1-p) - x + i + 1))) with x = k - m p
(B = Bin(m, p)'s pmf, no log-gamma of 10^16). Bucket masses: the trapezoid rule on B at the bucket edges (Loader's
saddle-point form, relative error ~ (w/sd)^2, below 10^-7 here), normalised to the window's mass; the mass outside
the window (Hoeffding: <= 2 exp(-2 (20 sd)^2/m)) is added to delta in full.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld
from scipy.optimize import brentq
from scipy.stats import norm

from verifiers.accountants.binomial_privacy import WINDOW_SD, Pair, accumulate, composed_epsilon


def _h(t: np.ndarray) -> np.ndarray:
    """(1 + t) log(1 + t) - t, accurately for small t (series) and large (direct)."""
    small = np.abs(t) < 1e-3
    ts = np.where(small, t, 0.0)
    series = ts**2 / 2 - ts**3 / 6 + ts**4 / 12 - ts**5 / 20 + ts**6 / 30
    with np.errstate(invalid="ignore", divide="ignore"):
        direct = (1 + t) * np.log1p(t) - t
    return np.where(small, series, direct)


def _log_b(x: np.ndarray, m: int, p: float) -> np.ndarray:
    """log Bin(m, p) at k = m p + x, up to a constant (Loader's form without the Stirling remainders, which
    differ by < 1e-17 across the window)."""
    mp, mq = m * p, m * (1 - p)
    return -mp * _h(x / mp) - mq * _h(-x / mq) - 0.5 * (np.log1p(x / mp) + np.log1p(-x / mq))


def _log_ratio(x: np.ndarray, m: int, p: float, smax: int) -> np.ndarray:
    """r[:, s] = log B(k - s) - log B(k) for s = 0..smax at k = m p + x: (len(x), smax + 1)."""
    i = np.arange(smax, dtype=np.float64)[None, :]
    xs = x[:, None]
    # B(k - i - 1)/B(k - i) = (k - i) (1 - p) / ((m - k + i + 1) p) = 1 + (x - p - i)/(p (m (1 - p) - x + i + 1))
    terms = np.log1p((xs - p - i) / (p * (m * (1 - p) - xs + i + 1)))
    return np.concatenate([np.zeros((x.size, 1)), np.cumsum(terms, axis=1)], axis=1)


def _mixture(r: np.ndarray, c: float) -> np.ndarray:
    """log P(k) - log B(k) for xhat = floor(c) + Ber(frac(c)): from the ratio table r."""
    f = math.floor(c)
    q = c - f
    if q == 0:
        return r[:, f]
    return np.logaddexp(math.log1p(-q) + r[:, f], math.log(q) + r[:, f + 1])


def _pair_pld(m: int, p: float, pair: Pair, interval: float, width: int, center: float):
    """The pair's pessimistic PLD (both directions) and the mass outside the window."""
    sd = math.sqrt(m * p * (1 - p))
    lo = -float(math.ceil(WINDOW_SD * sd))
    hi = -lo
    nb = max(1, math.ceil((hi - lo) / width))
    edges = center + lo + width * np.arange(nb + 1, dtype=np.float64)   # integer counts, as offsets from m p
    smax = math.floor(max(pair.c, pair.c_prime)) + 2
    logP, logQ, logB = (np.empty(nb + 1) for _ in range(3))
    for a in range(0, nb + 1, 4096):
        sl = slice(a, min(a + 4096, nb + 1))
        r = _log_ratio(edges[sl], m, p, smax)
        logP[sl], logQ[sl] = _mixture(r, pair.c), _mixture(r, pair.c_prime)
        logB[sl] = _log_b(edges[sl], m, p)
    lossPQ = logP - logQ                  # falls with k when c < c' (MLR)
    if not np.isfinite(lossPQ).all():     # never silently cast to an integer below
        raise ValueError(f"the privacy loss of the pair {pair} is not finite inside the window")
    if pair.c > pair.c_prime:
        raise ValueError("pairs are ordered: c <= c'")
    bP, bQ = logB + logP, logB + logQ
    ref = float(max(bP.max(), bQ.max()))
    P_edge, Q_edge = np.exp(bP - ref), np.exp(bQ - ref)
    massP = (P_edge[:-1] + P_edge[1:]) / 2
    massQ = (Q_edge[:-1] + Q_edge[1:]) / 2
    massP, massQ = massP / massP.sum(), massQ / massQ.sum()
    outside = 2 * math.exp(-2 * (WINDOW_SD * sd - max(pair.c_prime, 1) - width) ** 2 / m)
    # Q's view: loss log Q/P rises with k, largest at the right edge; P's view: log P/Q, largest at the left edge
    keysQ = np.ceil(-lossPQ[1:] / interval).astype(np.int64)
    keysP = np.ceil(lossPQ[:-1] / interval).astype(np.int64)
    pmf_remove = accumulate(keysQ, massQ)
    pmf_add = accumulate(keysP, massP)
    dist = pld.PrivacyLossDistribution.create_from_rounded_probability(
        pmf_remove, 0.0, interval, pessimistic_estimate=True, rounded_probability_mass_function_add=pmf_add,
        infinity_mass_add=0.0, symmetric=False)
    return dist, outside


def gaussian_guess(m: int, p: float, pairs: dict[Pair, int], delta: float) -> float:
    """The composed epsilon in the Gaussian limit: the Gaussian mechanism with mu = sqrt(sum_k (shift_k/sd)^2),
    by its exact hockey-stick divergence (Balle & Wang 2018). A scale for the discretisation, not a bound."""
    sd = math.sqrt(m * p * (1 - p))
    mu = math.sqrt(sum(k * ((pr.c_prime - pr.c) / sd) ** 2 for pr, k in pairs.items()))

    def excess(x: float) -> float:
        return float(norm.cdf(-x / mu + mu / 2) - math.exp(x) * norm.cdf(-x / mu - mu / 2)) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = mu * math.sqrt(2 * math.log(1 / delta)) + mu * mu / 2 + 1e-300
    while excess(hi) > 0:
        hi *= 2
    return float(brentq(excess, 0.0, hi, xtol=1e-3 * hi, rtol=1e-6))


def epsilon(m: int, p: float, pairs: dict[Pair, int], delta: float, *, rel_error: float = 0.05) -> float:
    """eps at delta of the composition of ``pairs`` (pair -> how many times it is composed), an upper bound on the
    pairs' exact value: the pessimistic rounding adds at most ``rel_error`` of the (Gaussian-limit) result."""
    total = sum(pairs.values())
    guess = gaussian_guess(m, p, pairs, delta)
    if guess <= 0:
        guess = max(pr.c_prime - pr.c for pr in pairs) / math.sqrt(m * p * (1 - p))
    # each composed pair is rounded up twice (the bucket's largest loss: at most one interval, since the bucket width
    # is interval / slope; then dp-accounting's grid: another), so two intervals per composition
    interval = max(rel_error * guess / (2 * total), 1e-15)
    var = m * p * (1 - p)
    center = float(Fraction(round(m * p)) - Fraction(p) * m)       # an integer count's offset from m p

    def part(pr: Pair, count: int):
        slope = max(pr.c_prime - pr.c, 1e-12) / var                # the loss's change per count
        one, out = _pair_pld(m, p, pr, interval, max(1, int(interval / slope)), center)
        return one, count, out

    return composed_epsilon((part(pr, count) for pr, count in pairs.items()), delta)
