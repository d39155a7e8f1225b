"""Every parameter a learning run resolves has a source (issue 16: "every parameter with its source, none missing"):
the problem's constants, the resolver's calibration, or the spec itself (engine/kinds/learning/provenance.py). Checked
at each shipped learning spec's first sweep point, as the runner records it."""
from __future__ import annotations

import numpy as np
import pytest

from engine import kinds
from engine.kinds.learning import problem
from engine.kinds.learning.runner import point_provenance, problem_seed, resolve_point
from engine.kinds.learning.spec import with_value
from tests.helpers import SPECS

LEARNING = [p for p in SPECS if getattr(kinds.load(p), "kind", "learning") == "learning"]


@pytest.mark.parametrize("path", LEARNING, ids=[p.stem for p in LEARNING])
def test_every_resolved_parameter_has_a_source(path):
    spec = kinds.load(path)
    if spec.sweep is not None:
        spec = with_value(spec, spec.sweep.field, min(spec.sweep.values))
    prob = problem.build(spec, problem_seed(spec.seed), np.random.default_rng(0))
    _, res = resolve_point(spec, prob)
    sources = point_provenance(spec.model_dump(), prob, res)
    missing = [k for k in res.params if not sources.get(k)]
    assert not missing, f"{path.name}: no source for {missing}"
