"""Algorithm 3 of seed 000 (Cheu, Joseph, Mao & Peng): P_SGD, sequentially interactive shuffle-private SGD (L177-185,
Thm 4.1). Lnnn = line of ../shared/seeds/000_2468e2e5d70af056.txt.

n users with one record each, taken in T = floor(n/b) disjoint batches of b fresh users (each user speaks once).
Round t: the batch's gradients at theta_{t-1}, clipped to l_2 norm L (the paper assumes L-Lipschitz losses; the
clip makes P_VEC's input condition hold on any data and is a no-op when the loss's constant is right), are summed
by P_VEC (algorithms/shuffle_sum.py) at (eps, delta) with Delta_2 = L; gbar_t = P_VEC(...)/b and
theta_t = Proj(theta_{t-1} - eta gbar_t). The printed update is "theta_{t-1} + eta gbar_t": a descent step needs
the minus sign (note 000, section 6.3), which we use. Output: the average of theta_0 .. theta_{T-1}.
Vectorised over trials; P_VEC's count sampler costs O(b d) draws per round whatever its binomial size.

``run_central`` is the same SGD in the central model (a trusted curator adds Gaussian noise to the batch's mean
gradient): the baseline seed 000 compares its shuffle protocols with, on the same schedule. ``run_local`` is the
same SGD in the local model: every user adds its own Gaussian noise to its clipped gradient before the message
leaves it, and the server sums the noisy messages (seed 004 L166: ISRL-DP with n = 1 record per silo is LDP).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from algorithms import kernels, mechanisms, sampling, shuffle_sum
from algorithms.data import Records
from algorithms.events import GaussianRelease, ShuffleSumRelease
from algorithms.losses import LinearModelLoss
from algorithms.result import RunOutput, multiplicity_per_trial


def clip_l2(g: np.ndarray, L: float) -> np.ndarray:
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    return g * np.minimum(1.0, L / np.maximum(norm, 1e-300))


_BASE_RECORD_GRADS = LinearModelLoss.record_grads
_CLIP_L2 = clip_l2


def clipped_record_grads(loss: LinearModelLoss, w: np.ndarray, X: np.ndarray, y: np.ndarray,
                         L: float) -> tuple[np.ndarray, np.ndarray]:
    """Every record's gradient clipped to norm L, ``clip_l2(loss.record_grads(w, X, y), L)``, and their sum per
    trial: X (T, ..., d) -> ((T, ..., d), (T, d)). In one fused pass (algorithms/kernels.clipped_grads) when the loss
    has a kernel code, its ``record_grads`` is the base class's as imported and ``clip_l2`` is this module's; a loss
    whose derivative or record gradients are changed (a subclass, a planted fault, also one patched onto the base
    class) or a changed ``clip_l2`` goes through numpy as written. The two agree up to the order of the kernel's sums
    (tests/test_kernels.py)."""
    k = loss.kernel
    if k is None or type(loss).record_grads is not _BASE_RECORD_GRADS or clip_l2 is not _CLIP_L2:
        g = clip_l2(loss.record_grads(w, X, y), L)
        return g, g.reshape(g.shape[0], -1, g.shape[-1]).sum(axis=1)
    return kernels.clipped_grads(X, y, w, k[0], k[1], loss.mu, L)


def run(records: Records, loss, *, T: int, b: int, eta: float, L: float, radius: float, pvec: shuffle_sum.PVecParams,
        rng: np.random.Generator, M_range=None, grad_F=None) -> RunOutput:
    """P_SGD: every round's clipped gradients summed by P_VEC (the analyzer sees only the counts)."""
    out, uses = _sgd(records, loss, T=T, b=b, eta=eta, L=L, radius=radius, rng=rng,
                     release=lambda g, exact: shuffle_sum.pvec(g, pvec, rng))
    one = pvec.one_d
    event = ShuffleSumRelease(users_per_call=b, dimension=records.d, grid=one.g, trials_per_user=one.b, p=one.p,
                              Delta2=pvec.Delta2, rounds=T, max_record_uses=uses, call_epsilon=pvec.eps,
                              call_delta=pvec.delta, calibrated_by=pvec.calibrated_by)
    return dataclasses.replace(out, events=(event,))


