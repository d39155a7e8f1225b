"""Mechanism specs: a mechanism of the registry ``catalog.MECHANISMS`` (today seed 000's summation protocols P_1D
and P_VEC) with its parameters, run many times at each sweep point, with the checks its entry allows.
``kind: mechanism`` at the top of a YAML spec selects this model (``kind: shuffle_protocol`` before results
schema 2). The entry decides what ``params`` holds (its parameter model), what may be swept, which cross-field
rules every point must meet and which check kinds apply; errors are one line naming the file and the field, as
for learning specs."""
from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import (
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from algorithms.registry import choice_message
from catalog import MECHANISMS, MechanismEntry
from engine.specbase import (
    NeighbouringSpec,
    Problem,
    Strict,
    SweepValues,
    Verdict,
    check_ids,
    distinct,
    format_error,
    parse_model,
)
from verifiers.threat_models import THREAT_MODELS, Neighbouring


def _params_doc() -> str:
    return "the mechanism's parameters; " + "; ".join(
        f"{name}: {', '.join(e.params.model_fields)}" for name, e in MECHANISMS.items())


class MechanismSweep(Strict):
    field: str = Field(description="a parameter the mechanism lets a spec sweep; " + "; ".join(
        f"{name}: {', '.join(e.sweepable)}" for name, e in MECHANISMS.items()))
    values: list[float] = SweepValues()

    _distinct = field_validator("values")(distinct)


class MechanismCheck(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: str = Field(description="a check kind the mechanism allows; " + "; ".join(
        f"{name}: {', '.join(e.checks.names())}" for name, e in MECHANISMS.items()))
    confidence: float = Field(0.999, gt=0.5, lt=1, description="statistical checks: the test's level")


class MechanismQuick(Strict):
    trials: int = Field(ge=20, description="mechanism runs per sweep point in --quick mode (default: max(100, "
                                           "trials // 10)); at most the spec's trials")


class MechanismSpec(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Literal["mechanism"]
    description: str
    mechanism: str = Field(description="; ".join(f"{k}: {e.citation}" for k, e in MECHANISMS.items()))
    params: dict[str, int | float | str] = Field(description=_params_doc(), json_schema_extra={
        "x-params-by-mechanism": {name: e.params.model_json_schema() for name, e in MECHANISMS.items()}})
    trials: int = Field(ge=100, le=10**7, description="mechanism runs per sweep point")
    seed: int = Field(ge=0)
    neighbouring: NeighbouringSpec | None = Field(None, description="the neighbouring relation the privacy checks "
                                                  "decide (default: the mechanism's first); " + "; ".join(
        f"{name}: {', '.join(r.label for r in e.relations)}" for name, e in MECHANISMS.items() if e.relations))
    sweep: MechanismSweep | None = None
    checks: list[MechanismCheck] = Field(min_length=1)
    expect: dict[str, Verdict] = Field(default_factory=dict)
    expect_quick: dict[str, Verdict] = Field(default_factory=dict)
    quick: MechanismQuick | None = None
    notes: str = ""

    def quick_trials(self) -> int:
        """Runs per point in --quick mode: quick.trials, else max(100, trials // 10) (never more than trials)."""
        return self.quick.trials if self.quick is not None else min(self.trials, max(100, self.trials // 10))

    @field_validator("mechanism")
    @classmethod
    def _mechanism(cls, v: str) -> str:
        if v not in MECHANISMS:
            raise ValueError(choice_message("mechanism", v, MECHANISMS.names()))
        return v

    @field_validator("params", mode="wrap")
    @classmethod
    def _params(cls, v: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> dict:
        """The entry's parameter model validates the parameters; they are stored as it dumps them (defaults filled
        in, its field order, whole numbers as int)."""
        name = info.data.get("mechanism")
        if not isinstance(name, str) or name not in MECHANISMS:
            return handler(v)
        model = MECHANISMS.get(name).params
        try:
            return model.model_validate(v).model_dump()
        except ValidationError as e:
            path, msg = format_error(e.errors()[0], model)
            raise Problem(f"params.{path}" if path else "params", msg) from None

    @model_validator(mode="after")
    def _rules(self) -> MechanismSpec:
        entry = self.entry
        for i, c in enumerate(self.checks):
            if c.kind not in entry.checks:
                raise Problem(f"checks.{i}.kind", choice_message(f"{self.mechanism} check kind", c.kind,
                                                                 entry.checks.names()))
        check_ids(self.checks, self.expect, self.expect_quick)
        if self.quick is not None and self.quick.trials > self.trials:
            raise Problem("quick.trials", f"{self.quick.trials}: at most the spec's trials ({self.trials})")
        if self.neighbouring is not None and self.neighbouring.relation not in entry.relations:
            rel = self.neighbouring.relation
            allowed = (", ".join(r.label for r in entry.relations) if entry.relations else
                       f"only its threat model's default ({self.relation.label if self.relation else 'none'}), "
                       f"which needs no neighbouring key")
            raise Problem("neighbouring", f"{rel.label}: {self.mechanism}'s privacy checks handle {allowed}")
        field = self.sweep.field if self.sweep else None
        if field is not None and field not in entry.sweepable:
            hint = difflib.get_close_matches(field, entry.sweepable, n=1)
            raise Problem("sweep.field", f"{self.mechanism} cannot sweep {field!r}"
                          + (f" (did you mean {hint[0]!r}?)" if hint else "") + f"; sweepable: {', '.join(entry.sweepable)}")
        where = "sweep.values" if field else "params"
        for v in self.values():
            if field in entry.whole and v is not None and v != int(v):
                raise Problem(where, f"{v} for {field} must be a whole number")
            if field in entry.whole and v is not None:
                v = int(v)                                   # a whole number read from a list of floats
            try:
                point = entry.params.model_validate(self.params | ({field: v} if field else {})).model_dump()
            except ValidationError as e:
                err = e.errors()[0]
                raise Problem(where, f"{v}: {err['loc'][0]} {err['msg'].lower()}") from None
            try:
                entry.rules(point)
            except ValueError as e:
                blame = getattr(e, "field", None)
                raise Problem(f"params.{blame}" if blame and blame != field else where, str(e)) from None
        return self

    @property
    def entry(self) -> MechanismEntry:
        return MECHANISMS.get(self.mechanism)

    @property
    def relation(self) -> Neighbouring | None:
        """The neighbouring relation the privacy checks decide: the spec's, else the entry's first, else its threat
        model's default."""
        if self.neighbouring is not None:
            return self.neighbouring.relation
        return self.entry.relations[0] if self.entry.relations else THREAT_MODELS.get(self.entry.threat_model).neighbouring

    def values(self) -> list[float | None]:
        return list(self.sweep.values) if self.sweep else [None]

    def point(self, value: float | None) -> dict:
        """The parameters of one sweep point (the swept whole-number parameters as int)."""
        p = dict(self.params)
        if self.sweep is not None and value is not None:
            p[self.sweep.field] = int(value) if self.sweep.field in self.entry.whole else value
        return p


def parse_mechanism(raw: dict, file: str) -> MechanismSpec:
    return parse_model(MechanismSpec, raw, file)
