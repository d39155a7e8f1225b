"""Synthetic federated binary classification: silo i holds records (x, y) with x uniform on the sphere of
radius r in R^d and y in {-1, +1}, P(y = +1 | x) = 1 / (1 + exp(-<w*_i, x>)) (a logistic model).

Used with the logistic loss (smooth) or the hinge loss (non-smooth, through its Moreau envelope). The
population risk has no closed form: the engine estimates it on a large independent evaluation sample
(``algorithms.risk.MonteCarloRisk``). Heterogeneity as in ``data.SphereLinear``: w*_i = c + h ||c|| e_i.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algorithms.data import silo_dots, sq_norms


@dataclass(frozen=True)
class SphereClassification:
    d: int
    N: int
    radius: float
    w_star: np.ndarray          # (N, d)

    y_max = 1.0

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """shape = (..., N, m) -> X (..., N, m, d), y (..., N, m) in {-1, +1}."""
        if shape[-2] != self.N:
            raise ValueError(f"sample shape {shape} must have N={self.N} silos on axis -2")
        X = rng.standard_normal(shape + (self.d,))
        X *= self.radius / np.sqrt(sq_norms(X))[..., None]
        z = silo_dots(X, self.w_star)
        y = np.where(rng.random(shape) < 1.0 / (1.0 + np.exp(-z)), 1.0, -1.0)
        return X, y


def make_sphere_classification(rng: np.random.Generator, *, d: int, N: int, radius: float, w_norm: float,
                               heterogeneity: float) -> SphereClassification:
    c = rng.standard_normal(d)
    c *= w_norm / np.linalg.norm(c)
    e = rng.standard_normal((N, d))
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    return SphereClassification(d=d, N=N, radius=radius, w_star=c + heterogeneity * w_norm * e)
