"""What every check kind shares: the sweep points it judges (``Point``), its options (``CheckSpec``), the run's
context, its result (``CheckResult``, data, never printed) and ``CheckKind``, the registry entry through which a
kind owns its default confidence, whether it judges the algorithm's privacy theorem, and its applicability rules.
A verdict is one of pass / fail / inconclusive / inapplicable, from a test at a stated confidence; nothing passes
by default."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from algorithms.events import Event
from verifiers.theorems.base import Theorem

VERDICTS = ("pass", "fail", "inconclusive", "inapplicable")
RISK_MEASURES = ("excess_risk", "empirical_excess_risk")


@dataclass(frozen=True)
class Point:
    """One sweep point as run and measured."""

    value: float | None
    params: Mapping[str, float]
    overridden: frozenset[str]
    measurements: Mapping[str, np.ndarray]       # per measure: (trials,) numbers, or (trials, k) vectors
    events: tuple[Event, ...]
    noise_sq_sum: float
    noise_coords: int
    # errors shared by every trial of the point, per measure: 'mc_se' (the standard error of the Monte
    # Carlo population risk) and 'solver_gap' (the certified error of the non-private optimum)
    systematic: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    audit: Mapping[str, Any] | None = None       # the privacy audit's result at this point (engine/kinds/learning/audit.py)
    _accounted: dict = field(default_factory=dict, init=False, compare=False, repr=False)   # accounted()'s memo

    def accounted(self) -> tuple[float, str]:
        """(epsilon, accountant) of the point's events at its L and delta0, computed once per point: the privacy
        accounting check and the audit's comparison both ask for it, and an RDP accounting of a subsampled release
        takes about a second. The memo is keyed by the events, L and delta0 (a copy by dataclasses.replace starts
        with none; copy.copy shares it, harmlessly, the key being the content). It cannot see an accountant patched
        after a first call: a test that patches one must judge a fresh point (dataclasses.replace)."""
        from verifiers import accountants

        L, delta = self.params["L"], self.params["delta0"]
        key = (self.events, L, delta)
        try:
            return self._accounted[key]
        except KeyError:
            pass
        except TypeError:                       # an unhashable event: not memoised
            return accountants.epsilon(self.events, L=L, delta=delta)
        value = self._accounted[key] = accountants.epsilon(self.events, L=L, delta=delta)
        return value


class CheckSpec(BaseModel):
    """A check as a spec states it, and (with its theorem and confidence resolved by the engine) as its kind
    receives it: one definition for both. The learning spec's ``Check`` (engine/kinds/learning/spec.py) adds the
    registry look-ups of ``kind`` and ``theorem``."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: str
    theorem: str | None = None
    variable: str | None = None
    term: str | None = None
    tol: float = Field(0.1, ge=0, le=1)
    confidence: float | None = Field(None, gt=0.5, lt=1, description="the test's level; default: the check kind's own "
                                                                     "(`python -m engine list` shows each)")
    min_rounds: int = Field(20, ge=1)
    audit_trials: int = Field(100_000, ge=1000, le=10_000_000,
                              description="privacy_audit: transcripts simulated on each side of the neighbouring pair")
    saturation: Literal["bound", "measured"] = Field(
        "bound", description="rate: a point is saturated (no rate can show) where the theorem's bound with its "
                             "constants set to 1 reaches min(sup_W F - F*, F(w0) - F*) (bound), or where the "
                             "measured mean reaches half of it (measured: for O() theorems whose constant-1 bound "
                             "is far above the measured risk)")

    @property
    def level(self) -> float:
        """The confidence of the check's test, as resolved by the engine (the spec's, or the kind's default)."""
        if self.confidence is None:
            raise ValueError(f"check {self.id!r}: its confidence was never resolved (the engine sets it)")
        return self.confidence


@dataclass(frozen=True)
class Context:
    algorithm: str                  # e.g. 'noisy_mbsgd', 'accelerated_mbsgd'
    sweep_symbol: str | None        # the theorem symbol the sweep varies, if any
    privacy_theorem: Theorem


@dataclass(frozen=True)
class CheckResult:
    id: str
    kind: str
    theorem: str | None
    citation: str
    verdict: str
    measured: float | None
    bound: float | None
    confidence: float
    summary: str
    rows: tuple[Mapping[str, Any], ...] = ()
    trials_needed: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    # the claims this check decides or exercises: ids of verifiers/claims.py (../shared/notes/inventory.md)
    claims: tuple[str, ...] = ()


