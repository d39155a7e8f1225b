"""Seed 003, chapter 4 (Jiang's thesis; Lnnn = line of ../shared/seeds/003_56e8b1c3300cdeae.txt; notes
../shared/notes/003b_thesis_ch4.md): the generalised shuffled gradient framework (Alg. 3) and its instances as a
mechanism (``kind: mechanism``, entry ``shuffleg``): at each sweep point ``trials`` runs of the instance on one data
set, their excess empirical risks, the per-instance constants of Thm 4.4.7 computed from that data set, the privacy
of the epochs that ran, a noise probe (the same schedule on all-zero data, whose output variance is known exactly)
and a last-iterate audit. Numerics: algorithms/shuffleg.py; accountant: verifiers/accountants/shuffleg_privacy.py;
checks: verifiers/checks/shuffleg.py.

Parameters are the thesis's where it gives them (§4.7: p = 0.5, K = 50, delta = 1e-6, clip G = 10); OUR CHOICES are
marked. The noise std is calibrated by Lemma 4.5.2 / 4.6.2 at the spec's (epsilon, delta) with the optimal alpha
(``sigma: -1``, the default) or set (``sigma >= 0``: an overridden sigma decides no privacy claim). The step is a
fraction ``eta_frac`` of the cap of the convergence claim's step-size condition (Thm 4.4.7 / Cor 4.6.1), or, with
``eta > 0``, that absolute step."""
from __future__ import annotations

import math
import time
from typing import Any, Literal, Mapping

import numpy as np
from pydantic import Field

from algorithms import shuffleg as sg
from algorithms.datasets import shuffleg_arrays
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import shuffleg_privacy as acc
from verifiers.checks.shuffleg import SHUFFLEG_CHECKS, step_caps
from verifiers.threat_models import Neighbouring

REPLACE_ONE = Neighbouring("record", "replace_one")
MAX_WORK = 3 * 10**9           # trials x n x K x d per point (the gradient work of one point)
AUDIT_TRIALS = 200_000         # per side of the audit's neighbouring pair


