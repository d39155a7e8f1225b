"""The paper_value curve check (verifiers/checks/curves.py) and seed 001's Figure 3 epsilons
(specs/shuffle_mnist_privacy.yaml): the check passes on a value computed independently of the code under test, fails
on a planted scaled curve and on a planted wrong paper value, is inapplicable (whatever the curve) where the paper
states no swept value, and its spec fields are validated in one line naming the field.

The reference for Thm 1 + Lemma 1 at seed 001's MNIST setting is computed here, from the printed formulas (seed 001
L143-147, L80-82), in 50-digit mpmath with plain binomials and powers: no log space, no closed forms, none of
verifiers/accountants/subsampled_shuffle.py."""
from __future__ import annotations

import copy
import functools

import mpmath as mp
import pytest
import yaml

from engine import kinds
from engine.kinds.curve import run as curves
from engine.kinds.curve.spec import parse_curve
from engine.kinds.learning import spec as spec_mod
from tests.helpers import ROOT
from verifiers.accountants import shuffle_baselines, subsampled_shuffle

SPEC = ROOT / "specs" / "shuffle_mnist_privacy.yaml"
BASE = yaml.safe_load(SPEC.read_text())
K, N, EPS0, DELTA = 10000, 60000, 1.5, 1e-5
CLAIM = "001 Fig. 3 (ε values)"


@functools.cache
def thm1_reference(T: int, top: int = 40) -> float:
    """Thm 1 (L143-147) composed over T rounds and converted by Lemma 1 (L80-82), min over integer orders 2..top
    (the optimum at the MNIST setting is 6 or 7, well inside), in mpmath at 50 digits."""
    with mp.workdps(50):
        g, e0 = mp.mpf(K) / N, mp.mpf(EPS0)
        kbar = mp.floor((K - 1) / (2 * mp.e ** e0)) + 1
        x = (mp.e ** (2 * e0) - 1) / mp.e ** e0
        best = None
        for lam in range(2, top + 1):
            s = 1 + 4 * mp.binomial(lam, 2) * g ** 2 * (mp.e ** e0 - 1) ** 2 / (kbar * mp.e ** e0)
            for j in range(3, lam + 1):
                s += (mp.binomial(lam, j) * g ** j * j * mp.gamma(mp.mpf(j) / 2)
                      * (2 * (mp.e ** (2 * e0) - 1) ** 2 / (kbar * mp.e ** (2 * e0))) ** (mp.mpf(j) / 2))
            s += ((1 + g * x) ** lam - 1 - lam * g * x) * mp.e ** (-(K - 1) / (8 * mp.e ** e0))
            eps = (T * mp.log(s) / (lam - 1)
                   + (mp.log(1 / mp.mpf(DELTA)) + (lam - 1) * mp.log(1 - mp.mpf(1) / lam) - mp.log(lam)) / (lam - 1))
            best = eps if best is None or eps < best else best
        return float(best)


def _spec(checks: list[dict], baselines: list[dict] | None = None, values=(600, 1200)):
    raw = copy.deepcopy(BASE)
    raw["sweep"] = {"field": "T", "values": list(values)}
    raw["baselines"] = baselines or []
    raw["checks"] = checks
    raw["expect"], raw["paper"] = {}, []
    return parse_curve(raw, "fig3.yaml")


def _check(cid: str, epsilon: float, tol: float, curve: str = "thm1", at: float | None = 1200, **extra) -> dict:
    c = {"id": cid, "kind": "paper_value", "curve": curve, "epsilon": epsilon, "tol": tol, "claims": [CLAIM],
         "source": "test", **extra}
    if at is not None:
        c.update(at=at, at_source="test")
    return c


def _verdicts(res: dict) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in res["checks"]}


def test_our_thm1_curve_agrees_with_the_independent_reference():
    """Where the spec's thm1_at_90 fails (3.086 against the paper's 2.91), the curve is not our bug: it is the printed
    theorem, evaluated independently, to 1e-9."""
    for T in (1067, 1200):
        ours = subsampled_shuffle.epsilon("upper", k=K, n=N, eps0=EPS0, T=T, delta=DELTA).epsilon
        assert ours == pytest.approx(thm1_reference(T), rel=1e-9)
    assert thm1_reference(1200) > 2.91 * (1 + 0.0035)            # the spec's tolerance cannot absorb it


def test_paper_value_fails_on_a_planted_scaled_curve_and_a_wrong_paper_value(monkeypatch):
    ref = thm1_reference(1200)
    checks = [_check("right", round(ref, 3), 0.0005),                # printed to 4 digits: one unit = 0.001/3.086
              _check("wrong_value", round(ref * 1.01, 3), 0.0005)]    # a planted wrong paper value, 1% off
    res = curves.run(_spec(checks))
    assert _verdicts(res) == {"right": "pass", "wrong_value": "fail"}
    right = res["checks"][0]
    assert right["measured"] == pytest.approx(ref, rel=1e-9) and right["bound"] == round(ref, 3)
    assert right["confidence"] == 1.0 and right["claims"] == [CLAIM] and CLAIM in right["citation"]
    # a planted fault in the accountant: every order's RDP 3% too large (e.g. a slip in gamma = k/n)
    up = subsampled_shuffle.rdp_upper
    monkeypatch.setattr(subsampled_shuffle, "rdp_upper", lambda lam, **kw: 1.03 * up(lam, **kw))
    res = curves.run(_spec(checks))
    assert _verdicts(res)["right"] == "fail"
    assert res["checks"][0]["measured"] > ref * (1 + 0.0005)


