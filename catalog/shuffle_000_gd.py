"""Seed 000: P_GD (Algorithm 5) with Lemma B.6's schedule and, for a non-smooth loss, Thm 4.9's Moreau envelope."""
from __future__ import annotations

import math
from typing import Any, Mapping

from algorithms import shuffle_gd, shuffle_sum
from catalog import pvec_calibration
from catalog.base import MAX_ROUNDS, AlgorithmEntry, ResolutionError, Resolved, moreau


def resolve_shuffle_gd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """Algorithm 5 of seed 000 (P_GD) with Lemma B.6's schedule (L740): T = min{n, eps^2 n^2/(d log^2(nd/delta))},
    eta = D/(L sqrt T), every round P_VEC on all n users at (eps/(2 sqrt(2T ln(1/delta))), delta/(T+1), Delta_2 = L);
    a non-smooth loss runs on its Moreau envelope with Thm 4.9's beta (L744). Variants: ``fkt`` (Lemma B.7's groups),
    ``accountant`` / ``fkt_accountant`` (the same, with P_VEC's noise the smallest our accountant certifies for the T
    calls a user joins, catalog/pvec_calibration.calibrate_composed; T, eta and beta stay the paper's), ``fkt_shrinking``
    / ``fkt_accountant_shrinking`` (the fkt groups with the proof's shrinking domains, _shrinking_groups)."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}
    n_all, d, L, D = int(c["n"]), int(c["d"]), c["L"], c["D"]
    eps, delta = c["eps0"], c["delta0"]
    shrinking = variant.endswith("_shrinking")
    variant = variant.removesuffix("_shrinking")
    fkt = variant in ("fkt", "fkt_accountant")
    calibrated = variant in ("accountant", "fkt_accountant")
    groups = shuffle_gd.fkt_groups(n_all) if fkt else 1
    n = n_all // groups                                    # the users of one P_GD run (one group)
    if fkt:
        prov["groups"] = ("Lemma B.7 (L752-760): P_GD on disjoint user groups in turn, each from the previous output; "
                          "OUR CHOICE (the seed defers the groups to Feldman et al. 2020): k = ceil(log2 log2 n) equal "
                          "groups, the whole domain in each; T, eta and P_VEC below are one group's (n -> n/k)")
    if not math.isfinite(c["beta"]):
        p.update(moreau({**c, "n": n}, ov, prov, rule=_thm49_beta, cite="Thm 4.9 proof (L744): beta = (L/D) min("
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
    if calibrated:
        try:
            pv = pvec_calibration.calibrate_composed(n, d, eps, delta, L, T, delta_r)
        except ValueError as err:
            raise ResolutionError("algorithm.variant", str(err)) from err
        cal = (f"OUR CHOICE: calibrated by {pvec_calibration.CALIBRATOR}: the smallest binomial noise whose epsilon at "
               f"the claim's delta, composed over the T = {T} P_VEC calls every user {'of a group ' if fkt else ''}"
               f"joins, is <= the claim, for P_VEC on the {n} users with Delta_2 = L = {L:g}")
        prov["g"] = "Thm A.6's proof (L477): g = max(2 Delta_2 sqrt(n), sqrt(d), 4), rounded up"
        prov["b_binom"] = f"Lemma 3.1's b (L130) at the per-coordinate eps_c = eps_hat and delta_hat = delta_round/(d+1); {cal}"
        prov["p"] = f"Lemma 3.1's p (L130) at eps_c = eps_hat; {cal}"
    else:
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
    prov.setdefault("groups", "1: P_GD on all n users (Algorithm 5, L258-273)")
    prov["fkt_reduction"] = ("1: the Feldman-Koren-Talwar reduction of Lemma B.7 (variant fkt)" if fkt
                             else "0: plain P_GD (variant standard)")
    prov["K"] = "= n: every user of the group in every round (fully interactive, L258-273)"
    prov["eps_hat"] = ("eps_round/(18 sqrt(ln((d+1)/delta_round))): P_VEC's per-coordinate epsilon (Thm A.6's proof, "
                       "L490)" if not calibrated else
                       f"eps_c, P_VEC's per-coordinate epsilon in Lemma 3.1's formulas, found by a search the accountant brackets (not Thm "
                       f"A.6's eps_round/(18 sqrt(ln((d+1)/delta_round))) = {pv_paper_eps_hat(eps_r, delta_r, d):.4g}); "
                       f"{cal}")
    if calibrated:
        prov["eps_round"] += ("; with variant accountant it is only what the paper's P_VEC would run at (the run's P_VEC "
                              "is the calibrated one, each user's T calls judged together)")
    prov["pvec_accountant_calibrated"] = "1 when P_VEC's noise is the accountant's calibration (variants *accountant)"
    prov["LG2"] = "L_G^2 = L^2 + sigma^2 (Lemma B.4, L712)"
    prov["thm49_parameters"] = ("1 when T, eta, beta_s and eps_round are the paper's (none overridden): the rate checks' "
                                "condition (the accountant variants keep them: only P_VEC's noise constant differs)")
    p.update(groups=groups, fkt_reduction=float(fkt), T=T, R=groups * T, K=n, eta=eta, eps_round=eps_r, delta_round=delta_r, g=pv.one_d.g, b_binom=pv.one_d.b,
             p=pv.one_d.p, eps_hat=pv.eps_hat, sigma2=sigma2, LG2=L**2 + sigma2, update_sign=-1.0,
             output_first_index=0.0,
             thm49_parameters=float(not {"T", "eta", "beta_s", "eps_round"} & set(ov)),
             pvec_accountant_calibrated=float(calibrated))
    run_kwargs = dict(T=T, eta=eta, L=L, radius=D / 2, pvec=pv, call_eps=None if calibrated else eps_r,
                      call_delta=None if calibrated else delta_r, groups=groups)
    res = Resolved(p, prov, frozenset(ov), run_kwargs)
    return _shrinking_groups(c, ov, res) if shrinking else res


def _shrinking_groups(c: Mapping[str, float], ov: Mapping[str, float], res: Resolved) -> Resolved:
    """Lemma B.7's reduction with the proof's shrinking domains (Feldman et al. 2020's localisation, as seed 000's proof
    of Thm 4.8 writes it for P_AGD, L639-646): group i's convex guarantee (Thm 4.9's, at the group's n_i users) holds
    with D replaced by D_i, the distance from its starting point (group i-1's output) to theta*, and strong convexity
    gives D_i^2 <= 2 Delta_i/lambda. With the universal constant C set to 1: D_1 = D, Delta_{i+1} = D_i L
    (1/sqrt(n_i) + sqrt(d) log^(3/2)(d/delta)/(eps n_i)) (Thm 4.9's convex bound as stated, L277), D_{i+1} = min(D,
    sqrt(2 Delta_{i+1}/lambda)). Group i then runs P_GD with D_i in place of D: eta_i = D_i/(L sqrt T) (Lemma B.6's
    eta) and its projections onto Theta intersected with the ball of radius D_i around its starting point (which
    holds theta* whenever the proof's distance bound does). T and P_VEC are every group's (Lemma B.6's T has no D).
    shrinking_domain = 1 only when some D_i < D: with D_i = D throughout (always so at lambda = 0) the run is variant
    fkt's and cannot show the strongly convex rate by construction."""
    if "eta" in ov:
        raise ResolutionError("algorithm.overrides.eta", "the shrinking groups set eta_i from D_i: no override")
    p, prov = res.params, res.provenance
    k, n_i, T = int(p["groups"]), int(p["K"]), int(p["T"])
    L, D, d, lam, eps = c["L"], c["D"], int(c["d"]), c["mu"], c["eps0"]
    per_D = L * (1 / math.sqrt(n_i) + math.sqrt(d) * math.log(d / c["delta0"]) ** 1.5 / (eps * n_i))
    Ds = [D]
    for _ in range(k - 1):      # lambda = 0 (not strongly convex): no bound on the distance, D_i = D
        Ds.append(min(D, math.sqrt(2 * Ds[-1] * per_D / lam)) if lam > 0 else D)
    etas = tuple(shuffle_gd.step(D=Di, L=L, T=T) for Di in Ds)
    shrunk = Ds[-1] < D * (1 - 1e-12)
    p.update(shrinking_domain=float(shrunk), D_last_group=Ds[-1], eta_last_group=etas[-1], D2_over_D=Ds[1] / D,
             group_rule=1.0)                     # a row for the rule's provenance (OUR CHOICE) in the report
    prov["group_rule"] = (
        "OUR CHOICE of what the paper leaves open (it defers the groups to Feldman et al. 2020, L758-760), from the "
        "proof's localisation (as seed 000 writes it for Thm 4.8, L639-646): group i uses D_i in place of D, D_1 = D, "
        "Delta_{i+1} = D_i L (1/sqrt(n_i) + sqrt(d) log^(3/2)(d/delta)/(eps n_i)) (Thm 4.9's convex bound, L277, "
        "universal constant set to 1), D_{i+1} = min(D, sqrt(2 Delta_{i+1}/lambda)); eta_i = D_i/(L sqrt T); "
        "projections onto Theta intersected with the ball of radius D_i (the proof's distance bound, not D_i/2) "
        "around the group's starting point; T and P_VEC every group's")
    prov["shrinking_domain"] = ("1: some group's D_i < D (the proof's shrinking domains ran)" if shrunk else
                                "0: the recursion (constants 1) keeps D_i = D in every group, so the run is variant "
                                "fkt's and the strongly convex rate check stays inapplicable")
    prov["groups"] = prov["groups"].replace("the whole domain in each", "the proof's shrinking domains (group_rule)")
    prov["eta"] = "the first group's, D/(L sqrt T) (Lemma B.6 proof, L740); group i's is D_i/(L sqrt T) (group_rule)"
    prov["D_last_group"] = prov["eta_last_group"] = "the last group's (group_rule)"
    prov["D2_over_D"] = "D_2/D: how far the recursion shrinks the second group's domain (group_rule)"
    run_kwargs = dict(res.run_kwargs, group_radius=tuple(Ds), group_eta=etas)
    return Resolved(p, prov, res.overridden, run_kwargs)


def pv_paper_eps_hat(eps_r: float, delta_r: float, d: int) -> float:
    """Thm A.6's per-coordinate epsilon at the per-round (eps, delta) (L490), for the provenance."""
    return eps_r / (18 * math.sqrt(math.log((d + 1) / delta_r)))


def _thm49_beta(*, L: float, D: float, n: int, d: int, eps0: float, delta0: float, **_: Any) -> float:
    """Thm 4.9's Moreau parameter (L744): beta = (L/D) min(sqrt n, eps n/(sqrt(d) log^{3/2}(nd/delta)))."""
    return L / D * min(math.sqrt(n), eps0 * n / (math.sqrt(d) * math.log(n * d / delta0) ** 1.5))


ENTRIES: tuple[AlgorithmEntry, ...] = (
    AlgorithmEntry(
        name="shuffle_gd", description="P_GD: fully interactive shuffle-private gradient descent, every user's gradient "
                                       "summed by P_VEC in every round",
        citation="seed 000, Algorithm 5 (L258-273), Lemma B.6 (L724-740), Thm 4.9 (L275-283, L744-748)",
        privacy_theorem="shuffle.p_gd.privacy", overrides=("T", "eta", "beta_s", "eps_round"),
        variants=("standard", "fkt", "accountant", "fkt_accountant", "fkt_shrinking", "fkt_accountant_shrinking"),
        resolve=resolve_shuffle_gd, run=shuffle_gd.run, one_pass=lambda variant: False,
        smoothing="Moreau envelope with Thm 4.9's beta (Lemma 4.6)", threat_model="shuffle", single_pool=True,
        auditable=False),
)
