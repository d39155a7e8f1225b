"""The result store: an embedded SQLite database of per-trial results, keyed by (point key, trial).

A point key hashes everything that determines a trial's numbers at one sweep point: the point's spec (without
its prose, expected verdicts, trial count and the other sweep values), the measurements the checks need, the
seed, the source code of the three packages and the numerical libraries' versions (engine/runner.py
``point_key``). A trial of a sweep point is
the same computation whoever runs it and however trials are batched (algorithms/streams.py), so a stored
row can be reused by any later run with the same key: an interrupted sweep resumes where it stopped, a
run with more trials computes only the new ones, and a changed spec or code never reuses a stale row.
Rows are written by one process (the one running the sweep), each finished unit in one transaction.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

DEFAULT_PATH = Path(".privbench") / "results.sqlite"
NOT_IDENTITY = ("name", "description", "notes", "expect", "expect_quick", "quick", "trials")
PACKAGES = ("engine", "algorithms", "verifiers", "catalog")
SCHEMA = 2


def code_hash() -> str:
    """sha256 of every .py file of the three packages (so uncommitted edits count too)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def run_key(spec_dump: dict, seed: int, code: str) -> str:
    identity = {k: v for k, v in spec_dump.items() if k not in NOT_IDENTITY}
    blob = json.dumps({"spec": identity, "seed": seed, "code": code}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class Store:
    def __init__(self, path: str | Path = DEFAULT_PATH):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        if self.db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:     # a cache: an old layout is dropped
            self.db.executescript("DROP TABLE IF EXISTS points; DROP TABLE IF EXISTS trials;")
            self.db.execute(f"PRAGMA user_version = {SCHEMA}")
        self.db.execute("CREATE TABLE IF NOT EXISTS points (key TEXT PRIMARY KEY, payload TEXT)")
        self.db.execute("CREATE TABLE IF NOT EXISTS trials (key TEXT, trial INTEGER, payload TEXT, "
                        "PRIMARY KEY (key, trial))")
        self.db.commit()

    def point(self, key: str) -> dict | None:
        row = self.db.execute("SELECT payload FROM points WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def trials(self, key: str, wanted: range) -> dict[int, dict]:
        rows = self.db.execute("SELECT trial, payload FROM trials WHERE key = ? AND trial < ?",
                               (key, wanted.stop)).fetchall()
        return {t: json.loads(p) for t, p in rows if t in wanted}

    def put(self, key: str, info: dict, trials: dict[int, dict]) -> None:
        with self.db:                                   # one transaction per finished unit
            self.db.execute("INSERT OR REPLACE INTO points VALUES (?, ?)", (key, json.dumps(info)))
            self.db.executemany("INSERT OR REPLACE INTO trials VALUES (?, ?, ?)",
                                [(key, t, json.dumps(p)) for t, p in trials.items()])

    def close(self) -> None:
        self.db.close()
