"""Contracts every registry entry must meet, parametrised over the registries themselves, so a new entry is
tested the moment it is registered:

- every algorithm (catalog.ALGORITHMS), in every variant, resolves on a tiny problem built the way the engine builds
  one (engine/kinds/learning/problem.py, then the constants engine/kinds/learning/runner.py::run_unit passes), and its resolved parameters are
  finite; the tiny problems are the shipped specs' (learning specs, and each run of a comparison spec) cut to one
  point and two trials;
- every theorem with terms (verifiers.theorems.THEOREMS) evaluates to a finite positive number at the resolved
  parameters of one of its algorithms (``SKIP`` lists the exceptions, with reasons);
- every check kind (verifiers.checks.CHECKS, the curve kinds, every mechanism's kinds, the comparison's ordering) has
  a test that makes it return ``fail`` (``FAILING_TESTS``);
- every mechanism (catalog.MECHANISMS) has a shipped spec, a threat model, sweepable parameters its model has, and a
  failing test for every check kind it allows;
- every privacy event kind has an accountant;
- every spec kind (engine.kinds.SPEC_KINDS) has a shipped spec.
"""
from __future__ import annotations

import ast
import functools
import math
import typing
from pathlib import Path

import numpy as np
import pytest

from algorithms import events
from catalog import ALGORITHMS, MECHANISMS, AlgorithmEntry, MechanismEntry, Resolved
from catalog.base import MechanismParams
from engine import kinds
from engine.kinds.comparison.spec import OrderingCheck
from engine.kinds.learning import problem, runner
from engine.kinds.learning import spec as spec_mod
from verifiers.accountants import ACCOUNTANTS
from verifiers.accountants.base import Accountant
from verifiers.checks import CHECKS
from verifiers.checks.curves import CURVE_CHECKS
from verifiers.theorems import THEOREMS
from verifiers.threat_models import THREAT_MODELS

ROOT = Path(__file__).resolve().parent.parent
SPEC_FILES = sorted((ROOT / "specs").glob("*.yaml"))

STRONG_MU = 0.1          # the ridge weight a tiny problem gets for a strongly convex theorem when its spec has mu = 0
TINY_EVAL_RECORDS = 1000  # sphere_logistic's evaluation sample (the smallest the spec model allows)


# --------------------------------------------------------------------------------------------------------------
# tiny problems from the shipped specs

@functools.cache
def _shipped() -> tuple[tuple[str, object], ...]:
    return tuple((p.stem, kinds.load(p)) for p in SPEC_FILES)


def _tiny(spec: spec_mod.Spec, label: str, mu: float | None = None, variant: str | None = None) -> spec_mod.Spec:
    """One point (no sweep), two trials, one check that fits any spec; a small evaluation sample."""
    raw = spec.model_dump(mode="json")
    raw.update(trials=2, sweep=None, quick=None, expect={}, expect_quick={},
               checks=[{"id": "privacy", "kind": "privacy_accounting"}])
    if raw["data"]["kind"] == "sphere_logistic":
        raw["data"]["eval_records"] = TINY_EVAL_RECORDS
    if mu is not None:
        raw["loss"]["mu"] = mu
    if variant is not None:
        raw["algorithm"]["variant"] = variant
    return spec_mod.parse(raw, label)


@functools.cache
def _sources() -> tuple[tuple[str, spec_mod.Spec], ...]:
    """(label, learning spec) for every shipped learning spec and every run of a shipped comparison spec (at the
    first value of its first sweep)."""
    out = []
    for stem, spec in _shipped():
        name = kinds.kind_for(spec).name
        if name == "learning":
            out.append((stem, spec))
        elif name == "comparison":
            sweep = spec.sweeps[0]
            out += [(f"{stem}:{run.id}", spec.learning_spec(run, sweep, sweep.values[0])) for run in spec.runs]
    return tuple(out)


def _sources_for(algorithm: str) -> list[tuple[str, spec_mod.Spec]]:
    return [(label, s) for label, s in _sources() if s.algorithm.kind == algorithm]


