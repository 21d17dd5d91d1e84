"""TREC export: run files and qrels that trec_eval's semantics (pytrec_eval, ranx) score exactly as mteb did."""

from __future__ import annotations

import json
import statistics

import pytest
import pytrec_eval
import yaml
from typer.testing import CliRunner

from custom_tasks.errors import ConfigError
from runners.cli import app
from runners.results.export import qrels_lines, run_lines
from runners.results.store import load_per_query, read_json, task_result_path
from tests.conftest import REPO

runner = CliRunner()
FIX = REPO / "tests" / "fixtures"
DEMO_TASK = REPO / "configs" / "tasks" / "northwind-kb.yaml"


def _read_qrels(path):
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, zero, doc, grade = line.split()
        assert zero == "0"
        out.setdefault(qid, {})[doc] = int(grade)
    return out


def _read_run(path):
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        qid, q0, doc, rank, score, tag = line.split()
        assert q0 == "Q0" and int(rank) == len(out.get(qid, {})) + 1
        out.setdefault(qid, {})[doc] = float(score)
    return out


def _ndcg10(qrels_path, run_path) -> dict[str, float]:
    ev = pytrec_eval.RelevanceEvaluator(_read_qrels(qrels_path), {"ndcg_cut.10"})
    return {q: m["ndcg_cut_10"] for q, m in ev.evaluate(_read_run(run_path)).items()}


def test_run_lines_rank_ties_like_trec_eval_and_keep_full_precision():
    lines = list(run_lines({"q2": {"a": 1.0}, "q1": {"a": 0.5, "b": 0.5, "c": 0.123456789012345}}, "acme/m x"[:6]))
    assert lines == ["q1 Q0 b 1 0.5 acme__m\n", "q1 Q0 a 2 0.5 acme__m\n", "q1 Q0 c 3 0.123456789012345 acme__m\n",
                     "q2 Q0 a 1 1.0 acme__m\n"]
    assert list(run_lines({"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, "t", depth=2)) == ["q Q0 a 1 3.0 t\n",
                                                                                    "q Q0 b 2 2.0 t\n"]


def test_qrels_lines_keep_grade_zero_and_reject_whitespace_ids():
    assert list(qrels_lines({"q1": {"d2": 0, "d1": 2}})) == ["q1 0 d1 2\n", "q1 0 d2 0\n"]
    with pytest.raises(ConfigError, match="whitespace"):
        list(qrels_lines({"q 1": {"d1": 1}}))
    with pytest.raises(ConfigError, match="whitespace"):
        list(run_lines({"q1": {"doc 1": 1.0}}, "t"))


def test_export_fixture_results_rescore_to_stored_per_query(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bench = tmp_path / "b.yaml"
    bench.write_text(yaml.safe_dump({"tasks": [str(FIX / "inspect_kb" / "task.yaml")], "models": [{"name": "bm25"}],
                                     "results_dir": str(FIX / "inspect_results")}))
    res = runner.invoke(app, ["export", "qrels", "-t", str(FIX / "inspect_kb" / "task.yaml"), "-o", "q.trec"])
    assert res.exit_code == 0 and "wrote 5 qrels lines" in res.output
    for model in ("DenseA", "mteb/baseline-bm25s"):
        res = runner.invoke(app, ["export", "run", "-c", str(bench), "--model", model, "-o", "r.trec", "--format", "json"])
        assert res.exit_code == 0, res.output
        summary = json.loads(res.output)
        assert summary["lines"] == 36 and summary["path"] == str(tmp_path / "r.trec")
        stored = load_per_query(FIX / "inspect_results", summary["model"], "InspectKBRetrieval").to_dict()
        assert _ndcg10(tmp_path / "q.trec", tmp_path / "r.trec") == pytest.approx(stored, abs=1e-12)


def test_export_errors_are_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["export", "qrels", "-t", str(FIX / "inspect_kb" / "task.yaml"), "-o", "q", "--split", "dev"])
    assert res.exit_code == 2 and "no labels for split 'dev'" in res.output and len(res.output.strip().splitlines()) == 1


def _bm25_run(folder, task_yaml):
    """A real BM25 run (mteb's own scoring) of one task into a temporary results folder."""
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark

    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "bm25-only", "tasks": [str(task_yaml)], "models": [{"name": "bm25"}],
                                    "results_dir": str(folder / "results")}))
    run_benchmark(BenchmarkConfig.from_file(path), show_progress=False)
    return path


def test_real_bm25_run_exported_rescores_to_mteb_numbers(tmp_path, monkeypatch):
    task = FIX / "inspect_kb" / "task.yaml"
    bench = _bm25_run(tmp_path, task)
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["export", "run", "-c", str(bench), "--model", "BM25", "-o", "r.trec"]).exit_code == 0
    assert runner.invoke(app, ["export", "qrels", "-t", str(task), "-o", "q.trec"]).exit_code == 0
    stored = load_per_query(tmp_path / "results", "mteb/baseline-bm25s", "InspectKBRetrieval")
    per_query = _ndcg10(tmp_path / "q.trec", tmp_path / "r.trec")
    assert per_query == pytest.approx(stored.to_dict(), abs=1e-9) and len(per_query) == 3
    task_json = read_json(task_result_path(tmp_path / "results", "mteb/baseline-bm25s", "0_3_0", "InspectKBRetrieval"))
    assert statistics.fmean(per_query.values()) == pytest.approx(task_json["scores"]["test"][0]["ndcg_at_10"],
                                                                 abs=1e-5)


@pytest.fixture(scope="module")
def demo_bm25(tmp_path_factory):
    return _bm25_run(tmp_path_factory.mktemp("demo"), DEMO_TASK)


@pytest.mark.slow  # ~30 s of ranx's numba compilation on a 2-core machine
def test_trec_eval_semantics_give_the_stored_ndcg_at_10_on_the_demo(demo_bm25, tmp_path, monkeypatch):
    from ranx import Qrels, Run, evaluate

    monkeypatch.chdir(tmp_path)  # outside the repository, absolute paths only
    results = demo_bm25.parent / "results"
    assert runner.invoke(app, ["export", "run", "-c", str(demo_bm25), "--model", "bm25", "-o", "bm25.trec"]).exit_code == 0
    assert runner.invoke(app, ["export", "qrels", "-t", str(DEMO_TASK), "-o", "qrels.trec"]).exit_code == 0

    stored = load_per_query(results, "mteb/baseline-bm25s", "NorthwindKBRetrieval")
    per_query = _ndcg10(tmp_path / "qrels.trec", tmp_path / "bm25.trec")
    assert len(per_query) == len(stored) == 247
    assert per_query == pytest.approx(stored.to_dict(), abs=1e-9)
    mean_pytrec = statistics.fmean(per_query.values())
    mean_ranx = float(evaluate(Qrels.from_file(str(tmp_path / "qrels.trec"), kind="trec"),
                               Run.from_file(str(tmp_path / "bm25.trec"), kind="trec"), "ndcg@10"))
    assert mean_pytrec == pytest.approx(stored.mean(), abs=1e-6)
    assert mean_ranx == pytest.approx(stored.mean(), abs=1e-6)
    task_json = read_json(task_result_path(results, "mteb/baseline-bm25s", "0_3_0", "NorthwindKBRetrieval"))
    assert mean_ranx == pytest.approx(task_json["scores"]["test"][0]["ndcg_at_10"], abs=1e-5)
    first = (tmp_path / "bm25.trec").read_text().splitlines()[0].split()
    assert first[1] == "Q0" and first[3] == "1" and first[5] == "BM25"
