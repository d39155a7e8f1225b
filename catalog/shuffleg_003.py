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

import functools
import math
import time
from pathlib import Path
from typing import Any, Literal, Mapping

import numpy as np
from pydantic import Field

from algorithms import shuffleg as sg
from algorithms.datasets import shuffleg_arrays
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, log_scale, mechanism_header, save_figure
from verifiers.accountants import shuffleg_privacy as acc
from verifiers.checks.shuffleg import SHUFFLEG_CHECKS, SHUFFLEG_RULES, step_caps
from verifiers.checks.shuffleg_grid import SHUFFLEG_GRID_CHECKS, SHUFFLEG_GRID_RULES
from verifiers.checks.shuffleg_rate import SHUFFLEG_RATE_CHECKS, SHUFFLEG_RATE_RULES
from verifiers.threat_models import Neighbouring

REPLACE_ONE = Neighbouring("record", "replace_one")
MAX_WORK = 3 * 10**9           # trials x n x K x d per point (the gradient work of one point)
AUDIT_TRIALS = 200_000         # per side of the audit's neighbouring pair


DataName = Literal["gaussian", "constant", "mirror", "digits69", "cancer_split", "diabetes_split"]


class ShuffleGProblem(MechanismParams):
    """The fields of the problem and privacy target both shuffled-gradient entries share."""

    order: Literal["ig", "so", "rr"] = Field("rr", description="private order: incremental, shuffle once, random "
                                                               "reshuffling (§4.7: RR)")
    loss: Literal["mean", "ridge", "logistic"] = Field("mean", description="§4.7.2's tasks")
    lam: float = Field(0.1, ge=0, le=100, description="lambda of ridge / l1 (§4.7.2: 0.1)")
    radius: float = Field(10.0, gt=0, le=1e6, description="C of the ball (§4.7.2: 10)")
    d: int = Field(5, ge=1, le=512, description="dimension of the synthetic data")
    epsilon: float = Field(5.0, gt=0, le=100, description="the privacy target the noise is calibrated to")
    delta: float = Field(1e-6, gt=0, lt=1, description="§4.7: 1e-6")
    spread: float = Field(1.0, ge=0, le=1000, description="gaussian: std of the private records")
    shift: float = Field(0.0, ge=0, le=1000, description="gaussian / constant: the public records' shift along e_1")
    centre: float = Field(0.0, ge=-1000, le=1000, description="gaussian / constant: the private records' mean along "
                                                              "e_1 (the public ones': centre + shift)")
    data_seed: int = Field(0, ge=0, le=2**31, description="draws the synthetic data (fixed over trials)")


