"""The rates the seeds quote for each threat model (the rows an ``ordering`` check compares). Lnnn = line of the seed named next to it; seed 000 is
../shared/seeds/000_2468e2e5d70af056.txt, seed 004 is ../shared/seeds/004_66f3b713b54f102e.txt.

The quoted rates are Theta(.) statements with hidden constants and omitted logs; in the paper's symbols, N silos
of n records each (a run on one pool of users has N = 1 and n users). Seed 004 L164: "for F_{L,D}, the LDP rate is
Theta(LD min{1, sqrt(d)/(eps0 sqrt(N))}) (Duchi et al., 2013), and the CDP rate is Theta(phi^2/sqrt(Nn) + LD min{1,
sqrt(d)/(eps0 n N)}) (Bassily et al., 2019)"; its Fig. 3 (table L108-118, caption L120: M = N, logs omitted) has
ISRL-DP i.i.d. convex 1/sqrt(nN) + sqrt(d)/(eps0 n sqrt(N)) (Thm 2.1, L109, tight by Thm 2.2) and SDP i.i.d.
convex 1/sqrt(nN) + sqrt(d)/(eps n N) (Thm 5.1, L115, tight by Bassily et al.'s central lower bound). Seed 000
L15 quotes the same central and local privacy terms with n users. These are the threat models' minimax rates; a
run's algorithm need not attain them at feasible sizes (the comparison report says which algorithm ran).
Inventory: the cited optimal central and local rates are not inventoried rows (inventory.md L70, "cited
central/local optimal rates in Sec. 1"); Thm 2.1 and Thm 5.1 are rows 004 Thm 2.1/D.1/D.2 and 004 Thm 5.1/G.1.
"""
from __future__ import annotations

import sympy as sp

from verifiers.theorems.base import D, L, N, Theorem, d, eps0, n

SEED000 = "seed 000 (Cheu, Joseph, Mao & Peng)"
SEED004 = "seed 004 (Lowy & Razaviyayn)"

_cited = "a cited optimal rate (Sec. 1 of seeds 000 and 004), not an inventoried claim (inventory.md L70)"

LOCAL_RATE = Theorem(
    name="local.ldp_rate", citation=f"{SEED004} L164 (Duchi et al., 2013); {SEED000} L15 (Duchi et al., 2018)",
    inventory=(), not_inventoried=_cited, kind="order", measures="excess_risk",
    terms={"privacy": L * D * sp.sqrt(d) / (eps0 * sp.sqrt(n * N))}, algorithms=("local_sgd",), loss_class="convex",
    threat_model="local", needs_smooth=False,
    note="Theta(LD min{1, sqrt(d)/(eps sqrt(users))}) for sequentially interactive LDP protocols; the min{1, .} "
         "is the trivial level L D (an ordering check caps every rate there).")

CENTRAL_RATE = Theorem(
    name="central.cdp_rate", citation=f"{SEED004} L164 (Bassily et al., 2019); {SEED000} L15",
    inventory=(), not_inventoried=_cited, kind="order", measures="excess_risk",
    terms={"statistical": L * D / sp.sqrt(n * N), "privacy": L * D * sp.sqrt(d) / (eps0 * n * N)},
    algorithms=("central_sgd",), loss_class="convex", threat_model="central", needs_smooth=False,
    note="Theta(phi D/sqrt(Nn) + LD min{1, sqrt(d)/(eps n N)}) (phi <= L; seed 004 prints phi^2, read as phi D).")

ISRL_RATE = Theorem(
    name="isrl.fig3_rate", citation=f"{SEED004} Fig. 3 (L109, L120), Thm 2.1 (L132-140)", inventory=("004 Thm 2.1/D.1/D.2 (convex; Eqs. 4, 17, 19)",),
    kind="order", measures="excess_risk",
    terms={"statistical": L * D / sp.sqrt(n * N), "privacy": L * D * sp.sqrt(d) / (eps0 * n * sp.sqrt(N))},
    algorithms=("noisy_mbsgd", "accelerated_mbsgd"), loss_class="convex", threat_model="isrl", needs_smooth=False,
    note="Fig. 3's ISRL-DP i.i.d. convex row (M = N, logs omitted); Thm 2.1 itself is isrl.thm2_1.convex.")

SDP_RATE = Theorem(
    name="shuffle.fig3_sdp_rate", citation=f"{SEED004} Fig. 3 (L115, L120), Thm 5.1 (L240-246)",
    inventory=("004 Thm 5.1/G.1 (convex; Eq. 37)",), kind="order", measures="excess_risk",
    terms={"statistical": L * D / sp.sqrt(n * N), "privacy": L * D * sp.sqrt(d) / (eps0 * n * N)},
    algorithms=("shuffled_mbsgd", "sdp_accelerated_mbsgd"), loss_class="convex", threat_model="shuffle",
    needs_smooth=False,
    note="Fig. 3's SDP i.i.d. convex row (M = N, logs omitted): the central rate, without a trusted server.")

THEOREMS = (LOCAL_RATE, CENTRAL_RATE, ISRL_RATE, SDP_RATE)
