"""Rerank experiments made runnable: a first stage's stored top-`depth` reordered by a reranker.

For each query, the first stage's stored ranking (`rankings_<split>.json.gz`: its top keep_top_k, by default
all of mteb's top_k, by (score, doc id) descending, the order mteb ranks in) is split at `depth`: the top
`depth` documents are reordered by the reranker's score (equal scores keep the first stage's order), the documents below `depth` stay as the
first stage had them, below all reranked ones. The returned scores are positions (n - i for the i-th of n
documents), so mteb's evaluator ranks exactly that order; the reranker's own scores are in its cache
(rerank_cache.py). A query the first stage retrieved nothing for retrieves nothing.

`RerankSearch` is an mteb search protocol, so mteb's evaluator computes every number; the runner stores
sidecars as for any candidate. The first stage runs before (plan order) and its stored result must be the
one of its current identity, else the reranked candidate fails instead of reordering a stale list.
In-process use (a latency pass timing one query): `RerankSearch.rerank_one(query_text, first_ranking,
use_cache=False)` reorders one list; `rerank_scorer(spec, base_dir)` loads the reranker alone.
"""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path
from typing import Any

from custom_tasks.errors import ConfigError

from ...config.benchmark import BenchmarkConfig
from ...config.experiments import PlannedCandidate
from ...config.candidate_facts import RerankerFacts
from ...config.rerank import RerankerSpec
from ...results.store import find_run, load_rankings, read_identity
from .candidate_value import experiment_value
from .candidates import Candidate
from .run_identity import reranker_cache_id, run_identity, value_weights
from ..encoding.models import offline_copy
from .rerank_cache import Pair, PairScoreCache

_SCORERS: dict[str, Any] = {}
HOLD_MAX = 200_000  # document vectors a bi-encoder reranker keeps in memory for serving (latency pass)  # reranker cache id -> loaded scorer, once per process for every depth


def reranker_path(spec: RerankerSpec, base_dir: Path) -> str | None:
    """The reranker's local folder: `path:` (relative to the benchmark file), else an installed offline copy."""
    if spec.path:
        p = Path(spec.path).expanduser()
        return str(p if p.is_absolute() else (Path(base_dir) / p).resolve())
    return None if spec.factory else offline_copy(spec.name)


def detect_kind(where: str) -> str:
    """'bi-encoder' for a sentence-transformers embedding model folder, else 'cross-encoder'."""
    folder = Path(where)
    if not (folder / "modules.json").is_file():
        return "cross-encoder"
    try:
        archs = json.loads((folder / "config.json").read_text()).get("architectures") or []
    except (OSError, ValueError):
        archs = []
    return "cross-encoder" if any(a.endswith("ForSequenceClassification") for a in archs) else "bi-encoder"


