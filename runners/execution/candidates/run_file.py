"""`kind: run`: rankings your production system produced (a run file), scored as a candidate.

    models:
      - {name: prod-search, kind: run, path: ../../data/demo_kb/prod_bm25.run, label: prod BM25}

The file is a TREC run (`qid Q0 docid rank score tag`, whitespace-separated: any extension other than the
table ones) or rows of JSONL / CSV / TSV / Parquet with a query id column (`query_id`, `qid` or `query-id`), a
document id column (`doc_id`, `docid`, `corpus_id` or `corpus-id`) and `score` or `rank` (rank 1 = best;
without `score`, a row scores -rank). With both, the score decides the order, as in trec_eval.

Validated like a collection file, before anything runs (`check`): an unknown query id or document id, a
(query, document) pair listed twice, a score or rank that is not a finite number -> `file:line: ...`, exit 2.
A query the file lacks retrieves nothing (it scores 0); the run says how many (`note_for`, `RunRecord.note`).

Scoring is mteb's: `RunFileSearch` is a search protocol (index/search) whose search returns the file's
documents per query, cut to mteb's top_k by (score, doc id) like every other candidate's list; mteb's
evaluator scores it, so per-query sidecars, stats, check, inspect, report, export and compare work unchanged.
Identity: the file's content hash (a changed file re-runs); revision `local` unless the entry gives one.
In-process use (a latency pass): `RunFileSearch.search_one(task_name, query_id)` returns one query's list.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from custom_tasks.errors import CollectionError, ConfigError
from custom_tasks.readers._io import TABLE_EXTENSIONS, as_id, display_path, is_missing, read_lines, read_table

from ...config.candidate_facts import SpecFacts
from .candidates import Candidate
from .candidate_value import model_value
from .run_identity import value_weights

QUERY_COLUMNS = ("query_id", "qid", "query-id")
DOC_COLUMNS = ("doc_id", "docid", "corpus_id", "corpus-id")
TREC_FORMAT = "qid Q0 docid rank score tag"


def _number(value: Any) -> float | None:
    """A finite float, or None (missing / not a number / inf / NaN)."""
    if isinstance(value, bool) or is_missing(value):
        return None
    try:
        x = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


class _Builder:
    """Rows -> {query id: {doc id: score}}, checking ids against the task and pairs for duplicates."""

    def __init__(self, path: Path, queries: set[str], docs: set[str], task: str) -> None:
        self.path, self.queries, self.docs, self.task = path, queries, docs, task
        self.rankings: dict[str, dict[str, float]] = {}
        self.first: dict[tuple[str, str], str] = {}  # pair -> where it was first listed
        self.rows = 0

    def add(self, where: str, error: Any, qid: str, doc: str, score: float) -> None:
        if not qid:
            raise error("empty query id")
        if not doc:
            raise error("empty document id")
        if qid not in self.queries:
            raise error(f"query id {qid!r} is not a query of task {self.task}: fix the id or remove the line")
        if doc not in self.docs:
            raise error(f"document id {doc!r} is not in the corpus of task {self.task}: fix the id or remove the line")
        ranked = self.rankings.setdefault(qid, {})
        if doc in ranked:
            raise error(f"document {doc!r} is listed twice for query {qid!r} (first at {self.first[(qid, doc)]})")
        ranked[doc] = score
        self.first[(qid, doc)] = where
        self.rows += 1


def _read_trec(path: Path, b: _Builder) -> None:
    shown = display_path(path)
    for lineno, line in read_lines(path, "utf-8", "run"):
        parts = line.split()

        def error(problem: str, n: int = lineno) -> CollectionError:
            return CollectionError(shown, problem, line=n)

        if len(parts) != 6:
            raise error(f"expected 6 whitespace-separated columns `{TREC_FORMAT}`, got {len(parts)}")
        score = _number(parts[4])
        if score is None:
            raise error(f"score {parts[4]!r} is not a finite number (columns: {TREC_FORMAT})")
        if _number(parts[3]) is None:
            raise error(f"rank {parts[3]!r} is not a number (columns: {TREC_FORMAT})")
        b.add(f"line {lineno}", error, parts[0], parts[2], score)


def _column(table: Any, row: dict[str, Any], names: tuple[str, ...]) -> str | None:
    pool = table.columns if table.columns is not None else row
    return next((n for n in names if n in pool), None)


def _read_rows(path: Path, b: _Builder) -> None:
    table = read_table(path, "utf-8", "run")
    for loc, row in table.rows:

        def error(problem: str, n: int = loc) -> CollectionError:
            return table.error(n, problem)

        qcol, dcol = _column(table, row, QUERY_COLUMNS), _column(table, row, DOC_COLUMNS)
        if qcol is None or dcol is None:
            missing = "query id" if qcol is None else "document id"
            names = QUERY_COLUMNS if qcol is None else DOC_COLUMNS
            raise error(f"no {missing} column (one of {', '.join(names)}; found: {', '.join(map(str, row))})")
        if "score" in row and not is_missing(row["score"]):
            score = _number(row["score"])
            if score is None:
                raise error(f"score {row['score']!r} is not a finite number")
        elif "rank" in row and not is_missing(row["rank"]):
            rank = _number(row["rank"])
            if rank is None:
                raise error(f"rank {row['rank']!r} is not a finite number")
            score = -rank
        else:
            raise error("no `score` or `rank` value (rank 1 = best)")
        b.add(table.where(loc), error, as_id(row[qcol]), as_id(row[dcol]), score)


def read_run(path: Path, queries: set[str], docs: set[str], task: str) -> tuple[dict[str, dict[str, float]], int]:
    """(query id -> {doc id: score}, number of rows) of a run file, checked against the task's ids."""
    b = _Builder(Path(path), queries, docs, task)
    if Path(path).suffix.lower() in TABLE_EXTENSIONS:
        _read_rows(Path(path), b)
    else:
        _read_trec(Path(path), b)
    return b.rankings, b.rows


