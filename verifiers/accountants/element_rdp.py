"""Privacy of seed 002's subsampled Gaussian element sum, mechanism (4) (Asi, Duchi, Javidi; Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt), and the exact check of its amplification-by-subsampling corollary.

Mechanism (4) (L132-134): M(S) = sum_u B_u (sum_k x_k^(u)) + rho sigma W, ||x_k^(u)|| <= rho, B_u i.i.d.
Bernoulli(q) (or a uniform subset of size q n). In units of rho the noise has standard deviation sigma. Element
neighbours (L77-95 and (3)) change ONE vector x_k of ONE user u; users are never added or removed.

Our reading of the one-round pair (derived here, Poisson sampling; the other users' B_v are independent of B_u, so
their sum is a post-processing and the worst case puts their vectors at 0):
    M(S) ~ q N(c + x, sigma^2) + (1 - q) N(0, sigma^2),  M(S') ~ q N(c + x', sigma^2) + (1 - q) N(0, sigma^2),
where c = sum_{j != k} x_j^(u) is the rest of the changed user's sum (||c|| <= (K - 1) rho) and ||x||, ||x'|| <= 1.
- With c = 0 (K = 1, or a user whose other element vectors vanish) the worst pair is x = 1, x' = -1: distance 2 in
  units of rho with noise std sigma, i.e. exactly Cor 2.5's P_{+-1} = N(+-1, sigma^2) (L138-140). The paper's pair
  is consistent with the sensitivity 2 rho it states (L327).
- With c != 0 the pair is NOT Cor 2.5's: the changed user's presence is visible through c. Its divergence is at
  most that of the *labelled* pair (the bit B_u revealed): 1-q of the mass identical, q of it N(1) vs N(-1)
  (``labelled_*``; the mixture forgets the label, a post-processing), and tends to it as ||c|| / sigma grows. The
  collinear pair a = K, b = K - 2 (c = (K - 1) e_1, x = +-e_1) is a realisable element-neighbouring pair.
- User level (Cor 3.2, L331): the whole user sum changes, ||s_u|| <= K rho, worst collinear pair a = K, b = -K,
  which is Cor 2.5's pair at sigma / K.
Fixed-size sampling: with the other users at 0 the changed user's B_u is Bernoulli(q n / n) and the rounds are
independent, so the same pair is realisable; it is a lower bound on that scheme's worst case (not proven tight).

Accountants (all for a collinear pair (a, b) in units of rho, noise std sigma):
- ``renyi`` / ``eps_alpha``: D_alpha of the two mixtures by the trapezoid rule in log space (logsumexp) on a grid of
  step sigma / 40 wide enough to hold the tilted integrand's mass (its Gaussian tails are centred at most at
  alpha a + (1 - alpha) b etc.); eps_alpha is the larger of both orders (Cor 2.5).
- ``mironov``: eps = inf_{alpha > 1} T eps_alpha + log(1/delta) / (alpha - 1) (L142, Cor 3.1 L329), by a geometric
  grid of orders refined by a bounded scalar minimisation.
- ``tight_epsilon``: the exact (up to a stated pessimistic discretisation) epsilon of the T-fold composition: the
  privacy-loss distribution of the one-round pair (both orders), built by us (bins of width sigma / ``BIN_FRACTION``
  over +-``TAIL_SIGMAS`` sigma, each bin's mass exact from normal CDFs and its loss the largest of the loss at 5
  points of the bin, rounded up to the value grid; the mass outside the grid goes to +infinity), composed T times by
  dp-accounting's PLD (FFT). It is an upper bound on the true epsilon up to the loss's second-order variation inside
  a bin (< 1e-9 per round here); the optimistic twin (smallest loss of the bin rounded down, the mass off the grid
  dropped) is a lower bound, and the two are about T x ``value_step`` apart.
Since Mironov's conversion is an upper bound on the tight epsilon of the same pair, tight <= Mironov up to the
discretisation (tests check it).

Cor 2.4 (L127-130) is checked by ``amplification_*``: exact enumeration of the output laws of a pure eps-DP base
mechanism (randomized response on each of a user's K element bits) subsampled by users, under the element relation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy.optimize import minimize_scalar
from scipy.special import ndtr

from verifiers.accountants.pld_compose import self_compose
from verifiers.accountants.pld_epsilon import epsilon_for_delta
from verifiers.stats import logsumexp_scipy

GRID_PER_SIGMA = 40           # quadrature points per sigma (trapezoid on a Gaussian-like integrand: spectrally exact)
QUAD_TAIL = 16.0              # sigmas beyond the extreme centres of the tilted integrand
ORDERS = 1.0 + np.geomspace(1e-3, 2e3, 160)   # alpha - 1 from 0.001 to 2000 (Mironov's inf: grid, then refined)
PRUNE_REL, PRUNE_ABS = 1e-6, 1e-6   # mironov leaves the grid once T rdp exceeds the least objective by these
BIN_FRACTION = 2000           # PLD bins of width sigma / BIN_FRACTION
TAIL_SIGMAS = 14.0            # PLD grid: +-14 sigma beyond the centres; the rest (< 1e-44) is infinite loss
VALUE_STEP = 1e-4             # PLD value discretisation (pessimistic rounding up), scaled up for large losses:


def value_step(sigma: float, a: float, b: float) -> float:
    """The PLD's value step: VALUE_STEP times the loss scale |a - b| max(|a|, |b|, 1) / (2 sigma^2) when above 1 (the
    loss grows like that; the composed PLD's support then stays near T / VALUE_STEP values)."""
    return VALUE_STEP * max(1.0, abs(a - b) * max(abs(a), abs(b), 1.0) / (2 * sigma**2))


