"""The claims ledger (engine/ledger.py, `python -m engine claims`) and the citations it is built from: every theorem
and every check of the committed reports cites claim ids the registry (verifiers/claims.py) holds, and
reports/CLAIMS.md is the ledger of the committed reports."""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from engine import cli, ledger
from engine.kinds import load
from verifiers.checks.curves import DEFAULT_CLAIMS
from verifiers.checks.mechanism import INVENTORY
from verifiers.claims import CLAIMS, Claim
from verifiers.theorems import THEOREMS

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted((ROOT / "specs").glob("*.yaml"))
NAMES = [load(p).name for p in SPECS]


@pytest.mark.parametrize("name", list(THEOREMS.names()))
def test_every_theorem_cites_registered_claims_or_says_why_not(name):
    thm = THEOREMS.get(name)
    assert isinstance(thm.inventory, tuple)
    assert [i for i in thm.inventory if i not in CLAIMS] == []
    assert thm.inventory or thm.not_inventoried, f"{name} cites no claim and gives no reason"


def test_fixed_tables_cite_registered_claims():
    for ids in [*INVENTORY.values(), *DEFAULT_CLAIMS.values()]:
        assert [i for i in ids if i not in CLAIMS] == []


@pytest.mark.parametrize("name", NAMES)
def test_every_committed_check_cites_registered_claims(name):
    result = json.loads((ROOT / "reports" / f"{name}.json").read_text())
    for ch in result["checks"]:
        ids = ch.get("claims")
        assert ids is not None, f"{name}/{ch['id']}: results without claims (regenerate the reports)"
        assert [i for i in ids if i not in CLAIMS] == [], f"{name}/{ch['id']}"
        assert ids or "not inventoried" in ch["citation"] or "not an inventoried claim" in ch["citation"], \
            f"{name}/{ch['id']} cites no claim and says nothing about why"


def test_committed_ledger_is_the_ledger_of_the_committed_reports():
    entries, missing, uncited = ledger.collect(NAMES, ROOT / "reports")
    assert missing == []
    text = ledger.markdown(entries, missing, uncited, "reports")
    assert (ROOT / "reports" / "CLAIMS.md").read_text(encoding="utf-8") == text, \
        "reports/CLAIMS.md is stale: python -m engine claims --markdown reports/CLAIMS.md"


def _results(tmp: Path, name: str, checks: list[dict], kind: str = "learning", data: str = "sphere_linear") -> None:
    spec = {"data": {"kind": data}} if kind in ("learning", "comparison") else {}
    (tmp / f"{name}.json").write_text(json.dumps({"kind": kind, "name": name, "spec": spec, "checks": checks}))


def _check(cid: str, verdict: str, claims: list[str], summary: str = "why") -> dict:
    return {"id": cid, "kind": "bound", "verdict": verdict, "summary": summary, "claims": claims, "citation": "c"}


def test_statuses(tmp_path, monkeypatch):
    theorem, experiment, hard, lonely = (next(c for c in CLAIMS.values() if c.type == t)
                                         for t in ("utility-upper", "experiment-number", "rate", "identity"))
    monkeypatch.setitem(CLAIMS, hard.id, Claim(**{**vars(hard), "undecidable": "needs n = 10^9: 40 days here"}))
    _results(tmp_path, "a", [_check("x", "inapplicable", [theorem.id], "vacuous by a factor 38"),
                             _check("y", "pass", [experiment.id]), _check("z", "inconclusive", [hard.id])],
             data="digits")
    _results(tmp_path, "b", [_check("x", "fail", [theorem.id])])
    entries, missing, uncited = ledger.collect(["a", "b", "c"], tmp_path)
    assert missing == ["c"] and uncited == []
    assert (entries[theorem.id].status, entries[theorem.id].verdict) == ("decided", "fail")
    assert entries[experiment.id].status == "decided on a stand-in"
    assert entries[hard.id].status == "undecidable on one machine"
    assert "40 days" in entries[hard.id].reason()
    assert entries[lonely.id].status == "not encoded"
    # a curve/mechanism spec computes at the paper's parameters: an experiment's number decided there is decided
    _results(tmp_path, "b", [_check("x", "pass", [experiment.id])], kind="privacy_curve")
    entries, _, _ = ledger.collect(["a", "b"], tmp_path)
    assert entries[experiment.id].status == "decided"
    # only inapplicable / inconclusive: undecided, with the check's reason
    _results(tmp_path, "b", [])
    entries, _, _ = ledger.collect(["a", "b"], tmp_path)
    assert entries[theorem.id].status == "undecided" and "vacuous by a factor 38" in entries[theorem.id].reason()


