"""On-disk embedding cache shared by every task: the same text is never encoded twice.

mteb's own `CachedEmbeddingWrapper` keeps one cache per task name, so two tasks sharing documents,
a re-chunked collection or a changed label file would encode everything again. Here the key is
(model, revision, prompt, text) — nothing about the task — and storage is append-only, memory-mapped
shards of float32 arrays written atomically (vector_store.py): a killed run never corrupts the cache.
A local model's folder also carries the content hash of its files (`weights-<hash>`): retrained weights never reuse old
vectors. That hash is the weights part of the candidate's run identity, computed in the candidates room
(run_identity.py `value_weights`) and handed in by the caller: this room never hashes a candidate's files itself.
Encoding missing texts happens under a per-folder flock: a concurrent run waits, then finds them stored.
Missing texts are encoded longest first in chunks of whole batches (the batches sentence-transformers would
form in one call), so `progress` (progress.py) can report texts done, texts/s and an ETA as they finish.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ...results.store import env_faults, model_dir_name
from ...search.scores import similarity
from ..encoding import encode_rate
from ..encoding.progress import EncodeProgress, encoding
from .vector_store import VectorStore, keys_array

_KEY_BYTES = 16
CHUNK_BATCHES = 4  # batches per encode call: how often progress moves
_PLURAL = {"query": "queries", "document": "documents"}


def text_key(prompt_key: str, text: str) -> bytes:
    return hashlib.blake2b(f"{prompt_key}\x00{text}".encode(), digest_size=_KEY_BYTES).digest()


EmbeddingStore = VectorStore  # the memory-mapped store (vector_store.py); old `.npz` shards migrate on open


class CachedEncoder:
    """Wraps an mteb encoder; encodes only texts not already in the store.

    Counts `encoded` and `reused` texts so benchmarks can show that shared text is encoded once;
    reports each encode pass under `label` to `progress` if set, else to the run's (progress.current_progress).
    """

    serving: Any = None

    def __init__(self, model: Any, store: EmbeddingStore, variant: str = "", label: str = "") -> None:
        self._model = model
        self.store = store
        self.variant = variant
        self.label = label
        self.progress: EncodeProgress | None = None
        self.encoded = 0
        self.reused = 0
        self.serving: Any = None  # a latency pass's hook (serving.py): queries by the model, documents held

    @property
    def mteb_model_meta(self) -> Any:
        return self._model.mteb_model_meta

    def similarity(self, a: Any, b: Any) -> Any:
        """The model's similarity; cosine and dot scores independent of block shape and CPU (search/scores.py)."""
        return similarity(self._model, a, b)

    def __getattr__(self, name: str) -> Any:  # similarity_pairwise, prompts, ... of the wrapped model
        if name == "_model":
            raise AttributeError(name)
        return getattr(self._model, name)

    def _prompt_key(self, task_metadata: Any, prompt_type: Any) -> str:
        """Everything besides the text that changes an embedding: prompt type, resolved prompt, instruction."""
        ptype = getattr(prompt_type, "value", prompt_type)
        parts = [str(ptype), self.variant]
        get_prompt = getattr(self._model, "get_prompt", None)
        if callable(get_prompt):
            try:
                parts.append(str(get_prompt(task_metadata, prompt_type)))
            except Exception:
                parts.append("?")
        meta = self.mteb_model_meta
        if getattr(meta, "use_instructions", False):
            parts.append(str(getattr(task_metadata, "prompt", "")))
        return "|".join(parts)

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
               prompt_type: Any = None, **kwargs: Any) -> np.ndarray:
        """mteb's encoder protocol: the vectors of the loader's texts, encoding only what the store lacks."""
        dataset = inputs.dataset  # the model gets these rows as they are (mteb may have added columns)
        texts: list[str] = dataset["text"][:]  # a list in one read, not a lazy Column iterated row by row
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        call = dict(task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset, prompt_type=prompt_type,
                    **kwargs)
        return self.vectors_for(texts, lambda rows: _rows_of(dataset, rows), inputs.batch_size or 32, call)

    def vectors_for(self, texts: list[str], rows_dataset: Callable[[list[int]], Any], batch_size: int,
                    call: dict[str, Any]) -> np.ndarray:
        """One float32 row per text: hits copied out of the store, the rest encoded once each and stored.

        The one lookup/encode path (mteb's `encode` above, the large-corpus blocks in prefill.py), vectorised:
        keys, `np.unique`, `locate` and `gather`, no per-row dicts. `rows_dataset(rows)` is the dataset the
        model reads for those positions of `texts`, in that order; it is built only when something is missing.
        The model gets the first occurrence of each missing text, longest first (stable over input order),
        in chunks of whole batches (`_encode_rows`). `call` holds `model.encode`'s keyword arguments.
        """
        if self.serving is not None:
            return self.serving.vectors(self, texts, rows_dataset, batch_size, call)
        store = self.store
        keys = text_keys(self._prompt_key(call["task_metadata"], call.get("prompt_type")), texts)
        if not len(keys):
            return np.zeros((0, store.dim or 0), np.float32)
        unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        shard_of, row_of = store.locate(unique)
        rows, new = np.zeros(0, np.int64), None
        if (shard_of < 0).any():
            with env_faults(store.folder), store.lock():
                shards = len(store._shards)
                store.refresh()  # another run may have stored them while we waited
                if len(store._shards) != shards:
                    shard_of, row_of = store.locate(unique)
                missing = np.flatnonzero(shard_of < 0)
                if len(missing):
                    rows = longest_first(np.sort(first[missing]), texts)  # first occurrences, input order
                    new = self._encode_rows(rows_dataset(rows.tolist()), batch_size, call)
                    store.add(keys[rows], new)
        self.encoded += len(rows)
        self.reused += len(keys) - len(rows)
        # hits copied out of the memory maps, misses from what was just stored (the same float32 values)
        where, at = shard_of[inverse], row_of[inverse]
        if new is None:
            return store.gather(where, at)
        hit = where >= 0
        vectors = np.empty((len(keys), store.dim or new.shape[1]), np.float32)
        vectors[hit] = store.gather(where[hit], at[hit])
        in_new = np.full(len(unique), -1, np.int64)
        in_new[inverse[rows]] = np.arange(len(rows))
        vectors[~hit] = new[in_new[inverse[~hit]]]
        return vectors

    def _encode_rows(self, dataset: Any, batch_size: int, call: dict[str, Any]) -> np.ndarray:
        """Encode every row of `dataset` in its order, a chunk of whole batches per call, reporting each chunk.

        Chunks are contiguous slices: a `select` of scattered rows per chunk costs ~2.5x a contiguous one. A model
        that says how many texts keep it busy per call (`encode_chunk_texts`: an endpoint's batch x requests in
        flight, several times over) gets chunks at least that large: each chunk ends in a wait for its last request."""
        n = len(dataset)
        chunk = max(batch_size * CHUNK_BATCHES, int(getattr(self._model, "encode_chunk_texts", 0) or 0))
        ptype = str(getattr(call.get("prompt_type"), "value", call.get("prompt_type")) or "text")
        what = f"{getattr(call['task_metadata'], 'name', '')} {_PLURAL.get(ptype, ptype)}"
        label = f"{self.label} on {what}" if self.label else what
        out: np.ndarray | None = None
        t0 = time.perf_counter()
        with encoding(self.progress, label, n) as progress:
            for start in range(0, n, chunk):
                stop = min(start + chunk, n)
                loader = batch_loader(_rows_of(dataset, range(start, stop)), batch_size)
                vecs = _to_numpy(self._model.encode(loader, **call))
                if out is None:
                    out = np.empty((n, vecs.shape[1]), dtype=np.float32)
                out[start:stop] = vecs
                progress.advance(stop - start)
        if ptype == "document":  # the cold rate the latency pass reports as indexing cost (encode_rate.py)
            encode_rate.record(self.store.folder, getattr(call["task_metadata"], "name", ""), n,
                               time.perf_counter() - t0)
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)


