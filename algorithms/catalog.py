"""The algorithm registry and each algorithm's parameter resolution (the paper's calibration, with
any spec override applied: the run and the checks then use what was actually resolved)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping

from algorithms import acsa, calibration, mbsgd
from algorithms.registry import Registry

MAX_ROUNDS = 2_000_000


class ResolutionError(ValueError):
    """A parameter cannot be resolved (e.g. the calibration asks for more rounds than we allow)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Resolved:
    params: dict[str, float]          # everything the run and the theorems use (paper symbols)
    provenance: dict[str, str]        # param -> where its value came from
    overridden: frozenset[str]
    run_kwargs: dict


@dataclass(frozen=True)
class AlgorithmEntry:
    name: str
    description: str
    citation: str
    privacy_theorem: str
    overrides: tuple[str, ...]
    variants: tuple[str, ...]
    resolve: Callable[..., Resolved]
    run: Callable
    one_pass: Callable[[str], bool]   # whether a variant reads each record at most once


def _int_clamped(name: str, value: float, lo: int, hi: int, prov: dict, note: str) -> int:
    v = int(math.ceil(value - 1e-9))
    if v < lo or v > hi:
        prov[name] = f"{note}: {value:.4g} clamped to [{lo}, {hi}]"
        v = min(max(v, lo), hi)
    return v


def resolve_mbsgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Alg. 2 with Thm D.1's parameters (convex when mu = 0, strongly convex when mu > 0)."""
    p = dict(c)
    prov = {k: "problem constant" for k in c}
    strong = c["mu"] > 0
    args = {k: c[k] for k in ("beta", "D", "L", "M", "n", "eps0", "d")}
    if "R" in ov:
        R, prov["R"] = int(ov["R"]), "override"
    else:
        raw = calibration.alg2_strongly_convex_R(mu=c["mu"], **args) if strong else calibration.alg2_convex_R(**args)
        prov["R"] = "Thm D.1 " + ("strongly convex (L666)" if strong else "convex (L662)")
        R = int(math.ceil(raw))
    if R > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.R", f"the calibration asks for R = {R} rounds (> {MAX_ROUNDS})")
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = calibration.alg2_sigma(L=c["L"], R=R, n=int(c["n"]), eps0=c["eps0"], delta0=c["delta0"])
        prov["sigma"] = "Thm D.1 (L658)"
    if "K" in ov:
        K, prov["K"] = int(ov["K"]), "override"
    else:
        prov["K"] = "Thm D.1 K_min (L658), rounded up"
        K = _int_clamped("K", calibration.alg2_K_min(R=R, n=int(c["n"]), eps0=c["eps0"], delta0=c["delta0"]),
                         1, int(c["n"]), prov, "Thm D.1 K_min")
    if "eta" in ov:
        eta, prov["eta"] = float(ov["eta"]), "override"
    elif strong:
        cc = c["d"] * sigma**2 / c["M"] + c["L"] ** 2
        eta = calibration.stich_eta(mu=c["mu"], beta=c["beta"], r0=c["D"] ** 2, R=R, c=cc)
        prov["eta"] = "Lemma D.5 (Stich) with a=mu, g=2 beta, c=d sigma^2/M + L^2; r0 = D^2 (our choice: ||w0-w*||^2 is unknown)"
    else:
        eta = calibration.alg2_convex_eta(R=R, **args)
        prov["eta"] = "Thm D.1 convex (L678)"
    stich_mu = c["mu"] if strong else 0.0
    prov["stich_mu"] = "Stich weights (1 - mu eta)^-(r+1) (Lemma D.5)" if strong else "uniform average (gamma_r = 1/R)"
    p.update(R=R, K=K, sigma=sigma, eta=eta, stich_mu=stich_mu)
    run_kwargs = dict(R=R, K=K, sigma=sigma, eta=eta, radius=c["D"] / 2, stich_mu=stich_mu)
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
        raw = calibration.onepass_strongly_convex_K(n=n, beta=beta, mu=mu, Delta=c["Delta"], eps0=c["eps0"],
                                                    delta0=c["delta0"], M=M, L=L, d=d, phi2=c["phi2"])
        prov["K"] = "Thm E.1 strongly convex (L1048), rounded up"
        K = _int_clamped("K", raw, 1, n, prov, "Thm E.1 K")
    else:
        raw = calibration.onepass_convex_K(L=L, beta=beta, D=D, n=n, d=d, eps0=c["eps0"], delta0=c["delta0"], M=M)
        prov["K"] = "Thm E.1 convex (L1042), rounded up"
        K = _int_clamped("K", raw, 1, n, prov, "Thm E.1 K")
    if "R" in ov:
        R, prov["R"] = int(ov["R"]), "override"
        if R * K > n:
            raise ResolutionError("algorithm.overrides.R", f"R*K = {R * K} exceeds n = {n}: one-pass batches must be disjoint")
    else:
        R, prov["R"] = n // K, "R = floor(n/K) (one pass, L176)"
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = calibration.onepass_sigma(L=L, K=K, eps0=c["eps0"], delta0=c["delta0"])
        prov["sigma"] = "Thm 3.1 / E.1 (L186, L1036)"
    V2 = calibration.gradient_noise_V2(phi2=c["phi2"], v2=c["v2"], d=d, sigma=sigma, M=M, N=N, K=K)
    prov["V2"] = "V^2 of Thm E.1 / Lemma E.3 (L1038)"
    if strong:
        lam = 0.0
        stages = multistage(R=R, beta=beta, mu=mu, V2=V2, Delta=c["Delta"])
        prov["schedule"] = ("multi-stage AC-SA of App. E.1 (L948-956), Delta = F(w0) - F* exactly; "
                            "the last stage is cut to the rounds left (our choice)")
        mu_prox = mu
    else:
        lam = calibration.onepass_convex_lambda(V=math.sqrt(V2), D=D, R=R)
        prov["lambda"] = "lambda = V/(2 D sqrt(R)) (Thm E.1 proof, L1038)"
        v = max(2 * (beta + lam), math.sqrt(V2 * R * (R + 1) * (R + 2) / (3 * D**2)))
        stages = (acsa.Stage(R, v),)
        prov["schedule"] = ("OUR CHOICE, not the paper's: single-stage AC-SA steps of Ghadimi & Lan (2012, Cor. 1), "
                            "alpha_r = 2/(r+1), eta_r = 4v/(r(r+1)), v = max{2(beta+lambda), sqrt(V^2 R(R+1)(R+2)/(3D^2))}; "
                            "seed 004 gives no alpha_r, eta_r for the convex one-pass case (it cites Woodworth et al. 2020b, Lemma 4)")
        mu_prox = lam
    p.update(K=K, R=R, sigma=sigma, V2=V2, lam=lam, stages=len(stages), fresh_batches=1)
    run_kwargs = dict(stages=tuple(stages), mu=mu_prox, lam=lam, K=K, sigma=sigma, radius=D / 2, one_pass=True)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


