"""Low-level file reading that keeps line (or Parquet row) numbers, so every error can point at its source.

All readers go through ``read_table`` / ``read_lines``: they decode the whole file at once (fast: SciFact's
corpus loads in well under a second) and turn decoding problems into one clear ``CollectionError``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CollectionError

csv.field_size_limit(2**31 - 1)  # long documents in one CSV cell are normal here

TABLE_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv",
                    ".parquet": "parquet", ".pq": "parquet"}


def display_path(path: Path) -> str:
    """Path as shown in messages: relative to the working directory when inside it, else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def resolve(base_dir: Path, value: str | Path) -> Path:
    """Config paths are relative to the YAML's folder; absolute and ~ paths are kept."""
    p = Path(value).expanduser()
    return p if p.is_absolute() else Path(base_dir) / p


def require_file(path: Path, what: str) -> None:
    if not path.exists():
        raise CollectionError(display_path(path), f"{what} file not found")
    if not path.is_file():
        raise CollectionError(display_path(path), f"{what} path is not a file")


def read_text(path: Path, encoding: str, what: str = "input") -> str:
    """Decode a whole file; bad bytes become an error naming the line and suggesting ``encoding:``."""
    require_file(path, what)
    data = path.read_bytes()
    codec = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    try:
        text = data.decode(codec)
    except LookupError:
        raise CollectionError(display_path(path), f"unknown encoding {encoding!r} (e.g. encoding: utf-8)") from None
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        bad = data[e.start:e.start + 1].hex()
        raise CollectionError(
            display_path(path),
            f"byte 0x{bad} is not valid {encoding}; the file is probably in another encoding "
            f"(e.g. latin-1 or cp1252): add `encoding: latin-1` (or the right one) to the source",
            line=line,
        ) from None
    if not text.strip():
        raise CollectionError(display_path(path), f"{what} file is empty")
    return text


