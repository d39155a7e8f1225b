"""Hostile and careless input: every case ends in one line and exit 2 (or the documented exit code), never a
traceback, a runaway allocation or a file written where it should not be (issue 19)."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "specs" / "mbsgd_lemma_d6.yaml"          # the quickest learning spec (about 2 s in --quick mode)


def _raw() -> dict:
    return yaml.safe_load(SMALL.read_text())


def _write(tmp_path: Path, raw, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(raw if isinstance(raw, str) else yaml.safe_dump(raw, sort_keys=False))
    return p


def _one_line_exit(capsys, argv: list[str], code: int = 2) -> str:
    rc = main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == code, (rc, err)
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("edit, where", [
    (lambda r: r["data"].update(label_noise=1e308), "data.label_noise"),
    (lambda r: r["algorithm"]["overrides"].update(sigma=1e300), "algorithm.overrides.sigma"),
    (lambda r: r.update(seed=True), "seed"),
    (lambda r: r["data"].update(d="5"), "data.d"),
    (lambda r: r.update(sweep={"field": "data.n", "values": [100, 200, 100]}), "sweep.values"),
    (lambda r: r.update(sweep={"field": "data.n", "values": list(range(1, 1000))}), "sweep.values"),
])
def test_bad_values_are_refused_before_running(capsys, tmp_path, edit, where):
    raw = _raw()
    edit(raw)
    line = _one_line_exit(capsys, ["run", str(_write(tmp_path, raw)), "--quick", "--no-cache", "--out",
                                   str(tmp_path / "out")])
    assert f": {where}:" in line


def test_yaml_edge_cases(capsys, tmp_path):
    text = SMALL.read_text()
    dup = text + "\nseed: 7\n"                                            # seed given twice
    assert "appears twice" in _one_line_exit(capsys, ["validate", str(_write(tmp_path, dup))])
    deep = "a: " + "[" * 5000 + "]" * 5000 + "\n"
    _one_line_exit(capsys, ["validate", str(_write(tmp_path, deep, "deep.yaml"))])
    big = tmp_path / "big.yaml"
    big.write_text("notes: '" + "x" * (2 << 20) + "'\n")
    assert "larger than" in _one_line_exit(capsys, ["validate", str(big)])
    assert "larger than" in _one_line_exit(capsys, ["validate", "/dev/zero"])
    # scientific notation without a dot is a number, as a reader expects (PyYAML alone reads a string)
    sci = text.replace("delta: 1.0e-05", "delta: 1e-5").replace("delta: 1.0e-5", "delta: 1e-5")
    assert "1e-5" in sci
    assert main(["validate", str(_write(tmp_path, sci, "sci.yaml"))]) == 0


def test_the_memory_guard_refuses_a_run_that_cannot_fit(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVBENCH_MEMORY_LIMIT", "")   # restored afterwards: --memory-limit below sets it process-wide
    raw = _raw()
    raw["data"].update(N=100, n=1_000_000, d=1000)
    raw.pop("sweep", None)
    raw["checks"] = [c for c in raw["checks"] if c["kind"] != "rate"]
    raw["expect"] = {k: v for k, v in raw["expect"].items() if k in {c["id"] for c in raw["checks"]}}
    raw.pop("expect_quick", None)
    path = _write(tmp_path, raw)
    line = _one_line_exit(capsys, ["validate", str(path)])
    assert "data.n" in line and "GiB" in line
    line = _one_line_exit(capsys, ["run", str(path), "--no-cache", "--out", str(tmp_path / "o"), "--quiet"])
    assert "GiB" in line
    # and a limit set on the command line applies to the shipped specs too
    assert "GiB" in _one_line_exit(capsys, ["validate", str(ROOT / "specs" / "agd_smooth.yaml"),
                                            "--memory-limit", "0.01"])


def test_out_must_be_a_writable_folder_before_anything_runs(capsys, tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    assert "is a file" in _one_line_exit(capsys, ["run", str(SMALL), "--out", str(f), "--no-cache"])


@pytest.mark.parametrize("content", [b"[1, 2]", b"\x00\x01\xff binary", b'{"schema": 99, "name": "x"}',
                                     b'{"schema": 1, "name": "x", "kind": [1]}', b'{"schema": 2, "name": ["x"]}'])
def test_report_refuses_what_run_did_not_write(capsys, tmp_path, content):
    p = tmp_path / "r.json"
    p.write_bytes(content)
    _one_line_exit(capsys, ["report", str(p)])


def test_report_derives_paths_from_a_valid_name_and_counts_from_the_rows(capsys, tmp_path):
    src = json.loads((ROOT / "reports" / "mbsgd_lemma_d6.json").read_text())
    bad = dict(src, name="../escaped")
    p = tmp_path / "sub" / "r.json"
    p.parent.mkdir()
    p.write_text(json.dumps(bad))
    assert "not a spec name" in _one_line_exit(capsys, ["report", str(p)])
    assert not (tmp_path / "escaped.md").exists()
    tampered = dict(src, verdict_counts={"pass": 99, "fail": 0, "inconclusive": 0, "inapplicable": 0})
    tampered["checks"] = [dict(c, verdict="fail") for c in src["checks"]]
    p.write_text(json.dumps(tampered))
    assert main(["report", str(p)]) == 0
    md = (p.parent / f"{src['name']}.md").read_text()
    assert f"0 pass, {len(src['checks'])} fail" in md and "99 pass" not in md


@pytest.mark.parametrize("argv", [
    ["privacy", "gaussian", "--sigma", "1e-300", "--delta", "1e-5"],
    ["privacy", "gaussian", "--sigma", "2", "--T", "1000000", "--delta", "1e-5"],
    ["privacy", "subsampled-shuffle", "--k", "10", "--n", "100", "--eps-ldp", "1e6", "--delta", "1e-5"],
    ["run", str(SMALL), "--trials", "1000000000"],
])
def test_calculator_and_command_line_limits(capsys, argv):
    with pytest.raises(SystemExit) as info:        # argparse refuses (exit 2, usage + one line) or the command does
        raise SystemExit(main(argv))
    assert info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_closed_pipe_ends_quietly():
    proc = subprocess.Popen([sys.executable, "-m", "engine", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()                            # the reader leaves, as `| head -1` does
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


# --- fuzz: a valid spec with one field replaced by anything ---------------------------------------------------
ANY = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True, allow_infinity=True),
                st.text(max_size=8), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3),
                                                                                          st.integers(), max_size=2))
PATHS = [("kind",), ("seed",), ("trials",), ("threat_model", "epsilon"), ("threat_model", "delta"), ("threat_model", "kind"),
         ("data", "n"), ("data", "d"), ("data", "N"), ("data", "kind"), ("data", "label_noise"), ("loss", "kind"),
         ("loss", "diameter"), ("loss", "mu"), ("algorithm", "kind"), ("algorithm", "overrides"), ("sweep",),
         ("checks",), ("expect",), ("name",), ("quick",)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), value=ANY, drop=st.booleans())
def test_fuzz_a_mutated_spec_validates_or_is_refused_in_one_line(tmp_path, capsys, path, value, drop):
    raw = copy.deepcopy(_raw())
    cur = raw
    for key in path[:-1]:
        cur = cur[key]
    if drop:
        cur.pop(path[-1], None)
    else:
        cur[path[-1]] = value
    spec = tmp_path / "fuzz.yaml"
    try:
        spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    except (yaml.YAMLError, ValueError):
        return
    rc = main(["validate", str(spec)])
    err = capsys.readouterr().err
    assert rc in (0, 2)
    assert "Traceback" not in err and len([ln for ln in err.splitlines() if ln.strip()]) <= 1, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_in_a_read_only_folder(capsys, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert "cannot be written" in _one_line_exit(capsys, ["run", str(SMALL), "--out", str(ro / "o"),
                                                              "--no-cache"])
    finally:
        ro.chmod(0o700)


def test_nothing_decided_is_exit_3_not_green(capsys, tmp_path):
    """A run whose every check ends inapplicable exits 3 and says so; a decided run exits 0 (issue 19)."""
    from engine.cli import exit_code

    raw = yaml.safe_load((ROOT / "specs" / "shuffle_agd_smooth.yaml").read_text())
    raw["checks"] = [c for c in raw["checks"] if c["id"] == "rate_eps"]       # saturated at these sizes
    raw["expect"], raw["expect_quick"] = {"rate_eps": "inapplicable"}, {}
    rc = main(["run", str(_write(tmp_path, raw)), "--quick", "--no-cache", "--out", str(tmp_path / "o"), "--quiet",
               "--executor", "sequential"])
    out = capsys.readouterr().out
    assert rc == 3 and "nothing was decided (exit 3)" in out
    assert [exit_code({"pass": p, "fail": f, "inconclusive": i, "inapplicable": a}) for p, f, i, a in
            ((1, 0, 2, 0), (0, 1, 0, 0), (3, 1, 0, 0), (0, 0, 1, 1), (0, 0, 0, 0))] == [0, 1, 1, 3, 3]


def test_a_malformed_scheduler_address_is_one_line(capsys, tmp_path):
    pytest.importorskip("distributed")
    line = _one_line_exit(capsys, ["run", str(SMALL), "--quick", "--no-cache", "--executor", "dask", "--scheduler",
                                   "not a url", "--out", str(tmp_path / "o")])
    assert "--scheduler" in line


def _leaves(doc, path=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(doc, list) and doc:
        for i, v in enumerate(doc[:3]):
            yield from _leaves(v, path + (i,))
    else:
        yield path


RESULTS = json.loads((ROOT / "reports" / "mbsgd_lemma_d6.json").read_text())
RESULT_PATHS = [p for p in _leaves(RESULTS) if p and p[0] != "points"][:400]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(RESULT_PATHS), value=ANY)
def test_fuzz_report_renders_or_refuses_a_tampered_results_file(tmp_path, capsys, path, value):
    doc = copy.deepcopy(RESULTS)
    cur = doc
    for key in path[:-1]:
        cur = cur[key]
    cur[path[-1]] = value
    p = tmp_path / "r.json"
    try:
        p.write_text(json.dumps(doc))
    except ValueError:
        return
    rc = main(["report", str(p)])
    err = capsys.readouterr().err
    assert rc in (0, 2) and "Traceback" not in err, err
