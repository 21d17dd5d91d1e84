"""Why a model fails: its worst queries, where two candidates differ, and what one query retrieved.

Reads only stored results (per-query scores, top-k rankings, candidates.json) plus, for the text of a
query and its documents, the collection itself, read live. Text is returned to the caller for display and
is never written anywhere: result files keep ids and scores only.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.collection import Collection
from custom_tasks.errors import ConfigError

from ...results.export import stored_rankings, trec_order
from ...results.store import find_run, model_dir_name, per_query_path, read_json, read_per_query
from ...statistics.analysis_errors import AnalysisError
from ...statistics.pairing import pair_queries
from ...statistics.per_query import label_of, load_fingerprinted, result_models

#: Differences smaller than this count as ties (scores are floats from pytrec_eval).
TIE_TOLERANCE = 1e-9
SNIPPET_CHARS = 120
BM25_KEYS = {"bm25", "bm25s"}


def _matches(results_dir: Path, names: list[str], key: str) -> list[str]:
    if key in names:
        return [key]
    labels = {n: label_of(results_dir, n) for n in names}
    hits = [n for n in names if key in (labels[n], model_dir_name(n))]
    if not hits and key.lower() in BM25_KEYS:
        hits = [n for n in names if "bm25" in n.lower()]
    if not hits:
        hits = [n for n in names if n.split("/")[-1] == key or labels[n].lower() == key.lower()]
    return hits


def resolve_model(results_dir: Path, task: str, key: str, prefer: list[str] | None = None) -> str:
    """Results name of the candidate called ``key`` (its results name, label or folder name).

    ``prefer``: the config's candidates (candidate_set.config_names): a label matches the config's current
    candidate first, so a model swapped under one label is not "ambiguous" with the one it replaced.
    Raises ConfigError listing the candidates with results for the task when nothing or several match.
    """
    names = result_models(results_dir, task)
    if prefer is not None:
        hits = _matches(results_dir, [n for n in names if n in prefer], key)
        if len(hits) == 1:
            return hits[0]
    hits = _matches(results_dir, names, key)
    if len(hits) == 1:
        return hits[0]
    labels = {n: label_of(results_dir, n) for n in names}
    known = ", ".join(f"{labels[n]} ({n})" if labels[n] != n else n for n in names) or "none"
    problem = "is ambiguous" if hits else "has no results"
    raise ConfigError("--model", f"model '{key}' {problem} for task '{task}' in {results_dir} (known: {known})")


def _per_query_file(results_dir: Path, model: str, task: str, split: str) -> dict[str, Any]:
    folder = find_run(results_dir, model, task)
    path = per_query_path(folder, split) if folder else None
    if path is None or not path.exists():
        raise FileNotFoundError(f"no per-query scores for '{model}' on '{task}' ({split} split) in {results_dir}: "
                                "run `private-mteb run` first")
    return read_per_query(path)


def load_scores(results_dir: Path, model: str, task: str, metric: str = "ndcg_at_10", split: str = "test",
                subset: str = "default") -> dict[str, float]:
    """query id -> score of one model; an unknown metric is an error listing the stored ones."""
    subsets = _per_query_file(results_dir, model, task, split)["subsets"]
    if subset not in subsets:
        raise ConfigError("--subset", f"no subset '{subset}' (stored: {', '.join(subsets)})")
    metrics = subsets[subset]
    if metric not in metrics:
        raise ConfigError("--metric", f"unknown metric '{metric}' (stored: {', '.join(sorted(metrics))})")
    return {q: float(s) for q, s in metrics[metric].items()}


# --------------------------------------------------------------------------- worst


@dataclass
class WorstQuery:
    query_id: str
    score: float
    text: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


def worst_queries(results_dir: Path, task: str, model: str, metric: str = "ndcg_at_10", n: int = 10,
                  split: str = "test", collection: Collection | None = None) -> list[WorstQuery]:
    """The ``n`` lowest-scoring queries (ties by query id); text and tags when the collection is given."""
    scores = load_scores(results_dir, model, task, metric, split)
    rows = sorted(scores.items(), key=lambda kv: (kv[1], kv[0]))[:max(n, 0)]
    return [WorstQuery(q, s, *_text_tags(collection, q)) for q, s in rows]


def _text_tags(collection: Collection | None, qid: str) -> tuple[str | None, dict[str, str]]:
    if collection is None:
        return None, {}
    return collection.queries.get(qid), dict(collection.query_tags.get(qid, {}))


def model_judged(results_dir: Path, task: str, model: str, collection: Collection | None, split: str = "test",
                 k: int = 10) -> float | None:
    """The model's judged@k on the task (share of its top-k carrying any label, mean over the labelled queries);
    None for a public task or a run stored without rankings."""
    from ...labels.pool.judged import judged_at_k
    from ...labels.pool.judged import stored_rankings as judged_rankings

    qrels = collection.qrels.get(split) if collection is not None else None
    if not qrels:
        return None
    try:
        rankings, _ = judged_rankings(results_dir, model, task, split)
    except AnalysisError:
        return None
    value = float(judged_at_k(rankings, qrels, k).mean())
    return None if math.isnan(value) else value


# --------------------------------------------------------------------------- diff


@dataclass
class QueryDiff:
    query_id: str
    a: float
    b: float
    delta: float  # b - a: positive when B wins
    text: str | None = None


@dataclass
class DiffReport:
    task: str
    metric: str
    a: str
    b: str
    a_label: str
    b_label: str
    wins: int  # queries where B beats A
    losses: int  # queries where B loses to A
    ties: int
    mean_a: float
    mean_b: float
    only_in_one: int  # queries scored for one candidate only (left out of the counts)
    rows: list[QueryDiff]
    #: '' when A and B were scored on the same data; else what differs (pairing.py) and on how many queries
    data_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def diff_queries(results_dir: Path, task: str, a: str, b: str, metric: str = "ndcg_at_10", split: str = "test",
                 collection: Collection | None = None, tolerance: float = TIE_TOLERANCE) -> DiffReport:
    """Per-query B - A on the queries both scored: wins/losses/ties (from B's side), largest swings first."""
    (rev_a, fa), (rev_b, fb) = (load_fingerprinted(results_dir, m, task, metric, split) for m in (a, b))
    pairing = pair_queries(fa, fb, rev_a, rev_b)  # same id and same question (text and labels) only
    sa, sb = ({q: s for q, (_, s) in f.items()} for f in (fa, fb))
    common = list(pairing.paired)
    rows = [QueryDiff(q, sa[q], sb[q], sb[q] - sa[q], _text_tags(collection, q)[0]) for q in common]
    rows.sort(key=lambda r: (-abs(r.delta), r.query_id))
    wins = sum(r.delta > tolerance for r in rows)
    losses = sum(r.delta < -tolerance for r in rows)
    mean = (lambda xs: math.fsum(xs) / len(xs) if xs else float("nan"))
    return DiffReport(task, metric, a, b, label_of(results_dir, a), label_of(results_dir, b), wins, losses,
                      len(rows) - wins - losses, mean([r.a for r in rows]), mean([r.b for r in rows]),
                      len(set(sa) ^ set(sb)), rows,
                      "" if pairing.same_data else (f"{label_of(results_dir, a)} and {label_of(results_dir, b)} were "
                                                    f"scored on different data ({pairing.describe()}): compared on the "
                                                    f"{len(common)} unchanged queries"))


# --------------------------------------------------------------------------- one query


@dataclass
class Hit:
    rank: int
    doc_id: str
    score: float
    grade: int | None  # None: not labelled for this query
    title: str
    snippet: str


@dataclass
class CandidateHits:
    model: str
    label: str
    metric_score: float | None  # the candidate's per-query score on the chosen metric
    hits: list[Hit]
    found: list[str]  # labelled documents (grade > 0) in the top-k
    judged_at_10: float | None = None  # over the whole task, not this query: how much of its score rests on labels


@dataclass
class QueryView:
    task: str
    query_id: str
    text: str
    tags: dict[str, str]
    metric: str
    labels: list[Hit]  # labelled documents, best grade first (rank 0: not a ranking position)
    candidates: list[CandidateHits]
    stale: list[str]  # candidates whose run used another version of the collection

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def snippet(doc: dict[str, str], chars: int = SNIPPET_CHARS) -> str:
    text = " ".join(doc.get("text", "").split())
    return text if len(text) <= chars else text[:chars - 1].rstrip() + "…"


def query_view(results_dir: Path, task: str, query_id: str, collection: Collection, models: list[str] | None = None,
               k: int = 10, metric: str = "ndcg_at_10", split: str = "test") -> QueryView:
    """One query's text, labels and each candidate's top-k marked with grades (text read live)."""
    if query_id not in collection.queries:
        near = sorted(collection.queries)[:5]
        raise ConfigError("QUERY_ID", f"no query '{query_id}' in task '{task}' (e.g. {', '.join(near)})")
    qrels = collection.qrels.get(split, {}).get(query_id, {})
    doc = collection.corpus.get
    labels = [Hit(0, d, float(g), g, doc(d, {}).get("title", ""), snippet(doc(d, {})))
              for d, g in sorted(qrels.items(), key=lambda kv: (-kv[1], kv[0]))]
    names = models or result_models(results_dir, task)
    if not names:
        raise FileNotFoundError(f"no results for task '{task}' in {results_dir}: run `private-mteb run` first")
    revision = collection.content_hash()
    cands, stale = [], []
    for name in names:
        ranking = stored_rankings(results_dir, name, task, split).get(query_id, {})
        scores = load_scores(results_dir, name, task, metric, split)
        hits = [Hit(i, d, s, qrels.get(d), doc(d, {}).get("title", ""), snippet(doc(d, {})))
                for i, (d, s) in enumerate(trec_order(ranking)[:k], 1)]
        cands.append(CandidateHits(name, label_of(results_dir, name), scores.get(query_id), hits,
                                   [h.doc_id for h in hits if h.grade],
                                   model_judged(results_dir, task, name, collection, split)))
        if find_run(results_dir, name, task).name != revision:
            stale.append(name)
    return QueryView(task, query_id, collection.queries[query_id], dict(collection.query_tags.get(query_id, {})),
                     metric, labels, cands, stale)
