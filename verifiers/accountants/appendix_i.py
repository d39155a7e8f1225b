"""The privacy of seed 004's experiments (App. I): a silo's R rounds of subsampled Gaussian releases, by dp-accounting's
PLD accountant, under both neighbouring conventions.

One release: the silo's message is (1/b) sum over a sampled batch of b of its n records of gradients of norm <= G,
plus N(0, sigma^2 I_d). In units of one record's contribution G/b the noise multiplier is z = sigma b / G.
- Replace-one (seed 004's Def. 2, L96: ISRL-DP) with a uniform b-subset without replacement (the experiments'
  MB-SGD; one uniform record per step, b = 1, for their Local SGD): the replaced record's index is in the batch with
  probability q = b/n; when it is not, both data sets give the same batch; when it is, its slot would otherwise hold
  another record. Projected on the change, the worst pair is (1 - q) N(0, z^2) + q N(2, z^2) against N(0, z^2) (and
  the reverse): the dominating pair of sampling without replacement under substitution (Zhu, Dong & Wang 2022), i.e.
  dp-accounting's sampled Gaussian under ADD_OR_REMOVE_ONE with sensitivity 2. It is attained: a linear loss (the
  gradient does not depend on w), every other record's gradient -G e, the changed one +G e against -G e; the rounds
  then compose exactly. (The pair (1 - q) N(0) + q N(+1) against (1 - q) N(0) + q N(-1), dp-accounting's REPLACE_ONE,
  is Poisson sampling's; it under-states this sampling's epsilon.)
- Local SGD's round (``local_round_lower``): a silo sends only its K-th local iterate (L1491), so composing the R K
  local steps (what Abadi et al.'s theorem, which App. I cites, accounts) is an upper bound for what ran. A lower
  bound that is attained: with the same linear loss the K steps' message is the sum of their gradients and noises,
  N(2B, K z^2) with B ~ Bin(K, 1/n) the times the changed record is drawn, against N(0, K z^2); R such rounds
  compose exactly.
- Add/remove (Abadi et al. 2016, whose Thm 1 App. I cites): Poisson sampling with rate q, one record adds at most
  G/b to the mean with the fixed denominator b: dp-accounting's Poisson-sampled Gaussian under ADD_OR_REMOVE_ONE.
Both are computed with a pessimistic discretisation (an upper bound on epsilon) and, where a verdict needs it, an
optimistic one (a lower estimate of the same PLD's epsilon), so a calibration is judged only outside that bracket."""
from __future__ import annotations

import math
import numbers

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.pld import privacy_loss_mechanism
from scipy.stats import binom

from verifiers.accountants.pld_compose import pmf_self_compose, self_compose
from verifiers.accountants.pld_epsilon import epsilon_for_delta, epsilon_for_delta_add

RELATIONS = ("replace_one", "add_remove")


def epsilon(*, z: float, q: float, steps: int, delta: float, relation: str, pessimistic: bool = True,
            interval: float = 1e-3) -> float:
    """epsilon at delta of ``steps`` compositions of the q-sampled Gaussian with noise multiplier z (in units of one
    record's contribution), under ``relation`` ('replace_one' or 'add_remove'). ``interval``: the PLD's value
    discretisation (the bracket between the pessimistic and the optimistic estimates is of its order)."""
    if not (z > 0 and 0 < q <= 1 and steps >= 1 and 0 < delta < 1):
        raise ValueError(f"subsampled Gaussian needs z > 0, 0 < q <= 1, steps >= 1, 0 < delta < 1 (got z = {z}, "
                         f"q = {q}, steps = {steps}, delta = {delta})")
    if relation not in RELATIONS:
        raise ValueError(f"relation {relation!r}: one of {sorted(RELATIONS)}")
    # replace-one under sampling without replacement: the remove-type pair with the shift doubled (module docstring)
    one = sampled_gaussian_pld(standard_deviation=z, sensitivity=2.0 if relation == "replace_one" else 1.0,
                               sampling_prob=q, pessimistic_estimate=pessimistic,
                               value_discretization_interval=interval)
    return epsilon_for_delta(self_compose(one, steps), delta)


