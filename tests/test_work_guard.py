"""The work guard (issue 19): before any trial is computed, `run` resolves every sweep point's parameters, estimates
the run's gradient coordinates and a lower bound on its time, and refuses a run above the time limit in one line
(exit 2); `validate --work` does the same without running."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from engine.kinds import load
from engine.kinds.learning import runner

ROOT = Path(__file__).resolve().parents[1]


def _engine(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, capture_output=True, text=True)


def test_estimate_counts_rounds_silos_records_and_dimensions():
    spec = load(ROOT / "specs" / "mbsgd_lemma_d6.yaml")        # sigma, eta, R overridden: R = 2000, K = 4, M = 10
    coords, seconds, _ = runner.work_estimate(spec, trials=10, workers=1)
    points = len(spec.sweep.values) if spec.sweep else 1
    assert coords == 2000 * 10 * 4 * spec.data.d * 10 * points
    assert seconds == coords * runner.SECONDS_PER_COORDINATE
    # more trials, proportionally more work; two workers halve the time bound
    assert runner.work_estimate(spec, trials=20, workers=1)[0] == 2 * coords
    assert runner.work_estimate(spec, trials=10, workers=2)[1] == seconds / 2


def test_run_above_the_time_limit_is_refused_before_computing(tmp_path):
    big = (ROOT / "specs" / "sdp_mbsgd.yaml").read_text().replace("overrides: {R: 2000}", "overrides: {R: 2000000}")
    spec = tmp_path / "big.yaml"
    spec.write_text(big)
    t0 = time.perf_counter()
    out = _engine("run", str(spec), "--out", str(tmp_path / "out"), "--no-cache", "--time-limit", "0.05")
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert "algorithm" in out.stderr and "gradient coordinates" in out.stderr and "limit is 0.05 h" in out.stderr
    assert time.perf_counter() - t0 < 30                        # 2 x 10^6 rounds x 3 points would take hours
    assert not (tmp_path / "out").exists()


def test_validate_work_reports_and_refuses():
    ok = _engine("validate", "specs/mbsgd_lemma_d6.yaml", "--work")
    assert ok.returncode == 0 and "s of computing" in ok.stdout
    refused = _engine("validate", "specs/mbsgd_lemma_d6.yaml", "--work", "--time-limit", "1e-9")
    assert refused.returncode == 2 and "--time-limit" in refused.stderr and refused.stderr.count("\n") == 1


def test_a_bad_time_limit_in_the_environment_is_one_line(tmp_path):
    import os

    for bad in ("abc", "0", "-3"):
        out = subprocess.run([sys.executable, "-m", "engine", "run", "specs/mbsgd_lemma_d6.yaml", "--out",
                              str(tmp_path), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                             env={**os.environ, "PRIVBENCH_TIME_LIMIT": bad})
        assert out.returncode == 2 and "PRIVBENCH_TIME_LIMIT" in out.stderr and out.stderr.count("\n") == 1, bad


def test_a_comparison_is_judged_on_all_its_runs_before_the_first(tmp_path):
    out = _engine("run", "specs/threat_models_logistic.yaml", "--out", str(tmp_path), "--no-cache",
                  "--time-limit", "0.0005")
    assert out.returncode == 2 and "over its 4 runs" in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_stored_trials_are_not_counted(tmp_path):
    """A run whose trials are all in the store computes nothing, so no limit refuses it."""
    store = str(tmp_path / "s.sqlite")
    first = _engine("run", "specs/mbsgd_lemma_d6.yaml", "--out", str(tmp_path), "--store", store, "--quick")
    assert first.returncode in (0, 1, 3), first.stderr
    again = _engine("run", "specs/mbsgd_lemma_d6.yaml", "--out", str(tmp_path), "--store", store, "--quick",
                    "--time-limit", "1e-9")
    assert again.returncode == first.returncode, again.stderr
