"""Mechanisms and the projection, as small pure functions."""
from __future__ import annotations

import numpy as np


def gaussian(clean: np.ndarray, sigma: float, *, rng: np.random.Generator) -> np.ndarray:
    """The Gaussian mechanism: clean + N(0, sigma^2 I), elementwise independent."""
    return clean + sigma * rng.standard_normal(clean.shape)


def project_ball(w: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection of the rows of w onto the ball {||w|| <= radius} around 0."""
    norm = np.linalg.norm(w, axis=-1, keepdims=True)
    return w * np.minimum(1.0, radius / np.maximum(norm, 1e-300))
