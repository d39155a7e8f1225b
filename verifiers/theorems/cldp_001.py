"""Theorems of seed 001 (Girgis, Data & Diggavi) about CLDP-SGD (Algorithm 1, L93-116), shuffle model.
Lnnn = line of ../shared/seeds/001_b39a6850360fb784.txt; inventory ids are rows of ../shared/notes/inventory.md.

Symbols: n clients (one record each), k sampled per round (gamma = k/n), T rounds, l_inf clipping norm C,
the local randomizer's eps_ldp (the seed's eps0), D the diameter of the domain, d the dimension.
With l_inf clipping (p = inf) the loss must be C-Lipschitz w.r.t. the dual norm l_1, i.e. every gradient
has ||g||_inf <= C, so that clipping changes nothing (condition CLIP_NOOP); then Thm 3's
G^2 = max{d^(1-2/p), 1} L^2 + G_p^2(L)/(gamma n) = d C^2 + d^2 C^2 kappa / k (L181, Remark 1 L185).
"""
from __future__ import annotations

import sympy as sp

from verifiers.theorems.base import C, Condition, D, T, Theorem, d, eps_ldp, k

SEED = "seed 001 (Girgis, Data & Diggavi)"

KAPPA = ((sp.exp(eps_ldp) + 1) / (sp.exp(eps_ldp) - 1)) ** 2
# Remark 1 (L185): G_inf^2(L) = L^2 d^2 kappa, the variance bound of R_inf (with L = C, the l_inf radius)
G_INF2 = C**2 * d**2 * KAPPA
# Thm 3 (L181) with p = inf: G^2 = d C^2 + G_inf^2(C) / k  (gamma n = k)
G = sp.sqrt(d * C**2 + G_INF2 / k)

CLIP_NOOP = Condition("every gradient has ||g||_inf <= C (f is C-Lipschitz w.r.t. l_1, Thm 3 L169; clipping is a "
                      "no-op)", lambda p: p["C"] >= p["L_inf"] * (1 - 1e-12))
STEP = Condition("eta_t = D/(G sqrt(t)) (Thm 3, L181)", lambda p: p.get("eta_rule", 0) == 1)

PRIVACY = Theorem(
    name="shuffle.thm3.privacy", citation=f"{SEED}, Thm 3 (1), Eq. (5) (L173-179), with Thm 1 (L143-147) and Lemma 1 "
                                          f"(L80-82)",
    inventory="001 Thm 3 (privacy, Eq. 5); 001 Thm 1; 001 Lemma 1", kind="explicit", measures="epsilon",
    terms={}, algorithms=("cldp_sgd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    note="eps = min over integer orders of T eps(lambda) + (log(1/delta) + (lambda-1) log(1-1/lambda) - log lambda)"
         "/(lambda-1), eps(lambda) from Thm 1; the shuffled view of the server is (eps, delta)-DP.")

RANDOMIZER = Theorem(
    name="shuffle.alg1.randomizer", citation=f"{SEED}, conditions (i) and (ii) on R_p (L155)",
    inventory="001 Thm 3 (privacy, Eq. 5); 001 Remark 1", kind="explicit", measures="ldp_bias",
    terms={}, algorithms=("cldp_sgd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    note="(i) R_p is eps0-LDP; (ii) E[R_p(x) | x] = x on the whole ball.")

REMARK1 = Theorem(
    name="shuffle.remark1.r_inf", citation=f"{SEED}, Remark 1 (L185) and condition (iv) (L155)",
    inventory="001 Remark 1", kind="explicit", measures="ldp_variance",
    terms={"variance": G_INF2}, algorithms=("cldp_sgd",), loss_class="convex", threat_model="shuffle",
    needs_smooth=False, note="sup over the l_inf ball of radius C of E||R_inf(x) - x||^2 <= C^2 d^2 kappa.")

THM3_CONVERGENCE = Theorem(
    name="shuffle.thm3.convergence", citation=f"{SEED}, Thm 3 (2) (L181)", inventory="001 Thm 3 (convergence)",
    kind="order", measures="empirical_excess_risk", terms={"rate": D * G * sp.log(T) / sp.sqrt(T)},
    algorithms=("cldp_sgd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    conditions=(CLIP_NOOP, STEP), rate_term="rate",
    note="E F(theta_T) - F(theta*) <= O(D G log(T)/sqrt(T)) for the last iterate, eta_t = D/(G sqrt t).")

# Shamir & Zhang (ICML 2013), Thm 2, last iterate with eta_t = c/sqrt(t): (D^2/c + c G^2)(2 + log T)/sqrt(T); at
# c = D/G it is 2 D G (2 + log T)/sqrt(T). The seed's proof of Thm 3 is 'a standard non-private SGD convergence
# result' (L183); the same authors state this c = D/G form as Lemma 5 of Girgis et al. (AISTATS 2021, [27]).
THM3_EXPLICIT = Theorem(
    name="shuffle.thm3.explicit", citation="EXTERNAL (not in the seed): Shamir & Zhang 2013, Thm 2, at c = D/G, "
                                           f"the explicit form of {SEED}, Thm 3 (2) (L181, proof outline L183)",
    inventory="001 Thm 3 (convergence)", kind="explicit", measures="empirical_excess_risk",
    terms={"rate": 2 * D * G * (2 + sp.log(T)) / sp.sqrt(T)}, algorithms=("cldp_sgd",), loss_class="convex",
    threat_model="shuffle", needs_smooth=False, conditions=(CLIP_NOOP, STEP), rate_term="rate",
    note="An explicit surrogate from outside the seed: labelled as such in the report.")

THEOREMS = (PRIVACY, RANDOMIZER, REMARK1, THM3_CONVERGENCE, THM3_EXPLICIT)
