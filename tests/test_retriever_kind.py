"""`kind: retriever`: a factory's object with search(queries, top_k) scored by mteb (no database needed here).

The vector-database adapters are tested against real databases in test_vector_db.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TINY_YAML, write_benchmark
from custom_tasks.errors import ConfigError
from runners.config.benchmark import BenchmarkConfig
from runners.execution.candidates.experiment_candidates import clear_shared
from runners.execution.run import run_benchmark
from runners.results.store import load_per_query, read_identity, run_dir

NP = {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1"}
METRICS = ("ndcg_at_10", "recall_at_10", "mrr_at_10", "map_at_10")


def _words(**kwargs) -> dict:
    return {"name": "toy/words", "kind": "retriever", "factory": "tests.toy_retrievers:make_words",
            "factory_kwargs": kwargs}


def _run(tmp_path: Path, models: list[dict]) -> tuple[BenchmarkConfig, dict]:
    clear_shared()
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=models))
    return cfg, {r.candidate: r for r in run_benchmark(cfg, show_progress=False)}


def test_a_retriever_is_scored_by_mteb_and_reused_until_its_settings_change(tmp_path: Path) -> None:
    log = tmp_path / "calls.txt"
    cfg, recs = _run(tmp_path, [_words(log_file=str(log))])
    rec = recs["toy/words"]
    assert rec.status == "ran" and rec.scores["ndcg_at_10"] > 0.3, rec
    assert log.read_text().split("\n")[:2] == ["index 12", "search 10 1000"]  # whole corpus once, mteb's top_k
    pq = load_per_query(cfg.results_path, "toy/words", "TinyKBRetrieval", "ndcg_at_10")
    assert len(pq) == 10
    ident = read_identity(run_dir(cfg.results_path, "toy/words", "local", "TinyKBRetrieval",
                                  _revision(cfg)))["candidate"]
    assert ident["kind"] == "retriever" and ident["factory"] == "tests.toy_retrievers:make_words"

    _, again = _run(tmp_path, [_words(log_file=str(log))])
    assert again["toy/words"].status == "skipped"
    _, changed = _run(tmp_path, [_words(log_file=str(log), weight=0.002)])
    assert changed["toy/words"].status == "ran"
    assert "candidate.factory_kwargs" in changed["toy/words"].reason
    _, revised = _run(tmp_path, [{**_words(log_file=str(log), weight=0.002), "revision": "v2"}])
    assert revised["toy/words"].status == "ran"  # another revision: its own results folder


def _revision(cfg: BenchmarkConfig) -> str:
    from runners.execution.tasks import load_task, task_revision

    return task_revision(load_task(str(TINY_YAML)))


@pytest.mark.parametrize("bad, message", [
    ("unknown-doc", "document id 'no-such-doc' is not in the corpus"),
    ("nan", "is not a finite number"),
    ("unknown-query", "query id 'no-such-query', which was not asked"),
    ("not-a-dict", "search() returned list"),
])
def test_a_wrong_answer_fails_the_candidate_with_one_line(tmp_path: Path, bad: str, message: str) -> None:
    _, recs = _run(tmp_path, [_words(bad=bad), {"name": "bm25"}])
    rec = recs["toy/words"]
    assert rec.status == "failed" and message in rec.reason, rec.reason
    assert "\n" not in rec.reason
    assert recs["mteb/baseline-bm25s"].status == "ran"  # the others still run


def test_a_query_the_retriever_leaves_out_retrieves_nothing(tmp_path: Path) -> None:
    cfg, recs = _run(tmp_path, [_words(bad="drop-query")])
    assert recs["toy/words"].status == "ran"
    pq = load_per_query(cfg.results_path, "toy/words", "TinyKBRetrieval", "recall_at_10")
    assert len(pq) == 10 and (pq == 0).sum() >= 1


def test_the_embedder_hands_the_models_cached_vectors_and_reproduces_its_run(tmp_path: Path) -> None:
    """An exact search over the embedder's vectors equals the model's own run per query, encoding nothing."""
    count = tmp_path / "count.txt"
    exact = {"name": "toy/exact", "kind": "retriever", "factory": "tests.toy_retrievers:make_exact",
             "factory_kwargs": {"model": "test/np"}}
    cfg, recs = _run(tmp_path, [{**NP, "factory_kwargs": {"count_file": str(count)}}, exact])
    assert recs["toy/exact"].status == "ran", recs["toy/exact"].reason
    assert recs["toy/exact"].encoded == 0 and recs["toy/exact"].reused == 22  # 12 documents + 10 queries
    assert sum(int(line.split()[1]) for line in count.read_text().splitlines()) == 22  # the plain run's only
    for metric in METRICS:
        a = load_per_query(cfg.results_path, "test/np", "TinyKBRetrieval", metric)
        b = load_per_query(cfg.results_path, "toy/exact", "TinyKBRetrieval", metric)
        assert (a - b.reindex(a.index)).abs().max() <= 1e-6, metric
    ident = read_identity(run_dir(cfg.results_path, "toy/exact", "local", "TinyKBRetrieval", _revision(cfg)))
    assert ident["candidate"]["embedder"]["name"] == "test/np"  # the model's identity is the retriever's too


def test_a_factory_that_takes_an_embedder_needs_a_model(tmp_path: Path) -> None:
    bad = {"name": "toy/exact", "kind": "retriever", "factory": "tests.toy_retrievers:make_exact"}
    _, recs = _run(tmp_path, [bad])
    assert recs["toy/exact"].status == "failed" and "takes an embedder" in recs["toy/exact"].reason


def test_kind_retriever_without_a_factory_is_a_config_error(tmp_path: Path) -> None:
    path = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{"name": "x", "kind": "retriever"}])
    with pytest.raises(ConfigError, match="kind retriever needs `factory"):
        BenchmarkConfig.from_file(path)


def test_a_retriever_with_an_embedder_is_a_rerank_first_stage(tmp_path: Path) -> None:
    """The first stage is built with the benchmark config (its embedder needs the model and the cache)."""
    exact = {"name": "toy/exact", "kind": "retriever", "factory": "tests.toy_retrievers:make_exact",
             "factory_kwargs": {"model": "test/np"}}
    rerank = {"type": "rerank", "first": "toy/exact", "depth": [5],
              "reranker": {"name": "toy/overlap", "kind": "factory", "factory": "tests.toy_retrievers:make_overlap_reranker"}}
    clear_shared()
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=[NP, exact],
                                                    experiments=[rerank]))
    recs = run_benchmark(cfg, show_progress=False)
    assert [r.status for r in recs] == ["ran", "ran", "ran"], [(r.label, r.reason) for r in recs]
