"""The run history (issue 23): records appended by `run`, `private-mteb history`, `check --baseline history:*`.

Cheap candidates only: the bag-of-words encoder of tests/identity_encoder.py and stored fake results.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from conftest import REPO, TINY_YAML
from fake_results import QUERIES, scores, write_model
from runners.analysis.gate.history import record_run
from runners.analysis.gate.history_timeline import build_timelines, compare_records
from runners.cli import app
from runners.results.history_store import HistoryStore

runner = CliRunner()
NP = {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1", "label": "prod"}


def _project(tmp_path: Path, models: list[dict], name: str = "bench", results: str = "results",
             history: str | None = "history") -> Path:
    """The tiny task copied into tmp_path (so a test may edit it) and a benchmark config using it."""
    task = tmp_path / "kb_tiny.yaml"
    if not task.exists():
        shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", tmp_path / "kb_tiny")
        task.write_text(TINY_YAML.read_text().replace("../fixtures/kb_tiny", "kb_tiny"))
    cfg = {"name": name, "tasks": [str(task)], "models": models, "results_dir": results,
           "stats": {"resamples": 2000}}
    if history:
        cfg["history"] = history
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _weights(folder: Path, matrix: np.ndarray) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "weights.npy", matrix)
    return folder


def _invoke(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, (args, result.output, result.exception)
    return result.output


def test_three_changes_give_a_timeline_with_effects_and_the_gate_uses_it(tmp_path):
    """A document added, a task setting, another model under the same label: each step names its change and effect (text, JSON,
    CSV); `check --baseline history:last` exits 1 on the real regression; history:accepted after `accept`."""
    cfg = _project(tmp_path, [{"name": "bm25", "label": "prod"}])
    _invoke("run", "-c", str(cfg))
    with open(tmp_path / "kb_tiny" / "corpus.jsonl", "a") as f:  # a document added
        f.write(json.dumps({"_id": "parking", "title": "Parking", "text": "Visitor parking is on level 2."}) + "\n")
    _invoke("run", "-c", str(cfg))
    grew = " ".join(_invoke("check", "-c", str(cfg), "--baseline", "history:last").split())
    assert grew.count("corpus: +1 document net (12 → 13)") == 1 and "PASS" in grew  # said as `check` says it
    task = tmp_path / "kb_tiny.yaml"  # a task setting
    task.write_text(task.read_text() + "ignore_identical_ids: true\n")
    _invoke("run", "-c", str(cfg))
    weights = _weights(tmp_path / "model", np.outer(np.ones(16), np.eye(16)[0]))  # another model, a poor one
    cfg = _project(tmp_path, [{**NP, "path": str(weights)}])
    out = _invoke("run", "-c", str(cfg))
    assert "history: 1 record(s) appended" in out and "prod on TinyKBRetrieval: model" in out
    _invoke("run", "-c", str(cfg))  # unchanged: nothing appended
    assert len(HistoryStore(tmp_path / "history").read().records) == 4

    text = _invoke("history", "-c", str(cfg))
    assert "TinyKBRetrieval — prod: nDCG@10 over time (4 records)" in text
    assert "first record" in text and "data (corpus: +1 document net (12 → 13))" in text and "13 docs (+1)" in text
    assert "task settings: ignore_identical_ids False -> True" in text
    assert "model: name mteb/baseline-bm25s -> test/np" in text and "significant drop" in text
    doc = json.loads(_invoke("history", "-c", str(cfg), "--format", "json"))
    steps = doc["timelines"][0]["steps"]
    assert [s["changed"] for s in steps] == [["first record"], ["data"], ["task settings"], ["model"]]
    assert steps[1]["corpus_grew"] and steps[1]["corpus_delta"] == 1 and steps[1]["pairing"]["paired"] == 10
    drop = steps[3]
    assert drop["significant"] and drop["diff"] < 0 and drop["diff_ci"][1] < 0 and drop["p_value"] < 0.05
    assert drop["mean"] < steps[2]["mean"] and drop["ci_low"] <= drop["mean"] <= drop["ci_high"]
    csv = _invoke("history", "-c", str(cfg), "--format", "csv").splitlines()
    assert csv[0].startswith("candidate,model,task,time") and len(csv) == 5
    assert len(json.loads(_invoke("history", "-c", str(cfg), "--format", "json", "--model", "nobody"))["timelines"]) == 0

    gate = runner.invoke(app, ["check", "-c", str(cfg), "--baseline", "history:last"])
    assert gate.exit_code == 1, gate.output
    assert "changed since: model" in gate.output and "FAIL" in gate.output
    assert gate.output.count("FAIL") == 1 and "PASS" not in gate.output  # the config's candidate only, not BM25's result
    assert runner.invoke(app, ["check", "-c", str(cfg), "--baseline", "history:accepted"]).exit_code == 2
    _invoke("history", "accept", "-c", str(cfg), "--record", steps[3]["id"])  # the drop accepted as the new normal
    ok = runner.invoke(app, ["check", "-c", str(cfg), "--baseline", "history:accepted"])
    assert ok.exit_code == 0 and "PASS" in ok.output, ok.output
    assert "[accepted]" in _invoke("history", "-c", str(cfg))
    _invoke("report", "-c", str(cfg), "-o", str(tmp_path / "report.md"), "--no-public")
    report = (tmp_path / "report.md").read_text()
    over_time = report[report.index("Over time"):]
    assert "data (corpus: +1 document net (12 → 13))" in over_time and "13 (+1)" in over_time and "significant drop" in over_time
    assert "task settings" in over_time and "model · accepted" in over_time


def test_check_against_history_without_records_exits_2(tmp_path):
    cfg = _project(tmp_path, [NP])
    write_model(tmp_path / "results", "test/np", "TinyKBRetrieval", scores(0.6), label="prod")
    result = runner.invoke(app, ["check", "-c", str(cfg), "--baseline", "history:last"])
    assert result.exit_code == 2 and "no history record" in result.output
    bare = _project(tmp_path, [NP], name="bare", history=None)
    result = runner.invoke(app, ["check", "-c", str(bare), "--baseline", "history:last"])
    assert result.exit_code == 2 and "no `history:` folder" in result.output


def _fake_run(results: Path, per_query: dict[str, float], texts: dict[str, str], revision: str) -> None:
    """A stored result whose per-query file carries query hashes (as `run` stores them)."""
    path = write_model(results, "test/np", "TinyKBRetrieval", per_query, label="prod", dataset_revision=revision)
    data = json.loads(path.read_text())
    data["query_hashes"] = {"default": {"text": texts, "labels": {q: "l" for q in texts}}}
    path.write_text(json.dumps(data))
    identity = {"fingerprint": f"fp-{revision}", "task": {"dataset_revision": revision, "main_score": "ndcg_at_10"},
                "candidate": {"name": "test/np", "revision": "r1"}, "keep_top_k": 100}
    (path.parent / "identity.json").write_text(json.dumps(identity))


def test_renumbered_queries_are_never_paired_by_position(tmp_path):
    """Same ten questions, ids shifted by one: no id keeps its text, so nothing is paired or tested."""
    texts = {q: f"question number {i}" for i, q in enumerate(QUERIES)}
    base = scores(0.6, seed=1)
    history = tmp_path / "history"
    _fake_run(tmp_path / "a", base, texts, "ds1")
    first, _ = record_run(history, tmp_path / "a", [{"name": "test/np", "label": "prod", "task": "TinyKBRetrieval",
                                                     "status": "ran"}])
    shifted = [f"q{i}" for i in range(2, 12)]  # q1..q10 -> q2..q11, same order of questions
    _fake_run(tmp_path / "b", dict(zip(shifted, base.values())), dict(zip(shifted, texts.values())), "ds2")
    second, _ = record_run(history, tmp_path / "b", [{"name": "test/np", "label": "prod", "task": "TinyKBRetrieval",
                                                      "status": "ran"}])
    result = compare_records(first[0], second[0])
    assert result["pairing"]["paired"] == 0 and result["pairing"]["changed"] == 9
    assert result["pairing"]["added"] == 1 and result["pairing"]["removed"] == 1
    assert "diff" not in result and "not compared" in result["note"]
    step = build_timelines(HistoryStore(history).read().records)[0].steps[1]
    assert step.diff is None and step.changed == ["data"]
    cfg = _project(tmp_path, [NP], results=str(tmp_path / "b"))
    gate = runner.invoke(app, ["check", "-c", str(cfg), "--baseline", "history:last"])
    assert gate.exit_code == 2 and "no query of prod is unchanged" in gate.output


def test_a_damaged_record_is_skipped_with_one_warning(tmp_path):
    cfg = _project(tmp_path, [NP])
    _fake_run(tmp_path / "results", scores(0.6), {q: q for q in QUERIES}, "ds1")
    entry = {"name": "test/np", "label": "prod", "task": "TinyKBRetrieval", "status": "ran"}
    written, _ = record_run(tmp_path / "history", tmp_path / "results", [entry])
    store = HistoryStore(tmp_path / "history")
    path = store.append({**written[0], "id": written[0]["id"] + "-x"})
    path.write_bytes(path.read_bytes()[:40])  # a truncated file
    result = runner.invoke(app, ["history", "-c", str(cfg)])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and path.name in warnings[0] and "skipped" in warnings[0]
    assert "(1 records)" in result.output
    again, damaged = record_run(tmp_path / "history", tmp_path / "results", [entry, {**entry}])
    assert len(damaged) == 1 and len(again) == 2  # reported once, never fatal


_APPEND_AT_GO = """
import os, sys, time
from pathlib import Path
from runners.analysis.gate.history import record_run
go, ready, history, results, label = map(Path, sys.argv[1:6])
ready.touch()
deadline = time.time() + 120
while not go.exists() and time.time() < deadline:
    pass  # spin, so both writers start within microseconds of each other