@functools.cache
def _resolved(label: str, mu: float | None = None, variant: str | None = None) -> tuple[spec_mod.Spec, Resolved]:
    """The resolved parameters of a source's tiny problem: the problem as engine/kinds/learning/problem.py builds it and the
    constants engine/kinds/learning/runner.py::run_unit hands the resolver."""
    base = dict(_sources())[label]
    spec = _tiny(base, label, mu, variant)
    prob = problem.build(spec, runner.problem_seed(spec.seed), np.random.default_rng(np.random.SeedSequence(spec.seed)))
    M, _ = runner.effective_M(spec)
    consts = prob.consts | {"N": spec.data.N, "M": M, "eps0": spec.threat_model.epsilon,
                            "delta0": spec.threat_model.delta}
    entry: AlgorithmEntry = ALGORITHMS.get(spec.algorithm.kind)
    v = spec.algorithm.variant or entry.variants[0]
    return spec, entry.resolve(consts, v, dict(spec.algorithm.overrides))


# --------------------------------------------------------------------------------------------------------------
# (a) algorithms

ALGORITHM_VARIANTS = [(name, v) for name, e in ALGORITHMS.items() for v in e.variants]


@pytest.mark.parametrize("name,variant", ALGORITHM_VARIANTS, ids=[f"{a}-{v}" for a, v in ALGORITHM_VARIANTS])
def test_every_algorithm_resolves_on_a_tiny_problem(name, variant):
    sources = _sources_for(name)
    assert sources, f"no shipped spec (learning spec or comparison run) uses {name}: add one to specs/"
    for label, _ in sources:
        spec, res = _resolved(label, variant=variant)
        bad = {k: v for k, v in res.params.items() if not math.isfinite(float(v))}
        assert not bad, f"{name} ({variant}) on {label}: non-finite resolved parameters {bad}"
        assert set(res.overridden) <= set(spec.algorithm.overrides)
        assert {k for k in res.provenance} >= set(res.overridden), "every override must say where it came from"


AUDITABLE = [name for name, e in ALGORITHMS.items() if e.auditable]


@pytest.mark.parametrize("name", AUDITABLE)
def test_an_auditable_algorithm_emits_events_the_audit_simulates(name):
    """auditable=True promises engine/kinds/learning/audit.py an audit of what the algorithm releases: one trial of
    its smallest shipped problem must report only event kinds the audit table knows (else a spec with
    privacy_audit would pass validation and fail at run time)."""
    from engine.kinds.learning import audit

    label, base = min(_sources_for(name), key=lambda ls: ls[1].data.N * (ls[1].data.n or 1))
    spec = _tiny(base, label)
    out = runner.run_unit(runner.Unit(spec.model_dump(mode="json"), 0, None, (0,), spec.seed, ()))
    kind = out["info"]["event"].get("kind", "gaussian")
    assert kind in audit.AUDITS, f"{name} is auditable but emits {kind!r}, which no audit simulates"


def test_every_algorithm_names_registered_theorems():
    for name, e in ALGORITHMS.items():
        assert e.privacy_theorem in THEOREMS, f"{name}: privacy theorem {e.privacy_theorem!r} is not registered"
        assert e.variants, f"{name} has no variant"
    for name, thm in THEOREMS.items():
        unknown = [a for a in thm.algorithms if a not in ALGORITHMS]
        assert not unknown, f"{name} names unregistered algorithms {unknown}"


# --------------------------------------------------------------------------------------------------------------
# (b) theorems

SKIP: dict[str, str] = {}
"""Theorems with terms that no tiny problem can evaluate, with the reason (keep this short: at most 3)."""

WITH_TERMS = [name for name, thm in THEOREMS.items() if thm.terms]


def _evaluations(name: str) -> list[tuple[str, object]]:
    """(where, value or error) at every tiny problem of the theorem's algorithms; a strongly convex theorem also
    at the same problems with mu = STRONG_MU where they have mu = 0."""
    thm = THEOREMS.get(name)
    out: list[tuple[str, object]] = []
    for algorithm in thm.algorithms:
        for label, spec in _sources_for(algorithm):
            mus: list[float | None] = [None]
            if thm.loss_class == "strongly_convex" and spec.loss.mu == 0:
                mus.append(STRONG_MU)
            for mu in mus:
                where = label if mu is None else f"{label} with mu = {mu}"
                try:
                    out.append((where, thm.evaluate(_resolved(label, mu)[1].params)))
                except Exception as e:             # reported in the assertion message
                    out.append((where, f"{type(e).__name__}: {e}"))
    return out


