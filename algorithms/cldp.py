"""Algorithm 1 of seed 001 (Girgis, Data & Diggavi): CLDP-SGD, A_cldp (L93-116).

n clients hold one record each. Every round t = 1..T a uniform k-subset of the clients (without replacement)
computes its gradients at theta_t, clips them in l_p norm to C (l_inf here), and sends them through the
eps0-LDP randomizer R_p; the shuffler hands the server the multiset of the k messages; the server averages
the decoded messages and takes a projected step theta_{t+1} = Proj_C(theta_t - eta_t gbar_t) (the seed's
OCR drops the minus sign of this descent step, L116), eta_t = D / (G sqrt(t)) (Thm 3, L181). Output: theta_T.

The shuffler is simulated by what it lets through: the server's average depends on the messages only
through their multiset (per trial, one bincount of coordinate and sign), so no client's identity ever
reaches the server's side of the code. Vectorised over trials. Instrumentation per trial, over all
messages of the run: mean ||R(x) - x||^2 (Remark 1's variance), mean <R(x) - x, x/||x||> (unbiasedness),
the fraction of gradients the clipping changed.
"""
from __future__ import annotations

import math

import numpy as np

from algorithms import mechanisms, sampling
from algorithms.data import Records
from algorithms.events import ShuffledLDPRelease
from algorithms.ldp import RANDOMIZERS, clip_inf_norms
from algorithms.result import RunOutput


def run(records: Records, loss, *, T: int, k: int, eps_ldp: float, C: float, G: float, radius: float,
        randomizer: str, rng: np.random.Generator, M_range=None, grad_F=None,
        snapshots: tuple[int, ...] = ()) -> RunOutput:
    """Run CLDP-SGD for every trial of ``records`` (one pool: N = 1, n clients). ``snapshots``: rounds (in 1..T)
    after which each trial's iterate is kept, returned as ``extra['snapshots']`` (trials, len(snapshots), d) in the
    order given: the model an accountant that stops the same run earlier would have released."""
    if records.N != 1:
        raise ValueError(f"CLDP-SGD runs on one pool of n clients (N = 1), not N = {records.N} silos")
    R_p = RANDOMIZERS.get(randomizer)
    trials, n, d = records.trials, records.n, records.d
    D = 2 * radius
    w = np.zeros((trials, d))
    uses = np.zeros((trials, n), dtype=np.int64)
    var_sum, bias_sum, bias_sq, clipped = np.zeros(trials), np.zeros(trials), np.zeros(trials), np.zeros(trials)
    s = R_p.scale(d, eps_ldp, C)                                               # the decoded messages' length
    if any(not 1 <= r <= T for r in snapshots):
        raise ValueError(f"snapshot rounds must lie in 1..T = {T}: {list(snapshots)}")
    kept = np.zeros((trials, len(snapshots), d))
    rows = (np.arange(trials * k) * d).reshape(trials, k)                       # each message's row in g_c, flat
    for t in range(1, T + 1):
        idx = sampling.k_subsets(rng, (trials, 1), n, k)                     # (T, 1, k)
        _count(uses, idx[:, 0, :])
        X, y = records.take(idx)
        X, y = X[:, 0], y[:, 0]                                                # (T, k, d), (T, k)
        g = loss.record_grads(w, X, y)
        g_c, g_inf = clip_inf_norms(g, C)
        clipped += (g_inf > C).sum(axis=-1)
        msg = R_p.sample(g_c, eps_ldp, C, rng)
        gbar = R_p.decode_sum(msg, d, eps_ldp, C) / k                          # what the server computes
        # ||R(x) - x||^2 = s^2 - 2 s b' x_J + ||x||^2 and <R(x) - x, x> = s b' x_J - ||x||^2, per message
        # (x_J read by one flat gather; s b' x_J computed once: 2 s b' x_J = 2 (s b' x_J) exactly, a power of 2)
        xj = np.take(np.ascontiguousarray(g_c).reshape(-1), rows + msg.coord)
        sq = np.einsum("tkd,tkd->tk", g_c, g_c)
        sbx = s * msg.bit * xj
        var_sum += (s * s - 2 * sbx + sq).sum(axis=-1)
        norm = np.sqrt(sq)
        proj = np.where(norm > 0, (sbx - sq) / np.maximum(norm, 1e-300), 0.0)
        bias_sum += proj.sum(axis=-1)
        bias_sq += (proj * proj).sum(axis=-1)
        w = mechanisms.project_ball(w - D / (G * math.sqrt(t)) * gbar, radius)
        for j, r in enumerate(snapshots):
            if r == t:
                kept[:, j] = w
    messages = T * k
    event = ShuffledLDPRelease(eps_ldp=eps_ldp, batch_size=k, pool_size=n, randomizer=randomizer, clip=C,
                               dimension=d, rounds=T, max_record_uses=int(uses.max()))
    per_trial = uses.max(axis=1)
    extra = {"ldp_variance": var_sum / messages, "ldp_bias": bias_sum / messages, "ldp_bias_sq": bias_sq / messages,
             "clipped_fraction": clipped / messages}
    if snapshots:
        extra["snapshots"] = kept
    return RunOutput(w=w, events=(event,), noise_sq=var_sum, noise_coords=np.full(trials, messages * d),
                     grad_err=None, rounds=T, silo_rounds=np.full(trials, T), record_uses=per_trial, extra=extra)


def _count(uses: np.ndarray, idx: np.ndarray) -> None:
    """uses[t, idx[t, j]] += 1 for every trial t and position j (indices distinct within a trial)."""
    trials, n = uses.shape
    uses += np.bincount((np.arange(trials)[:, None] * n + idx).ravel(), minlength=trials * n).reshape(trials, n)
