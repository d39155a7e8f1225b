"""The threat-model baselines on P_SGD's schedule (catalog/baselines.py): the central curator's and the local users'
Gaussian mechanisms (seed 000's Lemma C.5) and Lemma 4.2 with each one's L_G. Lnnn = line of
../shared/seeds/000_2468e2e5d70af056.txt; inventory ids are rows of ../shared/notes/inventory.md."""
from __future__ import annotations

import dataclasses

import sympy as sp

from verifiers.theorems.base import Condition, D, K, L, R, Theorem, d, delta0, eps0, eta, sigma
from verifiers.theorems.shuffle_000 import LEMMA42

SEED = "seed 000 (Cheu, Joseph, Mao & Peng)"

# The central baseline on the same schedule (run_central): Gaussian noise on each batch's mean gradient, as seed 000's
# Appendix C does for its pan-private AC-SA: Lemma C.5 (L861-869, the Gaussian mechanism, eps < 1) with the mean's
# l_2-sensitivity 2L/b (L871-877): sigma^2 = 8 L^2 log(2/delta) / (b^2 eps^2).
EPS1 = Condition("eps < 1 (Lemma C.5, L861)", lambda p: p["eps0"] < 1)
CENTRAL_PRIVACY = Theorem(
    name="central.sgd.privacy", citation=f"{SEED}, Lemma C.5 (L861-869) with sensitivity 2L/b (L871-877)",
    inventory=("000 Lemma C.5",), kind="explicit", measures="sigma",
    terms={"sigma": sp.sqrt(8 * L**2 * sp.log(2 / delta0) / (K**2 * eps0**2))}, algorithms=("central_sgd",),
    loss_class="convex", threat_model="central", needs_smooth=False, conditions=(EPS1,),
    note="Each record is in one batch, so the run is (eps, delta)-DP by parallel composition.")
# with clipping to L and independent noise, E||gbar||^2 = E||mean gradient||^2 + d sigma^2 <= L^2 + d sigma^2: the
# L_G of Def. B.1 (L560) for Lemma 4.2
CENTRAL_LEMMA42 = dataclasses.replace(
    LEMMA42, name="central.lemma4_2", algorithms=("central_sgd",), threat_model="central",
    terms={"optimisation": D**2 / (2 * eta * R), "noise": eta * (L**2 + d * sigma**2) / 2},
    note="Lemma 4.2 with L_G^2 = L^2 + d sigma^2 (clipped mean gradient plus the curator's Gaussian noise, Def. B.1).")

EPS1_LOCAL = Condition("eps < 1 (Lemma C.5, seed 000 L861)", lambda p: p["eps0"] < 1)

# every user's message g_u + N(0, sigma^2 I): one message's l_2-sensitivity is 2L (two gradients of norm <= L),
# so Lemma C.5's Gaussian mechanism (sigma^2 = 2 Delta^2 log(2/delta)/eps^2, L861-869) gives sigma^2 = 8 L^2 log(2/delta)
# / eps^2 -- the same local Gaussian randomizer seed 004 uses in Thm 5.1's proof (L1172: 8 L^2 ln(2/delta0)/eps0^2)
LOCAL_PRIVACY = Theorem(
    name="local.sgd.privacy", citation=f"{SEED}, Lemma C.5 (L861-869) at one message's sensitivity 2L",
    inventory=("000 Lemma C.5",), kind="explicit", measures="sigma",
    terms={"sigma": sp.sqrt(8 * L**2 * sp.log(2 / delta0) / eps0**2)}, algorithms=("local_sgd",),
    loss_class="convex", threat_model="local", needs_smooth=False, conditions=(EPS1_LOCAL,),
    note="Each user's one message is (eps, delta)-DP in its record: local DP (each user speaks once).")

# the server averages b messages: E||gbar||^2 <= L^2 + d sigma^2 / b (Def. B.1's L_G^2, L560) for Lemma 4.2
LOCAL_LEMMA42 = dataclasses.replace(
    LEMMA42, name="local.lemma4_2", algorithms=("local_sgd",), threat_model="local",
    terms={"optimisation": LEMMA42.terms["optimisation"], "noise": sp.Symbol("eta", positive=True) *
           (L**2 + d * sigma**2 / K) / 2},
    note="Lemma 4.2 with L_G^2 = L^2 + d sigma^2/b (the clipped mean gradient plus the mean of b users' own noise).")


THEOREMS = (CENTRAL_PRIVACY, CENTRAL_LEMMA42, LOCAL_PRIVACY, LOCAL_LEMMA42)
