"""The spec kinds: one folder each (model, run, report), one line each in ``KINDS``. A spec's ``kind:`` key names
its kind; a spec without one is a learning spec."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from algorithms.registry import Registry
from engine.kinds import comparison, curve, learning, mechanism
from engine.kinds.base import RunOptions, SpecKind
from engine.specbase import RESULTS_SCHEMA, SpecError, read_yaml
from verifiers.threat_models import THREAT_MODELS

KINDS = (learning.KIND, curve.KIND, mechanism.KIND, comparison.KIND)
SPEC_KINDS: Registry[SpecKind] = Registry.of("spec kind", ((k.name, k) for k in KINDS))
RENAMED = {"shuffle_protocol": "mechanism"}     # kind names of earlier versions

__all__ = ["RESULTS_SCHEMA", "SPEC_KINDS", "RunOptions", "SpecKind", "kind_of", "load", "parse", "upgrade_results"]


def kind_of(raw: Any, file: str) -> SpecKind:
    name = raw.get("kind", "learning") if isinstance(raw, dict) else "learning"
    if not isinstance(name, str):
        raise SpecError(file, "kind", f"value = {name!r}: a spec kind's name; allowed: {', '.join(SPEC_KINDS.names())}")
    if name in RENAMED:
        raise SpecError(file, "kind", f"{name!r} was renamed {RENAMED[name]!r} (and its key protocol: is now "
                                      f"mechanism:)")
    if name not in SPEC_KINDS:
        raise SpecError(file, "kind", f"unknown spec kind {name!r}; allowed: {', '.join(SPEC_KINDS.names())}")
    return SPEC_KINDS.get(name)


def parse(raw: Any, file: str):
    """A validated spec of whichever kind ``raw`` names."""
    if not isinstance(raw, dict):
        raise SpecError(file, "", "a spec must be a YAML mapping")
    return kind_of(raw, file).parse(raw, file)


def load(path: str | Path):
    """The spec in a YAML file, of whichever kind it names."""
    return parse(read_yaml(path), str(path))


def kind_for(spec: Any) -> SpecKind:
    """The kind of a parsed spec."""
    return SPEC_KINDS.get(getattr(spec, "kind", "learning"))


def _eps_ldp(params: dict) -> dict:
    return {("eps_ldp" if k == "eps0" else k): v for k, v in params.items()}


def _renamed_eps_ldp(spec: dict) -> dict:
    sweep = spec["sweep"]
    return dict(spec, params=_eps_ldp(spec["params"]),
                sweep=dict(sweep, field="eps_ldp") if sweep["field"] == "eps0" else sweep)


def upgrade_results(results: Any, file: str) -> dict:
    """Results JSON of any version this code reads, as the current version (schema 1 -> 2: the learning kind is
    named with the neighbouring relation it checked, ``shuffle_protocol`` became ``mechanism`` with its ``protocol``
    key ``mechanism``, a privacy curve's local epsilon ``eps0`` is ``eps_ldp``); other versions or
    anything not a results file: a one-line SpecError."""
    if not isinstance(results, dict) or "schema" not in results or not isinstance(results.get("name"), str):
        raise SpecError(file, "", "not a results file written by `run` (a JSON object with schema and name)")
    version = results["schema"]
    if not isinstance(results.get("kind", "learning"), str):
        raise SpecError(file, "kind", f"value = {results['kind']!r}: not a spec kind's name")
    if version == 1:
        results = dict(results)
        kind = results.get("kind", "learning")
        results["kind"] = RENAMED.get(kind, kind)
        if kind == "learning":          # every schema-1 run checked its threat model's default relation
            results["spec"] = dict(results["spec"], threat_model=dict(results["spec"]["threat_model"],
                                                                      neighbouring=None))
            rel = THREAT_MODELS.get(results["spec"]["threat_model"]["kind"]).neighbouring
            results["neighbouring"] = None if rel is None else rel.as_dict() | {"text": rel.text}
        if kind == "privacy_curve":       # the local randomizer's epsilon: eps0 -> eps_ldp (one name per quantity)
            results["spec"] = _renamed_eps_ldp(results["spec"])
            results["points"] = [dict(pt, params=_eps_ldp(pt["params"])) for pt in results["points"]]
            if results["sweep"]["field"] == "eps0":
                results["sweep"] = dict(results["sweep"], field="eps_ldp")
        if kind == "comparison":          # its runs' own results, nested
            results["sweeps"] = [dict(sw, runs={k: upgrade_results(v, file) for k, v in sw["runs"].items()})
                                 for sw in results["sweeps"]]
        if kind == "shuffle_protocol":
            results["mechanism"] = results.pop("protocol")
            results["spec"] = dict(results["spec"], kind="mechanism")
            results["spec"]["mechanism"] = results["spec"].pop("protocol")
        results["schema"] = 2
    elif version != RESULTS_SCHEMA:
        raise SpecError(file, "schema", f"results schema {version!r}: this version reads 1 and {RESULTS_SCHEMA}")
    if not isinstance(results.get("kind"), str) or results["kind"] not in SPEC_KINDS:
        raise SpecError(file, "kind", f"unknown spec kind {results['kind']!r}; allowed: {', '.join(SPEC_KINDS.names())}")
    return results
