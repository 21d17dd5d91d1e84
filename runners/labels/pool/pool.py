"""Pooling: the unlabelled (query, document) pairs in the union of the candidates' top-k, for annotators.

Classic IR pooling: a model that finds good documents nobody labelled is punished until they are
labelled. The pool is the union over candidates, shuffled with a seed, and carries no model name, so
annotators cannot tell (or favour) which system found a document. Unlike result files, the pool holds
query and document texts by design: it is for the team's own annotators.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from custom_tasks.collection import Collection
from custom_tasks.readers._io import as_id, read_table

from ...statistics.analysis_errors import AnalysisError
from ...results.spreadsheet import csv_text, restore
from ...results.store import atomic_write_bytes, find_run, read_json
from .judged import ranked_ids, stored_rankings

#: the CSV and the JSONL hold the same rows: the task too (`labels serve --pool` reads it from the JSONL)
COLUMNS = ["task", "query_id", "doc_id", "split", "query", "title", "document", "grade"]


@dataclass
class Pool:
    rows: list[dict[str, Any]]
    n_queries: int  # queries with at least one pair to label
    per_model: dict[str, int]  # unlabelled documents in each model's top-k (pairs, before the union)
    #: of those, questions awaiting judgment (added questions with no graded document: ranked by `run`, unscored)
    n_awaiting: int = 0
    #: questions left out because their labels are declared complete (nothing of theirs to judge)
    n_complete: int = 0


def awaiting_rankings(results_dir: Path, model: str, task: str, split: str = "test",
                      subset: str = "default") -> dict[str, dict[str, float]]:
    """The model's rankings of the task's questions awaiting judgment (kept apart by `run`: never scored)."""
    folder = find_run(results_dir, model, task)
    path = folder / f"rankings_{split}.json.gz" if folder is not None else None
    if path is None or not path.exists():
        return {}
    try:
        return dict(read_json(path).get("awaiting", {}).get(subset, {}))
    except (ValueError, AttributeError, TypeError):
        return {}


def build_pool(results_dir: Path, collection: Collection, models: Sequence[str], depth: int = 10,
               split: str = "test", seed: int = 0) -> Pool:
    """The unlabelled pairs of every evaluated query among the top-`depth` of any model, shuffled; the questions
    awaiting judgment too (their rankings stored apart by `run`), so grading the pool makes them scored. Questions
    whose labels are declared complete (Collection.complete_questions) are left out: a document nobody judged is
    known not relevant there."""
    if depth < 1:
        raise AnalysisError(f"--depth must be >= 1, got {depth}")
    if split not in collection.qrels:
        raise AnalysisError(f"task '{collection.name}' has no split '{split}' (splits: {collection.splits})")
    known = collection.complete_in(split)
    qrels = {q: docs for q, docs in collection.qrels[split].items() if q not in known}
    awaiting = [q for q in collection.awaiting_judgment() if q not in collection.qrels[split]]
    pairs: set[tuple[str, str]] = set()
    per_model: dict[str, int] = {}
    for model in models:
        rankings, stored = stored_rankings(results_dir, model, collection.name, split)
        if depth > stored:
            raise AnalysisError(f"--depth {depth} is deeper than the {stored} documents stored per query for "
                                f"'{model}': use --depth {stored} or re-run with a larger keep_top_k")
        found = {(q, d) for q in qrels for d in ranked_ids(rankings.get(q, {}))[:depth] if d not in qrels[q]}
        if awaiting:  # every document of their top-k is unjudged (a grade of any split makes a question scored)
            ranked = awaiting_rankings(results_dir, model, collection.name, split)
            found |= {(q, d) for q in awaiting for d in ranked_ids(ranked.get(q, {}))[:depth]}
        per_model[model] = len(found)
        pairs |= found
    ordered = sorted(pairs)
    order = np.random.default_rng(seed).permutation(len(ordered))
    rows = []
    for i in order:
        qid, doc_id = ordered[i]
        doc = collection.corpus[doc_id]
        rows.append({"task": collection.name, "query_id": qid, "doc_id": doc_id, "split": split,
                     "query": collection.queries[qid], "title": doc.get("title", ""), "document": doc["text"],
                     "grade": ""})
    pooled = {q for q, _ in pairs}
    return Pool(rows, len(pooled), per_model, len(pooled & set(awaiting)), len(known))


def write_pool(rows: list[dict[str, Any]], out: Path) -> tuple[Path, Path]:
    """The pool as CSV (for a spreadsheet: formula-like cells neutralised, every field with a line break
    quoted; runners/results/spreadsheet.py) and JSONL (texts as they are), same stem; written atomically."""
    out = Path(out)
    csv_path, jsonl_path = out.with_suffix(".csv"), out.with_suffix(".jsonl")
    body = csv_text(COLUMNS, ([r.get(c, "") for c in COLUMNS] for r in rows))
    atomic_write_bytes(csv_path, body.encode("utf-8"))
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    atomic_write_bytes(jsonl_path, lines.encode("utf-8"))
    return csv_path, jsonl_path


def pool_task(path: Path) -> str | None:
    """The task a pool file names (the `task` of its first JSONL row), None when it names none."""
    path = Path(path)
    if not path.is_file():
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        first = next((ln for ln in f if ln.strip()), "{}")
    try:
        return json.loads(first).get("task") or None
    except (json.JSONDecodeError, AttributeError):
        return None


def read_pool_rows(path: Path, collection: Collection) -> list[dict[str, Any]]:
    """(query_id, doc_id, split) rows of a pool file (`labels pool` output: CSV, TSV, JSONL or Parquet), each id
    checked against the task's collection: a pool of another task is one line naming the file, not a KeyError."""
    t = read_table(Path(path), "utf-8", "pool")
    t.require_columns(["query_id", "doc_id"])
    rows = []
    for loc, raw in t.rows:
        row = {k: restore(v) for k, v in raw.items()} if t.kind in ("csv", "tsv") else raw  # `labels pool`'s quoting
        qid, doc_id = as_id(t.get(loc, row, "query_id")), as_id(t.get(loc, row, "doc_id"))
        if qid not in collection.queries:
            raise t.error(loc, f"unknown query id {qid!r}: is this the pool of task {collection.name}?")
        if doc_id not in collection.corpus:
            raise t.error(loc, f"unknown document id {doc_id!r}: is this the pool of task {collection.name}?")
        rows.append({"query_id": qid, "doc_id": doc_id, "split": as_id(row.get("split")) or None})
    return rows
