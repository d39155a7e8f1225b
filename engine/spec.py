"""Specs: YAML -> frozen, strictly validated models (pydantic). Any problem becomes a SpecError
naming the file, the field path, the value and what is allowed."""
from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from algorithms import datasets
from algorithms.catalog import ALGORITHMS
from algorithms.registry import UnknownName
from verifiers.catalog import THEOREMS
from verifiers.checks import CHECKS

# sweepable numeric fields -> the theorem symbol they set
SWEEPABLE = {"data.n": "n", "data.d": "d", "data.N": "N", "threat_model.epsilon": "eps0",
             "threat_model.delta": "delta0", "algorithm.overrides.T": "T"}
WHOLE = ("data.n", "data.d", "data.N", "algorithm.overrides.T")      # sweep fields that take whole numbers
WHOLE_OVERRIDES = ("R", "K", "T", "k", "b")                           # counts: rounds, batch sizes, clients
THREAT_MODELS = {"isrl": "inter-silo record-level DP (seed 004, Def. 2): each silo's transcript is (eps, delta)-DP "
                         "in its own records",
                 "shuffle": "shuffle model (seeds 000, 001): clients randomize locally, a trusted shuffler hands "
                            "the server the multiset of messages, whose view is (eps, delta)-DP",
                 "central": "central model: a trusted curator sees the records and releases an (eps, delta)-DP "
                            "output (here: the noisy gradients of every round)",
                 "local": "local model: every user randomizes its own message before it leaves the device; each "
                          "message the server receives is (eps, delta)-DP in that user's record"}


class SpecError(Exception):
    """One line: file, field path, value, what is allowed."""

    def __init__(self, file: str, path: str, message: str):
        super().__init__(f"{file}: {path}: {message}" if path else f"{file}: {message}")
        self.parts = (file, path, message)

    def __reduce__(self):            # survives the trip back from a worker process
        return (SpecError, self.parts)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False, allow_inf_nan=False)


class ThreatModel(Strict):
    kind: Literal["isrl", "shuffle", "central", "local"] = Field(
        description="; ".join(f"{k}: {v}" for k, v in THREAT_MODELS.items()))
    epsilon: float = Field(gt=0, description="the claimed epsilon: of every silo's transcript (isrl), of the "
                                             "server's shuffled view (shuffle), of the curator's releases (central), of "
                                             "every user's messages (local)")
    delta: float = Field(gt=0, lt=1, description="delta_0, in (0, 1)")


class Participation(Strict):
    low: int = Field(ge=1, description="fewest silos available in a round")
    high: int = Field(ge=1, description="most silos available in a round (<= N)")


MODE: Any = Field("sco", description="sco: every trial draws a fresh data set (population risk); "
                                "erm: one data set per sweep point, shared by all trials (empirical risk)")


class SphereLinearData(Strict):
    kind: Literal["sphere_linear"] = Field(description="synthetic linear regression, x uniform on a sphere")
    N: int = Field(ge=1, le=10_000, description="silos")
    n: int = Field(ge=1, le=10_000_000, description="records per silo")
    d: int = Field(ge=1, le=100_000, description="dimension")
    radius: float = Field(1.0, gt=0, description="||x|| of every record")
    label_noise: float = Field(0.1, ge=0, description="y = <w*_i, x> + Uniform[-s, s]")
    w_norm: float = Field(0.5, ge=0, description="norm of the common centre of the silo optima")
    heterogeneity: float = Field(0.0, ge=0, le=1, description="0: i.i.d. silos; h: w*_i = c + h ||c|| e_i")
    participation: Participation | None = Field(None, description="M_r uniform on [low, high]; default: all N")
    mode: Literal["sco", "erm"] = MODE


class SphereLogisticData(Strict):
    kind: Literal["sphere_logistic"] = Field(
        description="synthetic binary classification, x uniform on a sphere, P(y=1|x) = 1/(1+exp(-<w*_i,x>))")
    N: int = Field(ge=1, le=10_000, description="silos")
    n: int = Field(ge=1, le=10_000_000, description="records per silo")
    d: int = Field(ge=1, le=100_000, description="dimension")
    radius: float = Field(1.0, gt=0, description="||x|| of every record")
    w_norm: float = Field(2.0, ge=0, description="norm of the common centre of the silo models (signal strength)")
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
    radius: float = Field(1.0, gt=0, description="records are scaled so that max ||x|| = radius")
    split: Literal["random", "label_skew"] = Field("random", description="how records are dealt to silos")
    participation: Participation | None = Field(None, description="M_r uniform on [low, high]; default: all N")
    mode: Literal["erm"] = Field("erm", description="a fixed data set: ERM only")


