"""What a served request and a served index come with, held while a latency pass runs (latency.py), and the
null candidate that measures what the pass itself adds to a timed query.

mteb's searches are written for batch evaluation over `datasets`: inside every search they cut the corpus into
chunks, prepare it (title + text), and prepare the queries (instruction appended) with `datasets` transforms whose
fingerprint hashing costs milliseconds whatever the search does (profiled on the tiny task, a 2-core machine: ~7 ms
per query for the query preparation, ~4 ms per dense search for the corpus chunk `select`). A served index holds its
prepared corpus and a served request arrives as text, so during the pass each of these is computed once, untimed,
and reused by its `datasets` fingerprint (or range): what a search reads is unchanged (datasets are immutable).

`NullSearch` is a search that does nothing but what every search is handed: it reads the one-query dataset's ids and
prepared text and returns no documents. Interleaved with the candidates, its p50 is the pass's own overhead per
query (the call, the timer, the held preparation); the pass subtracts it from every candidate's times.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any


class NullSearch:
    """The null candidate: mteb's search signature, the query rows read as every search reads them, no work."""

    def search(self, queries: Any, **_kwargs: Any) -> dict[str, dict[str, float]]:
        from custom_tasks.mteb_private import combine_queries_with_instruction_text

        ids = [str(q) for q in queries["id"]]
        texts = combine_queries_with_instruction_text(queries)["text"]
        return {q: {} for q, _ in zip(ids, texts)}


@contextlib.contextmanager
def no_hybrid_bars() -> Iterator[None]:
    """mteb's HybridSearch draws a tqdm bar over its sub-models on every search: not on a one-query loop."""
    from mteb.models import hybrid_wrappers

    saved = hybrid_wrappers.tqdm
    hybrid_wrappers.tqdm = lambda it, **_kw: it
    try:
        yield
    finally:
        hybrid_wrappers.tqdm = saved


@contextlib.contextmanager
def prepared_held() -> Iterator[Callable[[Any], Any]]:
    """mteb prepares its inputs with `datasets` transforms inside every search: the corpus (title + text rows, a
    `datasets.map`, O(corpus) per query) and each query (its instruction appended: `add_column`, whose fingerprint
    hashing costs ~7 ms a call on this machine whatever the search). Both are what a served index and a served
    request come with, not query work: while the pass runs, the prepared form of a dataset is kept by its `datasets`
    fingerprint and reused. Yields the held query preparation, to prepare the sample before anything is timed."""
    from mteb.types import PromptType

    from custom_tasks.mteb_private import swap_combine_queries, swap_prepare_dataset

    held: dict[tuple[Any, ...], Any] = {}

    def prepare(dataset: Any, task_metadata: Any, prompt_type: Any = None, *args: Any, **kwargs: Any) -> Any:
        fingerprint = getattr(dataset, "_fingerprint", None)
        if prompt_type != PromptType.document or fingerprint is None:
            return saved(dataset, task_metadata, prompt_type, *args, **kwargs)
        key = (fingerprint, getattr(task_metadata, "name", ""), repr(args), repr(sorted(kwargs.items())))
        if key not in held:
            held[key] = saved(dataset, task_metadata, prompt_type, *args, **kwargs)
        return held[key]

    def combine(dataset: Any) -> Any:
        fingerprint = getattr(dataset, "_fingerprint", None)
        if fingerprint is None:
            return saved_combine(dataset)
        key = ("query", fingerprint)
        if key not in held:
            held[key] = saved_combine(dataset)
        return held[key]

    saved = swap_prepare_dataset(prepare)
    saved_combine = swap_combine_queries(combine)
    try:
        yield combine
    finally:
        swap_prepare_dataset(saved)
        swap_combine_queries(saved_combine)


@contextlib.contextmanager
def corpus_chunks_held(corpus: Any) -> Iterator[None]:
    """mteb's dense search cuts the corpus into chunks with `select(range)` inside every search (a `datasets`
    transform with its fingerprint: ~4 ms a call here, whatever the query); a served index holds its chunks.
    While the pass runs, the corpus hands out the same chunk object for the same range (datasets are
    immutable: what a search reads is unchanged)."""
    chunks: dict[tuple[int, int, int], Any] = {}
    select = corpus.select

    def held_select(indices: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(indices, range) or args or kwargs:
            return select(indices, *args, **kwargs)
        key = (indices.start, indices.stop, indices.step)
        if key not in chunks:
            chunks[key] = select(indices)
        return chunks[key]

    corpus.select = held_select
    try:
        yield
    finally:
        del corpus.select
