"""Threat models and neighbouring relations: the vocabulary specs, catalog entries, theorems, accountants and audits
share. A threat model says who is trusted and which view must be private (``epsilon_of``); a neighbouring relation
says what one unit of protection is: which unit changes (a record, all of one user's data, or one element: a user's
data inside one cluster of a public partition, seed 002) crossed with how it changes (replaced by another, or added
or removed). Every shipped spec uses its threat model's default relation, the one its accountant was written for;
``none`` is the threat model of a method with no privacy claim (no epsilon, no privacy checks)."""
from __future__ import annotations

from dataclasses import dataclass

from algorithms.registry import Registry

UNITS = {"record": "one record", "user": "all of one user's records",
         "element": "one user's records inside one cluster of a public partition (element-level DP, seed 002)"}
CHANGES = {"replace_one": "replaced by another", "add_remove": "added or removed"}


@dataclass(frozen=True)
class Neighbouring:
    """Two data sets are neighbours when ``unit`` differs between them in the way ``change`` says. ``keep_count``
    (a ``user`` or ``element`` unit replaced, seed 002's note P3, which the seed leaves open): True when the changed
    user keeps its total number of records m (Lemmas 3.1-3.2 assume sum_j X_j = m), False when the change may alter
    it, None where the question does not arise."""

    unit: str
    change: str
    keep_count: bool | None = None

    def __post_init__(self) -> None:
        if self.unit not in UNITS or self.change not in CHANGES:
            raise ValueError(f"neighbouring relation ({self.unit!r}, {self.change!r}): units {', '.join(UNITS)}; "
                             f"changes {', '.join(CHANGES)}")
        if self.keep_count is not None and (self.unit == "record" or self.change != "replace_one"):
            raise ValueError(f"keep_count applies to a user or an element replaced, not to {self.unit}/{self.change}")

    @property
    def text(self) -> str:
        count = {None: "", True: ", keeping the user's total count m", False: ", its total count free to change"}
        return f"{UNITS[self.unit]} {CHANGES[self.change]}{count[self.keep_count]}"

    @property
    def label(self) -> str:
        """unit/change[/keep_count|/free_count]: the short form errors and tables use."""
        tail = {None: "", True: "/keep_count", False: "/free_count"}[self.keep_count]
        return f"{self.unit}/{self.change}{tail}"

    def as_dict(self) -> dict:
        return {"unit": self.unit, "change": self.change} | (
            {} if self.keep_count is None else {"keep_count": self.keep_count})


RECORD_REPLACED = Neighbouring("record", "replace_one")
# one user's data inside one cluster replaced (seed 002's d_element, (3)); the learning kind's element-level SGD
# clips each element's mean gradient, so whether the user keeps its count does not arise
ELEMENT_REPLACED = Neighbouring("element", "replace_one")


@dataclass(frozen=True)
class ThreatModel:
    """``private``: the model makes a privacy claim (an epsilon and a delta); ``epsilon_of``: the view the claim is
    about; ``neighbouring``: the relation its shipped accountants are written for (the default of a spec);
    ``relations``: every relation a spec of this model may state (the default first); an algorithm that is
    accounted for another relation than the default declares it (``AlgorithmEntry.relations``)."""

    name: str
    description: str
    private: bool
    epsilon_of: str
    neighbouring: Neighbouring | None
    relations: tuple[Neighbouring, ...]


THREAT_MODELS: Registry[ThreatModel] = Registry.of("threat model", ((t.name, t) for t in (
    ThreatModel("isrl", "inter-silo record-level DP (seed 004, Def. 2): each silo's transcript is (eps, delta)-DP in its "
                        "own records", True, "every silo's transcript", RECORD_REPLACED, (RECORD_REPLACED,)),
    ThreatModel("shuffle", "shuffle model (seeds 000, 001): clients randomize locally, a trusted shuffler hands the "
                           "server the multiset of messages, whose view is (eps, delta)-DP", True,
                "the server's shuffled view", RECORD_REPLACED, (RECORD_REPLACED,)),
    ThreatModel("central", "central model: a trusted curator sees the records and releases an (eps, delta)-DP output "
                           "(here: the noisy gradients of every round)", True, "the curator's releases",
                RECORD_REPLACED, (RECORD_REPLACED, ELEMENT_REPLACED)),
    ThreatModel("local", "local model: every user randomizes its own message before it leaves the device; each message "
                         "the server receives is (eps, delta)-DP in that user's record", True,
                "every user's messages", RECORD_REPLACED, (RECORD_REPLACED,)),
    ThreatModel("none", "no privacy claim: a non-private method or estimator, checked for accuracy only", False,
                "nothing", None, ()),
)))
