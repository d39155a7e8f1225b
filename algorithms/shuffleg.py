"""The generalised shuffled gradient framework of seed 003, chapter 4 (Jiang's thesis, Algorithm 3; Lnnn = line of
../shared/seeds/003_56e8b1c3300cdeae.txt; notes ../shared/notes/003b_thesis_ch4.md): one method driven by an epoch
schedule, and its instances (Tables 4.1 / 4.2): non-private ShuffleG, DP-ShuffleG, Priv-Pub, Pub-Priv, Interleaved
and Public Only. Pure numerics: nothing here imports verifiers/, engine/ or catalog/.

Epoch k (Alg. 3, C.30 at L4224-4228): a permutation pi^(k) of the n private records (IG: the identity in every
epoch; SO: one uniform permutation per trial, drawn once; RR: a fresh one per trial and epoch); the first n_d^(k)
records of pi^(k)(D) take private steps x <- x - eta (grad f(x; d) + rho), then the public records p_1 .. p_{n -
n_d^(k)} take public steps in their fixed order (the same first n - n_d public records every epoch), each with noise
rho ~ N(0, sigma^(k)^2 I_d) when sigma^(k) > 0 (Interleaved puts noise on its public steps too, as the thesis
states, L1455-1470); the epoch ends with the proximal step x <- argmin_x n psi(x) + ||x - v||^2 / (2 eta) (step
n eta). Only the last iterate x_1^(K+1) is released.

Losses (§4.7.2; the gradients are clipped to norm ``clip`` = G when it is finite, which makes each loss its Huber
version: the clipped gradient is the exact gradient of a convex loss with the same smoothness for these radial and
generalised-linear losses, so the convergence theorems apply to the loss that actually ran):
  mean      f(x; q) = ||x - q||^2 / 2                         L_i = 1
  ridge     f(x; (a, y)) = (<x, a> - y)^2 (no 1/2, §4.7.2)   L_i = 2 ||a||^2
  logistic  f(x; (a, y)) = -y log h - (1 - y) log(1 - h), h = sigmoid(<x, a>), y in {0, 1}   L_i = ||a||^2 / 4
  linear    f(x; q) = -<x, q> (L_i = 0; the privacy audit's loss: no contraction, every step's noise is kept)
Regularisers psi and their proximal maps at step t = n eta (derived, notes §2.1): none; ridge (lam/2)||x||^2:
v / (1 + t lam); l1 lam ||x||_1: soft-threshold at t lam; ball (the indicator of {||x|| <= C}): projection.

Randomness: the caller's SeedSequence spawns one child per trial chunk (orders, noise); chunks depend only on the
parameters, so a seed reproduces a run whatever the machine.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from scipy.special import expit

from algorithms import kernels

Order = Literal["ig", "so", "rr"]
LOSSES = ("mean", "ridge", "logistic", "linear")
REGULARISERS = ("none", "ridge", "l1", "ball")
CHUNK_FLOATS = 2**21           # trials x d floats per chunk of trials (16 MB per state array)


@dataclass(frozen=True)
class Problem:
    """The data of a run: private records (features A (n, d), targets y (n,)), public records (P (m, d), yp (m,)),
    the loss and the regulariser with its constant (``lam`` for ridge / l1, ``radius`` C for the ball)."""

    loss: str
    A: np.ndarray
    y: np.ndarray
    P: np.ndarray
    yp: np.ndarray
    regulariser: str = "none"
    lam: float = 0.0
    radius: float = np.inf

    @property
    def n(self) -> int:
        return int(self.A.shape[0])

    @property
    def d(self) -> int:
        return int(self.A.shape[1])

    def smoothness(self, public: bool = False) -> np.ndarray:
        """L_i of each record (Assumption 4.4.2), private or public."""
        X = self.P if public else self.A
        sq = np.einsum("ij,ij->i", X, X)
        if self.loss == "mean":
            return np.ones(X.shape[0])
        if self.loss == "ridge":
            return 2.0 * sq
        if self.loss == "logistic":
            return sq / 4.0
        return np.zeros(X.shape[0])

    @property
    def mu_psi(self) -> float:
        """The regulariser's strong convexity (Assumption 4.4.4)."""
        return self.lam if self.regulariser == "ridge" else 0.0


