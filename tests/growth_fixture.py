"""A synthetic collection whose score must fall as distractors are added, and a cheap bag-of-words encoder.

Query i asks for three topic words; its one relevant document holds two of them in a long text, while
each distractor holds one or two topic words of a random query in a short text: the more distractors,
the more often one outranks the answer. Encoder: each word a fixed random vector (hash-seeded), a text
the sum of its words' vectors; given to benchmark configs via `factory: tests.growth_fixture:make_encoder`.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from runners.execution.encoding.synthetic import CosineSimilarity

DIM = 32


def _vec(word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(DIM)


class BagOfWords(CosineSimilarity):
    def __init__(self) -> None:
        from mteb.models.model_meta import ModelMeta, ScoringFunction

        self.mteb_model_meta = ModelMeta.create_empty(overwrites={
            "name": "test/bow", "revision": "r1", "similarity_fn_name": ScoringFunction.COSINE})

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        texts = [t for batch in inputs for t in batch["text"]]
        return np.asarray([sum((_vec(w) for w in re.findall(r"\w+", t.lower())), np.zeros(DIM)) + 1e-3
                           for t in texts], dtype=np.float32)


def make_encoder() -> BagOfWords:
    return BagOfWords()


def write_growth_task(folder: Path, n_queries: int = 20, n_distractors: int = 400, seed: int = 0) -> Path:
    """BEIR files + a task YAML in `folder`; returns the YAML path."""
    rng = np.random.default_rng(seed)
    data = folder / "growth_kb"
    (data / "qrels").mkdir(parents=True, exist_ok=True)
    filler = [f"filler{i}" for i in range(60)]
    docs, queries, qrels = [], [], ["query-id\tcorpus-id\tscore"]
    for i in range(n_queries):
        queries.append({"_id": f"q{i}", "text": f"topic{i}a topic{i}b topic{i}c"})
        docs.append({"_id": f"ans{i}", "title": "", "text": " ".join([f"topic{i}a", f"topic{i}b",
                                                                       *rng.choice(filler, 6)])})
        qrels.append(f"q{i}\tans{i}\t1")
    for j in range(n_distractors):
        i = int(rng.integers(n_queries))
        words = list(rng.choice([f"topic{i}a", f"topic{i}b", f"topic{i}c"], int(rng.integers(1, 3)), replace=False))
        docs.append({"_id": f"d{j}", "title": "", "text": " ".join(words + list(rng.choice(filler, 3)))})
    (data / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (data / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (data / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    yaml_path = folder / "growth_kb.yaml"
    yaml_path.write_text("name: GrowthKBRetrieval\ndescription: Synthetic distractor collection (test fixture).\n"
                         "source:\n  format: beir\n  path: growth_kb\nsplits: [test]\nlicense: cc0-1.0\n")
    return yaml_path


def write_distractor_corpus(folder: Path, n_queries: int = 20, n_docs: int = 300, seed: int = 1,
                            name: str = "distractors.jsonl") -> Path:
    """Another collection's documents in the same style (topic words of a random query, short texts), as one
    BEIR-style corpus file; its ids d0, d1, ... are those of the growth task's own distractors, on purpose."""
    rng = np.random.default_rng(seed)
    filler = [f"filler{i}" for i in range(60)]
    rows = []
    for j in range(n_docs):
        i = int(rng.integers(n_queries))
        words = list(rng.choice([f"topic{i}a", f"topic{i}b", f"topic{i}c"], int(rng.integers(1, 3)), replace=False))
        rows.append({"_id": f"d{j}", "title": "other", "text": " ".join(words + list(rng.choice(filler, 4)))})
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
