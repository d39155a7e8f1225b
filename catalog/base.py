"""What every paper's resolvers share: the registry entry, the resolved parameters and the resolution error,
the round cap, and the helpers several papers' resolvers use (integer rounding with clamping, the Moreau
smoothing of a non-smooth loss, the AC-SA stage schedules of seed 004's App. E.1 and our single stage,
Stich's step size of seed 004's Lemma D.5)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from pydantic import BaseModel, ConfigDict

from algorithms import acsa
from algorithms.registry import Registry
from verifiers.checks.base import Describe
from verifiers.threat_models import Neighbouring

MAX_ROUNDS = 2_000_000


class ResolutionError(ValueError):
    """A parameter cannot be resolved (e.g. the calibration asks for more rounds than we allow)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Resolved:
    params: dict[str, float]          # everything the run and the theorems use (paper symbols)
    provenance: dict[str, str]        # param -> where its value came from
    overridden: frozenset[str]
    run_kwargs: dict


@dataclass(frozen=True)
class AlgorithmEntry:
    name: str
    description: str
    citation: str
    privacy_theorem: str
    overrides: tuple[str, ...]
    variants: tuple[str, ...]
    resolve: Callable[..., Resolved]
    run: Callable
    one_pass: Callable[[str], bool]   # whether a variant reads each record at most once
    smoothing: str | None = None      # how a non-smooth loss is handled (None: smooth losses only)
    threat_model: str = "isrl"        # the threat model its privacy theorem is about
    single_pool: bool = False         # runs on one pool of n clients (data.N = 1)
    auditable: bool = False           # engine/kinds/learning/audit.py simulates its mechanism's worst-case neighbours
                                      # (its event kind has an entry in that module's AUDITS); off unless said
    relations: tuple[Neighbouring, ...] = ()   # the neighbouring relations its accountant and audit handle, the
                                      # first the default; none: only its threat model's default (a spec stating
                                      # another relation is refused at validation)


def int_clamped(name: str, value: float, lo: int, hi: int, prov: dict, note: str) -> int:
    v = int(math.ceil(value - 1e-9))
    if v < lo or v > hi:
        prov[name] = f"{note}: {value:.4g} clamped to [{lo}, {hi}]"
        v = min(max(v, lo), hi)
    return v


def moreau(c: Mapping[str, float], ov: Mapping[str, float], prov: dict, *, rule: Callable, cite: str) -> dict:
    """A non-smooth loss runs on its beta_s-Moreau envelope (Lemma D.7): beta_s from the theorem's rule
    (or an override); the envelope plus the ridge term is (beta_s + mu)-smooth."""
    if "beta_s" in ov:
        beta_s, prov["beta_s"] = float(ov["beta_s"]), "override"
    else:
        beta_s = rule(L=c["L"], D=c["D"], M=c["M"], n=int(c["n"]), d=int(c["d"]), eps0=c["eps0"],
                      delta0=c["delta0"], mu=c["mu"])
        prov["beta_s"] = f"Moreau smoothing parameter, {cite}"
    prov["beta"] = "beta_s + mu: smoothness of the Moreau envelope plus the ridge term"
    return {"beta_s": beta_s, "beta": beta_s + c["mu"]}


def convex_single_stage(*, R: int, beta: float, lam: float, V2: float, D: float, prov: dict) -> tuple[acsa.Stage]:
    v = max(2 * (beta + lam), math.sqrt(V2 * R * (R + 1) * (R + 2) / (3 * D**2)))
    prov["stages"] = ("OUR CHOICE, not the paper's: single-stage AC-SA steps of Ghadimi & Lan (2012, Cor. 1), "
                        "alpha_r = 2/(r+1), eta_r = 4v/(r(r+1)), v = max{2(beta+lambda), sqrt(V^2 R(R+1)(R+2)/(3D^2))}; "
                        "seed 004 gives no alpha_r, eta_r for the convex case (it cites Woodworth et al. 2020b, Lemma 4)")
    return (acsa.Stage(R, v),)


