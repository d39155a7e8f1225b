"""Synthetic federated data with a known population optimum.

``SphereLinear``: silo i holds records (x, y) with x uniform on the sphere of radius r in R^d and
y = <w*_i, x> + xi, xi ~ Uniform[-s, s]. With the squared loss plus an optional ridge term
(mu/2)||w||^2 every constant the theorems need has a closed form (derived here, not in the seeds;
see the note 004_isrl_dp_fl.md section 5.3):

    F_i(w) = r^2/(2d) ||w - w*_i||^2 + s^2/6 + (mu/2)||w||^2          (E <u,x>^2 = r^2 ||u||^2 / d)
    F(w) - F* = (r^2/d + mu)/2 * ||w - w_opt||^2,  w_opt = (r^2/d) wbar / (r^2/d + mu)
    phi^2 = (r^4/d)(1 - 1/d) max_i (D/2 + ||w*_i||)^2 + r^2 s^2 / 3   (within-silo gradient variance)
    v^2   = (r^2/d)^2 (1/N) sum_i ||w*_i - wbar||^2                   (heterogeneity, constant in w)

Heterogeneity: w*_i = c + h ||c|| e_i with e_i random unit vectors (h = 0: i.i.d. silos).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algorithms import kernels


@dataclass(frozen=True)
class SphereLinear:
    d: int
    N: int
    radius: float          # r: ||x|| = r
    label_noise: float     # s: |xi| <= s
    mu: float              # ridge (per-sample strong convexity)
    diameter: float        # D: the domain is the ball of radius D/2 around 0
    w_star: np.ndarray     # (N, d) silo optima of the unregularised squared loss

    # --- constants (Assumption 1 of seed 004) -------------------------------------------
    @property
    def w_bar(self) -> np.ndarray:
        return self.w_star.mean(axis=0)

    @property
    def curvature(self) -> float:
        return self.radius**2 / self.d + self.mu

    @property
    def y_max(self) -> float:
        return self.radius * float(np.linalg.norm(self.w_star, axis=1).max()) + self.label_noise

    @property
    def L(self) -> float:
        r, D = self.radius, self.diameter
        return r * (r * D / 2 + self.y_max) + self.mu * D / 2

    @property
    def beta(self) -> float:
        return self.radius**2 + self.mu

    @property
    def phi2(self) -> float:
        r, d = self.radius, self.d
        u = self.diameter / 2 + float(np.linalg.norm(self.w_star, axis=1).max())
        return r**4 / d * (1 - 1 / d) * u**2 + r**2 * self.label_noise**2 / 3

    @property
    def v2(self) -> float:
        dev = self.w_star - self.w_bar
        return (self.radius**2 / self.d) ** 2 * float((dev**2).sum(axis=1).mean())

    @property
    def w_opt(self) -> np.ndarray:
        return (self.radius**2 / self.d) * self.w_bar / self.curvature

    def constants(self) -> dict[str, float]:
        return {"L": self.L, "beta": self.beta, "mu": self.mu, "D": self.diameter,
                "phi2": self.phi2, "v2": self.v2, "Delta": float(self.excess_risk(np.zeros(self.d))),
                "risk_max": self.risk_max}

    @property
    def risk_max(self) -> float:
        """sup_{w in W} F(w) - F*: the excess risk no algorithm can exceed on the domain."""
        return 0.5 * self.curvature * (self.diameter / 2 + float(np.linalg.norm(self.w_opt))) ** 2

    # --- population quantities -----------------------------------------------------------
    def excess_risk(self, w: np.ndarray) -> np.ndarray:
        """F(w) - F*, exactly; w has shape (..., d)."""
        diff = w - self.w_opt
        return 0.5 * self.curvature * (diff * diff).sum(axis=-1)

    def grad_F(self, w: np.ndarray) -> np.ndarray:
        """Population gradient of F = (1/N) sum_i F_i at w (..., d)."""
        return (self.radius**2 / self.d) * (w - self.w_bar) + self.mu * w

    # --- sampling -------------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Records for silos along axis -1 of ``shape[:-1]``: shape = (..., N, m) -> X (..., N, m, d), y (..., N, m)."""
        if shape[-2] != self.N:
            raise ValueError(f"sample shape {shape} must have N={self.N} silos on axis -2")
        X = rng.standard_normal(shape + (self.d,))
        X *= self.radius / np.sqrt(sq_norms(X))[..., None]
        xi = rng.uniform(-self.label_noise, self.label_noise, size=shape)
        y = silo_dots(X, self.w_star) + xi
        return X, y

    def sample_grad(self, rng: np.random.Generator, shape: tuple[int, int, int], w: np.ndarray,
                    kernel: tuple[int, float], mu: float) -> np.ndarray:
        """``sample(rng, shape)``'s records (the same draws, in the same order), differentiated as they are made
        without being stored: each cell's mean gradient (T, N, d) at w (T, d) of the loss with this kernel code
        (algorithms/kernels.py)."""
        if shape[-2] != self.N:
            raise ValueError(f"sample shape {shape} must have N={self.N} silos on axis -2")
        G = rng.standard_normal(shape + (self.d,))
        U = rng.random(shape)                   # uniform(-s, s) is -s + 2s u of the same u (algorithms/streams.py)
        return kernels.sphere_linear_grad(G, U, self.w_star, float(self.radius), -float(self.label_noise),
                                          float(self.label_noise), w, kernel[0], kernel[1], mu)


