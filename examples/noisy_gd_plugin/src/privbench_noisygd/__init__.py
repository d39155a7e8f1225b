"""A privbench plugin for learning specs, written as an outside author would: full-batch noisy projected gradient
descent (central DP), its two theorems, a data kind and a check kind, registered through the entry-point group
``privbench.plugins`` (see ../../pyproject.toml) with no edit to privbench.

- ``noisy_gd_example`` (ENTRIES): R rounds; each round the mean of the n records' gradients, each clipped to L in
  l2, plus N(0, sigma^2 I) noise, a step of size eta, a projection onto the ball of radius D/2; the output is the
  average of the iterates w_0 .. w_{R-1}. Its privacy event: R Gaussian releases of the mean of all n records (batch
  = pool = n), so privbench's own accountants and audit judge what ran. Variants plant bugs: ``half_noise`` releases
  sigma/2 noise but declares sigma; ``ascent`` steps up the gradient; ``wrong_sensitivity`` calibrates sigma at
  sensitivity L/n instead of 2L/n.
- ``noisygd.privacy`` (THEOREMS): the author's calibration by zero-concentrated DP (Bun & Steinke 2016, Prop. 1.6:
  the Gaussian mechanism with l2-sensitivity Delta is Delta^2/(2 sigma^2)-zCDP; Lemma 2.3: zCDP composes additively;
  Prop. 1.3: rho-zCDP is (rho + 2 sqrt(rho ln(1/delta)), delta)-DP). Replace-one sensitivity of the clipped mean:
  2L/n. Solving rho + 2 sqrt(rho ln(1/delta)) = eps for the R-fold rho: sigma = (2L/n) sqrt(R / (2 rho*)), sqrt(rho*)
  = sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta)).
- ``noisygd.utility`` (THEOREMS): the averaged projected stochastic subgradient method on a convex F with
  unbiased gradient estimates of second moment at most G^2 = L^2 + d sigma^2, from w_0 = 0 with ||w* - w_0|| <= D/2:
  E F(w_bar) - F* <= (D/2)^2/(2 eta R) + eta G^2/2 (Nemirovski et al. 2009, Sec. 2.1; explicit constants), here on
  the fixed data set (ERM): the clipped gradient is the exact gradient when L bounds every record's gradient.
- ``blobs`` (data_kinds()): two Gaussian clusters at +-(separation/2) e_1 with unit noise, labels +-1, records scaled
  so that max ||x|| = radius, one pool (N = 1), ERM.
- ``learns`` (CHECK_KINDS): the run did learn: a one-sided t-test that the mean excess empirical risk is below F(0) - F*
  (the risk of never moving); the ``ascent`` bug fails it.
"""
from __future__ import annotations

import math
from typing import Any, Literal, Mapping

import numpy as np
import sympy as sp
from pydantic import Field

from algorithms import mechanisms
from algorithms.data import Records
from algorithms.events import GaussianRelease
from algorithms.result import RunOutput
from catalog.base import AlgorithmEntry, ResolutionError, Resolved
from verifiers import stats
from verifiers.checks.base import CheckKind, CheckResult, CheckSpec, Context, Point, Rule, compare, result
from verifiers.theorems.base import D, L, R, Theorem, d, delta0, eps0, eta, n, sigma

CITE = "privbench_noisygd (an example plugin): full-batch noisy projected gradient descent"

# --- the algorithm ---------------------------------------------------------------------------------------------------


def _clip(g: np.ndarray, bound: float) -> np.ndarray:
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    return g * np.minimum(1.0, bound / np.maximum(norm, 1e-300))


def run(records: Records, loss, *, R: int, eta: float, L: float, radius: float, sigma: float, bug: str,
        rng: np.random.Generator, M_range=None, grad_F=None) -> RunOutput:
    """Vectorised over the trials (records.trials): every array has the trial axis first."""
    if records.N != 1:
        raise ValueError(f"noisy_gd_example runs on one pool of n records (data.N = 1), not N = {records.N}")
    trials, n_, d_ = records.trials, records.n, records.d
    every = np.broadcast_to(np.arange(n_), (trials, 1, n_))
    X, y = records.take(every)                                   # (trials, 1, n, d): the whole data set each round
    X, y = X[:, 0], y[:, 0]
    w = np.zeros((trials, d_))
    avg = np.zeros((trials, d_))
    noise_sq = np.zeros(trials)
    released = sigma / 2 if bug == "half_noise" else sigma       # the planted bug: half the noise, sigma declared
    step = -eta if bug == "ascent" else eta                      # the planted bug: a step up the gradient
    for t in range(R):
        avg += (w - avg) / (t + 1)                               # the average of w_0 .. w_t
        clean = _clip(loss.record_grads(w, X, y), L).mean(axis=1)
        noisy = mechanisms.gaussian(clean, released, rng=rng)
        noise_sq += np.einsum("td,td->t", noisy - clean, noisy - clean)
        w = mechanisms.project_ball(w - step * noisy, radius)
    uses = np.full(trials, R)                                    # every record is read in every round
    event = GaussianRelease(sigma=sigma, batch_size=n_, pool_size=n_, sampling="without_replacement", rounds=R,
                            max_record_uses=R)
    return RunOutput(w=avg, events=(event,), noise_sq=noise_sq, noise_coords=np.full(trials, R * d_), grad_err=None,
                     rounds=R, silo_rounds=np.full(trials, R), record_uses=uses)


