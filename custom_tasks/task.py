"""Turn a validated Collection + TaskConfig into a genuine mteb `AbsTaskRetrieval`.

The task is registered in mteb's own task registry so `mteb.get_task(name)`, result loading and
aggregation (`get_aggregated_scores`, `Benchmark`) work exactly as for public tasks. The dataset
revision is the collection's content hash: changed data is a new revision, never a stale score.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.task_metadata import TaskMetadata

from .collection import Collection
from .config import TaskConfig, _pydantic_message, find_task_configs, resolve_task_config
from .errors import ConfigError
from .mteb_private import evaluate_subset, mrr, registry_module, tasks_registry
from .query_ids import labels_hash, text_hash
from .sources import load_collection

#: the stand-in document id that carries questions awaiting judgment through mteb's filter (never in a corpus)
AWAITING_DOC = "\x00awaiting-judgment"

#: Metric prefixes (as in mteb's TaskResult JSON) we keep per query, mapped to pytrec_eval's names.
_PYTREC_NAMES = {"ndcg_at": "ndcg_cut", "map_at": "map_cut", "recall_at": "recall", "precision_at": "P", "hit_rate_at": "success"}


class PerQueryCapture:
    """Mixin for any mteb retrieval task: keeps mteb's per-query scores and top-k rankings.

    mteb computes per-query numbers (pytrec_eval + its own MRR) and then only reports means;
    `task_specific_scores` is the documented hook that sees them, so nothing is recomputed.
    """

    k_values: Sequence[int]
    keep_top_k: int | None = None  # None: every document mteb ranked (its top_k)

    def task_specific_scores(
        self,
        scores: dict[str, dict[str, float]],
        qrels: dict[str, dict[str, int]],
        results: dict[str, dict[str, float]],
        hf_split: str,
        hf_subset: str,
    ) -> dict[str, float]:
        if getattr(self, "ranking_awaiting", False):  # the questions awaiting judgment: ranked to be pooled only
            self.awaiting_rankings[(hf_split, hf_subset)] = {
                qid: dict(sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)[: self.keep_top_k])
                for qid, docs in results.items()}
            return {}
        if not hasattr(self, "per_query"):
            self.per_query = {}
            self.rankings = {}
        self.per_query[(hf_split, hf_subset)] = per_query_scores(scores, qrels, results, self.k_values)
        if not hasattr(self, "query_hashes"):
            self.query_hashes = {}
        self.query_hashes[(hf_split, hf_subset)] = query_hashes(self, hf_split, hf_subset, qrels)
        if not hasattr(self, "corpus_ids"):
            self.corpus_ids = {}
        self.corpus_ids[(hf_split, hf_subset)] = corpus_ids(self, hf_split, hf_subset)
        self.rankings[(hf_split, hf_subset)] = {
            qid: dict(sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)[: self.keep_top_k])
            for qid, docs in results.items()
        }
        return {}


class PrivateRetrievalTask(PerQueryCapture, AbsTaskRetrieval):
    """Base class of every private task; subclasses are made per collection by `task_class`."""

    collection: ClassVar[Collection | None] = None
    task_config: ClassVar[TaskConfig | None] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: (split, subset) -> metric -> query_id -> score, filled during evaluation
        self.per_query: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
        #: (split, subset) -> query_id -> {doc_id: score} for the top-k retrieved documents
        self.rankings: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
        #: (split, subset) -> {"text": {query_id: hash}, "labels": {query_id: hash}} (query_hashes)
        self.query_hashes: dict[tuple[str, str], dict[str, dict[str, str]] | None] = {}
        #: (split, subset) -> sorted ids of the documents searched (corpus_ids): what a corpus change counts
        self.corpus_ids: dict[tuple[str, str], list[str] | None] = {}
        #: (split, subset) -> query_id -> {doc_id: score}: the questions awaiting judgment, ranked to be pooled
        self.awaiting_rankings: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
        self.ranking_awaiting = False

    def _evaluate_subset(self, model: Any, data_split: Any, **kwargs: Any) -> Any:
        """mteb's evaluation (mteb_private: evaluate_subset), then, on the first split, the same search for the
        questions awaiting judgment (added questions with no graded document): mteb drops questions without a
        positive label before searching, so without this no candidate would rank them and `labels pool` could
        not pool them. Their rankings are kept apart (``awaiting_rankings``) and never scored."""
        scores = evaluate_subset(self, model, data_split, **kwargs)
        awaiting = self.collection.awaiting_judgment() if self.collection is not None else []
        if awaiting and kwargs.get("hf_split") == self.eval_splits[0]:
            from datasets import Dataset

            ids = [q for q in awaiting if q in self.collection.queries]
            queries = Dataset.from_dict({"id": ids, "text": [self.collection.queries[q] for q in ids]})
            # a stand-in label keeps them through mteb's filter; the scores of that call are thrown away
            split = {"corpus": data_split["corpus"], "queries": queries, "top_ranked": None,
                     "relevant_docs": {q: {AWAITING_DOC: 1} for q in ids}}
            self.ranking_awaiting = True
            try:
                evaluate_subset(self, model, split, **{**kwargs, "prediction_folder": None})
            finally:
                self.ranking_awaiting = False
        return scores

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        """Build mteb's in-memory split data from the collection (no hub access)."""
        if self.data_loaded:
            return
        if self.collection is None:
            self.__class__.collection = _load_collection(self.task_config)
        self.dataset = {"default": collection_to_split_data(self.collection, self.eval_splits)}
        self.data_loaded = True