class ShuffleGParams(ShuffleGProblem):
    instance: Literal["shuffleg", "dp_shuffleg", "priv_pub", "pub_priv", "interleaved", "public_only"] = Field(
        description="Table 4.1 / 4.2: shuffleg (non-private), dp_shuffleg, priv_pub (Alg. 4), pub_priv (Alg. 5), "
                    "interleaved (Alg. 6), public_only")
    data: DataName = Field(
        "gaussian", description="gaussian: private N(centre e_1, spread^2 I_d) (+ linear targets for ridge / "
                                "logistic), public the same shifted by `shift` along e_1; constant: every private "
                                "record centre e_1 and every public one (centre + shift) e_1; mirror: gaussian "
                                "private records, the public ones the same records in a random order (plus the shift); "
                                "digits69 / cancer_split / diabetes_split: packaged stand-ins (algorithms/datasets.py "
                                "shuffleg_arrays)")
    regulariser: Literal["none", "ridge", "l1", "ball"] = Field("ridge", description="psi (§4.7.2: ball for mean "
                                                                "estimation, ridge, l1)")
    n: int = Field(100, ge=1, le=20_000, description="private records (packaged data: the first n)")
    K: int = Field(50, ge=2, le=100_000, description="epochs (App. C assumes K >= 2; §4.7: 50)")
    p: float = Field(0.5, gt=0, le=1, description="fraction of private steps (Table 4.4): priv_pub S = round(pK) "
                                                   "private epochs, pub_priv K - S = round(pK), interleaved n_d = "
                                                   "round(pn) (§4.7: 0.5)")
    clip: float = Field(10.0, ge=0, le=1e6, description="G: gradients clipped to this norm (§4.7: 10); 0: none "
                                                        "(then no privacy claim holds)")
    sigma: float = Field(-1.0, ge=-1, le=1e6, description="noise std of private epochs; -1: calibrated (Lemma "
                                                          "4.5.2 / 4.6.2, optimal alpha)")
    eta_frac: float = Field(1.0, gt=0, le=100, description="step = eta_frac x the cap of the convergence claim's "
                                                           "step-size condition")
    eta: float = Field(0.0, ge=0, le=10, description="> 0: this absolute step instead")
    x1_offset: float = Field(1.0, ge=0, le=1e4, description="the start x_1 = x* + x1_offset e_1 (0: start at x*)")
    audit_n: int = Field(0, ge=0, le=64, description="the audit's records (linear loss, 1-D, canary last); 0: "
                                                     "1, or 2 for Interleaved (n_d = 1 and one noisy public step): "
                                                     "the sizes at which the audited run attains the lemma's RDP")
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
            if p["data"] == "mirror":
                P = A[rng.permutation(n)] + p["shift"] * e1
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
    thesis_alpha = acc.thesis_alpha(sigma, p["delta"], G, inv_m) if private and G > 0 and sigma > 0 else None
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
            "thesis_alpha": thesis_alpha,
            "thesis_alpha_epsilon": (acc.epsilon_at(a, p["delta"], thesis_alpha)
                                     if thesis_alpha is not None and thesis_alpha > 1 else None),
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
    from verifiers.audit import largest_lower_bound, lower_bound  # the statistics of an audit; the simulation is ours

    n, K, G = p["audit_n"] or (2 if p["instance"] == "interleaved" else 1), p["K"], p["clip"]
    if p["instance"] == "interleaved" and n < 2:
        raise ValueError("audit_n: Interleaved's audit needs at least 2 records (one private step, one public)")
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
    a = acc.rdp_slope(acc.Epoch.of(r.to_dict()) for r in out.releases)      # the epochs the audited runs ran
    # the claim audited: the spec's epsilon when the noise was calibrated to it, else the lemma's epsilon of sigma
    claim = p["epsilon"] if p["sigma"] < 0 else acc.epsilon(a, p["delta"])[0]
    # the exact privacy of this audit's mechanism: a Gaussian shift 2 G (eta = 1) per private epoch against all the
    # noise of the run (every noisy step's N(0, sigma^2))
    private_epochs = sum(1 for k in range(sched.K) if sched.private_steps[k])
    noisy = sum(sched.private_steps[k] + (n - sched.private_steps[k] if sched.noisy_public else 0)
                for k in range(sched.K) if sched.sigma[k] > 0)
    mu = 2 * G * private_epochs / (sigma * math.sqrt(noisy)) if sigma > 0 and noisy else math.inf
    return {"n": n, "n_d": nd, "canary_position": canary + 1, "sigma": sigma, "claim_mu": math.sqrt(2 * a),
            "largest_detectable": largest_lower_bound(p["audit_trials"] // 2, delta=p["delta"], confidence=0.95), "trials_per_side": p["audit_trials"],
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
               "- Readings of the printed text (verifiers/theorems/shuffleg_003.py): Thm 4.4.7's step condition with "
               "sqrt 10 (the proof's sqrt 20 read as the statement's); Cor 4.4.15 judged under its own printed "
               "condition (without Thm 4.4.7's 1 + log K); Priv-Pub's duplicated dissimilarity terms read once; "
               "Interleaved's max{L*, L^*} as max{L*, L~*}; the undefined L~ as the public records' mean smoothness; "
               "the privacy lemmas' eta <= 1/L as the proof's 1/L*; log natural",
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
        check_rules=SHUFFLEG_RULES,
        relations=(REPLACE_ONE,)),
)


# --- the chapter's experiments (§4.7): every instance at equal privacy, the step tuned on a grid -----------------

