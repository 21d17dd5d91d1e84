"""`private-mteb inspect worst|diff|query` on fixed, hand-made results (tests/fixtures/inspect_results).

DenseA beats BM25 on q1, loses on q2 and ties on q3. Every command runs from a temporary folder outside
the repository with absolute config paths; every `--format json` output must parse.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from runners.cli import app
from tests.conftest import REPO

runner = CliRunner()
FIX = REPO / "tests" / "fixtures"
TASK_YAML = FIX / "inspect_kb" / "task.yaml"
RESULTS = FIX / "inspect_results"


@pytest.fixture
def bench(tmp_path, monkeypatch) -> Path:
    """A benchmark config naming the fixture task and results by absolute path; cwd is outside the repo."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "tasks": [str(TASK_YAML)], "results_dir": str(RESULTS),
                                    "models": [{"name": "acme/dense-a", "label": "DenseA"}, {"name": "bm25"}]}))
    return path


def invoke(*args: str):
    return runner.invoke(app, list(args))


def _rows(section: str) -> list[list[str]]:
    """Table rows (rank, doc, score, grade, ...) of one rich table; wrapped continuation lines skipped."""
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0].isdigit():
            rows.append(cells)
    return rows


def test_query_a_loses_to_b_shows_both_top10_with_grades(bench):
    diff = json.loads(invoke("inspect", "diff", "-c", str(bench), "DenseA", "BM25", "--format", "json").output)
    assert {r["query_id"]: r["delta"] > 0 for r in diff["rows"]}["q2"]  # BM25 (B) wins q2: DenseA loses it

    res = invoke("inspect", "query", "-c", str(bench), "q2")
    assert res.exit_code == 0, res.output
    out = res.output
    assert "I forgot my password and I am locked out" in out and "source=human" in out
    dense, bm25 = out.split("DenseA — top-10")[1].split("BM25 — top-10")
    dense_rows, bm25_rows = _rows(dense.split("not in DenseA")[0]), _rows(bm25)
    assert [r[0] for r in dense_rows] == [str(i) for i in range(1, 11)] == [r[0] for r in bm25_rows]
    assert [r[1] for r in dense_rows] == "d08 d05 d10 d01 d07 d09 d11 d02 d06 d04".split()
    assert {r[1]: r[3] for r in dense_rows}["d02"] == "2"
    assert sum(r[3] == "unlabelled" for r in dense_rows) == 9
    assert [(r[1], r[3]) for r in bm25_rows[:2]] == [("d02", "2"), ("d12", "1")]
    assert sum(r[3] == "unlabelled" for r in bm25_rows) == 8
    assert "Password reset" in bm25  # document titles are read live from the collection
    assert "not in DenseA's top-10: d12 (grade 1)" in out
    assert "nDCG@10 0.2398" in out and "nDCG@10 1.0000" in out


def test_query_json_has_both_top10s_with_grades_and_text(bench):
    res = invoke("inspect", "query", "-c", str(bench), "q2", "--format", "json")
    assert res.exit_code == 0, res.output
    view = json.loads(res.output)
    assert view["text"] == "I forgot my password and I am locked out"
    assert [(x["doc_id"], x["grade"]) for x in view["labels"]] == [("d02", 2), ("d12", 1)]
    by_label = {c["label"]: c for c in view["candidates"]}
    assert set(by_label) == {"DenseA", "BM25"} and view["stale"] == []
    assert [len(c["hits"]) for c in by_label.values()] == [10, 10]
    assert by_label["DenseA"]["metric_score"] < by_label["BM25"]["metric_score"]
    assert {h["doc_id"]: h["grade"] for h in by_label["DenseA"]["hits"]}["d02"] == 2
    assert by_label["BM25"]["hits"][0] == {"rank": 1, "doc_id": "d02", "score": 7.0, "grade": 2,
                                          "title": "Password reset", "snippet": by_label["BM25"]["hits"][0]["snippet"]}
    assert by_label["BM25"]["hits"][2]["grade"] is None  # unlabelled


