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

from algorithms import kernels, ldp, mechanisms, sampling
from algorithms.data import Records
from algorithms.events import ShuffledLDPRelease
from algorithms.ldp import RANDOMIZERS, clip_inf_norms
from algorithms.losses import LinearModelLoss
from algorithms.result import RunOutput
from algorithms.streams import TrialStreams

BLOCK_UNIFORMS = 1 << 20        # uniforms drawn per block of rounds (8 MB, or one round if that is larger); any size
#                                 gives the same numbers


def run(records: Records, loss, *, T: int, k: int, eps_ldp: float, C: float, G: float, radius: float,
        randomizer: str, rng: np.random.Generator, M_range=None, grad_F=None,
        snapshots: tuple[int, ...] = ()) -> RunOutput:
    """Run CLDP-SGD for every trial of ``records`` (one pool: N = 1, n clients). ``snapshots``: rounds (in 1..T)
    after which each trial's iterate is kept, returned as ``extra['snapshots']`` (trials, len(snapshots), d) in the
    order given: the model an accountant that stops the same run earlier would have released."""
    if records.N != 1:
        raise ValueError(f"CLDP-SGD runs on one pool of n clients (N = 1), not N = {records.N} silos")
    R_p = RANDOMIZERS.get(randomizer)
    if not 0 < C < math.inf:
        raise ValueError(f"the clipping bound C must be positive and finite, not {C}")
    trials, n, d = records.trials, records.n, records.d
    w = np.zeros((trials, d))
    uses = np.zeros((trials, n), dtype=np.int64)
    var_sum, bias_sum, bias_sq, clipped = np.zeros(trials), np.zeros(trials), np.zeros(trials), np.zeros(trials)
    s = R_p.scale(d, eps_ldp, C)                                               # the decoded messages' length
    if any(not 1 <= r <= T for r in snapshots):
        raise ValueError(f"snapshot rounds must lie in 1..T = {T}: {list(snapshots)}")
    kept = np.zeros((trials, len(snapshots), d))
    if isinstance(rng, TrialStreams) and _fused(records, loss, R_p):
        stats = np.zeros((trials, 4))
        _run_fused(records, loss, rng, w, uses, T=T, k=k, eps_ldp=eps_ldp, C=C, G=G, radius=radius, s=s,
                   snapshots=snapshots, kept=kept, stats=stats)
        var_sum, bias_sum, bias_sq, clipped = stats.T
    else:
        _run_numpy(records, loss, R_p, rng, w, uses, T=T, k=k, eps_ldp=eps_ldp, C=C, G=G, radius=radius, s=s,
                   snapshots=snapshots, kept=kept, sums=(var_sum, bias_sum, bias_sq, clipped))
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
    """uses[t, idx[t, j]] += 1 for every trial t and position j (an index repeated within a trial counts each time)."""
    trials, n = uses.shape
    uses += np.bincount((np.arange(trials)[:, None] * n + idx).ravel(), minlength=trials * n).reshape(trials, n)


def _fused(records: Records, loss, R_p) -> bool:
    """Whether the compiled rounds (``kernels.cldp_rounds``) may run: held records, a loss with a kernel code whose
    record gradients are the base class's as loaded (also not patched onto the base class), the R_inf randomizer as
    written, and the subset sampler, clip and projection this module was loaded with. Anything else (another or a
    patched randomizer, loss, clip, projection or sampler, e.g. a planted fault) runs the numpy rounds as written.
    They also need the engine's per-trial streams, whose draws for several rounds at once are each round's own."""
    return (loss.kernel is not None and type(loss).record_grads is _AS_LOADED["record_grads"] and records.held
            and bool(getattr(R_p, "fused", False)) and clip_inf_norms is _AS_LOADED["clip"]
            and mechanisms.project_ball is _AS_LOADED["project"] and sampling.k_subsets is _AS_LOADED["subsets"])


def _run_fused(records: Records, loss, rng: TrialStreams, w: np.ndarray, uses: np.ndarray, *, T: int, k: int,
               eps_ldp: float, C: float, G: float, radius: float, s: float, snapshots: tuple[int, ...],
               kept: np.ndarray, stats: np.ndarray) -> None:
    """The rounds of ``_run_numpy`` compiled, a block of rounds per call: each round's uniforms (its subset's, then
    J's, the rounding's and the response's) are the next ones of each trial's stream, so a block's are one draw."""
    trials, n = uses.shape
    code, p = loss.kernel
    m0 = sampling.subset_uniforms(n, k)
    per_round = m0 + 3 * k
    block = max(1, BLOCK_UNIFORMS // (trials * per_round))
    snap = np.asarray(snapshots, dtype=np.int64)
    keep = ldp.keep_probability(eps_ldp)
    for t0 in range(1, T + 1, block):
        B = min(block, T + 1 - t0)
        U = rng.random((trials, B * per_round)).reshape(trials, B, per_round)
        idx = sampling.subsets_from_uniforms(U[:, :, :m0], n, k)                 # (trials, B, k)
        _count(uses, idx.reshape(trials, B * k))
        X, y, flat = records.held_rows(idx.reshape(trials, 1, B * k))
        kernels.cldp_rounds(X, y, flat.reshape(trials, B, k), U[:, :, m0:], w, t0, code, p, float(loss.mu), C, s,
                            keep, 2 * radius, G, radius, snap, kept, stats)


def _run_numpy(records: Records, loss, R_p, rng, w: np.ndarray, uses: np.ndarray, *, T: int, k: int, eps_ldp: float,
               C: float, G: float, radius: float, s: float, snapshots: tuple[int, ...], kept: np.ndarray,
               sums: tuple[np.ndarray, ...]) -> None:
    """The rounds one at a time through numpy (any loss, randomizer and generator); w, uses, kept and sums (the
    trials' running sums of the instrumentation) in place."""
    trials, n = uses.shape
    d = w.shape[1]
    D = 2 * radius
    var_sum, bias_sum, bias_sq, clipped = sums
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
        w[:] = mechanisms.project_ball(w - D / (G * math.sqrt(t)) * gbar, radius)
        for j, r in enumerate(snapshots):
            if r == t:
                kept[:, j] = w


# what the compiled rounds encode, as this module found them (``_fused``)
_AS_LOADED = {"clip": clip_inf_norms, "project": mechanisms.project_ball, "subsets": sampling.k_subsets,
              "record_grads": LinearModelLoss.record_grads}
