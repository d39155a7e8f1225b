"""The paper's parameter rules (seed 004, Lowy & Razaviyayn), as plain functions of the problem.

Each function cites the line of the seed it encodes. The verifiers hold independent SymPy versions
of the privacy calibrations and compare them with what these functions resolved.
"""
from __future__ import annotations

import math


def alg2_sigma(*, L: float, R: int, n: int, eps0: float, delta0: float) -> float:
    """Thm D.1 (seed 004 L658, L672): sigma^2 = 256 L^2 R ln(2.5R/delta0) ln(2/delta0) / (n^2 eps0^2)."""
    return math.sqrt(256 * L**2 * R * math.log(2.5 * R / delta0) * math.log(2 / delta0) / (n**2 * eps0**2))


def alg2_K_min(*, R: int, n: int, eps0: float, delta0: float) -> float:
    """Thm D.1 (L658, L699): K >= eps0 n / (4 sqrt(2 R ln(2/delta0)))."""
    return eps0 * n / (4 * math.sqrt(2 * R * math.log(2 / delta0)))


def alg2_convex_R(*, beta: float, D: float, L: float, M: float, n: int, eps0: float, d: int) -> float:
    """Thm D.1 convex (L662): R = (beta D sqrt(M)/L) min{sqrt(n), eps0 n/sqrt(d)} + min{nM, eps0^2 n^2 M/d}."""
    return (beta * D * math.sqrt(M) / L * min(math.sqrt(n), eps0 * n / math.sqrt(d))
            + min(n * M, eps0**2 * n**2 * M / d))


def alg2_convex_eta(*, beta: float, D: float, L: float, M: float, n: int, eps0: float, d: int, R: int) -> float:
    """Thm D.1 convex (L678): eta = min(1/beta, D/(L sqrt(R)) min{1, eps0 n sqrt(M)/sqrt(R d), sqrt(nM/R)})."""
    return min(1 / beta, D / (L * math.sqrt(R)) * min(1.0, eps0 * n * math.sqrt(M) / math.sqrt(R * d),
                                                     math.sqrt(n * M / R)))


def alg2_strongly_convex_R(*, beta: float, mu: float, D: float, L: float, M: float, n: int, eps0: float,
                           d: int) -> float:
    """Thm D.1 strongly convex (L666): R = max((2 beta/mu) ln(beta D^2 mu M eps0^2 n^2/(d L^2)), min{Mn, M eps0^2 n^2/d})."""
    arg = beta * D**2 * mu * M * eps0**2 * n**2 / (d * L**2)
    return max(2 * beta / mu * math.log(max(arg, 1.0)), min(M * n, M * eps0**2 * n**2 / d))


def stich_eta(*, mu: float, beta: float, r0: float, R: int, c: float) -> float:
    """Lemma D.5 (Stich 2019; L593-603, instantiated L644-648 with a=mu, g=2 beta, T=R):
    eta = min{1/g, ln(max{2, a^2 r0 T^2 / c}) / (a T)}."""
    return min(1 / (2 * beta), math.log(max(2.0, mu**2 * r0 * R**2 / c)) / (mu * R))


def onepass_sigma(*, L: float, K: int, eps0: float, delta0: float) -> float:
    """Thm 3.1 / E.1 (L186, L968, L1036): sigma^2 = 32 L^2 ln(1.25/delta0) / (eps0^2 K^2)."""
    return math.sqrt(32 * L**2 * math.log(1.25 / delta0) / (eps0**2 * K**2))


def onepass_convex_K(*, L: float, beta: float, D: float, n: int, d: int, eps0: float, delta0: float,
                     M: float) -> float:
    """Thm E.1 convex (L1042): K = (L/(beta D))^{2/5} n^{3/5} (d ln(1/delta0))^{1/5} / (eps0^{2/5} M^{1/5})."""
    return ((L / (beta * D)) ** 0.4 * n**0.6 * (d * math.log(1 / delta0)) ** 0.2
            / (eps0**0.4 * M**0.2))


def onepass_strongly_convex_K(*, n: int, beta: float, mu: float, Delta: float, eps0: float, delta0: float,
                              M: float, L: float, d: int, phi2: float) -> float:
    """Thm E.1 strongly convex (L1048): K = n / (sqrt(kappa) ln(mu Delta min{eps0^2 n^2 M/(L^2 d ln(1/delta0)), nM/phi^2}))."""
    inner = mu * Delta * min(eps0**2 * n**2 * M / (L**2 * d * math.log(1 / delta0)), n * M / phi2)
    return n / (math.sqrt(beta / mu) * math.log(max(inner, math.e)))


def gradient_noise_V2(*, phi2: float, v2: float, d: int, sigma: float, M: float, N: int, K: int) -> float:
    """V^2 of Thm E.1 / Lemma E.3 (L1006, L1038): phi^2/(MK) + (v^2/M) 1{N>1} (N-M)/(N-1) + d sigma^2/M."""
    het = v2 / M * (N - M) / (N - 1) if N > 1 else 0.0
    return phi2 / (M * K) + het + d * sigma**2 / M


