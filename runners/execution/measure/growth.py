"""Corpus-growth experiment: score a model on nested random subsets of the corpus, from cached vectors.

The labelled queries are held fixed and every relevant (grade > 0) document is kept, so only the other
documents (distractors, including those judged irrelevant) come and go: how fast the metric falls with
corpus size is how retrieval will degrade as the base grows. The full corpus is scored first through the
model's embedding cache (the same folder as its plain run: nothing encoded again if it ran), then each
subset is an mteb task over a restricted corpus, scored by mteb itself (same pipeline as `run`), so
fraction 1.0 equals the plain run exactly. With `distractors:` (runners/execution/measure/distractors.py) fractions
above 1.0 add another collection's documents to the whole corpus, in a nested random order per repeat, so the
trend is measured beyond today's corpus instead of only extrapolated.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from custom_tasks.collection import Collection
from custom_tasks.errors import ConfigError

from ...config.benchmark import BenchmarkConfig
from ...config.experiments import GrowthEntry, distractors_path, parse_experiments
from ...results.growth_store import growth_path
from ...results.store import atomic_write_json, read_json
from .distractors import Distractors, load_distractors
from ..candidates.experiment_candidates import dense_candidate, shared_encoder
from ..tasks import load_task, task_revision


@dataclass
class GrowthRecord:
    model: str
    label: str
    task: str
    status: str  # "ran" | "skipped"
    path: Path
    encoded: int = 0  # texts the embedding cache had to encode (0 when the plain run came first)
    seconds: float = 0.0


def growth_params(entry: GrowthEntry, metrics: list[str], distractors: Distractors | None = None) -> dict[str, Any]:
    """What identifies a stored curve (its file name hashes it); distractors by name as written and content."""
    params: dict[str, Any] = {"fractions": list(entry.fractions), "repeats": entry.repeats, "seed": entry.seed,
                              "metrics": sorted(set(metrics)), "v": 2}
    if distractors is not None:
        params["distractors"] = {"path": entry.distractors, "hash": distractors.content_hash}
    return params


def extra_needed(fraction: float, n_corpus: int) -> int:
    """Distractor documents a fraction above 1.0 adds: round(f * N) - N."""
    return max(0, round(fraction * n_corpus) - n_corpus)


def nested_subsets(corpus_ids: list[str], labelled: set[str], fractions: list[float], repeats: int,
                   seed: int, extra_ids: Sequence[str] = ()) -> list[tuple[float, int, list[str]]]:
    """(fraction, repeat, doc ids) with every labelled document; within a repeat, smaller is a subset of larger.

    A fraction f keeps round(f * N) documents: all labelled ones plus the first of a seeded random order of
    the others (never fewer than the labelled ones). Fraction 1.0 is the whole corpus, once. Above 1.0 the
    whole corpus plus the first round(f * N) - N of a seeded random order of `extra_ids` (the distractors).
    """
    rest = [d for d in corpus_ids if d not in labelled]
    keep_order = {d: i for i, d in enumerate(corpus_ids)}
    keep_order.update({d: len(corpus_ids) + i for i, d in enumerate(extra_ids)})
    n = len(corpus_ids)
    out = []
    for r in range(repeats):
        order = [rest[i] for i in np.random.default_rng([seed, r]).permutation(len(rest))]
        extra = [extra_ids[i] for i in np.random.default_rng([seed, r, 1]).permutation(len(extra_ids))]
        for f in fractions:
            if f == 1.0 and r > 0:
                continue  # the whole corpus is the same subset in every repeat
            if f > 1.0:
                m = extra_needed(f, n)
                if m > len(extra):
                    raise ValueError(f"fraction {f:g} needs {m} distractor documents, only {len(extra)} given")
                out.append((f, r, list(corpus_ids) + sorted(extra[:m], key=keep_order.__getitem__)))
                continue
            m = max(0, min(len(rest), round(f * n) - len(labelled)))
            chosen = labelled | set(order[:m])
            out.append((f, r, sorted(chosen, key=keep_order.__getitem__)))  # the corpus' own order
    return out


def _subset(collection: Collection, ids: list[str], extra: Mapping[str, dict[str, str]]) -> Collection:
    keep = set(ids)
    # one streamed pass: a disk-backed CorpusStore yields items() batch by batch instead of a lookup per id
    found = {d: doc for d, doc in collection.corpus.items() if d in keep}
    corpus = {d: extra[d] if d in extra else found[d] for d in ids}
    return Collection(name=collection.name, corpus=corpus, queries=collection.queries, qrels=collection.qrels,
                      query_tags=collection.query_tags)


def _score(encoder: Any, task_cfg: Any, coll: Collection, batch_size: int) -> dict[tuple[str, str], Any]:
    """mteb's per-query scores of `encoder` on a private task over `coll` (not registered, nothing written)."""
    import mteb

    from custom_tasks.task import task_class

    task = task_class(task_cfg, coll)()
    task.per_query, task.rankings, task.keep_top_k = {}, {}, 0
    mteb.evaluate(encoder, task, cache=None, encode_kwargs={"batch_size": batch_size, "show_progress_bar": False},
                  show_progress_bar=False)
    return task.per_query


