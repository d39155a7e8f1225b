"""Seed 002 (Asi, Duchi, Javidi, element-level DP; Lnnn = line of ../shared/seeds/002_d3919fba655c6f58.txt),
Sec. 3.1-3.2, as mechanisms (``kind: mechanism``): heavy hitters (7) and the histogram with per-element l2 clipping
(9), each at its element-level calibration and at its user-level one, on Zipf-like multinomial users with a public
partition (algorithms/element.py). At every point: the utility of both levels over ``trials`` fresh data sets, the
sensitivity of the released mechanism under every neighbouring relation (derived, and found from below by a search
over neighbouring users), the exact privacy of the Gaussian release at that sensitivity, and an audit of the worst
pair the search found under the spec's relation. Formulas: verifiers/accountants/element_privacy.py; checks:
verifiers/checks/element.py."""
from __future__ import annotations

import math
import time
from typing import Any, Mapping

import numpy as np
from pydantic import Field

from algorithms import element as el
from catalog.base import MechanismEntry, MechanismParams, RuleError, fmt, mechanism_header
from verifiers.accountants import element_privacy as ep
from verifiers.audit import lower_bound
from verifiers.checks.element import ELEMENT_CHECKS, ELEMENT_RULES, HH_CHECKS
from verifiers.threat_models import Neighbouring

ELEMENT_KEEP = Neighbouring("element", "replace_one", True)
ELEMENT_FREE = Neighbouring("element", "replace_one", False)
USER = Neighbouring("user", "replace_one", True)
RECORD = Neighbouring("record", "replace_one")
SIDE_BY_SIDE = (ELEMENT_KEEP, ELEMENT_FREE, USER, RECORD)
AUDIT_CHUNK = 20_000             # noise draws of the audit held at once
AUDIT_CONFIDENCE = 0.95


class _Common(MechanismParams):
    d: int = Field(ge=2, le=5000, description="items")
    s: float = Field(ge=0, le=3, description="Zipf exponent: p_j proportional to (j+1)^-s (0: uniform)")
    m: int = Field(ge=1, le=5000, description="items per user, X^(u) ~ Multinomial(m, p) (L170)")
    n: int = Field(ge=2, le=10**6, description="users")
    eps: float = Field(gt=0, le=20, description="the claimed epsilon: the level's calibration (Lemmas 3.1/3.2 (ii))")
    delta: float = Field(gt=0, lt=0.5, description="the claimed delta")
    alpha: float = Field(8.0, gt=1, le=10**4, description="Renyi order of the (eps, alpha) claim, Lemmas 3.1/3.2 (i)")
    audit_trials: int = Field(100_000, ge=1000, le=2 * 10**6, description="audit: releases on each side of the pair")


class HeavyHittersParams(_Common):
    t: float = Field(1.0, gt=0, description="Prop. 1's t: the claimed bound on the ordering loss is t^2 (0 < t <= d)")


class HistogramParams(_Common):
    K: int = Field(ge=1, le=5000, description="clusters of the public partition (the elements, L205)")
    contiguous: int = Field(1, ge=0, le=1, description="1: clusters are blocks of consecutive items (the heavy items "
                                                        "together, P(c) unequal); 0: round robin (P(c) nearly equal)")
    rho: float = Field(0.0, ge=0, description="clipping radius of the element-level run; 0: Prop. 2's smallest, "
                                              "min{3 m max_c P(c) + 3 log2 m + t, m} with t = log2 n (L229, L240)")


def _rules(p: Mapping[str, Any], *, hist: bool) -> None:
    cells = p["n"] * max(p["d"], p["m"])
    if cells > 2 * 10**7:
        raise RuleError(f"n max(d, m) = {cells} counts and draws per data set (allowed: <= 2e7, about 0.5 GB); "
                        f"lower n, d or m", field="n")
    if hist and p["K"] > p["d"]:
        raise RuleError(f"K = {p['K']} clusters of d = {p['d']} items: K <= d", field="K")
    if not hist and p["t"] > p["d"]:
        raise RuleError(f"t = {p['t']} > d = {p['d']}: Prop. 1 takes 0 < t <= d", field="t")


