"""Seed 004's shuffle-DP algorithms (Lowy & Razaviyayn, section 5 and App. G). Lnnn = line of
../shared/seeds/004_66f3b713b54f102e.txt.

``run_shuffled_mbsgd``: Shuffled Noisy MB-SGD (Thm 5.1 / G.1, L238-248, L1160-1190): Algorithm 2 with M_r = M silos
every round and K = 1 (L1166): each of the M silos sends grad f(w_r, x) + N(0, sigma^2 I_d) for one uniform record of
its own; a shuffler permutes the M reports (L238) and the server averages them. The average does not depend on the
order, so the simulation sums the reports directly (a permutation would change nothing the server computes; what
the shuffler changes is what the server can attribute, which the accountant, verifiers/accountants/shuffled_gaussian.py, prices).

``run_sdp_acsa``: SDP Accelerated Noisy MB-SGD (Algorithm 6, L1251-1271): the one-pass Algorithm 1 (algorithms/acsa.py)
where the M_r silos send their K un-noised per-record gradients at w_md and the server receives
g = P_vec(all M_r K gradients; eps, delta; L) / (M_r K) (line 8, L1262), P_vec being seed 000's vector-sum protocol
(algorithms/shuffle_sum.py; seed 004's Algs. 4-5 at L1216-1249 are the same protocol). Every record is read once.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from algorithms import acsa, mbsgd, sampling, shuffle_sum
from algorithms.data import Records
from algorithms.events import GaussianRelease, ShuffledGaussianRelease, ShuffleSumRelease
from algorithms.result import RunOutput, multiplicity_per_trial
from algorithms.shuffle_sgd import clipped_record_grads


def run_shuffled_mbsgd(records: Records, loss, *, R: int, sigma: float, eta: float, radius: float,
                       M_range: tuple[int, int], rng: np.random.Generator, stich_mu: float = 0.0,
                       grad_F=None) -> RunOutput:
    """Alg. 2 with K = 1 and M_r = M fixed (Thm G.1's setting); the event names M, N and n for the accountant."""
    if M_range[0] != M_range[1]:
        raise ValueError(f"Shuffled Noisy MB-SGD needs M_r = M fixed (Thm 5.1, L238); participation is {M_range}")
    out = mbsgd.run(records, loss, R=R, K=1, sigma=sigma, eta=eta, radius=radius, M_range=M_range, rng=rng,
                    stich_mu=stich_mu, grad_F=grad_F)
    g = out.events[0]
    assert isinstance(g, GaussianRelease)           # Algorithm 2's one release
    event = ShuffledGaussianRelease(sigma=sigma, silos_per_round=M_range[0], silos=records.N, pool_size=records.n,
                                    rounds=R, max_record_uses=g.max_record_uses)
    # every round ran (M_r = M): the accountant composes R rounds, each reading silo a's record b with prob. M/(N n)
    return dataclasses.replace(out, events=(event,), silo_rounds=np.full(records.trials, R))


def run_sdp_acsa(records: Records, loss, *, stages: tuple[acsa.Stage, ...], mu: float, lam: float, K: int, L: float,
                 radius: float, pvec: shuffle_sum.PVecParams, M_range: tuple[int, int], rng: np.random.Generator,
                 grad_F=None) -> RunOutput:
    """Alg. 6 (one pass): AC-SA steps as algorithms/acsa.py, the gradient from P_vec over the round's N K records.
    Gradients are clipped to norm L before P_vec (a no-op for an L-Lipschitz loss; P_vec refuses larger inputs)."""
    T, N, n, d = records.trials, records.N, records.n, records.d
    if M_range != (N, N):
        raise ValueError(f"Alg. 6 is run with every silo in every round here (M = N, Thm 5.2); participation {M_range}")
    total = sum(s.rounds for s in stages)
    batches = sampling.disjoint_batches(rng, (T, N), n, K, total, fresh=records.fresh)
    uses = multiplicity_per_trial(np.moveaxis(batches, 0, -2).reshape(T, N, -1))
    err_sq = np.zeros(T)
    grad_err = np.zeros(T) if grad_F is not None else None
    users = N * K
    rounds = iter(batches)

    def gradient(w_md: np.ndarray) -> np.ndarray:
        nonlocal err_sq, grad_err
        X, y = records.take(next(rounds))                               # (T, N, K, d), (T, N, K)
        per, exact = clipped_record_grads(loss, w_md, X, y, L)
        total_est = shuffle_sum.pvec(per.reshape(T, users, d), pvec, rng)   # the analyzer's estimate of the sum
        err = total_est - exact
        err_sq += np.einsum("td,td->t", err, err)
        g = total_est / users
        if grad_err is not None and grad_F is not None:
            diff = g - grad_F(w_md)
            grad_err += np.einsum("td,td->t", diff, diff)
        return g

    w_ag = acsa.iterate(stages, mu=mu, lam=lam, radius=radius, w_ag=np.zeros((T, d)), gradient=gradient)
    one = pvec.one_d
    event = ShuffleSumRelease(users_per_call=users, dimension=d, grid=one.g, trials_per_user=one.b, p=one.p,
                              Delta2=pvec.Delta2, rounds=total, max_record_uses=int(uses.max()), call_epsilon=pvec.eps,
                              call_delta=pvec.delta)
    return RunOutput(w=w_ag, events=(event,), noise_sq=err_sq, noise_coords=np.full(T, total * d),
                     grad_err=None if grad_err is None else grad_err / max(total, 1), rounds=total,
                     silo_rounds=np.full(T, total), record_uses=uses, extra={"sum_error_sq": err_sq / max(total, 1)})
