"""Seed 003's privacy parameters by general composition (catalog/darrm_composition_003.py,
verifiers/accountants/darrm_composition.py, verifiers/checks/darrm_composition.py): Thm 3.3.3 evaluated by hand at one
point, the exact optimum against a brute force over the privacy-loss values of k-fold randomized response, clean
runs that pass, and planted faults (a dropped term of Thm 3.3.3's minimum, caught by the printed numbers; sqrt(k) for
sqrt(2k), caught by the comparison with the exact optimum; an off-by-one fold count in the exact optimum, caught by
the PLD cross-check)."""
from __future__ import annotations

import copy
import itertools
import math

import pytest

from engine.kinds.mechanism import run as mechanism_run
from engine.kinds.mechanism.spec import parse_mechanism
from tests.helpers import raw, verdicts
from verifiers.accountants import darrm_composition as dc
from verifiers.checks import element_composition


def _spec(name: str, values: list[int] | None = None, **params):
    r = copy.deepcopy(raw(name))
    r["params"].update(params)
    if values is not None and len(values) == 1:
        r["params"][r["sweep"]["field"]] = values[0]
        r["sweep"] = None
    elif values is not None:
        r["sweep"] = {"field": r["sweep"]["field"], "values": values}
    r["expect"], r["expect_quick"] = {}, {}
    return parse_mechanism(r, "t.yaml")


def test_theorem_3_3_3_by_hand_at_table_b1s_first_column():
    """K = 35 (tau) and M = 10 (m) at eps = 0.1, delta' = 0.1, the three terms written out (L819)."""
    e, dp_ = 0.1, 0.1
    for k, printed in ((10, 6.4521), (35, 14.0328)):
        drift = (math.exp(e) - 1) * e * k / (math.exp(e) + 1)
        want = min(k * e, drift + e * math.sqrt(2 * k * math.log(math.e + math.sqrt(k * e * e) / dp_)),
                   drift + e * math.sqrt(2 * k * math.log(1 / dp_)))
        assert dc.general_epsilon(e, k, dp_)[0] == pytest.approx(want, rel=1e-14)
        assert round(want / e, 4) == printed
    assert dc.general_delta(1e-5, 35, 0.1) == pytest.approx(1 - (1 - 1e-5) ** 35 * 0.9, rel=1e-12)


@pytest.mark.parametrize("eps,k,dp_", [(0.3, 6, 0.05), (0.1, 9, 0.2)])
def test_exact_optimum_against_every_outcome_of_k_fold_randomized_response(eps, k, dp_):
    """delta_RR(E) = sum over the 2^k output vectors of (P(o) - e^E Q(o))_+ for eps-RR on each of k bits (P: every bit 1
    w.p. e^eps/(1+e^eps); Q the reverse); the optimum is the smallest E with delta_RR(E) <= delta'."""
    p = math.exp(eps) / (1 + math.exp(eps))

    def brute(E: float) -> float:
        tot = 0.0
        for o in itertools.product((0, 1), repeat=k):
            ones = sum(o)
            P = p ** ones * (1 - p) ** (k - ones)
            Q = (1 - p) ** ones * p ** (k - ones)
            tot += max(P - math.exp(E) * Q, 0.0)
        return tot

    E = dc.exact_epsilon(eps, k, dp_)
    assert brute(E) <= dp_ * (1 + 1e-9)
    assert E == 0 or brute(E * (1 - 1e-6)) > dp_ or brute(E - 1e-9) > dp_ * (1 - 1e-9)


def test_clean_runs_pass_and_cite_the_tables():
    res = mechanism_run.run(_spec("darrm_table_b1"))
    assert verdicts(res) == {"table_b1": "pass", "thm3_3_3": "pass"}
    assert res["checks"][0]["claims"] == ["003 Table B.1 / Fig. B.4"] and res["checks"][1]["claims"] == ["003 Thm 3.3.3"]
    res = mechanism_run.run(_spec("darrm_query_totals"))
    assert verdicts(res) == {"totals": "pass", "thm3_3_3": "pass"}
    assert res["checks"][0]["claims"] == ["003 Table B.3", "003 Table 3.2", "003 Table B.5", "003 Table B.7"]


def test_points_off_the_tables_setting_are_not_judged():
    res = mechanism_run.run(_spec("darrm_table_b1", [11, 12], eps=0.2))
    assert verdicts(res)["table_b1"] == "inapplicable"
    assert "not Table B.1's setting" in res["checks"][0]["summary"]


def test_a_dropped_term_of_the_minimum_is_caught_by_darrm_printed_numbers(monkeypatch):
    """Thm 3.3.3 without its log(e + sqrt(k eps^2)/delta') term: m at M = 10 becomes 7.286, not the printed 6.4521."""
    real = dc.general_epsilon

    def two_terms(eps, k, delta_prime):
        drift = math.expm1(eps) * eps * k / (math.exp(eps) + 1)
        return min(k * eps, drift + eps * math.sqrt(2 * k * math.log(1 / delta_prime))), 0

    assert real(0.1, 10, 0.1)[0] < two_terms(0.1, 10, 0.1)[0]
    monkeypatch.setattr(dc, "general_epsilon", two_terms)
    res = mechanism_run.run(_spec("darrm_table_b1"))
    assert verdicts(res)["table_b1"] == "fail"
    assert "printed 6.4521" in res["checks"][0]["summary"]


def test_sqrt_k_for_sqrt_2k_is_caught_by_darrm_general_composition(monkeypatch):
    """Thm 3.3.3 with sqrt(k log(1/delta')) in place of sqrt(2k log(1/delta')): at delta' = 1e-4 its eps' falls below
    the optimal composition (e.g. MNIST, m = 3, Q = 50: 7.52 < 7.95)."""
    def half(eps, k, delta_prime):
        drift = math.expm1(eps) * eps * k / (math.exp(eps) + 1)
        return min(k * eps, drift + eps * math.sqrt(k * math.log(1 / delta_prime))), 0

    monkeypatch.setattr(dc, "general_epsilon", half)
    res = mechanism_run.run(_spec("darrm_query_totals", [3]))
    assert verdicts(res)["thm3_3_3"] == "fail"
    assert "below the optimal" in res["checks"][1]["summary"]


def test_an_off_by_one_fold_count_in_the_exact_optimum_is_caught_by_the_pld_cross_check(monkeypatch):
    monkeypatch.setattr(dc, "rr_epsilon", lambda eps, k, d: element_composition.rr_epsilon(eps, k - 1, d))
    res = mechanism_run.run(_spec("darrm_table_b1", [10]))
    assert verdicts(res)["thm3_3_3"] == "fail"
    assert "disagree" in res["checks"][1]["summary"]
