"""Algorithm 4 of seed 000 (Cheu, Joseph, Mao & Peng): P_AGD, sequentially interactive shuffle-private AC-SA
(L205-216, Thm 4.3 L199-201), its Moreau-smoothed use for non-smooth losses (Thm 4.7, L224-240) and the restarts
for strongly convex losses (Thm 4.8, L242-252). Lnnn = line of ../shared/seeds/000_2468e2e5d70af056.txt.

n users with one record each; round t takes b fresh users (each user speaks once). With theta_1^ag = theta_1 = w0:
    alpha_t    = 2/(t+2),  L_t = ((T+2)^{3/2} sigma/D + beta)/(t+1)                     (Thm 4.3, L199)
    theta^md   = alpha_t theta_t + (1 - alpha_t) theta^ag_t                             (line 3)
    gbar_t     = P_VEC(clip_L(grad l(theta^md, x_{t,1})), ..., clip_L(grad l(theta^md, x_{t,b}))) / b   (line 4)
    theta_{t+1} = argmin_Theta <gbar_t, theta - theta_t> + (L_t/2)||theta - theta_t||^2
                = Proj_Theta(theta_t - gbar_t / L_t)                                    (line 5, closed form)
    theta^ag_{t+1} = alpha_t theta_{t+1} + (1 - alpha_t) theta^ag_t                      (line 6)
output theta^ag_{T+1} (line 8, L216).

Pseudo-code corrections (the OCR dropped every minus sign of Algorithm 4):
  1. line 3 (L211) prints "alpha_t theta_t + (1 alpha_t) theta_t^ag": read (1 - alpha_t);
  2. line 5 (L213) prints "<gbar_t, theta theta_t> + (L_t/2)||theta theta_t||^2": read theta - theta_t (both places); the
     minimiser over the ball Theta is then the projection of theta_t - gbar_t/L_t;
  3. line 6 (L214) prints "(1 alpha_t) theta_t^ag": read (1 - alpha_t);
  4. Thm 4.3 names the output "theta_{t+1}^ag" (L199): the algorithm's output is theta_{T+1}^ag (line 8, L216).
Lemma 4.4 says "variance (at most) sigma" (L218) where B.3 (L613) and the L_t formula mean the variance sigma^2.

As in P_SGD (algorithms/shuffle_sgd.py), the users' gradients are clipped to l_2 norm ``L_clip`` before P_VEC (its
input condition; a no-op when the loss's constant is right), and P_VEC's count sampler costs O(b d) draws per round
whatever its binomial size. ``phases`` > 1 is Thm 4.8's reduction: phase j runs the same T rounds on its own fresh
users (disjoint from every other phase's) and starts at phase j-1's output.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from algorithms import mechanisms, sampling, shuffle_sum
from algorithms.data import Records
from algorithms.events import ShuffleSumRelease
from algorithms.result import RunOutput, multiplicity_per_trial
from algorithms.shuffle_sgd import clipped_record_grads


def schedule(T: int, K: float) -> tuple[np.ndarray, np.ndarray]:
    """(L_t, alpha_t) for t = 1..T: L_t = K/(t+1) with K = (T+2)^{3/2} sigma/D + beta, alpha_t = 2/(t+2) (L199)."""
    t = np.arange(1, T + 1, dtype=np.float64)
    return K / (t + 1), 2.0 / (t + 2)


def lt_numerator(*, T: int, sigma: float, D: float, beta: float) -> float:
    """(T+2)^{3/2} sigma/D + beta, the numerator of Thm 4.3's L_t (L199)."""
    return (T + 2) ** 1.5 * sigma / D + beta


