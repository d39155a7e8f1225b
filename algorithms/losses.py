"""Per-record losses, with the mean gradient over a silo's batch vectorised over trials and silos."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Squared:
    """f(w, (x, y)) = (1/2)(<w, x> - y)^2 + (mu/2)||w||^2 (mu > 0: per-sample mu-strong convexity)."""

    mu: float = 0.0

    def batch_grad(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Mean gradient over the batch: w (T, d), X (T, N, K, d), y (T, N, K) -> (T, N, d)."""
        resid = np.einsum("tnkd,td->tnk", X, w) - y
        g = np.einsum("tnk,tnkd->tnd", resid, X) / X.shape[2]
        return g + self.mu * w[:, None, :]

    def value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Mean loss over all records: w (T, d), X (T, N, m, d), y (T, N, m) -> (T,)."""
        resid = np.einsum("tnmd,td->tnm", X, w) - y
        return 0.5 * (resid**2).mean(axis=(1, 2)) + 0.5 * self.mu * (w * w).sum(axis=-1)