# --- the theorems ----------------------------------------------------------------------------------------------------

SQRT_RHO = sp.sqrt(sp.log(1 / delta0) + eps0) - sp.sqrt(sp.log(1 / delta0))
PRIVACY = Theorem(
    name="noisygd.privacy", citation=f"{CITE}: zCDP calibration (Bun & Steinke 2016, Props. 1.3, 1.6, Lemma 2.3)",
    inventory=(), not_inventoried="an example plugin's own claim, not a claim of the seed papers",
    kind="explicit", measures="sigma", terms={"sigma": (2 * L / n) * sp.sqrt(R / (2 * SQRT_RHO**2))},
    algorithms=("noisy_gd_example",), loss_class="convex", threat_model="central", needs_smooth=False,
    note="R Gaussian releases of the clipped mean gradient (replace-one sensitivity 2L/n), composed in zCDP.")
UTILITY = Theorem(
    name="noisygd.utility", citation=f"{CITE}: averaged projected subgradient method (Nemirovski et al. 2009, Sec. 2.1)",
    inventory=(), not_inventoried="an example plugin's own claim, not a claim of the seed papers",
    kind="explicit", measures="empirical_excess_risk",
    terms={"optimisation": (D / 2) ** 2 / (2 * eta * R), "noise": eta * (L**2 + d * sigma**2) / 2},
    algorithms=("noisy_gd_example",), loss_class="convex", threat_model="central", needs_smooth=False,
    rate_term="noise", note="Unbiased noisy gradients of second moment <= L^2 + d sigma^2; w_0 = 0, ||w*|| <= D/2.")
THEOREMS = (PRIVACY, UTILITY)