GRID_INSTANCES = ("dp_shuffleg", "priv_pub", "pub_priv", "interleaved", "public_only")
DPSGD_RATE = 0.1             # the DP-SGD baseline's sampling rate: K / q steps make n K gradient evaluations
THESIS_ETAS = tuple(m * 10.0**-e for e in range(1, 10) for m in (5.0, 1.0))   # 0.5, 0.1, 0.05, ..., 5e-9, 1e-9


class ShuffleGGridParams(ShuffleGProblem):
    data: DataName = Field("digits69", description="as the shuffleg mechanism's data (§4.7's data sets by their "
                                                   "packaged stand-ins)")
    regulariser: Literal["none", "ridge", "l1", "ball"] = Field("ball", description="psi (§4.7.2: ball for mean "
                                                                "estimation, ridge for ridge, l1 for logistic)")
    n: int = Field(180, ge=2, le=20_000, description="private records = public records (the first n of each)")
    K: int = Field(50, ge=2, le=10_000, description="epochs (§4.7: 50)")
    p: float = Field(0.5, gt=0, lt=1, description="fraction of private steps (§4.7: 0.5)")
    clip: float = Field(10.0, gt=0, le=1e6, description="G (§4.7: clipping at 10)")
    tune_trials: int = Field(10, ge=2, le=1000, description="runs per step of the grid search (§4.7: 10 runs)")
    permutations: int = Field(2000, ge=10, le=10**6, description="random orders searched for the largest partial "
                                                                 "dissimilarity (a lower bound on C_n^part)")


def grid_rules(p: Mapping[str, Any]) -> None:
    full = dict(ShuffleGParams.model_validate({"instance": "interleaved"}).model_dump()) | dict(p)
    for inst in ("priv_pub", "pub_priv", "interleaved"):
        rules(full | {"instance": inst})


PROBLEM_FIELDS = ("data", "loss", "regulariser", "lam", "radius", "n", "d", "spread", "shift", "centre", "data_seed")


@functools.lru_cache(maxsize=8)
def _grid_problem(key: tuple) -> tuple[sg.Problem, np.ndarray, float]:
    """The problem of a grid point and its optimum (x*, residual), by the fields ``problem`` reads: the points of a
    sweep over epsilon share them, and FISTA's optimum (the logistic loss with l1) is the same computation each time.
    The arrays are shared between the points that ask, so they are made read-only: a write raises instead of
    changing a later point's problem."""
    prob = problem(dict(zip(PROBLEM_FIELDS, key)))
    x_star, residual = sg.optimum(prob)
    for a in (prob.A, prob.y, prob.P, prob.yp, x_star):
        a.setflags(write=False)
    return prob, x_star, residual