def text_keys(prompt_key: str, texts: list[str]) -> np.ndarray:
    """`text_key` of every text as an `S16` array (the prompt prefix hashed once: ~3x faster per text)."""
    prefix = hashlib.blake2b(f"{prompt_key}\x00".encode(), digest_size=_KEY_BYTES)

    def key(text: str) -> bytes:
        h = prefix.copy()
        h.update(text.encode())
        return h.digest()

    return keys_array([key(t) for t in texts])


def longest_first(rows: np.ndarray, texts: list[str]) -> np.ndarray:
    """`rows` ordered longest text first (stable: ties keep input order), the order the model gets them.

    Similar lengths share a batch (less padding), as within one sentence-transformers call. The rows are
    then selected once in this order, so every chunk `_encode_rows` hands the model is a contiguous slice.
    """
    lengths = np.fromiter((len(texts[i]) for i in rows.tolist()), dtype=np.int64, count=len(rows))
    return rows[np.argsort(-lengths, kind="stable")]


def _rows_of(dataset: Any, rows: list[int] | range) -> Any:
    """`dataset.select(rows)` without hashing `rows` into a fingerprint (pickling a million ints: ~20 us/row).

    A `range` (`_encode_rows` hands its chunks so) is a zero-copy slice; all rows, the dataset itself.
    """
    if isinstance(rows, range) and rows.start == 0 and rows.stop == len(dataset):
        return dataset
    return dataset.select(rows, new_fingerprint=_fingerprint(dataset, rows))


