"""Learning specs: YAML -> frozen, strictly validated models (pydantic). Any problem becomes a SpecError
naming the file, the field path, the value and what is allowed (engine/specbase.py)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from algorithms import datasets
from algorithms.registry import UnknownName, choice_message
from catalog import ALGORITHMS
from engine.kinds.learning.data import (
    DATA_KINDS,
    ElementClustersData,
    PackagedData,
    SphereLinearData,
    SphereLogisticData,
)
from engine.specbase import (
    NeighbouringSpec,
    Problem,
    SpecError,
    Strict,
    SweepValues,
    Verdict,
    check_ids,
    distinct,
    format_error,
)
from verifiers.checks import CHECKS, CheckSpec, Facts, Misfit
from verifiers.theorems import THEOREMS
from verifiers.threat_models import THREAT_MODELS, Neighbouring

# sweepable numeric fields -> the theorem symbol they set
SWEEPABLE = {"data.n": "n", "data.d": "d", "data.N": "N", "threat_model.epsilon": "eps0",
             "threat_model.delta": "delta0", "algorithm.overrides.T": "T"}
WHOLE = ("data.n", "data.d", "data.N", "algorithm.overrides.T")      # sweep fields that take whole numbers
WHOLE_OVERRIDES = ("R", "K", "T", "k", "b")                           # counts: rounds, batch sizes, clients
MAX_OVERRIDE = 1e9          # any calibrated parameter set by hand: far above every sane value, far below overflow
class ThreatModel(Strict):
    kind: str = Field(description="; ".join(f"{k}: {t.description}" for k, t in THREAT_MODELS.items()))
    epsilon: float | None = Field(None, gt=0, description="the claimed epsilon: of every silo's transcript (isrl), of "
                                                          "the server's shuffled view (shuffle), of the curator's "
                                                          "releases (central), of every user's messages (local); "
                                                          "absent for none, and absent where the algorithm's privacy "
                                                          "theorem states epsilon at the run's parameters (cldp_sgd: "
                                                          "seed 001 Eq. 5 at each point's n, k, T, eps_ldp, delta)")
    delta: float | None = Field(None, gt=0, lt=1, description="delta_0, in (0, 1); absent for none")
    neighbouring: NeighbouringSpec | None = Field(
        None, description="what one unit of protection is (default: the threat model's, the one its accountants are "
                          "written for: a record replaced by another)")

    @field_validator("kind")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in THREAT_MODELS:
            raise ValueError(choice_message("threat model", v, THREAT_MODELS.names()))
        return v

    @model_validator(mode="after")
    def _claim(self) -> ThreatModel:
        model = THREAT_MODELS.get(self.kind)
        # a missing epsilon is refused by consistency(), which knows whether the algorithm's theorem states it
        if model.private and self.delta is None:
            raise Problem("threat_model.delta", f"required field is missing: the {self.kind} threat model claims "
                                                f"(epsilon, delta)")
        if not model.private and (self.epsilon is not None or self.delta is not None):
            raise Problem("threat_model.epsilon" if self.epsilon is not None else "threat_model.delta",
                          "threat model none makes no privacy claim: leave out epsilon and delta")
        if self.neighbouring is not None:
            rel = self.neighbouring.relation
            if rel not in model.relations:
                allowed = "; ".join(r.label for r in model.relations) or "none (no privacy claim)"
                raise Problem("threat_model.neighbouring", f"{rel.label}: the {self.kind} threat model's "
                                                           f"accountants handle {allowed}")
        return self

    @property
    def relation(self) -> Neighbouring | None:
        """The neighbouring relation the spec's privacy claim is about."""
        if self.neighbouring is not None:
            return self.neighbouring.relation
        return THREAT_MODELS.get(self.kind).neighbouring


PACKAGED = tuple(name for name, k in DATA_KINDS.items() if k.packaged)
if TYPE_CHECKING:       # the type checker sees the models registered when this was written; pydantic, the registry's
    DataModel = SphereLinearData | SphereLogisticData | PackagedData | ElementClustersData
else:
    DataModel = Union[tuple(dict.fromkeys(k.model for _, k in DATA_KINDS.items()))]
Data = Annotated[DataModel, Field(discriminator="kind")]
LOSSES_FOR = {name: k.losses for name, k in DATA_KINDS.items()}


