"""Algorithm 1 of seed 004: Accelerated Noisy MB-SGD (the AC-SA method of Ghadimi & Lan).

Round r of a stage (r restarts at 1 in each stage, seed App. E.1):
    w_md = [(1-a)(mu+eta) w_ag + a((1-a)mu+eta) w] / (eta + (1-a^2) mu)          (seed L207)
    g    = (1/M_r) sum_{i in S_r} [(1/K) sum_j grad f(w_md, x_ij) + u_i]            (L210)
    w    = argmin_W { a[<g,w> + (mu/2)||w_md - w||^2] + [(1-a)mu/2 + eta/2] ||w_prev - w||^2 }
           (Alg. 6 line 9, seed L1267; Alg. 1's line 9 is garbled), in closed form the projection of
           z = [a mu w_md + ((1-a)mu + eta) w_prev - a g] / (mu + eta)   (derived)
    w_ag = a w + (1-a) w_ag                                                           (L213)
with a = alpha_r = 2/(r+1) and eta = eta_r = 4 v / (r(r+1)). Output: w_ag of the last round.

One-pass (SCO): the batches are disjoint, R K <= n (seed L176, L946). ERM: a fresh K-subset each round.
``lam`` > 0 adds the regulariser (lam/2)||w - w0||^2 of Thm E.1 (w0 = 0 here); ``mu`` is the
strong-convexity modulus the prox step uses (the loss's mu plus lam).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from algorithms import mechanisms, sampling
from algorithms.data import Records
from algorithms.events import GaussianRelease
from algorithms.result import RunOutput, multiplicity_per_trial
from algorithms.rounds import SiloRounds


@dataclass(frozen=True)
class Stage:
    rounds: int
    v: float        # the step parameter v_k: eta_r = 4 v_k / (r (r + 1))


def iterate(stages: tuple[Stage, ...], *, mu: float, lam: float, radius: float, w_ag: np.ndarray,
            gradient: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The AC-SA rounds of the module docstring over the stages, from ``w_ag``; ``gradient(w_md)`` is the round's
    gradient estimate at the middle point (the caller's mechanism), the regulariser's lam w_md is added here.
    Returns w_ag after the last round."""
    for stage in stages:
        w = w_ag.copy()
        for r in range(1, stage.rounds + 1):
            a = 2.0 / (r + 1)
            eta = 4.0 * stage.v / (r * (r + 1))
            w_md = ((1 - a) * (mu + eta) * w_ag + a * ((1 - a) * mu + eta) * w) / (eta + (1 - a * a) * mu)
            g = gradient(w_md) + lam * w_md                 # gradient of (lam/2)||w - 0||^2 (server side)
            z = (a * mu * w_md + ((1 - a) * mu + eta) * w - a * g) / (mu + eta)
            w = mechanisms.project_ball(z, radius)
            w_ag = a * w + (1 - a) * w_ag
    return w_ag


def run(records: Records, loss, *, stages: tuple[Stage, ...], mu: float, lam: float, K: int, sigma: float,
        radius: float, one_pass: bool, M_range: tuple[int, int], rng: np.random.Generator,
        grad_F=None) -> RunOutput:
    T, N, n, d = records.trials, records.N, records.n, records.d
    total = sum(s.rounds for s in stages)
    w_ag = np.zeros((T, d))
    next_batch: Callable[[], np.ndarray]
    one_pass_uses: np.ndarray | None = None
    if one_pass:
        batches = sampling.disjoint_batches(rng, (T, N), n, K, total, fresh=records.fresh)
        one_pass_uses = multiplicity_per_trial(np.moveaxis(batches, 0, -2).reshape(T, N, -1))
        batch_iter = iter(batches)
        next_batch = lambda: next(batch_iter)  # noqa: E731
    else:
        next_batch = lambda: sampling.k_subsets(rng, (T, N), n, K)  # noqa: E731
    silos = SiloRounds(records, loss, sigma=sigma, M_range=M_range, rng=rng, grad_F=grad_F)
    w_ag = iterate(stages, mu=mu, lam=lam, radius=radius, w_ag=w_ag,
                   gradient=lambda w_md: silos.aggregate(w_md, next_batch))
    silo_rounds = silos.uses.max(axis=1)
    record_uses = one_pass_uses if one_pass_uses is not None else silo_rounds
    event = GaussianRelease(sigma=sigma, batch_size=K, pool_size=n,
                            sampling="disjoint" if one_pass else "without_replacement",
                            rounds=int(silos.uses.max()), max_record_uses=int(record_uses.max()))
    return RunOutput(w=w_ag, events=(event,), noise_sq=silos.noise_sq, noise_coords=silos.noise_coords,
                     grad_err=None, extra=silos.measured(total), rounds=total, silo_rounds=silo_rounds,
                     record_uses=record_uses)
