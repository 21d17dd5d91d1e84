"""Block-independent scores (runners/search/scores.py) and the (score, id) top-k rule (runners/search/top_k.py).

The summation is perturbed on purpose (other blocks, permuted dimensions, other thread counts, other CPU kernels
in a fresh process): plain float32 products change under these perturbations, these scores must not.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from runners.search.scores import exact_similarity, similarity, similarity_kind
from runners.search.top_k import TopKDocs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _vectors(n: int, dim: int, seed: int) -> np.ndarray:
    """float32 rows of mixed magnitudes (some components tiny), as embeddings are."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    x *= np.float32(2.0) ** rng.integers(-12, 3, size=(n, dim)).astype(np.float32)
    return x


def _blocks(q: np.ndarray, d: np.ndarray, rows: int, cols: int, kind: str) -> torch.Tensor:
    return torch.cat([torch.cat([exact_similarity(q[i:i + rows], d[j:j + cols], kind)
                                 for j in range(0, len(d), cols)], 1) for i in range(0, len(q), rows)], 0)


@pytest.mark.parametrize("kind", ["cosine", "dot"])
def test_scores_do_not_depend_on_blocks_order_or_threads(kind, monkeypatch):
    import runners.search.scores as scores

    q, d = _vectors(9, 384, 1), _vectors(300, 384, 2)
    full = exact_similarity(q, d, kind)
    assert full.dtype == torch.float32 and full.shape == (9, 300)
    monkeypatch.setattr(scores, "_BLOCK_ROWS", 7)  # its own inner blocks, too
    assert torch.equal(exact_similarity(torch.from_numpy(q), d.tolist(), kind), full)
    assert torch.equal(exact_similarity(q[0], d[5], kind), full[:1, 5:6])  # 1-D vectors
    monkeypatch.undo()
    for rows, cols in ((1, 7), (9, 16), (2, 37), (9, 299)):
        assert torch.equal(_blocks(q, d, rows, cols, kind), full), (rows, cols)
    perm = np.random.default_rng(3).permutation(384)  # another summation order for every score
    assert torch.equal(exact_similarity(q[:, perm], d[:, perm], kind), full)
    threads = torch.get_num_threads()
    try:
        for n in (1, 2, 4):
            torch.set_num_threads(n)
            assert torch.equal(exact_similarity(q, d, kind), full), n
    finally:
        torch.set_num_threads(threads)
    # the control: a float32 product's sums do change under the same permutation (so the check above can fail)
    plain = torch.from_numpy(q) @ torch.from_numpy(d).T
    assert not torch.equal(torch.from_numpy(q[:, perm]) @ torch.from_numpy(d[:, perm]).T, plain)


@pytest.mark.parametrize("kind", ["cosine", "dot"])
def test_scores_are_the_exact_value_rounded_to_float32(kind):
    q, d = _vectors(4, 96, 4).astype(np.float64), _vectors(40, 96, 5).astype(np.float64)
    got = exact_similarity(q.astype(np.float32), d.astype(np.float32), kind).numpy()
    for i in range(len(q)):
        for j in range(len(d)):
            exact = math.fsum(q[i] * d[j])  # float32 products are exact in float64; fsum rounds once
            if kind == "cosine":
                exact /= math.sqrt(math.fsum(q[i] * q[i])) * math.sqrt(math.fsum(d[j] * d[j]))
            assert abs(float(got[i, j]) - exact) <= 0.5 * float(np.spacing(np.float32(abs(exact)))) * 1.01 + 1e-12


def test_identical_vectors_tie_exactly_at_any_position_and_zero_vectors_score_zero():
    q, d = _vectors(3, 384, 6), np.repeat(_vectors(1, 384, 7), 133, axis=0)
    d[50] = 0.0
    for scores in (exact_similarity(q, d), exact_similarity(q, d[17:])):
        s = scores.numpy()
        assert (np.delete(s, 50 if len(s[0]) == 133 else 33, axis=1) == s[:, :1]).all()
    assert (exact_similarity(q, d)[:, 50] == 0).all()


