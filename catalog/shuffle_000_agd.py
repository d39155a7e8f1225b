"""Seed 000: P_AGD (Algorithm 4) with Thm 4.3's parameters, its smoothed use (Thm 4.7) and the strongly convex
restarts (Thm 4.8)."""
from __future__ import annotations

import math
from typing import Mapping

from algorithms import shuffle_agd, shuffle_sum
from catalog import pvec_calibration
from catalog.base import MAX_ROUNDS, AlgorithmEntry, ResolutionError, Resolved, int_clamped

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
    return _shuffle_agd(c, ov, phases=1, who="Thm 4.3 (L199)", variant=variant)


def resolve_shuffle_agd_smoothed(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Thm 4.7 (L238-240, proof L625-629): P_AGD on the per-sample beta-Moreau envelope, beta = eps^{2/3} n^{2/3} L /
    (d^{1/3} D log^{2/3}(d/delta)), P_VEC with Delta_2 = 2L, b = (n d)^{1/3} log^{2/3}(d/delta) / eps^{2/3}."""
    if math.isfinite(c["beta"]):
        raise ResolutionError("loss.kind", "shuffle_agd_smoothed is Thm 4.7's P_AGD on the Moreau envelope of a "
                                           "non-smooth loss (hinge); a smooth loss runs in shuffle_agd (Thm 4.3)")
    return _shuffle_agd(c, ov, phases=1, who="Thm 4.7 (L625-629)", variant=variant)


def resolve_shuffle_agd_sc(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Thm 4.8 (L242-252, proof L633-...): k phases of P_AGD (smooth loss, Thm 4.3's parameters) or of the smoothed
    P_AGD (non-smooth loss, Thm 4.7's), each on n/k fresh users and started at the previous phase's output."""
    if not c["mu"] > 0:
        raise ResolutionError("loss.mu", "shuffle_agd_sc is Thm 4.8's reduction for strongly convex losses: loss.mu > 0")
    n = int(c["n"])
    prov: dict[str, str] = {}
    if "k" in ov:
        k, prov["phases"] = int(ov["k"]), "override"
        prov["k"] = "override: the number of phases (Thm 4.8 sets only k = O(log log n), L244)"
    else:
        k = max(1, math.ceil(math.log2(max(math.log2(max(n, 4)), 2))))
        prov["phases"] = ("OUR CHOICE: k = ceil(log2(log2 n)) phases (Thm 4.8 says k = O(log log n), L244, and gives no "
                          "constant)")
    shrinking = variant.endswith("shrinking")
    res = _shuffle_agd(c, ov, phases=k, who="Thm 4.8 (L244) phase with " + ("Thm 4.3's" if math.isfinite(c["beta"])
                                                                         else "Thm 4.7's") + " rule at n_j = floor(n/k)",
                       variant=variant.removesuffix("_shrinking").removesuffix("shrinking") or "standard")
    res.provenance.update(prov)
    if shrinking and math.isfinite(c["beta"]):
        return _smooth_shrinking_phases(c, ov, res, k, variant.removesuffix("_shrinking").removesuffix("shrinking")
                                        or "standard")
    if shrinking:
        return _shrinking_phases(c, ov, res, k)
    res.provenance["phase_rule"] = (
        "OUR CHOICE (the paper leaves the phase parameters unspecified, L633-660): every phase uses n_j = floor(n/k) "
        "fresh users (disjoint from every other phase's), the whole domain Theta for its projections and D for its "
        "parameters (b, L_t, beta), and starts at the previous phase's output. The proof's D_i = sqrt(E||theta_i - "
        "theta*||^2) <= sqrt(2 Delta_i/lambda) is unknown to the protocol; recomputing it from the recursion "
        "Delta_{i+1} <= sqrt(Delta_i) E with O()-constants set to 1 (the note's suggestion) would under-estimate it by "
        "P_VEC's hidden constant (116640 in the MSE), shrink Theta past theta* and bias the output")
    res.params["phase_rule"] = 1.0
    return res


def _shrinking_phases(c: Mapping[str, float], ov: Mapping[str, float], res: Resolved, k: int) -> Resolved:
    """The proof of Thm 4.8, non-smooth case (L639-646): phase i's convex guarantee (Thm 4.7's) holds with D replaced
    by D_i, the distance from its starting point to theta*, and D_i^2 <= 2 Delta_i/lambda. Each phase's parameters
    that Thm 4.7 sets from D -- the smoothing beta_i = eps^(2/3) n_i^(2/3) L/(d^(1/3) D_i log^(2/3)(d/delta)) and
    L_t's numerator (T+2)^(3/2) sigma/D_i + beta_i + lambda -- use D_i from the proof's recursion with its universal
    constant C set to 1: D_1 = D, Delta_{i+1} = D_i (L/sqrt(n_i) + d^(1/3) L log^(2/3)(d/delta)/(eps n_i)^(2/3)),
    D_{i+1} = min(D, sqrt(2 Delta_{i+1}/lambda)). Thm 4.7's b does not depend on D, so b, T and P_VEC stay those of
    every phase. Projections stay on Theta (our reading: the proof uses D_i only as the distance bound in Thm 4.7's
    guarantee, and a ball of radius D_i around the previous output could cut theta* off when C > 1). The smooth case
    (whose b changes with D_i) is ``_smooth_shrinking_phases``."""
    if "beta_s" in ov or "Lt_numerator" in ov:
        raise ResolutionError("algorithm.overrides", "the shrinking phases set beta and L_t from D_i: no override")
    p, prov = res.params, res.provenance
    L, D, d, lam = c["L"], c["D"], int(c["d"]), c["mu"]
    eps, delta = c["eps0"], c["delta0"]
    lg = math.log(d / delta)
    n_i, T = int(p["n_phase"]), int(p["T_phase"])
    Ds = [D]
    for _ in range(k - 1):
        Di = Ds[-1]
        excess = Di * (L / math.sqrt(n_i) + d ** (1 / 3) * L * lg ** (2 / 3) / (eps * n_i) ** (2 / 3))
        Ds.append(min(D, math.sqrt(2 * excess / lam)))
    betas = tuple(eps ** (2 / 3) * n_i ** (2 / 3) * L / (d ** (1 / 3) * Di * lg ** (2 / 3)) for Di in Ds)
    Ks = tuple(shuffle_agd.lt_numerator(T=T, sigma=p["sigma"], D=Di, beta=betas[i] + lam) for i, Di in enumerate(Ds))
    shrunk = Ds[-1] < D * (1 - 1e-12)
    p.update(shrinking_domain=float(shrunk), D_last_phase=Ds[-1], Lt_numerator_last_phase=Ks[-1],
             beta_s_last_phase=betas[-1])
    prov["beta_s_last_phase"] = "the last phase's (phase_rule)"
    prov["shrinking_domain"] = ("1: the phases' parameters use the proof's D_i (see phase_rule)" if shrunk else
                                "0: the recursion keeps D_i = D in every phase (nothing shrank: the rate would judge "
                                "our phase rule, not the theorem)")
    prov["D_last_phase"] = prov["Lt_numerator_last_phase"] = "the last phase's (phase_rule)"
    prov["phase_rule"] = (
        "OUR CHOICE of the phase parameters the paper leaves unspecified, from the proof of Thm 4.8 (L639-646): phase "
        "i's beta and L_t use D_i, D_1 = D, Delta_{i+1} = D_i (L/sqrt(n_i) + d^(1/3) L log^(2/3)(d/delta)/(eps "
        "n_i)^(2/3)) (the proof's universal C set to 1), D_{i+1} = min(D, sqrt(2 Delta_{i+1}/lambda)); b, T and P_VEC "
        "as in every phase (Thm 4.7's b has no D); projections stay on Theta (a ball of radius D_i around the "
        "previous output could cut theta* off when C > 1)")
    p["phase_rule"] = 2.0
    run_kwargs = dict(res.run_kwargs, phase_K=Ks, phase_beta_s=betas)
    return Resolved(p, prov, res.overridden, run_kwargs)


def _smooth_shrinking_phases(c: Mapping[str, float], ov: Mapping[str, float], res: Resolved, k: int,
                             variant: str) -> Resolved:
    """The proof of Thm 4.8, smooth case (L650-699): phase i's guarantee is Thm 4.3's with D replaced by D_i, the
    distance from its starting point to theta* (eq. (6), L652: Delta_{i+1} <= C (A D_i^(6/5)/n_i^(4/5) + L D_i/
    sqrt(n_i)), A = d^(2/5) beta^(1/5) L^(4/5) log^(4/5)(d/delta)/eps^(4/5)), D_i^2 <= 2 Delta_i/lambda (L639). Each
    phase's parameters that Thm 4.3 sets from D use D_i: its batch b_i = n_i^(3/5) d^(1/5) L^(2/5) log^(2/5)(d/delta)
    / (eps^(2/5) beta^(2/5) D_i^(2/5)) (L199), T_i = floor(n_i/b_i), P_VEC for b_i users, sigma_i^2 = L^2/b_i +
    pvec_mse_i/b_i^2 and L_t's numerator (T_i+2)^(3/2) sigma_i/D_i + beta. D_i from the proof's recursion (6) with
    its constant C set to 1: D_1 = D, D_{i+1} = min(D, sqrt(2 Delta_{i+1}/lambda)). The users: k disjoint groups of
    n_i = floor(n/k), phase i's T_i b_i users from group i, each in one P_VEC call (algorithms/shuffle_agd.py
    ``_agd_phases``). Projections stay on Theta (as in the non-smooth phases)."""
    if "b" in ov or "Lt_numerator" in ov:
        raise ResolutionError("algorithm.overrides", "the smooth shrinking phases set b and L_t from D_i: no override")
    p, prov = res.params, res.provenance
    L, D, d, lam, beta = c["L"], c["D"], int(c["d"]), c["mu"], c["beta"]
    eps, delta = c["eps0"], c["delta0"]
    lg = math.log(d / delta)
    n_i = int(p["n_phase"])
    A = d ** 0.4 * beta ** 0.2 * L ** 0.8 * lg ** 0.8 / eps ** 0.8
    Ds, bs, Ts, Ks, pvs, clamped = [D], [], [], [], [], []
    for i in range(k):
        Di = Ds[-1]
        raw = n_i ** 0.6 * d ** 0.2 * L ** 0.4 * lg ** 0.4 / (eps ** 0.4 * beta ** 0.4 * Di ** 0.4)
        b = min(max(math.ceil(raw), 1), n_i)
        if b != math.ceil(raw):
            clamped.append(i + 1)
        T = n_i // b
        pv = pvec_calibration.pvec_for(variant, b, d, eps, delta, L)[0]
        sigma2 = L ** 2 / b + shuffle_sum.pvec_mse_bound(b, d, pv) / b ** 2
        bs.append(b)
        Ts.append(T)
        pvs.append(pv)
        Ks.append(shuffle_agd.lt_numerator(T=T, sigma=math.sqrt(sigma2), D=Di, beta=beta))
        excess = A * Di ** 1.2 / n_i ** 0.8 + L * Di / math.sqrt(n_i)          # eq. (6), L652, C = 1
        Ds.append(min(D, math.sqrt(2 * excess / lam)))
    Ds.pop()
    R = sum(Ts)
    if R > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.k", f"{R} rounds (> {MAX_ROUNDS})")
    paper = float(p["paper_parameters"] == 1 and not clamped)
    shrunk = Ds[-1] < D * (1 - 1e-12)
    p.update(shrinking_domain=float(shrunk), phase_batches=1.0, D_last_phase=Ds[-1], b_last_phase=bs[-1], T_last_phase=Ts[-1],
             Lt_numerator_last_phase=Ks[-1], b=bs[0], K=bs[0], T_phase=Ts[0], R=R, Lt_numerator=Ks[0],
             paper_parameters=paper, phase_users_used=max(b * T for b, T in zip(bs, Ts)),
             g=pvs[0].one_d.g, b_binom=pvs[0].one_d.b, p=pvs[0].one_d.p, eps_hat=pvs[0].eps_hat,
             pvec_mse=shuffle_sum.pvec_mse_bound(bs[0], d, pvs[0]))
    p["sigma2"] = L ** 2 / bs[0] + p["pvec_mse"] / bs[0] ** 2
    p["sigma"] = math.sqrt(p["sigma2"])
    for key in ("b", "K", "T_phase", "Lt_numerator", "g", "b_binom", "p", "eps_hat", "pvec_mse", "sigma", "sigma2"):
        prov[key] = f"phase 1's (D_1 = D; phase_rule): {prov.get(key, '')}"
    prov["b"] += f"; clamped to [1, n_i] in phases {clamped}" if clamped else ""
    prov["R"] = "total rounds: the sum of the phases' T_i"
    prov["phase_users_used"] = "the most users one phase reads, max_i T_i b_i (<= n_i: each phase's group)"
    for key in ("D_last_phase", "b_last_phase", "T_last_phase", "Lt_numerator_last_phase"):
        prov[key] = "the last phase's (phase_rule)"
    prov["phase_batches"] = "1: the batch b_i, rounds T_i and P_VEC change from phase to phase (phase_rule)"
    prov["shrinking_domain"] = ("1: the phases' parameters (b, T, P_VEC, L_t) use the proof's D_i (see phase_rule)"
                                if shrunk else "0: the recursion keeps D_i = D in every phase (nothing shrank: the "
                                               "rate would judge our phase rule, not the theorem)")
    prov["paper_parameters"] = "1 when every phase's b_i and L_t are Thm 4.3's at D_i (not overridden, not clamped)"
    prov["phase_rule"] = (
        "OUR CHOICE of the phase parameters the paper leaves unspecified (L244: only k = O(log log n) phases of n/k "
        "users; L650-699 proves the smooth case from Thm 4.3's guarantee with D replaced by D_i): phase i runs Thm "
        "4.3's P_AGD with D_i for D in every parameter Thm 4.3 sets from D (b_i, hence T_i = floor(n_i/b_i) and P_VEC "
        "for b_i users, and L_t); D_1 = D, Delta_{i+1} = A D_i^(6/5)/n_i^(4/5) + L D_i/sqrt(n_i) (eq. (6), L652, the "
        "proof's C set to 1, as in the non-smooth phases), D_{i+1} = min(D, sqrt(2 Delta_{i+1}/lambda)) (L639); "
        "phase i reads T_i b_i users of its own group of n_i = floor(n/k) (the proof's disjoint subsets, L633), each "
        "in one P_VEC call; projections stay on Theta (a ball of radius D_i around the previous output could cut "
        "theta* off when C > 1)")
    p["phase_rule"] = 3.0
    run_kwargs = dict(res.run_kwargs, T=Ts[0], b=bs[0], K=Ks[0], pvec=pvs[0], phase_K=tuple(Ks), phase_b=tuple(bs),
                      phase_T=tuple(Ts), phase_pvec=tuple(pvs))
    return Resolved(p, prov, res.overridden, run_kwargs)


def _shuffle_agd(c: Mapping[str, float], ov: Mapping[str, float], *, phases: int, who: str,
                 variant: str = "standard") -> Resolved:
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
        b = int_clamped("b", raw_b, 1, n_phase, prov, "b")
    T = n_phase // b
    if T < 1:
        raise ResolutionError("algorithm.overrides.b", f"b = {b} users per round exceeds the {n_phase} users of a phase")
    if T * phases > MAX_ROUNDS:
        raise ResolutionError("algorithm.overrides.b", f"{T * phases} rounds (> {MAX_ROUNDS})")
    prov["T_phase"] = "T = floor(n_phase/b) (Algorithm 4 line 1, L209; each user speaks once)"
    pv, prov["g"], prov["b_binom"], prov["p"], prov["eps_hat"] = pvec_calibration.pvec_for(variant, b, d, eps, delta, L_clip)
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
             sigma2=sigma2, Lt_numerator=K, pseudo_code_fixes=4.0, paper_parameters=paper,
             pvec_accountant_calibrated=float(variant == "accountant"))
    prov["pvec_accountant_calibrated"] = "1 when P_VEC's noise is the accountant's calibration (variant accountant)"
    prov["R"], prov["K"] = "total rounds: phases x T", "= b (users per round)"
    prov["n_phase"] = "floor(n/phases): the users of one run of P_AGD (all n for a single run)"
    prov["sigma2"] = "sigma^2 (see sigma)"
    prov["phases"] = "1 (a single run of P_AGD)"
    run_kwargs = dict(T=T, b=b, K=K, phases=phases, L_clip=L_clip, radius=D / 2, pvec=pv, claim=(eps, delta))
    return Resolved(p, prov, frozenset(ov), run_kwargs)


