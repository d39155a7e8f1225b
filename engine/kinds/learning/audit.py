"""Run the privacy audit of one sweep point and return what the check kind ``privacy_audit``
(verifiers/checks/privacy_audit.py) judges; the result is stored with the point.

Gaussian releases (isrl silos, the central curator): the worst neighbouring pair the loss allows on the data
domain, the algorithm's own sampler and Gaussian mechanism (algorithms/audit.py). Shuffled LDP releases (shuffle): the local randomizer
itself, on the pair of inputs where its output probabilities are extremal (the corners C 1 and -C 1 of the
l_inf ball), against its own claim eps_ldp and its exact epsilon. Both end in the Clopper-Pearson lower bound
on epsilon of verifiers/audit.py."""
from __future__ import annotations

import math

import numpy as np

from algorithms import audit as mech_audit
from algorithms import element_sgd as es
from algorithms import events as ev_
from algorithms import ldp
from verifiers import audit as stat_audit
from verifiers.accountants import subsampled_shuffle

WORK_BUDGET = 2e7          # sampler draws per side; the trial count is cut to fit (and the report says so)


def run(spec, prob, params: dict, event: dict, *, seed: int, value_key: int, trials: int, confidence: float,
        budget: float = WORK_BUDGET) -> dict:
    """The audit of the point's privacy event (a stored event dict; a tree of events too), by its kind."""
    kind = event.get("kind", "gaussian")
    if kind not in AUDITS:
        raise ValueError(f"no privacy audit for a {kind} event; audits exist for {', '.join(AUDITS)}")
    return AUDITS[kind](spec, prob, params, event, seed=seed, value_key=value_key, trials=trials,
                        confidence=confidence, budget=budget)


def _canary_distance(spec, prob, params: dict) -> tuple[float, dict]:
    """The worst neighbouring pair of records the loss allows on the data domain: (gradient distance, the pair)."""
    loss = prob.loss if prob.loss.smooth else prob.loss.envelope(params["beta_s"])
    if spec.loss.kind == "squared":
        y_max = float(prob.population.y_max)
        ys: tuple[float, ...] = (-y_max, 0.0, y_max)
    else:
        ys = (-1.0, 1.0)
    return mech_audit.worst_pair(loss, r=spec.data.radius, rho=spec.loss.diameter / 2, y_values=ys, d=int(params["d"]))


def _gaussian_plan(event: dict, trials: int, budget: float) -> tuple[int, float, int, str, float]:
    """(rounds, q, pool, the attack in words, sampler values per trial) of one Gaussian release's canary."""
    K, n = int(event["batch_size"]), int(event["pool_size"])
    if event["sampling"] == "disjoint":
        return 1, 1.0, (K if K * K <= n else n), ("one-pass: the canary's batch round is given to the attacker; "
                                                  "likelihood-ratio test on that round's release"), 1.0
    rounds, q = int(event["rounds"]), K / n
    attack = (f"a fresh K-subset per round: the canary is read with probability K/n = {q:.3g} in each of "
              f"{rounds} rounds; likelihood-ratio test of the whole transcript (mixture over reads)")
    return rounds, q, (K if K * K <= n else n), attack, rounds * (K if K * K <= n else n)


def _gaussian(spec, prob, params: dict, event: dict, *, seed: int, value_key: int, trials: int, confidence: float,
              budget: float) -> dict:
    dist, pair = _canary_distance(spec, prob, params)
    K, n = int(event["batch_size"]), int(event["pool_size"])
    rounds, q, pool, attack, per_trial = _gaussian_plan(event, trials, budget)
    used = int(min(trials, max(1000, budget // per_trial)))
    if used < trials:
        attack += f"; {used} transcripts per side (of {trials} asked: the work budget)"
    reads = mech_audit.canary_reads(event["sampling"], n=n, K=K, rounds=rounds)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3], spawn_key=(value_key,)))
    s_d, s_dp = mech_audit.scores(reads, rounds=rounds, shift=dist / K, sigma=float(params["sigma"]), q=q,
                                  trials=used, rng=rng, pool=pool)
    bound = stat_audit.lower_bound(s_d, s_dp, delta=float(params["delta0"]), confidence=confidence)
    attack += "; half of them choose the test's threshold, the other half are counted"
    return _summary(bound, confidence) | {"shift": dist / K, "gradient_distance": dist, "pair": pair,
                                          "rounds": rounds, "q": q, "attack": "gradient canary: " + attack}


