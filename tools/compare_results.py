"""Compare two folders of privbench results JSON and require that every number is bit-identical.

Usage::

    python tools/compare_results.py BEFORE_DIR AFTER_DIR [--rename OLD=NEW ...] [--rename-key OLD=NEW ...]

Every ``*.json`` at the top level of either folder is compared with the file of the same name in the other
(a comparison spec's per-run JSONs, e.g. ``threat_models_logistic_central_n.json``, included); a file present
on one side only is a difference. For each file the script prints ``OK name`` or ``DIFF name`` followed by the
differing paths (JSON-pointer-like, e.g. ``/points/3/params/sigma``) with both values.

Rules:

* Each document is flattened to ``path -> leaf`` (scalars, and empty lists / objects); every path must exist
  on both sides (a missing key or a list of another length shows as paths missing on one side).
* Leaves must be equal *and of the same JSON type*: ``1`` vs ``1.0`` or ``true`` vs ``1`` differ. Floats are
  compared with ``==`` after ``json.load`` and, to be bit-identical, must also agree in the sign of zero;
  a bare ``NaN`` equals ``NaN``. NaN / inf stored as strings compare as strings.
* Ignored, wherever they occur as an object key (with everything under them): the volatile keys
  ``started``, ``seconds`` (run, point and per-trial durations), ``seconds_runs`` (a shuffle protocol
  point's duration), ``code_version``, ``command``, ``packages``, ``python``, ``reused_trials``.
  Nothing else is ignored.
* Strings (provenance, accountant names, check summaries) are compared after every token that looks like a
  Python file path (``[\\w/]+\\.py``) is replaced by ``<file>``, so a moved module does not count as a change.
* ``--upgrade``: BEFORE's results are first brought to the current results schema by the project's own
  migration (``engine.kinds.upgrade_results``: schema 1 -> 2 names the learning kind, renames
  ``shuffle_protocol`` to ``mechanism`` and its ``protocol`` key to ``mechanism``), and the ``schema`` value is
  then compared like any other leaf.
* ``--rename-key OLD=NEW``: an object key ``OLD`` (at any depth) in BEFORE is compared with key ``NEW`` in AFTER.
  ``--rename OLD=NEW``: a path prefix of BEFORE is moved to another one before comparing; paths are written
  ``/a/b/c`` or ``a.b.c``, a ``*`` component matches any key or list index and is carried, in order, into
  the ``*`` components of NEW. Renames apply to BEFORE's paths (key renames first, then path renames in the
  order given, each to the result of the previous ones); volatile keys are dropped on each side first.

Exit status: 0 everything matches, 1 some difference (or an unreadable file), 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

VOLATILE_KEYS = frozenset(
    {"started", "seconds", "seconds_runs", "code_version", "command", "packages", "python", "reused_trials"}
)
PY_FILE = re.compile(r"[\w/]+\.py\b")

Path_ = tuple[str | int, ...]
Rename = tuple[tuple[str, ...], tuple[str, ...]]


def flatten(doc: Any, path: Path_ = ()) -> dict[Path_, Any]:
    """Leaves of ``doc`` by path, volatile keys dropped and file paths in strings normalised."""
    if isinstance(doc, dict) and doc:
        out: dict[Path_, Any] = {}
        for key, value in doc.items():
            if key not in VOLATILE_KEYS:
                out |= flatten(value, path + (key,))
        return out
    if isinstance(doc, list) and doc:
        out = {}
        for i, value in enumerate(doc):
            out |= flatten(value, path + (i,))
        return out
    if isinstance(doc, str):
        doc = PY_FILE.sub("<file>", doc)
    return {path: doc}


def parse_path(text: str) -> tuple[str, ...]:
    parts = text.strip("/").split("/") if text.startswith("/") else text.split(".")
    if not text or any(p == "" for p in parts):
        raise ValueError(f"empty component in path {text!r}")
    return tuple(parts)


def parse_pair(text: str, what: str) -> tuple[str, str]:
    old, sep, new = text.partition("=")
    if not sep or not old or not new:
        raise ValueError(f"{what} {text!r}: expected OLD=NEW")
    return old, new


def apply_renames(path: Path_, keys: dict[str, str], renames: list[Rename]) -> Path_:
    path = tuple(keys.get(c, c) if isinstance(c, str) else c for c in path)
    for old, new in renames:
        head = path[: len(old)]
        if len(head) == len(old) and all(o == "*" or o == str(c) for o, c in zip(old, head)):
            wild = iter(c for o, c in zip(old, head) if o == "*")
            path = tuple(next(wild) if n == "*" else _index(n) for n in new) + path[len(old):]
    return path


def _index(component: str) -> str | int:
    return int(component) if component.isdigit() else component


def same(a: Any, b: Any) -> bool:
    """Bit-identical JSON leaves: same type, equal value, same sign of zero, NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


