"""Guess a collection's format and column names from the files in a folder, for `private-mteb init`.

Only the first rows of each table are looked at. The guess is written into a commented task YAML that
the user reviews; `tasks validate` (run right after) reads every row and reports whatever was wrong.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.errors import ConfigError, ProblemLog

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
NOT_TAGS = {"tags", "evidence", "metadata", "split"}
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

    def unknown(self, role: str, path: Path, rows: list[dict[str, Any]]) -> str:
        """Record ``role`` as unknown (its file's columns kept for the message) and return the placeholder."""
        self.missing[role] = (path.name, _columns(rows))
        return UNKNOWN

    def missing_line(self) -> str:
        """'query_id in queries.csv (columns: query number, question); ...' for the error and the draft."""
        return "; ".join(f"{role} in {f} (columns found: {', '.join(cols) or 'none'})"
                         for role, (f, cols) in self.missing.items())


def _norm(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def pick(columns: list[str], wanted: list[str], exclude: tuple[str, ...] = ()) -> str | None:
    """The first column whose normalised name is in ``wanted`` (in ``wanted`` order)."""
    by_norm = {_norm(c): c for c in columns if c not in exclude}
    return next((by_norm[w] for w in wanted if w in by_norm), None)


def _sample(path: Path) -> list[dict[str, Any]]:
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


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    cols: list[str] = []
    for r in rows:
        cols += [str(k) for k in r if str(k) not in cols]
    return cols


def _is_trec_qrels(path: Path) -> bool:
    try:
        lines = [ln.split() for ln in path.read_text(encoding="utf-8").splitlines()[:SAMPLE_ROWS]
                 if ln.strip() and not ln.startswith("#")]
    except (OSError, UnicodeDecodeError):
        return False
    return bool(lines) and all(len(f) == 4 and re.fullmatch(r"-?\d+", f[3]) for f in lines)


def _split_of(path: Path) -> str:
    """``qrels.dev.txt`` / ``dev_qrels.txt`` -> dev; default test."""
    for part in re.split(r"[._\-]", path.name.lower()):
        if part in {"train", "dev", "test", "validation", "val"}:
            return part
    return "test"


def _named(path: Path, names: tuple[str, ...]) -> bool:
    stem = _norm(path.name.split(".")[0])
    return any(stem == n or stem.startswith(n + "_") or stem.endswith("_" + n) for n in names)


def _tag_columns(rows: list[dict[str, Any]], used: set[str]) -> list[str]:
    """Columns not used for ids/text whose values are short labels (topic, source, team ...)."""
    out = []
    for c in _columns(rows):
        if c in used or _norm(c) in NOT_TAGS:
            continue
        values = [r.get(c) for r in rows if r.get(c) not in (None, "")]
        if values and all(isinstance(v, (str, int)) and not isinstance(v, bool) and len(str(v)) <= 40 for v in values):
            out.append(c)
    return out


def _corpus_columns(rows: list[dict[str, Any]]) -> dict[str, str | None]:
    cols = _columns(rows)
    return {"doc_id": pick(cols, DOC_ID), "title": pick(cols, TITLE), "text": pick(cols, TEXT)}


def detect(data_dir: Path) -> Detected:
    """Detect beir, evalset, trec or tables in ``data_dir``; ConfigError naming the folder when unsure."""
    data_dir = Path(data_dir).resolve()
    if not data_dir.is_dir():
        raise ConfigError(data_dir, "not a folder: give the folder that holds your corpus and questions")
    files = sorted(p for p in data_dir.iterdir() if p.is_file() and not p.name.startswith("."))
    beir = _detect_beir(data_dir)
    if beir:
        return beir
    tables = {p: _sample(p) for p in files if p.suffix.lower() in TABLES}
    tables = {p: rows for p, rows in tables.items() if rows}
    corpus = _find_corpus(tables)
    if corpus is None:
        shown = _files_and_columns(files, tables) or "no files"
        raise ConfigError(data_dir, f"cannot find a corpus table (found: {shown}); a corpus needs a document id "
                                    "and a text column: name it corpus.json/.jsonl/.csv/.parquet (then init writes a "
                                    "`columns:` stanza to fill in), or write the task YAML by hand (see docs/collections.md)")
    rest = {p: r for p, r in tables.items() if p != corpus}
    for p, rows in rest.items():
        if pick(_columns(rows), RELEVANT) and pick(_columns(rows), QUERY):
            return _evalset(corpus, tables[corpus], p, rows)
    trec = [p for p in files if p.suffix.lower() not in TABLES and _is_trec_qrels(p)]
    queries = next((p for p in rest if _named(p, QUERY_NAMES)), None)
    if trec and queries:
        return _trec(corpus, tables[corpus], queries, rest[queries], trec)
    qrels = next((p for p, rows in rest.items() if pick(_columns(rows), QREL_DOC) and pick(_columns(rows), GRADE)
                  and p != queries), None)
    qrels = qrels or next((p for p in rest if p != queries and _named(p, QRELS_NAMES)), None)
    queries = queries or next((p for p in rest if p != qrels and pick(_columns(rest[p]), QUERY)), None)
    if qrels and queries:
        return _tables(corpus, tables[corpus], queries, rest[queries], qrels, rest[qrels])
    shown = _files_and_columns(files, tables)
    raise ConfigError(data_dir, f"found the corpus {corpus.name} but no questions with labels among: {shown} "
                                "(needed: an evalset table with a question and a relevant-documents column; or TREC "
                                "qrels + a queries table; or a queries table (id, question) and a labels table "
                                "(question id, document id, grade); a file named queries.* and one named qrels.* or "
                                "labels.* get a `columns:` stanza to fill in)")


def _files_and_columns(files: list[Path], tables: dict[Path, list[dict[str, Any]]]) -> str:
    """'corpus.json (columns: id, body), notes.txt' for the messages: what init found in each file."""
    return ", ".join(f"{p.name} (columns: {', '.join(_columns(tables[p]))})" if p in tables else p.name
                     for p in files)


def _fill_unknown(det: Detected, columns: dict[str, str | None], where: dict[str, tuple[Path, list]]) -> dict[str, str]:
    """``columns`` with every required role that no column matched set to UNKNOWN (recorded in ``det.missing``);
    an unmatched title is simply left out (it is optional)."""
    out: dict[str, str] = {}
    for role, col in columns.items():
        if col:
            out[role] = col
        elif role != "title":
            out[role] = det.unknown(role, *where[role])
    return out


def _grades(rows: list[dict[str, Any]], column: str | None) -> list[int]:
    """The distinct whole-number grades of a labels sample (empty when a value is not one)."""
    found: set[int] = set()
    for r in rows:
        try:
            found.add(int(str(r.get(column)).strip()))
        except ValueError:
            return []
    return sorted(found)


def _find_corpus(tables: dict[Path, list[dict[str, Any]]]) -> Path | None:
    named = [p for p in tables if _named(p, CORPUS_NAMES) and pick(_columns(tables[p]), TEXT)]
    if named:
        return named[0]
    found = next((p for p, rows in tables.items() if pick(_columns(rows), TEXT) and pick(_columns(rows), DOC_ID)
                  and not pick(_columns(rows), RELEVANT) and not pick(_columns(rows), QUERY, exclude=("text",))), None)
    return found or next((p for p in tables if _named(p, CORPUS_NAMES)), None)  # columns: left to fill in


def _detect_beir(data_dir: Path) -> Detected | None:
    qrels = sorted((data_dir / "qrels").glob("*.tsv")) if (data_dir / "qrels").is_dir() else []
    if not ((data_dir / "corpus.jsonl").is_file() and (data_dir / "queries.jsonl").is_file() and qrels):
        return None
    splits = [p.stem for p in qrels]
    rows = _sample(data_dir / "queries.jsonl")
    tags = _tag_columns(rows, {"_id", "text", "title"})
    source: dict[str, Any] = {"format": "beir", "path": data_dir}
    notes = {"format": "detected: corpus.jsonl, queries.jsonl and qrels/<split>.tsv (the BEIR layout)",
             "path": "the BEIR folder"}
    if tags:
        source["tag_fields"] = tags
        notes["tag_fields"] = "query fields copied into tags, for `stats --by ...`"
    return Detected("beir", source, notes, ["test"] if "test" in splits else splits[:1])


def _evalset(corpus: Path, crows: list, evalset: Path, rows: list) -> Detected:
    cols = _columns(rows)
    det = Detected("evalset", {})
    where = {r: (corpus, crows) for r in ("doc_id", "text", "title")}
    where.update({r: (evalset, rows) for r in ("query", "relevant")})
    columns = _fill_unknown(det, {**_corpus_columns(crows), "query": pick(cols, QUERY),
                                  "relevant": pick(cols, RELEVANT)}, where)
    qid = pick(cols, QUERY_ID, exclude=(columns["query"],))
    if qid:
        columns["query_id"] = qid
    source: dict[str, Any] = {"format": "evalset", "corpus": corpus, "evalset": evalset}
    notes = {"format": f"detected: {evalset.name} has one row per question with its relevant documents",
             "corpus": "documents", "evalset": "questions and the ids (optionally :grade) of their answers",
             "columns": "column names in your files (detected; the defaults need no entry)"}
    split_col = pick(cols, ["split"])
    splits = ["test"]
    if split_col:
        source["split_column"] = split_col
        notes["split_column"] = "which split each question belongs to"
        values = sorted({str(r.get(split_col)) for r in rows if r.get(split_col) not in (None, "")})
        splits = ["test"] if "test" in values or not values else values[:1]
    source["columns"] = columns
    tags = _tag_columns(rows, set(columns.values()) | {split_col or ""})
    if tags:
        source["tag_columns"] = tags
        notes["tag_columns"] = "columns copied into query tags, for `stats --by ...`"
    det.source, det.notes, det.splits = source, notes, splits
    return det


def _trec(corpus: Path, crows: list, queries: Path, qrows: list, qrels: list[Path]) -> Detected:
    qcols = _columns(qrows)
    det = Detected("trec", {})
    where = {**{r: (corpus, crows) for r in ("doc_id", "text", "title")},
             **{r: (queries, qrows) for r in ("query_id", "query")}}
    columns = _fill_unknown(det, {**_corpus_columns(crows), "query_id": pick(qcols, QUERY_ID),
                                  "query": pick(qcols, QUERY)}, where)
    by_split = {_split_of(p): p for p in qrels}
    source: dict[str, Any] = {"format": "trec", "corpus": corpus, "queries": queries,
                              "qrels": by_split if len(by_split) > 1 else qrels[0], "columns": columns}
    if len(by_split) == 1:
        source["split"] = next(iter(by_split))
    notes = {"format": f"detected: TREC qrels lines `qid 0 docid grade` in {', '.join(p.name for p in qrels)}",
             "corpus": "documents", "queries": "questions", "qrels": "labels, per split",
             "columns": "column names in the corpus and queries tables (detected)"}
    tags = _tag_columns(qrows, set(columns.values()))
    if tags:
        source["tag_columns"] = tags
        notes["tag_columns"] = "query columns copied into tags, for `stats --by ...`"
    splits = list(by_split)
    det.source, det.notes, det.splits = source, notes, ["test"] if "test" in splits else splits[:1]
    return det


def _tables(corpus: Path, crows: list, queries: Path, qrows: list, qrels: Path, rrows: list) -> Detected:
    qcols, rcols = _columns(qrows), _columns(rrows)
    det = Detected("tables", {})
    where = {**{r: (corpus, crows) for r in ("doc_id", "text", "title")},
             **{r: (queries, qrows) for r in ("query_id", "query")},
             **{r: (qrels, rrows) for r in ("qrels_query_id", "qrels_doc_id", "grade")}}
    columns = _fill_unknown(det, {**_corpus_columns(crows), "query_id": pick(qcols, QUERY_ID),
                                  "query": pick(qcols, QUERY), "qrels_query_id": pick(rcols, QREL_QUERY),
                                  "qrels_doc_id": pick(rcols, QREL_DOC), "grade": pick(rcols, GRADE)}, where)
    det.grades = _grades(rrows, columns["grade"]) if columns["grade"] != UNKNOWN else []
    source: dict[str, Any] = {"format": "tables", "corpus": corpus, "queries": queries, "qrels": qrels}
    notes = {"format": f"detected: separate corpus ({corpus.name}), queries ({queries.name}) and labels "
                       f"({qrels.name}) tables", "corpus": "documents", "queries": "questions",
             "qrels": "one row per (question, document, grade)",
             "columns": "column names in the three tables (detected)"}
    split_col = pick(rcols, ["split"])
    splits = ["test"]
    if split_col:
        source["split_column"] = split_col
        notes["split_column"] = "the labels table's column naming each row's split"
        values = sorted({str(r.get(split_col)) for r in rrows if r.get(split_col) not in (None, "")})
        splits = ["test"] if "test" in values or not values else values[:1]
    source["columns"] = columns
    tags = _tag_columns(qrows, set(columns.values()))
    if tags:
        source["tag_columns"] = tags
        notes["tag_columns"] = "query columns copied into tags, for `stats --by ...`"
    det.source, det.notes, det.splits = source, notes, splits
    return det
