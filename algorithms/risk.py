"""Excess risk measured on one data set (the population's large evaluation sample, or the ERM data
set itself) against the non-private optimum on the domain, found by ``optimum.ball_minimise``."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.losses import LinearModelLoss
from algorithms.optimum import Minimum, ball_minimise


@dataclass(frozen=True)
class DataSetRisk:
    """F_S(w) - min_W F_S for the mean loss F_S over the records S = (X (P, d), y (P,))."""

    loss: LinearModelLoss
    X: np.ndarray
    y: np.ndarray
    minimum: Minimum

    @classmethod
    def build(cls, loss, X: np.ndarray, y: np.ndarray, rho: float) -> DataSetRisk:
        return cls(loss, X, y, ball_minimise(loss, X, y, rho))

    def excess(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """w (T, d) -> (F_S(w) - F_S(w_opt), the Monte Carlo standard error of each value as an
        estimate of the population's F(w) - F(w_opt) when S is an i.i.d. evaluation sample)."""
        base = self.loss.record_values(self.minimum.w[None], self.X, self.y)[0]
        means, ses = np.empty(w.shape[0]), np.empty(w.shape[0])
        for i in range(w.shape[0]):
            # one trial at a time: a matrix product over several trials may round differently from one over
            # a single trial, and a trial's numbers must not depend on which trials share its batch
            diff = self.loss.record_values(w[i:i + 1], self.X, self.y)[0] - base
            means[i] = diff.mean()
            ses[i] = diff.std(ddof=1) / math.sqrt(diff.size)
        return means, ses

    def at_zero(self) -> float:
        """F_S(0) - F_S(w_opt) (Delta for the multi-stage schedules)."""
        return float(self.excess(np.zeros((1, self.X.shape[1])))[0][0])
