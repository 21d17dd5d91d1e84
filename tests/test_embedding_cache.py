"""`CachedEncoder.vectors_for`, the one lookup/encode path: what the model sees, what comes back, the lock."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from datasets import Dataset
from torch.utils.data import DataLoader

from runners.execution.cache.embedding_cache import CHUNK_BATCHES, CachedEncoder, EmbeddingStore, text_key, text_keys
from runners.execution.encoding.synthetic import SyntheticEncoder, synthetic_vectors
from runners.execution.cache.vector_store import keys_array


class _Recording(SyntheticEncoder):
    """Records every call: the batches' texts and the columns of the dataset it was handed."""

    def __init__(self) -> None:
        super().__init__(dim=8)
        self.calls: list[tuple[list[list[str]], list[str]]] = []

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        self.calls.append(([list(b["text"]) for b in inputs], list(inputs.dataset.column_names)))
        return super().encode(inputs, **kwargs)


def _loader(texts: list[str], batch_size: int) -> DataLoader:
    data = Dataset.from_dict({"text": texts, "extra": [f"x{i}" for i in range(len(texts))]})
    return DataLoader(data, batch_size=batch_size)


def _kwargs() -> dict[str, Any]:
    from mteb.types import PromptType

    return {"task_metadata": None, "hf_split": "test", "hf_subset": "default", "prompt_type": PromptType.document}


def test_text_keys_are_text_key():
    texts = ["", "a", "é\x00b", "a" * 300]
    assert text_keys("document|x", texts).tolist() == keys_array([text_key("document|x", t) for t in texts]).tolist()


def test_model_gets_first_occurrences_longest_first_in_whole_batch_chunks(tmp_path):
    texts = ["bb", "a", "dddd", "bb", "cc", "a", "eeee", "f", "gg"]
    model = _Recording()
    enc = CachedEncoder(model, EmbeddingStore(tmp_path))
    got = enc.encode(_loader(texts, 1), **_kwargs())
    assert got.dtype == np.float32 and np.array_equal(got, synthetic_vectors(texts, 8))
    seen = [t for batches, _ in model.calls for batch in batches for t in batch]
    assert seen == ["dddd", "eeee", "bb", "cc", "gg", "a", "f"]  # stable: ties keep input order
    sizes = [len(b) for b, _ in model.calls]  # one call per chunk of CHUNK_BATCHES whole batches
    assert sizes == [CHUNK_BATCHES] * (7 // CHUNK_BATCHES) + ([7 % CHUNK_BATCHES] if 7 % CHUNK_BATCHES else [])
    assert all(len(batch) == 1 for b, _ in model.calls for batch in b)
    assert all(cols == ["text", "extra"] for _, cols in model.calls)  # the dataset's own rows, extra columns kept
    assert (enc.encoded, enc.reused) == (7, 2)
    warm = CachedEncoder(_Recording(), EmbeddingStore(tmp_path))
    again = warm.encode(_loader(texts[::-1], 3), **_kwargs())
    assert np.array_equal(again, got[::-1]) and not warm._model.calls and (warm.encoded, warm.reused) == (0, 9)


def test_empty_input(tmp_path):
    enc = CachedEncoder(_Recording(), EmbeddingStore(tmp_path))
    assert enc.encode(_loader([], 4), **_kwargs()).shape == (0, 0)
    assert enc.vectors_for([], lambda rows: None, 4, _kwargs()).shape == (0, 0)  # empty store: no dim yet


@pytest.mark.parametrize("late", [["b", "d"], ["a", "b", "c", "d"]])
def test_texts_stored_by_another_run_while_waiting_for_the_lock_are_reused(tmp_path, late):
    """Under the lock the store is refreshed: what another process stored meanwhile is not encoded again."""
    texts = ["a", "b", "c", "d", "b"]
    model = _Recording()
    enc = CachedEncoder(model, EmbeddingStore(tmp_path))
    enc.store.dim  # opened (and empty) before the other run writes
    prompt = enc._prompt_key(None, _kwargs()["prompt_type"])
    theirs = np.full((len(late), 8), 7.0, np.float32)
    real_refresh = enc.store.refresh

    def refresh() -> None:
        EmbeddingStore(tmp_path).add([text_key(prompt, t) for t in late], theirs)  # the other run, meanwhile
        real_refresh()

    enc.store.refresh = refresh  # type: ignore[method-assign]
    got = enc.encode(_loader(texts, 2), **_kwargs())
    seen = [t for batches, _ in model.calls for batch in batches for t in batch]
    assert seen == [t for t in ("a", "c") if t not in late]
    for i, t in enumerate(texts):
        assert np.array_equal(got[i], np.full(8, 7.0) if t in late else synthetic_vectors([t], 8)[0])
    assert (enc.encoded, enc.reused) == (len(seen), len(texts) - len(seen))
