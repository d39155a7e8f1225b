"""Theorems of seed 000 (Cheu, Joseph, Mao & Peng, "Shuffle Private Stochastic Convex Optimization") about the
sequentially interactive P_SGD (Algorithm 3). Lnnn = line of ../shared/seeds/000_2468e2e5d70af056.txt; inventory
ids are rows of ../shared/notes/inventory.md. Seed 000's eps and delta are our eps0 and delta0; its T = n/b rounds
are our R; its batch size b is our K.
"""
from __future__ import annotations

import sympy as sp

from verifiers.theorems.base import LG2, Condition, D, L, R, Theorem, d, delta0, eps0, eta, n

SEED = "seed 000 (Cheu, Joseph, Mao & Peng)"

EPS15 = Condition("eps <= 15 (Thm 4.1, L187)", lambda p: p["eps0"] <= 15)
DELTA = Condition("0 < delta < 1/2 (Thm 3.2, L150)", lambda p: 0 < p["delta0"] < 0.5)
ONCE = Condition("each user speaks once (T b <= n)", lambda p: p["R"] * p["K"] <= p["n"])
PAPER = Condition("b and eta as Thm 4.1 sets them (not overridden)", lambda p: p.get("thm41_parameters", 0) == 1)

PRIVACY = Theorem(
    name="shuffle.p_sgd.privacy", citation=f"{SEED}, Thm 4.1 privacy part (L187; proof L570: P_VEC's Thm 3.2 and "
                                           f"each user queried at most once)",
    inventory=("000 Thm 4.1 (privacy)", "000 Thm 3.2/A.6 (privacy)"), kind="explicit", measures="epsilon", terms={},
    algorithms=("shuffle_sgd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    conditions=(EPS15, DELTA), note="(eps, delta)-shuffle private: one P_VEC call per user.")

# Lemma 4.2 / B.2 (L193, L564-566; the main text's "D^2/(2nT)" is a typo for D^2/(2 eta T)): projected SGD with an
# L_G-noisy gradient oracle; the average iterate's excess population risk <= D^2/(2 eta T) + eta L_G^2/2
LEMMA42 = Theorem(
    name="shuffle.lemma4_2", citation=f"{SEED}, Lemma 4.2 / B.2 (L193, L564-566)", inventory=("000 Lemma 4.2/B.2",),
    kind="explicit", measures="excess_risk", terms={"optimisation": D**2 / (2 * eta * R), "noise": eta * LG2 / 2},
    algorithms=("shuffle_sgd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    conditions=(ONCE,),
    note="L_G^2 = L^2 + P_VEC's explicit MSE bound / b^2 (the proof's eq. (4) with the constant of Lemma A.2's proof).")

THM41 = Theorem(
    name="shuffle.thm4_1", citation=f"{SEED}, Thm 4.1 (L187-191)", inventory=("000 Thm 4.1 (utility)",), kind="order",
    measures="excess_risk",
    terms={"privacy": d ** sp.Rational(1, 4) * D * L * sp.sqrt(sp.log(d / delta0)) / sp.sqrt(eps0 * n)},
    algorithms=("shuffle_sgd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    conditions=(EPS15, DELTA, ONCE, PAPER),
    note="O(d^(1/4) D L log^(1/2)(d/delta) / sqrt(eps n)); the statistical term D L sqrt(b/n) has the same order "
         "at b = sqrt(d) log(d/delta)/eps.")

THEOREMS = (PRIVACY, LEMMA42, THM41)
