"""CSV for people: files a person may open in a spreadsheet never carry a live formula.

Every CSV the project writes (`labels pool`, `inspect worst|diff --format csv`, `stats --format csv`,
`latency --format csv`, `history --format csv`, `experiments --csv`, `compare --format csv`) goes through
`csv_text` / `frame_csv` (tests/test_csv_outputs.py reads each back with the csv module and pandas):

* a text cell that starts with `=`, `+`, `-`, `@`, tab or carriage return (what spreadsheets read as a
  formula; OWASP "CSV injection") gets a single quote in front: `=HYPERLINK(...)` -> `'=HYPERLINK(...)`;
  a text cell that starts with a single quote gets one more, so `restore` is exact;
* numbers stay numbers: number values are written as they are, and a text cell that is a plain decimal
  number (`-0.0123`, `+1e-5`, `-5`) is left alone (it is not a formula);
* records end in CRLF (RFC 4180) and the csv module quotes every field holding a comma, a quote, a
  line feed or a carriage return, so a lone `\\r` in a title cannot split a record;
* missing values (None, NaN) are empty cells.

`restore` removes exactly that quote again (`labels import` applies it to the CSV/TSV cells it reads),
so writing and reading back is lossless for any text, including NUL, quotes and bare `\\r` / `\\n`.
"""

from __future__ import annotations

import csv
import io
import math
import re
from typing import Any, Iterable, Sequence

#: first characters a spreadsheet may evaluate (plus the quote itself, so that `restore` is exact)
TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "'")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def neutralise(value: Any) -> Any:
    """A cell as written for a spreadsheet: formula-like text gets a leading `'`; anything else unchanged."""
    if isinstance(value, str) and value.startswith(TRIGGERS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def restore(value: Any) -> Any:
    """The inverse of `neutralise` for a cell read back from such a CSV (non-text values unchanged)."""
    if isinstance(value, str) and len(value) > 1 and value[0] == "'" and value[1:].startswith(TRIGGERS):
        return value[1:]
    return value


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars -> Python
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
        if isinstance(value, float) and math.isnan(value):
            return ""
    if value.__class__.__name__ in ("NAType", "NaTType"):  # pandas' missing markers
        return ""
    return neutralise(value)


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A header and rows as CSV text (see the module docstring for what cells look like)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow([_cell(h) for h in header])
    w.writerows([_cell(v) for v in row] for row in rows)
    return buf.getvalue()


def frame_csv(df: Any, index: bool = False) -> str:
    """A pandas DataFrame as `csv_text` (the index as first column(s) when `index`)."""
    if index:
        df = df.reset_index()
    return csv_text([str(c) for c in df.columns], df.itertuples(index=False, name=None))
