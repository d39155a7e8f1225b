"""The mechanism kind (``kind: mechanism``): a registered mechanism run many times on fixed inputs, with exact
privacy, unbiasedness and error checks."""
from __future__ import annotations

from engine.kinds.base import RunOptions, SpecKind
from engine.kinds.mechanism import run
from engine.kinds.mechanism.report import report
from engine.kinds.mechanism.spec import ProtocolSpec, parse_mechanism


def _run(spec: ProtocolSpec, o: RunOptions) -> dict:
    return run.run(spec, quick=o.quick, progress=o.progress)


def _headline(spec: ProtocolSpec, results: dict) -> str:
    return f"{len(results['points'])} point(s) x {results['trials']} runs"


KIND = SpecKind(name="mechanism", summary="a mechanism run many times on fixed inputs (seed 000's P_1D, P_VEC)",
                model=ProtocolSpec, parse=parse_mechanism, run=_run, markdown=report, headline=_headline)
