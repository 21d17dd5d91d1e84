"""Documents of a corpus block -> their vectors, through the embedding cache, without per-row Python work.

mteb's own path (`create_dataloader`) standardises a corpus with `datasets.map` one row at a time and then
`CachedEncoder.encode` keys, looks up and stacks vectors row by row: for millions of documents that is most
of a run. Here a block of rows is read column-wise (Arrow), the text mteb would give the model is built
exactly as `mteb._create_dataloaders._corpus_to_dict` builds it, keyed like `CachedEncoder` (same
`text_key`, same prompt key), looked up in one vectorised pass over the memory-mapped store, and only
the missing texts go to the model, through `CachedEncoder._encode_rows` (same order, batches and progress
reporting as a normal run). The vectors returned are the ones `CachedEncoder.encode` would return, bit for
bit: hits are copied out of the same shards, misses are the float32 values just stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..results.store import env_faults
from .embedding_cache import CachedEncoder, text_key
from .vector_store import keys_array


@dataclass
class DocumentBlock:
    """Rows [start, stop) of a corpus, column-wise: what mteb's corpus dataloader would hold for them."""

    ids: list[str]
    titles: list[str]
    bodies: list[str]
    texts: list[str]  # what the model reads: title + " " + text, stripped (mteb's `_corpus_to_dict`)

    def columns(self, rows: np.ndarray) -> dict[str, list[str]]:
        """The selected rows as the columns mteb's standardised corpus has (id, title, text, body)."""
        pick = rows.tolist()
        return {"id": [self.ids[i] for i in pick], "title": [self.titles[i] for i in pick],
                "text": [self.texts[i] for i in pick], "body": [self.bodies[i] for i in pick]}


def model_text(title: str | None, body: str) -> str:
    """mteb's document text: `(title + " " + text).strip()` when there is a title, else `text.strip()`."""
    return (title + " " + body).strip() if title else body.strip()


def read_block(corpus: Any, start: int, stop: int) -> DocumentBlock:
    """Rows [start, stop) of an mteb corpus Dataset (in memory or memory-mapped), read as Arrow columns."""
    table = corpus.with_format("arrow")[start:stop]
    ids = table.column("id").to_pylist()  # as mteb reads them: ties in its heap break on these values
    bodies = table.column("text").to_pylist()
    titles = table.column("title").to_pylist() if "title" in table.column_names else [""] * len(bodies)
    titles = [t or "" for t in titles]
    return DocumentBlock(ids, titles, bodies, [model_text(t, b) for t, b in zip(titles, bodies)])


def encode_block(model: CachedEncoder, block: DocumentBlock, *, task_metadata: Any, hf_split: str,
                 hf_subset: str, encode_kwargs: dict[str, Any]) -> np.ndarray:
    """The document vectors of `block.texts` (one row each), encoding and storing only what the cache lacks.

    `encode_kwargs` are mteb's (batch_size, show_progress_bar, ...): the model gets them as in a normal run.
    """
    from mteb.types import PromptType

    prompt_type = PromptType.document
    batch_size = encode_kwargs.get("batch_size", 32)
    prompt_key = model._prompt_key(task_metadata, prompt_type)
    keys = keys_array([text_key(prompt_key, t) for t in block.texts])
    if not len(keys):
        return np.zeros((0, model.store.dim or 0), np.float32)
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    store = model.store
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
                rows = np.sort(first[missing])  # first occurrences, in corpus order, as CachedEncoder.encode
                rows = longest_first(rows, block.texts)
                new = _encode_missing(model, block, rows, batch_size, dict(
                    task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                    prompt_type=prompt_type, **encode_kwargs))
                store.add(keys[rows], new)
    # hits copied out of the memory maps, misses from what was just stored (the same float32 values)
    where, at = shard_of[inverse], row_of[inverse]
    hit = where >= 0
    vectors = np.empty((len(keys), store.dim or new.shape[1]), np.float32)
    vectors[hit] = store.gather(where[hit], at[hit])
    if new is not None:
        in_new = np.full(len(unique), -1, np.int64)
        in_new[inverse[rows]] = np.arange(len(rows))
        vectors[~hit] = new[in_new[inverse[~hit]]]
    model.encoded += len(rows)
    model.reused += len(keys) - len(rows)
    return vectors


def block_vectors(model: CachedEncoder) -> Any:
    """`(corpus, start, stop, **encode_block kwargs) -> vectors` of rows [start, stop): what ANN indexes take."""

    def fetch(corpus: Any, start: int, stop: int, **kwargs: Any) -> np.ndarray:
        return encode_block(model, read_block(corpus, start, stop), **kwargs)

    return fetch


def longest_first(rows: np.ndarray, texts: list[str]) -> np.ndarray:
    """`rows` in the order `CachedEncoder._encode_rows` encodes them (longest text first, stable).

    Handing it rows already in that order leaves its own sort the identity and every chunk a contiguous
    slice of the dataset, which `datasets` reads without an indices mapping (about 2.5x less per row).
    """
    lengths = np.fromiter((len(texts[i]) for i in rows.tolist()), dtype=np.int64, count=len(rows))
    return rows[np.argsort(-lengths, kind="stable")]


def _encode_missing(model: CachedEncoder, block: DocumentBlock, rows: np.ndarray, batch_size: int,
                    call: dict[str, Any]) -> np.ndarray:
    """The model's vectors of the given rows, via the cache's own encode loop (order, batches, progress)."""
    from datasets import Dataset

    dataset = Dataset.from_dict(block.columns(rows))
    return model._encode_rows(dataset, list(range(len(rows))), batch_size, call)