@dataclass(frozen=True)
class Schedule:
    """The epoch schedule of Alg. 3: per epoch the private steps n_d^(k) and the noise std sigma^(k) (Tables 4.1 /
    4.2); ``noisy_public``: the public steps carry the epoch's noise too (Interleaved)."""

    private_steps: tuple[int, ...]
    sigma: tuple[float, ...]
    noisy_public: bool = False

    @property
    def K(self) -> int:
        return len(self.private_steps)


def schedule(instance: str, *, n: int, K: int, sigma: float, S: int = 0, n_d: int = 0) -> Schedule:
    """The instances of Tables 4.1 / 4.2. ``S``: Priv-Pub's private epochs / Pub-Priv's public epochs; ``n_d``:
    Interleaved's private steps per epoch."""
    if instance == "shuffleg":
        return Schedule((n,) * K, (0.0,) * K)
    if instance == "dp_shuffleg":
        return Schedule((n,) * K, (sigma,) * K)
    if instance == "priv_pub":
        return Schedule((n,) * S + (0,) * (K - S), (sigma,) * S + (0.0,) * (K - S))
    if instance == "pub_priv":
        return Schedule((0,) * S + (n,) * (K - S), (0.0,) * S + (sigma,) * (K - S))
    if instance == "interleaved":
        return Schedule((n_d,) * K, (sigma,) * K, noisy_public=True)
    if instance == "public_only":
        return Schedule((0,) * K, (0.0,) * K)
    raise ValueError(f"unknown instance {instance!r}")


@dataclass(frozen=True)
class EpochRelease:
    """What one epoch ran, as its privacy accounting needs it (Lemmas 4.5.2 / 4.6.2): the private steps, the noisy
    steps after the last private one (the PABI amplification of Interleaved's noisy public steps), the noise std,
    the clipping norm of the private gradients, the step size, and the most times one private record was read."""

    private_steps: int
    noisy_steps_after: int
    sigma: float
    clip: float
    eta: float
    max_record_uses: int

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Output:
    last: np.ndarray             # (trials, d): x_1^(K+1)
    releases: tuple[EpochRelease, ...]
    clipped_fraction: float      # of the gradient evaluations whose norm exceeded the clipping norm
    trace: np.ndarray | None = None     # (K, trials, d): x_1^(k+1) after every epoch, when asked for


def gradients(loss: str, x: np.ndarray, a: np.ndarray, y: np.ndarray | float) -> np.ndarray:
    """grad f(x; (a, y)) for a batch of trials: x (T, d); a (T, d), or one record (d,) broadcast, with y (T,) or a
    number; a new array."""
    if loss == "mean":
        return x - a
    if loss == "linear":
        return np.broadcast_to(-a, x.shape).copy()
    r = x @ a if a.ndim == 1 else np.einsum("ij,ij->i", x, a)
    if loss == "ridge":
        return (2.0 * (r - y))[:, None] * a
    if loss == "logistic":
        return (expit(r) - y)[:, None] * a
    raise ValueError(f"unknown loss {loss!r}")


def clip_rows(g: np.ndarray, G: float) -> tuple[np.ndarray, int]:
    if not np.isfinite(G):
        return g, 0
    norm = np.sqrt(np.einsum("ij,ij->i", g, g))
    over = norm > G
    if over.any():
        g = g * np.where(over, G / np.maximum(norm, 1e-300), 1.0)[:, None]
    return g, int(over.sum())


def prox(reg: str, v: np.ndarray, t: float | np.ndarray, lam: float, radius: float) -> np.ndarray:
    """argmin_x t psi(x) + ||x - v||^2 / 2 for each row of v (t: one step, or a (rows, 1) column of them)."""
    if reg == "none":
        return v
    if reg == "ridge":
        return v / (1.0 + t * lam)
    if reg == "l1":
        return np.sign(v) * np.maximum(np.abs(v) - t * lam, 0.0)
    if reg == "ball":
        norm = np.sqrt(np.einsum("ij,ij->i", v, v))
        return v * np.minimum(1.0, radius / np.maximum(norm, 1e-300))[:, None]
    raise ValueError(f"unknown regulariser {reg!r}")


