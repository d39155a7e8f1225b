"""The claims ledger: every checkable claim of the five seed papers (verifiers/claims.py), with the shipped specs'
checks that cite it and the verdicts those checks reached in the results JSON of a reports folder.

A claim's status, from the checks that cite it (its id in a check's ``claims``):
- decided: at least one check reached pass or fail. Every check kind has a test that makes it fail
  (tests/test_contracts.py), and a spec's claim is fixed before the run, so a pass could have been a fail. A claim
  of type experiment-number decided on a learning run is "decided on a stand-in" (the run's data set stands in for
  the paper's: e.g. scikit-learn's digits for MNIST), and so is one decided by a mechanism whose entry names its
  inputs as a stand-in (``MechanismEntry.data``); curve and other mechanism specs compute at the paper's parameters.
  When checks disagree (a fail and a pass), the claim is listed as failed with every verdict shown.
- undecidable on one machine: no check decided it and the registry records why no feasible run can (with the
  numbers: the n or the time it would take).
- undecided: checks cite it but all ended inapplicable or inconclusive; their reasons are shown.
- not encoded: no check of a shipped spec cites it.
Pure reading: it runs nothing and writes only the markdown file it is asked to."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from verifiers.claims import CLAIMS, PAPERS, Claim

STATUSES = ("decided", "decided on a stand-in", "undecidable on one machine", "undecided", "not encoded")
PRIORITIES = ("A", "B", "C")


@dataclass(frozen=True)
class Evidence:
    """One check of one shipped spec's results that cites a claim."""

    spec: str
    check: str
    kind: str
    verdict: str
    summary: str
    data: str | None            # the learning run's data kind (None: curve / mechanism specs compute exactly)
    variant: str | None = None   # a learning run's algorithm variant other than its first, the paper's (e.g. P_VEC
                                 # calibrated by our accountant): the ledger names it beside the verdict

    @property
    def decided(self) -> bool:
        return self.verdict in ("pass", "fail")


@dataclass
class Entry:
    claim: Claim
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def status(self) -> str:
        decided = [e for e in self.evidence if e.decided]
        if decided:
            if self.claim.type == "experiment-number" and all(e.data is not None for e in decided):
                return "decided on a stand-in"
            return "decided"
        if self.claim.undecidable:
            return "undecidable on one machine"
        return "undecided" if self.evidence else "not encoded"

    @property
    def verdict(self) -> str:
        """fail if any deciding check failed, pass if all passed, '' when undecided."""
        decided = {e.verdict for e in self.evidence if e.decided}
        return "fail" if "fail" in decided else "pass" if decided else ""

    def reason(self) -> str:
        if self.status.startswith("decided"):
            return ""
        if self.claim.undecidable:
            return self.claim.undecidable
        return " | ".join(f"{e.spec}/{e.check} {e.verdict}: {e.summary}" for e in self.evidence)


def _checks(result: dict) -> Iterable[dict]:
    yield from result.get("checks", [])


def _data_kind(result: dict) -> str | None:
    if result.get("kind") in ("learning", "comparison"):
        spec = result.get("spec", {})
        return str(spec.get("data", {}).get("kind", "unknown"))
    return result.get("data")           # a mechanism on inputs standing in for a paper's data set, else None


def _variant(result: dict) -> str | None:
    """The algorithm variant a learning run used, when it is not the algorithm's first (the paper's) variant."""
    if result.get("kind", "learning") != "learning":
        return None
    variant = (result.get("spec", {}).get("algorithm") or {}).get("variant")
    if variant is None:
        return None
    from catalog import ALGORITHMS

    name = result["spec"]["algorithm"].get("kind")
    first = ALGORITHMS.get(name).variants[0] if name in ALGORITHMS else None
    return None if variant == first else str(variant)


def collect(spec_names: Iterable[str], reports: Path) -> tuple[dict[str, Entry], list[str], list[dict]]:
    """The ledger from the results JSON of the named specs in ``reports``. Returns the entries by claim id, the
    specs whose results are missing, and the checks that cite no claim (with the reason they give)."""
    entries = {cid: Entry(c) for cid, c in CLAIMS.items()}
    missing: list[str] = []
    uncited: list[dict] = []
    for name in spec_names:
        path = reports / f"{name}.json"
        if not path.is_file():
            missing.append(name)
            continue
        result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        data = _data_kind(result)
        variant = _variant(result)
        for ch in _checks(result):
            ids = ch.get("claims") or []
            if not ids:
                uncited.append({"spec": name, "check": ch["id"], "verdict": ch["verdict"], "citation": ch["citation"]})
            for cid in ids:
                if cid not in entries:
                    raise KeyError(f"{path}: check {ch['id']!r} cites {cid!r}, which is not in verifiers/claims.py")
                entries[cid].evidence.append(Evidence(name, ch["id"], ch["kind"], ch["verdict"],
                                                      " ".join(str(ch["summary"]).split()), data, variant))
    return entries, missing, uncited