def _fingerprint(dataset: Any, rows: list[int] | range) -> str:
    data = repr(rows).encode() if isinstance(rows, range) else np.asarray(rows, dtype=np.int64).tobytes()
    digest = hashlib.blake2b(data, digest_size=8)
    digest.update(str(getattr(dataset, "_fingerprint", "")).encode())
    return digest.hexdigest()


def batch_loader(dataset: Any, batch_size: int) -> Any:
    """mteb's text `DataLoader` (same batches, same `{column: [values]}` dicts), each batch read as one slice.

    mteb's own loader fetches a batch row by row (a dict per row, then `default_collate` back into
    columns); a text batch is the same columns read in one Arrow slice. `.dataset` stays the `datasets`
    Dataset (models look at its `features`).
    """
    from torch.utils.data import DataLoader

    return DataLoader(dataset, batch_size=None, sampler=_Slices(len(dataset), batch_size), collate_fn=_as_batch)


class _Slices:
    """Sampler of `slice`s of `batch_size` rows: `dataset[slice]` is one column-wise read."""

    def __init__(self, n: int, batch_size: int) -> None:
        self.n, self.batch_size = n, batch_size

    def __iter__(self) -> Any:
        return (slice(s, min(s + self.batch_size, self.n)) for s in range(0, self.n, self.batch_size))

    def __len__(self) -> int:
        return -(-self.n // self.batch_size)


def _as_batch(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """A sliced batch is already mteb's collated form for text (`default_collate` of strings is the list)."""
    for key, values in batch.items():
        if key not in ("image", "conversation", "audio", "video") and any(v is None for v in values):
            raise ValueError(f"Found None in batch for key '{key}'")  # as mteb's collate
    return batch


def _to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().float().numpy()
    return np.asarray(x, dtype=np.float32)


def wrap_cache(model: Any, cand: Any, cache_root: Path, *, weights: str | None) -> Any:
    """The candidate's model behind its embedding cache folder (dense encoders only). `weights`: the weights part of
    its run identity (run_identity.py `value_weights`, None when it has no local files), so the folder and the
    identity name the same files by the same figure."""
    if not cand.cacheable or not hasattr(model, "encode"):
        return model
    folder = Path(cache_root) / model_dir_name(cand.name) / cand.revision
    if cand.cache_variant:
        folder = folder / model_dir_name(cand.cache_variant)
    if weights:
        folder = folder / f"weights-{weights[:16]}"
    return CachedEncoder(model, EmbeddingStore(folder), variant=cand.cache_variant, label=cand.label)