def sampled_gaussian_pld(*, standard_deviation: float, sensitivity: float, sampling_prob: float,
                         pessimistic_estimate: bool, value_discretization_interval: float):
    """dp-accounting's ``from_gaussian_mechanism(standard_deviation, sensitivity, sampling_prob=sampling_prob,
    pessimistic_estimate=pessimistic_estimate, value_discretization_interval=value_discretization_interval,
    neighboring_relation=ADD_OR_REMOVE_ONE, use_connect_dots=pessimistic_estimate)`` (connect-the-dots is
    pessimistic only), built as that function builds it but with ``_GaussianLoss``, whose delta-for-epsilon grid
    (connect-the-dots' input) is computed without the library's per-epsilon Python calls (issue 17: most of a
    pessimistic PLD's construction). The same PLD bit for bit: tests/test_isrl_experiments.py pins it against the
    library's."""
    def single(adjacency_type):
        return pld_lib._create_pld_pmf_from_monotone_privacy_loss(
            _GaussianLoss(standard_deviation, sensitivity=sensitivity, pessimistic_estimate=pessimistic_estimate,
                          log_mass_truncation_bound=-50, sampling_prob=sampling_prob, adjacency_type=adjacency_type),
            pessimistic_estimate=pessimistic_estimate, value_discretization_interval=value_discretization_interval,
            use_connect_dots=pessimistic_estimate)
    return pld_lib._pld_for_subsampled_mechanism(single, sampling_prob)


class _GaussianLoss(privacy_loss_mechanism.GaussianPrivacyLoss):
    """dp-accounting's (subsampled) Gaussian privacy loss with ``get_delta_for_epsilon`` over an array of epsilons done
    by numpy: the library evaluates ``inverse_privacy_loss`` one epsilon at a time (its ADD / REMOVE branch,
    ``math.isclose`` against the log of 1 - q, ``common.log_a_times_exp_b_plus_c`` with a = 1/q, c = 1 - 1/q < 0, then
    the unsampled Gaussian inverse); here the same operations, in the same order, on the arrays (numpy's log, exp and
    log1p, as the library's scalar calls use; the arithmetic IEEE). A scalar epsilon, q = 1, another adjacency, or an
    epsilon where the library raises, goes to the library's own method."""

    def get_delta_for_epsilon(self, epsilon):
        A = privacy_loss_mechanism.AdjacencyType
        q = self.sampling_prob
        if (isinstance(epsilon, numbers.Number) or q == 1.0 or self.adjacency_type not in (A.ADD, A.REMOVE)
                or not np.isfinite(epsilon).all()):     # an infinite epsilon: the library's own answer (its isclose)
            return super().get_delta_for_epsilon(epsilon)
        epsilons = np.asarray(epsilon)
        deltas = np.zeros_like(epsilons, dtype=float)
        s, var = self.sensitivity, self._standard_deviation**2
        a, c = 1 / q, 1 - 1 / q
        add = self.adjacency_type == A.ADD
        if add:
            inverse = epsilons < -math.log1p(-q)
            eps = epsilons[inverse]
            edge = -math.log(1 - q)
            b = -eps
        else:
            inverse = epsilons > math.log1p(-q)
            other = np.logical_not(inverse)
            deltas[other] = -np.expm1(epsilons[other])
            eps = epsilons[inverse]
            edge = math.log(1 - q)
            b = eps
        diff = np.abs(eps - edge)                                        # math.isclose(eps, edge), rel_tol 1e-9
        close = (diff <= np.abs(1e-9 * edge)) | (diff <= np.abs(1e-9 * eps))
        log_minus_c = np.log(-c)
        d = b + np.log(a)
        rest = ~close
        if np.any(eps[rest] > edge if add else eps[rest] <= edge) or np.any(log_minus_c >= d[rest & (b != 0)]):
            return super().get_delta_for_epsilon(epsilon)                # the library's error
        with np.errstate(divide="ignore", invalid="ignore"):
            logsub = d + np.log1p(-np.exp(log_minus_c - d))              # common._log_sub(d, log(-c))
            pl = np.where(b == 0, np.log(a + c), logsub)                 # log(a exp(b) + c)
        if add:
            pl = -pl
            x = s + (-0.5 * s - pl * var / s)                            # _inverse_..._without_subsampling_add
            x[close] = s + (-0.5 * s - math.inf * var / s)
        else:
            x = -0.5 * s - pl * var / s                                  # _inverse_..._without_subsampling_remove
            x[close] = -0.5 * s - -math.inf * var / s
        deltas[inverse] = self.mu_upper_cdf(x) - np.exp(eps + self.mu_lower_log_cdf(x))
        return np.clip(deltas, 0, 1)