def test_same_scores_in_a_fresh_process_with_other_cpu_kernels_and_threads():
    """ATEN/MKL instruction sets and thread counts change a float32 product's kernels; these scores stay."""
    code = ("import hashlib, numpy as np, torch; from tests.test_scores import _vectors; "
            "from runners.search.scores import exact_similarity as e; torch.backends.mkldnn.enabled = False; "
            "q, d = _vectors(7, 384, 8), _vectors(257, 384, 9); "
            "print(hashlib.sha256(e(q, d).numpy().tobytes() + e(q, d, 'dot').numpy().tobytes()).hexdigest())")
    q, d = _vectors(7, 384, 8), _vectors(257, 384, 9)
    here = hashlib.sha256(exact_similarity(q, d).numpy().tobytes()
                          + exact_similarity(q, d, "dot").numpy().tobytes()).hexdigest()
    for env in ({"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "OMP_NUM_THREADS": "1"},
                {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "OMP_NUM_THREADS": "2"}):
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**os.environ, **env}, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == here, env


class _Declared:
    plain_similarity = "cosine"

    def similarity(self, a, b):
        raise AssertionError("not called: the cosine is computed exactly")


class _Custom:
    def similarity(self, a, b):
        return torch.full((len(a), len(b)), 7.0)


def test_similarity_kind_and_dispatch():
    from mteb.models.abs_encoder import AbsEncoder
    from mteb.models.model_meta import ModelMeta, ScoringFunction

    class Meta(AbsEncoder):
        def __init__(self, fn):
            self.mteb_model_meta = ModelMeta.create_empty(overwrites={"name": "a/b", "similarity_fn_name": fn})

        def encode(self, *a, **k):
            raise NotImplementedError

    assert similarity_kind(_Declared()) == "cosine" and similarity_kind(_Custom()) is None
    assert [similarity_kind(Meta(f)) for f in (ScoringFunction.COSINE, ScoringFunction.DOT_PRODUCT,
                                               ScoringFunction.EUCLIDEAN)] == ["cosine", "dot", None]
    q, d = _vectors(2, 8, 10), _vectors(3, 8, 11)
    assert torch.equal(similarity(_Declared(), q, d), exact_similarity(q, d))
    assert torch.equal(similarity(_Custom(), q, d), torch.full((2, 3), 7.0))  # its own function, untouched
    assert torch.equal(similarity(Meta(ScoringFunction.DOT_PRODUCT), q, d), exact_similarity(q, d, "dot"))


def _rule(scores: np.ndarray, ids: list[str], k: int) -> list[list[tuple[float, str]]]:
    """The definition: per row, the k greatest (score, id) pairs."""
    return [sorted(zip(row.tolist(), ids), reverse=True)[:k] for row in scores]


@pytest.mark.parametrize("k", [1, 3, 10, 50])
def test_top_k_is_the_score_then_id_rule_for_any_blocks(k):
    rng = np.random.default_rng(k)
    scores = (rng.integers(0, 5, size=(6, 40)) / 4).astype(np.float32)  # five values: ties everywhere
    ids = [f"d{i:02d}" for i in rng.permutation(40)]
    expected = _rule(scores, ids, k)
    for block in (1, 3, 7, 40):
        ranked = TopKDocs([f"q{i}" for i in range(6)], k)
        for s in range(0, 40, block):
            ranked.add(torch.from_numpy(scores[:, s:s + block]), ids[s:s + block])
        got = ranked.results()
        assert [list(((v, d) for d, v in got[f"q{i}"].items())) for i in range(6)] == expected, block


def test_top_k_equals_mteb_heap_when_no_tie_straddles_the_cut():
    rng = np.random.default_rng(5)
    scores = rng.standard_normal((4, 30)).astype(np.float32)
    ids = [f"d{i}" for i in range(30)]
    ranked = TopKDocs(["a", "b", "c", "d"], 10)
    ranked.add(scores, ids)
    for q, qid in enumerate("abcd"):
        values, idx = torch.topk(torch.from_numpy(scores[q]), 11)
        heap: list = []
        for v, i in zip(values.tolist(), idx.tolist()):
            heapq.heappush(heap, (v, ids[i])) if len(heap) < 10 else heapq.heappushpop(heap, (v, ids[i]))
        assert ranked.results()[qid] == {d: v for v, d in heap}
