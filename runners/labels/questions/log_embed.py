"""The query vectors that topic strata are clustered on, through the project's embedding cache.

Why the cache and the task's own metadata: the vectors are keyed exactly as `run` keys the task's queries (model,
revision, prompt, text), so a re-run of `questions sample` encodes nothing, and once the sampled questions are
added, `run` finds their vectors already stored. The model is a benchmark candidate like any other (default: the
offline MiniLM package); torch is imported only here, and only when topics are asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from custom_tasks.config import TaskConfig

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BATCH = 64


def topic_model(languages: list[str]) -> tuple[str, str]:
    """(the model whose vectors the topics are clustered on, a warning or ''): the offline MiniLM for a task in
    English; for a task written mostly in another language the multilingual extra's model, as `init` proposes it
    (MiniLM is trained on English only: its clusters of Chinese or Arabic text say little); without the extra,
    MiniLM and one line saying so and how to do better."""
    from ...config.init_project import multilingual_installed
    from ...config.init_templates import MULTILINGUAL, non_english

    other = non_english(languages)
    if not other or other[0] != (languages or [""])[0]:
        return DEFAULT_MODEL, ""
    if multilingual_installed():
        return MULTILINGUAL, ""
    return DEFAULT_MODEL, (f"topics: all-MiniLM-L6-v2 is trained on English; this task is {', '.join(other)}: its "
                           "topic clusters of this text say little; install the multilingual extra (pip install "
                           "'private-mteb[multilingual]') or pass --model")


class CacheEmbedder:
    """``embed(texts) -> float32 vectors`` of one model, read from / stored to ``cache_root``; ``kind`` is what the
    texts are to the model and the cache key: queries (a log), or documents (`questions generate`'s topics of the
    corpus, keyed as a run keys the corpus)."""

    def __init__(self, task: TaskConfig, cache_root: Path, model: str = DEFAULT_MODEL,
                 device: str | None = None, kind: str = "query") -> None:
        self.task, self.cache_root, self.model, self.device = task, Path(cache_root), model, device
        self.kind = kind
        self._encoder: Any = None
        self.encoded = self.reused = 0

    def _load(self) -> Any:
        from ...config.model_spec import ModelSpec
        from ...execution.cache.embedding_cache import wrap_cache
        from ...execution.candidates.candidates import candidate_from_spec
        from ...execution.candidates.run_identity import value_weights

        cand = candidate_from_spec(ModelSpec(name=self.model), self.device)
        return wrap_cache(cand.load(), cand, self.cache_root, weights=value_weights(cand, self.cache_root))

    def __call__(self, texts: list[str]) -> np.ndarray:
        from datasets import Dataset
        from mteb.types import PromptType

        from custom_tasks.task import build_metadata

        if self._encoder is None:
            self._encoder = self._load()
        enc = self._encoder
        call = {"task_metadata": build_metadata(self.task, "questions-sample"), "hf_split": self.task.splits[0],
                "hf_subset": "default", "prompt_type": PromptType(self.kind)}
        before, reused = getattr(enc, "encoded", 0), getattr(enc, "reused", 0)
        if hasattr(enc, "vectors_for"):
            vecs = enc.vectors_for(texts, lambda rows: Dataset.from_dict({"text": [texts[i] for i in rows]}),
                                   BATCH, call)
        else:  # a model the cache does not wrap
            vecs = np.asarray(enc.encode(texts, batch_size=BATCH), dtype=np.float32)
        self.encoded += getattr(enc, "encoded", len(texts)) - before
        self.reused += getattr(enc, "reused", 0) - reused
        return vecs

    def describe(self) -> str:
        return f"{self.model} via the embedding cache {self.cache_root} ({self.encoded} encoded, {self.reused} reused)"