def multistage(*, R: int, beta: float, mu: float, V2: float, Delta: float) -> tuple[acsa.Stage, ...]:
    """App. E.1 (L948-956): R_k = ceil(max{4 sqrt(2 beta/mu), 128 V^2/(3 mu Delta 2^-(k+1))}),
    v_k = max{2 beta, [mu V^2 / (3 Delta 2^-(k-1) R_k (R_k+1)(R_k+2))]^{1/2}}, while sum R_k <= R."""
    stages, left, k = [], R, 1
    while left > 0:
        Rk = math.ceil(max(4 * math.sqrt(2 * beta / mu), 128 * V2 / (3 * mu * Delta * 2.0 ** -(k + 1))))
        Rk = min(Rk, left)
        vk = max(2 * beta, math.sqrt(mu * V2 / (3 * Delta * 2.0 ** -(k - 1) * Rk * (Rk + 1) * (Rk + 2))))
        stages.append(acsa.Stage(Rk, vk))
        left -= Rk
        k += 1
    return tuple(stages)


ALGORITHMS: Registry[AlgorithmEntry] = Registry("algorithm")
ALGORITHMS.add("noisy_mbsgd", AlgorithmEntry(
    name="noisy_mbsgd", description="Noisy ISRL-DP minibatch SGD (Algorithm 2)",
    citation="seed 004, Algorithm 2 (L491), Thm 2.1 / D.1", privacy_theorem="isrl.alg2.privacy",
    overrides=("R", "K", "sigma", "eta"), variants=("standard",), resolve=resolve_mbsgd, run=mbsgd.run,
    one_pass=lambda variant: False))
ALGORITHMS.add("accelerated_mbsgd", AlgorithmEntry(
    name="accelerated_mbsgd", description="One-pass Accelerated Noisy MB-SGD (Algorithm 1, disjoint batches)",
    citation="seed 004, Algorithm 1 (L200), Thm 3.1 / E.1", privacy_theorem="isrl.onepass.privacy",
    overrides=("R", "K", "sigma"), variants=("one_pass",), resolve=resolve_acsa, run=acsa.run,
    one_pass=lambda variant: variant == "one_pass"))
