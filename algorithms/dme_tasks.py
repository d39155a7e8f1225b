"""Seed 003, chapter 2's distributed tasks (§2.5, Fig. 2.4 / 2.5; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt):
power iteration, k-means (Lloyd) and linear regression by gradient descent, where every round each of n clients
compresses its local vector with one of five codecs and the server decodes the mean. Pure numerics, no privacy.

The codecs work on a batch of m independent mean-estimation instances at once, X of shape (m, n, d) (m = 1 for power
iteration and regression, m = 10 centroids for k-means, each compressed separately, as L668 has each client send
its local centroids):
- ``rand_k``: k coordinates uniformly without replacement, decoded (1/n)(d/k) sum_i E_i^T E_i x_i (L531, Eq. 2.1).
- ``rand_k_spatial_avg``: the same encoding, decoded by Eq. 2.2 (L543) with L649's T(m) = 1 + (n/2)(m-1)/(n-1) and
  betabar exact (algorithms/dme.py ``spatial_beta``).
- ``rps_avg``: Rand-Proj-Spatial(Avg): SRHT G_i = E_i H D_i / sqrt d (Eq. 2.6, L583), decoded by Eq. 2.5 (L571) with
  the same T on the eigenvalues of S = sum_i G_i^T G_i (L649), through the SVD of the stacked G_i as in
  algorithms/dme.py; betabar by unbiasedness from independent draws (``rps_beta``), as L661 estimates it from the
  first iterations (it depends only on n, k, d and T, L661).
- ``rand_k_wangni`` and ``induced``: the seed does not define them. L653 names "non-uniform coordinate-wise gradient
  sparsification [135] (we call it Rand-k(Wangni))" and "the Induced compressor with Rand-k + Top-k [55]"; L491
  calls [135] "Rand-k with vector-based sampling probability", L2295-2299 "an adaptive estimator, which optimizes
  the sampling weights ... through an iterative process", L2340 "when k = 1, the Induced estimator is the same as
  Rand-k". What is implemented is OUR READING of the cited papers, not the seed's:
  Wangni et al. [135]: p_j = min(lambda |x_j|, 1) with sum_j p_j = k, found by their greedy rescaling (start at
  p_j = min(k |x_j| / ||x||_1, 1); rescale the unsaturated p_j by c = (k - d + |I|) / sum_{j in I} p_j until
  c <= 1), then coordinate j is sent as x_j / p_j with probability p_j (k coordinates in expectation, not exactly
  k); Horvath and Richtarik [55]: C(x) = Top-k1(x) + Rand-k2(x - Top-k1(x)) (Rand-k2 scaled d/k2, unbiased), with
  the split k1 = floor(k/2), k2 = k - k1 OUR CHOICE (it makes k = 1 plain Rand-k, as L2340 says). Both decode as
  the plain average of the clients' unbiased vectors. The checks leave them out of the orderings they decide.

Each encoder and decoder is timed by ``time.process_time`` (CPU seconds of this process, all its threads) around
its call for the whole batch; the encoders of the n clients run vectorised in one call. The server's copy of the
G_i (regenerated from shared seeds in practice, L684) is handed to the decoder, not rebuilt inside its timing.
"""
from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from typing import Any, Callable

import numpy as np

from algorithms import dme

CODECS = ("rand_k", "rand_k_spatial_avg", "rps_avg", "rand_k_wangni", "induced")
WANGNI_MAX_ITER = 100


def _subsets(rng: np.random.Generator, shape: tuple[int, ...], d: int, k: int) -> np.ndarray:
    """(*shape, k) indices, k distinct of d per row, uniformly."""
    return np.argsort(rng.random((*shape, d)), axis=-1)[..., :k]


def _scatter(idx: np.ndarray, vals: np.ndarray, d: int) -> np.ndarray:
    """sum over clients of the sparse vectors (idx, vals) of shape (m, n, k): (m, d)."""
    m = idx.shape[0]
    flat = (np.arange(m)[:, None, None] * d + idx).ravel()
    return np.bincount(flat, weights=vals.ravel(), minlength=m * d).reshape(m, d)


