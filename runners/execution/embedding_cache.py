"""On-disk embedding cache shared by every task: the same text is never encoded twice.

mteb's own `CachedEmbeddingWrapper` keeps one cache per task name, so two tasks sharing documents,
a re-chunked collection or a changed label file would encode everything again. Here the key is
(model, revision, prompt, text) — nothing about the task — and storage is append-only, memory-mapped
shards of float32 arrays written atomically (vector_store.py): a killed run never corrupts the cache.
A local model's folder also carries the content hash of its files (`weights-<hash>`): retrained weights never reuse old vectors.
Encoding missing texts happens under a per-folder flock: a concurrent run waits, then finds them stored.
Missing texts are encoded longest first in chunks of whole batches (the batches sentence-transformers would
form in one call), so `progress` (progress.py) can report texts done, texts/s and an ETA as they finish.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from ..results.store import env_faults, model_dir_name
from .identity import weights_fingerprint
from .progress import EncodeProgress, encoding
from .vector_store import VectorStore

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

    def __init__(self, model: Any, store: EmbeddingStore, variant: str = "", label: str = "") -> None:
        self._model = model
        self.store = store
        self.variant = variant
        self.label = label
        self.progress: EncodeProgress | None = None
        self.encoded = 0
        self.reused = 0

    @property
    def mteb_model_meta(self) -> Any:
        return self._model.mteb_model_meta

    def __getattr__(self, name: str) -> Any:  # similarity functions, prompts, ... of the wrapped model
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
        dataset = inputs.dataset
        texts: list[str] = dataset["text"][:]  # a list in one read, not a lazy Column iterated row by row
        prompt_key = self._prompt_key(task_metadata, prompt_type)
        keys = [text_key(prompt_key, t) for t in texts]
        # the same text twice in one call is encoded once
        first: dict[bytes, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        unique_idx = list(first.values())
        unique_keys = [keys[i] for i in unique_idx]
        found, missing, found_vecs = self.store.lookup(unique_keys)
        by_key: dict[bytes, np.ndarray] = {unique_keys[i]: v for i, v in zip(found, found_vecs)}
        n_encoded = 0
        if missing:
            with env_faults(self.store.folder), self.store.lock():
                self.store.refresh()  # another run may have stored them while we waited
                found, missing, found_vecs = self.store.lookup(unique_keys)
                by_key.update({unique_keys[i]: v for i, v in zip(found, found_vecs)})
                if missing:
                    new_keys = [unique_keys[i] for i in missing]
                    new = self._encode_rows(dataset, [unique_idx[i] for i in missing], inputs.batch_size or 32,
                                            dict(task_metadata=task_metadata, hf_split=hf_split,
                                                 hf_subset=hf_subset, prompt_type=prompt_type, **kwargs))
                    self.store.add(new_keys, new)
                    by_key.update(zip(new_keys, new))
                    n_encoded = len(missing)
        self.encoded += n_encoded
        self.reused += len(texts) - n_encoded
        return np.stack([by_key[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)

    def _encode_rows(self, dataset: Any, rows: list[int], batch_size: int, call: dict[str, Any]) -> np.ndarray:
        """Encode `dataset` rows longest first, a chunk of whole batches per call, reporting each chunk."""
        texts = _rows_of(dataset, rows)["text"][:]  # a list in one read (iterating a lazy Column: ~30 us/row)
        order = sorted(range(len(rows)), key=lambda i: -len(texts[i]))  # stable: ties keep their order
        chunk = batch_size * CHUNK_BATCHES
        ptype = str(getattr(call.get("prompt_type"), "value", call.get("prompt_type")) or "text")
        what = f"{getattr(call['task_metadata'], 'name', '')} {_PLURAL.get(ptype, ptype)}"
        label = f"{self.label} on {what}" if self.label else what
        out: np.ndarray | None = None
        with encoding(self.progress, label, len(rows)) as progress:
            for start in range(0, len(order), chunk):
                part = order[start:start + chunk]
                loader = batch_loader(_rows_of(dataset, [rows[i] for i in part]), batch_size)
                vecs = _to_numpy(self._model.encode(loader, **call))
                if out is None:
                    out = np.empty((len(rows), vecs.shape[1]), dtype=np.float32)
                out[part] = vecs
                progress.advance(len(part))
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)


def _rows_of(dataset: Any, rows: list[int]) -> Any:
    """`dataset.select(rows)` without hashing `rows` into a fingerprint (pickling a million ints: ~20 us/row).

    Contiguous ascending rows (the large-corpus path hands them so) become a zero-copy slice.
    """
    if rows and rows[-1] - rows[0] == len(rows) - 1 and rows == list(range(rows[0], rows[-1] + 1)):
        if rows[0] == 0 and len(rows) == len(dataset):
            return dataset
        return dataset.select(range(rows[0], rows[-1] + 1), new_fingerprint=_fingerprint(dataset, rows))
    return dataset.select(rows, new_fingerprint=_fingerprint(dataset, rows))


def _fingerprint(dataset: Any, rows: list[int]) -> str:
    digest = hashlib.blake2b(np.asarray(rows, dtype=np.int64).tobytes(), digest_size=8)
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


def wrap_cache(model: Any, cand: Any, cache_root: Path) -> Any:
    """The candidate's model behind its embedding cache folder (dense encoders only)."""
    if not cand.cacheable or not hasattr(model, "encode"):
        return model
    folder = Path(cache_root) / model_dir_name(cand.name) / cand.revision
    if cand.cache_variant:
        folder = folder / model_dir_name(cand.cache_variant)
    weights = weights_fingerprint(getattr(cand, "weight_paths", ()), cache_root)
    if weights:
        folder = folder / f"weights-{weights[:16]}"
    return CachedEncoder(model, EmbeddingStore(folder), variant=cand.cache_variant, label=cand.label)