def cite(citation: str, claims: tuple[str, ...]) -> str:
    """A check's citation line: the source and the inventory ids it cites (ids hold '; ', so ' & ' joins them)."""
    return f"{citation} [inventory: {' & '.join(claims)}]" if claims else citation


def result(check: CheckSpec, thm: Theorem | None, verdict: str, summary: str, **kw) -> CheckResult:
    """A check's result citing its theorem's claims, or ``uncited=reason``: this run decides none of them (e.g. a
    noise test at an overridden sigma, which says nothing about the theorem's calibration)."""
    uncited = kw.pop("uncited", "")
    claims = () if thm is None or uncited else thm.inventory
    why = uncited or (thm.not_inventoried if thm is not None else "")
    return CheckResult(id=check.id, kind=check.kind, theorem=None if thm is None else thm.name,
                       citation="" if thm is None else cite(thm.citation, claims) if claims else
                       f"{thm.citation} [not inventoried: {why}]",
                       verdict=verdict, confidence=kw.pop("confidence", check.level), summary=summary,
                       measured=kw.pop("measured", None), bound=kw.pop("bound", None), claims=claims, **kw)



# Exact checks (numbers computed, nothing sampled: confidence 1) share how they compare and report
EXACT_REL_SLACK = 1e-9        # float rounding of two exact computations that should agree (they do to ~1e-13)
EXACT_ABS_SLACK = 1e-12


def exceeds(value: float, bound: float) -> bool:
    """An exact value above its bound by more than float rounding."""
    return value > bound * (1 + EXACT_REL_SLACK) + EXACT_ABS_SLACK


def combine_verdicts(verdicts: list[str]) -> str:
    """One verdict from several points' (or pairs'): fail if any failed; inapplicable if none was judged; pass if every
    judged one passed; else inconclusive."""
    if "fail" in verdicts:
        return "fail"
    judged = [v for v in verdicts if v != "inapplicable"]
    if not judged:
        return "inapplicable"
    return "pass" if all(v == "pass" for v in judged) else "inconclusive"


def decided(failed: bool, passed: int) -> str:
    """An exact check's verdict: fail if any point failed, pass if any point was judged, else inapplicable."""
    return "fail" if failed else "pass" if passed else "inapplicable"


def cited_result(check: Any, citation: str, claims: tuple[str, ...], verdict: str, summary: str, *,
                 confidence: float, rows: list[dict], measured: float | None = None, bound: float | None = None,
                 theorem: str | None = None, uncited: str = "") -> CheckResult:
    """A check's result citing the inventory claims it decides; with no claims, ``uncited`` says why."""
    text = f"{citation} [not inventoried: {uncited}]" if uncited and not claims else cite(citation, claims)
    return CheckResult(id=check.id, kind=check.kind, theorem=theorem, citation=text, verdict=verdict,
                       measured=measured, bound=bound, confidence=confidence, summary=summary, rows=tuple(rows),
                       claims=claims)


def exact_result(check: Any, theorem: str, citation: str, claims: tuple[str, ...], verdict: str, summary: str, *,
                 measured: float | None, bound: float | None, rows: list[dict]) -> CheckResult:
    """An exact check's result (confidence 1), citing its claims."""
    return cited_result(check, citation, claims, verdict, summary, confidence=1.0, rows=rows, measured=measured,
                        bound=bound, theorem=theorem)


CheckFn = Callable[[CheckSpec, Theorem, list[Point], Context], CheckResult]


@dataclass(frozen=True)
class Rule:
    """How a check was decided, for the first screen of a report: ``text`` the rule with its numbers ("pass iff the
    upper end of the slope's 95% interval <= -0.70"), ``margin`` how far the deciding figure lies from the rule's
    threshold, in words, and ``side`` where that puts it ('pass', 'fail' or 'undecided'), which tests compare with the
    verdict the check gave, so a rule that misdescribes its check fails them. Written by a kind's ``describe``
    from a result as stored (its rows, extra, and the spec's entry for the check), so stored results read the same."""

    text: str
    margin: str
    side: str


Describe = Callable[[Mapping[str, Any], Mapping[str, Any]], "Rule | None"]


