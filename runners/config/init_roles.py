"""What a column holds, told from its values, for `private-mteb init` when its name says nothing (``Frage``,
``întrebare``, ``Dokument-ID``, ``nota``): ids look like ids and are referenced across files, grades are small
whole numbers that repeat, document texts are long, a question is shorter text.

Each guess comes with the reason init prints and writes beside the column (``how``), so a wrong one is easy to
spot; where two columns fit a role equally, none is taken and init names them instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: a column is text when at least this share of its values hold a space, and ids when none does
TEXT_SHARE = 0.5
#: grades: whole numbers in this range with at most this many distinct values
GRADE_RANGE, GRADE_LEVELS = (-1, 10), 6
#: a column references an id column when at least this share of its sampled values are among those ids
REFERENCE_SHARE = 0.8
#: ids of a corpus read in full for the reference check (a larger corpus: the first ones)
MAX_IDS = 2_000_000


#: a column name that reads as an id or a number, in the languages teams export in (a tie-break only)
ID_WORDS = re.compile(r"(^|[^a-zà-ž])(id|ids|nr|no|num|number|nummer|număr|numar|cod|code|key|n°|#)([^a-zà-ž]|$)",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Profile:
    """One column's sampled values, summarised."""

    name: str
    values: tuple[str, ...]  # non-empty values as text
    spaced: float  # share of values holding whitespace
    mean_len: float
    distinct: int
    ints: tuple[int, ...] | None  # the values as whole numbers, when every one is

    @property
    def is_text(self) -> bool:
        return bool(self.values) and self.spaced >= TEXT_SHARE and self.mean_len >= 10

    @property
    def is_id(self) -> bool:
        return bool(self.values) and self.spaced == 0 and self.mean_len <= 64

    @property
    def is_grade(self) -> bool:
        lo, hi = GRADE_RANGE
        return (self.ints is not None and all(lo <= g <= hi for g in self.ints) and self.distinct <= GRADE_LEVELS
                and len(self.values) > self.distinct)

    @property
    def unique(self) -> bool:
        return bool(self.values) and self.distinct == len(self.values)


def _int(value: str) -> int | None:
    try:
        f = float(value)
    except ValueError:
        return None
    return int(f) if f.is_integer() else None


def profiles(rows: list[dict[str, Any]]) -> dict[str, Profile]:
    """Column name -> Profile of a table's sampled rows (lists and objects are not profiled: no role here)."""
    names: list[str] = []
    for r in rows:
        names += [str(k) for k in r if str(k) not in names]
    out = {}
    for name in names:
        raw = [r.get(name) for r in rows]
        if any(isinstance(v, (list, dict)) for v in raw):
            continue
        values = tuple(str(v).strip() for v in raw if v is not None and str(v).strip() not in ("", "nan", "None"))
        ints = [_int(v) for v in values]
        out[name] = Profile(name, values, sum(any(c.isspace() for c in v) for v in values) / max(len(values), 1),
                            sum(map(len, values)) / max(len(values), 1), len(set(values)),
                            tuple(i for i in ints if i is not None) if values and None not in ints else None)
    return out


def referenced_share(values: Iterable[str], ids: set[str]) -> float:
    values = list(values)
    return sum(v in ids for v in values) / len(values) if values else 0.0


def all_ids(path: Path, column: str) -> set[str]:
    """Every value of ``column`` in a table (up to MAX_IDS), for telling which columns reference it."""
    from custom_tasks.errors import ProblemLog
    from custom_tasks.readers._io import read_table

    out: set[str] = set()
    try:
        for _, row in read_table(path, "utf-8", "table", log=ProblemLog()).rows:
            if row.get(column) is not None:
                out.add(str(row[column]).strip())
            if len(out) >= MAX_IDS:
                break
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    return out


@dataclass
class Guess:
    """A column for a role, why (``how``), or the columns that fit it equally (``tied``: none taken)."""

    column: str | None
    how: str = ""
    tied: tuple[str, ...] = ()


def corpus_text(p: dict[str, Profile], used: set[str]) -> Guess:
    """The document text: the longest text column."""
    texts = sorted((c for c in p.values() if c.is_text and c.name not in used), key=lambda c: -c.mean_len)
    if not texts:
        return Guess(None)
    return Guess(texts[0].name, f"the longest text (about {texts[0].mean_len:.0f} characters)")


def corpus_title(p: dict[str, Profile], text: str | None, used: set[str]) -> Guess:
    """An optional title: a shorter text column, at most half the text's length."""
    if text is None:
        return Guess(None)
    limit = p[text].mean_len / 2
    shorter = [c for c in p.values() if c.name not in used | {text} and c.spaced >= TEXT_SHARE and c.mean_len <= limit]
    if len(shorter) != 1:
        return Guess(None)
    return Guess(shorter[0].name, f"short text (about {shorter[0].mean_len:.0f} characters) beside the longer one")