def run_central(records: Records, loss, *, T: int, b: int, eta: float, L: float, radius: float, sigma: float,
                rng: np.random.Generator, M_range=None, grad_F=None) -> RunOutput:
    """The same SGD with a trusted curator: the batch's clipped gradients summed exactly, plus Gaussian noise
    N(0, (b sigma)^2 I) on the sum, i.e. N(0, sigma^2 I) on the mean gradient (the central baseline)."""
    out, uses = _sgd(records, loss, T=T, b=b, eta=eta, L=L, radius=radius, rng=rng,
                     release=lambda g, exact: mechanisms.gaussian(exact, b * sigma, rng=rng))
    event = GaussianRelease(sigma=sigma, batch_size=b, pool_size=records.n, sampling="disjoint", rounds=T,
                            max_record_uses=uses)
    # the noise test reads the noise on the released mean gradient: sum noise / b
    return dataclasses.replace(out, events=(event,), noise_sq=out.noise_sq / b**2)


def run_local(records: Records, loss, *, T: int, b: int, eta: float, L: float, radius: float, sigma: float,
              rng: np.random.Generator, M_range=None, grad_F=None) -> RunOutput:
    """The same SGD in the local model: user u sends g_u + N(0, sigma^2 I) (its own noise, drawn on its side,
    so the server never holds a clean gradient) and the server sums the b messages of the round."""
    out, uses = _sgd(records, loss, T=T, b=b, eta=eta, L=L, radius=radius, rng=rng,
                     release=lambda g, exact: mechanisms.gaussian(g, sigma, rng=rng).sum(axis=1))
    # each user is a "silo" of one record releasing one message (batch 1): the event says exactly that, so the
    # accountant and the audit see a single message with sensitivity 2L, whatever b the server averages over
    event = GaussianRelease(sigma=sigma, batch_size=1, pool_size=1, sampling="disjoint", rounds=T, max_record_uses=uses)
    # the noise test reads the noise of one message: the sum carries b of them
    return dataclasses.replace(out, events=(event,), noise_sq=out.noise_sq / b, noise_coords=out.noise_coords)


def _sgd(records: Records, loss, *, T: int, b: int, eta: float, L: float, radius: float, rng: np.random.Generator,
         release: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> tuple[RunOutput, int]:
    """One pass of projected SGD over T disjoint batches of b fresh users; ``release(g, exact)`` turns a round's
    clipped gradients g (trials, b, d), whose exact sum is ``exact`` (trials, d), into the estimate of their sum the
    server gets (the release's error, measured, is the estimate minus ``exact``: for the central baseline its noise
    itself). Output: the average of theta_0..T-1."""
    if records.N != 1:
        raise ValueError(f"this SGD runs on one pool of n users (N = 1), not N = {records.N} silos")
    trials, n, d = records.trials, records.n, records.d
    w = np.zeros((trials, d))
    avg = np.zeros((trials, d))
    batches = sampling.disjoint_batches(rng, (trials, 1), n, b, T, fresh=records.fresh)   # (T, trials, 1, b)
    uses = multiplicity_per_trial(np.moveaxis(batches, 0, -2).reshape(trials, 1, -1))
    err_sq = np.zeros(trials)
    for t in range(T):
        avg += (w - avg) / (t + 1)                                          # running mean of theta_0 .. theta_t
        X, y = records.take(batches[t])
        X, y = X[:, 0], y[:, 0]                                             # (trials, b, d), (trials, b)
        g, exact = clipped_record_grads(loss, w, X, y, L)
        total = release(g, exact)                                           # the server's estimate of the sum
        err = total - exact
        err_sq += np.einsum("td,td->t", err, err)
        w = mechanisms.project_ball(w - eta * total / b, radius)
    out = RunOutput(w=avg, events=(), noise_sq=err_sq, noise_coords=np.full(trials, T * d), grad_err=None,
                    rounds=T, silo_rounds=np.full(trials, T), record_uses=uses,
                    extra={"sum_error_sq": err_sq / max(T, 1)})
    return out, int(uses.max())