def run(records: Records, loss, *, T: int, b: int, K: float, phases: int, L_clip: float, radius: float,
        pvec: shuffle_sum.PVecParams, claim: tuple[float, float], rng: np.random.Generator, M_range=None,
        grad_F=None, phase_K: tuple[float, ...] | None = None,
        phase_beta_s: tuple[float, ...] | None = None, phase_b: tuple[int, ...] | None = None,
        phase_T: tuple[int, ...] | None = None,
        phase_pvec: tuple[shuffle_sum.PVecParams, ...] | None = None) -> RunOutput:
    """P_AGD (``phases`` = 1) or Thm 4.8's restarts of it, every round's clipped gradients summed by P_VEC.
    ``claim``: the (eps, delta) P_VEC's parameters were calibrated for (each call's = the run's: a user joins one call),
    which the event declares so that the privacy check also tests the parameters as run against Thm 3.2's; a P_VEC
    calibrated by an accountant instead (``pvec.calibrated_by``) declares that accountant and no per-call target.
    ``phase_K`` / ``phase_beta_s``: Thm 4.8's phases with their own L_t numerator and (Moreau envelope) smoothing,
    one per phase (the proof's shrinking D_i); None: every phase uses ``K`` and ``loss`` as given.
    ``phase_b`` / ``phase_T`` / ``phase_pvec``: Thm 4.8's smooth phases, whose batch b_i (Thm 4.3's b at D_i) and
    hence rounds T_i and P_VEC (calibrated for b_i users) change from phase to phase (``_agd_phases``); None: every
    phase runs ``T`` rounds of ``b`` users through ``pvec``."""
    if phase_b is not None:
        if phase_T is None or phase_pvec is None or phase_K is None:
            raise ValueError("per-phase batches need their rounds, P_VEC parameters and L_t numerators")
        return _agd_phases(records, loss, b=phase_b, T=phase_T, K=phase_K, pvec=phase_pvec, L_clip=L_clip,
                           radius=radius, rng=rng, grad_F=grad_F, claim=claim,
                           release=lambda g, pv: shuffle_sum.pvec(g, pv, rng))
    return _agd(records, loss, T=T, b=b, K=K, phases=phases, L_clip=L_clip, radius=radius, rng=rng, grad_F=grad_F,
                release=lambda g: shuffle_sum.pvec(g, pvec, rng), pvec=pvec, claim=claim, phase_K=phase_K,
                phase_beta_s=phase_beta_s)


def _agd(records: Records, loss, *, T: int, b: int, K: float, phases: int, L_clip: float, radius: float,
         rng: np.random.Generator, grad_F, release: Callable[[np.ndarray], np.ndarray],
         pvec: shuffle_sum.PVecParams, claim: tuple[float, float], phase_K: tuple[float, ...] | None = None,
         phase_beta_s: tuple[float, ...] | None = None) -> RunOutput:
    if records.N != 1:
        raise ValueError(f"P_AGD runs on one pool of n users (N = 1), not N = {records.N} silos")
    trials, d = records.trials, records.d
    rounds = T * phases
    # every round of every phase gets its own b users: one random order of the n users, cut into disjoint batches
    batches = sampling.disjoint_batches(rng, (trials, 1), records.n, b, rounds,
                                         fresh=records.fresh)      # (rounds, trials, 1, b)
    uses = multiplicity_per_trial(np.moveaxis(batches, 0, -2).reshape(trials, 1, -1))
    for per in (phase_K, phase_beta_s):
        if per is not None and len(per) != phases:
            raise ValueError(f"{len(per)} per-phase values for {phases} phases")
    if phase_beta_s is not None and not hasattr(loss, "beta_s"):
        raise ValueError("per-phase smoothing needs a Moreau envelope loss (a beta_s field)")
    err_sq = np.zeros(trials)
    grad_err = np.zeros(trials) if grad_F is not None else None
    ag = np.zeros((trials, d))                                  # w0 = 0, the centre of Theta
    for phase in range(phases):
        Lt, alpha = schedule(T, K if phase_K is None else phase_K[phase])
        ph_loss = loss if phase_beta_s is None else dataclasses.replace(loss, beta_s=phase_beta_s[phase])
        theta = ag.copy()                                       # theta_1 = theta_1^ag = the previous output
        for t in range(T):
            theta, ag = _round(records, ph_loss, batches[phase * T + t], theta, ag, alpha[t], Lt[t], L_clip, radius,
                               release, grad_F, err_sq, grad_err)
    return _output(ag, (_release(pvec, b, d, rounds, int(uses.max()), claim),), err_sq, grad_err, rounds, uses)


def _release(pv: shuffle_sum.PVecParams, users: int, d: int, rounds: int, most: int,
             claim: tuple[float, float]) -> ShuffleSumRelease:
    """The event of ``rounds`` P_VEC calls of ``users`` users at parameters ``pv``; ``most``: the most calls one user
    joined over the run. A P_VEC calibrated by an accountant declares it and no per-call target (see ``run``)."""
    one = pv.one_d
    return ShuffleSumRelease(users_per_call=users, dimension=d, grid=one.g, trials_per_user=one.b, p=one.p,
                             Delta2=pv.Delta2, rounds=rounds, max_record_uses=most,
                             call_epsilon=None if pv.calibrated_by else claim[0],
                             call_delta=None if pv.calibrated_by else claim[1], calibrated_by=pv.calibrated_by)


