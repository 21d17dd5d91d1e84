"""Experiments (hybrid, chunking, ANN) on tiny in-memory collections with a deterministic fake encoder,
plus slow checks with the real all-MiniLM-L6-v2 on the demo knowledge base."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from custom_tasks.collection import Collection
from custom_tasks.config import TaskConfig
from custom_tasks.errors import ConfigError
from custom_tasks.task import task_from_collection
from runners.analysis.cost import experiments_table as exa
from runners.execution.candidates import experiment_candidates as ex
from runners.results.store import load_ann_agreement
from runners.search.ann import AGREEMENT_LABELS
from runners.search.chunking import Chunker, ChunkedSearch, chunk_level_collection, split_corpus
from runners.config.benchmark import BenchmarkConfig
from runners.search.hybrid import rrf, weighted
from runners.execution.run import candidates_for, run_benchmark, run_chunk_level
from runners.results.store import load_per_query, load_rankings

REPO = Path(__file__).resolve().parents[1]
FAKE = {"name": "test/fake", "kind": "factory", "factory": f"{__name__}:FakeEncoder", "revision": "r1", "label": "fake"}


# ---------------------------------------------------------------- fake encoder
class WhitespaceTokenizer:
    """HF-tokenizer look-alike: one token per whitespace-separated word, with char offsets."""

    def __call__(self, text: str, **kwargs: object) -> dict[str, list[tuple[int, int]]]:
        return {"offset_mapping": [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]}


def _word_vec(word: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(dim)


class FakeEncoder:
    """Deterministic bag-of-words encoder: the embedding of a text is the sum of its words' vectors."""

    plain_similarity = "cosine"  # its `similarity` below is plain cosine (runners/search/scores.py)

    def __init__(self, dim: int = 32) -> None:
        from mteb.models.model_meta import ModelMeta, ScoringFunction

        self.dim = dim
        self.tokenizer = WhitespaceTokenizer()
        self.mteb_model_meta = ModelMeta.create_empty(overwrites={
            "name": "test/fake", "revision": "r1", "similarity_fn_name": ScoringFunction.COSINE})
        self.texts_seen: list[str] = []

    def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs) -> np.ndarray:
        texts = [t for batch in inputs for t in batch["text"]]
        self.texts_seen += texts
        rows = [sum((_word_vec(w, self.dim) for w in re.findall(r"\w+", t.lower())), np.zeros(self.dim)) + 1e-3
                for t in texts]
        return np.asarray(rows, dtype=np.float32)

    def similarity(self, a, b):
        import torch

        a, b = torch.as_tensor(np.asarray(a)), torch.as_tensor(np.asarray(b))
        return torch.nn.functional.normalize(a, dim=-1) @ torch.nn.functional.normalize(b, dim=-1).T

    def similarity_pairwise(self, a, b):
        import torch

        a, b = torch.as_tensor(np.asarray(a)), torch.as_tensor(np.asarray(b))
        return (torch.nn.functional.normalize(a, dim=-1) * torch.nn.functional.normalize(b, dim=-1)).sum(-1)


# ---------------------------------------------------------------- tiny collections
TOPICS = ["vpn wireguard gateway tunnel", "laptop stolen airport report", "parental leave policy weeks",
          "expense receipt travel reimbursement", "printer driver floor toner", "password reset mfa token",
          "kubernetes deploy rollback canary", "badge access door office"]


def tiny_collection(n_filler: int = 0) -> Collection:
    """8 topical docs (two long: several chunks), optional random filler docs, queries with spans."""
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(400)]
    corpus, queries, qrels, spans = {}, {}, {}, {}
    for i, topic in enumerate(TOPICS):
        words = topic.split()
        filler = " ".join(rng.choice(vocab, 40 if i % 4 == 0 else 6))
        text = f"{' '.join(words)} {filler}" if i % 4 else f"{filler} {' '.join(words)} details here"
        corpus[f"d{i}"] = {"title": f"Page {i}" if i % 2 else "", "text": text}
        qid = f"q{i}"
        queries[qid] = f"{words[0]} {words[1]} question"
        qrels[qid] = {f"d{i}": 2, f"d{(i + 1) % 8}": 1}
        if i != 3:  # q3 has no evidence span
            start = text.index(words[0])
            spans[qid] = {f"d{i}": [(start, start + len(" ".join(words[:2])))]}
    for j in range(n_filler):
        corpus[f"f{j:04d}"] = {"title": "", "text": " ".join(rng.choice(vocab, 12))}
    return Collection(name="TinyKB", corpus=corpus, queries=queries, qrels={"test": qrels},
                      spans={"test": spans}, query_tags={q: {"topic": "x"} for q in queries})


