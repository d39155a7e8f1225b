"""The mechanism kind (``kind: mechanism``): a mechanism of the registry ``catalog.MECHANISMS`` run many times on
fixed or generated inputs, with the exact-privacy, audit, unbiasedness and error checks its entry allows."""
from __future__ import annotations

from engine.kinds.base import RunOptions, SpecKind
from engine.kinds.mechanism import run
from engine.kinds.mechanism.report import report
from engine.kinds.mechanism.spec import MechanismSpec, parse_mechanism


def _run(spec: MechanismSpec, o: RunOptions) -> dict:
    return run.run(spec, quick=o.quick, progress=o.progress, executor=o.executor)


def _headline(spec: MechanismSpec, results: dict) -> str:
    return f"{len(results['points'])} point(s) x {results['trials']} runs"


KIND = SpecKind(name="mechanism", summary="a registered mechanism (catalog.MECHANISMS) run many times at each point",
                model=MechanismSpec, parse=parse_mechanism, run=_run, markdown=report, headline=_headline)
