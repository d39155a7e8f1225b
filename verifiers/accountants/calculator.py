"""The privacy calculator behind ``python -m engine privacy``: epsilon at a delta (or delta at an epsilon) for
the mechanisms the harness knows. Standard mechanisms go through dp-accounting; the subsampled shuffle
model through seed 001's bounds (verifiers/subsampled_shuffle.py)."""
from __future__ import annotations

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


def gaussian(*, sigma: float, sensitivity: float, T: int, delta: float | None, eps: float | None) -> dict:
    acc = pld_privacy_accountant.PLDAccountant(ADD_REMOVE, value_discretization_interval=1e-4)
    acc.compose(dp_accounting.GaussianDpEvent(sigma / sensitivity), T)
    return {"mechanism": "gaussian", "accountant": "PLD (dp-accounting)", **_answer(acc, delta=delta, eps=eps)}


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
