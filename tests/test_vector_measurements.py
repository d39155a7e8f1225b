"""A measurement may be a vector per trial (for example the released model, or seed 002's sqrt(n)(theta_bar -
theta*)): it is stored and reloaded exactly, reaches the checks as a (trials, k) array and the DataFrame as one
array per trial."""
from __future__ import annotations

import json

import numpy as np

import engine
from engine.kinds.learning import runner
from engine.store import Store
from tests.helpers import tiny_mbsgd


def _unit(spec, trials=(0, 1, 2)) -> runner.Unit:
    return runner.Unit(spec.model_dump(mode="json"), 0, None, tuple(trials), spec.seed, ("model",))


def test_a_vector_measurement_is_stored_and_reloaded_bit_for_bit(tmp_path):
    spec = tiny_mbsgd()
    out = runner.run_unit(_unit(spec))
    model = [out["trials"][t]["m"]["model"] for t in (0, 1, 2)]
    assert all(isinstance(v, list) and len(v) == 5 for v in model)            # d = 5
    store = Store(tmp_path / "s.sqlite")
    store.put("k", out["info"], out["trials"])
    back = store.trials("k", range(3))
    store.close()
    assert [back[t]["m"]["model"] for t in (0, 1, 2)] == model                 # float64 through JSON: exact
    point = runner.assemble_point(None, out["info"], [back[t] for t in (0, 1, 2)])
    arr = np.asarray(point["measurements"]["model"])
    assert arr.shape == (3, 5) and arr.dtype == np.float64
    # the same trials computed again, in another batch, give the same vectors (per-trial streams)
    again = runner.run_unit(_unit(spec, trials=(2, 0)))
    assert again["trials"][0]["m"]["model"] == model[0] and again["trials"][2]["m"]["model"] == model[2]


def test_load_results_gives_one_array_per_trial(tmp_path):
    spec = tiny_mbsgd()
    out = runner.run_unit(_unit(spec))
    point = runner.assemble_point(None, out["info"], [out["trials"][t] for t in (0, 1, 2)])
    results = {"name": "v", "sweep": None, "points": [point], "checks": [], "seed": 0, "code_version": "-",
               "command": "-"}
    path = tmp_path / "v.json"
    path.write_text(json.dumps(results))
    df = engine.load_results(path)
    assert len(df) == 3 and df["model"].iloc[1].shape == (5,)
    assert np.array_equal(df["model"].iloc[1], np.asarray(point["measurements"]["model"][1]))