def grid_point(p: dict, trials: int, seq: Any, relation: Neighbouring | None = None) -> dict:
    """Every instance at the point's (epsilon, delta): the step chosen on the thesis's grid (the values <= the
    privacy lemmas' cap 1/max{L*, L~*}) by the lowest mean final objective over ``tune_trials`` runs per step, then
    ``trials`` fresh runs at the chosen step (so the comparison does not reuse the runs that chose it), from x_1 = 0
    (OUR CHOICE: the thesis does not say)."""
    t0 = time.perf_counter()
    base = dict(ShuffleGParams.model_validate({"instance": "dp_shuffleg"}).model_dump()) | {
        k: v for k, v in p.items() if k in ShuffleGParams.model_fields}
    prob, x_star, residual = _grid_problem(tuple(base[k] for k in PROBLEM_FIELDS))
    G_star = float(sg.objective(prob, x_star[None, :])[0])
    Ls, Lps = float(prob.smoothness().max()), float(prob.smoothness(public=True).max())
    cap = 1.0 / max(Ls, Lps, 1e-300)
    etas = np.array([e for e in THESIS_ETAS if e <= cap])
    out: dict = {"params": p, "trials": trials, "relation": None if relation is None else relation.label,
                 "d": prob.d, "G_star": G_star, "x_star_residual": residual, "eta_grid": etas.tolist(),
                 "privacy_cap": cap, "instances": {}}
    seeds = seq.spawn(len(GRID_INSTANCES) + 1)
    x1 = np.zeros(prob.d)
    for inst, s in zip(GRID_INSTANCES, seeds):
        q = base | {"instance": inst}
        S, nd = _split(q)
        inv = inverse_m(inst, p["n"], p["K"], S, nd)
        sigma = acc.sigma_for(p["epsilon"], p["delta"], p["clip"], inv) if inv else 0.0
        sched = sg.schedule(inst, n=p["n"], K=p["K"], sigma=sigma, S=S, n_d=nd)
        s_tune, s_eval = s.spawn(2)
        T = p["tune_trials"]
        tune = sg.run(prob, sched, eta=np.repeat(etas, T), order=p["order"], x1=x1, clip=p["clip"],
                      trials=len(etas) * T, seq=s_tune)
        means = (sg.objective(prob, tune.last) - G_star).reshape(len(etas), T).mean(axis=1)
        best = int(np.argmin(means))
        ev = sg.run(prob, sched, eta=float(etas[best]), order=p["order"], x1=x1, clip=p["clip"], trials=trials,
                    seq=s_eval, trace=True)
        assert ev.trace is not None
        curve = [float((sg.objective(prob, ev.trace[k]) - G_star).mean()) for k in range(p["K"])]
        a = acc.rdp_slope(acc.Epoch.of(r.to_dict()) for r in ev.releases)
        out["instances"][inst] = {
            "sigma": sigma, "S": S, "n_d": nd, "tuned_means": means.tolist(), "eta": float(etas[best]),
            "excess": (sg.objective(prob, ev.last) - G_star).tolist(), "curve": curve,
            "epsilon": acc.epsilon(a, p["delta"])[0] if inv else 0.0, "clipped_fraction": ev.clipped_fraction}
    out["instances"]["dpsgd"] = grid_dpsgd(prob, p, etas, G_star, trials, seeds[-1].spawn(1)[0])
    out["dissimilarity"] = dissimilarity_view(prob, base, p["permutations"], seeds[-1])
    out["seconds"] = time.perf_counter() - t0
    return out


def grid_dpsgd(prob: sg.Problem, p: Mapping[str, Any], etas: np.ndarray, G_star: float, trials: int,
               seq: Any) -> dict:
    """The DP-SGD baseline (§4.5.4) on the same problem and privacy: Poisson sampling at rate DPSGD_RATE for K /
    DPSGD_RATE steps (n K gradient evaluations in expectation, as the shuffled methods), its noise multiplier by
    dp-accounting's RDP accountant (add/remove, applied to the replace-one sensitivity 2G), its step chosen on the
    same grid by the same rule, then fresh runs."""
    q, steps = DPSGD_RATE, int(round(p["K"] / DPSGD_RATE))
    z = acc.dpsgd_noise_multiplier(q, steps, p["epsilon"], p["delta"])
    s_tune, s_eval = seq.spawn(2)
    T = p["tune_trials"]
    x1 = np.zeros(prob.d)
    last, _ = sg.run_dpsgd(prob, q=q, steps=steps, eta=np.repeat(etas, T), z=z, clip=p["clip"], x1=x1,
                           trials=len(etas) * T, seq=s_tune)
    means = (sg.objective(prob, last) - G_star).reshape(len(etas), T).mean(axis=1)
    best = int(np.argmin(means))
    per_epoch = int(round(1 / q))
    last, tr = sg.run_dpsgd(prob, q=q, steps=steps, eta=float(etas[best]), z=z, clip=p["clip"], x1=x1, trials=trials,
                            seq=s_eval, trace_every=per_epoch)
    assert tr is not None
    return {"sigma": 2 * z * p["clip"], "noise_multiplier": z, "S": 0, "n_d": 0, "tuned_means": means.tolist(),
            "eta": float(etas[best]), "excess": (sg.objective(prob, last) - G_star).tolist(),
            "curve": [float((sg.objective(prob, tr[k]) - G_star).mean()) for k in range(len(tr))],
            "epsilon": p["epsilon"], "clipped_fraction": None, "steps": steps, "rate": q}