def test_query_models_k_and_trec_tie_order(bench):
    view = json.loads(invoke("inspect", "query", "-c", str(bench), "q1", "--models", "bm25", "-k", "6",
                             "--format", "json").output)
    assert [c["label"] for c in view["candidates"]] == ["BM25"]
    # d04 and d09 share a score: ordered as trec_eval orders ties (doc id descending)
    assert [h["doc_id"] for h in view["candidates"][0]["hits"]] == ["d07", "d01", "d05", "d02", "d09", "d04"]


def test_worst_table_json_csv(bench):
    res = invoke("inspect", "worst", "-c", str(bench), "--model", "DenseA", "-n", "2")
    assert res.exit_code == 0 and "q2" in res.output and "0.2398" in res.output
    data = json.loads(invoke("inspect", "worst", "-c", str(bench), "--model", "acme/dense-a", "--format", "json",
                             "--metric", "mrr_at_10").output)
    assert data["label"] == "DenseA" and data["metric"] == "mrr_at_10"
    assert [(q["query_id"], q["score"]) for q in data["queries"]] == [("q2", 0.125), ("q1", 1.0), ("q3", 1.0)]
    assert data["queries"][0]["tags"] == {"source": "human"}
    csv = invoke("inspect", "worst", "-c", str(bench), "--model", "BM25", "--format", "csv").output
    assert csv.splitlines()[0] == "query_id,ndcg_at_10,text,tags" and csv.splitlines()[1].startswith("q1,")


def test_diff_counts_and_largest_swings_first(bench):
    data = json.loads(invoke("inspect", "diff", "-c", str(bench), "DenseA", "BM25", "--format", "json").output)
    assert (data["wins"], data["losses"], data["ties"]) == (1, 1, 1)
    deltas = [abs(r["delta"]) for r in data["rows"]]
    assert deltas == sorted(deltas, reverse=True) and data["rows"][-1]["query_id"] == "q3"
    res = invoke("inspect", "diff", "-c", str(bench), "DenseA", "BM25")
    assert res.exit_code == 0 and "BM25 wins 1, loses 1, ties 1" in res.output


@pytest.mark.parametrize("args, needle", [
    (["worst", "--model", "nope"], "model 'nope' has no results"),
    (["worst", "--model", "DenseA", "--metric", "ndcg_at_7"], "unknown metric 'ndcg_at_7'"),
    (["query", "q99"], "no query 'q99'"),
    (["query", "q1", "--format", "xml"], "unknown format 'xml'"),
])
def test_bad_input_is_one_line_exit_2(bench, args, needle):
    res = invoke("inspect", args[0], "-c", str(bench), *args[1:])
    assert res.exit_code == 2, res.output
    assert needle in res.output and "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_query_text_never_written_into_results(bench, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    cfg = yaml.safe_load(bench.read_text())
    bench.write_text(yaml.safe_dump({**cfg, "results_dir": str(results)}))
    before = _digest(results)
    assert invoke("inspect", "query", "-c", str(bench), "q2").exit_code == 0
    assert _digest(results) == before
    assert not any(b"locked out" in p.read_bytes() for p in results.rglob("*") if p.is_file())


def test_changed_collection_is_flagged_stale(bench, tmp_path):
    data = tmp_path / "kb"
    shutil.copytree(FIX / "inspect_kb", data)
    corpus = data / "corpus.jsonl"
    corpus.write_text(corpus.read_text().replace("Printers on floor 3", "Printers on floor 4"))
    cfg = yaml.safe_load(bench.read_text())
    bench.write_text(yaml.safe_dump({**cfg, "tasks": [str(data / "task.yaml")]}))
    view = json.loads(invoke("inspect", "query", "-c", str(bench), "q2", "--format", "json").output)
    assert sorted(view["stale"]) == ["acme/dense-a", "mteb/baseline-bm25s"]
    assert "another version of the collection" in invoke("inspect", "query", "-c", str(bench), "q2").output
