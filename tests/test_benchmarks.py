"""The benchmark still runs against the engine as it is (a smoke test, not a timing: its numbers are ratios it
reports itself): the spec it resolves loads, its configurations build, the accountant timing runs."""
from __future__ import annotations

from benchmarks import run


def test_the_benchmark_resolves_agd_smooth_and_builds_its_configurations():
    kwargs, population = run._agd_kwargs(20)
    assert kwargs["T"] == 20 and kwargs["n"] > 0 and population is not None
    assert set(run.configs(True)) == set(run.configs(False))


def test_the_accountant_timing_runs_in_quick_mode():
    out = run.accountant_times(quick=True)
    assert out["dp_accounting_speedup"] > 1 and out["shuffle_speedup"] > 0
