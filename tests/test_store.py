"""The result store only writes databases that are ours (issues 11 and 19): create, reuse, migrate schema 2,
refuse anything else without writing, reuse a read-only store without saving."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from engine.store import SCHEMA, BrokenStore, ForeignStore, Store, StoreError

INFO = {"params": {"eta": 0.5}, "n": 3}
TRIAL = {"loss": 0.25, "eps": [1.0, 2.0]}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def one_line(e: pytest.ExceptionInfo, path: Path, *words: str) -> None:
    text = str(e.value)
    assert "\n" not in text and text.startswith(str(path)), text
    for w in words:
        assert w in text, text


def make_db(path: Path, *statements: str, wal: bool = False) -> None:
    db = sqlite3.connect(path)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    for s in statements:
        db.execute(s)
    db.commit()
    db.close()


def make_v2(path: Path, rows: dict[str, tuple[dict, dict[int, dict]]]) -> None:
    """A store exactly as the schema-2 code wrote it."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA user_version = 2")
    db.execute("CREATE TABLE IF NOT EXISTS points (key TEXT PRIMARY KEY, payload TEXT)")
    db.execute("CREATE TABLE IF NOT EXISTS trials (key TEXT, trial INTEGER, payload TEXT, PRIMARY KEY (key, trial))")
    with db:
        for key, (info, trials) in rows.items():
            db.execute("INSERT INTO points VALUES (?, ?)", (key, json.dumps(info)))
            db.executemany("INSERT INTO trials VALUES (?, ?, ?)",
                           [(key, t, json.dumps(p)) for t, p in trials.items()])
    db.close()


def meta(path: Path) -> tuple[dict, int]:
    db = sqlite3.connect(path)
    try:
        return dict(db.execute("SELECT key, value FROM privbench_meta")), db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


def assert_refused(path: Path, error: type[StoreError], *words: str) -> None:
    """Refused with a one-line message, and neither the file nor its folder changed."""
    folder = path.parent
    before = (digest(path) if path.is_file() else None, listing(folder))
    with pytest.raises(error) as e:
        Store(path)
    one_line(e, path, *words)
    assert (digest(path) if path.is_file() else None, listing(folder)) == before


def test_fresh_store_is_marked(tmp_path):
    path = tmp_path / "sub" / "r.sqlite"
    s = Store(path)
    assert not s.read_only and s.migrated_from is None
    s.put("k", INFO, {0: TRIAL, 1: TRIAL})
    assert s.point("k") == INFO and s.trials("k", range(1, 5)) == {1: TRIAL}
    assert s.point("other") is None and s.trials("other", range(3)) == {}
    assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s.close()
    assert meta(path) == ({"format": "privbench-results", "schema": str(SCHEMA)}, SCHEMA) and SCHEMA == 3


def test_reopen_reuses_rows(tmp_path):
    path = tmp_path / "r.sqlite"
    s = Store(path)
    s.put("k", INFO, {t: {"t": t} for t in range(4)})
    s.close()
    s = Store(path)
    assert s.point("k") == INFO and s.trials("k", range(2, 10)) == {2: {"t": 2}, 3: {"t": 3}}
    assert not s.read_only and s.migrated_from is None
    s.close()
    assert listing(tmp_path) == ["r.sqlite"]


@pytest.mark.parametrize("how", ["zero bytes", "no tables"])
def test_empty_database_becomes_ours(tmp_path, how):
    path = tmp_path / "r.sqlite"
    if how == "zero bytes":
        path.touch()
    else:
        make_db(path, "CREATE TABLE t (a)", "DROP TABLE t")
    s = Store(path)
    s.put("k", INFO, {0: TRIAL})
    s.close()
    assert meta(path)[0]["format"] == "privbench-results"


def test_migrates_schema_2_store(tmp_path):
    path = tmp_path / "r.sqlite"
    make_v2(path, {"a": (INFO, {0: TRIAL, 1: {"loss": 1}}), "b": ({"x": 1}, {})})
    s = Store(path)
    assert s.migrated_from == 2 and not s.read_only
    assert s.point("a") == INFO and s.trials("a", range(2)) == {0: TRIAL, 1: {"loss": 1}}
    assert s.point("b") == {"x": 1} and s.trials("b", range(2)) == {}
    s.put("c", INFO, {0: TRIAL})
    s.close()
    assert meta(path) == ({"format": "privbench-results", "schema": "3"}, 3)
    s = Store(path)                                     # now simply ours
    assert s.migrated_from is None and s.point("a") == INFO and s.point("c") == INFO
    s.close()


@pytest.mark.parametrize("wal", [False, True])
def test_foreign_points_table_refused_untouched(tmp_path, wal):
    path = tmp_path / "theirs.sqlite"
    make_db(path, "PRAGMA user_version = 2", "CREATE TABLE points (x REAL, y REAL)",
            "CREATE TABLE trials (key TEXT, trial INTEGER, payload TEXT)", "INSERT INTO points VALUES (1, 2)", wal=wal)
    assert_refused(path, ForeignStore, "points has other columns", "--store")


def test_foreign_tables_refused_untouched(tmp_path):
    path = tmp_path / "shop.db"
    make_db(path, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)",
            "CREATE TABLE orders (id INTEGER, customer INTEGER)", "CREATE INDEX by_customer ON orders (customer)",
            "INSERT INTO customers VALUES (1, 'ada')")
    assert_refused(path, ForeignStore, "not a privbench result store", "table customers", "--store")


