"""Privacy-curve specs: an accountant's epsilon as a function of one parameter (rounds T, population n,
sample k, eps0), with no learning run. ``kind: privacy_curve`` at the top of a YAML spec selects this model;
errors are one line naming the file and the field, as for learning specs (engine/spec.py)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from engine.spec import Problem, SpecError, Strict, _choice_message, _format
from verifiers.curve_checks import CURVE_CHECKS

CURVE_MECHANISMS = ("subsampled-shuffle",)
CURVE_FIELDS = {"subsampled-shuffle": ("T", "n", "k", "eps0")}


class CurveParams(Strict):
    k: int = Field(ge=1, le=10**8, description="clients sampled per round")
    n: int = Field(ge=1, le=10**9, description="clients")
    eps0: float = Field(gt=0, le=20, description="the local randomizer's LDP epsilon")
    T: int = Field(1, ge=1, le=10**7, description="rounds")
    delta: float = Field(gt=0, lt=1, description="delta of the (epsilon, delta) guarantee")


class CurveSweep(Strict):
    field: Literal["T", "n", "k", "eps0"]
    values: list[float] = Field(min_length=2)


class CurveCheck(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: str

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        CURVE_CHECKS.get(v)
        return v


class PaperValue(Strict):
    epsilon: float = Field(gt=0)
    what: str = Field(description="what the paper says it is (shown next to our numbers, no verdict)")
    at: float | None = Field(None, description="the swept value the paper reports at, when it says")


class CurveSpec(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Literal["privacy_curve"]
    description: str
    mechanism: Literal["subsampled-shuffle"]
    params: CurveParams
    sweep: CurveSweep
    checks: list[CurveCheck] = Field(min_length=1)
    paper: list[PaperValue] = Field(default_factory=list)
    expect: dict[str, Literal["pass", "fail", "inconclusive", "inapplicable"]] = Field(default_factory=dict)
    expect_quick: dict[str, Literal["pass", "fail", "inconclusive", "inapplicable"]] = Field(default_factory=dict)
    notes: str = ""

    @model_validator(mode="after")
    def _rules(self) -> CurveSpec:
        ids = [c.id for c in self.checks]
        for key in self.expect:
            if key not in ids:
                raise Problem(f"expect.{key}", _choice_message("expect key (a check id)", key, ids))
        if self.paper and self.sweep.field != "T" and any(pv.at is None for pv in self.paper):
            raise Problem("paper", "a paper value without 'at' needs a sweep over T (ours is solved for T)")
        for v in self.sweep.values:
            point = self.params.model_dump() | {self.sweep.field: v}
            if self.sweep.field in ("T", "n", "k") and v != int(v):
                raise Problem("sweep.values", f"{v} for {self.sweep.field} must be a whole number")
            if not 1 <= point["k"] <= point["n"]:
                raise Problem("sweep.values", f"at {self.sweep.field} = {v}: need 1 <= k <= n "
                                              f"(k = {point['k']}, n = {point['n']})")
            if point["eps0"] <= 0:
                raise Problem("sweep.values", f"eps0 = {v} must be > 0")
        return self

    def point(self, value: float) -> dict:
        p = self.params.model_dump() | {self.sweep.field: value}
        for f in ("T", "n", "k"):
            p[f] = int(p[f])
        return p


def parse_curve(raw: dict, file: str) -> CurveSpec:
    try:
        return CurveSpec.model_validate(raw)
    except ValidationError as e:
        errors = e.errors()
        first = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])
        if isinstance(first.get("ctx", {}).get("error"), Problem):
            prob = first["ctx"]["error"]
            raise SpecError(file, prob.path, str(prob)) from None
        path, msg = _format(first, raw, CurveSpec)
        raise SpecError(file, path, msg) from None