def counts(entries: dict[str, Entry]) -> dict[tuple[str, str], Counter]:
    """(paper, priority) -> Counter of statuses; also (paper, '*') and ('*', priority) and ('*', '*')."""
    out: dict[tuple[str, str], Counter] = {}
    for e in entries.values():
        for key in ((e.claim.paper, e.claim.priority), (e.claim.paper, "*"), ("*", e.claim.priority), ("*", "*")):
            out.setdefault(key, Counter())[e.status] += 1
    return out


def _cell(text: str, limit: int = 400) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def markdown(entries: dict[str, Entry], missing: list[str], uncited: list[dict], reports: str) -> str:
    tally = counts(entries)
    lines = ["# Claims ledger", "",
             "Every checkable claim of the five seed papers (ids exactly as in `../shared/notes/inventory.md`; "
             "descriptions ours, in `verifiers/claims.py`), with the shipped specs' checks that cite it and the "
             f"verdicts in `{reports}`. Generated by `python -m engine claims --markdown {reports}/CLAIMS.md`; "
             "the rules are in `engine/ledger.py`.", "",
             "Status: **decided** (a check that can fail reached pass or fail), **decided on a stand-in** (an "
             "experiment's number on a data set standing in for the paper's), **undecidable on one machine** (with "
             "the computation that shows it), **undecided** (cited only by checks that ended inapplicable or "
             "inconclusive: their reasons are shown), **not encoded** (no check cites it).", "",
             "## Counts", "", "| paper | priority | claims | " + " | ".join(STATUSES) + " |",
             "|---|---|---|" + "---|" * len(STATUSES)]
    for paper in [*PAPERS, "*"]:
        for prio in [*PRIORITIES, "*"]:
            c = tally.get((paper, prio))
            if not c:
                continue
            name = "all" if paper == "*" else paper
            lines.append(f"| {name} | {'all' if prio == '*' else prio} | {sum(c.values())} | "
                         + " | ".join(str(c.get(s, 0)) for s in STATUSES) + " |")
    if missing:
        lines += ["", f"Specs without results in `{reports}` (their checks are not counted): {', '.join(missing)}."]
    for paper, title in PAPERS.items():
        rows = [e for e in entries.values() if e.claim.paper == paper]
        lines += ["", f"## Seed {paper}: {title}", "", "| id | prio | claim | status | checks (spec/check: verdict) "
                  "| reason when undecided |", "|---|---|---|---|---|---|"]
        for e in rows:
            checks = "; ".join(f"{ev.spec}/{ev.check}" + (f" [variant {ev.variant}]" if ev.variant else "")
                               + f": {ev.verdict}" for ev in e.evidence) or "-"
            status = e.status + (f" ({e.verdict})" if e.verdict else "")
            lines.append(f"| {_cell(e.claim.id)} | {e.claim.priority} | {_cell(e.claim.summary)} | {status} | "
                         f"{_cell(checks, 600)} | {_cell(e.reason(), 600) or '-'} |")
    if uncited:
        lines += ["", "## Checks that cite no inventoried claim", "",
                  "| spec/check | verdict | why |", "|---|---|---|"]
        lines += [f"| {u['spec']}/{u['check']} | {u['verdict']} | {_cell(u['citation'])} |" for u in uncited]
    return "\n".join(lines) + "\n"


def as_json(entries: dict[str, Entry], missing: list[str], uncited: list[dict]) -> dict:
    return {"claims": [{"id": e.claim.id, "paper": e.claim.paper, "priority": e.claim.priority,
                        "type": e.claim.type, "summary": e.claim.summary, "status": e.status,
                        "verdict": e.verdict or None, "reason": e.reason() or None,
                        "checks": [vars(ev) for ev in e.evidence]} for e in entries.values()],
            "missing_results": missing, "uncited_checks": uncited}