def test_unknown_claim_in_results_is_refused(tmp_path):
    _results(tmp_path, "a", [_check("x", "pass", ["999 Thm 0"])])
    with pytest.raises(KeyError, match="999 Thm 0"):
        ledger.collect(["a"], tmp_path)


def test_uncited_checks_are_listed(tmp_path):
    _results(tmp_path, "a", [_check("x", "pass", [])])
    _, _, uncited = ledger.collect(["a"], tmp_path)
    assert [u["check"] for u in uncited] == ["x"]


def _cli(*args: str, cwd: Path = ROOT) -> SimpleNamespace:
    """``python -m engine claims ARGS`` run in this process (the command's own entry point, run_main, with its
    exit code and both streams; test_cli_end_to_end runs one as a separate process)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.run_main(["claims", *args])
        except SystemExit as e:                      # argparse's own exits
            code = e.code if isinstance(e.code, int) else 2
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def test_cli_end_to_end():
    """The ledger command as a separate process: its counts on stdout, exit 0."""
    out = subprocess.run([sys.executable, "-m", "engine", "claims", "--paper", "002"], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0 and "002   all" in out.stdout, out.stderr


def test_cli_counts_and_markdown(tmp_path):
    out = _cli("--markdown", str(tmp_path / "CLAIMS.md"))
    assert out.returncode == 0, out.stderr
    assert "all   all       230" in out.stdout
    assert (tmp_path / "CLAIMS.md").read_text() == (ROOT / "reports" / "CLAIMS.md").read_text()
    one = _cli("--paper", "001", "--priority", "A")
    assert one.returncode == 0 and "001 Thm 1 [A]" in one.stdout
    listed = _cli("--list")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == len(CLAIMS)


def test_cli_bad_folder_is_one_line(tmp_path):
    out = _cli("--reports", str(tmp_path / "nope"))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--reports" in out.stderr


def _curve(tmp: Path, check: str) -> Path:
    text = (ROOT / "specs" / "shuffle_fig2a.yaml").read_text(encoding="utf-8")
    head = text.split("checks:")[0]
    path = tmp / "c.yaml"
    path.write_text(head + "checks:\n  - " + check + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("check, field, words", [
    ('{id: r, kind: ratio_claim, curve: "fmt_kov:as_stated", at: 100000, ratio: 14, claims: ["001 Fig. 2a (14x)"]}',
     "checks.0.claims", "001 Fig. 2a (14×)"),          # a close match is offered
    ('{id: r, kind: ratio_claim, curve: "fmt_kov:as_stated", at: 100000, ratio: 14}', "checks.0.claims",
     "not_inventoried"),
    ('{id: r, kind: curves_ordered, order: [thm1, thm2], claims: ["001 Thm 1"], not_inventoried: "x"}',
     "checks.0.not_inventoried", "not both"),
])
def test_curve_checks_name_their_claims(tmp_path, check, field, words):
    from engine.specbase import SpecError

    with pytest.raises(SpecError) as err:
        load(_curve(tmp_path, check))
    assert field in str(err.value) and words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("name", NAMES)
def test_committed_claims_are_their_theorems_claims(name):
    """The ledger reads the claims stored in the results: they must be what the theorem cites today (or none, with
    the reason, where the run decides nothing about it)."""
    result = json.loads((ROOT / "reports" / f"{name}.json").read_text())
    for ch in result["checks"]:
        thm = ch.get("theorem")
        if thm in THEOREMS:
            assert tuple(ch["claims"]) in (THEOREMS.get(thm).inventory, ()), f"{name}/{ch['id']}"
            if not ch["claims"]:
                assert "not inventoried" in ch["citation"], f"{name}/{ch['id']}"


def test_cli_bad_results_and_markdown_targets_are_one_line(tmp_path):
    reports = tmp_path / "r"
    reports.mkdir()
    (reports / "agd_smooth.json").write_text("[1]")
    out = _cli("--reports", str(reports))
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    (tmp_path / "d").mkdir()
    out = _cli("--markdown", str(tmp_path / "d"))
    assert out.returncode == 2 and "--markdown" in out.stderr and out.stderr.count("\n") == 1, out.stderr
