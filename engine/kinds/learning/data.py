"""Data kinds of learning specs, one registry entry each (``DATA_KINDS``): the spec model of its ``data`` section,
the losses it allows, and how it builds the learning problem of a sweep point (the loss, a population to draw fresh
data sets from or one fixed data set, the constants the calibrations need with their provenance, and how excess
risk is measured). A new data kind is its numerics in algorithms/ and one entry here."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from algorithms import datasets
from algorithms import element_sgd as es
from algorithms.classification import make_sphere_classification
from algorithms.data import SphereLinear, make_sphere_linear
from algorithms.losses import LinearModelLoss
from algorithms.registry import PluginError, Registry
from algorithms.risk import DataSetRisk
from engine.specbase import Problem as SpecProblem
from engine.specbase import SpecError, Strict


class Participation(Strict):
    low: int = Field(ge=1, description="fewest silos available in a round")
    high: int = Field(ge=1, description="most silos available in a round (<= N)")


MODE: Any = Field("sco", description="sco: every trial draws a fresh data set (population risk); "
                                "erm: one data set shared by all trials (empirical risk): a synthetic one "
                                "is drawn per sweep point when the sweep changes the data (data.*), else once "
                                "for the whole sweep")


class SphereLinearData(Strict):
    kind: Literal["sphere_linear"] = Field(description="synthetic linear regression, x uniform on a sphere")
    N: int = Field(ge=1, le=10_000, description="silos")
    n: int = Field(ge=1, le=10_000_000, description="records per silo")
    d: int = Field(ge=1, le=100_000, description="dimension")
    radius: float = Field(1.0, gt=0, le=1e3, description="||x|| of every record")
    label_noise: float = Field(0.1, ge=0, le=1e3, description="y = <w*_i, x> + Uniform[-s, s]")
    w_norm: float = Field(0.5, ge=0, le=1e3, description="norm of the common centre of the silo optima")
    heterogeneity: float = Field(0.0, ge=0, le=1, description="0: i.i.d. silos; h: w*_i = c + h ||c|| e_i")
    participation: Participation | None = Field(None, description="M_r uniform on [low, high]; default: all N")
    mode: Literal["sco", "erm"] = MODE


class SphereLogisticData(Strict):
    kind: Literal["sphere_logistic"] = Field(
        description="synthetic binary classification, x uniform on a sphere, P(y=1|x) = 1/(1+exp(-<w*_i,x>))")
    N: int = Field(ge=1, le=10_000, description="silos")
    n: int = Field(ge=1, le=10_000_000, description="records per silo")
    d: int = Field(ge=1, le=100_000, description="dimension")
    radius: float = Field(1.0, gt=0, le=1e3, description="||x|| of every record")
    w_norm: float = Field(2.0, ge=0, le=1e3, description="norm of the common centre of the silo models (signal strength)")
    heterogeneity: float = Field(0.0, ge=0, le=1, description="0: i.i.d. silos; h: w*_i = c + h ||c|| e_i")
    participation: Participation | None = Field(None, description="M_r uniform on [low, high]; default: all N")
    mode: Literal["sco", "erm"] = MODE
    eval_records: int = Field(100_000, ge=1000, le=10_000_000,
                              description="size of the independent sample the population risk is estimated on")


class PackagedData(Strict):
    kind: Literal["breast_cancer", "digits"] = Field(
        description="scikit-learn's bundled Wisconsin breast cancer data (569 x 30) or 8x8 digits (1797 x 64)")
    N: int = Field(ge=1, le=1797, description="silos")
    n: int | None = Field(None, ge=1, le=1797, description="records per silo (default: all that fit)")
    radius: float = Field(1.0, gt=0, le=1e3, description="records are scaled so that max ||x|| = radius")
    split: Literal["random", "label_skew"] = Field("random", description="how records are dealt to silos")
    participation: Participation | None = Field(None, description="M_r uniform on [low, high]; default: all N")
    mode: Literal["erm"] = Field("erm", description="a fixed data set: ERM only")


class ElementClustersData(Strict):
    kind: Literal["element_clusters"] = Field(
        description="seed 002 §4.2's simulated logistic regression (L385-391): K cluster centres and theta* uniform "
                    "on the sphere, each user holding m points x = c + Uni(S^{d-1}) in k of the K clusters, labels "
                    "from the logistic model; a record is one user (algorithms/element_sgd.py)")
    N: int = Field(1, ge=1, le=1, description="one pool of users")
    n: int = Field(ge=10, le=100_000, description="users (§4.2: n = 1000, L389)")
    d: int = Field(10, ge=1, le=50, description="dimension (Fig. 3: d = 10)")
    K: int = Field(10, ge=1, le=100, description="clusters, the elements (§4.2: K = 10, L385)")
    m: int = Field(ge=1, le=500, description="points per user (§4.2: m = 50, L389)")
    k: int = Field(ge=1, le=100, description="clusters each user holds (§4.2: 2, 5, 8, L391), drawn uniformly without "
                                            "replacement, the m points split as evenly as possible (OUR CHOICE: the "
                                            "seed does not say)")
    eval_users: int = Field(20_000, ge=1000, le=1_000_000, description="users of the independent sample the excess "
                                                                        "element risk is estimated on")
    participation: None = Field(None, description="every user is in the pool (none)")
    mode: Literal["sco"] = Field("sco", description="every trial draws its own n users (Thm 1's triangular array)")

    @model_validator(mode="after")
    def _clusters(self) -> ElementClustersData:
        if self.k > self.K:
            raise SpecProblem("data.k", f"k = {self.k} clusters per user > K = {self.K} clusters")
        if self.k > self.m:
            raise SpecProblem("data.k", f"k = {self.k} clusters per user > m = {self.m} points: a cluster would be "
                                        f"empty")
        return self


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


Builder = Callable[..., Problem]


def _sphere_linear(data: SphereLinearData, lspec: Any, loss: LinearModelLoss, rho: float, base: dict, prov: dict,
                   problem_seed: int, point_rng: np.random.Generator) -> Problem:
    base = base | {"n": data.n, "d": data.d}
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
    return erm_problem(loss, X, y, rho, consts, prov, population=pop, what="one synthetic data set")


def _sphere_logistic(data: SphereLogisticData, lspec: Any, loss: LinearModelLoss, rho: float, base: dict,
                     prov: dict, problem_seed: int, point_rng: np.random.Generator) -> Problem:
    base = base | {"n": data.n, "d": data.d}
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
        return erm_problem(loss, X, y, rho, consts, prov, population=cpop, what="one synthetic data set")
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


def _packaged(data: PackagedData, lspec: Any, loss: LinearModelLoss, rho: float, base: dict, prov: dict,
              problem_seed: int, point_rng: np.random.Generator) -> Problem:
    """Packaged real data: always ERM."""
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
    return erm_problem(loss, silo.X, silo.y, rho, consts, prov, population=None, what=f"{silo.source}, fixed")


def _element_clusters(data: ElementClustersData, lspec: Any, loss: LinearModelLoss, rho: float, base: dict,
                      prov: dict, problem_seed: int, point_rng: np.random.Generator) -> Problem:
    """§4.2's users: centres and theta* from the problem seed (the same at every sweep point), each trial's n users
    drawn by the engine, the excess element risk on ``eval_users`` independent users."""
    if lspec.mu != 0:
        raise SpecError("spec", "loss.mu", f"{lspec.mu}: §4.2's element loss has no ridge term; set mu = 0")
    prob = es.make_problem(data.d, data.K, data.m, data.k, problem_seed)
    if rho <= float(np.linalg.norm(prob.theta_star)):
        raise SpecError("spec", "loss.diameter", f"{lspec.diameter}: theta* (norm 1) must lie inside Theta, the ball of "
                                                 f"diameter D (A1, L287)")
    z_eval = es.sample_users(prob, np.random.default_rng([problem_seed, 2]), (data.eval_users,))
    consts = base | {"n": data.n, "d": data.d, "L": es.L0, "clusters": data.K, "held": data.k, "points": data.m}
    prov |= {"n": "spec (data.n): users", "d": "spec (data.d)", "clusters": "spec (data.K): the elements",
             "held": "spec (data.k): non-empty clusters per user", "points": "spec (data.m): points per user",
             "L": "L0 = sup ||grad l|| <= sup ||x|| = ||c + u|| <= 2 (algorithms/element_sgd.py)"}
    return Problem(loss, consts, prov, population=es.Users(prob),
                   population_risk=lambda w: es.element_risk(prob, z_eval, w),
                   note=(f"SCO: every trial draws its own {data.n} users of §4.2's model (K = {data.K} clusters, users "
                         f"in k = {data.k} of them, m = {data.m} points each, d = {data.d}); excess element risk "
                         f"L_el(w) - L_el(theta*) (Example 3: theta* minimises L_el) on {data.eval_users} independent "
                         f"users, paired, its Monte Carlo standard error entering the bound checks"))


def _exact(pop: SphereLinear) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    return lambda w: (pop.excess_risk(w), np.zeros(w.shape[0]))


def erm_problem(loss, X, y, rho, consts, prov, *, population, what: str) -> Problem:
    """The Problem of one fixed data set, X (N, n, d) and y (N, n): its excess empirical risk against the non-private
    optimum on the domain ball of radius ``rho`` (certified by its optimality gap), F_X(0) - F_X* and sup_W F_X - F_X*
    added to ``consts`` (with their sources); ``population`` draws nothing in mode erm (None for a packaged set).
    Plugins' data kinds build their problems with it (engine/kinds/learning/data.py's own ERM kinds do)."""
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


@dataclass(frozen=True)
class DataKind:
    """``model``: the spec model of a ``data`` section of this kind (a ``kind`` Literal tag, and the fields every
    learning run reads: ``N`` silos, ``n`` records per silo (None: all that fit), ``participation`` and ``mode``
    'sco' or 'erm'); ``losses``: the loss kinds it allows; ``packaged``: a fixed data set shipped inside a package
    (ERM only); ``exact_gradient``: its builder gives the population gradient exactly (``Problem.grad_F``), so
    the gradient oracle's error is measurable; ``build(data, loss_spec, loss, rho, base, prov, problem_seed,
    point_rng)`` -> the Problem of a sweep point; ``record_floats(data)``: the floats of one record, for the
    runner's memory budget."""

    name: str
    description: str
    model: type[BaseModel]
    losses: tuple[str, ...]
    build: Builder
    packaged: bool = False
    exact_gradient: bool = False
    # mode erm draws its data set from ``point_rng``, a stream the engine chooses: the point's own when the sweep
    # changes the data, else one for the whole sweep (engine/kinds/learning/runner.py: data_seed); the problem's
    # note then says which
    draws_erm_data: bool = False
    # floats one record holds (the runner's memory estimates): d, or m d for a user of m points
    record_floats: Callable[[Any], int] = lambda data: int(getattr(data, "d", 0) or 0)


