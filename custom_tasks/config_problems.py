"""Every problem of a config file, each with its line and a "did you mean" for a misspelt key.

pydantic reports all errors of a document at once; `problems` turns them into ("file:line: problem")
entries for `ConfigProblems` (errors.py), which shows up to 20 of them and counts the rest. A key that is
unknown and close to a known one (``pth:`` for ``path:``) is reported as "unknown key 'pth' (did you mean
'path'?)", and the "missing key 'path'" it causes is not reported a second time.
"""

from __future__ import annotations

import difflib
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Sequence, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from .errors import ConfigError, ConfigProblems
from .yaml_io import line_at

Problem = tuple[int | None, str]


def _model(ann: Any) -> type[BaseModel] | None:
    return ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _step(ann: Any, part: str | int) -> Any:
    """The annotation one location step below ``ann`` (None when it cannot be told)."""
    origin, args = get_origin(ann), get_args(ann)
    if origin is Annotated:
        return _step(args[0], part)
    if origin in (Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        for m in members:  # a tagged union names the member by its `type:` value
            tag = _model(m) and _model(m).model_fields.get("type")
            if tag is not None and get_origin(tag.annotation) is Literal and get_args(tag.annotation) == (part,):
                return m
        return next((s for s in (_step(m, part) for m in members) if s is not None), None)
    model = _model(ann)
    if model is not None:
        field = model.model_fields.get(str(part))
        return field.annotation if field is not None else None
    if origin in (list, tuple) and isinstance(part, int) and args:
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None


def keys_at(root: Any, loc: Sequence[str | int]) -> list[str]:
    """The keys a mapping at ``loc`` below ``root`` (a pydantic model or annotation) may have."""
    ann = root
    for part in loc:
        ann = _step(ann, part)
        if ann is None:
            return []
    while get_origin(ann) is Annotated or (get_origin(ann) in (Union, types.UnionType)):
        members = [a for a in get_args(ann) if a is not type(None)]
        ann = members[0] if len(members) == 1 or get_origin(ann) is Annotated else None
    model = _model(ann)
    return list(model.model_fields) if model is not None else []


def did_you_mean(key: str, known: Sequence[str]) -> str:
    """' (did you mean 'path'?)' for a key close to a known one, else ''."""
    near = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{near[0]}'?)" if near else ""


def messages(e: ValidationError, root: Any = None, skip: int = 0) -> list[tuple[tuple[str | int, ...], str, bool]]:
    """(location, message, about-the-key) per error, in pydantic's order; ``skip`` location parts are dropped
    from what is shown (e.g. the tag of a tagged union)."""
    out, suggested = [], set()
    errors = e.errors()
    for err in errors:  # unknown keys first: they explain the missing ones
        if err["type"] != "extra_forbidden":
            continue
        loc = tuple(err["loc"])
        shown = ".".join(map(str, loc[skip:]))
        hint = did_you_mean(str(loc[-1]), keys_at(root, loc[:-1])) if root is not None else ""
        if hint:
            suggested.add(loc[:-1] + (hint.split("'")[1],))
        out.append((loc, f"unknown key '{shown}'{hint}", True))
    for err in errors:
        loc = tuple(err["loc"])
        shown = ".".join(map(str, loc[skip:])) or "<root>"
        if err["type"] == "extra_forbidden":
            continue
        if err["type"] == "missing":
            if loc not in suggested:
                out.append((loc, f"missing key '{shown}'", False))
            continue
        msg = str(err["msg"]).removeprefix("Value error, ")
        field = shown.split(".")[0]
        if not loc[skip:] or (err["type"] == "value_error" and msg.startswith((field + " ", field + ":", field + "."))):
            out.append((loc, msg, False))  # our own validators name the key already
        else:
            out.append((loc, f"{shown}: {msg}", False))
    return out


def problems(e: ValidationError, root: Any = None, node: Any = None, prefix: Sequence[str | int] = (),
             skip: int = 0, where: str = "") -> list[Problem]:
    """(line, message) per error; ``node``: the composed YAML of the validated mapping, found at ``prefix``
    below the file's root; ``where`` is put in front of each message (e.g. 'experiments[2] (growth): ')."""
    return [(line_at(node, [*prefix, *loc[skip:]], key=is_key), where + msg)
            for loc, msg, is_key in messages(e, root, skip)]


def raise_problems(path: str | Path | None, found: list[Problem]) -> None:
    """Nothing when ``found`` is empty; one ConfigError for one problem, every one (capped) for several."""
    if len(found) == 1:
        raise ConfigError(path, found[0][1], found[0][0])
    if found:
        raise ConfigProblems(path, found)