def _model(p: Mapping[str, Any], hist: bool) -> el.Multinomial:
    return el.model(d=p["d"], K=p["K"] if hist else p["d"], s=p["s"], m=p["m"],
                    contiguous=bool(p["contiguous"]) if hist else True)


def _relations_table(name: str, p: Mapping[str, Any], mdl: el.Multinomial, *, rho: float, noise: float, scale: float,
                     rng: np.random.Generator, feature) -> list[dict]:
    """Every relation: the derived sensitivity of the per-user feature sum, the search's, and the exact privacy of
    the release (noise std ``noise`` in units of the feature sum divided by ``scale``)."""
    rows = []
    for rel in SIDE_BY_SIDE:
        derived = ep.sensitivity(name, rel.unit, rel.keep_count, m=mdl.m, d=mdl.d, K=mdl.K,
                                 max_cluster=int(mdl.cluster_sizes().max()), rho=rho)
        pair = el.search_pair(mdl, rel.unit, rel.keep_count, feature, rng=rng)
        mu = max(derived, pair.distance) / scale / noise
        rows.append({"relation": rel.label, "text": rel.text, "derived": derived, "found": pair.distance,
                     **ep.gaussian_report(mu, eps=p["eps"], delta=p["delta"], alpha=p["alpha"]),
                     "pair": [pair.x.tolist(), pair.x_prime.tolist()], "pair_change": _change(pair)})
    return rows


def _change(pair: el.Pair) -> str:
    """The coordinates where the pair's users differ, as item: count -> count."""
    idx = np.nonzero(pair.x != pair.x_prime)[0]
    shown = ", ".join(f"{int(j)}: {pair.x[j]:g} -> {pair.x_prime[j]:g}" for j in idx[:6])
    return shown + (f", ... ({idx.size} items)" if idx.size > 6 else "") if idx.size else "none (equal users)"


def _audit(rng: np.random.Generator, release, pair: list, others: np.ndarray, p: Mapping[str, Any]) -> dict:
    """Releases on D = others + x and D' = others + x' (the worst pair under the spec's relation), scored by their
    projection on the direction between the two noiseless releases (the likelihood-ratio test of a Gaussian
    release), and the Clopper-Pearson lower bound on epsilon at the claimed delta (verifiers/audit.py)."""
    x, y = (np.asarray(v, dtype=np.float64) for v in pair)
    d_set, dp_set = np.vstack([others, x]), np.vstack([others, y])
    c_d, c_dp = release(rng, d_set, 0), release(rng, dp_set, 0)
    direction = (c_d - c_dp)[0]
    norm = float(np.linalg.norm(direction))
    if norm == 0:
        return {"epsilon_lower": 0.0, "trials_per_side": p["audit_trials"], "separation": 0.0,
                "note": "the pair's noiseless releases coincide: nothing to distinguish"}
    u = direction / norm
    sd, sdp = [], []
    for start in range(0, p["audit_trials"], AUDIT_CHUNK):
        k = min(AUDIT_CHUNK, p["audit_trials"] - start)
        sd.append(release(rng, d_set, k) @ u)
        sdp.append(release(rng, dp_set, k) @ u)
    b = lower_bound(np.concatenate(sd), np.concatenate(sdp), delta=p["delta"], confidence=AUDIT_CONFIDENCE)
    return {"epsilon_lower": b.epsilon_lower, "trials_per_side": p["audit_trials"], "separation": norm,
            "fpr_upper": b.fpr_upper, "fnr_upper": b.fnr_upper, "confidence": b.confidence}


