"""Comparison specs and the ordering check: the check's four verdicts on planted numbers, the spec's one-line
errors, and a small central-vs-local comparison end to end (its report too), with a planted fault that reverses
the order (the curator's noise multiplied) caught by the ordering check."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from engine import render
from engine.kinds.comparison import run as comparison
from engine.kinds.comparison.spec import parse_comparison
from engine.kinds.learning import spec as spec_mod
from tests.helpers import verdicts
from verifiers.checks import ordering
from verifiers.theorems import THEOREMS

CENTRAL, LOCAL = THEOREMS.get("central.cdp_rate"), THEOREMS.get("local.ldp_rate")
PARAMS = {"L": 1.0, "D": 2.0, "d": 10.0, "n": 1e5, "N": 1.0, "eps0": 0.25, "delta0": 1e-6}


def _check(better_risks, worse_risks, params=PARAMS, margin=10.0):
    pts = [("n = 1e5", ordering.Side(params, np.asarray(better_risks, float)),
            ordering.Side(params, np.asarray(worse_risks, float)))]
    return ordering.ordering(check_id="o", better="central", worse="local", better_thm=CENTRAL, worse_thm=LOCAL,
                             points=pts, margin=margin, confidence=0.95, variable="n")


def test_the_rates_predict_an_order_only_past_the_margin():
    ratio = ordering.capped_rate(LOCAL, PARAMS) / ordering.capped_rate(CENTRAL, PARAMS)
    # sqrt(d)/eps / (1 + sqrt(d)/(eps sqrt(n))) by hand
    assert ratio == pytest.approx((10**0.5 / 0.25) / (1 + 10**0.5 / (0.25 * 1e5**0.5)), rel=1e-12)
    assert _check([1, 1.1, 0.9], [2, 2.1, 1.9], margin=ratio * 1.01).verdict == "inapplicable"


def test_rates_are_capped_at_the_trivial_level():
    """Where F(w0) - F* is far below both rates, neither run can be predicted to do worse than the trivial output:
    no order is predicted however far apart the uncapped rates are."""
    tiny = PARAMS | {"Delta": 1e-4}
    assert ordering.capped_rate(LOCAL, tiny) == ordering.capped_rate(CENTRAL, tiny) == 1e-4
    assert _check([1, 1.1, 0.9], [2, 2.1, 1.9], params=tiny).verdict == "inapplicable"


def test_welch_degrees_of_freedom():
    """Satterthwaite's df: equal variances and sizes give 2(m - 1); a known Monte Carlo variance adds no df cost."""
    a, b = ordering.Side(PARAMS, np.array([0.0, 1.0, 2.0])), ordering.Side(PARAMS, np.array([1.0, 2.0, 3.0]))
    diff, se, df = ordering.welch(a, b)
    assert diff == 1.0 and se == pytest.approx((2 / 3) ** 0.5) and df == pytest.approx(4.0)


def test_ordering_verdicts():
    rng = np.random.default_rng(0)
    low, high = 0.01 + 0.001 * rng.standard_normal(20), 0.05 + 0.001 * rng.standard_normal(20)
    assert _check(low, high).verdict == "pass"
    assert _check(high, low).verdict == "fail"
    assert _check(low, low + 0.0001).verdict == "inconclusive"
    # a shared Monte Carlo error widens the test: the same gap becomes undecidable
    pts = [("n = 1e5", ordering.Side(PARAMS, low, mc_se=0.1), ordering.Side(PARAMS, high, mc_se=0.1))]
    res = ordering.ordering(check_id="o", better="central", worse="local", better_thm=CENTRAL, worse_thm=LOCAL,
                            points=pts, margin=10, confidence=0.95, variable="n")
    assert res.verdict == "inconclusive"


def _raw() -> dict:
    return {
        "name": "tiny_comparison", "kind": "comparison", "description": "central vs local, small",
        "privacy": {"epsilon": 0.1, "delta": 1e-6},
        "data": {"kind": "sphere_linear", "N": 1, "n": 200000, "d": 4, "radius": 1.0, "label_noise": 0.1,
                 "w_norm": 0.9},
        "loss": {"kind": "squared", "diameter": 2.0},
        "runs": [{"id": "central", "threat_model": "central", "algorithm": {"kind": "central_sgd"},
                  "rate_theorem": "central.cdp_rate", "checks": [{"id": "privacy", "kind": "privacy_accounting"}]},
                 {"id": "local", "threat_model": "local", "algorithm": {"kind": "local_sgd"},
                  "rate_theorem": "local.ldp_rate", "checks": [{"id": "privacy", "kind": "privacy_accounting"}]}],
        "sweeps": [{"field": "data.n", "values": [100000, 400000]}],
        "trials": 4, "seed": 3,
        "checks": [{"id": "central_below_local", "kind": "ordering", "better": "central", "worse": "local"}],
    }


@pytest.mark.parametrize("edit, where", [
    (lambda r: r["checks"][0].update(worse="shuffle"), "checks.0.worse"),
    (lambda r: r["runs"][1].update(silos=3), "runs.1.silos"),
    (lambda r: r["runs"][1].update(rate_theorem="central.cdp_rate"), "runs.1.rate_theorem"),
    (lambda r: r["data"].update(N=2), "data.N"),
    (lambda r: r.update(expect={"nope": "pass"}), "expect.nope"),
    (lambda r: r["runs"][0]["algorithm"].update(kind="local_sgd"), "runs.0.threat_model"),
    (lambda r: r["runs"][0]["checks"].append({"id": "x", "kind": "ldp_exact"}), "runs.0.checks.1.kind"),
])
def test_spec_errors_name_the_field(edit, where):
    raw = copy.deepcopy(_raw())
    edit(raw)
    with pytest.raises(spec_mod.SpecError) as e:
        parse_comparison(raw, "c.yaml")
    assert str(e.value).startswith(f"c.yaml: {where}"), str(e.value)


def test_small_comparison_end_to_end(tmp_path):
    spec = parse_comparison(_raw(), "c.yaml")
    res = comparison.run(spec)
    v = verdicts(res)
    assert v == {"central_below_local": "pass", "central_privacy_n": "pass", "local_privacy_n": "pass"}
    _, md = render.write(res, tmp_path)
    text = md.read_text()
    assert "central_below_local" in text and (tmp_path / "tiny_comparison_n.png").exists()
    assert (tmp_path / "tiny_comparison_local_n.md").exists()      # each run's own report


def test_a_reversed_order_fails(monkeypatch):
    """The planted fault: the curator's estimate of the mean gradient is biased by 0.5 e_1, so the central run
    settles away from the optimum and loses to the (saturated) local run: the ordering check must fail."""
    from algorithms import shuffle_sgd

    real = shuffle_sgd._sgd

    def biased(records, loss, *, release, **kw):
        def rel(g, exact):                               # central's batches are small here (b = 122 vs 1857)
            bias = np.zeros(g.shape[-1])
            bias[0] = 0.5 * g.shape[1] if g.shape[1] < 1000 else 0.0
            return release(g, exact) + bias
        return real(records, loss, release=rel, **kw)

    monkeypatch.setattr(shuffle_sgd, "_sgd", biased)
    assert verdicts(comparison.run(parse_comparison(_raw(), "c.yaml")))["central_below_local"] == "fail"