class ShuffleGParams(MechanismParams):
    instance: Literal["shuffleg", "dp_shuffleg", "priv_pub", "pub_priv", "interleaved", "public_only"] = Field(
        description="Table 4.1 / 4.2: shuffleg (non-private), dp_shuffleg, priv_pub (Alg. 4), pub_priv (Alg. 5), "
                    "interleaved (Alg. 6), public_only")
    order: Literal["ig", "so", "rr"] = Field("rr", description="private order: incremental, shuffle once, random "
                                                               "reshuffling (§4.7: RR)")
    data: Literal["gaussian", "constant", "digits69", "cancer_split", "diabetes_split"] = Field(
        "gaussian", description="gaussian: private N(0, spread^2 I_d) (+ linear targets for ridge / logistic), public "
                                "the same shifted by `shift` along e_1; constant: every private record 0 and every "
                                "public one shift e_1; digits69 / cancer_split / diabetes_split: packaged stand-ins "
                                "(algorithms/datasets.py shuffleg_arrays)")
    loss: Literal["mean", "ridge", "logistic"] = Field("mean", description="§4.7.2's tasks")
    regulariser: Literal["none", "ridge", "l1", "ball"] = Field("ridge", description="psi (§4.7.2: ball for mean "
                                                                "estimation, ridge, l1)")
    lam: float = Field(0.1, ge=0, le=100, description="lambda of ridge / l1 (§4.7.2: 0.1)")
    radius: float = Field(10.0, gt=0, le=1e6, description="C of the ball (§4.7.2: 10)")
    n: int = Field(100, ge=1, le=20_000, description="private records (packaged data: the first n)")
    d: int = Field(5, ge=1, le=512, description="dimension of the synthetic data")
    K: int = Field(50, ge=2, le=100_000, description="epochs (App. C assumes K >= 2; §4.7: 50)")
    p: float = Field(0.5, gt=0, le=1, description="fraction of private steps (Table 4.4): priv_pub S = round(pK) "
                                                   "private epochs, pub_priv K - S = round(pK), interleaved n_d = "
                                                   "round(pn) (§4.7: 0.5)")
    epsilon: float = Field(5.0, gt=0, le=100, description="the privacy target the noise is calibrated to")
    delta: float = Field(1e-6, gt=0, lt=1, description="§4.7: 1e-6")
    clip: float = Field(10.0, ge=0, le=1e6, description="G: gradients clipped to this norm (§4.7: 10); 0: none "
                                                        "(then no privacy claim holds)")
    sigma: float = Field(-1.0, ge=-1, le=1e6, description="noise std of private epochs; -1: calibrated (Lemma "
                                                          "4.5.2 / 4.6.2, optimal alpha)")
    eta_frac: float = Field(1.0, gt=0, le=100, description="step = eta_frac x the cap of the convergence claim's "
                                                           "step-size condition")
    eta: float = Field(0.0, ge=0, le=10, description="> 0: this absolute step instead")
    spread: float = Field(1.0, ge=0, le=1000, description="gaussian: std of the private records")
    shift: float = Field(0.0, ge=0, le=1000, description="gaussian / constant: the public records' shift along e_1")
    centre: float = Field(0.0, ge=-1000, le=1000, description="gaussian / constant: the private records' mean along "
                                                              "e_1 (the public ones': centre + shift)")
    x1_offset: float = Field(1.0, ge=0, le=1e4, description="the start x_1 = x* + x1_offset e_1 (0: start at x*)")
    data_seed: int = Field(0, ge=0, le=2**31, description="draws the synthetic data (fixed over trials)")
    audit_n: int = Field(2, ge=2, le=64, description="the audit's records (linear loss, 1-D, canary last; at "
                                                     "least 2, so Interleaved keeps a public step)")
    audit_trials: int = Field(AUDIT_TRIALS, ge=0, le=2_000_000, description="the audit's runs per side (0: no "
                                                                           "audit; its cost grows with K)")


def _split(p: Mapping[str, Any]) -> tuple[int, int]:
    """(S, n_d): Priv-Pub's private epochs / Pub-Priv's public epochs, Interleaved's private steps."""
    K, n = p["K"], p["n"]
    pk = int(round(p["p"] * K))
    S = pk if p["instance"] == "priv_pub" else K - pk
    return S, int(round(p["p"] * n))


def rules(p: Mapping[str, Any]) -> None:
    S, nd = _split(p)
    if p["instance"] in ("priv_pub", "pub_priv") and not 1 <= S <= p["K"] - 1:
        raise RuleError(f"p K = {p['p'] * p['K']:g}: Priv-Pub / Pub-Priv need S in 1..K-1 (Cor 4.6.1)", field="p")
    if p["instance"] == "interleaved" and not 1 <= nd <= p["n"] - 1:
        raise RuleError(f"p n = {p['p'] * p['n']:g}: Interleaved needs n_d in 1..n-1 (Alg. 6)", field="p")
    if p["data"] in ("digits69", "cancer_split", "diabetes_split"):
        avail = shuffleg_arrays(p["data"])
        if p["n"] > min(len(avail[0]), len(avail[2])):
            raise RuleError(f"n = {p['n']} > the {min(len(avail[0]), len(avail[2]))} records {p['data']} has on "
                            "each side", field="n")
    if p["data"] == "digits69" and p["loss"] != "mean":
        raise RuleError("digits69 stands in for MNIST-69's mean estimation: loss mean", field="loss")
    if p["data"] in ("cancer_split", "diabetes_split") and p["loss"] == "mean":
        raise RuleError(f"{p['data']} has targets: loss ridge or logistic", field="loss")
    if p["loss"] == "mean" and p["regulariser"] == "l1":
        raise RuleError("the l1 regulariser goes with the logistic loss (§4.7.2)", field="regulariser")
    d = dimension(p)
    work = p["n"] * p["K"] * d * 1000
    if work > MAX_WORK:
        raise RuleError(f"n K d = {p['n'] * p['K'] * d:.3g} per trial is too much for one machine", field="K")


