"""What every spec kind shares: the strict pydantic base, the one-line SpecError (file, field path, value, what is
allowed), cross-field Problems, check-id rules, the YAML reader and pydantic-error formatting. The kinds
(engine/kinds/) import it; it imports none of them."""
from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from algorithms.registry import choice_message
from verifiers.claims import CLAIMS
from verifiers.threat_models import CHANGES, UNITS, Neighbouring

Verdict = Literal["pass", "fail", "inconclusive", "inapplicable"]
RESULTS_SCHEMA = 2      # version of the results JSON; `report` reads 1 and 2 (engine/kinds/__init__.py upgrade_results)


class SpecError(Exception):
    """One line: file, field path, value, what is allowed."""

    def __init__(self, file: str, path: str, message: str):
        line = f"{file}: {path}: {message}" if path else f"{file}: {message}"
        super().__init__(_one_line(line))
        self.parts = (file, path, message)

    def __reduce__(self):            # survives the trip back from a worker process
        return (SpecError, self.parts)


def _one_line(text: str) -> str:
    """Control characters (a newline in a key, a record separator) shown escaped: an error stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class Strict(BaseModel):
    """Frozen, unknown keys refused, no inf or NaN, and strict types: no string or boolean is read as a number
    (``seed: true`` or ``d: "5"`` are errors); an integer is a valid float."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class NeighbouringSpec(Strict):
    """A spec's neighbouring relation (``neighbouring:``): which unit changes, how, and for a user or an element
    replaced whether the user keeps its total count (seed 002, note P3)."""

    unit: Literal["record", "user", "element"] = Field(description="; ".join(f"{k}: {v}" for k, v in UNITS.items()))
    change: Literal["replace_one", "add_remove"] = Field(description="; ".join(f"{k}: {v}" for k, v in CHANGES.items()))
    keep_count: bool | None = Field(None, description="a user or an element replaced: whether the changed user keeps "
                                                      "its total count m (seed 002's Lemmas 3.1-3.2 assume it; the "
                                                      "seed leaves open whether neighbours must); absent otherwise")

    @model_validator(mode="after")
    def _valid(self) -> NeighbouringSpec:
        try:
            _ = self.relation
        except ValueError as e:
            raise Problem("keep_count", str(e)) from None
        return self

    @property
    def relation(self) -> Neighbouring:
        return Neighbouring(self.unit, self.change, self.keep_count)


class Problem(ValueError):
    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path = path


MAX_SWEEP_POINTS = 200       # sweep values of one spec (a sweep is a curve, not a grid search)


def SweepValues():  # noqa: N802 (a field factory, used like pydantic's Field)
    """The ``values`` field of a sweep: 2 to MAX_SWEEP_POINTS distinct numbers (a repeated value would make two
    identical points that count twice in every fit)."""
    return Field(min_length=2, max_length=MAX_SWEEP_POINTS, description=f"2 to {MAX_SWEEP_POINTS} distinct values")


def distinct(values: list[float]) -> list[float]:
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"{', '.join(f'{v:g}' for v in repeated)} appear(s) more than once: each point once")
    return values


def known_claims(ids: list[str]) -> list[str]:
    """A check's cited claims: ids of verifiers/claims.py, exactly as ../shared/notes/inventory.md writes them."""
    for i in ids:
        if i not in CLAIMS:
            raise ValueError(choice_message("claim id (`python -m engine claims --list`)", i, list(CLAIMS)))
    if len(set(ids)) != len(ids):
        raise ValueError("a claim is listed twice")
    return ids


ClaimIds = Annotated[list[str], AfterValidator(known_claims)]


def check_ids(checks, expect: dict, expect_quick: dict) -> list[str]:
    """The checks' ids, distinct, and every expect / expect_quick key one of them (raises Problem)."""
    ids = [c.id for c in checks]
    if len(set(ids)) != len(ids):
        raise Problem("checks", f"duplicate check ids in {ids}")
    for field_name, table in (("expect", expect), ("expect_quick", expect_quick)):
        for key in table:
            if key not in ids:
                raise Problem(f"{field_name}.{key}", choice_message(f"{field_name} key (a check id)", key, ids))
    return ids


MAX_SPEC_BYTES = 1 << 20      # a spec is a page of YAML; anything larger (or endless, like /dev/zero) is refused unread


class SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader with two changes: a key given twice in one mapping is an error (PyYAML keeps the last),
    and scientific notation without a dot (1e-5, 2E+3) is a float as in YAML 1.2 (PyYAML's YAML 1.1 reads a string),
    so the spec models can be strict (no silent string or boolean conversions)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} appears twice (first on line {seen[key] + 1})", key_node.start_mark)
            if isinstance(key, (str, int, float, bool)):
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


SpecLoader.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+$"),
                                 list("-+0123456789"))


def read_yaml(path: str | Path) -> Any:
    """The YAML document at ``path`` (safe loader, duplicate keys refused, at most MAX_SPEC_BYTES), or a one-line
    SpecError."""
    p = Path(path)
    try:
        if p.is_dir():
            raise SpecError(str(p), "", "is a folder, not a spec file")
        with p.open("rb") as f:
            data = f.read(MAX_SPEC_BYTES + 1)
        if len(data) > MAX_SPEC_BYTES:
            raise SpecError(str(p), "", f"is larger than {MAX_SPEC_BYTES >> 10} KiB: not a spec")
        return yaml.load(data.decode("utf-8"), Loader=SpecLoader)   # noqa: S506 (SpecLoader is a SafeLoader)
    except FileNotFoundError:
        raise SpecError(str(p), "", "no such file") from None
    except OSError as e:
        raise SpecError(str(p), "", f"cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise SpecError(str(p), "", "is not UTF-8 text") from None
    except RecursionError:
        raise SpecError(str(p), "", "is nested too deeply to be a spec") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "?"
        raise SpecError(str(p), "", f"not valid YAML ({where}): {getattr(e, 'problem', e)}") from None


Unions = dict[str, dict[str, type[BaseModel]]]     # a field holding a tagged union -> its models by tag


def format_error(err: Any, model: type[BaseModel], unions: Unions | None = None) -> tuple[str, str]:
    """(field path, message) for one pydantic error; ``unions`` names fields whose value is a union tagged by
    ``kind`` (pydantic puts the tag into the error's location; it is not a field)."""
    unions = unions or {}
    loc = [str(x) for x in err["loc"]]
    tagged = loc
    union = unions.get(loc[0], {}) if loc else {}
    if len(loc) > 1 and loc[1] in union:
        loc = loc[:1] + loc[2:]
    path = ".".join(loc)
    msg = err["msg"].removeprefix("Value error, ")
    field = next(iter(unions), "data")
    union = union or unions.get(field, {})
    if err["type"] == "union_tag_not_found":
        return f"{field}.kind", f"required field is missing; allowed: {', '.join(union)}"
    if err["type"] == "union_tag_invalid":
        return f"{field}.kind", choice_message(f"{field} kind", err.get("input", {}).get("kind") if isinstance(
            err.get("input"), dict) else err.get("input"), list(union))
    if err["type"] == "extra_forbidden":
        allowed = (sorted(union[tagged[1]].model_fields) if tagged[:1] == [field] and len(tagged) == 3
                   and tagged[1] in union else _fields_at(model, loc[:-1]))
        hint = difflib.get_close_matches(loc[-1], allowed, n=1)
        did = f" (did you mean {hint[0]!r}?)" if hint else ""
        return path, f"unknown key{did}; allowed keys: {', '.join(allowed)}"
    if err["type"] == "missing":
        return path, "required field is missing"
    value = err.get("input")
    shown = "" if isinstance(value, (dict, list)) else f" = {value!r}"
    return path, f"value{shown}: {msg}"


def _fields_at(model: type[BaseModel], loc: list[str]) -> list[str]:
    cur: Any = model
    for part in loc:
        field = getattr(cur, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        args = [a for a in getattr(ann, "__args__", ()) if isinstance(a, type) and issubclass(a, BaseModel)]
        cur = args[0] if args else ann
    return sorted(getattr(cur, "model_fields", {}))


def parse_model(model: type[BaseModel], raw: dict, file: str, unions: Unions | None = None):
    """Validate ``raw`` as ``model``; errors as one-line SpecErrors (a cross-field Problem raised inside a
    validator keeps its own field path)."""
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        errors = e.errors()
        first = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])
        if isinstance(first.get("ctx", {}).get("error"), Problem):
            prob = first["ctx"]["error"]
            raise SpecError(file, prob.path, str(prob)) from None
        path, msg = format_error(first, model, unions)
        raise SpecError(file, path, msg) from None