def multistage(*, R: int, beta: float, mu: float, V2: float, Delta: float) -> tuple[acsa.Stage, ...]:
    """App. E.1 (L948-956): R_k = ceil(max{4 sqrt(2 beta/mu), 128 V^2/(3 mu Delta 2^-(k+1))}),
    v_k = max{2 beta, [mu V^2 / (3 Delta 2^-(k-1) R_k (R_k+1)(R_k+2))]^{1/2}}, while sum R_k <= R."""
    stages, left, k = [], R, 1
    while left > 0:
        Rk = math.ceil(max(4 * math.sqrt(2 * beta / mu), 128 * V2 / (3 * mu * Delta * 2.0 ** -(k + 1))))
        Rk = min(Rk, left)
        vk = max(2 * beta, math.sqrt(mu * V2 / (3 * Delta * 2.0 ** -(k - 1) * Rk * (Rk + 1) * (Rk + 2))))
        stages.append(acsa.Stage(Rk, vk))
        left -= Rk
        k += 1
    return tuple(stages)


def stich_eta(*, mu: float, beta: float, r0: float, R: int, c: float) -> float:
    """Lemma D.5 (Stich 2019; L593-603, instantiated L644-648 with a=mu, g=2 beta, T=R):
    eta = min{1/g, ln(max{2, a^2 r0 T^2 / c}) / (a T)}."""
    return min(1 / (2 * beta), math.log(max(2.0, mu**2 * r0 * R**2 / c)) / (mu * R))


class MechanismParams(BaseModel):
    """The base of a mechanism's parameter model (``MechanismEntry.params``): strict about unknown keys, frozen, no
    NaN or infinity. Each field has bounds and a description; the mechanism spec validates its ``params`` and every
    sweep point with it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class RuleError(ValueError):
    """A cross-field problem of one point's parameters (``MechanismEntry.rules``): a one-line message, and the
    parameter to blame when there is one (the spec then names ``params.<field>``)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class MechanismEntry:
    """A mechanism the ``mechanism`` spec kind runs many times at each sweep point (engine/kinds/mechanism/).

    ``params``: the model of its parameters (a ``MechanismParams``); ``sweepable``: the parameters a spec may sweep,
    ``whole`` those of them that take whole numbers; ``rules(params)``: raises ``ValueError`` (a ``RuleError`` to
    name the parameter) with a one-line message for a cross-field problem of one point.
    ``run_point(params, trials, seq)``: one point, ``trials`` runs, every random stream spawned from the
    ``SeedSequence`` the engine hands it; returns the point's JSON-ready dict (the engine puts ``value`` first).
    ``checks``: the check functions a spec of it may name, each ``check(check, name, points) -> CheckResult``;
    ``threat_model``: a name in verifiers/threat_models.py; ``report(results) -> (bullets, body)``: the markdown lines
    of the report that are its own: the bullets under the verdicts (what ran, its privacy) and the body after the
    plot (the table of points). ``relations``: the neighbouring relations its privacy checks handle, the first the
    default; an entry with relations is handed the spec's as ``run_point(..., relation=...)``, and a spec stating
    another is refused at validation (none: the threat model's default relation, which a spec may not change)."""

    name: str
    description: str
    citation: str
    params: type[MechanismParams]
    sweepable: tuple[str, ...]
    whole: tuple[str, ...]
    rules: Callable[[Mapping[str, Any]], None]
    run_point: Callable[..., dict]      # (params, trials, SeedSequence[, relation=]) -> the point's dict
    checks: Registry
    threat_model: str
    report: Callable[[dict], tuple[list[str], list[str]]]
    relations: tuple[Neighbouring, ...] = ()
    data: str | None = None           # what its inputs are when they stand in for a paper's data set (the claims
                                      # ledger counts an experiment's claim decided on them as decided on a stand-in)
    figure: Callable[[dict, Path], str | None] | None = None   # its own figure: (results, folder) -> the PNG's name
                                      # (save it with save_figure below: the report links its SVG copy too)
    # its check kinds' decision rules in words, from a stored result (verifiers/checks/base.py Rule), for the report's
    # first table; a kind without one points to its section
    check_rules: Mapping[str, Describe] = field(default_factory=dict)