def run_heavy_hitters(p: dict, trials: int, seq: Any, relation: Neighbouring) -> dict:
    t0 = time.perf_counter()
    data_rng, noise_rng, search_rng, audit_rng = (np.random.default_rng(s) for s in seq.spawn(4))
    mdl = _model(p, False)
    s2 = ep.lemma_sigma2(p["eps"], p["delta"])
    # Lemma 3.1 (ii); the user level of the comparison: the paper's sigma_std^2 = m (...) (L184); the user-level
    # release whose privacy is judged: Eq. (1) at the global sensitivity gs = sqrt(2m) (L184's sigma_std "scales as"
    # it and drops the factor 2 that Eq. (1) at gs asks for: the same sqrt 2 as Lemma 3.2's)
    sigma_el, sigma_user = math.sqrt(s2), math.sqrt(p["m"] * s2)
    sigma = math.sqrt(2 * p["m"] * s2) if relation.unit == "user" else sigma_el
    gamma = ep.prop1_gamma(n=p["n"], m=p["m"], d=p["d"], t=p["t"], sigma=sigma_el, p1=float(mdl.p[0]))
    mis_el, mis_user = np.zeros(trials, np.int64), np.zeros(trials, np.int64)
    for i in range(trials):
        users = el.draw_users(data_rng, mdl, p["n"])
        mis_el[i] = el.misordered(el.heavy_hitters_release(noise_rng, users, sigma=sigma_el), mdl.p, gamma)[0]
        mis_user[i] = el.misordered(el.heavy_hitters_release(noise_rng, users, sigma=sigma_user), mdl.p, gamma)[0]
    table = _relations_table("heavy_hitters", p, mdl, rho=0.0, noise=sigma, scale=1.0, rng=search_rng,
                             feature=el.indicators)
    rdp_sigma = math.sqrt(ep.rdp_sigma2(p["eps"], p["alpha"]))
    mine = next(r for r in table if r["relation"] == relation.label)
    others = el.draw_users(audit_rng, mdl, min(p["n"], 200) - 1)

    def release(g: np.random.Generator, users: np.ndarray, k: int) -> np.ndarray:
        if k == 0:
            return el.indicators(users).sum(axis=0)[None, :]
        return el.heavy_hitters_release(g, users, sigma=sigma, reps=k)

    audit = _audit(audit_rng, release, mine["pair"], others, p)
    return {"params": p, "relation": relation.label, "sigma": sigma, "sigma_element": sigma_el,
            "sigma_user": sigma_user, "p1": float(mdl.p[0]), "p1_limit": 1 / (2 * p["m"]), "gamma": gamma,
            "separated_pairs": el.separated_pairs(mdl.p, gamma), "bound": p["t"] ** 2,
            "misordered_element": mis_el.tolist(), "misordered_user": mis_user.tolist(),
            "relations": table, "claimed": _claim(mine, p, rdp_sigma, sigma, mu_unit=max(mine["derived"], mine["found"])),
            "audit": audit, "seconds": time.perf_counter() - t0}


