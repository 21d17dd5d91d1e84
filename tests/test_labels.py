"""Pooling and import: pool -> fill -> import changes the data revision, re-scores without encoding, and
gives the numbers of a fresh run; bad grades are one `file:line: problem` line."""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import pytest

from custom_tasks.config import TaskConfig
from custom_tasks.errors import CollectionError
from custom_tasks.sources import load_collection
from runners.labels.pool.judged import judged_report
from runners.labels.raters.label_import import import_labels
from runners.labels.pool.pool import build_pool, write_pool
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from tests.conftest import MINILM, write_benchmark

TASK = "TinyKBRetrieval"
BM25 = "mteb/baseline-bm25s"


def _collection(yaml_path: Path):
    cfg = TaskConfig.from_file(yaml_path)
    return load_collection(cfg.source, cfg.base_dir, cfg.name)


def _fill(csv_path: Path, grades: dict[int, str]) -> Path:
    """Annotators' work: row index -> grade ('' leaves it empty)."""
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for i, g in grades.items():
        rows[i]["grade"] = g
    out = csv_path.with_name("filled.csv")
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return out


@pytest.fixture
def ran(tmp_path, tiny_copy):
    """A run of MiniLM + BM25 on a private copy of the tiny task, for a test that changes the task."""
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(tiny_copy)]))
    first = run_benchmark(cfg, show_progress=False)
    return cfg, tiny_copy, first


@pytest.fixture(scope="module")
def ran_shared(tmp_path_factory):
    """The same run once for the tests that only read it (pool, refused imports): each would pay a run."""
    import shutil

    from tests.conftest import REPO, TINY_YAML

    base = tmp_path_factory.mktemp("labels-ran")
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", base / "kb_tiny")
    yaml_path = base / "kb_tiny.yaml"
    yaml_path.write_text(TINY_YAML.read_text().replace("../fixtures/kb_tiny", "kb_tiny"))
    cfg = BenchmarkConfig.from_file(write_benchmark(base, [str(yaml_path)]))
    return cfg, yaml_path, run_benchmark(cfg, show_progress=False)


def test_pool_is_the_unlabelled_union_shuffled_with_texts(ran_shared, tmp_path):
    cfg, yaml_path, _ = ran_shared
    coll = _collection(yaml_path)
    p = build_pool(cfg.results_path, coll, [MINILM, BM25], depth=3, seed=0)
    pairs = [(r["query_id"], r["doc_id"]) for r in p.rows]
    assert len(pairs) == len(set(pairs)) and pairs
    assert all(d not in coll.qrels["test"][q] for q, d in pairs)  # only unlabelled pairs
    assert len(pairs) <= sum(p.per_model.values()) and max(p.per_model.values()) <= len(pairs)
    again = build_pool(cfg.results_path, coll, [BM25, MINILM], depth=3, seed=0).rows
    assert again == p.rows  # the model order does not show in the pool
    assert [(r["query_id"], r["doc_id"]) for r in build_pool(cfg.results_path, coll, [MINILM, BM25], 3,
                                                              seed=1).rows] != pairs
    csv_path, jsonl_path = write_pool(p.rows, tmp_path / "pool.csv")
    first = json.loads(jsonl_path.read_text().splitlines()[0])
    assert set(first) == {"task", "query_id", "doc_id", "split", "query", "title", "document", "grade"}
    assert first["grade"] == "" and first["document"] == coll.corpus[first["doc_id"]]["text"]
    assert "model" not in csv_path.read_text().splitlines()[0]


