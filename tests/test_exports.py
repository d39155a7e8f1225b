"""Exports of a run (engine/exports.py): the checks table, a learning run's per-trial table, the JUnit XML, and
`run --csv DIR --junit FILE`; the Python API engine.run."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd

import engine
from engine import exports
from engine.cli import main

REPORTS = Path(__file__).resolve().parents[1] / "reports"


def test_checks_frame_and_junit_of_a_failing_spec():
    r = json.loads((REPORTS / "element_histogram_privacy.json").read_text())
    df = exports.checks_frame(r)
    assert list(df["id"]) == [c["id"] for c in r["checks"]]
    assert df.set_index("id").loc["lemma_3_2", "verdict"] == "fail"
    assert df.set_index("id").loc["lemma_3_2", "claims"] == "002 Lemma 3.2"
    root = ET.fromstring(exports.junit_xml(r))
    assert root.tag == "testsuite" and root.get("failures") == "1" and root.get("tests") == "2"
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["lemma_3_2"].find("failure") is not None and cases["audit"].find("failure") is None


def test_junit_skips_undecided_checks():
    r = json.loads((REPORTS / "pvec_sum.json").read_text())
    root = ET.fromstring(exports.junit_xml(r))
    skipped = [c.get("name") for c in root.iter("testcase") if c.find("skipped") is not None]
    assert skipped == [c["id"] for c in r["checks"] if c["verdict"] in ("inconclusive", "inapplicable")]
    assert skipped                                  # pvec_sum's unbiasedness is inconclusive


def test_trials_frame_of_a_learning_run_matches_load_results():
    path = REPORTS / "agd_smooth.json"
    r = json.loads(path.read_text())
    df = exports.trials_frame(r)
    ref = engine.load_results(path)
    scalar = [c for c in ref.columns if not isinstance(ref[c].iloc[0], type(ref["trial"].to_numpy()))]
    assert len(df) == len(ref)
    pd.testing.assert_series_equal(df["excess_risk"], ref["excess_risk"])
    assert set(df.columns) <= set(scalar) | set(ref.columns)
    assert exports.trials_frame(json.loads((REPORTS / "darrm_pure.json").read_text())) is None


def test_run_writes_csv_and_junit(tmp_path):
    code = main(["run", "specs/darrm_pure_k.yaml", "--quick", "--quiet", "--out", str(tmp_path / "out"),
                 "--csv", str(tmp_path / "csv"), "--junit", str(tmp_path / "j" / "junit.xml")])
    assert code == 0
    checks = pd.read_csv(tmp_path / "csv" / "darrm_pure_k_checks.csv")
    assert set(checks["verdict"]) == {"pass"}
    assert ET.parse(tmp_path / "j" / "junit.xml").getroot().get("failures") == "0"


def test_engine_run_api_returns_results_and_tables():
    r = engine.run("specs/darrm_pure_k.yaml", quick=True)
    assert r.verdicts == {"privacy": "pass", "thm3_5_1": "pass", "dsub_vs_sub": "pass"}
    assert list(r.checks["verdict"]) == ["pass", "pass", "pass"] and r.trials is None
    assert r.results["name"] == "darrm_pure_k"


def test_run_writes_parquet_with_the_csv_tables(tmp_path):
    """--parquet writes the checks and a learning run's trials, equal to the CSV tables, with their column types."""
    path = REPORTS / "agd_smooth.json"
    r = json.loads(path.read_text())
    written = exports.write_parquet(r, tmp_path / "pq")
    assert [p.name for p in written] == ["agd_smooth_checks.parquet", "agd_smooth_trials.parquet"]
    csv = exports.write_csv(r, tmp_path / "csv")
    for pq, c in zip(written, csv):
        a, b = pd.read_parquet(pq), pd.read_csv(c)
        assert list(a.columns) == list(b.columns) and len(a) == len(b)
    trials = pd.read_parquet(written[1])
    pd.testing.assert_series_equal(trials["excess_risk"], exports.trials_frame(r)["excess_risk"])
    assert trials["trial"].dtype.kind == "i" and trials["excess_risk"].dtype == "float64"