class Codec(ABC):
    """One compressor: ``encode(X, rng)`` the clients' messages for X (m, n, d); ``decode(msg)`` the server's (m, d)
    estimate of the mean over clients."""

    name = ""

    def __init__(self, n: int, d: int, k: int):
        self.n, self.d, self.k = n, d, k

    @abstractmethod
    def encode(self, X: np.ndarray, rng: np.random.Generator) -> Any:
        """The clients' messages."""

    @abstractmethod
    def decode(self, msg: Any) -> np.ndarray:
        """The server's estimate."""


class RandK(Codec):
    name = "rand_k"

    def encode(self, X, rng):
        idx = _subsets(rng, X.shape[:2], self.d, self.k)
        return idx, np.take_along_axis(X, idx, axis=2)

    def decode(self, msg):
        idx, vals = msg
        return _scatter(idx, vals, self.d) * (self.d / self.k) / self.n


class RandKSpatial(RandK):
    """Eq. 2.2 with T = Avg (L649); ``beta`` the exact betabar (``dme.spatial_beta``)."""

    name = "rand_k_spatial_avg"

    def __init__(self, n: int, d: int, k: int, beta: float | None = None):
        super().__init__(n, d, k)
        self.T = dme.transform("avg", n)
        self.beta = dme.spatial_beta(self.T, n, d, k) if beta is None else beta

    def decode(self, msg):
        idx, vals = msg
        sums = _scatter(idx, vals, self.d)
        counts = _scatter(idx, np.ones_like(vals), self.d)
        est = np.where(counts > 0, sums / self.T(np.maximum(counts, 1.0)), 0.0)
        return self.beta * est / self.n


class RandProjSpatial(Codec):
    """Eq. 2.5 with SRHT (Eq. 2.6) and T = Avg on the eigenvalues of S. ``beta`` by unbiasedness (``rps_beta``)."""

    name = "rps_avg"

    def __init__(self, n: int, d: int, k: int, beta: float, H: np.ndarray | None = None):
        super().__init__(n, d, k)
        self.H = dme.hadamard(d) / math.sqrt(d) if H is None else H
        self.T = dme.transform("avg", n)
        self.beta = beta

    def encode(self, X, rng):
        m, n, d = X.shape
        sel = _subsets(rng, (m, n), d, self.k)                               # E_i
        signs = 2.0 * rng.integers(0, 2, size=(m, n, 1, d)) - 1.0           # D_i
        G = self.H[sel] * signs                                              # (m, n, k, d): E_i H D_i / sqrt d
        y = (G @ X[..., None])[..., 0]
        return G.reshape(m, n * self.k, d), y.reshape(m, n * self.k)

    def decode(self, msg):
        B, y = msg
        est, _ = rps_decode(B, y, self.T)
        return self.beta * est


def rps_decode(B: np.ndarray, y: np.ndarray, T: Callable[[np.ndarray], np.ndarray], tol: float = 1e-9
               ) -> tuple[np.ndarray, np.ndarray]:
    """Batched Eq. 2.5 without betabar, through the Gram matrix B B^T = U diag(lam) U^T of the stacked G_i (n k x n k,
    the notes' cheap route: S = B^T B has the same nonzero eigenvalues lam): B^T U diag(1/T(lam)) U^T y over the
    eigenvalues above tol * max(lam, 1) (equal to V diag(s/T(s^2)) U^T y of the SVD B = U diag(s) V^T, the decoder
    of algorithms/dme.py), and sum_j lam_j / T(lam_j) (what betabar's unbiasedness needs)."""
    lam, U = np.linalg.eigh(B @ B.transpose(0, 2, 1))
    keep = lam > tol * np.maximum(lam.max(axis=1, keepdims=True), 1.0)
    Tl = T(np.where(keep, lam, 1.0))
    w = np.where(keep, 1.0 / Tl, 0.0)
    Uy = (y[:, None, :] @ U)[:, 0]                                          # U^T y
    z = (U @ (w * Uy)[..., None])[..., 0]
    trace = np.where(keep, lam / Tl, 0.0).sum(axis=1)
    return (z[:, None, :] @ B)[:, 0], trace


