"""The shuffle-model summation protocols of seed 000 (Cheu, Joseph, Mao & Peng, "Shuffle Private Stochastic Convex
Optimization"): P_1D (Algorithm 1, L105-128) for scalars in [0, Delta] and P_VEC (Algorithm 2, L142-149) for vectors
of norm <= Delta_2. Lnnn = line of ../shared/seeds/000_2468e2e5d70af056.txt.

P_1D: user i rounds x_i g / Delta to xhat_i in {0..g} without bias (floor plus a Bernoulli of the fractional part),
adds eta_i ~ Bin(b, p) and sends xhat_i + eta_i one-bits and g + b - (xhat_i + eta_i) zero-bits; the analyzer
outputs (Delta/g)(number of one-bits - p b n). The shuffler lets through only the multiset of bits, i.e. the count
    Z = sum_i xhat_i + Bin(n b, p)
(the proof of Lemma A.2, L376): that count is what we sample, with the rounding done user by user and the privacy
noise as ONE binomial draw with n b trials, so a call costs O(n) draws whatever b is (b can be 10^7 - 10^9). The
bit-level simulation (``p1d_bits``, every user's g + b bits) is there to test that both have the same distribution.

P_VEC: w_ij = x_ij + Delta_2 in [0, 2 Delta_2] (line 4; the OCR's "(Delta_2, ..., Delta_2)" is the scalar shift of
coordinate j), P_1D on every coordinate with Delta = 2 Delta_2 (messages labelled by j), re-centred by n Delta_2.

Parameters (Lemma 3.1, L130; Thm 3.2 / A.6's proof, L477, L490): g >= Delta sqrt(n) (P_VEC: g = max(2 Delta_2 sqrt n,
sqrt d, 4)), b > 180 g^2 ln(2/delta)/(eps^2 n), p = 90 g^2 ln(2/delta)/(b eps^2 n); for P_VEC, Lemma 3.1 is applied
per coordinate at eps_hat = eps / (18 sqrt(log(1/gamma))) and delta_hat = gamma = delta/(d+1). g and b are integers:
we take the smallest ones the inequalities allow (our choice; the paper only bounds them).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms import kernels


@dataclass(frozen=True)
class P1DParams:
    """One P_1D instance: grid g, binomial trials b and probability p per user, input range [0, Delta]."""

    g: int
    b: int
    p: float
    Delta: float

    def __post_init__(self):
        if not (self.g >= 1 and self.b >= 1 and 0 < self.p < 0.5 and self.Delta > 0):
            raise ValueError(f"P_1D needs g, b >= 1, 0 < p < 1/2 and Delta > 0 (got {self})")


def lemma31(*, n: int, eps: float, delta: float, Delta: float, g: int | None = None) -> P1DParams:
    """Lemma 3.1's parameters (L130): g = ceil(Delta sqrt n) unless given (it must be >= Delta sqrt n), the smallest
    integer b > 180 g^2 ln(2/delta)/(eps^2 n), and p = 90 g^2 ln(2/delta)/(b eps^2 n) (< 1/2 by the choice of b)."""
    if g is None:
        g = max(1, math.ceil(Delta * math.sqrt(n) - 1e-12))
    if g < Delta * math.sqrt(n) * (1 - 1e-12):
        raise ValueError(f"Lemma 3.1 needs g >= Delta sqrt(n) = {Delta * math.sqrt(n):.6g} (g = {g})")
    b_min = 180 * g * g * math.log(2 / delta) / (eps * eps * n)
    b = math.floor(b_min) + 1
    p = 90 * g * g * math.log(2 / delta) / (b * eps * eps * n)
    return P1DParams(g=g, b=b, p=p, Delta=Delta)


@dataclass(frozen=True)
class PVecParams:
    one_d: P1DParams           # the P_1D run on every coordinate (Delta = 2 Delta_2)
    Delta2: float
    eps_hat: float
    delta_hat: float
    eps: float | None = None   # the (eps, delta) Thm 3.2 calibrated the call for (None: built by hand)
    delta: float | None = None
    calibrated_by: str | None = None   # not Thm 3.2's: the accountant whose smallest certified noise this is
    calibrated_calls: int = 1          # the calls one user joins that calibration composed (P_GD's accountant: T)


def thm32(*, n: int, d: int, eps: float, delta: float, Delta2: float) -> PVecParams:
    """Thm 3.2 / A.6's parameters (L477, L490): g = ceil(max(2 Delta_2 sqrt n, sqrt d, 4)), gamma = delta_hat =
    delta/(d+1), eps_hat = eps/(18 sqrt(ln(1/gamma))), and Lemma 3.1 at (eps_hat, delta_hat, Delta = 2 Delta_2)."""
    g = math.ceil(max(2 * Delta2 * math.sqrt(n), math.sqrt(d), 4) - 1e-12)
    delta_hat = delta / (d + 1)
    eps_hat = eps / (18 * math.sqrt(math.log(1 / delta_hat)))
    return PVecParams(lemma31(n=n, eps=eps_hat, delta=delta_hat, Delta=2 * Delta2, g=g), Delta2, eps_hat, delta_hat,
                      eps, delta)


def _round(x: np.ndarray, prm: P1DParams, rng: np.random.Generator) -> np.ndarray:
    """Unbiased randomized rounding of x in [0, Delta] to the grid {0..g} (lines 3-5), elementwise."""
    if x.size and (x.min() < -1e-12 * prm.Delta or x.max() > prm.Delta * (1 + 1e-12)):
        raise ValueError(f"P_1D inputs must lie in [0, Delta = {prm.Delta:g}] (got {x.min():.6g} .. {x.max():.6g})")
    scaled = np.clip(x, 0.0, prm.Delta) * (prm.g / prm.Delta)
    low = np.floor(scaled)
    return low + (rng.random(x.shape) < scaled - low)


def p1d_count(x: np.ndarray, prm: P1DParams, rng: np.random.Generator) -> np.ndarray:
    """The analyzer's view of P_1D, the number of one-bits, for inputs x (..., n): (...). Exact in distribution."""
    n = x.shape[-1]
    return _rounded_sum(x[..., None], 0.0, prm, rng)[..., 0] + _noise(n, prm, x.shape[:-1], rng)


