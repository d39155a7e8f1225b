"""Batch-independent trials, executors, the resumable result store and load_results (issue 3)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import engine
from algorithms.streams import TrialStreams, trial_seed
from engine import executors, render
from engine.kinds.learning import runner
from engine.store import Store
from tests.helpers import tiny_mbsgd, tiny_onepass


def _numbers(res: dict):
    """Everything a run measured and decided (no timings)."""
    pts = [(p["measurements"], p["noise_sq_sum"], p["noise_coords"], p["events"], p["params"]) for p in res["points"]]
    return pts, [(c["id"], c["verdict"], c["measured"], c["bound"]) for c in res["checks"]]


def _sweep_spec():
    """tiny_onepass with a 3-point sweep, so there are several units."""
    from engine.kinds.learning import spec as spec_mod
    s = tiny_onepass().model_dump(mode="json")
    s["sweep"] = {"field": "data.n", "values": [1500, 2000, 2500]}
    return spec_mod.parse(s, "sweep")


@pytest.mark.parametrize("make", [tiny_onepass, tiny_mbsgd], ids=["one_pass", "mbsgd"])
def test_results_do_not_depend_on_how_trials_are_batched(make):
    spec = make()
    all_at_once = runner.run_spec(spec, trials=12)
    for chunk in (1, 7, 12):
        assert _numbers(runner.run_spec(spec, trials=12, chunk=chunk)) == _numbers(all_at_once)


def test_a_trial_is_the_same_whatever_else_runs():
    """Trial 5 of 6 and trial 5 of 40 are the same computation."""
    spec = tiny_mbsgd()
    few, many = runner.run_spec(spec, trials=6), runner.run_spec(spec, trials=40)
    for k, v in few["points"][0]["measurements"].items():
        assert many["points"][0]["measurements"][k][:6] == v


def test_trial_streams_consume_each_generator_in_order():
    seeds = [trial_seed(np.random.SeedSequence(9), t) for t in range(3)]
    s = TrialStreams(seeds)
    first = s.standard_normal((3, 5))
    big = s.standard_normal((3, 20000))
    last = s.standard_normal((3, 4))
    direct = np.random.Generator(np.random.SFC64(trial_seed(np.random.SeedSequence(9), 1).spawn(2)[1])).standard_normal(20009)
    assert np.array_equal(np.concatenate([first[1], big[1], last[1]]), direct)
    with pytest.raises(ValueError):
        s.random((4, 2))                      # the leading axis must be the trials
    u = TrialStreams(seeds).integers(0, 7, size=(3, 200000))
    assert u.min() == 0 and u.max() == 6 and abs(np.bincount(u.ravel()) / u.size - 1 / 7).max() < 0.005


def test_executors_give_bit_identical_results():
    spec = _sweep_spec()
    base = runner.run_spec(spec, trials=5)
    procs = runner.run_spec(spec, trials=5, executor=executors.Processes(2))
    assert _numbers(procs) == _numbers(base)


def test_dask_local_cluster_gives_bit_identical_results():
    distributed = pytest.importorskip("dask.distributed")
    spec = _sweep_spec()
    base = runner.run_spec(spec, trials=5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        pool = executors.Dask(cluster.scheduler_address)
        try:
            res = runner.run_spec(spec, trials=5, executor=pool)
        finally:
            pool.close()
    assert _numbers(res) == _numbers(base)


def _die_once(unit):
    """A unit that kills its worker process the first time it runs (marker file), then succeeds."""
    marker = Path(unit["marker"])
    if not marker.exists():
        marker.write_text("died")
        os._exit(1)
    return unit["value"] * 2


def test_a_unit_whose_worker_died_is_retried(tmp_path):
    units = [{"marker": str(tmp_path / "m"), "value": v} for v in (1, 2, 3)]
    got = sorted(executors.Processes(2).run(_die_once, units))
    assert got == [2, 4, 6]


class _Stop(Exception):
    pass


def test_an_interrupted_sweep_resumes_and_loses_nothing(tmp_path):
    spec = _sweep_spec()
    fresh = runner.run_spec(spec, trials=6)
    store = Store(tmp_path / "r.sqlite")
    seen = {"n": 0}

    def progress(points, trials):
        def tick(k):
            seen["n"] += k
            if seen["n"] >= 6:          # after the first unit has been stored
                raise _Stop
        return tick
    with pytest.raises(_Stop):
        runner.run_spec(spec, trials=6, store=store, progress=progress)
    resumed = runner.run_spec(spec, trials=6, store=store)
    assert resumed["reused_trials"] == 6 and _numbers(resumed) == _numbers(fresh)
    again = runner.run_spec(spec, trials=6, store=store)
    assert again["reused_trials"] == 18 and _numbers(again) == _numbers(fresh)
    more = runner.run_spec(spec, trials=8, store=store)               # only the new trials are computed
    assert more["reused_trials"] == 18 and _numbers(more) == _numbers(runner.run_spec(spec, trials=8))


def test_a_changed_spec_or_seed_never_reuses_rows(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    spec = tiny_mbsgd()
    runner.run_spec(spec, trials=4, store=store)
    assert runner.run_spec(spec, trials=4, store=store, seed=99)["reused_trials"] == 0
    from engine.kinds.learning import spec as spec_mod
    changed = spec_mod.parse({**spec.model_dump(mode="json"), "loss": {"kind": "squared", "diameter": 2.5}}, "x")
    assert runner.run_spec(changed, trials=4, store=store)["reused_trials"] == 0
    # prose, expected verdicts and the trial count are not part of a trial's identity
    reworded = spec_mod.parse({**spec.model_dump(mode="json"), "description": "other words"}, "x")
    assert runner.run_spec(reworded, trials=4, store=store)["reused_trials"] == 4


def test_load_results_gives_one_row_per_trial(tmp_path):
    res = runner.run_spec(_sweep_spec(), trials=3)
    json_path, _ = render.write(res, tmp_path)
    df = engine.load_results(json_path)
    assert len(df) == 9 and list(df.columns[:3]) == ["spec", "n", "trial"]
    assert df.groupby("n")["excess_risk"].mean().shape == (3,)
    assert df.attrs["checks"]["noise"]["verdict"] == res["checks"][0]["verdict"]


def _each_dies_once(unit):
    """Units with a marker die the first time they run; the others never do."""
    if unit["marker"]:
        marker = Path(unit["marker"])
        if not marker.exists():
            marker.write_text("died")
            os._exit(1)
    return unit["value"]


def test_several_units_that_each_kill_a_worker_once_all_finish(tmp_path):
    """A pool break fails every unit in the pool, guilty or not: nobody is charged for it, and the units
    are rerun one by one, so three units that each die once and one that never dies all finish."""
    units = [{"marker": str(tmp_path / f"m{v}") if v < 3 else "", "value": v} for v in range(4)]
    assert sorted(executors.Processes(2).run(_each_dies_once, units)) == [0, 1, 2, 3]


def _always_dies(unit):
    os._exit(1)


def test_a_unit_that_always_kills_its_worker_is_reported():
    with pytest.raises(executors.ExecutorError):
        list(executors.Processes(2).run(_always_dies, [1, 2]))


def test_adding_a_sweep_value_recomputes_only_that_point(tmp_path):
    from engine.kinds.learning import spec as spec_mod
    store = Store(tmp_path / "r.sqlite")
    spec = _sweep_spec()
    first = runner.run_spec(spec, trials=3, store=store)
    wider = spec.model_dump(mode="json")
    wider["sweep"]["values"] = [1500, 2000, 2500, 3000]
    res = runner.run_spec(spec_mod.parse(wider, "wider"), trials=3, store=store)
    assert res["reused_trials"] == 9
    assert _numbers(res)[0][:3] == _numbers(first)[0]        # the old points' numbers are unchanged


class _OtherCode:
    """An executor whose 'worker' reports other code than ours (a stale installation on a cluster)."""

    def run(self, fn, units):
        for u in units:
            yield dict(fn(u), code="something else")


def test_results_from_workers_running_other_code_are_refused(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    with pytest.raises(executors.ExecutorError):
        runner.run_spec(tiny_mbsgd(), trials=3, store=store, executor=_OtherCode())
    assert runner.run_spec(tiny_mbsgd(), trials=3, store=store)["reused_trials"] == 0


def test_a_stored_audit_is_reused(tmp_path, monkeypatch):
    from engine.kinds.learning import audit
    spec = tiny_onepass(audit=True)        # agd_smooth's checks, privacy_audit among them
    assert "privacy_audit" in [c.kind for c in spec.checks]
    store = Store(tmp_path / "r.sqlite")
    first = runner.run_spec(spec, trials=3, store=store)
    monkeypatch.setattr(audit, "run", lambda *a, **k: pytest.fail("the audit ran again"))
    again = runner.run_spec(spec, trials=3, store=store)
    assert _numbers(again) == _numbers(first) and again["points"][0]["audit"] == first["points"][0]["audit"]


def test_every_long_phase_reports_progress():
    """The run's trials, the audit (one tick per audited point) and a mechanism's points and checks each get a bar
    of their own, named for what they count, and each bar reaches its total."""
    from engine import kinds
    from engine.kinds import mechanism

    bars: list[list] = []

    def progress(points, per, what="trials"):
        bar = [what, points * per, 0]
        bars.append(bar)

        def tick(k):
            bar[2] += k
        return tick
    runner.run_spec(tiny_mbsgd(audit=True), trials=2, progress=progress, quick=True)
    mechanism.run.run(kinds.load("specs/darrm_pure_k.yaml"), quick=True, progress=progress)
    assert [b[0] for b in bars] == ["trials", "audit points", "mechanism points", "checks"]
    assert all(done == total for _, total, done in bars), bars


def test_our_local_dask_workers_get_a_pool_workers_settings():
    """The Dask executor's own LocalCluster: each worker keeps freed memory and one BLAS thread, as a pool worker
    does (engine.executors._dask_worker_setup), and the run's numbers are those of the sequential run."""
    pytest.importorskip("dask.distributed")
    spec = _sweep_spec()
    base = runner.run_spec(spec, trials=5)
    pool = executors.Dask(workers=1)
    try:
        assert list(pool.client.run(executors._dask_worker_state).values()) == [True]
        res = runner.run_spec(spec, trials=5, executor=pool)
    finally:
        pool.close()
    assert _numbers(res) == _numbers(base)
