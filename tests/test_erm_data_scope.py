"""Mode erm's synthetic data set: one per sweep point when the sweep changes the data (data.n here), one for the
whole sweep when it does not (threat_model.epsilon), so that an eps0 sweep compares the algorithm on one fixed X
(seed 004's Thm 4.1 is about one data set) and only the algorithm's randomness differs between its points."""
from __future__ import annotations

import copy
import json

import numpy as np

from engine.kinds.learning import runner
from engine.kinds.learning import spec as spec_mod
from tests.helpers import raw


def _points(sweep: dict) -> list:
    r = copy.deepcopy(raw("erm_strongly_convex"))
    r["data"] |= {"N": 3, "n": 20}
    r["sweep"] = sweep
    r["checks"] = [c for c in r["checks"] if c["kind"] != "rate"]
    r["expect"], r["expect_quick"] = {}, {}
    spec = spec_mod.parse(r, "scope.yaml")
    out = []
    for v in spec.sweep.values:
        pspec = runner._point_spec(spec, v)
        out.append(runner._problem(json.dumps(pspec.model_dump(mode="json"), sort_keys=True), 11, v)[1])
    return out


def test_an_eps_sweep_sees_one_data_set():
    p, q = _points({"field": "threat_model.epsilon", "values": [0.5, 2.0]})
    assert p.fixed is not None and q.fixed is not None
    assert np.array_equal(p.fixed[0], q.fixed[0]) and np.array_equal(p.fixed[1], q.fixed[1])
    assert p.consts["Delta"] == q.consts["Delta"]
    assert "drawn once for the whole sweep" in p.note


def test_an_n_sweep_draws_a_data_set_per_point():
    p, q = _points({"field": "data.n", "values": [20, 21]})
    assert p.fixed[0].shape == (3, 20, 2) and q.fixed[0].shape == (3, 21, 2)
    assert not np.allclose(p.fixed[0][:, :20], q.fixed[0][:, :20])     # not a prefix of one draw: its own stream
    assert "drawn anew at every sweep point" in p.note


def test_the_store_key_tells_the_two_apart():
    """A point of an eps sweep and the same point of an n sweep hold different data: their keys differ."""
    r = copy.deepcopy(raw("erm_strongly_convex"))
    r["checks"] = [c for c in r["checks"] if c["kind"] != "rate"]
    r["expect"], r["expect_quick"] = {}, {}
    a = spec_mod.parse(r | {"sweep": {"field": "threat_model.epsilon", "values": [1.0, 2.0]}}, "a.yaml")
    b = spec_mod.parse(r | {"sweep": {"field": "data.n", "values": [1.0, 236]}}, "b.yaml")
    assert runner.point_key(a, 1.0, 5, ("x",), "c") != runner.point_key(b, 1.0, 5, ("x",), "c")