def compare(value: float, limit: float, *, relative: bool = True, strict: bool = False) -> tuple[str, bool]:
    """``value`` against ``limit`` in words ("1.6 is 20% below 2", "0.41 is 4.88x below 2", "-0.79 is 0.09 below
    -0.7"; ``relative=False`` for signed figures such as slopes), and whether it is at or below it (below it,
    ``strict``)."""
    below = value < limit if strict else value <= limit
    if relative and limit != 0 and value * limit >= 0:
        rel = abs(value / limit - 1)
        far = max(abs(value / limit), abs(limit / value)) if value != 0 else 0.0
        gap = (f"{far:.3g}x" if far > 2 else f"{rel:.0%}" if rel >= 0.01 else f"{rel:.2%}" if rel >= 1e-4
               else f"{rel:.1e} (relative)")
    else:
        gap = f"{abs(value - limit):.3g}"
    word = "below" if value < limit else "above" if value > limit else "equal to"
    return (f"{_num(value)} is {gap} {word} {_num(limit)}" if word != "equal to"
            else f"{_num(value)} equals {_num(limit)}"), below


def side_of(rows: Any) -> str:
    """The side the rows' own verdicts put a check on (as combine_verdicts decides): 'pass', 'fail' or 'undecided'."""
    v = combine_verdicts([r["verdict"] for r in rows if "verdict" in r])
    return {"pass": "pass", "fail": "fail"}.get(v, "undecided")


def interval_side(rows: Any) -> str:
    """The side of a rule "pass iff every interval lies above 0, fail iff one lies below 0" over rows holding their
    interval's ``lower`` and ``upper`` ends: 'pass', 'fail' or 'undecided'."""
    rows = list(rows)
    if any(x["upper"] < 0 for x in rows):
        return "fail"
    return "pass" if all(x["lower"] > 0 for x in rows) else "undecided"


def at(point: Any) -> str:
    """" at <point>" for a sweep point, "" for a spec without a sweep (its one point is None)."""
    return "" if point is None else f" at {point:g}" if isinstance(point, (int, float)) else f" at {point}"


def _num(x: float) -> str:
    return f"{x:.4g}"


@dataclass(frozen=True)
class Facts:
    """What a check kind's rules may ask of the spec it sits in (the engine builds it from the spec)."""

    threat_model: str
    algorithm: str
    auditable: bool                      # the engine can simulate the algorithm's mechanism for an audit
    privacy_measures: str                # what the algorithm's privacy theorem measures ('sigma', 'epsilon', ...)
    sweep_symbol: str | None             # the theorem symbol the spec sweeps, if any
    measurable: frozenset[str]           # the quantities the engine can measure for this spec


class Misfit(ValueError):
    """A check does not fit its spec: ``field`` is the check's field at fault ('kind', 'theorem', 'variable',
    'term'); the engine turns it into a one-line spec error at checks.<i>.<field>."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def no_rules(check: Any, thm: Theorem, facts: Facts) -> None:
    """A kind with no rules about its theorem beyond the generic ones."""


def fits_any(facts: Facts) -> None:
    """A kind that fits every spec."""


def measurable_theorem(check: Any, thm: Theorem, facts: Facts) -> None:
    """The theorem's quantity must be measurable in this spec."""
    if thm.measures not in facts.measurable:
        raise Misfit("theorem", f"{thm.name} is about {thm.measures}, which cannot be measured here: "
                                f"{UNMEASURABLE.get(thm.measures, thm.measures)}")


UNMEASURABLE = {"excess_risk": "population risk needs a synthetic data set in mode sco",
                "empirical_excess_risk": "the per-trial optimum has a closed form only for the squared loss; "
                                         "use data.mode: erm (one data set per point)",
                "grad_sampling_variance": "needs the exact population gradient (sphere_linear, mode sco) and fresh "
                                          "one-pass batches",
                "grad_variance": "needs the exact population gradient (sphere_linear, mode sco) and fresh one-pass "
                                 "batches"}


@dataclass(frozen=True)
class CheckKind:
    """A check kind as the registry holds it. ``evaluate`` decides. At validation, before anything runs, ``fits``
    raises Misfit where the kind does not fit the spec at all, and ``rules`` where its theorem does not fit it;
    ``confidence`` is the default level of its test; ``privacy``: with no theorem named, it judges the algorithm's
    privacy theorem."""

    name: str
    evaluate: CheckFn
    fits: Callable[[Facts], None] = fits_any
    rules: Callable[[Any, Theorem, Facts], None] = no_rules
    confidence: float = 0.95
    privacy: bool = False
    describe: Describe | None = None    # its decision rule in words, from a stored result (Rule)