def _noise(n: int, prm: P1DParams, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """The n users' privacy noise together, sum_i eta2_i ~ Bin(n b, p) (line 6): one draw per count."""
    return rng.binomial(n * prm.b, prm.p, size=shape)


def noise_z(n: int, prm: P1DParams, draws: int, rng: np.random.Generator) -> tuple[float, float]:
    """The privacy noise alone, ``draws`` times: (z of its total against n b p with the exact variance, the bias
    in counts (grid steps) the test resolves at z = 1). Standard normal when the noise has the declared mean."""
    m = n * prm.b
    var = m * prm.p * (1 - prm.p)
    total = float(np.sum(_noise(n, prm, (draws,), rng) - m * prm.p))
    return total / math.sqrt(var * draws), math.sqrt(var / draws)


def p1d_bits(x: np.ndarray, prm: P1DParams, rng: np.random.Generator) -> np.ndarray:
    """The same count from every user's g + b bits, as the protocol sends them (small b only: for tests)."""
    xhat = _round(x, prm, rng)
    noise = (rng.random(x.shape + (prm.b,)) < prm.p).sum(axis=-1)
    ones = xhat + noise
    bits = np.arange(prm.g + prm.b) < ones[..., None]      # each user's message: ones, then zeros
    return bits.sum(axis=(-1, -2))


def p1d_estimate(count: np.ndarray, n: int, prm: P1DParams) -> np.ndarray:
    """A_1D (line 10): (Delta/g)(count - p b n)."""
    return prm.Delta / prm.g * (count - prm.p * prm.b * n)


def expected_count(x: np.ndarray, prm: P1DParams) -> np.ndarray:
    """E[count] for inputs x (..., n): sum_i x_i g/Delta + n b p (unbiased rounding, binomial mean)."""
    return x.sum(axis=-1) * (prm.g / prm.Delta) + x.shape[-1] * prm.b * prm.p


def pvec_analyzer(counts: np.ndarray, n: int, prm: PVecParams) -> np.ndarray:
    """A_VEC (lines 9-14): every coordinate's A_1D, re-centred by n Delta_2."""
    return p1d_estimate(counts, n, prm.one_d) - n * prm.Delta2


def p1d(x: np.ndarray, prm: P1DParams, rng: np.random.Generator) -> np.ndarray:
    return p1d_estimate(p1d_count(x, prm, rng), x.shape[-1], prm)


def pvec(x: np.ndarray, prm: PVecParams, rng: np.random.Generator) -> np.ndarray:
    """P_VEC on the vectors x (..., n, d), each of norm <= Delta_2: the estimate of their sum, (..., d)."""
    n, d = x.shape[-2], x.shape[-1]
    lead = x.shape[:-2]
    counts = _rounded_sum(x, prm.Delta2, prm.one_d, rng, max_norm=prm.Delta2)
    return pvec_analyzer(counts + _noise(n, prm.one_d, lead + (d,), rng), n, prm)


def _rounded_sum(x: np.ndarray, shift: float, prm: P1DParams, rng: np.random.Generator,
                 max_norm: float = math.inf) -> np.ndarray:
    """P_1D's rounding (lines 3-5) of every coordinate's shifted inputs x_ij + shift, summed over the n users: x
    (..., n, d) -> (..., d) (P_1D: d = 1, shift 0). The uniforms are drawn as for the transposed inputs, (..., d, n),
    and one fused pass over x rounds and sums (algorithms/kernels.round_counts): the same counts, bit for bit, as
    numpy's elementwise ``_round`` on the transposed shifted inputs summed over the users, without its five
    temporaries (tests/test_shuffle_sum.py compares the two). Every P_1D and P_VEC call and ``rounding_z`` round
    through it. ``max_norm``: P_VEC's guard, every user's vector x_i of norm at most max_norm (1 + 1e-12) (checked in
    the same pass). Inputs are taken as float64 (every caller's)."""
    n, d = x.shape[-2], x.shape[-1]
    lead = x.shape[:-2]
    cells = math.prod(lead)
    U = rng.random(lead + (d, n))
    counts, code = kernels.round_counts(x.reshape((cells, n, d)), U.reshape((cells, d, n)), shift, prm.Delta,
                                        prm.g / prm.Delta, -1e-12 * prm.Delta, prm.Delta * (1 + 1e-12),
                                        (max_norm * (1 + 1e-12)) ** 2)
    if code == 2:
        big = float(np.sqrt(np.nanmax(np.einsum("...d,...d->...", x, x))))
        raise ValueError(f"P_VEC inputs must have norm <= Delta_2 = {max_norm:g} (max {big:.6g}): clip first")
    if code == 1:
        w = x + shift
        raise ValueError(f"P_1D inputs must lie in [0, Delta = {prm.Delta:g}] (got {np.nanmin(w):.6g} .. "
                         f"{np.nanmax(w):.6g})")
    return counts.reshape(lead + (d,))


def rounding_z(x: np.ndarray, prm: P1DParams, draws: int, rng: np.random.Generator) -> tuple[float, float]:
    """The randomized rounding alone (lines 3-5), ``draws`` times on the inputs x (..., n): (z of the total of
    xhat - x g/Delta against its exact variance sum q(1 - q), standard normal when the rounding is unbiased; the
    bias per count, in grid steps, the test resolves at z = 1)."""
    c = np.clip(x, 0.0, prm.Delta) * (prm.g / prm.Delta)
    q = c - np.floor(c)
    var = float(np.sum(q * (1 - q))) * draws
    csum = c.sum(axis=-1)                                       # each count's expected rounded sum
    per = max(1, 2_000_000 // max(x.size, 1))                   # draws per chunk
    total, done = 0.0, 0
    while done < draws:
        k = min(per, draws - done)
        total += float((_rounded_sum(np.broadcast_to(x, (k,) + x.shape)[..., None], 0.0, prm, rng)[..., 0]
                        - csum).sum())
        done += k
    if var <= 0:                                                # grid-aligned inputs: nothing to test
        return math.nan, math.inf
    counts = draws * int(np.prod(x.shape[:-1], dtype=np.int64))   # one total per count per draw
    return total / math.sqrt(var), math.sqrt(var) / counts


def p1d_variance(x: np.ndarray, prm: P1DParams) -> np.ndarray:
    """The exact variance of P_1D's estimate for inputs x (..., n), one per leading cell:
    (Delta/g)^2 [sum q_i(1 - q_i) + n b p(1 - p)] with q_i the fractional part of x_i g/Delta (the variance line of
    Lemma A.2's proof, L404-412, before its bounds)."""
    scaled = np.asarray(x, dtype=np.float64) * prm.g / prm.Delta
    q = scaled - np.floor(scaled)
    n = scaled.shape[-1]
    return (prm.Delta / prm.g) ** 2 * (np.sum(q * (1 - q), axis=-1) + n * prm.b * prm.p * (1 - prm.p))


def p1d_variance_bound(n: int, prm: P1DParams) -> float:
    """Lemma A.2's explicit bound (L412): (Delta/g)^2 (n/4 + b n p)."""
    return (prm.Delta / prm.g) ** 2 * (n / 4 + prm.b * n * prm.p)


def pvec_mse_bound(n: int, d: int, pv: PVecParams) -> float:
    """P_VEC's explicit MSE bound on n users: d times P_1D's at Delta = 2 Delta_2, d (2 Delta_2/g)^2 (n/4 + b n p)
    (Lemma A.2's proof, L404-412, summed over the coordinates)."""
    prm = pv.one_d
    return d * (prm.Delta / prm.g) ** 2 * (n / 4 + prm.b * n * prm.p)