def growth_curve_record(encoder: Any, task: Any, entry: GrowthEntry, metrics: list[str], batch_size: int = 32,
                        distractors: Distractors | None = None) -> dict[str, Any]:
    """Per-query scores of every (fraction, repeat) subset of one task (largest first, to fill the cache)."""
    if getattr(task, "collection", None) is None:
        task.load_data()
    coll, cfg = task.collection, task.task_config
    split = task.eval_splits[0]
    # documents with a positive grade are kept; judged-irrelevant ones (grade 0) are distractors like the rest
    labelled = {d for s in task.eval_splits for docs in coll.qrels[s].values() for d, g in docs.items() if g > 0}
    extra = distractors.docs if distractors is not None else {}
    subsets = nested_subsets(list(coll.corpus), labelled, entry.fractions, entry.repeats, entry.seed, list(extra))
    subsets.sort(key=lambda s: -len(s[2]))  # the largest first: every later subset is a cache hit
    points = []
    for fraction, repeat, ids in subsets:
        pq = _score(encoder, cfg, _subset(coll, ids, extra), batch_size)[(split, "default")]
        points.append({"fraction": fraction, "repeat": repeat, "n_docs": len(ids),
                       "per_query": {m: pq[m] for m in metrics if m in pq}})
    points.sort(key=lambda p: (p["fraction"], p["repeat"]))
    return {"task": cfg.name, "dataset_revision": task_revision(task), "split": split,
            "n_corpus": len(coll.corpus), "n_labelled": len(labelled), "points": points,
            "n_distractors": len(extra)}


def _distractors(cfg: BenchmarkConfig, index: int, entry: GrowthEntry, task: Any,
                 seen: dict[Path, Any] | None = None) -> Distractors | None:
    """The entry's distractors, checked against this task's corpus size (enough for the largest fraction);
    `seen`: the run's reads, shared by its entries and tasks (load_distractors)."""
    path = distractors_path(cfg, entry)
    if path is None:
        return None
    if getattr(task, "collection", None) is None:
        task.load_data()
    corpus = task.collection.corpus
    own = getattr(task.task_config, "path", None)
    if own is not None and path.resolve() == Path(own).resolve():
        raise ConfigError(cfg.path, f"experiments[{index}] (growth): distractors names the task itself ({path}): "
                                    "give another collection's task YAML or corpus file")
    found = load_distractors(path, corpus, cfg.path, seen)
    top = entry.fractions[-1]
    need = extra_needed(top, len(corpus))
    if need > len(found.docs):
        most = (len(corpus) + len(found.docs)) / len(corpus)
        raise ConfigError(cfg.path, f"experiments[{index}] (growth): fraction {top:g} needs {need} distractor "
                                    f"documents on {task.metadata.name} ({len(corpus)} documents) but {path} has "
                                    f"{len(found.docs)}: use fractions up to {math.floor(most * 100) / 100:g}")
    return found


def run_growth(cfg: BenchmarkConfig, tasks: list[Any] | None = None, force: bool = False) -> list[GrowthRecord]:
    """Every `type: growth` entry on every private task of the config; stored curves are reused."""
    entries = [(i, e) for i, e in enumerate(parse_experiments(cfg)) if isinstance(e, GrowthEntry)]
    if not entries:
        return []
    tasks = tasks if tasks is not None else [load_task(t, cfg) for t in cfg.tasks]
    metrics = list(cfg.stats.metrics)
    out = []
    seen: dict[Path, Any] = {}  # distractor files read in this run
    for index, entry in entries:
        dense = dense_candidate(cfg, entry.model)
        for task in tasks:
            if getattr(task, "task_config", None) is None:
                continue  # a public mteb task: no collection to subsample
            distractors = _distractors(cfg, index, entry, task, seen)
            ms = sorted(set(metrics) | {task.metadata.main_score})
            params = growth_params(entry, ms, distractors)
            path = growth_path(cfg.results_path, dense.name, dense.revision, task.metadata.name,
                               task_revision(task), params)
            if path.exists() and not force:
                try:
                    read_json(path)
                    out.append(GrowthRecord(dense.name, dense.label, task.metadata.name, "skipped", path))
                    continue
                except (OSError, ValueError):
                    pass  # damaged: compute again
            encoder = shared_encoder(dense, cfg.cache_path)
            before, t0 = getattr(encoder, "encoded", 0), time.perf_counter()
            record = growth_curve_record(encoder, task, entry, ms, cfg.encode.batch_size, distractors)
            encoded = getattr(encoder, "encoded", 0) - before
            atomic_write_json(path, {"model": dense.name, "label": entry.label or dense.label,
                                     "revision": dense.revision, "params": params, "encoded": encoded, **record})
            out.append(GrowthRecord(dense.name, dense.label, task.metadata.name, "ran", path, encoded,
                                    time.perf_counter() - t0))
    return out
