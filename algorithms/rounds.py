"""The silos' side of a round, shared by Algorithms 1 and 2 of seed 004.

Each round: M_r silos become available (a uniform M_r-subset), each reads a batch of its own records,
computes the mean gradient at the server's query point and releases it through the Gaussian mechanism;
the server averages the M_r messages. ``SiloRounds`` does that for all trials and silos at once and
keeps the instrumentation the verifiers need: how often each silo released, the released noise (for
the chi-square test) and the gradient error at the query point (for Lemma E.3).
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from algorithms import kernels, mechanisms, sampling
from algorithms.data import Records


class SiloRounds:
    def __init__(self, records: Records, loss, *, sigma: float, M_range: tuple[int, int],
                 rng: np.random.Generator, grad_F: Callable[[np.ndarray], np.ndarray] | None = None):
        self.records, self.loss, self.sigma, self.M_range, self.rng = records, loss, sigma, M_range, rng
        self.grad_F = grad_F                               # the population gradient, when known exactly
        T, N = records.trials, records.N
        self.uses = np.zeros((T, N), dtype=np.int64)      # rounds each silo took part in
        self.noise_sq = np.zeros(T)                        # per trial: sum of squared released noise
        self.noise_coords = np.zeros(T, dtype=np.int64)    # per trial: how many noise values were released
        self.grad_err = np.zeros(T) if grad_F is not None else None

    def aggregate(self, query: np.ndarray, next_batch: Callable[[], np.ndarray]) -> np.ndarray:
        """One round at query points (T, d); ``next_batch()`` gives the (T, N, K) record indices.
        Returns the server's average of the released messages, (T, d)."""
        T, N = self.records.trials, self.records.N
        M = sampling.participation_sizes(self.rng, T, N, *self.M_range)
        mask = sampling.participating(self.rng, T, N, M)
        clean = self.records.batch_grad(next_batch(), self.loss, query)
        if _fused(clean, self.sigma):
            # the same draws and numbers as below (kernels.silo_release): one pass for the messages, their noise, its
            # masked squares and their masked sum, instead of four numpy operations and a kernel
            noise, total, sq = kernels.silo_release(clean, self.rng.standard_normal(clean.shape), self.sigma,
                                                    mask.astype(np.float64))
            self.noise_sq += sq
            g = total / M[:, None]
        else:
            msg = mechanisms.gaussian(clean, self.sigma, rng=self.rng)
            noise = msg - clean
            self.noise_sq += kernels.masked_sq_sum(noise, mask.astype(np.float64))   # einsum("tnd,tnd,tn->t")
            g = (msg * mask[..., None]).sum(axis=1) / M[:, None]
        self.noise_coords += mask.sum(axis=1) * noise.shape[2]
        self.uses += mask
        if self.grad_err is not None and self.grad_F is not None:
            self.grad_err += grad_error(g, self.grad_F(query), noise, mask, M)
        return g

    def measured(self, rounds: int) -> dict[str, np.ndarray]:
        """Per-trial measurements of the rounds: the sampling part of the oracle's error (grad_error), averaged over
        the rounds, where the population gradient is known exactly."""
        return {} if self.grad_err is None else {"grad_sampling_variance": self.grad_err / max(rounds, 1)}


def grad_error(g: np.ndarray, grad_F: np.ndarray, noise: np.ndarray, mask: np.ndarray, M: np.ndarray) -> np.ndarray:
    """The sampling part of ||g - grad F||^2 per trial: ||g - grad F||^2 - ||u_bar||^2, where u_bar = (1/M_r)
    sum_{i in S_r} u_i is the Gaussian noise the silos actually added (a control variate). Its expectation is
    E||g_noiseless - grad F||^2, the sampling and silo terms of Lemma E.3, whatever the noise; the noise's own
    term d sigma^2/M is not added back (it is the noise_calibration check's to judge, from the released noise)."""
    ubar = (noise * mask[..., None]).sum(axis=1) / M[:, None]
    diff = g - grad_F
    return (diff * diff).sum(axis=1) - (ubar * ubar).sum(axis=1)


_GAUSSIAN = mechanisms.gaussian          # what the compiled release encodes, as this module found it


def _fused(clean: np.ndarray, sigma) -> bool:
    """Whether a round's releases go through ``kernels.silo_release``: d >= 2 (for d = 1 numpy's sum over the silos
    is pairwise, and the kernel saved nothing there), at most numpy's einsum buffer, a float64 (or narrower) scalar
    sigma, the Gaussian mechanism as loaded (a patched one, e.g. a planted fault, runs as written), and the
    self-check at this shape passed."""
    return (clean.ndim == 3 and 2 <= clean.shape[2] <= kernels.EINSUM_BUFFER and clean.size > 0
            and isinstance(sigma, (int, float, np.floating)) and np.asarray(sigma).itemsize <= 8
            and mechanisms.gaussian is _GAUSSIAN and release_agrees_with_numpy(clean.shape))


@functools.lru_cache(maxsize=256)
def release_agrees_with_numpy(shape: tuple[int, int, int]) -> bool:
    """``kernels.silo_release`` gives the numpy path's numbers bit for bit at this (trials, silos, d), once a process
    per shape: on values over about 29 binades, with silos masked out and (with two trials or more) a last trial of
    -0.0 messages (numpy's sum starts from +0.0), any other order of the sum over the silos shows. The squared sum's
    chunks are those of ``kernels.masked_sq_sum``, which the numpy path calls; tests/test_kernels.py pins both
    against einsum."""
    rng = np.random.default_rng(17)
    clean = rng.standard_normal(shape) * np.exp(rng.uniform(-10, 10, shape))
    Z = rng.standard_normal(shape)
    if shape[0] >= 2:
        clean[-1], Z[-1] = -0.0, -0.0
    mask = rng.random(shape[:2]) < 0.8
    mask[:, 0] = True
    maskf = mask.astype(np.float64)
    msg = clean + 0.7 * Z
    want = (msg - clean, (msg * mask[..., None]).sum(axis=1), kernels.masked_sq_sum(msg - clean, maskf))
    try:
        got = kernels.silo_release(clean, Z, 0.7, maskf)
    except Exception:
        return False
    return all(a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64)) for a, b in zip(got, want))