class BiEncoderScorer:
    """A sentence-transformers embedding model as a reranker: similarity of the query and document vectors.

    Served, a bi-encoder reranker keeps its document vectors in the index (they do not depend on the query):
    `held` maps document text -> vector, filled by every `predict` and by `hold`; `predict_served` encodes
    only the query and reads the documents from there. `predict` (the evaluation) never reads `held`, so a
    score does not depend on what was encoded before.

    Its document vectors are those of the same model as a dense candidate: with `doc_cache` (the embedding
    cache folder that model's dense candidate uses, `cached_documents`) and a task `context`, they are read from
    the embedding cache, and the missing ones encoded once through it (by mteb's encoder, then stored). Only where
    that is the same vector: the prompt text mteb resolves for the task's documents is the model's own document
    prompt (or none), so both call the model's `encode_document` with the same prompt. `doc_count` counts documents this scorer encoded, `doc_reused` those
    it found stored."""

    def __init__(self, model: Any, batch_size: int) -> None:
        self.model, self.batch_size = model, batch_size
        self.held: dict[str, Any] = {}
        self.doc_seconds, self.doc_count, self.doc_reused = 0.0, 0, 0
        self.doc_cache: Any = None  # a CachedEncoder around this model (cached_documents), or None
        self.context: dict[str, Any] | None = None  # mteb's task_metadata / hf_split / hf_subset of the search

    def _from_cache(self, docs: list[str]) -> Any:
        """The documents' vectors through the embedding cache (None where it does not hold the same vectors)."""
        from mteb.types import PromptType

        enc, ctx = self.doc_cache, self.context
        if enc is None or not ctx or not docs:
            return None
        try:  # the prompt text mteb hands `encode_document` (None: the model's own default, as here)
            name = enc._model.get_prompt(ctx["task_metadata"], PromptType.document)
            prompt = (getattr(enc._model, "model_prompts", None) or {}).get(name) if name else None
        except Exception:  # noqa: BLE001 - a prompt that cannot be resolved: encode as before
            return None
        own = (getattr(self.model, "prompts", None) or {}).get("document")
        if prompt is not None and prompt != own:
            return None  # mteb would prompt the documents otherwise: not the vectors encode_document gives here
        from datasets import Dataset

        import torch

        before, reused = enc.encoded, enc.reused
        call = {**ctx, "prompt_type": PromptType.document}
        vecs = enc.vectors_for(docs, lambda rows: Dataset.from_dict({"text": [docs[i] for i in rows]}),
                               self.batch_size, call)
        self.doc_count += enc.encoded - before
        self.doc_reused += enc.reused - reused
        return torch.from_numpy(vecs).to(self.model.device)

    def _documents(self, docs: list[str]) -> Any:
        t0 = time.perf_counter()
        dv = self._from_cache(docs)
        if dv is None:
            dv = self.model.encode_document(docs, batch_size=self.batch_size, convert_to_tensor=True)
            self.doc_count += len(docs)
        self.doc_seconds += time.perf_counter() - t0  # its documents' encode rate: index cost when served
        if len(self.held) + len(docs) <= HOLD_MAX:
            self.held.update(zip(docs, dv))
        return dv

    def hold(self, docs: list[str]) -> int:
        """Encode (batched, as indexing does) the documents not held yet; how many were encoded."""
        missing = sorted(set(docs) - self.held.keys())
        if missing:
            self._documents(missing)
        return len(missing)

    def predict(self, pairs: list[Pair]) -> list[float]:
        queries = sorted({q for q, _ in pairs})
        docs = sorted({d for _, d in pairs})
        qv = self.model.encode_query(queries, batch_size=self.batch_size, convert_to_tensor=True)
        dv = self._documents(docs)
        qi, di = {q: i for i, q in enumerate(queries)}, {d: i for i, d in enumerate(docs)}
        a = qv[[qi[q] for q, _ in pairs]]
        b = dv[[di[d] for _, d in pairs]]
        return [float(x) for x in self.model.similarity_pairwise(a, b).cpu()]

    def predict_served(self, pairs: list[Pair]) -> list[float]:
        """As served: the queries encoded now, the documents' vectors from the index (held; missing ones encoded)."""
        import torch

        queries = sorted({q for q, _ in pairs})
        self.hold([d for _, d in pairs])
        qv = self.model.encode_query(queries, batch_size=self.batch_size, convert_to_tensor=True)
        qi = {q: i for i, q in enumerate(queries)}
        a = qv[[qi[q] for q, _ in pairs]]
        b = torch.stack([self.held[d] for _, d in pairs]) if pairs else a[:0]
        return [float(x) for x in self.model.similarity_pairwise(a, b).cpu()]


