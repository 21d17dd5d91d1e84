"""The latency pass: each candidate's own search answering one query at a time, timed, stored beside its scores.

Built as the evaluation builds it (the candidate's model behind its embedding cache, `search_model_for`, mteb's
rule for wrapping a plain encoder), indexed once, switched to serving (serving.py: queries encoded by the model,
documents held in memory), then asked each query of a fixed sample on its own: `search(queries=<one row>)`, the
same method mteb's evaluator calls. A reranked candidate is its first stage served the same way plus
`RerankSearch.rerank_one` without the score cache; a bi-encoder reranker's document vectors are index content
(encoded at index time, or kept from the run in this process), its query is encoded per query. A run file has no search to time.

Candidates are measured interleaved (per query, in rotating order) after a warm-up, so a busy moment of the
machine falls on all of them alike; the load average is recorded with the figures. mteb's per-search `datasets`
plumbing (query and corpus preparation, corpus chunks) is held, prepared once (served_inputs.py), and a null
candidate (`NullSearch`, interleaved with the others) measures what the pass still adds per query: its p50 is
subtracted from every candidate's times (`pass.overhead_ms`; `raw_latency_ms` keeps the figures before it). Stored as
`latency_<split>.json` in each (candidate, task) run folder, never in mteb's TaskResult and never among the files
identity.json vouches for (a latency pass never makes a result stale). Each record carries the run fingerprint
(execution/candidates/run_identity.py) of the candidate it timed: a figure is current only while the run folder's identity.json has the
same fingerprint (analysis/cost/cost.py withholds it as stale otherwise), so a changed setting is never shown with the
old setting's milliseconds.
"""

from __future__ import annotations

import gc
import logging
import os
import platform
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, cast

import numpy as np

from ...config.benchmark import BenchmarkConfig
from ...results.store import atomic_write_json, read_json, run_dir
from ..candidates.candidates import Candidate
from ..cache.embedding_cache import wrap_cache
from ..encoding.encode_rate import cpu_name
from ..candidates.run_identity import run_identity, value_weights
from ..cache.large_corpus import search_model_for
from .served_inputs import NullSearch, corpus_chunks_held, no_hybrid_bars, prepared_held
from .serving import DEFAULT_ENCODE_SAMPLE, Serving, index_bytes, parts, serve, static_facts, unserve
from ..tasks import task_revision

NOT_MEASURABLE = "latency not measurable (precomputed rankings)"
logger = logging.getLogger(__name__)


@dataclass
class LatencyOptions:
    queries: int = 12  # the fixed sample: evenly spaced over the task's queries (12 x 2: <= 10% of the demo's cold run)
    repeats: int = 2
    warmup: int = 1
    encode_sample: int = DEFAULT_ENCODE_SAMPLE  # documents encoded cold (cache bypassed) for docs/s
    threads: int | None = None  # torch intra-op threads during the pass (None: as configured)
    rates: dict[str, Any] = field(default_factory=dict)  # cold encode samples, shared within a pass
    loaded: dict[str, Any] = field(default_factory=dict)  # candidate name -> a model a run in this process loaded


@dataclass
class Served:
    cand: Candidate
    search: Any = None
    one: Callable[[int], Any] | None = None  # query position -> its ranking
    rearm: Callable[[], Any] = lambda: None  # before each query, untimed: the index stays as index() left it
    batch: Callable[[list[int]], Any] | None = None
    encoders: list[Any] = field(default_factory=list)
    index_seconds: float = 0.0
    encoded_in_index: int = 0
    note: str = ""
    error: str = ""
    times: list[list[float]] = field(default_factory=list)  # per repeat, ms per query
    first: Served | None = None  # a reranked candidate's first stage (served live)
    held_dim: int | None = None  # a bi-encoder reranker's document vectors held in the index: their dimension
    hold_seconds: float = 0.0  # encoding them (inside index_seconds)


