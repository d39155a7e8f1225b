"""Seed 002's Lemmas B.1, B.2, C.1, C.2 (catalog/element_lemmas_002.py, verifiers/checks/element_lemmas.py): the
exact mis-ordering probability against a Monte Carlo, and a planted fault per check kind."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from catalog import element_lemmas_002 as cat
from verifiers.checks import element_lemmas as checks


class Check:
    def __init__(self, kind: str, confidence: float = 0.999):
        self.id, self.kind, self.confidence = kind, kind, confidence


P = {"d": 30, "s": 1.0, "m": 10, "n": 200, "eps": 1.0, "delta": 1e-5, "pairs": 10}


def _point(**kw):
    p = cat.LemmaParams.model_validate(P | kw).model_dump()
    return {"value": None} | cat.run_point(p, 5000, np.random.SeedSequence(1))


def test_misorder_probability_against_monte_carlo():
    rng = np.random.default_rng(0)
    n, a, b, sigma = 60, 0.3, 0.2, 1.5
    u = rng.random((200_000, n))
    S = (u < a).sum(axis=1) - ((u >= a) & (u < a + b)).sum(axis=1)
    mc = np.mean(S + rng.normal(0, sigma * math.sqrt(2), S.size) < 0)
    exact = cat.misorder_probability(n, a, b, sigma)
    assert abs(mc - exact) < 5 * math.sqrt(exact * (1 - exact) / S.size)


def test_honest_lemmas_pass():
    pt = _point()
    for name in ("lemma_b1", "lemma_b2", "lemma_c1", "lemma_c2"):
        assert getattr(checks, name)(Check(name), "element_lemmas", [pt]).verdict == "pass", name


def test_a_wrong_moment_formula_is_caught_by_lemma_b1():
    pt = _point()
    for r in pt["b1"]["moments"]:
        if r["what"].startswith("E Y_0") and "Y_" not in r["what"][4:]:
            r["formula"] = r["formula"] * 0.9               # q_j taken as 0.9 of itself
    assert checks.lemma_b1(Check("lemma_b1"), "element_lemmas", [pt]).verdict == "fail"


def test_a_tighter_bound_is_caught_by_lemma_b2():
    pt = _point()
    for r in pt["b2"]:
        r["bound"] = r["exact"] / 2                          # a claim below the truth
    assert checks.lemma_b2(Check("lemma_b2"), "element_lemmas", [pt]).verdict == "fail"


def test_c1_with_a_smaller_constant_is_caught_by_lemma_c1():
    pt = _point()
    for r in pt["c1"]:
        if "4P" in r["case"]:
            r["bound"] = r["bound"] / 4                      # 2P(X >= l) <= P(X = l): false
    assert checks.lemma_c1(Check("lemma_c1"), "element_lemmas", [pt]).verdict == "fail"


def test_c2_without_3_log_m_is_caught_by_lemma_c2():
    """l = 3mp + t (no 3 log m): the point mass at l exceeds p 2^-t somewhere on the grid."""
    bad = []
    for m in cat.C_M:
        for pp in cat.C_P:
            for t in cat.C2_T:
                L = math.ceil(3 * m * pp + t)
                if L <= m:
                    bad.append({"case": f"m {m} p {pp} t {t}", "exact": float(stats.binom.pmf(L, m, pp)),
                                "bound": pp * 2.0**-t})
    pt = _point()
    pt["c2"] = bad
    assert checks.lemma_c2(Check("lemma_c2"), "element_lemmas", [pt]).verdict == "fail"


def test_params_refused():
    with pytest.raises(ValueError):
        cat.LemmaParams.model_validate(P | {"m": 0})
    with pytest.raises(ValueError, match="n\\^2"):
        cat.rules(cat.LemmaParams.model_validate(P | {"n": 20000}).model_dump())
