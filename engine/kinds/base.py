"""A spec kind as the registry holds it (engine/kinds/__init__.py): its model, how it runs and how its report is
written. The CLI, the loader, the renderer and the spec-suite test all dispatch through it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel


@dataclass(frozen=True)
class RunOptions:
    """How to run a spec (never what it claims): trials and seed override the spec's; the store and the executor
    are used by the kinds that run units of trials (``SpecKind.uses_store``)."""

    trials: int | None = None
    seed: int | None = None
    quick: bool = False
    progress: Callable[..., Callable[[int], None]] | None = None   # (points, per point[, what]) -> tick(k)
    store: Any = None
    executor: Any = None
    log: Callable[[str], None] | None = None


def no_extra_checks(spec: Any) -> list[str]:
    return []


def no_sub_results(results: dict) -> list[dict]:
    return []


def fits_anywhere(spec: Any, file: str) -> None:
    """A kind whose runs are small by construction."""


@dataclass(frozen=True)
class SpecKind:
    """``name``: the value of ``kind:`` in a spec ("learning" when the key is absent). ``parse(raw, file)`` -> the
    validated spec or a one-line SpecError; ``run(spec, options)`` -> the results dict (JSON-ready, with ``schema``
    and ``kind``); ``markdown(results, folder)`` -> the report's text (its plots written into ``folder``);
    ``headline(spec, results)`` -> what was run, in a few words; ``extra_checks(spec)`` -> ids of verdicts the spec
    decides besides its ``checks`` (a comparison's per-run checks); ``sub_results(results)`` -> results written
    next to these (a comparison's runs); ``fits_memory(spec, file)`` raises a one-line SpecError when the default
    run's estimated peak memory exceeds the limit (``validate`` calls it; ``run`` checks again at its trial count);
    ``work(spec, file)`` -> the default run's estimated seconds at least, or a one-line SpecError above the time limit
    (``validate --work`` calls it: it resolves every point's parameters; ``run`` always checks)."""

    name: str
    summary: str
    model: type[BaseModel]
    parse: Callable[[dict, str], Any]
    run: Callable[[Any, RunOptions], dict]
    markdown: Callable[[dict, Path], str]
    headline: Callable[[Any, dict], str]
    uses_store: bool = False
    extra_checks: Callable[[Any], list[str]] = no_extra_checks
    sub_results: Callable[[dict], list[dict]] = no_sub_results
    fits_memory: Callable[[Any, str], None] = fits_anywhere
    work: Callable[[Any, str], float] = lambda spec, file: 0.0

    def check_ids(self, spec: Any) -> list[str]:
        return [c.id for c in spec.checks] + self.extra_checks(spec)