PACKAGED = ("breast_cancer", "digits")
Data = Annotated[SphereLinearData | SphereLogisticData | PackagedData, Field(discriminator="kind")]
DATA_KINDS = {"sphere_linear": "synthetic linear regression, x uniform on a sphere, closed-form population risk",
              "sphere_logistic": "synthetic logistic-model classification, population risk on a large independent sample",
              "breast_cancer": "scikit-learn's bundled breast cancer data (569 records, d = 30), dealt to N silos; ERM",
              "digits": "scikit-learn's bundled 8x8 digits (1797 records, d = 64, label: digit >= 5), dealt to N "
                        "silos; ERM"}
LOSSES_FOR = {"sphere_linear": ("squared",), "sphere_logistic": ("logistic", "hinge"),
              "breast_cancer": ("logistic", "hinge"), "digits": ("logistic", "hinge")}


class Loss(Strict):
    kind: Literal["squared", "logistic", "hinge"] = Field(
        description="squared: (1/2)(<w,x>-y)^2; logistic: ln(1+exp(-y<w,x>)); hinge: max(0, 1-y<w,x>) "
                    "(non-smooth: the algorithms run on its Moreau envelope); each plus (mu/2)||w||^2")
    diameter: float = Field(gt=0, description="D, the diameter of the domain ball W")
    mu: float = Field(0.0, ge=0, description="ridge weight: per-sample strong convexity")


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