def onepass_convex_lambda(*, V: float, D: float, R: int) -> float:
    """Thm E.1 proof (L1038): regulariser lambda = V / (2 D sqrt(R)) on f + (lambda/2)||w - w0||^2.
    (Lemma E.1, L992, writes V/(||w0 - w*|| sqrt(R)); we encode the proof's choice.)"""
    return V / (2 * D * math.sqrt(R))


# --- non-smooth losses: the Moreau smoothing parameter ----------------------------------------------
def alg2_moreau_beta(*, L: float, D: float, M: float, n: int, d: int, eps0: float, delta0: float, mu: float) -> float:
    """Thm D.2 proof (L711-719): beta with L^2/beta equal to the target rate,
    convex: L^2/beta = (LD/sqrt(M)) (1/sqrt(n) + sqrt(d ln(1/delta0))/(eps0 n));
    strongly convex: L^2/beta = (L^2/(mu M)) (1/n + d ln(1/delta0)/(eps0^2 n^2))."""
    if mu > 0:
        return mu * M / (1 / n + d * math.log(1 / delta0) / (eps0**2 * n**2))
    return L * math.sqrt(M) / (D * (1 / math.sqrt(n) + math.sqrt(d * math.log(1 / delta0)) / (eps0 * n)))


def erm_moreau_beta(*, L: float, D: float, M: float, n: int, d: int, eps0: float, delta0: float, mu: float) -> float:
    """Thm F.2 proof (L1114, L1122): convex beta = eps0 n sqrt(M) L / (sqrt(d) D) (note 004 item 11's reading
    of the OCR's sqrt(ML)/sqrt(dD)); strongly convex beta = mu M eps0^2 n^2 / d."""
    if mu > 0:
        return mu * M * eps0**2 * n**2 / d
    return eps0 * n * math.sqrt(M) * L / (math.sqrt(d) * D)


# --- Algorithm 1 for ERM (Thm F.1) ----------------------------------------------------------------------
def erm_convex_R1(*, beta: float, D: float, L: float, M: float, eps0: float, n: int, d: int, delta0: float) -> float:
    """Thm F.1(1) (L1058), first term of R, read as (beta D / L)^{1/2} (sqrt(M) eps0 n / sqrt(d ln(1/delta0)))^{1/2}:
    the R at which the proof's beta D^2 / R^2 term (L1086) equals the rate L D sqrt(d ln(1/delta0)) / (eps0 n sqrt(M))."""
    return math.sqrt(beta * D / L * math.sqrt(M) * eps0 * n / math.sqrt(d * math.log(1 / delta0)))


def erm_strongly_convex_R1(*, beta: float, mu: float, Delta: float, M: float, eps0: float, n: int, L: float,
                           d: int) -> float:
    """Thm F.1(2) (L1062), first term: sqrt(beta/mu) ln(Delta_X mu M eps0^2 n^2 / (L^2 d)) (log argument >= e)."""
    return math.sqrt(beta / mu) * math.log(max(Delta * mu * M * eps0**2 * n**2 / (L**2 * d), math.e))


def erm_rounds_and_batch(*, R1: float, n: int, N: int, M: float, eps0: float, delta0: float, d: int,
                         K_fixed: int | None) -> tuple[int, int]:
    """Thm F.1's R = max{R1, 1{MK < Nn} eps0^2 n^2 / (K d ln(1/delta0))} with K = ceil(K_min(R)) of Thm D.1
    (L1056): the two rules depend on each other, so iterate R -> K -> R to their joint fixed point."""
    R = max(1, math.ceil(R1))
    for _ in range(100):
        K = K_fixed or min(n, max(1, math.ceil(alg2_K_min(R=R, n=n, eps0=eps0, delta0=delta0) - 1e-9)))
        second = eps0**2 * n**2 / (K * d * math.log(1 / delta0)) if M * K < N * n else 0.0
        new = max(1, math.ceil(max(R1, second) - 1e-9))
        if new == R:
            return R, K
        R = new
    return R, K


def erm_V2(*, L: float, M: float, K: int, N: int, n: int, d: int, sigma: float) -> float:
    """Thm F.1 proof: V_X^2 <= 1{MK < nN} 4 L^2 / (M K) (Lemma F.1, L1082) + d sigma^2 / M (the silos'
    independent noise, L1086-1088)."""
    return (4 * L**2 / (M * K) if M * K < n * N else 0.0) + d * sigma**2 / M


def erm_convex_lambda(*, V: float, D: float, R: int) -> float:
    """Thm F.1 proof (L1076): lambda = V_X / (||w0 - w*|| sqrt(R)), with ||w0 - w*|| replaced by its bound D/2
    (w0 = 0 is the centre of the domain ball of diameter D)."""
    return V / (D / 2 * math.sqrt(R))