def _finite_positive(x: object) -> bool:
    return isinstance(x, float) and math.isfinite(x) and x > 0


@pytest.mark.parametrize("name", WITH_TERMS)
def test_every_theorem_evaluates_at_its_algorithms_parameters(name):
    got = _evaluations(name)
    ok = [where for where, x in got if _finite_positive(x)]
    if name in SKIP:
        assert not ok, f"{name} now evaluates ({ok}): remove it from SKIP"
        pytest.skip(SKIP[name])
    assert got, f"{name}: none of its algorithms {THEOREMS.get(name).algorithms} has a shipped spec"
    assert ok, f"{name} is not finite and positive at any tiny problem of its algorithms: {got}"


def test_the_skip_list_is_short_and_explicit():
    assert len(SKIP) <= 3, SKIP
    for name, reason in SKIP.items():
        assert name in WITH_TERMS, f"SKIP names {name!r}, not a registered theorem with terms"
        assert len(reason) > 20, f"SKIP[{name!r}] needs a reason"


# --------------------------------------------------------------------------------------------------------------
# (c) check kinds: each has a test that makes it return `fail`

FAILING_TESTS = {
    # verifiers.checks.CHECKS
    "noise_calibration": "tests/test_faults.py::test_noise_scaled_inside_the_mechanism_is_caught_by_noise_calibration",
    "privacy_accounting": "tests/test_faults.py::test_record_reused_in_the_one_pass_version_is_caught_by_accounting",
    "privacy_audit": "tests/test_audit.py::test_noise_divided_by_ten_inside_the_mechanism_is_caught_by_the_audit",
    "ldp_exact": "tests/test_cldp.py::test_too_little_randomization_is_caught_by_ldp_exact_and_audit",
    "unbiased": "tests/test_cldp.py::test_biased_sampler_is_caught_by_unbiased",
    "bound": "tests/test_local.py::test_a_biased_server_is_caught_by_lemma42",
    "rate": "tests/test_rate_check.py::test_rate_check_passes_and_fails_on_the_measured_slope",
    # verifiers.checks.curves.CURVE_CHECKS
    "bounds_ordered": "tests/test_curves.py::test_bounds_ordered_fails_when_the_bounds_are_swapped",
    "ratio_claim": "tests/test_shuffle_baselines.py::test_curve_checks_decide_and_can_fail",
    "curves_ordered": "tests/test_shuffle_baselines.py::test_curve_checks_decide_and_can_fail",
    "paper_value": "tests/test_fig3_values.py::test_paper_value_fails_on_a_planted_scaled_curve_and_a_wrong_paper_value",
    # the mechanisms' check registries (catalog.MECHANISMS; verifiers/checks/mechanism.py)
    "protocol_privacy": "tests/test_shuffle_sum.py::test_noise_below_the_calibration_is_caught_by_privacy",
    "protocol_unbiased": "tests/test_shuffle_sum.py::test_biased_estimator_is_caught_by_unbiased",
    "protocol_mse": "tests/test_shuffle_sum.py::test_noise_reduced_inside_the_sampler_is_caught_by_mse",
    # verifiers/checks/exact_rdp.py (EXACT_RDP_CHECKS: seed 001's subsampled shuffle mechanism, exact RDP)
    "rdp_upper": "tests/test_exact_shuffle_rdp.py::test_thm1_halved_or_subsampling_forgotten_is_caught_by_rdp_upper",
    "rdp_lower": "tests/test_exact_shuffle_rdp.py::test_thm2_scaled_up_or_a_noisier_randomizer_is_caught_by_rdp_lower",
    # verifiers/checks/darrm.py (DARRM_CHECKS: seed 003's DaRRM, exact privacy and utility)
    "darrm_privacy": "tests/test_darrm.py::test_plain_majority_in_place_of_gamma_sub_is_caught_by_darrm_privacy",
    "darrm_amplification": "tests/test_darrm.py::test_a_larger_subsample_in_gamma_dsub_is_caught_by_darrm_amplification",
    "darrm_utility": "tests/test_darrm.py::test_a_shrunk_gamma_dsub_is_caught_by_darrm_utility",
    "darrm_optimal": "tests/test_darrm.py::test_an_lp_with_half_its_rows_or_a_flipped_objective_is_caught_by_darrm_optimal",
    # verifiers/checks/darrm_sampled.py (DARRM_SAMPLED_CHECKS: seed 003's DaRRM sampled: audit, simulated error)
    "darrm_audit": "tests/test_darrm_sampled.py::test_a_larger_subsample_in_gamma_sub_is_caught_by_the_exact_check_and_by_darrm_audit",
    "darrm_utility_sim": "tests/test_darrm_sampled.py::test_a_biased_fair_coin_in_the_sampler_is_caught_by_darrm_utility_sim",
    # verifiers/checks/darrm_composition.py (seed 003's Table B.1, query totals, Thm 3.3.3 against the optimum)
    "darrm_printed_numbers": "tests/test_darrm_composition.py::test_a_dropped_term_of_the_minimum_is_caught_by_darrm_printed_numbers",
    "darrm_general_composition": "tests/test_darrm_composition.py::test_sqrt_k_for_sqrt_2k_is_caught_by_darrm_general_composition",
    # verifiers/checks/darrm_priors.py (seed 003's Fig. B.7: gamma optimised under the priors T_U and T_P)
    "darrm_prior_choice": "tests/test_darrm_priors.py::test_t_p_integrated_over_t_us_interval_is_caught_by_darrm_prior_choice",
    # verifiers/checks/darrm_teachers.py (seed 003's private label prediction, §3.7.2, and its printed budgets)
    "teachers_vs_gnmax": "tests/test_darrm_teachers.py::test_too_little_gnmax_noise_is_caught_by_teachers_vs_gnmax",
    "teachers_vs_sub": "tests/test_darrm_teachers.py::test_a_shrunk_gamma_opt_is_caught_by_teachers_vs_sub",
    "pate_budget_totals": "tests/test_darrm_teachers.py::test_simple_composition_is_caught_by_pate_budget_totals",
    "gnmax_calibration": "tests/test_darrm_teachers.py::test_a_log10_in_the_gnmax_grid_is_caught_by_gnmax_calibration",
    # verifiers/checks/darrm_lp.py (seed 003's DaRRM LP at large K by constraint generation)
    "lp_large_k": "tests/test_darrm_lp.py::test_a_scan_missing_the_middle_corners_is_caught_by_lp_large_k",
    # verifiers/checks/element.py (seed 002's heavy hitters and clipped histogram)
    "element_privacy": "tests/test_element.py::test_planted_halved_sensitivity_caught_by_element_privacy",
    "element_audit": "tests/test_element.py::test_planted_noise_on_the_wrong_scale_caught_by_the_audit",
    "element_vs_user": "tests/test_element.py::test_planted_element_noise_too_large_caught_by_element_vs_user",
    "ordering_loss": "tests/test_element.py::test_planted_noise_too_large_caught_by_prop1",
    "mse_rate": "tests/test_element.py::test_planted_noise_without_one_over_n_caught_by_mse_rate",
    "finer_partition": "tests/test_element.py::test_planted_noise_growing_with_k_caught_by_finer_partition",
    # verifiers/checks/element_sgd.py (seed 002's element-level SGD)
    "covariance": "tests/test_element_sgd.py::test_a_wrong_covariance_or_noise_on_the_wrong_scale_is_caught_by_covariance",
    "centred": "tests/test_element_sgd.py::test_a_shifted_centre_is_caught_by_centred",
    "el_minimiser": "tests/test_element_sgd.py::test_a_misspecified_label_model_is_caught_by_el_minimiser",
    # verifiers/checks/shuffleg.py (seed 003 ch. 4's private shuffled gradient methods)
    "shuffleg_accounting": "tests/test_shuffleg.py::test_sigma_from_the_wrong_alpha_is_caught_by_shuffleg_accounting_and_the_audit",
    "last_iterate_audit": "tests/test_shuffleg.py::test_sigma_from_the_wrong_alpha_is_caught_by_shuffleg_accounting_and_the_audit",
    "injected_noise": "tests/test_shuffleg.py::test_noise_missing_on_public_steps_is_caught_by_injected_noise",
    "corollary_bound": "tests/test_shuffleg.py::test_a_wrong_prox_step_is_caught_by_corollary_bound",
    "theorem_bound": "tests/test_shuffleg.py::test_the_noise_term_of_cor_451_fails_exactly_at_small_steps",
    "interleaved_best": "tests/test_shuffleg.py::test_interleaved_noise_without_its_amplification_is_caught_by_interleaved_best",
    "public_only_suboptimal": "tests/test_shuffleg.py::test_public_only_on_unshifted_public_data_makes_public_only_suboptimal_fail",
    "privacy_term_order": "tests/test_shuffleg.py::test_a_wrong_factorisation_is_caught_by_privacy_term_order",
    "dissimilarity_order": "tests/test_shuffleg.py::test_a_permuted_public_copy_makes_dissimilarity_order_fail",
    "eq413_rate": "tests/test_shuffleg.py::test_eq413_rate_and_exact_bound_fail_at_the_thesis_schedule",
    "exact_bound": "tests/test_shuffleg.py::test_eq413_rate_and_exact_bound_fail_at_the_thesis_schedule",
    "exact_vs_simulation": "tests/test_shuffleg.py::test_a_step_off_the_closed_form_is_caught_by_exact_vs_simulation",
    "dpsgd_order": "tests/test_shuffleg.py::test_too_much_dpsgd_noise_is_caught_by_dpsgd_order",
    "table44_rate": "tests/test_shuffleg.py::test_interleaved_noise_without_its_amplification_is_caught_by_table44_rate",
    "dpsgd_below_dp_shuffleg": "tests/test_shuffleg.py::test_too_much_dpsgd_noise_is_caught_by_dpsgd_below_dp_shuffleg",
    # verifiers/checks/dme.py (seed 003 ch. 2's distributed mean estimators)
    "mse_identity": "tests/test_dme.py::test_a_hadamard_without_its_scaling_is_caught_by_mse_identity",
    "thm243": "tests/test_dme.py::test_a_wrong_normalisation_constant_is_caught_by_thm243",
    "unbiased_estimators": "tests/test_dme.py::test_a_biased_rounding_is_caught_by_unbiased_estimators",
    "mse_ordering": "tests/test_dme.py::test_a_decoder_that_ignores_the_spectrum_is_caught_by_mse_ordering",
    "a32_condition": "tests/test_dme.py::test_a32_sufficient_condition_fails_exactly",
    "lemma241": "tests/test_dme.py::test_a_transform_applied_to_singular_values_is_caught_by_lemma241",
    "spatial_vs_randk": "tests/test_dme_tasks.py::test_spatial_vs_randk_passes_and_a_wrong_spatial_normalisation_fails",
    # verifiers/checks/dme_tasks.py (DME_TASK_CHECKS: seed 003 ch. 2 §2.5's distributed tasks)
    "task_ordering": "tests/test_dme_tasks.py::test_a_betabar_as_theorem_243_prints_it_is_caught_by_task_ordering",
    "codec_time": "tests/test_dme_tasks.py::test_a_decoder_timed_without_its_eigendecomposition_is_caught_by_codec_time",
    "rank_deficiency": "tests/test_dme_tasks.py::test_srht_ranks_match_numpy_and_clients_sharing_their_signs_are_caught_by_rank_deficiency",
    # verifiers/checks/element_sum.py (seed 002's subsampled Gaussian element sum (4), Cor 2.4, Cor 2.5)
    "sum_accounting": "tests/test_element_sum.py::test_wrong_sensitivity_in_the_claim_is_caught_by_accounting",
    "sum_audit": "tests/test_element_sum.py::test_noise_too_small_is_caught_by_the_audit",
    "cor25_approximation": "tests/test_element_sum.py::test_cor25_approximation_fails_as_q_goes_to_zero",
    "subsampling_amplification": "tests/test_element_sum.py::test_amplification_check_fails_exactly_where_k_exceeds_one",
    # verifiers/checks/element_composition.py (seed 002's Cor 2.2, Cor 2.3, Eq. (16), Prop 3 (i)-(ii))
    "group_privacy": "tests/test_element_composition.py::test_group_claim_without_its_factor_is_caught_by_group_privacy",
    "basic_composition": "tests/test_element_composition.py::test_basic_delta_as_a_max_is_caught_by_basic_composition",
    "advanced_composition": "tests/test_element_composition.py::test_a_smaller_advanced_epsilon_is_caught_by_advanced_composition",
    "advanced_composition_delta": "tests/test_element_composition.py::test_the_printed_delta_term_fails_and_dwork_rothblum_vadhans_passes",
    "rdp_composition": "tests/test_element_composition.py::test_rdp_composition_as_one_step_is_caught_by_rdp_composition",
    "eq16_order": "tests/test_element_composition.py::test_a_sampling_rate_that_does_not_fall_with_n_is_caught_by_the_order_checks",
    "prop3_element_order": "tests/test_element_composition.py::test_a_sampling_rate_that_does_not_fall_with_n_is_caught_by_the_order_checks",
    "prop3_user_order": "tests/test_element_composition.py::test_a_sampling_rate_that_does_not_fall_with_n_is_caught_by_the_order_checks",
    # verifiers/checks/element_lemmas.py (seed 002's Lemmas B.1, B.2, C.1, C.2)
    "lemma_b1": "tests/test_element_lemmas.py::test_a_wrong_moment_formula_is_caught_by_lemma_b1",
    "lemma_b2": "tests/test_element_lemmas.py::test_a_tighter_bound_is_caught_by_lemma_b2",
    "lemma_c1": "tests/test_element_lemmas.py::test_c1_with_a_smaller_constant_is_caught_by_lemma_c1",
    "lemma_c2": "tests/test_element_lemmas.py::test_c2_without_3_log_m_is_caught_by_lemma_c2",
    # verifiers/checks/element_fig3.py (seed 002's §4.2 / Fig. 3 and the privacy of its SGD runs)
    "el_error_falls_with_k": "tests/test_element_fig3.py::test_no_noise_reduction_with_k_is_caught_by_el_error_falls_with_k",
    "nonprivate_falls_with_k": "tests/test_element_fig3.py::test_nonprivate_error_rising_with_k_is_caught_by_nonprivate_falls_with_k",
    "user_flat_in_k": "tests/test_element_fig3.py::test_user_level_falling_like_the_element_level_is_caught_by_user_flat_in_k",
    "faster_convergence_with_k": "tests/test_element_fig3.py::test_slower_convergence_with_more_clusters_is_caught_by_faster_convergence_with_k",
    "element_below_user": "tests/test_element_fig3.py::test_user_level_noise_on_the_element_level_is_caught_by_element_below_user",
    "sgd_accounting": "tests/test_element_fig3.py::test_cor31_accountant_where_users_hold_k_clusters_is_caught_by_sgd_accounting",
    "sgd_audit": "tests/test_element_fig3.py::test_noise_too_small_inside_the_sgd_is_caught_by_sgd_audit",
    # verifiers/checks/cldp_fig3.py (seed 001's Figure 3: CLDP-SGD stopped where Thm 1 / the [24] baseline end a budget)
    "accuracy_order": "tests/test_cldp_fig3.py::test_thm1_without_subsampling_is_caught_by_accuracy_order",
    "accuracy_rises": "tests/test_cldp_fig3.py::test_flipped_training_labels_are_caught_by_accuracy_rises",
    "baseline_epsilon": "tests/test_cldp_fig3.py::test_kov_drift_doubled_is_caught_by_baseline_epsilon",
    "budget_within_run": "tests/test_cldp_fig3.py::test_thm1_rdp_too_small_is_caught_by_budget_within_run",
    # the comparison specs' check (verifiers/checks/ordering.py)
    "ordering": "tests/test_comparison.py::test_a_reversed_order_fails",
    # verifiers/checks/isrl_experiments.py (seed 004's Sec. 6 / App. I: the calibration accounted, the orderings)
    "calibration_mbsgd": "tests/test_isrl_experiments.py::test_halved_noise_in_the_mbsgd_calibration_is_caught_by_calibration_mbsgd",
    "calibration_local_sgd": "tests/test_isrl_experiments.py::test_local_noise_without_its_factor_k_is_caught_by_calibration_local_sgd",
    "order_vs_local_dp": "tests/test_isrl_experiments.py::test_mbsgd_worse_than_local_is_caught_by_the_order_checks",
    "order_vs_local_np": "tests/test_isrl_experiments.py::test_mbsgd_worse_than_local_is_caught_by_the_order_checks",
    "below_naive": "tests/test_isrl_experiments.py::test_mbsgd_worse_than_the_naive_predictor_is_caught_by_below_naive",
}

