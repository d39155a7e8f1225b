"""Run the privacy audit of one sweep point and return what the check kind ``privacy_audit``
(verifiers/checks.py) judges; the result is stored with the point.

Gaussian releases (isrl silos, the central curator): the worst neighbouring pair the loss allows on the data
domain, the algorithm's own sampler and Gaussian mechanism (algorithms/audit.py). Shuffled LDP releases (shuffle): the local randomizer
itself, on the pair of inputs where its output probabilities are extremal (the corners C 1 and -C 1 of the
l_inf ball), against its own claim eps_ldp and its exact epsilon. Both end in the Clopper-Pearson lower bound
on epsilon of verifiers/audit.py."""
from __future__ import annotations

import math

import numpy as np

from algorithms import audit as mech_audit
from algorithms import ldp
from verifiers import audit as stat_audit
from verifiers.accountants import subsampled_shuffle

WORK_BUDGET = 2e7          # sampler draws per side; the trial count is cut to fit (and the report says so)


def run(spec, prob, params: dict, event: dict, *, seed: int, value_key: int, trials: int, confidence: float,
        budget: float = WORK_BUDGET) -> dict:
    if event.get("kind") == "shuffled_ldp":
        return _local_randomizer(params, event, seed=seed, value_key=value_key, trials=trials, confidence=confidence)
    loss = prob.loss if prob.loss.smooth else prob.loss.envelope(params["beta_s"])
    data = spec.data
    if spec.loss.kind == "squared":
        y_max = float(prob.population.y_max)
        ys: tuple[float, ...] = (-y_max, 0.0, y_max)
    else:
        ys = (-1.0, 1.0)
    dist, pair = mech_audit.worst_pair(loss, r=data.radius, rho=spec.loss.diameter / 2, y_values=ys,
                                       d=int(params["d"]))
    K, n = int(event["batch_size"]), int(event["pool_size"])
    if event["sampling"] == "disjoint":
        rounds, q = 1, 1.0
        attack = ("one-pass: the canary's batch round is given to the attacker; likelihood-ratio test on that "
                  "round's release")
        per_trial = 1.0
    else:
        rounds, q = int(event["rounds"]), K / n
        attack = (f"a fresh K-subset per round: the canary is read with probability K/n = {q:.3g} in each of "
                  f"{rounds} rounds; likelihood-ratio test of the whole transcript (mixture over reads)")
        per_trial = rounds * (K if K * K <= n else n)   # sampler values per trial
    used = int(min(trials, max(1000, budget // per_trial)))
    if used < trials:
        attack += f"; {used} transcripts per side (of {trials} asked: the work budget)"
    reads = mech_audit.canary_reads(event["sampling"], n=n, K=K, rounds=rounds)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3], spawn_key=(value_key,)))
    pool = K if K * K <= n else n
    s_d, s_dp = mech_audit.scores(reads, rounds=rounds, shift=dist / K, sigma=float(params["sigma"]), q=q,
                                  trials=used, rng=rng, pool=pool)
    bound = stat_audit.lower_bound(s_d, s_dp, delta=float(params["delta0"]), confidence=confidence)
    attack += "; half of them choose the test's threshold, the other half are counted"
    lb = bound.epsilon_lower
    return {"epsilon_lower": lb if math.isfinite(lb) else 1e300, "threshold": bound.threshold,
            "fpr_upper": bound.fpr_upper, "fnr_upper": bound.fnr_upper, "false_positives": bound.false_positives,
            "false_negatives": bound.false_negatives, "trials_per_side": bound.trials_per_side,
            "confidence": confidence, "shift": dist / K, "gradient_distance": dist, "pair": pair,
            "rounds": rounds, "q": q, "attack": "gradient canary: " + attack}


def _local_randomizer(params: dict, event: dict, *, seed: int, value_key: int, trials: int, confidence: float) -> dict:
    """Audit the eps_ldp claim of the clients' randomizer: ``trials`` messages from each of the two extreme
    inputs, scored by the exact log-likelihood ratio of the message (from the randomizer's stated distribution;
    the messages come from its sampler, so a sampler that leaks more than the table says is caught)."""
    R = ldp.RANDOMIZERS.get(event["randomizer"])
    d, C, eps = int(event["dimension"]), float(event["clip"]), float(event["eps_ldp"])
    x, x_prime = R.extreme_inputs(d, C)
    P = R.probabilities(np.stack([x, x_prime]), eps, C)
    with np.errstate(divide="ignore"):
        llr = np.log(P[0]) - np.log(P[1])
    rng = np.random.default_rng(np.random.SeedSequence([seed, 4], spawn_key=(value_key,)))
    scores = []
    for inp in (x, x_prime):
        m = R.sample(np.broadcast_to(inp, (trials, d)), eps, C, rng)
        scores.append(llr[m.coord + d * (m.bit < 0)])
    bound = stat_audit.lower_bound(scores[0], scores[1], delta=float(params["delta0"]), confidence=confidence)
    exact = float(np.max(np.abs(llr)))
    per_round = subsampled_shuffle.epsilon("upper", k=int(event["batch_size"]), n=int(event["pool_size"]), eps0=eps, T=1,
                                    delta=float(params["delta0"])).epsilon
    lb = bound.epsilon_lower
    return {"epsilon_lower": lb if math.isfinite(lb) else 1e300, "threshold": bound.threshold,
            "fpr_upper": bound.fpr_upper, "fnr_upper": bound.fnr_upper, "false_positives": bound.false_positives,
            "false_negatives": bound.false_negatives, "trials_per_side": bound.trials_per_side,
            "confidence": confidence, "shift": 2 * C, "rounds": 1, "q": 1.0,
            "epsilon_claimed": eps, "epsilon_upper": exact, "upper_name": "exact epsilon of the randomizer",
            "attack": (f"local randomizer {R.name}: {trials} messages from each of the inputs C 1 and -C 1 (C = {C:.4g}, "
                       f"where every output's probability is extremal), scored by the exact log-likelihood ratio; "
                       f"half of them choose the threshold, the other half are counted. The central epsilon of the "
                       f"shuffled rounds is not audited by simulation (Thm 1 puts one round at {per_round:.3g} at this "
                       f"delta; the accounting check bounds the composition above by Thm 1 and below by Thm 2)")}
