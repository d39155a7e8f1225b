"""The privacy calculator behind ``python -m engine privacy``: epsilon at a delta (or delta at an epsilon) for
the mechanisms the harness knows. Standard mechanisms go through dp-accounting; the subsampled shuffle
model through seed 001's bounds (verifiers/accountants/subsampled_shuffle.py)."""
from __future__ import annotations

import math

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from verifiers.accountants import subsampled_shuffle as S001
from verifiers.accountants.gaussian import RDP_ORDERS

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
        acc = rdp_privacy_accountant.RdpAccountant(list(RDP_ORDERS), REPLACE_ONE)
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
