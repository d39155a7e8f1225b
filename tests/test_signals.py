"""Stopping a run (issue 19), with real processes: `python -m engine run` on a sweep that would take about
half a minute on two worker processes, stopped early. Its workers die with it whatever signal it gets; Ctrl-C
(SIGINT) and SIGTERM stop it within about a second, keep every finished unit in the store (a rerun computes only
the others), say so in one line and exit 130 / 143; a second Ctrl-C during the cleanup changes nothing. Each test
takes a few seconds (the interpreter's start-up and the first finished unit)."""
from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from engine import kinds
from engine.kinds.learning import runner
from engine.store import Store
from tests.helpers import ROOT, raw

pytestmark = pytest.mark.skipif(not sys.platform.startswith(("linux", "darwin")), reason="POSIX signals")

STOP_SECONDS = 4.0          # from the signal to the exit (measured 0.2-0.3 s; room for a loaded CI machine)
WAIT = 60                   # generous limits for a loaded machine; a passing test takes a few seconds


def _spec(tmp_path: Path) -> Path:
    """agd_smooth with 14 sweep points (a unit each, about 3 s) and only its cheap checks: about 20 s on two
    workers."""
    r = raw("agd_smooth")
    r.update(name="stop_me", trials=30, expect={}, expect_quick={})
    r["sweep"] = {"field": "data.n", "values": [7071 + 2000 * k for k in range(14)]}
    r["checks"] = [c for c in r["checks"] if c["kind"] in ("noise_calibration", "privacy_accounting")]
    path = tmp_path / "stop_me.yaml"
    path.write_text(yaml.safe_dump(r))
    return path


class Run:
    """`python -m engine run` of the spec above in its own session (so the test can clean up whatever is left)."""

    def __init__(self, tmp_path: Path, *extra: str):
        self.spec = _spec(tmp_path)
        self.store = tmp_path / "r.sqlite"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine", "run", str(self.spec), "--executor", "processes", "--workers", "2",
             "--store", str(self.store), "--out", str(tmp_path / "out"), "--quiet", *extra],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def workers(self, at_least: int = 2) -> list[int]:
        """The pids of the run's worker processes, once at least that many have started."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the run ended early: {self.proc.communicate()}"
            kids = _children(self.proc.pid)
            if len(kids) >= at_least:
                return kids
            time.sleep(0.05)
        raise AssertionError("the workers did not start")

    def stored_units(self) -> int:
        """Wait for the first finished unit to reach the store (one transaction per unit)."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the run ended early: {self.proc.communicate()}"
            if _trial_rows(self.store):
                return _trial_rows(self.store)
            time.sleep(0.05)
        raise AssertionError("no unit finished")

    def stop(self, *signals: signal.Signals, gap: float = 0.0) -> tuple[float, str]:
        """Send the signals (gap seconds apart); the seconds from the first to the exit, and stderr."""
        start = time.monotonic()
        for k, s in enumerate(signals):
            if k:
                time.sleep(gap)
            if self.proc.poll() is None:
                self.proc.send_signal(s)
        _, err = self.proc.communicate(timeout=WAIT)
        return time.monotonic() - start, err

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)    # anything left in its session (a failed test's workers)
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture
def run(tmp_path):
    made: list[Run] = []

    def start(*extra: str) -> Run:
        made.append(Run(tmp_path, *extra))
        return made[-1]
    yield start
    for r in made:
        r.close()


def _children(pid: int) -> list[int]:
    try:
        import psutil
    except ImportError:
        pass
    else:
        try:
            return [c.pid for c in psutil.Process(pid).children()]
        except psutil.NoSuchProcess:
            return []
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        kids += [int(k) for k in task.read_text().split()]
    return kids


def _alive(pids: list[int]) -> list[int]:
    """Those still running (a zombie, dead but not yet reaped by whoever adopted it, is not)."""
    try:
        import psutil
    except ImportError:
        psutil = None
    left = []
    for pid in pids:
        if psutil is not None:
            try:
                if psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                    left.append(pid)
            except psutil.NoSuchProcess:
                pass
            continue
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            left.append(pid)
    return left


def _gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _trial_rows(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)
        try:
            return db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:                    # not created yet
        return 0


class _Asked(Exception):
    pass


class _Probe:
    """An executor that records the units a run would compute and stops it there."""

    def __init__(self) -> None:
        self.units: list = []

    def run(self, fn, units):
        self.units = list(units)
        raise _Asked


def _units_to_compute(spec: Path, store: Path | None) -> int:
    """How many units `run` with this store would compute (what the CLI runs, without running it)."""
    probe = _Probe()
    opened = Store(store) if store is not None else None
    try:
        with pytest.raises(_Asked):
            runner.run_spec(kinds.load(spec), store=opened, executor=probe)
    finally:
        if opened is not None:
            opened.close()
    return len(probe.units)


