"""Seed 002 (Asi, Duchi, Javidi, "Element Level Differential Privacy"; Lnnn = line of
../shared/seeds/002_d3919fba655c6f58.txt): element-level private SGD (Alg. 1 + iteration (15), L303-325) as a
learning algorithm (``kind: learning``, threat model central, ``neighbouring: {unit: element, change:
replace_one}``), on §4.2's users (data kind ``element_clusters``). The calibration: sigma such that Cor 3.1's epsilon
(L329, Cor 2.5's eps_alpha) at the run's (q, T, delta) is the spec's epsilon, as §4.2 sets it ("Abadi et al.'s
moments accountant (Corollary 2.5 and [1])", L393). The run reports the element-level release it made
(algorithms/events.py ``ElementGaussianRelease``), which verifiers/accountants/element_sgd.py accounts for the pair
the run's users make, and engine/kinds/learning/audit.py audits with a canary user holding as many elements as the
data's users. Numerics: algorithms/element_sgd.py (``run_learning``, on ``batch_sum`` and ``sample_users``)."""
from __future__ import annotations

import math
from typing import Mapping

from algorithms import element_sgd as es
from catalog.base import AlgorithmEntry, ResolutionError, Resolved
from catalog.element_fig3_002 import calibrate
from verifiers.threat_models import ELEMENT_REPLACED

T_DEFAULT = 200            # §4.2: T = 200 private updates (L393)
Q_DEFAULT = 0.02           # OUR CHOICE: §4.2 tunes q per eps (L398); the smallest rate of our Fig. 3 grid
ALPHA0_DEFAULT = 1.0       # OUR CHOICE: §4.2 tunes alpha0 per eps (L398); within our Fig. 3 tuning's range
BETA = 0.5                 # §4.2: alpha_k = alpha0 / sqrt(k) (L393)


def resolve_element_sgd(c: Mapping[str, float], variant: str, ov: Mapping[str, float]) -> Resolved:
    """T, q, alpha0, rho from §4.2 or our choices (each overridable); sigma from Cor 3.1 at the spec's (epsilon,
    delta) (or an override); Theta = the ball of diameter D."""
    p = dict(c)
    prov = {key: "problem constant" for key in c}

    def pick(name: str, default: float, source: str) -> float:
        if name in ov:
            prov[name] = "override"
            return float(ov[name])
        prov[name] = source
        return default

    T = int(pick("T", T_DEFAULT, "§4.2: T = 200 private updates (L393)"))
    q = pick("q", Q_DEFAULT, "OUR CHOICE: §4.2 tunes the sampling rate per eps (L398) and does not report it")
    alpha0 = pick("alpha0", ALPHA0_DEFAULT, "OUR CHOICE: §4.2 tunes alpha0 per eps (L398) and does not report it")
    rho = pick("rho", es.L0, "OUR CHOICE rho = L0 = 2 >= every element's mean gradient (no clipping on the model's "
                             "data; Prop 3 takes rho >= L0, L343)")
    n = int(c["n"])
    if not 0 < q <= 1 or q * n < 1:
        raise ResolutionError("algorithm.overrides.q", f"q = {q:g}: the sampling rate must be in (0, 1] with q n = "
                                                       f"{q * n:g} >= 1 user per round on average")
    if "sigma" in ov:
        sigma, prov["sigma"] = float(ov["sigma"]), "override"
    else:
        try:
            sigma = calibrate(c["eps0"], q, T, c["delta0"])
        except ValueError as e:
            raise ResolutionError("threat_model.epsilon", str(e)) from None
        prov["sigma"] = ("Cor 3.1 (L329) with Cor 2.5's eps_alpha (L138-142) solved for sigma: the paper's epsilon at "
                         "(q, T, delta) equals the spec's (§4.2's moments accountant, L393)")
    batch = max(1, int(round(q * n)))
    prov["beta"] = "§4.2: alpha_k = alpha0 / sqrt(k) (L393)"
    prov["K"] = "q n users per round (the expected batch under Poisson sampling)"
    prov["R"] = "T updates of (15), each one release"
    p.update(T=T, R=T, q=q, K=batch, M=1, alpha0=alpha0, beta=BETA, rho=rho, sigma=sigma)
    if not math.isfinite(sigma) or sigma <= 0:
        raise ResolutionError("algorithm.overrides.sigma", f"sigma = {sigma}: must be finite and > 0")
    return Resolved(p, prov, frozenset(ov), dict(T=T, q=q, sampling=variant, alpha0=alpha0, beta=BETA, rho=rho,
                                                 sigma=sigma, radius=c["D"] / 2))


ENTRIES: tuple[AlgorithmEntry, ...] = (
    AlgorithmEntry(
        name="element_sgd", description="Seed 002's element-level private SGD: Alg. 1's per-element clipped steps, "
                                        "users subsampled, the curator's noise rho sigma N(0, I) (iteration (15))",
        citation="seed 002: Alg. 1 (L303-315), iteration (15) (L319-325), Cor 3.1 (L329) with Cor 2.5 (L132-142), "
                 "§4.2's setting (L385-393)",
        privacy_theorem="element.sgd.privacy", overrides=("T", "q", "alpha0", "rho", "sigma"),
        variants=("poisson", "fixed_size"), resolve=resolve_element_sgd, run=es.run_learning,
        one_pass=lambda variant: False, smoothing=None, threat_model="central", single_pool=True, auditable=True,
        relations=(ELEMENT_REPLACED,)),
)
