"""Seed 004 (Lowy & Razaviyayn), the ISRL-DP part: Algorithm 2 (Noisy MB-SGD, Thm D.1 / D.2), one-pass
Algorithm 1 (Accelerated Noisy MB-SGD, Thm 3.1 / E.1) and Algorithm 1 for ERM (Thm F.1 / F.2).

The paper's parameter rules come first, as plain functions of the problem; each cites the line of the seed it
encodes. The verifiers hold independent SymPy versions of the privacy calibrations and compare them with what
these functions resolved. Then the resolvers (each rule with any spec override applied) and the entries."""
from __future__ import annotations

import math
from typing import Any, Mapping

from algorithms import acsa, mbsgd
from catalog.base import (
    MAX_ROUNDS,
    AlgorithmEntry,
    ResolutionError,
    Resolved,
    convex_single_stage,
    int_clamped,
    moreau,
    multistage,
    stich_eta,
)


# --- the paper's parameter rules: Thm D.1 (Alg. 2), Thm E.1 (one-pass Alg. 1) -------------------------------------
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
    """Thm E.1 strongly convex (L1048): K = n / (sqrt(kappa) ln(mu Delta min{eps0^2 n^2 M/(L^2 d ln(1/delta0)), nM/phi^2}))
    (nM/phi^2 read as +inf when phi^2 = 0: no within-silo variance, the min is the privacy entry)."""
    stat = n * M / phi2 if phi2 > 0 else math.inf
    inner = mu * Delta * min(eps0**2 * n**2 * M / (L**2 * d * math.log(1 / delta0)), stat)
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


# --- the resolvers ------------------------------------------------------------------------------------------
def resolve_mbsgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Alg. 2 with Thm D.1's parameters (convex when mu = 0, strongly convex when mu > 0)."""
    p = dict(c)
    prov = {k: "problem constant" for k in c}
    strong = c["mu"] > 0
    if not math.isfinite(c["beta"]):
        p.update(moreau(c, ov, prov, rule=alg2_moreau_beta, cite="Thm D.2 proof (L711-719)"))
    args: dict[str, Any] = {k: p[k] for k in ("beta", "D", "L", "M", "eps0")} | {"n": int(p["n"]), "d": int(p["d"])}
    if "R" in ov:
        R, prov["R"] = int(ov["R"]), "override"
    else:
        raw = alg2_strongly_convex_R(mu=c["mu"], **args) if strong else alg2_convex_R(**args)
        prov["R"] = "Thm D.1 " + ("strongly convex (L666)" if strong else "convex (L662)")
        R = int(math.ceil(raw))
    if R > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.R", f"the calibration asks for R = {R} rounds (> {MAX_ROUNDS})")
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = alg2_sigma(L=c["L"], R=R, n=int(c["n"]), eps0=c["eps0"], delta0=c["delta0"])
        prov["sigma"] = "Thm D.1 (L658)"
    if "K" in ov:
        K, prov["K"] = int(ov["K"]), "override"
    else:
        prov["K"] = "Thm D.1 K_min (L658), rounded up"
        K = int_clamped("K", alg2_K_min(R=R, n=int(c["n"]), eps0=c["eps0"], delta0=c["delta0"]),
                        1, int(c["n"]), prov, "Thm D.1 K_min")
    if "eta" in ov:
        eta, prov["eta"] = float(ov["eta"]), "override"
    elif strong:
        cc = c["d"] * sigma**2 / c["M"] + c["L"] ** 2
        eta = stich_eta(mu=c["mu"], beta=p["beta"], r0=c["D"] ** 2, R=R, c=cc)
        prov["eta"] = "Lemma D.5 (Stich) with a=mu, g=2 beta, c=d sigma^2/M + L^2; r0 = D^2 (our choice: ||w0-w*||^2 is unknown)"
    else:
        eta = alg2_convex_eta(R=R, **args)
        prov["eta"] = "Thm D.1 convex (L678)"
    stich_mu = c["mu"] if strong else 0.0
    prov["stich_mu"] = "Stich weights (1 - mu eta)^-(r+1) (Lemma D.5)" if strong else "uniform average (gamma_r = 1/R)"
    p.update(R=R, K=K, sigma=sigma, eta=eta, stich_mu=stich_mu)
    run_kwargs = dict(R=R, K=K, sigma=sigma, eta=eta, radius=c["D"] / 2, stich_mu=stich_mu)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


