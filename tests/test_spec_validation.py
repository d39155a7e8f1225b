"""Malformed specs -> one-line SpecError naming the file, the field path and what is wrong.

Every malformed spec is derived from the shipped, valid specs/agd_smooth.yaml, written to tmp_path
and loaded through engine.kinds.learning.spec.load. The message format is `FILE: FIELD: message` (engine/kinds/learning/spec.py,
SpecError); the FIELD segment is checked exactly against the accepted field paths of each case.
"""
from __future__ import annotations

import copy
import glob
from pathlib import Path

import pytest
import yaml

from engine.kinds import load
from engine.kinds.learning.spec import json_schema
from engine.specbase import SpecError

ROOT = Path(__file__).resolve().parent.parent
BASE_SPEC = ROOT / "specs" / "agd_smooth.yaml"


@pytest.fixture(scope="module")
def base() -> dict:
    return yaml.safe_load(BASE_SPEC.read_text())


def _set(section: str | None, **kv):
    def mutate(d: dict) -> None:
        (d if section is None else d[section]).update(kv)
    return mutate


def _rename(section: str | None, old: str, new: str):
    def mutate(d: dict) -> None:
        target = d if section is None else d[section]
        target[new] = target.pop(old)
    return mutate


def _append_check(check: dict):
    def mutate(d: dict) -> None:
        d["checks"].append(check)
    return mutate


def _drop(key: str):
    def mutate(d: dict) -> None:
        d.pop(key)
    return mutate


def _drop_in(section: str, key: str):
    def mutate(d: dict) -> None:
        d[section].pop(key)
    return mutate


def _replace_check(i: int, check: dict):
    def mutate(d: dict) -> None:
        d["checks"][i] = check
    return mutate


def _update_check(i: int, **kv):
    def mutate(d: dict) -> None:
        d["checks"][i].update(kv)
    return mutate



# (mutation, accepted FIELD segments, key phrases that must appear in the message)
# The base spec's checks are [noise, privacy, audit, grad_sampling, rate_n]; an appended check is checks.5.
CASES = [
    pytest.param(_set("threat_model", epsilon=0), ("threat_model.epsilon",), ("greater than 0",), id="epsilon_zero"),
    pytest.param(_set("threat_model", epsilon=-0.5), ("threat_model.epsilon",), ("greater than 0",),
                 id="epsilon_negative"),
    pytest.param(_set("threat_model", epsilon=float("inf")), ("threat_model.epsilon",), ("finite",),
                 id="epsilon_inf"),
    pytest.param(_set("threat_model", delta=0), ("threat_model.delta",), ("greater than 0",), id="delta_zero"),
    pytest.param(_set("threat_model", delta=1.5), ("threat_model.delta",), ("less than 1",), id="delta_1.5"),
    pytest.param(_set("data", n=0), ("data.n",), ("greater than or equal to 1",), id="data_n_zero"),
    # 'trails' written next to a valid 'trials'
    pytest.param(_set(None, trails=30), ("trails",), ("unknown key", "did you mean 'trials'"), id="extra_key_trails"),
    # the realistic typo: 'trials' spelt 'trails' (so 'trials' is missing too)
    pytest.param(_rename(None, "trials", "trails"), ("trails",), ("unknown key", "did you mean 'trials'"),
                 id="misspelt_key_trails"),
    pytest.param(_rename("data", "heterogeneity", "heterogenity"), ("data.heterogenity",),
                 ("unknown key", "did you mean 'heterogeneity'"), id="misspelt_nested_key"),
    pytest.param(_set("algorithm", kind="acelerated_mbsgd"), ("algorithm.kind",),
                 ("unknown algorithm", "did you mean 'accelerated_mbsgd'"), id="unknown_algorithm"),
    pytest.param(_set("algorithm", overrides={"sigmaa": 1.0}), ("algorithm.overrides", "algorithm.overrides.sigmaa"),
                 ("unknown override", "did you mean 'sigma'"), id="bad_override_name"),
    pytest.param(_set("algorithm", overrides={"sigma": -1.0}), ("algorithm.overrides", "algorithm.overrides.sigma"),
                 ("must be a number in (0, ",), id="negative_override"),
    pytest.param(_replace_check(0, {"id": "noise", "kind": "noise_calibraton"}), ("checks.0.kind",),
                 ("unknown check kind", "did you mean 'noise_calibration'"), id="unknown_check_kind"),
    pytest.param(_update_check(2, theorem="isrl.lemma_e4"), ("checks.2.theorem",),
                 ("unknown theorem", "did you mean 'isrl.lemma_d6_1'"), id="unknown_theorem"),
    pytest.param(_append_check({"id": "sc", "kind": "rate", "theorem": "isrl.thm3_1.strongly_convex", "variable": "n"}),
                 ("checks.5", "checks.5.theorem", "loss.mu"), ("needs a strongly convex loss",),
                 id="strongly_convex_theorem_mu_zero"),
    pytest.param(_append_check({"id": "emp", "kind": "bound", "theorem": "isrl.lemma_d6_1"}),
                 ("checks.5", "checks.5.theorem"), ("is about noisy_mbsgd", "not accelerated_mbsgd"),
                 id="theorem_of_other_algorithm"),
    pytest.param(_drop("sweep"), ("sweep", "checks.4", "checks.4.kind"), ("rate check needs a sweep",),
                 id="rate_check_without_sweep"),
    pytest.param(_set(None, sweep={"field": "loss.diameter", "values": [1.0, 2.0]}), ("sweep.field",),
                 ("unknown sweep field", "data.n"), id="non_sweepable_field"),
    pytest.param(_set(None, expect={"nosie": "pass"}), ("expect", "expect.nosie"),
                 ("unknown expect key", "did you mean 'noise'"), id="expect_key_not_a_check"),
    pytest.param(_set(None, trials="many"), ("trials",), ("'many'", "valid integer"), id="trials_wrong_type"),
    pytest.param(_set("threat_model", kind="centrall"), ("threat_model.kind",),
                 ("unknown threat model", "did you mean 'central'"), id="unknown_threat_model"),
    pytest.param(_drop_in("threat_model", "epsilon"), ("threat_model.epsilon",),
                 ("required field is missing", "claims (epsilon, delta)"), id="private_model_without_epsilon"),
    pytest.param(_set("threat_model", kind="none"), ("threat_model.epsilon",), ("makes no privacy claim",),
                 id="none_with_epsilon"),
    pytest.param(_set("threat_model", kind="none", epsilon=None, delta=None), ("threat_model.kind",),
                 ("analysed under 'isrl'", "algorithms for 'none'"), id="none_for_a_private_algorithm"),
    pytest.param(_set("threat_model", neighbouring={"unit": "user", "change": "add_remove"}),
                 ("threat_model.neighbouring",), ("user/add_remove", "handle record/replace_one"),
                 id="neighbouring_no_accountant_handles"),
    pytest.param(_set("threat_model", neighbouring={"unit": "silo", "change": "replace_one"}),
                 ("threat_model.neighbouring.unit",), ("'record', 'user' or 'element'",), id="neighbouring_bad_unit"),
    pytest.param(_set("data", participation={"low": 1, "high": 25}),
                 ("data.participation", "data.participation.high"), ("high <= N = 20",),
                 id="participation_high_above_N"),
]


