"""The CLI: one clear line and a non-zero exit on bad input, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from runners.cli import app
from tests.conftest import REPO, TINY_YAML, write_benchmark
from tests.fake_results import scores, write_config, write_model

runner = CliRunner()
GOOD_DOCS = [{"_id": "d1", "title": "VPN", "text": "Install the client."}, {"_id": "d2", "text": "Reset passwords here."}]
GOOD_QUERIES = [{"_id": "q1", "text": "vpn?"}, {"_id": "q2", "text": "password?"}]
GOOD_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t1\n"


def _beir(tmp_path, corpus=None, queries=None, qrels=None, raw_corpus: bytes | None = None):
    folder = tmp_path / "data"
    (folder / "qrels").mkdir(parents=True)
    if raw_corpus is not None:
        (folder / "corpus.jsonl").write_bytes(raw_corpus)
    elif corpus is not False:
        (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in (corpus or GOOD_DOCS)))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in (queries or GOOD_QUERIES)))
    (folder / "qrels" / "test.tsv").write_text(GOOD_QRELS if qrels is None else qrels)
    cfg = tmp_path / "task.yaml"
    cfg.write_text("name: Bad\ndescription: d\nsource: {format: beir, path: data}\nlicense: cc0-1.0\n")
    return cfg


CASES = {
    "missing file": (dict(corpus=False), r"corpus.jsonl: .*(not found|missing|does not exist)"),
    "wrong encoding": (dict(raw_corpus='{"_id": "d1", "text": "caf\u00e9"}\n'.encode("latin-1")), r"corpus.jsonl:1: .*UTF-8"),
    "malformed json": (dict(raw_corpus=b'{"_id": "d1", "text": "ok"}\n{"_id": "d2", "text": "x"}\n{"_id": "d3", "text": \n'),
                       r"corpus.jsonl:3: .*JSON"),
    "empty file": (dict(raw_corpus=b""), r"corpus.jsonl: .*empty"),
    "duplicate doc id": (dict(corpus=GOOD_DOCS + [{"_id": "d1", "text": "again"}]), r"corpus.jsonl:3: .*duplicate.*d1"),
    "missing column": (dict(corpus=[{"id": "d1", "text": "x"}]), r"corpus.jsonl:1: .*_id"),
    "empty query": (dict(queries=GOOD_QUERIES + [{"_id": "q3", "text": "   "}]), r"queries.jsonl:3: .*empty"),
    "unknown doc": (dict(qrels=GOOD_QRELS + "q1\td9\t1\n"), r"test.tsv:4: .*d9"),
    "unknown query": (dict(qrels=GOOD_QRELS + "q7\td1\t1\n"), r"test.tsv:4: .*q7"),
    "non-integer grade": (dict(qrels=GOOD_QRELS + "q1\td2\tx\n"), r"test.tsv:4: .*grade"),
    "negative grade": (dict(qrels=GOOD_QRELS + "q1\td2\t-1\n"), r"test.tsv:4: .*grade"),
    "split without labels": (dict(qrels="query-id\tcorpus-id\tscore\n"), r"test.tsv.*(no labels|empty)"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_validate_bad_input_is_one_line(tmp_path, case):
    kwargs, pattern = CASES[case]
    cfg = _beir(tmp_path, **kwargs)
    result = runner.invoke(app, ["tasks", "validate", str(cfg)])
    out = result.output.strip()
    assert result.exit_code == 2, out
    assert "Traceback" not in out and len(out.splitlines()) == 1, out
    assert out.startswith("error: ")
    import re

    assert re.search(pattern, out, flags=re.IGNORECASE), out


def test_real_process_prints_no_traceback(tmp_path):
    cfg = _beir(tmp_path, qrels=GOOD_QRELS + "q1\td9\t1\n")
    proc = subprocess.run([sys.executable, "-m", "runners.cli", "tasks", "validate", str(cfg)], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stderr.strip().count("\n") == 0 and "test.tsv:4" in proc.stderr


def test_tasks_list_validate_stats_on_good_task():
    assert "NorthwindKBRetrieval" in runner.invoke(app, ["tasks", "list"]).output
    ok = runner.invoke(app, ["tasks", "validate", str(TINY_YAML)])
    assert ok.exit_code == 0 and "ok TinyKBRetrieval" in ok.output
    stats = runner.invoke(app, ["tasks", "stats", str(TINY_YAML)])
    assert stats.exit_code == 0 and "relevant docs per query" in stats.output


@pytest.mark.parametrize("change,pattern", [
    ({"modelz": []}, "unknown key 'modelz'"),
    ({"tasks": ["NoSuchTask"]}, "unknown task 'NoSuchTask'"),
    ({"models": [{"name": "x", "kind": "nope"}]}, "models.0.kind"),
    ({"models": [{"name": "acme/unknown-model"}]}, "unknown model 'acme/unknown-model'"),
    ({"models": [{"name": "acme/m", "path": "/no/such/dir"}]}, "does not exist"),
])
def test_benchmark_config_errors(tmp_path, change, pattern):
    import yaml

    path = write_benchmark(tmp_path, [str(TINY_YAML)])
    data = yaml.safe_load(path.read_text())
    data.update(change)
    path.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["run", "--config", str(path)])
    assert result.exit_code == 2 and pattern in result.output and "Traceback" not in result.output


def test_run_stats_check_cli_roundtrip(tmp_path):
    cfg = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{"name": "bm25"}])
    first = runner.invoke(app, ["run", "--config", str(cfg)])
    assert first.exit_code == 0, first.output
    assert "nDCG@10" in first.output
    again = runner.invoke(app, ["run", "--config", str(cfg)])
    assert "cached" in again.output
    base = tmp_path / "baseline"
    import shutil

    shutil.copytree(tmp_path / "results", base)
    check = runner.invoke(app, ["check", "--baseline", str(base), "--candidate", str(tmp_path / "results")])
    assert check.exit_code == 0 and "PASS" in check.output


# --------------------------------------------------------------------------- stats / experiments / check (#9)
TINY = "TinyKBRetrieval"


def _folder(tmp_path, name="results", models=(("acme/one", 0.8, "One"), ("acme/two", 0.5, "Two"))):
    for i, (model, mean, label) in enumerate(models):
        write_model(tmp_path / name, model, TINY, scores(mean, i), label)
    return tmp_path / name


def _cfg(tmp_path, results, models=("acme/one", "acme/two")):
    return write_config(tmp_path / "bench.yaml", results, [str(TINY_YAML)], [{"name": m} for m in models])


def _json(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return json.loads(result.output)


def test_stats_compares_the_configs_models_not_the_whole_folder(tmp_path):
    results = _folder(tmp_path, models=[("acme/one", 0.8, "One"), ("acme/two", 0.5, "Two")]
                      + [(f"exp/e{i}", 0.6, f"E{i}") for i in range(4)])
    doc = _json(["stats", "-c", str(_cfg(tmp_path, results)), "--format", "json"])
    (task,) = doc["tasks"]
    assert [p["candidate_a"] + "/" + p["candidate_b"] for p in task["pairs"]] == ["One/Two"]  # not 15 pairs
    assert {r["candidate"] for r in task["intervals"]} == {"One", "Two"}
    picked = _json(["stats", "-c", str(_cfg(tmp_path, results)), "--format", "json", "--models", "E0,acme/one,E3"])
    assert {r["candidate"] for r in picked["tasks"][0]["intervals"]} == {"E0", "One", "E3"}
    assert len(picked["tasks"][0]["pairs"]) == 3


def test_stats_missing_results_of_a_config_model_exit_2(tmp_path):
    cfg = _cfg(tmp_path, _folder(tmp_path), models=("acme/one", "acme/never-run"))
    result = runner.invoke(app, ["stats", "-c", str(cfg)])
    out = result.output.strip()
    assert result.exit_code == 2 and "Traceback" not in out, out
    assert "acme/never-run" in out and f"private-mteb run -c {cfg}" in out
    bad = runner.invoke(app, ["stats", "-c", str(cfg), "--models", "One,Nobody"])
    assert bad.exit_code == 2 and "no model 'Nobody'" in bad.output


def test_stats_json_is_one_document_with_power_and_null_for_nan(tmp_path):
    same = scores(0.7, 5)
    write_model(tmp_path / "results", "acme/one", TINY, same, "One")
    write_model(tmp_path / "results", "acme/two", TINY, dict(same), "Two")  # identical: d_z is NaN
    doc = _json(["stats", "-c", str(_cfg(tmp_path, tmp_path / "results")), "--format", "json", "--by", "source",
                 "-m", "ndcg_at_10", "-m", "mrr_at_10"])
    assert [(t["task"], t["metric"]) for t in doc["tasks"]] == [(TINY, "ndcg_at_10"), (TINY, "mrr_at_10")]
    first = doc["tasks"][0]
    assert first["power"].startswith("with 10 queries") and first["n_queries"] == 10
    assert {p["subset"] for p in first["pairs"]} == {"all", "source=human", "source=llm"}
    assert all(p["cohens_dz"] is None for p in first["pairs"])


def test_stats_reads_each_file_once_per_invocation(tmp_path, monkeypatch):
    """Three metrics, a tag breakdown and judged@10: each per-query file and the collection are read once."""
    from collections import Counter

    import custom_tasks.sources
    from runners.statistics import per_query

    reads: Counter = Counter()
    real_json, real_coll = per_query.read_json, custom_tasks.sources.load_collection
    monkeypatch.setattr(per_query, "read_json", lambda p: reads.update([p.name]) or real_json(p))
    monkeypatch.setattr(custom_tasks.sources, "load_collection",
                        lambda *a, **k: reads.update(["collection"]) or real_coll(*a, **k))
    cfg = _cfg(tmp_path, _folder(tmp_path))
    result = runner.invoke(app, ["stats", "-c", str(cfg), "--by", "source", "--resamples", "200",
                                 "-m", "ndcg_at_10", "-m", "mrr_at_10", "-m", "recall_at_100"])
    assert result.exit_code == 0, result.output
    assert reads == {"per_query_test.json": 2, "collection": 1}  # once each (before: every file 3 times, the collection 4)
    reads.clear()
    result = runner.invoke(app, ["stats", "-c", str(cfg), "--by", "source", "--resamples", "200"])
    assert result.exit_code == 0 and reads == {"per_query_test.json": 2, "collection": 1}  # nothing kept between


def test_stats_csv_is_one_table(tmp_path):
    import io

    import pandas as pd

    result = runner.invoke(app, ["stats", "-c", str(_cfg(tmp_path, _folder(tmp_path))), "--format", "csv"])
    assert result.exit_code == 0, result.output
    df = pd.read_csv(io.StringIO(result.output))
    assert list(df["kind"]) == ["interval", "interval", "pair"]
    assert df["power"].str.startswith("with 10 queries").all() and (df["task"] == TINY).all()


def test_stats_by_unknown_tag_names_the_known_ones(tmp_path):
    result = runner.invoke(app, ["stats", "-c", str(_cfg(tmp_path, _folder(tmp_path))), "--by", "sorce"])
    out = result.output.strip()
    assert result.exit_code == 2 and "Traceback" not in out, out
    assert "'sorce'" in out and "known tags: source" in out and TINY in out


def test_stats_prints_d_z_with_the_sign_of_the_reported_difference(tmp_path):
    base = scores(0.5, 3)
    results = tmp_path / "results"
    write_model(results, "acme/weak", TINY, {q: s - 0.2 + 0.02 * i for i, (q, s) in enumerate(base.items())}, "Weak")
    write_model(results, "acme/strong", TINY, base, "Strong")
    result = runner.invoke(app, ["stats", "-c", str(_cfg(tmp_path, results, ("acme/weak", "acme/strong")))])
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.output.splitlines() if "beats" in ln)
    assert "Strong beats Weak on nDCG@10 by +" in line and "d_z=+" in line, line


def test_stats_unknown_metric_suggests_the_stored_name(tmp_path):
    result = runner.invoke(app, ["stats", "-c", str(_cfg(tmp_path, _folder(tmp_path))), "-m", "ndcg@10"])
    assert result.exit_code == 2 and "did you mean 'ndcg_at_10'" in result.output, result.output


def test_experiments_missing_results_exit_2_and_models_filter(tmp_path):
    cfg = _cfg(tmp_path, _folder(tmp_path), models=("acme/one", "acme/gone"))
    result = runner.invoke(app, ["experiments", "-c", str(cfg)])
    assert result.exit_code == 2 and "acme/gone" in result.output and "private-mteb run -c" in result.output
    assert "Traceback" not in result.output
    only = runner.invoke(app, ["experiments", "-c", str(cfg), "--models", "One"])
    lines = only.output.splitlines()
    assert lines[0] == "compared: 1 of the 2 candidates of bench.yaml (--models)", only.output  # the set, said
    rows = [ln.split()[0] for ln in lines[2:]]
    assert only.exit_code == 0 and rows == ["one"], only.output  # the config's label of acme/one, nothing else


# check: exit 1 only for a real regression; everything it cannot check is exit 2
def _check(*args):
    result = runner.invoke(app, ["check", *map(str, args)])
    out = result.output.strip()
    assert "Traceback" not in out, out
    return result.exit_code, out


def test_check_baseline_model_missing_in_candidate(tmp_path):
    base = _folder(tmp_path, "base", [("acme/one", 0.8, "One"), ("acme/two", 0.5, "Two")])
    cand = _folder(tmp_path, "cand", [("acme/one", 0.8, "One")])
    code, out = _check("--baseline", base, "--candidate", cand)
    assert code == 2 and "model 'acme/two' on task 'TinyKBRetrieval'" in out and "--allow-missing" in out
    code, out = _check("--baseline", base, "--candidate", cand, "--allow-missing")
    assert code == 0 and "skipped" in out and "acme/two" in out and "One -> One: PASS" in out


def test_check_baseline_task_missing_in_candidate(tmp_path):
    base = _folder(tmp_path, "base", [("acme/one", 0.8, "One")])
    write_model(base, "acme/one", "OtherTask", scores(0.6), "One")
    cand = _folder(tmp_path, "cand", [("acme/one", 0.8, "One")])
    code, out = _check("--baseline", base, "--candidate", cand)
    assert code == 2 and "task 'OtherTask'" in out
    code, out = _check("--baseline", base, "--candidate", cand, "--task", "NoSuchTask")
    assert code == 2 and "NoSuchTask" in out


@pytest.mark.parametrize("args,pattern", [
    (["--metric", "ndcg@10"], "unknown metric 'ndcg@10'; did you mean 'ndcg_at_10'"),
    (["--max-drop", "-1"], "--max-drop must be a number >= 0"),
    (["--alpha", "1.5"], "--alpha must be between 0 and 1"),
    (["--alpha", "0"], "--alpha must be between 0 and 1"),
])
def test_check_bad_options_exit_2_not_1(tmp_path, args, pattern):
    base = _folder(tmp_path, "base")
    cand = _folder(tmp_path, "cand", [("acme/one", 0.3, "One"), ("acme/two", 0.1, "Two")])  # a real regression
    code, out = _check("--baseline", base, "--candidate", cand, *args)
    assert code == 2 and pattern in out, out


def test_check_missing_folder_is_said_as_such(tmp_path):
    cand = _folder(tmp_path, "cand")
    code, out = _check("--baseline", tmp_path / "no" / "such", "--candidate", cand)
    assert code == 2 and f"results folder {tmp_path / 'no' / 'such'} does not exist" in out, out
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    code, out = _check("--baseline", a_file, "--candidate", cand)
    assert code == 2 and "is a file, not a results folder" in out, out
    code, out = _check("--baseline", "Nobody", "--candidate", "One", "--results", cand)
    assert code == 2 and "'Nobody' is neither a results folder nor a model" in out and "One, Two" in out


def test_check_exit_1_only_for_a_real_regression(tmp_path):
    base = _folder(tmp_path, "base")
    worse = _folder(tmp_path, "cand", [("acme/one", 0.3, "One"), ("acme/two", 0.5, "Two")])
    code, out = _check("--baseline", base, "--candidate", worse)
    assert code == 1 and "One -> One: FAIL" in out and "Two -> Two: PASS" in out
    code, out = _check("--baseline", "One", "--candidate", "Two", "--results", base)
    assert code == 1 and "One -> Two: FAIL" in out


def test_an_empty_model_list_never_falls_back_to_the_whole_folder(tmp_path):
    from runners.statistics.analysis_errors import AnalysisError
    from runners.statistics.per_query import per_query_table

    results = _folder(tmp_path)
    assert set(per_query_table(results, TINY)) == {"One", "Two"}  # no list: every model stored (library use)
    with pytest.raises(AnalysisError, match="no per-query results"):
        per_query_table(results, TINY, models=[])
