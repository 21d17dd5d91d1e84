"""The rules for the values of a row every reader applies: what an id may hold, what a grade may be.

Checked where each row is read, so the error names its ``file:line``; ``validate.py`` re-exports both.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from .path_names import char_name
from .readers._io import Table, as_id, is_missing


def parse_grade(table: Table, loc: int, value: Any) -> int:
    """Grades are integers >= 0; '2' and 2.0 are accepted, 1.5, 'x' and -1 are errors."""
    grade: int | None = None
    if isinstance(value, bool) or is_missing(value):
        grade = None
    elif isinstance(value, int):
        grade = value
    elif isinstance(value, float) and value.is_integer():
        grade = int(value)
    elif isinstance(value, str):
        s = value.strip()
        try:
            grade = int(s)
        except ValueError:
            try:
                f = float(s)
                grade = int(f) if f.is_integer() else None
            except ValueError:
                grade = None
    if grade is None:
        raise table.error(loc, f"grade {value!r} is not an integer (grades are whole numbers >= 0)")
    if grade < 0:
        raise table.error(loc, f"grade {grade} is negative (grades are whole numbers >= 0)")
    return grade


#: what a per-question yes/no column (`complete_labels`) may hold, lower-cased; empty or missing: not declared
TRUE_WORDS, FALSE_WORDS = ("true", "yes", "1"), ("false", "no", "0", "")


def declared(table: Table, loc: int, value: Any, qid: Any, column: str) -> bool:
    """A question's yes/no column: true/false, yes/no, 1/0 (a JSON or Parquet boolean or number too), or empty for
    no; anything else is an error at its line (a typo must not silently count a question as not declared)."""
    if is_missing(value):
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text in TRUE_WORDS or text in FALSE_WORDS:
        return text in TRUE_WORDS
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    raise table.error(loc, f"question {as_id(qid)!r}: column {column!r} is {shown}: write true or false (yes/no, "
                           "1/0; empty: not declared)")


def checked_id(table: Table, loc: int, value: Any, what: str) -> str:
    """A document or query id as a string (``as_id``: outer whitespace dropped); an empty id, or one holding
    whitespace, a control character (Cc) or an invisible format character (Cf), is an error at its line.

    Ids go into TREC qrels and run files, which separate fields by whitespace, into rankings and tables
    people read in a terminal: an id with a space, tab, line break, NBSP or escape character would be split,
    misread or executed there, so it is refused when the collection is read, not after a run. An invisible
    format character (U+200B ZERO WIDTH SPACE, a bidi mark) would survive TREC export byte for byte, but two
    ids that differ only by it print identically everywhere: it is refused too, by its Unicode name."""
    out = as_id(value)
    if not out:
        raise table.error(loc, f"empty {what} id")
    for ch in out:
        if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf"):
            if ch.isspace():
                kind = f"whitespace ({ascii(ch)[1:-1]}, {char_name(ch)})"
            elif unicodedata.category(ch) == "Cf":  # invisible: two ids would look the same in every table
                kind = f"an invisible format character ({char_name(ch)})"
            else:
                kind = f"a control character ({ascii(ch)[1:-1]}, {char_name(ch)})"
            raise table.error(loc, f"{what} id {ascii(out)[:80]} contains {kind}: ids may not hold spaces, tabs, "
                                   "line breaks, control or invisible characters; replace them (e.g. with '_') "
                                   "in the export")
    return out
