"""The privacy calculator behind ``python -m engine privacy``: epsilon at a delta (or delta at an epsilon) for
the mechanisms the harness knows. Standard mechanisms go through dp-accounting; the subsampled shuffle
model through seed 001's bounds (verifiers/accountants/subsampled_shuffle.py)."""
from __future__ import annotations

import math

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import rdp_privacy_accountant

from verifiers.accountants import rdp_wor
from verifiers.accountants import subsampled_shuffle as S001
from verifiers.accountants.gaussian import RDP_ORDERS
from verifiers.accountants.pld_compose import self_compose
from verifiers.accountants.pld_epsilon import epsilon_for_delta

ADD_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
REPLACE_ONE = dp_accounting.NeighboringRelation.REPLACE_ONE
MECHANISMS = {
    "gaussian": "T-fold Gaussian mechanism, noise sigma, L2 sensitivity (PLD accountant of dp-accounting)",
    "subsampled-gaussian": "T rounds of the Gaussian mechanism on a uniform k-of-n subset (replace-one) or, with "
                           "--q, a Poisson sample (add/remove) (RDP accountant of dp-accounting)",
    "subsampled-shuffle": "T rounds of k-of-n subsampling, an eps0-LDP randomizer and a shuffler: seed 001's "
                          "Thm 1 (upper) and Thm 2 (lower) RDP bounds with its Lemma 1",
}


def _answer(acc, *, delta: float | None, eps: float | None) -> dict:
    if eps is not None:
        return {"epsilon": eps, "delta": float(acc.get_delta(eps))}
    return {"epsilon": float(acc.get_epsilon(delta)), "delta": delta}


MIN_NOISE_MULTIPLIER = 0.1     # below, one Gaussian's epsilon exceeds ~90 and the PLD grid grows past gigabytes


def gaussian(*, sigma: float, sensitivity: float, T: int, delta: float | None, eps: float | None) -> dict:
    """T Gaussian releases of sensitivity Delta and noise sigma: their composition is exactly one Gaussian of noise
    multiplier sigma/(Delta sqrt(T)) (the privacy loss of a Gaussian pair is Gaussian, and T of them add up), so
    the PLD accountant composes nothing and its memory does not grow with T."""
    z = sigma / (sensitivity * math.sqrt(T))
    if not z >= MIN_NOISE_MULTIPLIER:
        raise ValueError(f"the composed noise multiplier sigma/(sensitivity sqrt(T)) = {z:.3g} is below "
                         f"{MIN_NOISE_MULTIPLIER:g}: epsilon would exceed ~90 (nothing is protected)")
    acc = pld_privacy_accountant.PLDAccountant(ADD_REMOVE, value_discretization_interval=1e-4)
    acc.compose(dp_accounting.GaussianDpEvent(z))
    return {"mechanism": "gaussian", "accountant": "PLD (dp-accounting) of one Gaussian with noise multiplier "
                                                   "sigma/(sensitivity sqrt(T)): the T-fold composition, exactly",
            **_answer(acc, delta=delta, eps=eps)}


def subsampled_gaussian(*, sigma: float, sensitivity: float, T: int, k: int | None, n: int | None,
                        q: float | None, delta: float | None, eps: float | None) -> dict:
    z = sigma / sensitivity
    if q is not None:
        acc = rdp_privacy_accountant.RdpAccountant(list(RDP_ORDERS), ADD_REMOVE)
        acc.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), T)
        how = f"Poisson sampling q = {q}, add/remove neighbours"
    else:
        acc = rdp_wor.RdpAccountant(list(RDP_ORDERS), REPLACE_ONE)
        acc.compose(dp_accounting.SampledWithoutReplacementDpEvent(n, k, dp_accounting.GaussianDpEvent(z)), T)
        how = f"uniform {k}-of-{n} subsets, replace-one neighbours"
    return {"mechanism": "subsampled-gaussian", "accountant": f"RDP (dp-accounting), {how}",
            **_answer(acc, delta=delta, eps=eps)}


def subsampled_shuffle(*, k: int, n: int, eps0: float, T: int, delta: float | None, eps: float | None) -> dict:
    out: dict = {"mechanism": "subsampled-shuffle", "accountant": f"{S001.SEED}, Thm 1 / Thm 2 + Lemma 1"}
    for bound in ("upper", "lower"):
        if eps is not None:
            d, order = S001.delta_for(bound, k=k, n=n, eps0=eps0, T=T, eps=eps)
            out[bound] = {"epsilon": eps, "delta": d, "order": order}
        else:
            assert delta is not None
            r = S001.epsilon(bound, k=k, n=n, eps0=eps0, T=T, delta=delta)
            out[bound] = {"epsilon": r.epsilon, "delta": delta, "order": r.order}
    return out


def _pld(z: float, q: float, *, pessimistic: bool, T: int, delta: float | None, eps: float | None) -> dict:
    """The PLD of T rounds of a (Poisson q-subsampled, add/remove) Gaussian with noise multiplier z, discretised
    pessimistically (an upper bound) or optimistically (an estimate from below)."""
    pld = pld_lib.from_gaussian_mechanism(standard_deviation=z, sensitivity=1.0, sampling_prob=q,
                                          pessimistic_estimate=pessimistic, value_discretization_interval=1e-4,
                                          use_connect_dots=pessimistic)    # connect-the-dots is pessimistic only
    pld = self_compose(pld, T)
    if eps is not None:
        return {"epsilon": eps, "delta": float(pld.get_delta_for_epsilon(eps))}
    assert delta is not None
    return {"epsilon": float(epsilon_for_delta(pld, delta)), "delta": delta}