class Loss(Strict):
    kind: Literal["squared", "logistic", "hinge"] = Field(
        description="squared: (1/2)(<w,x>-y)^2; logistic: ln(1+exp(-y<w,x>)); hinge: max(0, 1-y<w,x>) "
                    "(non-smooth: the algorithms run on its Moreau envelope); each plus (mu/2)||w||^2")
    diameter: float = Field(gt=0, le=1e6, description="D, the diameter of the domain ball W")
    mu: float = Field(0.0, ge=0, le=1e6, description="ridge weight: per-sample strong convexity")


class Algorithm(Strict):
    kind: str
    variant: str | None = None
    overrides: dict[str, float] = Field(default_factory=dict,
                                        description="replace the theorem's calibration of these parameters")

    @field_validator("kind")
    @classmethod
    def _known(cls, v: str) -> str:
        ALGORITHMS.get(v)
        return v


class Check(CheckSpec):
    """A learning spec's check: verifiers' CheckSpec with its kind and theorem looked up in the registries."""

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        CHECKS.get(v)
        return v

    @field_validator("theorem")
    @classmethod
    def _theorem(cls, v: str | None) -> str | None:
        if v is not None:
            THEOREMS.get(v)
        return v


class Sweep(Strict):
    field: str
    values: list[float] = SweepValues()

    _distinct = field_validator("values")(distinct)

    @field_validator("field")
    @classmethod
    def _field(cls, v: str) -> str:
        if v not in SWEEPABLE:
            raise ValueError(choice_message("sweep field", v, list(SWEEPABLE)))
        return v


class Quick(Strict):
    trials: int = Field(ge=2, description="trials per point in --quick mode")