def with_per_query_capture(task: AbsTaskRetrieval) -> AbsTaskRetrieval:
    """Give a public mteb task instance the same per-query capture as private tasks."""
    if isinstance(task, PerQueryCapture):
        return task
    task.__class__ = type(task.__class__.__name__, (PerQueryCapture, task.__class__), {})
    task.per_query, task.rankings, task.query_hashes, task.corpus_ids = {}, {}, {}, {}
    return task


HASH_HEX = 16  # 64 bits of sha1 per query: enough to tell two texts apart, small in the per-query file


def query_hashes(task: Any, split: str, subset: str, qrels: dict[str, dict[str, int]]
                 ) -> dict[str, dict[str, str]] | None:
    """Hashes of each evaluated query's text and labels, stored with its scores so comparisons pair a query
    only with the same question (runners/statistics/pairing.py); None when the task's queries cannot be read."""
    try:
        queries = task.dataset[subset][split]["queries"]
        texts = dict(zip(queries["id"], queries["text"]))
    except (AttributeError, KeyError, TypeError, ValueError):  # a task laid out otherwise: scores stay usable
        return None
    return {"text": {str(q): text_hash(t)[:HASH_HEX] for q, t in texts.items()},
            "labels": {str(q): labels_hash(qrels.get(q, {}))[:HASH_HEX] for q in texts}}


def corpus_ids(task: Any, split: str, subset: str) -> list[str] | None:
    """Sorted ids of the documents the task searched, stored with the rankings so a later comparison can say
    how the corpus changed ("+3 documents, -0"); None when the task's corpus cannot be read."""
    try:
        ids = task.dataset[subset][split]["corpus"]["id"]
        # [:] reads a `datasets` Column in one Arrow conversion; iterating it formats row by row (15 s per 200k rows)
        return sorted(map(str, ids[:]))
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def per_query_scores(
    scores: dict[str, dict[str, float]],
    qrels: dict[str, dict[str, int]],
    results: dict[str, dict[str, float]],
    k_values: Sequence[int],
) -> dict[str, dict[str, float]]:
    """Per-query metrics named as in mteb's JSON (``ndcg_at_10`` ...); their means are mteb's aggregates."""
    out: dict[str, dict[str, float]] = {}
    for k in k_values:
        for ours, theirs in _PYTREC_NAMES.items():
            out[f"{ours}_{k}"] = {qid: float(s[f"{theirs}_{k}"]) for qid, s in scores.items()}
    mrr_lists = mrr(qrels, results, list(k_values))
    qids = list(results.keys())
    for k in k_values:
        out[f"mrr_at_{k}"] = dict(zip(qids, map(float, mrr_lists[f"MRR@{k}"])))
    return out


def collection_to_split_data(collection: Collection, splits: Sequence[str]) -> dict[str, Any]:
    """mteb v2 `RetrievalSplitData` per split; the corpus Dataset is shared between splits.

    A large corpus (a ``CorpusStore``) is handed over as its memory-mapped Dataset: no Python list of it.
    """
    from datasets import Dataset

    stored = getattr(collection.corpus, "dataset", None)
    if stored is not None:
        corpus = stored()
    else:
        ids = list(collection.corpus)
        corpus = Dataset.from_dict(
            {
                "id": ids,
                "title": [collection.corpus[i].get("title") or "" for i in ids],
                "text": [collection.corpus[i]["text"] for i in ids],
            }
        )
    data: dict[str, Any] = {}
    for split in splits:
        qrels = collection.qrels[split]
        qids = [q for q in collection.queries if q in qrels]
        queries = Dataset.from_dict({"id": qids, "text": [collection.queries[q] for q in qids]})
        data[split] = {
            "corpus": corpus,
            "queries": queries,
            "relevant_docs": {q: dict(d) for q, d in qrels.items()},
            "top_ranked": None,
        }
    return data