def search_object(cand: Candidate, cfg: BenchmarkConfig, task: Any, loaded: Any = None) -> Any:
    """The object mteb's evaluator searches with for this candidate (runner + mteb's wrapping rule);
    `loaded`: the model a run in this process already loaded for it (else it is loaded now)."""
    from mteb.models import CrossEncoderProtocol, EncoderProtocol, SearchProtocol
    from mteb.models.search_wrappers import SearchCrossEncoderWrapper, SearchEncoderWrapper

    raw = loaded if loaded is not None else cand.load()
    cached = wrap_cache(raw, cand, cfg.cache_path, weights=value_weights(cand, cfg.cache_path))
    model = search_model_for(cached, task, cfg.encode.large_corpus_docs)
    if isinstance(model, EncoderProtocol) and not isinstance(model, SearchProtocol):
        return SearchEncoderWrapper(model)
    if isinstance(model, CrossEncoderProtocol):
        return SearchCrossEncoderWrapper(model)
    return model


class TaskView:
    """One task's (split, subset): corpus, queries and the fixed query sample, as mteb hands them to a search."""

    def __init__(self, task: Any, n_queries: int, batch_size: int) -> None:
        from custom_tasks.mteb_private import filter_queries_without_positives

        if not getattr(task, "data_loaded", False):
            task.load_data()
        self.task, self.split = task, task.eval_splits[0]
        self.subset = next(iter(task.dataset))
        data = task.dataset[self.subset][self.split]
        _, self.queries = filter_queries_without_positives(data["relevant_docs"], data["queries"])
        self.corpus, self.top_ranked = data["corpus"], data.get("top_ranked")
        n = len(self.queries)
        self.positions = sorted({int(round(x)) for x in np.linspace(0, n - 1, min(n_queries, n))}) if n else []
        self.rows = {p: self.queries.select([p]) for p in self.positions}
        self.texts = {p: str(self.rows[p]["text"][0]) for p in self.positions}
        self.kwargs = {"task_metadata": task.metadata, "hf_split": self.split, "hf_subset": self.subset,
                       "encode_kwargs": {"batch_size": batch_size, "show_progress_bar": False}}

    def index(self, search: Any) -> None:
        search.index(corpus=self.corpus, num_proc=None, **self.kwargs)

    def search(self, search: Any, queries: Any) -> dict[str, dict[str, float]]:
        return search.search(queries=queries, top_k=self.task._top_k, top_ranked=self.top_ranked, **self.kwargs)


def _prepare(cand: Candidate, cfg: BenchmarkConfig, view: TaskView, others: dict[str, Served],
             opts: LatencyOptions) -> Served:
    s = Served(cand)
    if cand.kind == "run":
        s.note = NOT_MEASURABLE
        return s
    s.search = search_object(cand, cfg, view.task, opts.loaded.get(cand.name))
    if type(s.search).__name__ == "RerankSearch":
        return _prepare_rerank(s, cfg, view, others, opts)
    s.encoders = serve(s.search, opts.encode_sample, opts.rates)
    before = sum(e.encoded for e in s.encoders)
    t0 = time.perf_counter()
    view.index(s.search)
    s.index_seconds = time.perf_counter() - t0
    s.encoded_in_index = sum(e.encoded for e in s.encoders) - before
    if any(type(p).__name__ == "FaissAnnIndex" for p in parts(s.search)):
        s.note = "includes the evaluation's exact-search agreement check on each query (an upper bound)"
    held = [p for p in parts(s.search) if hasattr(p, "task_corpus")]  # mteb forgets its corpus after a search
    s.rearm = lambda: [setattr(p, "task_corpus", view.corpus) for p in held]  # type: ignore[attr-defined]
    s.one = lambda p: view.search(s.search, view.rows[p])
    s.batch = lambda ps: view.search(s.search, view.queries.select(ps))
    return s