def _registered_check_kinds() -> list[str]:
    ordering = list(typing.get_args(OrderingCheck.model_fields["kind"].annotation))
    return sorted(set(CHECKS.names()) | set(CURVE_CHECKS.names()) | set(_mechanism_check_kinds()) | set(ordering))


def _mechanism_check_kinds() -> list[str]:
    return sorted({kind for _, e in MECHANISMS.items() for kind in e.checks.names()})


@functools.cache
def _test_functions(path: str) -> dict[str, ast.FunctionDef]:
    tree = ast.parse((ROOT / path).read_text())
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


@pytest.mark.parametrize("kind", _registered_check_kinds())
def test_every_check_kind_has_a_test_that_makes_it_fail(kind):
    assert kind in FAILING_TESTS, f"check kind {kind!r}: name a test that makes it return fail in FAILING_TESTS"
    path, func = FAILING_TESTS[kind].split("::")
    assert (ROOT / path).is_file(), f"{kind}: {path} does not exist"
    fns = _test_functions(path)
    assert func in fns, f"{kind}: {path} has no top-level test function {func}"
    says_fail = any(isinstance(n, ast.Constant) and n.value == "fail" for n in ast.walk(fns[func]))
    assert says_fail, f"{kind}: {FAILING_TESTS[kind]} never expects the verdict 'fail'"