def dimension(p: Mapping[str, Any]) -> int:
    return {"digits69": 64, "cancer_split": 30, "diabetes_split": 10}.get(p["data"], p["d"])


def problem(p: Mapping[str, Any]) -> sg.Problem:
    n, loss = p["n"], p["loss"]
    if p["data"] in ("digits69", "cancer_split", "diabetes_split"):
        A, y, P, yp = shuffleg_arrays(p["data"])
        A, y, P, yp = A[:n], y[:n], P[:n], yp[:n]
    else:
        d = p["d"]
        e1 = np.eye(d)[0]
        if p["data"] == "constant":
            A = np.tile(p["centre"] * e1, (n, 1))
            P = np.tile((p["centre"] + p["shift"]) * e1, (n, 1))
        else:
            rng = np.random.default_rng(np.random.SeedSequence([p["data_seed"], 3003]))
            A = p["spread"] * rng.standard_normal((n, d)) + p["centre"] * e1
            P = p["spread"] * rng.standard_normal((n, d)) + (p["centre"] + p["shift"]) * e1
        y, yp = np.zeros(n), np.zeros(n)
        if loss in ("ridge", "logistic"):
            rng = np.random.default_rng(np.random.SeedSequence([p["data_seed"], 3004]))
            w = rng.standard_normal(d) / math.sqrt(d)
            y, yp = A @ w, P @ w
            if loss == "logistic":
                y = (rng.random(n) < 1 / (1 + np.exp(-y))).astype(float)
                yp = (rng.random(n) < 1 / (1 + np.exp(-yp))).astype(float)
    return sg.Problem(loss, np.ascontiguousarray(A, dtype=np.float64), np.asarray(y, dtype=np.float64),
                      np.ascontiguousarray(P, dtype=np.float64), np.asarray(yp, dtype=np.float64),
                      p["regulariser"], p["lam"], p["radius"])


def inverse_m(instance: str, n: int, K: int, S: int, nd: int) -> float:
    """sum over private epochs of 1/m_k (m_k = 1 + noisy steps after the last private one)."""
    return {"dp_shuffleg": K, "priv_pub": S, "pub_priv": K - S, "interleaved": K / (n + 1 - nd)}.get(instance, 0.0)