class Check(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: str
    theorem: str | None = None
    variable: str | None = None
    term: str | None = None
    tol: float = Field(0.1, ge=0, le=1)
    confidence: float | None = Field(None, gt=0.5, lt=1, description="default: 0.999 for noise_calibration, else 0.95")
    min_rounds: int = Field(20, ge=1)
    audit_trials: int = Field(100_000, ge=1000, le=10_000_000,
                              description="privacy_audit: transcripts simulated on each side of the neighbouring pair")
    saturation: Literal["bound", "measured"] = Field(
        "bound", description="rate: a point is saturated (no rate can show) where the theorem's bound with its "
                             "constants set to 1 reaches min(sup_W F - F*, F(w0) - F*) (bound), or where the "
                             "measured mean reaches half of it (measured: for O() theorems whose constant-1 bound "
                             "is far above the measured risk)")

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


PRIVACY_KINDS = ("noise_calibration", "privacy_accounting", "privacy_audit", "ldp_exact")


class Sweep(Strict):
    field: str
    values: list[float] = Field(min_length=2)

    @field_validator("field")
    @classmethod
    def _field(cls, v: str) -> str:
        if v not in SWEEPABLE:
            raise ValueError(_choice_message("sweep field", v, list(SWEEPABLE)))
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
    expect: dict[str, Literal["pass", "fail", "inconclusive", "inapplicable"]] = Field(default_factory=dict)
    expect_quick: dict[str, Literal["pass", "fail", "inconclusive", "inapplicable"]] = Field(default_factory=dict)
    quick: Quick | None = None
    notes: str = ""


class Problem(ValueError):
    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path


def consistency(spec: Spec) -> None:
    """Cross-field rules, each raising Problem(field path, message)."""
    entry = ALGORITHMS.get(spec.algorithm.kind)
    if entry.threat_model != spec.threat_model.kind:
        runs = [a for a in ALGORITHMS.names() if ALGORITHMS.get(a).threat_model == spec.threat_model.kind]
        raise Problem("threat_model.kind", f"{spec.threat_model.kind!r}: {spec.algorithm.kind} is analysed under "
                                           f"{entry.threat_model!r}; algorithms for {spec.threat_model.kind!r}: "
                                           f"{', '.join(runs)}")
    if entry.single_pool and spec.data.N != 1:
        raise Problem("data.N", f"{spec.data.N}: {spec.algorithm.kind} runs on one pool of n clients with one record "
                                f"each; set N = 1")
    if spec.algorithm.variant is not None and spec.algorithm.variant not in entry.variants:
        raise Problem("algorithm.variant", _choice_message("variant", spec.algorithm.variant, list(entry.variants)))
    for k, v in spec.algorithm.overrides.items():
        if k not in entry.overrides:
            raise Problem(f"algorithm.overrides.{k}", _choice_message(f"override of {spec.algorithm.kind}", k,
                                                                      list(entry.overrides)))
        if not (math.isfinite(v) and v > 0):
            raise Problem(f"algorithm.overrides.{k}", f"value = {v}: must be a finite number > 0")
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
    available = measurable(spec)
    for i, c in enumerate(spec.checks):
        at = f"checks.{i}"
        name = c.theorem or (entry.privacy_theorem if c.kind in PRIVACY_KINDS else None)
        if c.kind == "privacy_audit" and not entry.auditable:
            raise Problem(f"{at}.kind", f"no privacy audit is implemented for {spec.algorithm.kind}'s mechanism yet; "
                                        f"its privacy is checked by privacy_accounting")
        models = {"noise_calibration": ("isrl", "central", "local"), "ldp_exact": ("shuffle",),
                  "unbiased": ("shuffle",)}.get(c.kind)
        if c.kind == "noise_calibration" and THEOREMS.get(entry.privacy_theorem).measures == "sigma":
            models = None           # Gaussian noise calibrated by a sigma formula, in any threat model (seed 004 Thm 5.1)
        if models is not None and spec.threat_model.kind not in models:
            raise Problem(f"{at}.kind", f"{c.kind} checks a mechanism of the {' or '.join(models)} threat model (the "
                                        f"Gaussian noise of a silo, curator or user, or a client's local randomizer); this "
                                        f"spec's is {spec.threat_model.kind}")
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
        if c.kind in ("bound", "rate") and not thm.terms:
            raise Problem(f"{at}.theorem", f"{name} states no bound to compare with: {c.kind} needs a theorem with "
                                           f"an expression (`python -m engine list` shows them)")
        if c.kind == "unbiased" and thm.measures != "ldp_bias":
            raise Problem(f"{at}.theorem", f"{name} is about {thm.measures}; unbiased tests the randomizer's messages "
                                           f"(a theorem measuring ldp_bias, e.g. shuffle.alg1.randomizer)")
        if c.kind not in PRIVACY_KINDS and thm.measures not in available:
            raise Problem(f"{at}.theorem", f"{name} is about {thm.measures}, which cannot be measured here: "
                                           f"{_unmeasurable(spec, thm.measures)}")
        if thm.loss_class == "strongly_convex" and not strong:
            raise Problem(f"{at}.theorem", f"{name} needs a strongly convex loss (loss.mu > 0; it is {spec.loss.mu})")
        if c.kind == "rate":
            if spec.sweep is None:
                raise Problem(f"{at}.kind", f"check {c.id!r}: a rate check needs a sweep")
            sym = SWEEPABLE[spec.sweep.field]
            if c.variable is not None and c.variable != sym:
                raise Problem(f"{at}.variable", f"{c.variable} is not what the sweep varies ({sym})")
            if c.term is not None and c.term not in thm.terms:
                raise Problem(f"{at}.term", _choice_message(f"term of {name}", c.term, list(thm.terms)))
    if spec.sweep is not None:
        for v in spec.sweep.values:
            try:
                _check_sweep_value(spec.sweep.field, v)
            except ValueError as e:
                raise Problem("sweep.values", str(e)) from None


def check_ids(checks, expect: dict, expect_quick: dict) -> list[str]:
    """The checks' ids, distinct, and every expect / expect_quick key one of them (raises Problem)."""
    ids = [c.id for c in checks]
    if len(set(ids)) != len(ids):
        raise Problem("checks", f"duplicate check ids in {ids}")
    for field_name, table in (("expect", expect), ("expect_quick", expect_quick)):
        for key in table:
            if key not in ids:
                raise Problem(f"{field_name}.{key}", _choice_message(f"{field_name} key (a check id)", key, ids))
    return ids


def _fits_packaged(kind: str, N: int, n: int | None, at: str) -> None:
    total = datasets.records_available(kind)
    if N > total or (n is not None and n * N > total):
        where = at if at != "data" else ("data.N" if N > total else "data.n")
        raise Problem(where, f"N = {N} silos of n = {n} records need {N * (n or 1)} records; {kind} has {total}")


def measurable(spec: Spec) -> set[str]:
    """The quantities the engine can measure for this data set, loss and algorithm."""
    out: set[str] = {"ldp_variance", "ldp_bias"} if spec.threat_model.kind == "shuffle" else set()
    d, one_pass = spec.data, _one_pass(spec)
    if d.kind not in PACKAGED and d.mode == "sco":
        out.add("excess_risk")
    if d.mode == "erm" or spec.loss.kind == "squared":
        out.add("empirical_excess_risk")
    if d.kind == "sphere_linear" and d.mode == "sco" and one_pass:
        out.add("grad_variance")
    return out


def _unmeasurable(spec: Spec, what: str) -> str:
    return {"excess_risk": "population risk needs a synthetic data set in mode sco",
            "empirical_excess_risk": "the per-trial optimum has a closed form only for the squared loss; "
                                     "use data.mode: erm (one data set per point)",
            "grad_variance": "needs the exact population gradient (sphere_linear, mode sco) and fresh one-pass batches",
            }.get(what, what)


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


def _choice_message(what: str, value: Any, allowed: list[str]) -> str:
    hint = difflib.get_close_matches(str(value), allowed, n=1)
    did = f" (did you mean {hint[0]!r}?)" if hint else ""
    return f"unknown {what} {value!r}{did}; allowed: {', '.join(allowed)}"


DATA_MODELS: dict[str, type[BaseModel]] = {"sphere_linear": SphereLinearData, "sphere_logistic": SphereLogisticData,
                                           "breast_cancer": PackagedData, "digits": PackagedData}


def _format(err: Any, raw: Any, model: type[BaseModel]) -> tuple[str, str]:
    loc = [str(x) for x in err["loc"]]
    tagged = loc
    if len(loc) > 1 and loc[0] == "data" and loc[1] in DATA_MODELS:     # pydantic's union tag: not a field
        loc = loc[:1] + loc[2:]
    path = ".".join(loc)
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "union_tag_not_found":
        return "data.kind", f"required field is missing; allowed: {', '.join(DATA_MODELS)}"
    if err["type"] == "union_tag_invalid":
        return "data.kind", _choice_message("data kind", err.get("input", {}).get("kind") if isinstance(
            err.get("input"), dict) else err.get("input"), list(DATA_MODELS))
    if err["type"] == "extra_forbidden":
        allowed = (sorted(DATA_MODELS[tagged[1]].model_fields) if tagged[:1] == ["data"] and len(tagged) == 3
                   else _fields_at(model, loc[:-1]))
        hint = difflib.get_close_matches(loc[-1], allowed, n=1)
        did = f" (did you mean {hint[0]!r}?)" if hint else ""
        return path, f"unknown key{did}; allowed keys: {', '.join(allowed)}"
    if err["type"] == "missing":
        return path, "required field is missing"
    value = err.get("input")
    shown = "" if isinstance(value, (dict, list)) else f" = {value!r}"
    return path, f"value{shown}: {msg}"


def _fields_at(model: type[BaseModel], loc: list[str]) -> list[str]:
    cur: Any = model
    for part in loc:
        field = getattr(cur, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        args = [a for a in getattr(ann, "__args__", ()) if isinstance(a, type) and issubclass(a, BaseModel)]
        cur = args[0] if args else ann
    return sorted(getattr(cur, "model_fields", {}))


def parse(raw: Any, file: str) -> Spec:
    if not isinstance(raw, dict):
        raise SpecError(file, "", "a spec must be a YAML mapping")
    try:
        return validated(raw)
    except Problem as e:
        raise SpecError(file, e.path, str(e)) from None
    except ValidationError as e:
        errors = e.errors()
        first = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])   # a misspelt key explains the rest
        path, msg = _format(first, raw, Spec)
        raise SpecError(file, path, msg) from None
    except UnknownName as e:
        raise SpecError(file, "", str(e)) from None