def objective(prob: Problem, x: np.ndarray, clip: float = np.inf) -> np.ndarray:
    """G(x; D) = (1/n) sum_i f(x; d_i) + psi(x) for each row of x. With a finite ``clip`` G, f is the Huberised loss
    whose gradient is the clipped one (what the clipped run optimises): the mean loss ||x - q||^2/2 up to distance G,
    then G ||x - q|| - G^2/2; ridge (r = <x, a> - y): r^2 up to |r| = c = G / (2 ||a||), then 2c|r| - c^2. The
    logistic loss has no closed Huber form here (its gradient norm is at most ||a||: unclipped when ||a|| <= G)."""
    r = x @ prob.A.T                                           # (T, n)
    G = clip
    if prob.loss == "mean":
        sq = np.maximum(np.einsum("ij,ij->i", x, x)[:, None] - 2 * r + np.einsum("ij,ij->i", prob.A, prob.A)[None, :],
                        0.0)
        if np.isfinite(G):
            dist = np.sqrt(sq)
            F = np.where(dist <= G, 0.5 * sq, G * dist - 0.5 * G * G).mean(axis=1)
        else:
            F = 0.5 * sq.mean(axis=1)
    elif prob.loss == "ridge":
        res = r - prob.y[None, :]
        if np.isfinite(G):
            c = G / (2.0 * np.maximum(np.linalg.norm(prob.A, axis=1), 1e-300))[None, :]
            F = np.where(np.abs(res) <= c, res**2, 2 * c * np.abs(res) - c * c).mean(axis=1)
        else:
            F = (res**2).mean(axis=1)
    elif prob.loss == "logistic":
        if np.isfinite(G) and np.linalg.norm(prob.A, axis=1).max() > G:
            raise ValueError("the Huberised logistic loss is not implemented: keep ||a|| <= G (no clipping)")
        F = (np.logaddexp(0.0, r) - prob.y[None, :] * r).mean(axis=1)
    else:
        F = -r.mean(axis=1)
    return F + penalty(prob, x)


def penalty(prob: Problem, x: np.ndarray) -> np.ndarray:
    if prob.regulariser == "ridge":
        return 0.5 * prob.lam * np.einsum("ij,ij->i", x, x)
    if prob.regulariser == "l1":
        return prob.lam * np.abs(x).sum(axis=1)
    if prob.regulariser == "ball":
        norm = np.sqrt(np.einsum("ij,ij->i", x, x))
        if np.any(norm > prob.radius * (1 + 1e-9)):
            raise FloatingPointError("an iterate left the ball after its projection")
    return np.zeros(x.shape[0])