def _prepare_rerank(s: Served, cfg: BenchmarkConfig, view: TaskView, others: dict[str, Served],
                    opts: LatencyOptions) -> Served:
    """Served reranking = the first stage served (its own search, live) + `rerank_one` without the score cache."""
    from ..candidates.rerank_candidate import order

    search = s.search
    first = others.get(search.first.name) or _prepare(search.first, cfg, view, others, opts)
    if first.one is None:
        s.note = f"first stage: {first.note or first.error}"
        return s
    others.setdefault(search.first.name, first)
    t0 = time.perf_counter()
    view.index(search)
    needed: set[str] = set()
    for p in view.positions:  # the documents the sample can reach: their texts held, as a served index holds them
        first.rearm()
        needed |= set(order(next(iter(first.one(p).values()), {}))[:search.depth])
    held_texts = search._doc_texts(needed)
    scorer = search.loaded_scorer()
    if hasattr(scorer, "hold"):  # a bi-encoder reranker's document vectors are index content, not query work
        before = scorer.doc_seconds
        scorer.hold(list(held_texts.values()))
        s.hold_seconds = scorer.doc_seconds - before  # counted once, as the docs/s rate below
        s.held_dim = next((int(v.shape[-1]) for v in scorer.held.values()), None)
    s.index_seconds = first.index_seconds + time.perf_counter() - t0
    s.encoders, s.note = first.encoders, f"first stage '{first.cand.label}' + reranker, per query"
    s.first = first

    def texts_of(ranking: dict[str, float]) -> dict[str, str]:
        top = order(ranking)[:search.depth]
        return held_texts if all(d in held_texts for d in top) else search._doc_texts(set(top))

    def one(p: int) -> Any:
        ranking = next(iter(first.one(p).values()), {})
        return search.rerank_one(view.texts[p], ranking, texts_of(ranking), use_cache=False)

    def batch(ps: list[int]) -> Any:
        rankings = first.batch(ps)
        pairs = []
        for p in ps:
            ranking = next((r for q, r in rankings.items() if q == str(view.rows[p]["id"][0])), {})
            ranked, texts = order(ranking), texts_of(ranking)
            pairs += [(view.texts[p], texts[d]) for d in ranked[:search.depth]]
        return search.score_served(pairs) if pairs else []

    s.one, s.batch, s.rearm = one, batch, first.rearm
    return s


def _percentiles(ms: list[float]) -> dict[str, float]:
    a = np.asarray(ms, dtype=float)
    return {"p50": float(np.percentile(a, 50)), "p95": float(np.percentile(a, 95)),
            "p99": float(np.percentile(a, 99)), "mean": float(a.mean()), "min": float(a.min()), "max": float(a.max())}


def _per_query(times: list[list[float]]) -> np.ndarray:
    """Each query's time: the fastest of its repeats (timeit's rule: a slower repeat is another process's
    interference, not the candidate's work; on a loaded 2-core machine it is most of the noise)."""
    return np.asarray(times, dtype=float).min(axis=0)


def _overhead(times: list[list[float]]) -> dict[str, float]:
    """The null candidate's per-query times: what the pass adds to every timed query; their p50 is subtracted."""
    if not times or not times[0]:
        return {"p50": 0.0, "p95": 0.0, "max": 0.0, "subtracted": 0.0}
    a = _per_query(times)
    p50 = float(np.percentile(a, 50))
    return {"p50": p50, "p95": float(np.percentile(a, 95)), "max": float(a.max()), "subtracted": p50}


def machine() -> dict[str, Any]:
    """What the figures were measured on: CPU, cores, threads, torch and BLAS."""
    info: dict[str, Any] = {"cpu": cpu_name() or platform.processor() or platform.machine(),
                            "cores": os.cpu_count(), "python": platform.python_version()}
    try:
        info["cores_usable"] = len(os.sched_getaffinity(0))
    except AttributeError:
        info["cores_usable"] = os.cpu_count()
    try:
        import torch

        info["torch"] = torch.__version__
        info["threads"] = torch.get_num_threads()
        found = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
        info["blas"] = found.group(1) if found else ""
    except Exception:  # noqa: BLE001 - torch absent: the facts we have
        pass
    info["numpy"] = np.__version__
    return info


def _measure_task(cands: list[Candidate], cfg: BenchmarkConfig, task: Any, opts: LatencyOptions) -> list[dict[str, Any]]:
    started = time.perf_counter()
    view = TaskView(task, opts.queries, cfg.encode.batch_size)
    with no_hybrid_bars(), prepared_held() as prepare_query, corpus_chunks_held(view.corpus):
        return _measure_task_quiet(cands, cfg, view, opts, prepare_query, started)


