"""The threat-model baselines on P_SGD's schedule (seed 000, Thm 4.1): the central curator's Gaussian mechanism
and the local model's per-user Gaussian noise."""
from __future__ import annotations

import math
from typing import Mapping

from algorithms import shuffle_sgd
from catalog.base import AlgorithmEntry, ResolutionError, Resolved, int_clamped
from catalog.shuffle_000 import thm41_schedule


def resolve_central_sgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """The central baseline: P_SGD's schedule (our choice, so a comparison isolates the mechanism) with Gaussian
    noise on each batch's mean gradient, sigma^2 = 8 L^2 log(2/delta)/(b^2 eps^2) (seed 000, Lemma C.5, L861-877)."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    b, T, eta = thm41_schedule(c, ov, prov, "; used for the central baseline too (our choice)")
    L = c["L"]
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = math.sqrt(8 * L**2 * math.log(2 / c["delta0"]) / (b**2 * c["eps0"] ** 2))
        prov["sigma"] = "Lemma C.5 (L861-869) at sensitivity 2L/b (L871-877)"
    prov["R"], prov["K"] = "= T (rounds)", "= b (users per round)"
    p.update(b=b, T=T, R=T, K=b, eta=eta, sigma=sigma)
    return Resolved(p, prov, frozenset(ov), dict(T=T, b=b, eta=eta, L=L, radius=c["D"] / 2, sigma=sigma))


LOCAL_MIN_ROUNDS = 10     # local_sgd: b is cut so that the run takes at least this many rounds


def resolve_local_sgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """The local baseline: one pass of SGD over disjoint batches of b users; every user sends its clipped gradient
    plus its own N(0, sigma^2 I), sigma^2 = 8 L^2 log(2/delta)/eps^2 (seed 000's Gaussian mechanism, Lemma C.5
    (L861-869), at one message's sensitivity 2L), so each message is (eps, delta)-DP on its own (local DP)."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    n, d, L, D = int(c["n"]), int(c["d"]), c["L"], c["D"]
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = math.sqrt(8 * L**2 * math.log(2 / c["delta0"]) / c["eps0"] ** 2)
        prov["sigma"] = "Lemma C.5 of seed 000 (L861-869) at one message's sensitivity 2L: each user's own noise"
    if "b" in ov:
        b, prov["b"] = int(ov["b"]), "override"
    else:
        b = int_clamped("b", max(1.0, math.floor(d * sigma**2 / (4 * L**2))), 1, max(1, n // LOCAL_MIN_ROUNDS), prov,
                        f"local b (at most n/{LOCAL_MIN_ROUNDS}: at least {LOCAL_MIN_ROUNDS} rounds)")
        prov.setdefault("b", "OUR CHOICE: b = floor(d sigma^2/(4 L^2)); Lemma 4.2's bound at its best step, "
                             "D sqrt((b L^2 + d sigma^2)/n), is then within 12% of b = 1's with b times fewer rounds")
    T = n // b
    if T < 1:
        raise ResolutionError("algorithm.overrides.b", f"b = {b} users per round exceeds n = {n}")
    prov["T"] = "T = floor(n/b): one pass, each user sends one message"
    LG2 = L**2 + d * sigma**2 / b
    prov["LG2"] = "L_G^2 = L^2 + d sigma^2/b: the clipped mean gradient plus the mean of b users' noise (Def. B.1)"
    if "eta" in ov:
        eta, prov["eta"] = float(ov["eta"]), "override"
    else:
        eta = D / math.sqrt(LG2 * T)
        prov["eta"] = "eta = D/(L_G sqrt(T)), the step minimising Lemma 4.2's bound (L564-566; OUR CHOICE of schedule)"
    prov["R"], prov["K"] = "= T (rounds)", "= b (users per round)"
    p.update(b=b, T=T, R=T, K=b, eta=eta, sigma=sigma, LG2=LG2)
    return Resolved(p, prov, frozenset(ov), dict(T=T, b=b, eta=eta, L=L, radius=D / 2, sigma=sigma))


ENTRIES: tuple[AlgorithmEntry, ...] = (
    AlgorithmEntry(
        name="central_sgd", auditable=True, description="Central-model baseline: P_SGD's schedule with Gaussian noise on each batch's mean "
                                        "gradient (trusted curator)",
        citation="seed 000, Algorithm 3's schedule (L177-187) with Lemma C.5's Gaussian mechanism (L861-877)",
        privacy_theorem="central.sgd.privacy", overrides=("b", "eta", "sigma"), variants=("standard",),
        resolve=resolve_central_sgd, run=shuffle_sgd.run_central, one_pass=lambda variant: True, smoothing=None,
        threat_model="central", single_pool=True),
    AlgorithmEntry(
        name="local_sgd", auditable=True, description="Local-model baseline: one-pass SGD on users' own Gaussian-noised gradients "
                                      "(each message (eps, delta)-DP; ISRL-DP with one record per silo)",
        citation="seed 000 L15 and seed 004 L164-166 (the LDP rate, Duchi et al. 2013/2018) with Lemma C.5's Gaussian "
                 "mechanism (seed 000 L861-869) on every message",
        privacy_theorem="local.sgd.privacy", overrides=("b", "eta", "sigma"), variants=("standard",),
        resolve=resolve_local_sgd, run=shuffle_sgd.run_local, one_pass=lambda variant: True, smoothing=None,
        threat_model="local", single_pool=True),
)
