"""Seed 001: CLDP-SGD (Algorithm 1) with Thm 3's step rule."""
from __future__ import annotations

import math
from typing import Mapping

from algorithms import cldp
from catalog.base import MAX_ROUNDS, AlgorithmEntry, ResolutionError, Resolved


def resolve_cldp(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Algorithm 1 of seed 001 with Thm 3's step rule; k, T and eps_ldp default to the paper's MNIST run."""
    # the spec states no epsilon for CLDP-SGD (the paper states it at the run's parameters, Thm 3 Eq. 5): a constant
    # handed over as None is left out
    p = {key: v for key, v in c.items() if v is not None}
    prov = {key: "problem constant" for key in p}
    n, d = int(c["n"]), int(c["d"])
    if "k" in ov:
        k, prov["k"] = int(ov["k"]), "override"
    else:
        k = max(1, round(n / 6))
        prov["k"] = "round(n/6): the paper's MNIST ratio k/n = 10000/60000 (L197)"
    if not 1 <= k <= n:
        raise ResolutionError("algorithm.overrides.k", f"k = {k} clients per round must be in [1, n = {n}]")
    if "T" in ov:
        T, prov["T"] = int(ov["T"]), "override"
    else:
        T = math.ceil(200 * n / k)
        prov["T"] = "200 epochs of n/k rounds (L197; the seed does not state T, n/k rounds per epoch is our reading)"
    if T > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.T", f"T = {T} rounds (> {MAX_ROUNDS})")
    if "eps_ldp" in ov:
        eps_ldp, prov["eps_ldp"] = float(ov["eps_ldp"]), "override"
        if eps_ldp > 50:
            raise ResolutionError("algorithm.overrides.eps_ldp", f"eps_ldp = {eps_ldp:g}: a local epsilon above 50 "
                                                                 f"protects nothing (allowed: 0 < eps_ldp <= 50)")
    else:
        eps_ldp, prov["eps_ldp"] = 1.5, "the paper's eps0 = 1.5 of R_inf in the MNIST run (L197)"
    if "C" in ov:
        C, prov["C"] = float(ov["C"]), "override"
    else:
        C = c["L_inf"]
        prov["C"] = ("L_inf, a bound on ||grad f||_inf on the data (max |x_ij| + mu rho): clipping changes nothing "
                     "(Thm 3's C-Lipschitz w.r.t. l_1)")
    kappa = ((math.exp(eps_ldp) + 1) / math.expm1(eps_ldp)) ** 2
    G = math.sqrt(d * C**2 + C**2 * d**2 * kappa / k)
    prov["G"] = "Thm 3 (L181): G^2 = d C^2 + G_inf^2(C)/k, G_inf^2(C) = C^2 d^2 kappa (Remark 1, L185)"
    prov["eta_rule"] = "eta_t = D/(G sqrt(t)) (Thm 3, L181)"
    p.update(k=k, T=T, eps_ldp=eps_ldp, C=C, G=G, kappa=kappa, eta_rule=1, R=T, K=k)
    prov["R"], prov["K"] = "= T (rounds)", "= k (clients per round)"
    prov["kappa"] = "((e^eps0 + 1)/(e^eps0 - 1))^2 of R_inf (Remark 1, L185)"
    run_kwargs = dict(T=T, k=k, eps_ldp=eps_ldp, C=C, G=G, radius=c["D"] / 2, randomizer=variant)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


ENTRIES: tuple[AlgorithmEntry, ...] = (
    AlgorithmEntry(
        name="cldp_sgd", auditable=True, description="CLDP-SGD: client sampling, l_inf clipping, eps0-LDP randomizer R_inf, shuffling",
        citation="seed 001, Algorithm 1 (L93-116), Thm 3 (L169-181)", privacy_theorem="shuffle.thm3.privacy",
        overrides=("T", "k", "eps_ldp", "C"), variants=("r_inf",), resolve=resolve_cldp, run=cldp.run,
        one_pass=lambda variant: False, smoothing=None, threat_model="shuffle", single_pool=True),
)