def _check(q: float, sigma: float) -> None:
    if not 0.0 < q <= 1.0:
        raise ValueError(f"q = {q}: the sampling rate must be in (0, 1]")
    if not sigma > 0.0:
        raise ValueError(f"sigma = {sigma}: the noise multiplier must be positive")


def log_mixture(y: np.ndarray, q: float, a: float, sigma: float) -> np.ndarray:
    """log of the density of q N(a, sigma^2) + (1 - q) N(0, sigma^2) at y."""
    z = -0.5 * math.log(2 * math.pi) - math.log(sigma)
    la = math.log(q) - 0.5 * ((y - a) / sigma) ** 2
    if q == 1.0:
        return z + la
    return z + np.logaddexp(la, math.log1p(-q) - 0.5 * (y / sigma) ** 2)


def renyi(q: float, sigma: float, alpha: float, a: float = 1.0, b: float = -1.0) -> float:
    """D_alpha(q N(a) + (1-q) N(0) || q N(b) + (1-q) N(0)), noise std sigma, alpha > 1 (integer or not).
    The integrand is alpha log_mixture(a) + (1 - alpha) log_mixture(b) computed in place, with the N(0) term the two
    mixtures share computed once: the operations of ``log_mixture`` in the same order, so the same numbers."""
    _check(q, sigma)
    if not alpha > 1.0:
        raise ValueError(f"alpha = {alpha}: Renyi orders here are > 1")
    centres = [0.0, a, b, alpha * a + (1 - alpha) * b, alpha * a, (1 - alpha) * b]
    lo, hi = min(centres) - QUAD_TAIL * sigma, max(centres) + QUAD_TAIL * sigma
    n = int(math.ceil((hi - lo) / sigma * GRID_PER_SIGMA)) + 1
    y = np.linspace(lo, hi, n)
    z = -0.5 * math.log(2 * math.pi) - math.log(sigma)
    lq = math.log(q)
    zero = None
    if q != 1.0:
        zero = np.divide(y, sigma)                       # log1p(-q) - 0.5 (y / sigma)^2, shared by both mixtures
        np.square(zero, out=zero)
        zero *= 0.5
        np.subtract(math.log1p(-q), zero, out=zero)
    f = np.empty(n)
    g = np.empty(n)
    for centre, weight, out in ((a, alpha, f), (b, 1 - alpha, g)):
        np.subtract(y, centre, out=out)                  # log_mixture(y, q, centre, sigma), term by term
        out /= sigma
        np.square(out, out=out)
        out *= 0.5
        np.subtract(lq, out, out=out)
        if zero is not None:
            np.logaddexp(out, zero, out=out)
        np.add(z, out, out=out)
        out *= weight
    f += g
    f[1:-1] += math.log(y[1] - y[0])
    f[[0, -1]] += math.log(y[1] - y[0]) - math.log(2.0)
    return max(logsumexp_scipy(f) / (alpha - 1), 0.0)


def eps_alpha(q: float, sigma: float, alpha: float, a: float = 1.0, b: float = -1.0) -> float:
    """Cor 2.5's eps_alpha(q, sigma) (L140) for the pair (a, b): the larger Renyi divergence of the two orders."""
    return max(renyi(q, sigma, alpha, a, b), renyi(q, sigma, alpha, b, a))


