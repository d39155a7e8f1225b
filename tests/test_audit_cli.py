"""`python -m engine audit SCORES.csv`: an epsilon lower bound from canary scores produced anywhere, against the
exact epsilon of the Gaussian pair the scores come from (Balle & Wang's closed form, pinned against dp-accounting
in tests/test_element.py), with the largest bound the sample could ever give, and one-line errors."""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from engine.cli import main
from verifiers.accountants.element_privacy import epsilon_at
from verifiers.audit import largest_lower_bound


def _write(path, cols, header=("in", "out")):
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for row in zip(*cols):
            w.writerow(row)
    return str(path)


def _audit(capsys, *argv):
    code = main(["audit", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_gaussian_scores_bound_below_the_exact_epsilon(tmp_path, capsys):
    rng = np.random.default_rng(0)
    mu, delta = 2.0, 1e-5
    f = _write(tmp_path / "s.csv", (rng.normal(mu, 1, 20000), rng.normal(0, 1, 20000)))
    code, out = _audit(capsys, f, "--delta", str(delta))
    truth = epsilon_at(delta, mu)
    assert code == 0
    assert 3.0 < out["epsilon_lower"] <= truth                  # a valid bound, and one with power
    assert out["epsilon_lower"] <= out["largest_possible"]
    code, out = _audit(capsys, f, "--delta", str(delta), "--claim", "1")
    assert code == 1 and out["refuted"] is True
    code, out = _audit(capsys, f, "--delta", str(delta), "--claim", f"{truth:.6g}")
    assert code == 0 and out["refuted"] is False


def test_identical_distributions_refute_nothing(tmp_path, capsys):
    rng = np.random.default_rng(1)
    f = _write(tmp_path / "s.csv", (rng.normal(0, 1, 5000), rng.normal(0, 1, 5000)))
    code, out = _audit(capsys, f, "--delta", "1e-5", "--claim", "0.1")
    assert code == 0 and out["epsilon_lower"] < 0.1


def test_lower_is_in_flips_the_direction(tmp_path, capsys):
    rng = np.random.default_rng(2)
    f = _write(tmp_path / "s.csv", (rng.normal(-2, 1, 4000), rng.normal(0, 1, 4000)))
    _, wrong = _audit(capsys, f, "--delta", "1e-5")
    _, right = _audit(capsys, f, "--delta", "1e-5", "--lower-is-in")
    assert right["epsilon_lower"] > 1.5 > wrong["epsilon_lower"]


def test_largest_lower_bound_is_reached_by_separated_scores(tmp_path, capsys):
    f = _write(tmp_path / "s.csv", (np.arange(100.0) + 1000, np.arange(100.0)))
    _, out = _audit(capsys, f, "--delta", "1e-3")
    assert out["epsilon_lower"] == pytest.approx(out["largest_possible"])
    # Clopper-Pearson for 0 of h at the two-sided level: 1 - ((1 - c)/2)^(1/h); eps = log((1 - delta - u)/u)
    u = 1 - (0.05 / 2) ** (1 / 50)
    assert largest_lower_bound(50, delta=1e-3, confidence=0.95) == pytest.approx(math.log((1 - 1e-3 - u) / u))


def test_columns_by_name_and_unequal_lengths(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_text("id,out,in\n" + "\n".join(f"{i},{i * 0.01},{5 + i * 0.01}" for i in range(30))
                    + "\n" + "\n".join(f"{i},,{5 + i * 0.01}" for i in range(30, 40)) + "\n")
    code, out = _audit(capsys, str(path), "--delta", "1e-3", "--columns", "in,out")
    assert code == 0 and out["in"]["count"] == 40 and out["out"]["count"] == 30 and out["used_per_column"] == 30


def test_sorted_files_split_at_random(tmp_path, capsys):
    """Sorted columns: without the shuffle the threshold half and the counted half would differ in law."""
    rng = np.random.default_rng(3)
    f = _write(tmp_path / "s.csv", (np.sort(rng.normal(1.0, 1, 4000)), np.sort(rng.normal(0, 1, 4000))))
    _, out = _audit(capsys, f, "--delta", "1e-5")
    assert out["epsilon_lower"] <= epsilon_at(1e-5, 1.0)
    _, again = _audit(capsys, f, "--delta", "1e-5", "--seed", "0")
    assert again["epsilon_lower"] == out["epsilon_lower"]


@pytest.mark.parametrize("text,extra,needle", [
    ("in,out\n" + "1,2\n" * 30 + "x,2\n", (), "row 32: 'x' is not a number"),
    ("in,out\n" + "1,2\n" * 30 + "nan,2\n", (), "not a finite number"),
    ("in,out\n" + "1,2\n" * 5, (), "at least 20"),
    ("in\n" + "1\n" * 30, (), "needs two columns"),
    ("in,out\n" + "1,2\n" * 30, ("--columns", "a,b"), "no such column"),
])
def test_bad_files_are_one_line_exit_2(tmp_path, capsys, text, extra, needle):
    path = tmp_path / "s.csv"
    path.write_text(text)
    assert main(["audit", str(path), "--delta", "1e-5", *extra]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_missing_file_and_bad_delta(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "none.csv"), "--delta", "1e-5"]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["audit", str(tmp_path / "none.csv"), "--delta", "2"])
    assert e.value.code == 2
