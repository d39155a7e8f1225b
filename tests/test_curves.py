"""Privacy-curve specs: loading, errors, the ordering check (and that it can fail), the report."""
from __future__ import annotations

import copy

import pytest
import yaml

from engine import kinds, render
from engine.kinds.curve import run as curves
from engine.kinds.curve.spec import parse_curve
from engine.kinds.learning import spec as spec_mod
from tests.helpers import ROOT
from verifiers.accountants import subsampled_shuffle

BASE = yaml.safe_load((ROOT / "specs" / "shuffle_mnist_privacy.yaml").read_text())


def _bad(**change):
    raw = copy.deepcopy(BASE)
    for key, value in change.items():
        if isinstance(value, dict):
            raw[key] = {**raw.get(key, {}), **value}
        else:
            raw[key] = value
    with pytest.raises(spec_mod.SpecError) as info:
        parse_curve(raw, "c.yaml")
    return str(info.value)


def test_curve_spec_errors_name_the_field():
    assert _bad(params={"k": 70000}).startswith("c.yaml: sweep.values:")          # k > n
    assert _bad(params={"delta": 2}).startswith("c.yaml: params.delta:")
    assert _bad(checks=[{"id": "x", "kind": "bounds_orderd"}]).startswith("c.yaml: checks.0.kind:")
    assert "did you mean 'bounds_ordered'" in _bad(checks=[{"id": "x", "kind": "bounds_orderd"}])
    assert _bad(sweep={"field": "q", "values": [1, 2]}).startswith("c.yaml: sweep.field:")
    assert _bad(colour="red").startswith("c.yaml: colour: unknown key")


def test_curve_run_report_and_paper_values(tmp_path):
    spec = kinds.load(ROOT / "specs" / "shuffle_mnist_privacy.yaml")
    res = curves.run(spec)
    assert res["checks"][0]["verdict"] == "pass"
    last = res["points"][-1]
    assert last["value"] == 1200 and last["lower"]["epsilon"] < last["upper"]["epsilon"]
    t = res["paper"][0]["rounds_for_it"]                        # the most rounds within the paper's 2.91
    p = spec.point(t)
    at = lambda T: subsampled_shuffle.epsilon("upper", k=p["k"], n=p["n"], eps0=p["eps_ldp"], T=T, delta=p["delta"]).epsilon  # noqa: E731
    assert 0 < t < 1200 and at(t) <= 2.91 < at(t + 1)
    json_path, md = render.write(res, tmp_path)
    text = md.read_text()
    assert "The paper's numbers next to ours" in text and (tmp_path / "shuffle_mnist_privacy.png").is_file()


def test_bounds_ordered_fails_when_the_bounds_are_swapped(monkeypatch):
    """A planted fault: the two theorems' functions exchanged. The check must see it."""
    up, low = subsampled_shuffle.rdp_upper, subsampled_shuffle.rdp_lower
    monkeypatch.setattr(subsampled_shuffle, "rdp_upper", low)
    monkeypatch.setattr(subsampled_shuffle, "rdp_lower", up)
    res = curves.run(kinds.load(ROOT / "specs" / "shuffle_fig2c.yaml"))
    assert res["checks"][0]["verdict"] == "fail"
