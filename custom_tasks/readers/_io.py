"""Low-level file reading that keeps line (or Parquet row) numbers, so every error can point at its source.

All readers go through ``read_table`` / ``read_lines``. Both stream: rows are decoded and parsed one line (or
one Parquet batch) at a time when iterated, so memory does not grow with the file (a 200 MB corpus once
peaked at 3.26 GB when decoded whole); decoding problems become one clear ``CollectionError``.
"""

from __future__ import annotations

import contextlib
import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..errors import CollectionError, CollectionProblems, ProblemLog
from ._text import (MAX_JSON_DEPTH, TooDeep, _bad_row, _jsonl_rows, codec_for, display_path, iter_text_lines,  # noqa: F401
                    json_depth, loads_json, read_lines, require_file)
from ._json_csv import json_rows, sniff_delimiter  # .json arrays, sniffed .csv separators

csv.field_size_limit(2**31 - 1)  # long documents in one CSV cell are normal here

TABLE_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
                    ".parquet": "parquet", ".pq": "parquet"}


def resolve(base_dir: Path, value: str | Path) -> Path:
    """Config paths are relative to the YAML's folder; absolute and ~ paths are kept."""
    p = Path(value).expanduser()
    return p if p.is_absolute() else Path(base_dir) / p


@dataclass
class Table:
    """Rows of one tabular file with where each came from (line for text files, row for Parquet).

    ``columns`` is the header for CSV/TSV/Parquet; ``None`` for JSONL, where every row has its own keys.
    ``rows`` is re-iterable; from ``read_table`` each pass streams the file again (a bad row raises when reached).
    """

    path: Path
    kind: str
    columns: list[str] | None
    rows: Iterable[tuple[int, dict[str, Any]]]
    encoding: str = "utf-8"
    #: where row problems go when the whole collection is checked in one pass (None: the first one raises)
    log: ProblemLog | None = None
    #: the CSV/TSV separator (sniffed for .csv: ',' unless the header only splits on ';', tab or '|')
    delimiter: str = ","

    def checking(self) -> contextlib.AbstractContextManager[None]:
        """Around one row's checks: with a ``log`` its problem is recorded and the row skipped."""
        return self.log.row() if self.log is not None else contextlib.nullcontext()

    def record(self, e: CollectionError) -> None:
        """``checking`` for a caller's own ``except CollectionError as e``: recorded with a ``log``, else raised.

        The corpus's per-row loops use this: a ``try`` costs nothing until a row fails, while a context manager per
        row cost ~2 s per million rows twice over (issue 36, bench_scale)."""
        if self.log is None or isinstance(e, CollectionProblems):
            raise e
        self.log.add(e)

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
                if len(self.columns) == 1 and self.kind == "tsv":
                    hint = "; is the file comma-separated? a .tsv is read with tabs: name it .csv"
                elif len(self.columns) == 1 and self.kind == "csv":
                    hint = "; the header splits on none of ',', ';', tab, '|': check the separator"
                raise self.error(
                    1 if self.kind != "parquet" else None,
                    f"missing column {name!r} (columns found: {', '.join(self.columns) or 'none'}); "
                    f"map it with `{option}:` in the source{hint}",
                )

    def mapping_check(self, loc: int, row: dict[str, Any], names: list[str], first: bool) -> None:
        """On the first row of a JSONL file, a missing required field is a column-mapping mistake that every
        row would repeat: raised outside the per-row problem log (one line, not one per row)."""
        if first and self.columns is None:
            for name in names:
                self.get(loc, row, name)

    def get(self, loc: int, row: dict[str, Any], name: str) -> Any:
        """A required field; a JSONL row without it is an error at that line."""
        if name not in row:
            found = ", ".join(map(str, row)) or "none"
            raise self.error(loc, f"missing field {name!r} (fields found: {found})")
        return row[name]