def _rdp(event, relation, *, T: int, delta: float | None, eps: float | None) -> dict:
    acc = rdp_wor.RdpAccountant(list(RDP_ORDERS), relation)
    acc.compose(event, T)
    return _answer(acc, delta=delta, eps=eps)


def all_accountants(mechanism: str, *, sigma: float | None = None, sensitivity: float = 1.0, T: int = 1,
                    k: int | None = None, n: int | None = None, q: float | None = None, eps0: float | None = None,
                    delta: float | None = None, eps: float | None = None) -> list[dict]:
    """Every accountant that applies to the mechanism, side by side: one row each with how it treats neighbours and
    sampling, its figure, and for the PLD the optimistic and pessimistic discretisations (the truth lies between).
    A row that cannot be computed says why instead of a number."""
    rows: list[dict] = []
    if sigma is not None and sigma / sensitivity < MIN_NOISE_MULTIPLIER * (math.sqrt(T) if mechanism == "gaussian"
                                                                           else 1.0):
        raise ValueError(f"the noise multiplier sigma/sensitivity{'/sqrt(T)' if mechanism == 'gaussian' else ''} is "
                         f"below {MIN_NOISE_MULTIPLIER:g}: epsilon would exceed ~90 (nothing is protected) and the "
                         f"PLD grid would grow past gigabytes")
    if mechanism == "gaussian":
        assert sigma is not None
        z = sigma / (sensitivity * math.sqrt(T))
        one = dp_accounting.GaussianDpEvent(sigma / sensitivity)
        rows.append({"accountant": "RDP (dp-accounting)", "neighbours": "add/remove or replace-one (equal here)",
                     "sampling": "none", **_rdp(one, ADD_REMOVE, T=T, delta=delta, eps=eps)})
        hi = _pld(sigma / sensitivity, 1.0, pessimistic=True, T=T, delta=delta, eps=eps)
        lo = _pld(sigma / sensitivity, 1.0, pessimistic=False, T=T, delta=delta, eps=eps)
        rows.append({"accountant": "PLD (dp-accounting), pessimistic / optimistic", "neighbours": "add/remove",
                     "sampling": "none", **hi, "range": [lo["epsilon"] if delta else lo["delta"],
                                                        hi["epsilon"] if delta else hi["delta"]]})
        from verifiers.accountants.element_privacy import epsilon_at
        from verifiers.accountants.shuffled_gaussian import gaussian_delta
        if delta is not None:
            exact = {"epsilon": epsilon_at(delta, 1 / z), "delta": delta}
        else:
            assert eps is not None
            exact = {"epsilon": eps, "delta": gaussian_delta(eps, 1 / z)}
        rows.append({"accountant": "exact (Balle & Wang 2018, Thm 8: T Gaussians are one, noise sigma/sqrt T)",
                     "neighbours": "any pair at distance <= sensitivity", "sampling": "none", **exact})
        return rows
    if mechanism == "subsampled-gaussian":
        assert sigma is not None
        base = dp_accounting.GaussianDpEvent(sigma / sensitivity)
        if q is not None:
            ev = dp_accounting.PoissonSampledDpEvent(q, base)
            rows.append({"accountant": "RDP (dp-accounting)", "neighbours": "add/remove", "sampling": f"Poisson q = {q}",
                         **_rdp(ev, ADD_REMOVE, T=T, delta=delta, eps=eps)})
            hi = _pld(sigma / sensitivity, q, pessimistic=True, T=T, delta=delta, eps=eps)
            lo = _pld(sigma / sensitivity, q, pessimistic=False, T=T, delta=delta, eps=eps)
            rows.append({"accountant": "PLD (dp-accounting), pessimistic / optimistic", "neighbours": "add/remove",
                         "sampling": f"Poisson q = {q}", **hi,
                         "range": [lo["epsilon"] if delta else lo["delta"], hi["epsilon"] if delta else hi["delta"]]})
            rows.append({"accountant": "PLD (dp-accounting)", "neighbours": "replace-one", "sampling": f"Poisson q = {q}",
                         "unavailable": "dp-accounting's PLD accountant handles Poisson sampling under add/remove "
                                        "(and its replace-special) only"})
        else:
            assert k is not None and n is not None
            ev = dp_accounting.SampledWithoutReplacementDpEvent(n, k, base)
            rows.append({"accountant": "RDP (dp-accounting)", "neighbours": "replace-one", "sampling": f"{k} of {n}",
                         **_rdp(ev, REPLACE_ONE, T=T, delta=delta, eps=eps)})
            rows.append({"accountant": "PLD (dp-accounting)", "neighbours": "replace-one", "sampling": f"{k} of {n}",
                         "unavailable": "dp-accounting's PLD accountant has no sampling without replacement"})
        return rows
    if mechanism == "subsampled-shuffle":
        out = subsampled_shuffle(k=int(k), n=int(n), eps0=float(eps0), T=T, delta=delta, eps=eps)   # type: ignore[arg-type]
        for bound in ("upper", "lower"):
            r = out[bound]
            rows.append({"accountant": f"seed 001 Thm {'1 (upper bound)' if bound == 'upper' else '2 (lower bound)'} "
                                       f"+ Lemma 1", "neighbours": "replace-one", "sampling": f"{k} of {n}, shuffled",
                         "epsilon": r["epsilon"], "delta": r["delta"], "order": r["order"]})
        return rows
    raise ValueError(f"mechanism {mechanism!r}: one of {', '.join(MECHANISMS)}")
