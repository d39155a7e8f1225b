"""The privacy-curve kind (``kind: privacy_curve``): an accountant's epsilon as a function of one parameter."""
from __future__ import annotations

from engine.kinds.base import RunOptions, SpecKind
from engine.kinds.curve import run
from engine.kinds.curve.report import report
from engine.kinds.curve.spec import CurveSpec, parse_curve


def _run(spec: CurveSpec, o: RunOptions) -> dict:
    return run.run(spec, progress=o.progress)


def _headline(spec: CurveSpec, results: dict) -> str:
    return f"{len(results['points'])} point(s)"


KIND = SpecKind(name="privacy_curve", summary="an accountant's epsilon against one parameter, no learning run",
                model=CurveSpec, parse=parse_curve, run=_run, markdown=report, headline=_headline)
