"""Documents of a corpus block -> their vectors, through the embedding cache, without per-row Python work.

mteb's own path (`create_dataloader`) standardises a corpus with `datasets.map` one row at a time: for
millions of documents that is most of a run. Here a block of rows is read column-wise (Arrow), the text mteb
would give the model is built exactly as `mteb._create_dataloaders._corpus_to_dict` builds it, and the
vectors come from `CachedEncoder.vectors_for`, the same lookup/encode path `CachedEncoder.encode` takes
(same keys, order, batches, progress and counts), so they are the ones a normal run gets, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .embedding_cache import CachedEncoder


@dataclass
class DocumentBlock:
    """Rows [start, stop) of a corpus, column-wise: what mteb's corpus dataloader would hold for them."""

    ids: list[str]
    titles: list[str]
    bodies: list[str]
    texts: list[str]  # what the model reads: title + " " + text, stripped (mteb's `_corpus_to_dict`)

    def columns(self, pick: list[int]) -> dict[str, list[str]]:
        """The selected rows as the columns mteb's standardised corpus has (id, title, text, body)."""
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
    Only the missing rows become a `datasets.Dataset` (the columns mteb's corpus dataloader would hold).
    """
    from datasets import Dataset
    from mteb.types import PromptType

    call = dict(task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                prompt_type=PromptType.document, **encode_kwargs)
    return model.vectors_for(block.texts, lambda rows: Dataset.from_dict(block.columns(rows)),
                             encode_kwargs.get("batch_size", 32), call)


def block_vectors(model: CachedEncoder) -> Any:
    """`(corpus, start, stop, **encode_block kwargs) -> vectors` of rows [start, stop): what ANN indexes take."""

    def fetch(corpus: Any, start: int, stop: int, **kwargs: Any) -> np.ndarray:
        return encode_block(model, read_block(corpus, start, stop), **kwargs)

    return fetch
