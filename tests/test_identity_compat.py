"""Candidates as values (issue 37): the identities of results written before are the identities computed now.

tests/fixtures/identity_v1/ was written by main at a30edff, before candidates became values: `identities.json`
(every kind of candidate of tests/identity_cases.py with its run identity, cache folder variant and rerank score
cache id) and `results/` (a results folder of BM25, MiniLM, their hybrid and a rerank, run on a copy of the tiny
task). If any of these differs, an upgrade would re-run stored results or call them stale. Two recorded
identities were corrected since (`corrected` in identities.json): a hybrid on `MiniLM-msl64` and an ANN index on
`MiniLM-onnx` were built on the plain MiniLM before, so their stored results measured the plain model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import identity_cases as ic
from runners.config.benchmark import BenchmarkConfig


def _built(tmp_path: Path, monkeypatch, which=ic.config):
    from runners.execution.run import candidates_for
    from runners.execution.tasks import load_task

    ic.pinned_machine(monkeypatch)
    path = which(tmp_path)
    try:
        cfg = BenchmarkConfig.from_file(path)
        return cfg, candidates_for(cfg), load_task(cfg.tasks[0], cfg)
    finally:
        path.unlink()


def test_every_kind_of_candidate_keeps_the_identity_main_recorded(tmp_path: Path, monkeypatch) -> None:
    from runners.execution.candidates.run_identity import run_identity

    recorded = json.loads(ic.RECORD.read_text())["candidates"]
    cfg, cands, task = _built(tmp_path, monkeypatch)
    assert sorted(c.label for c in cands) == sorted(recorded)
    kinds = {c.kind for c in cands}
    assert kinds == {"bm25", "mteb", "sentence-transformers", "factory", "run", "retriever", "endpoint", "hybrid",
                     "chunk", "ann", "rerank"}
    for cand in cands:
        want = recorded[cand.label]
        assert (cand.name, cand.revision, cand.kind) == (want["name"], want["revision"], want["kind"]), cand.label
        assert cand.cache_variant == want["cache_variant"], cand.label
        assert run_identity(cand, task, None, cfg.cache_path) == want["identity"], cand.label
        assert run_identity(cand, task, 100, cfg.cache_path)["fingerprint"] == want["identity_keep_100"], cand.label


def test_the_rerank_score_cache_keeps_its_folder(tmp_path: Path, monkeypatch) -> None:
    """The reranker's pair-score cache is named by the reranker's settings and weights: the same folder as before."""
    from runners.execution.candidates.rerank_candidate import reranker_cache_id

    recorded = json.loads(ic.RECORD.read_text())["candidates"]
    cfg, cands, _ = _built(tmp_path, monkeypatch)
    reranks = [c for c in cands if c.kind == "rerank"]
    assert len(reranks) == 4
    for cand in reranks:
        assert reranker_cache_id(cand.value, cfg.cache_path) == recorded[cand.label]["rerank_cache_id"], cand.label


@pytest.mark.slow
def test_a_results_folder_written_before_is_reused_as_it_is(tmp_path: Path) -> None:
    """Nothing of a results folder written by the earlier code is re-run, and every run in it is current."""
    from runners.execution.run import candidates_for, run_benchmark, why_not_complete
    from runners.execution.candidates.run_identity import run_identity
    from runners.execution.tasks import load_task

    results = tmp_path / "results"
    shutil.copytree(ic.FIXTURE / "results", results)
    path = ic.results_config(tmp_path, results)
    try:
        cfg = BenchmarkConfig.from_file(path)
        task = load_task(cfg.tasks[0], cfg)
        cands = candidates_for(cfg)
        assert [why_not_complete(results, c, task, run_identity(c, task, cfg.keep_top_k, cfg.cache_path))
                for c in cands] == [""] * 4
        records = run_benchmark(cfg, show_progress=False, candidates=cands, tasks=[task])
    finally:
        path.unlink()
    assert [(r.label, r.status) for r in records] == [(c.label, "skipped") for c in cands]
    # no model was loaded, nothing encoded: the cache holds at most the weights files' hash memo (identities
    # hash the weights; that memo is written when they are computed), no vectors
    cached = sorted(p.name for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert cached in ([], ["weights-fingerprints.json"]), cached