class Spec(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    threat_model: ThreatModel
    data: Data
    loss: Loss
    algorithm: Algorithm
    trials: int = Field(ge=2, le=1_000_000)
    seed: int = Field(ge=0)
    sweep: Sweep | None = None
    checks: list[Check] = Field(min_length=1)
    expect: dict[str, Verdict] = Field(default_factory=dict)
    expect_quick: dict[str, Verdict] = Field(default_factory=dict)
    quick: Quick | None = None
    notes: str = ""


def consistency(spec: Spec) -> None:
    """Cross-field rules, each raising Problem(field path, message)."""
    entry = ALGORITHMS.get(spec.algorithm.kind)
    if entry.threat_model != spec.threat_model.kind:
        runs = [a for a in ALGORITHMS.names() if ALGORITHMS.get(a).threat_model == spec.threat_model.kind]
        raise Problem("threat_model.kind", f"{spec.threat_model.kind!r}: {spec.algorithm.kind} is analysed under "
                                           f"{entry.threat_model!r}; algorithms for {spec.threat_model.kind!r}: "
                                           f"{', '.join(runs)}")
    relation = spec.threat_model.relation
    default = THREAT_MODELS.get(spec.threat_model.kind).neighbouring
    handled = entry.relations or ((default,) if default is not None else ())
    if relation is not None and relation not in handled:
        stated = "" if spec.threat_model.neighbouring is not None else f" (the {spec.threat_model.kind} default)"
        others = [a for a in ALGORITHMS.names() if relation in ALGORITHMS.get(a).relations]
        raise Problem("threat_model.neighbouring", f"{relation.label}{stated}: {spec.algorithm.kind}'s accountant and "
                                                   f"audit handle {'; '.join(r.label for r in handled)}"
                                                   + (f"; algorithms for {relation.label}: {', '.join(others)}"
                                                      if others else ""))
    privacy = THEOREMS.get(entry.privacy_theorem)
    if THREAT_MODELS.get(spec.threat_model.kind).private:
        if privacy.stated_epsilon is None and spec.threat_model.epsilon is None:
            raise Problem("threat_model.epsilon", f"required field is missing: the {spec.threat_model.kind} threat "
                                                  f"model claims (epsilon, delta)")
        if privacy.stated_epsilon is not None and spec.threat_model.epsilon is not None:
            raise Problem("threat_model.epsilon", f"{spec.threat_model.epsilon:g}: {spec.algorithm.kind}'s privacy "
                                                  f"theorem {privacy.name} states epsilon at each point's parameters "
                                                  f"({privacy.citation}); that is the claim a run is judged against, so "
                                                  f"leave epsilon out (delta stays)")
    if entry.single_pool and spec.data.N != 1:
        raise Problem("data.N", f"{spec.data.N}: {spec.algorithm.kind} runs on one pool of n clients with one record "
                                f"each; set N = 1")
    if spec.algorithm.variant is not None and spec.algorithm.variant not in entry.variants:
        raise Problem("algorithm.variant", choice_message("variant", spec.algorithm.variant, list(entry.variants)))
    for k, v in spec.algorithm.overrides.items():
        if k not in entry.overrides:
            raise Problem(f"algorithm.overrides.{k}", choice_message(f"override of {spec.algorithm.kind}", k,
                                                                      list(entry.overrides)))
        if not (math.isfinite(v) and 0 < v <= MAX_OVERRIDE):
            raise Problem(f"algorithm.overrides.{k}", f"value = {v}: must be a number in (0, {MAX_OVERRIDE:g}]")
        if k in WHOLE_OVERRIDES and v != int(v):
            raise Problem(f"algorithm.overrides.{k}", f"value = {v}: must be a whole number >= 1")
    check_ids(spec.checks, spec.expect, spec.expect_quick)
    part = spec.data.participation
    if part is not None and not (part.low <= part.high <= spec.data.N):
        raise Problem("data.participation", f"low = {part.low}, high = {part.high}: need 1 <= low <= high <= N = {spec.data.N}")
    if spec.data.kind in PACKAGED:
        _fits_packaged(spec.data.kind, spec.data.N, spec.data.n, "data")
        if spec.sweep is not None and spec.sweep.field in ("data.n", "data.N"):
            for v in spec.sweep.values:
                N, n = (spec.data.N, int(v)) if spec.sweep.field == "data.n" else (int(v), spec.data.n)
                _fits_packaged(spec.data.kind, N, n, "sweep.values")
    allowed_losses = LOSSES_FOR[spec.data.kind]
    if spec.loss.kind not in allowed_losses:
        raise Problem("loss.kind", f"{spec.loss.kind!r} does not fit data kind {spec.data.kind}; allowed: "
                                   f"{', '.join(allowed_losses)}")
    if spec.loss.kind == "hinge" and entry.smoothing is None:
        raise Problem("loss.kind", f"{spec.algorithm.kind} is analysed for smooth losses only; hinge is not smooth "
                                   f"(algorithms with a Moreau-envelope path: "
                                   f"{', '.join(n for n in ALGORITHMS.names() if ALGORITHMS.get(n).smoothing)})")
    if spec.sweep is not None:
        if spec.sweep.field.startswith("data.") and spec.sweep.field[5:] not in type(spec.data).model_fields:
            raise Problem("sweep.field", f"data kind {spec.data.kind} has no field {spec.sweep.field[5:]!r}")
        if spec.sweep.field.startswith("algorithm.overrides."):
            swept = spec.sweep.field.rsplit(".", 1)[1]
            if swept not in entry.overrides:
                raise Problem("sweep.field", f"{spec.algorithm.kind} has no parameter {swept!r} to sweep; its "
                                             f"overrides: {', '.join(entry.overrides)}")
    strong = spec.loss.mu > 0
    facts = Facts(threat_model=spec.threat_model.kind, algorithm=spec.algorithm.kind, auditable=entry.auditable,
                  privacy_measures=THEOREMS.get(entry.privacy_theorem).measures,
                  sweep_symbol=SWEEPABLE[spec.sweep.field] if spec.sweep else None,
                  measurable=frozenset(measurable(spec)))
    for i, c in enumerate(spec.checks):
        at = f"checks.{i}"
        kind = CHECKS.get(c.kind)
        if kind.privacy and not THREAT_MODELS.get(spec.threat_model.kind).private:
            raise Problem(f"{at}.kind", f"{c.kind} checks a privacy claim; threat model {spec.threat_model.kind} "
                                        f"makes none")
        try:
            kind.fits(facts)
        except Misfit as e:
            raise Problem(f"{at}.{e.field}", str(e)) from None
        name = c.theorem or (entry.privacy_theorem if kind.privacy else None)
        if name is None:
            raise Problem(f"{at}.theorem", f"check {c.id!r} of kind {c.kind} needs a theorem")
        thm = THEOREMS.get(name)
        if thm.threat_model != spec.threat_model.kind:
            raise Problem(f"{at}.theorem", f"{name} is for threat model {thm.threat_model}, the spec's is "
                                           f"{spec.threat_model.kind}")
        if spec.algorithm.kind not in thm.algorithms:
            raise Problem(f"{at}.theorem", f"{name} is about {', '.join(thm.algorithms)}, not {spec.algorithm.kind}")
        if thm.needs_smooth and spec.loss.kind == "hinge":
            raise Problem(f"{at}.theorem", f"{name} needs a smooth loss; {spec.loss.kind} is not (a theorem that "
                                           f"covers the Moreau-envelope path applies)")
        if thm.loss_class == "strongly_convex" and not strong:
            raise Problem(f"{at}.theorem", f"{name} needs a strongly convex loss (loss.mu > 0; it is {spec.loss.mu})")
        try:
            kind.rules(c, thm, facts)
        except Misfit as e:
            raise Problem(f"{at}.{e.field}", str(e)) from None
    if spec.sweep is not None:
        for v in spec.sweep.values:
            try:
                _check_sweep_value(spec.sweep.field, v)
            except ValueError as e:
                raise Problem("sweep.values", str(e)) from None


def _fits_packaged(kind: str, N: int, n: int | None, at: str) -> None:
    total = datasets.records_available(kind)
    if N > total or (n is not None and n * N > total):
        where = at if at != "data" else ("data.N" if N > total else "data.n")
        raise Problem(where, f"N = {N} silos of n = {n} records need {N * (n or 1)} records; {kind} has {total}")


def measurable(spec: Spec) -> set[str]:
    """The quantities the engine can measure for this data set, loss and algorithm."""
    out: set[str] = {"model"}                # the released model, a vector per trial
    out |= {"ldp_variance", "ldp_bias"} if spec.threat_model.kind == "shuffle" else set()
    d, one_pass = spec.data, _one_pass(spec)
    if d.kind not in PACKAGED and d.mode == "sco":
        out.add("excess_risk")
    if d.mode == "erm" or spec.loss.kind == "squared":
        out.add("empirical_excess_risk")
    if DATA_KINDS.get(d.kind).exact_gradient and d.mode == "sco" and one_pass:
        out |= {"grad_variance", "grad_sampling_variance"}
    return out


def _one_pass(spec: Spec) -> bool:
    entry = ALGORITHMS.get(spec.algorithm.kind)
    return entry.one_pass(spec.algorithm.variant or entry.variants[0])


def _check_sweep_value(field: str, v: float) -> None:
    if field in WHOLE and (v != int(v) or v < 1):
        raise ValueError(f"sweep value {v} for {field} must be a whole number >= 1")
    if field == "threat_model.epsilon" and v <= 0:
        raise ValueError(f"sweep value {v} for {field} must be > 0")
    if field == "threat_model.delta" and not 0 < v < 1:
        raise ValueError(f"sweep value {v} for {field} must be in (0, 1)")


DATA_MODELS: dict[str, type[BaseModel]] = {name: k.model for name, k in DATA_KINDS.items()}



def parse(raw: Any, file: str) -> Spec:
    if not isinstance(raw, dict):
        raise SpecError(file, "", "a spec must be a YAML mapping")
    if raw.get("kind") == "learning":           # the default kind may be named; the model has no kind field
        raw = {k: v for k, v in raw.items() if k != "kind"}
    try:
        spec = validated(raw)
        if spec.sweep is not None:                    # every sweep point must be a valid spec on its own
            for v in spec.sweep.values:
                with_value(spec, spec.sweep.field, v)
        return spec
    except Problem as e:
        raise SpecError(file, e.path, str(e)) from None
    except ValidationError as e:
        errors = e.errors()
        first = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])   # a misspelt key explains the rest
        if isinstance(first.get("ctx", {}).get("error"), Problem):
            prob = first["ctx"]["error"]
            raise SpecError(file, prob.path, str(prob)) from None
        path, msg = format_error(first, Spec, {"data": DATA_MODELS})
        raise SpecError(file, path, msg) from None
    except UnknownName as e:
        raise SpecError(file, "", str(e)) from None


def with_value(spec: Spec, field: str, value: float) -> Spec:
    """A copy of the spec with one numeric field set (sweeps never mutate). A value that breaks a rule of the spec
    (a cross-field one: the sweep's own checks see each value alone) is a Problem at sweep.values."""
    raw = spec.model_dump()
    *path, last = field.split(".")
    cur = raw
    for part in path:
        cur = cur[part]
    cur[last] = (int if field in WHOLE else float)(value)
    try:
        return validated(raw)
    except Problem as e:
        raise Problem("sweep.values", f"at {field} = {value:g}: {e.path}: {e}") from None
    except ValidationError as e:
        err = e.errors()[0]
        raise Problem("sweep.values", f"at {field} = {value:g}: {'.'.join(str(x) for x in err['loc'])}: "
                                      f"{err['msg']}") from None


def validated(raw: dict) -> Spec:
    """The field rules (pydantic) and then the cross-field rules: the one way a Spec is built."""
    spec = Spec.model_validate(raw)
    consistency(spec)
    return spec


def json_schema() -> dict:
    return Spec.model_json_schema()