def _round(records: Records, loss, batch: np.ndarray, theta: np.ndarray, ag: np.ndarray, a: float, Lt: float,
           L_clip: float, radius: float, release: Callable[[np.ndarray], np.ndarray], grad_F, err_sq: np.ndarray,
           grad_err: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """One AC-SA round of P_AGD on the batch's users (trials, 1, b): the clipped gradients at theta^md summed by
    ``release`` (P_VEC), the release's error (and the oracle's, with grad_F) added to the running sums in place;
    the next (theta, theta^ag)."""
    md = a * theta + (1 - a) * ag
    X, y = records.take(batch)
    X, y = X[:, 0], y[:, 0]                                     # (trials, b, d), (trials, b)
    g, exact = clipped_record_grads(loss, md, X, y, L_clip)
    total = release(g)                                          # the analyzer's estimate of the batch's sum
    err = total - exact
    err_sq += np.einsum("td,td->t", err, err)
    gbar = total / batch.shape[-1]
    if grad_err is not None:
        diff = gbar - grad_F(md)
        grad_err += np.einsum("td,td->t", diff, diff)
    theta = mechanisms.project_ball(theta - gbar / Lt, radius)
    return theta, a * theta + (1 - a) * ag


def _output(ag: np.ndarray, events: tuple, err_sq: np.ndarray, grad_err: np.ndarray | None, rounds: int,
            uses: np.ndarray) -> RunOutput:
    trials, d = ag.shape
    return RunOutput(w=ag, events=events, noise_sq=err_sq, noise_coords=np.full(trials, rounds * d),
                     grad_err=None if grad_err is None else grad_err / max(rounds, 1), rounds=rounds,
                     silo_rounds=np.full(trials, rounds), record_uses=uses,
                     extra={"sum_error_sq": err_sq / max(rounds, 1)})


def user_order(rng: np.random.Generator, trials: int, n: int, *, fresh: bool = False) -> np.ndarray:
    """A uniformly random order of the n users per trial: (trials, 1, n) (the tests plant faults here); ``fresh``:
    as sampling.random_order's."""
    return sampling.random_order(rng, (trials, 1), n, fresh=fresh)


def _agd_phases(records: Records, loss, *, b: tuple[int, ...], T: tuple[int, ...], K: tuple[float, ...],
                pvec: tuple[shuffle_sum.PVecParams, ...], L_clip: float, radius: float, rng: np.random.Generator,
                grad_F, claim: tuple[float, float],
                release: Callable[[np.ndarray, shuffle_sum.PVecParams], np.ndarray]) -> RunOutput:
    """Thm 4.8's phases with a batch of their own: phase j runs T[j] rounds of b[j] users, each round's gradients
    summed by P_VEC at pvec[j] (calibrated for b[j] users), L_t = K[j]/(t+1). The users: one random order of the n
    per trial, cut into len(b) disjoint groups of floor(n/k); phase j's batches are the first T[j] b[j] users of
    group j (so every user joins at most one call of one phase). One event per phase: each its own P_VEC
    parameters, all with the run's max_record_uses (the most calls one user joined over the whole run), so that
    the accountant can compose them in parallel only when no user is shared (verifiers/accountants/pvec.py)."""
    if records.N != 1:
        raise ValueError(f"P_AGD runs on one pool of n users (N = 1), not N = {records.N} silos")
    phases = len(b)
    if not (len(T) == len(K) == len(pvec) == phases):
        raise ValueError(f"per-phase values of unequal lengths: b {len(b)}, T {len(T)}, K {len(K)}, "
                         f"pvec {len(pvec)}")
    trials, d, n = records.trials, records.d, records.n
    group = n // phases
    for bj, Tj in zip(b, T):
        if bj < 1 or Tj < 1 or bj * Tj > group:
            raise ValueError(f"T_j b_j = {Tj}*{bj} users exceed a phase's group of {group}: batches cannot be disjoint")
    order = user_order(rng, trials, n, fresh=records.fresh)
    batches = [np.moveaxis(order[..., j * group: j * group + T[j] * b[j]].reshape(trials, 1, T[j], b[j]), -2, 0)
               for j in range(phases)]                             # phase j: (T_j, trials, 1, b_j)
    uses = multiplicity_per_trial(np.concatenate([np.moveaxis(x, 0, -2).reshape(trials, 1, -1) for x in batches],
                                                 axis=-1))
    rounds = sum(T)
    err_sq = np.zeros(trials)
    grad_err = np.zeros(trials) if grad_F is not None else None
    ag = np.zeros((trials, d))                                  # w0 = 0, the centre of Theta
    for j in range(phases):
        Lt, alpha = schedule(T[j], K[j])
        theta = ag.copy()                                       # theta_1 = theta_1^ag = the previous output
        def send(g: np.ndarray, pv: shuffle_sum.PVecParams = pvec[j]) -> np.ndarray:   # phase j's P_VEC
            return release(g, pv)

        for t in range(T[j]):
            theta, ag = _round(records, loss, batches[j][t], theta, ag, alpha[t], Lt[t], L_clip, radius, send,
                               grad_F, err_sq, grad_err)
    most = int(uses.max())
    events = tuple(_release(pv, bj, d, Tj, most, claim) for bj, Tj, pv in zip(b, T, pvec))
    return _output(ag, events, err_sq, grad_err, rounds, uses)
