"""The privacy of seed 004's experiments (App. I): a silo's R rounds of subsampled Gaussian releases, by dp-accounting's
PLD accountant, under both neighbouring conventions.

One release: the silo's message is (1/b) sum over a sampled batch of b of its n records of gradients of norm <= G,
plus N(0, sigma^2 I_d). In units of one record's contribution G/b the noise multiplier is z = sigma b / G.
- Replace-one (seed 004's Def. 2, L96: ISRL-DP): the replaced record is in the batch with probability q = b/n (a
  uniform b-subset without replacement, as the experiments' MB-SGD draws, or one uniform record per step, b = 1, as
  their Local SGD draws); the rest of the batch has the same law under both data sets. Projected on the direction of
  the change, the worst pair is (1 - q) N(0, z^2) + q N(+1, z^2) against (1 - q) N(0, z^2) + q N(-1, z^2), which is
  dp-accounting's Poisson-sampled Gaussian under REPLACE_ONE (privacy_loss_mechanism.AdjacencyType.REPLACE); mixing
  over the other records only lowers the divergence, and the rounds compose adaptively with the same dominating
  pair. So the PLD of that event self-composed is an upper bound for what ran, attained by worst-case gradients
  (a linear loss with two antipodal records).
- Add/remove (Abadi et al. 2016, whose Thm 1 App. I cites): Poisson sampling with rate q, one record adds at most
  G/b to the mean with the fixed denominator b: dp-accounting's Poisson-sampled Gaussian under ADD_OR_REMOVE_ONE.
Both are computed with a pessimistic discretisation (an upper bound on epsilon) and, where a verdict needs it, an
optimistic one (a lower estimate of the same PLD's epsilon), so a calibration is judged only outside that bracket."""
from __future__ import annotations

import dp_accounting
from dp_accounting.pld import privacy_loss_distribution as pld_lib

RELATIONS = {"replace_one": dp_accounting.NeighboringRelation.REPLACE_ONE,
             "add_remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE}


def epsilon(*, z: float, q: float, steps: int, delta: float, relation: str, pessimistic: bool = True,
            interval: float = 1e-3) -> float:
    """epsilon at delta of ``steps`` compositions of the q-sampled Gaussian with noise multiplier z (in units of one
    record's contribution), under ``relation`` ('replace_one' or 'add_remove'). ``interval``: the PLD's value
    discretisation (the bracket between the pessimistic and the optimistic estimates is of its order)."""
    if not (z > 0 and 0 < q <= 1 and steps >= 1 and 0 < delta < 1):
        raise ValueError(f"subsampled Gaussian needs z > 0, 0 < q <= 1, steps >= 1, 0 < delta < 1 (got z = {z}, "
                         f"q = {q}, steps = {steps}, delta = {delta})")
    one = pld_lib.from_gaussian_mechanism(standard_deviation=z, sensitivity=1.0, sampling_prob=q,
                                          pessimistic_estimate=pessimistic, value_discretization_interval=interval,
                                          neighboring_relation=RELATIONS[relation],
                                          use_connect_dots=pessimistic)   # connect-the-dots is pessimistic only
    return float(one.self_compose(steps).get_epsilon_for_delta(delta))


def bracket(*, z: float, q: float, steps: int, delta: float, relation: str, claim: float) -> dict[str, float | None]:
    """The pessimistic epsilon, and the optimistic one when the pessimistic exceeds ``claim`` (else None); the
    discretisation is 1e-3 relative to the claim (at least 1e-4 absolute), bracketed by the two estimates."""
    interval = max(1e-4, 1e-3 * claim)
    hi = epsilon(z=z, q=q, steps=steps, delta=delta, relation=relation, interval=interval)
    lo = epsilon(z=z, q=q, steps=steps, delta=delta, relation=relation, interval=interval,
                 pessimistic=False) if hi > claim else None
    return {"upper": hi, "lower": lo}