def test_the_failing_tests_table_covers_exactly_the_registered_kinds():
    registered = set(_registered_check_kinds())
    assert set(FAILING_TESTS) == registered, (
        f"unlisted kinds: {sorted(registered - set(FAILING_TESTS))}; "
        f"listed but not registered: {sorted(set(FAILING_TESTS) - registered)}")


@pytest.mark.parametrize("name", MECHANISMS.names())
def test_every_mechanism_has_a_spec_a_threat_model_and_failing_tests_for_its_checks(name):
    e: MechanismEntry = MECHANISMS.get(name)
    assert e.name == name and e.description and e.citation, f"{name}: needs its name, a description and a citation"
    assert e.threat_model in THREAT_MODELS, f"{name}: threat model {e.threat_model!r} is not in verifiers/threat_models.py"
    assert issubclass(e.params, MechanismParams), f"{name}: its params model must derive from MechanismParams"
    fields = set(e.params.model_fields)
    assert set(e.sweepable) <= fields, f"{name}: sweepable {e.sweepable} not all parameters of {sorted(fields)}"
    assert set(e.whole) <= set(e.sweepable), f"{name}: whole {e.whole} must be sweepable parameters"
    assert e.checks.names(), f"{name} allows no check kind"
    missing = [k for k in e.checks.names() if k not in FAILING_TESTS]
    assert not missing, f"{name}: check kinds {missing} have no failing test in FAILING_TESTS"
    shipped = [stem for stem, spec in _shipped() if kinds.kind_for(spec).name == "mechanism" and spec.mechanism == name]
    assert shipped, f"mechanism {name!r} has no spec in specs/"