def run_histogram(p: dict, trials: int, seq: Any, relation: Neighbouring) -> dict:
    t0 = time.perf_counter()
    data_rng, noise_rng, search_rng, audit_rng = (np.random.default_rng(s) for s in seq.spawn(4))
    mdl = _model(p, True)
    n, m = p["n"], p["m"]
    sigma = math.sqrt(ep.lemma_sigma2(p["eps"], p["delta"]))
    rho_rule = ep.prop2_rho(m=m, cluster_mass=mdl.cluster_mass(), t=math.log2(n))
    rho_el = p["rho"] or rho_rule
    rho_user = float(m)                     # the user-level run: rho = m never clips (L238)
    rho = rho_user if relation.unit == "user" else rho_el
    target = m * mdl.p
    err_el, err_user = np.zeros((trials, mdl.d)), np.zeros((trials, mdl.d))
    for i in range(trials):
        users = el.draw_users(data_rng, mdl, n)
        err_el[i] = el.histogram_release(noise_rng, users, mdl.cluster, rho=rho_el, noise_std=rho_el * sigma / n)[0] - target
        err_user[i] = el.histogram_release(noise_rng, users, mdl.cluster, rho=rho_user,
                                           noise_std=rho_user * sigma / n)[0] - target
    sq_el, sq_user = err_el**2, err_user**2
    table = _relations_table("element_histogram", p, mdl, rho=rho, noise=rho * sigma / n, scale=n, rng=search_rng,
                             feature=lambda x: el.clip_blocks(x, mdl.cluster, rho))
    mine = next(r for r in table if r["relation"] == relation.label)
    rdp_sigma = math.sqrt(ep.rdp_sigma2(p["eps"], p["alpha"]))
    others = el.draw_users(audit_rng, mdl, min(n, 200) - 1)
    audit_n = others.shape[0] + 1
    noise_std = rho * sigma / audit_n       # the audit's data set has audit_n users: the mechanism's own scale there

    def release(g: np.random.Generator, users: np.ndarray, k: int) -> np.ndarray:
        if k == 0:
            return el.clip_blocks(users, mdl.cluster, rho).mean(axis=0)[None, :]
        return el.histogram_release(g, users, mdl.cluster, rho=rho, noise_std=noise_std, reps=k)

    audit = _audit(audit_rng, release, mine["pair"], others, p)
    envelope = lambda r: float(np.sum(target / n + sigma**2 * r**2 / n**2))      # noqa: E731  Prop. 2's bracket
    return {"params": p, "relation": relation.label, "sigma": sigma, "rho": rho, "rho_element": rho_el,
            "rho_rule": rho_rule, "rho_user": rho_user, "cluster_mass_max": float(mdl.cluster_mass().max()),
            "mse_element": sq_el.sum(axis=1).tolist(), "mse_user": sq_user.sum(axis=1).tolist(),
            "item_mse_element": sq_el.mean(axis=0).tolist(), "item_mse_user": sq_user.mean(axis=0).tolist(),
            "envelope_element": envelope(rho_el), "envelope_user": envelope(rho_user),
            "mse_nonprivate": float(np.sum(m * mdl.p * (1 - mdl.p)) / n),
            "bias_term_max": float(np.sum((mdl.cluster_mass()[mdl.cluster] * 2.0 ** (2 - math.log2(n)))**2)),
            "relations": table,
            "claimed": _claim(mine, p, rdp_sigma, sigma, mu_unit=max(mine["derived"], mine["found"]) / rho),
            "audit": audit, "seconds": time.perf_counter() - t0}


def _claim(mine: dict, p: Mapping[str, Any], rdp_sigma: float, sigma: float, *, mu_unit: float) -> dict:
    """The claims at the spec's relation: (ii) (eps, delta) at the run's sigma and (i) (eps, alpha) at
    sigma^2 = alpha/eps, each with the exact figure at the sensitivity the derivation and the search give
    (``mu_unit``: sensitivity per unit of the calibrated sigma)."""
    mu_i = mu_unit / rdp_sigma
    return {"eps": p["eps"], "delta": p["delta"], "alpha": p["alpha"], "delta_exact": mine["delta_at_eps"],
            "epsilon_exact": mine["epsilon_at_delta"], "renyi_sigma": rdp_sigma, "renyi_exact": ep.renyi(p["alpha"], mu_i),
            "mu": mine["mu"], "mu_per_sigma": mu_unit, "sigma": sigma}


