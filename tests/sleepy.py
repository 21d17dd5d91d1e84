"""Candidates whose search costs a known time, for the latency pass's tests (given to configs via `factory:`).

* `make_sleepy`: a `kind: retriever` whose search sleeps `sleep_ms` per query asked (scores: shared words).
* `SleepyEncoder`: the bag-of-words test encoder (identity_encoder.NumpyEncoder) that sleeps `sleep_ms` per
  query text it encodes (documents are free): a dense candidate whose served query costs at least that.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from typing import Any

from tests.identity_encoder import NumpyEncoder


class Sleepy:
    def __init__(self, sleep_ms: float = 5.0) -> None:
        self.sleep_ms = sleep_ms
        self.docs: dict[str, set[str]] = {}

    def index(self, corpus: Iterable[tuple[str, str, str]]) -> None:
        self.docs = {doc: set(re.findall(r"\w+", f"{title} {text}".lower())) for doc, title, text in corpus}

    def search(self, queries: dict[str, str], top_k: int) -> dict[str, dict[str, float]]:
        out = {}
        for qid, text in queries.items():
            time.sleep(self.sleep_ms / 1000)
            words = set(re.findall(r"\w+", text.lower()))
            scores = {d: len(words & w) + 0.001 * (i % 7) for i, (d, w) in enumerate(self.docs.items())}
            out[qid] = dict(sorted(scores.items(), key=lambda x: -x[1])[:top_k])
        return out


def make_sleepy(sleep_ms: float = 5.0) -> Sleepy:
    return Sleepy(sleep_ms)


class SleepyEncoder(NumpyEncoder):
    def __init__(self, sleep_ms: float = 5.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sleep_ms = sleep_ms

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, prompt_type: Any = None,
               **kwargs: Any) -> Any:
        out = super().encode(inputs, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                             prompt_type=prompt_type, **kwargs)
        if str(getattr(prompt_type, "value", prompt_type)) == "query":
            time.sleep(self.sleep_ms / 1000 * len(out))
        return out
