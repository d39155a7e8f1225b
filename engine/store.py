"""The result store: an embedded SQLite database of per-trial results, keyed by (point key, trial).

A point key hashes everything that determines a trial's numbers at one sweep point: the point's spec (without
its prose, expected verdicts, trial count and the other sweep values), the measurements the checks need, the
seed, the source code of the three packages and the numerical libraries' versions (engine/kinds/learning/runner.py
``point_key``). A trial of a sweep point is
the same computation whoever runs it and however trials are batched (algorithms/streams.py), so a stored
row can be reused by any later run with the same key: an interrupted sweep resumes where it stopped, a
run with more trials computes only the new ones, and a changed spec or code never reuses a stale row.
Rows are written by one process (the one running the sweep), each finished unit in one transaction.

Safety: the store path is the user's choice (``--store``), so a file is written only when it is ours.

- Ours: a database with the marker table ``privbench_meta(key TEXT PRIMARY KEY, value TEXT)`` holding
  ``format = privbench-results`` and ``schema = 3`` (SCHEMA), besides exactly the tables ``points`` and
  ``trials`` with their columns. A missing file, or an SQLite database with no schema objects at all (and
  user_version and application_id 0), becomes ours: the tables and the marker are created in one transaction.
- Migrated: a privbench store of schema 2 (no marker, ``PRAGMA user_version`` 2, exactly ``points`` and
  ``trials`` with the schema-2 columns, which schema 3 keeps). In one transaction the marker is added and
  user_version set to 3; every row is kept (rows are keyed by the run key, which did not change).
- Refused, with nothing written (the file is first inspected through a read-only connection): anything
  else. ``ForeignStore`` for another program's database (other tables, a ``points`` table of other columns,
  a marker of another format, a layout we do not recognise, a newer schema than ours) and for a path that
  is not an SQLite database at all (a text file, garbage, a directory); ``BrokenStore`` for a damaged
  database, also when the damage is only met later by ``point``/``trials``/``put``. Their message is one
  line: the path, why, what to do. Nothing here ever drops or alters a table it did not create.
- Read-only: a store we may not write (file or directory permissions, or ``Store(path, read_only=True)``)
  is opened read-only and reused; ``read_only`` is True and ``put`` stores nothing but counts the unit in
  ``skipped_units``, so the caller can say that results were not saved.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

DEFAULT_PATH = Path(".privbench") / "results.sqlite"
NOT_IDENTITY = ("name", "description", "notes", "expect", "expect_quick", "quick", "trials")
PACKAGES = ("engine", "algorithms", "verifiers", "catalog")
SCHEMA = 3
FORMAT = "privbench-results"
MAGIC = b"SQLite format 3\x00"
TIMEOUT = 30

# (name, declared type, position in the primary key) of each column, as PRAGMA table_info reports them
_META = [("key", "TEXT", 1), ("value", "TEXT", 0)]
_POINTS = [("key", "TEXT", 1), ("payload", "TEXT", 0)]
_TRIALS = [("key", "TEXT", 1), ("trial", "INTEGER", 2), ("payload", "TEXT", 0)]
_CREATE_META = "CREATE TABLE privbench_meta (key TEXT PRIMARY KEY, value TEXT)"
_CREATE = ("CREATE TABLE points (key TEXT PRIMARY KEY, payload TEXT)",
           "CREATE TABLE trials (key TEXT, trial INTEGER, payload TEXT, PRIMARY KEY (key, trial))")
_V1_COLUMNS = {"points": ["key", "point", "payload"], "trials": ["key", "point", "trial", "payload"]}
_ANOTHER = "choose another --store path"


class StoreError(ValueError):
    """The store cannot be used. One line: the path, why, what to do."""

    def __init__(self, path: str | Path, reason: str, advice: str = _ANOTHER):
        self.path, self.reason, self.advice = str(path), reason, advice
        super().__init__(" ".join(f"{path}: {reason}; {advice}".splitlines()))

    def __reduce__(self):
        return (type(self), (self.path, self.reason, self.advice))


class ForeignStore(StoreError):
    """The path holds something that is not a privbench result store (or one newer than this code)."""


class BrokenStore(StoreError):
    """The path holds a damaged SQLite database."""

    def __init__(self, path: str | Path, reason: str, advice: str = f"move it aside or {_ANOTHER}"):
        super().__init__(path, reason, advice)


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


def _failure(path: Path, e: sqlite3.Error) -> StoreError:
    name = getattr(e, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return BrokenStore(path, f"is a damaged SQLite database ({e})")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreError(path, f"is locked by another process ({e}, waited {TIMEOUT} s)",
                          f"try again when it has finished, or {_ANOTHER}")
    return StoreError(path, f"cannot be used ({e})")


@contextlib.contextmanager
def _errors(path: Path, rows: bool = False) -> Iterator[None]:
    """sqlite3 errors (and, reading rows, payloads that are not JSON) as one-line StoreErrors."""
    try:
        yield
    except sqlite3.Error as e:
        raise _failure(path, e) from None
    except (ValueError, TypeError) as e:
        if not rows or isinstance(e, StoreError):
            raise
        raise BrokenStore(path, f"holds a row that is not valid JSON ({e})") from None


def _columns(db: sqlite3.Connection, table: str) -> list[tuple]:
    return [(name, kind.upper(), pk) for _, name, kind, _, _, pk in db.execute(f"PRAGMA table_info({table})")]


def _listing(objects: list[tuple[str, str]]) -> str:
    names = [f"{kind} {name}" for kind, name in sorted(objects)]
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _layout(db: sqlite3.Connection, path: Path) -> str:
    """'current', 'empty' or 'v2' (a schema-2 privbench store); ForeignStore/BrokenStore for anything else.
    Reads only."""
    objects = [(k, n) for k, n in db.execute("SELECT type, name FROM sqlite_master") if not n.startswith("sqlite_")]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    application = db.execute("PRAGMA application_id").fetchone()[0]
    tables = {n for k, n in objects if k == "table"}
    ours = len(objects) == len(tables) and _columns(db, "points") == _POINTS and _columns(db, "trials") == _TRIALS
    if not objects:
        if version == 0 and application == 0:
            return "empty"
        raise ForeignStore(path, f"is an empty SQLite database marked by another program (user_version {version}, "
                                 f"application_id {application})")
    if "privbench_meta" in tables:
        if _columns(db, "privbench_meta") != _META:
            raise ForeignStore(path, "is not a privbench result store (its table privbench_meta has other columns)")
        meta = {str(k): v for k, v in db.execute("SELECT key, value FROM privbench_meta")}
        if meta.get("format") != FORMAT:
            raise ForeignStore(path, f"is not a privbench result store (privbench_meta says format "
                                     f"{meta.get('format')!r}, not {FORMAT!r})")
        try:
            schema = int(meta["schema"])
        except (KeyError, TypeError, ValueError):
            raise BrokenStore(path, f"is a privbench result store with an unreadable schema "
                                    f"{meta.get('schema')!r}") from None
        if schema > SCHEMA:
            raise ForeignStore(path, f"was written by a newer privbench (store schema {schema}, this privbench "
                                     f"reads schema {SCHEMA})", f"upgrade privbench or {_ANOTHER}")
        if schema < SCHEMA:
            raise ForeignStore(path, f"is a privbench result store of schema {schema}, which this privbench "
                                     f"cannot migrate")
        if tables != {"privbench_meta", "points", "trials"} or not ours:
            raise BrokenStore(path, f"is marked as a privbench result store but does not have its tables "
                                    f"(it holds {_listing(objects)})")
        return "current"
    if tables == {"points", "trials"} and ours:
        if version == 2:
            return "v2"
        raise ForeignStore(path, f"is not a privbench result store (it has the tables points and trials but "
                                 f"user_version {version})")
    if tables == {"points", "trials"} and len(objects) == 2 and \
            all([c[0] for c in _columns(db, t)] == want for t, want in _V1_COLUMNS.items()):
        raise ForeignStore(path, "is a result store of an early privbench (before schema 2) whose rows "
                                 "no current privbench can reuse", f"delete it or {_ANOTHER}")
    if "points" in tables and _columns(db, "points") != _POINTS:
        raise ForeignStore(path, f"is not a privbench result store (its table points has other columns; it "
                                 f"holds {_listing(objects)})")
    raise ForeignStore(path, f"is not a privbench result store (it holds {_listing(objects)})")


def _connect_ro(path: Path, header: bytes) -> sqlite3.Connection:
    """A read-only connection that leaves nothing behind. A WAL database without a -wal file (no connection
    has it open) is opened immutable: a plain read-only reader would create -wal and -shm files with the
    database's permissions and leave them (a read-only -wal then makes the database unwritable for everyone
    until it is removed), and in a read-only directory it cannot open the database at all. The price: a
    process that starts writing to it meanwhile may make our reads fail as damaged (BrokenStore)."""
    wal = header[18:20] == b"\x02\x02" and not Path(f"{path}-wal").exists()
    return sqlite3.connect(f"{path.resolve().as_uri()}?{'immutable=1' if wal else 'mode=ro'}", uri=True,
                           timeout=TIMEOUT)


class Store:
    """``Store(path)``: open (or create, or migrate) the result store at path; refuse anything else (see the
    module docstring). ``read_only=True`` never writes: a missing or empty store is then refused."""

    def __init__(self, path: str | Path = DEFAULT_PATH, *, read_only: bool = False):
        self.path = Path(path)
        self.read_only = read_only
        self.skipped_units = 0                          # units put() did not save (a read-only store)
        self.migrated_from: int | None = None           # the schema this open migrated from, if it did
        try:
            self.db = self._open()
        except OSError as e:                            # a folder that cannot be made or read, a file not readable
            raise StoreError(self.path, f"cannot be opened ({e.strerror or e})") from None

    def _open(self) -> sqlite3.Connection:
        p = self.path
        if not p.exists():
            if self.read_only:
                raise StoreError(p, "does not exist (asked to open it read-only)", "choose an existing store")
            p.parent.mkdir(parents=True, exist_ok=True)
            db = self._writer()
            if db is None:
                raise StoreError(p, "cannot be created there (no permission or a read-only file system)")
            return db
        if p.is_dir():
            raise ForeignStore(p, "is a directory, not an SQLite database")
        if not p.is_file():
            raise ForeignStore(p, "is not a regular file")
        with open(p, "rb") as f:
            header = f.read(100)
        if header and not header.startswith(MAGIC):
            raise ForeignStore(p, "is not an SQLite database")
        with _errors(p):
            look = _connect_ro(p, header)
            try:
                found = _layout(look, p)
            finally:
                look.close()
        if not self.read_only and os.access(p, os.W_OK) and os.access(p.parent, os.W_OK):
            db = self._writer()
            if db is not None:
                return db
        if found == "empty":
            raise StoreError(p, "is an empty database that cannot be written", f"make it writable or {_ANOTHER}")
        self.read_only = True
        with _errors(p):
            db = _connect_ro(p, header)
            try:
                _layout(db, p)                          # the connection kept sees what the inspection saw
            except BaseException:
                db.close()
                raise
        return db

    def _writer(self) -> sqlite3.Connection | None:
        """A read-write connection, after creating or migrating the store in one transaction;
        None if the database turns out to be read-only."""
        p = self.path
        try:
            db = sqlite3.connect(p, timeout=TIMEOUT)
        except sqlite3.OperationalError:                # cannot open the file for writing (nor create it)
            return None
        with _errors(p):
            try:
                db.execute("BEGIN IMMEDIATE")
                found = _layout(db, p)                  # again, under the write lock: another process may have
                if found == "empty":                    # created or migrated it since
                    for statement in _CREATE:
                        db.execute(statement)
                if found in ("empty", "v2"):
                    db.execute(_CREATE_META)
                    db.executemany("INSERT INTO privbench_meta VALUES (?, ?)",
                                   [("format", FORMAT), ("schema", str(SCHEMA))])
                    db.execute(f"PRAGMA user_version = {SCHEMA}")
                db.commit()
                db.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError as e:
                db.close()
                if (getattr(e, "sqlite_errorname", "") or "").startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")):
                    return None
                raise
            except BaseException:
                db.close()                              # rolls back: nothing was written
                raise
        if found == "v2":
            self.migrated_from = 2
        return db

    def point(self, key: str) -> dict | None:
        with _errors(self.path, rows=True):
            row = self.db.execute("SELECT payload FROM points WHERE key = ?", (key,)).fetchone()
            return None if row is None else json.loads(row[0])

    def trials(self, key: str, wanted: range) -> dict[int, dict]:
        with _errors(self.path, rows=True):
            rows = self.db.execute("SELECT trial, payload FROM trials WHERE key = ? AND trial < ?",
                                   (key, wanted.stop)).fetchall()
            return {t: json.loads(p) for t, p in rows if t in wanted}

    def put(self, key: str, info: dict, trials: dict[int, dict]) -> None:
        if self.read_only:
            self.skipped_units += 1
            return
        with _errors(self.path), self.db:               # one transaction per finished unit
            self.db.execute("INSERT OR REPLACE INTO points VALUES (?, ?)", (key, json.dumps(info)))
            self.db.executemany("INSERT OR REPLACE INTO trials VALUES (?, ?, ?)",
                                [(key, t, json.dumps(p)) for t, p in trials.items()])

    def close(self) -> None:
        self.db.close()
