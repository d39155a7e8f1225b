"""Theorems of seed 001 (Girgis, Data & Diggavi) about CLDP-SGD (Algorithm 1, L93-116), shuffle model.
Lnnn = line of ../shared/seeds/001_b39a6850360fb784.txt; inventory ids are rows of ../shared/notes/inventory.md.

Symbols: n clients (one record each), k sampled per round (gamma = k/n), T rounds, l_inf clipping norm C,
the local randomizer's eps_ldp (the seed's eps0), D the diameter of the domain, d the dimension.
With l_inf clipping (p = inf) the loss must be C-Lipschitz w.r.t. the dual norm l_1, i.e. every gradient
has ||g||_inf <= C, so that clipping changes nothing (condition CLIP_NOOP); then Thm 3's
G^2 = max{d^(1-2/p), 1} L^2 + G_p^2(L)/(gamma n) = d C^2 + d^2 C^2 kappa / k (L181, Remark 1 L185).
"""
from __future__ import annotations

import math

import mpmath
import sympy as sp

from verifiers.theorems.base import C, Condition, D, Params, T, Theorem, d, delta0, eps_ldp, k, n

SEED = "seed 001 (Girgis, Data & Diggavi)"

KAPPA = ((sp.exp(eps_ldp) + 1) / (sp.exp(eps_ldp) - 1)) ** 2
# Remark 1 (L185): G_inf^2(L) = L^2 d^2 kappa, the variance bound of R_inf (with L = C, the l_inf radius)
G_INF2 = C**2 * d**2 * KAPPA
# Thm 3 (L181) with p = inf: G^2 = d C^2 + G_inf^2(C) / k  (gamma n = k)
G = sp.sqrt(d * C**2 + G_INF2 / k)

CLIP_NOOP = Condition("every gradient has ||g||_inf <= C (f is C-Lipschitz w.r.t. l_1, Thm 3 L169; clipping is a "
                      "no-op)", lambda p: p["C"] >= p["L_inf"] * (1 - 1e-12))
STEP = Condition("eta_t = D/(G sqrt(t)) (Thm 3, L181)", lambda p: p.get("eta_rule", 0) == 1)

# --- Thm 3 (1), Eq. (5): the paper's privacy claim for CLDP-SGD after T rounds ---------------------------------
# Written here as printed, in SymPy, and evaluated at 50 digits with mpmath: independent of the accountant
# (verifiers/accountants/subsampled_shuffle.py evaluates the same theorems in float64 log space, Upsilon rewritten,
# on its own grid of orders), which then judges what ran against this claim.
lam = sp.Symbol("lambda", integer=True, positive=True)      # the Renyi order: Thm 1 holds for integers >= 2 (L143)
_j = sp.Symbol("j", integer=True, positive=True)
RATE = k / n                                                  # gamma = k/n (L147)
KBAR = sp.floor((k - 1) / (2 * sp.exp(eps_ldp))) + 1          # kbar (L147)
_Y = RATE * (sp.exp(2 * eps_ldp) - 1) / sp.exp(eps_ldp)
UPSILON = ((1 + _Y) ** lam - 1 - lam * _Y) * sp.exp(-(k - 1) / (8 * sp.exp(eps_ldp)))      # L147
# Thm 1 (L143-147): one round's RDP at integer order lambda >= 2 (the sum is empty at lambda = 2)
THM1_RDP = sp.log(1 + 4 * sp.binomial(lam, 2) * RATE**2 * (sp.exp(eps_ldp) - 1) ** 2 / (KBAR * sp.exp(eps_ldp))
                  + sp.Sum(sp.binomial(lam, _j) * RATE**_j * _j * sp.gamma(_j / 2)
                           * (2 * (sp.exp(2 * eps_ldp) - 1) ** 2 / (KBAR * sp.exp(2 * eps_ldp))) ** (_j / 2),
                           (_j, 3, lam))
                  + UPSILON) / (lam - 1)
# Lemma 1 (L80-82): the conversion term of order lambda
LEMMA1 = (sp.log(1 / delta0) + (lam - 1) * sp.log(1 - 1 / lam) - sp.log(lam)) / (lam - 1)
# Eq. (5) (L175) at one order; the claim is its minimum over the orders (Remark 2, L187: no closed form)
EQ5_AT_ORDER = T * THM1_RDP + LEMMA1
EQ5_DIGITS = 50
EQ5_MAX_ORDER = 512            # every integer order up to here is evaluated (cost ~ order^2); an optimum the scan
                               # cannot settle by then is refused (ValueError) rather than searched for hours
_RDP = sp.lambdify((lam, n, k, eps_ldp), THM1_RDP, modules="mpmath")
_CONVERSION = sp.lambdify((lam, delta0), LEMMA1, modules="mpmath")