def read_lines(path: Path, encoding: str, what: str = "input") -> list[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers. Splits on '\\n' only (JSON may hold U+2028)."""
    text = read_text(path, encoding, what)
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if line.strip():
            out.append((i, line))
    return out


@dataclass
class Table:
    """Rows of one tabular file with where each came from (line for text files, row for Parquet).

    ``columns`` is the header for CSV/TSV/Parquet; ``None`` for JSONL, where every row has its own keys.
    """

    path: Path
    kind: str
    columns: list[str] | None
    rows: list[tuple[int, dict[str, Any]]]

    @property
    def shown(self) -> str:
        return display_path(self.path)

    def where(self, loc: int) -> str:
        return f"row {loc}" if self.kind == "parquet" else f"line {loc}"

    def error(self, loc: int | None, problem: str) -> CollectionError:
        if loc is not None and self.kind == "parquet":
            return CollectionError(self.shown, f"row {loc}: {problem}")
        return CollectionError(self.shown, problem, line=loc)

    def has_column(self, name: str) -> bool:
        if self.columns is not None:
            return name in self.columns
        return any(name in row for _, row in self.rows)

    def require_columns(self, names: list[str], option: str = "columns") -> None:
        """Header check for CSV/TSV/Parquet (JSONL rows are checked one by one in ``get``)."""
        if self.columns is None:
            return
        for name in names:
            if name not in self.columns:
                hint = ""
                if len(self.columns) == 1 and self.kind in ("csv", "tsv"):
                    other = "tab" if self.kind == "csv" else "comma"
                    hint = f"; is the file {other}-separated? the extension decides"
                raise self.error(
                    1 if self.kind != "parquet" else None,
                    f"missing column {name!r} (columns found: {', '.join(self.columns) or 'none'}); "
                    f"map it with `{option}:` in the source{hint}",
                )

    def get(self, loc: int, row: dict[str, Any], name: str) -> Any:
        """A required field; a JSONL row without it is an error at that line."""
        if name not in row:
            found = ", ".join(map(str, row)) or "none"
            raise self.error(loc, f"missing field {name!r} (fields found: {found})")
        return row[name]


def read_table(path: Path, encoding: str, what: str, allow_no_rows: bool = False) -> Table:
    """Read JSONL, CSV, TSV or Parquet, chosen by the file extension.

    ``allow_no_rows``: a header without rows is accepted (qrels: the caller reports the empty split).
    """
    kind = TABLE_EXTENSIONS.get(path.suffix.lower())
    if kind is None:
        raise CollectionError(
            display_path(path),
            f"cannot tell the format of {what} file from its extension {path.suffix!r} "
            f"(use one of: {', '.join(sorted(TABLE_EXTENSIONS))})",
        )
    if kind == "jsonl":
        return _read_jsonl(path, encoding, what)
    if kind == "parquet":
        return _read_parquet(path, what, allow_no_rows)
    return _read_delimited(path, encoding, what, kind, allow_no_rows)


def _read_jsonl(path: Path, encoding: str, what: str) -> Table:
    rows = []
    loads = json.loads
    for lineno, line in read_lines(path, encoding, what):
        try:
            obj = loads(line)
        except json.JSONDecodeError as e:
            raise CollectionError(display_path(path), f"malformed JSON: {e.msg} (column {e.colno})",
                                  line=lineno) from None
        if not isinstance(obj, dict):
            raise CollectionError(display_path(path), f"expected a JSON object per line, got {type(obj).__name__}",
                                  line=lineno)
        rows.append((lineno, obj))
    return Table(path, "jsonl", None, rows)


def _read_delimited(path: Path, encoding: str, what: str, kind: str, allow_no_rows: bool) -> Table:
    text = read_text(path, encoding, what)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t" if kind == "tsv" else ",")
    header: list[str] | None = None
    rows = []
    last = 0
    try:
        for rec in reader:
            start, last = last + 1, reader.line_num
            if not rec or (len(rec) == 1 and not rec[0].strip()):
                continue
            if header is None:
                header = [h.strip() for h in rec]
                continue
            if len(rec) != len(header):
                raise CollectionError(
                    display_path(path),
                    f"found {len(rec)} fields but the header has {len(header)} ({', '.join(header)}); "
                    f"quote fields that contain the separator",
                    line=start,
                )
            rows.append((start, dict(zip(header, rec))))
    except csv.Error as e:
        raise CollectionError(display_path(path), f"cannot parse {kind.upper()}: {e}", line=reader.line_num) from None
    if header is None or (not rows and not allow_no_rows):
        raise CollectionError(display_path(path), f"{what} file is empty (no rows below the header)")
    return Table(path, kind, header, rows)


def _read_parquet(path: Path, what: str, allow_no_rows: bool) -> Table:
    require_file(path, what)
    import pyarrow.parquet as pq  # local: only Parquet users pay the import

    try:
        table = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for corrupt files
        raise CollectionError(display_path(path), f"cannot read Parquet file: {e}") from None
    if table.num_rows == 0 and not allow_no_rows:
        raise CollectionError(display_path(path), f"{what} file is empty (no rows)")
    rows = [(i, row) for i, row in enumerate(table.to_pylist(), 1)]
    return Table(path, "parquet", list(table.column_names), rows)


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def as_id(value: Any) -> str:
    """Ids are strings; numbers become '12' (never '12.0'); missing becomes ''."""
    if is_missing(value):
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def as_text(value: Any) -> str:
    """Tag values: missing becomes '', anything else its ``str`` (numbers and lists are fine as tags)."""
    if is_missing(value):
        return ""
    return value if isinstance(value, str) else str(value)


_KINDS = {bool: "a boolean", int: "a number", float: "a number", list: "a list", tuple: "a list", dict: "an object"}


def as_str(table: Table, loc: int, value: Any, owner: str, owner_id: Any, field: str) -> str:
    """A text value (document text, title, query): missing becomes ''; a non-string is an error.

    CSV/TSV cells are always strings, so this only bites JSONL/Parquet, where ``"text": 42`` or a list is a
    mistake in the export: silently embedding ``"42"`` or ``"['a', 'b']"`` would score the wrong text.
    """
    if is_missing(value):
        return ""
    if isinstance(value, str):
        return value
    kind = _KINDS.get(type(value), f"a {type(value).__name__}")
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    raise table.error(loc, f"{owner} {as_id(owner_id)!r}: field {field!r} is {kind} ({shown}), not a string")
