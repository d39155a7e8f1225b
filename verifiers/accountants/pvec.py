"""Seed 000's P_VEC as it ran (a ShuffleSumRelease): epsilon of the analyzer's view from the parameters as run, by
exact PLDs of the canary pairs (``binomial_privacy.py``; bucketed for huge binomials, ``binomial_bucketed.py``),
composed over the calls one user joins, and the calibration conditions of the paper's proof (the canaries bound the
worst case from below only, so the parameters as run must also be Thm 3.2's at the per-call target the run
declares). Lnnn = line of ../shared/seeds/000_2468e2e5d70af056.txt."""
from __future__ import annotations

import math
from collections import Counter
from typing import Any

from algorithms import shuffle_sum
from algorithms.events import ShuffleSumRelease
from verifiers.accountants import binomial_bucketed, binomial_privacy
from verifiers.accountants.base import Accountant
from verifiers.accountants.composition import advanced_composition

REL = 1e-9


def shuffle_sum_epsilon(e: ShuffleSumRelease, delta: float) -> float:
    """P_VEC's (eps at delta) from its parameters as run: each user's data enters only the calls it joined."""
    m = e.users_per_call * e.trials_per_user
    if e.calibrated_by is not None and e.max_record_uses > 1:
        # P_GD's accountant variant, calibrated by the bucketed route over the T calls: judged by the exact per-count
        # tables, composed over the calls the user joined (a different computation of the same canaries)
        return max(binomial_privacy.table_pld_epsilon(m, e.p, pairs * e.max_record_uses, delta, composed_scale=True)
                   for pairs in binomial_privacy.pvec_canaries(e.dimension, e.grid).values())
    if _bucketed(e):
        # P_GD: every user in all T calls, binomials of ~10^16 trials: the bucketed PLD (binomial_bucketed.py)
        return max(binomial_bucketed.epsilon(m, e.p, dict(Counter(pairs * e.max_record_uses)), delta)
                   for pairs in binomial_privacy.pvec_canaries(e.dimension, e.grid).values())
    one = binomial_privacy.table_pld_epsilon if e.calibrated_by is not None else binomial_privacy.pld_epsilon
    best = 0.0
    for pairs in binomial_privacy.pvec_canaries(e.dimension, e.grid).values():
        best = max(best, one(m, e.p, pairs * e.max_record_uses, delta))
    return best


def _bucketed(e: ShuffleSumRelease) -> bool:
    """Runs whose users join several calls, or that declare a per-call target, take the bucketed accountant -- but
    not a run whose noise the bucketed accountant calibrated (it is judged by the exact tables)."""
    return e.calibrated_by is None and (e.max_record_uses > 1 or e.call_epsilon is not None)


def epsilon(events: tuple[ShuffleSumRelease, ...], L: float, delta: float) -> tuple[float, str]:
    (s,) = events
    how = ("bucketed PLD (verifiers/accountants/binomial_bucketed.py, over-states by <= 5%)" if _bucketed(s) else
           "PLD (dp-accounting)" if s.calibrated_by is None else
           "PLD of every count's exact pmf (binomial_privacy.table_pld_epsilon; dp-accounting composes)")
    if s.calibrated_by is not None and s.calibrated_calls > 1:
        how += f" over the {s.max_record_uses} calls each user joined"
    judged = ("" if s.calibrated_by is None else
              f"; the parameters were calibrated by {s.calibrated_by}, a different computation of the same canaries' "
              f"divergence, so this is a second, independent evaluation of the release the run declared (on the same "
              f"canaries, a lower bound on the worst pair: not a certificate)")
    return shuffle_sum_epsilon(s, delta), (f"{how} of P_VEC's binomial counts, worst canary, composed over the calls "
                                           f"one user joins (parallel composition over the others){judged}")


def describe(event: ShuffleSumRelease, L: float, delta: float) -> dict:
    row: dict[str, Any] = {"users_per_call": event.users_per_call, "grid_g": event.grid, "binomial_trials_per_user":
           event.trials_per_user, "p": event.p}
    if event.calibrated_by is not None:
        row["calibrated_by"] = event.calibrated_by
        if event.calibrated_calls > 1:
            row["calibrated_calls_per_user"] = event.calibrated_calls
    return row | per_call_table(event, delta) if event.call_epsilon is not None else row


def view(threat_model: str) -> str:
    return "the analyzer's view (P_VEC's counts) as run, largest over canary pairs"