def eq5(params: Params) -> tuple[float, int]:
    """Thm 3 (1), Eq. (5) (L175) at the run's n, k, T, eps_ldp and delta0: (epsilon, the minimising order).

    Every integer order 2, 3, ... is evaluated, until no larger order can win. For lambda' >= lambda the conversion
    term is >= (log(1/delta) - 1 - log lambda')/(lambda' - 1), as (lambda' - 1) log(1 - 1/lambda') >= -1: that is >= 0
    up to lambda' = 1/(e delta), and beyond it >= -(1 + log m)/(m - 1) with m = max(lambda, 1/(e delta)), since
    (1 + log x)/(x - 1) decreases. So once T eps(lambda) plus that floor exceeds the best value, every larger order
    loses, provided T eps(lambda) does not decrease in lambda: asserted on every order scanned (a decrease raises
    ValueError), not proved for the orders beyond."""
    N, K, Tr, e0, dl = (float(params[s]) for s in ("n", "k", "T", "eps_ldp", "delta0"))
    if not (K == int(K) and N == int(N) and Tr == int(Tr) and 1 <= K <= N and Tr >= 1 and e0 > 0 and 0 < dl < 1):
        raise ValueError(f"Eq. (5) needs whole 1 <= k <= n, T >= 1, eps_ldp > 0, 0 < delta < 1 (n = {N:g}, k = {K:g}, "
                         f"T = {Tr:g}, eps_ldp = {e0:g}, delta = {dl:g})")
    with mpmath.workdps(EQ5_DIGITS):
        n_, k_, T_, e_, d_ = (mpmath.mpf(repr(x)) for x in (N, K, Tr, e0, dl))
        best, arg, prev = mpmath.inf, 2, -mpmath.inf
        for order in range(2, EQ5_MAX_ORDER + 1):
            rdp = T_ * _RDP(order, n_, k_, e_)
            if rdp < prev:
                raise ValueError(f"Thm 1's T eps(lambda) decreases from order {order - 1} to {order}: the scan's stopping "
                                 f"rule does not hold here")
            prev = rdp
            value = rdp + _CONVERSION(order, d_)
            if value < best:
                best, arg = value, order
            m = max(mpmath.mpf(order), 1 / (mpmath.e * d_))
            if rdp - (1 + mpmath.log(m)) / (m - 1) > best:
                return float(best), arg
    raise ValueError(f"Eq. (5) at n = {N:g}, k = {K:g}, T = {Tr:g}, eps_ldp = {e0:g}, delta = {dl:g}: the scan of every "
                     f"order up to {EQ5_MAX_ORDER} (best so far at order {arg}) cannot rule out a larger one")


def eq5_epsilon(params: Params) -> float:
    """The epsilon Thm 3 (1) claims for the run's parameters (Eq. (5), L175)."""
    eps, _ = eq5(params)
    if not math.isfinite(eps):
        raise ValueError(f"Eq. (5) is not finite at these parameters: {eps}")
    return eps


PRIVACY = Theorem(
    name="shuffle.thm3.privacy", citation=f"{SEED}, Thm 3 (1), Eq. (5) (L173-179), with Thm 1 (L143-147) and Lemma 1 "
                                          f"(L80-82)",
    inventory=("001 Thm 3 (privacy, Eq. 5)",), kind="explicit", measures="epsilon",
    terms={}, algorithms=("cldp_sgd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    stated_epsilon=eq5_epsilon,
    note="eps = min over integer orders of T eps(lambda) + (log(1/delta) + (lambda-1) log(1-1/lambda) - log lambda)"
         "/(lambda-1), eps(lambda) from Thm 1; the shuffled view of the server is (eps, delta)-DP. The paper states "
         "epsilon as this function of n, k, T, eps_ldp and delta (no target to calibrate to): the claim a run is "
         "judged against is Eq. (5) at its own resolved parameters, computed before it runs (eq5 above).")

RANDOMIZER = Theorem(
    name="shuffle.alg1.randomizer", citation=f"{SEED}, conditions (i) and (ii) on R_p (L155)",
    inventory=("001 Thm 3 (privacy, Eq. 5)", "001 Remark 1"), kind="explicit", measures="ldp_bias",
    terms={}, algorithms=("cldp_sgd",), loss_class="convex", threat_model="shuffle", needs_smooth=False,
    note="(i) R_p is eps0-LDP; (ii) E[R_p(x) | x] = x on the whole ball.")

REMARK1 = Theorem(
    name="shuffle.remark1.r_inf", citation=f"{SEED}, Remark 1 (L185) and condition (iv) (L155)",
    inventory=("001 Remark 1",), kind="explicit", measures="ldp_variance",
    terms={"variance": G_INF2}, algorithms=("cldp_sgd",), loss_class="convex", threat_model="shuffle",
    needs_smooth=False, note="sup over the l_inf ball of radius C of E||R_inf(x) - x||^2 <= C^2 d^2 kappa.")

THM3_CONVERGENCE = Theorem(
    name="shuffle.thm3.convergence", citation=f"{SEED}, Thm 3 (2) (L181)", inventory=("001 Thm 3 (convergence)",),
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
    inventory=("001 Thm 3 (convergence)",), kind="explicit", measures="empirical_excess_risk",
    terms={"rate": 2 * D * G * (2 + sp.log(T)) / sp.sqrt(T)}, algorithms=("cldp_sgd",), loss_class="convex",
    threat_model="shuffle", needs_smooth=False, conditions=(CLIP_NOOP, STEP), rate_term="rate",
    note="An explicit surrogate from outside the seed: labelled as such in the report.")

THEOREMS = (PRIVACY, RANDOMIZER, REMARK1, THM3_CONVERGENCE, THM3_EXPLICIT)
