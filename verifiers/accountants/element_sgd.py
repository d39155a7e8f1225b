"""The accountant of seed 002's element-level private SGD as it ran (``ElementGaussianRelease``: iteration (15),
L319-325; Lnnn = line of ../shared/seeds/002_d3919fba655c6f58.txt), under the element relation (one user's data in
one cluster replaced; (3), L85, Def. 2.3, L89).

Each round releases sum_u B_u s_u + rho sigma N(0, I), with s_u the sum of the user's clipped element steps (each of
norm <= rho). In units of rho, the changed user holding K non-empty elements contributes c + x with c the sum of its
K - 1 unchanged steps (norm <= K - 1) and ||x|| <= 1, against c + x' in the neighbour. The accountant is
verifiers/accountants/element_rdp.py's, of the pair it derives:
- Poisson sampling (B_u i.i.d. Bernoulli(q)): the other users' B_v are independent of the changed user's, so their sum
  is a post-processing; the collinear pair a = K, b = K - 2 (c = (K - 1) e_1, x = +-e_1) is the worst element pair
  there (element_rdp's reading; K = 1 gives Cor 2.5's own pair (1, -1)). Its privacy-loss distribution, composed over
  the rounds by dp-accounting's PLD, pessimistic discretisation: an upper bound on the pair's epsilon (its optimistic
  twin, a lower bound, is reported next to it).
- Fixed-size sampling (q n users uniformly without replacement): given whether the changed user was sampled, the
  rest of the round has the same law under both data sets, and a sampled round's releases differ by a shift of norm
  <= 2 (rho units); revealing the user's B_u (a bit of probability q per round, independent over rounds) is an upper
  bound: the labelled pair, dp-accounting's Gaussian PLD at sensitivity 2 mixed with the identity at weight 1 - q.
The epsilon uses the most elements any user of the run held (the event's ``elements``), so a run whose users hold
K >= 2 vectors is accounted for the pair they make, whatever Cor 2.5 (one vector per user) says. The pair puts the
element steps anywhere in the rho ball, as clipping allows and as Cor 3.1 is stated (for any loss, sensitivity 2 rho,
L327): it is the privacy of the release over every loss and data set whose element steps reach rho. For one loss on
one data domain the attainable steps can be fewer (§4.2's logistic steps on its clusters are not collinear at norm
rho), and that narrower question is not what this accountant answers."""
from __future__ import annotations

from functools import lru_cache

from algorithms.events import ElementGaussianRelease
from verifiers.accountants import element_rdp as er
from verifiers.accountants.base import Accountant


@lru_cache(maxsize=256)
def _pair(q: float, sigma: float, T: int, delta: float, K: int, pessimistic: bool) -> float:
    return er.tight_epsilon(q, sigma, T, delta, float(K), float(K - 2), pessimistic=pessimistic)


@lru_cache(maxsize=256)
def _labelled(q: float, sigma: float, T: int, delta: float) -> float:
    return er.labelled_tight_epsilon(q, sigma, T, delta, dist=2.0)


def run_epsilon(e: ElementGaussianRelease, delta: float) -> tuple[float, str]:
    """(epsilon at delta, the method) of one run's release (every round the same mechanism)."""
    if e.sampling == "poisson":
        return (_pair(e.q, e.sigma, e.rounds, delta, e.elements, True),
                f"PLD of the element pair ({e.elements}, {e.elements - 2}) (Poisson sampling, {e.rounds} rounds, "
                f"pessimistic)")
    if e.sampling == "fixed_size":
        return (_labelled(e.q, e.sigma, e.rounds, delta),
                f"PLD of the labelled pair, an upper bound (fixed-size sampling: the changed user's inclusion revealed, shift 2 rho; "
                f"{e.rounds} rounds)")
    raise ValueError(f"element-level SGD sampling {e.sampling!r}: poisson or fixed_size")


def epsilon(events: tuple, L: float, delta: float) -> tuple[float, str]:
    (e,) = events
    return run_epsilon(e, delta)


def describe(e: ElementGaussianRelease, L: float, delta: float) -> dict:
    """The report's columns: what ran, Cor 3.1's epsilon at the same (q, sigma, T, delta) (the paper's pair) and the
    element pair's optimistic end: under Poisson sampling a lower bound on the accounted pair's epsilon; under
    fixed-size sampling a lower bound on the run's (the pair with the other users' steps at 0 is realisable there
    too: the changed user is in a round's batch with probability q n / n, independently over rounds), next to the
    labelled upper bound the verdict uses (a fail there says the claim is not certified, the lower bound whether it
    is refuted)."""
    out = {"sigma": e.sigma, "rho": e.rho, "q": e.q, "sampling": e.sampling, "elements_per_user": e.elements,
           "epsilon_cor31": er.paper_epsilon(e.q, e.sigma, e.rounds, delta).epsilon}
    out |= {"pair": f"({e.elements}, {e.elements - 2})",
            "epsilon_pair_optimistic": _pair(e.q, e.sigma, e.rounds, delta, e.elements, False)}
    return out


def view(threat_model: str) -> str:
    return ("the curator's releases theta_{1:T} under element replacement (one user's data in one cluster), for users "
            "holding as many element vectors as the run's users did, each clipped step anywhere in the rho ball "
            "(any loss, as Cor 3.1 is stated)")


ACCOUNTANT = Accountant(ElementGaussianRelease, epsilon, describe, view)