record_run(history, results, [{"name": "test/np", "label": str(label), "task": "TinyKBRetrieval", "status": "ran"}])
"""


def test_two_processes_recording_at_the_same_moment_append_two_intact_records(tmp_path):
    """What `run` does after its evaluation (record_run), by two processes released at once into one history:
    two intact records, no temp file left. The same through two whole `run` processes held inside encoding:
    test_two_concurrent_runs_append_two_intact_records (slow: each process imports mteb and torch)."""
    texts = {q: f"question {i}" for i, q in enumerate(QUERIES)}
    go, history, procs, ready = tmp_path / "go", tmp_path / "history", [], []
    for name in ("one", "two"):
        _fake_run(tmp_path / f"results-{name}", scores(0.6), texts, "ds1")
        ready.append(tmp_path / f"{name}.ready")
        procs.append(subprocess.Popen([sys.executable, "-c", _APPEND_AT_GO, str(go), str(ready[-1]), str(history),
                                       str(tmp_path / f"results-{name}"), name], cwd=REPO,
                                      env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    deadline = time.time() + 120
    while not all(f.exists() for f in ready) and time.time() < deadline and all(p.poll() is None for p in procs):
        time.sleep(0.05)
    go.touch()
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    read = HistoryStore(history).read()
    assert read.damaged == [] and sorted(r["candidate"]["label"] for r in read.records) == ["one", "two"]
    files = [f for f in history.rglob("*") if f.is_file()]
    assert len(files) == 2 and not [f for f in files if f.name.endswith(".tmp")]
    assert all(json.loads(gzip.decompress(f.read_bytes()))["queries"] == 10 for f in files)


@pytest.mark.slow  # two `run` processes, each importing mteb and torch: 25-135 s on a 2-core machine
def test_two_concurrent_runs_append_two_intact_records(tmp_path):
    """Two `run` processes (own results folders, one history) held inside encoding at the same moment."""
    hold = tmp_path / "go"
    procs, started = [], []
    for name in ("one", "two"):
        flag = tmp_path / f"{name}.started"
        model = {**NP, "label": name, "factory_kwargs": {"hold_file": str(hold), "started_file": str(flag)}}
        cfg = _project(tmp_path, [model], name=name, results=f"results-{name}")
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        procs.append(subprocess.Popen([sys.executable, "-m", "runners.cli", "run", "-c", str(cfg)], cwd=REPO, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        started.append(flag)
    deadline = time.time() + 240
    while not all(f.exists() for f in started) and time.time() < deadline and all(p.poll() is None for p in procs):
        time.sleep(0.1)
    hold.touch()
    outs = [p.communicate(timeout=240)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    read = HistoryStore(tmp_path / "history").read()
    assert read.damaged == [] and sorted(r["candidate"]["label"] for r in read.records) == ["one", "two"]
    files = list((tmp_path / "history").rglob("*"))
    assert not [f for f in files if f.name.endswith(".tmp")]
    for f in files:
        if f.is_file():
            assert json.loads(gzip.decompress(f.read_bytes()))["queries"] == 10


def test_the_report_holds_the_growth_prediction_against_what_the_history_observed(tmp_path):
    """A growth experiment measured on today's corpus predicts the metric at a larger one; after the corpus grew,
    the report's "over time" section draws that prediction against the observed record and says how it fared."""
    from growth_fixture import write_growth_task

    task_yaml = write_growth_task(tmp_path, n_distractors=200)
    cfg = tmp_path / "g.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": "g", "tasks": [str(task_yaml)], "results_dir": "results", "history": "history",
        "models": [{"name": "test/bow", "factory": "tests.growth_fixture:make_encoder", "revision": "r1"}],
        "experiments": [{"type": "growth", "model": "test/bow", "fractions": [0.25, 0.5, 1.0], "repeats": 2}],
        "stats": {"resamples": 500}}))
    _invoke("run", "-c", str(cfg))
    _invoke("growth", "-c", str(cfg))
    corpus = tmp_path / "growth_kb" / "corpus.jsonl"
    extra = [json.loads(line) for line in corpus.read_text().splitlines() if line.startswith('{"_id": "d')]
    with open(corpus, "a") as f:  # the corpus doubles its distractors
        f.writelines(json.dumps({**d, "_id": "new-" + d["_id"]}) + "\n" for d in extra)
    _invoke("run", "-c", str(cfg))
    _invoke("report", "-c", str(cfg), "-o", str(tmp_path / "report.html"), "--no-public")
    html = (tmp_path / "report.html").read_text()
    part = html[html.index('id="over-time"'):]
    assert "predicted vs observed by corpus size" in part and "(+200)" in part
    assert "at 420 documents" in part and "the growth experiment on 220 documents predicted" in part


def test_history_and_the_history_gate_start_without_model_libraries_or_pandas(tmp_path):
    cfg = _project(tmp_path, [NP])
    _fake_run(tmp_path / "results", scores(0.6), {q: q for q in QUERIES}, "ds1")
    record_run(tmp_path / "history", tmp_path / "results", [{"name": "test/np", "label": "prod",
                                                             "task": "TinyKBRetrieval", "status": "ran"}])
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom runners.cli import app\n"
            f"a = CliRunner().invoke(app, ['history', '-c', {str(cfg)!r}, '--format', 'json'])\n"
            f"b = CliRunner().invoke(app, ['check', '-c', {str(cfg)!r}, '--baseline', 'history:last'])\n"
            "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'mteb', 'pandas', 'mlflow') "
            "if m in sys.modules]\nprint(a.exit_code, b.exit_code, heavy)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "0 0 []", out.stdout + out.stderr