def test_parquet_without_pyarrow_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)          # as if it were not installed
    code = main(["run", "specs/darrm_pure_k.yaml", "--quick", "--quiet", "--out", str(tmp_path / "out"),
                 "--parquet", str(tmp_path / "pq")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "pyarrow" in err[0] and "--parquet" in err[0]
    assert not (tmp_path / "out").exists()


def test_run_of_several_specs_compares_each_with_its_expect(tmp_path, capsys):
    """`run A B` (or a folder) runs each in turn and ends with a table; exit 0 when every spec's verdicts are its
    expect's, 1 when one differs (here a copy of a spec whose expect_quick we change)."""
    import shutil

    import yaml

    code = main(["run", "specs/darrm_pure_k.yaml", "specs/darrm_pure.yaml", "--quick", "--quiet", "--out",
                 str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0 and "2 specs in" in out and "every one as its expect records" in out
    assert (tmp_path / "out" / "darrm_pure_k.md").exists() and (tmp_path / "out" / "darrm_pure.md").exists()
    folder = tmp_path / "specs"
    folder.mkdir()
    raw = yaml.safe_load(open("specs/darrm_pure_k.yaml"))
    raw["expect_quick"] = {**raw.get("expect_quick", {}), "privacy": "fail"}
    (folder / "changed.yaml").write_text(yaml.safe_dump(raw))
    shutil.copy("specs/darrm_pure.yaml", folder / "same.yaml")
    code = main(["run", str(folder), "--quick", "--quiet", "--out", str(tmp_path / "out2")])
    out = capsys.readouterr().out
    assert code == 1 and "1 differ from their expect" in out
    (tmp_path / "empty").mkdir()
    assert main(["run", str(tmp_path / "empty"), "--quick"]) == 2                # a folder with no spec in it


def test_jobs_run_specs_at_once_with_the_same_results(tmp_path, capsys):
    """`run A B --jobs 2` runs the specs in two forked children (one worker each, the sequential executor) and gives
    the same numbers and verdicts as one after another, through the same kind of store (the second run of each
    reuses every trial); a spec whose verdicts differ from its expect makes the table say so and the exit code 1;
    --jobs with Dask, a bad store and a spec name given twice are refused (exit 2, one line)."""
    import json

    import yaml

    folder = tmp_path / "specs"
    folder.mkdir()
    for name in ("mbsgd_lemma_d6", "darrm_pure"):
        (folder / f"{name}.yaml").write_text(open(f"specs/{name}.yaml").read())
    raw = yaml.safe_load(open("specs/darrm_pure_k.yaml"))
    raw["expect_quick"] = {**raw.get("expect_quick", {}), "privacy": "fail"}
    (folder / "changed.yaml").write_text(yaml.safe_dump(raw))
    runs = {}
    for jobs in ("1", "2", "2"):
        out = tmp_path / f"out{jobs}"
        code = main(["run", str(folder), "--quick", "--quiet", "--jobs", jobs, "--out", str(out),
                     "--store", str(tmp_path / f"store{jobs}.sqlite")])
        table = capsys.readouterr().out
        assert code == 1 and "3 specs in" in table and "1 differ from their expect" in table
        runs[jobs] = {n: json.loads((out / f"{n}.json").read_text()) for n in ("mbsgd_lemma_d6", "darrm_pure")}
    assert "2 at a time" in table
    assert runs["2"]["mbsgd_lemma_d6"]["reused_trials"] > 0            # the second --jobs 2 run, from the store
    for name, one in runs["1"].items():
        two = runs["2"][name]
        assert [c["verdict"] for c in one["checks"]] == [c["verdict"] for c in two["checks"]]
        assert [c.get("measured") for c in one["checks"]] == [c.get("measured") for c in two["checks"]]
        untimed = [[{k: v for k, v in p.items() if k != "seconds"} for p in r["points"]] for r in (one, two)]
        assert untimed[0] == untimed[1]                      # every number but the timings
    bad_store = tmp_path / "not_a_store.sqlite"
    bad_store.write_text("not sqlite")
    (tmp_path / "twice").mkdir()
    (tmp_path / "twice" / "b.yaml").write_text(open("specs/darrm_pure.yaml").read())
    for extra in (["--executor", "dask"], ["--store", str(bad_store)], []):
        given = [str(tmp_path / "twice"), str(folder / "darrm_pure.yaml")] if not extra else [str(folder)]
        code = main(["run", *given, "--quick", "--jobs", "2", "--out", str(tmp_path / "o"), *extra])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and ("--jobs" in err[0] or "--store" in err[0]), err
