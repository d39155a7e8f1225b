"""The algorithm registry and each algorithm's parameter resolution (the paper's calibration, with
any spec override applied: the run and the checks then use what was actually resolved)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from algorithms import acsa, calibration, cldp, mbsgd, shuffle_sgd, shuffle_sum
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
    mse = d * (2 * L / pv.one_d.g) ** 2 * (b / 4 + b * pv.one_d.b * pv.one_d.p)
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
