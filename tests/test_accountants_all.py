"""`python -m engine privacy ... --accountant all`: every accountant that applies, side by side, against closed
forms (Balle & Wang's exact Gaussian) and the orderings that must hold (RDP's conversion is never below the PLD's
pessimistic figure; the PLD's optimistic and pessimistic discretisations bracket the truth)."""
from __future__ import annotations

import json

import pytest

from engine.cli import main
from verifiers.accountants import calculator


def test_gaussian_rows_agree_with_the_exact_form():
    rows = calculator.all_accountants("gaussian", sigma=2.0, T=4, delta=1e-5)
    by = {r["accountant"].split(" ")[0]: r for r in rows}
    exact = by["exact"]["epsilon"]
    lo, hi = by["PLD"]["range"]
    assert lo - 1e-9 <= exact <= hi + 1e-9 and hi - lo < 1e-3
    assert by["RDP"]["epsilon"] >= hi


def test_poisson_subsampled_gaussian_rows_are_ordered():
    rows = calculator.all_accountants("subsampled-gaussian", sigma=1.1, q=0.01, T=200, delta=1e-5)
    rdp, pld, rep = rows
    assert rdp["neighbours"] == pld["neighbours"] == "add/remove"
    assert pld["range"][0] <= pld["epsilon"] <= rdp["epsilon"]
    assert "unavailable" in rep and rep["neighbours"] == "replace-one"


def test_delta_at_epsilon_rows():
    rows = calculator.all_accountants("gaussian", sigma=3.0, T=1, eps=1.0)
    exact = rows[-1]["delta"]
    lo, hi = rows[1]["range"]
    assert lo - 1e-12 <= exact <= hi + 1e-12


def test_cli_all_json_and_text(capsys):
    assert main(["privacy", "subsampled-gaussian", "--sigma", "1.1", "--k", "100", "--n", "10000", "--T", "50",
                 "--delta", "1e-5", "--accountant", "all", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["neighbours"] for r in out["accountants"]] == ["replace-one", "replace-one"]
    assert main(["privacy", "gaussian", "--sigma", "2", "--delta", "1e-5", "--accountant", "all"]) == 0
    text = capsys.readouterr().out
    assert "exact (Balle & Wang" in text and "range" in text


@pytest.mark.parametrize("argv", [["privacy", "subsampled-gaussian", "--sigma", "1", "--delta", "1e-5",
                                   "--accountant", "all"]])
def test_cli_all_refuses_missing_sampling(capsys, argv):
    assert main(argv) == 2
    assert "--q" in capsys.readouterr().err
