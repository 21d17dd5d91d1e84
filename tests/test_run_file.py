"""`kind: run`: a run file scored as a candidate (issue 21): round trip with BM25, validation, missing queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import TINY_YAML, write_benchmark
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.results.store import find_run, read_json

runner = CliRunner()


@pytest.fixture(scope="module")
def bm25_run(tmp_path_factory) -> tuple[Path, Path]:
    """BM25 on the tiny task (every document kept), and its stored rankings exported with `export run`."""
    tmp = tmp_path_factory.mktemp("runfile")
    cfg = write_benchmark(tmp, [str(TINY_YAML)], models=[{"name": "bm25", "label": "BM25"}], keep_top_k=1000)
    run_benchmark(BenchmarkConfig.from_file(cfg), show_progress=False)
    out = tmp / "bm25.run"
    r = runner.invoke(app, ["export", "run", "--model", "BM25", "-c", str(cfg), "-o", str(out)])
    assert r.exit_code == 0, r.output
    return cfg, out


def _with_run(cfg: Path, path: Path, **extra) -> Path:
    data = yaml.safe_load(cfg.read_text())
    data["models"] = data["models"] + [{"name": "prod-search", "kind": "run", "path": str(path), "label": "prod",
                                        **extra}]
    out = cfg.with_name(f"with-{path.name}.yaml")
    out.write_text(yaml.safe_dump(data))
    return out


def _per_query(results: Path, model: str) -> dict:
    return read_json(find_run(results, model, "TinyKBRetrieval") / "per_query_test.json")["subsets"]["default"]


def test_exported_bm25_rankings_imported_back_score_exactly_as_bm25(bm25_run):
    cfg, run_file = bm25_run
    records = run_benchmark(BenchmarkConfig.from_file(_with_run(cfg, run_file)), show_progress=False)
    assert [r.status for r in records] == ["skipped", "ran"]
    results = cfg.parent / "results"
    mine, theirs = _per_query(results, "prod-search"), _per_query(results, "mteb/baseline-bm25s")
    assert mine.keys() == theirs.keys() and len(mine) > 10
    for metric in theirs:
        assert mine[metric] == theirs[metric], metric  # every metric, every query, exactly
    assert records[1].note == ""  # every query is in the file
    # stats reads it like any model
    r = runner.invoke(app, ["stats", "-c", str(_with_run(cfg, run_file)), "--resamples", "200"])
    assert r.exit_code == 0, r.output
    assert "prod" in r.output


def test_table_formats_and_ranks_read_like_the_trec_file(bm25_run, tmp_path):
    cfg, run_file = bm25_run
    from runners.execution.candidates.run_file import read_run

    rows = [line.split() for line in run_file.read_text().splitlines()]
    queries, docs = {r[0] for r in rows}, {r[2] for r in rows}
    trec, n = read_run(run_file, queries, docs, "T")
    jsonl = tmp_path / "r.jsonl"
    jsonl.write_text("".join(json.dumps({"qid": q, "doc_id": d, "rank": int(k)}) + "\n" for q, _, d, k, _, _ in rows))
    csv = tmp_path / "r.csv"
    csv.write_text("query_id,corpus_id,score\n" + "".join(f"{q},{d},{s}\n" for q, _, d, _, s, _ in rows))
    by_rank, _ = read_run(jsonl, queries, docs, "T")
    by_score, _ = read_run(csv, queries, docs, "T")
    assert by_score == trec and n == len(rows)
    for q in trec:  # rank-only rows rank the same documents in the same order
        assert list(by_rank[q]) == list(trec[q])
        assert [d for d, _ in sorted(by_rank[q].items(), key=lambda x: -x[1])] == list(trec[q])
    pytest.importorskip("pyarrow")
    import pandas as pd

    pq = tmp_path / "r.parquet"
    pd.DataFrame([{"qid": q, "docid": d, "score": float(s)} for q, _, d, _, s, _ in rows]).to_parquet(pq)
    assert read_run(pq, queries, docs, "T")[0] == trec


@pytest.mark.parametrize("mutate, message", [
    (lambda ls: ls[:2] + [ls[2].replace(ls[2].split()[0], "no-such-query", 1)] + ls[3:], "query id 'no-such-query'"),
    (lambda ls: ls[:2] + [" ".join(ls[2].split()[:2] + ["nodoc"] + ls[2].split()[3:])] + ls[3:], "document id 'nodoc'"),
    (lambda ls: ls[:3] + [ls[1]] + ls[3:], "listed twice"),
    (lambda ls: ls[:2] + [" ".join(ls[2].split()[:4] + ["high"] + ls[2].split()[5:])] + ls[3:], "score 'high'"),
    (lambda ls: ls[:2] + [" ".join(ls[2].split()[:4] + ["nan"] + ls[2].split()[5:])] + ls[3:], "score 'nan'"),
    (lambda ls: ls[:2] + [" ".join(ls[2].split()[:5])] + ls[3:], "expected 6"),
])
def test_bad_run_files_are_one_line_with_file_and_line_exit_2(bm25_run, tmp_path, mutate, message):
    cfg, run_file = bm25_run
    bad = tmp_path / "bad.run"
    bad.write_text("\n".join(mutate(run_file.read_text().splitlines())) + "\n")
    r = runner.invoke(app, ["run", "-c", str(_with_run(cfg, bad))])
    assert r.exit_code == 2, r.output
    line = 4 if message == "listed twice" else 3
    assert f"bad.run:{line}: " in r.output and message in r.output, r.output
    assert "Traceback" not in r.output and "done:" not in r.output  # checked before anything ran


def test_bad_table_rows_name_their_line(bm25_run, tmp_path):
    cfg, run_file = bm25_run
    bad = tmp_path / "bad.csv"
    q, _, d, *_ = run_file.read_text().splitlines()[0].split()
    bad.write_text(f"qid,docid,rank\n{q},{d},1\n{q},{d}x,2\n")
    r = runner.invoke(app, ["run", "-c", str(_with_run(cfg, bad))])
    assert r.exit_code == 2 and "bad.csv:3: " in r.output and "not in the corpus" in r.output, r.output
    bad.write_text(f"qid,docid,rank\n{q},{d},1\n{q},{d},two\n")
    r = runner.invoke(app, ["run", "-c", str(_with_run(cfg, bad))])
    assert r.exit_code == 2 and "bad.csv:3: rank 'two' is not a finite number" in r.output, r.output


def test_queries_missing_from_the_file_retrieve_nothing_and_are_counted(bm25_run, tmp_path):
    cfg, run_file = bm25_run
    lines = run_file.read_text().splitlines()
    dropped = sorted({ln.split()[0] for ln in lines})[:3]
    part = tmp_path / "part.run"
    part.write_text("".join(ln + "\n" for ln in lines if ln.split()[0] not in dropped))
    bench = _with_run(cfg, part)
    r = runner.invoke(app, ["run", "-c", str(bench)])
    assert r.exit_code == 0, r.output
    assert "3 of 10 queries not in the run file (they retrieve nothing)" in r.output, r.output
    scores = _per_query(cfg.parent / "results", "prod-search")["ndcg_at_10"]
    assert all(scores[q] == 0.0 for q in dropped) and len(scores) == 10
    # the identity is the file's content: a changed file re-runs, an unchanged one does not
    records = run_benchmark(BenchmarkConfig.from_file(bench), show_progress=False)
    assert [r.status for r in records] == ["skipped", "skipped"]
    part.write_text(run_file.read_text())
    records = run_benchmark(BenchmarkConfig.from_file(bench), show_progress=False)
    assert records[1].status == "ran" and "candidate.weights" in records[1].reason
    assert _per_query(cfg.parent / "results", "prod-search")["ndcg_at_10"] == \
        _per_query(cfg.parent / "results", "mteb/baseline-bm25s")["ndcg_at_10"]


def test_kind_run_needs_a_path(tmp_path):
    bench = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{"name": "p", "kind": "run"}])
    r = runner.invoke(app, ["run", "-c", str(bench)])
    assert r.exit_code == 2 and "kind run needs `path:`" in r.output, r.output
