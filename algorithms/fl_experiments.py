"""Seed 004's experiments (Lowy & Razaviyayn, Sec. 6 and App. I): (ISRL-DP) MB-SGD and (ISRL-DP) Local SGD on fixed
silo data, as the appendix describes them, vectorised over configurations (step size x clip threshold x repetition).

- MB-SGD (Alg. 2 as run in App. I): every round r = 0..R-1 a uniform M-subset of the N silos takes part; each draws
  a uniform K-subset of its n training records (without replacement within the round, independently across rounds),
  sends the mean of the records' clipped gradients at w_r plus N(0, sigma^2 I_d); the server averages and steps,
  w_{r+1} = w_r - eta g_r (unconstrained, as in the experiments). Output w_R (App. I: "the corresponding w_R").
- Local SGD (App. I, L1491): each participating silo starts from w_r and takes K single-record steps
  w <- w - eta (clip(grad f(w, x)) + u), x uniform over its n records (with replacement across steps),
  u ~ N(0, sigma^2 I_d); it sends its K-th iterate and the server averages them.
sigma = 0 gives the non-private versions. Losses: the logistic loss with its margin clipped to [-15, 15] (App. I.1)
and the squared loss (y - <w, x>)^2 / 2 (App. I.2); gradients are clipped to l2 norm ``clip`` (inf: none).
Pure numerics: the calibration of sigma and K is the catalog's."""
from __future__ import annotations

import numpy as np

MARGIN_CLIP = 15.0          # App. I.1 (L1503): <w, x> projected onto [-15, 15] before the logistic loss


def gradients(task: str, w: np.ndarray, X: np.ndarray, y: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """Per-record gradients at w. w (C, d); X (C, N, k, d); y (C, N, k); clip (C,) (inf: no clipping).
    Returns (C, N, k, d)."""
    m = (X * w[:, None, None, :]).sum(axis=-1)            # elementwise: no BLAS threads on these small products
    if task == "logistic":
        # d/dm log(1 + exp(-y clip(m))) = -y sigmoid(-y m) inside the clip's range, 0 outside (the clip's flat part)
        inside = np.abs(m) <= MARGIN_CLIP
        coef = np.where(inside, -y * _sigmoid(-y * np.clip(m, -MARGIN_CLIP, MARGIN_CLIP)), 0.0)
    elif task == "squared":
        coef = m - y
    else:
        raise ValueError(f"unknown task {task!r}")
    g = coef[..., None] * X
    if np.all(np.isinf(clip)):
        return g
    norm = np.sqrt((g * g).sum(axis=-1, keepdims=True))
    return g * np.minimum(1.0, clip[:, None, None, None] / np.maximum(norm, 1e-300))


def loss(task: str, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mean loss of each model (rows of w, (C, d)) on the records X (m, d), y (m,)."""
    m = np.einsum("cd,md->cm", w, X)           # einsum without BLAS: no threads spinning on small products
    if task == "logistic":
        return np.logaddexp(0.0, -y[None, :] * np.clip(m, -MARGIN_CLIP, MARGIN_CLIP)).mean(axis=1)
    return 0.5 * ((m - y[None, :]) ** 2).mean(axis=1)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -z))


def _participants(rng: np.random.Generator, C: int, N: int, M: int) -> np.ndarray:
    """(C, N) boolean: a uniform M-subset of the N silos per configuration."""
    if M >= N:
        return np.ones((C, N), dtype=bool)
    order = np.argsort(rng.random((C, N)), axis=1)
    mask = np.zeros((C, N), dtype=bool)
    np.put_along_axis(mask, order[:, :M], True, axis=1)
    return mask


def mbsgd(task: str, X: np.ndarray, y: np.ndarray, *, R: int, K: int, M: int, sigma: np.ndarray, eta: np.ndarray,
          clip: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """MB-SGD for every configuration. X (N, n, d), y (N, n); sigma, eta, clip (C,). Returns (w_R (C, d), the
    released noise's sum of squares per configuration (C,), for the noise check)."""
    N, n, d = X.shape
    C = eta.size
    w = np.zeros((C, d))
    noise_sq = np.zeros(C)
    for _ in range(R):
        idx = np.argsort(rng.random((C, N, n)), axis=2)[:, :, :K]          # uniform K-subsets, per silo and config
        Xb = X[np.arange(N)[None, :, None], idx]                            # (C, N, K, d)
        yb = y[np.arange(N)[None, :, None], idx]
        g = gradients(task, w, Xb, yb, clip).mean(axis=2)                   # (C, N, d)
        u = rng.standard_normal((C, N, d)) * sigma[:, None, None]
        mask = _participants(rng, C, N, M)
        noise_sq += np.einsum("cnd,cnd,cn->c", u, u, mask.astype(float))
        msg = (g + u) * mask[..., None]
        w = w - eta[:, None] * msg.sum(axis=1) / M
    return w, noise_sq


def local_sgd(task: str, X: np.ndarray, y: np.ndarray, *, R: int, K: int, M: int, sigma: np.ndarray,
              eta: np.ndarray, clip: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Local SGD for every configuration (arguments as ``mbsgd``): K noisy single-record steps per silo and round.
    A round's record indices and noise are drawn at once (no noise drawn where every sigma is 0)."""
    N, n, d = X.shape
    C = eta.size
    w = np.zeros((C, d))
    noise_sq = np.zeros(C)
    noisy = bool(np.any(sigma > 0))
    silo = np.arange(N)[None, None, :]
    step = eta[:, None, None]
    clip_or_none = None if np.all(np.isinf(clip)) else clip[:, None, None]
    for _ in range(R):
        mask = _participants(rng, C, N, M)
        j = rng.integers(0, n, size=(K, C, N))
        u = rng.standard_normal((K, C, N, d)) * sigma[None, :, None, None] if noisy else None
        xs, ys = X[silo, j], y[silo, j]                                     # the round's records, (K, C, N, d)
        wl = np.repeat(w[:, None, :], N, axis=1)                            # (C, N, d): each silo's local iterate
        for t in range(K):
            g = _local_gradients(task, wl, xs[t], ys[t], clip_or_none)         # a fresh array: updated in place
            if u is not None:
                g += u[t]
            g *= step                                                       # eta g (the same product)
            wl -= g
        if u is not None:
            noise_sq += np.einsum("kcnd,kcnd,cn->c", u, u, mask.astype(float))
        w = (wl * mask[..., None]).sum(axis=1) / M
    return w, noise_sq


def _local_gradients(task: str, wl: np.ndarray, x: np.ndarray, y: np.ndarray, clip: np.ndarray | None) -> np.ndarray:
    """Gradients at each silo's own iterate wl (C, N, d) for one record per silo, x (C, N, d), y (C, N): (C, N, d).
    ``clip``: the thresholds shaped (C, 1, 1), or None where none clips (every threshold inf)."""
    m = (x * wl).sum(axis=-1)
    if task == "logistic":
        inside = np.abs(m) <= MARGIN_CLIP
        coef = np.where(inside, -y * _sigmoid(-y * np.clip(m, -MARGIN_CLIP, MARGIN_CLIP)), 0.0)
    else:
        coef = m - y
    g = coef[..., None] * x
    if clip is None:
        return g
    norm = np.sqrt((g * g).sum(axis=-1, keepdims=True))
    return g * np.minimum(1.0, clip / np.maximum(norm, 1e-300))
