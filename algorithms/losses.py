"""Per-record losses of a linear model, f(w, (x, y)) = phi(<w, x>, y) + (mu/2)||w||^2, vectorised over
trials and silos.

Every loss here depends on w only through the margin z = <w, x> (and, for the Moreau envelope, on
||x||^2), so one ``phi`` / ``dphi`` pair per loss gives its value and its gradient dphi * x + mu w.
Each loss also states its Lipschitz constant and smoothness on the domain ball of radius rho for
features of norm <= r (Assumption 1 of seed 004), which the calibrations use.
"""
from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import expit

from algorithms.registry import Registry


class LinearModelLoss(abc.ABC):
    """phi(z, y, xsq) with z = <w, x>, xsq = ||x||^2, plus the ridge term (mu/2)||w||^2. A loss defines
    ``phi`` and ``constants``; a differentiable one also ``dphi``, a non-smooth one ``envelope``."""

    name = "?"
    mu: float = 0.0
    smooth = True
    uses_xsq = False          # whether dphi reads ||x||^2 (else the gradient skips computing it)

    _kernel: tuple[int, float] | None = None     # (code, parameter) of dphi in algorithms/kernels.py
    _kernel_dphi: Callable | None = None          # the dphi that code encodes

    @property
    def kernel(self) -> tuple[int, float] | None:
        """(code, parameter) of this loss's derivative in algorithms/kernels.py, or None (numpy only). Only while
        the class's dphi is the very function the code encodes: a subclass or a patch that changes dphi (e.g. a
        planted fault) goes through numpy and is computed as written."""
        return self._kernel if type(self).dphi is type(self)._kernel_dphi else None

    @abc.abstractmethod
    def phi(self, z: np.ndarray, y: np.ndarray, xsq: np.ndarray) -> np.ndarray:
        """The loss of a record as a function of its margin z, label y and ||x||^2."""

    def dphi(self, z: np.ndarray, y: np.ndarray, xsq: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError(f"{self.name} is not differentiable: run on its Moreau envelope")

    @abc.abstractmethod
    def constants(self, *, r: float, rho: float, y_max: float) -> tuple[float, float]:
        """(L, beta) of f(., (x, y)) on ||w|| <= rho for ||x|| <= r and |y| <= y_max."""

    def envelope(self, beta_s: float) -> LinearModelLoss:
        """The loss the algorithms differentiate for a non-smooth loss (its Moreau envelope)."""
        raise NotImplementedError(f"{self.name} is smooth: it needs no envelope")

    # --- vectorised use by the algorithms and the measurements -------------------------------------
    def batch_grad(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Mean gradient over the batch: w (T, d), X (T, N, K, d), y (T, N, K) -> (T, N, d)."""
        z = np.einsum("tnkd,td->tnk", X, w)
        s = self.dphi(z, y, np.einsum("tnkd,tnkd->tnk", X, X) if self.uses_xsq else None)
        return np.einsum("tnk,tnkd->tnd", s, X) / X.shape[2] + self.mu * w[:, None, :]

    def record_grads(self, w: np.ndarray, X: np.ndarray, y: np.ndarray, xsq: np.ndarray | None = None) -> np.ndarray:
        """Every record's gradient: w (T, d), X (T, ..., d), y (T, ...) -> (T, ..., d). ``xsq``: the records'
        squared norms, when the caller already has them (records read in every round)."""
        z = np.einsum("t...d,td->t...", X, w)
        if xsq is None and self.uses_xsq:
            xsq = np.einsum("t...d,t...d->t...", X, X)
        return self.dphi(z, y, xsq)[..., None] * X + self.mu * w.reshape(w.shape[:1] + (1,) * (X.ndim - 2) + w.shape[1:])

    def value(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Mean loss over all records: w (T, d), X (T, N, m, d), y (T, N, m) -> (T,)."""
        z = np.einsum("tnmd,td->tnm", X, w)
        return self.phi(z, y, np.einsum("tnmd,tnmd->tnm", X, X)).mean(axis=(1, 2)) + 0.5 * self.mu * (w * w).sum(-1)

    def record_values(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Loss of every record of one shared data set: w (T, d), X (P, d), y (P,) -> (T, P)."""
        z = w @ X.T
        return self.phi(z, y[None, :], (X * X).sum(-1)[None, :]) + 0.5 * self.mu * (w * w).sum(-1)[:, None]

    def sup_on_ball(self, rho: float, X: np.ndarray, y: np.ndarray) -> float:
        """An upper bound on sup_{||w|| <= rho} of the mean loss over X (P, d), y (P,): phi is convex in the
        margin, so each record's worst case is at a margin of +-rho ||x||."""
        r = np.linalg.norm(X, axis=-1)
        worst = np.maximum(self.phi(rho * r, y, r * r), self.phi(-rho * r, y, r * r))
        return float(worst.mean()) + 0.5 * self.mu * rho**2

    def record_grad_mean(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Mean gradient over one shared data set: w (T, d), X (P, d), y (P,) -> (T, d)."""
        s = self.dphi(w @ X.T, y[None, :], (X * X).sum(-1)[None, :])
        return s @ X / X.shape[0] + self.mu * w


@dataclass(frozen=True)
class Squared(LinearModelLoss):
    """f = (1/2)(<w, x> - y)^2 + (mu/2)||w||^2 (mu > 0: per-sample mu-strong convexity)."""

    mu: float = 0.0
    name = "squared"
    _kernel = (0, 0.0)

    def phi(self, z, y, xsq):
        return 0.5 * (z - y) ** 2

    def dphi(self, z, y, xsq):
        return z - y

    _kernel_dphi = dphi

    def constants(self, *, r, rho, y_max):
        return r * (r * rho + y_max) + self.mu * rho, r**2 + self.mu


@dataclass(frozen=True)
class Logistic(LinearModelLoss):
    """f = ln(1 + exp(-y <w, x>)) + (mu/2)||w||^2 with y in {-1, +1}.
    |phi'| <= 1 and phi'' <= 1/4, so L = r + mu rho and beta = r^2/4 + mu (note 004 section 5.3)."""

    mu: float = 0.0
    name = "logistic"
    _kernel = (1, 0.0)

    def phi(self, z, y, xsq):
        return np.logaddexp(0.0, -y * z)

    def dphi(self, z, y, xsq):
        return -y * expit(-y * z)

    _kernel_dphi = dphi

    def constants(self, *, r, rho, y_max):
        return r + self.mu * rho, r**2 / 4 + self.mu


@dataclass(frozen=True)
class Hinge(LinearModelLoss):
    """f = max(0, 1 - y <w, x>) + (mu/2)||w||^2, y in {-1, +1}: convex, L = r + mu rho, not smooth."""

    mu: float = 0.0
    name = "hinge"
    smooth = False

    def phi(self, z, y, xsq):
        return np.maximum(0.0, 1.0 - y * z)

    def constants(self, *, r, rho, y_max):
        return r + self.mu * rho, math.inf

    def envelope(self, beta_s: float) -> MoreauHinge:
        return MoreauHinge(mu=self.mu, beta_s=beta_s)


@dataclass(frozen=True)
class MoreauHinge(LinearModelLoss):
    """The beta_s-Moreau envelope of the hinge part, h_b(w) = min_v {h(v) + (beta_s/2)||w - v||^2}
    (Lemma D.7 of seed 004, Nesterov 2005), plus the ridge term. With t = 1 - y <w, x> the minimiser is
    v = w + c y x with c = clip(beta_s t / ||x||^2, 0, 1) / beta_s, so in closed form (derived here):
        h_b = 0 (t <= 0);  beta_s t^2 / (2||x||^2) (0 < t < ||x||^2/beta_s);  t - ||x||^2/(2 beta_s) (else),
        grad h_b = -y x clip(beta_s t / ||x||^2, 0, 1).
    OUR READING: the seed takes the min over v in W; we take it over R^d, where the prox has this
    closed form. Since the hinge is L-Lipschitz on all of R^d, Lemma D.7's conclusions hold for this
    envelope (convex, beta_s-smooth, h_b <= h <= h_b + L^2/(2 beta_s)), and it is even L-Lipschitz (the
    lemma states 2L), so the noise calibrated with L stays valid."""

    mu: float = 0.0
    beta_s: float = 1.0
    name = "moreau_hinge"
    uses_xsq = True

    @property
    def kernel(self) -> tuple[int, float] | None:
        return (2, float(self.beta_s)) if type(self).dphi is MoreauHinge._kernel_dphi else None

    def phi(self, z, y, xsq):
        t = 1.0 - y * z
        c = np.clip(self.beta_s * t / xsq, 0.0, 1.0)
        return c * t - 0.5 * c * c * xsq / self.beta_s

    def dphi(self, z, y, xsq):
        return -y * np.clip(self.beta_s * (1.0 - y * z) / xsq, 0.0, 1.0)

    _kernel_dphi = dphi

    def constants(self, *, r, rho, y_max):
        return r + self.mu * rho, self.beta_s + self.mu


LOSSES: Registry[Callable[..., LinearModelLoss]] = Registry.of("loss", (("squared", Squared), ("logistic", Logistic),
                                                                        ("hinge", Hinge)))