class CrossEncoderScorer:
    """Any object with sentence-transformers' `CrossEncoder.predict(pairs) -> scores` (one score per pair)."""

    def __init__(self, model: Any, batch_size: int) -> None:
        self.model, self.batch_size = model, batch_size

    def predict(self, pairs: list[Pair]) -> list[float]:
        import numpy as np

        try:
            out = self.model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        except TypeError:  # a factory's predict(pairs) without sentence-transformers' keywords
            out = self.model.predict(pairs)
        scores = np.asarray(out, dtype=np.float64)
        if scores.ndim != 1:
            raise ConfigError(None, f"the reranker returned scores of shape {scores.shape}: it must give one score "
                                    "per (query, document) pair (a cross-encoder with num_labels=1)")
        return scores.tolist()


def rerank_scorer(spec: RerankerSpec, base_dir: Path, device: str | None = None) -> Any:
    """The reranker, loaded: an object with `predict(pairs) -> scores`."""
    if spec.resolved_kind == "factory":
        module, _, fn = (spec.factory or "").partition(":")
        try:
            made = getattr(importlib.import_module(module), fn)(**spec.factory_kwargs)
        except (ImportError, AttributeError) as e:
            raise ConfigError(None, f"reranker factory {spec.factory!r} cannot be loaded: {e}") from None
        return CrossEncoderScorer(made, spec.batch_size)
    where = reranker_path(spec, base_dir) or spec.name
    if spec.path and not Path(where).exists():
        raise ConfigError(None, f"reranker '{spec.name}': path '{spec.path}' does not exist")
    kind = spec.kind if spec.kind != "auto" else detect_kind(where)
    try:
        if kind == "bi-encoder":
            from sentence_transformers import SentenceTransformer

            st = SentenceTransformer(where, device=device, revision=spec.revision)
            if spec.max_length:
                st.max_seq_length = spec.max_length
            return BiEncoderScorer(st, spec.batch_size)
        from sentence_transformers import CrossEncoder

        ce = CrossEncoder(where, device=device, max_length=spec.max_length, revision=spec.revision)
    except OSError as e:  # not installed offline, not in the HF cache, no network
        raise ConfigError(None, f"reranker '{spec.name}' is not available ({type(e).__name__}: "
                                f"{str(e).splitlines()[0] if str(e) else ''}): give `path:` to a local folder") from None
    return CrossEncoderScorer(ce, spec.batch_size)


def cached_documents(scorer: Any, spec: RerankerSpec, cfg: BenchmarkConfig) -> Any:
    """`scorer` (a BiEncoderScorer) with `doc_cache` set: mteb's encoder around its model behind the embedding cache
    folder a dense candidate of the same model gets (name, revision, max_seq_length, weights: wrap_cache's rules),
    so a plain run's document vectors are read, not encoded again. Local models only (a path or an offline copy):
    those a dense candidate loads as this same sentence-transformers folder."""
    from ...config.model_spec import ModelSpec
    from ..cache.embedding_cache import CachedEncoder, wrap_cache
    from ..encoding.models import encoder_wrapper
    from .candidates import candidate_from_spec

    if not isinstance(scorer, BiEncoderScorer) or reranker_path(spec, cfg.base_dir) is None:
        return scorer
    twin = ModelSpec(name=spec.name, path=reranker_path(spec, cfg.base_dir) if spec.path else None,
                     revision=spec.revision, max_seq_length=spec.max_length)
    cand = candidate_from_spec(twin, cfg.encode.device)
    wrapped = wrap_cache(encoder_wrapper(scorer.model, twin), cand, cfg.cache_path,
                         weights=value_weights(cand, cfg.cache_path))
    scorer.doc_cache = wrapped if isinstance(wrapped, CachedEncoder) else None
    return scorer


def order(scores: dict[str, float]) -> list[str]:
    """Doc ids best first, equal scores by doc id descending (mteb's and trec_eval's order)."""
    return [d for d, _ in sorted(scores.items(), key=lambda x: (x[1], x[0]), reverse=True)]


def reorder(ranked: list[str], head_scores: list[float]) -> list[str]:
    """The first len(head_scores) of `ranked` by score descending (ties: first-stage order), the rest as they were."""
    n = len(head_scores)
    head = sorted(range(n), key=lambda i: (-head_scores[i], i))
    return [ranked[i] for i in head] + ranked[n:]


