"""The command line (engine.cli.main): exit codes, one-line errors, and a tiny end-to-end run."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent
GOOD = [ROOT / "specs" / "agd_smooth.yaml", ROOT / "specs" / "mbsgd_convex.yaml"]


def _nonempty_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture
def bad_spec(tmp_path) -> Path:
    raw = yaml.safe_load(GOOD[0].read_text())
    raw["threat_model"]["epsilon"] = -1
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.fixture
def tiny_spec(tmp_path) -> tuple[Path, str]:
    raw = copy.deepcopy(yaml.safe_load(GOOD[0].read_text()))
    raw["data"].update(n=600, N=4, d=5)
    raw["trials"] = 3
    raw["sweep"]["values"] = [300, 600]
    raw["checks"] = [c for c in raw["checks"] if c["id"] in ("noise", "privacy")]
    raw["expect"] = {}
    raw.pop("expect_quick", None)
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path, raw["name"]


def test_validate_good_specs(capsys):
    rc = main(["validate", *map(str, GOOD)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    lines = _nonempty_lines(out)
    assert len(lines) == len(GOOD)
    for path, line in zip(GOOD, lines):
        assert line.startswith(f"ok: {path}")
    assert err == ""


def test_validate_bad_spec(capsys, bad_spec):
    rc = main(["validate", str(bad_spec)])
    out, err = capsys.readouterr()
    assert rc == 2
    lines = _nonempty_lines(err)
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {bad_spec}: threat_model.epsilon: ")
    assert "Traceback" not in err + out


def test_validate_mixed_good_and_bad(capsys, bad_spec):
    rc = main(["validate", str(GOOD[0]), str(bad_spec)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert _nonempty_lines(out)[0].startswith(f"ok: {GOOD[0]}")
    assert len(_nonempty_lines(err)) == 1


def test_validate_directory(capsys, tmp_path):
    rc = main(["validate", str(tmp_path)])          # an empty folder is an error, one line
    err = capsys.readouterr().err
    assert rc == 2
    assert len(_nonempty_lines(err)) == 1
    assert main(["validate", str(ROOT / "specs")]) == 0
    assert len(_nonempty_lines(capsys.readouterr().out)) == len(list((ROOT / "specs").glob("*.yaml")))


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("accelerated_mbsgd", "noisy_mbsgd", "isrl.thm3_1.convex", "rate"):
        assert word in out


def test_schema_is_json(capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert "threat_model" in schema["properties"]
    assert main(["schema", "--curve"]) == 0
    assert "mechanism" in json.loads(capsys.readouterr().out)["properties"]


@pytest.mark.parametrize("trials", ["1", "x", "-3"])
def test_run_bad_trials_exits_2(capsys, trials):
    with pytest.raises(SystemExit) as info:
        main(["run", str(GOOD[0]), "--trials", trials])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--trials" in err
    assert "Traceback" not in err


def test_unknown_command_exits_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2


def test_run_bad_spec_returns_2(capsys, bad_spec, tmp_path):
    rc = main(["run", str(bad_spec), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(_nonempty_lines(err)) == 1
    assert not (tmp_path / "out").exists()


def test_scheduler_needs_the_dask_executor(capsys, tiny_spec):
    rc = main(["run", str(tiny_spec[0]), "--scheduler", "tcp://127.0.0.1:1", "--no-cache"])
    err = capsys.readouterr().err
    assert rc == 2 and len(_nonempty_lines(err)) == 1 and "--executor dask" in err


def test_report_missing_file(capsys, tmp_path):
    missing = tmp_path / "nothing.json"
    rc = main(["report", str(missing)])
    err = capsys.readouterr().err
    assert rc == 2
    lines = _nonempty_lines(err)
    assert len(lines) == 1 and lines[0].startswith("error:") and str(missing) in lines[0]


def test_report_not_a_results_file(capsys, tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text("{\"hello\": 1}")
    rc = main(["report", str(junk)])
    err = capsys.readouterr().err
    assert rc == 2
    assert len(_nonempty_lines(err)) == 1 and "Traceback" not in err


def test_subprocess_validate():
    proc = subprocess.run([sys.executable, "-m", "engine", "validate", "specs/agd_smooth.yaml"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: specs/agd_smooth.yaml")


def test_end_to_end_tiny_run_and_report(capsys, tmp_path, tiny_spec):
    spec_path, name = tiny_spec
    out_dir = tmp_path / "out"
    store = tmp_path / "store.sqlite"
    rc = main(["run", str(spec_path), "--out", str(out_dir), "--quiet", "--store", str(store)])
    out, err = capsys.readouterr()
    assert rc in (0, 1), err
    assert "reused" not in out and store.is_file()
    assert main(["run", str(spec_path), "--out", str(out_dir), "--quiet", "--store", str(store)]) == rc
    assert "6 reused" in capsys.readouterr().out           # 2 points x 3 trials, all from the store
    assert main(["run", str(spec_path), "--out", str(out_dir), "--quiet", "--no-cache",
                 "--executor", "sequential"]) == rc
    assert "reused" not in capsys.readouterr().out
    json_path, md_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    assert json_path.is_file() and md_path.is_file()
    assert str(md_path) in out

    results = json.loads(json_path.read_text())
    for key in ("checks", "points", "seed", "code_version", "packages"):
        assert key in results
    assert results["trials"] == 3
    assert [p["value"] for p in results["points"]] == [300, 600]
    assert [c["id"] for c in results["checks"]] == ["noise", "privacy"]
    for check in results["checks"]:
        for key in ("id", "kind", "theorem", "verdict", "measured", "bound", "confidence"):
            assert key in check, (check["id"], key)
        assert check["verdict"] in ("pass", "fail", "inconclusive", "inapplicable")
    # exit code agrees with the verdicts: 1 iff some check failed
    assert rc == (1 if any(c["verdict"] == "fail" for c in results["checks"]) else 0)

    before = md_path.read_text()
    md_path.unlink()
    assert main(["report", str(json_path)]) == 0
    assert md_path.read_text() == before


def test_privacy_calculator_gaussian_matches_the_analytic_gaussian(capsys):
    from tests.test_accounting import analytic_epsilon
    assert main(["privacy", "gaussian", "--sigma", "2", "--sensitivity", "1", "--T", "4", "--delta", "1e-5",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] == pytest.approx(analytic_epsilon(2 * 0.5, 1e-5), rel=0.02)   # 4 rounds of mu 0.5 = mu 1


def test_privacy_calculator_shuffle_gives_both_bounds_and_inverts(capsys):
    args = ["privacy", "subsampled-shuffle", "--k", "1000", "--n", "1000000", "--eps0", "2", "--T", "1000"]
    assert main(args + ["--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert 0 < out["lower"]["epsilon"] <= out["upper"]["epsilon"]
    assert main(args + ["--epsilon", str(out["upper"]["epsilon"]), "--json"]) == 0
    back = json.loads(capsys.readouterr().out)
    assert back["upper"]["delta"] <= 1e-6 * 1.0001


@pytest.mark.parametrize("argv", [["privacy", "gaussian", "--delta", "1e-5"],                    # no --sigma
                                  ["privacy", "subsampled-shuffle", "--k", "9", "--n", "3", "--eps0", "1",
                                   "--delta", "1e-5"],                                           # k > n
                                  ["privacy", "subsampled-gaussian", "--sigma", "1", "--delta", "1e-5"]])
def test_privacy_calculator_bad_input_is_one_line_exit_2(capsys, argv):
    assert main(argv) == 2
    assert len(_nonempty_lines(capsys.readouterr().err)) == 1


def test_a_store_that_is_not_ours_is_refused_and_left_untouched(capsys, tmp_path, tiny_spec):
    """--store at someone else's SQLite database (with tables named like ours): exit 2, one line, not one byte
    changed (the store used to drop tables named points and trials)."""
    import hashlib
    import sqlite3

    db = tmp_path / "theirs.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE points (id INTEGER, name TEXT)")
    con.execute("CREATE TABLE trials (x REAL)")
    con.execute("INSERT INTO points VALUES (1, 'keep me')")
    con.commit()
    con.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    rc = main(["run", str(tiny_spec[0]), "--store", str(db), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and len(_nonempty_lines(err)) == 1 and "not a privbench result store" in err
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert not (tmp_path / "out").exists()


def test_mechanism_spec_runs_the_command_lines_seed_and_trials(capsys, tmp_path):
    """--seed and --trials reach a mechanism spec as they reach a learning one (the results record what ran), and a
    trial count outside the mechanism kind's range is refused in one line, exit 2."""
    spec = Path(__file__).resolve().parent.parent / "specs" / "p1d_sum.yaml"
    out = tmp_path / "out"
    assert main(["run", str(spec), "--seed", "5", "--trials", "150", "--quiet", "--executor", "sequential",
                 "--out", str(out), "--store", str(tmp_path / "s.sqlite")]) == 0
    res = json.loads((out / "p1d_sum.json").read_text())
    assert res["trials"] == 150 and res["spec"]["seed"] == 5 and res["spec"]["trials"] == 150
    capsys.readouterr()
    assert main(["run", str(spec), "--trials", "5", "--quiet", "--out", str(out),
                 "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--trials" in err[0] and "100 .. 10^7" in err[0]


def test_help_and_version_import_no_kind_and_no_accountant():
    """`--help`, `--version` and every subcommand's help but those of `privacy` and `schema` (which list the
    calculator's mechanisms and the spec kinds) answer at once: the kinds' names and the mechanisms are read only when
    an argument is checked against them or those helps are printed (they import every kind and accountant)."""
    code = ("import argparse, sys; from engine.cli import build_parser; p = build_parser(); p.format_help(); "
            "sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction)); "
            "[s.format_help() for name, s in sub.choices.items() if name not in ('privacy', 'schema')]; "
            "print(sorted(m for m in ('engine.kinds', 'verifiers.accountants', 'sympy', 'dp_accounting') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lazy_choices_still_check_and_list_the_names(capsys, monkeypatch):
    from engine.kinds import SPEC_KINDS
    from verifiers.accountants.calculator import MECHANISMS

    with pytest.raises(SystemExit) as e:
        main(["schema", "--kind", "nope"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and all(repr(k) in err for k in SPEC_KINDS.names())
    with pytest.raises(SystemExit) as e:
        main(["privacy", "nope", "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and all(repr(m) in err for m in MECHANISMS)
    monkeypatch.setenv("COLUMNS", "2000")      # one line per paragraph: argparse wraps at hyphens otherwise
    with pytest.raises(SystemExit):
        main(["privacy", "--help"])
    out = capsys.readouterr().out
    assert all(f"{m}: {text}" in out for m, text in MECHANISMS.items())
