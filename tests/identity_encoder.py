"""A cheap deterministic encoder for run-identity tests, given to benchmark configs via `factory:`.

Bag of words: each word has a fixed random vector; a text is the sum of its (first `max_seq_length`)
words' vectors times a weight matrix read from `<path>/weights.npy` (the entry's `path:`, like a local
model folder) or from `weights` (a .npy file).
Every encode call appends "<pid> <number of texts>" to `count_file`, so tests can see what was
encoded, by which process; `hold_file` makes the first call wait until that file exists.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from typing import Any

import numpy as np

from runners.execution.encoding.synthetic import CosineSimilarity

DIM = 16


def word_vec(word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(DIM)


class NumpyEncoder(CosineSimilarity):
    def __init__(self, path: str | None = None, weights: str | None = None, count_file: str | None = None, hold_file: str | None = None,
                 started_file: str | None = None) -> None:
        from mteb.models.model_meta import ModelMeta, ScoringFunction

        weights = weights or (os.path.join(path, "weights.npy") if path else None)
        self.weights = np.load(weights) if weights else np.eye(DIM)
        self.count_file, self.hold_file, self.started_file = count_file, hold_file, started_file
        self.max_seq_length: int | None = None  # in words
        self.mteb_model_meta = ModelMeta.create_empty(overwrites={
            "name": "test/np", "revision": "r1", "similarity_fn_name": ScoringFunction.COSINE})

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, prompt_type: Any = None,
               **kwargs: Any) -> np.ndarray:
        texts = [t for batch in inputs for t in batch["text"]]
        if self.started_file:
            open(self.started_file, "a").close()
        if self.hold_file:
            deadline = time.time() + 120
            while not os.path.exists(self.hold_file) and time.time() < deadline:
                time.sleep(0.05)
        if self.count_file:
            with open(self.count_file, "a") as f:
                f.write(f"{os.getpid()} {len(texts)}\n")
        rows = []
        for t in texts:
            words = re.findall(r"\w+", t.lower())[: self.max_seq_length or None]
            rows.append(sum((word_vec(w) for w in words), np.zeros(DIM)) @ self.weights + 1e-3)
        return np.asarray(rows, dtype=np.float32)