def run_point(p: dict, trials: int, seq: Any, relation: Neighbouring | None = None) -> dict:
    t0 = time.perf_counter()
    inst, n, K, G = p["instance"], p["n"], p["K"], p["clip"]
    S, nd = _split(p)
    prob = problem(p)
    private = inst not in ("shuffleg", "public_only")
    inv_m = inverse_m(inst, n, K, S, nd)
    calibrated = p["sigma"] < 0
    if not private:
        sigma, prov = 0.0, "no noise (a non-private instance)"
    elif calibrated:
        if G <= 0:
            raise ValueError("sigma: -1 calibrates to the clipping norm; set clip > 0")
        sigma = acc.sigma_for(p["epsilon"], p["delta"], G, inv_m)
        prov = "Lemma 4.5.2 / 4.6.2 inverted at (epsilon, delta) with the optimal alpha"
    else:
        sigma, prov = p["sigma"], "set by the spec"
    sched = sg.schedule(inst, n=n, K=K, sigma=sigma, S=S, n_d=nd)
    clip = G if G > 0 else math.inf
    # the step and the start come from the plain loss; the theorem is then applied to the loss the run's gradients
    # followed: the plain one when no trial clipped a gradient, else the Huberised one (whose gradient is the clip)
    x_plain, _ = sg.optimum(prob)
    caps = step_caps(sg.constants(prob, sched, x_plain), n, K, inst)
    eta = p["eta"] if p["eta"] > 0 else p["eta_frac"] * caps["corollary"]
    x1 = x_plain + p["x1_offset"] * np.eye(prob.d)[0]
    s_run, s_probe, s_audit = seq.spawn(3)
    out = sg.run(prob, sched, eta=eta, order=p["order"], x1=x1, clip=clip, trials=trials, seq=s_run)
    huber = out.clipped_fraction > 0
    x_star, residual = sg.optimum(prob, clip if huber else math.inf)
    consts = sg.constants(prob, sched, x_star, clip if huber else math.inf)
    caps = step_caps(consts, n, K, inst)
    G_star = float(sg.objective(prob, x_star[None, :], clip if huber else math.inf)[0])
    excess = sg.objective(prob, out.last, clip if huber else math.inf) - G_star
    t_run = time.perf_counter() - t0
    probe = noise_probe(prob, sched, eta, trials, s_probe) if private else None
    audit = run_audit(p, sigma, s_audit) if private and G > 0 and p["audit_trials"] else None
    a = acc.rdp_slope(acc.Epoch.of(r.to_dict()) for r in out.releases)
    eps, alpha = acc.epsilon(a, p["delta"]) if private else (0.0, math.inf)
    view = (acc.dp_accounting_view(G, sigma, sum(1 for r in out.releases if r.private_steps),
                                   (n + 1 - nd) if inst == "interleaved" else 1, p["delta"])
            if private and G > 0 and sigma > 0 else None)
    rr = acc.rr_epsilon(G, sigma, n, K, p["delta"]) if inst == "dp_shuffleg" and G > 0 and sigma > 0 else None
    return {
        "params": p, "trials": trials, "relation": None if relation is None else relation.label,
        "S": S, "n_d": nd, "d": prob.d, "sigma": sigma, "sigma_provenance": prov, "calibrated": calibrated and private,
        "eta": eta, "step_caps": caps, "x1_distance2": float(np.sum((x1 - x_star) ** 2)),
        "x_star_residual": residual, "G_star": G_star, "huberised": huber,
        "constants": {k: (list(v) if isinstance(v, tuple) else v) for k, v in consts.__dict__.items()},
        "mu_psi": prob.mu_psi, "excess": excess.tolist(), "clipped_fraction": out.clipped_fraction,
        "exact_noise_excess": sg.exact_noise_excess(prob, sched, eta) if out.clipped_fraction == 0 else None,
        "releases": [r.to_dict() for r in out.releases],
        "privacy": None if not private else {
            "epsilon": eps, "alpha": alpha, "rdp_slope": a, "target_epsilon": p["epsilon"], "delta": p["delta"],
            "thesis_alpha": acc.thesis_alpha(sigma, p["delta"], G, inv_m) if G > 0 and sigma > 0 else None,
            "thesis_alpha_epsilon": (acc.epsilon_at(a, p["delta"], acc.thesis_alpha(sigma, p["delta"], G, inv_m))
                                     if G > 0 and sigma > 0 and acc.thesis_alpha(sigma, p["delta"], G, inv_m) > 1
                                     else None),
            "inverse_m": inv_m, "dp_accounting": view,
            "rr_refinement": None if rr is None else {"epsilon": rr[0], "alpha": rr[1]},
            "privacy_step_cap": caps["privacy"]},
        "probe": probe, "audit": audit,
        "seconds": time.perf_counter() - t0, "seconds_run": t_run}


def noise_probe(prob: sg.Problem, sched: sg.Schedule, eta: float, trials: int, seq: Any) -> dict:
    """The schedule as it ran, on all-zero private and public records, the mean loss and no regulariser, from 0:
    the output is the noise alone, Gaussian with per-coordinate variance d v_K / ((1 + 0)/2) from
    ``exact_noise_excess``; the sum of squares of the ``trials`` outputs is compared with it (chi-square) by the
    ``noise`` check: the noise the loop injected against what the schedule (and the accountant) declared."""
    d = prob.d
    zero = sg.Problem("mean", np.zeros((prob.n, d)), np.zeros(prob.n), np.zeros((prob.n, d)), np.zeros(prob.n))
    out = sg.run(zero, sched, eta=eta, order="ig", x1=np.zeros(d), clip=math.inf, trials=trials, seq=seq)
    declared = sg.exact_noise_excess(zero, sched, eta)
    var = 2.0 * declared / d if declared is not None else 0.0
    return {"sum_sq": float(np.sum(out.last**2)), "count": int(out.last.size), "declared_variance": var}