def as_scores(ranked: list[str]) -> dict[str, float]:
    """Position scores (n - i): mteb ranks exactly this order."""
    n = len(ranked)
    return {d: float(n - i) for i, d in enumerate(ranked)}


class RerankSearch:
    """mteb search protocol: the first stage's stored list per query, its top `depth` reranked."""

    def __init__(self, first: Candidate, results_dir: Path, depth: int, scorer: Any, cache: PairScoreCache,
                 meta: Any, expected: Any = None) -> None:
        self.first, self.results_dir, self.depth = first, Path(results_dir), depth
        self.scorer, self.cache, self.mteb_model_meta = scorer, cache, meta
        self.expected = expected  # task name -> the first stage's current fingerprint (None: not checked)
        self._texts: Any = None
        self._pos: dict[str, int] | None = None  # doc id -> corpus row, built once per index()
        self._context: dict[str, Any] = {}  # the task of the last index(): a bi-encoder's embedding-cache keys

    @property
    def encoded(self) -> int:  # the runner's counts: (query, document) pairs scored / found in the score cache
        return self.cache.scored

    @property
    def reused(self) -> int:
        return self.cache.reused

    def note_for(self, task_name: str) -> str:
        return "encoded/reused: (query, document) pairs the reranker scored / found in its score cache"

    def index(self, corpus: Any, **kwargs: Any) -> None:
        self._texts, self._pos = corpus, None
        self._context = {k: kwargs[k] for k in ("task_metadata", "hf_split", "hf_subset") if k in kwargs}

    def _doc_texts(self, ids: set[str]) -> dict[str, str]:
        """mteb's document text (title + ' ' + text, stripped) of the given ids, read from the corpus rows."""
        corpus = self._texts
        if self._pos is None:
            self._pos = {d: i for i, d in enumerate(corpus["id"])}
        pos = self._pos
        rows = corpus.select(sorted(pos[d] for d in ids if d in pos))
        titles = rows["title"] if "title" in rows.column_names else [""] * len(rows)
        return {d: (f"{t} {x}".strip() if t else x.strip()) for d, t, x in zip(rows["id"], titles, rows["text"])}

    def _first_rankings(self, task: str, split: str, subset: str) -> dict[str, dict[str, float]]:
        label = f"first stage '{self.first.label}' on {task}"
        folder = find_run(self.results_dir, self.first.name, task, self.first.revision)
        if folder is None:
            raise RuntimeError(f"{label} has no stored rankings: run it first (list it in the same config)")
        want = self.expected(task) if self.expected is not None else None
        stored = read_identity(folder) or {}
        if want is not None and stored.get("fingerprint") != want:
            raise RuntimeError(f"{label}: its stored rankings are not those of its current settings (it failed or "
                               "was not re-run): run it first")
        if isinstance(stored.get("keep_top_k"), int) and self.depth > stored["keep_top_k"]:
            raise RuntimeError(f"{label}: rerank depth {self.depth} is deeper than the {stored['keep_top_k']} "
                               "documents stored per query: lower the depth or raise keep_top_k")
        return load_rankings(self.results_dir, self.first.name, task, split, self.first.revision, subset)

    def rerank_one(self, query: str, first_ranking: dict[str, float], doc_texts: dict[str, str],
                   use_cache: bool = True) -> dict[str, float]:
        """One query's reranked list (in process; use_cache=False times the reranker as served, no score cache)."""
        ranked = order(first_ranking)
        pairs = [(query, doc_texts[d]) for d in ranked[:self.depth]]
        scores = self.cache.scores(pairs, self.score) if use_cache else self.score_served(pairs)
        return as_scores(reorder(ranked, list(scores)))

    def loaded_scorer(self) -> Any:
        if callable(self.scorer) and not hasattr(self.scorer, "predict"):
            self.scorer = self.scorer()  # loaded on first use: a fully cached re-run loads no model
        if hasattr(self.scorer, "context"):  # a bi-encoder's documents: through the embedding cache, for this task
            self.scorer.context = self._context or None
        return self.scorer

    def score(self, pairs: list[Pair]) -> list[float]:
        return self.loaded_scorer().predict(pairs)

    def score_served(self, pairs: list[Pair]) -> list[float]:
        """Scores as a served reranker computes them (a bi-encoder reads its documents' vectors from its index)."""
        scorer = self.loaded_scorer()
        return getattr(scorer, "predict_served", scorer.predict)(pairs)

    def search(self, queries: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, top_k: int,
               **kwargs: Any) -> dict[str, dict[str, float]]:
        first = self._first_rankings(task_metadata.name, hf_split, hf_subset)
        qtext = dict(zip(map(str, queries["id"]), queries["text"]))
        ranked = {q: order(first.get(q, {})) for q in qtext}
        texts = self._doc_texts({d for r in ranked.values() for d in r[:self.depth]})
        pairs = [(qtext[q], texts[d]) for q, r in ranked.items() for d in r[:self.depth]]
        scores = iter(self.cache.scores(pairs, self.score))
        out = {}
        for q, r in ranked.items():
            head = [next(scores) for _ in r[:self.depth]]
            out[q] = dict(list(as_scores(reorder(r, head)).items())[:top_k])
        return out