_AGD_CITE = "seed 000, Algorithm 4 (L205-216)"
ENTRIES: tuple[AlgorithmEntry, ...] = (
    AlgorithmEntry(
        name="shuffle_agd", description="P_AGD: sequentially interactive shuffle-private AC-SA (Lan 2012), gradients "
                                        "summed by P_VEC",
        citation=f"{_AGD_CITE}, Thm 4.3 (L199-201)", privacy_theorem="shuffle.p_agd.privacy",
        overrides=("b", "Lt_numerator"), variants=("standard", "accountant"), resolve=resolve_shuffle_agd, run=shuffle_agd.run,
        one_pass=lambda variant: True, smoothing=None, threat_model="shuffle", single_pool=True, auditable=False),
    AlgorithmEntry(
        name="shuffle_agd_smoothed", description="P_AGD on the per-sample Moreau envelope of a non-smooth loss, P_VEC with "
                                                 "Delta_2 = 2L",
        citation=f"{_AGD_CITE}, Thm 4.7 (L238-240, L625-629)", privacy_theorem="shuffle.p_agd.privacy",
        overrides=("b", "Lt_numerator", "beta_s"), variants=("standard", "accountant"), resolve=resolve_shuffle_agd_smoothed,
        run=shuffle_agd.run, one_pass=lambda variant: True, smoothing="Moreau envelope with Thm 4.7's beta (Lemma 4.6)",
        threat_model="shuffle", single_pool=True, auditable=False),
    AlgorithmEntry(
        name="shuffle_agd_sc", description="Thm 4.8's restarts: k phases of (smoothed) P_AGD on disjoint fresh users, each "
                                           "started at the previous output",
        citation=f"{_AGD_CITE}, Thm 4.8 (L242-252, L633-)", privacy_theorem="shuffle.p_agd.privacy",
        overrides=("b", "Lt_numerator", "beta_s", "k"), variants=("standard", "accountant", "shrinking", "accountant_shrinking"),
        resolve=resolve_shuffle_agd_sc,
        run=shuffle_agd.run, one_pass=lambda variant: True,
        smoothing="Moreau envelope with Thm 4.7's beta at n/k (Lemma 4.6)", threat_model="shuffle", single_pool=True,
        auditable=False),
)
