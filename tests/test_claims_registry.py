"""The claim registry (verifiers/claims.py) against the claim inventory (../shared/notes/inventory.md): same ids in
the same order, same classification columns; plus checks that need no inventory (counts, ids, summaries, helpers)."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from verifiers.claims import CLAIMS, PAPERS, Claim, split_ids, unknown_ids

INVENTORY = Path(__file__).resolve().parents[2] / "shared/notes/inventory.md"
SEEDS = ("000", "001", "002", "003", "004")
ROWS_PER_PAPER = {"000": 41, "001": 19, "002": 32, "003": 84, "004": 54}
LEGEND = {
    "type": {"privacy", "utility-upper", "utility-lower", "rate", "identity", "asymptotic", "experiment-number"},
    "constants": {"explicit", "O()", "asymptotic"},
    "threat_model": {"central", "local", "isrl", "shuffle", "element", "none"},
    "check": {"accounting", "audit", "exact-privacy", "bound", "rate", "monotone/ordering", "covariance",
              "regression-value"},
    "priority": {"A", "B", "C"},
}
# inventory columns: id | claim type | constants | algorithm | threat model | check kind | priority | claim (short)
COLUMNS = {"type": 1, "constants": 2, "threat_model": 4, "check": 5, "priority": 6}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def _inventory_rows(text: str) -> list[list[str]]:
    """Rows of the claim tables: tables whose header's first cell is "id", rows whose first cell starts with a
    3-digit seed id (so the header, the separator and the Summary table's per-seed rows are skipped)."""
    rows: list[list[str]] = []
    in_claims = False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_claims = False
            continue
        cells = _cells(line)
        if cells[0] == "id":
            in_claims = True
        elif in_claims and re.match(r"\d{3} ", cells[0]):
            assert len(cells) == 8, f"claim row with {len(cells)} cells: {line!r}"
            rows.append(cells)
    return rows


@pytest.fixture(scope="module")
def inventory() -> str:
    if not INVENTORY.is_file():
        pytest.skip(f"claim inventory not found at {INVENTORY}")
    return INVENTORY.read_text(encoding="utf-8")


def test_ids_match_inventory_in_order(inventory: str) -> None:
    rows = _inventory_rows(inventory)
    assert rows, "no claim rows parsed from the inventory"
    assert list(CLAIMS) == [r[0] for r in rows]


def test_columns_match_inventory(inventory: str) -> None:
    for row in _inventory_rows(inventory):
        claim = CLAIMS[row[0]]
        assert claim.paper == row[0][:3], row[0]
        for field, col in COLUMNS.items():
            assert getattr(claim, field) == row[col], (row[0], field)


def test_rows_per_seed_match_inventory_headings(inventory: str) -> None:
    stated = dict(re.findall(r"^## Seed (\d{3}) .*?Rows: (\d+)\.", inventory, flags=re.M | re.S))
    assert set(stated) == set(SEEDS)
    counts = Counter(c.paper for c in CLAIMS.values())
    assert {p: int(n) for p, n in stated.items()} == dict(counts)


def test_totals() -> None:
    claims = list(CLAIMS.values())
    assert len(claims) == 230
    assert sum(c.priority == "A" for c in claims) == 61
    assert dict(Counter(c.paper for c in claims)) == ROWS_PER_PAPER
    assert Counter(c.priority for c in claims) == Counter({"A": 61, "B": 110, "C": 59})


def test_ids_and_fields() -> None:
    assert set(PAPERS) == set(SEEDS) and all(PAPERS.values())
    assert len({c.id for c in CLAIMS.values()}) == len(CLAIMS)
    for key, c in CLAIMS.items():
        assert isinstance(c, Claim) and key == c.id
        assert c.paper in SEEDS and c.id.startswith(c.paper + " "), c.id
        assert c.id == c.id.strip() and "  " not in c.id, c.id
        assert split_ids(c.id) == (c.id,), c.id
        for field, allowed in LEGEND.items():
            assert getattr(c, field) in allowed, (c.id, field)
        assert c.summary.strip() and len(c.summary) < 240, c.id
        # an undecidable claim says why with numbers (the n or the time a run would take), or why no size would do
        assert (c.undecidable == "" or any(ch.isdigit() for ch in c.undecidable)
                or "no computation of any size" in c.undecidable), c.id


def test_summaries_are_distinct() -> None:
    summaries = Counter(c.summary for c in CLAIMS.values())
    assert [s for s, n in summaries.items() if n > 1] == []


def test_split_ids() -> None:
    assert split_ids("") == ()
    assert split_ids(" ;  ; ") == ()
    assert split_ids("000 Lemma A.1") == ("000 Lemma A.1",)
    assert split_ids(" 000 Lemma A.1;  001 Thm 1 ; ") == ("000 Lemma A.1", "001 Thm 1")
    assert split_ids("001 Thm 1; 001 Thm 2; 002 Cor 2.2") == ("001 Thm 1", "001 Thm 2", "002 Cor 2.2")
    # a ";" inside parentheses belongs to the id
    sc = "004 Thm 5.1/G.1 (convex; Eq. 37)"
    assert split_ids(f"{sc}; 004 Lemma D.1") == (sc, "004 Lemma D.1")
    assert split_ids("004 Lemma D.1;" + sc) == ("004 Lemma D.1", sc)
    # unbalanced parentheses: split at every ";"
    assert split_ids("a (b; c") == ("a (b", "c")


def test_unknown_ids() -> None:
    assert unknown_ids([]) == []
    assert unknown_ids(["000 Lemma A.1", "001 Fig. 2a (14×)", "003 §1.5 / §3.1.1"]) == []
    assert unknown_ids(["000 Lemma A.1", "000 Lemma Z.9", "000 lemma a.1", "000 Lemma Z.9"]) == [
        "000 Lemma Z.9", "000 lemma a.1"]
    assert unknown_ids(("001 Fig. 2a (14x)",)) == ["001 Fig. 2a (14x)"]  # ASCII x is not the inventory's ×
    assert unknown_ids("004 Thm 5.1/G.1 (convex; Eq. 37); 005 Thm 1") == ["005 Thm 1"]
    assert unknown_ids(split_ids("; ".join(CLAIMS))) == []