def labelled_eps_alpha(q: float, sigma: float, alpha: float, dist: float = 2.0) -> float:
    """The labelled pair (B_u visible): 1/(alpha-1) log(1 - q + q exp((alpha-1) alpha dist^2 / (2 sigma^2))). An
    upper bound on every pair whose sampled parts are N(.) at distance ``dist`` (the c -> infinity limit)."""
    _check(q, sigma)
    g = (alpha - 1) * alpha * dist**2 / (2 * sigma**2)
    return float(np.logaddexp(math.log1p(-q) if q < 1 else -np.inf, math.log(q) + g)) / (alpha - 1)


@dataclass(frozen=True)
class Conversion:
    epsilon: float
    alpha: float


def mironov(rdp: Callable[[float], float], T: int, delta: float) -> Conversion:
    """inf_{alpha > 1} T rdp(alpha) + log(1/delta)/(alpha - 1) (L142; Cor 3.1, L329): the order grid, then a bounded
    minimisation of the convex-in-practice objective around the grid's best order. ``rdp`` must be nondecreasing in
    alpha, as every Renyi divergence is (van Erven and Harremoes 2014, Thm 3): the grid is walked upwards and left
    once T rdp(alpha) exceeds the least objective so far (by more than ``PRUNE_REL`` and ``PRUNE_ABS``, room for the
    quadrature's rounding, whose non-monotone wiggles are below 1e-10), since every higher order's objective is at
    least T rdp(alpha) and so cannot be the grid's least; the orders left out are the costliest (the quadrature's
    grid grows with alpha) and the result is the same number as the whole grid's."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta = {delta}: must be in (0, 1)")
    L = math.log(1 / delta)

    def obj(al: float) -> float:
        return T * rdp(al) + L / (al - 1)

    walked: list[float] = []
    least = math.inf
    for a in ORDERS:
        r = rdp(a)
        v = T * r + L / (a - 1)                          # obj(a)
        walked.append(v)
        least = min(least, v)
        if T * (r * (1 - PRUNE_REL) - PRUNE_ABS) > least:
            break
    vals = np.array(walked)
    i = int(np.argmin(vals))
    lo, hi = ORDERS[max(i - 1, 0)], ORDERS[min(i + 1, len(ORDERS) - 1)]
    best = Conversion(float(vals[i]), float(ORDERS[i]))
    if hi > lo:
        r = minimize_scalar(obj, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6 * lo})
        if r.fun < best.epsilon:
            best = Conversion(float(r.fun), float(r.x))
    return best


def paper_epsilon(q: float, sigma: float, T: int, delta: float, a: float = 1.0, b: float = -1.0) -> Conversion:
    """Cor 3.1's epsilon for the pair (a, b): T-fold RDP composition and Mironov's conversion."""
    return pair_conversion(q, sigma, T, delta, a, b)


@lru_cache(maxsize=1024)
def pair_conversion(q: float, sigma: float, T: int, delta: float, a: float, b: float) -> Conversion:
    """Mironov's conversion of eps_alpha of the pair (a, b) composed T times (``paper_epsilon``'s number), computed
    once per arguments in a process: a pure function of them, and sweeps and specs ask for the same accounting again
    (the element claim at every point of a sweep over K, the claim and the true pair's Mironov when they coincide).
    Conversion is frozen, so the cached value can be shared."""
    return mironov(lambda al: eps_alpha(q, sigma, al, a, b), T, delta)


# ---------------------------------------------------------------------------------------------------------------------
# the tight accountant: our PLD of the one-round pair, composed T times


def _bin_masses(edges: np.ndarray, q: float, a: float, sigma: float) -> np.ndarray:
    """Exact mass of each bin under q N(a) + (1-q) N(0) (CDF differences on the accurate side)."""
    def comp(c: float) -> np.ndarray:
        u = (edges - c) / sigma
        lo, hi = u[:-1], u[1:]
        return np.where(lo < 0, ndtr(hi) - ndtr(lo), ndtr(-lo) - ndtr(-hi))
    return q * comp(a) + (1 - q) * comp(0.0) if q < 1 else comp(a)


def _rounded_pmf(q: float, sigma: float, a: float, b: float, pessimistic: bool,
                 step: float) -> tuple[dict[int, float], float]:
    """The rounded PLD of (P_a, P_b) (loss log p_a/p_b under P_a): {k: mass}. Pessimistic: each bin's loss is the
    largest of 5 points of the bin rounded up (loss <= k VALUE_STEP), the mass off the grid at +infinity; optimistic:
    the smallest rounded down, the mass off the grid dropped (a lower bound on every hockey-stick divergence)."""
    lo = min(0.0, a, b) - TAIL_SIGMAS * sigma
    hi = max(0.0, a, b) + TAIL_SIGMAS * sigma
    n = int(math.ceil((hi - lo) / sigma * BIN_FRACTION))
    edges = np.linspace(lo, hi, n + 1)
    mass = _bin_masses(edges, q, a, sigma)
    sub = edges[:-1, None] + (edges[1] - edges[0]) * np.linspace(0.0, 1.0, 5)[None, :]
    losses = log_mixture(sub, q, a, sigma) - log_mixture(sub, q, b, sigma)
    if pessimistic:
        k = np.ceil(losses.max(axis=1) / step - 1e-9).astype(np.int64)
    else:
        k = np.floor(losses.min(axis=1) / step + 1e-9).astype(np.int64)
    k0 = int(k.min())
    acc = np.bincount(k - k0, weights=mass)
    nz = np.flatnonzero(acc > 0)
    pmf = dict(zip((nz + k0).tolist(), acc[nz].tolist()))          # {k: mass} of the bins holding mass, k ascending
    return pmf, max(0.0, 1.0 - float(mass.sum())) if pessimistic else 0.0


def one_round_pld(q: float, sigma: float, a: float = 1.0, b: float = -1.0,
                  pessimistic: bool = True) -> pld_lib.PrivacyLossDistribution:
    """The one-round PLD of the pair, both orders (dp-accounting's remove = (P_a, P_b), add = (P_b, P_a))."""
    _check(q, sigma)
    step = value_step(sigma, a, b)
    pmf_ab, inf_ab = _rounded_pmf(q, sigma, a, b, pessimistic, step)
    pmf_ba, inf_ba = _rounded_pmf(q, sigma, b, a, pessimistic, step)
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        pmf_ab, inf_ab, step, pessimistic_estimate=pessimistic, rounded_probability_mass_function_add=pmf_ba,
        infinity_mass_add=inf_ba, symmetric=False)


def tight_epsilon(q: float, sigma: float, T: int, delta: float, a: float = 1.0, b: float = -1.0,
                  pessimistic: bool = True) -> float:
    """Our epsilon of the T-fold composition of the pair at delta: pessimistic (an upper bound) or optimistic (a lower
    bound) discretisation, see the module doc; the truth lies between the two."""
    return _tight_epsilon(q, sigma, T, delta, a, b, pessimistic)


@lru_cache(maxsize=1024)
def _tight_epsilon(q: float, sigma: float, T: int, delta: float, a: float, b: float, pessimistic: bool) -> float:
    """tight_epsilon, computed once per arguments in a process (a pure function of them: the PLD composition is the
    costliest accounting here, and sweeps and specs repeat it)."""
    return float(epsilon_for_delta(self_compose(one_round_pld(q, sigma, a, b, pessimistic), T), delta))


def labelled_tight_epsilon(q: float, sigma: float, T: int, delta: float, dist: float = 2.0) -> float:
    """The labelled pair's epsilon (the c -> infinity limit of the element pair): dp-accounting's Gaussian PLD
    mixed with the identity (weight 1 - q), composed T times."""
    return _labelled_tight_epsilon(q, sigma, T, delta, dist)


@lru_cache(maxsize=256)
def _labelled_tight_epsilon(q: float, sigma: float, T: int, delta: float, dist: float) -> float:
    """labelled_tight_epsilon, computed once per arguments in a process (a sweep over K asks for it at every point)."""
    _check(q, sigma)
    g = pld_lib.from_gaussian_mechanism(sigma, sensitivity=dist, value_discretization_interval=VALUE_STEP)
    if q < 1:
        g = g.compute_mixture(pld_lib.identity(value_discretization_interval=VALUE_STEP), q)
    return float(epsilon_for_delta(self_compose(g, T), delta))


# ---------------------------------------------------------------------------------------------------------------------
# Eq. (16) and the approximation of Cor 2.5


def eq16(T: int, q: float, sigma: float, n: int, delta: float) -> float:
    """Eq. (16)'s middle expression (L335): inf over alpha in (0, sigma^2 log(n/m)] of
    T q^2/sigma^2 + T q^2 alpha/sigma^2 + log(1/delta)/alpha, with m = q n (closed form: the unconstrained minimiser
    sqrt(log(1/delta) sigma^2 / (T q^2)), clipped to the range)."""
    L = math.log(1 / delta)
    top = sigma**2 * math.log(1 / q)           # sigma^2 log(n/m), m = q n
    if top <= 0:
        return math.inf
    al = min(math.sqrt(L * sigma**2 / (T * q**2)), top)
    return T * q**2 / sigma**2 + T * q**2 * al / sigma**2 + L / al


def eq16_closed(T: int, q: float, sigma: float, n: int, delta: float) -> tuple[float, float]:
    """Eq. (16)'s right side without its O(1): (T m^2/(n^2 sigma^2), max{sqrt(T m^2/(n^2 sigma^2) log(1/delta)),
    log(1/delta) / (sigma^2 log(n/m))})."""
    lead = T * q**2 / sigma**2
    return lead, max(math.sqrt(lead * math.log(1 / delta)), math.log(1 / delta) / (sigma**2 * math.log(1 / q)))


def approximation_lead(q: float, sigma: float, alpha: float) -> float:
    """Cor 2.5's stated approximation (L144): q^2 alpha / ((1 - q) sigma^2)."""
    return q**2 * alpha / ((1 - q) * sigma**2)


def approximation_limit(sigma: float, alpha: float) -> float:
    """lim_{q -> 0} eps_alpha(q, sigma) / q^2 = (alpha / 2) chi^2 / q^2 = 2 alpha sinh(1 / sigma^2) (derived:
    chi^2(P_1 mix || P_-1 mix) = q^2 int (phi_1 - phi_-1)^2 / phi_0 = 2 q^2 (e^{1/sigma^2} - e^{-1/sigma^2}))."""
    return 2 * alpha * math.sinh(1 / sigma**2)


def approximation_range(q: float, sigma: float) -> float:
    """The largest alpha of the approximation's range, sigma^2 log(1/(q sigma)) (L146)."""
    return sigma**2 * math.log(1 / (q * sigma)) if q * sigma < 1 else 0.0


# ---------------------------------------------------------------------------------------------------------------------
# Cor 2.4: exact amplification of a pure eps-DP base mechanism under the element relation


def _rr_laws(eps: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    """Randomized response on each of K element bits, reported per output class (first bit f, ones among the other
    K-1 bits j): log-probabilities for the users 1^K (changed user, D), 0 1^{K-1} (changed user, D') and 0^K (others).
    The multiplicity C(K-1, j) is common to all three and cancels in every ratio."""
    p = math.exp(eps) / (1 + math.exp(eps))
    lp, lq = math.log(p), math.log1p(-p)
    j = np.arange(K)
    f = np.array([1, 0])[:, None]
    # log Pr[output (f, j)] for a user whose first bit is x1 and whose other bits are all y
    def law(x1: int, y: int) -> np.ndarray:
        first = np.where(f == x1, lp, lq)
        rest = j * (lp if y == 1 else lq) + (K - 1 - j) * (lq if y == 1 else lp)
        return first + rest[None, :]
    return np.stack([law(1, 1), law(0, 1), law(0, 0)]), j


def amplification_exact(eps: float, K: int, q: float) -> float:
    """The exact epsilon (delta = 0) of RR_eps on each of K element bits after user subsampling, for the element pair
    1^K vs 0 1^{K-1} (one element changed), sampled m = 1 of n = 1/q users without replacement with all others at
    0^K: the laws are q A + (1-q) C vs q B + (1-q) C with C the law of an all-zero user (Poisson sampling of one
    user is ``amplification_poisson_single``); the enumeration is exact."""
    laws, _ = _rr_laws(eps, K)
    A, B, C = np.exp(laws[0]), np.exp(laws[1]), np.exp(laws[2])
    return float(np.max(np.abs(np.log(q * A + (1 - q) * C) - np.log(q * B + (1 - q) * C))))


def amplification_poisson_single(eps: float, K: int, q: float) -> float:
    """Poisson sampling, n = 1: an empty sample releases a fixed symbol (C disjoint from A and B): exact epsilon
    max_o log(A/B): eps whatever q (no amplification)."""
    laws, _ = _rr_laws(eps, K)
    return float(np.max(np.abs(laws[0] - laws[1])))


def amplification_claim(eps: float, q: float) -> float:
    """Cor 2.4 (L129-130): log(1 + q (e^eps - 1)) (q = m/n for sampling without replacement); delta = 0 here."""
    return math.log1p(q * math.expm1(eps))