def mechanism_header(r: dict, *, label: str = "Mechanism", skip: tuple[str, ...] = ()) -> list[str]:
    """A mechanism report's first bullets: the mechanism's citation, and the fixed parameters (those neither swept nor
    in ``skip``) with the swept one."""
    field = r["sweep"]["field"] if r["sweep"] else None
    fixed = {k: v for k, v in r["spec"]["params"].items() if k != field and k not in skip}
    return [f"- {label}: {r['citation']}",
            f"- Fixed: {', '.join(f'{k} = {fmt(v)}' for k, v in fixed.items())}" + (f"; swept: {field}" if field else "")]


def fmt(x: object) -> str:
    """A number in a report table, as engine/markdown.py's ``fmt`` writes it (the catalog cannot import engine/)."""
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        # a whole number below a million as written (n = 14142, not 1.414e+04); anything else to 4 significant digits
        if math.isfinite(x) and x == round(x) and abs(x) < 1e6:
            return str(int(x))
        return f"{x:.4g}"
    return str(x)


_PLAIN_MATH = re.compile(r"\$\\mathdefault\{(.*)\}\$")
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def plain_tick_label(label: str) -> str:
    """A log axis' tick label as matplotlib's default formatter writes it in mathtext ('$\\mathdefault{10^{-2}}$',
    '$\\mathdefault{2\\times10^{-2}}$', '$\\mathdefault{0.5}$'), in plain text ('10⁻²', '2×10⁻²', '0.5')."""
    m = _PLAIN_MATH.fullmatch(label)
    if m is None:
        return label
    text = re.sub(r"\^\{(-?\d+)\}", lambda e: e.group(1).translate(_SUPERSCRIPT), m.group(1))
    return text.replace("\\times", "×").replace("-", "−")


def log_scale(ax: Any, *which: str) -> None:
    """Log scale on ``ax``'s x and/or y axis (both when none is named), with matplotlib's default ticks and labels
    written in plain text: its default labels are mathtext, whose parsing was a third of a report's rendering time."""
    from matplotlib.ticker import LogFormatterSciNotation

    class PlainLogFormatter(LogFormatterSciNotation):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return plain_tick_label(super().__call__(x, pos))

    for name in which or ("x", "y"):
        axis = {"x": ax.xaxis, "y": ax.yaxis}[name]
        (ax.set_xscale if name == "x" else ax.set_yscale)("log")
        axis.set_major_formatter(PlainLogFormatter(10))               # as matplotlib's LogScale sets them,
        axis.set_minor_formatter(PlainLogFormatter(10, labelOnlyBase=False))     # with plain-text labels


def save_figure(fig: Any, out_dir: Path, name: str) -> str:
    """A report's figure twice: ``name.png`` for the markdown page and ``name.svg`` (vector, for a paper or a
    zoom), both without a timestamp and with fixed SVG element ids, so the same results give the same bytes.
    Closes the figure; returns the PNG's file name."""
    import matplotlib
    import matplotlib.pyplot as plt

    fig.savefig(out_dir / f"{name}.png", dpi=90, metadata={"Software": None})
    with matplotlib.rc_context({"svg.hashsalt": name}):
        fig.savefig(out_dir / f"{name}.svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return f"{name}.png"


def figure_link(png: str, alt: str) -> str:
    """The markdown of a report's figure: the PNG inline, its vector copy (save_figure) linked beside it."""
    return f"![{alt}]({png})  \n[vector (SVG)]({png[:-4]}.svg)"