def test_paper_value_without_a_stated_swept_value_is_inapplicable_whatever_the_curve(monkeypatch):
    checks = [_check("unstated", 1.4, 0.072, at=None, at_unstated="the seed prints no round for it")]
    res = curves.run(_spec(checks, values=(120, 300, 1200)))
    ch = res["checks"][0]
    assert ch["verdict"] == "inapplicable" and ch["measured"] is None and ch["bound"] == 1.4
    assert "states no swept value" in ch["summary"] and "the seed prints no round for it" in ch["summary"]
    assert "between the swept values 120 and 300" in ch["summary"]     # for information, never a verdict
    monkeypatch.setattr(subsampled_shuffle, "rdp_upper", lambda lam, **kw: 0.0)
    assert curves.run(_spec(checks, values=(120, 300, 1200)))["checks"][0]["verdict"] == "inapplicable"


def test_paper_value_reads_the_baseline_it_names(monkeypatch):
    """The check judges the named baseline's curve, not Thm 1's: scaling that baseline (a planted fault in its KOV
    composition) moves its verdict and leaves the Thm 1 check alone."""
    base = [{"name": "fmt_kov", "convention": "as_stated"}]
    checks = [_check("base", 4.82, 0.0021, curve="fmt_kov:as_stated"), _check("thm1", round(thm1_reference(1200), 3), 0.0005)]
    res = curves.run(_spec(checks, base))
    assert _verdicts(res) == {"base": "fail", "thm1": "pass"}
    ours = res["checks"][0]["measured"]
    kov = shuffle_baselines.kov
    monkeypatch.setattr(shuffle_baselines, "kov", lambda eps, T, dt: 4.82 / ours * kov(eps, T, dt))
    res = curves.run(_spec(checks, base))
    assert _verdicts(res) == {"base": "pass", "thm1": "pass"}


def test_the_shipped_fig3_spec_records_its_verdicts_and_numbers():
    spec = kinds.load(SPEC)
    res = curves.run(spec)
    assert _verdicts(res) == spec.expect
    by = {c["id"]: c for c in res["checks"]}
    assert by["thm1_at_90"]["measured"] == pytest.approx(thm1_reference(1200), rel=1e-9)
    assert by["thm1_at_90"]["bound"] == 2.91 and by["base_fmt_at_90"]["bound"] == 4.82
    assert by["thm1_at_80"]["verdict"] == "inapplicable"
    assert all(c["claims"] == [CLAIM] for c in res["checks"] if c["kind"] == "paper_value")


# --------------------------------------------------------------------------------------------------------------
# spec validation: one line naming the field

def _error(check: dict) -> str:
    raw = copy.deepcopy(BASE)
    raw["checks"] = [raw["checks"][0], check]
    raw["expect"] = {}
    with pytest.raises(spec_mod.SpecError) as info:
        parse_curve(raw, "c.yaml")
    msg = str(info.value)
    assert "\n" not in msg
    return msg


GOOD = {"id": "v", "kind": "paper_value", "curve": "thm1", "epsilon": 2.91, "tol": 0.0035, "at": 1200,
        "at_source": "L197", "source": "L205", "claims": [CLAIM]}


@pytest.mark.parametrize("field", ["curve", "epsilon", "tol", "source", "at_source"])
def test_a_missing_paper_value_field_is_named(field):
    check = {k: v for k, v in GOOD.items() if k != field}
    msg = _error(check)
    assert msg.startswith(f"c.yaml: checks.1.{field}: a paper_value check ") and f"needs {field}" in msg


def test_paper_value_field_rules():
    no_at = {k: v for k, v in GOOD.items() if k not in ("at", "at_source")}
    assert _error(no_at).startswith("c.yaml: checks.1.at: a paper_value check needs at")
    assert _error({**GOOD, "at_unstated": "why"}).startswith("c.yaml: checks.1.at_unstated: give at")
    assert _error({**GOOD, "at": 1000}).startswith("c.yaml: checks.1.at: 1000.0 is not one of the sweep values")
    assert _error({**GOOD, "curve": "rdp_shuffle:as_stated"}).startswith("c.yaml: checks.1: unknown curve")
    assert _error({**GOOD, "ratio": 2}).startswith("c.yaml: checks.1.ratio: a paper_value check takes no ratio")
    assert _error({**GOOD, "tol": 1.5}).startswith("c.yaml: checks.1.tol:")
    assert _error({**GOOD, "epsilon": -1}).startswith("c.yaml: checks.1.epsilon:")
    claimless = {k: v for k, v in GOOD.items() if k != "claims"}
    assert _error(claimless).startswith("c.yaml: checks.1.claims:")
    assert _error({**GOOD, "claims": ["001 Fig. 3 (e values)"]}).startswith("c.yaml: checks.1.claims")
    raw = copy.deepcopy(BASE)
    raw["checks"] = [raw["checks"][0], GOOD, {**no_at, "id": "w", "at_unstated": "not printed"}]
    raw["expect"] = {}
    assert [c.kind for c in parse_curve(raw, "c.yaml").checks] == ["bounds_ordered", "paper_value", "paper_value"]


def test_ratio_claim_keeps_its_default_tolerance():
    from verifiers.checks.curves import RATIO_TOL
    raw = copy.deepcopy(BASE)
    raw["baselines"] = [{"name": "fmt_kov", "convention": "as_stated"}]
    raw["checks"] = [{"id": "r", "kind": "ratio_claim", "curve": "fmt_kov:as_stated", "at": 1200, "ratio": 1.0,
                      "claims": [CLAIM]}]
    raw["expect"] = {}
    spec = parse_curve(raw, "c.yaml")
    assert spec.checks[0].tol is None and RATIO_TOL == 0.15