def tiny_task(collection: Collection):
    cfg = TaskConfig(name=collection.name, description="tiny test collection", source={"format": "evalset"})
    return task_from_collection(collection, cfg)


def bench(tmp_path: Path, experiments: list[dict], models: list[dict] | None = None,
          task: str = "TinyKB") -> BenchmarkConfig:
    return BenchmarkConfig(name="t", tasks=[task], models=models if models is not None else [FAKE],
                           experiments=experiments, results_dir=str(tmp_path / "results"),
                           cache_dir=str(tmp_path / "cache"), stats={"resamples": 500, "metrics": ["ndcg_at_10"]})


@pytest.fixture(autouse=True)
def _fresh_models():
    ex.clear_shared()
    yield
    ex.clear_shared()


def run(cfg: BenchmarkConfig, task) -> dict:
    """Plain models then experiments, as `private-mteb run` does; records by label."""
    return {r.label: r for r in run_benchmark(cfg, candidates=candidates_for(cfg), tasks=[task], show_progress=False)}


# ---------------------------------------------------------------- fusion by hand
DENSE = {"a": 0.9, "b": 0.8, "c": 0.1}
SPARSE = {"b": 5.0, "c": 3.0, "d": 1.0}


def test_rrf_matches_hand_computation():
    got = rrf([DENSE, SPARSE], k=60)
    want = {"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 63 + 1 / 62, "d": 1 / 63}
    assert got == pytest.approx(want, abs=1e-15)
    got20 = rrf([DENSE, SPARSE], k=20)
    assert got20["b"] == pytest.approx(1 / 22 + 1 / 21)


def test_weighted_minmax_matches_hand_computation():
    got = weighted(DENSE, SPARSE, alpha=0.3)
    # dense min-max: a 1, b 0.875, c 0; bm25 min-max: b 1, c 0.5, d 0; missing -> nothing
    want = {"a": 0.3, "b": 0.3 * 0.875 + 0.7, "c": 0.7 * 0.5, "d": 0.0}
    assert got == pytest.approx(want, abs=1e-12)


# ---------------------------------------------------------------- config
@pytest.mark.parametrize("entry, problem", [
    ({"type": "bogus"}, "'type' must be one of"),
    ({"type": "hybrid", "dense": "test/fake", "fusion": "rrf", "alpha": [0.5]}, "'alpha' does not apply"),
    ({"type": "hybrid", "dense": "test/fake", "fusion": "weighted", "alpha": [1.5]}, "alpha"),
    ({"type": "chunk", "model": "test/fake", "sizes": [16, 8], "overlap": 8}, "overlap 8 must be smaller"),
    ({"type": "ann", "model": "test/fake", "index": "flat", "ef_search": [4]}, "do not apply to index 'flat'"),
    ({"type": "ann", "model": "bm25", "index": "flat"}, "must be a dense model"),
    ({"type": "chunk", "model": "test/fake", "sizes": [8], "colour": 1}, "unknown key"),
])
def test_bad_entries_name_their_position(tmp_path, entry, problem):
    cfg = bench(tmp_path, [{"type": "ann", "model": "test/fake", "index": "flat"}, entry])
    with pytest.raises(ConfigError, match=r"experiments\[1\]") as err:
        ex.candidates_from_experiments(cfg)
    assert problem in str(err.value)


def test_sweeps_expand_to_named_candidates(tmp_path):
    cfg = bench(tmp_path, [
        {"type": "hybrid", "dense": "test/fake", "fusion": "rrf", "k": [20, 60]},
        {"type": "hybrid", "dense": "fake", "fusion": "weighted", "alpha": [0.3, 0.5]},
        {"type": "chunk", "model": "test/fake", "sizes": [128, 256], "overlap": 32},
        {"type": "ann", "model": "test/fake", "index": "hnsw", "ef_search": [16, 64]},
        {"type": "ann", "model": "test/fake", "index": "ivf", "nlist": 4, "nprobe": 2},
    ])
    cands = ex.candidates_from_experiments(cfg)
    assert [c.label for c in cands] == [
        "fake +bm25 rrf20", "fake +bm25 rrf60", "fake +bm25 w0.3", "fake +bm25 w0.5",
        "fake chunk=128/32", "fake chunk=256/32", "fake hnsw M16 ef16", "fake hnsw M16 ef64", "fake ivf4 p2"]
    assert cands[1].name == "private-mteb/fake+bm25-rrf60"
    assert cands[5].name == "test/fake@chunk256-32"
    assert cands[7].name == "test/fake@hnsw-M16-ef64"
    assert {c.revision for c in cands} == {"r1"} and not any(c.cacheable for c in cands)


# ---------------------------------------------------------------- chunking
def test_chunk_windows_tokens_and_chars():
    text = "a bb ccc dddd e ff g"  # 7 words
    ws = WhitespaceTokenizer()
    offs = lambda t: ws(t)["offset_mapping"]  # noqa: E731
    assert Chunker(3, 1).windows(text, offs) == [(0, 8), (5, 15), (14, 20)]  # words 0-2, 2-4, 4-6
    assert Chunker(7, 2).windows(text, offs) == [(0, len(text))]
    assert Chunker(8, 3, unit="chars").windows("0123456789abcdef") == [(0, 8), (5, 13), (10, 16)]


def test_single_chunk_document_scores_equal_unchunked_scores_exactly(tmp_path):
    task = tiny_task(tiny_collection())
    cfg = bench(tmp_path, [{"type": "chunk", "model": "test/fake", "unit": "tokens", "sizes": [10_000]},
                           {"type": "chunk", "model": "test/fake", "unit": "chars", "sizes": [10_000]}])
    recs = run(cfg, task)
    res = cfg.results_path
    plain = load_rankings(res, "test/fake", "TinyKB")
    for name in ("test/fake@chunk10000-0", "test/fake@chunk10000c-0"):
        assert load_rankings(res, name, "TinyKB") == plain  # same docs, bit-identical float scores
        for m in ("ndcg_at_10", "mrr_at_10", "recall_at_100"):
            assert load_per_query(res, name, "TinyKB", m).equals(load_per_query(res, "test/fake", "TinyKB", m))
    assert recs["fake chunk=10000c/0c"].encoded == 0  # every one-chunk doc is the plain run's string


def test_document_scores_are_best_chunk_and_titles_stay_on_chunks():
    coll = tiny_collection()
    enc = FakeEncoder()
    ch = Chunker(4, 1)
    docs = [(d, v["title"], v["text"]) for d, v in coll.corpus.items()]
    chunks = split_corpus(docs, ch, lambda t: WhitespaceTokenizer()(t)["offset_mapping"])
    assert len(chunks) > len(docs)
    assert all(c.title == coll.corpus[c.doc_id]["title"] for c in chunks)
    task = tiny_task(coll)
    task.load_data()
    data = task.dataset["default"]["test"]
    search = ChunkedSearch(enc, ch, enc.mteb_model_meta)
    kw = dict(task_metadata=task.metadata, hf_split="test", hf_subset="default", encode_kwargs={"batch_size": 8})
    search.index(data["corpus"], **kw)
    assert search.stats["chunks"] == len(chunks)
    got = search.search(data["queries"], top_k=100, **kw)
    qv = enc.encode([{"text": [coll.queries["q1"]]}], task_metadata=None, hf_split="", hf_subset="")
    cv = enc.encode([{"text": [(c.title + " " + c.text).strip() for c in chunks]}], task_metadata=None,
                    hf_split="", hf_subset="")
    sims = enc.similarity(qv, cv)[0].numpy()
    for d in coll.corpus:
        best = max(s for s, c in zip(sims, chunks) if c.doc_id == d)
        assert got["q1"][d] == pytest.approx(float(best), abs=1e-6)


def test_cache_reuse_across_a_chunk_sweep(tmp_path):
    coll = tiny_collection()
    task = tiny_task(coll)
    cfg = bench(tmp_path, [{"type": "chunk", "model": "test/fake", "sizes": [4, 8, 10_000], "overlap": 1}])
    recs = run(cfg, task)
    offs = lambda t: WhitespaceTokenizer()(t)["offset_mapping"]  # noqa: E731
    docs = [(d, v["title"], v["text"]) for d, v in coll.corpus.items()]
    seen = {(v["title"] + " " + v["text"]).strip() for v in coll.corpus.values()} | set(coll.queries.values())
    assert recs["fake"].encoded == len(seen)
    for size, label in [(4, "fake chunk=4/1"), (8, "fake chunk=8/1"), (10_000, "fake chunk=10000/1")]:
        strings = {(c.title + " " + c.text).strip() for c in split_corpus(docs, Chunker(size, 1), offs)}
        assert recs[label].encoded == len(strings - seen), label  # only chunks that changed are encoded
        assert recs[label].reused == len(split_corpus(docs, Chunker(size, 1), offs)) - len(strings - seen) + 8
        seen |= strings
    assert recs["fake chunk=10000/1"].encoded == 0


def test_chunk_level_relevance_from_spans():
    coll = tiny_collection()
    ch = Chunker(4, 0)
    offs = lambda t: WhitespaceTokenizer()(t)["offset_mapping"]  # noqa: E731
    cc = chunk_level_collection(coll, ch, offs, "TinyKB@chunks4-0")
    assert "q3" not in cc.qrels["test"] and "q3" not in cc.queries  # no evidence span: left out ...
    assert [w.kind for w in cc.warnings] == ["no_evidence_spans"] and "1 of 8" in cc.warnings[0].message  # ... and said
    for qid, rel in cc.qrels["test"].items():
        (doc, doc_spans), = coll.spans["test"][qid].items()
        for cid, grade in rel.items():
            assert cid.rsplit("#", 1)[0] == doc and grade == 2
        span_text = coll.corpus[doc]["text"][doc_spans[0][0]:doc_spans[0][1]]
        assert all(any(w in cc.corpus[cid]["text"] for w in span_text.split()) for cid in rel)
    # d0: 40 filler words, then the topic (words 40-43 = chunk 10), then 2 more words (chunk 11)
    assert set(cc.qrels["test"]["q0"]) == {"d0#10"}
    assert set(cc.qrels["test"]["q1"]) == {"d1#0"}


def test_chunk_level_task_runs_like_a_private_task(tmp_path):
    task = tiny_task(tiny_collection())
    cfg = bench(tmp_path, [{"type": "chunk", "model": "test/fake", "sizes": [4], "score": "chunk"}])
    assert ex.candidates_from_experiments(cfg) == []  # chunk level makes tasks, not candidates
    recs = run_benchmark(cfg, candidates=candidates_for(cfg), tasks=[task], show_progress=False)
    assert [(r.candidate, r.task) for r in recs] == [("test/fake", "TinyKB"), ("test/fake", "TinyKB@chunks4-0")]
    pq = load_per_query(cfg.results_path, "test/fake", "TinyKB@chunks4-0")
    assert len(pq) == 7 and "q3" not in pq.index
    again = run_chunk_level(cfg, [task], show_progress=False)  # same chunks -> same task revision -> skipped
    assert [r.status for r in again] == ["skipped"]
    table = exa.experiment_table(cfg.results_path, cfg)
    assert "fake (chunk level)" in set(table["candidate"])


# ---------------------------------------------------------------- ANN
def test_flat_index_agrees_with_exact_search_and_gives_the_plain_metrics(tmp_path):
    task = tiny_task(tiny_collection(n_filler=150))
    cfg = bench(tmp_path, [{"type": "ann", "model": "test/fake", "index": "flat"}])
    recs = run(cfg, task)
    assert recs["fake flat"].encoded == 0
    res = cfg.results_path
    for m in ("ndcg_at_10", "mrr_at_10", "recall_at_100", "map_at_1000"):
        assert load_per_query(res, "test/fake@flat", "TinyKB", m).equals(
            load_per_query(res, "test/fake", "TinyKB", m)), m
    rec = load_ann_agreement(res, "test/fake@flat", "TinyKB")
    assert rec["summary"] == {"index_overlap_at_10": 1.0, "index_overlap_at_100": 1.0}


def test_hnsw_with_tiny_ef_reports_overlap_vs_exact_search_not_recall(tmp_path):
    task = tiny_task(tiny_collection(n_filler=1500))
    cfg = bench(tmp_path, [{"type": "ann", "model": "test/fake", "index": "hnsw", "M": 4, "ef_search": [1, 256]},
                           {"type": "ann", "model": "test/fake", "index": "ivf", "nlist": 32, "nprobe": [1]}])
    run(cfg, task)
    res = cfg.results_path
    tiny = load_ann_agreement(res, "test/fake@hnsw-M4-ef1", "TinyKB")
    big = load_ann_agreement(res, "test/fake@hnsw-M4-ef256", "TinyKB")
    ivf = load_ann_agreement(res, "test/fake@ivf32-p1", "TinyKB")
    for rec in (tiny, big, ivf):
        assert set(rec["summary"]) == {"index_overlap_at_10", "index_overlap_at_100"}
        assert all(0.0 <= v <= 1.0 for v in rec["summary"].values())
        assert not any("recall" in k for k in rec["summary"]) and rec["labels"] == AGREEMENT_LABELS
        assert len(rec["per_query"]["index_overlap_at_10"]) == 8
    assert tiny["summary"]["index_overlap_at_100"] < big["summary"]["index_overlap_at_100"]
    assert ivf["summary"]["index_overlap_at_100"] < 1.0
    path = next((res / "private-mteb" / "runs").glob("test__fake@hnsw-M4-ef1/r1/TinyKB/*/ann_agreement_test.json"))
    assert path.exists()


# ---------------------------------------------------------------- hybrid + reporting
def test_hybrid_runs_share_dense_vectors_and_alpha_one_is_dense(tmp_path):
    task = tiny_task(tiny_collection(n_filler=30))
    cfg = bench(tmp_path, [{"type": "hybrid", "dense": "test/fake", "fusion": "rrf", "k": 60},
                           {"type": "hybrid", "dense": "test/fake", "fusion": "weighted", "alpha": [0.5, 1.0]},
                           {"type": "ann", "model": "test/fake", "index": "flat"}],
                models=[FAKE, {"name": "bm25", "label": "BM25"}])
    recs = run(cfg, task)
    assert recs["fake +bm25 rrf60"].encoded == 0 and recs["fake +bm25 rrf60"].reused > 0
    res = cfg.results_path
    assert load_per_query(res, "private-mteb/fake+bm25-w1", "TinyKB").equals(
        load_per_query(res, "test/fake", "TinyKB"))
    table = exa.experiment_table(res, cfg)
    rows = table.set_index("candidate")
    assert {"fake", "BM25", "fake +bm25 rrf60", "fake +bm25 w0.5", "fake flat"} <= set(rows.index)
    r = rows.loc["fake +bm25 rrf60"]
    assert r["base"] == "fake" and r["ci_low"] <= r["mean"] <= r["ci_high"]
    assert r["diff"] == pytest.approx(r["mean"] - rows.loc["fake", "mean"])
    assert 0 < r["p_holm"] <= 1 and rows.loc["fake flat", "index_overlap_at_10"] == 1.0
    assert rows.loc["fake +bm25 w1", "diff"] == 0.0
    assert "overlap@10 vs exact=1.000" in exa.format_experiment_table(table)


# ---------------------------------------------------------------- real model (slow)
@pytest.mark.slow
def test_minilm_on_demo_single_chunk_flat_and_hybrid(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from runners.execution.run import load_task

    minilm = {"name": "sentence-transformers/all-MiniLM-L6-v2", "label": "all-MiniLM-L6-v2"}
    cfg = BenchmarkConfig(name="slow", tasks=["NorthwindKBRetrieval"], models=[minilm],
                          experiments=[{"type": "chunk", "model": minilm["name"], "unit": "chars", "sizes": [100_000]},
                                       {"type": "ann", "model": minilm["name"], "index": "flat"},
                                       {"type": "ann", "model": minilm["name"], "index": "hnsw", "ef_search": [4]},
                                       {"type": "hybrid", "dense": minilm["name"], "fusion": "rrf", "k": 60}],
                          results_dir=str(tmp_path / "results"), cache_dir=str(tmp_path / "cache"),
                          stats={"resamples": 1000})
    task = load_task("NorthwindKBRetrieval")
    recs = run(cfg, task)
    assert all(r.encoded == 0 for r in recs.values() if r.label != "all-MiniLM-L6-v2")
    res, name = cfg.results_path, "sentence-transformers/all-MiniLM-L6-v2"
    for exp in ("sentence-transformers/all-MiniLM-L6-v2@chunk100000c-0", "sentence-transformers/all-MiniLM-L6-v2@flat"):
        for m in ("ndcg_at_10", "mrr_at_10", "recall_at_100"):
            assert load_per_query(res, exp, task.metadata.name, m).equals(load_per_query(res, name, task.metadata.name, m))
    assert load_rankings(res, "sentence-transformers/all-MiniLM-L6-v2@chunk100000c-0", task.metadata.name) == \
        load_rankings(res, name, task.metadata.name)
    hnsw = load_ann_agreement(res, "sentence-transformers/all-MiniLM-L6-v2@hnsw-M16-ef4", task.metadata.name)
    assert 0 < hnsw["summary"]["index_overlap_at_10"] <= 1.0
    table = exa.experiment_table(res, cfg)
    assert set(table["candidate"]) >= {"all-MiniLM-L6-v2 +bm25 rrf60", "all-MiniLM-L6-v2 flat"}
