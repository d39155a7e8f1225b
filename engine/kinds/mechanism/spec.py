"""Mechanism specs: a registered mechanism (today seed 000's summation protocols P_1D and P_VEC) with the paper's
parameters, run many times on fixed inputs, its privacy computed from the parameters as run. ``kind: mechanism`` at
the top of a YAML spec selects this model (``kind: shuffle_protocol`` before results schema 2); errors are one line
naming the file and the field, as for learning specs."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from engine.specbase import Problem, Strict, Verdict, check_ids, parse_model
from verifiers.checks.mechanism import PROTOCOL_CHECKS

MAX_VALUES = 10**6                 # n d input values per run
MECHANISMS = {"p1d": "seed 000, Algorithm 1 (P_1D, L105-128): shuffle sum of scalars in [0, Delta], Lemma 3.1",
              "pvec": "seed 000, Algorithm 2 (P_VEC, L142-149): shuffle sum of vectors of norm <= Delta_2, Thm 3.2"}


class ProtocolParams(Strict):
    n: int = Field(ge=1, le=10**6, description="users")
    eps: float = Field(gt=0, le=15, description="the claimed epsilon (the paper's results need eps <= 15)")
    delta: float = Field(ge=1e-12, lt=0.5, description="the claimed delta (the paper's results need delta < 1/2)")
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
    kind: Literal["mechanism"]
    description: str
    mechanism: Literal["p1d", "pvec"] = Field(description="; ".join(f"{k}: {v}" for k, v in MECHANISMS.items()))
    params: ProtocolParams
    trials: int = Field(ge=100, le=10**7, description="protocol runs per sweep point (on the same inputs)")
    seed: int = Field(ge=0)
    sweep: ProtocolSweep | None = None
    checks: list[ProtocolCheck] = Field(min_length=1)
    expect: dict[str, Verdict] = Field(default_factory=dict)
    expect_quick: dict[str, Verdict] = Field(default_factory=dict)
    notes: str = ""

    @model_validator(mode="after")
    def _rules(self) -> ProtocolSpec:
        check_ids(self.checks, self.expect, self.expect_quick)
        if self.mechanism == "p1d" and (self.params.d != 1 or (self.sweep and self.sweep.field == "d")):
            raise Problem("params.d", "p1d sums scalars: d must be 1 (and cannot be swept)")
        for v in self.values():
            point = self.params.model_dump() | ({self.sweep.field: v} if self.sweep else {})
            if self.sweep and v is not None and self.sweep.field in ("n", "d") and (v != int(v) or v < 1):
                raise Problem("sweep.values", f"{v} for {self.sweep.field} must be a whole number >= 1")
            try:
                ProtocolParams.model_validate(point)
            except ValidationError as e:
                err = e.errors()[0]
                raise Problem("sweep.values" if self.sweep else "params",
                              f"{v}: {err['loc'][0]} {err['msg'].lower()}") from None
            if point["n"] * point["d"] > MAX_VALUES:
                raise Problem("sweep.values" if self.sweep else "params",
                              f"n d = {point['n'] * point['d']:.0f} inputs per run (allowed: <= {MAX_VALUES})")
        return self

    def values(self) -> list[float | None]:
        return list(self.sweep.values) if self.sweep else [None]

    def point(self, value: float | None) -> dict:
        p = self.params.model_dump()
        if self.sweep is not None and value is not None:
            p[self.sweep.field] = value
        p["n"], p["d"] = int(p["n"]), int(p["d"])
        return p


def parse_mechanism(raw: dict, file: str) -> ProtocolSpec:
    return parse_model(ProtocolSpec, raw, file)
