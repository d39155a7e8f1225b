"""The benchmark still runs against the engine as it is (a smoke test, not a timing: its numbers are ratios it
reports itself): the spec it resolves loads, its configurations build, the accountant timing runs. And the pieces
its figures rest on: the README generator (on a temporary copy), the per-sample clipping of the DP-SGD comparison
against a record-by-record reference, the draw counter and the generator found by introspection, the bound's sum,
and the Opacus comparison's skip without opacus."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from algorithms.losses import Logistic
from algorithms.streams import streams_for
from benchmarks import readme, run


def test_the_benchmark_resolves_agd_smooth_and_builds_its_configurations():
    kwargs, population = run._agd_kwargs(20)
    assert kwargs["T"] == 20 and kwargs["n"] > 0 and population is not None
    assert set(run.configs(True)) == set(run.configs(False))


def test_the_accountant_timing_runs_in_quick_mode():
    out = run.accountant_times(quick=True)
    assert out["dp_accounting_speedup"] > 1 and out["shuffle_speedup"] > 0
    assert out["engine_rdp_same_epsilon"] and out["engine_rdp_speedup"] > 1


# --- the README generator, the bound's pieces and DP-SGD's per-sample clipping --------------------------------
RESULTS = Path(run.__file__).with_name("results.json")
PROSE = "# Title\n\nSome prose.\n\n## Performance\nText before.\n\n"
AFTER = "\nText after, kept byte for byte.\n\n## Next\n"


def _readme(tmp_path: Path, inner: str = "old hand-typed table\n") -> Path:
    path = tmp_path / "README.md"
    path.write_text(PROSE + readme.BEGIN + "\n" + inner + readme.END + "\n" + AFTER)
    return path


def test_the_readme_section_is_rewritten_from_the_committed_results_and_nothing_else_changes(tmp_path):
    res = json.loads(RESULTS.read_text())
    path = _readme(tmp_path)
    assert readme.main(["--results", str(RESULTS), "--readme", str(path), "--check"]) == 1    # stale before
    assert readme.main(["--results", str(RESULTS), "--readme", str(path)]) == 0
    text = path.read_text()
    assert text.startswith(PROSE + readme.BEGIN + "\n") and text.endswith(readme.END + "\n" + AFTER)
    assert "old hand-typed table" not in text
    section = text[text.index(readme.BEGIN):text.index(readme.END)]
    for row in res["rows"]:                     # every configuration's engine, baseline, bound and ratios
        line = next(li for li in section.splitlines() if li.startswith(f"| {row['config']} | ")
                    and readme.ALGORITHM_NAMES[row["algorithm"]] in li)
        for value in (readme._s(row["engine_s"]), readme._s(row["baseline_s"]), readme._s(row["bound_s"]),
                      readme._x(row["speedup"]), readme._x(row["engine_over_bound"]), readme._x(readme.ceiling(row))):
            assert value in line
    assert "Opacus" in section and res["generator"]["bit_generator"] in section
    assert readme.main(["--results", str(RESULTS), "--readme", str(path), "--check"]) == 0    # up to date
    assert readme.main(["--results", str(RESULTS), "--readme", str(path)]) == 0
    assert path.read_text() == text                                                          # idempotent


def test_the_ceiling_is_the_baselines_time_over_the_rows_bound():
    # the bound counts the engine's draws, which the baseline makes too (the test below counts both sides)
    row = {"baseline_s": 2.7, "bound_s": 2.3, "engine_s": 2.5}
    assert readme.ceiling(row) == pytest.approx(2.7 / 2.3)
    assert readme.ceiling(row) >= row["baseline_s"] / row["engine_s"]      # the engine's speed-up is below it


@pytest.mark.parametrize("body", [PROSE, PROSE + readme.END + "\n" + readme.BEGIN + "\n",
                                  PROSE + readme.BEGIN + "\n" + readme.BEGIN + "\n" + readme.END + "\n"])
def test_a_readme_without_one_ordered_pair_of_markers_is_refused_and_left_as_it_was(tmp_path, body, capsys):
    path = tmp_path / "README.md"
    path.write_text(body)
    assert readme.main(["--results", str(RESULTS), "--readme", str(path)]) == 2
    assert path.read_text() == body
    assert "benchmarks:begin" in capsys.readouterr().err


def test_results_without_opacus_render_its_skip_message(tmp_path):
    res = json.loads(RESULTS.read_text())
    op = res["opacus"]
    res["opacus"] = {k: v for k, v in op.items() if not k.startswith(("ratio_", "cpu_ratio_", "opacus", "versions"))}
    res["opacus"]["status"] = "skipped: opacus is not installed"
    section = readme.render(res)
    assert "Opacus: skipped: opacus is not installed" in section and "| Opacus, runs" not in section


def test_per_sample_clipping_matches_a_record_by_record_reference_and_bites():
    rng = np.random.default_rng(4)
    T, N, K, d = 2, 3, 5, 4
    X = rng.standard_normal((T, N, K, d))
    y = np.where(rng.random((T, N, K)) < 0.5, -1.0, 1.0)
    w = rng.standard_normal((T, d))
    for C in (0.3, 100.0):
        want = np.zeros((T, N, d))
        for t in range(T):
            for i in range(N):
                for k in range(K):
                    x = X[t, i, k]
                    g = -y[t, i, k] * x / (1.0 + math.exp(y[t, i, k] * float(x @ w[t])))   # d/dw ln(1 + e^{-y<w,x>})
                    want[t, i] += g * min(1.0, C / float(np.linalg.norm(g))) / K
        got = run.PerSampleClipped(Logistic(), C).batch_grad(w, X, y)               # the clipped-gradient kernel
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
        numpy_path = run.PerSampleClipped(_NoKernel(), C).batch_grad(w, X, y)
        np.testing.assert_allclose(numpy_path, want, rtol=1e-12, atol=1e-15)
    unclipped = Logistic().batch_grad(w, X, y)
    assert np.allclose(run.PerSampleClipped(Logistic(), 100.0).batch_grad(w, X, y), unclipped)
    assert not np.allclose(run.PerSampleClipped(Logistic(), 0.3).batch_grad(w, X, y), unclipped)


class _NoKernel(Logistic):
    """The logistic loss through numpy (a subclass's dphi has no kernel code)."""

    def dphi(self, z, y, xsq):
        return super().dphi(z, y, xsq)


def test_the_engines_clipped_dpsgd_clips(monkeypatch):
    """The clipping reaches the engine's run: Records.batch_grad calls the wrapper (a loss with a kernel code would
    be differentiated by the fused kernel, unclipped), and a clip below the gradients' norms changes the output."""
    cfg = {"N": 1, "n": 64, "d": 4, "K": 8, "R": 20}
    calls = []
    real = run.PerSampleClipped.batch_grad
    monkeypatch.setattr(run.PerSampleClipped, "batch_grad", lambda self, *a: calls.append(1) or real(self, *a))
    assert run.PerSampleClipped(Logistic(), 1.0).kernel is None
    clipped = run.engine_dpsgd(cfg, [0, 1], clip=0.05)
    assert len(calls) == cfg["R"]
    assert not np.allclose(clipped, run.engine_dpsgd(cfg, [0, 1], clip=None))
    np.testing.assert_allclose(run.engine_dpsgd(cfg, [0, 1], clip=1.0), run.engine_dpsgd(cfg, [0, 1], clip=None),
                               rtol=1e-12, atol=1e-15)      # the sphere's gradients are below 1: clipping is inert


def test_draws_are_counted_exactly_and_the_streams_are_restored():
    before = (run.TrialStreams.standard_normal, run.TrialStreams.random)
    with run.counting_draws() as counts:
        s = streams_for(np.random.SeedSequence(0), [0, 1, 2], 1)
        s.standard_normal((3, 7, 2))
        s.uniform(0.0, 1.0, (3, 5))
        s.integers(0, 9, size=(3, 4))
    assert counts == {"normal": 42, "uniform": 27}
    assert (run.TrialStreams.standard_normal, run.TrialStreams.random) == before


def test_the_generator_rate_is_measured_on_the_generator_the_streams_use():
    s = streams_for(np.random.SeedSequence(0), [0], 1)
    gens = run._generators(s)
    assert gens and all(isinstance(g, np.random.Generator) for g in gens)
    rates = run.generator_rates(m=2**12)
    assert rates["bit_generator"] == "/".join(sorted({type(g.bit_generator).__name__ for g in gens}))
    assert all(rates[k] > 0 for k in ("normal_ns", "uniform_ns", "streams_normal_ns", "streams_uniform_ns"))


def test_the_bound_adds_the_draws_to_the_slower_of_memory_and_compute():
    limits, rates = {"copy_gb_per_s": 8.0, "matmul_gflops": 4.0}, {"normal_ns": 10.0, "uniform_ns": 2.0}
    b = run.work_bound({"normal": 10**6, "uniform": 10**6}, 10**9, limits, rates)
    assert b["draws_s"] == pytest.approx(0.012) and b["memory_s"] == pytest.approx(1.0)
    assert b["compute_s"] == pytest.approx(1.0) and b["bound_s"] == pytest.approx(1.012)
    assert run.work_bound({"normal": 10**9, "uniform": 0}, 0, limits, rates)["limited_by"] == "draws"


def test_the_opacus_comparison_skips_with_a_message_naming_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "opacus", None)          # import opacus raises ImportError
    cfg = dict(N=4, n=40, d=3, K=2, R=3, T=2, sigma=0.5)
    out = run.opacus_comparison(cfg, {"copy_gb_per_s": 10.0, "matmul_gflops": 10.0},
                                {"normal_ns": 10.0, "uniform_ns": 2.0}, repeats=1)
    assert out["status"].startswith("skipped: opacus is not installed")
    assert out["batched_equals_run_by_run"] and out["engine_batched"]["wall_s"] > 0


def test_the_baseline_makes_the_same_draws_as_the_engine_on_every_row():
    # the ceiling's premise (baseline / bound is the most an implementation drawing these numbers could gain): the
    # bound counts the engine's draws, and the baseline asks the trial streams for exactly as many of each kind
    small = {"a_overhead": dict(N=6, n=20, d=3, K=2, R=5, T=3, sigma=0.5), "b_agd": dict(agd=True, T=1),
             "c_large": dict(N=2, n=64, d=8, K=16, R=3, T=2, sigma=0.05)}
    rows = run.row_pairs(small)
    assert {(r["config"], r["algorithm"]) for r in rows} == {(r["config"], r["algorithm"])
                                                             for r in run.row_pairs(run.configs(True))}
    for row in rows:
        with run.counting_draws() as engine:
            row["engine"]()
        with run.counting_draws() as baseline:
            row["baseline"]()
        assert engine == baseline and engine["normal"] > 0, (row["config"], row["algorithm"], engine, baseline)
