"""The names init looks for and what it records: the ``Detected`` result, column picking by name, sampling.

Shared by the format detection (init_detect.py) and the flat judgments table (init_judgments.py); the roles told
from values when no name matches are init_roles.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.errors import ProblemLog

TABLES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet",
          ".pq": "parquet"}
#: what a column left for the user reads in the draft YAML (the readers refuse it: no column has that name)
UNKNOWN = "?"
SAMPLE_ROWS = 50

DOC_ID = ["_id", "doc_id", "docid", "id", "doc", "document_id", "corpus_id", "pid", "docno", "doc_no", "doc_number",
          "document_number", "document_no"]
TITLE = ["title", "heading", "name", "subject", "headline"]
TEXT = ["text", "body", "content", "contents", "passage", "document", "abstract", "full_text", "doc_text",
        "page_content"]
QUERY_ID = ["query_id", "qid", "_id", "id", "question_id", "q_id", "query_number", "query_no", "qno", "topic_id",
            "topic_number", "question_number", "question_no"]
QUERY = ["query", "question", "text", "query_text", "question_text"]
RELEVANT = ["relevant", "relevant_docs", "relevant_ids", "relevant_documents", "doc_ids", "positives", "gold", "answers"]
GRADE = ["score", "grade", "rel", "relevance", "label"]
QREL_QUERY = ["query_id", "qid", "q", "query", "query_number", "query_no", "qno", "topic_id", "topic_number",
              "question_id", "question_number", "topic"]
QREL_DOC = ["corpus_id", "doc_id", "docid", "doc", "d", "document_id", "docno", "doc_no", "doc_number",
            "document_number"]
#: a query log's columns (`questions sample`): the query text, how often it was asked, when, by whom
LOG_QUERY = QUERY + ["q", "search", "search_query", "search_term", "search_text", "term", "keywords", "user_query"]
LOG_COUNT = ["count", "n", "freq", "frequency", "hits", "searches", "times", "occurrences", "num_searches"]
LOG_TIME = ["timestamp", "time", "ts", "date", "datetime", "created_at", "searched_at", "event_time"]
LOG_USER = ["user_id", "user", "uid", "userid", "session_id", "session", "sid", "sessionid", "client_id",
            "visitor_id", "ip", "ip_address"]
NOT_TAGS = {"tags", "evidence", "metadata", "split", "complete_labels"}  # complete_labels: read as such, not a tag
CORPUS_NAMES = ("corpus", "docs", "documents", "passages", "collection", "pages", "kb")
QUERY_NAMES = ("queries", "questions", "topics", "query")
EVALSET_NAMES = ("evalset", "eval", "testset", "test_set", "golden", "gold")
QRELS_NAMES = ("qrels", "labels", "judgements", "judgments", "relevance")


@dataclass
class Detected:
    """What init found: the format, the ``source:`` mapping (absolute paths) and why each key was chosen."""

    format: str
    source: dict[str, Any]
    notes: dict[str, str] = field(default_factory=dict)  # key -> explanation written as a YAML comment
    splits: list[str] = field(default_factory=lambda: ["test"])
    #: roles no column could be matched to: role -> (file name, the columns found there); written as UNKNOWN
    missing: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    #: the distinct grades seen in the labels' first rows (sorted; empty when not read), for the grades_map hint
    grades: list[int] = field(default_factory=list)
    #: role -> how its column was told from the values (init_roles.py), for the roles no name matched
    how: dict[str, str] = field(default_factory=dict)
    #: role -> the columns that fit it equally well (none taken): named in the message instead of a guess
    tied: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def unknown(self, role: str, path: Path, rows: list[dict[str, Any]]) -> str:
        """Record ``role`` as unknown (its file's columns kept for the message) and return the placeholder."""
        self.missing[role] = (path.name, columns_of(rows))
        return UNKNOWN

    def missing_line(self) -> str:
        """'query_id in queries.csv (columns: query number, question); ...' for the error and the draft."""
        return "; ".join(f"{role} in {f} (" + (f"equally likely: {', '.join(self.tied[role])}; "
                                               if self.tied.get(role) else "")
                         + f"columns found: {', '.join(cols) or 'none'})" for role, (f, cols) in self.missing.items())

    def by_content(self, role: str, guess: Any) -> str | None:
        """``guess.column`` (an init_roles.Guess), noting how it was told; its ties kept for the message."""
        if guess.column:
            self.how[role] = f"{guess.column}: {guess.how}"
        elif guess.tied:
            self.tied[role] = guess.tied
        return guess.column


def norm_name(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def pick(columns: list[str], wanted: list[str], exclude: tuple[str, ...] = ()) -> str | None:
    """The first column whose normalised name is in ``wanted`` (in ``wanted`` order)."""
    by_norm = {norm_name(c): c for c in columns if c not in exclude}
    return next((by_norm[w] for w in wanted if w in by_norm), None)


def sample(path: Path) -> list[dict[str, Any]]:
    """The first rows of a table as dicts (empty on unreadable files: detection then skips the file)."""
    from custom_tasks.readers._io import read_table

    rows: list[dict[str, Any]] = []
    try:  # the readers themselves: JSON arrays, JSONL, sniffed CSV separators and Parquet as `run` reads them
        for _, row in read_table(path, "utf-8", "table", log=ProblemLog()).rows:  # bad rows are skipped here
            rows.append(row)
            if len(rows) >= SAMPLE_ROWS:
                break
    except (OSError, ValueError, UnicodeDecodeError):  # CollectionError is a ValueError: validation reports it
        return rows
    return rows


def columns_of(rows: list[dict[str, Any]]) -> list[str]:
    cols: list[str] = []
    for r in rows:
        cols += [str(k) for k in r if str(k) not in cols]
    return cols


def is_trec_qrels(path: Path) -> bool:
    try:
        lines = [ln.split() for ln in path.read_text(encoding="utf-8").splitlines()[:SAMPLE_ROWS]
                 if ln.strip() and not ln.startswith("#")]
    except (OSError, UnicodeDecodeError):
        return False
    return bool(lines) and all(len(f) == 4 and re.fullmatch(r"-?\d+", f[3]) for f in lines)


def split_of(path: Path) -> str:
    """``qrels.dev.txt`` / ``dev_qrels.txt`` -> dev; default test."""
    for part in re.split(r"[._\-]", path.name.lower()):
        if part in {"train", "dev", "test", "validation", "val"}:
            return part
    return "test"


def named(path: Path, names: tuple[str, ...]) -> bool:
    stem = norm_name(path.name.split(".")[0])
    return any(stem == n or stem.startswith(n + "_") or stem.endswith("_" + n) for n in names)


def tag_candidates(rows: list[dict[str, Any]], used: set[str]) -> list[str]:
    """Columns not used for ids/text whose values are short labels (topic, source, team ...)."""
    out = []
    for c in columns_of(rows):
        if c in used or norm_name(c) in NOT_TAGS:
            continue
        values = [r.get(c) for r in rows if r.get(c) not in (None, "")]
        if values and all(isinstance(v, (str, int)) and not isinstance(v, bool) and len(str(v)) <= 40 for v in values):
            out.append(c)
    return out


def corpus_columns(rows: list[dict[str, Any]], det: Detected | None = None) -> dict[str, str | None]:
    """doc_id, title and text by name; with ``det``, a role no name matched is told from the values
    (init_roles: the longest text, a unique id column, a shorter text as title) and ``det.how`` says so."""
    cols = columns_of(rows)
    out = {"doc_id": pick(cols, DOC_ID), "title": pick(cols, TITLE), "text": pick(cols, TEXT)}
    if det is None or all(out.values()):
        return out
    from .init_roles import corpus_text, corpus_title, id_column, profiles

    prof = profiles(rows)
    if out["text"] is None:
        out["text"] = det.by_content("text", corpus_text(prof, {c for c in out.values() if c}))
    if out["doc_id"] is None:
        out["doc_id"] = det.by_content("doc_id", id_column(prof, {c for c in out.values() if c}, True,
                                                           "one per document"))
    if out["title"] is None:
        out["title"] = det.by_content("title", corpus_title(prof, out["text"], {c for c in out.values() if c}))
    return out


def fill_unknown(det: Detected, columns: dict[str, str | None], where: dict[str, tuple[Path, list]]) -> dict[str, str]:
    """``columns`` with every required role that no column matched set to UNKNOWN (recorded in ``det.missing``);
    an unmatched title is simply left out (it is optional)."""
    out: dict[str, str] = {}
    for role, col in columns.items():
        if col:
            out[role] = col
        elif role != "title":
            out[role] = det.unknown(role, *where[role])
    return out


def grades_of(rows: list[dict[str, Any]], column: str | None) -> list[int]:
    """The distinct whole-number grades of a labels sample (empty when a value is not one)."""
    found: set[int] = set()
    for r in rows:
        try:
            found.add(int(str(r.get(column)).strip()))
        except ValueError:
            return []
    return sorted(found)