def read_table(path: Path, encoding: str, what: str, allow_no_rows: bool = False,
               log: ProblemLog | None = None) -> Table:
    """JSONL, CSV, TSV or Parquet, chosen by the file extension; rows are streamed (see ``Table``).

    Only the start of the file is read here (header, and whether any row exists); ``allow_no_rows``:
    a header without rows is accepted (qrels: the caller reports the empty split). ``log``: a malformed row
    (bad JSON, wrong field count) is recorded there and skipped, so every one is reported in one pass.
    """
    kind = TABLE_EXTENSIONS.get(path.suffix.lower())
    if kind is None:
        raise CollectionError(
            display_path(path),
            f"cannot tell the format of {what} file from its extension {path.suffix!r} "
            f"(use one of: {', '.join(sorted(TABLE_EXTENSIONS))})",
        )
    require_file(path, what)
    if kind == "parquet":
        t = _read_parquet(path, what, allow_no_rows)
        t.log = log
        return t
    codec_for(path, encoding)
    if kind in ("jsonl", "json"):
        fn = _jsonl_rows if kind == "jsonl" else json_rows
        rows: Iterable[tuple[int, dict[str, Any]]] = _Rows(fn, path, encoding, what, log)
        return Table(path, kind, None, _peeked(rows, path, f"{what} file is empty"), encoding, log)
    delimiter = "\t" if kind == "tsv" else sniff_delimiter(path, encoding)
    records = _delimited_records(path, encoding, kind, delimiter)
    first = next(records, None)
    records.close()
    if first is None:
        raise CollectionError(display_path(path), f"{what} file is empty")
    header = [h.strip() for h in first[1]]
    rows = _Rows(_delimited_rows, path, encoding, kind, header, log, delimiter)
    if not allow_no_rows:
        rows = _peeked(rows, path, f"{what} file is empty (no rows below the header)")
    return Table(path, kind, header, rows, encoding, log, delimiter)


class _Rows:
    """A re-iterable row source: each iteration reads the file again from the start, streaming."""

    def __init__(self, fn: Callable[..., Iterator[tuple[int, dict[str, Any]]]], *args: Any) -> None:
        self.fn, self.args = fn, args

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        return self.fn(*self.args)


def _peeked(rows: _Rows, path: Path, empty: str) -> _Rows:
    """Check now that at least one row exists (the old eager readers failed early on empty files)."""
    it = iter(rows)
    if next(it, None) is None:
        raise CollectionError(display_path(path), empty)
    it.close()  # type: ignore[attr-defined]
    return rows


def _delimited_records(path: Path, encoding: str, kind: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """Non-blank CSV/TSV records with the line each starts on (a quoted cell may span lines)."""
    reader = csv.reader(iter_text_lines(path, encoding, ""), delimiter=delimiter)
    last = 0
    try:
        for rec in reader:
            start, last = last + 1, reader.line_num
            if not rec or (len(rec) == 1 and not rec[0].strip()):
                continue
            yield start, rec
    except csv.Error as e:
        raise CollectionError(display_path(path), f"cannot parse {kind.upper()}: {e}", line=reader.line_num) from None


def _delimited_rows(path: Path, encoding: str, kind: str, header: list[str],
                    log: ProblemLog | None = None, delimiter: str = ",") -> Iterator[tuple[int, dict[str, Any]]]:
    records = _delimited_records(path, encoding, kind, delimiter)
    next(records)  # the header
    for start, rec in records:
        if len(rec) != len(header):
            _bad_row(log, CollectionError(
                display_path(path),
                f"found {len(rec)} fields but the header has {len(header)} ({', '.join(header)}); "
                f"quote fields that contain the separator",
                line=start,
            ))
            continue
        yield start, dict(zip(header, rec))


def _read_parquet(path: Path, what: str, allow_no_rows: bool) -> Table:
    import pyarrow.parquet as pq  # local: only Parquet users pay the import

    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises several types for corrupt files
        raise CollectionError(display_path(path), f"cannot read Parquet file: {e}") from None
    if pf.metadata.num_rows == 0 and not allow_no_rows:
        raise CollectionError(display_path(path), f"{what} file is empty (no rows)")
    return Table(path, "parquet", list(pf.schema_arrow.names), _Rows(_parquet_rows, path))


def _parquet_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow.parquet as pq

    n = 0
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=8192):
            for row in batch.to_pylist():
                n += 1
                yield n, row
    except OSError as e:
        raise CollectionError(display_path(path), f"cannot read Parquet file: {e}") from None


def count_rows_upper_bound(path: Path) -> int:
    """At least the number of rows (lines for text files, rows for Parquet), cheaply: sizes the corpus store."""
    if TABLE_EXTENSIONS.get(path.suffix.lower()) == "parquet":
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    if TABLE_EXTENSIONS.get(path.suffix.lower()) == "json":  # an array may be on one line: '{}' per row at least
        return path.stat().st_size // 2 + 1
    n = 1
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            n += chunk.count(b"\n")
    return n


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