def build_metadata(cfg: TaskConfig, revision: str) -> TaskMetadata:
    """mteb's TaskMetadata; its validation errors (license, domains, languages) become one line."""
    try:
        return _metadata(cfg, revision)
    except ValidationError as e:
        if "license" in str(e.errors()[0]["loc"]):
            raise ConfigError(cfg.path, f"license '{cfg.license}' is not one mteb accepts: use an id such as "
                                        "cc-by-4.0 or apache-2.0, a URL, or 'not specified'") from None
        raise ConfigError(cfg.path, _pydantic_message(e).split("[")[0].strip()) from None


def _metadata(cfg: TaskConfig, revision: str) -> TaskMetadata:
    prompt: dict[str, str] | None = dict(cfg.prompts) if cfg.prompts else None
    return TaskMetadata(
        name=cfg.name,
        description=cfg.description,
        reference=cfg.reference,
        dataset={"path": f"private-mteb/{cfg.name}", "revision": revision},
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=list(cfg.splits),
        eval_langs=list(cfg.languages),
        main_score=cfg.main_score,
        date=cfg.date,
        domains=list(cfg.domains) or None,
        task_subtypes=None,
        license=cfg.license,
        annotations_creators=cfg.annotations_creators,
        dialect=[],
        sample_creation="created",
        bibtex_citation="",
        prompt=prompt,
        is_public=False,
    )


def _load_collection(cfg: TaskConfig | None) -> Collection:
    if cfg is None:
        raise RuntimeError("task has neither a collection nor a config")
    collection = load_collection(cfg.source, cfg.base_dir, cfg.name)
    missing = [s for s in cfg.splits if s not in collection.qrels]
    if missing:
        raise ConfigError(cfg.path, f"split(s) {missing} listed in 'splits' have no labels (found: {collection.splits})")
    return collection


def task_class(cfg: TaskConfig, collection: Collection | None = None) -> type[PrivateRetrievalTask]:
    """A task class for this config; with a collection its revision is the content hash."""
    revision = collection.content_hash() if collection is not None else "not-loaded"
    attrs = {
        "metadata": build_metadata(cfg, revision),
        "collection": collection,
        "task_config": cfg,
        "ignore_identical_ids": cfg.ignore_identical_ids,
        "k_values": cfg.effective_k_values,  # validated with main_score in TaskConfig
    }
    return type(_class_name(cfg.name), (PrivateRetrievalTask,), attrs)


def register(cls: type[AbsTaskRetrieval]) -> None:
    """Put a task class in mteb's registry (replacing an older revision of the same task)."""
    registry = registry_module()
    name = cls.metadata.name
    tasks_registry()[name] = cls
    registry.TASK_LIST = [t for t in registry.TASK_LIST if t.metadata.name != name] + [cls]


def task_from_collection(collection: Collection, cfg: TaskConfig) -> PrivateRetrievalTask:
    """An mteb task instance for an in-memory collection (used by experiments and tests)."""
    cls = task_class(cfg, collection)
    register(cls)
    return cls()


def get_task(name_or_path: str | Path) -> PrivateRetrievalTask:
    """Load, validate and register a private task by name (configs/tasks) or YAML path."""
    cfg = resolve_task_config(name_or_path)
    return task_from_collection(_load_collection(cfg), cfg)


def register_all(directory: Path | None = None) -> list[str]:
    """Register every configured task's metadata (no data loading) so mteb can load/aggregate results."""
    names = []
    for name, path in find_task_configs(directory).items():
        if name in tasks_registry():
            names.append(name)
            continue
        try:
            cfg = TaskConfig.from_file(path)
        except Exception:  # a broken config must not block loading other results
            continue
        register(task_class(cfg))
        names.append(name)
    return names


def register_project_tasks(path: Path) -> list[Path]:
    """Register the tasks of the current project and of the project `path` (a results folder) lies in, found
    upward from it like the current one, so results read from anywhere know their tasks. Returns the tasks
    folders looked in (one with $PRIVATE_MTEB_PROJECT / $PRIVATE_MTEB_TASKS_DIR set: those decide)."""
    import os

    from .config import DEFAULT_TASKS_DIR, PROJECT_ENV, TASKS_DIR_ENV, project_root, tasks_dir

    register_all()
    folders = [tasks_dir()]
    own = project_root(path.resolve()) / DEFAULT_TASKS_DIR
    if not (os.environ.get(PROJECT_ENV) or os.environ.get(TASKS_DIR_ENV)) and own.is_dir() and own not in folders:
        register_all(own)
        folders.append(own)
    return folders


def _class_name(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name) + "Task"