def test_pool_import_round_trip_rescores_from_cache_like_a_fresh_run(ran, tmp_path):
    cfg, yaml_path, first = ran
    before = _collection(yaml_path)
    judged_before = judged_report(cfg.results_path, TASK, before.qrels["test"], [MINILM, BM25], ks=(5,))
    p = build_pool(cfg.results_path, before, [MINILM, BM25], depth=5)
    csv_path, _ = write_pool(p.rows, tmp_path / "pool.csv")
    filled = _fill(csv_path, {0: "2", 1: "1", 2: "0", 3: "0"})  # the rest stays empty
    r = import_labels(filled, TaskConfig.from_file(yaml_path), annotator="ana", date=dt.date(2026, 12, 3))
    assert (r.added, r.changed, r.ungraded) == (4, 0, len(p.rows) - 4)
    assert r.yaml_changed and r.old_revision != r.new_revision
    assert "labels_file:" in yaml_path.read_text()
    rows = [json.loads(x) for x in r.labels_path.read_text().splitlines()]
    assert {(x["annotator"], x["date"], x["source"]) for x in rows} == {("ana", "2026-12-03", "pooled")}
    after = _collection(yaml_path)
    assert after.content_hash() == r.new_revision
    assert after.qrels["test"][p.rows[0]["query_id"]][p.rows[0]["doc_id"]] == 2
    judged_after = judged_report(cfg.results_path, TASK, after.qrels["test"], [MINILM, BM25], ks=(5,))
    assert (judged_after.table["judged"] > judged_before.table["judged"]).any()

    rescored = run_benchmark(cfg, show_progress=False)
    dense = next(x for x in rescored if x.candidate == MINILM)
    assert [x.status for x in rescored] == ["ran", "ran"]
    assert dense.encoded == 0 and dense.reused > 0  # every vector came from the cache
    (tmp_path / "fresh").mkdir()
    fresh_cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path / "fresh", [str(yaml_path)]))
    fresh = run_benchmark(fresh_cfg, show_progress=False)
    for a, b in zip(rescored, fresh):
        numbers = {k: v for k, v in a.scores.items() if isinstance(v, float)}
        assert numbers and numbers == pytest.approx({k: b.scores[k] for k in numbers}, abs=1e-9, nan_ok=True)
    # a new relevant document changes at least one model's score
    assert any(a.scores["ndcg_at_10"] != f.scores["ndcg_at_10"] for a, f in zip(rescored, first))

    # importing again: the same grades are unchanged, a new grade changes the pair, the YAML is left alone
    again = import_labels(_fill(csv_path, {0: "2", 1: "0"}), TaskConfig.from_file(yaml_path), annotator="bo")
    assert (again.added, again.changed, again.unchanged, again.yaml_changed) == (0, 1, 1, False)
    assert yaml_path.read_text().count("labels_file:") == 1


@pytest.mark.parametrize("grades, message", [
    ({0: "x"}, "filled.csv:2: grade 'x' is not an integer"),
    ({1: "-1"}, "filled.csv:3: grade -1 is negative"),
])
def test_bad_grades_are_one_line_with_file_and_line(ran_shared, tmp_path, grades, message):
    cfg, yaml_path, _ = ran_shared
    p = build_pool(cfg.results_path, _collection(yaml_path), [BM25], depth=3)
    csv_path, _ = write_pool(p.rows, tmp_path / "pool.csv")
    with pytest.raises(CollectionError) as e:
        import_labels(_fill(csv_path, grades), TaskConfig.from_file(yaml_path))
    assert message in str(e.value) and "\n" not in str(e.value)
    assert "labels_file" not in yaml_path.read_text()  # nothing was written


def test_unknown_ids_and_conflicts_with_own_labels_are_rejected(tiny_copy, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query_id": "q1", "doc_id": "nope", "grade": 1}) + "\n")
    with pytest.raises(CollectionError, match=r"bad.jsonl:1: unknown document id 'nope'"):
        import_labels(bad, TaskConfig.from_file(tiny_copy))
    bad.write_text(json.dumps({"query_id": "q1", "doc_id": "vpn-mac", "grade": 0}) + "\n")
    with pytest.raises(CollectionError, match=r"bad.jsonl:1: \('q1', 'vpn-mac'\) is graded 2 by the task's own"):
        import_labels(bad, TaskConfig.from_file(tiny_copy))
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"query_id": "q1", "doc_id": "pwd", "grade": ""}) + "\n")
    with pytest.raises(CollectionError, match="no graded rows"):
        import_labels(empty, TaskConfig.from_file(tiny_copy))


def test_a_broken_labels_file_names_its_line(tiny_copy):
    labels = tiny_copy.parent / "extra.jsonl"
    labels.write_text(json.dumps({"query_id": "q1", "doc_id": "pwd", "grade": 1}) + "\n"
                      + json.dumps({"query_id": "q404", "doc_id": "pwd", "grade": 1}) + "\n")
    tiny_copy.write_text(tiny_copy.read_text().replace("  format: beir\n", "  format: beir\n  labels_file: extra.jsonl\n"))
    with pytest.raises(CollectionError, match=r"extra.jsonl:2: unknown query id 'q404'"):
        _collection(tiny_copy)
