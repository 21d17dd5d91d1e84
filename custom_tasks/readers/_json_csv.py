"""Two shapes of export that teams ship and `init` must read (issue 29): top-level JSON arrays, and CSV files
separated by ';' (European spreadsheets), tab or '|' under a .csv name. Split from ``_io`` for size."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any, Iterator

from ..errors import CollectionError, ProblemLog
from ._text import MAX_JSON_DEPTH, _bad_row, _jsonl_rows, display_path, iter_text_lines, json_depth

#: separators tried when a .csv header does not split on ',' (European spreadsheets write ';')
OTHER_SEPARATORS = ";\t|"


def sniff_delimiter(path: Path, encoding: str) -> str:
    """',' unless the header of a .csv does not split on it and does on ';', tab or '|' (``csv.Sniffer`` picks
    among those on the first lines). A comma CSV with two or more columns is therefore never re-read."""
    sample = ""
    for line in iter_text_lines(path, encoding, ""):
        sample += line
        if len(sample) > 1 << 16 or sample.count("\n") >= 20:
            break
    header = next(csv.reader(io.StringIO(sample)), [])
    if len(header) != 1:
        return ","
    try:
        found = csv.Sniffer().sniff(sample, delimiters=OTHER_SEPARATORS).delimiter
    except csv.Error:  # rows disagree (a bad row, reported later at its line): the header decides
        found = max(OTHER_SEPARATORS, key=lambda d: len(next(csv.reader(io.StringIO(sample), delimiter=d), [])))
    return found if len(next(csv.reader(io.StringIO(sample), delimiter=found), [])) > 1 else ","


_WS = re.compile(r"[ \t\n\r]*")


def json_rows(path: Path, encoding: str, what: str,
               log: ProblemLog | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """A ``.json`` file: a top-level array of objects (each row numbered by the line it starts on), or JSON
    Lines under a .json name. The array is decoded whole (``json.JSONDecoder.raw_decode`` element by element):
    a large corpus belongs in JSONL or Parquet, which stream."""
    text = "".join(iter_text_lines(path, encoding, "\n"))
    i = _WS.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("[", i):
        yield from _jsonl_rows(path, encoding, what, log)
        return
    if not text[i + 1:].strip():
        raise CollectionError(display_path(path), "malformed JSON: the array is never closed", line=1)
    decoder, line, pos, i = json.JSONDecoder(), 1, 0, i + 1
    while True:
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if text.startswith("]", i):
            return
        line, pos = line + text.count("\n", pos, i), i
        try:
            obj, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError as e:  # the rest of an array cannot be told apart: one error, no resync
            raise CollectionError(display_path(path), f"malformed JSON: {e.msg} (column {e.colno})",
                                  line=e.lineno) from None
        except RecursionError:
            raise CollectionError(display_path(path), f"JSON nested more than {MAX_JSON_DEPTH} levels deep: a row "
                                  "is a flat record of fields", line=line) from None
        if not isinstance(obj, dict):
            _bad_row(log, CollectionError(display_path(path), f"expected a JSON object per array element, got "
                                          f"{type(obj).__name__}", line=line))
        elif json_depth(obj) > MAX_JSON_DEPTH:
            _bad_row(log, CollectionError(display_path(path), f"JSON nested more than {MAX_JSON_DEPTH} levels deep: "
                                          "a row is a flat record of fields", line=line))
        else:
            yield line, obj
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if text.startswith(",", i):
            i += 1
        elif not text.startswith("]", i):
            raise CollectionError(display_path(path), "malformed JSON: expected ',' or ']' after an array element",
                                  line=line + text.count("\n", pos, i))