def report(r: dict) -> tuple[list[str], list[str]]:
    pts = r["points"]
    hist = r["mechanism"] == "element_histogram"
    bullets = [*mechanism_header(r),
               f"- Utility over {r['trials']} fresh data sets per point, element level and user level on the same data; "
               + ("MSE of M_j against m p_j summed over items" if hist else "mis-ordered pairs (8) at Prop. 1's gamma"),
               "- Sensitivity of the released sum under each relation: derived (verifiers/accountants/element_privacy.py) "
               "and the largest the search over neighbouring users finds (algorithms/element.py, a lower bound); exact "
               "privacy of the Gaussian release at the larger: delta at the claimed eps, eps at the claimed delta, D_alpha",
               f"- Audit: the worst pair under the spec's relation, {pts[0]['audit']['trials_per_side']} releases per "
               f"side, Clopper-Pearson at {AUDIT_CONFIDENCE} (a lower bound on epsilon; it can refute a claim, never "
               "confirm one)",
               f"- Seconds per point: {min(p['seconds'] for p in pts):.1f} .. {max(p['seconds'] for p in pts):.1f}"]
    field = r["sweep"]["field"] if r["sweep"] else "point"
    body = [f"| {field} | relation | derived sensitivity | search finds | Delta/s | delta at claimed eps | "
            "eps at claimed delta | D_alpha |", "|---|---|---|---|---|---|---|---|"]
    for p in pts:
        for row in p["relations"]:
            body.append(f"| {fmt(p['value'])} | {row['relation']} | {fmt(row['derived'])} | {fmt(row['found'])} | "
                        f"{fmt(row['mu'])} | {fmt(row['delta_at_eps'])} | {fmt(row['epsilon_at_delta'])} | "
                        f"{fmt(row['renyi'])} |")
    body += ["", "Sensitivities are of the per-user feature sum" + (" (divide by n for the mean of (9))" if hist else "")
             + "; Delta/s uses the larger of the derived and the found; the release is calibrated for the spec's "
             "relation's level (element or user), and the other rows show what that release gives under the other "
             "relations.", ""]
    if hist:
        body += [f"| {field} | rho (element) | rho rule | MSE element | envelope element | MSE user | envelope user | "
                 "audit eps lower |", "|---|---|---|---|---|---|---|---|"]
        for p in pts:
            body.append(f"| {fmt(p['value'])} | {fmt(p['rho_element'])} | {fmt(p['rho_rule'])} | "
                        f"{fmt(float(np.mean(p['mse_element'])))} | {fmt(p['envelope_element'])} | "
                        f"{fmt(float(np.mean(p['mse_user'])))} | {fmt(p['envelope_user'])} | "
                        f"{fmt(p['audit']['epsilon_lower'])} |")
        body += ["", "Envelope: sum_j (m p_j / n + sigma^2 rho^2 / n^2), Prop. 2's bracket (L233) without its constants.",
                 ""]
    else:
        body += [f"| {field} | sigma (el / user) | p1 (limit 1/2m) | gamma | separated pairs | mis-ordered el | "
                 "mis-ordered user | t^2 | audit eps lower |", "|---|---|---|---|---|---|---|---|---|"]
        for p in pts:
            body.append(f"| {fmt(p['value'])} | {fmt(p['sigma_element'])} / {fmt(p['sigma_user'])} | {fmt(p['p1'])} "
                        f"({fmt(p['p1_limit'])}) | {fmt(p['gamma'])} | {p['separated_pairs']} | "
                        f"{fmt(float(np.mean(p['misordered_element'])))} | {fmt(float(np.mean(p['misordered_user'])))} | "
                        f"{fmt(p['bound'])} | {fmt(p['audit']['epsilon_lower'])} |")
        body.append("")
    return bullets, body


MECHANISM_ENTRIES: tuple[MechanismEntry, ...] = (
    MechanismEntry(
        name="heavy_hitters",
        description="seed 002's heavy hitters (7): the sum of users' item indicators plus Gaussian noise, ranked",
        citation="seed 002, Sec. 3.1: mechanism (7) (L176), element sensitivity 1 (L178), Lemma 3.1 (L180-182), "
                 "sigma_std (L184), the ordering loss (8) (L188), Prop. 1 (L190-199) and its comparison (L201-203)",
        params=HeavyHittersParams, sweepable=("n", "m", "d", "eps", "t", "s"), whole=("n", "m", "d"),
        rules=lambda p: _rules(p, hist=False), run_point=run_heavy_hitters, checks=HH_CHECKS,
        check_rules=ELEMENT_RULES,
        threat_model="central", report=report, relations=(ELEMENT_FREE, ELEMENT_KEEP, USER)),
    MechanismEntry(
        name="element_histogram",
        description="seed 002's histogram with per-element l2 clipping (9), at the element and the user level",
        citation="seed 002, Sec. 3.2: the projection (L213-215), mechanism (9) (L217), Lemma 3.2 (L221-225), "
                 "Prop. 2 (L227-235) and the element-vs-user comparison (L237-241)",
        params=HistogramParams, sweepable=("n", "m", "d", "K", "eps", "rho", "s"), whole=("n", "m", "d", "K"),
        rules=lambda p: _rules(p, hist=True), run_point=run_histogram, checks=ELEMENT_CHECKS,
        check_rules=ELEMENT_RULES,
        threat_model="central", report=report, relations=(ELEMENT_KEEP, ELEMENT_FREE, USER),
        data="synthetic Zipf-like multinomial users with a public partition (stands in for Sec. 4.1's Reddit "
             "comments clustered by GloVe)"),
)