def local_round_lower(*, z: float, K: int, q: float, rounds: int, delta: float, interval: float = 1e-3) -> float:
    """A lower estimate of the epsilon of ``rounds`` Local SGD rounds (K local steps of one record drawn with
    probability q each, per-step noise multiplier z) on the attained linear-loss pair of the module docstring,
    sum_b Bin(K, q)(b) N(2b, K z^2) against N(0, K z^2), in the Gaussian-first direction only (dp-accounting's ADD
    direction of its mixture-of-Gaussians PLD: mu_upper is the Gaussian), optimistic discretisation: a lower bound, and
    a weak one (the mixture-first direction gives larger values, but its discretised tail was not stable when we varied
    the binomial's truncation, so it is not used). The binomial's tail below 1e-30 is moved to b = 0; in this direction
    that can lower delta by at most e^epsilon times the moved mass per round, so the result is taken at delta (1 +
    1e-3) and only where that bound is below 1e-3 delta (else an error)."""
    if not (z > 0 and K >= 1 and 0 < q <= 1 and rounds >= 1 and 0 < delta < 1):
        raise ValueError(f"Local SGD round needs z > 0, K >= 1, 0 < q <= 1, rounds >= 1, 0 < delta < 1 (got z = {z}, "
                         f"K = {K}, q = {q}, rounds = {rounds}, delta = {delta})")
    pmf = binom.pmf(np.arange(K + 1), K, q)
    keep = np.nonzero(pmf > 1e-30)[0]
    if keep.size == 0 or keep[0] != 0:
        keep = np.concatenate([[0], keep])
    probs = pmf[keep].astype(float)
    moved = max(0.0, 1.0 - probs.sum())
    probs[0] += moved
    add = mixture_add_pmf(standard_deviation=math.sqrt(K) * z, sensitivities=[2.0 * float(b) for b in keep],
                          sampling_probs=[float(p) for p in probs], interval=interval)
    # a symmetric wrapper of the ADD direction alone: only epsilon_for_delta_add may read it (its "remove" side is
    # the same ADD pmf, so any other query of it would be wrong)
    composed = pld_lib.PrivacyLossDistribution(pmf_self_compose(add, rounds, 1e-15))
    eps = epsilon_for_delta_add(composed, delta)
    if math.exp(min(eps, 700.0)) * rounds * moved > 1e-3 * delta:
        raise ValueError(f"Local SGD round: the binomial's truncated mass {moved:.3g} times e^{eps:.3g} over {rounds} "
                         "rounds is not negligible against delta: no valid lower bound")
    return epsilon_for_delta_add(composed, delta * (1 + 1e-3))


def mixture_add_pmf(*, standard_deviation: float, sensitivities: list[float], sampling_probs: list[float],
                    interval: float):
    """The ADD-direction PMF of dp-accounting's ``from_mixture_gaussian_mechanism(standard_deviation, sensitivities,
    sampling_probs, pessimistic_estimate=False, value_discretization_interval=interval, use_connect_dots=False,
    log_mass_truncation_bound=-30)`` (its ``_pmf_add``), built as that function builds it, without its REMOVE
    direction, which ``local_round_lower`` does not use (issue 17: half of its time). dp-accounting builds and
    composes the two directions independently (``PrivacyLossDistribution.self_compose`` composes each PMF with tail
    truncation 1e-15, which ``local_round_lower`` passes as well), so the ADD PMF and its compositions are the
    library's; tests/test_isrl_experiments.py pins them against the library's full PLD."""
    return pld_lib._create_pld_pmf_from_monotone_privacy_loss(
        privacy_loss_mechanism.MixtureGaussianPrivacyLoss(
            standard_deviation, sensitivities, sampling_probs, pessimistic_estimate=False,
            log_mass_truncation_bound=-30, adjacency_type=privacy_loss_mechanism.AdjacencyType.ADD),
        pessimistic_estimate=False, value_discretization_interval=interval, use_connect_dots=False)


def bracket(*, z: float, q: float, steps: int, delta: float, relation: str, claim: float) -> dict[str, float | None]:
    """The pessimistic epsilon, and the optimistic one when the pessimistic exceeds ``claim`` (else None); the
    discretisation is 1e-3 relative to the claim (at least 1e-4 absolute), bracketed by the two estimates."""
    interval = max(1e-4, 1e-3 * claim)
    hi = epsilon(z=z, q=q, steps=steps, delta=delta, relation=relation, interval=interval)
    lo = epsilon(z=z, q=q, steps=steps, delta=delta, relation=relation, interval=interval,
                 pessimistic=False) if hi > claim else None
    return {"upper": hi, "lower": lo}
