"""Why an encode backend cannot go faster: the transformer's work in FLOP next to this CPU's bare matmul rates.

Used by bench_backends.py after its table: the texts' token counts (the model's tokenizer, its max_seq_length),
the FLOP of a BERT-style encoder over them (per token and layer: Q, K, V, O projections 4*H^2 and the feed-forward
2*H*F multiply-adds; attention 2*n^2*H per sequence; a multiply-add counts 2), the rate a backend's measured network
seconds imply, and what a plain torch matmul of the feed-forward's shape reaches here in fp32 and bf16 — the
ceiling a runtime's kernels can approach.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np


def token_counts(st_model: Any, texts: list[str]) -> np.ndarray:
    """Tokens per text as the model sees them (its tokenizer, cut at its max_seq_length)."""
    tok, cut = st_model.tokenizer, st_model.max_seq_length
    return np.array([len(ids) for ids in tok(texts, truncation=True, max_length=cut)["input_ids"]], dtype=np.int64)


def encoder_flop(lengths: np.ndarray, hidden: int, layers: int, ffn: int) -> float:
    n = lengths.astype(np.float64)
    per_layer = 2 * n * (4 * hidden * hidden + 2 * hidden * ffn) + 2 * 2 * n * n * hidden
    return float(layers * per_layer.sum())


def matmul_gflops(dtype: Any, rows: int = 4096, hidden: int = 384, ffn: int = 1536, repeats: int = 20) -> float:
    """A bare torch matmul of the feed-forward's shape: GFLOP/s on this CPU with torch's threads."""
    import torch

    a, b = torch.randn(rows, hidden, dtype=dtype), torch.randn(hidden, ffn, dtype=dtype)
    for _ in range(3):
        a @ b
    t0 = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * rows * hidden * ffn * repeats / (time.perf_counter() - t0) / 1e9


def print_profile(st_model: Any, queries: list[str], docs: list[str], network_s: dict[str, float]) -> None:
    """The profile lines: token counts, TFLOP, each backend's implied rate, fp32/bf16 matmul ceilings."""
    import torch

    config = st_model[0].auto_model.config
    hidden, layers, ffn = config.hidden_size, config.num_hidden_layers, config.intermediate_size
    dl, ql = token_counts(st_model, docs), token_counts(st_model, queries)
    flop = encoder_flop(dl, hidden, layers, ffn) + encoder_flop(ql, hidden, layers, ffn)
    cut = st_model.max_seq_length
    print(f"\nthe network's work: {len(dl):,} documents of {dl.mean():.1f} tokens on average ({(dl >= cut).mean():.0%} "
          f"cut at {cut}), {len(ql):,} queries of {ql.mean():.1f}: {flop / 1e12:.1f} TFLOP through {layers} layers "
          f"(hidden {hidden}, feed-forward {ffn})")
    for name, seconds in network_s.items():
        print(f"  {name:<28} network {seconds:7.1f} s = {flop / seconds / 1e9:6.0f} GFLOP/s (fp32-equivalent)")
    fp32, bf16 = matmul_gflops(torch.float32), matmul_gflops(torch.bfloat16)
    print(f"bare torch matmul {4096}x{hidden} by {hidden}x{ffn} on {torch.get_num_threads()} threads: fp32 {fp32:.0f} "
          f"GFLOP/s, bf16 {bf16:.0f} GFLOP/s ({bf16 / fp32:.1f}x): the ceilings fp32 and bf16 kernels can approach")