def _order(path: Path_) -> list[tuple[int, str]]:
    """Document order for printing: list indices numerically, keys alphabetically."""
    return [(0, f"{c:012d}") if isinstance(c, int) else (1, c) for c in path]


def show_path(path: Path_) -> str:
    return "/" + "/".join(str(c) for c in path)


def compare_docs(before: Any, after: Any, keys: dict[str, str], renames: list[Rename]) -> list[str]:
    """Lines describing every difference (empty when the documents match)."""
    old: dict[Path_, Any] = {}
    for path, value in flatten(before).items():
        old[apply_renames(path, keys, renames)] = value
    new = flatten(after)
    lines = []
    for path in sorted(old.keys() | new.keys(), key=_order):
        if path not in new:
            lines.append(f"{show_path(path)}: missing in AFTER (before={old[path]!r})")
        elif path not in old:
            lines.append(f"{show_path(path)}: missing in BEFORE (after={new[path]!r})")
        elif not same(old[path], new[path]):
            lines.append(f"{show_path(path)}: before={old[path]!r} after={new[path]!r}")
    return lines


def load(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return json.load(f)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Compare privbench results JSON between two folders (bit-identical).")
    ap.add_argument("before", type=Path, help="folder with the reference results")
    ap.add_argument("after", type=Path, help="folder with the results to check")
    ap.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                    help="path prefix in BEFORE to compare at another path in AFTER (/a/*/b or a.*.b)")
    ap.add_argument("--rename-key", action="append", default=[], metavar="OLD=NEW",
                    help="object key OLD in BEFORE, at any depth, compared with key NEW in AFTER")
    ap.add_argument("--upgrade", action="store_true",
                    help="migrate BEFORE's results to the current schema first (engine.kinds.upgrade_results)")
    ap.add_argument("--max-diffs", type=int, default=50, metavar="N",
                    help="differences printed per file (0: all; default 50)")
    args = ap.parse_args(argv)
    try:
        keys = dict(parse_pair(r, "--rename-key") for r in args.rename_key)
        renames: list[Rename] = []
        for r in args.rename:
            old, new = (parse_path(p) for p in parse_pair(r, "--rename"))
            if old.count("*") != new.count("*"):
                raise ValueError(f"--rename {r!r}: OLD and NEW need the same number of '*'")
            renames.append((old, new))
    except ValueError as e:
        ap.error(str(e))
    for folder in (args.before, args.after):
        if not folder.is_dir():
            ap.error(f"not a folder: {folder}")

    names = sorted({p.name for d in (args.before, args.after) for p in d.glob("*.json")})
    if not names:
        ap.error("no *.json in either folder")
    failed = 0
    for name in names:
        b, a = args.before / name, args.after / name
        if not a.exists() or not b.exists():
            lines = [f"file missing in {'AFTER' if b.exists() else 'BEFORE'}"]
        else:
            try:
                before = load(b)
                if args.upgrade:
                    from engine.kinds import upgrade_results

                    before = upgrade_results(before, str(b))
                lines = compare_docs(before, load(a), keys, renames)
            except (OSError, ValueError) as e:
                lines = [f"unreadable: {e}"]
        if not lines:
            print(f"OK   {name}")
            continue
        failed += 1
        print(f"DIFF {name} ({len(lines)} difference{'s' if len(lines) > 1 else ''})")
        shown = lines if args.max_diffs <= 0 else lines[: args.max_diffs]
        for line in shown:
            print(f"  {line}")
        if len(shown) < len(lines):
            print(f"  ... {len(lines) - len(shown)} more (--max-diffs 0 shows all)")
    print(f"{len(names) - failed} of {len(names)} files identical" + (f", {failed} differ" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
