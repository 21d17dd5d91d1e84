"""`kind: endpoint`: an OpenAI-compatible `/v1/embeddings` server scored as a model (vLLM, TEI, Infinity, Ollama,
llama.cpp's llama-server, OpenAI).

    models:
      - name: team/e5-base-served              # the results name
        kind: endpoint
        endpoint: {url: http://127.0.0.1:7997/v1, model: intfloat/multilingual-e5-base, batch_size: 32,
                   max_concurrency: 4, timeout_s: 60, max_retries: 3, backoff_s: 1, api_key_env: TEAM_EMBED_KEY}
        prompts: {query: "query: ", document: "passage: "}

Texts go to the server only because a config names it; requests carry the key from the environment variable
`api_key_env` names (remote/openai_http.py: no proxy, no redirect). The encoder is an mteb `AbsEncoder`: mteb's
own prompt lookup picks the entry's `prompts:` text for each task and prompt type and puts it before each input,
as sentence-transformers does for an in-process model, and the vectors go through the same embedding cache.
mteb's `OpenAIAPIEncodeWrapper` is not used: it sends one request at a time, never waits before a retry, and
follows the environment's proxies and redirects.

A served model can change behind an unchanged URL. So the candidate asks the server once, when it is made, for the
vectors of a fixed probe text: the identity (and the cache folder) holds the model name the server answers with
and the probe's id, the hash of its vector. A vector within cosine 1e-5 of one seen before under this results
name keeps that id (a server's batch-dependent float noise is not a new model); any other vector is a new id, so
a model swapped behind the same URL re-runs and never reads the old model's cached vectors. An unreachable server
stops the run there: one line naming the config and the URL, exit 2.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from custom_tasks.errors import ConfigError

from ...config.endpoint import EndpointOptions
from ...config.model_spec import ModelSpec
from ...results.store import atomic_write_json, read_json
from ..remote.openai_http import Fatal, JsonPoster, Retry, backoff
from ...config.candidate_facts import ConfigFacts, SpecFacts, spec_facts
from .candidate_value import model_value
from .candidates import Candidate

#: embedded once per candidate: the same text for every server, every language's letters in it
PROBE_TEXT = "private-mteb probe: Zürich, São Paulo, Ștefan cel Mare, İstanbul; 12 345 documents — ünïcödé."
PROBE_FILE = "endpoint-probes.json"
PROBE_COSINE = 1 - 1e-5
#: an embeddings answer: 4096 texts x 4096 floats as JSON text stays under this
MAX_ANSWER_BYTES = 512 << 20
_NOT_EMBEDDINGS = "did not answer embeddings JSON (data[i].embedding, one per input)"
_PROBES: dict[str, list[tuple[str, np.ndarray]]] = {}  # results name -> (probe id, vector), this process


class EndpointError(ConfigError):
    """The server cannot be used (unreachable, refused, wrong answers, retries spent): one line, exit 2."""


class EndpointClient:
    """The requests of one endpoint entry: `batch_size` texts each, at most `max_concurrency` in flight, a failure
    worth retrying asked again `max_retries` times with exponential backoff."""

    def __init__(self, spec: ModelSpec, config: Any = None, sleep: Callable[[float], None] = time.sleep) -> None:
        assert spec.endpoint is not None
        self.opts: EndpointOptions = spec.endpoint
        self.model = self.opts.model or spec.name
        self.config, self.sleep, self.name = config, sleep, spec.name
        self.http = JsonPoster(self.opts.api_key_env, MAX_ANSWER_BYTES, fix="endpoint.url",
                               check="endpoint.url and endpoint.model")
        self.served_model: str | None = None
        self.busy_seconds = 0.0  # wall time with at least one request in flight (benchmarks/bench_endpoint.py)

    @property
    def stats(self) -> Any:
        return self.http.stats

    def where(self) -> str:
        return f"model '{self.name}': endpoint {self.opts.embeddings_url}"

    def _once(self, texts: Sequence[str]) -> np.ndarray:
        payload: dict[str, Any] = {"model": self.model, "input": list(texts), "encoding_format": "float"}
        if self.opts.dimensions:
            payload["dimensions"] = self.opts.dimensions
        raw = self.http.post_raw(self.opts.embeddings_url, payload, self.opts.timeout_s)
        try:
            doc = json.loads(raw)
            rows = sorted(doc["data"], key=lambda d: int(d.get("index", 0)))
            vectors = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise Fatal("not embeddings", _NOT_EMBEDDINGS) from None
        if vectors.ndim != 2 or len(vectors) != len(texts) or not np.isfinite(vectors).all():
            raise Fatal("not embeddings", _NOT_EMBEDDINGS)
        if isinstance(doc.get("model"), str):
            self.served_model = doc["model"]
        return vectors

    def request(self, texts: Sequence[str]) -> np.ndarray:
        """One batch's vectors, asked again on a retryable failure; EndpointError when it cannot be had (an
        unreachable server at once: it stops the run there)."""
        kinds = []
        for attempt in range(self.opts.max_retries + 1):
            try:
                return self._once(texts)
            except Retry as e:
                if e.stop:
                    raise EndpointError(self.config, f"{self.where()} {e.stop}") from None
                kinds.append(e.kind)
                self.http.count(e.kind)
                if attempt < self.opts.max_retries:
                    self.sleep(backoff(attempt, self.opts.backoff_s, e.wait))
            except Fatal as e:
                raise EndpointError(self.config, f"{self.where()} {e}") from None
        raise EndpointError(self.config, f"{self.where()}: no answer after {len(kinds)} attempt(s) "
                                         f"({', '.join(sorted(set(kinds)))}): raise endpoint.timeout_s or "
                                         "endpoint.max_retries, or lower endpoint.max_concurrency")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Every text's vector, in order: batches of `batch_size`, `max_concurrency` requests in flight."""
        if not texts:
            return np.zeros((0, 0), np.float32)
        size = self.opts.batch_size
        batches = [texts[i:i + size] for i in range(0, len(texts), size)]
        t0 = time.perf_counter()
        if len(batches) == 1 or self.opts.max_concurrency == 1:
            parts = [self.request(b) for b in batches]
        else:
            with ThreadPoolExecutor(max_workers=min(self.opts.max_concurrency, len(batches))) as pool:
                parts = list(pool.map(self.request, batches))
        self.busy_seconds += time.perf_counter() - t0
        dims = {p.shape[1] for p in parts}
        if len(dims) != 1:
            raise EndpointError(self.config, f"{self.where()} answered vectors of {len(dims)} different "
                                             "dimensions: check endpoint.model")
        return np.concatenate(parts)

    def probe(self) -> tuple[str, np.ndarray]:
        """(the model name the server answers with, the probe text's vector): one request."""
        vector = self.request([PROBE_TEXT])[0]
        return self.served_model or self.model, vector