def resolve_acsa_erm(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Alg. 1 for ERM with Thm F.1's parameters (Thm F.2 for a non-smooth loss via its Moreau envelope):
    Alg. 2's sigma^2 and K rule, a fresh K-subset every round, convex: regularised single stage,
    strongly convex: App. E.1 stages with V_X^2 and Delta_X."""
    p = dict(c)
    prov = {k: "problem constant" for k in c}
    n, d, N, M, L, mu, D = (c[k] for k in ("n", "d", "N", "M", "L", "mu", "D"))
    n, d, N = int(n), int(d), int(N)
    eps0, delta0 = c["eps0"], c["delta0"]
    strong = mu > 0
    if not math.isfinite(c["beta"]):
        p.update(moreau(c, ov, prov, rule=erm_moreau_beta, cite="Thm F.2 proof (L1110-1122)"))
    beta = p["beta"]
    if strong:
        R1 = erm_strongly_convex_R1(beta=beta, mu=mu, Delta=c["Delta"], M=M, eps0=eps0, n=n, L=L, d=d)
        prov["R"] = "Thm F.1(2) (L1062): max{sqrt(beta/mu) ln(Delta_X mu M eps0^2 n^2/(L^2 d)), 1{MK<Nn} eps0^2 n^2/(K d ln(1/delta0))}"
    else:
        R1 = erm_convex_R1(beta=beta, D=D, L=L, M=M, eps0=eps0, n=n, d=d, delta0=delta0)
        prov["R"] = ("Thm F.1(1) (L1058): max{R_1, 1{MK<Nn} eps0^2 n^2/(K d ln(1/delta0))}, R_1 read as "
                     "(beta D/L)^(1/2) (sqrt(M) eps0 n/sqrt(d ln(1/delta0)))^(1/2), the value the proof's "
                     "beta D^2/R^2 term needs (the statement's nesting of square roots is garbled; note 004 item 10)")
    K_fixed = int(ov["K"]) if "K" in ov else None
    R, K = erm_rounds_and_batch(R1=R1, n=n, N=N, M=M, eps0=eps0, delta0=delta0, d=d, K_fixed=K_fixed)
    prov["R"] += "; R and K depend on each other (K >= K_min(R)): resolved as their joint fixed point (our choice)"
    prov["K"] = "override" if K_fixed else "Thm F.1 K_min (L1056), rounded up, at the resolved R"
    if "R" in ov:
        R, prov["R"] = int(ov["R"]), "override"
        if K_fixed is None:
            K = int_clamped("K", alg2_K_min(R=R, n=n, eps0=eps0, delta0=delta0), 1, n, prov, "K_min")
    if R > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.R", f"the calibration asks for R = {R} rounds (> {MAX_ROUNDS})")
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = alg2_sigma(L=L, R=R, n=n, eps0=eps0, delta0=delta0)
        prov["sigma"] = "Thm F.1 = Thm D.1's sigma^2 (L1056)"
    V2 = erm_V2(L=L, M=M, K=K, N=N, n=n, d=d, sigma=sigma)
    prov["V2"] = "V_X^2 <= 1{MK<nN} 4L^2/(MK) + d sigma^2/M (Thm F.1 proof, L1082-1088)"
    if strong:
        lam, mu_prox = 0.0, mu
        prov["lam"] = "0: no added regulariser (the multi-stage schedule uses the loss's own mu)"
        # a Moreau-smoothed loss runs on F_b with F_b(0) - F_b* <= F(0) - F* + L^2/(2 beta_s) (Lemma D.7)
        Delta = c["Delta"] + (L**2 / (2 * p["beta_s"]) if "beta_s" in p else 0.0)
        stages = multistage(R=R, beta=beta, mu=mu, V2=V2, Delta=Delta)
        prov["stages"] = ("multi-stage AC-SA of App. E.1 (L948-956) with V_X^2 and Delta_X = F_X(0) - F_X*"
                            + (" + L^2/(2 beta_s) (the smoothed loss's gap, Lemma D.7)" if "beta_s" in p else "")
                            + "; the last stage is cut to the rounds left (our choice)")
    else:
        lam = erm_convex_lambda(V=math.sqrt(V2), D=D, R=R)
        prov["lam"] = ("lambda = V_X/(||w0 - w*|| sqrt(R)) (Thm F.1 proof, L1076) with ||w0 - w*|| replaced by "
                          "its bound D/2 (w* is unknown, w0 = 0 is the domain's centre; our choice)")
        stages = convex_single_stage(R=R, beta=beta, lam=lam, V2=V2, D=D, prov=prov)
        mu_prox = lam
    prov["fresh_batches"] = "0: a fresh K-subset of the silo's n records every round, with replacement across rounds (ERM)"
    p.update(K=K, R=R, sigma=sigma, V2=V2, lam=lam, stages=len(stages), fresh_batches=0)
    run_kwargs = dict(stages=tuple(stages), mu=mu_prox, lam=lam, K=K, sigma=sigma, radius=D / 2, one_pass=False)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


def resolve_acsa(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """One-pass Alg. 1 with Thm E.1's parameters (convex: regularised single stage; strongly convex: App. E.1 stages)."""
    p = dict(c)
    prov = {k: "problem constant" for k in c}
    n, d, N, M, L, beta, mu, D = (c[k] for k in ("n", "d", "N", "M", "L", "beta", "mu", "D"))
    n, d, N = int(n), int(d), int(N)
    strong = mu > 0
    if "K" in ov:
        K, prov["K"] = int(ov["K"]), "override"
    elif strong:
        raw = onepass_strongly_convex_K(n=n, beta=beta, mu=mu, Delta=c["Delta"], eps0=c["eps0"],
                                        delta0=c["delta0"], M=M, L=L, d=d, phi2=c["phi2"])
        prov["K"] = "Thm E.1 strongly convex (L1048), rounded up"
        K = int_clamped("K", raw, 1, n, prov, "Thm E.1 K")
    else:
        raw = onepass_convex_K(L=L, beta=beta, D=D, n=n, d=d, eps0=c["eps0"], delta0=c["delta0"], M=M)
        prov["K"] = "Thm E.1 convex (L1042), rounded up"
        K = int_clamped("K", raw, 1, n, prov, "Thm E.1 K")
    if "R" in ov:
        R, prov["R"] = int(ov["R"]), "override"
        if R * K > n:
            raise ResolutionError("algorithm.overrides.R", f"R*K = {R * K} exceeds n = {n}: one-pass batches must be disjoint")
    else:
        R, prov["R"] = n // K, "R = floor(n/K) (one pass, L176)"
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = onepass_sigma(L=L, K=K, eps0=c["eps0"], delta0=c["delta0"])
        prov["sigma"] = "Thm 3.1 / E.1 (L186, L1036)"
    V2 = gradient_noise_V2(phi2=c["phi2"], v2=c["v2"], d=d, sigma=sigma, M=M, N=N, K=K)
    prov["V2"] = "V^2 of Thm E.1 / Lemma E.3 (L1038)"
    if strong:
        lam = 0.0
        prov["lam"] = "0: no added regulariser (the multi-stage schedule uses the loss's own mu)"
        stages = multistage(R=R, beta=beta, mu=mu, V2=V2, Delta=c["Delta"])
        prov["stages"] = ("multi-stage AC-SA of App. E.1 (L948-956), Delta = F(w0) - F* exactly; "
                            "the last stage is cut to the rounds left (our choice)")
        mu_prox = mu
    else:
        lam = onepass_convex_lambda(V=math.sqrt(V2), D=D, R=R)
        prov["lam"] = "lambda = V/(2 D sqrt(R)) (Thm E.1 proof, L1038)"
        stages = convex_single_stage(R=R, beta=beta, lam=lam, V2=V2, D=D, prov=prov)
        mu_prox = lam
    prov["fresh_batches"] = "1: one pass, disjoint batches (each record used once, L176)"
    p.update(K=K, R=R, sigma=sigma, V2=V2, lam=lam, stages=len(stages), fresh_batches=1)
    run_kwargs = dict(stages=tuple(stages), mu=mu_prox, lam=lam, K=K, sigma=sigma, radius=D / 2, one_pass=True)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


ENTRIES: tuple[AlgorithmEntry, ...] = (
    AlgorithmEntry(
        name="noisy_mbsgd", auditable=True, description="Noisy ISRL-DP minibatch SGD (Algorithm 2)",
        citation="seed 004, Algorithm 2 (L491), Thm 2.1 / D.1", privacy_theorem="isrl.alg2.privacy",
        overrides=("R", "K", "sigma", "eta", "beta_s"), variants=("standard",), resolve=resolve_mbsgd, run=mbsgd.run,
        one_pass=lambda variant: False, smoothing="Moreau envelope with Thm D.2's beta (Lemma D.7)"),
    AlgorithmEntry(
        name="accelerated_mbsgd", auditable=True, description="One-pass Accelerated Noisy MB-SGD (Algorithm 1, disjoint batches)",
        citation="seed 004, Algorithm 1 (L200), Thm 3.1 / E.1", privacy_theorem="isrl.onepass.privacy",
        overrides=("R", "K", "sigma"), variants=("one_pass",), resolve=resolve_acsa, run=acsa.run,
        one_pass=lambda variant: variant == "one_pass"),
    AlgorithmEntry(
        name="accelerated_mbsgd_erm", auditable=True,
        description="Accelerated Noisy MB-SGD for ERM (Algorithm 1, a fresh K-subset every round)",
        citation="seed 004, Algorithm 1 (L200), Thm 4.1 / F.1 / F.2", privacy_theorem="isrl.thm4_1.privacy",
        overrides=("R", "K", "sigma", "beta_s"), variants=("erm",), resolve=resolve_acsa_erm, run=acsa.run,
        one_pass=lambda variant: False, smoothing="Moreau envelope with Thm F.2's beta (Lemma D.7)"),
)