def calibration_failures(e: ShuffleSumRelease, eps: float, delta: float) -> list[str]:
    """Why the paper's privacy proof does not cover the run (empty: it does): each call's parameters as run must
    be Thm 3.2's at the per-call (eps, delta) the run declares (Lemma 3.1's conditions per coordinate, L130, at
    Thm A.6's eps_hat, delta_hat, L477-490), and, for calls a user joins more than once, advanced composition of
    that per-call (eps, delta) over them must stay within the claim (Lemma B.6, L728).

    A run calibrated by an accountant (``calibrated_by``: the smallest noise it certifies at the claim, not Thm 3.2's
    parameters) is outside the paper's proof by design: what covers it is the canaries' epsilon alone, which this
    accountant recomputes by its own method; the calibration holds for one call per user, so a user in several calls
    is not covered beyond the calls per user the calibration composed (``calibrated_calls``: 1 for the one-pass
    protocols, T for P_GD's accountant variants)."""
    if e.calibrated_by is not None:
        out = [] if 0 < e.p < 0.5 else [f"p = {e.p:.6g} is not in (0, 1/2)"]
        if e.max_record_uses > e.calibrated_calls:
            out.append(f"calibrated by {e.calibrated_by} for {e.calibrated_calls} call(s) per user, but a user joined "
                       f"{e.max_record_uses}")
        return out
    if e.call_epsilon is None or e.call_delta is None:
        return ["the run declares no per-call (eps, delta) its P_VEC parameters were calibrated for"]
    want = shuffle_sum.thm32(n=e.users_per_call, d=e.dimension, eps=e.call_epsilon, delta=e.call_delta,
                             Delta2=e.Delta2)
    nu, one = e.users_per_call, want.one_d
    need = 90 * e.grid**2 * math.log(2 / want.delta_hat) / (want.eps_hat**2 * nu)
    out = []
    if e.grid < max(2 * e.Delta2 * math.sqrt(nu), math.sqrt(e.dimension), 4) * (1 - REL):
        out.append(f"g = {e.grid} < max(2 Delta_2 sqrt(n), sqrt(d), 4) (Thm A.6's proof, L477)")
    if not e.trials_per_user > 2 * need:
        out.append(f"b = {e.trials_per_user} is not > 180 g^2 ln(2/delta_hat)/(eps_hat^2 n) = {2 * need:.6g} (L130)")
    if abs(e.p - need / e.trials_per_user) > REL * need / e.trials_per_user:
        out.append(f"p = {e.p:.6g} is not 90 g^2 ln(2/delta_hat)/(b eps_hat^2 n) = {need / e.trials_per_user:.6g} "
                   f"(L130; Thm 3.2's p at the per-call target is {one.p:.6g})")
    if e.max_record_uses <= 1 and (e.call_epsilon > eps * (1 + REL) or e.call_delta > delta * (1 + REL)):
        out.append(f"each user joins one call, calibrated for ({e.call_epsilon:.4g}, {e.call_delta:.3g}) > the claim "
                   f"({eps:g}, {delta:g})")
    if e.max_record_uses > 1:
        eps_c, delta_c = advanced_composition(e.call_epsilon, e.call_delta, e.max_record_uses, e.call_delta)
        if eps_c > eps * (1 + REL) or delta_c > delta * (1 + REL):
            out.append(f"advanced composition of ({e.call_epsilon:.4g}, {e.call_delta:.3g}) over "
                       f"{e.max_record_uses} calls gives ({eps_c:.4g}, {delta_c:.3g}) > ({eps:g}, {delta:g}) (L728)")
    return out


def per_call_table(e: ShuffleSumRelease, delta: float) -> dict[str, Any]:
    """The report's side-by-side view of one call and of their composition: the paper's per-call (eps, delta), the
    accountant's epsilon of one call at that delta (worst canary), and advanced composition of each over the calls
    one user joins (the accountant's own composed epsilon is the row's epsilon_accountant)."""
    assert e.call_epsilon is not None and e.call_delta is not None
    m = e.users_per_call * e.trials_per_user
    one = max(binomial_bucketed.epsilon(m, e.p, dict(Counter(pairs)), e.call_delta)
              for pairs in binomial_privacy.pvec_canaries(e.dimension, e.grid).values())
    k = e.max_record_uses
    adv_paper = advanced_composition(e.call_epsilon, e.call_delta, k, e.call_delta)[0]
    adv_acc = advanced_composition(one, e.call_delta, k, e.call_delta)[0]
    row = {"eps_per_call_paper": e.call_epsilon, "delta_per_call": e.call_delta, "eps_per_call_accountant": one}
    if k > 1:                           # composition over one call would only restate the call
        row |= {"eps_adv_composition_of_paper_per_call": adv_paper, "eps_adv_composition_of_accountant_per_call": adv_acc}
    return row | {"calls_per_user": k}


def compose(leaves: tuple[tuple[ShuffleSumRelease, int], ...], L: float, delta: float) -> tuple[float, str]:
    """Several P_VEC releases of one run, each once: Thm 4.8's smooth phases, whose batch and hence P_VEC
    parameters change from phase to phase (algorithms/shuffle_agd.py ``_agd_phases``), the phases on disjoint groups
    of users (proof of Thm 4.8, L633: "we split the users into disjoint subsets"). Every leaf carries the run's
    max_record_uses (over all its calls): when it is 1 each user's data entered one call of one phase, so for
    neighbours differing in one user only that phase's view changes, and the epsilon of the phases released together
    is the largest of the phases' (parallel composition). When a user joined several calls the run is
    outside the calibration (``calibration_failures`` fails it); the epsilon then shown is the largest phase's with
    its call composed max_record_uses times, which is that phase's epsilon for a user in that many of its calls and
    not a bound for a user whose calls span phases."""
    if any(count != 1 for _, count in leaves):
        raise ValueError("P_VEC releases run several times each: no composition of shuffle sums over repeated runs")
    uses = {e.max_record_uses for e, _ in leaves}
    if len(uses) != 1:
        raise ValueError(f"the releases of one run declare different max_record_uses {sorted(uses)}: each must carry "
                         f"the run's count over all its calls")
    eps = [epsilon((e,), L, delta) for e, _ in leaves]
    worst = max(eps, key=lambda x: x[0])
    return worst[0], (f"{worst[1]}; the largest over {len(leaves)} phases on disjoint users (parallel composition, "
                      f"proof of Thm 4.8 L633)" + ("" if uses == {1} else
                                                     "; users joined several calls: not covered, see the conditions"))


ACCOUNTANT = Accountant(ShuffleSumRelease, epsilon, describe, view, covers=calibration_failures, compose=compose)