def parse_model(model: type[BaseModel], raw: dict, file: str):
    """Validate ``raw`` as ``model`` (the spec kinds without a learning run); errors as one-line SpecErrors."""
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        errors = e.errors()
        first = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])
        if isinstance(first.get("ctx", {}).get("error"), Problem):
            prob = first["ctx"]["error"]
            raise SpecError(file, prob.path, str(prob)) from None
        path, msg = _format(first, raw, model)
        raise SpecError(file, path, msg) from None


def load_any(path: str | Path):
    """A learning spec (Spec), or with ``kind: privacy_curve`` a privacy-curve spec (engine/curve_spec.py), with
    ``kind: shuffle_protocol`` a shuffle-protocol spec (engine/protocol_spec.py), with ``kind: comparison`` a
    threat-model comparison (engine/comparison_spec.py)."""
    return load(path, curves=True)


def load(path: str | Path, curves: bool = False):
    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text())
    except FileNotFoundError:
        raise SpecError(str(p), "", "no such file") from None
    except OSError as e:
        raise SpecError(str(p), "", f"cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise SpecError(str(p), "", "is not UTF-8 text") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "?"
        raise SpecError(str(p), "", f"not valid YAML ({where}): {getattr(e, 'problem', e)}") from None
    if curves and isinstance(raw, dict) and raw.get("kind") == "privacy_curve":
        from engine.curve_spec import parse_curve

        return parse_curve(raw, str(p))
    if curves and isinstance(raw, dict) and raw.get("kind") == "shuffle_protocol":
        from engine.protocol_spec import parse_protocol

        return parse_protocol(raw, str(p))
    if curves and isinstance(raw, dict) and raw.get("kind") == "comparison":
        from engine.comparison_spec import parse_comparison

        return parse_comparison(raw, str(p))
    return parse(raw, str(p))


def with_value(spec: Spec, field: str, value: float) -> Spec:
    """A copy of the spec with one numeric field set (sweeps never mutate)."""
    raw = spec.model_dump()
    *path, last = field.split(".")
    cur = raw
    for part in path:
        cur = cur[part]
    cur[last] = (int if field in WHOLE else float)(value)
    return validated(raw)


def validated(raw: dict) -> Spec:
    """The field rules (pydantic) and then the cross-field rules: the one way a Spec is built."""
    spec = Spec.model_validate(raw)
    consistency(spec)
    return spec


def json_schema() -> dict:
    return Spec.model_json_schema()