def dissimilarity_view(prob: sg.Problem, p: Mapping[str, Any], permutations: int, seq: Any) -> dict | None:
    """§4.6.6's C_n^part <= C_n^full on this data set (the mean loss, whose gradient differences do not depend on
    x): C_n^full = ||sum_j p_j - sum_i d_i|| exactly (every record in every order); C_n^part = max over orders of
    ||sum_{j <= m} p_j - sum of the m private records at positions n_d + 1 .. n||, m = n - n_d: below by the largest
    value over the identity and ``permutations`` random orders, above by algorithms/shuffleg.py dissimilarity; and
    its mean over uniform orders (the RR reading), with its standard error."""
    if prob.loss != "mean":
        return None
    n = prob.n
    _, nd = _split(dict(p) | {"instance": "interleaved"})
    m = n - nd
    full = float(np.linalg.norm(prob.P.sum(axis=0) - prob.A.sum(axis=0)))
    rng = np.random.default_rng(seq)
    head = prob.P[:m].sum(axis=0)
    orders = np.vstack([np.arange(n)[None, :], np.argsort(rng.random((permutations, n)), axis=1)])
    tails = prob.A[orders[:, nd:]].sum(axis=1)                       # (orders, d)
    vals = np.linalg.norm(head[None, :] - tails, axis=1)
    upper, _, _ = sg.dissimilarity(prob, nd)
    return {"C_full": full, "C_part_lower": float(vals.max()), "C_part_upper": upper,
            "C_part_rr_mean": float(vals[1:].mean()), "C_part_rr_se": float(vals[1:].std(ddof=1) / math.sqrt(permutations)),
            "m": m, "permutations": permutations}


