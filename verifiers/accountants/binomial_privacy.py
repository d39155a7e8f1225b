"""The privacy of seed 000's P_1D and P_VEC (algorithms/shuffle_sum.py), computed from the protocol's parameters
as run, on worst-case neighbouring inputs.

The analyzer's view of one P_1D call is the count Z = xhat_u + S + Bin(m, p), m = n b, where S is the other users'
rounded inputs (the proof of Lemma A.2, L376 of seed 000). With the other users on the grid S is a constant, which
is the worst case (a random S mixes pairs that each leak at most as much), so a neighbouring pair is a pair of
mixtures: user u's xhat is floor(c) or floor(c) + 1 with c = x_u g / Delta. We evaluate the binomial's log-pmf on a
window of +-WINDOW_SD standard deviations around its mean (what lies outside has mass below e^-190 and is added
to delta in full) and compute
- P_1D: the hockey-stick divergence, both directions, and the smallest eps with divergence <= delta (bisection):
  the exact (eps, delta) of that pair, to compare with Lemma 3.1's eps (2/g + |x_u - x'_u|/Delta) (L130);
- P_VEC: for each canary pair of users, the privacy loss distribution of every coordinate's pair (dp-accounting,
  pessimistic discretisation) composed over the coordinates (the d calls use independent randomness), or the exact
  hockey-stick when one coordinate moves; the largest over the canaries, to compare with the (eps, delta) Thm 3.2
  claims (L150). The canaries are candidates, not a proof of the worst case: any neighbouring pair shifts the d
  counts by at most g in l_2 (and rounding mixtures leak less), so Delta_2 e_1 vs -Delta_2 e_1 is close to the
  worst in the Gaussian limit; the report says "no canary exceeds".
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld
from scipy.stats import binom

from verifiers.accountants import pld_pmfs
from verifiers.accountants.pld_compose import self_compose
from verifiers.accountants.pld_epsilon import epsilon_for_delta

WINDOW_SD = 20.0
TABLE_SD = 12.0                 # table_pld_epsilon's window


@dataclass(frozen=True)
class Pair:
    """User u's rounded input on each side: floor(c) w.p. 1 - frac(c), floor(c) + 1 w.p. frac(c)."""

    c: float
    c_prime: float


def _window(m: int, p: float, reach: int, width_sd: float = WINDOW_SD) -> np.ndarray:
    mean, sd = m * p, math.sqrt(m * p * (1 - p))
    lo = max(0, int(math.floor(mean - width_sd * sd)) - reach)
    hi = min(m + reach, int(math.ceil(mean + width_sd * sd)) + reach)
    return np.arange(lo, hi + 1, dtype=np.float64)


def _binom_logpmf(k: np.ndarray, m: int, p: float) -> np.ndarray:
    """log Bin(m, p) at consecutive integers k: one scipy value at the start, then the exact ratios
    log(pmf(j)/pmf(j-1)) = log((m - j + 1) p / (j (1 - p))) summed up. For m ~ 10^10 scipy's own logpmf (a difference
    of log-gammas near 10^11) is off by ~10^-6 from point to point; the ratios keep neighbouring values, and with
    them the privacy losses, exact to rounding."""
    ks = k[(k >= 0) & (k <= m)]
    out = np.full(k.shape, -np.inf)
    if ks.size == 0:
        return out
    j = ks[1:]
    steps = np.log((m - j + 1) * p) - np.log(j * (1 - p))
    vals = float(binom.logpmf(ks[0], m, p)) + np.concatenate([[0.0], np.cumsum(steps)])
    out[(k >= 0) & (k <= m)] = vals
    return out


def _mixture_logpmf(base: np.ndarray, start: int, k: np.ndarray, c: float) -> np.ndarray:
    """log P(xhat + eta = k), xhat = floor(c) + Ber(frac(c)), eta ~ Bin(m, p) tabulated in ``base`` from ``start``."""
    f = math.floor(c)
    q = c - f
    a = base[(k - f - start).astype(np.int64)]
    if q == 0:
        return a
    b = base[(k - f - 1 - start).astype(np.int64)]
    with np.errstate(divide="ignore"):
        return np.logaddexp(math.log1p(-q) + a, math.log(q) + b)


@dataclass(frozen=True)
class _Table:
    k: np.ndarray              # the window of counts
    logP: np.ndarray
    logQ: np.ndarray
    outside: float             # the binomial's mass outside the window (added to delta in full)


def _pair_logpmfs(m: int, p: float, pair: Pair, width_sd: float = WINDOW_SD) -> _Table:
    """Both sides' log-pmfs on the window, and the binomial mass outside the window."""
    reach = int(math.ceil(max(pair.c, pair.c_prime))) + 1
    k = _window(m, p, reach, width_sd)
    start = int(k[0]) - reach
    base = _binom_logpmf(np.arange(start, int(k[-1]) + 1, dtype=np.float64), m, p)
    lo, hi = int(k[0]) + reach, int(k[-1]) - reach          # eta's window: every shift stays inside k's
    outside = float(binom.cdf(lo - 1, m, p) + binom.sf(hi, m, p))
    return _Table(k, _mixture_logpmf(base, start, k, pair.c), _mixture_logpmf(base, start, k, pair.c_prime), outside)


