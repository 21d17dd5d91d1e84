"""A fast deterministic encoder for scale benchmarks and Ray tests, given to configs via `factory:`.

A text's vector depends only on the text (a blake2b-seeded hash of its bytes, spread over `dim`
float32 components), so any process on any machine gives bit-identical vectors and encoding costs
microseconds: benchmarks then show private-mteb's and mteb's own costs, not a model's. `ties`
quantises vectors onto that many distinct directions, giving many tied scores (search tests).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import numpy as np


def synthetic_vectors(texts: Iterable[str], dim: int = 384, ties: int = 0) -> np.ndarray:
    """One float32 row per text, a pure function of (text, dim, ties)."""
    texts = list(texts)
    seeds = np.frombuffer(b"".join(hashlib.blake2b(t.encode(), digest_size=8).digest() for t in texts),
                          dtype="<u8") if texts else np.zeros(0, "<u8")
    if ties:
        seeds = seeds % np.uint64(ties)
    # splitmix64 over (seed, component): vectorised, no per-text RNG object
    with np.errstate(over="ignore"):
        x = seeds[:, None] + np.arange(1, dim + 1, dtype=np.uint64)[None, :] * np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return ((x >> np.uint64(40)).astype(np.float32) / np.float32(1 << 23) - np.float32(1.0))


class CosineSimilarity:
    """mteb's similarity protocol as cosine over numpy vectors (torch imported only when scoring)."""

    plain_similarity = "cosine"  # `similarity` is plain cosine: a cache scores it block-independently (search/scores.py)

    def similarity(self, a: Any, b: Any) -> Any:
        import torch

        a, b = torch.as_tensor(np.asarray(a)), torch.as_tensor(np.asarray(b))
        return torch.nn.functional.normalize(a, dim=-1) @ torch.nn.functional.normalize(b, dim=-1).T

    def similarity_pairwise(self, a: Any, b: Any) -> Any:
        import torch

        a, b = torch.as_tensor(np.asarray(a)), torch.as_tensor(np.asarray(b))
        return (torch.nn.functional.normalize(a, dim=-1) * torch.nn.functional.normalize(b, dim=-1)).sum(-1)


class SyntheticEncoder(CosineSimilarity):
    """mteb encoder protocol; cosine similarity computed exactly like sentence-transformers models."""

    def __init__(self, dim: int = 384, ties: int = 0, name: str = "synthetic/hash-encoder",
                 revision: str = "1") -> None:
        from mteb.models.model_meta import ModelMeta, ScoringFunction

        self.dim, self.ties = dim, ties
        self.mteb_model_meta = ModelMeta.create_empty(overwrites={
            "name": name, "revision": revision, "similarity_fn_name": ScoringFunction.COSINE,
            "embed_dim": dim})

    def encode(self, inputs: Any, *, task_metadata: Any = None, hf_split: str = "", hf_subset: str = "",
               prompt_type: Any = None, **kwargs: Any) -> np.ndarray:
        texts = [t for batch in inputs for t in batch["text"]]
        return synthetic_vectors(texts, self.dim, self.ties)

    def encode_texts(self, texts: list[str]) -> np.ndarray:
        """Plain list in, matrix out (what a Ray actor calls)."""
        return synthetic_vectors(texts, self.dim, self.ties)



def make_encoder(dim: int = 384, ties: int = 0, **kwargs: Any) -> SyntheticEncoder:
    """The `factory:` entry point: `runners.execution.encoding.synthetic:make_encoder`."""
    return SyntheticEncoder(dim=dim, ties=ties, **kwargs)
