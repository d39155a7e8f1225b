"""Theorems of seed 000 (Cheu, Joseph, Mao & Peng) about the fully interactive P_GD (Algorithm 5, L258-273):
Lemma B.4 (L712-716), Lemma B.6 (L724-740), Thm 4.9 (L275-283, L744-760), and the advanced-composition step of
Lemma B.6's privacy proof as a pure function (the run's P_VEC calls are accounted in
verifiers/accountants/pvec.py). Lnnn = line of ../shared/seeds/000_2468e2e5d70af056.txt; inventory
ids are rows of ../shared/notes/inventory.md. Seed 000's eps, delta are our eps0, delta0; its T rounds our R; its
lambda our mu; its sigma^2 (Lemma B.4's privacy-noise variance of gbar) enters through LG2 = L^2 + sigma^2.
"""
from __future__ import annotations

import math

import sympy as sp

from verifiers.accountants.composition import advanced_composition
from verifiers.theorems import shuffle_000_agd
from verifiers.theorems.base import LG2, Condition, D, L, R, Theorem, d, delta0, eps0, eta, mu, n

SEED = "seed 000 (Cheu, Joseph, Mao & Peng)"
REL = 1e-9


def lemma_b6_composition(eps: float, delta: float, T: int) -> tuple[float, float]:
    """Lemma B.6's privacy step (L728): T rounds at (eps/(2 sqrt(2T ln(1/delta))), delta/(T+1)) composed with
    delta' = delta/(T+1) (the only slack that keeps the total delta at T delta/(T+1) + delta' = delta): the
    (eps', delta') advanced composition certifies. The paper claims eps' <= eps."""
    eps_r, delta_r = eps / (2 * math.sqrt(2 * T * math.log(1 / delta))), delta / (T + 1)
    return advanced_composition(eps_r, delta_r, T, delta / (T + 1))


# --- theorems ----------------------------------------------------------------------------------------------
EPS15 = Condition("eps <= 15 (Thm 4.9, L275)", lambda p: p["eps0"] <= 15)
DELTA = Condition("0 < delta < 1/2 (Thm 3.2, L150)", lambda p: 0 < p["delta0"] < 0.5)
SMALL_DELTA = Condition("delta <= 1/n (Lemma B.6's 'delta << 1/n', L740)", lambda p: p["delta0"] <= 1 / p["n"])
PAPER = Condition("T, eta and beta as Lemma B.6 / Thm 4.9 set them (not overridden)",
                  lambda p: p.get("thm49_parameters", 0) == 1)
COMPOSES = Condition("advanced composition of the per-round (eps, delta) over T rounds stays within (eps, delta) "
                     "(Lemma B.6, L728)",
                     lambda p: lemma_b6_composition(p["eps0"], p["delta0"], int(p["T"]))[0] <= p["eps0"] * (1 + REL))
FKT = Condition("run through Lemma B.7's Feldman-Koren-Talwar reduction over disjoint user groups (variant fkt)",
                lambda p: p.get("fkt_reduction", 0) == 1)
ONE_GROUP = Condition("plain P_GD: one group of all n users (not variant fkt)", lambda p: p.get("groups", 1) == 1)

PRIVACY = Theorem(
    name="shuffle.p_gd.privacy",
    citation=f"{SEED}, Lemma B.6 privacy part (L724-728): each round (eps/(2 sqrt(2T log(1/delta))), delta/(T+1))-DP "
             f"by Thm 3.2, advanced composition over the T rounds; Thm 4.9 (L275) inherits it (L744)",
    inventory=("000 Lemma B.6 (privacy)", "000 Thm 4.9 (privacy)", "000 Thm 3.2/A.6 (privacy)"), kind="explicit",
    measures="epsilon", terms={}, algorithms=("shuffle_gd",), loss_class="convex", threat_model="shuffle",
    needs_smooth=False, conditions=(EPS15, DELTA, COMPOSES),
    note="(eps, delta)-shuffle private with every user in all T P_VEC calls. The check also requires the P_VEC "
         "parameters as run to be Thm 3.2's at the per-round target (the paper's proof), since the accountant's "
         "canaries bound the worst case from below only.")

LEMMA_B4 = Theorem(
    name="shuffle.lemma_b4", citation=f"{SEED}, Lemma B.4 (L712-716; Bubeck 2015)", inventory=("000 Lemma B.4",),
    kind="explicit", measures="empirical_excess_risk",
    terms={"optimisation": D**2 / (2 * eta * R), "noise": eta * LG2 / 2},
    algorithms=("shuffle_gd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    conditions=(ONE_GROUP,),
    note="E F_S(theta_bar) - min F_S <= D^2/(2 eta T) + eta (L^2 + sigma^2)/2 with sigma^2 = P_VEC's explicit MSE "
         "bound d (2L/g)^2 (n/4 + n b p) / n^2 (Lemma A.2's proof, L412): LG2 = L^2 + sigma^2.")

THM49 = Theorem(
    name="shuffle.thm4_9", citation=f"{SEED}, Thm 4.9 (L275-277; proof L744-748) = Lemma B.6's rate (L724-740)",
    inventory=("000 Thm 4.9 (convex)", "000 Lemma B.6 (utility)"), kind="order", measures="excess_risk",
    terms={"statistical": D * L / sp.sqrt(n),
           "privacy": sp.sqrt(d) * D * L * sp.log(d / delta0) ** sp.Rational(3, 2) / (eps0 * n)},
    algorithms=("shuffle_gd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    conditions=(EPS15, DELTA, SMALL_DELTA, PAPER, ONE_GROUP),
    note="O(D L/sqrt(n) + sqrt(d) D L log^{3/2}(d/delta)/(eps n)) as stated (the proof's last line has "
         "log^{3/2}(nd/delta)); non-smooth losses through the Moreau envelope with Thm 4.9's beta.")

THM49_SC = Theorem(
    name="shuffle.thm4_9.strongly_convex", citation=f"{SEED}, Thm 4.9 strongly convex part (L279-281; Lemma B.7, "
                                                    f"L752-760, rho = eps/log^{{3/2}}(nd/delta))",
    inventory=("000 Thm 4.9 (strongly convex)",), kind="order", measures="excess_risk",
    terms={"statistical": L**2 / (mu * n),
           "privacy": L**2 * d * sp.log(d / delta0) ** 3 / (mu * eps0**2 * n**2)},
    algorithms=("shuffle_gd",), loss_class="strongly_convex", threat_model="shuffle", needs_smooth=False,
    conditions=(EPS15, DELTA, SMALL_DELTA, PAPER, FKT, shuffle_000_agd.SHRINKING),
    note="O((L^2/lambda)(1/n + d log^3(d/delta)/(eps^2 n^2))) through Feldman-Koren-Talwar's reduction (P_GD on "
         "disjoint user groups in sequence; the paper does not give the group sizes: variant fkt's k = ceil(log2 "
         "log2 n) equal groups are our choice). n is all users here.")

THEOREMS = (PRIVACY, LEMMA_B4, THM49, THM49_SC)