def _field_segment(message: str, file: str) -> str:
    assert message.startswith(f"{file}: "), message
    return message[len(file) + 2:].split(": ", 1)[0]


def _assert_one_line_with_file(message: str, file: str) -> None:
    assert "\n" not in message.strip(), f"multi-line message: {message!r}"
    assert message.strip(), "empty message"
    assert file in message, message


@pytest.mark.parametrize("mutate, fields, phrases", CASES)
def test_malformed_spec_gives_one_line_error(tmp_path, base, mutate, fields, phrases):
    raw = copy.deepcopy(base)
    mutate(raw)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(SpecError) as info:
        load(path)
    message = str(info.value)
    _assert_one_line_with_file(message, str(path))
    assert _field_segment(message, str(path)) in fields, message
    assert any(f in message for f in fields), message
    for phrase in phrases:
        assert phrase in message, message


def test_yaml_syntax_error(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: agd_smooth\n  trials: [1, 2\n")
    with pytest.raises(SpecError) as info:
        load(path)
    message = str(info.value)
    _assert_one_line_with_file(message, str(path))
    assert "not valid YAML" in message
    assert "line 2" in message


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(SpecError) as info:
        load(path)
    message = str(info.value)
    _assert_one_line_with_file(message, str(path))
    assert "no such file" in message


def test_yaml_that_is_not_a_mapping(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(SpecError) as info:
        load(path)
    message = str(info.value)
    _assert_one_line_with_file(message, str(path))
    assert "mapping" in message


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(SpecError) as info:
        load(tmp_path)
    _assert_one_line_with_file(str(info.value), str(tmp_path))


def test_file_not_utf8(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(SpecError) as info:
        load(path)
    _assert_one_line_with_file(str(info.value), str(path))


SHIPPED = sorted(glob.glob(str(ROOT / "specs" / "*.yaml")))


def test_there_are_shipped_specs():
    assert len(SHIPPED) >= 2


@pytest.mark.parametrize("path", SHIPPED, ids=[Path(p).stem for p in SHIPPED])
def test_shipped_specs_load(path):
    spec = load(path)
    assert spec.name
    assert len(spec.checks) >= 1


def test_json_schema():
    schema = json_schema()
    assert isinstance(schema, dict)
    assert "threat_model" in schema["properties"]
    assert "checks" in schema["properties"]


def test_the_default_neighbouring_relation_stated_explicitly_is_the_same_spec(tmp_path, base):
    """Today's specs keep their meaning: stating the threat model's default relation changes nothing the run uses."""
    raw = copy.deepcopy(base)
    raw["threat_model"]["neighbouring"] = {"unit": "record", "change": "replace_one"}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    spec, default = load(path), load(BASE_SPEC)
    assert spec.threat_model.relation == default.threat_model.relation
    assert default.threat_model.relation is not None and default.threat_model.relation.unit == "record"


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_missing_spec_file_is_refused_before_the_spec_kinds_are_imported(tmp_path, command):
    # the one-line error comes at once: nothing heavy (the spec kinds, their algorithms and SymPy theorems) is
    # imported for a path that does not exist
    import subprocess
    import sys
    missing = tmp_path / "nope.yaml"
    code = ("import sys; from engine import cli; rc = cli.main([%r, %r]); "
            "print(rc, 'engine.kinds' in sys.modules, 'sympy' in sys.modules)" % (command, str(missing)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parent.parent,
                         timeout=60)
    assert out.stdout.split() == ["2", "False", "False"], out.stdout + out.stderr
    assert out.stderr.strip() == f"error: {missing}: no such file"
