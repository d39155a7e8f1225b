"""eps0-LDP vector randomizers with a discrete output, as Algorithm 1 of seed 001 (CLDP-SGD) needs them:
(i) eps0-LDP, (ii) unbiased, (iii) a few bits of output, (iv) bounded variance (seed 001, L155).

``r_inf``: the one-coordinate randomizer for the l_inf ball [-C, C]^d, R_inf of Girgis, Data, Diggavi, Kairouz &
Suresh (AISTATS 2021, Sec. 5.2, Algorithm 2 and eq. (11); [27] in seed 001):
  1. pick a coordinate J uniformly from {1..d};
  2. round x_J / C in [-1, 1] to b in {-1, +1} without bias: P(b = +1) = (1 + x_J / C) / 2;
  3. binary randomized response: keep b with probability e^eps0 / (e^eps0 + 1), else flip it;
  4. the message is (J, b'); the server decodes it as s b' e_J with s = d C (e^eps0 + 1) / (e^eps0 - 1).
The message is one of 2d values (1 + log2 d bits). Unbiased: E[s b' e_J] = s (1/d) ((e^eps0 - 1)/(e^eps0 + 1))
x / C = x. Variance: E||s b' e_J - x||^2 = s^2 - ||x||^2 <= d^2 C^2 kappa, kappa = ((e^eps0 + 1)/(e^eps0 - 1))^2,
which is Remark 1's G_inf^2(C) (seed 001, L185). eps0-LDP: P(J = j, b' = s | x) = (1/d)(1/2 + s (x_j / C)
(2 p - 1)/2) with p = e^eps0/(e^eps0 + 1) is affine in x_j, so over the box its ratio is largest between
x_j = C and x_j = -C, where it is p / (1 - p) = e^eps0.

Everything is vectorised over leading axes (trials, clients); randomness only through the Generator passed in.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.registry import Registry


def keep_probability(eps0: float) -> float:
    """Binary randomized response: the probability of reporting the true bit, e^eps0 / (e^eps0 + 1)."""
    return 1.0 / (1.0 + math.exp(-eps0))


@dataclass(frozen=True)
class Messages:
    """What the clients of a round send: coordinate J and bit b' in {-1, +1}, arrays of the same shape."""

    coord: np.ndarray
    bit: np.ndarray


@dataclass(frozen=True)
class OneCoordinateRR:
    """R_inf: one coordinate, unbiased rounding, binary randomized response (module docstring)."""

    name: str = "r_inf"
    source: str = ("R_inf of Girgis, Data, Diggavi, Kairouz & Suresh, 'Shuffled model of differential privacy in "
                   "federated learning' (AISTATS 2021; [27] in seed 001): one uniformly chosen coordinate, unbiased "
                   "rounding to +-1, binary randomized response, scaled by d C (e^eps0 + 1)/(e^eps0 - 1)")
    norm: str = "l_inf"            # the ball its inputs must lie in (clipping norm of Algorithm 1)

    @staticmethod
    def scale(d: int, eps0: float, C: float) -> float:
        return d * C * (math.exp(eps0) + 1) / math.expm1(eps0)

    @staticmethod
    def variance_bound(d: int, eps0: float, C: float) -> float:
        """Remark 1 of seed 001 (L185): G_inf^2(C) = C^2 d^2 kappa."""
        return C**2 * d**2 * ((math.exp(eps0) + 1) / math.expm1(eps0)) ** 2

    def sample(self, x: np.ndarray, eps0: float, C: float, rng: np.random.Generator) -> Messages:
        """Randomize every row of x (..., d), each in [-C, C]^d (a row outside raises: clip first)."""
        d = x.shape[-1]
        if np.abs(x).max(initial=0.0) > C * (1 + 1e-12):
            raise ValueError(f"{self.name}: an input lies outside the l_inf ball of radius C = {C:g} "
                             f"(max |x_j| = {np.abs(x).max():.6g}): clip before randomizing")
        J = rng.integers(0, d, size=x.shape[:-1])
        xj = np.take_along_axis(x, J[..., None], axis=-1)[..., 0]
        u = rng.random(x.shape[:-1])
        v = rng.random(x.shape[:-1])
        b = np.where(u < 0.5 * (1 + xj / C), 1.0, -1.0)
        flip = v >= keep_probability(eps0)
        return Messages(J, np.where(flip, -b, b))

    def decode_sum(self, m: Messages, d: int, eps0: float, C: float) -> np.ndarray:
        """The sum of the decoded messages over the last axis (the clients of a round): (..., k) -> (..., d).
        It depends on the messages only through their multiset, which is all the shuffler lets through."""
        lead = m.coord.shape[:-1]
        cells = int(np.prod(lead, dtype=np.int64))
        flat = (np.arange(cells).reshape(lead + (1,)) * d + m.coord).ravel()
        counts = np.bincount(flat, weights=m.bit.ravel(), minlength=cells * d)
        return self.scale(d, eps0, C) * counts.reshape(lead + (d,))

    _kernel_sample = sample
    _kernel_decode_sum = decode_sum

    @property
    def fused(self) -> bool:
        """Whether CLDP-SGD may run its compiled rounds (``kernels.cldp_rounds``, which encode ``sample`` and
        ``decode_sum`` as written here): only while the class's methods are these very functions, so a subclass or
        a patch (e.g. a planted fault) runs through numpy and is computed as written."""
        return type(self).sample is OneCoordinateRR._kernel_sample and \
            type(self).decode_sum is OneCoordinateRR._kernel_decode_sum

    def probabilities(self, x: np.ndarray, eps0: float, C: float) -> np.ndarray:
        """The exact output distribution for inputs x (m, d): (m, 2d), column j = (J = j, b' = +1) and
        column d + j = (J = j, b' = -1)."""
        d = x.shape[-1]
        a = (2 * keep_probability(eps0) - 1) * (x / C)
        return np.concatenate([(0.5 + 0.5 * a) / d, (0.5 - 0.5 * a) / d], axis=-1)

    def values(self, d: int, eps0: float, C: float) -> np.ndarray:
        """The decoded value of every output (2d, d), in the column order of ``probabilities``."""
        s = self.scale(d, eps0, C)
        return np.concatenate([s * np.eye(d), -s * np.eye(d)])

    def extreme_inputs(self, d: int, C: float) -> np.ndarray:
        """Inputs where every output probability reaches its max and min over [-C, C]^d: each output's
        probability is affine in one coordinate, so the two corners C 1 and -C 1 suffice."""
        return np.stack([np.full(d, C), np.full(d, -C)])


RANDOMIZERS: Registry[OneCoordinateRR] = Registry("randomizer")
RANDOMIZERS.add("r_inf", OneCoordinateRR())


def clip_inf(g: np.ndarray, C: float) -> np.ndarray:
    """l_inf clipping of Algorithm 1 (seed 001, L110): g / max{1, ||g||_inf / C}, over the last axis."""
    return clip_inf_norms(g, C)[0]


def clip_inf_norms(g: np.ndarray, C: float) -> tuple[np.ndarray, np.ndarray]:
    """``clip_inf`` and the rows' l_inf norms before clipping (...), which CLDP-SGD also counts clipped rows by:
    one pass over g for both. When no row exceeds C the division by max{1, .} = 1 is the identity, bit for bit,
    and g itself is returned (not a copy: callers must not write into it)."""
    m = np.abs(g).max(axis=-1, keepdims=True)
    if (m <= C).all():                          # (a NaN row takes the division, as before)
        return g, m[..., 0]
    return g / np.maximum(1.0, m / C), m[..., 0]
