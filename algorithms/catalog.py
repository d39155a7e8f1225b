"""The algorithm registry and each algorithm's parameter resolution (the paper's calibration, with
any spec override applied: the run and the checks then use what was actually resolved)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from algorithms import acsa, calibration, cldp, mbsgd, sdp_fl, shuffle_agd, shuffle_gd, shuffle_sgd, shuffle_sum
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
    smoothing: str | None = None      # how a non-smooth loss is handled (None: smooth losses only)
    threat_model: str = "isrl"        # the threat model its privacy theorem is about
    single_pool: bool = False         # runs on one pool of n clients (data.N = 1)
    auditable: bool = True            # engine/audit.py can simulate the worst-case neighbours of its mechanism


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
    if not math.isfinite(c["beta"]):
        p.update(_moreau(c, ov, prov, rule=calibration.alg2_moreau_beta, cite="Thm D.2 proof (L711-719)"))
    args: dict[str, Any] = {k: p[k] for k in ("beta", "D", "L", "M", "eps0")} | {"n": int(p["n"]), "d": int(p["d"])}
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
        eta = calibration.stich_eta(mu=c["mu"], beta=p["beta"], r0=c["D"] ** 2, R=R, c=cc)
        prov["eta"] = "Lemma D.5 (Stich) with a=mu, g=2 beta, c=d sigma^2/M + L^2; r0 = D^2 (our choice: ||w0-w*||^2 is unknown)"
    else:
        eta = calibration.alg2_convex_eta(R=R, **args)
        prov["eta"] = "Thm D.1 convex (L678)"
    stich_mu = c["mu"] if strong else 0.0
    prov["stich_mu"] = "Stich weights (1 - mu eta)^-(r+1) (Lemma D.5)" if strong else "uniform average (gamma_r = 1/R)"
    p.update(R=R, K=K, sigma=sigma, eta=eta, stich_mu=stich_mu)
    run_kwargs = dict(R=R, K=K, sigma=sigma, eta=eta, radius=c["D"] / 2, stich_mu=stich_mu)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


def _moreau(c: Mapping[str, float], ov: Mapping[str, float], prov: dict, *, rule: Callable, cite: str) -> dict:
    """A non-smooth loss runs on its beta_s-Moreau envelope (Lemma D.7): beta_s from the theorem's rule
    (or an override); the envelope plus the ridge term is (beta_s + mu)-smooth."""
    if "beta_s" in ov:
        beta_s, prov["beta_s"] = float(ov["beta_s"]), "override"
    else:
        beta_s = rule(L=c["L"], D=c["D"], M=c["M"], n=int(c["n"]), d=int(c["d"]), eps0=c["eps0"],
                      delta0=c["delta0"], mu=c["mu"])
        prov["beta_s"] = f"Moreau smoothing parameter, {cite}"
    prov["beta"] = "beta_s + mu: smoothness of the Moreau envelope plus the ridge term"
    return {"beta_s": beta_s, "beta": beta_s + c["mu"]}


def _convex_single_stage(*, R: int, beta: float, lam: float, V2: float, D: float, prov: dict) -> tuple[acsa.Stage]:
    v = max(2 * (beta + lam), math.sqrt(V2 * R * (R + 1) * (R + 2) / (3 * D**2)))
    prov["schedule"] = ("OUR CHOICE, not the paper's: single-stage AC-SA steps of Ghadimi & Lan (2012, Cor. 1), "
                        "alpha_r = 2/(r+1), eta_r = 4v/(r(r+1)), v = max{2(beta+lambda), sqrt(V^2 R(R+1)(R+2)/(3D^2))}; "
                        "seed 004 gives no alpha_r, eta_r for the convex case (it cites Woodworth et al. 2020b, Lemma 4)")
    return (acsa.Stage(R, v),)


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
        p.update(_moreau(c, ov, prov, rule=calibration.erm_moreau_beta, cite="Thm F.2 proof (L1110-1122)"))
    beta = p["beta"]
    if strong:
        R1 = calibration.erm_strongly_convex_R1(beta=beta, mu=mu, Delta=c["Delta"], M=M, eps0=eps0, n=n, L=L, d=d)
        prov["R"] = "Thm F.1(2) (L1062): max{sqrt(beta/mu) ln(Delta_X mu M eps0^2 n^2/(L^2 d)), 1{MK<Nn} eps0^2 n^2/(K d ln(1/delta0))}"
    else:
        R1 = calibration.erm_convex_R1(beta=beta, D=D, L=L, M=M, eps0=eps0, n=n, d=d, delta0=delta0)
        prov["R"] = ("Thm F.1(1) (L1058): max{R_1, 1{MK<Nn} eps0^2 n^2/(K d ln(1/delta0))}, R_1 read as "
                     "(beta D/L)^(1/2) (sqrt(M) eps0 n/sqrt(d ln(1/delta0)))^(1/2), the value the proof's "
                     "beta D^2/R^2 term needs (the statement's nesting of square roots is garbled; note 004 item 10)")
    K_fixed = int(ov["K"]) if "K" in ov else None
    R, K = calibration.erm_rounds_and_batch(R1=R1, n=n, N=N, M=M, eps0=eps0, delta0=delta0, d=d, K_fixed=K_fixed)
    prov["R"] += "; R and K depend on each other (K >= K_min(R)): resolved as their joint fixed point (our choice)"
    prov["K"] = "override" if K_fixed else "Thm F.1 K_min (L1056), rounded up, at the resolved R"
    if "R" in ov:
        R, prov["R"] = int(ov["R"]), "override"
        if K_fixed is None:
            K = _int_clamped("K", calibration.alg2_K_min(R=R, n=n, eps0=eps0, delta0=delta0), 1, n, prov, "K_min")
    if R > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.R", f"the calibration asks for R = {R} rounds (> {MAX_ROUNDS})")
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = calibration.alg2_sigma(L=L, R=R, n=n, eps0=eps0, delta0=delta0)
        prov["sigma"] = "Thm F.1 = Thm D.1's sigma^2 (L1056)"
    V2 = calibration.erm_V2(L=L, M=M, K=K, N=N, n=n, d=d, sigma=sigma)
    prov["V2"] = "V_X^2 <= 1{MK<nN} 4L^2/(MK) + d sigma^2/M (Thm F.1 proof, L1082-1088)"
    if strong:
        lam, mu_prox = 0.0, mu
        # a Moreau-smoothed loss runs on F_b with F_b(0) - F_b* <= F(0) - F* + L^2/(2 beta_s) (Lemma D.7)
        Delta = c["Delta"] + (L**2 / (2 * p["beta_s"]) if "beta_s" in p else 0.0)
        stages = multistage(R=R, beta=beta, mu=mu, V2=V2, Delta=Delta)
        prov["schedule"] = ("multi-stage AC-SA of App. E.1 (L948-956) with V_X^2 and Delta_X = F_X(0) - F_X*"
                            + (" + L^2/(2 beta_s) (the smoothed loss's gap, Lemma D.7)" if "beta_s" in p else "")
                            + "; the last stage is cut to the rounds left (our choice)")
    else:
        lam = calibration.erm_convex_lambda(V=math.sqrt(V2), D=D, R=R)
        prov["lambda"] = ("lambda = V_X/(||w0 - w*|| sqrt(R)) (Thm F.1 proof, L1076) with ||w0 - w*|| replaced by "
                          "its bound D/2 (w* is unknown, w0 = 0 is the domain's centre; our choice)")
        stages = _convex_single_stage(R=R, beta=beta, lam=lam, V2=V2, D=D, prov=prov)
        mu_prox = lam
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
        stages = _convex_single_stage(R=R, beta=beta, lam=lam, V2=V2, D=D, prov=prov)
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


def resolve_cldp(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Algorithm 1 of seed 001 with Thm 3's step rule; k, T and eps_ldp default to the paper's MNIST run."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    n, d = int(c["n"]), int(c["d"])
    if "k" in ov:
        k, prov["k"] = int(ov["k"]), "override"
    else:
        k = max(1, round(n / 6))
        prov["k"] = "round(n/6): the paper's MNIST ratio k/n = 10000/60000 (L197)"
    if not 1 <= k <= n:
        raise ResolutionError("algorithm.overrides.k", f"k = {k} clients per round must be in [1, n = {n}]")
    if "T" in ov:
        T, prov["T"] = int(ov["T"]), "override"
    else:
        T = math.ceil(200 * n / k)
        prov["T"] = "200 epochs of n/k rounds (L197; the seed does not state T, n/k rounds per epoch is our reading)"
    if T > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.T", f"T = {T} rounds (> {MAX_ROUNDS})")
    if "eps_ldp" in ov:
        eps_ldp, prov["eps_ldp"] = float(ov["eps_ldp"]), "override"
        if eps_ldp > 50:
            raise ResolutionError("algorithm.overrides.eps_ldp", f"eps_ldp = {eps_ldp:g}: a local epsilon above 50 "
                                                                 f"protects nothing (allowed: 0 < eps_ldp <= 50)")
    else:
        eps_ldp, prov["eps_ldp"] = 1.5, "the paper's eps0 = 1.5 of R_inf in the MNIST run (L197)"
    if "C" in ov:
        C, prov["C"] = float(ov["C"]), "override"
    else:
        C = c["L_inf"]
        prov["C"] = ("L_inf, a bound on ||grad f||_inf on the data (max |x_ij| + mu rho): clipping changes nothing "
                     "(Thm 3's C-Lipschitz w.r.t. l_1)")
    kappa = ((math.exp(eps_ldp) + 1) / math.expm1(eps_ldp)) ** 2
    G = math.sqrt(d * C**2 + C**2 * d**2 * kappa / k)
    prov["G"] = "Thm 3 (L181): G^2 = d C^2 + G_inf^2(C)/k, G_inf^2(C) = C^2 d^2 kappa (Remark 1, L185)"
    prov["eta_rule"] = "eta_t = D/(G sqrt(t)) (Thm 3, L181)"
    p.update(k=k, T=T, eps_ldp=eps_ldp, C=C, G=G, kappa=kappa, eta_rule=1, R=T, K=k)
    prov["R"], prov["K"] = "= T (rounds)", "= k (clients per round)"
    run_kwargs = dict(T=T, k=k, eps_ldp=eps_ldp, C=C, G=G, radius=c["D"] / 2, randomizer=variant)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


def resolve_shuffle_sgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Algorithm 3 of seed 000 with Thm 4.1's parameters (L187): b = sqrt(d) log(d/delta)/eps users per round,
    T = floor(n/b), eta_bar = eps b D / (L sqrt(T) (eps b + sqrt(d) log(d/delta))), P_VEC at (eps, delta, L)."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    d, L, D = int(c["d"]), c["L"], c["D"]
    eps, delta = c["eps0"], c["delta0"]
    b, T, eta = _thm41_schedule(c, ov, prov, "")
    pv = shuffle_sum.thm32(n=b, d=d, eps=eps, delta=delta, Delta2=L)
    prov["g"] = prov["b_binom"] = prov["p"] = "P_VEC at (eps, delta, Delta_2 = L) on the b users: Thm 3.2's proof (L477, L490)"
    mse = shuffle_sum.pvec_mse_bound(b, d, pv)
    LG2 = L**2 + mse / b**2
    prov["LG2"] = "L_G^2 = L^2 + (P_VEC's explicit MSE bound d (2L/g)^2 (b/4 + b b_binom p)) / b^2 (proof of Thm 4.1, eq. 4)"
    p.update(b=b, T=T, R=T, K=b, eta=eta, g=pv.one_d.g, b_binom=pv.one_d.b, p=pv.one_d.p, eps_hat=pv.eps_hat, LG2=LG2,
             thm41_parameters=float("b" not in ov and "eta" not in ov and "clamped" not in prov["b"]))
    run_kwargs = dict(T=T, b=b, eta=eta, L=L, radius=D / 2, pvec=pv)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


def _thm41_schedule(c: Mapping[str, float], ov: Mapping[str, float], prov: dict, who: str) -> tuple[int, int, float]:
    """Thm 4.1's b = sqrt(d) log(d/delta)/eps (rounded up), T = floor(n/b) and eta_bar (L187)."""
    n, d, L, D = int(c["n"]), int(c["d"]), c["L"], c["D"]
    eps, delta = c["eps0"], c["delta0"]
    lg = math.log(d / delta)
    if "b" in ov:
        b, prov["b"] = int(ov["b"]), "override"
    else:
        b = _int_clamped("b", math.sqrt(d) * lg / eps, 1, n, prov, "Thm 4.1 b")
        prov.setdefault("b", f"Thm 4.1 (L187): b = sqrt(d) log(d/delta)/eps, rounded up{who}")
    T = n // b
    if T < 1:
        raise ResolutionError("algorithm.overrides.b", f"b = {b} users per round exceeds n = {n}")
    prov["T"] = "T = floor(n/b) (L187; each user speaks once)"
    if "eta" in ov:
        eta, prov["eta"] = float(ov["eta"]), "override"
    else:
        eta = eps * b * D / (L * math.sqrt(T) * (eps * b + math.sqrt(d) * lg))
        prov["eta"] = ("Thm 4.1's eta_bar (L187) with the OCR's sqrt(dL) log(d/delta) read as sqrt(d) log(d/delta) "
                       f"(dimensions, and the proof's L_G; note 000 section 2.3){who}")
    return b, T, eta


