"""The mechanism kind (``kind: mechanism``): a mechanism of the registry ``catalog.MECHANISMS`` run many times on
fixed or generated inputs, with the exact-privacy, audit, unbiasedness and error checks its entry allows."""
from __future__ import annotations

from engine.kinds.base import RunOptions, SpecKind
from engine.kinds.mechanism import run
from engine.kinds.mechanism.report import report
from engine.kinds.mechanism.spec import MechanismSpec, parse_mechanism
from engine.specbase import SpecError


def _run(spec: MechanismSpec, o: RunOptions) -> dict:
    """``--seed`` and ``--trials`` replace the spec's (the report's spec shows the values run); an explicit
    ``--trials`` is run as given, also in ``--quick`` mode."""
    if o.trials is not None and not 100 <= o.trials <= 10**7:
        raise SpecError("command line", "--trials", f"{o.trials}: a mechanism spec runs 100 .. 10^7 trials per point")
    update = {k: v for k, v in (("seed", o.seed), ("trials", o.trials)) if v is not None}
    if update:
        spec = spec.model_copy(update=update)
    return run.run(spec, quick=o.quick and o.trials is None, progress=o.progress, executor=o.executor)


def _headline(spec: MechanismSpec, results: dict) -> str:
    return f"{len(results['points'])} point(s) x {results['trials']} runs"


KIND = SpecKind(name="mechanism", summary="a registered mechanism (catalog.MECHANISMS) run many times at each point",
                model=MechanismSpec, parse=parse_mechanism, run=_run, markdown=report, headline=_headline)
