"""Theorems of seed 004 (Lowy & Razaviyayn, "Private Federated Learning Without a Trusted Server"),
ISRL-DP. Lnnn = line of ../shared/seeds/004_66f3b713b54f102e.txt; inventory ids are the rows of
../shared/notes/inventory.md. Each formula was checked against the seed text.
"""
from __future__ import annotations

import dataclasses
import math

import sympy as sp

from verifiers.theorems.base import (
    Condition,
    D,
    K,
    L,
    M,
    N,
    R,
    Theorem,
    beta,
    beta_s,
    d,
    delta0,
    eps0,
    eta,
    mu,
    n,
    phi2,
    sigma,
    v2,
)

SEED = "seed 004 (Lowy & Razaviyayn)"

# --- privacy calibrations (SymPy, independent of catalog/isrl_004.py) -----------------------
# Thm D.1 (L658, L672): sigma^2 = 256 L^2 R ln(2.5R/delta0) ln(2/delta0) / (n^2 eps0^2)
ALG2_SIGMA = sp.sqrt(256 * L**2 * R * sp.log(sp.Rational(5, 2) * R / delta0) * sp.log(2 / delta0) / (n**2 * eps0**2))
# Thm D.1 (L658, L699): K >= eps0 n / (4 sqrt(2 R ln(2/delta0)))
ALG2_K_MIN = eps0 * n / (4 * sp.sqrt(2 * R * sp.log(2 / delta0)))
# Thm 3.1 / E.1 (L186, L968, L1036): sigma^2 = 32 L^2 ln(1.25/delta0) / (eps0^2 K^2)
ONEPASS_SIGMA = sp.sqrt(32 * L**2 * sp.log(sp.Rational(5, 4) / delta0) / (eps0**2 * K**2))


def _cond_alg2_eps(p) -> bool:
    return p["eps0"] <= 2 * math.log(2 / p["delta0"])


def _cond_onepass_eps(p) -> bool:
    return p["eps0"] <= 8 * math.log(1 / p["delta0"])


ALG2_EPS = Condition("eps0 <= 2 ln(2/delta0) (Thm D.1, L132)", _cond_alg2_eps)
ONEPASS_EPS = Condition("eps0 <= 8 ln(1/delta0) (Thm 3.1, L186)", _cond_onepass_eps)
ALG2_K = Condition("K >= eps0 n / (4 sqrt(2 R ln(2/delta0))) (Thm D.1, L658)",
                   lambda p: p["K"] >= float(ALG2_K_MIN.subs({eps0: p["eps0"], n: p["n"], R: p["R"],
                                                               delta0: p["delta0"]})))
SMOOTH_STEP = Condition("eta <= 1/beta (Lemma D.6(1), L610)", lambda p: p["eta"] <= 1 / p["beta"] * (1 + 1e-12))
UNIFORM_WEIGHTS = Condition("uniform average of w_0..w_{R-1} (gamma_r = 1/R)", lambda p: p.get("stich_mu", 0) == 0)
IID = Condition("i.i.d. silos (v^2 = 0; Lemma D.1 needs i.i.d. data, L517)", lambda p: p["v2"] <= 1e-12 * p["L"] ** 2)
FRESH = Condition("every batch is fresh i.i.d. data (one pass, SCO; Lemma E.3 proof L1026)",
                  lambda p: p.get("fresh_batches", 0) == 1)
STRONG = Condition("mu > 0 (per-sample strong convexity)", lambda p: p["mu"] > 0)

PRIVACY_ALG2 = Theorem(
    name="isrl.alg2.privacy", citation=f"{SEED}, Thm 2.1 / D.1 privacy part (L658, proof L670-672)",
    inventory=("004 Thm 2.1/D.1/D.2 (privacy)",), kind="explicit", measures="sigma",
    terms={"sigma": ALG2_SIGMA}, algorithms=("noisy_mbsgd",), loss_class="convex",
    conditions=(ALG2_EPS, ALG2_K), needs_smooth=False,
    note="(eps0, delta0)-ISRL-DP by advanced composition over R rounds of the subsampled Gaussian.")

PRIVACY_ONEPASS = Theorem(
    name="isrl.onepass.privacy", citation=f"{SEED}, Thm 3.1 / E.1 privacy part (L186, proof L1036)",
    inventory=("004 Thm 3.1/E.1 (privacy)",), kind="explicit", measures="sigma",
    terms={"sigma": ONEPASS_SIGMA}, algorithms=("accelerated_mbsgd",), loss_class="convex",
    conditions=(ONEPASS_EPS,), needs_smooth=False,
    note="One Gaussian release per record (disjoint batches, parallel composition).")

LEMMA_D6_1 = Theorem(
    name="isrl.lemma_d6_1", citation=f"{SEED}, Lemma D.6 (1) (L610)", inventory=("004 Lemma D.6 (1)",),
    kind="explicit", measures="empirical_excess_risk",
    terms={"optimisation": D**2 / (2 * eta * R), "noise": eta / 2 * (d * sigma**2 / M + L**2)},
    algorithms=("noisy_mbsgd",), loss_class="convex", conditions=(SMOOTH_STEP, UNIFORM_WEIGHTS),
    note="E F_X(w_R) - F_X* <= D^2/(2 eta R) + (eta/2)(d sigma^2/M + L^2) for any sigma and eta <= 1/beta.")