def task_ids(task: Any) -> tuple[set[str], set[str]]:
    """(every query id, every document id) of a task: the collection's queries (labelled or not) when it has
    one, else the queries of its evaluated splits; the corpus of its evaluated splits."""
    if not getattr(task, "data_loaded", True):
        task.load_data()
    collection = getattr(task, "collection", None)
    queries: set[str] = set(collection.queries) if collection is not None else set()
    docs: set[str] = set()
    for splits in (getattr(task, "dataset", None) or {}).values():
        for name, split in splits.items():
            if name not in task.eval_splits:
                continue
            if collection is None and split.get("queries") is not None:
                queries.update(map(str, split["queries"]["id"]))
            if split.get("corpus") is not None and not docs:
                docs.update(map(str, split["corpus"]["id"]))
    return queries, docs


def top(scores: dict[str, float], k: int) -> dict[str, float]:
    """The k best by (score, doc id) descending: the order mteb and trec_eval rank equal scores in."""
    if len(scores) <= k:
        return dict(scores)
    return dict(sorted(scores.items(), key=lambda x: (x[1], x[0]), reverse=True)[:k])


class RunFile:
    """One run file, read and checked once per (task, file content)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._read: dict[tuple[str, str], dict[str, dict[str, float]]] = {}

    def _key(self, task_name: str) -> tuple[str, str]:
        if not self.path.is_file():
            raise ConfigError(display_path(self.path), "run file not found: fix the model's `path:`")
        return task_name, value_weights(None, paths=[str(self.path)]) or ""

    def for_task(self, task: Any) -> dict[str, dict[str, float]]:
        """The file's rankings, checked against every query and document id of the task."""
        key = self._key(task.metadata.name)
        if key not in self._read:
            queries, docs = task_ids(task)
            self._read[key] = read_run(self.path, queries, docs, task.metadata.name)[0]
        return self._read[key]

    def rankings(self, task_name: str, queries: set[str], docs: set[str]) -> dict[str, dict[str, float]]:
        """As `for_task` when that ran (the runner checks first); else checked against the ids given."""
        key = self._key(task_name)
        if key not in self._read:
            self._read[key] = read_run(self.path, queries, docs, task_name)[0]
        return self._read[key]


class RunFileSearch:
    """mteb search protocol over a run file: search returns the file's documents per query (top_k)."""

    encoded = 0  # nothing is encoded: the runner's counts stay 0
    reused = 0

    def __init__(self, run: RunFile, meta: Any) -> None:
        self.run, self.mteb_model_meta = run, meta
        self.corpus_ids: set[str] = set()
        self.missing: dict[tuple[str, str], int] = {}  # (task, split) -> queries the file lacks
        self.asked: dict[tuple[str, str], int] = {}

    def note_for(self, task_name: str) -> str:
        """What the run prints after this candidate on a task: how many queries the file lacks."""
        mine = [k for k in self.asked if k[0] == task_name]
        missing, asked = sum(self.missing[k] for k in mine), sum(self.asked[k] for k in mine)
        return f"{missing} of {asked} queries not in the run file (they retrieve nothing)" if missing else ""

    def index(self, corpus: Any, **kwargs: Any) -> None:
        """Nothing to index: the rankings are the file's (the corpus ids check it when no task did)."""
        self.corpus_ids = set(map(str, corpus["id"][:]))  # [:]: one Arrow read of a datasets Column, not row by row

    def search_one(self, task_name: str, query_id: str, top_k: int = 1000) -> dict[str, float]:
        """One query's ranked documents, in process (a latency pass times one query at a time)."""
        return top(self.run.rankings(task_name, {query_id}, self.corpus_ids).get(query_id, {}), top_k)

    def search(self, queries: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, top_k: int,
               **kwargs: Any) -> dict[str, dict[str, float]]:
        ids = [str(q) for q in queries["id"]]
        rankings = self.run.rankings(task_metadata.name, set(ids), self.corpus_ids)
        self.missing[(task_metadata.name, hf_split)] = sum(q not in rankings for q in ids)
        self.asked[(task_metadata.name, hf_split)] = len(ids)
        return {q: top(rankings.get(q, {}), top_k) for q in ids}


def check(run: RunFile, tasks: list[Any]) -> None:
    """Read and check the file against every task before anything runs (a bad line: ConfigError, exit 2)."""
    for task in tasks:
        run.for_task(task)


def from_facts(f: SpecFacts, device: str | None = None, ctx: Any = None, embedder: Any = None) -> Candidate:
    """The Candidate of a `kind: run` entry (nothing is read until it runs or is checked)."""
    spec, path = f.spec, Path(f.weight_paths[0])
    run = RunFile(path)
    name, revision = f.results_name, spec.revision or "local"

    def load() -> RunFileSearch:
        from mteb.models.model_meta import ModelMeta

        return RunFileSearch(run, ModelMeta.create_empty().model_copy(update={"name": name, "revision": revision}))

    return Candidate(value=model_value(f, revision, cache_variant=""),
                     load=load, public_name=spec.public_name, cacheable=False,
                     info={"source": str(path), "kind": "run"}, check=lambda tasks: check(run, tasks))
