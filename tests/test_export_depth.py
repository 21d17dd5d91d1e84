"""`export run` is the run (issue 28): every ranked document mteb scored is stored and exported, so the round
trip `export run` -> `kind: run` gives the original's per-query figures on every metric, @1000 included."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.results.store import find_run, read_json

runner = CliRunner()
WORDS = [f"w{i}" for i in range(24)]


def _deep_collection(root: Path, n_docs: int = 260, n_queries: int = 12) -> Path:
    """A collection where BM25 ranks far more than 100 documents per query and labels sit below rank 100."""
    rng = random.Random(7)
    (root / "qrels").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w") as f:
        for i in range(n_docs):
            f.write(json.dumps({"_id": f"d{i:03d}", "title": "", "text": " ".join(rng.choices(WORDS, k=9))}) + "\n")
    with (root / "queries.jsonl").open("w") as f:
        for i in range(n_queries):
            f.write(json.dumps({"_id": f"q{i:02d}", "text": " ".join(rng.sample(WORDS, 3))}) + "\n")
    lines = ["query-id\tcorpus-id\tscore"]
    for i in range(n_queries):
        lines += [f"q{i:02d}\td{d:03d}\t{rng.choice([1, 2])}" for d in rng.sample(range(n_docs), 4)]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    task = root / "task.yaml"
    task.write_text("name: DeepKBRetrieval\ndescription: generated, deep rankings\nsource:\n  format: beir\n"
                    "  path: .\nsplits: [test]\nlicense: cc0-1.0\n")
    return task


def _per_query(results: Path, model: str) -> dict:
    return read_json(find_run(results, model, "DeepKBRetrieval") / "per_query_test.json")["subsets"]["default"]


def test_export_run_round_trip_is_exact_at_1000(tmp_path):
    task = _deep_collection(tmp_path / "kb")
    bench = tmp_path / "bench.yaml"  # default keep_top_k: what a user gets
    bench.write_text(yaml.safe_dump({"name": "deep", "tasks": [str(task)], "models": [{"name": "bm25", "label": "BM25"}],
                                     "results_dir": str(tmp_path / "results")}))
    run_benchmark(BenchmarkConfig.from_file(bench), show_progress=False)
    out = tmp_path / "bm25.run"
    r = runner.invoke(app, ["export", "run", "--model", "BM25", "-c", str(bench), "-o", str(out)])
    assert r.exit_code == 0, r.output
    per_query_docs = {}
    for line in out.read_text().splitlines():
        per_query_docs[line.split()[0]] = per_query_docs.get(line.split()[0], 0) + 1
    assert max(per_query_docs.values()) > 100  # deeper than the old stored top 100

    data = yaml.safe_load(bench.read_text())
    data["models"].append({"name": "prod-search", "kind": "run", "path": str(out), "label": "prod"})
    both = tmp_path / "both.yaml"
    both.write_text(yaml.safe_dump(data))
    records = run_benchmark(BenchmarkConfig.from_file(both), show_progress=False)
    assert [r.status for r in records] == ["skipped", "ran"]
    mine, theirs = _per_query(tmp_path / "results", "prod-search"), _per_query(tmp_path / "results",
                                                                              "mteb/baseline-bm25s")
    assert "ndcg_at_1000" in theirs and "recall_at_1000" in theirs
    assert mine.keys() == theirs.keys()
    for metric, values in theirs.items():
        assert mine[metric].keys() == values.keys()
        for qid, value in values.items():
            assert mine[metric][qid] == pytest.approx(value, abs=1e-9), (metric, qid)
