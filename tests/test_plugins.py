"""Plugins (catalog/plugins.py): a user's package adds mechanisms through the entry-point group privbench.plugins
or PRIVBENCH_PLUGINS, with no edit to this repository; the worked example (examples/dpsgd_plugin: textbook DP-SGD)
runs like a built-in mechanism, its planted bug is caught by named checks, and a broken plugin is one line, exit 2."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "dpsgd_plugin"

SPEC = """name: {name}
kind: mechanism
description: x
mechanism: dpsgd_example
params: {{n: 400, d: 5, q: 0.05, sigma: {sigma}, C: {C}, T: 100, eta: 0.5, delta: 1.0e-5, audit_trials: {audit}, bug: {bug}}}
trials: 100
seed: 1
checks:
  - {{id: accounting, kind: accounting}}
  - {{id: audit, kind: audit, confidence: 0.95}}
  - {{id: noise, kind: noise}}
"""


def _env(plugins: str | None = "privbench_dpsgd", path: str = str(EXAMPLE / "src")) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), path]))
    env.pop("PRIVBENCH_PLUGINS", None)
    if plugins is not None:
        env["PRIVBENCH_PLUGINS"] = plugins
    return env


def _engine(args: list[str], env: dict, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_the_example_runs_and_its_planted_bug_is_caught(tmp_path):
    for name, sigma, C, bug, audit, code in (("ok", 1.0, 1.0, 0, 400, 0), ("bug", 2.0, 4.0, 1, 2000, 1)):
        spec = tmp_path / f"{name}.yaml"
        spec.write_text(SPEC.format(name=name, sigma=sigma, C=C, bug=bug, audit=audit))
        out = _engine(["run", str(spec), "--out", str(tmp_path), "--quiet"], _env())
        assert out.returncode == code, out.stderr
        verdicts = {c["id"]: c["verdict"] for c in json.loads((tmp_path / f"{name}.json").read_text())["checks"]}
        if bug:
            assert verdicts == {"accounting": "pass", "audit": "fail", "noise": "fail"}
        else:
            assert verdicts == {"accounting": "pass", "audit": "pass", "noise": "pass"}


def test_a_wrong_claim_is_caught_by_accounting():
    sys.path.insert(0, str(EXAMPLE / "src"))
    try:
        import privbench_dpsgd as plug
    finally:
        sys.path.remove(str(EXAMPLE / "src"))

    class Check:
        id = kind = "accounting"
        confidence = 0.999

    p = {"q": 0.05, "sigma": 1.0, "T": 200, "delta": 1e-5}
    honest = plug.claimed_epsilon(**p)
    assert plug.accounting(Check(), "dpsgd_example", [{"value": None, "params": p, "claimed_eps": honest}]
                           ).verdict == "pass"
    assert plug.accounting(Check(), "dpsgd_example", [{"value": None, "params": p, "claimed_eps": honest / 2}]
                           ).verdict == "fail"
    # the plugin's own RDP at q = 1 is the Gaussian's alpha / (2 sigma^2)
    assert plug._log_rdp(1.0, 2.0, 5) / 4 == pytest.approx(5 / 8)


def test_entry_points_are_found(monkeypatch):
    from importlib import metadata

    from catalog import plugins

    class EP:
        name, value = "dpsgd", "privbench_dpsgd"

    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    monkeypatch.delenv("PRIVBENCH_PLUGINS", raising=False)
    monkeypatch.setattr(metadata, "entry_points", lambda group: [EP()] if group == plugins.GROUP else [])
    mods = plugins.load()
    assert [m.__name__ for m in mods] == ["privbench_dpsgd"]
    assert mods[0].MECHANISM_ENTRIES[0].name == "dpsgd_example"


@pytest.mark.parametrize("plugins,needle", [
    ("no_such_module_xyz", "plugin 'no_such_module_xyz' (PRIVBENCH_PLUGINS) cannot be imported"),
    ("json", "has no MECHANISM_ENTRIES"),
])
def test_broken_plugins_are_one_line_exit_2(plugins, needle):
    out = _engine(["list"], _env(plugins))
    assert out.returncode == 2 and needle in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_a_plugin_may_not_take_a_builtin_name(tmp_path):
    (tmp_path / "clash_plugin.py").write_text(
        "import privbench_dpsgd as p\nfrom dataclasses import replace\n"
        "MECHANISM_ENTRIES = (replace(p.MECHANISM_ENTRIES[0], name='darrm'),)\n")
    out = _engine(["list"], _env("clash_plugin", os.pathsep.join([str(tmp_path), str(EXAMPLE / "src")])))
    assert out.returncode == 2 and "mechanism 'darrm' already exists" in out.stderr


def test_no_plugin_by_default():
    import catalog

    assert "dpsgd_example" not in catalog.MECHANISMS or os.environ.get("PRIVBENCH_PLUGINS")
    assert np.isfinite(1.0)


LEARNING_EXAMPLE = ROOT / "examples" / "noisy_gd_plugin"


def _learning_env() -> dict:
    return _env("privbench_noisygd", str(LEARNING_EXAMPLE / "src"))


def test_a_learning_plugin_adds_an_algorithm_theorems_a_data_kind_and_a_check_kind(tmp_path):
    """examples/noisy_gd_plugin: its algorithm, two theorems, data kind and check kind are named by specs like
    built-in ones and judged by privbench's checks; each of its three planted bugs is caught by a named check (the
    run of the four specs exits 0 only when every one's verdicts are the ones its expect records)."""
    listed = _engine(["list"], _learning_env())
    assert listed.returncode == 0, listed.stderr
    for name in ("noisy_gd_example", "noisygd.privacy", "noisygd.utility", "blobs", "learns"):
        assert name in listed.stdout
    out = _engine(["run", str(LEARNING_EXAMPLE / "specs"), "--quick", "--quiet", "--no-cache", "--out",
                   str(tmp_path)], _learning_env())
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 specs in" in out.stdout and "every one as its expect records" in out.stdout
    verdicts = {c["id"]: c["verdict"] for c in json.loads((tmp_path / "noisy_gd_ascent.json").read_text())["checks"]}
    assert verdicts["learns"] == "fail"


@pytest.mark.parametrize("code,needle", [
    ("ENTRIES = (dataclasses.replace(p.ENTRIES[0], name='central_sgd'),)", "algorithm 'central_sgd' already exists"),
    ("THEOREMS = (dataclasses.replace(p.THEOREMS[0], name='central.sgd.privacy'),)",
     "theorem 'central.sgd.privacy' already exists"),
    ("CHECK_KINDS = (dataclasses.replace(p.CHECK_KINDS[0], name='bound'),)", "check kind 'bound' already exists"),
    ("def data_kinds():\n    return (dataclasses.replace(p.data_kinds()[0], name='digits'),)",
     "data kind 'digits' already exists"),
    ("ENTRIES = ('not an entry',)", "ENTRIES holds str, not a catalog.base.AlgorithmEntry"),
])
def test_a_learning_plugin_may_not_take_a_builtin_name(tmp_path, code, needle):
    (tmp_path / "clash_learning.py").write_text(f"import dataclasses\nimport privbench_noisygd as p\n{code}\n")
    out = _engine(["list"], _env("clash_learning", os.pathsep.join([str(tmp_path), str(LEARNING_EXAMPLE / "src")])))
    assert out.returncode == 2 and needle in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