def rps_beta(n: int, d: int, k: int, draws: int, rng: np.random.Generator, H: np.ndarray | None = None) -> float:
    """betabar of Rand-Proj-Spatial(Avg) by unbiasedness: d / E[sum_j lam_j / T(lam_j)] (the convention of
    algorithms/dme.py), the expectation over ``draws`` independent SRHT stacks (independent of every measured run)."""
    codec = RandProjSpatial(n, d, k, 1.0, H)
    B, _ = codec.encode(np.zeros((draws, n, d)), rng)
    _, trace = rps_decode(B, np.zeros(B.shape[:2]), codec.T)
    return d / float(np.mean(trace))


def srht_ranks(n: int, d: int, k: int, draws: int, rng: np.random.Generator, shared_signs: bool = False,
               tol: float = 1e-9) -> np.ndarray:
    """App. A.3.3: rank S = rank of the stacked SRHT maps [G_1; ...; G_n] (G_i = E_i H D_i / sqrt d), ``draws`` times,
    from the eigenvalues of the n k x n k Gram matrix (above tol * max(lam, 1), the rule of algorithms/dme.py's
    decoder). ``shared_signs``: every client uses the same D (a planted fault: rows then coincide)."""
    codec = RandProjSpatial(n, d, k, 1.0)
    chunk = max(1, min(draws, 20_000_000 // (n * k * d)))
    out = []
    for start in range(0, draws, chunk):
        m = min(chunk, draws - start)
        sel = _subsets(rng, (m, n), d, k)
        signs = 2.0 * rng.integers(0, 2, size=(m, 1 if shared_signs else n, 1, d)) - 1.0
        B = (codec.H[sel] * signs).reshape(m, n * k, d)
        lam = np.linalg.eigvalsh(B @ B.transpose(0, 2, 1))
        out.append((lam > tol * np.maximum(lam.max(axis=1, keepdims=True), 1.0)).sum(axis=1))
    return np.concatenate(out)


class RandKWangni(Codec):
    """OUR READING of [135] (not defined in the seed; see the module docstring)."""

    name = "rand_k_wangni"

    def probabilities(self, X: np.ndarray) -> np.ndarray:
        a = np.abs(X)
        l1 = a.sum(axis=-1, keepdims=True)
        P = np.minimum(self.k * a / np.where(l1 > 0, l1, 1.0), 1.0)
        for _ in range(WANGNI_MAX_ITER):
            active = P < 1.0
            sp = np.where(active, P, 0.0).sum(axis=-1, keepdims=True)
            c = np.where(sp > 0, (self.k - self.d + active.sum(axis=-1, keepdims=True)) / np.where(sp > 0, sp, 1.0),
                         1.0)
            if np.all(c <= 1.0 + 1e-12):
                break
            P = np.where(active, np.minimum(c * P, 1.0), P)
        return P

    def encode(self, X, rng):
        P = self.probabilities(X)
        sent = rng.random(X.shape) < P
        return np.where(sent, X / np.where(P > 0, P, 1.0), 0.0)

    def decode(self, msg):
        return msg.sum(axis=1) / self.n


class Induced(Codec):
    """OUR READING of [55] (not defined in the seed; see the module docstring): Top-k1 + Rand-k2 of the residual."""

    name = "induced"

    def __init__(self, n: int, d: int, k: int):
        super().__init__(n, d, k)
        self.k1 = k // 2
        self.k2 = k - self.k1

    def encode(self, X, rng):
        m, n, d = X.shape
        if self.k1:
            top = np.argpartition(-np.abs(X), self.k1 - 1, axis=2)[..., :self.k1]
            tv = np.take_along_axis(X, top, axis=2)
            R = X.copy()
            np.put_along_axis(R, top, 0.0, axis=2)
        else:
            top, tv, R = np.zeros((m, n, 0), dtype=np.int64), np.zeros((m, n, 0)), X
        idx = _subsets(rng, (m, n), d, self.k2)
        return top, tv, idx, np.take_along_axis(R, idx, axis=2) * (d / self.k2)

    def decode(self, msg):
        top, tv, idx, vals = msg
        return (_scatter(top, tv, self.d) + _scatter(idx, vals, self.d)) / self.n


def make_codecs(n: int, d: int, k: int, rps_beta_value: float, H: np.ndarray | None = None) -> dict[str, Codec]:
    return {"rand_k": RandK(n, d, k), "rand_k_spatial_avg": RandKSpatial(n, d, k),
            "rps_avg": RandProjSpatial(n, d, k, rps_beta_value, H), "rand_k_wangni": RandKWangni(n, d, k),
            "induced": Induced(n, d, k)}


def compress(codec: Codec, X: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float, float]:
    """One round: the decoded (m, d) estimate, the encoders' and the decoder's CPU seconds."""
    t0 = time.process_time()
    msg = codec.encode(X, rng)
    t1 = time.process_time()
    est = codec.decode(msg)
    t2 = time.process_time()
    return est, t1 - t0, t2 - t1


# --- the stand-in data (scikit-learn's packaged sets; no download) ---

def digits_pixels() -> np.ndarray:
    """scikit-learn's digits (1797 images, 8 x 8 = 64 pixels in 0..16), scaled to [0, 1]: stands in for the resized
    Fashion-MNIST test set (10000 images, 32 x 32 = 1024, L657) of power iteration and k-means."""
    from sklearn.datasets import load_digits  # imported here: only these data sets need scikit-learn

    return load_digits().data.astype(np.float64) / 16.0


def diabetes_poly(d: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's diabetes (442 records, 10 features), its degree-2 polynomial features (10 + 45 + 10 = 65, no
    bias) standardised, the first d of them (as L657 keeps the first 512 of UJIIndoorLoc's 520), the target
    standardised: stands in for UJIIndoorLoc's longitude regression (10000 points, d = 512)."""
    from sklearn.datasets import load_diabetes
    from sklearn.preprocessing import PolynomialFeatures

    X, t = load_diabetes(return_X_y=True)
    P = PolynomialFeatures(2, include_bias=False).fit_transform(X.astype(np.float64))[:, :d]
    P = (P - P.mean(axis=0)) / P.std(axis=0)
    return P, (t - t.mean()) / t.std()


def split_iid(rng: np.random.Generator, N: int, n: int) -> np.ndarray:
    """(n, N // n) record indices: a uniform shuffle cut into n equal parts (L657's IID split; the N mod n records
    left over are dropped so every client weighs the same and the mean of the local vectors is the global one)."""
    return rng.permutation(N)[: (N // n) * n].reshape(n, N // n)


# --- the tasks: per codec, per round, the squared estimation error, the task loss and the CPU times ---

def correlation(batch: np.ndarray) -> float:
    """Eq. 2.7's R of the clients' vectors, sum_{i != l} <x_i, x_l> / sum_i ||x_i||^2, averaged over the batch's
    instances (the degree of correlation T = Avg presumes to be n/2, L649)."""
    G = batch @ batch.transpose(0, 2, 1)
    tr = np.trace(G, axis1=1, axis2=2)
    return float(np.mean((G.sum(axis=(1, 2)) - tr) / np.where(tr > 0, tr, 1.0)))


def _record(out: dict, name: str, err: float, loss: float, te: float, td: float, R: float) -> None:
    r = out.setdefault(name, {"err": [], "loss": [], "enc": [], "dec": [], "R": []})
    r["R"].append(R)
    r["err"].append(err)
    r["loss"].append(loss)
    r["enc"].append(te)
    r["dec"].append(td)


def power_iteration(Xc: np.ndarray, parts: np.ndarray, codecs: dict[str, Codec], rngs: dict[str, np.random.Generator],
                    rounds: int, v0: np.ndarray, v_top: np.ndarray) -> dict:
    """L667: each client's local power step A_i v = X_i^T X_i v / m (X centred by the global mean), the server's
    estimate of their mean A v normalised to v_t; loss ||v_t - v_top|| up to the sign (OUR CHOICE: min over +-)."""
    Xs = Xc[parts]                                                    # (n, m, d)
    XsT = Xs.transpose(0, 2, 1).copy()
    out: dict = {}
    for name, codec in codecs.items():
        v = v0.copy()
        for _ in range(rounds):
            local = (XsT @ (Xs @ v)[..., None])[..., 0] / Xs.shape[1]
            est, te, td = compress(codec, local[None], rngs[name])
            xbar = local.mean(axis=0)
            err = float(np.sum((est[0] - xbar) ** 2))
            nv = float(np.linalg.norm(est[0]))
            v = est[0] / nv if nv > 0 else v
            _record(out, name, err, float(min(np.linalg.norm(v - v_top), np.linalg.norm(v + v_top))), te, td,
                    correlation(local[None]))
    return out


def kmeans(X: np.ndarray, parts: np.ndarray, codecs: dict[str, Codec], rngs: dict[str, np.random.Generator],
           rounds: int, C0: np.ndarray) -> dict:
    """L668: Lloyd's algorithm; each client assigns its points to the current centroids and sends its local
    centroids, each cluster one mean-estimation instance; the server's estimates are the new centroids. OUR CHOICES
    where L668 is silent: the clients also send their cluster counts uncompressed, a cluster no client has a
    point in keeps its centroid (no estimate that round), and a client with no point in a cluster others have points
    in sends the current centroid for it. Error: the squared error averaged over the estimated clusters; loss: the
    sum over every record of the split of the squared distance to its nearest centroid (after the round)."""
    Xs = X[parts]                                                     # (n, m, d)
    n, m, d = Xs.shape
    sq = np.sum(Xs**2, axis=2)
    K = C0.shape[0]
    out: dict = {}
    for name, codec in codecs.items():
        C = C0.copy()
        dist = sq[:, :, None] - 2 * Xs @ C.T + np.sum(C**2, axis=1)[None, None, :]
        for _ in range(rounds):
            onehot = (np.argmin(dist, axis=2)[:, :, None] == np.arange(K)).astype(np.float64)    # (n, m, K)
            cnt = onehot.sum(axis=1)                                  # (n, K)
            sums = onehot.transpose(0, 2, 1) @ Xs                     # (n, K, d)
            local = np.where(cnt[:, :, None] > 0, sums / np.maximum(cnt, 1)[:, :, None], C[None])
            alive = cnt.sum(axis=0) > 0
            batch = local[:, alive].transpose(1, 0, 2)                # (K alive, n, d)
            est, te, td = compress(codec, batch, rngs[name])
            err = float(np.mean(np.sum((est - batch.mean(axis=1)) ** 2, axis=1)))
            C = C.copy()
            C[alive] = est
            dist = sq[:, :, None] - 2 * Xs @ C.T + np.sum(C**2, axis=1)[None, None, :]
            _record(out, name, err, float(np.sum(np.maximum(dist.min(axis=2), 0.0))), te, td, correlation(batch))
    return out


def regression(X: np.ndarray, t: np.ndarray, parts: np.ndarray, codecs: dict[str, Codec],
               rngs: dict[str, np.random.Generator], rounds: int, lr: float) -> dict:
    """L672: gradient descent on the squared loss (1/2m)||X_i w - t_i||^2, each client's full local gradient
    compressed, the server's estimate of their mean the step's direction; loss: the empirical mean squared error
    on the split's records, from w = 0."""
    Xs, ts = X[parts], t[parts]
    Xall, tall = Xs.reshape(-1, X.shape[1]), ts.ravel()
    XsT = Xs.transpose(0, 2, 1).copy()
    out: dict = {}
    for name, codec in codecs.items():
        w = np.zeros(X.shape[1])
        for _ in range(rounds):
            resid = Xs @ w - ts
            local = (XsT @ resid[..., None])[..., 0] / Xs.shape[1]
            est, te, td = compress(codec, local[None], rngs[name])
            err = float(np.sum((est[0] - local.mean(axis=0)) ** 2))
            w = w - lr * est[0]
            _record(out, name, err, float(np.mean((Xall @ w - tall) ** 2)), te, td, correlation(local[None]))
    return out
