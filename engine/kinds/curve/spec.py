"""Privacy-curve specs: an accountant's epsilon as a function of one parameter (rounds T, population n,
sample k, the local randomizer's epsilon eps_ldp: seed 001's eps0), with no learning run. ``kind: privacy_curve`` at the top of a YAML spec selects this model;
errors are one line naming the file and the field, as for learning specs (engine/kinds/learning/spec.py)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from algorithms.registry import choice_message
from engine.specbase import ClaimIds, Problem, SpecError, Strict, SweepValues, Verdict, distinct, parse_model
from verifiers.accountants.shuffle_baselines import BASELINES
from verifiers.checks.curves import CURVE_CHECKS, DEFAULT_CLAIMS, OWN_CURVES, RATIO_TOL


class CurveParams(Strict):
    k: int = Field(ge=1, le=10**8, description="clients sampled per round")
    n: int = Field(ge=1, le=10**9, description="clients")
    eps_ldp: float = Field(gt=0, le=20, description="the local randomizer's LDP epsilon (seed 001's eps0; the name "
                                                     "CLDP-SGD's spec uses for it, see README 'one name per quantity')")
    T: int = Field(1, ge=1, le=10**7, description="rounds")
    delta: float = Field(gt=0, lt=1, description="delta of the (epsilon, delta) guarantee")


class CurveSweep(Strict):
    field: Literal["T", "n", "k", "eps_ldp"]
    values: list[float] = SweepValues()

    _distinct = field_validator("values")(distinct)


class Baseline(Strict):
    name: Literal["rdp_shuffle", "fmt_kov"] = Field(description="; ".join(f"{k}: {v}" for k, v in BASELINES.items()))
    convention: Literal["as_stated", "authors_script"] = Field(
        "as_stated", description="as_stated: the sources' theorems; authors_script: what seed 001's authors' Figure 2 "
                                 "notebook computes (verifiers/accountants/shuffle_baselines.py)")

    @property
    def label(self) -> str:
        return f"{self.name}:{self.convention}"


class CurveCheck(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: str
    curve: str | None = Field(None, description="ratio_claim: the baseline curve (name:convention) divided by Thm 1; "
                                                 "paper_value: the curve the paper's number is for (thm1, thm2 or "
                                                 "name:convention of a baseline)")
    at: float | None = Field(None, description="ratio_claim, paper_value: the swept value the paper states its number at")
    ratio: float | None = Field(None, gt=0, description="ratio_claim: the paper's ratio")
    tol: float | None = Field(None, gt=0, lt=1, description=f"relative tolerance; ratio_claim: default {RATIO_TOL:g} "
                                                            "(the paper reads it off a figure); paper_value: required, "
                                                            "fixed from how precisely the paper states its number "
                                                            "(its printed digits, a figure's resolution), justified "
                                                            "in the spec's notes")
    epsilon: float | None = Field(None, gt=0, description="paper_value: the paper's epsilon, as printed")
    source: str = Field("", max_length=300, description="paper_value: where the paper states its number (seed lines)")
    at_source: str = Field("", max_length=400, description="paper_value with at: where the paper states the swept "
                                                            "value, or how it follows from what it states (seed lines)")
    at_unstated: str = Field("", max_length=400, description="paper_value without at: why the paper ties its number "
                                                              "to no swept value; the check is then inapplicable (it "
                                                              "never takes the value from our curve)")
    order: list[str] = Field(default_factory=list,
                             description="curves_ordered: curves from smallest to largest epsilon (thm1, thm2 or "
                                         "name:convention of a baseline)")
    min_value: float | None = Field(None, description="curves_ordered: only at swept values >= this")
    claims: ClaimIds = Field(default_factory=list, description="the inventory ids of the paper's statement the check "
                             "decides (ratio_claim, curves_ordered, paper_value: required; bounds_ordered: default " +
                             " & ".join(DEFAULT_CLAIMS["bounds_ordered"]) + ")")
    not_inventoried: str = Field("", max_length=300, description="instead of claims: why the check decides no "
                                                                 "inventoried statement (e.g. a figure the text is "
                                                                 "silent about)")

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        CURVE_CHECKS.get(v)
        return v


def _paper_value_rules(c: CurveCheck, i: int, values: list[float]) -> None:
    """A paper_value check names the curve, the paper's number and where it is printed, a tolerance stated before the
    run, and either the swept value the paper states (with where) or why the paper states none."""
    for name, missing, what in (
            ("curve", c.curve is None, "the curve the paper's number is for (thm1, thm2 or a baseline name:convention)"),
            ("epsilon", c.epsilon is None, "the paper's epsilon, as printed"),
            ("source", not c.source.strip(), "where the paper states its number (seed lines)"),
            ("tol", c.tol is None, "the relative tolerance, fixed from how precisely the paper states its number")):
        if missing:
            raise Problem(f"checks.{i}.{name}", f"a paper_value check needs {name}: {what}")
    if c.at is None and not c.at_unstated.strip():
        raise Problem(f"checks.{i}.at", "a paper_value check needs at (the swept value the paper states its number "
                                        "at, with at_source) or at_unstated (why the paper states none)")
    if c.at is not None and c.at_unstated.strip():
        raise Problem(f"checks.{i}.at_unstated", "give at (with at_source) or at_unstated, not both")
    if c.at is not None and not c.at_source.strip():
        raise Problem(f"checks.{i}.at_source", "a paper_value check with at needs at_source: where the paper states "
                                               "that swept value, or how it follows from what it states")
    if c.at is not None and c.at not in values:
        raise Problem(f"checks.{i}.at", f"{c.at} is not one of the sweep values")
    for name, given in (("ratio", c.ratio is not None), ("order", bool(c.order)), ("min_value", c.min_value is not None)):
        if given:
            raise Problem(f"checks.{i}.{name}", f"a paper_value check takes no {name}")


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
    baselines: list[Baseline] = Field(default_factory=list, description="the paper's comparison curves")
    expect: dict[str, Verdict] = Field(default_factory=dict)
    expect_quick: dict[str, Verdict] = Field(default_factory=dict)
    notes: str = ""

    @model_validator(mode="after")
    def _rules(self) -> CurveSpec:
        ids = [c.id for c in self.checks]
        for key in self.expect:
            if key not in ids:
                raise Problem(f"expect.{key}", choice_message("expect key (a check id)", key, ids))
        curves = list(OWN_CURVES) + [b.label for b in self.baselines]
        if len(set(curves)) != len(curves):
            raise Problem("baselines", f"a baseline is listed twice: {[b.label for b in self.baselines]}")
        for i, c in enumerate(self.checks):
            for name in ([c.curve] if c.curve else []) + c.order:
                if name not in curves:
                    raise Problem(f"checks.{i}", choice_message("curve", name, curves))
            if c.claims and c.not_inventoried:
                raise Problem(f"checks.{i}.not_inventoried", "give claims or not_inventoried, not both")
            if not c.claims and not c.not_inventoried and c.kind not in DEFAULT_CLAIMS:
                raise Problem(f"checks.{i}.claims", f"a {c.kind} check decides a statement of the paper: name its "
                                                     f"inventory id(s) (`python -m engine claims --list`), or say why "
                                                     f"it has none in not_inventoried")
            if c.kind == "ratio_claim" and (c.curve is None or c.at is None or c.ratio is None):
                raise Problem(f"checks.{i}", "a ratio_claim check needs curve, at and ratio")
            if c.kind == "ratio_claim" and c.at not in self.sweep.values:
                raise Problem(f"checks.{i}.at", f"{c.at} is not one of the sweep values")
            if c.kind == "paper_value":
                _paper_value_rules(c, i, self.sweep.values)
            if c.kind == "curves_ordered" and len(c.order) < 2:
                raise Problem(f"checks.{i}.order", "a curves_ordered check needs at least two curves")
        if self.paper and self.sweep.field != "T" and any(pv.at is None for pv in self.paper):
            raise Problem("paper", "a paper value without 'at' needs a sweep over T (ours is solved for T)")
        for v in self.sweep.values:
            point = self.params.model_dump() | {self.sweep.field: v}
            if self.sweep.field in ("T", "n", "k") and v != int(v):
                raise Problem("sweep.values", f"{v} for {self.sweep.field} must be a whole number")
            if not 1 <= point["k"] <= point["n"]:
                raise Problem("sweep.values", f"at {self.sweep.field} = {v}: need 1 <= k <= n "
                                              f"(k = {point['k']}, n = {point['n']})")
            if point["eps_ldp"] <= 0:
                raise Problem("sweep.values", f"eps_ldp = {v} must be > 0")
        return self

    def point(self, value: float) -> dict:
        p = self.params.model_dump() | {self.sweep.field: value}
        for f in ("T", "n", "k"):
            p[f] = int(p[f])
        return p


def parse_curve(raw: dict, file: str) -> CurveSpec:
    for where in (raw.get("params"), raw.get("sweep")):
        if isinstance(where, dict) and ("eps0" in where or where.get("field") == "eps0"):
            path = "params.eps0" if where is raw.get("params") else "sweep.field"
            raise SpecError(file, path, "the local randomizer's epsilon is now called eps_ldp (results schema 2: one "
                                        "name per quantity); rename eps0 to eps_ldp")
    return parse_model(CurveSpec, raw, file)