POPULATION_D1_D2_D6 = Theorem(
    name="isrl.alg2.population_explicit",
    citation=f"{SEED}, Lemma D.1 (L519) + Lemma D.2 (L537) + Lemma D.6 (1) (L610), as combined in Thm D.1's proof (L676)",
    inventory=("004 Lemma D.6 (1)", "004 Lemma D.2 (Eq. 13)", "004 Lemma D.1"), kind="explicit",
    measures="excess_risk",
    terms={"stability": 2 * L**2 * R * eta / (n * M), "optimisation": D**2 / (2 * eta * R),
           "noise": eta / 2 * (d * sigma**2 / M + L**2)},
    algorithms=("noisy_mbsgd",), loss_class="convex", conditions=(SMOOTH_STEP, UNIFORM_WEIGHTS, IID),
    note="L676 writes (eta L^2/(2M))(...+1); we encode Lemma D.6's (eta/2)(d sigma^2/M + L^2), the form its proof supports.")

LEMMA_E3 = Theorem(
    name="isrl.lemma_e3.sampling", citation=f"{SEED}, Lemma E.3 (L1006), its sampling and silo terms",
    inventory=("004 Lemma E.3",), kind="explicit", measures="grad_sampling_variance",
    terms={"sampling": phi2 / (M * K), "silos": (N - M) / (N - 1) * v2 / M},
    algorithms=("accelerated_mbsgd",), loss_class="convex", conditions=(FRESH,),
    note="Lemma E.3: E||g_r - grad F(w_r)||^2 <= phi^2/(MK) + (1 - (M-1)/(N-1)) v^2/M 1{N>1} + d sigma^2/M at every "
         "query point. What is measured is the first two terms' part, E||g_r - grad F||^2 - E||u_bar||^2 with the "
         "silos' released noise u_bar as a control variate (algorithms/rounds.py grad_error), against those terms; "
         "the noise term d sigma^2/M is not measured here but by noise_calibration, from the released noise.")

THM21_CONVEX = Theorem(
    name="isrl.thm2_1.convex", citation=f"{SEED}, Thm 2.1 Eq. (4) / Thm D.1 Eq. (17) (L136, L664)",
    inventory=("004 Thm 2.1/D.1/D.2 (convex; Eqs. 4, 17, 19)",), kind="order", measures="excess_risk",
    terms={"statistical": L * D / sp.sqrt(M) / sp.sqrt(n),
           "privacy": L * D / sp.sqrt(M) * sp.sqrt(d * sp.log(1 / delta0)) / (eps0 * n)},
    algorithms=("noisy_mbsgd",), loss_class="convex", conditions=(ALG2_EPS, IID), needs_smooth=False,
    note="Thm D.2 extends it to non-smooth f by running on the Moreau envelope (Lemma D.7).")

THM21_STRONG = Theorem(
    name="isrl.thm2_1.strongly_convex", citation=f"{SEED}, Thm 2.1 Eq. (5) / Thm D.1 Eq. (18) (L140, L668)",
    inventory=("004 Thm 2.1/D.1/D.2 (strongly convex; Eqs. 5, 18, 20)",), kind="order", measures="excess_risk",
    terms={"statistical": L**2 / (mu * M * n),
           "privacy": L**2 / (mu * M) * d * sp.log(1 / delta0) / (eps0**2 * n**2)},
    algorithms=("noisy_mbsgd",), loss_class="strongly_convex", conditions=(ALG2_EPS, IID, STRONG),
    needs_smooth=False, note="Thm D.2 extends it to non-smooth f by running on the Moreau envelope (Lemma D.7).")

THM31_CONVEX = Theorem(
    name="isrl.thm3_1.convex", citation=f"{SEED}, Thm 3.1 Eq. (6) / Thm E.1 Eq. (30) (L190, L972)",
    inventory=("004 Thm 3.1/E.1 (convex; Eqs. 6, 30)",), kind="order", measures="excess_risk",
    terms={"statistical": sp.sqrt(phi2) * D / sp.sqrt(n * M),
           "privacy": (beta**sp.Rational(1, 4) * L * D**sp.Rational(3, 2) * sp.sqrt(d * sp.log(1 / delta0))
                       / (eps0 * n * sp.sqrt(M)))**sp.Rational(4, 5),
           "heterogeneity": sp.sqrt((N - M) / (N - 1)) * sp.sqrt(v2) * L**sp.Rational(1, 5) * D**sp.Rational(4, 5)
           / beta**sp.Rational(1, 5) * (sp.sqrt(d * sp.log(1 / delta0)) / (eps0 * n * M**3))**sp.Rational(1, 5)},
    algorithms=("accelerated_mbsgd",), loss_class="convex", conditions=(ONEPASS_EPS,),
    note="Heterogeneous silos allowed; with M = N the heterogeneity term vanishes and (30) is (6).")

