"""Similarity scores that do not depend on block shape, thread count or CPU kernels.

A float32 matrix product sums each dot product in an order chosen by the BLAS kernel, and that order changes with
the shape of the block (a document in a block of 5 and the same document in a block of 50,000 get scores that
differ in the last bit), with the thread count and with the instruction set. Two searches over the same vectors
cut into different blocks (mteb's 50,000-document chunks, the block-wise chunk search, a test's small chunks) then
disagree in the last bit, and identical vectors at different positions are "tied" only up to rounding.

`exact_similarity` computes cosine and dot-product scores so that each score is a function of the two vectors
alone: every vector is split into two slices of integers on a fixed grid (`_slices`), the slice products are
float64 matrix products whose every partial sum is an integer below 2**53, hence exact in any summation order, and
the three slice products are combined element by element in a fixed order, then rounded once to float32. The
score is the dot product of the vectors rounded to 2*beta bits (beta = 21 for 384 dimensions, an absolute error
below 1e-11), so it is within one float32 rounding of the exact value and bit-identical for any blocks, thread
counts, BLAS kernels and machines (IEEE float64). Cosine normalises each row in float64 with a fixed-order sum.
Cost: three float64 products instead of one float32 product (about 4-5x the scoring time, still small next to
encoding). Models with another similarity (euclidean, manhattan, MaxSim, custom) keep their own `similarity`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

EXACT_KINDS = ("cosine", "dot")
_COLUMNS = 1 << 24  # float64 elements per product block: bounds the temporaries at ~128 MB each
_BLOCK_ROWS = 4096  # rows of `b` converted to float64 at a time


def similarity_kind(model: Any) -> str | None:
    """'cosine' or 'dot' when `model.similarity` is known to compute that function, else None.

    Known: an encoder class that declares `plain_similarity` (runners.execution.encoding.synthetic), and mteb's own encoder
    wrappers, whose `similarity` follows the model's declared function: a sentence-transformers model's
    `similarity_fn_name`, else mteb's `similarity_fn_name` in the model's metadata.
    """
    declared = getattr(type(model), "plain_similarity", None)
    if declared is not None:
        return declared if declared in EXACT_KINDS else None
    if not _mteb_similarity(type(model)):
        return None
    inner = getattr(getattr(model, "model", None), "similarity_fn_name", None)
    if isinstance(inner, str):
        kind: Any = inner
    else:
        kind = getattr(getattr(model, "mteb_model_meta", None), "similarity_fn_name", None)
    kind = getattr(kind, "value", kind)
    return kind if kind in EXACT_KINDS else None


def _mteb_similarity(cls: type) -> bool:
    """Whether the class's `similarity` is mteb's `AbsEncoder` / sentence-transformers wrapper method."""
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    method = getattr(cls, "similarity", None)
    return method is not None and method in (AbsEncoder.similarity, SentenceTransformerEncoderWrapper.similarity)


def similarity(model: Any, a: Any, b: Any) -> Any:
    """`model.similarity(a, b)`, computed by `exact_similarity` when the model's function is cosine or dot."""
    kind = similarity_kind(model)
    return model.similarity(a, b) if kind is None else exact_similarity(a, b, kind)


def exact_similarity(a: Any, b: Any, kind: str = "cosine") -> Any:
    """A (len(a), len(b)) float32 torch tensor of scores; each depends only on its two vectors (module docstring).

    `b` is taken `_BLOCK_ROWS` rows at a time (all per-row steps are row-independent, so blocks change nothing),
    so the float64 copies stay small next to the float32 vectors.
    """
    import torch

    if kind not in EXACT_KINDS:
        raise ValueError(f"no exact similarity for {kind!r}")
    x, xs = _prepared(_rows(a), kind)
    beta = _grid_bits(x.shape[1])
    xh, xl = (torch.from_numpy(part) for part in _slices(x, beta))
    two_d = getattr(b, "ndim", None) == 2 or np.ndim(b) == 2
    n = len(b) if two_d else 1
    out = torch.empty((len(x), n), dtype=torch.float32)
    step = max(1, min(_BLOCK_ROWS, _COLUMNS // max(len(x), 1)))
    for start in range(0, n, step):
        stop = min(start + step, n)
        y, ys = _prepared(_rows(b[start:stop] if two_d else b), kind)
        if y.shape[1] != x.shape[1]:
            raise ValueError(f"vectors of {x.shape[1]} and {y.shape[1]} dimensions cannot be compared")
        yh, yl = (torch.from_numpy(part).T for part in _slices(y, beta))
        high = (xh @ yh).numpy() * 2.0 ** (-2 * beta)  # exact: integer sums below 2**53, scaled by a power of 2
        low = ((xh @ yl).numpy() + (xl @ yh).numpy()) * 2.0 ** (-3 * beta)  # the integer sum is exact, too
        score = high + low  # the one float64 rounding, element by element
        if kind == "dot":
            score = score * np.exp2(xs[:, None] + ys[None, :])
        out[:, start:stop] = torch.from_numpy(score.astype(np.float32))
    return out


def _prepared(x: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows within [-1, 1]: unit rows (cosine), or scaled by a power of two (dot) with the exponents to undo it."""
    return (_unit(x), np.zeros(len(x))) if kind == "cosine" else _scaled(x)


def _rows(v: Any) -> np.ndarray:
    """A 2-D float64 copy of numpy arrays or torch tensors (any float dtype, any device)."""
    if hasattr(v, "detach"):
        v = v.detach().to("cpu").double().numpy()
    arr = np.asarray(v, dtype=np.float64)
    return arr.reshape(1, -1) if arr.ndim == 1 else arr


def _row_sum_of_squares(x: np.ndarray) -> np.ndarray:
    """Per row, the sum of squares added column by column: the same order for any number of rows."""
    total = np.zeros(len(x))
    for column in np.ascontiguousarray(x.T):
        total += column * column
    return total


def _unit(x: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (at least 1e-12, as torch's `normalize`): every entry within [-1, 1]."""
    return x / np.maximum(np.sqrt(_row_sum_of_squares(x)), 1e-12)[:, None]


def _scaled(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows scaled by a power of two into [-1, 1] (exact), and the exponents that undo it."""
    _, exponent = np.frexp(np.abs(x).max(axis=1, initial=0.0))
    return np.ldexp(x, -exponent[:, None]), exponent.astype(np.float64)


def _grid_bits(dim: int) -> int:
    """Bits per slice such that `dim` products of two slices sum below 2**52 (exact in float64)."""
    return max(1, min(26, (52 - math.ceil(math.log2(max(dim, 2)))) // 2))


def _slices(x: np.ndarray, beta: int) -> tuple[np.ndarray, np.ndarray]:
    """x in [-1, 1] as integers hi + lo * 2**-beta on the 2**-beta grid (|hi| <= 2**beta, |lo| <= 2**(beta-1)).

    x * 2**beta and its difference from the rounded integer are exact in float64, so the split is exact up to
    the rounding of `lo` (below 2**-(2*beta+1)).
    """
    scaled = x * 2.0**beta
    hi = np.rint(scaled)
    lo = np.rint((scaled - hi) * 2.0**beta)
    return np.ascontiguousarray(hi), np.ascontiguousarray(lo)
