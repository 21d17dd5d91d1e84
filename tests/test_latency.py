"""The latency pass (issue 22): the evaluation's own search timed one query at a time, stored beside the scores.

Fast: the tiny task, BM25, a bag-of-words factory encoder and toy retrievers that sleep a known time.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import TINY_YAML, write_benchmark
from runners.analysis.cost.cost import at_scale, cheapest_not_worse, cost_row, load_latency
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.execution.candidates.experiment_candidates import clear_shared
from runners.execution.measure.latency import NOT_MEASURABLE, LatencyOptions, measure
from runners.execution.run import candidates_for, is_complete, run_benchmark
from runners.execution.tasks import load_task
from runners.results.store import find_run, read_json, task_result_path

runner = CliRunner()
SLEEPY_RETRIEVER = {"name": "toy/sleepy", "kind": "retriever", "factory": "tests.sleepy:make_sleepy",
                    "factory_kwargs": {"sleep_ms": 5}, "label": "sleepy retriever"}
SLEEPY_ENCODER = {"name": "test/sleepy-enc", "factory": "tests.sleepy:SleepyEncoder", "factory_kwargs": {"sleep_ms": 5},
                  "revision": "r1", "label": "sleepy encoder"}
FAST = LatencyOptions(queries=6, repeats=2, warmup=1, encode_sample=4)


def _run_file(tmp_path: Path) -> Path:
    """A TREC run file for the tiny task: each query's labelled documents, then the rest (precomputed)."""
    fixture = TINY_YAML.parent.parent / "fixtures" / "kb_tiny"
    docs = [json.loads(line)["_id"] for line in (fixture / "corpus.jsonl").read_text().splitlines() if line.strip()]
    qrels: dict[str, list[str]] = {}
    for row in list(csv.reader(io.StringIO((fixture / "qrels" / "test.tsv").read_text()), delimiter="\t"))[1:]:
        qrels.setdefault(row[0], []).append(row[1])
    path = tmp_path / "prod.run"
    lines = []
    for q, rel in qrels.items():
        ranked = rel + [d for d in docs if d not in rel]
        lines += [f"{q} Q0 {d} {i + 1} {len(ranked) - i} prod" for i, d in enumerate(ranked)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> tuple[BenchmarkConfig, list[dict], Path]:
    tmp = tmp_path_factory.mktemp("latency")
    clear_shared()
    models = [SLEEPY_RETRIEVER, SLEEPY_ENCODER, {"name": "bm25", "label": "BM25"},
              {"name": "p/prod", "kind": "run", "path": str(_run_file(tmp)), "label": "prod run"}]
    path = write_benchmark(tmp, [str(TINY_YAML)], models=models)
    cfg = BenchmarkConfig.from_file(path)
    records = run_benchmark(cfg, show_progress=False)
    assert all(r.status == "ran" for r in records), [(r.label, r.reason) for r in records]
    tasks = [load_task(t) for t in cfg.tasks]
    before = {c.name: task_result_path(cfg.results_path, c.name, c.revision, "TinyKBRetrieval").read_bytes()
              for c in candidates_for(cfg)}
    recs = measure(cfg, candidates_for(cfg), tasks, FAST)
    for c in candidates_for(cfg):  # the TaskResult is byte for byte what the run wrote; the result stays complete
        assert task_result_path(cfg.results_path, c.name, c.revision, "TinyKBRetrieval").read_bytes() == before[c.name]
        assert is_complete(cfg.results_path, c, tasks[0])
    return cfg, recs, path


def _rec(recs: list[dict], label: str) -> dict:
    return next(r for r in recs if r["label"] == label)


def test_the_pass_times_the_evaluations_own_search_one_query_at_a_time(measured) -> None:
    _, recs, _ = measured
    for label in ("sleepy retriever", "sleepy encoder"):  # search sleeps 5 ms per query: at least that, each time
        r = _rec(recs, label)
        assert r["measurable"] and r["raw_latency_ms"]["min"] >= 5.0, r  # as timed: never under the sleep
        assert r["latency_ms"]["p50"] >= 5.0 - r["pass"]["overhead_ms"]["subtracted"], r  # less the pass's own
        assert r["throughput_qps"] <= 1000 / 5 + 1e-6
        assert len(r["repeat_p50_ms"]) == FAST.repeats and r["pass"]["queries"] == FAST.queries
    bm25 = _rec(recs, "BM25")
    assert bm25["measurable"] and bm25["index"]["bytes"]["bm25_index"] > 0 and bm25["index"]["docs_per_s"] > 0
    enc = _rec(recs, "sleepy encoder")
    assert enc["index"]["bytes"] == {"vectors": 12 * 16 * 4}  # 12 documents x 16 float32
    assert enc["index"]["bytes_per_doc"] == 64 and enc["index"]["encode_sample_docs"] == 4
    assert [f["dim"] for f in enc["facts"]] == [16]
    assert enc["machine"]["cores"] and "mean" in enc["machine"]["load_avg_1m"]


def test_the_query_is_encoded_even_when_the_cache_holds_it(measured) -> None:
    """The run stored every query vector; the served query is encoded anyway (else p50 would be ~0 here)."""
    _, recs, _ = measured
    assert _rec(recs, "sleepy encoder")["raw_latency_ms"]["p50"] >= 5.0


def test_a_run_file_says_not_measurable(measured) -> None:
    cfg, recs, path = measured
    r = _rec(recs, "prod run")
    assert not r["measurable"] and r["note"] == NOT_MEASURABLE and "latency_ms" not in r
    stored = load_latency(cfg.results_path, "p/prod", "TinyKBRetrieval")
    assert cost_row(stored)["note"] == "latency not measurable (precomputed rankings)"
    out = runner.invoke(app, ["stats", "-c", str(path), "--resamples", "200", "-m", "ndcg_at_10"])
    assert out.exit_code == 0, out.output
    assert "prod run: latency not measurable (precomputed rankings)" in out.output


def test_cost_figures_are_sidecars_never_in_the_task_result(measured) -> None:
    cfg, _, _ = measured
    for name in ("toy/sleepy", "test/sleepy-enc", "mteb/baseline-bm25s", "p/prod"):
        folder = find_run(cfg.results_path, name, "TinyKBRetrieval")
        assert (folder / "latency_test.json").exists()
        assert "latency" not in json.dumps(read_json(folder / "identity.json"))  # not among the vouched-for files
        result = json.dumps(read_json(task_result_path(cfg.results_path, name, folder.parent.parent.name, "TinyKBRetrieval")))
        assert "p50" not in result and "latency" not in result and "bytes_per_doc" not in result


def test_json_and_csv_carry_the_same_figures_as_the_table(measured) -> None:
    cfg, _, path = measured
    base = ["stats", "-c", str(path), "--resamples", "200", "-m", "ndcg_at_10"]
    table = runner.invoke(app, base)
    as_json = runner.invoke(app, base + ["--format", "json"])
    as_csv = runner.invoke(app, base + ["--format", "csv"])
    assert table.exit_code == as_json.exit_code == as_csv.exit_code == 0, table.output + as_json.output
    rows = [r for r in json.loads(as_json.output)["tasks"][0]["intervals"] if r["subset"] == "all"]
    csv_rows = [r for r in csv.DictReader(io.StringIO(as_csv.output)) if r["kind"] == "interval"
                and r["subset"] == "all"]
    assert {"p50_ms", "p95_ms", "bytes_per_doc", "docs_per_s"} <= set(rows[0]) and "p50 ms" in table.output
    for row in rows:
        twin = next(c for c in csv_rows if c["candidate"] == row["candidate"])
        for col in ("p50_ms", "p95_ms", "bytes_per_doc", "docs_per_s"):
            if row[col] is None:
                assert twin[col] == ""
            else:
                assert float(twin[col]) == pytest.approx(row[col], rel=1e-9)
        if row["p50_ms"] is not None:  # the table's cell is the same number, rounded
            shown = f"{row['p50_ms']:.2f}" if row["p50_ms"] < 10 else f"{row['p50_ms']:.1f}"
            line = next(ln for ln in table.output.splitlines() if f" {row['candidate']} " in ln and "all" in ln)
            assert shown in line
    decision = json.loads(as_json.output)["decisions"][0]
    assert decision["verdict"] in ("cheaper", "best is cheapest", "cannot tell")
    assert {"cheaper": "cheapest candidate", "best is cheapest": "the best candidate",
            "cannot tell": "cannot tell"}[decision["verdict"]] in decision["sentence"]
    assert rows[0]["p50_ms"] is None or rows[0]["p50_ci_low"] <= rows[0]["p50_ms"] <= rows[0]["p50_ci_high"]
    assert decision["sentence"] in table.output.replace("\n", " ").replace("  ", " ") or "cost:" in table.output
    assert any(r["kind"] == "decision" for r in csv.DictReader(io.StringIO(as_csv.output)))


def test_latency_command_prints_ratios_and_stores_records(measured) -> None:
    cfg, _, path = measured
    out = runner.invoke(app, ["latency", "-c", str(path), "--queries", "3", "--repeats", "1", "--warmup", "0",
                              "--models", "BM25,prod run", "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = {r["candidate"]: r for r in json.loads(out.output)["latency"]}
    assert rows["BM25"]["p50_ratio"] == 1.0 and rows["prod run"]["p50_ms"] is None
    assert rows["BM25"]["p50_ci_low"] <= rows["BM25"]["p50_ms"] <= rows["BM25"]["p50_ci_high"]
    assert "_latency" not in rows["BM25"] and rows["BM25"]["timed_queries"] == 3
    as_csv = runner.invoke(app, ["latency", "-c", str(path), "--queries", "3", "--repeats", "1", "--warmup", "0",
                                 "--models", "BM25", "--format", "csv"])
    head = next(csv.DictReader(io.StringIO(as_csv.output)))
    assert float(head["p50_ci_low"]) <= float(head["p50_ms"]) <= float(head["p50_ci_high"])
    text = runner.invoke(app, ["latency", "-c", str(path), "--queries", "3", "--repeats", "1", "--warmup", "0",
                               "--models", "BM25"])
    assert "p50 ms [95% CI]" in text.output and "null candidate" in text.output
    assert rows["prod run"]["note"] == NOT_MEASURABLE


def _rows(diff: float, lo: float, hi: float, significant: bool) -> tuple[list, list, list]:
    intervals = [{"subset": "all", "candidate": "big", "mean": 0.80}, {"subset": "all", "candidate": "small",
                                                                        "mean": 0.80 + diff}]
    pairs = [{"subset": "all", "candidate_a": "big", "candidate_b": "small", "diff": -diff, "diff_ci_low": -hi,
              "diff_ci_high": -lo, "significant": significant}]
    spread = [0.1 * (i % 5) for i in range(12)]  # both timed on the same 12 queries of one pass, a calm machine
    timing = {"pass": "p", "query_ids": [str(i) for i in range(12)], "load": 0.5, "cores": 2}
    costs = [{"candidate": "big", "p50_ms": 30.0, "p50_ci_low": 29.9, "p50_ci_high": 30.3,
              "_latency": {**timing, "query_ms": [29.8 + t for t in spread]}},
             {"candidate": "small", "p50_ms": 3.0, "p50_ci_low": 2.9, "p50_ci_high": 3.3,
              "_latency": {**timing, "query_ms": [2.8 + t for t in spread]}}]
    return intervals, pairs, costs


def test_cheapest_not_worse_by_the_paired_test_and_by_a_margin() -> None:
    found = cheapest_not_worse(*_rows(-0.004, -0.012, 0.004, False), "nDCG@10")
    assert found["candidate"] == "small" and found["best"] == "big"
    assert ("is small (p50 3.00 ms [2.90, 3.30] vs p50 30.0 ms [29.9, 30.3] for big, p50 difference -27.00 ms"
            in found["sentence"]) and "nDCG@10 difference -0.004 [-0.012, +0.004]" in found["sentence"]
    worse = cheapest_not_worse(*_rows(-0.03, -0.05, -0.01, True), "nDCG@10")
    assert worse["candidate"] == "big" and "is the only measured one not significantly worse" in worse["sentence"]
    ni = cheapest_not_worse(*_rows(-0.004, -0.012, 0.004, False), "nDCG@10", margin=0.01)
    assert ni["candidate"] == "big" and "non-inferior" in ni["sentence"]  # -0.012 < -0.01: not shown non-inferior
    ok = cheapest_not_worse(*_rows(-0.004, -0.008, 0.0, False), "nDCG@10", margin=0.01)
    assert ok["candidate"] == "small" and "non-inferiority test" in ok["sentence"]


def test_costs_at_scale_are_a_plain_multiplication() -> None:
    scaled = at_scale({"n_docs": 1000, "bytes_per_doc": 1536.0, "docs_per_s": 50.0})
    assert scaled == {"index_bytes_10x": 15_360_000.0, "encode_seconds_10x": 200.0,
                      "index_bytes_100x": 153_600_000.0, "encode_seconds_100x": 2000.0}


def test_report_shows_quality_against_cost(measured) -> None:
    from runners.analysis.report import build_report, render

    cfg, _, _ = measured
    rep = build_report(cfg, with_public=False)
    cost = next(s for s in rep.sections if s.key == "cost")
    html, md = render(rep, "html"), render(rep, "md")
    assert "Quality and cost" in html and "<svg" in html and "Pareto front" in html
    assert "latency not measurable (precomputed rankings)" in md
    assert "index at 100x (linear)" in md and ("cheapest candidate" in md or "also the cheapest" in md
                                               or "cannot tell" in md or "the only measured" in md)
    assert cost.subsections and cost.subsections[0].key == "cost-TinyKBRetrieval"


def test_experiments_carry_the_cost_columns_and_their_projections(measured) -> None:
    cfg, recs, path = measured
    out = runner.invoke(app, ["experiments", "-c", str(path), "-m", "ndcg_at_10", "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = {r["candidate"]: r for r in json.loads(out.output)["experiments"]}
    bm25 = load_latency(cfg.results_path, "mteb/baseline-bm25s", "TinyKBRetrieval")  # the latest pass stored
    assert rows["BM25"]["p50_ms"] == pytest.approx(bm25["latency_ms"]["p50"])
    assert rows["BM25"]["index_bytes_100x"] == pytest.approx(100 * bm25["index"]["bytes_per_doc"] * 12)
    assert rows["prod run"]["p50_ms"] is None and "not measurable" in rows["prod run"]["cost_note"]
    text = runner.invoke(app, ["experiments", "-c", str(path), "-m", "ndcg_at_10"])
    assert "(latency not measurable (precomputed rankings))" in text.output and " ms, p95 " in text.output


def test_run_with_latency_measures_after_the_scores(measured) -> None:
    cfg, _, path = measured
    out = runner.invoke(app, ["run", "-c", str(path), "--latency", "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert {r["status"] for r in doc["records"]} == {"skipped"}  # complete results stay complete
    rows = {r["candidate"]: r for r in doc["latency"]}
    assert rows["sleepy retriever"]["p50_ms"] >= 4.0 and rows["prod run"]["note"] == NOT_MEASURABLE