def sq_norms(X: np.ndarray) -> np.ndarray:
    """Each record's squared norm, X (..., d) -> (...): ``einsum("...d,...d->...", X, X)``, whose value at d = 1 is
    its one product (0 + x x), computed without einsum's loop per record (about 10 ns a record)."""
    if X.shape[-1] == 1:
        return X[..., 0] * X[..., 0]
    return np.einsum("...d,...d->...", X, X)


def silo_dots(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """<x, w_i> for the records X (..., N, m, d) of silo i: ``einsum("...nmd,nd->...nm", X, w)``; at d = 1 its one
    product added to zero (0 + x w: a product -0 becomes +0 as einsum's sum makes it), without einsum's loop."""
    if X.shape[-1] == 1:
        return 0.0 + X[..., 0] * w[:, 0][:, None]
    return np.einsum("...nmd,nd->...nm", X, w)


def make_sphere_linear(rng: np.random.Generator, *, d: int, N: int, radius: float, label_noise: float,
                       w_norm: float, heterogeneity: float, mu: float, diameter: float) -> SphereLinear:
    c = rng.standard_normal(d)
    c *= w_norm / np.linalg.norm(c)
    e = rng.standard_normal((N, d))
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    w_star = c + heterogeneity * w_norm * e
    return SphereLinear(d=d, N=N, radius=radius, label_noise=label_noise, mu=mu,
                        diameter=diameter, w_star=w_star)


class Records:
    """The records the silos hold for a batch of trials: ``take(idx)`` gathers them by index. ``rng`` draws
    the records (a Generator-like object whose leading axis is the trial, e.g. algorithms.streams.TrialStreams).

    ``fixed``: one data set X (N, n, d), y (N, n) shared by every trial (ERM: only the algorithm's
    randomness varies). Otherwise each trial has its own data set drawn from ``population``:
    ``materialised``: all T x N x n records are drawn up front (needed when a record may be read
    twice, e.g. the multi-pass algorithms and the empirical risk). ``streaming``: records are drawn
    the first time their index is read, which is exact for i.i.d. data read at most once (the
    one-pass algorithm); a second read of the same index raises, since it would not reproduce the
    record, so the streaming store can never hide a reused record.
    """

    def __init__(self, population, rng, trials: int, n: int,
                 materialise: bool, fixed: tuple[np.ndarray, np.ndarray] | None = None):
        self.population, self.rng, self.trials, self.n = population, rng, trials, n
        self.fixed = fixed
        self.N, self.d = (fixed[0].shape[0], fixed[0].shape[2]) if fixed is not None else (population.N, population.d)
        self.materialised = materialise or fixed is not None
        if fixed is not None:
            if fixed[0].shape[1] != n:
                raise ValueError(f"fixed data set has {fixed[0].shape[1]} records per silo, not n = {n}")
        elif materialise:
            self.X, self.y = population.sample(rng, (trials, population.N, n))
        else:
            self._seen = np.zeros((trials, population.N, n), dtype=bool)

    @property
    def fresh(self) -> bool:
        """Whether the records are drawn as they are first read (streaming, i.i.d.): their order is then only a
        labelling, and a one-pass algorithm's random order of them may be the identity (algorithms/sampling.py)."""
        return not self.materialised

    def take(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """idx: (T, N, K) record indices per trial and silo -> X (T, N, K, d), y (T, N, K)."""
        if self.fixed is not None:
            return _gather(self.fixed[0][None], self.fixed[1][None], idx, shared=True)
        if self.materialised:
            return _gather(self.X, self.y, idx, shared=False)
        self._first_read(idx)
        return self.population.sample(self.rng, idx.shape)

    def batch_grad(self, idx: np.ndarray, loss, w: np.ndarray) -> np.ndarray:
        """The mean gradient of ``loss`` at w (T, d) over each cell's batch idx (T, N, K): (T, N, d), what
        ``loss.batch_grad(w, *self.take(idx))`` gives, fused into one pass over the records where the loss has a
        kernel (algorithms/kernels.py; streamed sphere records are then never stored)."""
        kern = loss.kernel
        if kern is None:
            return loss.batch_grad(w, *self.take(idx))
        code, p = kern
        w = np.ascontiguousarray(w, dtype=np.float64)
        if self.fixed is not None or self.materialised:
            X, y = self._flat_records()
            return kernels.gather_grad(X, y, _flat_index(idx, self.N, self.n, shared=self.fixed is not None), w,
                                       code, p, float(loss.mu))
        self._first_read(idx)
        if hasattr(self.population, "sample_grad"):
            return self.population.sample_grad(self.rng, idx.shape, w, kern, float(loss.mu))
        X, y = self.population.sample(self.rng, idx.shape)
        T, N, K = idx.shape
        flat = np.arange(T * N * K, dtype=np.int64).reshape(idx.shape)
        return kernels.gather_grad(np.ascontiguousarray(X, dtype=np.float64).reshape(-1, self.d),
                                   np.ascontiguousarray(y, dtype=np.float64).reshape(-1), flat, w, code, p,
                                   float(loss.mu))

    @property
    def held(self) -> bool:
        """Whether the records are held (fixed or materialised), not streamed: ``held_rows`` can then be read."""
        return self.fixed is not None or self.materialised

    def held_rows(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Held records as float64 rows X (P, d), labels y (P,), and the row number of every index of idx (T, N, K),
        what a compiled kernel reads them by (streamed records are read only through ``take``)."""
        if not self.held:
            raise RuntimeError("streamed records are read only through take()")
        X, y = self._flat_records()
        return X, y, _flat_index(idx, self.N, self.n, shared=self.fixed is not None)

    def _flat_records(self) -> tuple[np.ndarray, np.ndarray]:
        """The held records as float64 rows (P, d) and labels (P,), made once."""
        if getattr(self, "_rows", None) is None:
            X, y = self.fixed if self.fixed is not None else (self.X, self.y)
            self._rows = (np.ascontiguousarray(X, dtype=np.float64).reshape(-1, self.d),
                          np.ascontiguousarray(y, dtype=np.float64).reshape(-1))
        return self._rows

    def _first_read(self, idx: np.ndarray) -> None:
        """Mark streamed records read; a second read of one raises (it would not reproduce the record)."""
        if kernels.mark_read(self._seen, idx):
            raise RuntimeError("streaming records read twice: this algorithm must use materialised data")


def _flat_index(idx: np.ndarray, N: int, n: int, shared: bool) -> np.ndarray:
    """Row numbers in the flattened records (cells x n) of idx (T, N, K); ``shared``: one data set for all trials."""
    T = idx.shape[0]
    cell = np.arange(N)[None, :, None] if shared else (np.arange(T)[:, None, None] * N + np.arange(N)[None, :, None])
    return (cell * n + idx).astype(np.int64)


def _gather(X: np.ndarray, y: np.ndarray, idx: np.ndarray, shared: bool) -> tuple[np.ndarray, np.ndarray]:
    """X[t, s, idx[t, s]] for every trial t and silo s, as one row-take on the flattened records (several
    times faster than numpy's three-array fancy indexing). ``shared``: X has one data set (leading axis 1)."""
    T, N, K = idx.shape
    n, d = X.shape[2], X.shape[3]
    flat = _flat_index(idx, N, n, shared).ravel()
    return (np.take(X.reshape(-1, d), flat, axis=0).reshape(T, N, K, d),
            np.take(y.reshape(-1), flat).reshape(T, N, K))