@pytest.mark.parametrize("statements", [
    ("PRAGMA user_version = 7",),                                       # empty, but someone's
    ("CREATE TABLE points (key TEXT PRIMARY KEY, payload TEXT)",        # our columns, without user_version 2
     "CREATE TABLE trials (key TEXT, trial INTEGER, payload TEXT, PRIMARY KEY (key, trial))"),
    ("CREATE TABLE points (key TEXT, point INTEGER, payload TEXT, PRIMARY KEY (key, point))",    # schema 1
     "CREATE TABLE trials (key TEXT, point INTEGER, trial INTEGER, payload TEXT, PRIMARY KEY (key, point, trial))"),
    ("CREATE TABLE privbench_meta (key TEXT PRIMARY KEY, value TEXT)",  # a marker of another format
     "INSERT INTO privbench_meta VALUES ('format', 'something-else')"),
])
def test_unrecognised_layouts_refused_untouched(tmp_path, statements):
    path = tmp_path / "x.sqlite"
    make_db(path, *statements)
    assert_refused(path, ForeignStore)


def test_newer_schema_refused_untouched(tmp_path):
    path = tmp_path / "r.sqlite"
    Store(path).close()
    make_db(path, "UPDATE privbench_meta SET value = '4' WHERE key = 'schema'", "PRAGMA user_version = 4")
    assert_refused(path, ForeignStore, "newer privbench", "schema 4")


@pytest.mark.parametrize("content", [b"\x00\x01garbage\xff" * 300, b"just some notes\n", None])
def test_not_sqlite_refused_untouched(tmp_path, content):
    path = tmp_path / "notes.txt"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    assert_refused(path, ForeignStore, "--store")


def test_corrupt_store_refused_in_one_line(tmp_path):
    path = tmp_path / "r.sqlite"
    s = Store(path)
    keys = [f"k{i}" for i in range(30)]
    for k in keys:
        s.put(k, {"blob": k * 500}, {t: {"v": t, "pad": "x" * 500} for t in range(10)})
    s.close()
    size = path.stat().st_size
    page = 4096
    assert size >= 20 * page
    with open(path, "r+b") as f:                         # two whole pages in the middle
        f.seek(size // page // 2 * page)
        f.write(b"\xff" * 2 * page)
    with pytest.raises(BrokenStore) as e:
        s = Store(path)
        try:
            for k in keys:
                s.point(k)
                s.trials(k, range(10))
        finally:
            s.close()
    one_line(e, path, "damaged")


def test_unreadable_payload_is_broken_store(tmp_path):
    path = tmp_path / "r.sqlite"
    Store(path).close()
    make_db(path, "INSERT INTO points VALUES ('k', 'not json')")
    s = Store(path)
    with pytest.raises(BrokenStore) as e:
        s.point("k")
    one_line(e, path, "not valid JSON")
    s.close()


def test_read_only_flag_reuses_and_skips(tmp_path):
    path = tmp_path / "r.sqlite"
    s = Store(path)
    s.put("k", INFO, {0: TRIAL})
    s.close()
    before = digest(path)
    s = Store(path, read_only=True)
    assert s.read_only and s.skipped_units == 0
    assert s.point("k") == INFO and s.trials("k", range(1)) == {0: TRIAL}
    s.put("new", INFO, {0: TRIAL})
    s.put("k", {"changed": True}, {})
    assert s.skipped_units == 2 and s.point("new") is None and s.point("k") == INFO
    s.close()
    assert digest(path) == before and listing(tmp_path) == ["r.sqlite"]


def test_read_only_flag_needs_an_existing_store(tmp_path):
    with pytest.raises(StoreError) as e:
        Store(tmp_path / "missing.sqlite", read_only=True)
    one_line(e, tmp_path / "missing.sqlite", "does not exist")
    assert listing(tmp_path) == []


def test_read_only_schema_2_store_is_read_without_migrating(tmp_path):
    path = tmp_path / "r.sqlite"
    make_v2(path, {"a": (INFO, {0: TRIAL})})
    before = digest(path)
    s = Store(path, read_only=True)
    assert s.read_only and s.migrated_from is None and s.point("a") == INFO
    s.close()
    assert digest(path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files; test_read_only_flag covers the path")
@pytest.mark.parametrize("what", ["file", "folder"])
def test_read_only_by_permission(tmp_path, what):
    folder = tmp_path / "d"
    folder.mkdir()
    path = folder / "r.sqlite"
    s = Store(path)
    s.put("k", INFO, {0: TRIAL})
    s.close()
    before = digest(path)
    target = path if what == "file" else folder
    target.chmod(0o444 if what == "file" else 0o555)
    try:
        s = Store(path)
        assert s.read_only and s.point("k") == INFO and s.trials("k", range(3)) == {0: TRIAL}
        s.put("new", INFO, {0: TRIAL})
        assert s.skipped_units == 1
        s.close()
    finally:
        target.chmod(0o644 if what == "file" else 0o755)
    assert digest(path) == before and listing(folder) == ["r.sqlite"]   # no -wal/-shm left to block writers
    s = Store(path)
    assert not s.read_only
    s.close()


def test_store_below_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(StoreError) as e:
        Store(tmp_path / "f" / "r.sqlite")
    one_line(e, tmp_path / "f" / "r.sqlite", "cannot be opened")
    assert (tmp_path / "f").read_text() == "x"


def test_errors_are_value_errors():
    assert issubclass(ForeignStore, ValueError) and issubclass(BrokenStore, ValueError)
    e = ForeignStore("/x", "is not an SQLite database")
    assert str(e) == "/x: is not an SQLite database; choose another --store path"
    assert (e.path, e.reason) == ("/x", "is not an SQLite database")
