"""DaRRM sampled, as it runs (seed 003, chapter 3, Algorithm 1, L865-880; Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt): each of the K mechanisms draws its bit S_i ~ Bernoulli(p_i) independently,
L = sum_i S_i, then with probability gamma(L) the output is the majority 1{L >= (K+1)/2}, otherwise a fair coin.

Nothing here uses the Poisson-binomial law of L or the output law of algorithms/darrm.py: the bits, the count, the
gamma coin and the fair coin are each drawn, so the counts this module returns are an independent view of the exact
computation (the audit and the utility simulation of catalog/darrm_sampled_003.py compare the two). Vectorised in
chunks of ``CHUNK`` runs (a (CHUNK, K) array of uniforms per chunk); every number comes from the ``rng`` handed in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

CHUNK = 200_000          # runs drawn at once (memory: CHUNK x K float64 uniforms)


@dataclass(frozen=True)
class Tally:
    """What n runs of DaRRM produced: how often it output 1, and the sums of D = g(S) - out (the true majority minus
    the output, in {-1, 0, 1}) and of D^2, from which the error's mean and variance follow."""

    n: int
    ones: int
    diff_sum: int
    diff_sq: int


def coin(u: np.ndarray) -> np.ndarray:
    """The fair coin of Algorithm 1 (line 10), from uniforms: 1 w.p. 1/2."""
    return u < 0.5


def _runs(p: np.ndarray, gamma: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One chunk: rows of ``p`` are the runs' (p_1, .., p_K). Returns (output bits, true majority bits)."""
    K = p.shape[1]
    S = rng.random(p.shape) < p                        # each mechanism's bit
    L = S.sum(axis=1)                                  # the vote count
    maj = 2 * L >= K + 1                               # g(S) = 1{L >= (K+1)/2}
    keep = rng.random(L.size) < gamma[L]               # w.p. gamma(L) the majority ...
    out = np.where(keep, maj, coin(rng.random(L.size)))    # ... else a fair coin
    return out, maj


def tally(draw_p: Callable[[np.random.Generator, int], np.ndarray], gamma: np.ndarray, n: int,
          rng: np.random.Generator) -> Tally:
    """n runs of DaRRM_gamma, the mechanisms' probabilities of each run from ``draw_p(rng, runs) -> (runs, K)`` (a
    fixed configuration repeated, or p drawn afresh from a prior)."""
    g = np.asarray(gamma, dtype=np.float64)
    ones = dsum = dsq = 0
    done = 0
    while done < n:
        c = min(CHUNK, n - done)
        out, maj = _runs(draw_p(rng, c), g, rng)
        d = maj.astype(np.int64) - out.astype(np.int64)
        ones += int(out.sum())
        dsum += int(d.sum())
        dsq += int((d * d).sum())
        done += c
    return Tally(n, ones, dsum, dsq)


def fixed(p: np.ndarray) -> Callable[[np.random.Generator, int], np.ndarray]:
    """Every run at the same configuration p (shape (K,))."""
    row = np.asarray(p, dtype=np.float64)[None, :]
    return lambda rng, c: np.broadcast_to(row, (c, row.shape[1]))


def uniform_prior(K: int, lo: float, hi: float) -> Callable[[np.random.Generator, int], np.ndarray]:
    """Each run draws p_i i.i.d. uniform on [lo, hi] (the chapter's priors, B.61-B.62, L3404, L3580)."""
    return lambda rng, c: lo + (hi - lo) * rng.random((c, K))