def resolve(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """R (default 50), sigma from the privacy theorem, eta minimising the utility theorem's bound."""
    p = dict(c)
    prov = {k: "problem constant" for k in c}
    if "R" in ov:
        R_, prov["R"] = int(ov["R"]), "override"
    else:
        R_, prov["R"] = 50, "the plugin's default number of rounds"
    if R_ < 1:
        raise ResolutionError("algorithm.overrides.R", f"R = {R_}: at least one round")
    p.update(R=R_, K=int(c["n"]))
    prov["K"] = "= n: every record in every round (full batch)"
    if "sigma" in ov:
        sig, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        sig, prov["sigma"] = PRIVACY.evaluate(p), "noisygd.privacy (zCDP calibration)"
        if variant == "wrong_sensitivity":          # the planted bug: the calibration at sensitivity L/n, not 2L/n
            sig, prov["sigma"] = sig / 2, "noisygd.privacy at sensitivity L/n (PLANTED BUG: the mean's is 2L/n)"
    G2 = c["L"] ** 2 + c["d"] * sig**2
    if "eta" in ov:
        step, prov["eta"] = float(ov["eta"]), "override"
    else:
        step, prov["eta"] = (c["D"] / 2) / math.sqrt(G2 * R_), "(D/2)/(G sqrt(R)), minimising noisygd.utility"
    p.update(sigma=sig, eta=step)
    return Resolved(p, prov, frozenset(ov), dict(R=R_, eta=step, L=c["L"], radius=c["D"] / 2, sigma=sig, bug=variant))


ENTRIES = (AlgorithmEntry(
    name="noisy_gd_example", description="Full-batch noisy projected gradient descent (an example plugin)",
    citation=CITE, privacy_theorem="noisygd.privacy", overrides=("R", "sigma", "eta"),
    variants=("none", "half_noise", "ascent", "wrong_sensitivity"), resolve=resolve, run=run, one_pass=lambda variant: False,
    smoothing=None, threat_model="central", single_pool=True, auditable=True),)


# --- the check kind --------------------------------------------------------------------------------------------------


def learns(check: CheckSpec, thm: Theorem, points: list[Point], ctx: Context) -> CheckResult:
    """At every point, a one-sided Student t-test (Bonferroni over the points) of the mean excess empirical risk
    against F(0) - F* (Delta: the risk of the initial point, never moving): pass when the upper limit is below it,
    fail when the lower limit is at or above it, else inconclusive."""
    level = 1 - (1 - check.level) / len(points)
    rows, verdict = [], "pass"
    for p in points:
        x = np.asarray(p.measurements["empirical_excess_risk"], float)
        mean, upper, _ = stats.one_sided_upper(x, level)
        lower = 2 * mean - upper
        delta = p.params["Delta"]
        if lower >= delta:
            verdict = "fail"
        elif upper >= delta and verdict == "pass":
            verdict = "inconclusive"
        rows.append({"point": p.value, "mean": mean, "lower": lower, "upper": upper, "initial_risk": delta})
    worst = max(rows, key=lambda r: r["upper"] / r["initial_risk"])
    return result(check, thm, verdict, f"mean excess empirical risk against F(0) - F*, one-sided at {level:.4g}: "
                                       f"worst upper limit {worst['upper']:.4g} vs {worst['initial_risk']:.4g}",
                  measured=worst["upper"], bound=worst["initial_risk"], rows=tuple(rows))


def describe(r: Mapping[str, Any], spec: Mapping[str, Any]) -> Rule | None:
    """The rule above in words, for the report's first table."""
    if r["verdict"] == "inapplicable" or not r["rows"]:
        return None
    w = max(r["rows"], key=lambda x: x["upper"] / x["initial_risk"])
    side = ("fail" if any(x["lower"] >= x["initial_risk"] for x in r["rows"]) else
            "undecided" if any(x["upper"] >= x["initial_risk"] for x in r["rows"]) else "pass")
    return Rule("pass iff the upper confidence limit of the mean excess empirical risk is below F(0) - F* at every "
                "point; fail iff the lower limit is at or above it",
                f"upper limit {compare(w['upper'], w['initial_risk'])[0]} (F(0) - F*)", side)


CHECK_KINDS = (CheckKind("learns", learns, describe=describe),)


# --- the data kind (a function: the engine's DataKind is imported once privbench's catalog is loaded) ----------------


def data_kinds() -> tuple:
    from engine.kinds.learning.data import DataKind, erm_problem
    from engine.specbase import Strict

    class Blobs(Strict):
        kind: Literal["blobs"] = Field(description="two Gaussian clusters at +-(separation/2) e_1, labels +-1")
        N: Literal[1] = Field(1, description="one pool of n records")
        n: int = Field(ge=2, le=100_000, description="records")
        d: int = Field(ge=1, le=1000, description="dimension")
        separation: float = Field(2.0, ge=0, le=100, description="distance between the cluster centres")
        radius: float = Field(1.0, gt=0, le=1e3, description="records are scaled so that max ||x|| = radius")
        participation: None = None
        mode: Literal["erm"] = Field("erm", description="a fixed data set: ERM only")

    def build(data: Blobs, lspec: Any, loss, rho: float, base: dict, prov: dict, problem_seed: int,
              point_rng: np.random.Generator):
        rng = np.random.default_rng(problem_seed)
        y = np.where(rng.random(data.n) < 0.5, -1.0, 1.0)
        X = rng.standard_normal((data.n, data.d))
        X[:, 0] += y * data.separation / 2
        X *= data.radius / np.linalg.norm(X, axis=1).max()
        L_, beta = loss.constants(r=data.radius, rho=rho, y_max=1.0)
        consts = base | {"n": data.n, "d": data.d, "L": L_, "beta": beta, "phi2": L_**2, "v2": 0.0,
                         "risk_max": L_ * lspec.diameter, "L_inf": L_}
        prov |= {"n": "spec (data.n)", "d": "spec (data.d)", "L": f"{loss.name}: sup-gradient bound on the ball",
                 "beta": f"{loss.name}: smoothness", "phi2": "upper bound L^2", "v2": "0: one pool",
                 "risk_max": "upper bound L D", "L_inf": "bounded by L"}
        return erm_problem(loss, X[None], y[None], rho, consts, prov, population=None,
                           what="the plugin's two-blob data set, fixed by the spec's seed")

    return (DataKind("blobs", "two Gaussian blobs, labels +-1 (the noisy_gd example plugin); ERM", Blobs,
                     ("logistic", "hinge"), build),)