def resolve_central_sgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """The central baseline: P_SGD's schedule (our choice, so a comparison isolates the mechanism) with Gaussian
    noise on each batch's mean gradient, sigma^2 = 8 L^2 log(2/delta)/(b^2 eps^2) (seed 000, Lemma C.5, L861-877)."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    b, T, eta = _thm41_schedule(c, ov, prov, "; used for the central baseline too (our choice)")
    L = c["L"]
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = math.sqrt(8 * L**2 * math.log(2 / c["delta0"]) / (b**2 * c["eps0"] ** 2))
        prov["sigma"] = "Lemma C.5 (L861-869) at sensitivity 2L/b (L871-877)"
    p.update(b=b, T=T, R=T, K=b, eta=eta, sigma=sigma)
    return Resolved(p, prov, frozenset(ov), dict(T=T, b=b, eta=eta, L=L, radius=c["D"] / 2, sigma=sigma))


LOCAL_MIN_ROUNDS = 10     # local_sgd: b is cut so that the run takes at least this many rounds


def resolve_local_sgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """The local baseline: one pass of SGD over disjoint batches of b users; every user sends its clipped gradient
    plus its own N(0, sigma^2 I), sigma^2 = 8 L^2 log(2/delta)/eps^2 (seed 000's Gaussian mechanism, Lemma C.5
    (L861-869), at one message's sensitivity 2L), so each message is (eps, delta)-DP on its own (local DP)."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    n, d, L, D = int(c["n"]), int(c["d"]), c["L"], c["D"]
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sigma = math.sqrt(8 * L**2 * math.log(2 / c["delta0"]) / c["eps0"] ** 2)
        prov["sigma"] = "Lemma C.5 of seed 000 (L861-869) at one message's sensitivity 2L: each user's own noise"
    if "b" in ov:
        b, prov["b"] = int(ov["b"]), "override"
    else:
        b = _int_clamped("b", max(1.0, math.floor(d * sigma**2 / (4 * L**2))), 1, max(1, n // LOCAL_MIN_ROUNDS), prov,
                         f"local b (at most n/{LOCAL_MIN_ROUNDS}: at least {LOCAL_MIN_ROUNDS} rounds)")
        prov.setdefault("b", "OUR CHOICE: b = floor(d sigma^2/(4 L^2)); Lemma 4.2's bound at its best step, "
                             "D sqrt((b L^2 + d sigma^2)/n), is then within 12% of b = 1's with b times fewer rounds")
    T = n // b
    if T < 1:
        raise ResolutionError("algorithm.overrides.b", f"b = {b} users per round exceeds n = {n}")
    prov["T"] = "T = floor(n/b): one pass, each user sends one message"
    LG2 = L**2 + d * sigma**2 / b
    prov["LG2"] = "L_G^2 = L^2 + d sigma^2/b: the clipped mean gradient plus the mean of b users' noise (Def. B.1)"
    if "eta" in ov:
        eta, prov["eta"] = float(ov["eta"]), "override"
    else:
        eta = D / math.sqrt(LG2 * T)
        prov["eta"] = "eta = D/(L_G sqrt(T)), the step minimising Lemma 4.2's bound (L564-566; OUR CHOICE of schedule)"
    p.update(b=b, T=T, R=T, K=b, eta=eta, sigma=sigma, LG2=LG2)
    return Resolved(p, prov, frozenset(ov), dict(T=T, b=b, eta=eta, L=L, radius=D / 2, sigma=sigma))


ALGORITHMS: Registry[AlgorithmEntry] = Registry("algorithm")
ALGORITHMS.add("noisy_mbsgd", AlgorithmEntry(
    name="noisy_mbsgd", description="Noisy ISRL-DP minibatch SGD (Algorithm 2)",
    citation="seed 004, Algorithm 2 (L491), Thm 2.1 / D.1", privacy_theorem="isrl.alg2.privacy",
    overrides=("R", "K", "sigma", "eta", "beta_s"), variants=("standard",), resolve=resolve_mbsgd, run=mbsgd.run,
    one_pass=lambda variant: False, smoothing="Moreau envelope with Thm D.2's beta (Lemma D.7)"))
ALGORITHMS.add("accelerated_mbsgd", AlgorithmEntry(
    name="accelerated_mbsgd", description="One-pass Accelerated Noisy MB-SGD (Algorithm 1, disjoint batches)",
    citation="seed 004, Algorithm 1 (L200), Thm 3.1 / E.1", privacy_theorem="isrl.onepass.privacy",
    overrides=("R", "K", "sigma"), variants=("one_pass",), resolve=resolve_acsa, run=acsa.run,
    one_pass=lambda variant: variant == "one_pass"))
ALGORITHMS.add("accelerated_mbsgd_erm", AlgorithmEntry(
    name="accelerated_mbsgd_erm",
    description="Accelerated Noisy MB-SGD for ERM (Algorithm 1, a fresh K-subset every round)",
    citation="seed 004, Algorithm 1 (L200), Thm 4.1 / F.1 / F.2", privacy_theorem="isrl.thm4_1.privacy",
    overrides=("R", "K", "sigma", "beta_s"), variants=("erm",), resolve=resolve_acsa_erm, run=acsa.run,
    one_pass=lambda variant: False, smoothing="Moreau envelope with Thm F.2's beta (Lemma D.7)"))
ALGORITHMS.add("cldp_sgd", AlgorithmEntry(
    name="cldp_sgd", description="CLDP-SGD: client sampling, l_inf clipping, eps0-LDP randomizer R_inf, shuffling",
    citation="seed 001, Algorithm 1 (L93-116), Thm 3 (L169-181)", privacy_theorem="shuffle.thm3.privacy",
    overrides=("T", "k", "eps_ldp", "C"), variants=("r_inf",), resolve=resolve_cldp, run=cldp.run,
    one_pass=lambda variant: False, smoothing=None, threat_model="shuffle", single_pool=True))
ALGORITHMS.add("shuffle_sgd", AlgorithmEntry(
    name="shuffle_sgd", description="P_SGD: sequentially interactive shuffle-private SGD, gradients summed by P_VEC",
    citation="seed 000, Algorithm 3 (L177-185), Thm 4.1 (L187-191)", privacy_theorem="shuffle.p_sgd.privacy",
    overrides=("b", "eta"), variants=("standard",), resolve=resolve_shuffle_sgd, run=shuffle_sgd.run,
    one_pass=lambda variant: True, smoothing=None, threat_model="shuffle", single_pool=True, auditable=False))
ALGORITHMS.add("central_sgd", AlgorithmEntry(
    name="central_sgd", description="Central-model baseline: P_SGD's schedule with Gaussian noise on each batch's mean "
                                    "gradient (trusted curator)",
    citation="seed 000, Algorithm 3's schedule (L177-187) with Lemma C.5's Gaussian mechanism (L861-877)",
    privacy_theorem="central.sgd.privacy", overrides=("b", "eta", "sigma"), variants=("standard",),
    resolve=resolve_central_sgd, run=shuffle_sgd.run_central, one_pass=lambda variant: True, smoothing=None,
    threat_model="central", single_pool=True))
ALGORITHMS.add("local_sgd", AlgorithmEntry(
    name="local_sgd", description="Local-model baseline: one-pass SGD on users' own Gaussian-noised gradients "
                                  "(each message (eps, delta)-DP; ISRL-DP with one record per silo)",
    citation="seed 000 L15 and seed 004 L164-166 (the LDP rate, Duchi et al. 2013/2018) with Lemma C.5's Gaussian "
             "mechanism (seed 000 L861-869) on every message",
    privacy_theorem="local.sgd.privacy", overrides=("b", "eta", "sigma"), variants=("standard",),
    resolve=resolve_local_sgd, run=shuffle_sgd.run_local, one_pass=lambda variant: True, smoothing=None,
    threat_model="local", single_pool=True))


def resolve_shuffle_gd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Algorithm 5 of seed 000 (P_GD) with Lemma B.6's schedule (L740): T = min{n, eps^2 n^2/(d log^2(nd/delta))},
    eta = D/(L sqrt T), every round P_VEC on all n users at (eps/(2 sqrt(2T ln(1/delta))), delta/(T+1), Delta_2 = L);
    a non-smooth loss runs on its Moreau envelope with Thm 4.9's beta (L744)."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    n_all, d, L, D = int(c["n"]), int(c["d"]), c["L"], c["D"]
    eps, delta = c["eps0"], c["delta0"]
    groups = shuffle_gd.fkt_groups(n_all) if variant == "fkt" else 1
    n = n_all // groups                                    # the users of one P_GD run (one group)
    if variant == "fkt":
        prov["groups"] = ("Lemma B.7 (L752-760): P_GD on disjoint user groups in turn, each from the previous output; "
                          "OUR CHOICE (the seed defers the groups to Feldman et al. 2020): k = ceil(log2 log2 n) equal "
                          "groups, the whole domain in each; T, eta and P_VEC below are one group's (n -> n/k)")
    if not math.isfinite(c["beta"]):
        p.update(_moreau({**c, "n": n}, ov, prov, rule=_thm49_beta, cite="Thm 4.9 proof (L744): beta = (L/D) min("
                                                                          "sqrt n, eps n/(sqrt(d) log^{3/2}(nd/delta)))"
                                                                          + (", n of one group" if groups > 1 else "")))
    if "T" in ov:
        T, prov["T"] = int(ov["T"]), "override (the per-round eps, delta follow it)"
    else:
        T = shuffle_gd.rounds(n=n, d=d, eps=eps, delta=delta)
        prov["T"] = ("Lemma B.6 proof (L740): T = min{n, eps^2 n^2/(d log^2(nd/delta))}, natural log, rounded down, "
                     "at least 1 (OUR CHOICE: the paper leaves T real)")
    if T > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.T", f"T = {T} rounds (> {MAX_ROUNDS})")
    eps_r, delta_r = shuffle_gd.per_round(eps=eps, delta=delta, T=T)
    prov["eps_round"] = "Algorithm 5 line 3 (L267): eps/(2 sqrt(2 T ln(1/delta))) per P_VEC call"
    if "eps_round" in ov:
        eps_r = float(ov["eps_round"])
        prov["eps_round"] = ("override: P_VEC calibrated at this per-round eps, NOT the paper's (the run is then not "
                             "(eps, delta)-private as claimed; for testing the optimisation bounds)")
    prov["delta_round"] = "Algorithm 5 line 3 (L267): delta/(T+1) per P_VEC call"
    if "eta" in ov:
        eta, prov["eta"] = float(ov["eta"]), "override"
    else:
        eta, prov["eta"] = shuffle_gd.step(D=D, L=L, T=T), "Lemma B.6 proof (L740): eta = D/(L sqrt T)"
    pv = shuffle_sum.thm32(n=n, d=d, eps=eps_r, delta=delta_r, Delta2=L)
    prov["g"] = prov["b_binom"] = prov["p"] = ("P_VEC at (eps_round, delta_round, Delta_2 = L) on all n users: "
                                               "Thm 3.2's proof (L477, L490)")
    mse = shuffle_sum.pvec_mse_bound(n, d, pv)
    sigma2 = mse / n**2
    prov["sigma2"] = ("Lemma B.4's sigma^2 (L712): P_VEC's explicit MSE bound d (2L/g)^2 (n/4 + n b_binom p) "
                      "(Lemma A.2's proof, L412) / n^2")
    prov["update_sign"] = ("CORRECTION: Algorithm 5 line 4 (L269) prints theta_t + eta gbar_t (ascent); we descend, "
                           "theta_t - eta gbar_t, as Lemma B.4 needs (note 000 sections 2.7, 6.3)")
    prov["output_first_index"] = ("CORRECTION: the loop (L262-263) queries theta_1..theta_T but only theta_0 is "
                                  "initialised while the output (L273) averages theta_0..theta_{T-1}; we query "
                                  "theta_0..theta_{T-1} and output their average (the points whose gradients Lemma "
                                  "B.4 sums)")
    prov["R"] = "k T: every group's T rounds, in turn" if groups > 1 else "= T"
    p.update(groups=groups, fkt_reduction=float(variant == "fkt"), T=T, R=groups * T, K=n, eta=eta, eps_round=eps_r, delta_round=delta_r, g=pv.one_d.g, b_binom=pv.one_d.b,
             p=pv.one_d.p, eps_hat=pv.eps_hat, sigma2=sigma2, LG2=L**2 + sigma2, update_sign=-1.0,
             output_first_index=0.0,
             thm49_parameters=float(not {"T", "eta", "beta_s", "eps_round"} & set(ov)))
    run_kwargs = dict(T=T, eta=eta, L=L, radius=D / 2, pvec=pv, call_eps=eps_r, call_delta=delta_r, groups=groups)
    return Resolved(p, prov, frozenset(ov), run_kwargs)


def _thm49_beta(*, L: float, D: float, n: int, d: int, eps0: float, delta0: float, **_: Any) -> float:
    """Thm 4.9's Moreau parameter (L744): beta = (L/D) min(sqrt n, eps n/(sqrt(d) log^{3/2}(nd/delta)))."""
    return L / D * min(math.sqrt(n), eps0 * n / (math.sqrt(d) * math.log(n * d / delta0) ** 1.5))


ALGORITHMS.add("shuffle_gd", AlgorithmEntry(
    name="shuffle_gd", description="P_GD: fully interactive shuffle-private gradient descent, every user's gradient "
                                   "summed by P_VEC in every round",
    citation="seed 000, Algorithm 5 (L258-273), Lemma B.6 (L724-740), Thm 4.9 (L275-283, L744-748)",
    privacy_theorem="shuffle.p_gd.privacy", overrides=("T", "eta", "beta_s", "eps_round"),
    variants=("standard", "fkt"),
    resolve=resolve_shuffle_gd, run=shuffle_gd.run, one_pass=lambda variant: False,
    smoothing="Moreau envelope with Thm 4.9's beta (Lemma 4.6)", threat_model="shuffle", single_pool=True,
    auditable=False))


# --- seed 000's P_AGD (Algorithm 4), its smoothed use (Thm 4.7) and the strongly convex restarts (Thm 4.8) -------
AGD_FIXES = ("the OCR dropped Algorithm 4's minus signs (L211-214): line 3 (L211) and line 6 (L214) read (1 - alpha_t), line 5 (L213) "
             "reads <gbar_t, theta - theta_t> + (L_t/2)||theta - theta_t||^2, i.e. theta_{t+1} = Proj(theta_t - "
             "gbar_t/L_t); the output is theta^ag_{T+1} (line 8, L216; Thm 4.3 writes theta^ag_{t+1}, L199); Lemma 4.4's "
             "'variance sigma' (L218) is sigma^2 (B.3, L613)")


def resolve_shuffle_agd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Algorithm 4 (P_AGD) with Thm 4.3's parameters (L199): b = n^{3/5} d^{1/5} L^{2/5} log^{2/5}(d/delta) /
    (eps^{2/5} beta^{2/5} D^{2/5}), T = floor(n/b), L_t = ((T+2)^{3/2} sigma/D + beta)/(t+1), alpha_t = 2/(t+2),
    P_VEC at (eps, delta, Delta_2 = L); sigma^2 = L^2/b + (P_VEC's explicit MSE bound)/b^2 (the proof's eq. (5),
    L594-611, with the constant of Lemma A.2's proof)."""
    if not math.isfinite(c["beta"]):
        raise ResolutionError("loss.kind", "shuffle_agd is Thm 4.3's P_AGD for smooth losses; a non-smooth loss runs "
                                           "on its Moreau envelope in shuffle_agd_smoothed (Thm 4.7)")
    return _shuffle_agd(c, ov, phases=1, who="Thm 4.3 (L199)")


def resolve_shuffle_agd_smoothed(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Thm 4.7 (L238-240, proof L625-629): P_AGD on the per-sample beta-Moreau envelope, beta = eps^{2/3} n^{2/3} L /
    (d^{1/3} D log^{2/3}(d/delta)), P_VEC with Delta_2 = 2L, b = (n d)^{1/3} log^{2/3}(d/delta) / eps^{2/3}."""
    if math.isfinite(c["beta"]):
        raise ResolutionError("loss.kind", "shuffle_agd_smoothed is Thm 4.7's P_AGD on the Moreau envelope of a "
                                           "non-smooth loss (hinge); a smooth loss runs in shuffle_agd (Thm 4.3)")
    return _shuffle_agd(c, ov, phases=1, who="Thm 4.7 (L625-629)")


def resolve_shuffle_agd_sc(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Thm 4.8 (L242-252, proof L633-...): k phases of P_AGD (smooth loss, Thm 4.3's parameters) or of the smoothed
    P_AGD (non-smooth loss, Thm 4.7's), each on n/k fresh users and started at the previous phase's output."""
    if not c["mu"] > 0:
        raise ResolutionError("loss.mu", "shuffle_agd_sc is Thm 4.8's reduction for strongly convex losses: loss.mu > 0")
    n = int(c["n"])
    prov: dict[str, str] = {}
    if "k" in ov:
        k, prov["phases"] = int(ov["k"]), "override"
    else:
        k = max(1, math.ceil(math.log2(max(math.log2(max(n, 4)), 2))))
        prov["phases"] = ("OUR CHOICE: k = ceil(log2(log2 n)) phases (Thm 4.8 says k = O(log log n), L244, and gives no "
                          "constant)")
    res = _shuffle_agd(c, ov, phases=k, who="Thm 4.8 (L244) phase with " + ("Thm 4.3's" if math.isfinite(c["beta"])
                                                                         else "Thm 4.7's") + " rule at n_j = floor(n/k)")
    res.provenance.update(prov)
    res.provenance["phase_rule"] = (
        "OUR CHOICE (the paper leaves the phase parameters unspecified, L633-660): every phase uses n_j = floor(n/k) "
        "fresh users (disjoint from every other phase's), the whole domain Theta for its projections and D for its "
        "parameters (b, L_t, beta), and starts at the previous phase's output. The proof's D_i = sqrt(E||theta_i - "
        "theta*||^2) <= sqrt(2 Delta_i/lambda) is unknown to the protocol; recomputing it from the recursion "
        "Delta_{i+1} <= sqrt(Delta_i) E with O()-constants set to 1 (the note's suggestion) would under-estimate it by "
        "P_VEC's hidden constant (116640 in the MSE), shrink Theta past theta* and bias the output")
    res.params["phase_rule"] = 1.0
    return res


def _shuffle_agd(c: Mapping[str, float], ov: Mapping[str, float], *, phases: int, who: str) -> Resolved:
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    n, d, L, D, mu = int(c["n"]), int(c["d"]), c["L"], c["D"], c["mu"]
    eps, delta = c["eps0"], c["delta0"]
    lg = math.log(d / delta)
    n_phase = n // phases
    if n_phase < 1:
        raise ResolutionError("algorithm.overrides.k", f"k = {phases} phases of n/k users need n >= k (n = {n})")
    smooth = math.isfinite(c["beta"])
    if smooth:
        beta_run, L_clip = c["beta"], L
        raw_b = n_phase ** 0.6 * d ** 0.2 * L ** 0.4 * lg ** 0.4 / (eps ** 0.4 * c["beta"] ** 0.4 * D ** 0.4)
        prov["b"] = (f"{who}: b = n^(3/5) d^(1/5) L^(2/5) log^(2/5)(d/delta) / (eps^(2/5) beta^(2/5) D^(2/5)) "
                     f"(Thm 4.3, L199), rounded up")
        prov["L_clip"] = "L: P_VEC's Delta_2 (Algorithm 4 line 4, L212), the users' gradients clipped to it"
    else:
        if "beta_s" in ov:
            beta_s, prov["beta_s"] = float(ov["beta_s"]), "override"
        else:
            beta_s = eps ** (2 / 3) * n_phase ** (2 / 3) * L / (d ** (1 / 3) * D * lg ** (2 / 3))
            prov["beta_s"] = (f"{who}: beta = eps^(2/3) n^(2/3) L / (d^(1/3) D log^(2/3)(d/delta)) (proof of Thm 4.7, "
                              f"L629); the envelope is the min over R^d, not Theta (algorithms/losses.py MoreauHinge: "
                              f"closed form; Lemma 4.6's conclusions hold for it since the hinge is Lipschitz on R^d)")
        beta_run = beta_s + mu
        p["beta_s"], p["beta"] = beta_s, beta_run
        prov["beta"] = "beta_s + mu: smoothness of the Moreau envelope plus the ridge term"
        L_clip = 2 * L
        raw_b = (n_phase * d) ** (1 / 3) * lg ** (2 / 3) / eps ** (2 / 3)
        prov["b"] = (f"{who}: b = (n d)^(1/3) log^(2/3)(d/delta) / eps^(2/3) (Thm 4.3's b at Thm 4.7's beta; Cor. "
                     f"B.10), rounded up")
        prov["L_clip"] = ("2L: P_VEC's Delta_2 for the envelope's gradients (Lemma 4.6(1): 2L-Lipschitz; proof of Thm "
                          "4.7, L625), the users' gradients clipped to it")
    if "b" in ov:
        b, prov["b"] = int(ov["b"]), "override"
    else:
        b = _int_clamped("b", raw_b, 1, n_phase, prov, "b")
    T = n_phase // b
    if T < 1:
        raise ResolutionError("algorithm.overrides.b", f"b = {b} users per round exceeds the {n_phase} users of a phase")
    if T * phases > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.b", f"{T * phases} rounds (> {MAX_ROUNDS})")
    prov["T_phase"] = "T = floor(n_phase/b) (Algorithm 4 line 1, L209; each user speaks once)"
    pv = shuffle_sum.thm32(n=b, d=d, eps=eps, delta=delta, Delta2=L_clip)
    prov["g"] = prov["b_binom"] = prov["p"] = ("P_VEC at (eps, delta, Delta_2 = L_clip) on the b users: Thm 3.2's "
                                               "proof (L477, L490)")
    mse = shuffle_sum.pvec_mse_bound(b, d, pv)
    prov["pvec_mse"] = "P_VEC's explicit MSE bound d (2 Delta_2/g)^2 (b/4 + b b_binom p) (Lemma A.2's proof, L404-412)"
    sigma2 = L_clip ** 2 / b + mse / b ** 2
    prov["sigma"] = ("OUR READING: sigma^2 = L_clip^2/b + pvec_mse/b^2, the proof's eq. (5) (L594-611, sigma^2 = "
                     "L^2/b + O(d L^2 log^2(d/delta)/(b^2 eps^2))) with P_VEC's explicit MSE in place of the O() term "
                     "(its constant is ~10^5); it drives L_t")
    if "Lt_numerator" in ov:
        K, prov["Lt_numerator"] = float(ov["Lt_numerator"]), "override"
    else:
        K = shuffle_agd.lt_numerator(T=T, sigma=math.sqrt(sigma2), D=D, beta=beta_run)
        prov["Lt_numerator"] = "(T+2)^(3/2) sigma/D + beta: L_t = Lt_numerator/(t+1), alpha_t = 2/(t+2) (Thm 4.3, L199)"
    prov["pseudo_code_fixes"] = AGD_FIXES
    paper = float(not ({"b", "beta_s", "Lt_numerator"} & set(ov)) and "clamped" not in prov["b"])
    prov["paper_parameters"] = "1 when b, beta_s and L_t are the theorem's (not overridden, b not clamped)"
    p.update(b=b, T_phase=T, phases=phases, R=T * phases, K=b, n_phase=n_phase, L_clip=L_clip, g=pv.one_d.g,
             b_binom=pv.one_d.b, p=pv.one_d.p, eps_hat=pv.eps_hat, pvec_mse=mse, sigma=math.sqrt(sigma2),
             sigma2=sigma2, Lt_numerator=K, pseudo_code_fixes=4.0, paper_parameters=paper)
    prov["R"], prov["K"] = "total rounds: phases x T", "= b (users per round)"
    prov["n_phase"] = "floor(n/phases): the users of one run of P_AGD (all n for a single run)"
    prov["sigma2"] = "sigma^2 (see sigma)"
    prov["eps_hat"] = "eps/(18 sqrt(ln((d+1)/delta))): P_VEC's per-coordinate epsilon (Thm A.6's proof, L490)"
    prov["phases"] = "1 (a single run of P_AGD)"
    run_kwargs = dict(T=T, b=b, K=K, phases=phases, L_clip=L_clip, radius=D / 2, pvec=pv, claim=(eps, delta))
    return Resolved(p, prov, frozenset(ov), run_kwargs)


_AGD_CITE = "seed 000, Algorithm 4 (L205-216)"
ALGORITHMS.add("shuffle_agd", AlgorithmEntry(
    name="shuffle_agd", description="P_AGD: sequentially interactive shuffle-private AC-SA (Lan 2012), gradients "
                                    "summed by P_VEC",
    citation=f"{_AGD_CITE}, Thm 4.3 (L199-201)", privacy_theorem="shuffle.p_agd.privacy",
    overrides=("b", "Lt_numerator"), variants=("standard",), resolve=resolve_shuffle_agd, run=shuffle_agd.run,
    one_pass=lambda variant: True, smoothing=None, threat_model="shuffle", single_pool=True, auditable=False))
ALGORITHMS.add("shuffle_agd_smoothed", AlgorithmEntry(
    name="shuffle_agd_smoothed", description="P_AGD on the per-sample Moreau envelope of a non-smooth loss, P_VEC with "
                                             "Delta_2 = 2L",
    citation=f"{_AGD_CITE}, Thm 4.7 (L238-240, L625-629)", privacy_theorem="shuffle.p_agd.privacy",
    overrides=("b", "Lt_numerator", "beta_s"), variants=("standard",), resolve=resolve_shuffle_agd_smoothed,
    run=shuffle_agd.run, one_pass=lambda variant: True, smoothing="Moreau envelope with Thm 4.7's beta (Lemma 4.6)",
    threat_model="shuffle", single_pool=True, auditable=False))
ALGORITHMS.add("shuffle_agd_sc", AlgorithmEntry(
    name="shuffle_agd_sc", description="Thm 4.8's restarts: k phases of (smoothed) P_AGD on disjoint fresh users, each "
                                       "started at the previous output",
    citation=f"{_AGD_CITE}, Thm 4.8 (L242-252, L633-)", privacy_theorem="shuffle.p_agd.privacy",
    overrides=("b", "Lt_numerator", "beta_s", "k"), variants=("standard",), resolve=resolve_shuffle_agd_sc,
    run=shuffle_agd.run, one_pass=lambda variant: True,
    smoothing="Moreau envelope with Thm 4.7's beta at n/k (Lemma 4.6)", threat_model="shuffle", single_pool=True,
    auditable=False))


# --- seed 004, section 5 / App. G: shuffle DP (Lnnn = line of seed 004) ------------------------------------------------
def resolve_shuffled_mbsgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Shuffled Noisy MB-SGD with Thm G.1's parameters (L1160-1184): K = 1, M_r = M, R of L1170, eta of L1184 (convex)
    or Lemma D.5's (strongly convex), and sigma^2 = C x (Thm G.1's expression) with C the smallest constant the
    accountant (verifiers/shuffled_gaussian.py) certifies for this run's (eps, delta) -- the paper leaves C open."""
    from verifiers import shuffled_gaussian

    p = dict(c)
    prov = {k: "problem constant" for k in c}
    n, d, N = int(c["n"]), int(c["d"]), int(c["N"])
    L, D, beta, mu = c["L"], c["D"], c["beta"], c["mu"]
    eps, delta = c["eps0"], c["delta0"]
    M = int(round(c["M"]))
    if abs(c["M"] - M) > 1e-9:
        raise ResolutionError("data.participation", f"Thm 5.1 fixes M_r = M (L238); this participation gives "
                                                    f"M = {c['M']:.4g} (set low = high)")
    strong = mu > 0
    if not math.isfinite(beta):
        raise ResolutionError("loss.kind", "Shuffled Noisy MB-SGD is implemented for smooth losses")
    common = [n**2 * N**2 * eps**2 / M, N / M, min(n, eps**2 * n**2 * N**2 / (d * M))]
    if strong:
        common.append(8 * beta / mu * math.log(max(math.e, beta * D**2 * mu * eps**2 * n**2 * N**2 / (d * L**2))))
        rule = "strongly convex: max{n^2N^2eps^2/M, N/M, (8 beta/mu) ln(beta D^2 mu eps^2 n^2 N^2/(d L^2)), min{n, eps^2n^2N^2/(dM)}}"
    else:
        common.append(beta * D / L * min(math.sqrt(n * M), eps * n * N / math.sqrt(d)))
        rule = "convex: max{n^2N^2eps^2/M, N/M, min{n, eps^2n^2N^2/(dM)}, (beta D/L) min{sqrt(nM), eps n N/sqrt(d)}}"
    R_paper = int(math.ceil(max(common) - 1e-9))
    if "R" in ov:
        R = int(ov["R"])
        prov["R"] = f"override (Thm G.1's R (L1170, {rule}) is {R_paper})"
    else:
        R, prov["R"] = R_paper, f"Thm G.1 proof (L1170), {rule}, rounded up"
    if R > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.R", f"Thm G.1 asks for R = {R} rounds (> {MAX_ROUNDS}); set R")
    base = shuffled_gaussian.thm51_base(L=L, R=R, M=M, N=N, n=n, eps=eps, delta=delta)
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
        prov["C_thm51"] = "sigma^2 / (Thm G.1's expression) for the overridden sigma"
    else:
        sigma = shuffled_gaussian.min_sigma(eps=eps, L=L, M=M, N=N, n=n, R=R, delta=delta)
        prov["sigma"] = ("Thm G.1 (L1160): sigma^2 = C L^2 R M ln(RM^2/(N delta)) ln(R/delta) ln(1/delta)/(n^2 N^2 "
                         "eps^2). THE PAPER LEAVES THE ABSOLUTE CONSTANT C OPEN: C is set to the smallest value the "
                         "accountant certifies, i.e. sigma is the smallest (bisection, rel. resolution "
                         f"{shuffled_gaussian.SIGMA_REL_RES:g}) with accounted epsilon <= eps at delta. The accountant is "
                         "OUR CHOICE of published bounds in place of the proof's O() steps (exact Gaussian local "
                         "randomizer, FMT 2020b Thm 3.8 numerical, Balle-Barthe-Gaboardi subsampling, KOV composition) "
                         "with our fixed delta split: C is the smallest for this chain")
        prov["C_thm51"] = "C = sigma^2 / (Thm G.1's expression without C), found by the sigma search (never tuned for utility)"
    C = sigma**2 / base
    if "eta" in ov:
        eta, prov["eta"] = float(ov["eta"]), "override"
    elif strong:
        eta = calibration.stich_eta(mu=mu, beta=beta, r0=D**2, R=R, c=d * sigma**2 / M + L**2)
        prov["eta"] = ("Lemma D.5 (Stich) with a=mu, g=2 beta, c=d sigma^2/M + L^2 (Thm G.1 proof, L1192: 'by Lemma "
                       "D.6 ... there exists eta'); r0 = D^2 (our choice)")
    else:
        logs = math.log(R * M**2 / (N * delta)) * math.log(R / delta) * math.log(1 / delta)
        eta = min(1 / beta, D * math.sqrt(M) / (L * R) * min(math.sqrt(n), eps * n * N / math.sqrt(d * M * logs)))
        prov["eta"] = ("Thm G.1 proof (L1184): min{1/beta, (D sqrt(M)/(L R)) min{sqrt(n), eps n N / sqrt(d M "
                       "ln(RM^2/(N delta)) ln(R/delta) ln(1/delta))}}")
    stich_mu = mu if strong else 0.0
    prov["stich_mu"] = "Stich weights (1 - mu eta)^-(r+1) (Lemma D.5)" if strong else "uniform average (gamma_r = 1/R)"
    prov["K"] = "K = 1 (Thm G.1 proof, L1170)"
    p.update(R=R, K=1, M=M, sigma=sigma, eta=eta, stich_mu=stich_mu, C_thm51=C, R_thm_g1=R_paper,
             thm_g1_parameters=float(not ({"R", "sigma", "eta"} & set(ov))))
    prov["R_thm_g1"] = "the R Thm G.1's proof prescribes (L1170), for comparison with the R run"
    return Resolved(p, prov, frozenset(ov), dict(R=R, sigma=sigma, eta=eta, radius=D / 2, stich_mu=stich_mu))


def resolve_sdp_acsa(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Alg. 6 with Thm G.2's parameters (L1299-1311): K of L1305 (convex) or L1311 (strongly convex), R = floor(n/K),
    P_vec at (eps, delta, L) over the round's N K gradients with seed 000's Thm 3.2 parameters (seed 004 gives no b,
    g, p), V^2 with P_vec's explicit variance, lambda = V/(2 D sqrt R) (L1301) and our AC-SA steps as for Alg. 1."""
    p = dict(c)
    prov = {k: "problem constant" for k in c}
    n, d, N, L, beta, mu, D = int(c["n"]), int(c["d"]), int(c["N"]), c["L"], c["beta"], c["mu"], c["D"]
    M, eps, delta = c["M"], c["eps0"], c["delta0"]
    if abs(M - N) > 1e-9:
        raise ResolutionError("data.participation", "Alg. 6 is run with M = N here (Thm 5.2's statement, L254)")
    strong = mu > 0
    if "K" in ov:
        K, prov["K"] = int(ov["K"]), "override"
    elif strong:
        kappa = beta / mu
        inner = mu * c["Delta"] * min(eps**2 * n**2 * M**2 / (L**2 * d * math.log(1 / delta)), n * M / c["phi2"])
        raw = n / (math.sqrt(kappa) * math.log(max(inner, math.e)))
        prov["K"] = ("Thm G.2 proof (L1311): n/(sqrt(kappa) ln(mu Delta min{eps^2n^2M^2/(L^2 d ln(1/delta)), nM/phi^2}))"
                     ", rounded up (the text's eps0, delta0 read as eps, delta)")
        K = _int_clamped("K", raw, 1, n, prov, "Thm G.2 K")
    else:
        raw = (L / (beta * D)) ** 0.4 * n**0.6 * (d * math.log(1 / delta)) ** 0.2 / (eps**0.4 * M**0.4)
        prov["K"] = ("Thm G.2 proof (L1305): (L/(beta D))^(2/5) n^(3/5) (d ln(1/delta))^(1/5) / (eps^(2/5) M^(2/5)), "
                     "rounded up (the text's eps0, delta0 read as eps, delta; note 004 section 2.4)")
        K = _int_clamped("K", raw, 1, n, prov, "Thm G.2 K")
    g2_K = float("K" not in ov and "clamped" not in prov["K"])
    R, prov["R"] = n // K, "R = floor(n/K) (one pass, L1297)"
    pv = shuffle_sum.thm32(n=N * K, d=d, eps=eps, delta=delta, Delta2=L)
    prov["g"] = prov["b_binom"] = prov["p"] = (
        "P_vec at (eps, delta, Delta_2 = L) over the round's N K users: seed 000's Thm 3.2 parameters (L477, L490 of "
        "seed 000), since seed 004's Lemma G.1 (L1208) only says suitable b, g, p exist (our choice of source)")
    users = N * K
    pvec_var = shuffle_sum.pvec_mse_bound(users, d, pv) / users**2
    prov["pvec_var"] = "E||P_vec - sum||^2/(MK)^2 from the explicit MSE bound of seed 000's Lemma A.2 proof"
    V2 = c["phi2"] / (M * K) + (c["v2"] / M * (N - M) / (N - 1) if N > 1 else 0.0) + pvec_var
    prov["V2"] = "V^2 = phi^2/(MK) + v^2/M (N-M)/(N-1) 1{N>1} + Var(g_r) (Thm G.2 proof, L1299-1301)"
    if strong:
        lam, mu_prox = 0.0, mu
        stages = multistage(R=R, beta=beta, mu=mu, V2=V2, Delta=c["Delta"])
        prov["schedule"] = "multi-stage AC-SA of App. E.1 (L948-956), as Thm G.2 (2) says (L1279)"
    else:
        lam = math.sqrt(V2) / (2 * D * math.sqrt(R))
        prov["lambda"] = "lambda = V/(2 D sqrt(R)) (Thm G.2 proof, L1301)"
        stages = _convex_single_stage(R=R, beta=beta, lam=lam, V2=V2, D=D, prov=prov)
        mu_prox = lam
    p.update(g2_K=g2_K, K=K, R=R, V2=V2, lam=lam, stages=len(stages), fresh_batches=1, g=pv.one_d.g, b_binom=pv.one_d.b,
             p=pv.one_d.p, eps_hat=pv.eps_hat, pvec_var=pvec_var)
    return Resolved(p, prov, frozenset(ov), dict(stages=tuple(stages), mu=mu_prox, lam=lam, K=K, L=L, radius=D / 2,
                                                 pvec=pv))


ALGORITHMS.add("shuffled_mbsgd", AlgorithmEntry(
    name="shuffled_mbsgd", description="Shuffled Noisy MB-SGD: Algorithm 2 with K = 1, M_r = M and a shuffler "
                                       "permuting the M Gaussian-noised reports every round",
    citation="seed 004, section 5 (L238), Thm 5.1 / G.1 (L240, L1160-1200)", privacy_theorem="sdp.thm5_1.privacy",
    overrides=("R", "sigma", "eta"), variants=("standard",), resolve=resolve_shuffled_mbsgd, run=sdp_fl.run_shuffled_mbsgd,
    one_pass=lambda variant: False, smoothing=None, threat_model="shuffle", auditable=False))
ALGORITHMS.add("sdp_accelerated_mbsgd", AlgorithmEntry(
    name="sdp_accelerated_mbsgd", description="SDP Accelerated Noisy MB-SGD (Algorithm 6): one-pass Algorithm 1 with "
                                              "the per-record gradients summed by P_vec",
    citation="seed 004, Algorithm 6 (L1256), Algs. 4-5 (L1216-1249), Thm 5.2 / G.2 (L254, L1273-1311)",
    privacy_theorem="sdp.thm5_2.privacy", overrides=("K",), variants=("one_pass",), resolve=resolve_sdp_acsa,
    run=sdp_fl.run_sdp_acsa, one_pass=lambda variant: True, smoothing=None, threat_model="shuffle", auditable=False))
