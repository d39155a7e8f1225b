"""A mechanism spec's sweep points on worker processes (issue 17): the same points, checks and verdicts as one after
another in this process, in the sweep's order whatever order the workers finish in; and the allocator setting the
command line applies is accepted by this platform's malloc (or skipped where there is none)."""
from __future__ import annotations

import sys

from engine import executors
from engine.allocator import keep_freed_memory
from engine.kinds import load
from engine.kinds.mechanism import run as mechanism_run
from tests.helpers import ROOT


def _numbers(res: dict):
    """Everything the run measured and decided (no timings)."""
    pts = [{k: v for k, v in p.items() if k != "seconds"} for p in res["points"]]
    return pts, [(c["id"], c["verdict"], c["measured"], c["bound"]) for c in res["checks"]]


def test_points_on_worker_processes_are_the_points_run_in_turn():
    spec = load(ROOT / "specs" / "element_lemmas.yaml")         # 3 points of random draws (quick: 2000 trials)
    assert len(spec.values()) == 3
    alone = mechanism_run.run(spec, quick=True)
    pool = executors.Processes(2)
    try:
        spread = mechanism_run.run(spec, quick=True, executor=pool)
    finally:
        pool.close()
    assert [p["value"] for p in spread["points"]] == spec.values()
    assert _numbers(spread) == _numbers(alone)


def test_the_allocator_setting_is_accepted_on_linux():
    assert keep_freed_memory() is sys.platform.startswith("linux")


def test_quick_trials_of_a_mechanism_spec(tmp_path, capsys):
    """A mechanism spec's quick.trials sets its --quick size (default max(100, trials // 10)); more than the
    spec's trials is refused in one line naming the field, exit 2."""
    import yaml

    from engine.cli import main

    raw = yaml.safe_load((ROOT / "specs" / "darrm_pure.yaml").read_text())
    assert load(ROOT / "specs" / "darrm_pure.yaml").quick_trials() == max(100, raw["trials"] // 10)
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump({**raw, "quick": {"trials": 40}}))
    assert load(path).quick_trials() == 40
    assert mechanism_run.run(load(path), quick=True)["trials"] == 40
    path.write_text(yaml.safe_dump({**raw, "quick": {"trials": raw["trials"] + 1}}))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "quick.trials" in err[0] and "at most the spec's trials" in err[0]
