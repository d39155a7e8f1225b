"""What an algorithm reports about the privacy-relevant work it actually ran. Each event kind has a ``kind``
tag, so stored events (plain dicts) come back as the right class (``from_dict``). Events form a tree: a
``ComposedEvent`` of sub-events released together, a ``SelfComposedEvent`` of one event run ``count`` times
(as dp-accounting's ComposedDpEvent and SelfComposedDpEvent); the accountants walk it and name the node they
cannot handle (verifiers/accountants)."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import ClassVar

from algorithms.registry import Registry


@dataclass(frozen=True)
class GaussianRelease:
    """Each participating silo released (1/K) sum of K per-record gradients + N(0, sigma^2 I_d).

    sampling: 'without_replacement' (a fresh uniform K-subset of the silo's n records each round)
    or 'disjoint' (one pass: batches never share a record). ``rounds`` is the largest number of
    rounds any silo took part in; ``max_record_uses`` the largest number of rounds any single
    record was read in (1 for a correct one-pass run). The sensitivity is not declared here: the
    accountant derives it from the loss's Lipschitz constant and K.
    """

    kind: ClassVar[str] = "gaussian"
    sigma: float
    batch_size: int
    pool_size: int
    sampling: str
    rounds: int
    max_record_uses: int


@dataclass(frozen=True)
class ShuffledLDPRelease:
    """Each round a uniform k-subset (without replacement) of the n clients ran the eps0-LDP randomizer on
    its clipped gradient and the shuffler passed the server the multiset of the k messages (seed 001's
    subsampled shuffle mechanism, eq. 3). ``rounds``: rounds run; ``max_record_uses``: the most rounds one
    client took part in. The randomizer is named, so its output distribution can be checked exactly."""

    kind: ClassVar[str] = "shuffled_ldp"
    eps_ldp: float
    batch_size: int
    pool_size: int
    randomizer: str
    clip: float
    dimension: int
    rounds: int
    max_record_uses: int
    sampling: str = "without_replacement"


@dataclass(frozen=True)
class ShuffleSumRelease:
    """Each round one call of seed 000's P_VEC on ``users_per_call`` users (grid g, ``trials_per_user`` binomial
    trials with probability p per user and coordinate, inputs of norm <= Delta2): the analyzer saw the d counts.
    ``max_record_uses``: the most calls one user took part in (1 for the sequential protocols).
    ``call_epsilon``, ``call_delta``: the (eps, delta) each call's parameters were calibrated for, when they differ
    from the claim (P_GD: eps/(2 sqrt(2T ln(1/delta))), delta/(T+1)); None: the claim itself.
    ``calibrated_by``: set when the parameters are not Thm 3.2's but the smallest noise an accountant certifies at the
    claim (the ``accountant`` variants, catalog/pvec_calibration.py): the name of that accountant (None: Thm 3.2's).
    ``calibrated_calls``: how many calls per user that calibration composed (1 for the one-pass protocols, T for P_GD's
    accountant variants); a user in more calls than that is not covered."""

    kind: ClassVar[str] = "shuffle_sum"
    users_per_call: int
    dimension: int
    grid: int
    trials_per_user: int
    p: float
    Delta2: float
    rounds: int
    max_record_uses: int
    sampling: str = "disjoint"
    call_epsilon: float | None = None
    call_delta: float | None = None
    calibrated_by: str | None = None
    calibrated_calls: int = 1


@dataclass(frozen=True)
class ShuffledGaussianRelease:
    """Shuffled Noisy MB-SGD (seed 004, Thm 5.1 / G.1): every round ``silos_per_round`` of the ``silos`` silos (a
    uniform subset) each sent grad f(w, x) + N(0, sigma^2 I_d) for ONE uniform record of its ``pool_size`` (K = 1),
    and the shuffler passed the server the reports in random order. Accounted by verifiers/accountants/shuffled_gaussian.py."""

    kind: ClassVar[str] = "shuffled_gaussian"
    sigma: float
    silos_per_round: int
    silos: int
    pool_size: int
    rounds: int
    max_record_uses: int
    sampling: str = "one_record_per_silo"


@dataclass(frozen=True)
class ElementGaussianRelease:
    """Seed 002's element-level private SGD (Alg. 1 + (15), L303-325) as it ran: every round the curator released
    sum_u B_u sgd-el(theta, x^(u)) + N(0, (rho sigma)^2 I_d), each user's term a sum of its elements' steps, each
    step clipped to l2 norm ``rho`` (so a user holding ``elements`` non-empty clusters adds at most ``elements``
    vectors of norm <= rho: Cor 2.5's mechanism (4), L132-134). ``sigma``: the noise multiplier actually applied
    (the noise's standard deviation / rho); ``q``: the sampling rate; ``sampling``: 'poisson' (B_u i.i.d.
    Bernoulli(q)) or 'fixed_size' (``batch_size`` = q n users uniformly without replacement), both allowed at L319;
    ``elements``: the most non-empty clusters any user of the run held; ``rounds``: releases; ``max_record_uses``:
    the most rounds one user was sampled in."""

    kind: ClassVar[str] = "element_gaussian"
    sigma: float
    rho: float
    q: float
    sampling: str
    batch_size: int
    pool_size: int
    elements: int
    rounds: int
    max_record_uses: int


Leaf = GaussianRelease | ShuffledLDPRelease | ShuffleSumRelease | ShuffledGaussianRelease | ElementGaussianRelease


@dataclass(frozen=True)
class ComposedEvent:
    """Sub-events released together on the same data (sequential composition), e.g. a method's private and public
    epochs."""

    kind: ClassVar[str] = "composed"
    events: tuple[Event, ...]


@dataclass(frozen=True)
class SelfComposedEvent:
    """One event run ``count`` times with fresh randomness on the same data."""

    kind: ClassVar[str] = "self_composed"
    event: Event
    count: int


Event = Leaf | ComposedEvent | SelfComposedEvent
EVENT_KINDS: Registry[type] = Registry.of("privacy event kind", ((c.kind, c) for c in (
    GaussianRelease, ShuffledLDPRelease, ShuffleSumRelease, ShuffledGaussianRelease, ElementGaussianRelease)))
NODE_KINDS: Registry[type] = Registry.of("event node kind", ((c.kind, c) for c in (ComposedEvent, SelfComposedEvent)))


def to_dict(event: Event) -> dict:
    if isinstance(event, ComposedEvent):
        return {"kind": event.kind, "events": [to_dict(e) for e in event.events]}
    if isinstance(event, SelfComposedEvent):
        return {"kind": event.kind, "event": to_dict(event.event), "count": event.count}
    return {"kind": event.kind} | asdict(event)


def from_dict(d: dict) -> Event:
    """A stored event back as its class (events stored before the tag existed are Gaussian)."""
    kind = d.get("kind", "gaussian")
    if kind == "composed":
        return ComposedEvent(tuple(from_dict(e) for e in d["events"]))
    if kind == "self_composed":
        return SelfComposedEvent(from_dict(d["event"]), int(d["count"]))
    fields = {k: v for k, v in d.items() if k != "kind"}
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown privacy event kind {kind!r}; known: {', '.join(EVENT_KINDS.names() + NODE_KINDS.names())}")
    return EVENT_KINDS.get(kind)(**fields)


def leaves(event: Event, count: int = 1) -> list[tuple[Leaf, int]]:
    """The tree's leaf events, each with how many times it ran (the product of the counts above it)."""
    if isinstance(event, ComposedEvent):
        return [leaf for e in event.events for leaf in leaves(e, count)]
    if isinstance(event, SelfComposedEvent):
        if event.count < 1:
            raise ValueError(f"a self-composed event runs at least once (count = {event.count})")
        return leaves(event.event, count * event.count)
    return [(event, count)]
