"""A query log read in chunks: which column holds what, and the (query, count) rows, never the whole file at once.

Logs are large (millions of rows) and personal: this module reads only the columns it needs (the query text, an
optional count and timestamp) a chunk at a time, through pandas/pyarrow's own chunked readers, so memory stays
bounded by the chunk, not the log. The user and session columns are recognised only so the report can say they
were left unread: they are never loaded, so they can never be written or shown.

Column roles are found by name as `init` finds them (runners/config/init_columns.py), and the query column, when
no name says which, from the values (init_roles.question: the one text column).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from custom_tasks.errors import CollectionError

from ...config.init_columns import (LOG_COUNT, LOG_QUERY, LOG_TIME, LOG_USER, TABLES, columns_of, norm_name, pick,
                                    sample)

#: rows per chunk: ~100 MB of pandas objects at most for short queries, and few enough calls to stay fast
CHUNK_ROWS = 200_000


@dataclass(frozen=True)
class LogColumns:
    """The log's columns by role; ``how`` says why each was taken (printed), ``unread`` lists the personal ones."""

    kind: str  # csv | tsv | jsonl | parquet
    query: str
    count: str | None = None
    time: str | None = None
    unread: tuple[str, ...] = ()  # user / session / ip columns: recognised, never read
    how: dict[str, str] = field(default_factory=dict)
    delimiter: str = ","

    def describe(self) -> str:
        """One line: 'query: search_term (by name); count: hits (by name); not read: user_id, session'."""
        parts = [f"{role}: {col} ({self.how.get(role, 'given')})" for role, col in
                 (("query", self.query), ("count", self.count), ("time", self.time)) if col]
        if self.count is None:
            parts.append("count: none (each row is one search)")
        if self.unread:
            parts.append("never read (personal): " + ", ".join(self.unread))
        return "; ".join(parts)


def log_kind(path: Path) -> str:
    """csv/tsv/jsonl/parquet from the file's suffix; anything else is one line saying what is read."""
    kind = TABLES.get(path.suffix.lower())
    if kind not in {"csv", "tsv", "jsonl", "parquet"}:
        raise CollectionError(path, "a query log must be .csv, .tsv, .jsonl or .parquet (a .json array cannot be "
                                    "read in chunks: write one JSON object per line, .jsonl)")
    return kind


def detect_columns(path: Path, query: str | None = None, count: str | None = None,
                   time: str | None = None) -> LogColumns:
    """The roles of ``path``'s columns: the given names (checked), else by name as `init` does, else the query
    column from the values. One line naming the columns found when no query column can be told."""
    if not path.is_file():
        raise CollectionError(path, "query log not found")
    kind = log_kind(path)
    rows = sample(path)
    cols = columns_of(rows)
    if not cols:
        raise reader_problem(path) or CollectionError(path, "no rows could be read: is it a table with a header "
                                                            "(CSV/TSV) or one JSON object per line (JSONL)?")
    for role, given in (("query", query), ("count", count), ("time", time)):
        if given is not None and given not in cols:
            raise CollectionError(path, f"--{role}-column {given!r} is not a column (columns: {', '.join(cols)})")
    how: dict[str, str] = {}
    unread = tuple(c for c in cols if norm_name(c) in LOG_USER and c not in (query, count, time))
    found_query = query or pick(cols, LOG_QUERY, exclude=unread)
    if found_query and not query:
        how["query"] = "by name"
    if found_query is None:
        from ...config.init_roles import profiles, question

        guess = question(profiles(rows), set(unread))
        if guess.column is None:
            tied = f" (equally likely: {', '.join(guess.tied)})" if guess.tied else ""
            raise CollectionError(path, f"no query column found{tied} among: {', '.join(cols)}: name it with "
                                        "--query-column")
        found_query, how["query"] = guess.column, guess.how
    found_count = count or pick(cols, LOG_COUNT, exclude=(found_query, *unread))
    if found_count and not count:
        how["count"] = "by name"
    found_time = time or pick(cols, LOG_TIME, exclude=(found_query, *unread))
    if found_time and not time:
        how["time"] = "by name"
    delimiter = "\t" if kind == "tsv" else ","
    if kind == "csv":
        from custom_tasks.readers._json_csv import sniff_delimiter

        delimiter = sniff_delimiter(path, "utf-8")
    return LogColumns(kind, found_query, found_count, found_time, unread, how, delimiter)