def shared_scorer(cache_id: str, spec: RerankerSpec, cfg: BenchmarkConfig) -> Any:
    """The reranker, loaded once per process for every depth of a sweep."""
    if cache_id not in _SCORERS:
        _SCORERS[cache_id] = rerank_scorer(spec, cfg.base_dir, cfg.encode.device)
    return _SCORERS[cache_id]


def rerank_candidate(plan: PlannedCandidate, first: Candidate, cfg: BenchmarkConfig, rr: RerankerFacts,
                     offline: str | None = None) -> Candidate:
    """The Candidate of one (rerank entry, depth): named, identified, loaded lazily. `rr`: the reranker's facts
    (config/candidate_facts.py), `offline`: its installed offline copy when it names no path."""
    spec, depth = plan.strategy
    rr_paths = tuple(p for p in [rr.path or offline] if p)
    rr_identity = rr.settings
    tasks: dict[str, Any] = {}

    def expected(task_name: str) -> str | None:
        task = tasks.get(task_name)
        return None if task is None else run_identity(first, task, cfg.keep_top_k, cfg.cache_path)["fingerprint"]

    value = experiment_value(plan.name, plan.label, "rerank", plan.params, first.value, reranker=rr_identity,
                             extra_paths=rr_paths)

    def load() -> RerankSearch:
        from mteb.models.model_meta import ModelMeta

        cache_id = reranker_cache_id(value, cfg.cache_path)
        loaded = lambda: cached_documents(shared_scorer(cache_id, spec, cfg), spec, cfg)  # noqa: E731 - on first use
        meta = ModelMeta.create_empty().model_copy(update={"name": plan.name, "revision": first.revision,
                                                           "adapted_from": first.name})  # names its first stage
        return RerankSearch(first, cfg.results_path, depth, loaded, PairScoreCache(cfg.cache_path, cache_id), meta,
                            expected)

    def check(given: list[Any]) -> None:
        tasks.update({t.metadata.name: t for t in given})
        if spec.path and not Path(rr_paths[0]).exists():
            raise ConfigError(cfg.path, f"reranker '{spec.name}': path '{spec.path}' does not exist (relative paths "
                                        f"resolve against {cfg.base_dir})")

    info = {"experiment": "rerank", "base": first.name, "base_revision": first.revision, "base_label": first.label,
            **plan.params}
    return Candidate(value=value, load=load, cacheable=False, info=info, check=check)


def clear_scorers() -> None:
    """Forget loaded rerankers (tests, long-lived processes)."""
    _SCORERS.clear()
