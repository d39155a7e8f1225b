"""Seed 000: P_SGD (Algorithm 3) with Thm 4.1's parameters, and Thm 4.1's schedule (the threat-model baselines in
catalog/baselines.py run on it too)."""
from __future__ import annotations

import math
from typing import Mapping

from algorithms import shuffle_sgd, shuffle_sum
from catalog.base import AlgorithmEntry, ResolutionError, Resolved, int_clamped
from catalog.pvec_calibration import pvec_for


def resolve_shuffle_sgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Algorithm 3 of seed 000 with Thm 4.1's parameters (L187): b = sqrt(d) log(d/delta)/eps users per round,
    T = floor(n/b), eta_bar = eps b D / (L sqrt(T) (eps b + sqrt(d) log(d/delta))), P_VEC at (eps, delta, L)."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    d, L, D = int(c["d"]), c["L"], c["D"]
    eps, delta = c["eps0"], c["delta0"]
    b, T, eta = thm41_schedule(c, ov, prov, "")
    pv, prov["g"], prov["b_binom"], prov["p"], prov["eps_hat"] = pvec_for(variant, b, d, eps, delta, L)
    mse = shuffle_sum.pvec_mse_bound(b, d, pv)
    LG2 = L**2 + mse / b**2
    prov["LG2"] = "L_G^2 = L^2 + (P_VEC's explicit MSE bound d (2L/g)^2 (b/4 + b b_binom p)) / b^2 (proof of Thm 4.1, eq. 4)"
    prov["R"], prov["K"] = "= T (rounds)", "= b (users per round)"
    prov["eps_hat"] = "eps/(18 sqrt(ln((d+1)/delta))): P_VEC's per-coordinate epsilon (Thm A.6's proof, L490)"
    prov["thm41_parameters"] = "1 when b and eta are Thm 4.1's (not overridden, b not clamped): its rate checks' condition"
    p.update(b=b, T=T, R=T, K=b, eta=eta, g=pv.one_d.g, b_binom=pv.one_d.b, p=pv.one_d.p, eps_hat=pv.eps_hat, LG2=LG2,
             thm41_parameters=float("b" not in ov and "eta" not in ov and "clamped" not in prov["b"]),
             pvec_accountant_calibrated=float(variant == "accountant"))
    prov["pvec_accountant_calibrated"] = "1 when P_VEC's noise is the accountant's calibration (variant accountant)"
    run_kwargs = dict(T=T, b=b, eta=eta, L=L, radius=D / 2, pvec=pv)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


def thm41_schedule(c: Mapping[str, float], ov: Mapping[str, float], prov: dict, who: str) -> tuple[int, int, float]:
    """Thm 4.1's b = sqrt(d) log(d/delta)/eps (rounded up), T = floor(n/b) and eta_bar (L187)."""
    n, d, L, D = int(c["n"]), int(c["d"]), c["L"], c["D"]
    eps, delta = c["eps0"], c["delta0"]
    lg = math.log(d / delta)
    if "b" in ov:
        b, prov["b"] = int(ov["b"]), "override"
    else:
        b = int_clamped("b", math.sqrt(d) * lg / eps, 1, n, prov, "Thm 4.1 b")
        prov.setdefault("b", f"Thm 4.1 (L187): b = sqrt(d) log(d/delta)/eps, rounded up{who}")
    T = n // b
    if T < 1:
        raise ResolutionError("algorithm.overrides.b", f"b = {b} users per round exceeds n = {n}")
    prov["T"] = "T = floor(n/b) (L187; each user speaks once)"
    if "eta" in ov:
        eta, prov["eta"] = float(ov["eta"]), "override"
    else:
        eta = eps * b * D / (L * math.sqrt(T) * (eps * b + math.sqrt(d) * lg))
        prov["eta"] = ("Thm 4.1's eta_bar (L187) with the OCR's sqrt(dL) log(d/delta) read as sqrt(d) log(d/delta) "
                       f"(dimensions, and the proof's L_G; note 000 section 2.3){who}")
    return b, T, eta


ENTRIES: tuple[AlgorithmEntry, ...] = (
    AlgorithmEntry(
        name="shuffle_sgd", description="P_SGD: sequentially interactive shuffle-private SGD, gradients summed by P_VEC",
        citation="seed 000, Algorithm 3 (L177-185), Thm 4.1 (L187-191)", privacy_theorem="shuffle.p_sgd.privacy",
        overrides=("b", "eta"), variants=("standard", "accountant"), resolve=resolve_shuffle_sgd, run=shuffle_sgd.run,
        one_pass=lambda variant: True, smoothing=None, threat_model="shuffle", single_pool=True, auditable=False),
)