def run_audit(p: Mapping[str, Any], sigma: float, seq: Any) -> dict | None:
    """A last-iterate audit (notes §5.3): the instance's schedule at n = audit_n records in one dimension, the linear
    loss f(x; q) = -x q (convex, 0-smooth, |grad| = |q| <= G: no contraction, so the canary's shift is never
    forgotten), IG order with the canary at the last private position (the PABI worst case), the other records 0;
    neighbours: canary q = +G against q = -G. The output x_1^(K+1) is the score. The noise: calibrated by the same
    lemma to the spec's (epsilon, delta) for the audited schedule (so the audited claim is the spec's epsilon), or
    the spec's sigma when it sets one. The claim it is set against: the spec's epsilon when calibrated (what the
    user is promised), else the lemma's epsilon of that sigma."""
    from verifiers.audit import lower_bound  # the statistics of an audit; the simulation is ours

    n, K, G = p["audit_n"], p["K"], p["clip"]
    q = dict(p) | {"n": n}
    S, nd = _split(q)
    nd = max(1, min(nd, n - 1)) if p["instance"] == "interleaved" else nd
    if p["sigma"] < 0:
        sigma = acc.sigma_for(p["epsilon"], p["delta"], G, inverse_m(p["instance"], n, K, S, nd))
    if sigma <= 0:
        return None
    sched = sg.schedule(p["instance"], n=n, K=K, sigma=sigma, S=S, n_d=nd)
    canary = max(nd, 1) - 1 if p["instance"] == "interleaved" else n - 1
    scores = []
    for s, sign in zip(seq.spawn(2), (1.0, -1.0)):
        A = np.zeros((n, 1))
        A[canary, 0] = sign * G
        prob = sg.Problem("linear", A, np.zeros(n), np.zeros((n, 1)), np.zeros(n))
        out = sg.run(prob, sched, eta=1.0, order="ig", x1=np.zeros(1), clip=G, trials=p["audit_trials"], seq=s)
        scores.append(out.last[:, 0])
    b = lower_bound(scores[0], scores[1], delta=p["delta"], confidence=0.95)
    a = acc.rdp_slope(acc.Epoch(r.private_steps, r.noisy_steps_after, r.sigma, G)
                      for r in sg.run(sg.Problem("linear", np.zeros((n, 1)), np.zeros(n), np.zeros((n, 1)),
                                                 np.zeros(n)), sched, eta=1.0, order="ig", x1=np.zeros(1),
                                      clip=G, trials=1, seq=np.random.SeedSequence(0)).releases)
    # the claim audited: the spec's epsilon when the noise was calibrated to it, else the lemma's epsilon of sigma
    claim = p["epsilon"] if p["sigma"] < 0 else acc.epsilon(a, p["delta"])[0]
    # the exact privacy of this audit's mechanism: a Gaussian shift 2 G (eta = 1) per private epoch against all the
    # noise of the run (every noisy step's N(0, sigma^2))
    private_epochs = sum(1 for k in range(sched.K) if sched.private_steps[k])
    noisy = sum(sched.private_steps[k] + (n - sched.private_steps[k] if sched.noisy_public else 0)
                for k in range(sched.K) if sched.sigma[k] > 0)
    mu = 2 * G * private_epochs / (sigma * math.sqrt(noisy)) if sigma > 0 and noisy else math.inf
    return {"n": n, "n_d": nd, "canary_position": canary + 1, "sigma": sigma, "trials_per_side": p["audit_trials"],
            "epsilon_lower": b.epsilon_lower, "confidence": b.confidence, "claim_epsilon": claim,
            "exact_mu": mu, "fpr_upper": b.fpr_upper, "fnr_upper": b.fnr_upper}