def probe_id(name: str, vector: np.ndarray, memo_dir: Path | None) -> str:
    """A stable id of the probe's vector under this results name (module docstring): an earlier id when the vector
    is within cosine 1e-5 of the one it was given for, else the hash of the vector rounded to 4 decimals."""
    known = list(_PROBES.get(name, []))
    path = Path(memo_dir) / PROBE_FILE if memo_dir is not None else None
    disk: dict[str, Any] = {}
    if path is not None and path.is_file():
        try:
            loaded = read_json(path)
            disk = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            disk = {}
        known += [(str(e["id"]), np.asarray(e["vector"], np.float32)) for e in disk.get(name, [])
                  if isinstance(e, dict) and "id" in e and "vector" in e]
    v = vector.astype(np.float64)
    for pid, seen in known:
        if seen.shape == vector.shape:
            cos = float(v @ seen / max(np.linalg.norm(v) * np.linalg.norm(seen), 1e-30))
            if cos >= PROBE_COSINE:
                _remember(name, pid, vector)
                return pid
    pid = hashlib.sha256(np.round(v, 4).astype(np.float32).tobytes()).hexdigest()[:16]
    _remember(name, pid, vector)
    if path is not None:
        entries = [e for e in disk.get(name, []) if isinstance(e, dict)]
        entries.append({"id": pid, "vector": [float(x) for x in vector]})
        try:  # a memo only: unwritable means a (spurious) new id next time, never a stale score
            atomic_write_json(path, {**disk, name: entries[-16:]})
        except OSError:
            pass
    return pid