def hockey_stick(logP: np.ndarray, logQ: np.ndarray, eps: float, P: np.ndarray | None = None) -> float:
    """sum_k max(0, P(k) - e^eps Q(k)), from log-pmfs on a common support; ``P``: np.exp(logP) when the caller holds
    it (a bisection over eps computes it once)."""
    if P is not None and P.shape != logP.shape:
        raise ValueError(f"P {P.shape} is not np.exp(logP) {logP.shape}")
    with np.errstate(invalid="ignore"):
        d = np.exp(logQ + eps)
        np.subtract(np.exp(logP) if P is None else P, d, out=d)
    return float(np.sum(np.maximum(d, 0.0, out=d)))


def exact_epsilon(m: int, p: float, pair: Pair, delta: float, *, tol: float = 1e-7) -> float:
    """The smallest eps with both directions' hockey-stick divergence <= delta for this pair (bisection)."""
    return _exact(_pair_logpmfs(m, p, pair), delta, tol)


def _exact(t: _Table, delta: float, tol: float = 1e-7) -> float:
    P, Q = np.exp(t.logP), np.exp(t.logQ)

    def worst(eps: float) -> float:
        return max(hockey_stick(t.logP, t.logQ, eps, P), hockey_stick(t.logQ, t.logP, eps, Q)) + t.outside

    if worst(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while worst(hi) > delta:
        lo, hi = hi, 2 * hi
        if hi > 1e4:
            return math.inf
    while hi - lo > tol * max(hi, 1e-12):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if worst(mid) > delta else (lo, mid)
    return hi


def pld_epsilon(m: int, p: float, pairs: list[Pair], delta: float, *, interval: float | None = None) -> float:
    """eps at delta of the composition of the pairs' mechanisms (independent randomness), from dp-accounting's
    privacy loss distributions built from the exact pmfs (pessimistic discretisation; with symmetric=False one
    distribution holds both directions; its ``from_two_probability_mass_functions`` through pld_pmfs.py, the same
    distributions bit for bit). Not RDP: a shifted binomial has an outcome its neighbour cannot produce,
    so its Renyi divergences are infinite. ``interval``: the discretisation of the privacy loss; by default a
    hundredth of the largest single pair's exact epsilon divided by the number of pairs, so the pessimistic
    rounding (at most one interval per composed pair) stays below 1% of the result."""
    counts = Counter(pairs)
    tables = {pr: _pair_logpmfs(m, p, pr) for pr in counts}
    if interval is None:
        guess = max(_exact(t, delta) for t in tables.values())
        interval = min(1e-4, max(guess, 1e-9) / (100 * len(pairs)))

    def part(pr: Pair, count: int):
        t = tables[pr]
        return pld_pmfs.from_two_pmfs(t.logP, t.logQ, interval), count, t.outside     # the library's, bit for bit

    return composed_epsilon((part(pr, count) for pr, count in counts.items()), delta)


def table_pld_epsilon(m: int, p: float, pairs: list[Pair], delta: float, *, composed_scale: bool = False) -> float:
    """The same quantity as ``pld_epsilon`` (every count of the window tabulated, pessimistic rounding of each
    count's privacy loss up to the grid), with the rounding and the accumulation vectorised in numpy instead of
    dp-accounting's dict-based constructor: seconds instead of minutes for windows of 10^6 counts and more. The
    judge of the accountant-calibrated P_VEC (accountants/pvec.py), whose calibrator is the bucketed accountant
    (binomial_bucketed.py: buckets of counts, saddle-point masses); the interval is a hundredth of the result's scale
    divided by the number of pairs, as in ``pld_epsilon``. The window is +-TABLE_SD standard
    deviations (the binomial's mass outside, below 10^-30, is charged to delta in full as everywhere here).

    ``composed_scale``: the result's scale is that of the whole composition (the classic Gaussian epsilon of the
    l_2 norm of all the pairs' shifts in standard deviations), not of its largest pair: for many composed pairs (P_GD,
    a user in all T calls: T d pairs) the per-pair scale would make the grid ~sqrt(T d) times finer than the 1%
    the rounding needs, and the composed distribution too large to hold. The bound on the rounding (one interval per
    composed pair, a hundredth of the scale over all of them) is the same either way."""
    counts = Counter(pairs)
    tables = {pr: _pair_logpmfs(m, p, pr, TABLE_SD) for pr in counts}
    # the scale of the result, for the discretisation only: the classic Gaussian-mechanism epsilon of the largest
    # shift in standard deviations (within ~30% of the exact value here; a wrong scale costs accuracy, never safety:
    # the rounding is pessimistic whatever the interval)
    sd = math.sqrt(m * p * (1 - p))
    shift = (math.sqrt(sum(k * (pr.c_prime - pr.c) ** 2 for pr, k in counts.items())) if composed_scale else
             max(pr.c_prime - pr.c for pr in counts)) / sd
    guess = shift * math.sqrt(2 * math.log(1.25 / delta))
    interval = min(1e-4, max(guess, 1e-9) / (100 * len(pairs)))

    def part(pr: Pair, count: int):
        t = tables[pr]
        loss = t.logP - t.logQ
        if not np.isfinite(loss).all():                                # never silently cast to an integer
            raise ValueError(f"the privacy loss of the pair {pr} is not finite inside its tabulated window")
        keys_add = np.ceil(loss / interval).astype(np.int64)           # P's view: loss log P/Q, rounded up
        keys_remove = np.ceil(-loss / interval).astype(np.int64)       # Q's view: loss log Q/P, rounded up
        one = pld.PrivacyLossDistribution.create_from_rounded_probability(
            accumulate(keys_remove, np.exp(t.logQ)), 0.0, interval, pessimistic_estimate=True,
            rounded_probability_mass_function_add=accumulate(keys_add, np.exp(t.logP)), infinity_mass_add=0.0,
            symmetric=False)
        return one, count, t.outside

    return composed_epsilon((part(pr, count) for pr, count in counts.items()), delta)


def accumulate(keys: np.ndarray, mass: np.ndarray) -> dict[int, float]:
    """{key: the summed mass of its entries}, keys ascending: a rounded privacy-loss pmf. ``np.unique``'s inverse
    index, computed in one pass when the keys are signed integers in monotone order (a binomial shift's or a
    rounding mixture's privacy loss is monotone in the count: the binomial is log-concave), by the sort otherwise;
    the masses are summed by the same ``bincount`` either way, so the result does not depend on which path ran
    (tests/test_pld_epsilon.py)."""
    keys = np.asarray(keys)
    if keys.ndim == 1 and keys.size > 1 and np.issubdtype(keys.dtype, np.signedinteger):
        up, down = keys[1:] >= keys[:-1], keys[1:] <= keys[:-1]      # neighbours compared: no wrap-around
        rising = bool(up.all())
        if rising or down.all():
            change = keys[1:] != keys[:-1]
            new = np.concatenate(([0], np.cumsum(change)))            # the rank of each entry's key among the keys
            first = np.concatenate(([0], np.flatnonzero(change) + 1))  # the first entry of each distinct key
            inv = new if rising else new[-1] - new
            uniq = keys[first] if rising else keys[first][::-1]
            return dict(zip(uniq.tolist(), np.bincount(inv, weights=mass).tolist()))
    uniq, inv = np.unique(keys, return_inverse=True)
    return dict(zip(uniq.tolist(), np.bincount(inv, weights=mass).tolist()))


def composed_epsilon(parts: Iterable[tuple[Any, int, float]], delta: float) -> float:
    """eps at delta of the composition of (privacy loss distribution, times composed, its mass outside the
    tabulated window) parts; the windows' tails are charged to delta in full (inf when they exhaust it)."""
    composed, outside = None, 0.0
    for one, count, out in parts:
        outside += count * out
        one = self_compose(one, count) if count > 1 else one
        composed = one if composed is None else composed.compose(one)
    left = delta - outside
    if left <= 0 or composed is None:
        return math.inf
    return float(epsilon_for_delta(composed, left))


def p1d_worst_pair(g: int) -> Pair:
    """x_u = 0 against x'_u = Delta: xhat moves by the whole grid, g (no rounding randomness)."""
    return Pair(0.0, float(g))


def pvec_canaries(d: int, g: int) -> dict[str, list[Pair]]:
    """Candidate neighbours for P_VEC (note 000, section 6.1): Delta_2 e_1 against -Delta_2 e_1 (one coordinate moves
    by g), and (Delta_2/sqrt d) 1 against its negation (every coordinate moves by g/sqrt d, through the rounding)."""
    spread = [Pair(g / 2 * (1 - 1 / math.sqrt(d)), g / 2 * (1 + 1 / math.sqrt(d)))] * d
    return {"Delta_2 e_1 vs -Delta_2 e_1": [Pair(0.0, float(g))], "(Delta_2/sqrt d) 1 vs its negation": spread}


def pvec_epsilon(m: int, p: float, d: int, g: int, delta: float) -> tuple[float, str]:
    """(eps at delta, the canary that attains it): the largest over the candidate neighbours (a lower bound on the
    protocol's worst case, not a certificate of it: no other pair is searched). One moving coordinate: the exact
    hockey-stick epsilon; several: the PLD accountant."""
    best = (-1.0, "")
    for name, pairs in pvec_canaries(d, g).items():
        eps = exact_epsilon(m, p, pairs[0], delta) if len(pairs) == 1 else pld_epsilon(m, p, pairs, delta)
        if eps > best[0]:
            best = (eps, name)
    return best
