"""Decoding and JSON primitives every reader shares: lines with their numbers, clear decode errors, bounded
JSON nesting, JSON Lines rows. Apart from ``_io`` so the .json/.csv sniffing module can use them without a cycle."""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path
from typing import Any, Iterator

from ..errors import CollectionError, ProblemLog


def display_path(path: Path) -> str:
    """Path as shown in messages: relative to the working directory when inside it, else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def require_file(path: Path, what: str) -> None:
    if not path.exists():
        raise CollectionError(display_path(path), f"{what} file not found")
    if not path.is_file():
        raise CollectionError(display_path(path), f"{what} path is not a file")


def codec_for(path: Path, encoding: str) -> str:
    """The Python codec of an ``encoding:`` value (UTF-8 drops a leading BOM); unknown ones are an error."""
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    try:
        codecs.lookup(codec)
    except LookupError:
        raise CollectionError(display_path(path), f"unknown encoding {encoding!r} (e.g. encoding: utf-8)") from None
    return codec


def iter_text_lines(path: Path, encoding: str, newline: str) -> Iterator[str]:
    """Decoded lines streamed from disk (memory independent of the file size), line endings kept.

    ``newline="\\n"`` splits on '\\n' only (JSON may hold U+2028); ``""`` is what the csv module wants.
    Bad bytes become an error naming the line and suggesting ``encoding:``.
    """
    codec = codec_for(path, encoding)
    try:
        with open(path, encoding=codec, newline=newline) as f:
            yield from f
    except UnicodeDecodeError:
        raise _decode_error(path, encoding, codec) from None


def _decode_error(path: Path, encoding: str, codec: str) -> CollectionError:
    """Find the first undecodable byte again, line by line in binary (only on the error path)."""
    line, bad = _first_bad_byte(path, codec)
    return CollectionError(
        display_path(path),
        f"byte 0x{bad} is not valid {encoding}; the file is probably in another encoding "
        f"(e.g. latin-1 or cp1252): add `encoding: latin-1` (or the right one) to the source",
        line=line,
    )


def _first_bad_byte(path: Path, codec: str) -> tuple[int, str]:
    rest = "utf-8" if codec == "utf-8-sig" else codec
    if "\n".encode(rest) == b"\n":  # ASCII-compatible: a line never splits a character
        with open(path, "rb") as f:
            for lineno, raw in enumerate(f, 1):
                try:
                    raw.decode(codec if lineno == 1 else rest)
                except UnicodeDecodeError as e:
                    return lineno, raw[e.start:e.start + 1].hex()
    data = path.read_bytes()  # UTF-16/32: decode the whole (small, hand-exported) file to place the byte
    try:
        data.decode(codec)
    except UnicodeDecodeError as e:
        return data.count(b"\n", 0, e.start) + 1, data[e.start:e.start + 1].hex()
    return 1, "??"


def read_lines(path: Path, encoding: str, what: str = "input") -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers, streamed; splits on '\\n' only; an empty file is an error."""
    require_file(path, what)
    seen = False
    for i, line in enumerate(iter_text_lines(path, encoding, "\n"), 1):
        line = line[:-1] if line.endswith("\n") else line
        line = line.rstrip("\r")
        if line.strip():
            seen = True
            yield i, line
    if not seen:
        raise CollectionError(display_path(path), f"{what} file is empty")


#: JSON nested deeper than this is an input error (a row is a flat record; Python's parser recurses)
MAX_JSON_DEPTH = 100


class TooDeep(ValueError):
    """JSON nested deeper than MAX_JSON_DEPTH."""


def json_depth(obj: Any) -> int:
    """How deeply lists and objects nest in a parsed JSON value (a plain value: 0), without recursion."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def loads_json(text: str) -> Any:
    """``json.loads`` that refuses nesting beyond MAX_JSON_DEPTH with TooDeep (never RecursionError).

    Only a text holding more brackets than the limit is measured, so ordinary rows cost two counts."""
    try:
        obj = json.loads(text)
    except RecursionError:
        raise TooDeep(f"JSON nested more than {MAX_JSON_DEPTH} levels deep") from None
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and json_depth(obj) > MAX_JSON_DEPTH:
        raise TooDeep(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    return obj


def _bad_row(log: ProblemLog | None, e: CollectionError) -> None:
    """A malformed row: recorded and skipped with a log, else the error."""
    if log is None:
        raise e
    log.add(e)


def _jsonl_rows(path: Path, encoding: str, what: str,
                log: ProblemLog | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    loads = loads_json
    for lineno, line in read_lines(path, encoding, what):
        try:
            obj = loads(line)
        except json.JSONDecodeError as e:
            _bad_row(log, CollectionError(display_path(path), f"malformed JSON: {e.msg} (column {e.colno})",
                                          line=lineno))
            continue
        except TooDeep as e:
            _bad_row(log, CollectionError(display_path(path), f"{e}: a row is a flat record of fields", line=lineno))
            continue
        if not isinstance(obj, dict):
            _bad_row(log, CollectionError(display_path(path), f"expected a JSON object per line, got "
                                          f"{type(obj).__name__}", line=lineno))
            continue
        yield lineno, obj