def _composed(spec, prob, params: dict, event: dict, *, seed: int, value_key: int, trials: int, confidence: float,
              budget: float) -> dict:
    """A tree of Gaussian releases on the same data: the canary enters every leaf (each run as often as the tree
    says) with independent noise, so the whole transcript's log-likelihood ratio is the sum of the leaves'; the
    same threshold test and Clopper-Pearson limits then bound the composition's epsilon from below."""
    flat = ev_.leaves(ev_.from_dict(event))
    other = sorted({leaf.kind for leaf, _ in flat} - {"gaussian"})
    if other:
        raise ValueError(f"no audit composes {', '.join(other)} releases with others (a composed event's leaves "
                         f"must all be Gaussian releases)")
    dist, pair = _canary_distance(spec, prob, params)
    plans = [(leaf, count, _gaussian_plan(ev_.to_dict(leaf), trials, budget)) for leaf, count in flat]
    per_trial = sum(count * plan[4] for _, count, plan in plans)
    used = int(min(trials, max(1000, budget // per_trial)))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3], spawn_key=(value_key,)))
    s_d, s_dp = np.zeros(used), np.zeros(used)
    shifts = []
    for leaf, count, (rounds, q, pool, _, _) in plans:
        assert isinstance(leaf, ev_.GaussianRelease)
        shifts.append(dist / leaf.batch_size)
        reads = mech_audit.canary_reads(leaf.sampling, n=leaf.pool_size, K=leaf.batch_size, rounds=rounds)
        for _ in range(count):
            a, b = mech_audit.scores(reads, rounds=rounds, shift=dist / leaf.batch_size, sigma=leaf.sigma, q=q,
                                     trials=used, rng=rng, pool=pool)
            s_d, s_dp = s_d + a, s_dp + b
    bound = stat_audit.lower_bound(s_d, s_dp, delta=float(params["delta0"]), confidence=confidence)
    attack = (f"gradient canary in each of {sum(c for _, c in flat)} Gaussian releases of a composed event "
              f"({len(flat)} distinct), the transcript's log-likelihood ratio summed over them; {used} transcripts "
              f"per side; half of them choose the test's threshold, the other half are counted")
    return _summary(bound, confidence) | {"shift": max(shifts), "gradient_distance": dist, "pair": pair,
                                          "rounds": sum(c * plan[0] for _, c, plan in plans), "q": 1.0,
                                          "attack": attack}


def _summary(bound, confidence: float) -> dict:
    lb = bound.epsilon_lower
    return {"epsilon_lower": lb if math.isfinite(lb) else 1e300, "threshold": bound.threshold,
            "fpr_upper": bound.fpr_upper, "fnr_upper": bound.fnr_upper, "false_positives": bound.false_positives,
            "false_negatives": bound.false_negatives, "trials_per_side": bound.trials_per_side,
            "confidence": confidence}


def _local_randomizer(spec, prob, params: dict, event: dict, *, seed: int, value_key: int, trials: int,
                      confidence: float, budget: float) -> dict:
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
    return _summary(bound, confidence) | {
            "shift": 2 * C, "rounds": 1, "q": 1.0,
            "epsilon_claimed": eps, "epsilon_upper": exact, "upper_name": "exact epsilon of the randomizer",
            "attack": (f"local randomizer {R.name}: {trials} messages from each of the inputs C 1 and -C 1 (C = {C:.4g}, "
                       f"where every output's probability is extremal), scored by the exact log-likelihood ratio; "
                       f"half of them choose the threshold, the other half are counted. The central epsilon of the "
                       f"shuffled rounds is not audited by simulation (Thm 1 puts one round at {per_round:.3g} at this "
                       f"delta; the accounting check bounds the composition above by Thm 1 and below by Thm 2)")}


ELEMENT_AUDIT_USERS = 3   # OUR CHOICE: the canary and two users of the model (as the Fig. 3 audit)


def _element(spec, prob, params: dict, event: dict, *, seed: int, value_key: int, trials: int, confidence: float,
             budget: float) -> dict:
    """Seed 002's element-level SGD (iteration (15)), audited on a small data set: ELEMENT_AUDIT_USERS - 1 users of
    the spec's model and a canary user holding as many elements as the data's users (``data.k``, read from the spec,
    not from the event, so a release that under-reports its users' elements is caught), each of its k clipped element
    steps injected at rho e_1 (the extreme Alg. 1's clipping allows); its element neighbour flips one of them: per-user
    outputs a = k and b = k - 2 in units of rho (verifiers/accountants/element_sgd.py's pair). The run is (15) itself
    (algorithms/element_sgd.py ``audit_run``: Poisson sampling of every user at the run's q, its noise, steps and T);
    the auditor knows every user's data, the iterates and the other users' sampling, not the canary's B_u nor the
    noise, and scores the log-likelihood ratio of the pair (``audit_scores``)."""
    pp: es.Problem = prob.population.problem
    k = int(spec.data.k)
    a, b = float(k), float(k - 2)
    T, q, rho, sigma = int(params["T"]), float(params["q"]), float(params["rho"]), float(params["sigma"])
    alpha0, beta = float(params["alpha0"]), float(params["beta"])
    per_trial = T * (ELEMENT_AUDIT_USERS + pp.d)      # random draws of one run: every user's B_u and the noise
    used = int(min(trials, max(1000, budget // per_trial)))
    s_data, s_d, s_dp = np.random.SeedSequence([seed, 5], spawn_key=(value_key,)).spawn(3)
    z_others = es.sample_z(pp, np.random.default_rng(s_data), (ELEMENT_AUDIT_USERS - 1,))
    top = float(np.sqrt((z_others * z_others).sum(axis=-1)).max())
    if top > rho:                  # the audit's run is the unclipped case: the others' data scaled into the rho ball
        z_others = z_others * (rho / top)
    e1 = np.zeros(pp.d)
    e1[0] = 1.0
    scores = []
    for c, s in ((a, s_d), (b, s_dp)):
        run = es.audit_run(z_others, pp.sizes, canary_step=c * rho * e1, canary_elements=k, updates=T, q=q,
                           alpha0=alpha0, sigma=sigma, rho=rho, trials=used, rng=np.random.default_rng(s), beta=beta)
        scores.append(es.audit_scores(run, z_others, pp.sizes, q=q, alpha0=alpha0, rho=rho, sigma=sigma, a=a, b=b,
                                      beta=beta))
    bound = stat_audit.lower_bound(scores[0], scores[1], delta=float(params["delta0"]), confidence=confidence)
    sampled = ("" if event.get("sampling") == "poisson" else
               "; the run sampled a fixed-size batch, the audit samples every user Bernoulli(q): with the other users' "
               "steps at 0 (allowed under any loss) the release is B_u c + noise with B_u ~ Bern(q), independent "
               "across rounds, the law the Poisson audit has")
    attack = (f"element canary: (15) on {ELEMENT_AUDIT_USERS} users ({ELEMENT_AUDIT_USERS - 1} of the model and a "
              f"canary holding k = {k} elements, its element steps at rho e_1; neighbour: one flipped, per-user "
              f"outputs {a:g} rho e_1 vs {b:g} rho e_1), T = {T} rounds at q = {q:.3g}, the auditor subtracting the "
              f"other users' recomputed steps and scoring the pair's log-likelihood ratio{sampled}; {used} runs per "
              f"side (of {trials} asked); half of them choose the test's threshold, the other half are counted")
    return _summary(bound, confidence) | {"shift": a - b, "pair": [a, b], "rounds": T, "q": q, "attack": attack}


AUDITS = {"element_gaussian": _element, "gaussian": _gaussian, "shuffled_ldp": _local_randomizer, "composed": _composed, "self_composed": _composed}