def _remember(name: str, pid: str, vector: np.ndarray) -> None:
    seen = _PROBES.setdefault(name, [])
    if all(p != pid for p, _ in seen):
        seen.append((pid, vector))


class EndpointEncoding:
    """mteb's encoder protocol over an `EndpointClient`; `endpoint_encoder` makes it an mteb `AbsEncoder` (mteb's
    prompt lookup and similarity), a class built on first use so that mteb is imported only to run."""

    def __init__(self, client: EndpointClient, meta: Any, prompts: dict[str, str] | None) -> None:
        self.client, self.mteb_model_meta, self.model_prompts = client, meta, prompts

    @property
    def encode_chunk_texts(self) -> int:
        """Texts per encode call the cache hands over (embedding_cache.py): 4 full waves of requests in flight, so
        the wait for a chunk's last request leaves the server idle rarely."""
        return 4 * self.client.opts.batch_size * self.client.opts.max_concurrency

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, prompt_type: Any = None,
               **kwargs: Any) -> np.ndarray:
        from mteb.models.abs_encoder import get_prompt

        prefix = get_prompt(self.model_prompts, task_metadata, prompt_type) or ""
        texts = [prefix + str(t) for batch in inputs for t in batch["text"]]
        return self.client.embed(texts)

    def served_facts(self) -> dict[str, Any]:
        """What a latency record says about this encoder (measure/serving.py): where it is served, how it was
        driven; every query the latency pass times is one request to the server, as served."""
        return {"served_by": self.client.opts.embeddings_url, "served_model": self.client.served_model,
                "batch_size": self.client.opts.batch_size, "max_concurrency": self.client.opts.max_concurrency,
                "requests": self.client.stats.requests, "retried": dict(self.client.stats.failures)}


_CLASS: list[type] = []


def endpoint_encoder(client: EndpointClient, meta: Any, prompts: dict[str, str] | None) -> Any:
    """An `EndpointEncoder(EndpointEncoding, mteb AbsEncoder)` over `client`."""
    if not _CLASS:
        from mteb.models.abs_encoder import AbsEncoder

        _CLASS.append(type("EndpointEncoder", (EndpointEncoding, AbsEncoder), {}))
    return _CLASS[0](client, meta, prompts)


def candidate(spec: ModelSpec, device: str | None = None, cfg: Any = None) -> Candidate:
    """The Candidate of a `kind: endpoint` entry: the server is probed now (module docstring), nothing encoded."""
    return probed(spec_facts(spec), getattr(cfg, "path", None), getattr(cfg, "cache_path", None))


def from_facts(f: SpecFacts, device: str | None = None, ctx: ConfigFacts | None = None, embedder: Any = None) -> Candidate:
    """As `candidate`, from the entry's facts (build_candidates: a config's candidates built together)."""
    return probed(f, ctx.cfg.path if ctx is not None else None, ctx.cache_path if ctx is not None else None)


def probed(f: SpecFacts, config: Any, cache_path: Path | None) -> Candidate:
    """The server probed (its served model and the probe's vector are part of the identity), nothing encoded."""
    spec = f.spec
    client = EndpointClient(spec, config)
    served, vector = client.probe()
    name, revision = f.results_name, spec.revision or "local"
    pid = probe_id(name, vector, cache_path)
    served_hash = hashlib.sha256(f"{served}|{client.model}|{spec.endpoint.dimensions}".encode()).hexdigest()[:12]

    def load() -> Any:
        from mteb.models.model_meta import ModelMeta, ScoringFunction

        fn = ScoringFunction.COSINE if spec.endpoint.similarity == "cosine" else ScoringFunction.DOT_PRODUCT
        meta = ModelMeta.create_empty(overwrites={"name": name, "revision": revision, "similarity_fn_name": fn,
                                                  "embed_dim": int(vector.shape[0])})
        return endpoint_encoder(EndpointClient(spec, config), meta, spec.prompts)

    value = model_value(f, revision, extra={"served_model": served, "probe": pid, "dim": int(vector.shape[0])},
                        cache_variant=f"endpoint={served_hash},probe={pid}")
    return Candidate(value=value, load=load, public_name=spec.public_name, cacheable=True,
                     info={"source": spec.endpoint.embeddings_url, "kind": "endpoint", "served_model": served})
