"""Shuffle-protocol specs: one of seed 000's summation protocols (P_1D, P_VEC) with the paper's parameters, run many
times on fixed inputs, its privacy computed from the parameters as run. ``kind: shuffle_protocol`` at the top of a
YAML spec selects this model; errors are one line naming the file and the field, as for learning specs."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from engine.spec import Problem, SpecError, Strict, _choice_message, _format
from verifiers.protocol_checks import PROTOCOL_CHECKS

PROTOCOLS = {"p1d": "seed 000, Algorithm 1 (P_1D, L105-128): shuffle sum of scalars in [0, Delta], Lemma 3.1",
             "pvec": "seed 000, Algorithm 2 (P_VEC, L142-149): shuffle sum of vectors of norm <= Delta_2, Thm 3.2"}


class ProtocolParams(Strict):
    n: int = Field(ge=1, le=10**6, description="users")
    eps: float = Field(gt=0, le=15, description="the claimed epsilon (the paper's results need eps <= 15)")
    delta: float = Field(gt=0, lt=0.5, description="the claimed delta (the paper's results need delta < 1/2)")
    Delta: float = Field(1.0, gt=0, description="p1d: inputs in [0, Delta]; pvec: Delta_2, inputs of norm <= Delta_2")
    d: int = Field(1, ge=1, le=10_000, description="pvec: dimension")


class ProtocolSweep(Strict):
    field: Literal["n", "eps", "delta", "d"]
    values: list[float] = Field(min_length=2)


class ProtocolCheck(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: str
    confidence: float = Field(0.999, gt=0.5, lt=1, description="statistical checks: the test's level")

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        PROTOCOL_CHECKS.get(v)
        return v


class ProtocolSpec(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Literal["shuffle_protocol"]
    description: str
    protocol: Literal["p1d", "pvec"] = Field(description="; ".join(f"{k}: {v}" for k, v in PROTOCOLS.items()))
    params: ProtocolParams
    trials: int = Field(ge=100, le=10**7, description="protocol runs per sweep point (on the same inputs)")
    seed: int = Field(ge=0)
    sweep: ProtocolSweep | None = None
    checks: list[ProtocolCheck] = Field(min_length=1)
    expect: dict[str, Literal["pass", "fail", "inconclusive", "inapplicable"]] = Field(default_factory=dict)
    expect_quick: dict[str, Literal["pass", "fail", "inconclusive", "inapplicable"]] = Field(default_factory=dict)
    notes: str = ""

    @model_validator(mode="after")
    def _rules(self) -> ProtocolSpec:
        ids = [c.id for c in self.checks]
        if len(set(ids)) != len(ids):
            raise Problem("checks", f"duplicate check ids in {ids}")
        for key in list(self.expect) + list(self.expect_quick):
            if key not in ids:
                raise Problem(f"expect.{key}", _choice_message("expect key (a check id)", key, ids))
        if self.protocol == "p1d" and (self.params.d != 1 or (self.sweep and self.sweep.field == "d")):
            raise Problem("params.d", "p1d sums scalars: d must be 1 (and cannot be swept)")
        for v in self.sweep.values if self.sweep else []:
            point = self.params.model_dump() | {self.sweep.field: v}   # type: ignore[union-attr]
            if self.sweep.field in ("n", "d") and (v != int(v) or v < 1):   # type: ignore[union-attr]
                raise Problem("sweep.values", f"{v} for {self.sweep.field} must be a whole number >= 1")   # type: ignore[union-attr]
            if not (0 < point["eps"] <= 15 and 0 < point["delta"] < 0.5):
                raise Problem("sweep.values", f"{v}: need 0 < eps <= 15 and 0 < delta < 1/2")
        return self

    def values(self) -> list[float | None]:
        return list(self.sweep.values) if self.sweep else [None]

    def point(self, value: float | None) -> dict:
        p = self.params.model_dump()
        if self.sweep is not None and value is not None:
            p[self.sweep.field] = value
        p["n"], p["d"] = int(p["n"]), int(p["d"])
        return p


def parse_protocol(raw: dict, file: str) -> ProtocolSpec:
    try:
        return ProtocolSpec.model_validate(raw)
    except ValidationError as e:
        errors = e.errors()
        first = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])
        if isinstance(first.get("ctx", {}).get("error"), Problem):
            prob = first["ctx"]["error"]
            raise SpecError(file, prob.path, str(prob)) from None
        path, msg = _format(first, raw, ProtocolSpec)
        raise SpecError(file, path, msg) from None