def grid_report(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    p0 = pts[0]
    bullets = [*mechanism_header(r),
               f"- Each point: every instance calibrated to the point's (epsilon, delta) by Lemma 4.5.2 / 4.6.2; its "
               f"step chosen on the thesis's grid ({len(p0['eta_grid'])} values <= 1/max(L*, L~*) = "
               f"{fmt(p0['privacy_cap'])}) by the lowest mean final excess over {p0['params']['tune_trials']} runs "
               f"per step, then {p0['trials']} fresh runs at that step; excess = G(x_1^(K+1)) - G(x*) on the "
               "private data (the loss itself, not its Huber version)",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    if r.get("data"):
        bullets.append(f"- Data: {r['data']}")
    body = ["| " + " | ".join(["epsilon", "instance", "sigma", "chosen eta", "mean final excess", "sd",
                               "excess at epoch K/5", "eps accounted"]) + " |", "|" + "---|" * 8]
    for pt in pts:
        for inst, v in pt["instances"].items():
            ex = np.asarray(v["excess"])
            body.append(f"| {fmt(pt['value'])} | {inst} | {fmt(v['sigma'])} | {fmt(v['eta'])} | {fmt(float(ex.mean()))} "
                        f"| {fmt(float(ex.std(ddof=1)))} | {fmt(v['curve'][len(v['curve']) // 5])} | "
                        f"{fmt(v['epsilon'])} |")
    body.append("")
    return bullets, body


def grid_figure(r: dict, out_dir: Path) -> str | None:
    """Fig. 4.2's picture: the mean excess G(x_1^(k+1)) - G(x*) after every epoch, one panel per epsilon, one line
    per instance (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = r["points"]
    fig, axes = plt.subplots(1, len(pts), figsize=(4.2 * len(pts), 3.6), squeeze=False)
    colours = {"dp_shuffleg": "tab:blue", "priv_pub": "tab:orange", "pub_priv": "tab:purple",
               "interleaved": "tab:red", "public_only": "tab:green", "dpsgd": "tab:gray"}
    for ax, pt in zip(axes[0], pts):
        for inst, v in pt["instances"].items():
            ax.plot(np.arange(1, len(v["curve"]) + 1), np.maximum(v["curve"], 1e-12), color=colours[inst], label=inst)
        log_scale(ax, "y")
        ax.set_xlabel("epoch")
        ax.set_title(f"epsilon = {fmt(pt['value'])}")
    axes[0][0].set_ylabel("mean excess G - G*")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"{r['name']}: Fig. 4.2 on the stand-in data")
    fig.tight_layout()
    return save_figure(fig, out_dir, f"{r['name']}_curves")


GRID_DATA = ("the packaged stand-ins of algorithms/datasets.py shuffleg_arrays for Table 4.5's data sets: digits69 "
             "(8x8 digits: 6s private, 9s rotated by 180 degrees public) for MNIST-69; cancer_split (breast cancer "
             "split by mean radius) for COMPAS / CreditCard; diabetes_split (split by sex) for Crime; or synthetic "
             "data")

MECHANISM_ENTRIES = MECHANISM_ENTRIES + (
    MechanismEntry(
        name="shuffleg_grid",
        description="seed 003 ch. 4's comparisons at equal privacy: DP-ShuffleG, Priv-Pub, Pub-Priv, Interleaved, "
                    "Public Only and the DP-SGD baseline, each step tuned on the thesis's grid (§4.7), against §4.6.6, "
                    "§4.5.4 and Fig. 4.2",
        citation="seed 003 (Jiang's thesis) ch. 4: §4.6.6 (L1736-1752), Table 4.4, §4.7 (L1760-1812), Fig. 4.2",
        params=ShuffleGGridParams, sweepable=("epsilon", "p", "shift", "n", "K"), whole=("n", "K"),
        rules=grid_rules, run_point=grid_point, checks=SHUFFLEG_GRID_CHECKS, threat_model="central",
        check_rules=SHUFFLEG_GRID_RULES,
        report=grid_report, relations=(REPLACE_ONE,), data=GRID_DATA, figure=grid_figure),
)


# --- Eq. 4.13: DP-ShuffleG's rate at the thesis's schedule, from the exact expectation ---------------------------

SIM_STEPS = 400_000          # n K at most this many sequential steps for the simulated cross-check


class ShuffleGRateParams(MechanismParams):
    instance: Literal["dp_shuffleg", "interleaved", "priv_pub", "pub_priv"] = Field(
        "dp_shuffleg", description="dp_shuffleg (Eq. 4.13) or a public variant (its Table 4.4 row; the public records "
                                   "0 too, so C = 0)")
    p: float = Field(0.5, gt=0, lt=1, description="the fraction of private steps: Interleaved n_d = round(p n), "
                                                   "Priv-Pub / Pub-Priv round(p K) private epochs")
    n: int = Field(1000, ge=10, le=10**9, description="records")
    d: int = Field(1, ge=1, le=10_000, description="dimension")
    epsilon: float = Field(1.0, gt=0, le=100, description="the privacy target")
    delta: float = Field(1e-6, gt=0, lt=1, description="delta")
    clip: float = Field(1.0, gt=0, le=1e6, description="G of the noise calibration (Lemma 4.5.2)")
    lam: float = Field(0.1, gt=0, le=100, description="psi = (lam/2)||x||^2")
    offset: float = Field(1.0, gt=0, le=1e4, description="||x_1 - x*||")
    c_K: float = Field(1.0, gt=0, le=100, description="K = max(2, round(c_K n epsilon^2 / d)) (§4.5.3: K = O(n "
                                                      "epsilon^2 / d))")


def rate_point(p: dict, trials: int, seq: Any, relation: Neighbouring | None = None) -> dict:
    """§4.5.3's schedule at this n: K = c_K n eps^2 / d, sigma by Lemma 4.5.2 (optimal alpha), eta = ||x_1 -
    x*||^(2/3) / (n L* (K (1 + log K))^(1/3)) capped by Cor 4.5.1's condition; the exact expected excess (mean loss,
    every record 0, no clipping: algorithms/shuffleg.py exact_constant_excess), Cor 4.5.1's bound, and, when n K is
    small enough, a simulation of the same run."""
    t0 = time.perf_counter()
    n, d, eps = p["n"], p["d"], p["epsilon"]
    K = max(2, int(round(p["c_K"] * n * eps**2 / d)))
    inst = p["instance"]
    inter = inst == "interleaved"
    nd = max(1, min(n - 1, int(round(p["p"] * n)))) if inter else n
    P = max(1, min(K - 1, int(round(p["p"] * K)))) if inst in ("priv_pub", "pub_priv") else K   # noisy epochs
    # Interleaved: noise on all n steps of an epoch (Lemma 4.6.2's amplification by n + 1 - n_d); Priv-Pub /
    # Pub-Priv: P private (noisy) epochs, first or last. The same schedule as DP-ShuffleG's (§4.6.5's step has the
    # same form with max{L*, L~*} = 1 here)
    sigma = acc.sigma_for(eps, p["delta"], p["clip"], K / (n + 1 - nd) if inter else P)
    cap = 1.0 / (2 * n * math.sqrt(10 * (1 + math.log(K))))
    eta_s = p["offset"] ** (2 / 3) / (n * (K * (1 + math.log(K))) ** (1 / 3))
    eta = min(eta_s, cap)
    ex = sg.exact_constant_excess(n=n, d=d, K=K, eta=eta, sigma=sigma, lam=p["lam"], offset=p["offset"],
                                  noisy_epochs=P, noisy_last=inst != "priv_pub")
    # the corollary's noise term: 12 eta^2 n d sigma^2 L* (1 + log of the noisy epochs' count; K for DP-ShuffleG and
    # Interleaved), Cor 4.5.1 / 4.6.1 (its M doubled); the dissimilarity terms are 0 here (C = 0)
    bound = {"init": p["offset"] ** 2 / (eta * n * K), "noise": 12 * eta**2 * n * d * sigma**2 * (1 + math.log(P))}
    sim = None
    if n * K <= SIM_STEPS:
        prob = sg.Problem("mean", np.zeros((n, d)), np.zeros(n), np.zeros((n, d)), np.zeros(n), "ridge", p["lam"])
        S = P if inst == "priv_pub" else K - P
        out = sg.run(prob, sg.schedule(inst, n=n, K=K, sigma=sigma, n_d=nd, S=S), eta=eta, order="rr",
                     x1=p["offset"] * np.eye(d)[0], clip=math.inf, trials=trials, seq=seq)
        sim = sg.objective(prob, out.last).tolist()
    claimed = ((n * ((1 - p["p"]) * n + 1)) ** (-2 / 3) if inter else (p["p"] / n) ** (2 / 3)
               if inst in ("priv_pub", "pub_priv") else n ** (-2 / 3))
    return {"params": p, "K": K, "n_d": nd, "sigma": sigma, "eta": eta, "eta_schedule": eta_s, "eta_cap": cap,
            "capped": eta_s > cap, "exact": ex, "bound": bound | {"total": sum(bound.values())},
            "claimed_rate_value": claimed * (math.sqrt(d) / eps) ** (4 / 3), "simulated": sim,
            "noisy_epochs": P,
            "versus_dpsgd": versus_dpsgd(p, K, sigma) if inst == "dp_shuffleg" else None,
            "seconds": time.perf_counter() - t0}


TUNING_ETAS = tuple(10.0 ** (-e / 8) for e in range(3, 8 * 16 + 1))     # 10^-0.375 .. 10^-16, 8 per decade


def versus_dpsgd(p: Mapping[str, Any], K: int, sigma: float) -> dict:
    """§4.5.4 on this instance: DP-ShuffleG and the DP-SGD baseline at the same (epsilon, delta) and the same number
    of gradient steps n K, each at its best step on one grid (8 per decade, 10^-16 .. 0.42: the closed forms make
    tuning exact). DP-SGD: Poisson sampling at q = 1/n (one record per step on average), T = n K steps, its noise
    multiplier from dp-accounting's RDP accountant (add/remove, sensitivity 1) applied to sensitivity 2G (DP-ShuffleG's
    replace-one relation: the usual reading, which gives DP-SGD twice the noise of add/remove)."""
    n, d = p["n"], p["d"]
    q, T = 1.0 / n, n * K
    z = acc.dpsgd_noise_multiplier(q, T, p["epsilon"], p["delta"])
    shuf = [sg.exact_constant_excess(n=n, d=d, K=K, eta=e, sigma=sigma, lam=p["lam"], offset=p["offset"])["total"]
            for e in TUNING_ETAS]
    # replace-one: one record's clipped gradient replaced moves the sampled sum by up to 2G, so the noise std is z 2G
    # (dp-accounting's Poisson-sampled Gaussian is add/remove with sensitivity 1 in units of z)
    sgd = [sg.exact_dpsgd_constant_excess(n=n, d=d, q=q, T=T, eta=e, z=z, G=2 * p["clip"], lam=p["lam"],
                                          offset=p["offset"]) for e in TUNING_ETAS]
    i, j = int(np.argmin(shuf)), int(np.argmin(sgd))
    return {"dp_shuffleg": shuf[i], "dp_shuffleg_eta": TUNING_ETAS[i], "dpsgd": sgd[j], "dpsgd_eta": TUNING_ETAS[j],
            "dpsgd_noise_multiplier": z, "dpsgd_steps": T, "dpsgd_rate": q,
            "edge": i in (0, len(TUNING_ETAS) - 1) or j in (0, len(TUNING_ETAS) - 1)}


def rate_report(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    bullets = [*mechanism_header(r),
               f"- Each point: {pts[0]['params']['instance']} on the mean loss with every record 0 and psi = "
               "(lam/2)||x||^2 (x* = 0, "
               "sigma_any = 0), started at offset e_1, with §4.5.3's schedule; the expected excess in closed form "
               "(no sampling: the iteration is linear and Gaussian), a simulation of the same run where n K <= "
               f"{SIM_STEPS:,} steps",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    body = ["| n | K | sigma | eta | capped | exact E excess | its noise part | simulated mean | the corollary's bound | "
            "excess / bound | tuned DP-ShuffleG | tuned DP-SGD |", "|" + "---|" * 12]
    for pt in pts:
        sim = pt["simulated"]
        body.append(f"| {pt['params']['n']} | {pt['K']} | {fmt(pt['sigma'])} | {fmt(pt['eta'])} | "
                    f"{fmt(pt['capped'])} | {fmt(pt['exact']['total'])} | {fmt(pt['exact']['noise_part'])} | "
                    f"{fmt(float(np.mean(sim))) if sim else '-'} | {fmt(pt['bound']['total'])} | "
                    f"{fmt(pt['exact']['total'] / pt['bound']['total'])} | "
                    f"{fmt((pt['versus_dpsgd'] or {}).get('dp_shuffleg'))} | {fmt((pt['versus_dpsgd'] or {}).get('dpsgd'))} |")
    body += ["", "tuned: each method's exact expected excess at its best step on one grid (8 per decade), the same "
             "(epsilon, delta) and the same n K gradient steps; DP-SGD samples each record with probability 1/n per "
             "step, its noise multiplier by dp-accounting's RDP accountant.", ""]
    return bullets, body


MECHANISM_ENTRIES = MECHANISM_ENTRIES + (
    MechanismEntry(
        name="shuffleg_rate",
        description="seed 003 ch. 4: DP-ShuffleG and the public variants at §4.5.3's schedule (K = n eps^2 / d, its "
                    "eta), the exact expected excess against Eq. 4.13's / Table 4.4's rates and the corollaries' "
                    "bounds, to n far beyond simulation; the DP-SGD baseline beside DP-ShuffleG (§4.5.4)",
        citation="seed 003 (Jiang's thesis) ch. 4: §4.5.3 (L1453-1470), Eq. 4.13, Cor 4.5.1 (L1419)",
        params=ShuffleGRateParams, sweepable=("n", "epsilon", "d"), whole=("n", "d"),
        rules=lambda p: None, run_point=rate_point, checks=SHUFFLEG_RATE_CHECKS, threat_model="central",
        check_rules=SHUFFLEG_RATE_RULES,
        report=rate_report),
)
