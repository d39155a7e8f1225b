"""Algorithm 2 of seed 004 (Lowy & Razaviyayn): Noisy ISRL-DP minibatch SGD.

Every round r = 0..R-1 each available silo draws K distinct records of its own (they return to the
pool afterwards), sends the mean gradient at w_r plus N(0, sigma^2 I_d) noise; the server averages
the M_r messages and takes a projected step. Output: sum_r gamma_r w_r / sum_r gamma_r over
w_0..w_{R-1} (seed L506). Vectorised: all trials and silos advance together.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms import mechanisms, sampling
from algorithms.data import Records
from algorithms.events import GaussianRelease
from algorithms.result import RunOutput
from algorithms.rounds import SiloRounds


def run(records: Records, loss, *, R: int, K: int, sigma: float, eta: float, radius: float,
        M_range: tuple[int, int], rng: np.random.Generator, stich_mu: float = 0.0,
        grad_F=None) -> RunOutput:
    """Run Alg. 2 for every trial of ``records``. ``stich_mu`` > 0 selects Stich's weights
    gamma_r = (1 - mu eta)^{-(r+1)} (Lemma D.5), else the uniform average (Lemma D.6(1))."""
    T, N, n = records.trials, records.N, records.n
    d = records.d
    w = np.zeros((T, d))
    avg = np.zeros((T, d))
    silos = SiloRounds(records, loss, sigma=sigma, M_range=M_range, rng=rng, grad_F=grad_F)
    log_q = math.log1p(-stich_mu * eta) if stich_mu > 0 else 0.0
    for r in range(R):
        g = silos.aggregate(w, lambda: sampling.k_subsets(rng, (T, N), n, K))
        # running weighted average of w_0..w_r: weight of w_r among the first r+1 is
        # gamma_r / Gamma_r = (1 - q) / (1 - q^{r+1}) with q = 1 - mu eta (uniform when mu = 0)
        share = 1.0 / (r + 1) if log_q == 0.0 else -math.expm1(log_q) / -math.expm1((r + 1) * log_q)
        avg += share * (w - avg)
        w = mechanisms.project_ball(w - eta * g, radius)
    event = GaussianRelease(sigma=sigma, batch_size=K, pool_size=n, sampling="without_replacement",
                            rounds=int(silos.uses.max()), max_record_uses=int(silos.uses.max()))
    per_trial = silos.uses.max(axis=1)
    return RunOutput(w=avg, events=(event,), noise_sq=silos.noise_sq, noise_coords=silos.noise_coords,
                     grad_err=None, extra=silos.measured(R), rounds=R, silo_rounds=per_trial, record_uses=per_trial)
