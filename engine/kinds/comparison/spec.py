"""Comparison specs: one learning problem (data, loss, epsilon and delta) run under several threat models, each by
its own algorithm and checked against its own theorems, plus ``ordering`` checks between them. ``kind:
comparison`` at the top of a YAML spec selects this model. Every (run, sweep) pair becomes an ordinary learning
spec (engine/kinds/learning/spec.py), validated and run by the engine as any other; errors are one line naming the file and the
field, as for learning specs."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from algorithms.registry import UnknownName
from engine.kinds.learning.spec import DATA_MODELS, Algorithm, Check, Data, Loss, Spec, validated
from engine.specbase import Problem, SpecError, Strict, SweepValues, Verdict, check_ids, distinct, parse_model
from verifiers.theorems import THEOREMS

SWEEP_TAGS = {"data.n": "n", "threat_model.epsilon": "eps"}    # a run's check <c> over sweep <tag> is <run>_<c>_<tag>
COMPARISON_SWEEPS = {"data.n": "the number of users (records in all: N silos of n/N records for a run with N silos)",
                     "threat_model.epsilon": "the claimed epsilon of every run"}


class Privacy(Strict):
    epsilon: float = Field(gt=0, description="the claimed epsilon, the same for every run")
    delta: float = Field(gt=0, lt=1, description="the claimed delta, the same for every run")


class Run(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9]*$", description="a short name: the run's checks are reported as <id>_<check>")
    threat_model: Literal["isrl", "shuffle", "central", "local"]
    algorithm: Algorithm
    silos: int = Field(1, ge=1, le=10_000, description="N: the users are dealt to N silos of equal size "
                                                       "(1: one pool; ISRL and federated shuffle runs use N > 1)")
    rate_theorem: str = Field(description="the order theorem whose rate the ordering checks and the plots use")
    checks: list[Check] = Field(min_length=1, description="the run's own checks (learning-spec check kinds)")

    @field_validator("rate_theorem")
    @classmethod
    def _known(cls, v: str) -> str:
        THEOREMS.get(v)
        return v


class ComparisonSweep(Strict):
    field: Literal["data.n", "threat_model.epsilon"] = Field(
        description="; ".join(f"{k}: {v}" for k, v in COMPARISON_SWEEPS.items()))
    values: list[float] = SweepValues()

    _distinct = field_validator("values")(distinct)


class ComparisonQuick(Strict):
    trials: int = Field(ge=2, description="trials per point in --quick mode")
    sweeps: list[ComparisonSweep] | None = Field(None, description="shorter sweeps for --quick mode (same fields)")


class OrderingCheck(Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Literal["ordering"]
    better: str = Field(description="the run the cited rates put below")
    worse: str = Field(description="the run the cited rates put above")
    margin: float = Field(10.0, gt=1, description="an order is predicted at a point only where the worse run's rate "
                                                  "(capped at L D) is at least margin x the better run's")
    confidence: float = Field(0.95, gt=0.5, lt=1, description="level of the one-sided tests (Bonferroni over points)")


class ComparisonSpec(Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Literal["comparison"]
    description: str
    privacy: Privacy
    data: Data = Field(description="the pooled data set: N must be 1 and n is the number of users")
    loss: Loss
    runs: list[Run] = Field(min_length=2)
    sweeps: list[ComparisonSweep] = Field(min_length=1, max_length=2)
    trials: int = Field(ge=2, le=100_000)
    seed: int = Field(ge=0)
    checks: list[OrderingCheck] = Field(min_length=1)
    expect: dict[str, Verdict] = Field(default_factory=dict)
    expect_quick: dict[str, Verdict] = Field(default_factory=dict)
    quick: ComparisonQuick | None = None
    notes: str = ""

    @model_validator(mode="after")
    def _rules(self) -> ComparisonSpec:
        if self.data.N != 1:
            raise Problem("data.N", f"{self.data.N}: a comparison's data set is one pool of users (N = 1); a run "
                                    f"deals them to silos with its own `silos`")
        ids = [r.id for r in self.runs]
        if len(set(ids)) != len(ids):
            raise Problem("runs", f"duplicate run ids in {ids}")
        if len({s.field for s in self.sweeps}) != len(self.sweeps):
            raise Problem("sweeps", "each field can be swept once")
        if self.quick and self.quick.sweeps and [s.field for s in self.quick.sweeps] != [s.field for s in self.sweeps]:
            raise Problem("quick.sweeps", f"must sweep the same fields as sweeps: {[s.field for s in self.sweeps]}")
        for i, c in enumerate(self.checks):
            for side in ("better", "worse"):
                if getattr(c, side) not in ids:
                    raise Problem(f"checks.{i}.{side}", f"{getattr(c, side)!r} is not a run id; runs: {', '.join(ids)}")
            if c.better == c.worse:
                raise Problem(f"checks.{i}.worse", "an ordering compares two different runs")
        check_ids(list(self.checks) + [SimpleNamespace(id=i) for i in self.run_check_ids()], self.expect,
                  self.expect_quick)
        for i, r in enumerate(self.runs):
            thm = THEOREMS.get(r.rate_theorem)
            if thm.kind != "order" or thm.measures != "excess_risk":
                raise Problem(f"runs.{i}.rate_theorem", f"{r.rate_theorem} is not an order theorem about excess risk")
            if thm.threat_model != r.threat_model:
                raise Problem(f"runs.{i}.rate_theorem", f"{r.rate_theorem} is for threat model {thm.threat_model}, "
                                                        f"the run's is {r.threat_model}")
            for s in self.sweeps + ((self.quick.sweeps or []) if self.quick else []):
                for v in [*s.values, None]:               # every point alone, then the whole sweep
                    at = f"{s.field} = {v:g}" if v is not None else f"its {s.field} sweep"
                    try:
                        self.learning_spec(r, s, v)
                    except Problem as e:
                        raise Problem(_run_path(i, e.path), f"run {r.id} at {at}: {e}") from None
                    except ValidationError as e:
                        err = e.errors()[0]
                        loc = ".".join(str(x) for x in err["loc"])
                        raise Problem(f"runs.{i}", f"run {r.id} at {at}: {loc}: {err['msg']}") from None
        return self

    def sweeps_for(self, quick: bool) -> list[ComparisonSweep]:
        return list(self.quick.sweeps) if quick and self.quick and self.quick.sweeps else list(self.sweeps)

    def run_check_ids(self) -> list[str]:
        return [f"{r.id}_{c.id}_{SWEEP_TAGS[s.field]}" for s in self.sweeps for r in self.runs for c in r.checks]

    def run(self, run_id: str) -> Run:
        return next(r for r in self.runs if r.id == run_id)

    def learning_spec(self, run: Run, sweep: ComparisonSweep, value: float | None = None) -> Spec:
        """The learning spec of one run over one sweep (``value``: only that point, for validation)."""
        values = list(sweep.values) if value is None else [value]
        data = self.data.model_dump(mode="json")
        if sweep.field == "data.n":
            for v in values:
                if v != int(v) or v < 1:
                    raise Problem("sweep.values", f"{v:g} users: must be a whole number >= 1")
                if int(v) % run.silos:
                    raise Problem("silos", f"{v:g} users cannot be dealt evenly to {run.silos} silos")
            data["n"] = int(values[0])                    # the base n is replaced by the swept one
        if data["n"] % run.silos:
            raise Problem("silos", f"{data['n']} users cannot be dealt evenly to {run.silos} silos")
        data.update(N=run.silos, n=data["n"] // run.silos)
        sweep_values = [v / run.silos for v in values] if sweep.field == "data.n" else values
        checks = [c.model_dump(mode="json", exclude_none=True) for c in run.checks]
        raw: dict[str, Any] = {"name": f"{self.name}_{run.id}_{SWEEP_TAGS[sweep.field]}",
               "description": f"{self.name}: the {run.threat_model} run ({run.id}) over {sweep.field}",
               "threat_model": {"kind": run.threat_model, "epsilon": self.privacy.epsilon, "delta": self.privacy.delta},
               "data": data, "loss": self.loss.model_dump(mode="json"),
               "algorithm": run.algorithm.model_dump(mode="json"), "trials": self.trials, "seed": self.seed,
               "sweep": {"field": sweep.field, "values": sweep_values},
               "checks": checks, "quick": {"trials": self.quick.trials} if self.quick else None}
        if len(sweep_values) < 2:          # one point (validation): no sweep, and no check that needs one
            raw["sweep"] = None
            if sweep.field == "threat_model.epsilon":
                raw["threat_model"]["epsilon"] = sweep_values[0]
            raw["checks"] = [c for c in checks if c["kind"] != "rate"] or [
                {"id": "privacy", "kind": "privacy_accounting"}]
        return validated(raw)


def _run_path(i: int, path: str) -> str:
    """Where a learning-spec problem of run i sits in the comparison spec."""
    if path.startswith(("data", "sweep", "threat_model.epsilon", "threat_model.delta")):
        return "sweeps" if path.startswith(("sweep", "data.n")) else path.replace("threat_model.", "privacy.")
    if path == "silos":
        return f"runs.{i}.silos"
    if path == "threat_model.kind":
        return f"runs.{i}.threat_model"
    return f"runs.{i}.{path}" if path else f"runs.{i}"


def parse_comparison(raw: dict, file: str) -> ComparisonSpec:
    try:
        return parse_model(ComparisonSpec, raw, file, {"data": DATA_MODELS})
    except UnknownName as e:
        raise SpecError(file, "", str(e)) from None