def _measure_task_quiet(cands: list[Candidate], cfg: BenchmarkConfig, view: TaskView, opts: LatencyOptions,
                        prepare_query: Callable[[Any], Any], started: float) -> list[dict[str, Any]]:
    for p in view.positions:  # each sampled query arrives prepared, as a served request does (untimed, once)
        prepare_query(view.rows[p])
    others: dict[str, Served] = {}
    served: list[Served] = []
    for cand in cands:
        try:
            s = others.get(cand.name) or _prepare(cand, cfg, view, others, opts)  # a first stage already served
        except Exception as e:  # noqa: BLE001 - one candidate that cannot be served does not stop the pass
            logger.debug("latency: %s could not be served", cand.label, exc_info=True)
            s = Served(cand, error=f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
        others.setdefault(cand.name, s)
        served.append(s)
    live = [s for s in served if s.one is not None and not s.error]
    null = Served(cast(Candidate, None), one=lambda p: view.search(NullSearch(), view.rows[p]))
    live.append(null)  # the null candidate, interleaved like the others: the pass's own overhead per query
    loads = [os.getloadavg()[0]]
    for s in live:  # warm-up: first-call costs (held vectors, lazy loading, allocator) are not latency
        for p in view.positions[:max(1, opts.warmup)]:
            s.rearm()
            s.one(p)
    gc.collect()  # once; then, as timeit does, no collection inside a timed call (it runs in the gaps)
    for rep in range(opts.repeats):
        times: dict[int, list[float]] = {id(s): [] for s in live}
        for i, p in enumerate(view.positions):
            k = (rep + i) % max(len(live), 1)
            for s in live[k:] + live[:k]:  # interleaved, in rotating order
                s.rearm()
                gc.disable()
                t0 = time.perf_counter()
                try:
                    s.one(p)
                finally:
                    elapsed = time.perf_counter() - t0
                    gc.enable()
                times[id(s)].append(1000 * elapsed)
        for s in live:
            s.times.append(times[id(s)])
        loads.append(os.getloadavg()[0])
    live.remove(null)
    overhead = _overhead(null.times)
    qps: dict[int, float] = {}
    for s in live:
        s.rearm()
        t0 = time.perf_counter()
        s.batch(view.positions)
        qps[id(s)] = len(view.positions) / max(time.perf_counter() - t0, 1e-9)
    loads.append(os.getloadavg()[0])
    pass_info = {"id": uuid.uuid4().hex[:12], "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                 "candidates": [c.label for c in cands], "queries": len(view.positions), "repeats": opts.repeats,
                 "warmup": opts.warmup, "split": view.split, "subset": view.subset, "overhead_ms": overhead,
                 "query_ids": [str(view.rows[p]["id"][0]) for p in view.positions],
                 "seconds": time.perf_counter() - started}  # what the pass cost on this task, serving set-up included
    host = {**machine(), "load_avg_1m": {"min": min(loads), "mean": float(np.mean(loads)), "max": max(loads)}}
    records = [_record(s, view, qps.get(id(s)), pass_info, host) for s in served]
    for s in served:
        unserve(s.encoders)
    return records


def _record(s: Served, view: TaskView, qps: float | None, pass_info: dict[str, Any],
            host: dict[str, Any]) -> dict[str, Any]:
    rec: dict[str, Any] = {"candidate": s.cand.name, "label": s.cand.label, "kind": s.cand.kind,
                           "task": view.task.metadata.name, "measurable": bool(s.times), "note": s.note,
                           "error": s.error, "pass": pass_info, "machine": host}
    if not s.times:
        return rec
    net = _per_query(s.times) - pass_info["overhead_ms"]["subtracted"]
    rep_p50 = [float(np.median(r)) for r in s.times]
    mid = float(np.median(rep_p50))
    rec["latency_ms"] = _percentiles(net.tolist())  # over queries; the null candidate's p50 subtracted
    rec["raw_latency_ms"] = _percentiles([t for rep in s.times for t in rep])  # every timed call, as timed
    rec["query_ms"] = net.tolist()  # per sampled query (pass.query_ids): the intervals are computed from these
    rec["times_ms"] = s.times  # per repeat, per sampled query, as timed
    rec["repeat_p50_ms"] = rep_p50
    rec["spread"] = (max(rep_p50) - min(rep_p50)) / mid if mid > 0 else 0.0
    rec["throughput_qps"] = qps
    n_docs = len(view.corpus)
    search = s.first.search if s.first is not None else s.search  # a reranker holds no index of its own
    sizes = index_bytes(search)
    if s.held_dim:  # the reranker's float32 document vectors, for every document of the corpus once served
        sizes["reranker_vectors"] = 4 * s.held_dim * n_docs
    cold_s_per_doc, sample, source = 0.0, 0, set()
    for e in s.encoders:
        serving = e.serving if isinstance(e.serving, Serving) else None
        if serving is not None and serving.cold:
            cold_s_per_doc += serving.cold["seconds"] / serving.cold["docs"]
            sample = max(sample, int(serving.cold["docs"]))
            source.add(serving.cold.get("from", "sample"))
    scorer = getattr(s.search, "scorer", None) if s.first is not None else None
    if getattr(scorer, "doc_count", 0):  # a bi-encoder reranker's document vectors are encoded at index time too
        cold_s_per_doc += scorer.doc_seconds / scorer.doc_count
        sample = max(sample, int(scorer.doc_count))
        source.add("reranker's document encodes")
    sampled = sum(e.serving.cold.get("sampled_seconds", 0.0) for e in s.encoders if isinstance(e.serving, Serving))
    build = max(s.index_seconds - sampled - s.hold_seconds, 0.0)  # sample and held vectors: in the rate instead
    cold_seconds = build if s.encoded_in_index else build + n_docs * cold_s_per_doc
    rec["index"] = {"n_docs": n_docs, "build_seconds": build, "encode_sample_docs": sample,
                    "encode_rate_from": " + ".join(sorted(source)) or None,
                    "encode_seconds_per_doc": cold_s_per_doc or None, "cold_index_seconds": cold_seconds,
                    "docs_per_s": n_docs / cold_seconds if cold_seconds > 0 else None,
                    "bytes": sizes, "bytes_per_doc": sum(sizes.values()) / n_docs if sizes and n_docs else None}
    rec["facts"] = (static_facts(s.first.search) if s.first is not None else []) + static_facts(s.search)
    return rec


def latency_path(cfg: BenchmarkConfig, cand_name: str, revision: str, task: Any, split: str) -> Any:
    return run_dir(cfg.results_path, cand_name, revision, task.metadata.name, task_revision(task)) / \
        f"latency_{split}.json"


def measure(cfg: BenchmarkConfig, cands: list[Candidate], tasks: list[Any],
            opts: LatencyOptions | None = None) -> list[dict[str, Any]]:
    """Measure every candidate on every task (interleaved per task); store each record in its run folder."""
    opts = opts or LatencyOptions()
    if opts.threads:
        import torch

        saved = torch.get_num_threads()
        torch.set_num_threads(opts.threads)
        try:
            return measure(cfg, cands, tasks, LatencyOptions(**{**vars(opts), "threads": None}))
        finally:
            torch.set_num_threads(saved)
    out = []
    by_name = {c.name: c for c in cands}
    for task in tasks:
        for rec in _measure_task(cands, cfg, task, opts):
            cand = by_name[rec["candidate"]]
            rec["fingerprint"] = run_identity(cand, task, cfg.keep_top_k, cfg.cache_path)["fingerprint"]
            path = latency_path(cfg, cand.name, cand.revision, task, rec["pass"]["split"])
            old = read_json(path) if path.exists() else {}
            subsets = {**(old.get("subsets") or {}), rec["pass"]["subset"]: rec}
            atomic_write_json(path, {"model": cand.name, "revision": cand.revision, "task": rec["task"],
                                     "dataset_revision": task_revision(task), "split": rec["pass"]["split"],
                                     "subsets": subsets})
            out.append(rec)
    return out