# --------------------------------------------------------------------------------------------------------------
# (d) privacy events and their accountants

EVENT_KINDS_BY_CLASS = {cls: kind for kind, cls in events.EVENT_KINDS.items()}


def test_every_event_class_has_an_accountant():
    for cls, acc in ACCOUNTANTS.items():
        assert isinstance(acc, Accountant) and acc.event is cls
        assert callable(acc.epsilon) and callable(acc.describe) and callable(acc.view) and callable(acc.covers)
        assert EVENT_KINDS_BY_CLASS.get(cls) == cls.kind, f"{cls.__name__} is not registered in EVENT_KINDS"


@pytest.mark.parametrize("kind", events.EVENT_KINDS.names())
def test_every_event_kind_has_an_accountant(kind):
    cls = events.EVENT_KINDS.get(kind)
    assert cls.kind == kind, f"EVENT_KINDS[{kind!r}] is {cls.__name__}, whose kind is {cls.kind!r}"
    assert cls in ACCOUNTANTS, f"event kind {kind!r} ({cls.__name__}) has no accountant in verifiers.accountants"



# --------------------------------------------------------------------------------------------------------------
# (e) spec kinds

@pytest.mark.parametrize("kind", kinds.SPEC_KINDS.names())
def test_every_spec_kind_has_a_shipped_spec(kind):
    shipped = [stem for stem, spec in _shipped() if kinds.kind_for(spec).name == kind]
    assert shipped, f"spec kind {kind!r} has no spec in specs/"
