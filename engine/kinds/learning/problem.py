"""Spec -> the learning problem of one sweep point: the loss, the data (a population to draw fresh data
sets from, or one fixed data set), the constants the calibrations need, and how excess risk is measured.

Every constant carries its provenance, which the report shows next to the resolved parameters.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from algorithms import datasets
from algorithms.classification import make_sphere_classification
from algorithms.data import SphereLinear, make_sphere_linear
from algorithms.losses import LOSSES, LinearModelLoss
from algorithms.risk import DataSetRisk
from engine.kinds.learning.spec import PackagedData, Spec
from engine.specbase import SpecError


@dataclass
class Problem:
    loss: LinearModelLoss
    consts: dict[str, float]
    provenance: dict[str, str]
    population: object | None = None                       # draws fresh data sets (mode sco)
    fixed: tuple[np.ndarray, np.ndarray] | None = None      # the one data set of mode erm: X (N, n, d), y (N, n)
    population_risk: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None
    empirical: DataSetRisk | None = None                    # mode erm: excess empirical risk on ``fixed``
    grad_F: Callable[[np.ndarray], np.ndarray] | None = None
    systematic: dict[str, dict[str, float]] = field(default_factory=dict)   # per measure: mc_se, solver_gap
    note: str = ""


def build(spec: Spec, problem_seed: int, point_rng: np.random.Generator) -> Problem:
    data, lspec = spec.data, spec.loss
    loss = LOSSES.get(lspec.kind)(mu=lspec.mu)
    rho = lspec.diameter / 2
    base: dict[str, float] = {"mu": lspec.mu, "D": lspec.diameter}
    prov = {"mu": "spec (loss.mu)", "D": "spec (loss.diameter)"}
    if not isinstance(data, PackagedData):
        base |= {"n": data.n, "d": data.d}
    if data.kind == "sphere_linear":
        pop = make_sphere_linear(np.random.default_rng(problem_seed), d=data.d, N=data.N, radius=data.radius,
                                 label_noise=data.label_noise, w_norm=data.w_norm, heterogeneity=data.heterogeneity,
                                 mu=lspec.mu, diameter=lspec.diameter)
        if np.linalg.norm(pop.w_opt) >= rho:
            raise SpecError("spec", "loss.diameter", f"{lspec.diameter}: the optimum (norm "
                            f"{np.linalg.norm(pop.w_opt):.3g}) must lie inside the ball of diameter D")
        consts = base | pop.constants()
        prov |= {k: "closed form (algorithms/data.py)" for k in ("L", "beta", "phi2", "v2", "Delta", "risk_max")}
        consts["L_inf"], prov["L_inf"] = consts["L"], "bounded by L (||g||_inf <= ||g||_2)"
        if data.mode == "sco":
            return Problem(loss, consts, prov, population=pop, population_risk=_exact(pop), grad_F=pop.grad_F,
                           note="SCO: every trial draws a fresh data set; population excess risk in closed form")
        X, y = pop.sample(point_rng, (data.N, data.n))
        return _erm(loss, X, y, rho, consts, prov, population=pop, what="one synthetic data set per sweep point")
    if data.kind == "sphere_logistic":
        cpop = make_sphere_classification(np.random.default_rng(problem_seed), d=data.d, N=data.N,
                                          radius=data.radius, w_norm=data.w_norm, heterogeneity=data.heterogeneity)
        L, beta = loss.constants(r=data.radius, rho=rho, y_max=1.0)
        consts = base | {"L": L, "beta": beta, "phi2": L**2, "v2": 0.0 if data.heterogeneity == 0 else 4 * L**2,
                         "risk_max": L * lspec.diameter, "L_inf": L}
        prov["L_inf"] = "bounded by L (||g||_inf <= ||g||_2)"
        prov |= {"L": f"{loss.name}: sup-gradient bound on the ball", "beta": f"{loss.name}: smoothness",
                 "phi2": "upper bound L^2 (no closed form)", "v2": "0 for i.i.d. silos, else the bound (2L)^2"}
        if data.mode == "erm":
            X, y = cpop.sample(point_rng, (data.N, data.n))
            return _erm(loss, X, y, rho, consts, prov, population=cpop, what="one synthetic data set per sweep point")
        per_silo = -(-data.eval_records // data.N)
        Xe, ye = cpop.sample(np.random.default_rng([problem_seed, 2]), (data.N, per_silo))
        risk = DataSetRisk.build(loss, Xe.reshape(-1, data.d), ye.reshape(-1), rho)
        consts |= {"Delta": risk.at_zero(), "risk_max": loss.sup_on_ball(rho, risk.X, risk.y) - risk.minimum.value}
        prov |= {"Delta": "F(0) - F* on the evaluation sample",
                 "risk_max": "sup_W F - F* <= worst-margin loss on the evaluation sample - F*"}
        return Problem(loss, consts, prov, population=cpop, population_risk=risk.excess,
                       systematic={"excess_risk": {"solver_gap": risk.minimum.gap}},
                       note=(f"SCO: every trial draws a fresh data set; population excess risk estimated on an "
                             f"independent sample of {data.N * per_silo} records (its Monte Carlo standard error "
                             f"enters the bound checks) against the optimum on that sample (certified gap "
                             f"{risk.minimum.gap:.1e})"))
    # packaged real data: always ERM
    try:
        silo = datasets.federated(data.kind, N=data.N, n=data.n, radius=data.radius, split=data.split,
                                  rng=np.random.default_rng(problem_seed))
    except ValueError as e:
        raise SpecError("spec", "data", str(e)) from None
    L, beta = loss.constants(r=silo.radius, rho=rho, y_max=silo.y_max)
    # |phi'| <= 1 for the losses packaged data allow (logistic, hinge), so ||grad f||_inf <= max|x_j| + mu rho
    L_inf = loss.constants(r=float(np.abs(silo.X).max()), rho=rho, y_max=silo.y_max)[0]
    consts = base | {"L": L, "beta": beta, "phi2": L**2, "v2": 4 * L**2, "risk_max": L * lspec.diameter,
                     "d": silo.d, "n": silo.n, "L_inf": L_inf}
    prov["L_inf"] = "sup ||grad f||_inf <= max_ij |x_ij| + mu rho (|phi'| <= 1)"
    prov |= {"L": f"{loss.name}: sup-gradient bound, max ||x|| = {silo.radius:g}", "beta": f"{loss.name}: smoothness",
             "phi2": "upper bound L^2", "v2": "upper bound (2L)^2", "risk_max": "upper bound L D",
             "d": silo.source, "n": "records per silo"}
    return _erm(loss, silo.X, silo.y, rho, consts, prov, population=None, what=f"{silo.source}, fixed")


def _exact(pop: SphereLinear) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    return lambda w: (pop.excess_risk(w), np.zeros(w.shape[0]))


def _erm(loss, X, y, rho, consts, prov, *, population, what: str) -> Problem:
    risk = DataSetRisk.build(loss, X.reshape(-1, X.shape[-1]), y.reshape(-1), rho)
    consts = consts | {"Delta": risk.at_zero(),
                       "risk_max": min(consts["L"] * 2 * rho, loss.sup_on_ball(rho, risk.X, risk.y) - risk.minimum.value)}
    prov = prov | {"Delta": "F_X(0) - F_X* of the data set",
                   "risk_max": "sup_W F_X - F_X* <= min(L D, worst-margin loss of each record - F_X*)"}
    return Problem(loss, consts, prov, population=population, fixed=(X, y), empirical=risk,
                   systematic={"empirical_excess_risk": {"solver_gap": risk.minimum.gap}},
                   note=(f"ERM: {what}; every trial reuses it and only the algorithm's randomness varies; "
                         f"excess empirical risk against the non-private optimum on the domain (scipy SLSQP, "
                         f"certified optimality gap {risk.minimum.gap:.1e})"))