DATA_KINDS: Registry[DataKind] = Registry.of("data kind", ((k.name, k) for k in (
    DataKind("sphere_linear", "synthetic linear regression, x uniform on a sphere, closed-form population risk",
             SphereLinearData, ("squared",), _sphere_linear, exact_gradient=True, draws_erm_data=True),
    DataKind("sphere_logistic", "synthetic logistic-model classification, population risk on a large independent "
                                "sample", SphereLogisticData, ("logistic", "hinge"), _sphere_logistic,
             draws_erm_data=True),
    DataKind("breast_cancer", "scikit-learn's bundled breast cancer data (569 records, d = 30), dealt to N silos; ERM",
             PackagedData, ("logistic", "hinge"), _packaged, packaged=True),
    DataKind("digits", "scikit-learn's bundled 8x8 digits (1797 records, d = 64, label: digit >= 5), dealt to N "
                       "silos; ERM", PackagedData, ("logistic", "hinge"), _packaged, packaged=True),
    DataKind("element_clusters", "seed 002 §4.2: users holding logistic-model data in k of K clusters (a record is "
                                 "a user); element risk on an independent sample", ElementClustersData, ("logistic",),
             _element_clusters, record_floats=lambda data: data.m * data.d),
)))


def _with_plugins() -> None:
    """The data kinds of users' plugins (catalog/plugins.py: a module's ``data_kinds()``), added once the catalog is
    loaded; a name already used is refused in one line. Called at import, before the learning spec's model (which
    lists every data kind) is built."""
    from catalog import PLUGINS, plugins

    for module, kind in plugins.data_kinds(PLUGINS, DataKind):
        if kind.name in DATA_KINDS:
            raise PluginError(f"plugin {module.__name__!r}: data kind {kind.name!r} already exists; rename it")
        DATA_KINDS.add(kind.name, kind)


_with_plugins()
