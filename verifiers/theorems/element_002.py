"""Theorems of seed 002 (Asi, Duchi, Javidi, "Element Level Differential Privacy") about its element-level private
SGD (Alg. 1 + iteration (15), L303-325) as the learning kind runs it. Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt; inventory ids are rows of ../shared/notes/inventory.md.

Cor 3.1 (L329) states the epsilon of theta_{1:T} at delta as inf_{alpha >= 1} T eps_alpha(q, sigma) + log(1/delta) /
(alpha - 1), with Cor 2.5's eps_alpha (L138-142): the larger Renyi divergence, of either order, between
q N(1, sigma^2) + (1 - q) N(0, sigma^2) and q N(-1, sigma^2) + (1 - q) N(0, sigma^2). It has no closed form: the
SymPy term below is that expression as a function of the run's (q, sigma, T, delta0), implemented by the quadrature
and order search of verifiers/accountants/element_rdp.py (``paper_epsilon`` with the paper's pair a = 1, b = -1).
The resolver calibrates sigma so that this term equals the spec's epsilon; the privacy checks then judge the run
with our accountant of what ran (verifiers/accountants/element_sgd.py), not with this term."""
from __future__ import annotations

import sympy as sp
from sympy.utilities.lambdify import implemented_function

from verifiers.accountants import element_rdp
from verifiers.theorems.base import Condition, T, Theorem, delta0, q, sigma

SEED = "seed 002 (Asi, Duchi, Javidi)"


def cor31_epsilon(q_: float, sigma_: float, T_: float, delta_: float) -> float:
    """Cor 3.1's epsilon (L329) at (q, sigma, T, delta): Cor 2.5's pair (1, -1) composed T times, Mironov's
    conversion."""
    return element_rdp.paper_epsilon(float(q_), float(sigma_), int(round(float(T_))), float(delta_)).epsilon


EPS_COR31 = implemented_function(sp.Function("eps_cor31"), cor31_epsilon)

SAMPLING = Condition("0 < q <= 1 and sigma > 0 (Cor 2.5's mechanism (4), L132-134)",
                     lambda p: 0 < p["q"] <= 1 and p["sigma"] > 0)

PRIVACY = Theorem(
    name="element.sgd.privacy",
    citation=f"{SEED}, Cor 3.1 (L329) with Cor 2.5's eps_alpha (L132-142) for iteration (15) (L319-325), element "
             f"sensitivity 2 rho (L327)",
    inventory=("002 Cor 3.1", "002 Cor 2.5"), kind="explicit", measures="epsilon",
    terms={"epsilon": EPS_COR31(q, sigma, T, delta0)}, algorithms=("element_sgd",), loss_class="convex",
    threat_model="central", needs_smooth=False, conditions=(SAMPLING,),
    note="theta_{1:T} of (15) is (inf_alpha T eps_alpha(q, sigma) + log(1/delta)/(alpha - 1), delta)-element-level DP, "
         "eps_alpha of the pair N(+-1, sigma^2) mixed with N(0, sigma^2) at weight 1 - q; B_u Bernoulli(q) or a "
         "uniform subset of q n users (L319). The pair is that of one element vector per user (Cor 2.5 with K = 1); "
         "the accountant of the run pairs the K element vectors a user holds (a = K, b = K - 2).")

THEOREMS = (PRIVACY,)