def _chunks(path: Path, cols: LogColumns, chunk_rows: int) -> Iterator[pd.DataFrame]:
    """The needed columns only, ``chunk_rows`` rows at a time, every value read as text (no type guessing)."""
    wanted = [c for c in (cols.query, cols.count, cols.time) if c]
    if cols.kind == "parquet":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=chunk_rows, columns=wanted):
            yield batch.to_pandas()
    elif cols.kind == "jsonl":
        with pd.read_json(path, lines=True, chunksize=chunk_rows, dtype=False, encoding="utf-8") as reader:
            for frame in reader:
                yield frame.reindex(columns=wanted)
    else:
        yield from pd.read_csv(path, sep=cols.delimiter, usecols=wanted, dtype=str, keep_default_na=False,
                               chunksize=chunk_rows, encoding="utf-8")


def _readable(path: Path, cols: LogColumns, chunk_rows: int) -> Iterator[pd.DataFrame]:
    """``_chunks``, a file the parser cannot read (a broken quote, bad JSON, not Parquet) as one line."""
    try:
        yield from _chunks(path, cols, chunk_rows)
    except CollectionError:
        raise
    except (ValueError, UnicodeDecodeError) as e:  # pandas' ParserError, JSON and Arrow errors are ValueErrors
        why = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
        raise reader_problem(path) or CollectionError(path, f"cannot be read as {cols.kind.upper()}: {why}") from None


def _not_a_count(number: float) -> str:
    """What a bad count cell is, without its value (a wrongly named column may hold e-mail addresses)."""
    if number != number:  # NaN: not a number at all
        return "text, not a number"
    return "a negative number" if number < 0 else "a fraction"


def reader_problem(path: Path) -> CollectionError | None:
    """The collection readers' own one line for a log pandas or detection could not read: the file line and why
    (an undecodable byte, a malformed JSON line, not Parquet), which pandas' message does not name. Reads the
    whole file again, on the error path only. A log is read as UTF-8 (there is no source YAML to name another
    encoding in), so the readers' hint is replaced by converting the file."""
    from custom_tasks.readers._io import read_table

    try:
        for _ in read_table(path, "utf-8", "query log").rows:
            pass
    except CollectionError as e:
        problem = re.sub(r": add `encoding: .*$", ": convert the log to UTF-8 first (e.g. `iconv -f latin1 -t utf-8`)",
                         e.problem)
        return CollectionError(e.path, problem, line=e.line)
    return None


@dataclass
class LogSpan:
    """The first and last timestamp seen (ISO dates; None without a time column or parsable values)."""

    first: pd.Timestamp | None = None
    last: pd.Timestamp | None = None

    def see(self, values: pd.Series) -> None:
        times = pd.to_datetime(values, errors="coerce", utc=True, format="ISO8601").dropna()
        if len(times):
            lo, hi = times.min(), times.max()
            self.first = lo if self.first is None else min(self.first, lo)
            self.last = hi if self.last is None else max(self.last, hi)

    def text(self) -> str | None:
        return f"{self.first.date()}..{self.last.date()}" if self.first is not None and self.last is not None else None


def read_log(path: Path, cols: LogColumns, span: LogSpan | None = None,
             chunk_rows: int = CHUNK_ROWS) -> Iterator[tuple[list[str], list[int]]]:
    """(queries, counts) per chunk: empty cells as "", a missing count as 1; a count that is not a whole number
    >= 0 is one line naming the file and its line (a CSV/TSV's header is line 1; a Parquet file: the row)."""
    first_row = 2 if cols.kind in ("csv", "tsv") else 1
    for frame in _readable(path, cols, chunk_rows):
        queries = frame[cols.query].fillna("").astype(str).tolist()
        if cols.count:
            raw = frame[cols.count]
            numbers = pd.to_numeric(raw.where(raw.astype(str).str.strip() != "", "1"), errors="coerce")
            bad = numbers.isna() | (numbers < 0) | (numbers % 1 != 0)
            if bad.any():
                at = int(bad.to_numpy().argmax())
                raise CollectionError(path, f"{cols.count} is not a whole number >= 0 (a count of searches) here: "
                                            f"{_not_a_count(numbers.iloc[at])} (the cell is not shown: a log's cells "
                                            "may be personal)", line=first_row + at)
            counts = numbers.astype("int64").tolist()
        else:
            counts = [1] * len(queries)
        if span is not None and cols.time:
            span.see(frame[cols.time])
        first_row += len(frame)
        yield queries, counts