THM31_STRONG = Theorem(
    name="isrl.thm3_1.strongly_convex", citation=f"{SEED}, Thm 3.1 Eq. (7) / Thm E.1 Eq. (31) (L194, L976)",
    inventory=("004 Thm 3.1/E.1 (strongly convex; Eqs. 7, 31)",), kind="order", measures="excess_risk",
    terms={"statistical": phi2 / (mu * n * M),
           "privacy": sp.sqrt(beta / mu) * L**2 * d * sp.log(1 / delta0) / (mu * eps0**2 * n**2 * M),
           "heterogeneity": v2 / (mu * sp.sqrt(beta / mu) * M) * (N - M) / (N - 1)},
    algorithms=("accelerated_mbsgd",), loss_class="strongly_convex", conditions=(ONEPASS_EPS, STRONG),
    note="(31) prints phi^2/(nM) without 1/mu; the proof (L1046) and (7) have phi^2/(mu n M), which we encode.")

MOREAU = Condition("the loss is non-smooth and run on its beta_s-Moreau envelope", lambda p: "beta_s" in p)

LEMMA_D6_1_MOREAU = Theorem(
    name="isrl.lemma_d6_1_moreau",
    citation=f"{SEED}, Lemma D.6 (1) (L610) applied to the Moreau envelope + Lemma D.7 (2) (L692-697), as in Thm D.2's proof (L711)",
    inventory=("004 Lemma D.6 (1)", "004 Lemma D.7"), kind="explicit", measures="empirical_excess_risk",
    terms={"optimisation": D**2 / (2 * eta * R), "noise": eta / 2 * (d * sigma**2 / M + L**2),
           "smoothing": L**2 / (2 * beta_s)},
    algorithms=("noisy_mbsgd",), loss_class="convex", conditions=(MOREAU, SMOOTH_STEP, UNIFORM_WEIGHTS),
    needs_smooth=False,
    note=("E F_X(w_R) - F_X* <= [E F_b,X(w_R) - F_b,X*] + L^2/(2 beta_s) <= D^2/(2 eta R) + (eta/2)(d sigma^2/M + L^2) "
          "+ L^2/(2 beta_s), with F_b the envelope's empirical risk (F_b <= F, so F_b* <= F*). Lemma D.7 allows a 2L-"
          "Lipschitz envelope (which would put 4L^2 in the noise term); the envelope we run is L-Lipschitz "
          "(algorithms/losses.py), so L^2."))

# Thm F.1 calibrates Algorithm 1 for ERM exactly as Thm D.1 calibrates Algorithm 2 (same sigma^2, K rule, conditions)
PRIVACY_ERM = dataclasses.replace(
    PRIVACY_ALG2, name="isrl.thm4_1.privacy", citation=f"{SEED}, Thm 4.1 / F.1 / F.2 privacy part (L1056, proof L1072)",
    inventory=("004 Thm 4.1/F.1/F.2 (privacy)",), algorithms=("accelerated_mbsgd_erm",),
    note="Alg. 2's sigma^2 and K rule; the iterates are post-processing of the noisy gradients.")

THM41_CONVEX = Theorem(
    name="isrl.thm4_1.convex", citation=f"{SEED}, Thm 4.1 Eq. (8) / Thm F.1 Eq. (32) / Thm F.2 Eq. (35) (L228, L1060, L1102)",
    inventory=("004 Thm 4.1/F.1/F.2 (convex; Eqs. 8, 32, 35)",), kind="order", measures="empirical_excess_risk",
    terms={"privacy": L * D * sp.sqrt(d * sp.log(1 / delta0)) / (eps0 * n * sp.sqrt(M))},
    algorithms=("accelerated_mbsgd_erm",), loss_class="convex", conditions=(ALG2_EPS,), needs_smooth=False,
    note="Smooth f: Thm F.1; non-smooth f via the Moreau envelope: Thm F.2.")

THM41_STRONG = Theorem(
    name="isrl.thm4_1.strongly_convex",
    citation=f"{SEED}, Thm 4.1 Eq. (9) / Thm F.1 Eq. (33) / Thm F.2 Eq. (36) (L232, L1064, L1106)",
    inventory=("004 Thm 4.1/F.1/F.2 (strongly convex; Eqs. 9, 33, 36)",), kind="order", measures="empirical_excess_risk",
    terms={"privacy": L**2 / mu * d * sp.log(1 / delta0) / (eps0**2 * n**2 * M)},
    algorithms=("accelerated_mbsgd_erm",), loss_class="strongly_convex", conditions=(ALG2_EPS, STRONG),
    needs_smooth=False)

THEOREMS = (PRIVACY_ALG2, PRIVACY_ONEPASS, LEMMA_D6_1, POPULATION_D1_D2_D6, LEMMA_E3, THM21_CONVEX, THM21_STRONG,
            THM31_CONVEX, THM31_STRONG, LEMMA_D6_1_MOREAU, PRIVACY_ERM, THM41_CONVEX, THM41_STRONG)