def run(prob: Problem, sched: Schedule, *, eta: float | np.ndarray, order: Order, x1: np.ndarray, clip: float,
        trials: int, seq: np.random.SeedSequence, trace: bool = False) -> Output:
    """``trials`` independent runs of Alg. 3 from x1 (d,), vectorised across trials. ``eta``: one step for all, or
    one per trial (a step-size grid run side by side). ``trace``: keep x_1^(k+1) after every epoch."""
    n, d = prob.n, prob.d
    per = max(1, min(trials, CHUNK_FLOATS // max(d * (sched.K if trace else 1), 1)))
    chunks = [per] * (trials // per) + ([trials % per] if trials % per else [])
    seeds = seq.spawn(len(chunks))
    steps = np.broadcast_to(np.asarray(eta, dtype=np.float64), (trials,))
    lasts, traces, clipped, evals, start = [], [], 0, 0, 0
    for size, s in zip(chunks, seeds):
        rng = np.random.default_rng(s)
        e_chunk = steps[start:start + size, None] if np.ndim(eta) else float(eta)
        x, c, e, tr = _run_chunk(prob, sched, eta=e_chunk, order=order, x1=x1, clip=clip, T=size, rng=rng,
                                 trace=trace)
        lasts.append(x)
        traces.append(tr)
        clipped += c
        evals += e
        start += size
    last = np.concatenate(lasts, axis=0)
    if not np.all(np.isfinite(last)):
        raise FloatingPointError("a shuffled-gradient run produced a non-finite iterate (step size too large?)")
    rel = []
    for k in range(sched.K):
        nd, sig = sched.private_steps[k], sched.sigma[k]
        after = (n - nd) if (sched.noisy_public and sig > 0) else 0
        rel.append(EpochRelease(private_steps=nd, noisy_steps_after=after, sigma=sig, clip=clip,
                                eta=float(steps.max()), max_record_uses=1 if nd else 0))
    return Output(last=last, releases=tuple(rel), clipped_fraction=clipped / max(evals, 1),
                  trace=np.concatenate([t for t in traces if t is not None], axis=1) if trace else None)


def _run_chunk(prob: Problem, sched: Schedule, *, eta: float | np.ndarray, order: Order, x1: np.ndarray,
               clip: float, T: int, rng: np.random.Generator,
               trace: bool = False) -> tuple[np.ndarray, int, int, np.ndarray | None]:
    """One chunk of trials. Each epoch: the order (RR), then its noise in blocks of steps drawn in step order (the
    same stream as one draw per step), the private records gathered once in the epoch's order, then the steps, in
    runs of steps that share a noise block and a kind of record (private or public), each run in one call of
    ``kernels.shuffle_steps`` (``gradients``' losses, the clip to G, x -= eta g, compiled)."""
    n, d = prob.n, prob.d
    x = np.repeat(np.asarray(x1, dtype=np.float64)[None, :], T, axis=0)
    perm = np.tile(np.arange(n), (T, 1))
    if order == "so":
        perm = rng.permuted(perm, axis=1)
    public = n - min(sched.private_steps, default=n)                              # the most public steps of an epoch
    if prob.P.shape[0] < public or prob.yp.shape[0] < public:
        raise ValueError(f"an epoch takes {public} public steps, one per public record, but the problem has "
                         f"{prob.P.shape[0]} public records")
    clipped = evals = 0
    kept = np.empty((sched.K, T, d)) if trace else None
    block = max(1, CHUNK_FLOATS // (T * d))
    noise = np.empty((min(block, n), T, d)) if any(s > 0 for s in sched.sigma) else None   # the noise blocks' buffer
    eta_t = np.ascontiguousarray(np.broadcast_to(np.asarray(eta, dtype=np.float64).reshape(-1), (T,)))
    P = prob.P[:, None, :]                                                        # one public record for all trials
    yp = prob.yp[:, None]
    for k in range(sched.K):
        if order == "rr":
            perm = rng.permuted(np.tile(np.arange(n), (T, 1)), axis=1)
        nd, sig = sched.private_steps[k], sched.sigma[k]
        noisy = (nd + (n - nd if sched.noisy_public else 0)) if sig > 0 else 0
        idx = perm[:, :nd].T                                                      # (nd, T): a gather, no arithmetic
        A_ep = np.take(prob.A, idx, axis=0) if nd else None                       # (nd, T, d)
        y_ep = np.take(prob.y, idx) if nd else None                               # (nd, T)
        cuts = sorted({0, n, nd, noisy, *range(0, noisy, block)})                # nd, noisy <= n
        Z = None
        for i, j in zip(cuts[:-1], cuts[1:]):
            if i < noisy and i % block == 0:
                assert noise is not None
                Z = noise[:min(block, noisy - i)]
                rng.standard_normal(out=Z)
                Z *= sig
            if i < nd:
                assert A_ep is not None and y_ep is not None
                R, Y = A_ep[i:j], y_ep[i:j]
            else:
                R, Y = P[i - nd:j - nd], yp[i - nd:j - nd]
            assert (Z is not None or i >= noisy) and R.shape[0] == j - i
            zs = Z[i % block:i % block + j - i] if i < noisy and Z is not None else None
            clipped += kernels.shuffle_steps(x, R, Y, prob.loss, clip, zs, eta_t)
        evals += n * T
        x = prox(prob.regulariser, x, n * eta, prob.lam, prob.radius)
        if kept is not None:
            kept[k] = x
    return x, clipped, evals, kept


def optimum(prob: Problem, clip: float = np.inf) -> tuple[np.ndarray, float]:
    """x* = argmin G(x; D) (the Huberised losses with a finite ``clip``) and the norm of its proximal-gradient
    residual (a certificate: 0 at the exact minimiser). Closed forms for the mean loss (none / ridge / ball) and for
    ridge with a ridge or no regulariser, kept when no record's gradient is clipped at them (the Huberised objective
    then has the same minimiser); otherwise FISTA on the composite objective to a residual of 1e-12 (at most 200,000
    iterations)."""
    A, y, n = prob.A, prob.y, prob.n
    x = None
    if prob.loss == "mean":
        qbar = A.mean(axis=0)
        x = {"ridge": qbar / (1.0 + prob.lam), "none": qbar}.get(prob.regulariser)
        if prob.regulariser == "ball":
            x = prox("ball", qbar[None, :], 1.0, 0.0, prob.radius)[0]
    elif prob.loss == "ridge" and prob.regulariser in ("none", "ridge"):
        lam = prob.lam if prob.regulariser == "ridge" else 0.0
        x = np.linalg.solve(2.0 / n * A.T @ A + lam * np.eye(prob.d), 2.0 / n * A.T @ y)
    L = max(float(prob.smoothness().mean()) + (prob.lam if prob.regulariser == "ridge" else 0.0), 1e-12)
    t = 1.0 / L
    if x is not None and _unclipped(prob, x, clip):
        return x, _residual(prob, x, t, clip) if prob.loss != "mean" else 0.0
    x = np.zeros(prob.d) if x is None else x
    z, s = x.copy(), 1.0
    for _ in range(200_000):
        g = full_gradient(prob, z, clip)
        x_new = prox(prob.regulariser, (z - t * g)[None, :], t, prob.lam, prob.radius)[0]
        s_new = (1 + np.sqrt(1 + 4 * s * s)) / 2
        z = x_new + (s - 1) / s_new * (x_new - x)
        x, s = x_new, s_new
        if _residual(prob, x, t, clip) < 1e-12:
            break
    return x, _residual(prob, x, t, clip)


def _unclipped(prob: Problem, x: np.ndarray, clip: float) -> bool:
    if not np.isfinite(clip):
        return True
    g = gradients(prob.loss, np.ascontiguousarray(np.broadcast_to(x, prob.A.shape)), prob.A, prob.y)
    return bool(np.sqrt(np.einsum("ij,ij->i", g, g)).max() <= clip)


def full_gradient(prob: Problem, x: np.ndarray, clip: float = np.inf) -> np.ndarray:
    """grad F(x; D) = (1/n) sum_i grad f(x; d_i), each clipped to ``clip``."""
    X = np.broadcast_to(x, prob.A.shape)
    return clip_rows(gradients(prob.loss, np.ascontiguousarray(X), prob.A, prob.y), clip)[0].mean(axis=0)


def _residual(prob: Problem, x: np.ndarray, t: float, clip: float = np.inf) -> float:
    g = full_gradient(prob, x, clip)
    return float(np.linalg.norm(x - prox(prob.regulariser, (x - t * g)[None, :], t, prob.lam, prob.radius)[0]) / t)


@dataclass(frozen=True)
class Constants:
    """The per-instance constants of Thm 4.4.7 computed from the data of the run (notes §1): L = mean L_i,
    L* = max L_i, the public L~*, sigma_any^2 = (1/n) sum ||grad f_i(x*)||^2, and per epoch L^(k), L^(k)*, L_H^(k)
    (upper bounds over the records RR may put in D^(k): the largest values any subset reaches), C_n^(k) and
    (1/n) sum_{i = n_d + 1}^{n - 1} (C_i^(k))^2 (upper bounds, see ``dissimilarity``)."""

    L: float
    L_star: float
    L_pub_star: float
    L_pub_mean: float
    sigma_any2: float
    L_hat: tuple[float, ...]
    L_hat_star: tuple[float, ...]
    L_H: tuple[float, ...]
    C_n: tuple[float, ...]
    C_vanishing: tuple[float, ...]
    exact_dissimilarity: bool


def constants(prob: Problem, sched: Schedule, x_star: np.ndarray, clip: float = np.inf) -> Constants:
    """(The Huberised losses of a finite ``clip`` have the same smoothness; sigma_any^2 uses their clipped
    gradients, the dissimilarity the bound for clipped gradients in ``dissimilarity``.)"""
    n = prob.n
    Li, Lp = prob.smoothness(), prob.smoothness(public=True)
    g = clip_rows(gradients(prob.loss, np.ascontiguousarray(np.broadcast_to(x_star, prob.A.shape)), prob.A, prob.y),
                  clip)[0]
    top = np.sort(Li)[::-1]
    L_hat, L_hat_star, L_H, C_n, C_van = [], [], [], [], []
    exact = True
    for k in range(sched.K):
        nd = sched.private_steps[k]
        m = n - nd
        L_hat.append((top[:nd].sum() + Lp[:m].sum()) / n)
        L_hat_star.append(max(top[:nd].max() if nd else 0.0, Lp[:m].max() if m else 0.0))
        L_H.append(surrogate_smoothness(prob, m, clip))
        cn, cv, ex = dissimilarity(prob, nd, clip)
        C_n.append(cn)
        C_van.append(cv)
        exact = exact and ex
    return Constants(L=float(Li.mean()), L_star=float(Li.max()), L_pub_star=float(Lp.max()) if len(Lp) else 0.0,
                     L_pub_mean=float(Lp.mean()) if len(Lp) else 0.0,
                     sigma_any2=float(np.einsum("ij,ij->i", g, g).mean()), L_hat=tuple(map(float, L_hat)),
                     L_hat_star=tuple(map(float, L_hat_star)), L_H=tuple(map(float, L_H)),
                     C_n=tuple(map(float, C_n)), C_vanishing=tuple(map(float, C_van)), exact_dissimilarity=exact)


def surrogate_smoothness(prob: Problem, m: int, clip: float = np.inf) -> float:
    """An upper bound on L_H^(k) (Assumption 4.4.5): H = (1/n)(sum of f over the m private records left out of
    D^(k) - sum over the m public records used); its Hessian is a difference of two positive semi-definite sums, so
    its norm is at most the larger of the two norms, each at most the sum of the m largest per-record curvature
    bounds. The plain mean loss: every Hessian is I and they cancel, L_H = 0; its Huberised (clipped) version: the
    Hessians lie between 0 and I and need not cancel, so m / n; the linear loss: 0."""
    if m == 0 or prob.loss == "linear" or (prob.loss == "mean" and not np.isfinite(clip)):
        return 0.0
    Li, Lp = prob.smoothness(), prob.smoothness(public=True)
    return float(max(np.sort(Li)[::-1][:m].sum(), Lp[:m].sum()) / prob.n)


def dissimilarity(prob: Problem, nd: int, clip: float = np.inf) -> tuple[float, float, bool]:
    """Upper bounds on C_n^(k) and (1/n) sum_{i=nd+1}^{n-1} (C_i^(k))^2 (Assumption 4.4.6, read as the largest value
    over x and over the permutations: no reading of its expectation can exceed it), m = i - nd public records.
    - The plain mean loss: grad f(x; d) - grad f(x; p) = p - d does not depend on x; C_i <= ||sum_{j<=m} p_j - m dbar||
      + (sum of the m largest ||d - dbar||) (any m distinct private records), exact when m = n (||sum p - sum d||).
    - A clipped loss (the Huberised losses; clipping is non-expansive but breaks the cancellations in a sum) and the
      logistic loss (|h - y| <= 1, so ||grad f(x; (a, y))|| <= ||a||): each difference alone, C_i <= sum_{j<=m}
      min(b_j, 2G), b_j = max_d ||p_j - d|| (mean), ||p_j|| + max_d ||d|| (logistic), inf (ridge).
    - The plain ridge loss: the difference 2(a a^T - b b^T) x - ... grows with ||x||, so no finite C_i exists on R^d:
      inf (the bound checks of the public variants are then inapplicable)."""
    n, m_max = prob.n, prob.n - nd
    if m_max == 0:
        return 0.0, 0.0, True
    if prob.loss != "mean" or np.isfinite(clip):
        if prob.loss == "mean":
            far = np.sqrt(np.maximum(np.einsum("ij,ij->i", prob.P[:m_max], prob.P[:m_max])[:, None]
                                     - 2 * prob.P[:m_max] @ prob.A.T
                                     + np.einsum("ij,ij->i", prob.A, prob.A)[None, :], 0.0)).max(axis=1)
        elif prob.loss == "logistic":
            far = np.linalg.norm(prob.P[:m_max], axis=1) + np.linalg.norm(prob.A, axis=1).max()
        else:
            far = np.full(m_max, np.inf)
        Cc = np.concatenate([[0.0], np.cumsum(np.minimum(far, 2 * clip))])
        if not np.isfinite(Cc[-1]):
            return np.inf, np.inf, False
        return float(Cc[m_max]), float((Cc[1:m_max] ** 2).sum() / n), False
    dbar = prob.A.mean(axis=0)
    dev = np.sort(np.linalg.norm(prob.A - dbar, axis=1))[::-1]
    cum_dev = np.concatenate([[0.0], np.cumsum(dev)])
    cum_p = np.cumsum(prob.P[:m_max], axis=0)
    C = np.empty(m_max + 1)
    C[0] = 0.0
    for m in range(1, m_max + 1):
        C[m] = np.linalg.norm(cum_p[m - 1] - m * dbar) + cum_dev[m]
    exact = m_max == n
    if exact:
        C[n] = float(np.linalg.norm(cum_p[n - 1] - prob.A.sum(axis=0)))
    vanishing = float((C[1:m_max] ** 2).sum() / n)       # i = nd + 1 .. n - 1, i.e. m = 1 .. m_max - 1
    return float(C[m_max]), vanishing, exact


def exact_noise_excess(prob: Problem, sched: Schedule, eta: float) -> float | None:
    """E[G(x_1^(K+1))] - G* >= (mu_G / 2) d v_K exactly, for the mean loss with the ridge or no regulariser and no
    clipping: the iteration is then linear, x <- (1 - eta) x + eta q - eta rho per step and x <- x / (1 + n eta lam)
    per epoch, so the noise part of x_1^(K+1) is independent of the orders and Gaussian with per-coordinate variance
    v_{k+1} = c^2 v_k + s_k, c = (1 - eta)^n / (1 + n eta lam), s_k = eta^2 sigma_k^2 sum over the noisy steps i of
    (1 - eta)^{2(n - i)} / (1 + n eta lam)^2; G is quadratic with Hessian (1 + lam) I, so E[G] - G* = ((1 + lam)/2)
    (E_pi ||m_pi - x*||^2 + d v_K) >= ((1 + lam)/2) d v_K (m_pi the noiseless iterate of the orders pi), with
    equality when the noiseless run sits at x*. None for
    other problems."""
    if prob.loss != "mean" or prob.regulariser not in ("none", "ridge"):
        return None
    lam = prob.lam if prob.regulariser == "ridge" else 0.0
    n = prob.n
    shrink = 1.0 + n * eta * lam
    c = (1.0 - eta) ** n / shrink
    w = (1.0 - eta) ** (2.0 * np.arange(n - 1, -1, -1))      # step i = 1..n: (1 - eta)^(2(n - i))
    v = 0.0
    for k in range(sched.K):
        sig = sched.sigma[k]
        nd = sched.private_steps[k]
        noisy = w[:nd].sum() + (w[nd:].sum() if sched.noisy_public else 0.0)
        v = c * c * v + eta**2 * sig**2 * noisy / shrink**2
    return float((1.0 + lam) / 2.0 * prob.d * v)


def exact_constant_excess(*, n: int, d: int, K: int, eta: float, sigma: float, lam: float, offset: float,
                          noisy_epochs: int | None = None, noisy_last: bool = True) -> dict:
    """E[G(x_1^(K+1))] - G(x*) in closed form for DP-ShuffleG on the mean loss with every record at 0, psi =
    (lam/2)||x||^2 (x* = 0), no clipping, started at offset e_1: the noiseless iterate is deterministic (every order
    is the same), m_{k+1} = c m_k with c = (1 - eta)^n / (1 + n eta lam), and the noise is Gaussian with per-coordinate
    variance v_K = s (1 - c^(2K)) / (1 - c^2), s = eta^2 sigma^2 sum_{j<n} (1 - eta)^(2j) / (1 + n eta lam)^2; G - G* =
    ((1 + lam)/2) ||x||^2, so the expectation is ((1 + lam)/2)(c^(2K) offset^2 + d v_K). Log-space powers: no
    overflow or underflow for any n, K. (Pinned against ``exact_noise_excess`` and simulation in the tests.)
    ``noisy_epochs`` P < K of noise (every step of those epochs noisy, public records 0 too): the last P epochs
    (Pub-Priv, ``noisy_last``) give s (1 - c^(2P)) / (1 - c^2); the first P (Priv-Pub) that times c^(2(K - P))."""
    P = K if noisy_epochs is None else noisy_epochs
    log1m = math.log1p(-eta)
    shrink = 1.0 + n * eta * lam
    log_c = n * log1m - math.log(shrink)
    c2 = math.exp(2 * log_c)
    c2K = math.exp(2 * K * log_c)
    geo = -math.expm1(2 * n * log1m) / -math.expm1(2 * log1m) if eta > 0 else float(n)   # sum_{j<n} (1-eta)^(2j)
    s = eta**2 * sigma**2 * geo / shrink**2
    v = s * -math.expm1(2 * P * log_c) / (1.0 - c2) if c2 < 1 else s * P
    if not noisy_last:
        v *= math.exp(2 * (K - P) * log_c)
    return {"mean_part": (1 + lam) / 2 * c2K * offset**2, "noise_part": (1 + lam) / 2 * d * v,
            "total": (1 + lam) / 2 * (c2K * offset**2 + d * v)}


def exact_dpsgd_constant_excess(*, n: int, d: int, q: float, T: int, eta: float, z: float, G: float, lam: float,
                                offset: float) -> float:
    """The DP-SGD baseline (Abadi et al.: Poisson sampling at rate q, the batch's clipped gradients summed, Gaussian
    noise of std z G added, divided by the expected batch q n; a ridge term lam x in the gradient) on the same
    instance as ``exact_constant_excess`` (mean loss, every record 0, so every gradient is x), T steps from offset
    e_1, no clipping reached: x_{t+1} = (1 - eta (b_t/(q n) + lam)) x_t - eta xi_t, b_t ~ Bin(n, q), xi_t ~ N(0, (z G
    / (q n))^2 I). Its second moment is exact: E||x_{t+1}||^2 = rho E||x_t||^2 + s, rho = (1 - eta(1 + lam))^2 +
    eta^2 (1 - q)/(q n), s = eta^2 d (z G/(q n))^2; E[G] - G* = ((1 + lam)/2) E||x_T||^2 (inf when rho >= 1)."""
    rho = (1.0 - eta * (1.0 + lam)) ** 2 + eta**2 * (1.0 - q) / (q * n)
    if rho >= 1.0:
        return math.inf
    s = eta**2 * d * (z * G / (q * n)) ** 2
    rT = math.exp(T * math.log(rho)) if rho > 0 else 0.0
    return (1.0 + lam) / 2.0 * (rT * offset**2 + s * (1.0 - rT) / (1.0 - rho))


def run_dpsgd(prob: Problem, *, q: float, steps: int, eta: float | np.ndarray, z: float, clip: float, x1: np.ndarray,
              trials: int, seq: np.random.SeedSequence, trace_every: int = 0) -> tuple[np.ndarray, np.ndarray | None]:
    """The DP-SGD baseline the chapter compares against in theory (§4.5.4; Abadi et al. 2016): ``steps`` steps, each
    record sampled independently with probability q (Poisson), each sampled gradient clipped to ``clip`` = G, their
    sum plus N(0, (2 z G)^2 I) (sensitivity 2G: one record replaced) divided by the expected batch q n, then a
    proximal step of psi with step eta (post-processing). Vectorised across trials; ``eta`` one step or one per trial.
    Returns the last iterates (trials, d) and, with ``trace_every``, the iterates every that many steps."""
    n, d = prob.n, prob.d
    rng = np.random.default_rng(seq)
    x = np.repeat(np.asarray(x1, dtype=np.float64)[None, :], trials, axis=0)
    step = np.broadcast_to(np.asarray(eta, dtype=np.float64), (trials,))[:, None]
    sqA = np.einsum("ij,ij->i", prob.A, prob.A)
    normA = np.sqrt(sqA)
    kept = []
    for t in range(steps):
        mask = rng.random((trials, n)) < q
        r = x @ prob.A.T                                             # (trials, n)
        if prob.loss == "mean":
            norm = np.sqrt(np.maximum(np.einsum("ij,ij->i", x, x)[:, None] - 2 * r + sqA[None, :], 0.0))
            w = mask * np.minimum(1.0, clip / np.maximum(norm, 1e-300))
            g = w.sum(axis=1)[:, None] * x - w @ prob.A
        else:
            if prob.loss == "ridge":
                phi = 2.0 * (r - prob.y[None, :])
            elif prob.loss == "logistic":
                phi = expit(r) - prob.y[None, :]
            else:
                raise ValueError(f"DP-SGD baseline: no loss {prob.loss!r}")
            norm = np.abs(phi) * normA[None, :]
            g = (mask * np.minimum(1.0, clip / np.maximum(norm, 1e-300)) * phi) @ prob.A
        g += 2.0 * z * clip * rng.standard_normal((trials, d))
        x = prox(prob.regulariser, x - step * g / (q * n), step, prob.lam, prob.radius)
        if trace_every and (t + 1) % trace_every == 0:
            kept.append(x.copy())
    if not np.all(np.isfinite(x)):
        raise FloatingPointError("a DP-SGD run produced a non-finite iterate (step size too large?)")
    return x, (np.stack(kept) if trace_every else None)