def id_column(p: dict[str, Profile], used: set[str], unique: bool, what: str) -> Guess:
    """A column of ids (no spaces, short; ``unique`` within the file for a table of documents or questions)."""
    ids = [c for c in p.values() if c.is_id and c.name not in used and (c.unique or not unique)
           and not (c.is_grade and not c.unique)]
    if len(ids) == 1:
        return Guess(ids[0].name, f"{'unique ' if unique else ''}short values without spaces: {what}")
    return Guess(None, tied=tuple(c.name for c in ids))


def reference(p: dict[str, Profile], ids: set[str], used: set[str], whose: str) -> Guess:
    """The column whose values are ids of another file (documents, questions)."""
    found = sorted(((referenced_share(c.values, ids), c.name) for c in p.values() if c.name not in used and c.is_id),
                   reverse=True)
    found = [(s, n) for s, n in found if s >= REFERENCE_SHARE]
    if not found:
        return Guess(None)
    if len(found) > 1 and found[1][0] == found[0][0]:
        return Guess(None, tied=tuple(n for s, n in found if s == found[0][0]))
    return Guess(found[0][1], f"{found[0][0]:.0%} of its values are {whose}")


def grade(p: dict[str, Profile], used: set[str]) -> Guess:
    grades = [c for c in p.values() if c.is_grade and c.name not in used]
    if len(grades) == 1:
        levels = ", ".join(map(str, sorted(set(grades[0].ints or ()))))
        return Guess(grades[0].name, f"small whole numbers that repeat ({levels})")
    return Guess(None, tied=tuple(c.name for c in grades))


def question(p: dict[str, Profile], used: set[str]) -> Guess:
    """The question text: the one text column left (two or more: init names them instead of guessing)."""
    texts = [c for c in p.values() if c.is_text and c.name not in used]
    if len(texts) == 1:
        return Guess(texts[0].name, f"text (about {texts[0].mean_len:.0f} characters), shorter than the documents")
    return Guess(None, tied=tuple(c.name for c in texts))


def question_id(p: dict[str, Profile], rows: list[dict[str, Any]], query: str, used: set[str]) -> Guess:
    """In a flat judgments table: an id column that names the same question text wherever it repeats."""
    fits = []
    for c in p.values():
        if c.name in used or not c.is_id:
            continue
        text_of: dict[str, Any] = {}
        id_of: dict[Any, str] = {}
        if all(text_of.setdefault(str(r.get(c.name)), r.get(query)) == r.get(query)
               and id_of.setdefault(r.get(query), str(r.get(c.name))) == str(r.get(c.name)) for r in rows):
            fits.append(c.name)  # one id per question text and one text per id
    if len(fits) > 1:  # a topic can be one per question too: a name that reads as a number or id decides
        fits = [c for c in fits if ID_WORDS.search(c)] or fits
    if len(fits) == 1:
        return Guess(fits[0], "short ids, one per question text")
    return Guess(None, tied=tuple(fits))


def _items(value: Any, ids: set[str]) -> list[str]:
    """The document ids of one evalset cell: a list, or 'd12:2; d7:1; d9' (separators ; , |, grade optional)."""
    if isinstance(value, dict):
        return [str(k).strip() for k in value]
    raw = value if isinstance(value, (list, tuple)) else re.split(r"[;,|]", str(value)) if value is not None else []
    out = []
    for item in raw:
        item = str(item[0] if isinstance(item, (list, tuple)) and item else item).strip()
        if item and item not in ids and ":" in item:
            item = item.rsplit(":", 1)[0].strip()
        if item:
            out.append(item)
    return out


def relevant_lists(rows: list[dict[str, Any]], ids: set[str], used: set[str]) -> Guess:
    """In a one-row-per-question table: the column listing each question's relevant document ids."""
    names: list[str] = []
    for r in rows:
        names += [str(k) for k in r if str(k) not in names and str(k) not in used]
    found = []
    for name in names:
        items = [i for r in rows for i in _items(r.get(name), ids)]
        share = referenced_share(items, ids)
        if items and share >= REFERENCE_SHARE:
            found.append((share, name))
    found.sort(reverse=True)
    if not found:
        return Guess(None)
    if len(found) > 1 and found[1][0] == found[0][0]:
        return Guess(None, tied=tuple(n for s, n in found if s == found[0][0]))
    return Guess(found[0][1], f"lists of document ids ({found[0][0]:.0%} of them in the corpus), one row per question")

