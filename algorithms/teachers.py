"""Private label prediction from K teachers (seed 003, §3.7.2 of Jiang's thesis, PATE-style semi-supervised knowledge
transfer; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt): the data, the teachers and the two aggregators.
Pure numerics: every random draw comes from the generator passed in.

- Data (stand-ins for MNIST / Fashion-MNIST classes 5 vs 8, L1024-1026, which are not available offline):
  ``digits58``, scikit-learn's 8x8 digits 5 and 8 (356 images, pixels / 16, label 1 = an 8), split at random into
  train and test; ``mixture``, two Gaussian classes in d dimensions at MNIST 5-vs-8's sizes (11272 train, 1866 test).
  Each gets a constant feature (the bias).
- Teachers (L1026): K logistic regressions on equal disjoint shards of the training set, trained for ``steps`` steps
  either by DP-SGD (Abadi et al. [2]: Poisson sampling of each record with probability q, each example's gradient
  clipped to norm C, Gaussian noise of std sigma C on the sum, divided by the expected batch q n) or by the same SGD
  without clipping and noise (the non-private teachers GNMax aggregates). All K are trained at once (arrays
  (K, n, d)). Each returns its weights and what ran (the privacy event's parameters).
- Aggregators, per query: DaRRM_gamma (Algorithm 1, L865-880) on the private teachers' votes L (the number voting 1):
  with probability gamma(L) the majority, otherwise a fair coin; GNMax (L3610-3614): argmax of the non-private
  teachers' vote counts plus N(0, sigma^2) each. Both as a sampled output and as the exact probability of the true
  label given the votes (``*_accuracy``: the aggregator's coins integrated out).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import norm


@dataclass(frozen=True)
class Split:
    X_train: np.ndarray      # (n, d+1), last column 1
    y_train: np.ndarray      # (n,), 0/1
    X_test: np.ndarray
    y_test: np.ndarray


def _bias(X: np.ndarray) -> np.ndarray:
    return np.hstack([X, np.ones((X.shape[0], 1))])


def digits58(rng: np.random.Generator, train_fraction: float) -> Split:
    """scikit-learn's digits 5 and 8 (pixels / 16), split at random: the first ``train_fraction`` train."""
    from sklearn.datasets import load_digits  # imported here: only the packaged data sets need scikit-learn

    X, y = load_digits(return_X_y=True)
    keep = (y == 5) | (y == 8)
    X, lab = _bias(X[keep].astype(np.float64) / 16.0), (y[keep] == 8).astype(np.float64)
    p = rng.permutation(X.shape[0])
    k = int(train_fraction * X.shape[0])
    return Split(X[p[:k]], lab[p[:k]], X[p[k:]], lab[p[k:]])


def mixture(rng: np.random.Generator, n_train: int, n_test: int, d: int, separation: float) -> Split:
    """Two equally likely classes, x ~ N(+-(separation/2) e_1, I_d) / sqrt(d) (Bayes accuracy Phi(separation/2))."""
    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, 2, n).astype(np.float64)
        X = rng.standard_normal((n, d))
        X[:, 0] += np.where(y > 0, separation / 2, -separation / 2)
        return _bias(X / math.sqrt(d)), y
    a, b = draw(n_train)
    c, e = draw(n_test)
    return Split(a, b, c, e)


def shards(n: int, K: int, rng: np.random.Generator) -> np.ndarray:
    """(K, n // K) indices: equal disjoint shards of a random permutation (the n - K (n // K) left over unused)."""
    size = n // K
    if size < 1:
        raise ValueError(f"{n} training records cannot fill K = {K} shards")
    return rng.permutation(n)[: size * K].reshape(K, size)


@dataclass(frozen=True)
class Trained:
    weights: np.ndarray      # (K, d+1)
    q: float                 # Poisson sampling probability of each record in each step
    steps: int
    sigma: float             # noise multiplier (0: non-private)
    clip: float              # per-example clipping norm (inf: none)
    records: int             # records per shard
    max_batch: int           # the largest batch drawn (a record of what ran)


def train(X: np.ndarray, y: np.ndarray, *, q: float, steps: int, sigma: float, clip: float, lr: float,
          rng: np.random.Generator) -> Trained:
    """K logistic regressions at once (X (K, n, d), y (K, n)), from 0, ``steps`` steps of (DP-)SGD: each record enters
    a step's batch independently with probability q; the batch's gradients of the logistic loss, each clipped to
    norm ``clip`` (none when inf), summed, plus N(0, (sigma clip)^2 I) when sigma > 0, divided by q n."""
    K, n, d = X.shape
    w = np.zeros((K, d))
    xnorm = np.linalg.norm(X, axis=2)
    most = 0
    for _ in range(steps):
        batch = rng.random((K, n)) < q
        most = max(most, int(batch.sum(axis=1).max()))
        r = (expit(np.einsum("knd,kd->kn", X, w)) - y) * batch        # the loss's derivative, 0 off the batch
        if math.isfinite(clip):
            r = r / np.maximum(1.0, np.abs(r) * xnorm / clip)            # ||r x|| = |r| ||x||: clip each example
        g = np.einsum("kn,knd->kd", r, X)
        if sigma > 0:
            g = g + sigma * clip * rng.standard_normal((K, d))
        w -= lr * g / (q * n)
    return Trained(w, q, steps, sigma, clip, n, most)


def votes(weights: np.ndarray, X: np.ndarray) -> np.ndarray:
    """(n_queries,) number of teachers voting 1 on each query."""
    return (X @ weights.T > 0).sum(axis=1)


def darrm_accuracy(L: np.ndarray, y: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Pr[DaRRM_gamma outputs y | L votes for 1]: gamma(L) 1{majority = y} + (1 - gamma(L)) / 2."""
    K = gamma.size - 1
    right = (L >= (K + 1) // 2) == (y > 0)
    return gamma[L] * right + (1 - gamma[L]) / 2


def darrm_sample(L: np.ndarray, gamma: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """DaRRM_gamma's outputs (Algorithm 1): the majority w.p. gamma(L), else a fair coin."""
    K = gamma.size - 1
    keep = rng.random(L.shape) < gamma[L]
    return np.where(keep, L >= (K + 1) // 2, rng.random(L.shape) < 0.5)


def gnmax_accuracy(n1: np.ndarray, K: int, y: np.ndarray, sigma: float) -> np.ndarray:
    """Pr[GNMax outputs y | n1 of K vote 1]: Pr[n_y + Z_y > n_other + Z_other] = Phi((n_y - n_other) / (sqrt2 sigma))."""
    gap = np.where(y > 0, 2 * n1 - K, K - 2 * n1)
    return norm.cdf(gap / (math.sqrt(2) * sigma))


def gnmax_sample(n1: np.ndarray, K: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """GNMax's outputs (L3612): argmax over the two classes of the count plus N(0, sigma^2) (ties have probability 0)."""
    z = sigma * rng.standard_normal((2,) + n1.shape)
    return n1 + z[1] > (K - n1) + z[0]