def report(r: dict) -> tuple[list[str], list[str]]:
    field = r["sweep"]["field"] if r["sweep"] else None
    pts = r["points"]
    p0 = pts[0]
    bullets = [*mechanism_header(r),
               f"- Each point: {p0['trials']} runs of Alg. 3 ({p0['params']['instance']}, order "
               f"{p0['params']['order'].upper()}) on one data set ({p0['params']['data']}, n = {p0['params']['n']}, "
               f"d = {p0['d']}); excess = G(x_1^(K+1); D) - G(x*; D), x* to a proximal-gradient residual of "
               f"{max(p['x_star_residual'] for p in pts):.1g}; the constants of Thm 4.4.7 from that data set "
               "(upper bounds where the thesis's constant is a supremum: see the bound checks)",
               f"- Noise: {p0['sigma_provenance']}; sigma = {fmt(p0['sigma'])} at the first point",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    lead = [field or "point"]
    body = ["| " + " | ".join([*lead, "sigma", "eta", "eta / cap", "mean excess", "exact noise part", "clipped",
                               "eps (ours)", "eps (dp-accounting)", "eps RR (C.2.1)", "audit eps lower"]) + " |",
            "|" + "---|" * (len(lead) + 10)]
    for pt in pts:
        pv, au = pt["privacy"] or {}, pt["audit"] or {}
        ex = np.asarray(pt["excess"])
        body.append(f"| {fmt(pt['value'])} | {fmt(pt['sigma'])} | {fmt(pt['eta'])} | "
                    f"{fmt(pt['eta'] / pt['step_caps']['corollary'])} | {fmt(float(ex.mean()))} | "
                    f"{fmt(pt['exact_noise_excess'])} | {fmt(pt['clipped_fraction'])} | {fmt(pv.get('epsilon'))} | "
                    f"{fmt((pv.get('dp_accounting') or {}).get('epsilon'))} | "
                    f"{fmt((pv.get('rr_refinement') or {}).get('epsilon'))} | {fmt(au.get('epsilon_lower'))} |")
    body += ["", "eta / cap: the step against the cap of the convergence claim's step-size condition; exact noise "
             "part: the noise's exact contribution to the expected excess (mean loss, linear prox, no clipping), a "
             "lower bound on it; eps (ours): Prop 4.3.4 with the optimal alpha on the RDP of the epochs that ran; "
             "dp-accounting: the same RDP curve, its tighter conversion; RR: App. C.2.1's refinement.", ""]
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="shuffleg",
        description="seed 003 ch. 4: the generalised shuffled gradient framework (Alg. 3) and its instances "
                    "(non-private, DP-ShuffleG, Priv-Pub, Pub-Priv, Interleaved, Public Only): convergence bounds "
                    "with every constant from the data (Thm 4.4.7, Cor 4.4.15, 4.5.1, 4.6.1), privacy (Lemmas "
                    "4.5.2, 4.6.2) by accountant, noise probe and audit",
        citation="seed 003 (Jiang's thesis) ch. 4: Alg. 3 (L1240-1290), Thm 4.4.7 (L1304), Cor 4.4.15 (L1392), "
                 "Cor 4.5.1 (L1419), Lemma 4.5.2 (L1427), Cor 4.6.1 (L1627), Lemma 4.6.2 (L1650), App. C",
        params=ShuffleGParams,
        sweepable=("n", "K", "p", "epsilon", "eta_frac", "eta", "sigma", "shift", "x1_offset", "spread", "lam", "d",
                   "centre"),
        whole=("n", "K", "d"),
        rules=rules, run_point=run_point, checks=SHUFFLEG_CHECKS, threat_model="central", report=report,
        relations=(REPLACE_ONE,)),
)
