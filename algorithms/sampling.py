"""Which records and silos take part in a round; randomness only through an explicit Generator."""
from __future__ import annotations

import numpy as np

from algorithms import kernels


def k_subsets(rng: np.random.Generator, shape: tuple[int, ...], n: int, K: int) -> np.ndarray:
    """Uniform K-subsets of {0..n-1}, independently for each cell of ``shape``: (*shape, K) int64.

    Small K: Floyd's algorithm (O(K^2) work per cell, no O(n) pass; a compiled loop, algorithms/kernels.py).
    Large K: the K smallest of n i.i.d. uniforms (argpartition), also an exact uniform subset.
    """
    return subsets_from_uniforms(rng.random(shape + (subset_uniforms(n, K),)), n, K)


def subset_uniforms(n: int, K: int) -> int:
    """How many uniforms ``k_subsets`` draws per cell: n keys (large K) or K, one per step of Floyd's algorithm."""
    if not 1 <= K <= n:
        raise ValueError(f"batch size K={K} must be in [1, n={n}]")
    return n if K * K > n else K


def subsets_from_uniforms(u: np.ndarray, n: int, K: int) -> np.ndarray:
    """``k_subsets``' subsets from its uniforms u (..., subset_uniforms(n, K)) already drawn: a caller that draws
    several rounds' uniforms at once gets the subsets each round's own draw would give."""
    if u.shape[-1] != subset_uniforms(n, K):
        raise ValueError(f"{u.shape[-1]} uniforms per cell, not the {subset_uniforms(n, K)} a {K}-subset of {n} takes")
    if K * K > n:
        return np.argpartition(u, K - 1, axis=-1)[..., :K].astype(np.int64)
    return kernels.floyd_subsets(u, n)      # one uniform per step j: floor(u (j + 1)) in {0..j}


def random_order(rng: np.random.Generator, shape: tuple[int, ...], n: int, *, fresh: bool = False) -> np.ndarray:
    """A uniformly random order of {0..n-1} per cell: (*shape, n) (the ranks of n i.i.d. uniforms).

    ``fresh``: the records are not drawn yet (algorithms.data.Records streams them, i.i.d., as they are first
    read, whatever their index), so an order of them is only a labelling: the identity order, after the same
    uniforms are drawn (every later draw of ``rng`` is unchanged), gives the run the same records and the same
    numbers, without sorting n keys per cell. The records' guard against a second read still sees every index."""
    keys = rng.random(shape + (n,))
    if fresh:
        return np.broadcast_to(np.arange(n, dtype=np.intp), keys.shape).copy()
    return np.argsort(keys, axis=-1)


def disjoint_batches(rng: np.random.Generator, shape: tuple[int, ...], n: int, K: int, R: int, *,
                     fresh: bool = False) -> np.ndarray:
    """R disjoint batches of K records per cell (one pass over a random order): (R, *shape, K). ``fresh``: as
    ``random_order``'s."""
    if R * K > n:
        raise ValueError(f"R*K = {R}*{K} exceeds n={n}: one-pass batches cannot be disjoint")
    order = random_order(rng, shape, n, fresh=fresh)[..., : R * K]
    return np.moveaxis(order.reshape(shape + (R, K)), -2, 0)


def participating(rng: np.random.Generator, trials: int, N: int, M: np.ndarray) -> np.ndarray:
    """Mask (trials, N) of the M_r silos available this round (a uniform M_r-subset per trial)."""
    keys = rng.random((trials, N))            # drawn even when every silo takes part: the streams stay aligned
    if (M >= N).all():
        return np.ones((trials, N), dtype=bool)
    ranks = np.argsort(np.argsort(keys, axis=1), axis=1)
    return ranks < M[:, None]


def participation_sizes(rng: np.random.Generator, trials: int, N: int, low: int, high: int) -> np.ndarray:
    """M_r for each trial: fixed when low == high, else uniform on {low..high} (Assumption 1.4 of seed 004)."""
    if low == high:
        return np.full(trials, low, dtype=np.int64)
    return rng.integers(low, high + 1, size=trials)