def _one_line(err: str, code: int, store: Path) -> int:
    """stderr is the one line that says what was kept and how to resume, and no traceback; the units kept."""
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = [x for x in err.splitlines() if x.strip()]
    by = " (SIGTERM)" if code == 143 else ""
    m = re.fullmatch(rf"interrupted{re.escape(by)}: (\d+) finished unit\(s\) kept in {re.escape(str(store))}; "
                     r"run the same command again to resume", lines[-1])
    assert m and sum("interrupted" in x for x in lines) == 1, err
    return int(m[1])


def test_sigkill_of_the_run_takes_its_workers_with_it(run):
    r = run()
    workers = r.workers()
    os.kill(r.proc.pid, signal.SIGKILL)
    r.proc.wait(timeout=WAIT)
    assert _gone_within(workers, 3.0), f"workers {_alive(workers)} outlived their parent"


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["sigint", "sigterm"])
def test_a_signal_stops_the_run_at_once_and_keeps_every_finished_unit(run, sig, code):
    r = run()
    r.stored_units()                                # at least one unit is in the store
    workers = r.workers()
    seconds, err = r.stop(sig)
    assert r.proc.returncode == code, err
    assert seconds < STOP_SECONDS, f"{seconds:.1f} s to stop"
    kept = _one_line(err, code, r.store)
    assert kept >= 1
    assert _gone_within(workers, 3.0)
    total, left = _units_to_compute(r.spec, None), _units_to_compute(r.spec, r.store)
    assert 0 < left <= total - kept                 # a rerun computes only the units not kept


def test_a_second_ctrl_c_during_the_cleanup_changes_nothing(run):
    r = run()
    workers = r.workers()
    seconds, err = r.stop(signal.SIGINT, signal.SIGINT, signal.SIGINT, gap=0.02)
    assert r.proc.returncode == 130, err
    assert seconds < STOP_SECONDS, f"{seconds:.1f} s to stop"
    _one_line(err, 130, r.store)
    assert _gone_within(workers, 3.0)


def test_no_cache_says_nothing_was_kept(run):
    r = run("--no-cache")
    workers = r.workers()
    seconds, err = r.stop(signal.SIGTERM)
    assert r.proc.returncode == 143 and seconds < STOP_SECONDS, err
    assert err.strip().splitlines()[-1] == ("interrupted (SIGTERM): nothing was kept (--no-cache); run the command "
                                            "again to start over"), err
    assert "Traceback" not in err and _gone_within(workers, 3.0)


def test_ctrl_c_stops_a_dask_run_quickly_and_quietly(run):
    """The dask executor's LocalCluster: its busy workers are killed on Ctrl-C (the nanny's polite stop waits 4 s
    for them), the run exits 130 within the same time as with local processes, with no cluster log noise."""
    pytest.importorskip("dask.distributed")
    psutil = pytest.importorskip("psutil")
    r = run("--executor", "dask")
    r.stored_units()
    tree = [c.pid for c in psutil.Process(r.proc.pid).children(recursive=True)]
    seconds, err = r.stop(signal.SIGINT)
    assert r.proc.returncode == 130, err
    assert seconds < STOP_SECONDS, f"{seconds:.2f} s"
    assert "Traceback" not in err and "WARNING" not in err, err
    assert "interrupted" in err
    deadline = time.monotonic() + 3
    while _alive(tree) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(tree) == []


def _two_specs(tmp_path: Path) -> Path:
    """A folder with two copies of the spec above (different names), for `--jobs 2`."""
    folder = tmp_path / "two"
    folder.mkdir()
    for name in ("stop_me_a", "stop_me_b"):
        r = yaml.safe_load(_spec(tmp_path).read_text())
        r["name"] = name
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(r))
    return folder


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        found += kids
        todo += kids
    return found


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_jobs_children_stop_with_the_parent_and_keep_their_units(tmp_path, how):
    """`run FOLDER --jobs 2`: SIGTERM to the parent reaches both children, which keep their finished units (exit
    143, a rerun computes fewer units); SIGKILL of the parent alone still ends the children (their parent-death
    signal), so no spec runs on unseen."""
    folder, store = _two_specs(tmp_path), tmp_path / "j.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "engine", "run", str(folder), "--jobs", "2", "--store", str(store),
                             "--out", str(tmp_path / "out"), "--quiet"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + WAIT
        while not _trial_rows(store) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        kids = _descendants(proc.pid)
        assert len(kids) >= 2
        proc.send_signal(how)
        _, err = proc.communicate(timeout=WAIT)
        assert _gone_within(kids, STOP_SECONDS), "a child outlived the run"
        if how == signal.SIGTERM:
            assert proc.returncode == 143 and "interrupted" in err and "Traceback" not in err, err
            assert sum(_units_to_compute(p, store) for p in sorted(folder.glob("*.yaml"))) < 28
    finally:
        if proc.poll() is None:
            proc.kill()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
